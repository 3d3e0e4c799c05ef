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
                for (size_t j = 0; j < l->n && !seen; j++) seen = cel_value_equal_lhs(v, cel_list_at(l, j)) == 1;
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
/* Upstream's sortByAssociatedKeys: the keys must be comparable (the first
 * one decides) and all of the first key's type (no int/uint mixing). */
static bool sortable_kind(uint8_t k) {
        return k == CV_INT || k == CV_UINT || k == CV_DOUBLE || k == CV_BOOL || k == CV_STRING || k == CV_BYTES;
}
static cel_value sort_by_keys_impl(cel_ctx *c, const cel_list *items, const cel_list *keys) {
        size_t m = items->n;
        if (keys->n != m)
                return cel_error(c, "@sortByAssociatedKeys() expected a list of the same size as the associated keys list, but got %zu and %zu elements respectively",
                                 m, keys->n);
        if (m == 0) return cel_list_value(items);
        uint8_t k0 = cel_list_at(keys, 0).kind;
        if (!sortable_kind(k0)) return cel_error(c, "list elements must be comparable");
        for (size_t i = 1; i < m; i++)
                if (cel_list_at(keys, i).kind != k0) return cel_error(c, "list elements must have the same type");
        size_t *idx = calloc(m, sizeof(*idx));
        if (!idx) return cel_oom(c);
        for (size_t i = 0; i < m; i++) idx[i] = i;
        /* insertion sort: stable, no scratch space beyond the index */
        for (size_t i = 1; i < m; i++) {
                size_t x = idx[i], j = i;
                while (j > 0 && cel_value_compare(cel_list_at(keys, idx[j - 1]), cel_list_at(keys, x)) > 0) {
                        idx[j] = idx[j - 1];
                        j--;
                }
                idx[j] = x;
        }
        cel_list *l = cel_list_new(c, m);
        if (!l) {
                free(idx);
                return cel_oom(c);
        }
        for (size_t i = 0; i < m; i++)
                if (cel_list_push(c, l, cel_list_at(items, idx[i])) < 0) {
                        free(idx);
                        return cel_oom(c);
                }
        free(idx);
        return cel_list_value(l);
}
FN(list_sort) {
        (void)n;
        return sort_by_keys_impl(c, A0.l, A0.l);
}
FN(sort_by_keys) {
        (void)n;
        return sort_by_keys_impl(c, A0.l, A1.l);
}

static bool list_has(const cel_list *l, cel_value v) {
        for (size_t i = 0; i < l->n; i++)
                if (cel_value_equal(cel_list_at(l, i), v) == 1) return true;
        return false;
}
/* Whether a holds every element of b (all), or at least one (!all). */
static bool holds(const cel_list *a, const cel_list *b, bool all) {
        for (size_t i = 0; i < b->n; i++)
                if (list_has(a, cel_list_at(b, i)) != all) return !all;
        return all;
}
FN(sets_contains) {
        (void)n;
        (void)c;
        return cel_bool(holds(A0.l, A1.l, true));
}
FN(sets_equivalent) {
        (void)n;
        (void)c;
        return cel_bool(holds(A0.l, A1.l, true) && holds(A1.l, A0.l, true));
}
FN(sets_intersects) {
        (void)n;
        (void)c;
        return cel_bool(holds(A0.l, A1.l, false));
}

#define L(fn, id, member, sig, impl, cost) {fn, id, member, 0, sig, impl, cost, CEL_LIB_LISTS_EXT}
#define ST(fn, id, sig, impl) {fn, id, false, 0, sig, impl, COST_LIST0, CEL_LIB_SETS}
const cel_overload cel_lists_overloads[] = {
        L("lists.range", "lists_range", false, "int->list(int)", lists_range, COST_LISTOUT),
        L("slice", "list_slice", true, "list(A),int,int->list(A)", slice, COST_LISTOUT),
        L("flatten", "list_flatten", true, "list(list(A))->list(A)", flatten, COST_FLATTEN),
        L("flatten", "list_flatten_int", true, "list(dyn),int->list(dyn)", flatten, COST_FLATTEN),
        L("distinct", "list_distinct", true, "list(A)->list(A)", distinct, COST_SELFCMP0),
        L("reverse", "list_reverse", true, "list(A)->list(A)", list_reverse, COST_LISTOUT),
        /* the element type is checked against cel-go's comparable types (check.c) */
        L("sort", "list_sort", true, "list(A)->list(A)", list_sort, COST_SELFCMP0),
        L("@sortByAssociatedKeys", "list_sortByAssociatedKeys", true, "list(A),list(B)->list(A)", sort_by_keys,
          COST_SELFCMP1),
        ST("sets.contains", "list_sets_contains_list", "list(A),list(A)->bool", sets_contains),
        ST("sets.equivalent", "list_sets_equivalent_list", "list(A),list(A)->bool", sets_equivalent),
        ST("sets.intersects", "list_sets_intersects_list", "list(A),list(A)->bool", sets_intersects),
        {NULL, NULL, false, 0, NULL, NULL, COST_ONE, 0},
};
