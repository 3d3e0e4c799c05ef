/* SPDX-License-Identifier: Apache-2.0
 *
 * wire.h — pure helpers for gRPC's HTTP/2 mapping (wire-protocols.md 7):
 * grpc-timeout values, grpc-message percent-encoding, HTTP and RST_STREAM
 * code mapping, the 5-byte message prefix.
 */
#pragma once

#include "base/macros.h"
#include "base/strbuf.h"

#define DP_GRPC_PREFIX_LEN 5

/* Parse a grpc-timeout value (1..8 digits + one of H M S m u n) into
 * microseconds, rounding nanoseconds up. 0 / -EINVAL. */
int dp_grpc_timeout_parse(const char *s, size_t n, uint64_t *ret_usec);
/* Format like grpc-go: the finest unit whose count fits in 8 digits, rounded
 * up. buf must hold 16 bytes. */
void dp_grpc_timeout_format(uint64_t usec, char buf[static 16]);

/* Percent-encode for grpc-message: bytes outside 0x20..0x7E and '%' become
 * %XX (uppercase). */
void dp_grpc_percent_encode(dp_strbuf *sb, const char *s, size_t n);
/* Decode %XX escapes; a malformed escape is kept as is. */
void dp_grpc_percent_decode(dp_strbuf *sb, const char *s, size_t n);

/* grpc-go's mapping of a non-gRPC HTTP response status to a gRPC status. */
int dp_grpc_status_from_http(int http_status);
/* The status a client reports for an RST_STREAM error code. */
int dp_grpc_status_from_rst(uint32_t h2_error_code);

/* Write the 5-byte prefix for an uncompressed message of len bytes. */
void dp_grpc_prefix_write(uint8_t out[static DP_GRPC_PREFIX_LEN], uint32_t len);
