/* SPDX-License-Identifier: Apache-2.0
 *
 * agent.h — `devplane agent`, a Device Plugin (API v1beta1) over the mock
 * backend, as an object on a dp_loop (see docs/v1-node-path.md).
 *
 * On dp_agent_new(): the backend is opened and its devices discovered (mock:
 * the profile instantiated for the node name), the
 * config loaded (NVIDIA-style, devices/config.h), the health file of the
 * state directory applied, and the V1 plan built (one resource name per
 * whole-GPU / MIG profile / time-sliced resource). Each resource gets its
 * own gRPC server on <plugin-dir>/devplane-<domain>_<name>.sock and registers
 * on <plugin-dir>/kubelet.sock (as soon as that socket exists).
 *
 * From the loop:
 *   - kubelet.sock created (inotify on the plugin directory: a kubelet
 *     (re)start) -> every resource re-creates its socket and registers again;
 *   - <state-dir>/health rewritten (inotify) -> health re-applied, and every
 *     open ListAndWatch of a resource whose list changed gets the full list;
 *   - the backend's fd readable (NVML events, devglob presence, recovery
 *     deadlines) -> dp_backend_dispatch(), the health file re-applied on
 *     top (overrides win), then the same publication;
 *   - dp_agent_reload() (SIGHUP) -> config re-read and devices discovered
 *     again (vanished ones leave V1 and the published slices; holds move to
 *     a ledger of the new set); resources that stay keep their socket and
 *     streams (new lists are sent), removed ones close, new ones register.
 *     A config or discovery that fails is refused and the old state stays.
 * dp_agent_free() (SIGTERM) removes the sockets.
 */
#pragma once

#include "base/error.h"
#include "devices/config.h"
#include "devices/device.h"
#include "grpc/loop.h"

#define DP_AGENT_DEFAULT_STATE_DIR "/var/lib/devplane/agent"
/* The agent lists its device ids here so `agent health set` can refuse
 * unknown ones. */
#define DP_AGENT_DEVICES_FILE "devices"
/* The path of the kubelet checkpoint this agent has read (one line): once
 * read, a missing checkpoint is a lost record, not a fresh node. */
#define DP_AGENT_CKPT_SEEN_FILE "kubelet-checkpoint-seen"
#define DP_AGENT_FILE_CHECK_ENV "DP_AGENT_FILE_CHECK_MS"

typedef struct dp_agent_options {
        const char *plugin_dir;  /* required */
        const char *profile;     /* built-in name or file; NULL: DP_PROFILE_DEFAULT */
        const char *config_path; /* NULL: defaults */
        /* NVIDIA's flags and environment over the config file (borrowed:
         * they must outlive the agent, a reload applies them again), and
         * unknown config keys as errors rather than warnings. */
        const dp_config_override *config_overrides;
        size_t n_config_overrides;
        bool strict_config;
        const char *node_name; /* NULL: host name */
        const char *state_dir; /* NULL: DP_AGENT_DEFAULT_STATE_DIR */
        /* Where devices come from (devices/backend.h): mock (the profile),
         * pci, devglob or nvml. */
        int backend;                /* dp_backend_kind; 0: mock */
        const char *backend_config; /* BackendConfig file; NULL: defaults */
        const char *sysfs_root;     /* NULL: /sys */
        const char *dev_root;       /* NULL: "" */
        const char *nvml_library;   /* NULL: $DP_NVML_LIBRARY, else libnvidia-ml.so.1 */
        /* V2: the DRA driver (agent/dra-internal.h; docs/v2-node-path.md). */
        bool dra;                         /* serve the DRA path */
        bool no_device_plugin;            /* do not serve the V1 path */
        const char *registry_dir;         /* NULL: /var/lib/kubelet/plugins_registry */
        const char *plugins_dir;          /* NULL: /var/lib/kubelet/plugins (socket in <dir>/<driver>/) */
        const char *cdi_dir;              /* NULL: /var/run/cdi */
        const char *slices_dir;           /* NULL: slices are not written */
        const char *claims_dir;           /* NULL: claims cannot be read (every prepare fails) */
        const char *const *taint_effects; /* "CLASS=EFFECT" (agent/dra-internal.h) */
        size_t n_taint_effects;
        /* How often the DRA driver retries failed writes (ResourceSlices
         * file, checkpoint) and checks its CDI specs against the checkpoint
         * (a deleted or damaged spec is written again). 0: the value of
         * $DP_AGENT_FILE_CHECK_MS, else 10 s. */
        unsigned file_check_ms;
        bool allow_multiple; /* publish devices with allowMultipleAllocations (consumable capacity) */
        /* The Kubernetes API (docs/deploy.md): a kubeconfig file, or the
         * in-cluster service account (sa_dir NULL: DP_KUBE_SA_DIR). With
         * either, --dra publishes ResourceSlice objects and reads claims
         * from the API instead of --claims-dir. */
        const char *kubeconfig;
        const char *kube_context; /* NULL: current-context */
        bool in_cluster;
        const char *sa_dir;
        uint64_t api_backoff_max_usec; /* 0: 30 s */
        /* Prometheus text on http://HOST:PORT/metrics; NULL: no listener. */
        const char *metrics_addr;
} dp_agent_options;

typedef struct dp_agent dp_agent;

/* -EINVAL (bad profile, config or health file: err names file and field),
 * -errno for directories and sockets. */
int dp_agent_new(dp_loop *l, const dp_agent_options *o, dp_agent **ret, dp_error *err);
dp_agent *dp_agent_free(dp_agent *a);
DEFINE_FREEP(dp_agent, dp_agent_free)

/* Re-read the config file and discover the devices again. On error the
 * running state stays. */
int dp_agent_reload(dp_agent *a, dp_error *err);

/* DRA: the published ResourceSlice generation (0 without --dra) and
 * NotifyRegistrationStatus(registered) calls received. */
int64_t dp_agent_dra_generation(const dp_agent *a);
uint64_t dp_agent_dra_registrations(const dp_agent *a);

/* The port the metrics listener bound (0: none). */
int dp_agent_metrics_port(const dp_agent *a);

/* Successful Register calls so far (benchmarks and the demo wait on it). */
uint64_t dp_agent_registrations(const dp_agent *a);
/* Resource names served, in plan order (borrowed; valid until reload). */
size_t dp_agent_n_resources(const dp_agent *a);
const char *dp_agent_resource_name(const dp_agent *a, size_t i);

/* `devplane agent health set`: rewrite <state_dir>/health atomically so id
 * has health h. When the agent has written its device list, an id it does
 * not know is -ENOENT. */
int dp_agent_health_set(const char *state_dir, const char *id, dp_health h, dp_error *err);

/* Per-node config selection (agent/config-select.c), NVIDIA's way: `value`
 * (the node's label, NULL or "" when unlabelled) names a file of `dir`;
 * unlabelled, `def` if present, else the only file there. -ENOENT says which
 * is missing. *ret is the path. */
int dp_agent_config_pick(const char *dir, const char *value, const char *def, char **ret, dp_error *err);
/* Read label `label` of Node `node` from the API server, running the loop
 * until the answer (30 s timeout). *ret is NULL when the node has no such
 * label. */
struct dp_kube_config;
int dp_agent_node_label(dp_loop *l, const struct dp_kube_config *kc, const char *node, const char *label, char **ret,
                        dp_error *err);

/* `--log-format json`: every later log line is one JSON object
 * {"time","level","component","msg"} on stderr (agent/log-json.c). */
int dp_agent_log_json_setup(void);
