/* SPDX-License-Identifier: Apache-2.0
 *
 * volcano-dra.c — the capacity plugin's DRA quota (Volcano PR #5058,
 * pkg/scheduler/plugins/capacity/capacity.go: checkDRAAllocatable,
 * addTaskDRAAllocated, incrementalTaskDRA; docs/design/capacity-dra-support.md,
 * docs/user-guide/how_to_use_dra_quota.md):
 *
 * - a Queue's spec.capability key `deviceclass/<DeviceClass>` is a hard limit
 *   on the devices of that class its tasks' claims ask for (0: none); a
 *   class the capability does not name passes through;
 * - a task asks for the `count` of each `exactly` request of ExactCount of
 *   its claims (per pod for a ResourceClaimTemplate; a ResourceClaim named
 *   directly counts once per queue however many of its pods share it);
 * - allocate: the queue's allocated + the task's (new claims only) within
 *   the capability, at the queue and every ancestor; enqueue: allocated +
 *   inqueue + the DRA requests of the job's first minMember tasks (of those
 *   asking for any, by namespace and name; a shared claim counted for each
 *   task: GetMinDRAResources) within it;
 * - on by default (Volcano reads the DynamicResourceAllocation feature gate,
 *   GA and on since Kubernetes 1.34).
 *
 * Not counted here, and said so in the queue's note: `<dim>.deviceclass/...`
 * consumable capacity (behind DRAConsumableCapacity, alpha, off by default);
 * requests of allocationMode All and firstAvailable (the design's
 * "unsupported or deferred"); DRA keys under the proportion plugin, which
 * counts no claim. Only the plugin does this: the cluster's DRA devices are
 * never in Volcano's total (they are not in any node's allocatable).
 */
#include <stdio.h>

#include "base/strv.h"
#include "queue/volcano-internal.h"

#define DRA_PREFIX "deviceclass/"

const char *vc_dra_class_of(const char *key) { return startswith(key, DRA_PREFIX) ? key + strlen(DRA_PREFIX) : NULL; }

bool vc_dra_key(const char *key) { return vc_dra_class_of(key) || strstr(key, "." DRA_PREFIX); }

static ssize_t class_index(const dp_volcano *v, const char *c) {
        for (size_t i = 0; i < v->n_dra; i++)
                if (streq(v->dra_classes[i], c)) return (ssize_t)i;
        return -1;
}

/* The counts an ExactCount request asks for, per class, into out. */
static void spec_counts(const dp_volcano *v, const dp_resource_claim_spec *sp, int64_t *out) {
        for (size_t i = 0; i < sp->n_requests; i++) {
                const dp_device_request_spec *e = sp->requests[i].exactly;
                if (!e || !e->device_class_name || e->allocation_mode == DP_ALLOCATION_MODE_ALL) continue;
                ssize_t d = class_index(v, e->device_class_name);
                if (d >= 0) out[d] += e->count > 0 ? e->count : 1;
        }
}

static const char *ns_or_default(const dp_object_meta *m) {
        return m->namespace && m->namespace[0] ? m->namespace : "default";
}

static ssize_t find_claim(const dp_volcano *v, const char *ns, const char *name) {
        for (size_t i = 0; i < v->n_rclaims; i++)
                if (streq(ns_or_default(&v->rclaims[i]->meta), ns) && streq_ptr(v->rclaims[i]->meta.name, name))
                        return (ssize_t)i;
        return -1;
}

static const dp_resource_claim_template *find_template(const dp_volcano *v, const char *ns, const char *name) {
        for (size_t i = 0; i < v->n_templates; i++)
                if (streq(ns_or_default(&v->templates[i]->meta), ns) && streq_ptr(v->templates[i]->meta.name, name))
                        return v->templates[i];
        return NULL;
}

static int task_requests(dp_volcano *v, vtask *t) {
        const dp_pod *p = t->pod;
        const char *ns = ns_or_default(&p->meta);
        if (!(t->dra_req = calloc(v->n_dra + 1, sizeof(int64_t)))) return -ENOMEM;
        if (!(t->dra_claims = calloc(p->n_resource_claims + 1, sizeof(size_t)))) return -ENOMEM;
        for (size_t k = 0; k < p->n_resource_claims; k++) {
                const dp_pod_resource_claim *rc = &p->resource_claims[k];
                const dp_resource_claim_template *tp = rc->resource_claim_template_name
                                                               ? find_template(v, ns, rc->resource_claim_template_name)
                                                               : NULL;
                ssize_t c = rc->resource_claim_name ? find_claim(v, ns, rc->resource_claim_name) : -1;
                if (tp) spec_counts(v, &tp->spec, t->dra_req);
                if (c >= 0) t->dra_claims[t->n_dra_claims++] = (size_t)c;
        }
        return 0;
}

/* The classes the queues' capabilities name; each queue's limits. */
static int classes(dp_volcano *v) {
        for (size_t q = 0; q < v->n_qs; q++) {
                const dp_vc_queue *vq = v->qs[q].queue;
                for (size_t i = 0; vq && i < vq->n_capability; i++) {
                        const char *c = vc_dra_class_of(vq->capability[i].name);
                        if (c && class_index(v, c) < 0 && dp_strv_push_n(&v->dra_classes, &v->n_dra, c) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

/* The queue's note when it names DRA keys Volcano does not count here. */
static int queue_note(dp_volcano *v, size_t q) {
        const dp_vc_queue *vq = v->qs[q].queue;
        const dp_named_quantity *lists[] = {vq->capability, vq->deserved, vq->guarantee};
        size_t ns[] = {vq->n_capability, vq->n_deserved, vq->n_guarantee};
        const char *why = NULL, *key = NULL;
        for (size_t l = 0; l < ELEMENTSOF(lists) && !why; l++)
                for (size_t i = 0; i < ns[l] && !why; i++) {
                        key = lists[l][i].name;
                        if (!vc_dra_key(key)) continue;
                        if (v->opts.plugin != DP_VC_CAPACITY)
                                why = "DRA quota is the capacity plugin's: proportion counts no claim";
                        else if (!vc_dra_class_of(key))
                                why = "consumable capacity is counted only behind the DRAConsumableCapacity gate "
                                      "(alpha, off): not counted";
                        else if (l > 0)
                                why = "only spec.capability's DRA keys are checked (deserved and guarantee are not "
                                      "simulated for DRA)";
                }
        if (!why) return 0;
        if (!(v->qnotes[q] = dp_asprintf("%s: %s", key, why))) return -ENOMEM;
        v->qs[q].note = v->qnotes[q];
        return 0;
}

int vc_dra_setup(dp_volcano *v) {
        if (!(v->qnotes = calloc(v->n_qs + 1, sizeof(char *)))) return -ENOMEM;
        for (size_t q = 0; q < v->n_qs; q++)
                if (v->qs[q].queue && queue_note(v, q) < 0) return -ENOMEM;
        if (v->opts.plugin != DP_VC_CAPACITY || classes(v) < 0 || !v->n_dra) return v->n_dra ? -ENOMEM : 0;
        size_t qd = v->n_qs * v->n_dra + 1;
        v->dra_cap = calloc(qd, sizeof(int64_t));
        v->dra_alloc = calloc(qd, sizeof(int64_t));
        v->dra_inq = calloc(qd, sizeof(int64_t));
        v->claim_counts = calloc(v->n_rclaims * v->n_dra + 1, sizeof(int64_t));
        v->claim_refs = calloc(v->n_qs * v->n_rclaims + 1, sizeof(uint32_t));
        v->dra_ask = calloc(v->n_dra + 1, sizeof(int64_t));
        v->dra_order = calloc(v->n_tasks + 1, sizeof(size_t));
        if (!v->dra_cap || !v->dra_alloc || !v->dra_inq || !v->claim_counts || !v->claim_refs || !v->dra_ask ||
            !v->dra_order)
                return -ENOMEM;
        for (size_t q = 0; q < v->n_qs; q++) {
                const dp_vc_queue *vq = v->qs[q].queue;
                for (size_t i = 0; vq && i < vq->n_capability; i++) {
                        const char *c = vc_dra_class_of(vq->capability[i].name);
                        if (c)
                                v->dra_cap[q * v->n_dra + (size_t)class_index(v, c)] =
                                        dp_quantity_value(&vq->capability[i].value);
                }
        }
        for (size_t c = 0; c < v->n_rclaims; c++)
                spec_counts(v, &v->rclaims[c]->spec, v->claim_counts + c * v->n_dra);
        for (size_t i = 0; i < v->n_tasks; i++)
                if (task_requests(v, &v->tasks[i]) < 0) return -ENOMEM;
        return 0;
}

void vc_dra_reset(dp_volcano *v) {
        if (!v->n_dra) return;
        memset(v->dra_alloc, 0, v->n_qs * v->n_dra * sizeof(int64_t));
        memset(v->dra_inq, 0, v->n_qs * v->n_dra * sizeof(int64_t));
        memset(v->claim_refs, 0, v->n_qs * v->n_rclaims * sizeof(uint32_t));
}

/* What t adds to queue q: its templates' counts and the counts of its
 * direct claims q does not hold yet (incrementalTaskDRA), into out. */
static void incremental(const dp_volcano *v, const vtask *t, size_t q, int64_t *out) {
        memcpy(out, t->dra_req, v->n_dra * sizeof(int64_t));
        for (size_t k = 0; k < t->n_dra_claims; k++) {
                size_t c = t->dra_claims[k];
                if (v->claim_refs[q * v->n_rclaims + c]) continue;
                for (size_t d = 0; d < v->n_dra; d++)
                        out[d] += v->claim_counts[c * v->n_dra + d];
        }
}

void vc_dra_take(dp_volcano *v, const vtask *t, size_t q, int sign) {
        if (!v->n_dra) return;
        for (size_t hops = 0; hops <= v->n_qs; hops++) {
                int64_t *a = v->dra_alloc + q * v->n_dra;
                for (size_t d = 0; d < v->n_dra; d++)
                        a[d] += sign * t->dra_req[d];
                for (size_t k = 0; k < t->n_dra_claims; k++) {
                        size_t c = t->dra_claims[k];
                        uint32_t *refs = &v->claim_refs[q * v->n_rclaims + c];
                        bool edge = sign > 0 ? *refs == 0 : *refs == 1; /* a claim counts once per queue */
                        if (sign < 0 && !*refs) continue;
                        *refs += sign > 0 ? 1 : (uint32_t)-1;
                        for (size_t d = 0; edge && d < v->n_dra; d++)
                                a[d] += sign * v->claim_counts[c * v->n_dra + d];
                }
                ssize_t p = vc_parent_of(v, q);
                if (p < 0) return;
                q = (size_t)p;
        }
}

/* checkDRAAllocatable at q and its ancestors: used (+ inqueue) + ask within
 * every capability > 0. */
static bool within(const dp_volcano *v, size_t q, const int64_t *ask, bool with_inqueue) {
        for (size_t hops = 0; hops <= v->n_qs; hops++) {
                for (size_t d = 0; d < v->n_dra; d++) {
                        size_t i = q * v->n_dra + d;
                        int64_t used = v->dra_alloc[i] + (with_inqueue ? v->dra_inq[i] : 0);
                        if (ask[d] > 0 && v->dra_cap[i] > 0 && used + ask[d] > v->dra_cap[i]) return false;
                }
                ssize_t p = vc_parent_of(v, q);
                if (p < 0) return true;
                q = (size_t)p;
        }
        return true;
}

bool vc_dra_fits(dp_volcano *v, const vtask *t, size_t q) {
        if (!v->n_dra) return true;
        incremental(v, t, q, v->dra_ask);
        return within(v, q, v->dra_ask, false);
}

/* GetMinDRAResources without TaskMinAvailable: the job's tasks that ask
 * for DRA devices, by namespace and name, the first minMember of them,
 * summed (a claim they share counted for each). */
static bool asks_dra(const dp_volcano *v, const vtask *t) {
        for (size_t d = 0; d < v->n_dra; d++)
                if (t->dra_req[d]) return true;
        return t->n_dra_claims > 0;
}

static int cmp_key(const void *a, const void *b, void *userdata) {
        const dp_volcano *v = userdata;
        return strcmp(v->tasks[*(const size_t *)a].key, v->tasks[*(const size_t *)b].key);
}

static void min_dra(dp_volcano *v, const dp_vc_job *j, int64_t *out) {
        memset(out, 0, v->n_dra * sizeof(int64_t));
        size_t n = 0;
        for (size_t k = 0; k < j->n_tasks; k++)
                if (asks_dra(v, &v->tasks[j->tasks[k]])) v->dra_order[n++] = j->tasks[k];
        qsort_r(v->dra_order, n, sizeof(size_t), cmp_key, v);
        for (size_t k = 0; k < n && k < (size_t)DP_MAX(j->min_member, 0); k++) {
                const vtask *t = &v->tasks[v->dra_order[k]];
                for (size_t d = 0; d < v->n_dra; d++)
                        out[d] += t->dra_req[d];
                for (size_t c = 0; c < t->n_dra_claims; c++)
                        for (size_t d = 0; d < v->n_dra; d++)
                                out[d] += v->claim_counts[t->dra_claims[c] * v->n_dra + d];
        }
}

static void add_inqueue(dp_volcano *v, size_t q, const int64_t *x) {
        for (size_t hops = 0; hops <= v->n_qs; hops++) {
                for (size_t d = 0; d < v->n_dra; d++)
                        v->dra_inq[q * v->n_dra + d] += x[d];
                ssize_t p = vc_parent_of(v, q);
                if (p < 0) return;
                q = (size_t)p;
        }
}

bool vc_dra_enqueue(dp_volcano *v, const dp_vc_job *j) {
        if (!v->n_dra || j->q < 0) return true;
        min_dra(v, j, v->dra_ask);
        if (!within(v, (size_t)j->q, v->dra_ask, true)) return false;
        add_inqueue(v, (size_t)j->q, v->dra_ask);
        return true;
}

void vc_dra_inqueue(dp_volcano *v, const dp_vc_job *j) {
        if (!v->n_dra || j->q < 0) return;
        min_dra(v, j, v->dra_ask);
        add_inqueue(v, (size_t)j->q, v->dra_ask);
}

void vc_dra_done(dp_volcano *v) {
        for (size_t i = 0; i < v->n_tasks; i++)
                dp_free_many(v->tasks[i].dra_req, v->tasks[i].dra_claims);
        dp_strv_free_n(v->qnotes, v->n_qs);
        dp_strv_free_n(v->dra_classes, v->n_dra);
        dp_free_many(v->templates, v->rclaims, v->dra_cap, v->dra_alloc, v->dra_inq, v->dra_ask, v->dra_order,
                     v->claim_counts, v->claim_refs);
}
