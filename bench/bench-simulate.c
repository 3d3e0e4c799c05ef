/* SPDX-License-Identifier: Apache-2.0
 * bench-simulate — `devplane simulate` end to end, as a user runs it: the
 * real binary on a generated cluster, timed from the outside (wall clock,
 * CPU time user + system and peak resident memory from wait4's rusage:
 * on a shared machine the CPU time is the figure that does not depend on
 * the load).
 *
 * The input (issue 13's shape): N nodes of the built-in a100-80gb-8 profile
 * (8 whole GPUs each), the first half a device-plugin (V1) group, the second
 * a DRA (V2) group; 10 pods per node, alternating a V1 request
 * (limits nvidia.com/gpu: k) and a DRA claim from a template (k devices of
 * DeviceClass gpu.nvidia.com), k drawn from a fixed-seed generator: 1 (70%),
 * 2 (20%), 4 (10%). Demand exceeds supply, so many pods stay Pending (and in
 * the all-V1 and all-V2 runs, every pod of the other model does): the case
 * where the cost of reasons shows.
 *
 * With --topology (issue 22's shape) the nodes are spread over 4 zones per
 * group (label topology.kubernetes.io/zone) and the pods come in workloads
 * of 20 (label app); every other workload carries a required constraint:
 * pod anti-affinity to itself on kubernetes.io/hostname, or a topology
 * spread constraint (maxSkew 1, DoNotSchedule) over zones: half the pods.
 *
 * With --queues (issue 25's shape) the cluster runs Kueue: N/5 ClusterQueues
 * (1,000 at 5,000 nodes) in 10 cohorts, each with nominal quota for its share
 * of the GPUs on two flavors (the V1 half and the V2 half of the nodes, told
 * apart by a node label; all nodes device-plugin GPUs here), borrowing within
 * the cohort, and the preemption policies of Kueue's own performance suite
 * (withinClusterQueue LowerPriority, reclaimWithinCohort Any); the pods come
 * as batch/v1 Jobs of one pod labelled with a LocalQueue, one per pod of the
 * other shapes (50,000 at 5,000 nodes), in Kueue's three classes (small:
 * 1 GPU, priority 50; medium: 2 GPUs, 100; large: 4 GPUs, 200; 70/20/10 %),
 * half of the queues asked for twice as much as the other half, so the
 * second half lends and the first borrows. Demand is 1.9x the quota.
 * --finish K (with --queues) adds a Timeline deleting the pods of Jobs 0 to
 * K-1, in 50 batches 10 s apart: those Kueue admitted finish and release
 * their quota, and what waited is admitted then (Kueue over time).
 *
 * With --kai (issue 25's KAI-Scheduler shape, docs/queues-kai.md "Cost")
 * the cluster is N Node objects of 8 GPUs, 64 cores and 512 GiB (KAI counts
 * Node objects, not a Fleet's), a KAI Queue tree of N/50 departments (100 at
 * 5,000 nodes) of 10 leaf queues each (department deserved: its share of the
 * GPUs; leaves a tenth of it; queue priorities 100-102, overQuotaWeight 1-4),
 * KAI's four PriorityClasses, and the pods of kai-scheduler, one per pod of
 * the other shapes, in jobs: a PodGroup (as KAI's podgrouper makes one per
 * workload) of one pod, or one job in 16 a gang of 2-4 pods (minMember all
 * of them; each gang KAI admits costs devplane's kube-scheduler engine a
 * scan of every pod, sched.c run_gang), each job of one class (train 1 GPU 70 %,
 * build-preemptible 2 GPUs 20 %, build 4 GPUs 10 %: non-preemptible, only
 * within quota) in a leaf queue (the first half of the leaves twice as
 * likely); one job in 8 is running (its pods bound first-fit on the first
 * third of the nodes), so Reclaim and Preempt have victims.
 *
 * With --mix the generator also draws node labels, taints, node selectors,
 * tolerations, named claims and claims with several requests and
 * constraints: the random clusters placements are compared on before and
 * after a change (tests/sched/test-simulate-compare.sh).
 *
 * Usage:
 *   bench-simulate [-b DEVPLANE] [-r RUNS] [-n N[,N...]] [--no-report] [--topology | --queues [--finish K] | --kai]
 *       prints, per node count, with and without --report: median wall
 *       seconds and peak RSS (MiB) of RUNS runs with their spread (min-max)
 *   bench-simulate --generate N [-s SEED] [--mix] [--topology | --queues [--finish K] | --kai] [-p PODS_PER_NODE]
 *       writes the input to standard output
 * DEVPLANE defaults to ../devplane next to this program (the build tree). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* splitmix64: the same sequence on every machine */
static uint64_t rng_state;
static uint64_t rng(void) {
        uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}
static unsigned pick(unsigned n) { return (unsigned)(rng() % n); }

static unsigned gpus_wanted(void) {
        unsigned x = pick(10);
        return x < 7 ? 1 : x < 9 ? 2 : 4;
}

#define TOPO_ZONES 4
#define TOPO_REPLICAS 20

/* --topology: each model's nodes in TOPO_ZONES groups, one zone each. */
static void topology_groups(FILE *f, unsigned v1, unsigned v2) {
        for (unsigned m = 0; m < 2; m++)
                for (unsigned z = 0; z < TOPO_ZONES; z++) {
                        unsigned total = m ? v2 : v1, cnt = total / TOPO_ZONES + (z < total % TOPO_ZONES);
                        if (!cnt) continue;
                        fprintf(f,
                                "  - {name: v%u-z%u, profile: a100-80gb-8, count: %u, model: v%u,\n"
                                "     labels: {topology.kubernetes.io/zone: z%u}}\n",
                                m + 1, z, cnt, m + 1, z);
                }
}

/* --topology: the pod's workload label and, every other workload, its constraint. */
static void topology_pod(FILE *f, unsigned i) {
        unsigned app = i / TOPO_REPLICAS;
        fprintf(f, "- apiVersion: v1\n  kind: Pod\n  metadata: {name: p%u, labels: {app: a%u}}\n  spec:\n", i, app);
        if (app % 4 == 0)
                fprintf(f, "    affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                           "[{labelSelector: {matchLabels: {app: a%u}}, topologyKey: kubernetes.io/hostname}]}}\n",
                        app);
        else if (app % 4 == 2)
                fprintf(f, "    topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, "
                           "whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: a%u}}}]\n",
                        app);
}

#define QUEUE_COHORTS 10
#define QUEUE_NODES_PER_CQ 5

/* --queues: the Kueue objects (flavors, priority classes, cohorts' queues). */
static void queues_objects(FILE *f, unsigned nodes) {
        unsigned ncq = nodes / QUEUE_NODES_PER_CQ ? nodes / QUEUE_NODES_PER_CQ : 1;
        /* each flavor holds half the nodes' GPUs, shared evenly */
        unsigned quota = nodes * 8 / 2 / ncq;
        for (unsigned m = 1; m <= 2; m++)
                fprintf(f, "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: pool-v%u}\n"
                           "spec: {nodeLabels: {pool: v%u}}\n",
                        m, m);
        static const char *const classes[] = {"small", "medium", "large"};
        for (unsigned k = 0; k < 3; k++)
                fprintf(f, "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: %s}\n"
                           "value: %u\n",
                        classes[k], 50u << k);
        for (unsigned c = 0; c < ncq; c++)
                fprintf(f,
                        "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq%u}\nspec:\n"
                        "  cohortName: cohort%u\n  namespaceSelector: {}\n"
                        "  preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: Any}\n"
                        "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
                        "    - {name: pool-v1, resources: [{name: nvidia.com/gpu, nominalQuota: %u}]}\n"
                        "    - {name: pool-v2, resources: [{name: nvidia.com/gpu, nominalQuota: %u}]}\n"
                        "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
                        "metadata: {name: lq%u, namespace: default}\nspec: {clusterQueue: cq%u}\n",
                        c, c % QUEUE_COHORTS, quota, quota, c, c);
}

/* --queues: Job i of one pod in a LocalQueue, its class drawn. */
static void queues_job(FILE *f, unsigned i, unsigned ncq) {
        static const char *const classes[] = {"small", "medium", "large"};
        unsigned k = gpus_wanted(), cls = k == 1 ? 0 : k == 2 ? 1 : 2;
        unsigned cq = pick(3) ? pick(ncq / 2 ? ncq / 2 : 1) : pick(ncq);
        fprintf(f,
                "- apiVersion: batch/v1\n  kind: Job\n  metadata: {name: j%u, labels: {kueue.x-k8s.io/queue-name: lq%u, "
                "kueue.x-k8s.io/priority-class: %s}}\n  spec:\n    parallelism: 1\n    suspend: true\n    template:\n"
                "      spec:\n        restartPolicy: Never\n        containers:\n        - name: c\n          image: x\n"
                "          resources: {limits: {nvidia.com/gpu: %u}}\n",
                i, cq, classes[cls], k);
}

/* --finish K: the Timeline. */
static void queues_timeline(FILE *f, unsigned finish) {
        unsigned per = (finish + 49) / 50;
        fprintf(f, "---\napiVersion: devplane.io/v1alpha1\nkind: Timeline\nmetadata: {name: finish}\nspec:\n  events:\n");
        for (unsigned b = 0; b * per < finish; b++) {
                fprintf(f, "  - at: %us\n    delete:\n", (b + 1) * 10);
                for (unsigned i = b * per; i < finish && i < (b + 1) * per; i++)
                        fprintf(f, "    - j%u-0\n", i);
        }
}

static void generate_queues(FILE *f, unsigned nodes, unsigned per_node, uint64_t seed, unsigned finish) {
        rng_state = seed;
        unsigned v1 = nodes / 2, v2 = nodes - v1, ncq = nodes / QUEUE_NODES_PER_CQ ? nodes / QUEUE_NODES_PER_CQ : 1;
        fprintf(f, "# bench-simulate --generate %u -s %llu --queues -p %u\n", nodes, (unsigned long long)seed, per_node);
        fprintf(f, "apiVersion: devplane.io/v1alpha1\nkind: Fleet\nmetadata: {name: bench-%u}\nspec:\n"
                   "  scoring: binpack\n  nodeGroups:\n"
                   "  - {name: v1, profile: a100-80gb-8, count: %u, model: v1, labels: {pool: v1}}\n"
                   "  - {name: v2, profile: a100-80gb-8, count: %u, model: v1, labels: {pool: v2}}\n",
                nodes, v1, v2);
        queues_objects(f, nodes);
        fprintf(f, "---\napiVersion: v1\nkind: List\nitems:\n");
        for (unsigned i = 0; i < nodes * per_node; i++)
                queues_job(f, i, ncq);
        if (finish) queues_timeline(f, finish);
}

#define KAI_NODES_PER_DEPARTMENT 50
#define KAI_QUEUES_PER_DEPARTMENT 10
#define KAI_NODE_GPUS 8

/* --kai: the Node objects, one a line in a List. */
static void kai_nodes(FILE *f, unsigned nodes) {
        fprintf(f, "---\napiVersion: v1\nkind: List\nitems:\n");
        for (unsigned n = 0; n < nodes; n++)
                fprintf(f,
                        "- {apiVersion: v1, kind: Node, metadata: {name: n%u, labels: {kubernetes.io/hostname: n%u}}, "
                        "status: {allocatable: {cpu: \"64\", memory: 512Gi, pods: \"110\", nvidia.com/gpu: \"%u\"}}}\n",
                        n, n, KAI_NODE_GPUS);
}

/* --kai: departments, their leaf queues (GPUs the binding resource), KAI's priority classes. */
static void kai_queues(FILE *f, unsigned nodes) {
        unsigned nd = nodes / KAI_NODES_PER_DEPARTMENT ? nodes / KAI_NODES_PER_DEPARTMENT : 1;
        unsigned dept = nodes * KAI_NODE_GPUS / nd;
        static const char *const any = "cpu: {quota: -1, limit: -1, overQuotaWeight: 1}, "
                                       "memory: {quota: -1, limit: -1, overQuotaWeight: 1}";
        for (unsigned d = 0; d < nd; d++) {
                fprintf(f,
                        "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: d%u}\n"
                        "spec: {resources: {%s, gpu: {quota: %u, limit: -1, overQuotaWeight: 1}}}\n",
                        d, any, dept);
                for (unsigned q = 0; q < KAI_QUEUES_PER_DEPARTMENT; q++)
                        fprintf(f,
                                "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q%u}\n"
                                "spec: {parentQueue: d%u, priority: %u, resources: {%s, gpu: {quota: %u, limit: -1, "
                                "overQuotaWeight: %u}}}\n",
                                d * KAI_QUEUES_PER_DEPARTMENT + q, d, 100 + q % 3, any,
                                dept / KAI_QUEUES_PER_DEPARTMENT, 1 + q % 4);
        }
        static const struct {
                const char *name;
                unsigned value;
        } classes[] = {{"train", 50}, {"build-preemptible", 75}, {"build", 100}, {"inference", 125}};
        for (unsigned k = 0; k < 4; k++)
                fprintf(f,
                        "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: %s}\n"
                        "value: %u\n",
                        classes[k].name, classes[k].value);
}

/* --kai: where the running jobs' pods go, first fit over the first third of the nodes. */
typedef struct kai_fill {
        unsigned node, used, nodes;
} kai_fill;

static const char *kai_bind(kai_fill *fill, unsigned gpus, char *buf, size_t size) {
        while (fill->node < fill->nodes / 3 && fill->used + gpus > KAI_NODE_GPUS)
                fill->node++, fill->used = 0;
        if (fill->node >= fill->nodes / 3) return "";
        fill->used += gpus;
        snprintf(buf, size, ", nodeName: n%u", fill->node);
        return buf;
}

/* --kai: job j, a PodGroup of 1 or 2-4 pods from pod i on (at most
 * left); the number of pods written. */
static unsigned kai_job(FILE *f, unsigned j, unsigned i, unsigned left, unsigned nq, kai_fill *fill) {
        static const char *const classes[] = {"train", "build-preemptible", "build"};
        unsigned k = gpus_wanted(), cls = k == 1 ? 0 : k == 2 ? 1 : 2;
        unsigned q = pick(3) ? pick(nq / 2 ? nq / 2 : 1) : pick(nq);
        unsigned size = pick(16) ? 1 : 2 + pick(3);
        bool running = pick(8) == 0;
        if (size > left) size = left;
        fprintf(f,
                "- {apiVersion: scheduling.run.ai/v2alpha2, kind: PodGroup, metadata: {name: g%u, namespace: default}, "
                "spec: {minMember: %u, queue: q%u, priorityClassName: %s}}\n",
                j, size, q, classes[cls]);
        for (unsigned p = 0; p < size; p++) {
                char bind[64] = "";
                fprintf(f,
                        "- {apiVersion: v1, kind: Pod, metadata: {name: p%u, namespace: default, labels: "
                        "{kai.scheduler/queue: q%u}, annotations: {pod-group-name: g%u}}, spec: {schedulerName: "
                        "kai-scheduler, priorityClassName: %s%s, containers: [{name: c, image: x, resources: {limits: "
                        "{nvidia.com/gpu: %u}}}]}}\n",
                        i + p, q, j, classes[cls], running ? kai_bind(fill, k, bind, sizeof(bind)) : "", k);
        }
        return size;
}

static void generate_kai(FILE *f, unsigned nodes, unsigned per_node, uint64_t seed) {
        rng_state = seed;
        unsigned nd = nodes / KAI_NODES_PER_DEPARTMENT ? nodes / KAI_NODES_PER_DEPARTMENT : 1;
        fprintf(f, "# bench-simulate --generate %u -s %llu --kai -p %u\n", nodes, (unsigned long long)seed, per_node);
        kai_queues(f, nodes);
        kai_nodes(f, nodes);
        kai_fill fill = {0, 0, nodes};
        for (unsigned i = 0, j = 0, pods = nodes * per_node; i < pods; j++)
                i += kai_job(f, j, i, pods - i, nd * KAI_QUEUES_PER_DEPARTMENT, &fill);
}

static void generate(FILE *f, unsigned nodes, unsigned per_node, uint64_t seed, bool mix, bool topo) {
        rng_state = seed;
        unsigned v1 = nodes / 2, v2 = nodes - v1;
        fprintf(f, "# bench-simulate --generate %u -s %llu%s%s -p %u\n", nodes, (unsigned long long)seed,
                mix ? " --mix" : "", topo ? " --topology" : "", per_node);
        fprintf(f, "apiVersion: devplane.io/v1alpha1\nkind: Fleet\nmetadata: {name: bench-%u}\nspec:\n"
                   "  scoring: %s\n  nodeGroups:\n",
                nodes, mix && pick(2) ? "spread" : "binpack");
        if (topo)
                topology_groups(f, v1, v2);
        else if (!mix) {
                fprintf(f, "  - {name: v1, profile: a100-80gb-8, count: %u, model: v1}\n", v1);
                fprintf(f, "  - {name: v2, profile: a100-80gb-8, count: %u, model: v2}\n", v2);
        } else {
                /* up to 6 groups with labels and taints */
                static const char *const models[] = {"v1", "v2", "both"};
                static const char *const profiles[] = {"a100-80gb-8", "a100-mixed", "example-gpu"};
                unsigned ng = 2 + pick(5), left = nodes;
                for (unsigned g = 0; g < ng && left; g++) {
                        unsigned cnt = g + 1 == ng ? left : 1 + pick(left);
                        if (cnt > left) cnt = left;
                        left -= cnt;
                        fprintf(f, "  - name: g%u\n    profile: %s\n    count: %u\n    model: %s\n", g,
                                profiles[pick(3)], cnt, models[pick(3)]);
                        fprintf(f, "    labels: {zone: z%u}\n", pick(3));
                        if (pick(4) == 0) fprintf(f, "    taints: [{key: dedicated, value: t%u, effect: NoSchedule}]\n", pick(2));
                }
        }
        fprintf(f, "---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.nvidia.com}\n"
                   "spec:\n  selectors:\n  - cel: {expression: \"device.driver == 'gpu.nvidia.com' && "
                   "device.attributes['gpu.nvidia.com'].type == 'gpu'\"}\n");
        if (mix)
                fprintf(f, "---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: "
                           "gpu.example.com}\nspec:\n  selectors:\n  - cel: {expression: \"device.driver == "
                           "'gpu.example.com'\"}\n");
        for (unsigned k = 1; k <= 4; k *= 2)
                fprintf(f, "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: "
                           "{name: gpus-%u}\nspec:\n  spec:\n    devices:\n      requests:\n      - name: gpu\n"
                           "        exactly: {deviceClassName: gpu.nvidia.com, count: %u}\n",
                        k, k);
        if (mix)
                fprintf(f, "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: "
                           "{name: pair}\nspec:\n  spec:\n    devices:\n      requests:\n      - name: a\n"
                           "        exactly: {deviceClassName: gpu.example.com, count: 1}\n      - name: b\n"
                           "        exactly: {deviceClassName: gpu.example.com, count: 1}\n      constraints:\n"
                           "      - {requests: [a, b], matchAttribute: gpu.example.com/model}\n");
        unsigned pods = nodes * per_node;
        fprintf(f, "---\napiVersion: v1\nkind: List\nitems:\n");
        for (unsigned i = 0; i < pods; i++) {
                unsigned k = gpus_wanted();
                if (topo)
                        topology_pod(f, i);
                else
                        fprintf(f, "- apiVersion: v1\n  kind: Pod\n  metadata: {name: p%u}\n  spec:\n", i);
                if (mix && pick(8) == 0) fprintf(f, "    nodeSelector: {zone: z%u}\n", pick(3));
                if (mix && pick(4) == 0)
                        fprintf(f, "    tolerations: [{key: dedicated, operator: Equal, value: t%u, effect: "
                                   "NoSchedule}]\n",
                                pick(2));
                unsigned kind = i % 2;
                if (mix && pick(6) == 0) kind = 2;
                if (kind == 0)
                        fprintf(f, "    containers:\n    - name: c\n      image: x\n      resources: {limits: "
                                   "{nvidia.com/gpu: %u}}\n",
                                k);
                else if (kind == 1)
                        fprintf(f, "    containers:\n    - name: c\n      image: x\n      resources: {claims: "
                                   "[{name: g}]}\n    resourceClaims:\n    - {name: g, "
                                   "resourceClaimTemplateName: gpus-%u}\n",
                                k);
                else
                        fprintf(f, "    containers:\n    - name: c\n      image: x\n      resources: {claims: "
                                   "[{name: g}, {name: h}]}\n    resourceClaims:\n    - {name: g, "
                                   "resourceClaimTemplateName: gpus-1}\n    - {name: h, "
                                   "resourceClaimTemplateName: pair}\n");
        }
}

static double now_s(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One run of the binary; stdout to /dev/null. 0 and the figures, or -1. */
static int run_once(const char *devplane, const char *input, const char *report, double *ret_wall, double *ret_cpu,
                    long *ret_maxrss_kib, int *ret_status) {
        double t0 = now_s();
        pid_t pid = fork();
        if (pid < 0) return -1;
        if (pid == 0) {
                int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
                if (fd >= 0) dup2(fd, 1);
                if (report)
                        execl(devplane, devplane, "simulate", "-f", input, "-o", "json", "--report", report,
                              (char *)NULL);
                else
                        execl(devplane, devplane, "simulate", "-f", input, "-o", "json", (char *)NULL);
                _exit(127);
        }
        int status = 0;
        struct rusage ru;
        if (wait4(pid, &status, 0, &ru) < 0) return -1;
        *ret_wall = now_s() - t0;
        *ret_cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
                   (double)ru.ru_stime.tv_usec / 1e6;
        *ret_maxrss_kib = ru.ru_maxrss;
        *ret_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return 0;
}

static int cmp_d(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

static void usage(FILE *f) {
        fprintf(f, "usage: bench-simulate [-b DEVPLANE] [-r RUNS] [-n N[,N...]] [--no-report]\n"
                   "                      [--topology | --queues [--finish K] | --kai]\n"
                   "       bench-simulate --generate N [-s SEED] [--mix] [--topology | --queues [--finish K] | --kai]\n"
                   "                      [-p PODS_PER_NODE]\n");
}

int main(int argc, char **argv) {
        static const struct option opts[] = {{"generate", required_argument, NULL, 'g'},
                                             {"mix", no_argument, NULL, 'm'},
                                             {"topology", no_argument, NULL, 'T'},
                                             {"queues", no_argument, NULL, 'Q'},
                                             {"finish", required_argument, NULL, 'F'},
                                             {"kai", no_argument, NULL, 'K'},
                                             {"no-report", no_argument, NULL, 'N'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
        const char *devplane = NULL, *sizes = "500,1000,2000,5000";
        unsigned runs = 3, per_node = 10, gen = 0, finish = 0;
        uint64_t seed = 1;
        bool mix = false, with_report = true, topo = false, queues = false, kai = false;
        int c;
        while ((c = getopt_long(argc, argv, "b:r:n:s:p:h", opts, NULL)) >= 0) {
                switch (c) {
                case 'b': devplane = optarg; break;
                case 'r': runs = (unsigned)strtoul(optarg, NULL, 10); break;
                case 'n': sizes = optarg; break;
                case 's': seed = strtoull(optarg, NULL, 10); break;
                case 'p': per_node = (unsigned)strtoul(optarg, NULL, 10); break;
                case 'g': gen = (unsigned)strtoul(optarg, NULL, 10); break;
                case 'm': mix = true; break;
                case 'T': topo = true; break;
                case 'Q': queues = true; break;
                case 'F': finish = (unsigned)strtoul(optarg, NULL, 10); break;
                case 'K': kai = true; break;
                case 'N': with_report = false; break;
                case 'h': usage(stdout); return 0;
                default: usage(stderr); return 2;
                }
        }
        if (runs < 1 || runs > 99 || per_node < 1 || per_node > 1000 || topo + queues + kai > 1 ||
            ((queues || kai) && mix) || (finish && !queues)) {
                usage(stderr);
                return 2;
        }
        if (gen) {
                if (queues)
                        generate_queues(stdout, gen, per_node, seed, finish);
                else if (kai)
                        generate_kai(stdout, gen, per_node, seed);
                else
                        generate(stdout, gen, per_node, seed, mix, topo);
                return fflush(stdout) == 0 ? 0 : 1;
        }
        char self[PATH_MAX], def[PATH_MAX + 16];
        if (!devplane) {
                ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
                if (n < 0) return perror("readlink"), 1;
                self[n] = 0;
                char *sl = strrchr(self, '/');
                if (sl) *sl = 0;
                snprintf(def, sizeof(def), "%s/../devplane", self);
                devplane = def;
        }
        char dir[] = "/tmp/bench-simulate-XXXXXX";
        if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
        struct utsname u;
        uname(&u);
        printf("bench-simulate: %s simulate -o json [--report], %u run(s) each, %u pods per node, seed %llu%s",
               devplane, runs, per_node, (unsigned long long)seed,
               topo ? ", --topology" : queues ? ", --queues" : kai ? ", --kai" : "");
        if (finish) printf(", --finish %u", finish);
        printf("\n");
        printf("machine: %s %s, %ld CPUs online\n\n", u.machine, u.release, sysconf(_SC_NPROCESSORS_ONLN));
        double load[3] = {0, 0, 0};
        if (getloadavg(load, 3) > 0) printf("load average at start: %.2f %.2f %.2f\n\n", load[0], load[1], load[2]);
        printf("| nodes | pods   | --report | wall s median (min-max) | CPU s median (min-max) | peak RSS MiB median (min-max) | exit |\n");
        printf("|-------|--------|----------|-------------------------|------------------------|-------------------------------|------|\n");
        fflush(stdout);
        int rc = 0;
        for (const char *p = sizes; *p;) {
                unsigned n = (unsigned)strtoul(p, NULL, 10);
                const char *comma = strchr(p, ',');
                p = comma ? comma + 1 : p + strlen(p);
                if (!n) continue;
                char input[PATH_MAX], report[PATH_MAX];
                snprintf(input, sizeof(input), "%s/cluster-%u.yaml", dir, n);
                snprintf(report, sizeof(report), "%s/report-%u.html", dir, n);
                FILE *f = fopen(input, "we");
                if (!f) return perror(input), 1;
                if (queues)
                        generate_queues(f, n, per_node, seed, finish);
                else if (kai)
                        generate_kai(f, n, per_node, seed);
                else
                        generate(f, n, per_node, seed, false, topo);
                if (fclose(f) != 0) return perror(input), 1;
                for (int rep = 0; rep < (with_report ? 2 : 1); rep++) {
                        double wall[100], cpu[100], rss[100];
                        int st = 0;
                        for (unsigned i = 0; i < runs; i++) {
                                long kib = 0;
                                if (run_once(devplane, input, rep ? report : NULL, &wall[i], &cpu[i], &kib, &st) < 0)
                                        return perror("run"), 1;
                                rss[i] = (double)kib / 1024.0;
                                if (st) rc = 1;
                        }
                        qsort(wall, runs, sizeof(double), cmp_d);
                        qsort(cpu, runs, sizeof(double), cmp_d);
                        qsort(rss, runs, sizeof(double), cmp_d);
                        printf("| %5u | %6u | %-8s | %7.2f (%.2f-%.2f) | %6.2f (%.2f-%.2f) | %6.0f (%.0f-%.0f) | %4d |\n", n,
                               n * per_node, rep ? "yes" : "no", wall[runs / 2], wall[0], wall[runs - 1],
                               cpu[runs / 2], cpu[0], cpu[runs - 1], rss[runs / 2], rss[0], rss[runs - 1], st);
                        fflush(stdout);
                }
                unlink(input);
                unlink(report);
        }
        rmdir(dir);
        return rc;
}
