/* SPDX-License-Identifier: Apache-2.0
 * hall.c — the matching bound, checked once before the search.
 *
 * Every request of the call needs k devices of its own (at least the smallest
 * count among its firstAvailable entries), from the union of its entries'
 * candidates, and no device serves two requests unless it allows multiple
 * allocations. That is a bipartite b-matching of requests (demand k) to
 * devices (capacity 1); when its maximum falls short, Hall's condition names a
 * set of requests that together need more devices than all of them can reach,
 * and no combination the search could try exists. The plain search learns
 * that only by trying every way of filling the other requests first (4
 * flexible requests, then 9 that fit only 8 devices: 50,000,000 steps and
 * upstream's 10-second timeout); the matching answers it in microseconds.
 *
 * The bound is a relaxation, so it only ever fails calls that have no
 * solution: constraints, counters and capacities are left out, requests that
 * could take a shared device (allowMultipleAllocations) or that have an
 * allocationMode All entry are left out. It stands aside where the plain
 * search would stop with an error before finding out (a selector that failed
 * at run time on a candidate; an All request under a constraint, whose
 * broken constraint is an error of the claim), so errors are reported as
 * before. A request short on its own is left to the search too: its own
 * reason ("needs 2 devices, 1 of 8 usable") says more.
 */
#include "alloc/search.h"

#define NAMES_MAX 12 /* requests and devices named in the reason */

typedef struct hall {
        search *st;
        uint32_t *need;   /* per request: devices still to match (0: left out) */
        uint32_t *owner;  /* per local device: request index + 1, 0 free */
        uint32_t *seen;   /* per local device: epoch of the last visit */
        uint32_t *rseen;  /* per request: epoch of the last visit */
        uint32_t *devs;   /* per local device: the device id */
        uint32_t n_local, epoch;
        uint64_t work; /* candidate entries looked at */
} hall;

/* The node-local index of device dev, kept in the snapshot's per-device
 * stamp and scratch arrays (free before the search starts). */
static uint32_t local_of(hall *h, uint32_t dev) {
        dp_alloc_snapshot *s = h->st->s;
        if (s->dev_stamp[dev] != s->dev_epoch) {
                s->dev_stamp[dev] = s->dev_epoch;
                s->scratch[dev] = h->n_local;
                h->devs[h->n_local++] = dev;
        }
        return s->scratch[dev];
}

/* Kuhn's augmenting path from request r: true when r got one more device. */
static bool augment(hall *h, uint32_t r) {
        rq *q = &h->st->rqs[r];
        h->rseen[r] = h->epoch;
        for (uint32_t sub = 0; sub < q->r->n_subs && sub < DP_ALLOC_FIRST_AVAILABLE_MAX; sub++) {
                const cand_list *L = &q->subs[sub];
                if (sub_blocked(q, &q->r->subs[sub])) continue;
                h->work += L->n;
                for (size_t j = 0; j < L->n; j++) {
                        /* taken earlier in the branch (none shared here) */
                        if (h->st->s->devs[L->devs[j]].attempt) continue;
                        uint32_t v = local_of(h, L->devs[j]);
                        if (h->seen[v] == h->epoch) continue;
                        h->seen[v] = h->epoch;
                        if (h->owner[v] == 0 || augment(h, h->owner[v] - 1)) {
                                h->owner[v] = r + 1;
                                return true;
                        }
                }
        }
        return false;
}

/* How many devices, not taken earlier in the branch, the entries of q reach. */
static uint32_t union_size(search *st, const rq *q) {
        dp_alloc_snapshot *s = st->s;
        uint32_t n = 0;
        if (++s->dev_epoch == 0) {
                memset(s->dev_stamp, 0, (s->n_devs + 1) * sizeof(uint32_t));
                s->dev_epoch = 1;
        }
        for (uint32_t sub = 0; sub < q->r->n_subs && sub < DP_ALLOC_FIRST_AVAILABLE_MAX; sub++) {
                const cand_list *L = &q->subs[sub];
                if (sub_blocked(q, &q->r->subs[sub])) continue;
                for (size_t j = 0; j < L->n; j++) {
                        uint32_t dev = L->devs[j];
                        if (s->devs[dev].attempt || s->dev_stamp[dev] == s->dev_epoch) continue;
                        s->dev_stamp[dev] = s->dev_epoch;
                        n++;
                }
        }
        return n;
}

/* Which requests take part, with their demand: 1 = all of them, 0 = the
 * bound stands aside (see the top of the file). */
static int demands(search *st, uint32_t from, uint32_t *need) {
        dp_alloc_snapshot *s = st->s;
        for (size_t i = from; i < st->n_rqs; i++) {
                rq *q = &st->rqs[i];
                uint32_t low = UINT32_MAX;
                bool out = false;
                for (uint32_t sub = 0; sub < q->r->n_subs && sub < DP_ALLOC_FIRST_AVAILABLE_MAX; sub++) {
                        const dp_alloc_subrequest *sr = &q->r->subs[sub];
                        int r = search_build_list(st, q, sub);
                        if (r < 0) return r;
                        const cand_list *L = &q->subs[sub];
                        if (sr->all && L->cmask) return 0;
                        /* upstream may stop at it with an error of the claim
                         * (an All request under constraints) before a shortage
                         * further on: the search must get there */
                        if (sr->all && st->claims[q->claim]->n_constraints) return 0;
                        if (sub_blocked(q, sr)) continue;
                        if (L->n_errors) return 0;
                        out |= sr->all;
                        for (size_t j = 0; j < L->n && !out; j++) out = s->devs[L->devs[j]].multi;
                        if (sub_need(sr) < low) low = sub_need(sr);
                }
                need[i] = out || low == UINT32_MAX ? 0 : low;
                if (need[i] && union_size(st, q) < need[i]) return 0; /* short alone: the search says it better */
        }
        return 1;
}

/* "requests a, b, c need 9 devices between them, ...: gpu-0, gpu-1": the
 * requests by name (their claim too when the call has several), the devices
 * in the node's search order. */
static void name_witness(search *st, const hall *h, uint32_t n_set, uint32_t total, uint32_t n_devs, dp_strbuf *out) {
        const dp_alloc_snapshot *s = st->s;
        const node *n = &s->nodes[st->node];
        uint32_t named = 0;
        dp_strbuf_puts(out, "requests ");
        for (size_t i = 0; i < st->n_rqs && named < NAMES_MAX; i++) {
                const rq *q = &st->rqs[i];
                if (h->rseen[i] != h->epoch) continue;
                if (named++) dp_strbuf_puts(out, ", ");
                if (st->n_claims > 1) dp_strbuf_printf(out, "%s/%s:", q->cl->ns ? q->cl->ns : "", q->cl->name);
                dp_strbuf_puts(out, q->r->name);
        }
        if (n_set > named) dp_strbuf_printf(out, " and %u more", n_set - named);
        dp_strbuf_printf(out, " need %u devices between them, no device serving two, but only %u devices match any of them",
                         total, n_devs);
        named = 0;
        for (size_t i = 0; i < n->n_devs && named < n_devs; i++) {
                uint32_t dev = n->devs[i];
                if (s->dev_stamp[dev] != s->dev_epoch || h->seen[s->scratch[dev]] != h->epoch) continue;
                if (named == NAMES_MAX) {
                        dp_strbuf_printf(out, " and %u more", n_devs - named);
                        break;
                }
                dp_strbuf_printf(out, "%s%s", named++ ? ", " : ": ", snap_str(s, s->devs[dev].name));
        }
}

/* The failed augmentation from r left its witness in the epoch marks: the
 * requests visited (S) reach only the devices visited (T), all held by S, and
 * S needs more than |T|. 1 = a set of two or more, claim_why written. */
static int witness(search *st, hall *h, uint32_t from, const uint32_t *demand) {
        uint32_t n_set = 0, total = 0, n_devs = 0;
        for (size_t i = 0; i < st->n_rqs; i++)
                if (h->rseen[i] == h->epoch) {
                        n_set++;
                        total += demand[i];
                }
        for (uint32_t v = 0; v < h->n_local; v++) n_devs += h->seen[v] == h->epoch;
        if (n_set < 2) return 0;
        st->s->stats.pruned++;
        if (from > 0) {
                /* deeper in the search: a branch cut, explained as one */
                why_rec w = {.kind = WHY_MATCHING, .a = n_devs, .b = total, .c = n_set};
                if (st->rqs[from].why.kind == WHY_NONE) st->rqs[from].why = w;
                return 1;
        }
        _cleanup_strbuf_ dp_strbuf msg = DP_STRBUF_INIT;
        name_witness(st, h, n_set, total, n_devs, &msg);
        st->claim_why = dp_strbuf_steal(&msg);
        if (!st->claim_why) return alloc_oom(st->err, "explaining the matching bound");
        return 1;
}

int search_hall_bound(search *st, uint32_t from) {
        dp_alloc_snapshot *s = st->s;
        if (st->n_rqs < from + 2 || st->claim_why) return 0;
        const node *n = &s->nodes[st->node];
        size_t nr = st->n_rqs, nd = n->n_devs + 1;
        if (!st->hall_mem) {
                st->hall_mem = malloc((3 * nr + 3 * nd) * sizeof(uint32_t));
                if (!st->hall_mem) return alloc_oom(st->err, "setting up the matching bound");
        }
        uint32_t *mem = st->hall_mem;
        memset(mem, 0, (3 * nr + 2 * nd) * sizeof(uint32_t));
        hall h = {.st = st, .need = mem, .rseen = mem + nr, .owner = mem + 3 * nr, .seen = mem + 3 * nr + nd,
                  .devs = mem + 3 * nr + 2 * nd};
        uint32_t *demand = mem + 2 * nr;
        int r = demands(st, from, h.need);
        if (r <= 0) return r;
        memcpy(demand, h.need, nr * sizeof(uint32_t));
        if (++s->dev_epoch == 0) {
                memset(s->dev_stamp, 0, (s->n_devs + 1) * sizeof(uint32_t));
                s->dev_epoch = 1;
        }
        for (uint32_t i = from; i < nr; i++)
                for (; h.need[i] > 0; h.need[i]--) {
                        h.epoch++;
                        if (!augment(&h, i)) return witness(st, &h, from, demand);
                }
        /* deeper in the search, the next check waits until the search has
         * done as much work as this one did for nothing (next_request) */
        st->hall_next = st->effort + h.work;
        return 0;
}
