/* SPDX-License-Identifier: Apache-2.0
 * escape.c — visible escapes for controls, bidi controls and bytes that are
 * not UTF-8 (escape.h). */
#include <stdio.h>

#include "base/escape.h"
#include "base/utf8.h"

static bool unsafe_cp(uint32_t cp, unsigned flags) {
        if (cp == '\n' || cp == '\t') return !(flags & DP_ESCAPE_KEEP_NEWLINES);
        if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) return true;
        return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
               (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029;
}

size_t dp_escape_unsafe_len(const char *s, size_t len, unsigned flags) {
        if (!len) return 0;
        uint32_t cp;
        size_t n = dp_utf8_decode(s, len, &cp);
        if (!n) return 1; /* one byte that is not UTF-8 */
        return unsafe_cp(cp, flags) ? n : 0;
}

bool dp_escape_is_safe(const char *s, size_t len, unsigned flags) {
        for (size_t i = 0; i < len;) {
                if ((unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f) {
                        i++;
                        continue;
                }
                if (dp_escape_unsafe_len(s + i, len - i, flags)) return false;
                uint32_t cp;
                i += dp_utf8_decode(s + i, len - i, &cp);
        }
        return true;
}

static void put_escape(dp_strbuf *out, const char *s, size_t n) {
        unsigned char c = (unsigned char)s[0];
        uint32_t cp;
        if (n == 1) {
                switch (c) {
                case '\n': dp_strbuf_puts(out, "\\n"); return;
                case '\r': dp_strbuf_puts(out, "\\r"); return;
                case '\t': dp_strbuf_puts(out, "\\t"); return;
                case 0x1b: dp_strbuf_puts(out, "\\e"); return;
                default: dp_strbuf_printf(out, "\\x%02X", c); return;
                }
        }
        if (dp_utf8_decode(s, n, &cp) == n) dp_strbuf_printf(out, "\\u{%04X}", (unsigned)cp);
}

void dp_escape_append(dp_strbuf *out, const char *s, size_t len, unsigned flags) {
        size_t i = 0, start = 0;
        while (i < len) {
                unsigned char c = (unsigned char)s[i];
                if (c >= 0x20 && c < 0x7f) {
                        i++;
                        continue;
                }
                size_t n = dp_escape_unsafe_len(s + i, len - i, flags);
                if (!n) {
                        uint32_t cp;
                        i += dp_utf8_decode(s + i, len - i, &cp);
                        continue;
                }
                dp_strbuf_append(out, s + start, i - start);
                put_escape(out, s + i, n);
                i += n;
                start = i;
        }
        dp_strbuf_append(out, s + start, len - start);
}

char *dp_escape_dup(const char *s) {
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_escape_append(&sb, s, strlen(s), 0);
        dp_strbuf_putc(&sb, 0);
        return dp_strbuf_steal(&sb);
}

void dp_escape_html(dp_strbuf *out, const char *s) {
        size_t len = s ? strlen(s) : 0;
        for (size_t i = 0; i < len;) {
                unsigned char c = (unsigned char)s[i];
                switch (c) {
                case '&': dp_strbuf_puts(out, "&amp;"); i++; continue;
                case '<': dp_strbuf_puts(out, "&lt;"); i++; continue;
                case '>': dp_strbuf_puts(out, "&gt;"); i++; continue;
                case '"': dp_strbuf_puts(out, "&quot;"); i++; continue;
                case '\'': dp_strbuf_puts(out, "&#39;"); i++; continue;
                default: break;
                }
                size_t n = dp_escape_unsafe_len(s + i, len - i, DP_ESCAPE_KEEP_NEWLINES);
                if (n) {
                        put_escape(out, s + i, n);
                        i += n;
                        continue;
                }
                uint32_t cp;
                n = dp_utf8_decode(s + i, len - i, &cp);
                dp_strbuf_append(out, s + i, n);
                i += n;
        }
}
