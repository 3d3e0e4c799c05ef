/* SPDX-License-Identifier: Apache-2.0
 * test-store.c — the cluster store: keys, resourceVersions, stale writes,
 * the claim device ledger. */
#include "sched-test-util.h"

static int rename_node(dp_object o, void *userdata) {
        o.node->unschedulable = *(bool *)userdata;
        return 0;
}

TEST(add_get_delete) {
        dp_store *st = dp_store_new();
        load(st, NODE_GPU("a", 1) POD_GPU("p", 1, ""));
        uint64_t rv = 0;
        dp_object o = dp_store_get(st, DP_KIND_POD, "default", "p", &rv);
        ASSERT_TRUE(o.hdr);
        ASSERT_EQ(rv, 2);
        ASSERT_TRUE(dp_store_get(st, DP_KIND_POD, NULL, "p", NULL).hdr); /* unset namespace = default */
        ASSERT_FALSE(dp_store_get(st, DP_KIND_POD, "other", "p", NULL).hdr);
        ASSERT_EQ(dp_store_count(st, DP_KIND_NODE), 1);
        ASSERT_EQ(dp_store_delete(st, DP_KIND_POD, "default", "p", 1), -ESTALE);
        ASSERT_OK(dp_store_delete(st, DP_KIND_POD, "default", "p", rv));
        ASSERT_EQ(dp_store_delete(st, DP_KIND_POD, "default", "p", DP_STORE_ANY_RV), -ENOENT);
        ASSERT_EQ(dp_store_revision(st), 3);
        dp_store_free(st);
}

TEST(stale_update_rejected_not_merged) {
        dp_store *st = dp_store_new();
        load(st, NODE_GPU("a", 1));
        uint64_t rv = 0, rv2 = 0;
        dp_store_get(st, DP_KIND_NODE, NULL, "a", &rv);
        bool yes = true, no = false;
        ASSERT_OK(dp_store_update(st, DP_KIND_NODE, NULL, "a", rv, rename_node, &yes, &rv2));
        ASSERT_TRUE(rv2 > rv);
        /* a second writer that read rv */
        ASSERT_EQ(dp_store_update(st, DP_KIND_NODE, NULL, "a", rv, rename_node, &no, NULL), -ESTALE);
        ASSERT_TRUE(dp_store_get(st, DP_KIND_NODE, NULL, "a", NULL).node->unschedulable);
        ASSERT_EQ(dp_store_add(st, dp_store_get(st, DP_KIND_NODE, NULL, "a", NULL), NULL), -EEXIST);
        dp_store_free(st);
}

static dp_allocation_result *one_device(const char *dev) {
        dp_allocation_result *a = calloc(1, sizeof(*a));
        a->results = calloc(1, sizeof(*a->results));
        a->n_results = 1;
        a->results[0].request = strdup("r");
        a->results[0].driver = strdup("gpu.example.com");
        a->results[0].pool = strdup("a");
        a->results[0].device = strdup(dev);
        return a;
}

#define CLAIM(name)                                                                                                    \
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: " name "}\n"                            \
        "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}\n---\n"

TEST(ledger_refuses_a_device_twice) {
        dp_store *st = dp_store_new();
        load(st, CLAIM("c1") CLAIM("c2"));
        uint64_t rv1 = 0, rv2 = 0;
        dp_store_get(st, DP_KIND_RESOURCE_CLAIM, "default", "c1", &rv1);
        dp_store_get(st, DP_KIND_RESOURCE_CLAIM, "default", "c2", &rv2);
        dp_consumer_ref p1 = {.resource = (char *)"pods", .name = (char *)"p1", .uid = (char *)"u1"};
        dp_consumer_ref p2 = {.resource = (char *)"pods", .name = (char *)"p2", .uid = (char *)"u2"};
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_store_write_allocation(st, "default", "c1", rv1, one_device("gpu-0"), &p1, NULL, &err));
        dp_allocation_result *a = one_device("gpu-0");
        ASSERT_EQ(dp_store_write_allocation(st, "default", "c2", rv2, a, &p2, NULL, &err), -EBUSY);
        ASSERT_CONTAINS(err.msg, "already allocated to claim default/c1");
        dp_allocation_result_free(a);
        /* stale: c1 changed since rv1 */
        a = one_device("gpu-1");
        ASSERT_EQ(dp_store_write_allocation(st, "default", "c1", rv1, a, &p2, NULL, &err), -ESTALE);
        dp_allocation_result_free(a);
        /* a second consumer joins, then both leave: deallocated with the last */
        ASSERT_OK(dp_store_write_allocation(st, "default", "c1", DP_STORE_ANY_RV, NULL, &p2, NULL, &err));
        ASSERT_EQ(dp_store_get(st, DP_KIND_RESOURCE_CLAIM, "default", "c1", NULL).claim->n_reserved_for, 2);
        ASSERT_EQ(dp_store_release_claim(st, "default", "c1", "u1"), 0);
        ASSERT_EQ(dp_store_release_claim(st, "default", "c1", "u2"), 1);
        ASSERT_FALSE(dp_store_get(st, DP_KIND_RESOURCE_CLAIM, "default", "c1", NULL).claim->allocation);
        a = one_device("gpu-0");
        ASSERT_OK(dp_store_get(st, DP_KIND_RESOURCE_CLAIM, "default", "c2", &rv2).hdr ? 0 : -1);
        ASSERT_OK(dp_store_write_allocation(st, "default", "c2", rv2, a, &p2, NULL, &err));
        dp_store_free(st);
}

TEST(view_borrows) {
        dp_store *st = dp_store_new();
        load(st, NODE_GPU("a", 1) NODE_GPU("b", 1) POD_GPU("p", 1, ""));
        dp_object_list l;
        dp_kind k = DP_KIND_NODE;
        ASSERT_OK(dp_store_view(st, &k, 1, &l));
        ASSERT_EQ(l.n, 2);
        dp_store_view_free(&l);
        ASSERT_OK(dp_store_view(st, NULL, 0, &l));
        ASSERT_EQ(l.n, 3);
        dp_store_view_free(&l);
        dp_store_free(st);
}

TEST(change_log_and_slots) {
        dp_store *st = dp_store_new();
        load(st, NODE_GPU("a", 1) POD_GPU("p", 1, "") POD_GPU("q", 1, ""));
        size_t pos = 0, slot = 0, n = 0;
        while (dp_store_next_change(st, &pos, &slot))
                n++;
        ASSERT_EQ(n, 3);
        ASSERT_EQ(pos, dp_store_changes_end(st));
        size_t p = dp_store_slot_of(st, DP_KIND_POD, NULL, "p");
        ASSERT_TRUE(p != SIZE_MAX);
        ASSERT_EQ(dp_store_slot_of(st, DP_KIND_POD, NULL, "nope"), SIZE_MAX);
        /* a delete and a re-create are logged; the slot keeps its kind and comes back */
        dp_object o;
        ASSERT_OK(dp_store_delete(st, DP_KIND_POD, NULL, "p", DP_STORE_ANY_RV));
        ASSERT_EQ(dp_store_count(st, DP_KIND_POD), 1);
        ASSERT_TRUE(dp_store_next_change(st, &pos, &slot));
        ASSERT_EQ(slot, p);
        dp_object gone;
        ASSERT_EQ(dp_store_slot(st, slot, &gone, NULL), DP_KIND_POD);
        ASSERT_FALSE(gone.hdr);
        load(st, POD_GPU("p", 1, ""));
        ASSERT_TRUE(dp_store_next_change(st, &pos, &slot));
        ASSERT_EQ(slot, p);
        ASSERT_FALSE(dp_store_next_change(st, &pos, &slot));
        ASSERT_EQ(dp_store_count(st, DP_KIND_POD), 2);
        /* iteration stays in slot order: p (re-created in its old slot) before q */
        size_t i = 0;
        ASSERT_TRUE(dp_store_next(st, DP_KIND_POD, &i, &o, NULL));
        ASSERT_TRUE(streq(o.pod->meta.name, "p"));
        ASSERT_TRUE(dp_store_next(st, DP_KIND_POD, &i, &o, NULL));
        ASSERT_TRUE(streq(o.pod->meta.name, "q"));
        ASSERT_FALSE(dp_store_next(st, DP_KIND_POD, &i, &o, NULL));
        ASSERT_EQ(dp_store_slot(st, dp_store_slots(st), NULL, NULL), DP_KIND_NONE);
        dp_store_free(st);
}

/* The ledger looks up the claims holding the devices asked for (an index kept
 * from the change log) and names the first of them in store order, as a walk
 * over every claim would. */
TEST(ledger_index_names_first_claim_in_store_order) {
        dp_store *st = dp_store_new();
        load(st, CLAIM("c1") CLAIM("c2") CLAIM("c3"));
        dp_consumer_ref p = {.resource = (char *)"pods", .name = (char *)"p", .uid = (char *)"u"};
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_store_write_allocation(st, "default", "c1", DP_STORE_ANY_RV, one_device("gpu-1"), &p, NULL, &err));
        ASSERT_OK(dp_store_write_allocation(st, "default", "c2", DP_STORE_ANY_RV, one_device("gpu-0"), &p, NULL, &err));
        dp_allocation_result *a = one_device("gpu-0");
        free(a->results[0].device);
        a->results = realloc(a->results, 2 * sizeof(*a->results));
        a->results[1] = a->results[0];
        a->results[1].request = strdup("r");
        a->results[1].driver = strdup("gpu.example.com");
        a->results[1].pool = strdup("a");
        a->results[0].device = strdup("gpu-0");
        a->results[1].device = strdup("gpu-1");
        a->n_results = 2;
        ASSERT_EQ(dp_store_write_allocation(st, "default", "c3", DP_STORE_ANY_RV, a, &p, NULL, &err), -EBUSY);
        ASSERT_CONTAINS(err.msg, "device gpu.example.com/a/gpu-1 is already allocated to claim default/c1");
        /* c1 gives gpu-1 back (deleted): now c2 is in the way */
        ASSERT_OK(dp_store_delete(st, DP_KIND_RESOURCE_CLAIM, "default", "c1", DP_STORE_ANY_RV));
        ASSERT_EQ(dp_store_write_allocation(st, "default", "c3", DP_STORE_ANY_RV, a, &p, NULL, &err), -EBUSY);
        ASSERT_CONTAINS(err.msg, "device gpu.example.com/a/gpu-0 is already allocated to claim default/c2");
        ASSERT_EQ(dp_store_release_claim(st, "default", "c2", "u"), 1);
        ASSERT_OK(dp_store_write_allocation(st, "default", "c3", DP_STORE_ANY_RV, a, &p, NULL, &err));
        dp_store_free(st);
}
