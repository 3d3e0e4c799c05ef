/* SPDX-License-Identifier: Apache-2.0
 *
 * fake-nvml.c — a stand-in libnvidia-ml.so.1 for the test suite. It
 * implements exactly the NVML subset of src/devices/nvml-api.h from a YAML
 * description named by $DP_FAKE_NVML_CONFIG (format: the fixtures/<name>.nvml.yaml files
 * and docs/backends.md), so tests exercise the nvml backend's real dlopen
 * path. Without that variable nvmlInit fails with DRIVER_NOT_LOADED, as on a
 * node without the driver.
 *
 * Events: the file named by the description's `events:` key (relative to
 * the description) or by $DP_FAKE_NVML_EVENTS is read from where the last
 * wait stopped; each complete line is one event:
 *     <gpu index> xid <n> [gi <id> [ci <id>]]
 *     <gpu index> ecc-sbe | ecc-dbe
 *     fail                       (the wait itself fails: NVML_ERROR_UNKNOWN)
 * A GPU with `events: none` supports no event type (unmonitored).
 * Tests append lines and call the backend's dispatch; nothing sleeps unless
 * a caller passes a non-zero timeout (then the fake re-reads every 5 ms).
 */
#include <libgen.h>
#include <stdio.h>
#include <time.h>

#include "base/strbuf.h"
#include "devices/nvml-api.h"
#include "doc/doc.h"

#define EXPORT __attribute__((visibility("default")))

/* Prototypes from the shared declaration, so every definition below must
 * match the signature the backend calls through. */
#define X(req, name, params) EXPORT nvmlReturn_t name params;
DP_NVML_FUNCS(X)
#undef X
EXPORT const char *nvmlErrorString(nvmlReturn_t r);

enum { OBJ_GPU = 1, OBJ_MIG, OBJ_GI, OBJ_CI };

typedef struct fake_gpu fake_gpu;
typedef struct fake_mig fake_mig;

typedef struct obj {
        int kind;
        fake_gpu *gpu;
        fake_mig *mig;
} obj;

struct fake_mig {
        obj dev, gi_obj, ci_obj;
        char uuid[96];
        unsigned gi, ci, profile, ci_profile;
};

typedef struct profile {
        unsigned index, id, slices, memory_mib, sms;
} profile;

struct fake_gpu {
        obj dev;
        unsigned index;
        char name[96], uuid[96], bus_id[32];
        unsigned domain, bus, device;
        unsigned arch, minor, cc_major, cc_minor;
        int numa; /* -1: not supported */
        unsigned long long memory_mib;
        bool mig_enabled;
        fake_mig migs[16];
        size_t n_migs;
        unsigned long long registered;
        bool no_events; /* `events: none`: supports no event type */
        int nvgroup;    /* NVLink group, -1 none */
};

static struct {
        bool inited;
        char driver[80];
        int cuda;
        fake_gpu gpus[64];
        size_t n_gpus;
        profile gi_profiles[16], ci_profiles[16];
        size_t n_gi_profiles, n_ci_profiles;
        char events_path[4096];
        long events_off;
} F;

typedef struct nvmlEventSet_st {
        int unused;
} event_set;

static const char *sget(const dp_doc_node *m, const char *k, const char *def) {
        const char *s;
        if (dp_doc_get_str(dp_doc_get(m, k), true, &s, NULL) < 0) return def;
        return s;
}
static long long iget(const dp_doc_node *m, const char *k, long long def) {
        int64_t v;
        if (dp_doc_get_int64(dp_doc_get(m, k), &v, NULL) < 0) return def;
        return v;
}

static void load_profiles(const dp_doc_node *seq, profile *v, size_t *n) {
        for (size_t i = 0; seq && seq->type == DP_DOC_SEQ && i < seq->n && *n < 16; i++) {
                const dp_doc_node *p = seq->items[i];
                v[(*n)++] = (profile){(unsigned)iget(p, "index", 0), (unsigned)iget(p, "id", 0),
                                      (unsigned)iget(p, "slices", 1), (unsigned)iget(p, "memoryMiB", 0),
                                      (unsigned)iget(p, "multiprocessors", 0)};
        }
}

static nvmlReturn_t load(const char *path) {
        dp_doc_set *ds = dp_doc_set_new();
        if (!ds || dp_doc_parse_file(ds, path, NULL) < 0 || dp_doc_count(ds) != 1) {
                dp_doc_set_free(ds);
                return NVML_ERROR_UNKNOWN;
        }
        const dp_doc_node *root = dp_doc_root(ds, 0);
        memset(&F, 0, sizeof F);
        snprintf(F.driver, sizeof F.driver, "%s", sget(root, "driverVersion", "550.54.15"));
        F.cuda = (int)iget(root, "cudaDriverVersion", 12040);
        load_profiles(dp_doc_get(root, "migProfiles"), F.gi_profiles, &F.n_gi_profiles);
        load_profiles(dp_doc_get(root, "computeProfiles"), F.ci_profiles, &F.n_ci_profiles);
        const char *ev = getenv("DP_FAKE_NVML_EVENTS");
        if (ev && *ev)
                snprintf(F.events_path, sizeof F.events_path, "%s", ev);
        else if ((ev = sget(root, "events", NULL))) {
                char *copy = strdup(path);
                if (copy) snprintf(F.events_path, sizeof F.events_path, "%s/%s", ev[0] == '/' ? "" : dirname(copy), ev);
                free(copy);
        }
        const dp_doc_node *gpus = dp_doc_get(root, "gpus");
        for (size_t i = 0; gpus && gpus->type == DP_DOC_SEQ && i < gpus->n && F.n_gpus < 64; i++) {
                const dp_doc_node *g = gpus->items[i];
                fake_gpu *d = &F.gpus[F.n_gpus];
                d->dev = (obj){OBJ_GPU, d, NULL};
                d->index = (unsigned)F.n_gpus++;
                snprintf(d->name, sizeof d->name, "%s", sget(g, "name", "NVIDIA Fake GPU"));
                snprintf(d->uuid, sizeof d->uuid, "%s", sget(g, "uuid", "GPU-00000000-0000-0000-0000-000000000000"));
                snprintf(d->bus_id, sizeof d->bus_id, "%s", sget(g, "pciBusId", "00000000:00:00.0"));
                sscanf(d->bus_id, "%x:%x:%x", &d->domain, &d->bus, &d->device);
                d->arch = (unsigned)iget(g, "architecture", NVML_DEVICE_ARCH_AMPERE);
                d->minor = (unsigned)iget(g, "minor", (long long)d->index);
                d->numa = (int)iget(g, "numaNode", -1);
                d->memory_mib = (unsigned long long)iget(g, "memoryMiB", 81920);
                sscanf(sget(g, "computeCapability", "8.0"), "%u.%u", &d->cc_major, &d->cc_minor);
                d->nvgroup = -1;
                d->no_events = !strcmp(sget(g, "events", "all"), "none");
                const dp_doc_node *mig = dp_doc_get(g, "mig");
                d->mig_enabled = mig && mig->type == DP_DOC_SEQ;
                for (size_t j = 0; d->mig_enabled && j < mig->n && d->n_migs < 16; j++) {
                        const dp_doc_node *m = mig->items[j];
                        fake_mig *x = &d->migs[d->n_migs++];
                        x->dev = (obj){OBJ_MIG, d, x};
                        x->gi_obj = (obj){OBJ_GI, d, x};
                        x->ci_obj = (obj){OBJ_CI, d, x};
                        snprintf(x->uuid, sizeof x->uuid, "%s", sget(m, "uuid", "MIG-0"));
                        x->gi = (unsigned)iget(m, "gi", 0);
                        x->ci = (unsigned)iget(m, "ci", 0);
                        x->profile = (unsigned)iget(m, "profile", 0);
                        x->ci_profile = (unsigned)iget(m, "ciProfile", 0);
                }
        }
        /* nvlink: all | none | [[0,1],[2,3]] */
        const dp_doc_node *nv = dp_doc_get(root, "nvlink");
        const char *s;
        if (dp_doc_get_str(nv, false, &s, NULL) >= 0 && !strcmp(s, "all"))
                for (size_t i = 0; i < F.n_gpus; i++)
                        F.gpus[i].nvgroup = 0;
        for (size_t k = 0; nv && nv->type == DP_DOC_SEQ && k < nv->n; k++)
                for (size_t j = 0; nv->items[k]->type == DP_DOC_SEQ && j < nv->items[k]->n; j++) {
                        int64_t v;
                        if (dp_doc_get_int64(nv->items[k]->items[j], &v, NULL) >= 0 && v >= 0 && (size_t)v < F.n_gpus)
                                F.gpus[v].nvgroup = (int)k;
                }
        dp_doc_set_free(ds);
        return NVML_SUCCESS;
}

static fake_gpu *gpu_of(nvmlDevice_t h) {
        obj *o = (obj *)h;
        return o && o->kind == OBJ_GPU ? o->gpu : NULL;
}
static obj *any_of(nvmlDevice_t h) {
        obj *o = (obj *)h;
        return o && (o->kind == OBJ_GPU || o->kind == OBJ_MIG) ? o : NULL;
}

EXPORT nvmlReturn_t nvmlInit_v2(void) {
        const char *cfg = getenv("DP_FAKE_NVML_CONFIG");
        if (!cfg || !*cfg) return NVML_ERROR_DRIVER_NOT_LOADED;
        nvmlReturn_t r = load(cfg);
        if (r == NVML_SUCCESS) F.inited = true;
        return r;
}
EXPORT nvmlReturn_t nvmlShutdown(void) {
        if (!F.inited) return NVML_ERROR_UNINITIALIZED;
        F.inited = false;
        return NVML_SUCCESS;
}
EXPORT const char *nvmlErrorString(nvmlReturn_t r) {
        switch (r) {
        case NVML_SUCCESS: return "Success";
        case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
        case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
        case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
        case NVML_ERROR_NOT_FOUND: return "Not Found";
        case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
        case NVML_ERROR_TIMEOUT: return "Timeout";
        default: return "Unknown Error";
        }
}

#define CHECK_INIT()                                                                                                   \
        do {                                                                                                           \
                if (!F.inited) return NVML_ERROR_UNINITIALIZED;                                                        \
        } while (0)

static nvmlReturn_t copy_str(char *dst, unsigned len, const char *src) {
        if (!dst) return NVML_ERROR_INVALID_ARGUMENT;
        if (strlen(src) + 1 > len) return NVML_ERROR_INSUFFICIENT_SIZE;
        memcpy(dst, src, strlen(src) + 1);
        return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int len) {
        CHECK_INIT();
        return copy_str(v, len, F.driver);
}
EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) {
        CHECK_INIT();
        *v = F.cuda;
        return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n) {
        CHECK_INIT();
        *n = (unsigned)F.n_gpus;
        return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d) {
        CHECK_INIT();
        if (i >= F.n_gpus) return NVML_ERROR_INVALID_ARGUMENT;
        *d = (nvmlDevice_t)&F.gpus[i].dev;
        return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t h, char *uuid, unsigned int len) {
        CHECK_INIT();
        obj *o = any_of(h);
        if (!o) return NVML_ERROR_INVALID_ARGUMENT;
        return copy_str(uuid, len, o->mig ? o->mig->uuid : o->gpu->uuid);
}
EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t h, char *name, unsigned int len) {
        CHECK_INIT();
        obj *o = any_of(h);
        if (!o) return NVML_ERROR_INVALID_ARGUMENT;
        return copy_str(name, len, o->gpu->name);
}
EXPORT nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t h, nvmlDeviceArchitecture_t *a) {
        CHECK_INIT();
        fake_gpu *g = gpu_of(h);
        if (!g) return NVML_ERROR_INVALID_ARGUMENT;
        *a = g->arch;
        return NVML_SUCCESS;
}
static const profile *find_profile(const profile *v, size_t n, unsigned by_index, unsigned by_id, bool use_id) {
        for (size_t i = 0; i < n; i++)
                if (use_id ? v[i].id == by_id : v[i].index == by_index) return &v[i];
        return NULL;
}
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t h, nvmlMemory_t *m) {
        CHECK_INIT();
        obj *o = any_of(h);
        if (!o || !m) return NVML_ERROR_INVALID_ARGUMENT;
        unsigned long long mib = o->gpu->memory_mib;
        if (o->mig) {
                const profile *p = find_profile(F.gi_profiles, F.n_gi_profiles, 0, o->mig->profile, true);
                mib = p ? p->memory_mib : 0;
        }
        m->total = mib << 20;
        m->used = 0;
        m->free = m->total;
        return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t h, nvmlPciInfo_t *p) {
        CHECK_INIT();
        fake_gpu *g = gpu_of(h);
        if (!g || !p) return NVML_ERROR_INVALID_ARGUMENT;
        memset(p, 0, sizeof *p);
        p->domain = g->domain;
        p->bus = g->bus;
        p->device = g->device;
        p->pciDeviceId = 0x20b210de;
        snprintf(p->busId, sizeof p->busId, "%s", g->bus_id);
        snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "%04x:%02x:%02x.0", g->domain & 0xffff, g->bus, g->device);
        return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t h, unsigned int *node) {
        CHECK_INIT();
        fake_gpu *g = gpu_of(h);
        if (!g) return NVML_ERROR_INVALID_ARGUMENT;
        if (g->numa < 0) return NVML_ERROR_NOT_SUPPORTED;
        *node = (unsigned)g->numa;
        return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t h, unsigned int *minor) {
        CHECK_INIT();
        fake_gpu *g = gpu_of(h);
        if (!g) return NVML_ERROR_INVALID_ARGUMENT;
        *minor = g->minor;
        return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t h, int *major, int *minor) {
        CHECK_INIT();
        fake_gpu *g = gpu_of(h);
        if (!g) return NVML_ERROR_INVALID_ARGUMENT;
        *major = (int)g->cc_major;
        *minor = (int)g->cc_minor;
        return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t h, unsigned int *cur, unsigned int *pending) {
        CHECK_INIT();
        fake_gpu *g = gpu_of(h);
        if (!g) return NVML_ERROR_INVALID_ARGUMENT;
        *cur = *pending = g->mig_enabled ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
        return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t h, unsigned int *count) {
        CHECK_INIT();
        fake_gpu *g = gpu_of(h);
        if (!g) return NVML_ERROR_INVALID_ARGUMENT;
        *count = g->mig_enabled ? 7 : 0;
        return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t h, unsigned int i, nvmlDevice_t *mig) {
        CHECK_INIT();
        fake_gpu *g = gpu_of(h);
        if (!g) return NVML_ERROR_INVALID_ARGUMENT;
        if (i >= g->n_migs) return NVML_ERROR_NOT_FOUND;
        *mig = (nvmlDevice_t)&g->migs[i].dev;
        return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t h, unsigned int *id) {
        CHECK_INIT();
        obj *o = any_of(h);
        if (!o || !o->mig) return NVML_ERROR_INVALID_ARGUMENT;
        *id = o->mig->gi;
        return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t h, unsigned int *id) {
        CHECK_INIT();
        obj *o = any_of(h);
        if (!o || !o->mig) return NVML_ERROR_INVALID_ARGUMENT;
        *id = o->mig->ci;
        return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceById(nvmlDevice_t h, unsigned int id, nvmlGpuInstance_t *gi) {
        CHECK_INIT();
        fake_gpu *g = gpu_of(h);
        if (!g) return NVML_ERROR_INVALID_ARGUMENT;
        for (size_t i = 0; i < g->n_migs; i++)
                if (g->migs[i].gi == id) {
                        *gi = (nvmlGpuInstance_t)&g->migs[i].gi_obj;
                        return NVML_SUCCESS;
                }
        return NVML_ERROR_NOT_FOUND;
}
EXPORT nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gi, nvmlGpuInstanceInfo_t *info) {
        CHECK_INIT();
        obj *o = (obj *)gi;
        if (!o || o->kind != OBJ_GI) return NVML_ERROR_INVALID_ARGUMENT;
        memset(info, 0, sizeof *info);
        info->device = (nvmlDevice_t)&o->gpu->dev;
        info->id = o->mig->gi;
        info->profileId = o->mig->profile;
        return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t h, unsigned int index,
                                                        nvmlGpuInstanceProfileInfo_t *info) {
        CHECK_INIT();
        if (!gpu_of(h)) return NVML_ERROR_INVALID_ARGUMENT;
        const profile *p = find_profile(F.gi_profiles, F.n_gi_profiles, index, 0, false);
        if (!p) return NVML_ERROR_NOT_SUPPORTED;
        memset(info, 0, sizeof *info);
        info->id = p->id;
        info->sliceCount = p->slices;
        info->instanceCount = 7 / (p->slices ? p->slices : 1);
        info->multiprocessorCount = p->sms;
        info->memorySizeMB = p->memory_mib;
        return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlGpuInstanceGetComputeInstanceById(nvmlGpuInstance_t gi, unsigned int id,
                                                          nvmlComputeInstance_t *ci) {
        CHECK_INIT();
        obj *o = (obj *)gi;
        if (!o || o->kind != OBJ_GI) return NVML_ERROR_INVALID_ARGUMENT;
        if (o->mig->ci != id) return NVML_ERROR_NOT_FOUND;
        *ci = (nvmlComputeInstance_t)&o->mig->ci_obj;
        return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlComputeInstanceGetInfo_v2(nvmlComputeInstance_t ci, nvmlComputeInstanceInfo_t *info) {
        CHECK_INIT();
        obj *o = (obj *)ci;
        if (!o || o->kind != OBJ_CI) return NVML_ERROR_INVALID_ARGUMENT;
        memset(info, 0, sizeof *info);
        info->device = (nvmlDevice_t)&o->gpu->dev;
        info->gpuInstance = (nvmlGpuInstance_t)&o->mig->gi_obj;
        info->id = o->mig->ci;
        info->profileId = o->mig->ci_profile;
        return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(nvmlGpuInstance_t gi, unsigned int index,
                                                                 unsigned int eng,
                                                                 nvmlComputeInstanceProfileInfo_t *info) {
        CHECK_INIT();
        obj *o = (obj *)gi;
        if (!o || o->kind != OBJ_GI || eng != NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
                return NVML_ERROR_INVALID_ARGUMENT;
        const profile *p = find_profile(F.ci_profiles, F.n_ci_profiles, index, 0, false);
        if (!p) return NVML_ERROR_NOT_SUPPORTED;
        memset(info, 0, sizeof *info);
        info->id = p->id;
        info->sliceCount = p->slices;
        info->multiprocessorCount = p->sms;
        return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b, nvmlGpuP2PCapsIndex_t idx,
                                           nvmlGpuP2PStatus_t *st) {
        CHECK_INIT();
        fake_gpu *x = gpu_of(a), *y = gpu_of(b);
        if (!x || !y) return NVML_ERROR_INVALID_ARGUMENT;
        if (idx != NVML_P2P_CAPS_INDEX_NVLINK)
                *st = NVML_P2P_STATUS_OK;
        else
                *st = x->nvgroup >= 0 && x->nvgroup == y->nvgroup ? NVML_P2P_STATUS_OK : NVML_P2P_STATUS_NOT_SUPPORTED;
        return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set) {
        CHECK_INIT();
        event_set *s = calloc(1, sizeof *s);
        if (!s) return NVML_ERROR_MEMORY;
        *set = s;
        /* Events written before the set existed are not delivered. */
        FILE *f = F.events_path[0] ? fopen(F.events_path, "re") : NULL;
        F.events_off = 0;
        if (f) {
                fseek(f, 0, SEEK_END);
                F.events_off = ftell(f);
                fclose(f);
        }
        return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t h, unsigned long long types, nvmlEventSet_t set) {
        CHECK_INIT();
        fake_gpu *g = gpu_of(h);
        if (!g || !set) return NVML_ERROR_INVALID_ARGUMENT;
        g->registered |= types;
        return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t h, unsigned long long *types) {
        CHECK_INIT();
        if (!gpu_of(h)) return NVML_ERROR_INVALID_ARGUMENT;
        if (gpu_of(h)->no_events) {
                *types = 0;
                return NVML_SUCCESS;
        }
        *types = nvmlEventTypeXidCriticalError | nvmlEventTypeDoubleBitEccError | nvmlEventTypeSingleBitEccError |
                 nvmlEventTypePState | nvmlEventTypeClock;
        return NVML_SUCCESS;
}

/* One complete line from the events file, or 0. */
static int next_line(char *buf, size_t size) {
        FILE *f = F.events_path[0] ? fopen(F.events_path, "re") : NULL;
        if (!f) return 0;
        int got = 0;
        if (fseek(f, F.events_off, SEEK_SET) == 0 && fgets(buf, (int)size, f) && strchr(buf, '\n')) {
                F.events_off = ftell(f);
                got = 1;
        }
        fclose(f);
        return got;
}

/* 1: an event in *d; 0: a line that is no event for this set; -1: "fail". */
static int parse_event(const char *line, nvmlEventData_t *d) {
        unsigned idx, v, gi, ci;
        char what[16];
        if (!strncmp(line, "fail", 4)) return -1;
        memset(d, 0, sizeof *d);
        d->gpuInstanceId = d->computeInstanceId = 0xFFFFFFFFu;
        int n = sscanf(line, "%u %15s %u gi %u ci %u", &idx, what, &v, &gi, &ci);
        if (n < 2 || idx >= F.n_gpus) return 0;
        fake_gpu *g = &F.gpus[idx];
        d->device = (nvmlDevice_t)&g->dev;
        if (!strcmp(what, "xid") && n >= 3) {
                d->eventType = nvmlEventTypeXidCriticalError;
                d->eventData = v;
                if (n >= 4) d->gpuInstanceId = gi;
                if (n >= 5) d->computeInstanceId = ci;
        } else if (!strcmp(what, "ecc-sbe"))
                d->eventType = nvmlEventTypeSingleBitEccError;
        else if (!strcmp(what, "ecc-dbe"))
                d->eventType = nvmlEventTypeDoubleBitEccError;
        else
                return 0;
        return (g->registered & d->eventType) ? 1 : 0;
}

EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms) {
        CHECK_INIT();
        if (!set || !data) return NVML_ERROR_INVALID_ARGUMENT;
        unsigned waited = 0;
        for (;;) {
                char line[256];
                while (next_line(line, sizeof line)) {
                        int r = parse_event(line, data);
                        if (r < 0) return NVML_ERROR_UNKNOWN;
                        if (r > 0) return NVML_SUCCESS;
                }
                if (waited >= timeoutms) return NVML_ERROR_TIMEOUT;
                struct timespec ts = {0, 5 * 1000 * 1000};
                nanosleep(&ts, NULL);
                waited += 5;
        }
}
EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
        free(set);
        return NVML_SUCCESS;
}
