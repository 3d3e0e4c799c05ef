/* SPDX-License-Identifier: Apache-2.0
 *
 * ledger.h — the node's single ledger of handed-out devices, shared by the
 * V1 (Device Plugin Allocate) and V2 (DRA NodePrepareResources) paths of one
 * agent, so one physical device never goes to two consumers that did not ask
 * to share it (DESIGN.md property 4). Pure, in memory; model-free so the
 * agent's V1 code can call it.
 *
 * Names: anything either path hands out — a V2 device name of the inventory
 * (gpu-3, gpu-0-mig-1g10gb-2, gpu-1-partition-0, gpu-1-full, gpu-2-vgpu-1),
 * or a V1 id: device id or uuid (GPU-…, MIG-…), MIG id (or its dotted form
 * of earlier releases, gpu-0-mig-1g.10gb-2), index ids ("3",
 * "0:2"), time-slicing replicas "<id>::<n>". Each resolves to a physical
 * device and a unit (the whole device, or one MIG instance / partition).
 * Two holds overlap when they are on the same physical device and one is the
 * whole device or both are the same unit — so a partition conflicts with
 * its parent GPU and a MIG instance with the whole GPU, but two partitions of
 * one GPU do not (counters and groups arbitrate those in V2).
 *
 * Rule: an acquisition is refused (-EBUSY) when it overlaps a hold of
 * another holder, unless either hold is admin access (DP_LEDGER_ADMIN), or
 * both are on the same path and both shared (DP_LEDGER_SHARED: V1 replicas
 * — implied by an "::<n>" id — or V2 results with a shareID). Across paths
 * nothing is shared: a device handed out through V1 is refused to V2 until
 * released, and vice versa, with a message naming the holder:
 *   "device gpu-3 is held through V1 by pod 1234/ctr (Allocate); release it first"
 * Acquisition is all or nothing and idempotent for the same holder.
 *
 * Holders are free text chosen by the caller; by convention
 * "pod <uid>/<container>" for V1 and "claim <ns>/<name> (<uid>)" for V2.
 * After a restart the daemon replays its checkpoints (the kubelet's for V1,
 * the driver checkpoint for V2) through dp_ledger_acquire.
 *
 * Unknown state (fail closed): when a daemon cannot read or verify what one
 * path holds (the kubelet checkpoint is too big or corrupt; a CDI spec of a
 * claim whose driver checkpoint entry is lost cannot be read), it marks the
 * ledger with dp_ledger_mark_unknown: while a mark is set, every device is
 * refused to acquisitions on the paths the mark blocks, by every holder but
 * the mark's own key, with the mark's reason in the message:
 *   "device gpu-3 cannot be handed out through V2: <reason>"
 * Marks are cleared by key once the state is known again.
 */
#pragma once

#include "base/error.h"
#include "dra/inventory.h"

typedef enum {
        DP_LEDGER_V1 = 1,
        DP_LEDGER_V2 = 2,
} dp_ledger_path;

#define DP_LEDGER_SHARED (1u << 0)
#define DP_LEDGER_ADMIN (1u << 1)
/* A hold that already exists, replayed from a checkpoint: neither
 * unknown-state marks nor conflicts refuse it (what was handed out stays
 * held; its container may be running). A replay that overlaps another
 * holder's hold keeps both holds — both consumers may use the device, so
 * nobody new gets it until one releases it — and is reported: acquire
 * returns how many of its devices clash (> 0) with err describing the
 * first, and dp_ledger_conflicts counts the clashing pairs. */
#define DP_LEDGER_REPLAY (1u << 2)
#define DP_LEDGER_MAX_HOLDS 65536

typedef struct dp_ledger dp_ledger;

/* The set and (optional) inventory are read now; the ledger keeps copies
 * of what it needs. NULL on OOM or bad arguments. */
dp_ledger *dp_ledger_new(const struct dp_device_set *set, const dp_dra_inventory *inv);
dp_ledger *dp_ledger_free(dp_ledger *l);
DEFINE_FREEP(dp_ledger, dp_ledger_free)

/* 0 (acquired, or already held by this holder), > 0 (DP_LEDGER_REPLAY
 * only: acquired over that many clashes, err names the first), -EBUSY
 * (conflict; err names the device, the path and the holder), -ENOENT (unknown device name),
 * -E2BIG (DP_LEDGER_MAX_HOLDS), -ENOMEM. Nothing changes on failure. */
int dp_ledger_acquire(dp_ledger *l, dp_ledger_path path, const char *holder, const char *const *devices, size_t n,
                      unsigned flags, dp_error *err);
/* Release every hold of the holder; returns how many there were. */
int dp_ledger_release(dp_ledger *l, const char *holder);
/* The first holder of anything overlapping `device` (NULL if free or
 * unknown); ret_path may be NULL. */
const char *dp_ledger_holder(const dp_ledger *l, const char *device, dp_ledger_path *ret_path);
size_t dp_ledger_count(const dp_ledger *l);
/* Pairs of holds that clash (one device held by two consumers that did
 * not ask to share it): only replays make them. 0 on a healthy node. */
size_t dp_ledger_conflicts(const dp_ledger *l);
/* Whether `device` (any resolvable name) is out of `path`'s reach now:
 * overlapped by a hold of the other path that is not admin access (admin
 * access watches a device, it does not take it), or blocked for `path` by
 * an unknown-state mark. Unknown names: false. The agent withdraws such
 * devices from V1 (ListAndWatch, GetPreferredAllocation). */
bool dp_ledger_withdrawn(const dp_ledger *l, const char *device, dp_ledger_path path);

/* Set (or replace) the mark `key`: blocks is a mask of dp_ledger_path
 * values (DP_LEDGER_V1 | DP_LEDGER_V2). 0, -ENOMEM, -E2BIG (more than
 * DP_LEDGER_MAX_MARKS). */
#define DP_LEDGER_MAX_MARKS 4096
int dp_ledger_mark_unknown(dp_ledger *l, const char *key, unsigned blocks, const char *reason);
/* Clear the mark `key`; 1 when there was one, 0 otherwise. */
int dp_ledger_clear_unknown(dp_ledger *l, const char *key);
/* The reason of the first mark blocking `path` (NULL: none). */
const char *dp_ledger_unknown(const dp_ledger *l, dp_ledger_path path);
/* Bumped on every change of holds or marks (for republishing lists). */
uint64_t dp_ledger_version(const dp_ledger *l);
const char *dp_ledger_path_name(dp_ledger_path p); /* "V1" / "V2" */
