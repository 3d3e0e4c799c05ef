/* SPDX-License-Identifier: Apache-2.0
 * devplane agent — the device plugin; `agent health set` flips a device. */
#include <getopt.h>
#include <stdio.h>

#include "agent/agent.h"
#include "agent/options.h"
#include "base/log.h"
#include "devices/backend.h"
#include "devices/v1.h"
#include "kube/kube.h"
#include "tools/devplane.h"

static void agent_usage(FILE *f) {
        fprintf(f, "usage: devplane agent [--plugin-dir DIR] [--profile NAME|FILE] [--config FILE]\n"
                   "                      [--node-name NAME] [--state-dir DIR] [-v]\n"
                   "                      [--backend mock|pci|devglob|nvml] [--backend-config FILE]\n"
                   "                      [--sysfs-root DIR] [--dev-root DIR] [--nvml-library PATH]\n"
                   "                      [--dra [--no-device-plugin] [--registry-dir DIR] [--plugins-dir DIR]\n"
                   "                       [--cdi-dir DIR] [--slices-dir DIR] [--claims-dir DIR]\n"
                   "                       [--taint-effect CLASS=NoSchedule|NoExecute|None|off]...\n"
                   "                       [--kubeconfig FILE [--context NAME] | --in-cluster [--service-account-dir "
                   "DIR]]\n"
                   "                       [--api-backoff-max-ms MS]]\n"
                   "                      [--metrics-addr HOST:PORT] [--log-format text|json]\n"
                   "                      [--strict-config] [--dry-run] [NVIDIA device-plugin flags]\n"
                   "       devplane agent health [--state-dir DIR] set DEVICE healthy|unhealthy\n\n"
                   "A Device Plugin (v1beta1) over a backend (mock by default; nvml reads\n"
                   "$DP_NVML_LIBRARY when --nvml-library is not given): one socket per resource name in the\n"
                   "plugin directory (default /var/lib/kubelet/device-plugins), registered on its\n"
                   "kubelet.sock. SIGHUP reloads --config and discovers the devices again; SIGTERM removes\n"
                   "the sockets.\n"
                   "--dra also makes it a DRA driver: kubelet plugin API v1/v1beta1 on\n"
                   "<plugins-dir>/<driver>/dra.sock (default /var/lib/kubelet/plugins), registered through\n"
                   "<registry-dir>/<driver>-reg.sock (default /var/lib/kubelet/plugins_registry), CDI specs in\n"
                   "--cdi-dir (default /var/run/cdi), ResourceSlices written to --slices-dir, claims read from\n"
                   "--claims-dir/<namespace>/<name>.yaml. Unhealthy devices are tainted <driver>/<fault class>\n"
                   "(unhealthy, xid-79, gpu-lost, missing) with NoSchedule unless --taint-effect says otherwise\n"
                   "(CLASS * sets the default).\n"
                   "--allow-multiple-allocations publishes every device with allowMultipleAllocations: claims\n"
                   "share a device up to its consumable capacity.\n"
                   "--kubeconfig or --in-cluster (the pod's service account) publish the ResourceSlices to the\n"
                   "Kubernetes API (resource.k8s.io/v1) and read claims from it instead of --claims-dir\n"
                   "(through libcurl.so.4, loaded then; $DP_CURL_LIBRARY names another file);\n"
                   "failed API requests are retried with exponential backoff (up to --api-backoff-max-ms,\n"
                   "default 30000) without holding up V1 or claims already prepared.\n"
                   "--metrics-addr serves Prometheus metrics at http://HOST:PORT/metrics and a liveness\n"
                   "endpoint at /healthz; --log-format json writes one JSON object per log line.\n"
                   "NVIDIA's device-plugin flags and environment variables are understood with NVIDIA's\n"
                   "names, meanings and precedence (flag, then environment, then --config file, then\n"
                   "default): --mig-strategy MIG_STRATEGY, --fail-on-init-error FAIL_ON_INIT_ERROR,\n"
                   "--pass-device-specs PASS_DEVICE_SPECS, --device-list-strategy DEVICE_LIST_STRATEGY,\n"
                   "--device-id-strategy DEVICE_ID_STRATEGY, --driver-root|--nvidia-driver-root\n"
                   "NVIDIA_DRIVER_ROOT, --nvidia-dev-root NVIDIA_DEV_ROOT (--dev-root keeps its meaning\n"
                   "above), --gds-enabled,\n"
                   "--mofed-enabled, --gdrcopy-enabled (GDS_ENABLED ...), --cdi-annotation-prefix,\n"
                   "--mps-root MPS_ROOT, --shared-devices-allocation-policy, --device-discovery-strategy,\n"
                   "--imex-channel-ids, --imex-required, --nvidia-cdi-hook-path, --driver-root-ctr-path;\n"
                   "--config-file CONFIG_FILE (= --config), --kubelet-socket KUBELET_SOCKET (its directory\n"
                   "is the plugin directory); --cdi-feature-flags and --cdi-disable-hooks are accepted and\n"
                   "have no effect; with --backend nvml, libnvidia-ml.so.1 is loaded from the driver root\n"
                   "mounted at --driver-root-ctr-path (default /driver-root) when it holds one.\n"
                   "Booleans take --flag or --flag=false. NODE_NAME is the default\n"
                   "--node-name. Unknown config keys are warnings (file:line:col) unless --strict-config.\n"
                   "--config-dir DIR picks the config file DIR/<value of the node's label --config-label\n"
                   "(default nvidia.com/device-plugin.config)>, read from the API with --kubeconfig or\n"
                   "--in-cluster; unlabelled: DIR/<--config-default> (default `default`), else the only\n"
                   "file in DIR (a ConfigMap mounted there; NVIDIA's config manager does the same).\n"
                   "--dry-run discovers the devices, loads the config and prints each resource name with\n"
                   "its device count, then exits.\n"
                   "`health set` marks a device (id or uuid) unhealthy or healthy again; a running agent\n"
                   "with the same --state-dir reports it at once.\n");
}

typedef struct {
        dp_loop *loop;
        dp_agent *agent;
} agent_ctx;

static int on_stop(dp_loop_source *s, const struct signalfd_siginfo *si, void *ud) {
        agent_ctx *c = ud;
        log_info("signal %u: stopping", si->ssi_signo);
        dp_loop_exit(c->loop, 0);
        return 0;
}

static int on_hup(dp_loop_source *s, const struct signalfd_siginfo *si, void *ud) {
        agent_ctx *c = ud;
        dp_error e = DP_ERROR_INIT;
        if (dp_agent_reload(c->agent, &e) < 0)
                log_error("reload refused, keeping the running config: %s", dp_error_msg(&e));
        return 0;
}

static int cmd_agent_health(int argc, char **argv) {
        const char *state_dir = DP_AGENT_DEFAULT_STATE_DIR;
        int ex = dp_tool_getopt_one(argc, argv, "+s:h", "state-dir", agent_usage, &state_dir);
        if (ex >= 0) return ex;
        if (argc - optind != 3 || !streq(argv[optind], "set")) {
                fprintf(stderr, "devplane agent health: expected `set DEVICE healthy|unhealthy`\n");
                return 2;
        }
        const char *id = argv[optind + 1], *h = argv[optind + 2];
        dp_health health;
        if (streq(h, "healthy") || streq(h, "Healthy"))
                health = DP_HEALTH_HEALTHY;
        else if (streq(h, "unhealthy") || streq(h, "Unhealthy"))
                health = DP_HEALTH_UNHEALTHY;
        else {
                fprintf(stderr, "devplane agent health: \"%s\": must be healthy or unhealthy\n", h);
                return 2;
        }
        dp_error e = DP_ERROR_INIT;
        int r = dp_agent_health_set(state_dir, id, health, &e);
        if (r < 0) {
                fprintf(stderr, "devplane agent health: %s\n", dp_error_msg(&e));
                return r == -EINVAL || r == -ENOENT ? 2 : 1;
        }
        return 0;
}

#define NV_FLAG_BASE 2000

/* --dry-run: what the agent would advertise, then exit (NVIDIA's config
 * examples are checked this way). */
static int agent_dry_run(const dp_agent_options *o) {
        dp_error e = DP_ERROR_INIT;
        _cleanup_(dp_agent_config_freep) dp_agent_config *cfg = NULL;
        _cleanup_(dp_backend_closep) dp_backend *b = NULL;
        _cleanup_(dp_device_set_freep) dp_device_set *set = NULL;
        _cleanup_(dp_v1_plan_freep) dp_v1_plan *plan = NULL;
        int r = o->config_path ? dp_agent_config_load_file_flags(o->config_path,
                                                                 o->strict_config ? DP_CONFIG_STRICT : 0, &cfg, &e)
                               : ((cfg = dp_agent_config_new_default()) ? 0 : -ENOMEM);
        if (r >= 0) r = dp_agent_config_apply(cfg, o->config_overrides, o->n_config_overrides, &e);
        if (r < 0) goto fail;
        for (size_t i = 0; i < cfg->n_warnings; i++)
                fprintf(stderr, "warning: %s\n", cfg->warnings[i]);
        char host[256] = "node";
        if (!o->node_name) (void)gethostname(host, sizeof host - 1);
        dp_backend_options bo = {.node_name = o->node_name ? o->node_name : host,
                                 .profile = o->profile,
                                 .config_path = o->backend_config,
                                 .sysfs_root = o->sysfs_root,
                                 .dev_root = o->dev_root,
                                 .nvml_library = o->nvml_library};
        if ((r = dp_backend_open((dp_backend_kind)o->backend, &bo, &b, &e)) < 0 ||
            (r = dp_backend_discover(b, &set, &e)) < 0 || (r = dp_v1_plan_build(set, cfg, &plan, &e)) < 0)
                goto fail;
        for (size_t i = 0; i < plan->n_resources; i++)
                printf("%s %zu\n", plan->resources[i].name, dp_v1_resource_count(&plan->resources[i]));
        return 0;
fail:
        fprintf(stderr, "devplane agent: %s\n", dp_error_msg(&e));
        return r == -ENOMEM ? 1 : 2;
}

/* --config-dir: the node's label (read from the API when there is one)
 * names the config file, NVIDIA's config manager's way. */
static int pick_config(dp_loop *l, const dp_agent_options *o, const char *dir, const char *label, const char *def,
                       char **ret, dp_error *e) {
        _cleanup_free_ char *value = NULL;
        char host[256] = "node";
        if (!o->node_name) (void)gethostname(host, sizeof host - 1);
        const char *node = o->node_name ? o->node_name : host;
        if (o->kubeconfig || o->in_cluster) {
                _cleanup_(dp_kube_config_freep) dp_kube_config *kc = NULL;
                int r = o->kubeconfig ? dp_kube_config_load(o->kubeconfig, o->kube_context, &kc, e)
                                      : dp_kube_config_in_cluster(o->sa_dir, &kc, e);
                if (r < 0 || (r = dp_agent_node_label(l, kc, node, label, &value, e)) < 0) return r;
        }
        int r = dp_agent_config_pick(dir, value, def, ret, e);
        if (r < 0) return r;
        log_info("config %s (node %s, label %s=%s)", *ret, node, label, value ? value : "(none)");
        return 0;
}

/* Every flag of `devplane agent` in one row: the long name, what getopt
 * returns for it (the short letter, or a number), and what it does with
 * dp_agent_args: a value kept as typed (dp_agent_args_check judges), a
 * switch turned on, a taint effect, or a value taken and not used. */
typedef enum { AGENT_OPT_VALUE, AGENT_OPT_SET, AGENT_OPT_TAINT, AGENT_OPT_UNUSED } agent_opt_kind;
typedef struct agent_opt {
        const char *name;
        int val;
        agent_opt_kind kind;
        size_t offset; /* in dp_agent_args: a const char * (VALUE) or a bool (SET) */
} agent_opt;

/* offsetof(dp_agent_args, member), refused at compile time unless it is a ctype */
#define ARGS_AT(member, ctype)                                                                                         \
        (offsetof(dp_agent_args, member) + 0 * sizeof(&((dp_agent_args *)0)->member == (ctype *)0))
#define VALUE(name, val, member) {name, val, AGENT_OPT_VALUE, ARGS_AT(member, const char *)}
#define SET(name, val, member) {name, val, AGENT_OPT_SET, ARGS_AT(member, bool)}

static const agent_opt agent_opts[] = {
        VALUE("plugin-dir", 'd', o.plugin_dir),
        VALUE("profile", 'p', o.profile),
        VALUE("config", 'c', config_flag),
        VALUE("node-name", 'n', o.node_name),
        VALUE("state-dir", 's', o.state_dir),
        VALUE("backend", 'b', backend),
        VALUE("backend-config", 'B', o.backend_config),
        VALUE("sysfs-root", 'S', o.sysfs_root),
        VALUE("dev-root", 'D', o.dev_root),
        VALUE("nvml-library", 'N', o.nvml_library),
        SET("dra", 1000, o.dra),
        SET("no-device-plugin", 1001, o.no_device_plugin),
        VALUE("registry-dir", 1002, o.registry_dir),
        VALUE("plugins-dir", 1003, o.plugins_dir),
        VALUE("cdi-dir", 1004, o.cdi_dir),
        VALUE("slices-dir", 1005, o.slices_dir),
        VALUE("claims-dir", 1006, o.claims_dir),
        {"taint-effect", 1007, AGENT_OPT_TAINT, 0},
        SET("allow-multiple-allocations", 1100, o.allow_multiple),
        VALUE("kubeconfig", 1008, o.kubeconfig),
        VALUE("context", 1009, o.kube_context),
        SET("in-cluster", 1010, o.in_cluster),
        VALUE("service-account-dir", 1011, o.sa_dir),
        VALUE("api-backoff-max-ms", 1012, api_backoff_max_ms),
        VALUE("metrics-addr", 1013, o.metrics_addr),
        VALUE("log-format", 1014, log_format),
        SET("strict-config", 1015, o.strict_config),
        SET("dry-run", 1016, dry_run),
        VALUE("config-file", 'c', config_flag),
        VALUE("kubelet-socket", 1017, kubelet_socket),
        /* CDI specs for V1 are not generated: nothing to tune */
        {"cdi-feature-flags", 1018, AGENT_OPT_UNUSED, 0},
        {"cdi-disable-hooks", 1018, AGENT_OPT_UNUSED, 0},
        VALUE("config-dir", 1019, config_dir),
        VALUE("config-label", 1020, config_label),
        VALUE("config-default", 1021, config_default),
        SET("verbose", 'v', verbose),
};

/* One option from getopt into a. Returns false for one getopt did not know. */
static bool agent_flag(dp_agent_args *a, int c, const char *arg) {
        if (c >= NV_FLAG_BASE && c < NV_FLAG_BASE + DP_AGENT_NV_FLAGS_MAX) {
                dp_agent_args_add_flag(a, (size_t)(c - NV_FLAG_BASE), arg);
                return true;
        }
        for (size_t i = 0; i < ELEMENTSOF(agent_opts); i++) {
                const agent_opt *f = &agent_opts[i];
                if (f->val != c) continue;
                char *at = (char *)a + f->offset;
                switch (f->kind) {
                case AGENT_OPT_VALUE: *(const char **)at = arg; break;
                case AGENT_OPT_SET: *(bool *)at = true; break;
                case AGENT_OPT_TAINT: dp_agent_args_add_taint(a, arg); break;
                case AGENT_OPT_UNUSED: break;
                }
                return true;
        }
        return false;
}

static void agent_signals_free(dp_loop_source **s, size_t n) {
        for (size_t i = 0; i < n; i++)
                s[i] = dp_loop_source_free(s[i]);
}

/* The daemon: logs, libcurl for the API, the loop with its signals, the
 * config picked from --config-dir, the agent, until SIGTERM. */
static int agent_run(dp_agent_args *a) {
        dp_agent_options *o = &a->o;
        if (a->json_logs && dp_agent_log_json_setup() < 0) {
                fprintf(stderr, "devplane agent: --log-format json: cannot set up\n");
                return 1;
        }
        dp_log_setup("agent", a->verbose ? DP_LOG_DEBUG : DP_LOG_INFO);
        dp_error e = DP_ERROR_INIT;
        /* libcurl is loaded only for the API client, before anything else
         * starts: a node without it fails here, with its name. */
        int r = o->kubeconfig || o->in_cluster ? dp_kube_curl_load(o->kubeconfig ? "--kubeconfig" : "--in-cluster", &e)
                                               : 0;
        if (r < 0) {
                log_error("%s", dp_error_msg(&e));
                return r == -ENOENT ? 2 : 1;
        }
        agent_ctx ctx = {0};
        _cleanup_(dp_loop_freep) dp_loop *l = NULL;
        if ((r = dp_loop_new(&l)) < 0) {
                log_error("event loop: %s", strerror(-r));
                return 1;
        }
        ctx.loop = l;
        dp_loop_source *sig[3] = {NULL, NULL, NULL};
        if (dp_loop_add_signal(l, SIGTERM, on_stop, &ctx, &sig[0]) < 0 ||
            dp_loop_add_signal(l, SIGINT, on_stop, &ctx, &sig[1]) < 0 ||
            dp_loop_add_signal(l, SIGHUP, on_hup, &ctx, &sig[2]) < 0) {
                log_error("signals: cannot set up");
                agent_signals_free(sig, ELEMENTSOF(sig));
                return 1;
        }
        _cleanup_free_ char *picked = NULL;
        if (a->config_dir &&
            (r = pick_config(l, o, a->config_dir, a->config_label, a->config_default, &picked, &e)) < 0) {
                log_error("--config-dir: %s", dp_error_msg(&e));
                agent_signals_free(sig, ELEMENTSOF(sig));
                return r == -ENOENT || r == -EINVAL ? 2 : 1;
        }
        if (picked) o->config_path = picked;
        if ((r = dp_agent_new(l, o, &ctx.agent, &e)) < 0) {
                log_error("%s", dp_error_msg(&e));
                agent_signals_free(sig, ELEMENTSOF(sig));
                return r == -EINVAL || r == -ENOENT || r == -E2BIG ? 2 : 1;
        }
        r = dp_loop_run(l);
        ctx.agent = dp_agent_free(ctx.agent);
        agent_signals_free(sig, ELEMENTSOF(sig));
        if (r < 0) {
                log_error("event loop: %s", strerror(-r));
                return 1;
        }
        return 0;
}

static int cmd_agent(int argc, char **argv) {
        if (argc > 1 && streq(argv[1], "health")) return cmd_agent_health(argc - 1, argv + 1);
        _cleanup_(dp_agent_args_done) dp_agent_args a;
        dp_agent_args_init(&a);
        /* The table above, --help, then one option per NVIDIA config flag. */
        struct option opts[ELEMENTSOF(agent_opts) + 1 + DP_AGENT_NV_FLAGS_MAX];
        size_t n_opts = 0;
        for (size_t i = 0; i < ELEMENTSOF(agent_opts); i++) {
                const agent_opt *f = &agent_opts[i];
                opts[n_opts++] = (struct option){f->name, f->kind == AGENT_OPT_SET ? no_argument : required_argument,
                                                 NULL, f->val};
        }
        opts[n_opts++] = (struct option){"help", no_argument, NULL, 'h'};
        for (size_t k = 0; dp_config_flags[k].flag && k < DP_AGENT_NV_FLAGS_MAX - 1; k++)
                opts[n_opts++] = (struct option){dp_config_flags[k].flag,
                                                 dp_config_flags[k].boolean ? optional_argument : required_argument,
                                                 NULL, NV_FLAG_BASE + (int)k};
        opts[n_opts] = (struct option){0};
        int c;
        optind = 1;
        while ((c = getopt_long(argc, argv, "d:p:c:n:s:b:B:S:D:N:vh", opts, NULL)) >= 0) {
                if (c == 'h') {
                        agent_usage(stdout);
                        return 0;
                }
                if (!agent_flag(&a, c, optarg)) {
                        agent_usage(stderr);
                        return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "devplane agent: unexpected argument '%s'\n", argv[optind]);
                return 2;
        }
        dp_error e = DP_ERROR_INIT;
        int r = dp_agent_args_check(&a, &e);
        if (r < 0) {
                fprintf(stderr, "devplane agent: %s\n", dp_error_msg(&e));
                return r == -ENOMEM ? 1 : 2;
        }
        return a.dry_run ? agent_dry_run(&a.o) : agent_run(&a);
}
DP_COMMAND("agent", cmd_agent,
           "the device plugin (V1) and DRA driver (V2) over a backend; `agent health set` flips a device")
