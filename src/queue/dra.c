/* SPDX-License-Identifier: Apache-2.0
 *
 * dra.c — Kueue's DRA quota (v0.19, the ResourceClaimTemplate path,
 * pkg/dra/claims.go): each ResourceClaimTemplate a pod template names is
 * charged per pod as the sum of `count` of its `exactly` requests per
 * DeviceClass, each DeviceClass mapped to a quota resource by the
 * Configuration's resources.deviceClassMappings. What Kueue refuses makes
 * the workload Inadmissible with Kueue's field-error message: a
 * ResourceClaim named directly, a template not found, firstAvailable,
 * allocationMode All, a DeviceClass not mapped. adminAccess requests are
 * free. With the gate KueueDRAIntegrationPrioritizedList (Kueue v0.20,
 * alpha; pkg/dra chargeForPrioritizedList) a firstAvailable request is
 * charged the largest count of its alternatives on the one quota resource
 * they all map to. Whether the admitted pods' claims then fit is the allocator's
 * business (simulate places them as any pod).
 */
#include <inttypes.h>
#include <stdio.h>

#include "queue/queue-internal.h"

static const dp_resource_claim_template *find_template(const dp_object_list *l, const char *ns, const char *name) {
        for (size_t i = 0; i < l->n; i++) {
                dp_object o = l->items[i];
                if (o.hdr->kind != DP_KIND_RESOURCE_CLAIM_TEMPLATE) continue;
                const dp_object_meta *m = &o.claim_template->meta;
                const char *ons = m->namespace && m->namespace[0] ? m->namespace : "default";
                if (streq(ons, ns) && streq_ptr(m->name, name)) return o.claim_template;
        }
        return NULL;
}

/* Kueue's field error text (apimachinery's field.Error.Error()). */
static char *field_error(size_t ps, size_t claim, const char *tail, const char *body) {
        return dp_asprintf("spec.podSets[%zu].template.spec.resourceClaims[%zu]%s: %s", ps, claim, tail, body);
}

/* What one template costs: per DeviceClass into cls (mapped by the
 * caller), and what counter and capacity sources charge, already per quota
 * resource, into direct (dra-sources.c); a Kueue message in *ret_msg when
 * Kueue refuses it. */
typedef struct charges {
        dp_queue_request *cls, *direct;
        size_t n_cls, n_direct;
} charges;

/* Alternative k of firstAvailable request `req` refused: Kueue's field
 * error for its `field`, "TYPE: DETAIL" with the template's name put
 * before the detail, as GetResourceRequestsForResourceClaimTemplates
 * wraps it. */
static int alt_refused(size_t ps, size_t claim, size_t req, size_t k, const char *field, const char *type,
                       const char *tn, const char *detail, char **ret_msg) {
        char tail[160];
        snprintf(tail, sizeof(tail), ".devices.requests[%zu].firstAvailable[%zu].%s", req, k, field);
        _cleanup_free_ char *body = dp_asprintf("%s: ResourceClaimTemplate %s: %s", type, tn, detail);
        return body && (*ret_msg = field_error(ps, claim, tail, body)) ? 0 : -ENOMEM;
}

/* A firstAvailable request under the prioritized-list gate: the scheduler
 * takes one alternative, so the largest count bounds whichever it takes;
 * one bound holds only when every alternative maps to the same quota
 * resource, and the counter and capacity paths read exactly requests only.
 * Charged per quota resource into (out, n_out), or Kueue's message. */
static int prioritized_charge(const dp_queue *q, const dp_device_request *rq, const char *tn, size_t ps, size_t claim,
                              size_t req, charges *ch, char **ret_msg) {
        const dp_kueue_config *cfg = q->opts ? q->opts->config : NULL;
        const char *logical = NULL;
        int64_t most = 0;
        for (size_t k = 0; k < rq->n_first_available; k++) {
                const dp_device_request_spec *s = &rq->first_available[k].spec;
                const char *dc = s->device_class_name ? s->device_class_name : "";
                if (s->allocation_mode != DP_ALLOCATION_MODE_EXACT_COUNT)
                        return alt_refused(ps, claim, req, k, "allocationMode", "Unsupported value: \"All\"", tn,
                                           "supported values: \"ExactCount\"", ret_msg);
                if (!dc[0]) return alt_refused(ps, claim, req, k, "deviceClassName", "Required value", tn, "", ret_msg);
                const char *mapped = dp_kueue_config_map(cfg, dc);
                const dp_kueue_dra_source *src[1];
                const char *quota[1];
                bool sources = mapped && (dp_kueue_config_sources(cfg, dc, DP_KUEUE_SOURCE_COUNTER, src, quota, 1) ||
                                          dp_kueue_config_sources(cfg, dc, DP_KUEUE_SOURCE_CAPACITY, src, quota, 1));
                if (!mapped || sources || (logical && !streq(logical, mapped))) {
                        _cleanup_free_ char *type =
                                dp_asprintf("%s: \"%s\"", mapped ? "Invalid value" : "Not found", dc);
                        _cleanup_free_ char *detail =
                                !mapped   ? dp_strdup("")
                                : sources ? dp_strdup("a counter-backed or capacity-backed DeviceClass is not "
                                                      "supported for firstAvailable")
                                          : dp_asprintf("every alternative must map to \"%s\", this one maps to \"%s\"",
                                                        logical, mapped);
                        return type && detail
                                       ? alt_refused(ps, claim, req, k, "deviceClassName", type, tn, detail, ret_msg)
                                       : -ENOMEM;
                }
                logical = mapped;
                most = DP_MAX(most, s->count > 0 ? s->count : 1); /* an unset count is one device */
        }
        if (!logical) return 0;
        int64_t sum = 0; /* what earlier requests of the template charge it, bounded as Kueue bounds it */
        for (size_t i = 0; i < ch->n_direct; i++)
                if (streq(ch->direct[i].name, logical)) sum = ch->direct[i].value;
        if (sum > INT64_MAX - 1 - most) {
                char tail[96];
                snprintf(tail, sizeof(tail), ".devices.requests[%zu]", req);
                _cleanup_free_ char *body =
                        dp_asprintf("Invalid value: %" PRId64 ": ResourceClaimTemplate %s: the counts "
                                    "charged to logical resource %s do not add up to a bounded quota "
                                    "amount",
                                    most, tn, logical);
                return body && (*ret_msg = field_error(ps, claim, tail, body)) ? 0 : -ENOMEM;
        }
        return q_request_add(&ch->direct, &ch->n_direct, logical, most);
}

static int template_charge(const dp_queue *q, const dp_object_list *l, const dp_resource_claim_template *t, size_t ps,
                           size_t claim, charges *ch, char **ret_msg) {
        const char *tn = t->meta.name;
        const dp_kueue_config *cfg = q->opts ? q->opts->config : NULL;
        for (size_t i = 0; i < t->spec.n_requests; i++) {
                const dp_device_request *rq = &t->spec.requests[i];
                char tail[96], body[300];
                if (!rq->exactly && cfg && cfg->prioritized_list_enabled) {
                        int r = prioritized_charge(q, rq, tn, ps, claim, i, ch, ret_msg);
                        if (r < 0 || *ret_msg) return r;
                        continue;
                }
                if (!rq->exactly) {
                        snprintf(tail, sizeof(tail), ".devices.requests[%zu]", i);
                        snprintf(body, sizeof(body),
                                 "Invalid value: null: ResourceClaimTemplate %s: FirstAvailable device selection is "
                                 "not supported",
                                 tn);
                        return (*ret_msg = field_error(ps, claim, tail, body)) ? 0 : -ENOMEM;
                }
                const dp_device_request_spec *e = rq->exactly;
                if (e->has_admin_access && e->admin_access) continue;
                if (e->allocation_mode == DP_ALLOCATION_MODE_ALL) {
                        snprintf(tail, sizeof(tail), ".devices.requests[%zu].exactly.allocationMode", i);
                        snprintf(body, sizeof(body),
                                 "Invalid value: \"All\": ResourceClaimTemplate %s: AllocationMode 'All' is not "
                                 "supported",
                                 tn);
                        return (*ret_msg = field_error(ps, claim, tail, body)) ? 0 : -ENOMEM;
                }
                if (!e->device_class_name || !e->device_class_name[0]) continue;
                int r = q_dra_source_charge(q, e, ps, claim, i, &ch->direct, &ch->n_direct, ret_msg);
                if (r < 0 || *ret_msg) return r;
                if (r > 0) continue; /* charged by its sources, not by the count */
                if ((r = q_request_add(&ch->cls, &ch->n_cls, e->device_class_name, e->count)) < 0) return r;
        }
        return 0;
}

/* The template's classes mapped to quota resources, added to the pod set. */
static int map_charges(const dp_queue *q, dp_queue_request *cls, size_t n_cls, size_t ps, size_t claim,
                       dp_queue_podset *out, char **ret_msg) {
        for (size_t i = 0; i < n_cls; i++) {
                const char *res = dp_kueue_config_map(q->opts ? q->opts->config : NULL, cls[i].name);
                if (!res) {
                        char body[400];
                        snprintf(body, sizeof(body), "Not found: \"%s\"", cls[i].name);
                        return (*ret_msg = field_error(ps, claim, ".resourceClaimTemplateName.deviceClassName", body))
                                       ? 0
                                       : -ENOMEM;
                }
                int r = q_request_add(&out->requests, &out->n_requests, res, cls[i].value);
                if (r < 0) return r;
        }
        return 0;
}

/* One claim of the pod template. */
static int claim_charge(const dp_queue *q, const dp_object_list *l, const char *ns, size_t ps_index,
                        dp_queue_podset *ps, size_t j, char **ret_msg) {
        const dp_pod_resource_claim *c = &ps->tmpl->resource_claims[j];
        if (c->resource_claim_name) {
                *ret_msg = dp_asprintf("DynamicResourceAllocation feature does not support use of resource claims");
                return *ret_msg ? 0 : -ENOMEM;
        }
        if (!c->resource_claim_template_name) return 0;
        const dp_resource_claim_template *t = find_template(l, ns, c->resource_claim_template_name);
        if (!t) {
                char body[700];
                snprintf(body, sizeof(body),
                         "Internal error: failed to get claim spec for ResourceClaimTemplate %s in podset %s: "
                         "resourceclaimtemplates.resource.k8s.io \"%s\" not found",
                         c->resource_claim_template_name, ps->name, c->resource_claim_template_name);
                return (*ret_msg = field_error(ps_index, j, "", body)) ? 0 : -ENOMEM;
        }
        charges ch = {0};
        int r = template_charge(q, l, t, ps_index, j, &ch, ret_msg);
        if (r >= 0 && !*ret_msg) r = map_charges(q, ch.cls, ch.n_cls, ps_index, j, ps, ret_msg);
        for (size_t i = 0; r >= 0 && !*ret_msg && i < ch.n_direct; i++)
                r = q_request_add(&ps->requests, &ps->n_requests, ch.direct[i].name, ch.direct[i].value);
        q_requests_free(ch.cls, ch.n_cls);
        q_requests_free(ch.direct, ch.n_direct);
        return r;
}

int q_dra_requests(const dp_queue *q, const dp_object_list *l, dp_queue_workload *w, size_t ps_index) {
        dp_queue_podset *ps = &w->podsets[ps_index];
        int r = q_dra_extended(q, w, ps_index);
        if (r < 0) return r;
        if (!ps->tmpl || !ps->tmpl->n_resource_claims || w->dra_message) return 0;
        const dp_kueue_config *cfg = q->opts ? q->opts->config : NULL;
        if (!cfg || cfg->dra_disabled) {
                if (w->note) return 0;
                w->note =
                        dp_asprintf("its pods' ResourceClaims are not counted in quota: %s",
                                    cfg ? "the Configuration turns KueueDRAIntegration off"
                                        : "Kueue counts them through its Configuration's resources.deviceClassMappings "
                                          "(devplane: --kueue-config FILE)");
                return w->note ? 0 : -ENOMEM;
        }
        for (size_t j = 0; j < ps->tmpl->n_resource_claims && r >= 0 && !w->dra_message; j++)
                r = claim_charge(q, l, w->ns, ps_index, ps, j, &w->dra_message);
        return r;
}
