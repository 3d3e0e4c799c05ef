/* SPDX-License-Identifier: Apache-2.0 */
#include <stdarg.h>
#include <stdio.h>

#include "base/error.h"

int dp_error_set(dp_error *err, int code, const char *fmt, ...) {
        assert(code < 0);
        if (!err) return code;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
        return code;
}

int dp_error_prefix(dp_error *err, const char *fmt, ...) {
        if (!err) return -EINVAL;
        /* context for an error nobody set: the function that failed returned
         * -errno without filling err (the -EINVAL below would hide that) */
        assert(err->code < 0);
        char prefix[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(prefix, sizeof prefix, fmt, ap);
        va_end(ap);
        /* shift the message right and put "prefix: " in front, truncating the tail */
        size_t pl = strlen(prefix), ml = strlen(err->msg);
        if (pl + 2 >= sizeof err->msg) pl = sizeof err->msg - 3;
        size_t keep = DP_MIN(ml, sizeof err->msg - 1 - pl - 2);
        memmove(err->msg + pl + 2, err->msg, keep);
        memcpy(err->msg, prefix, pl);
        err->msg[pl] = ':';
        err->msg[pl + 1] = ' ';
        err->msg[pl + 2 + keep] = 0;
        if (err->code == 0) err->code = -EINVAL;
        return err->code;
}

int dp_error_errno(dp_error *err, int code, const char *fmt, ...) {
        assert(code < 0);
        if (!err) return code;
        char prefix[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(prefix, sizeof prefix, fmt, ap);
        va_end(ap);
        size_t pl = strlen(prefix); /* < 512 < sizeof err->msg */
        memcpy(err->msg, prefix, pl);
        snprintf(err->msg + pl, sizeof err->msg - pl, ": %s", strerror(-code));
        err->code = code;
        return code;
}

void dp_error_clear(dp_error *err) {
        if (!err) return;
        err->code = 0;
        err->msg[0] = 0;
}
