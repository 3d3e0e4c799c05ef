/* SPDX-License-Identifier: Apache-2.0
 *
 * v1.h — the pure logic of a V1 device plugin (Device Plugin API v1beta1),
 * as plain structs; the agent turns them into protobuf messages.
 *
 * A dp_v1_plan maps one node's devices to resource names under a config:
 *   - whole devices                        <domain>/<type>   ("nvidia.com/gpu")
 *   - migStrategy none:  MIG-mode GPUs are exposed whole as <domain>/gpu
 *   - migStrategy single: MIG instances are exposed as <domain>/gpu (and the
 *     node must be all-MIG with one profile: see dp_agent_config_check)
 *   - migStrategy mixed: whole GPUs as <domain>/gpu, MIG instances as
 *     <domain>/mig-<profile>
 *   - time-slicing: a resource listed in sharing.timeSlicing.resources gets
 *     `replicas` advertised ids per device, "<id>::<n>" with n = 0..replicas-1,
 *     and is renamed to "<name>.shared" under renameByDefault, or to `rename`.
 * Advertised ids are always uuids, as NVIDIA's plugin advertises them;
 * deviceIDStrategy index ("3", MIG "0:2" = parent index:instance) changes
 * only what the container gets (dp_v1_allocate).
 * Resources are ordered by name; devices inside one by (parent index,
 * instance, replica), so everything built from a plan is deterministic.
 *
 * Lifetime: a plan refers to its dp_device_set by position and copies no
 * device data other than ids; the set must outlive the plan and must not be
 * re-shaped (health changes are fine: call dp_v1_plan_update_health).
 *
 * Errors: -EINVAL with a message a person can act on; -ENOMEM.
 */
#pragma once

#include "base/strbuf.h"
#include "devices/config.h"
#include "devices/device.h"

#define DP_V1_REQUEST_MAX 4096 /* ids in one Allocate/GetPreferredAllocation request */

typedef struct dp_v1_device {
        char *id;         /* the advertised Device.ID */
        dp_health health; /* effective: own, parent's (MIG) */
        int numa_node;    /* -1: no TopologyInfo */
        size_t gpu;       /* position of the physical device in the set */
        int mig;          /* MIG instance position in that device, -1 for whole */
        unsigned replica; /* n of "<id>::<n>"; 0 when not replicated */
} dp_v1_device;

typedef struct dp_v1_resource {
        char *name;        /* "nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "nvidia.com/gpu.shared" */
        char *base_name;   /* name before time-slicing rename (equal to name otherwise) */
        unsigned replicas; /* 1 = not shared */
        bool fail_requests_greater_than_one;
        dp_v1_device *devices; /* the ListAndWatch list, complete */
        size_t n_devices;
        /* devices by id (then position), built once with the list by
         * dp_v1_plan_build; NULL for a hand-made resource (lookups then scan) */
        const dp_v1_device **by_id;
        uint64_t generation; /* bumped each time the list (ids or health) changes */
} dp_v1_resource;

typedef struct dp_v1_plan {
        dp_v1_resource *resources;
        size_t n_resources;
} dp_v1_plan;

dp_v1_plan *dp_v1_plan_free(dp_v1_plan *p);
DEFINE_FREEP(dp_v1_plan, dp_v1_plan_free)

/* Build the plan (runs dp_agent_config_check first). */
int dp_v1_plan_build(const dp_device_set *s, const dp_agent_config *c, dp_v1_plan **ret, dp_error *err);

/* Re-read health from the set; returns the number of resources whose
 * device list changed (their generation was bumped). */
int dp_v1_plan_update_health(dp_v1_plan *p, const dp_device_set *s);

dp_v1_resource *dp_v1_plan_find(const dp_v1_plan *p, const char *resource_name);
/* The first device with this advertised id: O(log n) through by_id. */
dp_v1_device *dp_v1_resource_find(const dp_v1_resource *r, const char *id);
/* Counts for capacity / allocatable. */
size_t dp_v1_resource_count(const dp_v1_resource *r);
size_t dp_v1_resource_count_healthy(const dp_v1_resource *r);

/* ---- Allocate ---- */

typedef struct dp_v1_kv {
        char *key;
        char *value;
} dp_v1_kv;

typedef struct dp_v1_mount {
        char *container_path;
        char *host_path;
        bool read_only;
} dp_v1_mount;

typedef struct dp_v1_device_spec {
        char *container_path;
        char *host_path;
        char *permissions; /* "rw" */
} dp_v1_device_spec;

/* ContainerAllocateResponse, field for field. Maps are arrays sorted by key. */
typedef struct dp_v1_container_response {
        dp_v1_kv *envs;
        size_t n_envs;
        dp_v1_mount *mounts;
        size_t n_mounts;
        dp_v1_device_spec *devices;
        size_t n_devices;
        dp_v1_kv *annotations;
        size_t n_annotations;
        char **cdi_devices; /* fully qualified CDI names */
        size_t n_cdi_devices;
} dp_v1_container_response;

dp_v1_container_response *dp_v1_container_response_free(dp_v1_container_response *r);
DEFINE_FREEP(dp_v1_container_response, dp_v1_container_response_free)

/* Build the response for one container's ids of resource `r`. What goes in
 * follows c->device_list_strategy (several bits may be set):
 *   envvar           env <visible_devices_env>=<ids of the physical/MIG devices, comma-separated>
 *   volume-mounts    env <visible_devices_env>=/var/run/nvidia-container-devices and one
 *                    mount /dev/null -> /var/run/nvidia-container-devices/<id> per device
 *   cdi-annotations  annotation <cdiAnnotationPrefix>nvidia-device-plugin_<uuid>=<cdi names>
 *                    (uuid derived from the ids; other domains than nvidia.com:
 *                    <cdiAnnotationPrefix><domain>.<class>_<hash>)
 *   cdi-cri          cdi_devices k8s.device-plugin.nvidia.com/gpu=<id> per device
 *                    (other domains: <cdi_kind>=<id>), plus <vendor>/<mode>=all for
 *                    each of gdrcopy, gds, mofed enabled
 * and device specs for the common and per-device /dev nodes when
 * passDeviceSpecs (host path under nvidiaDevRoot). GDRCopy/GDS/MOFED add
 * NVIDIA_GDRCOPY/NVIDIA_GDS/NVIDIA_MOFED=enabled; sharing.mps adds
 * CUDA_MPS_PIPE_DIRECTORY and the pipe and shm mounts. When every strategy
 * is a cdi-* one, no env list, mounts or device specs are added (NVIDIA). <ids> are physical ids per deviceIDStrategy (replicas of
 * one GPU collapse to that GPU), in request order, without duplicates.
 * Errors (-EINVAL, message names the resource and id): an empty request; an
 * id not advertised ("unknown device"); an unhealthy id; a duplicate id;
 * more than one id on a resource with failRequestsGreaterThanOne. */
int dp_v1_allocate(const dp_v1_plan *p, const dp_device_set *s, const dp_agent_config *c, const char *resource_name,
                   const char *const *ids, size_t n_ids, dp_v1_container_response **ret, dp_error *err);

/* ---- GetPreferredAllocation ---- */

/* Choose `size` ids from `available` including all of `must_include`:
 * whole unshared GPUs: fewest NUMA nodes first, then most NVLink pairs among
 * the chosen, then earliest in the resource's order; MIG instances: fewest
 * NUMA nodes, then fewest parents; replicas: must-include first, then spread
 * across physical devices (c->shared_policy distributed: least-used device
 * first) or pack (packed: most-used device first), ties by device order.
 * Deterministic: the same inputs give the same answer. The answer lists the
 * chosen ids in the resource's order. -EINVAL when size is 0 or exceeds the
 * available ids, or a must-include id is not available or unknown. Unknown
 * or unhealthy available ids are skipped. `ret_ids` is a NULL-terminated
 * array of new strings; free with dp_v1_ids_free. */
int dp_v1_preferred_allocation(const dp_v1_plan *p, const dp_device_set *s, const dp_agent_config *c,
                               const char *resource_name, const char *const *available, size_t n_available,
                               const char *const *must_include, size_t n_must_include, size_t size, char ***ret_ids,
                               dp_error *err);
char **dp_v1_ids_free(char **ids);
