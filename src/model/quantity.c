/* SPDX-License-Identifier: Apache-2.0
 *
 * quantity.c — resource.Quantity parsing, canonical printing and arithmetic.
 *
 * Behaviour follows k8s.io/apimachinery/pkg/api/resource (facts, not code):
 *   - the scanner accepts <sign>? <digits>* [. <digits>*] <suffix>, where the
 *     suffix is letters from "eEinumkKMGTP", an optional sign and digits;
 *     anything else is the "must match the regular expression" error, and a
 *     suffix that scans but is not known is "unable to parse quantity's
 *     suffix". "", no digits at all (".", "-", "+") parse as 0 except "".
 *   - decimal suffixes: n u m "" k M G T P E; binary: Ki Mi Gi Ti Pi Ei;
 *     otherwise e<int>/E<int> (an int64 exponent truncated to 32 bits, as
 *     Kubernetes stores it in an int32).
 *   - the value is exact, then its magnitude is rounded up (away from zero)
 *     to nano precision; binary-suffixed values are capped at 2^63-1 and a
 *     binary value between 0 and 1 takes the decimal format.
 * The exact value may need more than 128 bits before rounding (long digit
 * strings, large exponents), so the scaling runs on a small fixed-size
 * unsigned big integer; the result must then fit in __int128 nanos.
 */
#include <stdio.h>

#include "model/quantity.h"

typedef unsigned __int128 u128;

#define NANO 1000000000LL
#define INT128_MAX_ ((__int128)(((u128)1 << 127) - 1))
/* Kubernetes caps binary-suffixed quantities at math.MaxInt64 units. */
#define BINARY_CAP_NANOS ((u128)INT64_MAX * (u128)NANO)

#define ERR_FORMAT "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
#define ERR_SUFFIX "unable to parse quantity's suffix"

/* ---- a tiny unsigned big integer, 32-bit limbs, little-endian ---- */

#define BIG_LIMBS 40 /* 1280 bits: 128 digits (426 bits) + 2^60 + 10^60 fit easily */

typedef struct {
        uint32_t l[BIG_LIMBS];
        unsigned n; /* limbs in use; l[n-1] != 0 unless n == 0 */
} big;

static void big_trim(big *b) {
        while (b->n > 0 && b->l[b->n - 1] == 0)
                b->n--;
}

/* b = b * m + a; false on overflow of the fixed size (cannot happen for the
 * bounded inputs this file feeds it, checked anyway). */
static bool big_muladd(big *b, uint32_t m, uint32_t a) {
        uint64_t carry = a;
        for (unsigned i = 0; i < b->n; i++) {
                uint64_t t = (uint64_t)b->l[i] * m + carry;
                b->l[i] = (uint32_t)t;
                carry = t >> 32;
        }
        if (carry) {
                if (b->n >= BIG_LIMBS) return false;
                b->l[b->n++] = (uint32_t)carry;
        }
        big_trim(b);
        return true;
}

/* b = b / d, returns the remainder. */
static uint32_t big_divmod(big *b, uint32_t d) {
        uint64_t rem = 0;
        for (unsigned i = b->n; i-- > 0;) {
                uint64_t cur = (rem << 32) | b->l[i];
                b->l[i] = (uint32_t)(cur / d);
                rem = cur % d;
        }
        big_trim(b);
        return (uint32_t)rem;
}

static bool big_shl(big *b, unsigned bits) {
        while (bits >= 16) {
                if (!big_muladd(b, 1u << 16, 0)) return false;
                bits -= 16;
        }
        return bits == 0 || big_muladd(b, 1u << bits, 0);
}

/* Fits in 128 bits? */
static bool big_to_u128(const big *b, u128 *ret) {
        if (b->n > 4) return false;
        u128 v = 0;
        for (unsigned i = b->n; i-- > 0;)
                v = (v << 32) | b->l[i];
        *ret = v;
        return true;
}

/* ---- parsing ---- */

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

typedef struct {
        bool negative;
        const char *num; /* leading zeros stripped; may be empty */
        size_t num_len;
        const char *denom;
        size_t denom_len;
        const char *suffix;
        size_t suffix_len;
} scanned;

/* Mirrors Kubernetes' hand-written scanner, including its early exits. */
static bool scan(const char *s, size_t end, scanned *r) {
        size_t pos = 0;
        *r = (scanned){.num = "", .denom = "", .suffix = ""};
        if (pos < end && (s[0] == '-' || s[0] == '+')) {
                r->negative = s[0] == '-';
                pos++;
        }
        while (pos < end && s[pos] == '0')
                pos++;
        if (pos >= end) return true;
        size_t start = pos;
        while (pos < end && is_digit(s[pos]))
                pos++;
        r->num = s + start;
        r->num_len = pos - start;
        if (pos >= end) return true;
        if (s[pos] == '.') {
                pos++;
                start = pos;
                while (pos < end && is_digit(s[pos]))
                        pos++;
                r->denom = s + start;
                r->denom_len = pos - start;
                if (pos >= end) return true;
        }
        start = pos;
        while (pos < end && strchr("eEinumkKMGTP", s[pos]))
                pos++;
        if (pos < end && (s[pos] == '-' || s[pos] == '+')) pos++;
        while (pos < end && is_digit(s[pos]))
                pos++;
        if (pos < end) return false;
        r->suffix = s + start;
        r->suffix_len = end - start;
        return true;
}

typedef struct {
        const char *name;
        int base, exponent;
        dp_quantity_format_kind format;
} suffix_entry;

static const suffix_entry suffixes[] = {
        {"n", 10, -9, DP_QUANTITY_DECIMAL_SI}, {"u", 10, -6, DP_QUANTITY_DECIMAL_SI},
        {"m", 10, -3, DP_QUANTITY_DECIMAL_SI}, {"", 10, 0, DP_QUANTITY_DECIMAL_SI},
        {"k", 10, 3, DP_QUANTITY_DECIMAL_SI},  {"M", 10, 6, DP_QUANTITY_DECIMAL_SI},
        {"G", 10, 9, DP_QUANTITY_DECIMAL_SI},  {"T", 10, 12, DP_QUANTITY_DECIMAL_SI},
        {"P", 10, 15, DP_QUANTITY_DECIMAL_SI}, {"E", 10, 18, DP_QUANTITY_DECIMAL_SI},
        {"Ki", 2, 10, DP_QUANTITY_BINARY_SI},  {"Mi", 2, 20, DP_QUANTITY_BINARY_SI},
        {"Gi", 2, 30, DP_QUANTITY_BINARY_SI},  {"Ti", 2, 40, DP_QUANTITY_BINARY_SI},
        {"Pi", 2, 50, DP_QUANTITY_BINARY_SI},  {"Ei", 2, 60, DP_QUANTITY_BINARY_SI},
};

/* Go's strconv.ParseInt(s, 10, 64): optional sign, at least one digit. */
static bool parse_int64(const char *s, size_t len, int64_t *ret) {
        size_t i = 0;
        bool neg = false;
        if (i < len && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
        if (i >= len) return false;
        u128 v = 0;
        for (; i < len; i++) {
                if (!is_digit(s[i])) return false;
                v = v * 10 + (unsigned)(s[i] - '0');
                if (v > (u128)INT64_MAX + 1) return false;
        }
        if (!neg && v > (u128)INT64_MAX) return false;
        *ret = neg ? (int64_t)(0 - (uint64_t)v) : (int64_t)v;
        return true;
}

static bool interpret_suffix(const char *s, size_t len, int *base, int32_t *exponent, dp_quantity_format_kind *format) {
        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++)
                if (strlen(suffixes[i].name) == len && memcmp(suffixes[i].name, s, len) == 0) {
                        *base = suffixes[i].base;
                        *exponent = suffixes[i].exponent;
                        *format = suffixes[i].format;
                        return true;
                }
        if (len > 1 && (s[0] == 'e' || s[0] == 'E')) {
                int64_t e;
                if (!parse_int64(s + 1, len - 1, &e)) return false;
                *base = 10;
                *exponent = (int32_t)(uint32_t)(uint64_t)e; /* Kubernetes keeps an int32 */
                *format = DP_QUANTITY_DECIMAL_EXPONENT;
                return true;
        }
        return false;
}

/* magnitude = digits × 2^e2 × 10^e10, rounded up to an integer.
 * Returns false when the result does not fit in 127 bits. */
static bool scale_magnitude(const scanned *sc, unsigned e2, int64_t e10, u128 *ret) {
        big b = {.n = 0};
        size_t ndigits = 0;
        for (size_t i = 0; i < sc->num_len; i++, ndigits++)
                if (!big_muladd(&b, 10, (uint32_t)(sc->num[i] - '0'))) return false;
        for (size_t i = 0; i < sc->denom_len; i++, ndigits++)
                if (!big_muladd(&b, 10, (uint32_t)(sc->denom[i] - '0'))) return false;
        if (b.n == 0) {
                *ret = 0;
                return true;
        }
        /* A value >= 1 times 10^40 is beyond 2^127; a value below
         * 10^(ndigits) × 2^60 × 10^e10 < 1 rounds up to 1. */
        if (e10 > 40) return false;
        if (e10 < -(int64_t)ndigits - 20) {
                *ret = 1;
                return true;
        }
        if (!big_shl(&b, e2)) return false;
        bool inexact = false;
        for (int64_t i = 0; i < e10; i++)
                if (!big_muladd(&b, 10, 0)) return false;
        for (int64_t i = e10; i < 0; i++)
                if (big_divmod(&b, 10) != 0) inexact = true;
        u128 v;
        if (!big_to_u128(&b, &v)) return false;
        if (inexact) v++;
        if (v > (u128)INT128_MAX_) return false;
        *ret = v;
        return true;
}

int dp_quantity_parse(const char *s, dp_quantity *ret, dp_error *err) {
        assert_return(s, -EINVAL);
        assert_return(ret, -EINVAL);
        size_t len = strlen(s);
        if (len == 0) return dp_error_set(err, -EINVAL, "%s", ERR_FORMAT);
        if (len > DP_QUANTITY_MAX_LEN)
                return dp_error_set(err, -EINVAL, "quantity is longer than %d characters", DP_QUANTITY_MAX_LEN);

        scanned sc;
        if (!scan(s, len, &sc)) return dp_error_set(err, -EINVAL, "invalid quantity \"%s\": %s", s, ERR_FORMAT);
        int base;
        int32_t exponent;
        dp_quantity_format_kind format;
        if (!interpret_suffix(sc.suffix, sc.suffix_len, &base, &exponent, &format))
                return dp_error_set(err, -EINVAL, "invalid quantity \"%s\": %s", s, ERR_SUFFIX);

        u128 mag;
        bool ok;
        if (base == 2)
                ok = scale_magnitude(&sc, (unsigned)exponent, 9 - (int64_t)sc.denom_len, &mag);
        else
                ok = scale_magnitude(&sc, 0, (int64_t)exponent - (int64_t)sc.denom_len + 9, &mag);
        if (!ok)
                return dp_error_set(err, -ERANGE,
                                    "quantity \"%s\" is too large: devplane holds quantities exactly in nano units "
                                    "and the magnitude must stay below about 1.7e29",
                                    s);
        if (format == DP_QUANTITY_BINARY_SI) {
                if (mag > BINARY_CAP_NANOS) mag = BINARY_CAP_NANOS; /* Kubernetes' cap */
                if (mag > 0 && mag < (u128)NANO) format = DP_QUANTITY_DECIMAL_SI;
        }
        *ret = (dp_quantity){sc.negative ? -(__int128)mag : (__int128)mag, format};
        return 0;
}

/* ---- printing ---- */

static size_t u128_to_str(u128 v, char *out) {
        char tmp[48];
        size_t n = 0;
        do {
                tmp[n++] = (char)('0' + (int)(v % 10));
                v /= 10;
        } while (v);
        for (size_t i = 0; i < n; i++)
                out[i] = tmp[n - 1 - i];
        out[n] = 0;
        return n;
}

static const char *decimal_suffix(int e) {
        switch (e) {
        case -9: return "n";
        case -6: return "u";
        case -3: return "m";
        case 0: return "";
        case 3: return "k";
        case 6: return "M";
        case 9: return "G";
        case 12: return "T";
        case 15: return "P";
        case 18: return "E";
        default: return NULL;
        }
}

void dp_quantity_format(const dp_quantity *q, char *buf, size_t size) {
        char out[DP_QUANTITY_MAX_LEN];
        if (!buf || size == 0) return;
        if (!q || q->nanos == 0) {
                snprintf(buf, size, "0");
                return;
        }
        bool neg = q->nanos < 0;
        u128 m = neg ? (u128)0 - (u128)q->nanos : (u128)q->nanos;
        char *p = out;
        if (neg) *p++ = '-';

        dp_quantity_format_kind f = q->format;
        if (f == DP_QUANTITY_BINARY_SI && (m < (u128)1024 * NANO || m % NANO != 0)) f = DP_QUANTITY_DECIMAL_SI;
        if (f == DP_QUANTITY_BINARY_SI) {
                static const char *const bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
                u128 u = m / NANO;
                unsigned t = 0;
                while (t < 6 && u % 1024 == 0) {
                        u /= 1024;
                        t++;
                }
                p += u128_to_str(u, p);
                snprintf(buf, size, "%.*s%s", (int)(p - out), out, bin[t]);
                return;
        }

        /* Decimal: mantissa without trailing zeros, exponent lowered to a
         * multiple of three (never below -9 since the value is in nanos). */
        u128 mant = m;
        int e = -9;
        while (mant % 10 == 0) {
                mant /= 10;
                e++;
        }
        while (((e % 3) + 3) % 3 != 0) {
                mant *= 10;
                e--;
        }
        if (f == DP_QUANTITY_DECIMAL_EXPONENT) {
                p += u128_to_str(mant, p);
                if (e != 0)
                        snprintf(p, sizeof(out) - (size_t)(p - out), "e%d", e);
                else
                        *p = 0;
                snprintf(buf, size, "%s", out);
                return;
        }
        /* Beyond Exa there is no SI suffix: keep "E" and a longer mantissa
         * (Kubernetes would drop the suffix and print a wrong number). */
        while (e > 18) {
                mant *= 10;
                e--;
        }
        p += u128_to_str(mant, p);
        snprintf(buf, size, "%.*s%s", (int)(p - out), out, decimal_suffix(e));
}

/* ---- comparison and arithmetic ---- */

int dp_quantity_cmp(const dp_quantity *a, const dp_quantity *b) {
        return a->nanos < b->nanos ? -1 : a->nanos > b->nanos ? 1 : 0;
}

static int checked(__int128 v, dp_quantity_format_kind f, dp_quantity *ret) {
        /* The most negative value has no positive counterpart: keep the range symmetric. */
        if (v == -INT128_MAX_ - 1) return -ERANGE;
        *ret = (dp_quantity){v, f};
        return 0;
}

int dp_quantity_add(const dp_quantity *a, const dp_quantity *b, dp_quantity *ret) {
        assert_return(a && b && ret, -EINVAL);
        __int128 v;
        if (__builtin_add_overflow(a->nanos, b->nanos, &v)) return -ERANGE;
        return checked(v, a->format, ret);
}

int dp_quantity_sub(const dp_quantity *a, const dp_quantity *b, dp_quantity *ret) {
        assert_return(a && b && ret, -EINVAL);
        __int128 v;
        if (__builtin_sub_overflow(a->nanos, b->nanos, &v)) return -ERANGE;
        return checked(v, a->format, ret);
}

/* nanos / div, rounded away from zero, saturated to int64. */
static int64_t scaled(__int128 nanos, int64_t div) {
        __int128 q = nanos / div;
        if (nanos % div != 0) q += nanos > 0 ? 1 : -1;
        if (q > INT64_MAX) return INT64_MAX;
        if (q < INT64_MIN) return INT64_MIN;
        return (int64_t)q;
}

int64_t dp_quantity_value(const dp_quantity *q) { return scaled(q->nanos, NANO); }
int64_t dp_quantity_milli_value(const dp_quantity *q) { return scaled(q->nanos, 1000000); }
bool dp_quantity_is_integer(const dp_quantity *q) { return q->nanos % NANO == 0; }

double dp_quantity_as_double(const dp_quantity *q) {
        __int128 whole = q->nanos / NANO, frac = q->nanos % NANO;
        return (double)whole + (double)frac / (double)NANO;
}
