/* SPDX-License-Identifier: Apache-2.0
 *
 * queue.c — a dp_queue: the Kueue objects taken from the input, its
 * ClusterQueues (active or not, and why), where each workload queues (its
 * LocalQueue, its ClusterQueue, the namespace selector), what the input
 * already admitted, and each ClusterQueue's queue order (priority, then
 * creation, then input order).
 */
#include <stdarg.h>
#include <stdio.h>

#include "base/strv.h"
#include "queue/tas.h"

static int take_objects(dp_queue *q, dp_object_list *l) {
        size_t k = 0, n = 0;
        for (size_t i = 0; i < l->n; i++)
                n += dp_queue_kind(l->items[i]) != DP_KQ_NONE;
        if (!(q->owned = calloc(n + 1, sizeof(dp_object)))) return -ENOMEM;
        for (size_t i = 0; i < l->n; i++) {
                if (dp_queue_kind(l->items[i]) != DP_KQ_NONE)
                        q->owned[q->n_owned++] = l->items[i];
                else
                        l->items[k++] = l->items[i];
        }
        l->n = k;
        return 0;
}

static bool flavor_exists(const dp_queue *q, const char *name) { return q_index_get(q, "F\x1f%s", name) != NULL; }

static int cmp_cq(const void *a, const void *b) {
        return strcmp(((const qcq *)a)->cq->x.meta.name, ((const qcq *)b)->cq->x.meta.name);
}

static int cluster_queues(dp_queue *q) {
        if (!(q->cqs = calloc(q->n_owned + 1, sizeof(qcq)))) return -ENOMEM;
        for (size_t i = 0; i < q->n_owned; i++) {
                if (dp_queue_kind(q->owned[i]) != DP_KQ_CLUSTER_QUEUE) continue;
                qcq *c = &q->cqs[q->n_cqs++];
                c->cq = (const dp_cluster_queue *)q->owned[i].ext;
                if (c->cq->stop_policy && !streq(c->cq->stop_policy, "None")) c->inactive = "stopPolicy";
                for (size_t g = 0; g < c->cq->n_groups && !c->inactive; g++)
                        for (size_t f = 0; f < c->cq->groups[g].n_flavors && !c->inactive; f++)
                                if (!flavor_exists(q, c->cq->groups[g].flavors[f].name)) c->inactive = "FlavorNotFound";
                if (q_checks_cluster_queue(q, c) < 0) return -ENOMEM; /* its admission checks (checks.c) */
        }
        if (q->n_cqs) qsort(q->cqs, q->n_cqs, sizeof(*q->cqs), cmp_cq);
        for (size_t i = 0; i < q->n_cqs; i++)
                if (q_index_put(q, (void *)(uintptr_t)(i + 1), "C\x1f%s", q->cqs[i].cq->x.meta.name) < 0) return -ENOMEM;
        return 0;
}

static ssize_t cq_index(const dp_queue *q, const char *name) {
        uintptr_t v = (uintptr_t)q_index_get(q, "C\x1f%s", name);
        return v ? (ssize_t)v - 1 : -1;
}

static const dp_local_queue *local_queue(const dp_queue *q, const char *ns, const char *name) {
        return q_index_get(q, "L\x1f%s\x1f%s", ns, name);
}

/* ---- namespace selectors ---- */

static bool selector_matches(const dp_label_selector *ls, const dp_kv *labels, size_t n) {
        if (!ls) return false; /* a nil selector selects nothing */
        for (size_t i = 0; i < ls->n_match_labels; i++)
                if (!streq_ptr(dp_kv_get(labels, n, ls->match_labels[i].key), ls->match_labels[i].value)) return false;
        for (size_t i = 0; i < ls->n_match_expressions; i++) {
                const dp_node_selector_requirement *e = &ls->match_expressions[i];
                const char *v = dp_kv_get(labels, n, e->key);
                bool in = false;
                for (size_t k = 0; v && k < e->n_values; k++)
                        in |= streq(e->values[k], v);
                bool ok = e->op == DP_NS_OP_IN       ? in
                          : e->op == DP_NS_OP_NOT_IN ? !in
                          : e->op == DP_NS_OP_EXISTS ? v != NULL
                                                     : v == NULL;
                if (!ok) return false;
        }
        return true;
}

/* The namespace's labels: its object's, and kubernetes.io/metadata.name,
 * which the API server sets on every namespace. */
static bool namespace_selected(const dp_queue *q, const dp_label_selector *ls, const char *ns) {
        const dp_namespace *obj = q_index_get(q, "N\x1f%s", ns);
        size_t n = obj ? obj->meta.n_labels : 0;
        _cleanup_free_ dp_kv *labels = calloc(n + 1, sizeof(dp_kv));
        if (!labels) return false;
        for (size_t i = 0; i < n; i++)
                labels[i] = obj->meta.labels[i];
        if (!dp_kv_get(labels, n, "kubernetes.io/metadata.name"))
                labels[n++] = (dp_kv){(char *)"kubernetes.io/metadata.name", (char *)ns};
        return selector_matches(ls, labels, n);
}

/* ---- where each workload queues ---- */

static int set_text(char **field, const char *fmt, ...) _printf_(2, 3);
static int set_text(char **field, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        char *s = NULL;
        if (vasprintf(&s, fmt, ap) < 0) s = NULL;
        va_end(ap);
        if (!s) return -ENOMEM;
        free(*field);
        *field = s;
        return 0;
}

/* A Workload the input shows admitted: its quota is used from the start
 * (count: added to its ClusterQueue's usage; not when q_reset_admission
 * puts it back, the saved usage has it) and held (what eviction gives back). */
static int preadmit(dp_queue *q, dp_queue_workload *w, const dp_kq_workload *kw, qcq *c, bool count) {
        w->state = DP_QW_ADMITTED;
        q_state_changed(q, w);
        w->preadmitted = true;
        if (kw->reserved_at && !w->reserved_at && !(w->reserved_at = strdup(kw->reserved_at))) return -ENOMEM;
        for (size_t p = 0; p < w->n_podsets; p++)
                w->podsets[p].admitted_count = w->podsets[p].count;
        for (size_t a = 0; a < kw->n_assignments; a++) {
                const dp_kq_podset_assignment *pa = &kw->assignments[a];
                for (size_t p = 0; p < w->n_podsets; p++) {
                        dp_queue_podset *ps = &w->podsets[p];
                        if (!streq(ps->name, pa->name)) continue;
                        int32_t pods = pa->has_count ? pa->count : ps->count;
                        ps->admitted_count = pods;
                        for (size_t i = 0; i < ps->n_requests; i++) {
                                const char *f = dp_kv_get(pa->flavors, pa->n_flavors, ps->requests[i].name);
                                if (!f) continue;
                                free(ps->flavors[i]);
                                if (!(ps->flavors[i] = strdup(f))) return -ENOMEM;
                                ssize_t fr = q_fr_find(q, f, ps->requests[i].name);
                                if (fr < 0) continue;
                                if (count) q_add_usage(c->node, (size_t)fr, ps->requests[i].value * pods);
                                if (q_held_add(q, (size_t)(w - q->wl), (size_t)fr, ps->requests[i].value * pods) < 0)
                                        return -ENOMEM;
                        }
                }
        }
        int r = set_text(&w->message, "Quota reserved in ClusterQueue %s", c->cq->x.meta.name);
        return r < 0 ? r : q_checks_reserved(q, (size_t)(w - q->wl)); /* admitted once its checks are Ready */
}

static const dp_kq_workload *workload_object(const dp_queue *q, const dp_queue_workload *w) {
        return streq(w->kind, "Workload") ? q_index_get(q, "O\x1f%s\x1f%s", w->ns, w->name) : NULL;
}

static int place(dp_queue *q, size_t i) {
        dp_queue_workload *w = &q->wl[i];
        const dp_local_queue *lq = w->local_queue ? local_queue(q, w->ns, w->local_queue) : NULL;
        const dp_kq_workload *kw = workload_object(q, w);
        const char *cq_name = kw && kw->admitted_cq ? kw->admitted_cq : lq ? lq->cluster_queue : NULL;
        w->reason = strdup("Pending");
        if (!w->reason) return -ENOMEM;
        if (!cq_name) {
                w->state = DP_QW_INADMISSIBLE;
                free(w->reason);
                w->reason = strdup("Inadmissible");
                return !w->reason ? -ENOMEM
                                  : set_text(&w->message, "LocalQueue %s doesn't exist",
                                             w->local_queue ? w->local_queue : "\"\"");
        }
        if (!(w->cluster_queue = strdup(cq_name))) return -ENOMEM;
        ssize_t c = cq_index(q, cq_name);
        if (c < 0) {
                w->state = DP_QW_INADMISSIBLE;
                free(w->reason);
                w->reason = strdup("Inadmissible");
                return !w->reason ? -ENOMEM : set_text(&w->message, "ClusterQueue %s doesn't exist", cq_name);
        }
        w->cq = (size_t)c;
        qcq *cq = &q->cqs[c];
        q->ns_ok[i] = namespace_selected(q, cq->cq->namespace_selector, w->ns);
        if (cq->inactive && !(kw && kw->admitted_cq)) return set_text(&w->message, "ClusterQueue %s is inactive", cq_name);
        char rejected[512]; /* a check rejected it: Kueue deactivates it (checks.c) */
        if (q_checks_rejected(kw, rejected, sizeof(rejected))) {
                free(w->reason);
                w->reason = strdup("DeactivatedDueToAdmissionCheck");
                return !w->reason ? -ENOMEM : set_text(&w->message, "%s", rejected);
        }
        if (w->dra_message && !(kw && kw->admitted_cq)) { /* Kueue's workload controller refuses its claims: never a head */
                free(w->reason);
                w->reason = strdup("Inadmissible");
                return !w->reason ? -ENOMEM : set_text(&w->message, "%s", w->dra_message);
        }
        /* admitted ones too: preempted, they queue again */
        size_t *v = realloc(cq->wl, (cq->n_wl + 1) * sizeof(*v));
        if (!v) return -ENOMEM;
        cq->wl = v;
        v[cq->n_wl++] = i;
        return kw && kw->admitted_cq ? preadmit(q, w, kw, cq, true) : 0;
}

/* Kueue's queue order inside one ClusterQueue. */
static int cmp_queue_order(const void *a, const void *b, void *userdata) {
        const dp_queue *q = userdata;
        const dp_queue_workload *x = &q->wl[*(const size_t *)a], *y = &q->wl[*(const size_t *)b];
        if (x->priority != y->priority) return x->priority > y->priority ? -1 : 1;
        if (x->created && y->created) {
                int c = strcmp(x->created, y->created);
                if (c) return c;
        }
        return x->order < y->order ? -1 : x->order > y->order;
}

static int unmanaged_warning(dp_object_list *l, dp_error *err) {
        size_t n = 0;
        for (size_t i = 0; i < l->n; i++) {
                dp_kind k = l->items[i].hdr->kind;
                const dp_object_meta *m = dp_object_meta_of(l->items[i]);
                n += (k == DP_KIND_JOB || k == DP_KIND_POD) && dp_kv_get(m->labels, m->n_labels, DP_KUEUE_QUEUE_LABEL);
        }
        if (n && dp_object_list_warn(l,
                                     "%zu Job(s)/Pod(s) labelled %s and no Kueue object (ClusterQueue, LocalQueue...) "
                                     "in the input: taken as a cluster without Kueue, they run as written",
                                     n, DP_KUEUE_QUEUE_LABEL) < 0)
                return dp_error_set(err, -ENOMEM, "out of memory");
        return 0;
}

int dp_queue_warn_input(dp_object_list *l, dp_error *err) {
        assert_return(l, -EINVAL);
        for (size_t i = 0; i < l->n; i++)
                if (dp_queue_kind(l->items[i]) != DP_KQ_NONE) return q_pod_group_warnings(l, err);
        return unmanaged_warning(l, err);
}

/* --set-quota: the nominalQuota of one flavor-resource of a ClusterQueue
 * (the ClusterQueues are the queue's own objects by now). */
static int set_quota(dp_queue *q, const dp_queue_set_quota *sq, dp_error *err) {
        ssize_t c = cq_index(q, sq->cq);
        if (c < 0)
                return dp_error_set(err, -EINVAL, "--set-quota %s/%s/%s: ClusterQueue %s is not in the input", sq->cq,
                                    sq->flavor, sq->resource, sq->cq);
        dp_cluster_queue *cq = (dp_cluster_queue *)q->cqs[c].cq;
        for (size_t g = 0; g < cq->n_groups; g++)
                for (size_t f = 0; f < cq->groups[g].n_flavors; f++) {
                        dp_kq_flavor_quotas *fq = &cq->groups[g].flavors[f];
                        if (!streq(fq->name, sq->flavor)) continue;
                        for (size_t k = 0; k < fq->n_resources; k++)
                                if (streq(fq->resources[k].name, sq->resource)) {
                                        fq->resources[k].nominal = sq->value;
                                        return 0;
                                }
                        return dp_error_set(err, -EINVAL,
                                            "--set-quota %s/%s/%s: flavor %s of ClusterQueue %s has no quota for %s "
                                            "(coveredResources)",
                                            sq->cq, sq->flavor, sq->resource, sq->flavor, sq->cq, sq->resource);
                }
        return dp_error_set(err, -EINVAL, "--set-quota %s/%s/%s: ClusterQueue %s has no flavor %s", sq->cq, sq->flavor,
                            sq->resource, sq->cq, sq->flavor);
}

static int apply_whatif(dp_queue *q, dp_error *err) {
        const dp_queue_options *o = q->opts;
        for (size_t i = 0; o && i < o->n_quotas; i++) {
                int r = set_quota(q, &o->quotas[i], err);
                if (r < 0) return r;
        }
        for (size_t i = 0; o && i < o->n_weights; i++) {
                ssize_t c = cq_index(q, o->weights[i].cq);
                if (c < 0)
                        return dp_error_set(err, -EINVAL, "--set-weight %s: ClusterQueue %s is not in the input",
                                            o->weights[i].cq, o->weights[i].cq);
                dp_cluster_queue *cq = (dp_cluster_queue *)q->cqs[c].cq;
                cq->has_weight = true;
                cq->weight = o->weights[i].weight;
        }
        int r = q_apply_set_preemption(q, err);
        return r < 0 ? r : q_checks_whatif(q, err); /* --set-check (checks.c) */
}

int dp_queue_new(dp_object_list *l, dp_queue **ret, dp_error *err) { return dp_queue_new_opts(l, NULL, ret, err); }

int dp_queue_new_opts(dp_object_list *l, const dp_queue_options *opts, dp_queue **ret, dp_error *err) {
        assert_return(l && ret, -EINVAL);
        _cleanup_(dp_queue_freep) dp_queue *q = calloc(1, sizeof(*q));
        if (!q || take_objects(q, l) < 0 || q_index_objects(q) < 0 || q_index_input(q, l) < 0 || cluster_queues(q) < 0)
                return dp_error_set(err, -ENOMEM, "out of memory");
        q->opts = opts;
        dp_queue_set_fair_sharing(q, false); /* the Configuration's fairSharing.enable */
        int r = apply_whatif(q, err);
        if (r >= 0) r = q_build_tree(q, err);
        if (r >= 0 && q_tas_new(q, l) < 0) r = dp_error_set(err, -ENOMEM, "out of memory");
        /* no Kueue object at all: a cluster without Kueue, where the label
         * means nothing and Jobs run as written */
        if (r >= 0 && q->n_owned) r = q_workloads(q, l, err);
        else if (r >= 0) r = unmanaged_warning(l, err);
        if (r < 0) return r;
        q->set_aside = calloc(q->n_wl + 1, sizeof(bool));
        q->ns_ok = calloc(q->n_wl + 1, sizeof(bool));
        if (!q->set_aside || !q->ns_ok) return dp_error_set(err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < q->n_wl; i++)
                if (place(q, i) < 0 || q_index_put(q, (void *)(uintptr_t)(i + 1), "W\x1f%s\x1f%s\x1f%s",
                                                      q->wl[i].kind, q->wl[i].ns, q->wl[i].name) < 0)
                        return dp_error_set(err, -ENOMEM, "out of memory");
        for (size_t c = 0; c < q->n_cqs; c++)
                if (q->cqs[c].n_wl) qsort_r(q->cqs[c].wl, q->cqs[c].n_wl, sizeof(size_t), cmp_queue_order, q);
        if (q_afs_init(q) < 0) return dp_error_set(err, -ENOMEM, "out of memory");
        if (!(q->usage0 = q_usage_save(q))) return dp_error_set(err, -ENOMEM, "out of memory");
        *ret = TAKE_PTR(q);
        return 0;
}

static void workload_done(dp_queue_workload *w) {
        for (size_t p = 0; p < w->n_podsets; p++) {
                dp_queue_podset *ps = &w->podsets[p];
                for (size_t i = 0; i < ps->n_requests; i++) {
                        free(ps->requests[i].name);
                        if (ps->flavors) free(ps->flavors[i]);
                }
                free(ps->requests);
                free(ps->flavors);
                free(ps->name);
        }
        free(w->podsets);
        free(w->kind);
        free(w->ns);
        free(w->name);
        free(w->local_queue);
        free(w->cluster_queue);
        free(w->created);
        free(w->reason);
        free(w->message);
        free(w->note);
        free(w->reserved_at);
        free(w->preempted_by);
        free(w->preempted_reason);
        free(w->preempted_message);
        dp_strv_free_n(w->victims, w->n_victims);
        free(w->dra_message);
        free(w->checks_pending);
}

dp_queue *dp_queue_free(dp_queue *q) {
        if (!q) return NULL;
        for (size_t i = 0; i < q->n_wl; i++)
                workload_done(&q->wl[i]);
        free(q->wl);
        for (size_t i = 0; i < q->n_cqs; i++) {
                free(q->cqs[i].wl);
                free(q->cqs[i].adm);
                free(q->cqs[i].inactive_msg);
                q_groups_free(&q->cqs[i]);
        }
        free(q->cqs);
        q_afs_free(q);
        for (size_t i = 0; i < q->n_nodes; i++) {
                free(q->nodes[i]->kids);
                free(q->nodes[i]->pool);
                free(q->nodes[i]->q);
                free(q->nodes[i]);
        }
        free(q->nodes);
        free(q->fr);
        free(q->set_aside);
        free(q->ns_ok);
        q_held_free(q);
        q_preempt_free(q);
        q_tas_free(q);
        q_history_free(q);
        free(q->usage0);
        q_index_free(q);
        for (size_t i = 0; i < q->n_owned; i++)
                dp_object_free(q->owned[i]);
        free(q->owned);
        free(q);
        return NULL;
}

size_t dp_queue_n_workloads(const dp_queue *q) { return q ? q->n_wl : 0; }
size_t dp_queue_n_cluster_queues(const dp_queue *q) { return q ? q->n_cqs : 0; }

const dp_queue_workload *dp_queue_workload_at(const dp_queue *q, size_t i) {
        return q && i < q->n_wl ? &q->wl[i] : NULL;
}

/* Forget what one run of admission did to w: pending, no flavors, no
 * preemption record. */
static void unadmit(dp_queue *q, size_t i) {
        dp_queue_workload *w = &q->wl[i];
        q->set_aside[i] = false;
        w->state = DP_QW_PENDING;
        q_state_changed(q, w);
        w->borrowing = 0;
        w->cycle = 0;
        for (size_t p = 0; p < w->n_podsets; p++) {
                w->podsets[p].tmpl = w->podsets[p].tmpl_kept;
                for (size_t r = 0; r < w->podsets[p].n_requests; r++) {
                        free(w->podsets[p].flavors[r]);
                        w->podsets[p].flavors[r] = NULL;
                }
        }
        free(w->preempted_by);
        free(w->preempted_reason);
        free(w->preempted_message);
        w->preempted_by = w->preempted_reason = w->preempted_message = NULL;
        w->preempted_cycle = w->times_preempted = 0;
        dp_strv_free_n(w->victims, w->n_victims);
        w->victims = NULL;
        w->n_victims = 0;
}

static void recount_usage(dp_queue *q);

int q_reset_admission(dp_queue *q) {
        q_held_free(q); /* rebuilt below for the Workloads admitted in the input */
        q_tas_reset(q);
        q_history_free(q); /* the trials start over */
        q->churning = false;
        bool finished = false;
        for (size_t c = 0; c < q->n_cqs; c++) {
                qcq *cq = &q->cqs[c];
                cq->next = 0;
                cq->sticky = 0;
                cq->blocked = false;
                for (size_t k = 0; k < cq->n_wl; k++) {
                        dp_queue_workload *w = &q->wl[cq->wl[k]];
                        /* over time: it ran, it stays done (explain's trials
                         * mark workloads deleted by hand so too) */
                        finished |= w->state == DP_QW_FINISHED;
                        if (w->state == DP_QW_FINISHED) continue;
                        unadmit(q, cq->wl[k]);
                        /* the input's admission, even when a run since evicted it */
                        const dp_kq_workload *kw = workload_object(q, w);
                        int r = kw && kw->admitted_cq ? preadmit(q, w, kw, cq, false) : 0;
                        if (r < 0) return r;
                }
        }
        q_usage_restore(q, q->usage0);
        if (finished) recount_usage(q); /* usage0 counts those the input admitted */
        q_afs_reset(q);
        q->cycles = 0;
        return 0;
}

/* ---- over time ---- */

void dp_queue_set_over_time(dp_queue *q, bool on) {
        if (q) q->over_time = on;
}

bool dp_queue_over_time(const dp_queue *q) { return q && q->over_time; }

ssize_t dp_queue_index(const dp_queue *q, const char *kind, const char *ns, const char *name) {
        if (!q || !kind || !name) return -1;
        uintptr_t v = (uintptr_t)q_index_get(q, "W\x1f%s\x1f%s\x1f%s", kind, ns && ns[0] ? ns : "default", name);
        return v ? (ssize_t)v - 1 : -1;
}

/* The flavor pod set ps took for the group covering res, NULL when none
 * of its requests went there ("pods" is counted, not requested). */
static const char *group_flavor(const dp_cluster_queue *cq, const dp_queue_podset *ps, const char *res) {
        for (size_t g = 0; g < cq->n_groups; g++) {
                bool covers = false;
                for (size_t k = 0; k < cq->groups[g].n_covered && !covers; k++)
                        covers = streq(cq->groups[g].covered[k], res);
                for (size_t i = 0; covers && i < ps->n_requests; i++)
                        for (size_t k = 0; ps->flavors[i] && k < cq->groups[g].n_covered; k++)
                                if (streq(cq->groups[g].covered[k], ps->requests[i].name)) return ps->flavors[i];
        }
        return NULL;
}

static void add_workload_usage(dp_queue *q, const dp_queue_workload *w) {
        qcq *c = &q->cqs[w->cq];
        for (size_t p = 0; p < w->n_podsets; p++) {
                const dp_queue_podset *ps = &w->podsets[p];
                bool pods = false;
                for (size_t i = 0; i < ps->n_requests; i++) {
                        pods |= streq(ps->requests[i].name, "pods");
                        ssize_t fr = ps->flavors[i] ? q_fr_find(q, ps->flavors[i], ps->requests[i].name) : -1;
                        if (fr >= 0) q_add_usage(c->node, (size_t)fr, ps->requests[i].value * ps->admitted_count);
                }
                const char *pf = pods ? NULL : group_flavor(c->cq, ps, "pods");
                ssize_t fr = pf ? q_fr_find(q, pf, "pods") : -1;
                if (fr >= 0) q_add_usage(c->node, (size_t)fr, ps->admitted_count);
        }
}

/* Every node's usage counted again from the workloads admitted now. */
static void recount_usage(dp_queue *q) {
        for (size_t n = 0; n < q->n_nodes; n++)
                for (size_t f = 0; f < q->n_fr; f++)
                        q->nodes[n]->q[f].usage = 0;
        for (size_t i = 0; i < q->n_wl; i++)
                if (q->wl[i].state == DP_QW_ADMITTED) add_workload_usage(q, &q->wl[i]);
}

int dp_queue_finish(dp_queue *q, size_t i) {
        assert_return(q && i < q->n_wl, -EINVAL);
        if (q->wl[i].state != DP_QW_ADMITTED) return -EINVAL;
        q->wl[i].state = DP_QW_FINISHED;
        q_state_changed(q, &q->wl[i]);
        free(q->wl[i].reason);
        q->wl[i].reason = strdup("Finished");
        q->recount = true; /* once, before the next cycle (dp_queue_readmit) */
        if (q_history_finished(q, i) < 0) return -ENOMEM;
        return q->wl[i].reason ? set_text(&q->wl[i].message, "its pods ended: quota released") : -ENOMEM;
}

int dp_queue_readmit(dp_queue *q, dp_error *err) {
        assert_return(q, -EINVAL);
        if (q->recount) recount_usage(q);
        if (q->recount && q_history_sample(q) < 0) return dp_error_set(err, -ENOMEM, "out of memory");
        q->recount = false;
        for (size_t c = 0; c < q->n_cqs; c++) {
                q->cqs[c].next = 0;
                q->cqs[c].blocked = false;
                for (size_t k = 0; k < q->cqs[c].n_wl; k++) {
                        dp_queue_workload *w = &q->wl[q->cqs[c].wl[k]];
                        q->set_aside[q->cqs[c].wl[k]] = false;
                        for (size_t p = 0; p < w->n_podsets; p++)
                                w->podsets[p].tmpl = w->podsets[p].tmpl_kept;
                }
        }
        return dp_queue_admit(q, err);
}

void dp_queue_placement_clear(dp_queue *q) {
        for (size_t i = 0; q && i < q->n_wl; i++) {
                q->wl[i].placement_known = true;
                q->wl[i].pods_placed = q->wl[i].pods_unplaced = 0;
        }
}

void dp_queue_placement_add(dp_queue *q, const char *kind, const char *ns, const char *name, bool placed) {
        if (!q || !kind || !name) return;
        uintptr_t v = (uintptr_t)q_index_get(q, "W\x1f%s\x1f%s\x1f%s", kind, ns && ns[0] ? ns : "default", name);
        if (!v) return;
        dp_queue_workload *w = &q->wl[v - 1];
        if (placed)
                w->pods_placed++;
        else
                w->pods_unplaced++;
}

const dp_queue_workload *dp_queue_find(const dp_queue *q, const char *ns, const char *name) {
        for (size_t i = 0; q && i < q->n_wl; i++)
                if (streq(q->wl[i].ns, ns ? ns : "default") && streq(q->wl[i].name, name)) return &q->wl[i];
        /* a pod of a pod group, a Job of a JobSet: its workload (podgroup.c, workloads.c) */
        ssize_t i = dp_queue_index(q, "Pod", ns, name);
        if (i < 0) i = dp_queue_index(q, "Job", ns, name);
        return i >= 0 && !streq(q->wl[i].kind, "Pod") && !streq(q->wl[i].kind, "Job") ? &q->wl[i] : NULL;
}
