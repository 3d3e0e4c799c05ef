/* SPDX-License-Identifier: Apache-2.0
 * table.c — text tables sized to their content (table.h). */
#include <stdio.h>

#include "base/table.h"

void dp_table_add(dp_table *t, const char *cell) {
        if (t->oom) return;
        char *c = dp_strdup(cell ? cell : "");
        if (!c || DP_GROW(t->cells, t->cap, t->n + 1) < 0) {
                free(c);
                t->oom = true;
                return;
        }
        t->cells[t->n++] = c;
}

void dp_table_addf(dp_table *t, const char *fmt, ...) {
        if (t->oom) return;
        _cleanup_strbuf_ dp_strbuf sb = DP_STRBUF_INIT;
        va_list ap;
        va_start(ap, fmt);
        dp_strbuf_vprintf(&sb, fmt, ap);
        va_end(ap);
        if (dp_strbuf_failed(&sb)) {
                t->oom = true;
                return;
        }
        dp_table_add(t, dp_strbuf_str(&sb));
}

void dp_table_done(dp_table *t) {
        for (size_t i = 0; i < t->n; i++)
                free(t->cells[i]);
        free(t->cells);
        *t = (dp_table){.cols = t->cols};
}

/* Characters, not bytes: UTF-8 continuation bytes do not count. */
static size_t width(const char *s) {
        size_t w = 0;
        for (; *s; s++)
                w += ((unsigned char)*s & 0xc0) != 0x80;
        return w;
}

void dp_table_print(dp_table *t, dp_strbuf *out) {
        size_t cols = t->cols ? t->cols : 1;
        if (t->oom) {
                out->oom = true;
                dp_table_done(t);
                return;
        }
        size_t *w = calloc(cols, sizeof(*w));
        if (!w) {
                out->oom = true;
                dp_table_done(t);
                return;
        }
        for (size_t i = 0; i < t->n; i++)
                w[i % cols] = DP_MAX(w[i % cols], width(t->cells[i]));
        for (size_t row = 0; row < t->n; row += cols) {
                size_t last = 0; /* one past the row's last non-empty cell */
                for (size_t c = 0; c < cols && row + c < t->n; c++)
                        if (t->cells[row + c][0]) last = c + 1;
                for (size_t c = 0; c < last; c++) {
                        const char *v = t->cells[row + c];
                        dp_strbuf_puts(out, v);
                        if (c + 1 < last)
                                for (size_t k = width(v); k < w[c] + 2; k++)
                                        dp_strbuf_putc(out, ' ');
                }
                dp_strbuf_putc(out, '\n');
        }
        free(w);
        dp_table_done(t);
}
