/* SPDX-License-Identifier: Apache-2.0
 *
 * assign.c — Kueue's flavor assigner (pkg/scheduler/flavorassigner): for each
 * pod set and resource group, the ClusterQueue's flavors in list order, each
 * checked against the pod template (flavor taints, node affinity on the
 * flavor's labels) and against quota (maximum capacity, then unused quota,
 * borrowing as high as needed), the search stopped or continued as
 * flavorFungibility says, and the reasons in Kueue's words, sorted and
 * joined as Kueue's Status.Message() joins them.
 *
 * Where the request does not fit but preemption could help (it fits the
 * nominal quota, reclaiming in the cohort could help, or the queue may
 * preempt while borrowing), the preemption oracle (preempt.c) says whether
 * there are candidates: no candidates, preempt (one in the ClusterQueue) or
 * reclaim (only elsewhere), and how far the workload borrows after them.
 */
#include <stdarg.h>
#include <stdio.h>

#include "queue/tas.h"

typedef struct reasons {
        char **v;
        size_t n;
        bool oom;
} reasons;

static void reason_add(reasons *s, const char *fmt, ...) _printf_(2, 3);
static void reason_add(reasons *s, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        char *x = NULL;
        if (vasprintf(&x, fmt, ap) < 0) x = NULL;
        va_end(ap);
        char **v = x ? realloc(s->v, (s->n + 1) * sizeof(*v)) : NULL;
        if (!v) {
                free(x);
                s->oom = true;
                return;
        }
        s->v = v;
        v[s->n++] = x;
}

static void reasons_clear(reasons *s) {
        for (size_t i = 0; i < s->n; i++)
                free(s->v[i]);
        free(s->v);
        *s = (reasons){.oom = s->oom};
}

static void reasons_move(reasons *to, reasons *from) {
        for (size_t i = 0; i < from->n; i++)
                reason_add(to, "%s", from->v[i]);
        to->oom |= from->oom;
        reasons_clear(from);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* ---- modes (Kueue's granularMode) ---- */

typedef struct gmode {
        qmode pm;
        int borrow;
} gmode;

static const gmode worst_mode = {QM_NOFIT, INT32_MAX};
static const gmode best_mode = {QM_FIT, 0};

/* isPreferred: is a better than b under the ClusterQueue's preference? */
static bool preferred(gmode a, gmode b, bool preemption_over_borrowing) {
        if (a.pm == QM_NOFIT) return false;
        if (b.pm == QM_NOFIT) return true;
        bool an = a.pm == QM_NO_CANDIDATES, bn = b.pm == QM_NO_CANDIDATES;
        if (an != bn) return !an;
        if (preemption_over_borrowing) {
                if (a.borrow != b.borrow) return a.borrow < b.borrow;
                return a.pm > b.pm;
        }
        if (a.pm != b.pm) return a.pm > b.pm;
        return a.borrow < b.borrow;
}

/* shouldTryNextFlavor */
static bool try_next(gmode rep, const dp_cluster_queue *cq) {
        if (rep.pm == QM_NOFIT || rep.pm == QM_NO_CANDIDATES) return true;
        if ((rep.pm == QM_PREEMPT || rep.pm == QM_RECLAIM) && cq->when_can_preempt == DP_KQ_TRY_NEXT_FLAVOR)
                return true;
        return rep.borrow != 0 && cq->when_can_borrow == DP_KQ_TRY_NEXT_FLAVOR;
}

/* ---- one assignment ---- */

typedef struct actx {
        dp_queue *q;
        const qcq *cq;
        const dp_queue_workload *w;
        int64_t *assumed; /* per fr: what earlier pod sets of this workload take */
        const int32_t *counts; /* per pod set: the counts tried (partial admission), NULL: the full ones */
} actx;

static bool can_preempt_while_borrowing(const dp_queue *q, const dp_cluster_queue *cq) {
        const char *reclaim = cq->preemption.reclaim_within_cohort;
        return (cq->preemption.borrow_within_cohort && !streq(cq->preemption.borrow_within_cohort, "Never")) ||
               (q->fair_sharing && reclaim && !streq(reclaim, "Never"));
}

/* fitsResourceQuota */
static gmode fits_quota(actx *x, size_t fr, int64_t request, reasons *rs) {
        const qnode *n = x->cq->node;
        const char *res = x->q->fr[fr].resource, *flv = x->q->fr[fr].flavor;
        int64_t available = q_available(n, fr), max = q_potential(n, fr);
        int64_t val = x->assumed[fr] + request;
        char a[64], b[64], c[64];
        if (val > max) {
                q_format(res, x->assumed[fr], a, sizeof(a));
                q_format(res, request, b, sizeof(b));
                q_format(res, max, c, sizeof(c));
                reason_add(rs,
                           "insufficient quota for %s in flavor %s, previously considered podsets requests (%s) + "
                           "current podset request (%s) > maximum capacity (%s)",
                           res, flv, a, b, c);
                return (gmode){QM_NOFIT, 0};
        }
        bool below_root = false;
        int borrow = q_borrow_height(n, fr, val, &below_root);
        if (val <= available) return (gmode){QM_FIT, borrow};
        q_format(res, val - available, a, sizeof(a));
        reason_add(rs, "insufficient unused quota for %s in flavor %s, %s more needed", res, flv, a);
        if (n->q[fr].nominal >= val || below_root || can_preempt_while_borrowing(x->q, x->cq->cq)) {
                qmode m = QM_NO_CANDIDATES;
                if (q_preempt_oracle(x->q, x->cq, x->w, fr, val, &m, &borrow) < 0) rs->oom = true;
                return (gmode){m, borrow};
        }
        return (gmode){QM_NOFIT, borrow};
}

/* core/v1 ToleratesTaint */
static bool tolerates(const dp_toleration *t, const dp_taint *taint) {
        if (t->effect && t->effect[0] && !streq_ptr(t->effect, taint->effect)) return false;
        if (t->key && t->key[0] && !streq(t->key, taint->key)) return false;
        if (t->op && streq(t->op, "Exists")) return true;
        if (t->op && !streq(t->op, "Equal")) return false;
        return streq(t->value ? t->value : "", taint->value ? taint->value : "");
}

static const dp_taint *untolerated(const dp_resource_flavor *rf, const dp_pod *p) {
        for (size_t i = 0; i < rf->n_node_taints; i++) {
                const dp_taint *t = &rf->node_taints[i];
                if (!streq_ptr(t->effect, "NoSchedule") && !streq_ptr(t->effect, "NoExecute")) continue;
                bool ok = false;
                for (size_t k = 0; k < p->n_tolerations && !ok; k++)
                        ok = tolerates(&p->tolerations[k], t);
                for (size_t k = 0; k < rf->n_tolerations && !ok; k++)
                        ok = tolerates(&rf->tolerations[k], t);
                if (!ok) return t;
        }
        return NULL;
}

static bool requirement_matches(const dp_node_selector_requirement *e, const char *v) {
        bool in = false;
        for (size_t i = 0; v && i < e->n_values; i++)
                in |= streq(e->values[i], v);
        switch (e->op) {
        case DP_NS_OP_IN: return in;
        case DP_NS_OP_NOT_IN: return !in;
        case DP_NS_OP_EXISTS: return v != NULL;
        case DP_NS_OP_DOES_NOT_EXIST: return v == NULL;
        case DP_NS_OP_GT:
        case DP_NS_OP_LT:
                if (!v || e->n_values != 1) return false;
                long long a = strtoll(v, NULL, 10), b = strtoll(e->values[0], NULL, 10);
                return e->op == DP_NS_OP_GT ? a > b : a < b;
        }
        return false;
}

/* Kueue's flavorSelector: the pod's nodeSelector and required node affinity
 * restricted to the keys of the flavor's labels, matched against them. */
static bool affinity_matches(const dp_resource_flavor *rf, const dp_pod *p) {
        for (size_t i = 0; i < p->n_node_selector; i++) {
                const char *k = p->node_selector[i].key;
                const char *v = dp_kv_get(rf->node_labels, rf->n_node_labels, k);
                if (v && !streq(v, p->node_selector[i].value)) return false;
        }
        const dp_node_selector *ns = p->required_node_affinity;
        if (!ns || !ns->n_terms) return true;
        bool any = false;
        for (size_t t = 0; t < ns->n_terms && !any; t++) {
                size_t kept = 0;
                bool ok = true;
                for (size_t e = 0; e < ns->terms[t].n_match_expressions; e++) {
                        const dp_node_selector_requirement *q = &ns->terms[t].match_expressions[e];
                        if (!dp_kv_get(rf->node_labels, rf->n_node_labels, q->key)) continue;
                        kept++;
                        ok &= requirement_matches(q, dp_kv_get(rf->node_labels, rf->n_node_labels, q->key));
                }
                if (!kept) return true; /* an empty term: any flavor */
                any = ok;
        }
        return any;
}

/* checkFlavorForPodSets; rf is the flavor's object (NULL: none of that name). */
static bool flavor_fits_template(const dp_resource_flavor *rf, const char *name, const dp_pod *tmpl, reasons *rs) {
        if (!rf) {
                reason_add(rs, "flavor %s not found", name);
                return false;
        }
        const dp_taint *t = tmpl ? untolerated(rf, tmpl) : NULL;
        if (t) {
                reason_add(rs, "untolerated taint {%s %s %s %s} in flavor %s", t->key, t->value ? t->value : "",
                           t->effect, t->time_added ? t->time_added : "<nil>", name);
                return false;
        }
        if (tmpl && !affinity_matches(rf, tmpl)) {
                reason_add(rs, "flavor %s doesn't match node affinity", name);
                return false;
        }
        return true;
}

/* A pod set's totals: each request × count, and `pods` when the queue covers it. */
typedef struct total {
        const char *name;
        int64_t value;
} total;

static int group_of(const dp_cluster_queue *cq, const char *res) {
        for (size_t g = 0; g < cq->n_groups; g++)
                for (size_t i = 0; i < cq->groups[g].n_covered; i++)
                        if (streq(cq->groups[g].covered[i], res)) return (int)g;
        return -1;
}

/* The index of res in the group's covered resources, -1 when not covered. */
static ssize_t covered_at(const dp_kq_resource_group *g, const char *res) {
        for (size_t i = 0; i < g->n_covered; i++)
                if (streq(g->covered[i], res)) return (ssize_t)i;
        return -1;
}

/* One flavor for the group's resources: its representative mode, the fr
 * of each total it takes (out[k]). frs: the flavor's row of the group's
 * table (qgroup.fr); at[k]: where total k is covered, -1 not. */
static gmode try_flavor(actx *x, const ssize_t *frs, const ssize_t *at, size_t nt, const total *tot, ssize_t *out,
                        qmode *outm, int *ret_max_borrow, reasons *rs) {
        gmode rep = best_mode;
        *ret_max_borrow = 0;
        for (size_t k = 0; k < nt; k++) {
                if (at[k] < 0) continue;
                ssize_t fr = frs[at[k]];
                gmode m = fits_quota(x, (size_t)fr, tot[k].value, rs);
                *ret_max_borrow = DP_MAX(*ret_max_borrow, m.borrow);
                if (preferred(rep, m, x->cq->cq->preemption_over_borrowing)) rep = m;
                if (rep.pm == QM_NOFIT) return rep;
                out[k] = fr;
                outm[k] = m.pm;
        }
        return rep;
}

/* findFlavorForPodSets: the best flavor of group g (or none), its mode; the
 * reasons of every flavor tried unless the best one fits. */
static int find_flavor(actx *x, const dp_queue_podset *ps, size_t g, const total *tot, size_t nt, ssize_t *best,
                       qmode *bestm, gmode *ret, int *ret_max_borrow, reasons *rs) {
        const dp_kq_resource_group *grp = &x->cq->cq->groups[g];
        const qgroup *idx = &x->cq->groups[g];
        _cleanup_free_ ssize_t *cur = calloc(nt + 1, sizeof(*cur));
        _cleanup_free_ ssize_t *at = calloc(nt + 1, sizeof(*at));
        _cleanup_free_ qmode *curm = calloc(nt + 1, sizeof(*curm));
        if (!cur || !at || !curm) return -ENOMEM;
        for (size_t k = 0; k < nt; k++)
                at[k] = covered_at(grp, tot[k].name);
        gmode best_m = worst_mode;
        bool found = false;
        for (size_t f = 0; f < grp->n_flavors; f++) {
                char tas[512];
                const char *no = q_tas_flavor_check(x->q, x->cq, ps, grp, grp->flavors[f].name, tas, sizeof(tas));
                if (no) reason_add(rs, "%s", no);
                if (no || !flavor_fits_template(idx->flavor[f], grp->flavors[f].name, ps->tmpl, rs)) continue;
                for (size_t k = 0; k < nt; k++)
                        cur[k] = -1;
                int maxb = 0;
                gmode rep = try_flavor(x, idx->fr + f * grp->n_covered, at, nt, tot, cur, curm, &maxb, rs);
                bool stop = !try_next(rep, x->cq->cq);
                if (stop || preferred(rep, best_m, x->cq->cq->preemption_over_borrowing)) {
                        for (size_t k = 0; k < nt; k++)
                                if (at[k] >= 0) {
                                        best[k] = cur[k];
                                        bestm[k] = curm[k];
                                }
                        best_m = rep;
                        *ret_max_borrow = maxb;
                        found = rep.pm != QM_NOFIT;
                }
                if (stop) break;
        }
        if (!found)
                for (size_t k = 0; k < nt; k++)
                        if (at[k] >= 0) best[k] = -1;
        if (found && best_m.pm == QM_FIT) reasons_clear(rs);
        *ret = found ? best_m : worst_mode;
        return found ? 1 : 0;
}

static int cmp_total(const void *a, const void *b) { return strcmp(((const total *)a)->name, ((const total *)b)->name); }

static size_t totals(const qcq *cq, const dp_queue_podset *ps, int32_t count, total *tot) {
        size_t nt = 0;
        bool pods = false;
        for (size_t i = 0; i < ps->n_requests; i++) {
                tot[nt++] = (total){ps->requests[i].name, ps->requests[i].value * count};
                pods |= streq(ps->requests[i].name, "pods");
        }
        if (!pods && group_of(cq->cq, "pods") >= 0) tot[nt++] = (total){"pods", count};
        qsort(tot, nt, sizeof(*tot), cmp_total);
        return nt;
}

static int add_usage(qassign *a, size_t fr, int64_t v, bool preempt) {
        for (size_t i = 0; i < a->n_usage; i++)
                if (a->usage[i].fr == fr) {
                        a->usage[i].value += v;
                        a->usage[i].preempt |= preempt;
                        return 0;
                }
        qusage *u = realloc(a->usage, (a->n_usage + 1) * sizeof(*u));
        if (!u) return -ENOMEM;
        a->usage = u;
        u[a->n_usage++] = (qusage){fr, v, preempt};
        return 0;
}

/* One pod set: a flavor per resource group it asks of, in the order of its
 * resources' names. *ret_mode is the pod set's representative mode; its
 * reasons go to rs (only the failing group's when one fails, as Kueue
 * keeps them). ffr (per request) gets the fr taken. */
static int assign_podset(actx *x, const dp_queue_podset *ps, ssize_t *ffr, qassign *a, gmode *ret_mode,
                         reasons *rs) {
        _cleanup_free_ total *tot = calloc(ps->n_requests + 2, sizeof(*tot));
        _cleanup_free_ ssize_t *fr = calloc(ps->n_requests + 2, sizeof(*fr));
        _cleanup_free_ qmode *pm = calloc(ps->n_requests + 2, sizeof(*pm));
        if (!tot || !fr || !pm) return -ENOMEM;
        size_t nt = totals(x->cq, ps, x->counts ? x->counts[ps - x->w->podsets] : ps->count, tot);
        gmode mode = best_mode;
        for (size_t k = 0; k < nt; k++)
                fr[k] = -2; /* not looked at yet */
        for (size_t k = 0; k < nt; k++) {
                if (fr[k] != -2) continue;
                int g = group_of(x->cq->cq, tot[k].name);
                if (g < 0) {
                        fr[k] = -1;
                        if (tot[k].value == 0) continue;
                        reasons_clear(rs);
                        reason_add(rs, "resource %s unavailable in ClusterQueue", tot[k].name);
                        *ret_mode = worst_mode;
                        return 0;
                }
                reasons grp = {0};
                gmode m;
                int maxb = 0;
                int r = find_flavor(x, ps, (size_t)g, tot, nt, fr, pm, &m, &maxb, &grp);
                if (r <= 0) {
                        reasons_clear(rs);
                        reasons_move(rs, &grp);
                        *ret_mode = worst_mode;
                        return r;
                }
                reasons_move(rs, &grp);
                mode.pm = DP_MIN(mode.pm, m.pm);
                mode.borrow = DP_MAX(mode.borrow, maxb);
        }
        for (size_t k = 0; k < nt; k++) {
                if (fr[k] < 0) continue;
                if (add_usage(a, (size_t)fr[k], tot[k].value, q_mode_preempts(pm[k])) < 0) return -ENOMEM;
                x->assumed[fr[k]] += tot[k].value;
                for (size_t i = 0; i < ps->n_requests; i++)
                        if (streq(ps->requests[i].name, tot[k].name)) ffr[i] = fr[k];
        }
        *ret_mode = mode;
        return 0;
}

static void message_add(qassign *a, const char *podset, reasons *rs) {
        if (!rs->n) return;
        qsort(rs->v, rs->n, sizeof(char *), cmp_str);
        dp_strbuf_printf(&a->message, "%scouldn't assign flavors to pod set %s: ", a->message.len ? "; " : "",
                         podset);
        for (size_t i = 0; i < rs->n; i++)
                dp_strbuf_printf(&a->message, "%s%s", i ? ", " : "", rs->v[i]);
}

int q_assign_counts(dp_queue *q, const qcq *cq, const dp_queue_workload *w, const int32_t *counts, qassign *ret) {
        qassign a = {.mode = QM_FIT, .message = DP_STRBUF_INIT};
        size_t nreq = 0;
        for (size_t p = 0; p < w->n_podsets; p++)
                nreq += w->podsets[p].n_requests;
        _cleanup_free_ int64_t *assumed = calloc(q->n_fr + 1, sizeof(int64_t));
        a.flavor_fr = malloc((nreq + 1) * sizeof(ssize_t));
        if (!assumed || !a.flavor_fr) {
                q_assign_done(&a);
                return -ENOMEM;
        }
        for (size_t i = 0; i < nreq; i++)
                a.flavor_fr[i] = -1;
        actx x = {q, cq, w, assumed, counts};
        size_t off = 0;
        int r = 0;
        for (size_t p = 0; p < w->n_podsets && r >= 0; p++) {
                reasons rs = {0};
                gmode m;
                r = assign_podset(&x, &w->podsets[p], a.flavor_fr + off, &a, &m, &rs);
                off += w->podsets[p].n_requests;
                if (r >= 0) message_add(&a, w->podsets[p].name, &rs);
                if (rs.oom) r = -ENOMEM;
                reasons_clear(&rs);
                if (r < 0) break;
                if (m.pm < a.mode) a.mode = m.pm;
                if (m.pm != QM_NOFIT) a.borrowing = DP_MAX(a.borrowing, m.borrow);
                if (m.pm == QM_NOFIT) break; /* Kueue stops at the first pod set that gets no flavor */
        }
        if (r >= 0) r = q_tas_assign(q, cq, w, &a);
        if (r >= 0 && dp_strbuf_failed(&a.message)) r = -ENOMEM;
        if (r < 0) {
                q_assign_done(&a);
                return r;
        }
        *ret = a;
        return 0;
}

/* The full counts first; when they do not fit, Kueue's pod-set reducer
 * (queue/partial.c) looks for the largest counts that do. */
int q_assign(dp_queue *q, const qcq *cq, const dp_queue_workload *w, qassign *ret) {
        int r = q_assign_counts(q, cq, w, NULL, ret);
        return r < 0 || ret->mode == QM_FIT ? r : q_partial(q, cq, w, ret);
}

void q_assign_done(qassign *a) {
        dp_strbuf_done(&a->message);
        free(a->usage);
        free(a->flavor_fr);
        free(a->counts);
        *a = (qassign){.message = DP_STRBUF_INIT};
}
