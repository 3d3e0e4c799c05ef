/* SPDX-License-Identifier: Apache-2.0
 *
 * config.h — the agent's V1 configuration, shaped like the NVIDIA device
 * plugin's config file (version: v1) so existing files load unchanged:
 *
 *   version: v1
 *   flags:
 *     migStrategy: none|single|mixed           (default none)
 *     failOnInitError: bool                    (default true)
 *     plugin:
 *       passDeviceSpecs: bool                  (default false)
 *       deviceListStrategy: envvar | [envvar, volume-mounts, cdi-annotations, cdi-cri]
 *                                              (default envvar)
 *       deviceIDStrategy: uuid|index           (default uuid)
 *       cdiAnnotationPrefix: string            (default "cdi.k8s.io/")
 *       sharedDevicesAllocationPolicy: distributed|packed (default distributed)
 *   sharing:
 *     timeSlicing:
 *       renameByDefault: bool                  (default false)
 *       failRequestsGreaterThanOne: bool       (default false)
 *       resources:
 *       - name: nvidia.com/gpu                 (a resource name this node exposes)
 *         replicas: 4                          (2..DP_CONFIG_REPLICAS_MAX; 1 = no sharing)
 *         rename: gpu.shared                   (optional; "<name>" or "<domain>/<name>")
 *         devices: all                         (optional; only "all" is supported)
 *
 * Also accepted for compatibility and stored but without effect on the mock
 * backend: flags.nvidiaDriverRoot, nvidiaDevRoot, gdsEnabled, mofedEnabled,
 * gdrcopyEnabled, deviceDiscoveryStrategy, plugin.nvidiaCTKPath,
 * plugin.containerDriverRoot. Refused with a clear error: any other key,
 * `sharing.mps` (not supported), `resources` (renaming by pattern is not
 * supported). Errors: -EINVAL, "<source>: <field path>: <rule>".
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

typedef struct dp_agent_config {
        char *source; /* where it came from, for messages ("built-in defaults") */
        dp_mig_strategy mig_strategy;
        bool fail_on_init_error;
        bool pass_device_specs;
        unsigned device_list_strategy; /* DP_DLS_* bits, never 0 */
        dp_device_id_strategy device_id_strategy;
        char *cdi_annotation_prefix;
        dp_shared_policy shared_policy;
        bool ts_rename_by_default;
        bool ts_fail_requests_greater_than_one;
        dp_ts_resource *ts_resources;
        size_t n_ts_resources;
} dp_agent_config;

/* A config holding NVIDIA's defaults. NULL on OOM. */
dp_agent_config *dp_agent_config_new_default(void);
dp_agent_config *dp_agent_config_free(dp_agent_config *c);
DEFINE_FREEP(dp_agent_config, dp_agent_config_free)

/* Parse one YAML/JSON document over the defaults. */
int dp_agent_config_load(const char *buf, size_t len, const char *source, dp_agent_config **ret, dp_error *err);
int dp_agent_config_load_file(const char *path, dp_agent_config **ret, dp_error *err);

/* Check the config against a node's devices: `single` on a node that mixes
 * MIG-enabled and whole GPUs, or whose MIG GPUs carry more than one MIG
 * profile, or a MIG GPU without instances, is -EINVAL. A timeSlicing
 * resource naming a resource this node does not expose is not an error (one
 * config serves a whole fleet); it simply matches nothing here. */
int dp_agent_config_check(const dp_agent_config *c, const dp_device_set *s, dp_error *err);

/* Names as written in the config file. */
const char *dp_mig_strategy_to_string(dp_mig_strategy m);
