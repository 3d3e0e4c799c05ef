/* SPDX-License-Identifier: Apache-2.0
 * backend-nvml.c — NVIDIA GPUs through NVML, loaded with dlopen at run time
 * (no build-time dependency; the subset in nvml-api.h). Discovery fills the
 * device model like the a100 profiles do: gpu-<nvml index> with uuid,
 * product, architecture, memory, PCI bus id, NUMA node, /dev/nvidia<minor>,
 * compute capability, driver and CUDA versions; MIG instances
 * <gpu>-mig-<profile without dots>-<n> (dp_mig_id_new) named from the
 * GPU/compute instance profile (1g.10gb, 1c.2g.20gb) with /dev/nvidia-caps nodes from
 * <proc>/driver/nvidia-caps/mig-minors; NVLink peers from P2P status.
 *
 * Health: NVML's event wait blocks, and the daemon is one epoll loop, so the
 * backend never blocks in it: the timerfd wakes the loop every
 * pollIntervalMilliseconds and dispatch drains the event set with a zero
 * timeout (docs/backends.md says why this and not a thread). Xid and ECC
 * events go through the fault table; a failing wait marks every GPU
 * "gpu-lost". */
#include <dlfcn.h>
#include <stdio.h>

#include "base/fileio.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "devices/backend-internal.h"
#include "devices/decode.h"
#include "devices/nvml-api.h"

typedef struct nvml_fns {
#define X(req, name, params) nvmlReturn_t(*name) params;
        DP_NVML_FUNCS(X)
#undef X
        dp_nvmlErrorString_fn nvmlErrorString;
} nvml_fns;

typedef struct nvml_gpu {
        nvmlDevice_t h;
        char *id;
        bool monitored;
} nvml_gpu;

typedef struct nvml_mig {
        size_t gpu; /* position in gpus */
        unsigned gi, ci;
        char *id;
} nvml_mig;

typedef struct nvml_state {
        void *dl;
        nvml_fns f;
        bool inited;
        nvmlEventSet_t events;
        nvml_gpu *gpus;
        size_t n_gpus;
        nvml_mig *migs;
        size_t n_migs;
} nvml_state;

#define EVENTS_WANTED (nvmlEventTypeXidCriticalError | nvmlEventTypeDoubleBitEccError | nvmlEventTypeSingleBitEccError)
#define EVENTS_PER_DISPATCH 1024 /* bounded work per wake-up; the rest waits for the next */

static const char *nvml_str(const nvml_state *st, nvmlReturn_t r) {
        const char *s = st->f.nvmlErrorString ? st->f.nvmlErrorString(r) : NULL;
        return s ? s : "NVML error";
}

static int nvml_fail(const nvml_state *st, dp_error *err, nvmlReturn_t r, const char *what) {
        return dp_error_set(err, -EIO, "nvml backend: %s: %s (%d)", what, nvml_str(st, r), (int)r);
}

static void forget_handles(nvml_state *st) {
        for (size_t i = 0; i < st->n_gpus; i++)
                free(st->gpus[i].id);
        free(st->gpus);
        for (size_t i = 0; i < st->n_migs; i++)
                free(st->migs[i].id);
        free(st->migs);
        st->gpus = NULL;
        st->migs = NULL;
        st->n_gpus = st->n_migs = 0;
        if (st->events && st->f.nvmlEventSetFree) st->f.nvmlEventSetFree(st->events);
        st->events = NULL;
}

static void nvml_close(dp_backend *b) {
        nvml_state *st = b->priv;
        if (!st) return;
        forget_handles(st);
        if (st->inited) st->f.nvmlShutdown();
        if (st->dl) dlclose(st->dl);
        free(st);
        b->priv = NULL;
}

static int nvml_open(dp_backend *b, dp_error *err) {
        nvml_state *st = calloc(1, sizeof *st);
        if (!st) return dp_error_set(err, -ENOMEM, "out of memory");
        b->priv = st;
        const char *lib = b->nvml_library;
        if (!lib) lib = getenv(DP_NVML_LIBRARY_ENV);
        if (!lib || !*lib) lib = DP_NVML_LIBRARY_DEFAULT;
        st->dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        if (!st->dl) {
                const char *why = dlerror();
                return dp_error_set(err, -ENOENT,
                                    "nvml backend: cannot load %s (%s): is the NVIDIA driver installed on this node? "
                                    "Point %s or the library option at libnvidia-ml.so.1",
                                    lib, why ? why : "not found", DP_NVML_LIBRARY_ENV);
        }
#define X(req, name, params)                                                                                           \
        *(void **)&st->f.name = dlsym(st->dl, #name);                                                                  \
        if ((req) && !st->f.name)                                                                                      \
                return dp_error_set(err, -ENOENT, "nvml backend: %s has no symbol " #name " (driver too old?)", lib);
        DP_NVML_FUNCS(X)
#undef X
        *(void **)&st->f.nvmlErrorString = dlsym(st->dl, "nvmlErrorString");
        nvmlReturn_t r = st->f.nvmlInit_v2();
        if (r != NVML_SUCCESS) return nvml_fail(st, err, r, "nvmlInit");
        st->inited = true;
        return 0;
}

static const char *arch_name(nvmlDeviceArchitecture_t a) {
        switch (a) {
        case NVML_DEVICE_ARCH_KEPLER: return "Kepler";
        case NVML_DEVICE_ARCH_MAXWELL: return "Maxwell";
        case NVML_DEVICE_ARCH_PASCAL: return "Pascal";
        case NVML_DEVICE_ARCH_VOLTA: return "Volta";
        case NVML_DEVICE_ARCH_TURING: return "Turing";
        case NVML_DEVICE_ARCH_AMPERE: return "Ampere";
        case NVML_DEVICE_ARCH_ADA: return "Ada Lovelace";
        case NVML_DEVICE_ARCH_HOPPER: return "Hopper";
        case NVML_DEVICE_ARCH_BLACKWELL: return "Blackwell";
        default: return NULL;
        }
}

/* "80Gi" when exact, else "<n>Mi", else bytes: the shape profiles use. */
static void bytes_text(uint64_t v, char *buf, size_t size) {
        if (v && v % (1ULL << 30) == 0)
                dp_pathf(buf, size, "%lluGi", (unsigned long long)(v >> 30));
        else if (v && v % (1ULL << 20) == 0)
                dp_pathf(buf, size, "%lluMi", (unsigned long long)(v >> 20));
        else
                dp_pathf(buf, size, "%llu", (unsigned long long)v);
}

/* The MIG memory size in the profile name: the instance's share of the
 * GPU's memory rounded up to eighths, times the GPU's memory in whole GB,
 * rounded to the nearest GB — so an A100-80GB 1-slice instance (9856 MiB
 * of 81920) reads "10gb" and an A100-40GB one (4864 of 40960) "5gb". */
static unsigned mig_memory_gb(uint64_t total_bytes, uint64_t mig_mib) {
        if (!total_bytes) return (unsigned)((mig_mib + 1023) / 1024);
        uint64_t total_gb = (total_bytes + (1ULL << 30) - 1) >> 30;
        /* eighths = ceil(8 * mig / total), in integers. */
        uint64_t num = 8ULL * mig_mib * (1ULL << 20);
        uint64_t eighths = (num + total_bytes - 1) / total_bytes;
        return (unsigned)((eighths * total_gb + 4) / 8);
}

/* "gpu<minor>/gi<g>/access <n>" and "gpu<minor>/gi<g>/ci<c>/access <n>" lines. */
static int cap_minor(const char *minors, unsigned gpu, unsigned gi, int ci) {
        if (!minors) return -1;
        char want[96];
        if (ci < 0)
                dp_pathf(want, sizeof want, "gpu%u/gi%u/access ", gpu, gi);
        else
                dp_pathf(want, sizeof want, "gpu%u/gi%u/ci%d/access ", gpu, gi, ci);
        size_t wl = strlen(want);
        for (const char *p = minors; p && *p;) {
                if (!strncmp(p, want, wl)) return atoi(p + wl);
                p = strchr(p, '\n');
                if (p) p++;
        }
        return -1;
}

/* A small regular text file (at most 1 MiB): 0 with *ret (NULL when absent,
 * unreadable or larger), -ENOMEM. */
static int read_small(const char *path, char **ret) {
        *ret = NULL;
        size_t len;
        int r = dp_read_file(path, 1u << 20, ret, &len, NULL);
        return r == -ENOMEM ? r : 0;
}

typedef struct discover_ctx {
        dp_backend *b;
        nvml_state *st;
        dp_device_set *s;
        const char *minors; /* mig-minors text or NULL */
        char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
        char cuda[32]; /* "12.4.0" or "" */
        dp_error *err;
} discover_ctx;

/* The profile of one MIG device: "<g>g.<mem>gb" or "<c>c.<g>g.<mem>gb". */
static int mig_profile(discover_ctx *c, nvmlDevice_t parent, uint64_t parent_total, unsigned gi_id, unsigned ci_id,
                       char *buf, size_t size, uint64_t *ret_mem) {
        nvml_fns *f = &c->st->f;
        if (!f->nvmlDeviceGetGpuInstanceById || !f->nvmlGpuInstanceGetInfo || !f->nvmlDeviceGetGpuInstanceProfileInfo)
                return -EOPNOTSUPP;
        nvmlGpuInstance_t gi;
        nvmlGpuInstanceInfo_t gii;
        if (f->nvmlDeviceGetGpuInstanceById(parent, gi_id, &gi) != NVML_SUCCESS ||
            f->nvmlGpuInstanceGetInfo(gi, &gii) != NVML_SUCCESS)
                return -EIO;
        nvmlGpuInstanceProfileInfo_t gp;
        bool found = false;
        for (unsigned p = 0; p < NVML_GPU_INSTANCE_PROFILE_COUNT && !found; p++) {
                memset(&gp, 0, sizeof gp);
                found = f->nvmlDeviceGetGpuInstanceProfileInfo(parent, p, &gp) == NVML_SUCCESS &&
                        gp.id == gii.profileId;
        }
        if (!found || !gp.sliceCount) return -EIO;
        unsigned ci_slices = gp.sliceCount;
        nvmlComputeInstance_t ci;
        nvmlComputeInstanceInfo_t cii;
        if (f->nvmlGpuInstanceGetComputeInstanceById && f->nvmlComputeInstanceGetInfo_v2 &&
            f->nvmlGpuInstanceGetComputeInstanceProfileInfo &&
            f->nvmlGpuInstanceGetComputeInstanceById(gi, ci_id, &ci) == NVML_SUCCESS &&
            f->nvmlComputeInstanceGetInfo_v2(ci, &cii) == NVML_SUCCESS) {
                for (unsigned p = 0; p < NVML_COMPUTE_INSTANCE_PROFILE_COUNT; p++) {
                        nvmlComputeInstanceProfileInfo_t cp = {0};
                        if (f->nvmlGpuInstanceGetComputeInstanceProfileInfo(
                                    gi, p, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &cp) == NVML_SUCCESS &&
                            cp.id == cii.profileId) {
                                if (cp.sliceCount) ci_slices = cp.sliceCount;
                                break;
                        }
                }
        }
        unsigned gb = mig_memory_gb(parent_total, gp.memorySizeMB);
        if (ci_slices < gp.sliceCount)
                dp_pathf(buf, size, "%uc.%ug.%ugb", ci_slices, gp.sliceCount, gb);
        else
                dp_pathf(buf, size, "%ug.%ugb", gp.sliceCount, gb);
        *ret_mem = gp.memorySizeMB << 20;
        return 0;
}

static int add_migs(discover_ctx *c, size_t pos, nvmlDevice_t h, unsigned minor) {
        nvml_fns *f = &c->st->f;
        dp_hw_device *d = &c->s->devices[pos];
        unsigned max = 0;
        if (!f->nvmlDeviceGetMaxMigDeviceCount || !f->nvmlDeviceGetMigDeviceHandleByIndex ||
            f->nvmlDeviceGetMaxMigDeviceCount(h, &max) != NVML_SUCCESS)
                return 0;
        max = DP_MIN(max, 64u);
        for (unsigned j = 0; j < max; j++) {
                nvmlDevice_t mh;
                if (f->nvmlDeviceGetMigDeviceHandleByIndex(h, j, &mh) != NVML_SUCCESS) continue;
                if (d->n_migs >= DP_DEVICES_MIG_MAX)
                        return dp_error_set(c->err, -E2BIG, "nvml backend: %s has more than %d MIG devices", d->id,
                                            DP_DEVICES_MIG_MAX);
                char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = "";
                unsigned gi = 0, ci = 0;
                nvmlReturn_t r = f->nvmlDeviceGetUUID(mh, uuid, sizeof uuid);
                if (r != NVML_SUCCESS) return nvml_fail(c->st, c->err, r, "MIG nvmlDeviceGetUUID");
                if (!f->nvmlDeviceGetGpuInstanceId || f->nvmlDeviceGetGpuInstanceId(mh, &gi) != NVML_SUCCESS ||
                    !f->nvmlDeviceGetComputeInstanceId || f->nvmlDeviceGetComputeInstanceId(mh, &ci) != NVML_SUCCESS)
                        return dp_error_set(c->err, -EIO, "nvml backend: %s: MIG device %s: no GPU/compute instance id",
                                            d->id, uuid);
                char profile[48];
                uint64_t mem = 0;
                if (mig_profile(c, h, d->memory_bytes, gi, ci, profile, sizeof profile, &mem) < 0)
                        return dp_error_set(c->err, -EIO, "nvml backend: %s: MIG device %s: cannot read its profile",
                                            d->id, uuid);
                nvmlMemory_t mm;
                if (f->nvmlDeviceGetMemoryInfo(mh, &mm) == NVML_SUCCESS && mm.total) mem = mm.total;
                dp_mig_device *nm = realloc(d->migs, (d->n_migs + 1) * sizeof *nm);
                if (!nm) return dp_error_set(c->err, -ENOMEM, "out of memory");
                d->migs = nm;
                dp_mig_device *m = &nm[d->n_migs];
                memset(m, 0, sizeof *m);
                m->index = (unsigned)d->n_migs;
                m->parent = pos;
                m->memory_bytes = mem;
                d->n_migs++;
                if (!(m->id = dp_mig_id_new(d->id, profile, m->index)) || !(m->uuid = dp_strdup(uuid)) ||
                    !(m->profile = dp_strdup(profile)))
                        return dp_error_set(c->err, -ENOMEM, "out of memory");
                int gcap = cap_minor(c->minors, minor, gi, -1), ccap = cap_minor(c->minors, minor, gi, (int)ci);
                char node[64];
                int e = 0;
                if (gcap >= 0) {
                        dp_pathf(node, sizeof node, "/dev/nvidia-caps/nvidia-cap%d", gcap);
                        e = dp_backend_strv_add(&m->device_nodes, &m->n_device_nodes, node);
                }
                if (e >= 0 && ccap >= 0) {
                        dp_pathf(node, sizeof node, "/dev/nvidia-caps/nvidia-cap%d", ccap);
                        e = dp_backend_strv_add(&m->device_nodes, &m->n_device_nodes, node);
                }
                if (e < 0) return dp_error_set(c->err, e, "out of memory");
                nvml_mig *hm = realloc(c->st->migs, (c->st->n_migs + 1) * sizeof *hm);
                if (!hm) return dp_error_set(c->err, -ENOMEM, "out of memory");
                c->st->migs = hm;
                hm[c->st->n_migs] = (nvml_mig){.gpu = pos, .gi = gi, .ci = ci, .id = dp_strdup(m->id)};
                if (!hm[c->st->n_migs++].id) return dp_error_set(c->err, -ENOMEM, "out of memory");
        }
        return 0;
}

/* The device's NUMA node from sysfs into *ret (-1 when sysfs does not say);
 * -ENOMEM when the path could not be made: out of memory is not "unknown". */
static int numa_from_sysfs(const dp_backend *b, const char *bus_id, int *ret) {
        char rel[128], buf[32];
        dp_pathf(rel, sizeof rel, "bus/pci/devices/%s/numa_node", bus_id);
        _cleanup_free_ char *p = dp_backend_sysfs_path(b, rel);
        if (!p) return -ENOMEM;
        long v = dp_backend_read_line(p, buf, sizeof buf) > 0 ? strtol(buf, NULL, 10) : -1;
        *ret = v >= 0 && v <= 63 ? (int)v : -1;
        return 0;
}

static int add_gpu(discover_ctx *c, unsigned i, size_t *dcap) {
        nvml_fns *f = &c->st->f;
        nvmlDevice_t h;
        nvmlReturn_t r = f->nvmlDeviceGetHandleByIndex_v2(i, &h);
        if (r != NVML_SUCCESS) return nvml_fail(c->st, c->err, r, "nvmlDeviceGetHandleByIndex");
        int e = 0;
        dp_hw_device *d = dp_backend_set_add(c->s, dcap, &e);
        if (!d) return dp_error_set(c->err, e, "nvml backend: more than %d GPUs", DP_DEVICES_MAX);
        size_t pos = c->s->n_devices - 1;
        char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = "", name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = "";
        if ((r = f->nvmlDeviceGetUUID(h, uuid, sizeof uuid)) != NVML_SUCCESS)
                return nvml_fail(c->st, c->err, r, "nvmlDeviceGetUUID");
        if ((r = f->nvmlDeviceGetName(h, name, sizeof name)) != NVML_SUCCESS)
                return nvml_fail(c->st, c->err, r, "nvmlDeviceGetName");
        nvmlMemory_t mem = {0};
        if ((r = f->nvmlDeviceGetMemoryInfo(h, &mem)) != NVML_SUCCESS)
                return nvml_fail(c->st, c->err, r, "nvmlDeviceGetMemoryInfo");
        nvmlPciInfo_t pci;
        memset(&pci, 0, sizeof pci);
        if ((r = f->nvmlDeviceGetPciInfo_v3(h, &pci)) != NVML_SUCCESS)
                return nvml_fail(c->st, c->err, r, "nvmlDeviceGetPciInfo");
        unsigned minor = 0;
        if ((r = f->nvmlDeviceGetMinorNumber(h, &minor)) != NVML_SUCCESS)
                return nvml_fail(c->st, c->err, r, "nvmlDeviceGetMinorNumber");
        /* NVML's "00000000:07:00.0" -> sysfs' "0000:07:00.0". */
        const char *dot = strrchr(pci.busId, '.');
        char bus_id[32];
        dp_pathf(bus_id, sizeof bus_id, "%04x:%02x:%02x.%c", pci.domain & 0xffff, pci.bus & 0xff, pci.device & 0x1f,
                 dot && dot[1] >= '0' && dot[1] <= '7' ? dot[1] : '0');
        d->index = i;
        d->memory_bytes = mem.total;
        unsigned numa = 0;
        if (f->nvmlDeviceGetNumaNodeId && f->nvmlDeviceGetNumaNodeId(h, &numa) == NVML_SUCCESS && numa <= 63)
                d->numa_node = (int)numa;
        else if (numa_from_sysfs(c->b, bus_id, &d->numa_node) < 0)
                return dp_error_set(c->err, -ENOMEM, "out of memory");
        nvmlDeviceArchitecture_t arch = NVML_DEVICE_ARCH_UNKNOWN;
        if (f->nvmlDeviceGetArchitecture) (void)f->nvmlDeviceGetArchitecture(h, &arch);
        char node[64], cc[32] = "", mtext[32];
        int major = 0, minor_cc = 0;
        if (f->nvmlDeviceGetCudaComputeCapability &&
            f->nvmlDeviceGetCudaComputeCapability(h, &major, &minor_cc) == NVML_SUCCESS)
                dp_pathf(cc, sizeof cc, "%d.%d.0", major, minor_cc);
        dp_pathf(node, sizeof node, "/dev/nvidia%u", minor);
        bytes_text(mem.total, mtext, sizeof mtext);
        const char *an = arch_name(arch);
        if (!(d->id = dp_asprintf("gpu-%u", i)) || !(d->type = dp_strdup("gpu")) || !(d->uuid = dp_strdup(uuid)) ||
            !(d->product = dp_strdup(name)) || !(d->driver_version = dp_strdup(c->driver)) ||
            !(d->pci_bus_id = dp_strdup(bus_id)) || (an && !(d->architecture = dp_strdup(an))) ||
            dp_backend_strv_add(&d->device_nodes, &d->n_device_nodes, node) < 0 ||
            dp_backend_attr_str(d, "productName", DP_HW_ATTR_STRING, name) < 0 ||
            dp_backend_attr_str(d, "architecture", DP_HW_ATTR_STRING, an) < 0 ||
            dp_backend_attr_str(d, "driverVersion", DP_HW_ATTR_VERSION, c->driver) < 0 ||
            (c->cuda[0] && dp_backend_attr_str(d, "cudaDriverVersion", DP_HW_ATTR_VERSION, c->cuda) < 0) ||
            (cc[0] && dp_backend_attr_str(d, "cudaComputeCapability", DP_HW_ATTR_VERSION, cc) < 0) ||
            dp_backend_attr_int(d, "minor", minor) < 0 || dp_backend_capacity(d, "memory", mtext) < 0)
                return dp_error_set(c->err, -ENOMEM, "out of memory");
        nvml_gpu *g = realloc(c->st->gpus, (c->st->n_gpus + 1) * sizeof *g);
        if (!g) return dp_error_set(c->err, -ENOMEM, "out of memory");
        c->st->gpus = g;
        g[c->st->n_gpus] = (nvml_gpu){.h = h, .id = dp_strdup(d->id)};
        if (!g[c->st->n_gpus++].id) return dp_error_set(c->err, -ENOMEM, "out of memory");
        unsigned cur = 0, pending = 0;
        if (f->nvmlDeviceGetMigMode && f->nvmlDeviceGetMigMode(h, &cur, &pending) == NVML_SUCCESS &&
            cur == NVML_DEVICE_MIG_ENABLE) {
                d->mig_enabled = true;
                return add_migs(c, pos, h, minor);
        }
        return 0;
}

/* A GPU whose events cannot be registered stays healthy but unmonitored
 * (said once in the log), as NVIDIA's plugin does. */
static void register_events(nvml_state *st) {
        nvmlReturn_t r = st->f.nvmlEventSetCreate(&st->events);
        if (r != NVML_SUCCESS) {
                st->events = NULL;
                log_warning("nvml backend: nvmlEventSetCreate: %s; no GPU health monitoring", nvml_str(st, r));
                return;
        }
        for (size_t i = 0; i < st->n_gpus; i++) {
                unsigned long long types = EVENTS_WANTED;
                if (st->f.nvmlDeviceGetSupportedEventTypes &&
                    st->f.nvmlDeviceGetSupportedEventTypes(st->gpus[i].h, &types) == NVML_SUCCESS)
                        types &= EVENTS_WANTED;
                r = types ? st->f.nvmlDeviceRegisterEvents(st->gpus[i].h, types, st->events) : NVML_ERROR_NOT_SUPPORTED;
                st->gpus[i].monitored = r == NVML_SUCCESS;
                if (!st->gpus[i].monitored)
                        log_warning("nvml backend: %s: no Xid/ECC events (%s); its health is not monitored",
                                    st->gpus[i].id, nvml_str(st, r));
        }
}

static int nvml_discover(dp_backend *b, dp_device_set **ret, dp_error *err) {
        nvml_state *st = b->priv;
        forget_handles(st);
        _cleanup_(dp_device_set_freep) dp_device_set *s =
                dp_backend_set_new(b, "nvml", "nvidia.com", "gpu", "gpu", "NVIDIA_VISIBLE_DEVICES");
        if (!s) return dp_error_set(err, -ENOMEM, "out of memory");
        if (!b->cfg->driver_name) { /* gpu.nvidia.com whatever the domain, as NVIDIA's DRA driver */
                free(s->driver_name);
                if (!(s->driver_name = dp_strdup("gpu.nvidia.com"))) return dp_error_set(err, -ENOMEM, "out of memory");
        }
        static const char *const common[] = {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"};
        for (size_t i = 0; i < ELEMENTSOF(common); i++)
                if (dp_backend_strv_add(&s->common_device_nodes, &s->n_common_device_nodes, common[i]) < 0)
                        return dp_error_set(err, -ENOMEM, "out of memory");
        discover_ctx c = {.b = b, .st = st, .s = s, .err = err};
        nvmlReturn_t r = st->f.nvmlSystemGetDriverVersion(c.driver, sizeof c.driver);
        if (r != NVML_SUCCESS) return nvml_fail(st, err, r, "nvmlSystemGetDriverVersion");
        int cuda = 0;
        if (st->f.nvmlSystemGetCudaDriverVersion_v2 && st->f.nvmlSystemGetCudaDriverVersion_v2(&cuda) == NVML_SUCCESS &&
            cuda > 0)
                dp_pathf(c.cuda, sizeof c.cuda, "%d.%d.0", cuda / 1000, (cuda % 1000) / 10);
        unsigned count = 0;
        if ((r = st->f.nvmlDeviceGetCount_v2(&count)) != NVML_SUCCESS)
                return nvml_fail(st, err, r, "nvmlDeviceGetCount");
        _cleanup_free_ char *mpath =
                dp_asprintf("%s/driver/nvidia-caps/mig-minors", b->proc_root ? b->proc_root : "/proc");
        _cleanup_free_ char *minors = NULL;
        if (!mpath || read_small(mpath, &minors) < 0) return dp_error_set(err, -ENOMEM, "out of memory");
        c.minors = minors;
        size_t dcap = 0;
        for (unsigned i = 0; i < count; i++) {
                int e = add_gpu(&c, i, &dcap);
                if (e < 0) return e;
        }
        if (st->f.nvmlDeviceGetP2PStatus)
                for (size_t i = 0; i < st->n_gpus; i++)
                        for (size_t j = i + 1; j < st->n_gpus; j++) {
                                nvmlGpuP2PStatus_t p2p = NVML_P2P_STATUS_UNKNOWN;
                                if (st->f.nvmlDeviceGetP2PStatus(st->gpus[i].h, st->gpus[j].h,
                                                                 NVML_P2P_CAPS_INDEX_NVLINK, &p2p) != NVML_SUCCESS ||
                                    p2p != NVML_P2P_STATUS_OK)
                                        continue;
                                s->devices[i].nvlink[j / 64] |= 1ULL << (j % 64);
                                s->devices[j].nvlink[i / 64] |= 1ULL << (i % 64);
                        }
        register_events(st);
        *ret = TAKE_PTR(s);
        return 0;
}

static int raise_all_lost(dp_backend *b, uint64_t now) {
        nvml_state *st = b->priv;
        char cls[DP_FAULT_CLASS_MAX];
        if (dp_fault_table_classify(&b->cfg->faults, DP_FAULT_LOST, 0, cls) != DP_FAULT_UNHEALTHY) return 0;
        for (size_t i = 0; i < st->n_gpus; i++) {
                int r = dp_fault_tracker_raise(&b->tracker, st->gpus[i].id, cls, false, now);
                if (r < 0) return r;
        }
        return 0;
}

/* 0, or -ENOMEM/-E2BIG from the tracker. */
static int handle_event(dp_backend *b, const nvmlEventData_t *ev, uint64_t now) {
        nvml_state *st = b->priv;
        dp_fault_kind kind;
        if (ev->eventType & nvmlEventTypeXidCriticalError)
                kind = DP_FAULT_XID;
        else if (ev->eventType & nvmlEventTypeDoubleBitEccError)
                kind = DP_FAULT_ECC_DBE;
        else if (ev->eventType & nvmlEventTypeSingleBitEccError)
                kind = DP_FAULT_ECC_SBE;
        else
                return 0;
        char cls[DP_FAULT_CLASS_MAX];
        if (dp_fault_table_classify(&b->cfg->faults, kind, ev->eventData, cls) != DP_FAULT_UNHEALTHY) return 0;
        size_t g = SIZE_MAX;
        for (size_t i = 0; i < st->n_gpus; i++)
                if (st->gpus[i].h == ev->device) g = i;
        if (g == SIZE_MAX) return 0; /* an event for a device we do not publish */
        bool scoped = false;
        int r;
        if (ev->gpuInstanceId != DP_NVML_NO_INSTANCE)
                for (size_t i = 0; i < st->n_migs; i++) {
                        const nvml_mig *m = &st->migs[i];
                        if (m->gpu != g || m->gi != ev->gpuInstanceId) continue;
                        if (ev->computeInstanceId != DP_NVML_NO_INSTANCE && m->ci != ev->computeInstanceId) continue;
                        if ((r = dp_fault_tracker_raise(&b->tracker, m->id, cls, false, now)) < 0) return r;
                        scoped = true;
                }
        if (!scoped && (r = dp_fault_tracker_raise(&b->tracker, st->gpus[g].id, cls, false, now)) < 0) return r;
        return 0;
}

static int nvml_poll(dp_backend *b, const dp_device_set *set, uint64_t now_usec, dp_error *err) {
        nvml_state *st = b->priv;
        if (!st->events) return 0;
        for (unsigned n = 0; n < EVENTS_PER_DISPATCH; n++) {
                nvmlEventData_t ev;
                memset(&ev, 0, sizeof ev);
                nvmlReturn_t r = st->f.nvmlEventSetWait_v2(st->events, &ev, 0);
                if (r == NVML_ERROR_TIMEOUT) return 0;
                int e;
                if (r != NVML_SUCCESS) {
                        if ((e = raise_all_lost(b, now_usec)) < 0)
                                return dp_error_set(err, e, "nvml backend: recording faults: %s", strerror(-e));
                        return nvml_fail(st, err, r, "nvmlEventSetWait");
                }
                if ((e = handle_event(b, &ev, now_usec)) < 0)
                        return dp_error_set(err, e, "nvml backend: recording faults: %s", strerror(-e));
        }
        return 0;
}

const dp_backend_ops dp_backend_nvml_ops = {
        .open = nvml_open,
        .discover = nvml_discover,
        .poll = nvml_poll,
        .close = nvml_close,
        .polls = true,
};
