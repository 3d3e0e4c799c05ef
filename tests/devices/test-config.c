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
        ASSERT_TRUE(c->ts_resources[0].rename == NULL);
        ASSERT_STREQ(c->ts_resources[1].rename, "nvidia.com/mig-small");
        dp_agent_config_free(c);
        c = load("{\"version\": \"v1\", \"flags\": {\"plugin\": {\"deviceListStrategy\": \"volume-mounts\"}}}");
        ASSERT_EQ(c->device_list_strategy, DP_DLS_VOLUME_MOUNTS);
        dp_agent_config_free(c);
}

TEST(errors) {
        ASSERT_CONTAINS(load_err("flags: {}\n"), "config.yaml:1:1: config: version: required: v1");
        ASSERT_CONTAINS(load_err("version: v2\n"), "config.yaml:1:10: config: version: must be v1");
        ASSERT_CONTAINS(
                load_err("version: v1\nflags: {migStrategy: maybe}\n"),
                "config.yaml:2:22: config: flags.migStrategy: must be one of none, single, mixed, got \"maybe\"");
        ASSERT_CONTAINS(load_err("version: v1\nflags: {migStrateg: none}\n"), "flags.migStrateg: unknown field");
        ASSERT_CONTAINS(
                load_err("version: v1\nflags: {plugin: {deviceListStrategy: [envvar, cdi]}}\n"),
                "flags.plugin.deviceListStrategy[1]: must be one of envvar, volume-mounts, cdi-annotations, cdi-cri");
        ASSERT_CONTAINS(load_err("version: v1\nflags: {plugin: {deviceListStrategy: [envvar, envvar]}}\n"),
                        "flags.plugin.deviceListStrategy[1]: listed twice");
        ASSERT_CONTAINS(load_err("version: v1\nflags: {plugin: {deviceIDStrategy: serial}}\n"),
                        "flags.plugin.deviceIDStrategy: must be one of uuid, index");
        ASSERT_CONTAINS(load_err("version: v1\nflags: {plugin: {passDeviceSpecs: yes}}\n"),
                        "flags.plugin.passDeviceSpecs: expected boolean");
        ASSERT_CONTAINS(
                load_err("version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 0}]}}\n"),
                "sharing.timeSlicing.resources[0].replicas: must be an integer from 1 to 1024, got 0");
        ASSERT_CONTAINS(load_err("version: v1\nsharing: {timeSlicing: {resources: [{name: gpu, replicas: 2}]}}\n"),
                        "sharing.timeSlicing.resources[0].name: must be an extended resource name");
        ASSERT_CONTAINS(load_err("version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 2, "
                                 "devices: [0]}]}}\n"),
                        "sharing.timeSlicing.resources[0].devices: only \"all\" is supported");
        ASSERT_CONTAINS(load_err("version: v1\nsharing: {mps: {resources: []}}\n"),
                        "sharing.mps: MPS sharing is not supported");
        ASSERT_CONTAINS(load_err("version: v1\nsharing: {timeSlicing: {resources: [{name: a.io/gpu, replicas: 2}, "
                                 "{name: a.io/gpu, replicas: 3}]}}\n"),
                        "resources[1]: resource a.io/gpu is listed twice");
        ASSERT_CONTAINS(load_err("version: v1\nresources: {gpus: []}\n"),
                        "resources: renaming resources by pattern is not supported");
        ASSERT_CONTAINS(load_err("version: v1\nflags: {plugin: {cdiAnnotationPrefix: nope}}\n"),
                        "cdiAnnotationPrefix: must be a DNS subdomain followed by '/'");
        ASSERT_CONTAINS(load_err("version: [\n"), "config.yaml");
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
