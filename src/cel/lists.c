/* SPDX-License-Identifier: Apache-2.0
 * cel-go's lists extension (lists.range, slice, flatten, distinct, reverse,
 * sort) and sets extension (sets.contains, sets.equivalent,
 * sets.intersects). */
#include <inttypes.h>

#include "cel/cel-internal.h"

#define A0 args[0]
#define A1 args[1]
#define A2 args[2]
#define FN(name) static cel_value name(cel_ctx *c, const cel_value *args, size_t n)

#define CEL_LISTS_RANGE_MAX 1000000 /* the cost limit bounds any use anyway */

FN(lists_range) {
        (void)n;
        if (A0.i < 0 || A0.i > CEL_LISTS_RANGE_MAX) return cel_error(c, "lists.range: invalid size %" PRId64, A0.i);
        cel_list *l = cel_list_new(c, (size_t)A0.i);
        if (!l) return cel_oom(c);
        for (int64_t i = 0; i < A0.i; i++)
                if (cel_list_push(c, l, cel_int(i)) < 0) return cel_oom(c);
        return cel_list_value(l);
}
FN(slice) {
        (void)n;
        int64_t s = A1.i, e = A2.i;
        if (s < 0 || e < 0) return cel_error(c, "cannot slice(%" PRId64 ", %" PRId64 "), negative indexes not supported", s, e);
        if (s > e) return cel_error(c, "cannot slice(%" PRId64 ", %" PRId64 "), start index must be less than or equal to end index", s, e);
        if ((uint64_t)e > A0.l->n) return cel_error(c, "cannot slice(%" PRId64 ", %" PRId64 "), list is length %zu", s, e, A0.l->n);
        cel_list *l = cel_list_new(c, (size_t)(e - s));
        if (!l) return cel_oom(c);
        for (int64_t i = s; i < e; i++)
                if (cel_list_push(c, l, cel_list_at(A0.l, (size_t)i)) < 0) return cel_oom(c);
        return cel_list_value(l);
}
static int flatten_into(cel_ctx *c, cel_list *out, const cel_list *in, int64_t depth) {
        for (size_t i = 0; i < in->n; i++) {
                cel_value v = cel_list_at(in, i);
                if (v.kind == CV_LIST && depth > 0) {
                        if (flatten_into(c, out, v.l, depth - 1) < 0) return -ENOMEM;
                } else if (cel_list_push(c, out, v) < 0)
                        return -ENOMEM;
        }
        return 0;
}
FN(flatten) {
        int64_t depth = n > 1 ? A1.i : 1;
        if (depth < 0) return cel_error(c, "level must be non-negative");
        if (depth > 100) depth = 100;
        cel_list *l = cel_list_new(c, 0);
        if (!l || flatten_into(c, l, A0.l, depth) < 0) return cel_oom(c);
        return cel_list_value(l);
}
FN(distinct) {
        (void)n;
        cel_list *l = cel_list_new(c, 0);
        if (!l) return cel_oom(c);
        for (size_t i = 0; i < A0.l->n; i++) {
                cel_value v = cel_list_at(A0.l, i);
                bool seen = false;
                for (size_t j = 0; j < l->n && !seen; j++) seen = cel_value_equal(cel_list_at(l, j), v) == 1;
                if (!seen && cel_list_push(c, l, v) < 0) return cel_oom(c);
        }
        return cel_list_value(l);
}
FN(list_reverse) {
        (void)n;
        cel_list *l = cel_list_new(c, A0.l->n);
        if (!l) return cel_oom(c);
        for (size_t i = A0.l->n; i > 0; i--)
                if (cel_list_push(c, l, cel_list_at(A0.l, i - 1)) < 0) return cel_oom(c);
        return cel_list_value(l);
}
FN(list_sort) {
        (void)n;
        size_t m = A0.l->n;
        cel_list *l = cel_list_new(c, m);
        if (!l) return cel_oom(c);
        for (size_t i = 0; i < m; i++) {
                cel_value v = cel_list_at(A0.l, i);
                if (i && cel_value_compare(cel_list_at(A0.l, 0), v) == -2)
                        return cel_error(c, "list elements must have the same type");
                if (cel_list_push(c, l, v) < 0) return cel_oom(c);
        }
        /* insertion sort on a stable order; merge sort would need scratch space */
        cel_value *it = l->store->items;
        for (size_t i = 1; i < m; i++) {
                cel_value x = it[i];
                size_t j = i;
                while (j > 0 && cel_value_compare(it[j - 1], x) > 0) {
                        it[j] = it[j - 1];
                        j--;
                }
                it[j] = x;
        }
        return cel_list_value(l);
}

static bool list_has(const cel_list *l, cel_value v) {
        for (size_t i = 0; i < l->n; i++)
                if (cel_value_equal(cel_list_at(l, i), v) == 1) return true;
        return false;
}
FN(sets_contains) {
        (void)n;
        (void)c;
        for (size_t i = 0; i < A1.l->n; i++)
                if (!list_has(A0.l, cel_list_at(A1.l, i))) return cel_bool(false);
        return cel_bool(true);
}
FN(sets_equivalent) {
        (void)n;
        (void)c;
        for (size_t i = 0; i < A1.l->n; i++)
                if (!list_has(A0.l, cel_list_at(A1.l, i))) return cel_bool(false);
        for (size_t i = 0; i < A0.l->n; i++)
                if (!list_has(A1.l, cel_list_at(A0.l, i))) return cel_bool(false);
        return cel_bool(true);
}
FN(sets_intersects) {
        (void)n;
        (void)c;
        for (size_t i = 0; i < A1.l->n; i++)
                if (list_has(A0.l, cel_list_at(A1.l, i))) return cel_bool(true);
        return cel_bool(false);
}

#define L(fn, id, member, sig, impl, cost) {fn, id, member, 0, sig, impl, cost, CEL_LIB_LISTS_EXT}
#define ST(fn, id, sig, impl) {fn, id, false, 0, sig, impl, COST_LIST0, CEL_LIB_SETS}
const cel_overload cel_lists_overloads[] = {
        L("lists.range", "lists_range", false, "int->list(int)", lists_range, COST_INT0),
        L("slice", "list_slice", true, "list(A),int,int->list(A)", slice, COST_ONE),
        L("flatten", "list_flatten", true, "list(list(A))->list(A)", flatten, COST_LIST0),
        L("flatten", "list_flatten_int", true, "list(dyn),int->list(dyn)", flatten, COST_LIST0),
        L("distinct", "list_distinct", true, "list(A)->list(A)", distinct, COST_LIST0),
        L("reverse", "list_reverse", true, "list(A)->list(A)", list_reverse, COST_LIST0),
        L("sort", "list_sort", true, "list(A)->list(A)", list_sort, COST_LIST0),
        ST("sets.contains", "list_sets_contains_list", "list(A),list(A)->bool", sets_contains),
        ST("sets.equivalent", "list_sets_equivalent_list", "list(A),list(A)->bool", sets_equivalent),
        ST("sets.intersects", "list_sets_intersects_list", "list(A),list(A)->bool", sets_intersects),
        {NULL, NULL, false, 0, NULL, NULL, COST_ONE, 0},
};
