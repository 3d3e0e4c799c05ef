/* SPDX-License-Identifier: Apache-2.0
 *
 * test-partial.c — Kueue's pod-set reducer (queue/partial.c
 * q_podset_reduce), case by case from Kueue's own table
 * (KQ:pkg/scheduler/flavorassigner/podset_reducer_test.go TestSearch, the
 * release whose reducer cuts every pod set in proportion): the pod sets'
 * counts and minimums, a limit on the total the fits function accepts, and
 * the total found (or none).
 */
#include "harness.h"
#include "queue/queue-internal.h"

static int under_limit(const int32_t *counts, void *userdata, bool *ret_ok) {
        const int64_t *x = userdata; /* x[0] the limit, x[1] the number of pod sets */
        int64_t total = 0;
        for (int64_t i = 0; i < x[1]; i++)
                total += counts[i];
        *ret_ok = total <= x[0];
        return 0;
}

/* full/min per pod set (min -1: none); the total found, -1 for none */
static int64_t search(const int32_t *full, const int32_t *min_or_none, size_t n, int64_t limit) {
        int32_t min[16] = {0}, got[16] = {0};
        for (size_t i = 0; i < n; i++)
                min[i] = min_or_none[i] < 0 ? full[i] : min_or_none[i];
        int64_t x[2] = {limit, (int64_t)n};
        int r = q_podset_reduce(full, min, n, under_limit, x, got);
        ASSERT_TRUE(r >= 0);
        if (!r) return -1;
        int64_t total = 0;
        for (size_t i = 0; i < n; i++)
                total += got[i];
        return total;
}

TEST(empty) { ASSERT_EQ(search(NULL, NULL, 0, 10), -1); }

TEST(partial_not_available) {
        static const int32_t full[] = {1, 2}, min[] = {-1, 2};
        ASSERT_EQ(search(full, min, 2, 2), -1);
}

TEST(partial_available) {
        static const int32_t full[] = {5, 5, 5, 5}, min[] = {3, 4, 1, 2};
        ASSERT_EQ(search(full, min, 4, 15), 15);
}

TEST(one_partial_available) {
        static const int32_t full[] = {5, 5, 5, 5}, min[] = {3, -1, -1, -1};
        ASSERT_EQ(search(full, min, 4, 19), 19);
}

TEST(to_min) {
        static const int32_t full[] = {5, 5, 5, 5}, min[] = {3, 4, 1, 2};
        ASSERT_EQ(search(full, min, 4, 10), 10);
}

TEST(to_max) {
        static const int32_t full[] = {5, 5, 5, 5}, min[] = {3, 4, 1, 2};
        ASSERT_EQ(search(full, min, 4, 20), 20);
}

TEST(no_overflow) {
        static const int32_t full[] = {150000, 150000, 150000, 150000, 150000, 150000, 150000, 150000};
        static const int32_t min[] = {1, 1, 1, 1, 1, 1, 1, 1};
        ASSERT_EQ(search(full, min, 8, 150000), 150000);
}

TEST(max_pods_on_1_27) {
        static const int32_t full[] = {150000, 1, 1, 1, 1, 1, 1, 1}, min[] = {1, -1, -1, -1, -1, -1, -1, -1};
        ASSERT_EQ(search(full, min, 8, 150000), 150000);
}

TEST(podset_with_replica_count_0) {
        static const int32_t full[] = {0}, min[] = {0};
        ASSERT_EQ(search(full, min, 1, 0), -1);
}

/* Not Kueue's table: counts near INT32_MAX, where step × delta passes
 * int64; the four are cut alike, so at most 1 each fits 7. */
TEST(huge_counts_no_overflow) {
        static const int32_t full[] = {INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX};
        static const int32_t min[] = {0, 0, 0, 0};
        ASSERT_EQ(search(full, min, 4, 7), 4);
}
