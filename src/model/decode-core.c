/* SPDX-License-Identifier: Apache-2.0
 *
 * decode-core.c — core/v1 Node, Pod, Namespace and gang PodGroups.
 * These kinds carry many fields devplane does not model (probes, volumes,
 * node addresses...). Fields Kubernetes defines are accepted and dropped,
 * listed below by name; anything else is an unknown field, as for the DRA
 * kinds.
 */
#include "model/decode-internal.h"

static const char *const top_level[] = {"apiVersion", "kind", "metadata", NULL};

static int decode_ns_part(dctx *c, const dp_doc_node *n, const char *const *accepted);

/* ---- Node ---- */

static const char *const node_spec_ignored[] = {"podCIDR",      "podCIDRs",   "providerID",
                                                "configSource", "externalID", NULL};
static const char *const node_status_ignored[] = {"phase",    "conditions",      "addresses",    "daemonEndpoints",
                                                  "nodeInfo", "volumesInUse",    "volumesAttached",
                                                  "config",   "runtimeHandlers", "features",     "declaredFeatures",
                                                  NULL};

static int decode_node_spec(dctx *c, const dp_doc_node *n, dp_node *node) {
        DECODE_FIELDS(c, n, k, v,
                      if (streq(k, "taints")) r =
                              get_seq(c, v, (void **)&node->taints, &node->n_taints, sizeof(dp_taint), decode_taint);
                      else if (streq(k, "unschedulable")) r = get_bool(c, v, &node->unschedulable);
                      else if (in_list(k, node_spec_ignored)) r = 0;);
        return 0;
}

static int decode_node_image(dctx *c, const dp_doc_node *n, void *elem) {
        dp_node_image *im = elem;
        DECODE_FIELDS(c, n, k, v, if (streq(k, "names")) r = get_strv(c, v, &im->names, &im->n_names);
                      else if (streq(k, "sizeBytes")) r = get_int64(c, v, &im->size_bytes););
        if (im->size_bytes < 0) return dfail(c, n, -EINVAL, "sizeBytes: must not be negative");
        return 0;
}

static int decode_node_status(dctx *c, const dp_doc_node *n, dp_node *node) {
        DECODE_FIELDS(
                c, n, k, v, if (streq(k, "capacity")) r = get_quantity_map(c, v, &node->capacity, &node->n_capacity);
                else if (streq(k, "allocatable")) r = get_quantity_map(c, v, &node->allocatable, &node->n_allocatable);
                else if (streq(k, "images")) r =
                        get_seq(c, v, (void **)&node->images, &node->n_images, sizeof(dp_node_image), decode_node_image);
                else if (in_list(k, node_status_ignored)) r = 0;);
        return 0;
}

int decode_node(dctx *c, const dp_doc_node *root, dp_node *node) {
        DECODE_FIELDS(c, root, k, v, if (in_list(k, top_level)) r = 0;
                      else if (streq(k, "spec")) r = decode_node_spec(c, v, node);
                      else if (streq(k, "status")) r = decode_node_status(c, v, node););
        return 0;
}

/* ---- Pod ---- */

static const char *const container_ignored[] = {"command",
                                                "args",
                                                "workingDir",
                                                "envFrom",
                                                "env",
                                                "resizePolicy",
                                                "restartPolicyRules",
                                                "volumeMounts",
                                                "volumeDevices",
                                                "livenessProbe",
                                                "readinessProbe",
                                                "startupProbe",
                                                "lifecycle",
                                                "terminationMessagePath",
                                                "terminationMessagePolicy",
                                                "imagePullPolicy",
                                                "securityContext",
                                                "stdin",
                                                "stdinOnce",
                                                "tty",
                                                NULL};

static int decode_container_claim(dctx *c, const dp_doc_node *n, void *elem) {
        dp_container_claim *q = elem;
        DECODE_FIELDS(c, n, k, v, if (streq(k, "name")) r = get_str(c, v, &q->name);
                      else if (streq(k, "request")) r = get_str(c, v, &q->request););
        if (!q->name) return dfail(c, n, -EINVAL, "name: required");
        return 0;
}

static int decode_resources(dctx *c, const dp_doc_node *n, dp_container *ct) {
        DECODE_FIELDS(c, n, k, v, if (streq(k, "limits")) r = get_quantity_map(c, v, &ct->limits, &ct->n_limits);
                      else if (streq(k, "requests")) r = get_quantity_map(c, v, &ct->requests, &ct->n_requests);
                      else if (streq(k, "claims")) r = get_seq(c, v, (void **)&ct->claims, &ct->n_claims,
                                                               sizeof(dp_container_claim), decode_container_claim););
        return 0;
}

static int decode_container(dctx *c, const dp_doc_node *n, void *elem) {
        dp_container *ct = elem;
        DECODE_FIELDS(c, n, k, v, if (streq(k, "name")) r = get_str(c, v, &ct->name);
                      else if (streq(k, "image")) r = get_str(c, v, &ct->image);
                      else if (streq(k, "restartPolicy")) r = get_str(c, v, &ct->restart_policy);
                      else if (streq(k, "resources")) r = decode_resources(c, v, ct);
                      else if (streq(k, "ports")) r = decode_container_ports(c, v, ct);
                      else if (in_list(k, container_ignored)) r = 0;);
        return 0;
}

static const decode_field pod_claim_fields[] = {
        STR_FIELD("name", dp_pod_resource_claim, name),
        STR_FIELD("resourceClaimName", dp_pod_resource_claim, resource_claim_name),
        STR_FIELD("resourceClaimTemplateName", dp_pod_resource_claim, resource_claim_template_name),
        {},
};

static int decode_pod_claim(dctx *c, const dp_doc_node *n, void *elem) {
        dp_pod_resource_claim *q = elem;
        int r = get_fields(c, n, q, pod_claim_fields); /* n is a map: get_seq refuses null entries */
        if (r < 0) return r;
        if (!!q->resource_claim_name == !!q->resource_claim_template_name)
                return dfail(c, n, -EINVAL,
                             "exactly one of resourceClaimName or resourceClaimTemplateName must be set");
        return 0;
}

static int decode_required_affinity(dctx *c, const dp_doc_node *n, dp_pod *p) {
        if (dp_doc_is_null(n)) return 0;
        return decode_node_selector(c, n, &p->required_node_affinity);
}

/* A PreferredSchedulingTerm: weight 1..100 (the API server's rule) and a
 * preference (a node selector term). */
static int decode_preferred_node_term(dctx *c, const dp_doc_node *n, void *elem) {
        dp_preferred_node_term *t = elem;
        bool have_pref = false, have_weight = false;
        DECODE_FIELDS(c, n, k, v, if (streq(k, "weight")) {
                have_weight = true;
                r = get_int32(c, v, &t->weight);
        } else if (streq(k, "preference")) {
                have_pref = !dp_doc_is_null(v);
                r = have_pref ? decode_node_selector_term(c, v, &t->preference) : 0;
        });
        if (!have_pref) return dfail(c, n, -EINVAL, "preference: required");
        if (!have_weight || t->weight < 1 || t->weight > 100)
                return dfail(c, n, -EINVAL, "weight: must be in the range 1-100");
        return 0;
}

static int decode_node_affinity(dctx *c, const dp_doc_node *n, dp_pod *p) {
        DECODE_FIELDS(c, n, k, v,
                      if (streq(k, "requiredDuringSchedulingIgnoredDuringExecution")) r =
                              decode_required_affinity(c, v, p);
                      else if (streq(k, "preferredDuringSchedulingIgnoredDuringExecution")) r =
                              get_seq(c, v, (void **)&p->preferred_node_affinity, &p->n_preferred_node_affinity,
                                      sizeof(dp_preferred_node_term), decode_preferred_node_term););
        return 0;
}

static int decode_affinity(dctx *c, const dp_doc_node *n, dp_pod *p) {
        DECODE_FIELDS(c, n, k, v, if (streq(k, "nodeAffinity")) r = decode_node_affinity(c, v, p);
                      else if (streq(k, "podAffinity")) r = decode_pod_affinity(c, v, p, false);
                      else if (streq(k, "podAntiAffinity")) r = decode_pod_affinity(c, v, p, true););
        return 0;
}

/* spec.workloadRef, into the pod's own fields */
static const decode_field workload_ref_fields[] = {
        STR_FIELD("name", dp_pod, workload_name),
        STR_FIELD("podGroup", dp_pod, workload_pod_group),
        SKIP_FIELD("podGroupReplicaKey"),
        {},
};

static const char *const pod_spec_ignored[] = {"ephemeralContainers",
                                               "restartPolicy",
                                               "terminationGracePeriodSeconds",
                                               "activeDeadlineSeconds",
                                               "dnsPolicy",
                                               "serviceAccountName",
                                               "serviceAccount",
                                               "automountServiceAccountToken",
                                               "hostNetwork",
                                               "hostPID",
                                               "hostIPC",
                                               "shareProcessNamespace",
                                               "securityContext",
                                               "imagePullSecrets",
                                               "hostname",
                                               "subdomain",
                                               "hostAliases",
                                               "dnsConfig",
                                               "readinessGates",
                                               "runtimeClassName",
                                               "enableServiceLinks",
                                               "setHostnameAsFQDN",
                                               "os",
                                               "hostUsers",
                                               "hostnameOverride",
                                               NULL};

static int decode_pod_resources(dctx *c, const dp_doc_node *n, dp_pod *p);

static int decode_scheduling_group(dctx *c, const dp_doc_node *n, dp_pod *p) {
        DECODE_FIELDS(c, n, k, v, if (streq(k, "podGroupName")) r = get_str(c, v, &p->scheduling_group););
        return 0;
}

static int decode_pod_spec(dctx *c, const dp_doc_node *n, dp_pod *p) {
        DECODE_FIELDS(
                c, n, k, v, if (streq(k, "nodeName")) r = get_str(c, v, &p->node_name);
                else if (streq(k, "nodeSelector")) r = get_kv_map(c, v, &p->node_selector, &p->n_node_selector);
                else if (streq(k, "affinity")) r = decode_affinity(c, v, p);
                else if (streq(k, "tolerations")) r = get_seq(c, v, (void **)&p->tolerations, &p->n_tolerations,
                                                              sizeof(dp_toleration), decode_toleration);
                else if (streq(k, "priority")) {
                        r = get_int32(c, v, &p->priority);
                        p->has_priority = r >= 0 && !dp_doc_is_null(v);
                } else if (streq(k, "priorityClassName")) r = get_str(c, v, &p->priority_class_name);
                else if (streq(k, "schedulerName")) r = get_str(c, v, &p->scheduler_name);
                else if (streq(k, "containers")) r = get_seq(c, v, (void **)&p->containers, &p->n_containers,
                                                             sizeof(dp_container), decode_container);
                else if (streq(k, "initContainers")) r =
                        get_seq(c, v, (void **)&p->init_containers, &p->n_init_containers, sizeof(dp_container),
                                decode_container);
                else if (streq(k, "overhead")) r = get_quantity_map(c, v, &p->overhead, &p->n_overhead);
                else if (streq(k, "resourceClaims")) r =
                        get_seq(c, v, (void **)&p->resource_claims, &p->n_resource_claims,
                                sizeof(dp_pod_resource_claim), decode_pod_claim);
                else if (streq(k, "workloadRef")) r = get_fields(c, v, p, workload_ref_fields);
                else if (streq(k, "resources")) r = decode_pod_resources(c, v, p);
                else if (streq(k, "schedulingGroup")) r = decode_scheduling_group(c, v, p);
                else if (streq(k, "topologySpreadConstraints")) r = decode_topology_spread(c, v, p);
                else if (pod_sched_field(k)) r = decode_pod_sched_field(c, k, v, p);
                else if (in_list(k, pod_spec_ignored)) r = 0;);
        return 0;
}

static int decode_claim_status(dctx *c, const dp_doc_node *n, void *elem) {
        dp_pod_claim_status *q = elem;
        DECODE_FIELDS(c, n, k, v, if (streq(k, "name")) r = get_str(c, v, &q->name);
                      else if (streq(k, "resourceClaimName")) r = get_str(c, v, &q->resource_claim_name););
        return 0;
}

static const char *const pod_status_ignored[] = {"conditions",
                                                 "message",
                                                 "reason",
                                                 "hostIP",
                                                 "hostIPs",
                                                 "podIP",
                                                 "podIPs",
                                                 "initContainerStatuses",
                                                 "containerStatuses",
                                                 "ephemeralContainerStatuses",
                                                 "qosClass",
                                                 "resize",
                                                 "observedGeneration",
                                                 "allocatedResources",
                                                 NULL};

static const decode_field mapping_fields[] = {
        STR_FIELD("containerName", dp_extended_resource_mapping, container_name),
        STR_FIELD("resourceName", dp_extended_resource_mapping, resource_name),
        STR_FIELD("requestName", dp_extended_resource_mapping, request_name),
        {},
};

static int decode_mapping(dctx *c, const dp_doc_node *n, void *elem) { return get_fields(c, n, elem, mapping_fields); }

static int decode_extended_status(dctx *c, const dp_doc_node *n, dp_pod *p) {
        DECODE_FIELDS(c, n, k, v,
                      if (streq(k, "resourceClaimName")) r = get_str(c, v, &p->extended_resource_claim_name);
                      else if (streq(k, "requestMappings")) r =
                              get_seq(c, v, (void **)&p->extended_resource_mappings, &p->n_extended_resource_mappings,
                                      sizeof(dp_extended_resource_mapping), decode_mapping););
        return 0;
}

static int decode_pod_resources(dctx *c, const dp_doc_node *n, dp_pod *p) {
        DECODE_FIELDS(c, n, k, v, if (streq(k, "limits")) r = get_quantity_map(c, v, &p->pod_limits, &p->n_pod_limits);
                      else if (streq(k, "requests")) r = get_quantity_map(c, v, &p->pod_requests, &p->n_pod_requests););
        return 0;
}

static int decode_pod_status(dctx *c, const dp_doc_node *n, dp_pod *p) {
        DECODE_FIELDS(c, n, k, v, if (streq(k, "phase")) r = get_str(c, v, &p->phase);
                      else if (streq(k, "extendedResourceClaimStatus")) r = decode_extended_status(c, v, p);
                      else if (streq(k, "nominatedNodeName")) r = get_str(c, v, &p->nominated_node_name);
                      else if (streq(k, "startTime")) r = get_str(c, v, &p->start_time);
                      else if (streq(k, "resourceClaimStatuses")) r =
                              get_seq(c, v, (void **)&p->claim_statuses, &p->n_claim_statuses,
                                      sizeof(dp_pod_claim_status), decode_claim_status);
                      else if (in_list(k, pod_status_ignored)) r = 0;);
        return 0;
}

int decode_pod(dctx *c, const dp_doc_node *root, dp_pod *p) {
        DECODE_FIELDS(c, root, k, v, if (in_list(k, top_level)) r = 0;
                      else if (streq(k, "spec")) r = decode_pod_spec(c, v, p);
                      else if (streq(k, "status")) r = decode_pod_status(c, v, p););
        return 0;
}

/* ---- Namespace ---- */

static int decode_ns_part(dctx *c, const dp_doc_node *n, const char *const *accepted) {
        DECODE_FIELDS(c, n, k, v, if (in_list(k, accepted)) r = 0;);
        return 0;
}

int decode_namespace(dctx *c, const dp_doc_node *root, dp_namespace *ns) {
        static const char *const spec_fields[] = {"finalizers", NULL};
        static const char *const status_fields[] = {"phase", "conditions", NULL};
        (void)ns;
        DECODE_FIELDS(c, root, k, v, if (in_list(k, top_level)) r = 0;
                      else if (streq(k, "spec")) r = decode_ns_part(c, v, spec_fields);
                      else if (streq(k, "status")) r = decode_ns_part(c, v, status_fields););
        return 0;
}

/* ---- PodGroup ---- */

static int decode_gang(dctx *c, const dp_doc_node *n, dp_pod_group *g) {
        g->gang = true;
        DECODE_FIELDS(c, n, k, v, if (streq(k, "minCount")) r = get_int32(c, v, &g->min_member););
        return 0;
}

static int decode_scheduling_policy(dctx *c, const dp_doc_node *n, dp_pod_group *g) {
        static const char *const empty[] = {NULL};
        DECODE_FIELDS(
                c, n, k, v, if (streq(k, "gang")) r = decode_gang(c, v, g); else if (streq(k, "basic")) {
                        g->min_member = 1;
                        r = decode_ns_part(c, v, empty);
                });
        return 0;
}

/* Volcano's and KAI's PodGroup specs: minMember, the queue and the
 * priority class (and Volcano's minResources, KAI's preemptibility) read;
 * topology and sub-groups accepted and not modelled. */
static const char *const volcano_spec_ignored[] = {"minTaskMember", "networkTopology", "subGroupPolicy", NULL};
static const char *const kai_spec_ignored[] = {"topologyConstraint", "subGroups",       "minSubGroup",
                                               "markUnschedulable",  "schedulingBackoff", "preemptionDelay",
                                               "stalenessGracePeriod", NULL};

static int decode_foreign_pod_group_spec(dctx *c, const dp_doc_node *n, dp_pod_group *g, bool volcano) {
        g->gang = true;
        DECODE_FIELDS(c, n, k, v, if (streq(k, "minMember")) r = get_int32(c, v, &g->min_member);
                      else if (streq(k, "queue")) r = get_str(c, v, &g->queue);
                      else if (streq(k, "priorityClassName")) r = get_str(c, v, &g->priority_class_name);
                      else if (!volcano && streq(k, "preemptibility")) r = get_str(c, v, &g->preemptibility);
                      else if (volcano && streq(k, "minResources")) r =
                              get_quantity_map(c, v, &g->min_resources, &g->n_min_resources);
                      else if (in_list(k, volcano ? volcano_spec_ignored : kai_spec_ignored)) r = 0;);
        return 0;
}

static int decode_pod_group_spec(dctx *c, const dp_doc_node *n, dp_pod_group *g) {
        dp_pod_group_api api = dp_pod_group_api_of(g);
        if (api == DP_POD_GROUP_VOLCANO || api == DP_POD_GROUP_KAI)
                return decode_foreign_pod_group_spec(c, n, g, api == DP_POD_GROUP_VOLCANO);
        if (c->version == DP_API_V1ALPHA2) {
                DECODE_FIELDS(c, n, k, v, if (streq(k, "schedulingPolicy")) r = decode_scheduling_policy(c, v, g);
                              else if (streq(k, "resourceClaims")) r =
                                      get_seq(c, v, (void **)&g->resource_claims, &g->n_resource_claims,
                                              sizeof(dp_pod_resource_claim), decode_pod_claim););
                return 0;
        }
        g->gang = true;
        DECODE_FIELDS(
                c, n, k, v, if (streq(k, "minMember")) r = get_int32(c, v, &g->min_member);
                else if (streq(k, "scheduleTimeoutSeconds")) {
                        r = get_int32(c, v, &g->schedule_timeout_seconds);
                        g->has_schedule_timeout_seconds = r >= 0 && !dp_doc_is_null(v);
                } else if (streq(k, "minResources")) r =
                        get_quantity_map(c, v, &g->min_resources, &g->n_min_resources););
        return 0;
}

int decode_pod_group(dctx *c, const dp_doc_node *root, dp_pod_group *g) {
        static const char *const status_fields[] = {"phase",  "occupiedBy",        "scheduled",  "running", "succeeded",
                                                    "failed", "scheduleStartTime", "conditions", NULL};
        DECODE_FIELDS(c, root, k, v, if (in_list(k, top_level)) r = 0;
                      else if (streq(k, "spec")) r = decode_pod_group_spec(c, v, g);
                      /* another project's status is its scheduler's own record: not read */
                      else if (streq(k, "status")) r =
                              dp_pod_group_api_of(g) >= DP_POD_GROUP_VOLCANO ? 0
                                                                             : decode_ns_part(c, v, status_fields););
        return 0;
}

/* ---- Deployment ---- */

static int decode_label_selector(dctx *c, const dp_doc_node *n, dp_deployment *d) {
        DECODE_FIELDS(c, n, k, v,
                      if (streq(k, "matchLabels")) r =
                              get_kv_map(c, v, &d->selector_match_labels, &d->n_selector_match_labels);
                      else if (streq(k, "matchExpressions")) r = 0;);
        return 0;
}

static int decode_template(dctx *c, const dp_doc_node *n, dp_deployment *d) {
        dp_pod *p = calloc(1, sizeof(*p));
        if (!p) return dp_error_set(c->err, -ENOMEM, "out of memory");
        d->template_ = p;
        p->hdr.kind = DP_KIND_POD;
        p->hdr.doc_index = d->hdr.doc_index;
        p->hdr.item_index = d->hdr.item_index;
        p->hdr.line = n ? n->line : 0;
        p->hdr.api_version = strdup("v1");
        p->hdr.source = d->hdr.source ? strdup(d->hdr.source) : NULL;
        if (!p->hdr.api_version || (d->hdr.source && !p->hdr.source))
                return dp_error_set(c->err, -ENOMEM, "out of memory");
        DECODE_FIELDS(c, n, k, v, if (streq(k, "metadata")) r = decode_meta(c, v, &p->meta);
                      else if (streq(k, "spec")) r = decode_pod_spec(c, v, p););
        return get_json(c, n, &d->template_json);
}

/* Fields of each owner's spec that do not change which pods it stands up. */
static const char *const deployment_ignored[] = {
        "strategy", "minReadySeconds", "revisionHistoryLimit", "progressDeadlineSeconds", "paused", NULL};
static const char *const replica_set_ignored[] = {"minReadySeconds", NULL};
static const char *const stateful_set_ignored[] = {"serviceName",
                                                   "volumeClaimTemplates",
                                                   "podManagementPolicy",
                                                   "updateStrategy",
                                                   "revisionHistoryLimit",
                                                   "minReadySeconds",
                                                   "persistentVolumeClaimRetentionPolicy",
                                                   "ordinals",
                                                   NULL};
static const char *const daemon_set_ignored[] = {"updateStrategy", "minReadySeconds", "revisionHistoryLimit", NULL};
static const char *const job_ignored[] = {"activeDeadlineSeconds",
                                          "podFailurePolicy",
                                          "successPolicy",
                                          "backoffLimit",
                                          "backoffLimitPerIndex",
                                          "maxFailedIndexes",
                                          "manualSelector",
                                          "ttlSecondsAfterFinished",
                                          "completionMode",
                                          "podReplacementPolicy",
                                          "managedBy",
                                          NULL};

static int decode_deployment_spec(dctx *c, const dp_doc_node *n, dp_deployment *d) {
        const char *const *ignored = d->hdr.kind == DP_KIND_REPLICA_SET    ? replica_set_ignored
                                     : d->hdr.kind == DP_KIND_STATEFUL_SET ? stateful_set_ignored
                                     : d->hdr.kind == DP_KIND_DAEMON_SET   ? daemon_set_ignored
                                     : d->hdr.kind == DP_KIND_JOB          ? job_ignored
                                                                           : deployment_ignored;
        bool job = d->hdr.kind == DP_KIND_JOB, ds = d->hdr.kind == DP_KIND_DAEMON_SET;
        int32_t parallelism = 1, completions = -1;
        bool suspend = false;
        DECODE_FIELDS(c, n, k, v, if (!job && !ds && streq(k, "replicas")) r = get_int32(c, v, &d->replicas);
                      else if (job && streq(k, "parallelism")) r = get_int32(c, v, &parallelism);
                      else if (job && streq(k, "completions")) {
                              r = get_int32(c, v, &completions);
                              if (r >= 0 && dp_doc_is_null(v)) completions = -1;
                      } else if (job && streq(k, "suspend")) r = get_bool(c, v, &suspend);
                      else if (streq(k, "selector")) r = decode_label_selector(c, v, d);
                      else if (streq(k, "template")) r = decode_template(c, v, d);
                      else if (in_list(k, ignored)) r = 0;);
        if (job) { /* the pods a Job runs at once */
                d->job_pods = completions >= 0 && completions < parallelism ? completions : parallelism;
                d->replicas = suspend ? 0 : d->job_pods;
        }
        return 0;
}

/* Owners' status is the controllers' record, not an input: any field passes. */
static int skip_status(dctx *c, const dp_doc_node *n) {
        (void)c;
        (void)n;
        return 0;
}

/* A Service or ReplicationController: spec.selector (a plain map), the
 * only field read; the rest of its spec and its status pass unread. */
static int decode_selector_spec(dctx *c, const dp_doc_node *n, dp_deployment *d) {
        DECODE_FIELDS(c, n, k, v, if (streq(k, "selector")) r =
                              get_kv_map(c, v, &d->selector_match_labels, &d->n_selector_match_labels);
                      else if (k) r = 0;);
        return 0;
}

int decode_selector_owner(dctx *c, const dp_doc_node *root, dp_deployment *d) {
        DECODE_FIELDS(c, root, k, v, if (in_list(k, top_level)) r = 0;
                      else if (streq(k, "spec")) r = decode_selector_spec(c, v, d);
                      else if (streq(k, "status")) r = skip_status(c, v););
        return 0;
}

int decode_deployment(dctx *c, const dp_doc_node *root, dp_deployment *d) {
        d->replicas = 1;
        DECODE_FIELDS(c, root, k, v, if (in_list(k, top_level)) r = 0;
                      else if (streq(k, "spec")) r = decode_deployment_spec(c, v, d);
                      else if (streq(k, "status")) r = skip_status(c, v););
        if (!d->template_) return dfail(c, root, -EINVAL, "spec.template: required");
        return 0;
}
