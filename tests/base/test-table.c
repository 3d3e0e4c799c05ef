/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>

#include "base/table.h"
#include "harness.h"

TEST(columns_sized_to_content) {
        dp_table t = DP_TABLE_INIT(3);
        dp_table_add(&t, "NAME");
        dp_table_add(&t, "STATE");
        dp_table_add(&t, "NOTE");
        dp_table_add(&t, "a-rather-long-name");
        dp_table_add(&t, "Ok");
        dp_table_add(&t, "x");
        dp_table_add(&t, "b");
        dp_table_addf(&t, "%s-%d", "Waiting", 2);
        dp_table_add(&t, NULL); /* empty last cell: nothing after STATE */
        dp_strbuf out = DP_STRBUF_INIT;
        dp_table_print(&t, &out);
        ASSERT_STREQ(dp_strbuf_str(&out), "NAME                STATE      NOTE\n"
                                          "a-rather-long-name  Ok         x\n"
                                          "b                   Waiting-2\n");
        ASSERT_EQ(t.n, 0);
        ASSERT_EQ(t.cols, 3);
        dp_strbuf_done(&out);
}

TEST(no_truncation_and_utf8_width) {
        char long_cell[400];
        memset(long_cell, 'd', sizeof long_cell - 1);
        long_cell[sizeof long_cell - 1] = 0;
        dp_table t = DP_TABLE_INIT(2);
        dp_table_add(&t, "K");
        dp_table_add(&t, "V");
        dp_table_add(&t, "gpu-0 \xc3\xa9"); /* 7 characters, 8 bytes */
        dp_table_add(&t, long_cell);
        dp_table_add(&t, "gpu-1");
        dp_table_add(&t, "v"); /* a short last row */
        dp_table_add(&t, "gpu-2");
        dp_strbuf out = DP_STRBUF_INIT;
        dp_table_print(&t, &out);
        char want[600];
        snprintf(want, sizeof want, "K        V\ngpu-0 \xc3\xa9  %s\ngpu-1    v\ngpu-2\n", long_cell);
        ASSERT_STREQ(dp_strbuf_str(&out), want);
        dp_strbuf_done(&out);
}
