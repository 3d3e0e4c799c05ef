/* SPDX-License-Identifier: Apache-2.0
 * base/escape.c: controls, bidi controls and bytes that are not UTF-8 become
 * visible escapes; everything else is kept byte for byte. */
#include "base/escape.h"
#include "harness.h"

static char *esc(const char *s, unsigned flags) {
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_escape_append(&sb, s, strlen(s), flags);
        return dp_strbuf_steal(&sb);
}

TEST(terminal) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                {"plain name-0.x", "plain name-0.x"},
                {"\x1b[31mred\r\nfake", "\\e[31mred\\r\\nfake"},
                {"tab\tbell\a del\x7f", "tab\\tbell\\x07 del\\x7F"},
                {"caf\xc3\xa9 \xe2\x9c\x93 GPU\xe2\x80\x94" "A100", "caf\xc3\xa9 \xe2\x9c\x93 GPU\xe2\x80\x94" "A100"},
                {"abc\xe2\x80\xae" "cba", "abc\\u{202E}cba"},      /* RIGHT-TO-LEFT OVERRIDE */
                {"\xe2\x81\xa6x\xe2\x81\xa9", "\\u{2066}x\\u{2069}"}, /* isolates */
                {"\xd8\x9c\xe2\x80\x8f\xe2\x80\xa8", "\\u{061C}\\u{200F}\\u{2028}"},
                {"c1 \xc2\x9b" "31m", "c1 \\u{009B}31m"},
                {"bad \xff\xc3 utf8 \xed\xa0\x80", "bad \\xFF\\xC3 utf8 \\xED\\xA0\\x80"},
                {"overlong \xc0\xaf", "overlong \\xC0\\xAF"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *r = esc(cases[i].in, 0);
                ASSERT_STREQ(r, cases[i].out);
                ASSERT_EQ(dp_escape_is_safe(cases[i].in, strlen(cases[i].in), 0), streq(cases[i].in, cases[i].out));
                free(r);
        }
        char *r = esc("line 1\n\tline 2\r", DP_ESCAPE_KEEP_NEWLINES);
        ASSERT_STREQ(r, "line 1\n\tline 2\\r");
        free(r);
        r = dp_escape_dup("a\nb");
        ASSERT_STREQ(r, "a\\nb");
        free(r);
}

TEST(html) {
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_escape_html(&sb, "<b a=\"x\">'&'</b>\n\tgpu\xe2\x80\xae" "evil\x1b" "\xc3\xa9");
        ASSERT_STREQ(dp_strbuf_str(&sb), "&lt;b a=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/b&gt;\n\tgpu\\u{202E}evil\\e\xc3\xa9");
        dp_strbuf_done(&sb);
}
