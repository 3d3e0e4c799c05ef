/* SPDX-License-Identifier: Apache-2.0
 *
 * dra-manager.h — the kubelet's DRA manager in `devplane node`, behind a
 * model-free interface (dra-manager.c includes the Kubernetes model; the
 * rest of the node includes the device model, and the two cannot meet).
 *
 * Plugin watcher: the registry directory is walked at start and watched
 * with inotify; every Unix socket not starting with '.' is dialled, asked
 * GetInfo (1 s), validated (type DRAPlugin; the first of the plugin's
 * supported_versions that is "v1.DRAPlugin" or "v1beta1.DRAPlugin"; endpoint
 * defaulting to the socket) and told NotifyRegistrationStatus (5 s); a
 * failure is notified as {false, reason} and retried on the next event.
 * Removing the socket deregisters the plugin.
 *
 * Pods: every rescan reads the manifest directory through the model, and
 * the claims directory (claims the node created or wrote). For a pod with
 * spec.resourceClaims (init containers included) or
 * status.extendedResourceClaimStatus, each claim is the ResourceClaim named
 * by resourceClaimName, or for a template the claim
 * status.resourceClaimStatuses names, else the one the node creates as the
 * resource-claim controller does: "<pod>-<podClaimName>" owned by the pod, or
 * "<podGroup>-<podClaimName>" owned by the PodGroup when the pod's
 * spec.schedulingGroup lists the same claim and template; spec, labels and
 * annotations from the template plus resource.kubernetes.io/pod-claim-name,
 * a random uid, written to <claims-dir>/<ns>/<name>.yaml (deleted with its
 * pod). A claim is looked up in the manifests first, then in the claims
 * directory. When every claim has status.allocation, the claims are written
 * to the claims directory and NodePrepareResources is called once per driver
 * with all of the pod's claims of that driver not yet prepared — skipped for
 * a driver when every result of it in the allocation carries
 * skipNodeOperations (1.37). A failure (gRPC, a missing entry, a claim error)
 * leaves the pod Waiting with the message and exponential backoff. When no
 * pod uses a claim any more, NodeUnprepareResources is called (retried with
 * backoff until it succeeds) and its file removed.
 *
 * State (dra-state.h): which claims are prepared for which pods is saved in
 * <state_dir>/dra_manager_state.json before each prepare ("preparing"),
 * with its answer ("prepared") and after each confirmed unprepare. On start
 * it is read back: claims whose pods are gone are unprepared (retried until
 * the driver confirms). A missing or corrupt file (kept as .corrupt) is
 * rebuilt from each registered driver's answer to devplane's PreparedClaims
 * List; a driver without it is marked unknown (status draState).
 *
 * Health: for a registered plugin whose GetInfo lists v1 or v1alpha1
 * DRAResourceHealth, a NodeWatchResources stream is kept open (reopened with
 * backoff); its complete device lists are kept per driver.
 *
 * Status: dp_node_dra_status() adds draPlugins, draPods (resourceClaimStatuses;
 * each container's CDI device ids, the environment those resolve to in the
 * CDI spec directory and allocatedResourcesStatus), draClaims and draHealth
 * to the node's status document.
 */
#pragma once

#include "base/error.h"
#include "doc/doc.h"
#include "grpc/loop.h"

typedef struct dp_node_dra_options {
        const char *registry_dir;  /* required */
        const char *manifests_dir; /* NULL: no pods */
        const char *claims_dir;    /* NULL: claims are not written */
        const char *cdi_dir;       /* NULL: /var/run/cdi (status env resolution) */
        /* The node's DRA state (dra-state.h) is <state_dir>/dra_manager_state.json;
         * NULL: not saved (tests without a node). */
        const char *state_dir;
        uint64_t backoff_initial_ms, backoff_max_ms;
        void (*changed)(void *userdata); /* something to show in the status */
        /* Why no claim may be prepared now, or NULL: the device manager's
         * checkpoint, from which drivers learn V1's holds, does not hold
         * them (not written, or devices withheld for unproven pods not
         * known yet): a prepare could take a device V1 holds. May be NULL. */
        const char *(*v1_unrecorded)(void *userdata);
        void *userdata;
} dp_node_dra_options;

typedef struct dp_node_dra dp_node_dra;

int dp_node_dra_new(dp_loop *l, const dp_node_dra_options *o, dp_node_dra **ret, dp_error *err);
/* Stops watching; prepared claims stay prepared (a kubelet restart does not
 * unprepare) and stay in the saved state. */
dp_node_dra *dp_node_dra_free(dp_node_dra *d);
/* The manifest directory changed. */
void dp_node_dra_rescan(dp_node_dra *d);
/* Add the DRA keys to the status map root (draPlugins, draPods, draClaims,
 * draHealth, draPrepareCalls, draState). 0 or -ENOMEM. */
int dp_node_dra_status(dp_node_dra *d, dp_doc_set *s, dp_doc_node *root);
uint64_t dp_node_dra_prepare_calls(const dp_node_dra *d);
/* May the containers of pod ns/name start as far as DRA goes? true when
 * its claims are prepared; false with *why (valid until the next rescan)
 * while they are not, or when there is no DRA manager (d NULL). */
bool dp_node_dra_pod_ready(const dp_node_dra *d, const char *ns, const char *name, const char **why);
/* Pure: decode one NodeWatchResourcesResponse as the health watch does
 * (count of named devices and of unhealthy ones). 0, -EBADMSG, -ENOMEM. */
int dp_node_dra_health_decode(const uint8_t *msg, size_t len, size_t *n_devices, size_t *n_unhealthy);
/* Pure: add to map env the environment one CDI spec document (a parsed
 * file) gives CDI device `id` ("<kind>=<name>"): the spec's containerEdits.env,
 * then the device's, later values replacing earlier ones. Returns 1 when the
 * document defines the device, 0 when not (or id is malformed), -ENOMEM. */
int dp_node_dra_cdi_env_doc(const dp_doc_node *root, const char *id, dp_doc_set *s, dp_doc_node *env);
