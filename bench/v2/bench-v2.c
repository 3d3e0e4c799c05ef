/* SPDX-License-Identifier: Apache-2.0
 *
 * bench-v2 — the V2 (DRA) node path, measured over real unix sockets against
 * a real `devplane agent --dra` process (example-gpu, both paths on):
 *   1. NodePrepareResources and NodeUnprepareResources round trips (one claim
 *      per call, as the kubelet batches one pod's claims of one driver), each
 *      including the driver's work: claim file read, CDI spec written with
 *      fsync + rename, checkpoint saved the same way, ledger holds;
 *   2. agent resident memory with V1 registered and streaming (an in-process
 *      `devplane node` with the DRA manager, which also registered the
 *      driver through the plugin registry) after the runs.
 * Prints one table (median, p90, p99, max, runs) with the machine. Build
 * without sanitizers for figures worth quoting:
 *   cmake -S . -B build/bench -DCMAKE_BUILD_TYPE=Release && cmake --build build/bench --target bench-v2 devplane
 *   build/bench/bench-v2 [--quick]
 * Benchmarks are not tests: nothing here asserts a time.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "base/log.h"
#include "base/strbuf.h"
#include "grpc/grpc.h"
#include "node/node.h"
#include "proto/proto.h"

#ifndef DP_DEVPLANE_PATH
#define DP_DEVPLANE_PATH "devplane"
#endif

static void die(const char *what, int r) {
        fprintf(stderr, "bench-v2: %s: %s\n", what, strerror(r < 0 ? -r : r));
        exit(1);
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

static uint64_t pct(const uint64_t *v, size_t n, double p) { return n ? v[(size_t)(p * (double)(n - 1) + 0.5)] : 0; }

static long status_kib(pid_t pid, const char *file, const char *key) {
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

static void row(const char *name, uint64_t *v, size_t n) {
        qsort(v, n, sizeof *v, cmp_u64);
        printf("| %-40s | %9.1f | %9.1f | %9.1f | %9.1f | %5zu |\n", name, (double)pct(v, n, 0.5),
               (double)pct(v, n, 0.9), (double)pct(v, n, 0.99), (double)v[n - 1], n);
}

static int call(dp_grpc_channel *ch, const char *path, const ProtobufCMessage *req, const char *uid) {
        _cleanup_grpc_reply_ dp_grpc_reply rep = DP_GRPC_REPLY_INIT;
        dp_error e = DP_ERROR_INIT;
        const ProtobufCMessageDescriptor *t =
                strstr(path, "Unprepare")
                        ? &k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__descriptor
                        : &k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__descriptor;
        int r = dp_grpc_channel_call_sync_msg(ch, path, req, t, 45ull * 1000 * 1000, &rep, &e);
        if (r < 0) {
                fprintf(stderr, "bench-v2: %s: %s\n", path, dp_error_msg(&e));
                exit(1);
        }
        if (!strstr(path, "Unprepare")) {
                const K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse *m = (const void *)rep.msg;
                if (m->n_claims != 1 || !streq(m->claims[0]->key, uid) ||
                    (m->claims[0]->value->error && *m->claims[0]->value->error)) {
                        fprintf(stderr, "bench-v2: prepare %s: %s\n", uid,
                                m->n_claims ? m->claims[0]->value->error : "no entry");
                        exit(1);
                }
        }
        return 0;
}

int main(int argc, char **argv) {
        bool quick = argc > 1 && streq(argv[1], "--quick");
        size_t n = quick ? 200 : 2000;
        signal(SIGPIPE, SIG_IGN);
        dp_log_setup("bench", DP_LOG_WARNING);
        const char *tmp = getenv("TMPDIR");
        _cleanup_free_ char *dir = dp_asprintf("%s/bench-v2.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!dir || !mkdtemp(dir)) die("mkdtemp", errno);
        const char *names[] = {"plugins", "state", "registry", "kplugins", "cdi", "slices", "claims", "claims/default"};
        char *p[ELEMENTSOF(names)];
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                p[i] = dp_asprintf("%s/%s", dir, names[i]);
                if (!p[i] || mkdir(p[i], 0750) < 0) die(names[i], errno);
        }
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *f = dp_asprintf("%s/c%zu.yaml", p[7], i);
                FILE *out = f ? fopen(f, "we") : NULL;
                if (!out) die("claim file", errno);
                fprintf(out,
                        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                        "metadata: {name: c%zu, namespace: default, uid: uid-%zu}\n"
                        "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}\n"
                        "status: {allocation: {devices: {results: [{request: gpu, driver: gpu.example.com, pool: "
                        "bench, device: gpu-%zu}]}}}\n",
                        i, i, i % 8);
                fclose(out);
        }
        dp_loop *l = NULL;
        int r = dp_loop_new(&l);
        if (r < 0) die("loop", r);
        dp_node_config nc = {.plugin_dir = p[0], .node_name = "bench", .registry_dir = p[2]};
        dp_kubelet *k = NULL;
        dp_error e = DP_ERROR_INIT;
        if (dp_kubelet_new(l, &nc, &k, &e) < 0) {
                fprintf(stderr, "bench-v2: node: %s\n", dp_error_msg(&e));
                return 1;
        }
        pid_t pid = fork();
        if (pid < 0) die("fork", errno);
        if (pid == 0) {
                int fd = open("/dev/null", O_WRONLY);
                if (fd >= 0) dup2(fd, 2);
                const char *av[] = {DP_DEVPLANE_PATH,
                                    "agent",
                                    "--plugin-dir",
                                    p[0],
                                    "--state-dir",
                                    p[1],
                                    "--node-name",
                                    "bench",
                                    "--profile",
                                    "example-gpu",
                                    "--dra",
                                    "--registry-dir",
                                    p[2],
                                    "--plugins-dir",
                                    p[3],
                                    "--cdi-dir",
                                    p[4],
                                    "--slices-dir",
                                    p[5],
                                    "--claims-dir",
                                    p[6],
                                    NULL};
                execv(DP_DEVPLANE_PATH, (char **)av);
                _exit(127);
        }
        /* Wait for V1 registration and the DRA socket (the node runs on this loop). */
        _cleanup_free_ char *sock = dp_asprintf("%s/gpu.example.com/dra.sock", p[3]);
        dp_grpc_channel *ch = NULL;
        uint64_t end = dp_loop_now() + 30ull * 1000 * 1000;
        while (!ch || dp_kubelet_allocatable(k, "example.com/gpu") != 8) {
                if (dp_loop_now() > end) die("agent start", ETIMEDOUT);
                if (!ch && dp_grpc_channel_connect_unix(l, sock, &ch) < 0) ch = NULL;
                dp_loop_run_once(l, 10);
        }
        uint64_t *prep = calloc(n, sizeof *prep), *unprep = calloc(n, sizeof *unprep);
        if (!prep || !unprep) die("calloc", ENOMEM);
        for (size_t i = 0; i < n; i++) {
                char name[32], uid[32];
                snprintf(name, sizeof name, "c%zu", i);
                snprintf(uid, sizeof uid, "uid-%zu", i);
                K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim c = K8S__IO__KUBELET__PKG__APIS__DRA__V1__CLAIM__INIT;
                c.namespace_ = (char *)"default";
                c.name = name;
                c.uid = uid;
                K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim *cp = &c;
                K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest pr =
                        K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCES_REQUEST__INIT;
                pr.claims = &cp;
                pr.n_claims = 1;
                K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesRequest ur =
                        K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_UNPREPARE_RESOURCES_REQUEST__INIT;
                ur.claims = &cp;
                ur.n_claims = 1;
                uint64_t t0 = dp_loop_now();
                call(ch, "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources", &pr.base, uid);
                uint64_t t1 = dp_loop_now();
                call(ch, "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources", &ur.base, uid);
                prep[i] = t1 - t0;
                unprep[i] = dp_loop_now() - t1;
        }
        /* Memory with both paths on, 8 claims still prepared. */
        for (size_t i = 0; i < 8; i++) {
                char name[32], uid[32];
                snprintf(name, sizeof name, "c%zu", i);
                snprintf(uid, sizeof uid, "uid-%zu", i);
                K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim c = K8S__IO__KUBELET__PKG__APIS__DRA__V1__CLAIM__INIT;
                c.namespace_ = (char *)"default";
                c.name = name;
                c.uid = uid;
                K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim *cp = &c;
                K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest pr =
                        K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCES_REQUEST__INIT;
                pr.claims = &cp;
                pr.n_claims = 1;
                call(ch, "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources", &pr.base, uid);
        }
        long rss = status_kib(pid, "status", "VmRSS:"), anon = status_kib(pid, "status", "RssAnon:"),
             hwm = status_kib(pid, "status", "VmHWM:");
        struct utsname u;
        uname(&u);
        printf("devplane %s V2 (DRA) node path benchmark%s\n", DP_VERSION, quick ? " (--quick)" : "");
        printf("machine: Linux %s %s, %ld CPUs online\n\n", u.release, u.machine, sysconf(_SC_NPROCESSORS_ONLN));
        printf("| %-40s | %9s | %9s | %9s | %9s | %5s |\n", "round trip (microseconds)", "median", "p90", "p99", "max",
               "runs");
        printf("|------------------------------------------|-----------|-----------|-----------|-----------|-------|"
               "\n");
        row("NodePrepareResources (1 claim, 1 GPU)", prep, n);
        row("NodeUnprepareResources (1 claim)", unprep, n);
        printf("\n| %-40s | %9s | %9s | %9s |\n", "agent memory, KiB (V1 + V2 on)", "VmRSS", "RssAnon", "VmHWM");
        printf("|------------------------------------------|-----------|-----------|-----------|\n");
        printf("| %-40s | %9ld | %9ld | %9ld |\n", "example-gpu, 8 claims prepared", rss, anon, hwm);
        kill(pid, SIGTERM);
        int st;
        waitpid(pid, &st, 0);
        dp_grpc_channel_free(ch);
        dp_kubelet_free(k);
        dp_loop_free(l);
        free(prep);
        free(unprep);
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                free(p[i]);
        _cleanup_free_ char *rm = dp_asprintf("rm -rf '%s'", dir);
        if (rm && system(rm) != 0) fprintf(stderr, "bench-v2: could not remove %s\n", dir);
        return 0;
}
