/* SPDX-License-Identifier: Apache-2.0
 * Tests for src/devices/checkpoint.c against the two real kubelet files of
 * wire-protocols §5.5 (byte-exact JSON, spew text, checksum), plus
 * corruption, null/empty rules and key ordering. */
#include "harness.h"

#include "devices/checkpoint.h"

static const char vector_a[] = "{\"Data\":{\"PodDeviceEntries\":null,\"RegisteredDevices\":{\"nvidia.com/gpu\":"
                               "[\"GPU-0650a168-e770-3ea8-8ac3-8a1d419763e0\"]}},\"Checksum\":3952659280}";
static const char spew_a[] =
        "(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)<nil> "
        "RegisteredDevices:(map[string][]string)map[nvidia.com/gpu:[GPU-0650a168-e770-3ea8-8ac3-8a1d419763e0]]}";

static const char vector_b[] =
        "{\"Data\":{\"PodDeviceEntries\":[{\"PodUID\":\"bf52b2cd-b611-4e79-86b1-280b283185c3\",\"ContainerName\":"
        "\"check\",\"ResourceName\":\"nvidia.com/gpu\",\"DeviceIDs\":{\"-1\":[\"tegra\"]},\"AllocResp\":"
        "\"Ch8KFk5WSURJQV9WSVNJQkxFX0RFVklDRVMSBXRlZ3Jh\"}],\"RegisteredDevices\":{\"nvidia.com/gpu\":[\"tegra\"]}},"
        "\"Checksum\":3660592824}";
static const char spew_b[] =
        "(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)[{PodUID:(string)bf52b2cd-b611-"
        "4e79-86b1-280b283185c3 ContainerName:(string)check ResourceName:(string)nvidia.com/gpu "
        "DeviceIDs:(checkpoint.DevicesPerNUMA)map[-1:[tegra]] AllocResp:([]uint8)[10 31 10 22 78 86 73 68 73 65 95 86 "
        "73 83 73 66 76 69 95 68 69 86 73 67 69 83 18 5 116 101 103 114 97]}] "
        "RegisteredDevices:(map[string][]string)map[nvidia.com/gpu:[tegra]]}";

static void roundtrip(const char *json, const char *spew, uint32_t sum) {
        dp_checkpoint *c = NULL;
        dp_error err = DP_ERROR_INIT;
        if (dp_checkpoint_decode(json, strlen(json), &c, &err) < 0) DP_FAIL("%s", err.msg);
        ASSERT_EQ(c->checksum, sum);
        dp_strbuf sb = DP_STRBUF_INIT;
        ASSERT_OK(dp_checkpoint_spew(c, &sb));
        ASSERT_STREQ(dp_strbuf_str(&sb), spew);
        ASSERT_EQ(dp_fnv1a32(sb.buf, sb.len), sum);
        dp_strbuf_done(&sb);
        ASSERT_OK(dp_checkpoint_encode(c, &sb));
        ASSERT_STREQ(dp_strbuf_str(&sb), json);
        dp_strbuf_done(&sb);
        dp_checkpoint_free(c);
}

TEST(vector_a) { roundtrip(vector_a, spew_a, 3952659280u); }
TEST(vector_b) { roundtrip(vector_b, spew_b, 3660592824u); }

TEST(build_vector_b) {
        dp_checkpoint *c = dp_checkpoint_new();
        const uint8_t resp[] = {10, 31, 10, 22, 78, 86, 73, 68, 73, 65, 95, 86,  73,  83,  73,  66, 76,
                                69, 95, 68, 69, 86, 73, 67, 69, 83, 18, 5,  116, 101, 103, 114, 97};
        const char *ids[] = {"tegra"};
        const char *const *per[] = {ids};
        int64_t numa[] = {-1};
        size_t n[] = {1};
        ASSERT_OK(dp_checkpoint_add_entry(c, "bf52b2cd-b611-4e79-86b1-280b283185c3", "check", "nvidia.com/gpu", numa,
                                          per, n, 1, resp, sizeof resp));
        ASSERT_OK(dp_checkpoint_set_registered(c, "nvidia.com/gpu", ids, 1));
        dp_strbuf sb = DP_STRBUF_INIT;
        ASSERT_OK(dp_checkpoint_encode(c, &sb));
        ASSERT_STREQ(dp_strbuf_str(&sb), vector_b);
        ASSERT_EQ(c->checksum, 3660592824u);
        dp_strbuf_done(&sb);
        dp_checkpoint_free(c);

        /* An empty checkpoint as the kubelet writes it. */
        c = dp_checkpoint_new();
        ASSERT_OK(dp_checkpoint_encode(c, &sb));
        dp_checkpoint *back = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_checkpoint_decode(sb.buf, sb.len, &back, &err));
        ASSERT_TRUE(back->entries_null);
        ASSERT_FALSE(back->registered_null);
        dp_checkpoint_free(back);
        dp_strbuf_done(&sb);
        dp_checkpoint_free(c);
}

TEST(corrupted) {
        dp_checkpoint *c = NULL;
        dp_error err = DP_ERROR_INIT;
        char buf[sizeof vector_b];
        memcpy(buf, vector_b, sizeof buf);
        char *t = strstr(buf, "tegra");
        t[0] = 'T'; /* one device id changed, checksum kept */
        ASSERT_EQ(dp_checkpoint_decode(buf, strlen(buf), &c, &err), -EBADMSG);
        ASSERT_STREQ(err.msg,
                     "corrupt checkpoint: checksum mismatch: file says 3660592824, content hashes to 2344001496");
        ASSERT_TRUE(c == NULL);
        /* What it held can still be reported, never trusted. */
        ASSERT_OK(dp_checkpoint_decode_unverified(buf, strlen(buf), &c, &err));
        ASSERT_EQ(c->checksum, 3660592824u);
        ASSERT_STREQ(c->entries[0].device_ids[0].ids.ids[0], "Tegra");
        c = dp_checkpoint_free(c);
        ASSERT_EQ(dp_checkpoint_decode(vector_b, 40, &c, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "corrupt checkpoint");
        const char *bad64 = "{\"Data\":{\"PodDeviceEntries\":[{\"AllocResp\":\"abc\"}]},\"Checksum\":1}";
        ASSERT_EQ(dp_checkpoint_decode(bad64, strlen(bad64), &c, &err), -EINVAL);
        ASSERT_STREQ(err.msg, "checkpoint: Data.PodDeviceEntries[0].AllocResp: not valid standard base64");
        const char *badnuma = "{\"Data\":{\"PodDeviceEntries\":[{\"DeviceIDs\":{\"x\":[]}}]},\"Checksum\":1}";
        ASSERT_EQ(dp_checkpoint_decode(badnuma, strlen(badnuma), &c, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "Data.PodDeviceEntries[0].DeviceIDs[\"x\"]: NUMA node keys must be 64-bit integers");
        const char *legacy = "{\"Data\":{\"PodDeviceEntries\":[{\"DeviceIDs\":[\"a\"]}]},\"Checksum\":1}";
        ASSERT_EQ(dp_checkpoint_decode(legacy, strlen(legacy), &c, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "list form");
        const char *neg = "{\"Data\":{},\"Checksum\":-1}";
        ASSERT_EQ(dp_checkpoint_decode(neg, strlen(neg), &c, &err), -EINVAL);
}

TEST(missing_keys_and_boot_id) {
        /* Missing Data keys read as empty (not null): "[]" and "map[]". */
        dp_checkpoint *c = dp_checkpoint_new();
        c->entries_null = false;
        dp_strbuf sb = DP_STRBUF_INIT;
        ASSERT_OK(dp_checkpoint_spew(c, &sb));
        ASSERT_STREQ(dp_strbuf_str(&sb),
                     "(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)[] "
                     "RegisteredDevices:(map[string][]string)map[]}");
        uint32_t sum = dp_fnv1a32(sb.buf, sb.len);
        dp_strbuf_done(&sb);
        char json[128];
        snprintf(json, sizeof json, "{\"Data\":{},\"Checksum\":%u,\"BootID\":\"b-1\",\"Future\":[1]}", sum);
        dp_checkpoint *d = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_checkpoint_decode(json, strlen(json), &d, &err));
        ASSERT_STREQ(d->boot_id, "b-1");
        ASSERT_OK(dp_checkpoint_encode(d, &sb));
        snprintf(json, sizeof json,
                 "{\"Data\":{\"PodDeviceEntries\":[],\"RegisteredDevices\":{}},\"Checksum\":%u,\"BootID\":\"b-1\"}",
                 sum);
        ASSERT_STREQ(dp_strbuf_str(&sb), json);
        dp_strbuf_done(&sb);
        dp_checkpoint_free(d);
        dp_checkpoint_free(c);
}

TEST(numa_order_and_escaping) {
        dp_checkpoint *c = dp_checkpoint_new();
        const char *a[] = {"a"}, *b[] = {"b<&>"}, *x[] = {"x"}, *y[] = {"y"};
        const char *const *per[] = {x, a, b, y};
        int64_t numa[] = {10, -1, 2, 0};
        size_t n[] = {1, 1, 1, 1};
        ASSERT_OK(dp_checkpoint_add_entry(c, "p\"1", "c\n", "r/x", numa, per, n, 4, NULL, 0));
        ASSERT_OK(dp_checkpoint_set_registered(c, "z.io/b", NULL, 0));
        ASSERT_OK(dp_checkpoint_set_registered(c, "a.io/b", a, 1));
        dp_strbuf sb = DP_STRBUF_INIT;
        ASSERT_OK(dp_checkpoint_encode(c, &sb));
        ASSERT_CONTAINS(dp_strbuf_str(&sb),
                        "{\"PodUID\":\"p\\\"1\",\"ContainerName\":\"c\\n\",\"ResourceName\":\"r/x\",\"DeviceIDs\":"
                        "{\"-1\":[\"a\"],\"0\":[\"y\"],\"10\":[\"x\"],\"2\":[\"b\\u003c\\u0026\\u003e\"]},"
                        "\"AllocResp\":null}");
        ASSERT_CONTAINS(dp_strbuf_str(&sb), "\"RegisteredDevices\":{\"a.io/b\":[\"a\"],\"z.io/b\":[]}");
        dp_strbuf spew = DP_STRBUF_INIT;
        ASSERT_OK(dp_checkpoint_spew(c, &spew));
        ASSERT_CONTAINS(dp_strbuf_str(&spew), "map[-1:[a] 0:[y] 2:[b<&>] 10:[x]] AllocResp:([]uint8)<nil>}");
        dp_checkpoint *back = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_checkpoint_decode(sb.buf, sb.len, &back, &err));
        dp_strbuf again = DP_STRBUF_INIT;
        ASSERT_OK(dp_checkpoint_encode(back, &again));
        ASSERT_STREQ(dp_strbuf_str(&again), dp_strbuf_str(&sb));
        dp_strbuf_done(&again);
        dp_strbuf_done(&spew);
        dp_strbuf_done(&sb);
        dp_checkpoint_free(back);
        dp_checkpoint_free(c);
}
