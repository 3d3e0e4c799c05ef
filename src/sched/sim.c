/* SPDX-License-Identifier: Apache-2.0
 * sim.c — one simulated cluster run: nodes from the fleet, objects into the
 * store, the timeline applied in time order, the scheduler and the node
 * agents' device choice after each step (sim.h). The result is a document
 * (report.c prints it). */
#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include "sched/fmt.h"
#include "dra/slices.h"
#include "sched/devnode.h"
#include "sched/sim-internal.h"

#define SETTLE_MS 60000 /* after the last event: time for backoff retries */

static void pod_done(sim_pod *p) {
        free(p->key);
        free(p->ns);
        free(p->name);
        free(p->workload);
        free(p->node);
        free(p->v1_devices);
        free(p->wait_msg);
        free(p->v2_devices);
        free(p->evict_msg);
        free(p->preempted_by);
        if (p->obj.hdr) dp_object_free(p->obj);
}

sim_run *sim_run_free(sim_run *r) {
        if (!r) return NULL;
        dp_queue_free(r->queue);
        dp_volcano_free(r->volcano);
        dp_kai_free(r->kai);
        for (size_t i = 0; i < r->n_nodes; i++) {
                free(r->nodes[i].name);
                free(r->nodes[i].shared_sig);
                sim_compat_done(&r->nodes[i]);
                for (size_t k = 0; k < r->nodes[i].n_noexec; k++)
                        free(r->nodes[i].noexec[k]);
                free(r->nodes[i].noexec);
                sim_object_units_free(&r->nodes[i]);
                dp_devnode_free(r->nodes[i].dev);
        }
        free(r->nodes);
        free(r->both);
        for (size_t i = 0; i < r->n_pods; i++)
                pod_done(&r->pods[i]);
        free(r->pods);
        for (size_t i = 0; i < r->n_deferred; i++)
                if (r->deferred[i].hdr) dp_object_free(r->deferred[i]);
        free(r->deferred);
        free(r->queue_wl);
        dp_sched_free(r->sched);
        dp_sched_free(r->sched2);
        dp_store_free(r->store);
        dp_strbuf_done(&r->log);
        sim_taints_seen_free(r);
        dp_hashmap_free(r->pod_index);
        dp_hashmap_free(r->node_index);
        sim_claim_index_free(r);
        sim_requested_free(r);
        free(r);
        return NULL;
}

/* Index of names: name -> position + 1, built when first needed and again
 * when the array grew (nodes are added while the run is set up). The first
 * of two equal names wins, as a walk from the start would find it. Without
 * memory for it, the walk. */
static size_t name_index_find(dp_hashmap **map, size_t *built, const void *base, size_t n, size_t stride,
                              size_t name_off, const char *name) {
        if (!*map || *built != n) {
                *map = dp_hashmap_free(*map);
                dp_hashmap *m = dp_hashmap_new();
                for (size_t i = 0; m && i < n; i++) {
                        const char *k = *(char *const *)((const char *)base + i * stride + name_off);
                        if (k && dp_hashmap_put(m, k, (void *)(uintptr_t)(i + 1)) == -ENOMEM) m = dp_hashmap_free(m);
                }
                *map = m;
                *built = n;
        }
        if (*map) return (size_t)(uintptr_t)dp_hashmap_get(*map, name);
        for (size_t i = 0; i < n; i++) {
                const char *k = *(char *const *)((const char *)base + i * stride + name_off);
                if (k && streq(k, name)) return i + 1;
        }
        return 0;
}

sim_pod *sim_find_pod(sim_run *r, const char *ref) {
        char key[1024];
        if (strchr(ref, '/'))
                dp_fmt(key, sizeof(key), "%s", ref);
        else
                dp_fmt(key, sizeof(key), "default/%s", ref);
        size_t i = name_index_find(&r->pod_index, &r->pod_indexed, r->pods, r->n_pods, sizeof(*r->pods),
                                   offsetof(sim_pod, key), key);
        return i ? &r->pods[i - 1] : NULL;
}

sim_node *sim_find_node(sim_run *r, const char *name) {
        size_t i = name_index_find(&r->node_index, &r->node_indexed, r->nodes, r->n_nodes, sizeof(*r->nodes),
                                   offsetof(sim_node, name), name);
        return i ? &r->nodes[i - 1] : NULL;
}

/* ---- allocated claims by pool ---- */

typedef struct pool_claims {
        sim_claim_ref *v;
        size_t n, cap;
} pool_claims;

void sim_claim_index_free(sim_run *r) {
        size_t i = 0;
        void *v;
        while (r->claims_by_pool && dp_hashmap_iter(r->claims_by_pool, &i, NULL, &v)) {
                free(((pool_claims *)v)->v);
                free(v);
        }
        r->claims_by_pool = dp_hashmap_free(r->claims_by_pool);
}

/* The indexes over the store are built again whenever the store changed
 * since (its revision moved): 1 when *map is new and empty, to be filled
 * (the old one dropped with drop), 0 when it is current, -ENOMEM. */
static int index_renew(sim_run *r, dp_hashmap **map, uint64_t built_at, void (*drop)(sim_run *r)) {
        if (*map && built_at == dp_store_revision(r->store)) return 0;
        drop(r);
        return (*map = dp_hashmap_new()) ? 1 : -ENOMEM;
}

static int claim_index(sim_run *r) {
        int rr = index_renew(r, &r->claims_by_pool, r->claims_rev, sim_claim_index_free);
        if (rr <= 0) return rr;
        size_t i = 0;
        dp_object o;
        while (dp_store_next(r->store, DP_KIND_RESOURCE_CLAIM, &i, &o, NULL)) {
                const dp_allocation_result *a = o.claim->allocation;
                for (size_t k = 0; a && k < a->n_results; k++) {
                        const char *pool = a->results[k].pool;
                        if (!pool) continue;
                        pool_claims *pc = dp_hashmap_get(r->claims_by_pool, pool);
                        if (!pc) {
                                if (!(pc = calloc(1, sizeof(*pc)))) goto oom;
                                if (dp_hashmap_put(r->claims_by_pool, pool, pc) < 0) {
                                        free(pc);
                                        goto oom;
                                }
                        }
                        if (pc->n && pc->v[pc->n - 1].claim == o.claim) continue; /* one entry per claim */
                        if (DP_GROW(pc->v, pc->cap, pc->n + 1) < 0) goto oom;
                        pc->v[pc->n++] = (sim_claim_ref){o.claim, dp_store_ns_of(o)};
                }
        }
        r->claims_rev = dp_store_revision(r->store);
        return 0;
oom:
        sim_claim_index_free(r);
        return -ENOMEM;
}

typedef struct sim_requested {
        int64_t n;
        char key[]; /* "node\x1fresource" */
} sim_requested;

void sim_requested_free(sim_run *r) {
        size_t i = 0;
        void *v;
        while (r->requested && dp_hashmap_iter(r->requested, &i, NULL, &v))
                free(v);
        r->requested = dp_hashmap_free(r->requested);
}

static int requested_add(dp_hashmap *m, const char *node, const char *res, int64_t n) {
        _cleanup_free_ char *key = dp_asprintf("%s\x1f%s", node, res);
        if (!key) return -ENOMEM;
        sim_requested *e = dp_hashmap_get(m, key);
        if (!e) {
                size_t len = strlen(key) + 1;
                if (!(e = calloc(1, sizeof(*e) + len))) return -ENOMEM;
                memcpy(e->key, key, len);
                if (dp_hashmap_put(m, e->key, e) < 0) {
                        free(e);
                        return -ENOMEM;
                }
        }
        e->n += n;
        return 0;
}

static int requested_index(sim_run *r) {
        int rr = index_renew(r, &r->requested, r->requested_rev, sim_requested_free);
        if (rr <= 0) return rr;
        size_t i = 0;
        dp_object o;
        while (dp_store_next(r->store, DP_KIND_POD, &i, &o, NULL)) {
                const dp_pod *p = o.pod;
                for (size_t c = 0; p->node_name && c < p->n_containers; c++)
                        for (size_t k = 0; k < p->containers[c].n_limits; k++) {
                                const dp_named_quantity *l = &p->containers[c].limits[k];
                                if (requested_add(r->requested, p->node_name, l->name, dp_quantity_value(&l->value)) <
                                    0) {
                                        sim_requested_free(r);
                                        return -ENOMEM;
                                }
                        }
        }
        r->requested_rev = dp_store_revision(r->store);
        return 0;
}

int sim_requested_on(sim_run *r, const char *node, const char *res, int64_t *ret) {
        if (requested_index(r) < 0) return -ENOMEM;
        _cleanup_free_ char *key = dp_asprintf("%s\x1f%s", node, res);
        if (!key) return -ENOMEM;
        const sim_requested *e = dp_hashmap_get(r->requested, key);
        *ret = e ? e->n : 0;
        return 0;
}

int sim_claims_in_pool(sim_run *r, const char *pool, const sim_claim_ref **ret, size_t *ret_n) {
        int rr = claim_index(r);
        if (rr < 0) return rr;
        const pool_claims *pc = dp_hashmap_get(r->claims_by_pool, pool);
        *ret = pc ? pc->v : NULL;
        *ret_n = pc ? pc->n : 0;
        return 0;
}

/* ---- nodes ---- */

static int set_quantities(dp_named_quantity **v, size_t *n, const sim_node *sn, bool allocatable) {
        for (size_t i = 0; i < *n; i++)
                free((*v)[i].name);
        free(*v);
        *v = NULL;
        *n = 0;
        if (!(sn->model & DP_SIM_MODEL_V1)) return 0;
        size_t nr = dp_devnode_v1_resource_count(sn->dev);
        if (!(*v = calloc(nr + 1, sizeof(**v)))) return -ENOMEM;
        for (size_t i = 0; i < nr; i++) {
                size_t cap = 0, al = 0;
                const char *name = dp_devnode_v1_resource(sn->dev, i, &cap, &al);
                if (!((*v)[i].name = dp_strdup(name))) return -ENOMEM;
                (*v)[i].value = dp_quantity_from_int((int64_t)(allocatable ? al : cap), DP_QUANTITY_DECIMAL_SI);
                (*n)++;
        }
        return 0;
}

static int node_set_resources(dp_object o, void *userdata) {
        const sim_node *sn = userdata;
        int r = set_quantities(&o.node->capacity, &o.node->n_capacity, sn, false);
        if (r >= 0) r = set_quantities(&o.node->allocatable, &o.node->n_allocatable, sn, true);
        return r;
}

static int add_v1_taint(dp_device *d) {
        dp_taint *t = realloc(d->taints, (d->n_taints + 1) * sizeof(*t));
        if (!t) return -ENOMEM;
        d->taints = t;
        t[d->n_taints] = (dp_taint){0};
        t[d->n_taints].key = dp_strdup(DP_DEVNODE_V1_TAINT);
        t[d->n_taints].effect = dp_strdup("NoSchedule");
        d->n_taints++;
        return t[d->n_taints - 1].key && t[d->n_taints - 1].effect ? 0 : -ENOMEM;
}

/* Whether V2 device `name` sits on a device failed with effect NoExecute (or
 * is a MIG instance of one). */
static bool on_noexec_device(const sim_node *sn, const char *name) {
        if (!sn->n_noexec) return false;
        int u = sim_node_unit_of_v2(sn, name);
        if (u < 0) return false;
        dp_devnode_unit du;
        if (dp_devnode_unit_get(sn->dev, (size_t)u, &du) < 0) return false;
        for (size_t i = 0; i < sn->n_noexec; i++) {
                int f = dp_devnode_unit_find(sn->dev, sn->noexec[i]);
                if (f >= 0 && (f == u || f == du.parent)) return true;
        }
        return false;
}

/* Publish the node's V2 slices (again, with the next pool generation), as the
 * node's DRA driver builds them; on "both" nodes, devices the device plugin
 * handed out carry DP_DEVNODE_V1_TAINT; the unhealthy taint of a device failed
 * with effect NoExecute has that effect. */
static int publish_slice(sim_run *r, sim_node *sn, dp_error *err) {
        if (!(sn->model & DP_SIM_MODEL_V2)) return 0;
        dp_dra_slice_options o = DP_DRA_SLICE_OPTIONS_INIT;
        o.generation = ++sn->slice_gen;
        dp_resource_slice **v = NULL;
        size_t n = 0;
        int rr = dp_dra_slices_build(sim_node_inventory(sn), &o, &v, &n, err);
        if (rr < 0) return dp_fmt_prefix(err, rr, "node %s: ResourceSlices", sn->name);
        for (size_t i = 0; rr >= 0 && i < n && sn->model == DP_SIM_MODEL_BOTH; i++)
                for (size_t k = 0; rr >= 0 && k < v[i]->n_devices; k++) {
                        int u = sim_node_unit_of_v2(sn, v[i]->devices[k].name);
                        if (u >= 0 && dp_devnode_v1_blocks(sn->dev, (size_t)u)) rr = add_v1_taint(&v[i]->devices[k]);
                }
        for (size_t i = 0; rr >= 0 && i < n && sn->n_noexec; i++)
                for (size_t k = 0; rr >= 0 && k < v[i]->n_devices; k++) {
                        dp_device *d = &v[i]->devices[k];
                        if (!on_noexec_device(sn, d->name)) continue;
                        for (size_t t = 0; rr >= 0 && t < d->n_taints; t++) {
                                if (!streq_ptr(d->taints[t].effect, "NoSchedule") ||
                                    streq_ptr(d->taints[t].key, DP_DEVNODE_V1_TAINT))
                                        continue;
                                free(d->taints[t].effect);
                                if (!(d->taints[t].effect = dp_strdup("NoExecute"))) rr = -ENOMEM;
                        }
                }
        /* the old generation goes; a node's first publication (add_node) can
         * only replace slices the input holds: no walk over every slice
         * published so far when there are none (quadratic in nodes) */
        while (sn->slice_gen > 1 || r->input_slices) {
                size_t i = 0;
                dp_object o2;
                const char *old = NULL;
                while (!old && dp_store_next(r->store, DP_KIND_RESOURCE_SLICE, &i, &o2, NULL))
                        if (streq_ptr(o2.slice->node_name, sn->name)) old = o2.slice->meta.name;
                if (!old) break;
                _cleanup_free_ char *name = dp_strdup(old);
                if (!name) {
                        rr = -ENOMEM;
                        break;
                }
                dp_store_delete(r->store, DP_KIND_RESOURCE_SLICE, NULL, name, DP_STORE_ANY_RV);
        }
        size_t i = 0;
        for (; rr >= 0 && i < n; i++) {
                rr = dp_store_add(r->store, (dp_object){.slice = v[i]}, NULL);
                if (rr >= 0) v[i] = NULL;
        }
        for (i = 0; i < n; i++)
                dp_resource_slice_free(v[i]);
        free(v);
        return rr;
}

static int kv_add(dp_kv **v, size_t *n, const char *k, const char *val) {
        dp_kv *x = realloc(*v, (*n + 1) * sizeof(*x));
        if (!x) return -ENOMEM;
        *v = x;
        x[*n].key = dp_strdup(k);
        x[*n].value = dp_strdup(val);
        if (!x[*n].key || !x[*n].value) {
                free(x[*n].key);
                free(x[*n].value);
                return -ENOMEM;
        }
        (*n)++;
        return 0;
}

static const char *model_name(dp_sim_model m) {
        return m == DP_SIM_MODEL_V1 ? "v1" : m == DP_SIM_MODEL_V2 ? "v2" : "both";
}

int sim_fleet_node_meta(dp_object_meta *meta, const dp_sim_group *g, int64_t i, dp_sim_model m) {
        if (!(meta->name = dp_asprintf("%s-%" PRId64, g->name, i))) return -ENOMEM;
        int r = 0;
        for (size_t k = 0; r >= 0 && k < g->n_labels; k++)
                r = kv_add(&meta->labels, &meta->n_labels, g->labels[k].key, g->labels[k].value);
        if (r >= 0) r = kv_add(&meta->labels, &meta->n_labels, "kubernetes.io/hostname", meta->name);
        if (r >= 0) r = kv_add(&meta->labels, &meta->n_labels, "devplane.io/node-group", g->name);
        if (r >= 0) r = kv_add(&meta->labels, &meta->n_labels, "devplane.io/model", model_name(m));
        return r;
}

static int add_node(sim_run *r, const dp_sim_group *g, int64_t i, dp_error *err) {
        sim_node *sn = &r->nodes[r->n_nodes];
        *sn = (sim_node){.group = g, .model = r->force ? r->force : g->model};
        if (!(sn->name = dp_asprintf("%s-%" PRId64, g->name, i))) return -ENOMEM;
        r->n_nodes++;
        int rr = dp_devnode_new(g->profile_text ? g->profile_path : g->profile, g->profile_text, g->profile_len,
                                sn->name, g->agent_yaml, g->agent_yaml ? strlen(g->agent_yaml) : 0, "agent config",
                                &sn->dev, err);
        if (rr >= 0 && (g->dra_partitions >= 0 || g->dra_allow_multiple))
                rr = dp_devnode_set_dra(sn->dev, g->dra_partitions, g->dra_allow_multiple, err);
        if (rr >= 0) rr = sim_compat_init(sn, err);
        if (rr < 0)
                return dp_fmt_prefix(err, rr, "%s: Fleet %s: nodeGroup %s", r->in->source, r->in->fleet_name, g->name);
        if (sn->model == DP_SIM_MODEL_BOTH) {
                /* at most one entry per node: the array of nodes is sized once */
                if (!r->both && !(r->both = calloc(r->cap_nodes ? r->cap_nodes : 1, sizeof(*r->both)))) return -ENOMEM;
                r->both[r->n_both++] = r->n_nodes - 1;
        }
        dp_node *n = calloc(1, sizeof(*n));
        if (!n) return -ENOMEM;
        n->hdr.kind = DP_KIND_NODE;
        dp_object o = {.node = n};
        rr = (n->hdr.api_version = dp_strdup("v1")) && (n->hdr.source = dp_strdup("fleet")) ? 0 : -ENOMEM;
        if (rr >= 0) rr = sim_fleet_node_meta(&n->meta, g, i, sn->model);
        if (rr >= 0 && g->n_taints) {
                if (!(n->taints = calloc(g->n_taints, sizeof(*n->taints)))) rr = -ENOMEM;
                for (size_t k = 0; rr >= 0 && k < g->n_taints; k++) {
                        dp_taint *t = &n->taints[n->n_taints++];
                        t->key = dp_strdup(g->taints[k].key);
                        t->effect = dp_strdup(g->taints[k].effect);
                        t->value = g->taints[k].value ? dp_strdup(g->taints[k].value) : NULL;
                        if (!t->key || !t->effect || (g->taints[k].value && !t->value)) rr = -ENOMEM;
                }
        }
        if (rr >= 0) rr = node_set_resources(o, sn);
        if (rr >= 0) rr = dp_store_add(r->store, o, NULL);
        if (rr < 0) {
                dp_object_free(o);
                return rr == -EEXIST ? dp_error_set(err, -EINVAL, "%s: Fleet %s: node %s: defined twice", r->in->source,
                                                    r->in->fleet_name, sn->name)
                                     : rr;
        }
        return publish_slice(r, sn, err);
}

static int sync_node(sim_run *r, sim_node *sn, dp_error *err) {
        if (sn->model & DP_SIM_MODEL_V1) {
                int rr = dp_store_update(r->store, DP_KIND_NODE, NULL, sn->name, DP_STORE_ANY_RV, node_set_resources,
                                         sn, NULL);
                if (rr < 0) return rr;
        }
        return publish_slice(r, sn, err);
}

/* ---- node agent: V1 device choice for bound pods ---- */

static bool advertised(const sim_node *sn, const char *res) {
        if (!(sn->model & DP_SIM_MODEL_V1)) return false;
        for (size_t i = 0; i < dp_devnode_v1_resource_count(sn->dev); i++)
                if (streq(dp_devnode_v1_resource(sn->dev, i, NULL, NULL), res)) return true;
        return false;
}

static int admit(sim_run *r, sim_pod *sp) {
        dp_object po = dp_store_get(r->store, DP_KIND_POD, sp->ns, sp->name, NULL);
        if (!po.hdr || !po.pod->node_name) return 0;
        const dp_pod *p = po.pod;
        sim_node *sn = sim_find_node(r, p->node_name);
        if (!sn) { /* bound to a node the input does not have (a partial dump) */
                if (sp->wait_msg) return 0;
                free(sp->node);
                sp->node = dp_strdup(p->node_name);
                sp->wait_msg = dp_asprintf("bound to node %s, which is not in the input", p->node_name);
                return sp->node && sp->wait_msg ? 0 : -ENOMEM;
        }
        char prefix[1024];
        dp_fmt(prefix, sizeof(prefix), "%s/", sp->key);
        dp_strbuf ids = DP_STRBUF_INIT;
        dp_error e = DP_ERROR_INIT;
        int rr = 0;
        for (size_t c = 0; c < p->n_containers && rr >= 0; c++) {
                const dp_container *ct = &p->containers[c];
                for (size_t k = 0; k < ct->n_limits && rr >= 0; k++) {
                        const char *res = ct->limits[k].name;
                        if (!dp_is_extended_resource_name(res) || !advertised(sn, res)) continue;
                        int64_t cnt = dp_quantity_value(&ct->limits[k].value);
                        if (cnt <= 0) continue;
                        char owner[1100];
                        dp_fmt(owner, sizeof(owner), "%s%s", prefix, ct->name);
                        rr = dp_devnode_v1_allocate(sn->dev, res, (size_t)cnt, owner, &ids, &e);
                }
        }
        if (!sn->dev && rr >= 0) rr = sim_object_node_v1(r, sn, sp->key, p, &ids);
        free(sp->node);
        sp->node = dp_strdup(p->node_name);
        if (rr == -ENOMEM || dp_strbuf_failed(&ids) || !sp->node) {
                dp_strbuf_done(&ids);
                return -ENOMEM;
        }
        if (rr < 0) { /* the pod waits on its node (UnexpectedAdmissionError would fail it upstream) */
                dp_devnode_v1_release(sn->dev, prefix);
                sim_object_node_release(sn, sp->key);
                dp_strbuf_done(&ids);
                free(sp->wait_msg);
                sp->wait_msg = dp_asprintf("device plugin allocation failed on %s: %s", sn->name, dp_error_msg(&e));
                return sp->wait_msg ? 0 : -ENOMEM;
        }
        sp->admitted = true;
        sp->started_ms = r->now;
        free(sp->wait_msg);
        sp->wait_msg = NULL;
        free(sp->v1_devices);
        sp->v1_devices = dp_strbuf_steal(&ids);
        if (!sp->v1_devices && !(sp->v1_devices = dp_strdup(""))) return -ENOMEM;
        dp_strbuf_printf(&r->log, "t=%" PRId64 "s %s started on %s\n", r->now / 1000, sp->key, sn->name);
        return 1;
}

static int admit_all(sim_run *r) {
        int n = 0;
        for (size_t i = 0; i < r->n_pods; i++) {
                sim_pod *sp = &r->pods[i];
                if (!sp->created || sp->deleted || sp->admitted) continue;
                int rr = admit(r, sp);
                if (rr < 0) return rr;
                n += rr;
        }
        return n;
}

sim_claim_iter sim_pod_claims(sim_run *r, const sim_pod *sp) {
        dp_object po = dp_store_get(r->store, DP_KIND_POD, sp->ns, sp->name, NULL);
        return (sim_claim_iter){.r = r, .ns = sp->ns, .pod = po.hdr ? po.pod : NULL};
}

const dp_resource_claim *sim_claim_next(sim_claim_iter *it, const char **ret_name) {
        const dp_pod *p = it->pod;
        while (p && it->k <= p->n_resource_claims) {
                size_t k = it->k++;
                const char *cn = k < p->n_resource_claims ? dp_sched_pod_claim_name(p, &p->resource_claims[k])
                                                          : p->extended_resource_claim_name;
                if (!cn) continue;
                const dp_resource_claim *c = dp_store_get(it->r->store, DP_KIND_RESOURCE_CLAIM, it->ns, cn, NULL).claim;
                if (!c || !c->allocation) continue;
                *ret_name = cn;
                return c;
        }
        return NULL;
}

char *sim_pod_v2_devices(sim_run *r, const sim_pod *sp) {
        dp_strbuf sb = DP_STRBUF_INIT;
        sim_claim_iter it = sim_pod_claims(r, sp);
        const char *cn;
        for (const dp_resource_claim *c; (c = sim_claim_next(&it, &cn));)
                for (size_t i = 0; i < c->allocation->n_results; i++) {
                        if (sb.len) dp_strbuf_putc(&sb, ',');
                        dp_strbuf_puts(&sb, c->allocation->results[i].device);
                }
        if (dp_strbuf_failed(&sb)) {
                dp_strbuf_done(&sb);
                return NULL;
        }
        char *s = dp_strbuf_steal(&sb);
        return s ? s : dp_strdup("");
}

/* On "both" nodes one device is offered twice: tell each model what the
 * other holds (V1 allocatable drops, V2 slice taints) whenever that changed. */
static int sync_shared(sim_run *r, dp_error *err) {
        /* the fleet's "both" nodes only: a walk over every node per bind was
         * quadratic (Node objects' nodes have no devices to sync) */
        for (size_t i = 0; i < r->n_both; i++) {
                sim_node *sn = &r->nodes[r->both[i]];
                if (sn->model != DP_SIM_MODEL_BOTH || !sn->dev) continue; /* a Node object's: nothing to sync */
                dp_devnode_v2_clear(sn->dev);
                const sim_claim_ref *cr = NULL;
                size_t ncr = 0;
                int rc = sim_claims_in_pool(r, sn->name, &cr, &ncr);
                if (rc < 0) return rc;
                for (size_t k = 0; k < ncr; k++) {
                        const dp_allocation_result *a = cr[k].claim->allocation;
                        for (size_t j = 0; a && j < a->n_results; j++) {
                                if (!streq_ptr(a->results[j].pool, sn->name) ||
                                    !streq_ptr(a->results[j].driver, dp_devnode_driver(sn->dev)))
                                        continue;
                                int u = sim_node_unit_of_v2(sn, a->results[j].device);
                                if (u >= 0) dp_devnode_v2_hold(sn->dev, (size_t)u);
                        }
                }
                dp_strbuf sig = DP_STRBUF_INIT;
                for (size_t u = 0; u < dp_devnode_unit_count(sn->dev); u++)
                        dp_strbuf_putc(&sig, dp_devnode_v1_blocks(sn->dev, u) ? '1' : '0');
                for (size_t j = 0; j < dp_devnode_v1_resource_count(sn->dev); j++) {
                        size_t al = 0;
                        dp_devnode_v1_resource(sn->dev, j, NULL, &al);
                        dp_strbuf_printf(&sig, ",%zu", al);
                }
                if (dp_strbuf_failed(&sig)) return -ENOMEM;
                if (sn->shared_sig && streq(sn->shared_sig, dp_strbuf_str(&sig))) {
                        dp_strbuf_done(&sig);
                        continue;
                }
                free(sn->shared_sig);
                sn->shared_sig = dp_strbuf_steal(&sig);
                if (!sn->shared_sig) return -ENOMEM;
                int rr = sync_node(r, sn, err);
                if (rr < 0) return rr;
        }
        return 0;
}

/* ---- events ---- */

static int create_pod(sim_run *r, sim_pod *sp) {
        if (sp->created) return 0;
        int rr = dp_store_add(r->store, sp->obj, NULL);
        if (rr < 0) return rr;
        sp->obj.hdr = NULL; /* the store owns it */
        sp->created = true;
        sp->arrived_ms = r->now;
        dp_strbuf_printf(&r->log, "t=%" PRId64 "s %s created\n", r->now / 1000, sp->key);
        return 0;
}

int sim_create_pod(sim_run *r, sim_pod *sp) { return create_pod(r, sp); }

int sim_delete_pod(sim_run *r, sim_pod *sp, bool log) {
        if (!sp->created || sp->deleted) return 0;
        char prefix[1024];
        dp_fmt(prefix, sizeof(prefix), "%s/", sp->key);
        sim_node *sn = sp->node ? sim_find_node(r, sp->node) : NULL;
        if (sn) dp_devnode_v1_release(sn->dev, prefix);
        if (sn) sim_object_node_release(sn, sp->key);
        /* the report keeps where it ran and on which devices */
        free(sp->v2_devices);
        if (!(sp->v2_devices = sim_pod_v2_devices(r, sp))) return -ENOMEM;
        int rr = dp_sched_delete_pod(r->store, sp->ns, sp->name);
        if (rr < 0 && rr != -ENOENT) return rr;
        sp->deleted = true;
        sp->deleted_ms = r->now;
        if (log) dp_strbuf_printf(&r->log, "t=%" PRId64 "s %s deleted\n", r->now / 1000, sp->key);
        return 0;
}

static int device_event(sim_run *r, const dp_sim_event *ev, dp_error *err) {
        sim_node *sn = sim_find_node(r, ev->node);
        bool fail = ev->kind == DP_SIM_EV_FAIL;
        if (!sn)
                return dp_error_set(err, -EINVAL, "Timeline: %s: node %s is not in the fleet",
                                    fail ? "fail" : "recover", ev->node);
        int rr = dp_devnode_set_health(sn->dev, ev->device, !fail, err);
        if (rr >= 0) rr = sim_compat_set_health(sn, ev->device, !fail, err);
        if (rr < 0) return dp_fmt_prefix(err, rr, "Timeline: %s", fail ? "fail" : "recover");
        int u = dp_devnode_unit_find(sn->dev, ev->device);
        for (size_t i = 0; i < sn->n_noexec; i++) /* by id or uuid: compare units */
                if (streq(sn->noexec[i], ev->device) || (u >= 0 && dp_devnode_unit_find(sn->dev, sn->noexec[i]) == u)) {
                        free(sn->noexec[i]);
                        sn->noexec[i] = sn->noexec[--sn->n_noexec];
                        break;
                }
        if (fail && ev->no_execute) {
                char **v = realloc(sn->noexec, (sn->n_noexec + 1) * sizeof(*v));
                if (!v) return -ENOMEM;
                sn->noexec = v;
                if (!(v[sn->n_noexec] = dp_strdup(ev->device))) return -ENOMEM;
                sn->n_noexec++;
        }
        dp_strbuf_printf(&r->log, "t=%" PRId64 "s %s/%s %s\n", r->now / 1000, sn->name, ev->device,
                         fail ? (ev->no_execute ? "unhealthy (NoExecute)" : "unhealthy") : "healthy again");
        return sync_node(r, sn, err);
}

/* "Kind/name" or "Kind/ns/name" (a kind starts with a capital; a pod
 * reference "ns/name" or "name" does not). */
static bool is_kind_ref(const char *ref) { return ref[0] >= 'A' && ref[0] <= 'Z' && strchr(ref, '/'); }

static bool ref_matches(dp_object o, const char *ref) {
        const dp_object_meta *m = dp_object_meta_of(o);
        char a[1024], b[1024];
        dp_fmt(a, sizeof(a), "%s/%s", dp_kind_name(o.hdr->kind), m->name);
        dp_fmt(b, sizeof(b), "%s/%s/%s", dp_kind_name(o.hdr->kind), dp_store_ns_of(o), m->name);
        return (streq(ref, a) && (!dp_kind_namespaced(o.hdr->kind) || streq(dp_store_ns_of(o), "default"))) ||
               (dp_kind_namespaced(o.hdr->kind) && streq(ref, b));
}

static int object_event(sim_run *r, const dp_sim_event *ev, dp_error *err) {
        if (ev->kind == DP_SIM_EV_CREATE) {
                for (size_t i = 0; i < r->n_deferred; i++) {
                        if (!r->deferred[i].hdr || !ref_matches(r->deferred[i], ev->pod)) continue;
                        int rr = dp_store_add(r->store, r->deferred[i], NULL);
                        if (rr < 0)
                                return rr == -EEXIST
                                               ? dp_error_set(err, -EINVAL, "Timeline: create %s: exists", ev->pod)
                                               : rr;
                        r->deferred[i].hdr = NULL;
                        dp_strbuf_printf(&r->log, "t=%" PRId64 "s %s created\n", r->now / 1000, ev->pod);
                        return 0;
                }
                return 0; /* created by an earlier event */
        }
        for (dp_kind k = DP_KIND_RESOURCE_SLICE; k <= DP_KIND_DEPLOYMENT; k++) {
                size_t kl = strlen(dp_kind_name(k));
                if (strncmp(ev->pod, dp_kind_name(k), kl) != 0 || ev->pod[kl] != '/') continue;
                const char *rest = ev->pod + kl + 1, *sl = strchr(rest, '/');
                _cleanup_free_ char *ns = sl ? dp_strndup(rest, (size_t)(sl - rest)) : NULL;
                int rr = dp_store_delete(r->store, k, ns, sl ? sl + 1 : rest, DP_STORE_ANY_RV);
                if (rr < 0 && rr != -ENOENT) return rr;
                if (rr >= 0) dp_strbuf_printf(&r->log, "t=%" PRId64 "s %s deleted\n", r->now / 1000, ev->pod);
                return 0;
        }
        return dp_error_set(err, -EINVAL, "Timeline: delete %s: unknown kind", ev->pod);
}

static int apply_event(sim_run *r, const dp_sim_event *ev, dp_error *err) {
        if (ev->kind == DP_SIM_EV_FAIL || ev->kind == DP_SIM_EV_RECOVER) return device_event(r, ev, err);
        if (is_kind_ref(ev->pod)) return object_event(r, ev, err);
        sim_pod *sp = sim_find_pod(r, ev->pod);
        if (!sp)
                return dp_error_set(err, -EINVAL, "Timeline: %s %s: no such Pod in the input",
                                    ev->kind == DP_SIM_EV_CREATE ? "create" : "delete", ev->pod);
        return ev->kind == DP_SIM_EV_CREATE ? create_pod(r, sp) : sim_delete_pod(r, sp, true);
}

static int cmp_event(const void *a, const void *b) {
        const dp_sim_event *x = *(const dp_sim_event *const *)a, *y = *(const dp_sim_event *const *)b;
        if (x->at_ms != y->at_ms) return x->at_ms < y->at_ms ? -1 : 1;
        return x->order < y->order ? -1 : x->order > y->order;
}

/* ---- the run ---- */

static int load_objects(sim_run *r, dp_error *err) {
        _cleanup_(dp_object_list_freep) dp_object_list *l = dp_object_list_new();
        if (!l) return -ENOMEM;
        l->ext = &dp_queue_model_ext;
        const dp_sim_input *in = r->in;
        for (size_t i = 0; i < in->n_k8s_docs; i++) {
                size_t d = in->k8s_docs[i];
                int rr = dp_model_decode(dp_doc_root(in->docs, d), dp_doc_source(in->docs, d), in->k8s_doc_index[i],
                                         l, err);
                if (rr < 0) return rr;
        }
        /* owners stand for their pods; generateName gets its names */
        int er = sim_expand_workloads(r, l, err);
        if (er < 0) return er;
        size_t np = dp_object_list_count(l, DP_KIND_POD);
        if (!(r->pods = calloc(np + 1, sizeof(*r->pods)))) return -ENOMEM;
        int rr = 0;
        size_t k = 0;
        for (size_t i = 0; i < l->n; i++) {
                dp_object o = l->items[i];
                if (rr < 0) {
                        l->items[k++] = o;
                        continue;
                }
                if (o.hdr->kind == DP_KIND_POD) {
                        sim_pod *sp = &r->pods[r->n_pods++];
                        sp->obj = o;
                        sp->ns = dp_strdup(dp_store_ns_of(o));
                        sp->name = dp_strdup(o.pod->meta.name);
                        sp->key = dp_asprintf("%s/%s", sp->ns, sp->name);
                        if (!sp->ns || !sp->name || !sp->key) rr = -ENOMEM;
                        /* the workload it belongs to (the report colours by it): the controller owner */
                        const dp_object_meta *m = &o.pod->meta;
                        const dp_owner_ref *own = NULL;
                        for (size_t q = 0; q < m->n_owner_references && !(own && own->controller); q++)
                                if (!own || m->owner_references[q].controller) own = &m->owner_references[q];
                        if (own && rr >= 0 &&
                            !(sp->workload =
                                      dp_asprintf("%s/%s", own->kind ? own->kind : "", own->name ? own->name : "")))
                                rr = -ENOMEM;
                        continue;
                }
                bool later = false;
                for (size_t e = 0; e < in->n_events && !later; e++)
                        later = in->events[e].kind == DP_SIM_EV_CREATE && is_kind_ref(in->events[e].pod) &&
                                ref_matches(o, in->events[e].pod);
                if (later) {
                        dp_object *v = realloc(r->deferred, (r->n_deferred + 1) * sizeof(*v));
                        if (!v)
                                rr = -ENOMEM;
                        else {
                                r->deferred = v;
                                v[r->n_deferred++] = o;
                        }
                } else
                        rr = dp_store_add(r->store, o, NULL);
                if (rr == -EEXIST) {
                        char dsc[512];
                        dp_object_describe(o, dsc, sizeof(dsc));
                        rr = dp_error_set(err, -EINVAL, "%s: %s: defined twice", o.hdr->source, dsc);
                }
                if (rr < 0) l->items[k++] = o;
        }
        l->n = k; /* what the store did not take */
        return rr;
}

/* The node agent acts as soon as a pod is bound: devices through the plugin,
 * and on "both" nodes each model learns what the other now holds. */
static int on_bind(void *userdata, const char *ns, const char *name, dp_error *err) {
        sim_run *r = userdata;
        char key[1024];
        dp_fmt(key, sizeof(key), "%s/%s", ns, name);
        sim_pod *sp = sim_find_pod(r, key);
        if (!sp) return 0;
        dp_object po = dp_store_get(r->store, DP_KIND_POD, sp->ns, sp->name, NULL);
        if (po.hdr && po.pod->node_name && !sp->bound_logged) {
                sp->bound_logged = true;
                sp->bound_ms = r->now;
                dp_strbuf_printf(&r->log, "t=%" PRId64 "s %s bound to %s\n", r->now / 1000, sp->key, po.pod->node_name);
        }
        int rr = sync_shared(r, err);
        if (rr >= 0) rr = admit(r, sp);
        if (rr >= 0) rr = sync_shared(r, err);
        return rr < 0 ? rr : 0;
}

/* kube-scheduler's DefaultPreemption chose a victim: it goes as a deleted
 * pod does (devices and claims released), and the report says by whom. */
static int on_preempt(void *userdata, const char *ns, const char *name, const char *by, const char *node,
                      dp_error *err) {
        (void)err;
        sim_run *r = userdata;
        char key[1024];
        dp_fmt(key, sizeof(key), "%s/%s", ns, name);
        sim_pod *sp = sim_find_pod(r, key);
        if (!sp) return dp_sched_delete_pod(r->store, ns, name);
        int rr = sim_delete_pod(r, sp, false);
        if (rr < 0) return rr;
        free(sp->preempted_by);
        if (!(sp->preempted_by = dp_strdup(by))) return -ENOMEM;
        dp_strbuf_printf(&r->log, "t=%" PRId64 "s %s preempted by %s on %s\n", r->now / 1000, sp->key, by, node);
        return 0;
}

dp_sched *sim_pod_sched(sim_run *r, const sim_pod *sp) {
        const dp_sched_pod_info *a = dp_sched_pod(r->sched, sp->ns, sp->name);
        const dp_sched_pod_info *b = r->sched2 ? dp_sched_pod(r->sched2, sp->ns, sp->name) : NULL;
        if (b && (!a || b->attempts > a->attempts)) return r->sched2;
        return a ? r->sched : NULL;
}

const dp_sched_pod_info *sim_pod_info(sim_run *r, const sim_pod *sp) {
        dp_sched *s = sim_pod_sched(r, sp);
        return s ? dp_sched_pod(s, sp->ns, sp->name) : NULL;
}

/* ---- progress on stderr (dp_sim_input.progress) ---- */

static int64_t mono_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* 50000 -> "50,000" */
static void thousands(size_t v, char *buf, size_t size) {
        char d[32];
        int n = snprintf(d, sizeof d, "%zu", v);
        size_t o = 0;
        for (int i = 0; i < n && o + 2 < size; i++) {
                if (i && (n - i) % 3 == 0) buf[o++] = ',';
                buf[o++] = d[i];
        }
        buf[o] = 0;
}

/* Every 64th call reads the clock; at most five lines a second, from 2 s
 * after the input was loaded. The count is of pods past their first
 * attempt (bound, or tried and pending). */
static void progress(sim_run *r) {
        if (!r->in->progress || !r->progress_shown || ++r->progress_ticks % 64) return;
        int64_t now = mono_ms();
        if (now - r->in->progress_t0_ms < 2000 || now < r->progress_next_ms) return;
        r->progress_next_ms = now + 200;
        size_t tried = 0;
        for (size_t i = 0; i < r->n_pods; i++) {
                const sim_pod *sp = &r->pods[i];
                const dp_sched_pod_info *a = dp_sched_pod(r->sched, sp->ns, sp->name);
                const dp_sched_pod_info *b = r->sched2 ? dp_sched_pod(r->sched2, sp->ns, sp->name) : NULL;
                tried += (a && a->state != DP_POD_QUEUED) || (b && b->state != DP_POD_QUEUED);
        }
        char a[32], b[32];
        thousands(tried, a, sizeof a);
        thousands(r->n_pods, b, sizeof b);
        const char *run = r->force == DP_SIM_MODEL_V1   ? "all-V1"
                          : r->force == DP_SIM_MODEL_V2 ? "all-V2"
                                                        : "as written";
        char line[128];
        int n = snprintf(line, sizeof line, "simulating %s: %s/%s pods", run, a, b);
        if (n < 0) return;
        size_t len = DP_MIN((size_t)n, sizeof line - 1);
        /* pad over a longer line shown before */
        fprintf(stderr, "\r%s%*s", line, (int)(*r->progress_shown > len ? *r->progress_shown - len : 0), "");
        fflush(stderr);
        *r->progress_shown = DP_MAX(*r->progress_shown, len);
}

static void on_attempt(void *userdata) { progress(userdata); }

/* Two scheduler instances: each round, both plan from the same store before
 * either writes (both views are stale for the second writer); the store
 * refuses what conflicts and the loser retries after its backoff. */
static int run_two(sim_run *r, dp_error *err) {
        for (;;) {
                dp_sched_plan *pa = NULL, *pb = NULL;
                int ra = dp_sched_next(r->sched, r->now, NULL, &pa, err);
                if (ra < 0 && ra != -ENOENT) return ra;
                _cleanup_free_ char *ka = ra > 0 ? dp_strdup(dp_sched_plan_pod_key(pa)) : NULL;
                if (ra > 0 && !ka) {
                        dp_sched_plan_free(pa);
                        return -ENOMEM;
                }
                int rb = dp_sched_next(r->sched2, r->now, ka, &pb, err);
                if (rb < 0 && rb != -ENOENT) {
                        dp_sched_plan_free(pa);
                        return rb;
                }
                if (ra == -ENOENT && rb == -ENOENT) return 0;
                progress(r);
                if (ra > 0 && (ra = dp_sched_commit_bind(r->sched, pa, r->now, err)) < 0) {
                        dp_sched_plan_free(pb);
                        return ra;
                }
                if (rb > 0) {
                        _cleanup_free_ char *kb = dp_strdup(dp_sched_plan_pod_key(pb));
                        if (!kb) {
                                dp_sched_plan_free(pb);
                                return -ENOMEM;
                        }
                        dp_error cerr = DP_ERROR_INIT;
                        rb = dp_sched_commit_bind(r->sched2, pb, r->now, &cerr);
                        if (rb < 0) return dp_error_set(err, rb, "%s", dp_error_msg(&cerr));
                        if (rb == 0)
                                dp_strbuf_printf(&r->log,
                                                 "t=%" PRId64 "s %s: second scheduler's binding rejected: %s\n",
                                                 r->now / 1000, kb, dp_error_msg(&cerr));
                }
        }
}

static int sim_run_new_impl(const dp_sim_input *in, dp_sim_model force, size_t *shown, sim_run **ret, dp_error *err) {
        _cleanup_(sim_run_freep) sim_run *r = calloc(1, sizeof(*r));
        if (!r) return -ENOMEM;
        r->in = in;
        r->force = force;
        r->progress_shown = shown;
        if (!(r->store = dp_store_new())) return -ENOMEM;
        dp_sched_config cfg = {.policy = in->policy,
                               .profile = in->has_profile ? &in->profile : NULL,
                               .on_bind = on_bind,
                               .on_attempt = on_attempt,
                               .userdata = r,
                               .alloc = in->alloc,
                               .all_schedulers = in->all_schedulers,
                               .preemption = !in->no_preemption,
                               .dra_preemption = in->dra_preemption,
                               .on_preempt = on_preempt};
        int rr = dp_sched_new(r->store, &cfg, &r->sched);
        if (rr >= 0 && in->schedulers == 2) rr = dp_sched_new(r->store, &cfg, &r->sched2);
        if (rr < 0) return rr;
        size_t total = 0;
        for (size_t g = 0; g < in->n_groups; g++)
                total += (size_t)in->groups[g].count;
        total += sim_object_node_count(in);
        if (!(r->nodes = calloc(total + 1, sizeof(*r->nodes)))) return -ENOMEM;
        r->cap_nodes = total + 1;
        if ((rr = load_objects(r, err)) < 0) return rr;
        r->input_slices = dp_store_count(r->store, DP_KIND_RESOURCE_SLICE) > 0;
        for (size_t g = 0; g < in->n_groups; g++)
                for (int64_t i = 0; i < in->groups[g].count; i++)
                        if ((rr = add_node(r, &in->groups[g], i, err)) < 0) return rr;
        if ((rr = sim_add_object_nodes(r, err)) < 0 || (rr = sim_whatif_apply(r, err)) < 0) return rr;

        /* events: pods no event creates arrive first, at 0 */
        size_t ne = in->n_events;
        _cleanup_free_ const dp_sim_event **evs = calloc(ne + 1, sizeof(*evs));
        if (!evs) return -ENOMEM;
        for (size_t i = 0; i < ne; i++) {
                evs[i] = &in->events[i];
                if (evs[i]->kind == DP_SIM_EV_CREATE && is_kind_ref(evs[i]->pod)) {
                        bool found = false;
                        for (size_t k = 0; k < r->n_deferred && !found; k++)
                                found = ref_matches(r->deferred[k], evs[i]->pod);
                        if (!found)
                                return dp_error_set(err, -EINVAL, "Timeline: create %s: no such object in the input",
                                                    evs[i]->pod);
                } else if (evs[i]->kind == DP_SIM_EV_CREATE) {
                        sim_pod *sp = sim_find_pod(r, evs[i]->pod);
                        if (!sp)
                                return dp_error_set(err, -EINVAL, "Timeline: create %s: no such Pod in the input",
                                                    evs[i]->pod);
                        sp->scheduled_create = true;
                }
        }
        qsort(evs, ne, sizeof(*evs), cmp_event);
        if ((rr = sim_volcano(r, err)) < 0) return rr; /* --queue-policy volcano (sim-volcano.c) */
        if ((rr = sim_queue_hold(r)) < 0) return rr; /* Kueue over time (sim-queue.c) */
        for (size_t i = 0; i < r->n_pods; i++)
                if (!r->pods[i].scheduled_create && (rr = create_pod(r, &r->pods[i])) < 0) return rr;
        if ((rr = sim_volcano_evict(r)) < 0) return rr; /* Volcano's reclaim (sim-volcano.c) */
        size_t next = 0;
        int64_t last_event = ne ? evs[ne - 1]->at_ms : 0;
        r->now = 0;
        for (;;) {
                progress(r);
                while (next < ne && evs[next]->at_ms <= r->now)
                        if ((rr = apply_event(r, evs[next++], err)) < 0) return rr;
                if ((rr = sim_queue_step(r, err)) < 0) return rr;
                if ((rr = sim_volcano_step(r, err)) < 0) return rr; /* Volcano over time (sim-volcano.c) */
                /* pods a NoExecute taint reaches go before anything is placed */
                if ((rr = sim_evict(r)) < 0) return rr;
                if (rr > 0) last_event = DP_MAX(last_event, r->now);
                /* pods the input (or an event) bound take their devices before the
                 * scheduler places new ones: a running pod keeps its device ids
                 * whatever else is added */
                if ((rr = sync_shared(r, err)) < 0 || (rr = admit_all(r)) < 0 || (rr = sync_shared(r, err)) < 0)
                        return rr;
                if ((rr = dp_sched_claims_from_templates(r->store, err)) < 0) return rr;
                rr = r->sched2 ? run_two(r, err) : dp_sched_run(r->sched, r->now, err);
                if (rr < 0) return rr;
                for (size_t i = 0; i < r->n_pods; i++) {
                        sim_pod *sp = &r->pods[i];
                        const dp_sched_pod_info *pi = dp_sched_pod(r->sched, sp->ns, sp->name);
                        if (pi && pi->state == DP_POD_BOUND && !sp->bound_logged && !sp->deleted) {
                                sp->bound_logged = true;
                                sp->bound_ms = r->now;
                                dp_strbuf_printf(&r->log, "t=%" PRId64 "s %s bound to %s\n", r->now / 1000, sp->key,
                                                 pi->node);
                        }
                }
                if ((rr = sync_shared(r, err)) < 0 || (rr = admit_all(r)) < 0 || (rr = sync_shared(r, err)) < 0)
                        return rr;
                /* pods just placed on a device with a NoExecute taint they do
                 * not tolerate are evicted at once: schedule again */
                if ((rr = sim_evict(r)) < 0) return rr;
                if (rr > 0) {
                        last_event = DP_MAX(last_event, r->now);
                        continue;
                }
                int64_t t_ev = next < ne ? evs[next]->at_ms : -1;
                int64_t t_evict = sim_evict_next(r);
                if (t_evict >= 0 && (t_ev < 0 || t_evict < t_ev)) t_ev = t_evict;
                int64_t t_retry = dp_sched_next_retry(r->sched);
                if (r->sched2) {
                        int64_t t2 = dp_sched_next_retry(r->sched2);
                        if (t2 >= 0 && (t_retry < 0 || t2 < t_retry)) t_retry = t2;
                }
                if (t_retry >= 0 && t_retry <= r->now) t_retry = r->now + 1000;
                if (t_retry > last_event + SETTLE_MS) t_retry = -1;
                int64_t t = t_ev < 0 ? t_retry : t_retry < 0 ? t_ev : DP_MIN(t_ev, t_retry);
                if (t < 0) break;
                r->now = t;
        }
        r->end_ms = r->now;
        if (dp_strbuf_failed(&r->log)) return -ENOMEM;
        r->progress_shown = NULL;
        *ret = TAKE_PTR(r);
        return 0;
}

int sim_run_new(const dp_sim_input *in, dp_sim_model force, sim_run **ret, dp_error *err) {
        size_t shown = 0;
        int r = sim_run_new_impl(in, force, &shown, ret, err);
        if (shown) { /* clear the progress line */
                fprintf(stderr, "\r%*s\r", (int)shown, "");
                fflush(stderr);
        }
        return r;
}
