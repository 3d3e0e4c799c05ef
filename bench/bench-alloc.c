/* SPDX-License-Identifier: Apache-2.0
 * bench-alloc — allocator throughput and worst cases over built snapshots.
 * Prints one table row per scenario: median of R runs and the spread
 * ((max - min) / median), claims/s, per-claim p50/p99, search effort per
 * claim, snapshot bytes and process peak RSS; then versions and machine.
 * Usage: bench-alloc [-r RUNS] [SCENARIO-SUBSTRING] */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>

#include "alloc-test-util.h"
#include "alloc/adapter.h"
#include "model/model.h"

static double now_us(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static double cpu_us(void) {
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

typedef struct outcome {
        size_t claims, ok;
        double total_us, cpu_us, p50_us, p99_us;
        double effort_per_claim;
        size_t snap_bytes;
} outcome;

/* Devices with attributes (string "numa", int "idx"), a selector that
 * checks the driver (the device user is the tdev). */
static tdev *devstore;
static size_t devstore_n;
static tsel sel_any = {"*", ""};
static tsel sel_numa0 = {"numa", "0"};

static tdev *newdev(const char *name) {
        tdev *t = &devstore[devstore_n++];
        memset(t, 0, sizeof(*t));
        snprintf(t->name, sizeof(t->name), "%s", name);
        return t;
}

static void node_pool(dp_alloc_snapshot *s, const char *node, int n) {
        dp_alloc_slice_spec sp = {.name = node, .driver = "gpu.example.com", .pool = node, .generation = 1,
                                  .slice_count = 1, .node_name = node};
        uint32_t sl;
        if (dp_alloc_add_slice(s, &sp, &sl) < 0) abort();
        for (int i = 0; i < n; i++) {
                char nm[32], numa[16];
                snprintf(nm, sizeof(nm), "gpu-%d", i);
                snprintf(numa, sizeof(numa), "%d", i / (n / 2 ? n / 2 : 1));
                tdev *t = newdev(nm);
                snprintf(t->keys[0], 64, "numa");
                snprintf(t->vals[0], 64, "%s", numa);
                t->n = 1;
                dp_alloc_attr at[3] = {{.name = "index", .type = DP_ALLOC_ATTR_INT, .i = i},
                                       {.name = "numa", .type = DP_ALLOC_ATTR_STRING, .s = t->vals[0]},
                                       {.name = "model", .type = DP_ALLOC_ATTR_STRING, .s = "LATEST-GPU-MODEL"}};
                dp_alloc_capacity cap = {.name = "memory", .value = GI(80)};
                dp_alloc_device_spec d = {.name = t->name, .attrs = at, .n_attrs = 3, .caps = &cap, .n_caps = 1, .user = t};
                if (dp_alloc_add_device(s, sl, &d, NULL) < 0) abort();
        }
}

/* 8 GPUs per node; each GPU a counter set of 7 memory slices; 7 partition
 * devices (group mig) each taking 1, and, with `vgpu`, 2 vGPU devices (group
 * vgpu) taking 3 each. */
static void partition_node(dp_alloc_snapshot *s, const char *node, bool vgpu) {
        dp_alloc_counter ctr = {"memory", QN(7)};
        dp_alloc_counter_set sets[8];
        char setnames[8][24];
        for (int g = 0; g < 8; g++) {
                snprintf(setnames[g], sizeof(setnames[g]), "gpu-%d-memory", g);
                sets[g] = (dp_alloc_counter_set){setnames[g], &ctr, 1};
        }
        char nm[96];
        snprintf(nm, sizeof(nm), "%s-counters", node);
        dp_alloc_slice_spec cs = {.name = nm, .driver = "gpu.example.com", .pool = node, .generation = 1,
                                  .slice_count = 2, .counter_sets = sets, .n_counter_sets = 8};
        if (dp_alloc_add_slice(s, &cs, NULL) < 0) abort();
        snprintf(nm, sizeof(nm), "%s-devices", node);
        dp_alloc_slice_spec ds = {.name = nm, .driver = "gpu.example.com", .pool = node, .generation = 1,
                                  .slice_count = 2, .node_name = node};
        uint32_t sl;
        if (dp_alloc_add_slice(s, &ds, &sl) < 0) abort();
        for (int g = 0; g < 8; g++) {
                for (int p = 0; p < 7 + (vgpu ? 2 : 0); p++) {
                        bool v = p >= 7;
                        char dn[32];
                        if (v) snprintf(dn, sizeof(dn), "gpu-%d-vgpu-%d", g, p - 7);
                        else snprintf(dn, sizeof(dn), "gpu-%d-mig-%d", g, p);
                        tdev *t = newdev(dn);
                        snprintf(t->keys[0], 64, "kind");
                        snprintf(t->vals[0], 64, "%s", v ? "vgpu" : "mig");
                        t->n = 1;
                        dp_alloc_attr at[2] = {{.name = "parent", .type = DP_ALLOC_ATTR_INT, .i = g},
                                               {.name = "kind", .type = DP_ALLOC_ATTR_STRING, .s = t->vals[0]}};
                        dp_alloc_counter use = {"memory", QN(v ? 3 : 1)};
                        const char *grp = v ? "vgpu" : "mig";
                        dp_alloc_consumption c = {setnames[g], &use, 1, vgpu ? &grp : NULL, vgpu ? 1 : 0};
                        dp_alloc_device_spec d = {.name = t->name, .attrs = at, .n_attrs = 2, .consumes = &c,
                                                  .n_consumes = 1, .user = t};
                        if (dp_alloc_add_device(s, sl, &d, NULL) < 0) abort();
                }
        }
}

typedef enum { SHAPE_ONE, SHAPE_MATCH, SHAPE_PART, SHAPE_MIXED } shape_kind;

static outcome run_fill(int nodes, int per_node, size_t claims, shape_kind shape) {
        outcome o = {.claims = claims};
        dp_alloc_snapshot *s = dp_alloc_snapshot_new();
        dp_alloc_set_selector_fn(s, tsel_fn, NULL);
        devstore_n = 0;
        for (int n = 0; n < nodes; n++) {
                char nm[32];
                snprintf(nm, sizeof(nm), "node-%04d", n);
                if (shape == SHAPE_PART || shape == SHAPE_MIXED) partition_node(s, nm, shape == SHAPE_MIXED);
                else node_pool(s, nm, per_node);
        }
        static tsel sel_mig = {"kind", "mig"}, sel_vgpu = {"kind", "vgpu"};
        uint32_t sa, sm, sv;
        dp_alloc_add_selector(s, &sel_any, &sa);
        dp_alloc_add_selector(s, &sel_mig, &sm);
        dp_alloc_add_selector(s, &sel_vgpu, &sv);
        dp_alloc_subrequest sr = {.device_class = "gpu.example.com", .class_selectors = &sa, .n_class_selectors = 1,
                                  .count = shape == SHAPE_MATCH ? 2 : 1};
        dp_alloc_subrequest srv = sr;
        if (shape == SHAPE_MIXED) {
                sr.selectors = &sm;
                sr.n_selectors = 1;
                srv.selectors = &sv;
                srv.n_selectors = 1;
        }
        dp_alloc_request rq = {.name = "gpu", .subs = &sr, .n_subs = 1};
        dp_alloc_request rqv = {.name = "gpu", .subs = &srv, .n_subs = 1};
        dp_alloc_constraint ct = {.match_attribute = "gpu.example.com/numa"};
        double *lat = calloc(claims, sizeof(double));
        dp_alloc_stats st0, st1;
        dp_alloc_freeze(s, NULL);
        dp_alloc_get_stats(s, &st0);
        double t0 = now_us(), c0 = cpu_us();
        for (size_t i = 0; i < claims; i++) {
                char name[32];
                snprintf(name, sizeof(name), "claim-%zu", i);
                /* mixed fleet: 1 in 8 claims asks for a vGPU */
                bool v = shape == SHAPE_MIXED && i % 8 == 7;
                dp_alloc_claim c = {.ns = "default", .name = name, .uid = name, .requests = v ? &rqv : &rq,
                                    .n_requests = 1, .constraints = &ct, .n_constraints = shape == SHAPE_MATCH};
                const dp_alloc_claim *cp = &c;
                dp_alloc_result *res = NULL;
                size_t node;
                double a = now_us();
                int r = dp_alloc_allocate_first_fit(s, &cp, 1, &(dp_alloc_options){0}, &node, &res, NULL, NULL);
                if (r == 1) {
                        dp_alloc_commit(s, &c, &res[0]);
                        dp_alloc_results_free(res, 1);
                        o.ok++;
                }
                lat[i] = now_us() - a;
        }
        o.total_us = now_us() - t0;
        o.cpu_us = cpu_us() - c0;
        dp_alloc_get_stats(s, &st1);
        qsort(lat, claims, sizeof(double), cmp_d);
        o.p50_us = lat[claims / 2];
        o.p99_us = lat[claims * 99 / 100];
        o.effort_per_claim = (double)(st1.effort - st0.effort) / claims;
        o.snap_bytes = st1.peak_bytes;
        free(lat);
        dp_alloc_snapshot_free(s);
        return o;
}

typedef enum { UNSAT_N_MINUS_1, UNSAT_MATCH_17, UNSAT_16_16, UNSAT_COUNTER } unsat_kind;

static outcome run_unsat(unsat_kind k) {
        outcome o = {.claims = 1};
        dp_alloc_snapshot *s = dp_alloc_snapshot_new();
        dp_alloc_set_selector_fn(s, tsel_fn, NULL);
        devstore_n = 0;
        if (k == UNSAT_COUNTER) {
                /* 8 GPUs; each a counter of 10 units and 7 partitions of 2 units */
                dp_alloc_counter ctr = {"memory", QN(10)};
                dp_alloc_counter_set sets[8];
                char setnames[8][24];
                for (int g = 0; g < 8; g++) {
                        snprintf(setnames[g], sizeof(setnames[g]), "gpu-%d-memory", g);
                        sets[g] = (dp_alloc_counter_set){setnames[g], &ctr, 1};
                }
                dp_alloc_slice_spec ds = {.name = "n", .driver = "gpu.example.com", .pool = "node-0000", .generation = 1,
                                          .slice_count = 1, .node_name = "node-0000", .counter_sets = sets,
                                          .n_counter_sets = 8};
                uint32_t sl;
                if (dp_alloc_add_slice(s, &ds, &sl) < 0) abort();
                for (int g = 0; g < 8; g++)
                        for (int p = 0; p < 7; p++) {
                                char dn[32];
                                snprintf(dn, sizeof(dn), "gpu-%d-part-%d", g, p);
                                tdev *t = newdev(dn);
                                dp_alloc_attr at = {.name = "numa", .type = DP_ALLOC_ATTR_INT, .i = g};
                                dp_alloc_counter use = {"memory", QN(2)};
                                dp_alloc_consumption c = {setnames[g], &use, 1, NULL, 0};
                                dp_alloc_device_spec d = {.name = t->name, .attrs = &at, .n_attrs = 1, .consumes = &c,
                                                          .n_consumes = 1, .user = t};
                                if (dp_alloc_add_device(s, sl, &d, NULL) < 0) abort();
                        }
        } else {
                node_pool(s, "node-0000", k == UNSAT_MATCH_17 ? 32 : 31);
        }
        uint32_t sa;
        dp_alloc_add_selector(s, &sel_any, &sa);
        (void)sel_numa0;
        dp_alloc_subrequest sr = {.class_selectors = &sa, .n_class_selectors = 1,
                                  .count = k == UNSAT_N_MINUS_1 ? 32 : k == UNSAT_MATCH_17 ? 17 : k == UNSAT_COUNTER ? 6 : 16};
        dp_alloc_request rq[2] = {{.name = "a", .subs = &sr, .n_subs = 1}, {.name = "b", .subs = &sr, .n_subs = 1}};
        dp_alloc_constraint ct = {.match_attribute = "gpu.example.com/numa"};
        dp_alloc_claim c = {.ns = "default", .name = "big", .uid = "big", .requests = rq,
                            .n_requests = k == UNSAT_16_16 ? 2 : 1, .constraints = &ct,
                            .n_constraints = k == UNSAT_MATCH_17 || k == UNSAT_COUNTER};
        const dp_alloc_claim *cp = &c;
        dp_alloc_freeze(s, NULL);
        dp_alloc_result *res = NULL;
        dp_strbuf why = DP_STRBUF_INIT;
        double a = now_us(), ca = cpu_us();
        int r = dp_alloc_allocate(s, "node-0000", &cp, 1, &(dp_alloc_options){.explain = true}, &res, &why, NULL);
        o.total_us = now_us() - a;
        o.cpu_us = cpu_us() - ca;
        o.p50_us = o.p99_us = o.total_us;
        o.ok = r == 1;
        dp_alloc_stats st;
        dp_alloc_get_stats(s, &st);
        o.effort_per_claim = (double)st.effort;
        o.snap_bytes = st.peak_bytes;
        if (r == 1) dp_alloc_results_free(res, 1);
        dp_strbuf_done(&why);
        dp_alloc_snapshot_free(s);
        return o;
}

/* The same fleet as Kubernetes objects through the model adapter: a class
 * with a CEL selector, claims with their own CEL selector, compiled once per
 * distinct expression; each claim is prepared, allocated first-fit,
 * converted to status.allocation and committed. */
static outcome run_cel(int nodes, int per_node, size_t claims, bool match) {
        outcome o = {.claims = claims};
        dp_strbuf y = DP_STRBUF_INIT;
        dp_strbuf_puts(&y, "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.example.com}\n"
                           "spec:\n  selectors:\n  - cel: {expression: \"device.driver == 'gpu.example.com' && "
                           "device.attributes['gpu.example.com'].model == 'LATEST-GPU-MODEL'\"}\n");
        for (int n = 0; n < nodes; n++) {
                dp_strbuf_printf(&y, "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: node-%04d-gpu}\n"
                                     "spec:\n  driver: gpu.example.com\n  nodeName: node-%04d\n"
                                     "  pool: {name: node-%04d, generation: 1, resourceSliceCount: 1}\n  devices:\n",
                                 n, n, n);
                for (int i = 0; i < per_node; i++)
                        dp_strbuf_printf(&y, "  - name: gpu-%d\n    attributes: {index: {int: %d}, numa: {int: %d}, "
                                             "model: {string: LATEST-GPU-MODEL}}\n    capacity: {memory: {value: 80Gi}}\n",
                                         i, i, i / (per_node / 2));
        }
        for (size_t i = 0; i < claims; i++) {
                dp_strbuf_printf(&y, "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                                     "metadata: {name: claim-%zu, namespace: default, uid: u-%zu}\nspec:\n  devices:\n"
                                     "    requests:\n    - name: gpu\n      exactly:\n        deviceClassName: gpu.example.com\n"
                                     "        count: %d\n        selectors:\n        - cel: {expression: \"device.capacity"
                                     "['gpu.example.com'].memory.compareTo(quantity('40Gi')) >= 0\"}\n",
                                 i, i, match ? 2 : 1);
                if (match) dp_strbuf_puts(&y, "    constraints:\n    - matchAttribute: gpu.example.com/numa\n");
        }
        dp_object_list *objs = dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        if (!objs || dp_model_decode_buffer(dp_strbuf_str(&y), y.len, "bench", objs, &err) < 0) {
                fprintf(stderr, "bench: %s\n", err.msg);
                exit(1);
        }
        dp_strbuf_done(&y);
        dp_alloc_cluster *c = NULL;
        if (dp_alloc_cluster_new(objs, &c, &err) < 0) {
                fprintf(stderr, "bench: %s\n", err.msg);
                exit(1);
        }
        dp_alloc_snapshot *s = dp_alloc_cluster_snapshot(c);
        double *lat = calloc(claims, sizeof(double));
        dp_alloc_stats st0, st1;
        dp_alloc_get_stats(s, &st0);
        double t0 = now_us(), c0 = cpu_us();
        size_t k = 0;
        for (size_t i = 0; i < objs->n; i++) {
                if (objs->items[i].hdr->kind != DP_KIND_RESOURCE_CLAIM) continue;
                double a = now_us();
                dp_alloc_claim_spec *cs = NULL;
                if (dp_alloc_claim_prepare(c, objs->items[i].claim, &cs, &err) < 0) abort();
                const dp_alloc_claim *cp = &cs->claim;
                dp_alloc_result *res = NULL;
                size_t node;
                int r = dp_alloc_allocate_first_fit(s, &cp, 1, &(dp_alloc_options){0}, &node, &res, NULL, &err);
                if (r < 0) {
                        fprintf(stderr, "bench: %s\n", err.msg);
                        exit(1);
                }
                if (r == 1) {
                        dp_allocation_result *ar = NULL;
                        if (dp_alloc_result_to_model(c, cs, &res[0], &ar, &err) < 0) abort();
                        dp_allocation_result_free(ar);
                        dp_alloc_commit(s, cp, &res[0]);
                        dp_alloc_results_free(res, 1);
                        o.ok++;
                }
                dp_alloc_claim_spec_free(cs);
                lat[k++] = now_us() - a;
        }
        o.total_us = now_us() - t0;
        o.cpu_us = cpu_us() - c0;
        dp_alloc_get_stats(s, &st1);
        qsort(lat, claims, sizeof(double), cmp_d);
        o.p50_us = lat[claims / 2];
        o.p99_us = lat[claims * 99 / 100];
        o.effort_per_claim = (double)(st1.effort - st0.effort) / claims;
        o.snap_bytes = st1.peak_bytes;
        free(lat);
        dp_alloc_cluster_free(c);
        dp_object_list_free(objs);
        return o;
}

typedef struct scenario {
        const char *name;
        int kind; /* 0 fill, 1 unsat, 2 objects through the adapter */
        int nodes, per_node;
        size_t claims;
        int shape;
} scenario;

static const scenario scenarios[] = {
        {"500x10 single-device claims", 0, 500, 10, 5000, SHAPE_ONE},
        {"500x10 2-device matchAttribute claims", 0, 500, 10, 2500, SHAPE_MATCH},
        {"500x10 objects+CEL selectors (adapter)", 2, 500, 10, 5000, 0},
        {"500x10 objects+CEL+matchAttribute (adapter)", 2, 500, 10, 2500, 1},
        {"1000x8 GPUs x7 partitions (shared counters)", 0, 1000, 0, 56000, SHAPE_PART},
        {"1000x8 GPUs mig|vgpu compatibility groups", 0, 1000, 0, 40000, SHAPE_MIXED},
        {"unsat: 32 of 31 devices", 1, 1, 31, 1, UNSAT_N_MINUS_1},
        {"unsat: 17 sharing numa, 16 do", 1, 1, 32, 1, UNSAT_MATCH_17},
        {"unsat: 16+16 of 31 devices", 1, 1, 31, 1, UNSAT_16_16},
        {"unsat: 6 partitions of one GPU, room for 5", 1, 1, 56, 1, UNSAT_COUNTER},
};

int main(int argc, char **argv) {
        int runs = 5;
        const char *only = NULL;
        for (int i = 1; i < argc; i++) {
                if (streq(argv[i], "-r") && i + 1 < argc) runs = atoi(argv[++i]);
                else only = argv[i];
        }
        if (runs < 1) runs = 1;
        devstore = calloc(200000, sizeof(tdev));
        if (!devstore) return 1;
        printf("%-46s %7s %6s %10s %7s %12s %9s %9s %9s %8s\n", "scenario", "claims", "ok", "claims/s", "spread",
               "claims/cpu-s", "p50 us", "p99 us", "effort/c", "snap MB");
        for (size_t k = 0; k < ELEMENTSOF(scenarios); k++) {
                const scenario *sc = &scenarios[k];
                if (only && !strstr(sc->name, only)) continue;
                outcome res[32];
                double rate[32], cpurate[32];
                int n = runs > 32 ? 32 : runs;
                for (int i = 0; i < n; i++) {
                        res[i] = sc->kind == 0   ? run_fill(sc->nodes, sc->per_node, sc->claims, (shape_kind)sc->shape)
                                 : sc->kind == 2 ? run_cel(sc->nodes, sc->per_node, sc->claims, sc->shape)
                                                 : run_unsat((unsat_kind)sc->shape);
                        rate[i] = res[i].claims / (res[i].total_us / 1e6);
                        cpurate[i] = res[i].claims / ((res[i].cpu_us > 0 ? res[i].cpu_us : 1) / 1e6);
                }
                double sorted[32];
                memcpy(sorted, rate, sizeof(double) * n);
                qsort(sorted, n, sizeof(double), cmp_d);
                double med = sorted[n / 2];
                int mi = 0;
                for (int i = 0; i < n; i++)
                        if (rate[i] == med) mi = i;
                double spread = med > 0 ? (sorted[n - 1] - sorted[0]) / med * 100 : 0;
                const outcome *m = &res[mi];
                double cs[32];
                memcpy(cs, cpurate, sizeof(double) * n);
                qsort(cs, n, sizeof(double), cmp_d);
                printf("%-46s %7zu %6zu %10.0f %6.1f%% %12.0f %9.1f %9.1f %9.1f %8.1f\n", sc->name, m->claims, m->ok, med,
                       spread, cs[n / 2], m->p50_us, m->p99_us, m->effort_per_claim, m->snap_bytes / 1048576.0);
        }
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        struct utsname u;
        uname(&u);
        char cpu[600] = "unknown";
        FILE *f = fopen("/proc/cpuinfo", "r");
        if (f) {
                char line[512];
                while (fgets(line, sizeof(line), f))
                        if (startswith(line, "model name")) {
                                char *c = strchr(line, ':');
                                snprintf(cpu, sizeof(cpu), "%s", c ? c + 2 : line);
                                cpu[strcspn(cpu, "\n")] = 0;
                                break;
                        }
                fclose(f);
        }
        printf("\nruns per scenario: %d (median shown; spread = (max-min)/median of claims/s;\n"
               "claims/cpu-s counts this process's CPU time only, steadier on a shared machine;\n"
               "unsat rows: one claim, p50 = its wall time)\n", runs);
        printf("peak RSS: %.1f MB\n", ru.ru_maxrss / 1024.0);
        printf("devplane %s, compiler %s, %s %s %s, cpu %s, %ld cores online\n", DP_VERSION, __VERSION__, u.sysname,
               u.release, u.machine, cpu, sysconf(_SC_NPROCESSORS_ONLN));
        free(devstore);
        return 0;
}
