/* SPDX-License-Identifier: Apache-2.0
 * slices.c — inventory -> ResourceSlices, splitting, taints, generations. */
#include <stdio.h>

#include "base/strbuf.h"
#include "doc/builder.h"
#include "dra/slices.h"
#include "model/validate.h"

const char *dp_dra_taint_effect_to_string(dp_dra_taint_effect e) {
        switch (e) {
        case DP_DRA_TAINT_NO_SCHEDULE: return "NoSchedule";
        case DP_DRA_TAINT_NO_EXECUTE: return "NoExecute";
        case DP_DRA_TAINT_NONE: return "None";
        case DP_DRA_TAINT_OFF: return "off";
        }
        return "off";
}

int dp_dra_taint_effect_from_string(const char *s, dp_dra_taint_effect *ret) {
        assert_return(s && ret, -EINVAL);
        for (int e = DP_DRA_TAINT_NO_SCHEDULE; e <= DP_DRA_TAINT_OFF; e++)
                if (streq(s, dp_dra_taint_effect_to_string((dp_dra_taint_effect)e))) {
                        *ret = (dp_dra_taint_effect)e;
                        return 0;
                }
        return -EINVAL;
}

void dp_dra_slices_free(dp_resource_slice **v, size_t n) {
        if (!v) return;
        for (size_t i = 0; i < n; i++)
                dp_resource_slice_free(v[i]);
        free(v);
}

static int quantities(const dp_dra_quantity *src, size_t n, dp_named_quantity **ret, size_t *ret_n, dp_error *err) {
        if (!n) return 0;
        dp_named_quantity *v = calloc(n, sizeof(*v));
        if (!v) return dp_error_set(err, -ENOMEM, "out of memory");
        *ret = v;
        for (size_t i = 0; i < n; i++) {
                dp_error e = DP_ERROR_INIT;
                if (!(v[i].name = dp_strdup(src[i].name))) return dp_error_set(err, -ENOMEM, "out of memory");
                (*ret_n)++;
                if (dp_quantity_parse(src[i].value, &v[i].value, &e) < 0)
                        return dp_error_set(err, -EINVAL, "%s: %s", src[i].name, e.msg);
        }
        return 0;
}

static dp_dra_taint_effect effect_for(const dp_dra_slice_options *o, const char *cls) {
        for (size_t i = 0; i < o->n_rules; i++)
                if (streq_ptr(o->rules[i].fault_class, cls)) return o->rules[i].effect;
        return o->default_effect;
}

static int device_fill(dp_device *d, const dp_dra_inventory *inv, const dp_dra_device *src,
                       const dp_dra_slice_options *o, dp_error *err) {
        if (!(d->name = dp_strdup(src->name))) return -ENOMEM;
        if (src->n_attrs && !(d->attributes = calloc(src->n_attrs, sizeof(*d->attributes)))) return -ENOMEM;
        for (size_t i = 0; i < src->n_attrs; i++) {
                const dp_dra_attr *a = &src->attrs[i];
                dp_device_attribute *x = &d->attributes[i];
                d->n_attributes++;
                if (!(x->name = dp_strdup(a->name))) return -ENOMEM;
                switch (a->type) {
                case DP_DRA_VAL_INT: x->type = DP_ATTR_INT, x->i = a->i; break;
                case DP_DRA_VAL_BOOL: x->type = DP_ATTR_BOOL, x->b = a->b; break;
                case DP_DRA_VAL_STRING: x->type = DP_ATTR_STRING; break;
                case DP_DRA_VAL_VERSION: x->type = DP_ATTR_VERSION; break;
                }
                if ((a->type == DP_DRA_VAL_STRING || a->type == DP_DRA_VAL_VERSION) &&
                    !(x->s = dp_strdup(a->s ? a->s : "")))
                        return -ENOMEM;
        }
        if (src->n_capacity && !(d->capacity = calloc(src->n_capacity, sizeof(*d->capacity)))) return -ENOMEM;
        for (size_t i = 0; i < src->n_capacity; i++) {
                dp_device_capacity *c = &d->capacity[i];
                dp_error e = DP_ERROR_INIT;
                d->n_capacity++;
                if (!(c->name = dp_strdup(src->capacity[i].name))) return -ENOMEM;
                if (dp_quantity_parse(src->capacity[i].value, &c->value, &e) < 0)
                        return dp_error_set(err, -EINVAL, "device %s: capacity %s: %s", src->name, c->name, e.msg);
        }
        if (src->n_consumes && !(d->consumes_counters = calloc(src->n_consumes, sizeof(*d->consumes_counters))))
                return -ENOMEM;
        for (size_t i = 0; i < src->n_consumes; i++) {
                const dp_dra_consumption *s = &src->consumes[i];
                dp_counter_consumption *c = &d->consumes_counters[i];
                d->n_consumes_counters++;
                if (!(c->counter_set = dp_strdup(s->counter_set))) return -ENOMEM;
                int r = quantities(s->counters, s->n_counters, &c->counters, &c->n_counters, err);
                if (r < 0) return r;
                if (s->n_groups && !(c->compatibility_groups = calloc(s->n_groups, sizeof(char *)))) return -ENOMEM;
                for (size_t j = 0; j < s->n_groups; j++) {
                        if (!(c->compatibility_groups[j] = dp_strdup(s->groups[j]))) return -ENOMEM;
                        c->n_compatibility_groups++;
                }
        }
        d->allow_multiple_allocations = src->allow_multiple;
        if (!src->healthy) {
                dp_dra_taint_effect e = effect_for(o, src->fault_class);
                if (e != DP_DRA_TAINT_OFF) {
                        if (!(d->taints = calloc(1, sizeof(*d->taints)))) return -ENOMEM;
                        d->n_taints = 1;
                        d->taints[0].key =
                                dp_asprintf("%s/%s", inv->driver, src->fault_class ? src->fault_class : "unhealthy");
                        d->taints[0].effect = dp_strdup(dp_dra_taint_effect_to_string(e));
                        if (!d->taints[0].key || !d->taints[0].effect) return -ENOMEM;
                }
        }
        return 0;
}

static dp_resource_slice *slice_new(const dp_dra_inventory *inv, size_t k, int64_t generation) {
        dp_resource_slice *s = calloc(1, sizeof(*s));
        if (!s) return NULL;
        s->hdr.kind = DP_KIND_RESOURCE_SLICE;
        s->meta.name = dp_asprintf("%s-%s-%zu", inv->node_name, inv->driver, k);
        s->driver = dp_strdup(inv->driver);
        s->pool_name = dp_strdup(inv->pool);
        s->node_name = dp_strdup(inv->node_name);
        s->pool_generation = generation;
        if (!s->meta.name || !s->driver || !s->pool_name || !s->node_name) return dp_resource_slice_free(s);
        return s;
}

/* Whether the device makes its slice subject to the 64-device limit. */
static bool limited(const dp_dra_device *d, const dp_dra_slice_options *o) {
        return d->n_consumes || (!d->healthy && effect_for(o, d->fault_class) != DP_DRA_TAINT_OFF);
}

typedef struct out {
        dp_resource_slice **v;
        size_t n, cap;
} out;

static int out_add(out *o, dp_resource_slice *s) {
        if (!s) return -ENOMEM;
        if (DP_GROW(o->v, o->cap, o->n + 1) < 0) {
                dp_resource_slice_free(s);
                return -ENOMEM;
        }
        o->v[o->n++] = s;
        return 0;
}

static int build(const dp_dra_inventory *inv, const dp_dra_slice_options *o, out *res, dp_error *err) {
        int r;
        /* counter sets, DP_RESOURCE_SLICE_MAX_COUNTER_SETS per slice */
        for (size_t i = 0; i < inv->n_counter_sets; i += DP_RESOURCE_SLICE_MAX_COUNTER_SETS) {
                size_t n = DP_MIN(inv->n_counter_sets - i, (size_t)DP_RESOURCE_SLICE_MAX_COUNTER_SETS);
                if ((r = out_add(res, slice_new(inv, res->n, o->generation))) < 0) return r;
                dp_resource_slice *s = res->v[res->n - 1];
                if (!(s->shared_counters = calloc(n, sizeof(*s->shared_counters)))) return -ENOMEM;
                for (size_t j = 0; j < n; j++) {
                        const dp_dra_counter_set *cs = &inv->counter_sets[i + j];
                        dp_counter_set *x = &s->shared_counters[j];
                        s->n_shared_counters++;
                        if (!(x->name = dp_strdup(cs->name))) return -ENOMEM;
                        r = quantities(cs->counters, cs->n_counters, &x->counters, &x->n_counters, err);
                        if (r < 0) return dp_error_prefix(err, "counter set %s", cs->name);
                }
        }
        /* devices, greedy under the per-slice limit */
        for (size_t i = 0; i < inv->n_devices;) {
                size_t n = 0;
                bool lim = false;
                while (i + n < inv->n_devices) {
                        bool l = lim || limited(&inv->devices[i + n], o);
                        size_t max = l ? DP_RESOURCE_SLICE_MAX_DEVICES_WITH_TAINTS_OR_CONSUMES_COUNTERS
                                       : DP_RESOURCE_SLICE_MAX_DEVICES;
                        if (n + 1 > max) break;
                        lim = l;
                        n++;
                }
                if ((r = out_add(res, slice_new(inv, res->n, o->generation))) < 0) return r;
                dp_resource_slice *s = res->v[res->n - 1];
                if (!(s->devices = calloc(n, sizeof(*s->devices)))) return -ENOMEM;
                for (size_t j = 0; j < n; j++) {
                        s->n_devices++;
                        r = device_fill(&s->devices[j], inv, &inv->devices[i + j], o, err);
                        if (r == -ENOMEM) return dp_error_set(err, r, "out of memory");
                        if (r < 0) return r;
                }
                i += n;
        }
        /* a node without devices still publishes its (empty) pool */
        if (res->n == 0 && (r = out_add(res, slice_new(inv, 0, o->generation))) < 0) return r;
        for (size_t i = 0; i < res->n; i++) {
                res->v[i]->pool_resource_slice_count = (int64_t)res->n;
                dp_object obj = {.slice = res->v[i]};
                if ((r = dp_object_validate(obj, err)) < 0) return r;
        }
        return 0;
}

int dp_dra_slices_build(const dp_dra_inventory *inv, const dp_dra_slice_options *o, dp_resource_slice ***ret,
                        size_t *ret_n, dp_error *err) {
        assert_return(inv && ret && ret_n, -EINVAL);
        dp_dra_slice_options def = DP_DRA_SLICE_OPTIONS_INIT;
        if (!o) o = &def;
        for (size_t i = 0; i < o->n_rules; i++) {
                dp_error e = DP_ERROR_INIT;
                char key[512];
                snprintf(key, sizeof(key), "%s/%s", inv->driver,
                         o->rules[i].fault_class ? o->rules[i].fault_class : "");
                if (dp_validate_qualified_name(key, &e) < 0)
                        return dp_error_set(err, -EINVAL, "taint rule %zu: fault class \"%s\": %s", i,
                                            o->rules[i].fault_class ? o->rules[i].fault_class : "", e.msg);
        }
        out res = {0};
        int r = build(inv, o, &res, err);
        if (r < 0) {
                if (r == -ENOMEM) dp_error_set(err, r, "out of memory");
                dp_dra_slices_free(res.v, res.n);
                return r;
        }
        *ret = res.v;
        *ret_n = res.n;
        return 0;
}

int dp_dra_slices_emit(dp_resource_slice *const *v, size_t n, dp_doc_format fmt, dp_strbuf *out_buf) {
        assert_return(out_buf && (v || !n), -EINVAL);
        _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
        if (!set) return -ENOMEM;
        if (fmt == DP_DOC_YAML) {
                for (size_t i = 0; i < n; i++) {
                        dp_doc_node *x = dp_resource_slice_encode(set, v[i]);
                        if (!x) return -ENOMEM;
                        dp_strbuf_puts(out_buf, "---\n");
                        dp_doc_emit(out_buf, x, fmt);
                }
        } else {
                dp_doc_builder b = DP_DOC_BUILDER_INIT(set);
                dp_doc_node *list = dp_doc_b_map(&b), *items = dp_doc_b_seq(&b);
                dp_doc_b_put_str(&b, list, "apiVersion", "v1");
                dp_doc_b_put(&b, list, "items", items);
                dp_doc_b_put_str(&b, list, "kind", "List");
                for (size_t i = 0; b.r >= 0 && i < n; i++)
                        dp_doc_b_push(&b, items, dp_resource_slice_encode(set, v[i]));
                if (b.r < 0) return b.r;
                dp_doc_emit(out_buf, list, fmt);
                if (fmt == DP_DOC_JSON_PRETTY) dp_strbuf_putc(out_buf, '\n');
        }
        return dp_strbuf_failed(out_buf) ? -ENOMEM : 0;
}

const dp_device *dp_dra_slices_find_device(dp_resource_slice *const *v, size_t n, const char *pool, const char *name,
                                           const dp_resource_slice **ret_slice) {
        for (size_t i = 0; i < n; i++) {
                if (pool && !streq_ptr(v[i]->pool_name, pool)) continue;
                const dp_device *d = dp_resource_slice_find_device(v[i], name);
                if (d) {
                        if (ret_slice) *ret_slice = v[i];
                        return d;
                }
        }
        return NULL;
}

/* ---- publisher ---- */

struct dp_dra_publisher {
        int64_t generation;
        bool published;
        dp_resource_slice **slices;
        size_t n;
        char *digest; /* compact JSON of the slices at generation 0 */
};

dp_dra_publisher *dp_dra_publisher_new(int64_t first_generation) {
        if (first_generation < 1) first_generation = 1;
        dp_dra_publisher *p = calloc(1, sizeof(*p));
        if (p) p->generation = first_generation;
        return p;
}

dp_dra_publisher *dp_dra_publisher_free(dp_dra_publisher *p) {
        if (!p) return NULL;
        dp_dra_slices_free(p->slices, p->n);
        free(p->digest);
        free(p);
        return NULL;
}

static char *digest(const dp_dra_inventory *inv, const dp_dra_slice_options *o, dp_error *err) {
        dp_dra_slice_options x = *o;
        x.generation = 0;
        dp_resource_slice **v = NULL;
        size_t n = 0;
        if (dp_dra_slices_build(inv, &x, &v, &n, err) < 0) return NULL;
        dp_strbuf sb = DP_STRBUF_INIT;
        int r = dp_dra_slices_emit(v, n, DP_DOC_JSON_COMPACT, &sb);
        dp_dra_slices_free(v, n);
        if (r < 0) {
                dp_strbuf_done(&sb);
                dp_error_set(err, -ENOMEM, "out of memory");
                return NULL;
        }
        char *s = dp_strbuf_steal(&sb);
        if (!s) dp_error_set(err, -ENOMEM, "out of memory");
        return s;
}

int dp_dra_publisher_update(dp_dra_publisher *p, const dp_dra_inventory *inv, const dp_dra_slice_options *o,
                            dp_error *err) {
        assert_return(p && inv, -EINVAL);
        dp_dra_slice_options def = DP_DRA_SLICE_OPTIONS_INIT;
        if (!o) o = &def;
        char *d = digest(inv, o, err);
        if (!d) return err && err->code ? err->code : -ENOMEM;
        if (p->published && streq(d, p->digest)) {
                free(d);
                return 0;
        }
        int64_t gen = p->published ? p->generation + 1 : p->generation;
        dp_dra_slice_options x = *o;
        x.generation = gen;
        dp_resource_slice **v = NULL;
        size_t n = 0;
        int r = dp_dra_slices_build(inv, &x, &v, &n, err);
        if (r < 0) {
                free(d);
                return r;
        }
        dp_dra_slices_free(p->slices, p->n);
        free(p->digest);
        p->slices = v;
        p->n = n;
        p->digest = d;
        p->generation = gen;
        p->published = true;
        return 1;
}

dp_resource_slice *const *dp_dra_publisher_slices(const dp_dra_publisher *p, size_t *ret_n) {
        if (ret_n) *ret_n = p ? p->n : 0;
        return p ? p->slices : NULL;
}

int64_t dp_dra_publisher_generation(const dp_dra_publisher *p) { return p ? p->generation : 0; }
