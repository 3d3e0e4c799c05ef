/* SPDX-License-Identifier: Apache-2.0
 * The evaluator under memory pressure: every evaluation allocates from one
 * arena, so capping the arena at each size in turn fails each allocation in
 * turn. The result must be the right value or the out-of-memory error,
 * never a crash, a leak or a wrong answer. */
#include "harness.h"

#include "cel/cel-internal.h"

static const char *const EXPRS[] = {
        "[1, 2, 3].map(x, x * 2).filter(y, y > 2) == [4, 6]",
        "{'a': [1, 2], 'b': [3]}.transformMap(k, v, v.size()) == {'a': 2, 'b': 1}",
        "'a,b,c'.split(',').join('-') + 'x' == 'a-b-cx'",
        "'%s and %d'.format(['x', 3]) == 'x and 3'",
        "lists.range(50).exists(i, i == 49) && [?optional.of(1), ?optional.none()] == [1]",
        "cel.bind(m, {'k': {'z': 1}}, m.k.z == 1 && has(m.k.z) && m.?k.?y.orValue(2) == 2)",
        "quantity('1Gi').add(quantity('1Mi')).isGreaterThan(quantity('1Gi')) && semver('1.2.3-a.1').isLessThan(semver('1.2.3'))",
        "'abc'.findAll('[a-c]').size() == 3 && ip('::1').isLoopback() && string(cidr('10.0.0.0/8').masked()) == '10.0.0.0/8'",
};

static cel_value run(const char *expr, size_t limit, cel_arena *arena, cel_ctx *c) {
        cel_ast ast;
        dp_error err = DP_ERROR_INIT;
        static const cel_var vars[1] = {{"unused", &cel_t_int}};
        cel_env env = {.vars = vars, .n_vars = 1,
                       .libs = CEL_LIB_STD | CEL_LIB_STRINGS | CEL_LIB_SETS | CEL_LIB_LISTS_EXT | CEL_LIB_K8S | CEL_LIB_OPTIONAL,
                       .cross_type_numeric = true};
        if (cel_parse(expr, strlen(expr), true, &ast, &err) < 0) DP_FAIL("parse %s: %s", expr, err.msg);
        const cel_type *t;
        if (cel_plan(&ast, &env, &err) < 0 || cel_check(&ast, &env, &t, &err) < 0) DP_FAIL("check %s: %s", expr, err.msg);
        *arena = (cel_arena){.limit = limit};
        *c = (cel_ctx){.arena = arena};
        cel_value v = cel_eval(c, &ast);
        /* the value lives in the arena; only its kind and truth are read after this */
        cel_ast_done(&ast);
        return v;
}

/* cel_ceil (libm's ceil is no longer linked): exact on the cost arithmetic's
 * values, integral and fractional, at the edges of the double's integers. */
TEST(ceil_without_libm) {
        ASSERT_TRUE(cel_ceil(0.0) == 0.0);
        ASSERT_TRUE(cel_ceil(0.1) == 1.0);
        ASSERT_TRUE(cel_ceil(1.0) == 1.0);
        ASSERT_TRUE(cel_ceil(12.0 * 0.1) == 2.0);
        ASSERT_TRUE(cel_ceil(10.0 * 0.1) == 1.0);
        ASSERT_TRUE(cel_ceil(-1.5) == -1.0);
        ASSERT_TRUE(cel_ceil(-0.5) == 0.0);
        ASSERT_TRUE(cel_ceil(4503599627370495.5) == 4503599627370496.0);
        ASSERT_TRUE(cel_ceil(9007199254740993.0) == 9007199254740993.0);
        ASSERT_TRUE(cel_ceil(1e300) == 1e300);
        ASSERT_TRUE(cel_ceil(1e19 * 1e19) == 1e38);
        double nan = __builtin_nan("");
        ASSERT_TRUE(cel_ceil(nan) != cel_ceil(nan));
        ASSERT_TRUE(cel_ceil(__builtin_inf()) == __builtin_inf());
        for (uint64_t n = 0; n < 100000; n += 7) {
                double x = (double)n * 0.1, c = cel_ceil(x);
                ASSERT_TRUE(c >= x && c - x < 1.0 && c == (double)(uint64_t)c);
        }
}

TEST(each_allocation_fails_in_turn) {
        for (size_t i = 0; i < ELEMENTSOF(EXPRS); i++) {
                cel_arena arena;
                cel_ctx c;
                cel_value v = run(EXPRS[i], 0, &arena, &c);
                if (v.kind != CV_BOOL || !v.b) DP_FAIL("%s: not true (%s)", EXPRS[i], v.kind == CV_ERROR ? v.err : "");
                size_t need = arena.total;
                cel_arena_done(&arena);
                size_t step = need / 200 + 1;
                for (size_t lim = 1; lim <= need + 16; lim += step) {
                        v = run(EXPRS[i], lim, &arena, &c);
                        bool ok = (v.kind == CV_BOOL && v.b) || (v.kind == CV_ERROR && c.fatal == -ENOMEM);
                        if (!ok)
                                DP_FAIL("%s with %zu bytes: kind %d fatal %d %s", EXPRS[i], lim, v.kind, c.fatal,
                                        v.kind == CV_ERROR ? v.err : "");
                        cel_arena_done(&arena);
                }
        }
}

TEST(cost_is_charged_per_step) {
        cel_arena arena;
        cel_ctx c;
        /* identifiers, selections and index steps cost 1, constants nothing,
         * list literals 10, comprehensions per iteration */
        cel_value v = run("[1, 2, 3].all(x, x > 0)", 0, &arena, &c);
        ASSERT_TRUE(v.kind == CV_BOOL && v.b);
        /* range 10; per iteration: cond (call 1 + ident 1) + step (ident 1 + x 1 + > 1) = 5; result ident 1 */
        ASSERT_EQ(c.cost, 10 + 3 * 5 + 1);
        cel_arena_done(&arena);
        v = run("{'a': 1}.a == 1 && 'abc' == 'abc'", 0, &arena, &c);
        ASSERT_TRUE(v.kind == CV_BOOL && v.b);
        ASSERT_EQ(c.cost, 30 + 1 + 1 + 1);
        cel_arena_done(&arena);
}
