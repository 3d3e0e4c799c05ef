/* SPDX-License-Identifier: Apache-2.0
 * v1-allocate.c — Allocate: a container's ids -> ContainerAllocateResponse. */
#include <stdio.h>

#include "devices/decode.h"
#include "devices/checkpoint.h"
#include "devices/v1.h"

#define VOLUME_MOUNTS_ROOT "/var/run/nvidia-container-devices"

char **dp_v1_ids_free(char **ids) {
        if (!ids) return NULL;
        for (char **p = ids; *p; p++)
                free(*p);
        free(ids);
        return NULL;
}

static void kvs_free(dp_v1_kv *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                dp_free_many(v[i].key, v[i].value);
        free(v);
}

dp_v1_container_response *dp_v1_container_response_free(dp_v1_container_response *r) {
        if (!r) return NULL;
        kvs_free(r->envs, r->n_envs);
        for (size_t i = 0; i < r->n_mounts; i++)
                dp_free_many(r->mounts[i].container_path, r->mounts[i].host_path);
        free(r->mounts);
        for (size_t i = 0; i < r->n_devices; i++)
                dp_free_many(r->devices[i].container_path, r->devices[i].host_path, r->devices[i].permissions);
        free(r->devices);
        kvs_free(r->annotations, r->n_annotations);
        for (size_t i = 0; i < r->n_cdi_devices; i++)
                free(r->cdi_devices[i]);
        free(r->cdi_devices);
        free(r);
        return NULL;
}

/* Insert keeping the array sorted by key; replaces an equal key. Takes
 * ownership of key and value (freed on failure). */
static int kv_put(dp_v1_kv **arr, size_t *n, char *key, char *value) {
        if (!key || !value) {
                dp_free_many(key, value);
                return -ENOMEM;
        }
        size_t i = 0;
        while (i < *n && strcmp((*arr)[i].key, key) < 0)
                i++;
        if (i < *n && streq((*arr)[i].key, key)) {
                free((*arr)[i].value);
                (*arr)[i].value = value;
                free(key);
                return 0;
        }
        dp_v1_kv *na = realloc(*arr, (*n + 1) * sizeof(dp_v1_kv));
        if (!na) {
                dp_free_many(key, value);
                return -ENOMEM;
        }
        *arr = na;
        memmove(&na[i + 1], &na[i], (*n - i) * sizeof(dp_v1_kv));
        na[i].key = key;
        na[i].value = value;
        (*n)++;
        return 0;
}

/* Device spec for a node: the container sees `path`, the host path is
 * under nvidiaDevRoot (filepath.Join semantics: "/" adds nothing). */
static int add_spec(dp_v1_container_response *resp, size_t *cap, const char *root, const char *path) {
        for (size_t i = 0; i < resp->n_devices; i++)
                if (streq(resp->devices[i].container_path, path)) return 0;
        if (DP_GROW(resp->devices, *cap, resp->n_devices + 1) < 0) return -ENOMEM;
        dp_v1_device_spec *d = &resp->devices[resp->n_devices++];
        size_t rl = strlen(root);
        while (rl > 0 && root[rl - 1] == '/')
                rl--;
        d->container_path = dp_strdup(path);
        d->host_path = dp_asprintf("%.*s%s%s", (int)rl, root, path[0] == '/' ? "" : "/", path);
        d->permissions = dp_strdup("rw");
        return d->container_path && d->host_path && d->permissions ? 0 : -ENOMEM;
}

static int add_mount(dp_v1_container_response *resp, size_t *cap, char *container_path, char *host_path) {
        if (!container_path || !host_path || DP_GROW(resp->mounts, *cap, resp->n_mounts + 1) < 0) {
                dp_free_many(container_path, host_path);
                return -ENOMEM;
        }
        resp->mounts[resp->n_mounts++] = (dp_v1_mount){container_path, host_path, false};
        return 0;
}

static int add_cdi(dp_strbuf *names, char ***arr, size_t *n, size_t *cap, char *name) {
        if (!name || DP_GROW(*arr, *cap, *n + 1) < 0) {
                free(name);
                return -ENOMEM;
        }
        dp_strbuf_printf(names, "%s%s", *n ? "," : "", name);
        (*arr)[(*n)++] = name;
        return dp_strbuf_failed(names) ? -ENOMEM : 0;
}

typedef struct target {
        size_t gpu;
        int mig;
} target;

static char *physical_id(const dp_device_set *s, const dp_agent_config *c, const target *t) {
        const dp_hw_device *d = &s->devices[t->gpu];
        if (t->mig < 0) return c->device_id_strategy == DP_ID_INDEX ? dp_asprintf("%u", d->index) : dp_strdup(d->uuid);
        const dp_mig_device *m = &d->migs[t->mig];
        return c->device_id_strategy == DP_ID_INDEX ? dp_asprintf("%u:%u", d->index, m->index) : dp_strdup(m->uuid);
}

/* NVIDIA's CDI names: vendor k8s.device-plugin.nvidia.com, class gpu, and a
 * <mode>=all device per enabled GDRCopy/GDS/MOFED. Other profiles keep
 * their own kind (<cdiKind>=<id>). */
#define NVIDIA_CDI_VENDOR "k8s.device-plugin.nvidia.com"
static bool nvidia_form(const dp_device_set *s) { return s->domain && streq(s->domain, "nvidia.com"); }

static int cdi_names(const dp_device_set *s, const dp_agent_config *c, char **pids, size_t nt, dp_strbuf *joined,
                     char ***ret, size_t *ret_n) {
        size_t cap = 0;
        int r = 0;
        bool nv = nvidia_form(s);
        for (size_t i = 0; i < nt && r >= 0; i++)
                r = add_cdi(joined, ret, ret_n, &cap,
                            nv ? dp_asprintf(NVIDIA_CDI_VENDOR "/gpu=%s", pids[i])
                               : dp_asprintf("%s=%s", s->cdi_kind, pids[i]));
        if (nv && r >= 0 && c->gdrcopy_enabled)
                r = add_cdi(joined, ret, ret_n, &cap, dp_strdup(NVIDIA_CDI_VENDOR "/gdrcopy=all"));
        if (nv && r >= 0 && c->gds_enabled)
                r = add_cdi(joined, ret, ret_n, &cap, dp_strdup(NVIDIA_CDI_VENDOR "/gds=all"));
        if (nv && r >= 0 && c->mofed_enabled)
                r = add_cdi(joined, ret, ret_n, &cap, dp_strdup(NVIDIA_CDI_VENDOR "/mofed=all"));
        return r;
}

/* The annotation key: NVIDIA's is <prefix>nvidia-device-plugin_<random
 * uuid>; ours derives the uuid from the id list, so the same request gets
 * the same key (deterministic responses, still distinct per request). */
static char *cdi_annotation_key(const dp_v1_resource *res, const dp_device_set *s, const dp_agent_config *c,
                                const char *list) {
        if (nvidia_form(s)) {
                _cleanup_free_ char *u = dp_device_uuid_derive("", res->name, list, 0);
                return u ? dp_asprintf("%snvidia-device-plugin_%s", c->cdi_annotation_prefix, u) : NULL;
        }
        const char *class = strchr(res->name, '/') + 1;
        uint32_t h = dp_fnv1a32(list, strlen(list));
        char *key = dp_asprintf("%s%s.%s_%08x", c->cdi_annotation_prefix, s->domain, class, h);
        if (key && strlen(key) - strlen(c->cdi_annotation_prefix) > 63) {
                free(key);
                key = dp_asprintf("%sdevplane_%08x", c->cdi_annotation_prefix, h);
        }
        return key;
}

static int build_cdi(const dp_v1_resource *res, const dp_device_set *s, const dp_agent_config *c, char **pids,
                     size_t nt, const char *list, dp_v1_container_response *resp) {
        dp_strbuf joined = DP_STRBUF_INIT;
        char **names = NULL;
        size_t n = 0;
        int r = cdi_names(s, c, pids, nt, &joined, &names, &n);
        if (r >= 0 && c->device_list_strategy & DP_DLS_CDI_ANNOTATIONS)
                r = kv_put(&resp->annotations, &resp->n_annotations, cdi_annotation_key(res, s, c, list),
                           dp_strdup(dp_strbuf_str(&joined)));
        dp_strbuf_done(&joined);
        if (r >= 0 && c->device_list_strategy & DP_DLS_CDI_CRI) {
                resp->cdi_devices = names;
                resp->n_cdi_devices = n;
                return 0;
        }
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
        return r;
}

#define CDI_BITS (DP_DLS_CDI_ANNOTATIONS | DP_DLS_CDI_CRI)

/* What NVIDIA's Allocate answers, in its order: CDI (when a cdi-* strategy
 * is on), MPS, GDRCopy/GDS/MOFED environment; then, unless every strategy
 * is a CDI one, envvar, volume-mounts and device specs. */
static int build(const dp_v1_resource *res, const dp_device_set *s, const dp_agent_config *c, const target *tg,
                 size_t nt, dp_v1_container_response *resp) {
        _cleanup_free_ char **pids = calloc(nt ? nt : 1, sizeof(char *));
        if (!pids) return -ENOMEM;
        int r = 0;
        dp_strbuf list = DP_STRBUF_INIT;
        size_t mcap = 0, cap = 0;
        for (size_t i = 0; i < nt; i++) {
                if (!(pids[i] = physical_id(s, c, &tg[i]))) {
                        r = -ENOMEM;
                        goto out;
                }
                dp_strbuf_printf(&list, "%s%s", i ? "," : "", pids[i]);
        }
        if (dp_strbuf_failed(&list)) {
                r = -ENOMEM;
                goto out;
        }
        if (c->device_list_strategy & CDI_BITS && (r = build_cdi(res, s, c, pids, nt, dp_strbuf_str(&list), resp)) < 0)
                goto out;
        if (c->mps && res->replicas > 1 && c->mps_root) {
                /* The per-resource pipe directory and the shared shm of the
                 * MPS control daemon (NVIDIA's layout: <root>/<resource>/pipe,
                 * <root>/shm; /mps is the root inside the container). */
                if ((r = kv_put(&resp->envs, &resp->n_envs, dp_strdup("CUDA_MPS_PIPE_DIRECTORY"),
                                dp_asprintf("/mps/%s/pipe", res->name))) < 0 ||
                    (r = add_mount(resp, &mcap, dp_asprintf("/mps/%s/pipe", res->name),
                                   dp_asprintf("%s/%s/pipe", c->mps_root, res->name))) < 0 ||
                    (r = add_mount(resp, &mcap, dp_strdup("/dev/shm"), dp_asprintf("%s/shm", c->mps_root))) < 0)
                        goto out;
        }
        if ((c->gdrcopy_enabled &&
             (r = kv_put(&resp->envs, &resp->n_envs, dp_strdup("NVIDIA_GDRCOPY"), dp_strdup("enabled"))) < 0) ||
            (c->gds_enabled &&
             (r = kv_put(&resp->envs, &resp->n_envs, dp_strdup("NVIDIA_GDS"), dp_strdup("enabled"))) < 0) ||
            (c->mofed_enabled &&
             (r = kv_put(&resp->envs, &resp->n_envs, dp_strdup("NVIDIA_MOFED"), dp_strdup("enabled"))) < 0))
                goto out;
        if (!(c->device_list_strategy & ~CDI_BITS)) goto out;
        if (c->device_list_strategy & DP_DLS_ENVVAR &&
            (r = kv_put(&resp->envs, &resp->n_envs, dp_strdup(s->visible_devices_env),
                        dp_strdup(dp_strbuf_str(&list)))) < 0)
                goto out;
        if (c->device_list_strategy & DP_DLS_VOLUME_MOUNTS) {
                if ((r = kv_put(&resp->envs, &resp->n_envs, dp_strdup(s->visible_devices_env),
                                dp_strdup(VOLUME_MOUNTS_ROOT))) < 0)
                        goto out;
                for (size_t i = 0; i < nt && r >= 0; i++)
                        r = add_mount(resp, &mcap, dp_asprintf(VOLUME_MOUNTS_ROOT "/%s", pids[i]),
                                      dp_strdup("/dev/null"));
                if (r < 0) goto out;
        }
        if (c->pass_device_specs) {
                const char *root = dp_agent_config_dev_root(c);
                for (size_t i = 0; i < s->n_common_device_nodes && r >= 0; i++)
                        r = add_spec(resp, &cap, root, s->common_device_nodes[i]);
                for (size_t i = 0; i < nt && r >= 0; i++) {
                        const dp_hw_device *d = &s->devices[tg[i].gpu];
                        for (size_t k = 0; k < d->n_device_nodes && r >= 0; k++)
                                r = add_spec(resp, &cap, root, d->device_nodes[k]);
                        if (tg[i].mig >= 0) {
                                const dp_mig_device *m = &d->migs[tg[i].mig];
                                for (size_t k = 0; k < m->n_device_nodes && r >= 0; k++)
                                        r = add_spec(resp, &cap, root, m->device_nodes[k]);
                        }
                }
        }
out:
        for (size_t i = 0; i < nt; i++)
                free(pids[i]);
        dp_strbuf_done(&list);
        return r;
}

int dp_v1_allocate(const dp_v1_plan *p, const dp_device_set *s, const dp_agent_config *c, const char *resource_name,
                   const char *const *ids, size_t n_ids, dp_v1_container_response **ret, dp_error *err) {
        assert_return(p && s && c && resource_name && ret && (ids || n_ids == 0), -EINVAL);
        const dp_v1_resource *res = dp_v1_plan_find(p, resource_name);
        if (!res) return dp_error_set(err, -EINVAL, "unknown resource %.253s", resource_name);
        if (n_ids == 0) return dp_error_set(err, -EINVAL, "resource %s: empty request", res->name);
        if (n_ids > DP_V1_REQUEST_MAX)
                return dp_error_set(err, -E2BIG, "resource %s: request for %zu devices exceeds %d", res->name, n_ids,
                                    DP_V1_REQUEST_MAX);
        if (res->replicas > 1 && res->fail_requests_greater_than_one && n_ids > 1)
                return dp_error_set(err, -EINVAL,
                                    "request for '%s: %zu' too large: maximum request size for shared resources is 1",
                                    res->name, n_ids);
        /* seen: one bit per device of the resource */
        _cleanup_free_ uint64_t *seen = calloc(res->n_devices / 64 + 1, sizeof(uint64_t));
        _cleanup_free_ target *tg = calloc(n_ids, sizeof(target));
        if (!seen || !tg) return dp_error_set(err, -ENOMEM, "out of memory");
        size_t nt = 0;
        for (size_t i = 0; i < n_ids; i++) {
                if (!ids[i]) return dp_error_set(err, -EINVAL, "resource %s: device id %zu is missing", res->name, i);
                const dp_v1_device *v = dp_v1_resource_find(res, ids[i]);
                if (!v) return dp_error_set(err, -EINVAL, "resource %s: unknown device %.128s", res->name, ids[i]);
                size_t pos = (size_t)(v - res->devices);
                if (seen[pos / 64] & (UINT64_C(1) << (pos % 64)))
                        return dp_error_set(err, -EINVAL, "resource %s: device %s requested twice", res->name, v->id);
                seen[pos / 64] |= UINT64_C(1) << (pos % 64);
                if (v->health != DP_HEALTH_HEALTHY)
                        return dp_error_set(err, -EINVAL, "resource %s: device %s is unhealthy", res->name, v->id);
                bool dup = false;
                for (size_t k = 0; k < nt && !dup; k++)
                        dup = tg[k].gpu == v->gpu && tg[k].mig == v->mig;
                if (!dup) tg[nt++] = (target){v->gpu, v->mig};
        }
        _cleanup_(dp_v1_container_response_freep) dp_v1_container_response *resp = calloc(1, sizeof(*resp));
        if (!resp) return dp_error_set(err, -ENOMEM, "out of memory");
        int r = build(res, s, c, tg, nt, resp);
        if (r < 0) return dp_error_set(err, r, "out of memory");
        *ret = TAKE_PTR(resp);
        return 0;
}
