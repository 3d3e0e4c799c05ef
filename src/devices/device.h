/* SPDX-License-Identifier: Apache-2.0
 *
 * device.h — the device model every backend fills and every front end reads.
 *
 * A dp_device_set is one node's hardware: physical devices (GPUs or other
 * accelerators), each with identity (id, uuid, index), placement (NUMA node,
 * PCI bus id, NVLink peers), the /dev nodes a container needs, health, and,
 * for GPUs in MIG mode, MIG instances with their own uuid and nodes. Generic
 * attributes and capacities (name -> value) ride along so V2 ResourceSlices
 * can be built from the same set without knowing GPUs.
 *
 * The set is plain data: no I/O, no globals. It is built by a profile
 * (profile.h, the mock backend) or by a real backend, changed only by the
 * health functions (health.h), and freed with dp_device_set_free(), which
 * frees everything it points to. Every string in it is owned by the set.
 *
 * Limits (capped while loading, named after what they mirror):
 *   DP_DEVICES_MAX          physical devices per node (ResourceSlice holds 128
 *                           devices; a node's whole-device pool fits one slice)
 *   DP_DEVICES_MIG_MAX      MIG instances per GPU (A100/H100 allow 7)
 *   DP_DEVICES_NODES_MAX    /dev nodes per device or MIG instance
 *   DP_DEVICES_ATTRS_MAX    attributes + capacities per device (ResourceSlice: 32)
 *   DP_DEVICES_ID_MAX       length of an id, uuid or profile name (Device.ID: 63)
 */
#pragma once

#include "base/error.h"

#define DP_DEVICES_MAX 128
#define DP_DEVICES_MIG_MAX 16
#define DP_DEVICES_NODES_MAX 16
#define DP_DEVICES_ATTRS_MAX 32
#define DP_DEVICES_ID_MAX 63
#define DP_DEVICES_MODES_MAX 8        /* partition modes per profile */
#define DP_DEVICES_MODE_PARTS_MAX 16  /* partitions of one mode per GPU */
#define DP_DEVICES_GROUPS_MAX 2       /* compatibilityGroups per device (KEP-5963) */

typedef enum {
        DP_HEALTH_HEALTHY = 0,
        DP_HEALTH_UNHEALTHY = 1,
} dp_health;

/* "Healthy" / "Unhealthy" — the exact strings of the Device Plugin API. */
const char *dp_health_to_string(dp_health h);

typedef enum {
        DP_HW_ATTR_STRING = 0,
        DP_HW_ATTR_INT,
        DP_HW_ATTR_BOOL,
        DP_HW_ATTR_VERSION, /* semantic version, kept as text ("1.0.0") */
} dp_hw_attr_type;

/* A typed attribute (V2 DeviceAttribute). */
typedef struct dp_hw_attr {
        char *name;
        dp_hw_attr_type type;
        char *str; /* DP_HW_ATTR_STRING and DP_HW_ATTR_VERSION */
        int64_t i; /* DP_HW_ATTR_INT */
        bool b;    /* DP_HW_ATTR_BOOL */
} dp_hw_attr;

/* A capacity (V2 DeviceCapacity): the quantity exactly as written in the
 * profile ("80Gi", "100"); V2 code parses it with model/quantity.h. */
typedef struct dp_capacity {
        char *name;
        char *value;
} dp_capacity;

typedef struct dp_mig_device {
        char *id;       /* "gpu-0-mig-1g10gb-2": dp_mig_id_new(<parent id>, <profile>, <n>) */
        char *uuid;     /* "MIG-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
        char *profile;  /* "1g.10gb" */
        unsigned index; /* n: position among the parent's instances, from 0 */
        size_t parent;  /* index of the parent in dp_device_set.devices */
        uint64_t memory_bytes;
        char **device_nodes; /* own nodes (/dev/nvidia-caps/...), parent's not repeated */
        size_t n_device_nodes;
        dp_health profile_health; /* as loaded (profile/backend) */
        dp_health health;         /* current own health (profile_health + health file) */
} dp_mig_device;

typedef struct dp_hw_device {
        char *id;             /* "gpu-3": unique per node, the V2 device name */
        char *type;           /* "gpu" (V1 resource <domain>/<type> for whole devices) */
        char *uuid;           /* "GPU-..." (or "gpu-..." for example-gpu), stable per node name */
        unsigned index;       /* the minor number / index in the node */
        char *product;        /* "NVIDIA A100-SXM4-80GB", may be NULL */
        char *architecture;   /* "Ampere", may be NULL */
        char *driver_version; /* "550.54.15", may be NULL */
        uint64_t memory_bytes;
        int numa_node;       /* -1 when unknown (V1 then sends no TopologyInfo) */
        char *pci_bus_id;    /* "0000:07:00.0", may be NULL */
        char **device_nodes; /* host paths, e.g. /dev/nvidia3 */
        size_t n_device_nodes;
        uint64_t nvlink[2]; /* bit i set: NVLink to the device with index-in-set i */
        dp_health profile_health;
        dp_health health;
        bool mig_enabled;
        dp_mig_device *migs;
        size_t n_migs;
        dp_hw_attr *attrs; /* extra attributes from the profile, in file order */
        size_t n_attrs;
        dp_capacity *capacities; /* extra capacities ("compute": "100"), file order */
        size_t n_capacities;
} dp_hw_device;

/* A partition mode (1.37 compatibility groups): every GPU of the set offers
 * `count` partitions of this mode (or, `whole`, itself), all drawing on one
 * memory counter set per GPU; the groups say which modes may share a GPU. */
typedef struct dp_partition_mode {
        char *name;                          /* "mig": devices gpu-<i>-mig-<j>, attribute mode=mig */
        char *groups[DP_DEVICES_GROUPS_MAX]; /* compatibilityGroups, unique; none = "no groups" */
        size_t n_groups;
        unsigned count;        /* partitions per GPU (0 when whole) */
        bool whole;            /* the whole GPU, named as the GPU, drawing all its memory */
        uint64_t memory_bytes; /* per partition; 0 = the GPU's memory / count */
} dp_partition_mode;

typedef struct dp_device_set {
        char *profile;              /* profile name ("a100-mixed") */
        char *node_name;            /* the node it was instantiated for */
        char *domain;               /* resource domain for V1 names: "nvidia.com" */
        char *driver_name;          /* DRA driver name for V2: "gpu.nvidia.com", "gpu.example.com" */
        char *cdi_kind;             /* CDI kind "<vendor>/<class>", default "<domain>/gpu" */
        char *visible_devices_env;  /* default "NVIDIA_VISIBLE_DEVICES" */
        char **common_device_nodes; /* nodes every container with a device needs (/dev/nvidiactl) */
        size_t n_common_device_nodes;
        unsigned partitions; /* example-gpu partition mode: partitions per GPU, 0 = off */
        dp_hw_device *devices; /* ordered by index */
        size_t n_devices;
        dp_partition_mode *partition_modes; /* spec.partitionModes, in file order (none: off) */
        size_t n_partition_modes;
} dp_device_set;

dp_device_set *dp_device_set_free(dp_device_set *s);
DEFINE_FREEP(dp_device_set, dp_device_set_free)

/* Lookups by id ("gpu-3", "gpu-0-mig-1g10gb-2") or uuid; a MIG instance
 * also by its dotted name of earlier releases (dp_mig_named). NULL if absent. */
dp_hw_device *dp_device_set_find(const dp_device_set *s, const char *id_or_uuid);
dp_mig_device *dp_device_set_find_mig(const dp_device_set *s, const char *id_or_uuid);

/* The one name of a MIG instance, in V1 and V2 output alike and the V2
 * device name: "<parent id>-mig-<profile>-<n>" with the profile's dots
 * dropped and '+' written '-' ("gpu-0-mig-1g10gb-2", "gpu-1-mig-1g10gb-me-0"
 * for 1g.10gb+me), a DNS label when the parent id is one. New string or NULL
 * on OOM. */
char *dp_mig_id_new(const char *parent_id, const char *profile, unsigned n);

/* Whether `name` names MIG instance m of s: its id, its uuid, or the dotted
 * form earlier releases wrote ("gpu-0-mig-1g.10gb-2"), which health files,
 * --fail-device and state on disk may still hold. */
bool dp_mig_named(const dp_device_set *s, const dp_mig_device *m, const char *name);

/* Effective health: a MIG instance is unhealthy when it or its parent is. */
dp_health dp_mig_effective_health(const dp_device_set *s, const dp_mig_device *m);

/* NVLink between devices i and j (positions in s->devices). */
bool dp_device_set_nvlinked(const dp_device_set *s, size_t i, size_t j);

/* Counts over the set. */
size_t dp_device_set_count_mig_enabled(const dp_device_set *s);

/* Deterministic uuid for (node, salt, index): 32 hex digits in 8-4-4-4-12
 * groups, derived from FNV-1a-64 of "<node>/<salt>/<index>" (two rounds with
 * different seeds), so the same node name always yields the same uuids.
 * `prefix` ("GPU-", "MIG-", "gpu-") is prepended. Returns a new string or
 * NULL on OOM. */
char *dp_device_uuid_derive(const char *prefix, const char *node_name, const char *salt, unsigned index);

/* Parse a memory size: a plain integer (bytes) or an integer with a binary
 * (Ki Mi Gi Ti Pi) or decimal (k M G T P) suffix. 0 or -EINVAL/-ERANGE. */
int dp_device_parse_bytes(const char *s, uint64_t *ret);
/* A byte count as text, in the largest binary unit that divides it
 * (81920Mi, 80Gi, 1000): what dp_device_parse_bytes() reads back. */
void dp_device_bytes_text(uint64_t bytes, char *buf, size_t size);
