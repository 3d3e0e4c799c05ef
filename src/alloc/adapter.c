/* SPDX-License-Identifier: Apache-2.0
 * adapter.c — model objects to the allocator snapshot and back (adapter.h). */
#include <stdio.h>

#include "alloc/adapter.h"
#include "alloc/oom.h"
#include "base/hashmap.h"
#include "base/strv.h"
#include "cel/slice-device.h"

/* Blocks freed together: carved from `arena` (zeroed memory of the
 * owner's, sized up front) while it lasts, then each one calloc'd. */
typedef struct mem {
        void **p;
        size_t n, cap;
        char *arena;
        size_t arena_left;
} mem;

#define MEM_ALIGN(n) (((n) + 15) & ~(size_t)15)

static void *mem_alloc(mem *m, size_t size) {
        if (m->arena && MEM_ALIGN(size) <= m->arena_left) {
                void *x = m->arena;
                m->arena += MEM_ALIGN(size);
                m->arena_left -= MEM_ALIGN(size);
                return x;
        }
        if (DP_GROW(m->p, m->cap, m->n + 1) < 0) return NULL;
        void *x = calloc(1, size ? size : 1);
        if (x) m->p[m->n++] = x;
        return x;
}

static void mem_done(mem *m) {
        for (size_t i = 0; i < m->n; i++) free(m->p[i]);
        free(m->p);
        *m = (mem){0};
}

typedef struct adev {
        const dp_resource_slice *slice;
        const dp_device *dev;
} adev;

struct dp_alloc_cluster {
        dp_alloc_snapshot *snap;
        const dp_object_list *objs;
        adev *devs;
        size_t n_devs, cap_devs;
        dp_hashmap *progs; /* expression -> selector id + 1 */
        bool list_types;   /* DRAListTypeAttributes (dp_alloc_cluster_options) */
        dp_cel_options cel_opts; /* as the scheduler compiles selectors under these gates */
        dp_cel_program **programs;
        size_t n_programs, cap_programs;
        dp_hashmap *classes; /* name -> dp_device_class* */
        dp_hashmap *admin_ns; /* namespaces labelled for admin access */
        const dp_device_taint_rule **rules; /* DeviceTaintRules with a selector, in object order */
        size_t n_rules;
        /* the CEL view of the device a selector is evaluated on, made for
         * each evaluation (each (selector, device) is evaluated once): views
         * of every device kept would be the largest part of the snapshot */
        dp_cel_device view;
        dp_cel_attribute *view_attrs;
        dp_cel_capacity *view_caps;
        size_t cap_view_attrs, cap_view_caps;
        /* one device's specs while it is added, reused for the next */
        dp_alloc_attr *tmp_at;
        dp_alloc_capacity *tmp_caps;
        dp_alloc_consumption *tmp_cons;
        dp_alloc_counter *tmp_ctrs;
        dp_alloc_taint *tmp_taints;
        size_t cap_at, cap_caps, cap_cons, cap_ctrs, cap_taints;
        mem m;
};

/* d's CEL view in c->view: 0, -EINVAL (an attribute of an unknown type) or
 * -ENOMEM. Valid until the next call. */
static int cel_view(dp_alloc_cluster *c, const adev *d) {
        const dp_device *dv = d->dev;
        if (DP_GROW(c->view_attrs, c->cap_view_attrs, dv->n_attributes + 1) < 0 ||
            DP_GROW(c->view_caps, c->cap_view_caps, dv->n_capacity + 1) < 0)
                return -ENOMEM;
        return dp_cel_device_from_slice(d->slice, dv, c->view_attrs, c->view_caps, &c->view) < 0 ? -EINVAL : 0;
}

static int eval_cb(void *ud, void *selector, void *device_user, dp_error *err) {
        dp_alloc_cluster *c = ud;
        const dp_cel_program *p = selector;
        const adev *d = device_user;
        dp_cel_result res;
        int r = cel_view(c, d);
        if (r == -ENOMEM) return alloc_oom(err, "evaluating a selector on device %s", d->dev->name);
        /* add_device checked the attribute types */
        assert(r == 0);
        r = dp_cel_eval(p, &c->view, &res, err);
        if (r < 0 && !c->list_types) {
                /* the device, not the selector, is the trouble: say which
                 * attribute and which gate */
                const dp_device_attribute *la = NULL;
                for (size_t i = 0; i < d->dev->n_attributes && !la; i++)
                        if (d->dev->attributes[i].type > DP_ATTR_VERSION) la = &d->dev->attributes[i];
                if (la) {
                        static const char *const kinds[] = {"ints", "bools", "strings", "versions"};
                        return dp_error_set(err, -EINVAL,
                                            "device %s/%s/%s: attribute %s is list-typed (%s), which needs the "
                                            "DRAListTypeAttributes feature (alpha in Kubernetes 1.36, off by default); "
                                            "without it every selector evaluated on this device fails, as in the "
                                            "scheduler (\"unsupported attribute value\"): pass --feature-gates "
                                            "DRAListTypeAttributes=true for a cluster that runs with the gate on",
                                            d->slice->driver, d->slice->pool_name, d->dev->name, la->name,
                                            kinds[la->type - DP_ATTR_INTS]);
                }
        }
        if (r < 0) {
                dp_error_prefix(err, "device %s/%s/%s: selector \"%s\"", d->slice->driver, d->slice->pool_name,
                                d->dev->name, dp_cel_program_expression(p));
                return r;
        }
        return res.matches ? 1 : 0;
}

static int selector_id(dp_alloc_cluster *c, const char *expr, uint32_t *ret, dp_error *err) {
        void *v = dp_hashmap_get(c->progs, expr);
        if (v) {
                *ret = (uint32_t)((uintptr_t)v - 1);
                return 0;
        }
        dp_cel_program *p = NULL;
        int r = dp_cel_compile(expr, &c->cel_opts, &p, err);
        if (r < 0) return r;
        if (DP_GROW(c->programs, c->cap_programs, c->n_programs + 1) < 0) {
                dp_cel_program_free(p);
                return alloc_oom(err, "registering the compiled selector");
        }
        uint32_t id;
        r = dp_alloc_add_selector(c->snap, p, &id);
        if (r < 0) {
                /* selector ids are program indices: keep the two in step */
                dp_cel_program_free(p);
                return alloc_oom(err, "registering the compiled selector");
        }
        c->programs[c->n_programs++] = p;
        r = dp_hashmap_put(c->progs, dp_cel_program_expression(p), (void *)(uintptr_t)(id + 1));
        if (r < 0) return alloc_oom(err, "registering the compiled selector");
        *ret = id;
        return 0;
}

dp_alloc_cluster *dp_alloc_cluster_free(dp_alloc_cluster *c) {
        if (!c) return NULL;
        dp_free_many(c->devs, c->rules, c->view_attrs, c->view_caps, c->tmp_at, c->tmp_caps, c->tmp_cons, c->tmp_ctrs,
                     c->tmp_taints);
        for (size_t i = 0; i < c->n_programs; i++)
                dp_cel_program_free(c->programs[i]);
        dp_alloc_snapshot_free(c->snap);
        mem_done(&c->m);
        dp_hashmap_free(c->progs);
        dp_hashmap_free(c->classes);
        dp_hashmap_free(c->admin_ns);
        dp_free_many(c->programs, c);
        return NULL;
}

dp_alloc_snapshot *dp_alloc_cluster_snapshot(dp_alloc_cluster *c) { return c ? c->snap : NULL; }

static const dp_alloc_node_selector *conv_ns(mem *m, const dp_node_selector *ns) {
        if (!ns) return NULL;
        dp_alloc_node_selector *o = mem_alloc(m, sizeof(*o));
        dp_alloc_ns_term *terms = mem_alloc(m, ns->n_terms * sizeof(*terms));
        if (!o || !terms) return NULL;
        for (size_t t = 0; t < ns->n_terms; t++) {
                const dp_node_selector_term *src = &ns->terms[t];
                dp_alloc_ns_req *e = mem_alloc(m, src->n_match_expressions * sizeof(*e));
                dp_alloc_ns_req *f = mem_alloc(m, src->n_match_fields * sizeof(*f));
                if (!e || !f) return NULL;
                for (size_t i = 0; i < src->n_match_expressions; i++) {
                        const dp_node_selector_requirement *r = &src->match_expressions[i];
                        e[i] = (dp_alloc_ns_req){r->key, (dp_alloc_ns_op)r->op, (const char *const *)r->values, r->n_values};
                }
                for (size_t i = 0; i < src->n_match_fields; i++) {
                        const dp_node_selector_requirement *r = &src->match_fields[i];
                        f[i] = (dp_alloc_ns_req){r->key, (dp_alloc_ns_op)r->op, (const char *const *)r->values, r->n_values};
                }
                terms[t] = (dp_alloc_ns_term){e, src->n_match_expressions, f, src->n_match_fields};
        }
        o->terms = terms;
        o->n_terms = ns->n_terms;
        return o;
}

/* 1, 0 (no match, also for a selector that does not compile or fails on
 * this device), or -ENOMEM with err filled: running out of memory is not a
 * selector error and must not turn into "no match". */
static int cel_matches(dp_alloc_cluster *c, const char *expr, const adev *d, dp_error *err) {
        uint32_t id = 0;
        dp_error e = DP_ERROR_INIT;
        dp_cel_result res;
        int r = selector_id(c, expr, &id, &e);
        if (r >= 0 && cel_view(c, d) == -ENOMEM) r = -ENOMEM;
        if (r >= 0) r = dp_cel_eval(c->programs[id], &c->view, &res, &e); /* selector ids are program indices */
        if (r == -ENOMEM) {
                if (err && e.code == -ENOMEM && e.msg[0]) *err = e;
                return alloc_oom(err, "evaluating the selector \"%s\"", expr);
        }
        return r < 0 ? 0 : res.matches;
}

/* DeviceTaintRule spec.deviceSelector: every field set must match; no
 * selector at all selects nothing. Selector errors count as no match.
 * 1, 0, or -ENOMEM (err filled). */
static int rule_matches(dp_alloc_cluster *c, const dp_device_taint_rule *r, const adev *d, dp_error *err) {
        if (!r->has_device_selector) return 0;
        if (r->driver && !streq(r->driver, d->slice->driver)) return 0;
        if (r->pool && !streq(r->pool, d->slice->pool_name)) return 0;
        if (r->device && !streq(r->device, d->dev->name)) return 0;
        if (r->device_class_name) {
                const dp_device_class *cls = dp_hashmap_get(c->classes, r->device_class_name);
                if (!cls) return 0;
                for (size_t i = 0; i < cls->n_selectors; i++) {
                        int m = cel_matches(c, cls->selectors[i].cel_expression, d, err);
                        if (m <= 0) return m;
                }
        }
        for (size_t i = 0; i < r->n_selectors; i++) {
                int m = cel_matches(c, r->selectors[i].cel_expression, d, err);
                if (m <= 0) return m;
        }
        return 1;
}

/* A list-typed attribute as a DP_ALLOC_ATTR_LIST of scalars (in m). */
static int list_attr(mem *m, const dp_device_attribute *a, dp_alloc_attr *ret) {
        dp_alloc_attr *e = mem_alloc(m, (a->n + 1) * sizeof(*e));
        if (!e) return -ENOMEM;
        for (size_t k = 0; k < a->n; k++)
                switch (a->type) {
                case DP_ATTR_INTS: e[k] = (dp_alloc_attr){.type = DP_ALLOC_ATTR_INT, .i = a->ints[k]}; break;
                case DP_ATTR_BOOLS: e[k] = (dp_alloc_attr){.type = DP_ALLOC_ATTR_BOOL, .b = a->bools[k]}; break;
                case DP_ATTR_STRINGS: e[k] = (dp_alloc_attr){.type = DP_ALLOC_ATTR_STRING, .s = a->strs[k]}; break;
                default: e[k] = (dp_alloc_attr){.type = DP_ALLOC_ATTR_VERSION, .s = a->strs[k]}; break;
                }
        *ret = (dp_alloc_attr){.name = a->name, .type = DP_ALLOC_ATTR_LIST, .elems = e, .n_elems = a->n};
        return 0;
}

static int add_device(dp_alloc_cluster *c, uint32_t sl, adev *d, dp_error *err) {
        const dp_device *dv = d->dev;
        _cleanup_(mem_done) mem m = {0};
        size_t n_ctrs = 0;
        for (size_t i = 0; i < dv->n_consumes_counters; i++) n_ctrs += dv->consumes_counters[i].n_counters;
        /* +1: a device without any still gets an array */
        if (DP_GROW(c->tmp_at, c->cap_at, dv->n_attributes + 1) < 0 ||
            DP_GROW(c->tmp_caps, c->cap_caps, dv->n_capacity + 1) < 0 ||
            DP_GROW(c->tmp_cons, c->cap_cons, dv->n_consumes_counters + 1) < 0 ||
            DP_GROW(c->tmp_ctrs, c->cap_ctrs, n_ctrs + 1) < 0 ||
            DP_GROW(c->tmp_taints, c->cap_taints, dv->n_taints + 16) < 0)
                return alloc_oom(err, "converting device %s", dv->name);
        dp_alloc_attr *at = c->tmp_at;
        dp_alloc_capacity *caps = c->tmp_caps;
        dp_alloc_consumption *cons = c->tmp_cons;
        dp_alloc_counter *ctr_next = c->tmp_ctrs;
        size_t na = 0;
        for (size_t i = 0; i < dv->n_attributes; i++) {
                const dp_device_attribute *a = &dv->attributes[i];
                if (a->type <= DP_ATTR_VERSION) {
                        at[na++] = (dp_alloc_attr){.name = a->name, .type = (dp_alloc_attr_type)a->type, .i = a->i, .b = a->b, .s = a->s};
                        continue;
                }
                /* list-typed: with DRAListTypeAttributes off, selectors on the
                 * device fail (eval_cb) and constraints do not see it */
                if (!c->list_types) continue;
                int r = list_attr(&m, a, &at[na]);
                if (r < 0) return alloc_oom(err, "converting device %s", dv->name);
                na++;
        }
        for (size_t i = 0; i < dv->n_capacity; i++) {
                const dp_device_capacity *k = &dv->capacity[i];
                caps[i] = (dp_alloc_capacity){.name = k->name, .value = k->value.nanos,
                                              .has_policy = k->has_request_policy, .has_default = k->has_default,
                                              .def = k->default_.nanos};
                if (k->n_valid_values) {
                        __int128 *vv = mem_alloc(&m, k->n_valid_values * sizeof(__int128));
                        if (!vv) return alloc_oom(err, "converting device %s", dv->name);
                        for (size_t j = 0; j < k->n_valid_values; j++) vv[j] = k->valid_values[j].nanos;
                        caps[i].valid_values = vv;
                        caps[i].n_valid_values = k->n_valid_values;
                }
                if (k->valid_range) {
                        caps[i].has_range = true;
                        caps[i].min = k->valid_range->min.nanos;
                        caps[i].has_max = k->valid_range->has_max;
                        caps[i].max = k->valid_range->max.nanos;
                        caps[i].has_step = k->valid_range->has_step;
                        caps[i].step = k->valid_range->step.nanos;
                }
        }
        for (size_t i = 0; i < dv->n_consumes_counters; i++) {
                const dp_counter_consumption *cp = &dv->consumes_counters[i];
                dp_alloc_counter *ctr = ctr_next;
                ctr_next += cp->n_counters;
                for (size_t j = 0; j < cp->n_counters; j++)
                        ctr[j] = (dp_alloc_counter){cp->counters[j].name, cp->counters[j].value.nanos};
                cons[i] = (dp_alloc_consumption){cp->counter_set, ctr, cp->n_counters,
                                                 (const char *const *)cp->compatibility_groups,
                                                 cp->n_compatibility_groups};
        }
        int v = cel_view(c, d);
        if (v == -ENOMEM) return alloc_oom(err, "converting device %s", dv->name);
        if (v < 0) return dp_error_set(err, -EINVAL, "device %s: an attribute of an unknown type", dv->name);
        /* taints: the device's own, then every matching DeviceTaintRule */
        size_t nt = dv->n_taints;
        dp_alloc_taint *taints = c->tmp_taints;
        for (size_t i = 0; i < dv->n_taints; i++)
                taints[i] = (dp_alloc_taint){dv->taints[i].key, dv->taints[i].value, dv->taints[i].effect};
        for (size_t i = 0; i < c->n_rules && nt < dv->n_taints + 16; i++) {
                int hit = rule_matches(c, c->rules[i], d, err);
                if (hit < 0) {
                        dp_error_prefix(err, "device %s: DeviceTaintRule %s", dv->name, c->rules[i]->meta.name);
                        return hit;
                }
                if (hit == 0) continue;
                const dp_taint *t = &c->rules[i]->taint;
                taints[nt++] = (dp_alloc_taint){t->key, t->value, t->effect};
        }
        dp_alloc_device_spec sp = {
                .name = dv->name,
                .attrs = at,
                .n_attrs = na,
                .caps = caps,
                .n_caps = dv->n_capacity,
                .consumes = cons,
                .n_consumes = dv->n_consumes_counters,
                .taints = taints,
                .n_taints = nt,
                .allow_multiple_allocations = dv->allow_multiple_allocations,
                .node_name = dv->node_name,
                .all_nodes = dv->all_nodes,
                .node_selector = conv_ns(&m, dv->node_selector),
                .binds_to_node = dv->binds_to_node,
                .binding_conditions = (const char *const *)dv->binding_conditions,
                .n_binding_conditions = dv->n_binding_conditions,
                .binding_failure_conditions = (const char *const *)dv->binding_failure_conditions,
                .n_binding_failure_conditions = dv->n_binding_failure_conditions,
                .user = d,
        };
        if (dv->node_selector && !sp.node_selector) return alloc_oom(err, "converting device %s", dv->name);
        int r = dp_alloc_add_device(c->snap, sl, &sp, NULL);
        if (r == -ENOMEM) return alloc_oom(err, "adding device %s of ResourceSlice %s", dv->name, d->slice->meta.name);
        if (r < 0) {
                char what[512];
                dp_object_describe((dp_object){.slice = (dp_resource_slice *)d->slice}, what, sizeof(what));
                return dp_error_set(err, r, "%s: device %s: %s", what, dv->name,
                                    r == -E2BIG ? "more than the API allows (attributes+capacities 32, counter consumptions 2, taints 16 with rules)"
                                                : strerror(-r));
        }
        return 0;
}

static int add_slice(dp_alloc_cluster *c, const dp_resource_slice *s, dp_error *err) {
        _cleanup_(mem_done) mem m = {0};
        dp_alloc_counter_set *sets = mem_alloc(&m, s->n_shared_counters * sizeof(*sets));
        if (!sets) return alloc_oom(err, "converting ResourceSlice %s", s->meta.name);
        for (size_t i = 0; i < s->n_shared_counters; i++) {
                const dp_counter_set *cs = &s->shared_counters[i];
                dp_alloc_counter *ctr = mem_alloc(&m, cs->n_counters * sizeof(*ctr));
                if (!ctr) return alloc_oom(err, "converting ResourceSlice %s", s->meta.name);
                for (size_t j = 0; j < cs->n_counters; j++)
                        ctr[j] = (dp_alloc_counter){cs->counters[j].name, cs->counters[j].value.nanos};
                sets[i] = (dp_alloc_counter_set){cs->name, ctr, cs->n_counters};
        }
        dp_alloc_slice_spec sp = {
                .name = s->meta.name,
                .driver = s->driver,
                .pool = s->pool_name,
                .generation = s->pool_generation,
                .slice_count = s->pool_resource_slice_count,
                .node_name = s->node_name,
                .all_nodes = s->all_nodes,
                .node_selector = conv_ns(&m, s->node_selector),
                .per_device_node_selection = s->per_device_node_selection,
                .counter_sets = sets,
                .n_counter_sets = s->n_shared_counters,
                .skip_node_operations = (const char *const *)s->skip_node_operations,
                .n_skip_node_operations = s->n_skip_node_operations,
        };
        if (s->node_selector && !sp.node_selector) return alloc_oom(err, "converting ResourceSlice %s", s->meta.name);
        uint32_t sl;
        int r = dp_alloc_add_slice(c->snap, &sp, &sl);
        if (r == -ENOMEM) return alloc_oom(err, "adding ResourceSlice %s", s->meta.name);
        if (r < 0) return dp_error_set(err, r, "ResourceSlice %s: %s", s->meta.name, strerror(-r));
        for (size_t i = 0; i < s->n_devices; i++) {
                adev *d = &c->devs[c->n_devs++];
                *d = (adev){.slice = s, .dev = &s->devices[i]};
                r = add_device(c, sl, d, err);
                if (r < 0) return r;
        }
        return 0;
}

static int mark_existing(dp_alloc_cluster *c, const dp_resource_claim *cl) {
        char holder[600];
        snprintf(holder, sizeof(holder), "%s/%s", cl->meta.namespace ? cl->meta.namespace : "", cl->meta.name);
        for (size_t i = 0; i < cl->allocation->n_results; i++) {
                const dp_device_allocation_result *r = &cl->allocation->results[i];
                if (r->has_admin_access && r->admin_access) continue;
                uint32_t dev;
                int f = dp_alloc_find_device(c->snap, r->driver, r->pool, r->device, &dev);
                if (f == -ENOMEM) return f;
                if (f < 0) continue; /* gone */
                _cleanup_(mem_done) mem m = {0};
                dp_alloc_consumed *cons = mem_alloc(&m, r->n_consumed_capacity * sizeof(*cons));
                if (!cons) return -ENOMEM;
                for (size_t k = 0; k < r->n_consumed_capacity; k++) {
                        const char *n = r->consumed_capacity[k].name;
                        char *q = strchr(n, '/') ? dp_strdup(n) : dp_asprintf("%s/%s", r->driver, n);
                        if (!q || DP_GROW(m.p, m.cap, m.n + 1) < 0) {
                                free(q);
                                return -ENOMEM;
                        }
                        m.p[m.n++] = q;
                        cons[k] = (dp_alloc_consumed){q, r->consumed_capacity[k].value.nanos};
                }
                int k = dp_alloc_mark_allocated(c->snap, dev, holder, r->share_id, cons, r->n_consumed_capacity);
                if (k < 0) return k;
        }
        return 0;
}

/* arg is "<gate>=true" or "<gate>=false": its value in *ret_on. */
static bool gate_value(const char *arg, const char *gate, bool *ret_on) {
        size_t n = strlen(gate);
        if (strncmp(arg, gate, n) != 0 || arg[n] != '=') return false;
        if (!streq(arg + n + 1, "true") && !streq(arg + n + 1, "false")) return false;
        *ret_on = streq(arg + n + 1, "true");
        return true;
}

int dp_alloc_parse_feature_gate(const char *arg, dp_alloc_cluster_options *opts) {
        assert_return(arg && opts, -EINVAL);
        bool on;
        if (gate_value(arg, "DRADeviceCompatibilityGroups", &on))
                opts->compat_groups_off = !on;
        else if (gate_value(arg, "DRAListTypeAttributes", &on))
                opts->list_type_attributes = on;
        else
                return -EINVAL;
        return 0;
}

void dp_alloc_cel_options(const dp_alloc_cluster_options *opts, dp_cel_options *ret) {
        dp_cel_options_init(ret);
        ret->list_type_attributes = opts && opts->list_type_attributes;
}

int dp_alloc_cluster_new(const dp_object_list *objs, dp_alloc_cluster **ret, dp_error *err) {
        return dp_alloc_cluster_new_opts(objs, NULL, ret, err);
}

int dp_alloc_cluster_new_opts(const dp_object_list *objs, const dp_alloc_cluster_options *opts, dp_alloc_cluster **ret,
                              dp_error *err) {
        assert_return(objs && ret, -EINVAL);
        _cleanup_(dp_alloc_cluster_freep) dp_alloc_cluster *c = calloc(1, sizeof(*c));
        if (!c) return alloc_oom(err, "building the allocation snapshot");
        c->objs = objs;
        c->snap = dp_alloc_snapshot_new();
        c->progs = dp_hashmap_new();
        c->classes = dp_hashmap_new();
        c->admin_ns = dp_hashmap_new();
        if (!c->snap || !c->progs || !c->classes || !c->admin_ns)
                return alloc_oom(err, "building the allocation snapshot");
        dp_alloc_set_selector_fn(c->snap, eval_cb, c);
        if (opts && opts->compat_groups_off) (void)dp_alloc_set_compat_groups(c->snap, false);
        c->list_types = opts && opts->list_type_attributes;
        dp_alloc_cel_options(opts, &c->cel_opts);
        size_t ndev = 0, nrules = 0;
        dp_alloc_sizes sizes = {0};
        for (size_t i = 0; i < objs->n; i++) {
                dp_object o = objs->items[i];
                if (o.hdr->kind == DP_KIND_DEVICE_TAINT_RULE) nrules++;
                if (o.hdr->kind == DP_KIND_NODE) {
                        sizes.nodes++;
                        sizes.labels += o.node->meta.n_labels;
                }
                if (o.hdr->kind != DP_KIND_RESOURCE_SLICE) continue;
                sizes.slices++;
                sizes.devices += o.slice->n_devices;
                for (size_t k = 0; k < o.slice->n_devices; k++) {
                        sizes.attributes += o.slice->devices[k].n_attributes;
                        sizes.capacities += o.slice->devices[k].n_capacity;
                        sizes.taints += o.slice->devices[k].n_taints;
                }
        }
        /* slices name nodes too: as many as the larger count (a hint only) */
        if (sizes.slices > sizes.nodes) sizes.nodes = sizes.slices;
        if (dp_alloc_reserve(c->snap, &sizes) < 0) return alloc_oom(err, "building the allocation snapshot");
        /* the rules once per snapshot, so that each device looks at the rules only */
        c->rules = calloc(nrules + 1, sizeof(*c->rules));
        if (!c->rules) return alloc_oom(err, "building the allocation snapshot");
        for (size_t i = 0; i < objs->n; i++) {
                dp_object o = objs->items[i];
                int r = 0;
                switch (o.hdr->kind) {
                case DP_KIND_DEVICE_CLASS: r = dp_hashmap_replace(c->classes, o.device_class->meta.name, o.device_class); break;
                case DP_KIND_NAMESPACE:
                        for (size_t k = 0; k < o.ns->meta.n_labels; k++)
                                if (streq(o.ns->meta.labels[k].key, DP_ALLOC_ADMIN_LABEL) &&
                                    streq(o.ns->meta.labels[k].value, "true"))
                                        r = dp_hashmap_replace(c->admin_ns, o.ns->meta.name, (void *)1);
                        break;
                case DP_KIND_NODE: {
                        _cleanup_free_ dp_alloc_label *l = calloc(o.node->meta.n_labels + 1, sizeof(*l));
                        if (!l) return alloc_oom(err, "building the allocation snapshot");
                        for (size_t k = 0; k < o.node->meta.n_labels; k++)
                                l[k] = (dp_alloc_label){o.node->meta.labels[k].key, o.node->meta.labels[k].value};
                        r = dp_alloc_add_node(c->snap, o.node->meta.name, l, o.node->meta.n_labels);
                        if (r == -EEXIST) r = 0;
                        break;
                }
                case DP_KIND_RESOURCE_SLICE: ndev += o.slice->n_devices; break;
                case DP_KIND_DEVICE_TAINT_RULE:
                        /* no selector at all selects nothing (rule_matches) */
                        if (o.taint_rule->has_device_selector) c->rules[c->n_rules++] = o.taint_rule;
                        break;
                default: break;
                }
                if (r == -ENOMEM) return alloc_oom(err, "building the allocation snapshot");
                if (r < 0) return dp_error_set(err, r, "building the allocation snapshot: %s", strerror(-r));
        }
        c->devs = calloc(ndev + 1, sizeof(adev));
        if (!c->devs) return alloc_oom(err, "building the allocation snapshot");
        for (size_t i = 0; i < objs->n; i++)
                if (objs->items[i].hdr->kind == DP_KIND_RESOURCE_SLICE) {
                        int r = add_slice(c, objs->items[i].slice, err);
                        if (r < 0) return r;
                }
        int r = dp_alloc_freeze(c->snap, err);
        if (r < 0) return r;
        for (size_t i = 0; i < objs->n; i++) {
                dp_object o = objs->items[i];
                if (o.hdr->kind == DP_KIND_RESOURCE_CLAIM && o.claim->allocation) {
                        r = mark_existing(c, o.claim);
                        if (r == -ENOMEM)
                                return alloc_oom(err, "marking the devices of ResourceClaim %s/%s as allocated",
                                                 o.claim->meta.namespace ? o.claim->meta.namespace : "",
                                                 o.claim->meta.name);
                        if (r < 0)
                                return dp_error_set(err, r, "ResourceClaim %s/%s: marking its devices as allocated: %s",
                                                    o.claim->meta.namespace ? o.claim->meta.namespace : "",
                                                    o.claim->meta.name, strerror(-r));
                }
        }
        *ret = TAKE_PTR(c);
        return 0;
}

/* ---- claims ---- */

/* A spec is one block: the spec, its mem, and the arena its arrays come from. */
typedef struct spec_block {
        dp_alloc_claim_spec spec;
        mem m;
        _Alignas(16) char arena[];
} spec_block;

dp_alloc_claim_spec *dp_alloc_claim_spec_free(dp_alloc_claim_spec *cs) {
        if (!cs) return NULL;
        mem_done(cs->mem);
        free(cs); /* the first member of its block */
        return NULL;
}

/* What dp_alloc_claim_prepare carves from the arena (MEM_ALIGN each). */
static size_t spec_bytes(dp_alloc_cluster *c, const dp_resource_claim *cl) {
        const dp_resource_claim_spec *sp = &cl->spec;
        size_t n = MEM_ALIGN(sp->n_requests * sizeof(dp_alloc_request)) +
                   MEM_ALIGN(sp->n_constraints * sizeof(dp_alloc_constraint));
        for (size_t i = 0; i < sp->n_requests; i++) {
                const dp_device_request *r = &sp->requests[i];
                size_t k = r->exactly ? 1 : r->n_first_available;
                n += MEM_ALIGN(k * sizeof(dp_alloc_subrequest));
                for (size_t j = 0; j < k; j++) {
                        const dp_device_request_spec *rs = r->exactly ? r->exactly : &r->first_available[j].spec;
                        const dp_device_class *cls =
                                rs->device_class_name ? dp_hashmap_get(c->classes, rs->device_class_name) : NULL;
                        n += MEM_ALIGN((cls ? cls->n_selectors : 0) * sizeof(uint32_t)) +
                             MEM_ALIGN(rs->n_selectors * sizeof(uint32_t)) +
                             MEM_ALIGN(rs->n_tolerations * sizeof(dp_alloc_toleration)) +
                             MEM_ALIGN(rs->n_capacity_requests * sizeof(dp_alloc_capacity_request));
                }
        }
        return n;
}

/* Prefix err with the claim and field path; returns r (dp_error_prefix()
 * alone would answer -EINVAL for a NULL err). */
static int claim_error(const dp_resource_claim *cl, int r, dp_error *err, const char *path) {
        dp_error_prefix(err, "ResourceClaim %s/%s: %s", cl->meta.namespace ? cl->meta.namespace : "", cl->meta.name,
                        path);
        return r;
}

static int oom_preparing(const dp_resource_claim *cl, dp_error *err) {
        return alloc_oom(err, "preparing ResourceClaim %s/%s", cl->meta.namespace ? cl->meta.namespace : "",
                         cl->meta.name);
}

static int prep_sub(dp_alloc_cluster *c, mem *m, const dp_resource_claim *cl, const dp_device_request_spec *rs,
                    const char *name, dp_alloc_subrequest *o, size_t ri, bool fa, size_t si, dp_error *err) {
        const dp_device_class *cls = rs->device_class_name ? dp_hashmap_get(c->classes, rs->device_class_name) : NULL;
        *o = (dp_alloc_subrequest){.name = name, .device_class = rs->device_class_name,
                                   .all = rs->allocation_mode == DP_ALLOCATION_MODE_ALL,
                                   .count = rs->count > 0 ? rs->count : 1,
                                   .admin_access = rs->has_admin_access && rs->admin_access,
                                   .class_missing = !cls};
        uint32_t *cs = mem_alloc(m, (cls ? cls->n_selectors : 0) * sizeof(uint32_t));
        uint32_t *rsel = mem_alloc(m, rs->n_selectors * sizeof(uint32_t));
        dp_alloc_toleration *tol = mem_alloc(m, rs->n_tolerations * sizeof(*tol));
        dp_alloc_capacity_request *cap = mem_alloc(m, rs->n_capacity_requests * sizeof(*cap));
        if (!cs || !rsel || !tol || !cap) return oom_preparing(cl, err);
        for (size_t i = 0; cls && i < cls->n_selectors; i++) {
                int r = selector_id(c, cls->selectors[i].cel_expression, &cs[i], err);
                if (r < 0) {
                        dp_error_prefix(err, "DeviceClass %s: spec.selectors[%zu].cel.expression", cls->meta.name, i);
                        return r;
                }
        }
        for (size_t i = 0; i < rs->n_selectors; i++) {
                int r = selector_id(c, rs->selectors[i].cel_expression, &rsel[i], err);
                if (r < 0) {
                        char path[200];
                        if (fa)
                                snprintf(path, sizeof(path),
                                         "spec.devices.requests[%zu].firstAvailable[%zu].selectors[%zu].cel.expression", ri, si, i);
                        else
                                snprintf(path, sizeof(path), "spec.devices.requests[%zu].exactly.selectors[%zu].cel.expression",
                                         ri, i);
                        return claim_error(cl, r, err, path);
                }
        }
        for (size_t i = 0; i < rs->n_tolerations; i++) {
                const dp_toleration *t = &rs->tolerations[i];
                tol[i] = (dp_alloc_toleration){t->key, t->op, t->value, t->effect, t->has_toleration_seconds,
                                               t->toleration_seconds};
        }
        for (size_t i = 0; i < rs->n_capacity_requests; i++)
                cap[i] = (dp_alloc_capacity_request){rs->capacity_requests[i].name, rs->capacity_requests[i].value.nanos};
        o->class_selectors = cs;
        o->n_class_selectors = cls ? cls->n_selectors : 0;
        o->selectors = rsel;
        o->n_selectors = rs->n_selectors;
        o->tolerations = tol;
        o->n_tolerations = rs->n_tolerations;
        o->capacity = cap;
        o->n_capacity = rs->n_capacity_requests;
        return 0;
}

int dp_alloc_claim_prepare(dp_alloc_cluster *c, const dp_resource_claim *cl, dp_alloc_claim_spec **ret, dp_error *err) {
        assert_return(c && cl && ret, -EINVAL);
        size_t arena = spec_bytes(c, cl);
        spec_block *b = calloc(1, sizeof(spec_block) + arena);
        if (!b) return oom_preparing(cl, err);
        b->m = (mem){.arena = b->arena, .arena_left = arena};
        b->spec.mem = &b->m;
        _cleanup_(dp_alloc_claim_spec_freep) dp_alloc_claim_spec *cs = &b->spec;
        mem *m = cs->mem;
        const dp_resource_claim_spec *sp = &cl->spec;
        dp_alloc_request *reqs = mem_alloc(m, sp->n_requests * sizeof(*reqs));
        dp_alloc_constraint *cons = mem_alloc(m, sp->n_constraints * sizeof(*cons));
        if (!reqs || !cons) return oom_preparing(cl, err);
        for (size_t i = 0; i < sp->n_requests; i++) {
                const dp_device_request *r = &sp->requests[i];
                size_t n = r->exactly ? 1 : r->n_first_available;
                dp_alloc_subrequest *subs = mem_alloc(m, n * sizeof(*subs));
                if (!subs) return oom_preparing(cl, err);
                for (size_t k = 0; k < n; k++) {
                        int q = r->exactly ? prep_sub(c, m, cl, r->exactly, NULL, &subs[k], i, false, 0, err)
                                           : prep_sub(c, m, cl, &r->first_available[k].spec, r->first_available[k].name,
                                                      &subs[k], i, true, k, err);
                        if (q < 0) return q;
                }
                reqs[i] = (dp_alloc_request){r->name, !r->exactly, subs, n};
        }
        for (size_t i = 0; i < sp->n_constraints; i++) {
                const dp_device_constraint *ct = &sp->constraints[i];
                cons[i] = (dp_alloc_constraint){(const char *const *)ct->requests, ct->n_requests, ct->match_attribute,
                                                ct->distinct_attribute};
        }
        const char *ns = cl->meta.namespace ? cl->meta.namespace : "default";
        cs->claim = (dp_alloc_claim){ns, cl->meta.name, cl->meta.uid,
                                     dp_hashmap_contains(c->admin_ns, ns),
                                     reqs, sp->n_requests, cons, sp->n_constraints};
        cs->source = cl;
        *ret = TAKE_PTR(cs);
        return 0;
}

/* ---- results ---- */

/* An empty list stays NULL, as the allocator's results are compared with NULL. */
static char **strv_dup(const char *const *v, size_t n) { return n ? dp_strv_copy_n((char *const *)v, n) : NULL; }

static const dp_device_request_spec *model_spec(const dp_resource_claim *cl, uint32_t ri, uint32_t si) {
        const dp_device_request *r = &cl->spec.requests[ri];
        return r->exactly ? r->exactly : &r->first_available[si].spec;
}

static int copy_config(dp_allocation_config *o, dp_config_source src, const dp_device_config *cf, const char *only) {
        o->source = src;
        if (only) {
                const char *one[1] = {only};
                o->config.requests = strv_dup(one, 1);
                o->config.n_requests = 1;
        } else {
                o->config.requests = strv_dup((const char *const *)cf->requests, cf->n_requests);
                o->config.n_requests = cf->n_requests;
        }
        o->config.driver = dp_strdup(cf->driver ? cf->driver : "");
        o->config.parameters_json = dp_strdup(cf->parameters_json ? cf->parameters_json : "{}");
        if ((o->config.n_requests && !o->config.requests) || !o->config.driver || !o->config.parameters_json)
                return -ENOMEM;
        return 0;
}

static int set_requirement(dp_node_selector_requirement *o, const dp_alloc_ns_req *r) {
        o->key = dp_strdup(r->key);
        o->op = (dp_node_selector_op)r->op;
        o->values = strv_dup(r->values, r->n_values);
        o->n_values = r->n_values;
        return o->key && (!r->n_values || o->values) ? 0 : -ENOMEM;
}

static int node_selector(const dp_alloc_result *r, dp_node_selector **ret) {
        if (r->nodes == DP_ALLOC_NODES_ALL) return 0;
        dp_node_selector *ns = calloc(1, sizeof(*ns));
        if (!ns) return -ENOMEM;
        *ret = ns;
        ns->terms = calloc(1, sizeof(dp_node_selector_term));
        if (!ns->terms) return -ENOMEM;
        ns->n_terms = 1;
        dp_node_selector_term *t = &ns->terms[0];
        if (r->nodes == DP_ALLOC_NODES_NAME) {
                const char *v[1] = {r->node_name};
                dp_alloc_ns_req f = {"metadata.name", DP_ALLOC_NS_IN, v, 1};
                t->match_fields = calloc(1, sizeof(*t->match_fields));
                if (!t->match_fields) return -ENOMEM;
                t->n_match_fields = 1;
                return set_requirement(&t->match_fields[0], &f);
        }
        t->match_expressions = calloc(r->n_term_exprs + 1, sizeof(*t->match_expressions));
        t->match_fields = calloc(r->n_term_fields + 1, sizeof(*t->match_fields));
        if (!t->match_expressions || !t->match_fields) return -ENOMEM;
        for (size_t i = 0; i < r->n_term_exprs; i++, t->n_match_expressions++)
                if (set_requirement(&t->match_expressions[i], &r->term_exprs[i]) < 0) return -ENOMEM;
        for (size_t i = 0; i < r->n_term_fields; i++, t->n_match_fields++)
                if (set_requirement(&t->match_fields[i], &r->term_fields[i]) < 0) return -ENOMEM;
        return 0;
}

static bool config_applies(const dp_device_config *cf, const dp_alloc_result *r) {
        if (cf->n_requests == 0) return true;
        for (size_t i = 0; i < cf->n_requests; i++)
                for (size_t k = 0; k < r->n_devices; k++) {
                        const char *name = r->devices[k].request, *slash = strchr(name, '/');
                        if (streq(cf->requests[i], name)) return true;
                        if (slash && strlen(cf->requests[i]) == (size_t)(slash - name) &&
                            strncmp(cf->requests[i], name, (size_t)(slash - name)) == 0)
                                return true;
                }
        return false;
}

static int oom_writing(const dp_resource_claim *cl, dp_error *err) {
        return alloc_oom(err, "writing the allocation of ResourceClaim %s/%s",
                         cl->meta.namespace ? cl->meta.namespace : "", cl->meta.name);
}

int dp_alloc_result_to_model(dp_alloc_cluster *c, const dp_alloc_claim_spec *cs, const dp_alloc_result *r,
                             dp_allocation_result **ret, dp_error *err) {
        assert_return(c && cs && r && ret, -EINVAL);
        const dp_resource_claim *cl = cs->source;
        _cleanup_(dp_allocation_result_freep) dp_allocation_result *a = calloc(1, sizeof(*a));
        if (!a) return oom_writing(cl, err);
        /* exactly n (kept for every claim until the report is printed) */
        a->results = calloc(r->n_devices ? r->n_devices : 1, sizeof(*a->results));
        if (!a->results) return oom_writing(cl, err);
        for (size_t i = 0; i < r->n_devices; i++) {
                const dp_alloc_device_result *d = &r->devices[i];
                /* counted before it is filled, so a failure frees what it holds */
                dp_device_allocation_result *o = &a->results[a->n_results++];
                const dp_device_request_spec *rs = model_spec(cl, d->request_index, d->sub_index);
                const adev *ad = &c->devs[d->device];
                o->request = dp_strdup(d->request);
                o->driver = dp_strdup(d->driver);
                o->pool = dp_strdup(d->pool);
                o->device = dp_strdup(d->device_name);
                if (!o->request || !o->driver || !o->pool || !o->device) return oom_writing(cl, err);
                if (d->admin_access) o->has_admin_access = o->admin_access = true;
                if (rs->n_tolerations) {
                        o->tolerations = calloc(rs->n_tolerations, sizeof(*o->tolerations));
                        if (!o->tolerations) return oom_writing(cl, err);
                        for (size_t k = 0; k < rs->n_tolerations; k++, o->n_tolerations++)
                                if (dp_toleration_copy(&o->tolerations[k], &rs->tolerations[k]) < 0)
                                        return oom_writing(cl, err);
                }
                if (d->share_id[0] && !(o->share_id = dp_strdup(d->share_id))) return oom_writing(cl, err);
                if (d->n_consumed) {
                        o->consumed_capacity = calloc(d->n_consumed, sizeof(*o->consumed_capacity));
                        if (!o->consumed_capacity) return oom_writing(cl, err);
                        for (size_t k = 0; k < d->n_consumed && k < ad->dev->n_capacity; k++, o->n_consumed_capacity++) {
                                o->consumed_capacity[k].name = dp_strdup(ad->dev->capacity[k].name);
                                if (!o->consumed_capacity[k].name) return oom_writing(cl, err);
                                o->consumed_capacity[k].value = (dp_quantity){d->consumed[k].value,
                                                                              ad->dev->capacity[k].value.format};
                        }
                }
                o->binding_conditions = strv_dup(d->binding_conditions, d->n_binding_conditions);
                o->n_binding_conditions = d->n_binding_conditions;
                o->binding_failure_conditions = strv_dup(d->binding_failure_conditions, d->n_binding_failure_conditions);
                o->n_binding_failure_conditions = d->n_binding_failure_conditions;
                o->skip_node_operations = strv_dup(d->skip_node_operations, d->n_skip_node_operations);
                o->n_skip_node_operations = d->n_skip_node_operations;
                if ((d->n_binding_conditions && !o->binding_conditions) ||
                    (d->n_binding_failure_conditions && !o->binding_failure_conditions) ||
                    (d->n_skip_node_operations && !o->skip_node_operations))
                        return oom_writing(cl, err);
        }
        /* config: each allocated request's class configs, then the claim's */
        size_t ncfg = cl->spec.n_config;
        for (size_t i = 0; i < cl->spec.n_requests; i++)
                for (size_t k = 0; k < r->n_devices; k++)
                        if (r->devices[k].request_index == i) {
                                const dp_device_request_spec *rs = model_spec(cl, (uint32_t)i, r->devices[k].sub_index);
                                const dp_device_class *cls =
                                        rs->device_class_name ? dp_hashmap_get(c->classes, rs->device_class_name) : NULL;
                                if (cls) ncfg += cls->n_config;
                                break;
                        }
        a->config = calloc(ncfg + 1, sizeof(*a->config));
        if (!a->config) return oom_writing(cl, err);
        for (size_t i = 0; i < cl->spec.n_requests; i++)
                for (size_t k = 0; k < r->n_devices; k++) {
                        if (r->devices[k].request_index != i) continue;
                        const dp_device_request_spec *rs = model_spec(cl, (uint32_t)i, r->devices[k].sub_index);
                        const dp_device_class *cls =
                                rs->device_class_name ? dp_hashmap_get(c->classes, rs->device_class_name) : NULL;
                        for (size_t j = 0; cls && j < cls->n_config; j++)
                                if (copy_config(&a->config[a->n_config++], DP_CONFIG_SOURCE_CLASS, &cls->config[j],
                                                r->devices[k].request) < 0)
                                        return oom_writing(cl, err);
                        break;
                }
        for (size_t j = 0; j < cl->spec.n_config; j++)
                if (config_applies(&cl->spec.config[j], r) &&
                    copy_config(&a->config[a->n_config++], DP_CONFIG_SOURCE_CLAIM, &cl->spec.config[j], NULL) < 0)
                        return oom_writing(cl, err);
        if (node_selector(r, &a->node_selector) < 0) return oom_writing(cl, err);
        *ret = TAKE_PTR(a);
        return 0;
}
