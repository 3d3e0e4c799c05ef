/* SPDX-License-Identifier: Apache-2.0
 *
 * test-decode.c — Kueue's kinds through the model's extension table: what
 * decodes, what is a warning naming the field, and what is one error with
 * the object and the field path (src/queue/decode.c).
 */
#include "harness.h"
#include "queue/queue.h"

static int decode(const char *yaml, dp_object_list **ret, dp_error *err) {
        dp_object_list *l = dp_object_list_new();
        ASSERT_TRUE(l);
        l->ext = &dp_queue_model_ext;
        int r = dp_model_decode_buffer(yaml, strlen(yaml), "in.yaml", l, err);
        if (r < 0) ASSERT_EQ(l->n, 0); /* decoding is all or nothing */
        if (r >= 0) r = dp_model_validate(l, err);
        *ret = l;
        return r;
}

static void fails(const char *yaml, const char *msg) {
        dp_object_list *l = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_EQ(decode(yaml, &l, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, msg);
        dp_object_list_free(l);
}

#define CQ_HEAD "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n"

TEST(kinds_decode) {
        dp_object_list *l = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(decode(CQ_HEAD "  cohortName: team\n  queueingStrategy: StrictFIFO\n"
                                 "  resourceGroups:\n  - coveredResources: [cpu, memory]\n    flavors:\n"
                                 "    - {name: f, resources: [{name: cpu, nominalQuota: 9, borrowingLimit: 1, "
                                 "lendingLimit: 2}, {name: memory, nominalQuota: 36Gi}]}\n"
                                 "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: cq}\n"
                                 "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata: {name: team}\n"
                                 "spec: {parent: root}\n",
                         &l, &err));
        ASSERT_EQ(l->n, 3); /* a ClusterQueue and a ResourceFlavor may share a name */
        ASSERT_EQ(l->n_warnings, 0);
        ASSERT_EQ(dp_queue_kind(l->items[0]), DP_KQ_CLUSTER_QUEUE);
        const dp_cluster_queue *cq = (const dp_cluster_queue *)l->items[0].ext;
        ASSERT_STREQ(cq->cohort, "team");
        ASSERT_EQ(cq->queueing, DP_KQ_STRICT_FIFO);
        ASSERT_EQ(cq->groups[0].n_flavors, 1);
        ASSERT_TRUE(cq->groups[0].flavors[0].resources[0].has_lending_limit);
        char desc[128];
        dp_object_describe(l->items[0], desc, sizeof(desc));
        ASSERT_STREQ(desc, "ClusterQueue cq");
        const dp_kq_cohort *co = (const dp_kq_cohort *)l->items[2].ext;
        ASSERT_STREQ(co->parent, "root"); /* v1beta1's spec.parent */
        dp_object_list_free(l);
}

TEST(unknown_fields_warn) {
        dp_object_list *l = NULL;
        dp_error err = DP_ERROR_INIT;
        /* a new field, and v1beta1's name for the cohort in a v1beta2 object */
        ASSERT_OK(decode(CQ_HEAD "  colour: blue\n  cohort: team\n", &l, &err));
        ASSERT_EQ(l->n, 1);
        ASSERT_EQ(l->n_warnings, 2);
        ASSERT_STREQ(l->warnings[0],
                     "in.yaml: ClusterQueue cq: spec: unknown field \"colour\" (line 5): not a field devplane reads, "
                     "ignored");
        ASSERT_CONTAINS(l->warnings[1], "unknown field \"cohort\"");
        ASSERT_TRUE(!((const dp_cluster_queue *)l->items[0].ext)->cohort);
        dp_object_list_free(l);
}

/* Kueue's own fields devplane does not model: one warning each, naming the
 * field and what is not simulated; unset (null) ones say nothing. */
TEST(not_modelled_fields_warn) {
        dp_object_list *l = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(decode(CQ_HEAD "  admissionChecks: [prov]\n  concurrentAdmissionPolicy: {migration: {mode: "
                                 "TryPreferredFlavors}}\n  admissionChecksStrategy: null\n",
                         &l, &err));
        ASSERT_EQ(l->n_warnings, 2);
        /* v1beta2 has admissionChecksStrategy only (queue/checks.c): v1beta1's list is a field it does not have */
        ASSERT_CONTAINS(l->warnings[0], "in.yaml: ClusterQueue cq: spec: unknown field \"admissionChecks\" (line 5)");
        ASSERT_CONTAINS(l->warnings[1], "spec.concurrentAdmissionPolicy: Kueue's field, not modelled: workloads are "
                                        "not migrated to more preferred flavors after admission");
        dp_object_list_free(l);
}

TEST(without_the_table_skipped) {
        dp_object_list *l = dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        const char *y = CQ_HEAD "  colour: blue\n";
        ASSERT_OK(dp_model_decode_buffer(y, strlen(y), "in.yaml", l, &err));
        ASSERT_EQ(l->n, 0);
        ASSERT_EQ(l->n_skipped, 1);
        ASSERT_STREQ(l->skipped[0].kind, "ClusterQueue");
        dp_object_list_free(l);
}

TEST(bad_values_one_error) {
        fails(CQ_HEAD "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n"
                      "    - {name: f, resources: [{name: cpu, nominalQuota: -1}]}\n",
              "in.yaml: ClusterQueue cq: spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: must be greater "
              "than or equal to 0");
        fails(CQ_HEAD "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n"
                      "    - {name: f, resources: [{name: cpu, nominalQuota: 1, borrowingLimit: 1}]}\n",
              "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: must be nil when cohort is empty");
        fails(CQ_HEAD "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n"
                      "    - {name: f, resources: [{name: cpu, nominalQuota: 1, lendingLimit: 2}]}\n",
              "lendingLimit: must be less than or equal to the nominalQuota");
        fails(CQ_HEAD "  resourceGroups:\n  - coveredResources: [cpu, memory]\n    flavors:\n"
                      "    - {name: f, resources: [{name: memory, nominalQuota: 1}, {name: cpu, nominalQuota: 1}]}\n",
              "spec.resourceGroups[0].flavors[0].resources: must have the same names as coveredResources, in the same "
              "order");
        fails(CQ_HEAD "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors: [{name: f, resources: [{name: "
                      "cpu, nominalQuota: 1}]}]\n  - coveredResources: [cpu]\n    flavors: [{name: g, resources: "
                      "[{name: cpu, nominalQuota: 1}]}]\n",
              "spec.resourceGroups: resource cpu is covered by groups 0 and 1: a resource belongs to one group");
        fails(CQ_HEAD "  queueingStrategy: Fifo\n",
              "spec.queueingStrategy: unsupported value \"Fifo\": supported values: StrictFIFO, BestEffortFIFO");
        fails(CQ_HEAD "  preemption: {borrowWithinCohort: {policy: LowerPriority}}\n",
              "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never");
        fails("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q}\nspec: {}\n",
              "in.yaml: LocalQueue q: spec.clusterQueue: required");
        fails("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n"
              "spec: {nodeTaints: [{key: k, effect: Sometimes}]}\n",
              "spec.nodeTaints[0]: effect: must be NoSchedule, PreferNoSchedule or NoExecute");
        fails("apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: p}\n",
              "WorkloadPriorityClass p: value: required");
        fails("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {}\n", "metadata.name: required");
        fails(CQ_HEAD "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n",
              "metadata.name: duplicate object");
}

TEST(cohort_cycle_is_an_error) {
        dp_object_list *l = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(decode("apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: a}\nspec: {parentName: b}\n"
                         "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: b}\n"
                         "spec: {parentName: a}\n",
                         &l, &err));
        dp_queue *q = NULL;
        ASSERT_EQ(dp_queue_new(l, &q, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "the cohorts' parents form a cycle");
        ASSERT_TRUE(!q);
        dp_object_list_free(l);
}
