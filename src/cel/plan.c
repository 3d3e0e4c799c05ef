/* SPDX-License-Identifier: Apache-2.0
 * Name resolution after parsing (with or without the type checker):
 * qualified identifiers (`a.b.c` naming a declared variable), the
 * container's scopes, type names as values, namespaced functions
 * (`optional.of`, `sets.contains`, ...), and the overload candidates each
 * call may dispatch to at run time. */
#include "cel/cel-internal.h"

typedef struct scope {
        const char *name;
        const struct scope *up;
} scope;

static bool in_scope(const scope *s, const char *n) {
        for (; s; s = s->up)
                if (streq(s->name, n)) return true;
        return false;
}

static const cel_overload *const *tables(size_t *n) {
        static const cel_overload *const t[] = {cel_std_overloads, cel_strings_overloads, cel_lists_overloads,
                                                cel_k8s_overloads, cel_net_overloads};
        *n = ELEMENTSOF(t);
        return t;
}

size_t cel_sig_nargs(const char *sig);
size_t cel_sig_nargs(const char *sig) {
        if (sig[0] == '-') return 0;
        size_t n = 1;
        int depth = 0;
        for (const char *p = sig; *p && !(*p == '-' && p[1] == '>'); p++) {
                if (*p == '(') depth++;
                else if (*p == ')') depth--;
                else if (*p == ',' && depth == 0) n++;
        }
        return n;
}

static bool fn_exists(const cel_env *env, const char *fn, bool member) {
        size_t nt;
        const cel_overload *const *t = tables(&nt);
        for (size_t i = 0; i < nt; i++)
                for (const cel_overload *o = t[i]; o->fn; o++)
                        if (o->member == member && (o->lib & env->libs) && streq(o->fn, fn)) return true;
        return false;
}

static const cel_type *type_name_type(cel_arena *a, const char *n) {
        static const struct {
                const char *name;
                const cel_type *t;
        } prim[] = {{"int", &cel_t_int},       {"uint", &cel_t_uint},     {"double", &cel_t_double},
                    {"bool", &cel_t_bool},     {"string", &cel_t_string}, {"bytes", &cel_t_bytes},
                    {"null_type", &cel_t_null}};
        for (size_t i = 0; i < ELEMENTSOF(prim); i++)
                if (streq(prim[i].name, n)) return prim[i].t;
        cel_type *t = NULL;
        if (streq(n, "list") || streq(n, "map") || streq(n, "type") || streq(n, "optional_type")) {
                t = cel_alloc(a, sizeof(*t));
                if (!t) return NULL;
                t->kind = streq(n, "list") ? CT_LIST : streq(n, "map") ? CT_MAP : streq(n, "type") ? CT_TYPE : CT_OPTIONAL;
                if (t->kind == CT_LIST || t->kind == CT_OPTIONAL) t->p[0] = &cel_t_dyn;
                if (t->kind == CT_MAP) t->p[0] = t->p[1] = &cel_t_dyn;
        }
        return t;
}

/* Candidate full names for `name` in the container, most specific first. */
static const cel_var *find_var(const cel_env *env, cel_arena *a, const char *name, const char **ret_full) {
        bool rooted = name[0] == '.';
        if (rooted) name++;
        if (!rooted && env->container && env->container[0]) {
                char buf[512];
                size_t cl = strlen(env->container);
                if (cl < sizeof buf) {
                        memcpy(buf, env->container, cl + 1);
                        for (;;) {
                                char full[1024];
                                snprintf(full, sizeof full, "%s.%s", buf, name);
                                for (size_t i = 0; i < env->n_vars; i++)
                                        if (streq(env->vars[i].name, full)) {
                                                /* NULL on allocation failure: the caller checks */
                                                *ret_full = cel_strndup(a, full, strlen(full));
                                                return &env->vars[i];
                                        }
                                char *dot = strrchr(buf, '.');
                                if (!dot) break;
                                *dot = 0;
                        }
                }
        }
        for (size_t i = 0; i < env->n_vars; i++)
                if (streq(env->vars[i].name, name)) {
                        *ret_full = env->vars[i].name;
                        return &env->vars[i];
                }
        return NULL;
}

static bool qname(const cel_expr *e, const scope *s, dp_strbuf *sb) {
        if (e->kind == CE_IDENT) {
                if (in_scope(s, e->ident.name)) return false;
                dp_strbuf_puts(sb, e->ident.name);
                return true;
        }
        if (e->kind == CE_SELECT && !e->sel.test_only && !e->sel.optional) {
                if (!qname(e->sel.operand, s, sb)) return false;
                dp_strbuf_putc(sb, '.');
                dp_strbuf_puts(sb, e->sel.field);
                return true;
        }
        return false;
}

/* Helpers of plan() that run before or after the recursion into children:
 * CEL_NOINLINE keeps their buffers out of every recursion level's frame. */

/* An identifier: a declared variable (possibly in the container), a type
 * name used as a value, or left for the checker to report. */
static CEL_NOINLINE int plan_ident(cel_arena *a, const cel_env *env, cel_expr *e, const scope *s) {
        if (in_scope(s, e->ident.name)) return 0;
        const char *full;
        bool rooted = e->ident.name[0] == '.';
        if (find_var(env, a, e->ident.name, &full)) {
                if (!full) return -ENOMEM;
                e->ident.name = full;
                if (rooted) e->ident.slot = -2; /* skips comprehension variables */
                return 0;
        }
        const char *n = e->ident.name[0] == '.' ? e->ident.name + 1 : e->ident.name;
        const cel_type *t = type_name_type(a, n);
        if (t) {
                e->kind = CE_CONST;
                e->c = cel_typev(t);
        }
        return 0;
}

/* `a.b.c` naming a declared variable becomes that identifier: 1 when it
 * did, 0 when it is a field selection, -ENOMEM. */
static CEL_NOINLINE int plan_select_name(cel_arena *a, const cel_env *env, cel_expr *e, const scope *s) {
        if (e->sel.test_only || e->sel.optional) return 0;
        dp_strbuf sb = DP_STRBUF_INIT;
        bool q = qname(e, s, &sb);
        if (dp_strbuf_failed(&sb)) {
                /* a truncated name would resolve to the wrong thing */
                dp_strbuf_done(&sb);
                return -ENOMEM;
        }
        const char *full = NULL;
        const cel_var *v = q ? find_var(env, a, dp_strbuf_str(&sb), &full) : NULL;
        dp_strbuf_done(&sb);
        if (!v) return 0;
        if (!full) return -ENOMEM;
        e->kind = CE_IDENT;
        e->ident.name = full;
        e->ident.slot = -1;
        return 1;
}

/* `sets.contains(...)`: a receiver that is a qualified name, not a
 * variable, in front of a function of that namespace becomes a global call. */
static CEL_NOINLINE int plan_namespaced_call(cel_arena *a, const cel_env *env, cel_expr *e, const scope *s) {
        dp_strbuf sb = DP_STRBUF_INIT;
        if (qname(e->call.target, s, &sb) && !dp_strbuf_failed(&sb)) {
                const char *full;
                const char *q = dp_strbuf_str(&sb);
                if (q[0] == '.') q++;
                if (!find_var(env, a, q, &full)) {
                        dp_strbuf_printf(&sb, ".%s", e->call.fn);
                        q = dp_strbuf_str(&sb);
                        if (q[0] == '.') q++;
                        if (!dp_strbuf_failed(&sb) && fn_exists(env, q, false)) {
                                const char *fn = cel_strndup(a, q, strlen(q));
                                if (!fn) {
                                        dp_strbuf_done(&sb);
                                        return -ENOMEM;
                                }
                                e->call.fn = fn;
                                e->call.target = NULL;
                        }
                }
        }
        bool oom = dp_strbuf_failed(&sb);
        dp_strbuf_done(&sb);
        return oom ? -ENOMEM : 0; /* out of memory: a namespaced function left unresolved */
}

/* The evaluator's operator code and the overloads a call may dispatch to. */
static CEL_NOINLINE int plan_candidates(cel_arena *a, const cel_env *env, cel_expr *e) {
        static const struct {
                const char *fn;
                uint8_t op;
        } ops[] = {{"_&&_", CEL_OP_AND},   {"_||_", CEL_OP_OR},   {"_?_:_", CEL_OP_COND},
                   {"@not_strictly_false", CEL_OP_NOT_STRICTLY_FALSE}, {"_[_]", CEL_OP_INDEX},
                   {"_[?_]", CEL_OP_OPT_INDEX}, {"_==_", CEL_OP_EQ}, {"_!=_", CEL_OP_NE},
                   {"@in", CEL_OP_IN},      {"cel.@mapInsert", CEL_OP_MAP_INSERT}};
        e->call.op = CEL_OP_CALL;
        if (!e->call.target)
                for (size_t i = 0; i < ELEMENTSOF(ops); i++)
                        if (streq(e->call.fn, ops[i].fn)) e->call.op = ops[i].op;
        bool member = e->call.target != NULL;
        size_t want = e->call.nargs + (member ? 1 : 0), nt, cnt = 0;
        const cel_overload *const *t = tables(&nt);
        for (int pass = 0; pass < 2; pass++) {
                for (size_t i = 0; i < nt; i++)
                        for (const cel_overload *o = t[i]; o->fn; o++) {
                                if (o->member != member || !(o->lib & env->libs) || !streq(o->fn, e->call.fn) ||
                                    cel_sig_nargs(o->sig) != want)
                                        continue;
                                if (pass == 1) e->call.cands[cnt] = o;
                                cnt++;
                        }
                if (pass == 0) {
                        if (!cnt) break;
                        e->call.cands = cel_alloc(a, cnt * sizeof(*e->call.cands));
                        if (!e->call.cands) return -ENOMEM;
                        e->call.ncands = cnt;
                        cnt = 0;
                }
        }
        return 0;
}

static int plan(cel_ast *ast, const cel_env *env, cel_expr *e, const scope *s) {
        cel_arena *a = &ast->arena;
        switch (e->kind) {
        case CE_CONST: return 0;
        case CE_IDENT: return plan_ident(a, env, e, s);
        case CE_SELECT: {
                int r = plan_select_name(a, env, e, s);
                if (r != 0) return r < 0 ? r : 0; /* 1: the select named a variable */
                return plan(ast, env, e->sel.operand, s);
        }
        case CE_CALL: {
                if (e->call.target) {
                        int q = plan_namespaced_call(a, env, e, s);
                        if (q < 0) return q;
                        if (e->call.target) {
                                int r = plan(ast, env, e->call.target, s);
                                if (r < 0) return r;
                        }
                }
                for (size_t i = 0; i < e->call.nargs; i++) {
                        int r = plan(ast, env, e->call.args[i], s);
                        if (r < 0) return r;
                }
                return plan_candidates(a, env, e);
        }
        case CE_LIST:
                for (size_t i = 0; i < e->list.n; i++) {
                        int r = plan(ast, env, e->list.elems[i], s);
                        if (r < 0) return r;
                }
                return 0;
        case CE_MAP:
        case CE_STRUCT:
                for (size_t i = 0; i < e->map.n; i++) {
                        if (e->map.entries[i].key) {
                                int r = plan(ast, env, e->map.entries[i].key, s);
                                if (r < 0) return r;
                        }
                        int r = plan(ast, env, e->map.entries[i].value, s);
                        if (r < 0) return r;
                }
                return 0;
        case CE_COMPREHENSION: {
                int r = plan(ast, env, e->comp.range, s);
                if (r >= 0) r = plan(ast, env, e->comp.accu_init, s);
                if (r < 0) return r;
                scope accu = {e->comp.accu_var, s};
                scope v1 = {e->comp.iter_var, &accu};
                scope v2 = {e->comp.iter_var2 ? e->comp.iter_var2 : "", &v1};
                r = plan(ast, env, e->comp.cond, &v2);
                if (r >= 0) r = plan(ast, env, e->comp.step, &v2);
                if (r >= 0) r = plan(ast, env, e->comp.result, &accu);
                return r;
        }
        }
        return 0;
}

int cel_plan(cel_ast *ast, const cel_env *env, dp_error *err) {
        int r = plan(ast, env, ast->root, NULL);
        if (r < 0 || ast->arena.failed) return dp_error_set(err, -ENOMEM, "out of memory while planning");
        return 0;
}
