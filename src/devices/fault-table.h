/* SPDX-License-Identifier: Apache-2.0
 *
 * fault-table.h — which hardware faults make a device unhealthy, and when
 * it recovers. Pure: no clocks (time is an argument), no I/O.
 *
 * The table (dp_fault_table) classifies one fault report:
 *   Xid n         unhealthy unless n is ignored. Defaults ignore 13, 31, 43,
 *                 45, 68, 109 — the application-level Xids NVIDIA's device
 *                 plugin and DRA driver ignore (graphics engine exception,
 *                 MMU fault, GPU stopped processing, preemptive cleanup,
 *                 video processor exception, context-switch timeout).
 *   ECC single    ignored by default (as NVIDIA's plugin: only Xids count);
 *   ECC double    ignored by default (an uncorrectable error is also raised
 *                 as Xid 48, which is critical); both configurable;
 *   lost          the event source failed or the GPU fell off the bus:
 *                 always unhealthy, unless all checks are disabled;
 *   missing       a device node vanished (devglob): always unhealthy.
 * Each unhealthy report has a fault class, the V2 taint key suffix:
 * "xid-79", "ecc-sbe", "ecc-dbe", "gpu-lost", "missing".
 *
 * The tracker (dp_fault_tracker) holds the devices currently in fault, by
 * device id (a GPU id or a MIG id), with the time of the last critical
 * report. Recovery rule:
 *   - a device recovers once `recover_after_usec` has passed since its last
 *     critical report (a repeat refreshes the clock); 0 disables this;
 *   - or on an explicit recovery (dp_fault_tracker_clear: an operator, or a
 *     backend that saw the device come back);
 *   - "sticky" faults (missing, lost) never recover by time, only
 *     explicitly: they describe a state, not an event.
 */
#pragma once

#include "base/error.h"

#define DP_FAULT_XID_MAX 1023           /* Xids above are always critical */
#define DP_FAULT_CLASS_MAX 24           /* bytes incl. NUL: "xid-1023" fits */
#define DP_FAULT_TRACKED_MAX (128 * 17) /* DP_DEVICES_MAX x (1 + DP_DEVICES_MIG_MAX) */
#define DP_FAULT_DEFAULT_RECOVER_USEC (300ULL * 1000000ULL)
#define DP_FAULT_DEFAULT_POLL_USEC (1000ULL * 1000ULL)

typedef enum {
        DP_FAULT_IGNORE = 0,
        DP_FAULT_UNHEALTHY = 1,
} dp_fault_action;

typedef enum {
        DP_FAULT_XID = 0,
        DP_FAULT_ECC_SBE,
        DP_FAULT_ECC_DBE,
        DP_FAULT_LOST,
        DP_FAULT_MISSING,
} dp_fault_kind;

typedef struct dp_fault_table {
        uint64_t ignore_xid[(DP_FAULT_XID_MAX + 1) / 64]; /* bit set: ignored */
        bool disabled;                                    /* every check off (DP_DISABLE_HEALTHCHECKS=all) */
        dp_fault_action ecc_sbe;
        dp_fault_action ecc_dbe;
        uint64_t recover_after_usec; /* 0: explicit recovery only */
        uint64_t poll_interval_usec; /* nvml: how often the event set is drained */
} dp_fault_table;

/* The defaults above. */
void dp_fault_table_init(dp_fault_table *t);
/* Ignore (or make critical) one Xid; -ERANGE above DP_FAULT_XID_MAX. */
int dp_fault_table_set_xid(dp_fault_table *t, unsigned xid, bool ignore);
bool dp_fault_table_xid_ignored(const dp_fault_table *t, unsigned xid);

/* NVIDIA's environment knobs, same meaning: `disable` is "all" (no health
 * checks), "xids" (every Xid ignored) or a comma list of Xids to ignore in
 * addition; `enable` is a comma list of Xids made critical, overriding
 * any disable ("all"/"xids" there re-enable everything). NULL/empty: no
 * change. -EINVAL with "<name>: <rule>" on a bad list. */
int dp_fault_table_apply_env(dp_fault_table *t, const char *disable, const char *enable, dp_error *err);

/* Classify one report. For DP_FAULT_XID `code` is the Xid. On
 * DP_FAULT_UNHEALTHY the class is written to ret_class (DP_FAULT_CLASS_MAX
 * bytes). */
dp_fault_action dp_fault_table_classify(const dp_fault_table *t, dp_fault_kind kind, unsigned long long code,
                                        char ret_class[DP_FAULT_CLASS_MAX]);

typedef struct dp_fault_entry {
        char *device; /* device id or MIG id */
        char fault_class[DP_FAULT_CLASS_MAX];
        uint64_t last_usec; /* last critical report */
        bool sticky;
} dp_fault_entry;

typedef struct dp_fault_tracker {
        dp_fault_entry *items;
        size_t n, cap;
} dp_fault_tracker;

void dp_fault_tracker_done(dp_fault_tracker *tr);
/* Record a critical report. Returns 1 when the device was not in fault
 * before, 0 when it was (class and time refreshed; a sticky fault stays
 * sticky), -ENOMEM, -E2BIG past DP_FAULT_TRACKED_MAX. */
int dp_fault_tracker_raise(dp_fault_tracker *tr, const char *device, const char *fault_class, bool sticky,
                           uint64_t now_usec);
/* Explicit recovery. 1 if the device was in fault, else 0. */
int dp_fault_tracker_clear(dp_fault_tracker *tr, const char *device);
/* Recover every non-sticky fault quiet for recover_after_usec (0: none).
 * Returns how many recovered. */
int dp_fault_tracker_expire(dp_fault_tracker *tr, uint64_t now_usec, uint64_t recover_after_usec);
/* The earliest time a fault can expire, 0 if none will. */
uint64_t dp_fault_tracker_next_expiry(const dp_fault_tracker *tr, uint64_t recover_after_usec);
const dp_fault_entry *dp_fault_tracker_find(const dp_fault_tracker *tr, const char *device);
