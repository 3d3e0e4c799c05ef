/* SPDX-License-Identifier: Apache-2.0
 * prepare.c — a claim's allocation -> CDI spec, prepared devices and
 * KEP-5304 metadata files (contract in prepare.h). */
#include <ctype.h>
#include <stdio.h>

#include "doc/builder.h"
#include "dra/cdi.h"
#include "dra/prepare.h"
#include "dra/slices.h"

typedef enum { SHARE_TIME_SLICING = 0, SHARE_SPACE_PARTITIONING } share_strategy;

typedef struct sharing {
        share_strategy strategy;
        char interval[16];
        int64_t partitions;
} sharing;

static const char *request_base(const char *req, char *buf, size_t size) {
        const char *slash = strchr(req, '/');
        size_t n = slash ? (size_t)(slash - req) : strlen(req);
        if (n >= size) n = size - 1;
        memcpy(buf, req, n);
        buf[n] = 0;
        return buf;
}

/* GpuConfig parameters -> sharing. */
static int parse_gpu_config(const char *json, sharing *sh, dp_error *err) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        if (!s) return dp_error_set(err, -ENOMEM, "out of memory");
        dp_error e = DP_ERROR_INIT;
        int r = dp_doc_parse(s, json, strlen(json), "parameters", &e);
        if (r == -ENOMEM) return dp_error_set(err, r, "out of memory");
        if (r < 0 || dp_doc_count(s) != 1) return dp_error_set(err, -EINVAL, "parameters: not valid JSON");
        const dp_doc_node *root = dp_doc_root(s, 0);
        const char *kind = NULL, *api = NULL;
        if (root->type != DP_DOC_MAP) return dp_error_set(err, -EINVAL, "parameters: expected an object");
        if (dp_doc_get_str(dp_doc_get(root, "kind"), false, &kind, NULL) < 0 || !streq(kind, "GpuConfig"))
                return dp_error_set(err, -EINVAL, "parameters.kind: expected GpuConfig, got %s",
                                    kind ? kind : "nothing");
        if (dp_doc_get_str(dp_doc_get(root, "apiVersion"), false, &api, NULL) < 0 ||
            !streq(api, "gpu.resource.example.com/v1alpha1"))
                return dp_error_set(err, -EINVAL, "parameters.apiVersion: expected gpu.resource.example.com/v1alpha1");
        for (size_t i = 0; i < root->n; i++)
                if (!streq(root->pairs[i].key, "kind") && !streq(root->pairs[i].key, "apiVersion") &&
                    !streq(root->pairs[i].key, "sharing"))
                        return dp_error_set(err, -EINVAL, "parameters.%s: unknown field", root->pairs[i].key);
        const dp_doc_node *sharing_n = dp_doc_get(root, "sharing");
        if (!sharing_n) return 0;
        const char *strategy = NULL;
        if (dp_doc_get_str(dp_doc_get(sharing_n, "strategy"), false, &strategy, NULL) < 0)
                return dp_error_set(err, -EINVAL, "parameters.sharing.strategy: required");
        if (streq(strategy, "TimeSlicing")) {
                sh->strategy = SHARE_TIME_SLICING;
                const dp_doc_node *ts = dp_doc_get(sharing_n, "timeSlicingConfig");
                const char *iv = "Default";
                if (ts && dp_doc_get_str(dp_doc_get(ts, "interval"), false, &iv, NULL) < 0) iv = "Default";
                if (!streq(iv, "Default") && !streq(iv, "Short") && !streq(iv, "Medium") && !streq(iv, "Long"))
                        return dp_error_set(
                                err, -EINVAL,
                                "parameters.sharing.timeSlicingConfig.interval: unknown time-slice interval %s", iv);
                snprintf(sh->interval, sizeof(sh->interval), "%s", iv);
        } else if (streq(strategy, "SpacePartitioning")) {
                sh->strategy = SHARE_SPACE_PARTITIONING;
                const dp_doc_node *sp = dp_doc_get(sharing_n, "spacePartitioningConfig");
                int64_t k = 1;
                if (sp && dp_doc_get_int64(dp_doc_get(sp, "partitionCount"), &k, NULL) < 0)
                        return dp_error_set(
                                err, -EINVAL,
                                "parameters.sharing.spacePartitioningConfig.partitionCount: expected an integer");
                if (k < 1)
                        return dp_error_set(
                                err, -EINVAL,
                                "parameters.sharing.spacePartitioningConfig.partitionCount: must be positive");
                sh->partitions = k;
        } else
                return dp_error_set(err, -EINVAL, "parameters.sharing.strategy: unknown strategy %s", strategy);
        return 0;
}

static bool config_names(const dp_device_config *c, const char *req) {
        char base[128];
        request_base(req, base, sizeof(base));
        for (size_t i = 0; i < c->n_requests; i++)
                if (streq(c->requests[i], req) || streq(c->requests[i], base)) return true;
        return false;
}

static int sharing_for(const dp_allocation_result *a, const char *driver, const char *req, sharing *ret,
                       dp_error *err) {
        sharing sh = {SHARE_TIME_SLICING, "Default", 0};
        const dp_allocation_config *best = NULL;
        int best_score = -1;
        for (size_t i = 0; a && i < a->n_config; i++) {
                const dp_allocation_config *c = &a->config[i];
                if (!streq_ptr(c->config.driver, driver) || !c->config.parameters_json) continue;
                bool all = c->config.n_requests == 0;
                if (!all && !config_names(&c->config, req)) continue;
                int score = (c->source == DP_CONFIG_SOURCE_CLAIM ? 2 : 0) + (all ? 0 : 1);
                if (score >= best_score) best = c, best_score = score;
        }
        if (best) {
                int r = parse_gpu_config(best->config.parameters_json, &sh, err);
                if (r < 0) return r;
        }
        *ret = sh;
        return 0;
}

static bool tolerates(const dp_device_allocation_result *r, const char *key, const char *effect) {
        for (size_t i = 0; i < r->n_tolerations; i++) {
                const dp_toleration *t = &r->tolerations[i];
                bool exists = t->op && streq(t->op, "Exists");
                if (t->key && *t->key && !streq(t->key, key)) continue;
                if ((!t->key || !*t->key) && !exists) continue;
                if (t->effect && *t->effect && !streq(t->effect, effect)) continue;
                return true;
        }
        return false;
}

/* The env name fragment of a capacity: upper case, [A-Z0-9_]. */
static void env_fragment(const char *name, char *buf, size_t size) {
        const char *slash = strrchr(name, '/');
        if (slash) name = slash + 1;
        size_t k = 0;
        for (const char *p = name; *p && k + 1 < size; p++)
                buf[k++] = isalnum((unsigned char)*p) ? (char)toupper((unsigned char)*p) : '_';
        buf[k] = 0;
}

/* A path component: non-empty, no '/', not "." or "..". */
static bool path_part_ok(const char *s) { return s && *s && !strchr(s, '/') && !streq(s, ".") && !streq(s, ".."); }

typedef struct prep {
        const dp_dra_prepare_input *in;
        const dp_resource_claim *claim;
        dp_dra_prepare_output *out;
        dp_dra_cdi_spec spec;
        dp_error *err;
} prep;

static int oom(prep *p) { return dp_error_set(p->err, -ENOMEM, "out of memory"); }

static int env_printf(dp_dra_cdi_edits *e, const char *value, const char *fmt, ...) _printf_(3, 4);
static int env_printf(dp_dra_cdi_edits *e, const char *value, const char *fmt, ...) {
        char name[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(name, sizeof(name), fmt, ap);
        va_end(ap);
        return dp_dra_cdi_edits_env(e, name, value);
}

/* How the example driver's profiles name a device's variables: by the
 * device name's prefix (gpu: the default), the variable prefix, and
 * consumed capacities whose variable has another name (the net profile's
 * rates are decimal integers). Only GPUs get GpuConfig sharing variables. */
typedef struct env_cap {
        const char *capacity; /* env_fragment of the capacity name */
        const char *var;
        bool decimal;
} env_cap;
typedef struct env_style {
        const char *name, *env;
        env_cap caps[2];
} env_style;
static const env_style env_styles[] = {
        {"gpu-", "GPU_DEVICE", {{NULL, NULL, false}}},
        {"nic-", "NET_DEVICE", {{"INGRESSBANDWIDTH", "INGRESS_RATE", true}, {"EGRESSBANDWIDTH", "EGRESS_RATE", true}}},
        {"numa-", "CPU_DEVICE", {{"CPU", "CONSUMED_CPU", false}}},
};

static const env_style *style_of(const char *device) {
        for (size_t i = 1; i < ELEMENTSOF(env_styles); i++)
                if (strncmp(device, env_styles[i].name, strlen(env_styles[i].name)) == 0) return &env_styles[i];
        return &env_styles[0];
}

/* Check one result and add its CDI device and prepared device. */
static int add_result(prep *p, const dp_device_allocation_result *res, size_t n, size_t ordinal) {
        const dp_dra_inventory *inv = p->in->inv;
        if (!res->device || !*res->device) return dp_error_set(p->err, -EINVAL, "device: required");
        if (!streq_ptr(res->pool, inv->pool))
                return dp_error_set(p->err, -EINVAL, "device %s/%s: not on this node (this node's pool is %s)",
                                    res->pool ? res->pool : "", res->device ? res->device : "", inv->pool);
        const dp_dra_device *dev = dp_dra_inventory_find(inv, res->device);
        const dp_device *pub = dp_dra_slices_find_device(p->in->slices, p->in->n_slices, res->pool, res->device, NULL);
        if (!dev || !pub)
                return dp_error_set(p->err, -EINVAL, "device %s/%s: unknown device (not published by %s)", res->pool,
                                    res->device ? res->device : "", inv->driver);
        /* A fault the policy acts on is a NoSchedule/NoExecute taint on the
         * published device; admin access and a matching toleration pass. */
        bool admin = res->has_admin_access && res->admin_access;
        for (size_t i = 0; !admin && i < pub->n_taints; i++) {
                const dp_taint *t = &pub->taints[i];
                if (!t->effect || streq(t->effect, "None") || tolerates(res, t->key, t->effect)) continue;
                return dp_error_set(p->err, -EINVAL, "device %s/%s: unhealthy (taint %s:%s)", res->pool, res->device,
                                    t->key, t->effect);
        }
        sharing sh;
        int r = sharing_for(p->claim->allocation, inv->driver, res->request ? res->request : "", &sh, p->err);
        if (r < 0) return dp_error_prefix(p->err, "request %s", res->request ? res->request : "");

        /* CDI device */
        dp_dra_cdi_device *cd = &p->spec.devices[p->spec.n_devices];
        memset(cd, 0, sizeof(*cd));
        const char *uid = p->claim->meta.uid;
        cd->name = dp_asprintf("%s-%s", uid, res->device);
        if (!cd->name) return oom(p);
        /* <PREFIX>_<ID>: the device's name after its kind's prefix, upper
         * case, '-' as '_' (gpu-3 -> GPU_DEVICE_3, gpu-0-partition-1 ->
         * GPU_DEVICE_0_PARTITION_1), as the example driver's profiles name
         * them, so every container sees the same name for a device whichever
         * request or claim it came through. The same device twice in one
         * claim (consumable capacity) gets _<ordinal>. */
        const env_style *st = style_of(res->device);
        bool gpu = st == &env_styles[0];
        const char *pre = st->env;
        char id[128];
        env_fragment(strncmp(res->device, st->name, strlen(st->name)) == 0 ? res->device + strlen(st->name)
                                                                         : res->device,
                     id, sizeof(id) - 24);
        for (size_t i = 0; i < p->spec.n_devices; i++)
                if (streq(p->spec.devices[i].name, cd->name)) {
                        free(cd->name);
                        if (!(cd->name = dp_asprintf("%s-%s-%zu", uid, res->device, ordinal))) return oom(p);
                        size_t l = strlen(id);
                        snprintf(id + l, sizeof(id) - l, "_%zu", ordinal);
                        break;
                }
        p->spec.n_devices++;
        dp_dra_cdi_edits *e = &cd->edits;
        char num[32];
        snprintf(num, sizeof(num), "%lld", (long long)sh.partitions);
        r = env_printf(e, res->device, "%s_%s", pre, id);
        if (r >= 0) r = env_printf(e, uid, "%s_%s_RESOURCE_CLAIM", pre, id);
        if (r >= 0 && gpu)
                r = env_printf(e, sh.strategy == SHARE_TIME_SLICING ? "TimeSlicing" : "SpacePartitioning",
                               "GPU_DEVICE_%s_SHARING_STRATEGY", id);
        if (r >= 0 && gpu && sh.strategy == SHARE_TIME_SLICING)
                r = env_printf(e, sh.interval, "GPU_DEVICE_%s_TIMESLICE_INTERVAL", id);
        if (r >= 0 && gpu && sh.strategy == SHARE_SPACE_PARTITIONING)
                r = env_printf(e, num, "GPU_DEVICE_%s_PARTITION_COUNT", id);
        for (size_t i = 0; r >= 0 && i < res->n_consumed_capacity; i++) {
                char frag[96], q[DP_QUANTITY_MAX_LEN];
                env_fragment(res->consumed_capacity[i].name, frag, sizeof(frag));
                dp_quantity_format(&res->consumed_capacity[i].value, q, sizeof(q));
                for (size_t k = 0; k < ELEMENTSOF(st->caps) && st->caps[k].capacity; k++) {
                        if (!streq(frag, st->caps[k].capacity)) continue;
                        if (st->caps[k].decimal)
                                snprintf(q, sizeof(q), "%lld",
                                         (long long)dp_quantity_value(&res->consumed_capacity[i].value));
                        snprintf(frag, sizeof(frag), "%s", st->caps[k].var);
                        break;
                }
                r = env_printf(e, q, "%s_%s_%s", pre, id, frag);
        }
        if (r >= 0 && res->share_id) r = env_printf(e, res->share_id, "%s_%s_SHARE_ID", pre, id);
        for (size_t i = 0; r >= 0 && i < dev->n_device_nodes; i++)
                r = dp_dra_cdi_edits_node(e, dev->device_nodes[i], NULL);
        if (r < 0) return oom(p);

        /* prepared device */
        dp_dra_prepared_device *pd = &p->out->claim.devices[n];
        p->out->claim.n_devices++;
        if (!(pd->requests = calloc(1, sizeof(char *))) ||
            !(pd->requests[0] = dp_strdup(res->request ? res->request : "")))
                return oom(p);
        pd->n_requests = 1;
        if (!(pd->pool = dp_strdup(res->pool)) || !(pd->device = dp_strdup(res->device))) return oom(p);
        if (!(pd->cdi_ids = calloc(1, sizeof(char *))) ||
            !(pd->cdi_ids[0] = dp_dra_cdi_qualified_name(inv->cdi_kind, cd->name)))
                return oom(p);
        pd->n_cdi_ids = 1;
        if (res->share_id && !(pd->share_id = dp_strdup(res->share_id))) return oom(p);
        return 0;
}

/* ---- KEP-5304 metadata ---- */

static dp_doc_node *attr_value(dp_doc_builder *b, const dp_device_attribute *a) {
        static const char *const keys[] = {"int", "bool", "string", "version", "ints", "bools", "strings", "versions"};
        dp_doc_node *m = dp_doc_b_map(b), *v = NULL;
        switch (a->type) {
        case DP_ATTR_INT: v = dp_doc_b_int(b, a->i); break;
        case DP_ATTR_BOOL: v = dp_doc_b_bool(b, a->b); break;
        case DP_ATTR_STRING:
        case DP_ATTR_VERSION: v = dp_doc_b_str(b, a->s ? a->s : ""); break;
        default:
                v = dp_doc_b_seq(b);
                for (size_t i = 0; i < a->n; i++)
                        dp_doc_b_push(b, v,
                                      a->type == DP_ATTR_INTS    ? dp_doc_b_int(b, a->ints[i])
                                      : a->type == DP_ATTR_BOOLS ? dp_doc_b_bool(b, a->bools[i])
                                                                 : dp_doc_b_str(b, a->strs[i]));
        }
        dp_doc_b_put(b, m, keys[a->type], v);
        return m;
}

static int metadata_doc(prep *p, const char *request, const char *pod_claim, int64_t generation, dp_strbuf *out) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        if (!s) return -ENOMEM;
        const dp_resource_claim *c = p->claim;
        const dp_dra_inventory *inv = p->in->inv;
        dp_doc_builder b = DP_DOC_BUILDER_INIT(s);
        dp_doc_node *root = dp_doc_b_map(&b), *meta = dp_doc_b_map(&b), *reqs = dp_doc_b_seq(&b),
                    *req = dp_doc_b_map(&b), *devs = dp_doc_b_seq(&b);
        dp_doc_b_put_str(&b, root, "apiVersion", DP_DRA_METADATA_API_VERSION);
        dp_doc_b_put_str(&b, root, "kind", "DeviceMetadata");
        dp_doc_b_put_str(&b, meta, "name", c->meta.name ? c->meta.name : "");
        dp_doc_b_put_str(&b, meta, "namespace", c->meta.namespace ? c->meta.namespace : "");
        dp_doc_b_put_str(&b, meta, "uid", c->meta.uid);
        dp_doc_b_put_int(&b, meta, "generation", generation);
        dp_doc_b_put(&b, root, "metadata", meta);
        dp_doc_b_put_str(&b, root, "podClaimName", pod_claim);
        dp_doc_b_put_str(&b, req, "name", request);
        const dp_allocation_result *a = c->allocation;
        for (size_t i = 0; i < a->n_results; i++) {
                const dp_device_allocation_result *res = &a->results[i];
                char base[128];
                if (!streq_ptr(res->driver, inv->driver) ||
                    !streq(request_base(res->request ? res->request : "", base, sizeof(base)), request))
                        continue;
                const dp_device *d =
                        dp_dra_slices_find_device(p->in->slices, p->in->n_slices, res->pool, res->device, NULL);
                dp_doc_node *x = dp_doc_b_map(&b), *attrs = dp_doc_b_map(&b);
                dp_doc_b_put_str(&b, x, "driver", res->driver);
                dp_doc_b_put_str(&b, x, "pool", res->pool);
                dp_doc_b_put_str(&b, x, "name", res->device);
                for (size_t j = 0; d && j < d->n_attributes; j++)
                        dp_doc_b_put(&b, attrs, d->attributes[j].name, attr_value(&b, &d->attributes[j]));
                dp_doc_b_put(&b, x, "attributes", attrs);
                dp_doc_b_push(&b, devs, x);
        }
        dp_doc_b_put(&b, req, "devices", devs);
        dp_doc_b_push(&b, reqs, req);
        dp_doc_b_put(&b, root, "requests", reqs);
        if (b.r < 0) return b.r;
        dp_doc_emit(out, root, DP_DOC_JSON_COMPACT);
        dp_strbuf_putc(out, '\n');
        return dp_strbuf_failed(out) ? -ENOMEM : 0;
}

static int add_metadata(prep *p, const dp_device_allocation_result *res, size_t cdi_index) {
        const dp_dra_inventory *inv = p->in->inv;
        dp_dra_prepare_output *o = p->out;
        char request[128];
        request_base(res->request ? res->request : "", request, sizeof(request));
        if (!path_part_ok(request))
                return dp_error_set(p->err, -EINVAL, "request \"%s\": not usable in a path", request);
        for (size_t i = 0; i < o->claim.n_metadata; i++)
                if (streq(o->claim.metadata[i].request, request)) return 0; /* the request's first device has it */
        const char *pod_claim =
                dp_kv_get(p->claim->meta.annotations, p->claim->meta.n_annotations, DP_DRA_POD_CLAIM_NAME_ANNOTATION);
        int64_t gen = p->in->prev ? p->in->prev->metadata_generation + 1 : 1;
        dp_dra_metadata_file *mf = &o->claim.metadata[o->claim.n_metadata];
        dp_dra_file *f = &o->metadata[o->n_metadata];
        o->claim.n_metadata++;
        o->n_metadata++;
        mf->request = dp_strdup(request);
        mf->path = dp_asprintf("%s/%s/%s-metadata.json", p->claim->meta.uid, request, inv->driver);
        mf->container_path = dp_asprintf("%s/%s/%s/%s/%s-metadata.json", DP_DRA_METADATA_ROOT,
                                         pod_claim ? "resourceclaimtemplates" : "resourceclaims",
                                         pod_claim ? pod_claim : p->claim->meta.name, request, inv->driver);
        f->name = dp_strdup(mf->path ? mf->path : "");
        _cleanup_free_ char *host = dp_asprintf("%s/%s", p->in->metadata_dir, mf->path ? mf->path : "");
        if (!mf->request || !mf->path || !mf->container_path || !f->name || !host) return oom(p);
        o->claim.metadata_generation = gen;
        dp_strbuf sb = DP_STRBUF_INIT;
        if (metadata_doc(p, request, pod_claim, gen, &sb) < 0) {
                dp_strbuf_done(&sb);
                return oom(p);
        }
        f->len = sb.len;
        f->data = dp_strbuf_steal(&sb);
        if (!f->data) return oom(p);
        static const char *const opts[] = {"ro", "nosuid", "nodev", "bind"};
        if (dp_dra_cdi_edits_mount(&p->spec.devices[cdi_index].edits, host, mf->container_path, opts,
                                   ELEMENTSOF(opts)) < 0)
                return oom(p);
        return 0;
}

static int run(prep *p) {
        const dp_resource_claim *c = p->claim;
        const dp_dra_inventory *inv = p->in->inv;
        dp_dra_prepare_output *o = p->out;
        if (!c->meta.uid || !*c->meta.uid) return dp_error_set(p->err, -EINVAL, "metadata.uid: required");
        if (!c->allocation) return dp_error_set(p->err, -EINVAL, "claim is not allocated (no status.allocation)");
        /* names become file and container path components */
        if (!path_part_ok(c->meta.uid)) return dp_error_set(p->err, -EINVAL, "metadata.uid: not usable in a file name");
        if (!path_part_ok(c->meta.name)) return dp_error_set(p->err, -EINVAL, "metadata.name: not usable in a path");
        if (!(o->claim.uid = dp_strdup(c->meta.uid)) ||
            !(o->claim.namespace = dp_strdup(c->meta.namespace ? c->meta.namespace : "")) ||
            !(o->claim.name = dp_strdup(c->meta.name ? c->meta.name : "")))
                return oom(p);
        const dp_allocation_result *a = c->allocation;
        size_t mine = 0;
        for (size_t i = 0; i < a->n_results; i++)
                if (streq_ptr(a->results[i].driver, inv->driver)) mine++;
        if (mine > DP_DRA_MAX_RESULTS)
                return dp_error_set(p->err, -E2BIG, "more than %d results (AllocationResultsMaxSize)",
                                    DP_DRA_MAX_RESULTS);
        if (!mine) return 0;
        if (!(p->spec.kind = dp_strdup(inv->cdi_kind)) || !(p->spec.devices = calloc(mine, sizeof(*p->spec.devices))) ||
            !(o->claim.devices = calloc(mine, sizeof(*o->claim.devices))))
                return oom(p);
        if (p->in->metadata_dir && (!(o->claim.metadata = calloc(mine, sizeof(*o->claim.metadata))) ||
                                    !(o->metadata = calloc(mine, sizeof(*o->metadata)))))
                return oom(p);
        bool admin = false;
        size_t n = 0;
        for (size_t i = 0; i < a->n_results; i++) {
                const dp_device_allocation_result *res = &a->results[i];
                if (!streq_ptr(res->driver, inv->driver)) continue;
                int r = add_result(p, res, n, n);
                if (r < 0) return r == -ENOMEM ? r : dp_error_prefix(p->err, "results[%zu]", i);
                if (res->has_admin_access && res->admin_access) admin = true;
                n++;
        }
        /* metadata once every result is known good: a request's file lists all its devices */
        n = 0;
        for (size_t i = 0; p->in->metadata_dir && i < a->n_results; i++) {
                const dp_device_allocation_result *res = &a->results[i];
                if (!streq_ptr(res->driver, inv->driver)) continue;
                int r = add_metadata(p, res, n++);
                if (r < 0) return r;
        }
        int r = dp_dra_cdi_edits_env(&p->spec.edits, "KUBERNETES_NODE_NAME", inv->node_name);
        if (r >= 0) r = dp_dra_cdi_edits_env(&p->spec.edits, "DRA_RESOURCE_DRIVER_NAME", inv->driver);
        if (r >= 0) r = dp_dra_cdi_edits_env(&p->spec.edits, "DRA_ADMIN_ACCESS", admin ? "true" : "false");
        for (size_t i = 0; r >= 0 && i < inv->n_common_device_nodes; i++)
                r = dp_dra_cdi_edits_node(&p->spec.edits, inv->common_device_nodes[i], NULL);
        if (r < 0) return oom(p);
        if ((r = dp_dra_cdi_spec_check(&p->spec, p->err)) < 0) return dp_error_prefix(p->err, "CDI spec");
        if (!(o->claim.cdi_spec_file = dp_dra_cdi_spec_file_name(inv->cdi_kind, c->meta.uid)) ||
            !(o->cdi_spec.name = dp_strdup(o->claim.cdi_spec_file)))
                return oom(p);
        dp_strbuf sb = DP_STRBUF_INIT;
        r = dp_state_file_marshal(&dp_dra_cdi_spec_file, &p->spec, &sb, p->err);
        if (r < 0) {
                dp_strbuf_done(&sb);
                return r == -ENOMEM ? oom(p) : r;
        }
        o->cdi_spec.len = sb.len;
        if (!(o->cdi_spec.data = dp_strbuf_steal(&sb)) ||
            !(o->claim.cdi_spec_text = dp_strndup(o->cdi_spec.data, o->cdi_spec.len)))
                return oom(p);
        return 0;
}

int dp_dra_prepare(const dp_dra_prepare_input *in, const dp_resource_claim *claim, dp_dra_prepare_output *ret,
                   dp_error *err) {
        assert_return(in && in->inv && claim && ret, -EINVAL);
        dp_dra_prepare_output out = {0};
        prep p = {in, claim, &out, {0}, err};
        int r = run(&p);
        dp_dra_cdi_spec_done(&p.spec);
        if (r < 0) {
                dp_dra_prepare_output_done(&out);
                return dp_error_prefix(err, "ResourceClaim %s/%s", claim->meta.namespace ? claim->meta.namespace : "",
                                       claim->meta.name ? claim->meta.name : "");
        }
        *ret = out;
        return 0;
}

bool dp_dra_skip_node_operation(const dp_allocation_result *a, const char *driver, dp_dra_node_op op) {
        if (!a || !driver) return false;
        const char *name = op == DP_DRA_NODE_PREPARE ? "NodePrepareResources" : "NodeUnprepareResources";
        size_t mine = 0;
        for (size_t i = 0; i < a->n_results; i++) {
                const dp_device_allocation_result *r = &a->results[i];
                if (!streq_ptr(r->driver, driver)) continue;
                mine++;
                bool skip = false;
                for (size_t j = 0; j < r->n_skip_node_operations; j++)
                        if (streq(r->skip_node_operations[j], name) || streq(r->skip_node_operations[j], "*"))
                                skip = true;
                if (!skip) return false;
        }
        return mine > 0;
}
