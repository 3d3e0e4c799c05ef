/* SPDX-License-Identifier: Apache-2.0
 *
 * jobset.c — the JobSet kind (jobset.x-k8s.io/v1alpha2): its decoder (the
 * queue room's field walk: an unknown field is a warning naming it, a bad
 * value one error with the path) and the Jobs its controller stands up.
 * Facts: JobSet's API (ReplicatedJob {name, replicas (default 1), template:
 * a JobTemplateSpec}); the controller names a replicatedJob's Jobs
 * <jobset>-<replicatedJob>-<index> and labels Jobs and pods with
 * jobset.sigs.k8s.io/{jobset-name, replicatedjob-name,
 * replicatedjob-replicas, job-index}.
 */
#include <stdio.h>

#include "doc/builder.h"
#include "queue/decode-kq.h"
#include "queue/jobset.h"
#include "queue/queue-internal.h"
#include "queue/volcano.h"

/* ---- decoding ---- */

/* template: a JobTemplateSpec, decoded as a Job (the model's Job decoder
 * checks its spec and pod template); its spec also kept as JSON. */
static int rjob_template(kq *q, const dp_doc_node *n, dp_jobset_rjob *rj) {
        dp_deployment *d = calloc(1, sizeof(*d));
        if (!d) return dp_error_set(q->c->err, -ENOMEM, "out of memory");
        rj->job = d;
        d->hdr.kind = DP_KIND_JOB;
        d->hdr.doc_index = q->o.hdr->doc_index;
        d->hdr.line = n ? n->line : 0;
        if (q->o.hdr->source && !(d->hdr.source = strdup(q->o.hdr->source)))
                return dp_error_set(q->c->err, -ENOMEM, "out of memory");
        int r = decode_deployment(q->c, n, d);
        if (r >= 0 && !d->template_) return dfail(q->c, n, -EINVAL, "spec.template: required (a Job's pod template)");
        const dp_doc_node *spec = r >= 0 ? dp_doc_get(n, "spec") : NULL;
        return spec ? get_json(q->c, spec, &rj->spec_json) : r;
}

static int rjob_elem(kq *q, const dp_doc_node *n, dp_jobset_rjob *rj) {
        bool has_replicas = false;
        KQ_FIELDS(
                q, n, k, v, if (streq(k, "name")) r = get_str(q->c, v, &rj->name); else if (streq(k, "replicas")) {
                        r = get_int32(q->c, v, &rj->replicas);
                        has_replicas = r >= 0 && !dp_doc_is_null(v);
                } else if (streq(k, "template")) r = rjob_template(q, v, rj);
                else if (streq(k, "groupName") || streq(k, "dependsOn")) r = 0;);
        if (!rj->name || !rj->name[0]) return dfail(q->c, n, -EINVAL, "name: required");
        if (!has_replicas) rj->replicas = 1;
        if (rj->replicas < 0 || rj->replicas > DP_JOBSET_MAX_REPLICAS)
                return dfail(q->c, n, -EINVAL, "replicas: must be between 0 and %d", DP_JOBSET_MAX_REPLICAS);
        if (!rj->job) return dfail(q->c, n, -EINVAL, "template: required");
        return 0;
}

static int rjobs(kq *q, const dp_doc_node *n, dp_jobset *js) {
        int e = expect_seq(q->c, n);
        if (e <= 0) return e;
        if (n->n > DP_JOBSET_MAX_REPLICATED_JOBS)
                return dfail(q->c, n, -E2BIG, "must have at most %d items", DP_JOBSET_MAX_REPLICATED_JOBS);
        if (!(js->rjobs = calloc(n->n + 1, sizeof(*js->rjobs))))
                return dp_error_set(q->c->err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < n->n; i++) {
                size_t m = path_index(q->c, i);
                js->n_rjobs++;
                int r = rjob_elem(q, n->items[i], &js->rjobs[i]);
                if (r < 0) return r;
                for (size_t k = 0; k < i; k++)
                        if (streq(js->rjobs[k].name, js->rjobs[i].name))
                                return dfail(q->c, n->items[i], -EINVAL, "name: Duplicate value: \"%s\"",
                                             js->rjobs[i].name);
                path_pop(q->c, m);
        }
        return 0;
}

static int js_spec(kq *q, const dp_doc_node *n, dp_jobset *js) {
        KQ_FIELDS(q, n, k, v, if (streq(k, "replicatedJobs")) r = rjobs(q, v, js);
                  else if (streq(k, "suspend")) r = get_bool(q->c, v, &js->suspend);
                  else if (streq(k, "network") || streq(k, "successPolicy") || streq(k, "failurePolicy") ||
                           streq(k, "startupPolicy") || streq(k, "coordinator") || streq(k, "managedBy") ||
                           streq(k, "ttlSecondsAfterFinished")) r = 0;);
        return 0;
}

static int decode_jobset(dctx *c, const dp_doc_node *root, dp_object o, dp_object_list *out) {
        kq q = {c, out, o};
        const dp_object_meta *m = &o.ext->meta;
        if (!(m->name && m->name[0]) && !(m->generate_name && m->generate_name[0]))
                return dfail(c, root, -EINVAL, "metadata.name: required");
        dp_jobset *js = (dp_jobset *)o.ext;
        /* status is the controller's record, not read */
        KQ_FIELDS(&q, root, k, v,
                  if (streq(k, "apiVersion") || streq(k, "kind") || streq(k, "metadata") || streq(k, "status")) r = 0;
                  else if (streq(k, "spec")) r = js_spec(&q, v, js););
        if (!js->n_rjobs) return dfail(c, root, -EINVAL, "spec.replicatedJobs: required");
        int64_t jobs = 0;
        for (size_t i = 0; i < js->n_rjobs; i++)
                jobs += js->rjobs[i].replicas;
        if (jobs > DP_JOBSET_MAX_REPLICAS)
                return dfail(c, root, -E2BIG, "spec.replicatedJobs: %lld Jobs in all, more than %d (devplane's cap)",
                             (long long)jobs, DP_JOBSET_MAX_REPLICAS);
        return 0;
}

static void jobset_done(dp_object o) {
        dp_jobset *js = (dp_jobset *)o.ext;
        for (size_t i = 0; i < js->n_rjobs; i++) {
                dp_deployment_free(js->rjobs[i].job);
                dp_free_many(js->rjobs[i].name, js->rjobs[i].spec_json);
        }
        free(js->rjobs);
}

static const char *const jobset_versions[] = {"jobset.x-k8s.io/v1alpha2", NULL};

static const dp_model_ext_kind kinds[] = {
        {"JobSet", jobset_versions, sizeof(dp_jobset), true, decode_jobset, jobset_done},
};

/* Volcano's Queue (queue/volcano-decode.c) is chained behind. */
const dp_model_ext dp_jobset_model_ext = {kinds, ELEMENTSOF(kinds), &dp_volcano_model_ext};

bool dp_is_jobset(dp_object o) { return o.hdr && o.hdr->kind == DP_KIND_EXT && o.ext->ext == &kinds[0]; }

/* ---- the Jobs the controller stands up ---- */

static void put_labels(dp_doc_builder *b, dp_doc_node *map, const dp_doc_node *from, const char *const *kv) {
        for (size_t k = 0; from && from->type == DP_DOC_MAP && k < from->n; k++)
                dp_doc_b_put(b, map, from->pairs[k].key, from->pairs[k].value);
        for (size_t i = 0; kv[i]; i += 2)
                dp_doc_b_put_str(b, map, kv[i], kv[i + 1]);
}

/* The pod template with the JobSet's labels added to its metadata. */
static dp_doc_node *pod_template(dp_doc_builder *b, const dp_doc_node *tmpl, const char *const *labels) {
        dp_doc_node *out = dp_doc_b_map(b), *md = dp_doc_b_map(b), *lab = dp_doc_b_map(b);
        const dp_doc_node *tmd = dp_doc_get(tmpl, "metadata");
        for (size_t k = 0; tmd && tmd->type == DP_DOC_MAP && k < tmd->n; k++)
                if (!streq(tmd->pairs[k].key, "labels")) dp_doc_b_put(b, md, tmd->pairs[k].key, tmd->pairs[k].value);
        put_labels(b, lab, tmd ? dp_doc_get(tmd, "labels") : NULL, labels);
        dp_doc_b_put(b, md, "labels", lab);
        dp_doc_b_put(b, out, "metadata", md);
        const dp_doc_node *spec = dp_doc_get(tmpl, "spec");
        if (spec) dp_doc_b_put(b, out, "spec", (dp_doc_node *)spec);
        return out;
}

void q_jobset_job_name(const dp_jobset *js, const dp_jobset_rjob *rj, size_t index, char *buf, size_t size) {
        snprintf(buf, size, "%.120s-%.120s-%zu", js->x.meta.name ? js->x.meta.name : "", rj->name, index);
}

/* Job <jobset>-<rjob>-<index> as a document: the template's JobSpec,
 * suspended or not, owned by the JobSet, labelled as the controller does. */
static dp_doc_node *job_root(dp_doc_builder *b, const dp_jobset *js, const dp_jobset_rjob *rj, const dp_doc_node *spec,
                             const char *name, size_t index, bool suspend) {
        const dp_object_meta *m = &js->x.meta;
        char idx[24], reps[24];
        snprintf(idx, sizeof(idx), "%zu", index);
        snprintf(reps, sizeof(reps), "%d", rj->replicas);
        const char *labels[] = {DP_JOBSET_NAME_LABEL,
                                m->name ? m->name : "",
                                DP_JOBSET_RJOB_LABEL,
                                rj->name,
                                DP_JOBSET_RJOB_REPLICAS_LABEL,
                                reps,
                                DP_JOBSET_JOB_INDEX_LABEL,
                                idx,
                                NULL};
        dp_doc_node *root = dp_doc_b_map(b), *md = dp_doc_b_map(b), *lab = dp_doc_b_map(b), *sp = dp_doc_b_map(b);
        dp_doc_b_put_str(b, root, "apiVersion", "batch/v1");
        dp_doc_b_put_str(b, root, "kind", "Job");
        dp_doc_b_put_str(b, md, "name", name);
        dp_doc_b_put_str(b, md, "namespace", m->namespace && m->namespace[0] ? m->namespace : "default");
        put_labels(b, lab, NULL, labels);
        dp_doc_b_put(b, md, "labels", lab);
        dp_doc_node *owners = dp_doc_b_seq(b), *owner = dp_doc_b_map(b);
        dp_doc_b_put_str(b, owner, "apiVersion", "jobset.x-k8s.io/v1alpha2");
        dp_doc_b_put_str(b, owner, "kind", "JobSet");
        dp_doc_b_put_str(b, owner, "name", m->name ? m->name : "");
        dp_doc_b_put_bool(b, owner, "controller", true);
        dp_doc_b_push(b, owners, owner);
        dp_doc_b_put(b, md, "ownerReferences", owners);
        dp_doc_b_put(b, root, "metadata", md);
        for (size_t k = 0; spec->type == DP_DOC_MAP && k < spec->n; k++) {
                const char *key = spec->pairs[k].key;
                if (streq(key, "suspend")) continue;
                dp_doc_b_put(b, sp, key,
                             streq(key, "template") ? pod_template(b, spec->pairs[k].value, labels)
                                                    : (dp_doc_node *)spec->pairs[k].value);
        }
        dp_doc_b_put_bool(b, sp, "suspend", suspend);
        dp_doc_b_put(b, root, "spec", sp);
        return b->r < 0 ? NULL : root;
}

/* Append the Jobs of one replicatedJob to l. */
static int rjob_jobs(const dp_jobset *js, const dp_jobset_rjob *rj, bool suspend, dp_object_list *l, dp_error *err) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        if (!s) return dp_error_set(err, -ENOMEM, "out of memory");
        int r = dp_doc_parse(s, rj->spec_json, strlen(rj->spec_json), "template", err);
        if (r < 0) return r;
        const dp_doc_node *spec = dp_doc_root(s, 0);
        const dp_object_meta *m = &js->x.meta;
        const char *ns = m->namespace && m->namespace[0] ? m->namespace : "default";
        for (int32_t i = 0; i < rj->replicas && r >= 0; i++) {
                char name[400];
                q_jobset_job_name(js, rj, (size_t)i, name, sizeof(name));
                /* a dump may hold the Jobs already (kubectl get jobsets,jobs,pods) */
                if (dp_object_list_find(l, DP_KIND_JOB, ns, name).hdr) continue;
                dp_doc_builder b = DP_DOC_BUILDER_INIT(s);
                dp_doc_node *root = job_root(&b, js, rj, spec, name, (size_t)i, suspend);
                r = root ? dp_model_decode(root, js->x.hdr.source, js->x.hdr.doc_index, l, err)
                         : dp_error_set(err, -ENOMEM, "out of memory");
        }
        return r;
}

int q_jobset_jobs(dp_object_list *l, dp_error *err) {
        size_t n = l->n;
        int r = 0;
        for (size_t i = 0; i < n && r >= 0; i++) {
                if (!dp_is_jobset(l->items[i])) continue;
                const dp_jobset *js = (const dp_jobset *)l->items[i].ext;
                for (size_t k = 0; k < js->n_rjobs && r >= 0; k++)
                        if (js->rjobs[k].spec_json) r = rjob_jobs(js, &js->rjobs[k], js->suspend, l, err);
        }
        if (r < 0)
                while (l->n > n)
                        dp_object_free(l->items[--l->n]);
        return r;
}
