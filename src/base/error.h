/* SPDX-License-Identifier: Apache-2.0
 *
 * error.h — the human-readable half of the error convention (see macros.h).
 *
 * A dp_error carries one message built from the innermost failure outwards:
 *     dp_error_set(err, -EINVAL, "must be a DNS label");
 *     dp_error_prefix(err, "devices[3].name");       -> "devices[3].name: must be ..."
 *     dp_error_prefix(err, "ResourceSlice node-a");  -> "ResourceSlice node-a: devices[3]..."
 * Both return err->code (or the code given), so they can be used in `return`.
 * `err` may be NULL everywhere; then only the code travels.
 */
#pragma once

#include "base/macros.h"

#define DP_ERROR_MSG_MAX 2048

typedef struct dp_error {
        int code;                     /* negative errno, 0 when unset */
        char msg[DP_ERROR_MSG_MAX];   /* NUL-terminated, truncated if longer */
} dp_error;

#define DP_ERROR_INIT {0, {0}}

/* Set the message (replacing any earlier one). Returns code (must be < 0). */
int dp_error_set(dp_error *err, int code, const char *fmt, ...) _printf_(3, 4);
/* Prepend "<context>: " to the message. Returns err->code, or -EINVAL if err
 * is NULL (callers that pass NULL should propagate their own code instead).
 * err must have been set: prefixing an unset error is a bug (the failing
 * function did not fill err) and asserts; with NDEBUG it answers -EINVAL. */
int dp_error_prefix(dp_error *err, const char *fmt, ...) _printf_(2, 3);
/* Set from a code alone, using strerror. */
int dp_error_errno(dp_error *err, int code, const char *fmt, ...) _printf_(3, 4);
void dp_error_clear(dp_error *err);
static inline const char *dp_error_msg(const dp_error *err) {
        return err && err->msg[0] ? err->msg : "unknown error";
}
