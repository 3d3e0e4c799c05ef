/* SPDX-License-Identifier: Apache-2.0
 *
 * inventory.h — what one node's DRA driver publishes, as plain data.
 *
 * The inventory sits between the device model (devices/device.h: dp_hw_device)
 * and the Kubernetes objects (model/objects.h: dp_device). This header
 * includes neither, so the daemon code that holds a dp_device_set can build an
 * inventory without seeing the model, while the slice builder, CDI and prepare
 * code read the inventory without seeing the device model.
 *
 * One inventory entry is one ResourceSlice device: a whole GPU, a MIG
 * instance, an example-gpu partition (gpu-<i>-partition-<j>, gpu-<i>-full),
 * or a compatibility-group partition (gpu-<i>-mig-<j>, gpu-<i>-vgpu-<j>).
 * Each names the physical device it lives on (`physical`, the position in the
 * device set) and its `unit`: whole (-1) or a sub-unit number, which is what
 * the V1/V2 ledger (ledger.h) compares.
 *
 * Ownership: the inventory owns every string and array in it; free with
 * dp_dra_inventory_free() (accepts NULL). Pure: no I/O.
 */
#pragma once

#include "base/error.h"

struct dp_device_set; /* devices/device.h */

/* Device-level caps (mirroring the ResourceSlice limits). */
#define DP_DRA_MAX_DEVICES 4096  /* inventory entries per node (128 GPUs x 16 MIG + partitions) */
#define DP_DRA_MAX_PARTITIONS 16 /* partitions per GPU in partition mode */

typedef enum {
        DP_DRA_VAL_INT = 0,
        DP_DRA_VAL_BOOL,
        DP_DRA_VAL_STRING,
        DP_DRA_VAL_VERSION,
} dp_dra_value_type;

typedef struct dp_dra_attr {
        char *name; /* "index", "nvidia.com/healthy", "resource.kubernetes.io/pcieRoot" */
        dp_dra_value_type type;
        int64_t i;
        bool b;
        char *s; /* STRING, VERSION */
} dp_dra_attr;

/* A capacity or a counter: name and quantity text ("80Gi", "100"). */
typedef struct dp_dra_quantity {
        char *name;
        char *value;
} dp_dra_quantity;

typedef struct dp_dra_counter_set {
        char *name; /* "gpu-3-counters" */
        dp_dra_quantity *counters;
        size_t n_counters;
} dp_dra_counter_set;

typedef struct dp_dra_consumption {
        char *counter_set;
        dp_dra_quantity *counters;
        size_t n_counters;
        char **groups; /* compatibility groups (1.37), at most 2 */
        size_t n_groups;
} dp_dra_consumption;

typedef enum {
        DP_DRA_KIND_GPU = 0,   /* a whole physical device */
        DP_DRA_KIND_MIG,       /* a MIG instance of the device model */
        DP_DRA_KIND_PARTITION, /* a counter-based partition (example-gpu, compat modes) */
        DP_DRA_KIND_FULL,      /* the whole device published as a partition consumer */
} dp_dra_kind;

typedef struct dp_dra_device {
        char *name; /* the ResourceSlice device name (DNS label) */
        dp_dra_kind kind;
        size_t physical; /* position of the physical device in the device set */
        int unit;        /* -1: the whole physical device; >= 0: a sub-unit */
        char *model_id;  /* the device model's id (gpu-3, gpu-0-mig-1g10gb-2), the V1 view */
        char *uuid;
        dp_dra_attr *attrs;
        size_t n_attrs;
        dp_dra_quantity *capacity;
        size_t n_capacity;
        dp_dra_consumption *consumes;
        size_t n_consumes;
        char **device_nodes; /* host paths the container needs (parent's included) */
        size_t n_device_nodes;
        bool healthy;        /* effective health */
        char *fault_class;   /* NULL when healthy; "unhealthy" unless the caller named one */
        bool allow_multiple; /* allowMultipleAllocations */
} dp_dra_device;

typedef struct dp_dra_inventory {
        char *node_name;
        char *driver;   /* "gpu.example.com" */
        char *pool;     /* the node name: one pool per node */
        char *cdi_kind; /* "k8s.gpu.example.com/gpu" */
        char **common_device_nodes;
        size_t n_common_device_nodes;
        dp_dra_counter_set *counter_sets;
        size_t n_counter_sets;
        dp_dra_device *devices;
        size_t n_devices;
} dp_dra_inventory;

typedef enum {
        DP_DRA_STYLE_AUTO = 0, /* NVIDIA style when the profile's domain is nvidia.com, else plain */
        DP_DRA_STYLE_PLAIN,    /* the DRA example driver's shape: index, uuid + profile attributes */
        DP_DRA_STYLE_NVIDIA,   /* plus type, productName, architecture, parentUUID, profile, pcieRoot, ... */
} dp_dra_style;

/* A device in a fault class other than the default ("xid-79", "gpu-lost"). */
typedef struct dp_dra_fault {
        const char *device; /* device id, MIG id or uuid of the device model */
        const char *fault_class;
} dp_dra_fault;

typedef struct dp_dra_inventory_options {
        const char *driver; /* NULL: the set's driver name */
        dp_dra_style style;
        int partitions;      /* -1: the set's `partitions`; 0: whole devices; N: N partitions per GPU */
        bool compat_groups;  /* MIG-mode [mig] and vGPU-mode [vgpu] partitions over one memory counter */
        bool allow_multiple; /* allowMultipleAllocations on whole devices and partitions */
        const dp_dra_fault *faults;
        size_t n_faults;
} dp_dra_inventory_options;

#define DP_DRA_INVENTORY_OPTIONS_INIT                                                                                  \
        { NULL, DP_DRA_STYLE_AUTO, -1, false, false, NULL, 0 }

/* Build the inventory of a device set (devices/device.h). Naming:
 *   whole devices      the device id (gpu-3)
 *   MIG instances      the MIG id without dots (gpu-0-mig-1g10gb-2), consuming
 *                      memory from counter set gpu-<i>-counters {memory}
 *   partition mode     counter set gpu-<i>-counters {every capacity of the GPU},
 *                      gpu-<i>-partition-<j> consuming 1/N of each, gpu-<i>-full all
 *   compat_groups      counter set gpu-<i>-memory {memory}; MIG-mode devices (the
 *                      GPU's MIG instances, else gpu-<i>-mig-<j>, N of them) with
 *                      group [mig]; gpu-<i>-vgpu-<j> (N) and gpu-<i> with [vgpu]
 *   partition modes    a profile with spec.partitionModes (set->partition_modes)
 *                      always publishes them, whatever the options: counter set
 *                      gpu-<i>-memory {memory}; per mode gpu-<i>-<mode>-<j> (or,
 *                      for the whole mode, gpu-<i>) with the mode's groups,
 *                      memory and attribute `mode`
 * (N: options.partitions, else the set's, else 4 in compat mode.) Health is
 * the device model's effective health; a device named in options.faults gets
 * that class, other unhealthy devices class "unhealthy".
 * Errors: -EINVAL (bad option, a name over 63 characters, an unparseable
 * capacity), -E2BIG (DP_DRA_MAX_*), -ENOMEM, -ENOENT (a fault names no device). */
int dp_dra_inventory_build(const struct dp_device_set *set, const dp_dra_inventory_options *opts,
                           dp_dra_inventory **ret, dp_error *err);

dp_dra_inventory *dp_dra_inventory_free(dp_dra_inventory *inv);
DEFINE_FREEP(dp_dra_inventory, dp_dra_inventory_free)

const dp_dra_device *dp_dra_inventory_find(const dp_dra_inventory *inv, const char *name);
const dp_dra_attr *dp_dra_device_attr(const dp_dra_device *d, const char *name);

/* Conveniences for model-side code that does not need the device model
 * (tests, the slice tools): load a built-in profile or a profile file
 * for a node (dp_profile_resolve), free a set, and set one device's (or MIG
 * instance's, by id or uuid) own health as the health file would. */
int dp_dra_device_set_load(const char *profile, const char *node_name, struct dp_device_set **ret, dp_error *err);
struct dp_device_set *dp_dra_device_set_free(struct dp_device_set *set);
int dp_dra_device_set_health(struct dp_device_set *set, const char *id, bool healthy, dp_error *err);
