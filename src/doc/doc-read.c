/* SPDX-License-Identifier: Apache-2.0
 *
 * doc-read.c — two readers of our own that build the tree libyaml's events
 * would build (doc.h): a JSON reader, which every parse tries first, and a
 * block-YAML reader, which only dp_doc_parse_bulk (the model's bulk loader)
 * uses; whatever either is not sure of goes to libyaml (doc-parse.c).
 * Why the YAML one exists at all, measured: docs/benchmarks.md, "The fast
 * YAML path".
 */
#include "doc/doc-internal.h"

/* ---- JSON fast path ----
 *
 * kubectl -o json and API responses are JSON, and libyaml reads them a
 * character at a time through its YAML scanner. A JSON document is read here
 * directly into the same tree libyaml's events would build: the same nodes,
 * strings, `plain` flags and line/column marks (columns in characters, as
 * libyaml counts). The reader takes only what it is sure libyaml reads the
 * same way; on anything else — a syntax error, a duplicate key, a limit, a
 * tab, a comment, a trailing comma, an escape or character YAML treats
 * differently, a key libyaml would not take as a simple key — it gives up
 * and the input goes through libyaml, so every error message is libyaml's
 * (or the tree builder's) as before. fuzz/fuzz-doc-json checks both agree. */

#define JSON_SIMPLE_KEY_MAX 1000 /* libyaml: a simple key is at most 1024 characters */

typedef struct {
        parse_state *ps;
        const char *p, *end, *line_start;
        size_t line; /* 0-based */
        size_t cont; /* UTF-8 continuation bytes between line_start and p */
        char *tmp;   /* unescaped string */
        size_t tmp_cap;
} jscan;

static mark jmark(const jscan *j) { return (mark){j->line, (size_t)(j->p - j->line_start) - j->cont}; }

static void jspace(jscan *j) {
        while (j->p < j->end) {
                char c = *j->p;
                if (c == ' ') {
                        j->p++;
                } else if (c == '\n' || (c == '\r' && j->p + 1 < j->end && j->p[1] == '\n')) {
                        j->p += c == '\n' ? 1 : 2;
                        j->line++;
                        j->line_start = j->p;
                        j->cont = 0;
                } else {
                        break;
                }
        }
}

static int hexval(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
}

/* One UTF-8 character at p that libyaml reads as a printable non-break
 * character: its length, or 0. */
static size_t utf8_ok(const unsigned char *p, const unsigned char *end) {
        size_t n;
        uint32_t cp;
        if (*p >= 0xc2 && *p <= 0xdf)
                n = 2, cp = *p & 0x1f;
        else if (*p >= 0xe0 && *p <= 0xef)
                n = 3, cp = *p & 0x0f;
        else if (*p >= 0xf0 && *p <= 0xf4)
                n = 4, cp = *p & 0x07;
        else
                return 0;
        if ((size_t)(end - p) < n) return 0;
        for (size_t i = 1; i < n; i++) {
                if ((p[i] & 0xc0) != 0x80) return 0;
                cp = cp << 6 | (p[i] & 0x3f);
        }
        if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff))) return 0;
        if (cp < 0xa0 || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0x2028 || cp == 0x2029 || cp == 0xfffe || cp == 0xffff)
                return 0;
        return n;
}

static int tmp_put(jscan *j, size_t *len, const char *s, size_t n) {
        if (*len + n + 1 > j->tmp_cap) {
                size_t cap = j->tmp_cap ? j->tmp_cap : 256;
                while (cap < *len + n + 1)
                        cap *= 2;
                char *t = realloc(j->tmp, cap);
                if (!t) return -ENOMEM;
                j->tmp = t;
                j->tmp_cap = cap;
        }
        memcpy(j->tmp + *len, s, n);
        *len += n;
        return 0;
}

/* A double-quoted string at p: its text (in the input or in tmp). */
static int jstring(jscan *j, const char **ret, size_t *ret_len) {
        const char *s = ++j->p, *q = s;
        while (q < j->end && (unsigned char)*q >= 0x20 && (unsigned char)*q < 0x7f && *q != '"' && *q != '\\')
                q++;
        if (q < j->end && *q == '"') { /* the common case: nothing to unescape */
                *ret = s;
                *ret_len = (size_t)(q - s);
                j->p = q + 1;
                return 0;
        }
        size_t len = 0;
        for (;;) {
                if (q > s && tmp_put(j, &len, s, (size_t)(q - s)) < 0) return -ENOMEM;
                if (q >= j->end) return JSON_BAIL;
                unsigned char c = (unsigned char)*q;
                if (c == '"') break;
                if (c == '\\') {
                        if (j->end - q < 2) return JSON_BAIL;
                        char e = q[1], out[4];
                        size_t n = 1;
                        q += 2;
                        switch (e) {
                        case '"':
                        case '\\':
                        case '/': out[0] = e; break;
                        case 'b': out[0] = '\b'; break;
                        case 'f': out[0] = '\f'; break;
                        case 'n': out[0] = '\n'; break;
                        case 'r': out[0] = '\r'; break;
                        case 't': out[0] = '\t'; break;
                        case 'u': {
                                if (j->end - q < 4) return JSON_BAIL;
                                uint32_t cp = 0;
                                for (int i = 0; i < 4; i++) {
                                        int h = hexval(q[i]);
                                        if (h < 0) return JSON_BAIL;
                                        cp = cp << 4 | (uint32_t)h;
                                }
                                q += 4;
                                if (cp >= 0xd800 && cp <= 0xdfff) return JSON_BAIL; /* libyaml refuses surrogates */
                                if (cp < 0x80)
                                        out[0] = (char)cp;
                                else if (cp < 0x800) {
                                        out[0] = (char)(0xc0 | cp >> 6);
                                        out[1] = (char)(0x80 | (cp & 0x3f));
                                        n = 2;
                                } else {
                                        out[0] = (char)(0xe0 | cp >> 12);
                                        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
                                        out[2] = (char)(0x80 | (cp & 0x3f));
                                        n = 3;
                                }
                                break;
                        }
                        default: return JSON_BAIL;
                        }
                        if (tmp_put(j, &len, out, n) < 0) return -ENOMEM;
                        s = q;
                } else if (c >= 0x80) {
                        size_t n = utf8_ok((const unsigned char *)q, (const unsigned char *)j->end);
                        if (!n) return JSON_BAIL;
                        j->cont += n - 1;
                        s = q;
                        q += n;
                } else if (c < 0x20 || c == 0x7f) {
                        return JSON_BAIL; /* line breaks fold, tabs and controls: libyaml's business */
                } else {
                        s = q++;
                }
                while (q < j->end && (unsigned char)*q >= 0x20 && (unsigned char)*q < 0x7f && *q != '"' && *q != '\\')
                        q++;
        }
        if (tmp_put(j, &len, "", 1) < 0) return -ENOMEM;
        *ret = j->tmp;
        *ret_len = len - 1;
        j->p = q + 1;
        return 0;
}

static bool is_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* A failure of the tree builder (duplicate key, limit): let libyaml's
 * events reach it in their own order. */
static int jbuild(const jscan *j, int r) {
        if (r == -ENOMEM && !doc_nodes_full(j->ps->set)) return r;
        return r < 0 ? JSON_BAIL : r;
}

static int jvalue(jscan *j);

/* after a value: skip space, then one of `close` or ',' */
static int jnext(jscan *j, char close, bool *done) {
        jspace(j);
        if (j->p >= j->end) return JSON_BAIL;
        if (*j->p == close) {
                *done = true;
                j->p++;
                return 0;
        }
        if (*j->p != ',') return JSON_BAIL;
        j->p++;
        jspace(j);
        return 0;
}

static int jcollection(jscan *j, bool map) {
        mark m = jmark(j);
        if (j->ps->depth >= DP_DOC_MAX_DEPTH || doc_nodes_full(j->ps->set)) return JSON_BAIL;
        int r = doc_open_collection(j->ps, map ? DP_DOC_MAP : DP_DOC_SEQ, &m);
        if (r < 0) return jbuild(j, r);
        char close = map ? '}' : ']';
        j->p++;
        jspace(j);
        bool done = j->p < j->end && *j->p == close;
        if (done) j->p++;
        while (!done) {
                if (map) {
                        if (j->p >= j->end || *j->p != '"') return JSON_BAIL;
                        mark km = jmark(j);
                        const char *kstart = j->p, *key;
                        size_t klen;
                        if ((r = jstring(j, &key, &klen)) != 0) return r;
                        if ((r = jbuild(j, doc_add_scalar(j->ps, key, klen, false, &km))) != 0) return r;
                        while (j->p < j->end && *j->p == ' ')
                                j->p++;
                        /* a simple key: on one line, not too long; in flow context ':' needs no blank after it */
                        if (j->p >= j->end || *j->p != ':' || j->p - kstart > JSON_SIMPLE_KEY_MAX) return JSON_BAIL;
                        j->p++;
                        jspace(j);
                }
                if ((r = jvalue(j)) != 0) return r;
                if ((r = jnext(j, close, &done)) != 0) return r;
        }
        return jbuild(j, doc_close_collection(j->ps));
}

static int jvalue(jscan *j) {
        if (j->p >= j->end) return JSON_BAIL;
        char c = *j->p;
        if (c == '{' || c == '[') return jcollection(j, c == '{');
        mark m = jmark(j);
        if (c == '"') {
                const char *s;
                size_t len;
                int r = jstring(j, &s, &len);
                return r ? r : jbuild(j, doc_add_scalar(j->ps, s, len, false, &m));
        }
        /* numbers, true, false, null: a plain scalar of these characters */
        const char *s = j->p, *q = s;
        if (!(is_alnum(c) ||
              (q + 1 < j->end && ((c == '-' && (is_alnum(q[1]) || q[1] == '.')) || (c == '.' && is_alnum(q[1]))))))
                return JSON_BAIL;
        while (q < j->end && (is_alnum(*q) || *q == '.' || *q == '-' || *q == '+'))
                q++;
        j->p = q;
        return jbuild(j, doc_add_scalar(j->ps, s, (size_t)(q - s), true, &m));
}

/* 0: the document is in the set (and handed to fn); JSON_BAIL: nothing was
 * kept, read it with libyaml; -ENOMEM. */
int doc_parse_json(parse_state *ps, const char *buf, size_t len) {
        dp_doc_set *s = ps->set;
        jscan j = {.ps = ps, .p = buf, .end = buf + len, .line_start = buf};
        size_t nodes = s->n_nodes, roots = s->n_roots;
        dp_error *err = ps->err;
        ps->err = NULL; /* every failure gives up: no message is wanted */
        jspace(&j);
        int r = JSON_BAIL;
        if (j.p < j.end && (*j.p == '{' || *j.p == '[')) {
                r = jvalue(&j);
                jspace(&j);
                if (r == 0 && j.p != j.end) r = JSON_BAIL;
        }
        free(j.tmp);
        ps->err = err;
        if (r == 0) {
                doc_document_end(ps);
                return 0;
        }
        /* undo: no root, no nodes (their arrays live in the blocks) */
        for (size_t i = roots; i < s->n_roots; i++)
                free(s->sources[i]);
        s->n_roots = roots;
        s->n_nodes = nodes;
        ps->depth = 0;
        ps->n_kids = 0;
        return r;
}

/* ---- YAML fast path (dp_doc_parse_bulk only: the model's bulk loader) ----
 *
 * Manifests written by people and by kubectl -o yaml are block-style YAML,
 * and libyaml spends most of a load in its scanner (a function call and a
 * buffer check per character). The reader below takes the common subset —
 * block mappings and sequences (indentless ones too, compact "- k: v" and
 * "- - x"), one-line flow collections, plain, single- and double-quoted
 * scalars (over several lines too, folded as libyaml folds them), block
 * scalars ('|', '>'), comments, "---" between documents — and builds the
 * very tree libyaml's events would build, with the same tree builder
 * (doc_open_collection, doc_add_scalar, doc_close_collection): the same
 * nodes, strings, `plain` flags and line/column marks.
 *
 * It is conservative: whatever it is not sure libyaml reads the same way
 * makes it give up — a tab (in indentation, line breaks, quoted text, a
 * block scalar's header), anchors, aliases, tags, a flow collection over
 * more than one line, a scalar over several lines as a key or inside a
 * flow collection, '?' keys, directives, "...", content on a "---" line,
 * ':' inside a plain scalar in a flow collection, an escape libyaml
 * refuses, a key over 1,000 bytes, an indentation it does not expect, any
 * error (the tree builder's too: a duplicate key, a limit). Documents
 * already handed to the caller (dp_doc_parse_bulk) cannot be taken back,
 * so it gives up one document at a time: the document it was
 * reading is dropped and libyaml reads the input from that document's "---"
 * line (or from the start), with the lines before added to its marks, so an
 * error reads as it always did; libyaml stops at the next "---" line (with
 * no directive before it) and the reader goes on from there. libyaml reads
 * no further than the token it needs, so it has not seen anything past that
 * "---" and a document reads the same whichever of the two starts at its
 * "---". An input with anything libyaml's reader refuses (bad UTF-8,
 * control characters) or reads as a line break or byte order mark the
 * reader here does not know (CR, NEL, LS, PS, BOM) goes to libyaml whole:
 * libyaml decodes 16 KiB ahead, so its reader errors come before documents
 * that precede them in the input. fuzz/fuzz-doc-yaml.c and
 * tests/doc/test-doc-yaml.c check that both readers agree. */

enum {
        YC_STOP = 1,    /* ends a run of plain scalar characters: blanks, ':', line breaks, controls */
        YC_FLOW = 2,    /* ends a plain scalar inside a flow collection */
        YC_HIGH = 4,    /* a byte of a multi-byte UTF-8 character */
        YC_NOSTART = 8, /* cannot start a plain scalar here: indicators, blanks, controls */
};

static const uint8_t ycls[256] = {
        [0x00 ... 0x1f] = YC_STOP | YC_NOSTART,
        [' '] = YC_STOP | YC_NOSTART,
        [':'] = YC_STOP | YC_NOSTART,
        [','] = YC_FLOW | YC_NOSTART,
        ['['] = YC_FLOW | YC_NOSTART,
        [']'] = YC_FLOW | YC_NOSTART,
        ['{'] = YC_FLOW | YC_NOSTART,
        ['}'] = YC_FLOW | YC_NOSTART,
        ['-'] = YC_NOSTART,
        ['?'] = YC_NOSTART,
        ['#'] = YC_NOSTART,
        ['&'] = YC_NOSTART,
        ['*'] = YC_NOSTART,
        ['!'] = YC_NOSTART,
        ['|'] = YC_NOSTART,
        ['>'] = YC_NOSTART,
        ['\''] = YC_NOSTART,
        ['"'] = YC_NOSTART,
        ['%'] = YC_NOSTART,
        ['@'] = YC_NOSTART,
        ['`'] = YC_NOSTART,
        [0x7f] = YC_STOP | YC_NOSTART,
        [0x80 ... 0xff] = YC_HIGH,
};

/* Whether libyaml's reader takes every character of the input and none of
 * them is one this reader does not know (see above). */
bool doc_yprescan(const char *buf, size_t len) {
        const unsigned char *p = (const unsigned char *)buf, *e = p + len;
        while (p < e) {
                /* eight printable ASCII characters at a time */
                while (e - p >= 8) {
                        uint64_t x, d;
                        memcpy(&x, p, 8);
                        d = x ^ 0x7f7f7f7f7f7f7f7full;
                        if (((x | ((x - 0x2020202020202020ull) & ~x) | ((d - 0x0101010101010101ull) & ~d)) &
                             0x8080808080808080ull) != 0)
                                break;
                        p += 8;
                }
                if (p == e) break;
                unsigned char c = *p;
                if ((c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t') {
                        p++;
                        continue;
                }
                if (c < 0x80) return false;
                size_t n = utf8_ok(p, e);
                if (!n || (c == 0xef && p[1] == 0xbb && p[2] == 0xbf)) return false;
                p += n;
        }
        return true;
}

typedef struct {
        jscan j;
        bool at_end; /* at the end of the input or of a document ("---" at p) */
        bool marker; /* at a "---" line */
        size_t col;  /* column of p, the first character of a line with content */
        long indent; /* column of the innermost block collection, -1 at the top (libyaml's parser->indent) */
} yscan;

/* a scalar read but not yet added */
typedef struct {
        const char *at; /* where it starts in the input */
        const char *s;  /* its text (in the input or in the scan's tmp) */
        size_t len;
        bool plain;
        bool multi; /* over more than one line: not a key */
        mark m;
} yscal;

static void yspace(jscan *j) {
        while (j->p < j->end && *j->p == ' ')
                j->p++;
}

/* "- " or "-" at the end of a line: a block sequence entry */
static bool yentry(const jscan *j) {
        const char *p = j->p;
        return p < j->end && *p == '-' && (p + 1 == j->end || p[1] == ' ' || p[1] == '\n');
}

/* ": " or ':' at the end of a line: a key ends (block context) */
static bool ykey_end(const jscan *j) {
        const char *p = j->p;
        return p < j->end && *p == ':' && (p + 1 == j->end || p[1] == ' ' || p[1] == '\n');
}

/* From the line break at p (or, first, from the start of the input) to the
 * next line with content, past blank and comment lines. */
static int ylines(yscan *y, bool at_break) {
        jscan *j = &y->j;
        const char *q = j->p, *e = j->end;
        for (;; at_break = true) {
                if (at_break) {
                        if (q == e) break;
                        q++;
                        j->line++;
                        j->line_start = q;
                }
                while (q < e && *q == ' ')
                        q++;
                if (q == e) break;
                if (*q == '\n') continue;
                if (*q == '#') {
                        q = memchr(q, '\n', (size_t)(e - q));
                        if (!q) q = e;
                        continue;
                }
                j->p = q;
                j->cont = 0;
                y->col = (size_t)(q - j->line_start);
                if (*q == '\t') return JSON_BAIL;
                if (y->col == 0 && e - q >= 3 && (*q == '-' || *q == '.') && q[1] == *q && q[2] == *q) {
                        if (*q == '.' || (e - q > 3 && q[3] != ' ' && q[3] != '\n')) return JSON_BAIL;
                        y->at_end = y->marker = true;
                }
                return 0;
        }
        j->p = e;
        j->cont = 0;
        y->at_end = true;
        y->marker = false;
        return 0;
}

/* The rest of a line after a node (blanks, a comment), then on to the next
 * line with content. */
static int yeol(yscan *y) {
        jscan *j = &y->j;
        const char *q = j->p, *e = j->end;
        while (q < e && *q == ' ')
                q++;
        if (q < e && *q == '#' && q > j->line_start && q[-1] == ' ') {
                q = memchr(q, '\n', (size_t)(e - q));
                if (!q) q = e;
        }
        if (q < e && *q != '\n') return JSON_BAIL;
        j->p = q;
        return ylines(y, true);
}

/* "---" or "..." and a blank, a line break or the end at q, the start of a
 * line: a document marker, which ends a plain scalar and is an error inside
 * a quoted one. */
static bool ymarker(const char *q, const char *e) {
        return e - q >= 3 && (q[0] == '-' || q[0] == '.') && q[1] == q[0] && q[2] == q[0] &&
               (e - q == 3 || q[3] == ' ' || q[3] == '\n' || q[3] == '\t');
}

/* The line break at *qp inside a scalar that may go on: past it, the blank
 * lines after it and the next line's indentation, to that line's first
 * character or the end (*qp), counting the breaks. The reader gives up on
 * a tab there (libyaml refuses some and folds others). */
static int ybreaks(jscan *j, const char **qp, size_t *ret_breaks) {
        const char *q = *qp, *e = j->end;
        size_t breaks = 0;
        do {
                q++;
                breaks++;
                j->line++;
                j->line_start = q;
                while (q < e && *q == ' ')
                        q++;
                if (q < e && *q == '\t') return JSON_BAIL;
        } while (q < e && *q == '\n');
        j->cont = 0;
        *qp = q;
        *ret_breaks = breaks;
        return 0;
}

/* Folding as libyaml does it between two lines of a flow or plain scalar:
 * one line break is a space, n > 1 are n - 1 newlines; after an escaped
 * line break ("\" at the end of a line) the first break is dropped. */
static int yfold(jscan *j, size_t *len, size_t breaks, bool escaped) {
        if (breaks == 1 && !escaped) return tmp_put(j, len, " ", 1);
        for (size_t i = 1; i < breaks; i++)
                if (tmp_put(j, len, "\n", 1) < 0) return -ENOMEM;
        return 0;
}

/* One line of a plain scalar from q: where its last non-blank character
 * ends; it ends before ": ", " #", the line break, a tab, the end or, in a
 * flow collection, a flow indicator. *cont counts the UTF-8 continuation
 * bytes passed. */
static inline int yplain_line(const char *q, const char *e, bool flow, const char **ret_last, size_t *cont) {
        const uint8_t stop = YC_STOP | YC_HIGH | (flow ? YC_FLOW : 0);
        const char *last;
        for (;;) {
                while (q < e && !(ycls[(uint8_t)*q] & stop))
                        q++;
                if (q == e) {
                        last = q;
                        break;
                }
                uint8_t c = (uint8_t)*q;
                if (c >= 0x80) {
                        *cont += (c & 0xc0) == 0x80;
                        q++;
                        continue;
                }
                if (c == ':' && q + 1 < e && q[1] != ' ' && q[1] != '\n') {
                        if (flow || q[1] == '\t') return JSON_BAIL; /* "a:b" in a flow collection, ":\t" */
                        q++;
                        continue;
                }
                last = q;
                if (c != ' ') break;
                /* blanks inside the scalar are part of it when more of it follows */
                while (q < e && *q == ' ')
                        q++;
                if (q == e) break;
                c = (uint8_t)*q;
                if (c == '#' || c == '\n' || c == '\t' || (flow && (ycls[c] & YC_FLOW)) ||
                    (c == ':' && (q + 1 == e || q[1] == ' ' || q[1] == '\n' || q[1] == '\t')))
                        break;
        }
        *ret_last = last;
        return 0;
}

/* The rest of a plain scalar whose first line (to last) may go on: the
 * lines that continue it, folded (see yplain). */
static int yplain_more(yscan *y, yscal *ret, const char *last, size_t cont) {
        jscan *j = &y->j;
        const char *s = ret->at, *e = j->end;
        size_t len = 0;
        int r;
        for (;;) {
                const char *q = last;
                while (q < e && *q == ' ')
                        q++;
                if (q == e || *q != '\n') break;
                jscan save = *j;
                size_t breaks;
                if ((r = ybreaks(j, &q, &breaks)) != 0) return r;
                if (q == e || (long)(q - j->line_start) < y->indent + 1 || *q == '#' ||
                    (*q == ':' && (q + 1 == e || q[1] == ' ' || q[1] == '\n' || q[1] == '\t')) ||
                    (q == j->line_start && ymarker(q, e))) {
                        save.tmp = j->tmp; /* tmp may have grown */
                        save.tmp_cap = j->tmp_cap;
                        *j = save;
                        break;
                }
                if (!ret->multi) {
                        if (tmp_put(j, &len, s, (size_t)(last - s)) < 0) return -ENOMEM;
                        ret->multi = true;
                        cont = 0;
                }
                const char *ls = q;
                if ((r = yfold(j, &len, breaks, false)) < 0 || (r = yplain_line(q, e, false, &last, &cont)) != 0)
                        return r;
                if (tmp_put(j, &len, ls, (size_t)(last - ls)) < 0) return -ENOMEM;
        }
        if (ret->multi) {
                /* ": " after a scalar over several lines is libyaml's error */
                const char *q = last;
                while (q < e && *q == ' ')
                        q++;
                if (q < e && *q == ':') return JSON_BAIL;
                if (tmp_put(j, &len, "", 1) < 0) return -ENOMEM;
                ret->s = j->tmp;
                ret->len = len - 1;
                j->cont = cont;
        } else {
                ret->s = s;
                ret->len = (size_t)(last - s);
                j->cont += cont;
        }
        j->p = last;
        return 0;
}

/* A plain scalar at p (its first character checked); p is left after its
 * last non-blank character. In block context it goes on over the lines
 * that follow while they are indented more than the innermost block
 * collection (y->indent) and do not start with a comment, ": " or a
 * document marker, the lines folded as libyaml folds them. */
static int yplain(yscan *y, bool flow, yscal *ret) {
        jscan *j = &y->j;
        const char *s = j->p, *e = j->end, *last;
        size_t cont = 0;
        ret->m = jmark(j);
        ret->at = s;
        ret->plain = true;
        ret->multi = false;
        int r = yplain_line(s, e, flow, &last, &cont);
        if (r) return r;
        if (!flow) {
                /* a line break after it: the scalar may go on if the next line
                 * is indented enough; first the common case, a line that is not */
                const char *q = last;
                while (q < e && *q == ' ')
                        q++;
                if (q < e && *q == '\n') {
                        const char *t = q + 1;
                        while (t < e && *t == ' ')
                                t++;
                        if (!(t == e || *t == '#' || (*t != '\n' && *t != '\t' && (long)(t - q - 1) <= y->indent)))
                                return yplain_more(y, ret, last, cont);
                }
        }
        ret->s = s;
        ret->len = (size_t)(last - s);
        j->cont += cont;
        j->p = last;
        return 0;
}

/* A line break at q inside a quoted scalar (the blanks before it were
 * left out): on to the next line, folded; libyaml refuses a document
 * marker there. */
static int yqbreak(jscan *j, const char **qp, size_t *len, bool escaped) {
        size_t breaks;
        int r = ybreaks(j, qp, &breaks);
        if (r) return r;
        if (*qp == j->end || (*qp == j->line_start && ymarker(*qp, j->end))) return JSON_BAIL;
        return yfold(j, len, breaks, escaped);
}

/* The text of a quoted scalar gathered in tmp from s: the rest of it, up
 * to q, its closing quote. */
static int yquote_end(yscan *y, yscal *ret, const char *s, const char *q, size_t len, bool copied, size_t line) {
        jscan *j = &y->j;
        if (copied) {
                if (tmp_put(j, &len, s, (size_t)(q - s)) < 0 || tmp_put(j, &len, "", 1) < 0) return -ENOMEM;
                ret->s = j->tmp;
                ret->len = len - 1;
        } else {
                ret->s = s;
                ret->len = (size_t)(q - s);
        }
        ret->multi = j->line != line;
        j->p = q + 1;
        return 0;
}

/* the blanks before a line break in a quoted scalar are left out */
static const char *ytrim(const char *s, const char *q) {
        while (q > s && q[-1] == ' ')
                q--;
        return q;
}

/* A single-quoted scalar ('' is a quote), over lines outside flow
 * collections. */
static int ysquote(yscan *y, bool flow, yscal *ret) {
        jscan *j = &y->j;
        ret->m = jmark(j);
        ret->at = j->p;
        ret->plain = false;
        const char *s = ++j->p, *q = s, *e = j->end;
        size_t len = 0, line = j->line;
        bool copied = false;
        int r;
        for (;;) {
                while (q < e && *q != '\'' && (uint8_t)*q >= 0x20 && (uint8_t)*q < 0x7f)
                        q++;
                if (q == e) return JSON_BAIL;
                uint8_t c = (uint8_t)*q;
                if (c == '\'') {
                        if (q + 1 == e || q[1] != '\'') break;
                        if (tmp_put(j, &len, s, (size_t)(q + 1 - s)) < 0) return -ENOMEM;
                        copied = true;
                        q += 2;
                        s = q;
                } else if (c >= 0x80) {
                        j->cont += (c & 0xc0) == 0x80;
                        q++;
                } else if (c == '\n' && !flow) {
                        if (tmp_put(j, &len, s, (size_t)(ytrim(s, q) - s)) < 0) return -ENOMEM;
                        copied = true;
                        if ((r = yqbreak(j, &q, &len, false)) != 0) return r;
                        s = q;
                } else {
                        return JSON_BAIL; /* a tab; a line break in a flow collection */
                }
        }
        return yquote_end(y, ret, s, q, len, copied, line);
}

/* A YAML escape at q (after the backslash, not a line break): its UTF-8
 * text in out, q moved past it; JSON_BAIL for one libyaml refuses. */
static int yescape(const char **qp, const char *e, char out[4], size_t *ret_n) {
        const char *q = *qp;
        char c = *q++;
        size_t digits = 0, n = 1;
        switch (c) {
        case '0': out[0] = '\0'; break;
        case 'a': out[0] = '\a'; break;
        case 'b': out[0] = '\b'; break;
        case 't':
        case '\t': out[0] = '\t'; break;
        case 'n': out[0] = '\n'; break;
        case 'v': out[0] = '\v'; break;
        case 'f': out[0] = '\f'; break;
        case 'r': out[0] = '\r'; break;
        case 'e': out[0] = '\x1b'; break;
        case ' ':
        case '"':
        case '/':
        case '\\': out[0] = c; break;
        case 'N': memcpy(out, "\xc2\x85", n = 2); break;
        case '_': memcpy(out, "\xc2\xa0", n = 2); break;
        case 'L': memcpy(out, "\xe2\x80\xa8", n = 3); break;
        case 'P': memcpy(out, "\xe2\x80\xa9", n = 3); break;
        case 'x': digits = 2; break;
        case 'u': digits = 4; break;
        case 'U': digits = 8; break;
        default: return JSON_BAIL;
        }
        if (digits) {
                if ((size_t)(e - q) < digits) return JSON_BAIL;
                uint32_t cp = 0;
                for (size_t i = 0; i < digits; i++) {
                        int h = hexval(q[i]);
                        if (h < 0) return JSON_BAIL;
                        cp = cp << 4 | (uint32_t)h;
                }
                q += digits;
                if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return JSON_BAIL;
                if (cp < 0x80) {
                        out[0] = (char)cp;
                } else if (cp < 0x800) {
                        out[0] = (char)(0xc0 | cp >> 6);
                        out[1] = (char)(0x80 | (cp & 0x3f));
                        n = 2;
                } else if (cp < 0x10000) {
                        out[0] = (char)(0xe0 | cp >> 12);
                        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
                        out[2] = (char)(0x80 | (cp & 0x3f));
                        n = 3;
                } else {
                        out[0] = (char)(0xf0 | cp >> 18);
                        out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
                        out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
                        out[3] = (char)(0x80 | (cp & 0x3f));
                        n = 4;
                }
        }
        *qp = q;
        *ret_n = n;
        return 0;
}

/* A double-quoted scalar with YAML's escapes, over lines outside flow
 * collections ("\" at the end of a line: the break is dropped). */
static int ydquote(yscan *y, bool flow, yscal *ret) {
        jscan *j = &y->j;
        ret->m = jmark(j);
        ret->at = j->p;
        ret->plain = false;
        const char *s = ++j->p, *q = s, *e = j->end;
        size_t len = 0, line = j->line;
        bool copied = false;
        int r;
        for (;;) {
                while (q < e && *q != '"' && *q != '\\' && (uint8_t)*q >= 0x20 && (uint8_t)*q < 0x80)
                        q++;
                if (q == e) return JSON_BAIL;
                char c = *q;
                if (c == '"') break;
                if ((uint8_t)c >= 0x80) {
                        j->cont += ((uint8_t)c & 0xc0) == 0x80;
                        q++;
                        continue;
                }
                if (c == '\t' || (c == '\n' && flow)) return JSON_BAIL; /* a tab; a line break in a flow collection */
                copied = true;
                if (c == '\n') {
                        if (tmp_put(j, &len, s, (size_t)(ytrim(s, q) - s)) < 0) return -ENOMEM;
                        if ((r = yqbreak(j, &q, &len, false)) != 0) return r;
                        s = q;
                        continue;
                }
                /* a backslash */
                if (tmp_put(j, &len, s, (size_t)(q - s)) < 0) return -ENOMEM;
                if (++q == e) return JSON_BAIL;
                if (*q == '\n') {
                        if (flow) return JSON_BAIL;
                        if ((r = yqbreak(j, &q, &len, true)) != 0) return r;
                } else {
                        char out[4];
                        size_t n;
                        if ((r = yescape(&q, e, out, &n)) != 0) return r;
                        if (tmp_put(j, &len, out, n) < 0) return -ENOMEM;
                }
                s = q;
        }
        return yquote_end(y, ret, s, q, len, copied, line);
}

static int yscalar(yscan *y, bool flow, yscal *ret) {
        jscan *j = &y->j;
        if (j->p >= j->end) return JSON_BAIL;
        uint8_t c = (uint8_t)*j->p;
        if (c == '"') return ydquote(y, flow, ret);
        if (c == '\'') return ysquote(y, flow, ret);
        /* "-1", "--x": a '-' before a non-blank starts a plain scalar */
        if ((ycls[c] & YC_NOSTART) &&
            !(c == '-' && j->p + 1 < j->end && !(ycls[(uint8_t)j->p[1]] & (YC_STOP | YC_FLOW))))
                return JSON_BAIL;
        return yplain(y, flow, ret);
}

static int yadd(jscan *j, const yscal *v) { return jbuild(j, doc_add_scalar(j->ps, v->s, v->len, v->plain, &v->m)); }

static bool ycan_open(const jscan *j) { return j->ps->depth < DP_DOC_MAX_DEPTH && !doc_nodes_full(j->ps->set); }

/* A flow collection on one line, '{' or '[' at p. */
static int yflow(yscan *y, bool map) {
        jscan *j = &y->j;
        parse_state *ps = j->ps;
        mark m = jmark(j);
        if (!ycan_open(j)) return JSON_BAIL;
        int r = jbuild(j, doc_open_collection(ps, map ? DP_DOC_MAP : DP_DOC_SEQ, &m));
        if (r) return r;
        char close = map ? '}' : ']';
        j->p++;
        yspace(j);
        if (j->p < j->end && *j->p == close) {
                j->p++;
                return jbuild(j, doc_close_collection(ps));
        }
        for (;;) {
                yscal v;
                if (map) {
                        if ((r = yscalar(y, true, &v)) != 0 || (r = yadd(j, &v)) != 0) return r;
                        yspace(j);
                        if (j->end - j->p < 2 || j->p[0] != ':' || j->p[1] != ' ' || j->p - v.at > JSON_SIMPLE_KEY_MAX)
                                return JSON_BAIL;
                        j->p += 2;
                        yspace(j);
                }
                if (j->p < j->end && (*j->p == '{' || *j->p == '['))
                        r = yflow(y, *j->p == '{');
                else if ((r = yscalar(y, true, &v)) == 0)
                        r = yadd(j, &v);
                if (r) return r;
                yspace(j);
                if (j->p == j->end) return JSON_BAIL;
                if (*j->p == close) break;
                if (*j->p != ',') return JSON_BAIL;
                j->p++;
                yspace(j);
                if (j->p < j->end && (*j->p == ']' || *j->p == '}')) return JSON_BAIL;
        }
        j->p++;
        return jbuild(j, doc_close_collection(ps));
}

/* Block scalars ('|' literal, '>' folded) follow libyaml's scanner to the
 * letter, quirks included: a '#' right after the header's indicators
 * starts a comment even without a blank before it; with no indentation
 * indicator, the indentation is the largest of the leading blank lines'
 * and the first content line's (a more indented blank line before the
 * content ends the scalar there, where the YAML spec calls it an error),
 * and at least one more than the innermost block collection's; a
 * whitespace-only line indented past the scalar keeps its extra spaces. */

/* Blank lines and the indentation of the next line from q (a line's
 * start): libyaml's scan_block_scalar_breaks. Sets *indent if it was 0. */
static int ybscalar_breaks(yscan *y, const char **qp, size_t *indent, size_t *breaks) {
        jscan *j = &y->j;
        const char *q = *qp, *e = j->end;
        size_t max = 0;
        for (;;) {
                while (q < e && *q == ' ' && (!*indent || (size_t)(q - j->line_start) < *indent))
                        q++;
                size_t col = (size_t)(q - j->line_start);
                if (col > max) max = col;
                if (q < e && *q == '\t' && (!*indent || col < *indent)) return JSON_BAIL;
                if (q == e || *q != '\n') break;
                q++;
                (*breaks)++;
                j->line++;
                j->line_start = q;
        }
        if (!*indent) {
                long least = y->indent + 1;
                *indent = max;
                if ((long)*indent < least) *indent = (size_t)least;
                if (*indent < 1) *indent = 1;
        }
        *qp = q;
        return 0;
}

static int ynewlines(jscan *j, size_t *len, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (tmp_put(j, len, "\n", 1) < 0) return -ENOMEM;
        return 0;
}

/* A block scalar, '|' or '>' at p; like the block collections, it returns
 * at the next line with content. */
static int ybscalar(yscan *y) {
        jscan *j = &y->j;
        const char *q = j->p, *e = j->end;
        mark m = jmark(j);
        bool literal = *q++ == '|';
        int chomp = 0; /* -1 strip, 0 clip, 1 keep */
        size_t indent = 0, len = 0;
        if (q < e && (*q == '+' || *q == '-')) {
                chomp = *q++ == '+' ? 1 : -1;
                if (q < e && *q >= '0' && *q <= '9') {
                        if (*q == '0') return JSON_BAIL;
                        indent = (size_t)(*q++ - '0');
                }
        } else if (q < e && *q >= '0' && *q <= '9') {
                if (*q == '0') return JSON_BAIL;
                indent = (size_t)(*q++ - '0');
                if (q < e && (*q == '+' || *q == '-')) chomp = *q++ == '+' ? 1 : -1;
        }
        while (q < e && *q == ' ')
                q++;
        if (q < e && *q == '#') {
                q = memchr(q, '\n', (size_t)(e - q));
                if (!q) q = e;
        }
        if (q < e && *q != '\n') return JSON_BAIL; /* a tab, more on the line: libyaml's error */
        if (q < e) {
                q++;
                j->line++;
                j->line_start = q;
        }
        if (indent && y->indent >= 0) indent += (size_t)y->indent;
        size_t trailing = 0;
        bool leading_break = false, leading_blank = false;
        int r = ybscalar_breaks(y, &q, &indent, &trailing);
        if (r) return r;
        while (q < e && (size_t)(q - j->line_start) == indent) {
                bool trailing_blank = *q == ' ' || *q == '\t';
                if (!literal && leading_break && !leading_blank && !trailing_blank) {
                        if (!trailing && tmp_put(j, &len, " ", 1) < 0) return -ENOMEM;
                } else if (leading_break && tmp_put(j, &len, "\n", 1) < 0) {
                        return -ENOMEM;
                }
                if (ynewlines(j, &len, trailing) < 0) return -ENOMEM;
                trailing = 0;
                leading_blank = trailing_blank;
                const char *le = memchr(q, '\n', (size_t)(e - q));
                if (!le) le = e;
                if (tmp_put(j, &len, q, (size_t)(le - q)) < 0) return -ENOMEM;
                q = le;
                leading_break = q < e;
                if (q < e) {
                        q++;
                        j->line++;
                        j->line_start = q;
                }
                if ((r = ybscalar_breaks(y, &q, &indent, &trailing)) != 0) return r;
        }
        if (chomp != -1 && leading_break && tmp_put(j, &len, "\n", 1) < 0) return -ENOMEM;
        if (chomp == 1 && ynewlines(j, &len, trailing) < 0) return -ENOMEM;
        if (tmp_put(j, &len, "", 1) < 0) return -ENOMEM;
        if ((r = jbuild(j, doc_add_scalar(j->ps, j->tmp, len - 1, false, &m))) != 0) return r;
        /* q: a line indented less than the scalar, or the end */
        j->p = q;
        return ylines(y, false);
}

/* Each of these reads a block node at p and returns with p at the next line
 * with content (y->col its column) or at the end of the document. A node
 * ends where a line is indented no more than its collection; a line
 * indented more than the innermost block collection after a complete node
 * (a plain scalar took the lines that continue it) is an error: the reader
 * gives up. */
static int ymap(yscan *y, yscal *k);
static int yseq(yscan *y, bool indentless);

/* A value on the line of its key: a flow collection or a scalar. */
static int yinline(yscan *y) {
        jscan *j = &y->j;
        int r;
        if (*j->p == '|' || *j->p == '>') return ybscalar(y);
        if (*j->p == '{' || *j->p == '[') {
                r = yflow(y, *j->p == '{');
        } else {
                yscal v;
                if ((r = yscalar(y, false, &v)) == 0) r = yadd(j, &v);
        }
        return r ? r : yeol(y);
}

/* A block node at the start of its line or after "- ". */
static int yblock(yscan *y) {
        jscan *j = &y->j;
        if (yentry(j)) return yseq(y, false);
        if (*j->p == '{' || *j->p == '[' || *j->p == '|' || *j->p == '>') return yinline(y);
        yscal v;
        int r = yscalar(y, false, &v);
        if (r) return r;
        yspace(j);
        if (ykey_end(j)) return v.multi ? JSON_BAIL : ymap(y, &v);
        return (r = yadd(j, &v)) ? r : yeol(y);
}

/* A block mapping whose first key k was read, p at its ':'. */
static int ymap(yscan *y, yscal *k) {
        jscan *j = &y->j;
        parse_state *ps = j->ps;
        size_t n = k->m.column;
        if (!ycan_open(j)) return JSON_BAIL;
        int r = jbuild(j, doc_open_collection(ps, DP_DOC_MAP, &k->m));
        if (r) return r;
        long up = y->indent;
        y->indent = (long)n;
        for (;;) {
                if (j->p - k->at > JSON_SIMPLE_KEY_MAX) return JSON_BAIL;
                if ((r = yadd(j, k)) != 0) return r;
                j->p++;
                mark vm = jmark(j); /* an empty value is marked just after the ':' */
                yspace(j);
                if (j->p == j->end || *j->p == '\n' || *j->p == '#') {
                        if ((r = yeol(y)) != 0) return r;
                        if (!y->at_end && y->col > n)
                                r = yblock(y);
                        else if (!y->at_end && y->col == n && yentry(j))
                                r = yseq(y, true);
                        else
                                r = jbuild(j, doc_add_scalar(ps, "", 0, true, &vm));
                } else {
                        r = yinline(y);
                }
                if (r) return r;
                if (y->at_end || y->col < n) break;
                if (y->col > n || yentry(j)) return JSON_BAIL;
                if ((r = yscalar(y, false, k)) != 0) return r;
                yspace(j);
                if (!ykey_end(j) || k->multi) return JSON_BAIL;
        }
        y->indent = up;
        return jbuild(j, doc_close_collection(ps));
}

/* A block sequence, its first '-' at p; an indentless one (the value of a
 * mapping key, its '-' in the key's column) ends at a line that is not an
 * entry. */
static int yseq(yscan *y, bool indentless) {
        jscan *j = &y->j;
        parse_state *ps = j->ps;
        mark m = jmark(j);
        size_t n = m.column;
        if (!ycan_open(j)) return JSON_BAIL;
        int r = jbuild(j, doc_open_collection(ps, DP_DOC_SEQ, &m));
        if (r) return r;
        long up = y->indent;
        y->indent = (long)n;
        for (;;) {
                j->p++;
                mark em = jmark(j); /* an empty entry is marked just after the '-' */
                yspace(j);
                if (j->p == j->end || *j->p == '\n' || *j->p == '#') {
                        if ((r = yeol(y)) != 0) return r;
                        if (!y->at_end && y->col > n)
                                r = yblock(y);
                        else
                                r = jbuild(j, doc_add_scalar(ps, "", 0, true, &em));
                } else {
                        r = yblock(y);
                }
                if (r) return r;
                if (y->at_end || y->col < n) break;
                if (y->col > n) return JSON_BAIL;
                if (!yentry(j)) {
                        if (indentless) break;
                        return JSON_BAIL;
                }
        }
        y->indent = up;
        return jbuild(j, doc_close_collection(ps));
}

/* Reads the documents of buf from offset start (line `line`, the start of
 * the input or of a "---" line), the input having passed yprescan. 0: every
 * document was read (and handed to fn); JSON_BAIL: documents before
 * *ret_off (the start of the one it gave up in, line *ret_line) were read,
 * that one is libyaml's; -ENOMEM. */
int doc_parse_yaml_fast(parse_state *ps, const char *buf, size_t len, size_t start, size_t line, size_t *ret_off,
                        size_t *ret_line) {
        dp_doc_set *s = ps->set;
        *ret_off = start;
        *ret_line = line;
        yscan y = {.j = {.ps = ps, .p = buf + start, .end = buf + len, .line_start = buf + start, .line = line},
                   .indent = -1};
        jscan *j = &y.j;
        size_t nodes = s->n_nodes, roots = s->n_roots;
        dp_error *err = ps->err;
        ps->err = NULL; /* every failure gives up: no message is wanted */
        int r = ylines(&y, false);
        while (r == 0 && (!y.at_end || y.marker)) {
                if (y.marker) {
                        *ret_off = (size_t)(j->p - buf);
                        *ret_line = j->line;
                        y.at_end = y.marker = false;
                        j->p += 3;
                        if ((r = yeol(&y)) != 0) break;
                }
                if (y.at_end) { /* "---" and nothing: libyaml's empty scalar (dropped as null) */
                        mark m = jmark(j);
                        r = jbuild(j, doc_add_scalar(ps, "", 0, true, &m));
                } else if ((r = yblock(&y)) == 0 && !y.at_end) {
                        r = JSON_BAIL; /* more after the document's node */
                }
                if (r) break;
                ps->err = err;
                doc_document_end(ps);
                ps->err = NULL;
                nodes = s->n_nodes;
                roots = s->n_roots;
        }
        free(j->tmp);
        ps->err = err;
        if (r == 0) return 0;
        /* undo the document it gave up in */
        for (size_t i = roots; i < s->n_roots; i++)
                free(s->sources[i]);
        s->n_roots = roots;
        s->n_nodes = nodes;
        ps->depth = 0;
        ps->n_kids = 0;
        return r;
}
