/* SPDX-License-Identifier: Apache-2.0
 * Static cost estimate: the worst case in cel-go's estimator model
 * (checker/cost.go), which Kubernetes compares against the limit at
 * validation. Per node: identifiers, selections and index steps 1;
 * constants, &&, || 0; ?: the condition plus the dearer branch; calls 1
 * unless sized (== and ordering ceil(0.1 * smaller operand size), string
 * concatenation ceil(0.1 * sum), `in` a list's size, matches/find
 * ceil(0.1 * (1 + text)) * ceil(0.25 * pattern), contains the product of
 * the tenths); list literals 10, map literals 30; a comprehension costs its
 * range, init and result plus (condition + step) times the range's largest
 * size. Sizes come from the DRA API limits (kubernetes/api resource/v1):
 * 32 attributes and capacities per device, domains up to 63 bytes, ids up
 * to 32, attribute values up to 64 (and list attributes up to 48 entries,
 * 64 counting strings), the driver name up to 63. Unknown sizes are
 * unbounded, as in cel-go. */
#include <math.h>

#include "cel/cel-internal.h"

#define UNBOUNDED (UINT64_MAX / 4)
#define DRA_MAX_ATTRS 32
#define DRA_MAX_DOMAIN 63
#define DRA_MAX_ID 32
#define DRA_MAX_VALUE 64
#define DRA_MAX_DRIVER 63
#define DRA_MAX_LIST_VALUES 48

typedef enum {
        SH_OTHER = 0,
        SH_SCALAR,      /* size 1 */
        SH_DEVICE,
        SH_ATTRS,       /* device.attributes */
        SH_ATTRS_INNER, /* device.attributes[d] */
        SH_VALUE,       /* an attribute value (scalar or list) */
        SH_CAPS,
        SH_CAPS_INNER,
        SH_DOMAIN,      /* key of device.attributes */
        SH_ID,          /* key of an inner map */
        SH_DRIVER,
} shape;

typedef struct escope {
        const char *name;
        shape sh;
        uint64_t size;
        const struct escope *up;
} escope;

static uint64_t sadd(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
static uint64_t smul(uint64_t a, uint64_t b) {
        uint64_t r;
        return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}
static uint64_t umax(uint64_t a, uint64_t b) { return a > b ? a : b; }
static uint64_t umin(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t tenth(uint64_t n) { return n >= UNBOUNDED ? UNBOUNDED : (uint64_t)cel_ceil((double)n * 0.1); }

static const escope *find(const escope *s, const char *n) {
        for (; s; s = s->up)
                if (streq(s->name, n)) return s;
        return NULL;
}

static shape shape_of(const cel_expr *e, const escope *s);

static shape member_shape(shape o, const char *field) {
        switch (o) {
        case SH_DEVICE:
                if (!field) return SH_OTHER;
                if (streq(field, "attributes")) return SH_ATTRS;
                if (streq(field, "capacity")) return SH_CAPS;
                if (streq(field, "driver")) return SH_DRIVER;
                return SH_SCALAR;
        case SH_ATTRS: return SH_ATTRS_INNER;
        case SH_ATTRS_INNER: return SH_VALUE;
        case SH_CAPS: return SH_CAPS_INNER;
        case SH_CAPS_INNER: return SH_SCALAR;
        default: return SH_OTHER;
        }
}

static shape shape_of(const cel_expr *e, const escope *s) {
        switch (e->kind) {
        case CE_IDENT: {
                const escope *v = e->ident.slot == -2 ? NULL : find(s, e->ident.name);
                if (v) return v->sh;
                if (streq(e->ident.name, "device")) return SH_DEVICE;
                return SH_OTHER;
        }
        case CE_SELECT:
                if (e->sel.test_only) return SH_SCALAR;
                return member_shape(shape_of(e->sel.operand, s), e->sel.field);
        case CE_CALL:
                if (!e->call.target && streq(e->call.fn, "_[_]"))
                        return member_shape(shape_of(e->call.args[0], s), NULL);
                return SH_OTHER;
        case CE_COMPREHENSION: {
                /* cel.bind: the result's shape with the bound variable known */
                if (e->comp.range->kind == CE_LIST && e->comp.range->list.n == 0) {
                        escope b = {e->comp.accu_var, shape_of(e->comp.accu_init, s), 0, s};
                        return shape_of(e->comp.result, &b);
                }
                return SH_OTHER;
        }
        default: return SH_OTHER;
        }
}

static uint64_t size_of(const cel_expr *e, const escope *s);

/* map/filter/cel.bind */
static CEL_NOINLINE uint64_t size_of_comp(const cel_expr *e, const escope *s) {
        if (e->comp.range->kind == CE_LIST && e->comp.range->list.n == 0) {
                escope b = {e->comp.accu_var, shape_of(e->comp.accu_init, s), size_of(e->comp.accu_init, s), s};
                return size_of(e->comp.result, &b);
        }
        if (e->type && (e->type->kind == CT_BOOL || e->type->kind == CT_INT)) return 1;
        return size_of(e->comp.range, s);
}

/* the largest size (characters, elements) a value of e can have */
static uint64_t size_of(const cel_expr *e, const escope *s) {
        switch (shape_of(e, s)) {
        case SH_SCALAR:
        case SH_DEVICE: return 1;
        case SH_ATTRS:
        case SH_ATTRS_INNER:
        case SH_CAPS:
        case SH_CAPS_INNER: return DRA_MAX_ATTRS;
        case SH_VALUE: return DRA_MAX_VALUE;
        case SH_DOMAIN: return DRA_MAX_DOMAIN;
        case SH_ID: return DRA_MAX_ID;
        case SH_DRIVER: return DRA_MAX_DRIVER;
        default: break;
        }
        switch (e->kind) {
        case CE_CONST:
                if (e->c.kind == CV_STRING) return cel_utf8_len(e->c.s.p, e->c.s.n);
                if (e->c.kind == CV_BYTES) return e->c.s.n;
                return 1;
        case CE_IDENT: {
                const escope *v = e->ident.slot == -2 ? NULL : find(s, e->ident.name);
                return v ? v->size : UNBOUNDED;
        }
        case CE_LIST: return e->list.n;
        case CE_MAP: return e->map.n;
        case CE_CALL: {
                const char *fn = e->call.fn;
                if (e->call.target) break;
                if (streq(fn, "lists.range") && e->call.nargs == 1 && e->call.args[0]->kind == CE_CONST &&
                    e->call.args[0]->c.kind == CV_INT && e->call.args[0]->c.i >= 0)
                        return (uint64_t)e->call.args[0]->c.i;
                if (streq(fn, "_+_") && e->call.nargs == 2)
                        return sadd(size_of(e->call.args[0], s), size_of(e->call.args[1], s));
                if (streq(fn, "_?_:_"))
                        return umax(size_of(e->call.args[1], s), size_of(e->call.args[2], s));
                if (e->type && (e->type->kind == CT_INT || e->type->kind == CT_UINT || e->type->kind == CT_DOUBLE ||
                                e->type->kind == CT_BOOL || e->type->kind == CT_QUANTITY || e->type->kind == CT_SEMVER))
                        return 1;
                break;
        }
        case CE_COMPREHENSION: return size_of_comp(e, s);
        default: break;
        }
        if (e->type && (e->type->kind == CT_INT || e->type->kind == CT_UINT || e->type->kind == CT_DOUBLE ||
                        e->type->kind == CT_BOOL || e->type->kind == CT_NULL))
                return 1;
        return UNBOUNDED;
}

static uint64_t est(const cel_expr *e, const escope *s);

/* The cost of the call itself, after its arguments: out of est() (and
 * est_comp() below) so that their locals stay off every recursion level. */
static CEL_NOINLINE uint64_t call_est(const cel_expr *e, const escope *s) {
        const char *fn = e->call.fn;
        const cel_expr *a0 = e->call.target ? e->call.target : (e->call.nargs ? e->call.args[0] : NULL);
        const cel_expr *a1 = e->call.target ? (e->call.nargs ? e->call.args[0] : NULL)
                                            : (e->call.nargs > 1 ? e->call.args[1] : NULL);
        if (!e->call.target) {
                if (streq(fn, "_==_") || streq(fn, "_!=_") || streq(fn, "_<_") || streq(fn, "_<=_") || streq(fn, "_>_") ||
                    streq(fn, "_>=_"))
                        return tenth(umin(size_of(a0, s), size_of(a1, s)));
                if (streq(fn, "@in")) {
                        if (e->call.args[1]->type && e->call.args[1]->type->kind == CT_MAP) return 1;
                        shape sh = shape_of(e->call.args[1], s);
                        if (sh == SH_ATTRS || sh == SH_ATTRS_INNER || sh == SH_CAPS || sh == SH_CAPS_INNER) return 1;
                        return size_of(e->call.args[1], s);
                }
                if (streq(fn, "_+_") && e->type && (e->type->kind == CT_STRING || e->type->kind == CT_BYTES))
                        return tenth(sadd(size_of(a0, s), size_of(a1, s)));
        }
        if (streq(fn, "matches") || streq(fn, "find") || streq(fn, "findAll")) {
                uint64_t sn = size_of(a0, s), pn = a1 ? size_of(a1, s) : 1;
                if (sn >= UNBOUNDED || pn >= UNBOUNDED) return UNBOUNDED;
                return smul((uint64_t)cel_ceil((1.0 + (double)sn) * 0.1), (uint64_t)cel_ceil((double)pn * 0.25));
        }
        if (streq(fn, "contains") && e->call.target) return smul(tenth(size_of(a0, s)), tenth(size_of(a1, s)));
        if ((streq(fn, "startsWith") || streq(fn, "endsWith")) && e->call.target) return tenth(size_of(a0, s));
        if (streq(fn, "includes")) return DRA_MAX_LIST_VALUES;
        /* lists extension v3: the size of the new list plus the call and the list */
        if (!e->call.target && streq(fn, "lists.range")) {
                uint64_t n = size_of(e, s);
                return n >= UNBOUNDED ? UNBOUNDED : n + 11;
        }
        if (e->call.target && (streq(fn, "reverse") || streq(fn, "slice") || streq(fn, "flatten")) &&
            a0->type && a0->type->kind == CT_LIST) {
                uint64_t n = size_of(a0, s), depth = 1;
                if (streq(fn, "flatten") && a1)
                        depth = a1->kind == CE_CONST && a1->c.kind == CV_INT ? (a1->c.i > 0 ? (uint64_t)a1->c.i : 0) : UNBOUNDED;
                return n >= UNBOUNDED || depth >= UNBOUNDED ? UNBOUNDED : sadd(smul(n, depth), 11);
        }
        /* lists extension v3: sorting and distinct compare every pair, 2 n^2
         * (2.1 n^2 for strings and bytes) plus the call and the new list */
        if (e->call.target && (streq(fn, "sort") || streq(fn, "distinct") || streq(fn, "@sortByAssociatedKeys"))) {
                const cel_expr *l = streq(fn, "@sortByAssociatedKeys") ? a1 : a0;
                uint64_t n = l ? size_of(l, s) : UNBOUNDED;
                if (n >= UNBOUNDED || n > 600000000ULL) return UNBOUNDED;
                const cel_type *t = l->type && l->type->kind == CT_LIST ? l->type->p[0] : NULL;
                double f = t && (t->kind == CT_STRING || t->kind == CT_BYTES) ? 2.1 : 2.0;
                return (uint64_t)cel_ceil((double)n * (double)n * f) + 11;
        }
        /* Kubernetes' estimates for the strings library (apiserver library/cost.go) */
        if (e->call.target && streq(fn, "split")) {
                uint64_t n = size_of(a0, s);
                return n >= UNBOUNDED ? UNBOUNDED : (uint64_t)cel_ceil((double)n * 0.2);
        }
        if (e->call.target && (streq(fn, "lowerAscii") || streq(fn, "upperAscii") || streq(fn, "substring") ||
                               streq(fn, "trim") || streq(fn, "charAt") || streq(fn, "indexOf") ||
                               streq(fn, "lastIndexOf") || streq(fn, "replace")) &&
            (!a0->type || a0->type->kind == CT_STRING || a0->type->kind == CT_DYN))
                return umax(1, tenth(size_of(a0, s)));
        if (!e->call.target && (streq(fn, "quantity") || streq(fn, "isQuantity") || streq(fn, "semver") ||
                                streq(fn, "isSemver")))
                return umax(1, tenth(size_of(a0, s)));
        return 1;
}

static CEL_NOINLINE uint64_t est_comp(const cel_expr *e, const escope *s) {
        const cel_expr *r = e->comp.range;
        uint64_t n = size_of(r, s);
        shape rs = shape_of(r, s);
        shape k1 = SH_OTHER, k2 = SH_OTHER;
        uint64_t s1 = UNBOUNDED, s2 = UNBOUNDED;
        if (rs == SH_ATTRS || rs == SH_CAPS) {
                k1 = SH_DOMAIN;
                k2 = rs == SH_ATTRS ? SH_ATTRS_INNER : SH_CAPS_INNER;
        } else if (rs == SH_ATTRS_INNER || rs == SH_CAPS_INNER) {
                k1 = SH_ID;
                k2 = rs == SH_ATTRS_INNER ? SH_VALUE : SH_SCALAR;
        } else if (rs == SH_VALUE) {
                k1 = SH_VALUE;
        } else if (r->kind == CE_LIST) {
                uint64_t m = 0;
                for (size_t i = 0; i < r->list.n; i++) m = umax(m, size_of(r->list.elems[i], s));
                s1 = m;
        }
        if (e->comp.iter_var2 && r->type && r->type->kind == CT_LIST) {
                /* (index, value) */
                k2 = k1;
                s2 = s1;
                k1 = SH_SCALAR;
        }
        escope accu = {e->comp.accu_var, shape_of(e->comp.accu_init, s), size_of(e->comp.accu_init, s), s};
        escope v1 = {e->comp.iter_var, k1, s1, &accu};
        escope v2 = {e->comp.iter_var2 ? e->comp.iter_var2 : "", k2, s2, &v1};
        uint64_t per = sadd(est(e->comp.cond, &v2), est(e->comp.step, &v2));
        uint64_t c = sadd(est(r, s), est(e->comp.accu_init, s));
        c = sadd(c, smul(n, per));
        return sadd(c, est(e->comp.result, &accu));
}

static uint64_t est(const cel_expr *e, const escope *s) {
        switch (e->kind) {
        case CE_CONST: return 0;
        case CE_IDENT: return 1;
        case CE_SELECT: return sadd(1, est(e->sel.operand, s));
        case CE_LIST: {
                uint64_t c = 10;
                for (size_t i = 0; i < e->list.n; i++) c = sadd(c, est(e->list.elems[i], s));
                return c;
        }
        case CE_MAP:
        case CE_STRUCT: {
                uint64_t c = e->kind == CE_MAP ? 30 : 40;
                for (size_t i = 0; i < e->map.n; i++) {
                        if (e->map.entries[i].key) c = sadd(c, est(e->map.entries[i].key, s));
                        c = sadd(c, est(e->map.entries[i].value, s));
                }
                return c;
        }
        case CE_COMPREHENSION: return est_comp(e, s);
        case CE_CALL: {
                const char *fn = e->call.fn;
                if (!e->call.target && streq(fn, "_?_:_")) {
                        uint64_t a = est(e->call.args[1], s), b = est(e->call.args[2], s);
                        return sadd(est(e->call.args[0], s), umax(a, b));
                }
                uint64_t c = e->call.target ? est(e->call.target, s) : 0;
                for (size_t i = 0; i < e->call.nargs; i++) c = sadd(c, est(e->call.args[i], s));
                if (!e->call.target && (streq(fn, "_&&_") || streq(fn, "_||_"))) return c;
                return sadd(c, call_est(e, s));
        }
        }
        return 0;
}

uint64_t cel_estimate(const cel_ast *ast) {
        uint64_t c = est(ast->root, NULL);
        return c > UNBOUNDED ? UINT64_MAX : c;
}
