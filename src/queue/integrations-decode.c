/* SPDX-License-Identifier: Apache-2.0
 *
 * integrations-decode.c — the kinds of Kueue's job integrations (Kubeflow's
 * training jobs, MPIJob, KubeRay, SparkApplication, AppWrapper,
 * LeaderWorkerSet, CronJob) through their own model extension table, and
 * their pod sets as Kueue's integrations build them (pkg/controller/jobs).
 * Only what Kueue reads is decoded and checked; any other field of these
 * other projects' objects is taken silently.
 */
#include <ctype.h>
#include <stdio.h>

#include "doc/builder.h"
#include "model/decode-internal.h"
#include "queue/integrations.h"
#include "queue/jobset.h"
#include "queue/kueue.h"

/* DECODE_FIELDS where a key BODY does not take is accepted silently. */
#define QJ_FIELDS(c, map_, k, v, BODY)                                                                                 \
        do {                                                                                                           \
                int _e = expect_map((c), (map_));                                                                      \
                if (_e <= 0) return _e;                                                                                \
                for (size_t _i = 0; _i < (map_)->n; _i++) {                                                            \
                        const char *k = (map_)->pairs[_i].key;                                                         \
                        const dp_doc_node *v = (map_)->pairs[_i].value;                                                \
                        size_t _mark = path_key((c), k);                                                               \
                        int r;                                                                                         \
                        BODY else r = 0;                                                                               \
                        if (r < 0) return r;                                                                           \
                        path_pop((c), _mark);                                                                          \
                }                                                                                                      \
        } while (0)

static const dp_doc_node *get_path(const dp_doc_node *n, const char *key) {
        return n && n->type == DP_DOC_MAP ? dp_doc_get(n, key) : NULL;
}

static const char *obj_name(dp_object o) { return o.ext->meta.name ? o.ext->meta.name : ""; }

/* A new pod set of j named name (lower-cased, as Kueue's pod set references
 * are), count pods named prefix-(first+i), or prefix alone when single. */
static dp_qj_podset *add_ps(dctx *c, const dp_doc_node *at, dp_qj_job *j, const char *name, int32_t count,
                            int32_t first, bool single, char *prefix) {
        if (!prefix) {
                dp_error_set(c->err, -ENOMEM, "out of memory");
                return NULL;
        }
        if (j->n_ps >= DP_QJ_MAX_PODSETS) {
                free(prefix);
                dfail(c, at, -E2BIG, "more than %d pod sets (Kueue's limit for a workload)", DP_QJ_MAX_PODSETS);
                return NULL;
        }
        dp_qj_podset *v = realloc(j->ps, (j->n_ps + 1) * sizeof(*v));
        if (!v) {
                free(prefix);
                dp_error_set(c->err, -ENOMEM, "out of memory");
                return NULL;
        }
        j->ps = v;
        dp_qj_podset *ps = &v[j->n_ps++];
        *ps = (dp_qj_podset){.count = count, .first = first, .single = single, .pod_prefix = prefix};
        if (!(ps->name = strdup(name))) {
                dp_error_set(c->err, -ENOMEM, "out of memory");
                return NULL;
        }
        for (char *p = ps->name; *p; p++)
                *p = (char)tolower((unsigned char)*p);
        return ps;
}

/* A PodTemplateSpec: as a Pod (the model's own checks) and as JSON. */
static int ps_template(dctx *c, const dp_doc_node *n, dp_qj_podset *ps) {
        if (!n || dp_doc_is_null(n)) return dfail(c, n, -EINVAL, "required");
        int r = expect_map(c, n);
        if (r <= 0) return r < 0 ? r : -EINVAL;
        dp_pod *p = calloc(1, sizeof(*p));
        if (!p) return dp_error_set(c->err, -ENOMEM, "out of memory");
        ps->tmpl = p;
        p->hdr.kind = DP_KIND_POD;
        p->hdr.line = n->line;
        size_t m = path_key(c, "metadata");
        r = decode_meta(c, dp_doc_get(n, "metadata"), &p->meta);
        path_pop(c, m);
        if (r >= 0) r = decode_pod(c, n, p);
        if (r >= 0) r = get_json(c, n, &ps->tmpl_json);
        return r;
}

/* The template of node n's `template` key into ps. */
static int ps_template_at(dctx *c, const dp_doc_node *n, dp_qj_podset *ps) {
        size_t m = path_key(c, "template");
        int r = ps_template(c, get_path(n, "template"), ps);
        if (r >= 0) path_pop(c, m);
        return r;
}

/* An optional int32 field ≥ min, def when absent; at most the pods an
 * owner may stand up (DP_WORKLOAD_PODS_MAX). */
static int get_count(dctx *c, const dp_doc_node *map, const char *key, int32_t def, int32_t min, int32_t *ret) {
        const dp_doc_node *v = get_path(map, key);
        *ret = def;
        if (!v || dp_doc_is_null(v)) return 0;
        size_t m = path_key(c, key);
        int r = get_int32(c, v, ret);
        if (r >= 0 && *ret < min) r = dfail(c, v, -EINVAL, "must be greater than or equal to %d", min);
        if (r >= 0 && *ret > DP_WORKLOAD_PODS_MAX)
                r = dfail(c, v, -E2BIG, "must be at most %d (the pods devplane stands up for one owner)",
                          DP_WORKLOAD_PODS_MAX);
        if (r >= 0) path_pop(c, m);
        return r;
}

/* ---- Kubeflow training jobs, MPIJob (kubeflowjob.PodSets) ---- */

typedef struct kf_kind {
        const char *kind, *field;
        const char *const *types; /* OrderedReplicaTypes */
} kf_kind;

static const char *const master_worker[] = {"Master", "Worker", NULL};
static const char *const tf_types[] = {"Chief", "Master", "PS", "Worker", "Evaluator", NULL};
static const char *const jax_types[] = {"Worker", NULL};
static const char *const mpi_types[] = {"Launcher", "Worker", NULL};

static const kf_kind kf_kinds[] = {
        {"PyTorchJob", "pytorchReplicaSpecs", master_worker}, {"TFJob", "tfReplicaSpecs", tf_types},
        {"XGBoostJob", "xgbReplicaSpecs", master_worker},     {"PaddleJob", "paddleReplicaSpecs", master_worker},
        {"JAXJob", "jaxReplicaSpecs", jax_types},             {"MPIJob", "mpiReplicaSpecs", mpi_types},
};

static const kf_kind *kf_of(dp_object o) {
        for (size_t i = 0; i < ELEMENTSOF(kf_kinds); i++)
                if (streq(kf_kinds[i].kind, o.ext->ext->kind)) return &kf_kinds[i];
        return NULL;
}

static int run_policy(dctx *c, const dp_doc_node *n, dp_qj_job *j) {
        int e = expect_map(c, n);
        if (e <= 0) return e;
        const dp_doc_node *sp = dp_doc_get(n, "schedulingPolicy");
        if (!sp) return 0;
        size_t m = path_key(c, "schedulingPolicy");
        QJ_FIELDS(c, sp, k, v, if (streq(k, "priorityClass")) r = get_str(c, v, &j->priority_class););
        path_pop(c, m);
        return 0;
}

static int kf_replica(dctx *c, const dp_doc_node *n, dp_object o, const char *type) {
        dp_qj_job *j = (dp_qj_job *)o.ext;
        int32_t count;
        int r = get_count(c, n, "replicas", 1, 0, &count);
        if (r < 0) return r;
        bool launcher = streq(type, "Launcher");
        char lower[32];
        snprintf(lower, sizeof(lower), "%s", type);
        for (char *p = lower; *p; p++)
                *p = (char)tolower((unsigned char)*p);
        dp_qj_podset *ps = add_ps(c, n, j, type, count, 0, launcher && count == 1,
                                  dp_asprintf("%s-%s", obj_name(o), lower));
        return ps ? ps_template_at(c, n, ps) : -EINVAL;
}

static int kf_specs(dctx *c, const dp_doc_node *n, dp_object o, const kf_kind *kf) {
        int r = expect_map(c, n);
        if (r <= 0) return r;
        for (size_t i = 0; i < n->n; i++) {
                bool known = false;
                for (size_t t = 0; kf->types[t] && !known; t++)
                        known = streq(kf->types[t], n->pairs[i].key);
                if (!known) {
                        path_key(c, n->pairs[i].key);
                        return dfail(c, n->pairs[i].value, -EINVAL, "not a replica type of %s", kf->kind);
                }
        }
        for (size_t t = 0; kf->types[t]; t++) {
                const dp_doc_node *v = dp_doc_get(n, kf->types[t]);
                if (!v || dp_doc_is_null(v)) continue;
                size_t m = path_key(c, kf->types[t]);
                if ((r = expect_map(c, v)) < 0 || (r = kf_replica(c, v, o, kf->types[t])) < 0) return r;
                path_pop(c, m);
        }
        return 0;
}

/* These kinds are Kueue's only when labelled for a queue
 * (kueue.x-k8s.io/queue-name); others are left to their own operators and
 * skipped with the kinds devplane does not model. */
static bool labelled(dp_object o) {
        return dp_kv_get(o.ext->meta.labels, o.ext->meta.n_labels, DP_KUEUE_QUEUE_LABEL) != NULL;
}

static int decode_kubeflow(dctx *c, const dp_doc_node *root, dp_object o, dp_object_list *out) {
        if (!labelled(o)) return DP_EXT_SKIP; /* not Kueue's: skipped as before the table */
        (void)out;
        const kf_kind *kf = kf_of(o);
        dp_qj_job *j = (dp_qj_job *)o.ext;
        const dp_doc_node *spec = get_path(root, "spec");
        if (!spec) return dfail(c, root, -EINVAL, "spec: required");
        size_t m = path_key(c, "spec");
        QJ_FIELDS(c, spec, k, v, if (streq(k, kf->field)) r = kf_specs(c, v, o, kf);
                  else if (streq(k, "runPolicy")) r = run_policy(c, v, j););
        path_pop(c, m);
        if (!j->n_ps) return dfail(c, spec, -EINVAL, "spec.%s: required", kf->field);
        return 0;
}

/* ---- KubeRay (rayjob, raycluster, rayservice PodSets) ---- */

static int ray_worker(dctx *c, const dp_doc_node *n, dp_object o) {
        dp_qj_job *j = (dp_qj_job *)o.ext;
        int r = expect_map(c, n);
        if (r <= 0) return r < 0 ? r : dfail(c, n, -EINVAL, "required");
        const dp_doc_node *gn = get_path(n, "groupName");
        _cleanup_free_ char *group = NULL;
        size_t m = path_key(c, "groupName");
        if (!gn || dp_doc_is_null(gn)) return dfail(c, n, -EINVAL, "required");
        if ((r = get_str(c, gn, &group)) < 0) return r;
        if (streq(group, "head")) return dfail(c, gn, -EINVAL, "Forbidden: \"head\" is reserved for the head group");
        path_pop(c, m);
        int32_t replicas, hosts;
        if ((r = get_count(c, n, "replicas", 1, 0, &replicas)) < 0) return r;
        if ((r = get_count(c, n, "numOfHosts", 1, 1, &hosts)) < 0) return r;
        if ((int64_t)replicas * hosts > DP_WORKLOAD_PODS_MAX)
                return dfail(c, n, -E2BIG, "replicas times numOfHosts: more than %d pods", DP_WORKLOAD_PODS_MAX);
        dp_qj_podset *ps = add_ps(c, n, j, group, replicas * hosts, 0, false,
                                  dp_asprintf("%s-%s-worker", obj_name(o), group));
        return ps ? ps_template_at(c, n, ps) : -EINVAL;
}

/* A RayClusterSpec: the head (count 1), then each worker group
 * (replicas × numOfHosts), named by groupName. */
static int ray_cluster(dctx *c, const dp_doc_node *n, dp_object o) {
        dp_qj_job *j = (dp_qj_job *)o.ext;
        int r = expect_map(c, n);
        if (r <= 0) return r < 0 ? r : dfail(c, n, -EINVAL, "required");
        const dp_doc_node *head = get_path(n, "headGroupSpec"), *workers = get_path(n, "workerGroupSpecs");
        size_t m = path_key(c, "headGroupSpec");
        if (!head) return dfail(c, n, -EINVAL, "required");
        dp_qj_podset *ps = add_ps(c, head, j, "head", 1, 0, true, dp_asprintf("%s-head", obj_name(o)));
        if (!ps || (r = ps_template_at(c, head, ps)) < 0) return ps ? r : -EINVAL;
        path_pop(c, m);
        m = path_key(c, "workerGroupSpecs");
        if (workers && !dp_doc_is_null(workers)) {
                if ((r = expect_seq(c, workers)) < 0) return r;
                if (workers->n > 7)
                        return dfail(c, workers, -E2BIG, "Too many: %zu: must have at most 7 items", workers->n);
                for (size_t i = 0; i < workers->n; i++) {
                        size_t mi = path_index(c, i);
                        if ((r = ray_worker(c, workers->items[i], o)) < 0) return r;
                        path_pop(c, mi);
                }
        }
        path_pop(c, m);
        const dp_doc_node *as = get_path(n, "enableInTreeAutoscaling");
        bool autoscaling = false;
        if (as && (r = get_bool(c, as, &autoscaling)) < 0) return r;
        const char *elastic = dp_kv_get(o.ext->meta.annotations, o.ext->meta.n_annotations, "kueue.x-k8s.io/elastic-job");
        bool queued = dp_kv_get(o.ext->meta.labels, o.ext->meta.n_labels, DP_KUEUE_QUEUE_LABEL);
        if (autoscaling && queued && !streq_ptr(elastic, "true"))
                return dfail(c, as, -EINVAL,
                             "enableInTreeAutoscaling: Invalid value: true: a kueue managed job should only use "
                             "autoscaling when workload slicing is enabled");
        return 0;
}

/* KubeRay's default submitter (K8sJobMode without submitterPodTemplate),
 * as Kueue's rayjob integration charges it. */
static const char submitter_json[] =
        "{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"ray-job-submitter\",\"resources\":"
        "{\"limits\":{\"cpu\":\"1\",\"memory\":\"1Gi\"},\"requests\":{\"cpu\":\"500m\",\"memory\":\"200Mi\"}}}]}}";

static int ray_submitter(dctx *c, const dp_doc_node *spec, dp_object o) {
        dp_qj_job *j = (dp_qj_job *)o.ext;
        dp_qj_podset *ps = add_ps(c, spec, j, "submitter", 1, 0, true, dp_asprintf("%s-submitter", obj_name(o)));
        if (!ps) return -EINVAL;
        const dp_doc_node *t = get_path(spec, "submitterPodTemplate");
        if (t && !dp_doc_is_null(t)) {
                size_t m = path_key(c, "submitterPodTemplate");
                int r = ps_template(c, t, ps);
                if (r >= 0) path_pop(c, m);
                return r;
        }
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        if (!s) return dp_error_set(c->err, -ENOMEM, "out of memory");
        int r = dp_doc_parse(s, submitter_json, strlen(submitter_json), "submitter", c->err);
        return r < 0 ? r : ps_template(c, dp_doc_root(s, 0), ps);
}

static int decode_ray(dctx *c, const dp_doc_node *root, dp_object o, dp_object_list *out) {
        if (!labelled(o)) return DP_EXT_SKIP; /* not Kueue's: skipped as before the table */
        (void)out;
        const char *kind = o.ext->ext->kind;
        const char *field = streq(kind, "RayJob") ? "rayClusterSpec"
                            : streq(kind, "RayService") ? "rayClusterConfig" : NULL;
        const dp_doc_node *spec = get_path(root, "spec");
        if (!spec) return dfail(c, root, -EINVAL, "spec: required");
        size_t m = path_key(c, "spec");
        int r = expect_map(c, spec);
        if (r <= 0) return r < 0 ? r : -EINVAL;
        if (!field) return ray_cluster(c, spec, o);
        const dp_doc_node *cl = get_path(spec, field);
        if (!cl && streq(kind, "RayJob") && get_path(spec, "clusterSelector")) return 0; /* an existing cluster */
        size_t mc = path_key(c, field);
        if ((r = ray_cluster(c, cl, o)) < 0) return r;
        path_pop(c, mc);
        if (!streq(kind, "RayJob")) return 0;
        const dp_doc_node *mode = get_path(spec, "submissionMode");
        _cleanup_free_ char *sm = NULL;
        if (mode) {
                size_t mm = path_key(c, "submissionMode");
                if ((r = get_str(c, mode, &sm)) < 0) return r;
                if (sm && !streq(sm, "K8sJobMode") && !streq(sm, "HTTPMode") && !streq(sm, "InteractiveMode") &&
                    !streq(sm, "SidecarMode"))
                        return dfail(c, mode, -EINVAL,
                                     "Unsupported value: \"%s\": supported values: \"K8sJobMode\", \"HTTPMode\", "
                                     "\"InteractiveMode\", \"SidecarMode\"",
                                     sm);
                path_pop(c, mm);
        }
        r = !sm || streq(sm, "K8sJobMode") ? ray_submitter(c, spec, o) : 0;
        if (r >= 0) path_pop(c, m);
        return r;
}

/* ---- SparkApplication (sparkapplication PodSets) ---- */

/* Spark's memory strings (JavaUtils.byteStringAsBytes: b, k, m, g, t, p,
 * binary multiples, an optional trailing b) in bytes; -1 when not one. */
static int64_t java_bytes(const char *s) {
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno || end == s || v < 0) return -1;
        static const char units[] = "bkmgtp";
        int shift = 0;
        if (*end) {
                const char *u = strchr(units, tolower((unsigned char)*end));
                if (!u) return -1;
                shift = (int)(u - units) * 10;
                end++;
                if (shift && tolower((unsigned char)*end) == 'b') end++;
        }
        if (*end || v > (INT64_MAX >> shift)) return -1;
        return (int64_t)v << shift;
}

typedef struct spark_pod {
        char *core_request, *core_limit, *memory, *priority_class;
} spark_pod;

static int spark_fields(dctx *c, const dp_doc_node *n, spark_pod *sp, int32_t *instances) {
        QJ_FIELDS(c, n, k, v, if (streq(k, "coreRequest")) r = get_str(c, v, &sp->core_request);
                  else if (streq(k, "coreLimit")) r = get_str(c, v, &sp->core_limit);
                  else if (streq(k, "memory")) {
                          r = get_str(c, v, &sp->memory);
                          if (r >= 0 && sp->memory && java_bytes(sp->memory) < 0)
                                  r = dfail(c, v, -EINVAL, "%s: not a Spark memory size (e.g. 512m, 2g)", sp->memory);
                  } else if (streq(k, "priorityClassName")) r = get_str(c, v, &sp->priority_class);
                  else if (streq(k, "instances") && instances) {
                          r = get_int32(c, v, instances);
                          if (r >= 0 && *instances < 0) r = dfail(c, v, -EINVAL, "must be greater than or equal to 0");
                  });
        dp_quantity q;
        if (sp->core_request && dp_quantity_parse(sp->core_request, &q, NULL) < 0)
                return dfail(c, n, -EINVAL, "coreRequest: %s can't parse", sp->core_request);
        if (sp->core_limit && dp_quantity_parse(sp->core_limit, &q, NULL) < 0)
                return dfail(c, n, -EINVAL, "coreLimit: %s can't parse", sp->core_limit);
        return 0;
}

/* The pod Kueue builds for a Spark role: one container (Spark's name for it)
 * requesting coreRequest cpu and the memory, limited to coreLimit. */
static dp_doc_node *spark_pod_doc(dp_doc_builder *b, const spark_pod *sp, const char *container) {
        dp_doc_node *root = dp_doc_b_map(b), *spec = dp_doc_b_map(b), *cs = dp_doc_b_seq(b), *ct = dp_doc_b_map(b);
        dp_doc_node *res = dp_doc_b_map(b), *req = dp_doc_b_map(b), *lim = dp_doc_b_map(b);
        dp_doc_b_put_str(b, ct, "name", container);
        if (sp->core_request) dp_doc_b_put_str(b, req, "cpu", sp->core_request);
        if (sp->memory) dp_doc_b_put_int(b, req, "memory", java_bytes(sp->memory));
        if (sp->core_limit) dp_doc_b_put_str(b, lim, "cpu", sp->core_limit);
        dp_doc_b_put(b, res, "requests", req);
        dp_doc_b_put(b, res, "limits", lim);
        dp_doc_b_put(b, ct, "resources", res);
        dp_doc_b_push(b, cs, ct);
        dp_doc_b_put(b, spec, "containers", cs);
        if (sp->priority_class) dp_doc_b_put_str(b, spec, "priorityClassName", sp->priority_class);
        dp_doc_b_put(b, root, "spec", spec);
        return root;
}

static int spark_role(dctx *c, const dp_doc_node *spec, dp_object o, bool driver) {
        const char *key = driver ? "driver" : "executor";
        const dp_doc_node *n = get_path(spec, key);
        size_t m = path_key(c, key);
        if (!n) return dfail(c, spec, -EINVAL, "required");
        spark_pod sp = {0};
        int32_t instances = 1;
        int r = spark_fields(c, n, &sp, driver ? NULL : &instances);
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = r < 0 ? NULL : dp_doc_set_new();
        if (r >= 0 && !s) r = dp_error_set(c->err, -ENOMEM, "out of memory");
        dp_qj_podset *ps = NULL;
        if (r >= 0) {
                dp_doc_builder b = DP_DOC_BUILDER_INIT(s);
                dp_doc_node *doc = spark_pod_doc(&b, &sp, driver ? "spark-kubernetes-driver" : "spark-kubernetes-executor");
                ps = add_ps(c, n, (dp_qj_job *)o.ext, key, instances, driver ? 0 : 1, driver,
                            dp_asprintf("%s-%s", obj_name(o), driver ? "driver" : "exec"));
                r = !ps ? -EINVAL : b.r < 0 ? dp_error_set(c->err, -ENOMEM, "out of memory") : ps_template(c, doc, ps);
        }
        dp_free_many(sp.core_request, sp.core_limit, sp.memory, sp.priority_class);
        if (r >= 0) path_pop(c, m);
        return r;
}

static int decode_spark(dctx *c, const dp_doc_node *root, dp_object o, dp_object_list *out) {
        if (!labelled(o)) return DP_EXT_SKIP; /* not Kueue's: skipped as before the table */
        (void)out;
        const dp_doc_node *spec = get_path(root, "spec");
        if (!spec) return dfail(c, root, -EINVAL, "spec: required");
        size_t m = path_key(c, "spec");
        int r = expect_map(c, spec);
        if (r <= 0) return r < 0 ? r : -EINVAL;
        bool dynamic = false;
        const dp_doc_node *da = get_path(spec, "dynamicAllocation");
        if (da && get_path(da, "enabled")) {
                size_t md = path_key(c, "dynamicAllocation"), me = path_key(c, "enabled");
                if ((r = get_bool(c, get_path(da, "enabled"), &dynamic)) < 0) return r;
                path_pop(c, me);
                path_pop(c, md);
        }
        /* dynamic allocation: Kueue admits the driver alone (executors detached) */
        if ((r = spark_role(c, spec, o, true)) < 0 || (!dynamic && (r = spark_role(c, spec, o, false)) < 0)) return r;
        path_pop(c, m);
        return 0;
}

/* ---- AppWrapper (appwrapper PodSets: "<appwrapper>-<index>") ---- */

/* The node at a component's podSets[].path ("template.spec.template",
 * "template.spec.workerGroupSpecs[0].template"), from the component. */
static const dp_doc_node *aw_resolve(const dp_doc_node *comp, const char *path) {
        const dp_doc_node *n = comp;
        char seg[256];
        for (const char *p = path; n && *p;) {
                size_t len = strcspn(p, ".[");
                if (len >= sizeof(seg)) return NULL;
                if (len) {
                        memcpy(seg, p, len);
                        seg[len] = 0;
                        n = get_path(n, seg);
                }
                p += len;
                if (*p == '[') {
                        char *end;
                        unsigned long i = strtoul(p + 1, &end, 10);
                        if (*end != ']' || !n || n->type != DP_DOC_SEQ || i >= n->n) return NULL;
                        n = n->items[i];
                        p = end + 1;
                }
                if (*p == '.') p++;
        }
        return n;
}

static int aw_podset(dctx *c, const dp_doc_node *comp, const dp_doc_node *decl, dp_object o, const char *path,
                     int32_t replicas) {
        dp_qj_job *j = (dp_qj_job *)o.ext;
        char name[320];
        snprintf(name, sizeof(name), "%s-%zu", obj_name(o), j->n_ps);
        dp_qj_podset *ps = add_ps(c, decl, j, name, replicas, 0, false, strdup(name));
        if (!ps) return -EINVAL;
        const dp_doc_node *t = aw_resolve(comp, path);
        if (!t) return dfail(c, decl, -EINVAL, "path: %s: no pod template there in the component", path);
        return ps_template(c, t, ps);
}

/* podSets the AppWrapper's webhook infers for a component without them. */
static int aw_infer(dctx *c, const dp_doc_node *comp, dp_object o) {
        const dp_doc_node *t = get_path(comp, "template"), *kind = get_path(t, "kind");
        const dp_doc_node *spec = get_path(t, "spec");
        const char *k = kind && kind->type == DP_DOC_SCALAR ? kind->str : "";
        int32_t n;
        int r = 0;
        if (streq(k, "Deployment") || streq(k, "StatefulSet") || streq(k, "Job")) {
                if ((r = get_count(c, spec, streq(k, "Job") ? "parallelism" : "replicas", 1, 0, &n)) < 0) return r;
                return aw_podset(c, comp, comp, o, "template.spec.template", n);
        }
        if (streq(k, "Pod")) return aw_podset(c, comp, comp, o, "template", 1);
        for (size_t i = 0; i < ELEMENTSOF(kf_kinds); i++) {
                if (!streq(k, kf_kinds[i].kind)) continue;
                const dp_doc_node *specs = get_path(spec, kf_kinds[i].field);
                for (size_t t2 = 0; kf_kinds[i].types[t2] && r >= 0; t2++) {
                        const dp_doc_node *rs = get_path(specs, kf_kinds[i].types[t2]);
                        if (!rs) continue;
                        char path[160];
                        snprintf(path, sizeof(path), "template.spec.%s.%s.template", kf_kinds[i].field,
                                 kf_kinds[i].types[t2]);
                        if ((r = get_count(c, rs, "replicas", 1, 0, &n)) >= 0) r = aw_podset(c, comp, comp, o, path, n);
                }
                return r;
        }
        return dfail(c, comp, -EINVAL, "podSets: required for a component of kind %s", k[0] ? k : "(none)");
}

static int aw_component(dctx *c, const dp_doc_node *comp, dp_object o) {
        int r = expect_map(c, comp);
        if (r <= 0) return r;
        const dp_doc_node *decl = get_path(comp, "podSets");
        if (!decl || dp_doc_is_null(decl) || (decl->type == DP_DOC_SEQ && !decl->n)) return aw_infer(c, comp, o);
        size_t m = path_key(c, "podSets");
        if ((r = expect_seq(c, decl)) < 0) return r;
        for (size_t i = 0; i < decl->n; i++) {
                size_t mi = path_index(c, i);
                const dp_doc_node *d = decl->items[i], *pn = get_path(d, "path");
                int32_t n;
                if ((r = get_count(c, d, "replicas", 1, 0, &n)) < 0) return r;
                if (!pn || pn->type != DP_DOC_SCALAR) return dfail(c, d, -EINVAL, "path: required");
                if ((r = aw_podset(c, comp, d, o, pn->str, n)) < 0) return r;
                path_pop(c, mi);
        }
        path_pop(c, m);
        return 0;
}

static int decode_appwrapper(dctx *c, const dp_doc_node *root, dp_object o, dp_object_list *out) {
        if (!labelled(o)) return DP_EXT_SKIP; /* not Kueue's: skipped as before the table */
        (void)out;
        const dp_doc_node *comps = get_path(get_path(root, "spec"), "components");
        if (!comps) return dfail(c, root, -EINVAL, "spec.components: required");
        size_t m = path_key(c, "spec"), mc = path_key(c, "components");
        int r = expect_seq(c, comps);
        for (size_t i = 0; r >= 0 && i < comps->n; i++) {
                size_t mi = path_index(c, i);
                if ((r = aw_component(c, comps->items[i], o)) >= 0) path_pop(c, mi);
        }
        if (r < 0) return r;
        path_pop(c, mc);
        path_pop(c, m);
        return 0;
}

/* ---- LeaderWorkerSet: a workload per group, "leader" + "worker" or "main" ---- */

static int decode_lws(dctx *c, const dp_doc_node *root, dp_object o, dp_object_list *out) {
        if (!labelled(o)) return DP_EXT_SKIP; /* not Kueue's: skipped as before the table */
        (void)out;
        dp_qj_job *j = (dp_qj_job *)o.ext;
        const dp_doc_node *spec = get_path(root, "spec");
        if (!spec) return dfail(c, root, -EINVAL, "spec: required");
        size_t m = path_key(c, "spec");
        int32_t size;
        int r = get_count(c, spec, "replicas", 1, 0, &j->groups);
        if (r < 0) return r;
        const dp_doc_node *lwt = get_path(spec, "leaderWorkerTemplate");
        size_t ml = path_key(c, "leaderWorkerTemplate");
        if (!lwt) return dfail(c, spec, -EINVAL, "required");
        if ((r = get_count(c, lwt, "size", 1, 1, &size)) < 0) return r;
        const dp_doc_node *leader = get_path(lwt, "leaderTemplate");
        char *prefix = dp_asprintf("%s", obj_name(o));
        dp_qj_podset *ps = leader ? add_ps(c, lwt, j, "leader", 1, 0, true, prefix)
                                  : add_ps(c, lwt, j, "main", size, 0, false, prefix);
        if (!ps) return -EINVAL;
        size_t mt = path_key(c, leader ? "leaderTemplate" : "workerTemplate");
        if ((r = ps_template(c, leader ? leader : get_path(lwt, "workerTemplate"), ps)) < 0) return r;
        path_pop(c, mt);
        if (leader) {
                if (!(ps = add_ps(c, lwt, j, "worker", size - 1, 1, false, dp_asprintf("%s", obj_name(o)))))
                        return -EINVAL;
                mt = path_key(c, "workerTemplate");
                if ((r = ps_template(c, get_path(lwt, "workerTemplate"), ps)) < 0) return r;
                path_pop(c, mt);
        }
        path_pop(c, ml);
        path_pop(c, m);
        j->pod_based = true;
        return 0;
}

/* ---- Sandbox: one pod from spec.podTemplate, labelled for the pod integration ---- */

static int decode_sandbox(dctx *c, const dp_doc_node *root, dp_object o, dp_object_list *out) {
        /* Kueue's pod integration: the queue label is on the pod template */
        const dp_doc_node *tl = get_path(get_path(get_path(get_path(root, "spec"), "podTemplate"), "metadata"), "labels");
        if (!get_path(tl, DP_KUEUE_QUEUE_LABEL)) return DP_EXT_SKIP;
        (void)out;
        dp_qj_job *j = (dp_qj_job *)o.ext;
        const dp_doc_node *spec = get_path(root, "spec");
        if (!spec) return dfail(c, root, -EINVAL, "spec: required");
        size_t m = path_key(c, "spec"), mt = path_key(c, "podTemplate");
        dp_qj_podset *ps = add_ps(c, spec, j, "main", 1, 0, true, strdup(obj_name(o)));
        int r = ps ? ps_template(c, get_path(spec, "podTemplate"), ps) : -EINVAL;
        if (r < 0) return r;
        path_pop(c, mt);
        path_pop(c, m);
        j->plain_pod = true;
        return 0;
}

/* ---- CronJob: Kueue manages the Jobs it creates, none at t=0 ---- */

static int decode_cronjob(dctx *c, const dp_doc_node *root, dp_object o, dp_object_list *out) {
        dp_qj_job *j = (dp_qj_job *)o.ext;
        j->cron = true;
        const dp_doc_node *spec = get_path(root, "spec"), *sched = get_path(spec, "schedule");
        if (!sched || sched->type != DP_DOC_SCALAR || !sched->str[0])
                return dfail(c, spec ? spec : root, -EINVAL, "spec.schedule: required");
        const dp_doc_node *labels = get_path(get_path(get_path(spec, "jobTemplate"), "metadata"), "labels");
        const dp_doc_node *queue = get_path(labels, DP_KUEUE_QUEUE_LABEL);
        if (!queue) return DP_EXT_SKIP; /* its Jobs are not Kueue's */
        int r = dp_object_list_warn(out,
                                    "%s: CronJob %s: Kueue queues the Jobs it creates when its schedule (%s) "
                                    "fires; a simulation at t=0 has none: no workload",
                                    o.hdr->source ? o.hdr->source : "<input>", obj_name(o), sched->str);
        return r < 0 ? dp_error_set(c->err, r, "out of memory") : 0;
}

static void job_done(dp_object o) {
        dp_qj_job *j = (dp_qj_job *)o.ext;
        for (size_t i = 0; i < j->n_ps; i++) {
                dp_free_many(j->ps[i].name, j->ps[i].pod_prefix, j->ps[i].tmpl_json);
                dp_pod_free(j->ps[i].tmpl);
        }
        dp_free_many(j->ps, j->priority_class);
}

/* ---- the table ---- */

static const char *const kubeflow_v1[] = {"kubeflow.org/v1", NULL};
static const char *const mpi_v2[] = {"kubeflow.org/v2beta1", NULL};
static const char *const ray_v1[] = {"ray.io/v1", NULL};
static const char *const spark_v1[] = {"sparkoperator.k8s.io/v1beta2", NULL};
static const char *const aw_v1[] = {"workload.codeflare.dev/v1beta2", NULL};
static const char *const lws_v1[] = {"leaderworkerset.x-k8s.io/v1", NULL};
static const char *const batch_v1[] = {"batch/v1", NULL};
static const char *const sandbox_v1[] = {"agents.x-k8s.io/v1alpha1", NULL};

#define QJ_KIND(name, versions, fn) {name, versions, sizeof(dp_qj_job), true, fn, job_done}
static const dp_model_ext_kind kinds[] = {
        QJ_KIND("PyTorchJob", kubeflow_v1, decode_kubeflow),
        QJ_KIND("TFJob", kubeflow_v1, decode_kubeflow),
        QJ_KIND("XGBoostJob", kubeflow_v1, decode_kubeflow),
        QJ_KIND("PaddleJob", kubeflow_v1, decode_kubeflow),
        QJ_KIND("JAXJob", kubeflow_v1, decode_kubeflow),
        QJ_KIND("MPIJob", mpi_v2, decode_kubeflow),
        QJ_KIND("RayJob", ray_v1, decode_ray),
        QJ_KIND("RayCluster", ray_v1, decode_ray),
        QJ_KIND("RayService", ray_v1, decode_ray),
        QJ_KIND("SparkApplication", spark_v1, decode_spark),
        QJ_KIND("AppWrapper", aw_v1, decode_appwrapper),
        QJ_KIND("LeaderWorkerSet", lws_v1, decode_lws),
        QJ_KIND("CronJob", batch_v1, decode_cronjob),
        QJ_KIND("Sandbox", sandbox_v1, decode_sandbox),
};

/* JobSet's kinds (queue/jobset.c) are chained behind. */
const dp_model_ext dp_queue_integrations_ext = {kinds, ELEMENTSOF(kinds), &dp_jobset_model_ext};

const dp_qj_job *dp_qj_job_of(dp_object o) {
        if (!o.hdr || o.hdr->kind != DP_KIND_EXT) return NULL;
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                if (o.ext->ext == &kinds[i]) return (const dp_qj_job *)o.ext;
        return NULL;
}
