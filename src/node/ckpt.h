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
 * device ids grouped by NUMA node and its AllocResp; RegisteredDevices =
 * the healthy ids of each resource (an empty list for resources known only
 * by name). Pure. */
int dp_node_checkpoint_encode(const dp_devmgr *m, dp_strbuf *out);
/* Decode and verify a checkpoint and load it into an empty ledger: entries
 * become allocations, RegisteredDevices names become known resources.
 * -EINVAL / -EBADMSG (corrupt: err says why, the ledger is left empty),
 * -ENOMEM. */
int dp_node_checkpoint_load(dp_devmgr *m, const char *buf, size_t len, dp_error *err);
