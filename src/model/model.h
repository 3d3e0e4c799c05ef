/* SPDX-License-Identifier: Apache-2.0
 *
 * model.h — decode, validate, encode and load Kubernetes objects
 * (structs in model/objects.h, limits in model/validate.h).
 *
 *     dp_object_list *objs = NULL;
 *     dp_error err = DP_ERROR_INIT;
 *     const char *paths[] = {"cluster/"};
 *     if (dp_model_load(paths, 1, &objs, &err) < 0)      // decode + validate
 *             fprintf(stderr, "%s\n", err.msg);          // exit status 2
 *     for (size_t i = 0; i < objs->n; i++)
 *             if (objs->items[i].hdr->kind == DP_KIND_RESOURCE_SLICE) ...
 *     objs = dp_object_list_free(objs);
 *
 * Errors (base/macros.h convention): -EINVAL for bad input (syntax, unknown
 * kind/apiVersion/field, wrong type, a rule broken), -E2BIG for a Kubernetes
 * limit exceeded, -ENOMEM, -ENOENT/-EACCES... for files. The message names
 * the file, the object and the field path:
 *     slices.yaml: ResourceSlice node-a-gpu: spec.devices[3].attributes.model:
 *     unknown field "strng" (line 14)
 * On error nothing is appended / returned (no partial collections).
 *
 * Purity: decode/validate/encode touch no files; dp_model_load() and
 * dp_model_load_file() are the only functions here that read files.
 */
#pragma once

#include "doc/doc.h"
#include "model/objects.h"

/* ---- collections ---- */

/* A kind the model does not know (ConfigMap, Service, a CRD such as
 * ComputeDomain): its objects are skipped, counted once per kind and
 * apiVersion, for one warning line each (the tools print them). */
typedef struct dp_skipped_kind {
        char *kind;
        char *api_version; /* NULL when unset */
        size_t count;
        char *first; /* "file: document N" of the first one */
} dp_skipped_kind;

/* Kinds another module decodes (Kueue's ClusterQueue, LocalQueue...: src/queue),
 * so the model stays below them: a caller that wants them sets the list's
 * `ext` before decoding; without it they are skipped as unknown kinds. The
 * object is a zeroed `size`-byte struct starting with dp_ext_object; the model
 * fills its header and metadata, then `decode` walks the top-level fields
 * (apiVersion, kind, metadata already read) with the model's decoding context
 * (model/decode-internal.h) and may add warnings to out->warnings; `done`
 * frees what decode filled beyond the header and metadata. decode returns
 * DP_EXT_SKIP for an object the module leaves alone (another project's kind
 * it reads only when labelled for it): the object is dropped and counted
 * with the skipped kinds, as without the table. */
#define DP_EXT_SKIP 1
struct dctx;
struct dp_object_list;
typedef struct dp_model_ext_kind {
        const char *kind;
        const char *const *api_versions; /* NULL-terminated, the preferred first */
        size_t size;
        bool namespaced;
        int (*decode)(struct dctx *c, const dp_doc_node *root, dp_object o, struct dp_object_list *out);
        void (*done)(dp_object o);
} dp_model_ext_kind;

/* Tables chain through `next`, so each module keeps its own kinds; two
 * modules may decode kinds of the same name in different API groups
 * (Volcano's and KAI-Scheduler's Queue): the first entry whose versions hold
 * the object's apiVersion takes it. */
typedef struct dp_model_ext {
        const dp_model_ext_kind *kinds;
        size_t n;
        const struct dp_model_ext *next;
} dp_model_ext;

/* Objects in input order. The list owns every object. */
typedef struct dp_object_list {
        dp_object *items;
        size_t n;
        size_t cap;
        dp_skipped_kind *skipped; /* in the order first seen */
        size_t n_skipped;
        /* queue, ports, defaults (kube-scheduler parity): what
         * dp_model_apply_defaults assumed, one line each, for the tools */
        char **warnings;
        size_t n_warnings;
        const dp_model_ext *ext; /* kinds decoded by another module; NULL: none (not owned) */
} dp_object_list;

dp_object_list *dp_object_list_new(void);
dp_object_list *dp_object_list_free(dp_object_list *l);
DEFINE_FREEP(dp_object_list, dp_object_list_free)
/* Take ownership of o (appended); -ENOMEM leaves o with the caller. */
int dp_object_list_append(dp_object_list *l, dp_object o);
/* First object of that kind with that namespace (NULL matches any) and name. */
dp_object dp_object_list_find(const dp_object_list *l, dp_kind kind, const char *ns, const char *name);
size_t dp_object_list_count(const dp_object_list *l, dp_kind kind);

/* ---- names ---- */

const char *dp_kind_name(dp_kind k); /* "ResourceSlice", ...; "" for NONE and EXT */
/* The object's kind name, an extension kind's own ("ClusterQueue") too. */
const char *dp_object_kind_name(dp_object o);
/* A warning line for the tools (out->warnings); 0 or -ENOMEM. */
int dp_object_list_warn(dp_object_list *l, const char *fmt, ...) _printf_(2, 3);
/* The object's meta (every kind has one). */
dp_object_meta *dp_object_meta_of(dp_object o);
/* "ResourceSlice node-a-gpu", "Pod default/web-0": the form used in messages. */
void dp_object_describe(dp_object o, char *buf, size_t size);

/* ---- free: one per kind, accept NULL, return NULL ---- */

dp_resource_slice *dp_resource_slice_free(dp_resource_slice *s);
dp_device_class *dp_device_class_free(dp_device_class *c);
dp_resource_claim *dp_resource_claim_free(dp_resource_claim *c);
dp_resource_claim_template *dp_resource_claim_template_free(dp_resource_claim_template *t);
dp_device_taint_rule *dp_device_taint_rule_free(dp_device_taint_rule *r);
dp_node *dp_node_free(dp_node *n);
dp_pod *dp_pod_free(dp_pod *p);
dp_namespace *dp_namespace_free(dp_namespace *n);
dp_pod_group *dp_pod_group_free(dp_pod_group *g);
dp_deployment *dp_deployment_free(dp_deployment *d);
dp_priority_class *dp_priority_class_free(dp_priority_class *pc);
dp_pod_disruption_budget *dp_pod_disruption_budget_free(dp_pod_disruption_budget *b);
/* Any kind. */
void dp_object_free(dp_object o);
/* Pieces that other modules build (the allocator fills an allocation). */
dp_allocation_result *dp_allocation_result_free(dp_allocation_result *a);
void dp_device_allocation_result_done(dp_device_allocation_result *r);
void dp_node_selector_done(dp_node_selector *ns);
dp_node_selector *dp_node_selector_free(dp_node_selector *ns);
dp_label_selector *dp_label_selector_free(dp_label_selector *ls);
void dp_toleration_done(dp_toleration *t);
void dp_object_meta_done(dp_object_meta *m);
/* An array of n labels / taints and their strings (NULL is fine). */
void dp_kvs_free(dp_kv *v, size_t n);
void dp_taints_free(dp_taint *v, size_t n);
DEFINE_FREEP(dp_resource_slice, dp_resource_slice_free)
DEFINE_FREEP(dp_resource_claim, dp_resource_claim_free)
DEFINE_FREEP(dp_allocation_result, dp_allocation_result_free)

/* Deep copies (NULL on OOM). A cloned claim leaves out status.devices
 * (driver-written state). */
dp_resource_claim *dp_resource_claim_clone(const dp_resource_claim *c);
dp_node_selector *dp_node_selector_clone(const dp_node_selector *ns);
int dp_toleration_copy(dp_toleration *dst, const dp_toleration *src);

/* ---- decode ---- */

/* Decode one document tree: an object, or a `List`/`*List` whose items are
 * objects. Objects are appended to `out` in order, all or nothing. `source`
 * names the file in messages and in hdr.source; doc_index counts documents
 * within that file (from 0; messages say "document N" from 1). Decoding
 * checks structure (known fields, types, one-of fields) but not limits and
 * rules: call dp_model_validate() for those. Objects of a kind the model
 * does not know are not errors: they are counted in out->skipped. */
int dp_model_decode(const dp_doc_node *root, const char *source, size_t doc_index, dp_object_list *out, dp_error *err);
/* Parse a YAML/JSON stream (multi-document) and decode every document. */
int dp_model_decode_buffer(const char *buf, size_t len, const char *source, dp_object_list *out, dp_error *err);

/* ---- validate (model/validate.c) ---- */

/* Per-object Kubernetes validation (names, limits, one-of rules, counters
 * of a slice against its own sets). */
int dp_object_validate(dp_object o, dp_error *err);
/* Every object, then cross-object rules: pools (generation, slice count,
 * duplicate devices and counter sets per pool, counters consumed beyond their
 * set, unknown counter sets), duplicate object names. */
int dp_model_validate(const dp_object_list *l, dp_error *err);

/* Name rules, exported for other modules' inputs (profiles, CLI flags).
 * Each returns 0 or -EINVAL with a message saying which rule. */
int dp_validate_dns_label(const char *s, dp_error *err);
int dp_validate_dns_subdomain(const char *s, dp_error *err);
/* A label key / taint key / condition type: [prefix/]name. */
int dp_validate_qualified_name(const char *s, dp_error *err);
int dp_validate_label_value(const char *s, dp_error *err);
/* A device attribute or capacity name: [domain/]C-identifier. */
int dp_validate_device_qualified_name(const char *s, dp_error *err);
/* A fully qualified one (domain required): constraints. */
int dp_validate_device_full_qualified_name(const char *s, dp_error *err);
/* An extended resource name: domain/name, outside kubernetes.io. */
int dp_validate_extended_resource_name(const char *s, dp_error *err);
/* A container resource name: cpu, memory, ephemeral-storage, hugepages-<size>,
 * or an extended resource name. */
int dp_validate_container_resource_name(const char *s, dp_error *err);
bool dp_is_extended_resource_name(const char *s);

/* ---- encode (to doc trees; keys sorted as kubectl prints them) ---- */

/* NULL on OOM. Nodes belong to `set`. Empty/unset fields are omitted as Go's
 * omitempty does. Quantities print in canonical form. */
dp_doc_node *dp_resource_claim_encode(dp_doc_set *set, const dp_resource_claim *c);
dp_doc_node *dp_resource_slice_encode(dp_doc_set *set, const dp_resource_slice *s);
dp_doc_node *dp_allocation_result_encode(dp_doc_set *set, const dp_allocation_result *a);
dp_doc_node *dp_object_meta_encode(dp_doc_set *set, const dp_object_meta *m);
dp_doc_node *dp_node_selector_encode(dp_doc_set *set, const dp_node_selector *ns);
dp_doc_node *dp_quantity_encode(dp_doc_set *set, const dp_quantity *q);
/* Any object (kinds not listed above encode their metadata and the fields
 * devplane keeps). */
dp_doc_node *dp_object_encode(dp_doc_set *set, dp_object o);
/* A `kind: List` of objects. */
dp_doc_node *dp_object_list_encode(dp_doc_set *set, const dp_object_list *l);

/* An encoder for many objects in a row (printing a List): it builds the very
 * tree dp_*_encode() would, without a doc set and without copying the
 * object's strings, in memory of its own that the next tree reuses. */
typedef struct dp_encoder dp_encoder;
dp_encoder *dp_encoder_new(void); /* NULL on OOM */
dp_encoder *dp_encoder_free(dp_encoder *e);
DEFINE_FREEP(dp_encoder, dp_encoder_free)
/* The tree dp_resource_claim_encode() builds for c. It points into c and
 * into e: valid until the next call on e, e's free or c's. NULL on OOM. */
const dp_doc_node *dp_encoder_claim(dp_encoder *e, const dp_resource_claim *c);

/* ---- load (model/load.c: the file-reading entry) ---- */

/* Read files and directories (a directory contributes its *.yaml, *.yml and
 * *.json files sorted by name, not recursing), decode everything in order,
 * then dp_model_validate() the whole collection. On success *ret is a new
 * list; on failure nothing is returned and err names the first bad object. */
int dp_model_load(const char *const *paths, size_t n_paths, dp_object_list **ret, dp_error *err);
/* Decode one file into `out` (no validation); all or nothing. */
int dp_model_load_file(const char *path, dp_object_list *out, dp_error *err);

/* Read standard input whole (capped at DP_DOC_MAX_INPUT; -E2BIG past it):
 * what `-f -` names. *ret is NUL-terminated. */
int dp_model_read_stdin(char **ret, size_t *ret_len, dp_error *err);
/* dp_model_load's path for standard input. */
#define DP_MODEL_STDIN "-"
/* The name standard input has in messages and hdr.source. */
#define DP_MODEL_STDIN_NAME "<stdin>"

/* ---- lookups (model/lookup.c) ---- */

/* Value of key in a label/annotation/nodeSelector array; NULL if absent. */
const char *dp_kv_get(const dp_kv *v, size_t n, const char *key);
/* core/v1 Toleration.ToleratesTaint: the effect matches (an empty one: any),
 * the key (an empty one: any), then the operator: Exists, any value; Equal
 * or none, the same value (absent is ""); another, nothing. */
bool dp_toleration_tolerates(const dp_toleration *t, const dp_taint *x);
/* Whether one of n tolerations tolerates x. */
bool dp_tolerations_tolerate(const dp_toleration *v, size_t n, const dp_taint *x);
/* core/v1 NodeSelectorTerm on a node given by its labels and name: every
 * matchExpression on the labels and every matchField (only metadata.name)
 * on the name; a term with neither matches nothing. A NodeSelector's terms
 * are ORed (none: nothing matches). In, NotIn, Exists, DoesNotExist, and
 * Gt/Lt comparing integers. */
bool dp_node_selector_term_matches(const dp_node_selector_term *t, const dp_kv *labels, size_t n_labels,
                                   const char *name);
bool dp_node_selector_matches(const dp_node_selector *ns, const dp_kv *labels, size_t n_labels, const char *name);
const char *dp_object_label(dp_object o, const char *key);
/* The pod's gang: spec.schedulingGroup.podGroupName, else the label
 * DP_POD_GROUP_LABEL, else Volcano's annotation, else KAI's annotation or
 * label (objects.h), else NULL. */
const char *dp_pod_group_name(const dp_pod *p);
/* Which API a PodGroup was read from (its hdr.api_version). */
dp_pod_group_api dp_pod_group_api_of(const dp_pod_group *g);
/* Whether p joins g by the rule of g's API. */
bool dp_pod_group_has_member(const dp_pod_group *g, const dp_pod *p);
const dp_device *dp_resource_slice_find_device(const dp_resource_slice *s, const char *name);
/* Split a device qualified name: "domain/id", or "id" which belongs to the
 * driver's domain (Kubernetes' rule). *ret_domain is not NUL-terminated at
 * the slash: use *ret_domain_len. */
void dp_qualified_name_split(const char *name, const char *driver, const char **ret_domain, size_t *ret_domain_len,
                             const char **ret_id);
/* Attribute / capacity by qualified name under that rule ("gpu.example.com/model"
 * finds an attribute written "model" on a gpu.example.com device). */
const dp_device_attribute *dp_device_find_attribute(const dp_device *d, const char *driver, const char *name);
const dp_device_capacity *dp_device_find_capacity(const dp_device *d, const char *driver, const char *name);

/* ---- workloads (model/workload.c) ---- */

/* Append an owner's Pods to out, in its namespace, with the template's
 * labels and spec and a controller owner reference to it: a Deployment,
 * ReplicaSet or StatefulSet its `replicas`, a Job the pods it runs at once,
 * named "<owner>-<i>" (i from 0, so runs are deterministic; a StatefulSet's
 * own rule), a DaemonSet one per node of `nodes` whose labels its
 * template's nodeSelector accepts, named "<owner>-<node>", tied to its node by
 * a metadata.name node affinity and tolerating cordoned nodes, as the
 * DaemonSet controller writes them. All or nothing. */
int dp_deployment_expand(const dp_deployment *d, const dp_node *const *nodes, size_t n_nodes, dp_object_list *out,
                         dp_error *err);
/* An owner standing up more pods than this is -E2BIG (Kubernetes has no
 * such limit; the simulator's runs would not end). */
#define DP_WORKLOAD_PODS_MAX 100000
/* Stand up the pods of every owner in l (appended at the end), except an
 * owner whose pods are already there: an object of l names it in its
 * ownerReferences (a Pod its ReplicaSet, a ReplicaSet its Deployment), as a
 * `kubectl get` dump has them. Then dp_model_generate_names(). */
int dp_model_expand_workloads(dp_object_list *l, const dp_node *const *nodes, size_t n_nodes, dp_error *err);

/* ---- generated names (model/generate.c) ---- */

/* Give every object of l that has metadata.generateName and no name a name,
 * as the API server would: the prefix (cut to 58 characters) and 5
 * characters of its alphabet. The suffix is a hash of the kind, namespace,
 * prefix and how many objects before it had the same ones, so the same input
 * gives the same names on every run; a name that is taken is skipped. */
int dp_model_generate_names(dp_object_list *l, dp_error *err);

/* Objects as the API server stores them, before any scheduler sees them
 * (docs/api-defaults.md lists each default and where it comes from):
 *   Node   status.allocatable from status.capacity when it is absent;
 *          allocatable pods 110 when neither has it (the kubelet's
 *          --max-pods default; warning).
 *   Pod    spec.schedulerName default-scheduler; container requests from
 *          limits; spec.priority from spec.priorityClassName (or the
 *          globalDefault class, or 0; a class not in l: warning, 0) and
 *          preemptionPolicy from the class, else PreemptLowerPriority (the
 *          Priority admission plugin; the system classes
 *          system-cluster-critical and system-node-critical always exist);
 *          the not-ready and unreachable NoExecute tolerations for 300 s
 *          (DefaultTolerationSeconds) unless the pod tolerates those taints.
 * A field the input sets is kept. Warnings go to l->warnings. -ENOMEM. */
int dp_model_apply_defaults(dp_object_list *l, dp_error *err);
/* The name of a toleration DefaultTolerationSeconds adds: true for the
 * not-ready/unreachable NoExecute Exists tolerations. */
bool dp_model_is_default_toleration(const dp_toleration *t);
#define DP_GENERATE_NAME_SUFFIX 5
