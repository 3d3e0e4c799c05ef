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

/* Resident-memory trim (rss.c). Calls touch it (a counter, and arming the
 * timer when it is not armed: one timerfd_settime per burst); the timer,
 * when calls were seen since it was armed, waits another period, else trims:
 * so a trim comes one to two periods after the last call, never during a
 * burst; without calls the timer stays disarmed (no wake-ups). */
typedef struct agent_rss {
        dp_loop_source *timer; /* NULL: off */
        uint64_t period_usec;
        uint64_t activity, seen; /* calls so far; activity when last (re)armed */
        unsigned trims;
        uint64_t last_kib; /* resident KiB of the mappings the last trim dropped */
        bool armed;
} agent_rss;
/* ms 0: off (no timer). -errno from the loop. */
int agent_rss_init(agent_rss *t, dp_loop *l, unsigned ms);
void agent_rss_done(agent_rss *t);
void agent_rss_arm(agent_rss *t);
static inline void agent_rss_touch(agent_rss *t) {
        t->activity++;
        if (!t->armed && t->timer) agent_rss_arm(t);
}
/* Trim at once: MADV_DONTNEED on every mapping that qualifies, then
 * malloc_trim(0); logs what it dropped. */
void agent_rss_trim_now(agent_rss *t);

/* The /proc/self/smaps reader of the trim, one line at a time (pure: for
 * the trim and the unit test). agent_smaps_line() returns true, with the
 * range and its resident KiB, at the last line (VmFlags) of a mapping that
 * may be dropped: read-only, private, a file outside /dev (not memfd), no
 * anonymous page, no VmFlags wr/sh/io/pf/lo/ht/um/uw/dc. */
typedef struct agent_smaps {
        uint64_t start, end;
        uint64_t rss_kib, anon_kib; /* UINT64_MAX: not seen */
        bool candidate;
} agent_smaps;
void agent_smaps_init(agent_smaps *s);
bool agent_smaps_line(agent_smaps *s, const char *line, uint64_t *ret_start, uint64_t *ret_len, uint64_t *ret_rss_kib);

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
        agent_rss rss;
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
