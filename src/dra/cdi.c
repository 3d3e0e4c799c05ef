/* SPDX-License-Identifier: Apache-2.0
 * cdi.c — CDI spec structs, names, cdiVersion, JSON (wire-protocols §6). */
#include <ctype.h>
#include <stdio.h>

#include "base/strv.h"
#include "doc/state-file.h"
#include "dra/cdi.h"

void dp_dra_cdi_edits_done(dp_dra_cdi_edits *e) {
        if (!e) return;
        dp_strv_free_n(e->env, e->n_env);
        for (size_t i = 0; i < e->n_nodes; i++)
                dp_free_many(e->nodes[i].path, e->nodes[i].host_path);
        free(e->nodes);
        for (size_t i = 0; i < e->n_mounts; i++) {
                dp_free_many(e->mounts[i].host_path, e->mounts[i].container_path);
                dp_strv_free_n(e->mounts[i].options, e->mounts[i].n_options);
                free(e->mounts[i].type);
        }
        free(e->mounts);
        memset(e, 0, sizeof(*e));
}

void dp_dra_cdi_spec_done(dp_dra_cdi_spec *s) {
        if (!s) return;
        free(s->kind);
        dp_dra_cdi_edits_done(&s->edits);
        for (size_t i = 0; i < s->n_devices; i++) {
                free(s->devices[i].name);
                dp_dra_cdi_edits_done(&s->devices[i].edits);
        }
        free(s->devices);
        memset(s, 0, sizeof(*s));
}

int dp_dra_cdi_edits_env(dp_dra_cdi_edits *e, const char *name, const char *value) {
        assert_return(e && name && value, -EINVAL);
        char *s = dp_asprintf("%s=%s", name, value);
        if (!s) return -ENOMEM;
        void *p = realloc(e->env, (e->n_env + 1) * sizeof(char *));
        if (!p) {
                free(s);
                return -ENOMEM;
        }
        e->env = p;
        e->env[e->n_env++] = s;
        return 0;
}

int dp_dra_cdi_edits_node(dp_dra_cdi_edits *e, const char *path, const char *host_path) {
        assert_return(e && path, -EINVAL);
        void *p = realloc(e->nodes, (e->n_nodes + 1) * sizeof(*e->nodes));
        if (!p) return -ENOMEM;
        e->nodes = p;
        dp_dra_cdi_node *n = &e->nodes[e->n_nodes];
        memset(n, 0, sizeof(*n));
        if (!(n->path = dp_strdup(path))) return -ENOMEM;
        if (host_path && !streq(host_path, path) && !(n->host_path = dp_strdup(host_path))) {
                free(n->path);
                return -ENOMEM;
        }
        e->n_nodes++;
        return 0;
}

int dp_dra_cdi_edits_mount(dp_dra_cdi_edits *e, const char *host_path, const char *container_path,
                           const char *const *options, size_t n_options) {
        assert_return(e && host_path && container_path && (options || !n_options), -EINVAL);
        void *p = realloc(e->mounts, (e->n_mounts + 1) * sizeof(*e->mounts));
        if (!p) return -ENOMEM;
        e->mounts = p;
        dp_dra_cdi_mount *m = &e->mounts[e->n_mounts];
        memset(m, 0, sizeof(*m));
        e->n_mounts++;
        if (!(m->host_path = dp_strdup(host_path)) || !(m->container_path = dp_strdup(container_path))) return -ENOMEM;
        if (n_options && !(m->options = calloc(n_options, sizeof(char *)))) return -ENOMEM;
        for (size_t i = 0; i < n_options; i++) {
                if (!(m->options[i] = dp_strdup(options[i]))) return -ENOMEM;
                m->n_options++;
        }
        return 0;
}

static int vcmp(const char *a, const char *b) {
        unsigned x[3] = {0}, y[3] = {0};
        sscanf(a, "%u.%u.%u", &x[0], &x[1], &x[2]);
        sscanf(b, "%u.%u.%u", &y[0], &y[1], &y[2]);
        for (int i = 0; i < 3; i++)
                if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
        return 0;
}

static void edits_version(const dp_dra_cdi_edits *e, const char **v) {
        for (size_t i = 0; i < e->n_mounts; i++)
                if (e->mounts[i].type && vcmp(*v, "0.4.0") < 0) *v = "0.4.0";
        for (size_t i = 0; i < e->n_nodes; i++)
                if (e->nodes[i].host_path && vcmp(*v, "0.5.0") < 0) *v = "0.5.0";
}

const char *dp_dra_cdi_min_version(const dp_dra_cdi_spec *s) {
        const char *v = "0.3.0";
        if (!s) return v;
        edits_version(&s->edits, &v);
        for (size_t i = 0; i < s->n_devices; i++) {
                edits_version(&s->devices[i].edits, &v);
                if (s->devices[i].name && isdigit((unsigned char)s->devices[i].name[0]) && vcmp(v, "0.5.0") < 0)
                        v = "0.5.0";
        }
        const char *slash = s->kind ? strchr(s->kind, '/') : NULL;
        if (slash && strchr(slash + 1, '.') && vcmp(v, "0.6.0") < 0) v = "0.6.0";
        return v;
}

/* vendor and class: letter first, [A-Za-z0-9_.-] inside, alnum last. */
static bool qualifier_part_ok(const char *s, size_t n) {
        if (n == 0 || !isalpha((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1])) return false;
        for (size_t i = 0; i < n; i++)
                if (!isalnum((unsigned char)s[i]) && !strchr("_.-", s[i])) return false;
        return true;
}

static bool device_name_ok(const char *s) {
        size_t n = strlen(s);
        if (n == 0 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1])) return false;
        for (size_t i = 0; i < n; i++)
                if (!isalnum((unsigned char)s[i]) && !strchr("_.:-", s[i])) return false;
        return true;
}

static int edits_check(const dp_dra_cdi_edits *e, const char *where, dp_error *err) {
        for (size_t i = 0; i < e->n_env; i++) {
                const char *eq = strchr(e->env[i], '=');
                if (!eq || eq == e->env[i])
                        return dp_error_set(err, -EINVAL, "%s: env \"%s\": must be NAME=VALUE", where, e->env[i]);
        }
        for (size_t i = 0; i < e->n_nodes; i++)
                if (!e->nodes[i].path[0])
                        return dp_error_set(err, -EINVAL, "%s: deviceNodes[%zu].path: required", where, i);
        for (size_t i = 0; i < e->n_mounts; i++)
                if (!e->mounts[i].host_path[0] || !e->mounts[i].container_path[0])
                        return dp_error_set(err, -EINVAL, "%s: mounts[%zu]: hostPath and containerPath are required",
                                            where, i);
        return 0;
}

int dp_dra_cdi_spec_check(const dp_dra_cdi_spec *s, dp_error *err) {
        assert_return(s, -EINVAL);
        const char *slash = s->kind ? strchr(s->kind, '/') : NULL;
        if (!slash || !qualifier_part_ok(s->kind, (size_t)(slash - s->kind)) ||
            !qualifier_part_ok(slash + 1, strlen(slash + 1)))
                return dp_error_set(err, -EINVAL, "kind \"%s\": must be <vendor>/<class> (CDI names)",
                                    s->kind ? s->kind : "");
        if (!s->n_devices) return dp_error_set(err, -EINVAL, "devices: at least one device is required");
        int r = edits_check(&s->edits, "containerEdits", err);
        for (size_t i = 0; r >= 0 && i < s->n_devices; i++) {
                const dp_dra_cdi_device *d = &s->devices[i];
                char where[160];
                snprintf(where, sizeof(where), "devices[%zu]", i);
                if (!d->name || !device_name_ok(d->name))
                        return dp_error_set(err, -EINVAL, "%s.name \"%s\": not a CDI device name", where,
                                            d->name ? d->name : "");
                if (!d->edits.n_env && !d->edits.n_nodes && !d->edits.n_mounts)
                        return dp_error_set(err, -EINVAL, "%s.containerEdits: must not be empty", where);
                for (size_t j = 0; j < i; j++)
                        if (streq(s->devices[j].name, d->name))
                                return dp_error_set(err, -EINVAL, "%s.name %s: duplicate", where, d->name);
                r = edits_check(&d->edits, where, err);
        }
        return r;
}

static void put_strv_nonempty(dp_doc_builder *b, dp_doc_node *m, const char *key, char *const *v, size_t n) {
        if (n) dp_doc_b_put_strv(b, m, key, v, n);
}

static dp_doc_node *edits(dp_doc_builder *b, const dp_dra_cdi_edits *x) {
        dp_doc_node *m = dp_doc_b_map(b);
        put_strv_nonempty(b, m, "env", x->env, x->n_env);
        if (x->n_nodes) {
                dp_doc_node *q = dp_doc_b_seq(b);
                for (size_t i = 0; i < x->n_nodes; i++) {
                        dp_doc_node *n = dp_doc_b_map(b);
                        dp_doc_b_put_str(b, n, "path", x->nodes[i].path);
                        dp_doc_b_put_str(b, n, "hostPath", x->nodes[i].host_path);
                        dp_doc_b_push(b, q, n);
                }
                dp_doc_b_put(b, m, "deviceNodes", q);
        }
        if (x->n_mounts) {
                dp_doc_node *q = dp_doc_b_seq(b);
                for (size_t i = 0; i < x->n_mounts; i++) {
                        const dp_dra_cdi_mount *mt = &x->mounts[i];
                        dp_doc_node *n = dp_doc_b_map(b);
                        dp_doc_b_put_str(b, n, "hostPath", mt->host_path);
                        dp_doc_b_put_str(b, n, "containerPath", mt->container_path);
                        put_strv_nonempty(b, n, "options", mt->options, mt->n_options);
                        dp_doc_b_put_str(b, n, "type", mt->type);
                        dp_doc_b_push(b, q, n);
                }
                dp_doc_b_put(b, m, "mounts", q);
        }
        return m;
}

int dp_dra_cdi_spec_encode(const dp_dra_cdi_spec *s, dp_strbuf *out) {
        assert_return(s && out, -EINVAL);
        _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
        if (!set) return -ENOMEM;
        dp_doc_builder b = DP_DOC_BUILDER_INIT(set);
        dp_doc_node *root = dp_doc_b_map(&b);
        dp_doc_b_put_str(&b, root, "cdiVersion", dp_dra_cdi_min_version(s));
        dp_doc_b_put_str(&b, root, "kind", s->kind ? s->kind : "");
        dp_doc_node *devs = dp_doc_b_seq(&b);
        for (size_t i = 0; i < s->n_devices; i++) {
                dp_doc_node *d = dp_doc_b_map(&b);
                dp_doc_b_put_str(&b, d, "name", s->devices[i].name);
                dp_doc_b_put(&b, d, "containerEdits", edits(&b, &s->devices[i].edits));
                dp_doc_b_push(&b, devs, d);
        }
        dp_doc_b_put(&b, root, "devices", devs);
        dp_doc_b_put(&b, root, "containerEdits", edits(&b, &s->edits));
        if (b.r < 0) return b.r;
        dp_doc_emit(out, root, DP_DOC_JSON_COMPACT);
        return dp_strbuf_failed(out) ? -ENOMEM : 0;
}

static int marshal(const void *obj, dp_strbuf *out) { return dp_dra_cdi_spec_encode(obj, out); }

const dp_state_file_type dp_dra_cdi_spec_file = {"CDI spec", DP_DRA_CDI_SPEC_MAX, marshal, NULL};

char *dp_dra_cdi_spec_file_name(const char *kind, const char *id) {
        if (!kind || !id) return NULL;
        char *s = dp_asprintf("%s_%s.json", kind, id);
        if (!s) return NULL;
        char *slash = strchr(s, '/');
        if (slash && slash < s + strlen(kind)) *slash = '-';
        for (char *p = s + strlen(kind); *p; p++)
                if (*p == '/') *p = '_';
        return s;
}

char *dp_dra_cdi_qualified_name(const char *kind, const char *device) {
        if (!kind || !device) return NULL;
        return dp_asprintf("%s=%s", kind, device);
}
