/* SPDX-License-Identifier: Apache-2.0
 *
 * node.h — `devplane node`, the kubelet stand-in's device manager, as an
 * object living on a dp_loop (see docs/v1-node-path.md).
 *
 * On dp_kubelet_new():
 *   - the plugin directory is created (0750) and locked (DP_NODE_LOCK_FILE:
 *     a second node on it fails with -EBUSY naming the holder's pid), then
 *     every socket in it is removed (stale plugin sockets and an old
 *     kubelet.sock), as the kubelet does;
 *   - the checkpoint <plugin-dir>/kubelet_internal_checkpoint is read: a
 *     corrupt, missing or non-regular one is rebuilt from the status file
 *     and reported (log + status); devices no record can account for are
 *     withheld (node/recover.c, docs/v1-node-path.md);
 *   - the registration server listens on <plugin-dir>/kubelet.sock;
 *   - pods are read from the manifest directory, which is then watched.
 * Afterwards everything happens from the loop: Register (validated as the
 * kubelet validates it; GetDevicePluginOptions is called on the plugin
 * before Register is answered), one ListAndWatch per plugin, per-container
 * GetPreferredAllocation / Allocate / PreStartContainer for pods one at a
 * time, checkpoint and status written atomically and durably after every
 * change; a failed write fails the admission it protects and is retried.
 *
 * Status: <plugin-dir>/devplane_node_status.json, JSON written atomically
 * after every change (format in docs/v1-node-path.md); read it with
 * dp_node_status_* (status.h) or `devplane node status`.
 */
#pragma once

#include "base/error.h"
#include "grpc/loop.h"

#define DP_NODE_DEFAULT_PLUGIN_DIR "/var/lib/kubelet/device-plugins"
#define DP_NODE_KUBELET_SOCKET "kubelet.sock"
#define DP_NODE_STATUS_FILE "devplane_node_status.json"
/* flock'ed for the node's life: one node per plugin directory; holds its pid */
#define DP_NODE_LOCK_FILE "devplane_node.lock"

typedef struct dp_node_config {
        const char *plugin_dir;      /* required */
        const char *manifests_dir;   /* NULL: no pods */
        const char *node_name;       /* NULL: the host name */
        uint64_t backoff_initial_ms; /* first retry after a failed admission; 0: 1000 */
        uint64_t backoff_max_ms;     /* cap; 0: 10000 */
        /* The DRA manager (node/dra-manager.h) runs when registry_dir is set. */
        const char *registry_dir; /* plugin watcher directory (plugins_registry) */
        const char *claims_dir;   /* where claims are written for the drivers; NULL: not written */
        const char *cdi_dir;      /* CDI specs read for the status; NULL: /var/run/cdi */
} dp_node_config;

typedef struct dp_kubelet dp_kubelet;

/* -EINVAL / -errno with err set when the directories cannot be prepared or
 * the socket cannot be bound. */
int dp_kubelet_new(dp_loop *l, const dp_node_config *cfg, dp_kubelet **ret, dp_error *err);
/* Stops serving (kubelet.sock removed), closes plugin connections, writes
 * the status one last time as stopped. */
dp_kubelet *dp_kubelet_free(dp_kubelet *n);
DEFINE_FREEP(dp_kubelet, dp_kubelet_free)

/* Counts for the demo and benchmarks. */
size_t dp_kubelet_n_pods_running(const dp_kubelet *n);
size_t dp_kubelet_n_pods(const dp_kubelet *n);
/* Capacity/allocatable of one resource (0 when unknown). */
size_t dp_kubelet_capacity(const dp_kubelet *n, const char *resource);
size_t dp_kubelet_allocatable(const dp_kubelet *n, const char *resource);
bool dp_kubelet_resource_connected(const dp_kubelet *n, const char *resource);
/* Increments on every Register accepted (benchmarks wait on it). */
uint64_t dp_kubelet_registrations(const dp_kubelet *n);
/* Increments on every ListAndWatch message received. */
uint64_t dp_kubelet_device_updates(const dp_kubelet *n);
