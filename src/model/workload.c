/* SPDX-License-Identifier: Apache-2.0
 *
 * workload.c — standing up the pods of a pod owner (Deployment, ReplicaSet,
 * StatefulSet, Job, DaemonSet). The owner's template is kept as JSON, so each
 * pod is decoded by the Pod decoder itself (same checks, same messages) from a
 * tree built around it.
 */
#include <stdio.h>

#include "base/hashmap.h"
#include "model/model.h"

static const char *owner_api_version(dp_kind k) { return k == DP_KIND_JOB ? "batch/v1" : "apps/v1"; }

/* Map `from` without `skip` (borrowed pieces) into a new map of s. */
static dp_doc_node *map_without(dp_doc_set *s, const dp_doc_node *from, const char *skip) {
        dp_doc_node *out = dp_doc_new_map(s);
        int r = out ? 0 : -ENOMEM;
        for (size_t k = 0; from && from->type == DP_DOC_MAP && r >= 0 && k < from->n; k++)
                if (!streq(from->pairs[k].key, skip))
                        r = dp_doc_map_add(s, out, from->pairs[k].key, from->pairs[k].value);
        return r >= 0 ? out : NULL;
}

/* The template's affinity with its required node affinity replaced by one
 * term, metadata.name In [node], as the DaemonSet controller does
 * (ReplaceDaemonSetPodNodeNameNodeAffinity): preferred node affinity, pod
 * affinity and anti-affinity stay as written. */
static dp_doc_node *daemon_affinity(dp_doc_set *s, const dp_doc_node *tmpl_aff, const char *node) {
        const dp_doc_node *tmpl_na =
                tmpl_aff && tmpl_aff->type == DP_DOC_MAP ? dp_doc_get(tmpl_aff, "nodeAffinity") : NULL;
        dp_doc_node *aff = map_without(s, tmpl_aff, "nodeAffinity");
        dp_doc_node *na = map_without(s, tmpl_na, "requiredDuringSchedulingIgnoredDuringExecution");
        dp_doc_node *req = dp_doc_new_map(s), *terms = dp_doc_new_seq(s), *term = dp_doc_new_map(s);
        dp_doc_node *fields = dp_doc_new_seq(s), *f = dp_doc_new_map(s), *vals = dp_doc_new_seq(s);
        if (!aff || !na || !req || !terms || !term || !fields || !f || !vals) return NULL;
        int r = dp_doc_seq_add(s, vals, dp_doc_new_str(s, node));
        if (r >= 0) r = dp_doc_map_add(s, f, "key", dp_doc_new_str(s, "metadata.name"));
        if (r >= 0) r = dp_doc_map_add(s, f, "operator", dp_doc_new_str(s, "In"));
        if (r >= 0) r = dp_doc_map_add(s, f, "values", vals);
        if (r >= 0) r = dp_doc_seq_add(s, fields, f);
        if (r >= 0) r = dp_doc_map_add(s, term, "matchFields", fields);
        if (r >= 0) r = dp_doc_seq_add(s, terms, term);
        if (r >= 0) r = dp_doc_map_add(s, req, "nodeSelectorTerms", terms);
        if (r >= 0) r = dp_doc_map_add(s, na, "requiredDuringSchedulingIgnoredDuringExecution", req);
        if (r >= 0) r = dp_doc_map_add(s, aff, "nodeAffinity", na);
        return r >= 0 ? aff : NULL;
}

/* spec for a DaemonSet's pod on `node`: the template's, with the node
 * affinity of daemon_affinity and a toleration of cordoned nodes, as the
 * DaemonSet controller writes them. Pieces are borrowed from tmpl. */
static dp_doc_node *daemon_spec(dp_doc_set *s, const dp_doc_node *spec, const char *node) {
        dp_doc_node *out = dp_doc_new_map(s), *tols = dp_doc_new_seq(s), *tol = dp_doc_new_map(s);
        if (!out || !tols || !tol) return NULL;
        int r = 0;
        const dp_doc_node *tmpl_aff = NULL;
        for (size_t k = 0; spec && spec->type == DP_DOC_MAP && r >= 0 && k < spec->n; k++) {
                const char *key = spec->pairs[k].key;
                const dp_doc_node *v = spec->pairs[k].value;
                if (streq(key, "nodeName")) continue;
                if (streq(key, "affinity")) {
                        tmpl_aff = v;
                        continue;
                }
                if (streq(key, "tolerations")) {
                        for (size_t i = 0; v->type == DP_DOC_SEQ && r >= 0 && i < v->n; i++)
                                r = dp_doc_seq_add(s, tols, v->items[i]);
                        continue;
                }
                r = dp_doc_map_add(s, out, key, (dp_doc_node *)v);
        }
        if (r >= 0) r = dp_doc_map_add(s, tol, "key", dp_doc_new_str(s, "node.kubernetes.io/unschedulable"));
        if (r >= 0) r = dp_doc_map_add(s, tol, "operator", dp_doc_new_str(s, "Exists"));
        if (r >= 0) r = dp_doc_map_add(s, tol, "effect", dp_doc_new_str(s, "NoSchedule"));
        if (r >= 0) r = dp_doc_seq_add(s, tols, tol);
        if (r >= 0) r = dp_doc_map_add(s, out, "tolerations", tols);
        dp_doc_node *aff = r >= 0 ? daemon_affinity(s, tmpl_aff, node) : NULL;
        if (r >= 0) r = aff ? dp_doc_map_add(s, out, "affinity", aff) : -ENOMEM;
        return r >= 0 ? out : NULL;
}

static dp_doc_node *replica_root(dp_doc_set *s, const dp_deployment *d, const dp_doc_node *tmpl, const char *name,
                                 const char *node) {
        dp_doc_node *root = dp_doc_new_map(s), *md = dp_doc_new_map(s);
        if (!root || !md) return NULL;
        int r = dp_doc_map_add(s, root, "apiVersion", dp_doc_new_str(s, "v1"));
        if (r >= 0) r = dp_doc_map_add(s, root, "kind", dp_doc_new_str(s, "Pod"));
        if (r >= 0) r = dp_doc_map_add(s, md, "name", dp_doc_new_str(s, name));
        if (r >= 0 && d->meta.namespace) r = dp_doc_map_add(s, md, "namespace", dp_doc_new_str(s, d->meta.namespace));
        const dp_doc_node *tmd = dp_doc_get(tmpl, "metadata");
        if (tmd && tmd->type == DP_DOC_MAP)
                for (size_t k = 0; r >= 0 && k < tmd->n; k++) {
                        const char *key = tmd->pairs[k].key;
                        if (streq(key, "name") || streq(key, "namespace") || streq(key, "generateName") ||
                            streq(key, "ownerReferences"))
                                continue;
                        r = dp_doc_map_add(s, md, key, tmd->pairs[k].value);
                }
        dp_doc_node *owners = dp_doc_new_seq(s), *owner = dp_doc_new_map(s);
        if (r >= 0 && owners && owner) {
                r = dp_doc_map_add(s, owner, "apiVersion", dp_doc_new_str(s, owner_api_version(d->hdr.kind)));
                if (r >= 0) r = dp_doc_map_add(s, owner, "kind", dp_doc_new_str(s, dp_kind_name(d->hdr.kind)));
                if (r >= 0) r = dp_doc_map_add(s, owner, "name", dp_doc_new_str(s, d->meta.name ? d->meta.name : ""));
                if (r >= 0 && d->meta.uid) r = dp_doc_map_add(s, owner, "uid", dp_doc_new_str(s, d->meta.uid));
                if (r >= 0) r = dp_doc_map_add(s, owner, "controller", dp_doc_new_bool(s, true));
                if (r >= 0) r = dp_doc_seq_add(s, owners, owner);
                if (r >= 0) r = dp_doc_map_add(s, md, "ownerReferences", owners);
        } else {
                r = -ENOMEM;
        }
        if (r >= 0) r = dp_doc_map_add(s, root, "metadata", md);
        const dp_doc_node *spec = dp_doc_get(tmpl, "spec");
        if (r >= 0 && node) {
                dp_doc_node *ds = daemon_spec(s, spec, node);
                r = ds ? dp_doc_map_add(s, root, "spec", ds) : -ENOMEM;
        } else if (r >= 0 && spec)
                r = dp_doc_map_add(s, root, "spec", (dp_doc_node *)spec);
        return r >= 0 ? root : NULL;
}

/* Does the template's nodeSelector let its pod run on the node? (The
 * DaemonSet controller makes no pod where it could never run.) */
static bool selects(const dp_pod *tmpl, const dp_node *n) {
        for (size_t i = 0; tmpl && i < tmpl->n_node_selector; i++) {
                const char *v = dp_kv_get(n->meta.labels, n->meta.n_labels, tmpl->node_selector[i].key);
                if (!v || !streq(v, tmpl->node_selector[i].value)) return false;
        }
        return true;
}

int dp_deployment_expand(const dp_deployment *d, const dp_node *const *nodes, size_t n_nodes, dp_object_list *out,
                         dp_error *err) {
        assert_return(d && out, -EINVAL);
        assert_return(nodes || n_nodes == 0, -EINVAL);
        if (!d->template_json)
                return dp_error_set(err, -EINVAL, "%s %s: spec.template: required", dp_kind_name(d->hdr.kind),
                                    d->meta.name);
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        if (!s) return dp_error_set(err, -ENOMEM, "out of memory");
        int r = dp_doc_parse(s, d->template_json, strlen(d->template_json), "template", err);
        if (r < 0) return r;
        const dp_doc_node *tmpl = dp_doc_root(s, 0);
        bool ds = d->hdr.kind == DP_KIND_DAEMON_SET;
        size_t n = ds ? n_nodes : (size_t)DP_MAX(d->replicas, 0);
        if (n > DP_WORKLOAD_PODS_MAX)
                return dp_error_set(err, -E2BIG, "%s: %s %s: stands up %zu pods, more than %d", d->hdr.source,
                                    dp_kind_name(d->hdr.kind), d->meta.name, n, DP_WORKLOAD_PODS_MAX);
        size_t start = out->n;
        for (size_t i = 0; i < n; i++) {
                if (ds && !selects(d->template_, nodes[i])) continue;
                char name[320];
                if (ds)
                        snprintf(name, sizeof(name), "%.60s-%.253s", d->meta.name ? d->meta.name : "daemonset",
                                 nodes[i]->meta.name);
                else
                        snprintf(name, sizeof(name), "%.253s-%zu", d->meta.name ? d->meta.name : "deployment", i);
                dp_doc_node *root = replica_root(s, d, tmpl, name, ds ? nodes[i]->meta.name : NULL);
                r = root ? dp_model_decode(root, d->hdr.source, d->hdr.doc_index, out, err)
                         : dp_error_set(err, -ENOMEM, "out of memory");
                if (r < 0) {
                        while (out->n > start)
                                dp_object_free(out->items[--out->n]);
                        return r;
                }
        }
        return 0;
}

/* The pods an owner stood up (l->items[from..]) must not take the name of a
 * Pod the input defines (the store would refuse the second one). */
static int check_pod_names(const dp_object_list *l, size_t from, const dp_hashmap *pods, const dp_deployment *d,
                           dp_error *err) {
        for (size_t i = from; i < l->n; i++) {
                const dp_object_meta *m = dp_object_meta_of(l->items[i]);
                _cleanup_free_ char *key =
                        dp_asprintf("Pod/%s/%s", m->namespace ? m->namespace : "", m->name ? m->name : "");
                if (!key) return -ENOMEM;
                if (dp_hashmap_contains(pods, key))
                        return dp_error_set(err, -EINVAL,
                                            "%s: %s %s: its pod %s has the name of a Pod the input defines, which "
                                            "it does not own (ownerReferences): rename one of them",
                                            d->hdr.source, dp_kind_name(d->hdr.kind), d->meta.name, key + 4);
        }
        return 0;
}

/* "Deployment/ns/<name>" in *ret for a pod owned by ReplicaSet
 * "<name>-<hash>" and labelled pod-template-hash=<hash> (NULL when it is
 * not such a pod). 0, or -ENOMEM. */
static int deployment_key_of(const dp_object_meta *m, const dp_owner_ref *o, char **ret) {
        *ret = NULL;
        if (!o->kind || !streq(o->kind, "ReplicaSet") || !o->name) return 0;
        const char *hash = dp_kv_get(m->labels, m->n_labels, "pod-template-hash");
        size_t nl = strlen(o->name), hl = hash ? strlen(hash) : 0;
        if (!hl || nl <= hl + 1 || o->name[nl - hl - 1] != '-' || !streq(o->name + nl - hl, hash)) return 0;
        *ret = dp_asprintf("Deployment/%s/%.*s", m->namespace ? m->namespace : "", (int)(nl - hl - 1), o->name);
        return *ret ? 0 : -ENOMEM;
}

static bool is_owner_kind(dp_kind k) { return k >= DP_KIND_DEPLOYMENT && k <= DP_KIND_DAEMON_SET; }

int dp_model_expand_workloads(dp_object_list *l, const dp_node *const *nodes, size_t n_nodes, dp_error *err) {
        assert_return(l, -EINVAL);
        /* An owner written with only generateName (Kueue's sample Job) gets
         * its name first, so its pods are named after it and two such owners
         * in one namespace do not stand up pods of the same names. */
        int r = dp_model_generate_names(l, err);
        if (r < 0) return r;
        _cleanup_(dp_hashmap_freep) dp_hashmap *owned = dp_hashmap_new();
        if (!owned) return dp_error_set(err, -ENOMEM, "out of memory");
        char **keys = NULL;
        size_t n_keys = 0, cap = 0;
        for (size_t i = 0; r >= 0 && i < l->n; i++) {
                const dp_object_meta *m = dp_object_meta_of(l->items[i]);
                /* the owners named, and the Pods' own names ("Pod/ns/name") */
                bool pod = l->items[i].hdr->kind == DP_KIND_POD && m->name;
                for (size_t k = 0; r >= 0 && k < m->n_owner_references + pod; k++) {
                        const dp_owner_ref *o = k < m->n_owner_references ? &m->owner_references[k] : NULL;
                        char *key =
                                dp_asprintf("%s/%s/%s", o ? (o->kind ? o->kind : "") : "Pod",
                                            m->namespace ? m->namespace : "", o ? (o->name ? o->name : "") : m->name);
                        if (!key || DP_GROW(keys, cap, n_keys + 1) < 0) {
                                free(key);
                                r = -ENOMEM;
                                break;
                        }
                        keys[n_keys++] = key;
                        r = dp_hashmap_put(owned, key, key);
                        if (r == -EEXIST) r = 0;
                        /* A ReplicaSet's pods belong to its Deployment too, named
                         * "<deployment>-<pod-template-hash>" by the Deployment
                         * controller: a dump may hold the pods without the
                         * ReplicaSet, and the Deployment must not stand up more. */
                        _cleanup_free_ char *dkey = NULL;
                        if (o && r >= 0) r = deployment_key_of(m, o, &dkey);
                        if (dkey && DP_GROW(keys, cap, n_keys + 1) < 0) r = -ENOMEM;
                        if (dkey && r >= 0) {
                                keys[n_keys++] = TAKE_PTR(dkey);
                                r = dp_hashmap_put(owned, keys[n_keys - 1], keys[n_keys - 1]);
                                if (r == -EEXIST) r = 0;
                        }
                }
        }
        size_t n = l->n;
        for (size_t i = 0; r >= 0 && i < n; i++) {
                dp_object o = l->items[i];
                if (!is_owner_kind(o.hdr->kind)) continue;
                const dp_object_meta *m = &o.deployment->meta;
                _cleanup_free_ char *key = dp_asprintf("%s/%s/%s", dp_kind_name(o.hdr->kind),
                                                       m->namespace ? m->namespace : "", m->name ? m->name : "");
                if (!key) {
                        r = -ENOMEM;
                        break;
                }
                if (dp_hashmap_contains(owned, key)) continue; /* its pods (or ReplicaSets) are in the input */
                size_t from = l->n;
                r = dp_deployment_expand(o.deployment, nodes, n_nodes, l, err);
                if (r >= 0) r = check_pod_names(l, from, owned, o.deployment, err);
        }
        for (size_t i = 0; i < n_keys; i++)
                free(keys[i]);
        free(keys);
        if (r == -ENOMEM) return dp_error_set(err, -ENOMEM, "out of memory");
        if (r < 0) {
                while (l->n > n)
                        dp_object_free(l->items[--l->n]);
                return r;
        }
        return dp_model_generate_names(l, err);
}
