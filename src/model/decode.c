/* SPDX-License-Identifier: Apache-2.0
 *
 * decode.c — the decoding framework (paths, typed getters), the types shared
 * by several kinds (metadata, node selectors, taints, tolerations), and the
 * dispatch from apiVersion/kind (including `List` and `*List`) to the kind
 * decoders in decode-dra.c and decode-core.c.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "base/strbuf.h"
#include "model/decode-internal.h"

/* ---- paths and errors ---- */

static bool simple_key(const char *k) {
        if (!*k) return false;
        for (const char *p = k; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
                      *p == '-'))
                        return false;
        return true;
}

static void path_append(char *path, size_t *len, const char *s, size_t n) {
        if (*len + n >= DCTX_PATH_MAX) n = DCTX_PATH_MAX - 1 - *len;
        memcpy(path + *len, s, n);
        *len += n;
        path[*len] = 0;
}

size_t path_key(dctx *c, const char *key) {
        size_t mark = c->len;
        if (c->len < DCTX_SEG_MAX) c->seg[c->len] = (dctx_seg){.key = key};
        c->len++;
        return mark;
}

size_t path_index(dctx *c, size_t i) {
        size_t mark = c->len;
        if (c->len < DCTX_SEG_MAX) c->seg[c->len] = (dctx_seg){.index = i};
        c->len++;
        return mark;
}

void path_pop(dctx *c, size_t mark) { c->len = mark; }

/* The path as messages show it ("spec.devices[3].attributes[nvidia.com/model]"),
 * at most DCTX_PATH_MAX - 1 bytes. Map keys that are not identifiers (domains,
 * slashes, dots) go in brackets so the path stays unambiguous. */
static void path_text(const dctx *c, char path[DCTX_PATH_MAX]) {
        size_t len = 0, n = c->len < DCTX_SEG_MAX ? c->len : DCTX_SEG_MAX;
        path[0] = 0;
        for (size_t i = 0; i < n; i++) {
                const char *key = c->seg[i].key;
                if (!key) {
                        char b[32];
                        int k = snprintf(b, sizeof(b), "[%zu]", c->seg[i].index);
                        path_append(path, &len, b, (size_t)k);
                } else if (simple_key(key)) {
                        if (len) path_append(path, &len, ".", 1);
                        path_append(path, &len, key, strlen(key));
                } else {
                        path_append(path, &len, "[", 1);
                        path_append(path, &len, key, strnlen(key, 200));
                        path_append(path, &len, "]", 1);
                }
        }
}

int dfail(dctx *c, const dp_doc_node *n, int code, const char *fmt, ...) {
        char msg[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        char line[32] = "";
        if (n && n->line) snprintf(line, sizeof(line), " (line %u)", n->line);
        if (c->len) {
                char path[DCTX_PATH_MAX];
                path_text(c, path);
                return dp_error_set(c->err, code, "%s: %s%s", path, msg, line);
        }
        return dp_error_set(c->err, code, "%s%s", msg, line);
}

int dunknown(dctx *c, size_t mark, const dp_doc_node *key_node, const char *key) {
        path_pop(c, mark);
        return dfail(c, key_node, -EINVAL, "unknown field \"%.200s\"", key);
}

/* ---- typed getters ---- */

int expect_map(dctx *c, const dp_doc_node *n) {
        if (dp_doc_is_null(n)) return 0;
        if (n->type != DP_DOC_MAP) return dfail(c, n, -EINVAL, "expected a map, got %s", dp_doc_type_name(n));
        return 1;
}

int expect_seq(dctx *c, const dp_doc_node *n) {
        if (dp_doc_is_null(n)) return 0;
        if (n->type != DP_DOC_SEQ) return dfail(c, n, -EINVAL, "expected a list, got %s", dp_doc_type_name(n));
        return 1;
}

int get_str(dctx *c, const dp_doc_node *n, char **ret) {
        if (dp_doc_is_null(n)) return 0;
        if (n->type != DP_DOC_SCALAR || dp_doc_kind(n) != DP_DOC_STR)
                return dfail(c, n, -EINVAL, "expected a string, got %s", dp_doc_type_name(n));
        if (memchr(n->str, 0, n->len)) return dfail(c, n, -EINVAL, "string contains a NUL byte");
        char *s = strdup(n->str);
        if (!s) return dp_error_set(c->err, -ENOMEM, "out of memory");
        free(*ret);
        *ret = s;
        return 0;
}

int get_bool(dctx *c, const dp_doc_node *n, bool *ret) {
        if (dp_doc_is_null(n)) return 0;
        if (n->type != DP_DOC_SCALAR || dp_doc_kind(n) != DP_DOC_BOOL)
                return dfail(c, n, -EINVAL, "expected a boolean, got %s", dp_doc_type_name(n));
        return dp_doc_get_bool(n, ret, NULL);
}

int get_int64(dctx *c, const dp_doc_node *n, int64_t *ret) {
        if (dp_doc_is_null(n)) return 0;
        if (n->type != DP_DOC_SCALAR || dp_doc_kind(n) != DP_DOC_INT)
                return dfail(c, n, -EINVAL, "expected an integer, got %s", dp_doc_type_name(n));
        if (dp_doc_get_int64(n, ret, NULL) < 0)
                return dfail(c, n, -EINVAL, "integer %.40s does not fit in 64 bits", n->str);
        return 0;
}

int get_int32(dctx *c, const dp_doc_node *n, int32_t *ret) {
        int64_t v = 0;
        if (dp_doc_is_null(n)) return 0;
        int r = get_int64(c, n, &v);
        if (r < 0) return r;
        if (v < INT32_MIN || v > INT32_MAX)
                return dfail(c, n, -EINVAL, "integer %" PRId64 " does not fit in 32 bits", v);
        *ret = (int32_t)v;
        return 0;
}

int get_quantity(dctx *c, const dp_doc_node *n, dp_quantity *ret) {
        if (dp_doc_is_null(n)) return 0;
        if (n->type != DP_DOC_SCALAR) return dfail(c, n, -EINVAL, "expected a quantity, got %s", dp_doc_type_name(n));
        dp_doc_scalar_kind k = dp_doc_kind(n);
        if (k == DP_DOC_BOOL) return dfail(c, n, -EINVAL, "expected a quantity, got boolean");
        if (memchr(n->str, 0, n->len)) return dfail(c, n, -EINVAL, "quantity contains a NUL byte");
        /* Quantity.UnmarshalJSON trims surrounding white space. */
        const char *s = n->str;
        size_t len = n->len;
        while (len && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
                s++, len--;
        while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\n' || s[len - 1] == '\r'))
                len--;
        char buf[DP_QUANTITY_MAX_LEN + 2];
        if (len > DP_QUANTITY_MAX_LEN)
                return dfail(c, n, -EINVAL, "quantity is longer than %d characters", DP_QUANTITY_MAX_LEN);
        memcpy(buf, s, len);
        buf[len] = 0;
        dp_error qe; /* not zeroed whole: a message is written only on failure */
        qe.code = 0;
        qe.msg[0] = 0;
        int r = dp_quantity_parse(buf, ret, &qe);
        if (r < 0) return dfail(c, n, r == -ERANGE ? -EINVAL : r, "%s", qe.msg);
        return 0;
}

int get_strv(dctx *c, const dp_doc_node *n, char ***ret, size_t *ret_n) {
        int r = expect_seq(c, n);
        if (r <= 0) return r;
        char **v = n->n ? calloc(n->n, sizeof(char *)) : NULL;
        if (n->n && !v) return dp_error_set(c->err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < n->n; i++) {
                size_t m = path_index(c, i);
                if (dp_doc_is_null(n->items[i]))
                        r = dfail(c, n->items[i], -EINVAL, "expected a string, got null");
                else
                        r = get_str(c, n->items[i], &v[i]);
                if (r < 0) {
                        for (size_t j = 0; j < i; j++)
                                free(v[j]);
                        free(v);
                        return r;
                }
                path_pop(c, m);
        }
        *ret = v;
        *ret_n = n->n;
        return 0;
}

int get_map(dctx *c, const dp_doc_node *n, void **ret, size_t *ret_n, size_t elem_size, map_entry_fn fn,
            void (*done)(void *elem)) {
        int r = expect_map(c, n);
        if (r <= 0) return r;
        char *v = n->n ? calloc(n->n, elem_size) : NULL;
        if (n->n && !v) return dp_error_set(c->err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < n->n; i++) {
                size_t m = path_key(c, n->pairs[i].key);
                r = fn(c, n->pairs[i].key, n->pairs[i].value, v + i * elem_size);
                if (r < 0) {
                        for (size_t j = 0; j <= i; j++)
                                done(v + j * elem_size);
                        free(v);
                        return r;
                }
                path_pop(c, m);
        }
        *ret = v;
        *ret_n = n->n;
        return 0;
}

/* A label or annotation: a null value reads as "" */
static int kv_entry(dctx *c, const char *key, const dp_doc_node *v, void *elem) {
        dp_kv *kv = elem;
        if (!(kv->key = strdup(key))) return dp_error_set(c->err, -ENOMEM, "out of memory");
        if (!dp_doc_is_null(v)) return get_str(c, v, &kv->value);
        return (kv->value = strdup("")) ? 0 : dp_error_set(c->err, -ENOMEM, "out of memory");
}

static void kv_entry_done(void *elem) {
        dp_kv *kv = elem;
        dp_free_many(kv->key, kv->value);
}

int get_kv_map(dctx *c, const dp_doc_node *n, dp_kv **ret, size_t *ret_n) {
        return get_map(c, n, (void **)ret, ret_n, sizeof(dp_kv), kv_entry, kv_entry_done);
}

static int quantity_entry(dctx *c, const char *key, const dp_doc_node *v, void *elem) {
        dp_named_quantity *q = elem;
        if (!(q->name = strdup(key))) return dp_error_set(c->err, -ENOMEM, "out of memory");
        if (dp_doc_is_null(v)) return dfail(c, v, -EINVAL, "expected a quantity, got null");
        return get_quantity(c, v, &q->value);
}

static void quantity_entry_done(void *elem) { free(((dp_named_quantity *)elem)->name); }

int get_quantity_map(dctx *c, const dp_doc_node *n, dp_named_quantity **ret, size_t *ret_n) {
        return get_map(c, n, (void **)ret, ret_n, sizeof(dp_named_quantity), quantity_entry, quantity_entry_done);
}

int get_json(dctx *c, const dp_doc_node *n, char **ret) {
        if (dp_doc_is_null(n)) return 0;
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_doc_emit(&sb, n, DP_DOC_JSON_COMPACT);
        if (dp_strbuf_failed(&sb)) {
                dp_strbuf_done(&sb);
                return dp_error_set(c->err, -ENOMEM, "out of memory");
        }
        char *s = dp_strbuf_steal(&sb);
        if (!s) s = strdup("");
        if (!s) return dp_error_set(c->err, -ENOMEM, "out of memory");
        free(*ret);
        *ret = s;
        return 0;
}

/* Elements decoded so far stay in the array on failure: the caller's
 * destructor frees them (elements are zeroed up front). */
int get_seq(dctx *c, const dp_doc_node *n, void **ret, size_t *ret_n, size_t elem_size, elem_fn fn) {
        int r = expect_seq(c, n);
        if (r <= 0) return r;
        if (n->n == 0) return 0;
        void *arr = calloc(n->n, elem_size);
        if (!arr) return dp_error_set(c->err, -ENOMEM, "out of memory");
        free(*ret); /* a field appears once per map (duplicate keys are refused by the parser) */
        *ret = arr;
        *ret_n = n->n;
        for (size_t i = 0; i < n->n; i++) {
                size_t m = path_index(c, i);
                if (dp_doc_is_null(n->items[i]))
                        r = dfail(c, n->items[i], -EINVAL, "expected a map, got null");
                else
                        r = fn(c, n->items[i], (char *)arr + i * elem_size);
                if (r < 0) return r;
                path_pop(c, m);
        }
        return 0;
}

static int get_field(dctx *c, const dp_doc_node *v, const decode_field *f, void *obj) {
        void *at = (char *)obj + f->offset;
        switch (f->kind) {
        case FIELD_STR: return get_str(c, v, at);
        case FIELD_BOOL: return get_bool(c, v, at);
        case FIELD_INT32: return get_int32(c, v, at);
        case FIELD_INT64: return get_int64(c, v, at);
        case FIELD_SKIP: break;
        }
        return 0;
}

int get_fields(dctx *c, const dp_doc_node *n, void *obj, const decode_field *fields) {
        int r = expect_map(c, n);
        if (r <= 0) return r;
        for (size_t i = 0; i < n->n; i++) {
                const dp_doc_pair *p = &n->pairs[i];
                size_t mark = path_key(c, p->key);
                const decode_field *f = fields;
                while (f->name && !streq(f->name, p->key))
                        f++;
                if (f->name)
                        r = get_field(c, p->value, f, obj);
                else
                        r = dunknown(c, mark, p->key_node ? p->key_node : p->value, p->key);
                if (r < 0) return r;
                path_pop(c, mark);
        }
        return 0;
}

bool in_list(const char *key, const char *const *list) {
        for (; *list; list++)
                if (streq(key, *list)) return true;
        return false;
}

/* ---- metadata ---- */

static const decode_field owner_ref_fields[] = {
        STR_FIELD("apiVersion", dp_owner_ref, api_version),
        STR_FIELD("kind", dp_owner_ref, kind),
        STR_FIELD("name", dp_owner_ref, name),
        STR_FIELD("uid", dp_owner_ref, uid),
        BOOL_FIELD("controller", dp_owner_ref, controller),
        SKIP_FIELD("blockOwnerDeletion"),
        {},
};

static int decode_owner_ref(dctx *c, const dp_doc_node *n, void *elem) {
        return get_fields(c, n, elem, owner_ref_fields);
}

int decode_meta(dctx *c, const dp_doc_node *n, dp_object_meta *m) {
        static const char *const ignored[] = {"selfLink", "deletionGracePeriodSeconds", "finalizers", "managedFields",
                                              NULL};
        DECODE_FIELDS(c, n, k, v, if (streq(k, "name")) r = get_str(c, v, &m->name);
                      else if (streq(k, "generateName")) r = get_str(c, v, &m->generate_name);
                      else if (streq(k, "namespace")) r = get_str(c, v, &m->namespace);
                      else if (streq(k, "uid")) r = get_str(c, v, &m->uid);
                      else if (streq(k, "resourceVersion")) r = get_str(c, v, &m->resource_version);
                      else if (streq(k, "generation")) r = get_int64(c, v, &m->generation);
                      else if (streq(k, "creationTimestamp")) r = get_str(c, v, &m->creation_timestamp);
                      else if (streq(k, "deletionTimestamp")) r = get_str(c, v, &m->deletion_timestamp);
                      else if (streq(k, "labels")) r = get_kv_map(c, v, &m->labels, &m->n_labels);
                      else if (streq(k, "annotations")) r = get_kv_map(c, v, &m->annotations, &m->n_annotations);
                      else if (streq(k, "ownerReferences")) r =
                              get_seq(c, v, (void **)&m->owner_references, &m->n_owner_references, sizeof(dp_owner_ref),
                                      decode_owner_ref);
                      else if (in_list(k, ignored)) r = 0;);
        return 0;
}

/* ---- node selectors, taints, tolerations, conditions ---- */

/* A node selector's operators; label selectors take the first four. */
static const char *const ns_op_names[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};

static int get_ns_op(dctx *c, const dp_doc_node *v, bool label_selector, dp_node_selector_op *ret, bool *have) {
        _cleanup_free_ char *op = NULL;
        int r = get_str(c, v, &op);
        if (r < 0 || !op) return r;
        size_t n = label_selector ? DP_NS_OP_DOES_NOT_EXIST + 1 : ELEMENTSOF(ns_op_names);
        for (size_t i = 0; i < n; i++)
                if (streq(op, ns_op_names[i])) {
                        *ret = (dp_node_selector_op)i;
                        *have = true;
                        return 0;
                }
        return dfail(c, v, -EINVAL, "unsupported operator \"%.60s\" (In, NotIn, Exists, DoesNotExist%s)", op,
                     label_selector ? "" : ", Gt, Lt");
}

int decode_requirement_fields(dctx *c, const dp_doc_node *n, dp_node_selector_requirement *q, bool label_selector,
                              bool *ret_have_op) {
        DECODE_FIELDS(c, n, k, v, if (streq(k, "key")) r = get_str(c, v, &q->key);
                      else if (streq(k, "values")) r = get_strv(c, v, &q->values, &q->n_values);
                      else if (streq(k, "operator")) r = get_ns_op(c, v, label_selector, &q->op, ret_have_op););
        return 0;
}

static int decode_requirement(dctx *c, const dp_doc_node *n, void *elem) {
        bool have_op = false;
        int r = decode_requirement_fields(c, n, elem, false, &have_op);
        if (r < 0) return r;
        if (!have_op) return dfail(c, n, -EINVAL, "operator: required");
        return 0;
}

static int decode_term(dctx *c, const dp_doc_node *n, void *elem) {
        dp_node_selector_term *t = elem;
        DECODE_FIELDS(c, n, k, v,
                      if (streq(k, "matchExpressions")) r =
                              get_seq(c, v, (void **)&t->match_expressions, &t->n_match_expressions,
                                      sizeof(dp_node_selector_requirement), decode_requirement);
                      else if (streq(k, "matchFields")) r =
                              get_seq(c, v, (void **)&t->match_fields, &t->n_match_fields,
                                      sizeof(dp_node_selector_requirement), decode_requirement););
        return 0;
}

int decode_node_selector_term(dctx *c, const dp_doc_node *n, dp_node_selector_term *ret) {
        return decode_term(c, n, ret);
}

int decode_node_selector_terms(dctx *c, const dp_doc_node *n, dp_node_selector *ns) {
        return get_seq(c, n, (void **)&ns->terms, &ns->n_terms, sizeof(dp_node_selector_term), decode_term);
}

int decode_node_selector(dctx *c, const dp_doc_node *n, dp_node_selector **ret) {
        if (dp_doc_is_null(n)) return 0;
        int e = expect_map(c, n);
        if (e < 0) return e;
        dp_node_selector *ns = calloc(1, sizeof(*ns));
        if (!ns) return dp_error_set(c->err, -ENOMEM, "out of memory");
        dp_node_selector_free(*ret);
        *ret = ns; /* owned by the caller's struct from here on */
        for (size_t i = 0; i < n->n; i++) {
                const char *k = n->pairs[i].key;
                size_t m = path_key(c, k);
                int r;
                if (streq(k, "nodeSelectorTerms"))
                        r = decode_node_selector_terms(c, n->pairs[i].value, ns);
                else
                        r = dunknown(c, m, n->pairs[i].key_node, k);
                if (r < 0) return r;
                path_pop(c, m);
        }
        return 0;
}

static const decode_field taint_fields[] = {
        STR_FIELD("key", dp_taint, key),
        STR_FIELD("value", dp_taint, value),
        STR_FIELD("effect", dp_taint, effect),
        STR_FIELD("timeAdded", dp_taint, time_added),
        {},
};

int decode_taint(dctx *c, const dp_doc_node *n, void *elem) { return get_fields(c, n, elem, taint_fields); }

static const decode_field toleration_fields[] = {
        STR_FIELD("key", dp_toleration, key),
        STR_FIELD("operator", dp_toleration, op),
        STR_FIELD("value", dp_toleration, value),
        STR_FIELD("effect", dp_toleration, effect),
        INT64_FIELD("tolerationSeconds", dp_toleration, toleration_seconds),
        {},
};

int decode_toleration(dctx *c, const dp_doc_node *n, void *elem) {
        dp_toleration *t = elem;
        int r = get_fields(c, n, t, toleration_fields);
        if (r < 0) return r;
        const dp_doc_node *seconds = dp_doc_get(n, "tolerationSeconds");
        t->has_toleration_seconds = seconds && !dp_doc_is_null(seconds);
        return 0;
}

static const decode_field condition_fields[] = {
        STR_FIELD("type", dp_condition, type),
        STR_FIELD("status", dp_condition, status),
        STR_FIELD("reason", dp_condition, reason),
        STR_FIELD("message", dp_condition, message),
        STR_FIELD("lastTransitionTime", dp_condition, last_transition_time),
        INT64_FIELD("observedGeneration", dp_condition, observed_generation),
        {},
};

int decode_condition(dctx *c, const dp_doc_node *n, void *elem) { return get_fields(c, n, elem, condition_fields); }

/* ---- dispatch ---- */

typedef struct kind_entry {
        const char *kind;
        dp_kind k;
        size_t size;
        const char *const *api_versions; /* NULL-terminated */
} kind_entry;

static const char *const dra_versions[] = {"resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1",
                                           NULL};
static const char *const taint_rule_versions[] = {"resource.k8s.io/v1beta2", "resource.k8s.io/v1alpha3", NULL};
static const char *const core_versions[] = {"v1", NULL};
static const char *const pod_group_versions[] = {"scheduling.k8s.io/v1alpha2", "scheduling.x-k8s.io/v1alpha1",
                                                 "scheduling.k8s.io/v1alpha1", "scheduling.volcano.sh/v1beta1",
                                                 "scheduling.run.ai/v2alpha2", NULL};
static const char *const apps_versions[] = {"apps/v1", NULL};
static const char *const batch_versions[] = {"batch/v1", NULL};
static const char *const priority_class_versions[] = {"scheduling.k8s.io/v1", NULL};
static const char *const pdb_versions[] = {"policy/v1", NULL};

static const kind_entry kinds[] = {
        {"ResourceSlice", DP_KIND_RESOURCE_SLICE, sizeof(dp_resource_slice), dra_versions},
        {"DeviceClass", DP_KIND_DEVICE_CLASS, sizeof(dp_device_class), dra_versions},
        {"ResourceClaim", DP_KIND_RESOURCE_CLAIM, sizeof(dp_resource_claim), dra_versions},
        {"ResourceClaimTemplate", DP_KIND_RESOURCE_CLAIM_TEMPLATE, sizeof(dp_resource_claim_template), dra_versions},
        {"DeviceTaintRule", DP_KIND_DEVICE_TAINT_RULE, sizeof(dp_device_taint_rule), taint_rule_versions},
        {"Node", DP_KIND_NODE, sizeof(dp_node), core_versions},
        {"Pod", DP_KIND_POD, sizeof(dp_pod), core_versions},
        {"Namespace", DP_KIND_NAMESPACE, sizeof(dp_namespace), core_versions},
        {"PodGroup", DP_KIND_POD_GROUP, sizeof(dp_pod_group), pod_group_versions},
        {"PriorityClass", DP_KIND_PRIORITY_CLASS, sizeof(dp_priority_class), priority_class_versions},
        {"Deployment", DP_KIND_DEPLOYMENT, sizeof(dp_deployment), apps_versions},
        {"ReplicaSet", DP_KIND_REPLICA_SET, sizeof(dp_deployment), apps_versions},
        {"StatefulSet", DP_KIND_STATEFUL_SET, sizeof(dp_deployment), apps_versions},
        {"DaemonSet", DP_KIND_DAEMON_SET, sizeof(dp_deployment), apps_versions},
        {"Job", DP_KIND_JOB, sizeof(dp_deployment), batch_versions},
        {"PodDisruptionBudget", DP_KIND_POD_DISRUPTION_BUDGET, sizeof(dp_pod_disruption_budget), pdb_versions},
        {"Service", DP_KIND_SERVICE, sizeof(dp_deployment), core_versions},
        {"ReplicationController", DP_KIND_REPLICATION_CONTROLLER, sizeof(dp_deployment), core_versions},
};

static const kind_entry *find_kind(const char *kind) {
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                if (streq(kinds[i].kind, kind)) return &kinds[i];
        return NULL;
}

/* The extension kind of this name whose versions hold api_version; without
 * one, the first of the name (its versions then decide: skipped as another
 * group's kind). No apiVersion: the first of the name. */
static const dp_model_ext_kind *find_ext_kind(const dp_model_ext *ext, const char *kind, const char *api_version) {
        const dp_model_ext_kind *first = NULL;
        for (; ext; ext = ext->next)
                for (size_t i = 0; i < ext->n; i++) {
                        const dp_model_ext_kind *k = &ext->kinds[i];
                        if (!streq(k->kind, kind)) continue;
                        if (!api_version || in_list(api_version, k->api_versions)) return k;
                        if (!first) first = k;
                }
        return first;
}

static dp_api_version version_of(const char *api_version) {
        const char *slash = strrchr(api_version, '/');
        const char *v = slash ? slash + 1 : api_version;
        if (streq(v, "v1")) return DP_API_V1;
        if (streq(v, "v1beta1")) return DP_API_V1BETA1;
        if (streq(v, "v1beta2")) return DP_API_V1BETA2;
        if (streq(v, "v1alpha3")) return DP_API_V1ALPHA3;
        if (streq(v, "v1alpha2")) return DP_API_V1ALPHA2;
        return DP_API_OTHER;
}

static int scalar_text(const dp_doc_node *n, const char **ret) {
        if (!n || n->type != DP_DOC_SCALAR || dp_doc_kind(n) != DP_DOC_STR || memchr(n->str, 0, n->len)) return -EINVAL;
        *ret = n->str;
        return 0;
}

/* "file: Kind ns/name: " for messages, from the raw tree (the struct may
 * not be decoded yet). */
static void describe_raw(const dp_doc_node *root, const char *kind, const char *source, char *buf, size_t size) {
        const dp_doc_node *md = dp_doc_get(root, "metadata");
        const char *name = NULL, *ns = NULL;
        if (scalar_text(dp_doc_get(md, "name"), &name) < 0 && scalar_text(dp_doc_get(md, "generateName"), &name) < 0)
                name = NULL;
        if (scalar_text(dp_doc_get(md, "namespace"), &ns) < 0) ns = NULL;
        if (name && ns)
                snprintf(buf, size, "%s: %s %.253s/%.253s", source, kind, ns, name);
        else if (name)
                snprintf(buf, size, "%s: %s %.253s", source, kind, name);
        else
                snprintf(buf, size, "%s: %s (unnamed)", source, kind);
}

static int decode_kind(dctx *c, const kind_entry *ke, const dp_doc_node *root, dp_object o) {
        switch (ke->k) {
        case DP_KIND_RESOURCE_SLICE: return decode_resource_slice(c, root, o.slice);
        case DP_KIND_DEVICE_CLASS: return decode_device_class(c, root, o.device_class);
        case DP_KIND_RESOURCE_CLAIM: return decode_resource_claim(c, root, o.claim);
        case DP_KIND_RESOURCE_CLAIM_TEMPLATE: return decode_resource_claim_template(c, root, o.claim_template);
        case DP_KIND_DEVICE_TAINT_RULE: return decode_device_taint_rule(c, root, o.taint_rule);
        case DP_KIND_NODE: return decode_node(c, root, o.node);
        case DP_KIND_POD: return decode_pod(c, root, o.pod);
        case DP_KIND_NAMESPACE: return decode_namespace(c, root, o.ns);
        case DP_KIND_POD_GROUP: return decode_pod_group(c, root, o.pod_group);
        case DP_KIND_PRIORITY_CLASS: return decode_priority_class(c, root, o.priority_class);
        case DP_KIND_POD_DISRUPTION_BUDGET: return decode_pod_disruption_budget(c, root, o.pdb);
        case DP_KIND_DEPLOYMENT:
        case DP_KIND_REPLICA_SET:
        case DP_KIND_STATEFUL_SET:
        case DP_KIND_JOB:
        case DP_KIND_DAEMON_SET: return decode_deployment(c, root, o.deployment);
        case DP_KIND_SERVICE:
        case DP_KIND_REPLICATION_CONTROLLER: return decode_selector_owner(c, root, o.deployment);
        case DP_KIND_EXT:
        case DP_KIND_NONE: break;
        }
        return -EINVAL;
}

/* Count an object of a kind the model does not know in out->skipped. */
static int skip_kind(dp_object_list *out, const char *kind, const char *api_version, const char *source,
                     size_t doc_index, dp_error *err) {
        for (size_t i = 0; i < out->n_skipped; i++)
                if (streq(out->skipped[i].kind, kind) && streq_ptr(out->skipped[i].api_version, api_version)) {
                        out->skipped[i].count++;
                        return 1;
                }
        dp_skipped_kind *v = realloc(out->skipped, (out->n_skipped + 1) * sizeof(*v));
        if (!v) return dp_error_set(err, -ENOMEM, "out of memory");
        out->skipped = v;
        dp_skipped_kind *x = &v[out->n_skipped];
        *x = (dp_skipped_kind){.count = 1};
        x->kind = strndup(kind, 100);
        x->api_version = api_version ? strndup(api_version, 100) : NULL;
        x->first = dp_asprintf("%s: document %zu", source, doc_index + 1);
        if (!x->kind || (api_version && !x->api_version) || !x->first) {
                free(x->kind);
                free(x->api_version);
                free(x->first);
                return dp_error_set(err, -ENOMEM, "out of memory");
        }
        out->n_skipped++;
        return 1;
}

/* Decode one object map. kind/api_version may come from an enclosing *List
 * when the item omits them. 1: a kind the model does not know, counted in
 * out->skipped (*ret untouched). */
static int decode_object(const dp_doc_node *root, const char *source, size_t doc_index, size_t item_index,
                         const char *default_kind, const char *default_api_version, dp_object_list *out,
                         dp_object *ret, dp_error *err) {
        dctx c;
        DCTX_INIT(&c, err);
        char who[640];
        if (!root || root->type != DP_DOC_MAP)
                return dp_error_set(err, -EINVAL, "%s: document %zu: expected an object (a map), got %s", source,
                                    doc_index + 1, dp_doc_type_name(root));
        const char *kind = default_kind, *api_version = default_api_version;
        const dp_doc_node *kn = dp_doc_get(root, "kind"), *an = dp_doc_get(root, "apiVersion");
        if (kn && scalar_text(kn, &kind) < 0)
                return dp_error_set(err, -EINVAL, "%s: document %zu: kind: expected a string (line %u)", source,
                                    doc_index + 1, kn->line);
        if (an && scalar_text(an, &api_version) < 0)
                return dp_error_set(err, -EINVAL, "%s: document %zu: apiVersion: expected a string (line %u)", source,
                                    doc_index + 1, an->line);
        if (!kind)
                return dp_error_set(err, -EINVAL, "%s: document %zu: kind: required (line %u)", source, doc_index + 1,
                                    root->line);
        const kind_entry *ke = find_kind(kind);
        const dp_model_ext_kind *xk = ke ? NULL : find_ext_kind(out->ext, kind, api_version);
        if (!ke && !xk) return skip_kind(out, kind, api_version, source, doc_index, err);
        const char *const *versions = ke ? ke->api_versions : xk->api_versions;
        /* A manifest without apiVersion is refused by kubectl, yet some
         * published examples omit it: a known kind takes its preferred
         * (first listed) version. */
        if (!api_version) api_version = versions[0];
        /* Another API group's kind of the same name (Volcano's batch.volcano.sh
         * Job, KAI's scheduling.run.ai PodGroup) or a version devplane does
         * not read is not this kind: skipped with the other unknown kinds. */
        if (!in_list(api_version, versions)) return skip_kind(out, kind, api_version, source, doc_index, err);
        c.version = version_of(api_version);

        dp_object o = {.hdr = calloc(1, ke ? ke->size : xk->size)};
        if (!o.hdr) return dp_error_set(err, -ENOMEM, "out of memory");
        o.hdr->kind = ke ? ke->k : DP_KIND_EXT;
        if (xk) o.ext->ext = xk;
        o.hdr->doc_index = doc_index;
        o.hdr->item_index = item_index;
        o.hdr->line = root->line;
        o.hdr->api_version = strdup(api_version);
        o.hdr->source = strdup(source);
        int r = 0;
        if (!o.hdr->api_version || !o.hdr->source) r = dp_error_set(err, -ENOMEM, "out of memory");
        if (r >= 0) {
                size_t m = path_key(&c, "metadata");
                r = decode_meta(&c, dp_doc_get(root, "metadata"), dp_object_meta_of(o));
                path_pop(&c, m);
        }
        if (r >= 0) r = ke ? decode_kind(&c, ke, root, o) : xk->decode(&c, root, o, out);
        if (r == DP_EXT_SKIP) {
                dp_object_free(o);
                return skip_kind(out, kind, api_version, source, doc_index, err);
        }
        if (r < 0) {
                if (r != -ENOMEM) {
                        /* who the message is about, made only for a message */
                        describe_raw(root, kind, source, who, sizeof(who));
                        dp_error_prefix(err, "%s", who);
                }
                dp_object_free(o);
                return r;
        }
        *ret = o;
        return 0;
}

static bool is_list_kind(const char *kind) {
        size_t n = strlen(kind);
        return n >= 4 && streq(kind + n - 4, "List");
}

int dp_model_decode(const dp_doc_node *root, const char *source, size_t doc_index, dp_object_list *out, dp_error *err) {
        assert_return(out, -EINVAL);
        if (!source) source = "<input>";
        const char *kind = NULL;
        if (root && root->type == DP_DOC_MAP && scalar_text(dp_doc_get(root, "kind"), &kind) == 0 &&
            is_list_kind(kind)) {
                /* kind: List (kubectl) or FooList (API list responses, items may omit kind/apiVersion). */
                const char *api_version = NULL;
                (void)scalar_text(dp_doc_get(root, "apiVersion"), &api_version);
                char item_kind[128] = "";
                if (!streq(kind, "List"))
                        snprintf(item_kind, sizeof(item_kind), "%.*s", (int)(strlen(kind) - 4), kind);
                const dp_doc_node *items = NULL;
                for (size_t i = 0; i < root->n; i++) {
                        const char *k = root->pairs[i].key;
                        if (streq(k, "items"))
                                items = root->pairs[i].value;
                        else if (!streq(k, "apiVersion") && !streq(k, "kind") && !streq(k, "metadata"))
                                return dp_error_set(err, -EINVAL, "%s: %s: unknown field \"%.100s\" (line %u)", source,
                                                    kind, k, root->pairs[i].value->line);
                }
                if (items && !dp_doc_is_null(items) && items->type != DP_DOC_SEQ)
                        return dp_error_set(err, -EINVAL, "%s: %s: items: expected a list, got %s (line %u)", source,
                                            kind, dp_doc_type_name(items), items->line);
                size_t n_items = items && items->type == DP_DOC_SEQ ? items->n : 0;
                size_t start = out->n;
                for (size_t i = 0; i < n_items; i++) {
                        dp_object o;
                        int r = decode_object(items->items[i], source, doc_index, i, item_kind[0] ? item_kind : NULL,
                                              item_kind[0] ? api_version : NULL, out, &o, err);
                        if (r == 1) continue;
                        if (r >= 0) {
                                r = dp_object_list_append(out, o);
                                if (r < 0) {
                                        dp_object_free(o);
                                        dp_error_set(err, r, "out of memory");
                                }
                        }
                        if (r < 0) {
                                /* all or nothing: drop what this document added */
                                while (out->n > start)
                                        dp_object_free(out->items[--out->n]);
                                return r;
                        }
                }
                return 0;
        }
        dp_object o;
        int r = decode_object(root, source, doc_index, 0, NULL, NULL, out, &o, err);
        if (r != 0) return r < 0 ? r : 0;
        r = dp_object_list_append(out, o);
        if (r < 0) {
                dp_object_free(o);
                return dp_error_set(err, r, "out of memory");
        }
        return 0;
}

static int decode_one(dp_doc_node *root, const char *source, size_t index, void *userdata, dp_error *err) {
        return dp_model_decode(root, source, index, userdata, err);
}

int dp_model_decode_buffer(const char *buf, size_t len, const char *source, dp_object_list *out, dp_error *err) {
        assert_return(out, -EINVAL);
        if (!source) source = "<input>";
        size_t start = out->n;
        int r = dp_doc_parse_each(buf, len, source, decode_one, out, err);
        if (r == -ENOMEM && err && err->code == 0) return dp_error_set(err, r, "out of memory");
        if (r < 0)
                while (out->n > start)
                        dp_object_free(out->items[--out->n]);
        return r;
}
