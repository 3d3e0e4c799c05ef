/* SPDX-License-Identifier: Apache-2.0 */
#include <stdarg.h>
#include <stdio.h>

#include "base/log.h"

static const char *log_component = "devplane";
static dp_log_level log_max = DP_LOG_INFO;
static dp_log_formatter_fn log_formatter;

void dp_log_setup(const char *component, dp_log_level max_level) {
        if (component) log_component = component;
        log_max = max_level;
}

dp_log_level dp_log_get_max_level(void) { return log_max; }

void dp_log_set_formatter(dp_log_formatter_fn fn) { log_formatter = fn; }

void dp_log(dp_log_level level, const char *fmt, ...) {
        if (level > log_max) return;
        static const char *const names[] = {[DP_LOG_ERR] = "error", [DP_LOG_WARNING] = "warning",
                                            [DP_LOG_INFO] = "info", [DP_LOG_DEBUG] = "debug"};
        char line[4096];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(line, sizeof line, fmt, ap);
        va_end(ap);
        const char *name = names[level] ? names[level] : "?";
        if (log_formatter)
                log_formatter(level, name, log_component, line);
        else
                fprintf(stderr, "devplane[%s] %s: %s\n", log_component, name, line);
}
