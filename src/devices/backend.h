/* SPDX-License-Identifier: Apache-2.0
 *
 * backend.h — where a node's devices come from: mock (a DeviceProfile), pci
 * (sysfs PCI devices selected by rules), devglob (/dev globs and USB
 * vendor:product matches) or nvml (NVIDIA GPUs through libnvidia-ml.so.1,
 * loaded with dlopen at run time). Every backend fills the same device model
 * (device.h), so the V1 plan and V2 inventory do not know which one ran.
 *
 * Life cycle, all from the daemon's one thread:
 *   dp_backend_open()      load config, probe (nvml: dlopen + nvmlInit)
 *   dp_backend_discover()  build a dp_device_set (owned by the caller); also
 *                          (re)arms health monitoring for those devices
 *   dp_backend_fd()        one fd to add to the epoll loop (EPOLLIN): an
 *                          epoll fd of the backend's own sources (a timerfd
 *                          for NVML event polling and recovery deadlines, an
 *                          inotify fd for devglob presence). Never -1 after
 *                          a successful open.
 *   dp_backend_dispatch()  when the fd is readable: drain the sources, feed
 *                          the fault table, expire quiet faults, update the
 *                          set's health, re-arm the timer. Non-blocking.
 *   dp_backend_close()
 *
 * Health contract: dispatch sets `profile_health` (the backend's view) and
 * `health` of every device and MIG instance whose backend health changed,
 * and returns how many changed. A daemon that also honours the health
 * override file (health.h) re-applies it after a dispatch that returned > 0
 * (dp_health_apply recomputes `health` from `profile_health` + overrides),
 * then calls dp_v1_plan_update_health and, for V2, rebuilds the inventory
 * with dp_backend_faults() as the fault classes (taint keys).
 *
 * The set passed to dispatch is matched by device id / uuid, so a set from
 * an earlier discover stays usable; devices it lacks are skipped.
 *
 * Errors: -EINVAL (bad config; err names file and field), -ENOENT (nvml
 * library absent: err says which path was tried and how to point at one),
 * -EIO (the hardware API failed: err carries its message), -ENOMEM.
 */
#pragma once

#include "devices/device.h"
#include "devices/fault-table.h"

typedef enum {
        DP_BACKEND_MOCK = 0,
        DP_BACKEND_PCI,
        DP_BACKEND_DEVGLOB,
        DP_BACKEND_NVML,
} dp_backend_kind;

/* "mock" | "pci" | "devglob" | "nvml". -EINVAL for others. */
int dp_backend_kind_from_string(const char *s, dp_backend_kind *ret);
const char *dp_backend_kind_to_string(dp_backend_kind k);

#define DP_NVML_LIBRARY_DEFAULT "libnvidia-ml.so.1"
#define DP_NVML_LIBRARY_ENV "DP_NVML_LIBRARY"

typedef struct dp_backend_options {
        const char *node_name;    /* required: uuids of mock/pci/devglob devices derive from it */
        const char *profile;      /* mock: built-in name or file (NULL: DP_PROFILE_DEFAULT) */
        const char *config_path;  /* BackendConfig file; NULL: defaults (pci/devglob then find nothing) */
        const char *sysfs_root;   /* NULL: "/sys" (pci, devglob USB, nvml NUMA fallback) */
        const char *dev_root;     /* NULL: "" — devglob globs and presence checks run under it */
        const char *proc_root;    /* NULL: "/proc" (nvml: driver/nvidia-caps/mig-minors) */
        const char *nvml_library; /* NULL: $DP_NVML_LIBRARY, else DP_NVML_LIBRARY_DEFAULT */
        bool env_health;          /* also apply $DP_DISABLE_HEALTHCHECKS / $DP_ENABLE_HEALTHCHECKS */
} dp_backend_options;

/* ---- BackendConfig (the file at options.config_path) ----
 *
 *   apiVersion: devplane.io/v1alpha1
 *   kind: BackendConfig
 *   spec:
 *     domain: example.com          # V1 names <domain>/<type> (pci/devglob; nvml: nvidia.com)
 *     driverName: dev.example.com  # V2 driver (default pci.<domain> / dev.<domain> / gpu.nvidia.com)
 *     health: {ignoreXids: [..], additionalIgnoreXids: [..], criticalXids: [..],
 *              eccSingleBit: ignore|unhealthy, eccDoubleBit: ignore|unhealthy,
 *              recoverAfterSeconds: 300, pollIntervalMilliseconds: 1000}
 *     pci:                         # rules, first match wins
 *     - type: nic                  # DNS label: V1 <domain>/nic, ids nic-<n>
 *       vendor: "8086"             # 4 hex digits (0x optional); each field optional
 *       device: "1572"
 *       class: "0200"              # hex prefix of the 6-digit class code
 *       driver: vfio-pci           # bound driver name ("none": unbound)
 *       deviceNodes: ["/dev/vfio/{iommuGroup}"]   # {iommuGroup} {address} {index}
 *     devglob:
 *     - type: serial
 *       paths: ["/dev/ttyUSB*"]    # glob(7) patterns, absolute
 *       usb: [{vendor: "1a86", product: "7523"}]  # /dev/bus/usb/BBB/DDD
 *       count: 4                   # share count: each match exposed 4 times
 */

#define DP_BACKEND_CONFIG_KIND "BackendConfig"
#define DP_BACKEND_RULES_MAX 64    /* pci or devglob rules per config */
#define DP_BACKEND_PATTERNS_MAX 16 /* paths / usb matches per devglob rule */
#define DP_BACKEND_SHARE_MAX 128   /* count: the model holds DP_DEVICES_MAX devices */

typedef struct dp_pci_rule {
        char *type;
        int vendor, device; /* -1: any */
        char *class_prefix; /* lower-case hex, NULL: any */
        char *driver;       /* NULL: any; "none": unbound */
        char **device_nodes;
        size_t n_device_nodes;
} dp_pci_rule;

typedef struct dp_usb_match {
        int vendor, product; /* -1: any */
} dp_usb_match;

typedef struct dp_devglob_rule {
        char *type;
        char **paths;
        size_t n_paths;
        dp_usb_match *usb;
        size_t n_usb;
        unsigned count;
} dp_devglob_rule;

typedef struct dp_backend_config {
        char *domain;      /* NULL: backend default */
        char *driver_name; /* NULL: backend default */
        dp_fault_table faults;
        dp_pci_rule *pci;
        size_t n_pci;
        dp_devglob_rule *devglob;
        size_t n_devglob;
} dp_backend_config;

dp_backend_config *dp_backend_config_free(dp_backend_config *c);
DEFINE_FREEP(dp_backend_config, dp_backend_config_free)
/* A config with no rules and the default fault table. NULL on OOM. */
dp_backend_config *dp_backend_config_new_default(void);
/* Parse one document. -EINVAL "<source>:<line>:<col>: BackendConfig <name>:
 * <field path>: <rule>", -E2BIG past the caps, -ENOMEM. */
int dp_backend_config_load(const char *buf, size_t len, const char *source, dp_backend_config **ret, dp_error *err);
int dp_backend_config_load_file(const char *path, dp_backend_config **ret, dp_error *err);

/* ---- the backend ---- */

typedef struct dp_backend dp_backend;

int dp_backend_open(dp_backend_kind kind, const dp_backend_options *o, dp_backend **ret, dp_error *err);
dp_backend *dp_backend_close(dp_backend *b);
DEFINE_FREEP(dp_backend, dp_backend_close)

dp_backend_kind dp_backend_get_kind(const dp_backend *b);
const dp_backend_config *dp_backend_get_config(const dp_backend *b);

int dp_backend_discover(dp_backend *b, dp_device_set **ret, dp_error *err);

int dp_backend_fd(const dp_backend *b);
/* now_usec: CLOCK_MONOTONIC microseconds (the loop's dp_loop_now()); the
 * timer is armed against that clock. Returns the number of devices and MIG
 * instances whose health changed (>= 0) or a negative errno (the backend
 * stays usable; nvml marks every device "gpu-lost" when its event source
 * fails). */
int dp_backend_dispatch(dp_backend *b, dp_device_set *set, uint64_t now_usec, dp_error *err);

/* Explicit recovery of a device or MIG instance (id or uuid) — e.g. after an
 * operator reset it; a device still missing (devglob) turns unhealthy again
 * on the next dispatch. Returns the number of health changes, -ENOENT for an
 * unknown id. */
int dp_backend_recover(dp_backend *b, dp_device_set *set, const char *id_or_uuid, uint64_t now_usec);

/* Devices in fault now, by device id / MIG id, with their fault class
 * ("xid-79", "gpu-lost", "missing"): what V2 turns into taints
 * (dp_dra_fault {device, fault_class}). Borrowed until the next dispatch,
 * recover or discover. */
size_t dp_backend_faults(const dp_backend *b, const dp_fault_entry **ret);

/* devglob presence, the pure part: for every device of `set`, a node for
 * which present(path) is false raises a sticky "missing" fault; a device
 * whose nodes are all back loses its "missing" fault. Returns how many
 * devices changed state in the tracker. */
typedef bool (*dp_devglob_present_fn)(const char *path, void *userdata);
int dp_devglob_presence_update(dp_fault_tracker *tr, const dp_device_set *set, dp_devglob_present_fn present,
                               void *userdata, uint64_t now_usec);
