/* SPDX-License-Identifier: Apache-2.0
 * devplane demo — the README's main job: a node stand-in and a device-plugin
 * agent on one event loop, talking gRPC over real unix sockets in a
 * temporary directory; a few pods; capacity/allocatable and who got which
 * device; one GPU flipped unhealthy; clean shutdown. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <getopt.h>
#include <stdio.h>
#include <sys/stat.h>

#include "agent/agent.h"
#include "base/fileio.h"
#include "base/log.h"
#include "devices/health.h"
#include "devices/profile.h"
#include "node/node.h"
#include "node/status.h"
#include "tools/devplane.h"

#define DEMO_STEP_TIMEOUT_USEC (15ull * 1000 * 1000)

typedef struct demo {
        dp_loop *loop;
        dp_kubelet *kubelet;
        dp_agent *agent;
        char *dir, *plugins, *manifests, *state;
        const char *resource;
} demo;

typedef bool (*demo_pred)(const demo *d);

/* Run the shared loop until pred holds (or a step timeout). */
static int run_until(demo *d, demo_pred pred, const char *what) {
        uint64_t end = dp_loop_now() + DEMO_STEP_TIMEOUT_USEC;
        while (!pred(d)) {
                if (dp_loop_now() > end) {
                        fprintf(stderr, "devplane demo: timed out waiting until %s\n", what);
                        return -ETIMEDOUT;
                }
                int r = dp_loop_run_once(d->loop, 100);
                if (r < 0) return r;
        }
        return 0;
}

static bool registered(const demo *d) {
        return dp_agent_registrations(d->agent) > 0 && d->resource &&
               dp_kubelet_allocatable(d->kubelet, d->resource) > 0 &&
               dp_kubelet_allocatable(d->kubelet, d->resource) == dp_kubelet_capacity(d->kubelet, d->resource);
}
static bool all_running(const demo *d) {
        return dp_kubelet_n_pods(d->kubelet) > 0 &&
               dp_kubelet_n_pods_running(d->kubelet) == dp_kubelet_n_pods(d->kubelet);
}
static bool one_unhealthy(const demo *d) {
        return dp_kubelet_allocatable(d->kubelet, d->resource) + 1 == dp_kubelet_capacity(d->kubelet, d->resource);
}

static void print_status(const demo *d, bool pods) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        dp_doc_node *root = NULL;
        dp_error e = DP_ERROR_INIT;
        if (!s || dp_node_status_read(d->plugins, s, &root, &e) < 0) {
                fprintf(stderr, "devplane demo: %s\n", dp_error_msg(&e));
                return;
        }
        _cleanup_strbuf_ dp_strbuf out = DP_STRBUF_INIT;
        dp_node_status_print(&out, root, DP_NODE_STATUS_TABLE);
        const char *text = dp_strbuf_str(&out);
        if (!pods) {
                const char *cut = strstr(text, "\nPOD ");
                printf("%.*s", cut ? (int)(cut - text) : (int)strlen(text), text);
        } else {
                fputs(text, stdout);
        }
        fflush(stdout);
}

static int write_file(const char *dir, const char *name, const char *text) {
        return dp_write_file_atomic(dir, name, text, strlen(text), 0644, 0, NULL);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void)st;
        (void)ftw;
        return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static int place_pods(demo *d) {
        _cleanup_free_ char *training = dp_asprintf(
                "apiVersion: v1\nkind: Pod\nmetadata: {name: training, namespace: ml}\nspec:\n  containers:\n"
                "  - name: trainer\n    image: trainer:1\n    resources: {limits: {%s: 4}}\n"
                "  - name: log-shipper\n    image: shipper:1\n",
                d->resource);
        _cleanup_free_ char *inference = dp_asprintf(
                "apiVersion: v1\nkind: Pod\nmetadata: {name: inference, namespace: ml}\nspec:\n  containers:\n"
                "  - name: server\n    image: server:1\n    resources: {limits: {%s: 1}, requests: {%s: 1}}\n",
                d->resource, d->resource);
        _cleanup_free_ char *notebook = dp_asprintf(
                "apiVersion: v1\nkind: Pod\nmetadata: {name: notebook, namespace: research}\nspec:\n  containers:\n"
                "  - name: kernel\n    image: jupyter:1\n    resources: {limits: {%s: 1}}\n"
                "  - name: viz\n    image: viz:1\n    resources: {limits: {%s: 1}}\n",
                d->resource, d->resource);
        if (!training || !inference || !notebook) return -ENOMEM;
        int r = write_file(d->manifests, "training.yaml", training);
        if (r >= 0) r = write_file(d->manifests, "inference.yaml", inference);
        if (r >= 0) r = write_file(d->manifests, "notebook.yaml", notebook);
        return r;
}

static int demo_run(demo *d, const char *profile) {
        dp_error e = DP_ERROR_INIT;
        dp_node_config nc = {.plugin_dir = d->plugins,
                             .manifests_dir = d->manifests,
                             .node_name = "demo-node",
                             .backoff_initial_ms = 200,
                             .backoff_max_ms = 1000};
        int r = dp_kubelet_new(d->loop, &nc, &d->kubelet, &e);
        if (r < 0) {
                fprintf(stderr, "devplane demo: node: %s\n", dp_error_msg(&e));
                return r;
        }
        /* Index ids ("3" for gpu-3) keep the tables readable; the default
         * (uuid) works the same way. */
        _cleanup_free_ char *cfg = dp_asprintf("%s/config.yaml", d->dir);
        if (!cfg ||
            write_file(d->dir, "config.yaml", "version: v1\nflags:\n  plugin:\n    deviceIDStrategy: index\n") < 0) {
                fprintf(stderr, "devplane demo: cannot write the agent config\n");
                return -EIO;
        }
        dp_agent_options ao = {.plugin_dir = d->plugins,
                               .profile = profile,
                               .config_path = cfg,
                               .node_name = "demo-node",
                               .state_dir = d->state};
        r = dp_agent_new(d->loop, &ao, &d->agent, &e);
        if (r < 0) {
                fprintf(stderr, "devplane demo: agent: %s\n", dp_error_msg(&e));
                return r;
        }
        d->resource = dp_agent_resource_name(d->agent, 0);
        if (!d->resource) {
                fprintf(stderr, "devplane demo: profile %s exposes no resource\n", profile);
                return -EINVAL;
        }
        printf("devplane demo: a node stand-in (`devplane node`) and a device-plugin agent (`devplane agent`,\n"
               "mock backend, profile %s, deviceIDStrategy index) talking gRPC over unix sockets in\n%s\n\n",
               profile, d->plugins);

        if ((r = run_until(d, registered, "the agent is registered")) < 0) return r;
        printf("1. The agent registered %s on kubelet.sock; the node opened ListAndWatch:\n\n", d->resource);
        print_status(d, false);

        if ((r = place_pods(d)) < 0) {
                fprintf(stderr, "devplane demo: writing manifests: %s\n", strerror(-r));
                return r;
        }
        printf("\n2. Three pods placed in the manifest directory (ml/training asks 4, ml/inference 1,\n"
               "   research/notebook 1 per container); per container: GetPreferredAllocation, Allocate,\n"
               "   PreStartContainer, checkpoint:\n\n");
        if ((r = run_until(d, all_running, "every pod is admitted")) < 0) return r;
        print_status(d, true);

        printf("\n3. `devplane agent health set gpu-3 unhealthy`: the agent sees its health file change\n"
               "   (inotify) and sends the full list at once; capacity stays, allocatable drops, and the\n"
               "   container holding gpu-3 (if any) keeps it:\n\n");
        if ((r = dp_agent_health_set(d->state, "gpu-3", DP_HEALTH_UNHEALTHY, &e)) < 0) {
                fprintf(stderr, "devplane demo: %s\n", dp_error_msg(&e));
                return r;
        }
        if ((r = run_until(d, one_unhealthy, "allocatable drops")) < 0) return r;
        print_status(d, false);
        return 0;
}

static int cmd_demo(int argc, char **argv) {
        const char *profile = DP_PROFILE_DEFAULT;
        bool keep = false, verbose = false;
        static const struct option opts[] = {{"profile", required_argument, NULL, 'p'},
                                             {"keep", no_argument, NULL, 'k'},
                                             {"verbose", no_argument, NULL, 'v'},
                                             {"help", no_argument, NULL, 'h'},
                                             {}};
        int c;
        optind = 1;
        while ((c = getopt_long(argc, argv, "p:kvh", opts, NULL)) >= 0) {
                switch (c) {
                case 'p': profile = optarg; break;
                case 'k': keep = true; break;
                case 'v': verbose = true; break;
                case 'h':
                        printf("usage: devplane demo [--profile NAME|FILE] [--keep] [-v]\n\n"
                               "Runs a node stand-in and a device-plugin agent in a temporary directory, places\n"
                               "a few pods, shows capacity/allocatable and which container got which device,\n"
                               "flips one GPU unhealthy, then shuts down and removes the directory (--keep keeps "
                               "it).\n");
                        return 0;
                default: return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "devplane demo: unexpected argument '%s'\n", argv[optind]);
                return 2;
        }
        dp_log_setup("demo", verbose ? DP_LOG_DEBUG : DP_LOG_WARNING);
        demo d = {0};
        const char *tmp = getenv("TMPDIR");
        d.dir = dp_asprintf("%s/devplane-demo.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!d.dir || !mkdtemp(d.dir)) {
                fprintf(stderr, "devplane demo: cannot create a temporary directory: %m\n");
                free(d.dir);
                return 1;
        }
        d.plugins = dp_asprintf("%s/device-plugins", d.dir);
        d.manifests = dp_asprintf("%s/manifests", d.dir);
        d.state = dp_asprintf("%s/agent", d.dir);
        int r = d.plugins && d.manifests && d.state ? 0 : -ENOMEM;
        if (r >= 0 && mkdir(d.manifests, 0755) < 0) r = -errno;
        if (r >= 0) r = dp_loop_new(&d.loop);
        if (r >= 0) r = demo_run(&d, profile);
        d.agent = dp_agent_free(d.agent);
        d.kubelet = dp_kubelet_free(d.kubelet);
        d.loop = dp_loop_free(d.loop);
        if (keep) {
                printf("\n4. Stopped; files kept in %s\n", d.dir);
        } else {
                nftw(d.dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
                if (r >= 0) printf("\n4. Agent and node stopped (sockets removed); %s removed.\n", d.dir);
        }
        free(d.dir);
        free(d.plugins);
        free(d.manifests);
        free(d.state);
        if (r < 0) return r == -EINVAL || r == -ENOENT ? 2 : 1;
        return 0;
}
DP_COMMAND("demo", cmd_demo, "node stand-in + device-plugin agent on the mock profile, end to end")
