/* SPDX-License-Identifier: Apache-2.0
 * Static cost estimate (an upper bound in the spirit of cel-go's
 * checker/cost.go): runtime costs as in eval.c, comprehensions multiplied by
 * the largest size their range can have. Size hints come from the DRA API
 * limits (kubernetes/api resource/v1 types.go): at most 32 attributes and
 * capacities per device, strings of at most 64 bytes, list attributes of
 * at most 48 values. Unknown sizes are unbounded, as in cel-go. */
#include <math.h>

#include "cel/cel-internal.h"

#define UNBOUNDED (UINT64_MAX / 4)
#define DRA_MAX_ATTRS 32
#define DRA_MAX_LIST 48
#define DRA_MAX_STRING 64

static uint64_t sadd(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
static uint64_t smul(uint64_t a, uint64_t b) {
        uint64_t r;
        return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* the largest number of elements (or characters) a value of e may have */
static uint64_t size_of(const cel_expr *e) {
        switch (e->kind) {
        case CE_CONST:
                if (e->c.kind == CV_STRING || e->c.kind == CV_BYTES) return e->c.s.n;
                return 1;
        case CE_LIST: return e->list.n;
        case CE_MAP: return e->map.n;
        case CE_SELECT:
                if (e->sel.operand->kind == CE_IDENT && streq(e->sel.operand->ident.name, "device")) {
                        if (streq(e->sel.field, "attributes") || streq(e->sel.field, "capacity")) return DRA_MAX_ATTRS;
                        if (streq(e->sel.field, "driver")) return 63;
                }
                if (e->type && e->type->kind == CT_MAP) return DRA_MAX_ATTRS;
                return e->type && (e->type->kind == CT_STRING) ? DRA_MAX_STRING : DRA_MAX_LIST;
        case CE_CALL:
                if (streq(e->call.fn, "_[_]") && e->call.nargs == 2) {
                        const cel_expr *o = e->call.args[0];
                        if (o->kind == CE_SELECT && o->sel.operand->kind == CE_IDENT &&
                            streq(o->sel.operand->ident.name, "device"))
                                return DRA_MAX_ATTRS;
                        if (o->kind == CE_CALL && streq(o->call.fn, "_[_]")) return DRA_MAX_LIST; /* attribute value */
                }
                if (streq(e->call.fn, "lists.range") && e->call.nargs == 1 && e->call.args[0]->kind == CE_CONST &&
                    e->call.args[0]->c.kind == CV_INT && e->call.args[0]->c.i >= 0)
                        return (uint64_t)e->call.args[0]->c.i;
                return UNBOUNDED;
        case CE_COMPREHENSION:
                /* map/filter produce at most as many elements as they iterate */
                return size_of(e->comp.range);
        default: return UNBOUNDED;
        }
}

static uint64_t est(const cel_expr *e) {
        switch (e->kind) {
        case CE_CONST: return 0;
        case CE_IDENT: return 1;
        case CE_SELECT: return sadd(1, est(e->sel.operand));
        case CE_LIST: {
                uint64_t c = 10;
                for (size_t i = 0; i < e->list.n; i++) c = sadd(c, est(e->list.elems[i]));
                return c;
        }
        case CE_MAP:
        case CE_STRUCT: {
                uint64_t c = e->kind == CE_MAP ? 30 : 40;
                for (size_t i = 0; i < e->map.n; i++) {
                        if (e->map.entries[i].key) c = sadd(c, est(e->map.entries[i].key));
                        c = sadd(c, est(e->map.entries[i].value));
                }
                return c;
        }
        case CE_COMPREHENSION: {
                uint64_t n = size_of(e->comp.range);
                uint64_t per = sadd(est(e->comp.cond), est(e->comp.step));
                uint64_t c = sadd(est(e->comp.range), est(e->comp.accu_init));
                c = sadd(c, smul(n, per));
                return sadd(c, est(e->comp.result));
        }
        case CE_CALL: {
                uint64_t c = 0;
                if (e->call.target) c = est(e->call.target);
                const char *fn = e->call.fn;
                if (!e->call.target && streq(fn, "_?_:_")) {
                        uint64_t a = est(e->call.args[1]), b = est(e->call.args[2]);
                        return sadd(est(e->call.args[0]), DP_MAX(a, b));
                }
                for (size_t i = 0; i < e->call.nargs; i++) c = sadd(c, est(e->call.args[i]));
                if (!e->call.target && (streq(fn, "_&&_") || streq(fn, "_||_"))) return c;
                uint64_t call = 1;
                if (streq(fn, "matches") || streq(fn, "find") || streq(fn, "findAll")) {
                        const cel_expr *s = e->call.target ? e->call.target : e->call.args[0];
                        const cel_expr *pat = e->call.target ? e->call.args[0] : e->call.args[1];
                        uint64_t sn = size_of(s) == UNBOUNDED ? DRA_MAX_STRING : size_of(s);
                        uint64_t pn = size_of(pat) == UNBOUNDED ? DRA_MAX_STRING : size_of(pat);
                        call = smul((uint64_t)ceil((1.0 + (double)sn) * 0.1), (uint64_t)ceil((double)pn * 0.25));
                } else if (streq(fn, "@in") && e->call.nargs == 2) {
                        uint64_t sz = size_of(e->call.args[1]);
                        call = sz == UNBOUNDED ? DRA_MAX_LIST : sz;
                }
                return sadd(c, call);
        }
        }
        return 0;
}

uint64_t cel_estimate(const cel_ast *ast) { return est(ast->root); }
