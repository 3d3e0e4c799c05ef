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
        char prefix[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(prefix, sizeof prefix, fmt, ap);
        va_end(ap);
        char tmp[DP_ERROR_MSG_MAX];
        snprintf(tmp, sizeof tmp, "%s: %s", prefix, err->msg);
        memcpy(err->msg, tmp, sizeof tmp);
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
        snprintf(err->msg, sizeof err->msg, "%s: %s", prefix, strerror(-code));
        err->code = code;
        return code;
}

void dp_error_clear(dp_error *err) {
        if (!err) return;
        err->code = 0;
        err->msg[0] = 0;
}
