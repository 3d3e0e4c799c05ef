/* SPDX-License-Identifier: Apache-2.0
 * search.c — the depth-first, first-fit search (upstream incubating order:
 * claims, requests, firstAvailable entries, device slots; pools sorted,
 * slices by name, devices in order; combinations, not permutations).
 *
 * Speed comes from cutting branches that provably hold no solution, so the
 * first solution found is the one the plain search would find:
 *   - candidates per (request, entry) are filtered once per call, selector
 *     results cached per snapshot;
 *   - before every slot the eligible devices are counted: fewer than still
 *     needed, no value class of a matchAttribute big enough, or fewer
 *     distinct values than a distinctAttribute needs, and the branch ends;
 *   - the requests still to come are checked together (their candidates'
 *     union must cover what they need).
 * Counters, capacities, constraints and groups are running totals undone on
 * every backtrack. */
#include <stdio.h>

#include "alloc/search.h"

static const dp_alloc_subrequest *cur_sub(const rq *q) { return &q->r->subs[q->sub]; }

uint32_t sub_need(const dp_alloc_subrequest *sr) {
        if (sr->count <= 0) return 1;
        return sr->count > DP_ALLOC_RESULTS_MAX + 1 ? DP_ALLOC_RESULTS_MAX + 1 : (uint32_t)sr->count;
}

static bool constraint_applies(const dp_alloc_constraint *c, const dp_alloc_request *r, const dp_alloc_subrequest *sr) {
        if (c->n_requests == 0) return true;
        size_t rl = strlen(r->name);
        for (size_t i = 0; i < c->n_requests; i++) {
                const char *n = c->requests[i];
                if (streq(n, r->name)) return true;
                if (r->first_available && sr->name && strncmp(n, r->name, rl) == 0 && n[rl] == '/' &&
                    streq(n + rl + 1, sr->name))
                        return true;
        }
        return false;
}

static bool tolerated(const dp_alloc_subrequest *sr, const taint_ent *t) {
        for (size_t i = 0; i < sr->n_tolerations; i++) {
                const dp_alloc_toleration *tl = &sr->tolerations[i];
                bool exists = tl->op && streq(tl->op, "Exists");
                if (tl->effect && tl->effect[0] && !streq(tl->effect, t->effect)) continue;
                if (tl->key && tl->key[0]) {
                        if (!streq(tl->key, t->key)) continue;
                } else if (!exists) {
                        continue;
                }
                if (exists || streq_ptr(tl->value ? tl->value : "", t->value ? t->value : "")) return true;
        }
        return false;
}

static bool all_taints_tolerated(const dp_alloc_snapshot *s, const device *d, const dp_alloc_subrequest *sr,
                                 uint32_t *ret_taint) {
        if (!d->has_blocking_taint) return true;
        for (uint32_t t = d->taint_off; t < d->taint_off + d->n_taints; t++)
                if (s->taints[t].blocking && !tolerated(sr, &s->taints[t])) {
                        if (ret_taint) *ret_taint = t;
                        return false;
                }
        return true;
}

/* 1, 0, or a negative errno (selector run-time error, err filled). */
static int selectable(dp_alloc_snapshot *s, const dp_alloc_subrequest *sr, uint32_t dev, int *ret_stage, dp_error *err) {
        for (size_t i = 0; i < sr->n_class_selectors; i++) {
                int r = snap_eval_selector(s, sr->class_selectors[i], dev, err);
                if (r <= 0) {
                        *ret_stage = 1;
                        return r;
                }
        }
        for (size_t i = 0; i < sr->n_selectors; i++) {
                int r = snap_eval_selector(s, sr->selectors[i], dev, err);
                if (r <= 0) {
                        *ret_stage = 2;
                        return r;
                }
        }
        return 1;
}

bool sub_blocked(const rq *q, const dp_alloc_subrequest *sr) {
        return sr->class_missing || (sr->admin_access && !q->cl->admin_access_allowed);
}

int search_build_list(search *st, rq *q, uint32_t sub) {
        cand_list *L = &q->subs[sub];
        if (L->built) return 0;
        dp_alloc_snapshot *s = st->s;
        const node *n = &s->nodes[st->node];
        const dp_alloc_subrequest *sr = &q->r->subs[sub];
        L->built = true;
        /* room for every device of the node, set aside by setup() */
        L->devs = st->cand + (size_t)(q - st->rqs) * DP_ALLOC_FIRST_AVAILABLE_MAX * (n->n_devs + 1) +
                  (size_t)sub * (n->n_devs + 1);
        const dp_alloc_claim *cl = q->cl;
        for (size_t c = 0; c < cl->n_constraints && c < 32; c++)
                if (constraint_applies(&cl->constraints[c], q->r, sr)) L->cmask |= 1u << c;
        if (sub_blocked(q, sr)) return 0;
        /* 2 KiB: cleared once, and again only after a selector failed */
        dp_error tmp;
        tmp.code = 0;
        tmp.msg[0] = 0;
        for (size_t i = 0; i < n->n_devs; i++) {
                uint32_t dev = n->devs[i];
                const device *d = &s->devs[dev];
                int stage = 0;
                L->n_total++;
                int r = selectable(s, sr, dev, &stage, &tmp);
                if (r == -ENOMEM) {
                        /* the selector's own message names device and expression */
                        if (st->err && tmp.code == -ENOMEM && tmp.msg[0]) *st->err = tmp;
                        return alloc_oom(st->err, "evaluating the selectors of request %s", q->r->name);
                }
                if (r < 0) {
                        L->n_errors++;
                        L->devs[L->n++] = dev | ERR_BIT;
                        tmp.code = 0;
                        tmp.msg[0] = 0;
                        continue;
                }
                if (r == 0) {
                        if (stage == 1) L->n_class++;
                        else L->n_sel++;
                        continue;
                }
                uint32_t t;
                bool tainted = !all_taints_tolerated(s, d, sr, &t);
                if (tainted && !sr->all) {
                        if (L->n_taint++ == 0) L->taint_dev = dev;
                        continue;
                }
                bool policy_ok = state_capacity_requested_exists(s, d, sr);
                bool exhausted = false;
                for (uint32_t c = d->cap_off; policy_ok && c < d->cap_off + d->n_caps; c++) {
                        __int128 amt;
                        if (!state_capacity_amount(&s->caps[c], sr, d->multi, &amt)) policy_ok = false;
                        else if (d->multi && s->caps[c].committed + amt > s->caps[c].spec.value)
                                exhausted = true;
                }
                if (!policy_ok) {
                        L->n_policy++;
                        continue;
                }
                /* Lists may be built mid-search: only committed state filters here.
                 * All mode, as upstream, lists every matching device but those
                 * whose capacity cannot take the request (a shared device with no
                 * room left is not part of "all"); a taken or tainted one is kept
                 * and then fails the request. */
                if (tainted && !exhausted) {
                        if (L->n_taint++ == 0) L->taint_dev = dev;
                        L->n_taint_kept++;
                        L->devs[L->n++] = dev | TAINT_BIT;
                        continue;
                }
                if ((!sr->all && !sr->admin_access && !d->multi && d->committed) || exhausted) {
                        L->n_in_use++;
                        if (d->holder != NONE_ID && L->n_holders < ELEMENTSOF(L->holders)) {
                                bool seen = false;
                                for (uint32_t h = 0; h < L->n_holders && !seen; h++)
                                        seen = L->holders[h] == d->holder ||
                                               streq(s->strs[L->holders[h]], s->strs[d->holder]);
                                if (!seen) L->holders[L->n_holders++] = d->holder;
                        }
                        continue;
                }
                L->devs[L->n++] = dev;
        }
        return 0;
}

/* A device that allows multiple allocations is never "in use": its capacity
 * decides, for adminAccess requests too (upstream). */
static bool in_use(const device *d, bool admin) {
        if (d->multi) return false;
        if (admin) return d->attempt > 0;
        return d->committed > 0 || d->attempt > 0;
}

static cstate *claim_cs(search *st, const rq *q, uint32_t c) { return &st->cs[st->cs_off[q->claim] + c]; }

/* Whether value v (of a device about to join) keeps constraint cs: match
 * wants a value every device has, distinct no value shared. Scalars compare
 * by id; list values (DRAListTypeAttributes) element by element. */
static why_kind constraint_refuses(const dp_alloc_snapshot *s, const cstate *cs, uint32_t v) {
        if (v == NONE_ID) return WHY_MISSING;
        uint32_t n = cs->n < ELEMENTSOF(cs->vals) ? cs->n : (uint32_t)ELEMENTSOF(cs->vals);
        if (cs->match) {
                if (cs->n == 0) return snap_value_is_list(s, v) && !snap_values_meet(s, v, v) ? WHY_MISSING : WHY_NONE;
                if (!cs->lists && !snap_value_is_list(s, v)) return cs->value != v ? WHY_MATCH : WHY_NONE;
                /* some element of the first value that every value has */
                const uint32_t *e;
                uint32_t ne;
                snap_value_elems(s, &cs->vals[0], &e, &ne);
                for (uint32_t k = 0; k < ne; k++) {
                        bool all = snap_values_meet(s, e[k], v);
                        for (uint32_t i = 1; i < n && all; i++) all = snap_values_meet(s, e[k], cs->vals[i]);
                        if (all) return WHY_NONE;
                }
                return WHY_MATCH;
        }
        if (snap_value_is_list(s, v) && !snap_values_meet(s, v, v)) return WHY_MISSING; /* empty list */
        for (uint32_t i = 0; i < n; i++)
                if (snap_values_meet(s, cs->vals[i], v)) return WHY_DISTINCT;
        return WHY_NONE;
}

/* The claim's constraints against one more device of request qi. */
static bool constraints_allow(search *st, uint32_t qi, uint32_t dev, why_rec *w) {
        dp_alloc_snapshot *s = st->s;
        rq *q = &st->rqs[qi];
        const device *d = &s->devs[dev];
        uint32_t mask = q->subs[q->sub].cmask;
        for (uint32_t c = 0; mask; c++, mask >>= 1) {
                if (!(mask & 1)) continue;
                cstate *cs = claim_cs(st, q, c);
                uint32_t v = cs->attr == NONE_ID ? NONE_ID : snap_device_attr(s, d, cs->attr);
                w->c = c;
                w->a = v;
                w->b = cs->value;
                why_kind k = constraint_refuses(s, cs, v);
                if (k != WHY_NONE) {
                        w->kind = k;
                        return false;
                }
        }
        return true;
}

static bool capacity_allows(search *st, uint32_t qi, uint32_t dev, why_rec *w) {
        dp_alloc_snapshot *s = st->s;
        const device *d = &s->devs[dev];
        const dp_alloc_subrequest *sr = cur_sub(&st->rqs[qi]);
        if (!d->multi) return true;
        for (uint32_t c = d->cap_off; c < d->cap_off + d->n_caps; c++) {
                __int128 amt;
                if (!state_capacity_amount(&s->caps[c], sr, true, &amt) ||
                    s->caps[c].consumed + amt > s->caps[c].spec.value) {
                        w->kind = WHY_CAPACITY;
                        w->a = c;
                        return false;
                }
        }
        return true;
}

/* Whether request qi may take one more device, dev: not in use, its shared
 * capacity and counters, the claim's constraints. For an All request, where a
 * broken constraint is an error of the claim, the order is upstream's
 * (allocateDevice): counters, then constraints, then consumable capacity, so
 * the same device gives the same verdict (seeds 23 and 1 of
 * tests/alloc/differential.py, docs/alloc.md). */
static bool can_place_ordered(search *st, uint32_t qi, uint32_t dev, bool all_mode, why_rec *w) {
        dp_alloc_snapshot *s = st->s;
        rq *q = &st->rqs[qi];
        const device *d = &s->devs[dev];
        bool admin = cur_sub(q)->admin_access;
        *w = (why_rec){.dev = dev};
        if (st->claim_devs[q->claim] >= DP_ALLOC_RESULTS_MAX) {
                w->kind = WHY_LIMIT;
                return false;
        }
        if (in_use(d, admin)) {
                /* only an All list keeps devices other claims hold (build_list) */
                w->kind = d->attempt ? WHY_IN_USE : WHY_HELD;
                return false;
        }
        if (!all_mode && !capacity_allows(st, qi, dev, w)) return false;
        if (!admin && d->committed + (d->attempt - d->attempt_admin) == 0 &&
            state_check_counters(s, dev, &w->fit) != FIT_OK) {
                w->kind = w->fit.kind == FIT_GROUPS ? WHY_GROUPS : WHY_COUNTER;
                return false;
        }
        if (!constraints_allow(st, qi, dev, w)) return false;
        return !all_mode || capacity_allows(st, qi, dev, w);
}

static bool can_place(search *st, uint32_t qi, uint32_t dev, why_rec *w) {
        return can_place_ordered(st, qi, dev, false, w);
}

static void place(search *st, uint32_t qi, uint32_t dev) {
        dp_alloc_snapshot *s = st->s;
        rq *q = &st->rqs[qi];
        const dp_alloc_subrequest *sr = cur_sub(q);
        device *d = &s->devs[dev];
        placement *p = &st->pl[st->n_pl];
        *p = (placement){.rq = qi, .dev = dev, .admin = sr->admin_access,
                         .amounts = st->amount_pool + st->n_pl * DP_ALLOC_RESULTS_MAX};
        st->n_pl++;
        p->first_share = !p->admin && d->committed + (d->attempt - d->attempt_admin) == 0;
        d->attempt++;
        if (p->admin) d->attempt_admin++;
        if (d->multi) {
                /* an adminAccess share takes capacity within the call too, it
                 * is not counted once allocated (commit skips it) */
                for (uint32_t c = d->cap_off; c < d->cap_off + d->n_caps && p->n_amounts < DP_ALLOC_RESULTS_MAX; c++) {
                        __int128 amt = 0;
                        (void)state_capacity_amount(&s->caps[c], sr, true, &amt);
                        s->caps[c].consumed += amt;
                        p->amounts[p->n_amounts++] = amt;
                }
        }
        if (p->first_share) state_charge_counters(s, dev, +1);
        uint32_t mask = q->subs[q->sub].cmask;
        for (uint32_t c = 0; mask; c++, mask >>= 1) {
                if (!(mask & 1)) continue;
                cstate *cs = claim_cs(st, q, c);
                uint32_t v = snap_device_attr(s, d, cs->attr);
                if (cs->match && cs->n == 0) cs->value = v;
                if (cs->n < ELEMENTSOF(cs->vals)) cs->vals[cs->n] = v;
                if (snap_value_is_list(s, v)) cs->lists++;
                cs->n++;
        }
        st->claim_devs[q->claim]++;
}

static void unplace_last(search *st) {
        dp_alloc_snapshot *s = st->s;
        placement *p = &st->pl[--st->n_pl];
        rq *q = &st->rqs[p->rq];
        device *d = &s->devs[p->dev];
        st->claim_devs[q->claim]--;
        uint32_t mask = q->subs[q->sub].cmask;
        for (uint32_t c = 0; mask; c++, mask >>= 1)
                if (mask & 1) {
                        cstate *cs = claim_cs(st, q, c);
                        cs->n--;
                        if (cs->n < ELEMENTSOF(cs->vals) && snap_value_is_list(s, cs->vals[cs->n])) cs->lists--;
                }
        if (p->first_share) state_charge_counters(s, p->dev, -1);
        for (uint32_t i = 0; i < p->n_amounts; i++) s->caps[d->cap_off + i].consumed -= p->amounts[i];
        d->attempt--;
        if (p->admin) d->attempt_admin--;
}

static void rollback_to(search *st, size_t mark) {
        while (st->n_pl > mark) unplace_last(st);
}

static void note(rq *q, const why_rec *w) {
        if (q->why.kind == WHY_NONE) q->why = *w;
}

static int tick(search *st) {
        st->effort++;
        st->s->stats.effort++;
        if (st->max_effort && st->effort > st->max_effort)
                return dp_error_set(st->err, -ETIME, "%s: allocation search gave up after %llu steps",
                                    st->s->strs[st->s->nodes[st->node].name], (unsigned long long)st->max_effort);
        return 0;
}

/* A selector failed on this device while building the list; now the search
 * has reached it, so the failure decides the call, as upstream. */
static int replay_error(search *st, rq *q, uint32_t dev) {
        int stage;
        int r = selectable(st->s, cur_sub(q), dev, &stage, st->err);
        return r < 0 ? r : 0;
}

static bool quick_eligible(search *st, const rq *q, uint32_t dev, bool admin) {
        const device *d = &st->s->devs[dev];
        if (in_use(d, admin)) return false;
        uint32_t mask = q->subs[q->sub].cmask;
        for (uint32_t c = 0; mask; c++, mask >>= 1) {
                if (!(mask & 1)) continue;
                const cstate *cs = &st->cs[st->cs_off[q->claim] + c];
                uint32_t v = cs->attr == NONE_ID ? NONE_ID : snap_device_attr(st->s, d, cs->attr);
                if (constraint_refuses(st->s, cs, v) != WHY_NONE) return false;
        }
        return true;
}

static int pruned(search *st, rq *q, why_kind k, uint32_t a, uint32_t b, uint32_t c) {
        why_rec w = {.kind = k, .a = a, .b = b, .c = c};
        note(q, &w);
        st->s->stats.pruned++;
        return 0;
}

static int counters_prune(search *st, rq *q, const uint32_t *el, uint32_t n_el, uint32_t n_err, uint32_t remaining) {
        dp_alloc_snapshot *s = st->s;
        if (++s->ctr_epoch == 0) {
                memset(s->ctr_stamp, 0, (s->n_ctrs + 1) * sizeof(uint32_t));
                s->ctr_epoch = 1;
        }
        size_t first = SIZE_MAX, last = 0;
        for (uint32_t j = 0; j < n_el; j++) {
                const device *d = &s->devs[el[j]];
                if (d->committed + (d->attempt - d->attempt_admin) > 0) continue; /* a further share charges nothing */
                for (uint32_t c = d->cons_off; c < d->cons_off + d->n_cons; c++) {
                        const cons_ent *ce = &s->cons[c];
                        for (uint32_t a = ce->amount_off; a < ce->amount_off + ce->n_amounts; a++) {
                                const amount_ent *am = &s->amounts[a];
                                if (am->counter == NONE_ID || am->amount <= 0) continue;
                                uint32_t k = am->counter;
                                if (s->ctr_stamp[k] != s->ctr_epoch) {
                                        s->ctr_stamp[k] = s->ctr_epoch;
                                        s->ctr_cnt[k] = 0;
                                        s->ctr_min[k] = am->amount;
                                        s->ctr_last[k] = UINT32_MAX;
                                        if (k < first) first = k;
                                        if (k > last) last = k;
                                }
                                if (s->ctr_last[k] == j) { /* a device counts once per counter */
                                        if (am->amount < s->ctr_min[k]) s->ctr_min[k] = am->amount;
                                        continue;
                                }
                                s->ctr_last[k] = j;
                                s->ctr_cnt[k]++;
                                if (am->amount < s->ctr_min[k]) s->ctr_min[k] = am->amount;
                        }
                }
        }
        for (size_t k = first; first != SIZE_MAX && k <= last; k++) {
                if (s->ctr_stamp[k] != s->ctr_epoch) continue;
                const counter *ct = &s->ctrs[k];
                __int128 avail = ct->value - ct->consumed;
                __int128 fit = avail < 0 ? 0 : avail / s->ctr_min[k];
                __int128 most = (__int128)(n_el - s->ctr_cnt[k]) + (fit < s->ctr_cnt[k] ? fit : s->ctr_cnt[k]) + n_err;
                if (most < remaining) {
                        why_rec w = {.kind = WHY_COUNTER_BOUND, .a = (uint32_t)most, .b = remaining, .c = (uint32_t)k};
                        note(q, &w);
                        s->stats.pruned++;
                        return 0;
                }
        }
        return 1;
}

/* A device whose groups clash with the devices already on one of its
 * counter sets (only when it would be charged now, as can_place checks). */
static bool groups_blocked(const dp_alloc_snapshot *s, uint32_t dev, fit_detail *fit) {
        const device *d = &s->devs[dev];
        if (d->committed + (d->attempt - d->attempt_admin) > 0) return false;
        return state_check_groups(s, dev, fit) != FIT_OK;
}

/* Is e held back by compatibility groups (never under admin access)? Such
 * devices are counted in *n, the first one kept in *w for the reason. */
static bool held_by_groups(const dp_alloc_snapshot *s, uint32_t e, bool admin, uint32_t *n, why_rec *w) {
        fit_detail fit;
        if (admin || !groups_blocked(s, e, &fit)) return false;
        if (!(*n)++) {
                w->dev = e;
                w->fit = fit;
        }
        return true;
}

/* Can request o end the search with an error of the claim (place_all: an
 * All entry whose claim has constraints)? */
static bool all_may_error(const search *st, const rq *o) {
        if (st->claims[o->claim]->n_constraints == 0) return false;
        for (uint32_t sub = 0; sub < o->r->n_subs && sub < DP_ALLOC_FIRST_AVAILABLE_MAX; sub++)
                if (o->r->subs[sub].all) return true;
        return false;
}

/* 1 = keep searching this branch, 0 = it cannot succeed, <0 error. */
static int prune(search *st, uint32_t qi, uint32_t remaining, size_t start, uint32_t *scratch) {
        dp_alloc_snapshot *s = st->s;
        rq *q = &st->rqs[qi];
        cand_list *L = &q->subs[q->sub];
        bool admin = cur_sub(q)->admin_access;
        if (L->n - start < remaining) return pruned(st, q, WHY_SHORT, (uint32_t)(L->n - start), remaining, 0);
        uint32_t n_el = 0, n_err = 0, n_blocked = 0;
        why_rec gw = {.kind = WHY_GROUPS};
        bool any_multi = false;
        for (size_t j = start; j < L->n; j++) {
                uint32_t e = L->devs[j];
                /* a device whose selector failed counts as usable: the plain
                 * search would reach it and fail with the error */
                if (e & ERR_BIT) {
                        n_err++;
                        continue;
                }
                if (!quick_eligible(st, q, e, admin)) continue;
                /* compatibility groups only get stricter deeper in the branch */
                if (held_by_groups(s, e, admin, &n_blocked, &gw)) continue;
                any_multi |= s->devs[e].multi;
                scratch[n_el++] = e;
        }
        if (n_el + n_err < remaining) {
                if (n_el + n_err + n_blocked < remaining) return pruned(st, q, WHY_SHORT, n_el, remaining, 0);
                /* the groups made the difference: say so, as trying them would */
                note(q, &gw);
                s->stats.pruned++;
                return 0;
        }
        /* shared counters: a k-subset can hold at most available / smallest
         * amount devices that draw on a counter, plus the ones that do not */
        if (!admin && remaining > 1) {
                int r = counters_prune(st, q, scratch, n_el, n_err, remaining);
                if (r <= 0) return r;
        }
        /* value classes (matchAttribute not yet fixed) and distinct values */
        uint32_t mask = L->cmask;
        for (uint32_t c = 0; mask && remaining > 1; c++, mask >>= 1) {
                if (!(mask & 1)) continue;
                cstate *cs = claim_cs(st, q, c);
                if (cs->match && cs->n > 0) continue;
                if (++s->epoch == 0) {
                        memset(s->stamp, 0, s->n_stamp * sizeof(uint32_t));
                        s->epoch = 1;
                }
                /* a list value counts in the class of each of its elements:
                 * devices that match share one, devices that are distinct
                 * take one each */
                uint32_t best = 0;
                for (uint32_t j = 0; j < n_el; j++) {
                        uint32_t v = snap_device_attr(s, &s->devs[scratch[j]], cs->attr);
                        const uint32_t *e;
                        uint32_t ne;
                        snap_value_elems(s, &v, &e, &ne);
                        for (uint32_t k = 0; k < ne; k++) {
                                if (e[k] >= s->n_stamp) continue;
                                if (s->stamp[e[k]] != s->epoch) {
                                        s->stamp[e[k]] = s->epoch;
                                        s->stamp_cnt[e[k]] = 0;
                                        if (!cs->match) best++;
                                }
                                if (cs->match && ++s->stamp_cnt[e[k]] > best) best = s->stamp_cnt[e[k]];
                        }
                }
                if (!cs->match && best > n_el) best = n_el;
                /* several shares of one multi-allocatable device may come from one
                 * request only once, so the counts above stay upper bounds */
                if (best + n_err < remaining)
                        return pruned(st, q, cs->match ? WHY_CLASS : WHY_VALUES, best, remaining, c);
        }
        /* the requests still to come, together */
        uint32_t total = remaining, uni = 0;
        bool later = false;
        if (++s->dev_epoch == 0) {
                memset(s->dev_stamp, 0, (s->n_devs + 1) * sizeof(uint32_t));
                s->dev_epoch = 1;
        }
        for (uint32_t j = 0; j < n_el; j++) {
                s->dev_stamp[scratch[j]] = s->dev_epoch;
                uni++;
        }
        for (size_t k = qi + 1; k < st->n_rqs; k++) {
                rq *o = &st->rqs[k];
                /* a later request none of whose entries can ever be met dooms
                 * every branch here (a missing class, too few candidates) */
                bool possible = false;
                for (uint32_t sub = 0; sub < o->r->n_subs && sub < DP_ALLOC_FIRST_AVAILABLE_MAX && !possible; sub++) {
                        const dp_alloc_subrequest *osr = &o->r->subs[sub];
                        if (sub_blocked(o, osr)) continue;
                        int r = search_build_list(st, o, sub);
                        if (r < 0) return r;
                        possible = osr->all ? o->subs[sub].n > 0 : o->subs[sub].n >= sub_need(osr);
                }
                if (!possible) return pruned(st, q, WHY_LATER, 0, 0, (uint32_t)k);
                /* upstream meets the requests in order: an All request whose
                 * claim has constraints may stop the whole search with an
                 * error of the claim (place_all) before a later request is
                 * found impossible, so nothing past it may prune this branch */
                if (all_may_error(st, o)) break;
                if (o->r->n_subs != 1 || o->r->subs[0].all) continue;
                int r = search_build_list(st, o, 0);
                if (r < 0) return r;
                o->sub = 0;
                uint32_t need = sub_need(&o->r->subs[0]), have = 0, oblocked = 0;
                why_rec ow = {.kind = WHY_GROUPS};
                bool oadmin = o->r->subs[0].admin_access;
                cand_list *OL = &o->subs[0];
                for (size_t j = 0; j < OL->n; j++) {
                        uint32_t e = OL->devs[j];
                        if (e & ERR_BIT) {
                                n_err++;
                                have++;
                                continue;
                        }
                        /* constraints and groups only get stricter deeper in the branch */
                        if (!quick_eligible(st, o, e, oadmin)) continue;
                        if (held_by_groups(s, e, oadmin, &oblocked, &ow)) continue;
                        have++;
                        any_multi |= s->devs[e].multi;
                        if (s->dev_stamp[e] != s->dev_epoch) {
                                s->dev_stamp[e] = s->dev_epoch;
                                uni++;
                        }
                }
                if (have < need && have + oblocked >= need) {
                        /* the groups made the difference for that request */
                        note(q, &ow);
                        s->stats.pruned++;
                        return 0;
                }
                if (have < need) return pruned(st, q, WHY_UNION, have, need, (uint32_t)k);
                total += need;
                later = true;
        }
        if (later && !any_multi && !n_err && uni < total) return pruned(st, q, WHY_UNION, uni, total, 0);
        return 1;
}

static int next_request(search *st, uint32_t qi);

static int fill(search *st, uint32_t qi, uint32_t slot, size_t start, uint32_t *scratch) {
        rq *q = &st->rqs[qi];
        const dp_alloc_subrequest *sr = cur_sub(q);
        uint32_t need = sub_need(sr);
        if (slot == need) return next_request(st, qi + 1);
        int r = tick(st);
        if (r < 0) return r;
        r = prune(st, qi, need - slot, start, scratch);
        if (r <= 0) return r;
        cand_list *L = &q->subs[q->sub];
        for (size_t j = start; j < L->n; j++) {
                uint32_t e = L->devs[j];
                if (e & ERR_BIT) {
                        r = replay_error(st, q, e & ~ERR_BIT);
                        if (r < 0) return r;
                        continue;
                }
                why_rec w;
                st->effort++;
                st->s->stats.effort++;
                if (!can_place(st, qi, e, &w)) {
                        note(q, &w);
                        continue;
                }
                place(st, qi, e);
                r = fill(st, qi, slot + 1, j + 1, scratch);
                if (r != 0) return r;
                unplace_last(st);
        }
        return 0;
}

static int all_constraint_error(search *st, rq *q, const why_rec *w) {
        q->why = *w;
        _cleanup_strbuf_ dp_strbuf msg = DP_STRBUF_INIT;
        char lb[400];
        explain_why(st, q, &msg);
        if (dp_strbuf_failed(&msg)) return alloc_oom(st->err, "explaining a broken constraint");
        return dp_error_set(st->err, -EDOM,
                            "%s: %s: allocationMode All cannot take every matching device: %s (an error of the claim, "
                            "as upstream: no later node is tried)",
                            st->s->strs[st->s->nodes[st->node].name], rq_label(st, q, lb, sizeof(lb)),
                            dp_strbuf_str(&msg));
}

static int place_all(search *st, uint32_t qi) {
        rq *q = &st->rqs[qi];
        cand_list *L = &q->subs[q->sub];
        const node *n = &st->s->nodes[st->node];
        if (n->n_bad_pools) return 0; /* explain.c names the pools */
        if (L->n == 0) {
                why_rec w = {.kind = WHY_ALL_EMPTY};
                note(q, &w);
                return 0;
        }
        size_t mark = st->n_pl;
        for (size_t j = 0; j < L->n; j++) {
                uint32_t e = L->devs[j];
                if (e & ERR_BIT) {
                        int r = replay_error(st, q, e & ~ERR_BIT);
                        if (r < 0) return r;
                        continue;
                }
                why_rec w;
                st->effort++;
                if (e & TAINT_BIT) {
                        w = (why_rec){.kind = WHY_TAINT, .dev = e & ~TAINT_BIT};
                        note(q, &w);
                        rollback_to(st, mark);
                        return 0;
                }
                if (!can_place_ordered(st, qi, e, true, &w)) {
                        if (w.kind == WHY_MATCH || w.kind == WHY_MISSING || w.kind == WHY_DISTINCT) {
                                /* upstream: a constraint that keeps a request from
                                 * getting all its devices is an error of the claim, not
                                 * "does not fit here"; the pod is not scheduled, no
                                 * later node is tried */
                                rollback_to(st, mark);
                                return all_constraint_error(st, q, &w);
                        }
                        note(q, &w);
                        rollback_to(st, mark);
                        return 0;
                }
                place(st, qi, e);
        }
        int r = next_request(st, qi + 1);
        if (r != 0) return r;
        rollback_to(st, mark);
        return 0;
}

/* The matching bound runs before the search (dp_alloc_allocate) and, once a
 * search has proved not to be quick, again before each later request: what
 * the earlier requests took may leave the rest unmatchable (4 flexible
 * requests that take H100s that 8 later requests need). A check that cuts
 * nothing sets the next one back by the work it did (st->hall_next), so the
 * bound never costs more than the search it rides on, whatever the node. */
#define HALL_DEEP_AFTER 256 /* steps */

static int next_request(search *st, uint32_t qi) {
        if (qi > st->deepest) st->deepest = qi;
        if (qi == st->n_rqs) return 1;
        rq *q = &st->rqs[qi];
        if (qi > 0 && st->effort >= HALL_DEEP_AFTER && st->effort >= st->hall_next) {
                int r = search_hall_bound(st, qi);
                if (r != 0) return r < 0 ? r : 0;
        }
        for (uint32_t sub = 0; sub < q->r->n_subs && sub < DP_ALLOC_FIRST_AVAILABLE_MAX; sub++) {
                q->sub = sub;
                int r = search_build_list(st, q, sub);
                if (r < 0) return r;
                const dp_alloc_subrequest *sr = cur_sub(q);
                if (sub_blocked(q, sr)) continue;
                if (sr->all) {
                        r = place_all(st, qi);
                } else {
                        /* prune() is the only user and never recurses: one buffer serves all depths */
                        r = fill(st, qi, 0, 0, st->s->scratch);
                }
                if (r != 0) return r;
        }
        return 0;
}

/* ---- results ---- */

static uint64_t mix64(uint64_t x) {
        x ^= x >> 30;
        x *= 0xbf58476d1ce4e5b9ULL;
        x ^= x >> 27;
        x *= 0x94d049bb133111ebULL;
        return x ^ (x >> 31);
}

/* A share ID derived from the claim and the result's position, so the same
 * inputs print the same bytes (upstream draws a random UID). Shaped as an
 * RFC 9562 version-8 UUID. */
static void share_id(const dp_alloc_claim *cl, size_t index, char out[40]) {
        uint64_t h = 0xcbf29ce484222325ULL;
        const char *parts[3] = {cl->uid ? cl->uid : "", cl->ns ? cl->ns : "", cl->name ? cl->name : ""};
        for (int p = 0; p < 3; p++) {
                for (const char *c = parts[p]; *c; c++) h = (h ^ (unsigned char)*c) * 0x100000001b3ULL;
                h = (h ^ 0xff) * 0x100000001b3ULL;
        }
        uint64_t a = mix64(h ^ (index * 0x9e3779b97f4a7c15ULL)), b = mix64(a ^ 0x6a09e667f3bcc909ULL);
        snprintf(out, 40, "%08x-%04x-8%03x-%04x-%012llx", (unsigned)(a >> 32), (unsigned)((a >> 16) & 0xffff),
                 (unsigned)(a & 0xfff), (unsigned)(0x8000 | ((b >> 48) & 0x3fff)),
                 (unsigned long long)(b & 0xffffffffffffULL));
}

static bool values_in(const dp_alloc_ns_req *a, const dp_alloc_ns_req *b) {
        for (size_t i = 0; i < a->n_values; i++) {
                bool found = false;
                for (size_t j = 0; j < b->n_values && !found; j++) found = streq(a->values[i], b->values[j]);
                if (!found) return false;
        }
        return true;
}

/* Append r unless an equal requirement is there already: same key and
 * operator, the same set of values (upstream merges the term this way). */
static void add_requirement(dp_alloc_ns_req *to, size_t *n, const dp_alloc_ns_req *r) {
        for (size_t i = 0; i < *n; i++)
                if (streq(to[i].key, r->key) && to[i].op == r->op && values_in(&to[i], r) && values_in(r, &to[i]))
                        return;
        to[(*n)++] = *r;
}

static int node_selector_for(search *st, dp_alloc_result *res) {
        dp_alloc_snapshot *s = st->s;
        size_t ne = 0, nf = 0;
        for (size_t i = 0; i < res->n_devices; i++) {
                const device *d = &s->devs[res->devices[i].device];
                const slice *sl = &s->slices[d->slice];
                uint32_t nn = sl->per_device ? d->node_name : sl->node_name;
                const dp_alloc_node_selector *sel = sl->per_device ? d->node_selector : sl->node_selector;
                if (d->binds_to_node) nn = s->nodes[st->node].name;
                if (nn == NONE_ID && sel && sel->n_terms > 1) nn = s->nodes[st->node].name; /* cannot merge ORs */
                if (nn != NONE_ID) {
                        res->nodes = DP_ALLOC_NODES_NAME;
                        res->node_name = s->strs[nn];
                        return 0;
                }
                if (sel && sel->n_terms == 1) {
                        ne += sel->terms[0].n_exprs;
                        nf += sel->terms[0].n_fields;
                }
        }
        if (ne + nf == 0) return 0;
        res->nodes = DP_ALLOC_NODES_TERM;
        res->term_exprs = calloc(ne + 1, sizeof(dp_alloc_ns_req));
        res->term_fields = calloc(nf + 1, sizeof(dp_alloc_ns_req));
        if (!res->term_exprs || !res->term_fields) return -ENOMEM;
        for (size_t i = 0; i < res->n_devices; i++) {
                const device *d = &s->devs[res->devices[i].device];
                const slice *sl = &s->slices[d->slice];
                const dp_alloc_node_selector *sel = sl->per_device ? d->node_selector : sl->node_selector;
                if (!sel || sel->n_terms != 1) continue;
                for (size_t k = 0; k < sel->terms[0].n_exprs; k++)
                        add_requirement(res->term_exprs, &res->n_term_exprs, &sel->terms[0].exprs[k]);
                for (size_t k = 0; k < sel->terms[0].n_fields; k++)
                        add_requirement(res->term_fields, &res->n_term_fields, &sel->terms[0].fields[k]);
        }
        return 0;
}

static int build_results(search *st, dp_alloc_result **ret) {
        dp_alloc_snapshot *s = st->s;
        dp_alloc_result *res = calloc(st->n_claims, sizeof(*res));
        if (!res) return alloc_oom(st->err, "building the allocation results");
        for (size_t c = 0; c < st->n_claims; c++) {
                res[c].devices = calloc(st->claim_devs[c] + 1, sizeof(dp_alloc_device_result));
                if (!res[c].devices) goto oom;
        }
        for (size_t i = 0; i < st->n_pl; i++) {
                const placement *p = &st->pl[i];
                const rq *q = &st->rqs[p->rq];
                const dp_alloc_subrequest *sr = &q->r->subs[q->sub];
                const device *d = &s->devs[p->dev];
                const slice *sl = &s->slices[d->slice];
                const pool *po = &s->pools[d->pool];
                dp_alloc_result *r = &res[q->claim];
                dp_alloc_device_result *o = &r->devices[r->n_devices];
                *o = (dp_alloc_device_result){
                        .request_index = q->ridx,
                        .sub_index = q->sub,
                        .device = p->dev,
                        .driver = s->strs[po->driver],
                        .pool = s->strs[po->name],
                        .device_name = s->strs[d->name],
                        .admin_access = p->admin,
                        .binding_conditions = d->n_bc ? s->strlist + d->bc_off : NULL,
                        .n_binding_conditions = d->n_bc,
                        .binding_failure_conditions = d->n_bfc ? s->strlist + d->bfc_off : NULL,
                        .n_binding_failure_conditions = d->n_bfc,
                        .skip_node_operations = sl->n_skip ? s->strlist + sl->skip_off : NULL,
                        .n_skip_node_operations = sl->n_skip,
                };
                r->n_devices++;
                o->request = q->r->first_available && sr->name ? dp_asprintf("%s/%s", q->r->name, sr->name)
                                                               : dp_strdup(q->r->name);
                if (!o->request) goto oom;
                if (d->multi) {
                        share_id(q->cl, r->n_devices - 1, o->share_id);
                        o->consumed = calloc(p->n_amounts + 1, sizeof(dp_alloc_consumed));
                        if (!o->consumed) goto oom;
                        for (uint32_t k = 0; k < p->n_amounts; k++)
                                o->consumed[o->n_consumed++] =
                                        (dp_alloc_consumed){s->caps[d->cap_off + k].spec.name, p->amounts[k]};
                }
        }
        for (size_t c = 0; c < st->n_claims; c++)
                if (node_selector_for(st, &res[c]) < 0) goto oom;
        *ret = res;
        return 0;
oom:
        dp_alloc_results_free(res, st->n_claims);
        return alloc_oom(st->err, "building the allocation results");
}

dp_alloc_result *dp_alloc_results_free(dp_alloc_result *r, size_t n) {
        if (!r) return NULL;
        for (size_t c = 0; c < n; c++) {
                for (size_t i = 0; i < r[c].n_devices; i++) {
                        free(r[c].devices[i].request);
                        free(r[c].devices[i].consumed);
                }
                free(r[c].devices);
                free(r[c].term_exprs);
                free(r[c].term_fields);
        }
        free(r);
        return NULL;
}

/* ---- entry points ---- */

/* Scratch of the search kept in the snapshot from one call to the next
 * (zeroed per call where it must start zeroed), unless it grew large. */
#define SEARCH_KEEP_BYTES (1u << 20)

static void search_done(search *st) {
        dp_alloc_snapshot *s = st->s;
        rollback_to(st, 0);
        if (s->search_cap_cand * sizeof(uint32_t) > SEARCH_KEEP_BYTES) {
                free(s->search_cand);
                s->search_cand = NULL;
                s->search_cap_cand = 0;
        }
        /* pl, amount_pool, rqs, cs, cs_off and claim_devs belong to the snapshot (setup) */
        free(st->claim_why);
        free(st->hall_mem);
}

/* s->arr to at least n elements of esz bytes (contents not kept). */
static int scratch(void **arr, size_t *cap, size_t n, size_t esz) {
        if (n <= *cap) return 0;
        size_t bytes;
        if (dp_mul_overflow(n, esz, &bytes)) return -ENOMEM;
        void *p = malloc(bytes);
        if (!p) return -ENOMEM;
        free(*arr);
        *arr = p;
        *cap = n;
        return 0;
}

static int setup(search *st) {
        dp_alloc_snapshot *s = st->s;
        size_t nr = 0, nc = 0;
        for (size_t c = 0; c < st->n_claims; c++) {
                const dp_alloc_claim *cl = st->claims[c];
                if (cl->n_requests > DP_ALLOC_REQUESTS_MAX || cl->n_constraints > DP_ALLOC_CONSTRAINTS_MAX)
                        return dp_error_set(st->err, -E2BIG, "claim %s/%s: more than %d requests or constraints",
                                            cl->ns ? cl->ns : "", cl->name ? cl->name : "", DP_ALLOC_REQUESTS_MAX);
                nr += cl->n_requests;
                nc += cl->n_constraints;
        }
        /* every candidate list of a call has room for all the node's devices */
        size_t per_rq = DP_ALLOC_FIRST_AVAILABLE_MAX * (s->nodes[st->node].n_devs + 1), n_cand;
        if (dp_mul_overflow(nr + 1, per_rq, &n_cand) ||
            scratch((void **)&s->search_rqs, &s->search_cap_rqs, nr + 1, sizeof(rq)) < 0 ||
            scratch((void **)&s->search_cs, &s->search_cap_cs, nc + 1, sizeof(cstate)) < 0 ||
            scratch((void **)&s->search_cs_off, &s->search_cap_claims, st->n_claims + 1, 2 * sizeof(uint32_t)) < 0 ||
            scratch((void **)&s->search_cand, &s->search_cap_cand, n_cand, sizeof(uint32_t)) < 0)
                return alloc_oom(st->err, "setting up the allocation search");
        st->rqs = s->search_rqs;
        st->cs = s->search_cs;
        st->cs_off = s->search_cs_off;
        st->claim_devs = s->search_cs_off + (st->n_claims + 1);
        st->cand = s->search_cand;
        memset(st->rqs, 0, (nr + 1) * sizeof(rq));
        memset(st->cs, 0, (nc + 1) * sizeof(cstate));
        memset(st->cs_off, 0, 2 * (st->n_claims + 1) * sizeof(uint32_t));
        /* placements and amounts are written before read (place), so they are
         * not zeroed, and one buffer serves every call on this snapshot: a
         * claim at a time no longer mallocs and frees ~17 KiB each */
        size_t need = st->n_claims * DP_ALLOC_RESULTS_MAX + 1;
        if (need > s->search_cap_pl) {
                free(s->search_pl);
                free(s->search_amounts);
                s->search_amounts = NULL;
                s->search_cap_pl = 0;
                s->search_pl = malloc(need * sizeof(placement));
                if (s->search_pl) s->search_amounts = malloc(need * DP_ALLOC_RESULTS_MAX * sizeof(__int128));
                if (!s->search_pl || !s->search_amounts) return alloc_oom(st->err, "setting up the allocation search");
                s->search_cap_pl = need;
        }
        st->cap_pl = need;
        st->pl = s->search_pl;
        st->amount_pool = s->search_amounts;
        for (size_t c = 0; c < st->n_claims; c++) {
                const dp_alloc_claim *cl = st->claims[c];
                uint32_t lower = 0;
                for (size_t i = 0; i < cl->n_requests; i++) {
                        const dp_alloc_request *r = &cl->requests[i];
                        if (r->n_subs == 0 || r->n_subs > DP_ALLOC_FIRST_AVAILABLE_MAX)
                                return dp_error_set(st->err, -EINVAL, "claim %s/%s: request %s: needs 1 to %d entries",
                                                    cl->ns ? cl->ns : "", cl->name ? cl->name : "", r->name,
                                                    DP_ALLOC_FIRST_AVAILABLE_MAX);
                        uint32_t low = UINT32_MAX;
                        for (size_t k = 0; k < r->n_subs; k++) {
                                uint32_t n = r->subs[k].all ? 1 : sub_need(&r->subs[k]);
                                if (n < low) low = n;
                        }
                        lower += low;
                        st->rqs[st->n_rqs++] = (rq){.claim = (uint32_t)c, .cl = cl, .r = r, .ridx = (uint32_t)i};
                }
                if (lower > DP_ALLOC_RESULTS_MAX && !st->claim_why) {
                        st->claim_why = dp_asprintf("claim %s/%s needs at least %u devices, more than the %d a claim may hold",
                                                    cl->ns ? cl->ns : "", cl->name ? cl->name : "", lower,
                                                    DP_ALLOC_RESULTS_MAX);
                        if (!st->claim_why) return alloc_oom(st->err, "setting up the allocation search");
                }
        }
        uint32_t off = 0;
        for (size_t c = 0; c < st->n_claims; c++) {
                const dp_alloc_claim *cl = st->claims[c];
                st->cs_off[c] = off;
                for (size_t k = 0; k < cl->n_constraints; k++) {
                        const dp_alloc_constraint *ct = &cl->constraints[k];
                        cstate *cs = &st->cs[off + k];
                        cs->match = ct->match_attribute != NULL;
                        const char *a = cs->match ? ct->match_attribute : ct->distinct_attribute;
                        cs->attr = a ? snap_lookup(s, a) : NONE_ID;
                }
                off += (uint32_t)cl->n_constraints;
        }
        return 0;
}

int dp_alloc_allocate(dp_alloc_snapshot *s, const char *node_name, const dp_alloc_claim *const *claims,
                      size_t n_claims, const dp_alloc_options *opts, dp_alloc_result **ret_results, dp_strbuf *why,
                      dp_error *err) {
        assert_return(s && node_name && (claims || n_claims == 0) && ret_results, -EINVAL);
        int r = dp_alloc_freeze(s, err);
        if (r < 0) return r;
        int ni = snap_node_index(s, node_name);
        if (ni < 0) return dp_error_set(err, -ENOENT, "node %s is not known", node_name);
        r = snap_gather_node(s, (uint32_t)ni);
        if (r < 0) return alloc_oom(err, "gathering the devices of node %s", node_name);
        search st = {.s = s, .node = (uint32_t)ni, .claims = claims, .n_claims = n_claims, .err = err,
                     .max_effort = opts ? opts->max_effort : 0};
        r = setup(&st);
        if (r >= 0) r = search_hall_bound(&st, 0);
        if (r >= 0) r = st.claim_why ? 0 : next_request(&st, 0);
        if (r > 0) {
                r = build_results(&st, ret_results);
                if (r == 0) r = 1;
        } else if (r == 0 && why && (!opts || opts->explain)) {
                rollback_to(&st, 0);
                explain_failure(&st, why);
        }
        search_done(&st);
        return r;
}

int dp_alloc_commit(dp_alloc_snapshot *s, const dp_alloc_claim *claim, const dp_alloc_result *r) {
        assert_return(s && claim && r, -EINVAL);
        int k = dp_alloc_freeze(s, NULL);
        if (k < 0) return k;
        for (size_t i = 0; i < r->n_devices; i++)
                if (r->devices[i].device >= s->n_devs) return -EINVAL;
        uint32_t holder = NONE_ID;
        for (size_t i = 0; i < r->n_devices; i++) {
                const dp_alloc_device_result *d = &r->devices[i];
                if (d->admin_access) continue;
                if (holder == NONE_ID && s->devs[d->device].holder == NONE_ID) {
                        const char *parts[3] = {claim->ns ? claim->ns : "", "/", claim->name ? claim->name : ""};
                        holder = snap_add_parts(s, parts, 3);
                        if (holder == NONE_ID) return -ENOMEM;
                }
                snap_mark(s, d->device, holder, d->consumed, d->n_consumed);
        }
        return 0;
}

int dp_alloc_uncommit(dp_alloc_snapshot *s, const dp_alloc_result *r) {
        assert_return(s && r, -EINVAL);
        for (size_t i = r->n_devices; i > 0; i--) {
                const dp_alloc_device_result *d = &r->devices[i - 1];
                if (d->admin_access) continue;
                int k = dp_alloc_release(s, d->device, d->consumed, d->n_consumed);
                if (k < 0) return k;
        }
        return 0;
}
