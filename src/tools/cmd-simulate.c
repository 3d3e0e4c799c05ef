/* SPDX-License-Identifier: Apache-2.0
 * devplane simulate [-f FILE|DIR|-...] [--kubeconfig FILE] [what-if...] [-o table|json|yaml] [--report FILE.html]
 * A whole cluster in-process, V1 and V2 side by side (sched/sim.h), and the
 * HTML report (sched/html.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"
#include "sched/html.h"
#include "sched/sim.h"
#include "tools/cluster-input.h"
#include "tools/devplane.h"

static void usage(FILE *f) {
        fprintf(f, "usage: devplane simulate [-f FILE|DIR|-...] [--kubeconfig FILE [--context NAME] | --in-cluster]\n"
                   "                         [--cordon NODE] [--fail-device NODE/DEVICE] [--mode GROUP_OR_NODE=v1|v2]\n"
                   "                         [--queue-policy kueue|kai|volcano [--volcano-plugin proportion|capacity]\n"
                   "                          [--volcano-actions enqueue,allocate,backfill[,preempt][,reclaim]]]\n"
                   "                         [-o table|json|yaml] [--report FILE.html]\n\n"
                   "Runs a fleet (kind: Fleet) or a cluster's own state (Node objects, ResourceSlices, bound\n"
                   "pods and allocated claims: a dump, or the API server's), Kubernetes workload objects and a\n"
                   "timeline (kind: Timeline) through the scheduler, the DRA allocator and the device plugin\n"
                   "logic, then prints where every pod landed (node, devices, V1/V2), why pods are Pending,\n"
                   "per-node and per-device use and fragmentation, and the same workload with every node on\n"
                   "V1 and on V2. Pods with spec.nodeName run where they are; only the others are scheduled.\n"
                   "Without any input, runs the built-in scenario (examples/seed.yaml).\n\n" DP_TOOL_INPUT_USAGE
                   "\n"
                   "--queue-policy volcano: Volcano's enqueue and allocate decide which pods of schedulerName\n"
                   "volcano (their PodGroups, in Volcano Queues) go on to the scheduler; --volcano-plugin picks\n"
                   "proportion (weights, Volcano's default) or capacity (per-resource deserved). Kueue's objects\n"
                   "are admitted by Kueue's rules whatever the policy. --volcano-actions adds the opt-in preempt\n"
                   "(lower-priority pods of the same queue evicted for a starving group) and reclaim (pods of\n"
                   "queues above their deserved evicted for a queue below it).\n"
                   "--report FILE.html also writes the report as one self-contained HTML page with pictures\n"
                   "(the fleet coloured by pods, partitions in their GPUs, V1 vs V2, Pending reasons, timeline).\n"
                   "--queue-policy kai admits the pods of kai-scheduler by KAI-Scheduler's hierarchical fair share\n"
                   "(its Queues, scheduling.run.ai/v2); kueue leaves admission to Kueue's objects. Without it: Kueue's,\n"
                   "or KAI-Scheduler's when the input has KAI Queues and no Kueue object.\n"
                   "With DRADeviceCompatibilityGroups=false, pools whose devices carry compatibilityGroups\n"
                   "are incomplete and skipped, as kube-scheduler does with that gate off.\n"
                   "Exit status: 0 the report was made (Pending pods included), 2 bad input, 3 out of memory\n"
                   "(the message says what was being built and how big the input was).\n");
}

/* A release build leaves the simulation's memory (three runs of the whole
 * cluster, the input) to the end of the process (tools/devplane.h). */
#define EXIT_WITHOUT_FREEING (DP_TOOL_EXIT_WITHOUT_FREEING != 0)

/* Written whole or not at all (base/fileio.h): path split into its directory and name. */
static int write_report(const char *path, const dp_strbuf *html, dp_error *err) {
        const char *sl = strrchr(path, '/');
        if (!sl) return dp_write_file_atomic(".", path, dp_strbuf_str(html), html->len, 0644, 0, err);
        _cleanup_free_ char *dir = sl == path ? dp_strdup("/") : dp_strndup(path, (size_t)(sl - path));
        if (!dir) return -ENOMEM;
        if (!sl[1]) return dp_error_set(err, -EISDIR, "%s: names a directory, not a file", path);
        return dp_write_file_atomic(dir, sl + 1, dp_strbuf_str(html), html->len, 0644, 0, err);
}

static const dp_tool_word sim_outputs[] = {
        {"table", DP_SIM_OUT_TABLE}, {"json", DP_SIM_OUT_JSON}, {"yaml", DP_SIM_OUT_YAML}, {NULL, 0}};

static int cmd_simulate(int argc, char **argv) {
        _cleanup_(dp_tool_input_done) dp_tool_input ti;
        static const struct option opts[] = {DP_TOOL_INPUT_OPTIONS,
                                             {"output", required_argument, NULL, 'o'},
                                             {"report", required_argument, NULL, 'R'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
        dp_sim_output fmt = DP_SIM_OUT_TABLE;
        const char *report = NULL;
        if (dp_tool_input_init(&ti, "simulate", argc) < 0) return DP_EXIT_NO_MEMORY;
        optind = 1;
        int c, v;
        while ((c = getopt_long(argc, argv, "f:o:h", opts, NULL)) >= 0) {
                int t = dp_tool_input_option(&ti, c, optarg);
                if (t < 0) return 2;
                if (t > 0) continue;
                switch (c) {
                case 'R':
                        if (!optarg[0]) {
                                fprintf(stderr, "devplane simulate: --report: a file name is required\n");
                                return 2;
                        }
                        report = optarg;
                        break;
                case 'o':
                        if ((v = dp_tool_word_value("simulate", "-o", optarg, sim_outputs, "table, json or yaml")) < 0)
                                return 2;
                        fmt = v;
                        break;
                case 'h': usage(stdout); return 0;
                default: usage(stderr); return 2;
                }
        }
        if (optind < argc) {
                usage(stderr);
                return 2;
        }
        dp_error err = DP_ERROR_INIT;
        _cleanup_(dp_sim_input_freep) dp_sim_input *in = NULL;
        int r = dp_tool_input_load(&ti, &in);
        if (r) return r;
        in->exit_after_report = EXIT_WITHOUT_FREEING;
        _cleanup_strbuf_ dp_strbuf out = DP_STRBUF_INIT;
        _cleanup_strbuf_ dp_strbuf html = DP_STRBUF_INIT;
        size_t pending = 0;
        /* the page from the same three runs as the report */
        r = dp_sim_report_html(in, fmt, &out, report ? &html : NULL, &pending, &err);
        if (r == -ENOMEM) return dp_tool_out_of_memory("simulate", dp_error_msg(&err), ti.paths, ti.n_paths);
        if (r < 0) {
                dp_tool_print_error("simulate", dp_error_msg(&err), NULL);
                return 2;
        }
        if (dp_tool_input_fix_hints(&ti, &out, false) < 0 || (report && dp_tool_input_fix_hints(&ti, &html, true) < 0))
                return dp_tool_out_of_memory("simulate", "printing the report", ti.paths, ti.n_paths);
        if (report) {
                r = write_report(report, &html, &err);
                if (r == -ENOMEM) return dp_tool_out_of_memory("simulate", "writing the HTML report", ti.paths, ti.n_paths);
                if (r < 0) {
                        dp_tool_print_error("simulate: --report", dp_error_msg(&err), NULL);
                        return 2;
                }
        }
        fputs(dp_strbuf_str(&out), stdout);
        if (EXIT_WITHOUT_FREEING) (void)TAKE_PTR(in); /* and its documents: the process ends */
        return 0;
}
DP_COMMAND("simulate", cmd_simulate, "simulate a fleet and a workload: placements, V1 vs V2, Pending reasons")
