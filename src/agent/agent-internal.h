/* SPDX-License-Identifier: Apache-2.0
 * agent-internal.h — the dp_agent object shared by agent.c and service.c. */
#pragma once

#include "agent/agent.h"
#include "agent/dra-internal.h"
#include "agent/metrics.h"
#include "devices/backend.h"
#include "devices/config.h"
#include "devices/v1.h"
#include "grpc/grpc.h"
#include "proto/proto.h"

typedef struct plugin plugin;

struct plugin {
        dp_agent *agent;
        char *resource;
        char *sock_name;
        char *sock_path;
        dp_grpc_server *srv;
        dp_grpc_streams streams; /* open ListAndWatch calls */
        dp_grpc_channel *reg_ch;
        dp_grpc_client_call *reg_call;
        dp_loop_source *retry;
        unsigned retries;
        uint64_t sent_generation;
        uint64_t sent_withdrawn; /* agent_withdrawn_sig of the list last sent */
        bool registered;
        bool fresh;
};

/* MPS control daemons, one per shared resource (agent/mps.c). */
typedef struct agent_mps_daemon {
        char *resource; /* "nvidia.com/gpu" */
        char *dir, *pipe_dir, *log_dir;
        unsigned replicas;
        bool started;
} agent_mps_daemon;
typedef struct agent_mps {
        agent_mps_daemon *daemons;
        size_t n;
} agent_mps;
/* Start the daemons the config asks for (none without sharing.mps; *ret
 * stays NULL then) and wait until each answers; -errno with err naming the
 * resource and the step. Free stops them ("quit"). */
int agent_mps_start(const dp_agent_config *c, const dp_v1_plan *plan, const dp_device_set *set, agent_mps **ret,
                    dp_error *err);
agent_mps *agent_mps_free(agent_mps *m);
DEFINE_FREEP(agent_mps, agent_mps_free)
/* The running daemons serve exactly what `plan` shares under `c`. */
bool agent_mps_same(const agent_mps *m, const dp_agent_config *c, const dp_v1_plan *plan);

struct dp_agent {
        dp_loop *loop;
        char *plugin_dir;
        char *state_dir;
        char *config_path;
        char *node_name;
        dp_backend *backend;
        dp_loop_source *backend_watch;
        dp_device_set *set;
        dp_agent_config *cfg;
        dp_v1_plan *plan;
        plugin **plugins;
        size_t n_plugins;
        dp_loop_source *dir_watch;
        dp_loop_source *state_watch;
        uint64_t registrations;
        bool v1;           /* the Device Plugin path is served */
        dp_ledger *ledger; /* V1 + V2 hand-outs; NULL without --dra */
        agent_dra *dra;    /* NULL without --dra */
        char **v1_holders; /* ledger holders the V1 path created */
        size_t n_v1_holders;
        uint64_t v1_seq;
        bool v1_ckpt_seen;    /* the kubelet checkpoint was read (DP_AGENT_CKPT_SEEN_FILE written) */
        bool allow_multiple;  /* DRA devices publish allowMultipleAllocations */
        dp_kube_client *kube; /* NULL: no API server */
        agent_metrics metrics;
        agent_metrics_server *metrics_srv;   /* NULL: no --metrics-addr */
        const dp_config_override *overrides; /* borrowed from the options */
        size_t n_overrides;
        bool strict_config;
        bool blocked;   /* init failed with failOnInitError false: serving nothing */
        agent_mps *mps; /* NULL: no MPS sharing */
        int state_lock; /* agent_dir_lock on state_dir, held for life; -1 before */
};

/* service.c */
int agent_service_add_methods(plugin *p);
/* The Allocate and GetPreferredAllocation replies as pure functions of the
 * agent's plan (for the handlers and the fuzzer): a packed reply in *ret, or
 * a negative errno with err (-ENOMEM: RESOURCE_EXHAUSTED, other: UNKNOWN). */
int agent_allocate_reply(const dp_agent *a, const char *resource, const V1beta1__AllocateRequest *req, uint8_t **ret,
                         size_t *ret_len, dp_error *err);
int agent_preferred_reply(const dp_agent *a, const char *resource, const V1beta1__PreferredAllocationRequest *req,
                          uint8_t **ret, size_t *ret_len, dp_error *err);
/* V1 Allocate: hold the requested ids in the ledger (V2 holds refuse them
 * with the holder named). 0 without a ledger. */
int agent_v1_hold(dp_agent *a, const char *resource, const V1beta1__AllocateRequest *req, dp_error *err);
/* Send the full list to every open ListAndWatch of every resource whose
 * list changed since it was last sent: device health, or the devices held
 * through V2 (a prepared claim's devices are listed Unhealthy while it
 * holds them, so the kubelet's allocatable drops and it stops offering
 * them; docs/dra-driver.md). */
void agent_publish_all(dp_agent *a);
