/* SPDX-License-Identifier: Apache-2.0
 *
 * encode.c — typed objects back to doc trees, for -o yaml|json and for the
 * agent's published slices. Output follows kubectl -o yaml: keys sorted
 * alphabetically at every level (the tree is sorted once at the end), empty
 * and unset fields omitted (Go's omitempty), quantities in canonical form.
 * Allocation failure is sticky in the encoder; the entry points return NULL.
 */
#include <stdio.h>

#include "doc/builder.h"
#include "model/model.h"

/* Trees are built either in a doc set (the dp_*_encode() entry points: the
 * set owns a copy of every string) or in a dp_encoder's scratch memory
 * (dp_encoder_claim(): doc/builder.h's dp_doc_scratch, reused claim after
 * claim, strings and keys not copied, parsed parameters kept until the
 * next call). Emitters cannot tell the two apart. */
struct dp_encoder {
        dp_doc_scratch *scratch;
};

static dp_doc_node *quantity(dp_doc_builder *e, const dp_quantity *q) {
        if (e->r < 0) return NULL;
        char buf[DP_QUANTITY_MAX_LEN];
        dp_quantity_format(q, buf, sizeof(buf));
        return dp_doc_b_text(e, buf, false);
}

/* omitempty: an empty list is left out */
static void put_strv(dp_doc_builder *e, dp_doc_node *m, const char *key, char *const *v, size_t n) {
        if (n) dp_doc_b_put_strv(e, m, key, v, n);
}

static void put_kv(dp_doc_builder *e, dp_doc_node *m, const char *key, const dp_kv *v, size_t n) {
        if (!n) return;
        dp_doc_node *map = dp_doc_b_map(e);
        for (size_t i = 0; i < n; i++)
                dp_doc_b_put_str(e, map, v[i].key, v[i].value ? v[i].value : "");
        dp_doc_b_put(e, m, key, map);
}

static void put_quantities(dp_doc_builder *e, dp_doc_node *m, const char *key, const dp_named_quantity *v, size_t n) {
        if (!n) return;
        dp_doc_node *map = dp_doc_b_map(e);
        for (size_t i = 0; i < n; i++)
                dp_doc_b_put(e, map, v[i].name, quantity(e, &v[i].value));
        dp_doc_b_put(e, m, key, map);
}

/* counters: {name: {value: Q}} */
static void put_counters(dp_doc_builder *e, dp_doc_node *m, const dp_named_quantity *v, size_t n) {
        if (!n) return;
        dp_doc_node *map = dp_doc_b_map(e);
        for (size_t i = 0; i < n; i++) {
                dp_doc_node *c = dp_doc_b_map(e);
                dp_doc_b_put(e, c, "value", quantity(e, &v[i].value));
                dp_doc_b_put(e, map, v[i].name, c);
        }
        dp_doc_b_put(e, m, "counters", map);
}

/* Parameters as a tree: a set's own copy, or in scratch memory the parsed
 * tree itself (its set stays with the encoder until the next call). */
static dp_doc_node *raw_json(dp_doc_builder *e, const char *json) {
        if (e->r < 0 || !json) return NULL;
        dp_doc_set *tmp = dp_doc_set_new();
        if (!tmp) return dp_doc_b_check(e, NULL);
        int r = dp_doc_parse(tmp, json, strlen(json), "parameters", NULL);
        if (r == 0 && dp_doc_count(tmp) == 1) return dp_doc_b_adopt(e, tmp, dp_doc_root(tmp, 0));
        dp_doc_set_free(tmp);
        if (r == -ENOMEM) return dp_doc_b_check(e, NULL);
        return dp_doc_b_str(e, json); /* not JSON: keep the text */
}

/* strcmp, with the first bytes (which tell most keys apart) compared here */
static int cmp_keys(const char *a, const char *b) {
        if (a[0] != b[0]) return (unsigned char)a[0] < (unsigned char)b[0] ? -1 : 1;
        return strcmp(a, b);
}

static int cmp_pairs(const void *a, const void *b) {
        return cmp_keys(((const dp_doc_pair *)a)->key, ((const dp_doc_pair *)b)->key);
}

/* Maps are small and mostly built in order: insertion sort, but for many keys. */
static void sort_pairs(dp_doc_pair *p, size_t n) {
        if (n > 16) {
                qsort(p, n, sizeof(*p), cmp_pairs);
                return;
        }
        for (size_t i = 1; i < n; i++) {
                if (cmp_keys(p[i - 1].key, p[i].key) <= 0) continue;
                dp_doc_pair t = p[i];
                size_t j = i;
                for (; j > 0 && cmp_keys(p[j - 1].key, t.key) > 0; j--)
                        p[j] = p[j - 1];
                p[j] = t;
        }
}

static void sort_tree(dp_doc_node *n) {
        if (!n) return;
        if (n->type == DP_DOC_MAP) {
                sort_pairs(n->pairs, n->n);
                for (size_t i = 0; i < n->n; i++)
                        if (n->pairs[i].value->type != DP_DOC_SCALAR) sort_tree(n->pairs[i].value);
        } else if (n->type == DP_DOC_SEQ) {
                for (size_t i = 0; i < n->n; i++)
                        if (n->items[i]->type != DP_DOC_SCALAR) sort_tree(n->items[i]);
        }
}

static dp_doc_node *finish(dp_doc_builder *e, dp_doc_node *n) {
        if (e->r < 0) return NULL;
        sort_tree(n);
        return n;
}

/* ---- shared pieces ---- */

static dp_doc_node *meta(dp_doc_builder *e, const dp_object_meta *m) {
        dp_doc_node *n = dp_doc_b_map(e);
        dp_doc_b_put_str(e, n, "name", m->name);
        dp_doc_b_put_str(e, n, "generateName", m->generate_name);
        dp_doc_b_put_str(e, n, "namespace", m->namespace);
        dp_doc_b_put_str(e, n, "uid", m->uid);
        dp_doc_b_put_str(e, n, "resourceVersion", m->resource_version);
        if (m->generation) dp_doc_b_put_int(e, n, "generation", m->generation);
        dp_doc_b_put_str(e, n, "creationTimestamp", m->creation_timestamp);
        dp_doc_b_put_str(e, n, "deletionTimestamp", m->deletion_timestamp);
        put_kv(e, n, "labels", m->labels, m->n_labels);
        put_kv(e, n, "annotations", m->annotations, m->n_annotations);
        if (m->n_owner_references) {
                dp_doc_node *seq = dp_doc_b_seq(e);
                for (size_t i = 0; i < m->n_owner_references; i++) {
                        const dp_owner_ref *o = &m->owner_references[i];
                        dp_doc_node *x = dp_doc_b_map(e);
                        dp_doc_b_put_str(e, x, "apiVersion", o->api_version);
                        dp_doc_b_put_str(e, x, "kind", o->kind);
                        dp_doc_b_put_str(e, x, "name", o->name);
                        dp_doc_b_put_str(e, x, "uid", o->uid);
                        if (o->controller) dp_doc_b_put_bool(e, x, "controller", true);
                        dp_doc_b_push(e, seq, x);
                }
                dp_doc_b_put(e, n, "ownerReferences", seq);
        }
        return n;
}

static const char *const ns_ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};

static dp_doc_node *requirements(dp_doc_builder *e, const dp_node_selector_requirement *v, size_t n) {
        dp_doc_node *seq = dp_doc_b_seq(e);
        for (size_t i = 0; i < n; i++) {
                dp_doc_node *x = dp_doc_b_map(e);
                dp_doc_b_put_str(e, x, "key", v[i].key);
                dp_doc_b_put_str(e, x, "operator", ns_ops[v[i].op]);
                put_strv(e, x, "values", v[i].values, v[i].n_values);
                dp_doc_b_push(e, seq, x);
        }
        return seq;
}

static dp_doc_node *node_selector(dp_doc_builder *e, const dp_node_selector *ns) {
        dp_doc_node *n = dp_doc_b_map(e);
        dp_doc_node *terms = dp_doc_b_seq(e);
        for (size_t i = 0; i < ns->n_terms; i++) {
                const dp_node_selector_term *t = &ns->terms[i];
                dp_doc_node *x = dp_doc_b_map(e);
                if (t->n_match_expressions)
                        dp_doc_b_put(e, x, "matchExpressions",
                                     requirements(e, t->match_expressions, t->n_match_expressions));
                if (t->n_match_fields)
                        dp_doc_b_put(e, x, "matchFields", requirements(e, t->match_fields, t->n_match_fields));
                dp_doc_b_push(e, terms, x);
        }
        dp_doc_b_put(e, n, "nodeSelectorTerms", terms);
        return n;
}

static dp_doc_node *taint(dp_doc_builder *e, const dp_taint *t) {
        dp_doc_node *x = dp_doc_b_map(e);
        dp_doc_b_put_str(e, x, "key", t->key);
        dp_doc_b_put_str(e, x, "value", t->value);
        dp_doc_b_put_str(e, x, "effect", t->effect);
        dp_doc_b_put_str(e, x, "timeAdded", t->time_added);
        return x;
}

static void put_taints(dp_doc_builder *e, dp_doc_node *m, const dp_taint *v, size_t n) {
        if (!n) return;
        dp_doc_node *seq = dp_doc_b_seq(e);
        for (size_t i = 0; i < n; i++)
                dp_doc_b_push(e, seq, taint(e, &v[i]));
        dp_doc_b_put(e, m, "taints", seq);
}

static void put_tolerations(dp_doc_builder *e, dp_doc_node *m, const dp_toleration *v, size_t n) {
        if (!n) return;
        dp_doc_node *seq = dp_doc_b_seq(e);
        for (size_t i = 0; i < n; i++) {
                dp_doc_node *x = dp_doc_b_map(e);
                dp_doc_b_put_str(e, x, "key", v[i].key);
                dp_doc_b_put_str(e, x, "operator", v[i].op);
                dp_doc_b_put_str(e, x, "value", v[i].value);
                dp_doc_b_put_str(e, x, "effect", v[i].effect);
                if (v[i].has_toleration_seconds) dp_doc_b_put_int(e, x, "tolerationSeconds", v[i].toleration_seconds);
                dp_doc_b_push(e, seq, x);
        }
        dp_doc_b_put(e, m, "tolerations", seq);
}

static void put_conditions(dp_doc_builder *e, dp_doc_node *m, const dp_condition *v, size_t n) {
        if (!n) return;
        dp_doc_node *seq = dp_doc_b_seq(e);
        for (size_t i = 0; i < n; i++) {
                dp_doc_node *x = dp_doc_b_map(e);
                dp_doc_b_put_str(e, x, "type", v[i].type);
                dp_doc_b_put_str(e, x, "status", v[i].status);
                dp_doc_b_put_str(e, x, "reason", v[i].reason);
                dp_doc_b_put_str(e, x, "message", v[i].message);
                dp_doc_b_put_str(e, x, "lastTransitionTime", v[i].last_transition_time);
                if (v[i].observed_generation) dp_doc_b_put_int(e, x, "observedGeneration", v[i].observed_generation);
                dp_doc_b_push(e, seq, x);
        }
        dp_doc_b_put(e, m, "conditions", seq);
}

static dp_doc_node *opaque(dp_doc_builder *e, const dp_device_config *c) {
        dp_doc_node *o = dp_doc_b_map(e);
        dp_doc_b_put_str(e, o, "driver", c->driver);
        if (c->parameters_json) dp_doc_b_put(e, o, "parameters", raw_json(e, c->parameters_json));
        return o;
}

static void put_configs(dp_doc_builder *e, dp_doc_node *m, const dp_device_config *v, size_t n, bool with_requests) {
        if (!n) return;
        dp_doc_node *seq = dp_doc_b_seq(e);
        for (size_t i = 0; i < n; i++) {
                dp_doc_node *x = dp_doc_b_map(e);
                if (with_requests) put_strv(e, x, "requests", v[i].requests, v[i].n_requests);
                dp_doc_b_put(e, x, "opaque", opaque(e, &v[i]));
                dp_doc_b_push(e, seq, x);
        }
        dp_doc_b_put(e, m, "config", seq);
}

static void put_selectors(dp_doc_builder *e, dp_doc_node *m, const dp_device_selector *v, size_t n) {
        if (!n) return;
        dp_doc_node *seq = dp_doc_b_seq(e);
        for (size_t i = 0; i < n; i++) {
                dp_doc_node *x = dp_doc_b_map(e), *cel = dp_doc_b_map(e);
                dp_doc_b_put_str(e, cel, "expression", v[i].cel_expression);
                dp_doc_b_put(e, x, "cel", cel);
                dp_doc_b_push(e, seq, x);
        }
        dp_doc_b_put(e, m, "selectors", seq);
}

static dp_doc_node *object_head(dp_doc_builder *e, const dp_object_header *h, const dp_object_meta *m) {
        dp_doc_node *n = dp_doc_b_map(e);
        dp_doc_b_put_str(e, n, "apiVersion", h->api_version ? h->api_version : "resource.k8s.io/v1");
        dp_doc_b_put_str(e, n, "kind", dp_object_kind_name((dp_object){.hdr = (dp_object_header *)h}));
        dp_doc_b_put(e, n, "metadata", meta(e, m));
        return n;
}

/* ---- ResourceSlice (always written in the v1 shape) ---- */

static const char *const attr_keys[] = {"int", "bool", "string", "version", "ints", "bools", "strings", "versions"};

static dp_doc_node *attribute(dp_doc_builder *e, const dp_device_attribute *a) {
        dp_doc_node *x = dp_doc_b_map(e), *v = NULL;
        switch (a->type) {
        case DP_ATTR_INT: v = dp_doc_b_int(e, a->i); break;
        case DP_ATTR_BOOL: v = dp_doc_b_bool(e, a->b); break;
        case DP_ATTR_STRING:
        case DP_ATTR_VERSION: v = dp_doc_b_str(e, a->s ? a->s : ""); break;
        case DP_ATTR_INTS:
        case DP_ATTR_BOOLS:
        case DP_ATTR_STRINGS:
        case DP_ATTR_VERSIONS:
                v = dp_doc_b_seq(e);
                for (size_t i = 0; i < a->n; i++)
                        dp_doc_b_push(e, v,
                                      a->type == DP_ATTR_INTS    ? dp_doc_b_int(e, a->ints[i])
                                      : a->type == DP_ATTR_BOOLS ? dp_doc_b_bool(e, a->bools[i])
                                                                 : dp_doc_b_str(e, a->strs[i]));
                break;
        }
        dp_doc_b_put(e, x, attr_keys[a->type], v);
        return x;
}

static dp_doc_node *device(dp_doc_builder *e, const dp_device *d) {
        dp_doc_node *x = dp_doc_b_map(e);
        dp_doc_b_put_str(e, x, "name", d->name);
        if (d->n_attributes) {
                dp_doc_node *m = dp_doc_b_map(e);
                for (size_t i = 0; i < d->n_attributes; i++)
                        dp_doc_b_put(e, m, d->attributes[i].name, attribute(e, &d->attributes[i]));
                dp_doc_b_put(e, x, "attributes", m);
        }
        if (d->n_capacity) {
                dp_doc_node *m = dp_doc_b_map(e);
                for (size_t i = 0; i < d->n_capacity; i++) {
                        const dp_device_capacity *c = &d->capacity[i];
                        dp_doc_node *cx = dp_doc_b_map(e);
                        dp_doc_b_put(e, cx, "value", quantity(e, &c->value));
                        if (c->has_request_policy) {
                                dp_doc_node *p = dp_doc_b_map(e);
                                if (c->has_default) dp_doc_b_put(e, p, "default", quantity(e, &c->default_));
                                if (c->n_valid_values) {
                                        dp_doc_node *vv = dp_doc_b_seq(e);
                                        for (size_t j = 0; j < c->n_valid_values; j++)
                                                dp_doc_b_push(e, vv, quantity(e, &c->valid_values[j]));
                                        dp_doc_b_put(e, p, "validValues", vv);
                                }
                                if (c->valid_range) {
                                        dp_doc_node *rg = dp_doc_b_map(e);
                                        dp_doc_b_put(e, rg, "min", quantity(e, &c->valid_range->min));
                                        if (c->valid_range->has_max)
                                                dp_doc_b_put(e, rg, "max", quantity(e, &c->valid_range->max));
                                        if (c->valid_range->has_step)
                                                dp_doc_b_put(e, rg, "step", quantity(e, &c->valid_range->step));
                                        dp_doc_b_put(e, p, "validRange", rg);
                                }
                                dp_doc_b_put(e, cx, "requestPolicy", p);
                        }
                        dp_doc_b_put(e, m, c->name, cx);
                }
                dp_doc_b_put(e, x, "capacity", m);
        }
        if (d->n_consumes_counters) {
                dp_doc_node *seq = dp_doc_b_seq(e);
                for (size_t i = 0; i < d->n_consumes_counters; i++) {
                        const dp_counter_consumption *c = &d->consumes_counters[i];
                        dp_doc_node *cx = dp_doc_b_map(e);
                        dp_doc_b_put_str(e, cx, "counterSet", c->counter_set);
                        put_counters(e, cx, c->counters, c->n_counters);
                        put_strv(e, cx, "compatibilityGroups", c->compatibility_groups, c->n_compatibility_groups);
                        dp_doc_b_push(e, seq, cx);
                }
                dp_doc_b_put(e, x, "consumesCounters", seq);
        }
        dp_doc_b_put_str(e, x, "nodeName", d->node_name);
        if (d->node_selector) dp_doc_b_put(e, x, "nodeSelector", node_selector(e, d->node_selector));
        if (d->all_nodes) dp_doc_b_put_bool(e, x, "allNodes", true);
        put_taints(e, x, d->taints, d->n_taints);
        if (d->binds_to_node) dp_doc_b_put_bool(e, x, "bindsToNode", true);
        put_strv(e, x, "bindingConditions", d->binding_conditions, d->n_binding_conditions);
        put_strv(e, x, "bindingFailureConditions", d->binding_failure_conditions, d->n_binding_failure_conditions);
        if (d->allow_multiple_allocations) dp_doc_b_put_bool(e, x, "allowMultipleAllocations", true);
        return x;
}

static dp_doc_node *slice(dp_doc_builder *e, const dp_resource_slice *s) {
        dp_object_header h = s->hdr;
        h.api_version = "resource.k8s.io/v1"; /* the struct is in v1 shape whatever was read */
        dp_doc_node *n = object_head(e, &h, &s->meta);
        dp_doc_node *spec = dp_doc_b_map(e);
        dp_doc_b_put_str(e, spec, "driver", s->driver);
        dp_doc_node *pool = dp_doc_b_map(e);
        dp_doc_b_put_str(e, pool, "name", s->pool_name);
        dp_doc_b_put_int(e, pool, "generation", s->pool_generation);
        dp_doc_b_put_int(e, pool, "resourceSliceCount", s->pool_resource_slice_count);
        dp_doc_b_put(e, spec, "pool", pool);
        dp_doc_b_put_str(e, spec, "nodeName", s->node_name);
        if (s->node_selector) dp_doc_b_put(e, spec, "nodeSelector", node_selector(e, s->node_selector));
        if (s->all_nodes) dp_doc_b_put_bool(e, spec, "allNodes", true);
        if (s->per_device_node_selection) dp_doc_b_put_bool(e, spec, "perDeviceNodeSelection", true);
        if (s->n_devices) {
                dp_doc_node *seq = dp_doc_b_seq(e);
                for (size_t i = 0; i < s->n_devices; i++)
                        dp_doc_b_push(e, seq, device(e, &s->devices[i]));
                dp_doc_b_put(e, spec, "devices", seq);
        }
        if (s->n_shared_counters) {
                dp_doc_node *seq = dp_doc_b_seq(e);
                for (size_t i = 0; i < s->n_shared_counters; i++) {
                        dp_doc_node *x = dp_doc_b_map(e);
                        dp_doc_b_put_str(e, x, "name", s->shared_counters[i].name);
                        put_counters(e, x, s->shared_counters[i].counters, s->shared_counters[i].n_counters);
                        dp_doc_b_push(e, seq, x);
                }
                dp_doc_b_put(e, spec, "sharedCounters", seq);
        }
        put_strv(e, spec, "skipNodeOperations", s->skip_node_operations, s->n_skip_node_operations);
        dp_doc_b_put_str(e, spec, "partitionTypeAttribute", s->partition_type_attribute);
        dp_doc_b_put(e, n, "spec", spec);
        return n;
}

/* ---- claims ---- */

static dp_doc_node *request_spec(dp_doc_builder *e, const dp_device_request_spec *q, bool admin) {
        dp_doc_node *x = dp_doc_b_map(e);
        dp_doc_b_put_str(e, x, "deviceClassName", q->device_class_name);
        put_selectors(e, x, q->selectors, q->n_selectors);
        dp_doc_b_put_str(e, x, "allocationMode", q->allocation_mode == DP_ALLOCATION_MODE_ALL ? "All" : "ExactCount");
        if (q->allocation_mode == DP_ALLOCATION_MODE_EXACT_COUNT) dp_doc_b_put_int(e, x, "count", q->count);
        if (admin && q->has_admin_access) dp_doc_b_put_bool(e, x, "adminAccess", q->admin_access);
        put_tolerations(e, x, q->tolerations, q->n_tolerations);
        if (q->n_capacity_requests) {
                dp_doc_node *c = dp_doc_b_map(e);
                put_quantities(e, c, "requests", q->capacity_requests, q->n_capacity_requests);
                dp_doc_b_put(e, x, "capacity", c);
        }
        return x;
}

static dp_doc_node *claim_spec(dp_doc_builder *e, const dp_resource_claim_spec *s) {
        dp_doc_node *spec = dp_doc_b_map(e), *devices = dp_doc_b_map(e);
        if (s->n_requests) {
                dp_doc_node *seq = dp_doc_b_seq(e);
                for (size_t i = 0; i < s->n_requests; i++) {
                        const dp_device_request *q = &s->requests[i];
                        dp_doc_node *x = dp_doc_b_map(e);
                        dp_doc_b_put_str(e, x, "name", q->name);
                        if (q->exactly) dp_doc_b_put(e, x, "exactly", request_spec(e, q->exactly, true));
                        if (q->n_first_available) {
                                dp_doc_node *fa = dp_doc_b_seq(e);
                                for (size_t j = 0; j < q->n_first_available; j++) {
                                        dp_doc_node *sx = request_spec(e, &q->first_available[j].spec, false);
                                        dp_doc_b_put_str(e, sx, "name", q->first_available[j].name);
                                        dp_doc_b_push(e, fa, sx);
                                }
                                dp_doc_b_put(e, x, "firstAvailable", fa);
                        }
                        dp_doc_b_push(e, seq, x);
                }
                dp_doc_b_put(e, devices, "requests", seq);
        }
        if (s->n_constraints) {
                dp_doc_node *seq = dp_doc_b_seq(e);
                for (size_t i = 0; i < s->n_constraints; i++) {
                        dp_doc_node *x = dp_doc_b_map(e);
                        put_strv(e, x, "requests", s->constraints[i].requests, s->constraints[i].n_requests);
                        dp_doc_b_put_str(e, x, "matchAttribute", s->constraints[i].match_attribute);
                        dp_doc_b_put_str(e, x, "distinctAttribute", s->constraints[i].distinct_attribute);
                        dp_doc_b_push(e, seq, x);
                }
                dp_doc_b_put(e, devices, "constraints", seq);
        }
        put_configs(e, devices, s->config, s->n_config, true);
        dp_doc_b_put(e, spec, "devices", devices);
        return spec;
}

static dp_doc_node *allocation(dp_doc_builder *e, const dp_allocation_result *a) {
        dp_doc_node *n = dp_doc_b_map(e), *devices = dp_doc_b_map(e);
        dp_doc_node *results = dp_doc_b_seq(e);
        for (size_t i = 0; i < a->n_results; i++) {
                const dp_device_allocation_result *r = &a->results[i];
                dp_doc_node *x = dp_doc_b_map(e);
                dp_doc_b_put_str(e, x, "request", r->request);
                dp_doc_b_put_str(e, x, "driver", r->driver);
                dp_doc_b_put_str(e, x, "pool", r->pool);
                dp_doc_b_put_str(e, x, "device", r->device);
                if (r->has_admin_access) dp_doc_b_put_bool(e, x, "adminAccess", r->admin_access);
                put_tolerations(e, x, r->tolerations, r->n_tolerations);
                dp_doc_b_put_str(e, x, "shareID", r->share_id);
                put_quantities(e, x, "consumedCapacity", r->consumed_capacity, r->n_consumed_capacity);
                put_strv(e, x, "bindingConditions", r->binding_conditions, r->n_binding_conditions);
                put_strv(e, x, "bindingFailureConditions", r->binding_failure_conditions,
                         r->n_binding_failure_conditions);
                put_strv(e, x, "skipNodeOperations", r->skip_node_operations, r->n_skip_node_operations);
                dp_doc_b_push(e, results, x);
        }
        dp_doc_b_put(e, devices, "results", results);
        if (a->n_config) {
                dp_doc_node *seq = dp_doc_b_seq(e);
                for (size_t i = 0; i < a->n_config; i++) {
                        dp_doc_node *x = dp_doc_b_map(e);
                        dp_doc_b_put_str(e, x, "source",
                                         a->config[i].source == DP_CONFIG_SOURCE_CLASS ? "FromClass" : "FromClaim");
                        put_strv(e, x, "requests", a->config[i].config.requests, a->config[i].config.n_requests);
                        dp_doc_b_put(e, x, "opaque", opaque(e, &a->config[i].config));
                        dp_doc_b_push(e, seq, x);
                }
                dp_doc_b_put(e, devices, "config", seq);
        }
        dp_doc_b_put(e, n, "devices", devices);
        if (a->node_selector) dp_doc_b_put(e, n, "nodeSelector", node_selector(e, a->node_selector));
        dp_doc_b_put_str(e, n, "allocationTimestamp", a->allocation_timestamp);
        return n;
}

static dp_doc_node *claim(dp_doc_builder *e, const dp_resource_claim *c) {
        dp_object_header h = c->hdr;
        h.api_version = "resource.k8s.io/v1";
        dp_doc_node *n = object_head(e, &h, &c->meta);
        dp_doc_b_put(e, n, "spec", claim_spec(e, &c->spec));
        if (c->allocation || c->n_reserved_for || c->n_devices) {
                dp_doc_node *st = dp_doc_b_map(e);
                if (c->allocation) dp_doc_b_put(e, st, "allocation", allocation(e, c->allocation));
                if (c->n_reserved_for) {
                        dp_doc_node *seq = dp_doc_b_seq(e);
                        for (size_t i = 0; i < c->n_reserved_for; i++) {
                                dp_doc_node *x = dp_doc_b_map(e);
                                dp_doc_b_put_str(e, x, "apiGroup", c->reserved_for[i].api_group);
                                dp_doc_b_put_str(e, x, "resource", c->reserved_for[i].resource);
                                dp_doc_b_put_str(e, x, "name", c->reserved_for[i].name);
                                dp_doc_b_put_str(e, x, "uid", c->reserved_for[i].uid);
                                dp_doc_b_push(e, seq, x);
                        }
                        dp_doc_b_put(e, st, "reservedFor", seq);
                }
                if (c->n_devices) {
                        dp_doc_node *seq = dp_doc_b_seq(e);
                        for (size_t i = 0; i < c->n_devices; i++) {
                                const dp_allocated_device_status *d = &c->devices[i];
                                dp_doc_node *x = dp_doc_b_map(e);
                                dp_doc_b_put_str(e, x, "driver", d->driver);
                                dp_doc_b_put_str(e, x, "pool", d->pool);
                                dp_doc_b_put_str(e, x, "device", d->device);
                                dp_doc_b_put_str(e, x, "shareID", d->share_id);
                                put_conditions(e, x, d->conditions, d->n_conditions);
                                if (d->data_json) dp_doc_b_put(e, x, "data", raw_json(e, d->data_json));
                                if (d->network_data) {
                                        dp_doc_node *nd = dp_doc_b_map(e);
                                        dp_doc_b_put_str(e, nd, "interfaceName", d->network_data->interface_name);
                                        put_strv(e, nd, "ips", d->network_data->ips, d->network_data->n_ips);
                                        dp_doc_b_put_str(e, nd, "hardwareAddress", d->network_data->hardware_address);
                                        dp_doc_b_put(e, x, "networkData", nd);
                                }
                                dp_doc_b_push(e, seq, x);
                        }
                        dp_doc_b_put(e, st, "devices", seq);
                }
                dp_doc_b_put(e, n, "status", st);
        }
        return n;
}

/* ---- other kinds ---- */

static dp_doc_node *device_class(dp_doc_builder *e, const dp_device_class *dc) {
        dp_object_header h = dc->hdr;
        h.api_version = "resource.k8s.io/v1";
        dp_doc_node *n = object_head(e, &h, &dc->meta), *spec = dp_doc_b_map(e);
        put_selectors(e, spec, dc->selectors, dc->n_selectors);
        put_configs(e, spec, dc->config, dc->n_config, false);
        dp_doc_b_put_str(e, spec, "extendedResourceName", dc->extended_resource_name);
        dp_doc_b_put(e, n, "spec", spec);
        return n;
}

static dp_doc_node *claim_template(dp_doc_builder *e, const dp_resource_claim_template *t) {
        dp_object_header h = t->hdr;
        h.api_version = "resource.k8s.io/v1";
        dp_doc_node *n = object_head(e, &h, &t->meta), *spec = dp_doc_b_map(e);
        const dp_object_meta *cm = &t->claim_meta;
        if (cm->n_labels || cm->n_annotations || cm->name || cm->namespace)
                dp_doc_b_put(e, spec, "metadata", meta(e, cm));
        dp_doc_b_put(e, spec, "spec", claim_spec(e, &t->spec));
        dp_doc_b_put(e, n, "spec", spec);
        return n;
}

static dp_doc_node *taint_rule(dp_doc_builder *e, const dp_device_taint_rule *t) {
        dp_doc_node *n = object_head(e, &t->hdr, &t->meta), *spec = dp_doc_b_map(e);
        if (t->has_device_selector) {
                dp_doc_node *sel = dp_doc_b_map(e);
                dp_doc_b_put_str(e, sel, "driver", t->driver);
                dp_doc_b_put_str(e, sel, "pool", t->pool);
                dp_doc_b_put_str(e, sel, "device", t->device);
                dp_doc_b_put_str(e, sel, "deviceClassName", t->device_class_name);
                put_selectors(e, sel, t->selectors, t->n_selectors);
                dp_doc_b_put(e, spec, "deviceSelector", sel);
        }
        dp_doc_b_put(e, spec, "taint", taint(e, &t->taint));
        dp_doc_b_put(e, n, "spec", spec);
        if (t->n_conditions) {
                dp_doc_node *st = dp_doc_b_map(e);
                put_conditions(e, st, t->conditions, t->n_conditions);
                dp_doc_b_put(e, n, "status", st);
        }
        return n;
}

static dp_doc_node *node(dp_doc_builder *e, const dp_node *nd) {
        dp_doc_node *n = object_head(e, &nd->hdr, &nd->meta), *spec = dp_doc_b_map(e), *st = dp_doc_b_map(e);
        put_taints(e, spec, nd->taints, nd->n_taints);
        if (nd->unschedulable) dp_doc_b_put_bool(e, spec, "unschedulable", true);
        dp_doc_b_put(e, n, "spec", spec);
        put_quantities(e, st, "capacity", nd->capacity, nd->n_capacity);
        put_quantities(e, st, "allocatable", nd->allocatable, nd->n_allocatable);
        dp_doc_b_put(e, n, "status", st);
        return n;
}

static void put_containers(dp_doc_builder *e, dp_doc_node *m, const char *key, const dp_container *v, size_t n) {
        if (!n) return;
        dp_doc_node *seq = dp_doc_b_seq(e);
        for (size_t i = 0; i < n; i++) {
                dp_doc_node *x = dp_doc_b_map(e), *res = dp_doc_b_map(e);
                dp_doc_b_put_str(e, x, "name", v[i].name);
                dp_doc_b_put_str(e, x, "image", v[i].image);
                dp_doc_b_put_str(e, x, "restartPolicy", v[i].restart_policy);
                put_quantities(e, res, "limits", v[i].limits, v[i].n_limits);
                put_quantities(e, res, "requests", v[i].requests, v[i].n_requests);
                if (v[i].n_claims) {
                        dp_doc_node *cl = dp_doc_b_seq(e);
                        for (size_t j = 0; j < v[i].n_claims; j++) {
                                dp_doc_node *c = dp_doc_b_map(e);
                                dp_doc_b_put_str(e, c, "name", v[i].claims[j].name);
                                dp_doc_b_put_str(e, c, "request", v[i].claims[j].request);
                                dp_doc_b_push(e, cl, c);
                        }
                        dp_doc_b_put(e, res, "claims", cl);
                }
                dp_doc_b_put(e, x, "resources", res);
                dp_doc_b_push(e, seq, x);
        }
        dp_doc_b_put(e, m, key, seq);
}

static dp_doc_node *label_selector(dp_doc_builder *e, const dp_label_selector *ls); /* with the PDB's */

static dp_doc_node *affinity_term(dp_doc_builder *e, const dp_pod_affinity_term *t) {
        dp_doc_node *m = dp_doc_b_map(e);
        if (t->label_selector) dp_doc_b_put(e, m, "labelSelector", label_selector(e, t->label_selector));
        put_strv(e, m, "namespaces", t->namespaces, t->n_namespaces);
        if (t->namespace_selector) dp_doc_b_put(e, m, "namespaceSelector", label_selector(e, t->namespace_selector));
        dp_doc_b_put_str(e, m, "topologyKey", t->topology_key);
        put_strv(e, m, "matchLabelKeys", t->match_label_keys, t->n_match_label_keys);
        put_strv(e, m, "mismatchLabelKeys", t->mismatch_label_keys, t->n_mismatch_label_keys);
        return m;
}

/* podAffinity / podAntiAffinity: required terms, preferred ones with their
 * weight; nothing when both are empty. */
static void put_pod_affinity(dp_doc_builder *e, dp_doc_node *aff, const char *key, const dp_pod_affinity_term *req,
                             size_t n_req, const dp_pod_affinity_term *pref, size_t n_pref) {
        if (!n_req && !n_pref) return;
        dp_doc_node *m = dp_doc_b_map(e);
        if (n_req) {
                dp_doc_node *seq = dp_doc_b_seq(e);
                for (size_t i = 0; i < n_req; i++)
                        dp_doc_b_push(e, seq, affinity_term(e, &req[i]));
                dp_doc_b_put(e, m, "requiredDuringSchedulingIgnoredDuringExecution", seq);
        }
        if (n_pref) {
                dp_doc_node *seq = dp_doc_b_seq(e);
                for (size_t i = 0; i < n_pref; i++) {
                        dp_doc_node *x = dp_doc_b_map(e);
                        dp_doc_b_put_int(e, x, "weight", pref[i].weight);
                        dp_doc_b_put(e, x, "podAffinityTerm", affinity_term(e, &pref[i]));
                        dp_doc_b_push(e, seq, x);
                }
                dp_doc_b_put(e, m, "preferredDuringSchedulingIgnoredDuringExecution", seq);
        }
        dp_doc_b_put(e, aff, key, m);
}

static void put_affinity(dp_doc_builder *e, dp_doc_node *spec, const dp_pod *p) {
        if (!p->required_node_affinity && !p->n_pod_affinity && !p->n_preferred_pod_affinity &&
            !p->n_pod_anti_affinity && !p->n_preferred_pod_anti_affinity)
                return;
        dp_doc_node *aff = dp_doc_b_map(e);
        if (p->required_node_affinity) {
                dp_doc_node *na = dp_doc_b_map(e);
                dp_doc_b_put(e, na, "requiredDuringSchedulingIgnoredDuringExecution",
                             node_selector(e, p->required_node_affinity));
                dp_doc_b_put(e, aff, "nodeAffinity", na);
        }
        put_pod_affinity(e, aff, "podAffinity", p->pod_affinity, p->n_pod_affinity, p->preferred_pod_affinity,
                         p->n_preferred_pod_affinity);
        put_pod_affinity(e, aff, "podAntiAffinity", p->pod_anti_affinity, p->n_pod_anti_affinity,
                         p->preferred_pod_anti_affinity, p->n_preferred_pod_anti_affinity);
        dp_doc_b_put(e, spec, "affinity", aff);
}

/* topologySpreadConstraints; the API's defaults (minDomains 1, Honor,
 * Ignore) are left out. */
static void put_spread(dp_doc_builder *e, dp_doc_node *spec, const dp_spread_constraint *v, size_t n) {
        if (!n) return;
        dp_doc_node *seq = dp_doc_b_seq(e);
        for (size_t i = 0; i < n; i++) {
                dp_doc_node *x = dp_doc_b_map(e);
                dp_doc_b_put_int(e, x, "maxSkew", v[i].max_skew);
                dp_doc_b_put_str(e, x, "topologyKey", v[i].topology_key);
                dp_doc_b_put_str(e, x, "whenUnsatisfiable", v[i].schedule_anyway ? "ScheduleAnyway" : "DoNotSchedule");
                if (v[i].label_selector) dp_doc_b_put(e, x, "labelSelector", label_selector(e, v[i].label_selector));
                if (v[i].min_domains > 1) dp_doc_b_put_int(e, x, "minDomains", v[i].min_domains);
                if (v[i].node_affinity_ignore) dp_doc_b_put_str(e, x, "nodeAffinityPolicy", "Ignore");
                if (v[i].node_taints_honor) dp_doc_b_put_str(e, x, "nodeTaintsPolicy", "Honor");
                put_strv(e, x, "matchLabelKeys", v[i].match_label_keys, v[i].n_match_label_keys);
                dp_doc_b_push(e, seq, x);
        }
        dp_doc_b_put(e, spec, "topologySpreadConstraints", seq);
}

static dp_doc_node *pod_spec(dp_doc_builder *e, const dp_pod *p) {
        dp_doc_node *spec = dp_doc_b_map(e);
        dp_doc_b_put_str(e, spec, "nodeName", p->node_name);
        put_kv(e, spec, "nodeSelector", p->node_selector, p->n_node_selector);
        put_affinity(e, spec, p);
        put_spread(e, spec, p->spread, p->n_spread);
        put_tolerations(e, spec, p->tolerations, p->n_tolerations);
        if (p->has_priority) dp_doc_b_put_int(e, spec, "priority", p->priority);
        dp_doc_b_put_str(e, spec, "priorityClassName", p->priority_class_name);
        dp_doc_b_put_str(e, spec, "schedulerName", p->scheduler_name);
        put_containers(e, spec, "initContainers", p->init_containers, p->n_init_containers);
        put_containers(e, spec, "containers", p->containers, p->n_containers);
        put_quantities(e, spec, "overhead", p->overhead, p->n_overhead);
        if (p->n_resource_claims) {
                dp_doc_node *seq = dp_doc_b_seq(e);
                for (size_t i = 0; i < p->n_resource_claims; i++) {
                        dp_doc_node *x = dp_doc_b_map(e);
                        dp_doc_b_put_str(e, x, "name", p->resource_claims[i].name);
                        dp_doc_b_put_str(e, x, "resourceClaimName", p->resource_claims[i].resource_claim_name);
                        dp_doc_b_put_str(e, x, "resourceClaimTemplateName",
                                         p->resource_claims[i].resource_claim_template_name);
                        dp_doc_b_push(e, seq, x);
                }
                dp_doc_b_put(e, spec, "resourceClaims", seq);
        }
        if (p->workload_name) {
                dp_doc_node *w = dp_doc_b_map(e);
                dp_doc_b_put_str(e, w, "name", p->workload_name);
                dp_doc_b_put_str(e, w, "podGroup", p->workload_pod_group);
                dp_doc_b_put(e, spec, "workloadRef", w);
        }
        if (p->n_pod_limits || p->n_pod_requests) {
                dp_doc_node *res = dp_doc_b_map(e);
                put_quantities(e, res, "limits", p->pod_limits, p->n_pod_limits);
                put_quantities(e, res, "requests", p->pod_requests, p->n_pod_requests);
                dp_doc_b_put(e, spec, "resources", res);
        }
        if (p->scheduling_group) {
                dp_doc_node *g = dp_doc_b_map(e);
                dp_doc_b_put_str(e, g, "podGroupName", p->scheduling_group);
                dp_doc_b_put(e, spec, "schedulingGroup", g);
        }
        return spec;
}

static dp_doc_node *pod(dp_doc_builder *e, const dp_pod *p) {
        dp_doc_node *n = object_head(e, &p->hdr, &p->meta);
        dp_doc_b_put(e, n, "spec", pod_spec(e, p));
        if (p->phase || p->nominated_node_name || p->n_claim_statuses || p->extended_resource_claim_name ||
            p->start_time) {
                dp_doc_node *st = dp_doc_b_map(e);
                dp_doc_b_put_str(e, st, "phase", p->phase);
                if (p->extended_resource_claim_name) {
                        dp_doc_node *x = dp_doc_b_map(e), *seq = dp_doc_b_seq(e);
                        dp_doc_b_put_str(e, x, "resourceClaimName", p->extended_resource_claim_name);
                        for (size_t i = 0; i < p->n_extended_resource_mappings; i++) {
                                const dp_extended_resource_mapping *m = &p->extended_resource_mappings[i];
                                dp_doc_node *y = dp_doc_b_map(e);
                                dp_doc_b_put_str(e, y, "containerName", m->container_name);
                                dp_doc_b_put_str(e, y, "resourceName", m->resource_name);
                                dp_doc_b_put_str(e, y, "requestName", m->request_name);
                                dp_doc_b_push(e, seq, y);
                        }
                        dp_doc_b_put(e, x, "requestMappings", seq);
                        dp_doc_b_put(e, st, "extendedResourceClaimStatus", x);
                }
                dp_doc_b_put_str(e, st, "nominatedNodeName", p->nominated_node_name);
                dp_doc_b_put_str(e, st, "startTime", p->start_time);
                if (p->n_claim_statuses) {
                        dp_doc_node *seq = dp_doc_b_seq(e);
                        for (size_t i = 0; i < p->n_claim_statuses; i++) {
                                dp_doc_node *x = dp_doc_b_map(e);
                                dp_doc_b_put_str(e, x, "name", p->claim_statuses[i].name);
                                dp_doc_b_put_str(e, x, "resourceClaimName", p->claim_statuses[i].resource_claim_name);
                                dp_doc_b_push(e, seq, x);
                        }
                        dp_doc_b_put(e, st, "resourceClaimStatuses", seq);
                }
                dp_doc_b_put(e, n, "status", st);
        }
        return n;
}

static void put_pod_claims(dp_doc_builder *e, dp_doc_node *m, const dp_pod_resource_claim *v, size_t n) {
        if (!n) return;
        dp_doc_node *seq = dp_doc_b_seq(e);
        for (size_t i = 0; i < n; i++) {
                dp_doc_node *x = dp_doc_b_map(e);
                dp_doc_b_put_str(e, x, "name", v[i].name);
                dp_doc_b_put_str(e, x, "resourceClaimName", v[i].resource_claim_name);
                dp_doc_b_put_str(e, x, "resourceClaimTemplateName", v[i].resource_claim_template_name);
                dp_doc_b_push(e, seq, x);
        }
        dp_doc_b_put(e, m, "resourceClaims", seq);
}

static dp_doc_node *pod_group(dp_doc_builder *e, const dp_pod_group *g) {
        dp_doc_node *n = object_head(e, &g->hdr, &g->meta), *spec = dp_doc_b_map(e);
        if (g->hdr.api_version && streq(g->hdr.api_version, "scheduling.k8s.io/v1alpha2")) {
                dp_doc_node *pol = dp_doc_b_map(e), *x = dp_doc_b_map(e);
                if (g->gang) dp_doc_b_put_int(e, x, "minCount", g->min_member);
                dp_doc_b_put(e, pol, g->gang ? "gang" : "basic", x);
                dp_doc_b_put(e, spec, "schedulingPolicy", pol);
                put_pod_claims(e, spec, g->resource_claims, g->n_resource_claims);
                dp_doc_b_put(e, n, "spec", spec);
                return n;
        }
        dp_doc_b_put_int(e, spec, "minMember", g->min_member);
        dp_doc_b_put_str(e, spec, "queue", g->queue);
        dp_doc_b_put_str(e, spec, "priorityClassName", g->priority_class_name);
        dp_doc_b_put_str(e, spec, "preemptibility", g->preemptibility);
        if (g->has_schedule_timeout_seconds)
                dp_doc_b_put_int(e, spec, "scheduleTimeoutSeconds", g->schedule_timeout_seconds);
        put_quantities(e, spec, "minResources", g->min_resources, g->n_min_resources);
        dp_doc_b_put(e, n, "spec", spec);
        return n;
}

/* A Service or ReplicationController: what was read, spec.selector. */
static dp_doc_node *selector_owner(dp_doc_builder *e, const dp_deployment *d) {
        dp_doc_node *n = object_head(e, &d->hdr, &d->meta), *spec = dp_doc_b_map(e);
        if (d->n_selector_match_labels) put_kv(e, spec, "selector", d->selector_match_labels, d->n_selector_match_labels);
        dp_doc_b_put(e, n, "spec", spec);
        return n;
}

static dp_doc_node *deployment(dp_doc_builder *e, const dp_deployment *d) {
        dp_doc_node *n = object_head(e, &d->hdr, &d->meta), *spec = dp_doc_b_map(e);
        if (d->hdr.kind == DP_KIND_JOB)
                dp_doc_b_put_int(e, spec, "parallelism", d->replicas);
        else if (d->hdr.kind != DP_KIND_DAEMON_SET)
                dp_doc_b_put_int(e, spec, "replicas", d->replicas);
        if (d->n_selector_match_labels) {
                dp_doc_node *sel = dp_doc_b_map(e);
                put_kv(e, sel, "matchLabels", d->selector_match_labels, d->n_selector_match_labels);
                dp_doc_b_put(e, spec, "selector", sel);
        }
        if (d->template_) {
                dp_doc_node *t = dp_doc_b_map(e);
                const dp_object_meta *m = &d->template_->meta;
                if (m->n_labels || m->n_annotations || m->name) dp_doc_b_put(e, t, "metadata", meta(e, m));
                dp_doc_b_put(e, t, "spec", pod_spec(e, d->template_));
                dp_doc_b_put(e, spec, "template", t);
        }
        dp_doc_b_put(e, n, "spec", spec);
        return n;
}

static dp_doc_node *priority_class(dp_doc_builder *e, const dp_priority_class *pc) {
        dp_doc_node *n = object_head(e, &pc->hdr, &pc->meta);
        dp_doc_b_put_int(e, n, "value", pc->value);
        if (pc->global_default) dp_doc_b_put_bool(e, n, "globalDefault", true);
        if (pc->preemption_policy) dp_doc_b_put_str(e, n, "preemptionPolicy", pc->preemption_policy);
        return n;
}

static dp_doc_node *label_selector(dp_doc_builder *e, const dp_label_selector *ls) {
        dp_doc_node *m = dp_doc_b_map(e);
        if (ls->n_match_labels) put_kv(e, m, "matchLabels", ls->match_labels, ls->n_match_labels);
        if (ls->n_match_expressions)
                dp_doc_b_put(e, m, "matchExpressions", requirements(e, ls->match_expressions, ls->n_match_expressions));
        return m;
}

static void put_int_or_percent(dp_doc_builder *e, dp_doc_node *m, const char *key, const dp_int_or_percent *v) {
        if (!v->set) return;
        if (!v->percent) {
                dp_doc_b_put_int(e, m, key, v->value);
                return;
        }
        char b[16];
        snprintf(b, sizeof(b), "%d%%", (int)v->value);
        dp_doc_b_put_str(e, m, key, b);
}

static dp_doc_node *pdb(dp_doc_builder *e, const dp_pod_disruption_budget *b) {
        dp_doc_node *n = object_head(e, &b->hdr, &b->meta), *spec = dp_doc_b_map(e), *st = dp_doc_b_map(e);
        if (b->selector) dp_doc_b_put(e, spec, "selector", label_selector(e, b->selector));
        put_int_or_percent(e, spec, "minAvailable", &b->min_available);
        put_int_or_percent(e, spec, "maxUnavailable", &b->max_unavailable);
        dp_doc_b_put(e, n, "spec", spec);
        dp_doc_b_put_int(e, st, "disruptionsAllowed", b->disruptions_allowed);
        dp_doc_b_put(e, n, "status", st);
        return n;
}

static dp_doc_node *any(dp_doc_builder *e, dp_object o) {
        switch (o.hdr->kind) {
        case DP_KIND_RESOURCE_SLICE: return slice(e, o.slice);
        case DP_KIND_DEVICE_CLASS: return device_class(e, o.device_class);
        case DP_KIND_RESOURCE_CLAIM: return claim(e, o.claim);
        case DP_KIND_RESOURCE_CLAIM_TEMPLATE: return claim_template(e, o.claim_template);
        case DP_KIND_DEVICE_TAINT_RULE: return taint_rule(e, o.taint_rule);
        case DP_KIND_NODE: return node(e, o.node);
        case DP_KIND_POD: return pod(e, o.pod);
        case DP_KIND_NAMESPACE: return object_head(e, o.hdr, &o.ns->meta);
        case DP_KIND_POD_GROUP: return pod_group(e, o.pod_group);
        case DP_KIND_PRIORITY_CLASS: return priority_class(e, o.priority_class);
        case DP_KIND_POD_DISRUPTION_BUDGET: return pdb(e, o.pdb);
        case DP_KIND_DEPLOYMENT:
        case DP_KIND_REPLICA_SET:
        case DP_KIND_STATEFUL_SET:
        case DP_KIND_JOB:
        case DP_KIND_DAEMON_SET: return deployment(e, o.deployment);
        case DP_KIND_SERVICE:
        case DP_KIND_REPLICATION_CONTROLLER: return selector_owner(e, o.deployment);
        case DP_KIND_EXT: return object_head(e, o.hdr, &o.ext->meta);
        case DP_KIND_NONE: break;
        }
        e->r = -EINVAL;
        return NULL;
}

/* ---- public entry points ---- */

dp_doc_node *dp_resource_claim_encode(dp_doc_set *set, const dp_resource_claim *c) {
        if (!set || !c) return NULL;
        dp_doc_builder e = DP_DOC_BUILDER_INIT(set);
        return finish(&e, claim(&e, c));
}

dp_doc_node *dp_resource_slice_encode(dp_doc_set *set, const dp_resource_slice *s) {
        if (!set || !s) return NULL;
        dp_doc_builder e = DP_DOC_BUILDER_INIT(set);
        return finish(&e, slice(&e, s));
}

dp_doc_node *dp_allocation_result_encode(dp_doc_set *set, const dp_allocation_result *a) {
        if (!set || !a) return NULL;
        dp_doc_builder e = DP_DOC_BUILDER_INIT(set);
        return finish(&e, allocation(&e, a));
}

dp_doc_node *dp_object_meta_encode(dp_doc_set *set, const dp_object_meta *m) {
        if (!set || !m) return NULL;
        dp_doc_builder e = DP_DOC_BUILDER_INIT(set);
        return finish(&e, meta(&e, m));
}

dp_doc_node *dp_node_selector_encode(dp_doc_set *set, const dp_node_selector *ns) {
        if (!set || !ns) return NULL;
        dp_doc_builder e = DP_DOC_BUILDER_INIT(set);
        return finish(&e, node_selector(&e, ns));
}

dp_doc_node *dp_quantity_encode(dp_doc_set *set, const dp_quantity *q) {
        if (!set || !q) return NULL;
        dp_doc_builder e = DP_DOC_BUILDER_INIT(set);
        return quantity(&e, q);
}

dp_doc_node *dp_object_encode(dp_doc_set *set, dp_object o) {
        if (!set || !o.hdr) return NULL;
        dp_doc_builder e = DP_DOC_BUILDER_INIT(set);
        return finish(&e, any(&e, o));
}

dp_doc_node *dp_object_list_encode(dp_doc_set *set, const dp_object_list *l) {
        if (!set || !l) return NULL;
        dp_doc_builder e = DP_DOC_BUILDER_INIT(set);
        dp_doc_node *n = dp_doc_b_map(&e), *items = dp_doc_b_seq(&e);
        dp_doc_b_put_str(&e, n, "apiVersion", "v1");
        dp_doc_b_put_str(&e, n, "kind", "List");
        for (size_t i = 0; i < l->n; i++)
                dp_doc_b_push(&e, items, any(&e, l->items[i]));
        dp_doc_b_put(&e, n, "items", items);
        dp_doc_node *md = dp_doc_b_map(&e);
        dp_doc_b_put_str(&e, md, "resourceVersion", "");
        dp_doc_b_put(&e, n, "metadata", md);
        return finish(&e, n);
}

dp_encoder *dp_encoder_new(void) {
        dp_encoder *x = calloc(1, sizeof(*x));
        if (x && !(x->scratch = dp_doc_scratch_new())) {
                free(x);
                return NULL;
        }
        return x;
}

dp_encoder *dp_encoder_free(dp_encoder *x) {
        if (!x) return NULL;
        dp_doc_scratch_free(x->scratch);
        free(x);
        return NULL;
}

const dp_doc_node *dp_encoder_claim(dp_encoder *x, const dp_resource_claim *c) {
        if (!x || !c) return NULL;
        dp_doc_scratch_reset(x->scratch);
        dp_doc_builder e = DP_DOC_BUILDER_SCRATCH(x->scratch);
        return finish(&e, claim(&e, c));
}
