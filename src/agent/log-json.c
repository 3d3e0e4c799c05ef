/* SPDX-License-Identifier: Apache-2.0
 * `--log-format json`: one JSON object per log line on stderr,
 *   {"time":"2026-01-01T00:00:00.000Z","level":"info","component":"agent","msg":"..."}
 * written by a base/log.c formatter with one write(2) to fd 2 (lines from
 * sanitizers and libraries that write to fd 2 directly stay as they are). */
#include <time.h>

#include "agent/agent.h"
#include "base/log.h"
#include "base/strbuf.h"

static void json_str(dp_strbuf *o, const char *s) {
        dp_strbuf_putc(o, '"');
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                if (*p == '"' || *p == '\\')
                        dp_strbuf_printf(o, "\\%c", *p);
                else if (*p < 0x20)
                        dp_strbuf_printf(o, "\\u%04x", *p);
                else
                        dp_strbuf_putc(o, (char)*p);
        }
        dp_strbuf_putc(o, '"');
}

static void json_line(dp_log_level level, const char *level_name, const char *component, const char *msg) {
        dp_strbuf o = DP_STRBUF_INIT;
        struct timespec ts;
        struct tm tm;
        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        dp_strbuf_printf(&o, "{\"time\":\"%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ\",\"level\":", tm.tm_year + 1900,
                         tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
        json_str(&o, level_name);
        dp_strbuf_puts(&o, ",\"component\":");
        json_str(&o, component);
        dp_strbuf_puts(&o, ",\"msg\":");
        json_str(&o, msg);
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

int dp_agent_log_json_setup(void) {
        dp_log_set_formatter(json_line);
        return 0;
}
