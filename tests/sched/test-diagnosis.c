/* SPDX-License-Identifier: Apache-2.0
 * test-diagnosis.c — verdict codes, their histogram and the message made
 * from it (sched/diagnosis.c). */
#include "sched-test-util.h"

/* Reasons in text order with their counts, as kube-scheduler writes them;
 * one line per (code, argument), however many nodes. */
TEST(message_grouped_in_text_order) {
        dp_diag_strings t = {0};
        dp_diag_hist h = {0};
        int64_t gpu = dp_diag_intern(&t, "nvidia.com/gpu"), taint = dp_diag_intern(&t, "{dedicated: x}");
        ASSERT_TRUE(gpu > 0 && taint > 0 && gpu != taint);
        ASSERT_EQ(dp_diag_intern(&t, "nvidia.com/gpu"), gpu);
        ASSERT_EQ(dp_diag_intern(&t, ""), 0);
        ASSERT_EQ(dp_diag_intern(&t, NULL), 0);
        for (int i = 0; i < 320; i++)
                ASSERT_OK(dp_diag_hist_add(&h, DP_VERDICT_INSUFFICIENT, (uint32_t)gpu));
        for (int i = 0; i < 170; i++)
                ASSERT_OK(dp_diag_hist_add(&h, DP_VERDICT_DRA, 0));
        for (int i = 0; i < 10; i++)
                ASSERT_OK(dp_diag_hist_add(&h, DP_VERDICT_TAINT, (uint32_t)taint));
        ASSERT_EQ(h.n, 3);
        char *m = dp_diag_message(&h, &t, 500);
        /* kube-scheduler 1.35's words, "count words" sorted as strings (FitError.Error) */
        ASSERT_STREQ(m, "0/500 nodes are available: 10 node(s) had untolerated taint(s), 170 cannot allocate all claims, "
                        "320 Insufficient nvidia.com/gpu.");
        free(m);
        dp_diag_hist_clear(&h);
        m = dp_diag_message(&h, &t, 0);
        ASSERT_STREQ(m, "0/0 nodes are available.");
        free(m);
        ASSERT_STREQ(dp_diag_string(&t, (uint32_t)gpu), "nvidia.com/gpu");
        ASSERT_STREQ(dp_diag_string(&t, 999), "");
        dp_diag_strings_done(&t);
}

TEST(verdict_texts) {
        char b[256];
        dp_verdict_text(DP_VERDICT_NODE_UNSCHEDULABLE, "", b, sizeof(b));
        ASSERT_STREQ(b, "node(s) were unschedulable");
        dp_verdict_text(DP_VERDICT_AFFINITY, "", b, sizeof(b));
        ASSERT_STREQ(b, "node(s) didn't match Pod's node affinity/selector");
        dp_verdict_text(DP_VERDICT_INSUFFICIENT_CPU, "", b, sizeof(b));
        ASSERT_STREQ(b, "Insufficient cpu");
        dp_verdict_text(DP_VERDICT_INSUFFICIENT_MEMORY, "", b, sizeof(b));
        ASSERT_STREQ(b, "Insufficient memory");
        dp_verdict_text(DP_VERDICT_CLAIM_UNREACHABLE, "c1", b, sizeof(b));
        ASSERT_STREQ(b, "resourceclaim c1 is allocated to devices another node cannot reach");
}
