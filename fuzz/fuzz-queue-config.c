/* SPDX-License-Identifier: Apache-2.0
 * Fuzz Kueue's Configuration reader (queue/config.c), then use what it
 * accepts: a fixed cluster with DRA workloads admitted under the
 * Configuration's deviceClassMappings (counter and capacity sources
 * matched against a ResourceSlice: queue/dra-sources.c) and
 * excludeResourcePrefixes and prioritized lists (queue/dra.c), ordered by Admission Fair Sharing
 * (queue/afs.c: the ClusterQueue is in UsageBasedAdmissionFairSharing mode,
 * one LocalQueue has consumed resources), and explain (queue/explain.c: its trials) for each
 * workload. Properties: no crash or leak; a refused Configuration has a
 * message and no result; every workload ends in one of the three states. */
#include "queue/queue.h"

static const char cluster[] =
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n"
        "  namespaceSelector: {}\n  admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}\n"
        "  resourceGroups:\n  - coveredResources: [cpu, example.com/gpu, x]\n"
        "    flavors: [{name: f, resources: [{name: cpu, nominalQuota: 4}, {name: example.com/gpu, nominalQuota: 3},"
        " {name: x, nominalQuota: 1}]}]\n---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: default}\n"
        "spec: {clusterQueue: cq, fairSharing: {weight: 2}}\nstatus: {fairSharing: {admissionFairSharingStatus:"
        " {consumedResources: {cpu: 3, example.com/gpu: 1}}}}\n---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq2, namespace: default}\n"
        "spec: {clusterQueue: cq}\n---\n"
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j3, labels: {kueue.x-k8s.io/queue-name: lq2}}\n"
        "spec:\n  template:\n    spec:\n      containers: [{name: c, image: x, resources: {requests: {cpu: 2}}}]\n"
        "---\n"
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: t, namespace: default}\n"
        "spec: {spec: {devices: {requests: [{name: a, exactly: {deviceClassName: gpu.example.com, count: 2}},"
        " {name: b, exactly: {deviceClassName: other.example.com}}]}}}\n---\n"
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j1, labels: {kueue.x-k8s.io/queue-name: lq}}\n"
        "spec:\n  template:\n    spec:\n      containers: [{name: c, image: x, resources: {requests: {cpu: 1},"
        " limits: {x: 1}, claims: [{name: g}]}}]\n      resourceClaims: [{name: g, resourceClaimTemplateName: t}]\n"
        "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: j2, labels: {kueue.x-k8s.io/queue-name: lq}}\n"
        "spec:\n  parallelism: 2\n  template:\n    spec:\n      containers: [{name: c, image: x, resources: {requests: "
        "{cpu: 1}, claims: [{name: g}]}}]\n      resourceClaims: [{name: g, resourceClaimTemplateName: t}]\n"
        "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: fa, namespace: default}\n"
        "spec: {spec: {devices: {requests: [{name: a, firstAvailable: [{name: big, deviceClassName: other.example.com,"
        " count: 2}, {name: small, deviceClassName: gpu.example.com}]}]}}}\n---\n"
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j4, labels: {kueue.x-k8s.io/queue-name: lq2}}\n"
        "spec:\n  template:\n    spec:\n      containers: [{name: c, image: x, resources: {requests: {cpu: 1},"
        " claims: [{name: g}]}}]\n      resourceClaims: [{name: g, resourceClaimTemplateName: fa}]\n"
        "---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.example.com}\n"
        "spec: {extendedResourceName: x, selectors: [{cel: {expression: \"device.driver == 'gpu.example.com'\"}}]}\n"
        "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n  driver: gpu.example.com\n"
        "  nodeName: n\n  pool: {name: p, generation: 1, resourceSliceCount: 1}\n  devices:\n"
        "  - {name: d0, consumesCounters: [{counterSet: c, counters: {memory: {value: 8Gi}}}]}\n"
        "  - {name: d1, allowMultipleAllocations: true, capacity: {mem: {value: 4Gi, requestPolicy: {default: 1Gi,"
        " validRange: {min: 1Gi, max: 4Gi, step: 1Gi}}}}}\n"
        "  - {name: d2, allowMultipleAllocations: true, capacity: {mem: {value: 4Gi, requestPolicy: {validValues: [1Gi, 2Gi]}}}}\n";

static void admit(const dp_kueue_config *cfg) {
        dp_object_list *l = dp_object_list_new();
        if (!l) return;
        l->ext = &dp_queue_model_ext;
        dp_error err = DP_ERROR_INIT;
        dp_queue_options o = {.config = cfg};
        dp_queue *q = NULL;
        if (dp_model_decode_buffer(cluster, sizeof(cluster) - 1, "cluster", l, &err) >= 0 &&
            dp_model_generate_names(l, &err) >= 0 && dp_queue_new_opts(l, &o, &q, &err) >= 0 &&
            dp_queue_admit(q, &err) >= 0) {
                for (size_t i = 0; i < dp_queue_n_workloads(q); i++) {
                        const dp_queue_workload *w = dp_queue_workload_at(q, i);
                        if (w->state != DP_QW_ADMITTED && w->state != DP_QW_PENDING && w->state != DP_QW_INADMISSIBLE)
                                __builtin_trap();
                }
                static const char *const names[] = {"j1", "j2"};
                for (size_t i = 0; i < 2; i++) {
                        dp_strbuf out = DP_STRBUF_INIT;
                        (void)dp_queue_explain(q, "default", names[i], &out);
                        dp_strbuf_done(&out);
                }
        }
        dp_queue_free(q);
        dp_object_list_free(l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        dp_kueue_config *cfg = NULL;
        dp_error err = DP_ERROR_INIT;
        if (dp_kueue_config_parse((const char *)data, size, "fuzz", &cfg, &err) < 0) {
                if (cfg || !err.msg[0]) __builtin_trap();
                return 0;
        }
        admit(cfg);
        dp_kueue_config_free(cfg);
        return 0;
}
