/* SPDX-License-Identifier: Apache-2.0
 * Tests for src/devices/config.c: defaults, NVIDIA-shaped files, errors,
 * the `single` check against a node's devices. */
#include "harness.h"

#include "devices/config.h"
#include "devices/profile.h"

static dp_agent_config *load(const char *y) {
        dp_error err = DP_ERROR_INIT;
        dp_agent_config *c = NULL;
        if (dp_agent_config_load(y, strlen(y), "config.yaml", &c, &err) < 0) DP_FAIL("%s", err.msg);
        return c;
}

static const char *load_err(const char *y) {
        static dp_error err;
        dp_error_clear(&err);
        dp_agent_config *c = NULL;
        if (dp_agent_config_load(y, strlen(y), "config.yaml", &c, &err) >= 0) DP_FAIL("expected failure: %s", y);
        ASSERT_TRUE(c == NULL);
        return err.msg;
}

TEST(defaults) {
        dp_agent_config *c = dp_agent_config_new_default();
        ASSERT_EQ(c->mig_strategy, DP_MIG_NONE);
        ASSERT_TRUE(c->fail_on_init_error);
        ASSERT_FALSE(c->pass_device_specs);
        ASSERT_EQ(c->device_list_strategy, DP_DLS_ENVVAR);
        ASSERT_EQ(c->device_id_strategy, DP_ID_UUID);
        ASSERT_STREQ(c->cdi_annotation_prefix, "cdi.k8s.io/");
        ASSERT_EQ(c->shared_policy, DP_SHARED_DISTRIBUTED);
        ASSERT_EQ(c->n_ts_resources, 0);
        dp_agent_config_free(c);
        c = load("version: v1\n");
        ASSERT_EQ(c->device_list_strategy, DP_DLS_ENVVAR);
        ASSERT_STREQ(c->source, "config.yaml");
        dp_agent_config_free(c);
}

TEST(full_file) {
        dp_agent_config *c = load("version: v1\n"
                                  "flags:\n"
                                  "  migStrategy: mixed\n"
                                  "  failOnInitError: false\n"
                                  "  nvidiaDriverRoot: /run/nvidia/driver\n"
                                  "  gdsEnabled: false\n"
                                  "  plugin:\n"
                                  "    passDeviceSpecs: true\n"
                                  "    deviceListStrategy: [envvar, cdi-annotations, cdi-cri]\n"
                                  "    deviceIDStrategy: index\n"
                                  "    cdiAnnotationPrefix: cdi.example.com/\n"
                                  "    sharedDevicesAllocationPolicy: packed\n"
                                  "sharing:\n"
                                  "  timeSlicing:\n"
                                  "    renameByDefault: true\n"
                                  "    failRequestsGreaterThanOne: true\n"
                                  "    resources:\n"
                                  "    - name: nvidia.com/gpu\n"
                                  "      replicas: 4\n"
                                  "    - name: nvidia.com/mig-1g.10gb\n"
                                  "      replicas: 2\n"
                                  "      rename: mig-small\n"
                                  "      devices: all\n");
        ASSERT_EQ(c->mig_strategy, DP_MIG_MIXED);
        ASSERT_FALSE(c->fail_on_init_error);
        ASSERT_TRUE(c->pass_device_specs);
        ASSERT_EQ(c->device_list_strategy, DP_DLS_ENVVAR | DP_DLS_CDI_ANNOTATIONS | DP_DLS_CDI_CRI);
        ASSERT_EQ(c->device_id_strategy, DP_ID_INDEX);
        ASSERT_STREQ(c->cdi_annotation_prefix, "cdi.example.com/");
        ASSERT_EQ(c->shared_policy, DP_SHARED_PACKED);
        ASSERT_TRUE(c->ts_rename_by_default);
        ASSERT_TRUE(c->ts_fail_requests_greater_than_one);
        ASSERT_EQ(c->n_ts_resources, 2);
        ASSERT_STREQ(c->ts_resources[0].name, "nvidia.com/gpu");
        ASSERT_EQ(c->ts_resources[0].replicas, 4);
        /* renameByDefault names every shared resource <name>.shared; an
         * explicit rename is ignored with a warning (NVIDIA) */
        ASSERT_STREQ(c->ts_resources[0].rename, "nvidia.com/gpu.shared");
        ASSERT_STREQ(c->ts_resources[1].rename, "nvidia.com/mig-1g.10gb.shared");
        ASSERT_EQ(c->n_warnings, 1);
        ASSERT_CONTAINS(c->warnings[0], "config.yaml:22:15: config: sharing.timeSlicing.resources[1].rename:");
        ASSERT_STREQ(c->driver_root, "/run/nvidia/driver");
        ASSERT_STREQ(dp_agent_config_dev_root(c), "/run/nvidia/driver");
        dp_agent_config_free(c);
        c = load("{\"version\": \"v1\", \"flags\": {\"plugin\": {\"deviceListStrategy\": \"volume-mounts\"}}}");
        ASSERT_EQ(c->device_list_strategy, DP_DLS_VOLUME_MOUNTS);
        dp_agent_config_free(c);
}

TEST(errors) {
        ASSERT_CONTAINS(load_err("version: v2\n"), "config.yaml:1:10: config: version: unknown version: v2");
        ASSERT_CONTAINS(
                load_err("version: v1\nflags: {migStrategy: maybe}\n"),
                "config.yaml:2:22: config: flags.migStrategy: must be one of none, single, mixed, got \"maybe\"");
        ASSERT_CONTAINS(
                load_err("version: v1\nflags: {plugin: {deviceListStrategy: [envvar, cdi]}}\n"),
                "flags.plugin.deviceListStrategy[1]: must be one of envvar, volume-mounts, cdi-annotations, cdi-cri");
        ASSERT_CONTAINS(load_err("version: v1\nflags: {plugin: {deviceIDStrategy: serial}}\n"),
                        "flags.plugin.deviceIDStrategy: must be one of uuid, index");
        ASSERT_CONTAINS(load_err("version: v1\nflags: {plugin: {passDeviceSpecs: yes}}\n"),
                        "flags.plugin.passDeviceSpecs: expected boolean");
        ASSERT_CONTAINS(
                load_err("version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 0}]}}\n"),
                "sharing.timeSlicing.resources[0].replicas: number of replicas must be >= 2");
        ASSERT_CONTAINS(
                load_err("version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 1}]}}\n"),
                "sharing.timeSlicing.resources[0].replicas: number of replicas must be >= 2");
        ASSERT_CONTAINS(
                load_err("version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 2.0}]}}\n"),
                "replicas: expected an integer");
        ASSERT_CONTAINS(load_err("version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu}]}}\n"),
                        "sharing.timeSlicing.resources[0].replicas: no replicas specified");
        ASSERT_CONTAINS(load_err("version: v1\nsharing: {timeSlicing: {resources: [{replicas: 2}]}}\n"),
                        "sharing.timeSlicing.resources[0].name: no resource name specified");
        ASSERT_CONTAINS(load_err("version: v1\nsharing: {timeSlicing: {renameByDefault: true}}\n"),
                        "sharing.timeSlicing.resources: no resources specified");
        ASSERT_CONTAINS(load_err("version: v1\nsharing: {mps: {resources: []}}\n"),
                        "sharing.mps.resources: no resources specified");
        ASSERT_CONTAINS(load_err("version: v1\nsharing: {timeSlicing: {resources: [{name: Bad_Name, replicas: 2}]}}\n"),
                        "incorrect format for resource name 'nvidia.com/Bad_Name'");
        ASSERT_CONTAINS(load_err("version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 2, "
                                 "devices: not-all}]}}\n"),
                        "devices set as 'not-all' but the only valid string input is 'all'");
        ASSERT_CONTAINS(load_err("version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 2, "
                                 "devices: -2}]}}\n"),
                        "sharing.timeSlicing.resources[0].devices: must be an integer from 1");
        ASSERT_CONTAINS(load_err("version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 2, "
                                 "devices: [GPU-UUID]}]}}\n"),
                        "devices[0]: unsupported device reference");
        ASSERT_CONTAINS(load_err("version: v1\nsharing: {timeSlicing: {resources: [{name: a.io/gpu, replicas: 2}, "
                                 "{name: a.io/gpu, replicas: 3}]}}\n"),
                        "resources[1]: resource a.io/gpu is listed twice");
        ASSERT_CONTAINS(load_err("version: v1\nresources: {gpus: [{name: gpu}]}\n"),
                        "resources.gpus[0]: resources must have a 'pattern' field set");
        ASSERT_CONTAINS(load_err("version: v1\nimex: {channelIDs: [1]}\n"),
                        "imex.channelIDs: invalid IMEX config: channelIDs must be [] or [0]");
        ASSERT_CONTAINS(load_err("version: v1\nflags: {gfd: {sleepInterval: soon}}\n"), "flags.gfd.sleepInterval");
        ASSERT_CONTAINS(load_err("version: v1\nflags: {plugin: {cdiAnnotationPrefix: nope}}\n"),
                        "cdiAnnotationPrefix: must be a DNS subdomain followed by '/'");
        ASSERT_CONTAINS(load_err("version: [\n"), "config.yaml");
}

/* What NVIDIA loads: a missing version, every field of config API v1, what
 * it ignores (with a warning here). */
TEST(nvidia_accepts) {
        dp_agent_config *c = load("flags: {migStrategy: mixed}\n");
        ASSERT_EQ(c->mig_strategy, DP_MIG_MIXED);
        ASSERT_EQ(c->n_warnings, 0);
        dp_agent_config_free(c);
        c = load("");
        ASSERT_EQ(c->mig_strategy, DP_MIG_NONE);
        dp_agent_config_free(c);
        c = load(
                "version: v1\n"
                "flags:\n"
                "  mpsRoot: /run/nvidia/mps\n"
                "  nvidiaDevRoot: /host\n"
                "  useNodeFeatureAPI: true\n"
                "  gdsEnabled: true\n"
                "  mofedEnabled: true\n"
                "  gdrcopyEnabled: true\n"
                "  deviceDiscoveryStrategy: nvml\n"
                "  plugin: {deviceListStrategy: [envvar, envvar], nvidiaCTKPath: /x/ctk, containerDriverRoot: /d}\n"
                "  gfd: {oneshot: true, noTimestamp: false, sleepInterval: 1h5m, outputFile: /o, machineTypeFile: /m}\n"
                "resources:\n"
                "  gpus: [{pattern: 'A100-*', name: a100}]\n"
                "  mig: [{pattern: '1g.10gb', name: mig-small}]\n"
                "sharing:\n"
                "  timeSlicing:\n"
                "    resources:\n"
                "    - {name: gpu, replicas: 2, devices: [0, '0:0', GPU-4cf8db2d-06c0-7d70-1a51-e59b25b2c16c,\n"
                "       MIG-GPU-4cf8db2d-06c0-7d70-1a51-e59b25b2c16c/0/0], rename: other}\n"
                "imex: {channelIDs: [0], required: true}\n"
                "extra: 1\n");
        ASSERT_STREQ(c->mps_root, "/run/nvidia/mps");
        ASSERT_STREQ(dp_agent_config_dev_root(c), "/host");
        ASSERT_TRUE(c->gds_enabled && c->mofed_enabled && c->gdrcopy_enabled && c->use_node_feature_api);
        ASSERT_STREQ(c->device_discovery_strategy, "nvml");
        ASSERT_EQ(c->device_list_strategy, DP_DLS_ENVVAR);
        ASSERT_STREQ(c->nvidia_ctk_path, "/x/ctk");
        ASSERT_STREQ(c->ts_resources[0].name, "nvidia.com/gpu");
        ASSERT_TRUE(c->ts_resources[0].rename == NULL);
        ASSERT_TRUE(c->imex_channel0 && c->imex_required);
        /* warnings: devices, rename, resources, the unknown key; each with its place */
        ASSERT_EQ(c->n_warnings, 4);
        ASSERT_CONTAINS(c->warnings[0], "config.yaml:21:1: config: extra: unknown field, ignored");
        ASSERT_CONTAINS(c->warnings[1], "config.yaml:13:3: config: resources: customizing the 'resources' field");
        ASSERT_CONTAINS(c->warnings[2], "config.yaml:18:41: config: sharing.timeSlicing.resources[0].devices:");
        ASSERT_CONTAINS(c->warnings[3], "sharing.timeSlicing.resources[0].rename: setting the 'rename' field");
        dp_agent_config_free(c);
        /* MPS: failRequestsGreaterThanOne defaults to true, false honoured */
        c = load("version: v1\nsharing: {mps: {resources: [{name: nvidia.com/gpu, replicas: 2}]}}\n");
        ASSERT_TRUE(c->mps && c->mps_fail_requests_greater_than_one);
        dp_agent_config_free(c);
        c = load("version: v1\nsharing: {mps: {failRequestsGreaterThanOne: false, resources: [{name: nvidia.com/gpu, "
                 "replicas: 2}]}}\n");
        ASSERT_FALSE(c->mps_fail_requests_greater_than_one);
        dp_agent_config_free(c);
}

TEST(strict_unknown_keys) {
        const char *y = "version: v1\nflags: {migStrateg: none}\n";
        dp_agent_config *c = load(y);
        ASSERT_EQ(c->n_warnings, 1);
        ASSERT_CONTAINS(c->warnings[0], "config.yaml:2:9: config: flags.migStrateg: unknown field, ignored");
        dp_agent_config_free(c);
        dp_error err = DP_ERROR_INIT;
        c = NULL;
        ASSERT_EQ(dp_agent_config_load_flags(y, strlen(y), "config.yaml", DP_CONFIG_STRICT, &c, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "config.yaml:2:9: config: flags.migStrateg: unknown field");
        ASSERT_TRUE(c == NULL);
}

/* Flags and environment over the file (NVIDIA's precedence), NVIDIA's
 * rules on the final settings. */
TEST(overrides) {
        dp_agent_config *c = load("version: v1\nflags: {migStrategy: single, failOnInitError: true, plugin: "
                                  "{deviceIDStrategy: index}}\n");
        dp_config_override o[] = {
                {"mig-strategy", "mixed", "MIG_STRATEGY"},
                {"fail-on-init-error", "false", "FAIL_ON_INIT_ERROR"},
                {"device-list-strategy", "envvar, cdi-cri", "DEVICE_LIST_STRATEGY"},
                {"nvidia-driver-root", "/run/nvidia/driver", "--nvidia-driver-root"},
                {"pass-device-specs", "", "PASS_DEVICE_SPECS"},
                {"gds-enabled", "T", "GDS_ENABLED"},
                {"imex-channel-ids", "0", "IMEX_CHANNEL_IDS"},
        };
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_agent_config_apply(c, o, ELEMENTSOF(o), &err));
        ASSERT_EQ(c->mig_strategy, DP_MIG_MIXED);
        ASSERT_FALSE(c->fail_on_init_error);
        ASSERT_EQ(c->device_list_strategy, DP_DLS_ENVVAR | DP_DLS_CDI_CRI);
        ASSERT_EQ(c->device_id_strategy, DP_ID_INDEX); /* the file's, not overridden */
        ASSERT_STREQ(dp_agent_config_dev_root(c), "/run/nvidia/driver");
        ASSERT_FALSE(c->pass_device_specs);
        ASSERT_TRUE(c->gds_enabled && c->imex_channel0);
        dp_config_override bad[] = {{"mig-strategy", "some", "--mig-strategy"}};
        ASSERT_EQ(dp_agent_config_apply(c, bad, 1, &err), -EINVAL);
        ASSERT_STREQ(err.msg, "--mig-strategy: unknown MIG strategy: some");
        dp_config_override badb[] = {{"gds-enabled", "yes", "GDS_ENABLED"}};
        ASSERT_EQ(dp_agent_config_apply(c, badb, 1, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "GDS_ENABLED: invalid value \"yes\"");
        dp_config_override badl[] = {{"device-list-strategy", "envvar,nope", "--device-list-strategy"}};
        ASSERT_EQ(dp_agent_config_apply(c, badl, 1, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "invalid --device-list-strategy option: invalid strategy: nope");
        dp_agent_config_free(c);
        /* MPS: needs mpsRoot, refused with mixed */
        c = load("version: v1\nsharing: {mps: {resources: [{name: nvidia.com/gpu, replicas: 2}]}}\n");
        ASSERT_EQ(dp_agent_config_apply(c, NULL, 0, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "using MPS requires --mps-root to be specified");
        dp_config_override mps[] = {{"mps-root", "/run/nvidia/mps", "MPS_ROOT"},
                                    {"mig-strategy", "mixed", "MIG_STRATEGY"}};
        ASSERT_EQ(dp_agent_config_apply(c, mps, 2, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "using --mig-strategy=mixed is not supported with MPS");
        mps[1].value = "none";
        ASSERT_OK(dp_agent_config_apply(c, mps, 2, &err));
        dp_agent_config_free(c);
}

TEST(single_refused_on_mixed_node) {
        dp_error err = DP_ERROR_INIT;
        dp_device_set *s = NULL;
        ASSERT_OK(dp_profile_builtin("a100-mixed", "node-a", &s, &err));
        dp_agent_config *c = load("version: v1\nflags: {migStrategy: single}\n");
        ASSERT_EQ(dp_agent_config_check(c, s, &err), -EINVAL);
        ASSERT_STREQ(err.msg, "config.yaml: flags.migStrategy: single cannot be used on node node-a, which mixes 4 "
                              "MIG-enabled GPUs (gpu-0, ...) and 4 whole GPUs (gpu-4, ...); use mixed or none");
        c->mig_strategy = DP_MIG_MIXED;
        ASSERT_OK(dp_agent_config_check(c, s, &err));
        c->mig_strategy = DP_MIG_NONE;
        ASSERT_OK(dp_agent_config_check(c, s, &err));
        dp_agent_config_free(c);
        dp_device_set_free(s);
}

TEST(single_needs_one_profile) {
        const char *y = "apiVersion: devplane.io/v1alpha1\nkind: DeviceProfile\nmetadata: {name: t}\n"
                        "spec:\n  domain: nvidia.com\n  devices:\n"
                        "  - mig: {instances: [{profile: 1g.10gb, count: 7}]}\n"
                        "  - mig: {instances: [{profile: 3g.40gb, count: 2}]}\n";
        dp_error err = DP_ERROR_INIT;
        dp_device_set *s = NULL;
        ASSERT_OK(dp_profile_load(y, strlen(y), "t.yaml", "n1", &s, &err));
        dp_agent_config *c = load("version: v1\nflags: {migStrategy: single}\n");
        ASSERT_EQ(dp_agent_config_check(c, s, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "single requires one MIG profile on the node, but node n1 has 1g.10gb and 3g.40gb");
        dp_agent_config_free(c);
        dp_device_set_free(s);
}
