/* SPDX-License-Identifier: Apache-2.0
 * list.c — a read-only snapshot of the cluster's scheduling state: the
 * resources `kubectl get nodes,pods,resourceslices,... -A` shows, listed
 * page by page (limit/continue) on a loop of its own (kube.h). Only GET. */
#include <stdio.h>

#include "base/doc.h"
#include "base/strbuf.h"
#include "kube/kube.h"

/* What is listed, in this order. `optional`: a 404 means the cluster does
 * not serve the API (DRA off, DeviceTaintRule alpha), not an error. */
static const struct {
        const char *path;
        const char *what;
        bool optional;
} resources[] = {
        {"/api/v1/nodes", "nodes", false},
        /* as kube-scheduler: finished pods hold nothing */
        {"/api/v1/pods?fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed", "pods", false},
        {"/apis/resource.k8s.io/v1/resourceslices", "resourceslices", true},
        {"/apis/resource.k8s.io/v1/resourceclaims", "resourceclaims", true},
        {"/apis/resource.k8s.io/v1/resourceclaimtemplates", "resourceclaimtemplates", true},
        {"/apis/resource.k8s.io/v1/deviceclasses", "deviceclasses", true},
        {"/apis/resource.k8s.io/v1beta2/devicetaintrules", "devicetaintrules", true},
};

dp_kube_snapshot *dp_kube_snapshot_free(dp_kube_snapshot *s) {
        if (!s) return NULL;
        for (size_t i = 0; i < s->n; i++) {
                free(s->pages[i].body);
                free(s->pages[i].source);
        }
        free(s->pages);
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
                                    "the API server %s refused the credentials of %s (401 Unauthorized): the token "
                                    "or client certificate is not valid there",
                                    cfg->server, cfg->source ? cfg->source : "the kubeconfig");
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

static int add_page(dp_kube_snapshot *s, lister *l, const char *what, size_t page) {
        dp_kube_snapshot_page *v = realloc(s->pages, (s->n + 1) * sizeof(*v));
        if (!v) return -ENOMEM;
        s->pages = v;
        v[s->n].source = dp_asprintf("API server: %s (page %zu)", what, page);
        if (!v[s->n].source) return -ENOMEM;
        v[s->n].body = TAKE_PTR(l->body);
        v[s->n].len = l->len;
        s->n++;
        return 0;
}

static int list_one(dp_kube_client *c, dp_loop *loop, const dp_kube_config *cfg, size_t k, unsigned timeout_ms,
                    dp_kube_snapshot *s, dp_error *err) {
        _cleanup_free_ char *token = NULL;
        for (size_t page = 1;; page++) {
                if (page > DP_KUBE_LIST_MAX_PAGES)
                        return dp_error_set(err, -E2BIG, "GET %s: more than %d pages", resources[k].path,
                                            DP_KUBE_LIST_MAX_PAGES);
                _cleanup_free_ char *esc = token ? dp_kube_query_escape(token) : NULL;
                if (token && !esc) return -ENOMEM;
                const char *sep = strchr(resources[k].path, '?') ? "&" : "?";
                _cleanup_free_ char *path =
                        esc ? dp_asprintf("%s%slimit=%d&continue=%s", resources[k].path, sep, DP_KUBE_LIST_LIMIT, esc)
                            : dp_asprintf("%s%slimit=%d", resources[k].path, sep, DP_KUBE_LIST_LIMIT);
                if (!path) return -ENOMEM;
                lister l = {.loop = loop};
                int r = dp_kube_request_start(c, "GET", path, NULL, 0, timeout_ms, on_page, &l, NULL);
                if (r < 0) return dp_error_errno(err, r, "GET %s", path);
                while (!l.done)
                        if ((r = dp_loop_run(loop)) < 0) {
                                free(l.body);
                                return dp_error_errno(err, r, "GET %s", path);
                        }
                if (!l.body) return -ENOMEM;
                if (l.status == 404 && resources[k].optional && page == 1) {
                        free(l.body);
                        return 0; /* not served by this cluster */
                }
                if (l.status != 200) {
                        r = status_error(cfg, resources[k].path, &l, err);
                        free(l.body);
                        return r;
                }
                free(token);
                token = NULL;
                r = next_token(&l, resources[k].path, &token, err);
                if (r >= 0) r = add_page(s, &l, resources[k].what, page);
                free(l.body);
                if (r < 0) return r;
                if (!token[0]) return 0;
        }
}

int dp_kube_snapshot_take(const dp_kube_config *cfg, unsigned timeout_ms, dp_kube_snapshot **ret, dp_error *err) {
        assert_return(cfg && ret, -EINVAL);
        int r = dp_kube_curl_load("--kubeconfig", err);
        if (r < 0) return r;
        _cleanup_(dp_loop_freep) dp_loop *loop = NULL;
        if ((r = dp_loop_new(&loop)) < 0) return dp_error_errno(err, r, "event loop");
        _cleanup_(dp_kube_client_freep) dp_kube_client *c = NULL;
        if ((r = dp_kube_client_new(loop, cfg, &c)) < 0) return dp_error_errno(err, r, "API client");
        _cleanup_(dp_kube_snapshot_freep) dp_kube_snapshot *s = calloc(1, sizeof(*s));
        if (!s) return -ENOMEM;
        for (size_t k = 0; k < ELEMENTSOF(resources); k++)
                if ((r = list_one(c, loop, cfg, k, timeout_ms, s, err)) < 0)
                        return r == -ENOMEM ? dp_error_set(err, r, "out of memory") : r;
        *ret = TAKE_PTR(s);
        return 0;
}
