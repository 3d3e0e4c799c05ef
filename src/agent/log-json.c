/* SPDX-License-Identifier: Apache-2.0
 * `--log-format json`: one JSON object per log line on stderr.
 *
 * base/log.c writes "devplane[COMPONENT] LEVEL: MESSAGE\n" to stderr; the
 * logger is the one global (STYLE.md), and the agent is its only user that
 * wants JSON, so instead of a second logger we swap stderr for a
 * line-buffered cookie stream that rewrites each complete line into
 *   {"time":"2026-01-01T00:00:00.000Z","level":"info","component":"agent","msg":"..."}
 * and writes it to fd 2 with one write(2) (lines from sanitizers and
 * libraries that write to fd 2 directly stay as they are). */
#include <stdio.h>
#include <time.h>

#include "agent/agent.h"
#include "base/strbuf.h"

typedef struct {
        dp_strbuf pending; /* an incomplete line */
} json_sink;

static void json_str(dp_strbuf *o, const char *s, size_t n) {
        dp_strbuf_putc(o, '"');
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c == '"' || c == '\\')
                        dp_strbuf_printf(o, "\\%c", c);
                else if (c < 0x20)
                        dp_strbuf_printf(o, "\\u%04x", c);
                else
                        dp_strbuf_putc(o, (char)c);
        }
        dp_strbuf_putc(o, '"');
}

/* One line without its newline. */
static void emit_line(const char *l, size_t n) {
        dp_strbuf o = DP_STRBUF_INIT;
        struct timespec ts;
        struct tm tm;
        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        dp_strbuf_printf(&o, "{\"time\":\"%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ\"", tm.tm_year + 1900, tm.tm_mon + 1,
                         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
        /* "devplane[comp] level: msg" */
        const char *lb = memchr(l, '[', n), *rb = lb ? memchr(lb, ']', n - (size_t)(lb - l)) : NULL;
        const char *colon = rb ? memchr(rb, ':', n - (size_t)(rb - l)) : NULL;
        if (lb && rb && colon && rb + 1 < colon && rb[1] == ' ' && colon + 1 < l + n) {
                dp_strbuf_puts(&o, ",\"level\":");
                json_str(&o, rb + 2, (size_t)(colon - rb - 2));
                dp_strbuf_puts(&o, ",\"component\":");
                json_str(&o, lb + 1, (size_t)(rb - lb - 1));
                const char *m = colon + 1 + (colon[1] == ' ');
                dp_strbuf_puts(&o, ",\"msg\":");
                json_str(&o, m, (size_t)(l + n - m));
        } else {
                dp_strbuf_puts(&o, ",\"level\":\"info\",\"msg\":");
                json_str(&o, l, n);
        }
        dp_strbuf_puts(&o, "}\n");
        if (!dp_strbuf_failed(&o)) {
                size_t off = 0;
                while (off < o.len) {
                        ssize_t k = write(STDERR_FILENO, o.buf + off, o.len - off);
                        if (k < 0 && errno == EINTR) continue;
                        if (k <= 0) break;
                        off += (size_t)k;
                }
        }
        dp_strbuf_done(&o);
}

static ssize_t sink_write(void *cookie, const char *buf, size_t size) {
        json_sink *s = cookie;
        dp_strbuf_append(&s->pending, buf, size);
        if (dp_strbuf_failed(&s->pending)) {
                dp_strbuf_done(&s->pending);
                s->pending = (dp_strbuf)DP_STRBUF_INIT;
                return (ssize_t)size;
        }
        size_t start = 0;
        for (size_t i = 0; i < s->pending.len; i++)
                if (s->pending.buf[i] == '\n') {
                        emit_line(s->pending.buf + start, i - start);
                        start = i + 1;
                }
        if (start) {
                memmove(s->pending.buf, s->pending.buf + start, s->pending.len - start);
                dp_strbuf_truncate(&s->pending, s->pending.len - start);
        }
        return (ssize_t)size;
}

int dp_agent_log_json_setup(void) {
        static json_sink sink;
        cookie_io_functions_t io = {.write = sink_write};
        FILE *f = fopencookie(&sink, "w", io);
        if (!f) return -errno;
        setvbuf(f, NULL, _IOLBF, 0);
        stderr = f;
        return 0;
}
