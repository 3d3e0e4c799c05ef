/* SPDX-License-Identifier: Apache-2.0
 *
 * test-examples.c — Kueue's published examples (shared/conformance/kueue,
 * read where they are, never copied): every YAML file that has a Kueue
 * object or a workload labelled for a queue decodes, validates and goes
 * through admission without an error (warnings allowed); the setups with
 * their sample jobs give the admission Kueue's documentation describes.
 */
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "harness.h"
#include "queue/queue.h"

static const char *examples(void) {
        static char dir[1024];
        const char *shared = getenv("DP_SHARED_DIR");
        snprintf(dir, sizeof(dir), "%s/conformance/kueue/site/static/examples", shared ? shared : "../../../shared");
        return dir;
}

static int load_file(dp_object_list *l, const char *path, dp_error *err);

/* Load the files (relative to the examples, or "data/..." of this directory). */
static int load_rel(dp_object_list *l, const char *name, dp_error *err) {
        char path[1400];
        if (startswith(name, "data/"))
                snprintf(path, sizeof(path), "%s", name);
        else
                snprintf(path, sizeof(path), "%s/%s", examples(), name);
        return load_file(l, path, err);
}

static int load_file(dp_object_list *l, const char *path, dp_error *err) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r = dp_read_file(path, 1 << 22, &buf, &len, err);
        return r < 0 ? r : dp_model_decode_buffer(buf, len, path, l, err);
}

/* Load the files (NULL-terminated, relative to the examples), admit. */
static dp_queue *admit(const char *const *files, dp_object_list **ret_l, size_t *ret_warnings) {
        dp_object_list *l = dp_object_list_new();
        ASSERT_TRUE(l);
        l->ext = &dp_queue_model_ext;
        dp_error err = DP_ERROR_INIT;
        for (; *files; files++)
                if (load_rel(l, *files, &err) < 0) DP_FAIL("%s", err.msg);
        if (dp_model_generate_names(l, &err) < 0 || dp_model_validate(l, &err) < 0) DP_FAIL("%s", err.msg);
        dp_queue *q = NULL;
        if (dp_queue_new(l, &q, &err) < 0 || dp_queue_admit(q, &err) < 0) DP_FAIL("%s", err.msg);
        if (ret_warnings) *ret_warnings = l->n_warnings;
        *ret_l = l;
        return q;
}

static bool involves_queues(const char *path) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        if (dp_read_file(path, 1 << 22, &buf, &len, NULL) < 0) return false;
        return strstr(buf, "kueue.x-k8s.io/v1beta") || strstr(buf, "kueue.x-k8s.io/queue-name");
}

static size_t walk(const char *dir, size_t *loaded, size_t *warnings) {
        DIR *d = opendir(dir);
        if (!d) DP_FAIL("%s: cannot open", dir);
        size_t n = 0;
        for (struct dirent *e; (e = readdir(d));) {
                if (e->d_name[0] == '.') continue;
                char path[1400];
                snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
                struct stat st;
                if (stat(path, &st) < 0) continue;
                if (S_ISDIR(st.st_mode)) {
                        n += walk(path, loaded, warnings);
                        continue;
                }
                size_t len = strlen(e->d_name);
                if (len < 5 || !streq(e->d_name + len - 5, ".yaml") || !involves_queues(path)) continue;
                _cleanup_(dp_object_list_freep) dp_object_list *l = dp_object_list_new();
                l->ext = &dp_queue_model_ext;
                dp_error err = DP_ERROR_INIT;
                if (load_file(l, path, &err) < 0 || dp_model_generate_names(l, &err) < 0 ||
                    dp_model_validate(l, &err) < 0)
                        DP_FAIL("%s", err.msg);
                _cleanup_(dp_queue_freep) dp_queue *q = NULL;
                if (dp_queue_new(l, &q, &err) < 0 || dp_queue_admit(q, &err) < 0) DP_FAIL("%s: %s", path, err.msg);
                *warnings += l->n_warnings;
                for (size_t i = 0; i < l->n_warnings; i++)
                        printf("  warning: %s\n", l->warnings[i]);
                (*loaded)++;
                n++;
        }
        closedir(d);
        return n;
}

TEST(every_example_loads) {
        size_t loaded = 0, warnings = 0;
        walk(examples(), &loaded, &warnings);
        printf("  %zu example files with queues or queued workloads, %zu warnings\n", loaded, warnings);
        ASSERT_TRUE(loaded >= 30);
}

static const dp_queue_workload *only(const dp_queue *q, const char *kind) {
        const dp_queue_workload *w = NULL;
        for (size_t i = 0; i < dp_queue_n_workloads(q); i++)
                if (streq(dp_queue_workload_at(q, i)->kind, kind)) {
                        ASSERT_TRUE(!w);
                        w = dp_queue_workload_at(q, i);
                }
        ASSERT_TRUE(w);
        return w;
}

/* site/content/en/docs/tasks/run/jobs.md: the sample Job (3 pods × 1 cpu,
 * 200Mi) is admitted by the single ClusterQueue (9 cpu, 36Gi). */
TEST(quick_start_job_admitted) {
        static const char *const files[] = {"admin/single-clusterqueue-setup.yaml", "jobs/sample-job.yaml", NULL};
        dp_object_list *l = NULL;
        dp_queue *q = admit(files, &l, NULL);
        const dp_queue_workload *w = only(q, "Job");
        ASSERT_EQ(w->state, DP_QW_ADMITTED);
        ASSERT_STREQ(w->cluster_queue, "cluster-queue");
        ASSERT_EQ(w->podsets[0].count, 3);
        for (size_t i = 0; i < w->podsets[0].n_requests; i++)
                ASSERT_STREQ(w->podsets[0].flavors[i], "default-flavor");
        /* admitted: the Job stands up its pods (Kueue unsuspends it) */
        ASSERT_OK(dp_queue_apply_owners(q, l, NULL));
        for (size_t i = 0; i < l->n; i++)
                if (l->items[i].hdr->kind == DP_KIND_JOB) ASSERT_EQ(l->items[i].deployment->replicas, 3);
        dp_queue_free(q);
        dp_object_list_free(l);
}

/* The same Job with Kueue there (a flavor) but not its LocalQueue
 * user-queue: Kueue's workload controller marks it inadmissible and the Job
 * stays suspended. */
TEST(job_without_local_queue) {
        static const char *const files[] = {"admin/resource-flavor-empty.yaml", "jobs/sample-job.yaml", NULL};
        dp_object_list *l = NULL;
        dp_queue *q = admit(files, &l, NULL);
        const dp_queue_workload *w = only(q, "Job");
        ASSERT_EQ(w->state, DP_QW_INADMISSIBLE);
        ASSERT_STREQ(w->message, "LocalQueue user-queue doesn't exist");
        ASSERT_OK(dp_queue_apply_owners(q, l, NULL));
        for (size_t i = 0; i < l->n; i++)
                if (l->items[i].hdr->kind == DP_KIND_JOB) ASSERT_EQ(l->items[i].deployment->replicas, 0);
        dp_queue_free(q);
        dp_object_list_free(l);
}

/* site/content/en/docs/concepts/resource_flavor.md: a flavor's nodeLabels
 * and tolerations go into the admitted pods; a pending pod keeps Kueue's
 * scheduling gate. */
TEST(plain_pod_gets_flavor_or_gate) {
        static const char *const files[] = {"admin/single-clusterqueue-setup.yaml", "pods-kueue/kueue-pod.yaml", NULL};
        dp_object_list *l = NULL;
        dp_queue *q = admit(files, &l, NULL);
        const dp_queue_workload *w = only(q, "Pod");
        ASSERT_EQ(w->state, DP_QW_ADMITTED);
        ASSERT_OK(dp_queue_apply_owners(q, l, NULL));
        for (size_t i = 0; i < l->n; i++)
                if (l->items[i].hdr->kind == DP_KIND_POD) ASSERT_EQ(l->items[i].pod->n_scheduling_gates, 0);
        dp_queue_free(q);
        dp_object_list_free(l);

        static const char *const alone[] = {"admin/resource-flavor-empty.yaml", "pods-kueue/kueue-pod.yaml", NULL};
        q = admit(alone, &l, NULL);
        ASSERT_OK(dp_queue_apply_owners(q, l, NULL));
        for (size_t i = 0; i < l->n; i++)
                if (l->items[i].hdr->kind == DP_KIND_POD) {
                        ASSERT_EQ(l->items[i].pod->n_scheduling_gates, 1);
                        ASSERT_STREQ(l->items[i].pod->scheduling_gates[0], DP_KUEUE_ADMISSION_GATE);
                }
        dp_queue_free(q);
        dp_object_list_free(l);
}

/* No Kueue object at all: a cluster without Kueue; the label means nothing
 * and the Job runs as written, with one warning saying so. */
TEST(no_kueue_objects) {
        static const char *const files[] = {"jobs/sample-job.yaml", NULL};
        dp_object_list *l = NULL;
        size_t warnings = 0;
        dp_queue *q = admit(files, &l, &warnings);
        ASSERT_EQ(dp_queue_n_workloads(q), 0);
        ASSERT_EQ(warnings, 1);
        ASSERT_CONTAINS(l->warnings[0], "taken as a cluster without Kueue");
        ASSERT_OK(dp_queue_apply_owners(q, l, NULL));
        for (size_t i = 0; i < l->n; i++)
                if (l->items[i].hdr->kind == DP_KIND_JOB) ASSERT_EQ(l->items[i].deployment->replicas, 3);
        dp_queue_free(q);
        dp_object_list_free(l);
}

/* site/content/en/docs/concepts/resource_flavor.md: the admitted pods get the
 * flavor's nodeLabels as nodeSelector and its tolerations. */
TEST(flavor_labels_and_tolerations_in_pods) {
        static const char *const files[] = {"admin/resource-flavor-tolerations.yaml", "data/spot-queue.yaml",
                                             "jobs/sample-job.yaml", NULL};
        dp_object_list *l = NULL;
        dp_queue *q = admit(files, &l, NULL);
        ASSERT_EQ(only(q, "Job")->state, DP_QW_ADMITTED);
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_queue_apply_owners(q, l, &err));
        ASSERT_OK(dp_model_expand_workloads(l, NULL, 0, &err));
        ASSERT_OK(dp_queue_apply_pods(q, l, &err));
        size_t pods = 0;
        for (size_t i = 0; i < l->n; i++) {
                if (l->items[i].hdr->kind != DP_KIND_POD) continue;
                const dp_pod *p = l->items[i].pod;
                pods++;
                ASSERT_STREQ(dp_kv_get(p->node_selector, p->n_node_selector, "instance-type"), "spot");
                ASSERT_EQ(p->n_tolerations, 1);
                ASSERT_STREQ(p->tolerations[0].key, "spot-taint");
                ASSERT_STREQ(p->tolerations[0].op, "Exists");
        }
        ASSERT_EQ(pods, 3);
        dp_queue_free(q);
        dp_object_list_free(l);
}

/* The same with admin/resource-flavor-taints.yaml: the flavor's NoSchedule
 * taint is not tolerated by the Job's pods, so no flavor fits. */
TEST(untolerated_flavor_taint) {
        static const char *const files[] = {"admin/resource-flavor-taints.yaml", "data/spot-queue.yaml",
                                             "jobs/sample-job.yaml", NULL};
        dp_object_list *l = NULL;
        dp_queue *q = admit(files, &l, NULL);
        const dp_queue_workload *w = only(q, "Job");
        ASSERT_EQ(w->state, DP_QW_PENDING);
        ASSERT_STREQ(w->message,
                     "couldn't assign flavors to pod set main: untolerated taint {spot true NoSchedule <nil>} in flavor spot");
        dp_queue_free(q);
        dp_object_list_free(l);
}

/* The pods l holds after the owners stood theirs up, and how many carry
 * Kueue's scheduling gate. */
static size_t count_pods(dp_object_list *l, const dp_queue *q, size_t *ret_gated) {
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_queue_apply_owners(q, l, &err));
        ASSERT_OK(dp_model_expand_workloads(l, NULL, 0, &err));
        ASSERT_OK(dp_queue_apply_pods(q, l, &err));
        size_t n = 0, gated = 0;
        for (size_t i = 0; i < l->n; i++)
                if (l->items[i].hdr->kind == DP_KIND_POD) {
                        n++;
                        gated += l->items[i].pod->n_scheduling_gates > 0;
                }
        *ret_gated = gated;
        return n;
}

/* site/content/en/docs/tasks/run/jobsets.md: the sample JobSet (workers: 1
 * pod of 1 cpu; driver: 1 pod of 2 cpu) is one workload with a pod set per
 * replicatedJob, admitted whole by the single ClusterQueue; its Jobs are
 * named <jobset>-<replicatedJob>-<index> and their pods run. */
TEST(sample_jobset_admitted) {
        static const char *const files[] = {"admin/single-clusterqueue-setup.yaml", "jobs/sample-jobset.yaml", NULL};
        dp_object_list *l = NULL;
        dp_queue *q = admit(files, &l, NULL);
        const dp_queue_workload *w = only(q, "JobSet");
        ASSERT_EQ(w->state, DP_QW_ADMITTED);
        ASSERT_EQ(w->n_podsets, 2);
        ASSERT_STREQ(w->podsets[0].name, "workers");
        ASSERT_EQ(w->podsets[0].count, 1);
        ASSERT_STREQ(w->podsets[1].name, "driver");
        ASSERT_EQ(w->podsets[1].requests[0].value, 2000); /* cpu, millicores */
        size_t gated = 0;
        ASSERT_EQ(count_pods(l, q, &gated), 2);
        ASSERT_EQ(gated, 0);
        char job[300];
        snprintf(job, sizeof(job), "%s-driver-0", w->name);
        ASSERT_TRUE(dp_object_list_find(l, DP_KIND_JOB, "default", job).hdr);
        dp_queue_free(q);
        dp_object_list_free(l);
}

/* site/content/en/docs/tasks/run/plain_pods.md, "Running a group of Pods":
 * the sample group's two pods (3 cpu each, one role) are one workload named
 * after the group, admitted together and ungated together. */
TEST(sample_pod_group_admitted) {
        static const char *const files[] = {"admin/single-clusterqueue-setup.yaml", "pods-kueue/kueue-pod-group.yaml",
                                             NULL};
        dp_object_list *l = NULL;
        dp_queue *q = admit(files, &l, NULL);
        const dp_queue_workload *w = only(q, "PodGroup");
        ASSERT_STREQ(w->name, "sample-group");
        ASSERT_EQ(w->state, DP_QW_ADMITTED);
        ASSERT_EQ(w->n_podsets, 1);
        ASSERT_EQ(w->podsets[0].count, 2);
        size_t gated = 0;
        ASSERT_EQ(count_pods(l, q, &gated), 2);
        ASSERT_EQ(gated, 0);
        dp_queue_free(q);
        dp_object_list_free(l);
}

/* site/content/en/docs/tasks/run/jobs.md, "Partial admission": the Job asks
 * for 20 pods of 1 cpu and may run with 5 (job-min-parallelism); the queue
 * has 9 cpu: the pod-set reducer admits 9 and the Job runs 9 pods. */
TEST(sample_partial_admission) {
        static const char *const files[] = {"admin/single-clusterqueue-setup.yaml",
                                             "jobs/sample-job-partial-admission.yaml", NULL};
        dp_object_list *l = NULL;
        dp_queue *q = admit(files, &l, NULL);
        const dp_queue_workload *w = only(q, "Job");
        ASSERT_EQ(w->state, DP_QW_ADMITTED);
        ASSERT_EQ(w->podsets[0].count, 20);
        ASSERT_EQ(w->podsets[0].admitted_count, 9);
        size_t gated = 0;
        ASSERT_EQ(count_pods(l, q, &gated), 9);
        dp_queue_free(q);
        dp_object_list_free(l);
}
