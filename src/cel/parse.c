/* SPDX-License-Identifier: Apache-2.0
 * CEL lexer and recursive-descent parser (cel-spec langdef grammar), with
 * macro expansion into comprehensions as cel-go does it. Recursion depth is
 * capped at DP_CEL_MAX_DEPTH; errors carry line:column (1-based) and a
 * caret snippet in cel-go's style. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "base/utf8.h"
#include "cel/cel-internal.h"

typedef enum {
        TK_EOF = 0,
        TK_ERR,
        TK_IDENT,
        TK_INT,
        TK_UINT,
        TK_DOUBLE,
        TK_STRING,
        TK_BYTES,
        TK_PUNCT,
        TK_QIDENT, /* `quoted field name` (cel-go >= 0.28) */
} tok_kind;

typedef struct tok {
        tok_kind kind;
        uint32_t start, end;
        char p[3]; /* punctuation text */
        cel_value v;
} tok;

typedef struct parser {
        const char *src;
        size_t len;
        size_t pos;
        tok t;          /* current token */
        cel_ast *ast;
        dp_error *err;
        int nerr;
        int depth;
        bool too_deep; /* the recursion limit was hit: -E2BIG, not a syntax error */
        bool macros;
        dp_strbuf msgs;
} parser;

#define MAX_ERRORS 100

static void perr(parser *p, uint32_t pos, const char *fmt, ...) _printf_(3, 4);
static void perr(parser *p, uint32_t pos, const char *fmt, ...) {
        if (p->nerr++ >= MAX_ERRORS) return;
        va_list ap;
        va_start(ap, fmt);
        cel_message_vadd(&p->msgs, p->src, p->len, pos, fmt, ap);
        va_end(ap);
}

void cel_message_vadd(dp_strbuf *msgs, const char *src, size_t len, uint32_t pos, const char *fmt, va_list ap) {
        unsigned line, col;
        cel_pos(src, len, pos, &line, &col);
        if (msgs->len) dp_strbuf_putc(msgs, '\n');
        dp_strbuf_printf(msgs, "ERROR: <input>:%u:%u: ", line, col);
        dp_strbuf_vprintf(msgs, fmt, ap);
        /* snippet of the line with a caret under the column */
        size_t ls = pos < len ? pos : len;
        while (ls > 0 && src[ls - 1] != '\n') ls--;
        size_t le = ls;
        while (le < len && src[le] != '\n') le++;
        dp_strbuf_puts(msgs, "\n | ");
        dp_strbuf_append(msgs, src + ls, le - ls);
        dp_strbuf_puts(msgs, "\n | ");
        for (unsigned i = 1; i < col; i++) dp_strbuf_putc(msgs, '.');
        dp_strbuf_putc(msgs, '^');
}

void cel_pos(const char *src, size_t len, uint32_t pos, unsigned *line, unsigned *col) {
        unsigned l = 1, c = 1;
        for (size_t i = 0; i < pos && i < len; i++) {
                if (src[i] == '\n') {
                        l++;
                        c = 1;
                } else if (((unsigned char)src[i] & 0xC0) != 0x80)
                        c++;
        }
        *line = l;
        *col = c;
}

/* ---- lexer ---- */
static bool is_ident_start(int c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static int hexval(int c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
}

static void put_utf8(dp_strbuf *sb, uint32_t cp) {
        char b[4];
        dp_strbuf_append(sb, b, dp_utf8_encode(cp, b));
}

/* Lex a string/bytes literal starting at p->pos (after the prefix). */
static void lex_string(parser *p, tok *t, bool raw, bool bytes) {
        const char *s = p->src;
        size_t i = p->pos, n = p->len;
        char q = s[i];
        bool triple = i + 2 < n && s[i + 1] == q && s[i + 2] == q;
        i += triple ? 3 : 1;
        dp_strbuf sb = DP_STRBUF_INIT;
        for (;;) {
                if (i >= n) {
                        perr(p, t->start, "Syntax error: token recognition error: unterminated string literal");
                        t->kind = TK_ERR;
                        goto out;
                }
                char c = s[i];
                if (triple) {
                        if (c == q && i + 2 < n && s[i + 1] == q && s[i + 2] == q) {
                                i += 3;
                                break;
                        }
                } else {
                        if (c == q) {
                                i++;
                                break;
                        }
                        if (c == '\n' || c == '\r') {
                                perr(p, t->start, "Syntax error: token recognition error: newline in string literal");
                                t->kind = TK_ERR;
                                goto out;
                        }
                }
                if (c != '\\' || raw) {
                        dp_strbuf_putc(&sb, c);
                        i++;
                        continue;
                }
                /* escape */
                if (i + 1 >= n) {
                        perr(p, (uint32_t)i, "Syntax error: invalid escape sequence");
                        t->kind = TK_ERR;
                        goto out;
                }
                char e = s[i + 1];
                i += 2;
                if (cel_escape_byte(e)) {
                        dp_strbuf_putc(&sb, cel_escape_byte(e));
                        continue;
                }
                switch (e) {
                case '\\': case '?': case '"': case '\'': case '`': dp_strbuf_putc(&sb, e); break;
                case 'x': case 'X': case 'u': case 'U': {
                        int nd = (e == 'x' || e == 'X') ? 2 : e == 'u' ? 4 : 8;
                        uint32_t cp = 0;
                        for (int k = 0; k < nd; k++) {
                                int h = i < n ? hexval(s[i]) : -1;
                                if (h < 0) {
                                        perr(p, (uint32_t)i, "Syntax error: invalid escape sequence");
                                        t->kind = TK_ERR;
                                        goto out;
                                }
                                cp = cp * 16 + (uint32_t)h;
                                i++;
                        }
                        if (nd == 2 && bytes) dp_strbuf_putc(&sb, (char)cp);
                        else if (nd > 2 && bytes) {
                                perr(p, (uint32_t)i, "Syntax error: unicode escape in bytes literal");
                                t->kind = TK_ERR;
                                goto out;
                        } else {
                                if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
                                        perr(p, (uint32_t)i, "Syntax error: invalid unicode code point");
                                        t->kind = TK_ERR;
                                        goto out;
                                }
                                put_utf8(&sb, cp);
                        }
                        break;
                }
                default:
                        if (e >= '0' && e <= '3' && i + 1 < n && s[i] >= '0' && s[i] <= '7' && s[i + 1] >= '0' &&
                            s[i + 1] <= '7') {
                                uint32_t v = (uint32_t)(e - '0') * 64 + (uint32_t)(s[i] - '0') * 8 + (uint32_t)(s[i + 1] - '0');
                                i += 2;
                                if (bytes) dp_strbuf_putc(&sb, (char)v);
                                else put_utf8(&sb, v);
                                break;
                        }
                        perr(p, (uint32_t)(i - 2), "Syntax error: invalid escape sequence '\\%c'", e);
                        t->kind = TK_ERR;
                        goto out;
                }
        }
        if (dp_strbuf_failed(&sb)) {
                /* a truncated buffer must not be judged as text: it is out of memory */
                t->kind = TK_ERR;
                p->ast->arena.failed = true;
                goto out;
        }
        if (!bytes && !dp_utf8_valid(dp_strbuf_str(&sb), sb.len)) {
                perr(p, t->start, "Syntax error: invalid UTF-8 in string literal");
                t->kind = TK_ERR;
                goto out;
        }
        {
                char *v = cel_strndup(&p->ast->arena, dp_strbuf_str(&sb), sb.len);
                if (!v || dp_strbuf_failed(&sb)) {
                        t->kind = TK_ERR;
                        p->ast->arena.failed = true;
                        goto out;
                }
                t->kind = bytes ? TK_BYTES : TK_STRING;
                t->v = bytes ? cel_bytes(v, sb.len) : cel_str(v, sb.len);
        }
out:
        dp_strbuf_done(&sb);
        p->pos = i;
}

static void lex_number(parser *p, tok *t) {
        const char *s = p->src;
        size_t i = p->pos, n = p->len;
        if (s[i] == '0' && i + 1 < n && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
                size_t j = i + 2;
                uint64_t v = 0;
                bool ovf = false;
                while (j < n && hexval(s[j]) >= 0) {
                        if (v >> 60) ovf = true;
                        v = v * 16 + (uint64_t)hexval(s[j]);
                        j++;
                }
                if (j == i + 2) {
                        perr(p, t->start, "Syntax error: invalid hex literal");
                        t->kind = TK_ERR;
                        p->pos = j;
                        return;
                }
                bool u = j < n && (s[j] == 'u' || s[j] == 'U');
                if (u) j++;
                p->pos = j;
                if (ovf || (!u && v > (uint64_t)INT64_MAX + 1)) {
                        perr(p, t->start, "invalid int literal");
                        t->kind = TK_ERR;
                        return;
                }
                t->kind = u ? TK_UINT : TK_INT;
                t->v = u ? cel_uint(v) : (cel_value){.kind = CV_UINT, .u = v}; /* int sign fixed by parser */
                if (!u) t->v.kind = CV_UINT;
                return;
        }
        size_t j = i;
        while (j < n && is_digit(s[j])) j++;
        bool is_float = false;
        if (j < n && s[j] == '.' && j + 1 < n && is_digit(s[j + 1])) {
                is_float = true;
                j++;
                while (j < n && is_digit(s[j])) j++;
        }
        if (j < n && (s[j] == 'e' || s[j] == 'E')) {
                size_t k = j + 1;
                if (k < n && (s[k] == '+' || s[k] == '-')) k++;
                if (k < n && is_digit(s[k])) {
                        is_float = true;
                        j = k;
                        while (j < n && is_digit(s[j])) j++;
                }
        }
        if (is_float) {
                char buf[128];
                size_t len = DP_MIN(j - i, sizeof buf - 1);
                memcpy(buf, s + i, len);
                buf[len] = 0;
                t->kind = TK_DOUBLE;
                t->v = cel_double(strtod(buf, NULL));
                p->pos = j;
                return;
        }
        uint64_t v = 0;
        bool ovf = false;
        for (size_t k = i; k < j; k++) {
                if (v > (UINT64_MAX - 9) / 10 && (v > UINT64_MAX / 10 || v * 10 > UINT64_MAX - (uint64_t)(s[k] - '0')))
                        ovf = true;
                v = v * 10 + (uint64_t)(s[k] - '0');
        }
        bool u = j < n && (s[j] == 'u' || s[j] == 'U');
        if (u) j++;
        p->pos = j;
        if (ovf || (!u && v > (uint64_t)INT64_MAX + 1)) {
                perr(p, t->start, "invalid %s literal", u ? "uint" : "int");
                t->kind = TK_ERR;
                return;
        }
        t->kind = u ? TK_UINT : TK_INT;
        t->v = cel_uint(v); /* magnitude; TK_INT sign applied by the parser */
}

static void next(parser *p) {
        const char *s = p->src;
        size_t n = p->len;
        tok *t = &p->t;
        memset(t, 0, sizeof(*t));
        for (;;) {
                while (p->pos < n && (s[p->pos] == ' ' || s[p->pos] == '\t' || s[p->pos] == '\n' || s[p->pos] == '\r' ||
                                      s[p->pos] == '\f'))
                        p->pos++;
                if (p->pos + 1 < n && s[p->pos] == '/' && s[p->pos + 1] == '/') {
                        while (p->pos < n && s[p->pos] != '\n') p->pos++;
                        continue;
                }
                break;
        }
        t->start = (uint32_t)p->pos;
        if (p->pos >= n) {
                t->kind = TK_EOF;
                t->end = t->start;
                return;
        }
        char c = s[p->pos];
        /* string prefixes: r, b, rb, br (any case) */
        if (is_ident_start((unsigned char)c)) {
                size_t j = p->pos;
                bool raw = false, bytes = false;
                size_t k = j;
                for (int m = 0; m < 2 && k < n; m++) {
                        char d = s[k];
                        if ((d == 'r' || d == 'R') && !raw) {
                                raw = true;
                                k++;
                        } else if ((d == 'b' || d == 'B') && !bytes) {
                                bytes = true;
                                k++;
                        } else
                                break;
                }
                if (k > j && k < n && (s[k] == '"' || s[k] == '\'')) {
                        p->pos = k;
                        lex_string(p, t, raw, bytes);
                        t->end = (uint32_t)p->pos;
                        return;
                }
                while (j < n && (is_ident_start((unsigned char)s[j]) || is_digit(s[j]))) j++;
                t->kind = TK_IDENT;
                t->v = cel_str(s + p->pos, j - p->pos);
                p->pos = j;
                t->end = (uint32_t)j;
                return;
        }
        if (c == '`') {
                size_t j = p->pos + 1;
                while (j < n && s[j] != '`' && s[j] != '\n') j++;
                if (j >= n || s[j] != '`' || j == p->pos + 1) {
                        perr(p, t->start, "Syntax error: token recognition error at: '`'");
                        t->kind = TK_ERR;
                        p->pos = j < n ? j + 1 : n;
                        t->end = (uint32_t)p->pos;
                        return;
                }
                t->kind = TK_QIDENT;
                t->v = cel_str(s + p->pos + 1, j - p->pos - 1);
                p->pos = j + 1;
                t->end = (uint32_t)p->pos;
                return;
        }
        if (c == '"' || c == '\'') {
                lex_string(p, t, false, false);
                t->end = (uint32_t)p->pos;
                return;
        }
        if (is_digit(c) || (c == '.' && p->pos + 1 < n && is_digit(s[p->pos + 1]))) {
                lex_number(p, t);
                t->end = (uint32_t)p->pos;
                return;
        }
        static const char *const two[] = {"==", "!=", "<=", ">=", "&&", "||"};
        for (size_t i = 0; i < ELEMENTSOF(two); i++)
                if (p->pos + 1 < n && s[p->pos] == two[i][0] && s[p->pos + 1] == two[i][1]) {
                        t->kind = TK_PUNCT;
                        memcpy(t->p, two[i], 2);
                        p->pos += 2;
                        t->end = (uint32_t)p->pos;
                        return;
                }
        if (strchr("()[]{}.,:?!-+*/%<>", c)) {
                t->kind = TK_PUNCT;
                t->p[0] = c;
                p->pos++;
                t->end = (uint32_t)p->pos;
                return;
        }
        perr(p, t->start, "Syntax error: token recognition error at: '%c'", c);
        t->kind = TK_ERR;
        p->pos++;
        /* skip the whole UTF-8 sequence */
        while (p->pos < n && ((unsigned char)s[p->pos] & 0xC0) == 0x80) p->pos++;
        t->end = (uint32_t)p->pos;
}

static bool is_p(const parser *p, const char *s) { return p->t.kind == TK_PUNCT && streq(p->t.p, s); }
static bool is_kw(const parser *p, const char *kw) {
        return p->t.kind == TK_IDENT && p->t.v.s.n == strlen(kw) && memcmp(p->t.v.s.p, kw, p->t.v.s.n) == 0;
}
/* A "?" (optional entry, field or index) before what follows: taken. */
static bool take_optional(parser *p) {
        if (!is_p(p, "?")) return false;
        next(p);
        return true;
}

static const char *tok_text(parser *p, char *buf, size_t size) {
        if (p->t.kind == TK_EOF) return "<EOF>";
        size_t n = DP_MIN((size_t)(p->t.end - p->t.start), size - 1);
        memcpy(buf, p->src + p->t.start, n);
        buf[n] = 0;
        return buf;
}

static bool expect(parser *p, const char *s) {
        if (is_p(p, s)) {
                next(p);
                return true;
        }
        char buf[64];
        if (p->t.kind != TK_ERR) perr(p, p->t.start, "Syntax error: mismatched input '%s' expecting '%s'", tok_text(p, buf, sizeof buf), s);
        return false;
}

/* ---- AST building ---- */
static cel_expr *node(parser *p, cel_expr_kind k, uint32_t pos) {
        cel_expr *e = cel_alloc(&p->ast->arena, sizeof(*e));
        if (!e) return NULL;
        e->kind = k;
        e->id = ++p->ast->next_id;
        e->pos = pos;
        return e;
}

static const char *intern(parser *p, const char *s, size_t n) { return cel_strndup(&p->ast->arena, s, n); }

static cel_expr *mk_ident(parser *p, const char *name, uint32_t pos) {
        cel_expr *e = node(p, CE_IDENT, pos);
        if (e) {
                e->ident.name = name;
                e->ident.slot = -1;
        }
        return e;
}

static cel_expr *mk_call(parser *p, uint32_t pos, cel_expr *target, const char *fn, size_t nargs, ...) {
        cel_expr *e = node(p, CE_CALL, pos);
        if (!e) return NULL;
        e->call.target = target;
        e->call.fn = fn;
        e->call.nargs = nargs;
        e->call.args = cel_alloc(&p->ast->arena, sizeof(cel_expr *) * (nargs ? nargs : 1));
        if (!e->call.args) return NULL;
        va_list ap;
        va_start(ap, nargs);
        for (size_t i = 0; i < nargs; i++) {
                e->call.args[i] = va_arg(ap, cel_expr *);
                if (!e->call.args[i]) e = NULL;
        }
        va_end(ap);
        if (target == NULL && e && e->call.target) e = NULL;
        return e;
}

static cel_expr *mk_const(parser *p, cel_value v, uint32_t pos) {
        cel_expr *e = node(p, CE_CONST, pos);
        if (e) e->c = v;
        return e;
}

static cel_expr *mk_list(parser *p, uint32_t pos, size_t n, cel_expr *one) {
        cel_expr *e = node(p, CE_LIST, pos);
        if (!e) return NULL;
        e->list.n = n;
        e->list.elems = cel_alloc(&p->ast->arena, sizeof(cel_expr *) * (n ? n : 1));
        if (!e->list.elems) return NULL;
        if (n) e->list.elems[0] = one;
        return e;
}

static cel_expr *mk_comp(parser *p, uint32_t pos, const char *iv, const char *iv2, cel_expr *range, const char *accu,
                         cel_expr *init, cel_expr *cond, cel_expr *step, cel_expr *result) {
        if (!range || !init || !cond || !step || !result) return NULL;
        cel_expr *e = node(p, CE_COMPREHENSION, pos);
        if (!e) return NULL;
        e->comp.iter_var = iv;
        e->comp.iter_var2 = iv2;
        e->comp.range = range;
        e->comp.accu_var = accu;
        e->comp.accu_init = init;
        e->comp.cond = cond;
        e->comp.step = step;
        e->comp.result = result;
        return e;
}

#define ACCU "@result"

static bool simple_name(parser *p, cel_expr *e, const char **ret) {
        if (!e || e->kind != CE_IDENT) {
                perr(p, e ? e->pos : 0, "argument must be a simple name");
                return false;
        }
        *ret = e->ident.name;
        return true;
}

/* Expand a macro if (target, fn, nargs) names one. Returns NULL and sets
 * *handled=false when it is not a macro. */
static cel_expr *expand_macro(parser *p, uint32_t pos, cel_expr *target, const char *fn, cel_expr **args, size_t n,
                              bool *handled) {
        *handled = true;
        const char *v = NULL, *v2 = NULL;
        if (!target) {
                if (streq(fn, "has") && n == 1) {
                        cel_expr *a = args[0];
                        if (!a || a->kind != CE_SELECT || a->sel.optional || a->sel.test_only) {
                                perr(p, a ? a->pos : pos, "invalid argument to has() macro");
                                return NULL;
                        }
                        cel_expr *e = node(p, CE_SELECT, pos);
                        if (!e) return NULL;
                        e->sel = a->sel;
                        e->sel.test_only = true;
                        return e;
                }
                *handled = false;
                return NULL;
        }
        bool two = n == 3 && (streq(fn, "all") || streq(fn, "exists") || streq(fn, "existsOne") ||
                              streq(fn, "transformList") || streq(fn, "transformMap") || streq(fn, "transformMapEntry"));
        bool two4 = n == 4 && (streq(fn, "transformList") || streq(fn, "transformMap") || streq(fn, "transformMapEntry"));
        if (streq(fn, "bind") && n == 3 && target->kind == CE_IDENT && streq(target->ident.name, "cel")) {
                if (!simple_name(p, args[0], &v)) return NULL;
                return mk_comp(p, pos, "#unused", NULL, mk_list(p, pos, 0, NULL), v, args[1], mk_const(p, cel_bool(false), pos),
                               mk_ident(p, v, pos), args[2]);
        }
        if ((streq(fn, "optMap") || streq(fn, "optFlatMap")) && n == 2) {
                if (!simple_name(p, args[0], &v)) return NULL;
                cel_expr *val = mk_call(p, pos, target, "value", 0);
                cel_expr *bound = mk_comp(p, pos, "#unused", NULL, mk_list(p, pos, 0, NULL), v, val,
                                          mk_const(p, cel_bool(false), pos), mk_ident(p, v, pos), args[1]);
                if (streq(fn, "optMap")) bound = mk_call(p, pos, NULL, "optional.of", 1, bound);
                return mk_call(p, pos, NULL, "_?_:_", 3, mk_call(p, pos, target, "hasValue", 0), bound,
                               mk_call(p, pos, NULL, "optional.none", 0));
        }
        if (streq(fn, "sortBy") && n == 2) {
                /* lists extension v2: bind the target once, sort it by the mapped keys */
                if (target->kind != CE_LIST && target->kind != CE_SELECT && target->kind != CE_IDENT &&
                    target->kind != CE_COMPREHENSION && target->kind != CE_CALL) {
                        perr(p, target->pos, "sortBy can only be applied to a list, identifier, comprehension, call or select expression");
                        return NULL;
                }
                if (!simple_name(p, args[0], &v)) return NULL;
                static const char in[] = "@__sortBy_input__";
                cel_expr *app = mk_call(p, pos, NULL, "_+_", 2, mk_ident(p, ACCU, pos), mk_list(p, pos, 1, args[1]));
                cel_expr *keys = mk_comp(p, pos, v, NULL, mk_ident(p, in, pos), ACCU, mk_list(p, pos, 0, NULL),
                                         mk_const(p, cel_bool(true), pos), app, mk_ident(p, ACCU, pos));
                cel_expr *call = mk_call(p, pos, mk_ident(p, in, pos), "@sortByAssociatedKeys", 1, keys);
                return mk_comp(p, pos, "#unused", NULL, mk_list(p, pos, 0, NULL), in, target, mk_const(p, cel_bool(false), pos),
                               mk_ident(p, in, pos), call);
        }
        bool one = n == 2 && (streq(fn, "all") || streq(fn, "exists") || streq(fn, "exists_one") || streq(fn, "existsOne") ||
                              streq(fn, "map") || streq(fn, "filter"));
        bool map3 = n == 3 && streq(fn, "map");
        if (!one && !two && !two4 && !map3) {
                *handled = false;
                return NULL;
        }
        if (!simple_name(p, args[0], &v)) return NULL;
        size_t ai = 1;
        if (two || two4) {
                if (!simple_name(p, args[1], &v2)) return NULL;
                ai = 2;
                if (streq(v, ACCU) || streq(v2, ACCU)) {
                        perr(p, pos, "iteration variable overwrites accumulator variable");
                        return NULL;
                }
                if (streq(v, v2)) {
                        perr(p, args[1]->pos, "duplicate variable name: %s", v);
                        return NULL;
                }
        }
        cel_expr *acc = mk_ident(p, ACCU, pos);
        if (streq(fn, "all") || streq(fn, "exists")) {
                bool all = streq(fn, "all");
                cel_expr *cond = all ? mk_call(p, pos, NULL, "@not_strictly_false", 1, mk_ident(p, ACCU, pos))
                                     : mk_call(p, pos, NULL, "@not_strictly_false", 1,
                                               mk_call(p, pos, NULL, "!_", 1, mk_ident(p, ACCU, pos)));
                cel_expr *step = mk_call(p, pos, NULL, all ? "_&&_" : "_||_", 2, mk_ident(p, ACCU, pos), args[ai]);
                return mk_comp(p, pos, v, v2, target, ACCU, mk_const(p, cel_bool(all), pos), cond, step, acc);
        }
        if (streq(fn, "exists_one") || streq(fn, "existsOne")) {
                cel_expr *step = mk_call(p, pos, NULL, "_?_:_", 3, args[ai],
                                         mk_call(p, pos, NULL, "_+_", 2, mk_ident(p, ACCU, pos), mk_const(p, cel_int(1), pos)),
                                         mk_ident(p, ACCU, pos));
                return mk_comp(p, pos, v, v2, target, ACCU, mk_const(p, cel_int(0), pos), mk_const(p, cel_bool(true), pos),
                               step, mk_call(p, pos, NULL, "_==_", 2, acc, mk_const(p, cel_int(1), pos)));
        }
        if (streq(fn, "map") || streq(fn, "filter") || streq(fn, "transformList")) {
                cel_expr *filt = NULL, *tr;
                if (streq(fn, "filter")) {
                        filt = args[1];
                        tr = mk_ident(p, v, pos);
                } else if (n - ai == 2) {
                        filt = args[ai];
                        tr = args[ai + 1];
                } else
                        tr = args[ai];
                cel_expr *app = mk_call(p, pos, NULL, "_+_", 2, mk_ident(p, ACCU, pos), mk_list(p, pos, 1, tr));
                cel_expr *step = filt ? mk_call(p, pos, NULL, "_?_:_", 3, filt, app, mk_ident(p, ACCU, pos)) : app;
                return mk_comp(p, pos, v, v2, target, ACCU, mk_list(p, pos, 0, NULL), mk_const(p, cel_bool(true), pos), step,
                               acc);
        }
        /* transformMap / transformMapEntry */
        bool entry = streq(fn, "transformMapEntry");
        cel_expr *filt = n - ai == 2 ? args[ai] : NULL, *tr = args[n - 1];
        cel_expr *ins = entry ? mk_call(p, pos, NULL, "cel.@mapInsert", 2, mk_ident(p, ACCU, pos), tr)
                              : mk_call(p, pos, NULL, "cel.@mapInsert", 3, mk_ident(p, ACCU, pos), mk_ident(p, v, pos), tr);
        cel_expr *step = filt ? mk_call(p, pos, NULL, "_?_:_", 3, filt, ins, mk_ident(p, ACCU, pos)) : ins;
        cel_expr *init = node(p, CE_MAP, pos);
        return mk_comp(p, pos, v, v2, target, ACCU, init, mk_const(p, cel_bool(true), pos), step, acc);
}

/* ---- grammar ---- */
static cel_expr *parse_expr(parser *p);

static const char *const reserved[] = {"as",      "break", "const", "continue", "else",    "for",
                                       "function", "if",   "import", "let",     "loop",    "package",
                                       "namespace", "return", "var",  "void",   "while"};

static bool is_reserved(const char *s, size_t n) {
        for (size_t i = 0; i < ELEMENTSOF(reserved); i++)
                if (strlen(reserved[i]) == n && memcmp(reserved[i], s, n) == 0) return true;
        return false;
}

static bool enter(parser *p) {
        if (p->depth + 1 > DP_CEL_MAX_DEPTH) {
                if (!p->too_deep) perr(p, p->t.start, "expression recursion limit exceeded: %d", DP_CEL_MAX_DEPTH);
                p->too_deep = true;
                return false;
        }
        p->depth++;
        return true;
}

/* args until ')' ; returns count, fills *ret (arena) */
static bool parse_args(parser *p, const char *close, cel_expr ***ret, size_t *ret_n) {
        cel_expr **v = NULL;
        size_t n = 0, cap = 0;
        while (!is_p(p, close)) {
                cel_expr *e = parse_expr(p);
                if (!e) return false;
                if (n == cap) {
                        size_t nc = cap ? cap * 2 : 4;
                        cel_expr **nv = cel_alloc(&p->ast->arena, nc * sizeof(*nv));
                        if (!nv) return false;
                        if (n) memcpy(nv, v, n * sizeof(*nv));
                        v = nv;
                        cap = nc;
                }
                v[n++] = e;
                if (!is_p(p, ",")) break;
                next(p);
        }
        if (!expect(p, close)) return false;
        *ret = v;
        *ret_n = n;
        return true;
}

static cel_expr *make_call(parser *p, uint32_t pos, cel_expr *target, const char *fn, cel_expr **args, size_t n) {
        if (!fn) return NULL; /* intern() failed: the arena is marked failed */
        if (p->macros) {
                bool handled;
                cel_expr *m = expand_macro(p, pos, target, fn, args, n, &handled);
                if (handled) return m;
        }
        cel_expr *e = node(p, CE_CALL, pos);
        if (!e) return NULL;
        e->call.target = target;
        e->call.fn = fn;
        e->call.args = args;
        e->call.nargs = n;
        return e;
}

static bool qualified_name(cel_expr *e, dp_strbuf *sb) {
        if (e->kind == CE_IDENT) {
                dp_strbuf_puts(sb, e->ident.name);
                return true;
        }
        if (e->kind == CE_SELECT && !e->sel.optional && !e->sel.test_only) {
                if (!qualified_name(e->sel.operand, sb)) return false;
                dp_strbuf_putc(sb, '.');
                dp_strbuf_puts(sb, e->sel.field);
                return true;
        }
        return false;
}

/* Append to a map or message literal's entries, growing the arena array;
 * false on allocation failure. */
static bool map_append(parser *p, cel_expr *e, size_t *cap, cel_entry entry) {
        if (e->map.n == *cap) {
                size_t nc = *cap ? *cap * 2 : 4;
                cel_entry *ne = cel_alloc(&p->ast->arena, nc * sizeof(*ne));
                if (!ne) return false;
                if (e->map.n) memcpy(ne, e->map.entries, e->map.n * sizeof(*ne));
                e->map.entries = ne;
                *cap = nc;
        }
        e->map.entries[e->map.n++] = entry;
        return true;
}

static cel_expr *parse_struct(parser *p, cel_expr *name_expr, uint32_t pos) {
        dp_strbuf sb = DP_STRBUF_INIT;
        if (!qualified_name(name_expr, &sb)) {
                dp_strbuf_done(&sb);
                perr(p, pos, "Syntax error: mismatched input '{'");
                return NULL;
        }
        if (dp_strbuf_failed(&sb)) {
                dp_strbuf_done(&sb);
                p->ast->arena.failed = true;
                return NULL;
        }
        cel_expr *e = node(p, CE_STRUCT, pos);
        if (!e) {
                dp_strbuf_done(&sb);
                return NULL;
        }
        e->map.type_name = intern(p, dp_strbuf_str(&sb), sb.len);
        dp_strbuf_done(&sb);
        next(p); /* '{' */
        size_t cap = 0;
        while (!is_p(p, "}")) {
                bool opt = take_optional(p);
                if (p->t.kind != TK_IDENT && p->t.kind != TK_QIDENT) {
                        char buf[64];
                        perr(p, p->t.start, "Syntax error: mismatched input '%s' expecting IDENTIFIER", tok_text(p, buf, sizeof buf));
                        return NULL;
                }
                const char *f = intern(p, p->t.v.s.p, p->t.v.s.n);
                next(p);
                if (!expect(p, ":")) return NULL;
                cel_expr *v = parse_expr(p);
                if (!v) return NULL;
                if (!map_append(p, e, &cap, (cel_entry){NULL, f, v, opt})) return NULL;
                if (!is_p(p, ",")) break;
                next(p);
        }
        if (!expect(p, "}")) return NULL;
        return e;
}

/* After an identifier: a call when "(" follows (named call_name), else the
 * identifier itself. */
static cel_expr *ident_or_call(parser *p, uint32_t pos, const char *name, const char *call_name) {
        if (!is_p(p, "(")) return mk_ident(p, name, pos);
        next(p);
        cel_expr **args = NULL;
        size_t na = 0;
        if (!parse_args(p, ")", &args, &na)) return NULL;
        return make_call(p, pos, NULL, call_name, args, na);
}

/* true, false, null, a reserved word (refused), an identifier or a call. */
static cel_expr *parse_ident(parser *p, uint32_t pos) {
        const char *s = p->t.v.s.p;
        size_t n = p->t.v.s.n;
        if (n == 4 && !memcmp(s, "true", 4)) {
                next(p);
                return mk_const(p, cel_bool(true), pos);
        }
        if (n == 5 && !memcmp(s, "false", 5)) {
                next(p);
                return mk_const(p, cel_bool(false), pos);
        }
        if (n == 4 && !memcmp(s, "null", 4)) {
                next(p);
                return mk_const(p, cel_null(), pos);
        }
        if ((n == 2 && !memcmp(s, "in", 2)) || is_reserved(s, n)) {
                perr(p, pos, "reserved identifier: %.*s", (int)n, s);
                next(p);
                return NULL;
        }
        const char *name = intern(p, s, n);
        next(p);
        return ident_or_call(p, pos, name, name);
}

/* ".name": a root-scoped identifier (or call), after the dot. */
static cel_expr *parse_root_ident(parser *p, uint32_t pos) {
        char buf[64];
        if (p->t.kind != TK_IDENT) {
                perr(p, p->t.start, "Syntax error: mismatched input '%s' expecting IDENTIFIER",
                     tok_text(p, buf, sizeof buf));
                return NULL;
        }
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_strbuf_putc(&sb, '.');
        dp_strbuf_append(&sb, p->t.v.s.p, p->t.v.s.n);
        const char *name = dp_strbuf_failed(&sb) ? NULL : intern(p, dp_strbuf_str(&sb), sb.len);
        dp_strbuf_done(&sb);
        if (!name) {
                p->ast->arena.failed = true;
                return NULL;
        }
        next(p);
        return ident_or_call(p, pos, name, name + 1);
}

/* Room for one more element of a list literal (elements and, once one is
 * optional, the optional flags), doubled in the AST arena. */
static bool list_reserve(parser *p, cel_expr *e, size_t *cap, bool opt) {
        if (e->list.n == *cap) {
                size_t nc = *cap ? *cap * 2 : 4;
                cel_expr **ne = cel_alloc(&p->ast->arena, nc * sizeof(*ne));
                bool *no = cel_alloc(&p->ast->arena, nc * sizeof(bool));
                if (!ne || !no) return false;
                if (e->list.n) {
                        memcpy(ne, e->list.elems, e->list.n * sizeof(*ne));
                        if (e->list.optional) memcpy(no, e->list.optional, e->list.n);
                }
                e->list.elems = ne;
                if (e->list.optional || opt) e->list.optional = no;
                *cap = nc;
        }
        if (opt && !e->list.optional) {
                e->list.optional = cel_alloc(&p->ast->arena, *cap * sizeof(bool));
                if (!e->list.optional) return false;
        }
        return true;
}

/* "[a, ?b, ...]", after the "[". */
static cel_expr *parse_list_literal(parser *p, uint32_t pos) {
        cel_expr *e = node(p, CE_LIST, pos);
        if (!e) return NULL;
        size_t cap = 0;
        while (!is_p(p, "]")) {
                bool opt = take_optional(p);
                cel_expr *x = parse_expr(p);
                if (!x || !list_reserve(p, e, &cap, opt)) return NULL;
                if (e->list.optional) e->list.optional[e->list.n] = opt;
                e->list.elems[e->list.n++] = x;
                if (!is_p(p, ",")) break;
                next(p);
        }
        if (!expect(p, "]")) return NULL;
        return e;
}

/* "{k: v, ?k2: v2, ...}", after the "{". */
static cel_expr *parse_map_literal(parser *p, uint32_t pos) {
        cel_expr *e = node(p, CE_MAP, pos);
        if (!e) return NULL;
        size_t cap = 0;
        while (!is_p(p, "}")) {
                bool opt = take_optional(p);
                cel_expr *k = parse_expr(p);
                if (!k) return NULL;
                if (!expect(p, ":")) return NULL;
                cel_expr *v = parse_expr(p);
                if (!v) return NULL;
                if (!map_append(p, e, &cap, (cel_entry){k, NULL, v, opt})) return NULL;
                if (!is_p(p, ",")) break;
                next(p);
        }
        if (!expect(p, "}")) return NULL;
        return e;
}

static cel_expr *parse_primary(parser *p) {
        uint32_t pos = p->t.start;
        char buf[64];
        switch (p->t.kind) {
        case TK_INT: {
                uint64_t m = p->t.v.u;
                if (m > (uint64_t)INT64_MAX) {
                        perr(p, pos, "invalid int literal");
                        return NULL;
                }
                next(p);
                return mk_const(p, cel_int((int64_t)m), pos);
        }
        case TK_UINT:
        case TK_DOUBLE:
        case TK_STRING:
        case TK_BYTES: {
                cel_value v = p->t.v;
                next(p);
                return mk_const(p, v, pos);
        }
        case TK_IDENT: return parse_ident(p, pos);
        case TK_PUNCT: {
                static const char *const opens[] = {".", "(", "[", "{"};
                size_t k = 0;
                while (k < ELEMENTSOF(opens) && !is_p(p, opens[k]))
                        k++;
                if (k == ELEMENTSOF(opens)) break;
                next(p);
                if (k == 0) return parse_root_ident(p, pos);
                if (k == 2) return parse_list_literal(p, pos);
                if (k == 3) return parse_map_literal(p, pos);
                cel_expr *e = parse_expr(p);
                if (!e || !expect(p, ")")) return NULL;
                return e;
        }
        default: break;
        }
        if (p->t.kind != TK_ERR)
                perr(p, pos, "Syntax error: mismatched input '%s' expecting an expression", tok_text(p, buf, sizeof buf));
        return NULL;
}

static cel_expr *parse_member(parser *p) {
        cel_expr *e = parse_primary(p);
        while (e) {
                uint32_t pos = p->t.start;
                char buf[64];
                if (is_p(p, ".")) {
                        next(p);
                        bool opt = take_optional(p);
                        if (p->t.kind != TK_IDENT && p->t.kind != TK_QIDENT) {
                                if (p->t.kind != TK_ERR)
                                        perr(p, p->t.start, "Syntax error: mismatched input '%s' expecting IDENTIFIER",
                                             tok_text(p, buf, sizeof buf));
                                e = NULL;
                                break;
                        }
                        bool quoted = p->t.kind == TK_QIDENT;
                        const char *f = intern(p, p->t.v.s.p, p->t.v.s.n);
                        uint32_t fpos = p->t.start;
                        next(p);
                        if (!opt && !quoted && is_p(p, "(")) {
                                next(p);
                                cel_expr **args = NULL;
                                size_t na = 0;
                                if (!parse_args(p, ")", &args, &na)) {
                                        e = NULL;
                                        break;
                                }
                                e = make_call(p, fpos, e, f, args, na);
                                continue;
                        }
                        cel_expr *s = node(p, CE_SELECT, pos);
                        if (!s) {
                                e = NULL;
                                break;
                        }
                        s->sel.operand = e;
                        s->sel.field = f;
                        s->sel.optional = opt;
                        e = s;
                } else if (is_p(p, "[")) {
                        next(p);
                        bool opt = take_optional(p);
                        cel_expr *idx = parse_expr(p);
                        if (!idx || !expect(p, "]")) {
                                e = NULL;
                                break;
                        }
                        e = mk_call(p, pos, NULL, opt ? "_[?_]" : "_[_]", 2, e, idx);
                } else if (is_p(p, "{") && (e->kind == CE_IDENT || e->kind == CE_SELECT)) {
                        e = parse_struct(p, e, pos);
                } else
                        break;
        }
        return e;
}

static cel_expr *parse_unary(parser *p) {
        uint32_t pos = p->t.start;
        cel_expr *e = NULL;
        if (is_p(p, "!")) {
                size_t n = 0;
                while (is_p(p, "!")) {
                        n++;
                        next(p);
                }
                e = parse_member(p);
                /* as cel-go: a pair of '!' cancels, at most one call remains */
                if (n % 2 && e) e = mk_call(p, pos, NULL, "!_", 1, e);
        } else if (is_p(p, "-")) {
                size_t n = 0;
                while (is_p(p, "-")) {
                        n++;
                        next(p);
                }
                /* a sign directly before a numeric literal belongs to the literal */
                if (p->t.kind == TK_INT || p->t.kind == TK_DOUBLE) {
                        uint32_t lpos = p->t.start;
                        cel_expr *lit;
                        if (p->t.kind == TK_INT) {
                                uint64_t m = p->t.v.u;
                                lit = mk_const(p, cel_int(m == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)m), lpos);
                        } else
                                lit = mk_const(p, cel_double(-p->t.v.d), lpos);
                        next(p);
                        n--;
                        /* the literal may still be followed by member operations */
                        e = lit;
                        while (e && (is_p(p, ".") || is_p(p, "["))) {
                                /* reuse member parsing on an already-parsed primary */
                                uint32_t mpos = p->t.start;
                                if (is_p(p, "[")) {
                                        next(p);
                                        cel_expr *idx = parse_expr(p);
                                        if (!idx || !expect(p, "]")) e = NULL;
                                        else e = mk_call(p, mpos, NULL, "_[_]", 2, e, idx);
                                } else {
                                        next(p);
                                        if (p->t.kind != TK_IDENT) {
                                                perr(p, p->t.start, "Syntax error: mismatched input expecting IDENTIFIER");
                                                e = NULL;
                                                break;
                                        }
                                        const char *f = intern(p, p->t.v.s.p, p->t.v.s.n);
                                        uint32_t fpos = p->t.start;
                                        next(p);
                                        if (is_p(p, "(")) {
                                                next(p);
                                                cel_expr **args = NULL;
                                                size_t na = 0;
                                                if (!parse_args(p, ")", &args, &na)) e = NULL;
                                                else e = make_call(p, fpos, e, f, args, na);
                                        } else {
                                                cel_expr *s = node(p, CE_SELECT, mpos);
                                                if (s) {
                                                        s->sel.operand = e;
                                                        s->sel.field = f;
                                                }
                                                e = s;
                                        }
                                }
                        }
                } else
                        e = parse_member(p);
                if (n % 2 && e) e = mk_call(p, pos, NULL, "-_", 1, e); /* pairs cancel, as for '!' */
        } else
                e = parse_member(p);
        return e;
}

typedef struct binop {
        const char *tok;
        const char *fn;
} binop;

static cel_expr *parse_mul(parser *p) {
        cel_expr *e = parse_unary(p);
        while (e && (is_p(p, "*") || is_p(p, "/") || is_p(p, "%"))) {
                uint32_t pos = p->t.start;
                const char *fn = is_p(p, "*") ? "_*_" : is_p(p, "/") ? "_/_" : "_%_";
                next(p);
                cel_expr *r = parse_unary(p);
                e = r ? mk_call(p, pos, NULL, fn, 2, e, r) : NULL;
        }
        return e;
}

static cel_expr *parse_add(parser *p) {
        cel_expr *e = parse_mul(p);
        while (e && (is_p(p, "+") || is_p(p, "-"))) {
                uint32_t pos = p->t.start;
                const char *fn = is_p(p, "+") ? "_+_" : "_-_";
                next(p);
                cel_expr *r = parse_mul(p);
                e = r ? mk_call(p, pos, NULL, fn, 2, e, r) : NULL;
        }
        return e;
}

static cel_expr *parse_rel(parser *p) {
        cel_expr *e = parse_add(p);
        static const binop ops[] = {{"<", "_<_"},   {"<=", "_<=_"}, {">", "_>_"},
                                    {">=", "_>=_"}, {"==", "_==_"}, {"!=", "_!=_"}};
        while (e) {
                const char *fn = NULL;
                for (size_t i = 0; i < ELEMENTSOF(ops); i++)
                        if (is_p(p, ops[i].tok)) fn = ops[i].fn;
                if (!fn && is_kw(p, "in")) fn = "@in";
                if (!fn) break;
                uint32_t pos = p->t.start;
                next(p);
                cel_expr *r = parse_add(p);
                e = r ? mk_call(p, pos, NULL, fn, 2, e, r) : NULL;
        }
        return e;
}

/* A chain of && or || becomes a balanced tree, as cel-go builds it: the
 * operators are associative and absorb errors commutatively, so the shape
 * changes neither the value nor the cost, and a chain of any length the
 * size limit admits nests log2(n) deep instead of n. Terms stay in source
 * order, so evaluation still runs left to right. */
typedef struct chain {
        cel_expr **terms;
        uint32_t *ops; /* ops[i]: position of the operator before terms[i + 1] */
        size_t n, cap;
} chain;

static bool chain_push(parser *p, chain *c, cel_expr *e, uint32_t op_pos) {
        if (c->n == c->cap) {
                size_t nc = c->cap ? c->cap * 2 : 8;
                cel_expr **nt = cel_alloc(&p->ast->arena, nc * sizeof(*nt));
                uint32_t *no = cel_alloc(&p->ast->arena, nc * sizeof(*no));
                if (!nt || !no) return false;
                if (c->n) {
                        memcpy(nt, c->terms, c->n * sizeof(*nt));
                        memcpy(no, c->ops, c->n * sizeof(*no));
                }
                c->terms = nt;
                c->ops = no;
                c->cap = nc;
        }
        if (c->n) c->ops[c->n - 1] = op_pos;
        c->terms[c->n++] = e;
        return true;
}

static cel_expr *balance(parser *p, const chain *c, const char *fn, size_t lo, size_t hi) {
        if (lo == hi) return c->terms[lo];
        size_t mid = (lo + hi + 1) / 2; /* first term of the right half */
        cel_expr *l = balance(p, c, fn, lo, mid - 1), *r = balance(p, c, fn, mid, hi);
        return l && r ? mk_call(p, c->ops[mid - 1], NULL, fn, 2, l, r) : NULL;
}

static cel_expr *parse_logic(parser *p, bool is_or) {
        const char *op = is_or ? "||" : "&&";
        cel_expr *e = is_or ? parse_logic(p, false) : parse_rel(p);
        if (!e || !is_p(p, op)) return e;
        chain c = {0};
        if (!chain_push(p, &c, e, 0)) return NULL;
        while (is_p(p, op)) {
                uint32_t pos = p->t.start;
                next(p);
                cel_expr *r = is_or ? parse_logic(p, false) : parse_rel(p);
                if (!r || !chain_push(p, &c, r, pos)) return NULL;
        }
        return balance(p, &c, is_or ? "_||_" : "_&&_", 0, c.n - 1);
}

static cel_expr *parse_or(parser *p) { return parse_logic(p, true); }

static cel_expr *parse_expr(parser *p) {
        if (!enter(p)) return NULL;
        cel_expr *e = parse_or(p);
        if (e && is_p(p, "?")) {
                uint32_t pos = p->t.start;
                next(p);
                cel_expr *a = parse_or(p);
                cel_expr *b = NULL;
                if (a && expect(p, ":")) b = parse_expr(p);
                e = a && b ? mk_call(p, pos, NULL, "_?_:_", 3, e, a, b) : NULL;
        }
        p->depth--;
        return e;
}

/* The tree's nesting, which bounds the recursion of everything after the
 * parser. Operator chains (1 + 1 + ...) and repeated unary operators nest
 * without parser recursion, so they are counted here. */
static unsigned umax(unsigned a, unsigned b) { return a > b ? a : b; }

static unsigned ast_depth(const cel_expr *e, unsigned d) {
        if (!e || d > DP_CEL_MAX_AST_DEPTH) return d;
        unsigned m = d;
        switch (e->kind) {
        case CE_SELECT: return ast_depth(e->sel.operand, d + 1);
        case CE_CALL:
                if (e->call.target) m = umax(m, ast_depth(e->call.target, d + 1));
                for (size_t i = 0; i < e->call.nargs && m <= DP_CEL_MAX_AST_DEPTH; i++)
                        m = umax(m, ast_depth(e->call.args[i], d + 1));
                return m;
        case CE_LIST:
                for (size_t i = 0; i < e->list.n && m <= DP_CEL_MAX_AST_DEPTH; i++)
                        m = umax(m, ast_depth(e->list.elems[i], d + 1));
                return m;
        case CE_MAP:
        case CE_STRUCT:
                for (size_t i = 0; i < e->map.n && m <= DP_CEL_MAX_AST_DEPTH; i++) {
                        m = umax(m, ast_depth(e->map.entries[i].key, d + 1));
                        m = umax(m, ast_depth(e->map.entries[i].value, d + 1));
                }
                return m;
        case CE_COMPREHENSION:
                m = umax(m, ast_depth(e->comp.range, d + 1));
                m = umax(m, ast_depth(e->comp.accu_init, d + 1));
                m = umax(m, ast_depth(e->comp.step, d + 1));
                m = umax(m, ast_depth(e->comp.cond, d + 1));
                return umax(m, ast_depth(e->comp.result, d + 1));
        default: return d;
        }
}

int cel_parse(const char *src, size_t len, bool macros, cel_ast *ast, dp_error *err) {
        memset(ast, 0, sizeof(*ast));
        parser p = {.src = src, .len = len, .ast = ast, .err = err, .macros = macros, .msgs = DP_STRBUF_INIT};
        ast->src = src;
        ast->src_len = len;
        next(&p);
        cel_expr *e = parse_expr(&p);
        if (e && p.t.kind != TK_EOF && !p.nerr) {
                char buf[64];
                perr(&p, p.t.start, "Syntax error: extraneous input '%s' expecting <EOF>", tok_text(&p, buf, sizeof buf));
        }
        if (ast->arena.failed || dp_strbuf_failed(&p.msgs)) {
                /* also when only the error text could not be built: an error
                 * without its text would read as a syntax error */
                dp_strbuf_done(&p.msgs);
                cel_ast_done(ast);
                return dp_error_set(err, -ENOMEM, "out of memory while parsing");
        }
        if (p.nerr || !e) {
                if (!p.nerr) perr(&p, p.t.start, "Syntax error: invalid expression");
                int r = p.too_deep ? -E2BIG : -EINVAL;
                dp_error_set(err, r, "%s", dp_strbuf_str(&p.msgs));
                dp_strbuf_done(&p.msgs);
                cel_ast_done(ast);
                return r;
        }
        dp_strbuf_done(&p.msgs);
        if (ast_depth(e, 0) > DP_CEL_MAX_AST_DEPTH) {
                cel_ast_done(ast);
                return dp_error_set(err, -E2BIG, "ERROR: <input>:1:1: expression nesting exceeds %d levels",
                                    DP_CEL_MAX_AST_DEPTH);
        }
        ast->root = e;
        return 0;
}

void cel_ast_done(cel_ast *ast) {
        for (size_t i = 0; i < ast->n_regexes; i++) cel_regex_free(ast->regexes[i]);
        free(ast->regexes);
        ast->regexes = NULL;
        ast->n_regexes = ast->cap_regexes = 0;
        cel_arena_done(&ast->arena);
        ast->root = NULL;
}
