/* SPDX-License-Identifier: Apache-2.0
 *
 * doc-internal.h — what the parts of the document tree share, for them
 * only: doc.c (the set, building, access, emitting), doc-parse.c (the tree
 * builder, libyaml and the parse entry points) and doc-read.c (the JSON and
 * YAML readers that build the tree libyaml's events would build).
 */
#pragma once

#include "doc/doc.h"

/* the set's node and string blocks: see doc.c */
struct dp_doc_set {
        dp_doc_node **node_blocks; /* DOC_NODE_BLOCK nodes each, the last one partly used */
        size_t n_node_blocks, cap_node_blocks;
        size_t n_nodes;
        size_t n_dropped;  /* nodes of documents already handed out and dropped (dp_doc_parse_each) */
        char **str_blocks; /* string blocks; long strings get a block of their own */
        size_t n_str_blocks, cap_str_blocks;
        char *str_free; /* room left in the current string block */
        size_t str_left;
        dp_doc_node **roots;
        char **sources;
        size_t n_roots, cap_roots, cap_sources;
};

static inline bool doc_nodes_full(const dp_doc_set *s) { return s->n_nodes + s->n_dropped >= DP_DOC_MAX_NODES; }

dp_doc_node *doc_node_new(dp_doc_set *s, dp_doc_type t);
void *doc_arena_alloc(dp_doc_set *s, size_t size);
/* Drop every node, string and root, keeping the first node block for the
 * next document (dp_doc_parse_each); the node count limit counts on. */
void doc_set_drop_all(dp_doc_set *s);

/* ---- the tree builder (doc-parse.c), fed by libyaml's events or by a reader ---- */

typedef struct {
        dp_doc_set *set;
        const char *name;
        dp_error *err;
        dp_doc_node *stack[DP_DOC_MAX_DEPTH + 1];
        size_t base[DP_DOC_MAX_DEPTH + 1];             /* where each open collection's children start in kids */
        const char *pending_key[DP_DOC_MAX_DEPTH + 1]; /* map: key waiting for a value */
        dp_doc_node *pending_key_node[DP_DOC_MAX_DEPTH + 1];
        /* map: its "<<" merge key (the key node; the value once it came) and
         * how many of its own pairs came before it (doc-parse.c) */
        dp_doc_node *merge_key[DP_DOC_MAX_DEPTH + 1], *merge_value[DP_DOC_MAX_DEPTH + 1];
        size_t merge_at[DP_DOC_MAX_DEPTH + 1];
        size_t depth;
        /* the children of every open collection, innermost last (a
         * sequence's items use .value); copied out when the collection ends */
        dp_doc_pair *kids;
        size_t n_kids, cap_kids;
        /* dp_doc_parse_each: each document goes to fn as it ends */
        dp_doc_each_fn fn;
        void *userdata;
        size_t n_handed; /* non-empty documents handed to fn */
        int fn_r;        /* the first failure of fn */
        /* libyaml reads from a document the YAML reader gave up in: lines
         * before it, added to libyaml's marks */
        size_t line_off;
        /* anchors and aliases (libyaml only; doc-parse.c): the anchored
         * nodes of the document so far, what the document would be written
         * out in full, and how deep */
        struct doc_anchor *anchors;
        size_t n_anchors, cap_anchors;
        size_t expanded; /* nodes of the input with every alias written out */
        size_t open_expanded[DP_DOC_MAX_DEPTH + 1];
        char *open_anchor[DP_DOC_MAX_DEPTH + 1];
        size_t peak[DP_DOC_MAX_DEPTH + 1]; /* deepest level under each open collection */
        dp_doc_node *last;                /* the node attached last */
} parse_state;

typedef struct {
        size_t line, column; /* 0-based, as libyaml counts */
} mark;

int doc_open_collection(parse_state *ps, dp_doc_type t, const mark *m);
int doc_close_collection(parse_state *ps);
int doc_add_scalar(parse_state *ps, const char *str, size_t len, bool plain, const mark *m);
void doc_document_end(parse_state *ps);

/* ---- the readers (doc-read.c) ---- */

/* a reader gave up: read the input (or the document) with libyaml */
#define JSON_BAIL 1

/* 0: the JSON document is in the set (and handed to fn); JSON_BAIL: nothing
 * was kept; -ENOMEM. */
int doc_parse_json(parse_state *ps, const char *buf, size_t len);
/* Whether libyaml's reader takes every character of the input and none of
 * them is one the YAML reader does not know. */
bool doc_yprescan(const char *buf, size_t len);
/* The documents of buf from offset start (line `line`): see doc-read.c. */
int doc_parse_yaml_fast(parse_state *ps, const char *buf, size_t len, size_t start, size_t line, size_t *ret_off,
                        size_t *ret_line);
