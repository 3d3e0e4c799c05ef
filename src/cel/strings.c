/* SPDX-License-Identifier: Apache-2.0
 * cel-go's strings extension (version 2, as Kubernetes enables it): charAt,
 * indexOf, lastIndexOf, lowerAscii, upperAscii, replace, split, substring,
 * trim, join, format, strings.quote; plus `reverse` (version 3, only when
 * CEL_LIB_STRINGS_V3 is on). Indices count code points. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
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
static const char escape_letters[] = "abfnrtv", escape_bytes[] = "\a\b\f\n\r\t\v";

char cel_escape_byte(char letter) {
        const char *l = letter ? strchr(escape_letters, letter) : NULL;
        return l ? escape_bytes[l - escape_letters] : 0;
}

char cel_escape_letter(char byte) {
        const char *b = byte ? strchr(escape_bytes, byte) : NULL;
        return b ? escape_letters[b - escape_bytes] : 0;
}

FN(quote) {
        (void)n;
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_strbuf_putc(&sb, '"');
        for (size_t i = 0; i < A0.s.n; i++) {
                char ch = A0.s.p[i];
                char esc = ch == '\\' || ch == '"' ? ch : cel_escape_letter(ch);
                if (esc) dp_strbuf_putc(&sb, '\\');
                dp_strbuf_putc(&sb, esc ? esc : ch);
        }
        dp_strbuf_putc(&sb, '"');
        return sb_value(c, &sb);
}

/* ---- format ----
 * Exactly what the vendored cel-go (v0.26, strings v2: ext/formatting.go with
 * the en_US locale) prints, quirks included: %f groups thousands with ','
 * and prints infinities as ∞; %e takes its precision as a width and prints
 * 1.500000×10⁰⁰; %s of a double is Go's shortest form, but a double inside a
 * list or map is %.6f; strings inside lists and maps are Go-quoted, map
 * entries sorted by their quoted key. The compile-time half of the checks
 * (cel_format_validate) follows upstream's validator. */

#define FMT_ERR(...) (*err = cel_error(c, __VA_ARGS__), -1)

/* Go's strconv.Quote, for strings inside lists and maps */
static void go_quote(dp_strbuf *sb, const char *p, size_t n, bool bytes) {
        if (bytes) dp_strbuf_putc(sb, 'b');
        dp_strbuf_putc(sb, '"');
        for (size_t i = 0; i < n;) {
                unsigned char ch = (unsigned char)p[i];
                if (ch < 0x80) {
                        static const char esc[] = "\a\b\f\n\r\t\v", name[] = "abfnrtv";
                        const char *e = ch ? strchr(esc, ch) : NULL;
                        if (ch == '"' || ch == '\\') dp_strbuf_printf(sb, "\\%c", ch);
                        else if (e) dp_strbuf_printf(sb, "\\%c", name[e - esc]);
                        else if (ch < 0x20 || ch == 0x7f) dp_strbuf_printf(sb, "\\x%02x", ch);
                        else dp_strbuf_putc(sb, (char)ch);
                        i++;
                        continue;
                }
                size_t len = (ch >> 5) == 6 ? 2 : (ch >> 4) == 14 ? 3 : (ch >> 3) == 30 ? 4 : 0;
                if (!len || i + len > n || !dp_utf8_valid(p + i, len)) {
                        dp_strbuf_printf(sb, "\\x%02x", ch);
                        i++;
                        continue;
                }
                /* C1 controls are not printable in Go */
                if (len == 2 && ch == 0xc2 && (unsigned char)p[i + 1] < 0xa0)
                        dp_strbuf_printf(sb, "\\u%04x", (unsigned)((unsigned char)p[i + 1]));
                else
                        dp_strbuf_append(sb, p + i, len);
                i += len;
        }
        dp_strbuf_putc(sb, '"');
}

static int fmt_value(cel_ctx *c, dp_strbuf *sb, cel_value v, bool nested, cel_value *err);

/* v as a string in *ret; -1 when it has none (*err says why) or on a fatal error */
static int to_string(cel_ctx *c, cel_value v, cel_value *ret, cel_value *err) {
        *ret = cel_value_to_string(c, v);
        if (c->fatal) return -1;
        if (ret->kind != CV_STRING)
                return FMT_ERR("error during formatting: could not convert argument \"%s\" to string",
                               ret->kind == CV_ERROR ? ret->err : "");
        return 0;
}

/* FormatString: what %s prints for a value at the top level */
static int fmt_string(cel_ctx *c, dp_strbuf *sb, cel_value v, cel_value *err) {
        switch (v.kind) {
        case CV_LIST:
        case CV_MAP: return fmt_value(c, sb, v, false, err);
        case CV_INT:
        case CV_UINT:
        case CV_DOUBLE:
        case CV_BOOL:
        case CV_STRING:
        case CV_BYTES:
        case CV_TYPE:
        case CV_NULL: {
                cel_value s;
                if (to_string(c, v, &s, err) < 0) return -1;
                dp_strbuf_append(sb, s.s.p, s.s.n);
                return 0;
        }
        default:
                return FMT_ERR("error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given %s",
                               cel_kind_name(v.kind));
        }
}

typedef struct fmt_entry {
        char *key, *val;
} fmt_entry;

static int entry_cmp(const void *a, const void *b) {
        return strcmp(((const fmt_entry *)a)->key, ((const fmt_entry *)b)->key);
}

/* A list element, map key or map value (clauseForType + quoteForCEL), or
 * with nested=false a whole list or map. */
static int fmt_value(cel_ctx *c, dp_strbuf *sb, cel_value v, bool nested, cel_value *err) {
        switch (v.kind) {
        case CV_INT: dp_strbuf_printf(sb, "%" PRId64, v.i); return 0;
        case CV_UINT: dp_strbuf_printf(sb, "%" PRIu64, v.u); return 0;
        case CV_DOUBLE:
                if (isnan(v.d)) dp_strbuf_puts(sb, "\"NaN\"");
                else if (isinf(v.d)) dp_strbuf_puts(sb, v.d > 0 ? "\"+Inf\"" : "\"-Inf\"");
                else dp_strbuf_printf(sb, "%.6f", v.d);
                return 0;
        case CV_STRING:
        case CV_BYTES: {
                cel_value s;
                if (to_string(c, v, &s, err) < 0) return -1;
                go_quote(sb, s.s.p, s.s.n, v.kind == CV_BYTES);
                return 0;
        }
        case CV_BOOL:
        case CV_NULL:
        case CV_TYPE: return fmt_string(c, sb, v, err);
        case CV_LIST:
                dp_strbuf_putc(sb, '[');
                for (size_t i = 0; i < v.l->n; i++) {
                        if (i) dp_strbuf_puts(sb, ", ");
                        if (fmt_value(c, sb, cel_list_at(v.l, i), true, err) < 0) return -1;
                }
                dp_strbuf_putc(sb, ']');
                return 0;
        case CV_MAP: {
                size_t m = v.m->n;
                fmt_entry *ents = calloc(m ? m : 1, sizeof(*ents));
                if (!ents) {
                        cel_oom(c);
                        return -1;
                }
                int r = 0;
                for (size_t i = 0; i < m && r == 0; i++) {
                        cel_value k = v.m->store->keys[i];
                        dp_strbuf kb = DP_STRBUF_INIT, vb = DP_STRBUF_INIT;
                        if (k.kind != CV_STRING && k.kind != CV_BOOL && k.kind != CV_INT && k.kind != CV_UINT)
                                r = FMT_ERR("error during formatting: no formatting function for map key of type %s",
                                            cel_kind_name(k.kind));
                        if (r == 0) r = fmt_value(c, &kb, k, true, err);
                        if (r == 0) r = fmt_value(c, &vb, v.m->store->vals[i], true, err);
                        ents[i].key = dp_strbuf_steal(&kb);
                        ents[i].val = dp_strbuf_steal(&vb);
                        dp_strbuf_done(&kb);
                        dp_strbuf_done(&vb);
                        if (r == 0 && (!ents[i].key || !ents[i].val)) {
                                cel_oom(c);
                                r = -1;
                        }
                }
                if (r == 0) {
                        /* sort.SliceStable on the quoted keys */
                        for (size_t i = 1; i < m; i++)
                                for (size_t j = i; j > 0 && entry_cmp(&ents[j - 1], &ents[j]) > 0; j--) {
                                        fmt_entry t = ents[j];
                                        ents[j] = ents[j - 1];
                                        ents[j - 1] = t;
                                }
                        dp_strbuf_putc(sb, '{');
                        for (size_t i = 0; i < m; i++)
                                dp_strbuf_printf(sb, "%s%s:%s", i ? ", " : "", ents[i].key, ents[i].val);
                        dp_strbuf_putc(sb, '}');
                }
                for (size_t i = 0; i < m; i++) {
                        free(ents[i].key);
                        free(ents[i].val);
                }
                free(ents);
                return r;
        }
        default:
                (void)nested;
                return FMT_ERR("error during formatting: no formatting function for %s", cel_kind_name(v.kind));
        }
}

/* golang.org/x/text's en_US rendering of %.Nf: thousands grouped */
static void fmt_fixed(dp_strbuf *sb, double d, int prec) {
        if (cel_put_nonfinite(sb, d, "∞", "-∞")) return;
        int len = snprintf(NULL, 0, "%.*f", prec, d);
        char *buf = len > 0 ? malloc((size_t)len + 1) : NULL;
        if (!buf) {
                sb->oom = true;
                return;
        }
        snprintf(buf, (size_t)len + 1, "%.*f", prec, d);
        const char *p = buf;
        if (*p == '-') dp_strbuf_putc(sb, *p++);
        size_t int_digits = strspn(p, "0123456789");
        for (size_t i = 0; i < int_digits; i++) {
                if (i && (int_digits - i) % 3 == 0) dp_strbuf_putc(sb, ',');
                dp_strbuf_putc(sb, p[i]);
        }
        dp_strbuf_puts(sb, p + int_digits);
        free(buf);
}

/* x/text's %We (W: the clause's precision, 6 by default): a 6-digit
 * mantissa, ×10 and a superscript exponent; short forms padded to W runes */
static void fmt_sci(dp_strbuf *sb, double d, int width) {
        static const char *const sup[] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
        if (isnan(d) || isinf(d)) {
                const char *t = isnan(d) ? "NaN" : d > 0 ? "∞" : "-∞";
                int runes = isnan(d) ? 3 : d > 0 ? 1 : 2;
                for (int i = runes; i < width; i++) dp_strbuf_putc(sb, ' ');
                dp_strbuf_puts(sb, t);
                return;
        }
        char buf[64];
        snprintf(buf, sizeof buf, "%.6e", d);
        char *e = strchr(buf, 'e');
        if (!e) return;
        *e = 0;
        dp_strbuf_puts(sb, buf);
        dp_strbuf_puts(sb, "×10");
        if (e[1] == '-') dp_strbuf_puts(sb, "⁻");
        for (const char *q = e + 2; *q; q++) dp_strbuf_puts(sb, sup[*q - '0']);
}

static void fmt_radix(dp_strbuf *sb, bool neg, uint64_t u, unsigned radix, bool upper) {
        char digits[65];
        int k = 64;
        digits[k] = 0;
        do {
                unsigned d = (unsigned)(u % radix);
                digits[--k] = (char)(d < 10 ? '0' + d : (upper ? 'A' : 'a') + d - 10);
                u /= radix;
        } while (u);
        if (neg) dp_strbuf_putc(sb, '-');
        dp_strbuf_puts(sb, digits + k);
}

/* One clause on its argument (the stringFormatter's clause functions). */
static int fmt_clause(cel_ctx *c, dp_strbuf *sb, char verb, int prec, cel_value v, cel_value *err) {
        switch (verb) {
        case 's': return fmt_string(c, sb, v, err);
        case 'd':
                if (v.kind == CV_INT) dp_strbuf_printf(sb, "%" PRId64, v.i);
                else if (v.kind == CV_UINT) dp_strbuf_printf(sb, "%" PRIu64, v.u);
                else return FMT_ERR("error during formatting: decimal clause can only be used on integers, was given %s", cel_kind_name(v.kind));
                return 0;
        case 'f':
        case 'e': {
                double d;
                if (v.kind == CV_DOUBLE) d = v.d;
                else if (v.kind == CV_STRING && v.s.n == 3 && !memcmp(v.s.p, "NaN", 3)) d = NAN;
                else if (v.kind == CV_STRING && v.s.n == 8 && !memcmp(v.s.p, "Infinity", 8)) d = INFINITY;
                else if (v.kind == CV_STRING && v.s.n == 9 && !memcmp(v.s.p, "-Infinity", 9)) d = -INFINITY;
                else
                        return FMT_ERR("error during formatting: %s clause can only be used on doubles, was given %s",
                                       verb == 'f' ? "fixed-point" : "scientific", cel_kind_name(v.kind));
                /* Go's fmt refuses a precision or width over 10^6 (BADPREC); so do we,
                 * as an error, rather than build a string that long */
                if (prec > 1000000) return FMT_ERR("error during formatting: precision %d too large", prec);
                if (verb == 'f') fmt_fixed(sb, d, prec < 0 ? 6 : prec);
                else fmt_sci(sb, d, prec < 0 ? 6 : prec);
                return 0;
        }
        case 'b':
                if (v.kind == CV_INT) fmt_radix(sb, v.i < 0, v.i < 0 ? 0 - (uint64_t)v.i : (uint64_t)v.i, 2, false);
                else if (v.kind == CV_UINT) fmt_radix(sb, false, v.u, 2, false);
                else if (v.kind == CV_BOOL) dp_strbuf_putc(sb, v.b ? '1' : '0');
                else return FMT_ERR("error during formatting: only integers and bools can be formatted as binary, was given %s", cel_kind_name(v.kind));
                return 0;
        case 'o':
                if (v.kind == CV_INT) fmt_radix(sb, v.i < 0, v.i < 0 ? 0 - (uint64_t)v.i : (uint64_t)v.i, 8, false);
                else if (v.kind == CV_UINT) fmt_radix(sb, false, v.u, 8, false);
                else return FMT_ERR("error during formatting: octal clause can only be used on integers, was given %s", cel_kind_name(v.kind));
                return 0;
        case 'x':
        case 'X':
                if (v.kind == CV_INT) fmt_radix(sb, v.i < 0, v.i < 0 ? 0 - (uint64_t)v.i : (uint64_t)v.i, 16, verb == 'X');
                else if (v.kind == CV_UINT) fmt_radix(sb, false, v.u, 16, verb == 'X');
                else if (v.kind == CV_STRING || v.kind == CV_BYTES)
                        for (size_t i = 0; i < v.s.n; i++) dp_strbuf_printf(sb, verb == 'x' ? "%02x" : "%02X", (unsigned char)v.s.p[i]);
                else return FMT_ERR("error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given %s", cel_kind_name(v.kind));
                return 0;
        default: return 0;
        }
}

/* The clause at p[0] == '%' (not "%%"): its precision (-1: none) and verb.
 * 0, or -1 with ret->msg (upstream's parse errors). */
int cel_format_clause(const char *p, const char *end, cel_clause *ret) {
        const char *q = p + 1;
        int prec = -1;
        if (q < end && *q == '.') {
                q++;
                const char *d = q;
                while (q < end && *q >= '0' && *q <= '9') q++;
                if (q >= end) {
                        ret->msg = "could not parse formatting clause: error while parsing precision: could not find "
                                   "end of precision specifier";
                        return -1;
                }
                if (q == d) {
                        ret->msg = "could not parse formatting clause: error while parsing precision: error while "
                                   "converting precision to integer: strconv.Atoi: parsing \"\": invalid syntax";
                        return -1;
                }
                if (q - d > 9) {
                        ret->msg = "could not parse formatting clause: error while parsing precision: error while "
                                   "converting precision to integer: value out of range";
                        return -1;
                }
                prec = 0;
                for (; d < q; d++) prec = prec * 10 + (*d - '0');
        }
        if (!strchr("sdfebxXo", *q) || !*q) {
                ret->msg = "could not parse formatting clause: unrecognized formatting clause";
                return -1;
        }
        ret->prec = prec;
        ret->verb = *q;
        ret->len = (size_t)(q + 1 - p);
        return 0;
}

FN(format) {
        (void)n;
        dp_strbuf sb = DP_STRBUF_INIT;
        const char *p = A0.s.p, *end = A0.s.p + A0.s.n;
        size_t ai = 0;
        cel_value err = {.kind = CV_NULL};
        int r = 0;
        while (p < end && r == 0) {
                if (*p != '%') {
                        dp_strbuf_putc(&sb, *p++);
                        continue;
                }
                if (p + 1 < end && p[1] == '%') {
                        dp_strbuf_putc(&sb, '%');
                        p += 2;
                        continue;
                }
                /* upstream's order: the argument, then the end of the string */
                if (ai >= A1.l->n) {
                        err = cel_error(c, "index %zu out of range", ai);
                        r = -1;
                        break;
                }
                if (p + 1 >= end) {
                        err = cel_error(c, "unexpected end of string");
                        r = -1;
                        break;
                }
                cel_clause cl;
                if (cel_format_clause(p, end, &cl) < 0) {
                        err = cel_error(c, "%s", cl.msg);
                        r = -1;
                        break;
                }
                r = fmt_clause(c, &sb, cl.verb, cl.prec, cel_list_at(A1.l, ai++), &err);
                p += cl.len;
        }
        if (r < 0) {
                dp_strbuf_done(&sb);
                return c->fatal ? cel_oom(c) : err;
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
