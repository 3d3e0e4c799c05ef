/* SPDX-License-Identifier: Apache-2.0
 * cel-go's strings extension (version 2, as Kubernetes enables it): charAt,
 * indexOf, lastIndexOf, lowerAscii, upperAscii, replace, split, substring,
 * trim, join, format, strings.quote; plus `reverse` (version 3, only when
 * CEL_LIB_STRINGS_V3 is on). Indices count code points. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "cel/cel-internal.h"

#define A0 args[0]
#define A1 args[1]
#define A2 args[2]
#define FN(name) static cel_value name(cel_ctx *c, const cel_value *args, size_t n)

static cel_value mkstr(cel_ctx *c, const char *p, size_t n) {
        char *s = cel_strndup(c->arena, p, n);
        if (!s) return cel_oom(c);
        return cel_str(s, n);
}
static cel_value sb_value(cel_ctx *c, dp_strbuf *sb) {
        if (dp_strbuf_failed(sb)) {
                dp_strbuf_done(sb);
                return cel_oom(c);
        }
        cel_value v = mkstr(c, dp_strbuf_str(sb), sb->len);
        dp_strbuf_done(sb);
        return v;
}

FN(char_at) {
        (void)n;
        size_t len = cel_utf8_len(A0.s.p, A0.s.n);
        if (A1.i < 0 || (uint64_t)A1.i > len) return cel_error(c, "index out of range: %" PRId64, A1.i);
        if ((size_t)A1.i == len) return cel_str("", 0);
        size_t o = cel_utf8_offset(A0.s.p, A0.s.n, (size_t)A1.i), e = cel_utf8_offset(A0.s.p, A0.s.n, (size_t)A1.i + 1);
        return cel_str(A0.s.p + o, e - o);
}

static int64_t find_cp(const cel_value *args, int64_t start, bool last) {
        size_t len = cel_utf8_len(A0.s.p, A0.s.n), sub = cel_utf8_len(A1.s.p, A1.s.n);
        if (last) {
                for (int64_t i = DP_MIN(start, (int64_t)len - (int64_t)sub); i >= 0; i--) {
                        size_t o = cel_utf8_offset(A0.s.p, A0.s.n, (size_t)i);
                        if (A0.s.n - o >= A1.s.n && (!A1.s.n || !memcmp(A0.s.p + o, A1.s.p, A1.s.n))) return i;
                }
                return -1;
        }
        for (int64_t i = start; i + (int64_t)sub <= (int64_t)len; i++) {
                size_t o = cel_utf8_offset(A0.s.p, A0.s.n, (size_t)i);
                if (A0.s.n - o >= A1.s.n && (!A1.s.n || !memcmp(A0.s.p + o, A1.s.p, A1.s.n))) return i;
        }
        return -1;
}
/* cel-go's indexOfOffset/lastIndexOfOffset: an empty needle answers the
 * offset as given; a negative offset is an error; an offset at or past the
 * end answers -1. */
FN(index_of) {
        int64_t start = n > 2 ? A2.i : 0;
        size_t len = cel_utf8_len(A0.s.p, A0.s.n);
        if (A1.s.n == 0) return cel_int(start);
        if (start < 0) return cel_error(c, "index out of range: %" PRId64, start);
        if ((uint64_t)start >= len) return cel_int(-1);
        return cel_int(find_cp(args, start, false));
}
FN(last_index_of) {
        size_t len = cel_utf8_len(A0.s.p, A0.s.n);
        if (n <= 2) {
                if (A1.s.n == 0) return cel_int((int64_t)len);
                if (A0.s.n < A1.s.n || len == 0) return cel_int(-1);
                return cel_int(find_cp(args, (int64_t)len - 1, true));
        }
        int64_t start = A2.i;
        if (A1.s.n == 0) return cel_int(start);
        if (start < 0) return cel_error(c, "index out of range: %" PRId64, start);
        if ((uint64_t)start >= len) return cel_int(-1);
        return cel_int(find_cp(args, start, true));
}
static cel_value casing(cel_ctx *c, cel_value s, bool upper) {
        char *p = cel_strndup(c->arena, s.s.p, s.s.n);
        if (!p) return cel_oom(c);
        for (size_t i = 0; i < s.s.n; i++) {
                if (upper && p[i] >= 'a' && p[i] <= 'z') p[i] = (char)(p[i] - 32);
                if (!upper && p[i] >= 'A' && p[i] <= 'Z') p[i] = (char)(p[i] + 32);
        }
        return cel_str(p, s.s.n);
}
FN(lower_ascii) { (void)n; return casing(c, A0, false); }
FN(upper_ascii) { (void)n; return casing(c, A0, true); }
FN(replace) {
        int64_t limit = n > 3 ? args[3].i : -1;
        dp_strbuf sb = DP_STRBUF_INIT;
        size_t i = 0;
        int64_t done = 0;
        if (A1.s.n == 0) {
                /* Go strings.Replace with empty old: insert at each code point boundary */
                size_t cps = cel_utf8_len(A0.s.p, A0.s.n);
                for (size_t k = 0; k <= cps; k++) {
                        if (limit < 0 || done < limit) {
                                dp_strbuf_append(&sb, A2.s.p, A2.s.n);
                                done++;
                        }
                        if (k < cps) {
                                size_t o = cel_utf8_offset(A0.s.p, A0.s.n, k), e = cel_utf8_offset(A0.s.p, A0.s.n, k + 1);
                                dp_strbuf_append(&sb, A0.s.p + o, e - o);
                        }
                }
                return sb_value(c, &sb);
        }
        while (i < A0.s.n) {
                if ((limit < 0 || done < limit) && A0.s.n - i >= A1.s.n && !memcmp(A0.s.p + i, A1.s.p, A1.s.n)) {
                        dp_strbuf_append(&sb, A2.s.p, A2.s.n);
                        i += A1.s.n;
                        done++;
                } else
                        dp_strbuf_putc(&sb, A0.s.p[i++]);
        }
        return sb_value(c, &sb);
}
FN(split) {
        int64_t limit = n > 2 ? A2.i : -1;
        cel_list *l = cel_list_new(c, 0);
        if (!l) return cel_oom(c);
        if (limit == 0) return cel_list_value(l);
        if (A1.s.n == 0) {
                size_t cps = cel_utf8_len(A0.s.p, A0.s.n);
                for (size_t k = 0; k < cps; k++) {
                        size_t o = cel_utf8_offset(A0.s.p, A0.s.n, k);
                        size_t e = (limit > 0 && (int64_t)k == limit - 1) ? A0.s.n : cel_utf8_offset(A0.s.p, A0.s.n, k + 1);
                        if (cel_list_push(c, l, cel_str(A0.s.p + o, e - o)) < 0) return cel_oom(c);
                        if (e == A0.s.n) break;
                }
                return cel_list_value(l);
        }
        size_t start = 0, i = 0;
        while (i + A1.s.n <= A0.s.n) {
                if ((limit < 0 || (int64_t)l->n < limit - 1) && !memcmp(A0.s.p + i, A1.s.p, A1.s.n)) {
                        if (cel_list_push(c, l, cel_str(A0.s.p + start, i - start)) < 0) return cel_oom(c);
                        i += A1.s.n;
                        start = i;
                } else
                        i++;
        }
        if (cel_list_push(c, l, cel_str(A0.s.p + start, A0.s.n - start)) < 0) return cel_oom(c);
        return cel_list_value(l);
}
FN(substring) {
        size_t len = cel_utf8_len(A0.s.p, A0.s.n);
        int64_t b = A1.i, e = n > 2 ? A2.i : (int64_t)len;
        if (b < 0 || (uint64_t)b > len) return cel_error(c, "index out of range: %" PRId64, b);
        if (e < 0 || (uint64_t)e > len) return cel_error(c, "index out of range: %" PRId64, e);
        if (e < b) return cel_error(c, "invalid substring range. start: %" PRId64 ", end: %" PRId64, b, e);
        size_t o = cel_utf8_offset(A0.s.p, A0.s.n, (size_t)b), oe = cel_utf8_offset(A0.s.p, A0.s.n, (size_t)e);
        return cel_str(A0.s.p + o, oe - o);
}
static size_t ws_len(const char *p, size_t n, bool back) {
        /* Unicode White_Space code points (Go unicode.IsSpace) */
        static const uint32_t ws[] = {0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000, 0x2001, 0x2002,
                                      0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A, 0x2028, 0x2029,
                                      0x202F, 0x205F, 0x3000};
        size_t i = back ? n : 0;
        for (;;) {
                if ((back && i == 0) || (!back && i >= n)) return i;
                size_t s = i, e;
                if (back) {
                        s = i - 1;
                        while (s > 0 && ((unsigned char)p[s] & 0xC0) == 0x80) s--;
                        e = i;
                } else {
                        e = i + 1;
                        while (e < n && ((unsigned char)p[e] & 0xC0) == 0x80) e++;
                }
                const unsigned char *u = (const unsigned char *)p + s;
                uint32_t cp = u[0];
                size_t k = e - s;
                if (k == 2) cp = ((u[0] & 0x1Fu) << 6) | (u[1] & 0x3Fu);
                else if (k == 3) cp = ((u[0] & 0x0Fu) << 12) | ((u[1] & 0x3Fu) << 6) | (u[2] & 0x3Fu);
                else if (k == 4) cp = 0x110000;
                bool is_ws = false;
                for (size_t j = 0; j < ELEMENTSOF(ws); j++)
                        if (ws[j] == cp) is_ws = true;
                if (!is_ws) return i;
                i = back ? s : e;
        }
}
FN(trim) {
        (void)n;
        (void)c;
        size_t b = ws_len(A0.s.p, A0.s.n, false);
        if (b == A0.s.n) return cel_str("", 0);
        size_t e = ws_len(A0.s.p, A0.s.n, true);
        return cel_str(A0.s.p + b, e - b);
}
FN(join) {
        dp_strbuf sb = DP_STRBUF_INIT;
        for (size_t i = 0; i < A0.l->n; i++) {
                cel_value v = cel_list_at(A0.l, i);
                if (v.kind != CV_STRING) {
                        dp_strbuf_done(&sb);
                        return cel_no_overload(c, "join");
                }
                if (i && n > 1) dp_strbuf_append(&sb, A1.s.p, A1.s.n);
                dp_strbuf_append(&sb, v.s.p, v.s.n);
        }
        return sb_value(c, &sb);
}
FN(reverse) {
        (void)n;
        size_t cps = cel_utf8_len(A0.s.p, A0.s.n);
        dp_strbuf sb = DP_STRBUF_INIT;
        for (size_t k = cps; k > 0; k--) {
                size_t o = cel_utf8_offset(A0.s.p, A0.s.n, k - 1), e = cel_utf8_offset(A0.s.p, A0.s.n, k);
                dp_strbuf_append(&sb, A0.s.p + o, e - o);
        }
        return sb_value(c, &sb);
}
FN(quote) {
        (void)n;
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_strbuf_putc(&sb, '"');
        const unsigned char *p = (const unsigned char *)A0.s.p;
        for (size_t i = 0; i < A0.s.n; i++) {
                unsigned char ch = p[i];
                switch (ch) {
                case '\a': dp_strbuf_puts(&sb, "\\a"); break;
                case '\b': dp_strbuf_puts(&sb, "\\b"); break;
                case '\f': dp_strbuf_puts(&sb, "\\f"); break;
                case '\n': dp_strbuf_puts(&sb, "\\n"); break;
                case '\r': dp_strbuf_puts(&sb, "\\r"); break;
                case '\t': dp_strbuf_puts(&sb, "\\t"); break;
                case '\v': dp_strbuf_puts(&sb, "\\v"); break;
                case '\\': dp_strbuf_puts(&sb, "\\\\"); break;
                case '"': dp_strbuf_puts(&sb, "\\\""); break;
                default: dp_strbuf_putc(&sb, (char)ch);
                }
        }
        dp_strbuf_putc(&sb, '"');
        return sb_value(c, &sb);
}

/* ---- format ---- */
static void fmt_double_plain(dp_strbuf *sb, double d) {
        if (isnan(d)) dp_strbuf_puts(sb, "NaN");
        else if (isinf(d)) dp_strbuf_puts(sb, d > 0 ? "Infinity" : "-Infinity");
        else {
                cel_ctx tmp = {0};
                cel_arena a = {0};
                tmp.arena = &a;
                cel_value s = cel_value_to_string(&tmp, cel_double(d));
                if (s.kind == CV_STRING) dp_strbuf_append(sb, s.s.p, s.s.n);
                cel_arena_done(&a);
        }
}

static int key_cmp(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* %s rendering: strings bare, lists and maps recursively, map keys sorted */
static int fmt_s(cel_ctx *c, dp_strbuf *sb, cel_value v) {
        switch (v.kind) {
        case CV_STRING:
        case CV_BYTES: dp_strbuf_append(sb, v.s.p, v.s.n); return 0;
        case CV_DOUBLE: fmt_double_plain(sb, v.d); return 0;
        case CV_LIST:
                dp_strbuf_putc(sb, '[');
                for (size_t i = 0; i < v.l->n; i++) {
                        if (i) dp_strbuf_puts(sb, ", ");
                        if (fmt_s(c, sb, cel_list_at(v.l, i)) < 0) return -1;
                }
                dp_strbuf_putc(sb, ']');
                return 0;
        case CV_MAP: {
                size_t m = v.m->n;
                char **ents = calloc(m ? m : 1, sizeof(char *));
                if (!ents) {
                        cel_oom(c); /* -1 with c->fatal set: out of memory, not a bad clause */
                        return -1;
                }
                int r = 0;
                for (size_t i = 0; i < m && r == 0; i++) {
                        dp_strbuf e = DP_STRBUF_INIT;
                        if (fmt_s(c, &e, v.m->store->keys[i]) < 0) r = -1;
                        dp_strbuf_puts(&e, ": ");
                        if (fmt_s(c, &e, v.m->store->vals[i]) < 0) r = -1;
                        ents[i] = dp_strbuf_steal(&e);
                        if (!ents[i]) {
                                cel_oom(c);
                                r = -1;
                        }
                        dp_strbuf_done(&e);
                }
                if (r == 0) {
                        qsort(ents, m, sizeof(char *), key_cmp);
                        dp_strbuf_putc(sb, '{');
                        for (size_t i = 0; i < m; i++) {
                                if (i) dp_strbuf_puts(sb, ", ");
                                dp_strbuf_puts(sb, ents[i]);
                        }
                        dp_strbuf_putc(sb, '}');
                }
                for (size_t i = 0; i < m; i++) free(ents[i]);
                free(ents);
                return r;
        }
        case CV_INT:
        case CV_UINT:
        case CV_BOOL:
        case CV_NULL:
        case CV_TYPE: {
                cel_value s = cel_value_to_string(c, v);
                if (s.kind != CV_STRING) return -1;
                dp_strbuf_append(sb, s.s.p, s.s.n);
                return 0;
        }
        default: return -1;
        }
}

static cel_value fmt_err(cel_ctx *c, const char *what, cel_value v) {
        return cel_error(c, "error during formatting: %s clause can only be used on %s, was given %s", what,
                         streq(what, "fixed-point") || streq(what, "scientific") ? "integers, floats" : "integers",
                         cel_kind_name(v.kind));
}

FN(format) {
        (void)n;
        dp_strbuf sb = DP_STRBUF_INIT;
        const char *p = A0.s.p, *end = A0.s.p + A0.s.n;
        size_t ai = 0;
        cel_value err = {.kind = CV_NULL};
        while (p < end) {
                if (*p != '%') {
                        dp_strbuf_putc(&sb, *p++);
                        continue;
                }
                p++;
                if (p < end && *p == '%') {
                        dp_strbuf_putc(&sb, '%');
                        p++;
                        continue;
                }
                int prec = -1;
                if (p < end && *p == '.') {
                        p++;
                        prec = 0;
                        while (p < end && *p >= '0' && *p <= '9') prec = prec * 10 + (*p++ - '0');
                }
                if (p >= end) {
                        err = cel_error(c, "error during formatting: unexpected end of format string");
                        break;
                }
                char verb = *p++;
                if (ai >= A1.l->n) {
                        err = cel_error(c, "error during formatting: index %zu out of range", ai);
                        break;
                }
                cel_value v = cel_list_at(A1.l, ai++);
                switch (verb) {
                case 's':
                        if (fmt_s(c, &sb, v) < 0)
                                err = c->fatal ? cel_oom(c) : cel_error(c, "error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given %s", cel_kind_name(v.kind));
                        break;
                case 'd':
                        if (v.kind == CV_INT) dp_strbuf_printf(&sb, "%" PRId64, v.i);
                        else if (v.kind == CV_UINT) dp_strbuf_printf(&sb, "%" PRIu64, v.u);
                        else if (v.kind == CV_DOUBLE && (isnan(v.d) || isinf(v.d))) fmt_double_plain(&sb, v.d);
                        else err = fmt_err(c, "decimal", v);
                        break;
                case 'f':
                case 'e':
                        if (v.kind == CV_DOUBLE || v.kind == CV_INT || v.kind == CV_UINT) {
                                double d = v.kind == CV_DOUBLE ? v.d : v.kind == CV_INT ? (double)v.i : (double)v.u;
                                if (isnan(d) || isinf(d)) fmt_double_plain(&sb, d);
                                else dp_strbuf_printf(&sb, verb == 'f' ? "%.*f" : "%.*e", prec < 0 ? 6 : prec, d);
                        } else
                                err = fmt_err(c, verb == 'f' ? "fixed-point" : "scientific", v);
                        break;
                case 'b':
                        if (v.kind == CV_INT || v.kind == CV_UINT || v.kind == CV_BOOL) {
                                uint64_t u = v.kind == CV_INT ? (uint64_t)(v.i < 0 ? -(uint64_t)v.i : (uint64_t)v.i)
                                             : v.kind == CV_UINT ? v.u : (uint64_t)v.b;
                                if (v.kind == CV_INT && v.i < 0) dp_strbuf_putc(&sb, '-');
                                char bits[65];
                                int k = 64;
                                bits[k] = 0;
                                do {
                                        bits[--k] = (char)('0' + (u & 1));
                                        u >>= 1;
                                } while (u);
                                dp_strbuf_puts(&sb, bits + k);
                        } else
                                err = fmt_err(c, "binary", v);
                        break;
                case 'o':
                        if (v.kind == CV_INT) dp_strbuf_printf(&sb, v.i < 0 ? "-%" PRIo64 : "%" PRIo64, v.i < 0 ? -(uint64_t)v.i : (uint64_t)v.i);
                        else if (v.kind == CV_UINT) dp_strbuf_printf(&sb, "%" PRIo64, v.u);
                        else err = fmt_err(c, "octal", v);
                        break;
                case 'x':
                case 'X':
                        if (v.kind == CV_INT) {
                                uint64_t u = v.i < 0 ? -(uint64_t)v.i : (uint64_t)v.i;
                                dp_strbuf_printf(&sb, verb == 'x' ? "%s%" PRIx64 : "%s%" PRIX64, v.i < 0 ? "-" : "", u);
                        } else if (v.kind == CV_UINT)
                                dp_strbuf_printf(&sb, verb == 'x' ? "%" PRIx64 : "%" PRIX64, v.u);
                        else if (v.kind == CV_STRING || v.kind == CV_BYTES) {
                                for (size_t i = 0; i < v.s.n; i++)
                                        dp_strbuf_printf(&sb, verb == 'x' ? "%02x" : "%02X", (unsigned char)v.s.p[i]);
                        } else
                                err = cel_error(c, "error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given %s", cel_kind_name(v.kind));
                        break;
                default:
                        err = cel_error(c, "error during formatting: could not parse formatting clause: unrecognized formatting clause \"%c\"", verb);
                }
                if (err.kind == CV_ERROR) break;
        }
        if (err.kind == CV_ERROR) {
                dp_strbuf_done(&sb);
                return err;
        }
        return sb_value(c, &sb);
}

#define S(fn, id, member, sig, impl) {fn, id, member, 0, sig, impl, COST_STR0, CEL_LIB_STRINGS}
const cel_overload cel_strings_overloads[] = {
        S("charAt", "string_char_at_int", true, "string,int->string", char_at),
        S("indexOf", "string_index_of_string", true, "string,string->int", index_of),
        S("indexOf", "string_index_of_string_int", true, "string,string,int->int", index_of),
        S("lastIndexOf", "string_last_index_of_string", true, "string,string->int", last_index_of),
        S("lastIndexOf", "string_last_index_of_string_int", true, "string,string,int->int", last_index_of),
        S("lowerAscii", "string_lower_ascii", true, "string->string", lower_ascii),
        S("upperAscii", "string_upper_ascii", true, "string->string", upper_ascii),
        S("replace", "string_replace_string_string", true, "string,string,string->string", replace),
        S("replace", "string_replace_string_string_int", true, "string,string,string,int->string", replace),
        {"split", "string_split_string", true, 0, "string,string->list(string)", split, COST_STR0X2, CEL_LIB_STRINGS},
        {"split", "string_split_string_int", true, 0, "string,string,int->list(string)", split, COST_STR0X2,
         CEL_LIB_STRINGS},
        S("substring", "string_substring_int", true, "string,int->string", substring),
        S("substring", "string_substring_int_int", true, "string,int,int->string", substring),
        S("trim", "string_trim", true, "string->string", trim),
        S("join", "list_join", true, "list(string)->string", join),
        S("join", "list_join_string", true, "list(string),string->string", join),
        S("format", "string_format", true, "string,list(dyn)->string", format),
        S("strings.quote", "strings_quote", false, "string->string", quote),
        {"reverse", "string_reverse", true, 0, "string->string", reverse, COST_STR0, CEL_LIB_STRINGS_V3},
        {NULL, NULL, false, 0, NULL, NULL, COST_ONE, 0},
};
