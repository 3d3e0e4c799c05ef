/* SPDX-License-Identifier: Apache-2.0
 *
 * strbuf.h — a growable byte buffer, always NUL-terminated.
 * Allocation failure is sticky: after the first -ENOMEM every append is a
 * no-op and dp_strbuf_failed() is true, so builders can append freely and
 * check once at the end.
 */
#pragma once

#include <stdarg.h>

#include "base/macros.h"

typedef struct dp_strbuf {
        char *buf;
        size_t len;
        size_t cap;
        bool oom;
} dp_strbuf;

#define DP_STRBUF_INIT {NULL, 0, 0, false}

/* The out-of-line halves of the appends below: grow, then append. */
void dp_strbuf_append_grow(dp_strbuf *sb, const char *s, size_t n);
char *dp_strbuf_room_grow(dp_strbuf *sb, size_t extra);

/* Appends are inline while the buffer has room (emitters append a few bytes
 * at a time, millions of times for a long list). */
static inline void dp_strbuf_append(dp_strbuf *sb, const char *s, size_t n) {
        if (_likely_(!sb->oom && n < sb->cap - sb->len)) {
                if (n) memcpy(sb->buf + sb->len, s, n);
                sb->len += n;
                sb->buf[sb->len] = 0;
                return;
        }
        dp_strbuf_append_grow(sb, s, n);
}
static inline void dp_strbuf_puts(dp_strbuf *sb, const char *s) { dp_strbuf_append(sb, s, strlen(s)); }
static inline void dp_strbuf_putc(dp_strbuf *sb, char c) {
        if (_likely_(!sb->oom && sb->cap - sb->len > 1)) {
                sb->buf[sb->len++] = c;
                sb->buf[sb->len] = 0;
                return;
        }
        dp_strbuf_append_grow(sb, &c, 1);
}
/* Room for `extra` more bytes at the end of the string: the place to write
 * them, or NULL after allocation failure. Write at most `extra` bytes there,
 * then call dp_strbuf_wrote() with how many were written. */
static inline char *dp_strbuf_room(dp_strbuf *sb, size_t extra) {
        if (_likely_(!sb->oom && extra < sb->cap - sb->len)) return sb->buf + sb->len;
        return dp_strbuf_room_grow(sb, extra);
}
static inline void dp_strbuf_wrote(dp_strbuf *sb, size_t n) {
        sb->len += n;
        sb->buf[sb->len] = 0;
}
void dp_strbuf_printf(dp_strbuf *sb, const char *fmt, ...) _printf_(2, 3);
void dp_strbuf_vprintf(dp_strbuf *sb, const char *fmt, va_list ap);
void dp_strbuf_truncate(dp_strbuf *sb, size_t len);
/* v in decimal, without printf (for text put together in hot loops). */
void dp_strbuf_put_u64(dp_strbuf *sb, uint64_t v);
static inline bool dp_strbuf_failed(const dp_strbuf *sb) { return sb->oom; }
/* Returns the string (caller owns it) and resets the buffer; NULL after OOM. */
char *dp_strbuf_steal(dp_strbuf *sb);
void dp_strbuf_done(dp_strbuf *sb);
static inline const char *dp_strbuf_str(const dp_strbuf *sb) { return sb->buf ? sb->buf : ""; }

static inline void dp_strbuf_donep(dp_strbuf *sb) { dp_strbuf_done(sb); }
#define _cleanup_strbuf_ _cleanup_(dp_strbuf_donep)

/* strdup/strndup/asprintf that are explicit about ownership; NULL on OOM.
 * All allocate with malloc, so the failmalloc tests reach them. */
char *dp_strdup(const char *s);
char *dp_strndup(const char *s, size_t n);
char *dp_asprintf(const char *fmt, ...) _printf_(1, 2);
char *dp_vasprintf(const char *fmt, va_list ap) _printf_(1, 0);
