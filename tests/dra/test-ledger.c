/* SPDX-License-Identifier: Apache-2.0
 * Tests for dra/ledger.c: V1/V2 conflicts on whole GPUs, MIG instances and
 * partitions, sharing, admin access, idempotence, release. */
#include "dra/inventory.h"
#include "dra/ledger.h"
#include "harness.h"

static dp_ledger *ledger(const char *profile, int partitions, bool compat, struct dp_device_set **ret_set) {
        struct dp_device_set *set = NULL;
        dp_error err = DP_ERROR_INIT;
        if (dp_dra_device_set_load(profile, "node-a", &set, &err) < 0) DP_FAIL("%s", err.msg);
        dp_dra_inventory_options o = DP_DRA_INVENTORY_OPTIONS_INIT;
        o.partitions = partitions;
        o.compat_groups = compat;
        dp_dra_inventory *inv = NULL;
        if (dp_dra_inventory_build(set, &o, &inv, &err) < 0) DP_FAIL("%s", err.msg);
        dp_ledger *l = dp_ledger_new(set, inv);
        ASSERT_TRUE(l != NULL);
        dp_dra_inventory_free(inv);
        if (ret_set)
                *ret_set = set;
        else
                dp_dra_device_set_free(set);
        return l;
}

static int take(dp_ledger *l, dp_ledger_path p, const char *holder, const char *dev, unsigned flags, dp_error *err) {
        const char *v[] = {dev};
        return dp_ledger_acquire(l, p, holder, v, 1, flags, err);
}

TEST(v1_then_v2_refused_until_released) {
        struct dp_device_set *set = NULL;
        dp_ledger *l = ledger("a100-80gb-8", 0, false, &set);
        dp_error err = DP_ERROR_INIT;
        /* V1 hands out gpu-3 by uuid (deviceIDStrategy uuid) */
        dp_dra_inventory *inv = NULL;
        ASSERT_OK(dp_dra_inventory_build(set, NULL, &inv, &err));
        const char *uuid = inv->devices[3].uuid;
        ASSERT_OK(take(l, DP_LEDGER_V1, "pod p1/ctr", uuid, 0, &err));
        ASSERT_EQ(take(l, DP_LEDGER_V2, "claim ns/c (u1)", "gpu-3", 0, &err), -EBUSY);
        ASSERT_CONTAINS(err.msg, "device gpu-3 is held through V1 by pod p1/ctr (Allocate, as GPU-");
        dp_ledger_path path;
        ASSERT_STREQ(dp_ledger_holder(l, "gpu-3", &path), "pod p1/ctr");
        ASSERT_EQ(path, DP_LEDGER_V1);
        /* idempotent for the same holder; index ids name the same GPU */
        ASSERT_OK(take(l, DP_LEDGER_V1, "pod p1/ctr", uuid, 0, &err));
        ASSERT_EQ(dp_ledger_count(l), 1);
        ASSERT_EQ(take(l, DP_LEDGER_V1, "pod p2/ctr", "3", 0, &err), -EBUSY);
        ASSERT_EQ(dp_ledger_release(l, "pod p1/ctr"), 1);
        ASSERT_OK(take(l, DP_LEDGER_V2, "claim ns/c (u1)", "gpu-3", 0, &err));
        /* and the other way round */
        ASSERT_EQ(take(l, DP_LEDGER_V1, "pod p3/ctr", uuid, 0, &err), -EBUSY);
        ASSERT_CONTAINS(err.msg, "held through V2 by claim ns/c (u1) (NodePrepareResources, as gpu-3)");
        ASSERT_EQ(take(l, DP_LEDGER_V1, "pod p3/ctr", "gpu-42", 0, &err), -ENOENT);
        ASSERT_CONTAINS(err.msg, "unknown device gpu-42");
        dp_dra_inventory_free(inv);
        dp_ledger_free(l);
        dp_dra_device_set_free(set);
}

TEST(all_or_nothing) {
        dp_ledger *l = ledger("a100-80gb-8", 0, false, NULL);
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(take(l, DP_LEDGER_V2, "claim a", "gpu-1", 0, &err));
        const char *v[] = {"gpu-0", "gpu-1", "gpu-2"};
        ASSERT_EQ(dp_ledger_acquire(l, DP_LEDGER_V1, "pod x/c", v, 3, 0, &err), -EBUSY);
        ASSERT_EQ(dp_ledger_count(l), 1);
        ASSERT_TRUE(dp_ledger_holder(l, "gpu-0", NULL) == NULL);
        dp_ledger_free(l);
}

TEST(mig_and_parent) {
        dp_ledger *l = ledger("a100-mixed", -1, false, NULL);
        dp_error err = DP_ERROR_INIT;
        /* V2 takes a MIG instance; V1 "none" strategy exposes the parent whole */
        ASSERT_OK(take(l, DP_LEDGER_V2, "claim m", "gpu-0-mig-1g10gb-2", 0, &err));
        ASSERT_EQ(take(l, DP_LEDGER_V1, "pod p/c", "gpu-0", 0, &err), -EBUSY);
        ASSERT_CONTAINS(err.msg, "device gpu-0 overlaps gpu-0-mig-1g10gb-2, held through V2 by claim m");
        /* the same instance through V1 (mixed strategy, index id 0:2) */
        ASSERT_EQ(take(l, DP_LEDGER_V1, "pod p/c", "0:2", 0, &err), -EBUSY);
        ASSERT_EQ(take(l, DP_LEDGER_V1, "pod p/c", "gpu-0-mig-1g.10gb-2", 0, &err), -EBUSY);
        /* a sibling instance is free */
        ASSERT_OK(take(l, DP_LEDGER_V1, "pod p/c", "gpu-0-mig-1g.10gb-3", 0, &err));
        dp_ledger_free(l);
}

TEST(partitions_and_parent) {
        dp_ledger *l = ledger("example-gpu", 4, false, NULL);
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(take(l, DP_LEDGER_V2, "claim a", "gpu-1-partition-0", 0, &err));
        ASSERT_OK(take(l, DP_LEDGER_V2, "claim b", "gpu-1-partition-1", 0, &err));
        /* the whole GPU through V1 conflicts with its partitions */
        ASSERT_EQ(take(l, DP_LEDGER_V1, "pod p/c", "gpu-1", 0, &err), -EBUSY);
        ASSERT_EQ(take(l, DP_LEDGER_V2, "claim c", "gpu-1-full", 0, &err), -EBUSY);
        ASSERT_OK(take(l, DP_LEDGER_V1, "pod p/c", "gpu-2", 0, &err));
        ASSERT_EQ(take(l, DP_LEDGER_V2, "claim d", "gpu-2-partition-3", 0, &err), -EBUSY);
        dp_ledger_free(l);
}

TEST(sharing_rules) {
        dp_ledger *l = ledger("example-gpu", 0, false, NULL);
        dp_error err = DP_ERROR_INIT;
        /* V1 time-slicing replicas of one GPU go to different pods */
        ASSERT_OK(take(l, DP_LEDGER_V1, "pod a/c", "gpu-0::0", 0, &err));
        ASSERT_OK(take(l, DP_LEDGER_V1, "pod b/c", "gpu-0::1", 0, &err));
        /* but never to V2, shared or not */
        ASSERT_EQ(take(l, DP_LEDGER_V2, "claim s", "gpu-0", DP_LEDGER_SHARED, &err), -EBUSY);
        /* V2 consumable capacity: two claims with shareIDs share a device */
        ASSERT_OK(take(l, DP_LEDGER_V2, "claim s1", "gpu-1", DP_LEDGER_SHARED, &err));
        ASSERT_OK(take(l, DP_LEDGER_V2, "claim s2", "gpu-1", DP_LEDGER_SHARED, &err));
        ASSERT_EQ(take(l, DP_LEDGER_V2, "claim x", "gpu-1", 0, &err), -EBUSY);
        /* two exclusive V2 claims on one device (stale scheduler views) */
        ASSERT_OK(take(l, DP_LEDGER_V2, "claim e1", "gpu-2", 0, &err));
        ASSERT_EQ(take(l, DP_LEDGER_V2, "claim e2", "gpu-2", 0, &err), -EBUSY);
        /* admin access observes everything */
        const char *all[] = {"gpu-0", "gpu-1", "gpu-2", "gpu-3"};
        ASSERT_OK(dp_ledger_acquire(l, DP_LEDGER_V2, "claim admin", all, 4, DP_LEDGER_ADMIN, &err));
        ASSERT_OK(take(l, DP_LEDGER_V1, "pod z/c", "gpu-3", 0, &err));
        ASSERT_EQ(dp_ledger_release(l, "claim admin"), 4);
        ASSERT_EQ(dp_ledger_release(l, "nobody"), 0);
        dp_ledger_free(l);
}

TEST(compat_modes) {
        dp_ledger *l = ledger("a100-80gb-8", 4, true, NULL);
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(take(l, DP_LEDGER_V2, "claim v", "gpu-0-vgpu-1", 0, &err));
        ASSERT_EQ(take(l, DP_LEDGER_V1, "pod p/c", "gpu-0", 0, &err), -EBUSY);
        ASSERT_OK(take(l, DP_LEDGER_V2, "claim m", "gpu-0-mig-1", 0, &err));
        dp_ledger_free(l);
}

TEST(withdrawn_from_the_other_path) {
        dp_ledger *l = ledger("a100-80gb-8", 0, false, NULL);
        dp_error err = DP_ERROR_INIT;
        ASSERT_FALSE(dp_ledger_withdrawn(l, "gpu-0", DP_LEDGER_V1));
        ASSERT_OK(take(l, DP_LEDGER_V2, "claim ns/c (u)", "gpu-0", 0, &err));
        uint64_t v = dp_ledger_version(l);
        /* every V1 name of that GPU is out of V1's reach (index id too), not of V2's */
        ASSERT_TRUE(dp_ledger_withdrawn(l, "gpu-0", DP_LEDGER_V1));
        ASSERT_TRUE(dp_ledger_withdrawn(l, "0", DP_LEDGER_V1));
        ASSERT_TRUE(dp_ledger_withdrawn(l, "0::1", DP_LEDGER_V1));
        ASSERT_FALSE(dp_ledger_withdrawn(l, "gpu-0", DP_LEDGER_V2));
        ASSERT_FALSE(dp_ledger_withdrawn(l, "gpu-1", DP_LEDGER_V1));
        ASSERT_FALSE(dp_ledger_withdrawn(l, "no-such", DP_LEDGER_V1));
        /* admin access does not take a device away */
        ASSERT_OK(take(l, DP_LEDGER_V2, "claim admin", "gpu-2", DP_LEDGER_ADMIN, &err));
        ASSERT_FALSE(dp_ledger_withdrawn(l, "gpu-2", DP_LEDGER_V1));
        ASSERT_EQ(dp_ledger_release(l, "claim ns/c (u)"), 1);
        ASSERT_TRUE(dp_ledger_version(l) > v);
        ASSERT_FALSE(dp_ledger_withdrawn(l, "gpu-0", DP_LEDGER_V1));
        dp_ledger_free(l);
}

TEST(unknown_state_fails_closed) {
        dp_ledger *l = ledger("example-gpu", 0, false, NULL);
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_ledger_mark_unknown(l, "kubelet checkpoint", DP_LEDGER_V2, "V1 holds unknown (test)"));
        ASSERT_EQ(take(l, DP_LEDGER_V2, "claim ns/c (u)", "gpu-1", 0, &err), -EBUSY);
        ASSERT_CONTAINS(err.msg, "device gpu-1 cannot be handed out through V2: V1 holds unknown (test)");
        ASSERT_EQ(dp_ledger_count(l), 0);
        /* V1 itself goes on; V2 devices stay in V1's reach */
        ASSERT_OK(take(l, DP_LEDGER_V1, "pod p/c", "gpu-1", 0, &err));
        ASSERT_FALSE(dp_ledger_withdrawn(l, "gpu-2", DP_LEDGER_V1));
        ASSERT_TRUE(dp_ledger_withdrawn(l, "gpu-2", DP_LEDGER_V2));
        ASSERT_STREQ(dp_ledger_unknown(l, DP_LEDGER_V2), "V1 holds unknown (test)");
        ASSERT_TRUE(dp_ledger_unknown(l, DP_LEDGER_V1) == NULL);
        /* replacing keeps one mark; a mark blocking both spares its key */
        ASSERT_OK(dp_ledger_mark_unknown(l, "claim u9", DP_LEDGER_V1 | DP_LEDGER_V2, "claim u9 unknown"));
        ASSERT_EQ(take(l, DP_LEDGER_V1, "pod q/c", "gpu-3", 0, &err), -EBUSY);
        ASSERT_CONTAINS(err.msg, "through V1: claim u9 unknown");
        ASSERT_TRUE(dp_ledger_withdrawn(l, "gpu-3", DP_LEDGER_V1));
        ASSERT_EQ(dp_ledger_clear_unknown(l, "claim u9"), 1);
        ASSERT_EQ(dp_ledger_clear_unknown(l, "claim u9"), 0);
        ASSERT_OK(take(l, DP_LEDGER_V1, "pod q/c", "gpu-3", 0, &err));
        ASSERT_EQ(dp_ledger_clear_unknown(l, "kubelet checkpoint"), 1);
        ASSERT_OK(take(l, DP_LEDGER_V2, "claim ns/c (u)", "gpu-2", 0, &err));
        dp_ledger_free(l);
}

TEST(replayed_holds_pass_marks) {
        dp_ledger *l = ledger("example-gpu", 0, false, NULL);
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_ledger_mark_unknown(l, "kubelet checkpoint", DP_LEDGER_V2, "V1 holds unknown"));
        /* a claim prepared before the restart stays held; a new one is refused */
        ASSERT_OK(take(l, DP_LEDGER_V2, "claim ns/old (u1)", "gpu-0", DP_LEDGER_REPLAY, &err));
        ASSERT_EQ(take(l, DP_LEDGER_V2, "claim ns/new (u2)", "gpu-1", 0, &err), -EBUSY);
        ASSERT_EQ(dp_ledger_conflicts(l), 0);
        dp_ledger_free(l);
}

/* Both checkpoints name gpu-0 (a V1 pod and a prepared claim): neither hold
 * is dropped — either container may be running — the clash is reported,
 * and nobody new gets the device on either path until both let go. */
TEST(replay_over_a_conflict_keeps_both) {
        dp_ledger *l = ledger("example-gpu", 0, false, NULL);
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(take(l, DP_LEDGER_V1, "pod p/c", "gpu-0", DP_LEDGER_REPLAY, &err));
        ASSERT_EQ(take(l, DP_LEDGER_V2, "claim ns/old (u1)", "gpu-0", DP_LEDGER_REPLAY, &err), 1);
        ASSERT_CONTAINS(err.msg, "device gpu-0 is held through V1 by pod p/c (Allocate) and through V2 by claim "
                                 "ns/old (u1): both keep it");
        ASSERT_EQ(dp_ledger_count(l), 2);
        ASSERT_EQ(dp_ledger_conflicts(l), 1);
        /* a replay of the V1 side again (every kubelet checkpoint write) counts the pair once */
        ASSERT_EQ(dp_ledger_release(l, "pod p/c"), 1);
        ASSERT_EQ(take(l, DP_LEDGER_V1, "pod p/c", "gpu-0", DP_LEDGER_REPLAY, &err), 1);
        ASSERT_EQ(dp_ledger_conflicts(l), 1);
        ASSERT_TRUE(dp_ledger_withdrawn(l, "gpu-0", DP_LEDGER_V1));
        ASSERT_TRUE(dp_ledger_withdrawn(l, "gpu-0", DP_LEDGER_V2));
        ASSERT_EQ(take(l, DP_LEDGER_V2, "claim ns/new (u2)", "gpu-0", 0, &err), -EBUSY);
        ASSERT_EQ(take(l, DP_LEDGER_V1, "pod q/c", "gpu-0", 0, &err), -EBUSY);
        /* one lets go: the other still holds it, the clash is over */
        ASSERT_EQ(dp_ledger_release(l, "pod p/c"), 1);
        ASSERT_EQ(dp_ledger_conflicts(l), 0);
        ASSERT_EQ(take(l, DP_LEDGER_V1, "pod q/c", "gpu-0", 0, &err), -EBUSY);
        ASSERT_CONTAINS(err.msg, "held through V2 by claim ns/old (u1)");
        ASSERT_EQ(dp_ledger_release(l, "claim ns/old (u1)"), 1);
        ASSERT_OK(take(l, DP_LEDGER_V2, "claim ns/new (u2)", "gpu-0", 0, &err));
        /* unknown names still refuse a replay, all or nothing */
        const char *v[] = {"gpu-1", "gpu-42"};
        ASSERT_EQ(dp_ledger_acquire(l, DP_LEDGER_V1, "pod r/c", v, 2, DP_LEDGER_REPLAY, &err), -ENOENT);
        ASSERT_TRUE(dp_ledger_holder(l, "gpu-1", NULL) == NULL);
        dp_ledger_free(l);
}
