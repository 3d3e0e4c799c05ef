/* SPDX-License-Identifier: Apache-2.0
 * The public face (cel.h): the DRA environment, compile, evaluate. */
#include <stdio.h>

#include "cel/cel-internal.h"

/* Memory one evaluation may allocate. The cost limit bounds work; this
 * bounds what the work may build (string concatenation doubles per step). */
#define CEL_EVAL_MEMORY_LIMIT (64u << 20)

struct dp_cel_program {
        cel_ast ast;
        char *expr;
        dp_cel_options opts;
        uint64_t estimated_cost;
};

void dp_cel_options_init(dp_cel_options *opts) {
        memset(opts, 0, sizeof(*opts));
        opts->consumable_capacity = true;
        opts->cost_limit = DP_CEL_MAX_COST;
}

static const cel_var dra_vars[] = {{"device", &cel_t_device}};

static void dra_env(const dp_cel_options *o, cel_env *env) {
        memset(env, 0, sizeof(*env));
        env->vars = dra_vars;
        env->n_vars = ELEMENTSOF(dra_vars);
        /* includes() is declared whether or not DRAListTypeAttributes is on:
         * the scheduler's compile (cel.NewCache) accepts it either way */
        env->libs = CEL_LIB_STD | CEL_LIB_STRINGS | CEL_LIB_SETS | CEL_LIB_LISTS_EXT | CEL_LIB_K8S | CEL_LIB_OPTIONAL |
                    CEL_LIB_INCLUDES;
        env->list_type_attributes = o->list_type_attributes;
        env->homogeneous_literals = true;
        env->cross_type_numeric = true;
        env->device_multi_alloc = o->consumable_capacity;
}

dp_cel_program *dp_cel_program_free(dp_cel_program *p) {
        if (!p) return NULL;
        cel_ast_done(&p->ast);
        free(p->expr);
        free(p);
        return NULL;
}

/* cel-go evaluates a type conversion of a constant while it builds the
 * program (int('x'), uint(-1), double('1e400'), dyn(...) of a constant), so
 * a failing one is a compile error ("program instantiation failed") upstream
 * even where it would never run; we follow that (docs/cel.md). Folded calls
 * become constants, so conversions of them fold too. */
static bool is_conversion(const char *fn) {
        return streq(fn, "int") || streq(fn, "uint") || streq(fn, "double") || streq(fn, "bool") ||
               streq(fn, "string") || streq(fn, "bytes") || streq(fn, "dyn");
}

static int fold_conversions(cel_ast *ast, cel_expr *e, dp_error *err) {
        int r = 0;
        switch (e->kind) {
        case CE_SELECT: return fold_conversions(ast, e->sel.operand, err);
        case CE_LIST:
                for (size_t i = 0; i < e->list.n && r >= 0; i++) r = fold_conversions(ast, e->list.elems[i], err);
                return r;
        case CE_MAP:
        case CE_STRUCT:
                for (size_t i = 0; i < e->map.n && r >= 0; i++) {
                        if (e->map.entries[i].key) r = fold_conversions(ast, e->map.entries[i].key, err);
                        if (r >= 0) r = fold_conversions(ast, e->map.entries[i].value, err);
                }
                return r;
        case CE_COMPREHENSION: {
                cel_expr *parts[] = {e->comp.range, e->comp.accu_init, e->comp.cond, e->comp.step, e->comp.result};
                for (size_t i = 0; i < ELEMENTSOF(parts) && r >= 0; i++) r = fold_conversions(ast, parts[i], err);
                return r;
        }
        case CE_CALL:
                if (e->call.target) r = fold_conversions(ast, e->call.target, err);
                for (size_t i = 0; i < e->call.nargs && r >= 0; i++) r = fold_conversions(ast, e->call.args[i], err);
                if (r < 0 || e->call.target || e->call.nargs != 1 || e->call.args[0]->kind != CE_CONST ||
                    !is_conversion(e->call.fn))
                        return r;
                break;
        default: return 0;
        }
        cel_value v = e->call.args[0]->c;
        if (!streq(e->call.fn, "dyn")) {
                cel_ctx c = {.arena = &ast->arena, .cost_limit = UINT64_MAX};
                v = cel_call_overload(&c, e->call.fn, &v, 1);
                if (c.fatal || ast->arena.failed) return dp_error_set(err, -ENOMEM, "out of memory");
                if (v.kind == CV_ERROR) return dp_error_set(err, -EINVAL, "program instantiation failed: %s", v.err);
        }
        e->kind = CE_CONST;
        e->c = v;
        return 0;
}

int dp_cel_compile(const char *expr, const dp_cel_options *opts, dp_cel_program **ret, dp_error *err) {
        assert_return(expr && ret, -EINVAL);
        dp_cel_options o;
        if (opts) o = *opts;
        else dp_cel_options_init(&o);
        if (!o.cost_limit) o.cost_limit = DP_CEL_MAX_COST;
        size_t len = strlen(expr);
        if (len > DP_CEL_MAX_EXPR_LEN)
                return dp_error_set(err, -E2BIG, "expression too long: %zu bytes, may not be more than %d bytes", len,
                                    DP_CEL_MAX_EXPR_LEN);
        dp_cel_program *p = calloc(1, sizeof(*p));
        if (!p) return dp_error_set(err, -ENOMEM, "out of memory");
        p->opts = o;
        p->expr = strdup(expr);
        if (!p->expr) {
                dp_cel_program_free(p);
                return dp_error_set(err, -ENOMEM, "out of memory");
        }
        int r = cel_parse(p->expr, len, true, &p->ast, err);
        if (r < 0) {
                dp_cel_program_free(p);
                return r;
        }
        cel_env env;
        dra_env(&o, &env);
        r = cel_plan(&p->ast, &env, err);
        const cel_type *t = NULL;
        if (r >= 0) r = cel_check(&p->ast, &env, &t, err);
        bool checked = r >= 0;
        /* bool or the attribute type: any, or dyn with DRAListTypeAttributes */
        if (r >= 0 && t && t->kind != CT_BOOL && t != &cel_t_any && !(t->kind == CT_DYN && o.list_type_attributes)) {
                dp_strbuf sb = DP_STRBUF_INIT;
                cel_type_format(&sb, t);
                if (dp_strbuf_failed(&sb))
                        r = dp_error_set(err, -ENOMEM, "out of memory while type-checking");
                else
                        r = dp_error_set(err, -EINVAL, "must evaluate to bool or the unknown type, not %s",
                                         dp_strbuf_str(&sb));
                dp_strbuf_done(&sb);
        }
        if (r >= 0) {
                p->estimated_cost = cel_estimate(&p->ast);
                if (o.check_estimated_cost && p->estimated_cost > o.cost_limit)
                        r = dp_error_set(err, -E2BIG,
                                         "too complex, exceeds cost limit: estimated cost %llu exceeds budget by factor of more than %.1fx",
                                         (unsigned long long)p->estimated_cost,
                                         (double)p->estimated_cost / (double)o.cost_limit);
        }
        if (r >= 0 && checked) r = fold_conversions(&p->ast, p->ast.root, err);
        if (r < 0) {
                dp_cel_program_free(p);
                return r;
        }
        *ret = p;
        return 0;
}

const char *dp_cel_program_expression(const dp_cel_program *p) { return p ? p->expr : NULL; }
uint64_t dp_cel_program_estimated_cost(const dp_cel_program *p) { return p ? p->estimated_cost : 0; }

cel_value cel_make_device(cel_ctx *c, const dp_cel_device *d);

/* Upstream converts every attribute before evaluating (DeviceMatches), so a
 * bad one fails any selector, whether it reads attributes or not. */
static int check_device(const dp_cel_program *p, const dp_cel_device *d, cel_arena *a, dp_error *err) {
        for (size_t i = 0; i < d->n_attributes; i++) {
                const dp_cel_attribute *at = &d->attributes[i];
                const dp_cel_attr_value *v = &at->value;
                const char *name = at->name ? at->name : "";
                if (v->type >= DP_CEL_ATTR_INTS && !p->opts.list_type_attributes)
                        return dp_error_set(err, -EINVAL, "attribute %s: unsupported attribute value", name);
                size_t n = v->type == DP_CEL_ATTR_VERSION ? 1 : v->type == DP_CEL_ATTR_VERSIONS ? v->n : 0;
                for (size_t k = 0; k < n; k++) {
                        const char *s = v->type == DP_CEL_ATTR_VERSION ? v->s : v->strs[k];
                        cel_semver sv;
                        int r = s ? cel_semver_parse(a, s, strlen(s), false, &sv) : -EINVAL;
                        if (r == -ENOMEM) return dp_error_set(err, -ENOMEM, "out of memory");
                        if (r < 0)
                                return dp_error_set(err, -EINVAL, "attribute %s: parse semantic version: %s", name,
                                                    s ? s : "(null)");
                }
        }
        return 0;
}

int dp_cel_eval(const dp_cel_program *p, const dp_cel_device *dev, dp_cel_result *ret, dp_error *err) {
        assert_return(p && dev && ret, -EINVAL);
        cel_arena arena = {.limit = CEL_EVAL_MEMORY_LIMIT};
        cel_ctx c = {.arena = &arena, .cost_limit = p->opts.cost_limit, .list_types = p->opts.list_type_attributes};
        cel_activation act = {"device", cel_make_device(&c, dev), NULL};
        c.vars = &act;
        int r = check_device(p, dev, &arena, err);
        if (r < 0) {
                cel_arena_done(&arena);
                return r;
        }
        cel_value v = cel_eval(&c, &p->ast);
        if (c.fatal) {
                r = dp_error_set(err, c.fatal, "%s", c.fatal_msg);
        } else if (v.kind == CV_ERROR) {
                r = dp_error_set(err, -EINVAL, "%s", v.err);
        } else if (v.kind != CV_BOOL) {
                r = dp_error_set(err, -EINVAL, "CEL result of type %s could not be converted to bool", cel_kind_name(v.kind));
        } else {
                ret->matches = v.b;
                ret->cost = c.cost;
        }
        cel_arena_done(&arena);
        return r;
}
