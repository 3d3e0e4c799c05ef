/* SPDX-License-Identifier: Apache-2.0
 * shape.c — claim shapes and selector checks for callers that remember
 * outcomes per shape (shape.h). */
#include "alloc/internal.h"
#include "alloc/shape.h"

/* The one serialisation of a claim shape: dp_alloc_allocate_first_fit's
 * frontier key and the scheduler's memo key. */

/* Keys are made once per claim tried: bytes gather on the stack and go to
 * the strbuf in a few appends. */
typedef struct kbuf {
        dp_strbuf *out;
        size_t n;
        char buf[1024];
} kbuf;

static void kflush(kbuf *k) {
        dp_strbuf_append(k->out, k->buf, k->n);
        k->n = 0;
}

static void kput(kbuf *k, const char *p, size_t len) {
        if (k->n + len > sizeof(k->buf)) {
                kflush(k);
                if (len > sizeof(k->buf)) {
                        dp_strbuf_append(k->out, p, len);
                        return;
                }
        }
        memcpy(k->buf + k->n, p, len);
        k->n += len;
}

static void put_str(kbuf *b, const char *s) {
        if (!s) s = "\x01";
        kput(b, s, strlen(s));
        kput(b, "\x02", 1);
}

/* hot path: one per field of every claim tried, so no printf */
static void put_u64(kbuf *b, uint64_t v) {
        char buf[20];
        size_t n = 0;
        do {
                buf[sizeof(buf) - 1 - n++] = "0123456789abcdef"[v & 15];
                v >>= 4;
        } while (v);
        buf[sizeof(buf) - 1 - n++] = '\x02';
        kput(b, buf + sizeof(buf) - n, n);
}

static void put_q(kbuf *b, __int128 v) {
        put_u64(b, (uint64_t)(v >> 64));
        put_u64(b, (uint64_t)v);
}

static void put_toleration(kbuf *b, const dp_alloc_toleration *t) {
        put_str(b, t->key);
        put_str(b, t->op);
        put_str(b, t->value);
        put_str(b, t->effect);
}

static void put_subrequest(kbuf *b, const dp_alloc_subrequest *sr) {
        put_str(b, sr->name);
        put_u64(b, sr->class_missing);
        put_u64(b, sr->n_class_selectors);
        for (size_t j = 0; j < sr->n_class_selectors; j++) put_u64(b, sr->class_selectors[j]);
        put_u64(b, sr->n_selectors);
        for (size_t j = 0; j < sr->n_selectors; j++) put_u64(b, sr->selectors[j]);
        put_u64(b, sr->all);
        put_u64(b, (uint64_t)sr->count);
        put_u64(b, sr->admin_access);
        put_u64(b, sr->n_tolerations);
        for (size_t j = 0; j < sr->n_tolerations; j++) put_toleration(b, &sr->tolerations[j]);
        put_u64(b, sr->n_capacity);
        for (size_t j = 0; j < sr->n_capacity; j++) {
                put_str(b, sr->capacity[j].name);
                put_q(b, sr->capacity[j].value);
        }
}

static void put_request(kbuf *b, const dp_alloc_request *r) {
        put_str(b, r->name);
        put_u64(b, r->first_available);
        put_u64(b, r->n_subs);
        for (size_t k = 0; k < r->n_subs; k++) put_subrequest(b, &r->subs[k]);
}

static void put_constraint(kbuf *b, const dp_alloc_constraint *ct) {
        put_str(b, ct->match_attribute);
        put_str(b, ct->distinct_attribute);
        put_u64(b, ct->n_requests);
        for (size_t j = 0; j < ct->n_requests; j++) put_str(b, ct->requests[j]);
}

/* Every field of the claims that the outcome of an allocation depends on,
 * level by level, counts before lists. */
static void shape(const dp_alloc_claim *const *claims, size_t n, kbuf *b) {
        put_u64(b, n);
        for (size_t c = 0; c < n; c++) {
                const dp_alloc_claim *cl = claims[c];
                put_u64(b, cl->admin_access_allowed);
                put_u64(b, cl->n_requests);
                for (size_t i = 0; i < cl->n_requests; i++) put_request(b, &cl->requests[i]);
                put_u64(b, cl->n_constraints);
                for (size_t k = 0; k < cl->n_constraints; k++) put_constraint(b, &cl->constraints[k]);
        }
}

void dp_alloc_claims_shape(const dp_alloc_claim *const *claims, size_t n_claims, dp_strbuf *out) {
        kbuf k; /* buf is written before read: not cleared */
        k.out = out;
        k.n = 0;
        shape(claims, n_claims, &k);
        kflush(&k);
}

void dp_alloc_claims_reason_key(const dp_alloc_claim *const *claims, size_t n_claims, dp_strbuf *out) {
        kbuf kb; /* buf is written before read: not cleared */
        kb.out = out;
        kb.n = 0;
        shape(claims, n_claims, &kb);
        for (size_t c = 0; c < n_claims; c++) {
                const dp_alloc_claim *cl = claims[c];
                /* as search.c's setup(): the fewest devices the claim can
                 * take; past the cap the reason names the claim */
                uint64_t lower = 0;
                for (size_t i = 0; i < cl->n_requests; i++) {
                        const dp_alloc_request *r = &cl->requests[i];
                        uint64_t low = UINT32_MAX;
                        for (size_t k = 0; k < r->n_subs; k++) {
                                const dp_alloc_subrequest *sr = &r->subs[k];
                                uint64_t need = sr->all ? 1
                                                : sr->count <= 0 ? 1
                                                : sr->count > DP_ALLOC_RESULTS_MAX + 1 ? DP_ALLOC_RESULTS_MAX + 1
                                                                                        : (uint64_t)sr->count;
                                if (need < low) low = need;
                                put_str(&kb, sr->device_class);
                        }
                        lower += low;
                }
                if (n_claims > 1 || lower > DP_ALLOC_RESULTS_MAX) {
                        put_str(&kb, cl->ns);
                        put_str(&kb, cl->name);
                }
        }
        kflush(&kb);
}

/* As search.c's selectable(): class selectors, then the request's, the
 * first false one ending the walk. 1 no error on any device, 0 one. */
static int sub_infallible(dp_alloc_snapshot *s, const dp_alloc_subrequest *sr) {
        for (size_t i = 0; i < sr->n_class_selectors; i++)
                if (sr->class_selectors[i] >= s->n_sels) return 0;
        for (size_t i = 0; i < sr->n_selectors; i++)
                if (sr->selectors[i] >= s->n_sels) return 0;
        dp_error e; /* set only on failure: not cleared per device */
        for (size_t dev = 0; dev < s->n_devs; dev++) {
                int r = 1;
                for (size_t i = 0; i < sr->n_class_selectors + sr->n_selectors && r > 0; i++) {
                        uint32_t id = i < sr->n_class_selectors ? sr->class_selectors[i]
                                                                : sr->selectors[i - sr->n_class_selectors];
                        e.code = 0;
                        r = snap_eval_selector(s, id, (uint32_t)dev, &e);
                }
                if (r == -ENOMEM) return r;
                if (r < 0) return 0;
        }
        return 1;
}

int dp_alloc_selectors_infallible(dp_alloc_snapshot *s, const dp_alloc_claim *const *claims, size_t n_claims) {
        _cleanup_free_ dp_error *e = calloc(1, sizeof(*e));
        if (!e) return -ENOMEM;
        if (dp_alloc_freeze(s, e) < 0) return 0;
        for (size_t c = 0; c < n_claims; c++)
                for (size_t i = 0; i < claims[c]->n_requests; i++) {
                        const dp_alloc_request *r = &claims[c]->requests[i];
                        for (size_t k = 0; k < r->n_subs; k++) {
                                int q = sub_infallible(s, &r->subs[k]);
                                if (q <= 0) return q;
                        }
                }
        return 1;
}
