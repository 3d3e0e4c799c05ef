/* SPDX-License-Identifier: Apache-2.0
 * devplane allocate -f FILE|DIR|-... [--node NAME] [-o yaml|json|table] [--max-steps N]
 * Allocates the unallocated ResourceClaims of the input in order (alloc/claims.c). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "alloc/adapter.h"
#include "tools/cluster-input.h"
#include "tools/devplane.h"

static double cpu_s(void) {
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(FILE *f) {
        fprintf(f, "usage: devplane allocate -f FILE|DIR|-... [--node NAME] [-o yaml|json|table]\n"
                   "                         [--feature-gates DRADeviceCompatibilityGroups=true|false]\n"
                   "                         [--feature-gates DRAListTypeAttributes=true|false]\n"
                   "                         [--max-steps N] [--details]\n\n"
                   "Allocates every ResourceClaim (-f - reads standard input) without status.allocation, in input "
                   "order, each on the\n"
                   "first node (by name) where it fits, or on --node. Devices taken by earlier claims stay\n"
                   "taken. Prints the claims with status.allocation; for each claim that does not fit, one\n"
                   "line on stderr with the reasons and how many nodes gave each (\"0/500 nodes are available:\n"
                   "320 nodes: ...; 180 nodes: ...\"); --details (-v) adds each node's own lines under it.\n"
                   "Exit status: 0 all allocated, 1 some not, 2 bad input, 3 out of memory (the message\n"
                   "says what was being built and how big the input was).\n"
                   "With DRADeviceCompatibilityGroups=false, pools whose devices carry compatibilityGroups\n"
                   "are incomplete and skipped, as kube-scheduler does with that gate off.\n"
                   "With DRAListTypeAttributes=true (alpha, off by default) list-typed attributes (ints,\n"
                   "strings, ...) reach selectors as lists and constraints as sets: matchAttribute wants a\n"
                   "value every device has, distinctAttribute devices that share none.\n"
                   "--max-steps bounds the search per claim and node (default 50000000, the stand-in for\n"
                   "the scheduler's filter timeout); a claim past it is not allocated, the others go on.\n");
}

static const dp_tool_word alloc_outputs[] = {
        {"yaml", DP_ALLOC_OUTPUT_YAML}, {"json", DP_ALLOC_OUTPUT_JSON}, {"table", DP_ALLOC_OUTPUT_TABLE}, {NULL, 0}};

static int cmd_allocate(int argc, char **argv) {
        static const struct option opts[] = {{"filename", required_argument, NULL, 'f'},
                                             {"node", required_argument, NULL, 'n'},
                                             {"output", required_argument, NULL, 'o'},
                                             {"feature-gates", required_argument, NULL, 'g'},
                                             {"max-steps", required_argument, NULL, 's'},
                                             {"details", no_argument, NULL, 'v'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
        _cleanup_free_ const char **paths = calloc((size_t)argc + 1, sizeof(char *));
        size_t n_paths = 0;
        const char *node = NULL;
        uint64_t budget = 0;
        dp_alloc_output fmt = DP_ALLOC_OUTPUT_YAML;
        dp_alloc_cluster_options copts = {0};
        bool details = false;
        if (!paths) return DP_EXIT_NO_MEMORY;
        optind = 1;
        int c, v;
        while ((c = getopt_long(argc, argv, "f:o:hv", opts, NULL)) >= 0) {
                switch (c) {
                case 'f': paths[n_paths++] = optarg; break;
                case 'n': node = optarg; break;
                case 'o':
                        if ((v = dp_tool_word_value("allocate", "-o", optarg, alloc_outputs, "yaml, json or table")) < 0)
                                return 2;
                        fmt = v;
                        break;
                case 'g':
                        if (dp_tool_feature_gate("allocate", optarg, &copts) < 0) return 2;
                        break;
                case 's': {
                        char *end = NULL;
                        errno = 0;
                        unsigned long long steps = strtoull(optarg, &end, 10);
                        if (errno || !end || *end || end == optarg || optarg[0] == '-' || steps == 0) {
                                fprintf(stderr, "devplane allocate: --max-steps %s: must be a positive integer\n", optarg);
                                return 2;
                        }
                        budget = steps;
                        break;
                }
                case 'v': details = copts.details = true; break;
                case 'h': usage(stdout); return 0;
                default: usage(stderr); return 2;
                }
        }
        if (optind < argc || n_paths == 0) {
                usage(stderr);
                return 2;
        }
        dp_error err = DP_ERROR_INIT;
        _cleanup_(dp_object_list_freep) dp_object_list *objs = NULL;
        _cleanup_(dp_alloc_run_freep) dp_alloc_run *run = NULL;
        /* DEVPLANE_TIMINGS=1: the CPU time of each stage on stderr (bench/bench-allocate.c reads it) */
        bool timings = getenv("DEVPLANE_TIMINGS") && streq(getenv("DEVPLANE_TIMINGS"), "1");
        double t[4];
        t[0] = cpu_s();
        int r = dp_model_load(paths, n_paths, &objs, &err);
        if (r == -ENOMEM) return dp_tool_out_of_memory("allocate", NULL, paths, n_paths);
        if (r < 0) {
                dp_tool_print_error("allocate", dp_error_msg(&err), NULL);
                return 2;
        }
        dp_tool_warn_skipped("allocate", objs);
        t[1] = cpu_s();
        r = dp_alloc_run_claims_opts(objs, node, budget, &copts, &run, &err);
        if (r == -ENOMEM) {
                char what[128];
                snprintf(what, sizeof(what), "allocating the claims of %zu objects", objs ? objs->n : 0);
                return dp_tool_out_of_memory("allocate", what, paths, n_paths);
        }
        if (r < 0) {
                dp_tool_print_error("allocate", dp_error_msg(&err), NULL);
                return 2;
        }
        t[2] = cpu_s();
        /* the report goes to stdout as it is made (dp_alloc_run_write) */
        _cleanup_strbuf_ dp_strbuf why = DP_STRBUF_INIT;
        r = dp_alloc_run_write(run, fmt, stdout);
        if (r == -ENOMEM || (r >= 0 && dp_alloc_run_print_why(run, details, &why) < 0)) {
                char what[128];
                snprintf(what, sizeof(what), "printing the results of %zu claims", run->n);
                return dp_tool_out_of_memory("allocate", what, paths, n_paths);
        }
        if (r < 0) {
                fprintf(stderr, "devplane allocate: writing the results to standard output failed\n");
                return 2;
        }
        fputs(dp_strbuf_str(&why), stderr);
        t[3] = cpu_s();
        if (timings)
                fprintf(stderr, "devplane allocate: timings: load %.3f s, allocate %.3f s, print %.3f s (CPU)\n",
                        t[1] - t[0], t[2] - t[1], t[3] - t[2]);
        int status = run->n_failed ? 1 : 0;
        if (DP_TOOL_EXIT_WITHOUT_FREEING) { /* the process ends: its memory goes with it */
                (void)TAKE_PTR(objs);
                (void)TAKE_PTR(run);
        }
        return status;
}
DP_COMMAND("allocate", cmd_allocate, "allocate DRA claims over ResourceSlices and print the result or why not")
