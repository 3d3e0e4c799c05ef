/* SPDX-License-Identifier: Apache-2.0
 * The node's DRA state table and its checkpoint (node/dra-state.c): round
 * trip, every single changed byte refused, strict fields, caps. */
#include <stdio.h>

#include "base/fileio.h"
#include "harness.h"
#include "node/dra-state.h"

static dp_node_dra_state *sample(void) {
        dp_node_dra_state *s = dp_node_dra_state_new();
        ASSERT_TRUE(s != NULL);
        dp_node_dra_claim *c = NULL;
        ASSERT_OK(dp_node_dra_state_add(s, "uid-c0", "default", "c0", "gpu.example.com", &c));
        c->phase = DP_NODE_DRA_PREPARED;
        char *req[] = {(char *)"gpu"}, *cdi[] = {(char *)"k8s.gpu.example.com/gpu=uid-c0-gpu-0"};
        dp_node_dra_device dev = {(char *)"node-a", (char *)"gpu-0", req, 1, cdi, 1};
        ASSERT_OK(dp_node_dra_claim_set_devices(c, &dev, 1));
        ASSERT_EQ(dp_node_dra_claim_add_pod(c, "pod-uid-1", "default", "p1"), 1);
        ASSERT_EQ(dp_node_dra_claim_add_pod(c, "pod-uid-1", "default", "p1"), 0);
        ASSERT_OK(dp_node_dra_state_add(s, "uid-c1", "ns2", "c1", "net.example.com", &c));
        c->skipped = c->skip_unprepare = true;
        ASSERT_EQ(dp_node_dra_state_set_unknown(s, "other.example.com", "List: UNIMPLEMENTED"), 1);
        s->rebuild = true;
        return s;
}

static char *encode(const dp_node_dra_state *s, size_t *len) {
        dp_strbuf sb = DP_STRBUF_INIT;
        ASSERT_OK(dp_node_dra_state_encode(s, &sb));
        *len = sb.len;
        return dp_strbuf_steal(&sb);
}

TEST(round_trip) {
        _cleanup_(dp_node_dra_state_freep) dp_node_dra_state *s = sample();
        size_t len;
        _cleanup_free_ char *buf = encode(s, &len);
        ASSERT_CONTAINS(buf, "\"state\":\"prepared\"");
        ASSERT_CONTAINS(buf, "\"unknownDrivers\":[{\"driver\":\"other.example.com\"");
        _cleanup_(dp_node_dra_state_freep) dp_node_dra_state *t = NULL;
        dp_error e = DP_ERROR_INIT;
        ASSERT_OK(dp_node_dra_state_decode(buf, len, "state.json", &t, &e));
        ASSERT_EQ(t->n_claims, 2);
        const dp_node_dra_claim *c = dp_node_dra_state_find(t, "uid-c0", "gpu.example.com");
        ASSERT_TRUE(c != NULL);
        ASSERT_EQ(c->phase, DP_NODE_DRA_PREPARED);
        ASSERT_EQ(c->n_devs, 1);
        ASSERT_STREQ(c->devs[0].cdi[0], "k8s.gpu.example.com/gpu=uid-c0-gpu-0");
        ASSERT_TRUE(dp_node_dra_claim_has_pod(c, "pod-uid-1"));
        c = dp_node_dra_state_find(t, "uid-c1", "net.example.com");
        ASSERT_TRUE(c && c->skipped && c->skip_unprepare && c->phase == DP_NODE_DRA_PREPARING);
        ASSERT_STREQ(dp_node_dra_state_unknown_reason(t, "other.example.com"), "List: UNIMPLEMENTED");
        ASSERT_TRUE(t->rebuild);
        /* encoding what was decoded gives the same bytes */
        size_t len2;
        _cleanup_free_ char *buf2 = encode(t, &len2);
        ASSERT_EQ(len, len2);
        ASSERT_TRUE(memcmp(buf, buf2, len) == 0);
}

TEST(empty_state) {
        _cleanup_(dp_node_dra_state_freep) dp_node_dra_state *s = dp_node_dra_state_new();
        size_t len;
        _cleanup_free_ char *buf = encode(s, &len);
        _cleanup_(dp_node_dra_state_freep) dp_node_dra_state *t = NULL;
        ASSERT_OK(dp_node_dra_state_decode(buf, len, NULL, &t, NULL));
        ASSERT_EQ(t->n_claims, 0);
        ASSERT_EQ(t->n_unknown, 0);
}

/* One changed byte anywhere (the newline aside) is never accepted. */
TEST(every_changed_byte_refused) {
        _cleanup_(dp_node_dra_state_freep) dp_node_dra_state *s = sample();
        size_t len;
        _cleanup_free_ char *buf = encode(s, &len);
        for (size_t i = 0; i + 1 < len; i++) {
                static const unsigned char deltas[] = {1, 0x20, 0x80};
                for (size_t k = 0; k < ELEMENTSOF(deltas); k++) {
                        char saved = buf[i];
                        buf[i] = (char)(buf[i] ^ deltas[k]);
                        dp_node_dra_state *t = NULL;
                        dp_error e = DP_ERROR_INIT;
                        int r = dp_node_dra_state_decode(buf, len, "s", &t, &e);
                        /* Whitespace the parser skips is not content: the one
                         * change that may be accepted is one that keeps the
                         * document's meaning, and then it must decode to the
                         * same table. */
                        if (r >= 0) {
                                size_t l2;
                                _cleanup_free_ char *again = encode(t, &l2);
                                buf[i] = saved;
                                if (l2 != len || memcmp(again, buf, len) != 0)
                                        DP_FAIL("byte %zu ^ %#x accepted with another meaning", i, deltas[k]);
                                dp_node_dra_state_free(t);
                                continue;
                        }
                        buf[i] = saved;
                        ASSERT_TRUE(r == -EBADMSG || r == -E2BIG);
                        ASSERT_CONTAINS(e.msg, "s: ");
                }
        }
}

TEST(checksum_mismatch_message) {
        _cleanup_(dp_node_dra_state_freep) dp_node_dra_state *s = sample();
        size_t len;
        _cleanup_free_ char *buf = encode(s, &len);
        char *p = strstr(buf, "gpu-0\"");
        ASSERT_TRUE(p != NULL);
        p[4] = '7'; /* gpu-7: still well-formed */
        dp_node_dra_state *t = NULL;
        dp_error e = DP_ERROR_INIT;
        ASSERT_EQ(dp_node_dra_state_decode(buf, len, "st.json", &t, &e), -EBADMSG);
        ASSERT_CONTAINS(e.msg, "st.json: node DRA state corrupt: checksum mismatch");
}

static int decode_str(const char *text, dp_error *e) {
        dp_node_dra_state *t = NULL;
        int r = dp_node_dra_state_decode(text, strlen(text), "f", &t, e);
        dp_node_dra_state_free(t);
        return r;
}

TEST(strict_fields) {
        dp_error e = DP_ERROR_INIT;
        ASSERT_EQ(decode_str("", &e), -EBADMSG);
        ASSERT_EQ(decode_str("{\"checksum\":\"0\",\"data\":{\"version\":2,\"rebuild\":false,\"claims\":[],"
                             "\"unknownDrivers\":[]}}",
                             &e),
                  -EBADMSG);
        ASSERT_CONTAINS(e.msg, "data.version: unsupported version");
        ASSERT_EQ(decode_str("{\"checksum\":\"0\",\"data\":{\"version\":1,\"rebuild\":false,\"claims\":[],"
                             "\"unknownDrivers\":[],\"x\":1}}",
                             &e),
                  -EBADMSG);
        ASSERT_CONTAINS(e.msg, "data.x: unknown field");
        ASSERT_EQ(
                decode_str("{\"checksum\":\"0\",\"data\":{\"version\":1,\"rebuild\":false,\"claims\":[{\"uid\":\"\"}],"
                           "\"unknownDrivers\":[]}}",
                           &e),
                -EBADMSG);
        ASSERT_CONTAINS(e.msg, "data.claims[0].uid: empty");
        ASSERT_EQ(decode_str("{\"checksum\":\"0\",\"data\":{\"version\":1,\"rebuild\":false,\"claims\":[],"
                             "\"unknownDrivers\":[]}}\n---\n{}",
                             &e),
                  -EBADMSG);
}

TEST(table_operations) {
        _cleanup_(dp_node_dra_state_freep) dp_node_dra_state *s = sample();
        dp_node_dra_claim *c = NULL;
        ASSERT_EQ(dp_node_dra_state_add(s, "uid-c0", "default", "c0", "gpu.example.com", &c), -EEXIST);
        ASSERT_STREQ(c->name, "c0");
        /* the same uid through another driver is another entry */
        ASSERT_OK(dp_node_dra_state_add(s, "uid-c0", "default", "c0", "net.example.com", &c));
        ASSERT_EQ(s->n_claims, 3);
        c = dp_node_dra_state_find(s, "uid-c0", "gpu.example.com");
        ASSERT_TRUE(dp_node_dra_claim_remove_pod(c, "pod-uid-1"));
        ASSERT_FALSE(dp_node_dra_claim_remove_pod(c, "pod-uid-1"));
        dp_node_dra_state_remove(s, c);
        ASSERT_EQ(s->n_claims, 2);
        ASSERT_TRUE(dp_node_dra_state_find(s, "uid-c0", "gpu.example.com") == NULL);
        ASSERT_TRUE(dp_node_dra_state_find(s, "uid-c0", "net.example.com") != NULL);
        ASSERT_EQ(dp_node_dra_state_set_unknown(s, "other.example.com", "List: UNIMPLEMENTED"), 0);
        ASSERT_EQ(dp_node_dra_state_set_unknown(s, "other.example.com", "List: timeout"), 1);
        ASSERT_TRUE(dp_node_dra_state_clear_unknown(s, "other.example.com"));
        ASSERT_FALSE(dp_node_dra_state_clear_unknown(s, "other.example.com"));
        ASSERT_TRUE(dp_node_dra_state_unknown_reason(s, "other.example.com") == NULL);
}

TEST(caps) {
        _cleanup_(dp_node_dra_state_freep) dp_node_dra_state *s = dp_node_dra_state_new();
        dp_node_dra_claim *c = NULL;
        for (int i = 0; i < DP_NODE_DRA_STATE_MAX_CLAIMS; i++) {
                char uid[32];
                snprintf(uid, sizeof uid, "u%d", i);
                ASSERT_OK(dp_node_dra_state_add(s, uid, "ns", "n", "d", &c));
        }
        ASSERT_EQ(dp_node_dra_state_add(s, "one-more", "ns", "n", "d", &c), -E2BIG);
        for (int i = 0; i < DP_NODE_DRA_STATE_MAX_PODS; i++) {
                char uid[32];
                snprintf(uid, sizeof uid, "p%d", i);
                ASSERT_EQ(dp_node_dra_claim_add_pod(&s->claims[0], uid, "ns", "n"), 1);
        }
        ASSERT_EQ(dp_node_dra_claim_add_pod(&s->claims[0], "p-more", "ns", "n"), -E2BIG);
}

/* Drivers send any bytes: what the file cannot hold is refused before it is
 * stored, so the node always reads back what it wrote. */
TEST(only_storable_strings) {
        _cleanup_(dp_node_dra_state_freep) dp_node_dra_state *s = dp_node_dra_state_new();
        dp_node_dra_claim *c = NULL;
        static const char *const bad[] = {"u\xff", "a\x7f", "a\xc2\x80", "a\xef\xbf\xbe", "\xed\xa0\x80", "\xc0\x80",
                                          "\xe2\x82", "n\xc2\x85", "\xe2\x80\xa8", ""};
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ASSERT_EQ(dp_node_dra_state_add(s, bad[i], "ns", "n", "d", &c), -EINVAL);
        ASSERT_OK(dp_node_dra_state_add(s, "u", "ns\x01\t", "n\xc2\xa0\xe2\x82\xac\xf0\x9f\x98\x80", "d", &c));
        char *req[] = {(char *)"gpu"}, *cdi[] = {(char *)"x\x7f"};
        dp_node_dra_device dev = {(char *)"p", (char *)"d0", req, 1, cdi, 1};
        ASSERT_EQ(dp_node_dra_claim_set_devices(c, &dev, 1), -EINVAL);
        ASSERT_EQ(c->n_devs, 0);
        ASSERT_EQ(dp_node_dra_claim_add_pod(c, "p\x80", "ns", "n"), -EINVAL);
        ASSERT_EQ(dp_node_dra_state_set_unknown(s, "drv", "grpc said \xff\xfe here"), 1);
        ASSERT_STREQ(dp_node_dra_state_unknown_reason(s, "drv"), "grpc said ?? here");
        size_t len;
        _cleanup_free_ char *buf = encode(s, &len);
        _cleanup_(dp_node_dra_state_freep) dp_node_dra_state *t = NULL;
        dp_error e = DP_ERROR_INIT;
        ASSERT_OK(dp_node_dra_state_decode(buf, len, "s", &t, &e));
        ASSERT_STREQ(t->claims[0].ns, "ns\x01\t");
        ASSERT_STREQ(t->claims[0].name, "n\xc2\xa0\xe2\x82\xac\xf0\x9f\x98\x80");
}

/* A file written by the encoder before the state-file codec moved to
 * src/doc (tests/node/compat/dra-state-v1.json, as that version wrote it)
 * still loads, and is written again byte for byte. */
TEST(file_of_previous_version_loads) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        dp_error e = DP_ERROR_INIT;
        ASSERT_OK(dp_read_file("compat/dra-state-v1.json", 1 << 20, &buf, &len, &e));
        _cleanup_(dp_node_dra_state_freep) dp_node_dra_state *s = NULL;
        ASSERT_OK(dp_state_file_load(&dp_node_dra_state_file, "compat/dra-state-v1.json", (void **)&s, &e));
        ASSERT_EQ(s->n_claims, 2);
        ASSERT_TRUE(s->rebuild);
        const dp_node_dra_claim *c = dp_node_dra_state_find(s, "uid-1", "gpu.example.com");
        ASSERT_TRUE(c && c->phase == DP_NODE_DRA_PREPARED && c->n_pods == 2 && c->n_devs == 1);
        ASSERT_STREQ(c->devs[0].cdi[0], "k8s.gpu.example.com/gpu=uid-1-gpu-0");
        c = dp_node_dra_state_find(s, "uid-3", "net.example.com");
        ASSERT_TRUE(c && c->skipped && !c->skip_unprepare && c->phase == DP_NODE_DRA_PREPARING);
        ASSERT_STREQ(dp_node_dra_state_unknown_reason(s, "old.example.com"), "does not serve the List call");
        size_t len2;
        _cleanup_free_ char *again = encode(s, &len2);
        ASSERT_EQ(len2, len);
        ASSERT_TRUE(memcmp(again, buf, len) == 0);
}
