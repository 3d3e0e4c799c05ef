/* SPDX-License-Identifier: Apache-2.0
 * doc/state-file.c: the checksummed envelope and the manager every durable
 * file goes through, on a toy type (the real ones have their own tests:
 * tests/node/test-dra-state.c, tests/dra/test-files.c, tests/devices). */
#include <stdio.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "doc/state-file.h"
#include "harness.h"

typedef struct toy {
        char *name;
        bool on;
} toy;

static dp_doc_node *toy_build(dp_doc_builder *b, const void *obj) {
        const toy *t = obj;
        dp_doc_node *m = dp_doc_b_map(b);
        dp_doc_b_put_str(b, m, "name", t->name);
        dp_doc_b_put_bool(b, m, "on", t->on);
        return m;
}

static const char *const toy_keys[] = {"name", "on", NULL};

static int toy_decode(const dp_doc_decoder *d, const dp_doc_node *data, void *obj) {
        toy *t = obj;
        int r = dp_doc_dec_only_keys(d, data, "data", toy_keys);
        if (r >= 0) r = dp_doc_dec_str(d, data, "name", DP_DOC_DEC_NONEMPTY, "data", &t->name);
        if (r >= 0) r = dp_doc_dec_bool(d, data, "on", "data", &t->on);
        return r;
}

static const dp_state_envelope env = {"toy state", toy_build, toy_decode};

static int toy_marshal(const void *obj, dp_strbuf *out) { return dp_state_envelope_marshal(&env, obj, out); }

static int toy_unmarshal(const char *buf, size_t len, const char *source, void **ret, dp_error *err) {
        toy *t = calloc(1, sizeof *t);
        if (!t) return -ENOMEM;
        int r = dp_state_envelope_unmarshal(&env, buf, len, source, t, err);
        if (r < 0) {
                free(t->name);
                free(t);
                return r;
        }
        *ret = t;
        return 0;
}

static const dp_state_file_type toy_file = {"toy state", 200, toy_marshal, toy_unmarshal};

static void toy_free(toy *t) {
        if (t) free(t->name);
        free(t);
}

TEST(envelope_bytes) {
        toy t = {(char *)"a", true};
        _cleanup_strbuf_ dp_strbuf sb = DP_STRBUF_INIT;
        dp_error e = DP_ERROR_INIT;
        ASSERT_OK(dp_state_file_marshal(&toy_file, &t, &sb, &e));
        /* FNV-1a-64 of {"name":"a","on":true} */
        ASSERT_STREQ(sb.buf, "{\"checksum\":\"d5a2aac335a22a62\",\"data\":{\"name\":\"a\",\"on\":true}}\n");
}

TEST(every_changed_byte_refused) {
        toy t = {(char *)"abc", false};
        _cleanup_strbuf_ dp_strbuf sb = DP_STRBUF_INIT;
        ASSERT_OK(dp_state_file_marshal(&toy_file, &t, &sb, NULL));
        for (size_t i = 0; i + 1 < sb.len; i++)
                for (int bit = 0; bit < 8; bit += 3) {
                        _cleanup_free_ char *c = dp_strndup(sb.buf, sb.len);
                        c[i] ^= (char)(1 << bit);
                        toy *u = NULL;
                        dp_error e = DP_ERROR_INIT;
                        int r = dp_state_file_unmarshal(&toy_file, c, sb.len, "t.json", (void **)&u, &e);
                        if (r >= 0) toy_free(u);
                        if (r >= 0) DP_FAIL("byte %zu bit %d accepted: %s", i, bit, c);
                        ASSERT_CONTAINS(e.msg, "t.json: ");
                }
}

TEST(messages) {
        dp_error e = DP_ERROR_INIT;
        toy *u = NULL;
        const char *bad = "{\"checksum\":\"0000000000000000\",\"data\":{\"name\":\"a\",\"on\":true}}";
        ASSERT_EQ(dp_state_file_unmarshal(&toy_file, bad, strlen(bad), "t.json", (void **)&u, &e), -EBADMSG);
        ASSERT_STREQ(e.msg, "t.json: toy state corrupt: checksum mismatch: file says 0000000000000000, content "
                            "hashes to d5a2aac335a22a62");
        const char *extra = "{\"checksum\":\"x\",\"data\":{},\"more\":1}";
        ASSERT_EQ(dp_state_file_unmarshal(&toy_file, extra, strlen(extra), "t.json", (void **)&u, &e), -EBADMSG);
        ASSERT_STREQ(e.msg, "t.json: toy state corrupt: .more: unknown field (line 1)");
        const char *two = "{}\n---\n{}\n";
        ASSERT_EQ(dp_state_file_unmarshal(&toy_file, two, strlen(two), "t.json", (void **)&u, &e), -EBADMSG);
        ASSERT_CONTAINS(e.msg, "expected one JSON document");
        char big[256];
        memset(big, ' ', sizeof big);
        ASSERT_EQ(dp_state_file_unmarshal(&toy_file, big, sizeof big, "t.json", (void **)&u, &e), -E2BIG);
        ASSERT_STREQ(e.msg, "t.json: larger than 200 bytes");
}

TEST(save_and_load) {
        char dir[] = "/tmp/dp-state-file-XXXXXX";
        ASSERT_TRUE(mkdtemp(dir) != NULL);
        char path[64];
        snprintf(path, sizeof path, "%s/toy.json", dir);
        dp_error e = DP_ERROR_INIT;
        toy *u = NULL;
        ASSERT_EQ(dp_state_file_load(&toy_file, path, (void **)&u, &e), -ENOENT);
        toy t = {(char *)"saved", true};
        ASSERT_OK(dp_state_file_save(&toy_file, &t, dir, "toy.json", 0600, &e));
        struct stat st;
        ASSERT_OK(stat(path, &st));
        ASSERT_EQ(st.st_mode & 0777, 0600);
        ASSERT_OK(dp_state_file_load(&toy_file, path, (void **)&u, &e));
        ASSERT_STREQ(u->name, "saved");
        ASSERT_TRUE(u->on);
        toy_free(u);
        /* never written larger than the next start could read: the old file stays */
        char name[300];
        memset(name, 'n', sizeof name - 1);
        name[sizeof name - 1] = 0;
        toy big = {name, false};
        ASSERT_EQ(dp_state_file_save(&toy_file, &big, dir, "toy.json", 0600, &e), -E2BIG);
        ASSERT_CONTAINS(e.msg, "toy.json: the toy state would be ");
        ASSERT_CONTAINS(e.msg, "bytes, over 200");
        ASSERT_OK(dp_state_file_load(&toy_file, path, (void **)&u, &e));
        ASSERT_STREQ(u->name, "saved");
        toy_free(u);
        unlink(path);
        rmdir(dir);
}
