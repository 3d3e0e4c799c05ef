/* SPDX-License-Identifier: Apache-2.0
 * Tests for src/devices/v1-*.c: resource names (scenario 1's MIG
 * strategies, scenario 2's time-slicing counts), Allocate responses,
 * GetPreferredAllocation, health (scenario 3). */
#include "harness.h"

#include "devices/health.h"
#include "devices/profile.h"
#include "devices/v1.h"

static dp_device_set *profile(const char *name) {
        dp_device_set *s = NULL;
        dp_error err = DP_ERROR_INIT;
        if (dp_profile_builtin(name, "node-a", &s, &err) < 0) DP_FAIL("%s", err.msg);
        return s;
}

static dp_device_set *n_gpus(unsigned n) {
        char y[512];
        snprintf(y, sizeof y,
                 "apiVersion: devplane.io/v1alpha1\nkind: DeviceProfile\nmetadata: {name: small}\n"
                 "spec:\n  domain: nvidia.com\n  commonDeviceNodes: [/dev/nvidiactl]\n"
                 "  devices:\n  - count: %u\n    deviceNodes: [\"/dev/nvidia{index}\"]\n",
                 n);
        dp_device_set *s = NULL;
        dp_error err = DP_ERROR_INIT;
        if (dp_profile_load(y, strlen(y), "small.yaml", "node-a", &s, &err) < 0) DP_FAIL("%s", err.msg);
        return s;
}

static dp_agent_config *config(const char *y) {
        dp_agent_config *c = NULL;
        dp_error err = DP_ERROR_INIT;
        if (dp_agent_config_load(y, strlen(y), "config.yaml", &c, &err) < 0) DP_FAIL("%s", err.msg);
        return c;
}

static dp_v1_plan *plan(const dp_device_set *s, const dp_agent_config *c) {
        dp_v1_plan *p = NULL;
        dp_error err = DP_ERROR_INIT;
        if (dp_v1_plan_build(s, c, &p, &err) < 0) DP_FAIL("%s", err.msg);
        return p;
}

static size_t count(const dp_v1_plan *p, const char *name) {
        const dp_v1_resource *r = dp_v1_plan_find(p, name);
        return r ? r->n_devices : 0;
}

/* The index form of an advertised id ("3", "0:2", "1::3"): tests written
 * with indices translate to and from the uuids the plan advertises. */
static void index_form(const dp_device_set *s, const dp_v1_resource *r, const dp_v1_device *v, char *buf, size_t n) {
        const dp_hw_device *d = &s->devices[v->gpu];
        int k = v->mig < 0 ? snprintf(buf, n, "%u", d->index)
                           : snprintf(buf, n, "%u:%u", d->index, d->migs[v->mig].index);
        if (r->replicas > 1) snprintf(buf + k, n - (size_t)k, "::%u", v->replica);
}

static const char *adv(const dp_v1_plan *p, const dp_device_set *s, const char *res, const char *idx) {
        const dp_v1_resource *r = dp_v1_plan_find(p, res);
        char buf[64];
        for (size_t i = 0; r && i < r->n_devices; i++) {
                index_form(s, r, &r->devices[i], buf, sizeof buf);
                if (streq(buf, idx)) return r->devices[i].id;
        }
        return idx;
}

static const char **advs(const dp_v1_plan *p, const dp_device_set *s, const char *res, const char *const *in,
                         size_t n) {
        static const char *out[4][16];
        static unsigned turn;
        const char **o = out[turn++ % 4];
        for (size_t i = 0; i < n && i < 16; i++)
                o[i] = adv(p, s, res, in[i]);
        return o;
}

static char **prefer_ix(const dp_v1_plan *p, const dp_device_set *s, const dp_agent_config *c, const char *res,
                        const char *const *avail, size_t na, const char *const *must, size_t nm, size_t size) {
        char **out = NULL;
        dp_error err = DP_ERROR_INIT;
        const char **a = advs(p, s, res, avail, na), **m = must ? advs(p, s, res, must, nm) : NULL;
        if (dp_v1_preferred_allocation(p, s, c, res, a, na, m, nm, size, &out, &err) < 0) DP_FAIL("%s", err.msg);
        const dp_v1_resource *r = dp_v1_plan_find(p, res);
        for (char **q = out; *q; q++) {
                const dp_v1_device *v = dp_v1_resource_find(r, *q);
                if (!v) continue;
                char buf[64];
                index_form(s, r, v, buf, sizeof buf);
                free(*q);
                *q = strdup(buf);
        }
        return out;
}

TEST(scenario1_mixed) {
        dp_device_set *s = profile("a100-mixed");
        dp_agent_config *c = config("version: v1\nflags: {migStrategy: mixed}\n");
        dp_v1_plan *p = plan(s, c);
        ASSERT_EQ(p->n_resources, 2);
        ASSERT_STREQ(p->resources[0].name, "nvidia.com/gpu");
        ASSERT_STREQ(p->resources[1].name, "nvidia.com/mig-1g.10gb");
        ASSERT_EQ(count(p, "nvidia.com/gpu"), 4);
        ASSERT_EQ(count(p, "nvidia.com/mig-1g.10gb"), 28);
        const dp_v1_resource *g = dp_v1_plan_find(p, "nvidia.com/gpu");
        ASSERT_STREQ(g->devices[0].id, s->devices[4].uuid);
        ASSERT_EQ(g->devices[0].numa_node, 1);
        const dp_v1_resource *m = dp_v1_plan_find(p, "nvidia.com/mig-1g.10gb");
        ASSERT_STREQ(m->devices[8].id, s->devices[1].migs[1].uuid);
        ASSERT_EQ(m->devices[8].numa_node, 0);
        ASSERT_EQ(dp_v1_resource_count_healthy(m), 28);

        /* A pod asking mig-1g.10gb: 1 gets exactly that instance, env names only it. */
        dp_v1_container_response *resp = NULL;
        dp_error err = DP_ERROR_INIT;
        const char *ids[] = {m->devices[8].id};
        ASSERT_OK(dp_v1_allocate(p, s, c, "nvidia.com/mig-1g.10gb", ids, 1, &resp, &err));
        ASSERT_EQ(resp->n_envs, 1);
        ASSERT_STREQ(resp->envs[0].key, "NVIDIA_VISIBLE_DEVICES");
        ASSERT_STREQ(resp->envs[0].value, s->devices[1].migs[1].uuid);
        ASSERT_EQ(resp->n_devices, 0);
        ASSERT_EQ(resp->n_mounts, 0);
        dp_v1_container_response_free(resp);
        dp_v1_plan_free(p);
        dp_agent_config_free(c);
        dp_device_set_free(s);
}

TEST(scenario1_none_and_single) {
        dp_device_set *s = profile("a100-mixed");
        dp_agent_config *c = config("version: v1\nflags: {migStrategy: none}\n");
        dp_v1_plan *p = plan(s, c);
        ASSERT_EQ(p->n_resources, 1);
        ASSERT_EQ(count(p, "nvidia.com/gpu"), 8);
        dp_v1_plan_free(p);
        c->mig_strategy = DP_MIG_SINGLE;
        dp_error err = DP_ERROR_INIT;
        p = NULL;
        ASSERT_EQ(dp_v1_plan_build(s, c, &p, &err), -EINVAL);
        ASSERT_TRUE(p == NULL);
        ASSERT_CONTAINS(err.msg, "single cannot be used on node node-a");
        dp_agent_config_free(c);
        dp_device_set_free(s);
}

TEST(single_on_all_mig_node) {
        const char *y = "apiVersion: devplane.io/v1alpha1\nkind: DeviceProfile\nmetadata: {name: t}\n"
                        "spec:\n  domain: nvidia.com\n  devices:\n"
                        "  - count: 2\n    mig: {instances: [{profile: 3g.40gb, count: 2}]}\n";
        dp_device_set *s = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_profile_load(y, strlen(y), "t.yaml", "n", &s, &err));
        dp_agent_config *c = config("version: v1\nflags: {migStrategy: single, plugin: {deviceIDStrategy: index}}\n");
        dp_v1_plan *p = plan(s, c);
        ASSERT_EQ(p->n_resources, 1);
        ASSERT_EQ(count(p, "nvidia.com/gpu"), 4);
        /* deviceIDStrategy index: the kubelet still sees uuids (as with NVIDIA) */
        ASSERT_STREQ(p->resources[0].devices[3].id, s->devices[1].migs[1].uuid);
        dp_v1_plan_free(p);
        dp_agent_config_free(c);
        dp_device_set_free(s);
}

TEST(scenario2_time_slicing) {
        dp_agent_config *c = config("version: v1\nsharing:\n  timeSlicing:\n    resources:\n"
                                    "    - {name: nvidia.com/gpu, replicas: 4}\n");
        dp_device_set *one = n_gpus(1), *two = n_gpus(2);
        dp_v1_plan *p1 = plan(one, c), *p2 = plan(two, c);
        ASSERT_EQ(count(p1, "nvidia.com/gpu"), 4);
        ASSERT_EQ(count(p2, "nvidia.com/gpu"), 8);
        const dp_v1_resource *r = &p2->resources[0];
        char want[96];
        snprintf(want, sizeof want, "%s::3", two->devices[1].uuid);
        ASSERT_STREQ(r->devices[7].id, want);
        ASSERT_EQ(r->devices[7].replica, 3);
        ASSERT_EQ(r->devices[7].gpu, 1);
        /* Two replicas of one GPU in one request: the env names the GPU once. */
        dp_v1_container_response *resp = NULL;
        dp_error err = DP_ERROR_INIT;
        const char *ids[] = {r->devices[5].id, r->devices[4].id};
        ASSERT_OK(dp_v1_allocate(p2, two, c, "nvidia.com/gpu", ids, 2, &resp, &err));
        ASSERT_STREQ(resp->envs[0].value, two->devices[1].uuid);
        dp_v1_container_response_free(resp);
        dp_v1_plan_free(p1);
        dp_v1_plan_free(p2);

        /* renameByDefault and failRequestsGreaterThanOne. */
        c->ts_rename_by_default = true;
        c->ts_fail_requests_greater_than_one = true;
        p2 = plan(two, c);
        ASSERT_EQ(count(p2, "nvidia.com/gpu"), 0);
        ASSERT_EQ(count(p2, "nvidia.com/gpu.shared"), 8);
        r = &p2->resources[0];
        ids[0] = r->devices[5].id;
        ids[1] = r->devices[4].id;
        ASSERT_EQ(dp_v1_allocate(p2, two, c, "nvidia.com/gpu.shared", ids, 2, &resp, &err), -EINVAL);
        ASSERT_STREQ(err.msg, "request for 'nvidia.com/gpu.shared: 2' too large: maximum request size for shared "
                              "resources is 1");
        ASSERT_OK(dp_v1_allocate(p2, two, c, "nvidia.com/gpu.shared", ids, 1, &resp, &err));
        dp_v1_container_response_free(resp);
        dp_v1_plan_free(p2);
        dp_device_set_free(one);
        dp_device_set_free(two);
        dp_agent_config_free(c);
}

TEST(time_slicing_mig_and_rename) {
        dp_device_set *s = profile("a100-mixed");
        dp_agent_config *c =
                config("version: v1\nflags: {migStrategy: mixed}\nsharing:\n  timeSlicing:\n"
                       "    resources:\n    - {name: nvidia.com/mig-1g.10gb, replicas: 2, rename: mig-shared}\n"
                       "    - {name: nvidia.com/gpu, replicas: 3}\n"
                       "    - {name: nvidia.com/mig-7g.80gb, replicas: 3}\n");
        /* `rename` is ignored with a warning, as NVIDIA's plugin does */
        ASSERT_EQ(c->n_warnings, 1);
        ASSERT_CONTAINS(c->warnings[0], "config.yaml:6:59:");
        ASSERT_CONTAINS(c->warnings[0], "sharing.timeSlicing.resources[0].rename: setting the 'rename' field");
        dp_v1_plan *p = plan(s, c);
        ASSERT_EQ(count(p, "nvidia.com/mig-shared"), 0);
        ASSERT_EQ(count(p, "nvidia.com/mig-1g.10gb"), 56);
        ASSERT_EQ(count(p, "nvidia.com/gpu"), 12);
        dp_v1_plan_free(p);
        /* Renaming onto another resource's name is refused. */
        free(c->ts_resources[0].rename);
        c->ts_resources[0].rename = strdup("nvidia.com/gpu");
        dp_error err = DP_ERROR_INIT;
        ASSERT_EQ(dp_v1_plan_build(s, c, &p, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "would both be advertised as nvidia.com/gpu");
        dp_agent_config_free(c);
        dp_device_set_free(s);
}

TEST(allocate_strategies) {
        dp_device_set *s = profile("a100-mixed");
        dp_agent_config *c = config("version: v1\nflags:\n  migStrategy: mixed\n  plugin:\n"
                                    "    passDeviceSpecs: true\n    deviceIDStrategy: index\n"
                                    "    deviceListStrategy: [volume-mounts, cdi-annotations, cdi-cri]\n");
        dp_v1_plan *p = plan(s, c);
        dp_v1_container_response *resp = NULL;
        dp_error err = DP_ERROR_INIT;
        const char *ix[] = {"2:5", "0:1"};
        const char **ids = advs(p, s, "nvidia.com/mig-1g.10gb", ix, 2);
        ASSERT_TRUE(startswith(ids[0], "MIG-"));
        ASSERT_OK(dp_v1_allocate(p, s, c, "nvidia.com/mig-1g.10gb", ids, 2, &resp, &err));
        ASSERT_EQ(resp->n_envs, 1);
        ASSERT_STREQ(resp->envs[0].value, "/var/run/nvidia-container-devices");
        ASSERT_EQ(resp->n_mounts, 2);
        ASSERT_STREQ(resp->mounts[0].host_path, "/dev/null");
        ASSERT_STREQ(resp->mounts[0].container_path, "/var/run/nvidia-container-devices/2:5");
        ASSERT_STREQ(resp->mounts[1].container_path, "/var/run/nvidia-container-devices/0:1");
        ASSERT_EQ(resp->n_cdi_devices, 2);
        /* NVIDIA's CDI names and annotation key for an nvidia.com profile */
        ASSERT_STREQ(resp->cdi_devices[0], "k8s.device-plugin.nvidia.com/gpu=2:5");
        ASSERT_STREQ(resp->cdi_devices[1], "k8s.device-plugin.nvidia.com/gpu=0:1");
        ASSERT_EQ(resp->n_annotations, 1);
        ASSERT_TRUE(startswith(resp->annotations[0].key, "cdi.k8s.io/nvidia-device-plugin_"));
        ASSERT_EQ(strlen(resp->annotations[0].key), strlen("cdi.k8s.io/nvidia-device-plugin_") + 36);
        ASSERT_STREQ(resp->annotations[0].value,
                     "k8s.device-plugin.nvidia.com/gpu=2:5,k8s.device-plugin.nvidia.com/gpu=0:1");
        /* common nodes, then parent + MIG cap nodes of each instance */
        ASSERT_EQ(resp->n_devices, 3 + 2 + 2);
        ASSERT_STREQ(resp->devices[0].host_path, "/dev/nvidiactl");
        ASSERT_STREQ(resp->devices[3].host_path, "/dev/nvidia2");
        ASSERT_STREQ(resp->devices[4].host_path, "/dev/nvidia-caps/nvidia-cap-gpu2-mig5");
        ASSERT_STREQ(resp->devices[4].container_path, "/dev/nvidia-caps/nvidia-cap-gpu2-mig5");
        ASSERT_STREQ(resp->devices[4].permissions, "rw");
        /* same request, same answer (the annotation key is deterministic) */
        dp_v1_container_response *again = NULL;
        ASSERT_OK(dp_v1_allocate(p, s, c, "nvidia.com/mig-1g.10gb", ids, 2, &again, &err));
        ASSERT_STREQ(again->annotations[0].key, resp->annotations[0].key);
        dp_v1_container_response_free(again);
        dp_v1_container_response_free(resp);
        dp_v1_plan_free(p);
        dp_agent_config_free(c);
        dp_device_set_free(s);
}

/* What NVIDIA's Allocate adds: GDRCopy/GDS/MOFED env and CDI devices, device
 * specs under nvidiaDevRoot, nothing but CDI when every strategy is a cdi-*
 * one, MPS's pipe directory and mounts. */
TEST(allocate_nvidia_extras) {
        dp_device_set *s = profile("a100-mixed");
        dp_agent_config *c = config("version: v1\nflags:\n  gdsEnabled: true\n  mofedEnabled: true\n"
                                    "  gdrcopyEnabled: true\n  nvidiaDriverRoot: /run/nvidia/driver\n"
                                    "  plugin: {passDeviceSpecs: true, deviceListStrategy: [envvar, cdi-cri]}\n");
        dp_v1_plan *p = plan(s, c);
        dp_v1_container_response *resp = NULL;
        dp_error err = DP_ERROR_INIT;
        const char *ids[] = {s->devices[5].uuid};
        ASSERT_OK(dp_v1_allocate(p, s, c, "nvidia.com/gpu", ids, 1, &resp, &err));
        ASSERT_EQ(resp->n_envs, 4); /* sorted by key */
        ASSERT_STREQ(resp->envs[0].key, "NVIDIA_GDRCOPY");
        ASSERT_STREQ(resp->envs[0].value, "enabled");
        ASSERT_STREQ(resp->envs[1].key, "NVIDIA_GDS");
        ASSERT_STREQ(resp->envs[2].key, "NVIDIA_MOFED");
        ASSERT_STREQ(resp->envs[3].value, s->devices[5].uuid);
        ASSERT_EQ(resp->n_cdi_devices, 4);
        ASSERT_STREQ(resp->cdi_devices[1], "k8s.device-plugin.nvidia.com/gdrcopy=all");
        ASSERT_STREQ(resp->cdi_devices[2], "k8s.device-plugin.nvidia.com/gds=all");
        ASSERT_STREQ(resp->cdi_devices[3], "k8s.device-plugin.nvidia.com/mofed=all");
        /* nvidiaDevRoot defaults to nvidiaDriverRoot and prefixes host paths */
        ASSERT_STREQ(resp->devices[0].container_path, "/dev/nvidiactl");
        ASSERT_STREQ(resp->devices[0].host_path, "/run/nvidia/driver/dev/nvidiactl");
        dp_v1_container_response_free(resp);
        /* CDI only: no NVIDIA_VISIBLE_DEVICES, no device specs */
        c->device_list_strategy = DP_DLS_CDI_CRI;
        ASSERT_OK(dp_v1_allocate(p, s, c, "nvidia.com/gpu", ids, 1, &resp, &err));
        ASSERT_EQ(resp->n_envs, 3);
        ASSERT_EQ(resp->n_devices, 0);
        dp_v1_container_response_free(resp);
        dp_v1_plan_free(p);
        dp_agent_config_free(c);
        /* MPS: replicas, CUDA_MPS_PIPE_DIRECTORY and the pipe and shm mounts */
        c = config("version: v1\nflags: {mpsRoot: /run/nvidia/mps}\n"
                   "sharing: {mps: {resources: [{name: nvidia.com/gpu, replicas: 4}]}}\n");
        p = plan(s, c);
        ASSERT_EQ(count(p, "nvidia.com/gpu"), 32);
        const dp_v1_resource *r = &p->resources[0];
        const char *two[] = {r->devices[0].id, r->devices[1].id};
        ASSERT_EQ(dp_v1_allocate(p, s, c, "nvidia.com/gpu", two, 2, &resp, &err),
                  -EINVAL); /* failRequestsGreaterThanOne */
        ASSERT_OK(dp_v1_allocate(p, s, c, "nvidia.com/gpu", two, 1, &resp, &err));
        ASSERT_STREQ(resp->envs[0].key, "CUDA_MPS_PIPE_DIRECTORY");
        ASSERT_STREQ(resp->envs[0].value, "/mps/nvidia.com/gpu/pipe");
        ASSERT_EQ(resp->n_mounts, 2);
        ASSERT_STREQ(resp->mounts[0].host_path, "/run/nvidia/mps/nvidia.com/gpu/pipe");
        ASSERT_STREQ(resp->mounts[1].container_path, "/dev/shm");
        ASSERT_STREQ(resp->mounts[1].host_path, "/run/nvidia/mps/shm");
        dp_v1_container_response_free(resp);
        dp_v1_plan_free(p);
        /* MPS over MIG devices is refused (NVIDIA) */
        c->mig_strategy = DP_MIG_MIXED;
        free(c->mps_resources[0].name);
        c->mps_resources[0].name = strdup("nvidia.com/mig-1g.10gb");
        p = NULL;
        ASSERT_EQ(dp_v1_plan_build(s, c, &p, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "sharing using MPS is not supported for MIG devices");
        dp_agent_config_free(c);
        dp_device_set_free(s);
}

TEST(allocate_errors) {
        dp_device_set *s = n_gpus(2);
        dp_agent_config *c = config("version: v1\n");
        dp_v1_plan *p = plan(s, c);
        dp_v1_container_response *resp = NULL;
        dp_error err = DP_ERROR_INIT;
        const char *bad[] = {"GPU-nope"};
        ASSERT_EQ(dp_v1_allocate(p, s, c, "nvidia.com/gpu", bad, 1, &resp, &err), -EINVAL);
        ASSERT_STREQ(err.msg, "resource nvidia.com/gpu: unknown device GPU-nope");
        ASSERT_EQ(dp_v1_allocate(p, s, c, "nvidia.com/tpu", bad, 1, &resp, &err), -EINVAL);
        ASSERT_STREQ(err.msg, "unknown resource nvidia.com/tpu");
        ASSERT_EQ(dp_v1_allocate(p, s, c, "nvidia.com/gpu", bad, 0, &resp, &err), -EINVAL);
        const char *twice[] = {s->devices[0].uuid, s->devices[0].uuid};
        ASSERT_EQ(dp_v1_allocate(p, s, c, "nvidia.com/gpu", twice, 2, &resp, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "requested twice");
        /* scenario 3/6: unhealthy between bind and Allocate */
        dp_health_file *f = NULL;
        ASSERT_OK(dp_health_file_parse("gpu-1 unhealthy\n", 16, "health", &f, &err));
        ASSERT_EQ(dp_health_apply(s, f, "health", &err), 1);
        ASSERT_EQ(dp_v1_plan_update_health(p, s), 1);
        ASSERT_EQ(p->resources[0].generation, 1);
        ASSERT_EQ(dp_v1_resource_count(&p->resources[0]), 2);
        ASSERT_EQ(dp_v1_resource_count_healthy(&p->resources[0]), 1);
        const char *sick[] = {s->devices[1].uuid};
        ASSERT_EQ(dp_v1_allocate(p, s, c, "nvidia.com/gpu", sick, 1, &resp, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "is unhealthy");
        /* recovery */
        ASSERT_EQ(dp_health_apply(s, NULL, "health", &err), 1);
        ASSERT_EQ(dp_v1_plan_update_health(p, s), 1);
        ASSERT_EQ(dp_v1_resource_count_healthy(&p->resources[0]), 2);
        ASSERT_EQ(dp_v1_plan_update_health(p, s), 0);
        dp_health_file_free(f);
        dp_v1_plan_free(p);
        dp_agent_config_free(c);
        dp_device_set_free(s);
}

static char **prefer(const dp_v1_plan *p, const dp_device_set *s, const dp_agent_config *c, const char *res,
                     const char *const *avail, size_t na, const char *const *must, size_t nm, size_t size) {
        char **out = NULL;
        dp_error err = DP_ERROR_INIT;
        if (dp_v1_preferred_allocation(p, s, c, res, avail, na, must, nm, size, &out, &err) < 0) DP_FAIL("%s", err.msg);
        return out;
}

TEST(preferred_numa_and_nvlink) {
        /* 8 GPUs, NUMA 0: 0-3, NUMA 1: 4-7; NVLink pairs (0,1) (2,3) (4,5) (6,7) only. */
        const char *y = "apiVersion: devplane.io/v1alpha1\nkind: DeviceProfile\nmetadata: {name: t}\n"
                        "spec:\n  domain: nvidia.com\n  nvlink: [[0,1],[2,3],[4,5],[6,7]]\n  devices:\n"
                        "  - {count: 4, numaNode: 0}\n  - {count: 4, numaNode: 1}\n";
        dp_device_set *s = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_profile_load(y, strlen(y), "t.yaml", "n", &s, &err));
        dp_agent_config *c = config("version: v1\nflags: {plugin: {deviceIDStrategy: index}}\n");
        dp_v1_plan *p = plan(s, c);
        /* available 1,2,4,5,6: two GPUs -> the NVLinked pair on one NUMA node (4,5) */
        const char *avail[] = {"6", "1", "2", "4", "5"};
        char **out = prefer_ix(p, s, c, "nvidia.com/gpu", avail, 5, NULL, 0, 2);
        ASSERT_STREQ(out[0], "4");
        ASSERT_STREQ(out[1], "5");
        ASSERT_TRUE(out[2] == NULL);
        dp_v1_ids_free(out);
        /* three: stay on NUMA 1 (4,5,6) rather than mixing */
        out = prefer_ix(p, s, c, "nvidia.com/gpu", avail, 5, NULL, 0, 3);
        ASSERT_STREQ(out[0], "4");
        ASSERT_STREQ(out[1], "5");
        ASSERT_STREQ(out[2], "6");
        dp_v1_ids_free(out);
        /* must include 2: its NUMA node, then (1) */
        const char *must[] = {"2"};
        out = prefer_ix(p, s, c, "nvidia.com/gpu", avail, 5, must, 1, 2);
        ASSERT_STREQ(out[0], "1");
        ASSERT_STREQ(out[1], "2");
        dp_v1_ids_free(out);
        /* all available, 2: first NVLinked pair */
        const char *all[] = {"0", "1", "2", "3", "4", "5", "6", "7"};
        out = prefer_ix(p, s, c, "nvidia.com/gpu", all, 8, NULL, 0, 2);
        ASSERT_STREQ(out[0], "0");
        ASSERT_STREQ(out[1], "1");
        dp_v1_ids_free(out);
        /* errors */
        const char *nope[] = {"9"};
        ASSERT_EQ(dp_v1_preferred_allocation(p, s, c, "nvidia.com/gpu", advs(p, s, "nvidia.com/gpu", avail, 5), 5, nope,
                                             1, 2, &out, &err),
                  -EINVAL);
        ASSERT_CONTAINS(err.msg, "unknown must-include device 9");
        const char *notavail[] = {"0"};
        ASSERT_EQ(dp_v1_preferred_allocation(p, s, c, "nvidia.com/gpu", advs(p, s, "nvidia.com/gpu", avail, 5), 5,
                                             advs(p, s, "nvidia.com/gpu", notavail, 1), 1, 2, &out, &err),
                  -EINVAL);
        ASSERT_CONTAINS(err.msg, "is not among the available");
        ASSERT_EQ(dp_v1_preferred_allocation(p, s, c, "nvidia.com/gpu", advs(p, s, "nvidia.com/gpu", avail, 5), 5, NULL,
                                             0, 6, &out, &err),
                  -EINVAL);
        ASSERT_CONTAINS(err.msg, "cannot choose 6 of 5");
        dp_v1_plan_free(p);
        dp_agent_config_free(c);
        dp_device_set_free(s);
}

TEST(preferred_mig_same_parent) {
        dp_device_set *s = profile("a100-mixed");
        dp_agent_config *c = config("version: v1\nflags: {migStrategy: mixed, plugin: {deviceIDStrategy: index}}\n");
        dp_v1_plan *p = plan(s, c);
        const char *avail[] = {"0:6", "1:0", "1:1", "2:0", "3:3", "3:4", "3:5"};
        char **out = prefer_ix(p, s, c, "nvidia.com/mig-1g.10gb", avail, 7, NULL, 0, 3);
        ASSERT_STREQ(out[0], "3:3");
        ASSERT_STREQ(out[1], "3:4");
        ASSERT_STREQ(out[2], "3:5");
        dp_v1_ids_free(out);
        dp_v1_plan_free(p);
        dp_agent_config_free(c);
        dp_device_set_free(s);
}

TEST(preferred_replicas) {
        dp_device_set *s = n_gpus(2);
        dp_agent_config *c = config("version: v1\nflags: {plugin: {deviceIDStrategy: index}}\n"
                                    "sharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 4}]}}\n");
        dp_v1_plan *p = plan(s, c);
        /* GPU 0 has 1 replica taken elsewhere: distributed takes GPU 1 first, then alternates. */
        const char *avail[] = {"0::1", "0::2", "0::3", "1::0", "1::1", "1::2", "1::3"};
        char **out = prefer_ix(p, s, c, "nvidia.com/gpu", avail, 7, NULL, 0, 2);
        ASSERT_STREQ(out[0], "0::1");
        ASSERT_STREQ(out[1], "1::0");
        dp_v1_ids_free(out);
        out = prefer_ix(p, s, c, "nvidia.com/gpu", avail, 7, NULL, 0, 1);
        ASSERT_STREQ(out[0], "1::0");
        dp_v1_ids_free(out);
        /* packed: onto the GPU already in use */
        c->shared_policy = DP_SHARED_PACKED;
        out = prefer_ix(p, s, c, "nvidia.com/gpu", avail, 7, NULL, 0, 2);
        ASSERT_STREQ(out[0], "0::1");
        ASSERT_STREQ(out[1], "0::2");
        dp_v1_ids_free(out);
        const char *must[] = {"1::3"};
        out = prefer_ix(p, s, c, "nvidia.com/gpu", avail, 7, must, 1, 2);
        ASSERT_STREQ(out[0], "1::0");
        ASSERT_STREQ(out[1], "1::3");
        dp_v1_ids_free(out);
        dp_v1_plan_free(p);
        dp_agent_config_free(c);
        dp_device_set_free(s);
}

/* The id index built with the plan (issue 13: no per-call index): every
 * advertised id of a 1,024-device resource (128 GPUs x 8 replicas) is found
 * at its own position, near misses are not, and Allocate/GetPreferred use it
 * past the first 64 devices (the "requested twice" bitmap). */
TEST(resource_id_index) {
        dp_device_set *s = n_gpus(128);
        dp_agent_config *c = config("version: v1\nsharing:\n  timeSlicing:\n    resources:\n"
                                    "    - {name: nvidia.com/gpu, replicas: 8}\n");
        dp_v1_plan *p = plan(s, c);
        const dp_v1_resource *r = dp_v1_plan_find(p, "nvidia.com/gpu");
        ASSERT_TRUE(r && r->n_devices == 1024 && r->by_id);
        for (size_t i = 1; i < r->n_devices; i++)
                ASSERT_TRUE(strcmp(r->by_id[i - 1]->id, r->by_id[i]->id) < 0);
        for (size_t i = 0; i < r->n_devices; i++)
                ASSERT_TRUE(dp_v1_resource_find(r, r->devices[i].id) == &r->devices[i]);
        char miss[128];
        snprintf(miss, sizeof miss, "%sx", r->devices[1000].id);
        ASSERT_TRUE(!dp_v1_resource_find(r, miss));
        ASSERT_TRUE(!dp_v1_resource_find(r, s->devices[5].uuid)); /* without "::n" */
        ASSERT_TRUE(!dp_v1_resource_find(r, ""));
        ASSERT_TRUE(!dp_v1_resource_find(r, NULL));
        dp_v1_container_response *resp = NULL;
        dp_error err = DP_ERROR_INIT;
        c->ts_fail_requests_greater_than_one = false;
        const char *ids[] = {r->devices[1000].id, r->devices[70].id, r->devices[1000].id};
        ASSERT_EQ(dp_v1_allocate(p, s, c, "nvidia.com/gpu", ids, 3, &resp, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "requested twice");
        ASSERT_CONTAINS(err.msg, r->devices[1000].id);
        ASSERT_OK(dp_v1_allocate(p, s, c, "nvidia.com/gpu", ids, 2, &resp, &err));
        dp_v1_container_response_free(resp);
        const char *avail[] = {r->devices[1023].id, r->devices[64].id, r->devices[1023].id, miss, r->devices[65].id};
        const char *must[] = {r->devices[1023].id};
        char **out = prefer(p, s, c, "nvidia.com/gpu", avail, 5, must, 1, 2);
        ASSERT_TRUE(out[0] && out[1] && !out[2]);
        ASSERT_STREQ(out[1], r->devices[1023].id);
        dp_v1_ids_free(out);
        const char *must_bad[] = {r->devices[66].id};
        char **none = NULL;
        ASSERT_EQ(dp_v1_preferred_allocation(p, s, c, "nvidia.com/gpu", avail, 5, must_bad, 1, 2, &none, &err),
                  -EINVAL);
        ASSERT_CONTAINS(err.msg, "is not among the available healthy devices");
        dp_v1_plan_free(p);
        dp_agent_config_free(c);
        dp_device_set_free(s);
}

TEST(example_gpu_v1) {
        dp_device_set *s = profile("example-gpu");
        dp_agent_config *c = config("version: v1\nflags: {plugin: {deviceListStrategy: [envvar, cdi-cri]}}\n");
        dp_v1_plan *p = plan(s, c);
        ASSERT_EQ(count(p, "example.com/gpu"), 8);
        dp_v1_container_response *resp = NULL;
        dp_error err = DP_ERROR_INIT;
        const char *ids[] = {s->devices[2].uuid};
        ASSERT_OK(dp_v1_allocate(p, s, c, "example.com/gpu", ids, 1, &resp, &err));
        ASSERT_STREQ(resp->envs[0].key, "GPU_VISIBLE_DEVICES");
        char want[96];
        snprintf(want, sizeof want, "k8s.gpu.example.com/gpu=%s", s->devices[2].uuid);
        ASSERT_STREQ(resp->cdi_devices[0], want);
        dp_v1_container_response_free(resp);
        dp_v1_plan_free(p);
        dp_agent_config_free(c);
        dp_device_set_free(s);
}

TEST(empty_profile) {
        const char *y = "apiVersion: devplane.io/v1alpha1\nkind: DeviceProfile\nmetadata: {name: t}\n"
                        "spec: {domain: x.io, devices: [{count: 0}]}\n";
        dp_device_set *s = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_profile_load(y, strlen(y), "t.yaml", "n", &s, &err));
        ASSERT_EQ(s->n_devices, 0);
        dp_agent_config *c = config("version: v1\nflags: {migStrategy: single}\n");
        dp_v1_plan *p = plan(s, c);
        ASSERT_EQ(p->n_resources, 0);
        dp_v1_container_response *resp = NULL;
        const char *ids[] = {"x"};
        ASSERT_EQ(dp_v1_allocate(p, s, c, "x.io/gpu", ids, 1, &resp, &err), -EINVAL);
        dp_v1_plan_free(p);
        dp_agent_config_free(c);
        dp_device_set_free(s);
}

TEST(scenario3_default_profile_health) {
        dp_device_set *s = profile(DP_PROFILE_DEFAULT);
        dp_agent_config *c = config("version: v1\n");
        dp_v1_plan *p = plan(s, c);
        dp_v1_resource *r = dp_v1_plan_find(p, "nvidia.com/gpu");
        ASSERT_EQ(dp_v1_resource_count(r), 8);
        dp_strbuf file = DP_STRBUF_INIT;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_health_file_set(NULL, 0, "gpu-3", DP_HEALTH_UNHEALTHY, &file, &err));
        dp_health_file *f = NULL;
        ASSERT_OK(dp_health_file_parse(file.buf, file.len, "health", &f, &err));
        ASSERT_EQ(dp_health_apply(s, f, "health", &err), 1);
        ASSERT_EQ(dp_v1_plan_update_health(p, s), 1);
        ASSERT_EQ(dp_v1_resource_count(r), 8);
        ASSERT_EQ(dp_v1_resource_count_healthy(r), 7);
        ASSERT_EQ(dp_v1_resource_find(r, s->devices[3].uuid)->health, DP_HEALTH_UNHEALTHY);
        /* no new container receives gpu-3: it is never preferred, and Allocate refuses it */
        const char *all[8];
        for (size_t i = 0; i < 8; i++)
                all[i] = r->devices[i].id;
        char **out = prefer(p, s, c, "nvidia.com/gpu", all, 8, NULL, 0, 7);
        for (char **q = out; *q; q++)
                ASSERT_TRUE(!streq(*q, s->devices[3].uuid));
        dp_v1_ids_free(out);
        /* recovery */
        dp_health_file_free(f);
        f = NULL;
        dp_strbuf again = DP_STRBUF_INIT;
        ASSERT_OK(dp_health_file_set(file.buf, file.len, "gpu-3", DP_HEALTH_HEALTHY, &again, &err));
        ASSERT_OK(dp_health_file_parse(again.buf, again.len, "health", &f, &err));
        ASSERT_EQ(dp_health_apply(s, f, "health", &err), 1);
        ASSERT_EQ(dp_v1_plan_update_health(p, s), 1);
        ASSERT_EQ(dp_v1_resource_count_healthy(r), 8);
        dp_health_file_free(f);
        dp_strbuf_done(&again);
        dp_strbuf_done(&file);
        dp_v1_plan_free(p);
        dp_agent_config_free(c);
        dp_device_set_free(s);
}
