/* SPDX-License-Identifier: Apache-2.0
 * node-internal.h — the dp_kubelet object shared by node.c (daemon, plugins,
 * manifests), admit.c (per-container allocation) and status-build.c. */
#pragma once

#include <sys/types.h>

#include "doc/doc.h"
#include "grpc/grpc.h"
#include "node/devmgr.h"
#include "node/dra-manager.h"
#include "node/files.h"
#include "node/node.h"
#include "node/pods.h"

typedef struct endpoint endpoint;

/* One connection to a plugin, from Register until its ListAndWatch ends.
 * Only the newest endpoint of a resource is `current`; older ones are being
 * torn down and their events are ignored. */
struct endpoint {
        dp_kubelet *node;
        char *resource;
        char *path;
        dp_grpc_channel *ch;
        dp_grpc_client_call *options_call;
        dp_grpc_client_call *law_call;
        dp_grpc_call *register_call; /* answered once GetDevicePluginOptions is back */
        dp_nm_options opts;
        bool current;
        bool dead;
};

/* POD_CLAIMS: device-plugin resources allocated, containers not started
 * until the DRA manager has prepared the pod's claims (the kubelet prepares
 * resources before it starts containers). */
typedef enum { POD_PENDING, POD_ADMITTING, POD_WAITING, POD_CLAIMS, POD_RUNNING } pod_phase;

typedef struct pod_entry {
        dp_node_pod *pod;
        pod_phase phase;
        unsigned attempts;
        uint64_t next_try_ms;
        char *message;
        uint64_t allocate_calls;
        bool seen; /* scratch for rescans */
} pod_entry;

typedef struct manifest_error {
        char *file;
        char *message;
} manifest_error;

/* The one admission in progress. */
typedef struct admit_job {
        pod_entry *pe;
        size_t ci, ri;
        const char **avail;
        size_t needed;
        const char **chosen;
        endpoint *ep;
        dp_grpc_client_call *cc;
        uint8_t *reply; /* the Allocate reply message, until the call is done */
        size_t reply_len;
        bool got_reply;
} admit_job;

struct dp_kubelet {
        dp_loop *loop;
        char *plugin_dir;
        char *manifests_dir;
        char *node_name;
        uint64_t backoff_initial_ms, backoff_max_ms;
        dp_devmgr *dm;
        dp_grpc_server *srv;
        dp_loop_source *manifest_watch;
        dp_loop_source *tick;
        endpoint **eps;
        size_t n_eps;
        pod_entry **pods;
        size_t n_pods;
        manifest_error *merrs;
        size_t n_merrs;
        char *checkpoint_error; /* what was wrong with the checkpoint at start */
        /* The lock on the plugin directory (recover.c), held for life. */
        int lock_fd;
        bool lock_existed;     /* the lock file says a node served here: prior state */
        bool unproven_pending; /* records lost: mark the pods once read */
        /* Failed writes (F1, F10): the error of the last try of each file,
         * NULL once written; retried from the tick at retry_at_ms. */
        char *ckpt_write_error;
        char *status_write_error;
        unsigned write_failures;
        uint64_t retry_at_ms;
        admit_job *job;
        uint64_t generation;
        uint64_t registrations;
        uint64_t device_updates;
        bool stopping;
        bool starting; /* dp_kubelet_new has not finished: nothing written yet */
        dp_node_dra *dra; /* NULL without a registry directory */
};

uint64_t node_now_ms(void);
void node_changed(dp_kubelet *n); /* write checkpoint + status */
/* Both records (checkpoint, status) hold the ledger as it is now: written
 * again first if the last write failed. false: *why (may be NULL) names the
 * file and the error (borrowed, valid until the next write). */
bool node_flush(dp_kubelet *n, const char **why);
/* The error of the last failed write of either record, NULL when both hold. */
const char *node_write_error(const dp_kubelet *n);
void node_kick(dp_kubelet *n);     /* run the scheduler on the next loop round */
void node_schedule(dp_kubelet *n); /* start an admission if one is due */
endpoint *node_current_endpoint(dp_kubelet *n, const char *resource);

/* admit.c */
void node_admit_start(dp_kubelet *n, pod_entry *pe);
void node_admit_abort(dp_kubelet *n); /* pod gone: cancel calls, drop reservations */
/* POD_CLAIMS -> POD_RUNNING once the DRA manager says the claims are
 * prepared (message updated meanwhile). true when anything changed. */
bool node_admit_claims(dp_kubelet *n, pod_entry *pe);

/* recover.c */
int node_lock(dp_kubelet *n, dp_error *err);
void node_mark_served(dp_kubelet *n); /* once started: the lock file says "served" */
int node_load_checkpoint(dp_kubelet *n, dp_error *err);
int node_mark_unproven(dp_kubelet *n); /* after the first manifest scan */
void node_release_orphans(dp_kubelet *n);

/* status-build.c */
int node_status_build(const dp_kubelet *n, bool running, dp_doc_set *s, dp_doc_node **ret);
const char *node_pod_phase_name(pod_phase p);
