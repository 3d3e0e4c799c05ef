/* SPDX-License-Identifier: Apache-2.0
 * CEL values: lists and maps (append-only stores shared by headers so
 * comprehension accumulators grow in amortized O(1)), heterogeneous
 * equality, ordering, rendering, and UTF-8 helpers. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "base/utf8.h"
#include "cel/cel-internal.h"

const cel_type cel_t_dyn = {CT_DYN, {NULL, NULL}, NULL}, cel_t_any = {CT_DYN, {NULL, NULL}, "any"}, cel_t_error = {CT_ERROR, {NULL, NULL}, NULL},
               cel_t_null = {CT_NULL, {NULL, NULL}, NULL}, cel_t_bool = {CT_BOOL, {NULL, NULL}, NULL},
               cel_t_int = {CT_INT, {NULL, NULL}, NULL}, cel_t_uint = {CT_UINT, {NULL, NULL}, NULL},
               cel_t_double = {CT_DOUBLE, {NULL, NULL}, NULL}, cel_t_string = {CT_STRING, {NULL, NULL}, NULL},
               cel_t_bytes = {CT_BYTES, {NULL, NULL}, NULL}, cel_t_quantity = {CT_QUANTITY, {NULL, NULL}, NULL},
               cel_t_semver = {CT_SEMVER, {NULL, NULL}, NULL}, cel_t_ip = {CT_IP, {NULL, NULL}, NULL},
               cel_t_cidr = {CT_CIDR, {NULL, NULL}, NULL}, cel_t_url = {CT_URL, {NULL, NULL}, NULL},
               cel_t_device = {CT_DEVICE, {NULL, NULL}, NULL}, cel_t_timestamp = {CT_TIMESTAMP, {NULL, NULL}, NULL},
               cel_t_duration = {CT_DURATION, {NULL, NULL}, NULL};

static const cel_type t_list_dyn = {CT_LIST, {&cel_t_dyn, NULL}, NULL};
static const cel_type t_map_dyn = {CT_MAP, {&cel_t_dyn, &cel_t_dyn}, NULL};
static const cel_type t_type_dyn = {CT_TYPE, {NULL, NULL}, NULL};
static const cel_type t_opt_dyn = {CT_OPTIONAL, {&cel_t_dyn, NULL}, NULL};

/* The name of a type without its parameters ("list" for list(int)). */
static const char *type_head(const cel_type *t) {
        static const char *const names[] = {
                [CT_DYN] = "dyn",           [CT_ERROR] = "*error*",      [CT_NULL] = "null_type",
                [CT_BOOL] = "bool",         [CT_INT] = "int",            [CT_UINT] = "uint",
                [CT_DOUBLE] = "double",     [CT_STRING] = "string",      [CT_BYTES] = "bytes",
                [CT_LIST] = "list",         [CT_MAP] = "map",            [CT_TYPE] = "type",
                [CT_OPTIONAL] = "optional_type", [CT_QUANTITY] = "kubernetes.Quantity",
                [CT_SEMVER] = "kubernetes.Semver", [CT_IP] = "net.IP",   [CT_CIDR] = "net.CIDR",
                [CT_URL] = "kubernetes.URL", [CT_DEVICE] = "kubernetes.DRADevice", [CT_PARAM] = "",
                [CT_MESSAGE] = "",          [CT_TIMESTAMP] = "google.protobuf.Timestamp",
                [CT_DURATION] = "google.protobuf.Duration",
        };
        if (!t) return "dyn";
        if (t == &cel_t_any) return "any";
        if (t->kind == CT_PARAM || t->kind == CT_MESSAGE) return t->name;
        return names[t->kind];
}

void cel_type_format(dp_strbuf *sb, const cel_type *t) {
        dp_strbuf_puts(sb, type_head(t));
        if (!t || t->kind == CT_PARAM || t->kind == CT_MESSAGE) return;
        int np = t->kind == CT_LIST || t->kind == CT_OPTIONAL ? 1 : t->kind == CT_MAP ? 2 : t->kind == CT_TYPE && t->p[0] ? 1 : 0;
        if (np) {
                dp_strbuf_putc(sb, '(');
                for (int i = 0; i < np; i++) {
                        if (i) dp_strbuf_puts(sb, ", ");
                        cel_type_format(sb, t->p[i]);
                }
                dp_strbuf_putc(sb, ')');
        }
}

const char *cel_kind_name(uint8_t kind) {
        static const char *const n[] = {
                [CV_ERROR] = "error",   [CV_NULL] = "null_type", [CV_BOOL] = "bool",       [CV_INT] = "int",
                [CV_UINT] = "uint",     [CV_DOUBLE] = "double",  [CV_STRING] = "string",   [CV_BYTES] = "bytes",
                [CV_LIST] = "list",     [CV_MAP] = "map",        [CV_TYPE] = "type",       [CV_OPTIONAL] = "optional_type",
                [CV_QUANTITY] = "kubernetes.Quantity", [CV_SEMVER] = "kubernetes.Semver", [CV_IP] = "net.IP",
                [CV_CIDR] = "net.CIDR", [CV_URL] = "kubernetes.URL", [CV_DEVICE] = "kubernetes.DRADevice",
                [CV_UNKNOWN] = "unknown",
        };
        return kind < ELEMENTSOF(n) && n[kind] ? n[kind] : "?";
}

const cel_type *cel_value_type(cel_ctx *c, cel_value v) {
        switch (v.kind) {
        case CV_NULL: return &cel_t_null;
        case CV_BOOL: return &cel_t_bool;
        case CV_INT: return &cel_t_int;
        case CV_UINT: return &cel_t_uint;
        case CV_DOUBLE: return &cel_t_double;
        case CV_STRING: return &cel_t_string;
        case CV_BYTES: return &cel_t_bytes;
        case CV_LIST: return &t_list_dyn;
        case CV_MAP: return &t_map_dyn;
        case CV_TYPE: return &t_type_dyn;
        case CV_OPTIONAL: return &t_opt_dyn;
        case CV_QUANTITY: return &cel_t_quantity;
        case CV_SEMVER: return &cel_t_semver;
        case CV_IP: return &cel_t_ip;
        case CV_CIDR: return &cel_t_cidr;
        case CV_URL: return &cel_t_url;
        case CV_DEVICE: return &cel_t_device;
        default: return &cel_t_dyn;
        }
}

/* ---- errors ---- */
cel_value cel_error(cel_ctx *c, const char *fmt, ...) {
        char buf[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        char *m = cel_strndup(c->arena, buf, strlen(buf));
        if (!m) return cel_oom(c);
        return (cel_value){.kind = CV_ERROR, .err = m};
}

cel_value cel_no_overload(cel_ctx *c, const char *fn) {
        return cel_error(c, "no such overload: %s", fn);
}

cel_value cel_oom(cel_ctx *c) {
        if (!c->fatal) {
                c->fatal = -ENOMEM;
                c->fatal_msg = "out of memory (evaluation memory limit)";
        }
        return (cel_value){.kind = CV_ERROR, .err = "out of memory"};
}

/* ---- lists ---- */
cel_list *cel_list_new(cel_ctx *c, size_t cap) {
        cel_list *l = cel_alloc(c->arena, sizeof(*l));
        cel_list_store *s = cel_alloc(c->arena, sizeof(*s));
        if (!l || !s) return NULL;
        if (cap) {
                size_t bytes;
                if (dp_mul_overflow(cap, sizeof(cel_value), &bytes)) return NULL;
                s->items = cel_alloc(c->arena, bytes);
                if (!s->items) return NULL;
        }
        s->cap = cap;
        l->store = s;
        return l;
}

static int store_reserve(cel_ctx *c, cel_list_store *s, size_t need) {
        if (need <= s->cap) return 0;
        size_t cap = DP_MAX(need, s->cap * 2);
        if (cap < 4) cap = 4;
        size_t bytes;
        if (dp_mul_overflow(cap, sizeof(cel_value), &bytes)) return -ENOMEM;
        cel_value *n = cel_alloc(c->arena, bytes);
        if (!n) return -ENOMEM;
        if (s->used) memcpy(n, s->items, s->used * sizeof(cel_value));
        s->items = n;
        s->cap = cap;
        return 0;
}

int cel_list_push(cel_ctx *c, cel_list *l, cel_value v) {
        cel_list_store *s = l->store;
        assert(l->n == s->used);
        if (store_reserve(c, s, s->used + 1) < 0) return -ENOMEM;
        s->items[s->used++] = v;
        l->n = s->used;
        return 0;
}

cel_value cel_list_value(const cel_list *l) { return (cel_value){.kind = CV_LIST, .l = l}; }

cel_value cel_list_concat(cel_ctx *c, const cel_list *a, const cel_list *b) {
        if (b->n == 0) return cel_list_value(a);
        if (a->n == 0) return cel_list_value(b);
        cel_list *r = cel_alloc(c->arena, sizeof(*r));
        if (!r) return cel_oom(c);
        cel_list_store *s = a->store;
        if (a->n == s->used) {
                /* nobody extended a's store past a: append in place and share it */
                cel_value *bi = b->store->items; /* may move if b shares a's store */
                if (store_reserve(c, s, s->used + b->n) < 0) return cel_oom(c);
                if (b->store == s) bi = s->items;
                memmove(s->items + s->used, bi, b->n * sizeof(cel_value));
                s->used += b->n;
                r->store = s;
                r->n = s->used;
                return cel_list_value(r);
        }
        cel_list *n = cel_list_new(c, a->n + b->n);
        if (!n) return cel_oom(c);
        memcpy(n->store->items, a->store->items, a->n * sizeof(cel_value));
        memcpy(n->store->items + a->n, b->store->items, b->n * sizeof(cel_value));
        n->store->used = n->n = a->n + b->n;
        return cel_list_value(n);
}

/* ---- maps ---- */
cel_map *cel_map_new(cel_ctx *c, size_t cap) {
        cel_map *m = cel_alloc(c->arena, sizeof(*m));
        cel_map_store *s = cel_alloc(c->arena, sizeof(*s));
        if (!m || !s) return NULL;
        m->store = s;
        (void)cap;
        return m;
}

static uint64_t key_hash(cel_value k) {
        uint64_t h = 0xcbf29ce484222325ULL;
        switch (k.kind) {
        case CV_STRING:
                for (size_t i = 0; i < k.s.n; i++) h = (h ^ (unsigned char)k.s.p[i]) * 0x100000001b3ULL;
                return h;
        case CV_BOOL: return k.b ? 1 : 2;
        case CV_INT: return (uint64_t)k.i * 0x9E3779B97F4A7C15ULL;
        case CV_UINT: return k.u * 0x9E3779B97F4A7C15ULL;
        case CV_DOUBLE:
                if (k.d >= -9.3e18 && k.d <= 9.3e18 && k.d == (double)(int64_t)k.d)
                        return (uint64_t)(int64_t)k.d * 0x9E3779B97F4A7C15ULL;
                if (k.d >= 0 && k.d < 1.8e19 && k.d == (double)(uint64_t)k.d) return (uint64_t)k.d * 0x9E3779B97F4A7C15ULL;
                return 7;
        default: return 3;
        }
}

/* cel-go's map Find: the key as it is, then an int or uint of the same
 * value (a double only when it converts losslessly); an int never finds a
 * double key; list and map keys are Go pointers upstream, found only by the
 * very same value (a map compared with itself). */
static bool key_eq(cel_value stored, cel_value k) {
        switch (k.kind) {
        case CV_INT:
                if (stored.kind == CV_INT) return stored.i == k.i;
                return stored.kind == CV_UINT && k.i >= 0 && stored.u == (uint64_t)k.i;
        case CV_UINT:
                if (stored.kind == CV_UINT) return stored.u == k.u;
                return stored.kind == CV_INT && stored.i >= 0 && (uint64_t)stored.i == k.u;
        case CV_DOUBLE:
                if (stored.kind == CV_DOUBLE) return stored.d == k.d;
                if (stored.kind == CV_INT) return k.d >= -9223372036854775808.0 && k.d < 9223372036854775808.0 &&
                                                  (double)(int64_t)k.d == k.d && (int64_t)k.d == stored.i;
                if (stored.kind == CV_UINT) return k.d >= 0 && k.d < 18446744073709551616.0 &&
                                                   (double)(uint64_t)k.d == k.d && (uint64_t)k.d == stored.u;
                return false;
        case CV_LIST: return stored.kind == CV_LIST && stored.l == k.l;
        case CV_MAP: return stored.kind == CV_MAP && stored.m == k.m;
        default: return stored.kind == k.kind && cel_value_equal(stored, k) == 1;
        }
}

static void index_insert(cel_map_store *s, size_t i) {
        size_t mask = s->n_index - 1, h = key_hash(s->keys[i]) & mask;
        while (s->index[h]) h = (h + 1) & mask;
        s->index[h] = (uint32_t)(i + 1);
}

static int map_reindex(cel_ctx *c, cel_map_store *s) {
        size_t n = 64;
        while (n < s->used * 2) n *= 2;
        uint32_t *idx = cel_alloc(c->arena, n * sizeof(uint32_t));
        if (!idx) return -ENOMEM;
        s->index = idx;
        s->n_index = n;
        for (size_t i = 0; i < s->used; i++) index_insert(s, i);
        s->indexed = s->used;
        return 0;
}

static const cel_value *store_find(const cel_map_store *s, size_t n, cel_value k, size_t *ret_i) {
        if (s->index && s->indexed >= n) {
                size_t mask = s->n_index - 1, h = key_hash(k) & mask;
                while (s->index[h]) {
                        size_t i = s->index[h] - 1;
                        if (i < n && key_eq(s->keys[i], k)) {
                                if (ret_i) *ret_i = i;
                                return &s->vals[i];
                        }
                        h = (h + 1) & mask;
                }
                return NULL;
        }
        for (size_t i = 0; i < n; i++)
                if (key_eq(s->keys[i], k)) {
                        if (ret_i) *ret_i = i;
                        return &s->vals[i];
                }
        return NULL;
}

const cel_value *cel_map_get(const cel_map *m, cel_value k) {
        if (!m) return NULL;
        return store_find(m->store, m->n, k, NULL);
}

int cel_map_put(cel_ctx *c, cel_map *m, cel_value k, cel_value v) {
        cel_map_store *s = m->store;
        assert(m->n == s->used);
        if (store_find(s, m->n, k, NULL)) return -EEXIST;
        if (s->used == s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 4;
                cel_value *nk = cel_alloc(c->arena, cap * sizeof(cel_value));
                cel_value *nv = cel_alloc(c->arena, cap * sizeof(cel_value));
                if (!nk || !nv) return -ENOMEM;
                if (s->used) {
                        memcpy(nk, s->keys, s->used * sizeof(cel_value));
                        memcpy(nv, s->vals, s->used * sizeof(cel_value));
                }
                s->keys = nk;
                s->vals = nv;
                s->cap = cap;
        }
        s->keys[s->used] = k;
        s->vals[s->used] = v;
        s->used++;
        m->n = s->used;
        if (s->used > 16) {
                if (!s->index || s->used * 2 > s->n_index) {
                        if (map_reindex(c, s) < 0) return -ENOMEM;
                } else {
                        index_insert(s, s->used - 1);
                        s->indexed = s->used;
                }
        }
        return 0;
}

int cel_map_set(cel_ctx *c, cel_map *m, cel_value k, cel_value v) {
        size_t i;
        if (store_find(m->store, m->n, k, &i)) {
                m->store->vals[i] = v;
                return 0;
        }
        return cel_map_put(c, m, k, v);
}

cel_value cel_map_value(const cel_map *m) { return (cel_value){.kind = CV_MAP, .m = m}; }

/* ---- equality and ordering ---- */
static int num_cmp(cel_value a, cel_value b, bool *ok) {
        *ok = true;
        if (a.kind == CV_INT && b.kind == CV_INT) return a.i < b.i ? -1 : a.i > b.i;
        if (a.kind == CV_UINT && b.kind == CV_UINT) return a.u < b.u ? -1 : a.u > b.u;
        if (a.kind == CV_INT && b.kind == CV_UINT) return a.i < 0 ? -1 : ((uint64_t)a.i < b.u ? -1 : (uint64_t)a.i > b.u);
        if (a.kind == CV_UINT && b.kind == CV_INT) return b.i < 0 ? 1 : (a.u < (uint64_t)b.i ? -1 : a.u > (uint64_t)b.i);
        double x, y;
        if (a.kind == CV_DOUBLE && b.kind == CV_DOUBLE) {
                x = a.d;
                y = b.d;
        } else if (a.kind == CV_DOUBLE) {
                x = a.d;
                if (isnan(x)) {
                        *ok = false;
                        return 0;
                }
                /* cel-go: out-of-range doubles order outside, else compare as doubles */
                if (b.kind == CV_INT) {
                        if (x < -9223372036854775808.0) return -1;
                        if (x > 9223372036854775807.0) return 1;
                        y = (double)b.i;
                } else {
                        if (x < 0) return -1;
                        if (x > 18446744073709551615.0) return 1;
                        y = (double)b.u;
                }
                return x < y ? -1 : x > y;
        } else {
                int r = num_cmp(b, a, ok);
                return -r;
        }
        if (isnan(x) || isnan(y)) {
                *ok = false;
                return 0;
        }
        return x < y ? -1 : x > y;
}

static bool is_num(uint8_t k) { return k == CV_INT || k == CV_UINT || k == CV_DOUBLE; }

/* Runtime types are unparameterised: list(dyn) and list(int) name the same
 * type. Compared by name without building text, so no allocation can fail. */
static bool type_equal(const cel_type *a, const cel_type *b) { return streq(type_head(a), type_head(b)); }

static int semver_eq_cmp(const cel_semver *a, const cel_semver *b) { return cel_semver_cmp(a, b); }

/* cel-go's `lhs.Equal(rhs)`: Kubernetes' opaque types (Quantity, Semver,
 * IP, CIDR, URL) answer "no such overload" (-1) for a right-hand side that
 * is not their own value type, and a Quantity made by add()/sub() is a
 * pointer upstream, which no Quantity accepts as its right-hand side. Every
 * other type answers false for a different type. */
int cel_value_equal_lhs(cel_value a, cel_value b) {
        if (a.kind == CV_QUANTITY) {
                if (b.kind != CV_QUANTITY || cel_quantity_is_ptr(b)) return -1;
                return dp_quantity_cmp(a.q, b.q) == 0;
        }
        if (a.kind == CV_SEMVER || a.kind == CV_IP || a.kind == CV_CIDR || a.kind == CV_URL) {
                if (a.kind != b.kind) return -1;
                if (a.kind == CV_SEMVER) return semver_eq_cmp(a.sv, b.sv) == 0;
        }
        if (is_num(a.kind) && is_num(b.kind)) {
                bool ok;
                int r = num_cmp(a, b, &ok);
                return ok && r == 0;
        }
        if (a.kind != b.kind) return 0;
        switch (a.kind) {
        case CV_NULL: return 1;
        case CV_BOOL: return a.b == b.b;
        case CV_STRING:
        case CV_BYTES: return a.s.n == b.s.n && (a.s.n == 0 || memcmp(a.s.p, b.s.p, a.s.n) == 0);
        case CV_TYPE: return type_equal(a.t, b.t);
        case CV_OPTIONAL:
                if (!a.opt || !b.opt) return !a.opt && !b.opt;
                return cel_value_equal(*a.opt, *b.opt) == 1;
        /* Lists and maps: only an element that is unequal makes them unequal;
         * an element comparison that fails is passed over (cel-go's
         * baseList/baseMap Equal, see docs/cel.md). */
        case CV_LIST: {
                if (a.l->n != b.l->n) return 0;
                for (size_t i = 0; i < a.l->n; i++)
                        if (cel_value_equal(cel_list_at(a.l, i), cel_list_at(b.l, i)) == 0) return 0;
                return 1;
        }
        case CV_MAP: {
                if (a.m->n != b.m->n) return 0;
                for (size_t i = 0; i < a.m->n; i++) {
                        const cel_value *bv = cel_map_get(b.m, a.m->store->keys[i]);
                        if (!bv) return 0;
                        if (cel_value_equal(a.m->store->vals[i], *bv) == 0) return 0;
                }
                return 1;
        }
        case CV_IP:
        case CV_CIDR:
                return a.ip->family == b.ip->family && memcmp(a.ip->addr, b.ip->addr, 16) == 0 &&
                       (a.kind == CV_IP || a.ip->prefix == b.ip->prefix);
        case CV_URL: return streq(a.url, b.url);
        case CV_DEVICE: return a.dev == b.dev;
        default: return 0;
        }
}

/* cel-go's types.Equal: null equals only null, else lhs.Equal(rhs). */
int cel_value_equal(cel_value a, cel_value b) {
        if (a.kind == CV_NULL || b.kind == CV_NULL) return a.kind == b.kind;
        return cel_value_equal_lhs(a, b);
}

int cel_value_compare(cel_value a, cel_value b) {
        if (is_num(a.kind) && is_num(b.kind)) {
                bool ok;
                int r = num_cmp(a, b, &ok);
                return ok ? r : -3; /* NaN: every comparison false */
        }
        if (a.kind != b.kind) return -2;
        switch (a.kind) {
        case CV_BOOL: return (int)a.b - (int)b.b;
        case CV_STRING:
        case CV_BYTES: {
                size_t n = DP_MIN(a.s.n, b.s.n);
                int r = n ? memcmp(a.s.p, b.s.p, n) : 0;
                if (r) return r < 0 ? -1 : 1;
                return a.s.n < b.s.n ? -1 : a.s.n > b.s.n;
        }
        default: return -2;
        }
}

/* ---- UTF-8 ---- */
size_t cel_utf8_len(const char *s, size_t n) {
        size_t c = 0;
        for (size_t i = 0; i < n; i++)
                if (((unsigned char)s[i] & 0xC0) != 0x80) c++;
        return c;
}

size_t cel_utf8_offset(const char *s, size_t n, size_t cp) {
        size_t i = 0, c = 0;
        while (i < n) {
                if (((unsigned char)s[i] & 0xC0) != 0x80) {
                        if (c == cp) return i;
                        c++;
                }
                i++;
        }
        return n;
}

/* ---- rendering ---- */
bool cel_put_nonfinite(dp_strbuf *sb, double d, const char *inf, const char *neg_inf) {
        if (isfinite(d)) return false;
        dp_strbuf_puts(sb, isnan(d) ? "NaN" : d > 0 ? inf : neg_inf);
        return true;
}

static void format_double_go(dp_strbuf *sb, double d) {
        if (cel_put_nonfinite(sb, d, "+Inf", "-Inf")) return;
        if (d == 0) {
                dp_strbuf_puts(sb, signbit(d) ? "-0" : "0");
                return;
        }
        char buf[64];
        int prec;
        for (prec = 0; prec < 17; prec++) {
                snprintf(buf, sizeof buf, "%.*e", prec, d);
                if (strtod(buf, NULL) == d) break;
        }
        snprintf(buf, sizeof buf, "%.*e", prec, d);
        /* buf: [-]D.DDDDe[+-]XX */
        char digits[32];
        size_t nd = 0;
        const char *p = buf;
        bool neg = false;
        if (*p == '-') {
                neg = true;
                p++;
        }
        for (; *p && *p != 'e'; p++)
                if (*p != '.') digits[nd++] = *p;
        int exp = atoi(p + 1);
        while (nd > 1 && digits[nd - 1] == '0') nd--;
        int eprec = 6;
        if (exp < -4 || exp >= (eprec > (int)nd && (int)nd >= exp + 1 ? (int)nd : eprec) ) {
                if (neg) dp_strbuf_putc(sb, '-');
                dp_strbuf_putc(sb, digits[0]);
                if (nd > 1) {
                        dp_strbuf_putc(sb, '.');
                        dp_strbuf_append(sb, digits + 1, nd - 1);
                }
                dp_strbuf_printf(sb, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
                return;
        }
        if (neg) dp_strbuf_putc(sb, '-');
        if (exp < 0) {
                dp_strbuf_puts(sb, "0.");
                for (int i = -1; i > exp; i--) dp_strbuf_putc(sb, '0');
                dp_strbuf_append(sb, digits, nd);
        } else {
                for (int i = 0; i <= exp || i < (int)nd; i++) {
                        if (i == exp + 1) dp_strbuf_putc(sb, '.');
                        dp_strbuf_putc(sb, i < (int)nd ? digits[i] : '0');
                }
        }
}

cel_value cel_value_to_string(cel_ctx *c, cel_value v) {
        dp_strbuf sb = DP_STRBUF_INIT;
        switch (v.kind) {
        case CV_STRING: return v;
        case CV_BYTES:
                if (!dp_utf8_valid(v.s.p, v.s.n))
                        return cel_error(c, "invalid UTF-8 in bytes, cannot convert to string");
                return cel_str(v.s.p, v.s.n);
        case CV_INT: dp_strbuf_printf(&sb, "%" PRId64, v.i); break;
        case CV_UINT: dp_strbuf_printf(&sb, "%" PRIu64, v.u); break;
        case CV_DOUBLE: format_double_go(&sb, v.d); break;
        case CV_BOOL: dp_strbuf_puts(&sb, v.b ? "true" : "false"); break;
        case CV_NULL: dp_strbuf_puts(&sb, "null"); break;
        case CV_TYPE: cel_type_format(&sb, v.t); break;
        case CV_QUANTITY: {
                char buf[DP_QUANTITY_MAX_LEN];
                dp_quantity_format(v.q, buf, sizeof buf);
                dp_strbuf_puts(&sb, buf);
                break;
        }
        case CV_SEMVER:
                dp_strbuf_printf(&sb, "%" PRIu64 ".%" PRIu64 ".%" PRIu64, v.sv->major, v.sv->minor, v.sv->patch);
                if (v.sv->pre) dp_strbuf_printf(&sb, "-%s", v.sv->pre);
                if (v.sv->build) dp_strbuf_printf(&sb, "+%s", v.sv->build);
                break;
        case CV_URL: dp_strbuf_puts(&sb, v.url); break;
        case CV_IP:
        case CV_CIDR: cel_value_format(&sb, v); break;
        default: dp_strbuf_done(&sb); return cel_error(c, "no such overload: string(%s)", cel_kind_name(v.kind));
        }
        if (dp_strbuf_failed(&sb)) return cel_oom(c);
        char *s = cel_strndup(c->arena, dp_strbuf_str(&sb), sb.len);
        size_t n = sb.len;
        dp_strbuf_done(&sb);
        if (!s) return cel_oom(c);
        return cel_str(s, n);
}

void cel_value_format(dp_strbuf *sb, cel_value v) {
        switch (v.kind) {
        case CV_ERROR: dp_strbuf_printf(sb, "error(%s)", v.err); break;
        case CV_NULL: dp_strbuf_puts(sb, "null"); break;
        case CV_BOOL: dp_strbuf_puts(sb, v.b ? "true" : "false"); break;
        case CV_INT: dp_strbuf_printf(sb, "%" PRId64, v.i); break;
        case CV_UINT: dp_strbuf_printf(sb, "%" PRIu64 "u", v.u); break;
        case CV_DOUBLE: format_double_go(sb, v.d); break;
        case CV_STRING:
        case CV_BYTES:
                if (v.kind == CV_BYTES) dp_strbuf_putc(sb, 'b');
                dp_strbuf_putc(sb, '"');
                for (size_t i = 0; i < v.s.n; i++) {
                        unsigned char ch = (unsigned char)v.s.p[i];
                        if (ch == '"' || ch == '\\') dp_strbuf_printf(sb, "\\%c", ch);
                        else if (ch < 0x20 || (v.kind == CV_BYTES && ch >= 0x80)) dp_strbuf_printf(sb, "\\x%02x", ch);
                        else dp_strbuf_putc(sb, (char)ch);
                }
                dp_strbuf_putc(sb, '"');
                break;
        case CV_LIST:
                dp_strbuf_putc(sb, '[');
                for (size_t i = 0; i < v.l->n; i++) {
                        if (i) dp_strbuf_puts(sb, ", ");
                        cel_value_format(sb, cel_list_at(v.l, i));
                }
                dp_strbuf_putc(sb, ']');
                break;
        case CV_MAP:
                dp_strbuf_putc(sb, '{');
                for (size_t i = 0; i < v.m->n; i++) {
                        if (i) dp_strbuf_puts(sb, ", ");
                        cel_value_format(sb, v.m->store->keys[i]);
                        dp_strbuf_puts(sb, ": ");
                        cel_value_format(sb, v.m->store->vals[i]);
                }
                dp_strbuf_putc(sb, '}');
                break;
        case CV_TYPE: cel_type_format(sb, v.t); break;
        case CV_OPTIONAL:
                if (!v.opt) dp_strbuf_puts(sb, "optional.none()");
                else {
                        dp_strbuf_puts(sb, "optional.of(");
                        cel_value_format(sb, *v.opt);
                        dp_strbuf_putc(sb, ')');
                }
                break;
        case CV_QUANTITY: {
                char buf[DP_QUANTITY_MAX_LEN];
                dp_quantity_format(v.q, buf, sizeof buf);
                dp_strbuf_printf(sb, "quantity(\"%s\")", buf);
                break;
        }
        case CV_SEMVER:
                dp_strbuf_printf(sb, "semver(\"%" PRIu64 ".%" PRIu64 ".%" PRIu64 "%s%s%s%s\")", v.sv->major, v.sv->minor,
                                 v.sv->patch, v.sv->pre ? "-" : "", v.sv->pre ? v.sv->pre : "", v.sv->build ? "+" : "",
                                 v.sv->build ? v.sv->build : "");
                break;
        case CV_IP:
        case CV_CIDR: {
                char buf[64];
                if (v.ip->family == 4)
                        snprintf(buf, sizeof buf, "%u.%u.%u.%u", v.ip->addr[12], v.ip->addr[13], v.ip->addr[14],
                                 v.ip->addr[15]);
                else {
                        /* RFC 5952: longest run of zero groups compressed */
                        int best = -1, bestlen = 0;
                        for (int i = 0; i < 8;) {
                                int j = i;
                                while (j < 8 && !v.ip->addr[2 * j] && !v.ip->addr[2 * j + 1]) j++;
                                if (j - i > bestlen && j - i >= 2) {
                                        best = i;
                                        bestlen = j - i;
                                }
                                i = j > i ? j : i + 1;
                        }
                        char *o = buf;
                        for (int i = 0; i < 8; i++) {
                                if (i == best) {
                                        o += sprintf(o, "::");
                                        i += bestlen - 1;
                                        continue;
                                }
                                if (i && o[-1] != ':') *o++ = ':';
                                o += sprintf(o, "%x", (v.ip->addr[2 * i] << 8) | v.ip->addr[2 * i + 1]);
                        }
                        *o = 0;
                }
                dp_strbuf_puts(sb, buf);
                if (v.kind == CV_CIDR) dp_strbuf_printf(sb, "/%u", v.ip->prefix);
                break;
        }
        case CV_URL: dp_strbuf_puts(sb, v.url); break;
        case CV_DEVICE: dp_strbuf_puts(sb, "device"); break;
        default: dp_strbuf_puts(sb, "?"); break;
        }
}
