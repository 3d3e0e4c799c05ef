/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>

#include "base/hashmap.h"
#include "base/strbuf.h"
#include "harness.h"

TEST(put_get_remove_iterate_in_order) {
        dp_hashmap *m = dp_hashmap_new();
        static char keys[1000][8];
        for (int i = 0; i < 1000; i++) {
                snprintf(keys[i], sizeof keys[i], "k%d", i);
                ASSERT_OK(dp_hashmap_put(m, keys[i], (void *)(intptr_t)(i + 1)));
        }
        ASSERT_EQ(dp_hashmap_put(m, "k5", NULL), -EEXIST);
        ASSERT_EQ((intptr_t)dp_hashmap_get(m, "k999"), 1000);
        ASSERT_EQ((intptr_t)dp_hashmap_remove(m, "k10"), 11);
        ASSERT_FALSE(dp_hashmap_contains(m, "k10"));
        ASSERT_EQ(dp_hashmap_size(m), 999);
        size_t it = 0, n = 0;
        const char *k;
        void *v;
        intptr_t last = 0;
        while (dp_hashmap_iter(m, &it, &k, &v)) {
                ASSERT_TRUE((intptr_t)v > last);
                last = (intptr_t)v;
                n++;
        }
        ASSERT_EQ(n, 999);
        ASSERT_OK(dp_hashmap_replace(m, "k1", (void *)7));
        ASSERT_EQ((intptr_t)dp_hashmap_get(m, "k1"), 7);
        dp_hashmap_free(m);
}

TEST(reserve_keeps_entries_and_order) {
        dp_hashmap *m = dp_hashmap_new();
        static char keys[300][8];
        for (int i = 0; i < 300; i++) snprintf(keys[i], sizeof keys[i], "r%d", i);
        for (int i = 0; i < 10; i++) ASSERT_OK(dp_hashmap_put(m, keys[i], (void *)(intptr_t)(i + 1)));
        ASSERT_EQ((intptr_t)dp_hashmap_remove(m, "r3"), 4);
        ASSERT_OK(dp_hashmap_reserve(m, 300));
        ASSERT_OK(dp_hashmap_reserve(m, 5)); /* smaller: nothing to do */
        for (int i = 10; i < 300; i++) ASSERT_OK(dp_hashmap_put(m, keys[i], (void *)(intptr_t)(i + 1)));
        ASSERT_EQ(dp_hashmap_size(m), 299);
        ASSERT_FALSE(dp_hashmap_contains(m, "r3"));
        for (int i = 0; i < 300; i++)
                if (i != 3) ASSERT_EQ((intptr_t)dp_hashmap_get(m, keys[i]), i + 1);
        size_t it = 0;
        const char *k;
        void *v;
        intptr_t last = 0;
        while (dp_hashmap_iter(m, &it, &k, &v)) {
                ASSERT_TRUE((intptr_t)v > last);
                last = (intptr_t)v;
        }
        dp_hashmap_free(m);
}

TEST(strbuf) {
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_strbuf_printf(&sb, "%d-%s", 42, "x");
        dp_strbuf_putc(&sb, '!');
        ASSERT_STREQ(dp_strbuf_str(&sb), "42-x!");
        dp_strbuf_truncate(&sb, 2);
        char *s = dp_strbuf_steal(&sb);
        ASSERT_STREQ(s, "42");
        free(s);
        ASSERT_EQ(sb.len, 0);
}
