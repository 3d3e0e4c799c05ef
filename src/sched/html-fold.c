/* SPDX-License-Identifier: Apache-2.0
 * html-fold.c — the node cards of a large fleet, folded: nodes alike (the
 * same pool, model, product or profile and devices, every accelerator idle,
 * or every one held by the same workloads, or none at all) are drawn once,
 * as the card of the first of them, which lists the others by name under
 * "+N more nodes like this one" (html-internal.h, docs/report.md). At 1,000
 * nodes most cards are such repeats: folded, the page is a few screens of
 * the nodes that differ instead of 235,000 px. */
#include <stdio.h>

#include "sched/html-internal.h"

typedef struct fold_ref {
        const char *key;
        size_t idx;
} fold_ref;

static int cmp_fold_ref(const void *a, const void *b) {
        const fold_ref *x = a, *y = b;
        int c = strcmp(x->key, y->key);
        return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

int dp_html_fold(char *const *keys, size_t n, size_t **ret_fold) {
        _cleanup_free_ size_t *fold = calloc(n + 1, sizeof(size_t));
        _cleanup_free_ fold_ref *v = calloc(n + 1, sizeof(fold_ref));
        if (!fold || !v) return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                fold[i] = i;
                v[i] = (fold_ref){keys[i] ? keys[i] : "", i};
        }
        if (n >= DP_HTML_FOLD_MIN_NODES) {
                qsort(v, n, sizeof(*v), cmp_fold_ref);
                for (size_t i = 1; i < n; i++)
                        if (v[i].key[0] && streq(v[i].key, v[i - 1].key)) fold[v[i].idx] = fold[v[i - 1].idx];
        }
        *ret_fold = TAKE_PTR(fold);
        return 0;
}

void dp_html_fold_list(dp_strbuf *o, const dp_doc_node *nodes, const size_t *fold, size_t n, size_t rep) {
        size_t more = 0;
        for (size_t i = rep + 1; i < n; i++)
                more += fold[i] == rep;
        if (!more) return;
        const dp_doc_node *node = nodes->items[rep];
        size_t devices = strtoull(dp_html_str(node, "devices"), NULL, 10);
        size_t used = strtoull(dp_html_str(node, "inUse"), NULL, 10);
        dp_strbuf_printf(o, "<details class=\"like\"><summary>+%zu more node%s like this one: ", more,
                         more == 1 ? "" : "s");
        if (!devices)
                dp_strbuf_puts(o, "no accelerator");
        else if (!used)
                dp_strbuf_printf(o, "all %zu accelerators idle", devices);
        else
                dp_strbuf_printf(o, "all %zu accelerators in use by the same workloads", devices);
        dp_strbuf_puts(o, "</summary><div class=\"likes\">");
        for (size_t i = rep + 1; i < n; i++) {
                if (fold[i] != rep) continue;
                const char *name = dp_html_str(nodes->items[i], "name");
                dp_strbuf_printf(o, "<span class=\"like-n f\" id=\"n-%zu\" data-node=\"", i);
                dp_html_esc(o, name);
                dp_strbuf_puts(o, "\">");
                dp_html_esc(o, name);
                dp_strbuf_puts(o, "</span> ");
        }
        dp_strbuf_puts(o, "</div></details>");
}
