/* SPDX-License-Identifier: Apache-2.0
 *
 * devmgr.h — the kubelet device manager as a pure state machine.
 *
 * It holds what the kubelet's devicemanager holds: one endpoint per resource
 * name (the plugin that registered it, its options and its last
 * ListAndWatch list), the allocation ledger (pod, container, resource) ->
 * device ids + the plugin's ContainerAllocateResponse bytes, and the set of
 * devices in use. It does no I/O and reads no clock: callers pass `now_ms`
 * (a monotonic time in milliseconds) where time matters.
 *
 * Rules it reproduces (wire-protocols.md §2.3–2.5, scenarios 3–7):
 *   - capacity = number of devices listed, allocatable = healthy ones; an
 *     unhealthy device lowers allocatable only;
 *   - when a plugin disconnects, its devices count as unhealthy and stay listed
 *     for DP_NODE_ENDPOINT_GRACE_MS; after that the resource is dropped
 *     (allocations already made stay in the ledger);
 *   - a container is given healthy devices that no other container holds;
 *     once given, its devices are sticky (asking again returns nothing new);
 *   - devices are released when the pod goes.
 *
 * Ownership: strings passed in are copied. Pointers returned from lookups stay
 * valid until the next call that changes the manager.
 */
#pragma once

#include "base/error.h"

#define DP_NODE_ENDPOINT_GRACE_MS (5 * 60 * 1000)
#define DP_NODE_API_VERSION "v1beta1"
/* Device ids: the proto comment's 63-character cap is not enforced by the
 * kubelet; we accept longer ids up to this cap (input-driven allocation). */
#define DP_NODE_MAX_DEVICE_ID 256
/* Devices per ListAndWatch message we keep (a 4 MiB message holds ~100k). */
#define DP_NODE_MAX_DEVICES 100000
#define DP_NODE_MAX_NUMA_PER_DEVICE 64

typedef struct dp_nm_device {
        char *id;
        bool healthy;
        int64_t *numa; /* NUMA node ids from TopologyInfo; none = no topology */
        size_t n_numa;
} dp_nm_device;

typedef struct dp_nm_options {
        bool pre_start_required;
        bool get_preferred_allocation_available;
} dp_nm_options;

typedef struct dp_nm_resource {
        char *name;
        char *endpoint; /* socket file name relative to the plugin dir; NULL if only known from the checkpoint */
        dp_nm_options options;
        bool connected;
        uint64_t disconnected_at_ms;
        dp_nm_device *devices;
        size_t n_devices;
} dp_nm_resource;

/* One device of an allocation with the NUMA node it was recorded under
 * (-1 when the device had no topology). A device in several NUMA nodes has
 * one record per node. */
typedef struct dp_nm_numa_id {
        int64_t numa;
        char *id;
} dp_nm_numa_id;

typedef struct dp_nm_alloc {
        char *pod_uid;
        char *container;
        char *resource;
        dp_nm_numa_id *ids;
        size_t n_ids;
        uint8_t *resp; /* protobuf ContainerAllocateResponse; may be NULL */
        size_t resp_len;
} dp_nm_alloc;

/* A pod whose holdings of a resource the node cannot prove: its records
 * (checkpoint and status file) were lost while it may be running. `ids`:
 * devices it was withholding when read back from a checkpoint (devices of a
 * list not yet received again). */
typedef struct dp_nm_unproven {
        char *pod_uid;
        char *resource;
        char **ids;
        size_t n_ids;
} dp_nm_unproven;

/* The container name under which an unproven pod's withheld devices are
 * written to the checkpoint (not a DNS label, so no real container has it). */
#define DP_NODE_UNPROVEN_CONTAINER "devplane.unproven"

typedef struct dp_devmgr dp_devmgr;

dp_devmgr *dp_devmgr_new(void);
dp_devmgr *dp_devmgr_free(dp_devmgr *m);
DEFINE_FREEP(dp_devmgr, dp_devmgr_free)

/* The kubelet's Register checks: version must be "v1beta1", the resource
 * name must pass dp_devmgr_is_extended_resource_name(). -EINVAL with the kubelet's
 * wording in err. */
int dp_devmgr_validate_register(const char *version, const char *resource_name, const char *endpoint, dp_error *err);
/* The §2.5 rule: contains '/', no "kubernetes.io/", no "requests." prefix,
 * and "requests." + name is a qualified name. */
bool dp_devmgr_is_extended_resource_name(const char *name);

/* A (validated) plugin registered: create the resource or replace its
 * endpoint and options. The device list is kept until the new ListAndWatch
 * replaces it (devices stay unhealthy meanwhile, as with a disconnect). */
int dp_devmgr_register(dp_devmgr *m, const char *resource, const char *endpoint, const dp_nm_options *opts);
/* A ListAndWatch message: the complete device list for the resource.
 * Copies; -EINVAL on duplicate ids, empty or oversize ids, or health strings
 * other than "Healthy"/"Unhealthy" (err says which). -ENOENT if the resource
 * is not registered. Marks the resource connected. */
int dp_devmgr_set_devices(dp_devmgr *m, const char *resource, const dp_nm_device *devs, size_t n, dp_error *err);
/* The stream of this resource ended: keep devices (as unhealthy) for the
 * grace period. */
void dp_devmgr_disconnected(dp_devmgr *m, const char *resource, uint64_t now_ms);
/* Drop resources whose grace period ran out. Returns how many were dropped;
 * *ret_next_ms (if not NULL) gets the next expiry time or UINT64_MAX. */
size_t dp_devmgr_expire(dp_devmgr *m, uint64_t now_ms, uint64_t *ret_next_ms);
/* A resource name known only from the checkpoint's RegisteredDevices: it is
 * listed with no devices (capacity 0) until its plugin registers. */
int dp_devmgr_add_known_resource(dp_devmgr *m, const char *resource);

size_t dp_devmgr_n_resources(const dp_devmgr *m);
const dp_nm_resource *dp_devmgr_resource_at(const dp_devmgr *m, size_t i);
const dp_nm_resource *dp_devmgr_resource(const dp_devmgr *m, const char *name);
size_t dp_devmgr_capacity(const dp_devmgr *m, const char *resource);
/* Healthy devices of a connected plugin; 0 for a disconnected one. */
size_t dp_devmgr_allocatable(const dp_devmgr *m, const char *resource);
/* Is this device held by any container? */
bool dp_devmgr_in_use(const dp_devmgr *m, const char *resource, const char *id);
size_t dp_devmgr_n_in_use(const dp_devmgr *m, const char *resource);

/* Devices a container may be given: what it already holds for this resource
 * (sticky) and the healthy, unheld candidates in the plugin's order.
 *   *ret_needed = count - already held (0: nothing to do, keep what it has).
 * -ENOENT "unknown resource" if no plugin registered it, -EBUSY when fewer
 * healthy free devices than needed (err: "requested number of devices
 * unavailable for R. Requested: N, Available: M"), -EINVAL if the container
 * already holds more than it now asks. On success *ret_avail is a
 * NULL-terminated array of borrowed id pointers (free the array only). */
int dp_devmgr_candidates(const dp_devmgr *m, const char *pod_uid, const char *container, const char *resource,
                         size_t count, size_t *ret_needed, const char ***ret_avail, dp_error *err);
/* Choose `needed` of the candidates. `preferred` (may be NULL) is what the
 * plugin's GetPreferredAllocation returned: ids from it that are candidates
 * come first, the rest is filled in candidate order (the kubelet does the
 * same). ret_ids: NULL-terminated borrowed pointers. */
int dp_devmgr_choose(const char *const *avail, size_t needed, const char *const *preferred, size_t n_preferred,
                     const char ***ret_ids);
/* Reserve devices for a container while its Allocate call is in flight, so
 * that no other container is offered them. A reservation is dropped by
 * dp_devmgr_commit() or dp_devmgr_unreserve(). */
int dp_devmgr_reserve(dp_devmgr *m, const char *pod_uid, const char *container, const char *resource,
                      const char *const *ids);
void dp_devmgr_unreserve(dp_devmgr *m, const char *pod_uid, const char *container, const char *resource);
/* Record a successful Allocate: the devices (NUMA taken from the current
 * device list) and the response bytes (copied). Appends to what the container
 * already holds for the resource. */
int dp_devmgr_commit(dp_devmgr *m, const char *pod_uid, const char *container, const char *resource,
                     const char *const *ids, const uint8_t *resp, size_t resp_len);
/* Record an allocation read back from a checkpoint as is. */
int dp_devmgr_restore(dp_devmgr *m, const dp_nm_alloc *a);
/* Release every device of a pod (and its unproven marks); returns how many
 * ledger entries went. */
size_t dp_devmgr_release_pod(dp_devmgr *m, const char *pod_uid);
/* Drop one (pod, container, resource) entry, e.g. an allocation whose
 * checkpoint write failed; 1 if it was there, 0 if not. */
size_t dp_devmgr_release(dp_devmgr *m, const char *pod_uid, const char *container, const char *resource);

/* Fail closed when records are lost: mark that pod_uid may hold devices of
 * `resource` that no entry names (ids, may be NULL: devices it withheld
 * before, merged). While any pod is marked for a resource, every device of it
 * that no entry holds is withheld: dp_devmgr_candidates() refuses with -EBUSY
 * and says why. Marks go with dp_devmgr_release_pod(). 0 or -ENOMEM. */
int dp_devmgr_mark_unproven(dp_devmgr *m, const char *pod_uid, const char *resource, const char *const *ids,
                            size_t n_ids);
size_t dp_devmgr_n_unproven(const dp_devmgr *m);
const dp_nm_unproven *dp_devmgr_unproven_at(const dp_devmgr *m, size_t i);
bool dp_devmgr_is_withheld(const dp_devmgr *m, const char *resource);
/* The devices withheld for `resource`, as written for others to withhold
 * too (checkpoint, status): listed healthy devices no entry holds, plus
 * those the marks remember that no entry holds and the list does not show
 * unhealthy (a device the agent lists unhealthy because a DRA claim holds it
 * is not an unproven V1 pod's). NULL-terminated borrowed pointers; an empty
 * list when nothing is withheld. (dp_devmgr_candidates() refuses every
 * device of a marked resource, listed or not.) */
int dp_devmgr_withheld_ids(const dp_devmgr *m, const char *resource, const char ***ret_ids);
/* false while a mark's devices cannot be named yet: its resource has no
 * device list (its plugin has not listed them since the start) and the mark
 * remembers none. */
bool dp_devmgr_withheld_known(const dp_devmgr *m);

size_t dp_devmgr_n_allocs(const dp_devmgr *m);
const dp_nm_alloc *dp_devmgr_alloc_at(const dp_devmgr *m, size_t i);
const dp_nm_alloc *dp_devmgr_alloc(const dp_devmgr *m, const char *pod_uid, const char *container,
                                   const char *resource);
/* Unique device ids of an allocation entry in recorded order, NULL-terminated
 * borrowed pointers. */
int dp_nm_alloc_ids(const dp_nm_alloc *a, const char ***ret_ids);

dp_nm_alloc *dp_nm_alloc_done(dp_nm_alloc *a); /* frees members, not a itself */
