/* SPDX-License-Identifier: Apache-2.0
 * html-overview.c — the report page's first screen at any size: per pool,
 * its nodes and accelerators in use, and a square per node shaded by how
 * many of its accelerators are held (html-internal.h, docs/report.md). */
#include <stdio.h>

#include "sched/fmt.h"
#include "sched/html-internal.h"

/* Pools listed one by one; the nodes of any further pool share one row. */
#define POOLS_MAX 40
/* Squares per row of a pool's picture, their size and gap in px. */
#define SQ_COLS 84
#define SQ 8
#define SQ_GAP 2

typedef struct pool {
        const char *name;
        const char *model; /* its first node's */
        bool mixed;        /* nodes of more than one model */
        size_t nodes, healthy, used, unhealthy;
        size_t *idx; /* its nodes' indexes */
} pool;

static size_t uint_of(const dp_doc_node *n, const char *key) { return strtoull(dp_html_str(n, key), NULL, 10); }

/* What pools a node without a "pool": its model. */
static const char *model_pool(const char *model) {
        if (!strcmp(model, "v1")) return "device-plugin nodes";
        if (!strcmp(model, "v2")) return "DRA nodes";
        if (!strcmp(model, "cpu")) return "CPU nodes";
        return "V1+V2 nodes";
}

/* The shade of a node: hx no accelerator, h0 idle, h1..h3 up to a third,
 * two thirds, not all, h4 every healthy accelerator held. */
static const char *shade(size_t healthy, size_t devices, size_t used) {
        if (!devices) return "hx";
        if (!used) return "h0";
        if (used >= healthy) return "h4";
        return used * 3 <= healthy ? "h1" : used * 3 <= healthy * 2 ? "h2" : "h3";
}

/* The node's pool, made when new; NULL on -ENOMEM. */
static pool *pool_of(pool *pools, size_t *n_pools, const dp_doc_node *node, size_t n_nodes) {
        const char *model = dp_html_str(node, "model"), *name = dp_html_str(node, "pool");
        if (!name[0]) name = model_pool(model);
        size_t k = 0;
        while (k < *n_pools && strcmp(pools[k].name, name) && k + 1 < POOLS_MAX)
                k++;
        if (k == *n_pools) {
                pools[k] = (pool){.name = k + 1 < POOLS_MAX ? name : "other pools", .model = model};
                if (!(pools[k].idx = calloc(n_nodes + 1, sizeof(size_t)))) return NULL;
                (*n_pools)++;
        }
        pools[k].mixed |= strcmp(pools[k].model, model) != 0;
        return &pools[k];
}

static void pool_row(dp_strbuf *o, const pool *p, const dp_doc_node *nodes, size_t linked) {
        const char *btext, *bcls = dp_html_model_badge(p->model, &btext);
        size_t pct10 = p->healthy ? p->used * 1000 / p->healthy : 0;
        dp_strbuf_puts(o, "<tr class=\"f\"><td class=\"pn\"><span class=\"pname\" title=\"");
        dp_html_esc(o, p->name);
        dp_strbuf_puts(o, "\">");
        dp_html_esc(o, p->name);
        dp_strbuf_printf(o, "</span> <span class=\"badge %s\">%s</span></td><td>%zu</td><td>", p->mixed ? "both" : bcls,
                         p->mixed ? "mixed" : btext, p->nodes);
        if (p->healthy + p->unhealthy)
                dp_strbuf_printf(o, "<div class=\"ubar\"><i style=\"width:%zu%%\"></i></div>%zu/%zu · %zu.%zu%%%s",
                                 DP_MIN(pct10 / 10, (size_t)100), p->used, p->healthy, pct10 / 10, pct10 % 10,
                                 p->unhealthy ? " · " : "");
        else
                dp_strbuf_puts(o, "<span class=\"note\">no accelerator</span>");
        if (p->unhealthy) dp_strbuf_printf(o, "<span class=\"bad\">%zu unhealthy</span>", p->unhealthy);
        size_t cols = DP_MIN(p->nodes, (size_t)SQ_COLS), rows = (p->nodes + SQ_COLS - 1) / SQ_COLS;
        int w = (int)cols * (SQ + SQ_GAP), h = (int)rows * (SQ + SQ_GAP);
        dp_strbuf_printf(o,
                         "</td><td><svg xmlns=\"http://www.w3.org/2000/svg\" class=\"heat\" width=\"%d\" "
                         "height=\"%d\" viewBox=\"0 0 %d %d\">",
                         w, h, w, h);
        for (size_t k = 0; k < p->nodes; k++) {
                const dp_doc_node *n = nodes->items[p->idx[k]];
                size_t healthy = uint_of(n, "healthy"), devices = uint_of(n, "devices"), used = uint_of(n, "inUse");
                int x = (int)(k % SQ_COLS) * (SQ + SQ_GAP) + 1, y = (int)(k / SQ_COLS) * (SQ + SQ_GAP) + 1;
                if (p->idx[k] < linked) dp_strbuf_printf(o, "<a href=\"#n-%zu\">", p->idx[k]);
                dp_strbuf_printf(o, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"%s%s\" data-node=\"", x,
                                 y, SQ, SQ, shade(healthy, devices, used), devices > healthy ? " bad" : "");
                dp_html_esc(o, dp_html_str(n, "name"));
                dp_strbuf_printf(o, "\" data-use=\"%zu/%zu\"><title>", used, healthy);
                dp_html_esc(o, dp_html_str(n, "name"));
                if (devices)
                        dp_strbuf_printf(o, ": %zu of %zu healthy accelerators in use%s", used, healthy,
                                         devices > healthy ? " (some unhealthy)" : "");
                else
                        dp_strbuf_puts(o, ": no accelerator");
                dp_strbuf_puts(o, p->idx[k] < linked ? "</title></rect></a>" : "</title></rect>");
        }
        dp_strbuf_puts(o, "</svg></td></tr>\n");
}

int dp_html_overview(dp_strbuf *o, const dp_doc_node *nodes, size_t linked) {
        size_t n = nodes ? nodes->n : 0, n_pools = 0;
        if (!n) return 0;
        _cleanup_free_ pool *pools = calloc(POOLS_MAX, sizeof(pool));
        if (!pools) return -ENOMEM;
        int r = 0;
        for (size_t i = 0; i < n && r >= 0; i++) {
                const dp_doc_node *node = nodes->items[i];
                pool *p = pool_of(pools, &n_pools, node, n);
                if (!p) {
                        r = -ENOMEM;
                        break;
                }
                size_t devices = uint_of(node, "devices"), healthy = uint_of(node, "healthy");
                p->idx[p->nodes++] = i;
                p->healthy += healthy;
                p->used += DP_MIN(uint_of(node, "inUse"), healthy);
                p->unhealthy += devices > healthy ? devices - healthy : 0;
        }
        if (r >= 0) {
                dp_strbuf_puts(o, "<section class=\"overview\" id=\"overview\"><h2>Overview: accelerators in use, by "
                                  "pool</h2><div class=\"clegend\">One square per node: <span><i class=\"sw hx\"></i>"
                                  "no accelerator</span><span><i class=\"sw h0\"></i>idle</span><span><i class=\"sw "
                                  "h1\"></i>up to a third in use</span><span><i class=\"sw h2\"></i>up to two "
                                  "thirds</span><span><i class=\"sw h3\"></i>more</span><span><i class=\"sw h4\"></i>"
                                  "all in use</span><span><i class=\"sw bad\"></i>an unhealthy accelerator</span>"
                                  "<span>(click a square for its node)</span></div>\n<table class=\"ov\"><tr>"
                                  "<th>pool</th><th>nodes</th><th>accelerators in use</th><th>its nodes</th></tr>\n");
                for (size_t k = 0; k < n_pools; k++)
                        pool_row(o, &pools[k], nodes, linked);
                dp_strbuf_puts(o, "</table></section>\n");
        }
        for (size_t k = 0; k < n_pools; k++)
                free(pools[k].idx);
        return r < 0 ? r : dp_strbuf_failed(o) ? -ENOMEM : 0;
}
