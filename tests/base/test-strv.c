/* SPDX-License-Identifier: Apache-2.0
 * base/strv.c: the one helper for arrays of owned strings. */
#include "base/strbuf.h"
#include "base/strv.h"
#include "harness.h"

TEST(copy_is_terminated_and_deep) {
        char *v[] = {(char *)"a", (char *)"bb", NULL};
        _cleanup_strv_free_ char **c = dp_strv_copy(v);
        ASSERT_TRUE(c != NULL);
        ASSERT_EQ(dp_strv_length(c), 2);
        ASSERT_STREQ(c[1], "bb");
        ASSERT_TRUE(c[1] != v[1]);
        ASSERT_TRUE(c[2] == NULL);
}

TEST(copy_n_takes_the_first_n) {
        char *v[] = {(char *)"a", (char *)"b", (char *)"c"};
        char **c = dp_strv_copy_n(v, 2);
        ASSERT_TRUE(c != NULL);
        ASSERT_EQ(dp_strv_length(c), 2);
        ASSERT_TRUE(dp_strv_free_n(c, 2) == NULL);
}

TEST(empty_and_null) {
        ASSERT_EQ(dp_strv_length(NULL), 0);
        char **c = dp_strv_copy(NULL); /* an empty array, never NULL on success */
        ASSERT_TRUE(c != NULL && c[0] == NULL);
        ASSERT_TRUE(dp_strv_free(c) == NULL);
        c = dp_strv_copy_n(NULL, 0);
        ASSERT_TRUE(c != NULL && c[0] == NULL);
        dp_strv_free(c);
        ASSERT_TRUE(dp_strv_free(NULL) == NULL);
        ASSERT_TRUE(dp_strv_free_n(NULL, 3) == NULL);
}

TEST(free_n_skips_null_entries) {
        /* a counted array half filled when an allocation failed */
        char **v = calloc(4, sizeof *v);
        ASSERT_TRUE(v != NULL);
        v[0] = dp_strdup("x");
        v[2] = dp_strdup("z");
        dp_strv_free_n(v, 4); /* ASan: nothing leaks */
}
