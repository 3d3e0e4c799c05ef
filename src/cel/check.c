/* SPDX-License-Identifier: Apache-2.0
 * The type checker: every node gets a type; calls resolve against the
 * overload signatures with type parameters (A, B) unified per call; dyn
 * unifies with anything, as cel-go's checker does. Errors are collected
 * (at most 100) with line:column and a caret snippet. Homogeneous list and
 * map literals are enforced when the environment asks (Kubernetes does). */
#include <stdarg.h>
#include <stdio.h>

#include "cel/cel-internal.h"

size_t cel_sig_nargs(const char *sig);

typedef struct checker {
        cel_ast *ast;
        const cel_env *env;
        dp_strbuf msgs;
        int nerr;
        bool oom;
        int in_format; /* inside a format() call: literals exempt from the homogeneity check */
} checker;

typedef struct tscope {
        const char *name;
        const cel_type *type;
        const struct tscope *up;
} tscope;

static void cerr(checker *k, uint32_t pos, const char *fmt, ...) _printf_(3, 4);
static void cerr(checker *k, uint32_t pos, const char *fmt, ...) {
        if (k->nerr++ >= 100) return;
        va_list ap;
        va_start(ap, fmt);
        cel_message_vadd(&k->msgs, k->ast->src, k->ast->src_len, pos, fmt, ap);
        va_end(ap);
}

static cel_type *mk(checker *k, cel_type_kind kind, const cel_type *a, const cel_type *b) {
        cel_type *t = cel_alloc(&k->ast->arena, sizeof(*t));
        if (!t) {
                k->oom = true;
                return (cel_type *)&cel_t_dyn;
        }
        t->kind = kind;
        t->p[0] = a;
        t->p[1] = b;
        return t;
}

/* ---- signature text ---- */
const cel_type *cel_sig_type(cel_arena *a, const char **pp) {
        const char *p = *pp;
        size_t n = strcspn(p, ",()-");
        const cel_type *t = &cel_t_dyn;
        cel_type *nt = NULL;
#define IS(s) (n == strlen(s) && !strncmp(p, s, n))
        if (IS("int")) t = &cel_t_int;
        else if (IS("uint")) t = &cel_t_uint;
        else if (IS("double")) t = &cel_t_double;
        else if (IS("bool")) t = &cel_t_bool;
        else if (IS("string")) t = &cel_t_string;
        else if (IS("bytes")) t = &cel_t_bytes;
        else if (IS("null_type")) t = &cel_t_null;
        else if (IS("Quantity")) t = &cel_t_quantity;
        else if (IS("Semver")) t = &cel_t_semver;
        else if (IS("IP")) t = &cel_t_ip;
        else if (IS("CIDR")) t = &cel_t_cidr;
        else if (IS("URL")) t = &cel_t_url;
        else if (IS("A") || IS("B")) {
                nt = cel_alloc(a, sizeof(*nt));
                if (nt) {
                        nt->kind = CT_PARAM;
                        nt->name = p[0] == 'A' ? "A" : "B";
                        t = nt;
                }
        } else if (IS("list") || IS("map") || IS("optional") || IS("type")) {
                nt = cel_alloc(a, sizeof(*nt));
                if (nt) {
                        nt->kind = IS("list") ? CT_LIST : IS("map") ? CT_MAP : IS("optional") ? CT_OPTIONAL : CT_TYPE;
                        t = nt;
                }
        }
#undef IS
        p += n;
        if (*p == '(') {
                p++;
                const cel_type *x = cel_sig_type(a, &p);
                const cel_type *y = NULL;
                if (*p == ',') {
                        p++;
                        y = cel_sig_type(a, &p);
                }
                if (*p == ')') p++;
                if (nt) {
                        nt->p[0] = x;
                        nt->p[1] = y;
                }
        } else if (nt && (nt->kind == CT_LIST || nt->kind == CT_OPTIONAL)) {
                nt->p[0] = &cel_t_dyn;
        } else if (nt && nt->kind == CT_MAP) {
                nt->p[0] = nt->p[1] = &cel_t_dyn;
        }
        *pp = p;
        return t;
}

/* ---- unification ---- */
typedef struct binding {
        const cel_type *a, *b;
} binding;

static bool is_dyn(const cel_type *t) { return !t || t->kind == CT_DYN || t->kind == CT_ERROR; }
/* The type of an unconstrained parameter ([] elements, optional.none()):
 * prints as dyn, but gives way to anything more specific when joined. */
static const cel_type t_free = {CT_DYN, {NULL, NULL}, "free"};
static bool is_free(const cel_type *t) { return t == &t_free; }

static const cel_type *subst(checker *k, const cel_type *t, const binding *bd);

static bool unify(const cel_type *sig, const cel_type *arg, binding *bd) {
        /* cel-go binds a type parameter to the most general type it meets:
         * dyn (or any) once seen stays, so optional(any).orValue(T) is any */
        if (sig && sig->kind == CT_PARAM && arg && arg->kind == CT_DYN && !is_free(arg)) {
                const cel_type **slot = sig->name[0] == 'A' ? &bd->a : &bd->b;
                *slot = arg;
                return true;
        }
        if (!sig || is_dyn(arg)) return true;
        if (sig->kind == CT_DYN) return true;
        if (sig->kind == CT_PARAM) {
                const cel_type **slot = sig->name[0] == 'A' ? &bd->a : &bd->b;
                if (!*slot || is_free(*slot)) {
                        *slot = arg;
                        return true;
                }
                if (is_dyn(*slot)) return true;
                /* already bound: must agree (dyn inside is fine) */
                return unify(*slot, arg, bd);
        }
        if (arg->kind == CT_PARAM) return true;
        if (sig->kind != arg->kind) return false;
        switch (sig->kind) {
        case CT_LIST:
        case CT_OPTIONAL: return unify(sig->p[0], arg->p[0], bd);
        case CT_TYPE: return !sig->p[0] || !arg->p[0] || unify(sig->p[0], arg->p[0], bd);
        case CT_MAP: return unify(sig->p[0], arg->p[0], bd) && unify(sig->p[1], arg->p[1], bd);
        case CT_MESSAGE: return streq(sig->name, arg->name);
        default: return true;
        }
}

static const cel_type *subst(checker *k, const cel_type *t, const binding *bd) {
        if (!t) return &cel_t_dyn;
        switch (t->kind) {
        case CT_PARAM: {
                const cel_type *b = t->name[0] == 'A' ? bd->a : bd->b;
                return b ? b : &t_free;
        }
        case CT_LIST:
        case CT_OPTIONAL:
        case CT_TYPE:
                if (!t->p[0]) return t;
                return mk(k, t->kind, subst(k, t->p[0], bd), NULL);
        case CT_MAP: return mk(k, CT_MAP, subst(k, t->p[0], bd), subst(k, t->p[1], bd));
        default: return t;
        }
}

static bool type_eq(const cel_type *a, const cel_type *b) {
        if (is_dyn(a) || is_dyn(b)) return is_dyn(a) && is_dyn(b);
        if (a->kind != b->kind) return false;
        switch (a->kind) {
        case CT_LIST:
        case CT_OPTIONAL: return type_eq(a->p[0], b->p[0]);
        case CT_TYPE: return (!a->p[0] && !b->p[0]) || (a->p[0] && b->p[0] && type_eq(a->p[0], b->p[0]));
        case CT_MAP: return type_eq(a->p[0], b->p[0]) && type_eq(a->p[1], b->p[1]);
        case CT_PARAM:
        case CT_MESSAGE: return streq(a->name, b->name);
        default: return true;
        }
}

/* cel-go's IsEquivalentType, as the homogeneous-literal validator uses it:
 * dyn, any and each concrete type are all different; only a parameter the
 * checker left unbound ([] or optional.none()) matches anything. */
static bool type_exact(const cel_type *a, const cel_type *b) {
        if (is_free(a) || is_free(b)) return true;
        if (!a || !b) return !a && !b;
        if (a->kind == CT_PARAM || b->kind == CT_PARAM) return true;
        if (a->kind != b->kind) return false;
        if (a->kind == CT_DYN) return (a == &cel_t_any) == (b == &cel_t_any);
        switch (a->kind) {
        case CT_LIST:
        case CT_OPTIONAL: return type_exact(a->p[0], b->p[0]);
        case CT_TYPE: return (!a->p[0] && !b->p[0]) || (a->p[0] && b->p[0] && type_exact(a->p[0], b->p[0]));
        case CT_MAP: return type_exact(a->p[0], b->p[0]) && type_exact(a->p[1], b->p[1]);
        case CT_MESSAGE: return streq(a->name, b->name);
        default: return true;
        }
}

/* Kubernetes declares its own types as object types, to which null is assignable */
static bool nullable(const cel_type *t) {
        return t->kind == CT_QUANTITY || t->kind == CT_SEMVER || t->kind == CT_IP || t->kind == CT_CIDR ||
               t->kind == CT_URL;
}

/* assignable either way (dyn anywhere inside matches) */
static bool compatible(const cel_type *a, const cel_type *b) {
        if (is_dyn(a) || is_dyn(b)) return true;
        if (a->kind == CT_PARAM || b->kind == CT_PARAM) return true;
        if ((a->kind == CT_NULL && nullable(b)) || (b->kind == CT_NULL && nullable(a))) return true;
        if (a->kind != b->kind) return false;
        switch (a->kind) {
        case CT_LIST:
        case CT_OPTIONAL: return compatible(a->p[0], b->p[0]);
        case CT_TYPE: return true;
        case CT_MAP: return compatible(a->p[0], b->p[0]) && compatible(a->p[1], b->p[1]);
        case CT_MESSAGE: return streq(a->name, b->name);
        default: return true;
        }
}

/* common type of two, or dyn when they only meet in dyn */
static const cel_type *join(checker *k, const cel_type *a, const cel_type *b) {
        if (is_free(a)) return b;
        if (is_free(b)) return a;
        if (a && b && a->kind == CT_NULL && b->kind == CT_OPTIONAL) return b;
        if (a && b && b->kind == CT_NULL && a->kind == CT_OPTIONAL) return a;
        /* the most general wins, as cel-go binds type parameters, and of dyn
         * and any the later one: (c ? any : dyn) is dyn, (c ? dyn : any) any */
        if (is_dyn(b)) return b ? b : &cel_t_dyn;
        if (is_dyn(a)) return a ? a : &cel_t_dyn;
        if (type_eq(a, b)) return a;
        if (a->kind == b->kind && (a->kind == CT_LIST || a->kind == CT_OPTIONAL))
                return mk(k, a->kind, join(k, a->p[0], b->p[0]), NULL);
        if (a->kind == CT_MAP && b->kind == CT_MAP) return mk(k, CT_MAP, join(k, a->p[0], b->p[0]), join(k, a->p[1], b->p[1]));
        return &cel_t_dyn;
}

/* A type's name for a message; a name that could not be built marks the
 * check out of memory (a message naming '' would mislead). */
static char *tname(checker *k, const cel_type *t, char *buf, size_t size) {
        dp_strbuf sb = DP_STRBUF_INIT;
        cel_type_format(&sb, t);
        if (dp_strbuf_failed(&sb)) k->oom = true;
        snprintf(buf, size, "%s", dp_strbuf_str(&sb));
        dp_strbuf_done(&sb);
        return buf;
}

/* "<a><t1><b><t2><c>": a type error naming one or two types. Kept out of
 * check() so that its name buffers are not part of every recursion level. */
static CEL_NOINLINE void type_error(checker *k, uint32_t pos, const char *a, const cel_type *t1, const char *b,
                                    const cel_type *t2, const char *c) {
        char b1[128], b2[128];
        cerr(k, pos, "%s%s%s%s%s", a, tname(k, t1, b1, sizeof b1), b, t2 ? tname(k, t2, b2, sizeof b2) : "", c);
}

static const cel_type *check(checker *k, cel_expr *e, const tscope *s);

static const cel_type *lookup(const tscope *s, const char *n) {
        for (; s; s = s->up)
                if (streq(s->name, n)) return s->type;
        return NULL;
}

static const cel_type *device_field(checker *k, const char *f) {
        static const cel_type qty_inner = {CT_MAP, {&cel_t_string, &cel_t_quantity}, NULL};
        static const cel_type cap = {CT_MAP, {&cel_t_string, &qty_inner}, NULL};
        /* attribute values are `any` upstream, `dyn` with DRAListTypeAttributes */
        static const cel_type attr_inner = {CT_MAP, {&cel_t_string, &cel_t_any}, NULL};
        static const cel_type attrs = {CT_MAP, {&cel_t_string, &attr_inner}, NULL};
        static const cel_type attr_inner_dyn = {CT_MAP, {&cel_t_string, &cel_t_dyn}, NULL};
        static const cel_type attrs_dyn = {CT_MAP, {&cel_t_string, &attr_inner_dyn}, NULL};
        if (streq(f, "attributes") && k->env->list_type_attributes) return &attrs_dyn;
        if (streq(f, "driver")) return &cel_t_string;
        if (streq(f, "attributes")) return &attrs;
        if (streq(f, "capacity")) return &cap;
        if (streq(f, "allowMultipleAllocations") && k->env->device_multi_alloc) return &cel_t_bool;
        return NULL;
}

static CEL_NOINLINE const cel_type *select_type(checker *k, cel_expr *e, const cel_type *ot) {
        if (is_dyn(ot)) return &cel_t_dyn;
        switch (ot->kind) {
        case CT_MAP:
                if (!is_dyn(ot->p[0]) && ot->p[0]->kind != CT_STRING) break;
                return ot->p[1];
        case CT_DEVICE: {
                const cel_type *t = device_field(k, e->sel.field);
                if (!t) {
                        cerr(k, e->pos, "undefined field '%s'", e->sel.field);
                        return &cel_t_error;
                }
                return t;
        }
        case CT_OPTIONAL: {
                const cel_type *in = select_type(k, e, ot->p[0]);
                return in->kind == CT_ERROR ? in : in;
        }
        case CT_MESSAGE: return &cel_t_dyn;
        default: break;
        }
        type_error(k, e->pos, "type '", ot, "' does not support field selection", NULL, "");
        return &cel_t_error;
}

static CEL_NOINLINE const cel_type *check_call_special(checker *k, cel_expr *e, const cel_type **at, bool *handled) {
        const char *fn = e->call.fn;
        char b1[128], b2[128];
        *handled = true;
        if (e->call.target) {
                *handled = false;
                return NULL;
        }
        if (streq(fn, "_&&_") || streq(fn, "_||_") || streq(fn, "@not_strictly_false")) {
                for (size_t i = 0; i < e->call.nargs; i++)
                        if (!is_dyn(at[i]) && at[i]->kind != CT_BOOL) {
                                cerr(k, e->pos, "found no matching overload for '%s' applied to '(%s%s%s)'", fn,
                                     tname(k, at[0], b1, sizeof b1), e->call.nargs > 1 ? ", " : "",
                                     e->call.nargs > 1 ? tname(k, at[1], b2, sizeof b2) : "");
                                return &cel_t_error;
                        }
                return &cel_t_bool;
        }
        if (streq(fn, "_?_:_")) {
                if (!is_dyn(at[0]) && at[0]->kind != CT_BOOL) {
                        cerr(k, e->pos, "found no matching overload for '_?_:_' applied to '(%s, ...)'", tname(k, at[0], b1, sizeof b1));
                        return &cel_t_error;
                }
                if (!compatible(at[1], at[2])) {
                        cerr(k, e->pos, "found no matching overload for '_?_:_' applied to '(bool, %s, %s)'",
                             tname(k, at[1], b1, sizeof b1), tname(k, at[2], b2, sizeof b2));
                        return &cel_t_error;
                }
                return join(k, at[1], at[2]);
        }
        if (streq(fn, "_==_") || streq(fn, "_!=_")) {
                if (!compatible(at[0], at[1])) {
                        cerr(k, e->pos, "found no matching overload for '%s' applied to '(%s, %s)'", fn,
                             tname(k, at[0], b1, sizeof b1), tname(k, at[1], b2, sizeof b2));
                        return &cel_t_error;
                }
                return &cel_t_bool;
        }
        if (streq(fn, "@in")) {
                const cel_type *c = at[1];
                bool ok = is_dyn(c) || (c->kind == CT_LIST && compatible(at[0], c->p[0])) ||
                          (c->kind == CT_MAP && compatible(at[0], c->p[0]));
                if (!ok) {
                        cerr(k, e->pos, "found no matching overload for '@in' applied to '(%s, %s)'",
                             tname(k, at[0], b1, sizeof b1), tname(k, at[1], b2, sizeof b2));
                        return &cel_t_error;
                }
                return &cel_t_bool;
        }
        if (streq(fn, "_[_]") || streq(fn, "_[?_]")) {
                bool opt = fn[2] == '?';
                const cel_type *c = at[0], *r = NULL;
                bool wrap = opt;
                if (!is_dyn(c) && c->kind == CT_OPTIONAL) {
                        c = c->p[0];
                        wrap = true;
                }
                if (is_dyn(c)) r = &cel_t_dyn;
                else if (c->kind == CT_LIST) {
                        if (is_dyn(at[1]) || at[1]->kind == CT_INT) r = c->p[0];
                } else if (c->kind == CT_MAP) {
                        /* map(K, V)[K]: the key's type, or dyn (no numeric conversion) */
                        if (compatible(c->p[0], at[1])) r = c->p[1];
                }
                if (!r) {
                        cerr(k, e->pos, "found no matching overload for '%s' applied to '(%s, %s)'", fn,
                             tname(k, at[0], b1, sizeof b1), tname(k, at[1], b2, sizeof b2));
                        return &cel_t_error;
                }
                return wrap ? mk(k, CT_OPTIONAL, r, NULL) : r;
        }
        if (streq(fn, "cel.@mapInsert")) {
                /* transformMap's step: the map gains the range's key and the new value's type */
                if (is_dyn(at[0]) || at[0]->kind != CT_MAP) return at[0];
                if (e->call.nargs == 3) return mk(k, CT_MAP, join(k, at[0]->p[0], at[1]), join(k, at[0]->p[1], at[2]));
                if (e->call.nargs == 2 && !is_dyn(at[1]) && at[1]->kind == CT_MAP)
                        return mk(k, CT_MAP, join(k, at[0]->p[0], at[1]->p[0]), join(k, at[0]->p[1], at[1]->p[1]));
                return at[0];
        }
        *handled = false;
        return NULL;
}

/* Kubernetes validates constant regular expressions at compile time. */
static CEL_NOINLINE void check_regex_literal(checker *k, const cel_expr *e) {
        const char *fn = e->call.fn;
        if (!streq(fn, "matches") && !streq(fn, "find") && !streq(fn, "findAll")) return;
        const cel_expr *pat = e->call.target ? (e->call.nargs ? e->call.args[0] : NULL)
                                             : (e->call.nargs > 1 ? e->call.args[1] : NULL);
        if (!pat || pat->kind != CE_CONST || pat->c.kind != CV_STRING) return;
        cel_regex *re = NULL;
        const char *why = NULL;
        int r = cel_regex_compile(pat->c.s.p, pat->c.s.n, &re, &why, &k->ast->arena);
        if (r == -ENOMEM) k->oom = true;
        else if (r < 0) cerr(k, pat->pos, "invalid regular expression: %s", why);
        if (r < 0) return;
        /* keep it: evaluation reuses the compiled pattern */
        cel_ast *ast = k->ast;
        if (ast->n_regexes == ast->cap_regexes) {
                size_t nc = ast->cap_regexes ? ast->cap_regexes * 2 : 4;
                cel_regex **nr = realloc(ast->regexes, nc * sizeof(*nr));
                if (!nr) {
                        cel_regex_free(re);
                        k->oom = true;
                        return;
                }
                ast->regexes = nr;
                ast->cap_regexes = nc;
        }
        ast->regexes[ast->n_regexes++] = re;
        ((cel_expr *)e)->call.regex = re;
}

static const cel_type *resolve_call(checker *k, cel_expr *e, const cel_type **at, size_t n);
static void check_format(checker *k, const cel_expr *e);

static const cel_type *check_call(checker *k, cel_expr *e, const tscope *s) {
        check_regex_literal(k, e);
        size_t n = e->call.nargs + (e->call.target ? 1 : 0);
        const cel_type *stack[8], **at = stack;
        if (n > ELEMENTSOF(stack)) {
                at = cel_alloc(&k->ast->arena, n * sizeof(*at));
                if (!at) {
                        k->oom = true;
                        return &cel_t_dyn;
                }
        }
        size_t i = 0;
        bool bad = false;
        /* cel-go exempts every literal under a format() call from the
         * homogeneous-literal check (HomogeneousAggregateLiteralExemptFunctions) */
        bool fmt = streq(e->call.fn, "format");
        if (fmt) k->in_format++;
        if (e->call.target) at[i++] = check(k, e->call.target, s);
        for (size_t j = 0; j < e->call.nargs; j++) at[i++] = check(k, e->call.args[j], s);
        if (fmt) k->in_format--;
        for (i = 0; i < n; i++)
                if (at[i]->kind == CT_ERROR) bad = true;
        if (bad) return &cel_t_error;
        const cel_type *r = resolve_call(k, e, at, n);
        if (fmt && r->kind != CT_ERROR && e->call.target) check_format(k, e);
        return r;
}

/* The call's type from its argument types: the operators the checker knows,
 * then the overload candidates planning found. */
/* ---- format() validation (cel-go's stringFormatValidator) ----
 * For a literal format string applied to a list literal: the clauses parse,
 * there are enough arguments and not too many, and each argument's static
 * type suits its clause. A dyn argument always suits; `any` (attribute
 * values without DRAListTypeAttributes), Quantity, Semver, optional never. */
static bool fmt_kind_ok(const cel_type *t, const char *kinds) {
        if (t == &cel_t_dyn) return true;
        if (!t || t == &cel_t_any || t->kind == CT_DYN) return false;
        static const struct {
                cel_type_kind kind;
                char code;
        } codes[] = {{CT_INT, 'i'}, {CT_UINT, 'u'}, {CT_DOUBLE, 'd'}, {CT_BOOL, 'b'}, {CT_STRING, 's'},
                     {CT_BYTES, 'y'}, {CT_LIST, 'l'}, {CT_MAP, 'm'}, {CT_NULL, 'n'}, {CT_TYPE, 't'},
                     {CT_TIMESTAMP, 'T'}, {CT_DURATION, 'D'}};
        for (size_t i = 0; i < ELEMENTSOF(codes); i++)
                if (codes[i].kind == t->kind) return strchr(kinds, codes[i].code) != NULL;
        return false;
}

/* verifyString: the argument and, inside list and map literals, every element */
/* What each verb of format() takes (fmt_kind_ok's letters; NULL: what %s
 * takes, fmt_bad_string), and cel-go's words when it is given another type. */
typedef struct fmt_rule {
        char verb;
        const char *kinds;
        const char *what;
} fmt_rule;

static const fmt_rule fmt_rules[] = {
        {'s', NULL,
         "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and "
         "timestamps"},
        {'d', "iu", "decimal clause can only be used on integers"},
        {'f', "ds", "fixed-point clause can only be used on doubles"},
        {'e', "ds", "scientific clause can only be used on doubles"},
        {'b', "iub", "only integers and bools can be formatted as binary"},
        {'o', "iu", "octal clause can only be used on integers"},
        {'x', "iusy", "only integers, byte buffers, and strings can be formatted as hex"},
};

/* The rule of a verb cel_format_clause accepted (x and X share one). */
static const fmt_rule *fmt_rule_of(char verb) {
        for (size_t i = 0; i < ELEMENTSOF(fmt_rules); i++)
                if (fmt_rules[i].verb == verb) return &fmt_rules[i];
        return &fmt_rules[ELEMENTSOF(fmt_rules) - 1];
}

static const cel_expr *fmt_bad_string(const cel_expr *a) {
        if (!fmt_kind_ok(a->type, "iudbsylmntTD")) return a;
        if (a->kind == CE_LIST)
                for (size_t i = 0; i < a->list.n; i++) {
                        const cel_expr *b = fmt_bad_string(a->list.elems[i]);
                        if (b) return b;
                }
        if (a->kind == CE_MAP)
                for (size_t i = 0; i < a->map.n; i++) {
                        const cel_expr *b = fmt_bad_string(a->map.entries[i].key);
                        if (!b) b = fmt_bad_string(a->map.entries[i].value);
                        if (b) return b;
                }
        return NULL;
}

static CEL_NOINLINE void check_format(checker *k, const cel_expr *e) {
        const cel_expr *t = e->call.target, *l = e->call.args[0];
        if (!t || t->kind != CE_CONST || t->c.kind != CV_STRING || e->call.nargs != 1 || l->kind != CE_LIST) return;
        const char *p = t->c.s.p, *end = p + t->c.s.n;
        size_t ai = 0;
        char b1[128];
        while (p < end) {
                if (*p != '%') {
                        p++;
                        continue;
                }
                if (p + 1 < end && p[1] == '%') {
                        p += 2;
                        continue;
                }
                if (p + 1 >= end) {
                        cerr(k, e->pos, "unexpected end of string");
                        return;
                }
                if (ai >= l->list.n) {
                        cerr(k, e->pos, "index %zu out of range", ai);
                        return;
                }
                cel_clause cl;
                if (cel_format_clause(p, end, &cl) < 0) {
                        cerr(k, e->pos, "%s", cl.msg);
                        return;
                }
                const cel_expr *a = l->list.elems[ai++], *bad = NULL;
                const fmt_rule *rule = fmt_rule_of(cl.verb);
                if (rule->kinds)
                        bad = fmt_kind_ok(a->type, rule->kinds) ? NULL : a;
                else
                        bad = fmt_bad_string(a);
                const char *what = rule->what;
                if (bad) {
                        const cel_type *bt = bad->type;
                        cerr(k, bad->pos, "error during formatting: %s, was given %s", what,
                             bt == &cel_t_any ? "google.protobuf.Any" : tname(k, bt, b1, sizeof b1));
                        return;
                }
                p += cl.len;
        }
        if (l->list.n > ai)
                cerr(k, e->pos, "too many arguments supplied to string.format (expected %zu, got %zu)", ai, l->list.n);
}

/* The element types cel-go declares sort, sortBy's keys, isSorted, min and
 * max for (comparableTypes), and sum (summableTypes): a list of anything
 * else matches no overload. */
static bool elem_ok(const cel_type *l, bool sum) {
        if (is_dyn(l) || l->kind == CT_PARAM) return true;
        if (l->kind != CT_LIST) return true; /* the signature rejects it */
        const cel_type *t = l->p[0];
        if (is_dyn(t) || t->kind == CT_PARAM) return true;
        switch (t->kind) {
        case CT_INT:
        case CT_UINT:
        case CT_DOUBLE:
        case CT_DURATION:
        case CT_NULL: return true; /* null is assignable to duration (and timestamp) */
        case CT_BOOL:
        case CT_STRING:
        case CT_BYTES:
        case CT_TIMESTAMP: return !sum;
        default: return false;
        }
}

static CEL_NOINLINE const cel_type *resolve_call(checker *k, cel_expr *e, const cel_type **at, size_t n) {
        size_t i;
        bool handled;
        const char *fn = e->call.fn;
        if (e->call.target && e->call.ncands &&
            (((streq(fn, "sort") || streq(fn, "isSorted") || streq(fn, "min") || streq(fn, "max") || streq(fn, "sum")) &&
              n == 1 && !elem_ok(at[0], streq(fn, "sum"))) ||
             (streq(fn, "@sortByAssociatedKeys") && n == 2 && !elem_ok(at[1], false)))) {
                dp_strbuf sb = DP_STRBUF_INIT;
                cel_type_format(&sb, at[0]);
                dp_strbuf_puts(&sb, ".(");
                if (n == 2) cel_type_format(&sb, at[1]);
                dp_strbuf_putc(&sb, ')');
                if (dp_strbuf_failed(&sb)) k->oom = true;
                cerr(k, e->pos, "found no matching overload for '%s' applied to '%s'", fn, dp_strbuf_str(&sb));
                dp_strbuf_done(&sb);
                return &cel_t_error;
        }
        const cel_type *r = check_call_special(k, e, e->call.target ? at + 1 : at, &handled);
        if (handled) return r;
        if (!e->call.ncands) {
                if (e->call.target)
                        cerr(k, e->pos, "undeclared reference to '%s' (in container '%s')", e->call.fn,
                             k->env->container ? k->env->container : "");
                else
                        cerr(k, e->pos, "undeclared reference to '%s' (in container '%s')", e->call.fn,
                             k->env->container ? k->env->container : "");
                return &cel_t_error;
        }
        const cel_type *result = NULL;
        for (size_t c = 0; c < e->call.ncands; c++) {
                const char *p = e->call.cands[c]->sig;
                binding bd = {NULL, NULL};
                bool ok = true;
                for (i = 0; i < n && ok; i++) {
                        const cel_type *st = cel_sig_type(&k->ast->arena, &p);
                        if (*p == ',') p++;
                        if (!unify(st, at[i], &bd)) ok = false;
                }
                if (!ok) continue;
                while (*p && !(p[0] == '-' && p[1] == '>')) p++;
                if (*p) p += 2;
                const cel_type *rt = subst(k, cel_sig_type(&k->ast->arena, &p), &bd);
                result = result ? join(k, result, rt) : rt;
        }
        if (!result) {
                dp_strbuf sb = DP_STRBUF_INIT;
                for (i = 0; i < n; i++) {
                        if (i) dp_strbuf_puts(&sb, ", ");
                        cel_type_format(&sb, at[i]);
                }
                if (dp_strbuf_failed(&sb)) k->oom = true;
                cerr(k, e->pos, "found no matching overload for '%s' applied to '%s(%s)'", e->call.fn,
                     e->call.target ? "" : "", dp_strbuf_str(&sb));
                dp_strbuf_done(&sb);
                return &cel_t_error;
        }
        /* sort() is one overload per comparable element type upstream: a list
         * of dyn (or a dyn) matches them all, and their results join to dyn */
        if (streq(fn, "sort") && e->call.target && n == 1 &&
            (is_dyn(at[0]) || (at[0]->kind == CT_LIST && is_dyn(at[0]->p[0]) && !is_free(at[0]->p[0]))))
                return &cel_t_dyn;
        /* an unbound element type takes the first overload's: [].sort() is
         * list(int), [].sum() (min, max) int */
        if (e->call.target && n == 1 && at[0]->kind == CT_LIST && is_free(at[0]->p[0])) {
                if (streq(fn, "sort")) return mk(k, CT_LIST, &cel_t_int, NULL);
                if (streq(fn, "sum") || streq(fn, "min") || streq(fn, "max")) return &cel_t_int;
        }
        return result;
}

/* A literal's type: the scalars as the evaluator types them (CV_NULL ..
 * CV_BYTES come first in the enum), a type literal as type(T), else dyn. */
static const cel_type *value_type(checker *k, cel_value v) {
        if (v.kind == CV_TYPE) return mk(k, CT_TYPE, v.t, NULL);
        return v.kind <= CV_BYTES ? cel_value_type(NULL, v) : &cel_t_dyn;
}

/* Recursion runs through check() and check_call() once per tree level
 * (DP_CEL_MAX_AST_DEPTH of them): whatever is only needed after the children
 * are checked (messages, overload resolution) lives in CEL_NOINLINE helpers
 * so that it is not part of every level's frame. */
/* A name that is neither a variable nor a type here: the error type. */
static const cel_type *undeclared(checker *k, uint32_t pos, const char *name) {
        cerr(k, pos, "undeclared reference to '%s' (in container '%s')", name,
             k->env->container ? k->env->container : "");
        return &cel_t_error;
}

static CEL_NOINLINE const cel_type *check_ident(checker *k, cel_expr *e, const tscope *s) {
        const cel_type *lt = e->ident.slot == -2 ? NULL : lookup(s, e->ident.name);
        if (lt) return lt;
        const cel_type *t = &cel_t_dyn;
        const char *n = e->ident.name[0] == '.' ? e->ident.name + 1 : e->ident.name;
        bool found = false;
        for (size_t i = 0; i < k->env->n_vars; i++)
                if (streq(k->env->vars[i].name, n)) {
                        t = k->env->vars[i].type;
                        found = true;
                }
        return found ? t : undeclared(k, e->pos, n);
}

static CEL_NOINLINE const cel_type *check_select(checker *k, cel_expr *e, const tscope *s) {
        const cel_type *t = &cel_t_dyn;
        const cel_type *ot = check(k, e->sel.operand, s);
        if (ot->kind == CT_ERROR) return ot;
        if (e->sel.test_only) {
                if (!is_dyn(ot) && ot->kind == CT_OPTIONAL) ot = ot->p[0];
                if (!is_dyn(ot) && ot->kind != CT_MAP && ot->kind != CT_DEVICE && ot->kind != CT_MESSAGE) {
                        type_error(k, e->pos, "type '", ot, "' does not support field selection", NULL, "");
                        t = &cel_t_error;
                } else if (ot->kind == CT_DEVICE && !device_field(k, e->sel.field)) {
                        cerr(k, e->pos, "undefined field '%s'", e->sel.field);
                        t = &cel_t_error;
                } else
                        t = &cel_t_bool;
                return t;
        }
        t = select_type(k, e, ot);
        if (t->kind != CT_ERROR && (e->sel.optional || (!is_dyn(ot) && ot->kind == CT_OPTIONAL)))
                t = mk(k, CT_OPTIONAL, t, NULL);
        return t;
}

static CEL_NOINLINE const cel_type *check_list(checker *k, cel_expr *e, const tscope *s) {
        const cel_type *t = &cel_t_dyn;
        const cel_type *el = NULL, *first = NULL;
        bool bad = false, mismatch = false;
        for (size_t i = 0; i < e->list.n; i++) {
                const cel_type *x = check(k, e->list.elems[i], s);
                if (x->kind == CT_ERROR) {
                        bad = true;
                        continue;
                }
                if (e->list.optional && e->list.optional[i]) {
                        if (!is_dyn(x) && x->kind != CT_OPTIONAL) {
                                type_error(k, e->list.elems[i]->pos, "expected type 'optional_type' but found '", x, "'",
                                           NULL, "");
                                bad = true;
                                continue;
                        }
                        if (!is_dyn(x)) x = x->p[0];
                }
                if (!first) first = x;
                else if (k->env->homogeneous_literals && !k->in_format && !mismatch && !type_exact(first, x)) {
                        type_error(k, e->list.elems[i]->pos, "expected type '", first, "' but found '", x, "'");
                        bad = mismatch = true;
                }
                if (!el) el = x;
                else if (!type_eq(el, x)) el = join(k, el, x);
        }
        t = bad ? &cel_t_error : mk(k, CT_LIST, el ? el : &t_free, NULL);
        return t;
}

static CEL_NOINLINE const cel_type *check_map(checker *k, cel_expr *e, const tscope *s) {
        const cel_type *t = &cel_t_dyn;
        const cel_type *kt = NULL, *vt = NULL, *k0 = NULL, *v0 = NULL;
        bool bad = false, kmis = false, vmis = false;
        for (size_t i = 0; i < e->map.n; i++) {
                const cel_type *x = check(k, e->map.entries[i].key, s);
                const cel_type *y = check(k, e->map.entries[i].value, s);
                if (x->kind == CT_ERROR || y->kind == CT_ERROR) {
                        bad = true;
                        continue;
                }
                /* cel-go's checker takes any key type (docs/cel.md: double keys) */
                if (e->map.entries[i].optional && !is_dyn(y)) {
                        if (y->kind != CT_OPTIONAL) {
                                type_error(k, e->map.entries[i].value->pos, "expected type 'optional_type' but found '",
                                           y, "'", NULL, "");
                                bad = true;
                                continue;
                        }
                        y = y->p[0];
                }
                if (!kt) {
                        kt = k0 = x;
                        vt = v0 = y;
                        continue;
                }
                if (k->env->homogeneous_literals && !k->in_format) {
                        if (!kmis && !type_exact(k0, x)) {
                                type_error(k, e->map.entries[i].key->pos, "expected type '", k0, "' but found '", x, "'");
                                bad = kmis = true;
                        }
                        if (!vmis && !type_exact(v0, y)) {
                                type_error(k, e->map.entries[i].value->pos, "expected type '", v0, "' but found '", y, "'");
                                bad = vmis = true;
                        }
                }
                kt = join(k, kt, x);
                vt = join(k, vt, y);
        }
        t = bad ? &cel_t_error : mk(k, CT_MAP, kt ? kt : &t_free, vt ? vt : &t_free);
        return t;
}

static CEL_NOINLINE const cel_type *check_struct(checker *k, cel_expr *e, const tscope *s) {
        for (size_t i = 0; i < e->map.n; i++) check(k, e->map.entries[i].value, s);
        return undeclared(k, e->pos, e->map.type_name);
}

static CEL_NOINLINE const cel_type *check_comp(checker *k, cel_expr *e, const tscope *s) {
        const cel_type *t = &cel_t_dyn;
        const cel_type *rt = check(k, e->comp.range, s);
        if (rt->kind == CT_ERROR) return rt;
        const cel_type *v1 = &cel_t_dyn, *v2 = &cel_t_dyn;
        if (rt == &cel_t_any) {
                type_error(k, e->comp.range->pos, "expression of type '", rt,
                           "' cannot be range of a comprehension (must be list, map, or dynamic)", NULL, "");
                return &cel_t_error;
        } else if (is_dyn(rt)) {
        } else if (rt->kind == CT_LIST) {
                if (e->comp.iter_var2) {
                        v1 = &cel_t_int;
                        v2 = rt->p[0];
                } else
                        v1 = rt->p[0];
        } else if (rt->kind == CT_MAP) {
                v1 = rt->p[0];
                v2 = rt->p[1];
        } else {
                type_error(k, e->comp.range->pos, "expression of type '", rt,
                           "' cannot be range of a comprehension (must be list, map, or dynamic)", NULL, "");
                t = &cel_t_error;
                return t;
        }
        const cel_type *at = check(k, e->comp.accu_init, s);
        tscope accu = {e->comp.accu_var, at, s};
        tscope s1 = {e->comp.iter_var, v1, &accu};
        tscope s2 = {e->comp.iter_var2 ? e->comp.iter_var2 : "", v2, &s1};
        const cel_type *ct = check(k, e->comp.cond, &s2);
        const cel_type *st = check(k, e->comp.step, &s2);
        if (ct->kind == CT_ERROR || st->kind == CT_ERROR) {
                t = &cel_t_error;
                return t;
        }
        /* an empty literal accumulator takes the step's type */
        if (!is_dyn(st) && at->kind == st->kind) accu.type = join(k, st, st);
        else if (!compatible(at, st)) accu.type = &cel_t_dyn;
        if (at->kind == CT_LIST && is_dyn(at->p[0]) && st->kind == CT_LIST) accu.type = st;
        if (at->kind == CT_MAP && is_dyn(at->p[0]) && st->kind == CT_MAP) accu.type = st;
        t = check(k, e->comp.result, &accu);
        return t;
}

static const cel_type *check(checker *k, cel_expr *e, const tscope *s) {
        const cel_type *t = &cel_t_dyn;
        switch (e->kind) {
        case CE_CONST: t = value_type(k, e->c); break;
        case CE_IDENT: t = check_ident(k, e, s); break;
        case CE_SELECT: t = check_select(k, e, s); break;
        case CE_CALL: t = check_call(k, e, s); break;
        case CE_LIST: t = check_list(k, e, s); break;
        case CE_MAP: t = check_map(k, e, s); break;
        case CE_STRUCT: t = check_struct(k, e, s); break;
        case CE_COMPREHENSION: t = check_comp(k, e, s); break;
        }
        e->type = t;
        return t;
}

int cel_check(cel_ast *ast, const cel_env *env, const cel_type **ret_type, dp_error *err) {
        checker k = {.ast = ast, .env = env, .msgs = DP_STRBUF_INIT};
        const cel_type *t = check(&k, ast->root, NULL);
        /* an error text that could not be built is out of memory too */
        if (k.oom || ast->arena.failed || dp_strbuf_failed(&k.msgs)) {
                dp_strbuf_done(&k.msgs);
                return dp_error_set(err, -ENOMEM, "out of memory while type-checking");
        }
        if (k.nerr) {
                dp_error_set(err, -EINVAL, "%s", dp_strbuf_str(&k.msgs));
                dp_strbuf_done(&k.msgs);
                return -EINVAL;
        }
        dp_strbuf_done(&k.msgs);
        *ret_type = t;
        return 0;
}
