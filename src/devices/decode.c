/* SPDX-License-Identifier: Apache-2.0
 * decode.c — error shape and typed reads for the profile and config decoders. */
#include <stdarg.h>
#include <stdio.h>

#include "devices/decode.h"

static int vfail(const dp_decode_ctx *c, int code, const dp_doc_node *n, const char *path, const char *fmt,
                 va_list ap) {
        char rule[1024];
        vsnprintf(rule, sizeof rule, fmt, ap);
        char where[128] = "";
        if (n) snprintf(where, sizeof where, ":%u:%u", n->line, n->col);
        return dp_error_set(c->err, code, "%s%s: %s%s%s%s%s: %s", c->source ? c->source : "input", where,
                            c->kind ? c->kind : "", c->name ? " " : "", c->name ? c->name : "", c->kind ? ": " : "",
                            path && *path ? path : "(document)", rule);
}

int dp_decode_fail(const dp_decode_ctx *c, const dp_doc_node *n, const char *path, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int r = vfail(c, -EINVAL, n, path, fmt, ap);
        va_end(ap);
        return r;
}

int dp_decode_fail_code(const dp_decode_ctx *c, int code, const dp_doc_node *n, const char *path, const char *fmt,
                        ...) {
        va_list ap;
        va_start(ap, fmt);
        int r = vfail(c, code, n, path, fmt, ap);
        va_end(ap);
        return r;
}

int dp_decode_check_map(const dp_decode_ctx *c, const dp_doc_node *n, const char *path, const char *const *allowed) {
        if (!n || n->type != DP_DOC_MAP)
                return dp_decode_fail(c, n, path, "expected a map, got %s", dp_doc_type_name(n));
        for (size_t i = 0; i < n->n; i++) {
                const char *k = n->pairs[i].key;
                bool ok = false;
                for (const char *const *a = allowed; *a && !ok; a++)
                        ok = streq(*a, k);
                if (!ok) {
                        char p[512];
                        snprintf(p, sizeof p, "%s%s%s", path && *path ? path : "", path && *path ? "." : "", k);
                        return dp_decode_fail(c, n->pairs[i].key_node ? n->pairs[i].key_node : n, p, "unknown field");
                }
        }
        return 0;
}

int dp_decode_str(const dp_decode_ctx *c, const dp_doc_node *n, const char *path, bool lenient, char **ret) {
        const char *s;
        dp_error e = DP_ERROR_INIT;
        if (dp_doc_get_str(n, lenient, &s, &e) < 0) return dp_decode_fail(c, n, path, "%s", e.msg);
        char *d = dp_strdup(s);
        if (!d) return dp_error_set(c->err, -ENOMEM, "out of memory");
        *ret = d;
        return 0;
}

int dp_decode_bool(const dp_decode_ctx *c, const dp_doc_node *n, const char *path, bool *ret) {
        dp_error e = DP_ERROR_INIT;
        if (dp_doc_get_bool(n, ret, &e) < 0) return dp_decode_fail(c, n, path, "%s", e.msg);
        return 0;
}

int dp_decode_int(const dp_decode_ctx *c, const dp_doc_node *n, const char *path, int64_t min, int64_t max,
                  int64_t *ret) {
        dp_error e = DP_ERROR_INIT;
        int64_t v;
        if (dp_doc_get_int64(n, &v, &e) < 0) return dp_decode_fail(c, n, path, "%s", e.msg);
        if (v < min || v > max)
                return dp_decode_fail(c, n, path, "must be an integer from %lld to %lld, got %lld", (long long)min,
                                      (long long)max, (long long)v);
        *ret = v;
        return 0;
}

int dp_decode_enum(const dp_decode_ctx *c, const dp_doc_node *n, const char *path, const char *const *words, int *ret) {
        const char *s;
        dp_error e = DP_ERROR_INIT;
        if (dp_doc_get_str(n, false, &s, &e) < 0) return dp_decode_fail(c, n, path, "%s", e.msg);
        for (int i = 0; words[i]; i++)
                if (streq(words[i], s)) {
                        *ret = i;
                        return 0;
                }
        char list[512] = "";
        size_t off = 0;
        for (int i = 0; words[i]; i++) {
                int w = snprintf(list + off, sizeof list - off, "%s%s", i ? ", " : "", words[i]);
                if (w < 0 || (size_t)w >= sizeof list - off) break;
                off += (size_t)w;
        }
        return dp_decode_fail(c, n, path, "must be one of %s, got \"%.64s\"", list, s);
}

bool dp_is_dns_label(const char *s) {
        size_t n = strlen(s);
        if (n == 0 || n > 63) return false;
        for (size_t i = 0; i < n; i++) {
                char ch = s[i];
                bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
                if (!alnum && !(ch == '-' && i > 0 && i + 1 < n)) return false;
        }
        return true;
}

bool dp_is_dns_subdomain(const char *s) {
        size_t n = strlen(s);
        if (n == 0 || n > 253) return false;
        const char *p = s;
        while (*p) {
                const char *dot = strchr(p, '.');
                size_t len = dot ? (size_t)(dot - p) : strlen(p);
                char label[64];
                if (len == 0 || len > 63) return false;
                memcpy(label, p, len);
                label[len] = 0;
                if (!dp_is_dns_label(label)) return false;
                if (!dot) break;
                p = dot + 1;
                if (!*p) return false;
        }
        return true;
}

int dp_pathf(char *buf, size_t size, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int r = vsnprintf(buf, size, fmt, ap);
        va_end(ap);
        return r;
}
