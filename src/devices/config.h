/* SPDX-License-Identifier: Apache-2.0
 *
 * config.h — the agent's V1 configuration: the NVIDIA device plugin's config
 * file (API v1), read as NVIDIA reads it, so existing files and ConfigMaps
 * load unchanged:
 *
 *   version: v1                                (optional; v1 when missing)
 *   flags:
 *     migStrategy: none|single|mixed           (none)
 *     failOnInitError: bool                    (true; false: a backend that
 *                                               cannot start leaves the agent
 *                                               running, advertising nothing)
 *     mpsRoot: string                          (required by sharing.mps)
 *     nvidiaDriverRoot: string                 ("/")
 *     nvidiaDevRoot: string                    (nvidiaDriverRoot; prefixes the
 *                                               host path of device specs)
 *     gdsEnabled, mofedEnabled, gdrcopyEnabled: bool (false; env NVIDIA_GDS,
 *                                               NVIDIA_MOFED, NVIDIA_GDRCOPY =
 *                                               enabled and CDI <mode>=all)
 *     useNodeFeatureAPI: bool                  (parsed; GFD only)
 *     deviceDiscoveryStrategy: auto|nvml|tegra (auto)
 *     plugin:
 *       passDeviceSpecs: bool                  (false)
 *       deviceListStrategy: one or a list of envvar, volume-mounts,
 *                           cdi-annotations, cdi-cri        (envvar)
 *       deviceIDStrategy: uuid|index           (uuid; ids advertised to the
 *                                               kubelet are always uuids)
 *       cdiAnnotationPrefix: string            ("cdi.k8s.io/")
 *       nvidiaCTKPath, containerDriverRoot: string (stored)
 *       sharedDevicesAllocationPolicy: distributed|packed (distributed)
 *     gfd: {oneshot, noTimestamp: bool, sleepInterval: duration,
 *           outputFile, machineTypeFile: string}   (parsed; GFD only)
 *   resources: {gpus: [{pattern, name}], mig: [...]}  (parsed, then
 *                                               ignored with a warning)
 *   sharing:
 *     timeSlicing | mps:
 *       renameByDefault: bool                  (false)
 *       failRequestsGreaterThanOne: bool       (false; mps: true)
 *       resources:                             (required, not empty)
 *       - name: nvidia.com/gpu                 ("gpu" means nvidia.com/gpu)
 *         replicas: 4                          (2..DP_CONFIG_REPLICAS_MAX)
 *         rename: ...                          (ignored with a warning;
 *                                               renameByDefault gives .shared)
 *         devices: all | N | [ids]             (non-"all" ignored with a warning)
 *   imex: {channelIDs: [] | [0], required: bool}
 *
 * NVIDIA ignores unknown keys; here each is a warning naming
 * file:line:col (DP_CONFIG_STRICT makes it an error). What NVIDIA refuses is
 * refused: replicas below 2, a sharing block without resources, an unknown
 * version, a bad devices entry, imex.channelIDs other than [] or [0], and
 * (dp_agent_config_validate, once flags and environment are applied) MPS
 * without mpsRoot or with migStrategy mixed. Errors: -EINVAL,
 * "<source>:<line>:<col>: config: <field path>: <rule>".
 *
 * Whether `single` fits the hardware is known only with the devices in
 * hand: dp_agent_config_check() (and dp_v1_plan_build) refuse it on a node
 * that mixes MIG and whole GPUs.
 */
#pragma once

#include "devices/device.h"

#define DP_CONFIG_REPLICAS_MAX 1024
#define DP_CONFIG_TS_RESOURCES_MAX 64

typedef enum { DP_MIG_NONE = 0, DP_MIG_SINGLE, DP_MIG_MIXED } dp_mig_strategy;

/* Bit set: several strategies may apply at once. */
typedef enum {
        DP_DLS_ENVVAR = 1u << 0,
        DP_DLS_VOLUME_MOUNTS = 1u << 1,
        DP_DLS_CDI_ANNOTATIONS = 1u << 2,
        DP_DLS_CDI_CRI = 1u << 3,
} dp_device_list_strategy;

typedef enum { DP_ID_UUID = 0, DP_ID_INDEX } dp_device_id_strategy;
typedef enum { DP_SHARED_DISTRIBUTED = 0, DP_SHARED_PACKED } dp_shared_policy;

typedef struct dp_ts_resource {
        char *name; /* "nvidia.com/gpu" */
        unsigned replicas;
        char *rename; /* full resource name after renaming, or NULL (see dp_v1) */
} dp_ts_resource;

/* dp_agent_config_load flags. */
#define DP_CONFIG_STRICT (1u << 0) /* unknown keys are errors, not warnings */
#define DP_CONFIG_WARNINGS_MAX 64

typedef struct dp_agent_config {
        char *source; /* where it came from, for messages ("built-in defaults") */
        dp_mig_strategy mig_strategy;
        bool fail_on_init_error;
        char *mps_root;    /* NULL: not set */
        char *driver_root; /* "/" */
        char *dev_root;    /* NULL: driver_root (see dp_agent_config_dev_root) */
        bool gds_enabled, mofed_enabled, gdrcopy_enabled;
        bool use_node_feature_api;
        char *device_discovery_strategy; /* "auto" */
        char *nvidia_ctk_path;           /* stored for compatibility */
        char *container_driver_root;     /* stored for compatibility */
        bool imex_channel0;              /* imex.channelIDs: [0] */
        bool imex_required;
        bool pass_device_specs;
        unsigned device_list_strategy; /* DP_DLS_* bits, never 0 */
        dp_device_id_strategy device_id_strategy;
        char *cdi_annotation_prefix;
        dp_shared_policy shared_policy;
        bool ts_rename_by_default;
        bool ts_fail_requests_greater_than_one;
        dp_ts_resource *ts_resources;
        size_t n_ts_resources;
        /* sharing.mps: when present it is NVIDIA's replicated-resources
         * block and timeSlicing is not used. */
        bool mps;
        bool mps_rename_by_default;
        bool mps_fail_requests_greater_than_one; /* default true */
        dp_ts_resource *mps_resources;
        size_t n_mps_resources;
        /* What NVIDIA would accept and ignore, one message each
         * ("<source>:<line>:<col>: <field path>: <why>"); the agent logs them. */
        char **warnings;
        size_t n_warnings;
} dp_agent_config;

/* Settings from NVIDIA's command-line flags and environment variables
 * (NVIDIA's flag names without "--": "mig-strategy", "fail-on-init-error",
 * ...), applied over the file: flag or environment over file over default.
 * `origin` names where the value came from, for messages
 * ("--mig-strategy", "MIG_STRATEGY"). Boolean values follow Go's
 * strconv.ParseBool (1 t T TRUE true True 0 f F FALSE false False; empty is
 * false); list values are comma-separated. */
typedef struct dp_config_override {
        const char *flag;
        const char *value;
        const char *origin;
} dp_config_override;

/* The flag names dp_agent_config_apply accepts (NULL-terminated), each with
 * its environment variable (NULL when NVIDIA has none). Aliases are listed
 * as their own entries. */
typedef struct dp_config_flag {
        const char *flag;
        const char *env, *env2; /* NVIDIA's variables, the first found wins */
        const char *alias_of;   /* NULL, or the flag this one stands for */
        bool boolean;
        /* A plain flag: offsetof the dp_agent_config field it sets (a bool
         * for a boolean flag, a char * otherwise); 0: a flag with its own
         * rule (a word list, a check) or an alias. */
        size_t field;
} dp_config_flag;
extern const dp_config_flag dp_config_flags[];

/* The name part of an extended resource name ("gpu" in nvidia.com/gpu), as
 * the kubelet's Register checks it (wire-protocols 2.5): 1..63 characters,
 * alphanumeric at both ends, '-', '_' or '.' inside. */
bool dp_resource_name_part_valid(const char *name);

/* Apply overrides in order (a later one for the same setting wins), then
 * dp_agent_config_validate. -EINVAL names the origin on a bad value. */
int dp_agent_config_apply(dp_agent_config *c, const dp_config_override *o, size_t n, dp_error *err);

/* NVIDIA's checks of the final settings: MPS needs mpsRoot and is refused
 * with migStrategy mixed. */
int dp_agent_config_validate(const dp_agent_config *c, dp_error *err);

/* nvidiaDevRoot, or nvidiaDriverRoot when unset: the host-side prefix of
 * every device spec. */
const char *dp_agent_config_dev_root(const dp_agent_config *c);

/* The replicated-resources block in effect (mps when present, else
 * timeSlicing), as NVIDIA chooses it. */
static inline const dp_ts_resource *dp_agent_config_replicated(const dp_agent_config *c, size_t *ret_n, bool *ret_fail1,
                                                               bool *ret_rename) {
        *ret_n = c->mps ? c->n_mps_resources : c->n_ts_resources;
        *ret_fail1 = c->mps ? c->mps_fail_requests_greater_than_one : c->ts_fail_requests_greater_than_one;
        *ret_rename = c->mps ? c->mps_rename_by_default : c->ts_rename_by_default;
        return c->mps ? c->mps_resources : c->ts_resources;
}

/* A config holding NVIDIA's defaults. NULL on OOM. */
dp_agent_config *dp_agent_config_new_default(void);
dp_agent_config *dp_agent_config_free(dp_agent_config *c);
DEFINE_FREEP(dp_agent_config, dp_agent_config_free)

/* Parse one YAML/JSON document over the defaults. */
int dp_agent_config_load(const char *buf, size_t len, const char *source, dp_agent_config **ret, dp_error *err);
int dp_agent_config_load_file(const char *path, dp_agent_config **ret, dp_error *err);
/* The same with DP_CONFIG_* flags. */
int dp_agent_config_load_flags(const char *buf, size_t len, const char *source, unsigned flags, dp_agent_config **ret,
                               dp_error *err);
int dp_agent_config_load_file_flags(const char *path, unsigned flags, dp_agent_config **ret, dp_error *err);

/* Check the config against a node's devices: `single` on a node that mixes
 * MIG-enabled and whole GPUs, or whose MIG GPUs carry more than one MIG
 * profile, or a MIG GPU without instances, is -EINVAL. A timeSlicing
 * resource naming a resource this node does not expose is not an error (one
 * config serves a whole fleet); it simply matches nothing here. */
int dp_agent_config_check(const dp_agent_config *c, const dp_device_set *s, dp_error *err);

/* Names as written in the config file. */
const char *dp_mig_strategy_to_string(dp_mig_strategy m);
