/* SPDX-License-Identifier: Apache-2.0
 * base/alloc.c: dp_grow (capacity doubles), dp_extend (exactly the count
 * asked, new elements zeroed), dp_remove_at. */
#include "base/macros.h"
#include "harness.h"

TEST(grow_doubles_and_zeroes) {
        int *v = NULL;
        size_t cap = 0;
        ASSERT_OK(DP_GROW(v, cap, 3));
        ASSERT_EQ(cap, 4);
        ASSERT_OK(DP_GROW(v, cap, 5));
        ASSERT_EQ(cap, 8);
        for (size_t i = 0; i < cap; i++)
                ASSERT_EQ(v[i], 0);
        free(v);
}

TEST(extend_exact) {
        long *v = NULL;
        size_t n = 0;
        ASSERT_OK(DP_EXTEND(v, n, 3));
        ASSERT_EQ(n, 3);
        v[0] = v[1] = v[2] = 7;
        ASSERT_OK(DP_EXTEND(v, n, 5));
        ASSERT_EQ(n, 5);
        ASSERT_EQ(v[2], 7);
        ASSERT_EQ(v[3], 0);
        ASSERT_EQ(v[4], 0);
        ASSERT_OK(DP_EXTEND(v, n, 2)); /* never shrinks */
        ASSERT_EQ(n, 5);
        ASSERT_TRUE(DP_EXTEND(v, n, SIZE_MAX / 2) == -ENOMEM); /* bytes overflow: untouched */
        ASSERT_EQ(n, 5);
        ASSERT_EQ(v[2], 7);
        free(v);
}

TEST(remove_at_keeps_order) {
        int v[] = {1, 2, 3, 4};
        size_t n = 4;
        DP_REMOVE_AT(v, n, 1);
        ASSERT_EQ(n, 3);
        ASSERT_EQ(v[0], 1);
        ASSERT_EQ(v[1], 3);
        ASSERT_EQ(v[2], 4);
}
