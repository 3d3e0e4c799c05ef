/* SPDX-License-Identifier: Apache-2.0
 * devplane simulate [-f FILE|DIR...] [-o table|json|yaml] [--report FILE.html] [--feature-gates GATE=BOOL]
 * A whole cluster in-process, V1 and V2 side by side (sched/sim.h), and the
 * HTML report (sched/html.h). */
#include <getopt.h>
#include <stdio.h>

#include "base/fileio.h"
#include "sched/html.h"
#include "sched/sim.h"
#include "tools/devplane.h"

static void usage(FILE *f) {
        fprintf(f, "usage: devplane simulate [-f FILE|DIR...] [-o table|json|yaml] [--report FILE.html]\n"
                   "                         [--feature-gates DRADeviceCompatibilityGroups=true|false]\n\n"
                   "Runs a fleet (kind: Fleet), Kubernetes workload objects and a timeline (kind: Timeline)\n"
                   "through the scheduler, the DRA allocator and the device plugin logic, then prints where\n"
                   "every pod landed (node, devices, V1/V2), why pods are Pending, per-node and per-device use\n"
                   "and fragmentation, and the same workload with every node on V1 and on V2.\n"
                   "Without -f, runs the built-in scenario (examples/seed.yaml).\n"
                   "--report FILE.html also writes the report as one self-contained HTML page with pictures\n"
                   "(the fleet coloured by pods, partitions in their GPUs, V1 vs V2, Pending reasons, timeline).\n"
                   "With DRADeviceCompatibilityGroups=false, pools whose devices carry compatibilityGroups\n"
                   "are incomplete and skipped, as kube-scheduler does with that gate off.\n"
                   "Exit status: 0 the report was made (Pending pods included), 2 bad input, 3 out of memory\n"
                   "(the message says what was being built and how big the input was).\n");
}

/* Written whole or not at all (base/fileio.h): path split into its directory and name. */
static int write_report(const char *path, const dp_strbuf *html, dp_error *err) {
        const char *sl = strrchr(path, '/');
        if (!sl) return dp_write_file_atomic(".", path, dp_strbuf_str(html), html->len, 0644, 0, err);
        _cleanup_free_ char *dir = sl == path ? dp_strdup("/") : dp_strndup(path, (size_t)(sl - path));
        if (!dir) return -ENOMEM;
        if (!sl[1]) return dp_error_set(err, -EISDIR, "%s: names a directory, not a file", path);
        return dp_write_file_atomic(dir, sl + 1, dp_strbuf_str(html), html->len, 0644, 0, err);
}

static int cmd_simulate(int argc, char **argv) {
        static const struct option opts[] = {{"filename", required_argument, NULL, 'f'},
                                             {"output", required_argument, NULL, 'o'},
                                             {"report", required_argument, NULL, 'R'},
                                             {"feature-gates", required_argument, NULL, 'g'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
        _cleanup_free_ const char **paths = calloc((size_t)argc + 1, sizeof(char *));
        size_t n_paths = 0;
        dp_sim_output fmt = DP_SIM_OUT_TABLE;
        const char *report = NULL;
        dp_alloc_cluster_options gates = {0};
        if (!paths) return DP_EXIT_NO_MEMORY;
        optind = 1;
        int c;
        while ((c = getopt_long(argc, argv, "f:o:h", opts, NULL)) >= 0) {
                switch (c) {
                case 'f': paths[n_paths++] = optarg; break;
                case 'o':
                        if (streq(optarg, "table"))
                                fmt = DP_SIM_OUT_TABLE;
                        else if (streq(optarg, "json"))
                                fmt = DP_SIM_OUT_JSON;
                        else if (streq(optarg, "yaml"))
                                fmt = DP_SIM_OUT_YAML;
                        else {
                                fprintf(stderr, "devplane simulate: -o %s: must be table, json or yaml\n", optarg);
                                return 2;
                        }
                        break;
                case 'R':
                        if (!optarg[0]) {
                                fprintf(stderr, "devplane simulate: --report: a file name is required\n");
                                return 2;
                        }
                        report = optarg;
                        break;
                case 'g':
                        if (dp_alloc_parse_feature_gate(optarg, &gates) < 0) {
                                fprintf(stderr, "devplane simulate: --feature-gates %s: known: %s\n", optarg,
                                        DP_ALLOC_FEATURE_GATES);
                                return 2;
                        }
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
        int r = dp_sim_load_or_builtin(paths, n_paths, &in, &err);
        if (r == -ENOMEM) return dp_tool_out_of_memory("simulate", NULL, paths, n_paths);
        if (r < 0) {
                fprintf(stderr, "devplane simulate: %s\n", dp_error_msg(&err));
                return 2;
        }
        in->alloc = gates;
        _cleanup_strbuf_ dp_strbuf out = DP_STRBUF_INIT;
        _cleanup_strbuf_ dp_strbuf html = DP_STRBUF_INIT;
        size_t pending = 0;
        /* the page from the same three runs as the report */
        r = dp_sim_report_html(in, fmt, &out, report ? &html : NULL, &pending, &err);
        if (r == -ENOMEM) return dp_tool_out_of_memory("simulate", dp_error_msg(&err), paths, n_paths);
        if (r < 0) {
                fprintf(stderr, "devplane simulate: %s\n", dp_error_msg(&err));
                return 2;
        }
        if (report) {
                r = write_report(report, &html, &err);
                if (r == -ENOMEM) return dp_tool_out_of_memory("simulate", "writing the HTML report", paths, n_paths);
                if (r < 0) {
                        fprintf(stderr, "devplane simulate: --report: %s\n", dp_error_msg(&err));
                        return 2;
                }
        }
        fputs(dp_strbuf_str(&out), stdout);
        return 0;
}
DP_COMMAND("simulate", cmd_simulate, "simulate a fleet and a workload: placements, V1 vs V2, Pending reasons")
