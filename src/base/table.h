/* SPDX-License-Identifier: Apache-2.0
 *
 * table.h — text tables as kubectl prints them: every column as wide as its
 * widest cell (the header included, width in UTF-8 characters), columns two
 * spaces apart, nothing after a row's last non-empty cell. No fixed widths:
 * nothing is cut and no column is wider than what it holds.
 *
 *     dp_table t = DP_TABLE_INIT(3);
 *     dp_table_add(&t, "NODE"); dp_table_add(&t, "GPUS"); dp_table_add(&t, "STATE");
 *     dp_table_addf(&t, "%s", name); ...
 *     dp_table_print(&t, out);   (appends, then empties the table)
 *
 * Cells are copied; allocation failure is sticky (dp_table_failed) and makes
 * dp_table_print append nothing and mark `out` failed.
 */
#pragma once

#include "base/strbuf.h"

typedef struct dp_table {
        char **cells; /* row-major, cols per row */
        size_t cols, n, cap;
        bool oom;
} dp_table;

#define DP_TABLE_INIT(ncols) {NULL, (ncols), 0, 0, false}

/* The next cell (NULL: empty). */
void dp_table_add(dp_table *t, const char *cell);
void dp_table_addf(dp_table *t, const char *fmt, ...) _printf_(2, 3);
static inline bool dp_table_failed(const dp_table *t) { return t->oom; }
/* Append the table to out (a short last row is completed with empty cells)
 * and empty it; the column count stays. */
void dp_table_print(dp_table *t, dp_strbuf *out);
void dp_table_done(dp_table *t);

static inline void dp_table_donep(dp_table *t) { dp_table_done(t); }
#define _cleanup_table_ _cleanup_(dp_table_donep)
