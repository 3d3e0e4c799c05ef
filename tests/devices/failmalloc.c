/* SPDX-License-Identifier: Apache-2.0
 * devices-failmalloc — run the backends through a scenario (BackendConfig
 * load, pci discovery on the fake sysfs, devglob discovery and dispatch,
 * nvml open/discover/dispatch on the fake libnvidia-ml.so.1 with injected
 * events, then NVIDIA's config with flags over it, planned and allocated
 * from with CDI, GDS and MPS) once per allocation, failing exactly that allocation. Every run
 * must end in success or -ENOMEM — never a crash, another error or a failure
 * that silently changed the result — and LeakSanitizer checks at exit that
 * every failure path freed what it had. devplane's allocations are
 * intercepted with the linker's --wrap (libyaml's, libc's and the fake
 * library's own are not). */
#include <stdio.h>
#include <sys/stat.h>

#include "devices/backend.h"
#include "devices/profile.h"
#include "devices/v1.h"

#include "failmalloc.h"

static char lib[1024], nvml_cfg[1024], events[256], devroot[64];

static bool must(int r, const char *what, dp_error *err) {
        if (r < 0 && r != -ENOMEM) {
                fprintf(stderr, "devices-failmalloc: %s failed with %d at allocation %lu: %s\n", what, r, fail_at,
                        dp_error_msg(err));
                abort();
        }
        return r >= 0;
}

static bool run_backend(dp_backend_kind kind, const dp_backend_options *o, size_t want_devices, int want_changes,
                        const char *inject) {
        dp_error err = DP_ERROR_INIT;
        dp_backend *b = NULL;
        dp_device_set *s = NULL;
        bool ok = must(dp_backend_open(kind, o, &b, &err), "open", &err) &&
                  must(dp_backend_discover(b, &s, &err), "discover", &err);
        if (ok && s->n_devices != want_devices) {
                fprintf(stderr, "devices-failmalloc: %zu devices, want %zu (allocation %lu)\n", s->n_devices,
                        want_devices, fail_at);
                abort();
        }
        if (ok && inject) {
                FILE *f = fopen(events, "a");
                if (!f) abort();
                fputs(inject, f);
                fclose(f);
        }
        if (ok) {
                int r = dp_backend_dispatch(b, s, 1000, &err);
                ok = must(r, "dispatch", &err);
                if (ok && r != want_changes) {
                        fprintf(stderr, "devices-failmalloc: %d changes, want %d (allocation %lu)\n", r, want_changes,
                                fail_at);
                        abort();
                }
        }
        dp_device_set_free(s);
        dp_backend_close(b);
        return ok;
}

/* NVIDIA's config API v1 as the agent uses it: load (with warnings), apply
 * flags and environment, plan, allocate (CDI names, GDS env, device specs
 * under the dev root), and the MPS variant. */
static bool run_config(void) {
        static const char profile[] = "apiVersion: devplane.io/v1alpha1\nkind: DeviceProfile\nmetadata: {name: t}\n"
                                      "spec:\n  domain: nvidia.com\n  commonDeviceNodes: [/dev/nvidiactl]\n  devices:\n"
                                      "  - {count: 2, memory: 80Gi, deviceNodes: ['/dev/nvidia{index}']}\n";
        static const char *const cfgs[] = {
                "flags: {gdsEnabled: true, nvidiaDriverRoot: /run/nvidia/driver, plugin: {passDeviceSpecs: true,\n"
                "  deviceIDStrategy: index, deviceListStrategy: [envvar, cdi-annotations, cdi-cri]},\n"
                "  gfd: {sleepInterval: 5s}}\n"
                "resources: {gpus: [{pattern: '*', name: gpu}]}\n"
                "sharing: {timeSlicing: {renameByDefault: true, resources: [{name: gpu, replicas: 2, devices: [0],\n"
                "  rename: x}]}}\nimex: {channelIDs: [0]}\nunknown: 1\n",
                "version: v1\nsharing: {mps: {resources: [{name: nvidia.com/gpu, replicas: 4}]}}\n",
        };
        static const dp_config_override ov[] = {{"mps-root", "/run/nvidia/mps", "MPS_ROOT"},
                                                {"nvidia-dev-root", "/host", "--nvidia-dev-root"},
                                                {"device-list-strategy", "envvar,cdi-cri", "DEVICE_LIST_STRATEGY"}};
        bool ok = true;
        for (size_t k = 0; k < 2 && ok; k++) {
                dp_error err = DP_ERROR_INIT;
                dp_agent_config *c = NULL;
                dp_device_set *s = NULL;
                dp_v1_plan *p = NULL;
                dp_v1_container_response *resp = NULL;
                ok = must(dp_agent_config_load(cfgs[k], strlen(cfgs[k]), "c.yaml", &c, &err), "config load", &err) &&
                     must(dp_agent_config_apply(c, ov, k ? 1 : 3, &err), "config apply", &err) &&
                     must(dp_profile_load(profile, strlen(profile), "p.yaml", "n", &s, &err), "profile", &err) &&
                     must(dp_v1_plan_build(s, c, &p, &err), "plan", &err);
                if (ok && (p->n_resources != 1 || p->resources[0].n_devices != (k ? 8u : 4u))) {
                        fprintf(stderr, "devices-failmalloc: plan %zu has the wrong shape (allocation %lu)\n", k,
                                fail_at);
                        abort();
                }
                if (ok) {
                        const char *ids[] = {p->resources[0].devices[0].id};
                        ok = must(dp_v1_allocate(p, s, c, p->resources[0].name, ids, 1, &resp, &err), "allocate", &err);
                }
                dp_v1_container_response_free(resp);
                dp_v1_plan_free(p);
                dp_device_set_free(s);
                dp_agent_config_free(c);
        }
        return ok;
}

static bool scenario(void) {
        if (!run_config()) return false;
        dp_backend_options pci = {
                .node_name = "node-a", .sysfs_root = "fixtures/sysfs-pci", .config_path = "fixtures/pci.backend.yaml"};
        if (!run_backend(DP_BACKEND_PCI, &pci, 3, 0, NULL)) return false;
        dp_backend_options dg = {.node_name = "node-a",
                                 .sysfs_root = "fixtures/sysfs-usb",
                                 .dev_root = devroot,
                                 .config_path = "fixtures/devglob.backend.yaml"};
        /* The dev root has no nodes: only the USB match, and it is missing. */
        if (!run_backend(DP_BACKEND_DEVGLOB, &dg, 1, 1, NULL)) return false;
        dp_backend_options nv = {.node_name = "node-a",
                                 .nvml_library = lib,
                                 .sysfs_root = "fixtures/sysfs-nvml",
                                 .proc_root = "fixtures/proc-nvml"};
        return run_backend(DP_BACKEND_NVML, &nv, 8, 2, "5 xid 79\n0 xid 94 gi 9 ci 0\n1 xid 13\n");
}

static void cleanup(void) {
        unlink(events);
        char p[128];
        snprintf(p, sizeof p, "%s/dev/bus/usb/001", devroot);
        rmdir(p);
        snprintf(p, sizeof p, "%s/dev/bus/usb", devroot);
        rmdir(p);
        snprintf(p, sizeof p, "%s/dev/bus", devroot);
        rmdir(p);
        snprintf(p, sizeof p, "%s/dev", devroot);
        rmdir(p);
        rmdir(devroot);
}

static bool run(void *ctx) {
        (void)ctx;
        return scenario();
}

int main(void) {
        const char *src = getenv("DP_SOURCE_DIR"), *bld = getenv("DP_BUILD_DIR");
        if (!src || !bld) {
                fprintf(stderr, "devices-failmalloc: DP_SOURCE_DIR and DP_BUILD_DIR must be set (run under ctest)\n");
                return 2;
        }
        snprintf(lib, sizeof lib, "%s/tests/fake-nvml/libnvidia-ml.so.1", bld);
        snprintf(nvml_cfg, sizeof nvml_cfg, "%s/tests/devices/fixtures/a100-mixed.nvml.yaml", src);
        snprintf(devroot, sizeof devroot, "/tmp/dp-failmalloc-XXXXXX");
        if (!mkdtemp(devroot)) return 2;
        snprintf(events, sizeof events, "%s/events", devroot);
        atexit(cleanup);
        FILE *f = fopen(events, "w");
        if (!f) return 2;
        fclose(f);
        setenv("DP_FAKE_NVML_CONFIG", nvml_cfg, 1);
        setenv("DP_FAKE_NVML_EVENTS", events, 1);
        char p[128];
        const char *dirs[] = {"/dev", "/dev/bus", "/dev/bus/usb", "/dev/bus/usb/001"};
        for (size_t i = 0; i < 4; i++) {
                snprintf(p, sizeof p, "%s%s", devroot, dirs[i]);
                if (mkdir(p, 0700) < 0) return 2;
        }
        dp_failmalloc fm = {.name = "devices-failmalloc", .run = run, .min_points = 1};
        dp_failmalloc_result r;
        int rc = dp_failmalloc_each(&fm, &r);
        printf("devices-failmalloc: %lu allocations, each failed in turn (%lu absorbed)\n", r.points, r.absorbed);
        return rc;
}
