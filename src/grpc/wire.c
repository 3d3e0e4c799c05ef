/* SPDX-License-Identifier: Apache-2.0 */
#include <inttypes.h>
#include <stdio.h>

#include "grpc/grpc.h"
#include "grpc/wire.h"

int dp_grpc_timeout_parse(const char *s, size_t n, uint64_t *ret_usec) {
        assert_return(s && ret_usec, -EINVAL);
        if (n < 2 || n > 9) return -EINVAL;
        uint64_t v = 0;
        for (size_t i = 0; i + 1 < n; i++) {
                if (s[i] < '0' || s[i] > '9') return -EINVAL;
                v = v * 10 + (uint64_t)(s[i] - '0');
        }
        uint64_t usec;
        switch (s[n - 1]) {
        case 'H': usec = v * 3600ull * 1000000ull; break;
        case 'M': usec = v * 60ull * 1000000ull; break;
        case 'S': usec = v * 1000000ull; break;
        case 'm': usec = v * 1000ull; break;
        case 'u': usec = v; break;
        case 'n': usec = (v + 999) / 1000; break;
        default: return -EINVAL;
        }
        *ret_usec = usec;
        return 0;
}

void dp_grpc_timeout_format(uint64_t usec, char buf[static 16]) {
        static const struct {
                char unit;
                uint64_t ns;
        } units[] = {
                {'n', 1ull},          {'u', 1000ull},        {'m', 1000000ull},
                {'S', 1000000000ull}, {'M', 60000000000ull}, {'H', 3600000000000ull},
        };
        const uint64_t max = 99999999ull;
        if (usec == 0) {
                snprintf(buf, 16, "0n");
                return;
        }
        uint64_t ns = usec > UINT64_MAX / 1000 ? UINT64_MAX : usec * 1000;
        for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                uint64_t d = ns / units[i].ns + (ns % units[i].ns != 0);
                if (d <= max) {
                        snprintf(buf, 16, "%" PRIu64 "%c", d, units[i].unit);
                        return;
                }
        }
        snprintf(buf, 16, "%" PRIu64 "H", max);
}

void dp_grpc_percent_encode(dp_strbuf *sb, const char *s, size_t n) {
        static const char hex[] = "0123456789ABCDEF";
        for (size_t i = 0; i < n; i++) {
                unsigned char ch = (unsigned char)s[i];
                if (ch < 0x20 || ch > 0x7E || ch == '%') {
                        char e[3] = {'%', hex[ch >> 4], hex[ch & 15]};
                        dp_strbuf_append(sb, e, 3);
                } else
                        dp_strbuf_putc(sb, (char)ch);
        }
}

static int hexval(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
}

void dp_grpc_percent_decode(dp_strbuf *sb, const char *s, size_t n) {
        for (size_t i = 0; i < n; i++) {
                if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
                        dp_strbuf_putc(sb, (char)(hexval(s[i + 1]) << 4 | hexval(s[i + 2])));
                        i += 2;
                } else
                        dp_strbuf_putc(sb, s[i]);
        }
}

int dp_grpc_status_from_http(int http_status) {
        switch (http_status) {
        case 400: return DP_GRPC_INTERNAL;
        case 401: return DP_GRPC_UNAUTHENTICATED;
        case 403: return DP_GRPC_PERMISSION_DENIED;
        case 404: return DP_GRPC_UNIMPLEMENTED;
        case 429:
        case 502:
        case 503:
        case 504: return DP_GRPC_UNAVAILABLE;
        case 0: return DP_GRPC_INTERNAL; /* :status missing */
        default: return DP_GRPC_UNKNOWN;
        }
}

int dp_grpc_status_from_rst(uint32_t code) {
        switch (code) {
        case 0x7: return DP_GRPC_UNAVAILABLE;        /* REFUSED_STREAM */
        case 0x8: return DP_GRPC_CANCELLED;          /* CANCEL */
        case 0xb: return DP_GRPC_RESOURCE_EXHAUSTED; /* ENHANCE_YOUR_CALM */
        case 0xc: return DP_GRPC_PERMISSION_DENIED;  /* INADEQUATE_SECURITY */
        default: return DP_GRPC_INTERNAL;
        }
}

void dp_grpc_prefix_write(uint8_t out[static DP_GRPC_PREFIX_LEN], uint32_t len) {
        out[0] = 0;
        out[1] = (uint8_t)(len >> 24);
        out[2] = (uint8_t)(len >> 16);
        out[3] = (uint8_t)(len >> 8);
        out[4] = (uint8_t)len;
}

const char *dp_grpc_status_name(int status) {
        static const char *const names[] = {
                "OK",        "CANCELLED",       "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
                "NOT_FOUND", "ALREADY_EXISTS",  "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
                "ABORTED",   "OUT_OF_RANGE",    "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
                "DATA_LOSS", "UNAUTHENTICATED",
        };
        if (status < 0 || (size_t)status >= ELEMENTSOF(names)) return "UNKNOWN_STATUS";
        return names[status];
}
