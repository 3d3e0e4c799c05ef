/* SPDX-License-Identifier: Apache-2.0
 * sched.c — the queue, gangs, binding (sched.h). Filtering and scoring of
 * one pod live in filter.c. */
#include <stdio.h>

#include "sched/dra-adapter.h"
#include "sched/fmt.h"
#include "sched/preempt.h"
#include "sched/sched-internal.h"
#include "sched/topology.h"

#define UNSCHEDULABLE_FLUSH_MS 300000 /* podMaxInUnschedulablePodsDuration: 5 min */

void dp_sched_info_clear_reasons(dp_sched_pod_info *info) { dp_diag_hist_clear(&info->reasons); }

const char *dp_pod_uid(const dp_pod *p, char *buf, size_t size) {
        if (p->meta.uid && p->meta.uid[0]) return p->meta.uid;
        dp_fmt(buf, size, "%s/%s", p->meta.namespace ? p->meta.namespace : "default", p->meta.name);
        return buf;
}

static qpod *qpod_free(qpod *q) {
        if (!q) return NULL;
        free(q->key);
        free(q->ns);
        free(q->name);
        free(q->info.node);
        free(q->info.message);
        dp_sched_info_clear_reasons(&q->info);
        free(q->created);
        dp_topo_hint_free(q->hint);
        free(q->info.postfilter);
        free(q->info.nominated);
        free(q->info.victims);
        free(q->info.preempted_by);
        for (size_t i = 0; i < q->n_victims; i++)
                free(q->victims[i]);
        free(q->victims);
        free(q);
        return NULL;
}

int dp_sched_new(dp_store *store, const dp_sched_config *cfg, dp_sched **ret) {
        assert_return(store && ret, -EINVAL);
        dp_sched *s = calloc(1, sizeof(*s));
        if (!s) return -ENOMEM;
        s->store = store;
        s->name = dp_strdup(cfg && cfg->name ? cfg->name : "default-scheduler");
        s->policy = cfg ? cfg->policy : DP_SCORE_BINPACK;
        if (cfg && cfg->profile)
                s->profile = *cfg->profile;
        else
                dp_score_profile_default(&s->profile);
        s->backoff_initial = cfg && cfg->backoff_initial_ms > 0 ? cfg->backoff_initial_ms : 1000;
        s->backoff_max = cfg && cfg->backoff_max_ms > 0 ? cfg->backoff_max_ms : 10000;
        s->on_bind = cfg ? cfg->on_bind : NULL;
        s->on_attempt = cfg ? cfg->on_attempt : NULL;
        s->userdata = cfg ? cfg->userdata : NULL;
        if (cfg) s->alloc_opts = cfg->alloc;
        s->all_schedulers = cfg && cfg->all_schedulers;
        s->preemption = cfg && cfg->preemption;
        s->dra_preemption = cfg && cfg->dra_preemption;
        s->on_preempt = cfg ? cfg->on_preempt : NULL;
        s->min_bound_prio = INT32_MAX;
        s->by_key = dp_hashmap_new();
        if (!s->name || !s->by_key) return dp_sched_free(s), -ENOMEM;
        *ret = s;
        return 0;
}

dp_sched *dp_sched_free(dp_sched *s) {
        if (!s) return NULL;
        for (size_t i = 0; i < s->n_pods; i++)
                qpod_free(s->pods[i]);
        free(s->pods);
        free(s->hinted);
        dp_topo_hint_index_free(s->hint_idx);
        free(s->nominated);
        free(s->heap);
        free(s->waiting);
        free(s->cand);
        free(s->cand_rev);
        for (size_t i = 0; i < s->n_assumed; i++)
                dp_sched_plan_free(s->assumed[i]);
        free(s->assumed);
        dp_sched_dra_free(s->dra);
        dp_sched_usage_free(s);
        dp_topo_index_free(s->topo);
        free(s->by_slot);
        free(s->sync_slots);
        dp_hashmap_free(s->by_key);
        dp_diag_strings_done(&s->strings);
        free(s->name);
        free(s);
        return NULL;
}

const dp_sched_pod_info *dp_sched_pod(const dp_sched *s, const char *ns, const char *name) {
        char key[1024];
        dp_fmt(key, sizeof(key), "%s/%s", ns && ns[0] ? ns : "default", name);
        qpod *q = dp_hashmap_get(s->by_key, key);
        return q ? &q->info : NULL;
}

const dp_diag_strings *dp_sched_strings(const dp_sched *s) { return &s->strings; }

void dp_sched_node_verdicts_free(dp_sched_node_verdict *v, size_t n) {
        for (size_t i = 0; v && i < n; i++)
                free(v[i].detail);
        free(v);
}

int dp_sched_diagnose(dp_sched *s, const char *ns, const char *name, dp_sched_node_verdict **ret, size_t *ret_n,
                      char **ret_message, dp_error *err) {
        assert_return(s && name && ret && ret_n && ret_message, -EINVAL);
        char key[1024];
        dp_fmt(key, sizeof(key), "%s/%s", ns && ns[0] ? ns : "default", name);
        qpod *q = dp_hashmap_get(s->by_key, key);
        if (!q) return -ENOENT;
        if (q->held) { /* gated or another scheduler's: no node is looked at */
                if (!(*ret_message = dp_strdup(q->info.message ? q->info.message : ""))) return -ENOMEM;
                return 0;
        }
        /* a scratch record: the pod's own stays as the last attempt left it */
        qpod tmp = *q;
        tmp.info = (dp_sched_pod_info){0};
        sched_verdicts v = {0};
        int r = dp_sched_diagnose_one(s, &tmp, &v, err);
        dp_diag_hist_clear(&tmp.info.reasons);
        free(tmp.info.node);
        if (r < 0) {
                free(tmp.info.message);
                dp_sched_node_verdicts_free(v.v, v.n);
                return r;
        }
        if (r == 0) {
                dp_sched_node_verdicts_free(v.v, v.n);
                *ret_message = tmp.info.message;
                return 0;
        }
        free(tmp.info.message);
        *ret = v.v;
        *ret_n = v.n;
        return 1;
}

/* ---- the queue ---- */

/* PrioritySort: priority, then the time the pod joined the queue (pods
 * joining together: by creationTimestamp, unset first, as the API server
 * created them), then input order. */
static bool q_before(const qpod *a, const qpod *b) {
        if (a->priority != b->priority) return a->priority > b->priority;
        if (a->added_ms != b->added_ms) return a->added_ms < b->added_ms;
        int c = strcmp(a->created ? a->created : "", b->created ? b->created : "");
        if (c) return c < 0;
        return a->seq < b->seq;
}

static void heap_up(dp_sched *s, size_t i) {
        qpod *q = s->heap[i];
        while (i > 0) {
                size_t p = (i - 1) / 2;
                if (!q_before(q, s->heap[p])) break;
                s->heap[i] = s->heap[p];
                i = p;
        }
        s->heap[i] = q;
}

static void heap_down(dp_sched *s, size_t i) {
        qpod *q = s->heap[i];
        for (;;) {
                size_t c = 2 * i + 1;
                if (c >= s->n_heap) break;
                if (c + 1 < s->n_heap && q_before(s->heap[c + 1], s->heap[c])) c++;
                if (!q_before(s->heap[c], q)) break;
                s->heap[i] = s->heap[c];
                i = c;
        }
        s->heap[i] = q;
}

static qpod *heap_pop(dp_sched *s) {
        qpod *top = s->heap[0];
        s->heap[0] = s->heap[--s->n_heap];
        if (s->n_heap) heap_down(s, 0);
        top->in_heap = false;
        return top;
}

static int track_one(dp_sched *s, qpod *q);

/* ---- pick's candidates for one `now` ----
 * At a fixed time a waiting pod's eligibility only grows: its backoff ran out
 * or it did not, and the store's revision only moves on. So the waiting pods
 * whose time has come are collected once per `now` into a heap (cand, by
 * priority then arrival), those of them still waiting for a store change
 * into a list (cand_rev) that joins the heap when the revision moves. Pods
 * tried again at that time are failed with a later retry and leave the heap
 * when met: each pick costs a logarithm, not a walk of every waiting pod. */

static void cand_up(qpod **h, size_t i) {
        qpod *q = h[i];
        while (i > 0) {
                size_t p = (i - 1) / 2;
                if (!q_before(q, h[p])) break;
                h[i] = h[p];
                i = p;
        }
        h[i] = q;
}

static void cand_down(qpod **h, size_t n, size_t i) {
        qpod *q = h[i];
        for (;;) {
                size_t c = 2 * i + 1;
                if (c >= n) break;
                if (c + 1 < n && q_before(h[c + 1], h[c])) c++;
                if (!q_before(h[c], q)) break;
                h[i] = h[c];
                i = c;
        }
        h[i] = q;
}

/* Whether the store changed in a way that may let q in since it failed. */
static bool moved(const dp_sched *s, const qpod *q) {
        return s->hint_rev != q->failed_rev || q->add_moved;
}

static bool time_come(const qpod *q, int64_t now) {
        return now >= q->failed_at + UNSCHEDULABLE_FLUSH_MS || now >= q->retry_at;
}

/* A waiting pod for the candidates of cand_now (when its time has come). */
static int cand_add(dp_sched *s, qpod *q) {
        if (!s->cand_ok || !q->present || q->held || q->info.state != DP_POD_UNSCHEDULABLE ||
            !time_come(q, s->cand_now))
                return 0;
        bool flush = s->cand_now >= q->failed_at + UNSCHEDULABLE_FLUSH_MS;
        if (!flush && !moved(s, q)) {
                if (DP_GROW(s->cand_rev, s->cap_cand_rev, s->n_cand_rev + 1) < 0) return -ENOMEM;
                s->cand_rev[s->n_cand_rev++] = q;
                return 0;
        }
        if (DP_GROW(s->cand, s->cap_cand, s->n_cand + 1) < 0) return -ENOMEM;
        s->cand[s->n_cand++] = q;
        cand_up(s->cand, s->n_cand - 1);
        return 0;
}

static void cand_reset(dp_sched *s) {
        s->cand_ok = false;
        s->n_cand = s->n_cand_rev = 0;
}

/* Put a pod where its state says it waits (once). Out of memory, the queue
 * is given up for the walk over every pod. */
static void track(dp_sched *s, qpod *q) {
        if (track_one(s, q) < 0) s->queue_lost = true;
}

static int track_one(dp_sched *s, qpod *q) {
        if (!q->present || q->info.state == DP_POD_BOUND || q->held) return 0;
        if (q->info.state == DP_POD_QUEUED) {
                if (q->in_heap) return 0;
                if (DP_GROW(s->heap, s->cap_heap, s->n_heap + 1) < 0) return -ENOMEM;
                s->heap[s->n_heap++] = q;
                q->in_heap = true;
                heap_up(s, s->n_heap - 1);
                return 0;
        }
        if (q->in_waiting) return 0;
        if (DP_GROW(s->waiting, s->cap_waiting, s->n_waiting + 1) < 0) return -ENOMEM;
        s->waiting[s->n_waiting++] = q;
        q->in_waiting = true;
        if (cand_add(s, q) < 0) cand_reset(s); /* the next pick walks the list */
        return 0;
}

static bool ours(const dp_sched *s, const dp_pod *p) {
        return s->all_schedulers || !p->scheduler_name || streq(p->scheduler_name, s->name);
}

#define GATED_MESSAGE "Scheduling is blocked due to non-empty scheduling gates" /* the API server's condition */

/* An unbound pod this instance must not try: why (into buf), else NULL. */
static const char *held_reason(const dp_sched *s, const dp_pod *p, char *buf, size_t size) {
        if (p->node_name) return NULL;
        /* kube-scheduler skips a pod being deleted (skipPodSchedule) */
        if (p->meta.deletion_timestamp) return "being deleted (metadata.deletionTimestamp): not scheduled";
        if (!ours(s, p)) {
                dp_fmt(buf, size, "not scheduled by %s: spec.schedulerName %s", s->name, p->scheduler_name);
                return buf;
        }
        return p->n_scheduling_gates ? GATED_MESSAGE : NULL;
}

/* Held pods wait outside the queue with their reason; a pod no longer held
 * (its gates removed) joins it. */
static int sync_held(dp_sched *s, qpod *q, const dp_pod *p) {
        char buf[512];
        const char *why = held_reason(s, p, buf, sizeof(buf));
        if (!why && q->held) {
                q->held = false;
                q->info.state = DP_POD_QUEUED;
                free(q->info.message);
                q->info.message = NULL;
        } else if (why && q->info.state != DP_POD_BOUND) {
                q->held = true;
                q->info.state = DP_POD_UNSCHEDULABLE;
                free(q->info.message);
                if (!(q->info.message = dp_strdup(why))) return -ENOMEM;
        }
        return 0;
}

/* Forget q's compiled hint: its entries in hint_idx go stale. A pod still
 * waiting with hints goes back to the list of those to file. */
static void hint_drop(dp_sched *s, qpod *q) {
        q->hint = dp_topo_hint_free(q->hint);
        q->hint_for = 0;
        q->hint_filed = false;
        q->hint_gen++;
        if (q->info.state == DP_POD_UNSCHEDULABLE && (q->hint_spread || q->hint_interpod) && !q->in_hinted) {
                q->in_hinted = true;
                s->hinted[s->n_hinted++] = q;
        }
}

/* One pod of the store seen by sync: join the queue, or refresh. */
static int sync_pod(dp_sched *s, size_t slot, dp_object o, int64_t now_ms) {
        const dp_pod *p = o.pod;
        qpod *q = slot < s->n_by_slot ? s->by_slot[slot] : NULL;
        const char *ns = dp_store_ns_of(o);
        char key[1024];
        if (!q) {
                dp_fmt(key, sizeof(key), "%s/%s", ns, p->meta.name);
                q = dp_hashmap_get(s->by_key, key);
        }
        if (q) {
                q->present = true;
                hint_drop(s, q);                                     /* its labels or constraints may be new */
                if (p->node_name && q->info.state != DP_POD_BOUND) { /* bound by someone else */
                        q->info.state = DP_POD_BOUND;
                        free(q->info.node);
                        q->info.node = dp_strdup(p->node_name);
                        if (!q->info.node) return -ENOMEM;
                }
        } else {
                if (!ours(s, p) && p->node_name) return 0;
                /* hinted has room for every pod: note_hints cannot fail */
                if (DP_GROW(s->pods, s->cap_pods, s->n_pods + 1) < 0 ||
                    DP_GROW(s->hinted, s->cap_hinted, s->n_pods + 1) < 0)
                        return -ENOMEM;
                q = calloc(1, sizeof(*q));
                if (!q) return -ENOMEM;
                q->key = dp_strdup(key);
                q->ns = dp_strdup(ns);
                q->name = dp_strdup(p->meta.name);
                q->seq = s->next_seq++;
                q->priority = p->has_priority ? p->priority : 0;
                q->added_ms = now_ms;
                q->present = true;
                if (p->meta.creation_timestamp && !(q->created = dp_strdup(p->meta.creation_timestamp))) {
                        qpod_free(q);
                        return -ENOMEM;
                }
                if (p->node_name) {
                        q->info.state = DP_POD_BOUND;
                        q->info.node = dp_strdup(p->node_name);
                        q->info.bound_at_ms = now_ms;
                }
                if (!q->key || !q->ns || !q->name || (p->node_name && !q->info.node) ||
                    dp_hashmap_put(s->by_key, q->key, q) < 0) {
                        qpod_free(q);
                        return -ENOMEM;
                }
                s->pods[s->n_pods++] = q;
        }
        if (sync_held(s, q, p) < 0) return -ENOMEM;
        if (slot >= s->n_by_slot) {
                size_t n = dp_store_slots(s->store);
                if (slot >= n) {
                        track(s, q);
                        return 0;
                }
                qpod **v = realloc(s->by_slot, n * sizeof(*v));
                if (!v) return -ENOMEM;
                memset(v + s->n_by_slot, 0, (n - s->n_by_slot) * sizeof(*v));
                s->by_slot = v;
                s->n_by_slot = n;
        }
        s->by_slot[slot] = q;
        track(s, q);
        return 0;
}

static int cmp_size(const void *a, const void *b) {
        size_t x = *(const size_t *)a, y = *(const size_t *)b;
        return x < y ? -1 : x > y;
}

/* Whether a change to the store can make a pod that did not fit fit now
 * (kube-scheduler's queueing hints, coarsely): a pod gone frees what it
 * held; a claim deleted or not allocated may be allocated; any change to
 * nodes, slices, classes, taint rules, groups may help. A pod created or
 * bound elsewhere, or a claim allocated, takes and never frees: a pod
 * rejected before stays rejected, with the reasons of its first attempt,
 * as in kube-scheduler. */
/* A pod written to a node helps only the waiting pods whose rejecting
 * plugins' queueing hints say so (pod_bound_hints). */
static bool may_help(const dp_sched *s, dp_kind k, dp_object o) {
        (void)s;
        switch (k) {
        case DP_KIND_POD: return !o.hdr;
        case DP_KIND_RESOURCE_CLAIM: return !o.hdr || !o.claim->allocation;
        default: return true;
        }
}

/* Compile and file the hints of the pods that failed since the last pod
 * bound (each once: a hint stays filed while its pod fails for the same
 * plugins). */
static int file_hints(dp_sched *s) {
        size_t k = 0, i = 0;
        int r = 0;
        for (; i < s->n_hinted && r >= 0; i++) {
                qpod *q = s->hinted[i];
                unsigned want = (q->hint_spread ? 1u : 0u) | (q->hint_interpod ? 2u : 0u);
                if (!q->present || q->info.state != DP_POD_UNSCHEDULABLE || !want || q->hint_filed) {
                        q->in_hinted = false;
                        continue;
                }
                if (!q->hint) {
                        dp_object o = dp_store_get(s->store, DP_KIND_POD, q->ns, q->name, NULL);
                        if (!o.hdr) {
                                q->in_hinted = false;
                                continue;
                        }
                        r = dp_topo_hint_compile(o.pod, q->ns, q->hint_spread, q->hint_interpod, &q->hint);
                        if (r < 0) break;
                        q->hint_for = want;
                }
                /* anti-affinity alone: no pod bound helps, nothing to file */
                if (dp_topo_hint_any(q->hint) &&
                    (r = dp_topo_hint_index_add(&s->hint_idx, q->hint, q, q->hint_gen)) < 0)
                        break;
                q->hint_filed = true;
                q->in_hinted = false;
        }
        for (; i < s->n_hinted; i++)
                s->hinted[k++] = s->hinted[i]; /* left for the next pod bound */
        s->n_hinted = k;
        return r;
}

typedef struct hint_visit {
        dp_sched *s;
        const dp_pod *added;
        const char *added_ns;
} hint_visit;

/* An entry of hint_idx: stale (dropped) when its pod's hint changed since;
 * skipped unless the pod waits, rejected, and no pod bound moved it yet. */
static bool hint_visit_one(void *item, uint64_t gen, void *ud) {
        hint_visit *v = ud;
        qpod *q = item;
        if (gen != q->hint_gen || !q->hint_filed) return false;
        if (!q->present || q->info.state != DP_POD_UNSCHEDULABLE || q->add_moved) return true;
        v->s->hint_checks++;
        if (dp_topo_hint_matches(q->hint, v->added, v->added_ns)) {
                q->add_moved = true;
                v->s->add_rev++;
        }
        return true;
}

/* kube-scheduler's InterPodAffinity and PodTopologySpread queueing hints
 * for a pod bound to a node (an AssignedPodAdd): the waiting pods those
 * plugins rejected are moved when the hint says Queue. Only the pods whose
 * hints are filed under one of the added pod's labels are looked at. */
static int pod_bound_hints(dp_sched *s, const dp_pod *added) {
        int r = file_hints(s);
        if (r < 0) return r;
        hint_visit v = {s, added, added->meta.namespace ? added->meta.namespace : "default"};
        dp_topo_hint_index_visit(s->hint_idx, added, hint_visit_one, &v);
        return 0;
}

/* Only the pods written since the last sync are looked at (the store's
 * change log), in store order, as a walk over every pod would see them. */
int dp_sched_sync(dp_sched *s, int64_t now_ms) {
        size_t pos = s->sync_pos, slot, n = 0;
        for (size_t at = pos; dp_store_next_change(s->store, &pos, &slot); at = pos) {
                dp_object o;
                dp_kind k = dp_store_slot(s->store, slot, &o, NULL);
                bool quiet = at >= s->quiet_from && at < s->quiet_to; /* preemption's victims (preempt.c) */
                if (!quiet && may_help(s, k, o)) s->hint_rev++;
                if (k != DP_KIND_POD) continue;
                if (DP_GROW(s->sync_slots, s->cap_sync_slots, n + 1) < 0) return -ENOMEM;
                s->sync_slots[n++] = slot;
        }
        if (pos == SIZE_MAX) { /* the log was lost: every pod; anything may have changed */
                if (dp_store_revision(s->store) != s->hint_store_rev) s->hint_rev++;
                n = 0;
                for (size_t i = 0; i < dp_store_slots(s->store); i++) {
                        if (dp_store_slot(s->store, i, NULL, NULL) != DP_KIND_POD) continue;
                        if (DP_GROW(s->sync_slots, s->cap_sync_slots, n + 1) < 0) return -ENOMEM;
                        s->sync_slots[n++] = i;
                }
        }
        if (n > 1) qsort(s->sync_slots, n, sizeof(size_t), cmp_size);
        for (size_t i = 0; i < n; i++) {
                if (i && s->sync_slots[i] == s->sync_slots[i - 1]) continue;
                dp_object o;
                dp_store_slot(s->store, s->sync_slots[i], &o, NULL);
                if (!o.hdr) { /* gone from the store: leaves the queue (its record stays) */
                        qpod *q = s->sync_slots[i] < s->n_by_slot ? s->by_slot[s->sync_slots[i]] : NULL;
                        if (q) {
                                q->present = false;
                                hint_drop(s, q);
                        }
                        continue;
                }
                int r = sync_pod(s, s->sync_slots[i], o, now_ms);
                if (o.pod->node_name) /* preemption: no victim below the lowest priority bound */
                        s->min_bound_prio = DP_MIN(s->min_bound_prio, o.pod->has_priority ? o.pod->priority : 0);
                if (r >= 0 && o.pod->node_name) r = pod_bound_hints(s, o.pod);
                if (r < 0) return r;
        }
        s->sync_pos = dp_store_changes_end(s->store);
        s->hint_store_rev = dp_store_revision(s->store);
        return 0;
}

static int64_t backoff(const dp_sched *s, const qpod *q) {
        int64_t b = s->backoff_initial;
        for (unsigned i = 1; i < q->info.attempts && b < s->backoff_max; i++)
                b *= 2;
        return DP_MIN(b, s->backoff_max);
}

static bool eligible(const dp_sched *s, const qpod *q, int64_t now) {
        if (!q->present || q->info.state == DP_POD_BOUND || q->held) return false;
        if (q->info.state == DP_POD_QUEUED) return true;
        if (now >= q->failed_at + UNSCHEDULABLE_FLUSH_MS) return true;
        return moved(s, q) && now >= q->retry_at;
}

static int64_t retry_time(const dp_sched *s, const qpod *q) {
        return q->info.state == DP_POD_QUEUED ? 0
               : moved(s, q) ? DP_MIN(q->retry_at, q->failed_at + UNSCHEDULABLE_FLUSH_MS)
                                              : q->failed_at + UNSCHEDULABLE_FLUSH_MS;
}

/* Every present pod not bound is in the heap or the waiting list. */
int64_t dp_sched_next_retry(const dp_sched *s) {
        int64_t best = -1;
        if (s->queue_lost) {
                for (size_t i = 0; i < s->n_pods; i++) {
                        const qpod *q = s->pods[i];
                        if (!q->present || q->info.state == DP_POD_BOUND || q->held) continue;
                        int64_t t = retry_time(s, q);
                        if (best < 0 || t < best) best = t;
                }
                return best;
        }
        for (int pass = 0; pass < 2 && best != 0; pass++) {
                qpod *const *v = pass ? s->waiting : s->heap;
                size_t n = pass ? s->n_waiting : s->n_heap;
                for (size_t i = 0; i < n && best != 0; i++) {
                        const qpod *q = v[i];
                        if (!q->present || q->info.state == DP_POD_BOUND) continue;
                        int64_t t = retry_time(s, q);
                        if (best < 0 || t < best) best = t;
                }
        }
        return best;
}

/* Which of the plugins with a hint for pods bound rejected q (its reasons). */
static void note_hints(dp_sched *s, qpod *q) {
        q->hint_spread = q->hint_interpod = q->add_moved = false;
        for (size_t i = 0; i < q->info.reasons.n; i++)
                switch (q->info.reasons.v[i].code) {
                case DP_VERDICT_POD_AFFINITY:
                case DP_VERDICT_POD_ANTI_AFFINITY:
                case DP_VERDICT_EXISTING_ANTI_AFFINITY: q->hint_interpod = true; break;
                case DP_VERDICT_SPREAD:
                case DP_VERDICT_SPREAD_LABEL: q->hint_spread = true; break;
                default: break;
                }
        unsigned want = (q->hint_spread ? 1u : 0u) | (q->hint_interpod ? 2u : 0u);
        if (q->hint && q->hint_for == want) return; /* filed already (or nothing to file) */
        if (q->hint) hint_drop(s, q);
        if (want && !q->in_hinted) {
                q->in_hinted = true;
                s->hinted[s->n_hinted++] = q;
        }
}

static void mark_failed(dp_sched *s, qpod *q, int64_t now) {
        q->info.state = DP_POD_UNSCHEDULABLE;
        q->failed_at = now;
        q->failed_rev = s->hint_rev;
        note_hints(s, q);
        if (q->pre_moved) { /* its own preemption's victims are gone (preempt.c) */
                q->pre_moved = false;
                q->add_moved = true;
                s->add_rev++;
        }
        q->retry_at = now + backoff(s, q);
        track(s, q);
}

/* ---- binding ---- */

static int set_node(dp_object o, void *userdata) {
        const dp_sched_plan *pl = userdata;
        char *n = pl ? dp_strdup(pl->node) : NULL, *e = NULL;
        if (pl && !n) return -ENOMEM;
        if (pl && pl->ext_claim_name && !(e = dp_strdup(pl->ext_claim_name))) {
                free(n);
                return -ENOMEM;
        }
        char *st = pl ? dp_strdup(pl->start_time) : NULL; /* the kubelet's part, as the oracle does it */
        if (pl && !st) {
                free(n);
                free(e);
                return -ENOMEM;
        }
        free(o.pod->start_time);
        o.pod->start_time = st;
        free(o.pod->node_name);
        o.pod->node_name = n;
        if (pl && pl->ext_claim_name) {
                free(o.pod->extended_resource_claim_name);
                o.pod->extended_resource_claim_name = e;
        }
        return 0;
}

static void plan_undo(dp_sched *s, dp_sched_plan *pl) {
        if (pl->bound) {
                dp_store_update(s->store, DP_KIND_POD, pl->q->ns, pl->q->name, DP_STORE_ANY_RV, set_node, NULL, NULL);
                pl->bound = false;
        }
        for (size_t i = pl->n_claims; i-- > 0;) {
                plan_claim *pc = &pl->claims[i];
                if (pc->written) dp_store_release_claim(s->store, pc->ns, pc->name, pl->pod_uid);
                if (pc->written && !pc->create && pc->rv == DP_STORE_ANY_RV)
                        dp_store_delete(s->store, DP_KIND_RESOURCE_CLAIM, pc->ns, pc->name, DP_STORE_ANY_RV);
                pc->written = false;
        }
}

/* 1 written, 0 rejected (undone), <0 error (undone). */
static int plan_write(dp_sched *s, dp_sched_plan *pl, int64_t now, dp_error *err) {
        dp_consumer_ref me = {.resource = (char *)"pods", .name = pl->q->name, .uid = pl->pod_uid};
        int r = 0;
        for (size_t i = 0; i < pl->n_claims && r >= 0; i++) {
                plan_claim *pc = &pl->claims[i];
                if (pc->create) {
                        dp_resource_claim *c = pc->create;
                        r = dp_store_add(s->store, (dp_object){.claim = c}, NULL);
                        if (r == -EEXIST) r = -ESTALE;
                        if (r < 0) break;
                        pc->create = NULL; /* the store owns it; undo deletes it */
                }
                uint64_t rv = pc->alloc ? pc->rv : DP_STORE_ANY_RV;
                r = dp_store_write_allocation(s->store, pc->ns, pc->name, rv, pc->alloc, &me, NULL, err);
                if (r >= 0) {
                        pc->alloc = NULL;
                        pc->written = true;
                }
        }
        if (r >= 0) {
                dp_preempt_format_time(DP_PREEMPT_BIND_EPOCH + (int64_t)s->n_binds + 1, pl->start_time,
                                       sizeof(pl->start_time));
                r = dp_store_update(s->store, DP_KIND_POD, pl->q->ns, pl->q->name, pl->pod_rv, set_node, pl, NULL);
                if (r >= 0) {
                        pl->bound = true;
                        s->n_binds++;
                } else if (r == -ESTALE)
                        dp_error_set(err, r, "pod %s changed since it was read", pl->q->key);
        }
        if (r < 0) {
                plan_undo(s, pl);
                if (r == -ESTALE || r == -EBUSY || r == -EINVAL || r == -ENOENT) return 0;
                return r;
        }
        qpod *q = pl->q;
        q->info.state = DP_POD_BOUND;
        dp_sched_nomination_done(s, q);
        free(q->info.node);
        q->info.node = dp_strdup(pl->node);
        q->info.bound_at_ms = now;
        free(q->info.message);
        q->info.message = NULL;
        dp_sched_info_clear_reasons(&q->info);
        return q->info.node ? 1 : -ENOMEM;
}

static void conflict(dp_sched *s, qpod *q, int64_t now, const dp_error *err) {
        char m[DP_ERROR_MSG_MAX + 64];
        dp_fmt(m, sizeof(m), "binding rejected, will retry: %s", dp_error_msg(err));
        dp_sched_info_clear_reasons(&q->info);
        free(q->info.message);
        q->info.message = dp_strdup(m);
        mark_failed(s, q, now);
        /* a lost race is retried at once after backoff, whether or not more changes come */
        q->failed_rev = s->hint_rev - 1;
}

int dp_sched_plan_pod(dp_sched *s, const char *ns, const char *name, int64_t now_ms, dp_sched_plan **ret,
                      dp_error *err) {
        int r = dp_sched_sync(s, now_ms);
        if (r < 0) return r;
        char key[1024];
        dp_fmt(key, sizeof(key), "%s/%s", ns && ns[0] ? ns : "default", name);
        qpod *q = dp_hashmap_get(s->by_key, key);
        if (!q || !q->present) return dp_error_set(err, -ENOENT, "pod %s is not pending", key);
        r = dp_sched_plan_one(s, q, now_ms, ret, err);
        if (r == 0) mark_failed(s, q, now_ms);
        return r;
}

int dp_sched_commit(dp_sched *s, dp_sched_plan *plan, int64_t now_ms, dp_error *err) {
        dp_error e2 = DP_ERROR_INIT;
        if (!err) err = &e2;
        int r = plan_write(s, plan, now_ms, err);
        if (r == 0) conflict(s, plan->q, now_ms, err);
        dp_sched_plan_free(plan);
        return r;
}

/* ---- gangs ---- */

static const dp_pod_group *gang_of(const dp_sched *s, const qpod *q, const char **ret_name) {
        dp_object po = dp_store_get(s->store, DP_KIND_POD, q->ns, q->name, NULL);
        if (!po.hdr) return NULL;
        const char *g = dp_pod_group_name(po.pod);
        if (!g) return NULL;
        dp_object go = dp_store_get(s->store, DP_KIND_POD_GROUP, q->ns, g, NULL);
        /* a group of another API than the pod names it by is not its group */
        if (!go.hdr || !go.pod_group->gang || go.pod_group->min_member <= 1 ||
            !dp_pod_group_has_member(go.pod_group, po.pod))
                return NULL;
        *ret_name = go.pod_group->meta.name;
        return go.pod_group;
}

static int assume(dp_sched *s, dp_sched_plan *pl) {
        for (size_t i = 0; i < pl->n_claims; i++) {
                plan_claim *pc = &pl->claims[i];
                if (!pc->alloc) continue;
                const dp_resource_claim *base = pc->create;
                if (!base) base = dp_store_get(s->store, DP_KIND_RESOURCE_CLAIM, pc->ns, pc->name, NULL).claim;
                if (!base) return -ENOENT;
                dp_resource_claim tmp = *base;
                tmp.allocation = pc->alloc;
                if (!(pc->assumed = dp_resource_claim_clone(&tmp))) return -ENOMEM;
        }
        if (DP_GROW(s->assumed, s->cap_assumed, s->n_assumed + 1) < 0) return -ENOMEM;
        s->assumed[s->n_assumed++] = pl;
        return 0;
}

static int run_gang(dp_sched *s, qpod *first, const dp_pod_group *pg, const char *gname, int64_t now, dp_error *err) {
        _cleanup_free_ qpod **members = calloc(s->n_pods + 1, sizeof(*members));
        if (!members) return -ENOMEM;
        size_t n = 0, bound = 0;
        for (size_t i = 0; i < s->n_pods; i++) {
                qpod *q = s->pods[i];
                const char *g = NULL;
                if (!q->present || q->held || !streq(q->ns, first->ns) || !gang_of(s, q, &g) || !streq(g, gname))
                        continue;
                if (q->info.state == DP_POD_BOUND)
                        bound++;
                else
                        members[n++] = q;
        }
        char m[512];
        int placed = 0, r = 0;
        if (bound + n < (size_t)pg->min_member) {
                dp_fmt(m, sizeof(m), "pod group %s: %zu of minMember %d pods exist", gname, bound + n, pg->min_member);
                for (size_t i = 0; i < n; i++) {
                        dp_sched_info_clear_reasons(&members[i]->info);
                        free(members[i]->info.message);
                        members[i]->info.message = dp_strdup(m);
                        members[i]->info.attempts++;
                        mark_failed(s, members[i], now);
                }
                return 0;
        }
        size_t planned = 0;
        for (size_t i = 0; i < n && r >= 0; i++) {
                dp_sched_plan *pl = NULL;
                r = dp_sched_plan_one(s, members[i], now, &pl, err);
                if (r > 0) {
                        r = assume(s, pl);
                        if (r < 0)
                                dp_sched_plan_free(pl);
                        else
                                planned++;
                }
        }
        if (r >= 0 && bound + planned >= (size_t)pg->min_member) {
                size_t done = 0;
                dp_error cerr = DP_ERROR_INIT;
                for (; done < s->n_assumed && r >= 0; done++) {
                        r = plan_write(s, s->assumed[done], now, &cerr);
                        if (r == 0) break;
                }
                if (r <= 0) { /* all or nothing: undo the members already bound */
                        for (size_t i = 0; i < done; i++) {
                                plan_undo(s, s->assumed[i]);
                                s->assumed[i]->q->info.state = DP_POD_QUEUED;
                        }
                        for (size_t i = 0; i < s->n_assumed; i++)
                                conflict(s, s->assumed[i]->q, now, &cerr);
                } else {
                        placed = (int)s->n_assumed;
                        for (size_t i = 0; i < s->n_assumed && r >= 0 && s->on_bind; i++)
                                r = s->on_bind(s->userdata, s->assumed[i]->q->ns, s->assumed[i]->q->name, err);
                }
        } else if (r >= 0) {
                dp_fmt(m, sizeof(m), "pod group %s: only %zu of minMember %d pods can be placed; none bound", gname,
                       bound + planned, pg->min_member);
                for (size_t i = 0; i < s->n_assumed; i++) {
                        qpod *q = s->assumed[i]->q;
                        free(q->info.message);
                        q->info.message = dp_strdup(m);
                        dp_sched_info_clear_reasons(&q->info);
                }
        }
        for (size_t i = 0; i < n; i++)
                if (members[i]->info.state != DP_POD_BOUND) mark_failed(s, members[i], now);
        for (size_t i = 0; i < s->n_assumed; i++)
                dp_sched_plan_free(s->assumed[i]);
        s->n_assumed = 0;
        return r < 0 ? r : placed;
}

/* The best eligible pod, by priority then arrival, not `exclude`. */
/* pick without candidates: every waiting pod looked at */
static void pick_scan(dp_sched *s, int64_t now_ms, const char *exclude, qpod **ret) {
        qpod *best = NULL;
        /* waiting pods: eligible by time and store changes; stale ones leave */
        size_t k = 0;
        for (size_t i = 0; i < s->n_waiting; i++) {
                qpod *q = s->waiting[i];
                if (!q->present || q->info.state != DP_POD_UNSCHEDULABLE) {
                        q->in_waiting = false;
                        track(s, q);
                        continue;
                }
                s->waiting[k++] = q;
                if (!eligible(s, q, now_ms) || (exclude && streq(q->key, exclude))) continue;
                if (!best || q_before(q, best)) best = q;
        }
        s->n_waiting = k;
        /* queued pods: the heap's top once stale entries are gone */
        qpod *held = NULL;
        while (s->n_heap) {
                qpod *q = s->heap[0];
                if (!q->present || q->info.state != DP_POD_QUEUED) {
                        heap_pop(s);
                        track(s, q);
                        continue;
                }
                if (!held && exclude && streq(q->key, exclude)) {
                        held = heap_pop(s);
                        continue;
                }
                if (!best || q_before(q, best)) best = q;
                break;
        }
        if (held) track(s, held);
        /* pods the heap held that wait now (their state changed without
         * mark_failed, on an error path) */
        for (size_t i = k; i < s->n_waiting; i++) {
                qpod *q = s->waiting[i];
                if (!eligible(s, q, now_ms) || (exclude && streq(q->key, exclude))) continue;
                if (!best || q_before(q, best)) best = q;
        }
        *ret = best;
}

/* The best waiting candidate at now (cand_ok), or NULL. */
static qpod *cand_top(dp_sched *s, int64_t now) {
        if (s->n_cand_rev && (s->hint_rev != s->cand_rev_seen || s->add_rev != s->cand_add_seen)) {
                /* the store moved on: those waiting for a change may go */
                size_t n = s->n_cand_rev;
                s->n_cand_rev = 0;
                for (size_t i = 0; i < n; i++) {
                        qpod *q = s->cand_rev[i];
                        if (cand_add(s, q) < 0) {
                                cand_reset(s);
                                return NULL;
                        }
                }
        }
        s->cand_rev_seen = s->hint_rev;
        s->cand_add_seen = s->add_rev;
        while (s->n_cand) {
                qpod *q = s->cand[0];
                if (eligible(s, q, now) && q->info.state == DP_POD_UNSCHEDULABLE) return q;
                s->cand[0] = s->cand[--s->n_cand];
                if (s->n_cand) cand_down(s->cand, s->n_cand, 0);
                /* tried again (a later retry), bound, gone, or queued: out; or
                 * its time has come but the store has not changed since */
                if (cand_add(s, q) < 0) { /* to cand_rev at most: it was not eligible */
                        cand_reset(s);
                        return NULL;
                }
        }
        return NULL;
}

/* As pick_scan, from the candidates: the same pod. */
static void pick(dp_sched *s, int64_t now_ms, const char *exclude, qpod **ret) {
        if (exclude) {
                cand_reset(s);
                pick_scan(s, now_ms, exclude, ret);
                return;
        }
        if (!s->cand_ok || s->cand_now != now_ms) {
                /* a new time: drop stale entries, collect the candidates */
                cand_reset(s);
                size_t k = 0;
                for (size_t i = 0; i < s->n_waiting; i++) {
                        qpod *q = s->waiting[i];
                        if (!q->present || q->info.state != DP_POD_UNSCHEDULABLE) {
                                q->in_waiting = false;
                                track(s, q);
                                continue;
                        }
                        s->waiting[k++] = q;
                }
                s->n_waiting = k;
                s->cand_ok = true;
                s->cand_now = now_ms;
                s->cand_rev_seen = s->hint_rev;
                s->cand_add_seen = s->add_rev;
                for (size_t i = 0; i < k; i++)
                        if (cand_add(s, s->waiting[i]) < 0) {
                                cand_reset(s);
                                pick_scan(s, now_ms, exclude, ret);
                                return;
                        }
        }
        qpod *best = NULL;
        /* queued pods: the heap's top once stale entries are gone */
        while (s->n_heap) {
                qpod *q = s->heap[0];
                if (!q->present || q->info.state != DP_POD_QUEUED) {
                        heap_pop(s);
                        track(s, q);
                        continue;
                }
                best = q;
                break;
        }
        qpod *w = s->cand_ok ? cand_top(s, now_ms) : NULL;
        if (!s->cand_ok) {
                pick_scan(s, now_ms, exclude, ret);
                return;
        }
        if (w && (!best || q_before(w, best))) best = w;
        *ret = best;
}

/* Without memory for the queue (track failed), the old walk over every pod. */
static qpod *pick_walk(dp_sched *s, int64_t now_ms, const char *exclude) {
        qpod *best = NULL;
        for (size_t i = 0; i < s->n_pods; i++) {
                qpod *q = s->pods[i];
                if (!eligible(s, q, now_ms) || (exclude && streq(q->key, exclude))) continue;
                if (!best || q_before(q, best)) best = q;
        }
        return best;
}

int dp_sched_next(dp_sched *s, int64_t now_ms, const char *exclude, dp_sched_plan **ret, dp_error *err) {
        int r = dp_sched_sync(s, now_ms);
        if (r < 0) return r;
        qpod *best = NULL;
        pick(s, now_ms, exclude, &best);
        if (s->queue_lost) best = pick_walk(s, now_ms, exclude);
        if (!best) return -ENOENT;
        const char *gname = NULL;
        const dp_pod_group *pg = gang_of(s, best, &gname);
        if (pg) {
                r = run_gang(s, best, pg, gname, now_ms, err);
                return r < 0 ? r : 0;
        }
        r = dp_sched_plan_one(s, best, now_ms, ret, err);
        if (r == 0) mark_failed(s, best, now_ms);
        track(s, best);
        return r;
}

int dp_sched_commit_bind(dp_sched *s, dp_sched_plan *plan, int64_t now_ms, dp_error *err) {
        qpod *q = plan->q;
        int r = dp_sched_commit(s, plan, now_ms, err);
        if (r > 0 && s->on_bind) {
                int rr = s->on_bind(s->userdata, q->ns, q->name, err);
                if (rr < 0) return rr;
        }
        return r;
}

static int dp_sched_run_impl(dp_sched *s, int64_t now_ms, dp_error *err) {
        int r = dp_sched_sync(s, now_ms);
        if (r < 0) return r;
        uint64_t binds = s->n_binds;
        for (;;) {
                dp_sched_plan *pl = NULL;
                r = dp_sched_next(s, now_ms, NULL, &pl, err);
                if (r == -ENOENT) break;
                if (r < 0) return r;
                if (r > 0 && (r = dp_sched_commit_bind(s, pl, now_ms, err)) < 0) return r;
                if (s->on_attempt) s->on_attempt(s->userdata);
        }
        /* pods bound here (preemption's victims leave: not the change in bound pods) */
        return (int)(s->n_binds - binds);
}

/* ---- the resourceclaim controller ---- */

const char *dp_sched_pod_claim_name(const dp_pod *p, const dp_pod_resource_claim *pc) {
        if (pc->resource_claim_name) return pc->resource_claim_name;
        for (size_t i = 0; i < p->n_claim_statuses; i++)
                if (streq_ptr(p->claim_statuses[i].name, pc->name)) return p->claim_statuses[i].resource_claim_name;
        return NULL;
}

typedef struct claim_status_add {
        const char *name, *claim;
} claim_status_add;

static int add_claim_status(dp_object o, void *userdata) {
        const claim_status_add *a = userdata;
        dp_pod *p = o.pod;
        dp_pod_claim_status *v = realloc(p->claim_statuses, (p->n_claim_statuses + 1) * sizeof(*v));
        if (!v) return -ENOMEM;
        p->claim_statuses = v;
        v[p->n_claim_statuses].name = dp_strdup(a->name);
        v[p->n_claim_statuses].resource_claim_name = dp_strdup(a->claim);
        if (!v[p->n_claim_statuses].name || !v[p->n_claim_statuses].resource_claim_name) {
                free(v[p->n_claim_statuses].name);
                free(v[p->n_claim_statuses].resource_claim_name);
                return -ENOMEM;
        }
        p->n_claim_statuses++;
        return 0;
}

static int claim_from_template(dp_store *st, const dp_pod *p, const char *ns, const dp_pod_resource_claim *pc,
                               dp_error *err) {
        dp_object to = dp_store_get(st, DP_KIND_RESOURCE_CLAIM_TEMPLATE, ns, pc->resource_claim_template_name, NULL);
        if (!to.hdr) return 0; /* the pod waits for its template */
        const dp_resource_claim_template *t = to.claim_template;
        /* A PodGroup (scheduling.k8s.io/v1alpha2) listing the same claim
         * makes one claim for the whole group, owned by the group. */
        const dp_pod_group *grp = NULL;
        const char *gname = dp_pod_group_name(p);
        if (gname) {
                dp_object go = dp_store_get(st, DP_KIND_POD_GROUP, ns, gname, NULL);
                for (size_t i = 0; go.hdr && i < go.pod_group->n_resource_claims; i++) {
                        const dp_pod_resource_claim *g = &go.pod_group->resource_claims[i];
                        if (streq_ptr(g->name, pc->name) &&
                            streq_ptr(g->resource_claim_template_name, pc->resource_claim_template_name))
                                grp = go.pod_group;
                }
        }
        _cleanup_free_ char *name = dp_asprintf("%s-%s", grp ? grp->meta.name : p->meta.name, pc->name);
        if (!name) return -ENOMEM;
        char uidb[512];
        dp_owner_ref owner = {.api_version = (char *)"v1",
                              .kind = (char *)"Pod",
                              .name = p->meta.name,
                              .uid = (char *)dp_pod_uid(p, uidb, sizeof(uidb)),
                              .controller = true};
        if (grp) {
                owner.api_version = grp->hdr.api_version;
                owner.kind = (char *)"PodGroup";
                owner.name = grp->meta.name;
                owner.uid = grp->meta.uid;
        }
        dp_resource_claim tmp = {0};
        tmp.hdr = t->hdr;
        tmp.hdr.kind = DP_KIND_RESOURCE_CLAIM;
        tmp.meta.name = name;
        tmp.meta.namespace = (char *)ns;
        tmp.meta.labels = t->claim_meta.labels;
        tmp.meta.n_labels = t->claim_meta.n_labels;
        tmp.meta.annotations = t->claim_meta.annotations;
        tmp.meta.n_annotations = t->claim_meta.n_annotations;
        tmp.meta.owner_references = &owner;
        tmp.meta.n_owner_references = 1;
        tmp.spec = t->spec;
        dp_resource_claim *c = dp_resource_claim_clone(&tmp);
        if (!c) return -ENOMEM;
        int r = dp_store_add(st, (dp_object){.claim = c}, NULL);
        if (r == -EEXIST) { /* made by an earlier run; adopt it */
                dp_resource_claim_free(c);
                r = 0;
        } else if (r < 0) {
                dp_resource_claim_free(c);
                return r;
        }
        claim_status_add a = {pc->name, name};
        r = dp_store_update(st, DP_KIND_POD, ns, p->meta.name, DP_STORE_ANY_RV, add_claim_status, &a, NULL);
        return r < 0 ? dp_error_set(err, r, "pod %s/%s: recording claim %s", ns, p->meta.name, name) : 1;
}

static int dp_sched_claims_from_templates_impl(dp_store *st, dp_error *err) {
        size_t i = 0;
        dp_object o;
        int made = 0;
        while (dp_store_next(st, DP_KIND_POD, &i, &o, NULL)) {
                const dp_pod *p = o.pod;
                const char *ns = dp_store_ns_of(o);
                for (size_t k = 0; k < p->n_resource_claims; k++) {
                        const dp_pod_resource_claim *pc = &p->resource_claims[k];
                        if (!pc->resource_claim_template_name || dp_sched_pod_claim_name(p, pc)) continue;
                        int r = claim_from_template(st, p, ns, pc, err);
                        if (r < 0) return r;
                        made += r;
                        /* the pod was rewritten: its pointer may have moved on */
                        p = dp_store_get(st, DP_KIND_POD, ns, o.pod->meta.name, NULL).pod;
                }
        }
        return made;
}

int dp_sched_delete_pod(dp_store *st, const char *ns, const char *name) {
        dp_object po = dp_store_get(st, DP_KIND_POD, ns, name, NULL);
        if (!po.hdr) return -ENOENT;
        const dp_pod *p = po.pod;
        char uidb[512];
        _cleanup_free_ char *uid = dp_strdup(dp_pod_uid(p, uidb, sizeof(uidb)));
        if (!uid) return -ENOMEM;
        for (size_t k = 0; k < p->n_resource_claims; k++) {
                const char *cn = dp_sched_pod_claim_name(p, &p->resource_claims[k]);
                if (cn) dp_store_release_claim(st, ns, cn, uid);
        }
        if (p->extended_resource_claim_name) dp_store_release_claim(st, ns, p->extended_resource_claim_name, uid);
        /* claims the pod owns go with it */
        for (;;) {
                size_t i = 0;
                dp_object o;
                const char *victim = NULL;
                while (!victim && dp_store_next(st, DP_KIND_RESOURCE_CLAIM, &i, &o, NULL)) {
                        if (!streq(dp_store_ns_of(o), ns)) continue;
                        const dp_object_meta *m = &o.claim->meta;
                        for (size_t r = 0; r < m->n_owner_references; r++)
                                if (streq_ptr(m->owner_references[r].kind, "Pod") &&
                                    streq_ptr(m->owner_references[r].name, name))
                                        victim = m->name;
                }
                if (!victim) break;
                _cleanup_free_ char *v = dp_strdup(victim);
                if (!v) return -ENOMEM;
                dp_store_delete(st, DP_KIND_RESOURCE_CLAIM, ns, v, DP_STORE_ANY_RV);
        }
        return dp_store_delete(st, DP_KIND_POD, ns, name, DP_STORE_ANY_RV);
}

int dp_sched_run(dp_sched *s, int64_t now_ms, dp_error *err) {
        return dp_fmt_oom(err, dp_sched_run_impl(s, now_ms, err));
}

int dp_sched_claims_from_templates(dp_store *st, dp_error *err) {
        return dp_fmt_oom(err, dp_sched_claims_from_templates_impl(st, err));
}
