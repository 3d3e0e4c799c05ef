/* SPDX-License-Identifier: Apache-2.0
 *
 * free.c — destructors, deep copies and the object collection.
 * Every destructor accepts NULL (and zeroed structs) and returns NULL.
 */
#include <stdio.h>

#include "base/strbuf.h"
#include "base/strv.h"
#include "model/model.h"

static void kv_free(dp_kv *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                dp_free_many(v[i].key, v[i].value);
        free(v);
}

static void nq_free(dp_named_quantity *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i].name);
        free(v);
}

static void conditions_free(dp_condition *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                dp_free_many(v[i].type, v[i].status, v[i].reason, v[i].message, v[i].last_transition_time);
        free(v);
}

void dp_object_meta_done(dp_object_meta *m) {
        if (!m) return;
        dp_free_many(m->name, m->generate_name, m->namespace, m->uid, m->resource_version, m->creation_timestamp,
                     m->deletion_timestamp);
        kv_free(m->labels, m->n_labels);
        kv_free(m->annotations, m->n_annotations);
        for (size_t i = 0; i < m->n_owner_references; i++) {
                dp_owner_ref *o = &m->owner_references[i];
                dp_free_many(o->api_version, o->kind, o->name, o->uid);
        }
        free(m->owner_references);
        *m = (dp_object_meta){0};
}

static void header_done(dp_object_header *h) { dp_free_many(h->api_version, h->source); }

static void requirement_done(dp_node_selector_requirement *r) {
        free(r->key);
        dp_strv_free_n(r->values, r->n_values);
}

static void requirements_free(dp_node_selector_requirement *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                requirement_done(&v[i]);
        free(v);
}

static void term_done(dp_node_selector_term *t) {
        requirements_free(t->match_expressions, t->n_match_expressions);
        requirements_free(t->match_fields, t->n_match_fields);
}

void dp_node_selector_done(dp_node_selector *ns) {
        if (!ns) return;
        for (size_t i = 0; i < ns->n_terms; i++)
                term_done(&ns->terms[i]);
        free(ns->terms);
        *ns = (dp_node_selector){0};
}

dp_node_selector *dp_node_selector_free(dp_node_selector *ns) {
        dp_node_selector_done(ns);
        free(ns);
        return NULL;
}

static void taint_done(dp_taint *t) { dp_free_many(t->key, t->value, t->effect, t->time_added); }

static void taints_free(dp_taint *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                taint_done(&v[i]);
        free(v);
}

void dp_toleration_done(dp_toleration *t) {
        if (!t) return;
        dp_free_many(t->key, t->op, t->value, t->effect);
        *t = (dp_toleration){0};
}

static void tolerations_free(dp_toleration *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                dp_toleration_done(&v[i]);
        free(v);
}

static void attribute_done(dp_device_attribute *a) {
        dp_free_many(a->name, a->s, a->ints, a->bools);
        dp_strv_free_n(a->strs, a->n);
}

static void counter_consumption_done(dp_counter_consumption *c) {
        free(c->counter_set);
        nq_free(c->counters, c->n_counters);
        dp_strv_free_n(c->compatibility_groups, c->n_compatibility_groups);
}

static void device_done(dp_device *d) {
        for (size_t i = 0; i < d->n_attributes; i++)
                attribute_done(&d->attributes[i]);
        for (size_t i = 0; i < d->n_capacity; i++)
                dp_free_many(d->capacity[i].name, d->capacity[i].valid_values, d->capacity[i].valid_range);
        for (size_t i = 0; i < d->n_consumes_counters; i++)
                counter_consumption_done(&d->consumes_counters[i]);
        dp_free_many(d->name, d->attributes, d->capacity, d->consumes_counters, d->node_name);
        dp_node_selector_free(d->node_selector);
        taints_free(d->taints, d->n_taints);
        dp_strv_free_n(d->binding_conditions, d->n_binding_conditions);
        dp_strv_free_n(d->binding_failure_conditions, d->n_binding_failure_conditions);
}

dp_resource_slice *dp_resource_slice_free(dp_resource_slice *s) {
        if (!s) return NULL;
        header_done(&s->hdr);
        dp_object_meta_done(&s->meta);
        dp_node_selector_free(s->node_selector);
        for (size_t i = 0; i < s->n_devices; i++)
                device_done(&s->devices[i]);
        for (size_t i = 0; i < s->n_shared_counters; i++) {
                free(s->shared_counters[i].name);
                nq_free(s->shared_counters[i].counters, s->shared_counters[i].n_counters);
        }
        dp_strv_free_n(s->skip_node_operations, s->n_skip_node_operations);
        dp_free_many(s->driver, s->pool_name, s->node_name, s->devices, s->shared_counters, s->partition_type_attribute,
                     s);
        return NULL;
}

static void selectors_free(dp_device_selector *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i].cel_expression);
        free(v);
}

static void config_done(dp_device_config *c) {
        dp_strv_free_n(c->requests, c->n_requests);
        dp_free_many(c->driver, c->parameters_json);
}

static void configs_free(dp_device_config *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                config_done(&v[i]);
        free(v);
}

dp_device_class *dp_device_class_free(dp_device_class *c) {
        if (!c) return NULL;
        header_done(&c->hdr);
        dp_object_meta_done(&c->meta);
        selectors_free(c->selectors, c->n_selectors);
        configs_free(c->config, c->n_config);
        dp_free_many(c->extended_resource_name, c);
        return NULL;
}

static void request_spec_done(dp_device_request_spec *r) {
        free(r->device_class_name);
        selectors_free(r->selectors, r->n_selectors);
        tolerations_free(r->tolerations, r->n_tolerations);
        nq_free(r->capacity_requests, r->n_capacity_requests);
}

static void device_request_done(dp_device_request *r) {
        if (r->exactly) request_spec_done(r->exactly);
        for (size_t j = 0; j < r->n_first_available; j++) {
                free(r->first_available[j].name);
                request_spec_done(&r->first_available[j].spec);
        }
        dp_free_many(r->name, r->exactly, r->first_available);
}

static void claim_spec_done(dp_resource_claim_spec *s) {
        for (size_t i = 0; i < s->n_requests; i++)
                device_request_done(&s->requests[i]);
        for (size_t i = 0; i < s->n_constraints; i++) {
                dp_device_constraint *c = &s->constraints[i];
                dp_strv_free_n(c->requests, c->n_requests);
                dp_free_many(c->match_attribute, c->distinct_attribute);
        }
        dp_free_many(s->requests, s->constraints);
        configs_free(s->config, s->n_config);
}

void dp_device_allocation_result_done(dp_device_allocation_result *r) {
        if (!r) return;
        dp_free_many(r->request, r->driver, r->pool, r->device, r->share_id);
        tolerations_free(r->tolerations, r->n_tolerations);
        nq_free(r->consumed_capacity, r->n_consumed_capacity);
        dp_strv_free_n(r->binding_conditions, r->n_binding_conditions);
        dp_strv_free_n(r->binding_failure_conditions, r->n_binding_failure_conditions);
        dp_strv_free_n(r->skip_node_operations, r->n_skip_node_operations);
        *r = (dp_device_allocation_result){0};
}

dp_allocation_result *dp_allocation_result_free(dp_allocation_result *a) {
        if (!a) return NULL;
        for (size_t i = 0; i < a->n_results; i++)
                dp_device_allocation_result_done(&a->results[i]);
        for (size_t i = 0; i < a->n_config; i++)
                config_done(&a->config[i].config);
        dp_node_selector_free(a->node_selector);
        dp_free_many(a->results, a->config, a->allocation_timestamp, a);
        return NULL;
}

static void device_status_done(dp_allocated_device_status *d) {
        dp_free_many(d->driver, d->pool, d->device, d->share_id, d->data_json);
        conditions_free(d->conditions, d->n_conditions);
        if (d->network_data) {
                dp_strv_free_n(d->network_data->ips, d->network_data->n_ips);
                dp_free_many(d->network_data->interface_name, d->network_data->hardware_address, d->network_data);
        }
}

dp_resource_claim *dp_resource_claim_free(dp_resource_claim *c) {
        if (!c) return NULL;
        header_done(&c->hdr);
        dp_object_meta_done(&c->meta);
        claim_spec_done(&c->spec);
        dp_allocation_result_free(c->allocation);
        for (size_t i = 0; i < c->n_reserved_for; i++) {
                dp_consumer_ref *x = &c->reserved_for[i];
                dp_free_many(x->api_group, x->resource, x->name, x->uid);
        }
        for (size_t i = 0; i < c->n_devices; i++)
                device_status_done(&c->devices[i]);
        dp_free_many(c->reserved_for, c->devices, c);
        return NULL;
}

dp_resource_claim_template *dp_resource_claim_template_free(dp_resource_claim_template *t) {
        if (!t) return NULL;
        header_done(&t->hdr);
        dp_object_meta_done(&t->meta);
        dp_object_meta_done(&t->claim_meta);
        claim_spec_done(&t->spec);
        free(t);
        return NULL;
}

dp_device_taint_rule *dp_device_taint_rule_free(dp_device_taint_rule *r) {
        if (!r) return NULL;
        header_done(&r->hdr);
        dp_object_meta_done(&r->meta);
        selectors_free(r->selectors, r->n_selectors);
        taint_done(&r->taint);
        conditions_free(r->conditions, r->n_conditions);
        dp_free_many(r->driver, r->pool, r->device, r->device_class_name, r);
        return NULL;
}

dp_node *dp_node_free(dp_node *n) {
        if (!n) return NULL;
        header_done(&n->hdr);
        dp_object_meta_done(&n->meta);
        taints_free(n->taints, n->n_taints);
        nq_free(n->capacity, n->n_capacity);
        nq_free(n->allocatable, n->n_allocatable);
        for (size_t i = 0; i < n->n_images; i++)
                dp_strv_free_n(n->images[i].names, n->images[i].n_names);
        dp_free_many(n->images, n);
        return NULL;
}

static void container_done(dp_container *c) {
        nq_free(c->limits, c->n_limits);
        nq_free(c->requests, c->n_requests);
        for (size_t j = 0; j < c->n_claims; j++)
                dp_free_many(c->claims[j].name, c->claims[j].request);
        for (size_t j = 0; j < c->n_host_ports; j++)
                dp_free_many(c->host_ports[j].host_ip, c->host_ports[j].protocol);
        dp_free_many(c->name, c->image, c->restart_policy, c->claims, c->host_ports);
}

static void containers_free(dp_container *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                container_done(&v[i]);
        free(v);
}

static void pod_claims_free(dp_pod_resource_claim *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                dp_free_many(v[i].name, v[i].resource_claim_name, v[i].resource_claim_template_name);
        free(v);
}

/* ---- inter-pod affinity and topology spread ---- */

dp_label_selector *dp_label_selector_free(dp_label_selector *ls) {
        if (!ls) return NULL;
        kv_free(ls->match_labels, ls->n_match_labels);
        requirements_free(ls->match_expressions, ls->n_match_expressions);
        free(ls);
        return NULL;
}

static void affinity_terms_free(dp_pod_affinity_term *v, size_t n) {
        for (size_t i = 0; i < n; i++) {
                dp_pod_affinity_term *t = &v[i];
                dp_label_selector_free(t->label_selector);
                dp_strv_free_n(t->namespaces, t->n_namespaces);
                dp_label_selector_free(t->namespace_selector);
                free(t->topology_key);
                dp_strv_free_n(t->match_label_keys, t->n_match_label_keys);
                dp_strv_free_n(t->mismatch_label_keys, t->n_mismatch_label_keys);
        }
        free(v);
}

static void pod_topology_done(dp_pod *p) {
        affinity_terms_free(p->pod_affinity, p->n_pod_affinity);
        affinity_terms_free(p->pod_anti_affinity, p->n_pod_anti_affinity);
        affinity_terms_free(p->preferred_pod_affinity, p->n_preferred_pod_affinity);
        affinity_terms_free(p->preferred_pod_anti_affinity, p->n_preferred_pod_anti_affinity);
        for (size_t i = 0; i < p->n_spread; i++) {
                free(p->spread[i].topology_key);
                dp_label_selector_free(p->spread[i].label_selector);
                dp_strv_free_n(p->spread[i].match_label_keys, p->spread[i].n_match_label_keys);
        }
        free(p->spread);
}

dp_pod *dp_pod_free(dp_pod *p) {
        if (!p) return NULL;
        header_done(&p->hdr);
        dp_object_meta_done(&p->meta);
        kv_free(p->node_selector, p->n_node_selector);
        dp_node_selector_free(p->required_node_affinity);
        for (size_t i = 0; i < p->n_preferred_node_affinity; i++)
                term_done(&p->preferred_node_affinity[i].preference);
        pod_topology_done(p);
        tolerations_free(p->tolerations, p->n_tolerations);
        containers_free(p->init_containers, p->n_init_containers);
        containers_free(p->containers, p->n_containers);
        nq_free(p->overhead, p->n_overhead);
        pod_claims_free(p->resource_claims, p->n_resource_claims);
        for (size_t i = 0; i < p->n_claim_statuses; i++)
                dp_free_many(p->claim_statuses[i].name, p->claim_statuses[i].resource_claim_name);
        nq_free(p->pod_limits, p->n_pod_limits);
        nq_free(p->pod_requests, p->n_pod_requests);
        for (size_t i = 0; i < p->n_extended_resource_mappings; i++) {
                dp_extended_resource_mapping *m = &p->extended_resource_mappings[i];
                dp_free_many(m->container_name, m->resource_name, m->request_name);
        }
        dp_strv_free_n(p->scheduling_gates, p->n_scheduling_gates);
        dp_strv_free_n(p->unmodelled, p->n_unmodelled);
        dp_free_many(p->node_name, p->preferred_node_affinity, p->priority_class_name, p->scheduler_name,
                     p->workload_name, p->workload_pod_group, p->phase, p->nominated_node_name, p->start_time,
                     p->claim_statuses, p->extended_resource_claim_name, p->extended_resource_mappings,
                     p->scheduling_group, p->preemption_policy, p);
        return NULL;
}

dp_namespace *dp_namespace_free(dp_namespace *n) {
        if (!n) return NULL;
        header_done(&n->hdr);
        dp_object_meta_done(&n->meta);
        free(n);
        return NULL;
}

dp_pod_group *dp_pod_group_free(dp_pod_group *g) {
        if (!g) return NULL;
        header_done(&g->hdr);
        dp_object_meta_done(&g->meta);
        nq_free(g->min_resources, g->n_min_resources);
        pod_claims_free(g->resource_claims, g->n_resource_claims);
        dp_free_many(g->queue, g->priority_class_name, g->preemptibility);
        free(g);
        return NULL;
}

dp_priority_class *dp_priority_class_free(dp_priority_class *pc) {
        if (!pc) return NULL;
        header_done(&pc->hdr);
        dp_object_meta_done(&pc->meta);
        dp_free_many(pc->preemption_policy, pc);
        return NULL;
}

dp_pod_disruption_budget *dp_pod_disruption_budget_free(dp_pod_disruption_budget *b) {
        if (!b) return NULL;
        header_done(&b->hdr);
        dp_object_meta_done(&b->meta);
        dp_label_selector_free(b->selector);
        dp_strv_free_n(b->disrupted_pods, b->n_disrupted_pods);
        free(b);
        return NULL;
}

dp_deployment *dp_deployment_free(dp_deployment *d) {
        if (!d) return NULL;
        header_done(&d->hdr);
        dp_object_meta_done(&d->meta);
        kv_free(d->selector_match_labels, d->n_selector_match_labels);
        dp_pod_free(d->template_);
        dp_free_many(d->template_json, d);
        return NULL;
}

void dp_object_free(dp_object o) {
        if (!o.hdr) return;
        switch (o.hdr->kind) {
        case DP_KIND_RESOURCE_SLICE: dp_resource_slice_free(o.slice); break;
        case DP_KIND_DEVICE_CLASS: dp_device_class_free(o.device_class); break;
        case DP_KIND_RESOURCE_CLAIM: dp_resource_claim_free(o.claim); break;
        case DP_KIND_RESOURCE_CLAIM_TEMPLATE: dp_resource_claim_template_free(o.claim_template); break;
        case DP_KIND_DEVICE_TAINT_RULE: dp_device_taint_rule_free(o.taint_rule); break;
        case DP_KIND_NODE: dp_node_free(o.node); break;
        case DP_KIND_POD: dp_pod_free(o.pod); break;
        case DP_KIND_NAMESPACE: dp_namespace_free(o.ns); break;
        case DP_KIND_POD_GROUP: dp_pod_group_free(o.pod_group); break;
        case DP_KIND_PRIORITY_CLASS: dp_priority_class_free(o.priority_class); break;
        case DP_KIND_POD_DISRUPTION_BUDGET: dp_pod_disruption_budget_free(o.pdb); break;
        case DP_KIND_DEPLOYMENT:
        case DP_KIND_REPLICA_SET:
        case DP_KIND_STATEFUL_SET:
        case DP_KIND_JOB:
        case DP_KIND_DAEMON_SET:
        case DP_KIND_SERVICE:
        case DP_KIND_REPLICATION_CONTROLLER: dp_deployment_free(o.deployment); break;
        case DP_KIND_EXT:
                if (o.ext->ext) o.ext->ext->done(o);
                dp_object_meta_done(&o.ext->meta);
                free(o.hdr->api_version);
                free(o.hdr->source);
                free(o.hdr);
                break;
        case DP_KIND_NONE: break;
        }
}

/* ---- names ---- */

const char *dp_kind_name(dp_kind k) {
        switch (k) {
        case DP_KIND_RESOURCE_SLICE: return "ResourceSlice";
        case DP_KIND_DEVICE_CLASS: return "DeviceClass";
        case DP_KIND_RESOURCE_CLAIM: return "ResourceClaim";
        case DP_KIND_RESOURCE_CLAIM_TEMPLATE: return "ResourceClaimTemplate";
        case DP_KIND_DEVICE_TAINT_RULE: return "DeviceTaintRule";
        case DP_KIND_NODE: return "Node";
        case DP_KIND_POD: return "Pod";
        case DP_KIND_NAMESPACE: return "Namespace";
        case DP_KIND_POD_GROUP: return "PodGroup";
        case DP_KIND_PRIORITY_CLASS: return "PriorityClass";
        case DP_KIND_POD_DISRUPTION_BUDGET: return "PodDisruptionBudget";
        case DP_KIND_DEPLOYMENT: return "Deployment";
        case DP_KIND_REPLICA_SET: return "ReplicaSet";
        case DP_KIND_STATEFUL_SET: return "StatefulSet";
        case DP_KIND_JOB: return "Job";
        case DP_KIND_DAEMON_SET: return "DaemonSet";
        case DP_KIND_SERVICE: return "Service";
        case DP_KIND_REPLICATION_CONTROLLER: return "ReplicationController";
        case DP_KIND_EXT:
        case DP_KIND_NONE: break;
        }
        return "";
}

dp_object_meta *dp_object_meta_of(dp_object o) {
        if (!o.hdr) return NULL;
        switch (o.hdr->kind) {
        case DP_KIND_RESOURCE_SLICE: return &o.slice->meta;
        case DP_KIND_DEVICE_CLASS: return &o.device_class->meta;
        case DP_KIND_RESOURCE_CLAIM: return &o.claim->meta;
        case DP_KIND_RESOURCE_CLAIM_TEMPLATE: return &o.claim_template->meta;
        case DP_KIND_DEVICE_TAINT_RULE: return &o.taint_rule->meta;
        case DP_KIND_NODE: return &o.node->meta;
        case DP_KIND_POD: return &o.pod->meta;
        case DP_KIND_NAMESPACE: return &o.ns->meta;
        case DP_KIND_POD_GROUP: return &o.pod_group->meta;
        case DP_KIND_PRIORITY_CLASS: return &o.priority_class->meta;
        case DP_KIND_POD_DISRUPTION_BUDGET: return &o.pdb->meta;
        case DP_KIND_DEPLOYMENT:
        case DP_KIND_REPLICA_SET:
        case DP_KIND_STATEFUL_SET:
        case DP_KIND_JOB:
        case DP_KIND_DAEMON_SET:
        case DP_KIND_SERVICE:
        case DP_KIND_REPLICATION_CONTROLLER: return &o.deployment->meta;
        case DP_KIND_EXT: return &o.ext->meta;
        case DP_KIND_NONE: break;
        }
        return NULL;
}

const char *dp_object_kind_name(dp_object o) {
        if (!o.hdr) return "";
        if (o.hdr->kind == DP_KIND_EXT) return o.ext->ext ? o.ext->ext->kind : "";
        return dp_kind_name(o.hdr->kind);
}

void dp_object_describe(dp_object o, char *buf, size_t size) {
        const dp_object_meta *m = dp_object_meta_of(o);
        const char *name = m && m->name ? m->name : m && m->generate_name ? m->generate_name : "(unnamed)";
        if (m && m->namespace)
                snprintf(buf, size, "%s %s/%s", dp_object_kind_name(o), m->namespace, name);
        else
                snprintf(buf, size, "%s %s", o.hdr ? dp_object_kind_name(o) : "object", name);
}

/* ---- collection ---- */

dp_object_list *dp_object_list_new(void) { return calloc(1, sizeof(dp_object_list)); }

dp_object_list *dp_object_list_free(dp_object_list *l) {
        if (!l) return NULL;
        for (size_t i = 0; i < l->n; i++)
                dp_object_free(l->items[i]);
        for (size_t i = 0; i < l->n_skipped; i++)
                dp_free_many(l->skipped[i].kind, l->skipped[i].api_version, l->skipped[i].first);
        dp_strv_free_n(l->warnings, l->n_warnings);
        dp_free_many(l->items, l->skipped, l);
        return NULL;
}

int dp_object_list_append(dp_object_list *l, dp_object o) {
        assert_return(l && o.hdr, -EINVAL);
        if (DP_GROW(l->items, l->cap, l->n + 1) < 0) return -ENOMEM;
        l->items[l->n++] = o;
        return 0;
}

dp_object dp_object_list_find(const dp_object_list *l, dp_kind kind, const char *ns, const char *name) {
        if (l && name)
                for (size_t i = 0; i < l->n; i++) {
                        if (l->items[i].hdr->kind != kind) continue;
                        const dp_object_meta *m = dp_object_meta_of(l->items[i]);
                        if (!m->name || !streq(m->name, name)) continue;
                        if (ns && !streq_ptr(m->namespace, ns)) continue;
                        return l->items[i];
                }
        return (dp_object){NULL};
}

size_t dp_object_list_count(const dp_object_list *l, dp_kind kind) {
        size_t c = 0;
        if (l)
                for (size_t i = 0; i < l->n; i++)
                        c += l->items[i].hdr->kind == kind;
        return c;
}

/* ---- deep copies ---- */

static bool dup_str(char **dst, const char *src) {
        *dst = NULL;
        if (!src) return true;
        *dst = strdup(src);
        return *dst != NULL;
}

static bool dup_strv(char ***dst, size_t *n_dst, char *const *src, size_t n) {
        *dst = NULL;
        *n_dst = 0;
        if (n == 0) return true;
        if (!(*dst = dp_strv_copy_n(src, n))) return false;
        *n_dst = n;
        return true;
}

static bool dup_nq(dp_named_quantity **dst, size_t *n_dst, const dp_named_quantity *src, size_t n) {
        *dst = NULL;
        *n_dst = 0;
        if (n == 0) return true;
        dp_named_quantity *v = calloc(n, sizeof(*v));
        if (!v) return false;
        for (size_t i = 0; i < n; i++) {
                v[i].value = src[i].value;
                if (!dup_str(&v[i].name, src[i].name)) {
                        nq_free(v, i);
                        return false;
                }
        }
        *dst = v;
        *n_dst = n;
        return true;
}

int dp_toleration_copy(dp_toleration *dst, const dp_toleration *src) {
        dp_toleration t = {.has_toleration_seconds = src->has_toleration_seconds,
                           .toleration_seconds = src->toleration_seconds};
        if (!dup_str(&t.key, src->key) || !dup_str(&t.op, src->op) || !dup_str(&t.value, src->value) ||
            !dup_str(&t.effect, src->effect)) {
                dp_toleration_done(&t);
                return -ENOMEM;
        }
        *dst = t;
        return 0;
}

static bool dup_tolerations(dp_toleration **dst, size_t *n_dst, const dp_toleration *src, size_t n) {
        *dst = NULL;
        *n_dst = 0;
        if (n == 0) return true;
        dp_toleration *v = calloc(n, sizeof(*v));
        if (!v) return false;
        for (size_t i = 0; i < n; i++)
                if (dp_toleration_copy(&v[i], &src[i]) < 0) {
                        tolerations_free(v, i);
                        return false;
                }
        *dst = v;
        *n_dst = n;
        return true;
}

static bool dup_requirements(dp_node_selector_requirement **dst, size_t *n_dst, const dp_node_selector_requirement *src,
                             size_t n) {
        *dst = NULL;
        *n_dst = 0;
        if (n == 0) return true;
        dp_node_selector_requirement *v = calloc(n, sizeof(*v));
        if (!v) return false;
        *dst = v;
        *n_dst = n; /* partially filled entries are zeroed: the caller's done() frees them */
        for (size_t i = 0; i < n; i++) {
                v[i].op = src[i].op;
                if (!dup_str(&v[i].key, src[i].key) ||
                    !dup_strv(&v[i].values, &v[i].n_values, src[i].values, src[i].n_values))
                        return false;
        }
        return true;
}

dp_node_selector *dp_node_selector_clone(const dp_node_selector *ns) {
        if (!ns) return NULL;
        dp_node_selector *c = calloc(1, sizeof(*c));
        if (!c) return NULL;
        if (ns->n_terms) {
                c->terms = calloc(ns->n_terms, sizeof(*c->terms));
                if (!c->terms) return dp_node_selector_free(c);
                c->n_terms = ns->n_terms;
        }
        for (size_t i = 0; i < ns->n_terms; i++) {
                const dp_node_selector_term *s = &ns->terms[i];
                dp_node_selector_term *d = &c->terms[i];
                if (!dup_requirements(&d->match_expressions, &d->n_match_expressions, s->match_expressions,
                                      s->n_match_expressions) ||
                    !dup_requirements(&d->match_fields, &d->n_match_fields, s->match_fields, s->n_match_fields))
                        return dp_node_selector_free(c);
        }
        return c;
}

/* Partially filled entries stay in *dst for the caller's done() to free. */
static bool dup_kvs(dp_kv **dst, size_t *n_dst, const dp_kv *src, size_t n) {
        if (n == 0) return true;
        if (!(*dst = calloc(n, sizeof(dp_kv)))) return false;
        *n_dst = n;
        for (size_t i = 0; i < n; i++)
                if (!dup_str(&(*dst)[i].key, src[i].key) || !dup_str(&(*dst)[i].value, src[i].value)) return false;
        return true;
}

static bool dup_meta(dp_object_meta *d, const dp_object_meta *s) {
        *d = (dp_object_meta){.generation = s->generation};
        if (!dup_str(&d->name, s->name) || !dup_str(&d->generate_name, s->generate_name) ||
            !dup_str(&d->namespace, s->namespace) || !dup_str(&d->uid, s->uid) ||
            !dup_str(&d->resource_version, s->resource_version) ||
            !dup_str(&d->creation_timestamp, s->creation_timestamp) ||
            !dup_str(&d->deletion_timestamp, s->deletion_timestamp))
                return false;
        if (!dup_kvs(&d->labels, &d->n_labels, s->labels, s->n_labels) ||
            !dup_kvs(&d->annotations, &d->n_annotations, s->annotations, s->n_annotations))
                return false;
        if (s->n_owner_references) {
                if (!(d->owner_references = calloc(s->n_owner_references, sizeof(dp_owner_ref)))) return false;
                d->n_owner_references = s->n_owner_references;
                for (size_t i = 0; i < s->n_owner_references; i++) {
                        const dp_owner_ref *a = &s->owner_references[i];
                        dp_owner_ref *b = &d->owner_references[i];
                        b->controller = a->controller;
                        if (!dup_str(&b->api_version, a->api_version) || !dup_str(&b->kind, a->kind) ||
                            !dup_str(&b->name, a->name) || !dup_str(&b->uid, a->uid))
                                return false;
                }
        }
        return true;
}

static bool dup_selectors(dp_device_selector **dst, size_t *n_dst, const dp_device_selector *src, size_t n) {
        *dst = NULL;
        *n_dst = 0;
        if (!n) return true;
        if (!(*dst = calloc(n, sizeof(**dst)))) return false;
        *n_dst = n;
        for (size_t i = 0; i < n; i++)
                if (!dup_str(&(*dst)[i].cel_expression, src[i].cel_expression)) return false;
        return true;
}

static bool dup_config(dp_device_config *d, const dp_device_config *s) {
        return dup_strv(&d->requests, &d->n_requests, s->requests, s->n_requests) && dup_str(&d->driver, s->driver) &&
               dup_str(&d->parameters_json, s->parameters_json);
}

static bool dup_request_spec(dp_device_request_spec *d, const dp_device_request_spec *s) {
        d->allocation_mode = s->allocation_mode;
        d->count = s->count;
        d->has_admin_access = s->has_admin_access;
        d->admin_access = s->admin_access;
        return dup_str(&d->device_class_name, s->device_class_name) &&
               dup_selectors(&d->selectors, &d->n_selectors, s->selectors, s->n_selectors) &&
               dup_tolerations(&d->tolerations, &d->n_tolerations, s->tolerations, s->n_tolerations) &&
               dup_nq(&d->capacity_requests, &d->n_capacity_requests, s->capacity_requests, s->n_capacity_requests);
}

static bool dup_claim_spec(dp_resource_claim_spec *d, const dp_resource_claim_spec *s) {
        if (s->n_requests) {
                if (!(d->requests = calloc(s->n_requests, sizeof(*d->requests)))) return false;
                d->n_requests = s->n_requests;
        }
        for (size_t i = 0; i < s->n_requests; i++) {
                const dp_device_request *a = &s->requests[i];
                dp_device_request *b = &d->requests[i];
                if (!dup_str(&b->name, a->name)) return false;
                if (a->exactly) {
                        if (!(b->exactly = calloc(1, sizeof(*b->exactly)))) return false;
                        if (!dup_request_spec(b->exactly, a->exactly)) return false;
                }
                if (a->n_first_available) {
                        if (!(b->first_available = calloc(a->n_first_available, sizeof(*b->first_available))))
                                return false;
                        b->n_first_available = a->n_first_available;
                        for (size_t j = 0; j < a->n_first_available; j++)
                                if (!dup_str(&b->first_available[j].name, a->first_available[j].name) ||
                                    !dup_request_spec(&b->first_available[j].spec, &a->first_available[j].spec))
                                        return false;
                }
        }
        if (s->n_constraints) {
                if (!(d->constraints = calloc(s->n_constraints, sizeof(*d->constraints)))) return false;
                d->n_constraints = s->n_constraints;
        }
        for (size_t i = 0; i < s->n_constraints; i++) {
                const dp_device_constraint *a = &s->constraints[i];
                dp_device_constraint *b = &d->constraints[i];
                if (!dup_strv(&b->requests, &b->n_requests, a->requests, a->n_requests) ||
                    !dup_str(&b->match_attribute, a->match_attribute) ||
                    !dup_str(&b->distinct_attribute, a->distinct_attribute))
                        return false;
        }
        if (s->n_config) {
                if (!(d->config = calloc(s->n_config, sizeof(*d->config)))) return false;
                d->n_config = s->n_config;
        }
        for (size_t i = 0; i < s->n_config; i++)
                if (!dup_config(&d->config[i], &s->config[i])) return false;
        return true;
}

static bool dup_allocation(dp_allocation_result **dst, const dp_allocation_result *s) {
        dp_allocation_result *a = calloc(1, sizeof(*a));
        if (!a) return false;
        *dst = a;
        if (s->n_results) {
                if (!(a->results = calloc(s->n_results, sizeof(*a->results)))) return false;
                a->n_results = s->n_results;
        }
        for (size_t i = 0; i < s->n_results; i++) {
                const dp_device_allocation_result *x = &s->results[i];
                dp_device_allocation_result *y = &a->results[i];
                y->has_admin_access = x->has_admin_access;
                y->admin_access = x->admin_access;
                if (!dup_str(&y->request, x->request) || !dup_str(&y->driver, x->driver) ||
                    !dup_str(&y->pool, x->pool) || !dup_str(&y->device, x->device) ||
                    !dup_tolerations(&y->tolerations, &y->n_tolerations, x->tolerations, x->n_tolerations) ||
                    !dup_str(&y->share_id, x->share_id) ||
                    !dup_nq(&y->consumed_capacity, &y->n_consumed_capacity, x->consumed_capacity,
                            x->n_consumed_capacity) ||
                    !dup_strv(&y->binding_conditions, &y->n_binding_conditions, x->binding_conditions,
                              x->n_binding_conditions) ||
                    !dup_strv(&y->binding_failure_conditions, &y->n_binding_failure_conditions,
                              x->binding_failure_conditions, x->n_binding_failure_conditions) ||
                    !dup_strv(&y->skip_node_operations, &y->n_skip_node_operations, x->skip_node_operations,
                              x->n_skip_node_operations))
                        return false;
        }
        if (s->n_config) {
                if (!(a->config = calloc(s->n_config, sizeof(*a->config)))) return false;
                a->n_config = s->n_config;
        }
        for (size_t i = 0; i < s->n_config; i++) {
                a->config[i].source = s->config[i].source;
                if (!dup_config(&a->config[i].config, &s->config[i].config)) return false;
        }
        if (s->node_selector && !(a->node_selector = dp_node_selector_clone(s->node_selector))) return false;
        return dup_str(&a->allocation_timestamp, s->allocation_timestamp);
}

dp_resource_claim *dp_resource_claim_clone(const dp_resource_claim *c) {
        if (!c) return NULL;
        dp_resource_claim *d = calloc(1, sizeof(*d));
        if (!d) return NULL;
        d->hdr.kind = c->hdr.kind;
        d->hdr.doc_index = c->hdr.doc_index;
        d->hdr.item_index = c->hdr.item_index;
        d->hdr.line = c->hdr.line;
        if (!dup_str(&d->hdr.api_version, c->hdr.api_version) || !dup_str(&d->hdr.source, c->hdr.source) ||
            !dup_meta(&d->meta, &c->meta) || !dup_claim_spec(&d->spec, &c->spec) ||
            (c->allocation && !dup_allocation(&d->allocation, c->allocation)))
                return dp_resource_claim_free(d);
        if (c->n_reserved_for) {
                if (!(d->reserved_for = calloc(c->n_reserved_for, sizeof(*d->reserved_for))))
                        return dp_resource_claim_free(d);
                d->n_reserved_for = c->n_reserved_for;
                for (size_t i = 0; i < c->n_reserved_for; i++) {
                        const dp_consumer_ref *x = &c->reserved_for[i];
                        dp_consumer_ref *y = &d->reserved_for[i];
                        if (!dup_str(&y->api_group, x->api_group) || !dup_str(&y->resource, x->resource) ||
                            !dup_str(&y->name, x->name) || !dup_str(&y->uid, x->uid))
                                return dp_resource_claim_free(d);
                }
        }
        /* status.devices is driver-written state; a clone used for a new
         * allocation starts without it. */
        return d;
}

void dp_kvs_free(dp_kv *v, size_t n) { kv_free(v, n); }
void dp_taints_free(dp_taint *v, size_t n) { taints_free(v, n); }
