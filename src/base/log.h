/* SPDX-License-Identifier: Apache-2.0
 *
 * log.h — the one global in devplane: the logger. Lines go to stderr as
 *   "devplane[agent] level: message".
 * Level and component name are set once by the front end.
 */
#pragma once

#include "base/macros.h"

typedef enum { DP_LOG_ERR = 3, DP_LOG_WARNING = 4, DP_LOG_INFO = 6, DP_LOG_DEBUG = 7 } dp_log_level;

void dp_log_setup(const char *component, dp_log_level max_level);
dp_log_level dp_log_get_max_level(void);
void dp_log(dp_log_level level, const char *fmt, ...) _printf_(2, 3);

#define log_error(...) dp_log(DP_LOG_ERR, __VA_ARGS__)
#define log_warning(...) dp_log(DP_LOG_WARNING, __VA_ARGS__)
#define log_info(...) dp_log(DP_LOG_INFO, __VA_ARGS__)
#define log_debug(...) dp_log(DP_LOG_DEBUG, __VA_ARGS__)
