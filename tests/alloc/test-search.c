/* SPDX-License-Identifier: Apache-2.0
 * Tests of the allocator core over hand-built snapshots (search.c, state.c,
 * explain.c, snapshot.c). */
#include "harness.h"

#include "alloc-test-util.h"
#include "base/strbuf.h"

static tdev store[4096];
static tsel any = {"*", ""};

typedef struct run {
        int r;
        char out[4096];
        char why[4096];
        uint64_t effort;
} run;

static run alloc1(dp_alloc_snapshot *s, const char *node, const dp_alloc_claim *cl, bool commit) {
        run o = {0};
        dp_alloc_result *res = NULL;
        _cleanup_strbuf_ dp_strbuf why = DP_STRBUF_INIT, out = DP_STRBUF_INIT;
        dp_error err = DP_ERROR_INIT;
        dp_alloc_options opts = {.explain = true};
        dp_alloc_stats before, after;
        dp_alloc_get_stats(s, &before);
        o.r = dp_alloc_allocate(s, node, &cl, 1, &opts, &res, &why, &err);
        dp_alloc_get_stats(s, &after);
        o.effort = after.effort - before.effort;
        if (o.r < 0) snprintf(o.why, sizeof(o.why), "error: %s", err.msg);
        if (o.r == 1) {
                dump_result(&res[0], &out);
                if (commit) ASSERT_OK(dp_alloc_commit(s, cl, &res[0]));
                res = dp_alloc_results_free(res, 1);
        }
        snprintf(o.out, sizeof(o.out), "%s", dp_strbuf_str(&out));
        if (o.r == 0) snprintf(o.why, sizeof(o.why), "%s", dp_strbuf_str(&why));
        return o;
}

static dp_alloc_snapshot *snap(void) {
        dp_alloc_snapshot *s = dp_alloc_snapshot_new();
        ASSERT_TRUE(s);
        dp_alloc_set_selector_fn(s, tsel_fn, NULL);
        return s;
}

#define CLAIM(var, reqs, nreqs, cons, ncons)                                                                     \
        dp_alloc_claim var = {.ns = "default", .name = #var, .uid = "uid-" #var, .requests = reqs,            \
                              .n_requests = nreqs, .constraints = cons, .n_constraints = ncons}

TEST(basic_and_in_use) {
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s = snap();
        ASSERT_OK(add_simple_pool(s, store, "node-a", "gpu-", 4, NULL, NULL, 0));
        uint32_t sel;
        ASSERT_OK(dp_alloc_add_selector(s, &any, &sel));
        dp_alloc_subrequest sr = {.device_class = "gpu", .class_selectors = &sel, .n_class_selectors = 1, .count = 2};
        dp_alloc_request rq = {.name = "gpus", .subs = &sr, .n_subs = 1};
        CLAIM(c1, &rq, 1, NULL, 0);
        run o = alloc1(s, "node-a", &c1, true);
        ASSERT_EQ(o.r, 1);
        ASSERT_STREQ(o.out, "gpus=example.com/node-a/gpu-0\ngpus=example.com/node-a/gpu-1\nnode=node-a\n");
        sr.count = 3;
        CLAIM(c2, &rq, 1, NULL, 0);
        o = alloc1(s, "node-a", &c2, false);
        ASSERT_EQ(o.r, 0);
        ASSERT_CONTAINS(o.why, "request gpus: needs 3 devices, 2 of 4 usable: 2 in use by claim default/c1");
        sr.count = 2;
        o = alloc1(s, "node-a", &c2, false);
        ASSERT_EQ(o.r, 1);
        ASSERT_STREQ(o.out, "gpus=example.com/node-a/gpu-2\ngpus=example.com/node-a/gpu-3\nnode=node-a\n");
}

TEST(n_of_n_minus_1_is_cut_by_counting) {
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s = snap();
        ASSERT_OK(add_simple_pool(s, store, "node-a", "gpu-", 31, NULL, NULL, 0));
        uint32_t sel;
        ASSERT_OK(dp_alloc_add_selector(s, &any, &sel));
        dp_alloc_subrequest sr = {.class_selectors = &sel, .n_class_selectors = 1, .count = 32};
        dp_alloc_request rq = {.name = "r", .subs = &sr, .n_subs = 1};
        CLAIM(c, &rq, 1, NULL, 0);
        run o = alloc1(s, "node-a", &c, false);
        ASSERT_EQ(o.r, 0);
        ASSERT_TRUE(o.effort < 10);
        ASSERT_CONTAINS(o.why, "needs 32 devices, 31 of 31 usable");
        /* 16 + 16 from 31: the two requests together */
        dp_alloc_subrequest two[2] = {sr, sr};
        two[0].count = two[1].count = 16;
        dp_alloc_request rqs[2] = {{.name = "a", .subs = &two[0], .n_subs = 1}, {.name = "b", .subs = &two[1], .n_subs = 1}};
        CLAIM(c2, rqs, 2, NULL, 0);
        o = alloc1(s, "node-a", &c2, false);
        ASSERT_EQ(o.r, 0);
        ASSERT_TRUE(o.effort < 10);
        ASSERT_CONTAINS(o.why, "requests a, b need 32 devices between them, no device serving two, but only 31 devices "
                               "match any of them: gpu-0, gpu-1,");
}

/* 16 GPUs (even ones H100), 4 requests for any GPU, then n for an H100 (as
 * firstAvailable lists of two H100 entries, which the union count passes
 * over), all in one claim or spread over two claims; the search is capped so
 * that a search without the matching bound fails quickly. */
static run h100_claims(int n_h100, bool two_claims) {
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s = snap();
        static const char *const models[] = {"H100", "A100"};
        ASSERT_OK(add_simple_pool(s, store, "node-a", "gpu-", 16, "model", models, 2));
        static tsel h100 = {"model", "H100"};
        uint32_t sel_any, sel_h100;
        ASSERT_OK(dp_alloc_add_selector(s, &any, &sel_any));
        ASSERT_OK(dp_alloc_add_selector(s, &h100, &sel_h100));
        dp_alloc_subrequest anysr = {.class_selectors = &sel_any, .n_class_selectors = 1, .count = 1};
        dp_alloc_subrequest hsr = anysr;
        hsr.selectors = &sel_h100;
        hsr.n_selectors = 1;
        dp_alloc_subrequest hsubs[2] = {hsr, hsr};
        hsubs[0].name = "first";
        hsubs[1].name = "second";
        static char names[13][8];
        dp_alloc_request rq[13];
        for (int i = 0; i < 4 + n_h100; i++) {
                snprintf(names[i], sizeof(names[i]), i < 4 ? "any%d" : "h%d", i < 4 ? i : i - 4);
                rq[i] = i < 4 ? (dp_alloc_request){.name = names[i], .subs = &anysr, .n_subs = 1}
                              : (dp_alloc_request){.name = names[i], .subs = hsubs, .n_subs = 2, .first_available = true};
        }
        size_t split = two_claims ? 6 : (size_t)(4 + n_h100);
        CLAIM(c1, rq, split, NULL, 0);
        CLAIM(c2, rq + split, (size_t)(4 + n_h100) - split, NULL, 0);
        const dp_alloc_claim *cls[2] = {&c1, &c2};
        run o = {0};
        dp_alloc_result *res = NULL;
        _cleanup_strbuf_ dp_strbuf why = DP_STRBUF_INIT;
        dp_error err = DP_ERROR_INIT;
        dp_alloc_options opts = {.explain = true, .max_effort = 1000000};
        o.r = dp_alloc_allocate(s, "node-a", cls, two_claims ? 2 : 1, &opts, &res, &why, &err);
        dp_alloc_stats st;
        dp_alloc_get_stats(s, &st);
        o.effort = st.effort;
        snprintf(o.why, sizeof(o.why), "%s", o.r < 0 ? err.msg : dp_strbuf_str(&why));
        if (o.r == 1) {
                _cleanup_strbuf_ dp_strbuf out = DP_STRBUF_INIT;
                for (size_t c = 0; c < (two_claims ? 2u : 1u); c++) dump_result(&res[c], &out);
                snprintf(o.out, sizeof(o.out), "%s", dp_strbuf_str(&out));
        }
        dp_alloc_results_free(res, two_claims ? 2 : 1);
        return o;
}

TEST(matching_bound_names_the_requests_short_of_devices) {
        run o = h100_claims(9, false);
        ASSERT_EQ(o.r, 0);
        ASSERT_TRUE(o.effort < 100);
        ASSERT_STREQ(o.why, "requests h0, h1, h2, h3, h4, h5, h6, h7, h8 need 9 devices between them, no device serving "
                            "two, but only 8 devices match any of them: gpu-0, gpu-2, gpu-4, gpu-6, gpu-8, gpu-10, "
                            "gpu-12, gpu-14\n");
        /* across the claims of one call: the requests are named with their claim */
        o = h100_claims(9, true);
        ASSERT_EQ(o.r, 0);
        ASSERT_CONTAINS(o.why, "requests default/c1:h0, default/c1:h1, default/c2:h2, default/c2:h3,");
}

TEST(matching_bound_keeps_the_first_fit_answer) {
        /* 8 H100 requests after 4 for any GPU: the first fit puts the 4 on
         * A100s; every branch giving them an H100 is cut by the bound */
        run o = h100_claims(8, false);
        ASSERT_EQ(o.r, 1);
        ASSERT_TRUE(o.effort < 10000);
        ASSERT_STREQ(o.out, "any0=example.com/node-a/gpu-1\nany1=example.com/node-a/gpu-3\nany2=example.com/node-a/gpu-5\n"
                            "any3=example.com/node-a/gpu-7\nh0/first=example.com/node-a/gpu-0\nh1/first=example.com/node-a/gpu-2\n"
                            "h2/first=example.com/node-a/gpu-4\nh3/first=example.com/node-a/gpu-6\nh4/first=example.com/node-a/gpu-8\n"
                            "h5/first=example.com/node-a/gpu-10\nh6/first=example.com/node-a/gpu-12\nh7/first=example.com/node-a/gpu-14\n"
                            "node=node-a\n");
}

TEST(match_attribute_value_classes) {
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s = snap();
        const char *parents[] = {"gpu-a", "gpu-b"};
        ASSERT_OK(add_simple_pool(s, store, "node-a", "mig-", 32, "parent", parents, 2));
        uint32_t sel;
        ASSERT_OK(dp_alloc_add_selector(s, &any, &sel));
        dp_alloc_subrequest sr = {.class_selectors = &sel, .n_class_selectors = 1, .count = 2};
        dp_alloc_request rq = {.name = "r", .subs = &sr, .n_subs = 1};
        dp_alloc_constraint ct = {.match_attribute = "example.com/parent"};
        CLAIM(c, &rq, 1, &ct, 1);
        run o = alloc1(s, "node-a", &c, false);
        ASSERT_EQ(o.r, 1);
        ASSERT_STREQ(o.out, "r=example.com/node-a/mig-0\nr=example.com/node-a/mig-2\nnode=node-a\n");
        sr.count = 17; /* 16 share each value */
        o = alloc1(s, "node-a", &c, false);
        ASSERT_EQ(o.r, 0);
        ASSERT_TRUE(o.effort < 10);
        ASSERT_CONTAINS(o.why, "constraint matchAttribute example.com/parent cannot hold: at most 16 usable devices share a value, 17 needed");
        /* unknown attribute: missing fails the constraint */
        ct.match_attribute = "example.com/nope";
        sr.count = 1;
        o = alloc1(s, "node-a", &c, false);
        ASSERT_EQ(o.r, 0);
        ASSERT_CONTAINS(o.why, "needs 1 more device(s), only 0 usable");
}

TEST(distinct_within_one_request) {
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s = snap();
        const char *vals[] = {"x", "x", "y", "y"};
        ASSERT_OK(add_simple_pool(s, store, "node-a", "d", 4, "nic", vals, 4));
        uint32_t sel;
        ASSERT_OK(dp_alloc_add_selector(s, &any, &sel));
        dp_alloc_subrequest sr = {.class_selectors = &sel, .n_class_selectors = 1, .count = 2};
        dp_alloc_request rq = {.name = "r", .subs = &sr, .n_subs = 1};
        dp_alloc_constraint ct = {.distinct_attribute = "example.com/nic"};
        CLAIM(c, &rq, 1, &ct, 1);
        run o = alloc1(s, "node-a", &c, false);
        ASSERT_EQ(o.r, 1);
        ASSERT_STREQ(o.out, "r=example.com/node-a/d0\nr=example.com/node-a/d2\nnode=node-a\n");
        sr.count = 3;
        o = alloc1(s, "node-a", &c, false);
        ASSERT_EQ(o.r, 0);
        ASSERT_CONTAINS(o.why, "only 2 distinct values among usable devices, 3 needed");
}

TEST(first_available_names_subrequest) {
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s = snap();
        const char *models[] = {"h100", "a100", "a100"};
        ASSERT_OK(add_simple_pool(s, store, "node-a", "gpu-", 3, "model", models, 3));
        static tsel h100 = {"model", "h100"}, a100 = {"model", "a100"};
        uint32_t sh, sa;
        ASSERT_OK(dp_alloc_add_selector(s, &h100, &sh));
        ASSERT_OK(dp_alloc_add_selector(s, &a100, &sa));
        dp_alloc_subrequest subs[2] = {{.name = "h100", .selectors = &sh, .n_selectors = 1, .count = 1},
                                       {.name = "a100", .selectors = &sa, .n_selectors = 1, .count = 1}};
        dp_alloc_request rq = {.name = "gpu", .first_available = true, .subs = subs, .n_subs = 2};
        CLAIM(c1, &rq, 1, NULL, 0);
        run o = alloc1(s, "node-a", &c1, true);
        ASSERT_STREQ(o.out, "gpu/h100=example.com/node-a/gpu-0\nnode=node-a\n");
        CLAIM(c2, &rq, 1, NULL, 0);
        o = alloc1(s, "node-a", &c2, true);
        ASSERT_STREQ(o.out, "gpu/a100=example.com/node-a/gpu-1\nnode=node-a\n");
        /* a constraint naming req/sub applies only to that entry */
        static const char *only[] = {"gpu/h100"};
        dp_alloc_constraint ct = {.requests = only, .n_requests = 1, .match_attribute = "example.com/missing"};
        CLAIM(c3, &rq, 1, &ct, 1);
        o = alloc1(s, "node-a", &c3, false);
        ASSERT_STREQ(o.out, "gpu/a100=example.com/node-a/gpu-2\nnode=node-a\n");
}

static void partition_pool(dp_alloc_snapshot *s, int n_parts, __int128 part_mem, __int128 total,
                           const char *const *groups) {
        dp_alloc_counter ctr = {"memory", total};
        dp_alloc_counter_set cs = {"gpu-0-memory", &ctr, 1};
        dp_alloc_slice_spec counters = {.name = "a-counters", .driver = "example.com", .pool = "node-a",
                                        .generation = 1, .slice_count = 2, .counter_sets = &cs, .n_counter_sets = 1};
        ASSERT_OK(dp_alloc_add_slice(s, &counters, NULL));
        dp_alloc_slice_spec devs = {.name = "b-devices", .driver = "example.com", .pool = "node-a", .generation = 1,
                                    .slice_count = 2, .node_name = "node-a"};
        uint32_t sl;
        ASSERT_OK(dp_alloc_add_slice(s, &devs, &sl));
        for (int i = 0; i < n_parts; i++) {
                tdev *t = &store[i];
                memset(t, 0, sizeof(*t));
                snprintf(t->name, sizeof(t->name), "%s-%d", groups ? groups[i] : "part", i);
                dp_alloc_counter use = {"memory", part_mem};
                const char *g = groups ? groups[i] : NULL;
                dp_alloc_consumption c = {"gpu-0-memory", &use, 1, g ? &g : NULL, g ? 1 : 0};
                dp_alloc_device_spec d = {.name = t->name, .consumes = &c, .n_consumes = 1, .user = t};
                ASSERT_OK(dp_alloc_add_device(s, sl, &d, NULL));
        }
}

TEST(partitions_share_a_counter) {
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s = snap();
        partition_pool(s, 2, GI(6), GI(8), NULL);
        uint32_t sel;
        ASSERT_OK(dp_alloc_add_selector(s, &any, &sel));
        dp_alloc_subrequest sr = {.class_selectors = &sel, .n_class_selectors = 1, .count = 1};
        dp_alloc_request rq = {.name = "r", .subs = &sr, .n_subs = 1};
        CLAIM(c1, &rq, 1, NULL, 0);
        run o = alloc1(s, "node-a", &c1, true);
        ASSERT_STREQ(o.out, "r=example.com/node-a/part-0\nnode=node-a\n");
        CLAIM(c2, &rq, 1, NULL, 0);
        o = alloc1(s, "node-a", &c2, false);
        ASSERT_EQ(o.r, 0);
        ASSERT_CONTAINS(o.why, "device part-1: counter set gpu-0-memory exhausted (counter memory: 8589934592, 6442450944 taken by other claims)");
}

TEST(counters_roll_back_on_backtrack) {
        /* request a takes one partition, request b needs two, matchAttribute
         * forces a retry: no counter may stay charged from the dead branch */
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s = snap();
        partition_pool(s, 4, GI(2), GI(6), NULL);
        uint32_t sel;
        ASSERT_OK(dp_alloc_add_selector(s, &any, &sel));
        dp_alloc_subrequest sr = {.class_selectors = &sel, .n_class_selectors = 1, .count = 3};
        dp_alloc_request rq = {.name = "r", .subs = &sr, .n_subs = 1};
        CLAIM(c1, &rq, 1, NULL, 0);
        run o = alloc1(s, "node-a", &c1, false);
        ASSERT_EQ(o.r, 1);
        sr.count = 4;
        o = alloc1(s, "node-a", &c1, false);
        ASSERT_EQ(o.r, 0);
        /* after the failed search, everything is free again */
        sr.count = 3;
        o = alloc1(s, "node-a", &c1, false);
        ASSERT_EQ(o.r, 1);
        ASSERT_STREQ(o.out, "r=example.com/node-a/part-0\nr=example.com/node-a/part-1\nr=example.com/node-a/part-2\nnode=node-a\n");
}

TEST(compatibility_groups) {
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s = snap();
        static const char *groups[] = {"mig", "vgpu"};
        partition_pool(s, 2, GI(2), GI(8), groups);
        static tsel vg = {"kind", "vgpu"};
        snprintf(store[1].keys[0], 64, "kind");
        snprintf(store[1].vals[0], 64, "vgpu");
        store[1].n = 1;
        uint32_t sel, sv;
        ASSERT_OK(dp_alloc_add_selector(s, &any, &sel));
        ASSERT_OK(dp_alloc_add_selector(s, &vg, &sv));
        dp_alloc_subrequest sr = {.class_selectors = &sel, .n_class_selectors = 1, .count = 1};
        dp_alloc_request rq = {.name = "r", .subs = &sr, .n_subs = 1};
        CLAIM(c1, &rq, 1, NULL, 0);
        run o = alloc1(s, "node-a", &c1, true);
        ASSERT_STREQ(o.out, "r=example.com/node-a/mig-0\nnode=node-a\n");
        dp_alloc_subrequest sr2 = {.selectors = &sv, .n_selectors = 1, .count = 1};
        dp_alloc_request rq2 = {.name = "v", .subs = &sr2, .n_subs = 1};
        CLAIM(c2, &rq2, 1, NULL, 0);
        o = alloc1(s, "node-a", &c2, false);
        ASSERT_EQ(o.r, 0);
        ASSERT_CONTAINS(o.why, "mig-0 is allocated on counter set gpu-0-memory with groups [mig]; vgpu-1 has [vgpu]");
        /* within one claim: both at once is refused too */
        sr.count = 2;
        CLAIM(c3, &rq, 1, NULL, 0);
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s2 = snap();
        partition_pool(s2, 2, GI(2), GI(8), groups);
        ASSERT_OK(dp_alloc_add_selector(s2, &any, &sel));
        o = alloc1(s2, "node-a", &c3, false);
        ASSERT_EQ(o.r, 0);
        ASSERT_CONTAINS(o.why, "mig-0 is picked for this claim on counter set gpu-0-memory with groups [mig]; vgpu-1 has [vgpu]");
}

TEST(consumable_capacity_shares) {
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s = snap();
        dp_alloc_slice_spec sp = {.name = "s", .driver = "example.com", .pool = "node-a", .generation = 1,
                                  .slice_count = 1, .node_name = "node-a"};
        uint32_t sl;
        ASSERT_OK(dp_alloc_add_slice(s, &sp, &sl));
        dp_alloc_capacity cap = {.name = "memory", .value = GI(40), .has_policy = true, .has_default = true,
                                 .def = GI(4), .has_range = true, .min = GI(4), .has_step = true, .step = GI(4)};
        memset(&store[0], 0, sizeof(tdev));
        snprintf(store[0].name, 64, "gpu-0");
        dp_alloc_device_spec d = {.name = "gpu-0", .caps = &cap, .n_caps = 1, .allow_multiple_allocations = true,
                                  .user = &store[0]};
        ASSERT_OK(dp_alloc_add_device(s, sl, &d, NULL));
        uint32_t sel;
        ASSERT_OK(dp_alloc_add_selector(s, &any, &sel));
        dp_alloc_capacity_request want = {"memory", GI(7)}; /* rounds up to 8Gi */
        dp_alloc_subrequest sr = {.class_selectors = &sel, .n_class_selectors = 1, .count = 1, .capacity = &want,
                                  .n_capacity = 1};
        dp_alloc_request rq = {.name = "r", .subs = &sr, .n_subs = 1};
        char seen[5][40];
        for (int i = 0; i < 5; i++) {
                char name[16];
                snprintf(name, sizeof(name), "c%d", i);
                dp_alloc_claim c = {.ns = "default", .name = name, .uid = name, .requests = &rq, .n_requests = 1};
                dp_alloc_result *res = NULL;
                const dp_alloc_claim *cp = &c;
                ASSERT_EQ(dp_alloc_allocate(s, "node-a", &cp, 1, NULL, &res, NULL, NULL), 1);
                ASSERT_EQ(res[0].devices[0].n_consumed, 1);
                ASSERT_TRUE(res[0].devices[0].consumed[0].value == GI(8));
                memcpy(seen[i], res[0].devices[0].share_id, 40);
                ASSERT_EQ(strlen(seen[i]), 36);
                for (int j = 0; j < i; j++) ASSERT_TRUE(strcmp(seen[i], seen[j]) != 0);
                ASSERT_OK(dp_alloc_commit(s, &c, &res[0]));
                dp_alloc_results_free(res, 1);
        }
        CLAIM(c6, &rq, 1, NULL, 0);
        run o = alloc1(s, "node-a", &c6, false);
        ASSERT_EQ(o.r, 0);
        ASSERT_CONTAINS(o.why, "1 in use by claim default/c0");
        /* a request beyond the policy's range is refused */
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s2 = snap();
        ASSERT_OK(dp_alloc_add_slice(s2, &sp, &sl));
        cap.has_max = true;
        cap.max = GI(16);
        ASSERT_OK(dp_alloc_add_device(s2, sl, &d, NULL));
        ASSERT_OK(dp_alloc_add_selector(s2, &any, &sel));
        want.value = GI(17);
        o = alloc1(s2, "node-a", &c6, false);
        ASSERT_EQ(o.r, 0);
        ASSERT_CONTAINS(o.why, "1 cannot give the capacity asked");
}

TEST(taints_and_tolerations) {
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s = snap();
        dp_alloc_slice_spec sp = {.name = "s", .driver = "example.com", .pool = "p", .generation = 1, .slice_count = 1,
                                  .node_name = "node-a"};
        uint32_t sl;
        ASSERT_OK(dp_alloc_add_slice(s, &sp, &sl));
        dp_alloc_taint bad = {"health", "down", "NoSchedule"}, info = {"note", "x", "None"};
        for (int i = 0; i < 2; i++) {
                memset(&store[i], 0, sizeof(tdev));
                snprintf(store[i].name, 64, "gpu-%d", i);
                dp_alloc_device_spec d = {.name = store[i].name, .taints = i == 0 ? &bad : &info, .n_taints = 1,
                                          .user = &store[i]};
                ASSERT_OK(dp_alloc_add_device(s, sl, &d, NULL));
        }
        uint32_t sel;
        ASSERT_OK(dp_alloc_add_selector(s, &any, &sel));
        dp_alloc_subrequest sr = {.class_selectors = &sel, .n_class_selectors = 1, .count = 1};
        dp_alloc_request rq = {.name = "r", .subs = &sr, .n_subs = 1};
        CLAIM(c, &rq, 1, NULL, 0);
        run o = alloc1(s, "node-a", &c, false);
        ASSERT_STREQ(o.out, "r=example.com/p/gpu-1\nnode=node-a\n");
        sr.count = 2;
        o = alloc1(s, "node-a", &c, false);
        ASSERT_CONTAINS(o.why, "1 tainted and not tolerated (gpu-0: health=down:NoSchedule)");
        dp_alloc_toleration tol = {.key = "health", .op = "Exists"};
        sr.tolerations = &tol;
        sr.n_tolerations = 1;
        o = alloc1(s, "node-a", &c, false);
        ASSERT_EQ(o.r, 1);
        /* allocationMode All: a matching device with a taint not tolerated
         * refuses the request (upstream), it is not left out */
        sr.n_tolerations = 0;
        sr.all = true;
        o = alloc1(s, "node-a", &c, false);
        ASSERT_EQ(o.r, 0);
        ASSERT_CONTAINS(o.why, "device gpu-0 matches but has a taint not tolerated (health=down:NoSchedule)");
        sr.tolerations = &tol;
        sr.n_tolerations = 1;
        o = alloc1(s, "node-a", &c, false);
        ASSERT_STREQ(o.out, "r=example.com/p/gpu-0\nr=example.com/p/gpu-1\nnode=node-a\n");
}

TEST(admin_access) {
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s = snap();
        ASSERT_OK(add_simple_pool(s, store, "node-a", "gpu-", 2, NULL, NULL, 0));
        uint32_t sel;
        ASSERT_OK(dp_alloc_add_selector(s, &any, &sel));
        dp_alloc_subrequest sr = {.class_selectors = &sel, .n_class_selectors = 1, .count = 2};
        dp_alloc_request rq = {.name = "r", .subs = &sr, .n_subs = 1};
        CLAIM(c1, &rq, 1, NULL, 0);
        ASSERT_EQ(alloc1(s, "node-a", &c1, true).r, 1);
        dp_alloc_subrequest ar = sr;
        ar.admin_access = true;
        dp_alloc_request arq[2] = {{.name = "a", .subs = &ar, .n_subs = 1}, {.name = "b", .subs = &ar, .n_subs = 1}};
        CLAIM(adm, arq, 1, NULL, 0);
        run o = alloc1(s, "node-a", &adm, false);
        ASSERT_CONTAINS(o.why, "adminAccess needs the namespace label resource.kubernetes.io/admin-access");
        adm.admin_access_allowed = true;
        o = alloc1(s, "node-a", &adm, true);
        ASSERT_STREQ(o.out, "a=example.com/node-a/gpu-0 admin\na=example.com/node-a/gpu-1 admin\nnode=node-a\n");
        /* never the same device twice in one claim */
        adm.n_requests = 2;
        o = alloc1(s, "node-a", &adm, false);
        ASSERT_EQ(o.r, 0);
}

TEST(all_mode_and_pools) {
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s = snap();
        ASSERT_OK(add_simple_pool(s, store, "node-a", "gpu-", 3, NULL, NULL, 0));
        /* an older generation of the pool is ignored */
        dp_alloc_slice_spec old = {.name = "node-a-old", .driver = "example.com", .pool = "node-a", .generation = 0,
                                   .slice_count = 1, .node_name = "node-a"};
        uint32_t sl;
        ASSERT_OK(dp_alloc_add_slice(s, &old, &sl));
        memset(&store[100], 0, sizeof(tdev));
        snprintf(store[100].name, 64, "stale");
        dp_alloc_device_spec d = {.name = "stale", .user = &store[100]};
        ASSERT_OK(dp_alloc_add_device(s, sl, &d, NULL));
        uint32_t sel;
        ASSERT_OK(dp_alloc_add_selector(s, &any, &sel));
        dp_alloc_subrequest sr = {.class_selectors = &sel, .n_class_selectors = 1, .all = true};
        dp_alloc_request rq = {.name = "all", .subs = &sr, .n_subs = 1};
        CLAIM(c, &rq, 1, NULL, 0);
        run o = alloc1(s, "node-a", &c, false);
        ASSERT_STREQ(o.out, "all=example.com/node-a/gpu-0\nall=example.com/node-a/gpu-1\nall=example.com/node-a/gpu-2\nnode=node-a\n");
        /* an incomplete pool fails All but not ExactCount */
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s2 = snap();
        ASSERT_OK(add_simple_pool(s2, store, "node-a", "gpu-", 2, NULL, NULL, 0));
        dp_alloc_slice_spec inc = {.name = "x", .driver = "other.com", .pool = "p", .generation = 1, .slice_count = 2,
                                   .node_name = "node-a"};
        ASSERT_OK(dp_alloc_add_slice(s2, &inc, &sl));
        ASSERT_OK(dp_alloc_add_device(s2, sl, &d, NULL));
        ASSERT_OK(dp_alloc_add_selector(s2, &any, &sel));
        o = alloc1(s2, "node-a", &c, false);
        ASSERT_EQ(o.r, 0);
        ASSERT_CONTAINS(o.why, "pool other.com/p skipped: incomplete (1 of 2 slices at generation 1)");
        sr.all = false;
        sr.count = 2;
        o = alloc1(s2, "node-a", &c, false);
        ASSERT_STREQ(o.out, "all=example.com/node-a/gpu-0\nall=example.com/node-a/gpu-1\nnode=node-a\n");
        sr.count = 33;
        o = alloc1(s2, "node-a", &c, false);
        ASSERT_CONTAINS(o.why, "needs at least 33 devices, more than the 32 a claim may hold");
}

TEST(binding_condition_pools_last_and_node_selectors) {
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s = snap();
        dp_alloc_ns_req zone = {.key = "zone", .op = DP_ALLOC_NS_IN, .values = (const char *[]){"z1"}, .n_values = 1};
        dp_alloc_ns_term term = {.exprs = &zone, .n_exprs = 1};
        dp_alloc_node_selector ns = {&term, 1};
        dp_alloc_label l = {"zone", "z1"};
        ASSERT_OK(dp_alloc_add_node(s, "node-a", &l, 1));
        ASSERT_OK(dp_alloc_add_node(s, "node-b", NULL, 0));
        dp_alloc_slice_spec a = {.name = "a", .driver = "aaa.com", .pool = "fabric", .generation = 1, .slice_count = 1,
                                 .node_selector = &ns};
        dp_alloc_slice_spec b = {.name = "b", .driver = "bbb.com", .pool = "x", .generation = 1, .slice_count = 1,
                                 .all_nodes = true};
        uint32_t sa, sb;
        ASSERT_OK(dp_alloc_add_slice(s, &a, &sa));
        static const char *bc[] = {"attached"};
        memset(store, 0, 2 * sizeof(tdev));
        snprintf(store[0].name, 64, "net-0");
        snprintf(store[1].name, 64, "any-0");
        dp_alloc_device_spec d0 = {.name = "net-0", .binding_conditions = bc, .n_binding_conditions = 1,
                                   .user = &store[0]};
        ASSERT_OK(dp_alloc_add_device(s, sa, &d0, NULL));
        ASSERT_OK(dp_alloc_add_slice(s, &b, &sb));
        dp_alloc_device_spec d1 = {.name = "any-0", .user = &store[1]};
        ASSERT_OK(dp_alloc_add_device(s, sb, &d1, NULL));
        uint32_t sel;
        ASSERT_OK(dp_alloc_add_selector(s, &any, &sel));
        dp_alloc_subrequest sr = {.class_selectors = &sel, .n_class_selectors = 1, .count = 1};
        dp_alloc_request rq = {.name = "r", .subs = &sr, .n_subs = 1};
        CLAIM(c, &rq, 1, NULL, 0);
        run o = alloc1(s, "node-a", &c, false);
        ASSERT_STREQ(o.out, "r=bbb.com/x/any-0\n"); /* all nodes: no selector */
        sr.count = 2;
        o = alloc1(s, "node-a", &c, false);
        ASSERT_STREQ(o.out, "r=bbb.com/x/any-0\nr=aaa.com/fabric/net-0\nterm=1/0\n");
        o = alloc1(s, "node-b", &c, false);
        ASSERT_EQ(o.r, 0);
}

TEST(selector_runtime_error_decides_when_reached) {
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s = snap();
        ASSERT_OK(add_simple_pool(s, store, "node-a", "gpu-", 2, NULL, NULL, 0));
        static tsel boom = {"!error", "model"};
        uint32_t sel;
        ASSERT_OK(dp_alloc_add_selector(s, &boom, &sel));
        dp_alloc_subrequest sr = {.selectors = &sel, .n_selectors = 1, .count = 1};
        dp_alloc_request rq = {.name = "r", .subs = &sr, .n_subs = 1};
        CLAIM(c, &rq, 1, NULL, 0);
        run o = alloc1(s, "node-a", &c, false);
        ASSERT_EQ(o.r, -EINVAL);
        ASSERT_CONTAINS(o.why, "no such key: model");
}

TEST(determinism_100_runs) {
        char first[8192] = "";
        for (int run_i = 0; run_i < 100; run_i++) {
                _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s = snap();
                const char *parents[] = {"p0", "p1", "p2"};
                ASSERT_OK(add_simple_pool(s, store, "node-b", "gpu-", 9, "parent", parents, 3));
                ASSERT_OK(add_simple_pool(s, store + 9, "node-a", "gpu-", 9, "parent", parents, 3));
                uint32_t sel;
                ASSERT_OK(dp_alloc_add_selector(s, &any, &sel));
                dp_alloc_subrequest sr = {.class_selectors = &sel, .n_class_selectors = 1, .count = 2};
                dp_alloc_request rq = {.name = "r", .subs = &sr, .n_subs = 1};
                dp_alloc_constraint ct = {.match_attribute = "example.com/parent"};
                _cleanup_strbuf_ dp_strbuf all = DP_STRBUF_INIT;
                for (int i = 0; i < 10; i++) {
                        CLAIM(c, &rq, 1, &ct, 1);
                        for (size_t n = 0; n < dp_alloc_node_count(s); n++) {
                                run o = alloc1(s, dp_alloc_node_name(s, n), &c, true);
                                if (o.r == 1) {
                                        dp_strbuf_puts(&all, o.out);
                                        break;
                                }
                        }
                }
                if (run_i == 0) snprintf(first, sizeof(first), "%s", dp_strbuf_str(&all));
                else ASSERT_STREQ(dp_strbuf_str(&all), first);
        }
        ASSERT_CONTAINS(first, "r=example.com/node-a/gpu-0\nr=example.com/node-a/gpu-3\n");
}

TEST(first_fit_walks_nodes_in_name_order) {
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s = snap();
        ASSERT_OK(add_simple_pool(s, store, "node-b", "gpu-", 1, NULL, NULL, 0));
        ASSERT_OK(add_simple_pool(s, store + 1, "node-a", "gpu-", 1, NULL, NULL, 0));
        uint32_t sel;
        ASSERT_OK(dp_alloc_add_selector(s, &any, &sel));
        dp_alloc_subrequest sr = {.class_selectors = &sel, .n_class_selectors = 1, .count = 1};
        dp_alloc_request rq = {.name = "r", .subs = &sr, .n_subs = 1};
        const char *expect[] = {"node-a", "node-b"};
        for (int i = 0; i < 3; i++) {
                CLAIM(c, &rq, 1, NULL, 0);
                const dp_alloc_claim *cp = &c;
                dp_alloc_result *res = NULL;
                size_t node = 99;
                _cleanup_strbuf_ dp_strbuf why = DP_STRBUF_INIT;
                int r = dp_alloc_allocate_first_fit(s, &cp, 1, NULL, &node, &res, &why, NULL);
                if (i < 2) {
                        ASSERT_EQ(r, 1);
                        ASSERT_STREQ(dp_alloc_node_name(s, node), expect[i]);
                        ASSERT_OK(dp_alloc_commit(s, &c, &res[0]));
                        dp_alloc_results_free(res, 1);
                } else {
                        ASSERT_EQ(r, 0);
                        ASSERT_CONTAINS(dp_strbuf_str(&why), "node-a: request r: needs 1 device, 0 of 1 usable: 1 in use by claim default/c\n");
                        ASSERT_CONTAINS(dp_strbuf_str(&why), "node-b: request r:");
                }
        }
}

TEST(invalid_pools_are_skipped_and_named) {
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s = snap();
        ASSERT_OK(add_simple_pool(s, store, "node-a", "gpu-", 2, NULL, NULL, 0));
        dp_alloc_slice_spec bad = {.name = "dup", .driver = "other.com", .pool = "p", .generation = 1, .slice_count = 1,
                                   .node_name = "node-a"};
        uint32_t sl;
        ASSERT_OK(dp_alloc_add_slice(s, &bad, &sl));
        memset(&store[10], 0, 2 * sizeof(tdev));
        dp_alloc_counter use = {"mem", QN(1)};
        dp_alloc_consumption c = {"nope", &use, 1, NULL, 0};
        dp_alloc_device_spec d1 = {.name = "x", .user = &store[10]}, d2 = {.name = "y", .consumes = &c, .n_consumes = 1,
                                                                           .user = &store[11]};
        ASSERT_OK(dp_alloc_add_device(s, sl, &d1, NULL));
        ASSERT_OK(dp_alloc_add_device(s, sl, &d1, NULL));
        ASSERT_OK(dp_alloc_add_device(s, sl, &d2, NULL));
        uint32_t sel;
        ASSERT_OK(dp_alloc_add_selector(s, &any, &sel));
        dp_alloc_subrequest sr = {.class_selectors = &sel, .n_class_selectors = 1, .count = 3};
        dp_alloc_request rq = {.name = "r", .subs = &sr, .n_subs = 1};
        CLAIM(c1, &rq, 1, NULL, 0);
        run o = alloc1(s, "node-a", &c1, false);
        ASSERT_EQ(o.r, 0);
        ASSERT_CONTAINS(o.why, "request r: needs 3 devices, 2 of 2 usable");
        ASSERT_CONTAINS(o.why, "pool other.com/p skipped: invalid: duplicate device name x");
        uint32_t dev;
        ASSERT_EQ(dp_alloc_find_device(s, "example.com", "node-a", "gpu-1", &dev), 0);
        ASSERT_EQ(dp_alloc_find_device(s, "example.com", "node-a", "gpu-9", &dev), -ENOENT);
}

TEST(counter_bound_and_effort_limit) {
        /* 10 devices of 1 unit each from a 9-unit counter: cut by counting */
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s = snap();
        dp_alloc_counter ctr = {"mem", QN(9)};
        dp_alloc_counter_set cs = {"set", &ctr, 1};
        dp_alloc_slice_spec sp = {.name = "s", .driver = "example.com", .pool = "p", .generation = 1, .slice_count = 1,
                                  .node_name = "node-a", .counter_sets = &cs, .n_counter_sets = 1};
        uint32_t sl;
        ASSERT_OK(dp_alloc_add_slice(s, &sp, &sl));
        for (int i = 0; i < 24; i++) {
                memset(&store[i], 0, sizeof(tdev));
                snprintf(store[i].name, 64, "d%d", i);
                dp_alloc_counter use = {"mem", QN(1)};
                dp_alloc_consumption c = {"set", &use, 1, NULL, 0};
                dp_alloc_device_spec d = {.name = store[i].name, .consumes = &c, .n_consumes = 1, .user = &store[i]};
                ASSERT_OK(dp_alloc_add_device(s, sl, &d, NULL));
        }
        uint32_t sel;
        ASSERT_OK(dp_alloc_add_selector(s, &any, &sel));
        dp_alloc_subrequest sr = {.class_selectors = &sel, .n_class_selectors = 1, .count = 10};
        dp_alloc_request rq = {.name = "r", .subs = &sr, .n_subs = 1};
        CLAIM(c1, &rq, 1, NULL, 0);
        run o = alloc1(s, "node-a", &c1, false);
        ASSERT_EQ(o.r, 0);
        ASSERT_TRUE(o.effort < 10);
        ASSERT_CONTAINS(o.why, "counter set set exhausted: counter mem leaves room for at most 9 of the 10 devices needed");
        sr.count = 9;
        ASSERT_EQ(alloc1(s, "node-a", &c1, false).r, 1);
        /* the step budget */
        const dp_alloc_claim *cp = &c1;
        dp_alloc_result *res = NULL;
        dp_error err = DP_ERROR_INIT;
        int r = dp_alloc_allocate(s, "node-a", &cp, 1, &(dp_alloc_options){.max_effort = 1}, &res, NULL, &err);
        ASSERT_EQ(r, -ETIME);
        ASSERT_CONTAINS(err.msg, "gave up after 1 steps");
}

TEST(groups_backtrack_out_of_incompatible_choice) {
        /* request a takes any partition, request b only a vGPU: first-fit puts
         * mig-0 under a, b then meets incompatible groups, and the search
         * backtracks to give a the other vGPU */
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s = snap();
        static const char *groups[] = {"mig", "vgpu", "vgpu"};
        partition_pool(s, 3, GI(2), GI(8), groups);
        for (int i = 1; i < 3; i++) {
                snprintf(store[i].keys[0], 64, "kind");
                snprintf(store[i].vals[0], 64, "vgpu");
                store[i].n = 1;
        }
        static tsel vg = {"kind", "vgpu"};
        uint32_t sa, sv;
        ASSERT_OK(dp_alloc_add_selector(s, &any, &sa));
        ASSERT_OK(dp_alloc_add_selector(s, &vg, &sv));
        dp_alloc_subrequest ra = {.class_selectors = &sa, .n_class_selectors = 1, .count = 1};
        dp_alloc_subrequest rb = {.selectors = &sv, .n_selectors = 1, .count = 1};
        dp_alloc_request rq[2] = {{.name = "a", .subs = &ra, .n_subs = 1}, {.name = "b", .subs = &rb, .n_subs = 1}};
        CLAIM(c, rq, 2, NULL, 0);
        run o = alloc1(s, "node-a", &c, false);
        ASSERT_EQ(o.r, 1);
        ASSERT_STREQ(o.out, "a=example.com/node-a/vgpu-1\nb=example.com/node-a/vgpu-2\nnode=node-a\n");
}

TEST(counters_charged_on_first_share_only) {
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s = snap();
        dp_alloc_counter ctr = {"mem", QN(10)};
        dp_alloc_counter_set cs = {"set", &ctr, 1};
        dp_alloc_slice_spec sp = {.name = "s", .driver = "example.com", .pool = "p", .generation = 1, .slice_count = 1,
                                  .node_name = "node-a", .counter_sets = &cs, .n_counter_sets = 1};
        uint32_t sl;
        ASSERT_OK(dp_alloc_add_slice(s, &sp, &sl));
        dp_alloc_capacity cap = {.name = "slots", .value = QN(4)};
        dp_alloc_counter use = {"mem", QN(6)};
        dp_alloc_consumption cc = {"set", &use, 1, NULL, 0};
        for (int i = 0; i < 2; i++) {
                memset(&store[i], 0, sizeof(tdev));
                snprintf(store[i].name, 64, "shared-%d", i);
                dp_alloc_device_spec d = {.name = store[i].name, .caps = &cap, .n_caps = 1, .consumes = &cc,
                                          .n_consumes = 1, .allow_multiple_allocations = true, .user = &store[i]};
                ASSERT_OK(dp_alloc_add_device(s, sl, &d, NULL));
        }
        uint32_t sel;
        ASSERT_OK(dp_alloc_add_selector(s, &any, &sel));
        dp_alloc_capacity_request one = {"slots", QN(1)};
        dp_alloc_subrequest sr = {.class_selectors = &sel, .n_class_selectors = 1, .count = 1, .capacity = &one,
                                  .n_capacity = 1};
        dp_alloc_request rq = {.name = "r", .subs = &sr, .n_subs = 1};
        /* four shares of shared-0 cost the counter 6 once; shared-1 (6 more) never fits */
        for (int i = 0; i < 4; i++) {
                CLAIM(c, &rq, 1, NULL, 0);
                run o = alloc1(s, "node-a", &c, true);
                ASSERT_EQ(o.r, 1);
                ASSERT_CONTAINS(o.out, "r=example.com/p/shared-0 share=");
        }
        CLAIM(c5, &rq, 1, NULL, 0);
        run o = alloc1(s, "node-a", &c5, false);
        ASSERT_EQ(o.r, 0);
        ASSERT_CONTAINS(o.why, "device shared-1: counter set set exhausted (counter mem: 10, 6 taken by other claims)");
}

TEST(release_gives_devices_back) {
        /* scenario 10: two 6Gi partitions over 8Gi; freeing the first lets the second in */
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s = snap();
        partition_pool(s, 2, GI(6), GI(8), NULL);
        uint32_t sel;
        ASSERT_OK(dp_alloc_add_selector(s, &any, &sel));
        dp_alloc_subrequest sr = {.class_selectors = &sel, .n_class_selectors = 1, .count = 1};
        dp_alloc_request rq = {.name = "r", .subs = &sr, .n_subs = 1};
        CLAIM(c1, &rq, 1, NULL, 0);
        const dp_alloc_claim *cp = &c1;
        dp_alloc_result *res = NULL;
        size_t node;
        ASSERT_EQ(dp_alloc_allocate_first_fit(s, &cp, 1, NULL, &node, &res, NULL, NULL), 1);
        ASSERT_OK(dp_alloc_commit(s, &c1, &res[0]));
        CLAIM(c2, &rq, 1, NULL, 0);
        run o = alloc1(s, "node-a", &c2, false);
        ASSERT_EQ(o.r, 0);
        dp_alloc_result *none = NULL;
        const dp_alloc_claim *cp2 = &c2;
        ASSERT_EQ(dp_alloc_allocate_first_fit(s, &cp2, 1, &(dp_alloc_options){0}, &node, &none, NULL, NULL), 0);
        ASSERT_OK(dp_alloc_uncommit(s, &res[0]));
        ASSERT_EQ(dp_alloc_uncommit(s, &res[0]), -EINVAL); /* not taken any more */
        dp_alloc_results_free(res, 1);
        ASSERT_EQ(dp_alloc_allocate_first_fit(s, &cp2, 1, NULL, &node, &none, NULL, NULL), 1);
        ASSERT_STREQ(none[0].devices[0].device_name, "part-0");
        dp_alloc_results_free(none, 1);
}

TEST(groups_no_compatible_set_ends_fast) {
        /* 16 MIG partitions and one vGPU on one GPU, memory for all: 8 MIG +
         * the vGPU can never share it. Group-blocked devices are counted out
         * at once (they stay blocked deeper in the branch), so the search does
         * not walk the C(16,8) = 12870 MIG sets. */
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s = snap();
        static const char *groups[17];
        for (int i = 0; i < 16; i++) groups[i] = "mig";
        groups[16] = "vgpu";
        partition_pool(s, 17, GI(1), GI(80), groups);
        snprintf(store[16].keys[0], 64, "kind");
        snprintf(store[16].vals[0], 64, "vgpu");
        store[16].n = 1;
        for (int i = 0; i < 16; i++) {
                snprintf(store[i].keys[0], 64, "kind");
                snprintf(store[i].vals[0], 64, "mig");
                store[i].n = 1;
        }
        static tsel mg = {"kind", "mig"}, vg = {"kind", "vgpu"};
        uint32_t sm, sv;
        ASSERT_OK(dp_alloc_add_selector(s, &mg, &sm));
        ASSERT_OK(dp_alloc_add_selector(s, &vg, &sv));
        dp_alloc_subrequest rm = {.selectors = &sm, .n_selectors = 1, .count = 8};
        dp_alloc_subrequest rv = {.selectors = &sv, .n_selectors = 1, .count = 1};
        dp_alloc_request rq[2] = {{.name = "m", .subs = &rm, .n_subs = 1}, {.name = "v", .subs = &rv, .n_subs = 1}};
        CLAIM(c, rq, 2, NULL, 0);
        run o = alloc1(s, "node-a", &c, false);
        ASSERT_EQ(o.r, 0);
        ASSERT_TRUE(o.effort < 100);
        ASSERT_CONTAINS(o.why, "mig-0 is picked for this claim on counter set gpu-0-memory with groups [mig]; vgpu-16 has "
                               "[vgpu] (incompatible compatibility groups)");
        /* the vGPU first: the MIG request is cut as soon as the vGPU is placed */
        dp_alloc_request rq2[2] = {{.name = "v", .subs = &rv, .n_subs = 1}, {.name = "m", .subs = &rm, .n_subs = 1}};
        CLAIM(c2, rq2, 2, NULL, 0);
        o = alloc1(s, "node-a", &c2, false);
        ASSERT_EQ(o.r, 0);
        ASSERT_TRUE(o.effort < 10);
        ASSERT_CONTAINS(o.why, "vgpu-16 is picked for this claim on counter set gpu-0-memory with groups [vgpu]; mig-0 has "
                               "[mig] (incompatible compatibility groups)");
}

TEST(groups_gate_off_makes_pools_incomplete) {
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s = snap();
        ASSERT_OK(dp_alloc_set_compat_groups(s, false));
        static const char *groups[] = {"mig", "vgpu"};
        partition_pool(s, 2, GI(2), GI(8), groups);
        uint32_t sel;
        ASSERT_OK(dp_alloc_add_selector(s, &any, &sel));
        dp_alloc_subrequest sr = {.class_selectors = &sel, .n_class_selectors = 1, .count = 1};
        dp_alloc_request rq = {.name = "r", .subs = &sr, .n_subs = 1};
        CLAIM(c1, &rq, 1, NULL, 0);
        run o = alloc1(s, "node-a", &c1, false);
        ASSERT_EQ(o.r, 0);
        ASSERT_CONTAINS(o.why, "pool example.com/node-a skipped: incomplete (its devices carry compatibilityGroups and the "
                               "DRADeviceCompatibilityGroups feature is off)");
        /* frozen now: the gate cannot change any more */
        ASSERT_EQ(dp_alloc_set_compat_groups(s, true), -EBUSY);
        /* the same pool without groups is used with the gate off */
        _cleanup_(dp_alloc_snapshot_freep) dp_alloc_snapshot *s2 = snap();
        ASSERT_OK(dp_alloc_set_compat_groups(s2, false));
        partition_pool(s2, 2, GI(2), GI(8), NULL);
        ASSERT_OK(dp_alloc_add_selector(s2, &any, &sel));
        o = alloc1(s2, "node-a", &c1, false);
        ASSERT_EQ(o.r, 1);
        ASSERT_STREQ(o.out, "r=example.com/node-a/part-0\nnode=node-a\n");
}
