/* SPDX-License-Identifier: Apache-2.0
 * exec-cred.c — exec credential plugins (users[].user.exec), run as kubectl
 * runs them (client.authentication.k8s.io ExecCredential): what EKS
 * (aws eks get-token), GKE (gke-gcloud-auth-plugin) and AKS (kubelogin)
 * kubeconfigs use. Never interactive: standard input is /dev/null and
 * spec.interactive is false. The credential is kept on the config until
 * status.expirationTimestamp (kube.h, dp_kube_config_credential). */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>

#include "base/strv.h"
#include "base/escape.h"
#include "base/fileio.h"
#include "base/strbuf.h"
#include "doc/builder.h"
#include "kube/kube.h"

extern char **environ;

void dp_kube_credential_done(dp_kube_credential *c) {
        if (!c) return;
        dp_free_many(c->token, c->cert_data, c->key_data);
        *c = (dp_kube_credential){0};
}

dp_kube_exec *dp_kube_exec_free(dp_kube_exec *x) {
        if (!x) return NULL;
        dp_free_many(x->api_version, x->command);
        dp_strv_free(x->args);
        dp_strv_free(x->env);
        dp_free_many(x->install_hint, x->where);
        dp_kube_credential_done(&x->cred);
        free(x);
        return NULL;
}

/* ---- RFC 3339 ---- */

static int digits(const char **p, int n, int *ret) {
        int v = 0;
        for (int i = 0; i < n; i++, (*p)++) {
                if (**p < '0' || **p > '9') return -EINVAL;
                v = v * 10 + (**p - '0');
        }
        *ret = v;
        return 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
 * civil-to-days arithmetic, written from its description). */
static int64_t days_from_civil(int64_t y, int m, int d) {
        y -= m <= 2;
        int64_t era = (y >= 0 ? y : y - 399) / 400;
        int64_t yoe = y - era * 400;
        int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
        int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146097 + doe - 719468;
}

int dp_kube_parse_time(const char *s, int64_t *ret) {
        assert_return(s && ret, -EINVAL);
        int y, mo, d, h, mi, sec, oh = 0, om = 0;
        const char *p = s;
        if (digits(&p, 4, &y) < 0 || *p++ != '-' || digits(&p, 2, &mo) < 0 || *p++ != '-' || digits(&p, 2, &d) < 0)
                return -EINVAL;
        if (*p != 'T' && *p != 't') return -EINVAL;
        p++;
        if (digits(&p, 2, &h) < 0 || *p++ != ':' || digits(&p, 2, &mi) < 0 || *p++ != ':' || digits(&p, 2, &sec) < 0)
                return -EINVAL;
        if (*p == '.') {
                p++;
                if (*p < '0' || *p > '9') return -EINVAL;
                while (*p >= '0' && *p <= '9')
                        p++;
        }
        int sign = 0;
        if (*p == 'Z' || *p == 'z')
                p++;
        else if (*p == '+' || *p == '-') {
                sign = *p++ == '+' ? 1 : -1;
                if (digits(&p, 2, &oh) < 0 || *p++ != ':' || digits(&p, 2, &om) < 0) return -EINVAL;
        } else
                return -EINVAL;
        static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        if (*p || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || sec > 60 || oh > 23 ||
            om > 59)
                return -EINVAL;
        int64_t t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
        *ret = t - sign * (oh * 3600 + om * 60);
        return 0;
}

/* ---- the plugin's answer ---- */

static int opt_string(const dp_doc_node *st, const char *key, const char *what, char **ret, dp_error *err) {
        const dp_doc_node *v = dp_doc_get(st, key);
        const char *s = NULL;
        if (!v || dp_doc_is_null(v)) return 0;
        if (dp_doc_get_str(v, false, &s, NULL) < 0)
                return dp_error_set(err, -EINVAL, "%s: status.%s: expected a string, got %s", what, key,
                                    dp_doc_type_name(v));
        if (!*s) return 0;
        return (*ret = strdup(s)) ? 0 : -ENOMEM;
}

int dp_kube_exec_decode(const char *buf, size_t len, const char *api_version, const char *what,
                        dp_kube_credential *ret, dp_error *err) {
        assert_return(buf && api_version && what && ret, -EINVAL);
        if (len > DP_KUBE_EXEC_MAX_OUTPUT)
                return dp_error_set(err, -E2BIG, "%s: printed more than %u bytes", what, DP_KUBE_EXEC_MAX_OUTPUT);
        _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
        if (!set) return -ENOMEM;
        dp_error e = DP_ERROR_INIT;
        int r = dp_doc_parse(set, buf, len, "output", &e);
        if (r == -ENOMEM) return r;
        const dp_doc_node *root = r >= 0 && dp_doc_count(set) == 1 ? dp_doc_root(set, 0) : NULL;
        if (!root || root->type != DP_DOC_MAP) {
                _cleanup_free_ char *m = dp_escape_dup(r < 0 ? dp_error_msg(&e) : "not one JSON object");
                return dp_error_set(err, -EINVAL, "%s: its output is not an ExecCredential: %s", what,
                                    m ? m : "(out of memory)");
        }
        const char *kind = NULL, *av = NULL;
        (void)dp_doc_get_str(dp_doc_get(root, "kind"), false, &kind, NULL);
        (void)dp_doc_get_str(dp_doc_get(root, "apiVersion"), false, &av, NULL);
        if (!kind || !streq(kind, "ExecCredential"))
                return dp_error_set(err, -EINVAL, "%s: its output is not an ExecCredential (kind: %s)", what,
                                    kind ? "another" : "missing");
        if (!av || !streq(av, api_version)) {
                _cleanup_free_ char *m = av ? dp_escape_dup(av) : NULL;
                return dp_error_set(err, -EINVAL, "%s: the kubeconfig asks for %s, the plugin answered %s", what,
                                    api_version, m ? m : "no apiVersion");
        }
        const dp_doc_node *st = dp_doc_get(root, "status");
        if (!st || st->type != DP_DOC_MAP)
                return dp_error_set(err, -EINVAL, "%s: the ExecCredential has no status", what);
        dp_kube_credential c = {0};
        const char *exp = NULL;
        const dp_doc_node *ev = dp_doc_get(st, "expirationTimestamp");
        if ((r = opt_string(st, "token", what, &c.token, err)) < 0 ||
            (r = opt_string(st, "clientCertificateData", what, &c.cert_data, err)) < 0 ||
            (r = opt_string(st, "clientKeyData", what, &c.key_data, err)) < 0)
                goto fail;
        if (!!c.cert_data != !!c.key_data || (!c.token && !c.cert_data)) {
                r = dp_error_set(err, -EINVAL,
                                 "%s: the ExecCredential has neither status.token nor status.clientCertificateData "
                                 "with status.clientKeyData",
                                 what);
                goto fail;
        }
        if (ev && !dp_doc_is_null(ev) &&
            (dp_doc_get_str(ev, false, &exp, NULL) < 0 || dp_kube_parse_time(exp, &c.expires) < 0)) {
                r = dp_error_set(err, -EINVAL, "%s: status.expirationTimestamp: not an RFC 3339 time", what);
                goto fail;
        }
        c.cert_len = c.cert_data ? strlen(c.cert_data) : 0;
        c.key_len = c.key_data ? strlen(c.key_data) : 0;
        *ret = c;
        return 0;
fail:
        dp_kube_credential_done(&c);
        return r;
}

/* ---- running it ---- */

/* KUBERNETES_EXEC_INFO: the ExecCredential the plugin reads. */
static char *exec_info(const dp_kube_config *cfg) {
        const dp_kube_exec *x = cfg->exec;
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        if (!s) return NULL;
        dp_doc_builder b = DP_DOC_BUILDER_INIT(s);
        dp_doc_node *root = dp_doc_b_map(&b), *spec = dp_doc_b_map(&b);
        dp_doc_b_put_str(&b, root, "apiVersion", x->api_version);
        dp_doc_b_put_str(&b, root, "kind", "ExecCredential");
        dp_doc_b_put_bool(&b, spec, "interactive", false);
        if (x->provide_cluster_info) {
                dp_doc_node *cl = dp_doc_b_map(&b);
                dp_doc_b_put_str(&b, cl, "server", cfg->server);
                if (cfg->insecure) dp_doc_b_put_bool(&b, cl, "insecure-skip-tls-verify", true);
                dp_doc_b_put(&b, spec, "cluster", cl);
        }
        dp_doc_b_put(&b, root, "spec", spec);
        if (b.r < 0) return NULL;
        dp_strbuf out = DP_STRBUF_INIT;
        dp_strbuf_puts(&out, "KUBERNETES_EXEC_INFO=");
        dp_doc_emit(&out, root, DP_DOC_JSON_COMPACT);
        while (out.len && out.buf[out.len - 1] == '\n')
                dp_strbuf_truncate(&out, out.len - 1);
        return dp_strbuf_steal(&out);
}

/* The environment: ours, exec.env over it, KUBERNETES_EXEC_INFO last. */
static char **plugin_env(const dp_kube_config *cfg) {
        size_t n = 0, m = 0;
        while (environ[n])
                n++;
        while (cfg->exec->env[m])
                m++;
        char **v = calloc(n + m + 2, sizeof(char *));
        if (!v) return NULL;
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                if (startswith(environ[i], "KUBERNETES_EXEC_INFO=")) continue;
                const char *eq = strchr(environ[i], '=');
                size_t nl = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
                bool over = false;
                for (size_t j = 0; j < m && !over; j++)
                        over = strncmp(cfg->exec->env[j], environ[i], nl) == 0 && cfg->exec->env[j][nl] == '=';
                if (!over && !(v[k++] = strdup(environ[i]))) goto oom;
        }
        for (size_t j = 0; j < m; j++)
                if (!(v[k++] = strdup(cfg->exec->env[j]))) goto oom;
        if (!(v[k++] = exec_info(cfg))) goto oom;
        return v;
oom:
        dp_strv_free(v);
        return NULL;
}

static uint64_t now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Read what is there on fd into sb (past cap: counted, dropped). 0 at end
 * of file, 1 more may come. */
static int drain(int fd, dp_strbuf *sb, size_t cap, bool *over) {
        char buf[8192];
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0) return errno == EINTR || errno == EAGAIN ? 1 : 0;
        if (n == 0) return 0;
        if (sb->len + (size_t)n > cap) {
                *over = true;
                n = (ssize_t)(cap > sb->len ? cap - sb->len : 0);
        }
        dp_strbuf_append(sb, buf, (size_t)n);
        return 1;
}

/* Both pipes to their end; -ETIMEDOUT at the deadline, -E2BIG as soon as
 * the output passes its cap. */
static int collect(int out_fd, int err_fd, uint64_t deadline, dp_strbuf *out, dp_strbuf *errb, bool *too_big) {
        struct pollfd p[2] = {{.fd = out_fd, .events = POLLIN}, {.fd = err_fd, .events = POLLIN}};
        bool stderr_over = false;
        while (p[0].fd >= 0 || p[1].fd >= 0) {
                uint64_t now = now_ms();
                if (now >= deadline) return -ETIMEDOUT;
                int r = poll(p, 2, (int)DP_MIN(deadline - now, 60000));
                if (r < 0 && errno != EINTR) return -errno;
                for (int i = 0; r > 0 && i < 2; i++) {
                        if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
                        if (drain(p[i].fd, i ? errb : out, i ? DP_KUBE_EXEC_MAX_STDERR : DP_KUBE_EXEC_MAX_OUTPUT + 1,
                                  i ? &stderr_over : too_big) == 0)
                                p[i].fd = -1;
                }
                if (*too_big) return -E2BIG; /* no need to read the rest: it is killed */
        }
        return 0;
}

static int spawn(const dp_kube_config *cfg, int out_fd, int err_fd, pid_t *ret) {
        char **env = plugin_env(cfg);
        if (!env) return -ENOMEM;
        posix_spawn_file_actions_t fa;
        int r = posix_spawn_file_actions_init(&fa);
        if (r == 0) r = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        if (r == 0) r = posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
        if (r == 0) r = posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
        if (r == 0) r = posix_spawnp(ret, cfg->exec->command, &fa, NULL, cfg->exec->args, env);
        posix_spawn_file_actions_destroy(&fa);
        dp_strv_free(env);
        return -r;
}

/* Run the plugin: its output, standard error and wait status. */
static int run_plugin(const dp_kube_config *cfg, unsigned timeout_ms, const char *what, dp_strbuf *out,
                      dp_strbuf *errb, int *ret_status, dp_error *err) {
        const dp_kube_exec *x = cfg->exec;
        int po[2] = {-1, -1}, pe[2] = {-1, -1};
        if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) {
                int e = -errno;
                for (int i = 0; i < 2; i++) {
                        if (po[i] >= 0) close(po[i]);
                        if (pe[i] >= 0) close(pe[i]);
                }
                return dp_error_errno(err, e, "%s: pipe", what);
        }
        pid_t pid;
        int r = spawn(cfg, po[1], pe[1], &pid);
        close(po[1]);
        close(pe[1]);
        if (r < 0) {
                close(po[0]);
                close(pe[0]);
                if (r == -ENOENT)
                        return dp_error_set(err, -ENOENT, "%s: %s: command not found%s%s", what, x->command,
                                            x->install_hint ? ": " : "", x->install_hint ? x->install_hint : "");
                return dp_error_errno(err, r, "%s: cannot run %s", what, x->command);
        }
        bool too_big = false;
        r = collect(po[0], pe[0], now_ms() + (timeout_ms ? timeout_ms : 1), out, errb, &too_big);
        close(po[0]);
        close(pe[0]);
        if (r < 0) kill(pid, SIGKILL);
        int st = 0;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
        }
        if (r == -ETIMEDOUT)
                return dp_error_set(err, r, "%s: %s did not answer within %g s (killed)", what, x->command,
                                    timeout_ms / 1000.0);
        if (r == -E2BIG)
                return dp_error_set(err, -E2BIG, "%s: %s printed more than %u bytes (killed)", what, x->command,
                                    DP_KUBE_EXEC_MAX_OUTPUT);
        if (r < 0) return dp_error_errno(err, r, "%s: reading from %s", what, x->command);
        if (dp_strbuf_failed(out) || dp_strbuf_failed(errb)) return -ENOMEM;
        *ret_status = st;
        return 0;
}

int dp_kube_config_credential(const dp_kube_config *cfg, bool refresh, int64_t now_unix, unsigned timeout_ms,
                              const dp_kube_credential **ret, dp_error *err) {
        assert_return(cfg && cfg->exec && ret, -EINVAL);
        dp_kube_exec *x = cfg->exec;
        if (x->have_cred && !refresh && (!x->cred.expires || now_unix < x->cred.expires)) {
                *ret = &x->cred;
                return 0;
        }
        _cleanup_free_ char *cmd = dp_escape_dup(x->command);
        _cleanup_free_ char *what = cmd ? dp_asprintf("%s (exec plugin %s)", x->where, cmd) : NULL;
        if (!what) return -ENOMEM;
        if (x->interactive == DP_KUBE_EXEC_ALWAYS)
                return dp_error_set(err, -EPERM,
                                    "%s: interactiveMode Always needs a terminal, and devplane never runs a plugin "
                                    "interactively: log in first (the plugin's own command), or set interactiveMode "
                                    "to IfAvailable or Never",
                                    what);
        _cleanup_strbuf_ dp_strbuf out = DP_STRBUF_INIT;
        _cleanup_strbuf_ dp_strbuf errb = DP_STRBUF_INIT;
        int st = 0;
        int r = run_plugin(cfg, timeout_ms, what, &out, &errb, &st, err);
        x->runs++;
        if (r < 0) return r;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                dp_strbuf msg = DP_STRBUF_INIT;
                dp_escape_append(&msg, dp_strbuf_str(&errb), errb.len, 0);
                _cleanup_free_ char *m = dp_strbuf_steal(&msg);
                if (WIFEXITED(st))
                        return dp_error_set(err, -EIO, "%s: exited with status %d%s%s", what, WEXITSTATUS(st),
                                            m && *m ? ": " : "", m ? m : "");
                return dp_error_set(err, -EIO, "%s: killed by signal %d", what, WTERMSIG(st));
        }
        dp_kube_credential c;
        if ((r = dp_kube_exec_decode(dp_strbuf_str(&out), out.len, x->api_version, what, &c, err)) < 0) return r;
        dp_kube_credential_done(&x->cred);
        x->cred = c;
        x->have_cred = true;
        *ret = &x->cred;
        return 0;
}
