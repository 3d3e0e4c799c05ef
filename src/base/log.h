/* SPDX-License-Identifier: Apache-2.0
 *
 * log.h — the one global in devplane: the logger. Lines go to stderr as
 *   "devplane[agent] level: message".
 * Level and component name are set once by the front end; a formatter
 * (dp_log_set_formatter) may write each line another way.
 */
#pragma once

#include "base/macros.h"

typedef enum { DP_LOG_ERR = 3, DP_LOG_WARNING = 4, DP_LOG_INFO = 6, DP_LOG_DEBUG = 7 } dp_log_level;

void dp_log_setup(const char *component, dp_log_level max_level);
dp_log_level dp_log_get_max_level(void);
void dp_log(dp_log_level level, const char *fmt, ...) _printf_(2, 3);

/* Copy the NUL-terminated `in` to out (size bytes, NUL-terminated, cut at a
 * whole character), with control characters (C0, DEL, C1) and bytes that are
 * not valid UTF-8 written as \n, \r, \t or \xNN. Every message goes through
 * it before it is written, in the text and the formatter's (JSON) form.
 * Returns the length written. */
size_t dp_log_escape(char *out, size_t size, const char *in);

/* A formatter replaces the text line (the agent's --log-format json): it
 * gets the level, its name ("error", "warning", "info", "debug"), the
 * component and the formatted message (at most 4 KiB before escaping, and
 * escaped with dp_log_escape: no control characters, valid UTF-8), and writes them
 * where it wants. NULL restores "devplane[COMPONENT] LEVEL: MESSAGE". */
typedef void (*dp_log_formatter_fn)(dp_log_level level, const char *level_name, const char *component, const char *msg);
void dp_log_set_formatter(dp_log_formatter_fn fn);

#define log_error(...) dp_log(DP_LOG_ERR, __VA_ARGS__)
#define log_warning(...) dp_log(DP_LOG_WARNING, __VA_ARGS__)
#define log_info(...) dp_log(DP_LOG_INFO, __VA_ARGS__)
#define log_debug(...) dp_log(DP_LOG_DEBUG, __VA_ARGS__)
