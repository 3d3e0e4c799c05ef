/* SPDX-License-Identifier: Apache-2.0
 * bench-allocate — `devplane allocate` end to end, as a user runs it.
 * Writes each scenario's input (deterministic from the seed) to a temporary
 * directory, runs the given devplane binary R times on it (stdout to
 * /dev/null, stderr to a file), and prints per scenario the median and the
 * spread ((max - min) / median) of: claims per CPU-second (user + sys of the
 * child from wait4, the main figure: wall time depends on the load of the
 * machine), wall time, peak RSS as a multiple of the input size, and the
 * bytes written to stderr. One more run with DEVPLANE_TIMINGS=1 prints the
 * CPU time of each stage (load, build, allocate, print) as the binary
 * reports it.
 * Usage: bench-allocate [-r RUNS] [-s SEED] [-k] DEVPLANE [SCENARIO-SUBSTRING]
 *   -k keeps the inputs (their directory is printed) */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct scenario {
        const char *name;
        int nodes, devices, claims, per_claim;
        bool json; /* the same objects as `kubectl get -o json` prints a List */
} scenario;

/* 500 × 10 with 5,000 one-device claims: all fit. 500 × 8 with 2,500
 * two-device claims: 2,000 fit, 500 do not (every node full). */
static const scenario scenarios[] = {
        {"500x10, 5000 x 1 device, -o json", 500, 10, 5000, 1, false},
        {"500x8, 2500 x 2 devices (500 fail)", 500, 8, 2500, 2, false},
        {"500x10, 5000 x 1, JSON List (kubectl)", 500, 10, 5000, 1, true},
};

static uint64_t rng_state;
static uint32_t rnd(void) {
        /* splitmix64: the same seed gives the same bytes on every machine */
        uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return (uint32_t)((z ^ (z >> 31)) >> 32);
}

static int write_input(const scenario *sc, const char *path) {
        static const char *models[] = {"A100", "H100", "L40S", "H200"};
        FILE *f = fopen(path, "w");
        if (!f) return -errno;
        fprintf(f, "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.example.com}\n"
                   "spec:\n  selectors:\n  - cel: {expression: \"device.driver == 'gpu.example.com'\"}\n");
        for (int n = 0; n < sc->nodes; n++) {
                const char *model = models[rnd() % 4];
                fprintf(f, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node-%04d\n  labels: {zone: z%u}\n", n,
                        rnd() % 8);
                fprintf(f,
                        "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: node-%04d-gpu}\n"
                        "spec:\n  driver: gpu.example.com\n  nodeName: node-%04d\n"
                        "  pool: {name: node-%04d, generation: 1, resourceSliceCount: 1}\n  devices:\n",
                        n, n, n);
                for (int d = 0; d < sc->devices; d++)
                        fprintf(f,
                                "  - name: gpu-%d\n    attributes: {index: {int: %d}, model: {string: %s}, numa: {int: "
                                "%d}, "
                                "uuid: {string: GPU-%08x-%04x}, driverVersion: {version: 1.%u.0}}\n"
                                "    capacity: {memory: {value: %uGi}}\n",
                                d, d, model, d * 2 / sc->devices, rnd(), rnd() & 0xffff, rnd() % 4, 40u << (rnd() % 2));
        }
        for (int c = 0; c < sc->claims; c++)
                fprintf(f,
                        "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                        "metadata: {name: claim-%05d-%04x, namespace: team-%u, uid: %08x-0000-4000-8000-%012d}\n"
                        "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com, count: "
                        "%d}}]}}\n",
                        c, rnd() & 0xffff, rnd() % 4, rnd(), c, sc->per_claim);
        if (fclose(f) != 0) return -errno;
        return 0;
}

/* Objects of the same shape as write_input() writes (drawn on their own), as
 * kubectl -o json prints a List: 4-space indent, one field per line. */
static int write_json(const scenario *sc, const char *path) {
        static const char *models[] = {"A100", "H100", "L40S", "H200"};
        FILE *f = fopen(path, "w");
        if (!f) return -errno;
        fprintf(f, "{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n"
                   "        {\n            \"apiVersion\": \"resource.k8s.io/v1\",\n"
                   "            \"kind\": \"DeviceClass\",\n"
                   "            \"metadata\": {\n                \"name\": \"gpu.example.com\"\n            },\n"
                   "            \"spec\": {\n                \"selectors\": [\n                    {\n"
                   "                        \"cel\": {\n"
                   "                            \"expression\": \"device.driver == 'gpu.example.com'\"\n"
                   "                        }\n                    }\n                ]\n            }\n        }");
        for (int n = 0; n < sc->nodes; n++) {
                const char *model = models[rnd() % 4];
                fprintf(f,
                        ",\n        {\n            \"apiVersion\": \"v1\",\n            \"kind\": \"Node\",\n"
                        "            \"metadata\": {\n                \"labels\": {\n                    \"zone\": "
                        "\"z%u\"\n"
                        "                },\n                \"name\": \"node-%04d\"\n            }\n        }",
                        rnd() % 8, n);
                fprintf(f,
                        ",\n        {\n            \"apiVersion\": \"resource.k8s.io/v1\",\n"
                        "            \"kind\": \"ResourceSlice\",\n"
                        "            \"metadata\": {\n                \"name\": \"node-%04d-gpu\"\n            },\n"
                        "            \"spec\": {\n                \"devices\": [",
                        n);
                for (int d = 0; d < sc->devices; d++) {
                        unsigned u1 = rnd(), u2 = rnd() & 0xffff, v = rnd() % 4, mem = 40u << (rnd() % 2);
                        fprintf(f,
                                "%s\n                    {\n                        \"attributes\": {\n"
                                "                            \"driverVersion\": {\n"
                                "                                \"version\": \"1.%u.0\"\n                            "
                                "},\n"
                                "                            \"index\": {\n                                \"int\": "
                                "%d\n"
                                "                            },\n                            \"model\": {\n"
                                "                                \"string\": \"%s\"\n                            },\n"
                                "                            \"numa\": {\n                                \"int\": %d\n"
                                "                            },\n                            \"uuid\": {\n"
                                "                                \"string\": \"GPU-%08x-%04x\"\n"
                                "                            }\n                        },\n"
                                "                        \"capacity\": {\n                            \"memory\": {\n"
                                "                                \"value\": \"%uGi\"\n                            }\n"
                                "                        },\n                        \"name\": \"gpu-%d\"\n"
                                "                    }",
                                d ? "," : "", v, d, model, d * 2 / sc->devices, u1, u2, mem, d);
                }
                fprintf(f,
                        "\n                ],\n                \"driver\": \"gpu.example.com\",\n"
                        "                \"nodeName\": \"node-%04d\",\n                \"pool\": {\n"
                        "                    \"generation\": 1,\n                    \"name\": \"node-%04d\",\n"
                        "                    \"resourceSliceCount\": 1\n                }\n            }\n        }",
                        n, n);
        }
        for (int c = 0; c < sc->claims; c++) {
                unsigned id = rnd() & 0xffff, ns = rnd() % 4, uid = rnd();
                fprintf(f,
                        ",\n        {\n            \"apiVersion\": \"resource.k8s.io/v1\",\n"
                        "            \"kind\": \"ResourceClaim\",\n            \"metadata\": {\n"
                        "                \"name\": \"claim-%05d-%04x\",\n                \"namespace\": \"team-%u\",\n"
                        "                \"uid\": \"%08x-0000-4000-8000-%012d\"\n            },\n"
                        "            \"spec\": {\n                \"devices\": {\n                    \"requests\": [\n"
                        "                        {\n                            \"exactly\": {\n"
                        "                                \"count\": %d,\n"
                        "                                \"deviceClassName\": \"gpu.example.com\"\n"
                        "                            },\n                            \"name\": \"gpu\"\n"
                        "                        }\n                    ]\n                }\n            }\n        }",
                        c, id, ns, uid, c, sc->per_claim);
        }
        fprintf(f, "\n    ],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    "
                   "}\n}\n");
        if (fclose(f) != 0) return -errno;
        return 0;
}

typedef struct sample {
        double cpu_s, wall_s, rss_x;
        long long err_bytes;
        int status;
} sample;

static double now_s(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run_once(const char *devplane, const char *input, const char *errpath, bool timings, off_t in_size,
                    sample *ret) {
        double t0 = now_s();
        pid_t pid = fork();
        if (pid < 0) return -errno;
        if (pid == 0) {
                int o = open("/dev/null", O_WRONLY);
                int e = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
                if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0) _exit(127);
                if (timings)
                        setenv("DEVPLANE_TIMINGS", "1", 1);
                else
                        unsetenv("DEVPLANE_TIMINGS");
                execl(devplane, devplane, "allocate", "-f", input, "-o", "json", (char *)NULL);
                _exit(127);
        }
        int st;
        struct rusage ru;
        if (wait4(pid, &st, 0, &ru) < 0) return -errno;
        ret->wall_s = now_s() - t0;
        ret->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
                     (double)ru.ru_stime.tv_usec / 1e6;
        ret->rss_x = (double)ru.ru_maxrss * 1024.0 / (double)in_size;
        ret->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        struct stat sb;
        ret->err_bytes = stat(errpath, &sb) == 0 ? (long long)sb.st_size : -1;
        return 0;
}

static int cmp_d(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

/* median and (max - min) / median of n values (sorted in place) */
static void stats(double *v, int n, double *med, double *spread) {
        qsort(v, (size_t)n, sizeof(*v), cmp_d);
        *med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        *spread = *med > 0 ? (v[n - 1] - v[0]) / *med : 0;
}

int main(int argc, char **argv) {
        int runs = 5, opt;
        uint64_t seed = 1;
        bool keep = false;
        while ((opt = getopt(argc, argv, "r:s:k")) >= 0) {
                switch (opt) {
                case 'r': runs = atoi(optarg); break;
                case 's': seed = strtoull(optarg, NULL, 10); break;
                case 'k': keep = true; break;
                default:
                        fprintf(stderr, "usage: bench-allocate [-r RUNS] [-s SEED] [-k] DEVPLANE [SCENARIO]\n");
                        return 2;
                }
        }
        if (optind >= argc || runs < 1 || runs > 100) {
                fprintf(stderr, "usage: bench-allocate [-r RUNS] [-s SEED] [-k] DEVPLANE [SCENARIO]\n");
                return 2;
        }
        const char *devplane = argv[optind], *filter = optind + 1 < argc ? argv[optind + 1] : NULL;
        char dir[] = "/tmp/bench-allocate-XXXXXX";
        if (!mkdtemp(dir)) {
                perror("mkdtemp");
                return 1;
        }
        printf("%-38s %12s %6s %9s %6s %8s %12s %4s\n", "scenario", "claims/cpu-s", "spread", "wall s", "spread",
               "RSS/in", "stderr B", "exit");
        int rc = 0;
        for (size_t s = 0; s < sizeof(scenarios) / sizeof(scenarios[0]); s++) {
                const scenario *sc = &scenarios[s];
                if (filter && !strstr(sc->name, filter)) continue;
                char input[128], errpath[128];
                snprintf(input, sizeof(input), "%s/input-%zu.%s", dir, s, sc->json ? "json" : "yaml");
                snprintf(errpath, sizeof(errpath), "%s/stderr-%zu", dir, s);
                rng_state = seed * 1000 + s;
                if ((sc->json ? write_json(sc, input) : write_input(sc, input)) < 0) {
                        perror(input);
                        return 1;
                }
                struct stat sb;
                if (stat(input, &sb) < 0) return 1;
                double cps[100], wall[100], rss[100];
                sample sm = {0};
                for (int i = 0; i < runs; i++) {
                        if (run_once(devplane, input, errpath, false, sb.st_size, &sm) < 0) {
                                perror("run");
                                return 1;
                        }
                        cps[i] = sc->claims / sm.cpu_s;
                        wall[i] = sm.wall_s;
                        rss[i] = sm.rss_x;
                }
                double m_cps, s_cps, m_wall, s_wall, m_rss, s_rss;
                stats(cps, runs, &m_cps, &s_cps);
                stats(wall, runs, &m_wall, &s_wall);
                stats(rss, runs, &m_rss, &s_rss);
                printf("%-38s %12.0f %5.0f%% %9.3f %5.0f%% %7.1fx %12lld %4d\n", sc->name, m_cps, s_cps * 100, m_wall,
                       s_wall * 100, m_rss, sm.err_bytes, sm.status);
                printf("  input %.2f MB, %d runs\n", (double)sb.st_size / 1e6, runs);
                if (sm.status > 1) rc = 1;
                /* the stage times, from the binary itself */
                if (run_once(devplane, input, errpath, true, sb.st_size, &sm) == 0) {
                        FILE *f = fopen(errpath, "r");
                        char line[512];
                        while (f && fgets(line, sizeof(line), f))
                                if (strncmp(line, "devplane allocate: timings:", 27) == 0) printf("  %s", line + 19);
                        if (f) fclose(f);
                }
                if (!keep) unlink(input), unlink(errpath);
        }
        struct utsname u;
        uname(&u);
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        printf("seed %llu; machine: %s %s %s, %ld CPUs\n", (unsigned long long)seed, u.sysname, u.release, u.machine,
               ncpu);
        if (keep)
                printf("inputs kept in %s\n", dir);
        else
                rmdir(dir);
        return rc;
}
