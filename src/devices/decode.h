/* SPDX-License-Identifier: Apache-2.0
 *
 * decode.h — internal helpers shared by the profile and config decoders:
 * one error shape "<source>:<line>:<col>: <Kind> <name>: <field path>: <rule>",
 * unknown-key checks and typed field reads. Not part of the module's API.
 */
#pragma once

#include "base/error.h"
#include "doc/doc.h"

typedef struct dp_decode_ctx {
        const char *source; /* file name or "built-in profile x" */
        const char *kind;   /* "DeviceProfile", "config" */
        const char *name;   /* object name, may be NULL */
        dp_error *err;
} dp_decode_ctx;

/* Set the error at node n (may be NULL) for field `path`. Returns -EINVAL
 * (or `code` for the _code variant). */
int dp_decode_fail(const dp_decode_ctx *c, const dp_doc_node *n, const char *path, const char *fmt, ...) _printf_(4, 5);
int dp_decode_fail_code(const dp_decode_ctx *c, int code, const dp_doc_node *n, const char *path, const char *fmt, ...)
        _printf_(5, 6);

/* Every key of map `n` must be in the NULL-terminated `allowed`; `n` must
 * be a map. */
int dp_decode_check_map(const dp_decode_ctx *c, const dp_doc_node *n, const char *path, const char *const *allowed);

/* Typed reads of a present node; `path` names it in errors. */
int dp_decode_str(const dp_decode_ctx *c, const dp_doc_node *n, const char *path, bool lenient, char **ret);
int dp_decode_bool(const dp_decode_ctx *c, const dp_doc_node *n, const char *path, bool *ret);
int dp_decode_int(const dp_decode_ctx *c, const dp_doc_node *n, const char *path, int64_t min, int64_t max,
                  int64_t *ret);
/* One of the NULL-terminated `words`; returns its position in *ret. */
int dp_decode_enum(const dp_decode_ctx *c, const dp_doc_node *n, const char *path, const char *const *words, int *ret);

/* DNS subdomain (RFC 1123, <= 253, lower case) and DNS label (<= 63). */
bool dp_is_dns_subdomain(const char *s);
bool dp_is_dns_label(const char *s);

/* snprintf for field paths and messages: truncation is accepted (paths
 * are capped on purpose), so this keeps gcc's -Wformat-truncation quiet. */
int dp_pathf(char *buf, size_t size, const char *fmt, ...) _printf_(3, 4);
