/* SPDX-License-Identifier: Apache-2.0
 * Tests for src/devices/backend-nvml.c through the real dlopen path: the
 * test suite's fake libnvidia-ml.so.1 (tests/devices/fake-nvml) serves the
 * fixtures' YAML hardware; events are lines appended to a file. */
#include <poll.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

#include "harness.h"

#include "devices/backend.h"
#include "devices/config.h"
#include "devices/health.h"
#include "devices/profile.h"
#include "devices/v1.h"

static char events_path[256];
static char tmp_dir[64];

static void cleanup(void) {
        char p[400];
        snprintf(p, sizeof p, "%s.config.yaml", events_path);
        unlink(p);
        unlink(events_path);
        rmdir(tmp_dir);
}
static char lib_path[1024];
static char sysfs[1024], procfs[1024];

/* Point the fake at a fixture, with a fresh events file. */
static void setup(const char *fixture) {
        const char *src = getenv("DP_SOURCE_DIR"), *bld = getenv("DP_BUILD_DIR");
        if (!src || !bld) DP_FAIL("DP_SOURCE_DIR and DP_BUILD_DIR must be set (run under ctest)");
        char cfg[1024];
        snprintf(cfg, sizeof cfg, "%s/tests/devices/fixtures/%s", src, fixture);
        snprintf(lib_path, sizeof lib_path, "%s/tests/fake-nvml/libnvidia-ml.so.1", bld);
        snprintf(sysfs, sizeof sysfs, "%s/tests/devices/fixtures/sysfs-nvml", src);
        snprintf(procfs, sizeof procfs, "%s/tests/devices/fixtures/proc-nvml", src);
        char dir[] = "/tmp/dp-nvml-XXXXXX";
        if (!mkdtemp(dir)) DP_FAIL("mkdtemp");
        snprintf(tmp_dir, sizeof tmp_dir, "%s", dir);
        snprintf(events_path, sizeof events_path, "%s/events", dir);
        atexit(cleanup);
        FILE *f = fopen(events_path, "w");
        if (!f) DP_FAIL("create %s", events_path);
        fclose(f);
        setenv("DP_FAKE_NVML_CONFIG", cfg, 1);
        setenv("DP_FAKE_NVML_EVENTS", events_path, 1);
}

static void inject(const char *line) {
        FILE *f = fopen(events_path, "a");
        if (!f) DP_FAIL("open %s", events_path);
        fputs(line, f);
        fclose(f);
}

static void write_file(const char *path, const char *text) {
        FILE *f = fopen(path, "w");
        if (!f) DP_FAIL("write %s", path);
        fputs(text, f);
        fclose(f);
}

static dp_backend *open_nvml(const char *config_text) {
        char cfgpath[300] = "";
        if (config_text) {
                snprintf(cfgpath, sizeof cfgpath, "%s.config.yaml", events_path);
                write_file(cfgpath, config_text);
        }
        dp_backend_options o = {.node_name = "node-a",
                                .nvml_library = lib_path,
                                .sysfs_root = sysfs,
                                .proc_root = procfs,
                                .config_path = config_text ? cfgpath : NULL};
        dp_backend *b = NULL;
        dp_error err = DP_ERROR_INIT;
        if (dp_backend_open(DP_BACKEND_NVML, &o, &b, &err) < 0) DP_FAIL("open: %s", err.msg);
        return b;
}

static dp_device_set *discover(dp_backend *b) {
        dp_device_set *s = NULL;
        dp_error err = DP_ERROR_INIT;
        if (dp_backend_discover(b, &s, &err) < 0) DP_FAIL("discover: %s", err.msg);
        return s;
}

static const dp_hw_attr *attr(const dp_hw_device *d, const char *name) {
        for (size_t i = 0; i < d->n_attrs; i++)
                if (!strcmp(d->attrs[i].name, name)) return &d->attrs[i];
        return NULL;
}

TEST(library_absent_is_a_clear_error) {
        dp_backend_options o = {.node_name = "node-a", .nvml_library = "/nonexistent/libnvidia-ml.so.1"};
        dp_backend *b = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_EQ(dp_backend_open(DP_BACKEND_NVML, &o, &b, &err), -ENOENT);
        ASSERT_CONTAINS(err.msg, "nvml backend: cannot load /nonexistent/libnvidia-ml.so.1");
        ASSERT_CONTAINS(err.msg, "DP_NVML_LIBRARY");
        ASSERT_TRUE(b == NULL);
}

TEST(driver_not_loaded_is_a_clear_error) {
        setup("a100-mixed.nvml.yaml");
        unsetenv("DP_FAKE_NVML_CONFIG");
        dp_backend_options o = {.node_name = "node-a", .nvml_library = lib_path};
        dp_backend *b = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_EQ(dp_backend_open(DP_BACKEND_NVML, &o, &b, &err), -EIO);
        ASSERT_STREQ(err.msg, "nvml backend: nvmlInit: Driver Not Loaded (9)");
}

TEST(discover_a100_mixed) {
        setup("a100-mixed.nvml.yaml");
        dp_backend *b = open_nvml(NULL);
        dp_device_set *s = discover(b);
        ASSERT_EQ(s->n_devices, 8);
        ASSERT_STREQ(s->domain, "nvidia.com");
        ASSERT_STREQ(s->driver_name, "gpu.nvidia.com");
        ASSERT_STREQ(s->cdi_kind, "nvidia.com/gpu");
        ASSERT_STREQ(s->visible_devices_env, "NVIDIA_VISIBLE_DEVICES");
        ASSERT_EQ(s->n_common_device_nodes, 3);
        ASSERT_STREQ(s->common_device_nodes[0], "/dev/nvidiactl");
        const dp_hw_device *d = &s->devices[0];
        ASSERT_STREQ(d->id, "gpu-0");
        ASSERT_STREQ(d->type, "gpu");
        ASSERT_STREQ(d->uuid, "GPU-00000000-a100-4000-8000-000000000000");
        ASSERT_STREQ(d->product, "NVIDIA A100-SXM4-80GB");
        ASSERT_STREQ(d->architecture, "Ampere");
        ASSERT_STREQ(d->driver_version, "550.54.15");
        ASSERT_EQ(d->memory_bytes, 80ULL << 30);
        ASSERT_STREQ(d->pci_bus_id, "0000:00:00.0");
        ASSERT_EQ(d->numa_node, 0);
        ASSERT_EQ(d->n_device_nodes, 1);
        ASSERT_STREQ(d->device_nodes[0], "/dev/nvidia0");
        ASSERT_STREQ(attr(d, "cudaComputeCapability")->str, "8.0.0");
        ASSERT_EQ(attr(d, "cudaComputeCapability")->type, DP_HW_ATTR_VERSION);
        ASSERT_STREQ(attr(d, "cudaDriverVersion")->str, "12.4.0");
        ASSERT_STREQ(attr(d, "driverVersion")->str, "550.54.15");
        ASSERT_STREQ(attr(d, "productName")->str, "NVIDIA A100-SXM4-80GB");
        ASSERT_STREQ(d->capacities[0].name, "memory");
        ASSERT_STREQ(d->capacities[0].value, "80Gi");
        /* MIG: 7 x 1g.10gb on GPUs 0-3, with their /dev/nvidia-caps nodes. */
        ASSERT_TRUE(d->mig_enabled);
        ASSERT_EQ(d->n_migs, 7);
        ASSERT_STREQ(d->migs[2].id, "gpu-0-mig-1g10gb-2");
        ASSERT_STREQ(d->migs[2].profile, "1g.10gb");
        ASSERT_STREQ(d->migs[2].uuid, "MIG-00000002-a100-5000-8000-000000000002");
        ASSERT_EQ(d->migs[2].memory_bytes, 9728ULL << 20);
        ASSERT_EQ(d->migs[2].parent, 0);
        ASSERT_EQ(d->migs[2].n_device_nodes, 2);
        ASSERT_STREQ(d->migs[2].device_nodes[0], "/dev/nvidia-caps/nvidia-cap5");
        ASSERT_STREQ(d->migs[2].device_nodes[1], "/dev/nvidia-caps/nvidia-cap6");
        ASSERT_EQ(s->devices[3].n_migs, 7);
        ASSERT_STREQ(s->devices[3].migs[6].device_nodes[1], "/dev/nvidia-caps/nvidia-cap56");
        ASSERT_FALSE(s->devices[4].mig_enabled);
        ASSERT_EQ(s->devices[4].n_migs, 0);
        /* NUMA for 4-7 comes from sysfs, NVML does not report it. */
        ASSERT_EQ(s->devices[5].numa_node, 1);
        ASSERT_STREQ(s->devices[5].pci_bus_id, "0000:05:00.0");
        ASSERT_TRUE(dp_device_set_nvlinked(s, 0, 7));
        ASSERT_TRUE(dp_device_set_nvlinked(s, 3, 4));
        ASSERT_EQ(dp_device_set_count_mig_enabled(s), 4);
        dp_device_set_free(s);
        dp_backend_close(b);
}

/* The V1 plan on the fake box equals the mock a100-mixed profile's (names,
 * counts, NUMA), under migStrategy mixed and none. */
TEST(same_v1_resources_as_the_mock_profile) {
        setup("a100-mixed.nvml.yaml");
        dp_backend *b = open_nvml(NULL);
        dp_device_set *s = discover(b);
        dp_device_set *mock = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_profile_builtin("a100-mixed", "node-a", &mock, &err));
        const char *cfgs[] = {"version: v1\nflags: {migStrategy: mixed}\n",
                              "version: v1\nflags: {migStrategy: none}\n"};
        for (size_t k = 0; k < 2; k++) {
                dp_agent_config *c = NULL;
                ASSERT_OK(dp_agent_config_load(cfgs[k], strlen(cfgs[k]), "config", &c, &err));
                dp_v1_plan *p = NULL, *q = NULL;
                if (dp_v1_plan_build(s, c, &p, &err) < 0) DP_FAIL("%s", err.msg);
                ASSERT_OK(dp_v1_plan_build(mock, c, &q, &err));
                ASSERT_EQ(p->n_resources, q->n_resources);
                for (size_t i = 0; i < p->n_resources; i++) {
                        ASSERT_STREQ(p->resources[i].name, q->resources[i].name);
                        ASSERT_EQ(p->resources[i].n_devices, q->resources[i].n_devices);
                        for (size_t j = 0; j < p->resources[i].n_devices; j++)
                                ASSERT_EQ(p->resources[i].devices[j].numa_node, q->resources[i].devices[j].numa_node);
                }
                if (k == 0) {
                        ASSERT_EQ(dp_v1_resource_count(dp_v1_plan_find(p, "nvidia.com/gpu")), 4);
                        ASSERT_EQ(dp_v1_resource_count(dp_v1_plan_find(p, "nvidia.com/mig-1g.10gb")), 28);
                }
                dp_v1_plan_free(p);
                dp_v1_plan_free(q);
                dp_agent_config_free(c);
        }
        dp_device_set_free(mock);
        dp_device_set_free(s);
        dp_backend_close(b);
}

static const char *const health_cfg = "apiVersion: devplane.io/v1alpha1\n"
                                      "kind: BackendConfig\n"
                                      "spec:\n"
                                      "  health: {recoverAfterSeconds: 60}\n";

TEST(xid79_unhealthy_xid13_ignored_then_recovery) {
        setup("a100-mixed.nvml.yaml");
        dp_backend *b = open_nvml(health_cfg);
        dp_device_set *s = discover(b);
        dp_agent_config *c = NULL;
        dp_error err = DP_ERROR_INIT;
        const char *mixed = "version: v1\nflags: {migStrategy: mixed}\n";
        ASSERT_OK(dp_agent_config_load(mixed, strlen(mixed), "config", &c, &err));
        dp_v1_plan *p = NULL;
        ASSERT_OK(dp_v1_plan_build(s, c, &p, &err));
        const uint64_t t0 = 1000000000ULL;

        inject("5 xid 13\n5 xid 31\n5 xid 43\n5 xid 45\n5 xid 68\n5 xid 109\n");
        ASSERT_EQ(dp_backend_dispatch(b, s, t0, &err), 0);
        ASSERT_EQ(s->devices[5].health, DP_HEALTH_HEALTHY);
        ASSERT_EQ(dp_backend_faults(b, NULL), 0);

        inject("5 xid 79\n");
        ASSERT_EQ(dp_backend_dispatch(b, s, t0, &err), 1);
        ASSERT_EQ(s->devices[5].health, DP_HEALTH_UNHEALTHY);
        ASSERT_EQ(s->devices[5].profile_health, DP_HEALTH_UNHEALTHY);
        const dp_fault_entry *f = NULL;
        ASSERT_EQ(dp_backend_faults(b, &f), 1);
        ASSERT_STREQ(f[0].device, "gpu-5");
        ASSERT_STREQ(f[0].fault_class, "xid-79");
        ASSERT_EQ(dp_v1_plan_update_health(p, s), 1);
        const dp_v1_resource *gpu = dp_v1_plan_find(p, "nvidia.com/gpu");
        ASSERT_EQ(dp_v1_resource_count(gpu), 4);
        ASSERT_EQ(dp_v1_resource_count_healthy(gpu), 3);

        /* A repeat refreshes the quiet period; recovery 60 s after the last. */
        inject("5 xid 79\n");
        ASSERT_EQ(dp_backend_dispatch(b, s, t0 + 30000000ULL, &err), 0);
        ASSERT_EQ(dp_backend_dispatch(b, s, t0 + 89000000ULL, &err), 0);
        ASSERT_EQ(s->devices[5].health, DP_HEALTH_UNHEALTHY);
        ASSERT_EQ(dp_backend_dispatch(b, s, t0 + 90000000ULL, &err), 1);
        ASSERT_EQ(s->devices[5].health, DP_HEALTH_HEALTHY);
        ASSERT_EQ(dp_backend_faults(b, NULL), 0);
        ASSERT_EQ(dp_v1_plan_update_health(p, s), 1);
        ASSERT_EQ(dp_v1_resource_count_healthy(gpu), 4);

        /* A critical Xid on a MIG-mode GPU takes its instances down (V1 mixed). */
        inject("1 xid 48\n");
        ASSERT_EQ(dp_backend_dispatch(b, s, t0 + 91000000ULL, &err), 1);
        ASSERT_EQ(dp_v1_plan_update_health(p, s), 1);
        ASSERT_EQ(dp_v1_resource_count_healthy(dp_v1_plan_find(p, "nvidia.com/mig-1g.10gb")), 21);
        /* Explicit recovery, by uuid. */
        ASSERT_EQ(dp_backend_recover(b, s, s->devices[1].uuid, t0 + 92000000ULL), 1);
        ASSERT_EQ(s->devices[1].health, DP_HEALTH_HEALTHY);
        ASSERT_EQ(dp_backend_recover(b, s, "gpu-42", t0), -ENOENT);

        dp_v1_plan_free(p);
        dp_agent_config_free(c);
        dp_device_set_free(s);
        dp_backend_close(b);
}

TEST(mig_scoped_xid_and_ecc) {
        setup("a100-mixed.nvml.yaml");
        dp_backend *b = open_nvml("apiVersion: devplane.io/v1alpha1\nkind: BackendConfig\n"
                                  "spec: {health: {eccDoubleBit: unhealthy, criticalXids: [13]}}\n");
        dp_device_set *s = discover(b);
        dp_error err = DP_ERROR_INIT;
        /* GPU instance 9 of GPU 0 is its third 1g.10gb instance. */
        inject("0 xid 94 gi 9 ci 0\n");
        ASSERT_EQ(dp_backend_dispatch(b, s, 1000, &err), 1);
        ASSERT_EQ(s->devices[0].health, DP_HEALTH_HEALTHY);
        ASSERT_EQ(s->devices[0].migs[2].health, DP_HEALTH_UNHEALTHY);
        ASSERT_EQ(s->devices[0].migs[1].health, DP_HEALTH_HEALTHY);
        const dp_fault_entry *f = NULL;
        ASSERT_EQ(dp_backend_faults(b, &f), 1);
        ASSERT_STREQ(f[0].device, "gpu-0-mig-1g10gb-2");
        /* Single-bit ECC stays ignored; double-bit is configured critical;
         * Xid 13 was made critical. */
        inject("6 ecc-sbe\n7 ecc-dbe\n4 xid 13\n");
        ASSERT_EQ(dp_backend_dispatch(b, s, 2000, &err), 2);
        ASSERT_EQ(s->devices[6].health, DP_HEALTH_HEALTHY);
        ASSERT_EQ(s->devices[7].health, DP_HEALTH_UNHEALTHY);
        ASSERT_EQ(s->devices[4].health, DP_HEALTH_UNHEALTHY);
        ASSERT_EQ(dp_backend_faults(b, &f), 3);
        ASSERT_STREQ(f[1].fault_class, "ecc-dbe");
        ASSERT_STREQ(f[2].fault_class, "xid-13");
        dp_device_set_free(s);
        dp_backend_close(b);
}

TEST(failed_wait_marks_every_gpu_lost) {
        setup("a100-mixed.nvml.yaml");
        dp_backend *b = open_nvml(NULL);
        dp_device_set *s = discover(b);
        dp_error err = DP_ERROR_INIT;
        inject("fail\n");
        ASSERT_EQ(dp_backend_dispatch(b, s, 1000, &err), -EIO);
        ASSERT_CONTAINS(err.msg, "nvmlEventSetWait");
        for (size_t i = 0; i < s->n_devices; i++)
                ASSERT_EQ(s->devices[i].health, DP_HEALTH_UNHEALTHY);
        const dp_fault_entry *f = NULL;
        ASSERT_EQ(dp_backend_faults(b, &f), 8);
        ASSERT_STREQ(f[0].fault_class, "gpu-lost");
        /* The next wait works again; lost GPUs recover after the quiet period. */
        ASSERT_EQ(dp_backend_dispatch(b, s, 1000 + DP_FAULT_DEFAULT_RECOVER_USEC, &err), 8);
        dp_device_set_free(s);
        dp_backend_close(b);
}

TEST(compute_instance_profiles_and_no_numa) {
        setup("h100-ci.nvml.yaml");
        dp_backend *b = open_nvml(NULL);
        dp_device_set *s = discover(b);
        ASSERT_EQ(s->n_devices, 1);
        const dp_hw_device *d = &s->devices[0];
        ASSERT_STREQ(d->architecture, "Hopper");
        ASSERT_STREQ(d->pci_bus_id, "0001:1b:00.0");
        ASSERT_EQ(d->numa_node, -1);
        ASSERT_STREQ(d->device_nodes[0], "/dev/nvidia3");
        ASSERT_STREQ(d->capacities[0].value, "81559Mi");
        ASSERT_STREQ(attr(d, "cudaComputeCapability")->str, "9.0.0");
        ASSERT_STREQ(attr(d, "cudaDriverVersion")->str, "12.6.0");
        ASSERT_EQ(d->n_migs, 2);
        ASSERT_STREQ(d->migs[0].profile, "1c.2g.20gb");
        ASSERT_STREQ(d->migs[0].id, "gpu-0-mig-1c2g20gb-0");
        ASSERT_STREQ(d->migs[1].profile, "3g.40gb");
        ASSERT_EQ(d->migs[1].n_device_nodes, 0); /* no mig-minors for this GPU */
        /* No event support: unmonitored, so an Xid never arrives. */
        dp_error err = DP_ERROR_INIT;
        inject("0 xid 79\n");
        ASSERT_EQ(dp_backend_dispatch(b, s, 1000, &err), 0);
        ASSERT_EQ(s->devices[0].health, DP_HEALTH_HEALTHY);
        dp_device_set_free(s);
        dp_backend_close(b);
}

/* The loop's view: the backend fd turns readable when the poll timer fires,
 * and dispatch then reports the injected fault. */
TEST(fd_wakes_the_loop) {
        setup("a100-mixed.nvml.yaml");
        dp_backend *b = open_nvml("apiVersion: devplane.io/v1alpha1\nkind: BackendConfig\n"
                                  "spec: {health: {pollIntervalMilliseconds: 10}}\n");
        dp_device_set *s = discover(b);
        inject("2 xid 79\n");
        struct pollfd pfd = {.fd = dp_backend_fd(b), .events = POLLIN};
        ASSERT_TRUE(pfd.fd >= 0);
        ASSERT_EQ(poll(&pfd, 1, 10000), 1);
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        dp_error err = DP_ERROR_INIT;
        uint64_t now = (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000ULL;
        ASSERT_EQ(dp_backend_dispatch(b, s, now, &err), 1);
        ASSERT_EQ(s->devices[2].health, DP_HEALTH_UNHEALTHY);
        dp_device_set_free(s);
        dp_backend_close(b);
}

/* The daemon's contract: backend health lands in profile_health and health;
 * the health override file, re-applied after a dispatch, wins. Faults
 * survive a rediscovery of the same devices. */
TEST(health_file_overrides_and_rediscovery) {
        setup("a100-mixed.nvml.yaml");
        dp_backend *b = open_nvml(NULL);
        dp_device_set *s = discover(b);
        dp_error err = DP_ERROR_INIT;
        inject("6 xid 79\n");
        ASSERT_EQ(dp_backend_dispatch(b, s, 1000, &err), 1);
        const char *txt = "gpu-6 healthy\ngpu-3 unhealthy\n";
        dp_health_file *f = NULL;
        ASSERT_OK(dp_health_file_parse(txt, strlen(txt), "health", &f, &err));
        ASSERT_EQ(dp_health_apply(s, f, "health", &err), 2);
        ASSERT_EQ(s->devices[6].health, DP_HEALTH_HEALTHY);
        ASSERT_EQ(s->devices[6].profile_health, DP_HEALTH_UNHEALTHY);
        ASSERT_EQ(s->devices[3].health, DP_HEALTH_UNHEALTHY);
        ASSERT_EQ(dp_health_apply(s, NULL, "health", &err), 2); /* file removed: the backend's view */
        ASSERT_EQ(s->devices[6].health, DP_HEALTH_UNHEALTHY);
        dp_health_file_free(f);
        dp_device_set *again = discover(b);
        ASSERT_EQ(again->devices[6].health, DP_HEALTH_UNHEALTHY);
        ASSERT_EQ(dp_backend_faults(b, NULL), 1);
        /* Events still flow on the re-registered event set. */
        inject("7 xid 79\n");
        ASSERT_EQ(dp_backend_dispatch(b, again, 2000, &err), 1);
        ASSERT_EQ(again->devices[7].health, DP_HEALTH_UNHEALTHY);
        dp_device_set_free(again);
        dp_device_set_free(s);
        dp_backend_close(b);
}

/* All eight GPUs in MIG mode: migStrategy single exposes 56 nvidia.com/gpu. */
TEST(all_mig_box_single_strategy) {
        setup("a100-8x7.nvml.yaml");
        dp_backend *b = open_nvml(NULL);
        dp_device_set *s = discover(b);
        ASSERT_EQ(dp_device_set_count_mig_enabled(s), 8);
        ASSERT_EQ(s->devices[7].n_migs, 7);
        ASSERT_EQ(s->devices[7].numa_node, 1);
        dp_error err = DP_ERROR_INIT;
        const char *single = "version: v1\nflags: {migStrategy: single}\n";
        dp_agent_config *c = NULL;
        ASSERT_OK(dp_agent_config_load(single, strlen(single), "config", &c, &err));
        dp_v1_plan *p = NULL;
        if (dp_v1_plan_build(s, c, &p, &err) < 0) DP_FAIL("%s", err.msg);
        ASSERT_EQ(p->n_resources, 1);
        ASSERT_STREQ(p->resources[0].name, "nvidia.com/gpu");
        ASSERT_EQ(dp_v1_resource_count(&p->resources[0]), 56);
        dp_v1_plan_free(p);
        dp_agent_config_free(c);
        dp_device_set_free(s);
        dp_backend_close(b);
}
