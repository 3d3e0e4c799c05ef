/* SPDX-License-Identifier: Apache-2.0
 * filter.c — one scheduling cycle for one pod: filter every node, score the
 * feasible ones, keep the best as a plan (sched.h). */
#include <stdio.h>

#include "sched/fmt.h"
#include "model/quantity.h"
#include "sched/dra-adapter.h"
#include "sched/score-pick.h"
#include "sched/sched-internal.h"
#include "sched/topology.h"

#define EXT_CLAIM_ANNOTATION "resource.kubernetes.io/extended-resource-claim"
#define IMPLICIT_CLASS_PREFIX "deviceclass.resource.kubernetes.io/"

/* ---- node basics ---- */

static bool toleration_matches(const dp_toleration *t, const dp_taint *x) {
        if (t->effect && t->effect[0] && !streq_ptr(t->effect, x->effect)) return false;
        bool exists = t->op && streq(t->op, "Exists");
        if (!t->key || !t->key[0]) return exists;
        if (!streq_ptr(t->key, x->key)) return false;
        if (exists) return true;
        const char *tv = t->value ? t->value : "", *xv = x->value ? x->value : "";
        return streq(tv, xv);
}

static const dp_taint *untolerated_taint(const dp_node *n, const dp_pod *p) {
        for (size_t i = 0; i < n->n_taints; i++) {
                const dp_taint *x = &n->taints[i];
                if (!streq_ptr(x->effect, "NoSchedule") && !streq_ptr(x->effect, "NoExecute")) continue;
                bool ok = false;
                for (size_t t = 0; t < p->n_tolerations && !ok; t++)
                        ok = toleration_matches(&p->tolerations[t], x);
                if (!ok) return x;
        }
        return NULL;
}

/* NodeUnschedulable: a cordoned node takes the pods that tolerate its
 * taint node.kubernetes.io/unschedulable:NoSchedule (an Exists toleration
 * without a key among them). */
static bool tolerates_unschedulable(const dp_pod *p) {
        static const dp_taint cordon = {.key = (char *)"node.kubernetes.io/unschedulable",
                                        .effect = (char *)"NoSchedule"};
        for (size_t t = 0; t < p->n_tolerations; t++)
                if (toleration_matches(&p->tolerations[t], &cordon)) return true;
        return false;
}

static bool term_matches(const dp_node_selector_term *t, const dp_node *n) {
        return dp_node_selector_term_matches(t, n->meta.labels, n->meta.n_labels, n->meta.name);
}

static bool selector_matches(const dp_node_selector *ns, const dp_node *n) {
        return !ns || dp_node_selector_matches(ns, n->meta.labels, n->meta.n_labels, n->meta.name);
}

static bool node_affinity_ok(const dp_pod *p, const dp_node *n) {
        for (size_t i = 0; i < p->n_node_selector; i++) {
                const char *v = dp_kv_get(n->meta.labels, n->meta.n_labels, p->node_selector[i].key);
                if (!v || !streq(v, p->node_selector[i].value)) return false;
        }
        return selector_matches(p->required_node_affinity, n);
}

/* ---- extended resources ---- */

typedef struct ext_req {
        const char *name;
        int64_t count;
        const char *class_name; /* a DeviceClass backing it, or NULL */
} ext_req;

static int add_ext(ext_req **v, size_t *n, size_t *cap, const char *name, int64_t count, bool max) {
        for (size_t i = 0; i < *n; i++)
                if (streq((*v)[i].name, name)) {
                        (*v)[i].count = max ? DP_MAX((*v)[i].count, count) : (*v)[i].count + count;
                        return 0;
                }
        if (DP_GROW(*v, *cap, *n + 1) < 0) return -ENOMEM;
        (*v)[(*n)++] = (ext_req){name, count, NULL};
        return 0;
}

static int container_ext(const dp_container *c, const char *name, int64_t *ret, dp_error *err) {
        const dp_named_quantity *lim = NULL, *req = NULL;
        for (size_t i = 0; i < c->n_limits; i++)
                if (streq(c->limits[i].name, name)) lim = &c->limits[i];
        for (size_t i = 0; i < c->n_requests; i++)
                if (streq(c->requests[i].name, name)) req = &c->requests[i];
        if (!lim)
                return dp_error_set(err, -EINVAL,
                                    "container %s: resources.limits[%s]: extended resources must be set in limits",
                                    c->name, name);
        if (req && dp_quantity_cmp(&req->value, &lim->value) != 0)
                return dp_error_set(
                        err, -EINVAL,
                        "container %s: resources.requests[%s]: must be equal to the limit for extended resources",
                        c->name, name);
        if (!dp_quantity_is_integer(&lim->value))
                return dp_error_set(err, -EINVAL, "container %s: resources.limits[%s]: must be a whole number", c->name,
                                    name);
        *ret = dp_quantity_value(&lim->value);
        return 0;
}

/* A container's count of an extended resource (its limit); 0 when it asks
 * for none. Only called after container_ext checked the container. */
static int64_t container_ext_count(const dp_container *c, const char *name) {
        int64_t cnt = 0;
        return container_ext(c, name, &cnt, NULL) < 0 ? 0 : cnt;
}

/* kube-scheduler's sum over a pod for one resource, given each container's
 * value: the containers and sidecars (init containers with restartPolicy
 * Always) summed; each other init container on top of the sidecars started
 * before it; the larger of the two. */
typedef int64_t (*container_value_fn)(const dp_container *c, const char *name, int k);

static int64_t pod_sum(const dp_pod *p, container_value_fn value, const char *name, int k) {
        int64_t reqs = 0, sidecars = 0, init = 0;
        for (size_t c = 0; c < p->n_containers; c++)
                reqs += value(&p->containers[c], name, k);
        for (size_t c = 0; c < p->n_init_containers; c++) {
                const dp_container *ic = &p->init_containers[c];
                int64_t v = value(ic, name, k);
                if (ic->restart_policy && streq(ic->restart_policy, "Always")) {
                        reqs += v;
                        sidecars += v;
                        v = sidecars;
                } else
                        v += sidecars;
                init = DP_MAX(init, v);
        }
        return DP_MAX(reqs, init);
}

static int64_t ext_value(const dp_container *c, const char *name, int k) {
        (void)k;
        return container_ext_count(c, name);
}

/* The count of one extended resource as kube-scheduler adds a pod up. */
static int64_t pod_ext_count(const dp_pod *p, const char *name) { return pod_sum(p, ext_value, name, 0); }

/* The pod's extended resources (each container checked: limits set, a
 * request equal to its limit, whole numbers), counted by pod_ext_count;
 * those it asks none of are left out. */
static int pod_ext(const dp_pod *p, ext_req **ret, size_t *ret_n, dp_error *err) {
        ext_req *v = NULL;
        size_t n = 0, cap = 0;
        int r = 0;
        for (int pass = 0; pass < 2 && r >= 0; pass++) {
                const dp_container *cs = pass ? p->init_containers : p->containers;
                size_t nc = pass ? p->n_init_containers : p->n_containers;
                for (size_t c = 0; c < nc && r >= 0; c++) {
                        const dp_container *ct = &cs[c];
                        for (size_t i = 0; i < ct->n_limits + ct->n_requests && r >= 0; i++) {
                                const char *nm =
                                        i < ct->n_limits ? ct->limits[i].name : ct->requests[i - ct->n_limits].name;
                                if (!dp_is_extended_resource_name(nm)) continue;
                                if (i >= ct->n_limits) { /* a request: its limit is checked with it */
                                        bool has_lim = false;
                                        for (size_t l = 0; l < ct->n_limits; l++)
                                                has_lim |= streq(ct->limits[l].name, nm);
                                        if (has_lim) continue;
                                }
                                int64_t cnt = 0;
                                r = container_ext(ct, nm, &cnt, err);
                                if (r >= 0) r = add_ext(&v, &n, &cap, nm, 0, true); /* the name, counted below */
                        }
                }
        }
        if (r < 0) {
                free(v);
                return r;
        }
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                v[i].count = pod_ext_count(p, v[i].name);
                if (v[i].count > 0) v[k++] = v[i];
        }
        *ret = v;
        *ret_n = k;
        return 0;
}

/* ---- native resources (NodeResourcesFit for cpu, memory, ephemeral-storage) ---- */

#define NATIVE_N 3 /* cpu (millicores), memory, ephemeral-storage (bytes): index k */
static const char *const native_names[NATIVE_N] = {"cpu", "memory", "ephemeral-storage"};

static int64_t native_value(const dp_quantity *q, int k) {
        return k == 0 ? dp_quantity_milli_value(q) : dp_quantity_value(q);
}

/* A container's request: requests[name], else limits[name] (the API server
 * defaults a missing request to its limit); cpu in millicores. */
static int64_t container_native(const dp_container *c, const char *name, bool milli) {
        const dp_named_quantity *q = NULL;
        for (size_t i = 0; i < c->n_requests && !q; i++)
                if (streq(c->requests[i].name, name)) q = &c->requests[i];
        for (size_t i = 0; i < c->n_limits && !q; i++)
                if (streq(c->limits[i].name, name)) q = &c->limits[i];
        if (!q) return 0;
        return milli ? dp_quantity_milli_value(&q->value) : dp_quantity_value(&q->value);
}

static int64_t native_container_value(const dp_container *c, const char *name, int k) {
        return container_native(c, name, k == 0);
}

/* The pod's cpu (millicores), memory and ephemeral-storage (bytes) requests
 * as kube-scheduler computes them: the containers summed; each init
 * container on top of the sidecars (restartPolicy Always) started before
 * it; sidecars also count with the containers; the larger of the two,
 * unless the pod sets its own cpu or memory (spec.resources.requests,
 * PodLevelResources); plus spec.overhead. */
static void pod_native(const dp_pod *p, int64_t ret[NATIVE_N]) {
        const char *const *names = native_names;
        for (int k = 0; k < NATIVE_N; k++) {
                ret[k] = pod_sum(p, native_container_value, names[k], k);
                for (size_t i = 0; k < 2 && i < p->n_pod_requests; i++) /* PodLevelResources: the pod's own wins */
                        if (streq(p->pod_requests[i].name, names[k]))
                                ret[k] = native_value(&p->pod_requests[i].value, k);
                for (size_t i = 0; i < p->n_overhead; i++) /* RuntimeClass overhead, on top */
                        if (streq(p->overhead[i].name, names[k])) ret[k] += native_value(&p->overhead[i].value, k);
        }
}

/* ---- the scores' non-zero requests (score.h) ---- */

/* A container's cpu (k 0, millicores) or memory (k 1) as the scores count
 * it: its request (or limit), else the default for a container naming none
 * (schedutil.GetNonzeroRequests: an explicit 0 stays 0). */
static int64_t nonzero_container_value(const dp_container *c, const char *name, int k) {
        for (size_t i = 0; i < c->n_requests; i++)
                if (streq(c->requests[i].name, name)) return native_container_value(c, name, k);
        for (size_t i = 0; i < c->n_limits; i++)
                if (streq(c->limits[i].name, name)) return native_container_value(c, name, k);
        return k == 0 ? DP_SCORE_DEFAULT_MILLI_CPU : DP_SCORE_DEFAULT_MEMORY;
}

/* pod_native's cpu and memory with the non-zero defaults per container.
 * The pod's own requests (PodLevelResources) count for a bound pod
 * (pod_level), not for the pod being scheduled: kube-scheduler 1.35's
 * NodeResourcesFit scores an incoming pod with pod-level cpu and memory as
 * its containers' (100m and 200Mi for none), while the node's non-zero
 * total takes its pods' pod-level requests (the oracle's --v 10 log). */
static void pod_nonzero(const dp_pod *p, bool pod_level, int64_t ret[2]) {
        for (int k = 0; k < 2; k++) {
                ret[k] = pod_sum(p, nonzero_container_value, native_names[k], k);
                for (size_t i = 0; pod_level && i < p->n_pod_requests; i++)
                        if (streq(p->pod_requests[i].name, native_names[k]))
                                ret[k] = native_value(&p->pod_requests[i].value, k);
                for (size_t i = 0; i < p->n_overhead; i++)
                        if (streq(p->overhead[i].name, native_names[k])) ret[k] += native_value(&p->overhead[i].value, k);
        }
}

static int64_t node_native(const dp_node *n, int k) {
        for (size_t i = 0; i < n->n_allocatable; i++)
                if (streq(n->allocatable[i].name, native_names[k])) return native_value(&n->allocatable[i].value, k);
        return 0;
}

static const char *class_for(const dp_store *st, const char *resource) {
        const char *best = NULL;
        size_t i = 0;
        dp_object o;
        while (dp_store_next(st, DP_KIND_DEVICE_CLASS, &i, &o, NULL)) {
                const dp_device_class *c = o.device_class;
                bool match = (c->extended_resource_name && streq(c->extended_resource_name, resource)) ||
                             (startswith(resource, IMPLICIT_CLASS_PREFIX) &&
                              streq(resource + strlen(IMPLICIT_CLASS_PREFIX), c->meta.name));
                if (match && (!best || strcmp(c->meta.name, best) < 0)) best = c->meta.name;
        }
        return best;
}

static const dp_named_quantity *node_alloc(const dp_node *n, const char *name) {
        for (size_t i = 0; i < n->n_allocatable; i++)
                if (streq(n->allocatable[i].name, name)) return &n->allocatable[i];
        return NULL;
}

/* The node's allocatable pods; -1 when it has none (a Fleet node: no limit;
 * Node objects always have one, model/defaults.c). */
static int64_t node_max_pods(const dp_node *n) {
        const dp_named_quantity *q = node_alloc(n, "pods");
        return q ? dp_quantity_value(&q->value) : -1;
}

/* ---- what nodes hold, kept up to date from the store's change log ----
 * Per node name: the devices its ResourceSlices list, the results of
 * allocated claims from the pool of that name, and the extended resources
 * bound pods hold through device plugins. Each store slot remembers what it
 * added, so a change takes that back and adds the new contribution. */

typedef struct node_use {
        char *name;
        int64_t slice_devs, claim_used;
        int64_t native_used[NATIVE_N]; /* native requests of bound pods (millicores, bytes, bytes) */
        int64_t nonzero_used[2];       /* their cpu and memory as the scores count them (pod_nonzero) */
        int64_t tab_idx;               /* its place in the node table, -1 none */
        ext_use *ext;
        size_t n_ext, cap_ext;
        /* queue, ports, defaults (kube-scheduler parity) */
        int64_t pods_used;       /* bound pods (allocatable pods) */
        struct port_use **ports; /* host ports of bound pods (entries never removed, never move) */
        size_t n_ports, cap_ports;
} node_use;

typedef struct port_use {
        dp_host_port hp;
        char key[80]; /* dp_host_port_key */
        int64_t count;
} port_use;

typedef struct use_item {
        node_use *nu;
        int what; /* 0 slice devices, 1 claim results, 2 extended resource, 3 + k native[k], 7 pods, 8 a host port,
                     9 + k nonzero[k] */
        const char *res; /* what == 2: the name as node_use->ext holds it; 8: the port's key */
        int64_t count;
} use_item;

typedef struct slot_use {
        use_item *items;
        size_t n;
} slot_use;

struct sched_usage {
        dp_hashmap *nodes; /* name -> node_use */
        slot_use *slots;
        size_t n_slots;
        size_t pos; /* in the store's change log */
        /* the nodes in name order with their node_use, rebuilt when a Node
         * is written (tab_pos: how far into the change log it has looked) */
        const dp_node **tab;
        node_use **tab_use;
        struct node_info *tab_info;
        dp_hashmap *tab_names; /* allocatable names (the nodes' strings) -> number + 1 */
        /* table nodes whose counters changed, in order (the score caches
         * read it from their own position), and the caches by pod shape */
        uint32_t *dirty;
        size_t n_dirty, cap_dirty;
        bool dirty_lost;    /* a change could not be logged: every cache starts over */
        dp_hashmap *caches; /* shape -> score_cache */
        int64_t *tab_key;   /* scratch for the fast pass, n_tab long */
        uint32_t *tab_cand;
        size_t n_tab, tab_pos;
        bool tab_ok;
        bool any_prefer_taint; /* a table node has a PreferNoSchedule taint */
        dp_hashmap *images;    /* image name -> image_ent: the table's node.status.images (ImageLocality) */
        uint64_t tab_gen;
};

static void slot_use_clear(slot_use *su) {
        free(su->items);
        *su = (slot_use){0};
}

/* A node's allocatable as numbers (the table's, for the fast pass). */
typedef struct alloc_ent {
        const char *name;
        int64_t value;
        bool ext;        /* an extended resource name */
        int32_t use_idx; /* its entry in the node_use's ext (never removed), -1 not seen yet */
        int32_t name_id; /* the name's number in sched_usage.tab_names */
} alloc_ent;

/* One image name of the nodes' status.images: the size the first node
 * lists and the table nodes listing it (kube-scheduler's ImageStateSummary). */
typedef struct image_ent {
        int64_t size;
        uint32_t *nodes;
        size_t n, cap;
} image_ent;

typedef struct node_info {
        alloc_ent *alloc;
        size_t n_alloc;
        int64_t native[NATIVE_N];    /* allocatable cpu (millicores), memory, ephemeral-storage (bytes) */
        bool unschedulable, tainted; /* the node's, kept here to spare a cache miss per node */
        int64_t ext_total;           /* the extended resources' allocatable, summed */
        int64_t max_pods;            /* allocatable pods, -1 none (node_max_pods) */
        int32_t prefer_taints;       /* PreferNoSchedule taints (TaintToleration's score) */
} node_info;

/* What the fast pass computed for one pod shape, per table node: the score,
 * or SCORE_OUT where the pod does not pass (filters, or a failed claim
 * shape). Valid for the table, snapshot and memo epoch it was made for;
 * nodes in the dirty log after `dirty_pos` are computed again. */
#define SCORE_OUT INT64_MIN
#ifndef SCORE_CACHES_MAX /* shapes remembered (a test build lowers these two) */
#define SCORE_CACHES_MAX 64
#endif
#ifndef SCORE_DIRTY_SLACK /* changed nodes logged beyond 8 per node before the caches start over */
#define SCORE_DIRTY_SLACK 4096
#endif

typedef struct score_cache {
        char *key;
        int64_t *score;
        size_t dirty_pos;
        uint64_t dra_gen, memo_epoch;
        bool valid;
        /* When no node fits the shape: each node's verdict (code << 32 |
         * argument id) and their histogram, kept like the scores (valid
         * with them; nodes in the dirty log after vdirty_pos again), so a
         * Pending pod's reasons cost the changed nodes, not every node. */
        uint64_t *verdict;
        uint8_t *unres; /* per node: the verdict is one preemption cannot help */
        dp_diag_hist hist;
        size_t vdirty_pos;
        bool vvalid;
} score_cache;

static void caches_free(sched_usage *u) {
        size_t i = 0;
        void *v;
        while (u->caches && dp_hashmap_iter(u->caches, &i, NULL, &v)) {
                score_cache *sc = v;
                free(sc->score);
                free(sc->verdict);
                free(sc->unres);
                dp_diag_hist_clear(&sc->hist);
                free(sc->key);
                free(sc);
        }
        u->caches = dp_hashmap_free(u->caches);
        free(u->dirty);
        u->dirty = NULL;
        u->n_dirty = u->cap_dirty = 0;
        u->dirty_lost = false;
}

static void mark_dirty(sched_usage *u, const node_use *nu) {
        if (nu->tab_idx < 0 || !u->caches) return;
        if (u->dirty_lost || DP_GROW(u->dirty, u->cap_dirty, u->n_dirty + 1) < 0) {
                u->dirty_lost = true;
                return;
        }
        u->dirty[u->n_dirty++] = (uint32_t)nu->tab_idx;
}

static void tab_info_free(sched_usage *u) {
        for (size_t i = 0; u->tab_info && i < u->n_tab; i++)
                free(u->tab_info[i].alloc);
        free(u->tab_info);
        u->tab_info = NULL;
        free(u->tab_key);
        u->tab_key = NULL;
        free(u->tab_cand);
        u->tab_cand = NULL;
        u->tab_names = dp_hashmap_free(u->tab_names);
        size_t i = 0;
        void *v;
        while (u->images && dp_hashmap_iter(u->images, &i, NULL, &v)) {
                free(((image_ent *)v)->nodes);
                free(v);
        }
        u->images = dp_hashmap_free(u->images);
        caches_free(u);
}

void dp_sched_usage_free(dp_sched *s) {
        sched_usage *u = s->usage;
        if (!u) return;
        size_t i = 0;
        void *v;
        while (dp_hashmap_iter(u->nodes, &i, NULL, &v)) {
                node_use *nu = v;
                for (size_t k = 0; k < nu->n_ext; k++)
                        free(nu->ext[k].name);
                free(nu->ext);
                for (size_t k = 0; k < nu->n_ports; k++)
                        free(nu->ports[k]);
                free(nu->ports);
                free(nu->name);
                free(nu);
        }
        dp_hashmap_free(u->nodes);
        for (size_t k = 0; k < u->n_slots; k++)
                slot_use_clear(&u->slots[k]);
        free(u->slots);
        free(u->tab);
        free(u->tab_use);
        tab_info_free(u);
        free(u);
        s->usage = NULL;
}

static node_use *node_use_get(sched_usage *u, const char *name, bool create) {
        node_use *nu = dp_hashmap_get(u->nodes, name);
        if (nu || !create) return nu;
        if (!(nu = calloc(1, sizeof(*nu))) || !(nu->name = dp_strdup(name))) {
                free(nu);
                return NULL;
        }
        nu->tab_idx = -1;
        if (dp_hashmap_put(u->nodes, nu->name, nu) < 0) {
                free(nu->name);
                free(nu);
                return NULL;
        }
        return nu;
}

static ext_use *node_ext(node_use *nu, const char *res, bool create) {
        for (size_t k = 0; k < nu->n_ext; k++)
                if (streq(nu->ext[k].name, res)) return &nu->ext[k];
        if (!create || DP_GROW(nu->ext, nu->cap_ext, nu->n_ext + 1) < 0) return NULL;
        ext_use *e = &nu->ext[nu->n_ext];
        if (!(e->name = dp_strdup(res))) return NULL;
        e->count = 0;
        nu->n_ext++;
        return e;
}

/* The node's entry for a host port (by key); created when asked. Entries
 * are allocated one by one: use items keep their key. */
static port_use *node_port(node_use *nu, const dp_host_port *hp, const char *key, bool create) {
        for (size_t k = 0; k < nu->n_ports; k++)
                if (streq(nu->ports[k]->key, key)) return nu->ports[k];
        if (!create || DP_GROW(nu->ports, nu->cap_ports, nu->n_ports + 1) < 0) return NULL;
        port_use *pu = calloc(1, sizeof(*pu));
        if (!pu) return NULL;
        pu->hp = *hp;
        dp_fmt(pu->key, sizeof(pu->key), "%s", key);
        nu->ports[nu->n_ports++] = pu;
        return pu;
}

/* gone: the object was deleted (not rewritten). */
static void use_apply(const use_item *it, int64_t sign, bool gone) {
        switch (it->what) {
        case 0: it->nu->slice_devs += sign * it->count; break;
        case 1: it->nu->claim_used += sign * it->count; break;
        case 3:
        case 4:
        case 5: it->nu->native_used[it->what - 3] += sign * it->count; break;
        case 7: it->nu->pods_used += sign * it->count; break;
        case 9:
        case 10: it->nu->nonzero_used[it->what - 9] += sign * it->count; break;
        case 8: {
                /* kube-scheduler's NodeInfo keeps used ports as a set: a pod
                 * deleted frees its (ip, protocol, port) even where another
                 * bound pod holds it too (the oracle then binds a third) */
                port_use *pu = node_port(it->nu, NULL, it->res, false);
                if (pu) pu->count = gone ? 0 : pu->count + sign * it->count;
                break;
        }
        default: {
                ext_use *e = node_ext(it->nu, it->res, false);
                if (e) e->count += sign * it->count;
        }
        }
}

/* res: what == 2 the resource name, 8 the dp_host_port; else NULL. */
static int use_add(sched_usage *u, slot_use *su, size_t *cap, const char *node, int what, const void *res,
                   int64_t count) {
        node_use *nu = node_use_get(u, node, true);
        if (!nu || DP_GROW(su->items, *cap, su->n + 1) < 0) return -ENOMEM;
        use_item it = {nu, what, NULL, count};
        if (what == 2) {
                ext_use *e = node_ext(nu, res, true);
                if (!e) return -ENOMEM;
                it.res = e->name;
        }
        if (what == 8) { /* res: a dp_host_port */
                const dp_host_port *hp = res;
                char key[80];
                dp_host_port_key(hp, key, sizeof(key));
                port_use *pu = node_port(nu, hp, key, true);
                if (!pu) return -ENOMEM;
                it.res = pu->key;
        }
        su->items[su->n++] = it;
        use_apply(&it, +1, false);
        mark_dirty(u, nu);
        return 0;
}

/* What the object in `slot` adds, as ext_used and node_fill counted it by
 * scanning pods, slices and claims. */
static int slot_changed(sched_usage *u, const dp_store *st, size_t slot) {
        if (slot >= u->n_slots) {
                size_t n = dp_store_slots(st);
                if (slot >= n) return 0;
                slot_use *v = realloc(u->slots, n * sizeof(*v));
                if (!v) return -ENOMEM;
                memset(v + u->n_slots, 0, (n - u->n_slots) * sizeof(*v));
                u->slots = v;
                u->n_slots = n;
        }
        slot_use *su = &u->slots[slot];
        dp_object o;
        dp_kind k = dp_store_slot(st, slot, &o, NULL);
        for (size_t i = 0; i < su->n; i++) {
                use_apply(&su->items[i], -1, !o.hdr);
                mark_dirty(u, su->items[i].nu);
        }
        slot_use_clear(su);
        size_t cap = 0;
        if (!o.hdr) return 0;
        if (k == DP_KIND_RESOURCE_SLICE) {
                if (!o.slice->node_name) return 0;
                return use_add(u, su, &cap, o.slice->node_name, 0, NULL, (int64_t)o.slice->n_devices);
        }
        if (k == DP_KIND_RESOURCE_CLAIM) {
                const dp_allocation_result *a = o.claim->allocation;
                for (size_t i = 0; a && i < a->n_results; i++) {
                        if (!a->results[i].pool) continue;
                        int r = use_add(u, su, &cap, a->results[i].pool, 1, NULL, 1);
                        if (r < 0) return r;
                }
                return 0;
        }
        if (k != DP_KIND_POD) return 0;
        const dp_pod *p = o.pod;
        if (!p->node_name) return 0;
        if (p->phase && (streq(p->phase, "Succeeded") || streq(p->phase, "Failed"))) return 0;
        int64_t native[NATIVE_N];
        pod_native(p, native);
        for (int w = 0; w < NATIVE_N; w++)
                if (native[w] > 0) {
                        int r = use_add(u, su, &cap, p->node_name, 3 + w, NULL, native[w]);
                        if (r < 0) return r;
                }
        int64_t nz[2];
        pod_nonzero(p, true, nz);
        for (int w = 0; w < 2; w++)
                if (nz[w] > 0) {
                        int r = use_add(u, su, &cap, p->node_name, 9 + w, NULL, nz[w]);
                        if (r < 0) return r;
                }
        int pr = use_add(u, su, &cap, p->node_name, 7, NULL, 1);
        _cleanup_free_ dp_host_port *hps = NULL;
        size_t n_hps = 0;
        if (pr >= 0) pr = dp_pod_host_ports(p, &hps, &n_hps);
        for (size_t i = 0; i < n_hps && pr >= 0; i++)
                pr = use_add(u, su, &cap, p->node_name, 8, &hps[i], 1);
        if (pr < 0) return pr;
        _cleanup_free_ ext_req *v = NULL;
        size_t n = 0;
        int re = pod_ext(p, &v, &n, NULL);
        if (re == -ENOMEM) return re;
        if (re < 0) return 0; /* the pod's own error: it is reported when it is scheduled */
        bool via_dra = p->extended_resource_claim_name != NULL;
        for (size_t i = 0; i < n; i++) {
                if (via_dra) { /* requests served by the claim do not count here */
                        bool mapped = false;
                        for (size_t m = 0; m < p->n_extended_resource_mappings; m++)
                                mapped |= streq_ptr(p->extended_resource_mappings[m].resource_name, v[i].name);
                        if (mapped) continue;
                }
                int r = use_add(u, su, &cap, p->node_name, 2, v[i].name, v[i].count);
                if (r < 0) return r;
        }
        return 0;
}

static int usage_sync(dp_sched *s) {
        sched_usage *u = s->usage;
        if (!u) {
                if (!(u = calloc(1, sizeof(*u))) || !(u->nodes = dp_hashmap_new())) {
                        free(u);
                        return -ENOMEM;
                }
                s->usage = u;
        }
        size_t slot, pos = u->pos;
        while (dp_store_next_change(s->store, &pos, &slot)) {
                int r = slot_changed(u, s->store, slot);
                if (r < 0) {
                        dp_sched_usage_free(s);
                        return r;
                }
        }
        if (pos == SIZE_MAX) { /* the log was lost: count everything again */
                dp_sched_usage_free(s);
                if (!(u = calloc(1, sizeof(*u))) || !(u->nodes = dp_hashmap_new())) {
                        free(u);
                        return -ENOMEM;
                }
                s->usage = u;
                for (size_t i = 0; i < dp_store_slots(s->store); i++) {
                        int r = slot_changed(u, s->store, i);
                        if (r < 0) {
                                dp_sched_usage_free(s);
                                return r;
                        }
                }
        }
        u->pos = dp_store_changes_end(s->store);
        return 0;
}

static int cmp_node_name(const void *a, const void *b) {
        return strcmp((*(const dp_node *const *)a)->meta.name, (*(const dp_node *const *)b)->meta.name);
}

/* Table node j's images into u->images (names are the nodes' strings). */
static int images_add(sched_usage *u, const dp_node *nd, size_t j) {
        if (!nd->n_images) return 0;
        if (!u->images && !(u->images = dp_hashmap_new())) return -ENOMEM;
        for (size_t i = 0; i < nd->n_images; i++)
                for (size_t k = 0; k < nd->images[i].n_names; k++) {
                        const char *name = nd->images[i].names[k];
                        image_ent *e = dp_hashmap_get(u->images, name);
                        if (!e) {
                                if (!(e = calloc(1, sizeof(*e)))) return -ENOMEM;
                                e->size = nd->images[i].size_bytes;
                                if (dp_hashmap_put(u->images, name, e) < 0) {
                                        free(e);
                                        return -ENOMEM;
                                }
                        }
                        if (e->n && e->nodes[e->n - 1] == j) continue; /* listed twice on this node */
                        if (DP_GROW(e->nodes, e->cap, e->n + 1) < 0) return -ENOMEM;
                        e->nodes[e->n++] = (uint32_t)j;
                }
        return 0;
}

/* The node table (sched_usage.tab) as of now; after usage_sync. */
static int nodes_sync(dp_sched *s) {
        sched_usage *u = s->usage;
        bool rebuild = !u->tab_ok;
        size_t pos = u->tab_pos, slot;
        while (!rebuild && dp_store_next_change(s->store, &pos, &slot))
                rebuild = dp_store_slot(s->store, slot, NULL, NULL) == DP_KIND_NODE;
        if (pos == SIZE_MAX) rebuild = true;
        if (rebuild) {
                u->tab_ok = false;
                u->any_prefer_taint = false;
                tab_info_free(u);
                size_t n = dp_store_count(s->store, DP_KIND_NODE), i = 0, k = 0;
                const dp_node **tab = calloc(n + 1, sizeof(*tab));
                node_use **use = calloc(n + 1, sizeof(*use));
                node_info *info = calloc(n + 1, sizeof(*info));
                u->tab_key = malloc((n + 1) * sizeof(*u->tab_key));
                u->tab_cand = malloc((n + 1) * sizeof(*u->tab_cand));
                u->tab_names = dp_hashmap_new();
                if (!tab || !use || !info || !u->tab_key || !u->tab_cand || !u->tab_names) {
                        free(tab);
                        free(use);
                        free(info);
                        return -ENOMEM; /* the scratch goes with the next rebuild */
                }
                free(u->tab);
                free(u->tab_use);
                u->tab = tab;
                u->tab_use = use;
                u->tab_info = info;
                dp_object o;
                while (k < n && dp_store_next(s->store, DP_KIND_NODE, &i, &o, NULL))
                        tab[k++] = o.node;
                u->n_tab = k;
                qsort(tab, k, sizeof(*tab), cmp_node_name);
                size_t it = 0;
                void *v;
                while (dp_hashmap_iter(u->nodes, &it, NULL, &v))
                        ((node_use *)v)->tab_idx = -1;
                for (size_t j = 0; j < k; j++) {
                        if (!(use[j] = node_use_get(u, tab[j]->meta.name, true))) return -ENOMEM;
                        use[j]->tab_idx = (int64_t)j;
                        const dp_node *nd = tab[j];
                        if (!(info[j].alloc = calloc(nd->n_allocatable + 1, sizeof(alloc_ent)))) return -ENOMEM;
                        info[j].n_alloc = nd->n_allocatable;
                        for (size_t a = 0; a < nd->n_allocatable; a++) {
                                alloc_ent *ae = &info[j].alloc[a];
                                ae->name = nd->allocatable[a].name;
                                ae->use_idx = -1;
                                uintptr_t id = (uintptr_t)dp_hashmap_get(u->tab_names, ae->name);
                                if (!id) {
                                        id = dp_hashmap_size(u->tab_names) + 1;
                                        if (dp_hashmap_put(u->tab_names, ae->name, (void *)id) < 0) return -ENOMEM;
                                }
                                ae->name_id = (int32_t)(id - 1);
                                ae->value = dp_quantity_value(&nd->allocatable[a].value);
                                ae->ext = dp_is_extended_resource_name(ae->name);
                                if (ae->ext) info[j].ext_total += ae->value;
                        }
                        for (int kk = 0; kk < NATIVE_N; kk++)
                                info[j].native[kk] = node_native(nd, kk);
                        info[j].unschedulable = nd->unschedulable;
                        info[j].max_pods = node_max_pods(nd);
                        info[j].tainted = nd->n_taints > 0;
                        for (size_t t = 0; t < nd->n_taints; t++)
                                info[j].prefer_taints += streq_ptr(nd->taints[t].effect, "PreferNoSchedule");
                        u->any_prefer_taint |= info[j].prefer_taints > 0;
                        if (images_add(u, nd, j) < 0) return -ENOMEM;
                }
                u->tab_gen = ++s->nodes_gen;
                u->tab_ok = true;
        }
        u->tab_pos = dp_store_changes_end(s->store);
        return 0;
}

/* What pods bound to (or assumed on) `node` hold of `name` via device
 * plugins; nu: the node's counters when the caller has them (else looked up). */
static int64_t ext_used_nu_or(const dp_sched *s, node_use *nu, const char *node, const char *name) {
        int64_t used = 0;
        if (!nu) nu = dp_hashmap_get(s->usage->nodes, node);
        ext_use *e = nu ? node_ext(nu, name, false) : NULL;
        if (e) used = e->count;
        for (size_t a = 0; a < s->n_assumed; a++) {
                const dp_sched_plan *pl = s->assumed[a];
                if (!streq(pl->node, node)) continue;
                for (size_t k = 0; k < pl->n_ext; k++)
                        if (streq(pl->ext[k].name, name)) used += pl->ext[k].count;
        }
        return used;
}

static int64_t ext_used(const dp_sched *s, const char *node, const char *name) {
        return ext_used_nu_or(s, NULL, node, name);
}

/* What pods bound to (or assumed on) the node hold of native resource k. */
static int64_t native_used(const dp_sched *s, const node_use *nu, const char *node, int k) {
        if (!nu) nu = dp_hashmap_get(s->usage->nodes, node);
        int64_t used = nu ? nu->native_used[k] : 0;
        for (size_t a = 0; a < s->n_assumed; a++)
                if (streq(s->assumed[a]->node, node)) used += s->assumed[a]->native[k];
        return used;
}

/* What pods bound to (or assumed on) the node hold of cpu (k 0) or memory
 * (k 1) as the scores count them. */
static int64_t nonzero_used(const dp_sched *s, const node_use *nu, const char *node, int k) {
        if (!nu) nu = dp_hashmap_get(s->usage->nodes, node);
        int64_t used = nu ? nu->nonzero_used[k] : 0;
        for (size_t a = 0; a < s->n_assumed; a++)
                if (streq(s->assumed[a]->node, node)) used += s->assumed[a]->nonzero[k];
        return used;
}

/* ---- the claim the scheduler creates for extended resources backed by DRA ---- */

static dp_resource_claim *ext_claim_new(const dp_pod *p, const char *ns, const ext_req *v, size_t n,
                                        const bool *via_dra) {
        dp_resource_claim *c = calloc(1, sizeof(*c));
        if (!c) return NULL;
        c->hdr.kind = DP_KIND_RESOURCE_CLAIM;
        c->hdr.api_version = dp_strdup("resource.k8s.io/v1");
        c->hdr.source = dp_strdup("scheduler");
        c->meta.name = dp_asprintf("%s-extended-resources", p->meta.name);
        c->meta.namespace = dp_strdup(ns);
        c->meta.annotations = calloc(1, sizeof(dp_kv));
        c->meta.owner_references = calloc(1, sizeof(dp_owner_ref));
        if (!c->hdr.api_version || !c->hdr.source || !c->meta.name || !c->meta.namespace || !c->meta.annotations ||
            !c->meta.owner_references)
                return dp_resource_claim_free(c);
        c->meta.n_annotations = 1;
        c->meta.annotations[0].key = dp_strdup(EXT_CLAIM_ANNOTATION);
        c->meta.annotations[0].value = dp_strdup("true");
        c->meta.n_owner_references = 1;
        dp_owner_ref *o = &c->meta.owner_references[0];
        o->api_version = dp_strdup("v1");
        o->kind = dp_strdup("Pod");
        o->name = dp_strdup(p->meta.name);
        o->controller = true;
        if (!c->meta.annotations[0].key || !c->meta.annotations[0].value || !o->api_version || !o->kind || !o->name)
                return dp_resource_claim_free(c);
        /* one request per (container, resource), as upstream names them */
        size_t total = 0;
        for (size_t ci = 0; ci < p->n_containers; ci++)
                total += n;
        c->spec.requests = calloc(total ? total : 1, sizeof(*c->spec.requests));
        if (!c->spec.requests) return dp_resource_claim_free(c);
        for (size_t ci = 0; ci < p->n_containers; ci++) {
                const dp_container *ct = &p->containers[ci];
                for (size_t k = 0; k < n; k++) {
                        if (!via_dra[k]) continue;
                        int64_t cnt = 0;
                        if (container_ext(ct, v[k].name, &cnt, NULL) < 0 || cnt <= 0) continue;
                        dp_device_request *rq = &c->spec.requests[c->spec.n_requests];
                        rq->name = dp_asprintf("container-%zu-request-%zu", ci, k);
                        rq->exactly = calloc(1, sizeof(*rq->exactly));
                        c->spec.n_requests++;
                        if (!rq->name || !rq->exactly) return dp_resource_claim_free(c);
                        rq->exactly->device_class_name = dp_strdup(v[k].class_name);
                        rq->exactly->count = cnt;
                        if (!rq->exactly->device_class_name) return dp_resource_claim_free(c);
                }
        }
        return c;
}

/* ---- plan ---- */

dp_sched_plan *dp_sched_plan_free(dp_sched_plan *p) {
        if (!p) return NULL;
        free(p->pod_uid);
        free(p->node);
        for (size_t i = 0; i < p->n_ext; i++)
                free(p->ext[i].name);
        free(p->ext);
        for (size_t i = 0; i < p->n_claims; i++) {
                free(p->claims[i].ns);
                free(p->claims[i].name);
                dp_allocation_result_free(p->claims[i].alloc);
                dp_resource_claim_free(p->claims[i].create);
                dp_resource_claim_free(p->claims[i].assumed);
        }
        free(p->claims);
        free(p->ext_claim_name);
        free(p);
        return NULL;
}

const char *dp_sched_plan_node(const dp_sched_plan *p) { return p->node; }

const char *dp_sched_plan_pod_key(const dp_sched_plan *p) { return p->q->key; }

typedef struct pod_claim_ref {
        const dp_resource_claim *claim; /* as the view has it */
        uint64_t rv;
        size_t prep; /* dra handle when unallocated */
} pod_claim_ref;

/* Claims in the view: store claims, with assumed ones (gang) in their place. */
static int build_view(dp_sched *s, dp_object_list *view) {
        static const dp_kind kinds[] = {DP_KIND_RESOURCE_SLICE, DP_KIND_DEVICE_CLASS,      DP_KIND_NODE,
                                        DP_KIND_NAMESPACE,      DP_KIND_DEVICE_TAINT_RULE, DP_KIND_RESOURCE_CLAIM};
        int r = dp_store_view(s->store, kinds, ELEMENTSOF(kinds), view);
        if (r < 0) return r;
        for (size_t a = 0; a < s->n_assumed; a++) {
                dp_sched_plan *pl = s->assumed[a];
                for (size_t k = 0; k < pl->n_claims; k++) {
                        plan_claim *pc = &pl->claims[k];
                        if (!pc->assumed) continue;
                        bool replaced = false;
                        for (size_t i = 0; i < view->n; i++) {
                                dp_object o = view->items[i];
                                if (o.hdr->kind == DP_KIND_RESOURCE_CLAIM && streq(o.claim->meta.name, pc->name) &&
                                    streq(dp_store_ns_of(o), pc->ns)) {
                                        view->items[i].claim = pc->assumed;
                                        replaced = true;
                                }
                        }
                        if (!replaced) {
                                if (DP_GROW(view->items, view->cap, view->n + 1) < 0) return -ENOMEM;
                                view->items[view->n++].claim = pc->assumed;
                        }
                }
        }
        return 0;
}

static const dp_resource_claim *view_claim(const dp_object_list *view, const char *ns, const char *name) {
        for (size_t i = 0; i < view->n; i++) {
                dp_object o = view->items[i];
                if (o.hdr->kind == DP_KIND_RESOURCE_CLAIM && streq(o.claim->meta.name, name) &&
                    streq(dp_store_ns_of(o), ns))
                        return o.claim;
        }
        return NULL;
}

/* Per-node device totals and use, for binpack/spread. */
static void node_fill(const dp_sched *s, const dp_object_list *view, const dp_node *n, const ext_req *ext, size_t n_ext,
                      int64_t *ret_total, int64_t *ret_used) {
        int64_t total = 0, used = 0;
        for (size_t i = 0; i < n->n_allocatable; i++)
                if (dp_is_extended_resource_name(n->allocatable[i].name)) {
                        total += dp_quantity_value(&n->allocatable[i].value);
                        used += ext_used(s, n->meta.name, n->allocatable[i].name);
                }
        (void)ext;
        (void)n_ext;
        if (s->n_assumed == 0) { /* the view is the store's: the counters have it */
                const node_use *nu = dp_hashmap_get(s->usage->nodes, n->meta.name);
                *ret_total = total + (nu ? nu->slice_devs : 0);
                *ret_used = used + (nu ? nu->claim_used : 0);
                return;
        }
        for (size_t i = 0; i < view->n; i++) {
                dp_object o = view->items[i];
                if (o.hdr->kind == DP_KIND_RESOURCE_SLICE && streq_ptr(o.slice->node_name, n->meta.name))
                        total += (int64_t)o.slice->n_devices;
                if (o.hdr->kind == DP_KIND_RESOURCE_CLAIM && o.claim->allocation) {
                        const dp_allocation_result *a = o.claim->allocation;
                        for (size_t k = 0; k < a->n_results; k++)
                                if (streq_ptr(a->results[k].pool, n->meta.name)) used++;
                }
        }
        *ret_total = total;
        *ret_used = used;
}

static void set_pod_message(qpod *q, const char *msg) {
        dp_sched_info_clear_reasons(&q->info);
        free(q->info.message);
        q->info.message = dp_strdup(msg);
        q->info.state = DP_POD_UNSCHEDULABLE;
}

typedef struct feas_ent {
        uint32_t ni;
        int64_t base, sub;
} feas_ent;

typedef struct cycle {
        dp_sched *s;
        qpod *q;
        const dp_pod *pod;
        uint64_t pod_rv;
        dp_object_list view;
        dp_sched_dra *dra;
        bool dra_kept; /* the scheduler's s->dra, not this cycle's own */
        pod_claim_ref *claims;
        size_t n_claims;
        ext_req *ext;
        size_t n_ext;
        int64_t native[NATIVE_N]; /* cpu (millicores), memory, ephemeral-storage (bytes) requested */
        size_t ext_prep[2];       /* DRA handles of the created claim, for each "mix" */
        dp_resource_claim *ext_claim[2];
        /* best so far */
        char *best_node;
        int64_t best_key[2];
        dp_allocation_result **best_allocs;
        size_t best_n_allocs;
        size_t best_idx[34]; /* the DRA handles tried on best_node */
        bool best_via_dra[32];
        bool quiet;        /* a pass that only looks for the best node: no reasons */
        dp_diag_hist hist; /* the attempt's verdicts, counted */
        /* the fast pass found no node: its memo says where the claims
         * failed, so the reasons need not ask the allocator again */
        const struct dp_sched_dra_memo *none_memo;
        const char *last_arg; /* verdict(): the last argument interned, and its id */
        uint32_t last_id;
        struct score_cache *none_sc; /* the fast pass's cache for the shape (FAST_NONE) */
        uint64_t *rec;               /* verdict(): record here instead of counting */
        /* queue, ports, defaults (kube-scheduler parity) */
        bool rec_multi;      /* a node gave several reasons while recording one (rec) */
        dp_host_port *ports; /* the pod's host ports */
        size_t n_ports;
        sched_verdicts *verdicts; /* dp_sched_diagnose: every node's verdict instead */
        dp_topo_state *topo;      /* PodTopologySpread and InterPodAffinity's PreFilter; NULL: skip */
        /* preemption (preempt.c): the node of `wi` seen with its pods
         * changed; unres: a verdict since it was cleared is one preemption
         * cannot help (UnschedulableAndUnresolvable); node_unres: that, per
         * table node, from the reasons pass (NULL: not wanted) */
        const sched_whatif *wi;
        bool unres;
        uint8_t *node_unres;
        /* DP_SCORE_DEFAULT (score.h): the pod's non-zero cpu and memory, and
         * the feasible nodes of the quiet pass with their NodeResourcesFit +
         * BalancedAllocation total (feas_base) and DRA subrequest sum */
        int64_t nonzero[2], nonzero_bound[2]; /* as scored; as it will count once bound */
        bool best_effort; /* BalancedAllocation skips the pod */
        struct feas_ent *feas;
        size_t n_feas, cap_feas;
        size_t n_fit; /* nodes that took the pod (percentageOfNodesToScore stops at enough) */
} cycle;

/* Node n does not take the pod: count why (or, diagnosing, keep it with
 * the allocator's detail). 0, or -ENOMEM. */
static int verdict(cycle *c, const dp_node *n, dp_verdict_code code, const char *arg, const char *detail) {
        if (dp_verdict_unresolvable(code, c->s->dra_preemption)) c->unres = true;
        if (c->quiet) return 0;
        int64_t id = 0;
        if (arg && arg == c->last_arg) /* the same string as the last node's: no lookup */
                id = c->last_id;
        else if ((id = dp_diag_intern(&c->s->strings, arg)) < 0)
                return -ENOMEM;
        else if (code == DP_VERDICT_INSUFFICIENT || code == DP_VERDICT_CLAIM_UNREACHABLE) {
                c->last_arg = arg; /* a name the cycle holds, not a scratch buffer */
                c->last_id = (uint32_t)id;
        }
        if (c->rec) {
                *c->rec = (uint64_t)code << 32 | (uint32_t)id;
                return 0;
        }
        if (!c->verdicts) return dp_diag_hist_add(&c->hist, code, (uint32_t)id);
        sched_verdicts *v = c->verdicts;
        if (DP_GROW(v->v, v->cap, v->n + 1) < 0) return -ENOMEM;
        dp_sched_node_verdict *nv = &v->v[v->n];
        *nv = (dp_sched_node_verdict){n->meta.name, code, dp_diag_string(&c->s->strings, (uint32_t)id), NULL};
        if (detail && detail[0] && !(nv->detail = dp_strdup(detail))) return -ENOMEM;
        v->n++;
        return 0;
}

static void cycle_done(cycle *c) {
        if (c->dra_kept)
                dp_sched_dra_forget_claims(c->dra);
        else
                dp_sched_dra_free(c->dra);
        dp_store_view_free(&c->view);
        free(c->claims);
        free(c->ext);
        free(c->ports);
        for (int i = 0; i < 2; i++)
                dp_resource_claim_free(c->ext_claim[i]);
        free(c->best_node);
        for (size_t i = 0; i < c->best_n_allocs; i++)
                dp_allocation_result_free(c->best_allocs ? c->best_allocs[i] : NULL);
        free(c->best_allocs);
        dp_diag_hist_clear(&c->hist);
        dp_topo_state_free(c->topo);
        free(c->node_unres);
        free(c->feas);
}

static bool snapshot_kind(dp_kind k) {
        return k == DP_KIND_RESOURCE_SLICE || k == DP_KIND_DEVICE_CLASS || k == DP_KIND_NODE ||
               k == DP_KIND_NAMESPACE || k == DP_KIND_DEVICE_TAINT_RULE;
}

/* Bring the kept snapshot up to the store: claims that changed are marked
 * again; a change to anything else it was built from builds a new one. */
static int sync_dra(dp_sched *s, dp_error *err) {
        const dp_store *st = s->store;
        if (s->dra) {
                size_t pos = s->dra_pos, slot;
                bool rebuild = false;
                while (!rebuild && dp_store_next_change(st, &pos, &slot))
                        rebuild = snapshot_kind(dp_store_slot(st, slot, NULL, NULL));
                if (rebuild || pos == SIZE_MAX)
                        s->dra = dp_sched_dra_free(s->dra);
                else {
                        pos = s->dra_pos;
                        while (dp_store_next_change(st, &pos, &slot)) {
                                if (dp_store_slot(st, slot, NULL, NULL) != DP_KIND_RESOURCE_CLAIM) continue;
                                int r = dp_sched_dra_claim_changed(s->dra, st, slot);
                                if (r < 0) {
                                        s->dra = dp_sched_dra_free(s->dra);
                                        return r;
                                }
                        }
                }
        }
        if (!s->dra) {
                int r = dp_sched_dra_new_store(st, &s->alloc_opts, &s->dra, err);
                if (r < 0) return r;
                s->dra_gen++;
        }
        s->dra_pos = dp_store_changes_end(st);
        return 0;
}

/* The allocator's snapshot on first need: pods without claims or
 * DRA-backed extended resources never pay for it. Outside gangs it is the
 * scheduler's kept one; while gang members are assumed (their claims exist
 * only in this cycle's view) a fresh one from the view. */
static int ensure_dra(cycle *c, dp_error *err) {
        if (c->dra) return 0;
        if (c->s->n_assumed > 0) return dp_sched_dra_new(&c->view, &c->s->alloc_opts, &c->dra, err);
        int r = sync_dra(c->s, err);
        if (r < 0) return r;
        c->dra = c->s->dra;
        c->dra_kept = true;
        return 0;
}

/* Resolve the pod's claims; 0 with a pod-level message when one is missing. */
static int resolve_claims(cycle *c, dp_error *err) {
        const dp_pod *p = c->pod;
        c->claims = calloc(p->n_resource_claims + 1, sizeof(*c->claims));
        if (!c->claims) return -ENOMEM;
        for (size_t i = 0; i < p->n_resource_claims; i++) {
                const char *cn = dp_sched_pod_claim_name(p, &p->resource_claims[i]);
                if (!cn) {
                        char m[512];
                        dp_fmt(m, sizeof(m), "waiting for resource claim of %s to be created from template %s",
                               p->resource_claims[i].name, p->resource_claims[i].resource_claim_template_name);
                        set_pod_message(c->q, m);
                        return 0;
                }
                uint64_t rv = 0;
                const dp_resource_claim *sc =
                        dp_store_get(c->s->store, DP_KIND_RESOURCE_CLAIM, c->q->ns, cn, &rv).claim;
                /* outside gangs the view is the store */
                const dp_resource_claim *cl = c->s->n_assumed ? view_claim(&c->view, c->q->ns, cn) : sc;
                if (!cl || !sc) {
                        char m[512];
                        dp_fmt(m, sizeof(m), "resourceclaim \"%s\" not found", cn);
                        set_pod_message(c->q, m);
                        return 0;
                }
                pod_claim_ref *ref = &c->claims[c->n_claims++];
                ref->claim = cl;
                ref->rv = rv;
                if (!cl->allocation) {
                        int r = ensure_dra(c, err);
                        if (r >= 0) r = dp_sched_dra_prepare(c->dra, cl, &ref->prep, err);
                        if (r < 0) return dp_fmt_prefix(err, r, "ResourceClaim %s/%s", c->q->ns, cn);
                }
        }
        return 1;
}

static bool alloc_reachable(const dp_allocation_result *a, const dp_node *n) {
        return selector_matches(a->node_selector, n);
}

/* ---- preemption's what-if (preempt.c): pods taken away from one node
 * (victims) and pods added to it (nominated pods), counted on top of
 * what the node's counters hold ---- */

static const sched_whatif *whatif_on(const cycle *c, const char *node) {
        return c->wi && streq(c->wi->node, node) ? c->wi : NULL;
}

static int64_t whatif_native(const sched_whatif *w, int k) {
        int64_t d = 0, v[NATIVE_N];
        for (size_t i = 0; w && i < w->n_gone + w->n_extra; i++) {
                pod_native(i < w->n_gone ? w->gone[i] : w->extra[i - w->n_gone], v);
                d += i < w->n_gone ? -v[k] : v[k];
        }
        return d;
}

static int64_t whatif_ext(const sched_whatif *w, const char *name) {
        int64_t d = 0;
        for (size_t i = 0; w && i < w->n_gone + w->n_extra; i++)
                d += i < w->n_gone ? -pod_ext_count(w->gone[i], name) : pod_ext_count(w->extra[i - w->n_gone], name);
        return d;
}

/* Whether a port in use by a pod the what-if takes away, or added by one
 * it adds or gives back, takes `want`: -1 a gone pod held a port `used`
 * stands for (that many times, *ret_gone), 1 an added or given-back pod's
 * conflicts, 0 neither. */
static int whatif_ports(const sched_whatif *w, const dp_host_port *want, const char *used_key, int64_t *ret_gone) {
        *ret_gone = 0;
        for (size_t i = 0; w && i < w->n_gone + w->n_extra + w->n_back; i++) {
                const dp_pod *p = i < w->n_gone                ? w->gone[i]
                                  : i < w->n_gone + w->n_extra ? w->extra[i - w->n_gone]
                                                               : w->back[i - w->n_gone - w->n_extra];
                _cleanup_free_ dp_host_port *v = NULL;
                size_t n = 0;
                if (dp_pod_host_ports(p, &v, &n) < 0) continue;
                for (size_t k = 0; k < n; k++) {
                        char key[80];
                        dp_host_port_key(&v[k], key, sizeof(key));
                        if (i < w->n_gone && used_key && streq(key, used_key)) ++*ret_gone;
                        if (i >= w->n_gone && !used_key && dp_host_ports_conflict(want, &v[k])) return 1;
                }
        }
        return *ret_gone ? -1 : 0;
}

/* Pods bound to (or assumed on) the node. */
static int64_t pods_on(const dp_sched *s, const node_use *nu, const char *node) {
        if (!nu) nu = dp_hashmap_get(s->usage->nodes, node);
        int64_t n = nu ? nu->pods_used : 0;
        for (size_t a = 0; a < s->n_assumed; a++)
                n += streq(s->assumed[a]->node, node);
        return n;
}

/* NodePorts: none of the pod's host ports is taken on the node by a bound
 * (or assumed) pod. */
static bool ports_free(const cycle *c, const node_use *nu, const char *node) {
        const dp_sched *s = c->s;
        if (!nu) nu = dp_hashmap_get(s->usage->nodes, node);
        const sched_whatif *wi = whatif_on(c, node);
        for (size_t w = 0; w < c->n_ports; w++) {
                int64_t gone = 0;
                if (wi && whatif_ports(wi, &c->ports[w], NULL, &gone) > 0) return false;
                for (size_t k = 0; nu && k < nu->n_ports; k++) {
                        /* kube-scheduler's node keeps used ports as a set: a pod taken
                         * away frees its (ip, protocol, port) even where another pod
                         * holds it too */
                        if (wi) whatif_ports(wi, &c->ports[w], nu->ports[k]->key, &gone);
                        if (!gone && nu->ports[k]->count > 0 && dp_host_ports_conflict(&c->ports[w], &nu->ports[k]->hp))
                                return false;
                }
                for (size_t a = 0; a < s->n_assumed; a++) {
                        if (!streq(s->assumed[a]->node, node)) continue;
                        dp_object po =
                                dp_store_get(s->store, DP_KIND_POD, s->assumed[a]->q->ns, s->assumed[a]->q->name, NULL);
                        _cleanup_free_ dp_host_port *v = NULL;
                        size_t n = 0;
                        if (!po.hdr || dp_pod_host_ports(po.pod, &v, &n) < 0) continue;
                        for (size_t k = 0; k < n; k++)
                                if (dp_host_ports_conflict(&c->ports[w], &v[k])) return false;
                }
        }
        return true;
}

/* NodeResourcesFit: every resource that does not fit is a reason of its
 * own (kube-scheduler counts each): pods, cpu, memory, each extended
 * resource a device plugin serves. 1 fits (*ret_units: the extended
 * resources' units), 0 not (reasons counted), <0 error. */
static int resources_fit(cycle *c, const dp_node *n, node_use *nu, bool via_dra[32], bool *ret_any_dra,
                         int64_t *ret_units) {
        const char *nn = n->meta.name;
        int bad = 0, r = 0;
        int64_t max_pods = node_max_pods(n);
        const sched_whatif *wi = whatif_on(c, nn);
        int64_t wi_pods = wi ? (int64_t)wi->n_extra - (int64_t)wi->n_gone : 0;
        if (max_pods >= 0 && pods_on(c->s, nu, nn) + wi_pods + 1 > max_pods) {
                bad++;
                r = verdict(c, n, DP_VERDICT_TOO_MANY_PODS, NULL, NULL);
        }
        for (int k = 0; k < NATIVE_N && r >= 0; k++)
                if (c->native[k] > 0 &&
                    c->native[k] > node_native(n, k) - native_used(c->s, nu, nn, k) - whatif_native(wi, k)) {
                        bad++;
                        c->unres |= c->native[k] > node_native(n, k); /* more than the node has */
                        r = k == 0   ? verdict(c, n, DP_VERDICT_INSUFFICIENT_CPU, NULL, NULL)
                            : k == 1 ? verdict(c, n, DP_VERDICT_INSUFFICIENT_MEMORY, NULL, NULL)
                                     : verdict(c, n, DP_VERDICT_INSUFFICIENT, native_names[k], NULL);
                }
        int64_t units = 0;
        for (size_t k = 0; k < c->n_ext && k < 32 && r >= 0; k++) {
                const ext_req *e = &c->ext[k];
                const dp_named_quantity *a = node_alloc(n, e->name);
                via_dra[k] = false;
                if (!a || dp_quantity_value(&a->value) == 0) {
                        bool cap = false;
                        for (size_t i = 0; i < n->n_capacity; i++)
                                cap |= streq(n->capacity[i].name, e->name);
                        if (e->class_name && !cap) {
                                via_dra[k] = *ret_any_dra = true;
                                continue;
                        }
                }
                int64_t alloc = a ? dp_quantity_value(&a->value) : 0;
                if (e->count > alloc - ext_used_nu_or(c->s, nu, nn, e->name) - whatif_ext(wi, e->name)) {
                        bad++;
                        c->unres |= e->count > alloc;
                        r = verdict(c, n, DP_VERDICT_INSUFFICIENT, e->name, NULL);
                }
                units += e->count;
        }
        if (r < 0) return r;
        if (bad > 1 && c->rec) c->rec_multi = true; /* one verdict per node cannot hold these */
        *ret_units = units;
        return bad ? 0 : 1;
}

/* ---- DP_SCORE_DEFAULT: NodeResourcesFit and BalancedAllocation (score.h) ---- */

/* The pod's request of one scored resource (cpu and memory non-zero or not). */
static int64_t pod_request_of(const cycle *c, const char *name, bool nonzero) {
        for (int k = 0; k < NATIVE_N; k++)
                if (streq(name, native_names[k])) return nonzero && k < 2 ? c->nonzero[k] : c->native[k];
        for (size_t k = 0; k < c->n_ext; k++)
                if (streq(c->ext[k].name, name)) return c->ext[k].count;
        return 0;
}

/* Allocatable and requested (the node's pods' plus the pod's) of one scored
 * resource, as resourceAllocationScorer reads them: cpu and memory non-zero
 * for NodeResourcesFit, actual for BalancedAllocation; an extended resource
 * the pod does not ask for is left out (0, 0). */
static void resource_pair(const cycle *c, const dp_node *n, node_use *nu, const char *name, bool nonzero,
                          const int64_t alloc[NATIVE_N], const int64_t used[NATIVE_N], const int64_t nz[2],
                          int64_t *ret_alloc, int64_t *ret_req) {
        int64_t want = pod_request_of(c, name, nonzero);
        *ret_alloc = *ret_req = 0;
        for (int k = 0; k < NATIVE_N; k++)
                if (streq(name, native_names[k])) {
                        *ret_alloc = alloc[k];
                        *ret_req = (nonzero && k < 2 ? nz[k] : used[k]) + want;
                        return;
                }
        if (want == 0 || !dp_is_extended_resource_name(name)) return;
        const dp_named_quantity *a = node_alloc(n, name);
        if (!a) return;
        *ret_alloc = dp_quantity_value(&a->value);
        *ret_req = ext_used_nu_or(c->s, nu, n->meta.name, name) + want;
}

/* Both plugins' scores, weighted, for the pod on node n. */
static int64_t default_base(const cycle *c, const dp_node *n, node_use *nu, const int64_t alloc[NATIVE_N],
                            const int64_t used[NATIVE_N], const int64_t nz[2]) {
        const dp_score_profile *p = &c->s->profile;
        int64_t total = 0, req[DP_SCORE_RESOURCES_MAX], al[DP_SCORE_RESOURCES_MAX];
        if (p->weight[DP_PLUGIN_FIT]) {
                for (size_t i = 0; i < p->n_fit; i++)
                        resource_pair(c, n, nu, p->fit[i].name, true, alloc, used, nz, &al[i], &req[i]);
                total += p->weight[DP_PLUGIN_FIT] * dp_score_fit(p, req, al);
        }
        if (p->weight[DP_PLUGIN_BALANCED] && !c->best_effort) {
                for (size_t i = 0; i < p->n_balanced; i++)
                        resource_pair(c, n, nu, p->balanced[i].name, false, alloc, used, nz, &al[i], &req[i]);
                total += p->weight[DP_PLUGIN_BALANCED] * dp_score_balanced(req, al, p->n_balanced);
        }
        return total;
}

/* The cycle's part of the scores that needs nothing but the pod. */
static void default_prescore(cycle *c) {
        const dp_score_profile *p = &c->s->profile;
        pod_nonzero(c->pod, false, c->nonzero);
        pod_nonzero(c->pod, true, c->nonzero_bound);
        c->best_effort = true;
        for (size_t i = 0; i < p->n_balanced; i++)
                c->best_effort &= pod_request_of(c, p->balanced[i].name, false) == 0;
}

static int feas_add(cycle *c, size_t ni, const int64_t key[2]) {
        if (DP_GROW(c->feas, c->cap_feas, c->n_feas + 1) < 0) return -ENOMEM;
        c->feas[c->n_feas++] = (feas_ent){(uint32_t)ni, key[1], -key[0]};
        return 0;
}

/* One node. Returns 1 feasible (key filled), 0 not (reason added unless
 * c->quiet), <0 error. */
static int try_node(cycle *c, const dp_node *n, size_t ni, int64_t key[2], dp_allocation_result ***ret_allocs,
                    size_t *ret_n_allocs, size_t ret_idx[34], bool via_dra[32], dp_error *err) {
        const char *nn = n->meta.name;
        /* the node's counters from the table (the loop walks it in order) */
        sched_usage *u = c->s->usage;
        node_use *nu = ni < u->n_tab && u->tab[ni] == n ? u->tab_use[ni] : NULL;
        if (n->unschedulable && !tolerates_unschedulable(c->pod))
                return verdict(c, n, DP_VERDICT_NODE_UNSCHEDULABLE, NULL, NULL);
        const dp_taint *t = untolerated_taint(n, c->pod);
        if (t) {
                if (c->quiet) return 0;
                char m[512];
                dp_fmt(m, sizeof(m), "{%s: %s}", t->key, t->value ? t->value : "");
                return verdict(c, n, DP_VERDICT_TAINT, m, NULL);
        }
        if (!node_affinity_ok(c->pod, n)) return verdict(c, n, DP_VERDICT_AFFINITY, NULL, NULL);
        if (c->n_ports && !ports_free(c, nu, nn)) return verdict(c, n, DP_VERDICT_NODE_PORTS, NULL, NULL);
        int64_t req_units = 0;
        bool any_dra_ext = false;
        int fit = resources_fit(c, n, nu, via_dra, &any_dra_ext, &req_units);
        if (fit <= 0) return fit;
        dp_verdict_code tv = c->topo ? dp_topo_filter(c->topo, ni) : DP_VERDICT_FIT;
        if (tv != DP_VERDICT_FIT) return verdict(c, n, tv, NULL, NULL);
        size_t idx[34], n_idx = 0;
        for (size_t i = 0; i < c->n_claims; i++) {
                const dp_resource_claim *cl = c->claims[i].claim;
                if (cl->allocation) {
                        if (!alloc_reachable(cl->allocation, n))
                                return verdict(c, n, DP_VERDICT_CLAIM_UNREACHABLE, cl->meta.name, NULL);
                } else if (n_idx < 32)
                        idx[n_idx++] = c->claims[i].prep;
        }
        int mix = -1;
        if (any_dra_ext) {
                /* mix 0: every DRA-capable resource through DRA; mix 1 is the
                 * same claim built for a node mixing both paths. */
                bool all = true;
                for (size_t k = 0; k < c->n_ext; k++)
                        all &= !c->ext[k].class_name || via_dra[k];
                mix = all ? 0 : 1;
                if (!c->ext_claim[mix]) {
                        c->ext_claim[mix] = ext_claim_new(c->pod, c->q->ns, c->ext, c->n_ext, via_dra);
                        if (!c->ext_claim[mix]) return -ENOMEM;
                        int r = ensure_dra(c, err);
                        if (r >= 0) r = dp_sched_dra_prepare(c->dra, c->ext_claim[mix], &c->ext_prep[mix], err);
                        if (r < 0) return r;
                }
                idx[n_idx++] = c->ext_prep[mix];
        }
        _cleanup_strbuf_ dp_strbuf why = DP_STRBUF_INIT;
        unsigned sub = 0;
        size_t units = 0;
        if (c->none_memo && !any_dra_ext && (c->none_memo->failed[ni / 64] >> (ni % 64) & 1))
                return verdict(c, n, DP_VERDICT_DRA, NULL, NULL);
        /* the allocator's detail only for a diagnosis: an attempt keeps counts */
        int r = dp_sched_dra_try_count(c->dra, nn, idx, n_idx, &sub, &units, c->verdicts ? &why : NULL, err);
        if (r < 0) return r;
        if (r == 0) {
                if (dp_strbuf_failed(&why)) return -ENOMEM;
                return verdict(c, n, DP_VERDICT_DRA, NULL, why.len ? dp_strbuf_str(&why) : NULL);
        }
        req_units += (int64_t)units;
        int64_t total, used;
        node_fill(c->s, &c->view, n, c->ext, c->n_ext, &total, &used);
        int64_t fill = total > 0 ? (used + req_units) * 1000 / total : 0;
        key[0] = -(int64_t)sub; /* lower subrequest index first */
        key[1] = c->s->policy == DP_SCORE_NONE ? 0 : c->s->policy == DP_SCORE_BINPACK ? fill : 1000 - fill;
        if (c->s->policy == DP_SCORE_DEFAULT) {
                int64_t al[NATIVE_N], us[NATIVE_N], nz[2];
                for (int k = 0; k < NATIVE_N; k++) {
                        al[k] = node_native(n, k);
                        us[k] = native_used(c->s, nu, nn, k);
                }
                for (int k = 0; k < 2; k++)
                        nz[k] = nonzero_used(c->s, nu, nn, k);
                key[1] = default_base(c, n, nu, al, us, nz);
        }
        *ret_allocs = NULL; /* built for the chosen node only (dp_sched_plan_one) */
        *ret_n_allocs = n_idx;
        memcpy(ret_idx, idx, n_idx * sizeof(*idx));
        return 1;
}

/* ---- preemption's hooks (preempt.c) ---- */

static int cycle_node(struct cycle *c, size_t ni, const sched_whatif *wi, dp_diag_hist *why, dp_error *err);

static const char *pod_ns(const dp_pod *p) {
        return p->meta.namespace && p->meta.namespace[0] ? p->meta.namespace : "default";
}

/* The what-if's pods into (sign 1) or out of (-1) the topology state, as
 * RemovePod/AddPod do. */
static int whatif_topo(cycle *c, const sched_whatif *w, int sign) {
        int r = 0;
        for (size_t i = 0; c->topo && i < w->n_gone && r >= 0; i++)
                r = dp_topo_update_pod(c->topo, w->gone[i], pod_ns(w->gone[i]), w->ni, -sign);
        for (size_t i = 0; c->topo && i < w->n_extra && r >= 0; i++)
                r = dp_topo_update_pod(c->topo, w->extra[i], pod_ns(w->extra[i]), w->ni, sign);
        return r;
}

/* try_node with the node changed by w. */
static int try_node_whatif(cycle *c, const sched_whatif *w, const dp_node *n, size_t ni, int64_t key[2],
                           dp_allocation_result ***ret_allocs, size_t *ret_n_allocs, size_t ret_idx[34],
                           bool via_dra[32], dp_error *err) {
        int r = whatif_topo(c, w, 1);
        const sched_whatif *saved = c->wi;
        c->wi = w;
        if (r >= 0) r = try_node(c, n, ni, key, ret_allocs, ret_n_allocs, ret_idx, via_dra, err);
        c->wi = saved;
        int r2 = whatif_topo(c, w, -1);
        return r < 0 ? r : r2 < 0 ? r2 : r;
}

/* try_node as kube-scheduler's RunFilterPluginsWithNominatedPods: with
 * the pods nominated to the node that this pod must leave room for, then,
 * when that passes, without them (pod affinity may need them absent). */
static int try_node_nom(cycle *c, const dp_node *n, size_t ni, int64_t key[2], dp_allocation_result ***ret_allocs,
                        size_t *ret_n_allocs, size_t ret_idx[34], bool via_dra[32], dp_error *err) {
        const dp_pod **extra = NULL;
        size_t n_extra = 0;
        if (c->s->n_nominated && dp_sched_nominated_on(c->s, c->q, n->meta.name, &extra, &n_extra) < 0) return -ENOMEM;
        if (n_extra) {
                sched_whatif w = {.node = n->meta.name, .ni = ni, .extra = extra, .n_extra = n_extra};
                int r = try_node_whatif(c, &w, n, ni, key, ret_allocs, ret_n_allocs, ret_idx, via_dra, err);
                free(extra);
                if (r != 1) return r;
        }
        return try_node(c, n, ni, key, ret_allocs, ret_n_allocs, ret_idx, via_dra, err);
}

/* The table index of the node q's preemption nominated; nn when none. */
static size_t nominated_index(const qpod *q, const dp_node *const *nodes, size_t nn) {
        const char *want = q->info.nominated;
        size_t lo = 0, hi = nn;
        while (want && lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(nodes[mid]->meta.name, want);
                if (!c) return mid;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return nn;
}

/* --dra-preemption (KEP-5690 what-if): the allocator sees the devices of
 * the what-if's gone pods free. A snapshot of its own from the store, the
 * gone pods' claims unallocated, with the pod's claims prepared on it; put
 * in place of the cycle's for one try_node. */
typedef struct whatif_dra {
        dp_object_list view;
        dp_resource_claim **clones;
        size_t n_clones;
        dp_sched_dra *dra, *saved;
        size_t *saved_prep;
        const struct dp_sched_dra_memo *saved_memo;
        bool saved_kept, swapped;
} whatif_dra;

static bool gone_claim(const sched_whatif *w, const char *ns, const char *name) {
        for (size_t i = 0; i < w->n_gone; i++) {
                const dp_pod *p = w->gone[i];
                if (!streq(pod_ns(p), ns)) continue;
                if (streq_ptr(p->extended_resource_claim_name, name)) return true;
                for (size_t k = 0; k < p->n_resource_claims; k++)
                        if (streq_ptr(dp_sched_pod_claim_name(p, &p->resource_claims[k]), name)) return true;
        }
        return false;
}

static int whatif_dra_swap(cycle *c, const sched_whatif *w, whatif_dra *x, dp_error *err) {
        static const dp_kind kinds[] = {DP_KIND_RESOURCE_SLICE, DP_KIND_DEVICE_CLASS,      DP_KIND_NODE,
                                        DP_KIND_NAMESPACE,      DP_KIND_DEVICE_TAINT_RULE, DP_KIND_RESOURCE_CLAIM};
        int r = dp_store_view(c->s->store, kinds, ELEMENTSOF(kinds), &x->view);
        if (r >= 0 && !(x->clones = calloc(x->view.n + 1, sizeof(*x->clones)))) r = -ENOMEM;
        for (size_t i = 0; r >= 0 && i < x->view.n; i++) {
                dp_object o = x->view.items[i];
                if (o.hdr->kind != DP_KIND_RESOURCE_CLAIM || !o.claim->allocation ||
                    !gone_claim(w, dp_store_ns_of(o), o.claim->meta.name))
                        continue;
                dp_resource_claim tmp = *o.claim;
                tmp.allocation = NULL;
                if (!(x->clones[x->n_clones] = dp_resource_claim_clone(&tmp)))
                        r = -ENOMEM;
                else
                        x->view.items[i].claim = x->clones[x->n_clones++];
        }
        if (r >= 0) r = dp_sched_dra_new(&x->view, &c->s->alloc_opts, &x->dra, err);
        if (r >= 0 && !(x->saved_prep = calloc(c->n_claims + 1, sizeof(*x->saved_prep)))) r = -ENOMEM;
        for (size_t i = 0; r >= 0 && i < c->n_claims; i++) {
                x->saved_prep[i] = c->claims[i].prep;
                if (!c->claims[i].claim->allocation)
                        r = dp_sched_dra_prepare(x->dra, c->claims[i].claim, &c->claims[i].prep, err);
        }
        if (r < 0) {
                for (size_t i = 0; x->saved_prep && i < c->n_claims; i++)
                        c->claims[i].prep = x->saved_prep[i];
                return r;
        }
        x->saved = c->dra;
        x->saved_kept = c->dra_kept;
        x->saved_memo = c->none_memo;
        c->dra = x->dra;
        c->dra_kept = false;
        c->none_memo = NULL;
        x->swapped = true;
        return 0;
}

static void whatif_dra_done(cycle *c, whatif_dra *x) {
        if (x->swapped) {
                c->dra = x->saved;
                c->dra_kept = x->saved_kept;
                c->none_memo = x->saved_memo;
                for (size_t i = 0; i < c->n_claims; i++)
                        c->claims[i].prep = x->saved_prep[i];
        }
        dp_sched_dra_free(x->dra);
        free(x->saved_prep);
        for (size_t i = 0; i < x->n_clones; i++)
                dp_resource_claim_free(x->clones[i]);
        free(x->clones);
        dp_store_view_free(&x->view);
}

int dp_sched_cycle_node(struct cycle *c, size_t ni, const sched_whatif *wi, dp_diag_hist *why, dp_error *err) {
        whatif_dra x = {0};
        bool unallocated = false, dra_ext = false;
        for (size_t i = 0; i < c->n_claims; i++)
                unallocated |= !c->claims[i].claim->allocation;
        for (size_t k = 0; k < c->n_ext; k++) /* its created claim is prepared on the cycle's snapshot only */
                dra_ext |= c->ext[k].class_name != NULL;
        if (c->s->dra_preemption && wi && wi->n_gone && unallocated && !dra_ext) {
                int r = whatif_dra_swap(c, wi, &x, err);
                if (r < 0) {
                        whatif_dra_done(c, &x);
                        return r;
                }
        }
        int r = cycle_node(c, ni, wi, why, err);
        whatif_dra_done(c, &x);
        return r;
}

static int cycle_node(struct cycle *c, size_t ni, const sched_whatif *wi, dp_diag_hist *why, dp_error *err) {
        const dp_node *n = c->s->usage->tab[ni];
        int64_t key[2];
        dp_allocation_result **allocs = NULL;
        size_t n_allocs = 0, idx[34];
        bool via[32] = {0};
        dp_diag_hist saved = c->hist;
        bool quiet = c->quiet;
        c->quiet = !why;
        if (why) c->hist = *why;
        int r = wi ? try_node_whatif(c, wi, n, ni, key, &allocs, &n_allocs, idx, via, err)
                   : try_node_nom(c, n, ni, key, &allocs, &n_allocs, idx, via, err);
        if (r == 1 && wi && wi->n_extra) { /* with nominated pods, then without */
                sched_whatif w2 = *wi;
                w2.n_extra = 0;
                r = try_node_whatif(c, &w2, n, ni, key, &allocs, &n_allocs, idx, via, err);
        }
        if (why) *why = c->hist;
        c->hist = saved;
        c->quiet = quiet;
        return r;
}

const dp_node *const *dp_sched_node_table(const dp_sched *s, size_t *ret_n) {
        *ret_n = s->usage ? s->usage->n_tab : 0;
        return s->usage ? s->usage->tab : NULL;
}

const dp_pod *dp_sched_cycle_pod(const struct cycle *c) { return c->pod; }

/* ---- the fast pass: the best node without looking at every node ----
 * When nothing decides the score but what the node already holds (no DRA
 * subrequest choice, the same device count wherever the claims fit, no
 * gang view, no extended resource backed by DRA) and no selector can fail
 * at run time, the best node is the first that fits in score order. The
 * filters before the allocator are try_node's, without reasons. */

enum { FAST_UNDECIDED = 0, FAST_WINNER, FAST_NONE };

static int64_t ext_used_nu(node_use *nu, const char *name) {
        ext_use *e = node_ext(nu, name, false);
        return e ? e->count : 0;
}

/* ext_used_nu for one of the node's allocatable resources. */
static int64_t alloc_used(alloc_ent *ae, const node_use *nu) {
        if (ae->use_idx < 0) {
                for (size_t k = 0; k < nu->n_ext && ae->use_idx < 0; k++)
                        if (streq(nu->ext[k].name, ae->name)) ae->use_idx = (int32_t)k;
                if (ae->use_idx < 0) return 0;
        }
        return nu->ext[ae->use_idx].count;
}

/* try_node's filters before the allocator, without reasons, and its fill. */
static bool prefilter(const cycle *c, const int32_t *ext_ids, const dp_node *n, node_info *ni, node_use *nu,
                      int64_t *ret_units) {
        if (ni->unschedulable && !tolerates_unschedulable(c->pod)) return false;
        if (ni->tainted && untolerated_taint(n, c->pod)) return false;
        if ((c->pod->n_node_selector || c->pod->required_node_affinity) && !node_affinity_ok(c->pod, n)) return false;
        if (c->n_ports && !ports_free(c, nu, n->meta.name)) return false;
        if (ni->max_pods >= 0 && nu->pods_used + 1 > ni->max_pods) return false;
        for (int k = 0; k < NATIVE_N; k++)
                if (c->native[k] > 0 && c->native[k] > ni->native[k] - nu->native_used[k]) return false;
        int64_t req = 0;
        for (size_t k = 0; k < c->n_ext && k < 32; k++) {
                const ext_req *e = &c->ext[k];
                alloc_ent *a = NULL; /* node_alloc: the first of that name */
                for (size_t i = 0; i < ni->n_alloc && !a && ext_ids[k] >= 0; i++)
                        if (ni->alloc[i].name_id == ext_ids[k]) a = &ni->alloc[i];
                int64_t alloc = a ? a->value : 0;
                if (e->count > alloc - (a ? alloc_used(a, nu) : ext_used_nu(nu, e->name))) return false;
                req += e->count;
        }
        for (size_t i = 0; i < c->n_claims; i++) {
                const dp_resource_claim *cl = c->claims[i].claim;
                if (cl->allocation && !alloc_reachable(cl->allocation, n)) return false;
        }
        *ret_units = req;
        return true;
}

/* node_fill without assumed pods (the fast pass has none). */
static int64_t fill_score(const dp_sched *s, node_info *ni, node_use *nu, int64_t req_units) {
        int64_t total = ni->ext_total, used = 0;
        for (size_t i = 0; i < ni->n_alloc; i++)
                if (ni->alloc[i].ext) used += alloc_used(&ni->alloc[i], nu);
        total += nu->slice_devs;
        used += nu->claim_used;
        int64_t fill = total > 0 ? (used + req_units) * 1000 / total : 0;
        return s->policy == DP_SCORE_NONE ? 0 : s->policy == DP_SCORE_BINPACK ? fill : 1000 - fill;
}

static int64_t node_score(const cycle *c, const int32_t *ext_ids, const dp_sched_dra_memo *memo, int64_t units,
                          size_t ni) {
        sched_usage *u = c->s->usage;
        if (memo && (memo->failed[ni / 64] >> (ni % 64) & 1)) return SCORE_OUT;
        int64_t req = 0;
        if (!prefilter(c, ext_ids, u->tab[ni], &u->tab_info[ni], u->tab_use[ni], &req)) return SCORE_OUT;
        if (c->s->policy == DP_SCORE_DEFAULT) {
                node_use *nu = u->tab_use[ni];
                return default_base(c, u->tab[ni], nu, u->tab_info[ni].native, nu->native_used, nu->nonzero_used);
        }
        return fill_score(c->s, &u->tab_info[ni], u->tab_use[ni], req + units);
}

/* The score cache for the pod's shape, when the scores depend on nothing
 * else of the pod (no tolerations, affinity or allocated claim; a
 * nodeSelector is part of the shape: the pods Kueue admits all carry their
 * flavor's labels). NULL: compute without one. */
static score_cache *cache_for(const cycle *c, const dp_sched_dra_memo *memo, int64_t units) {
        const dp_pod *p = c->pod;
        sched_usage *u = c->s->usage;
        if (p->required_node_affinity || c->n_ports || u->dirty_lost) return NULL;
        for (size_t i = 0; i < p->n_tolerations; i++) /* the API server's own two are in every pod alike */
                if (!dp_model_is_default_toleration(&p->tolerations[i])) return NULL;
        for (size_t i = 0; i < c->n_claims; i++)
                if (c->claims[i].claim->allocation) return NULL;
        _cleanup_strbuf_ dp_strbuf k = DP_STRBUF_INIT;
        dp_strbuf_printf(&k, "%zu\x1d", p->n_tolerations);
        for (size_t i = 0; i < c->n_ext && i < 32; i++)
                dp_strbuf_printf(&k, "%s\x1f%lld\x1e", c->ext[i].name, (long long)c->ext[i].count);
        dp_strbuf_printf(&k, "%lld,%lld,%lld,%p,%lld", (long long)c->native[0], (long long)c->native[1],
                         (long long)c->native[2], (const void *)memo, (long long)units);
        if (c->s->policy == DP_SCORE_DEFAULT) /* the scores' non-zero requests (containers naming none) */
                dp_strbuf_printf(&k, ",%lld,%lld", (long long)c->nonzero[0], (long long)c->nonzero[1]);
        for (size_t i = 0; i < p->n_node_selector; i++)
                dp_strbuf_printf(&k, "\x1c%s\x1f%s", p->node_selector[i].key,
                                 p->node_selector[i].value ? p->node_selector[i].value : "");
        if (dp_strbuf_failed(&k)) return NULL;
        if (!u->caches && !(u->caches = dp_hashmap_new())) return NULL;
        score_cache *sc = dp_hashmap_get(u->caches, dp_strbuf_str(&k));
        if (sc || dp_hashmap_size(u->caches) >= SCORE_CACHES_MAX) return sc;
        if (!(sc = calloc(1, sizeof(*sc)))) return NULL;
        sc->score = malloc((u->n_tab + 1) * sizeof(*sc->score));
        sc->key = dp_strbuf_steal(&k);
        if (!sc->score || !sc->key || dp_hashmap_put(u->caches, sc->key, sc) < 0) {
                free(sc->score);
                free(sc->key);
                free(sc);
                return NULL;
        }
        return sc;
}

/* TaintToleration's count: PreferNoSchedule taints no toleration of the
 * pod tolerates (those with another effect never match one). */
static int64_t intolerable_prefer(const dp_pod *p, const dp_node *n) {
        int64_t k = 0;
        for (size_t i = 0; i < n->n_taints; i++) {
                if (!streq_ptr(n->taints[i].effect, "PreferNoSchedule")) continue;
                bool ok = false;
                for (size_t t = 0; t < p->n_tolerations && !ok; t++)
                        ok = toleration_matches(&p->tolerations[t], &n->taints[i]);
                k += !ok;
        }
        return k;
}

/* ImageLocality (score.h): per table node, the pod's images the node lists,
 * each image's size times the share of nodes listing it, summed, then
 * scaled between 23 MiB and 1,000 MiB per container to 0..100. A pod's
 * image without a tag (none after the last '/') is looked up with
 * ":latest". Returns an array of n_tab scores (owned by the caller), or
 * NULL with *ret_err 0 when no node lists one of the pod's images. */
#define IMAGE_MIN_THRESHOLD (INT64_C(23) * 1024 * 1024)
#define IMAGE_MAX_CONTAINER_THRESHOLD (INT64_C(1000) * 1024 * 1024)

static void image_add(const sched_usage *u, const char *image, int64_t **sum, int *err) {
        char name[1024];
        if (!image || *err) return;
        const char *colon = strrchr(image, ':'), *slash = strrchr(image, '/');
        dp_fmt(name, sizeof(name), "%s%s", image, !colon || (slash && colon < slash) ? ":latest" : "");
        const image_ent *e = dp_hashmap_get(u->images, name);
        if (!e) return;
        if (!*sum && !(*sum = calloc(u->n_tab + 1, sizeof(**sum)))) {
                *err = -ENOMEM;
                return;
        }
        int64_t add = (int64_t)((double)e->size * ((double)e->n / (double)u->n_tab));
        for (size_t i = 0; i < e->n; i++)
                (*sum)[e->nodes[i]] += add;
}

static int64_t *image_scores(const cycle *c, int *ret_err) {
        const sched_usage *u = c->s->usage;
        const dp_pod *p = c->pod;
        int64_t *sum = NULL;
        *ret_err = 0;
        if (!u->images || !c->s->profile.weight[DP_PLUGIN_IMAGE]) return NULL;
        for (size_t i = 0; i < p->n_init_containers; i++)
                image_add(u, p->init_containers[i].image, &sum, ret_err);
        for (size_t i = 0; i < p->n_containers; i++)
                image_add(u, p->containers[i].image, &sum, ret_err);
        int64_t hi = IMAGE_MAX_CONTAINER_THRESHOLD * (int64_t)(p->n_init_containers + p->n_containers);
        for (size_t ni = 0; sum && ni < u->n_tab; ni++) {
                int64_t v = DP_MIN(DP_MAX(sum[ni], IMAGE_MIN_THRESHOLD), hi);
                sum[ni] = hi > IMAGE_MIN_THRESHOLD ? DP_SCORE_MAX_NODE * (v - IMAGE_MIN_THRESHOLD) / (hi - IMAGE_MIN_THRESHOLD) : 0;
        }
        return sum;
}

/* NodeAffinity's score: the weights of the preferred terms the node matches. */
static int64_t preferred_affinity(const dp_pod *p, const dp_node *n) {
        int64_t k = 0;
        for (size_t i = 0; i < p->n_preferred_node_affinity; i++)
                if (term_matches(&p->preferred_node_affinity[i].preference, n))
                        k += p->preferred_node_affinity[i].weight;
        return k;
}

/* DP_SCORE_DEFAULT: the fast pass's kept score is NodeResourcesFit +
 * BalancedAllocation; TaintToleration and NodeAffinity are added per pod
 * (fast_norm); the topology plugins' scores need the feasible set: not in
 * the fast pass. */
static bool default_fast_ok(const cycle *c) { return !dp_topo_score_needed(c->s, c->pod, &c->s->profile); }

/* TaintToleration's and NodeAffinity's raw scores per table node for the
 * fast pass (NULL: every node alike), normalised over the nodes still in. */
typedef struct fast_norm {
        int64_t *v[3]; /* TaintToleration, NodeAffinity (normalised), ImageLocality (as is) */
        int32_t w[3];
        int64_t max[2];
        size_t top[2]; /* the first node with the maximum; SIZE_MAX none */
} fast_norm;

static void fast_norm_done(fast_norm *fn) {
        for (int k = 0; k < 3; k++)
                free(fn->v[k]);
}

static int fast_norm_init(const cycle *c, fast_norm *fn) {
        const dp_score_profile *p = &c->s->profile;
        sched_usage *u = c->s->usage;
        *fn = (fast_norm){.w = {p->weight[DP_PLUGIN_TAINT], p->weight[DP_PLUGIN_NODE_AFFINITY],
                                p->weight[DP_PLUGIN_IMAGE]}};
        if (c->s->policy != DP_SCORE_DEFAULT) return 0;
        int err = 0;
        fn->v[2] = image_scores(c, &err);
        if (err < 0) return err;
        bool want[2] = {fn->w[0] && u->any_prefer_taint, fn->w[1] && c->pod->n_preferred_node_affinity};
        /* the API server's own tolerations (NoExecute) tolerate no PreferNoSchedule taint */
        bool own = true;
        for (size_t i = 0; i < c->pod->n_tolerations && own; i++)
                own = dp_model_is_default_toleration(&c->pod->tolerations[i]);
        for (int k = 0; k < 2; k++) {
                if (!want[k]) continue;
                if (!(fn->v[k] = calloc(u->n_tab + 1, sizeof(int64_t)))) return -ENOMEM;
                for (size_t ni = 0; ni < u->n_tab; ni++) {
                        const node_info *inf = &u->tab_info[ni];
                        if (k == 1)
                                fn->v[k][ni] = preferred_affinity(c->pod, u->tab[ni]);
                        else
                                fn->v[k][ni] = !inf->prefer_taints || own ? inf->prefer_taints
                                                                          : intolerable_prefer(c->pod, u->tab[ni]);
                }
        }
        return 0;
}

static bool fast_in(const cycle *c, const int64_t *score, size_t i) {
        return score[i] != SCORE_OUT && (!c->topo || dp_topo_filter(c->topo, i) == DP_VERDICT_FIT);
}

/* The maxima over the nodes still in. */
static void fast_norm_max(const cycle *c, const int64_t *score, size_t nn, fast_norm *fn) {
        for (int k = 0; k < 2; k++) {
                fn->max[k] = 0;
                fn->top[k] = SIZE_MAX;
                for (size_t i = 0; fn->v[k] && i < nn; i++)
                        if (fn->v[k][i] > fn->max[k] && fast_in(c, score, i)) {
                                fn->max[k] = fn->v[k][i];
                                fn->top[k] = i;
                        }
        }
}

/* Node i's total: the kept score plus the weighted, normalised others. */
static int64_t fast_total(const fast_norm *fn, const int64_t *score, size_t i) {
        int64_t t = score[i] + (fn->v[2] ? fn->w[2] * fn->v[2][i] : 0);
        for (int k = 0; k < 2; k++) {
                if (!fn->v[k] || fn->max[k] == 0) continue; /* every node alike */
                int64_t s = DP_SCORE_MAX_NODE * fn->v[k][i] / fn->max[k];
                t += fn->w[k] * (k == 0 ? DP_SCORE_MAX_NODE - s : s);
        }
        return t;
}

static int fast_pick(cycle *c, fast_norm *fn, int64_t *score, const size_t *idx, size_t n_idx,
                     dp_sched_dra_memo *memo, int64_t units, int *ret);

static int fast_pass(cycle *c, int *ret, dp_error *err) {
        *ret = FAST_UNDECIDED;
        dp_sched *s = c->s;
        if (s->n_assumed) return 0;
        if (s->policy == DP_SCORE_DEFAULT && !default_fast_ok(c)) return 0;
        for (size_t k = 0; k < c->n_ext; k++)
                if (c->ext[k].class_name) return 0;
        size_t idx[34], n_idx = 0;
        for (size_t i = 0; i < c->n_claims; i++)
                if (!c->claims[i].claim->allocation && n_idx < 32) idx[n_idx++] = c->claims[i].prep;
        dp_sched_dra_memo *memo = NULL;
        sched_usage *u = s->usage;
        size_t nn = u->n_tab;
        if (n_idx) {
                if (!c->dra || !c->dra_kept) return 0;
                int r = dp_sched_dra_memo_get(c->dra, idx, n_idx, u->tab_gen, nn, &memo);
                if (r < 0) return r;
                if (!memo || !memo->fixed) return 0;
        }
        int64_t units = memo ? (int64_t)memo->units : 0;
        int32_t ext_ids[32];
        for (size_t k = 0; k < c->n_ext && k < 32; k++)
                ext_ids[k] = (int32_t)(uintptr_t)dp_hashmap_get(u->tab_names, c->ext[k].name) - 1;
        /* the log of changed nodes only grows: start the caches over now and then */
        if (u->n_dirty > 8 * nn + SCORE_DIRTY_SLACK) {
                size_t i = 0;
                void *v;
                while (u->caches && dp_hashmap_iter(u->caches, &i, NULL, &v))
                        ((score_cache *)v)->valid = false;
                u->n_dirty = 0;
        }
        score_cache *sc = cache_for(c, memo, units);
        int64_t *score = sc ? sc->score : u->tab_key;
        if (sc && sc->valid && (!memo || (sc->dra_gen == s->dra_gen && sc->memo_epoch == memo->epoch))) {
                for (size_t pos = sc->dirty_pos; pos < u->n_dirty; pos++)
                        score[u->dirty[pos]] = node_score(c, ext_ids, memo, units, u->dirty[pos]);
        } else {
                for (size_t ni = 0; ni < nn; ni++)
                        score[ni] = node_score(c, ext_ids, memo, units, ni);
                if (sc) {
                        sc->vvalid = false;
                        sc->valid = true;
                        sc->dra_gen = s->dra_gen;
                        sc->memo_epoch = memo ? memo->epoch : 0;
                }
        }
        if (sc) sc->dirty_pos = u->n_dirty;
        fast_norm fn;
        int r = fast_norm_init(c, &fn);
        if (r >= 0) r = fast_pick(c, &fn, score, idx, n_idx, memo, units, ret);
        fast_norm_done(&fn);
        if (r < 0 || *ret != FAST_NONE) return r;
        c->none_memo = memo;
        c->none_sc = sc;
        return 0;
}

/* Whether the claims fit table node ni in the fast pass's shape: 1 yes, 0
 * no (marked out), 2 not the shape assumed (the full passes decide), <0. */
static int fast_try(cycle *c, const size_t *idx, size_t n_idx, dp_sched_dra_memo *memo, int64_t units,
                    int64_t *score, size_t ni) {
        if (!n_idx) return 1;
        unsigned sub = 0;
        size_t got = 0;
        dp_error nerr;
        nerr.code = 0;
        nerr.msg[0] = '\0';
        int r = dp_sched_dra_try_count(c->dra, c->s->usage->tab[ni]->meta.name, idx, n_idx, &sub, &got, NULL, &nerr);
        if (r == -ENOMEM) return r;
        if (r < 0) return 2; /* the full passes decide, as before */
        if (r == 0) {
                memo->failed[ni / 64] |= UINT64_C(1) << (ni % 64);
                score[ni] = SCORE_OUT;
                return 0;
        }
        return sub != 0 || got != (size_t)units ? 2 : 1;
}

/* The fast pass's choice: the highest total, the first in name order among
 * equals, whose claims fit. With fast_norm's scores a node holding each
 * maximum is checked first, so the normalisation is the feasible nodes'. */
static int fast_pick(cycle *c, fast_norm *fn, int64_t *score, const size_t *idx, size_t n_idx,
                     dp_sched_dra_memo *memo, int64_t units, int *ret) {
        sched_usage *u = c->s->usage;
        size_t nn = u->n_tab, checked[2] = {SIZE_MAX, SIZE_MAX};
        for (;;) {
                fast_norm_max(c, score, nn, fn);
                int r = 1;
                for (int k = 0; k < 2 && r == 1; k++)
                        if (fn->top[k] != SIZE_MAX && fn->top[k] != checked[0] && fn->top[k] != checked[1]) {
                                r = fast_try(c, idx, n_idx, memo, units, score, fn->top[k]);
                                checked[k] = fn->top[k];
                        }
                if (r == 0) continue; /* a maximum left: normalise again */
                if (r != 1) return r == 2 ? 0 : r;
                size_t ni = SIZE_MAX;
                int64_t best = SCORE_OUT;
                for (size_t i = 0; i < nn; i++) {
                        if (!fast_in(c, score, i)) continue;
                        int64_t t = fast_total(fn, score, i);
                        if (ni == SIZE_MAX || t > best) {
                                best = t;
                                ni = i;
                        }
                }
                if (ni == SIZE_MAX) {
                        *ret = FAST_NONE;
                        return 0;
                }
                r = fast_try(c, idx, n_idx, memo, units, score, ni);
                if (r == 0) continue;
                if (r != 1) return r == 2 ? 0 : r;
                if (!(c->best_node = dp_strdup(u->tab[ni]->meta.name))) return -ENOMEM;
                c->best_key[0] = 0;
                c->best_key[1] = best;
                c->best_n_allocs = n_idx;
                memcpy(c->best_idx, idx, n_idx * sizeof(*idx));
                memset(c->best_via_dra, 0, sizeof(c->best_via_dra));
                *ret = FAST_WINNER;
                return 0;
        }
}

/* firstAvailable requests of the claims this cycle allocates. */
static int64_t first_available_requests(const cycle *c) {
        int64_t k = 0;
        for (size_t i = 0; i < c->n_claims; i++) {
                const dp_resource_claim *cl = c->claims[i].claim;
                for (size_t j = 0; !cl->allocation && j < cl->spec.n_requests; j++)
                        k += cl->spec.requests[j].n_first_available > 0;
        }
        return k;
}

/* The raw scores of the plugins that need the feasible set (score-pick.h). */
static int default_scores(cycle *c, const dp_node *const *nodes, dp_score_nodes *sn, int64_t *v, uint32_t *ids,
                          bool *ign) {
        const dp_score_profile *p = &c->s->profile;
        size_t n = c->n_feas;
        for (size_t i = 0; i < n; i++) {
                ids[i] = c->feas[i].ni;
                v[i] = c->feas[i].base;
        }
        if (p->weight[DP_PLUGIN_TAINT]) {
                sn->taint = v + n;
                for (size_t i = 0; i < n; i++)
                        sn->taint[i] = intolerable_prefer(c->pod, nodes[ids[i]]);
        }
        if (p->weight[DP_PLUGIN_NODE_AFFINITY] && c->pod->n_preferred_node_affinity) {
                sn->affinity = v + 2 * n;
                for (size_t i = 0; i < n; i++)
                        sn->affinity[i] = preferred_affinity(c->pod, nodes[ids[i]]);
        }
        bool ip = false, sp = false;
        int r = dp_topo_score(c->s, c->pod, c->q->ns, p, ids, n, v + 3 * n, &ip, v + 4 * n, ign, &sp);
        if (r < 0) return r;
        if (ip) sn->interpod = v + 3 * n;
        if (sp) {
                sn->spread = v + 4 * n;
                sn->spread_ignored = ign;
        }
        int err = 0;
        _cleanup_free_ int64_t *img = image_scores(c, &err);
        if (err < 0) return err;
        if (img) {
                sn->image = v + 6 * n;
                for (size_t i = 0; i < n; i++)
                        sn->image[i] = img[ids[i]];
        }
        int64_t k = p->weight[DP_PLUGIN_DRA] ? first_available_requests(c) : 0;
        if (k) {
                sn->dra = v + 5 * n;
                for (size_t i = 0; i < n; i++)
                        sn->dra[i] = DP_SCORE_FIRST_AVAILABLE_MAX * k - c->feas[i].sub;
        }
        return 0;
}

/* DP_SCORE_DEFAULT after the quiet pass: the feasible nodes scored, the
 * best one made c->best_node (try_node again on it, for its claims). */
static int default_pick(cycle *c, const dp_node *const *nodes, dp_error *err) {
        size_t n = c->n_feas;
        if (!n) return 0;
        _cleanup_free_ int64_t *v = calloc(7 * n, sizeof(*v));
        _cleanup_free_ uint32_t *ids = calloc(n, sizeof(*ids));
        _cleanup_free_ bool *ign = calloc(n, sizeof(*ign));
        if (!v || !ids || !ign) return -ENOMEM;
        dp_score_nodes sn = {.n = n, .total = v};
        int r = default_scores(c, nodes, &sn, v, ids, ign);
        if (r < 0) return r;
        size_t ni = ids[dp_score_pick(&c->s->profile, &sn)];
        int64_t key[2];
        dp_allocation_result **allocs = NULL;
        size_t n_allocs = 0, idx[34];
        bool via[32] = {0};
        c->quiet = true;
        r = try_node(c, nodes[ni], ni, key, &allocs, &n_allocs, idx, via, err);
        if (r == 0) r = dp_error_set(err, -EIO, "node %s: feasible a moment ago, not now", nodes[ni]->meta.name);
        if (r < 0) return r;
        if (!(c->best_node = dp_strdup(nodes[ni]->meta.name))) return -ENOMEM;
        c->best_allocs = allocs;
        c->best_n_allocs = n_allocs;
        memcpy(c->best_key, key, sizeof(key));
        memcpy(c->best_via_dra, via, sizeof(via));
        memcpy(c->best_idx, idx, n_allocs * sizeof(*idx));
        return 0;
}

static int make_plan(cycle *c, dp_sched_plan **ret) {
        dp_sched_plan *pl = calloc(1, sizeof(*pl));
        if (!pl) return -ENOMEM;
        char ub[512];
        pl->q = c->q;
        pl->pod_rv = c->pod_rv;
        pl->pod_uid = dp_strdup(dp_pod_uid(c->pod, ub, sizeof(ub)));
        pl->node = TAKE_PTR(c->best_node);
        memcpy(pl->native, c->native, sizeof(pl->native));
        memcpy(pl->nonzero, c->nonzero_bound, sizeof(pl->nonzero));
        pl->claims = calloc(c->n_claims + 1, sizeof(*pl->claims));
        pl->ext = calloc(c->n_ext + 1, sizeof(*pl->ext));
        if (!pl->pod_uid || !pl->claims || !pl->ext) return dp_sched_plan_free(pl), -ENOMEM;
        size_t a = 0;
        for (size_t i = 0; i < c->n_claims; i++) {
                plan_claim *pc = &pl->claims[pl->n_claims++];
                pc->ns = dp_strdup(c->q->ns);
                pc->name = dp_strdup(c->claims[i].claim->meta.name);
                pc->rv = c->claims[i].rv;
                if (!pc->ns || !pc->name) return dp_sched_plan_free(pl), -ENOMEM;
                if (!c->claims[i].claim->allocation) {
                        pc->alloc = TAKE_PTR(c->best_allocs[a]);
                        a++;
                }
        }
        for (size_t k = 0; k < c->n_ext; k++) {
                if (k < 32 && c->best_via_dra[k]) continue;
                pl->ext[pl->n_ext].name = dp_strdup(c->ext[k].name);
                pl->ext[pl->n_ext].count = c->ext[k].count;
                if (!pl->ext[pl->n_ext++].name) return dp_sched_plan_free(pl), -ENOMEM;
        }
        if (a < c->best_n_allocs) { /* the created claim */
                bool all = true;
                for (size_t k = 0; k < c->n_ext; k++)
                        all &= !c->ext[k].class_name || c->best_via_dra[k];
                int mix = all ? 0 : 1;
                dp_sched_plan *p2 = pl;
                plan_claim *nc = realloc(p2->claims, (p2->n_claims + 1) * sizeof(*nc));
                if (!nc) return dp_sched_plan_free(pl), -ENOMEM;
                p2->claims = nc;
                plan_claim *pc = &nc[p2->n_claims++];
                *pc = (plan_claim){0};
                pc->create = TAKE_PTR(c->ext_claim[mix]);
                pc->ns = dp_strdup(c->q->ns);
                pc->name = dp_strdup(pc->create->meta.name);
                pc->rv = DP_STORE_ANY_RV;
                {
                        pc->alloc = TAKE_PTR(c->best_allocs[a]);
                        a++;
                }
                pl->ext_claim_name = dp_strdup(pc->name);
                if (!pc->ns || !pc->name || !pl->ext_claim_name) return dp_sched_plan_free(pl), -ENOMEM;
        }
        *ret = pl;
        return 0;
}

static int hist_sub(dp_diag_hist *h, uint64_t v) {
        for (size_t i = 0; i < h->n; i++)
                if (h->v[i].code == (uint16_t)(v >> 32) && h->v[i].arg == (uint32_t)v) {
                        if (h->v[i].nodes) h->v[i].nodes--;
                        return 0;
                }
        return -ENOENT;
}

/* One node's verdict into *ret (try_node's filters; the allocator only
 * where the memo does not already say the claims failed). 1: it fits after
 * all (the cache cannot stand for the pass), 0, or <0. */
static int record_verdict(cycle *c, const dp_node *const *nodes, size_t ni, uint64_t *ret, bool fit_ok, dp_error *err) {
        int64_t key[2];
        dp_allocation_result **allocs = NULL;
        size_t n_allocs = 0, idx[34];
        bool via[32] = {0};
        dp_error nerr;
        nerr.code = 0;
        nerr.msg[0] = '\0';
        (void)err;
        *ret = UINT64_MAX;
        c->rec = ret;
        c->rec_multi = false;
        c->quiet = false;
        c->unres = false;
        int r = try_node(c, nodes[ni], ni, key, &allocs, &n_allocs, idx, via, &nerr);
        c->rec = NULL;
        if (c->rec_multi && r >= 0) r = -EAGAIN; /* the full pass counts every reason */
        for (size_t x = 0; x < n_allocs; x++)
                dp_allocation_result_free(allocs ? allocs[x] : NULL);
        free(allocs);
        if (r < 0 && r != -ENOMEM) return -EAGAIN; /* undecidable: the full pass says so */
        if (r == 1 && fit_ok) {                    /* kept as a verdict: the pod's own filters decide */
                *ret = (uint64_t)DP_VERDICT_FIT << 32;
                return 0;
        }
        if (r == 0 && *ret == UINT64_MAX) return -EAGAIN; /* no verdict recorded: not expected */
        return r;
}

/* The fast pass found no node and keeps a cache for the shape: the reasons
 * from the cache's verdicts, brought up to date node by node. 1 done (the
 * histogram in c->hist), 0 the full pass must run, <0 error. */
static int cached_reasons(cycle *c, const dp_node *const *nodes, size_t nn, dp_error *err) {
        score_cache *sc = c->none_sc;
        sched_usage *u = c->s->usage;
        if (!sc || c->verdicts || c->s->n_assumed || u->n_tab != nn) return 0;
        if (!sc->verdict && !(sc->verdict = malloc((nn + 1) * sizeof(*sc->verdict)))) return 0;
        if (!sc->unres && !(sc->unres = calloc(nn + 1, 1))) return 0;
        /* the shape's verdicts are kept without the pod's own (topology) filters */
        dp_topo_state *topo = TAKE_PTR(c->topo);
        int r = 0;
        if (!sc->vvalid) {
                dp_diag_hist_clear(&sc->hist);
                for (size_t ni = 0; ni < nn && r == 0; ni++) {
                        r = record_verdict(c, nodes, ni, &sc->verdict[ni], topo != NULL, err);
                        sc->unres[ni] = c->unres;
                        if (r == 0)
                                r = dp_diag_hist_add(&sc->hist, (dp_verdict_code)(sc->verdict[ni] >> 32),
                                                     (uint32_t)sc->verdict[ni]);
                }
        } else
                for (size_t pos = sc->vdirty_pos; pos < u->n_dirty && r == 0; pos++) {
                        size_t ni = u->dirty[pos];
                        uint64_t nv;
                        r = record_verdict(c, nodes, ni, &nv, topo != NULL, err);
                        sc->unres[ni] = c->unres;
                        if (r == 0 && nv != sc->verdict[ni]) {
                                r = hist_sub(&sc->hist, sc->verdict[ni]);
                                if (r == 0) r = dp_diag_hist_add(&sc->hist, (dp_verdict_code)(nv >> 32), (uint32_t)nv);
                                sc->verdict[ni] = nv;
                        }
                }
        c->topo = topo;
        for (size_t i = 0; r == 0 && !topo && i < sc->hist.n; i++) /* kept as fitting for another pod */
                if (sc->hist.v[i].code == DP_VERDICT_FIT && sc->hist.v[i].nodes) r = 1;
        if (r != 0) { /* a node fits, a verdict is not as kept: the full pass, and over next time */
                sc->vvalid = false;
                return r == -ENOMEM ? r : 0;
        }
        sc->vvalid = true;
        sc->vdirty_pos = u->n_dirty;
        if (c->node_unres) memcpy(c->node_unres, sc->unres, nn);
        if (topo) return dp_topo_reasons(topo, sc->verdict, &sc->hist, nn, &c->hist, c->node_unres);
        dp_diag_hist_clear(&c->hist);
        for (size_t i = 0; i < sc->hist.n; i++)
                if (sc->hist.v[i].nodes) {
                        if (DP_GROW(c->hist.v, c->hist.cap, c->hist.n + 1) < 0) return -ENOMEM;
                        c->hist.v[c->hist.n++] = sc->hist.v[i];
                }
        return 1;
}

/* The pod-level part of a cycle (PreFilter): the pod read, its extended
 * resources, host ports and claims. 1 go on to the nodes, 0 the cycle is
 * over (a pod-level message set), <0 error. */
static int cycle_prefilter(cycle *c, dp_error *err) {
        dp_sched *s = c->s;
        qpod *q = c->q;
        uint64_t rv = 0;
        dp_object po = dp_store_get(s->store, DP_KIND_POD, q->ns, q->name, &rv);
        if (!po.hdr) return dp_error_set(err, -ENOENT, "pod %s not found", q->key);
        c->pod = po.pod;
        c->pod_rv = rv;
        int r = usage_sync(s);
        /* a view of the store with the assumed claims in it, for gangs only:
         * otherwise the kept snapshot and counters stand for it */
        if (r >= 0 && s->n_assumed) r = build_view(s, &c->view);
        if (r >= 0) {
                dp_error perr = DP_ERROR_INIT;
                r = pod_ext(c->pod, &c->ext, &c->n_ext, &perr);
                if (r == -EINVAL) {
                        set_pod_message(q, dp_error_msg(&perr));
                        return 0;
                }
        }
        if (r >= 0) pod_native(c->pod, c->native);
        if (r >= 0) default_prescore(c);
        if (r >= 0) r = dp_pod_host_ports(c->pod, &c->ports, &c->n_ports);
        for (size_t k = 0; r >= 0 && k < c->n_ext; k++)
                c->ext[k].class_name = class_for(s->store, c->ext[k].name);
        if (r >= 0) r = resolve_claims(c, err);
        return r;
}

static void allocs_free(dp_allocation_result **allocs, size_t n) {
        for (size_t x = 0; x < n; x++)
                dp_allocation_result_free(allocs ? allocs[x] : NULL);
        free(allocs);
}

/* Node ni of the table through the filters: counted (Pending reasons),
 * kept as feasible (the default profile scores once every node is
 * known), kept as a verdict (a diagnosis) or compared with the best so
 * far. 0 go on, 1 the cycle is over (a pod-level message set), <0 error. */
static int cycle_try_node(cycle *c, const dp_node *const *nodes, size_t ni) {
        int64_t key[2];
        dp_allocation_result **allocs = NULL;
        size_t n_allocs = 0, idx[34];
        bool via[32] = {0};
        dp_error nerr; /* reset per node without clearing its whole buffer */
        nerr.code = 0;
        nerr.msg[0] = '\0';
        c->unres = false;
        int r = try_node_nom(c, nodes[ni], ni, key, &allocs, &n_allocs, idx, via, &nerr);
        if (r == 0 && c->node_unres) c->node_unres[ni] = c->unres;
        if (r < 0 && r != -ENOMEM) { /* undecidable (a selector failed at run time): pod-level */
                set_pod_message(c->q, dp_error_msg(&nerr));
                return 1;
        }
        if (r <= 0) return r;
        c->n_fit++;
        bool better = c->s->policy != DP_SCORE_DEFAULT && !c->verdicts &&
                      (!c->best_node || key[0] > c->best_key[0] || (key[0] == c->best_key[0] && key[1] > c->best_key[1]));
        if (!better) {
                allocs_free(allocs, n_allocs);
                if (c->s->policy == DP_SCORE_DEFAULT && !c->verdicts) return feas_add(c, ni, key);
                if (!c->verdicts) return 0;
                c->quiet = false; /* a diagnosis: every node, no plan */
                return verdict(c, nodes[ni], DP_VERDICT_FIT, NULL, NULL);
        }
        allocs_free(c->best_allocs, c->best_n_allocs);
        free(c->best_node);
        c->best_node = dp_strdup(nodes[ni]->meta.name);
        c->best_allocs = allocs;
        c->best_n_allocs = n_allocs;
        memcpy(c->best_key, key, sizeof(key));
        memcpy(c->best_via_dra, via, sizeof(via));
        memcpy(c->best_idx, idx, n_allocs * sizeof(*idx));
        return c->best_node ? 0 : -ENOMEM;
}

/* No node took the pod: its message and reasons, then the PostFilter. */
static int cycle_unschedulable(cycle *c, size_t nn, bool pf, dp_error *err) {
        qpod *q = c->q;
        q->info.state = DP_POD_UNSCHEDULABLE;
        char *m = dp_diag_message(&c->hist, &c->s->strings, nn);
        if (!m) return dp_error_set(err, -ENOMEM, "out of memory while writing the reasons of a Pending pod");
        free(q->info.message);
        q->info.message = m;
        dp_diag_hist_clear(&q->info.reasons);
        q->info.reasons = c->hist;
        c->hist = (dp_diag_hist){0};
        return pf ? dp_sched_postfilter(c->s, q, c, c->node_unres, err) : 0;
}

/* A node was chosen: the plan (claims allocated again on that node, with
 * their results). 1 planned, 0 not (a pod-level message set), <0 error. */
static int cycle_plan(cycle *c, dp_sched_plan **ret, dp_error *err) {
        if (c->best_n_allocs > 0) { /* the same search again on the chosen node, now with its results */
                unsigned sub = 0;
                dp_error rerr = DP_ERROR_INIT;
                int r = dp_sched_dra_try(c->dra, c->best_node, c->best_idx, c->best_n_allocs, &sub, &c->best_allocs,
                                         NULL, &rerr);
                if (r == 0)
                        r = dp_error_set(err, -EIO, "node %s: the allocation found could not be repeated", c->best_node);
                if (r < 0 && r != -ENOMEM && r != -EIO) {
                        set_pod_message(c->q, dp_error_msg(&rerr));
                        r = 0;
                }
                if (r <= 0) {
                        c->best_allocs = NULL;
                        return r;
                }
        }
        int r = make_plan(c, ret);
        return r < 0 ? r : 1;
}

/* One cycle for q; with `v` (a diagnosis) every node's verdict is kept,
 * nothing is planned and 1 means the verdicts are there. */
static int plan_cycle(dp_sched *s, qpod *q, sched_verdicts *v, dp_sched_plan **ret, dp_error *err) {
        cycle c = {.s = s, .q = q, .verdicts = v};
        size_t nn = 0;
        int r = cycle_prefilter(&c, err);
        if (r <= 0) goto out;
        /* nodes in name order */
        if ((r = nodes_sync(s)) < 0) goto out;
        nn = s->usage->n_tab;
        const dp_node *const *nodes = s->usage->tab;
        if ((r = dp_topo_prefilter(s, c.pod, q->ns, nodes, nn, s->usage->tab_gen, &c.topo)) < 0) goto out;
        /* The best node first, without reasons (in score order when the
         * score can be known before allocating, else over every node);
         * only when nothing fits, every node again for its reason. */
        /* With nominated pods about (preemption), every node is looked at
         * with them: no fast pass. A PostFilter wants each node's verdict
         * told apart (resolvable or not). */
        bool pf = !v && s->preemption && !dp_pod_group_name(c.pod); /* gangs: no preemption */
        /* percentageOfNodesToScore: the first pass stops once that many nodes
         * took the pod, starting where the last one stopped (nextStartNodeIndex);
         * in name order, so no fast pass */
        size_t find = v ? nn : dp_score_nodes_to_find(s->profile.sample_nodes, s->profile.sample_percent, nn);
        int fast = v ? FAST_NONE : FAST_UNDECIDED;
        if (!v && !s->n_nominated && find == nn && (r = fast_pass(&c, &fast, err)) < 0) goto out;
        if (pf && fast != FAST_WINNER && !(c.node_unres = calloc(nn + 1, 1))) { /* the reasons pass fills it */
                r = -ENOMEM;
                goto out;
        }
        if (fast == FAST_NONE && !v) {
                if ((r = cached_reasons(&c, nodes, nn, err)) < 0) goto out;
                if (r > 0) fast = FAST_WINNER; /* the reasons are there: no pass (and no winner) */
        }
        /* a pod its preemption nominated tries that node alone first
         * (kube-scheduler's evaluateNominatedNode): pass -1 */
        size_t nom = v ? nn : nominated_index(q, nodes, nn);
        int first = nom < nn ? -1 : fast == FAST_UNDECIDED ? 0 : fast == FAST_NONE ? 1 : 2;
        for (int pass = first; pass < 2 && !c.best_node; pass++) {
                c.quiet = pass <= 0;
                bool sample = pass == 0 && find < nn;
                size_t from = pass < 0 ? nom : sample ? s->next_start % nn : 0, k = 0;
                for (; k < (pass < 0 ? 1 : nn) && !(sample && c.n_fit >= find); k++)
                        if ((r = cycle_try_node(&c, nodes, (from + k) % nn)) != 0) {
                                r = r > 0 ? 0 : r;
                                goto out;
                        }
                if (sample) s->next_start = (from + k) % nn;
                if (s->policy == DP_SCORE_DEFAULT && !v && (r = default_pick(&c, nodes, err)) < 0) goto out;
        }
        c.quiet = false;
        r = v ? 1 : c.best_node ? cycle_plan(&c, ret, err) : cycle_unschedulable(&c, nn, pf, err);
out:
        cycle_done(&c);
        return r;
}

int dp_sched_plan_one(dp_sched *s, qpod *q, int64_t now_ms, dp_sched_plan **ret, dp_error *err) {
        q->info.attempts++;
        dp_sched_info_clear_reasons(&q->info);
        free(q->info.postfilter);
        q->info.postfilter = NULL;
        s->in_flight = q;
        int r = plan_cycle(s, q, NULL, ret, err);
        s->in_flight = NULL;
        /* the PostFilter chose victims: they go now that the cycle is over */
        if (r == 0 && q->n_victims) r = dp_sched_preempt_apply(s, q, now_ms, err);
        return r;
}

int dp_sched_diagnose_one(dp_sched *s, qpod *q, sched_verdicts *v, dp_error *err) {
        return plan_cycle(s, q, v, NULL, err);
}

bool dp_sched_pod_node_affinity(const dp_pod *p, const dp_node *n) { return node_affinity_ok(p, n); }

bool dp_sched_pod_tolerates(const dp_pod *p, const dp_node *n) { return !untolerated_taint(n, p); }

bool dp_sched_pod_node_allowed(const dp_pod *p, const dp_node *n) {
        return (!n->unschedulable || tolerates_unschedulable(p)) && !untolerated_taint(n, p) && node_affinity_ok(p, n);
}
