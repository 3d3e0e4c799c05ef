/* SPDX-License-Identifier: Apache-2.0
 * conformance-workloads.c — every workload under
 * $DP_SHARED_DIR/conformance/dra-example-driver/ against the example-gpu
 * profile, as far as it can be checked without the allocator:
 *   - every YAML file decodes with the model;
 *   - pods name claims that exist (a claim or template in the workload);
 *   - every request for DeviceClass gpu.example.com (selector
 *     `device.driver == 'gpu.example.com'`, the example driver's class) plus
 *     its own CEL selectors and capacity requests finds enough devices in the
 *     example-gpu slices (partition mode for the partition workloads);
 *   - a first-fit allocation of each claim prepares, and the CDI spec gives
 *     GPU_DEVICE_<ID>=<device> for each device (ID: name after gpu-), the sharing variables of its
 *     GpuConfig, DRA_ADMIN_ACCESS for admin access.
 * Requests for other drivers' classes (cpu.example.com, net.example.com:
 * other profiles of that project) are counted as skipped. */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>

#include "cel/cel.h"
#include "dra/inventory.h"
#include "dra/prepare.h"
#include "dra/slices.h"
#include "harness.h"

#define CLASS "gpu.example.com"

typedef struct env {
        dp_resource_slice *const *slices;
        size_t n_slices;
        dp_dra_prepare_input in;
        dp_cel_program *class_sel;
        unsigned claims, requests, skipped, files;
} env;

static void cel_device(const dp_resource_slice *s, const dp_device *d, dp_cel_device *ret, dp_cel_attribute *attrs,
                       dp_cel_capacity *caps) {
        for (size_t i = 0; i < d->n_attributes; i++) {
                const dp_device_attribute *a = &d->attributes[i];
                dp_cel_attr_value v = {0};
                switch (a->type) {
                case DP_ATTR_INT: v.type = DP_CEL_ATTR_INT, v.i = a->i; break;
                case DP_ATTR_BOOL: v.type = DP_CEL_ATTR_BOOL, v.b = a->b; break;
                case DP_ATTR_STRING: v.type = DP_CEL_ATTR_STRING, v.s = a->s; break;
                case DP_ATTR_VERSION: v.type = DP_CEL_ATTR_VERSION, v.s = a->s; break;
                default: DP_FAIL("list attribute %s in example-gpu", a->name);
                }
                attrs[i] = (dp_cel_attribute){NULL, a->name, v};
        }
        for (size_t i = 0; i < d->n_capacity; i++)
                caps[i] = (dp_cel_capacity){NULL, d->capacity[i].name, d->capacity[i].value};
        *ret = (dp_cel_device){s->driver, attrs, d->n_attributes, caps, d->n_capacity, d->allow_multiple_allocations};
}

static bool matches(const dp_cel_program *p, const dp_cel_device *d) {
        dp_cel_result r;
        dp_error err = DP_ERROR_INIT;
        if (dp_cel_eval(p, d, &r, &err) < 0) return false; /* a runtime error: the device does not match */
        return r.matches;
}

/* Devices of the slices that a request spec accepts, in slice order. */
static size_t candidates(env *e, const dp_device_request_spec *q, const dp_device **ret, size_t max) {
        dp_cel_program *sel[32] = {0};
        for (size_t i = 0; i < q->n_selectors && i < 32; i++) {
                dp_error err = DP_ERROR_INIT;
                if (dp_cel_compile(q->selectors[i].cel_expression, NULL, &sel[i], &err) < 0)
                        DP_FAIL("selector %s: %s", q->selectors[i].cel_expression, err.msg);
        }
        size_t n = 0;
        for (size_t s = 0; s < e->n_slices; s++)
                for (size_t k = 0; k < e->slices[s]->n_devices; k++) {
                        const dp_device *d = &e->slices[s]->devices[k];
                        dp_cel_attribute attrs[64];
                        dp_cel_capacity caps[64];
                        dp_cel_device cd;
                        cel_device(e->slices[s], d, &cd, attrs, caps);
                        bool ok = matches(e->class_sel, &cd);
                        for (size_t i = 0; ok && i < q->n_selectors; i++)
                                ok = matches(sel[i], &cd);
                        for (size_t i = 0; ok && i < q->n_capacity_requests; i++) {
                                const dp_device_capacity *c =
                                        dp_device_find_capacity(d, CLASS, q->capacity_requests[i].name);
                                ok = c && d->allow_multiple_allocations &&
                                     dp_quantity_cmp(&q->capacity_requests[i].value, &c->value) <= 0;
                        }
                        if (ok && n < max) ret[n++] = d;
                }
        for (size_t i = 0; i < 32; i++)
                dp_cel_program_free(sel[i]);
        return n;
}

/* First-fit allocation of a claim spec, as YAML; checks the outcome of prepare. */
static void allocate_and_prepare(env *e, const char *ns, const char *name, const dp_resource_claim_spec *spec,
                                 const char *where) {
        dp_strbuf y = DP_STRBUF_INIT, results = DP_STRBUF_INIT;
        const dp_device *used[256];
        const char *used_req[256];
        size_t n_used = 0;
        bool admin = false, any = false;
        for (size_t r = 0; r < spec->n_requests; r++) {
                const dp_device_request *rq = &spec->requests[r];
                const dp_device_request_spec *q = rq->exactly;
                char reqname[256];
                snprintf(reqname, sizeof(reqname), "%s", rq->name);
                const dp_device *cand[256];
                size_t nc = 0;
                if (q) {
                        if (!streq(q->device_class_name, CLASS)) {
                                e->skipped++;
                                continue;
                        }
                        nc = candidates(e, q, cand, 256);
                } else {
                        for (size_t k = 0; k < rq->n_first_available; k++) {
                                q = &rq->first_available[k].spec;
                                if (!streq(q->device_class_name, CLASS)) continue;
                                nc = candidates(e, q, cand, 256);
                                size_t need = q->allocation_mode == DP_ALLOCATION_MODE_ALL ? 1 : (size_t)q->count;
                                if (nc >= need) {
                                        snprintf(reqname, sizeof(reqname), "%s/%s", rq->name,
                                                 rq->first_available[k].name);
                                        break;
                                }
                                nc = 0;
                        }
                        if (!q) continue;
                }
                e->requests++;
                size_t need = q->allocation_mode == DP_ALLOCATION_MODE_ALL ? nc : (size_t)q->count;
                /* distinct devices inside the claim, unless the device is shared by capacity */
                size_t got = 0;
                for (size_t i = 0; i < nc && got < need; i++) {
                        bool taken = false;
                        for (size_t j = 0; j < n_used; j++)
                                if (used[j] == cand[i] && !cand[i]->allow_multiple_allocations) taken = true;
                        if (taken) continue;
                        used[n_used] = cand[i];
                        used_req[n_used++] = q->device_class_name;
                        got++;
                        bool adm = q->has_admin_access && q->admin_access;
                        admin |= adm;
                        any = true;
                        dp_strbuf_printf(&results, "      - {request: %s, driver: %s, pool: node-a, device: %s%s",
                                         reqname, CLASS, cand[i]->name, adm ? ", adminAccess: true" : "");
                        if (q->n_capacity_requests) {
                                dp_strbuf_printf(&results,
                                                 ", shareID: 00000000-0000-0000-0000-%012zu, consumedCapacity: {",
                                                 n_used);
                                for (size_t k = 0; k < q->n_capacity_requests; k++) {
                                        char qt[DP_QUANTITY_MAX_LEN];
                                        dp_quantity_format(&q->capacity_requests[k].value, qt, sizeof(qt));
                                        dp_strbuf_printf(&results, "%s%s: '%s'", k ? ", " : "",
                                                         q->capacity_requests[k].name, qt);
                                }
                                dp_strbuf_puts(&results, "}");
                        }
                        dp_strbuf_puts(&results, "}\n");
                }
                if (got < need || need == 0)
                        DP_FAIL("%s: %s: request %s: %zu of %zu devices found on example-gpu", where, name, rq->name,
                                got, need);
        }
        if (!any) {
                dp_strbuf_done(&results);
                return;
        }
        e->claims++;
        unsigned uid = e->claims;
        dp_strbuf_printf(&y,
                         "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                         "metadata: {name: %s, namespace: %s, uid: claim-%u}\n"
                         "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: %s}}]}}\n"
                         "status:\n  allocation:\n    devices:\n      results:\n%s",
                         name, ns, uid, CLASS, dp_strbuf_str(&results));
        if (spec->n_config) {
                dp_strbuf_puts(&y, "      config:\n");
                for (size_t i = 0; i < spec->n_config; i++) {
                        const dp_device_config *c = &spec->config[i];
                        dp_strbuf_puts(&y, "      - source: FromClaim\n        requests: [");
                        for (size_t k = 0; k < c->n_requests; k++)
                                dp_strbuf_printf(&y, "%s%s", k ? ", " : "", c->requests[k]);
                        dp_strbuf_printf(&y, "]\n        opaque: {driver: %s, parameters: %s}\n", c->driver,
                                         c->parameters_json);
                }
        }
        dp_object_list *l = dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        if (dp_model_decode_buffer(y.buf, y.len, where, l, &err) < 0) DP_FAIL("%s\n%s", err.msg, y.buf);
        dp_dra_prepare_output out;
        if (dp_dra_prepare(&e->in, l->items[0].claim, &out, &err) < 0) DP_FAIL("%s: prepare: %s", where, err.msg);
        /* GPU_DEVICE_<ID>=<device>, one per device, ID its name after gpu-
         * (the example driver's naming: gpu-3 -> GPU_DEVICE_3) */
        for (size_t i = 0; i < n_used; i++) {
                char want[256], id[128];
                size_t k = 0;
                for (const char *c = used[i]->name + 4; *c && k + 1 < sizeof(id); c++)
                        id[k++] = isalnum((unsigned char)*c) ? (char)toupper((unsigned char)*c) : '_';
                id[k] = 0;
                snprintf(want, sizeof(want), "\"GPU_DEVICE_%s=%s\"", id, used[i]->name);
                ASSERT_CONTAINS(out.cdi_spec.data, want);
        }
        size_t n_vars = 0;
        for (const char *q = out.cdi_spec.data; (q = strstr(q, "\"GPU_DEVICE_")); q++)
                if (strchr(q, '=') && strchr(q, '=') < strchr(q + 1, '"') && strstr(q, "=gpu-") == strchr(q, '='))
                        n_vars++;
        ASSERT_EQ(n_vars, n_used);
        ASSERT_EQ(out.claim.n_devices, n_used);
        ASSERT_CONTAINS(out.cdi_spec.data, admin ? "\"DRA_ADMIN_ACCESS=true\"" : "\"DRA_ADMIN_ACCESS=false\"");
        /* sharing: the GpuConfig of the workload, else TimeSlicing/Default */
        for (size_t i = 0; i < spec->n_config; i++) {
                const char *pj = spec->config[i].parameters_json;
                if (strstr(pj, "\"interval\":\"Long\""))
                        ASSERT_CONTAINS(out.cdi_spec.data, "_TIMESLICE_INTERVAL=Long\"");
                if (strstr(pj, "\"partitionCount\":10")) ASSERT_CONTAINS(out.cdi_spec.data, "_PARTITION_COUNT=10\"");
        }
        if (!spec->n_config) ASSERT_CONTAINS(out.cdi_spec.data, "_SHARING_STRATEGY=TimeSlicing\"");
        (void)used_req;
        /* the outcomes the workloads' READMEs state */
        if (admin) ASSERT_EQ(n_used, 8); /* admin-access: all GPUs of the node */
        if (streq(where, "partitionable-devices")) {
                ASSERT_EQ(n_used, 2);
                ASSERT_STREQ(used[0]->name, "gpu-0-partition-0");
                ASSERT_STREQ(used[1]->name, "gpu-0-partition-1");
        }
        if (streq(where, "prioritized-alternatives")) ASSERT_CONTAINS(y.buf, "request: gpu/");
        /* README: "GPU_DEVICE_0=gpu-0-partition-0"; the example driver names
         * the variable after the whole device name (envVarSafeID) */
        if (streq(where, "gpu-allow-multiple-allocations-partitionable"))
                ASSERT_CONTAINS(out.cdi_spec.data, "\"GPU_DEVICE_0_PARTITION_0=gpu-0-partition-0\"");
        dp_dra_prepare_output_done(&out);
        dp_object_list_free(l);
        dp_strbuf_done(&y);
        dp_strbuf_done(&results);
}

static bool has_claim(const dp_object_list *l, const dp_pod_resource_claim *rc, const char *ns) {
        if (rc->resource_claim_name)
                return dp_object_list_find(l, DP_KIND_RESOURCE_CLAIM, ns, rc->resource_claim_name).hdr != NULL;
        return dp_object_list_find(l, DP_KIND_RESOURCE_CLAIM_TEMPLATE, ns, rc->resource_claim_template_name).hdr !=
               NULL;
}

static void check_pod(const dp_object_list *l, const dp_pod *p, const char *where) {
        const char *ns = p->meta.namespace ? p->meta.namespace : "default";
        for (size_t i = 0; i < p->n_resource_claims; i++)
                if (!has_claim(l, &p->resource_claims[i], ns))
                        DP_FAIL("%s: pod %s: claim %s names nothing in the workload", where, p->meta.name,
                                p->resource_claims[i].name);
        for (size_t c = 0; c < p->n_containers + p->n_init_containers; c++) {
                const dp_container *ct =
                        c < p->n_containers ? &p->containers[c] : &p->init_containers[c - p->n_containers];
                for (size_t k = 0; k < ct->n_claims; k++) {
                        bool found = false;
                        for (size_t i = 0; i < p->n_resource_claims; i++)
                                if (streq(p->resource_claims[i].name, ct->claims[k].name)) found = true;
                        if (!found)
                                DP_FAIL("%s: pod %s: container %s uses unknown claim %s", where, p->meta.name, ct->name,
                                        ct->claims[k].name);
                }
        }
}

static void workload(const char *dir, const char *name) {
        bool partitions = strstr(name, "partition") != NULL;
        bool multiple = strstr(name, "allow-multiple") != NULL;
        struct dp_device_set *set = NULL;
        dp_error err = DP_ERROR_INIT;
        if (dp_dra_device_set_load("example-gpu", "node-a", &set, &err) < 0) DP_FAIL("%s", err.msg);
        dp_dra_inventory_options o = DP_DRA_INVENTORY_OPTIONS_INIT;
        o.partitions = partitions ? 4 : 0;
        o.allow_multiple = multiple;
        dp_dra_inventory *inv = NULL;
        if (dp_dra_inventory_build(set, &o, &inv, &err) < 0) DP_FAIL("%s", err.msg);
        dp_dra_publisher *pub = dp_dra_publisher_new(1);
        if (dp_dra_publisher_update(pub, inv, NULL, &err) < 0) DP_FAIL("%s", err.msg);
        env e = {0};
        e.slices = dp_dra_publisher_slices(pub, &e.n_slices);
        e.in.inv = inv;
        e.in.slices = e.slices;
        e.in.n_slices = e.n_slices;
        if (dp_cel_compile("device.driver == 'gpu.example.com'", NULL, &e.class_sel, &err) < 0) DP_FAIL("%s", err.msg);

        /* all YAML files of the workload (one level of subdirectories) */
        dp_object_list *l = dp_object_list_new();
        struct dirent **ents = NULL;
        int n = scandir(dir, &ents, NULL, alphasort);
        ASSERT_TRUE(n >= 0);
        for (int i = 0; i < n; i++) {
                const char *f = ents[i]->d_name;
                size_t len = strlen(f);
                if (len > 5 && streq(f + len - 5, ".yaml")) {
                        char *path = dp_asprintf("%s/%s", dir, f);
                        if (dp_model_load_file(path, l, &err) < 0) DP_FAIL("%s does not decode: %s", path, err.msg);
                        free(path);
                        e.files++;
                }
                free(ents[i]);
        }
        free(ents);
        ASSERT_TRUE(e.files > 0);
        for (size_t i = 0; i < l->n; i++) {
                dp_object obj = l->items[i];
                const char *ns = dp_object_meta_of(obj)->namespace ? dp_object_meta_of(obj)->namespace : "default";
                switch (obj.hdr->kind) {
                case DP_KIND_RESOURCE_CLAIM:
                        allocate_and_prepare(&e, ns, obj.claim->meta.name, &obj.claim->spec, name);
                        break;
                case DP_KIND_RESOURCE_CLAIM_TEMPLATE: {
                        char cname[300];
                        snprintf(cname, sizeof(cname), "%s-claim", obj.claim_template->meta.name);
                        allocate_and_prepare(&e, ns, cname, &obj.claim_template->spec, name);
                        break;
                }
                case DP_KIND_POD: check_pod(l, obj.pod, name); break;
                default: break;
                }
        }
        printf("  %-48s %u files, %u claims prepared, %u requests, %u skipped (other drivers)\n", name, e.files,
               e.claims, e.requests, e.skipped);
        dp_object_list_free(l);
        dp_cel_program_free(e.class_sel);
        dp_dra_publisher_free(pub);
        dp_dra_inventory_free(inv);
        dp_dra_device_set_free(set);
}

static void walk(const char *root, const char *rel, unsigned *count) {
        char *dir = dp_asprintf("%s%s%s", root, *rel ? "/" : "", rel);
        struct dirent **ents = NULL;
        int n = scandir(dir, &ents, NULL, alphasort);
        if (n < 0) DP_FAIL("%s: cannot read", dir);
        bool yaml = false;
        for (int i = 0; i < n; i++) {
                const char *f = ents[i]->d_name;
                size_t len = strlen(f);
                if (len > 5 && streq(f + len - 5, ".yaml")) yaml = true;
        }
        if (yaml) {
                workload(dir, rel);
                (*count)++;
        }
        for (int i = 0; i < n; i++) {
                const char *f = ents[i]->d_name;
                char *sub = dp_asprintf("%s%s%s", rel, *rel ? "/" : "", f);
                char *full = dp_asprintf("%s/%s", root, sub);
                struct stat st;
                if (f[0] != '.' && stat(full, &st) == 0 && S_ISDIR(st.st_mode)) walk(root, sub, count);
                free(sub);
                free(full);
                free(ents[i]);
        }
        free(ents);
        free(dir);
}

TEST(every_workload) {
        const char *shared = getenv("DP_SHARED_DIR");
        if (!shared) DP_FAIL("DP_SHARED_DIR is not set");
        char *root = dp_asprintf("%s/conformance/dra-example-driver", shared);
        unsigned count = 0;
        walk(root, "", &count);
        free(root);
        printf("  %u workloads\n", count);
        ASSERT_TRUE(count >= 18);
}

/* Scenario 8's DeviceClass on a100-mixed: healthy 1g.10gb MIG slices only. */
static size_t count_matching(const char *expr, const dp_dra_inventory *inv) {
        dp_error err = DP_ERROR_INIT;
        dp_resource_slice **v = NULL;
        size_t n = 0, hits = 0;
        if (dp_dra_slices_build(inv, NULL, &v, &n, &err) < 0) DP_FAIL("%s", err.msg);
        dp_cel_program *p = NULL;
        if (dp_cel_compile(expr, NULL, &p, &err) < 0) DP_FAIL("%s", err.msg);
        for (size_t s = 0; s < n; s++)
                for (size_t k = 0; k < v[s]->n_devices; k++) {
                        dp_cel_attribute attrs[64];
                        dp_cel_capacity caps[64];
                        dp_cel_device cd;
                        cel_device(v[s], &v[s]->devices[k], &cd, attrs, caps);
                        if (matches(p, &cd)) hits++;
                }
        dp_cel_program_free(p);
        dp_dra_slices_free(v, n);
        return hits;
}

TEST(scenario8_mig_class) {
        static const char expr[] = "device.attributes['nvidia.com'].migProfile == '1g.10gb' && "
                                   "device.attributes['nvidia.com'].healthy";
        struct dp_device_set *set = NULL;
        dp_error err = DP_ERROR_INIT;
        if (dp_dra_device_set_load("a100-mixed", "node-a", &set, &err) < 0) DP_FAIL("%s", err.msg);
        dp_dra_inventory *inv = NULL;
        ASSERT_OK(dp_dra_inventory_build(set, NULL, &inv, &err));
        ASSERT_EQ(count_matching(expr, inv), 28);
        /* scenario 9's matchAttribute names a fully qualified parentUUID */
        ASSERT_EQ(count_matching("device.attributes['gpu.nvidia.com'].parentUUID != ''", inv), 28);
        dp_dra_inventory_free(inv);
        ASSERT_OK(dp_dra_device_set_health(set, "gpu-0-mig-1g.10gb-2", false, &err));
        ASSERT_OK(dp_dra_device_set_health(set, "gpu-1", false, &err));
        ASSERT_OK(dp_dra_inventory_build(set, NULL, &inv, &err));
        ASSERT_EQ(count_matching(expr, inv), 28 - 1 - 7);
        dp_dra_inventory_free(inv);
        dp_dra_device_set_free(set);
}
