/* SPDX-License-Identifier: Apache-2.0
 *
 * cel-internal.h — what the CEL files share: arena, values, types, AST,
 * environment, and the function table. Not a public contract: cel.h is.
 *
 * Memory: everything a compile produces (AST, types, constants) lives in the
 * program's arena; everything an evaluation produces lives in a per-call
 * arena freed at the end of dp_cel_eval(). Values therefore carry plain
 * pointers and are never reference counted.
 */
#pragma once

#include <stdarg.h>
#include <stdio.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "cel/cel.h"
#include "model/quantity.h"

/* Nesting of the parsed tree. The parser's own recursion is capped at
 * DP_CEL_MAX_DEPTH (cel-go's default MaxRecursionDepth, which Kubernetes
 * keeps); chains of + - * / %, of relations and of . [] and receiver calls
 * nest in the tree without parser recursion (&& and || chains are balanced,
 * runs of ! or - cancel in pairs, as cel-go builds them). Checking, planning,
 * estimating and evaluating recurse on the tree, so this bounds their stack.
 * cel-go has no tree cap for parsed source; it caps each recursive grammar
 * rule (expr, relation, calc, member) at 250 on its own, so 4 x 250 holds any
 * nesting of those chains it admits; deeper trees are refused here with
 * "expression nesting exceeds 1000 levels" (deep macro nesting reaches the
 * parser limit first). The walks keep messages and overload resolution in
 * CEL_NOINLINE helpers off the recursion, so a tree 1000 deep compiles and
 * evaluates within 2 MiB of stack in the ASan build (RelWithDebInfo) and
 * within 4 MiB with ASan at -O0 (6 to 8 MiB before the helpers were split
 * out); tests/cel/test-depth.c checks it on a 4 MiB thread, half the usual
 * 8 MiB main stack. */
#define DP_CEL_MAX_AST_DEPTH 1000

/* For helpers of the tree walks that run after the recursion into the
 * children (messages, overload resolution): inlined, their locals would add
 * to the frame of every recursion level. */
#define CEL_NOINLINE __attribute__((noinline))

/* ---- arena ---- */
typedef struct cel_arena_chunk cel_arena_chunk;
typedef struct cel_arena {
        cel_arena_chunk *head;
        size_t total;  /* bytes handed out so far */
        size_t limit;  /* 0: unlimited */
        bool failed;   /* an allocation failed or the limit was hit */
} cel_arena;

void *cel_alloc(cel_arena *a, size_t n); /* zeroed; NULL on failure (sticky failed) */
char *cel_strndup(cel_arena *a, const char *s, size_t n);
void cel_arena_done(cel_arena *a);

/* ---- types (checker) ---- */
typedef enum {
        CT_DYN = 0,
        CT_ERROR,
        CT_NULL,
        CT_BOOL,
        CT_INT,
        CT_UINT,
        CT_DOUBLE,
        CT_STRING,
        CT_BYTES,
        CT_LIST,
        CT_MAP,
        CT_TYPE,
        CT_OPTIONAL,
        CT_QUANTITY,
        CT_SEMVER,
        CT_IP,
        CT_CIDR,
        CT_URL,
        CT_DEVICE,
        CT_PARAM,    /* type parameter, name in `name` */
        CT_MESSAGE,  /* a protobuf message type seen only by name (not supported at runtime) */
        CT_TIMESTAMP,
        CT_DURATION,
} cel_type_kind;

typedef struct cel_type {
        cel_type_kind kind;
        const struct cel_type *p[2]; /* list elem; map key/value; optional/type param */
        const char *name;            /* CT_PARAM, CT_MESSAGE */
} cel_type;

/* cel_t_any: google.protobuf.Any, the type of DRA attribute values without
 * DRAListTypeAttributes; a CT_DYN to every rule but the ones upstream applies
 * to Any alone (result type, comprehension range, literals, format). */
extern const cel_type cel_t_dyn, cel_t_any, cel_t_error, cel_t_null, cel_t_bool, cel_t_int, cel_t_uint, cel_t_double,
        cel_t_string, cel_t_bytes, cel_t_quantity, cel_t_semver, cel_t_ip, cel_t_cidr, cel_t_url, cel_t_device,
        cel_t_timestamp, cel_t_duration;
void cel_type_format(dp_strbuf *sb, const cel_type *t);

/* ---- values ---- */
typedef enum {
        CV_ERROR = 0,
        CV_NULL,
        CV_BOOL,
        CV_INT,
        CV_UINT,
        CV_DOUBLE,
        CV_STRING,
        CV_BYTES,
        CV_LIST,
        CV_MAP,
        CV_TYPE,
        CV_OPTIONAL,
        CV_QUANTITY,
        CV_SEMVER,
        CV_IP,
        CV_CIDR,
        CV_URL,
        CV_DEVICE,
        CV_UNKNOWN,
} cel_value_kind;

typedef struct cel_value cel_value;
typedef struct cel_list cel_list;
typedef struct cel_map cel_map;

typedef struct cel_semver {
        uint64_t major, minor, patch;
        const char *pre;   /* NULL or dotted prerelease identifiers */
        const char *build; /* NULL or build metadata */
} cel_semver;

typedef struct cel_ip {
        uint8_t family; /* 4 or 6 */
        uint8_t addr[16];
        uint8_t prefix;  /* CIDR only */
        bool mapped4;    /* IPv4-mapped IPv6 form as written */
} cel_ip;

struct cel_value {
        uint8_t kind;
        union {
                bool b;
                int64_t i;
                uint64_t u;
                double d;
                struct {
                        const char *p; /* not NUL-terminated in general */
                        size_t n;
                } s;
                const cel_list *l;
                const cel_map *m;
                const cel_type *t;         /* CV_TYPE */
                const cel_value *opt;      /* CV_OPTIONAL: NULL = none */
                const char *err;           /* CV_ERROR message */
                const dp_quantity *q;
                const cel_semver *sv;
                const cel_ip *ip;          /* CV_IP, CV_CIDR */
                const char *url;           /* CV_URL: the URL text */
                const dp_cel_device *dev;
        };
};

typedef struct cel_list_store {
        cel_value *items;
        size_t used, cap;
} cel_list_store;

struct cel_list {
        cel_list_store *store;
        size_t n;
};

typedef struct cel_map_store {
        cel_value *keys, *vals;
        size_t used, cap;
        uint32_t *index;  /* open addressing over keys (entry+1), built when big */
        size_t n_index;
        size_t indexed;   /* entries covered by index */
} cel_map_store;

struct cel_map {
        cel_map_store *store;
        size_t n;
        /* device.attributes / device.capacity: a missing key gives an empty map */
        bool lenient;
};

static inline cel_value cel_bool(bool b) { return (cel_value){.kind = CV_BOOL, .b = b}; }
static inline cel_value cel_int(int64_t i) { return (cel_value){.kind = CV_INT, .i = i}; }
static inline cel_value cel_uint(uint64_t u) { return (cel_value){.kind = CV_UINT, .u = u}; }
static inline cel_value cel_double(double d) { return (cel_value){.kind = CV_DOUBLE, .d = d}; }
static inline cel_value cel_null(void) { return (cel_value){.kind = CV_NULL}; }
static inline cel_value cel_str(const char *p, size_t n) {
        return (cel_value){.kind = CV_STRING, .s = {p, n}};
}
static inline cel_value cel_bytes(const char *p, size_t n) {
        return (cel_value){.kind = CV_BYTES, .s = {p, n}};
}
static inline cel_value cel_typev(const cel_type *t) { return (cel_value){.kind = CV_TYPE, .t = t}; }
static inline bool cel_is_err(cel_value v) { return v.kind == CV_ERROR; }

/* ---- evaluation context ---- */
typedef struct cel_activation cel_activation;
typedef struct cel_ctx {
        cel_arena *arena;
        uint64_t cost, cost_limit;
        int fatal; /* negative errno: cost exceeded / OOM; stops everything */
        const char *fatal_msg;
        const cel_activation *vars;
        /* device.attributes / device.capacity, built once per evaluation */
        cel_value dev_attrs, dev_caps;
        /* the call being dispatched had its constant pattern compiled already */
        const struct cel_regex *call_regex;
        /* DRAListTypeAttributes: without it a list-valued attribute is an error */
        bool list_types;
} cel_ctx;

cel_value cel_error(cel_ctx *c, const char *fmt, ...) _printf_(2, 3);
cel_value cel_no_overload(cel_ctx *c, const char *fn);
cel_value cel_oom(cel_ctx *c);

/* lists and maps */
cel_list *cel_list_new(cel_ctx *c, size_t cap);
int cel_list_push(cel_ctx *c, cel_list *l, cel_value v); /* only on a list being built */
static inline size_t cel_list_size(const cel_list *l) { return l ? l->n : 0; }
static inline cel_value cel_list_at(const cel_list *l, size_t i) { return l->store->items[i]; }
cel_value cel_list_value(const cel_list *l);
cel_value cel_list_concat(cel_ctx *c, const cel_list *a, const cel_list *b);

cel_map *cel_map_new(cel_ctx *c, size_t cap);
/* 0, -EEXIST (duplicate key), -ENOMEM */
int cel_map_put(cel_ctx *c, cel_map *m, cel_value k, cel_value v);
/* put, or replace the value of an equal key (map literals, as upstream) */
int cel_map_set(cel_ctx *c, cel_map *m, cel_value k, cel_value v);

/* value.c: NaN, or inf / neg_inf for an infinity, put on sb (true); false
 * (nothing put) for a finite d. */
bool cel_put_nonfinite(dp_strbuf *sb, double d, const char *inf, const char *neg_inf);
/* strings.c: the one-letter escapes of string literals (\a \b \f \n \r \t
 * \v), both ways; 0 for anything else. */
char cel_escape_byte(char letter);
char cel_escape_letter(char byte);
/* A format() clause: its length in the format string, precision (-1: none)
 * and verb; msg: the parse error as upstream words it. */
typedef struct cel_clause {
        size_t len;
        int prec;
        char verb;
        const char *msg;
} cel_clause;
/* strings.c: the format() clause at p[0] == '%' (not "%%", p + 1 < end)
 * into *ret: 0, or -1 with ret->msg. Shared by the evaluator and the
 * checker's validation. */
int cel_format_clause(const char *p, const char *end, cel_clause *ret);
/* NULL when missing. Numeric keys compare by value across int/uint/double. */
const cel_value *cel_map_get(const cel_map *m, cel_value k);
static inline size_t cel_map_size(const cel_map *m) { return m ? m->n : 0; }
cel_value cel_map_value(const cel_map *m);

/* equality: 1 equal, 0 not equal, <0 error (no overload). cel_value_equal
 * is cel-go's types.Equal (`==`), cel_value_equal_lhs its lhs.Equal (`in`,
 * distinct, indexOf): see value.c. */
int cel_value_equal(cel_value a, cel_value b);
int cel_value_equal_lhs(cel_value a, cel_value b);
/* k8s.c: a Quantity made by add()/sub() (a pointer upstream) */
bool cel_quantity_is_ptr(cel_value v);
/* ordering of comparable values: -1/0/1, -2 not comparable */
int cel_value_compare(cel_value a, cel_value b);
const cel_type *cel_value_type(cel_ctx *c, cel_value v);
const char *cel_kind_name(uint8_t kind);
/* Debug/CLI rendering of a value (CEL-ish literal syntax). */
void cel_value_format(dp_strbuf *sb, cel_value v);
/* string conversion as string(x) does; error value on failure */
cel_value cel_value_to_string(cel_ctx *c, cel_value v);
size_t cel_utf8_len(const char *s, size_t n);
/* Byte offset of code point index cp (cp <= length). */
size_t cel_utf8_offset(const char *s, size_t n, size_t cp);

/* ---- AST ---- */
typedef enum {
        CE_CONST = 0,
        CE_IDENT,
        CE_SELECT,
        CE_CALL,
        CE_LIST,
        CE_MAP,
        CE_STRUCT,
        CE_COMPREHENSION,
} cel_expr_kind;

typedef struct cel_expr cel_expr;
typedef struct cel_entry {
        cel_expr *key; /* map key, or NULL for struct fields */
        const char *field;
        cel_expr *value;
        bool optional;
} cel_entry;

struct cel_overload;
struct cel_expr {
        cel_expr_kind kind;
        uint32_t id;
        uint32_t pos; /* byte offset in the source */
        const cel_type *type;
        union {
                cel_value c; /* CE_CONST */
                struct {
                        const char *name;
                        int slot; /* comprehension variable depth, -1 global */
                } ident;
                struct {
                        cel_expr *operand;
                        const char *field;
                        bool test_only, optional;
                } sel;
                struct {
                        cel_expr *target; /* receiver or NULL */
                        const char *fn;
                        cel_expr **args;
                        size_t nargs;
                        const struct cel_overload **cands; /* candidates at runtime */
                        size_t ncands;
                        const struct cel_regex *regex; /* constant pattern, compiled once */
                        uint8_t op;                    /* CEL_OP_*: operators the evaluator handles itself */
                } call;
                struct {
                        cel_expr **elems;
                        bool *optional; /* per element, NULL if none */
                        size_t n;
                } list;
                struct {
                        const char *type_name;
                        cel_entry *entries;
                        size_t n;
                } map; /* CE_MAP and CE_STRUCT */
                struct {
                        const char *iter_var, *iter_var2, *accu_var;
                        cel_expr *range, *accu_init, *cond, *step, *result;
                } comp;
        };
};

enum {
        CEL_OP_CALL = 0, /* dispatched through the overload table */
        CEL_OP_AND,
        CEL_OP_OR,
        CEL_OP_COND,
        CEL_OP_NOT_STRICTLY_FALSE,
        CEL_OP_INDEX,
        CEL_OP_OPT_INDEX,
        CEL_OP_EQ,
        CEL_OP_NE,
        CEL_OP_IN,
        CEL_OP_MAP_INSERT,
};

/* ---- function table ---- */
typedef cel_value (*cel_fn)(cel_ctx *c, const cel_value *args, size_t nargs);
typedef enum {
        COST_ONE = 0,   /* 1 */
        COST_STR0,      /* ceil(0.1 * size(arg0)) + 1? see eval.c */
        COST_STRSUM,    /* ceil(0.1 * (size(a0)+size(a1))) */
        COST_STRPROD,   /* contains: ceil(0.1*a0)*ceil(0.1*a1) */
        COST_REGEX,     /* matches/find: ceil(0.1*(1+a0)) * ceil(0.25*a1) */
        COST_LIST0,     /* linear in the size of arg 0 (list) */
        COST_LIST1,     /* linear in the size of arg 1 (list, for `in`) */
        COST_EQ,        /* equality: min size of operands * 0.1 for strings */
        COST_INT0,      /* the value of int argument 0 (lists.range builds that many) */
        COST_STR0X2,    /* ceil(0.2 * size(arg0)): split traverses and builds */
        /* cel-go lists extension v3 trackers: 1 (call) + 10 (list creation) plus */
        COST_SELFCMP0,  /* 2 * n^2 for list arg 0 (2.1 for strings/bytes): sort, distinct */
        COST_SELFCMP1,  /* the same for list arg 1: sortBy's keys */
        COST_LISTOUT,   /* the result's size: reverse, slice, lists.range */
        COST_FLATTEN,   /* depth * size(arg0) */
} cel_cost_kind;

typedef struct cel_overload {
        const char *fn;
        const char *id;
        bool member;
        uint8_t nargs;
        const char *sig; /* "string,string->bool", type params A B */
        cel_fn impl;
        cel_cost_kind cost;
        uint32_t lib;    /* CEL_LIB_* bit the overload belongs to */
} cel_overload;

enum {
        CEL_LIB_STD = 1u << 0,
        CEL_LIB_STRINGS = 1u << 1,    /* ext.Strings */
        CEL_LIB_SETS = 1u << 2,       /* ext.Sets */
        CEL_LIB_LISTS_EXT = 1u << 3,  /* ext.Lists */
        CEL_LIB_K8S = 1u << 4,        /* k8s lists, regex, quantity, semver, url, ip, cidr */
        CEL_LIB_MATH = 1u << 5,
        CEL_LIB_INCLUDES = 1u << 6,   /* DRA list-type attributes */
        CEL_LIB_OPTIONAL = 1u << 7,
        CEL_LIB_STRINGS_V3 = 1u << 8, /* string reverse (not in k8s) */
};

/* Each library file provides a NULL-terminated slice of the table. */
extern const cel_overload cel_std_overloads[];
extern const cel_overload cel_strings_overloads[];
extern const cel_overload cel_lists_overloads[];
extern const cel_overload cel_k8s_overloads[];
extern const cel_overload cel_net_overloads[];

/* ---- environment ---- */
typedef struct cel_var {
        const char *name;
        const cel_type *type;
} cel_var;

typedef struct cel_env {
        const cel_var *vars;
        size_t n_vars;
        uint32_t libs;
        bool homogeneous_literals;
        bool cross_type_numeric; /* checker accepts 1 < 2.0 */
        bool device_multi_alloc; /* device.allowMultipleAllocations declared */
        bool list_type_attributes; /* attribute values are dyn, not any */
        const char *container;
} cel_env;

typedef struct cel_regex cel_regex;
typedef struct cel_ast {
        cel_arena arena;
        cel_expr *root;
        const char *src;
        size_t src_len;
        uint32_t next_id;
        cel_regex **regexes; /* owned: constant patterns compiled at check time */
        size_t n_regexes, cap_regexes;
} cel_ast;

/* parse.c: fills ast (arena owned by ast). -EINVAL with "ERROR: <input>:L:C: msg" lines. */
int cel_parse(const char *src, size_t len, bool macros, cel_ast *ast, dp_error *err);
void cel_ast_done(cel_ast *ast);
/* Line/column (1-based, columns in code points) of a byte offset. */
void cel_pos(const char *src, size_t len, uint32_t pos, unsigned *line, unsigned *col);
/* Append one parse or check error to msgs as cel-go words it: "ERROR:
 * <input>:L:C: MESSAGE", then the source line with a caret under the column. */
void cel_message_vadd(dp_strbuf *msgs, const char *src, size_t len, uint32_t pos, const char *fmt, va_list ap)
        _printf_(5, 0);
/* Resolve call candidates for runtime dispatch (used with or without check). */
int cel_plan(cel_ast *ast, const cel_env *env, dp_error *err);

/* check.c: annotate types; -EINVAL with errors; *ret_type the result type */
int cel_check(cel_ast *ast, const cel_env *env, const cel_type **ret_type, dp_error *err);
/* parse a signature type text (for the checker) */
const cel_type *cel_sig_type(cel_arena *a, const char **p);

/* eval.c */
struct cel_activation {
        const char *name;
        cel_value value;
        const cel_activation *next;
};
cel_value cel_eval(cel_ctx *c, const cel_ast *ast);
/* Estimated cost upper bound. */
uint64_t cel_estimate(const cel_ast *ast);

/* helpers shared by library files */
cel_value cel_call_overload(cel_ctx *c, const char *fn, const cel_value *args, size_t n);
double cel_ceil01(size_t n);
/* ceil() for the cost arithmetic, without libm: ceil is the only libm
 * function devplane called, and libm mapped into every process (the agent
 * included) costs about 300 KiB resident. Exact: a double of magnitude
 * 2^52 or more is already an integer; NaN passes through. */
static inline double cel_ceil(double x) {
        if (!(x > -4503599627370496.0 && x < 4503599627370496.0)) return x;
        double t = (double)(int64_t)x; /* towards zero */
        return t < x ? t + 1.0 : t;
}
bool cel_value_truthy_bool(cel_value v);

/* regex.c: RE2 syntax check + PCRE2 matching with limits. A compiled
 * regex is read-only while matching (match data is per call), so a
 * program's precompiled patterns serve concurrent evaluations. */
int cel_regex_compile(const char *pat, size_t n, cel_regex **ret, const char **ret_err, cel_arena *a);
/* 1 match (ovector start/end of group 0 and group 1 filled), 0 none, <0 error */
int cel_regex_search(const cel_regex *re, const char *s, size_t n, size_t start, size_t *ret_so, size_t *ret_eo,
                     size_t *ret_g1so, size_t *ret_g1eo, bool *ret_has_group);
void cel_regex_free(cel_regex *re);
/* Convenience used by matches(): error value on a bad pattern */
cel_value cel_regex_matches(cel_ctx *c, cel_value s, cel_value pat);
/* c->call_regex when set, else compile pat (caller frees *ret_owned). On a
 * bad pattern (or no memory) *ret_err is the value the call evaluates to. */
int cel_regex_get(cel_ctx *c, cel_value pat, const cel_regex **ret, cel_regex **ret_owned, cel_value *ret_err);

/* semver */
int cel_semver_parse(cel_arena *a, const char *s, size_t n, bool normalize, cel_semver *ret);
int cel_semver_cmp(const cel_semver *a, const cel_semver *b);
