/* SPDX-License-Identifier: Apache-2.0
 * Nesting limits (cel.h, cel-internal.h): the parser's recursion limit
 * (DP_CEL_MAX_DEPTH, cel-go's default) and the tree depth cap
 * (DP_CEL_MAX_AST_DEPTH) that bounds the stack of checking, planning,
 * estimating and evaluating. Expressions exactly at a limit compile and
 * evaluate, and do so inside a thread stack of STACK_BUDGET (half the usual
 * 8 MiB main stack) in the sanitizer build; one level more gives the one
 * error naming the limit, never a crash. */
#include <pthread.h>
#include <stdio.h>

#include "harness.h"

#include "cel/cel-internal.h"

#define STACK_BUDGET (4u << 20)

static char *repeat(const char *head, const char *unit, size_t n, const char *mid, const char *unit2, size_t n2,
                    const char *tail) {
        size_t len = strlen(head) + strlen(unit) * n + strlen(mid) + strlen(unit2) * n2 + strlen(tail) + 1;
        char *s = malloc(len);
        if (!s) DP_FAIL("out of memory");
        char *w = stpcpy(s, head);
        for (size_t i = 0; i < n; i++) w = stpcpy(w, unit);
        w = stpcpy(w, mid);
        for (size_t i = 0; i < n2; i++) w = stpcpy(w, unit2);
        stpcpy(w, tail);
        return s;
}

typedef struct job {
        const char *expr;
        int r;
        bool matches;
        dp_error err;
} job;

static void *run_job(void *arg) {
        job *j = arg;
        dp_cel_device dev = {"gpu.example.com", NULL, 0, NULL, 0, false};
        dp_cel_program *p = NULL;
        dp_cel_result res = {0};
        /* the estimate still runs (and recurses); only its check is off:
         * a chain of 400 string calls saturates it */
        j->r = dp_cel_compile(j->expr, NULL, &p, &j->err);
        if (j->r >= 0) j->r = dp_cel_eval(p, &dev, &res, &j->err);
        j->matches = res.matches;
        dp_cel_program_free(p);
        return NULL;
}

/* Compile and evaluate on a thread whose stack is STACK_BUDGET: a phase
 * that needs more overflows it and the test dies (ASan reports it). */
static job run_bounded(const char *expr) {
        job j = {.expr = expr, .err = DP_ERROR_INIT};
        pthread_attr_t a;
        pthread_t t;
        ASSERT_EQ(pthread_attr_init(&a), 0);
        ASSERT_EQ(pthread_attr_setstacksize(&a, STACK_BUDGET), 0);
        ASSERT_EQ(pthread_create(&t, &a, run_job, &j), 0);
        ASSERT_EQ(pthread_join(t, NULL), 0);
        pthread_attr_destroy(&a);
        return j;
}

static void expect_true(const char *what, char *expr) {
        job j = run_bounded(expr);
        if (j.r < 0 || !j.matches) DP_FAIL("%s: %d %s", what, j.r, j.r < 0 ? j.err.msg : "false");
        free(expr);
}

static void expect_error(const char *what, char *expr, int code, const char *msg) {
        job j = run_bounded(expr);
        if (j.r != code || !strstr(j.err.msg, msg)) DP_FAIL("%s: %d \"%s\", want %d \"%s\"", what, j.r, j.err.msg, code, msg);
        /* one error, not one per level */
        const char *second = strstr(j.err.msg + 1, "ERROR:");
        if (second) DP_FAIL("%s: more than one error: %s", what, j.err.msg);
        free(expr);
}

/* [[[...[1]...]]][0]...[0] == 1: the list literal is one parser level per
 * bracket on top of the expression itself. */
TEST(parser_recursion_limit) {
        size_t n = DP_CEL_MAX_DEPTH - 1;
        expect_true("lists at the parser limit", repeat("", "[", n, "1", "]", n, " != []"));
        n = DP_CEL_MAX_DEPTH;
        char want[64];
        snprintf(want, sizeof want, "expression recursion limit exceeded: %d", DP_CEL_MAX_DEPTH);
        expect_error("lists over the parser limit", repeat("", "[", n, "1", "]", n, " != []"), -E2BIG, want);
        expect_error("parentheses over the parser limit", repeat("", "(", 2 * n, "true", ")", 2 * n, ""), -E2BIG, want);
}

/* Operator and call chains nest in the tree without parser recursion. */
TEST(tree_depth_limit) {
        char want[64];
        snprintf(want, sizeof want, "expression nesting exceeds %d levels", DP_CEL_MAX_AST_DEPTH);
        /* 1 + 1 + ... : n terms nest n - 1 calls deep, under `==` one more */
        size_t n = DP_CEL_MAX_AST_DEPTH;
        char tail[32];
        snprintf(tail, sizeof tail, " == %zu", n);
        expect_true("sum at the tree limit", repeat("1", " + 1", n - 1, "", "", 0, tail));
        snprintf(tail, sizeof tail, " == %zu", n + 1);
        expect_error("sum over the tree limit", repeat("1", " + 1", n, "", "", 0, tail), -E2BIG, want);
        /* 'a'.trim().trim()...: a receiver chain */
        expect_true("call chain at the tree limit", repeat("'a'", ".trim()", n - 1, "", "", 0, " == 'a'"));
        expect_error("call chain over the tree limit", repeat("'a'", ".trim()", n, "", "", 0, " == 'a'"), -E2BIG,
                     want);
        /* chains of three rules nested in each other, each as long as cel-go
         * admits one (its recursion limit applies per grammar rule) */
        size_t k = DP_CEL_MAX_DEPTH - 10;
        char *inner = repeat("'a'", ".trim()", k, "", "", 0, " == 'a'");
        char *mid = repeat("(", "", 0, inner, "", 0, ") == true");
        char *sum = repeat("", "1 + ", k, "size([1])", "", 0, " > 0 == ");
        char *all = repeat(sum, "", 0, "", "", 0, mid);
        expect_true("nested chains", repeat("", "[", k, all, "]", k, " != []"));
        free(inner);
        free(mid);
        free(sum);
        free(all);
        /* a member chain on the device: one select per level */
        expect_error("select chain over the tree limit", repeat("device", ".x", n + 1, "", "", 0, " == 1"), -E2BIG, want);
}

/* cel-go balances && and || chains, so their length is bounded only by the
 * expression size limit; so does this parser. */
TEST(logic_chains_are_balanced) {
        size_t n = 2000; /* "true && " is 8 bytes: 16 KB would be over the size limit */
        n = (DP_CEL_MAX_EXPR_LEN - 16) / 8;
        expect_true("long && chain", repeat("", "true && ", n, "true", "", 0, ""));
        expect_true("long || chain", repeat("", "false || ", (DP_CEL_MAX_EXPR_LEN - 16) / 9, "true", "", 0, ""));
        /* the value and the error absorption do not depend on the shape */
        expect_true("&& with an error term", repeat("", "true && ", 300, "(1 / 0 == 1 || true)", "", 0, ""));
        job j = run_bounded("true && 1 / 0 == 1 && false");
        ASSERT_EQ(j.r, 0);
        ASSERT_FALSE(j.matches);
}

/* cel-go keeps one '!' or '-' of a run (pairs cancel), so a run of any
 * length parses; it does not nest. */
TEST(unary_runs_cancel_in_pairs) {
        expect_true("even run of !", repeat("", "!", 1000, "true", "", 0, ""));
        expect_true("odd run of !", repeat("", "!", 1001, "false", "", 0, ""));
        expect_true("odd run of -", repeat("", "-", 999, "1 == -1", "", 0, ""));
        expect_true("even run of - on an ident", repeat("size([1]) == ", "-", 998, "size([1])", "", 0, ""));
}

/* Nested macros: each level is a comprehension whose step nests the next,
 * two or three tree levels per parser level, so the parser's limit comes
 * first and the deepest nesting it admits stays under the tree cap. */
TEST(nested_macros) {
        size_t n = DP_CEL_MAX_DEPTH - 2;
        expect_true("nested all() at the parser limit", repeat("", "[1].all(x, ", n, "true", ")", n, ""));
        expect_true("nested exists_one() at the parser limit",
                    repeat("", "[1].exists_one(x, ", n, "true", ")", n, ""));
        char want[64];
        snprintf(want, sizeof want, "expression recursion limit exceeded: %d", DP_CEL_MAX_DEPTH);
        expect_error("nested exists() over the parser limit", repeat("", "[1].exists(x, ", n + 2, "true", ")", n + 2, ""),
                     -E2BIG, want);
}
