/* SPDX-License-Identifier: Apache-2.0
 * options.c — `devplane agent`'s flags and environment checked into
 * dp_agent_options (options.h says the rules). */
#include <stdio.h>
#include <unistd.h>

#include "agent/options.h"
#include "base/strbuf.h"
#include "devices/backend.h"

void dp_agent_args_init(dp_agent_args *a) {
        *a = (dp_agent_args){.o = {.plugin_dir = "/var/lib/kubelet/device-plugins"},
                             .config_label = DP_AGENT_CONFIG_LABEL_DEFAULT,
                             .config_default = "default",
                             .kubelet_socket = getenv("KUBELET_SOCKET")};
        /* NVIDIA's variables first, so flags given on the command line,
         * added after them, win (urfave/cli's precedence); an empty variable
         * counts as set, as there. */
        for (size_t k = 0; dp_config_flags[k].flag && a->n_ov < DP_AGENT_NV_FLAGS_MAX; k++) {
                const dp_config_flag *f = &dp_config_flags[k];
                const char *env = f->env && getenv(f->env) ? f->env : f->env2 && getenv(f->env2) ? f->env2 : NULL;
                if (env) a->ov[a->n_ov++] = (dp_config_override){f->flag, getenv(env), env};
        }
        const char *node = getenv("NODE_NAME");
        if (node && *node) a->o.node_name = node;
}

void dp_agent_args_add_flag(dp_agent_args *a, size_t k, const char *value) {
        if (a->n_ov < ELEMENTSOF(a->ov))
                a->ov[a->n_ov++] = (dp_config_override){dp_config_flags[k].flag, value ? value : "true", NULL};
}

void dp_agent_args_add_taint(dp_agent_args *a, const char *value) {
        if (a->n_taints < ELEMENTSOF(a->taints)) a->taints[a->n_taints++] = value;
        a->n_taints_given++;
}

/* NVIDIA's driver-root lookup: with the driver mounted in the container
 * (--driver-root-ctr-path, DRIVER_ROOT_CTR_PATH, default /driver-root, as
 * NVIDIA's chart mounts nvidiaDriverRoot), the nvml backend loads
 * libnvidia-ml.so.1 from its library directories rather than the
 * container's own search path. NULL when there is no such file. */
static char *driver_root_nvml(const dp_config_override *ov, size_t n) {
        const char *root = "/driver-root";
        for (size_t i = 0; i < n; i++)
                if (streq(ov[i].flag, "driver-root-ctr-path") || streq(ov[i].flag, "container-driver-root"))
                        root = ov[i].value;
        if (!root || !*root || streq(root, "/")) return NULL;
        static const char *const dirs[] = {"/usr/lib64", "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                                           "/lib64",     "/lib/x86_64-linux-gnu",     "/lib/aarch64-linux-gnu",
                                           NULL};
        for (size_t i = 0; dirs[i]; i++) {
                char *p = dp_asprintf("%s%s/libnvidia-ml.so.1", root, dirs[i]);
                if (p && access(p, R_OK) == 0) return p;
                free(p);
        }
        return NULL;
}

/* The values given as text: backend, taint count, API backoff, log format. */
static int check_values(dp_agent_args *a, dp_error *err) {
        if (a->backend) {
                dp_backend_kind k;
                if (dp_backend_kind_from_string(a->backend, &k) < 0)
                        return dp_error_set(err, -EINVAL, "--backend %s: must be mock, pci, devglob or nvml",
                                            a->backend);
                a->o.backend = (int)k;
        }
        if (a->n_taints_given > ELEMENTSOF(a->taints))
                return dp_error_set(err, -EINVAL, "more than %zu --taint-effect flags", ELEMENTSOF(a->taints));
        a->o.taint_effects = a->taints;
        a->o.n_taint_effects = a->n_taints;
        if (a->api_backoff_max_ms) {
                const char *v = a->api_backoff_max_ms;
                char *end = NULL;
                unsigned long long ms = strtoull(v, &end, 10);
                if (!*v || *end || ms == 0 || ms > 3600000)
                        return dp_error_set(err, -EINVAL, "--api-backoff-max-ms %s: must be 1..3600000", v);
                a->o.api_backoff_max_usec = ms * 1000;
        }
        if (a->log_format) {
                if (streq(a->log_format, "json"))
                        a->json_logs = true;
                else if (!streq(a->log_format, "text"))
                        return dp_error_set(err, -EINVAL, "--log-format %s: must be text or json", a->log_format);
        }
        return 0;
}

/* What only a running agent needs: something to serve, one API source, one
 * config source. */
static int check_serving(dp_agent_args *a, dp_error *err) {
        const dp_agent_options *o = &a->o;
        if (o->no_device_plugin && !o->dra)
                return dp_error_set(err, -EINVAL, "--no-device-plugin without --dra leaves nothing to serve");
        if (o->kubeconfig && o->in_cluster)
                return dp_error_set(err, -EINVAL, "--kubeconfig and --in-cluster are exclusive");
        if (a->config_dir && a->config_flag)
                return dp_error_set(err, -EINVAL, "--config-dir and --config are exclusive");
        if (a->config_dir) a->o.config_path = NULL; /* over CONFIG_FILE */
        if ((o->kubeconfig || o->in_cluster) && !o->dra && !a->config_dir)
                return dp_error_set(err, -EINVAL,
                                    "--kubeconfig/--in-cluster need --dra or --config-dir (the API is used for V2 "
                                    "and the node's config label)");
        return 0;
}

int dp_agent_args_check(dp_agent_args *a, dp_error *err) {
        int r = check_values(a, err);
        if (r < 0) return r;
        /* origins for messages: the flag as typed, or the variable */
        for (size_t i = 0; i < a->n_ov; i++)
                if (!a->ov[i].origin) {
                        snprintf(a->origins[i], sizeof a->origins[i], "--%s", a->ov[i].flag);
                        a->ov[i].origin = a->origins[i];
                }
        a->o.config_overrides = a->ov;
        a->o.n_config_overrides = a->n_ov;
        const char *cf = getenv("CONFIG_FILE");
        a->o.config_path = a->config_flag ? a->config_flag : cf && *cf ? cf : NULL;
        if (a->kubelet_socket) {
                const char *slash = strrchr(a->kubelet_socket, '/');
                if (!slash || !streq(slash + 1, "kubelet.sock"))
                        return dp_error_set(err, -EINVAL,
                                            "--kubelet-socket %s: must be <directory>/kubelet.sock (the plugin "
                                            "directory is its directory)",
                                            a->kubelet_socket);
                free(a->socket_dir);
                a->socket_dir = strndup(a->kubelet_socket, (size_t)(slash - a->kubelet_socket));
                if (!a->socket_dir) return dp_error_set(err, -ENOMEM, "out of memory");
                a->o.plugin_dir = *a->socket_dir ? a->socket_dir : "/";
        }
        if (a->o.backend == (int)DP_BACKEND_NVML && !a->o.nvml_library && !getenv("DP_NVML_LIBRARY") &&
            !a->nvml_in_root && (a->nvml_in_root = driver_root_nvml(a->ov, a->n_ov)))
                a->o.nvml_library = a->nvml_in_root;
        return a->dry_run ? 0 : check_serving(a, err);
}

void dp_agent_args_done(dp_agent_args *a) {
        dp_free_many(a->socket_dir, a->nvml_in_root);
        a->socket_dir = a->nvml_in_root = NULL;
}
