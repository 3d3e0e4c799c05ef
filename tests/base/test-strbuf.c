/* SPDX-License-Identifier: Apache-2.0 */
#include "base/strbuf.h"
#include "harness.h"

/* The inline appends and the out-of-line growth write the same bytes, and
 * the string stays NUL-terminated at every size the buffer passes. */
TEST(strbuf_appends_across_growth) {
        dp_strbuf sb = DP_STRBUF_INIT;
        char expect[5000];
        size_t n = 0;
        for (int i = 0; n + 8 < sizeof expect; i++) {
                switch (i % 4) {
                case 0:
                        dp_strbuf_putc(&sb, 'c');
                        expect[n++] = 'c';
                        break;
                case 1:
                        dp_strbuf_append(&sb, "ab", 2);
                        memcpy(expect + n, "ab", 2);
                        n += 2;
                        break;
                case 2:
                        dp_strbuf_puts(&sb, "xyz");
                        memcpy(expect + n, "xyz", 3);
                        n += 3;
                        break;
                default: {
                        char *p = dp_strbuf_room(&sb, 7);
                        ASSERT_TRUE(p);
                        memcpy(p, "0123", 4);
                        dp_strbuf_wrote(&sb, 4);
                        memcpy(expect + n, "0123", 4);
                        n += 4;
                }
                }
                ASSERT_EQ(sb.len, n);
                ASSERT_TRUE(sb.len < sb.cap);
                ASSERT_EQ(sb.buf[sb.len], 0);
                ASSERT_TRUE(memcmp(sb.buf, expect, n) == 0);
        }
        dp_strbuf_append(&sb, NULL, 0);
        ASSERT_EQ(sb.len, n);
        dp_strbuf_done(&sb);
}

/* After a failed allocation every append is a no-op, even with room left. */
TEST(strbuf_failure_is_sticky) {
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_strbuf_puts(&sb, "abc");
        sb.oom = true; /* as reserve() leaves it */
        dp_strbuf_putc(&sb, 'd');
        dp_strbuf_append(&sb, "ef", 2);
        dp_strbuf_puts(&sb, "gh");
        ASSERT_TRUE(dp_strbuf_room(&sb, 1) == NULL);
        ASSERT_EQ(sb.len, 3);
        ASSERT_STREQ(sb.buf, "abc");
        ASSERT_TRUE(dp_strbuf_failed(&sb));
        ASSERT_TRUE(dp_strbuf_steal(&sb) == NULL);
        /* too large a room fails too */
        ASSERT_TRUE(dp_strbuf_room(&sb, SIZE_MAX) == NULL);
        ASSERT_TRUE(dp_strbuf_failed(&sb));
        dp_strbuf_done(&sb);
}

TEST(remove_at_keeps_the_order) {
        int v[] = {1, 2, 3, 4};
        size_t n = 4;
        DP_REMOVE_AT(v, n, 1);
        ASSERT_EQ(n, 3);
        ASSERT_EQ(v[0], 1);
        ASSERT_EQ(v[1], 3);
        ASSERT_EQ(v[2], 4);
        DP_REMOVE_AT(v, n, 2); /* the last one */
        ASSERT_EQ(n, 2);
        ASSERT_EQ(v[1], 3);
}
