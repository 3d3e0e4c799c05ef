/* SPDX-License-Identifier: Apache-2.0
 * Tests for agent/options.c: `devplane agent`'s checks live in the agent's
 * options, not in the CLI — each bad value or combination is -EINVAL with
 * the text the CLI prints after "devplane agent: ", and good values complete
 * dp_agent_options (NVIDIA's variables under the flags, the kubelet socket's
 * directory as the plugin directory). */
#include "agent/options.h"
#include "harness.h"

static int check(dp_agent_args *a, dp_error *e) {
        dp_error_clear(e);
        return dp_agent_args_check(a, e);
}

static void fresh(dp_agent_args *a) {
        unsetenv("KUBELET_SOCKET");
        unsetenv("NODE_NAME");
        unsetenv("MIG_STRATEGY");
        unsetenv("CONFIG_FILE");
        unsetenv("DP_AGENT_RSS_TRIM");
        dp_agent_args_init(a);
}

TEST(bad_values_refused_with_the_flag) {
        dp_agent_args a;
        dp_error e = DP_ERROR_INIT;
        fresh(&a);
        a.backend = "gpu";
        ASSERT_EQ(check(&a, &e), -EINVAL);
        ASSERT_STREQ(e.msg, "--backend gpu: must be mock, pci, devglob or nvml");
        fresh(&a);
        a.api_backoff_max_ms = "0";
        ASSERT_EQ(check(&a, &e), -EINVAL);
        ASSERT_STREQ(e.msg, "--api-backoff-max-ms 0: must be 1..3600000");
        fresh(&a);
        a.log_format = "xml";
        ASSERT_EQ(check(&a, &e), -EINVAL);
        ASSERT_STREQ(e.msg, "--log-format xml: must be text or json");
        fresh(&a);
        for (int i = 0; i < DP_AGENT_TAINTS_MAX + 1; i++)
                dp_agent_args_add_taint(&a, "*=None");
        ASSERT_EQ(check(&a, &e), -EINVAL);
        ASSERT_STREQ(e.msg, "more than 32 --taint-effect flags");
        fresh(&a);
        a.kubelet_socket = "/var/lib/kubelet/device-plugins/other.sock";
        ASSERT_EQ(check(&a, &e), -EINVAL);
        ASSERT_CONTAINS(e.msg, "must be <directory>/kubelet.sock");
        dp_agent_args_done(&a);
}

TEST(combinations_refused_unless_dry_run) {
        dp_agent_args a;
        dp_error e = DP_ERROR_INIT;
        fresh(&a);
        a.o.no_device_plugin = true;
        ASSERT_EQ(check(&a, &e), -EINVAL);
        ASSERT_STREQ(e.msg, "--no-device-plugin without --dra leaves nothing to serve");
        a.dry_run = true; /* a dry run only lists what V1 would advertise */
        ASSERT_OK(check(&a, &e));
        fresh(&a);
        a.o.dra = true;
        a.o.kubeconfig = "kc";
        a.o.in_cluster = true;
        ASSERT_EQ(check(&a, &e), -EINVAL);
        ASSERT_STREQ(e.msg, "--kubeconfig and --in-cluster are exclusive");
        fresh(&a);
        a.config_dir = "d";
        a.config_flag = "f";
        ASSERT_EQ(check(&a, &e), -EINVAL);
        ASSERT_STREQ(e.msg, "--config-dir and --config are exclusive");
        fresh(&a);
        a.o.in_cluster = true;
        ASSERT_EQ(check(&a, &e), -EINVAL);
        ASSERT_CONTAINS(e.msg, "--kubeconfig/--in-cluster need --dra or --config-dir");
        dp_agent_args_done(&a);
}

TEST(good_values_complete_the_options) {
        dp_agent_args a;
        dp_error e = DP_ERROR_INIT;
        fresh(&a);
        setenv("MIG_STRATEGY", "mixed", 1);
        setenv("KUBELET_SOCKET", "/run/dp/kubelet.sock", 1);
        setenv("NODE_NAME", "node-7", 1);
        dp_agent_args_init(&a);
        for (size_t k = 0; dp_config_flags[k].flag; k++)
                if (streq(dp_config_flags[k].flag, "mig-strategy")) dp_agent_args_add_flag(&a, k, "single");
        a.backend = "pci";
        a.api_backoff_max_ms = "400";
        a.log_format = "json";
        dp_agent_args_add_taint(&a, "xid-79=NoExecute");
        ASSERT_OK(check(&a, &e));
        ASSERT_STREQ(a.o.plugin_dir, "/run/dp");
        ASSERT_STREQ(a.o.node_name, "node-7");
        ASSERT_EQ(a.o.backend, 1); /* DP_BACKEND_PCI */
        ASSERT_EQ(a.o.api_backoff_max_usec, 400000);
        ASSERT_TRUE(a.json_logs);
        ASSERT_EQ(a.o.n_taint_effects, 1);
        /* the variable first, the flag after it: the flag wins when applied in order */
        ASSERT_EQ(a.o.n_config_overrides, 2);
        ASSERT_STREQ(a.o.config_overrides[0].origin, "MIG_STRATEGY");
        ASSERT_STREQ(a.o.config_overrides[1].value, "single");
        ASSERT_STREQ(a.o.config_overrides[1].origin, "--mig-strategy");
        dp_agent_args_done(&a);
}
