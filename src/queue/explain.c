/* SPDX-License-Identifier: Apache-2.0
 *
 * explain.c — `devplane explain` for a workload: why Kueue does not admit it
 * (Kueue's condition message, its ClusterQueue's usage) and what would let
 * it in: the nominal quota to add per flavor and resource (found by trials:
 * the whole input admitted again with more quota, grown until the workload
 * gets in, then bisected to the least amount), or the missing LocalQueue, ClusterQueue,
 * namespace selection or DeviceClass mapping. Also the what-if flags'
 * parsers (--set-quota CQ/FLAVOR/RESOURCE=QUANTITY, --set-weight CQ=W).
 *
 * What to preempt (the --set-preemption changes, the workloads to delete by
 * hand) and why a workload was preempted are explain-preempt.c's; what
 * places an admitted workload's Pending pods (--add-nodes) explain-nodes.c's.
 */
#include <stdio.h>

#include "queue/queue-internal.h"

/* ---- what-if flags ---- */

int dp_queue_options_add_quota(dp_queue_options *o, const char *arg, dp_error *err) {
        assert_return(o && arg, -EINVAL);
        const char *s1 = strchr(arg, '/'), *s2 = s1 ? strchr(s1 + 1, '/') : NULL, *eq = s2 ? strrchr(s2, '=') : NULL;
        if (!s1 || !s2 || !eq || s1 == arg || s2 == s1 + 1 || eq == s2 + 1 || !eq[1])
                return dp_error_set(err, -EINVAL, "--set-quota %s: must be CLUSTERQUEUE/FLAVOR/RESOURCE=QUANTITY", arg);
        dp_quantity v;
        dp_error qe = DP_ERROR_INIT;
        if (dp_quantity_parse(eq + 1, &v, &qe) < 0 || v.nanos < 0)
                return dp_error_set(err, -EINVAL, "--set-quota %s: %s: must be a quantity >= 0", arg, eq + 1);
        dp_queue_set_quota *x = realloc(o->quotas, (o->n_quotas + 1) * sizeof(*x));
        if (!x) return dp_error_set(err, -ENOMEM, "out of memory");
        o->quotas = x;
        dp_queue_set_quota *q = &x[o->n_quotas];
        *q = (dp_queue_set_quota){strndup(arg, (size_t)(s1 - arg)), strndup(s1 + 1, (size_t)(s2 - s1 - 1)),
                                  strndup(s2 + 1, (size_t)(eq - s2 - 1)), v};
        o->n_quotas++; /* freed by dp_queue_options_done, filled or not */
        return q->cq && q->flavor && q->resource ? 0 : dp_error_set(err, -ENOMEM, "out of memory");
}

int dp_queue_options_add_weight(dp_queue_options *o, const char *arg, dp_error *err) {
        assert_return(o && arg, -EINVAL);
        const char *eq = strrchr(arg, '=');
        dp_quantity v;
        dp_error qe = DP_ERROR_INIT;
        if (!eq || eq == arg || dp_quantity_parse(eq + 1, &v, &qe) < 0 || v.nanos < 0)
                return dp_error_set(err, -EINVAL, "--set-weight %s: must be CLUSTERQUEUE=WEIGHT (a quantity >= 0)",
                                    arg);
        dp_queue_set_weight *x = realloc(o->weights, (o->n_weights + 1) * sizeof(*x));
        if (!x) return dp_error_set(err, -ENOMEM, "out of memory");
        o->weights = x;
        x[o->n_weights] = (dp_queue_set_weight){strndup(arg, (size_t)(eq - arg)), v};
        return x[o->n_weights++].cq ? 0 : dp_error_set(err, -ENOMEM, "out of memory");
}

void dp_queue_options_done(dp_queue_options *o) {
        if (!o) return;
        for (size_t i = 0; i < o->n_quotas; i++) {
                free(o->quotas[i].cq);
                free(o->quotas[i].flavor);
                free(o->quotas[i].resource);
        }
        free(o->quotas);
        for (size_t i = 0; i < o->n_weights; i++)
                free(o->weights[i].cq);
        free(o->weights);
        for (size_t i = 0; i < o->n_preemptions; i++)
                dp_free_many(o->preemptions[i].cq, o->preemptions[i].field, o->preemptions[i].value);
        free(o->preemptions);
        for (size_t i = 0; i < o->n_add_nodes; i++)
                free(o->add_nodes[i].flavor);
        free(o->add_nodes);
        for (size_t i = 0; i < o->n_checks; i++)
                free(o->checks[i].name);
        free(o->checks);
        *o = (dp_queue_options){.config = o->config};
}

/* ---- the answer ---- */

static void usage_lines(const dp_queue *q, const qcq *c, dp_strbuf *out) {
        dp_strbuf_printf(out, "ClusterQueue %s", c->cq->x.meta.name);
        if (c->cq->cohort) dp_strbuf_printf(out, " (cohort %s)", c->cq->cohort);
        dp_strbuf_puts(out, " usage:");
        for (size_t g = 0; g < c->cq->n_groups; g++)
                for (size_t f = 0; f < c->cq->groups[g].n_flavors; f++) {
                        const dp_kq_flavor_quotas *fq = &c->cq->groups[g].flavors[f];
                        for (size_t k = 0; k < fq->n_resources; k++) {
                                ssize_t fr = q_fr_find(q, fq->name, fq->resources[k].name);
                                if (fr < 0) continue;
                                char used[64], nominal[64], avail[64];
                                const char *res = fq->resources[k].name;
                                q_format(res, c->node->q[fr].usage, used, sizeof(used));
                                q_format(res, c->node->q[fr].nominal, nominal, sizeof(nominal));
                                q_format(res, DP_MAX(0, q_available(c->node, (size_t)fr)), avail, sizeof(avail));
                                dp_strbuf_printf(out, "\n  %s in flavor %s: %s used of %s nominal, %s available%s", res,
                                                 fq->name, used, nominal, avail,
                                                 c->node->parent ? " (cohort included)" : "");
                        }
                }
        dp_strbuf_putc(out, '\n');
}

/* The flavor was refused for the pod template (taints, affinity, missing),
 * as the message says: more quota there would not help. */
static bool template_refused(const char *msg, const char *flavor) {
        char a[400], b[400], c[400];
        snprintf(a, sizeof(a), "flavor %s doesn't match node affinity", flavor);
        snprintf(b, sizeof(b), "} in flavor %s", flavor);
        snprintf(c, sizeof(c), "flavor %s not found", flavor);
        return msg && (strstr(msg, a) || strstr(msg, b) || strstr(msg, c));
}

static bool group_covers(const dp_kq_resource_group *g, const char *res) {
        for (size_t i = 0; i < g->n_covered; i++)
                if (streq(g->covered[i], res)) return true;
        return false;
}

/* What a node lends up to its parent: its subtree less its local quota. */
static int64_t lent_up(const qnode *n, size_t fr) {
        const qquota *x = &n->q[fr];
        return x->has_lending_limit ? DP_MIN(x->subtree, DP_MAX(0, x->lending_limit)) : x->subtree;
}

/* A ClusterQueue's nominal quota for fr set to v, the cohorts' subtrees
 * above following (Kueue's updateCohortResourceNode, for one change). */
static void set_nominal(qnode *n, size_t fr, int64_t v) {
        int64_t before = lent_up(n, fr);
        n->q[fr].subtree += v - n->q[fr].nominal;
        n->q[fr].nominal = v;
        int64_t d = lent_up(n, fr) - before;
        for (qnode *c = n; c->parent && d; c = c->parent) {
                int64_t pb = lent_up(c->parent, fr);
                c->parent->q[fr].subtree += d;
                d = lent_up(c->parent, fr) - pb;
        }
}

/* What one flavor of a resource group would need: per resource the fr,
 * the pod set's total and the quota to add. */
typedef struct need {
        size_t fr;
        const char *res;
        int64_t total, nominal, add;
} need;

/* v holds max entries; a group covers at most DP_KUEUE_MAX_RESOURCES. */
static size_t flavor_needs(const dp_queue *q, const qcq *c, const dp_kq_resource_group *g, const char *flavor,
                           const dp_queue_podset *ps, need *v, size_t max) {
        size_t n = 0;
        for (size_t i = 0; i <= ps->n_requests && n < max; i++) {
                bool pods = i == ps->n_requests;
                const char *res = pods ? "pods" : ps->requests[i].name;
                int64_t total = pods ? ps->count : ps->requests[i].value * ps->count;
                ssize_t fr = q_fr_find(q, flavor, res);
                if (!group_covers(g, res) || total == 0 || fr < 0) continue;
                int64_t add = DP_MAX(0, total - q_available(c->node, (size_t)fr));
                v[n++] = (need){(size_t)fr, res, total, c->node->q[fr].nominal, add};
        }
        return n;
}

int q_explain_readmit(dp_queue *q, size_t i) {
        int r = q_reset_admission(q);
        if (r >= 0) r = dp_queue_admit(q, NULL);
        return r < 0 ? -ENOMEM : q->wl[i].state == DP_QW_ADMITTED;
}

/* Admission again with the flavor's quota raised by v[].add: is workload i
 * admitted? The quota is put back after; the queue is left as that
 * admission left it. 1 yes, 0 no, -ENOMEM. */
static int try_once(dp_queue *q, qcq *c, size_t i, const need *v, size_t n) {
        for (size_t k = 0; k < n; k++)
                set_nominal(c->node, v[k].fr, v[k].nominal + v[k].add);
        int ok = q_explain_readmit(q, i);
        for (size_t k = 0; k < n; k++)
                set_nominal(c->node, v[k].fr, v[k].nominal);
        return ok;
}

/* Grow v[].add until workload i is admitted (each failed trial adds what
 * is still missing where it settled, at least doubling: in a cohort,
 * borrowers take part of what is added), then bring each amount down to
 * the least that still admits it (bisection). 1 found, 0 not within
 * EXPLAIN_TRIALS, -ENOMEM. */
static int trial(dp_queue *q, qcq *c, size_t i, need *v, size_t n) {
        int ok = 0;
        for (int t = 0; t < EXPLAIN_TRIALS && !ok; t++) {
                if ((ok = try_once(q, c, i, v, n)) != 0) break;
                for (size_t k = 0; k < n; k++) {
                        int64_t short_by = v[k].total - q_available(c->node, v[k].fr);
                        v[k].add += DP_MAX(DP_MAX(short_by, v[k].add), v[k].total);
                }
        }
        for (size_t k = 0; k < n && ok > 0; k++) {
                int64_t lo = -1, hi = v[k].add; /* hi admits it */
                while (ok > 0 && hi - lo > 1) {
                        v[k].add = lo + (hi - lo) / 2;
                        ok = try_once(q, c, i, v, n);
                        if (ok > 0) hi = v[k].add;
                        if (ok == 0) lo = v[k].add, ok = 1;
                }
                v[k].add = hi;
        }
        /* back to the input's own settled state for the next flavor */
        int r = q_explain_readmit(q, i);
        return ok < 0 || r < 0 ? -ENOMEM : ok;
}

static int flavor_answer(dp_queue *q, qcq *c, size_t i, const dp_kq_resource_group *g, const char *flavor,
                         const dp_queue_podset *ps, dp_strbuf *out) {
        need v[DP_KUEUE_MAX_RESOURCES + 2];
        size_t n = flavor_needs(q, c, g, flavor, ps, v, ELEMENTSOF(v));
        bool any = false;
        for (size_t k = 0; k < n; k++)
                any |= v[k].add > 0;
        if (!any) return 0;
        int r = trial(q, c, i, v, n);
        if (r < 0) return r;
        dp_strbuf_printf(out, "  pod set %s, flavor %s:", ps->name, flavor);
        if (!r) {
                dp_strbuf_puts(out, " no quota on this flavor alone lets it in\n");
                return 0;
        }
        for (size_t k = 0; k < n; k++) {
                if (!v[k].add) continue;
                char to[64], add[64];
                q_format(v[k].res, v[k].nominal + v[k].add, to, sizeof(to));
                q_format(v[k].res, v[k].add, add, sizeof(add));
                dp_strbuf_printf(out, " --set-quota %s/%s/%s=%s (+%s)", c->cq->x.meta.name, flavor, v[k].res, to, add);
        }
        dp_strbuf_putc(out, '\n');
        return 0;
}

static int quota_answer(dp_queue *q, qcq *c, size_t wi, dp_strbuf *out) {
        const dp_queue_workload *w = &q->wl[wi];
        _cleanup_free_ char *msg = w->message ? strdup(w->message) : NULL; /* the trials rewrite it */
        if (w->message && !msg) return -ENOMEM;
        for (size_t p = 0; p < w->n_podsets; p++) {
                const dp_queue_podset *ps = &w->podsets[p];
                for (size_t g = 0; g < c->cq->n_groups; g++) {
                        const dp_kq_resource_group *grp = &c->cq->groups[g];
                        bool asks = false;
                        for (size_t i = 0; i < ps->n_requests; i++)
                                asks |= group_covers(grp, ps->requests[i].name) && ps->requests[i].value;
                        for (size_t f = 0; asks && f < grp->n_flavors; f++) {
                                const char *fl = grp->flavors[f].name;
                                int r = template_refused(msg, fl)
                                                ? (dp_strbuf_printf(out,
                                                                    "  pod set %s, flavor %s: refused for the "
                                                                    "pod template (quota would not help)\n",
                                                                    ps->name, fl),
                                                   0)
                                                : flavor_answer(q, c, wi, grp, fl, ps, out);
                                if (r < 0) return r;
                        }
                }
                for (size_t i = 0; i < ps->n_requests; i++) {
                        bool cov = false;
                        for (size_t g = 0; g < c->cq->n_groups; g++)
                                cov |= group_covers(&c->cq->groups[g], ps->requests[i].name);
                        if (!cov && ps->requests[i].value)
                                dp_strbuf_printf(out,
                                                 "  %s in the coveredResources of a resource group of "
                                                 "ClusterQueue %s, with quota\n",
                                                 ps->requests[i].name, c->cq->x.meta.name);
                }
        }
        dp_strbuf_puts(out, "  (each line alone, the least amount that does, checked by admitting the whole input "
                            "again)\n");
        return q_explain_preempt(q, wi, out);
}

static int let_in(dp_queue *q, size_t i, dp_strbuf *out) {
        const dp_queue_workload *w = &q->wl[i];
        dp_strbuf_puts(out, "What would let it in:\n");
        if (!w->cluster_queue) {
                dp_strbuf_printf(out, "  a LocalQueue %s in namespace %s, pointing at a ClusterQueue\n",
                                 w->local_queue ? w->local_queue : "(kueue.x-k8s.io/queue-name)", w->ns);
                return 0;
        }
        if (w->state == DP_QW_INADMISSIBLE) {
                dp_strbuf_printf(out, "  a ClusterQueue %s (LocalQueue %s points at it)\n", w->cluster_queue,
                                 w->local_queue ? w->local_queue : "");
                return 0;
        }
        qcq *c = &q->cqs[w->cq];
        if (c->inactive && c->inactive_msg) { /* its admission checks (checks.c) */
                dp_strbuf_printf(out,
                                 "  ClusterQueue %s active: every AdmissionCheck it names in the input, Active "
                                 "(Kueue: %s)\n",
                                 w->cluster_queue, c->inactive_msg);
                return 0;
        }
        if (c->inactive) {
                dp_strbuf_printf(out, "  ClusterQueue %s active: %s\n", w->cluster_queue,
                                 streq(c->inactive, "stopPolicy") ? "its stopPolicy None"
                                                                  : "every ResourceFlavor it names in the input");
                return 0;
        }
        if (w->reason && streq(w->reason, "DeactivatedDueToAdmissionCheck")) {
                dp_strbuf_puts(out, "  Kueue deactivated it (spec.active false) when a check rejected it: active "
                                    "again, it queues anew\n");
                return 0;
        }
        if (w->dra_message) {
                dp_strbuf_puts(out, "  claims Kueue can charge: ResourceClaimTemplates (not ResourceClaims) whose "
                                    "requests are exactly/ExactCount of a DeviceClass named in the Configuration's "
                                    "resources.deviceClassMappings (--kueue-config)\n");
                return 0;
        }
        if (!q->ns_ok[i]) {
                dp_strbuf_printf(out, "  the namespaceSelector of ClusterQueue %s selecting namespace %s\n",
                                 w->cluster_queue, w->ns);
                return 0;
        }
        return quota_answer(q, c, i, out);
}

static void admitted_lines(const dp_queue_workload *w, dp_strbuf *out) {
        dp_strbuf_printf(out, "%s\nFlavors:", w->message ? w->message : "");
        for (size_t p = 0; p < w->n_podsets; p++)
                for (size_t i = 0; i < w->podsets[p].n_requests; i++)
                        if (w->podsets[p].flavors[i])
                                dp_strbuf_printf(out, " %s=%s", w->podsets[p].requests[i].name,
                                                 w->podsets[p].flavors[i]);
        dp_strbuf_printf(out, "%s\n", w->borrowing ? " (borrowing from its cohort)" : "");
        if (w->placement_known && !w->checks_pending)
                dp_strbuf_printf(out, "Pods: %d placed, %d Pending after admission%s\n", w->pods_placed,
                                 w->pods_unplaced,
                                 w->pods_unplaced ? " (admitted is not placed: `devplane explain POD` says why "
                                                    "kube-scheduler left them)"
                                                  : "");
}

int dp_queue_explain(dp_queue *q, const char *ns, const char *name, dp_strbuf *out) {
        return dp_queue_explain_placing(q, ns, name, NULL, NULL, out);
}

int dp_queue_explain_placing(dp_queue *q, const char *ns, const char *name, dp_queue_place_trial place, void *userdata,
                             dp_strbuf *out) {
        assert_return(q && name && out, -EINVAL);
        const dp_queue_workload *w = dp_queue_find(q, ns, name);
        if (!w) return -ENOENT;
        size_t i = (size_t)(w - q->wl);
        dp_strbuf_printf(out, "Workload %s/%s (%s), LocalQueue %s, ClusterQueue %s: %s\n", w->ns, w->name, w->kind,
                         w->local_queue ? w->local_queue : "-", w->cluster_queue ? w->cluster_queue : "-",
                         w->state == DP_QW_ADMITTED && w->checks_pending ? "QuotaReserved"
                         : w->state == DP_QW_ADMITTED                    ? "Admitted"
                         : w->reason                                     ? w->reason
                                                                         : "Pending");
        if (w->state == DP_QW_ADMITTED)
                admitted_lines(w, out);
        else
                dp_strbuf_printf(out, "Why not admitted (Kueue): %s\n", w->message ? w->message : "not tried yet");
        if (w->note) dp_strbuf_printf(out, "Note: %s\n", w->note);
        if (q_checks_explain(q, w, out) < 0) return -ENOMEM; /* QuotaReserved on its admission checks */
        q_explain_preempted(q, i, out);
        if (w->cluster_queue && w->state != DP_QW_INADMISSIBLE) usage_lines(q, &q->cqs[w->cq], out);
        int r = w->state != DP_QW_ADMITTED ? let_in(q, i, out) : 0;
        if (r >= 0 && dp_queue_workload_runs(w) && place && w->placement_known && w->pods_unplaced > 0)
                r = q_explain_nodes(q, i, place, userdata, out);
        return r < 0 || dp_strbuf_failed(out) ? -ENOMEM : 0;
}
