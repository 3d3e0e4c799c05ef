/* SPDX-License-Identifier: Apache-2.0
 * Kubernetes CEL libraries used by DRA selectors: Quantity (apiserver
 * pkg/cel/library/quantity.go), Semver (semverlib.go, blang/semver rules),
 * regex find/findAll, the list helpers (isSorted, sum, min, max, indexOf,
 * lastIndexOf) and DRA's `includes`. */
#include <inttypes.h>
#include <math.h>

#include "cel/cel-internal.h"

#define A0 args[0]
#define A1 args[1]
#define FN(name) static cel_value name(cel_ctx *c, const cel_value *args, size_t n)

/* ---- quantity ---- */

/* A quantity value: dp_quantity first so `const dp_quantity *` views work,
 * plus whether Kubernetes would hold it as an int64 with scale >= 0 (the
 * form isInteger/asInteger test). */
typedef struct cel_qty {
        dp_quantity q;
        bool int_form;
        bool ptr; /* made by add()/sub(): a *Quantity upstream */
} cel_qty;

/* Kubernetes' fast parse path keeps int64Amount{value, scale} when the
 * digits fit; scale = exponent - fraction digits (decimal), 0 (binary). */
static bool int_form_of(const char *s, const dp_quantity *q) {
        const char *p = s;
        if (*p == '+' || *p == '-') p++;
        size_t num = 0, den = 0;
        while (*p >= '0' && *p <= '9') {
                num++;
                p++;
        }
        if (*p == '.') {
                p++;
                while (*p >= '0' && *p <= '9') {
                        den++;
                        p++;
                }
        }
        if (streq(s, "0")) return true;
        long exp = 0;
        bool binary = false;
        if (!*p) exp = 0;
        else if (streq(p, "n")) exp = -9;
        else if (streq(p, "u")) exp = -6;
        else if (streq(p, "m")) exp = -3;
        else if (streq(p, "k")) exp = 3;
        else if (streq(p, "M")) exp = 6;
        else if (streq(p, "G")) exp = 9;
        else if (streq(p, "T")) exp = 12;
        else if (streq(p, "P")) exp = 15;
        else if (streq(p, "E")) exp = 18;
        else if (p[0] && p[1] == 'i' && !p[2] && strchr("KMGTPE", p[0])) binary = true;
        else if (*p == 'e' || *p == 'E') exp = strtol(p + 1, NULL, 10);
        else
                return false;
        if (binary) {
                if (den) return false;
                return num <= 15 && q->nanos % 1000000000 == 0 && q->nanos / 1000000000 <= INT64_MAX &&
                       q->nanos / 1000000000 >= INT64_MIN;
        }
        if ((long)num + (long)den > 18) return false;
        if (exp - (long)den < 0) return false;
        __int128 v = q->nanos / 1000000000;
        return v <= INT64_MAX && v >= INT64_MIN && q->nanos % 1000000000 == 0;
}

static cel_value qty_value(cel_ctx *c, const dp_quantity *q, bool int_form) {
        cel_qty *x = cel_alloc(c->arena, sizeof(*x));
        if (!x) return cel_oom(c);
        x->q = *q;
        x->int_form = int_form;
        x->ptr = false;
        return (cel_value){.kind = CV_QUANTITY, .q = &x->q};
}

bool cel_quantity_is_ptr(cel_value v) { return ((const cel_qty *)v.q)->ptr; }

cel_value cel_quantity_value(cel_ctx *c, const dp_quantity *q);
/* A quantity from the API is canonical: an integral value prints without
 * a fraction suffix, so it is held as int64 when it fits. */
cel_value cel_quantity_value(cel_ctx *c, const dp_quantity *q) {
        __int128 w = q->nanos / 1000000000;
        return qty_value(c, q, q->nanos % 1000000000 == 0 && w <= INT64_MAX && w >= INT64_MIN);
}

static bool qty_int(cel_value v) { return ((const cel_qty *)v.q)->int_form; }

static int parse_q(cel_value s, dp_quantity *q, char *buf) {
        if (s.s.n == 0 || s.s.n >= DP_QUANTITY_MAX_LEN || memchr(s.s.p, 0, s.s.n)) return -EINVAL;
        memcpy(buf, s.s.p, s.s.n);
        buf[s.s.n] = 0;
        return dp_quantity_parse(buf, q, NULL);
}

FN(quantity_fn) {
        (void)n;
        dp_quantity q;
        char buf[DP_QUANTITY_MAX_LEN];
        if (parse_q(A0, &q, buf) < 0) return cel_error(c, "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
        return qty_value(c, &q, int_form_of(buf, &q));
}
FN(is_quantity) {
        (void)n;
        (void)c;
        dp_quantity q;
        char buf[DP_QUANTITY_MAX_LEN];
        return cel_bool(parse_q(A0, &q, buf) == 0);
}
FN(q_sign) {
        (void)n;
        (void)c;
        return cel_int(A0.q->nanos < 0 ? -1 : A0.q->nanos > 0);
}
FN(q_is_greater) { (void)n; (void)c; return cel_bool(dp_quantity_cmp(A0.q, A1.q) > 0); }
FN(q_is_less) { (void)n; (void)c; return cel_bool(dp_quantity_cmp(A0.q, A1.q) < 0); }
FN(q_compare) { (void)n; (void)c; return cel_int(dp_quantity_cmp(A0.q, A1.q)); }
static cel_value q_arith(cel_ctx *c, const cel_value *args, bool add) {
        dp_quantity b, r;
        bool bint;
        if (A1.kind == CV_INT) {
                b = dp_quantity_from_int(A1.i, DP_QUANTITY_DECIMAL_EXPONENT);
                bint = true;
        } else {
                b = *A1.q;
                bint = qty_int(A1);
        }
        int e = add ? dp_quantity_add(A0.q, &b, &r) : dp_quantity_sub(A0.q, &b, &r);
        if (e < 0) return cel_error(c, "quantity arithmetic overflow");
        __int128 w = r.nanos / 1000000000;
        bool iform = qty_int(A0) && bint && r.nanos % 1000000000 == 0 && w <= INT64_MAX && w >= INT64_MIN;
        cel_value v = qty_value(c, &r, iform);
        /* upstream's add/sub return *Quantity: not a right-hand side of == */
        if (v.kind == CV_QUANTITY) ((cel_qty *)v.q)->ptr = true;
        return v;
}
FN(q_add) { (void)n; return q_arith(c, args, true); }
FN(q_sub) { (void)n; return q_arith(c, args, false); }
FN(q_is_integer) { (void)n; (void)c; return cel_bool(qty_int(A0)); }
FN(q_as_integer) {
        (void)n;
        if (!qty_int(A0)) return cel_error(c, "cannot convert value to integer");
        return cel_int((int64_t)(A0.q->nanos / 1000000000));
}
FN(q_as_float) { (void)n; (void)c; return cel_double(dp_quantity_as_double(A0.q)); }

/* ---- semver ---- */
static bool all_digits(const char *s, size_t n) {
        if (!n) return false;
        for (size_t i = 0; i < n; i++)
                if (s[i] < '0' || s[i] > '9') return false;
        return true;
}
static bool ident_chars(const char *s, size_t n) {
        if (!n) return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
                      s[i] == '-'))
                        return false;
        return true;
}
static bool parse_num(const char *s, size_t n, uint64_t *ret) {
        if (!all_digits(s, n) || (n > 1 && s[0] == '0')) return false;
        uint64_t v = 0;
        for (size_t i = 0; i < n; i++) {
                unsigned d = (unsigned)(s[i] - '0');
                if (v > (UINT64_MAX - d) / 10) return false; /* blang: ParseUint, up to 2^64-1 */
                v = v * 10 + d;
        }
        *ret = v;
        return true;
}

/* dotted identifiers; prerelease numerics without leading zeros */
static bool check_idents(const char *s, size_t n, bool pre) {
        size_t i = 0;
        for (;;) {
                size_t j = i;
                while (j < n && s[j] != '.') j++;
                if (!ident_chars(s + i, j - i)) return false;
                if (pre && all_digits(s + i, j - i) && j - i > 1 && s[i] == '0') return false;
                if (j >= n) return true;
                i = j + 1;
        }
}

int cel_semver_parse(cel_arena *a, const char *s, size_t n, bool normalize, cel_semver *ret) {
        char buf[256];
        if (n >= sizeof buf / 2) return -EINVAL;
        if (normalize) {
                if (n && (s[0] == 'v' || s[0] == 'V')) {
                        s++;
                        n--;
                }
                size_t core = 0;
                while (core < n && s[core] != '-' && s[core] != '+') core++;
                /* split core, strip leading zeros, pad to 3 parts */
                size_t parts = 0, o = 0, i = 0;
                while (i <= core) {
                        size_t j = i;
                        while (j < core && s[j] != '.') j++;
                        size_t k = i;
                        while (k + 1 < j && s[k] == '0') k++;
                        if (parts) buf[o++] = '.';
                        memcpy(buf + o, s + k, j - k);
                        o += j - k;
                        parts++;
                        if (j >= core) break;
                        i = j + 1;
                }
                if (parts < 3 && core < n) return -EINVAL;
                while (parts < 3) {
                        memcpy(buf + o, ".0", 2);
                        o += 2;
                        parts++;
                }
                memcpy(buf + o, s + core, n - core);
                o += n - core;
                s = buf;
                n = o;
        }
        const char *p = s, *end = s + n;
        uint64_t v[3];
        for (int k = 0; k < 3; k++) {
                const char *q = p;
                while (q < end && *q >= '0' && *q <= '9') q++;
                if (!parse_num(p, (size_t)(q - p), &v[k])) return -EINVAL;
                p = q;
                if (k < 2) {
                        if (p >= end || *p != '.') return -EINVAL;
                        p++;
                }
        }
        const char *pre = NULL, *build = NULL;
        size_t pre_n = 0, build_n = 0;
        if (p < end && *p == '-') {
                p++;
                const char *q = p;
                while (q < end && *q != '+') q++;
                if (!check_idents(p, (size_t)(q - p), true)) return -EINVAL;
                pre = p;
                pre_n = (size_t)(q - p);
                p = q;
        }
        if (p < end && *p == '+') {
                p++;
                if (!check_idents(p, (size_t)(end - p), false)) return -EINVAL;
                build = p;
                build_n = (size_t)(end - p);
                p = end;
        }
        if (p != end) return -EINVAL;
        ret->major = v[0];
        ret->minor = v[1];
        ret->patch = v[2];
        ret->pre = pre ? cel_strndup(a, pre, pre_n) : NULL;
        ret->build = build ? cel_strndup(a, build, build_n) : NULL;
        if ((pre && !ret->pre) || (build && !ret->build)) return -ENOMEM;
        return 0;
}

int cel_semver_cmp(const cel_semver *a, const cel_semver *b) {
        if (a->major != b->major) return a->major < b->major ? -1 : 1;
        if (a->minor != b->minor) return a->minor < b->minor ? -1 : 1;
        if (a->patch != b->patch) return a->patch < b->patch ? -1 : 1;
        if (!a->pre && !b->pre) return 0;
        if (!a->pre) return 1;
        if (!b->pre) return -1;
        const char *x = a->pre, *y = b->pre;
        for (;;) {
                size_t xn = strcspn(x, "."), yn = strcspn(y, ".");
                bool xd = all_digits(x, xn), yd = all_digits(y, yn);
                int r = 0;
                if (xd && yd) {
                        if (xn != yn) r = xn < yn ? -1 : 1;
                        else r = memcmp(x, y, xn);
                } else if (xd)
                        r = -1;
                else if (yd)
                        r = 1;
                else {
                        r = memcmp(x, y, DP_MIN(xn, yn));
                        if (!r && xn != yn) r = xn < yn ? -1 : 1;
                }
                if (r) return r < 0 ? -1 : 1;
                x += xn;
                y += yn;
                if (!*x && !*y) return 0;
                if (!*x) return -1;
                if (!*y) return 1;
                x++;
                y++;
        }
}

static cel_value semver_from(cel_ctx *c, cel_value s, bool normalize, bool test) {
        cel_semver *sv = cel_alloc(c->arena, sizeof(*sv));
        if (!sv) return cel_oom(c);
        int r = cel_semver_parse(c->arena, s.s.p, s.s.n, normalize, sv);
        if (r == -ENOMEM) return cel_oom(c); /* before the test: out of memory is no answer */
        if (test) return cel_bool(r == 0);
        if (r < 0) return cel_error(c, "could not parse semver: %.*s", (int)DP_MIN(s.s.n, 100), s.s.p);
        return (cel_value){.kind = CV_SEMVER, .sv = sv};
}
FN(semver_fn) { return semver_from(c, A0, n > 1 && A1.b, false); }
FN(is_semver) { return semver_from(c, A0, n > 1 && A1.b, true); }
FN(sv_major) { (void)n; (void)c; return cel_int((int64_t)A0.sv->major); }
FN(sv_minor) { (void)n; (void)c; return cel_int((int64_t)A0.sv->minor); }
FN(sv_patch) { (void)n; (void)c; return cel_int((int64_t)A0.sv->patch); }
FN(sv_compare) { (void)n; (void)c; return cel_int(cel_semver_cmp(A0.sv, A1.sv)); }
FN(sv_greater) { (void)n; (void)c; return cel_bool(cel_semver_cmp(A0.sv, A1.sv) > 0); }
FN(sv_less) { (void)n; (void)c; return cel_bool(cel_semver_cmp(A0.sv, A1.sv) < 0); }

/* ---- regex find ---- */
static cel_value find_impl(cel_ctx *c, const cel_value *args, size_t n, bool all) {
        const cel_regex *re = NULL;
        cel_regex *owned = NULL;
        cel_value bad;
        if (cel_regex_get(c, A1, &re, &owned, &bad) < 0) return bad;
        int r = 0;
        int64_t limit = n > 2 ? args[2].i : -1;
        cel_list *l = all ? cel_list_new(c, 0) : NULL;
        cel_value out = cel_str("", 0);
        if (all && !l) {
                cel_regex_free(owned);
                return cel_oom(c);
        }
        size_t pos = 0;
        while (pos <= A0.s.n && (limit < 0 || (int64_t)cel_list_size(l) < limit)) {
                size_t so, eo;
                r = cel_regex_search(re, A0.s.p, A0.s.n, pos, &so, &eo, NULL, NULL, NULL);
                if (r <= 0) break;
                cel_value m = cel_str(A0.s.p + so, eo - so);
                if (!all) {
                        out = m;
                        break;
                }
                if (cel_list_push(c, l, m) < 0) {
                        r = -ENOMEM;
                        break;
                }
                if (eo == so) {
                        /* empty match: step over one code point */
                        eo++;
                        while (eo < A0.s.n && ((unsigned char)A0.s.p[eo] & 0xC0) == 0x80) eo++;
                }
                pos = eo;
        }
        cel_regex_free(owned);
        if (r == -ENOMEM) return cel_oom(c);
        if (r == -E2BIG) return cel_error(c, "regex match limit exceeded");
        if (r < 0) return cel_error(c, "regex match failed");
        return all ? cel_list_value(l) : out;
}
FN(find_fn) { return find_impl(c, args, n, false); }
FN(find_all_fn) { return find_impl(c, args, n, true); }

/* ---- k8s lists ---- */
/* Kubernetes' isSorted: every element must be comparable; a pair that does
 * not compare (mixed types, NaN) does not count as out of order. */
FN(is_sorted) {
        (void)n;
        for (size_t i = 0; i < A0.l->n; i++) {
                uint8_t k = cel_list_at(A0.l, i).kind;
                if (k != CV_INT && k != CV_UINT && k != CV_DOUBLE && k != CV_BOOL && k != CV_STRING && k != CV_BYTES)
                        return cel_error(c, "no such overload: isSorted(list)");
                if (i && cel_value_compare(cel_list_at(A0.l, i - 1), cel_list_at(A0.l, i)) == 1) return cel_bool(false);
        }
        return cel_bool(true);
}
FN(list_sum) {
        (void)n;
        cel_value acc = cel_int(0);
        if (A0.l->n) {
                cel_value f = cel_list_at(A0.l, 0);
                if (f.kind == CV_UINT) acc = cel_uint(0);
                else if (f.kind == CV_DOUBLE) acc = cel_double(0);
        }
        for (size_t i = 0; i < A0.l->n; i++) {
                cel_value pair[2] = {acc, cel_list_at(A0.l, i)};
                acc = cel_call_overload(c, "_+_", pair, 2);
                if (cel_is_err(acc)) return acc;
        }
        return acc;
}
static cel_value min_max(cel_ctx *c, const cel_value *args, bool max) {
        if (!A0.l->n) return cel_error(c, "%s called on empty list", max ? "max" : "min");
        cel_value best = cel_list_at(A0.l, 0);
        for (size_t i = 1; i < A0.l->n; i++) {
                int r = cel_value_compare(cel_list_at(A0.l, i), best);
                if (r == -2) return cel_no_overload(c, max ? "max" : "min");
                if ((max && r > 0) || (!max && r < 0)) best = cel_list_at(A0.l, i);
        }
        return best;
}
FN(list_min) { (void)n; return min_max(c, args, false); }
FN(list_max) { (void)n; return min_max(c, args, true); }
FN(list_index_of) {
        (void)n;
        (void)c;
        for (size_t i = 0; i < A0.l->n; i++)
                if (cel_value_equal(cel_list_at(A0.l, i), A1) == 1) return cel_int((int64_t)i);
        return cel_int(-1);
}
FN(list_last_index_of) {
        (void)n;
        (void)c;
        for (size_t i = A0.l->n; i > 0; i--)
                if (cel_value_equal(cel_list_at(A0.l, i - 1), A1) == 1) return cel_int((int64_t)i - 1);
        return cel_int(-1);
}
FN(includes_fn) {
        (void)n;
        if (A0.kind == CV_LIST) {
                if (A0.l->n > 48) return cel_error(c, "includes: list longer than 48 entries");
                for (size_t i = 0; i < A0.l->n; i++)
                        if (cel_value_equal(cel_list_at(A0.l, i), A1) == 1) return cel_bool(true);
                return cel_bool(false);
        }
        int r = cel_value_equal(A0, A1);
        if (r < 0) return cel_no_overload(c, "includes");
        return cel_bool(r == 1);
}

#define K(fn, id, member, sig, impl, cost) {fn, id, member, 0, sig, impl, cost, CEL_LIB_K8S}
const cel_overload cel_k8s_overloads[] = {
        K("quantity", "string_to_quantity", false, "string->Quantity", quantity_fn, COST_STR0),
        K("isQuantity", "is_quantity_string", false, "string->bool", is_quantity, COST_STR0),
        K("sign", "quantity_sign", false, "Quantity->int", q_sign, COST_ONE),
        K("isGreaterThan", "quantity_is_greater_than", true, "Quantity,Quantity->bool", q_is_greater, COST_ONE),
        K("isLessThan", "quantity_is_less_than", true, "Quantity,Quantity->bool", q_is_less, COST_ONE),
        K("compareTo", "quantity_compare_to", true, "Quantity,Quantity->int", q_compare, COST_ONE),
        K("add", "quantity_add", true, "Quantity,Quantity->Quantity", q_add, COST_ONE),
        K("add", "quantity_add_int", true, "Quantity,int->Quantity", q_add, COST_ONE),
        K("sub", "quantity_sub", true, "Quantity,Quantity->Quantity", q_sub, COST_ONE),
        K("sub", "quantity_sub_int", true, "Quantity,int->Quantity", q_sub, COST_ONE),
        K("isInteger", "quantity_is_integer", true, "Quantity->bool", q_is_integer, COST_ONE),
        K("asInteger", "quantity_as_integer", true, "Quantity->int", q_as_integer, COST_ONE),
        K("asApproximateFloat", "quantity_as_float", true, "Quantity->double", q_as_float, COST_ONE),
        K("semver", "string_to_semver", false, "string->Semver", semver_fn, COST_STR0),
        K("semver", "string_bool_to_semver", false, "string,bool->Semver", semver_fn, COST_STR0),
        K("isSemver", "is_semver_string", false, "string->bool", is_semver, COST_STR0),
        K("isSemver", "is_semver_string_bool", false, "string,bool->bool", is_semver, COST_STR0),
        K("major", "semver_major", true, "Semver->int", sv_major, COST_ONE),
        K("minor", "semver_minor", true, "Semver->int", sv_minor, COST_ONE),
        K("patch", "semver_patch", true, "Semver->int", sv_patch, COST_ONE),
        K("compareTo", "semver_compare_to", true, "Semver,Semver->int", sv_compare, COST_ONE),
        K("isGreaterThan", "semver_is_greater_than", true, "Semver,Semver->bool", sv_greater, COST_ONE),
        K("isLessThan", "semver_is_less_than", true, "Semver,Semver->bool", sv_less, COST_ONE),
        K("find", "string_find_string", true, "string,string->string", find_fn, COST_REGEX),
        K("findAll", "string_find_all_string", true, "string,string->list(string)", find_all_fn, COST_REGEX),
        K("findAll", "string_find_all_string_int", true, "string,string,int->list(string)", find_all_fn, COST_REGEX),
        K("isSorted", "list_is_sorted", true, "list(A)->bool", is_sorted, COST_LIST0),
        K("sum", "list_sum", true, "list(A)->A", list_sum, COST_LIST0),
        K("min", "list_min", true, "list(A)->A", list_min, COST_LIST0),
        K("max", "list_max", true, "list(A)->A", list_max, COST_LIST0),
        K("indexOf", "list_a_index_of_int", true, "list(A),A->int", list_index_of, COST_LIST0),
        K("lastIndexOf", "list_a_last_index_of_int", true, "list(A),A->int", list_last_index_of, COST_LIST0),
        {"includes", "dyn_includes_dyn", true, 0, "dyn,dyn->bool", includes_fn, COST_ONE, CEL_LIB_INCLUDES},
        {NULL, NULL, false, 0, NULL, NULL, COST_ONE, 0},
};
