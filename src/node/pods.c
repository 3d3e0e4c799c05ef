/* SPDX-License-Identifier: Apache-2.0
 * Pod manifests: decode the few fields the device manager needs, with field
 * paths in every error. */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>

#include "node/devmgr.h"
#include "node/pods.h"

dp_node_pod *dp_node_pod_free(dp_node_pod *p) {
        if (!p) return NULL;
        for (size_t i = 0; i < p->n_containers; i++) {
                dp_node_container *c = &p->containers[i];
                free(c->name);
                for (size_t j = 0; j < c->n_req; j++)
                        free(c->req[j].resource);
                free(c->req);
        }
        dp_free_many(p->containers, p->uid, p->ns, p->name, p->source);
        free(p);
        return NULL;
}

void dp_node_pods_free(dp_node_pod **pods, size_t n) {
        for (size_t i = 0; pods && i < n; i++)
                dp_node_pod_free(pods[i]);
        free(pods);
}

uint64_t dp_node_backoff_ms(uint64_t initial_ms, uint64_t max_ms, unsigned attempt) {
        uint64_t v = initial_ms ? initial_ms : 1;
        for (unsigned i = 1; i < attempt && v < max_ms; i++)
                v *= 2;
        return DP_MIN(v, max_ms);
}

static bool is_dns_label(const char *s) {
        size_t n = strlen(s);
        if (n == 0 || n > 63) return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c == '-' && i > 0 && i + 1 < n);
                if (!ok) return false;
        }
        return true;
}

static bool is_dns_subdomain(const char *s) {
        size_t n = strlen(s);
        if (n == 0 || n > 253) return false;
        char buf[254];
        memcpy(buf, s, n + 1);
        for (char *save = NULL, *tok = strtok_r(buf, ".", &save); tok; tok = strtok_r(NULL, ".", &save))
                if (!is_dns_label(tok)) return false;
        return s[0] != '.' && s[n - 1] != '.' && !strstr(s, "..");
}

/* An extended-resource quantity: a whole number, plain ("2", 2) or with a
 * decimal suffix that keeps it whole ("1k"). Fractions ("500m", "0.5") are
 * refused, as Kubernetes refuses them for extended resources. */
static int parse_count(const dp_doc_node *n, uint64_t *ret, dp_error *err) {
        const char *s;
        int r = dp_doc_get_str(n, true, &s, err);
        if (r < 0) return r;
        const char *p = s;
        if (*p == '+') p++;
        if (*p < '0' || *p > '9') return dp_error_set(err, -EINVAL, "\"%s\": must be a whole number", s);
        uint64_t v = 0;
        for (; *p >= '0' && *p <= '9'; p++) {
                if (v > DP_NODE_MAX_REQUEST) break;
                v = v * 10 + (uint64_t)(*p - '0');
        }
        uint64_t mul = 1;
        if (*p == 'k')
                mul = 1000, p++;
        else if (*p == 'M')
                mul = 1000000, p++;
        else if (*p == 'K' && p[1] == 'i')
                mul = 1024, p += 2;
        else if (*p == 'M' && p[1] == 'i')
                mul = 1048576, p += 2;
        if (*p) return dp_error_set(err, -EINVAL, "\"%s\": must be a whole number", s);
        if (v > DP_NODE_MAX_REQUEST || v * mul > DP_NODE_MAX_REQUEST)
                return dp_error_set(err, -E2BIG, "\"%s\": more than %d", s, DP_NODE_MAX_REQUEST);
        *ret = v * mul;
        return 0;
}

static int field_err(dp_error *err, int code, const char *path, const char *fmt, const char *arg) {
        char msg[512];
        snprintf(msg, sizeof msg, fmt, arg);
        return dp_error_set(err, code, "%s: %s", path, msg);
}

static int decode_resources(const dp_doc_node *res, size_t ci, const char *kind, dp_node_container *c, dp_error *err) {
        const dp_doc_node *limits = dp_doc_get(res, "limits"), *requests = dp_doc_get(res, "requests");
        char path[256];
        if (res && !dp_doc_is_null(res) && res->type != DP_DOC_MAP) {
                snprintf(path, sizeof path, "spec.%s[%zu].resources", kind, ci);
                return field_err(err, -EINVAL, path, "expected map, got %s", dp_doc_type_name(res));
        }
        for (int pass = 0; pass < 2; pass++) {
                const dp_doc_node *m = pass ? requests : limits;
                const char *mname = pass ? "requests" : "limits";
                if (!m || dp_doc_is_null(m)) continue;
                if (m->type != DP_DOC_MAP) {
                        snprintf(path, sizeof path, "spec.%s[%zu].resources.%s", kind, ci, mname);
                        return field_err(err, -EINVAL, path, "expected map, got %s", dp_doc_type_name(m));
                }
                for (size_t i = 0; i < m->n; i++) {
                        const char *key = m->pairs[i].key;
                        snprintf(path, sizeof path, "spec.%s[%zu].resources.%s[%s]", kind, ci, mname, key);
                        bool domain = strchr(key, '/') != NULL;
                        if (!domain) continue; /* cpu, memory, ephemeral-storage, hugepages-*: not ours */
                        if (!dp_devmgr_is_extended_resource_name(key)) {
                                if (strstr(key, "kubernetes.io/")) continue; /* native resources */
                                return field_err(err, -EINVAL, path,
                                                 "\"%s\" is not a valid extended resource name (domain/name)", key);
                        }
                        uint64_t v;
                        int r = parse_count(m->pairs[i].value, &v, err);
                        if (r < 0) return dp_error_prefix(err, "%s", path);
                        const dp_doc_node *other = dp_doc_get(pass ? limits : requests, key);
                        if (pass == 1) {
                                if (!other)
                                        return field_err(
                                                err, -EINVAL, path,
                                                "%s: a limit must be set for a resource that cannot be overcommitted",
                                                key);
                                uint64_t lv;
                                if (parse_count(other, &lv, NULL) == 0 && lv != v)
                                        return field_err(err, -EINVAL, path, "must be equal to %s limit", key);
                                continue;
                        }
                        if (kind[0] == 'i' && v > 0)
                                return field_err(err, -EINVAL, path,
                                                 "%s: init containers asking for device-plugin resources are not "
                                                 "supported by devplane node",
                                                 key);
                        if (v == 0) continue;
                        if (c->n_req >= DP_NODE_MAX_EXTENDED_PER_CONTAINER)
                                return field_err(err, -E2BIG, path, "more than %s extended resources", "32");
                        dp_node_request *nr = realloc(c->req, (c->n_req + 1) * sizeof *nr);
                        if (!nr) return -ENOMEM;
                        c->req = nr;
                        if (!(c->req[c->n_req].resource = strdup(key))) return -ENOMEM;
                        c->req[c->n_req++].count = v;
                }
        }
        return 0;
}

static void content_uid(const dp_doc_node *root, char *buf, size_t size) {
        _cleanup_strbuf_ dp_strbuf sb = DP_STRBUF_INIT;
        dp_doc_emit(&sb, root, DP_DOC_JSON_COMPACT);
        const char *s = dp_strbuf_str(&sb);
        uint64_t h1 = 0xcbf29ce484222325ULL, h2 = 0x84222325cbf29ce4ULL;
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                h1 = (h1 ^ *p) * 0x100000001b3ULL;
                h2 = (h2 ^ *p) * 0x100000001b3ULL + 0x9e3779b97f4a7c15ULL;
        }
        snprintf(buf, size, "%08" PRIx32 "-%04" PRIx32 "-%04" PRIx32 "-%04" PRIx32 "-%012" PRIx64, (uint32_t)(h1 >> 32),
                 (uint32_t)(h1 >> 16) & 0xffff, (uint32_t)h1 & 0xffff, (uint32_t)(h2 >> 48),
                 (uint64_t)(h2 & 0xffffffffffffULL));
}

static int get_str_field(const dp_doc_node *map, const char *key, const char *path, bool required, const char **ret,
                         dp_error *err) {
        const dp_doc_node *n = dp_doc_get(map, key);
        if (!n || dp_doc_is_null(n)) {
                if (required) return dp_error_set(err, -EINVAL, "%s: Required value", path);
                *ret = NULL;
                return 0;
        }
        int r = dp_doc_get_str(n, false, ret, err);
        if (r < 0) return dp_error_prefix(err, "%s", path);
        return 0;
}

static int decode_pod(const dp_doc_node *root, dp_node_pod *p, dp_error *err) {
        const char *s;
        if (!root || root->type != DP_DOC_MAP) return dp_error_set(err, -EINVAL, "expected a Pod object (map)");
        int r = get_str_field(root, "apiVersion", "apiVersion", true, &s, err);
        if (r < 0) return r;
        if (!streq(s, "v1"))
                return dp_error_set(err, -EINVAL, "apiVersion: Unsupported value \"%s\": supported values: \"v1\"", s);
        if ((r = get_str_field(root, "kind", "kind", true, &s, err)) < 0) return r;
        if (!streq(s, "Pod"))
                return dp_error_set(err, -EINVAL, "kind: Unsupported value \"%s\": supported values: \"Pod\"", s);
        const dp_doc_node *meta = dp_doc_get(root, "metadata");
        if (!meta || meta->type != DP_DOC_MAP) return dp_error_set(err, -EINVAL, "metadata: Required value");
        if ((r = get_str_field(meta, "name", "metadata.name", true, &s, err)) < 0) return r;
        if (!is_dns_subdomain(s))
                return dp_error_set(err, -EINVAL, "metadata.name: Invalid value \"%s\": must be a DNS subdomain", s);
        if (!(p->name = strdup(s))) return -ENOMEM;
        if ((r = get_str_field(meta, "namespace", "metadata.namespace", false, &s, err)) < 0) return r;
        if (s && !is_dns_label(s))
                return dp_error_set(err, -EINVAL, "metadata.namespace: Invalid value \"%s\": must be a DNS label", s);
        if (!(p->ns = strdup(s ? s : "default"))) return -ENOMEM;
        if ((r = get_str_field(meta, "uid", "metadata.uid", false, &s, err)) < 0) return r;
        if (s && (!*s || strlen(s) > 128 || strpbrk(s, " \t\n/")))
                return dp_error_set(err, -EINVAL, "metadata.uid: Invalid value \"%s\"", s);
        char uid[64];
        if (!s) content_uid(root, uid, sizeof uid);
        if (!(p->uid = strdup(s ? s : uid))) return -ENOMEM;

        const dp_doc_node *spec = dp_doc_get(root, "spec");
        if (!spec || spec->type != DP_DOC_MAP) return dp_error_set(err, -EINVAL, "spec: Required value");
        for (int pass = 0; pass < 2; pass++) {
                const char *kind = pass ? "initContainers" : "containers";
                const dp_doc_node *list = dp_doc_get(spec, kind);
                if (!list || dp_doc_is_null(list)) {
                        if (!pass) return dp_error_set(err, -EINVAL, "spec.containers: Required value");
                        continue;
                }
                if (list->type != DP_DOC_SEQ)
                        return dp_error_set(err, -EINVAL, "spec.%s: expected list, got %s", kind,
                                            dp_doc_type_name(list));
                if (!pass && list->n == 0) return dp_error_set(err, -EINVAL, "spec.containers: Required value");
                if (list->n > DP_NODE_MAX_CONTAINERS)
                        return dp_error_set(err, -E2BIG, "spec.%s: more than %d containers", kind,
                                            DP_NODE_MAX_CONTAINERS);
                if (!pass && !(p->containers = calloc(list->n, sizeof *p->containers))) return -ENOMEM;
                for (size_t i = 0; i < list->n; i++) {
                        const dp_doc_node *c = list->items[i];
                        char path[128];
                        snprintf(path, sizeof path, "spec.%s[%zu]", kind, i);
                        if (c->type != DP_DOC_MAP)
                                return dp_error_set(err, -EINVAL, "%s: expected map, got %s", path,
                                                    dp_doc_type_name(c));
                        char npath[160];
                        snprintf(npath, sizeof npath, "%s.name", path);
                        if ((r = get_str_field(c, "name", npath, true, &s, err)) < 0) return r;
                        if (!is_dns_label(s))
                                return dp_error_set(err, -EINVAL, "%s: Invalid value \"%s\": must be a DNS label",
                                                    npath, s);
                        for (size_t j = 0; j < p->n_containers; j++)
                                if (streq(p->containers[j].name, s))
                                        return dp_error_set(err, -EINVAL, "%s: Duplicate value \"%s\"", npath, s);
                        dp_node_container tmp = {0};
                        dp_node_container *dc = pass ? &tmp : &p->containers[p->n_containers];
                        if (!pass) {
                                if (!(dc->name = strdup(s))) return -ENOMEM;
                                p->n_containers++;
                        }
                        r = decode_resources(dp_doc_get(c, "resources"), i, kind, dc, err);
                        free(tmp.req);
                        if (r < 0) return r;
                }
        }
        return 0;
}

/* DRA: does the pod use claims (spec.resourceClaims, or the claim the
 * scheduler made for its extended resources)? Extended resources that
 * status.extendedResourceClaimStatus.requestMappings maps to a claim are
 * DRA's (KEP-5004), not the device manager's: dropped from the requests. */
static int decode_claims(const dp_doc_node *root, dp_node_pod *p) {
        const dp_doc_node *rc = dp_doc_get(dp_doc_get(root, "spec"), "resourceClaims");
        if (rc && rc->type == DP_DOC_SEQ && rc->n) p->has_claims = true;
        const dp_doc_node *ext = dp_doc_get(dp_doc_get(root, "status"), "extendedResourceClaimStatus");
        if (!ext || ext->type != DP_DOC_MAP) return 0;
        p->has_claims = true;
        const dp_doc_node *maps = dp_doc_get(ext, "requestMappings");
        for (size_t i = 0; maps && maps->type == DP_DOC_SEQ && i < maps->n; i++) {
                const dp_doc_node *rn = dp_doc_get(maps->items[i], "resourceName");
                const dp_doc_node *cn = dp_doc_get(maps->items[i], "containerName");
                if (!rn || rn->type != DP_DOC_SCALAR || !cn || cn->type != DP_DOC_SCALAR) continue;
                for (size_t c = 0; c < p->n_containers; c++) {
                        dp_node_container *dc = &p->containers[c];
                        if (!streq(dc->name, cn->str)) continue;
                        for (size_t k = 0; k < dc->n_req;) {
                                if (!streq(dc->req[k].resource, rn->str)) {
                                        k++;
                                        continue;
                                }
                                free(dc->req[k].resource);
                                dc->req[k] = dc->req[--dc->n_req];
                        }
                }
        }
        return 0;
}

static int dp_node_pod_decode_impl(const dp_doc_node *root, const char *source, dp_node_pod **ret, dp_error *err) {
        assert_return(ret, -EINVAL);
        _cleanup_(dp_node_pod_freep) dp_node_pod *p = calloc(1, sizeof *p);
        if (!p) return -ENOMEM;
        int r = decode_pod(root, p, err);
        if (r >= 0) r = decode_claims(root, p);
        if (r < 0) {
                if (err && err->code == 0) dp_error_set(err, r, "%s", strerror(-r)); /* an allocation failed */
                if (p->name)
                        dp_error_prefix(err, "Pod %s/%s", p->ns ? p->ns : "default", p->name);
                else
                        dp_error_prefix(err, "Pod");
                if (source) dp_error_prefix(err, "%s", source);
                return r;
        }
        if (source && !(p->source = strdup(source))) return -ENOMEM;
        *ret = TAKE_PTR(p);
        return 0;
}

static int dp_node_pods_load_file_impl(const char *path, dp_node_pod ***ret_pods, size_t *ret_n, dp_error *err) {
        assert_return(path && ret_pods && ret_n, -EINVAL);
        _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
        if (!set) return -ENOMEM;
        int r = dp_doc_parse_file(set, path, err);
        if (r < 0) return r;
        dp_node_pod **pods = NULL;
        size_t n = 0;
        for (size_t i = 0; i < dp_doc_count(set); i++) {
                const dp_doc_node *root = dp_doc_root(set, i);
                const dp_doc_node *kind = dp_doc_get(root, "kind");
                const dp_doc_node *items = NULL;
                if (kind && kind->type == DP_DOC_SCALAR && (streq(kind->str, "List") || streq(kind->str, "PodList"))) {
                        items = dp_doc_get(root, "items");
                        if (items && items->type != DP_DOC_SEQ) {
                                dp_node_pods_free(pods, n);
                                return dp_error_set(err, -EINVAL, "%s: items: expected list", path);
                        }
                }
                size_t cnt = items ? items->n : 1;
                for (size_t j = 0; j < cnt; j++) {
                        if (n >= 1024) {
                                dp_node_pods_free(pods, n);
                                return dp_error_set(err, -E2BIG, "%s: more than 1024 pods in one file", path);
                        }
                        /* Objects that travel with pods in a manifest directory
                         * (the DRA manager reads the claims): not pods. */
                        const dp_doc_node *ik = dp_doc_get(items ? items->items[j] : root, "kind");
                        if (ik && ik->type == DP_DOC_SCALAR &&
                            (streq(ik->str, "ResourceClaim") || streq(ik->str, "ResourceClaimTemplate") ||
                             streq(ik->str, "DeviceClass") || streq(ik->str, "Namespace") ||
                             streq(ik->str, "PodGroup") || streq(ik->str, "DeviceTaintRule")))
                                continue;
                        dp_node_pod **np = realloc(pods, (n + 1) * sizeof *np);
                        if (!np) {
                                dp_node_pods_free(pods, n);
                                return -ENOMEM;
                        }
                        pods = np;
                        r = dp_node_pod_decode(items ? items->items[j] : root, path, &pods[n], err);
                        if (r < 0) {
                                dp_node_pods_free(pods, n);
                                return r;
                        }
                        n++;
                }
        }
        *ret_pods = pods;
        *ret_n = n;
        return 0;
}

bool dp_node_is_manifest_name(const char *name) {
        if (!name || name[0] == '.') return false;
        size_t l = strlen(name);
        return (l > 5 && streq(name + l - 5, ".yaml")) || (l > 4 && streq(name + l - 4, ".yml")) ||
               (l > 5 && streq(name + l - 5, ".json"));
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int dp_node_manifests_check_impl(const char *dir, dp_strbuf *out, size_t *ret_bad, dp_error *err) {
        assert_return(dir && out && ret_bad, -EINVAL);
        DIR *d = opendir(dir);
        if (!d) return dp_error_errno(err, -errno, "%s", dir);
        char **names = NULL;
        size_t n = 0;
        int r = 0;
        for (struct dirent *de; (de = readdir(d));) {
                if (!dp_node_is_manifest_name(de->d_name)) continue;
                char **nn = realloc(names, (n + 1) * sizeof *nn);
                if (!nn || !(nn[n] = strdup(de->d_name))) {
                        if (nn) names = nn;
                        r = -ENOMEM;
                        break;
                }
                names = nn;
                n++;
        }
        closedir(d);
        if (n) qsort(names, n, sizeof *names, cmp_name);
        size_t bad = 0;
        char **seen = NULL; /* "ns/name" of pods so far */
        size_t n_seen = 0;
        for (size_t i = 0; r >= 0 && i < n; i++) {
                _cleanup_free_ char *path = dp_asprintf("%s/%s", dir, names[i]);
                dp_node_pod **pods = NULL;
                size_t np = 0;
                dp_error e = DP_ERROR_INIT;
                int k = path ? dp_node_pods_load_file(path, &pods, &np, &e) : -ENOMEM;
                if (k == -ENOMEM) {
                        r = k;
                        break;
                }
                if (k < 0) {
                        dp_strbuf_printf(out, "error %s\n", dp_error_msg(&e));
                        bad++;
                        continue;
                }
                for (size_t j = 0; j < np; j++) {
                        dp_node_pod *p = pods[j];
                        _cleanup_free_ char *key = dp_asprintf("%s/%s", p->ns, p->name);
                        bool dup = false;
                        for (size_t q = 0; key && q < n_seen && !dup; q++)
                                dup = streq(seen[q], key);
                        if (dup) {
                                dp_strbuf_printf(out,
                                                 "error %s: Pod %s: metadata.name: Duplicate value (another manifest "
                                                 "names this pod)\n",
                                                 path, key);
                                bad++;
                                continue;
                        }
                        char **ns = key ? realloc(seen, (n_seen + 1) * sizeof *ns) : NULL;
                        if (ns) {
                                seen = ns;
                                seen[n_seen++] = TAKE_PTR(key);
                        }
                        dp_strbuf_printf(out, "ok %s: Pod %s/%s uid=%s", path, p->ns, p->name, p->uid);
                        for (size_t c = 0; c < p->n_containers; c++)
                                for (size_t q = 0; q < p->containers[c].n_req; q++)
                                        dp_strbuf_printf(out, " %s:%s=%" PRIu64, p->containers[c].name,
                                                         p->containers[c].req[q].resource,
                                                         p->containers[c].req[q].count);
                        dp_strbuf_putc(out, '\n');
                }
                dp_node_pods_free(pods, np);
        }
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
        for (size_t i = 0; i < n_seen; i++)
                free(seen[i]);
        free(seen);
        if (r < 0) return r;
        *ret_bad = bad;
        return 0;
}

int dp_node_pod_decode(const dp_doc_node *root, const char *source, dp_node_pod **ret, dp_error *err) {
        int r = dp_node_pod_decode_impl(root, source, ret, err);
        /* an allocation failure deep down that left no message */
        if (r == -ENOMEM && err && !err->msg[0]) dp_error_set(err, r, "%s: %s", source ? source : "Pod", strerror(ENOMEM));
        return r;
}

int dp_node_pods_load_file(const char *path, dp_node_pod ***ret_pods, size_t *ret_n, dp_error *err) {
        int r = dp_node_pods_load_file_impl(path, ret_pods, ret_n, err);
        /* an allocation failure deep down that left no message */
        if (r == -ENOMEM && err && !err->msg[0]) dp_error_set(err, r, "%s: %s", path, strerror(ENOMEM));
        return r;
}

int dp_node_manifests_check(const char *dir, dp_strbuf *out, size_t *ret_bad, dp_error *err) {
        int r = dp_node_manifests_check_impl(dir, out, ret_bad, err);
        /* an allocation failure deep down that left no message */
        if (r == -ENOMEM && err && !err->msg[0]) dp_error_set(err, r, "%s: %s", dir, strerror(ENOMEM));
        return r;
}
