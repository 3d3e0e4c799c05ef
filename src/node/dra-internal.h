/* SPDX-License-Identifier: Apache-2.0
 *
 * dra-internal.h — the node's DRA manager inside (see dra-manager.h): the
 * types its files share and the functions they call across.
 *   dra-manager.c  claims and pods (resolution, prepare, unprepare), the
 *                  rescan, status, life cycle — the glue;
 *   dra-plugins.c  plugin watcher (registration), device health streams and
 *                  the PreparedClaims List of each registered driver — the
 *                  I/O towards drivers that is not prepare/unprepare;
 *   dra-state.c    the pure claim table and its checkpoint encoding.
 * Model-free: dra-plugins.c does not include model/model.h.
 */
#pragma once

#include <dirent.h>

#include "grpc/grpc.h"
#include "node/dra-manager.h"
#include "node/dra-state.h"
#include "proto/proto.h"

#define MAX_PLUGINS 256

typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim pb_claim;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest pb_prep_req;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse pb_prep_resp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesRequest pb_unprep_req;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse pb_unprep_resp;

/* One device's health as the driver's health stream last said. */
typedef struct health_dev {
        char *pool, *device, *message;
        int health; /* V1ALPHA1__HEALTH_STATUS__* (same numbers in v1) */
        int64_t updated;
} health_dev;

/* The NodeWatchResources stream of one registered driver. Heap-allocated
 * (the call's userdata), so it stays put when the plugin array moves. */
typedef struct health_watch {
        dp_node_dra *d;
        char *driver, *endpoint;
        const char *path; /* gRPC method path of the version in use */
        dp_grpc_channel *ch;
        dp_grpc_client_call *call;
        health_dev *devs;
        size_t n_devs;
        char *state; /* "watching", "not served by the plugin", "ended: ..." */
        unsigned attempts;
        uint64_t next_try; /* µs; 0: nothing pending */
        bool streaming;
} health_watch;

typedef struct plugin_ent {
        char *sock; /* registration socket path */
        char *driver, *endpoint;
        const char *prefix; /* gRPC path prefix of the chosen version */
        const char *version;
        bool ok;
        char *error;
        unsigned retries;
        uint64_t next_try;       /* µs; 0: nothing pending */
        const char *health_path; /* NodeWatchResources of the version GetInfo listed, or NULL */
        health_watch *hw;
        /* The PreparedClaims List after registration: pending until it
         * answered (or said UNIMPLEMENTED); retried with backoff. */
        bool list_pending;
        unsigned list_attempts;
        uint64_t list_next_try; /* µs; 0: now */
} plugin_ent;

/* A claim prepared (or being prepared) by one driver: the node's DRA state
 * (dra-state.h), saved after every change. */
typedef dp_node_dra_device prep_dev;
typedef dp_node_dra_claim claim_ent;

typedef struct ctr_claim {
        char *pod_claim; /* pod.spec.resourceClaims[].name */
        char *request;   /* NULL: every request */
} ctr_claim;

typedef struct ctr_ent {
        char *name;
        ctr_claim *claims;
        size_t n_claims;
} ctr_ent;

/* Who a claim created from a template belongs to. */
typedef enum { OWNER_NONE = 0, OWNER_POD, OWNER_POD_GROUP } claim_owner;

typedef struct pod_ent {
        char *ns, *name, *uid;
        char **pod_claims, **claim_names, **claim_uids; /* parallel; uid NULL until resolved */
        char **templates;                               /* parallel: template to create from, or NULL */
        claim_owner *owners;                            /* parallel */
        char *group;                                    /* the PodGroup of OWNER_POD_GROUP claims */
        size_t n_claims;
        ctr_ent *ctrs;
        size_t n_ctrs;
        bool prepared;
        char *message;
        unsigned attempts;
        uint64_t next_try; /* µs */
        bool seen;
} pod_ent;

struct dp_node_dra {
        dp_loop *loop;
        char *registry_dir, *manifests_dir, *claims_dir, *cdi_dir;
        uint64_t backoff_initial_ms, backoff_max_ms;
        void (*changed)(void *);
        const char *(*v1_unrecorded)(void *userdata);
        void *userdata;
        dp_loop_source *reg_watch, *timer;
        plugin_ent *plugins;
        size_t n_plugins;
        char *state_dir; /* NULL: the state is not saved (tests) */
        dp_node_dra_state *st;
        /* How the state was found at start, for the status: loaded, missing
         * or corrupt (kept as <file>.corrupt); the last two set st->rebuild. */
        char *state_origin;
        bool state_dirty;         /* a save failed: tried again on the next change or tick */
        char *state_error;        /* the last save failure, for the status */
        bool crash_after_prepare; /* test hook: SIGKILL between prepare and the state write */
        pod_ent *pods;
        size_t n_pods;
        bool busy, again;
        /* A synchronous gRPC call runs the loop: registry events that arrive
         * meanwhile must not move the plugin array under the caller, so
         * they only set `rewalk`, and the directory is reconciled after. */
        unsigned in_call;
        bool rewalk;
        uint64_t prepare_calls;
        uint64_t rescan_retry; /* µs: a rescan ran out of memory and is tried again then; 0 none */
};

static inline DIR *closedir_safe(DIR *dir) {
        if (dir) closedir(dir);
        return NULL;
}
DEFINE_FREEP(DIR, closedir_safe)

/* dra-manager.c */
/* Backoff before retry `attempt` (1, 2, …): initial, doubling, capped; µs. */
uint64_t dra_backoff_usec(const dp_node_dra *d, unsigned attempt);
void dra_notify_changed(dp_node_dra *d);
/* Set the timer to the earliest pending retry. */
void dra_arm_timer(dp_node_dra *d);
/* Save the state (atomic, durable). 0 or a negative errno (logged, kept for
 * the status, retried from the timer). */
int dra_state_save(dp_node_dra *d);
claim_ent *dra_claim_find(dp_node_dra *d, const char *uid, const char *driver);
/* The pods the state records for claim c, from index *i on (for loops). */
pod_ent *dra_pods_using(dp_node_dra *d, const claim_ent *c, size_t *i);

/* dra-plugins.c */
const plugin_ent *dra_plugin_for(const dp_node_dra *d, const char *driver);
void dra_plugin_clear(plugin_ent *p);
/* Dial the registration socket: GetInfo, validate, notify; then watch its
 * health and ask what it holds (List). Retried from the timer. */
void dra_plugin_attempt(dp_node_dra *d, plugin_ent *p);
/* devplane's PreparedClaims List of a registered driver, merged into the
 * state (p->list_pending until it answered; retried with backoff). */
void dra_plugin_list(dp_node_dra *d, plugin_ent *p);
void dra_health_open(health_watch *w);
/* A socket appeared in the registry directory (name relative to it). */
void dra_socket_added(dp_node_dra *d, const char *name);
/* Registry events deferred during a call: reconcile with the directory. */
void dra_registry_rewalk(dp_node_dra *d);
int dra_on_registry_event(dp_loop_source *s, const struct inotify_event *ev, void *ud);
