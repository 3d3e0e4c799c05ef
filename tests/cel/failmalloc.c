/* SPDX-License-Identifier: Apache-2.0
 * cel-failmalloc — dp_cel_compile() and dp_cel_eval() with each allocation
 * failing in turn (malloc, calloc, realloc, strdup, strndup; PCRE2's own
 * allocations are not intercepted). For every expression, each run must end
 * exactly as the run without failures did (same code, same message, same
 * result) or in -ENOMEM carrying a message; an -EINVAL with an empty or
 * truncated message, any other code or a different message fails the test.
 * Expressions cover the lexer (escapes, bytes, raw strings), the parser's
 * error paths, macro expansion, name resolution, the checker's error paths,
 * constant regular expressions and runtime errors. LeakSanitizer checks at
 * exit that every failure path freed what it had. */
#include <stdio.h>

#include "cel/cel.h"

#include "failmalloc.h"

static const char *const EXPRS[] = {
        /* lexer: escapes, unicode, bytes, raw and triple-quoted strings */
        "device.driver == 'gpu.example.com'",
        "'\\u00e9\\x41\\101\\n' + r'\\d' + '''x\ny''' == 'éAA\\n\\\\dx\\ny' || b'\\xff\\x00'.size() == 2",
        /* macros of every shape and name resolution of namespaced functions */
        "device.attributes['gpu.example.com'].all(k, k != '') && [1, 2].exists(x, x == 2) &&"
        " [1, 2].exists_one(x, x == 1) && [1, 2].map(x, x * 2).filter(y, y > 2) == [4] &&"
        " {'a': 1}.transformMap(k, v, v + 1) == {'a': 2} && [3].all(i, v, i == 0 && v == 3) &&"
        " cel.bind(z, 2, z + 1 == 3) && optional.of(1).optMap(x, x + 1).value() == 2 &&"
        " has(device.attributes.x) == false && sets.contains([1, 2], [1])",
        /* constant regular expressions compiled at check time, runtime regex */
        "device.driver.matches('^gpu\\\\.[a-z]+\\\\.com$') && device.driver.find('[a-z]+') == 'gpu' &&"
        " device.driver.findAll('[a-z]+').size() == 3 && device.driver.matches(device.driver)",
        /* Kubernetes libraries */
        "device.capacity['gpu.example.com'].memory.compareTo(quantity('40Gi')) > 0 &&"
        " device.attributes['gpu.example.com'].driverVersion.isGreaterThan(semver('1.0.0')) &&"
        " ip('10.0.0.1').family() == 4 && cidr('10.0.0.0/8').containsIP('10.1.2.3') &&"
        " url('https://a.example/x?y=1').getHost() == 'a.example' && 'a,b'.split(',').size() == 2",
        /* parse errors */
        "device.driver == ",
        "1 + (2 * ",
        "'unterminated",
        "'\\q' == x",
        "[1, 2,, 3]",
        "if == 1",
        "a.b.c(",
        /* check errors */
        "device.nope == 1",
        "1 == 1.0",
        "[1, 'a'].size() == 2",
        "undeclared_var + 1 > 0",
        "device.driver.matches('(a')",
        "device.driver.matches('(?=x)')",
        "1 + 2",
        /* runtime errors */
        "device.attributes['gpu.example.com'].missing == 1",
        "device.attributes['gpu.example.com'].model.matches(device.attributes['gpu.example.com'].model + '(')",
        "[1, 2][5] == 1",
        "{'a': 1}['b'] == 1",
        "1 / (device.attributes['gpu.example.com'].index - 3) == 1",
        "dyn(1) + dyn('a') == 1",
        "{dyn(1): 1, dyn(1): 2}.size() == 1",
        /* values formatted or compared by name at run time */
        "'%s %d'.format([dyn({'a': [1], 'b': [2]}), dyn(3)]) != '' && type([1]) == type([2]) && type(1) != type('a') &&"
        " ip.isCanonical('10.0.0.1')",
        /* the v2 formatter (maps, nested lists, %f grouping, %e), sortBy, folded conversions */
        "'%s %f %e %x'.format([{'b': [1.5, 'x'], 'a': {true: b'y'}}, 1234567.5, 2.5, 'hi']) != '' &&"
        " [3, 1, 2].sortBy(x, -x) == [3, 2, 1] && [2, 1].sort().first() == optional.of(1) &&"
        " lists.range(5).distinct().size() == 5 && int('+5') == 5 && {'a': 1, 'a': 2}['a'] == 2",
        "int('x') == 1",
        "isSemver('1.2.3-a.b+c') && semver('1.2.3-a+b').isLessThan(semver('1.2.3'))",
};

typedef struct outcome {
        int r;
        int matches;
        char msg[DP_ERROR_MSG_MAX];
} outcome;

static void eval_once(const char *expr, outcome *o) {
        static const dp_cel_attribute attrs[] = {
                {NULL, "model", {.type = DP_CEL_ATTR_STRING, .s = "A100-SXM4-80GB"}},
                {NULL, "index", {.type = DP_CEL_ATTR_INT, .i = 3}},
                {NULL, "driverVersion", {.type = DP_CEL_ATTR_VERSION, .s = "550.54.15-rc.1+build.7"}},
        };
        dp_cel_capacity caps[1] = {{NULL, "memory", dp_quantity_from_int(80LL << 30, DP_QUANTITY_BINARY_SI)}};
        dp_cel_device dev = {"gpu.example.com", attrs, ELEMENTSOF(attrs), caps, 1, true};
        dp_error err = DP_ERROR_INIT;
        dp_cel_program *p = NULL;
        dp_cel_result res = {0};
        int r = dp_cel_compile(expr, NULL, &p, &err);
        if (r >= 0) r = dp_cel_eval(p, &dev, &res, &err);
        dp_cel_program_free(p);
        o->r = r;
        o->matches = r >= 0 ? res.matches : -1;
        snprintf(o->msg, sizeof o->msg, "%s", r < 0 ? err.msg : "");
}

typedef struct expr_run {
        const char *expr;
        outcome want;
        unsigned long enomem, einval_empty, wrong;
} expr_run;

/* One compile and evaluation of an expression. The reference run keeps its
 * outcome; a run with a failed allocation must give -ENOMEM with a message or
 * exactly the reference outcome. */
static bool run(void *ctx) {
        expr_run *x = ctx;
        outcome got;
        if (fail_at == 0) {
                eval_once(x->expr, &x->want);
                if (x->want.r < 0 && !x->want.msg[0]) {
                        fprintf(stderr, "cel-failmalloc: %s: error %d without a message\n", x->expr, x->want.r);
                        return false;
                }
                if (getenv("CEL_FAILMALLOC_VERBOSE"))
                        printf("%s\n  -> %d %s %s\n", x->expr, x->want.r,
                               x->want.r < 0     ? ""
                               : x->want.matches ? "true"
                                                 : "false",
                               x->want.msg);
                if (x->want.r == -ENOMEM) {
                        fprintf(stderr, "cel-failmalloc: %s: out of memory without failures\n", x->expr);
                        return false;
                }
                return true;
        }
        eval_once(x->expr, &got);
        if (!failed) return got.r == x->want.r && got.matches == x->want.matches && streq(got.msg, x->want.msg);
        if (got.r == -ENOMEM && got.msg[0]) {
                x->enomem++;
                return false;
        }
        if (got.r == x->want.r && got.matches == x->want.matches && streq(got.msg, x->want.msg)) return true;
        size_t len = strlen(got.msg);
        if (got.r == -EINVAL && (len == 0 || (len >= 2 && streq(got.msg + len - 2, ": "))))
                x->einval_empty++;
        else
                x->wrong++;
        fprintf(stderr, "cel-failmalloc: %s: allocation %lu failed: got %d \"%s\", want %d \"%s\"\n", x->expr, fail_at,
                got.r, got.msg, x->want.r, x->want.msg);
        return false;
}

int main(void) {
        unsigned long points = 0, enomem = 0, einval_empty = 0, wrong = 0, bad = 0;
        for (size_t i = 0; i < ELEMENTSOF(EXPRS); i++) {
                expr_run x = {.expr = EXPRS[i]};
                dp_failmalloc fm = {.name = "cel-failmalloc", .run = run, .ctx = &x, .absorb = true};
                dp_failmalloc_result r;
                bad += dp_failmalloc_each(&fm, &r);
                points += r.points;
                enomem += x.enomem;
                einval_empty += x.einval_empty;
                wrong += x.wrong;
        }
        printf("cel-failmalloc: %zu expressions, %lu allocation points, %lu reported as -ENOMEM, "
               "%lu as -EINVAL without a message, %lu other differences\n",
               ELEMENTSOF(EXPRS), points, enomem, einval_empty, wrong);
        return bad || einval_empty || wrong ? 1 : 0;
}
