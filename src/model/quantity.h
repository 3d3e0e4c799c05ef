/* SPDX-License-Identifier: Apache-2.0
 *
 * quantity.h — Kubernetes resource.Quantity, exact.
 *
 * Contract (shared by model, CEL's quantity library, the allocator and the
 * scheduler; the implementation lives in quantity.c):
 *   - A quantity is a signed value held exactly in nano units (10^-9) in a
 *     128-bit integer, plus the format it was written in. Parsing rounds the
 *     magnitude up (away from zero, as Kubernetes does: "0.1n" -> 1n,
 *     "-0.1n" -> -1n) to nano precision. Binary-suffixed values are capped at
 *     2^63-1 as Kubernetes caps them; other values whose nano representation
 *     does not fit in the int128 (magnitude above about 1.7e29) are -ERANGE.
 *   - Syntax: <sign><digits>[.<digits>]<suffix>, suffixes "" k M G T P E
 *     (DecimalSI), Ki Mi Gi Ti Pi Ei (BinarySI), e<n>/E<n> (DecimalExponent),
 *     and "m", "u", "n" (DecimalSI fractions).
 *   - dp_quantity_format() prints Kubernetes' canonical form (the one
 *     Quantity.String() gives after parsing, e.g. "1.5Gi" -> "1536Mi",
 *     "0.1" -> "100m", "1000" -> "1k"). Kubernetes also echoes some inputs
 *     verbatim when they are already "canonical enough" ("+1k", "01", "1E3");
 *     we always print the computed canonical form ("1k", "1", "1e3").
 * All functions are pure.
 */
#pragma once

#include "base/error.h"

typedef enum {
        DP_QUANTITY_DECIMAL_SI = 0,
        DP_QUANTITY_BINARY_SI,
        DP_QUANTITY_DECIMAL_EXPONENT,
} dp_quantity_format_kind;

typedef struct dp_quantity {
        __int128 nanos;                 /* value × 10^9 */
        dp_quantity_format_kind format; /* as written; decides the canonical suffix */
} dp_quantity;

#define DP_QUANTITY_MAX_LEN 128 /* longest accepted input and longest canonical output */

/* 0, or -EINVAL (syntax; err says "quantities must match the regular
 * expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'" as Kubernetes
 * does), or -ERANGE. */
int dp_quantity_parse(const char *s, dp_quantity *ret, dp_error *err);
/* Canonical string into buf (at least DP_QUANTITY_MAX_LEN bytes). */
void dp_quantity_format(const dp_quantity *q, char *buf, size_t size);
int dp_quantity_cmp(const dp_quantity *a, const dp_quantity *b);
/* Sum/difference keeping a's format; -ERANGE on overflow. */
int dp_quantity_add(const dp_quantity *a, const dp_quantity *b, dp_quantity *ret);
int dp_quantity_sub(const dp_quantity *a, const dp_quantity *b, dp_quantity *ret);
/* Quantity.Value(): rounded away from zero to an integer, saturating at INT64 bounds. */
int64_t dp_quantity_value(const dp_quantity *q);
/* Quantity.MilliValue(), same rounding and saturation. */
int64_t dp_quantity_milli_value(const dp_quantity *q);
/* Whole units only (no fractional part). */
bool dp_quantity_is_integer(const dp_quantity *q);
double dp_quantity_as_double(const dp_quantity *q);
static inline dp_quantity dp_quantity_from_int(int64_t v, dp_quantity_format_kind f) {
        return (dp_quantity){(__int128)v * 1000000000, f};
}
