/* SPDX-License-Identifier: Apache-2.0
 * Regular expressions for `matches`, `find` and `findAll`: RE2 syntax is
 * enforced before PCRE2 sees the pattern (no backreferences, lookaround,
 * atomic groups, possessive quantifiers, recursion, conditionals, callouts;
 * repeat counts at most 1000, as RE2), and PCRE2's match and depth limits
 * bound the run time of every search. Go's semantics: `$` matches only at
 * the end of the text, \d \w \s \b are ASCII. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "cel/cel-internal.h"

#define CEL_REGEX_MATCH_LIMIT 1000000u
#define CEL_REGEX_DEPTH_LIMIT 10000u
#define CEL_REGEX_MAX_REPEAT 1000

struct cel_regex {
        pcre2_code *code;
        pcre2_match_context *mctx;
};

/* The decimal count at p[*j] (*j moved past it, the value capped once past
 * 100000), or -1 where no digit stands. */
static long repeat_count(const char *p, size_t n, size_t *j) {
        if (*j >= n || p[*j] < '0' || p[*j] > '9') return -1;
        long v = 0;
        for (; *j < n && p[*j] >= '0' && p[*j] <= '9'; (*j)++)
                if (v <= 100000) v = v * 10 + (p[*j] - '0');
        return v;
}

/* Returns NULL when the pattern uses only RE2 syntax, else the reason. */
static const char *re2_check(const char *p, size_t n) {
        bool in_class = false;
        for (size_t i = 0; i < n; i++) {
                char c = p[i];
                if (c == '\\') {
                        if (i + 1 >= n) return "trailing backslash at end of expression";
                        char e = p[++i];
                        if (e >= '1' && e <= '9') return "backreferences are not supported (RE2 syntax)";
                        if (strchr("gkKGZRXNhHo", e)) return "invalid escape sequence (RE2 syntax)";
                        if (e == 'c') return "invalid escape sequence (RE2 syntax)";
                        if (e == 'Q') {
                                /* literal text up to \E */
                                size_t j = i + 1;
                                while (j + 1 < n && !(p[j] == '\\' && p[j + 1] == 'E')) j++;
                                i = j + 1 < n ? j + 1 : n;
                                continue;
                        }
                        if (e == 'p' || e == 'P') {
                                if (i + 1 < n && p[i + 1] == '{') {
                                        while (i < n && p[i] != '}') i++;
                                } else
                                        i++;
                        }
                        if (e == 'x' && i + 1 < n && p[i + 1] == '{') {
                                while (i < n && p[i] != '}') i++;
                        }
                        continue;
                }
                if (in_class) {
                        if (c == ']') in_class = false;
                        continue;
                }
                if (c == '[') {
                        in_class = true;
                        if (i + 1 < n && p[i + 1] == '^') i++;
                        if (i + 1 < n && p[i + 1] == ']') i++;
                        /* POSIX classes [:alpha:] are fine in RE2 */
                        continue;
                }
                if (c == '(' && i + 1 < n && p[i + 1] == '?') {
                        char d = i + 2 < n ? p[i + 2] : 0;
                        if (d == '=' || d == '!') return "lookahead is not supported (RE2 syntax)";
                        if (d == '<' && i + 3 < n && (p[i + 3] == '=' || p[i + 3] == '!'))
                                return "lookbehind is not supported (RE2 syntax)";
                        if (d == '>') return "atomic groups are not supported (RE2 syntax)";
                        if (d == '(') return "conditionals are not supported (RE2 syntax)";
                        if (d == 'R' || d == '&' || (d >= '0' && d <= '9') || d == '+' ||
                            (d == '-' && i + 3 < n && p[i + 3] >= '0' && p[i + 3] <= '9'))
                                return "recursion is not supported (RE2 syntax)";
                        if (d == 'C') return "callouts are not supported (RE2 syntax)";
                        if (d == '|') return "branch reset is not supported (RE2 syntax)";
                        if (d == '#') return "comments are not supported (RE2 syntax)";
                        if (d == 'P' && i + 3 < n && (p[i + 3] == '>' || p[i + 3] == '='))
                                return "named backreferences are not supported (RE2 syntax)";
                        if (d == 'P' && i + 3 < n && p[i + 3] != '<') return "invalid named capture (RE2 syntax)";
                        if (d == '\'' ) return "invalid named capture (RE2 syntax)";
                        if (d != ':' && d != 'P' && d != '<') {
                                /* flags: only i m s U, optionally negated, then ')' or ':' */
                                size_t j = i + 2;
                                while (j < n && strchr("imsU-", p[j])) j++;
                                if (j == i + 2 || j >= n || (p[j] != ')' && p[j] != ':'))
                                        return "invalid or unsupported Perl syntax (RE2 syntax)";
                        }
                        continue;
                }
                if (c == '*' || c == '+' || c == '?' || c == '}') {
                        if (i + 1 < n && p[i + 1] == '+') return "possessive quantifiers are not supported (RE2 syntax)";
                        if (c == '}') continue;
                        /* RE2 rejects a repetition of a repetition like a** */
                        if (i + 1 < n && (p[i + 1] == '*' || p[i + 1] == '+')) return "bad repetition operator (RE2 syntax)";
                }
                if (c == '{') {
                        /* {n}, {n,}, {n,m}: counts at most 1000 */
                        size_t j = i + 1;
                        long a = repeat_count(p, n, &j), b = -1;
                        if (a >= 0) {
                                if (j < n && p[j] == ',') {
                                        j++;
                                        b = repeat_count(p, n, &j);
                                }
                                if (j < n && p[j] == '}') {
                                        if (a > CEL_REGEX_MAX_REPEAT || b > CEL_REGEX_MAX_REPEAT || (b >= 0 && b < a))
                                                return "invalid repeat count (RE2 syntax)";
                                        if (j + 1 < n && p[j + 1] == '+') return "possessive quantifiers are not supported (RE2 syntax)";
                                }
                        }
                }
        }
        return NULL;
}

int cel_regex_compile(const char *pat, size_t n, cel_regex **ret, const char **ret_err, cel_arena *a) {
        (void)a;
        const char *why = re2_check(pat, n);
        if (why) {
                *ret_err = why;
                return -EINVAL;
        }
        int ec;
        PCRE2_SIZE eo;
        pcre2_code *code = pcre2_compile((PCRE2_SPTR)pat, n, PCRE2_UTF | PCRE2_DOLLAR_ENDONLY,
                                         &ec, &eo, NULL);
        if (!code) {
                if (ec == PCRE2_ERROR_HEAP_FAILED) return -ENOMEM; /* PCRE2's own allocation */
                *ret_err = "invalid regular expression";
                return -EINVAL;
        }
        cel_regex *re = calloc(1, sizeof(*re));
        if (!re) {
                pcre2_code_free(code);
                return -ENOMEM;
        }
        re->code = code;
        re->mctx = pcre2_match_context_create(NULL);
        if (!re->mctx) {
                cel_regex_free(re);
                return -ENOMEM;
        }
        pcre2_set_match_limit(re->mctx, CEL_REGEX_MATCH_LIMIT);
        pcre2_set_depth_limit(re->mctx, CEL_REGEX_DEPTH_LIMIT);
        *ret = re;
        return 0;
}

void cel_regex_free(cel_regex *re) {
        if (!re) return;
        pcre2_match_context_free(re->mctx);
        pcre2_code_free(re->code);
        free(re);
}

int cel_regex_search(const cel_regex *re, const char *s, size_t n, size_t start, size_t *ret_so, size_t *ret_eo,
                     size_t *ret_g1so, size_t *ret_g1eo, bool *ret_has_group) {
        pcre2_match_data *md = pcre2_match_data_create_from_pattern(re->code, NULL);
        if (!md) return -ENOMEM;
        int r = pcre2_match(re->code, (PCRE2_SPTR)s, n, start, start > 0 ? PCRE2_NO_UTF_CHECK : 0, md, re->mctx);
        if (r < 0) pcre2_match_data_free(md);
        if (r == PCRE2_ERROR_NOMATCH) return 0;
        if (r == PCRE2_ERROR_MATCHLIMIT || r == PCRE2_ERROR_DEPTHLIMIT || r == PCRE2_ERROR_HEAPLIMIT) return -E2BIG;
        if (r == PCRE2_ERROR_NOMEMORY) return -ENOMEM;
        if (r < 0) return -EINVAL;
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        *ret_so = ov[0];
        *ret_eo = ov[1];
        uint32_t groups = 0;
        pcre2_pattern_info(re->code, PCRE2_INFO_CAPTURECOUNT, &groups);
        if (ret_has_group) *ret_has_group = groups > 0;
        if (ret_g1so && groups > 0) {
                if (r >= 2 && ov[2] != PCRE2_UNSET) {
                        *ret_g1so = ov[2];
                        *ret_g1eo = ov[3];
                } else
                        *ret_g1so = *ret_g1eo = ov[1];
        }
        pcre2_match_data_free(md);
        return 1;
}

/* matches() only asks whether any match exists, so it runs PCRE2's DFA
 * matcher: no backtracking, hence no exponential blow-up on patterns such
 * as (a+)+$ that RE2 handles in linear time. */
static int dfa_search(const cel_regex *re, const char *s, size_t n) {
        int ws[1000];
        pcre2_match_data *md = pcre2_match_data_create(1, NULL);
        if (!md) return -ENOMEM;
        int r = pcre2_dfa_match(re->code, (PCRE2_SPTR)s, n, 0, 0, md, re->mctx, ws, ELEMENTSOF(ws));
        pcre2_match_data_free(md);
        if (r == PCRE2_ERROR_NOMATCH) return 0;
        if (r >= 0) return 1;
        if (r == PCRE2_ERROR_DFA_WSSIZE || r == PCRE2_ERROR_DFA_RECURSE || r == PCRE2_ERROR_DFA_UITEM ||
            r == PCRE2_ERROR_DFA_UCOND || r == PCRE2_ERROR_DFA_UINVALID_UTF) {
                /* constructs the DFA matcher lacks: the backtracking matcher, with its limits */
                size_t so, eo;
                return cel_regex_search(re, s, n, 0, &so, &eo, NULL, NULL, NULL);
        }
        if (r == PCRE2_ERROR_MATCHLIMIT || r == PCRE2_ERROR_DEPTHLIMIT || r == PCRE2_ERROR_HEAPLIMIT) return -E2BIG;
        if (r == PCRE2_ERROR_NOMEMORY) return -ENOMEM;
        return -EINVAL;
}

int cel_regex_get(cel_ctx *c, cel_value pat, const cel_regex **ret, cel_regex **ret_owned, cel_value *ret_err) {
        *ret_owned = NULL;
        if (c->call_regex) {
                *ret = c->call_regex;
                return 0;
        }
        const char *why = NULL;
        int r = cel_regex_compile(pat.s.p, pat.s.n, ret_owned, &why, c->arena);
        if (r < 0) {
                *ret_err = r == -ENOMEM ? cel_oom(c) : cel_error(c, "invalid regex: %s", why);
                return r;
        }
        *ret = *ret_owned;
        return 0;
}

cel_value cel_regex_matches(cel_ctx *c, cel_value s, cel_value pat) {
        const cel_regex *re = NULL;
        cel_regex *owned = NULL;
        cel_value bad;
        if (cel_regex_get(c, pat, &re, &owned, &bad) < 0) return bad;
        int r = dfa_search(re, s.s.p, s.s.n);
        cel_regex_free(owned);
        if (r == -ENOMEM) return cel_oom(c);
        if (r == -E2BIG) return cel_error(c, "regex match limit exceeded");
        if (r < 0) return cel_error(c, "regex match failed");
        return cel_bool(r == 1);
}
