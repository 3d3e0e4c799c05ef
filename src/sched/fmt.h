/* SPDX-License-Identifier: Apache-2.0
 * fmt.h — bounded formatting where cutting a long name short is the intended
 * behaviour (messages, keys of bounded length), without gcc's
 * -Wformat-truncation guessing at every call. */
#pragma once

#include <stdarg.h>
#include <stdio.h>

#include "base/macros.h"

static inline _printf_(3, 4) void dp_fmt(char *buf, size_t size, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, size, fmt, ap);
        va_end(ap);
}
