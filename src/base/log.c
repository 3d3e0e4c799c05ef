/* SPDX-License-Identifier: Apache-2.0 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/utf8.h"

static const char *log_component = "devplane";
static dp_log_level log_max = DP_LOG_INFO;
static dp_log_formatter_fn log_formatter;

void dp_log_setup(const char *component, dp_log_level max_level) {
        if (component) log_component = component;
        log_max = max_level;
}

dp_log_level dp_log_get_max_level(void) { return log_max; }

void dp_log_set_formatter(dp_log_formatter_fn fn) { log_formatter = fn; }

/* Length of the well-formed UTF-8 sequence at p (n bytes left) that may be
 * printed as it is, 0 if it must be escaped. */
static size_t utf8_len(const unsigned char *p, size_t n) {
        uint32_t cp = 0;
        size_t k = dp_utf8_decode(p, n, &cp);
        if (!k || (cp >= 0x80 && cp <= 0x9f)) return 0; /* C1 controls: CSI and friends act on terminals */
        return k;
}

size_t dp_log_escape(char *out, size_t size, const char *in) {
        static const char hex[] = "0123456789abcdef";
        size_t w = 0;
        if (!size) return 0;
        const unsigned char *p = (const unsigned char *)in, *end = p + strlen(in);
        while (p < end) {
                size_t n = *p >= 0x80 ? utf8_len(p, (size_t)(end - p)) : (*p >= 0x20 && *p != 0x7f);
                if (n) {
                        if (w + n >= size) break;
                        memcpy(out + w, p, n);
                        w += n;
                        p += n;
                        continue;
                }
                if (w + 4 >= size) break;
                out[w++] = '\\';
                if (*p == '\n' || *p == '\r' || *p == '\t') {
                        out[w++] = *p == '\n' ? 'n' : *p == '\r' ? 'r' : 't';
                } else {
                        out[w++] = 'x';
                        out[w++] = hex[*p >> 4];
                        out[w++] = hex[*p & 15];
                }
                p++;
        }
        out[w] = 0;
        return w;
}

void dp_log(dp_log_level level, const char *fmt, ...) {
        if (level > log_max) return;
        static const char *const names[] = {[DP_LOG_ERR] = "error", [DP_LOG_WARNING] = "warning",
                                            [DP_LOG_INFO] = "info", [DP_LOG_DEBUG] = "debug"};
        char line[4096];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(line, sizeof line, fmt, ap);
        va_end(ap);
        /* one line per call whatever the values hold: a device id with a
         * newline or a terminal escape cannot forge or hide a line */
        char safe[4 * sizeof line];
        dp_log_escape(safe, sizeof safe, line);
        const char *name = names[level] ? names[level] : "?";
        if (log_formatter)
                log_formatter(level, name, log_component, safe);
        else
                fprintf(stderr, "devplane[%s] %s: %s\n", log_component, name, safe);
}
