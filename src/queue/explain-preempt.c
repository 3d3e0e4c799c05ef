/* SPDX-License-Identifier: Apache-2.0
 *
 * explain-preempt.c — explain's preemption answers (queue/explain.c calls
 * them) and the --set-preemption what-if.
 *
 * What to preempt for a pending workload, in two kinds:
 *   (a) what Kueue itself would preempt if its ClusterQueue's policy allowed
 *       it: each change of withinClusterQueue, reclaimWithinCohort and
 *       borrowWithinCohort that allows more than the policy does is tried by
 *       admitting the whole input again with it (q_reset_admission +
 *       dp_queue_admit, as explain's quota trials do); the changes that admit
 *       it are shown as --set-preemption flags with the victims Kueue then
 *       picks, fewest victims first. Admitted workloads of a priority no
 *       LowerPriority policy may take are named ("priority forbids it").
 *   (b) what a person would delete or stop by hand: the set Kueue's classical
 *       preemption picks (preempt.c's candidate order and minimal set) when
 *       every policy of the ClusterQueue allows everything, checked by
 *       admitting the input again without them (marked Finished, which the
 *       reset leaves out); when the freed quota goes to another workload
 *       first, the targets are looked for again in that state; then each
 *       one is given back, last but one first, where it still gets in.
 *       Where those rules find none, the least prefix of every admitted
 *       workload of the cohort tree holding what it asks for, in Kueue's
 *       candidate order; where the set has more than one, each alone too
 *       (smallest sets first).
 * Why a workload was preempted: its preemptor, the Preempted reason and the
 * rule of the preemptor's ClusterQueue that made it a candidate.
 *
 * Every trial starts from the input again; q is left as it settled.
 */
#include <stdio.h>

#include "queue/queue-internal.h"

/* ---- --set-preemption CQ/FIELD=VALUE ---- */

#define THRESHOLD "borrowWithinCohort.maxPriorityThreshold"

typedef struct pfield {
        const char *name;
        const char *const *values; /* NULL: an int32 (the threshold) */
} pfield;

static const pfield pfields[] = {
        {"withinClusterQueue", q_within_values},
        {"reclaimWithinCohort", q_reclaim_values},
        {"borrowWithinCohort.policy", q_borrow_values},
        {THRESHOLD, NULL},
};

static int rank_of(const char *const *values, const char *v) {
        for (int k = 0; v && values[k]; k++)
                if (streq(values[k], v)) return k;
        return v ? -1 : 0; /* unset is Never */
}

static bool int32_text(const char *s) {
        char *end = NULL;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        return !errno && end != s && !*end && v >= INT32_MIN && v <= INT32_MAX;
}

/* "Never, LowerPriority or Any" */
static void words(const char *const *values, char *buf, size_t size) {
        buf[0] = 0;
        for (int k = 0; values[k]; k++) {
                size_t len = strlen(buf);
                snprintf(buf + len, size - len, "%s%s", k == 0 ? "" : values[k + 1] ? ", " : " or ", values[k]);
        }
}

int dp_queue_options_add_preemption(dp_queue_options *o, const char *arg, dp_error *err) {
        assert_return(o && arg, -EINVAL);
        const char *sl = strchr(arg, '/'), *eq = sl ? strchr(sl, '=') : NULL;
        if (!sl || sl == arg || !eq || eq == sl + 1 || !eq[1])
                return dp_error_set(err, -EINVAL, "--set-preemption %s: must be CLUSTERQUEUE/FIELD=VALUE", arg);
        const pfield *f = NULL;
        for (size_t k = 0; k < ELEMENTSOF(pfields) && !f; k++)
                if (strlen(pfields[k].name) == (size_t)(eq - sl - 1) &&
                    !strncmp(pfields[k].name, sl + 1, (size_t)(eq - sl - 1)))
                        f = &pfields[k];
        if (!f)
                return dp_error_set(err, -EINVAL,
                                    "--set-preemption %s: FIELD must be withinClusterQueue, reclaimWithinCohort, "
                                    "borrowWithinCohort.policy or " THRESHOLD,
                                    arg);
        char allowed[128] = "an integer";
        if (f->values) words(f->values, allowed, sizeof(allowed));
        if (f->values ? rank_of(f->values, eq + 1) < 0 : !int32_text(eq + 1))
                return dp_error_set(err, -EINVAL, "--set-preemption %s: %s must be %s", arg, f->name, allowed);
        dp_queue_set_preemption *x = realloc(o->preemptions, (o->n_preemptions + 1) * sizeof(*x));
        if (!x) return dp_error_set(err, -ENOMEM, "out of memory");
        o->preemptions = x;
        dp_queue_set_preemption *p = &x[o->n_preemptions++]; /* freed by dp_queue_options_done, filled or not */
        *p = (dp_queue_set_preemption){strndup(arg, (size_t)(sl - arg)), strdup(f->name), strdup(eq + 1)};
        return p->cq && p->field && p->value ? 0 : dp_error_set(err, -ENOMEM, "out of memory");
}

static int set_policy(dp_kq_preemption *p, const dp_queue_set_preemption *sp) {
        if (streq(sp->field, THRESHOLD)) {
                p->max_priority_threshold = (int32_t)strtol(sp->value, NULL, 10);
                p->has_max_priority_threshold = true;
                return 0;
        }
        char **slot = streq(sp->field, "withinClusterQueue")    ? &p->within_cluster_queue
                      : streq(sp->field, "reclaimWithinCohort") ? &p->reclaim_within_cohort
                                                                : &p->borrow_within_cohort;
        char *v = strdup(sp->value);
        if (!v) return -ENOMEM;
        free(*slot);
        *slot = v;
        return 0;
}

int q_apply_set_preemption(dp_queue *q, dp_error *err) {
        const dp_queue_options *o = q->opts;
        for (size_t i = 0; o && i < o->n_preemptions; i++) {
                const dp_queue_set_preemption *sp = &o->preemptions[i];
                uintptr_t c = (uintptr_t)q_index_get(q, "C\x1f%s", sp->cq);
                if (!c)
                        return dp_error_set(err, -EINVAL,
                                            "--set-preemption %s/%s=%s: ClusterQueue %s is not in the input", sp->cq,
                                            sp->field, sp->value, sp->cq);
                if (set_policy(&((dp_cluster_queue *)q->cqs[c - 1].cq)->preemption, sp) < 0)
                        return dp_error_set(err, -ENOMEM, "out of memory");
        }
        for (size_t i = 0; o && i < o->n_preemptions; i++) { /* the webhook's rule, on the result */
                const dp_queue_set_preemption *sp = &o->preemptions[i];
                const dp_kq_preemption *p = &q->cqs[(uintptr_t)q_index_get(q, "C\x1f%s", sp->cq) - 1].cq->preemption;
                if (rank_of(q_reclaim_values, p->reclaim_within_cohort) == 0 &&
                    rank_of(q_borrow_values, p->borrow_within_cohort) > 0)
                        return dp_error_set(err, -EINVAL,
                                            "--set-preemption %s/%s=%s: ClusterQueue %s: borrowWithinCohort.policy "
                                            "other than Never needs reclaimWithinCohort other than Never",
                                            sp->cq, sp->field, sp->value, sp->cq);
        }
        return 0;
}

/* ---- why it was preempted ---- */

static const dp_queue_workload *preemptor_of(const dp_queue *q, const dp_queue_workload *v) {
        const char *sl = strchr(v->preempted_by, '/');
        char ns[256];
        snprintf(ns, sizeof(ns), "%.*s", sl ? (int)(sl - v->preempted_by) : 0, v->preempted_by);
        return sl ? dp_queue_find(q, ns, sl + 1) : NULL;
}

static const char *policy_word(const char *v) { return v ? v : "Never"; }

static void priority_words(const dp_queue_workload *v, const dp_queue_workload *p, dp_strbuf *out) {
        if (v->priority < p->priority)
                dp_strbuf_printf(out, "its priority %d is lower than %s/%s's %d", v->priority, p->ns, p->name,
                                 p->priority);
        else
                dp_strbuf_printf(out, "its priority %d is not lower than %s/%s's %d (equal and created later)",
                                 v->priority, p->ns, p->name, p->priority);
}

void q_explain_preempted(const dp_queue *q, size_t i, dp_strbuf *out) {
        const dp_queue_workload *v = &q->wl[i];
        for (size_t k = 0; k < v->n_victims; k++) /* `devplane explain` on each says why */
                dp_strbuf_printf(out, "%s %s%s", k ? "," : "It preempted:", v->victims[k],
                                 k + 1 < v->n_victims ? "" : "\n");
        if (!v->preempted_by) return;
        dp_strbuf_printf(out, "Preempted by %s in cycle %zu (%s", v->preempted_by, v->preempted_cycle,
                         v->preempted_reason);
        if (v->times_preempted > 1) dp_strbuf_printf(out, ", %zu times", v->times_preempted);
        dp_strbuf_printf(out, "): %s\n", v->preempted_message);
        const dp_queue_workload *p = preemptor_of(q, v);
        if (!p || !p->cluster_queue) return;
        const dp_cluster_queue *pcq = q->cqs[p->cq].cq;
        const dp_kq_preemption *pol = &pcq->preemption;
        const char *reason = v->preempted_reason, *mine = v->cluster_queue, *cohort = q->cqs[v->cq].cq->cohort;
        dp_strbuf_puts(out, "Why a candidate: ");
        if (streq(reason, "InClusterQueue")) {
                dp_strbuf_printf(out, "withinClusterQueue: %s of ClusterQueue %s, and ",
                                 policy_word(pol->within_cluster_queue), mine);
                priority_words(v, p, out);
        } else if (streq(reason, "InCohortReclaimWhileBorrowing")) {
                dp_strbuf_printf(out,
                                 "borrowWithinCohort: %s of ClusterQueue %s (the preemptor may borrow while it "
                                 "reclaims), ClusterQueue %s was using more than its nominal quota in cohort %s, and ",
                                 policy_word(pol->borrow_within_cohort), pcq->x.meta.name, mine, cohort ? cohort : "-");
                priority_words(v, p, out);
                if (pol->has_max_priority_threshold)
                        dp_strbuf_printf(out, " (maxPriorityThreshold %d)", pol->max_priority_threshold);
        } else if (streq(reason, "InCohortFairSharing")) {
                dp_strbuf_printf(out,
                                 "fair sharing, reclaimWithinCohort: %s of ClusterQueue %s: ClusterQueue %s borrowed "
                                 "in cohort %s and its share stayed at least the preemptor's after the removal",
                                 policy_word(pol->reclaim_within_cohort), pcq->x.meta.name, mine,
                                 cohort ? cohort : "-");
        } else {
                const char *rc = policy_word(pol->reclaim_within_cohort);
                dp_strbuf_printf(out,
                                 "reclaimWithinCohort: %s of ClusterQueue %s: ClusterQueue %s was using more than its "
                                 "nominal quota (borrowing in cohort %s)%s",
                                 rc, pcq->x.meta.name, mine, cohort ? cohort : "-",
                                 streq(rc, "Any") ? ", whatever its priority" : ", and ");
                if (!streq(rc, "Any")) priority_words(v, p, out);
        }
        dp_strbuf_putc(out, '\n');
}

/* ---- trials: workloads taken out, policies changed ---- */

/* Workloads deleted by hand for a trial: marked Finished while on. */
typedef struct gone {
        size_t *w;
        dp_qw_state *was;
        bool *on;
        size_t n;
        bool oom;
} gone;

static void gone_set(dp_queue *q, gone *g, size_t k, bool on) {
        g->on[k] = on;
        q->wl[g->w[k]].state = on ? DP_QW_FINISHED : g->was[k];
        q_state_changed(q, &q->wl[g->w[k]]);
}

static void gone_add(dp_queue *q, gone *g, size_t w) {
        size_t *v = g->oom ? NULL : realloc(g->w, (g->n + 1) * sizeof(*v));
        dp_qw_state *s = v ? realloc(g->was, (g->n + 1) * sizeof(*s)) : NULL;
        bool *on = s ? realloc(g->on, (g->n + 1) * sizeof(*on)) : NULL;
        if (v) g->w = v;
        if (s) g->was = s;
        if (!on) {
                g->oom = true;
                return;
        }
        g->on = on;
        v[g->n] = w;
        s[g->n] = q->wl[w].state;
        gone_set(q, g, g->n++, true);
}

static void gone_done(dp_queue *q, gone *g) {
        for (size_t k = g->n; k-- > 0;)
                gone_set(q, g, k, false);
        dp_free_many(g->w, g->was, g->on);
        *g = (gone){0};
}

/* Up to three policy fields changed at once (--set-preemption each). */
typedef struct change {
        const char *field[3], *value[3];
        size_t n;
} change;

static void change_apply(dp_kq_preemption *p, const change *c) {
        for (size_t k = 0; k < c->n; k++) {
                char *v = (char *)c->value[k]; /* a literal, for the trial only: put back before anything frees it */
                if (streq(c->field[k], "withinClusterQueue")) p->within_cluster_queue = v;
                if (streq(c->field[k], "reclaimWithinCohort")) p->reclaim_within_cohort = v;
                if (streq(c->field[k], "borrowWithinCohort.policy")) p->borrow_within_cohort = v;
        }
}

/* The changes that allow more than c's policy, each field alone (borrowing
 * with reclaiming, which it needs), then all of them at their widest (tried
 * only when no single one does): *ret_single counts the first. */
static size_t changes_of(const qcq *c, change *v, size_t *ret_single) {
        const dp_kq_preemption *p = &c->cq->preemption;
        int wr = rank_of(q_within_values, p->within_cluster_queue);
        int rr = rank_of(q_reclaim_values, p->reclaim_within_cohort);
        size_t n = 0;
        change all = {0};
        for (int k = wr + 1; wr >= 0 && q_within_values[k]; k++) {
                v[n++] = (change){{"withinClusterQueue"}, {q_within_values[k]}, 1};
                all.field[0] = "withinClusterQueue", all.value[0] = q_within_values[k], all.n = 1;
        }
        *ret_single = n;
        if (!c->node->parent) return n;
        size_t widest = all.n;
        for (int k = rr + 1; rr >= 0 && q_reclaim_values[k]; k++) {
                v[n++] = (change){{"reclaimWithinCohort"}, {q_reclaim_values[k]}, 1};
                all.field[widest] = "reclaimWithinCohort", all.value[widest] = q_reclaim_values[k], all.n = widest + 1;
        }
        if (rank_of(q_borrow_values, p->borrow_within_cohort) == 0) {
                v[n] = rr == 0 ? (change){{"reclaimWithinCohort", "borrowWithinCohort.policy"},
                                          {"LowerPriority", "LowerPriority"},
                                          2}
                               : (change){{"borrowWithinCohort.policy"}, {"LowerPriority"}, 1};
                n++;
                all.field[all.n] = "borrowWithinCohort.policy", all.value[all.n++] = "LowerPriority";
        }
        *ret_single = n;
        if (all.n > 1) v[n++] = all;
        return n;
}

/* One answer of kind (a): the flags and what Kueue then preempts. */
typedef struct answer {
        char *text; /* "--set-preemption ...: victims" */
        size_t n_victims;
        size_t order; /* the change's, for equal counts */
} answer;

static size_t others_preempting(const dp_queue *q, size_t i) {
        size_t n = 0;
        for (size_t k = 0; k < q->n_wl; k++)
                if (k != i && q->wl[k].cq == q->wl[i].cq && q->wl[k].cluster_queue) n += q->wl[k].n_victims;
        return n;
}

static char *answer_text(const dp_queue *q, size_t i, const change *ch, size_t others) {
        const dp_queue_workload *w = &q->wl[i];
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_strbuf_puts(&sb, "  Kueue preempts with");
        for (size_t k = 0; k < ch->n; k++)
                dp_strbuf_printf(&sb, " --set-preemption %s/%s=%s", w->cluster_queue, ch->field[k], ch->value[k]);
        dp_strbuf_putc(&sb, ':');
        for (size_t k = 0; k < w->n_victims; k++)
                dp_strbuf_printf(&sb, "%s %s", k ? "," : "", w->victims[k]);
        if (!w->n_victims) dp_strbuf_puts(&sb, " nothing for it, yet it gets in");
        if (others) dp_strbuf_printf(&sb, " (and %zu more by other workloads of its ClusterQueue)", others);
        dp_strbuf_putc(&sb, '\n');
        return dp_strbuf_steal(&sb);
}

/* Admission again with change ch: 1 and *ret filled when i gets in. */
static int try_change(dp_queue *q, size_t i, const change *ch, size_t others0, answer *ret) {
        dp_cluster_queue *cq = (dp_cluster_queue *)q->cqs[q->wl[i].cq].cq;
        dp_kq_preemption saved = cq->preemption;
        change_apply(&cq->preemption, ch);
        int ok = q_explain_readmit(q, i);
        cq->preemption = saved;
        if (ok <= 0) return ok;
        size_t others = others_preempting(q, i);
        *ret = (answer){answer_text(q, i, ch, others > others0 ? others - others0 : 0), q->wl[i].n_victims, ret->order};
        return ret->text ? 1 : -ENOMEM;
}

static int cmp_answer(const void *a, const void *b) {
        const answer *x = a, *y = b;
        if (x->n_victims != y->n_victims) return x->n_victims < y->n_victims ? -1 : 1;
        return x->order < y->order ? -1 : x->order > y->order;
}

static const qnode *root_of(const dp_queue *q, size_t w) {
        const qnode *n = q->cqs[q->wl[w].cq].node;
        while (n->parent)
                n = n->parent;
        return n;
}

/* Does ClusterQueue c use more than its nominal quota somewhere? */
static bool borrows(const dp_queue *q, const qcq *c) {
        for (size_t f = 0; f < q->n_fr; f++)
                if (c->node->q[f].usage > c->node->q[f].subtree) return true;
        return false;
}

/* The admitted workloads the LowerPriority policies never take for i: of
 * a higher priority in its own ClusterQueue (withinClusterQueue), of a
 * priority not lower in a ClusterQueue of its cohort that borrows
 * (reclaimWithinCohort: Any takes those). */
static void priority_forbids(const dp_queue *q, size_t i, bool cohort, dp_strbuf *out) {
        const dp_queue_workload *w = &q->wl[i];
        size_t shown = 0, more = 0;
        for (size_t k = 0; k < q->n_wl; k++) {
                const dp_queue_workload *x = &q->wl[k];
                bool mine = x->cq == w->cq;
                if (x->state != DP_QW_ADMITTED || (mine ? cohort : !cohort) || x->priority < w->priority ||
                    (mine && x->priority == w->priority) || (!mine && !borrows(q, &q->cqs[x->cq])) ||
                    root_of(q, k) != root_of(q, i))
                        continue;
                if (shown == 5) {
                        more++;
                        continue;
                }
                if (!shown++)
                        dp_strbuf_printf(out, "  priority forbids it: %s takes no workload of a priority %s %d:",
                                         cohort ? "reclaimWithinCohort: LowerPriority" : "withinClusterQueue",
                                         cohort ? "not below" : "above", w->priority);
                dp_strbuf_printf(out, "%s %s/%s (%d%s%s)", shown > 1 ? "," : "", x->ns, x->name, x->priority,
                                 mine ? "" : ", ClusterQueue ", mine ? "" : x->cluster_queue);
        }
        if (more) dp_strbuf_printf(out, " and %zu more", more);
        if (shown) dp_strbuf_putc(out, '\n');
}

/* (a): every change tried, those that admit i shown fewest victims first. */
static int policy_answers(dp_queue *q, size_t i, dp_strbuf *out) {
        change ch[8];
        size_t single = 0, n = changes_of(&q->cqs[q->wl[i].cq], ch, &single), found = 0;
        answer a[8] = {{0}};
        size_t others0 = others_preempting(q, i);
        int r = 0;
        for (size_t k = 0; k < n && r >= 0 && (k < single || !found); k++) {
                a[found].order = k;
                if ((r = try_change(q, i, &ch[k], others0, &a[found])) > 0) found++;
        }
        if (found) qsort(a, found, sizeof(*a), cmp_answer);
        for (size_t k = 0; k < found; k++) {
                dp_strbuf_puts(out, a[k].text);
                free(a[k].text);
        }
        if (r >= 0 && !found)
                dp_strbuf_printf(out, "  no preemption policy of ClusterQueue %s lets Kueue admit it by preempting\n",
                                 q->wl[i].cluster_queue);
        return r < 0 ? r : 0;
}

/* Kueue's targets for i in the state q is in, with every policy of its
 * ClusterQueue allowing everything (none when it fits or finds none). */
static int open_targets(dp_queue *q, size_t i, qtarget **ret, size_t *ret_n) {
        qcq *c = &q->cqs[q->wl[i].cq];
        dp_cluster_queue *cq = (dp_cluster_queue *)c->cq;
        dp_queue_workload *w = &q->wl[i];
        dp_kq_preemption saved = cq->preemption;
        /* "Any" is no withinClusterQueue value Kueue takes: here it is
         * every priority, as preempt.c reads it */
        change all = {{"withinClusterQueue", "reclaimWithinCohort", "borrowWithinCohort.policy"},
                      {"Any", "Any", "LowerPriority"},
                      3};
        change_apply(&cq->preemption, &all);
        cq->preemption.has_max_priority_threshold = false;
        for (size_t p = 0; p < w->n_podsets; p++)
                w->podsets[p].tmpl = w->podsets[p].tmpl_kept;
        qassign a = {.message = DP_STRBUF_INIT};
        *ret = NULL;
        *ret_n = 0;
        int r = q_assign(q, c, w, &a);
        if (r >= 0 && q_mode_preempts(a.mode)) r = q_preempt_targets(q, c, i, &a, ret, ret_n);
        q_assign_done(&a);
        for (size_t p = 0; p < w->n_podsets; p++)
                w->podsets[p].tmpl = NULL;
        cq->preemption = saved;
        return r;
}

/* Give back, last but one first, each workload i still gets in without
 * (at most EXPLAIN_TRIALS tried; those off stay off). */
static int give_back(dp_queue *q, size_t i, gone *g) {
        size_t last = g->n, tried = 0;
        while (last > 0 && !g->on[last - 1])
                last--;
        for (size_t k = last ? last - 1 : 0; k-- > 0 && tried < EXPLAIN_TRIALS;) {
                if (!g->on[k]) continue;
                gone_set(q, g, k, false);
                int ok = q_explain_readmit(q, i);
                tried++;
                if (ok < 0) return ok;
                if (!ok) gone_set(q, g, k, true);
        }
        return 0;
}

/* (b): the set to delete by hand, found and checked by trials. */
static int by_hand(dp_queue *q, size_t i, gone *g, int *ret_ok) {
        int ok = 0;
        for (int t = 0; t < EXPLAIN_TRIALS && !ok && !g->oom; t++) {
                qtarget *v = NULL;
                size_t n = 0;
                int r = open_targets(q, i, &v, &n);
                for (size_t k = 0; k < n && r >= 0; k++)
                        gone_add(q, g, v[k].w);
                free(v);
                if (r < 0 || g->oom) return -ENOMEM;
                if (!n) break;
                if ((ok = q_explain_readmit(q, i)) < 0) return ok;
        }
        if (g->oom) return -ENOMEM;
        *ret_ok = ok;
        return ok > 0 && g->n > 1 ? give_back(q, i, g) : 0;
}

typedef struct order_ctx {
        const dp_queue *q;
        size_t cq; /* the preemptor's */
} order_ctx;

static int cmp_order(const void *a, const void *b, void *userdata) {
        const order_ctx *o = userdata;
        return q_cand_order(o->q, o->cq, *(const size_t *)a, *(const size_t *)b);
}

/* Does admitted workload x hold quota of a resource w asks for? */
static bool holds_for(const dp_queue *q, size_t x, const dp_queue_workload *w) {
        qheld h = q->held ? q->held[x] : (qheld){0};
        for (size_t k = 0; k < h.n; k++)
                for (size_t p = 0; h.v[k].value && p < w->n_podsets; p++)
                        for (size_t r = 0; r < w->podsets[p].n_requests; r++)
                                if (streq(q->fr[h.v[k].fr].resource, w->podsets[p].requests[r].name)) return true;
        return false;
}

/* The admitted workloads that could free what i needs, in the state q is
 * in: under its root cohort, holding quota of a resource it asks for, in
 * Kueue's candidate order. v has room for every workload. */
static size_t cohort_candidates(const dp_queue *q, size_t i, size_t *v) {
        size_t n = 0;
        for (size_t k = 0; k < q->n_wl; k++)
                if (q->wl[k].state == DP_QW_ADMITTED && q->wl[k].cluster_queue && root_of(q, k) == root_of(q, i) &&
                    holds_for(q, k, &q->wl[i]))
                        v[n++] = k;
        order_ctx o = {q, q->wl[i].cq};
        if (n) qsort_r(v, n, sizeof(*v), cmp_order, &o);
        return n;
}

/* Each candidate alone (at most EXPLAIN_TRIALS tried, 3 shown): the sets
 * of one. *ret_shown counts the lines. */
static int singles(dp_queue *q, size_t i, const size_t *v, size_t n, dp_strbuf *out, size_t *ret_shown) {
        int r = 0;
        for (size_t k = 0; r >= 0 && k < n && k < EXPLAIN_TRIALS && *ret_shown < 3; k++) {
                gone g = {0};
                gone_add(q, &g, v[k]);
                r = g.oom ? -ENOMEM : q_explain_readmit(q, i);
                gone_done(q, &g);
                if (r > 0)
                        dp_strbuf_printf(out, "  by hand, deleting or stopping: %s/%s (then it is admitted)\n",
                                         q->wl[v[k]].ns, q->wl[v[k]].name),
                                (*ret_shown)++;
        }
        return r < 0 ? r : 0;
}

/* Trial with the first k of g gone. */
static int prefix_try(dp_queue *q, size_t i, gone *g, size_t k) {
        for (size_t j = 0; j < g->n; j++)
                gone_set(q, g, j, j < k);
        return q_explain_readmit(q, i);
}

/* Where Kueue's candidate rules find no set (a ClusterQueue within its
 * nominal quota lends what a deletion frees): the least prefix of the
 * candidates v that lets i in (doubling, then bisected), then given back. */
static int by_prefix(dp_queue *q, size_t i, const size_t *v, size_t n, gone *g, int *ret_ok) {
        for (size_t k = 0; k < n; k++)
                gone_add(q, g, v[k]);
        if (g->oom) return -ENOMEM;
        size_t lo = 0, hi = 0;
        int ok = 0;
        for (size_t k = 1; n && !ok; k = DP_MIN(2 * k, n)) {
                if ((ok = prefix_try(q, i, g, k)) < 0) return ok;
                if (ok)
                        hi = k;
                else
                        lo = k;
                if (!ok && k == n) break;
        }
        while (ok > 0 && hi - lo > 1) {
                size_t mid = lo + (hi - lo) / 2;
                int r = prefix_try(q, i, g, mid);
                if (r < 0) return r;
                if (r)
                        hi = mid;
                else
                        lo = mid;
        }
        *ret_ok = ok;
        if (ok <= 0) return 0;
        int r = prefix_try(q, i, g, hi);
        return r < 0 ? r : give_back(q, i, g);
}

/* (b): the set preempt.c picks with every policy open; when it has more
 * than one workload (or none is found), each workload alone; smallest
 * first. */
static int hand_answer(dp_queue *q, size_t i, dp_strbuf *out) {
        gone g = {0};
        int ok = 0, r = by_hand(q, i, &g, &ok);
        _cleanup_free_ size_t *v = calloc(q->n_wl + 1, sizeof(*v));
        size_t n = 0, n_on = 0, shown = 0;
        if (r >= 0 && !v) r = -ENOMEM;
        if (r >= 0 && ok <= 0) { /* any admitted workload of its cohort tree, in Kueue's order */
                gone_done(q, &g);
                r = q_explain_readmit(q, i);
                n = r >= 0 ? cohort_candidates(q, i, v) : 0;
                if (r >= 0) r = by_prefix(q, i, v, n, &g, &ok);
        }
        _cleanup_strbuf_ dp_strbuf set = DP_STRBUF_INIT;
        for (size_t k = 0; r >= 0 && ok > 0 && k < g.n; k++)
                if (g.on[k])
                        dp_strbuf_printf(&set, "%s %s/%s", n_on++ ? "," : "", q->wl[g.w[k]].ns, q->wl[g.w[k]].name);
        gone_done(q, &g);
        if (r >= 0 && n_on != 1) { /* a smaller set than the one found: each candidate alone */
                r = q_explain_readmit(q, i);
                n = r >= 0 ? cohort_candidates(q, i, v) : 0;
                if (r >= 0) r = singles(q, i, v, n, out, &shown);
        }
        if (r >= 0 && n_on) {
                dp_strbuf_printf(out, "  by hand, deleting or stopping:%s (then it is admitted)\n",
                                 dp_strbuf_str(&set));
                shown++;
        }
        if (r >= 0 && !shown)
                dp_strbuf_puts(out, "  by hand: no set of admitted workloads found whose removal lets it in\n");
        return r;
}

int q_explain_preempt(dp_queue *q, size_t i, dp_strbuf *out) {
        dp_strbuf_puts(out, "What to preempt:\n");
        int r = policy_answers(q, i, out);
        if (r >= 0) r = q_explain_readmit(q, i); /* the settled state, for what priority forbids */
        if (r >= 0) priority_forbids(q, i, false, out);
        if (r >= 0 && q->cqs[q->wl[i].cq].node->parent) priority_forbids(q, i, true, out);
        if (r >= 0) r = hand_answer(q, i, out);
        if (r >= 0) r = q_explain_readmit(q, i); /* back to the input's own settled state */
        if (r >= 0)
                dp_strbuf_puts(out, "  (each checked by admitting the whole input again: with the policy, or "
                                    "without those workloads)\n");
        return r < 0 ? -ENOMEM : 0;
}
