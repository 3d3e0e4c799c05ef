/* SPDX-License-Identifier: Apache-2.0
 *
 * decode-internal.h — what the decoder files share: a context carrying the
 * current field path (for messages), typed getters that fill owned fields,
 * and list/map helpers. Every getter treats a null value as "unset" (as Go's
 * JSON decoding does) and fails with "<path>: <what> (line N)".
 */
#pragma once

#include "doc/doc.h"
#include "model/model.h"

typedef enum {
        DP_API_V1 = 0,   /* resource.k8s.io/v1, or core v1 */
        DP_API_V1BETA1,  /* `basic` device wrapper, flat requests */
        DP_API_V1BETA2,  /* same shape as v1 */
        DP_API_V1ALPHA3, /* DeviceTaintRule only */
        DP_API_V1ALPHA2, /* scheduling.k8s.io PodGroup */
        DP_API_OTHER,
} dp_api_version;

#define DCTX_PATH_MAX 1024
/* Segments kept: a document nests at most DP_DOC_MAX_DEPTH deep, one segment
 * per level, and validation adds a few; deeper segments are counted only. */
#define DCTX_SEG_MAX 128

/* One step of the path: a map key (not copied: the keys are the tree's or the
 * object's strings, alive while the path is) or a list index (key NULL). */
typedef struct dctx_seg {
        const char *key;
        size_t index;
} dctx_seg;

/* The path is kept as segments and written out only when a message needs it
 * (every field of every object is pushed and popped; few fail). Set it up with
 * DCTX_INIT: the segment array needs no zeroing. */
typedef struct dctx {
        dp_error *err;
        dp_api_version version;
        size_t len; /* segments */
        dctx_seg seg[DCTX_SEG_MAX];
} dctx;

#define DCTX_INIT(c, err_)                                                                                             \
        do {                                                                                                           \
                (c)->err = (err_);                                                                                     \
                (c)->version = DP_API_V1;                                                                              \
                (c)->len = 0;                                                                                          \
        } while (0)

/* Path building: each push returns a mark to pop back to. */
size_t path_key(dctx *c, const char *key);
size_t path_index(dctx *c, size_t i);
void path_pop(dctx *c, size_t mark);

/* Fail at node n (for its line) with the current path. Returns code. */
int dfail(dctx *c, const dp_doc_node *n, int code, const char *fmt, ...) _printf_(4, 5);
/* "unknown field "k"" at the parent path (pops to mark first). */
int dunknown(dctx *c, size_t mark, const dp_doc_node *key_node, const char *key);

/* 1: a map to walk; 0: null (nothing to do); <0: wrong type. */
int expect_map(dctx *c, const dp_doc_node *n);
int expect_seq(dctx *c, const dp_doc_node *n);

int get_str(dctx *c, const dp_doc_node *n, char **ret);
int get_bool(dctx *c, const dp_doc_node *n, bool *ret);
int get_int64(dctx *c, const dp_doc_node *n, int64_t *ret);
int get_int32(dctx *c, const dp_doc_node *n, int32_t *ret);
int get_quantity(dctx *c, const dp_doc_node *n, dp_quantity *ret);
int get_strv(dctx *c, const dp_doc_node *n, char ***ret, size_t *ret_n);
int get_kv_map(dctx *c, const dp_doc_node *n, dp_kv **ret, size_t *ret_n);
int get_quantity_map(dctx *c, const dp_doc_node *n, dp_named_quantity **ret, size_t *ret_n);
/* Compact JSON of any subtree. */
int get_json(dctx *c, const dp_doc_node *n, char **ret);

/* Decode a map into one `elem_size` struct per key, in order, with fn
 * (elements zeroed first). On failure nothing is kept: done() frees what the
 * entries so far (the failed one included) hold, and *ret is untouched. */
typedef int (*map_entry_fn)(dctx *c, const char *key, const dp_doc_node *v, void *elem);
int get_map(dctx *c, const dp_doc_node *n, void **ret, size_t *ret_n, size_t elem_size, map_entry_fn fn,
            void (*done)(void *elem));

DEFINE_FREEP(dp_label_selector, dp_label_selector_free)

/* Decode a sequence of `elem_size` structs with fn (elements zeroed first). */
typedef int (*elem_fn)(dctx *c, const dp_doc_node *n, void *elem);
int get_seq(dctx *c, const dp_doc_node *n, void **ret, size_t *ret_n, size_t elem_size, elem_fn fn);

bool in_list(const char *key, const char *const *list);
/* The key, values and operator of a selector requirement map n into q
 * (*ret_have_op: an operator was given; label_selector: only In, NotIn,
 * Exists and DoesNotExist, as metav1.LabelSelector). The checks of a whole
 * requirement are the caller's. */
int decode_requirement_fields(dctx *c, const dp_doc_node *n, dp_node_selector_requirement *q, bool label_selector,
                              bool *ret_have_op);

/* Common types (decode.c). */
int decode_meta(dctx *c, const dp_doc_node *n, dp_object_meta *m);
int decode_node_selector(dctx *c, const dp_doc_node *n, dp_node_selector **ret);
int decode_node_selector_terms(dctx *c, const dp_doc_node *n, dp_node_selector *ns);
int decode_node_selector_term(dctx *c, const dp_doc_node *n, dp_node_selector_term *ret);
int decode_taint(dctx *c, const dp_doc_node *n, void *elem);
int decode_toleration(dctx *c, const dp_doc_node *n, void *elem);
int decode_condition(dctx *c, const dp_doc_node *n, void *elem);

/* validate.c: a consumption against its counter set (validate-pools.c). */
int check_consumption(dctx *c, const dp_counter_consumption *cc, const dp_counter_set *set);

/* Kinds: `root` is the whole object map; the decoder walks its top-level
 * fields (apiVersion/kind/metadata already checked by the caller are
 * skipped by it). They fill a zeroed struct and leave cleanup to the caller. */
int decode_resource_slice(dctx *c, const dp_doc_node *root, dp_resource_slice *s);
int decode_device_class(dctx *c, const dp_doc_node *root, dp_device_class *dc);
int decode_resource_claim(dctx *c, const dp_doc_node *root, dp_resource_claim *rc);
int decode_resource_claim_template(dctx *c, const dp_doc_node *root, dp_resource_claim_template *t);
int decode_device_taint_rule(dctx *c, const dp_doc_node *root, dp_device_taint_rule *r);
int decode_node(dctx *c, const dp_doc_node *root, dp_node *n);
int decode_pod(dctx *c, const dp_doc_node *root, dp_pod *p);
int decode_namespace(dctx *c, const dp_doc_node *root, dp_namespace *ns);
int decode_pod_group(dctx *c, const dp_doc_node *root, dp_pod_group *g);
int decode_deployment(dctx *c, const dp_doc_node *root, dp_deployment *d);
/* inter-pod affinity and topology spread (decode-podaffinity.c): a Pod's
 * affinity.podAffinity (anti false) or podAntiAffinity (anti true), and
 * spec.topologySpreadConstraints, into the pod's fields. */
int decode_pod_affinity(dctx *c, const dp_doc_node *n, dp_pod *p, bool anti);
int decode_topology_spread(dctx *c, const dp_doc_node *n, dp_pod *p);
/* A metav1.LabelSelector (In, NotIn, Exists, DoesNotExist): null stays NULL
 * (it matches nothing), {} matches everything. */
int decode_pod_label_selector(dctx *c, const dp_doc_node *n, dp_label_selector **ret);
/* decode-sched.c: PriorityClass, and the pod and container fields of
 * kube-scheduler's queue and filters (pod_sched_field says which keys of
 * a pod spec decode_pod_sched_field takes). */
int decode_priority_class(dctx *c, const dp_doc_node *root, dp_priority_class *pc);
int decode_pod_disruption_budget(dctx *c, const dp_doc_node *root, dp_pod_disruption_budget *b);
int decode_selector_owner(dctx *c, const dp_doc_node *root, dp_deployment *d);
/* metav1.LabelSelector (decode-podaffinity.c): null stays NULL, {} matches everything */
int decode_pod_label_selector(dctx *c, const dp_doc_node *n, dp_label_selector **ret);
bool pod_sched_field(const char *key);
int decode_pod_sched_field(dctx *c, const char *key, const dp_doc_node *v, dp_pod *p);
int decode_container_ports(dctx *c, const dp_doc_node *n, dp_container *ct);

/* A record of plain fields decoded by table (get_fields): each field's name
 * as the API spells it, how its value reads and where it goes in the struct.
 * The *_FIELD macros refuse (at compile time) a member of another type. */
typedef enum { FIELD_STR, FIELD_BOOL, FIELD_INT32, FIELD_INT64, FIELD_SKIP } field_kind;
typedef struct decode_field {
        const char *name;
        field_kind kind;
        size_t offset;
} decode_field;
#define FIELD_AT(type, member, ctype) (offsetof(type, member) + 0 * sizeof(&((type *)0)->member == (ctype *)0))
#define STR_FIELD(name, type, member) {name, FIELD_STR, FIELD_AT(type, member, char *)}
#define BOOL_FIELD(name, type, member) {name, FIELD_BOOL, FIELD_AT(type, member, bool)}
#define INT32_FIELD(name, type, member) {name, FIELD_INT32, FIELD_AT(type, member, int32_t)}
#define INT64_FIELD(name, type, member) {name, FIELD_INT64, FIELD_AT(type, member, int64_t)}
#define SKIP_FIELD(name) {name, FIELD_SKIP, 0} /* known, not kept */
/* Decode map n into obj by fields (ended by {}), as DECODE_FIELDS does:
 * null is nothing to do, an unknown key is refused. */
int get_fields(dctx *c, const dp_doc_node *n, void *obj, const decode_field *fields);

/* The loop every struct decoder runs: for each key of map map_, push the key on
 * the path, run the if/else chain in BODY (which sets r), pop. */
#define DECODE_FIELDS(c, map_, k, v, BODY)                                                                             \
        do {                                                                                                           \
                int _e = expect_map((c), (map_));                                                                      \
                if (_e <= 0) return _e;                                                                                \
                for (size_t _i = 0; _i < (map_)->n; _i++) {                                                            \
                        const char *k = (map_)->pairs[_i].key;                                                         \
                        const dp_doc_node *v = (map_)->pairs[_i].value;                                                \
                        const dp_doc_node *_kn = (map_)->pairs[_i].key_node;                                           \
                        size_t _mark = path_key((c), k);                                                               \
                        int r;                                                                                         \
                        BODY else r = dunknown((c), _mark, _kn ? _kn : v, k);                                          \
                        if (r < 0) return r;                                                                           \
                        path_pop((c), _mark);                                                                          \
                }                                                                                                      \
        } while (0)
