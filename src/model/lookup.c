/* SPDX-License-Identifier: Apache-2.0
 *
 * lookup.c — small read-only queries over decoded objects.
 */
#include "model/model.h"

const char *dp_kv_get(const dp_kv *v, size_t n, const char *key) {
        if (!key) return NULL;
        for (size_t i = 0; i < n; i++)
                if (streq(v[i].key, key)) return v[i].value;
        return NULL;
}

const char *dp_object_label(dp_object o, const char *key) {
        const dp_object_meta *m = dp_object_meta_of(o);
        return m ? dp_kv_get(m->labels, m->n_labels, key) : NULL;
}

static const char *group_by_api(const dp_pod *p, dp_pod_group_api api) {
        const dp_object_meta *m = &p->meta;
        switch (api) {
        case DP_POD_GROUP_NATIVE: return p->scheduling_group;
        case DP_POD_GROUP_COSCHEDULING: return dp_kv_get(m->labels, m->n_labels, DP_POD_GROUP_LABEL);
        case DP_POD_GROUP_VOLCANO: return dp_kv_get(m->annotations, m->n_annotations, DP_VOLCANO_GROUP_ANNOTATION);
        case DP_POD_GROUP_KAI: {
                const char *a = dp_kv_get(m->annotations, m->n_annotations, DP_KAI_GROUP_KEY);
                return a ? a : dp_kv_get(m->labels, m->n_labels, DP_KAI_GROUP_KEY);
        }
        }
        return NULL;
}

const char *dp_pod_group_name(const dp_pod *p) {
        static const dp_pod_group_api order[] = {DP_POD_GROUP_NATIVE, DP_POD_GROUP_COSCHEDULING, DP_POD_GROUP_VOLCANO,
                                                 DP_POD_GROUP_KAI};
        for (size_t i = 0; p && i < ELEMENTSOF(order); i++) {
                const char *g = group_by_api(p, order[i]);
                if (g) return g;
        }
        return NULL;
}

dp_pod_group_api dp_pod_group_api_of(const dp_pod_group *g) {
        const char *v = g->hdr.api_version ? g->hdr.api_version : "";
        if (startswith(v, "scheduling.volcano.sh/")) return DP_POD_GROUP_VOLCANO;
        if (startswith(v, "scheduling.run.ai/")) return DP_POD_GROUP_KAI;
        if (streq(v, "scheduling.k8s.io/v1alpha2")) return DP_POD_GROUP_NATIVE;
        return DP_POD_GROUP_COSCHEDULING;
}

bool dp_pod_group_has_member(const dp_pod_group *g, const dp_pod *p) {
        return streq_ptr(group_by_api(p, dp_pod_group_api_of(g)), g->meta.name);
}

const dp_device *dp_resource_slice_find_device(const dp_resource_slice *s, const char *name) {
        if (!s || !name) return NULL;
        for (size_t i = 0; i < s->n_devices; i++)
                if (streq_ptr(s->devices[i].name, name)) return &s->devices[i];
        return NULL;
}

void dp_qualified_name_split(const char *name, const char *driver, const char **ret_domain, size_t *ret_domain_len,
                             const char **ret_id) {
        const char *slash = strchr(name, '/');
        if (slash) {
                *ret_domain = name;
                *ret_domain_len = (size_t)(slash - name);
                *ret_id = slash + 1;
        } else {
                *ret_domain = driver ? driver : "";
                *ret_domain_len = strlen(*ret_domain);
                *ret_id = name;
        }
}

static bool names_match(const char *a, const char *b, const char *driver) {
        const char *da, *db, *ia, *ib;
        size_t la, lb;
        dp_qualified_name_split(a, driver, &da, &la, &ia);
        dp_qualified_name_split(b, driver, &db, &lb, &ib);
        return la == lb && memcmp(da, db, la) == 0 && streq(ia, ib);
}

const dp_device_attribute *dp_device_find_attribute(const dp_device *d, const char *driver, const char *name) {
        if (!d || !name) return NULL;
        for (size_t i = 0; i < d->n_attributes; i++)
                if (names_match(d->attributes[i].name, name, driver)) return &d->attributes[i];
        return NULL;
}

const dp_device_capacity *dp_device_find_capacity(const dp_device *d, const char *driver, const char *name) {
        if (!d || !name) return NULL;
        for (size_t i = 0; i < d->n_capacity; i++)
                if (names_match(d->capacity[i].name, name, driver)) return &d->capacity[i];
        return NULL;
}

bool dp_toleration_tolerates(const dp_toleration *t, const dp_taint *x) {
        if (t->effect && t->effect[0] && !streq_ptr(t->effect, x->effect)) return false;
        if (t->key && t->key[0] && !streq_ptr(t->key, x->key)) return false;
        if (t->op && streq(t->op, "Exists")) return true;
        if (t->op && t->op[0] && !streq(t->op, "Equal")) return false;
        return streq(t->value ? t->value : "", x->value ? x->value : "");
}

bool dp_tolerations_tolerate(const dp_toleration *v, size_t n, const dp_taint *x) {
        for (size_t i = 0; i < n; i++)
                if (dp_toleration_tolerates(&v[i], x)) return true;
        return false;
}

/* One NodeSelectorRequirement on a value (NULL: the label is absent). */
static bool requirement_matches(const dp_node_selector_requirement *r, const char *value) {
        switch (r->op) {
        case DP_NS_OP_IN:
        case DP_NS_OP_NOT_IN: {
                bool in = false;
                for (size_t i = 0; value && i < r->n_values && !in; i++)
                        in = streq(r->values[i], value);
                return r->op == DP_NS_OP_IN ? in : !in;
        }
        case DP_NS_OP_EXISTS: return value != NULL;
        case DP_NS_OP_DOES_NOT_EXIST: return value == NULL;
        case DP_NS_OP_GT:
        case DP_NS_OP_LT: {
                if (!value || r->n_values != 1) return false;
                char *e1 = NULL, *e2 = NULL;
                long long a = strtoll(value, &e1, 10), b = strtoll(r->values[0], &e2, 10);
                if (*e1 || *e2) return false;
                return r->op == DP_NS_OP_GT ? a > b : a < b;
        }
        }
        return false;
}

bool dp_node_selector_term_matches(const dp_node_selector_term *t, const dp_kv *labels, size_t n_labels,
                                   const char *name) {
        if (t->n_match_expressions == 0 && t->n_match_fields == 0) return false;
        for (size_t i = 0; i < t->n_match_expressions; i++) {
                const dp_node_selector_requirement *r = &t->match_expressions[i];
                if (!requirement_matches(r, dp_kv_get(labels, n_labels, r->key))) return false;
        }
        for (size_t i = 0; i < t->n_match_fields; i++) {
                const dp_node_selector_requirement *r = &t->match_fields[i];
                if (!streq(r->key, "metadata.name") || !requirement_matches(r, name)) return false;
        }
        return true;
}

bool dp_node_selector_matches(const dp_node_selector *ns, const dp_kv *labels, size_t n_labels, const char *name) {
        for (size_t i = 0; i < ns->n_terms; i++)
                if (dp_node_selector_term_matches(&ns->terms[i], labels, n_labels, name)) return true;
        return false;
}
