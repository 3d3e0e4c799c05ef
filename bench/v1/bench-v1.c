/* SPDX-License-Identifier: Apache-2.0
 *
 * bench-v1 — the V1 node path, measured over real unix sockets against a
 * real `devplane agent` process:
 *   1. agent memory with 8 and with 1,024 devices, registered and streaming
 *      ListAndWatch, then after 2,000 Allocates: what the node pays for,
 *      Pss (its share of every page it maps) split into anonymous and file
 *      pages, and Anonymous (pages no other process can hold: the floor of
 *      what its memory cgroup is charged; the file pages are charged to the
 *      cgroup that first read them), from /proc/PID/smaps_rollup; VmRSS
 *      beside them for comparison with older figures;
 *   2. Allocate round trip (one container, one device) as the kubelet sees it,
 *      and the agent's CPU time per Allocate, with 8 and with 1,024 devices;
 *   3. health change (`agent health set`, i.e. the health file rewritten) to
 *      the ListAndWatch message at the client;
 *   4. kubelet.sock re-created (an in-process `devplane node`) to the
 *      agent's Register arriving.
 * Prints one table (median, p10-p90 or p99, runs) with the versions and the
 * machine. Build without sanitizers for figures worth quoting:
 *   cmake -S . -B build/bench -DCMAKE_BUILD_TYPE=Release && cmake --build build/bench --target bench-v1 devplane
 *   build/bench/bench-v1 [--quick]
 * Benchmarks are not tests: nothing here asserts a time.
 */
#include <fcntl.h>
#include <nghttp2/nghttp2.h>
#include <protobuf-c/protobuf-c.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>

#include "agent/agent.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "grpc/grpc.h"
#include "node/node.h"
#include "proto/proto.h"

#ifndef DP_DEVPLANE_PATH
#define DP_DEVPLANE_PATH "devplane"
#endif

typedef struct bench {
        dp_loop *loop;
        char *dir;
        char *pd, *st;
        pid_t agent;
        dp_grpc_channel *ch;
        /* ListAndWatch */
        uint64_t law_messages;
        uint64_t law_last_usec;
} bench;

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

static uint64_t pct(uint64_t *v, size_t n, double p) {
        if (!n) return 0;
        size_t i = (size_t)(p * (double)(n - 1) + 0.5);
        return v[i];
}

static void die(const char *what, int r) {
        fprintf(stderr, "bench-v1: %s: %s\n", what, strerror(r < 0 ? -r : r));
        exit(1);
}

static void write_text(const char *path, const char *text) {
        FILE *f = fopen(path, "we");
        if (!f || fputs(text, f) < 0 || fclose(f) != 0) die(path, errno);
}

static bool run_until(bench *b, bool (*pred)(bench *, void *), void *ud, uint64_t timeout_usec) {
        uint64_t end = dp_loop_now() + timeout_usec;
        while (!pred(b, ud)) {
                if (dp_loop_now() > end) return false;
                int r = dp_loop_run_once(b->loop, 50);
                if (r < 0) die("loop", r);
        }
        return true;
}

/* ---- the agent process ------------------------------------------------- */

/* The agent's stderr goes to /dev/null. */
static void start_agent(bench *b, const char *profile, const char *config) {
        pid_t pid = fork();
        if (pid < 0) die("fork", errno);
        if (pid == 0) {
                int fd = open("/dev/null", O_WRONLY);
                if (fd >= 0) dup2(fd, 2);
                const char *argv[16] = {DP_DEVPLANE_PATH, "agent", "--plugin-dir", b->pd,  "--state-dir", b->st,
                                        "--node-name",    "bench", "--profile",    profile};
                int n = 10;
                if (config) {
                        argv[n++] = "--config";
                        argv[n++] = config;
                }
                argv[n] = NULL;
                execv(DP_DEVPLANE_PATH, (char **)argv);
                _exit(127);
        }
        b->agent = pid;
}

static void stop_agent(bench *b) {
        if (b->agent <= 0) return;
        kill(b->agent, SIGTERM);
        int st;
        waitpid(b->agent, &st, 0);
        b->agent = 0;
}

static long rss_kib(pid_t pid, const char *file, const char *key) {
        char path[64], line[256];
        snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, file);
        FILE *f = fopen(path, "re");
        long v = -1;
        if (!f) return -1;
        while (fgets(line, sizeof line, f))
                if (startswith(line, key)) v = strtol(line + strlen(key), NULL, 10);
        fclose(f);
        return v;
}

typedef struct {
        dp_kubelet *k;
        uint64_t want;
        const char *resource;
        size_t capacity;
} reg_wait;

static bool registered(bench *b, void *ud) {
        reg_wait *w = ud;
        return dp_kubelet_registrations(w->k) >= w->want &&
               (!w->resource || dp_kubelet_allocatable(w->k, w->resource) == w->capacity);
}

static dp_kubelet *new_kubelet(bench *b) {
        dp_node_config nc = {.plugin_dir = b->pd, .node_name = "bench"};
        dp_kubelet *k = NULL;
        dp_error e = DP_ERROR_INIT;
        int r = dp_kubelet_new(b->loop, &nc, &k, &e);
        if (r < 0) {
                fprintf(stderr, "bench-v1: node: %s\n", dp_error_msg(&e));
                exit(1);
        }
        return k;
}

/* ---- 2..4 ------------------------------------------------------------------ */

static void on_law_message(dp_grpc_client_call *cc, const uint8_t *msg, size_t len, void *ud) {
        bench *b = ud;
        b->law_messages++;
        b->law_last_usec = dp_loop_now();
}
static void on_law_done(dp_grpc_client_call *cc, int status, const char *message, void *ud) {}

typedef struct {
        uint64_t want;
} msg_wait;

static bool got_message(bench *b, void *ud) { return b->law_messages >= ((msg_wait *)ud)->want; }

static void usage_line(const char *name, const char *unit, uint64_t *v, size_t n, const char *goal) {
        qsort(v, n, sizeof *v, cmp_u64);
        printf("| %-44s | %9.1f | %9.1f | %9.1f | %9.1f | %5zu | %-12s |\n", name, (double)pct(v, n, 0.5) / 1.0,
               (double)pct(v, n, 0.9), (double)pct(v, n, 0.99), (double)v[n - 1], n, goal);
        (void)unit;
}

/* CPU time (user + system) of a process in microseconds: schedstat's
 * nanoseconds where the kernel has it, else stat's clock ticks. */
static double cpu_usec(pid_t pid) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/schedstat", (int)pid);
        FILE *f = fopen(path, "re");
        unsigned long long ns = 0;
        if (f) {
                int n = fscanf(f, "%llu", &ns);
                fclose(f);
                if (n == 1 && ns > 0) return (double)ns / 1000.0;
        }
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        f = fopen(path, "re");
        char buf[1024];
        double v = 0;
        if (f && fgets(buf, sizeof buf, f)) {
                const char *p = strrchr(buf, ')');
                unsigned long ut = 0, st = 0;
                if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
                        v = (double)(ut + st) * 1e6 / (double)sysconf(_SC_CLK_TCK);
        }
        if (f) fclose(f);
        return v;
}

/* The agent sleeps in epoll_wait (/proc/PID/wchan): whatever it was doing
 * is over. */
static bool agent_idle(bench *b, void *ud) {
        char path[64], wchan[64] = "";
        snprintf(path, sizeof path, "/proc/%d/wchan", (int)b->agent);
        FILE *f = fopen(path, "re");
        bool idle = f && fgets(wchan, sizeof wchan, f) && strstr(wchan, "epoll");
        if (f) fclose(f);
        return idle;
}

/* One Allocate of gpu-0's uuid + suffix over b->ch: the round trip in us. */
static uint64_t allocate_once(bench *b, const uint8_t *req, size_t len) {
        dp_grpc_reply rep = DP_GRPC_REPLY_INIT;
        uint64_t t0 = dp_loop_now();
        int r = dp_grpc_channel_call_sync(b->ch, "/v1beta1.DevicePlugin/Allocate", req, len, 0, &rep, NULL);
        uint64_t t1 = dp_loop_now();
        if (r < 0 || rep.status != 0) die("Allocate", r < 0 ? r : EIO);
        dp_grpc_reply_done(&rep);
        return t1 - t0;
}

/* Pack an AllocateRequest for one container and the device gpu-0's uuid +
 * suffix (the agent's devices file: id, uuid, ...). */
static void allocate_request(bench *b, const char *suffix, uint8_t **ret, size_t *ret_len) {
        _cleanup_free_ char *devices_path = dp_asprintf("%s/devices", b->st);
        char ids[2][128] = {{0}};
        FILE *f = fopen(devices_path, "re");
        if (!f || !fgets(ids[0], sizeof ids[0], f) || !fgets(ids[1], sizeof ids[1], f)) die("devices file", EIO);
        fclose(f);
        ids[1][strcspn(ids[1], "\n")] = 0; /* uuid of gpu-0 */
        _cleanup_free_ char *id = dp_asprintf("%s%s", ids[1], suffix);
        V1beta1__ContainerAllocateRequest creq = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT;
        creq.devices_ids = &id;
        creq.n_devices_ids = 1;
        V1beta1__ContainerAllocateRequest *creqs[1] = {&creq};
        V1beta1__AllocateRequest req = V1BETA1__ALLOCATE_REQUEST__INIT;
        req.container_requests = creqs;
        req.n_container_requests = 1;
        int r = dp_proto_pack(&req.base, ret, ret_len);
        if (r < 0) die("pack", r);
}

/* Connect b->ch to the agent's nvidia.com/gpu socket and pack the request
 * allocate_once sends (gpu-0's uuid + suffix). */
static void connect_agent(bench *b, const char *suffix, uint8_t **req, size_t *len) {
        _cleanup_free_ char *sock = dp_asprintf("%s/devplane-nvidia.com_gpu.sock", b->pd);
        b->ch = dp_grpc_channel_free(b->ch);
        int r = dp_grpc_channel_connect_unix(b->loop, sock, &b->ch);
        if (r < 0) die("connect", r);
        *req = NULL;
        *len = 0;
        allocate_request(b, suffix, req, len);
}

/* ---- 1. memory ----------------------------------------------------------- */

enum { MEM_VMRSS, MEM_PSS, MEM_PSS_ANON, MEM_PSS_FILE, MEM_ANON, MEM_N };
static const char *const mem_keys[MEM_N][2] = {
        {"status", "VmRSS:"},          {"smaps_rollup", "Pss:"},       {"smaps_rollup", "Pss_Anon:"},
        {"smaps_rollup", "Pss_File:"}, {"smaps_rollup", "Anonymous:"},
};

static void read_mem(pid_t pid, long ret[MEM_N]) {
        for (size_t i = 0; i < MEM_N; i++)
                ret[i] = rss_kib(pid, mem_keys[i][0], mem_keys[i][1]);
}

/* An agent registered and streaming (200 ms after its registration, the
 * first ListAndWatch settled): ret[0]; after 2,000 Allocates on one
 * connection, once it is back in epoll_wait: ret[1]. */
static void measure_mem(bench *b, const char *profile, const char *config, size_t n, const char *suffix,
                        long ret[2][MEM_N]) {
        dp_kubelet *k = new_kubelet(b);
        start_agent(b, profile, config);
        reg_wait w = {k, 1, "nvidia.com/gpu", n};
        if (!run_until(b, registered, &w, 20ull * 1000 * 1000)) die("agent registration", ETIMEDOUT);
        uint64_t until = dp_loop_now() + 200000;
        while (dp_loop_now() < until)
                dp_loop_run_once(b->loop, 20);
        read_mem(b->agent, ret[0]);
        /* as in allocate_run: the node would fsync on every list update */
        k = dp_kubelet_free(k);
        uint8_t *req;
        size_t len;
        connect_agent(b, suffix, &req, &len);
        for (size_t i = 0; i < 2000; i++)
                (void)allocate_once(b, req, len);
        if (!run_until(b, agent_idle, NULL, 5ull * 1000 * 1000)) die("agent idle", ETIMEDOUT);
        read_mem(b->agent, ret[1]);
        free(req);
        b->ch = dp_grpc_channel_free(b->ch);
        stop_agent(b);
}

/* Start an agent, wait for `n` devices, connect to its socket and time n_alloc
 * one-device Allocate calls (after 200 warm-up calls) of gpu-0's uuid +
 * suffix. Leaves the agent running and b->ch connected; returns the agent's
 * CPU microseconds per call. */
static double allocate_run(bench *b, const char *profile, const char *config, size_t n, const char *suffix,
                           uint64_t *lat, size_t n_alloc) {
        dp_kubelet *k = new_kubelet(b);
        start_agent(b, profile, config);
        reg_wait w = {k, 1, "nvidia.com/gpu", n};
        if (!run_until(b, registered, &w, 20ull * 1000 * 1000)) die("agent registration", ETIMEDOUT);
        /* The node in this process would fsync its checkpoint on every
         * ListAndWatch update and stall this loop: let it go; the agent
         * keeps serving its socket. */
        k = dp_kubelet_free(k);
        /* one device id, as the node would send it */
        uint8_t *reqbuf;
        size_t reqlen;
        connect_agent(b, suffix, &reqbuf, &reqlen);
        double cpu0 = 0;
        for (size_t i = 0; i < 200 + n_alloc; i++) { /* 200 warm-up calls */
                if (i == 200) cpu0 = cpu_usec(b->agent);
                uint64_t us = allocate_once(b, reqbuf, reqlen);
                if (i >= 200) lat[i - 200] = us;
        }
        double cpu = (cpu_usec(b->agent) - cpu0) / (double)n_alloc;
        free(reqbuf);
        return cpu;
}

int main(int argc, char **argv) {
        bool quick = argc > 1 && streq(argv[1], "--quick");
        size_t n_alloc = quick ? 2000 : 20000, n_health = quick ? 50 : 300, n_restart = quick ? 10 : 50;
        signal(SIGPIPE, SIG_IGN);
        dp_log_setup("bench", DP_LOG_WARNING);
        bench b = {0};
        const char *tmp = getenv("TMPDIR");
        b.dir = dp_asprintf("%s/bench-v1.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!b.dir || !mkdtemp(b.dir)) die("mkdtemp", errno);
        b.pd = dp_asprintf("%s/plugins", b.dir);
        b.st = dp_asprintf("%s/state", b.dir);
        int r = dp_loop_new(&b.loop);
        if (r < 0) die("loop", r);

        /* 1,024 advertised devices: 128 GPUs (the per-node cap) x 8 time-slicing replicas */
        _cleanup_free_ char *big_profile = dp_asprintf("%s/gpus-128.yaml", b.dir);
        _cleanup_free_ char *big_config = dp_asprintf("%s/replicas-8.yaml", b.dir);
        write_text(big_profile,
                   "apiVersion: devplane.io/v1alpha1\nkind: DeviceProfile\nmetadata: {name: gpus-128}\n"
                   "spec:\n  domain: nvidia.com\n  defaults: {memory: 80Gi, deviceNodes: [\"/dev/nvidia{index}\"]}\n"
                   "  devices:\n  - {count: 64, numaNode: 0}\n  - {count: 64, numaNode: 1}\n");
        write_text(
                big_config,
                "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - {name: nvidia.com/gpu, replicas: 8}\n");

        static long m8[2][MEM_N], m1k[2][MEM_N];
        measure_mem(&b, "a100-80gb-8", NULL, 8, "", m8);
        measure_mem(&b, big_profile, big_config, 1024, "::0", m1k);

        /* 2. Allocate: round trip and the agent's CPU per call, 1,024 devices
         * first (that agent is stopped), then 8 (that one serves 3 and 4) */
        uint64_t *lat1k = calloc(n_alloc, sizeof *lat1k), *lat = calloc(n_alloc, sizeof *lat);
        if (!lat1k || !lat) die("calloc", ENOMEM);
        double cpu1k = allocate_run(&b, big_profile, big_config, 1024, "::0", lat1k, n_alloc);
        stop_agent(&b);
        double cpu8 = allocate_run(&b, "a100-80gb-8", NULL, 8, "", lat, n_alloc);

        /* 3. health change -> ListAndWatch message at the client */
        if ((r = dp_grpc_channel_start_call(b.ch, "/v1beta1.DevicePlugin/ListAndWatch", NULL, 0, 0, on_law_message,
                                            on_law_done, &b, NULL)) < 0)
                die("ListAndWatch", r);
        msg_wait mw = {1};
        if (!run_until(&b, got_message, &mw, 5ull * 1000 * 1000)) die("first list", ETIMEDOUT);
        uint64_t *hl = calloc(n_health, sizeof *hl);
        for (size_t i = 0; i < n_health; i++) {
                dp_error e = DP_ERROR_INIT;
                uint64_t t0 = dp_loop_now();
                if (dp_agent_health_set(b.st, "gpu-3", i % 2 ? DP_HEALTH_HEALTHY : DP_HEALTH_UNHEALTHY, &e) < 0) {
                        fprintf(stderr, "bench-v1: %s\n", dp_error_msg(&e));
                        return 1;
                }
                mw.want = b.law_messages + 1;
                if (!run_until(&b, got_message, &mw, 5ull * 1000 * 1000)) die("health update", ETIMEDOUT);
                hl[i] = b.law_last_usec - t0;
        }
        b.ch = dp_grpc_channel_free(b.ch);

        /* 4. kubelet.sock re-created -> Register received */
        uint64_t *rl = calloc(n_restart, sizeof *rl);
        dp_kubelet *k = new_kubelet(&b);
        for (size_t i = 0; i < n_restart; i++) {
                k = dp_kubelet_free(k);
                k = new_kubelet(&b); /* returns once kubelet.sock listens */
                uint64_t t0 = dp_loop_now();
                reg_wait rw = {k, 1, NULL, 0};
                if (!run_until(&b, registered, &rw, 5ull * 1000 * 1000)) die("re-registration", ETIMEDOUT);
                rl[i] = dp_loop_now() - t0;
        }
        stop_agent(&b);
        dp_kubelet_free(k);

        struct utsname un;
        uname(&un);
        char cpu[512] = "?";
        FILE *ci = fopen("/proc/cpuinfo", "re");
        for (char line[512]; ci && fgets(line, sizeof line, ci);)
                if (startswith(line, "model name")) {
                        char *c = strchr(line, ':');
                        snprintf(cpu, sizeof cpu, "%s", c ? c + 2 : line);
                        cpu[strcspn(cpu, "\n")] = 0;
                        break;
                }
        if (ci) fclose(ci);
        printf("devplane %s V1 node path benchmark%s\n", DP_VERSION, quick ? " (--quick)" : "");
        printf("machine: %s, %ld CPUs, Linux %s %s; compiler %s; nghttp2 %s; protobuf-c %s\n\n", cpu,
               sysconf(_SC_NPROCESSORS_ONLN), un.release, un.machine, __VERSION__, nghttp2_version(0)->version_str,
               protobuf_c_version());
        printf("| %-44s | %9s | %9s | %9s | %9s | %9s |\n", "agent memory, KiB", "Pss", "Pss_Anon", "Pss_File",
               "Anonymous", "VmRSS");
        printf("|%s|%s|%s|%s|%s|%s|\n", "----------------------------------------------", "-----------", "-----------",
               "-----------", "-----------", "-----------");
        static const char *const mem_rows[2][2] = {
                {"8 devices (a100-80gb-8), registered", "  after 2,000 Allocates"},
                {"1,024 devices (128 GPUs x 8), registered", "  after 2,000 Allocates"},
        };
        for (size_t d = 0; d < 2; d++)
                for (size_t i = 0; i < 2; i++) {
                        const long *m = d ? m1k[i] : m8[i];
                        printf("| %-44s | %9ld | %9ld | %9ld | %9ld | %9ld |\n", mem_rows[d][i], m[MEM_PSS],
                               m[MEM_PSS_ANON], m[MEM_PSS_FILE], m[MEM_ANON], m[MEM_VMRSS]);
                }
        printf("\n| %-44s | %9s | %9s | %9s | %9s | %5s | %-12s |\n", "latency (microseconds)", "median", "p90", "p99",
               "max", "runs", "goal");
        printf("|----------------------------------------------|-----------|-----------|-----------|-----------|-------"
               "|--------------|\n");
        usage_line("Allocate round trip (1 container, 1 device)", "us", lat, n_alloc, "p99 <= 200");
        usage_line("... with 1,024 devices", "us", lat1k, n_alloc, "p99 <= 200");
        usage_line("health file change -> ListAndWatch message", "us", hl, n_health, "<= 5000");
        usage_line("kubelet.sock listening -> Register received", "us", rl, n_restart, "<= 100000");
        printf("\n| %-44s | %9s | %9s |\n", "agent CPU per Allocate (user + system), us", "8", "1,024");
        printf("|----------------------------------------------|-----------|-----------|\n");
        printf("| %-44s | %9.1f | %9.1f |\n", "1 container, 1 device, after 200 warm-up", cpu8, cpu1k);
        free(lat);
        free(lat1k);
        free(hl);
        free(rl);
        dp_loop_free(b.loop);
        _cleanup_free_ char *rm = dp_asprintf("rm -rf '%s'", b.dir);
        if (rm && system(rm) != 0) fprintf(stderr, "bench-v1: could not remove %s\n", b.dir);
        free(b.dir);
        free(b.pd);
        free(b.st);
        return 0;
}
