/* SPDX-License-Identifier: Apache-2.0
 * Tests for base/utf8.c: the one decoder that proto, CEL, the log and the
 * escapes share — well-formed sequences of each length, and every kind of
 * malformed one refused. */
#include "base/utf8.h"
#include "harness.h"

static size_t dec(const char *s, size_t n, uint32_t *cp) { return dp_utf8_decode(s, n, cp); }

TEST(well_formed) {
        uint32_t cp = 0;
        ASSERT_EQ(dec("A", 1, &cp), 1);
        ASSERT_EQ(cp, 'A');
        ASSERT_EQ(dec("\xc2\x80", 2, &cp), 2);
        ASSERT_EQ(cp, 0x80);
        ASSERT_EQ(dec("\xe2\x82\xac", 3, &cp), 3); /* EURO SIGN */
        ASSERT_EQ(cp, 0x20ac);
        ASSERT_EQ(dec("\xf4\x8f\xbf\xbf", 4, &cp), 4);
        ASSERT_EQ(cp, 0x10ffff);
        ASSERT_TRUE(dp_utf8_valid("gr\xc3\xbc\xc3\x9f dich \xf0\x9f\x98\x80", 16));
        ASSERT_TRUE(dp_utf8_valid("", 0));
}

TEST(malformed) {
        uint32_t cp = 7;
        ASSERT_EQ(dec("", 0, &cp), 0);
        ASSERT_EQ(dec("\x80", 1, &cp), 0);             /* stray continuation */
        ASSERT_EQ(dec("\xc0\xaf", 2, &cp), 0);         /* overlong '/' */
        ASSERT_EQ(dec("\xe0\x80\xaf", 3, &cp), 0);     /* overlong, 3 bytes */
        ASSERT_EQ(dec("\xf0\x80\x80\xaf", 4, &cp), 0); /* overlong, 4 bytes */
        ASSERT_EQ(dec("\xed\xa0\x80", 3, &cp), 0);     /* U+D800, a surrogate */
        ASSERT_EQ(dec("\xf4\x90\x80\x80", 4, &cp), 0); /* past U+10FFFF */
        ASSERT_EQ(dec("\xf5\x80\x80\x80", 4, &cp), 0);
        ASSERT_EQ(dec("\xe2\x82", 2, &cp), 0); /* cut short */
        ASSERT_EQ(dec("\xe2\x28\xac", 3, &cp), 0);
        ASSERT_EQ(cp, 7); /* untouched */
        ASSERT_FALSE(dp_utf8_valid("ok\xff", 3));
        ASSERT_FALSE(dp_utf8_valid("ok\xe2\x82", 4));
}

TEST(encode_round_trip) {
        const uint32_t cps[] = {0, 0x7f, 0x80, 0x7ff, 0x800, 0xfffd, 0x10000, 0x10ffff};
        for (size_t i = 0; i < sizeof cps / sizeof cps[0]; i++) {
                char b[4];
                size_t n = dp_utf8_encode(cps[i], b);
                uint32_t back = 0;
                ASSERT_EQ(dp_utf8_decode(b, n, &back), n);
                ASSERT_EQ(back, cps[i]);
        }
}
