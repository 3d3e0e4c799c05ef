/* SPDX-License-Identifier: Apache-2.0
 *
 * report.c — the admission as a document (`simulate -o json|yaml`, key
 * "queues") and as the text tables `simulate` prints: per ClusterQueue its
 * quota use and what it admitted and holds, per workload its state, flavors
 * and Kueue's condition message.
 */
#include <stdio.h>

#include "queue/tas.h"

#define PUT(s, m, k, v)                                                                                                \
        do {                                                                                                           \
                if (dp_doc_map_add((s), (m), (k), (v)) < 0) return NULL;                                               \
        } while (0)

/* QuotaReserved: its quota reserved, waiting for its admission checks (checks.c) */
static const char *state_name(const dp_queue_workload *w) {
        dp_qw_state s = w->state;
        if (s == DP_QW_ADMITTED && w->checks_pending) return "QuotaReserved";
        return s == DP_QW_ADMITTED   ? "Admitted"
               : s == DP_QW_PENDING  ? "Pending"
               : s == DP_QW_FINISHED ? "Finished"
                                     : "Inadmissible";
}

static dp_doc_node *flavors_doc(dp_doc_set *s, const dp_queue_workload *w) {
        dp_doc_node *m = dp_doc_new_map(s);
        if (!m) return NULL;
        for (size_t p = 0; p < w->n_podsets; p++)
                for (size_t i = 0; i < w->podsets[p].n_requests; i++) {
                        const char *f = w->podsets[p].flavors[i];
                        if (!f) continue;
                        char key[512];
                        if (w->n_podsets > 1)
                                snprintf(key, sizeof(key), "%s/%s", w->podsets[p].name, w->podsets[p].requests[i].name);
                        else
                                snprintf(key, sizeof(key), "%s", w->podsets[p].requests[i].name);
                        PUT(s, m, key, dp_doc_new_str(s, f));
                }
        return m;
}

/* Partial admission: "<pod set>: N of M pods" for each pod set admitted
 * with fewer pods than it asks for; NULL when none was (or no memory). */
static dp_doc_node *partial_doc(dp_doc_set *s, const dp_queue_workload *w) {
        dp_doc_node *v = NULL;
        for (size_t p = 0; p < w->n_podsets; p++) {
                const dp_queue_podset *ps = &w->podsets[p];
                if (ps->admitted_count >= ps->count) continue;
                char line[400];
                snprintf(line, sizeof(line), "%s: %d of %d pods", ps->name, ps->admitted_count, ps->count);
                if ((!v && !(v = dp_doc_new_seq(s))) || dp_doc_seq_add(s, v, dp_doc_new_str(s, line)) < 0) return NULL;
        }
        return v;
}

/* Its pod sets as Kueue's integration built them: [{name, count}]. */
static dp_doc_node *podsets_doc(dp_doc_set *s, const dp_queue_workload *w) {
        dp_doc_node *v = dp_doc_new_seq(s);
        for (size_t p = 0; v && p < w->n_podsets; p++) {
                dp_doc_node *m = dp_doc_new_map(s);
                if (!m) return NULL;
                PUT(s, m, "name", dp_doc_new_str(s, w->podsets[p].name));
                PUT(s, m, "count", dp_doc_new_int(s, w->podsets[p].count));
                if (dp_doc_seq_add(s, v, m) < 0) return NULL;
        }
        return v;
}

/* Who preempted w (Kueue's Preempted condition) and whom w preempted. */
static dp_doc_node *preemption_doc(dp_doc_set *s, dp_doc_node *d, const dp_queue_workload *w) {
        if (w->preempted_by) {
                dp_doc_node *p = dp_doc_new_map(s);
                if (!p) return NULL;
                PUT(s, p, "by", dp_doc_new_str(s, w->preempted_by));
                PUT(s, p, "reason", dp_doc_new_str(s, w->preempted_reason));
                PUT(s, p, "message", dp_doc_new_str(s, w->preempted_message));
                PUT(s, p, "cycle", dp_doc_new_int(s, (int64_t)w->preempted_cycle));
                PUT(s, p, "times", dp_doc_new_int(s, (int64_t)w->times_preempted));
                PUT(s, d, "preempted", p);
        }
        if (!w->n_victims) return d;
        dp_doc_node *v = dp_doc_new_seq(s);
        for (size_t i = 0; v && i < w->n_victims; i++)
                if (dp_doc_seq_add(s, v, dp_doc_new_str(s, w->victims[i])) < 0) return NULL;
        PUT(s, d, "preemptedWorkloads", v);
        return d;
}

static dp_doc_node *workload_doc(dp_doc_set *s, const dp_queue_workload *w) {
        dp_doc_node *d = dp_doc_new_map(s);
        if (!d) return NULL;
        char name[600];
        snprintf(name, sizeof(name), "%s/%s", w->ns, w->name);
        PUT(s, d, "name", dp_doc_new_str(s, name));
        PUT(s, d, "kind", dp_doc_new_str(s, w->kind));
        if (w->local_queue) PUT(s, d, "localQueue", dp_doc_new_str(s, w->local_queue));
        if (w->cluster_queue) PUT(s, d, "clusterQueue", dp_doc_new_str(s, w->cluster_queue));
        PUT(s, d, "priority", dp_doc_new_int(s, w->priority));
        PUT(s, d, "state", dp_doc_new_str(s, state_name(w)));
        PUT(s, d, "podSets", podsets_doc(s, w));
        if (w->state == DP_QW_ADMITTED || w->state == DP_QW_FINISHED) {
                PUT(s, d, "flavors", flavors_doc(s, w));
                PUT(s, d, "borrowing", dp_doc_new_int(s, w->borrowing));
                PUT(s, d, "cycle", dp_doc_new_int(s, (int64_t)w->cycle));
                dp_doc_node *pa = partial_doc(s, w);
                if (pa) PUT(s, d, "partialAdmission", pa);
                /* admitted is not placed: kube-scheduler and the allocator decide (not while its checks wait) */
                if (w->placement_known && !w->checks_pending) {
                        PUT(s, d, "placedPods", dp_doc_new_int(s, w->pods_placed));
                        PUT(s, d, "unplacedPods", dp_doc_new_int(s, w->pods_unplaced));
                }
        }
        bool checks = w->state == DP_QW_ADMITTED && w->checks_pending;
        if (checks) PUT(s, d, "admissionChecksPending", dp_doc_new_str(s, w->checks_pending));
        if (checks) /* Kueue's Admitted=False reason */
                PUT(s, d, "reason", dp_doc_new_str(s, "UnsatisfiedChecks"));
        else if (w->reason)
                PUT(s, d, "reason", dp_doc_new_str(s, w->reason));
        if (w->message) PUT(s, d, "message", dp_doc_new_str(s, w->message));
        if (w->note) PUT(s, d, "note", dp_doc_new_str(s, w->note));
        return preemption_doc(s, d, w);
}

static dp_doc_node *usage_doc(dp_doc_set *s, const dp_queue *q, const qcq *c) {
        dp_doc_node *seq = dp_doc_new_seq(s);
        if (!seq) return NULL;
        for (size_t f = 0; f < q->n_fr; f++) {
                bool mine = false;
                for (size_t g = 0; g < c->cq->n_groups && !mine; g++)
                        for (size_t k = 0; k < c->cq->groups[g].n_flavors && !mine; k++)
                                mine = streq(c->cq->groups[g].flavors[k].name, q->fr[f].flavor) &&
                                       q_fr_find(q, q->fr[f].flavor, q->fr[f].resource) == (ssize_t)f;
                bool covered = false;
                for (size_t g = 0; mine && g < c->cq->n_groups && !covered; g++)
                        for (size_t i = 0; i < c->cq->groups[g].n_covered && !covered; i++)
                                covered = streq(c->cq->groups[g].covered[i], q->fr[f].resource);
                if (!mine || !covered) continue;
                dp_doc_node *u = dp_doc_new_map(s);
                char used[64], nominal[64];
                q_format(q->fr[f].resource, c->node->q[f].usage, used, sizeof(used));
                q_format(q->fr[f].resource, c->node->q[f].nominal, nominal, sizeof(nominal));
                if (!u) return NULL;
                PUT(s, u, "flavor", dp_doc_new_str(s, q->fr[f].flavor));
                PUT(s, u, "resource", dp_doc_new_str(s, q->fr[f].resource));
                PUT(s, u, "used", dp_doc_new_str(s, used));
                PUT(s, u, "nominal", dp_doc_new_str(s, nominal));
                if (dp_doc_seq_add(s, seq, u) < 0) return NULL;
        }
        return seq;
}

static dp_doc_node *cq_doc(dp_doc_set *s, const dp_queue *q, const qcq *c) {
        dp_doc_node *d = dp_doc_new_map(s), *wls = dp_doc_new_seq(s);
        if (!d || !wls) return NULL;
        int64_t admitted = 0, pending = 0, reserved = 0;
        for (size_t i = 0; i < q->n_wl; i++) {
                const dp_queue_workload *w = &q->wl[i];
                if (!w->cluster_queue || w->state == DP_QW_INADMISSIBLE || w->cq != (size_t)(c - q->cqs)) continue;
                admitted += dp_queue_workload_runs(w);
                reserved += w->state == DP_QW_ADMITTED && !dp_queue_workload_runs(w);
                pending += w->state == DP_QW_PENDING;
                dp_doc_node *wd = workload_doc(s, w);
                if (q_tas_encode(s, q, w, wd) < 0 || dp_doc_seq_add(s, wls, wd) < 0) return NULL;
        }
        PUT(s, d, "name", dp_doc_new_str(s, c->cq->x.meta.name));
        if (c->cq->cohort) PUT(s, d, "cohort", dp_doc_new_str(s, c->cq->cohort));
        PUT(s, d, "queueingStrategy",
            dp_doc_new_str(s, c->cq->queueing == DP_KQ_STRICT_FIFO ? "StrictFIFO" : "BestEffortFIFO"));
        if (c->cq->has_weight) { /* fairSharing.weight (or --set-weight) */
                char wt[DP_QUANTITY_MAX_LEN];
                dp_quantity_format(&c->cq->weight, wt, sizeof(wt));
                PUT(s, d, "fairSharingWeight", dp_doc_new_str(s, wt));
        }
        PUT(s, d, "active", dp_doc_new_bool(s, !c->inactive));
        if (c->inactive) PUT(s, d, "inactiveReason", dp_doc_new_str(s, c->inactive));
        if (c->inactive_msg) PUT(s, d, "inactiveMessage", dp_doc_new_str(s, c->inactive_msg));
        PUT(s, d, "admitted", dp_doc_new_int(s, admitted));
        PUT(s, d, "pending", dp_doc_new_int(s, pending));
        if (reserved) PUT(s, d, "quotaReserved", dp_doc_new_int(s, reserved)); /* waiting for admission checks */
        PUT(s, d, "usage", usage_doc(s, q, c));
        if (q->fair_sharing) PUT(s, d, "weightedShare", dp_doc_new_int(s, q_weighted_share(q, c->node)));
        PUT(s, d, "workloads", wls);
        return d;
}

dp_doc_node *dp_queue_encode(dp_doc_set *s, const dp_queue *q) {
        dp_doc_node *d = dp_doc_new_map(s), *cqs = dp_doc_new_seq(s), *lost = dp_doc_new_seq(s);
        if (!q || !d || !cqs || !lost) return NULL;
        for (size_t c = 0; c < q->n_cqs; c++)
                if (dp_doc_seq_add(s, cqs, cq_doc(s, q, &q->cqs[c])) < 0) return NULL;
        for (size_t i = 0; i < q->n_wl; i++)
                if (q->wl[i].state == DP_QW_INADMISSIBLE && dp_doc_seq_add(s, lost, workload_doc(s, &q->wl[i])) < 0)
                        return NULL;
        PUT(s, d, "cycles", dp_doc_new_int(s, (int64_t)q->cycles));
        PUT(s, d, "fairSharing", dp_doc_new_bool(s, q->fair_sharing));
        PUT(s, d, "clusterQueues", cqs);
        PUT(s, d, "inadmissible", lost);
        if (q->history) PUT(s, d, "usageOverTime", q_history_encode(s, q)); /* history.c */
        return d;
}

/* ---- text ---- */

static const char *str_of(const dp_doc_node *n, const char *key) {
        const dp_doc_node *v = dp_doc_get(n, key);
        return v && v->type == DP_DOC_SCALAR ? v->str : "";
}

static void workload_line(const dp_doc_node *w, dp_strbuf *out) {
        const dp_doc_node *f = dp_doc_get(w, "flavors");
        bool flavors = f && f->type == DP_DOC_MAP && f->n;
        dp_strbuf_printf(out, "  %-40s %-8s ", str_of(w, "name"), str_of(w, "kind"));
        dp_strbuf_printf(out, flavors ? "%-12s" : "%s", str_of(w, "state"));
        for (size_t i = 0; flavors && i < f->n; i++)
                dp_strbuf_printf(out, "%s%s=%s", i ? "," : " ", f->pairs[i].key, f->pairs[i].value->str);
        const char *b = str_of(w, "borrowing");
        if (b[0] && !streq(b, "0")) dp_strbuf_printf(out, " (borrowing)");
        dp_strbuf_putc(out, '\n');
        q_tas_print(w, out);
        if (!streq(str_of(w, "state"), "Admitted") && str_of(w, "message")[0])
                dp_strbuf_printf(out, "      %s: %s\n", str_of(w, "reason"), str_of(w, "message"));
        const dp_doc_node *pa = dp_doc_get(w, "partialAdmission");
        for (size_t i = 0; pa && pa->type == DP_DOC_SEQ && i < pa->n; i++)
                dp_strbuf_printf(out, "      partially admitted: %s\n", pa->items[i]->str);
        const char *up = str_of(w, "unplacedPods");
        if (up[0] && !streq(up, "0"))
                dp_strbuf_printf(out, "      admitted but not placed: %s of its pods Pending (kube-scheduler)\n", up);
        if (str_of(w, "admissionChecksPending")[0])
                dp_strbuf_printf(out,
                                 "      admission check(s) not Ready: %s (admitted, its pods run, once they are)\n",
                                 str_of(w, "admissionChecksPending"));
        if (str_of(w, "note")[0]) dp_strbuf_printf(out, "      note: %s\n", str_of(w, "note"));
        const dp_doc_node *p = dp_doc_get(w, "preempted"), *v = dp_doc_get(w, "preemptedWorkloads");
        if (p && p->type == DP_DOC_MAP)
                dp_strbuf_printf(out, "      preempted by %s in cycle %s (%s)\n", str_of(p, "by"), str_of(p, "cycle"),
                                 str_of(p, "reason"));
        for (size_t i = 0; v && v->type == DP_DOC_SEQ && i < v->n; i++)
                dp_strbuf_printf(out, "%s%s%s", i ? ", " : "      preempted ", v->items[i]->str, i + 1 == v->n ? "\n" : "");
}

void dp_queue_print(const dp_doc_node *doc, dp_strbuf *out) {
        const dp_doc_node *cqs = dp_doc_get(doc, "clusterQueues"), *lost = dp_doc_get(doc, "inadmissible");
        dp_strbuf_printf(out, "Kueue admission (%s cycles%s)\n", str_of(doc, "cycles"),
                         streq(str_of(doc, "fairSharing"), "true") ? ", fair sharing" : "");
        for (size_t c = 0; cqs && c < cqs->n; c++) {
                const dp_doc_node *cq = cqs->items[c], *use = dp_doc_get(cq, "usage");
                dp_strbuf_printf(out, "ClusterQueue %s%s%s%s, %s%s: %s admitted, %s pending;", str_of(cq, "name"),
                                 str_of(cq, "cohort")[0] ? " (cohort " : "", str_of(cq, "cohort"),
                                 str_of(cq, "cohort")[0] ? ")" : "", str_of(cq, "queueingStrategy"),
                                 streq(str_of(cq, "active"), "true") ? "" : ", inactive", str_of(cq, "admitted"),
                                 str_of(cq, "pending"));
                for (size_t i = 0; use && i < use->n; i++)
                        dp_strbuf_printf(out, " %s %s %s/%s", str_of(use->items[i], "resource"),
                                         str_of(use->items[i], "flavor"), str_of(use->items[i], "used"),
                                         str_of(use->items[i], "nominal"));
                if (str_of(cq, "weightedShare")[0]) dp_strbuf_printf(out, "; weighted share %s", str_of(cq, "weightedShare"));
                if (str_of(cq, "quotaReserved")[0])
                        dp_strbuf_printf(out, "; %s quota reserved (admission checks)", str_of(cq, "quotaReserved"));
                dp_strbuf_putc(out, '\n');
                if (str_of(cq, "inactiveMessage")[0])
                        dp_strbuf_printf(out, "  %s: %s\n", str_of(cq, "inactiveReason"),
                                         str_of(cq, "inactiveMessage"));
                const dp_doc_node *wls = dp_doc_get(cq, "workloads");
                for (size_t i = 0; wls && i < wls->n; i++)
                        workload_line(wls->items[i], out);
        }
        if (lost && lost->n) dp_strbuf_puts(out, "Not in any ClusterQueue:\n");
        for (size_t i = 0; lost && i < lost->n; i++)
                workload_line(lost->items[i], out);
}
