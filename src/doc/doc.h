/* SPDX-License-Identifier: Apache-2.0
 *
 * doc.h — a YAML/JSON document tree, the common currency of every devplane
 * input (Kubernetes objects, profiles, config, manifests, checkpoints) and
 * every structured output (-o yaml|json, CDI specs, checkpoints).
 *
 * Parsing: libyaml events -> dp_doc_node trees, one per document of a
 * multi-document stream. JSON is read by the same parser; a JSON reader of
 * our own takes a JSON input faster, building the same tree. Bulk loads
 * (the model's files: dp_doc_parse_bulk) also have a block-YAML reader of
 * our own; everything else (every daemon's input) reads YAML with libyaml
 * alone (see dp_doc_parse_libyaml). Every node keeps
 * its line and column (1-based) so decoders can say where a bad field is.
 * Limits (named after what they protect): input size DP_DOC_MAX_INPUT,
 * nesting depth DP_DOC_MAX_DEPTH, node count DP_DOC_MAX_NODES. YAML anchors
 * and aliases are taken, as kubectl takes them: an alias shares the anchored
 * node, and an input that would be more than DP_DOC_MAX_NODES nodes (or
 * DP_DOC_MAX_DEPTH levels) with its aliases written out is refused (the
 * billion-laughs cap, doc-parse.c); duplicate map keys are refused as the
 * API server does.
 *
 * Ownership: every node belongs to one dp_doc_set, freed all at once.
 * Building: the dp_doc_new_* functions allocate nodes in a set; emitters
 * print a tree as JSON (compact or indented) or YAML, deterministically.
 */
#pragma once

#include <stdio.h>

#include "base/error.h"
#include "base/strbuf.h"

#define DP_DOC_MAX_INPUT (64u << 20)
#define DP_DOC_MAX_DEPTH 100
#define DP_DOC_MAX_NODES (4u << 20)

typedef enum { DP_DOC_SCALAR, DP_DOC_MAP, DP_DOC_SEQ } dp_doc_type;

/* How a scalar resolves (YAML 1.2 core schema for plain scalars; quoted
 * scalars are always strings). */
typedef enum { DP_DOC_NULL, DP_DOC_BOOL, DP_DOC_INT, DP_DOC_FLOAT, DP_DOC_STR } dp_doc_scalar_kind;

typedef struct dp_doc_node dp_doc_node;
typedef struct dp_doc_pair {
        const char *key; /* owned by the set */
        dp_doc_node *key_node;
        dp_doc_node *value;
} dp_doc_pair;

struct dp_doc_node {
        dp_doc_type type;
        uint32_t line, col;
        /* DP_DOC_SCALAR */
        char *str;   /* NUL-terminated (may contain NULs before len) */
        size_t len;
        bool plain;  /* unquoted scalar: may resolve to null/bool/number */
        /* DP_DOC_MAP */
        dp_doc_pair *pairs;
        /* DP_DOC_SEQ */
        dp_doc_node **items;
        size_t n;    /* pairs or items */
        size_t cap;  /* allocated pairs or items; 0 when the array lives in the set (parsed) */
};

typedef struct dp_doc_set dp_doc_set;

dp_doc_set *dp_doc_set_new(void);
dp_doc_set *dp_doc_set_free(dp_doc_set *s);
DEFINE_FREEP(dp_doc_set, dp_doc_set_free)
/* Drop every node, string and document of the set, keeping a block of each
 * for what is built next (one set for many small trees in a row). */
void dp_doc_set_clear(dp_doc_set *s);

/* Parse a YAML or JSON stream. Documents are appended to the set (empty
 * documents are skipped). `name` is used in error messages ("f.yaml:3:7: ...").
 * Returns 0, -EINVAL (syntax, with err), -E2BIG (a limit), -ENOMEM. */
int dp_doc_parse(dp_doc_set *s, const char *buf, size_t len, const char *name, dp_error *err);
/* Parse a stream and hand each non-empty document's root to fn as soon as
 * the document ends (index counts the non-empty documents from 0, source is
 * `name`); the document's nodes are dropped when fn returns, so a long
 * stream never holds more than one document's tree. After fn fails, no
 * later document is handed to it, but the rest is still parsed: a syntax
 * error or limit anywhere in the input is what is returned (as dp_doc_parse
 * would report it), else fn's failure (with the message fn left in err). */
typedef int (*dp_doc_each_fn)(dp_doc_node *root, const char *source, size_t index, void *userdata, dp_error *err);
int dp_doc_parse_each(const char *buf, size_t len, const char *name, dp_doc_each_fn fn, void *userdata, dp_error *err);
/* The readers of our own build the very tree libyaml's events would (same
 * nodes, strings, plain flags, line and column of every node) without
 * libyaml: an input that is one JSON value (the first thing in it a '{' or
 * '[') is read by the JSON reader (every parse), and block-style YAML (what
 * kubectl -o yaml and people write: block mappings and sequences, one-line
 * flow collections, plain, quoted and block scalars, comments, "---") by
 * the YAML reader, in dp_doc_parse_bulk only. Each hands anything it is not
 * sure of to libyaml, errors included: the JSON reader the whole input, the
 * YAML reader the document it gave up in (libyaml reads from the start of
 * that document to the next "---", its marks and messages shifted by the
 * lines before, so they read as if libyaml had read it all; an error stops
 * both). What makes them give up is listed in doc-read.c ("JSON fast
 * path", "YAML fast path").
 *
 * dp_doc_parse_bulk() is dp_doc_parse_each() with the YAML reader too: for
 * the model's bulk loader (model/load.c: -f files of allocate, simulate,
 * explain, which may be cluster dumps of many megabytes; there it loads 4x
 * faster than libyaml, docs/benchmarks.md "The fast YAML path") and for
 * nothing else: daemons read small files and keep one YAML parser.
 * dp_doc_parse_libyaml() and dp_doc_parse_each_libyaml() are the parse
 * without either reader, for the tests and fuzzers that compare them. */
int dp_doc_parse_bulk(const char *buf, size_t len, const char *name, dp_doc_each_fn fn, void *userdata, dp_error *err);
int dp_doc_parse_libyaml(dp_doc_set *s, const char *buf, size_t len, const char *name, dp_error *err);
int dp_doc_parse_each_libyaml(const char *buf, size_t len, const char *name, dp_doc_each_fn fn, void *userdata,
                              dp_error *err);
/* For the tests: how much of buf the readers of their own take in a bulk
 * parse — len when they read it all, else the offset libyaml reads on from
 * (0: all of it). */
size_t dp_doc_fast_reach(const char *buf, size_t len);
/* Read a whole file (capped at DP_DOC_MAX_INPUT) and parse it. */
int dp_doc_parse_file(dp_doc_set *s, const char *path, dp_error *err);
size_t dp_doc_count(const dp_doc_set *s);
dp_doc_node *dp_doc_root(const dp_doc_set *s, size_t i);
/* The name given when document i was parsed. */
const char *dp_doc_source(const dp_doc_set *s, size_t i);

/* Access. All accept NULL nodes. */
dp_doc_node *dp_doc_get(const dp_doc_node *map, const char *key);
dp_doc_scalar_kind dp_doc_kind(const dp_doc_node *n); /* NULL node -> DP_DOC_NULL */
bool dp_doc_is_null(const dp_doc_node *n);
const char *dp_doc_type_name(const dp_doc_node *n); /* "string", "integer", "map", ... */
/* Typed reads: -EINVAL with a message ("expected integer, got map") if the
 * node has another type. */
int dp_doc_get_bool(const dp_doc_node *n, bool *ret, dp_error *err);
int dp_doc_get_int64(const dp_doc_node *n, int64_t *ret, dp_error *err);
/* Any non-null scalar resolving to a string; with `lenient`, plain numbers
 * and booleans are accepted as their text too. */
int dp_doc_get_str(const dp_doc_node *n, bool lenient, const char **ret, dp_error *err);

/* Building. Strings are copied. NULL on OOM. */
dp_doc_node *dp_doc_new_map(dp_doc_set *s);
dp_doc_node *dp_doc_new_seq(dp_doc_set *s);
dp_doc_node *dp_doc_new_str(dp_doc_set *s, const char *str);
dp_doc_node *dp_doc_new_strn(dp_doc_set *s, const char *str, size_t len);
dp_doc_node *dp_doc_new_int(dp_doc_set *s, int64_t v);
dp_doc_node *dp_doc_new_uint(dp_doc_set *s, uint64_t v);
dp_doc_node *dp_doc_new_bool(dp_doc_set *s, bool v);
dp_doc_node *dp_doc_new_null(dp_doc_set *s);
/* A plain scalar whose text is printed as is (numbers in canonical form). */
dp_doc_node *dp_doc_new_raw(dp_doc_set *s, const char *text);
/* Append; 0 or -ENOMEM. Keys are copied. Adding a NULL value is -ENOMEM
 * (so chained builders propagate allocation failure). */
int dp_doc_map_add(dp_doc_set *s, dp_doc_node *map, const char *key, dp_doc_node *value);
int dp_doc_seq_add(dp_doc_set *s, dp_doc_node *seq, dp_doc_node *item);
/* Add the root of a new document to the set. */
int dp_doc_add_root(dp_doc_set *s, dp_doc_node *root, const char *source);

typedef enum {
        DP_DOC_JSON_COMPACT = 0, /* no whitespace, Go encoding/json escaping */
        DP_DOC_JSON_PRETTY,      /* 2-space indent, kubectl -o json style */
        DP_DOC_YAML,             /* block style, kubectl -o yaml style */
} dp_doc_format;

/* Print one tree. Map keys keep their order (builders decide order). */
void dp_doc_emit(dp_strbuf *out, const dp_doc_node *n, dp_doc_format fmt);

/* Every node of a tree with its type, line, column, child count, plain flag
 * and exact bytes (keys length-prefixed): two trees are the same, marks
 * included, exactly when their dumps are. For tests and fuzzers comparing
 * the readers with libyaml, and for debugging. */
void dp_doc_dump(dp_strbuf *out, const dp_doc_node *n);

/* Item `i` of a sequence that is the value of a top-level map key, as
 * dp_doc_emit() of the whole map would write it (the caller writes the map's
 * other keys around it: JSON "{\n  \"items\": [" ... "\n  ],", YAML "items:\n").
 * Lets a long list be written one item at a time, without a tree of all. */
void dp_doc_emit_top_item(dp_strbuf *out, const dp_doc_node *item, size_t i, dp_doc_format fmt);
