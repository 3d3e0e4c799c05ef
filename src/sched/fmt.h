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

#include "base/error.h"

/* dp_error_prefix for a failure `r` that a callee may have returned without
 * filling err (an allocation failure deep down): the message then says what
 * the code means, so "<context>: Cannot allocate memory" comes out with -ENOMEM
 * instead of an empty -EINVAL. Returns the error's code. */
static inline _printf_(3, 4) int dp_fmt_prefix(dp_error *err, int r, const char *fmt, ...) {
        if (!err) return r;
        if (err->code == 0) dp_error_set(err, r, "%s", strerror(-r));
        char ctx[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ctx, sizeof ctx, fmt, ap);
        va_end(ap);
        return dp_error_prefix(err, "%s", ctx);
}

/* At a public entry point: an -ENOMEM that reached it without a message gets one. */
static inline int dp_fmt_oom(dp_error *err, int r) {
        if (r == -ENOMEM && err && !err->msg[0]) dp_error_set(err, r, "%s", strerror(ENOMEM));
        return r;
}
