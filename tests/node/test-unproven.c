/* SPDX-License-Identifier: Apache-2.0
 * Unproven holdings (issue 21, F4): while a pod whose devices no record
 * names is marked, every device of its resource that no entry holds goes to
 * nobody; the marks and the withheld devices travel in the checkpoint (under
 * DP_NODE_UNPROVEN_CONTAINER) and in the status file, and go with the pod. */
#include "harness.h"
#include "node/ckpt.h"

#define R "example.com/gpu"

static dp_devmgr *ledger(void) {
        dp_devmgr *m = dp_devmgr_new();
        ASSERT_TRUE(m);
        ASSERT_OK(dp_devmgr_register(m, R, "p.sock", NULL));
        dp_nm_device devs[4] = {{(char *)"a", true, NULL, 0},
                                {(char *)"b", true, NULL, 0},
                                {(char *)"c", true, NULL, 0},
                                {(char *)"d", true, NULL, 0}};
        ASSERT_OK(dp_devmgr_set_devices(m, R, devs, 4, NULL));
        const char *ids[] = {"a", NULL};
        ASSERT_OK(dp_devmgr_commit(m, "uid-1", "main", R, ids, NULL, 0));
        return m;
}

static size_t count(const char **v) {
        size_t n = 0;
        while (v[n])
                n++;
        return n;
}

TEST(withheld_until_the_pod_goes) {
        _cleanup_(dp_devmgr_freep) dp_devmgr *m = ledger();
        ASSERT_OK(dp_devmgr_mark_unproven(m, "uid-2", R, NULL, 0));
        ASSERT_TRUE(dp_devmgr_is_withheld(m, R));
        const char **w = NULL;
        ASSERT_OK(dp_devmgr_withheld_ids(m, R, &w));
        ASSERT_EQ(count(w), 3); /* b, c, d: a is held by a proven entry */
        free(w);
        size_t needed = 0;
        const char **avail = NULL;
        dp_error e = DP_ERROR_INIT;
        ASSERT_EQ(dp_devmgr_candidates(m, "uid-3", "main", R, 1, &needed, &avail, &e), -EBUSY);
        ASSERT_CONTAINS(e.msg, "cannot prove which devices pod uid-2 may hold");
        /* the unproven pod itself gets nothing either */
        ASSERT_EQ(dp_devmgr_candidates(m, "uid-2", "main", R, 1, &needed, &avail, &e), -EBUSY);
        /* a container that holds what it asks is not refused (sticky) */
        ASSERT_OK(dp_devmgr_candidates(m, "uid-1", "main", R, 1, &needed, &avail, &e));
        ASSERT_EQ(needed, 0);
        free(avail);
        dp_devmgr_release_pod(m, "uid-2");
        ASSERT_FALSE(dp_devmgr_is_withheld(m, R));
        ASSERT_OK(dp_devmgr_candidates(m, "uid-3", "main", R, 3, &needed, &avail, &e));
        ASSERT_EQ(needed, 3);
        free(avail);
}

TEST(checkpoint_round_trip) {
        _cleanup_(dp_devmgr_freep) dp_devmgr *m = ledger();
        ASSERT_OK(dp_devmgr_mark_unproven(m, "uid-2", R, NULL, 0));
        _cleanup_strbuf_ dp_strbuf out = DP_STRBUF_INIT;
        ASSERT_OK(dp_node_checkpoint_encode(m, &out));
        ASSERT_CONTAINS(out.buf, "\"ContainerName\":\"" DP_NODE_UNPROVEN_CONTAINER "\"");
        ASSERT_CONTAINS(out.buf, "[\"b\",\"c\",\"d\"]");
        /* read back before the plugin lists its devices again: the devices the
         * mark withheld are still withheld (and written again) */
        _cleanup_(dp_devmgr_freep) dp_devmgr *m2 = dp_devmgr_new();
        ASSERT_OK(dp_node_checkpoint_load(m2, out.buf, out.len, NULL));
        ASSERT_EQ(dp_devmgr_n_allocs(m2), 1);
        ASSERT_EQ(dp_devmgr_n_unproven(m2), 1);
        ASSERT_STREQ(dp_devmgr_unproven_at(m2, 0)->pod_uid, "uid-2");
        const char **w = NULL;
        ASSERT_OK(dp_devmgr_withheld_ids(m2, R, &w));
        ASSERT_EQ(count(w), 3);
        free(w);
        _cleanup_strbuf_ dp_strbuf again = DP_STRBUF_INIT;
        ASSERT_OK(dp_node_checkpoint_encode(m2, &again));
        ASSERT_CONTAINS(again.buf, "[\"b\",\"c\",\"d\"]");
}

TEST(status_salvage_keeps_marks) {
        static const char status[] =
                "{\"pods\": [{\"uid\": \"uid-1\", \"containers\": [{\"name\": \"main\", \"devices\": "
                "[{\"resource\": \"" R "\", \"ids\": [\"a\"]}]}]}],"
                " \"unproven\": [{\"uid\": \"uid-2\", \"namespace\": \"default\", \"name\": \"p\", \"resource\": \"" R
                "\"}]}";
        _cleanup_(dp_devmgr_freep) dp_devmgr *m = dp_devmgr_new();
        size_t n = 0;
        ASSERT_OK(dp_node_status_salvage(m, status, strlen(status), &n, NULL));
        ASSERT_EQ(n, 2);
        ASSERT_EQ(dp_devmgr_n_allocs(m), 1);
        ASSERT_TRUE(dp_devmgr_is_withheld(m, R));
}

TEST(release_one_entry) {
        _cleanup_(dp_devmgr_freep) dp_devmgr *m = ledger();
        ASSERT_EQ(dp_devmgr_release(m, "uid-1", "main", R), 1);
        ASSERT_EQ(dp_devmgr_release(m, "uid-1", "main", R), 0);
        ASSERT_EQ(dp_devmgr_n_allocs(m), 0);
        ASSERT_FALSE(dp_devmgr_in_use(m, R, "a"));
}

TEST(unhealthy_not_named_and_known) {
        _cleanup_(dp_devmgr_freep) dp_devmgr *m = dp_devmgr_new();
        /* a mark with no device list and no remembered ids: not known yet */
        ASSERT_OK(dp_devmgr_mark_unproven(m, "uid-2", R, NULL, 0));
        ASSERT_FALSE(dp_devmgr_withheld_known(m));
        const char *old[] = {"c"};
        ASSERT_OK(dp_devmgr_mark_unproven(m, "uid-2", R, old, 1));
        ASSERT_TRUE(dp_devmgr_withheld_known(m));
        /* the plugin lists c unhealthy (a DRA claim holds it): c is not named */
        ASSERT_OK(dp_devmgr_register(m, R, "p.sock", NULL));
        dp_nm_device devs[3] = {
                {(char *)"a", true, NULL, 0}, {(char *)"b", true, NULL, 0}, {(char *)"c", false, NULL, 0}};
        ASSERT_OK(dp_devmgr_set_devices(m, R, devs, 3, NULL));
        const char **w = NULL;
        ASSERT_OK(dp_devmgr_withheld_ids(m, R, &w));
        ASSERT_EQ(count(w), 2);
        ASSERT_STREQ(w[0], "a");
        ASSERT_STREQ(w[1], "b");
        free(w);
}
