/* SPDX-License-Identifier: Apache-2.0
 *
 * prepare.h — NodePrepareResources for one claim, as a pure function of the
 * claim's status.allocation, the published slices and the inventory.
 *
 * For every allocation result of this driver, in order: the device must be in this node's pool ("not on this node"), published
 * ("unknown device") and healthy unless the result has admin access or a
 * toleration for its taint ("unhealthy"). Any failure fails the whole claim
 * with one message naming the claim, the result and the rule; the daemon
 * puts it into the claim's `error` of the response.
 *
 * The CDI spec (cdi.h) gets one device "<uid>-<device>" per result with
 *   GPU_DEVICE_<ID>=<device>, GPU_DEVICE_<ID>_RESOURCE_CLAIM=<uid>,
 *   GPU_DEVICE_<ID>_SHARING_STRATEGY=TimeSlicing|SpacePartitioning,
 *   GPU_DEVICE_<ID>_TIMESLICE_INTERVAL=<Default|Short|Medium|Long> or
 *   GPU_DEVICE_<ID>_PARTITION_COUNT=<k>,
 *   GPU_DEVICE_<ID>_<CAPACITY>=<consumed quantity> (consumable capacity),
 *   GPU_DEVICE_<ID>_SHARE_ID=<shareID> when the allocation has one,
 * where <ID> is the device name after "gpu-" in upper case with every other
 * character than [A-Z0-9] as '_' (gpu-3: 3; gpu-0-partition-1: 0_PARTITION_1),
 * as the example driver names them: a device has the same variable in every
 * container whichever claim or request brought it (the workloads'
 * "GPU_DEVICE_0=gpu-0"); the same device twice in one claim gets _<n> added,
 * n its position among the claim's results. The example driver's other
 * profiles: a NIC (nic-<n>, net) gets NET_DEVICE_<ID> (ID after "nic-"),
 * its consumed ingressBandwidth/egressBandwidth as
 * NET_DEVICE_<ID>_INGRESS_RATE/_EGRESS_RATE in decimal; a NUMA node
 * (numa-<n>, cpu) CPU_DEVICE_<ID> and its consumed cpu as
 * CPU_DEVICE_<ID>_CONSUMED_CPU; neither gets sharing variables.
 * the inventory's device nodes, and spec-level KUBERNETES_NODE_NAME,
 * DRA_RESOURCE_DRIVER_NAME, DRA_ADMIN_ACCESS and the common device nodes.
 * Sharing comes from opaque GpuConfig parameters of this driver
 * (gpu.resource.example.com/v1alpha1): claim config beats class config, a
 * config naming the request beats one for all requests, later beats earlier;
 * the default is TimeSlicing with interval Default. Bad parameters fail the
 * claim ("unknown time-slice interval").
 *
 * With a metadata directory, each request gets a KEP-5304 DeviceMetadata
 * file "<uid>/<request>/<driver>-metadata.json" (JSON, one object per
 * supported version, newest first: metadata.resource.k8s.io/v1alpha1),
 * bind-mounted read-only at
 * /var/run/kubernetes.io/dra-device-attributes/resourceclaims/<claim>/<request>/<driver>-metadata.json
 * (resourceclaimtemplates/<podClaimName>/... when the claim carries the
 * annotation resource.kubernetes.io/pod-claim-name) through the CDI edits of
 * the request's first device. Attributes come from the published slices.
 * metadata.generation is 1, or prev->metadata_generation + 1 when the caller
 * passes the previous result (a rewrite).
 */
#pragma once

#include "dra/inventory.h"
#include "dra/prepared.h"
#include "model/model.h"

#define DP_DRA_METADATA_ROOT "/var/run/kubernetes.io/dra-device-attributes"
#define DP_DRA_METADATA_API_VERSION "metadata.resource.k8s.io/v1alpha1"
#define DP_DRA_POD_CLAIM_NAME_ANNOTATION "resource.kubernetes.io/pod-claim-name"

typedef struct dp_dra_prepare_input {
        const dp_dra_inventory *inv;      /* driver, pool, node, CDI kind, device nodes, health */
        dp_resource_slice *const *slices; /* the published slices (attributes) */
        size_t n_slices;
        const char *metadata_dir;          /* host directory of metadata files; NULL: none */
        const dp_dra_prepared_claim *prev; /* the claim's previous result, for the generation */
} dp_dra_prepare_input;

/* Prepare one claim. On success *ret is filled (free with
 * dp_dra_prepare_output_done). -EINVAL with the reason in err for every
 * per-claim failure (not allocated, no uid, device not on this node, unknown,
 * unhealthy, bad config), -ENOMEM. */
int dp_dra_prepare(const dp_dra_prepare_input *in, const dp_resource_claim *claim, dp_dra_prepare_output *ret,
                   dp_error *err);

typedef enum {
        DP_DRA_NODE_PREPARE = 0, /* "NodePrepareResources" */
        DP_DRA_NODE_UNPREPARE,   /* "NodeUnprepareResources" */
} dp_dra_node_op;

/* Whether the kubelet skips `op` for `driver` on this allocation (1.37
 * DRAOptionalNodeOperations): true when the allocation has at least one
 * result of the driver and every such result's skipNodeOperations names the
 * operation or "*". */
bool dp_dra_skip_node_operation(const dp_allocation_result *a, const char *driver, dp_dra_node_op op);
