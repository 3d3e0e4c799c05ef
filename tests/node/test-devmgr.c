/* SPDX-License-Identifier: Apache-2.0 */
#include "harness.h"
#include "node/devmgr.h"

static void add_plugin(dp_devmgr *m, const char *res, size_t n, const char *prefix) {
        dp_nm_options o = {0};
        ASSERT_OK(dp_devmgr_register(m, res, "p.sock", &o));
        dp_nm_device devs[16];
        char ids[16][32];
        int64_t numa[16];
        for (size_t i = 0; i < n; i++) {
                snprintf(ids[i], sizeof ids[i], "%s%zu", prefix, i);
                numa[i] = (int64_t)(i / 4);
                devs[i] = (dp_nm_device){ids[i], true, &numa[i], 1};
        }
        ASSERT_OK(dp_devmgr_set_devices(m, res, devs, n, NULL));
}

TEST(resource_name_rule) {
        ASSERT_TRUE(dp_devmgr_is_extended_resource_name("nvidia.com/gpu"));
        ASSERT_TRUE(dp_devmgr_is_extended_resource_name("nvidia.com/mig-1g.10gb"));
        ASSERT_TRUE(dp_devmgr_is_extended_resource_name("example.com/Foo_bar"));
        ASSERT_FALSE(dp_devmgr_is_extended_resource_name("gpu"));
        ASSERT_FALSE(dp_devmgr_is_extended_resource_name("kubernetes.io/gpu"));
        ASSERT_FALSE(dp_devmgr_is_extended_resource_name("foo.kubernetes.io/gpu"));
        ASSERT_FALSE(dp_devmgr_is_extended_resource_name("requests.example.com/gpu"));
        ASSERT_FALSE(dp_devmgr_is_extended_resource_name("Example.com/gpu"));
        ASSERT_FALSE(dp_devmgr_is_extended_resource_name("example.com/gpu/x"));
        ASSERT_FALSE(dp_devmgr_is_extended_resource_name("example.com/-gpu"));
        ASSERT_FALSE(dp_devmgr_is_extended_resource_name("example.com/"));
        ASSERT_FALSE(dp_devmgr_is_extended_resource_name("/gpu"));
        ASSERT_FALSE(dp_devmgr_is_extended_resource_name("exa..mple.com/gpu"));
        char big[400];
        memset(big, 'a', 300);
        strcpy(big + 300, ".com/gpu");
        ASSERT_FALSE(dp_devmgr_is_extended_resource_name(big));
        char longname[100] = "example.com/";
        memset(longname + 12, 'b', 64);
        longname[76] = 0;
        ASSERT_FALSE(dp_devmgr_is_extended_resource_name(longname));
        longname[75] = 0;
        ASSERT_TRUE(dp_devmgr_is_extended_resource_name(longname));
}

TEST(validate_register) {
        dp_error e = DP_ERROR_INIT;
        ASSERT_OK(dp_devmgr_validate_register("v1beta1", "example.com/gpu", "gpu.sock", &e));
        ASSERT_EQ(dp_devmgr_validate_register("v1alpha", "example.com/gpu", "gpu.sock", &e), -EINVAL);
        ASSERT_CONTAINS(e.msg, "requested API version \"v1alpha\" is not supported by kubelet");
        ASSERT_EQ(dp_devmgr_validate_register("v1beta1", "gpu", "gpu.sock", &e), -EINVAL);
        ASSERT_CONTAINS(e.msg, "the ResourceName \"gpu\" is invalid");
        ASSERT_EQ(dp_devmgr_validate_register("v1beta1", "example.com/gpu", "../x.sock", &e), -EINVAL);
        ASSERT_EQ(dp_devmgr_validate_register("v1beta1", "example.com/gpu", "", &e), -EINVAL);
}

TEST(capacity_allocatable_health) {
        _cleanup_(dp_devmgr_freep) dp_devmgr *m = dp_devmgr_new();
        add_plugin(m, "example.com/gpu", 8, "gpu-");
        ASSERT_EQ(dp_devmgr_capacity(m, "example.com/gpu"), 8);
        ASSERT_EQ(dp_devmgr_allocatable(m, "example.com/gpu"), 8);
        const dp_nm_resource *r = dp_devmgr_resource(m, "example.com/gpu");
        dp_nm_device devs[8];
        for (size_t i = 0; i < 8; i++) devs[i] = r->devices[i];
        char *ids[8];
        for (size_t i = 0; i < 8; i++) ids[i] = strdup(devs[i].id), devs[i].id = ids[i];
        devs[3].healthy = false;
        ASSERT_OK(dp_devmgr_set_devices(m, "example.com/gpu", devs, 8, NULL));
        for (size_t i = 0; i < 8; i++) free(ids[i]);
        ASSERT_EQ(dp_devmgr_capacity(m, "example.com/gpu"), 8);
        ASSERT_EQ(dp_devmgr_allocatable(m, "example.com/gpu"), 7);
        /* gpu-3 is never a candidate */
        size_t needed;
        const char **avail;
        ASSERT_OK(dp_devmgr_candidates(m, "p1", "c", "example.com/gpu", 7, &needed, &avail, NULL));
        ASSERT_EQ(needed, 7);
        for (size_t i = 0; avail[i]; i++) ASSERT_FALSE(streq(avail[i], "gpu-3"));
        free(avail);
        dp_error e = DP_ERROR_INIT;
        ASSERT_EQ(dp_devmgr_candidates(m, "p1", "c", "example.com/gpu", 8, &needed, &avail, &e), -EBUSY);
        ASSERT_CONTAINS(e.msg, "Requested: 8, Available: 7");
}

TEST(duplicate_ids_refused) {
        _cleanup_(dp_devmgr_freep) dp_devmgr *m = dp_devmgr_new();
        ASSERT_OK(dp_devmgr_register(m, "example.com/gpu", "p.sock", NULL));
        dp_nm_device devs[2] = {{(char *)"a", true, NULL, 0}, {(char *)"a", true, NULL, 0}};
        dp_error e = DP_ERROR_INIT;
        ASSERT_EQ(dp_devmgr_set_devices(m, "example.com/gpu", devs, 2, &e), -EINVAL);
        ASSERT_CONTAINS(e.msg, "duplicate");
        ASSERT_EQ(dp_devmgr_set_devices(m, "example.com/other", devs, 1, &e), -ENOENT);
}

TEST(grace_period) {
        _cleanup_(dp_devmgr_freep) dp_devmgr *m = dp_devmgr_new();
        add_plugin(m, "example.com/gpu", 4, "g");
        dp_devmgr_disconnected(m, "example.com/gpu", 1000);
        ASSERT_EQ(dp_devmgr_capacity(m, "example.com/gpu"), 4);
        ASSERT_EQ(dp_devmgr_allocatable(m, "example.com/gpu"), 0);
        uint64_t next;
        ASSERT_EQ(dp_devmgr_expire(m, 1000 + DP_NODE_ENDPOINT_GRACE_MS - 1, &next), 0);
        ASSERT_EQ(next, 1000 + DP_NODE_ENDPOINT_GRACE_MS);
        /* re-registering within the grace period keeps it */
        add_plugin(m, "example.com/gpu", 4, "g");
        ASSERT_EQ(dp_devmgr_expire(m, 1000 + DP_NODE_ENDPOINT_GRACE_MS + 5, &next), 0);
        ASSERT_EQ(next, UINT64_MAX);
        dp_devmgr_disconnected(m, "example.com/gpu", 2000);
        ASSERT_EQ(dp_devmgr_expire(m, 2000 + DP_NODE_ENDPOINT_GRACE_MS, NULL), 1);
        ASSERT_EQ(dp_devmgr_n_resources(m), 0);
}

TEST(allocate_distinct_sticky_release) {
        _cleanup_(dp_devmgr_freep) dp_devmgr *m = dp_devmgr_new();
        add_plugin(m, "example.com/gpu", 2, "gpu-");
        const char *res = "example.com/gpu";
        size_t needed;
        const char **avail, **ids;
        ASSERT_OK(dp_devmgr_candidates(m, "pod", "a", res, 1, &needed, &avail, NULL));
        ASSERT_OK(dp_devmgr_choose(avail, needed, NULL, 0, &ids));
        ASSERT_STREQ(ids[0], "gpu-0");
        ASSERT_OK(dp_devmgr_reserve(m, "pod", "a", res, ids));
        free(avail);
        free(ids);
        /* while a's Allocate is in flight, b cannot be offered gpu-0 */
        ASSERT_OK(dp_devmgr_candidates(m, "pod", "b", res, 1, &needed, &avail, NULL));
        ASSERT_STREQ(avail[0], "gpu-1");
        ASSERT_TRUE(avail[1] == NULL);
        free(avail);
        const char *a_ids[] = {"gpu-0", NULL};
        ASSERT_OK(dp_devmgr_commit(m, "pod", "a", res, a_ids, (const uint8_t *)"\x0a\x00", 2));
        const char *b_ids[] = {"gpu-1", NULL};
        ASSERT_OK(dp_devmgr_commit(m, "pod", "b", res, b_ids, NULL, 0));
        ASSERT_EQ(dp_devmgr_n_in_use(m, res), 2);
        /* sticky: asking again needs nothing */
        ASSERT_OK(dp_devmgr_candidates(m, "pod", "a", res, 1, &needed, &avail, NULL));
        ASSERT_EQ(needed, 0);
        free(avail);
        /* a third container waits */
        ASSERT_EQ(dp_devmgr_candidates(m, "pod2", "c", res, 1, &needed, &avail, NULL), -EBUSY);
        const dp_nm_alloc *al = dp_devmgr_alloc(m, "pod", "a", res);
        ASSERT_TRUE(al != NULL);
        ASSERT_EQ(al->ids[0].numa, 0);
        ASSERT_EQ(al->resp_len, 2);
        ASSERT_EQ(dp_devmgr_release_pod(m, "pod"), 2);
        ASSERT_EQ(dp_devmgr_n_in_use(m, res), 0);
        ASSERT_OK(dp_devmgr_candidates(m, "pod2", "c", res, 1, &needed, &avail, NULL));
        free(avail);
}

TEST(unreserve_on_failure) {
        _cleanup_(dp_devmgr_freep) dp_devmgr *m = dp_devmgr_new();
        add_plugin(m, "example.com/gpu", 1, "gpu-");
        const char *ids[] = {"gpu-0", NULL};
        ASSERT_OK(dp_devmgr_reserve(m, "p", "c", "example.com/gpu", ids));
        ASSERT_TRUE(dp_devmgr_in_use(m, "example.com/gpu", "gpu-0"));
        dp_devmgr_unreserve(m, "p", "c", "example.com/gpu");
        ASSERT_FALSE(dp_devmgr_in_use(m, "example.com/gpu", "gpu-0"));
}

TEST(choose_prefers_plugin_answer) {
        const char *avail[] = {"a", "b", "c", "d", NULL};
        const char *pref[] = {"c", "zz", "c", "a"};
        const char **out;
        ASSERT_OK(dp_devmgr_choose(avail, 3, pref, 4, &out));
        ASSERT_STREQ(out[0], "c");
        ASSERT_STREQ(out[1], "a");
        ASSERT_STREQ(out[2], "b");
        ASSERT_TRUE(out[3] == NULL);
        free(out);
        ASSERT_EQ(dp_devmgr_choose(avail, 5, NULL, 0, &out), -EBUSY);
}

TEST(restore_and_multi_numa) {
        _cleanup_(dp_devmgr_freep) dp_devmgr *m = dp_devmgr_new();
        dp_nm_numa_id ids[] = {{0, (char *)"x"}, {1, (char *)"x"}, {-1, (char *)"y"}};
        dp_nm_alloc a = {(char *)"u", (char *)"c", (char *)"example.com/gpu", ids, 3, NULL, 0};
        ASSERT_OK(dp_devmgr_restore(m, &a));
        ASSERT_OK(dp_devmgr_add_known_resource(m, "example.com/gpu"));
        ASSERT_TRUE(dp_devmgr_in_use(m, "example.com/gpu", "x"));
        const char **u;
        ASSERT_OK(dp_nm_alloc_ids(dp_devmgr_alloc_at(m, 0), &u));
        ASSERT_STREQ(u[0], "x");
        ASSERT_STREQ(u[1], "y");
        ASSERT_TRUE(u[2] == NULL);
        free(u);
        /* known only from the checkpoint: no plugin yet */
        size_t needed;
        const char **avail;
        ASSERT_EQ(dp_devmgr_candidates(m, "u2", "c", "example.com/gpu", 1, &needed, &avail, NULL), -ENOENT);
        ASSERT_EQ(dp_devmgr_capacity(m, "example.com/gpu"), 0);
}
