/* SPDX-License-Identifier: Apache-2.0
 *
 * workload.c — standing up the pods of a workload object. A Deployment's
 * template is kept as JSON, so each replica is decoded by the Pod decoder
 * itself (same checks, same messages) from a tree built around it.
 */
#include <stdio.h>

#include "model/model.h"

static dp_doc_node *replica_root(dp_doc_set *s, const dp_deployment *d, const dp_doc_node *tmpl, size_t i) {
        dp_doc_node *root = dp_doc_new_map(s), *md = dp_doc_new_map(s);
        if (!root || !md) return NULL;
        char name[300];
        snprintf(name, sizeof(name), "%s-%zu", d->meta.name ? d->meta.name : "deployment", i);
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
                r = dp_doc_map_add(s, owner, "apiVersion", dp_doc_new_str(s, "apps/v1"));
                if (r >= 0) r = dp_doc_map_add(s, owner, "kind", dp_doc_new_str(s, "Deployment"));
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
        if (r >= 0 && spec) r = dp_doc_map_add(s, root, "spec", (dp_doc_node *)spec);
        return r >= 0 ? root : NULL;
}

int dp_deployment_expand(const dp_deployment *d, dp_object_list *out, dp_error *err) {
        assert_return(d && out, -EINVAL);
        if (!d->template_json)
                return dp_error_set(err, -EINVAL, "Deployment %s: spec.template: required", d->meta.name);
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        if (!s) return dp_error_set(err, -ENOMEM, "out of memory");
        int r = dp_doc_parse(s, d->template_json, strlen(d->template_json), "template", err);
        if (r < 0) return r;
        const dp_doc_node *tmpl = dp_doc_root(s, 0);
        size_t start = out->n;
        for (int32_t i = 0; i < d->replicas; i++) {
                dp_doc_node *root = replica_root(s, d, tmpl, (size_t)i);
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
