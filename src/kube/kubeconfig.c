/* SPDX-License-Identifier: Apache-2.0
 * Credentials: a kubeconfig file (the subset a node agent needs: one
 * context's cluster and user, token or client certificate) and in-cluster
 * service-account credentials. */
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/strbuf.h"
#include "doc/doc.h"
#include "kube/kube.h"

dp_kube_config *dp_kube_config_free(dp_kube_config *c) {
        if (!c) return NULL;
        dp_free_many(c->server, c->ca_file, c->ca_data, c->token, c->token_file, c->cert_file, c->cert_data,
                     c->key_file, c->key_data, c->source, c->namespace);
        dp_kube_exec_free(c->exec);
        free(c);
        return NULL;
}

int dp_kube_base64_decode(const char *s, size_t len, char **ret, size_t *ret_len) {
        char *out = malloc(len / 4 * 3 + 4);
        if (!out) return -ENOMEM;
        uint32_t acc = 0;
        int bits = 0;
        size_t n = 0;
        bool pad = false;
        for (size_t i = 0; i < len; i++) {
                unsigned char ch = (unsigned char)s[i];
                int v;
                if (ch == '\n' || ch == '\r') continue;
                if (ch == '=') {
                        pad = true;
                        continue;
                }
                if (pad) goto bad; /* data after padding */
                if (ch >= 'A' && ch <= 'Z')
                        v = ch - 'A';
                else if (ch >= 'a' && ch <= 'z')
                        v = ch - 'a' + 26;
                else if (ch >= '0' && ch <= '9')
                        v = ch - '0' + 52;
                else if (ch == '+')
                        v = 62;
                else if (ch == '/')
                        v = 63;
                else
                        goto bad;
                acc = (acc << 6) | (uint32_t)v;
                bits += 6;
                if (bits >= 8) {
                        bits -= 8;
                        out[n++] = (char)((acc >> bits) & 0xff);
                }
        }
        if (bits >= 6) goto bad; /* a lone trailing character */
        out[n] = 0;
        *ret = out;
        *ret_len = n;
        return 0;
bad:
        free(out);
        return -EINVAL;
}

/* ---- kubeconfig --------------------------------------------------------------- */

typedef struct {
        const char *file, *dir;
        unsigned flags;
        dp_error *err;
} kc_ctx;

/* Entry `name` of a named list (clusters, users, contexts): its inner map
 * under `inner`. */
static int find_named(kc_ctx *x, const dp_doc_node *root, const char *list, const char *name, const char *inner,
                      const dp_doc_node **ret) {
        const dp_doc_node *seq = dp_doc_get(root, list);
        if (!seq || seq->type != DP_DOC_SEQ)
                return dp_error_set(x->err, -EINVAL, "%s: %s: expected a list, got %s", x->file, list,
                                    dp_doc_type_name(seq));
        for (size_t i = 0; i < seq->n; i++) {
                const dp_doc_node *e = seq->items[i];
                const char *n = NULL;
                if (!e || e->type != DP_DOC_MAP || dp_doc_get_str(dp_doc_get(e, "name"), true, &n, NULL) < 0)
                        return dp_error_set(x->err, -EINVAL, "%s: %s[%zu].name: required", x->file, list, i);
                if (!streq(n, name)) continue;
                const dp_doc_node *m = dp_doc_get(e, inner);
                if (!m || m->type != DP_DOC_MAP)
                        return dp_error_set(x->err, -EINVAL, "%s: %s[name=%s].%s: expected a map, got %s", x->file,
                                            list, name, inner, dp_doc_type_name(m));
                *ret = m;
                return 0;
        }
        return dp_error_set(x->err, -EINVAL, "%s: %s: no entry named \"%s\"", x->file, list, name);
}

/* An optional string field; *ret NULL when absent. */
static int opt_str(kc_ctx *x, const dp_doc_node *m, const char *path, const char *key, const char **ret) {
        const dp_doc_node *v = dp_doc_get(m, key);
        *ret = NULL;
        if (!v || dp_doc_is_null(v)) return 0;
        dp_error e = DP_ERROR_INIT;
        if (dp_doc_get_str(v, false, ret, &e) < 0) {
                *ret = NULL;
                return dp_error_set(x->err, -EINVAL, "%s: %s.%s: %s (line %u)", x->file, path, key, dp_error_msg(&e),
                                    v->line);
        }
        if (!**ret)
                return dp_error_set(x->err, -EINVAL, "%s: %s.%s: must not be empty (line %u)", x->file, path, key,
                                    v->line);
        return 0;
}

/* A path as written, made absolute against the kubeconfig's directory. */
static int set_path(kc_ctx *x, const char *p, char **ret) {
        if (!p) return 0;
        *ret = p[0] == '/' || !x->dir ? strdup(p) : dp_asprintf("%s/%s", x->dir, p);
        return *ret ? 0 : -ENOMEM;
}

static int set_data(kc_ctx *x, const char *path, const char *key, const char *b64, char **ret, size_t *ret_len) {
        if (!b64) return 0;
        int r = dp_kube_base64_decode(b64, strlen(b64), ret, ret_len);
        if (r == -EINVAL) return dp_error_set(x->err, r, "%s: %s.%s: not valid base64", x->file, path, key);
        if (r == 0 && *ret_len == 0) {
                free(*ret);
                *ret = NULL;
                return dp_error_set(x->err, -EINVAL, "%s: %s.%s: empty", x->file, path, key);
        }
        return r;
}

static int parse_cluster(kc_ctx *x, const dp_doc_node *cl, const char *name, dp_kube_config *c) {
        char path[300];
        snprintf(path, sizeof path, "clusters[name=%s].cluster", name);
        const char *server, *ca, *ca_data, *proxy;
        int r;
        if ((r = opt_str(x, cl, path, "server", &server)) < 0 ||
            (r = opt_str(x, cl, path, "certificate-authority", &ca)) < 0 ||
            (r = opt_str(x, cl, path, "certificate-authority-data", &ca_data)) < 0 ||
            (r = opt_str(x, cl, path, "proxy-url", &proxy)) < 0)
                return r;
        if (!server) return dp_error_set(x->err, -EINVAL, "%s: %s.server: required", x->file, path);
        if (!startswith(server, "https://") && !startswith(server, "http://"))
                return dp_error_set(x->err, -EINVAL, "%s: %s.server: \"%s\": must be an https:// (or http://) URL",
                                    x->file, path, server);
        if (proxy) return dp_error_set(x->err, -EINVAL, "%s: %s.proxy-url: not supported", x->file, path);
        const dp_doc_node *ins = dp_doc_get(cl, "insecure-skip-tls-verify");
        if (ins && !dp_doc_is_null(ins)) {
                dp_error e = DP_ERROR_INIT;
                if (dp_doc_get_bool(ins, &c->insecure, &e) < 0)
                        return dp_error_set(x->err, -EINVAL, "%s: %s.insecure-skip-tls-verify: %s", x->file, path,
                                            dp_error_msg(&e));
        }
        if (ca && ca_data)
                return dp_error_set(x->err, -EINVAL,
                                    "%s: %s: certificate-authority and certificate-authority-data are exclusive",
                                    x->file, path);
        size_t n = strlen(server);
        while (n > 0 && server[n - 1] == '/')
                n--;
        if (!(c->server = strndup(server, n))) return -ENOMEM;
        if ((r = set_path(x, ca, &c->ca_file)) < 0) return r;
        return set_data(x, path, "certificate-authority-data", ca_data, &c->ca_data, &c->ca_len);
}

/* A list of strings (exec.args) appended to v from index *n. */
static int str_list(kc_ctx *x, const dp_doc_node *seq, const char *path, char **v, size_t *n) {
        if (!seq || dp_doc_is_null(seq)) return 0;
        if (seq->type != DP_DOC_SEQ)
                return dp_error_set(x->err, -EINVAL, "%s: %s: expected a list, got %s", x->file, path,
                                    dp_doc_type_name(seq));
        for (size_t i = 0; i < seq->n; i++) {
                const char *s = NULL;
                if (dp_doc_get_str(seq->items[i], false, &s, NULL) < 0)
                        return dp_error_set(x->err, -EINVAL, "%s: %s[%zu]: expected a string", x->file, path, i);
                if (!(v[(*n)++] = strdup(s))) return -ENOMEM;
        }
        return 0;
}

/* exec.env: [{name, value}] as "NAME=value". */
static int env_list(kc_ctx *x, const dp_doc_node *seq, const char *path, char **v) {
        for (size_t i = 0; seq && seq->type == DP_DOC_SEQ && i < seq->n; i++) {
                const char *n = NULL, *val = NULL;
                if (dp_doc_get_str(dp_doc_get(seq->items[i], "name"), false, &n, NULL) < 0 || !*n || strchr(n, '='))
                        return dp_error_set(x->err, -EINVAL, "%s: %s[%zu].name: required, a variable name", x->file,
                                            path, i);
                if (dp_doc_get_str(dp_doc_get(seq->items[i], "value"), true, &val, NULL) < 0)
                        return dp_error_set(x->err, -EINVAL, "%s: %s[%zu].value: required (a string)", x->file,
                                            path, i);
                if (!(v[i] = dp_asprintf("%s=%s", n, val))) return -ENOMEM;
        }
        return 0;
}

static int parse_interactive(kc_ctx *x, const dp_doc_node *e, const char *path, bool v1, dp_kube_exec *ex) {
        const char *mode;
        int r = opt_str(x, e, path, "interactiveMode", &mode);
        if (r < 0) return r;
        if (!mode) {
                if (v1)
                        return dp_error_set(x->err, -EINVAL,
                                            "%s: %s.interactiveMode: required with client.authentication.k8s.io/v1 "
                                            "(Never, IfAvailable or Always)",
                                            x->file, path);
                ex->interactive = DP_KUBE_EXEC_IF_AVAILABLE;
        } else if (streq(mode, "Never"))
                ex->interactive = DP_KUBE_EXEC_NEVER;
        else if (streq(mode, "IfAvailable"))
                ex->interactive = DP_KUBE_EXEC_IF_AVAILABLE;
        else if (streq(mode, "Always"))
                ex->interactive = DP_KUBE_EXEC_ALWAYS;
        else
                return dp_error_set(x->err, -EINVAL, "%s: %s.interactiveMode: \"%s\": must be Never, IfAvailable or Always",
                                    x->file, path, mode);
        return 0;
}

/* users[].user.exec, recorded for dp_kube_config_credential(). */
static int parse_exec(kc_ctx *x, const dp_doc_node *e, const char *upath, dp_kube_config *c) {
        char path[320];
        snprintf(path, sizeof path, "%s.exec", upath);
        if (e->type != DP_DOC_MAP)
                return dp_error_set(x->err, -EINVAL, "%s: %s: expected a map, got %s", x->file, path,
                                    dp_doc_type_name(e));
        const char *api, *cmd, *hint;
        int r;
        if ((r = opt_str(x, e, path, "apiVersion", &api)) < 0 || (r = opt_str(x, e, path, "command", &cmd)) < 0 ||
            (r = opt_str(x, e, path, "installHint", &hint)) < 0)
                return r;
        if (!api || (!streq(api, "client.authentication.k8s.io/v1") && !streq(api, "client.authentication.k8s.io/v1beta1")))
                return dp_error_set(x->err, -EINVAL,
                                    "%s: %s.apiVersion: \"%s\": must be client.authentication.k8s.io/v1 or "
                                    "client.authentication.k8s.io/v1beta1",
                                    x->file, path, api ? api : "");
        if (!cmd) return dp_error_set(x->err, -EINVAL, "%s: %s.command: required", x->file, path);
        _cleanup_(dp_kube_exec_freep) dp_kube_exec *ex = calloc(1, sizeof(*ex));
        if (!ex) return -ENOMEM;
        if ((r = parse_interactive(x, e, path, streq(api, "client.authentication.k8s.io/v1"), ex)) < 0) return r;
        const dp_doc_node *pci = dp_doc_get(e, "provideClusterInfo");
        if (pci && !dp_doc_is_null(pci) && dp_doc_get_bool(pci, &ex->provide_cluster_info, NULL) < 0)
                return dp_error_set(x->err, -EINVAL, "%s: %s.provideClusterInfo: expected true or false", x->file,
                                    path);
        const dp_doc_node *args = dp_doc_get(e, "args"), *env = dp_doc_get(e, "env");
        if (env && !dp_doc_is_null(env) && env->type != DP_DOC_SEQ)
                return dp_error_set(x->err, -EINVAL, "%s: %s.env: expected a list, got %s", x->file, path,
                                    dp_doc_type_name(env));
        size_t n_args = args && args->type == DP_DOC_SEQ ? args->n : 0, n_env = env && env->type == DP_DOC_SEQ ? env->n : 0;
        ex->args = calloc(n_args + 2, sizeof(char *));
        ex->env = calloc(n_env + 1, sizeof(char *));
        ex->api_version = strdup(api);
        ex->where = dp_asprintf("%s: %s", x->file, path);
        if (!ex->args || !ex->env || !ex->api_version || !ex->where || (hint && !(ex->install_hint = strdup(hint))))
                return -ENOMEM;
        /* kubectl: a command with a '/' is relative to the kubeconfig's directory; a bare name is looked up in PATH */
        if (strchr(cmd, '/') && cmd[0] != '/' && x->dir)
                ex->command = dp_asprintf("%s/%s", x->dir, cmd);
        else
                ex->command = strdup(cmd);
        if (!ex->command || !(ex->args[0] = strdup(ex->command))) return -ENOMEM;
        size_t n = 1;
        char apath[340], epath[340];
        snprintf(apath, sizeof apath, "%s.args", path);
        snprintf(epath, sizeof epath, "%s.env", path);
        if ((r = str_list(x, args, apath, ex->args, &n)) < 0 || (r = env_list(x, env, epath, ex->env)) < 0) return r;
        c->exec = TAKE_PTR(ex);
        return 0;
}

static int parse_user(kc_ctx *x, const dp_doc_node *u, const char *name, dp_kube_config *c) {
        char path[300];
        snprintf(path, sizeof path, "users[name=%s].user", name);
        static const char *const unsupported[] = {"exec", "auth-provider", "username", "password", "as"};
        for (size_t i = 0; i < ELEMENTSOF(unsupported); i++) {
                const dp_doc_node *v = dp_doc_get(u, unsupported[i]);
                if (!v || dp_doc_is_null(v)) continue;
                if (i == 0 && (x->flags & DP_KUBE_CONFIG_EXEC)) {
                        int r = parse_exec(x, v, path, c);
                        if (r < 0) return r;
                        continue;
                }
                return dp_error_set(x->err, -EINVAL,
                                    "%s: %s.%s: not supported %s(use token, tokenFile or a client certificate)",
                                    x->file, path, unsupported[i],
                                    i == 0 ? "by the agent: simulate and explain run exec plugins " : "");
        }
        const char *tok, *tokf, *cert, *cert_data, *key, *key_data;
        int r;
        if ((r = opt_str(x, u, path, "token", &tok)) < 0 || (r = opt_str(x, u, path, "tokenFile", &tokf)) < 0 ||
            (r = opt_str(x, u, path, "client-certificate", &cert)) < 0 ||
            (r = opt_str(x, u, path, "client-certificate-data", &cert_data)) < 0 ||
            (r = opt_str(x, u, path, "client-key", &key)) < 0 ||
            (r = opt_str(x, u, path, "client-key-data", &key_data)) < 0)
                return r;
        if (tok && tokf)
                return dp_error_set(x->err, -EINVAL, "%s: %s: token and tokenFile are exclusive", x->file, path);
        if ((cert && cert_data) || (key && key_data))
                return dp_error_set(x->err, -EINVAL,
                                    "%s: %s: a client certificate or key is given both as a file and as data", x->file,
                                    path);
        bool has_cert = cert || cert_data, has_key = key || key_data;
        if (has_cert != has_key)
                return dp_error_set(x->err, -EINVAL, "%s: %s.%s: required with %s", x->file, path,
                                    has_cert ? "client-key" : "client-certificate",
                                    has_cert ? "client-certificate" : "client-key");
        if (!tok && !tokf && !has_cert && !c->exec)
                return dp_error_set(x->err, -EINVAL,
                                    "%s: %s: no credentials (token, tokenFile or client-certificate + client-key)",
                                    x->file, path);
        if (tok && !(c->token = strdup(tok))) return -ENOMEM;
        if ((r = set_path(x, tokf, &c->token_file)) < 0 || (r = set_path(x, cert, &c->cert_file)) < 0 ||
            (r = set_path(x, key, &c->key_file)) < 0)
                return r;
        if ((r = set_data(x, path, "client-certificate-data", cert_data, &c->cert_data, &c->cert_len)) < 0) return r;
        return set_data(x, path, "client-key-data", key_data, &c->key_data, &c->key_len);
}

int dp_kube_config_parse(const char *buf, size_t len, const char *name, const char *context, dp_kube_config **ret,
                         dp_error *err) {
        return dp_kube_config_parse_flags(buf, len, name, context, 0, ret, err);
}

int dp_kube_config_parse_flags(const char *buf, size_t len, const char *name, const char *context, unsigned flags,
                               dp_kube_config **ret, dp_error *err) {
        assert_return(buf && name && ret, -EINVAL);
        if (len > DP_KUBE_MAX_CONFIG)
                return dp_error_set(err, -E2BIG, "%s: larger than %u bytes", name, DP_KUBE_MAX_CONFIG);
        _cleanup_free_ char *dircopy = strdup(name);
        if (!dircopy) return -ENOMEM;
        kc_ctx x = {.file = name, .dir = strchr(name, '/') ? dirname(dircopy) : NULL, .flags = flags, .err = err};
        _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
        if (!set) return -ENOMEM;
        int r = dp_doc_parse(set, buf, len, name, err);
        if (r < 0) return r;
        if (dp_doc_count(set) != 1)
                return dp_error_set(err, -EINVAL, "%s: expected one YAML document, got %zu", name, dp_doc_count(set));
        const dp_doc_node *root = dp_doc_root(set, 0);
        if (!root || root->type != DP_DOC_MAP)
                return dp_error_set(err, -EINVAL, "%s: expected a map (kind: Config)", name);
        const char *kind = NULL;
        if ((r = opt_str(&x, root, "(root)", "kind", &kind)) < 0) return r;
        if (kind && !streq(kind, "Config"))
                return dp_error_set(err, -EINVAL, "%s: kind: \"%s\": must be Config", name, kind);
        const char *ctx_name = context;
        if (!ctx_name) {
                if ((r = opt_str(&x, root, "(root)", "current-context", &ctx_name)) < 0) return r;
                if (!ctx_name)
                        return dp_error_set(err, -EINVAL, "%s: current-context: required (or pass a context)", name);
        }
        const dp_doc_node *ctx = NULL, *cl = NULL, *u = NULL;
        if ((r = find_named(&x, root, "contexts", ctx_name, "context", &ctx)) < 0) return r;
        char cpath[300];
        snprintf(cpath, sizeof cpath, "contexts[name=%s].context", ctx_name);
        const char *cluster_name, *user_name, *ns;
        if ((r = opt_str(&x, ctx, cpath, "cluster", &cluster_name)) < 0 ||
            (r = opt_str(&x, ctx, cpath, "user", &user_name)) < 0 || (r = opt_str(&x, ctx, cpath, "namespace", &ns)) < 0)
                return r;
        if (!cluster_name) return dp_error_set(err, -EINVAL, "%s: %s.cluster: required", name, cpath);
        if (!user_name) return dp_error_set(err, -EINVAL, "%s: %s.user: required", name, cpath);
        if ((r = find_named(&x, root, "clusters", cluster_name, "cluster", &cl)) < 0 ||
            (r = find_named(&x, root, "users", user_name, "user", &u)) < 0)
                return r;
        _cleanup_(dp_kube_config_freep) dp_kube_config *c = calloc(1, sizeof *c);
        if (!c || !(c->source = strdup(name)) || (ns && !(c->namespace = strdup(ns)))) return -ENOMEM;
        if ((r = parse_cluster(&x, cl, cluster_name, c)) < 0 || (r = parse_user(&x, u, user_name, c)) < 0) return r;
        *ret = TAKE_PTR(c);
        return 0;
}

int dp_kube_config_load(const char *path, const char *context, dp_kube_config **ret, dp_error *err) {
        return dp_kube_config_load_flags(path, context, 0, ret, err);
}

int dp_kube_config_load_flags(const char *path, const char *context, unsigned flags, dp_kube_config **ret,
                              dp_error *err) {
        assert_return(path && ret, -EINVAL);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r = dp_read_file(path, DP_KUBE_MAX_CONFIG, &buf, &len, err);
        if (r < 0) return r;
        return dp_kube_config_parse_flags(buf, len, path, context, flags, ret, err);
}

int dp_kube_config_in_cluster(const char *sa_dir, dp_kube_config **ret, dp_error *err) {
        assert_return(ret, -EINVAL);
        const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
        if (!host || !*host || !port || !*port)
                return dp_error_set(err, -ENOENT,
                                    "not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset "
                                    "(pass --kubeconfig)");
        if (!sa_dir) sa_dir = DP_KUBE_SA_DIR;
        _cleanup_(dp_kube_config_freep) dp_kube_config *c = calloc(1, sizeof *c);
        if (!c) return -ENOMEM;
        bool v6 = strchr(host, ':') != NULL;
        c->server = dp_asprintf(v6 ? "https://[%s]:%s" : "https://%s:%s", host, port);
        c->token_file = dp_asprintf("%s/token", sa_dir);
        c->ca_file = dp_asprintf("%s/ca.crt", sa_dir);
        c->source = strdup("in-cluster");
        if (!c->server || !c->token_file || !c->ca_file || !c->source) return -ENOMEM;
        if (access(c->token_file, R_OK) < 0)
                return dp_error_errno(err, -errno, "in-cluster credentials: %s", c->token_file);
        if (access(c->ca_file, R_OK) < 0) return dp_error_errno(err, -errno, "in-cluster credentials: %s", c->ca_file);
        /* the pod's namespace, when the service-account volume has it */
        _cleanup_free_ char *nsf = dp_asprintf("%s/namespace", sa_dir), *ns = NULL;
        size_t n = 0;
        if (!nsf) return -ENOMEM;
        if (dp_read_file(nsf, 253, &ns, &n, NULL) >= 0) {
                while (n > 0 && (ns[n - 1] == '\n' || ns[n - 1] == ' ')) ns[--n] = 0;
                if (n) c->namespace = TAKE_PTR(ns);
        }
        *ret = TAKE_PTR(c);
        return 0;
}
