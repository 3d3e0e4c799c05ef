/* SPDX-License-Identifier: Apache-2.0
 * bench-sched — the scheduler end to end over the cluster store, in the
 * shape of upstream scheduler_perf (5000pods_500nodes): N nodes with D
 * devices each and P single-device pods, scheduled from an empty cluster
 * until every pod is bound (the resourceclaim controller making each pod's
 * claim from its template is included in the time).
 *
 *   V1 rows: nodes advertise D of example.com/gpu (device plugin); each pod
 *            has limits {example.com/gpu: 1}.
 *   V2 rows: one ResourceSlice per node with D devices of gpu.example.com, a
 *            DeviceClass with a CEL selector, and pods with a
 *            resourceClaimTemplate asking for one device of that class.
 *
 * Prints one row per scenario: median of R runs and the spread
 * ((max - min) / median of pods/s), pods/s wall clock and per CPU second,
 * per-pod latency p50/p99 (time between consecutive binds, so a cycle's
 * whole work counts), bound pods, peak RSS, the growth of resident
 * memory per device, and the heap in use per device at the end of the run
 * (store objects and scheduler state, every pod bound: mallinfo2, which
 * unlike RSS does not depend on what earlier runs freed); then versions and
 * machine.
 * Usage: bench-sched [-r RUNS] [-d DIV] [SCENARIO-SUBSTRING]
 * (-d DIV divides nodes and pods by DIV: the same shape, smaller). */
#include <malloc.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>

#include "base/strbuf.h"
#include "model/model.h"
#include "sched/sched.h"
#include "sched/store.h"

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

static long rss_kib(const char *field) {
        FILE *f = fopen("/proc/self/status", "re");
        if (!f) return -1;
        char line[256];
        long v = -1;
        size_t fl = strlen(field);
        while (fgets(line, sizeof(line), f))
                if (!strncmp(line, field, fl) && line[fl] == ':') v = strtol(line + fl + 1, NULL, 10);
        fclose(f);
        return v;
}

typedef struct scenario {
        const char *name;
        int nodes, devices, pods;
        bool v2;
} scenario;

static const scenario scenarios[] = {
        {"V1 extended resource", 500, 10, 5000, false},
        {"V2 claim template", 500, 10, 5000, true},
        {"V1 extended resource", 5000, 10, 50000, false},
        {"V2 claim template", 5000, 10, 50000, true},
};

static char *gen_yaml(const scenario *sc) {
        dp_strbuf b = DP_STRBUF_INIT;
        if (sc->v2) {
                dp_strbuf_puts(&b, "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.example.com}\n"
                                   "spec:\n  selectors:\n  - cel: {expression: \"device.driver == 'gpu.example.com'\"}\n"
                                   "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
                                   "metadata: {name: single-gpu, namespace: default}\n"
                                   "spec:\n  spec:\n    devices:\n      requests:\n      - name: gpu\n"
                                   "        exactly: {deviceClassName: gpu.example.com}\n");
        }
        for (int n = 0; n < sc->nodes; n++) {
                dp_strbuf_printf(&b,
                                 "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node-%04d\n"
                                 "  labels: {kubernetes.io/hostname: node-%04d}\n",
                                 n, n);
                if (!sc->v2)
                        dp_strbuf_printf(&b,
                                         "status:\n  capacity: {example.com/gpu: \"%d\"}\n"
                                         "  allocatable: {example.com/gpu: \"%d\"}\n",
                                         sc->devices, sc->devices);
                else {
                        dp_strbuf_printf(&b,
                                         "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
                                         "metadata: {name: node-%04d-gpu.example.com}\n"
                                         "spec:\n  driver: gpu.example.com\n  nodeName: node-%04d\n"
                                         "  pool: {name: node-%04d, generation: 1, resourceSliceCount: 1}\n"
                                         "  devices:\n",
                                         n, n, n);
                        for (int d = 0; d < sc->devices; d++)
                                dp_strbuf_printf(&b,
                                                 "  - name: gpu-%d\n    attributes:\n      index: {int: %d}\n"
                                                 "      model: {string: LATEST-GPU-MODEL}\n"
                                                 "    capacity:\n      memory: {value: 80Gi}\n",
                                                 d, d);
                }
        }
        for (int p = 0; p < sc->pods; p++) {
                dp_strbuf_printf(&b,
                                 "---\napiVersion: v1\nkind: Pod\nmetadata: {name: pod-%05d, namespace: default, "
                                 "uid: uid-%05d}\nspec:\n  containers:\n  - name: c\n    image: pause\n",
                                 p, p);
                if (sc->v2)
                        dp_strbuf_puts(&b, "    resources:\n      claims:\n      - name: gpu\n"
                                           "  resourceClaims:\n  - name: gpu\n    resourceClaimTemplateName: single-gpu\n");
                else
                        dp_strbuf_puts(&b, "    resources:\n      limits: {example.com/gpu: \"1\"}\n");
        }
        return dp_strbuf_steal(&b);
}

typedef struct timing {
        double *t; /* bind times, us */
        size_t n, cap;
} timing;

static int on_bind(void *userdata, const char *ns, const char *name, dp_error *err) {
        timing *tm = userdata;
        if (DP_GROW(tm->t, tm->cap, tm->n + 1) < 0) return -ENOMEM;
        tm->t[tm->n++] = now_us();
        return 0;
}

typedef struct outcome {
        double pods_s, pods_cpu_s, p50_us, p99_us;
        size_t bound;
        long rss_growth_kib;
        double heap_bytes; /* in use at the end, less what was in use before decoding */
} outcome;

static double heap_in_use(void) {
        struct mallinfo2 mi = mallinfo2();
        return (double)mi.uordblks + (double)mi.hblkhd;
}

static int run_once(const scenario *sc, const char *yaml, outcome *o) {
        double heap0 = heap_in_use();
        dp_object_list *l = dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        if (!l || dp_model_decode_buffer(yaml, strlen(yaml), "bench", l, &err) < 0) {
                fprintf(stderr, "decode: %s\n", dp_error_msg(&err));
                return -1;
        }
        long rss0 = rss_kib("VmRSS");
        dp_store *st = dp_store_new();
        for (size_t i = 0; i < l->n; i++)
                if (dp_store_add(st, l->items[i], NULL) < 0) abort();
        l->n = 0; /* the store owns them */
        dp_object_list_free(l);
        timing tm = {0};
        dp_sched_config cfg = {.on_bind = on_bind, .userdata = &tm};
        dp_sched *s = NULL;
        if (dp_sched_new(st, &cfg, &s) < 0) abort();
        double t0 = now_us(), c0 = cpu_us();
        int r = dp_sched_claims_from_templates(st, &err);
        if (r >= 0) r = dp_sched_run(s, 0, &err);
        double t1 = now_us(), c1 = cpu_us();
        if (r < 0) {
                fprintf(stderr, "run: %s\n", dp_error_msg(&err));
                return -1;
        }
        long rss1 = rss_kib("VmRSS");
        o->heap_bytes = heap_in_use() - heap0;
        o->bound = (size_t)r;
        o->pods_s = sc->pods / ((t1 - t0) / 1e6);
        o->pods_cpu_s = sc->pods / ((c1 - c0) / 1e6);
        double *lat = calloc(tm.n + 1, sizeof(double));
        for (size_t i = 0; i < tm.n; i++)
                lat[i] = tm.t[i] - (i ? tm.t[i - 1] : t0);
        qsort(lat, tm.n, sizeof(double), cmp_d);
        o->p50_us = tm.n ? lat[tm.n / 2] : 0;
        o->p99_us = tm.n ? lat[(size_t)(tm.n * 0.99)] : 0;
        o->rss_growth_kib = rss1 - rss0;
        free(lat);
        free(tm.t);
        dp_sched_free(s);
        dp_store_free(st);
        return 0;
}

int main(int argc, char **argv) {
        int runs = 3, div = 1;
        const char *filter = NULL;
        for (int i = 1; i < argc; i++) {
                if (streq(argv[i], "-r") && i + 1 < argc)
                        runs = atoi(argv[++i]);
                else if (streq(argv[i], "-d") && i + 1 < argc)
                        div = atoi(argv[++i]);
                else
                        filter = argv[i];
        }
        if (runs < 1) runs = 1;
        if (div < 1) div = 1;
        printf("%-32s %6s %6s %9s %7s %11s %8s %8s %9s %9s\n", "scenario", "pods", "bound", "pods/s", "spread",
               "pods/cpu-s", "p50 us", "p99 us", "KiB/dev", "heap B/dev");
        for (size_t k = 0; k < ELEMENTSOF(scenarios); k++) {
                scenario scd = scenarios[k];
                const scenario *sc = &scd;
                if (div > 1) { /* a smaller fleet of the same shape (-d DIV) */
                        scd.nodes /= div;
                        scd.pods /= div;
                }
                char label[96];
                snprintf(label, sizeof(label), "%dx%d %s", sc->nodes, sc->devices, sc->name);
                if (filter && !strstr(label, filter)) continue;
                char *yaml = gen_yaml(sc);
                if (!yaml) return 1;
                outcome *os = calloc((size_t)runs, sizeof(*os));
                double *rate = calloc((size_t)runs, sizeof(double));
                for (int i = 0; i < runs; i++) {
                        if (run_once(sc, yaml, &os[i]) < 0) return 1;
                        rate[i] = os[i].pods_s;
                }
                double sorted[64];
                int nr = runs < 64 ? runs : 64;
                memcpy(sorted, rate, (size_t)nr * sizeof(double));
                qsort(sorted, (size_t)nr, sizeof(double), cmp_d);
                double med = sorted[nr / 2];
                int mi = 0;
                for (int i = 0; i < nr; i++)
                        if (rate[i] == med) mi = i;
                const outcome *o = &os[mi];
                double devs = (double)sc->nodes * sc->devices;
                printf("%-32s %6d %6zu %9.0f %6.1f%% %11.0f %8.1f %8.1f %9.2f %9.0f\n", label, sc->pods, o->bound,
                       med, 100.0 * (sorted[nr - 1] - sorted[0]) / med, o->pods_cpu_s, o->p50_us, o->p99_us,
                       o->rss_growth_kib / devs, o->heap_bytes / devs);
                fflush(stdout);
                free(os);
                free(rate);
                free(yaml);
        }
        struct utsname u;
        uname(&u);
        char cpu[128] = "unknown";
        FILE *f = fopen("/proc/cpuinfo", "re");
        char line[256];
        while (f && fgets(line, sizeof(line), f))
                if (!strncmp(line, "model name", 10)) {
                        char *c = strchr(line, ':');
                        if (c) snprintf(cpu, sizeof(cpu), "%s", c + 2);
                        cpu[strcspn(cpu, "\n")] = 0;
                        break;
                }
        if (f) fclose(f);
        printf("\nruns per scenario: %d (median shown; spread = (max-min)/median of pods/s; p50/p99: time between\n"
               "consecutive binds; KiB/dev: resident memory growth from the loaded objects to the end of the run,\n"
               "per device; heap B/dev: heap in use at the end of the run (objects, scheduler state, all pods\n"
               "bound) per device)\n",
               runs);
        printf("peak RSS: %.1f MB\n", rss_kib("VmHWM") / 1024.0);
        printf("devplane %s, compiler %s, %s %s %s, cpu %s, %ld cores online\n", DP_VERSION, __VERSION__, u.sysname,
               u.release, u.machine, cpu, sysconf(_SC_NPROCESSORS_ONLN));
        return 0;
}
