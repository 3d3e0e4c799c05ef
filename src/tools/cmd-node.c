/* SPDX-License-Identifier: Apache-2.0
 * devplane node — the kubelet stand-in's device manager; `node status`. */
#include <getopt.h>
#include <stdio.h>

#include "base/log.h"
#include "node/node.h"
#include "node/pods.h"
#include "node/status.h"
#include "tools/devplane.h"

static int on_stop_signal(dp_loop_source *s, const struct signalfd_siginfo *si, void *ud) {
        log_info("signal %u: stopping", si->ssi_signo);
        dp_loop_exit(ud, 0);
        return 0;
}

static void node_usage(FILE *f) {
        fprintf(f, "usage: devplane node [--plugin-dir DIR] [--manifests DIR] [--node-name NAME]\n"
                   "                     [--backoff-initial-ms MS] [--backoff-max-ms MS] [-v]\n"
                   "                     [--registry-dir DIR [--claims-dir DIR] [--cdi-dir DIR]]\n"
                   "       devplane node status [--plugin-dir DIR] [-o table|json|yaml|flat]\n"
                   "                     [--wait CONDITION]... [--timeout SECONDS]\n"
                   "       devplane node check --manifests DIR\n\n"
                   "The kubelet stand-in: registration server on <plugin-dir>/kubelet.sock, device\n"
                   "manager with checkpoint, pods from the manifest directory (watched). With --registry-dir,\n"
                   "also the DRA manager: plugins registered through that directory, claims of the pods\n"
                   "(ResourceClaims with status.allocation next to them) written to --claims-dir and\n"
                   "prepared; a template reference gets its claim <pod>-<podClaimName> created in\n"
                   "--claims-dir/<namespace>/ (owned by the pod) for `devplane allocate` to allocate; a pod\n"
                   "with claims starts only once they are prepared (WaitingForClaims until then); each\n"
                   "driver's device health stream is watched. The status shows each container's CDI\n"
                   "devices, the env they resolve to in --cdi-dir and device health (see\n"
                   "docs/v2-node-path.md).\n"
                   "`status` prints capacity, allocatable and per-container assignments; with --wait it\n"
                   "first waits until every CONDITION holds: a substring of a line of `-o flat`, or\n"
                   "!substring for one no line may contain (see docs/v1-node-path.md).\n"
                   "`check` validates the manifests as the node reads them (exit 2 on any error).\n");
}

static int parse_u64(const char *s, uint64_t *ret) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || !*s || *end || s[0] == '-') return -EINVAL;
        *ret = v;
        return 0;
}

static const dp_tool_word status_formats[] = {
        {"json", DP_NODE_STATUS_JSON},   {"yaml", DP_NODE_STATUS_YAML},  {"flat", DP_NODE_STATUS_FLAT},
        {"table", DP_NODE_STATUS_TABLE}, {"wide", DP_NODE_STATUS_TABLE}, {NULL, 0},
};

static int cmd_node_status(int argc, char **argv) {
        const char *plugin_dir = DP_NODE_DEFAULT_PLUGIN_DIR;
        dp_node_status_format fmt = DP_NODE_STATUS_TABLE;
        _cleanup_free_ const char **conds = calloc((size_t)argc + 1, sizeof *conds);
        size_t n_conds = 0;
        uint64_t timeout = 10;
        static const struct option opts[] = {{"plugin-dir", required_argument, NULL, 'd'},
                                             {"output", required_argument, NULL, 'o'},
                                             {"wait", required_argument, NULL, 'w'},
                                             {"timeout", required_argument, NULL, 't'},
                                             {"help", no_argument, NULL, 'h'},
                                             {}};
        int c, v;
        if (!conds) return 1;
        optind = 1;
        while ((c = getopt_long(argc, argv, "d:o:w:t:h", opts, NULL)) >= 0) {
                switch (c) {
                case 'd': plugin_dir = optarg; break;
                case 'o':
                        if ((v = dp_tool_word_value("node status", "-o", optarg, status_formats,
                                                    "table, json, yaml or flat")) < 0)
                                return 2;
                        fmt = v;
                        break;
                case 'w': conds[n_conds++] = optarg; break;
                case 't':
                        if (parse_u64(optarg, &timeout) < 0 || timeout > 3600) {
                                fprintf(stderr, "devplane node status: --timeout %s: must be 0..3600 seconds\n",
                                        optarg);
                                return 2;
                        }
                        break;
                case 'h': node_usage(stdout); return 0;
                default: node_usage(stderr); return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "devplane node status: unexpected argument '%s'\n", argv[optind]);
                return 2;
        }
        dp_error e = DP_ERROR_INIT;
        if (n_conds) {
                _cleanup_strbuf_ dp_strbuf last = DP_STRBUF_INIT;
                int r = dp_node_status_wait(plugin_dir, conds, n_conds, (int)(timeout * 1000), &last, &e);
                if (r < 0) {
                        fprintf(stderr, "devplane node status: %s; last status:\n%s", dp_error_msg(&e),
                                dp_strbuf_str(&last));
                        return 1;
                }
        }
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        dp_doc_node *root = NULL;
        int r = s ? dp_node_status_read(plugin_dir, s, &root, &e) : -ENOMEM;
        if (r < 0) {
                fprintf(stderr, "devplane node status: %s%s\n", dp_error_msg(&e),
                        r == -ENOENT ? " (is `devplane node` running with this --plugin-dir?)" : "");
                return 1;
        }
        _cleanup_strbuf_ dp_strbuf out = DP_STRBUF_INIT;
        dp_node_status_print(&out, root, fmt);
        fputs(dp_strbuf_str(&out), stdout);
        return 0;
}

static int cmd_node_check(int argc, char **argv) {
        const char *dir = NULL;
        int ex = dp_tool_getopt_one(argc, argv, "m:h", "manifests", node_usage, &dir);
        if (ex >= 0) return ex;
        if (!dir || optind < argc) {
                fprintf(stderr, "devplane node check: usage: devplane node check --manifests DIR\n");
                return 2;
        }
        _cleanup_strbuf_ dp_strbuf out = DP_STRBUF_INIT;
        size_t bad = 0;
        dp_error e = DP_ERROR_INIT;
        int r = dp_node_manifests_check(dir, &out, &bad, &e);
        if (r < 0) {
                fprintf(stderr, "devplane node check: %s\n", dp_error_msg(&e));
                return 2;
        }
        for (const char *line = dp_strbuf_str(&out); *line;) {
                const char *end = strchr(line, '\n');
                size_t len = end ? (size_t)(end - line) + 1 : strlen(line);
                fwrite(line, 1, len, startswith(line, "error ") ? stderr : stdout);
                line += len;
        }
        return bad ? 2 : 0;
}

static int cmd_node(int argc, char **argv) {
        if (argc > 1 && streq(argv[1], "status")) return cmd_node_status(argc - 1, argv + 1);
        if (argc > 1 && streq(argv[1], "check")) return cmd_node_check(argc - 1, argv + 1);
        dp_node_config cfg = {.plugin_dir = DP_NODE_DEFAULT_PLUGIN_DIR};
        bool verbose = false;
        static const struct option opts[] = {{"plugin-dir", required_argument, NULL, 'd'},
                                             {"manifests", required_argument, NULL, 'm'},
                                             {"node-name", required_argument, NULL, 'n'},
                                             {"backoff-initial-ms", required_argument, NULL, 'b'},
                                             {"backoff-max-ms", required_argument, NULL, 'B'},
                                             {"registry-dir", required_argument, NULL, 1000},
                                             {"claims-dir", required_argument, NULL, 1001},
                                             {"cdi-dir", required_argument, NULL, 1002},
                                             {"verbose", no_argument, NULL, 'v'},
                                             {"help", no_argument, NULL, 'h'},
                                             {}};
        int c;
        optind = 1;
        while ((c = getopt_long(argc, argv, "d:m:n:b:B:vh", opts, NULL)) >= 0) {
                switch (c) {
                case 'd': cfg.plugin_dir = optarg; break;
                case 'm': cfg.manifests_dir = optarg; break;
                case 'n': cfg.node_name = optarg; break;
                case 'b':
                case 'B': {
                        uint64_t v;
                        if (parse_u64(optarg, &v) < 0 || v == 0 || v > 3600000) {
                                fprintf(stderr, "devplane node: --%s %s: must be 1..3600000\n",
                                        c == 'b' ? "backoff-initial-ms" : "backoff-max-ms", optarg);
                                return 2;
                        }
                        if (c == 'b')
                                cfg.backoff_initial_ms = v;
                        else
                                cfg.backoff_max_ms = v;
                        break;
                }
                case 1000: cfg.registry_dir = optarg; break;
                case 1001: cfg.claims_dir = optarg; break;
                case 1002: cfg.cdi_dir = optarg; break;
                case 'v': verbose = true; break;
                case 'h': node_usage(stdout); return 0;
                default: node_usage(stderr); return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "devplane node: unexpected argument '%s'\n", argv[optind]);
                return 2;
        }
        dp_log_setup("node", verbose ? DP_LOG_DEBUG : DP_LOG_INFO);
        _cleanup_(dp_loop_freep) dp_loop *l = NULL;
        int r = dp_loop_new(&l);
        if (r < 0) {
                log_error("event loop: %s", strerror(-r));
                return 1;
        }
        dp_loop_source *sig_term = NULL, *sig_int = NULL;
        if (dp_loop_add_signal(l, SIGTERM, on_stop_signal, l, &sig_term) < 0 ||
            dp_loop_add_signal(l, SIGINT, on_stop_signal, l, &sig_int) < 0) {
                log_error("signals: cannot set up");
                return 1;
        }
        dp_error e = DP_ERROR_INIT;
        dp_kubelet *n = NULL;
        r = dp_kubelet_new(l, &cfg, &n, &e);
        if (r < 0) {
                log_error("%s", dp_error_msg(&e));
                dp_loop_source_free(sig_term);
                dp_loop_source_free(sig_int);
                return r == -EINVAL ? 2 : 1;
        }
        r = dp_loop_run(l);
        dp_kubelet_free(n);
        dp_loop_source_free(sig_term);
        dp_loop_source_free(sig_int);
        if (r < 0) {
                log_error("event loop: %s", strerror(-r));
                return 1;
        }
        return 0;
}
DP_COMMAND("node", cmd_node, "the kubelet stand-in: device manager, checkpoint, pods from manifests")
