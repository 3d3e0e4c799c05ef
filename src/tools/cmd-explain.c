/* SPDX-License-Identifier: Apache-2.0
 * devplane explain [pod] NAME [-f FILE|DIR...] [--feature-gates GATE=BOOL]
 * Why a pod is Pending (or where and how it runs), one screen (sched/sim.h). */
#include <getopt.h>
#include <stdio.h>

#include "sched/sim.h"
#include "tools/devplane.h"

static void usage(FILE *f) {
        fprintf(f, "usage: devplane explain [pod] [NAMESPACE/]NAME [-f FILE|DIR...] [--details]\n"
                   "                        [--feature-gates DRADeviceCompatibilityGroups=true|false]\n\n"
                   "Simulates the input (as `devplane simulate` does; the built-in scenario without -f) and\n"
                   "says why the pod is Pending, as kube-scheduler sums it up (\"0/500 nodes are available:\n"
                   "320 Insufficient nvidia.com/gpu, 180 cannot allocate all claims.\"), then the nodes grouped\n"
                   "by reason with the first of each and the failing claim and request; or where it runs, and\n"
                   "whether it shares a physical GPU.\n"
                   "--details (-v): every node's reason and detail (resources short first).\n"
                   "--feature-gates: as `devplane simulate`.\n"
                   "Exit status: 0 explained, 2 bad input or no such pod, 3 out of memory (the message says\n"
                   "what was being built and how big the input was).\n");
}

static int cmd_explain(int argc, char **argv) {
        static const struct option opts[] = {{"filename", required_argument, NULL, 'f'},
                                             {"feature-gates", required_argument, NULL, 'g'},
                                             {"details", no_argument, NULL, 'v'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
        _cleanup_free_ const char **paths = calloc((size_t)argc + 1, sizeof(char *));
        size_t n_paths = 0;
        dp_alloc_cluster_options gates = {0};
        bool details = false;
        if (!paths) return DP_EXIT_NO_MEMORY;
        optind = 1;
        int c;
        while ((c = getopt_long(argc, argv, "f:vh", opts, NULL)) >= 0) {
                switch (c) {
                case 'f': paths[n_paths++] = optarg; break;
                case 'g':
                        if (dp_alloc_parse_feature_gate(optarg, &gates) < 0) {
                                fprintf(stderr, "devplane explain: --feature-gates %s: known: %s\n", optarg,
                                        DP_ALLOC_FEATURE_GATES);
                                return 2;
                        }
                        break;
                case 'v': details = true; break;
                case 'h': usage(stdout); return 0;
                default: usage(stderr); return 2;
                }
        }
        const char *pod = NULL;
        if (optind < argc && (streq(argv[optind], "pod") || streq(argv[optind], "pods")) && optind + 1 < argc) optind++;
        if (optind + 1 == argc) pod = argv[optind];
        if (!pod) {
                usage(stderr);
                return 2;
        }
        dp_error err = DP_ERROR_INIT;
        _cleanup_(dp_sim_input_freep) dp_sim_input *in = NULL;
        int r = dp_sim_load_or_builtin(paths, n_paths, &in, &err);
        _cleanup_strbuf_ dp_strbuf out = DP_STRBUF_INIT;
        if (r >= 0) {
                in->alloc = gates;
                r = dp_sim_explain_details(in, pod, details, &out, &err);
        }
        if (r == -ENOMEM) return dp_tool_out_of_memory("explain", in ? dp_error_msg(&err) : NULL, paths, n_paths);
        if (r < 0) {
                fprintf(stderr, "devplane explain: %s\n", dp_error_msg(&err));
                return 2;
        }
        fputs(dp_strbuf_str(&out), stdout);
        return 0;
}
DP_COMMAND("explain", cmd_explain, "why a pod is Pending (or how it shares a device), one screen")
