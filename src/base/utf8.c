/* SPDX-License-Identifier: Apache-2.0
 * utf8.c — the one UTF-8 decoder and encoder (utf8.h). */
#include "base/utf8.h"

size_t dp_utf8_decode(const void *s, size_t len, uint32_t *ret_cp) {
        const unsigned char *p = s;
        if (!len) return 0;
        unsigned char c = p[0];
        size_t n;
        uint32_t cp, min;
        if (c < 0x80) {
                *ret_cp = c;
                return 1;
        }
        if (c >= 0xc2 && c <= 0xdf)
                n = 2, cp = c & 0x1f, min = 0x80;
        else if (c >= 0xe0 && c <= 0xef)
                n = 3, cp = c & 0x0f, min = 0x800;
        else if (c >= 0xf0 && c <= 0xf4)
                n = 4, cp = c & 0x07, min = 0x10000;
        else
                return 0; /* a continuation byte, 0xc0/0xc1 (always overlong) or past 0xf4 */
        if (len < n) return 0;
        for (size_t i = 1; i < n; i++) {
                if ((p[i] & 0xc0) != 0x80) return 0;
                cp = cp << 6 | (p[i] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
        *ret_cp = cp;
        return n;
}

bool dp_utf8_valid(const void *s, size_t len) {
        const unsigned char *p = s;
        for (size_t i = 0; i < len;) {
                if (p[i] < 0x80) {
                        i++;
                        continue;
                }
                uint32_t cp;
                size_t n = dp_utf8_decode(p + i, len - i, &cp);
                if (!n) return false;
                i += n;
        }
        return true;
}

size_t dp_utf8_encode(uint32_t cp, char out[static 4]) {
        if (cp < 0x80) {
                out[0] = (char)cp;
                return 1;
        }
        if (cp < 0x800) {
                out[0] = (char)(0xc0 | (cp >> 6));
                out[1] = (char)(0x80 | (cp & 0x3f));
                return 2;
        }
        if (cp < 0x10000) {
                out[0] = (char)(0xe0 | (cp >> 12));
                out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
                out[2] = (char)(0x80 | (cp & 0x3f));
                return 3;
        }
        out[0] = (char)(0xf0 | (cp >> 18));
        out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[3] = (char)(0x80 | (cp & 0x3f));
        return 4;
}
