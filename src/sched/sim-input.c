/* SPDX-License-Identifier: Apache-2.0
 * sim-input.c — a cluster's own state as the simulator's input (sim.h):
 * nodes read from Node objects (no device model: their devices are their
 * extended resources and their ResourceSlices), pod owners stood up against
 * the run's nodes, what-if changes, and "did you mean" for pod names. */
#include <stdio.h>

#include "base/strv.h"
#include "sched/fmt.h"
#include "sched/sim-internal.h"

#define WHATIF_TAINT_KEY "devplane.io/what-if-failed"

/* ---- what-if: checked and kept on the input ---- */

static bool node_v1_unit(const dp_node *n, const char *device);

/* "NODE/RESOURCE-K" naming a V1 unit of Node object NODE of the input
 * ("gpu-a/nvidia.com/gpu-0"): the node's name length, else 0. */
static size_t object_v1_unit(const dp_sim_input *in, const char *f) {
        const char *sl = strchr(f, '/');
        if (!sl || sl == f) return 0;
        _cleanup_free_ char *node = dp_strndup(f, (size_t)(sl - f));
        if (!node) return 0;
        const dp_node *n = dp_object_list_find(in->objs, DP_KIND_NODE, NULL, node).node;
        return n && node_v1_unit(n, sl + 1) ? (size_t)(sl - f) : 0;
}

void dp_sim_whatif_done(dp_sim_whatif *w) {
        dp_strv_free_n(w->cordon, w->n_cordon);
        dp_strv_free_n(w->fail, w->n_fail);
        dp_strv_free_n(w->mode, w->n_mode);
        *w = (dp_sim_whatif){0};
}

/* The fleet group a fleet node name belongs to ("<group>-<i>"), or NULL. */
static const dp_sim_group *fleet_group_of(const dp_sim_input *in, const char *node) {
        for (size_t g = 0; g < in->n_groups; g++) {
                const dp_sim_group *gr = &in->groups[g];
                size_t l = strlen(gr->name);
                if (strncmp(node, gr->name, l) != 0 || node[l] != '-' || !node[l + 1]) continue;
                char *end = NULL;
                long long i = strtoll(node + l + 1, &end, 10);
                if (*end == 0 && i >= 0 && i < gr->count) return gr;
        }
        return NULL;
}

static bool node_object(const dp_sim_input *in, const char *node) {
        return dp_object_list_find(in->objs, DP_KIND_NODE, NULL, node).hdr != NULL;
}

static bool slice_has(const dp_resource_slice *s, const char *device) {
        return dp_resource_slice_find_device(s, device) != NULL;
}

/* A device of a Node object's ResourceSlices (the input's). */
static bool object_node_device(const dp_sim_input *in, const char *node, const char *device) {
        for (size_t i = 0; i < in->objs->n; i++) {
                dp_object o = in->objs->items[i];
                if (o.hdr->kind == DP_KIND_RESOURCE_SLICE && streq_ptr(o.slice->node_name, node) &&
                    slice_has(o.slice, device))
                        return true;
        }
        return false;
}

static int add_fail_event(dp_sim_input *in, const char *node, const char *device) {
        dp_sim_event *v = realloc(in->events, (in->n_events + 1) * sizeof(*v));
        if (!v) return -ENOMEM;
        in->events = v;
        dp_sim_event *e = &v[in->n_events];
        *e = (dp_sim_event){.at_ms = 0, .kind = DP_SIM_EV_FAIL, .order = in->n_events};
        e->node = dp_strdup(node);
        e->device = dp_strdup(device);
        if (!e->node || !e->device) {
                free(e->node);
                free(e->device);
                return -ENOMEM;
        }
        in->n_events++;
        return 0;
}

static int check_whatif(dp_sim_input *in, const dp_sim_whatif *w, dp_error *err) {
        for (size_t i = 0; i < w->n_cordon; i++)
                if (!fleet_group_of(in, w->cordon[i]) && !node_object(in, w->cordon[i]))
                        return dp_error_set(err, -EINVAL, "--cordon %s: no such node in the input", w->cordon[i]);
        for (size_t i = 0; i < w->n_mode; i++) {
                const char *eq = strchr(w->mode[i], '=');
                if (!eq || eq == w->mode[i] ||
                    (!streq(eq + 1, "v1") && !streq(eq + 1, "v2") && !streq(eq + 1, "both")))
                        return dp_error_set(err, -EINVAL, "--mode %s: must be GROUP_OR_NODE=v1|v2|both", w->mode[i]);
                _cleanup_free_ char *name = dp_strndup(w->mode[i], (size_t)(eq - w->mode[i]));
                if (!name) return -ENOMEM;
                dp_sim_model m = streq(eq + 1, "v1") ? DP_SIM_MODEL_V1
                                 : streq(eq + 1, "v2") ? DP_SIM_MODEL_V2
                                                       : DP_SIM_MODEL_BOTH;
                bool found = false;
                for (size_t g = 0; g < in->n_groups; g++)
                        if (streq(in->groups[g].name, name)) {
                                in->groups[g].model = m;
                                found = true;
                        }
                if (!found && node_object(in, name)) {
                        if (m == DP_SIM_MODEL_BOTH)
                                return dp_error_set(err, -EINVAL,
                                                    "--mode %s: a Node object keeps what it has; give v1 (its "
                                                    "ResourceSlices dropped) or v2 (its extended resources dropped)",
                                                    w->mode[i]);
                        found = true;
                }
                if (!found)
                        return dp_error_set(err, -EINVAL, "--mode %s: %s is no node group of the Fleet nor a Node",
                                            w->mode[i], name);
        }
        for (size_t i = 0; i < w->n_fail; i++) {
                const char *f = w->fail[i], *s1 = strchr(f, '/'), *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
                if (object_v1_unit(in, f)) continue; /* NODE/RESOURCE-K: a Node object's V1 unit */
                if (!s1 || s1 == f || !s1[1] || (s2 && (s2 == s1 + 1 || !s2[1] || strchr(s2 + 1, '/'))))
                        return dp_error_set(err, -EINVAL, "--fail-device %s: must be NODE/DEVICE or DRIVER/POOL/DEVICE",
                                            f);
                if (s2) {
                        _cleanup_free_ char *first = dp_strndup(f, (size_t)(s1 - f));
                        if (!first) return -ENOMEM;
                        if (node_object(in, first) && !fleet_group_of(in, first))
                                return dp_error_set(err, -EINVAL,
                                                    "--fail-device %s: node %s has no device %s (its extended "
                                                    "resources are devices RESOURCE-0, RESOURCE-1...)",
                                                    f, first, s1 + 1);
                        continue; /* driver/pool/device: a taint rule, whatever the input holds */
                }
                _cleanup_free_ char *node = dp_strndup(f, (size_t)(s1 - f));
                if (!node) return -ENOMEM;
                const dp_sim_group *g = fleet_group_of(in, node);
                if (g) { /* the fleet's device model fails it, on both sides */
                        int r = add_fail_event(in, node, s1 + 1);
                        if (r < 0) return r;
                        continue;
                }
                if (!node_object(in, node))
                        return dp_error_set(err, -EINVAL, "--fail-device %s: no such node in the input", f);
                if (!object_node_device(in, node, s1 + 1))
                        return dp_error_set(err, -EINVAL, "--fail-device %s: node %s has no device %s in its ResourceSlices",
                                            f, node, s1 + 1);
        }
        return 0;
}

int dp_sim_set_whatif(dp_sim_input *in, const dp_sim_whatif *w, dp_error *err) {
        assert_return(in && w, -EINVAL);
        dp_sim_whatif c = {0};
        int r = check_whatif(in, w, err);
        if (r >= 0) {
                c.cordon = dp_strv_copy_n(w->cordon, c.n_cordon = w->n_cordon);
                c.fail = dp_strv_copy_n(w->fail, c.n_fail = w->n_fail);
                c.mode = dp_strv_copy_n(w->mode, c.n_mode = w->n_mode);
                if (!c.cordon || !c.fail || !c.mode) r = -ENOMEM;
        }
        if (r < 0) {
                dp_sim_whatif_done(&c);
                return r == -ENOMEM ? dp_error_set(err, r, "out of memory") : r;
        }
        dp_sim_whatif_done(&in->whatif);
        in->whatif = c;
        return 0;
}

/* ---- nodes the pod owners see ---- */

typedef struct node_views {
        const dp_node **v;
        size_t n;
        dp_node **owned; /* the fleet's, made here */
        size_t n_owned;
} node_views;

static void node_views_done(node_views *nv) {
        for (size_t i = 0; i < nv->n_owned; i++)
                dp_node_free(nv->owned[i]);
        free(nv->owned);
        free(nv->v);
}

/* The fleet's nodes with the labels sim.c gives them, then the Node objects of l. */
static int node_views_get(const dp_sim_input *in, const dp_object_list *l, dp_sim_model force, node_views *ret) {
        node_views nv = {0};
        size_t total = dp_object_list_count(l, DP_KIND_NODE);
        for (size_t g = 0; g < in->n_groups; g++)
                total += (size_t)in->groups[g].count;
        int r = 0;
        if (!(nv.v = calloc(total + 1, sizeof(*nv.v))) || !(nv.owned = calloc(total + 1, sizeof(*nv.owned))))
                r = -ENOMEM;
        for (size_t g = 0; r >= 0 && g < in->n_groups; g++) {
                const dp_sim_group *gr = &in->groups[g];
                dp_sim_model m = force ? force : gr->model;
                for (int64_t i = 0; r >= 0 && i < gr->count; i++) {
                        dp_node *n = calloc(1, sizeof(*n));
                        if (!n) {
                                r = -ENOMEM;
                                break;
                        }
                        nv.owned[nv.n_owned++] = n;
                        n->hdr.kind = DP_KIND_NODE;
                        r = sim_fleet_node_meta(&n->meta, gr, i, m);
                        nv.v[nv.n++] = n;
                }
        }
        for (size_t i = 0; r >= 0 && i < l->n; i++)
                if (l->items[i].hdr->kind == DP_KIND_NODE) nv.v[nv.n++] = l->items[i].node;
        if (r < 0) {
                node_views_done(&nv);
                return r;
        }
        *ret = nv;
        return 0;
}

/* Pods that finished (phase Succeeded or Failed, as `kubectl get pods -A`
 * lists them) hold nothing and are never scheduled again: left out, as
 * kube-scheduler's informer leaves them out. */
static void drop_finished(dp_object_list *l) {
        size_t k = 0;
        for (size_t i = 0; i < l->n; i++) {
                dp_object o = l->items[i];
                if (o.hdr->kind == DP_KIND_POD && o.pod->phase &&
                    (streq(o.pod->phase, "Succeeded") || streq(o.pod->phase, "Failed"))) {
                        dp_object_free(o);
                        continue;
                }
                l->items[k++] = o;
        }
        l->n = k;
}

static int expand(const dp_sim_input *in, dp_sim_model force, dp_object_list *l, dp_error *err) {
        node_views nv;
        int rr = node_views_get(in, l, force, &nv);
        if (rr < 0) return rr;
        rr = dp_model_expand_workloads(l, nv.v, nv.n, err);
        node_views_done(&nv);
        if (rr >= 0) drop_finished(l);
        if (rr >= 0) rr = dp_model_apply_defaults(l, err);
        return rr;
}

/* ---- what-if: --add-nodes FLAVOR=N (queue/explain-nodes.c) ---- */

/* A copy of o (encoded, then decoded again) appended to l. */
static int copy_object(dp_object o, dp_object_list *l, dp_error *err) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        dp_doc_node *d = s ? dp_object_encode(s, o) : NULL;
        return d ? dp_model_decode(d, "--add-nodes", 0, l, err) : -ENOMEM;
}

/* *field = v (taken; NULL: -ENOMEM). */
static int set_str(char **field, char *v) {
        if (!v) return -ENOMEM;
        free(*field);
        *field = v;
        return 0;
}

/* Node tmpl copied as `name` (its hostname label too), with its
 * ResourceSlices (pool and slice names made the copy's own). */
static int copy_node(dp_object_list *l, const dp_node *tmpl, const char *name, dp_error *err) {
        size_t n0 = l->n;
        int rr = copy_object((dp_object){.node = (dp_node *)tmpl}, l, err);
        dp_object_meta *m = rr >= 0 && l->n > n0 ? &l->items[n0].node->meta : NULL;
        if (m) rr = set_str(&m->name, dp_strdup(name));
        if (m) free(TAKE_PTR(m->uid)); /* no two nodes share one */
        for (size_t k = 0; m && rr >= 0 && k < m->n_labels; k++)
                if (streq(m->labels[k].key, "kubernetes.io/hostname"))
                        rr = set_str(&m->labels[k].value, dp_strdup(name));
        for (size_t i = 0; rr >= 0 && i < n0; i++) {
                dp_resource_slice *sl = l->items[i].hdr->kind == DP_KIND_RESOURCE_SLICE ? l->items[i].slice : NULL;
                if (!sl || !streq_ptr(sl->node_name, tmpl->meta.name)) continue;
                size_t k = l->n;
                if ((rr = copy_object(l->items[i], l, err)) < 0 || l->n == k) continue;
                dp_resource_slice *c = l->items[k].slice;
                rr = set_str(&c->meta.name, dp_asprintf("%s-%s", name, sl->meta.name));
                if (rr >= 0) rr = set_str(&c->node_name, dp_strdup(name));
                if (rr >= 0 && c->pool_name)
                        rr = set_str(&c->pool_name, streq(c->pool_name, tmpl->meta.name)
                                                            ? dp_strdup(name)
                                                            : dp_asprintf("%s-%s", sl->pool_name, name));
        }
        return rr;
}

/* Before the queue takes the ResourceFlavors out of l: each --add-nodes'
 * copies, named FLAVOR-whatif-I (I counts on across repeated flags). */
static int add_flavor_nodes(const dp_sim_input *in, dp_object_list *l, dp_error *err) {
        const dp_queue_options *o = in->queue;
        for (size_t a = 0; o && a < o->n_add_nodes; a++) {
                const dp_node *tmpl = NULL;
                int32_t first = 0;
                for (size_t b = 0; b < a; b++)
                        first += streq(o->add_nodes[b].flavor, o->add_nodes[a].flavor) ? o->add_nodes[b].count : 0;
                int rr = dp_queue_flavor_node(l, &o->add_nodes[a], &tmpl, err);
                for (int32_t i = 0; rr >= 0 && i < o->add_nodes[a].count; i++) {
                        char name[300];
                        dp_fmt(name, sizeof(name), "%.250s-whatif-%d", o->add_nodes[a].flavor, first + i);
                        rr = copy_node(l, tmpl, name, err);
                }
                if (rr < 0) return rr;
        }
        return 0;
}

/* Kueue's admission comes first (src/queue): it takes the Kueue objects out
 * of l, lets admitted Jobs stand up their pods and keeps the others
 * suspended, then gives the admitted pods their flavors. */
int sim_expand_workloads(sim_run *r, dp_object_list *l, dp_error *err) {
        int rr = dp_model_generate_names(l, err);
        if (rr >= 0) rr = add_flavor_nodes(r->in, l, err);
        if (rr >= 0) rr = dp_queue_new_opts(l, r->in->queue, &r->queue, err);
        if (rr >= 0) dp_queue_set_fair_sharing(r->queue, r->in->kueue_fair_sharing);
        if (rr >= 0) dp_queue_set_over_time(r->queue, dp_queue_n_workloads(r->queue) && sim_queue_over_time(r->in));
        if (rr >= 0) rr = dp_queue_admit(r->queue, err);
        if (rr >= 0) rr = dp_queue_apply_owners(r->queue, l, err);
        if (rr >= 0) rr = expand(r->in, r->force, l, err);
        if (rr >= 0) rr = dp_queue_apply_pods(r->queue, l, err);
        if (rr >= 0) rr = sim_kai_admit(r, l, err);
        return rr;
}

/* ---- nodes from Node objects ---- */

static bool has_extended(const dp_node *n) {
        for (size_t i = 0; i < n->n_allocatable; i++)
                if (dp_is_extended_resource_name(n->allocatable[i].name)) return true;
        return false;
}

static bool has_slices(const dp_store *s, const char *node) {
        size_t i = 0;
        dp_object o;
        while (dp_store_next(s, DP_KIND_RESOURCE_SLICE, &i, &o, NULL))
                if (streq_ptr(o.slice->node_name, node)) return true;
        return false;
}

size_t sim_object_node_count(const dp_sim_input *in) {
        size_t n = dp_object_list_count(in->objs, DP_KIND_NODE);
        for (size_t a = 0; in->queue && a < in->queue->n_add_nodes; a++)
                n += (size_t)in->queue->add_nodes[a].count; /* --add-nodes */
        return n;
}

/* ---- a Node object's V1 units ---- */

void sim_object_units_free(sim_node *sn) {
        for (size_t i = 0; i < sn->n_obj_units; i++) {
                free(sn->obj_units[i].id);
                free(sn->obj_units[i].resource);
                free(sn->obj_units[i].holder);
        }
        free(sn->obj_units);
        sn->obj_units = NULL;
        sn->n_obj_units = 0;
}

/* The unit count an allocatable extended resource names: its value, 0 when
 * there are too many to name (then it is counted, not named). */
static size_t units_of(const dp_named_quantity *q) {
        if (!dp_is_extended_resource_name(q->name)) return 0;
        int64_t v = dp_quantity_value(&q->value);
        return v > 0 && v <= SIM_OBJ_UNITS_MAX ? (size_t)v : 0;
}

/* Whether `device` ("nvidia.com/gpu-3") is a V1 unit of Node object n. */
static bool node_v1_unit(const dp_node *n, const char *device) {
        const char *dash = device ? strrchr(device, '-') : NULL;
        if (!n || !dash || !dash[1] || (dash[1] == '0' && dash[2])) return false;
        size_t k = 0;
        for (const char *c = dash + 1; *c; c++) {
                if (*c < '0' || *c > '9' || k > SIM_OBJ_UNITS_MAX) return false;
                k = k * 10 + (size_t)(*c - '0');
        }
        for (size_t i = 0; i < n->n_allocatable; i++) {
                const char *res = n->allocatable[i].name;
                if (strlen(res) == (size_t)(dash - device) && !strncmp(res, device, (size_t)(dash - device)))
                        return k < units_of(&n->allocatable[i]);
        }
        return false;
}

static int add_units(sim_node *sn, const dp_node *n) {
        size_t total = 0;
        for (size_t i = 0; i < n->n_allocatable; i++)
                total += units_of(&n->allocatable[i]);
        if (!total) return 0;
        if (!(sn->obj_units = calloc(total, sizeof(*sn->obj_units)))) return -ENOMEM;
        for (size_t i = 0; i < n->n_allocatable; i++)
                for (size_t k = 0; k < units_of(&n->allocatable[i]); k++) {
                        sim_obj_unit *u = &sn->obj_units[sn->n_obj_units];
                        u->id = dp_asprintf("%s-%zu", n->allocatable[i].name, k);
                        u->resource = dp_strdup(n->allocatable[i].name);
                        sn->n_obj_units++;
                        if (!u->id || !u->resource) return -ENOMEM;
                }
        return 0;
}

int sim_add_object_nodes(sim_run *r, dp_error *err) {
        (void)err;
        size_t i = 0;
        dp_object o;
        while (dp_store_next(r->store, DP_KIND_NODE, &i, &o, NULL)) {
                if (sim_find_node(r, o.node->meta.name)) continue; /* the fleet's */
                sim_node *sn = &r->nodes[r->n_nodes];
                *sn = (sim_node){0};
                if (!(sn->name = dp_strdup(o.node->meta.name))) return -ENOMEM;
                r->n_nodes++;
                int m = (has_extended(o.node) ? DP_SIM_MODEL_V1 : 0) |
                        (has_slices(r->store, sn->name) ? DP_SIM_MODEL_V2 : 0);
                sn->model = m ? (dp_sim_model)m : DP_SIM_MODEL_BOTH;
                if (add_units(sn, o.node) < 0) return -ENOMEM;
        }
        return 0;
}

void sim_object_node_release(sim_node *sn, const char *key) {
        for (size_t i = 0; sn && i < sn->n_obj_units; i++)
                if (streq_ptr(sn->obj_units[i].holder, key)) {
                        free(sn->obj_units[i].holder);
                        sn->obj_units[i].holder = NULL;
                }
}

int sim_object_node_v1(sim_run *r, sim_node *sn, const char *key, const dp_pod *p, dp_strbuf *ids) {
        const dp_node *n = dp_store_get(r->store, DP_KIND_NODE, NULL, sn->name, NULL).node;
        if (!n) return 0;
        for (size_t i = 0; i < n->n_allocatable; i++) {
                const char *res = n->allocatable[i].name;
                if (!dp_is_extended_resource_name(res)) continue;
                int64_t cnt = 0;
                for (size_t c = 0; c < p->n_containers; c++)
                        for (size_t k = 0; k < p->containers[c].n_limits; k++)
                                if (streq(p->containers[c].limits[k].name, res))
                                        cnt += dp_quantity_value(&p->containers[c].limits[k].value);
                if (cnt <= 0) continue;
                for (size_t u = 0; u < sn->n_obj_units && cnt > 0; u++) {
                        sim_obj_unit *x = &sn->obj_units[u];
                        if (!streq(x->resource, res) || x->holder || x->failed) continue;
                        if (!(x->holder = dp_strdup(key))) return -ENOMEM;
                        dp_strbuf_printf(ids, "%s%s", ids->len ? "," : "", x->id);
                        cnt--;
                }
                /* more than the free units (a pod the input already bound past
                 * them, or a resource too big to name): counted, not named */
                if (cnt > 0) dp_strbuf_printf(ids, "%s%s=%" PRId64, ids->len ? "," : "", res, cnt);
        }
        return dp_strbuf_failed(ids) ? -ENOMEM : 0;
}

/* ---- what-if changes in a run ---- */

static int cordon(dp_object o, void *userdata) {
        (void)userdata;
        o.node->unschedulable = true;
        return 0;
}

static int strip_extended(dp_named_quantity **v, size_t *n) {
        size_t k = 0;
        for (size_t i = 0; i < *n; i++) {
                if (dp_is_extended_resource_name((*v)[i].name)) {
                        free((*v)[i].name);
                        continue;
                }
                (*v)[k++] = (*v)[i];
        }
        *n = k;
        return 0;
}

static int drop_extended(dp_object o, void *userdata) {
        (void)userdata;
        strip_extended(&o.node->allocatable, &o.node->n_allocatable);
        return strip_extended(&o.node->capacity, &o.node->n_capacity);
}

static int drop_slices(sim_run *r, const char *node) {
        for (;;) {
                size_t i = 0;
                dp_object o;
                _cleanup_free_ char *name = NULL;
                while (!name && dp_store_next(r->store, DP_KIND_RESOURCE_SLICE, &i, &o, NULL))
                        if (streq_ptr(o.slice->node_name, node) && !(name = dp_strdup(o.slice->meta.name)))
                                return -ENOMEM;
                if (!name) return 0;
                int rr = dp_store_delete(r->store, DP_KIND_RESOURCE_SLICE, NULL, name, DP_STORE_ANY_RV);
                if (rr < 0) return rr;
        }
}

static int add_taint_rule(sim_run *r, size_t i, const char *driver, const char *pool, const char *device) {
        dp_device_taint_rule *t = calloc(1, sizeof(*t));
        if (!t) return -ENOMEM;
        dp_object o = {.taint_rule = t};
        t->hdr.kind = DP_KIND_DEVICE_TAINT_RULE;
        t->has_device_selector = true;
        bool ok = (t->hdr.api_version = dp_strdup("resource.k8s.io/v1beta2")) &&
                  (t->hdr.source = dp_strdup("--fail-device")) &&
                  (t->meta.name = dp_asprintf("devplane-what-if-failed-%zu", i)) && (t->driver = dp_strdup(driver)) &&
                  (t->pool = dp_strdup(pool)) && (t->device = dp_strdup(device)) &&
                  (t->taint.key = dp_strdup(WHATIF_TAINT_KEY)) && (t->taint.effect = dp_strdup("NoSchedule"));
        int rr = ok ? dp_store_add(r->store, o, NULL) : -ENOMEM;
        if (rr < 0) dp_object_free(o);
        return rr;
}

/* The device plugin reports the unit unhealthy: allocatable drops by one. */
static int drop_one(dp_object o, void *userdata) {
        const char *res = userdata;
        for (size_t i = 0; i < o.node->n_allocatable; i++)
                if (streq(o.node->allocatable[i].name, res)) {
                        dp_quantity one = dp_quantity_from_int(1, DP_QUANTITY_DECIMAL_SI);
                        dp_quantity *q = &o.node->allocatable[i].value;
                        if (dp_quantity_value(q) > 0) return dp_quantity_sub(q, &one, q);
                }
        return 0;
}

static int fail_v1_unit(sim_run *r, const char *f, const char *slash) {
        _cleanup_free_ char *node = dp_strndup(f, (size_t)(slash - f));
        if (!node) return -ENOMEM;
        sim_node *sn = sim_find_node(r, node);
        for (size_t u = 0; sn && u < sn->n_obj_units; u++) {
                sim_obj_unit *x = &sn->obj_units[u];
                if (!streq(x->id, slash + 1)) continue;
                if (x->failed) return -EEXIST;
                x->failed = true;
                return dp_store_update(r->store, DP_KIND_NODE, NULL, node, DP_STORE_ANY_RV, drop_one, x->resource,
                                       NULL);
        }
        return 0;
}

int sim_whatif_apply(sim_run *r, dp_error *err) {
        const dp_sim_whatif *w = &r->in->whatif;
        int rr = 0;
        for (size_t i = 0; rr >= 0 && i < w->n_cordon; i++) {
                rr = dp_store_update(r->store, DP_KIND_NODE, NULL, w->cordon[i], DP_STORE_ANY_RV, cordon, NULL, NULL);
                if (rr == -ENOENT) return dp_error_set(err, -EINVAL, "--cordon %s: no such node", w->cordon[i]);
        }
        for (size_t i = 0; rr >= 0 && i < w->n_mode; i++) {
                const char *eq = strchr(w->mode[i], '=');
                _cleanup_free_ char *name = dp_strndup(w->mode[i], (size_t)(eq - w->mode[i]));
                if (!name) return -ENOMEM;
                sim_node *sn = sim_find_node(r, name);
                if (!sn || sn->dev) continue; /* a fleet group: set on the input */
                if (streq(eq + 1, "v1")) {
                        rr = drop_slices(r, name);
                        sn->model = DP_SIM_MODEL_V1;
                } else {
                        rr = dp_store_update(r->store, DP_KIND_NODE, NULL, name, DP_STORE_ANY_RV, drop_extended, NULL,
                                             NULL);
                        sim_object_units_free(sn);
                        sn->model = DP_SIM_MODEL_V2;
                }
        }
        for (size_t i = 0; rr >= 0 && i < w->n_fail; i++) {
                const char *f = w->fail[i], *s1 = strchr(f, '/'), *s2 = strchr(s1 + 1, '/');
                if (object_v1_unit(r->in, f)) {
                        rr = fail_v1_unit(r, f, s1);
                        continue;
                }
                if (s2) {
                        _cleanup_free_ char *drv = dp_strndup(f, (size_t)(s1 - f));
                        _cleanup_free_ char *pool = dp_strndup(s1 + 1, (size_t)(s2 - s1 - 1));
                        rr = drv && pool ? add_taint_rule(r, i, drv, pool, s2 + 1) : -ENOMEM;
                        continue;
                }
                _cleanup_free_ char *node = dp_strndup(f, (size_t)(s1 - f));
                if (!node) return -ENOMEM;
                sim_node *sn = sim_find_node(r, node);
                if (!sn || sn->dev) continue; /* the fleet's: a Timeline failure at 0 */
                size_t k = 0;
                dp_object o;
                while (rr >= 0 && dp_store_next(r->store, DP_KIND_RESOURCE_SLICE, &k, &o, NULL))
                        if (streq_ptr(o.slice->node_name, node) && slice_has(o.slice, s1 + 1)) {
                                rr = add_taint_rule(r, i, o.slice->driver, o.slice->pool_name, s1 + 1);
                                break;
                        }
        }
        if (rr == -EEXIST) return dp_error_set(err, -EINVAL, "--fail-device: the same device twice");
        return rr;
}

/* ---- did you mean ---- */

static size_t edit_distance(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b);
        if (la > 253 || lb > 253) return SIZE_MAX;
        size_t prev[254], cur[254];
        for (size_t j = 0; j <= lb; j++)
                prev[j] = j;
        for (size_t i = 1; i <= la; i++) {
                cur[0] = i;
                for (size_t j = 1; j <= lb; j++) {
                        size_t c = prev[j - 1] + (a[i - 1] != b[j - 1]);
                        c = DP_MIN(c, prev[j] + 1);
                        cur[j] = DP_MIN(c, cur[j - 1] + 1);
                }
                memcpy(prev, cur, (lb + 1) * sizeof(size_t));
        }
        return prev[lb];
}

int dp_sim_suggest_pods(const dp_sim_input *in, const char *ref, dp_strbuf *out) {
        assert_return(in && ref && out, -EINVAL);
        _cleanup_(dp_object_list_freep) dp_object_list *l = dp_object_list_new();
        if (!l) return -ENOMEM;
        l->ext = &dp_queue_model_ext;
        dp_error e = DP_ERROR_INIT;
        for (size_t i = 0; i < in->n_k8s_docs; i++) {
                size_t d = in->k8s_docs[i];
                if (dp_model_decode(dp_doc_root(in->docs, d), dp_doc_source(in->docs, d), in->k8s_doc_index[i], l,
                                    &e) < 0)
                        return 0;
        }
        int r = expand(in, 0, l, &e);
        if (r < 0) return r == -ENOMEM ? r : 0;
        const char *sl = strchr(ref, '/');
        const char *rname = sl ? sl + 1 : ref;
        size_t shown = 0, budget = DP_MAX(strlen(rname) / 4, (size_t)2);
        /* pass 0: the same name in another namespace; 1: an owner's name,
         * its pods; 2...: names at edit distance 1, 2, ... budget */
        for (size_t pass = 0; pass < 2 + budget && shown < 5; pass++)
                for (size_t i = 0; i < l->n && shown < 5; i++) {
                        if (l->items[i].hdr->kind != DP_KIND_POD) continue;
                        const dp_object_meta *m = &l->items[i].pod->meta;
                        const char *ns = m->namespace && m->namespace[0] ? m->namespace : "default";
                        size_t plen = strlen(rname);
                        bool hit = pass == 0   ? streq(m->name, rname)
                                   : pass == 1 ? strncmp(m->name, rname, plen) == 0 && m->name[plen] == '-'
                                               : !streq(m->name, rname) && edit_distance(m->name, rname) == pass - 1;
                        if (!hit) continue;
                        char key[600];
                        dp_fmt(key, sizeof(key), "%s/%s", ns, m->name);
                        if (sl && streq(key, ref)) continue;
                        bool dup = false;
                        for (const char *p = dp_strbuf_str(out); p && (p = strstr(p, key)) && !dup; p++)
                                dup = (p == dp_strbuf_str(out) || p[-1] == ' ') && (p[strlen(key)] == ',' || !p[strlen(key)]);
                        if (dup) continue;
                        dp_strbuf_printf(out, "%s%s", shown ? ", " : "", key);
                        shown++;
                }
        return dp_strbuf_failed(out) ? -ENOMEM : 0;
}
