/* SPDX-License-Identifier: Apache-2.0
 * preempt.c — kube-scheduler 1.35's DefaultPreemption PostFilter over the
 * filter's own cycle (preempt.h for the rules, sched-internal.h for the
 * hooks), and the nominations it leaves behind. */
#include <stdio.h>

#include "base/strbuf.h"
#include "sched/fmt.h"
#include "sched/preempt.h"
#include "sched/sched-internal.h"
#include "sched/topology.h"

#define NOT_ELIGIBLE_NEVER "not eligible due to preemptionPolicy=Never."
#define DEFAULT_START INT64_C(946684800) /* 2000-01-01T00:00:00Z */

/* ---- time ---- */

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
        y -= m <= 2;
        int64_t era = (y >= 0 ? y : y - 399) / 400;
        int64_t yoe = y - era * 400;
        int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
        int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146097 + doe - 719468;
}

/* RFC 3339 "YYYY-MM-DDTHH:MM:SS[.frac](Z|+hh:mm|-hh:mm)"; -1 unreadable. */
static int64_t parse_time(const char *s) {
        int y, mo, d, h, mi, sec, n = 0;
        if (!s || sscanf(s, "%4d-%2d-%2d%*1[Tt ]%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 || n < 19)
                return -1;
        const char *p = s + n;
        if (*p == '.')
                for (p++; *p >= '0' && *p <= '9'; p++) {
                }
        int64_t off = 0;
        if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':') {
                off = ((p[1] - '0') * 10 + (p[2] - '0')) * 3600 + ((p[4] - '0') * 10 + (p[5] - '0')) * 60;
                if (*p == '-') off = -off;
        } else if (!streq(p, "Z") && !streq(p, "z"))
                return -1;
        if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return -1;
        return days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - off;
}

int64_t dp_preempt_start_time(const dp_pod *p) {
        int64_t t = parse_time(p->start_time);
        if (t < 0 && !p->start_time) t = parse_time(p->meta.creation_timestamp);
        return t < 0 ? DEFAULT_START : t;
}

void dp_preempt_format_time(int64_t t, char *buf, size_t size) {
        int64_t days = t / 86400, rem = t % 86400;
        /* civil_from_days */
        int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
        int64_t doe = z - era * 146097, yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
        int64_t y = yoe + era * 400, doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
        int64_t d = doy - (153 * mp + 2) / 5 + 1, m = mp + (mp < 10 ? 3 : -9);
        y += m <= 2;
        dp_fmt(buf, size, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ", (long long)y, (long long)m, (long long)d,
               (long long)(rem / 3600), (long long)(rem / 60 % 60), (long long)(rem % 60));
}

/* ---- the rules ---- */

bool dp_preempt_more_important(const dp_preempt_victim *a, const dp_preempt_victim *b) {
        if (a->priority != b->priority) return a->priority > b->priority;
        return a->start < b->start;
}

/* Sort order of victims: most important first; equals (upstream leaves
 * them in its node's pod order) by name. */
static int cmp_victim(const void *x, const void *y) {
        const dp_preempt_victim *a = x, *b = y;
        if (dp_preempt_more_important(a, b)) return -1;
        if (dp_preempt_more_important(b, a)) return 1;
        return strcmp(a->key, b->key);
}

static bool pdb_matches(const dp_pod_disruption_budget *b, const dp_pod *p) {
        const dp_label_selector *ls = b->selector;
        if (!ls || (!ls->n_match_labels && !ls->n_match_expressions) || !p->meta.n_labels) return false;
        const char *bns = b->meta.namespace && b->meta.namespace[0] ? b->meta.namespace : "default";
        const char *pns = p->meta.namespace && p->meta.namespace[0] ? p->meta.namespace : "default";
        if (!streq(bns, pns)) return false;
        topo_sel s;
        if (topo_sel_compile(&s, ls, NULL, 0, NULL, 0, NULL, 0) < 0) return false;
        bool m = topo_sel_matches(&s, p->meta.labels, p->meta.n_labels, NULL, NULL);
        topo_sel_done(&s);
        return m;
}

int dp_preempt_pdb_violations(const dp_pod *const *pods, size_t n, const dp_pod_disruption_budget *const *pdbs,
                              size_t n_pdbs, bool *ret_violating) {
        _cleanup_free_ int64_t *allowed = calloc(n_pdbs + 1, sizeof(*allowed));
        if (!allowed) return -ENOMEM;
        for (size_t i = 0; i < n_pdbs; i++)
                allowed[i] = pdbs[i]->disruptions_allowed;
        for (size_t k = 0; k < n; k++) {
                ret_violating[k] = false;
                for (size_t i = 0; i < n_pdbs; i++) {
                        if (!pdb_matches(pdbs[i], pods[k])) continue;
                        bool disrupted = false;
                        for (size_t d = 0; d < pdbs[i]->n_disrupted_pods && !disrupted; d++)
                                disrupted = streq(pdbs[i]->disrupted_pods[d], pods[k]->meta.name);
                        if (disrupted) continue;
                        if (--allowed[i] < 0) ret_violating[k] = true;
                }
        }
        return 0;
}

/* The criteria of pickOneNodeForPreemption, each "less is better". */
static int64_t pick_key(const dp_preempt_candidate *c, int step) {
        switch (step) {
        case 0: return (int64_t)c->pdb_violations;
        case 1: return c->victims[0].priority;
        case 2: {
                int64_t sum = 0;
                for (size_t i = 0; i < c->n_victims; i++)
                        sum += (int64_t)c->victims[i].priority + INT64_C(2147483648);
                return sum;
        }
        case 3: return (int64_t)c->n_victims;
        default: { /* the latest earliest start of the highest-priority victims wins */
                int64_t earliest = INT64_MAX;
                for (size_t i = 0; i < c->n_victims; i++)
                        if (c->victims[i].priority == c->victims[0].priority)
                                earliest = DP_MIN(earliest, c->victims[i].start);
                return -earliest;
        }
        }
}

/* Keeping the nodes best by each criterion in turn is taking the least
 * by all of them in order. */
static bool pick_before(const dp_preempt_candidate *a, const dp_preempt_candidate *b) {
        for (int step = 0; step < 5; step++) {
                int64_t x = pick_key(a, step), y = pick_key(b, step);
                if (x != y) return x < y;
        }
        return strcmp(a->node, b->node) < 0;
}

size_t dp_preempt_pick(const dp_preempt_candidate *v, size_t n) {
        size_t pick = 0;
        for (size_t i = 0; i < n; i++) {
                if (!v[i].n_victims) return i;
                if (pick_before(&v[i], &v[pick])) pick = i;
        }
        return pick;
}

/* ---- nominations ---- */

static void nomination_gone(dp_sched *s, qpod *q);

void dp_sched_nominate(dp_sched *s, qpod *q, const char *node) {
        if (q->info.nominated && !streq_ptr(q->info.nominated, node)) nomination_gone(s, q);
        for (size_t i = 0; i < s->n_nominated; i++)
                if (s->nominated[i] == q) {
                        s->nominated[i] = s->nominated[--s->n_nominated];
                        break;
                }
        free(q->info.nominated);
        q->info.nominated = NULL;
        if (!node || !(q->info.nominated = dp_strdup(node))) return;
        if (DP_GROW(s->nominated, s->cap_nominated, s->n_nominated + 1) < 0) return; /* kept on the pod only */
        s->nominated[s->n_nominated++] = q;
}

void dp_sched_nomination_done(dp_sched *s, qpod *q) {
        for (size_t i = 0; i < s->n_nominated; i++)
                if (s->nominated[i] == q) {
                        s->nominated[i] = s->nominated[--s->n_nominated];
                        return;
                }
}

int dp_sched_nominated_on(dp_sched *s, const qpod *q, const char *node, const dp_pod ***ret, size_t *ret_n) {
        *ret = NULL;
        *ret_n = 0;
        const dp_pod **v = NULL;
        size_t n = 0;
        for (size_t i = 0; i < s->n_nominated; i++) {
                const qpod *o = s->nominated[i];
                if (o == q || !o->present || o->info.state == DP_POD_BOUND || o->priority < q->priority ||
                    !streq_ptr(o->info.nominated, node))
                        continue;
                const dp_pod *p = dp_store_get(s->store, DP_KIND_POD, o->ns, o->name, NULL).pod;
                if (!p || p->node_name) continue;
                if (!v && !(v = calloc(s->n_nominated + 1, sizeof(*v)))) return -ENOMEM;
                v[n++] = p;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

/* ---- the dry run ---- */

typedef struct node_pods {
        const dp_pod **v;
        size_t n, cap;
} node_pods;

typedef struct pf_state {
        dp_sched *s;
        qpod *q;
        struct cycle *c;
        dp_hashmap *by_node; /* node -> node_pods of lower priority */
        node_pods *lists;
        size_t n_lists;
        const dp_pod_disruption_budget **pdbs;
        size_t n_pdbs;
        dp_preempt_candidate *cands; /* victims' keys owned here until the pod takes them */
        size_t n_cands, cap_cands;
        dp_diag_hist hist; /* why the nodes without victims are not candidates */
} pf_state;

static void pf_done(pf_state *st) {
        for (size_t i = 0; i < st->n_lists; i++)
                free(st->lists[i].v);
        free(st->lists);
        dp_hashmap_free(st->by_node);
        free(st->pdbs);
        for (size_t i = 0; i < st->n_cands; i++) {
                for (size_t k = 0; k < st->cands[i].n_victims; k++)
                        free((char *)st->cands[i].victims[k].key);
                free(st->cands[i].victims);
        }
        free(st->cands);
        dp_diag_hist_clear(&st->hist);
}

static int32_t prio(const dp_pod *p) { return p->has_priority ? p->priority : 0; }

static bool finished(const dp_pod *p) {
        return p->phase && (streq(p->phase, "Succeeded") || streq(p->phase, "Failed"));
}

/* Bound pods of lower priority than q, by node; the budgets. */
static int pf_collect(pf_state *st, size_t nn) {
        dp_store *store = st->s->store;
        if (!(st->by_node = dp_hashmap_new()) || !(st->lists = calloc(nn + 1, sizeof(*st->lists)))) return -ENOMEM;
        size_t i = 0;
        dp_object o;
        while (st->q->priority > st->s->min_bound_prio && dp_store_next(store, DP_KIND_POD, &i, &o, NULL)) {
                const dp_pod *p = o.pod;
                if (!p->node_name || finished(p) || prio(p) >= st->q->priority) continue;
                node_pods *np = dp_hashmap_get(st->by_node, p->node_name);
                if (!np) {
                        if (st->n_lists >= nn) continue; /* a node not in the table */
                        np = &st->lists[st->n_lists++];
                        if (dp_hashmap_put(st->by_node, p->node_name, np) < 0) return -ENOMEM;
                }
                if (DP_GROW(np->v, np->cap, np->n + 1) < 0) return -ENOMEM;
                np->v[np->n++] = p;
        }
        size_t n = dp_store_count(store, DP_KIND_POD_DISRUPTION_BUDGET);
        if (!(st->pdbs = calloc(n + 1, sizeof(*st->pdbs)))) return -ENOMEM;
        i = 0;
        while (st->n_pdbs < n && dp_store_next(store, DP_KIND_POD_DISRUPTION_BUDGET, &i, &o, NULL))
                st->pdbs[st->n_pdbs++] = o.pdb;
        return 0;
}

static int victim_of(const dp_pod *p, dp_preempt_victim *ret) {
        const char *ns = p->meta.namespace && p->meta.namespace[0] ? p->meta.namespace : "default";
        char *key = dp_asprintf("%s/%s", ns, p->meta.name);
        if (!key) return -ENOMEM;
        *ret = (dp_preempt_victim){key, prio(p), dp_preempt_start_time(p)};
        return 0;
}

static int cmp_pod_importance(const void *x, const void *y) {
        const dp_pod *a = *(const dp_pod *const *)x, *b = *(const dp_pod *const *)y;
        dp_preempt_victim va = {a->meta.name, prio(a), dp_preempt_start_time(a)};
        dp_preempt_victim vb = {b->meta.name, prio(b), dp_preempt_start_time(b)};
        int c = cmp_victim(&va, &vb);
        if (c) return c;
        return strcmp(a->meta.namespace ? a->meta.namespace : "", b->meta.namespace ? b->meta.namespace : "");
}

/* SelectVictimsOnNode for table node ni: 1 a candidate added, 0 not (why
 * counted), <0 error. */
static int select_victims(pf_state *st, size_t ni, const dp_node *node, dp_error *err) {
        node_pods *np = dp_hashmap_get(st->by_node, node->meta.name);
        if (!np || !np->n) return dp_diag_hist_add(&st->hist, DP_VERDICT_NO_VICTIMS, 0);
        _cleanup_free_ const dp_pod **extra = NULL;
        size_t n_extra = 0;
        int r = dp_sched_nominated_on(st->s, st->q, node->meta.name, &extra, &n_extra);
        _cleanup_free_ const dp_pod **gone = calloc(np->n + 1, sizeof(*gone));
        _cleanup_free_ const dp_pod **order = calloc(np->n + 1, sizeof(*order));
        _cleanup_free_ const dp_pod **back = calloc(np->n + 1, sizeof(*back));
        _cleanup_free_ bool *violating = calloc(np->n + 1, sizeof(*violating));
        if (r < 0 || !gone || !order || !back || !violating) return -ENOMEM;
        memcpy(order, np->v, np->n * sizeof(*order));
        qsort(order, np->n, sizeof(*order), cmp_pod_importance);
        memcpy(gone, order, np->n * sizeof(*gone));
        sched_whatif wi = {node->meta.name, ni, gone, np->n, extra, n_extra, back, 0};
        dp_diag_hist why = {0};
        r = dp_sched_cycle_node(st->c, ni, &wi, &why, err);
        for (size_t i = 0; r == 0 && i < why.n; i++) /* its reasons with every lower pod gone */
                for (uint32_t k = 0; k < why.v[i].nodes && r == 0; k++)
                        r = dp_diag_hist_add(&st->hist, why.v[i].code, why.v[i].arg);
        dp_diag_hist_clear(&why);
        if (r <= 0) return r;
        /* reprieve: PDB-violating pods first, each group most important first */
        if (dp_preempt_pdb_violations(order, np->n, st->pdbs, st->n_pdbs, violating) < 0) return -ENOMEM;
        _cleanup_free_ dp_preempt_victim *victims = calloc(np->n + 1, sizeof(*victims));
        if (!victims) return -ENOMEM;
        size_t n_victims = 0, n_violating = 0;
        for (int group = 1; group >= 0; group--)
                for (size_t k = 0; k < np->n; k++) {
                        if (violating[k] != (bool)group) continue;
                        size_t at = 0; /* give order[k] back: out of the gone list */
                        while (gone[at] != order[k])
                                at++;
                        memmove(&gone[at], &gone[at + 1], (wi.n_gone - at - 1) * sizeof(*gone));
                        wi.n_gone--;
                        back[wi.n_back++] = order[k];
                        r = dp_sched_cycle_node(st->c, ni, &wi, NULL, err);
                        if (r < 0) goto fail;
                        if (r == 1) continue; /* it fits with this pod kept */
                        wi.n_back--;
                        gone[wi.n_gone++] = order[k];
                        if ((r = victim_of(order[k], &victims[n_victims])) < 0) goto fail;
                        n_victims++;
                        n_violating += group;
                }
        qsort(victims, n_victims, sizeof(*victims), cmp_victim);
        if (DP_GROW(st->cands, st->cap_cands, st->n_cands + 1) < 0) {
                r = -ENOMEM;
                goto fail;
        }
        st->cands[st->n_cands++] = (dp_preempt_candidate){node->meta.name, TAKE_PTR(victims), n_victims, n_violating};
        return 1;
fail:
        for (size_t i = 0; i < n_victims; i++)
                free((char *)victims[i].key);
        return r;
}

static int set_postfilter(qpod *q, const dp_pod *p, const char *preemption) {
        free(q->info.postfilter);
        q->info.postfilter =
                dp_asprintf("%s, preemption: %s",
                            p->n_resource_claims ? "still not schedulable" : "no new claims to deallocate", preemption);
        return q->info.postfilter ? 0 : -ENOMEM;
}

static int postfilter(dp_sched *s, qpod *q, struct cycle *c, const uint8_t *node_unres, dp_error *err) {
        const dp_pod *p = dp_sched_cycle_pod(c);
        if (p->preemption_policy && streq(p->preemption_policy, "Never"))
                return set_postfilter(q, p, NOT_ELIGIBLE_NEVER);
        size_t nn = 0;
        const dp_node *const *nodes = dp_sched_node_table(s, &nn);
        _cleanup_(pf_done) pf_state st = {.s = s, .q = q, .c = c};
        if (q->priority <= s->min_bound_prio) { /* nothing lower is bound anywhere: no victims, no dry run */
                uint32_t unres = 0;
                for (size_t ni = 0; ni < nn; ni++)
                        unres += node_unres[ni] != 0;
                int r = unres ? dp_diag_hist_add(&st.hist, DP_VERDICT_NOT_HELPFUL, 0) : 0;
                if (r >= 0 && unres < nn) r = dp_diag_hist_add(&st.hist, DP_VERDICT_NO_VICTIMS, 0);
                if (r < 0) return r;
                for (size_t i = 0; i < st.hist.n; i++)
                        st.hist.v[i].nodes = st.hist.v[i].code == DP_VERDICT_NOT_HELPFUL ? unres : (uint32_t)nn - unres;
                dp_sched_nominate(s, q, NULL); /* no candidate clears an earlier nomination ("") */
                _cleanup_free_ char *m = dp_diag_message(&st.hist, &s->strings, nn);
                return m ? set_postfilter(q, p, m) : -ENOMEM;
        }
        int r = pf_collect(&st, nn);
        for (size_t ni = 0; ni < nn && r >= 0; ni++)
                r = node_unres[ni] ? dp_diag_hist_add(&st.hist, DP_VERDICT_NOT_HELPFUL, 0)
                                   : select_victims(&st, ni, nodes[ni], err);
        if (r < 0) return r;
        if (!st.n_cands) {
                dp_sched_nominate(s, q, NULL);
                _cleanup_free_ char *m = dp_diag_message(&st.hist, &s->strings, nn);
                return m ? set_postfilter(q, p, m) : -ENOMEM;
        }
        /* the chosen node's victims go to the pod, deleted after the cycle */
        dp_preempt_candidate *best = &st.cands[dp_preempt_pick(st.cands, st.n_cands)];
        if (!(q->victims = calloc(best->n_victims + 1, sizeof(char *)))) return -ENOMEM;
        for (size_t i = 0; i < best->n_victims; i++) {
                q->victims[q->n_victims++] = (char *)best->victims[i].key;
                best->victims[i].key = NULL;
        }
        dp_sched_nominate(s, q, best->node);
        return q->info.nominated ? 0 : -ENOMEM;
}

int dp_sched_postfilter(dp_sched *s, qpod *q, struct cycle *c, const uint8_t *node_unres, dp_error *err) {
        return postfilter(s, q, c, node_unres, err);
}

/* ---- after the cycle ---- */

static qpod *find_q(dp_sched *s, const char *key) { return dp_hashmap_get(s->by_key, key); }

/* kube-scheduler's queueing hints for an assigned pod deleted
 * (AssignedPodDelete), for a waiting pod w and the deleted pod v: moved
 * when a plugin that rejected w says Queue. NodeResourcesFit: always;
 * NodePorts: v held a port w wants; InterPodAffinity: w has anti-affinity
 * terms and v matches all of them; PodTopologySpread: v, in w's namespace,
 * matches a DoNotSchedule selector of w; DynamicResources: v's claims are
 * released (a deallocation). Node name, taints, node affinity, pod affinity:
 * a deletion never helps. A pod-level reason: any change may help. */
static int delete_moves(dp_sched *s, qpod *w, const dp_pod *v, bool *ret) {
        const dp_pod *p = dp_store_get(s->store, DP_KIND_POD, w->ns, w->name, NULL).pod;
        *ret = !w->info.reasons.n;
        for (size_t i = 0; p && !*ret && i < w->info.reasons.n; i++) {
                dp_verdict_code code = w->info.reasons.v[i].code;
                if (!v->node_name && code != DP_VERDICT_NODE_PORTS &&
                    !(code >= DP_VERDICT_INSUFFICIENT_CPU && code <= DP_VERDICT_INSUFFICIENT) &&
                    code != DP_VERDICT_TOO_MANY_PODS)
                        continue; /* an unbound (nominated) pod: only these plugins' hints look at it */
                const char *vns = v->meta.namespace && v->meta.namespace[0] ? v->meta.namespace : "default";
                dp_topo_hint *h = NULL;
                int r = 0;
                switch (code) {
                case DP_VERDICT_INSUFFICIENT_CPU:
                case DP_VERDICT_INSUFFICIENT_MEMORY:
                case DP_VERDICT_INSUFFICIENT:
                case DP_VERDICT_TOO_MANY_PODS: *ret = true; break;
                case DP_VERDICT_DRA: *ret = v->n_resource_claims > 0 || v->extended_resource_claim_name; break;
                case DP_VERDICT_NODE_PORTS: {
                        _cleanup_free_ dp_host_port *a = NULL, *b = NULL;
                        size_t na = 0, nb = 0;
                        if (dp_pod_host_ports(p, &a, &na) < 0 || dp_pod_host_ports(v, &b, &nb) < 0) return -ENOMEM;
                        for (size_t x = 0; x < na; x++)
                                for (size_t y = 0; y < nb; y++)
                                        *ret |= dp_host_ports_conflict(&a[x], &b[y]);
                        break;
                }
                case DP_VERDICT_POD_ANTI_AFFINITY:
                case DP_VERDICT_EXISTING_ANTI_AFFINITY:
                case DP_VERDICT_POD_AFFINITY: {
                        dp_pod anti = *p; /* its anti-affinity terms, matched as the hint matches terms */
                        anti.pod_affinity = p->pod_anti_affinity;
                        anti.n_pod_affinity = p->n_pod_anti_affinity;
                        r = dp_topo_hint_compile(&anti, w->ns, false, true, &h);
                        break;
                }
                case DP_VERDICT_SPREAD:
                case DP_VERDICT_SPREAD_LABEL: r = dp_topo_hint_compile(p, w->ns, true, false, &h); break;
                default: break;
                }
                if (r < 0) return r;
                if (h) *ret = dp_topo_hint_matches(h, v, vns);
                dp_topo_hint_free(h);
        }
        return 0;
}

/* A pod's nomination was cleared or moved: kube-scheduler treats it as
 * that pod deleted from its old node, for the waiting pods of at most its
 * priority (hasNominatedNodeNameChanged, AssignedPodDelete's hints), the
 * pod itself included: the status update that clears it comes after the
 * pod is back in the queue, so a pod NodeResourcesFit rejected is moved by
 * its own nomination's end (pre_moved while it is still in its cycle). */
static void nomination_gone(dp_sched *s, qpod *q) {
        const dp_pod *v = dp_store_get(s->store, DP_KIND_POD, q->ns, q->name, NULL).pod;
        for (size_t i = 0; v && i < s->n_pods; i++) {
                qpod *w = s->pods[i];
                if (!w->present || w->held || w->info.state != DP_POD_UNSCHEDULABLE ||
                    (w != s->in_flight && w->add_moved) || w->priority > q->priority)
                        continue;
                bool moves = true; /* out of memory: moved, as any change would */
                delete_moves(s, w, v, &moves);
                if (moves && w == s->in_flight)
                        w->pre_moved = true;
                else if (moves) {
                        w->add_moved = true;
                        s->add_rev++;
                }
        }
}

/* Move the waiting pods the victim's deletion may help, before it goes;
 * the preemptor q (failed, not yet back in the queue: in flight, as
 * kube-scheduler says) keeps its answer for when it is (pre_moved). */
static int delete_hints(dp_sched *s, qpod *q, const char *ns, const char *name) {
        const dp_pod *v = dp_store_get(s->store, DP_KIND_POD, ns, name, NULL).pod;
        for (size_t i = 0; v && i < s->n_pods; i++) {
                qpod *w = s->pods[i];
                if (!w->present || w->held || w->info.state != DP_POD_UNSCHEDULABLE || (w != q && w->add_moved))
                        continue;
                bool moves = false;
                int r = delete_moves(s, w, v, &moves);
                if (r < 0) return r;
                if (moves && w == q)
                        q->pre_moved = true;
                else if (moves) {
                        w->add_moved = true;
                        s->add_rev++;
                }
        }
        return 0;
}

int dp_sched_preempt_apply(dp_sched *s, qpod *q, int64_t now_ms, dp_error *err) {
        if (!q->n_victims) return 0;
        _cleanup_strbuf_ dp_strbuf keys = DP_STRBUF_INIT;
        int r = dp_sched_sync(s, now_ms); /* what came before is not the victims' */
        s->quiet_from = dp_store_changes_end(s->store);
        for (size_t i = 0; i < q->n_victims && r >= 0; i++) {
                char *key = q->victims[i], *slash = strchr(key, '/');
                dp_strbuf_printf(&keys, "%s%s", i ? "," : "", key);
                qpod *v = find_q(s, key);
                if (v) {
                        free(v->info.preempted_by);
                        v->info.preempted_by = dp_strdup(q->key);
                        v->info.preempted_at_ms = now_ms;
                }
                *slash = '\0';
                r = delete_hints(s, q, key, slash + 1);
                if (r >= 0)
                        r = s->on_preempt ? s->on_preempt(s->userdata, key, slash + 1, q->key, q->info.nominated, err)
                                          : dp_sched_delete_pod(s->store, key, slash + 1);
                *slash = '/';
                if (r == -ENOENT) r = 0;
        }
        s->quiet_to = dp_store_changes_end(s->store);
        for (size_t i = 0; i < q->n_victims; i++)
                free(q->victims[i]);
        free(q->victims);
        q->victims = NULL;
        q->n_victims = 0;
        if (r < 0) return r;
        /* lower-priority pods nominated to that node may no longer fit there */
        for (size_t i = s->n_nominated; i-- > 0;) {
                qpod *o = s->nominated[i];
                if (o != q && o->priority < q->priority && streq_ptr(o->info.nominated, q->info.nominated))
                        dp_sched_nominate(s, o, NULL);
        }
        free(q->info.victims);
        q->info.victims = dp_strbuf_steal(&keys);
        q->info.preempted_at_ms = now_ms;
        return q->info.victims ? 0 : -ENOMEM;
}

char *dp_sched_message(const dp_sched_pod_info *pi) {
        if (!pi->postfilter) return dp_strdup(pi->message ? pi->message : "");
        return dp_asprintf("%s %s", pi->message ? pi->message : "", pi->postfilter);
}
