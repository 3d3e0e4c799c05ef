/* SPDX-License-Identifier: Apache-2.0
 * Publishing a node's ResourceSlices through the API server: a small state
 * machine on the loop (see kube.h). One request in flight at a time: a
 * node has a handful of slices, and ordering keeps the pool consistent
 * (every slice of a round carries the round's generation). */
#include <stdio.h>

#include "base/log.h"
#include "base/strbuf.h"
#include "doc/builder.h"
#include "kube/kube.h"
#include "kube/offload.h"

#define SLICES_PATH "/apis/resource.k8s.io/v1/resourceslices"
/* Watch lines up to this long are decoded on the loop (a few ms at worst:
 * 64 KiB of tiny keys); longer ones on the offload thread. */
#define INLINE_DECODE_MAX (64u << 10)
/* Offload tags: a watch's own (watch_tag), or one of these bits and
 * answer_seq. */
#define LIST_TAG (1ull << 63)
#define NODE_TAG (1ull << 62)
#define MAX_CONFLICT_RETRIES 5

typedef struct {
        char *name;
        char *text; /* the object as given */
        char *norm; /* its spec, compact, pool.generation 0 */
} want_slice;

typedef struct {
        char *name;
        char *rv;
        char *norm;
        int64_t gen;
} have_slice;

typedef enum { OP_NONE, OP_NODE, OP_LIST, OP_CREATE, OP_UPDATE, OP_DELETE } op_kind;

struct dp_kube_slices {
        dp_kube_client *client;
        char *node, *driver;
        want_slice *want;
        size_t n_want;
        have_slice *have;
        size_t n_have;
        char *node_uid;
        bool listed, waiting;
        int64_t gen;       /* last generation of a finished round */
        int64_t round_gen; /* 0: no round in progress */
        dp_kube_request *req;
        op_kind op;
        char *op_name;
        int64_t op_gen; /* the round a write belongs to */
        char *op_norm;  /* the spec it sends (normalized) */
        dp_loop_source *timer;
        dp_kube_backoff backoff;
        unsigned conflicts;
        uint64_t writes;
        bool synced;
        dp_kube_request *watch; /* GET ?watch=true once in sync */
        char *watch_rv;         /* resume point: the list's, then each event's */
        bool watch_restart;     /* the watch said ERROR (410 Gone): list again */
        /* Failed watches back off on their own: the list after each one
         * succeeds and resets the other backoff, so a server whose watches
         * always break would be listed and watched again every 250 ms. */
        dp_kube_backoff watch_backoff;
        /* Long watch lines are decoded off the loop, one at a time, the
         * watch held meanwhile; watch_tag tells the current watch's. */
        dp_kube_offload *offload;
        uint64_t watch_tag;
        /* A long LIST or Node answer is decoded there too: nothing else
         * starts until it is applied. */
        uint64_t answer_seq;
        bool answer_pending;
        bool inline_only; /* dp_kube_slices_inject: everything on the spot */
};

static void step(dp_kube_slices *s);

/* ---- documents ---------------------------------------------------------------- */

static dp_doc_pair *map_pair(dp_doc_node *m, const char *key) {
        if (!m || m->type != DP_DOC_MAP) return NULL;
        for (size_t i = 0; i < m->n; i++)
                if (streq(m->pairs[i].key, key)) return &m->pairs[i];
        return NULL;
}

/* Set spec.pool.generation (the pair must exist: our encoder writes it). */
static int set_generation(dp_doc_set *set, dp_doc_node *spec, int64_t g) {
        dp_doc_pair *p = map_pair(dp_doc_get(spec, "pool"), "generation");
        if (!p) return -EINVAL;
        p->value = dp_doc_new_int(set, g);
        return p->value ? 0 : -ENOMEM;
}

static char *emit_compact(const dp_doc_node *n) {
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_doc_emit(&sb, n, DP_DOC_JSON_COMPACT);
        dp_strbuf_putc(&sb, 0);
        return dp_strbuf_steal(&sb);
}

/* The spec with its generation zeroed, for comparisons; also the pool
 * generation it had. */
static int spec_norm(dp_doc_set *set, dp_doc_node *spec, char **ret, int64_t *ret_gen) {
        dp_doc_node *g = dp_doc_get(dp_doc_get(spec, "pool"), "generation");
        int64_t gen = 0;
        if (!g || dp_doc_get_int64(g, &gen, NULL) < 0) return -EINVAL;
        int r = set_generation(set, spec, 0);
        if (r < 0) return r;
        char *t = emit_compact(spec);
        if (!t) return -ENOMEM;
        *ret = t;
        if (ret_gen) *ret_gen = gen;
        return 0;
}

static void want_clear(dp_kube_slices *s) {
        for (size_t i = 0; i < s->n_want; i++)
                dp_free_many(s->want[i].name, s->want[i].text, s->want[i].norm);
        free(s->want);
        s->want = NULL;
        s->n_want = 0;
}

static void have_clear(dp_kube_slices *s) {
        for (size_t i = 0; i < s->n_have; i++)
                dp_free_many(s->have[i].name, s->have[i].rv, s->have[i].norm);
        free(s->have);
        s->have = NULL;
        s->n_have = 0;
}

static have_slice *have_find(dp_kube_slices *s, const char *name) {
        for (size_t i = 0; i < s->n_have; i++)
                if (streq(s->have[i].name, name)) return &s->have[i];
        return NULL;
}

static const want_slice *want_find(const dp_kube_slices *s, const char *name) {
        for (size_t i = 0; i < s->n_want; i++)
                if (streq(s->want[i].name, name)) return &s->want[i];
        return NULL;
}

/* Record what the server now holds for name (after a write or from a list). */
static int have_put(dp_kube_slices *s, const char *name, const char *rv, const char *norm, int64_t gen) {
        have_slice *h = have_find(s, name);
        if (!h) {
                have_slice *v = realloc(s->have, (s->n_have + 1) * sizeof *v);
                if (!v) return -ENOMEM;
                s->have = v;
                h = &v[s->n_have];
                *h = (have_slice){0};
                if (!(h->name = strdup(name))) return -ENOMEM;
                s->n_have++;
        }
        char *nrv = strdup(rv ? rv : ""), *nn = strdup(norm);
        if (!nrv || !nn) {
                dp_free_many(nrv, nn);
                return -ENOMEM;
        }
        dp_free_many(h->rv, h->norm);
        h->rv = nrv;
        h->norm = nn;
        h->gen = gen;
        return 0;
}

static void have_remove(dp_kube_slices *s, const char *name) {
        have_slice *h = have_find(s, name);
        if (!h) return;
        dp_free_many(h->name, h->rv, h->norm);
        *h = s->have[--s->n_have];
}

/* ---- requests ------------------------------------------------------------------- */

static void schedule(dp_kube_slices *s, uint64_t delay) {
        s->waiting = true;
        (void)dp_loop_source_set_time(s->timer, dp_loop_now() + delay + 1);
}

static void failed_with(dp_kube_slices *s, dp_kube_backoff *b, const char *what, long status, const char *body,
                        size_t len, const char *errmsg) {
        char msg[300];
        if (status)
                dp_kube_status_message(body, len, msg, sizeof msg);
        else
                snprintf(msg, sizeof msg, "%s", errmsg ? errmsg : "no answer");
        uint64_t wait = dp_kube_backoff_next(b);
        log_warning("API %s: %s; retrying in %llu ms", what, msg, (unsigned long long)(wait / 1000));
        s->listed = false;
        s->synced = false;
        schedule(s, wait);
}

static void failed(dp_kube_slices *s, const char *what, long status, const char *body, size_t len, const char *errmsg) {
        failed_with(s, &s->backoff, what, status, body, len, errmsg);
}

/* The Node's uid from a GET answer. Pure (see decode_list). NULL when it
 * has none (or OOM). */
static char *decode_node(const char *body, size_t len) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
        const char *uid = NULL;
        if (!set || dp_doc_parse(set, body, len, "node", NULL) < 0 || dp_doc_count(set) != 1 ||
            dp_doc_get_str(dp_doc_get(dp_doc_get(dp_doc_root(set, 0), "metadata"), "uid"), false, &uid, NULL) < 0)
                return NULL;
        return strdup(uid);
}

static void apply_node(dp_kube_slices *s, const char *uid) {
        if (!uid) {
                failed(s, "GET node: no metadata.uid in the answer", 0, "", 0, "bad answer");
                return;
        }
        free(s->node_uid);
        s->node_uid = strdup(uid);
        dp_kube_backoff_reset(&s->backoff);
        step(s);
}

/* A long answer goes to the offload thread (on_decoded applies it); the
 * publisher starts nothing else meanwhile. False: decode it here. */
static bool offload_answer(dp_kube_slices *s, uint64_t kind, const char *body, size_t len) {
        if (len <= INLINE_DECODE_MAX || s->inline_only ||
            dp_kube_offload_submit(s->offload, body, len, kind | ++s->answer_seq) < 0)
                return false;
        s->answer_pending = true;
        return true;
}

static void on_node(long status, const char *body, size_t len, const char *errmsg, void *ud) {
        dp_kube_slices *s = ud;
        s->req = NULL;
        if (status != 200) {
                char what[300];
                snprintf(what, sizeof what, "GET node %s (status %ld)", s->node, status);
                failed(s, what, status, body, len, errmsg);
                return;
        }
        if (offload_answer(s, NODE_TAG, body, len)) return;
        _cleanup_free_ char *uid = decode_node(body, len);
        apply_node(s, uid);
}

/* A LIST answer, decoded: every item with what the publisher keeps of it
 * (not yet filtered by node and driver). */
typedef struct list_item {
        char *name, *rv, *node, *driver, *norm; /* rv, node, driver: NULL when absent */
        int64_t gen;
} list_item;

typedef struct list_answer {
        char *rv; /* the list's resourceVersion, or NULL */
        list_item *items;
        size_t n;
} list_answer;

static void list_answer_free(list_answer *a) {
        if (!a) return;
        for (size_t i = 0; i < a->n; i++)
                dp_free_many(a->items[i].name, a->items[i].rv, a->items[i].node, a->items[i].driver, a->items[i].norm);
        dp_free_many(a->items, a->rv);
        free(a);
}

static char *strdup_or_null(const char *p, bool *oom) {
        char *r = p ? strdup(p) : NULL;
        if (p && !r) *oom = true;
        return r;
}

/* Parse a LIST answer. Pure (no state of the publisher): it runs on the
 * offload thread for long answers. NULL when it holds no items (or OOM). */
static list_answer *decode_list(const char *body, size_t len) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
        dp_doc_node *items = NULL;
        if (set && dp_doc_parse(set, body, len, "list", NULL) == 0 && dp_doc_count(set) == 1)
                items = dp_doc_get(dp_doc_root(set, 0), "items");
        if (!items || (items->type != DP_DOC_SEQ && !dp_doc_is_null(items))) return NULL;
        size_t n = items->type == DP_DOC_SEQ ? items->n : 0;
        list_answer *a = calloc(1, sizeof *a);
        if (!a || !(a->items = calloc(n + 1, sizeof *a->items))) {
                free(a);
                return NULL;
        }
        const char *lrv = NULL;
        bool oom = false;
        (void)dp_doc_get_str(dp_doc_get(dp_doc_get(dp_doc_root(set, 0), "metadata"), "resourceVersion"), true, &lrv,
                             NULL);
        a->rv = strdup_or_null(lrv && *lrv ? lrv : NULL, &oom);
        for (size_t i = 0; i < n && !oom; i++) {
                dp_doc_node *it = items->items[i], *meta = dp_doc_get(it, "metadata"), *spec = dp_doc_get(it, "spec");
                const char *name = NULL, *rv = NULL, *nn = NULL, *drv = NULL;
                if (dp_doc_get_str(dp_doc_get(meta, "name"), false, &name, NULL) < 0) continue;
                (void)dp_doc_get_str(dp_doc_get(meta, "resourceVersion"), true, &rv, NULL);
                (void)dp_doc_get_str(dp_doc_get(spec, "nodeName"), false, &nn, NULL);
                (void)dp_doc_get_str(dp_doc_get(spec, "driver"), false, &drv, NULL);
                list_item *li = &a->items[a->n++];
                li->name = strdup_or_null(name, &oom);
                li->rv = strdup_or_null(rv, &oom);
                li->node = strdup_or_null(nn, &oom);
                li->driver = strdup_or_null(drv, &oom);
                if (spec_norm(set, spec, &li->norm, &li->gen) < 0) li->norm = strdup(""); /* differs from anything */
                if (!li->norm) oom = true;
        }
        if (oom) {
                list_answer_free(a);
                return NULL;
        }
        return a;
}

/* What a LIST answer changes; on the loop. */
static void apply_list(dp_kube_slices *s, const list_answer *a) {
        if (!a) {
                failed(s, "LIST ResourceSlices: no items in the answer", 0, "", 0, "bad answer");
                return;
        }
        free(s->watch_rv);
        s->watch_rv = a->rv ? strdup(a->rv) : NULL;
        dp_kube_request_cancel(TAKE_PTR(s->watch)); /* restarted from the new list */
        have_clear(s);
        for (size_t i = 0; i < a->n; i++) {
                const list_item *li = &a->items[i];
                if (!li->node || !li->driver || !streq(li->node, s->node) || !streq(li->driver, s->driver))
                        continue; /* not ours */
                if (have_put(s, li->name, li->rv, li->norm, li->gen) < 0) {
                        failed(s, "LIST ResourceSlices", 0, "", 0, "out of memory");
                        return;
                }
        }
        s->listed = true;
        dp_kube_backoff_reset(&s->backoff);
        step(s);
}

static void on_list(long status, const char *body, size_t len, const char *errmsg, void *ud) {
        dp_kube_slices *s = ud;
        s->req = NULL;
        if (status != 200) {
                char what[64];
                snprintf(what, sizeof what, "LIST ResourceSlices (status %ld)", status);
                failed(s, what, status, body, len, errmsg);
                return;
        }
        if (offload_answer(s, LIST_TAG, body, len)) return;
        list_answer *a = decode_list(body, len);
        apply_list(s, a);
        list_answer_free(a);
}

static void on_write(long status, const char *body, size_t len, const char *errmsg, void *ud) {
        dp_kube_slices *s = ud;
        s->req = NULL;
        op_kind op = s->op;
        _cleanup_free_ char *name = TAKE_PTR(s->op_name);
        _cleanup_free_ char *sent = TAKE_PTR(s->op_norm);
        s->op = OP_NONE;
        static const char *const verbs[] = {[OP_CREATE] = "create", [OP_UPDATE] = "update", [OP_DELETE] = "delete"};
        char what[300];
        snprintf(what, sizeof what, "%s ResourceSlice %s (status %ld)", verbs[op], name, status);
        if (op == OP_DELETE && (status == 200 || status == 202 || status == 404)) {
                have_remove(s, name);
                s->writes++;
                log_info("ResourceSlice %s deleted", name);
                dp_kube_backoff_reset(&s->backoff);
                step(s);
                return;
        }
        if (status == 409 || (op == OP_UPDATE && status == 404)) {
                /* Someone else wrote it (or it is gone): read again, retry. */
                s->listed = false;
                if (++s->conflicts <= MAX_CONFLICT_RETRIES) {
                        log_info("API %s: conflict, reading the slices again", what);
                        step(s);
                } else {
                        s->conflicts = 0;
                        failed(s, what, status, body, len, errmsg);
                }
                return;
        }
        if (status != 200 && status != 201) {
                failed(s, what, status, body, len, errmsg);
                return;
        }
        _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
        const char *rv = NULL;
        if (set && dp_doc_parse(set, body, len, "answer", NULL) == 0 && dp_doc_count(set) == 1)
                (void)dp_doc_get_str(dp_doc_get(dp_doc_get(dp_doc_root(set, 0), "metadata"), "resourceVersion"), true,
                                     &rv, NULL);
        if (have_put(s, name, rv, sent ? sent : "", s->op_gen) < 0) {
                failed(s, what, 0, "", 0, "out of memory");
                return;
        }
        s->writes++;
        s->conflicts = 0;
        dp_kube_backoff_reset(&s->backoff);
        log_info("ResourceSlice %s %sd (generation %lld)", name, verbs[op], (long long)s->op_gen);
        step(s);
}

/* The body of a create or update: the desired object with the round's
 * generation, the Node as owner, and the resourceVersion it replaces. */
static char *build_body(dp_kube_slices *s, const want_slice *w, const char *rv) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
        if (!set || dp_doc_parse(set, w->text, strlen(w->text), "slice", NULL) < 0) return NULL;
        dp_doc_node *root = dp_doc_root(set, 0), *meta = dp_doc_get(root, "metadata");
        if (!meta || set_generation(set, dp_doc_get(root, "spec"), s->round_gen) < 0) return NULL;
        dp_doc_builder b = DP_DOC_BUILDER_INIT(set);
        dp_doc_node *owner = dp_doc_b_map(&b), *owners = dp_doc_b_seq(&b);
        dp_doc_b_put_str(&b, owner, "apiVersion", "v1");
        dp_doc_b_put_str(&b, owner, "kind", "Node");
        dp_doc_b_put_str(&b, owner, "name", s->node);
        dp_doc_b_put_str(&b, owner, "uid", s->node_uid);
        dp_doc_b_put_bool(&b, owner, "controller", true);
        dp_doc_b_push(&b, owners, owner);
        if (b.r < 0) return NULL;
        dp_doc_pair *p = map_pair(meta, "ownerReferences");
        if (p)
                p->value = owners;
        else if (dp_doc_map_add(set, meta, "ownerReferences", owners) < 0)
                return NULL;
        if (rv && *rv) {
                dp_doc_pair *q = map_pair(meta, "resourceVersion");
                dp_doc_node *v = dp_doc_new_str(set, rv);
                if (!v) return NULL;
                if (q)
                        q->value = v;
                else if (dp_doc_map_add(set, meta, "resourceVersion", v) < 0)
                        return NULL;
        }
        return emit_compact(root);
}

static int start_write(dp_kube_slices *s, op_kind op, const char *name, const want_slice *w, const have_slice *h) {
        _cleanup_free_ char *body = w ? build_body(s, w, h ? h->rv : NULL) : NULL;
        _cleanup_free_ char *ename = dp_kube_query_escape(name);
        _cleanup_free_ char *path = op == OP_CREATE ? strdup(SLICES_PATH)
                                    : ename         ? dp_asprintf("%s/%s", SLICES_PATH, ename)
                                                    : NULL;
        if (!path || (w && !body) || !(s->op_name = strdup(name)) || (w && !(s->op_norm = strdup(w->norm)))) {
                free(s->op_name);
                s->op_name = NULL;
                return -ENOMEM;
        }
        static const char *const methods[] = {[OP_CREATE] = "POST", [OP_UPDATE] = "PUT", [OP_DELETE] = "DELETE"};
        s->op = op;
        s->op_gen = s->round_gen;
        int r = dp_kube_request_start(s->client, methods[op], path, body, body ? strlen(body) : 0, 0, on_write, s,
                                      &s->req);
        if (r < 0) {
                s->op = OP_NONE;
                dp_free_many(s->op_name, s->op_norm);
                s->op_name = s->op_norm = NULL;
        }
        return r;
}

/* ---- the watch ------------------------------------------------------------------------ */

/* Runs from a watch line: records what changed and arms the timer; step()
 * does the rest on a later turn (a burst of events makes one round). */
static void kick(dp_kube_slices *s) {
        if (!s->waiting) {
                s->waiting = true;
                (void)dp_loop_source_set_time(s->timer, dp_loop_now() + 1);
        }
}

/* A watch event, decoded: what on_watch_event needs, none of the tree. */
typedef struct watch_event {
        char *type, *name, *rv; /* name, rv: NULL when absent */
        char *norm;             /* the spec, normalized; NULL: none usable */
        int64_t gen;
} watch_event;

static void watch_event_free(void *p) {
        watch_event *e = p;
        if (!e) return;
        dp_free_many(e->type, e->name, e->rv, e->norm);
        free(e);
}

/* Parse one watch line. Pure (no state of the publisher): it runs on the
 * offload thread for long lines. NULL when it is not an event (or OOM). */
static void *decode_event(const char *line, size_t len) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
        if (!set || dp_doc_parse(set, line, len, "watch event", NULL) < 0 || dp_doc_count(set) != 1) return NULL;
        dp_doc_node *ev = dp_doc_root(set, 0), *obj = dp_doc_get(ev, "object");
        dp_doc_node *meta = dp_doc_get(obj, "metadata"), *spec = dp_doc_get(obj, "spec");
        const char *type = NULL, *name = NULL, *rv = NULL;
        if (dp_doc_get_str(dp_doc_get(ev, "type"), false, &type, NULL) < 0) return NULL;
        (void)dp_doc_get_str(dp_doc_get(meta, "resourceVersion"), true, &rv, NULL);
        (void)dp_doc_get_str(dp_doc_get(meta, "name"), false, &name, NULL);
        watch_event *e = calloc(1, sizeof *e);
        if (!e) return NULL;
        e->type = strdup(type);
        e->name = name ? strdup(name) : NULL;
        e->rv = rv ? strdup(rv) : NULL;
        if (spec && !streq(type, "ERROR") && !streq(type, "BOOKMARK") && !streq(type, "DELETED") &&
            spec_norm(set, spec, &e->norm, &e->gen) < 0)
                e->norm = NULL;
        if (!e->type || (name && !e->name) || (rv && !e->rv)) {
                watch_event_free(e);
                return NULL;
        }
        return e;
}

/* What an event changes; on the loop. */
static void on_watch_event(dp_kube_slices *s, const watch_event *e) {
        if (streq(e->type, "ERROR")) { /* 410 Gone and the like: list again */
                s->watch_restart = true;
                kick(s);
                return;
        }
        const char *rv = e->rv, *name = e->name;
        if (rv && *rv) {
                char *n = strdup(rv);
                if (n) {
                        free(s->watch_rv);
                        s->watch_rv = n;
                }
        }
        if (streq(e->type, "BOOKMARK") || !name) return;
        have_slice *h = have_find(s, name);
        if (streq(e->type, "DELETED")) {
                if (!h) return;
                log_info("ResourceSlice %s deleted by someone else: publishing it again", name);
                have_remove(s, name);
                s->synced = false;
                kick(s);
                return;
        }
        if (h && rv && streq(h->rv, rv)) return; /* our own write, already recorded */
        if (!e->norm) return;
        if (h && streq(h->norm, e->norm) && h->gen == e->gen) { /* ours, seen before its answer */
                char *n = rv ? strdup(rv) : NULL;
                if (n) {
                        free(h->rv);
                        h->rv = n;
                }
                return;
        }
        if (!h && s->op == OP_CREATE && s->op_name && streq(s->op_name, name)) return; /* our create in flight */
        if (h) log_info("ResourceSlice %s changed by someone else: publishing ours again", name);
        if (have_put(s, name, rv, e->norm, e->gen) < 0) s->listed = false;
        s->synced = false;
        kick(s);
}

static void on_watch_line(const char *line, size_t len, void *ud) {
        dp_kube_slices *s = ud;
        if (len > INLINE_DECODE_MAX && !s->inline_only && s->watch &&
            dp_kube_offload_submit(s->offload, line, len, s->watch_tag) == 0) {
                /* the next lines wait for this one (on_decoded) */
                dp_kube_request_hold(s->watch, true);
                return;
        }
        watch_event *e = decode_event(line, len);
        if (e) on_watch_event(s, e);
        watch_event_free(e);
}

/* The offload thread's work, by its tag: a watch line, a LIST answer or
 * the Node. */
static void *decode_any(const char *data, size_t len, uint64_t tag) {
        if (tag & LIST_TAG) return decode_list(data, len);
        if (tag & NODE_TAG) return decode_node(data, len);
        return decode_event(data, len);
}

static void free_any(void *p, uint64_t tag) {
        if (tag & LIST_TAG)
                list_answer_free(p);
        else if (tag & NODE_TAG)
                free(p);
        else
                watch_event_free(p);
}

/* A long line decoded on the offload thread: apply it if its watch is the
 * current one, and let the watch go on. */
static void on_decoded(void *result, uint64_t tag, void *ud) {
        dp_kube_slices *s = ud;
        if (tag & (LIST_TAG | NODE_TAG)) {
                bool current = (tag & ~(LIST_TAG | NODE_TAG)) == s->answer_seq && s->answer_pending;
                if (current) s->answer_pending = false;
                if (current && (tag & LIST_TAG)) apply_list(s, result);
                if (current && (tag & NODE_TAG)) apply_node(s, result);
                free_any(result, tag);
                return;
        }
        if (s->watch && tag == s->watch_tag) {
                if (result) on_watch_event(s, result);
                dp_kube_request_hold(s->watch, false);
        }
        watch_event_free(result);
}

static void on_watch_end(long status, const char *body, size_t len, const char *errmsg, void *ud) {
        dp_kube_slices *s = ud;
        s->watch = NULL;
        if (status == 200) { /* the server's timeout: watch again from where we are */
                dp_kube_backoff_reset(&s->watch_backoff);
                kick(s);
                return;
        }
        char what[64];
        snprintf(what, sizeof what, "WATCH ResourceSlices (status %ld)", status);
        if (s->req) { /* a write is in flight: its answer drives the next step */
                log_warning("API %s: %s; listing again after the write in flight", what,
                            status   ? "error answer"
                            : errmsg ? errmsg
                                     : "no answer");
                s->listed = false;
                return;
        }
        /* lists again after the watch's own backoff */
        failed_with(s, &s->watch_backoff, what, status, body, len, errmsg);
}

static void start_watch(dp_kube_slices *s) {
        if (s->watch || !s->watch_rv) return;
        _cleanup_free_ char *fs = dp_asprintf("spec.nodeName=%s,spec.driver=%s", s->node, s->driver);
        _cleanup_free_ char *efs = fs ? dp_kube_query_escape(fs) : NULL;
        _cleanup_free_ char *erv = dp_kube_query_escape(s->watch_rv);
        _cleanup_free_ char *path =
                efs && erv ? dp_asprintf("%s?fieldSelector=%s&watch=true&resourceVersion=%s&allowWatchBookmarks=true"
                                         "&timeoutSeconds=300",
                                         SLICES_PATH, efs, erv)
                           : NULL;
        s->watch_tag++; /* a long line of an earlier watch still decoding is dropped */
        int r = path ? dp_kube_stream_start(s->client, path, 330000, on_watch_line, on_watch_end, s, &s->watch)
                     : -ENOMEM;
        if (r < 0)
                log_warning("API WATCH ResourceSlices: %s; changes by others are seen at the next list", strerror(-r));
}

/* ---- the state machine ------------------------------------------------------------- */

static bool differs(const dp_kube_slices *s) {
        for (size_t i = 0; i < s->n_want; i++) {
                const have_slice *h = have_find((dp_kube_slices *)s, s->want[i].name);
                if (!h || !streq(h->norm, s->want[i].norm)) return true;
        }
        for (size_t i = 0; i < s->n_have; i++)
                if (!want_find(s, s->have[i].name) || s->have[i].gen != s->have[0].gen) return true;
        return false;
}

static void step(dp_kube_slices *s) {
        if (s->req || s->waiting || s->answer_pending) return;
        if (s->watch_restart) {
                s->watch_restart = false;
                s->listed = false;
                dp_kube_request_cancel(TAKE_PTR(s->watch));
        }
        int r = 0;
        if (!s->node_uid) {
                _cleanup_free_ char *en = dp_kube_query_escape(s->node);
                _cleanup_free_ char *path = en ? dp_asprintf("/api/v1/nodes/%s", en) : NULL;
                r = path ? dp_kube_request_start(s->client, "GET", path, NULL, 0, 0, on_node, s, &s->req) : -ENOMEM;
        } else if (!s->listed) {
                _cleanup_free_ char *fs = dp_asprintf("spec.nodeName=%s,spec.driver=%s", s->node, s->driver);
                _cleanup_free_ char *efs = fs ? dp_kube_query_escape(fs) : NULL;
                _cleanup_free_ char *path = efs ? dp_asprintf("%s?fieldSelector=%s", SLICES_PATH, efs) : NULL;
                r = path ? dp_kube_request_start(s->client, "GET", path, NULL, 0, 0, on_list, s, &s->req) : -ENOMEM;
        } else {
                if (!s->round_gen) {
                        if (!differs(s)) {
                                if (s->n_have) s->gen = DP_MAX(s->gen, s->have[0].gen);
                                if (!s->synced)
                                        log_info("ResourceSlices of %s in sync (generation %lld, %zu slice(s))",
                                                 s->node, (long long)s->gen, s->n_want);
                                s->synced = true;
                                start_watch(s);
                                return;
                        }
                        int64_t g = s->gen;
                        for (size_t i = 0; i < s->n_have; i++)
                                g = DP_MAX(g, s->have[i].gen);
                        s->round_gen = g + 1;
                        s->synced = false;
                }
                for (size_t i = 0; i < s->n_want && !s->req; i++) {
                        const want_slice *w = &s->want[i];
                        const have_slice *h = have_find(s, w->name);
                        if (!h)
                                r = start_write(s, OP_CREATE, w->name, w, NULL);
                        else if (h->gen != s->round_gen || !streq(h->norm, w->norm))
                                r = start_write(s, OP_UPDATE, w->name, w, h);
                        if (r < 0) break;
                }
                for (size_t i = 0; i < s->n_have && !s->req && r >= 0; i++)
                        if (!want_find(s, s->have[i].name)) r = start_write(s, OP_DELETE, s->have[i].name, NULL, NULL);
                if (!s->req && r >= 0) {
                        s->gen = s->round_gen;
                        s->round_gen = 0;
                        s->synced = true;
                        log_info("ResourceSlices of %s published: generation %lld, %zu slice(s)", s->node,
                                 (long long)s->gen, s->n_want);
                        start_watch(s);
                        return;
                }
        }
        if (r < 0) failed(s, "request", 0, "", 0, strerror(-r));
}

static int on_timer(dp_loop_source *src, uint64_t now, void *ud) {
        dp_kube_slices *s = ud;
        s->waiting = false;
        step(s);
        return 0;
}

/* ---- public -------------------------------------------------------------------------- */

int dp_kube_slices_new(dp_kube_client *c, const char *node, const char *driver, dp_kube_slices **ret) {
        assert_return(c && node && driver && ret, -EINVAL);
        _cleanup_(dp_kube_slices_freep) dp_kube_slices *s = calloc(1, sizeof *s);
        if (!s) return -ENOMEM;
        s->client = c;
        s->backoff = (dp_kube_backoff)DP_KUBE_BACKOFF_INIT;
        s->watch_backoff = (dp_kube_backoff)DP_KUBE_BACKOFF_INIT;
        s->node = strdup(node);
        s->driver = strdup(driver);
        int r = s->node && s->driver ? dp_loop_add_timer(dp_kube_client_loop(c), 0, on_timer, s, &s->timer) : -ENOMEM;
        if (r >= 0) r = dp_kube_offload_new(dp_kube_client_loop(c), decode_any, on_decoded, free_any, s, &s->offload);
        if (r < 0) return r;
        *ret = TAKE_PTR(s);
        return 0;
}

dp_kube_slices *dp_kube_slices_free(dp_kube_slices *s) {
        if (!s) return NULL;
        dp_kube_request_cancel(s->req);
        dp_kube_request_cancel(s->watch);
        dp_kube_offload_free(s->offload);
        dp_loop_source_free(s->timer);
        free(s->watch_rv);
        want_clear(s);
        have_clear(s);
        dp_free_many(s->node, s->driver, s->node_uid, s->op_name, s->op_norm);
        free(s);
        return NULL;
}

int dp_kube_slices_set(dp_kube_slices *s, const char *const *json, size_t n) {
        assert_return(s && (json || !n), -EINVAL);
        want_slice *v = calloc(n + 1, sizeof *v);
        if (!v) return -ENOMEM;
        int r = 0;
        for (size_t i = 0; i < n && r >= 0; i++) {
                _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
                if (!set) {
                        r = -ENOMEM;
                        break;
                }
                dp_doc_node *root = NULL, *spec = NULL;
                const char *name = NULL;
                if (dp_doc_parse(set, json[i], strlen(json[i]), "slice", NULL) < 0 || dp_doc_count(set) != 1 ||
                    !(root = dp_doc_root(set, 0)) || !(spec = dp_doc_get(root, "spec")) ||
                    dp_doc_get_str(dp_doc_get(dp_doc_get(root, "metadata"), "name"), false, &name, NULL) < 0) {
                        r = -EINVAL;
                        break;
                }
                v[i].name = strdup(name);
                v[i].text = strdup(json[i]);
                if (!v[i].name || !v[i].text) r = -ENOMEM;
                if (r >= 0) r = spec_norm(set, spec, &v[i].norm, NULL);
        }
        bool same = r >= 0 && n == s->n_want;
        for (size_t i = 0; same && i < n; i++)
                same = streq(v[i].name, s->want[i].name) && streq(v[i].norm, s->want[i].norm);
        dp_kube_slices tmp = {.want = v, .n_want = n};
        if (r < 0 || same) {
                want_clear(&tmp);
                return r;
        }
        want_clear(s);
        s->want = v;
        s->n_want = n;
        s->round_gen = 0; /* a change mid-round starts a new generation */
        s->synced = false;
        step(s);
        return 1;
}

void dp_kube_slices_set_backoff(dp_kube_slices *s, uint64_t first_usec, uint64_t max_usec) {
        if (!s) return;
        s->backoff.first_usec = s->watch_backoff.first_usec = first_usec;
        s->backoff.max_usec = s->watch_backoff.max_usec = max_usec;
}
bool dp_kube_slices_synced(const dp_kube_slices *s) { return s && s->synced; }
int64_t dp_kube_slices_generation(const dp_kube_slices *s) { return s ? s->gen : 0; }
uint64_t dp_kube_slices_writes(const dp_kube_slices *s) { return s ? s->writes : 0; }
bool dp_kube_slices_watching(const dp_kube_slices *s) { return s && s->watch; }

void dp_kube_slices_inject(dp_kube_slices *s, int what, long status, const char *body, size_t len) {
        if (!s || !body) return;
        s->inline_only = true;
        s->answer_pending = false;
        dp_kube_request_cancel(TAKE_PTR(s->req));
        dp_free_many(s->op_name, s->op_norm);
        s->op_name = s->op_norm = NULL;
        s->op = OP_NONE;
        s->waiting = false; /* the loop does not run: no backoff to wait out */
        switch (what) {
        case 0: on_node(status, body, len, NULL, s); break;
        case 1: on_list(status, body, len, NULL, s); break;
        case 2:
                if (!s->n_want) return;
                s->op = OP_UPDATE;
                s->op_name = strdup(s->want[0].name);
                s->op_norm = strdup(s->want[0].norm);
                if (!s->op_name || !s->op_norm) {
                        dp_free_many(s->op_name, s->op_norm);
                        s->op_name = s->op_norm = NULL;
                        s->op = OP_NONE;
                        return;
                }
                on_write(status, body, len, NULL, s);
                break;
        default: on_watch_line(body, len, s); break;
        }
}
