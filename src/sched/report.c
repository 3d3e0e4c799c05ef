/* SPDX-License-Identifier: Apache-2.0
 * report.c — what a simulated run shows: placements, Pending reasons,
 * per-node and per-device use and fragmentation, the V1-vs-V2 comparison
 * (as a document for -o json|yaml, or tables), and `explain` (sim.h). */
#include <stdio.h>

#include "base/table.h"
#include "sched/explain-answers.h"
#include "sched/fmt.h"
#include "sched/html.h"
#include "sched/sim-internal.h"

/* ---- device use ---- */

typedef struct unit_use {
        dp_devnode_unit u;
        bool usable; /* a schedulable accelerator (a GPU in MIG mode is not: its instances are) */
        char **holders;
        size_t n_holders;
        /* a shared GPU of a Node object (GPU feature-discovery labels): its
         * id ("gpu-0"), and per replica the V1 unit id and its holder (NULL: free) */
        char *own_id;
        const char **share_ids, **shares;
        size_t n_shares;
        const char *sharing; /* "time-slicing" or "mps" */
} unit_use;

/* Devices that are not accelerators (docs/report.md): a NIC's VFs, RDMA
 * shares, another DRA driver's devices; listed per resource, not counted. */
typedef struct other_use {
        const char *resource;
        size_t used, total;
} other_use;

typedef struct node_use {
        unit_use *units;
        size_t n_units, cap_units;
        other_use *other;
        size_t n_other, cap_other;
        size_t usable, healthy, used, free_partial, free_healthy;
} node_use;

static void unit_use_done(unit_use *u) {
        for (size_t k = 0; k < u->n_holders; k++)
                free(u->holders[k]);
        free(u->holders);
        free(u->own_id);
        free(u->share_ids);
        free(u->shares);
}

static void node_use_done(node_use *nu) {
        for (size_t i = 0; i < nu->n_units; i++)
                unit_use_done(&nu->units[i]);
        free(nu->units);
        free(nu->other);
}

static int add_holder(unit_use *u, const char *h) {
        for (size_t i = 0; i < u->n_holders; i++)
                if (streq(u->holders[i], h)) return 0;
        char **v = realloc(u->holders, (u->n_holders + 1) * sizeof(char *));
        if (!v) return -ENOMEM;
        u->holders = v;
        if (!(v[u->n_holders] = dp_strdup(h))) return -ENOMEM;
        u->n_holders++;
        return 0;
}

/* A new zeroed unit at the end; NULL on -ENOMEM. */
static unit_use *push_unit(node_use *nu) {
        if (DP_GROW(nu->units, nu->cap_units, nu->n_units + 1) < 0) return NULL;
        unit_use *u = &nu->units[nu->n_units++];
        *u = (unit_use){0};
        return u;
}

static int add_other(node_use *nu, const char *resource, size_t used, size_t total) {
        for (size_t i = 0; i < nu->n_other; i++)
                if (streq(nu->other[i].resource, resource)) {
                        nu->other[i].used += used;
                        nu->other[i].total += total;
                        return 0;
                }
        if (DP_GROW(nu->other, nu->cap_other, nu->n_other + 1) < 0) return -ENOMEM;
        nu->other[nu->n_other++] = (other_use){resource, used, total};
        return 0;
}

/* ---- which devices are accelerators (docs/report.md lists the rule) ---- */

/* An extended resource names accelerators when it is one the accelerator
 * vendors' device plugins advertise; everything else (SR-IOV VFs, RDMA
 * shares, FPGAs' helper resources, a GPU plugin's memory or millicore
 * resources) is a device the node has, not one the report counts. */
static bool accelerator_resource(const char *res) {
        static const char *const exact[] = {"nvidia.com/gpu",     "nvidia.com/gpu.shared", "amd.com/gpu",
                                            "gpu.intel.com/i915", "gpu.intel.com/xe",      "google.com/tpu"};
        static const char *const prefix[] = {"nvidia.com/mig-", "habana.ai/gaudi", "aws.amazon.com/neuron"};
        for (size_t i = 0; i < ELEMENTSOF(exact); i++)
                if (streq(res, exact[i])) return true;
        for (size_t i = 0; i < ELEMENTSOF(prefix); i++)
                if (startswith(res, prefix[i])) return true;
        return false;
}

/* A DRA driver publishes accelerators when its name is in the gpu. or tpu.
 * domain (gpu.nvidia.com, gpu.amd.com, gpu.intel.com, gpu.example.com);
 * compute-domain.nvidia.com's channels, NIC drivers' devices are not. */
static bool accelerator_driver(const char *driver) {
        return driver && (startswith(driver, "gpu.") || startswith(driver, "tpu."));
}

/* ---- a Node object's DRA devices: its ResourceSlices' ---- */

static bool blocks(const dp_taint *t) {
        return streq_ptr(t->effect, "NoSchedule") || streq_ptr(t->effect, "NoExecute");
}

/* Failed: a NoSchedule/NoExecute taint of its own or of a DeviceTaintRule
 * naming it (--fail-device NODE/DEVICE writes one). */
static bool slice_device_failed(sim_run *r, const dp_resource_slice *sl, const dp_device *d) {
        for (size_t k = 0; k < d->n_taints; k++)
                if (blocks(&d->taints[k])) return true;
        size_t i = 0;
        dp_object o;
        while (dp_store_next(r->store, DP_KIND_DEVICE_TAINT_RULE, &i, &o, NULL)) {
                const dp_device_taint_rule *t = o.taint_rule;
                if (t->has_device_selector && !t->n_selectors && !t->device_class_name && blocks(&t->taint) &&
                    (!t->driver || streq_ptr(t->driver, sl->driver)) &&
                    (!t->pool || streq_ptr(t->pool, sl->pool_name)) && (!t->device || streq_ptr(t->device, d->name)))
                        return true;
        }
        return false;
}

static const char *slice_device_kind(const dp_resource_slice *sl, const dp_device *d) {
        for (size_t k = 0; k < d->n_attributes; k++) {
                const dp_device_attribute *a = &d->attributes[k];
                const char *sl_ = strrchr(a->name, '/');
                if (streq(sl_ ? sl_ + 1 : a->name, "type") && a->type == DP_ATTR_STRING && a->s) return a->s;
        }
        return sl->driver ? sl->driver : "";
}

/* Add the pods (or the claim, when it has none) holding `device` of the
 * slice's driver and pool as holders of u. */
static int slice_holders(const dp_resource_slice *sl, const char *device, const sim_claim_ref *cr, size_t ncr,
                         unit_use *u) {
        int rr = 0;
        for (size_t c = 0; c < ncr && rr >= 0; c++) {
                const dp_resource_claim *cl = cr[c].claim;
                for (size_t x = 0; x < cl->allocation->n_results && rr >= 0; x++) {
                        const dp_device_allocation_result *res = &cl->allocation->results[x];
                        if (!streq_ptr(res->driver, sl->driver) || !streq_ptr(res->pool, sl->pool_name) ||
                            !streq_ptr(res->device, device))
                                continue;
                        char hb[1024];
                        for (size_t h = 0; h < cl->n_reserved_for && rr >= 0; h++) {
                                dp_fmt(hb, sizeof(hb), "%s/%s", cr[c].ns, cl->reserved_for[h].name);
                                rr = add_holder(u, hb);
                        }
                        if (!cl->n_reserved_for && rr >= 0) {
                                dp_fmt(hb, sizeof(hb), "claim %s/%s", cr[c].ns, cl->meta.name);
                                rr = add_holder(u, hb);
                        }
                }
        }
        return rr;
}

/* Append the node's slice devices of accelerator drivers as units, holders
 * from the claims allocated there; other drivers' devices are counted per
 * driver. */
static int add_slice_units(sim_run *r, const sim_node *sn, node_use *nu) {
        size_t i = 0;
        dp_object o;
        while (dp_store_next(r->store, DP_KIND_RESOURCE_SLICE, &i, &o, NULL)) {
                const dp_resource_slice *sl = o.slice;
                if (!streq_ptr(sl->node_name, sn->name)) continue;
                const sim_claim_ref *cr = NULL;
                size_t ncr = 0;
                int rr = sim_claims_in_pool(r, sl->pool_name ? sl->pool_name : "", &cr, &ncr);
                if (rr < 0) return rr;
                bool accel = accelerator_driver(sl->driver);
                for (size_t k = 0; k < sl->n_devices; k++) {
                        const dp_device *d = &sl->devices[k];
                        unit_use *u = push_unit(nu);
                        if (!u) return -ENOMEM;
                        u->usable = true;
                        u->u = (dp_devnode_unit){.id = d->name,
                                                 .profile = slice_device_kind(sl, d),
                                                 .parent = -1,
                                                 .healthy = !slice_device_failed(r, sl, d)};
                        if ((rr = slice_holders(sl, d->name, cr, ncr, u)) < 0) return rr;
                        if (accel) continue;
                        size_t held = u->n_holders > 0;
                        unit_use_done(u);
                        nu->n_units--;
                        if ((rr = add_other(nu, sl->driver ? sl->driver : "", held, 1)) < 0) return rr;
                }
        }
        return 0;
}

/* ---- a Node object's V1 units: its extended resources ---- */

/* A positive integer label of a resource's GPU feature-discovery family:
 * "nvidia.com/gpu" and `what` "replicas" read nvidia.com/gpu.replicas (the
 * renamed "nvidia.com/gpu.shared" too); 0 when absent or not a number. */
static long gfd_label(const dp_node *n, const char *res, const char *what) {
        char key[320];
        size_t l = strlen(res);
        if (l > 7 && streq(res + l - 7, ".shared")) l -= 7;
        dp_fmt(key, sizeof(key), "%.*s.%s", (int)DP_MIN(l, (size_t)256), res, what);
        const char *v = n ? dp_kv_get(n->meta.labels, n->meta.n_labels, key) : NULL;
        char *end = NULL;
        long x = v ? strtol(v, &end, 10) : 0;
        return v && end != v && !*end && x > 0 && x <= SIM_OBJ_UNITS_MAX ? x : 0;
}

/* A Node object's units of one accelerator resource. Shared GPUs (GFD's
 * <resource>.replicas R > 1 and G x R units, G no more than <resource>.count) are G
 * GPUs of R replicas: replica k of the resource is GPU k mod G, share k / G,
 * as the device plugin's "distributed" policy hands replicas out (the first
 * free units are on distinct GPUs). Otherwise a unit is a device. */
static int object_accelerators(const dp_node *n, const sim_obj_unit *x, size_t cnt, node_use *nu) {
        const char *res = x[0].resource;
        /* the allocatable units: G x R with G <= <resource>.count (a failed GPU's
         * replicas leave allocatable, so G may be fewer than the label says) */
        long reps = gfd_label(n, res, "replicas"), count = gfd_label(n, res, "count");
        long gpus = reps > 1 && cnt % (size_t)reps == 0 ? (long)(cnt / (size_t)reps) : 0;
        bool shared = gpus > 0 && (!count || gpus <= count);
        if (!shared) {
                for (size_t i = 0; i < cnt; i++) {
                        unit_use *u = push_unit(nu);
                        if (!u) return -ENOMEM;
                        u->u = (dp_devnode_unit){
                                .id = x[i].id, .profile = x[i].resource, .parent = -1, .healthy = !x[i].failed};
                        u->usable = true;
                        if (x[i].holder && add_holder(u, x[i].holder) < 0) return -ENOMEM;
                }
                return 0;
        }
        const char *strategy = dp_kv_get(n->meta.labels, n->meta.n_labels, "nvidia.com/gpu.sharing-strategy");
        for (size_t g = 0; g < (size_t)gpus; g++) {
                unit_use *u = push_unit(nu);
                if (!u) return -ENOMEM;
                u->usable = true;
                u->sharing = streq_ptr(strategy, "mps") ? "mps" : "time-slicing";
                u->own_id = dp_asprintf("gpu-%zu", g);
                u->share_ids = calloc((size_t)reps, sizeof(char *));
                u->shares = calloc((size_t)reps, sizeof(char *));
                if (!u->own_id || !u->share_ids || !u->shares) return -ENOMEM;
                u->n_shares = (size_t)reps;
                u->u = (dp_devnode_unit){.id = u->own_id, .profile = "gpu", .parent = -1, .healthy = true};
                for (size_t k = 0; k < (size_t)reps; k++) {
                        const sim_obj_unit *s = &x[k * (size_t)gpus + g];
                        u->share_ids[k] = s->id;
                        u->shares[k] = s->holder;
                        u->u.healthy &= !s->failed;
                        u->u.n_v1_holders += s->holder != NULL; /* explain: shared by time-slicing */
                        if (s->holder && add_holder(u, s->holder) < 0) return -ENOMEM;
                }
        }
        return 0;
}

/* ---- a Node object's MIG instances (GPU feature-discovery labels) ---- */

/* One MIG instance of a Node object: its V1 unit, its profile ("1g.5gb"),
 * the GPU slices it takes (compute, memory) and the GPU it is drawn on. */
typedef struct mig_inst {
        const sim_obj_unit *x;
        const char *profile;
        unsigned compute, memory;
        size_t order, gpu;
} mig_inst;

/* The profile of a MIG resource of Node object n, NULL when res is not one:
 * "nvidia.com/mig-<profile>" (the mixed strategy), or "nvidia.com/gpu" under
 * nvidia.com/mig.strategy=single, whose gpu.product names the profile after
 * "-MIG-" ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"). Its compute slices and memory
 * (GB) from "<g>g.<m>gb" (a "+me" suffix allowed); a resource shared by
 * time-slicing (<res>.replicas > 1) or of another profile shape
 * ("1c.3g.20gb") is not drawn as MIG. */
static const char *mig_profile(const dp_node *n, const char *res, unsigned *ret_g, unsigned *ret_gb) {
        const char *p = NULL;
        if (startswith(res, "nvidia.com/mig-")) p = res + strlen("nvidia.com/mig-");
        const char *strategy = n ? dp_kv_get(n->meta.labels, n->meta.n_labels, "nvidia.com/mig.strategy") : NULL;
        const char *product = n ? dp_kv_get(n->meta.labels, n->meta.n_labels, "nvidia.com/gpu.product") : NULL;
        if (!p && streq(res, "nvidia.com/gpu") && streq_ptr(strategy, "single") && product) {
                p = strstr(product, "-MIG-");
                p = p ? p + 5 : NULL;
        }
        if (!p || gfd_label(n, res, "replicas") > 1) return NULL;
        char *e = NULL;
        unsigned long g = strtoul(p, &e, 10), gb = 0;
        if (e == p || *e != 'g' || e[1] != '.') return NULL;
        const char *m = e + 2;
        gb = strtoul(m, &e, 10);
        if (e == m || strncmp(e, "gb", 2) != 0 || (e[2] && e[2] != '+' && e[2] != '-') || !g || g > 8 || !gb ||
            gb > 4096)
                return NULL;
        *ret_g = (unsigned)g;
        *ret_gb = (unsigned)gb;
        return p;
}

/* A GPU's slices: 7 compute and 8 memory slices (A100, H100, H200, B200),
 * 4 and 4 on an A30; its memory in GB from the product ("-40GB"), 0 unknown. */
static void mig_gpu_shape(const dp_node *n, unsigned *ret_compute, unsigned *ret_memory, unsigned *ret_gb) {
        const char *product = n ? dp_kv_get(n->meta.labels, n->meta.n_labels, "nvidia.com/gpu.product") : NULL;
        bool a30 = product && strstr(product, "A30");
        *ret_compute = a30 ? 4 : 7;
        *ret_memory = a30 ? 4 : 8;
        *ret_gb = 0;
        for (const char *q = product; q && (q = strchr(q, '-')) && !startswith(q, "-MIG-"); q++) {
                char *e = NULL;
                unsigned long gb = strtoul(q + 1, &e, 10);
                if (e != q + 1 && startswith(e, "GB") && gb > 0 && gb <= 4096) {
                        *ret_gb = (unsigned)gb;
                        break;
                }
        }
}

/* largest first (compute, then memory slices), then in unit order */
static int cmp_mig_size(const void *a, const void *b) {
        const mig_inst *x = a, *y = b;
        if (x->compute != y->compute) return x->compute < y->compute ? 1 : -1;
        if (x->memory != y->memory) return x->memory < y->memory ? 1 : -1;
        return (x->order > y->order) - (x->order < y->order);
}

/* by GPU, then in unit order */
static int cmp_mig_gpu(const void *a, const void *b) {
        const mig_inst *x = a, *y = b;
        if (x->gpu != y->gpu) return x->gpu < y->gpu ? -1 : 1;
        return (x->order > y->order) - (x->order < y->order);
}

/* Which GPU each instance is on is not in a Node object: the instances go
 * largest first onto GPUs with compute and memory slices left for them. Under
 * the mixed strategy the GPUs in MIG mode are known (gpu.count less the whole
 * GPUs `whole`) and each instance goes where most is left, which gives the
 * GPU operator's layouts back (all-balanced: 3g.40gb + 2g.20gb + 2 x 1g.10gb
 * on each H100); under the single strategy every GPU has the one profile and
 * each goes on the first GPU it fits (7 x 1g.5gb, 4 x 1g.10gb, 3 x 2g.10gb on
 * an A100-40GB). Drawn as GPUs in MIG mode holding them, after every other
 * unit (a GPU's instances follow it). */
static int object_mig(const dp_node *n, mig_inst *v, size_t cnt, size_t whole, node_use *nu) {
        unsigned C, M, gpu_gb;
        mig_gpu_shape(n, &C, &M, &gpu_gb);
        long count = gfd_label(n, "nvidia.com/gpu", "count");
        const char *strategy = dp_kv_get(n->meta.labels, n->meta.n_labels, "nvidia.com/mig.strategy");
        size_t known = streq_ptr(strategy, "mixed") && count > (long)whole ? DP_MIN((size_t)count - whole, cnt) : 0;
        _cleanup_free_ unsigned *left = calloc(2 * cnt + 2, sizeof(unsigned));
        if (!left) return -ENOMEM;
        for (size_t g = 0; g < known; g++) {
                left[2 * g] = C;
                left[2 * g + 1] = M;
        }
        for (size_t i = 0; i < cnt; i++) {
                /* memory slices: the profile's share of the GPU's memory, else its compute slices */
                unsigned m = gpu_gb ? (v[i].memory * M + gpu_gb / 2) / gpu_gb : v[i].compute;
                v[i].memory = DP_MIN(DP_MAX(m, 1u), M);
                v[i].compute = DP_MIN(v[i].compute, C);
        }
        qsort(v, cnt, sizeof(*v), cmp_mig_size);
        size_t gpus = known;
        for (size_t i = 0; i < cnt; i++) {
                size_t best = gpus;
                for (size_t g = 0; g < gpus; g++) {
                        if (left[2 * g] < v[i].compute || left[2 * g + 1] < v[i].memory) continue;
                        if (best == gpus ||
                            (known && (left[2 * g] > left[2 * best] ||
                                       (left[2 * g] == left[2 * best] && left[2 * g + 1] > left[2 * best + 1]))))
                                best = g;
                        if (!known) break;
                }
                if (best == gpus) {
                        left[2 * best] = C;
                        left[2 * best + 1] = M;
                        gpus++;
                }
                left[2 * best] -= v[i].compute;
                left[2 * best + 1] -= v[i].memory;
                v[i].gpu = best;
        }
        /* numbered after the node's other GPUs (whole or shared) */
        size_t first_id = 0;
        for (size_t k = 0; k < nu->n_units; k++)
                first_id += nu->units[k].u.parent < 0 && streq_ptr(nu->units[k].u.profile, "gpu");
        first_id = DP_MAX(first_id, whole);
        /* each GPU, then its instances in unit order ("nvidia.com/mig-1g.5gb-0", -1...) */
        qsort(v, cnt, sizeof(*v), cmp_mig_gpu);
        size_t at = 0;
        for (size_t i = 0; i < cnt; i++) {
                if (i == 0 || v[i].gpu != v[i - 1].gpu) {
                        at = nu->n_units;
                        unit_use *gu = push_unit(nu);
                        if (!gu || !(gu->own_id = dp_asprintf("gpu-%zu", first_id + v[i].gpu))) return -ENOMEM;
                        gu->u = (dp_devnode_unit){.id = gu->own_id, .profile = "gpu", .parent = -1, .mig_mode = true};
                }
                unit_use *u = push_unit(nu);
                if (!u) return -ENOMEM;
                u->usable = true;
                u->u = (dp_devnode_unit){
                        .id = v[i].x->id, .profile = v[i].profile, .parent = (int)at, .healthy = !v[i].x->failed};
                nu->units[at].u.healthy |= u->u.healthy;
                if (v[i].x->holder && add_holder(u, v[i].x->holder) < 0) return -ENOMEM;
        }
        return 0;
}

/* A Node object's units: its extended resources run by run (the units are
 * in resource order), accelerators as units and the rest counted, its
 * ResourceSlices' devices, then its MIG resources' GPUs. */
static int object_units(sim_run *r, const sim_node *sn, node_use *nu) {
        const dp_node *n = dp_store_get(r->store, DP_KIND_NODE, NULL, sn->name, NULL).node;
        _cleanup_free_ mig_inst *mig = NULL;
        size_t n_mig = 0, whole = 0;
        for (size_t i = 0, j; i < sn->n_obj_units; i = j) {
                const char *res = sn->obj_units[i].resource, *profile;
                size_t held = 0;
                unsigned g = 0, gb = 0;
                for (j = i; j < sn->n_obj_units && streq(sn->obj_units[j].resource, res); j++)
                        held += sn->obj_units[j].holder != NULL;
                if (accelerator_resource(res) && (profile = mig_profile(n, res, &g, &gb))) {
                        if (!mig && !(mig = calloc(sn->n_obj_units, sizeof(*mig)))) return -ENOMEM;
                        for (size_t k = i; k < j; k++, n_mig++)
                                mig[n_mig] = (mig_inst){&sn->obj_units[k], profile, g, gb, n_mig, 0};
                        continue;
                }
                if (streq(res, "nvidia.com/gpu")) whole = j - i;
                int rr = accelerator_resource(res) ? object_accelerators(n, &sn->obj_units[i], j - i, nu)
                                                   : add_other(nu, res, held, j - i);
                if (rr < 0) return rr;
        }
        int rr = sn->model & DP_SIM_MODEL_V2 ? add_slice_units(r, sn, nu) : 0;
        return rr >= 0 && n_mig ? object_mig(n, mig, n_mig, whole, nu) : rr;
}

static int node_use_get(sim_run *r, const sim_node *sn, node_use *ret) {
        node_use nu = {0};
        size_t n = dp_devnode_unit_count(sn->dev);
        if (!(nu.units = calloc(n + 1, sizeof(*nu.units)))) return -ENOMEM;
        nu.n_units = n;
        nu.cap_units = n + 1;
        int rr = 0;
        if (!sn->dev) {
                rr = object_units(r, sn, &nu);
                n = nu.n_units;
        }
        for (size_t i = 0; sn->dev && i < n && rr >= 0; i++) {
                unit_use *u = &nu.units[i];
                dp_devnode_unit_get(sn->dev, i, &u->u);
                u->usable = !(u->u.parent < 0 && u->u.mig_mode);
                for (size_t k = 0; k < u->u.n_v1_holders && rr >= 0; k++) {
                        /* "ns/pod/container" -> "ns/pod" */
                        const char *h = u->u.v1_holders[k];
                        const char *sl = strchr(h, '/');
                        sl = sl ? strchr(sl + 1, '/') : NULL;
                        _cleanup_free_ char *pod = sl ? dp_strndup(h, (size_t)(sl - h)) : dp_strdup(h);
                        rr = pod ? add_holder(u, pod) : -ENOMEM;
                }
        }
        const sim_claim_ref *cr = NULL;
        size_t ncr = 0;
        if (rr >= 0) rr = sim_claims_in_pool(r, sn->name, &cr, &ncr);
        for (size_t i = 0; rr >= 0 && i < ncr; i++) {
                const dp_resource_claim *c = cr[i].claim;
                for (size_t k = 0; k < c->allocation->n_results && rr >= 0; k++) {
                        const dp_device_allocation_result *d = &c->allocation->results[k];
                        if (!streq_ptr(d->pool, sn->name) || !streq_ptr(d->driver, dp_devnode_driver(sn->dev)))
                                continue;
                        int ui = sim_node_unit_of_v2(sn, d->device);
                        if (ui < 0) continue;
                        for (size_t h = 0; h < c->n_reserved_for && rr >= 0; h++) {
                                char hb[1024];
                                dp_fmt(hb, sizeof(hb), "%s/%s", cr[i].ns, c->reserved_for[h].name);
                                rr = add_holder(&nu.units[ui], hb);
                        }
                        if (c->n_reserved_for == 0 && rr >= 0) {
                                char hb[1024];
                                dp_fmt(hb, sizeof(hb), "claim %s/%s", cr[i].ns, c->meta.name);
                                rr = add_holder(&nu.units[ui], hb);
                        }
                }
        }
        if (rr < 0) {
                node_use_done(&nu);
                return rr;
        }
        for (size_t k = 0; k < n; k++) {
                unit_use *u = &nu.units[k];
                if (!u->usable) continue;
                nu.usable++;
                if (u->u.healthy) nu.healthy++;
                if (u->n_holders)
                        nu.used++;
                else if (u->u.healthy) {
                        nu.free_healthy++;
                        /* free, on a GPU another consumer already uses part of */
                        if (u->u.parent >= 0)
                                for (size_t s = 0; s < n; s++)
                                        if (nu.units[s].u.parent == u->u.parent && nu.units[s].n_holders) {
                                                nu.free_partial++;
                                                break;
                                        }
                }
        }
        *ret = nu;
        return 0;
}

/* ---- per-run summary ---- */

typedef struct summary {
        size_t nodes, devices, healthy, used, free_partial, free_healthy;
        size_t pods, running, waiting, pending, deleted, evicted, preempted;
} summary;

static const char *pod_state(const sim_pod *sp) {
        if (!sp->created) return "NotCreated";
        if (sp->evicted) return "Evicted";
        if (sp->preempted_by) return "Preempted";
        if (sp->deleted) return "Deleted";
        if (sp->admitted) return "Running";
        if (sp->node) return "Waiting";
        return "Pending";
}

static int summarize_run(sim_run *r, summary *s) {
        *s = (summary){.nodes = r->n_nodes, .pods = r->n_pods};
        for (size_t i = 0; i < r->n_nodes; i++) {
                node_use nu;
                int rr = node_use_get(r, &r->nodes[i], &nu);
                if (rr < 0) return rr;
                s->devices += nu.usable;
                s->healthy += nu.healthy;
                s->used += nu.used;
                s->free_partial += nu.free_partial;
                s->free_healthy += nu.free_healthy;
                node_use_done(&nu);
        }
        for (size_t i = 0; i < r->n_pods; i++) {
                const char *st = pod_state(&r->pods[i]);
                if (streq(st, "Running"))
                        s->running++;
                else if (streq(st, "Waiting"))
                        s->waiting++;
                else if (streq(st, "Deleted"))
                        s->deleted++;
                else if (streq(st, "Evicted"))
                        s->evicted++;
                else if (streq(st, "Preempted"))
                        s->preempted++;
                else
                        s->pending++;
        }
        return 0;
}

static void pct(char *buf, size_t size, size_t a, size_t b) {
        if (!b)
                dp_fmt(buf, size, "0.0%%");
        else
                dp_fmt(buf, size, "%zu.%zu%%", a * 100 / b, (a * 1000 / b) % 10);
}

/* ---- documents ---- */

#define ADD(map, key, val)                                                                                             \
        do {                                                                                                           \
                if (dp_doc_map_add(s, (map), (key), (val)) < 0) return NULL;                                           \
        } while (0)

static dp_doc_node *summary_doc(dp_doc_set *s, const summary *m) {
        dp_doc_node *d = dp_doc_new_map(s);
        char b[32];
        if (!d) return NULL;
        ADD(d, "nodes", dp_doc_new_uint(s, m->nodes));
        ADD(d, "devices", dp_doc_new_uint(s, m->devices));
        ADD(d, "healthyDevices", dp_doc_new_uint(s, m->healthy));
        ADD(d, "devicesInUse", dp_doc_new_uint(s, m->used));
        pct(b, sizeof(b), m->used, m->healthy);
        ADD(d, "utilization", dp_doc_new_str(s, b));
        pct(b, sizeof(b), m->free_partial, m->free_healthy);
        ADD(d, "fragmentation", dp_doc_new_str(s, b));
        ADD(d, "pods", dp_doc_new_uint(s, m->pods));
        ADD(d, "running", dp_doc_new_uint(s, m->running));
        ADD(d, "waitingOnNode", dp_doc_new_uint(s, m->waiting));
        ADD(d, "pending", dp_doc_new_uint(s, m->pending));
        ADD(d, "deleted", dp_doc_new_uint(s, m->deleted));
        ADD(d, "evicted", dp_doc_new_uint(s, m->evicted));
        ADD(d, "preempted", dp_doc_new_uint(s, m->preempted));
        return d;
}

static dp_doc_node *devices_seq(dp_doc_set *s, const char *csv) {
        dp_doc_node *q = dp_doc_new_seq(s);
        if (!q) return NULL;
        const char *p = csv ? csv : "";
        while (*p) {
                const char *c = strchr(p, ',');
                size_t len = c ? (size_t)(c - p) : strlen(p);
                if (dp_doc_seq_add(s, q, dp_doc_new_strn(s, p, len)) < 0) return NULL;
                p += len + (c ? 1 : 0);
        }
        return q;
}

/* The pod's claims as allocated: name, and per result the request
 * ("req" or "req/subrequest"), driver, pool, device and shareID (a device
 * is named by all three: two pools may have devices of the same name). */
static dp_doc_node *claims_doc(dp_doc_set *s, sim_run *r, const sim_pod *sp) {
        dp_doc_node *q = dp_doc_new_seq(s);
        if (!q) return NULL;
        sim_claim_iter it = sim_pod_claims(r, sp);
        const char *cn;
        for (const dp_resource_claim *c; (c = sim_claim_next(&it, &cn));) {
                dp_doc_node *cd = dp_doc_new_map(s), *res = dp_doc_new_seq(s);
                if (!cd || !res) return NULL;
                ADD(cd, "name", dp_doc_new_str(s, cn));
                for (size_t i = 0; i < c->allocation->n_results; i++) {
                        const dp_device_allocation_result *d = &c->allocation->results[i];
                        dp_doc_node *rd = dp_doc_new_map(s);
                        if (!rd) return NULL;
                        ADD(rd, "request", dp_doc_new_str(s, d->request ? d->request : ""));
                        ADD(rd, "driver", dp_doc_new_str(s, d->driver ? d->driver : ""));
                        ADD(rd, "pool", dp_doc_new_str(s, d->pool ? d->pool : ""));
                        ADD(rd, "device", dp_doc_new_str(s, d->device ? d->device : ""));
                        if (d->share_id) ADD(rd, "shareID", dp_doc_new_str(s, d->share_id));
                        if (dp_doc_seq_add(s, res, rd) < 0) return NULL;
                }
                ADD(cd, "results", res);
                if (dp_doc_seq_add(s, q, cd) < 0) return NULL;
        }
        return q;
}

static const char *pod_model(const char *v1, const char *v2) {
        bool a = v1 && v1[0], b = v2 && v2[0];
        return a && b ? "V1+V2" : a ? "V1" : b ? "V2" : "-";
}

/* kube-scheduler's preemption: a victim's preemptor, a preemptor's
 * victims and nominated node, a Pending pod's PostFilter words and its
 * whole PodScheduled message as kube-scheduler writes it. */
static dp_doc_node *preemption_doc(dp_doc_set *s, sim_run *r, const sim_pod *sp, const dp_sched_pod_info *pi,
                                   dp_doc_node *d) {
        if (sp->preempted_by) {
                char m[1200];
                dp_fmt(m, sizeof(m), "preempted by %s on %s at t=%" PRId64 "s (DefaultPreemption)", sp->preempted_by,
                       sp->node ? sp->node : "-", sp->deleted_ms / 1000);
                ADD(d, "reason", dp_doc_new_str(s, m));
                ADD(d, "preemptedBy", dp_doc_new_str(s, sp->preempted_by));
        }
        if (!pi) return d;
        if (pi->nominated) ADD(d, "nominatedNode", dp_doc_new_str(s, pi->nominated));
        if (pi->victims) {
                ADD(d, "preempted", devices_seq(s, pi->victims));
                ADD(d, "preemptedAt", dp_doc_new_int(s, pi->preempted_at_ms / 1000));
        }
        if (pi->postfilter && streq(pod_state(sp), "Pending")) {
                const char *pre = strstr(pi->postfilter, "preemption: ");
                ADD(d, "preemption", dp_doc_new_str(s, pre ? pre : pi->postfilter));
                _cleanup_free_ char *full = dp_sched_message(pi);
                if (!full) return NULL;
                ADD(d, "message", dp_doc_new_str(s, full));
        }
        (void)r;
        return d;
}

/* A Pending pod Volcano's or KAI's admission holds back: why, in their
 * words (into buf), the same for the report and explain; else NULL. */
static const char *policy_reason(const sim_run *r, const sim_pod *sp, char *buf, size_t size) {
        if (!streq(pod_state(sp), "Pending")) return NULL;
        return r->volcano ? dp_volcano_pod_reason(r->volcano, sp->ns, sp->name, buf, size)
                          : sim_kai_reason(r, sp->ns, sp->name, buf, size);
}

static dp_doc_node *pod_doc(dp_doc_set *s, sim_run *r, sim_pod *sp) {
        dp_doc_node *d = dp_doc_new_map(s);
        if (!d) return NULL;
        _cleanup_free_ char *v2 =
                sp->deleted ? dp_strdup(sp->v2_devices ? sp->v2_devices : "") : sim_pod_v2_devices(r, sp);
        if (!v2) return NULL;
        const char *st = pod_state(sp);
        ADD(d, "name", dp_doc_new_str(s, sp->key));
        ADD(d, "state", dp_doc_new_str(s, st));
        const dp_sched_pod_info *pi = sim_pod_info(r, sp);
        if (sp->node) ADD(d, "node", dp_doc_new_str(s, sp->node));
        ADD(d, "model", dp_doc_new_str(s, pod_model(sp->v1_devices, v2)));
        dp_doc_node *dv = dp_doc_new_map(s);
        if (!dv) return NULL;
        if (sp->v1_devices && sp->v1_devices[0]) ADD(dv, "v1", devices_seq(s, sp->v1_devices));
        if (v2[0]) ADD(dv, "v2", devices_seq(s, v2));
        ADD(d, "devices", dv);
        if (sp->created) ADD(d, "createdAt", dp_doc_new_int(s, sp->arrived_ms / 1000));
        if (sp->admitted) ADD(d, "startedAt", dp_doc_new_int(s, sp->started_ms / 1000));
        if (sp->deleted) ADD(d, "deletedAt", dp_doc_new_int(s, sp->deleted_ms / 1000));
        if (!sp->deleted) {
                dp_doc_node *cl = claims_doc(s, r, sp);
                if (!cl) return NULL;
                if (cl->n) ADD(d, "claims", cl);
        }
        char vbuf[1024];
        const char *vr = policy_reason(r, sp, vbuf, sizeof(vbuf));
        if (vr) ADD(d, "reason", dp_doc_new_str(s, vr));
        else if (streq(st, "Pending") && pi && pi->message) ADD(d, "reason", dp_doc_new_str(s, pi->message));
        if (streq(st, "Evicted") && sp->evict_msg) ADD(d, "reason", dp_doc_new_str(s, sp->evict_msg));
        if (streq(st, "Waiting") && sp->wait_msg) ADD(d, "reason", dp_doc_new_str(s, sp->wait_msg));
        if (pi) ADD(d, "attempts", dp_doc_new_uint(s, pi->attempts));
        return preemption_doc(s, r, sp, pi, d);
}

/* The pool a node belongs to, for the overview: a Fleet's group; a Node
 * object's node pool as the cloud labels it (docs/report.md), else its GPU
 * product, else NULL (the overview pools it by model). */
static const char *node_pool(sim_run *r, const sim_node *sn) {
        static const char *const keys[] = {"kubernetes.azure.com/agentpool",
                                           "cloud.google.com/gke-nodepool",
                                           "eks.amazonaws.com/nodegroup",
                                           "karpenter.sh/nodepool",
                                           "agentpool",
                                           "nvidia.com/gpu.product",
                                           "node.kubernetes.io/instance-type"};
        if (sn->group) return sn->group->name;
        const dp_node *n = dp_store_get(r->store, DP_KIND_NODE, NULL, sn->name, NULL).node;
        for (size_t i = 0; n && i < ELEMENTSOF(keys); i++) {
                const char *v = dp_kv_get(n->meta.labels, n->meta.n_labels, keys[i]);
                if (v && v[0]) return v;
        }
        return NULL;
}

/* "v1", "v2", "both"; "cpu" for a Node object with no device at all. */
static const char *node_model(const sim_node *sn, const node_use *nu) {
        if (sn->model == DP_SIM_MODEL_V1) return "v1";
        if (sn->model == DP_SIM_MODEL_V2) return "v2";
        return !sn->dev && !nu->n_units && !nu->n_other ? "cpu" : "both";
}

/* The node's devices that are not accelerators, per resource (or driver). */
static dp_doc_node *other_doc(dp_doc_set *s, const node_use *nu) {
        dp_doc_node *q = dp_doc_new_seq(s);
        for (size_t i = 0; q && i < nu->n_other; i++) {
                dp_doc_node *o = dp_doc_new_map(s);
                if (!o || dp_doc_map_add(s, o, "name", dp_doc_new_str(s, nu->other[i].resource)) < 0 ||
                    dp_doc_map_add(s, o, "inUse", dp_doc_new_uint(s, nu->other[i].used)) < 0 ||
                    dp_doc_map_add(s, o, "total", dp_doc_new_uint(s, nu->other[i].total)) < 0 ||
                    dp_doc_seq_add(s, q, o) < 0)
                        return NULL;
        }
        return q;
}

/* A shared GPU's replicas: how it is shared, and per replica its V1 id and
 * holder ("" when free). */
static bool shares_doc(dp_doc_set *s, const unit_use *u, dp_doc_node *ud) {
        dp_doc_node *q = dp_doc_new_seq(s);
        bool ok = q && dp_doc_map_add(s, ud, "sharing", dp_doc_new_str(s, u->sharing)) >= 0 &&
                  dp_doc_map_add(s, ud, "replicas", dp_doc_new_uint(s, u->n_shares)) >= 0;
        for (size_t k = 0; ok && k < u->n_shares; k++) {
                dp_doc_node *x = dp_doc_new_map(s);
                ok = x && dp_doc_map_add(s, x, "id", dp_doc_new_str(s, u->share_ids[k])) >= 0 &&
                     dp_doc_map_add(s, x, "heldBy", dp_doc_new_str(s, u->shares[k] ? u->shares[k] : "")) >= 0 &&
                     dp_doc_seq_add(s, q, x) >= 0;
        }
        return ok && dp_doc_map_add(s, ud, "shares", q) >= 0;
}

static dp_doc_node *node_doc(dp_doc_set *s, sim_run *r, sim_node *sn) {
        node_use nu;
        if (node_use_get(r, sn, &nu) < 0) return NULL;
        dp_doc_node *d = dp_doc_new_map(s), *units = dp_doc_new_seq(s), *res = NULL;
        char b[32];
        bool ok = d && units;
        const dp_node *obj = sn->dev ? NULL : dp_store_get(r->store, DP_KIND_NODE, NULL, sn->name, NULL).node;
        const char *product = obj ? dp_kv_get(obj->meta.labels, obj->meta.n_labels, "nvidia.com/gpu.product") : NULL;
        const char *pool = node_pool(r, sn);
        ok = ok && dp_doc_map_add(s, d, "name", dp_doc_new_str(s, sn->name)) >= 0;
        ok = ok &&
             dp_doc_map_add(s, d, "profile", dp_doc_new_str(s, sn->group ? sn->group->profile : "Node object")) >= 0;
        if (product) ok = ok && dp_doc_map_add(s, d, "product", dp_doc_new_str(s, product)) >= 0;
        if (pool) ok = ok && dp_doc_map_add(s, d, "pool", dp_doc_new_str(s, pool)) >= 0;
        ok = ok && dp_doc_map_add(s, d, "model", dp_doc_new_str(s, node_model(sn, &nu))) >= 0;
        ok = ok && dp_doc_map_add(s, d, "devices", dp_doc_new_uint(s, nu.usable)) >= 0;
        ok = ok && dp_doc_map_add(s, d, "healthy", dp_doc_new_uint(s, nu.healthy)) >= 0;
        ok = ok && dp_doc_map_add(s, d, "inUse", dp_doc_new_uint(s, nu.used)) >= 0;
        pct(b, sizeof(b), nu.used, nu.healthy);
        ok = ok && dp_doc_map_add(s, d, "utilization", dp_doc_new_str(s, b)) >= 0;
        pct(b, sizeof(b), nu.free_partial, nu.free_healthy);
        ok = ok && dp_doc_map_add(s, d, "fragmentation", dp_doc_new_str(s, b)) >= 0;
        if (ok && (sn->model & DP_SIM_MODEL_V1)) {
                ok = (res = dp_doc_new_map(s)) != NULL;
                for (size_t i = 0; ok && i < dp_devnode_v1_resource_count(sn->dev); i++) {
                        size_t cap = 0, al = 0;
                        const char *nm = dp_devnode_v1_resource(sn->dev, i, &cap, &al);
                        dp_fmt(b, sizeof(b), "%zu/%zu", al, cap);
                        ok = dp_doc_map_add(s, res, nm, dp_doc_new_str(s, b)) >= 0;
                }
                /* a Node object's: healthy units / units, per resource */
                for (size_t i = 0; ok && !sn->dev && i < sn->n_obj_units;) {
                        const char *nm = sn->obj_units[i].resource;
                        size_t cap = 0, al = 0;
                        for (; i < sn->n_obj_units && streq(sn->obj_units[i].resource, nm); i++, cap++)
                                al += !sn->obj_units[i].failed;
                        dp_fmt(b, sizeof(b), "%zu/%zu", al, cap);
                        ok = dp_doc_map_add(s, res, nm, dp_doc_new_str(s, b)) >= 0;
                }
                ok = ok && dp_doc_map_add(s, d, "v1Allocatable", res) >= 0;
        }
        for (size_t i = 0; ok && i < nu.n_units; i++) {
                unit_use *u = &nu.units[i];
                dp_doc_node *ud = dp_doc_new_map(s), *hs = dp_doc_new_seq(s);
                ok = ud && hs;
                ok = ok && dp_doc_map_add(s, ud, "id", dp_doc_new_str(s, u->u.id)) >= 0;
                ok = ok && dp_doc_map_add(s, ud, "kind",
                                          dp_doc_new_str(s, u->u.parent >= 0 ? u->u.profile
                                                            : u->u.mig_mode  ? "gpu (MIG mode)"
                                                                             : u->u.profile)) >= 0;
                ok = ok &&
                     dp_doc_map_add(s, ud, "health", dp_doc_new_str(s, u->u.healthy ? "Healthy" : "Unhealthy")) >= 0;
                for (size_t k = 0; ok && k < u->n_holders; k++)
                        ok = dp_doc_seq_add(s, hs, dp_doc_new_str(s, u->holders[k])) >= 0;
                ok = ok && dp_doc_map_add(s, ud, "heldBy", hs) >= 0;
                if (u->n_shares) ok = ok && shares_doc(s, u, ud);
                ok = ok && dp_doc_seq_add(s, units, ud) >= 0;
        }
        ok = ok && dp_doc_map_add(s, d, "units", units) >= 0;
        if (nu.n_other) ok = ok && dp_doc_map_add(s, d, "otherDevices", other_doc(s, &nu)) >= 0;
        node_use_done(&nu);
        return ok ? d : NULL;
}

/* Which pods of each Kueue workload kube-scheduler placed (src/queue shows
 * an admitted workload left Pending as such): a Job's pods by their
 * controller, a queued plain Pod by itself. */
static void queue_placement(sim_run *r) {
        dp_queue_placement_clear(r->queue);
        for (size_t i = 0; i < r->n_pods; i++) {
                const sim_pod *sp = &r->pods[i];
                if (!sp->created) continue; /* never created (held by Kueue over time): not one of its pods */
                const char *sl = sp->workload ? strchr(sp->workload, '/') : NULL;
                char kind[64];
                dp_fmt(kind, sizeof(kind), "%.*s", sl ? (int)(sl - sp->workload) : 3, sl ? sp->workload : "Pod");
                dp_queue_placement_add(r->queue, kind, sp->ns, sl ? sl + 1 : sp->name, sp->node != NULL);
        }
}

static dp_doc_node *run_doc(dp_doc_set *s, sim_run *r) {
        dp_doc_node *d = dp_doc_new_map(s), *pods = dp_doc_new_seq(s), *nodes = dp_doc_new_seq(s),
                    *ev = dp_doc_new_seq(s);
        summary m;
        if (!d || !pods || !nodes || !ev || summarize_run(r, &m) < 0) return NULL;
        ADD(d, "endSeconds", dp_doc_new_int(s, r->end_ms / 1000));
        ADD(d, "summary", summary_doc(s, &m));
        for (size_t i = 0; i < r->n_pods; i++)
                if (dp_doc_seq_add(s, pods, pod_doc(s, r, &r->pods[i])) < 0) return NULL;
        ADD(d, "pods", pods);
        for (size_t i = 0; i < r->n_nodes; i++)
                if (dp_doc_seq_add(s, nodes, node_doc(s, r, &r->nodes[i])) < 0) return NULL;
        ADD(d, "nodes", nodes);
        const char *p = dp_strbuf_str(&r->log);
        while (*p) {
                const char *nl = strchr(p, '\n');
                size_t len = nl ? (size_t)(nl - p) : strlen(p);
                if (dp_doc_seq_add(s, ev, dp_doc_new_strn(s, p, len)) < 0) return NULL;
                p += len + (nl ? 1 : 0);
        }
        ADD(d, "events", ev);
        /* Kueue's admission, when the input has queues or queued workloads */
        if (r->queue && (dp_queue_n_cluster_queues(r->queue) || dp_queue_n_workloads(r->queue))) {
                queue_placement(r);
                ADD(d, "queues", dp_queue_encode(s, r->queue));
        }
        if (r->volcano) ADD(d, "volcano", dp_volcano_encode(s, r->volcano)); /* --queue-policy volcano */
        if (r->kai) ADD(d, "kaiQueues", dp_kai_encode(s, r->kai)); /* KAI-Scheduler's (sim-kai.c) */
        return d;
}

static const char *placement(sim_run *r, const sim_pod *sp, char *buf, size_t size) {
        const char *st = pod_state(sp);
        if (streq(st, "Running") || streq(st, "Waiting") || streq(st, "Deleted") || streq(st, "Evicted")) {
                _cleanup_free_ char *v2 = sp->deleted ? NULL : sim_pod_v2_devices(r, sp);
                if (!sp->deleted && !v2) return NULL; /* out of memory */
                const char *v2s = sp->deleted ? sp->v2_devices : v2;
                dp_fmt(buf, size, "%s %s (%s)", st, sp->node ? sp->node : "-", pod_model(sp->v1_devices, v2s));
        } else
                dp_fmt(buf, size, "%s", st);
        return buf;
}

static dp_doc_node *comparison_doc(dp_doc_set *s, sim_run *const runs[3]) {
        static const char *const names[3] = {"asWritten", "allV1", "allV2"};
        dp_doc_node *d = dp_doc_new_map(s), *pods = dp_doc_new_seq(s);
        if (!d || !pods) return NULL;
        for (int k = 0; k < 3; k++) {
                summary m;
                if (summarize_run(runs[k], &m) < 0) return NULL;
                ADD(d, names[k], summary_doc(s, &m));
        }
        for (size_t i = 0; i < runs[0]->n_pods; i++) {
                dp_doc_node *p = dp_doc_new_map(s);
                if (!p) return NULL;
                ADD(p, "name", dp_doc_new_str(s, runs[0]->pods[i].key));
                for (int k = 0; k < 3; k++) {
                        char b[512];
                        const char *pl = placement(runs[k], &runs[k]->pods[i], b, sizeof(b));
                        if (!pl) return NULL;
                        ADD(p, names[k], dp_doc_new_str(s, pl));
                }
                if (dp_doc_seq_add(s, pods, p) < 0) return NULL;
        }
        ADD(d, "pods", pods);
        return d;
}

/* ---- tables ---- */

/* Columns as wide as their widest cell, nothing cut (base/table.h). */
typedef dp_table table;
#define table_add dp_table_add
#define table_drop dp_table_done
#define table_print dp_table_print

/* What the header names: the Fleet's name, or what the cluster was read
 * from ("dump.yaml", "(3 files)", "(API server)"). */
static const char *input_name(const dp_sim_input *in) {
        if (in->fleet) return in->fleet_name;
        return in->cluster_name ? in->cluster_name : in->fleet_name;
}

static const char *str_of(const dp_doc_node *n, const char *key) {
        const char *v = NULL;
        const dp_doc_node *x = dp_doc_get(n, key);
        if (x && x->type == DP_DOC_SCALAR) v = x->str;
        return v ? v : "";
}

/* The list's items appended with commas (one after what sb holds). */
static void join_seq(const dp_doc_node *seq, dp_strbuf *sb) {
        for (size_t i = 0; seq && i < seq->n; i++)
                dp_strbuf_printf(sb, "%s%s", sb->len ? "," : "", seq->items[i]->str ? seq->items[i]->str : "");
}

/* A table whose first row is its headers. */
static table table_with(const char *const *headers, size_t n) {
        table t = DP_TABLE_INIT(n);
        for (size_t i = 0; i < n; i++)
                table_add(&t, headers[i]);
        return t;
}

/* Every pod: where it is and why (a preemptor: whom it would preempt). */
static void pods_table(const dp_doc_node *pods, dp_strbuf *out) {
        static const char *const h[] = {"POD", "STATE", "NODE", "MODEL", "DEVICES", "REASON"};
        table t = table_with(h, ELEMENTSOF(h));
        for (size_t i = 0; pods && i < pods->n; i++) {
                const dp_doc_node *p = pods->items[i], *dv = dp_doc_get(p, "devices");
                _cleanup_strbuf_ dp_strbuf devs = DP_STRBUF_INIT;
                join_seq(dp_doc_get(dv, "v1"), &devs);
                join_seq(dp_doc_get(dv, "v2"), &devs);
                if (dp_strbuf_failed(&devs)) t.oom = true;
                table_add(&t, str_of(p, "name"));
                table_add(&t, str_of(p, "state"));
                table_add(&t, str_of(p, "node")[0] ? str_of(p, "node") : "-");
                table_add(&t, str_of(p, "model"));
                table_add(&t, devs.len ? dp_strbuf_str(&devs) : "-");
                const dp_doc_node *vs = dp_doc_get(p, "preempted");
                _cleanup_strbuf_ dp_strbuf vic = DP_STRBUF_INIT;
                join_seq(vs, &vic);
                if (dp_strbuf_failed(&vic)) t.oom = true;
                if (vic.len) /* a preemptor: whom it made room on */
                        dp_table_addf(&t, "%s%swould preempt %s on %s", str_of(p, "reason"),
                                      str_of(p, "reason")[0] ? "; " : "", dp_strbuf_str(&vic),
                                      str_of(p, "nominatedNode"));
                else
                        table_add(&t, str_of(p, "reason"));
        }
        table_print(&t, out);
        dp_strbuf_puts(out, "\n");
}

/* The claims' results, each device by driver/pool/device; nothing when
 * no pod has one. */
static void claims_table(const dp_doc_node *pods, dp_strbuf *out) {
        static const char *const h[] = {"POD", "CLAIM", "REQUEST", "DRIVER/POOL/DEVICE"};
        table t = table_with(h, ELEMENTSOF(h));
        size_t n_results = 0;
        for (size_t i = 0; pods && i < pods->n; i++) {
                const dp_doc_node *cl = dp_doc_get(pods->items[i], "claims");
                for (size_t c = 0; cl && c < cl->n; c++) {
                        const dp_doc_node *res = dp_doc_get(cl->items[c], "results");
                        for (size_t k = 0; res && k < res->n; k++) {
                                const dp_doc_node *x = res->items[k];
                                table_add(&t, str_of(pods->items[i], "name"));
                                table_add(&t, str_of(cl->items[c], "name"));
                                table_add(&t, str_of(x, "request"));
                                dp_table_addf(&t, "%s/%s/%s%s", str_of(x, "driver"), str_of(x, "pool"),
                                              str_of(x, "device"), dp_doc_get(x, "shareID") ? " (shared)" : "");
                                n_results++;
                        }
                }
        }
        if (n_results) {
                table_print(&t, out);
                dp_strbuf_puts(out, "\n");
        } else
                table_drop(&t);
}

/* The nodes, then each node's devices and who holds them. */
static void nodes_tables(const dp_doc_node *nodes, dp_strbuf *out) {
        static const char *const h[] = {"NODE", "PROFILE", "MODEL", "DEVICES", "HEALTHY", "IN USE", "UTIL", "FRAG"};
        static const char *const keys[] = {"name",    "profile", "model",       "devices",
                                           "healthy", "inUse",   "utilization", "fragmentation"};
        table t = table_with(h, ELEMENTSOF(h));
        for (size_t i = 0; nodes && i < nodes->n; i++)
                for (size_t k = 0; k < ELEMENTSOF(keys); k++)
                        table_add(&t, str_of(nodes->items[i], keys[k]));
        table_print(&t, out);
        dp_strbuf_puts(out, "\n");
        static const char *const hd[] = {"NODE/DEVICE", "KIND", "HEALTH", "HELD BY"};
        t = table_with(hd, ELEMENTSOF(hd));
        for (size_t i = 0; nodes && i < nodes->n; i++) {
                const dp_doc_node *n = nodes->items[i], *units = dp_doc_get(n, "units");
                for (size_t u = 0; units && u < units->n; u++) {
                        const dp_doc_node *x = units->items[u];
                        _cleanup_strbuf_ dp_strbuf held = DP_STRBUF_INIT;
                        join_seq(dp_doc_get(x, "heldBy"), &held);
                        if (dp_strbuf_failed(&held)) t.oom = true;
                        dp_table_addf(&t, "%s/%s", str_of(n, "name"), str_of(x, "id"));
                        table_add(&t, str_of(x, "kind"));
                        table_add(&t, str_of(x, "health"));
                        table_add(&t, held.len ? dp_strbuf_str(&held) : "-");
                }
        }
        table_print(&t, out);
}

/* The run as written beside the runs with every node on V1 and on V2: the
 * totals, then each pod's state. */
static void comparison_tables(const dp_doc_node *cmp, dp_strbuf *out) {
        static const char *const runs[] = {"asWritten", "allV1", "allV2"};
        static const char *const h[] = {"", "AS WRITTEN", "ALL V1", "ALL V2"};
        static const char *const rows[][2] = {
                {"running", "pods running"},           {"waitingOnNode", "pods waiting on a node"},
                {"pending", "pods pending"},           {"deleted", "pods deleted"},
                {"evicted", "pods evicted"},           {"devicesInUse", "devices in use"},
                {"healthyDevices", "healthy devices"}, {"utilization", "utilization"},
                {"fragmentation", "fragmentation"}};
        dp_strbuf_puts(out, "\nV1 vs V2: the same workload with every node switched to one model\n");
        table t = table_with(h, ELEMENTSOF(h));
        for (size_t r = 0; r < ELEMENTSOF(rows); r++) {
                table_add(&t, rows[r][1]);
                for (size_t k = 0; k < ELEMENTSOF(runs); k++)
                        table_add(&t, str_of(dp_doc_get(cmp, runs[k]), rows[r][0]));
        }
        table_print(&t, out);
        dp_strbuf_puts(out, "\n");
        static const char *const hp[] = {"POD", "AS WRITTEN", "ALL V1", "ALL V2"};
        t = table_with(hp, ELEMENTSOF(hp));
        const dp_doc_node *cp = dp_doc_get(cmp, "pods");
        for (size_t i = 0; cp && i < cp->n; i++) {
                table_add(&t, str_of(cp->items[i], "name"));
                for (size_t k = 0; k < ELEMENTSOF(runs); k++)
                        table_add(&t, str_of(cp->items[i], runs[k]));
        }
        table_print(&t, out);
}

static void print_tables(const dp_doc_node *doc, dp_strbuf *out) {
        const dp_doc_node *run = dp_doc_get(doc, "asWritten"), *sum = dp_doc_get(run, "summary");
        bool cluster = streq(str_of(doc, "input"), "cluster");
        dp_strbuf_printf(out, "%s %s: %s nodes, %s devices; %s pods; scoring %s; simulated until t=%ss\n\n",
                         cluster ? "Cluster" : "Fleet", str_of(doc, cluster ? "cluster" : "fleet"),
                         str_of(sum, "nodes"), str_of(sum, "devices"), str_of(sum, "pods"), str_of(doc, "scoring"),
                         str_of(run, "endSeconds"));
        pods_table(dp_doc_get(run, "pods"), out);
        if (dp_doc_get(run, "queues")) {
                dp_queue_print(dp_doc_get(run, "queues"), out);
                dp_strbuf_puts(out, "\n");
        }
        if (dp_doc_get(run, "volcano")) {
                dp_volcano_print(dp_doc_get(run, "volcano"), out);
                dp_strbuf_puts(out, "\n");
        }
        if (dp_doc_get(run, "kaiQueues")) {
                dp_kai_print(dp_doc_get(run, "kaiQueues"), out);
                dp_strbuf_puts(out, "\n");
        }
        claims_table(dp_doc_get(run, "pods"), out);
        nodes_tables(dp_doc_get(run, "nodes"), out);
        comparison_tables(dp_doc_get(doc, "comparison"), out);
}

void dp_sim_input_size(const dp_sim_input *in, size_t *ret_nodes, size_t *ret_pods, size_t *ret_objects) {
        size_t nodes = 0;
        for (size_t g = 0; g < in->n_groups; g++)
                nodes += (size_t)in->groups[g].count;
        *ret_nodes = nodes;
        *ret_pods = in->objs ? dp_object_list_count(in->objs, DP_KIND_POD) : 0;
        *ret_objects = in->objs ? in->objs->n : 0;
}

/* An allocation failed while doing `what`: say so with the input's size
 * (the CLI exits 3, not 2: the input was good). Returns -ENOMEM. */
static int oom_while(const dp_sim_input *in, dp_error *err, const char *what) {
        size_t nodes, pods, objects;
        dp_sim_input_size(in, &nodes, &pods, &objects);
        return dp_error_set(err, -ENOMEM, "%s (input: %zu nodes, %zu pods, %zu objects)", what, nodes, pods, objects);
}

static int explain_nodes(sim_run *r, const sim_pod *sp, bool details, dp_strbuf *out, dp_error *err);

/* The workload a Deployment's pod shows under: its Deployment, not the
 * ReplicaSet that owns it ("Deployment/web"). The ReplicaSet in the input
 * names its Deployment (ownerReferences); without it, the pod's
 * pod-template-hash label is the suffix the Deployment controller added to
 * the ReplicaSet's name ("web-7d4b9c" with hash "7d4b9c"). A new string, or
 * NULL when the pod's workload is its owner as written (or on -ENOMEM). */
static char *deployment_of(sim_run *r, const sim_pod *sp) {
        if (!sp->workload || !startswith(sp->workload, "ReplicaSet/")) return NULL;
        const char *rs = sp->workload + strlen("ReplicaSet/");
        const dp_deployment *o = dp_store_get(r->store, DP_KIND_REPLICA_SET, sp->ns, rs, NULL).deployment;
        for (size_t i = 0; o && i < o->meta.n_owner_references; i++) {
                const dp_owner_ref *own = &o->meta.owner_references[i];
                if (own->controller && streq_ptr(own->kind, "Deployment") && own->name)
                        return dp_asprintf("Deployment/%s", own->name);
        }
        if (o) return NULL; /* a ReplicaSet of its own */
        const dp_pod *p = dp_store_get(r->store, DP_KIND_POD, sp->ns, sp->name, NULL).pod;
        const char *hash = p ? dp_kv_get(p->meta.labels, p->meta.n_labels, "pod-template-hash") : NULL;
        size_t lr = strlen(rs), lh = hash ? strlen(hash) : 0;
        if (!lh || lr <= lh + 1 || rs[lr - lh - 1] != '-' || !streq(rs + lr - lh, hash)) return NULL;
        return dp_asprintf("Deployment/%.*s", (int)(lr - lh - 1), rs);
}

/* The page from the report document and the all-V1 and all-V2 runs' own
 * documents, made in the same set, and what the document does not hold
 * (dp_sim_html_extra): each pod's workload, and for the first Pending pod
 * of each distinct reason the per-node reasons `devplane explain` gives
 * (every node's for the first few groups, grouped for the next ones). */
#define HTML_DIAG_EVERY_NODE 8
static int html_page(const dp_sim_input *in, dp_doc_set *s, const dp_doc_node *doc, sim_run *const runs[3],
                     dp_strbuf *html, dp_error *err) {
        /* each run's document in a set of its own: the sets' node cap (DP_DOC_MAX_NODES) holds per run */
        (void)s;
        _cleanup_(dp_doc_set_freep) dp_doc_set *s1 = dp_doc_set_new();
        _cleanup_(dp_doc_set_freep) dp_doc_set *s2 = dp_doc_set_new();
        const dp_doc_node *fr[2] = {s1 ? run_doc(s1, runs[1]) : NULL, s2 ? run_doc(s2, runs[2]) : NULL};
        if (!fr[0] || !fr[1]) return oom_while(in, err, "drawing the HTML report");
        sim_run *r0 = runs[0];
        size_t np = r0->n_pods;
        _cleanup_free_ const char **keys = calloc(np + 1, sizeof(char *));
        _cleanup_free_ const char **wls = calloc(np + 1, sizeof(char *));
        _cleanup_free_ char **folded = calloc(np + 1, sizeof(char *));
        _cleanup_free_ const char **dkeys = calloc(DP_SIM_HTML_DIAG_MAX + 1, sizeof(char *));
        _cleanup_free_ char **dtexts = calloc(DP_SIM_HTML_DIAG_MAX + 1, sizeof(char *));
        _cleanup_(dp_hashmap_freep) dp_hashmap *seen = dp_hashmap_new();
        if (!keys || !wls || !folded || !dkeys || !dtexts || !seen)
                return oom_while(in, err, "drawing the HTML report");
        dp_sim_html_extra ex = {.cluster = !in->fleet,
                                .pod_keys = keys,
                                .workloads = wls,
                                .n_pods = np,
                                .diag_keys = dkeys,
                                .diag_texts = (const char *const *)dtexts};
        int r = 0;
        for (size_t i = 0; i < np && r >= 0; i++) {
                sim_pod *sp = &r0->pods[i];
                keys[i] = sp->key;
                folded[i] = deployment_of(r0, sp);
                wls[i] = folded[i] ? folded[i] : sp->workload;
                const dp_sched_pod_info *pi = sim_pod_info(r0, sp);
                if (!streq(pod_state(sp), "Pending") || !pi || !pi->message || ex.n_diag >= DP_SIM_HTML_DIAG_MAX)
                        continue;
                r = dp_hashmap_put(seen, pi->message, sp);
                if (r == -EEXIST) {
                        r = 0;
                        continue;
                }
                if (r < 0) break;
                dp_strbuf t = DP_STRBUF_INIT;
                r = explain_nodes(r0, sp, ex.n_diag < HTML_DIAG_EVERY_NODE, &t, err);
                if (r >= 0 && dp_strbuf_failed(&t)) r = -ENOMEM;
                if (r < 0) {
                        dp_strbuf_done(&t);
                        break;
                }
                dkeys[ex.n_diag] = sp->key;
                dtexts[ex.n_diag++] = dp_strbuf_steal(&t);
        }
        if (r >= 0) r = dp_sim_html_render_doc(doc, fr, &ex, html, err);
        if (r >= 0 && dp_strbuf_failed(html)) r = -ENOMEM;
        for (size_t i = 0; i < ex.n_diag; i++)
                free(dtexts[i]);
        for (size_t i = 0; i < np; i++)
                free(folded[i]);
        return r == -ENOMEM ? oom_while(in, err, "drawing the HTML report") : r;
}

static int dp_sim_report_impl(const dp_sim_input *in, dp_sim_output fmt, dp_strbuf *out, dp_strbuf *html,
                              size_t *ret_pending, dp_error *err) {
        sim_run *runs[3] = {NULL, NULL, NULL};
        static const dp_sim_model models[3] = {0, DP_SIM_MODEL_V1, DP_SIM_MODEL_V2};
        static const char *const run_names[3] = {"as-written", "all-V1", "all-V2"};
        int r = 0;
        for (int k = 0; k < 3 && r >= 0; k++) {
                /* without Fleet node groups, forcing a model changes no node (Node
                 * objects keep theirs): the as-written run stands for all three */
                if (k > 0 && in->n_groups == 0) {
                        runs[k] = runs[0];
                        continue;
                }
                r = sim_run_new(in, models[k], &runs[k], err);
                if (r == -ENOMEM) {
                        char w[64];
                        dp_fmt(w, sizeof(w), "simulating the %s run", run_names[k]);
                        r = oom_while(in, err, w);
                }
        }
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        dp_doc_node *doc = NULL;
        if (r >= 0 && !s) r = -ENOMEM;
        if (r >= 0) {
                doc = dp_doc_new_map(s);
                bool ok = doc && dp_doc_map_add(s, doc, "fleet", dp_doc_new_str(s, in->fleet_name)) >= 0 &&
                          dp_doc_map_add(s, doc, "input", dp_doc_new_str(s, in->fleet ? "fleet" : "cluster")) >= 0 &&
                          (in->fleet || dp_doc_map_add(s, doc, "cluster", dp_doc_new_str(s, input_name(in))) >= 0) &&
                          dp_doc_map_add(s, doc, "scoring",
                                         dp_doc_new_str(s, in->policy == DP_SCORE_SPREAD    ? "spread"
                                                           : in->policy == DP_SCORE_NONE    ? "none"
                                                           : in->policy == DP_SCORE_DEFAULT ? "default"
                                                                                            : "binpack")) >= 0 &&
                          dp_doc_map_add(s, doc, "asWritten", run_doc(s, runs[0])) >= 0 &&
                          dp_doc_map_add(s, doc, "comparison", comparison_doc(s, runs)) >= 0;
                if (!ok) r = oom_while(in, err, "building the report document (three runs)");
        }
        if (r >= 0) {
                summary m;
                r = summarize_run(runs[0], &m);
                if (r == -ENOMEM) r = oom_while(in, err, "summing up the as-written run");
                if (r >= 0 && ret_pending) *ret_pending = m.pending + m.waiting;
        }
        if (r >= 0 && html) r = html_page(in, s, doc, runs, html, err);
        if (r >= 0 && out) {
                if (fmt == DP_SIM_OUT_JSON) {
                        dp_doc_emit(out, doc, DP_DOC_JSON_PRETTY);
                        dp_strbuf_putc(out, '\n');
                } else if (fmt == DP_SIM_OUT_YAML)
                        dp_doc_emit(out, doc, DP_DOC_YAML);
                else
                        print_tables(doc, out);
                if (dp_strbuf_failed(out)) r = oom_while(in, err, "writing the report");
        }
        for (int k = 0; k < 3 && !(r >= 0 && in->exit_after_report); k++)
                if (k == 0 || runs[k] != runs[0]) sim_run_free(runs[k]);
        return r;
}

/* ---- explain ---- */

/* What pods bound to the node ask of an extended resource (container limits). */
static int64_t requested_on(sim_run *r, const char *node, const char *res) {
        int64_t n = 0;
        if (sim_requested_on(r, node, res, &n) >= 0) return n;
        /* without memory for the index, the walk */
        size_t i = 0;
        dp_object o;
        while (dp_store_next(r->store, DP_KIND_POD, &i, &o, NULL)) {
                if (!streq_ptr(o.pod->node_name, node)) continue;
                for (size_t c = 0; c < o.pod->n_containers; c++)
                        for (size_t k = 0; k < o.pod->containers[c].n_limits; k++)
                                if (streq(o.pod->containers[c].limits[k].name, res))
                                        n += dp_quantity_value(&o.pod->containers[c].limits[k].value);
        }
        return n;
}

/* Other pods whose claims hold a device the pod's claims hold: the same
 * shared claim, or another allocation of a device that allows multiple
 * allocations (each with its own shareID). */
static int explain_v2_sharing(sim_run *r, const sim_pod *sp, dp_strbuf *out) {
        sim_claim_iter it = sim_pod_claims(r, sp);
        const char *cn;
        for (const dp_resource_claim *c; (c = sim_claim_next(&it, &cn));) {
                for (size_t i = 0; i < c->allocation->n_results; i++) {
                        const dp_device_allocation_result *d = &c->allocation->results[i];
                        dp_strbuf others = DP_STRBUF_INIT;
                        size_t j = 0;
                        dp_object o;
                        while (dp_store_next(r->store, DP_KIND_RESOURCE_CLAIM, &j, &o, NULL)) {
                                const dp_resource_claim *oc = o.claim;
                                bool holds = false;
                                for (size_t x = 0; oc->allocation && x < oc->allocation->n_results && !holds; x++) {
                                        const dp_device_allocation_result *od = &oc->allocation->results[x];
                                        holds = streq_ptr(od->driver, d->driver) && streq_ptr(od->pool, d->pool) &&
                                                streq_ptr(od->device, d->device);
                                }
                                if (!holds) continue;
                                for (size_t h = 0; h < oc->n_reserved_for; h++)
                                        if (!streq(dp_store_ns_of(o), sp->ns) ||
                                            !streq_ptr(oc->reserved_for[h].name, sp->name))
                                                dp_strbuf_printf(&others, " %s/%s", dp_store_ns_of(o),
                                                                 oc->reserved_for[h].name);
                        }
                        if (dp_strbuf_failed(&others)) {
                                dp_strbuf_done(&others);
                                return -ENOMEM;
                        }
                        if (others.len)
                                dp_strbuf_printf(out,
                                                 "%s (%s, pool %s) is shared (DRA: %s): also held by%s.\n"
                                                 "  They share its memory and its fault domain.\n",
                                                 d->device, d->driver, d->pool,
                                                 d->share_id ? "multiple allocations, each with its own shareID"
                                                             : "one claim used by several pods",
                                                 dp_strbuf_str(&others));
                        dp_strbuf_done(&others);
                }
        }
        return dp_strbuf_failed(out) ? -ENOMEM : 0;
}

static bool resource_verdict(dp_verdict_code c) {
        return c == DP_VERDICT_INSUFFICIENT || c == DP_VERDICT_INSUFFICIENT_CPU ||
               c == DP_VERDICT_INSUFFICIENT_MEMORY || c == DP_VERDICT_DRA;
}

/* One verdict group of a diagnosis: the nodes that said the same. */
typedef struct vgroup {
        const dp_sched_node_verdict *first;
        char text[768];
        size_t n;
} vgroup;

static int cmp_vgroup(const void *a, const void *b) {
        const vgroup *x = a, *y = b;
        bool rx = resource_verdict(x->first->code), ry = resource_verdict(y->first->code);
        if (rx != ry) return rx ? -1 : 1; /* resources short first: the closest nodes */
        if (x->n != y->n) return x->n > y->n ? -1 : 1;
        return strcmp(x->text, y->text);
}

/* "      nvidia.com/gpu: capacity 8, allocatable 8, requested by pods on the node 8" */
static void v1_detail(sim_run *r, const dp_sched_node_verdict *v, dp_strbuf *out) {
        sim_node *sn = v->code == DP_VERDICT_INSUFFICIENT ? sim_find_node(r, v->node) : NULL;
        if (!sn || !(sn->model & DP_SIM_MODEL_V1)) return;
        for (size_t k = 0; k < dp_devnode_v1_resource_count(sn->dev); k++) {
                size_t cap = 0, al = 0;
                const char *nm = dp_devnode_v1_resource(sn->dev, k, &cap, &al);
                if (streq(nm, v->arg))
                        dp_strbuf_printf(out,
                                         "      %s: capacity %zu, allocatable %zu, requested by pods on the node "
                                         "%" PRId64 "\n",
                                         nm, cap, al, requested_on(r, sn->name, nm));
        }
}

static void detail_lines(const char *detail, const char *indent, dp_strbuf *out) {
        for (const char *p = detail; p && *p;) {
                const char *e = strchr(p, '\n');
                size_t len = e ? (size_t)(e - p) : strlen(p);
                if (len) dp_strbuf_printf(out, "%s%.*s\n", indent, (int)len, p);
                p += len + (e ? 1 : 0);
        }
}

/* The per-node verdicts of a Pending pod, computed now (dp_sched_diagnose):
 * grouped by reason with the first nodes of each and, for DRA, the
 * allocator's reasons grouped the same way; with `details`, every node. */
static int explain_nodes(sim_run *r, const sim_pod *sp, bool details, dp_strbuf *out, dp_error *err) {
        dp_sched *sc = sim_pod_sched(r, sp);
        if (!sc) return 0;
        dp_sched_node_verdict *v = NULL;
        size_t n = 0;
        _cleanup_free_ char *msg = NULL;
        int rr = dp_sched_diagnose(sc, sp->ns, sp->name, &v, &n, &msg, err);
        if (rr == -ENOENT) return 0;
        if (rr < 0) return rr;
        if (rr == 0) {
                dp_strbuf_printf(out, "\nAt t=%" PRId64 "s: %s\n", r->end_ms / 1000, msg ? msg : "");
                return dp_strbuf_failed(out) ? -ENOMEM : 0;
        }
        _cleanup_free_ vgroup *g = calloc(n + 1, sizeof(*g));
        if (!g) {
                dp_sched_node_verdicts_free(v, n);
                return -ENOMEM;
        }
        size_t ng = 0, fit = 0;
        for (size_t i = 0; i < n; i++) {
                if (v[i].code == DP_VERDICT_FIT) {
                        fit++;
                        continue;
                }
                char t[768];
                dp_verdict_text(v[i].code, v[i].arg, t, sizeof(t));
                size_t k = 0;
                while (k < ng && !streq(g[k].text, t))
                        k++;
                if (k == ng) {
                        g[ng].first = &v[i];
                        dp_fmt(g[ng].text, sizeof(g[ng].text), "%s", t);
                        ng++;
                }
                g[k].n++;
        }
        qsort(g, ng, sizeof(*g), cmp_vgroup);
        dp_strbuf_printf(out, "\nBy reason, nodes as they are at t=%" PRId64 "s:\n", r->end_ms / 1000);
        if (fit)
                dp_strbuf_printf(out, "  %zu node%s would take it now (it waits for its next attempt)\n", fit,
                                 fit == 1 ? "" : "s");
        for (size_t k = 0; k < ng; k++) {
                dp_strbuf_printf(out, "  %zu: %s (", g[k].n, g[k].text);
                size_t shown = 0;
                for (size_t i = 0; i < n && shown < 3; i++) {
                        char t[768];
                        dp_verdict_text(v[i].code, v[i].arg, t, sizeof(t));
                        if (v[i].code == DP_VERDICT_FIT || !streq(t, g[k].text)) continue;
                        dp_strbuf_printf(out, "%s%s", shown++ ? ", " : "", v[i].node);
                }
                dp_strbuf_printf(out, "%s)\n", g[k].n > shown ? ", ..." : "");
                v1_detail(r, g[k].first, out);
                sim_explain_answer(r, sp, v, n, g[k].first, out); /* Node objects' numbers, selectors, taints */
                if (g[k].first->code != DP_VERDICT_DRA) continue;
                /* the allocator's reasons, the same way: distinct texts with their node counts */
                const char *seen[4] = {NULL, NULL, NULL, NULL};
                size_t cnt[4] = {0, 0, 0, 0}, ns = 0, other = 0;
                for (size_t i = 0; i < n; i++) {
                        if (v[i].code != DP_VERDICT_DRA) continue;
                        const char *d = v[i].detail ? v[i].detail : "";
                        size_t x = 0;
                        while (x < ns && !sim_same_reason_kind(seen[x], d)) /* by kind, not exact text */
                                x++;
                        if (x < ns)
                                cnt[x]++;
                        else if (ns < 4) {
                                seen[ns] = d;
                                cnt[ns++] = 1;
                        } else
                                other++;
                }
                for (size_t x = 0; x < ns; x++) {
                        dp_strbuf_printf(out, "    on %zu of them:\n", cnt[x]);
                        detail_lines(seen[x], "      ", out);
                }
                if (other) dp_strbuf_printf(out, "    and %zu more with other reasons\n", other);
        }
        if (details) {
                dp_strbuf_puts(out, "\nPer node (resources short first):\n");
                for (int pass = 0; pass < 2; pass++)
                        for (size_t i = 0; i < n; i++) {
                                if (v[i].code == DP_VERDICT_FIT || resource_verdict(v[i].code) != (pass == 0)) continue;
                                char t[768];
                                dp_verdict_text(v[i].code, v[i].arg, t, sizeof(t));
                                dp_strbuf_printf(out, "  %s: %s\n", v[i].node, t);
                                v1_detail(r, &v[i], out);
                                detail_lines(v[i].detail, "      ", out);
                        }
        } else if (ng)
                dp_strbuf_printf(out, "Every node's reason: devplane explain %s --details\n", sp->key);
        dp_sched_node_verdicts_free(v, n);
        return dp_strbuf_failed(out) ? -ENOMEM : 0;
}

/* What kube-scheduler's DefaultPreemption did for or to the pod. */
static void explain_preemption(sim_run *r, const sim_pod *sp, const dp_sched_pod_info *pi, dp_strbuf *out) {
        if (sp->preempted_by) {
                dp_strbuf_printf(out,
                                 "Preempted at t=%" PRId64 "s on %s by %s (kube-scheduler's DefaultPreemption): it "
                                 "has a lower priority, and without it %s fits there.\n",
                                 sp->deleted_ms / 1000, sp->node ? sp->node : "-", sp->preempted_by, sp->preempted_by);
                return;
        }
        if (!pi) return;
        if (pi->victims)
                dp_strbuf_printf(out, "It preempted %s on %s at t=%" PRId64 "s (nominatedNodeName %s).\n", pi->victims,
                                 pi->nominated ? pi->nominated : "-", pi->preempted_at_ms / 1000,
                                 pi->nominated ? pi->nominated : "-");
        if (!pi->postfilter || !streq(pod_state(sp), "Pending")) return;
        const char *pre = strstr(pi->postfilter, "preemption: ");
        dp_strbuf_printf(out, "%s\n", pre ? pre : pi->postfilter);
        bool dra = false;
        for (size_t i = 0; i < pi->reasons.n; i++)
                dra |= pi->reasons.v[i].code == DP_VERDICT_DRA;
        if (dra && !r->in->dra_preemption)
                dp_strbuf_puts(out, "kube-scheduler 1.35/1.36 does not preempt for DRA devices: a device held by a "
                                    "lower-priority pod stays held (KEP-5690 would change that; --dra-preemption "
                                    "shows what it would do).\n");
}

/* explain's trial placement (queue/explain-nodes.c): the as-written run
 * again with --add-nodes flavor=n on top of the input's what-if flags; 1
 * when every pod of w is placed. */
static int place_trial(void *userdata, const char *flavor, int32_t n, const dp_queue_workload *w, dp_error *err) {
        const sim_run *r = userdata;
        dp_queue_options o = r->in->queue ? *r->in->queue : (dp_queue_options){0};
        _cleanup_free_ dp_queue_add_nodes *v = calloc(o.n_add_nodes + 1, sizeof(*v));
        if (!v) return -ENOMEM;
        for (size_t i = 0; i < o.n_add_nodes; i++)
                v[i] = o.add_nodes[i];
        v[o.n_add_nodes] = (dp_queue_add_nodes){(char *)flavor, n}; /* borrowed, as the rest */
        o.add_nodes = v;
        o.n_add_nodes++;
        dp_sim_input in = *r->in;
        in.queue = &o;
        in.progress = false;
        _cleanup_(sim_run_freep) sim_run *t = NULL;
        int rr = sim_run_new(&in, 0, &t, err);
        if (rr < 0) return rr;
        queue_placement(t);
        ssize_t i = dp_queue_index(t->queue, w->kind, w->ns, w->name);
        const dp_queue_workload *x = i >= 0 ? dp_queue_workload_at(t->queue, (size_t)i) : NULL;
        return x && x->state == DP_QW_ADMITTED && x->pods_placed > 0 && x->pods_unplaced == 0;
}

/* A Kueue workload (a Job has no pods while it waits): src/queue answers. */
static int explain_workload(sim_run *r, const char *ref, dp_strbuf *out) {
        const char *sl = strchr(ref, '/');
        char ns[256];
        dp_fmt(ns, sizeof(ns), "%.*s", sl ? (int)(sl - ref) : 7, sl ? ref : "default");
        queue_placement(r);
        return dp_queue_explain_placing(r->queue, ns, sl ? sl + 1 : ref, place_trial, r, out);
}

/* A Pending pod Kueue queues (a gated plain Pod, a pod of an admitted Job
 * left Pending): its workload's answer after kube-scheduler's. */
static int explain_pod_workload(sim_run *r, const sim_pod *sp, dp_strbuf *out) {
        const char *sl = sp->workload ? strchr(sp->workload, '/') : NULL;
        char kind[64], ref[600];
        dp_fmt(kind, sizeof(kind), "%.*s", sl ? (int)(sl - sp->workload) : 3, sl ? sp->workload : "Pod");
        dp_fmt(ref, sizeof(ref), "%s/%s", sp->ns, sl ? sl + 1 : sp->name);
        if (!r->queue || dp_queue_index(r->queue, kind, sp->ns, sl ? sl + 1 : sp->name) < 0) return 0;
        dp_strbuf_putc(out, '\n');
        int rr = explain_workload(r, ref, out);
        return rr == -ENOENT ? 0 : rr;
}
static int dp_sim_explain_impl(const dp_sim_input *in, const char *pod, bool details, dp_strbuf *out, dp_error *err) {
        _cleanup_(sim_run_freep) sim_run *r = NULL;
        int rr = sim_run_new(in, 0, &r, err);
        if (rr == -ENOMEM) return oom_while(in, err, "simulating the as-written run");
        if (rr < 0) return rr;
        sim_pod *sp = sim_find_pod(r, pod);
        if (!sp && r->queue && (rr = explain_workload(r, pod, out)) != -ENOENT) return rr;
        if (!sp) return dp_error_set(err, -ENOENT, "pod %s is not in the input", pod);
        const dp_sched_pod_info *pi = sim_pod_info(r, sp);
        const char *st = pod_state(sp);
        dp_strbuf_printf(out, "Pod %s: %s at t=%" PRId64 "s (%s %s)\n", sp->key, st, r->end_ms / 1000,
                         in->fleet ? "fleet" : "cluster", input_name(in));
        if (pi) dp_strbuf_printf(out, "Scheduling attempts: %u\n", pi->attempts);
        sim_explain_recorded(r, sp, pi && streq(st, "Pending") ? pi->message : NULL, out); /* kube-scheduler's word */
        char held[1024];
        if (policy_reason(r, sp, held, sizeof(held))) /* not kube-scheduler's pod until admitted */
                dp_strbuf_printf(out, "Held back by its queue policy (--queue-policy %s): %s\n",
                                 r->volcano ? "volcano" : "kai", held);
        else if (streq(st, "Pending") && pi && pi->message)
                dp_strbuf_printf(out, "%s\n", pi->message);
        if (streq(st, "Pending")) {
                explain_preemption(r, sp, pi, out);
                if (pi && pi->reasons.n && (rr = explain_nodes(r, sp, details, out, err)) < 0) return rr;
                if ((rr = explain_pod_workload(r, sp, out)) < 0) return rr;
                return dp_strbuf_failed(out) ? -ENOMEM : 0;
        }
        if (streq(st, "NotCreated") && r->queue_wl && r->queue_wl[sp - r->pods] >= 0) { /* held (sim-queue.c) */
                dp_strbuf_puts(out, "Held by Kueue: its controller creates it once Kueue starts its workload (not "
                                    "admitted, or admitted with fewer pods)\n");
                if ((rr = explain_pod_workload(r, sp, out)) < 0) return rr;
                return dp_strbuf_failed(out) ? -ENOMEM : 0;
        }
        explain_preemption(r, sp, pi, out);
        if (streq(st, "Evicted") && r->volcano &&
            dp_volcano_pod_evicted(r->volcano, sp->ns, sp->name, held, sizeof(held)))
                dp_strbuf_printf(out, "Evicted at t=%" PRId64 "s by Volcano's reclaim action: %s\n",
                                 sp->deleted_ms / 1000, held);
        else if (streq(st, "Evicted"))
                dp_strbuf_printf(out,
                                 "Evicted at t=%" PRId64 "s by the device taint eviction controller: %s\n"
                                 "Its claims were released (deallocated when no other pod uses them).\n",
                                 sp->deleted_ms / 1000, sp->evict_msg ? sp->evict_msg : "");
        if (streq(st, "Waiting")) {
                dp_strbuf_printf(out, "Bound to %s, but the node's device plugin could not serve it: %s\n", sp->node,
                                 sp->wait_msg ? sp->wait_msg : "");
                dp_strbuf_puts(out, "It waits on that node (it is not rescheduled); deleting it frees everything.\n");
                return dp_strbuf_failed(out) ? -ENOMEM : 0;
        }
        if (!sp->node) return dp_strbuf_failed(out) ? -ENOMEM : 0;
        _cleanup_free_ char *v2 =
                sp->deleted ? dp_strdup(sp->v2_devices ? sp->v2_devices : "") : sim_pod_v2_devices(r, sp);
        if (!v2) return -ENOMEM;
        dp_strbuf_printf(out, "Node %s; V1 devices: %s; V2 devices: %s\n", sp->node,
                         sp->v1_devices && sp->v1_devices[0] ? sp->v1_devices : "none", v2[0] ? v2 : "none");
        sim_node *sn = sim_find_node(r, sp->node);
        if (!sn || sp->deleted) return dp_strbuf_failed(out) ? -ENOMEM : 0;
        node_use nu;
        if ((rr = node_use_get(r, sn, &nu)) < 0) return rr;
        for (size_t i = 0; i < nu.n_units; i++) {
                unit_use *u = &nu.units[i];
                bool mine = false;
                for (size_t k = 0; k < u->n_holders; k++)
                        mine |= streq(u->holders[k], sp->key);
                if (!mine) continue;
                if (!u->u.healthy)
                        dp_strbuf_printf(out, "%s is unhealthy now; the pod keeps it (no new pod receives it).\n",
                                         u->u.id);
                if (u->u.parent >= 0 && (size_t)u->u.parent < nu.n_units && nu.units[u->u.parent].u.mig_mode)
                        dp_strbuf_printf(out, "%s is a MIG %s instance on %s%s.\n", u->u.id, u->u.profile,
                                         nu.units[u->u.parent].u.id,
                                         sn->dev ? ""
                                                 : " (GPU feature-discovery labels do not say which GPU: placed "
                                                   "as the report draws it)");
                if (u->n_holders > 1 && u->u.n_v1_holders > 1) { /* V1 replicas of a time-sliced resource */
                        dp_strbuf_printf(out, "%s is shared (time-slicing): also held by", u->u.id);
                        for (size_t k = 0; k < u->n_holders; k++)
                                if (!streq(u->holders[k], sp->key)) dp_strbuf_printf(out, " %s", u->holders[k]);
                        dp_strbuf_puts(out,
                                       ".\n  They share its memory and its fault domain: no isolation between them,\n"
                                       "  one pod's out-of-memory or a GPU fault hits all of them.\n");
                }
        }
        node_use_done(&nu);
        if ((rr = explain_v2_sharing(r, sp, out)) < 0) return rr;
        return dp_strbuf_failed(out) ? -ENOMEM : 0;
}

int dp_sim_report(const dp_sim_input *in, dp_sim_output fmt, dp_strbuf *out, size_t *ret_pending, dp_error *err) {
        return dp_fmt_oom(err, dp_sim_report_impl(in, fmt, out, NULL, ret_pending, err));
}

int dp_sim_report_html(const dp_sim_input *in, dp_sim_output fmt, dp_strbuf *out, dp_strbuf *html, size_t *ret_pending,
                       dp_error *err) {
        return dp_fmt_oom(err, dp_sim_report_impl(in, fmt, out, html, ret_pending, err));
}

int dp_sim_explain(const dp_sim_input *in, const char *pod, dp_strbuf *out, dp_error *err) {
        return dp_sim_explain_details(in, pod, false, out, err);
}

int dp_sim_explain_details(const dp_sim_input *in, const char *pod, bool details, dp_strbuf *out, dp_error *err) {
        int r = dp_sim_explain_impl(in, pod, details, out, err);
        if (r == -ENOMEM && !strstr(dp_error_msg(err), "(input: ")) r = oom_while(in, err, "explaining the pod");
        return dp_fmt_oom(err, r);
}
