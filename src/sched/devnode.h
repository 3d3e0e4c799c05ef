/* SPDX-License-Identifier: Apache-2.0
 *
 * devnode.h — one simulated node's hardware and its node agent, as the
 * scheduler and simulator see it, without the device model's types (the
 * device model and the Kubernetes model both name a `dp_device`, so no file
 * may include both; this header is the seam).
 *
 * A devnode instantiates a hardware profile (devices/profile.h) for a node
 * name, builds the V1 plan under an agent config (MIG strategy,
 * time-slicing), keeps the device manager's ledger (which advertised id each
 * container holds), and builds the DRA driver's inventory (the V2 view).
 *
 * Units: every physical device is a unit, and every MIG instance is a unit
 * after its parent; utilization is reported per unit.
 */
#pragma once

#include "base/error.h"
#include "base/strbuf.h"
#include "doc/doc.h"
#include "dra/inventory.h"

typedef struct dp_devnode dp_devnode;
/* A node read from a Node object has no devnode: the accessors below take
 * NULL as a node with no units, no V1 resources and no inventory. */

/* agent_config: an NVIDIA device plugin config document (version: v1), or
 * NULL for the defaults. The V2 view follows dp_devnode_set_dra() (by default
 * the profile's own partition mode, no multiple allocations). */
/* profile: a built-in name or a profile file's path (dp_profile_resolve);
 * with profile_text, that file's text already read (profile names it in
 * errors). */
int dp_devnode_new(const char *profile, const char *profile_text, size_t profile_len, const char *node_name,
                   const char *agent_config, size_t config_len, const char *config_source, dp_devnode **ret,
                   dp_error *err);
dp_devnode *dp_devnode_free(dp_devnode *n);
/* Whether dp_profile_resolve reads `profile` as a file's path (not a
 * built-in name), and whether a profile file's text loads for node_name. */
bool dp_devnode_profile_is_file(const char *profile);
int dp_devnode_profile_check(const char *text, size_t len, const char *source, const char *node_name, dp_error *err);
/* The device set of dp_devnode_new's profile arguments (the simulator's
 * compatibility-group inventory keeps its own copy). */
int dp_devnode_profile_load(const char *profile, const char *profile_text, size_t profile_len, const char *node_name,
                            struct dp_device_set **ret, dp_error *err);
DEFINE_FREEP(dp_devnode, dp_devnode_free)

const char *dp_devnode_driver(const dp_devnode *n);

/* ---- V1 ---- */
size_t dp_devnode_v1_resource_count(const dp_devnode *n);
/* Resource i in name order: its name, capacity (all ids) and allocatable (healthy ids). */
const char *dp_devnode_v1_resource(const dp_devnode *n, size_t i, size_t *ret_capacity, size_t *ret_allocatable);
/* The device manager's choice for one container: `count` healthy ids of
 * `resource` held by nobody, chosen by GetPreferredAllocation, then checked by
 * Allocate. The ids are recorded against `owner` ("ns/pod/container"); the units
 * they sit on are appended to `ids` comma-separated ("gpu-3", or
 * "gpu-3:replica-1" for a time-sliced replica). -ENOSPC when not enough healthy free
 * ids (err says how many), -EINVAL when Allocate refuses (err), -ENOENT for a
 * resource this node does not advertise. */
int dp_devnode_v1_allocate(dp_devnode *n, const char *resource, size_t count, const char *owner, dp_strbuf *ids,
                           dp_error *err);
/* Free every id whose owner starts with `owner_prefix` ("ns/pod/"). */
void dp_devnode_v1_release(dp_devnode *n, const char *owner_prefix);

/* ---- one device, two models ("both" nodes) ----
 * A unit held through V2 (a claim's allocation) is not allocatable through
 * V1, nor is its MIG parent or child; V1's allocatable counts drop with it,
 * as the agent's ListAndWatch would report. A unit held through V1 carries
 * the NoSchedule taint DP_DEVNODE_V1_TAINT in the V2 slice. */
#define DP_DEVNODE_V1_TAINT "devplane.io/device-plugin-allocated"
void dp_devnode_v2_clear(dp_devnode *n);
int dp_devnode_v2_hold(dp_devnode *n, size_t unit_index);
/* Whether a V1 holder sits on the unit, its parent or a child. */
bool dp_devnode_v1_blocks(const dp_devnode *n, size_t unit_index);

/* ---- health ---- */
/* Mark a device or MIG instance (id or uuid) healthy or not. -ENOENT. */
int dp_devnode_set_health(dp_devnode *n, const char *id, bool healthy, dp_error *err);

/* ---- V2 ----
 * What the node's DRA driver publishes (dra/inventory.h: whole GPUs, MIG
 * instances on memory counters, example-gpu partitions), rebuilt on every
 * health change; dra/slices.h turns it into ResourceSlices. */
const dp_dra_inventory *dp_devnode_inventory(const dp_devnode *n);
/* The DRA driver's options: partitions per GPU (-1: the profile's), and
 * allowMultipleAllocations on whole devices and partitions. Rebuilds the
 * inventory; -EINVAL (err) for options the driver refuses. */
int dp_devnode_set_dra(dp_devnode *n, int partitions, bool allow_multiple, dp_error *err);
/* The unit a V2 device lives on (a partition: its physical device); -ENOENT. */
int dp_devnode_unit_of_v2(const dp_devnode *n, const char *device_name);

/* ---- units ---- */
typedef struct dp_devnode_unit {
        const char *id;
        const char *uuid;
        const char *profile;           /* "gpu" for physical devices, the MIG profile otherwise */
        int parent;                    /* unit index of the parent GPU, -1 for a physical device */
        bool mig_mode;                 /* physical device in MIG mode */
        bool healthy;                  /* effective */
        size_t n_v1_holders;           /* V1 ids held on this unit (replicas count each) */
        const char *const *v1_holders; /* owners, in allocation order */
} dp_devnode_unit;
size_t dp_devnode_unit_count(const dp_devnode *n);
int dp_devnode_unit_get(const dp_devnode *n, size_t i, dp_devnode_unit *ret);
/* Unit index by device model id; -ENOENT. */
int dp_devnode_unit_find(const dp_devnode *n, const char *id);
