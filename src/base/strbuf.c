/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>

#include "base/strbuf.h"

static bool reserve(dp_strbuf *sb, size_t extra) {
        if (sb->oom) return false;
        if (extra > SIZE_MAX - sb->len - 1) goto oom;
        size_t need = sb->len + extra + 1;
        if (need <= sb->cap) return true;
        size_t n = sb->cap ? sb->cap : 64;
        while (n < need) {
                if (n > SIZE_MAX / 2) goto oom;
                n *= 2;
        }
        char *p = realloc(sb->buf, n);
        if (!p) goto oom;
        sb->buf = p;
        sb->cap = n;
        return true;
oom:
        sb->oom = true;
        return false;
}

void dp_strbuf_append_grow(dp_strbuf *sb, const char *s, size_t n) {
        if (!reserve(sb, n)) return;
        if (n) memcpy(sb->buf + sb->len, s, n);
        sb->len += n;
        sb->buf[sb->len] = 0;
}

char *dp_strbuf_room_grow(dp_strbuf *sb, size_t extra) { return reserve(sb, extra) ? sb->buf + sb->len : NULL; }

void dp_strbuf_vprintf(dp_strbuf *sb, const char *fmt, va_list ap) {
        va_list ap2;
        va_copy(ap2, ap);
        int n = vsnprintf(NULL, 0, fmt, ap2);
        va_end(ap2);
        if (n < 0 || !reserve(sb, (size_t)n)) return;
        vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
        sb->len += (size_t)n;
}

void dp_strbuf_printf(dp_strbuf *sb, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        dp_strbuf_vprintf(sb, fmt, ap);
        va_end(ap);
}

void dp_strbuf_put_u64(dp_strbuf *sb, uint64_t v) {
        char buf[20], *p = buf + sizeof(buf);
        do {
                *--p = (char)('0' + v % 10);
                v /= 10;
        } while (v);
        dp_strbuf_append(sb, p, (size_t)(buf + sizeof(buf) - p));
}

void dp_strbuf_truncate(dp_strbuf *sb, size_t len) {
        if (len < sb->len) {
                sb->len = len;
                sb->buf[len] = 0;
        }
}

char *dp_strbuf_steal(dp_strbuf *sb) {
        if (sb->oom) {
                dp_strbuf_done(sb);
                return NULL;
        }
        if (!sb->buf && !reserve(sb, 0)) return NULL;
        if (sb->len == 0) sb->buf[0] = 0;
        char *r = sb->buf;
        *sb = (dp_strbuf)DP_STRBUF_INIT;
        return r;
}

void dp_strbuf_done(dp_strbuf *sb) {
        free(sb->buf);
        *sb = (dp_strbuf)DP_STRBUF_INIT;
}

char *dp_strdup(const char *s) { return s ? strdup(s) : NULL; }
char *dp_strndup(const char *s, size_t n) { return strndup(s, n); }

/* vsnprintf into our own malloc rather than vasprintf, whose allocation is
 * libc's own: this way the failmalloc tests can fail it like any other. */
char *dp_vasprintf(const char *fmt, va_list ap) {
        va_list aq;
        va_copy(aq, ap);
        int n = vsnprintf(NULL, 0, fmt, aq);
        va_end(aq);
        if (n < 0) return NULL;
        char *r = malloc((size_t)n + 1);
        if (!r) return NULL;
        if (vsnprintf(r, (size_t)n + 1, fmt, ap) != n) {
                free(r);
                return NULL;
        }
        return r;
}

char *dp_asprintf(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        char *r = dp_vasprintf(fmt, ap);
        va_end(ap);
        return r;
}
