/* SPDX-License-Identifier: Apache-2.0
 * list.c — a read-only snapshot of the cluster's scheduling state: the
 * resources `kubectl get nodes,pods,resourceslices,... -A` shows, listed
 * page by page (limit/continue) on a loop of its own (kube.h). Only GET. */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "base/strbuf.h"
#include "doc/doc.h"
#include "kube/kube.h"

/* What is listed, in this order. `dra`: a resource.k8s.io resource, read at
 * the version discovery found (the path is completed with it). `optional`:
 * a 404 means the cluster does not serve it (DeviceTaintRule is alpha or
 * beta), not an error. */
static const struct {
        const char *path;
        const char *what;
        bool dra, optional;
} resources[] = {
        {"/api/v1/nodes", "nodes", false, false},
        /* as kube-scheduler: finished pods hold nothing */
        {"/api/v1/pods?fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed", "pods", false, false},
        {"resourceslices", "resourceslices", true, false},
        {"resourceclaims", "resourceclaims", true, false},
        {"resourceclaimtemplates", "resourceclaimtemplates", true, false},
        {"deviceclasses", "deviceclasses", true, false},
        {"devicetaintrules", "devicetaintrules", true, true},
};

/* The versions of resource.k8s.io devplane reads, most preferred first
 * (the model decodes each, model/decode-dra.c), and those of
 * DeviceTaintRule, which came later. */
static const char *const dra_versions[] = {"v1", "v1beta2", "v1beta1"};
static const char *const taint_rule_versions[] = {"v1beta2", "v1alpha3"};
#define DRA_GROUP "/apis/resource.k8s.io"

dp_kube_snapshot *dp_kube_snapshot_free(dp_kube_snapshot *s) {
        if (!s) return NULL;
        for (size_t i = 0; i < s->n; i++)
                dp_free_many(s->pages[i].body, s->pages[i].source);
        dp_free_many(s->pages, s->dra_note);
        free(s);
        return NULL;
}

typedef struct lister {
        dp_loop *loop;
        long status;
        char *body;
        size_t len;
        char errmsg[256];
        bool done;
} lister;

static void on_page(long status, const char *body, size_t len, const char *errmsg, void *userdata) {
        lister *l = userdata;
        l->status = status;
        l->body = malloc(len + 1);
        if (l->body) {
                memcpy(l->body, body, len);
                l->body[len] = 0;
                l->len = len;
        }
        snprintf(l->errmsg, sizeof(l->errmsg), "%s", errmsg ? errmsg : "");
        l->done = true;
        dp_loop_exit(l->loop, 0);
}

/* One snapshot in the making. */
typedef struct snap {
        const dp_kube_config *cfg;
        dp_loop *loop;
        dp_kube_client *client;
        unsigned client_runs; /* the exec plugin's run whose credential the client sends */
        bool retried_401;     /* a 401 ran the plugin again once already */
        uint64_t start, deadline; /* dp_loop_now() microseconds */
        unsigned deadline_ms, request_ms;
        uint64_t max_bytes;
        bool taint_served[ELEMENTSOF(taint_rule_versions)];
        dp_kube_snapshot *s;
} snap;

static void fmt_bytes(uint64_t n, char *buf, size_t size) {
        if (n >= (1u << 30))
                snprintf(buf, size, "%.1f GiB", (double)n / (1u << 30));
        else if (n >= (1u << 20))
                snprintf(buf, size, "%.1f MiB", (double)n / (1u << 20));
        else
                snprintf(buf, size, "%" PRIu64 " bytes", n);
}

static int past_deadline(const snap *x, const char *path, dp_error *err) {
        char b[64];
        fmt_bytes(x->s->bytes, b, sizeof(b));
        return dp_error_set(err, -ETIMEDOUT,
                            "reading the cluster took longer than %g s: stopped at GET %s, after %zu pages (%s)",
                            x->deadline_ms / 1000.0, path, x->s->n, b);
}

/* The client, made again when the exec plugin gives a new credential (it
 * copies what it sends when it is made, kube/client.c). */
static int ensure_client(snap *x, bool refresh, dp_error *err) {
        const dp_kube_config *cfg = x->cfg;
        dp_kube_config tmp = *cfg;
        if (cfg->exec) {
                uint64_t now = dp_loop_now();
                unsigned left = now < x->deadline ? (unsigned)((x->deadline - now) / 1000) : 0;
                const dp_kube_credential *cred = NULL;
                int r = dp_kube_config_credential(cfg, refresh, (int64_t)time(NULL), left, &cred, err);
                if (r < 0) return r;
                if (x->client && x->client_runs == cfg->exec->runs) return 0;
                tmp.token = cred->token;
                tmp.token_file = NULL;
                if (cred->cert_data) {
                        tmp.cert_file = tmp.key_file = NULL;
                        tmp.cert_data = cred->cert_data;
                        tmp.cert_len = cred->cert_len;
                        tmp.key_data = cred->key_data;
                        tmp.key_len = cred->key_len;
                }
                x->client_runs = cfg->exec->runs;
        } else if (x->client) {
                return 0;
        }
        x->client = dp_kube_client_free(x->client);
        int r = dp_kube_client_new(x->loop, &tmp, &x->client);
        return r < 0 ? dp_error_errno(err, r, "API client") : 0;
}

/* GET path into *l (status, body), within the deadline; a 401 with an exec
 * plugin runs it again and retries once, as kubectl does. */
static int get(snap *x, const char *path, lister *l, dp_error *err) {
        for (;;) {
                uint64_t now = dp_loop_now();
                if (now >= x->deadline) return past_deadline(x, path, err);
                int r = ensure_client(x, false, err);
                if (r < 0) return r;
                unsigned left = (unsigned)DP_MAX((x->deadline - now) / 1000, 1);
                *l = (lister){.loop = x->loop};
                r = dp_kube_request_start(x->client, "GET", path, NULL, 0, DP_MIN(x->request_ms, left), on_page, l,
                                          NULL);
                if (r < 0) return dp_error_errno(err, r, "GET %s", path);
                while (!l->done)
                        if ((r = dp_loop_run(x->loop)) < 0) {
                                free(l->body);
                                l->body = NULL;
                                return dp_error_errno(err, r, "GET %s", path);
                        }
                if (!l->body) return -ENOMEM;
                if (l->status == 0 && dp_loop_now() >= x->deadline) {
                        free(l->body);
                        l->body = NULL;
                        return past_deadline(x, path, err);
                }
                if (l->status != 401 || !x->cfg->exec || x->retried_401) return 0;
                x->retried_401 = true;
                free(l->body);
                l->body = NULL;
                if ((r = ensure_client(x, true, err)) < 0) return r;
        }
}

/* metadata.continue of a list body ("" when the list is complete). */
static int next_token(const lister *l, const char *path, char **ret, dp_error *err) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
        if (!set) return -ENOMEM;
        dp_error e = DP_ERROR_INIT;
        if (dp_doc_parse(set, l->body, l->len, path, &e) < 0 || dp_doc_count(set) != 1)
                return dp_error_set(err, -EPROTO, "GET %s: the answer is not a JSON list: %s", path, dp_error_msg(&e));
        const dp_doc_node *root = dp_doc_root(set, 0), *items = dp_doc_get(root, "items");
        if (!root || root->type != DP_DOC_MAP || (items && !dp_doc_is_null(items) && items->type != DP_DOC_SEQ))
                return dp_error_set(err, -EPROTO, "GET %s: the answer is not a list (no items)", path);
        const char *tok = NULL;
        const dp_doc_node *c = dp_doc_get(dp_doc_get(root, "metadata"), "continue");
        if (c && dp_doc_get_str(c, false, &tok, NULL) < 0) tok = NULL;
        *ret = dp_strdup(tok ? tok : "");
        return *ret ? 0 : -ENOMEM;
}

static int status_error(const dp_kube_config *cfg, const char *path, const lister *l, dp_error *err) {
        char msg[256];
        dp_kube_status_message(l->body ? l->body : "", l->body ? l->len : 0, msg, sizeof(msg));
        switch (l->status) {
        case 0:
                return dp_error_set(err, -EHOSTUNREACH, "cannot reach the API server %s: %s", cfg->server, l->errmsg);
        case 401:
                return dp_error_set(err, -EACCES,
                                    "the API server %s refused the credentials of %s (401 Unauthorized): the %s "
                                    "is not valid there",
                                    cfg->server, cfg->source ? cfg->source : "the kubeconfig",
                                    cfg->exec ? "exec plugin's credential" : "token or client certificate");
        case 403:
                return dp_error_set(err, -EACCES, "GET %s: forbidden (403): the user may not list it: %s", path, msg);
        case 410:
                return dp_error_set(err, -ESTALE,
                                    "GET %s: the list expired while it was read page by page (410 Gone); "
                                    "the cluster changed meanwhile: run again",
                                    path);
        default: return dp_error_set(err, -EPROTO, "GET %s: HTTP %ld: %s", path, l->status, msg);
        }
}

static int add_page(snap *x, lister *l, const char *what, size_t page, const char *path, dp_error *err) {
        dp_kube_snapshot *s = x->s;
        if (s->bytes + l->len > x->max_bytes) {
                char b[64], m[64];
                fmt_bytes(s->bytes + l->len, b, sizeof(b));
                fmt_bytes(x->max_bytes, m, sizeof(m));
                return dp_error_set(err, -E2BIG,
                                    "the cluster's lists passed %s (%s at GET %s, page %zu): more than "
                                    "devplane keeps in memory",
                                    m, b, path, page);
        }
        dp_kube_snapshot_page *v = realloc(s->pages, (s->n + 1) * sizeof(*v));
        if (!v) return -ENOMEM;
        s->pages = v;
        v[s->n].source = dp_asprintf("API server: %s (page %zu)", what, page);
        if (!v[s->n].source) return -ENOMEM;
        v[s->n].body = TAKE_PTR(l->body);
        v[s->n].len = l->len;
        s->n++;
        s->bytes += l->len;
        return 0;
}

/* Every page of one list. 1: answered 404 on the first page and `optional`
 * (not served), nothing added. */
static int list_path(snap *x, const char *base, const char *what, bool optional, dp_error *err) {
        _cleanup_free_ char *token = NULL;
        for (size_t page = 1;; page++) {
                if (page > DP_KUBE_LIST_MAX_PAGES)
                        return dp_error_set(err, -E2BIG, "GET %s: more than %d pages", base, DP_KUBE_LIST_MAX_PAGES);
                _cleanup_free_ char *esc = token ? dp_kube_query_escape(token) : NULL;
                if (token && !esc) return -ENOMEM;
                const char *sep = strchr(base, '?') ? "&" : "?";
                _cleanup_free_ char *path =
                        esc ? dp_asprintf("%s%slimit=%d&continue=%s", base, sep, DP_KUBE_LIST_LIMIT, esc)
                            : dp_asprintf("%s%slimit=%d", base, sep, DP_KUBE_LIST_LIMIT);
                if (!path) return -ENOMEM;
                lister l;
                int r = get(x, path, &l, err);
                if (r < 0) return r;
                if (l.status == 404 && optional && page == 1) {
                        free(l.body);
                        return 1;
                }
                if (l.status != 200) {
                        r = status_error(x->cfg, base, &l, err);
                        free(l.body);
                        return r;
                }
                free(token);
                token = NULL;
                r = next_token(&l, base, &token, err);
                if (r >= 0) r = add_page(x, &l, what, page, base, err); /* takes l.body */
                free(l.body);
                if (r < 0) return r;
                if (!token[0]) return 0;
        }
}

static int versions_note(snap *x, const char *fmt, const char *served) {
        x->s->dra_note = dp_asprintf(fmt, served);
        return x->s->dra_note ? 0 : -ENOMEM;
}

/* GET /apis/resource.k8s.io (the APIGroup discovery document): which
 * version to read, or none. */
static int discover_dra(snap *x, dp_error *err) {
        lister l;
        int r = get(x, DRA_GROUP, &l, err);
        if (r < 0) return r;
        _cleanup_free_ _unused_ char *body = l.body; /* freed on every way out */
        if (l.status == 404)
                return versions_note(x,
                                     "the API server does not serve resource.k8s.io%s (DRA is off): no "
                                     "ResourceSlice, ResourceClaim or DeviceClass is read, and pods that reference "
                                     "claims stay Pending",
                                     "");
        if (l.status != 200) return status_error(x->cfg, DRA_GROUP, &l, err);
        _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
        if (!set) return -ENOMEM;
        dp_error e = DP_ERROR_INIT;
        if (dp_doc_parse(set, l.body, l.len, DRA_GROUP, &e) < 0 || dp_doc_count(set) != 1)
                return dp_error_set(err, -EPROTO, "GET %s: the answer is not JSON: %s", DRA_GROUP, dp_error_msg(&e));
        const dp_doc_node *vs = dp_doc_get(dp_doc_root(set, 0), "versions");
        if (!vs || vs->type != DP_DOC_SEQ)
                return dp_error_set(err, -EPROTO, "GET %s: not an APIGroup (no versions)", DRA_GROUP);
        dp_strbuf served = DP_STRBUF_INIT;
        size_t best = ELEMENTSOF(dra_versions);
        for (size_t i = 0; i < vs->n; i++) {
                const char *v = NULL;
                if (dp_doc_get_str(dp_doc_get(vs->items[i], "version"), false, &v, NULL) < 0) continue;
                dp_strbuf_printf(&served, "%s%s", served.len ? ", " : "", v);
                for (size_t k = 0; k < ELEMENTSOF(dra_versions); k++)
                        if (streq(v, dra_versions[k]) && k < best) best = k;
                for (size_t k = 0; k < ELEMENTSOF(taint_rule_versions); k++)
                        if (streq(v, taint_rule_versions[k])) x->taint_served[k] = true;
        }
        _cleanup_free_ char *list = dp_strbuf_steal(&served);
        if (!list) return -ENOMEM;
        if (best == ELEMENTSOF(dra_versions))
                return versions_note(x,
                                     "the API server serves resource.k8s.io only at %s, older than devplane reads "
                                     "(v1, v1beta2, v1beta1): no ResourceSlice, ResourceClaim or DeviceClass is "
                                     "read, and pods that reference claims stay Pending",
                                     list[0] ? list : "no version");
        x->s->dra = dra_versions[best];
        if (best > 0) {
                x->s->dra_note = dp_asprintf("the API server serves resource.k8s.io at %s: read at %s", list,
                                             x->s->dra);
                if (!x->s->dra_note) return -ENOMEM;
        }
        return 0;
}

static int list_dra(snap *x, size_t k, dp_error *err) {
        if (!x->s->dra) return 0;
        if (!resources[k].optional) {
                _cleanup_free_ char *base = dp_asprintf(DRA_GROUP "/%s/%s", x->s->dra, resources[k].path);
                if (!base) return -ENOMEM;
                int r = list_path(x, base, resources[k].what, false, err);
                return r < 0 ? r : 0;
        }
        /* DeviceTaintRule: the first served version that has it */
        for (size_t v = 0; v < ELEMENTSOF(taint_rule_versions); v++) {
                if (!x->taint_served[v]) continue;
                _cleanup_free_ char *base = dp_asprintf(DRA_GROUP "/%s/%s", taint_rule_versions[v], resources[k].path);
                if (!base) return -ENOMEM;
                int r = list_path(x, base, resources[k].what, true, err);
                if (r <= 0) return r;
        }
        return 0;
}

int dp_kube_snapshot_take(const dp_kube_config *cfg, const dp_kube_snapshot_limits *lim, dp_kube_snapshot **ret,
                          dp_error *err) {
        assert_return(cfg && ret, -EINVAL);
        int r = dp_kube_curl_load("--kubeconfig", err);
        if (r < 0) return r;
        _cleanup_(dp_loop_freep) dp_loop *loop = NULL;
        if ((r = dp_loop_new(&loop)) < 0) return dp_error_errno(err, r, "event loop");
        _cleanup_(dp_kube_snapshot_freep) dp_kube_snapshot *s = calloc(1, sizeof(*s));
        if (!s) return -ENOMEM;
        snap x = {.cfg = cfg, .loop = loop, .s = s};
        x.request_ms = lim && lim->request_timeout_ms ? lim->request_timeout_ms : 30000;
        x.deadline_ms = lim && lim->deadline_ms ? lim->deadline_ms : DP_KUBE_SNAPSHOT_DEADLINE_MS;
        x.max_bytes = lim && lim->max_bytes ? lim->max_bytes : DP_KUBE_SNAPSHOT_MAX_BYTES;
        x.start = dp_loop_now();
        x.deadline = x.start + (uint64_t)x.deadline_ms * 1000;
        for (size_t k = 0; r >= 0 && k < ELEMENTSOF(resources); k++) {
                if (!resources[k].dra)
                        r = list_path(&x, resources[k].path, resources[k].what, false, err);
                else if (k == 0 || !resources[k - 1].dra)
                        r = discover_dra(&x, err); /* once, before the first */
                if (r >= 0 && resources[k].dra) r = list_dra(&x, k, err);
        }
        s->exec_runs = cfg->exec ? cfg->exec->runs : 0;
        x.client = dp_kube_client_free(x.client);
        if (r < 0) return r == -ENOMEM ? dp_error_set(err, r, "out of memory") : r;
        *ret = TAKE_PTR(s);
        return 0;
}
