/* SPDX-License-Identifier: Apache-2.0
 *
 * ckpt.h — the device manager's ledger to and from the kubelet's
 * `kubelet_internal_checkpoint` (format and checksum: devices/checkpoint.h,
 * wire-protocols.md §5), and the atomic file write the kubelet uses
 * (temporary file in the same directory, fsync, rename, fsync of the
 * directory).
 */
#pragma once

#include "base/strbuf.h"
#include "node/devmgr.h"

/* Encode the ledger: one entry per (pod, container, resource) with its
 * device ids grouped by NUMA node and its AllocResp, and one per unproven
 * (pod, resource) under DP_NODE_UNPROVEN_CONTAINER listing the withheld
 * devices (NUMA -1, no AllocResp); RegisteredDevices = the healthy ids of
 * each resource (an empty list for resources known only by name). Pure. */
int dp_node_checkpoint_encode(const dp_devmgr *m, dp_strbuf *out);
/* Decode and verify a checkpoint and load it into an empty ledger: entries
 * become allocations (DP_NODE_UNPROVEN_CONTAINER ones unproven marks that
 * remember their ids), RegisteredDevices names become known resources.
 * -EINVAL / -EBADMSG (corrupt: err says why, the ledger is left empty),
 * -ENOMEM. */
int dp_node_checkpoint_load(dp_devmgr *m, const char *buf, size_t len, dp_error *err);
/* The same without trusting the checksum, into a ledger that may already
 * hold allocations: only entries for a (pod, container, resource) it does not
 * hold yet are taken (the status file, read first, is the better record; the
 * damaged file fills in what was allocated after the status was last
 * written). -EINVAL (does not parse), -ENOMEM. */
int dp_node_checkpoint_salvage(dp_devmgr *m, const char *buf, size_t len, dp_error *err);
/* Add the V1 devices the node's status file (DP_NODE_STATUS_FILE, written
 * durably after every change and before any pod is Running) says each pod's
 * containers were given: the stand-in's record of what running containers
 * hold, as the container runtime is the kubelet's; and its `unproven` marks
 * with their `withheld` ids. Read before the damaged checkpoint. An
 * allocation rebuilt this way has an empty AllocResp. *ret_n: the
 * (pod, container, resource) entries and marks it named. -EINVAL (does not
 * parse), -ENOMEM. */
int dp_node_status_salvage(dp_devmgr *m, const char *buf, size_t len, size_t *ret_n, dp_error *err);
