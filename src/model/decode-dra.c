/* SPDX-License-Identifier: Apache-2.0
 *
 * decode-dra.c — resource.k8s.io kinds: ResourceSlice, DeviceClass,
 * ResourceClaim, ResourceClaimTemplate, DeviceTaintRule. v1beta1's `basic`
 * device wrapper and flat requests are normalised into the v1 shape.
 */
#include "model/decode-internal.h"

static const char *const top_level[] = {"apiVersion", "kind", "metadata", NULL};

static int oom(dctx *c) { return dp_error_set(c->err, -ENOMEM, "out of memory"); }

/* ---- devices ---- */

static int decode_attribute_value(dctx *c, const dp_doc_node *n, dp_device_attribute *a) {
        static const char *const value_keys[] = {"int",   "bool",    "string",   "version", "ints",
                                                 "bools", "strings", "versions", NULL};
        /* Refuse a second value before decoding it: the list forms share `n`. */
        if (n && n->type == DP_DOC_MAP) {
                int values = 0;
                for (size_t i = 0; i < n->n; i++)
                        values += in_list(n->pairs[i].key, value_keys) && !dp_doc_is_null(n->pairs[i].value);
                if (values > 1)
                        return dfail(c, n, -EINVAL,
                                     "exactly one of int, bool, string, version (or ints, bools, strings, "
                                     "versions) must be set");
        }
        int set = 0;
        DECODE_FIELDS(
                c, n, k, v,
                if (streq(k, "int")) {
                        r = get_int64(c, v, &a->i);
                        a->type = DP_ATTR_INT;
                        set += !dp_doc_is_null(v);
                } else if (streq(k, "bool")) {
                        r = get_bool(c, v, &a->b);
                        a->type = DP_ATTR_BOOL;
                        set += !dp_doc_is_null(v);
                } else if (streq(k, "string")) {
                        r = get_str(c, v, &a->s);
                        a->type = DP_ATTR_STRING;
                        set += !dp_doc_is_null(v);
                } else if (streq(k, "version")) {
                        r = get_str(c, v, &a->s);
                        a->type = DP_ATTR_VERSION;
                        set += !dp_doc_is_null(v);
                } else if (streq(k, "strings") || streq(k, "versions")) {
                        r = get_strv(c, v, &a->strs, &a->n);
                        a->type = streq(k, "strings") ? DP_ATTR_STRINGS : DP_ATTR_VERSIONS;
                        set += !dp_doc_is_null(v);
                } else if (streq(k, "ints") || streq(k, "bools")) {
                        bool ints = streq(k, "ints");
                        a->type = ints ? DP_ATTR_INTS : DP_ATTR_BOOLS;
                        set += !dp_doc_is_null(v);
                        r = expect_seq(c, v);
                        if (r > 0 && v->n) {
                                if (ints)
                                        a->ints = calloc(v->n, sizeof(int64_t));
                                else
                                        a->bools = calloc(v->n, sizeof(bool));
                                if (!a->ints && !a->bools)
                                        r = oom(c);
                                else
                                        a->n = v->n;
                                for (size_t j = 0; r >= 0 && j < v->n; j++) {
                                        size_t m = path_index(c, j);
                                        if (dp_doc_is_null(v->items[j]))
                                                r = dfail(c, v->items[j], -EINVAL, "null entry");
                                        else if (ints)
                                                r = get_int64(c, v->items[j], &a->ints[j]);
                                        else
                                                r = get_bool(c, v->items[j], &a->bools[j]);
                                        if (r >= 0) path_pop(c, m);
                                }
                        }
                });
        if (set != 1)
                return dfail(c, n, -EINVAL,
                             "exactly one of int, bool, string, version (or ints, bools, strings, "
                             "versions) must be set");
        return 0;
}

static int decode_attributes(dctx *c, const dp_doc_node *n, dp_device *d) {
        int r = expect_map(c, n);
        if (r <= 0) return r;
        if (n->n == 0) return 0;
        d->attributes = calloc(n->n, sizeof(dp_device_attribute));
        if (!d->attributes) return oom(c);
        d->n_attributes = n->n;
        for (size_t i = 0; i < n->n; i++) {
                size_t m = path_key(c, n->pairs[i].key);
                d->attributes[i].name = strdup(n->pairs[i].key);
                if (!d->attributes[i].name) return oom(c);
                if (dp_doc_is_null(n->pairs[i].value))
                        return dfail(c, n->pairs[i].value, -EINVAL,
                                     "exactly one of int, bool, string, version must be set");
                r = decode_attribute_value(c, n->pairs[i].value, &d->attributes[i]);
                if (r < 0) return r;
                path_pop(c, m);
        }
        return 0;
}

static int decode_range(dctx *c, const dp_doc_node *n, dp_capacity_range *rg) {
        bool have_min = false;
        DECODE_FIELDS(
                c, n, k, v,
                if (streq(k, "min")) {
                        r = get_quantity(c, v, &rg->min);
                        have_min = !dp_doc_is_null(v);
                } else if (streq(k, "max")) {
                        r = get_quantity(c, v, &rg->max);
                        rg->has_max = !dp_doc_is_null(v);
                } else if (streq(k, "step")) {
                        r = get_quantity(c, v, &rg->step);
                        rg->has_step = !dp_doc_is_null(v);
                });
        if (!have_min) return dfail(c, n, -EINVAL, "min: required");
        return 0;
}

static int decode_request_policy(dctx *c, const dp_doc_node *n, dp_device_capacity *cap) {
        DECODE_FIELDS(
                c, n, k, v,
                if (streq(k, "default")) {
                        r = get_quantity(c, v, &cap->default_);
                        cap->has_default = !dp_doc_is_null(v);
                } else if (streq(k, "validValues")) {
                        r = expect_seq(c, v);
                        if (r > 0 && v->n) {
                                cap->valid_values = calloc(v->n, sizeof(dp_quantity));
                                if (!cap->valid_values)
                                        r = oom(c);
                                else
                                        cap->n_valid_values = v->n;
                                for (size_t j = 0; r >= 0 && j < v->n; j++) {
                                        size_t m = path_index(c, j);
                                        if (dp_doc_is_null(v->items[j]))
                                                r = dfail(c, v->items[j], -EINVAL, "null entry");
                                        else
                                                r = get_quantity(c, v->items[j], &cap->valid_values[j]);
                                        if (r >= 0) path_pop(c, m);
                                }
                        }
                } else if (streq(k, "validRange")) {
                        r = 0;
                        if (!dp_doc_is_null(v)) {
                                cap->valid_range = calloc(1, sizeof(dp_capacity_range));
                                r = cap->valid_range ? decode_range(c, v, cap->valid_range) : oom(c);
                        }
                });
        return 0;
}

static int decode_capacity_value(dctx *c, const dp_doc_node *n, dp_device_capacity *cap) {
        bool have_value = false;
        DECODE_FIELDS(
                c, n, k, v,
                if (streq(k, "value")) {
                        r = get_quantity(c, v, &cap->value);
                        have_value = !dp_doc_is_null(v);
                } else if (streq(k, "requestPolicy")) {
                        cap->has_request_policy = !dp_doc_is_null(v);
                        r = decode_request_policy(c, v, cap);
                });
        if (!have_value) return dfail(c, n, -EINVAL, "value: required");
        return 0;
}

static int decode_capacity(dctx *c, const dp_doc_node *n, dp_device *d) {
        int r = expect_map(c, n);
        if (r <= 0) return r;
        if (n->n == 0) return 0;
        d->capacity = calloc(n->n, sizeof(dp_device_capacity));
        if (!d->capacity) return oom(c);
        d->n_capacity = n->n;
        for (size_t i = 0; i < n->n; i++) {
                size_t m = path_key(c, n->pairs[i].key);
                d->capacity[i].name = strdup(n->pairs[i].key);
                if (!d->capacity[i].name) return oom(c);
                if (dp_doc_is_null(n->pairs[i].value)) return dfail(c, n->pairs[i].value, -EINVAL, "value: required");
                r = decode_capacity_value(c, n->pairs[i].value, &d->capacity[i]);
                if (r < 0) return r;
                path_pop(c, m);
        }
        return 0;
}

static int decode_counter_value(dctx *c, const dp_doc_node *n, dp_named_quantity *q) {
        bool have = false;
        if (dp_doc_is_null(n)) return dfail(c, n, -EINVAL, "value: required");
        DECODE_FIELDS(
                c, n, k, v, if (streq(k, "value")) {
                        r = get_quantity(c, v, &q->value);
                        have = !dp_doc_is_null(v);
                });
        if (!have) return dfail(c, n, -EINVAL, "value: required");
        return 0;
}

/* counters: {name: {value: Q}} */
static int decode_counters(dctx *c, const dp_doc_node *n, dp_named_quantity **ret, size_t *ret_n) {
        int r = expect_map(c, n);
        if (r <= 0) return r;
        if (n->n == 0) return 0;
        dp_named_quantity *v = calloc(n->n, sizeof(*v));
        if (!v) return oom(c);
        *ret = v;
        *ret_n = n->n;
        for (size_t i = 0; i < n->n; i++) {
                size_t m = path_key(c, n->pairs[i].key);
                v[i].name = strdup(n->pairs[i].key);
                if (!v[i].name) return oom(c);
                r = decode_counter_value(c, n->pairs[i].value, &v[i]);
                if (r < 0) return r;
                path_pop(c, m);
        }
        return 0;
}

static int decode_counter_set(dctx *c, const dp_doc_node *n, void *elem) {
        dp_counter_set *s = elem;
        DECODE_FIELDS(c, n, k, v, if (streq(k, "name")) r = get_str(c, v, &s->name);
                      else if (streq(k, "counters")) r = decode_counters(c, v, &s->counters, &s->n_counters););
        return 0;
}

static int decode_consumption(dctx *c, const dp_doc_node *n, void *elem) {
        dp_counter_consumption *s = elem;
        DECODE_FIELDS(c, n, k, v, if (streq(k, "counterSet")) r = get_str(c, v, &s->counter_set);
                      else if (streq(k, "counters")) r = decode_counters(c, v, &s->counters, &s->n_counters);
                      else if (streq(k, "compatibilityGroups")) r =
                              get_strv(c, v, &s->compatibility_groups, &s->n_compatibility_groups););
        return 0;
}

/* The device body: v1/v1beta2 Device fields, v1beta1 BasicDevice fields. */
static int device_body_field(dctx *c, const char *k, const dp_doc_node *v, dp_device *d, bool *known) {
        *known = true;
        if (streq(k, "attributes")) return decode_attributes(c, v, d);
        if (streq(k, "capacity")) return decode_capacity(c, v, d);
        if (streq(k, "consumesCounters"))
                return get_seq(c, v, (void **)&d->consumes_counters, &d->n_consumes_counters,
                               sizeof(dp_counter_consumption), decode_consumption);
        if (streq(k, "nodeName")) return get_str(c, v, &d->node_name);
        if (streq(k, "nodeSelector")) return decode_node_selector(c, v, &d->node_selector);
        if (streq(k, "allNodes")) return get_bool(c, v, &d->all_nodes);
        if (streq(k, "taints")) return get_seq(c, v, (void **)&d->taints, &d->n_taints, sizeof(dp_taint), decode_taint);
        if (streq(k, "bindsToNode")) return get_bool(c, v, &d->binds_to_node);
        if (streq(k, "bindingConditions")) return get_strv(c, v, &d->binding_conditions, &d->n_binding_conditions);
        if (streq(k, "bindingFailureConditions"))
                return get_strv(c, v, &d->binding_failure_conditions, &d->n_binding_failure_conditions);
        if (streq(k, "allowMultipleAllocations")) return get_bool(c, v, &d->allow_multiple_allocations);
        *known = false;
        return 0;
}

static int decode_basic(dctx *c, const dp_doc_node *n, dp_device *d) {
        DECODE_FIELDS(c, n, k, v, bool known = false; r = device_body_field(c, k, v, d, &known); if (r < 0 || known){});
        return 0;
}

static int decode_device(dctx *c, const dp_doc_node *n, void *elem) {
        dp_device *d = elem;
        bool beta1 = c->version == DP_API_V1BETA1;
        DECODE_FIELDS(
                c, n, k, v, bool known = false; r = 0; if (streq(k, "name")) r = get_str(c, v, &d->name);
                else if (beta1 && streq(k, "basic")) r = decode_basic(c, v, d);
                else if (!beta1 && (r = device_body_field(c, k, v, d, &known)) < 0) {} else if (!beta1 && known){});
        return 0;
}

/* spec.pool, into the slice's own fields */
static const decode_field pool_fields[] = {
        STR_FIELD("name", dp_resource_slice, pool_name),
        INT64_FIELD("generation", dp_resource_slice, pool_generation),
        INT64_FIELD("resourceSliceCount", dp_resource_slice, pool_resource_slice_count),
        {},
};

int decode_resource_slice(dctx *c, const dp_doc_node *root, dp_resource_slice *s) {
        const dp_doc_node *spec = dp_doc_get(root, "spec");
        DECODE_FIELDS(c, root, k, v, if (in_list(k, top_level)) r = 0; else if (streq(k, "spec")) r = 0;);
        size_t mark = path_key(c, "spec");
        if (dp_doc_is_null(spec)) return dfail(c, root, -EINVAL, "required");
        bool have_pool = false;
        DECODE_FIELDS(
                c, spec, k, v, if (streq(k, "driver")) r = get_str(c, v, &s->driver); else if (streq(k, "pool")) {
                        have_pool = !dp_doc_is_null(v);
                        r = get_fields(c, v, s, pool_fields);
                } else if (streq(k, "nodeName")) r = get_str(c, v, &s->node_name);
                else if (streq(k, "nodeSelector")) r = decode_node_selector(c, v, &s->node_selector);
                else if (streq(k, "allNodes")) r = get_bool(c, v, &s->all_nodes);
                else if (streq(k, "perDeviceNodeSelection")) r = get_bool(c, v, &s->per_device_node_selection);
                else if (streq(k, "devices")) r =
                        get_seq(c, v, (void **)&s->devices, &s->n_devices, sizeof(dp_device), decode_device);
                else if (streq(k, "sharedCounters")) r =
                        get_seq(c, v, (void **)&s->shared_counters, &s->n_shared_counters, sizeof(dp_counter_set),
                                decode_counter_set);
                else if (streq(k, "skipNodeOperations")) r =
                        get_strv(c, v, &s->skip_node_operations, &s->n_skip_node_operations);
                else if (streq(k, "partitionTypeAttribute")) r = get_str(c, v, &s->partition_type_attribute););
        if (!have_pool) return dfail(c, spec, -EINVAL, "pool: required");
        path_pop(c, mark);
        return 0;
}

/* ---- selectors, config ---- */

static int decode_cel(dctx *c, const dp_doc_node *n, dp_device_selector *s) {
        DECODE_FIELDS(c, n, k, v, if (streq(k, "expression")) r = get_str(c, v, &s->cel_expression););
        return 0;
}

static int decode_selector(dctx *c, const dp_doc_node *n, void *elem) {
        dp_device_selector *s = elem;
        bool have = false;
        DECODE_FIELDS(
                c, n, k, v, if (streq(k, "cel")) {
                        have = !dp_doc_is_null(v);
                        r = decode_cel(c, v, s);
                });
        if (!have) return dfail(c, n, -EINVAL, "cel: required (the only selector type)");
        if (!s->cel_expression) return dfail(c, n, -EINVAL, "cel.expression: required");
        return 0;
}

static int decode_opaque(dctx *c, const dp_doc_node *n, dp_device_config *cfg) {
        bool have_params = false;
        DECODE_FIELDS(
                c, n, k, v, if (streq(k, "driver")) r = get_str(c, v, &cfg->driver); else if (streq(k, "parameters")) {
                        have_params = !dp_doc_is_null(v);
                        r = get_json(c, v, &cfg->parameters_json);
                });
        if (!have_params) return dfail(c, n, -EINVAL, "parameters: required");
        return 0;
}

static int decode_config_common(dctx *c, const dp_doc_node *n, dp_device_config *cfg, bool with_requests,
                                dp_config_source *source) {
        bool have_opaque = false;
        DECODE_FIELDS(
                c, n, k, v,
                if (streq(k, "opaque")) {
                        have_opaque = !dp_doc_is_null(v);
                        r = decode_opaque(c, v, cfg);
                } else if (with_requests && streq(k, "requests")) r = get_strv(c, v, &cfg->requests, &cfg->n_requests);
                else if (source && streq(k, "source")) {
                        char *s = NULL;
                        r = get_str(c, v, &s);
                        if (r >= 0 && s && streq(s, "FromClass"))
                                *source = DP_CONFIG_SOURCE_CLASS;
                        else if (r >= 0 && s && streq(s, "FromClaim"))
                                *source = DP_CONFIG_SOURCE_CLAIM;
                        else if (r >= 0)
                                r = dfail(c, v, -EINVAL, "must be FromClass or FromClaim");
                        free(s);
                });
        if (!have_opaque) return dfail(c, n, -EINVAL, "opaque: required (the only configuration type)");
        return 0;
}

static int decode_class_config(dctx *c, const dp_doc_node *n, void *elem) {
        return decode_config_common(c, n, elem, false, NULL);
}

static int decode_claim_config(dctx *c, const dp_doc_node *n, void *elem) {
        return decode_config_common(c, n, elem, true, NULL);
}

static int decode_allocation_config(dctx *c, const dp_doc_node *n, void *elem) {
        dp_allocation_config *a = elem;
        return decode_config_common(c, n, &a->config, true, &a->source);
}

static int decode_class_spec(dctx *c, const dp_doc_node *n, dp_device_class *dc) {
        DECODE_FIELDS(c, n, k, v,
                      if (streq(k, "selectors")) r = get_seq(c, v, (void **)&dc->selectors, &dc->n_selectors,
                                                             sizeof(dp_device_selector), decode_selector);
                      else if (streq(k, "config")) r = get_seq(c, v, (void **)&dc->config, &dc->n_config,
                                                               sizeof(dp_device_config), decode_class_config);
                      else if (streq(k, "extendedResourceName")) r = get_str(c, v, &dc->extended_resource_name););
        return 0;
}

int decode_device_class(dctx *c, const dp_doc_node *root, dp_device_class *dc) {
        DECODE_FIELDS(c, root, k, v, if (in_list(k, top_level)) r = 0;
                      else if (streq(k, "spec")) r = decode_class_spec(c, v, dc););
        return 0;
}

/* ---- claims ---- */

static int decode_capacity_requirements(dctx *c, const dp_doc_node *n, dp_device_request_spec *s) {
        DECODE_FIELDS(c, n, k, v,
                      if (streq(k, "requests")) r =
                              get_quantity_map(c, v, &s->capacity_requests, &s->n_capacity_requests););
        return 0;
}

/* One field of an ExactDeviceRequest / DeviceSubRequest (v1beta1: of the
 * flat DeviceRequest). *known is false when k is none of them. */
static int request_spec_field(dctx *c, const char *k, const dp_doc_node *v, dp_device_request_spec *s, bool admin_ok,
                              bool *known) {
        *known = true;
        if (streq(k, "deviceClassName")) return get_str(c, v, &s->device_class_name);
        if (streq(k, "selectors"))
                return get_seq(c, v, (void **)&s->selectors, &s->n_selectors, sizeof(dp_device_selector),
                               decode_selector);
        if (streq(k, "allocationMode")) {
                char *m = NULL;
                int r = get_str(c, v, &m);
                if (r >= 0 && m) {
                        if (streq(m, "ExactCount"))
                                s->allocation_mode = DP_ALLOCATION_MODE_EXACT_COUNT;
                        else if (streq(m, "All"))
                                s->allocation_mode = DP_ALLOCATION_MODE_ALL;
                        else
                                r = dfail(c, v, -EINVAL, "unsupported value \"%.60s\" (ExactCount or All)", m);
                }
                free(m);
                return r;
        }
        if (streq(k, "count")) return get_int64(c, v, &s->count);
        if (admin_ok && streq(k, "adminAccess")) {
                int r = get_bool(c, v, &s->admin_access);
                if (r >= 0 && !dp_doc_is_null(v)) s->has_admin_access = true;
                return r;
        }
        if (streq(k, "tolerations"))
                return get_seq(c, v, (void **)&s->tolerations, &s->n_tolerations, sizeof(dp_toleration),
                               decode_toleration);
        if (streq(k, "capacity")) return decode_capacity_requirements(c, v, s);
        *known = false;
        return 0;
}

static void request_defaults(dp_device_request_spec *s, bool count_set) {
        if (!count_set && s->allocation_mode == DP_ALLOCATION_MODE_EXACT_COUNT) s->count = 1;
}

static int decode_request_spec(dctx *c, const dp_doc_node *n, dp_device_request_spec *s, bool admin_ok) {
        bool count_set = false;
        DECODE_FIELDS(c, n, k, v, bool known = false; r = request_spec_field(c, k, v, s, admin_ok, &known);
                      if (r >= 0 && known && streq(k, "count") && !dp_doc_is_null(v)) count_set = true;
                      if (r < 0 || known){});
        request_defaults(s, count_set);
        return 0;
}

static int decode_sub_request(dctx *c, const dp_doc_node *n, void *elem) {
        dp_device_sub_request *s = elem;
        bool count_set = false;
        DECODE_FIELDS(
                c, n, k, v, bool known = false; r = 0; if (streq(k, "name")) r = get_str(c, v, &s->name);
                else if ((r = request_spec_field(c, k, v, &s->spec, false, &known)) < 0) {} else if (known) {
                        if (streq(k, "count") && !dp_doc_is_null(v)) count_set = true;
                });
        request_defaults(&s->spec, count_set);
        return 0;
}

static int decode_request(dctx *c, const dp_doc_node *n, void *elem) {
        dp_device_request *q = elem;
        if (c->version == DP_API_V1BETA1) {
                /* v1beta1: the exactly fields sit on the request itself. */
                dp_device_request_spec flat = {0};
                bool any_flat = false, count_set = false;
                int e = expect_map(c, n);
                if (e <= 0) return e;
                for (size_t i = 0; i < n->n; i++) {
                        const char *k = n->pairs[i].key;
                        const dp_doc_node *v = n->pairs[i].value;
                        size_t m = path_key(c, k);
                        bool known = false;
                        int r = 0;
                        if (streq(k, "name"))
                                r = get_str(c, v, &q->name);
                        else if (streq(k, "firstAvailable"))
                                r = get_seq(c, v, (void **)&q->first_available, &q->n_first_available,
                                            sizeof(dp_device_sub_request), decode_sub_request);
                        else if ((r = request_spec_field(c, k, v, &flat, true, &known)) >= 0 && known) {
                                any_flat = true;
                                if (streq(k, "count") && !dp_doc_is_null(v)) count_set = true;
                        } else if (r >= 0)
                                r = dunknown(c, m, n->pairs[i].key_node, k);
                        if (r < 0) {
                                q->exactly = malloc(sizeof(flat));
                                if (q->exactly) *q->exactly = flat; /* handed to the destructor */
                                return r;
                        }
                        path_pop(c, m);
                }
                if (q->n_first_available && any_flat) {
                        q->exactly = malloc(sizeof(flat));
                        if (q->exactly) *q->exactly = flat;
                        return dfail(c, n, -EINVAL,
                                     "firstAvailable cannot be combined with deviceClassName, "
                                     "selectors, allocationMode, count, adminAccess, tolerations "
                                     "or capacity");
                }
                if (!q->n_first_available) {
                        q->exactly = malloc(sizeof(flat));
                        if (!q->exactly) return oom(c);
                        *q->exactly = flat;
                        request_defaults(q->exactly, count_set);
                }
                return 0;
        }
        DECODE_FIELDS(
                c, n, k, v, if (streq(k, "name")) r = get_str(c, v, &q->name);
                else if (streq(k, "exactly")) {
                        r = 0;
                        if (!dp_doc_is_null(v)) {
                                q->exactly = calloc(1, sizeof(dp_device_request_spec));
                                r = q->exactly ? decode_request_spec(c, v, q->exactly, true) : oom(c);
                        }
                } else if (streq(k, "firstAvailable")) r =
                        get_seq(c, v, (void **)&q->first_available, &q->n_first_available,
                                sizeof(dp_device_sub_request), decode_sub_request););
        if (!!q->exactly == !!q->n_first_available)
                return dfail(c, n, -EINVAL, "exactly one of exactly or firstAvailable must be set");
        return 0;
}

static int decode_constraint(dctx *c, const dp_doc_node *n, void *elem) {
        dp_device_constraint *q = elem;
        DECODE_FIELDS(c, n, k, v, if (streq(k, "requests")) r = get_strv(c, v, &q->requests, &q->n_requests);
                      else if (streq(k, "matchAttribute")) r = get_str(c, v, &q->match_attribute);
                      else if (streq(k, "distinctAttribute")) r = get_str(c, v, &q->distinct_attribute););
        if (!!q->match_attribute == !!q->distinct_attribute)
                return dfail(c, n, -EINVAL, "exactly one of matchAttribute or distinctAttribute must be set");
        return 0;
}

static int decode_claim_devices(dctx *c, const dp_doc_node *n, dp_resource_claim_spec *s) {
        DECODE_FIELDS(c, n, k, v,
                      if (streq(k, "requests")) r = get_seq(c, v, (void **)&s->requests, &s->n_requests,
                                                            sizeof(dp_device_request), decode_request);
                      else if (streq(k, "constraints")) r = get_seq(c, v, (void **)&s->constraints, &s->n_constraints,
                                                                    sizeof(dp_device_constraint), decode_constraint);
                      else if (streq(k, "config")) r = get_seq(c, v, (void **)&s->config, &s->n_config,
                                                               sizeof(dp_device_config), decode_claim_config););
        return 0;
}

static int decode_claim_spec(dctx *c, const dp_doc_node *n, dp_resource_claim_spec *s) {
        DECODE_FIELDS(c, n, k, v, if (streq(k, "devices")) r = decode_claim_devices(c, v, s););
        return 0;
}

static int decode_result(dctx *c, const dp_doc_node *n, void *elem) {
        dp_device_allocation_result *q = elem;
        DECODE_FIELDS(
                c, n, k, v, if (streq(k, "request")) r = get_str(c, v, &q->request);
                else if (streq(k, "driver")) r = get_str(c, v, &q->driver);
                else if (streq(k, "pool")) r = get_str(c, v, &q->pool);
                else if (streq(k, "device")) r = get_str(c, v, &q->device); else if (streq(k, "adminAccess")) {
                        r = get_bool(c, v, &q->admin_access);
                        if (r >= 0 && !dp_doc_is_null(v)) q->has_admin_access = true;
                } else if (streq(k, "tolerations")) r = get_seq(c, v, (void **)&q->tolerations, &q->n_tolerations,
                                                                            sizeof(dp_toleration), decode_toleration);
                else if (streq(k, "shareID")) r = get_str(c, v, &q->share_id);
                else if (streq(k, "consumedCapacity")) r =
                        get_quantity_map(c, v, &q->consumed_capacity, &q->n_consumed_capacity);
                else if (streq(k, "bindingConditions")) r =
                        get_strv(c, v, &q->binding_conditions, &q->n_binding_conditions);
                else if (streq(k, "bindingFailureConditions")) r =
                        get_strv(c, v, &q->binding_failure_conditions, &q->n_binding_failure_conditions);
                else if (streq(k, "skipNodeOperations")) r =
                        get_strv(c, v, &q->skip_node_operations, &q->n_skip_node_operations););
        return 0;
}

static int decode_allocation_devices(dctx *c, const dp_doc_node *n, dp_allocation_result *a) {
        DECODE_FIELDS(c, n, k, v,
                      if (streq(k, "results")) r = get_seq(c, v, (void **)&a->results, &a->n_results,
                                                           sizeof(dp_device_allocation_result), decode_result);
                      else if (streq(k, "config")) r =
                              get_seq(c, v, (void **)&a->config, &a->n_config, sizeof(dp_allocation_config),
                                      decode_allocation_config););
        return 0;
}

static int decode_allocation(dctx *c, const dp_doc_node *n, dp_allocation_result *a) {
        DECODE_FIELDS(c, n, k, v, if (streq(k, "devices")) r = decode_allocation_devices(c, v, a);
                      else if (streq(k, "nodeSelector")) r = decode_node_selector(c, v, &a->node_selector);
                      else if (streq(k, "allocationTimestamp")) r = get_str(c, v, &a->allocation_timestamp););
        return 0;
}

static const decode_field consumer_fields[] = {
        STR_FIELD("apiGroup", dp_consumer_ref, api_group),
        STR_FIELD("resource", dp_consumer_ref, resource),
        STR_FIELD("name", dp_consumer_ref, name),
        STR_FIELD("uid", dp_consumer_ref, uid),
        {},
};

static int decode_consumer(dctx *c, const dp_doc_node *n, void *elem) {
        return get_fields(c, n, elem, consumer_fields);
}

static int decode_network_data(dctx *c, const dp_doc_node *n, dp_network_device_data *d) {
        DECODE_FIELDS(c, n, k, v, if (streq(k, "interfaceName")) r = get_str(c, v, &d->interface_name);
                      else if (streq(k, "ips")) r = get_strv(c, v, &d->ips, &d->n_ips);
                      else if (streq(k, "hardwareAddress")) r = get_str(c, v, &d->hardware_address););
        return 0;
}

static int decode_device_status(dctx *c, const dp_doc_node *n, void *elem) {
        dp_allocated_device_status *d = elem;
        DECODE_FIELDS(
                c, n, k, v, if (streq(k, "driver")) r = get_str(c, v, &d->driver);
                else if (streq(k, "pool")) r = get_str(c, v, &d->pool);
                else if (streq(k, "device")) r = get_str(c, v, &d->device);
                else if (streq(k, "shareID")) r = get_str(c, v, &d->share_id);
                else if (streq(k, "conditions")) r = get_seq(c, v, (void **)&d->conditions, &d->n_conditions,
                                                             sizeof(dp_condition), decode_condition);
                else if (streq(k, "data")) r = get_json(c, v, &d->data_json); else if (streq(k, "networkData")) {
                        r = 0;
                        if (!dp_doc_is_null(v)) {
                                d->network_data = calloc(1, sizeof(dp_network_device_data));
                                r = d->network_data ? decode_network_data(c, v, d->network_data) : oom(c);
                        }
                });
        return 0;
}

static int decode_claim_status(dctx *c, const dp_doc_node *n, dp_resource_claim *rc) {
        DECODE_FIELDS(
                c, n, k, v,
                if (streq(k, "allocation")) {
                        r = 0;
                        if (!dp_doc_is_null(v)) {
                                rc->allocation = calloc(1, sizeof(dp_allocation_result));
                                r = rc->allocation ? decode_allocation(c, v, rc->allocation) : oom(c);
                        }
                } else if (streq(k, "reservedFor")) r = get_seq(c, v, (void **)&rc->reserved_for, &rc->n_reserved_for,
                                                                sizeof(dp_consumer_ref), decode_consumer);
                else if (streq(k, "devices")) r = get_seq(c, v, (void **)&rc->devices, &rc->n_devices,
                                                          sizeof(dp_allocated_device_status), decode_device_status););
        return 0;
}

int decode_resource_claim(dctx *c, const dp_doc_node *root, dp_resource_claim *rc) {
        DECODE_FIELDS(c, root, k, v, if (in_list(k, top_level)) r = 0;
                      else if (streq(k, "spec")) r = decode_claim_spec(c, v, &rc->spec);
                      else if (streq(k, "status")) r = decode_claim_status(c, v, rc););
        return 0;
}

static int decode_template_spec(dctx *c, const dp_doc_node *n, dp_resource_claim_template *t) {
        DECODE_FIELDS(c, n, k, v, if (streq(k, "metadata")) r = decode_meta(c, v, &t->claim_meta);
                      else if (streq(k, "spec")) r = decode_claim_spec(c, v, &t->spec););
        return 0;
}

int decode_resource_claim_template(dctx *c, const dp_doc_node *root, dp_resource_claim_template *t) {
        DECODE_FIELDS(c, root, k, v, if (in_list(k, top_level)) r = 0;
                      else if (streq(k, "spec")) r = decode_template_spec(c, v, t););
        return 0;
}

/* ---- DeviceTaintRule ---- */

static int decode_taint_selector(dctx *c, const dp_doc_node *n, dp_device_taint_rule *t) {
        bool alpha = c->version == DP_API_V1ALPHA3;
        t->has_device_selector = !dp_doc_is_null(n);
        DECODE_FIELDS(c, n, k, v, if (streq(k, "driver")) r = get_str(c, v, &t->driver);
                      else if (streq(k, "pool")) r = get_str(c, v, &t->pool);
                      else if (streq(k, "device")) r = get_str(c, v, &t->device);
                      else if (alpha && streq(k, "deviceClassName")) r = get_str(c, v, &t->device_class_name);
                      else if (alpha && streq(k, "selectors")) r =
                              get_seq(c, v, (void **)&t->selectors, &t->n_selectors, sizeof(dp_device_selector),
                                      decode_selector););
        return 0;
}

static int decode_taint_rule_spec(dctx *c, const dp_doc_node *n, dp_device_taint_rule *t) {
        DECODE_FIELDS(c, n, k, v, if (streq(k, "deviceSelector")) r = decode_taint_selector(c, v, t);
                      else if (streq(k, "taint")) r = decode_taint(c, v, &t->taint););
        return 0;
}

static int decode_taint_rule_status(dctx *c, const dp_doc_node *n, dp_device_taint_rule *t) {
        DECODE_FIELDS(c, n, k, v,
                      if (streq(k, "conditions")) r = get_seq(c, v, (void **)&t->conditions, &t->n_conditions,
                                                              sizeof(dp_condition), decode_condition););
        return 0;
}

int decode_device_taint_rule(dctx *c, const dp_doc_node *root, dp_device_taint_rule *t) {
        DECODE_FIELDS(c, root, k, v, if (in_list(k, top_level)) r = 0;
                      else if (streq(k, "spec")) r = decode_taint_rule_spec(c, v, t);
                      else if (streq(k, "status")) r = decode_taint_rule_status(c, v, t););
        return 0;
}
