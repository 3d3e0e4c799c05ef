/* SPDX-License-Identifier: Apache-2.0
 * explain.c — why claims do not fit on a node, one line per request in
 * trouble: what the static filter removed (class and request selectors,
 * taints, capacity policy, devices held by other claims), and what stopped
 * the search (counters, groups, capacity, constraints, counting). */
#include <stdio.h>

#include "alloc/search.h"

const char *rq_label(const search *st, const rq *q, char *buf, size_t size) {
        const dp_alloc_subrequest *sr = &q->r->subs[q->sub];
        char claim[300] = "";
        if (st->n_claims > 1) snprintf(claim, sizeof(claim), "claim %s/%s, ", q->cl->ns ? q->cl->ns : "", q->cl->name);
        if (q->r->first_available && sr->name) snprintf(buf, size, "%srequest %s/%s", claim, q->r->name, sr->name);
        else snprintf(buf, size, "%srequest %s", claim, q->r->name);
        return buf;
}

static void qty(__int128 v, char *buf, size_t size) {
        /* plain decimal with up to 9 fractional digits: the allocator does not
         * know the quantity's original suffix */
        bool neg = v < 0;
        if (neg) v = -v;
        unsigned long long whole = (unsigned long long)(v / 1000000000), frac = (unsigned long long)(v % 1000000000);
        if (!frac) {
                snprintf(buf, size, "%s%llu", neg ? "-" : "", whole);
                return;
        }
        char f[16];
        snprintf(f, sizeof(f), "%09llu", frac);
        for (int i = 8; i > 0 && f[i] == '0'; i--) f[i] = 0;
        snprintf(buf, size, "%s%llu.%s", neg ? "-" : "", whole, f);
}

static void groups_text(const dp_alloc_snapshot *s, const device *d, uint32_t set, dp_strbuf *out) {
        dp_strbuf_putc(out, '[');
        for (uint32_t c = d->cons_off; c < d->cons_off + d->n_cons; c++) {
                if (s->cons[c].set != set) continue;
                for (uint32_t g = 0; g < s->cons[c].n_groups; g++)
                        dp_strbuf_printf(out, "%s%s", g ? " " : "", s->strs[s->cons[c].groups[g]]);
        }
        dp_strbuf_putc(out, ']');
}

static const char *constraint_text(const search *st, const rq *q, uint32_t c, char *buf, size_t size) {
        const dp_alloc_constraint *ct = &q->cl->constraints[c];
        snprintf(buf, size, "constraint %s %s", ct->match_attribute ? "matchAttribute" : "distinctAttribute",
                 ct->match_attribute ? ct->match_attribute : ct->distinct_attribute);
        return buf;
}

/* The reasons are written for every node of every claim that does not fit
 * (500 nodes, 500 claims: 250,000 times), so the common ones are put
 * together piece by piece instead of through printf. */
static void put(dp_strbuf *out, const char *str) { dp_strbuf_puts(out, str); }

/* "<sep><n><what>" */
static void put_count(dp_strbuf *out, const char **sep, unsigned n, const char *what) {
        put(out, *sep);
        dp_strbuf_put_u64(out, n);
        put(out, what);
        *sep = ", ";
}

static void put_label(const search *st, const rq *q, dp_strbuf *out) {
        const dp_alloc_subrequest *sr = &q->r->subs[q->sub];
        if (st->n_claims > 1) {
                char lb[400];
                dp_strbuf_puts(out, rq_label(st, q, lb, sizeof(lb)));
                return;
        }
        put(out, "request ");
        put(out, q->r->name);
        if (q->r->first_available && sr->name) {
                dp_strbuf_putc(out, '/');
                put(out, sr->name);
        }
}

static void static_reason(search *st, const rq *q, uint32_t sub, dp_strbuf *out) {
        const dp_alloc_snapshot *s = st->s;
        const cand_list *L = &q->subs[sub];
        const dp_alloc_subrequest *sr = &q->r->subs[sub];
        const char *cls = sr->device_class ? sr->device_class : "(none)";
        if (sr->class_missing) {
                put(out, "device class ");
                put(out, cls);
                put(out, " not found");
                return;
        }
        if (sr->admin_access && !q->cl->admin_access_allowed) {
                put(out, "adminAccess needs the namespace label " DP_ALLOC_ADMIN_LABEL ": \"true\"");
                return;
        }
        if (L->n_total == 0) {
                put(out, "no devices on this node");
                return;
        }
        if (L->n_class == L->n_total) {
                put(out, "no device passes class ");
                put(out, cls);
                put(out, "'s selectors");
                return;
        }
        if (L->n_class + L->n_sel == L->n_total) {
                put(out, "no device passes the selectors of class ");
                put(out, cls);
                put(out, " and of the request");
                return;
        }
        uint32_t usable = (uint32_t)L->n - L->n_errors - L->n_taint_kept;
        if (sr->all) {
                put(out, "allocationMode All: ");
                dp_strbuf_put_u64(out, usable);
                put(out, " of ");
                dp_strbuf_put_u64(out, L->n_total);
                put(out, " devices usable");
        } else {
                put(out, "needs ");
                dp_strbuf_put_u64(out, (unsigned)(sr->count > 0 ? sr->count : 1));
                put(out, sr->count == 1 ? " device, " : " devices, ");
                dp_strbuf_put_u64(out, usable);
                put(out, " of ");
                dp_strbuf_put_u64(out, L->n_total);
                put(out, " usable");
        }
        const char *sep = ": ";
        if (L->n_class) {
                put_count(out, &sep, L->n_class, " fail class ");
                put(out, cls);
                put(out, "'s selectors");
        }
        if (L->n_sel) put_count(out, &sep, L->n_sel, " fail the request's selectors");
        if (L->n_taint) {
                const device *d = &s->devs[L->taint_dev];
                const taint_ent *t = NULL;
                for (uint32_t i = d->taint_off; i < d->taint_off + d->n_taints && !t; i++)
                        if (s->taints[i].blocking && !t) t = &s->taints[i];
                dp_strbuf_printf(out, "%s%u tainted and not tolerated (%s: %s=%s:%s)", sep, L->n_taint,
                                 s->strs[d->name], t ? t->key : "", t ? t->value : "", t ? t->effect : "");
                sep = ", ";
        }
        if (L->n_policy) put_count(out, &sep, L->n_policy, " cannot give the capacity asked");
        if (L->n_in_use) {
                put_count(out, &sep, L->n_in_use, L->n_holders > 1 ? " in use by claims " : " in use by claim ");
                for (uint32_t h = 0; h < L->n_holders; h++) {
                        if (h) put(out, ", ");
                        put(out, s->strs[L->holders[h]]);
                }
                if (L->n_in_use && !L->n_holders) put(out, "(unnamed)");
        }
        if (L->n_errors) put_count(out, &sep, L->n_errors, " not evaluated (selector error)");
}

void explain_why(search *st, const rq *q, dp_strbuf *out) {
        const dp_alloc_snapshot *s = st->s;
        const why_rec *w = &q->why;
        char c1[64], c2[64], cbuf[400];
        const char *dn = w->dev < s->n_devs ? s->strs[s->devs[w->dev].name] : "";
        switch (w->kind) {
        case WHY_NONE: dp_strbuf_puts(out, "no combination of devices satisfies every rule"); break;
        case WHY_IN_USE: dp_strbuf_printf(out, "device %s is already taken in this allocation", dn); break;
        case WHY_HELD: {
                /* "in use by claim X": reasons.c leaves the holder out when it groups nodes */
                const device *d = &s->devs[w->dev];
                dp_strbuf_printf(out, "allocationMode All takes every matching device, and device %s is in use by %s%s", dn,
                                 d->holder != NONE_ID ? "claim " : "another claim",
                                 d->holder != NONE_ID ? s->strs[d->holder] : "");
                break;
        }
        case WHY_COUNTER: {
                const counter_set *cs = &s->sets[w->fit.a];
                const counter *ct = &s->ctrs[w->fit.b];
                qty(ct->value, c1, sizeof(c1));
                qty(ct->consumed, c2, sizeof(c2));
                dp_strbuf_printf(out, "device %s: counter set %s exhausted (counter %s: %s, %s taken by other claims)",
                                 dn, s->strs[cs->name], s->strs[ct->name], c1, c2);
                break;
        }
        case WHY_GROUPS: {
                const counter_set *cs = &s->sets[w->fit.a];
                const device *other = &s->devs[w->fit.b];
                dp_strbuf_printf(out, "%s %s on counter set %s with groups ", s->strs[other->name],
                                 other->committed ? "is allocated" : "is picked for this claim", s->strs[cs->name]);
                groups_text(s, other, w->fit.a, out);
                dp_strbuf_printf(out, "; %s has ", dn);
                groups_text(s, &s->devs[w->dev], w->fit.a, out);
                dp_strbuf_puts(out, " (incompatible compatibility groups)");
                break;
        }
        case WHY_CAPACITY: {
                const cap_ent *c = &s->caps[w->a];
                qty(c->spec.value, c1, sizeof(c1));
                qty(c->consumed, c2, sizeof(c2));
                dp_strbuf_printf(out, "device %s: capacity %s exhausted (%s, %s taken by other claims)", dn,
                                 c->spec.name, c1, c2);
                break;
        }
        case WHY_MATCH:
                dp_strbuf_printf(out, "%s broken: device %s has %s, the devices already picked have %s",
                                 constraint_text(st, q, w->c, cbuf, sizeof(cbuf)), dn, snap_value_text(s, w->a),
                                 snap_value_text(s, w->b));
                break;
        case WHY_MISSING:
                dp_strbuf_printf(out, "%s broken: device %s does not have the attribute",
                                 constraint_text(st, q, w->c, cbuf, sizeof(cbuf)), dn);
                break;
        case WHY_DISTINCT:
                dp_strbuf_printf(out, "%s broken: device %s repeats value %s",
                                 constraint_text(st, q, w->c, cbuf, sizeof(cbuf)), dn, snap_value_text(s, w->a));
                break;
        case WHY_LIMIT:
                dp_strbuf_printf(out, "a claim may hold at most %d devices", DP_ALLOC_RESULTS_MAX);
                break;
        case WHY_SHORT: dp_strbuf_printf(out, "needs %u more device(s), only %u usable", w->b, w->a); break;
        case WHY_CLASS:
                dp_strbuf_printf(out, "%s cannot hold: at most %u usable devices share a value, %u needed",
                                 constraint_text(st, q, w->c, cbuf, sizeof(cbuf)), w->a, w->b);
                break;
        case WHY_VALUES:
                dp_strbuf_printf(out, "%s cannot hold: only %u distinct values among usable devices, %u needed",
                                 constraint_text(st, q, w->c, cbuf, sizeof(cbuf)), w->a, w->b);
                break;
        case WHY_UNION:
                if (w->c) {
                        char lb[400];
                        dp_strbuf_printf(out, "%s needs %u device(s), only %u usable",
                                         rq_label(st, &st->rqs[w->c], lb, sizeof(lb)), w->b, w->a);
                } else {
                        dp_strbuf_printf(out, "the remaining requests need %u devices together, their candidates are %u",
                                         w->b, w->a);
                }
                break;
        case WHY_ALL_EMPTY: dp_strbuf_puts(out, "allocationMode All found no matching device"); break;
        case WHY_TAINT: {
                const device *d = &s->devs[w->dev];
                const taint_ent *t = NULL;
                for (uint32_t i = d->taint_off; i < d->taint_off + d->n_taints && !t; i++)
                        if (s->taints[i].blocking) t = &s->taints[i];
                dp_strbuf_printf(out,
                                 "allocationMode All: device %s matches but has a taint not tolerated (%s=%s:%s), "
                                 "so not every matching device can be taken",
                                 dn, t ? t->key : "", t ? t->value : "", t ? t->effect : "");
                break;
        }
        case WHY_LATER: {
                const rq *o = &st->rqs[w->c];
                dp_strbuf_printf(out, "request %s cannot be met on this node", o->r->name);
                if (o->r->n_subs == 1) {
                        dp_strbuf_puts(out, ": ");
                        static_reason(st, o, 0, out);
                }
                break;
        }
        case WHY_MATCHING:
                dp_strbuf_printf(out,
                                 "with the devices picked before, %u of the requests still to come need %u devices "
                                 "between them, no device serving two, and only %u devices match any of them",
                                 w->c, w->b, w->a);
                break;
        case WHY_COUNTER_BOUND: {
                const counter *ct = &s->ctrs[w->c];
                const counter_set *cs = NULL;
                for (size_t i = 0; i < s->n_sets && !cs; i++)
                        if (w->c >= s->sets[i].ctr_off && w->c < s->sets[i].ctr_off + s->sets[i].n_ctrs) cs = &s->sets[i];
                dp_strbuf_printf(out, "counter set %s exhausted: counter %s leaves room for at most %u of the %u devices needed",
                                 cs ? s->strs[cs->name] : "?", s->strs[ct->name], w->a, w->b);
                break;
        }
        }
}

void explain_failure(search *st, dp_strbuf *why) {
        const dp_alloc_snapshot *s = st->s;
        const node *n = &s->nodes[st->node];
        if (st->claim_why) {
                dp_strbuf_printf(why, "%s\n", st->claim_why);
                return;
        }
        uint32_t qi = st->deepest < st->n_rqs ? st->deepest : (uint32_t)st->n_rqs - 1;
        if (st->n_rqs == 0) return;
        rq *q = &st->rqs[qi];
        /* the deepest request was cut short because a later one can never be
         * met here: that one is the culprit, under its own claim and name */
        bool later = q->why.kind == WHY_LATER && q->why.c < st->n_rqs;
        if (later) q = &st->rqs[q->why.c];
        bool printed = false;
        for (uint32_t sub = 0; sub < q->r->n_subs && sub < DP_ALLOC_FIRST_AVAILABLE_MAX; sub++) {
                const cand_list *L = &q->subs[sub];
                const dp_alloc_subrequest *sr = &q->r->subs[sub];
                q->sub = sub;
                if (!L->built && !(later && sub_blocked(q, sr))) continue; /* blocked: never built */
                bool short_static = sub_blocked(q, sr) || L->n - L->n_errors - L->n_taint_kept == 0 ||
                                    (!sr->all && (int64_t)(L->n - L->n_errors) < (sr->count > 0 ? sr->count : 1)) ||
                                    (sr->all && n->n_bad_pools);
                put_label(st, q, why);
                put(why, ": ");
                if (sr->all && n->n_bad_pools) dp_strbuf_puts(why, "allocationMode All needs every pool complete and valid");
                else if (short_static) static_reason(st, q, sub, why);
                else explain_why(st, q, why);
                dp_strbuf_putc(why, '\n');
                printed = true;
        }
        if (!printed) dp_strbuf_puts(why, "no device could be considered\n");
        for (size_t i = 0; i < n->n_bad_pools; i++) {
                const pool *p = &s->pools[n->bad_pools[i]];
                /* a pool still being published may look invalid (its counter
                 * sets in a slice not seen yet): say incomplete first */
                if (p->invalid && !p->incomplete)
                        dp_strbuf_printf(why, "pool %s/%s skipped: invalid: %s\n", s->strs[p->driver], s->strs[p->name],
                                         p->invalid_why ? p->invalid_why : "");
                else if (p->groups_gated && (int64_t)p->n_slices == p->slice_count)
                        dp_strbuf_printf(why,
                                         "pool %s/%s skipped: incomplete (its devices carry compatibilityGroups and "
                                         "the DRADeviceCompatibilityGroups feature is off)\n",
                                         s->strs[p->driver], s->strs[p->name]);
                else
                        dp_strbuf_printf(why, "pool %s/%s skipped: incomplete (%zu of %lld slices at generation %lld)\n",
                                         s->strs[p->driver], s->strs[p->name], p->n_slices, (long long)p->slice_count,
                                         (long long)p->generation);
        }
}
