/* SPDX-License-Identifier: Apache-2.0
 *
 * profile.h — the mock backend: hardware described as data.
 *
 * A profile is a YAML/JSON document `kind: DeviceProfile`,
 * `apiVersion: devplane.io/v1alpha1` (format in docs/devices.md). Loading a
 * profile for a node name instantiates it: devices are expanded, ids and
 * device nodes filled from templates, uuids derived from the node name
 * (dp_device_uuid_derive), so two nodes with the same profile differ only in
 * uuids and a node keeps its uuids across restarts.
 *
 * Built-in profiles are the files under profiles/ in the source tree,
 * embedded into the library at build time:
 *   example-gpu   8 GPUs gpu-0..gpu-7 compatible with the DRA example driver
 *                 (driver gpu.example.com, domain example.com)
 *   a100-mixed    8 A100-80GB, GPUs 0-3 in MIG mode with 7 x 1g.10gb each,
 *                 NUMA 0 for 0-3 and 1 for 4-7, NVLink between all
 *   a100-80gb-8   8 whole A100-80GB (DP_PROFILE_DEFAULT, the agent's default)
 *   a100-dual-mode 8 A100-80GB, each offering MIG mode (7 x 10Gi, group mig)
 *                 and vGPU mode (4 x 20Gi or the whole GPU, group vgpu) over
 *                 one memory counter set (spec.partitionModes, 1.37)
 *
 * Errors: -EINVAL with err "<source>: <field path>: <rule>" (for example
 * "my.yaml: spec.gpus[1].numaNode: must be an integer from -1 to 63"),
 * -E2BIG when a DP_DEVICES_* cap is exceeded, -ENOENT for an unknown built-in
 * name, -ENOMEM. All functions are pure except dp_profile_load_file, which
 * reads one file.
 */
#pragma once

#include "devices/device.h"

#define DP_PROFILE_API_VERSION "devplane.io/v1alpha1"
#define DP_PROFILE_KIND "DeviceProfile"
#define DP_PROFILE_DEFAULT "a100-80gb-8"

/* Load a profile document from memory for `node_name` (non-empty). `source`
 * names the input in errors. The buffer must hold exactly one document. */
int dp_profile_load(const char *buf, size_t len, const char *source, const char *node_name, dp_device_set **ret,
                    dp_error *err);
int dp_profile_load_file(const char *path, const char *node_name, dp_device_set **ret, dp_error *err);

/* A built-in profile by name. */
int dp_profile_builtin(const char *name, const char *node_name, dp_device_set **ret, dp_error *err);
/* "name" is a built-in profile name, or else a path: load it. */
int dp_profile_resolve(const char *name_or_path, const char *node_name, dp_device_set **ret, dp_error *err);

/* The built-in profiles: NULL-terminated array of names, and the raw text
 * of one (NULL if unknown; `ret_len` may be NULL). */
const char *const *dp_profile_builtin_names(void);
const char *dp_profile_builtin_text(const char *name, size_t *ret_len);
