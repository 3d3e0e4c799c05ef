/* SPDX-License-Identifier: Apache-2.0
 * The CEL standard library: arithmetic with checked int/uint overflow,
 * ordering (across int/uint/double as Kubernetes enables), size, string
 * predicates, conversions, type(), and the optional type's functions. */
#include <inttypes.h>
#include <ctype.h>
#include <math.h>
#include <strings.h>

#include "cel/cel-internal.h"

cel_value cel_opt_of(cel_ctx *c, cel_value v);

#define A0 args[0]
#define A1 args[1]
#define FN(name) static cel_value name(cel_ctx *c, const cel_value *args, size_t n)
#define UNUSED_N (void)n

static cel_value overflow(cel_ctx *c) { return cel_error(c, "integer overflow"); }

/* ---- arithmetic ---- */
FN(add_int) {
        UNUSED_N;
        int64_t r;
        if (__builtin_add_overflow(A0.i, A1.i, &r)) return overflow(c);
        return cel_int(r);
}
FN(sub_int) {
        UNUSED_N;
        int64_t r;
        if (__builtin_sub_overflow(A0.i, A1.i, &r)) return overflow(c);
        return cel_int(r);
}
FN(mul_int) {
        UNUSED_N;
        int64_t r;
        if (__builtin_mul_overflow(A0.i, A1.i, &r)) return overflow(c);
        return cel_int(r);
}
FN(div_int) {
        UNUSED_N;
        if (A1.i == 0) return cel_error(c, "division by zero");
        if (A0.i == INT64_MIN && A1.i == -1) return overflow(c);
        return cel_int(A0.i / A1.i);
}
FN(mod_int) {
        UNUSED_N;
        if (A1.i == 0) return cel_error(c, "modulus by zero");
        if (A0.i == INT64_MIN && A1.i == -1) return overflow(c);
        return cel_int(A0.i % A1.i);
}
FN(neg_int) {
        UNUSED_N;
        if (A0.i == INT64_MIN) return overflow(c);
        return cel_int(-A0.i);
}
FN(add_uint) {
        UNUSED_N;
        uint64_t r;
        if (__builtin_add_overflow(A0.u, A1.u, &r)) return overflow(c);
        return cel_uint(r);
}
FN(sub_uint) {
        UNUSED_N;
        uint64_t r;
        if (__builtin_sub_overflow(A0.u, A1.u, &r)) return overflow(c);
        return cel_uint(r);
}
FN(mul_uint) {
        UNUSED_N;
        uint64_t r;
        if (__builtin_mul_overflow(A0.u, A1.u, &r)) return overflow(c);
        return cel_uint(r);
}
FN(div_uint) {
        UNUSED_N;
        if (A1.u == 0) return cel_error(c, "division by zero");
        return cel_uint(A0.u / A1.u);
}
FN(mod_uint) {
        UNUSED_N;
        if (A1.u == 0) return cel_error(c, "modulus by zero");
        return cel_uint(A0.u % A1.u);
}
FN(add_double) { UNUSED_N; (void)c; return cel_double(A0.d + A1.d); }
FN(sub_double) { UNUSED_N; (void)c; return cel_double(A0.d - A1.d); }
FN(mul_double) { UNUSED_N; (void)c; return cel_double(A0.d * A1.d); }
FN(div_double) { UNUSED_N; (void)c; return cel_double(A0.d / A1.d); }
FN(neg_double) { UNUSED_N; (void)c; return cel_double(-A0.d); }
FN(not_bool) { UNUSED_N; (void)c; return cel_bool(!A0.b); }

FN(add_string) {
        UNUSED_N;
        size_t len = A0.s.n + A1.s.n;
        char *p = cel_alloc(c->arena, len + 1);
        if (!p) return cel_oom(c);
        if (A0.s.n) memcpy(p, A0.s.p, A0.s.n);
        if (A1.s.n) memcpy(p + A0.s.n, A1.s.p, A1.s.n);
        cel_value r = A0;
        r.s.p = p;
        r.s.n = len;
        return r;
}
FN(add_list) { UNUSED_N; return cel_list_concat(c, A0.l, A1.l); }

/* ---- ordering ---- */
static cel_value cmp_op(cel_ctx *c, const cel_value *args, int want_lo, int want_hi) {
        int r = cel_value_compare(A0, A1);
        if (r == -3) return cel_error(c, "NaN values cannot be ordered"); /* cel-go's Compare */
        if (r == -2) return cel_no_overload(c, "comparison");
        return cel_bool(r >= want_lo && r <= want_hi);
}
FN(lt) { UNUSED_N; return cmp_op(c, args, -1, -1); }
FN(le) { UNUSED_N; return cmp_op(c, args, -1, 0); }
FN(gt) { UNUSED_N; return cmp_op(c, args, 1, 1); }
FN(ge) { UNUSED_N; return cmp_op(c, args, 0, 1); }

/* ---- size and string predicates ---- */
FN(size_any) {
        UNUSED_N;
        (void)c;
        switch (A0.kind) {
        case CV_STRING: return cel_int((int64_t)cel_utf8_len(A0.s.p, A0.s.n));
        case CV_BYTES: return cel_int((int64_t)A0.s.n);
        case CV_LIST: return cel_int((int64_t)A0.l->n);
        case CV_MAP: return cel_int((int64_t)A0.m->n);
        default: return cel_no_overload(c, "size");
        }
}

static bool mem_has(const char *h, size_t hn, const char *nd, size_t nn) {
        if (nn == 0) return true;
        if (nn > hn) return false;
        for (size_t i = 0; i + nn <= hn; i++)
                if (!memcmp(h + i, nd, nn)) return true;
        return false;
}
FN(contains) { UNUSED_N; (void)c; return cel_bool(mem_has(A0.s.p, A0.s.n, A1.s.p, A1.s.n)); }
FN(starts_with) {
        UNUSED_N;
        (void)c;
        return cel_bool(A1.s.n <= A0.s.n && (!A1.s.n || !memcmp(A0.s.p, A1.s.p, A1.s.n)));
}
FN(ends_with) {
        UNUSED_N;
        (void)c;
        return cel_bool(A1.s.n <= A0.s.n && (!A1.s.n || !memcmp(A0.s.p + A0.s.n - A1.s.n, A1.s.p, A1.s.n)));
}
FN(matches) { UNUSED_N; return cel_regex_matches(c, A0, A1); }

/* ---- conversions ---- */
/* Go's strconv.ParseInt(s, 10, 64) / ParseUint(s, 10, 64), which cel-go
 * uses: an optional sign (ParseInt only), decimal digits, nothing else. */
static bool parse_i64(const char *s, size_t n, int64_t *ret) {
        size_t i = 0;
        bool neg = false;
        if (n && (s[0] == '+' || s[0] == '-')) {
                neg = s[0] == '-';
                i = 1;
        }
        if (i == n) return false;
        uint64_t v = 0;
        for (; i < n; i++) {
                if (s[i] < '0' || s[i] > '9') return false;
                unsigned d = (unsigned)(s[i] - '0');
                if (v > (UINT64_MAX - d) / 10) return false;
                v = v * 10 + d;
        }
        if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX) return false;
        *ret = neg ? (int64_t)(0 - v) : (int64_t)v;
        return true;
}
static bool parse_u64(const char *s, size_t n, uint64_t *ret) {
        if (n == 0) return false;
        uint64_t v = 0;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9') return false;
                unsigned d = (unsigned)(s[i] - '0');
                if (v > (UINT64_MAX - d) / 10) return false;
                v = v * 10 + d;
        }
        *ret = v;
        return true;
}

static bool is_hex(char ch) { return isdigit((unsigned char)ch) || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F'); }

/* Go's underscoreOK: each '_' sits between two digits (a base prefix
 * counts as a digit). */
static bool underscores_ok(const char *s) {
        char saw = '^';
        size_t i = 0;
        if (s[0] == '+' || s[0] == '-') i++;
        bool hex = false;
        if (s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X' || s[i + 1] == 'b' || s[i + 1] == 'B' ||
                            s[i + 1] == 'o' || s[i + 1] == 'O')) {
                hex = s[i + 1] == 'x' || s[i + 1] == 'X';
                i += 2;
                saw = '0';
        }
        for (; s[i]; i++) {
                if (isdigit((unsigned char)s[i]) || (hex && is_hex(s[i]))) {
                        saw = '0';
                        continue;
                }
                if (s[i] == '_') {
                        if (saw != '0') return false;
                        saw = '_';
                        continue;
                }
                if (saw == '_') return false;
                saw = '!';
        }
        return saw != '_';
}

/* Go's strconv.ParseFloat(s, 64) syntax: [+-] then inf, infinity or nan
 * (any case), a decimal mantissa with an optional exponent, or a hex
 * mantissa with a mandatory p exponent; '_' between digits; out of range
 * is an error. */
static bool parse_go_double(const char *in, size_t n, double *ret) {
        char buf[128];
        size_t m = 0;
        if (n == 0 || n >= sizeof buf || memchr(in, 0, n)) return false;
        memcpy(buf, in, n);
        buf[n] = 0;
        if (memchr(buf, '_', n)) {
                if (!underscores_ok(buf)) return false;
                for (size_t i = 0; i < n; i++)
                        if (buf[i] != '_') buf[m++] = buf[i];
                buf[m] = 0;
        } else
                m = n;
        const char *p = buf;
        if (*p == '+' || *p == '-') p++;
        if (!strcasecmp(p, "inf") || !strcasecmp(p, "infinity")) {
                *ret = buf[0] == '-' ? -INFINITY : INFINITY;
                return true;
        }
        if (!strcasecmp(buf, "nan")) {
                *ret = NAN;
                return true;
        }
        const char *q = p;
        bool hex = q[0] == '0' && (q[1] == 'x' || q[1] == 'X');
        size_t digits = 0;
        if (hex) q += 2;
        while (hex ? is_hex(*q) : isdigit((unsigned char)*q)) q++, digits++;
        if (*q == '.') {
                q++;
                while (hex ? is_hex(*q) : isdigit((unsigned char)*q)) q++, digits++;
        }
        if (!digits) return false;
        if (hex ? (*q == 'p' || *q == 'P') : (*q == 'e' || *q == 'E')) {
                q++;
                if (*q == '+' || *q == '-') q++;
                if (!isdigit((unsigned char)*q)) return false;
                while (isdigit((unsigned char)*q)) q++;
        } else if (hex)
                return false;
        if (*q) return false;
        char *end;
        double d = strtod(buf, &end);
        if (*end || isinf(d)) return false;
        *ret = d;
        return true;
}

FN(to_int) {
        UNUSED_N;
        switch (A0.kind) {
        case CV_INT: return A0;
        case CV_UINT:
                if (A0.u > INT64_MAX) return cel_error(c, "integer overflow");
                return cel_int((int64_t)A0.u);
        case CV_DOUBLE:
                if (!(A0.d > -9223372036854775808.0 && A0.d < 9223372036854775808.0))
                        return cel_error(c, "integer overflow");
                return cel_int((int64_t)A0.d);
        case CV_STRING: {
                int64_t v;
                if (!parse_i64(A0.s.p, A0.s.n, &v)) return cel_error(c, "type conversion error from 'string' to 'int'");
                return cel_int(v);
        }
        default: return cel_no_overload(c, "int");
        }
}
FN(to_uint) {
        UNUSED_N;
        switch (A0.kind) {
        case CV_UINT: return A0;
        case CV_INT:
                if (A0.i < 0) return cel_error(c, "integer overflow");
                return cel_uint((uint64_t)A0.i);
        case CV_DOUBLE:
                if (!(A0.d >= 0 && A0.d < 18446744073709551616.0)) return cel_error(c, "unsigned integer overflow");
                return cel_uint((uint64_t)A0.d);
        case CV_STRING: {
                uint64_t v;
                if (!parse_u64(A0.s.p, A0.s.n, &v)) return cel_error(c, "type conversion error from 'string' to 'uint'");
                return cel_uint(v);
        }
        default: return cel_no_overload(c, "uint");
        }
}
FN(to_double) {
        UNUSED_N;
        switch (A0.kind) {
        case CV_DOUBLE: return A0;
        case CV_INT: return cel_double((double)A0.i);
        case CV_UINT: return cel_double((double)A0.u);
        case CV_STRING: {
                double d;
                if (!parse_go_double(A0.s.p, A0.s.n, &d)) return cel_error(c, "type conversion error from 'string' to 'double'");
                return cel_double(d);
        }
        default: return cel_no_overload(c, "double");
        }
}
FN(to_string) { UNUSED_N; return cel_value_to_string(c, A0); }
FN(to_bytes) {
        UNUSED_N;
        (void)c;
        return cel_bytes(A0.s.p, A0.s.n);
}
FN(to_bool) {
        UNUSED_N;
        if (A0.kind == CV_BOOL) return A0;
        static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
        static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False"};
        for (size_t i = 0; i < ELEMENTSOF(t); i++) {
                if (A0.s.n == strlen(t[i]) && !memcmp(A0.s.p, t[i], A0.s.n)) return cel_bool(true);
                if (A0.s.n == strlen(f[i]) && !memcmp(A0.s.p, f[i], A0.s.n)) return cel_bool(false);
        }
        return cel_error(c, "cannot convert string to bool");
}
FN(identity) { UNUSED_N; (void)c; return A0; }
FN(type_of) { UNUSED_N; return cel_typev(cel_value_type(c, A0)); }

/* ---- optionals ---- */
FN(opt_of) { UNUSED_N; return cel_opt_of(c, A0); }
FN(opt_none) { UNUSED_N; (void)c; (void)args; return (cel_value){.kind = CV_OPTIONAL, .opt = NULL}; }
/* optional library v2: the first/last element of a list, if any */
FN(list_first) {
        UNUSED_N;
        if (!A0.l->n) return (cel_value){.kind = CV_OPTIONAL, .opt = NULL};
        return cel_opt_of(c, cel_list_at(A0.l, 0));
}
FN(list_last) {
        UNUSED_N;
        if (!A0.l->n) return (cel_value){.kind = CV_OPTIONAL, .opt = NULL};
        return cel_opt_of(c, cel_list_at(A0.l, A0.l->n - 1));
}
static bool is_zero(cel_value v) {
        switch (v.kind) {
        case CV_NULL: return true;
        case CV_BOOL: return !v.b;
        case CV_INT: return v.i == 0;
        case CV_UINT: return v.u == 0;
        case CV_DOUBLE: return v.d == 0;
        case CV_STRING:
        case CV_BYTES: return v.s.n == 0;
        case CV_LIST: return v.l->n == 0;
        case CV_MAP: return v.m->n == 0;
        default: return false;
        }
}
FN(opt_of_nonzero) {
        UNUSED_N;
        if (is_zero(A0)) return (cel_value){.kind = CV_OPTIONAL, .opt = NULL};
        return cel_opt_of(c, A0);
}
FN(opt_has_value) { UNUSED_N; (void)c; return cel_bool(A0.opt != NULL); }
FN(opt_value) {
        UNUSED_N;
        if (!A0.opt) return cel_error(c, "optional.none() dereference");
        return *A0.opt;
}
FN(opt_or) { UNUSED_N; (void)c; return A0.opt ? A0 : A1; }
FN(opt_or_value) { UNUSED_N; (void)c; return A0.opt ? *A0.opt : A1; }
FN(opt_unwrap) {
        UNUSED_N;
        cel_list *l = cel_list_new(c, A0.l->n);
        if (!l) return cel_oom(c);
        for (size_t i = 0; i < A0.l->n; i++) {
                cel_value v = cel_list_at(A0.l, i);
                if (v.kind != CV_OPTIONAL) return cel_no_overload(c, "optional.unwrap");
                if (v.opt && cel_list_push(c, l, *v.opt) < 0) return cel_oom(c);
        }
        return cel_list_value(l);
}

#define G(fn, id, sig, impl) {fn, id, false, 0, sig, impl, COST_ONE, CEL_LIB_STD}
#define M(fn, id, sig, impl) {fn, id, true, 0, sig, impl, COST_ONE, CEL_LIB_STD}
#define GC(fn, id, sig, impl, cost) {fn, id, false, 0, sig, impl, cost, CEL_LIB_STD}
#define MC(fn, id, sig, impl, cost) {fn, id, true, 0, sig, impl, cost, CEL_LIB_STD}
#define CMP(fn, id, impl)                                                                                   \
        G(fn, id "_int64", "int,int->bool", impl), G(fn, id "_uint64", "uint,uint->bool", impl),            \
        G(fn, id "_double", "double,double->bool", impl), GC(fn, id "_string", "string,string->bool", impl, COST_EQ), \
        GC(fn, id "_bytes", "bytes,bytes->bool", impl, COST_EQ), G(fn, id "_bool", "bool,bool->bool", impl), \
        G(fn, id "_int64_uint64", "int,uint->bool", impl), G(fn, id "_int64_double", "int,double->bool", impl), \
        G(fn, id "_uint64_int64", "uint,int->bool", impl), G(fn, id "_uint64_double", "uint,double->bool", impl), \
        G(fn, id "_double_int64", "double,int->bool", impl), G(fn, id "_double_uint64", "double,uint->bool", impl)

const cel_overload cel_std_overloads[] = {
        G("_+_", "add_int64", "int,int->int", add_int),
        G("_+_", "add_uint64", "uint,uint->uint", add_uint),
        G("_+_", "add_double", "double,double->double", add_double),
        GC("_+_", "add_string", "string,string->string", add_string, COST_STRSUM),
        GC("_+_", "add_bytes", "bytes,bytes->bytes", add_string, COST_STRSUM),
        G("_+_", "add_list", "list(A),list(A)->list(A)", add_list),
        G("_-_", "subtract_int64", "int,int->int", sub_int),
        G("_-_", "subtract_uint64", "uint,uint->uint", sub_uint),
        G("_-_", "subtract_double", "double,double->double", sub_double),
        G("_*_", "multiply_int64", "int,int->int", mul_int),
        G("_*_", "multiply_uint64", "uint,uint->uint", mul_uint),
        G("_*_", "multiply_double", "double,double->double", mul_double),
        G("_/_", "divide_int64", "int,int->int", div_int),
        G("_/_", "divide_uint64", "uint,uint->uint", div_uint),
        G("_/_", "divide_double", "double,double->double", div_double),
        G("_%_", "modulo_int64", "int,int->int", mod_int),
        G("_%_", "modulo_uint64", "uint,uint->uint", mod_uint),
        G("-_", "negate_int64", "int->int", neg_int),
        G("-_", "negate_double", "double->double", neg_double),
        G("!_", "logical_not", "bool->bool", not_bool),
        CMP("_<_", "less", lt),
        CMP("_<=_", "less_equals", le),
        CMP("_>_", "greater", gt),
        CMP("_>=_", "greater_equals", ge),
        G("size", "size_string", "string->int", size_any),
        G("size", "size_bytes", "bytes->int", size_any),
        G("size", "size_list", "list(A)->int", size_any),
        G("size", "size_map", "map(A,B)->int", size_any),
        M("size", "string_size", "string->int", size_any),
        M("size", "bytes_size", "bytes->int", size_any),
        M("size", "list_size", "list(A)->int", size_any),
        M("size", "map_size", "map(A,B)->int", size_any),
        MC("contains", "contains_string", "string,string->bool", contains, COST_STRPROD),
        MC("startsWith", "starts_with_string", "string,string->bool", starts_with, COST_STR0),
        MC("endsWith", "ends_with_string", "string,string->bool", ends_with, COST_STR0),
        MC("matches", "matches_string", "string,string->bool", matches, COST_REGEX),
        GC("matches", "matches", "string,string->bool", matches, COST_REGEX),
        G("int", "int64_to_int64", "int->int", to_int),
        G("int", "uint64_to_int64", "uint->int", to_int),
        G("int", "double_to_int64", "double->int", to_int),
        G("int", "string_to_int64", "string->int", to_int),
        G("uint", "uint64_to_uint64", "uint->uint", to_uint),
        G("uint", "int64_to_uint64", "int->uint", to_uint),
        G("uint", "double_to_uint64", "double->uint", to_uint),
        G("uint", "string_to_uint64", "string->uint", to_uint),
        G("double", "double_to_double", "double->double", to_double),
        G("double", "int64_to_double", "int->double", to_double),
        G("double", "uint64_to_double", "uint->double", to_double),
        G("double", "string_to_double", "string->double", to_double),
        G("string", "string_to_string", "string->string", to_string),
        G("string", "int64_to_string", "int->string", to_string),
        G("string", "uint64_to_string", "uint->string", to_string),
        G("string", "double_to_string", "double->string", to_string),
        G("string", "bool_to_string", "bool->string", to_string),
        GC("string", "bytes_to_string", "bytes->string", to_string, COST_STR0),
        G("bytes", "bytes_to_bytes", "bytes->bytes", to_bytes),
        GC("bytes", "string_to_bytes", "string->bytes", to_bytes, COST_STR0),
        G("bool", "bool_to_bool", "bool->bool", to_bool),
        G("bool", "string_to_bool", "string->bool", to_bool),
        G("dyn", "to_dyn", "A->dyn", identity),
        G("type", "type", "A->type(A)", type_of),
        {"optional.of", "optional_of", false, 0, "A->optional(A)", opt_of, COST_ONE, CEL_LIB_OPTIONAL},
        {"optional.ofNonZeroValue", "optional_ofNonZeroValue", false, 0, "A->optional(A)", opt_of_nonzero, COST_ONE,
         CEL_LIB_OPTIONAL},
        {"optional.none", "optional_none", false, 0, "->optional(A)", opt_none, COST_ONE, CEL_LIB_OPTIONAL},
        {"hasValue", "optional_hasValue", true, 0, "optional(A)->bool", opt_has_value, COST_ONE, CEL_LIB_OPTIONAL},
        {"value", "optional_value", true, 0, "optional(A)->A", opt_value, COST_ONE, CEL_LIB_OPTIONAL},
        {"or", "optional_or_optional", true, 0, "optional(A),optional(A)->optional(A)", opt_or, COST_ONE, CEL_LIB_OPTIONAL},
        {"orValue", "optional_orValue_value", true, 0, "optional(A),A->A", opt_or_value, COST_ONE, CEL_LIB_OPTIONAL},
        {"optional.unwrap", "optional_unwrap", false, 0, "list(optional(A))->list(A)", opt_unwrap, COST_ONE,
         CEL_LIB_OPTIONAL},
        {"first", "optional_list_first", true, 0, "list(A)->optional(A)", list_first, COST_ONE, CEL_LIB_OPTIONAL},
        {"last", "optional_list_last", true, 0, "list(A)->optional(A)", list_last, COST_ONE, CEL_LIB_OPTIONAL},
        {"unwrapOpt", "optional_unwrapOpt", true, 0, "list(optional(A))->list(A)", opt_unwrap, COST_ONE, CEL_LIB_OPTIONAL},
        {NULL, NULL, false, 0, NULL, NULL, COST_ONE, 0},
};
