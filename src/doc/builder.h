/* SPDX-License-Identifier: Apache-2.0
 *
 * builder.h — one way to build a document tree for our own files and
 * answers (state files, CDI specs, -o yaml|json, reports), and one way to
 * read one back strictly.
 *
 * dp_doc_builder: allocation failure is sticky. Every call after the first
 * failure does nothing and returns NULL, so a whole tree is built without a
 * check per node and the caller looks at b->r once at the end:
 *
 *     dp_doc_builder b = DP_DOC_BUILDER_INIT(set);
 *     dp_doc_node *m = dp_doc_b_map(&b);
 *     dp_doc_b_put_str(&b, m, "uid", c->uid);
 *     dp_doc_b_put_strv(&b, m, "requests", c->requests, c->n_requests);
 *     if (b.r < 0) return b.r;   (-ENOMEM)
 *
 * Strings and keys are copied into the set; a builder on scratch memory
 * (dp_doc_scratch) builds the same trees without copying them.
 *
 * dp_doc_decoder: strict field readers for our own files. Each failure is
 * one message "<source>: <what> corrupt: <field path>: <rule> (line N)"
 * and -EBADMSG (-E2BIG past a cap, -ENOMEM); the path names the field as
 * the file spells it ("data.claims[3].devices[0].pool").
 */
#pragma once

#include "doc/doc.h"

/* Scratch memory for trees built and dropped one after another (the
 * allocator's answer for each claim): nodes, arrays and formatted numbers
 * go to blocks reused tree after tree, and strings and keys are not copied
 * (they point into the caller's objects and literals, which must outlive
 * the tree). A tree built in scratch memory is valid until the next
 * dp_doc_scratch_reset(); emitters cannot tell it from one in a set. */
typedef struct dp_doc_scratch dp_doc_scratch;
dp_doc_scratch *dp_doc_scratch_new(void); /* NULL on OOM */
dp_doc_scratch *dp_doc_scratch_free(dp_doc_scratch *x);
DEFINE_FREEP(dp_doc_scratch, dp_doc_scratch_free)
/* Forget the last tree (and the documents it adopted); blocks are kept. */
void dp_doc_scratch_reset(dp_doc_scratch *x);

typedef struct dp_doc_builder {
        dp_doc_set *set;         /* build in a set (strings copied) ... */
        dp_doc_scratch *scratch; /* ... or, when set is NULL, in scratch memory */
        int r;                   /* 0, or -ENOMEM once anything failed */
} dp_doc_builder;

#define DP_DOC_BUILDER_INIT(s) ((dp_doc_builder){.set = (s)})
#define DP_DOC_BUILDER_SCRATCH(x) ((dp_doc_builder){.scratch = (x)})

/* Record a failure (n == NULL) and hand n on. */
static inline dp_doc_node *dp_doc_b_check(dp_doc_builder *b, dp_doc_node *n) {
        if (!n) b->r = -ENOMEM;
        return n;
}

/* New nodes (NULL once the builder failed). */
dp_doc_node *dp_doc_b_map(dp_doc_builder *b);
dp_doc_node *dp_doc_b_seq(dp_doc_builder *b);
/* A string: copied into a set, pointed to in scratch memory. */
dp_doc_node *dp_doc_b_str(dp_doc_builder *b, const char *v);
/* Text made by the caller (a number, a quantity): copied either way.
 * `plain`: printed as it is (a number), else as a string. */
dp_doc_node *dp_doc_b_text(dp_doc_builder *b, const char *text, bool plain);
dp_doc_node *dp_doc_b_int(dp_doc_builder *b, int64_t v);
dp_doc_node *dp_doc_b_uint(dp_doc_builder *b, uint64_t v);
dp_doc_node *dp_doc_b_bool(dp_doc_builder *b, bool v);
/* The root of a parsed document `doc` (which the builder takes, on failure
 * too) as a node of the tree: copied into the set (doc freed), or in
 * scratch memory the root itself, doc kept until the scratch is reset. */
dp_doc_node *dp_doc_b_adopt(dp_doc_builder *b, dp_doc_set *doc, const dp_doc_node *root);
/* map[key] = v, seq += v. A NULL map, seq or v is a failure (an earlier
 * one). The key is copied into a set, pointed to in scratch memory. */
void dp_doc_b_put(dp_doc_builder *b, dp_doc_node *map, const char *key, dp_doc_node *v);
void dp_doc_b_push(dp_doc_builder *b, dp_doc_node *seq, dp_doc_node *v);
/* Shorthands. put_str leaves the key out when v is NULL (optional fields;
 * pass `v ? v : ""` for a required one). put_strv always writes the list,
 * [] when n is 0. */
void dp_doc_b_put_str(dp_doc_builder *b, dp_doc_node *map, const char *key, const char *v);
void dp_doc_b_put_int(dp_doc_builder *b, dp_doc_node *map, const char *key, int64_t v);
void dp_doc_b_put_uint(dp_doc_builder *b, dp_doc_node *map, const char *key, uint64_t v);
void dp_doc_b_put_bool(dp_doc_builder *b, dp_doc_node *map, const char *key, bool v);
void dp_doc_b_put_strv(dp_doc_builder *b, dp_doc_node *map, const char *key, char *const *v, size_t n);

typedef struct dp_doc_decoder {
        const char *source; /* the file, in messages */
        const char *what;   /* "checkpoint", "node DRA state" */
        dp_error *err;
} dp_doc_decoder;

/* -EBADMSG: "<source>: <what> corrupt: <path>: <rule> (line of n)". */
int dp_doc_dec_bad(const dp_doc_decoder *d, const dp_doc_node *n, const char *path, const char *rule);
/* -ENOMEM: "<source>: out of memory". */
int dp_doc_dec_oom(const dp_doc_decoder *d);
/* m is a map and every key of it is one of keys (NULL-terminated). */
int dp_doc_dec_only_keys(const dp_doc_decoder *d, const dp_doc_node *m, const char *path, const char *const *keys);

#define DP_DOC_DEC_OPTIONAL 1u /* absent: 0 and *ret untouched */
#define DP_DOC_DEC_NONEMPTY 2u /* "" is refused */
/* m[key], a string without NULs, copied to *ret. Absent is refused unless
 * DP_DOC_DEC_OPTIONAL. */
int dp_doc_dec_str(const dp_doc_decoder *d, const dp_doc_node *m, const char *key, unsigned flags, const char *path,
                   char **ret);
/* m[key], required, a boolean. */
int dp_doc_dec_bool(const dp_doc_decoder *d, const dp_doc_node *m, const char *key, const char *path, bool *ret);
/* m[key], required, a list of at most max entries (-E2BIG past it). */
int dp_doc_dec_seq(const dp_doc_decoder *d, const dp_doc_node *m, const char *key, size_t max, const char *path,
                   const dp_doc_node **ret);
/* m[key], required, a list of at most max strings: a NULL-terminated copy
 * in *ret, its length in *ret_n (both set on failure too, for the caller's
 * one cleanup). */
int dp_doc_dec_strv(const dp_doc_decoder *d, const dp_doc_node *m, const char *key, size_t max, const char *path,
                    char ***ret, size_t *ret_n);
