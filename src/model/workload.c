/* SPDX-License-Identifier: Apache-2.0
 *
 * workload.c — standing up the pods of a pod owner (Deployment, ReplicaSet,
 * StatefulSet, Job, DaemonSet). The owner's template is kept as JSON, so each
 * pod is decoded by the Pod decoder itself (same checks, same messages) from a
 * tree built around it.
 */
#include <stdio.h>

#include "base/hashmap.h"
#include "doc/builder.h"
#include "model/model.h"

static const char *owner_api_version(dp_kind k) { return k == DP_KIND_JOB ? "batch/v1" : "apps/v1"; }

/* Map `from` without `skip` (borrowed pieces) into a new map. */
static dp_doc_node *map_without(dp_doc_builder *b, const dp_doc_node *from, const char *skip) {
        dp_doc_node *out = dp_doc_b_map(b);
        for (size_t k = 0; from && from->type == DP_DOC_MAP && k < from->n; k++)
                if (!streq(from->pairs[k].key, skip)) dp_doc_b_put(b, out, from->pairs[k].key, from->pairs[k].value);
        return out;
}

/* The template's affinity with its required node affinity replaced by one
 * term, metadata.name In [node], as the DaemonSet controller does
 * (ReplaceDaemonSetPodNodeNameNodeAffinity): preferred node affinity, pod
 * affinity and anti-affinity stay as written. */
static dp_doc_node *daemon_affinity(dp_doc_builder *b, const dp_doc_node *tmpl_aff, const char *node) {
        const dp_doc_node *tmpl_na =
                tmpl_aff && tmpl_aff->type == DP_DOC_MAP ? dp_doc_get(tmpl_aff, "nodeAffinity") : NULL;
        dp_doc_node *aff = map_without(b, tmpl_aff, "nodeAffinity");
        dp_doc_node *na = map_without(b, tmpl_na, "requiredDuringSchedulingIgnoredDuringExecution");
        dp_doc_node *req = dp_doc_b_map(b), *terms = dp_doc_b_seq(b), *term = dp_doc_b_map(b);
        dp_doc_node *fields = dp_doc_b_seq(b), *f = dp_doc_b_map(b), *vals = dp_doc_b_seq(b);
        dp_doc_b_push(b, vals, dp_doc_b_str(b, node));
        dp_doc_b_put_str(b, f, "key", "metadata.name");
        dp_doc_b_put_str(b, f, "operator", "In");
        dp_doc_b_put(b, f, "values", vals);
        dp_doc_b_push(b, fields, f);
        dp_doc_b_put(b, term, "matchFields", fields);
        dp_doc_b_push(b, terms, term);
        dp_doc_b_put(b, req, "nodeSelectorTerms", terms);
        dp_doc_b_put(b, na, "requiredDuringSchedulingIgnoredDuringExecution", req);
        dp_doc_b_put(b, aff, "nodeAffinity", na);
        return aff;
}

/* spec for a DaemonSet's pod on `node`: the template's, with the node
 * affinity of daemon_affinity and a toleration of cordoned nodes, as the
 * DaemonSet controller writes them. Pieces are borrowed from tmpl. */
static dp_doc_node *daemon_spec(dp_doc_builder *b, const dp_doc_node *spec, const char *node) {
        dp_doc_node *out = dp_doc_b_map(b), *tols = dp_doc_b_seq(b), *tol = dp_doc_b_map(b);
        const dp_doc_node *tmpl_aff = NULL;
        for (size_t k = 0; spec && spec->type == DP_DOC_MAP && b->r >= 0 && k < spec->n; k++) {
                const char *key = spec->pairs[k].key;
                const dp_doc_node *v = spec->pairs[k].value;
                if (streq(key, "nodeName")) continue;
                if (streq(key, "affinity")) {
                        tmpl_aff = v;
                        continue;
                }
                if (streq(key, "tolerations")) {
                        for (size_t i = 0; v->type == DP_DOC_SEQ && i < v->n; i++)
                                dp_doc_b_push(b, tols, v->items[i]);
                        continue;
                }
                dp_doc_b_put(b, out, key, (dp_doc_node *)v);
        }
        dp_doc_b_put_str(b, tol, "key", "node.kubernetes.io/unschedulable");
        dp_doc_b_put_str(b, tol, "operator", "Exists");
        dp_doc_b_put_str(b, tol, "effect", "NoSchedule");
        dp_doc_b_push(b, tols, tol);
        dp_doc_b_put(b, out, "tolerations", tols);
        dp_doc_b_put(b, out, "affinity", daemon_affinity(b, tmpl_aff, node));
        return out;
}

static dp_doc_node *replica_root(dp_doc_set *s, const dp_deployment *d, const dp_doc_node *tmpl, const char *name,
                                 const char *node) {
        dp_doc_builder b = DP_DOC_BUILDER_INIT(s);
        dp_doc_node *root = dp_doc_b_map(&b), *md = dp_doc_b_map(&b);
        dp_doc_b_put_str(&b, root, "apiVersion", "v1");
        dp_doc_b_put_str(&b, root, "kind", "Pod");
        dp_doc_b_put_str(&b, md, "name", name);
        dp_doc_b_put_str(&b, md, "namespace", d->meta.namespace);
        const dp_doc_node *tmd = dp_doc_get(tmpl, "metadata");
        for (size_t k = 0; tmd && tmd->type == DP_DOC_MAP && k < tmd->n; k++) {
                const char *key = tmd->pairs[k].key;
                if (streq(key, "name") || streq(key, "namespace") || streq(key, "generateName") ||
                    streq(key, "ownerReferences"))
                        continue;
                dp_doc_b_put(&b, md, key, tmd->pairs[k].value);
        }
        dp_doc_node *owners = dp_doc_b_seq(&b), *owner = dp_doc_b_map(&b);
        dp_doc_b_put_str(&b, owner, "apiVersion", owner_api_version(d->hdr.kind));
        dp_doc_b_put_str(&b, owner, "kind", dp_kind_name(d->hdr.kind));
        dp_doc_b_put_str(&b, owner, "name", d->meta.name ? d->meta.name : "");
        dp_doc_b_put_str(&b, owner, "uid", d->meta.uid);
        dp_doc_b_put_bool(&b, owner, "controller", true);
        dp_doc_b_push(&b, owners, owner);
        dp_doc_b_put(&b, md, "ownerReferences", owners);
        dp_doc_b_put(&b, root, "metadata", md);
        const dp_doc_node *spec = dp_doc_get(tmpl, "spec");
        if (node)
                dp_doc_b_put(&b, root, "spec", daemon_spec(&b, spec, node));
        else if (spec)
                dp_doc_b_put(&b, root, "spec", (dp_doc_node *)spec);
        return b.r < 0 ? NULL : root;
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
