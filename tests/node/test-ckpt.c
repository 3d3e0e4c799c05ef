/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>

#include "base/fileio.h"
#include "devices/checkpoint.h"
#include "harness.h"
#include "node/ckpt.h"

/* wire-protocols.md §5.5 vector B: a real kubelet checkpoint */
static const char vector_b[] =
        "{\"Data\":{\"PodDeviceEntries\":[{\"PodUID\":\"bf52b2cd-b611-4e79-86b1-280b283185c3\",\"ContainerName\":\"check\","
        "\"ResourceName\":\"nvidia.com/gpu\",\"DeviceIDs\":{\"-1\":[\"tegra\"]},\"AllocResp\":\"Ch8KFk5WSURJQV9WSVNJQkxFX0RFVklDRVMSBXRlZ3Jh\"}],"
        "\"RegisteredDevices\":{\"nvidia.com/gpu\":[\"tegra\"]}},\"Checksum\":3660592824}";

TEST(load_kubelet_vector) {
        _cleanup_(dp_devmgr_freep) dp_devmgr *m = dp_devmgr_new();
        ASSERT_OK(dp_node_checkpoint_load(m, vector_b, strlen(vector_b), NULL));
        ASSERT_EQ(dp_devmgr_n_allocs(m), 1);
        const dp_nm_alloc *a = dp_devmgr_alloc(m, "bf52b2cd-b611-4e79-86b1-280b283185c3", "check", "nvidia.com/gpu");
        ASSERT_TRUE(a != NULL);
        ASSERT_EQ(a->n_ids, 1);
        ASSERT_EQ(a->ids[0].numa, -1);
        ASSERT_STREQ(a->ids[0].id, "tegra");
        ASSERT_EQ(a->resp_len, 33);
        ASSERT_TRUE(dp_devmgr_resource(m, "nvidia.com/gpu") != NULL);
        ASSERT_TRUE(dp_devmgr_in_use(m, "nvidia.com/gpu", "tegra"));
}

TEST(corrupt_refused) {
        char bad[sizeof vector_b];
        memcpy(bad, vector_b, sizeof bad);
        char *p = strstr(bad, "tegra");
        p[0] = 'T'; /* content changed, checksum not */
        _cleanup_(dp_devmgr_freep) dp_devmgr *m = dp_devmgr_new();
        dp_error e = DP_ERROR_INIT;
        ASSERT_EQ(dp_node_checkpoint_load(m, bad, strlen(bad), &e), -EBADMSG);
        ASSERT_CONTAINS(e.msg, "checksum");
        ASSERT_EQ(dp_node_checkpoint_load(m, "{\"Data\":", 8, &e), -EINVAL);
}

TEST(round_trip_numa_groups) {
        _cleanup_(dp_devmgr_freep) dp_devmgr *m = dp_devmgr_new();
        ASSERT_OK(dp_devmgr_register(m, "example.com/gpu", "p.sock", NULL));
        int64_t n0 = 0, n1 = 1, both[2] = {0, 1};
        dp_nm_device devs[4] = {{(char *)"a", true, &n1, 1}, {(char *)"b", true, &n0, 1},
                                {(char *)"c", false, both, 2}, {(char *)"d", true, NULL, 0}};
        ASSERT_OK(dp_devmgr_set_devices(m, "example.com/gpu", devs, 4, NULL));
        const char *ids[] = {"a", "b", "c", "d", NULL};
        ASSERT_OK(dp_devmgr_commit(m, "uid-1", "main", "example.com/gpu", ids, (const uint8_t *)"\x0a\x00", 2));
        _cleanup_strbuf_ dp_strbuf out = DP_STRBUF_INIT;
        ASSERT_OK(dp_node_checkpoint_encode(m, &out));
        /* Go's layout: NUMA keys sorted as strings, -1 first; healthy ids registered */
        ASSERT_CONTAINS(out.buf, "\"DeviceIDs\":{\"-1\":[\"d\"],\"0\":[\"b\",\"c\"],\"1\":[\"a\",\"c\"]}");
        ASSERT_CONTAINS(out.buf, "\"RegisteredDevices\":{\"example.com/gpu\":[\"a\",\"b\",\"d\"]}");
        _cleanup_(dp_devmgr_freep) dp_devmgr *m2 = dp_devmgr_new();
        ASSERT_OK(dp_node_checkpoint_load(m2, out.buf, out.len, NULL));
        const char **u;
        ASSERT_OK(dp_nm_alloc_ids(dp_devmgr_alloc(m2, "uid-1", "main", "example.com/gpu"), &u));
        size_t n = 0;
        while (u[n]) n++;
        ASSERT_EQ(n, 4);
        free(u);
        ASSERT_EQ(dp_devmgr_alloc(m2, "uid-1", "main", "example.com/gpu")->resp_len, 2);
}

TEST(write_then_read_file) {
        char dir[] = "/tmp/dp-test-ckpt.XXXXXX";
        ASSERT_TRUE(mkdtemp(dir) != NULL);
        ASSERT_OK(dp_write_file_atomic(dir, "f", "hello", 5, 0644, DP_WRITE_DURABLE, NULL));
        ASSERT_OK(dp_write_file_atomic(dir, "f", "bye", 3, 0644, 0, NULL));
        char path[64], *buf = NULL;
        size_t len = 0;
        snprintf(path, sizeof path, "%s/f", dir);
        ASSERT_OK(dp_read_file(path, 100, &buf, &len, NULL));
        ASSERT_EQ(len, 3);
        ASSERT_TRUE(memcmp(buf, "bye", 3) == 0);
        free(buf);
        ASSERT_EQ(dp_read_file(path, 2, &buf, &len, NULL), -E2BIG);
        unlink(path);
        rmdir(dir);
}
