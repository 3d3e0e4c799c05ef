/* SPDX-License-Identifier: Apache-2.0
 * devplane explain [pod] [NS/]NAME [-n NS] [-f FILE|DIR|-...] [--kubeconfig FILE] [what-if...]
 * Why a pod is Pending (or where and how it runs), one screen (sched/sim.h). */
#include <getopt.h>
#include <stdio.h>

#include "sched/sim.h"
#include "tools/cluster-input.h"
#include "tools/devplane.h"

static void usage(FILE *f) {
        fprintf(f, "usage: devplane explain [pod] NAME [-n NAMESPACE] [-f FILE|DIR|-...] [--kubeconfig FILE] [--details]\n"
                   "       devplane explain NAMESPACE/NAME | pod/NAME ...\n\n"
                   "Simulates the input (as `devplane simulate` does; the built-in scenario without any) and\n"
                   "says why the pod is Pending, as kube-scheduler sums it up (\"0/500 nodes are available:\n"
                   "320 Insufficient nvidia.com/gpu, 180 cannot allocate all claims.\"), then the nodes grouped\n"
                   "by reason with the first of each and the failing claim and request; or where it runs, and\n"
                   "whether it shares a physical GPU through time-slicing.\n"
                   "A workload Kueue queues (job/NAME, workload/NAME, or a Job's name: it has no pods while it\n"
                   "waits): why it is not admitted, in Kueue's words, its ClusterQueue's usage, the quota that\n"
                   "would let it in and what to preempt (as --set-quota and --set-preemption flags to try with\n"
                   "simulate, each checked by admitting the input again), the workloads to delete by hand; for\n"
                   "a preempted one, by whom and under which rule; for one admitted and not placed, the\n"
                   "--add-nodes that places its pods (checked by simulating again).\n"
                   "The pod: NAME (namespace default, or -n), NAMESPACE/NAME, pod/NAME or pods/NAME.\n\n"
                   "  -n, --namespace NS            the pod's namespace\n"
                   "  -v, --details                 every node's reason and detail (resources short first)\n" DP_TOOL_INPUT_USAGE
                   "\nExit status: 0 explained, 2 bad input or no such pod, 3 out of memory (the message says\n"
                   "what was being built and how big the input was).\n");
}

static const char *strip_kind(const char *s) {
        /* a Kueue workload (src/queue) by its Job, Pod or Workload name */
        static const char *const kinds[] = {"pod/", "pods/", "po/", "job/", "jobs/", "job.batch/", "workload/",
                                            "workloads/"};
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                if (startswith(s, kinds[i])) return s + strlen(kinds[i]);
        return s;
}

static bool is_pod_word(const char *s) { return streq(s, "pod") || streq(s, "pods") || streq(s, "po"); }

static int cmd_explain(int argc, char **argv) {
        static const struct option opts[] = {DP_TOOL_INPUT_OPTIONS,
                                             {"namespace", required_argument, NULL, 'n'},
                                             {"details", no_argument, NULL, 'v'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
        _cleanup_(dp_tool_input_done) dp_tool_input ti;
        const char *ns = NULL;
        bool details = false;
        if (dp_tool_input_init(&ti, "explain", argc) < 0) return DP_EXIT_NO_MEMORY;
        optind = 1;
        int c;
        while ((c = getopt_long(argc, argv, "f:n:vh", opts, NULL)) >= 0) {
                int t = dp_tool_input_option(&ti, c, optarg);
                if (t < 0) return 2;
                if (t > 0) continue;
                switch (c) {
                case 'n': ns = optarg; break;
                case 'v': details = true; break;
                case 'h': usage(stdout); return 0;
                default: usage(stderr); return 2;
                }
        }
        if (optind < argc && is_pod_word(argv[optind]) && optind + 1 < argc) optind++;
        if (optind + 1 != argc || !argv[optind][0]) {
                usage(stderr);
                return 2;
        }
        const char *name = strip_kind(argv[optind]);
        const char *sl = strchr(name, '/');
        if (sl && ns && (strlen(ns) != (size_t)(sl - name) || strncmp(ns, name, strlen(ns)) != 0)) {
                fprintf(stderr, "devplane explain: %s names another namespace than -n %s\n", name, ns);
                return 2;
        }
        dp_error err = DP_ERROR_INIT;
        _cleanup_(dp_sim_input_freep) dp_sim_input *in = NULL;
        int r = dp_tool_input_load(&ti, &in);
        if (r) return r;
        /* as kubectl: -n, else the live context's namespace, else default */
        if (!ns) ns = ti.namespace;
        char ref[600];
        if (!sl && ns)
                snprintf(ref, sizeof(ref), "%.253s/%.253s", ns, name);
        else
                snprintf(ref, sizeof(ref), "%.599s", name);
        _cleanup_strbuf_ dp_strbuf out = DP_STRBUF_INIT;
        r = dp_sim_explain_details(in, ref, details, &out, &err);
        if (r == -ENOENT) {
                _cleanup_strbuf_ dp_strbuf hint = DP_STRBUF_INIT;
                dp_tool_print_error("explain", dp_error_msg(&err), NULL);
                if (dp_sim_suggest_pods(in, ref, &hint) >= 0 && hint.len)
                        fprintf(stderr, "devplane explain: did you mean %s?\n", dp_strbuf_str(&hint));
                return 2;
        }
        if (r == -ENOMEM) return dp_tool_out_of_memory("explain", in ? dp_error_msg(&err) : NULL, ti.paths, ti.n_paths);
        if (r < 0) {
                dp_tool_print_error("explain", dp_error_msg(&err), NULL);
                return 2;
        }
        if (dp_tool_input_fix_hints(&ti, &out, false) < 0)
                return dp_tool_out_of_memory("explain", "printing the answer", ti.paths, ti.n_paths);
        fputs(dp_strbuf_str(&out), stdout);
        return 0;
}
DP_COMMAND("explain", cmd_explain, "why a pod is Pending (or how it shares a device), one screen")
