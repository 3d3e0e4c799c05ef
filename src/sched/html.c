/* SPDX-License-Identifier: Apache-2.0
 * html.c — the simulation report as one self-contained HTML page (html.h),
 * drawn from dp_sim_report()'s document: inline CSS and SVG, no script. */
#include <inttypes.h>
#include <stdio.h>

#include "base/doc.h"
#include "sched/fmt.h"
#include "sched/html.h"

/* ---- reading the report document ---- */

static const char *str_of(const dp_doc_node *n, const char *key) {
        const dp_doc_node *x = n ? dp_doc_get(n, key) : NULL;
        return x && x->type == DP_DOC_SCALAR && x->str ? x->str : "";
}

static int64_t int_of(const dp_doc_node *n, const char *key) { return strtoll(str_of(n, key), NULL, 10); }

static const dp_doc_node *seq_of(const dp_doc_node *n, const char *key) {
        const dp_doc_node *x = n ? dp_doc_get(n, key) : NULL;
        return x && x->type == DP_DOC_SEQ ? x : NULL;
}

/* "24.0%" -> 240 (tenths of a percent) */
static int tenths(const char *pct) {
        char *end = NULL;
        long a = strtol(pct, &end, 10);
        long b = end && *end == '.' ? strtol(end + 1, NULL, 10) % 10 : 0;
        long v = a * 10 + b;
        return (int)(v < 0 ? 0 : v > 1000 ? 1000 : v);
}

/* ---- writing ---- */

/* Text and attribute values alike: & < > " ' escaped, other control
 * characters than newline and tab dropped. */
static void esc(dp_strbuf *o, const char *s) {
        for (; s && *s; s++) {
                unsigned char c = (unsigned char)*s;
                switch (c) {
                case '&': dp_strbuf_puts(o, "&amp;"); break;
                case '<': dp_strbuf_puts(o, "&lt;"); break;
                case '>': dp_strbuf_puts(o, "&gt;"); break;
                case '"': dp_strbuf_puts(o, "&quot;"); break;
                case '\'': dp_strbuf_puts(o, "&#39;"); break;
                default:
                        if (c >= 0x20 || c == '\n' || c == '\t') dp_strbuf_putc(o, (char)c);
                }
        }
}

/* ---- pod colours ---- */

typedef struct podref {
        const char *name;
        size_t idx;
        const dp_doc_node *pod;
} podref;

typedef struct page {
        dp_strbuf *o;
        const dp_doc_node *doc, *run;
        podref *by_name; /* sorted by name */
        size_t n_pods;
        const dp_doc_node *forced[2]; /* the runs with every node on V1 / V2 (NULL: not drawn) */
} page;

static int cmp_podref(const void *a, const void *b) {
        return strcmp(((const podref *)a)->name, ((const podref *)b)->name);
}

static const podref *find_pod(const page *pg, const char *name) {
        podref key = {.name = name};
        return bsearch(&key, pg->by_name, pg->n_pods, sizeof(podref), cmp_podref);
}

/* A colour per pod, by input order: hues a golden angle apart, three lightness steps. */
static void colour(char *buf, size_t size, size_t idx) {
        unsigned hue = (unsigned)((idx * 137 + 210) % 360);
        unsigned light = 42 + (unsigned)(idx % 3) * 9;
        dp_fmt(buf, size, "hsl(%u,62%%,%u%%)", hue, light);
}

/* The colour of a holder ("ns/pod", or "claim ns/name" without consumer). */
static void holder_colour(const page *pg, const char *holder, char *buf, size_t size) {
        const podref *p = find_pod(pg, holder);
        if (p)
                colour(buf, size, p->idx);
        else
                dp_fmt(buf, size, "#8a8f98");
}

static const char *state_class(const char *st) {
        if (startswith(st, "Running")) return "running";
        if (startswith(st, "Pending")) return "pending";
        if (startswith(st, "Waiting")) return "waiting";
        if (startswith(st, "Deleted") || startswith(st, "Evicted")) return "deleted";
        return "other";
}

/* ---- style ---- */

static const char CSS[] =
        ":root{--ink:#1d2330;--mute:#5b6475;--line:#d5dae3;--bg:#f6f7fa;--card:#fff;--bad:#c62828}"
        "*{box-sizing:border-box}"
        "body{margin:0;font:14px/1.45 'DejaVu Sans',system-ui,sans-serif;color:var(--ink);background:var(--bg)}"
        "header{background:#1f2a44;color:#fff;padding:18px 28px}"
        "header h1{margin:0;font-size:22px;font-weight:600}"
        "header p{margin:4px 0 0;color:#c9d2e6}"
        "main{padding:18px 28px;max-width:1400px}"
        "h2{font-size:17px;margin:26px 0 10px;border-bottom:2px solid var(--line);padding-bottom:4px}"
        ".cards{display:flex;flex-wrap:wrap;gap:10px}"
        ".stat{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:8px 14px;min-width:110px}"
        ".stat b{display:block;font-size:22px}.stat span{color:var(--mute);font-size:12px}"
        ".stat.bad b{color:var(--bad)}"
        ".legend{display:flex;flex-wrap:wrap;gap:6px 14px;background:var(--card);border:1px solid var(--line);"
        "border-radius:8px;padding:10px 14px}"
        ".legend .item{display:flex;align-items:center;gap:6px;font-size:13px}"
        ".sw{display:inline-block;width:14px;height:14px;border-radius:3px;border:1px solid rgba(0,0,0,.25)}"
        ".sw.free{background:#fff}.sw.bad{background:repeating-linear-gradient(45deg,#fff 0 3px,var(--bad) 3px 5px)}"
        ".badge{display:inline-block;font-size:11px;padding:1px "
        "7px;border-radius:9px;background:#e3e7ef;color:var(--ink)}"
        ".badge.running{background:#d8f0dc;color:#1b5e20}.badge.pending{background:#fde8c8;color:#8a4b00}"
        ".badge.waiting{background:#fbd9d0;color:#8e2a0b}.badge.deleted{background:#e4e4e4;color:#666}"
        ".badge.v1{background:#dde8fb;color:#1a3f8a}.badge.v2{background:#eadcf8;color:#5a1d8a}"
        ".badge.both{background:#d9f1f1;color:#0d5c5c}"
        ".nodes{display:flex;flex-wrap:wrap;gap:14px}"
        ".node{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:10px "
        "12px;max-width:100%;overflow-x:auto}"
        ".node h3{margin:0 0 2px;font-size:15px}.node .meta{color:var(--mute);font-size:12px;margin-bottom:6px}"
        ".node svg{display:block}"
        "svg text{font-family:'DejaVu Sans',sans-serif}"
        "table{border-collapse:collapse;background:var(--card);border:1px solid var(--line)}"
        "th,td{padding:4px 10px;border-bottom:1px solid var(--line);text-align:left;font-size:13px}"
        "th{background:#eef1f6;font-weight:600}"
        "td.running{background:#eef8f0}td.pending{background:#fff4e2}td.waiting{background:#fdece7}"
        "td.deleted{color:#777}"
        ".side{display:grid;grid-template-columns:repeat(3,minmax(220px,1fr));gap:12px;margin-bottom:12px}"
        ".side .col{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:10px 12px}"
        ".side h3{margin:0 0 6px;font-size:14px}.side svg.mini{display:block;margin-top:8px;max-width:100%;height:auto}"
        ".pend{background:var(--card);border:1px solid var(--line);border-left:4px solid #e69b00;border-radius:8px;"
        "padding:8px 12px;margin-bottom:8px}"
        ".pend.waiting{border-left-color:#d84315}"
        ".pend p{margin:4px 0 0;white-space:pre-wrap;font-family:'DejaVu Sans Mono',monospace;font-size:12px}"
        "ol.events{list-style:none;padding:0;margin:8px 0 0;columns:2 420px;font-size:13px}"
        "ol.events li{padding:1px 0;break-inside:avoid}"
        "ol.events .t{display:inline-block;min-width:52px;color:var(--mute);font-variant-numeric:tabular-nums}"
        ".dot{display:inline-block;width:9px;height:9px;border-radius:50%;margin-right:6px}"
        ".k-created{background:#5c8ee6}.k-bound{background:#8e6ad8}.k-started{background:#2e9e4f}"
        ".k-deleted{background:#8a8f98}.k-unhealthy{background:#c62828}.k-healthy{background:#00897b}"
        ".k-other{background:#e69b00}"
        ".note{color:var(--mute);font-size:12px}"
        "footer{color:var(--mute);font-size:12px;padding:14px 28px 28px}";

/* ---- the fleet ---- */

#define BOX_W 136
#define BOX_H 86
#define GAP 10
#define PER_ROW 8

typedef struct cell {
        const char *label; /* short text drawn in the cell, may be NULL */
        const char *title; /* tooltip: device id */
        const char *holder;
        bool unhealthy;
} cell;

/* Draw n cells side by side in (x, y, w, h). */
static void draw_cells(page *pg, int x, int y, int w, int h, const cell *c, size_t n) {
        dp_strbuf *o = pg->o;
        if (n == 0) return;
        int gap = n > 1 ? 2 : 0;
        int cw = (w - gap * (int)(n - 1)) / (int)n;
        if (cw < 2) cw = 2;
        for (size_t i = 0; i < n; i++) {
                int cx = x + (int)i * (cw + gap);
                char fill[40] = "#ffffff";
                if (c[i].holder) holder_colour(pg, c[i].holder, fill, sizeof(fill));
                dp_strbuf_printf(o, "<g class=\"cell%s\"><title>", c[i].unhealthy ? " unhealthy" : "");
                esc(o, c[i].title);
                dp_strbuf_puts(o, c[i].holder ? ": " : ": free");
                if (c[i].holder) esc(o, c[i].holder);
                if (c[i].unhealthy) dp_strbuf_puts(o, " (unhealthy)");
                dp_strbuf_printf(o,
                                 "</title><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"2\" fill=\"%s\" "
                                 "stroke=\"#b9c1cf\"/>",
                                 cx, y, cw, h, fill);
                if (c[i].unhealthy)
                        dp_strbuf_printf(o,
                                         "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"url(#dp-hatch)\"/>",
                                         cx, y, cw, h);
                /* about 6 px a character at 9 px: too long a label becomes its
                 * first letter and what follows its last dash ("partition-3" -> "p3") */
                char shortl[24];
                const char *label = c[i].label;
                size_t fits = cw > 4 ? (size_t)(cw - 4) / 6 : 0;
                if (label && strlen(label) > fits) {
                        const char *dash = strrchr(label, '-');
                        dp_fmt(shortl, sizeof(shortl), "%c%s", label[0], dash ? dash + 1 : "");
                        label = strlen(shortl) <= fits ? shortl : NULL;
                }
                if (label) {
                        dp_strbuf_printf(o,
                                         "<text x=\"%d\" y=\"%d\" font-size=\"9\" text-anchor=\"middle\" fill=\"%s\">",
                                         cx + cw / 2, y + h - 5, c[i].holder ? "#fff" : "#5b6475");
                        esc(o, label);
                        dp_strbuf_puts(o, "</text>");
                }
                dp_strbuf_puts(o, "</g>");
        }
}

/* The pod's device list on the node: "v1" or "v2". */
static const dp_doc_node *pod_devices(const dp_doc_node *pod, const char *model) {
        return seq_of(dp_doc_get(pod, "devices"), model);
}

/* Whether `dev` names a MIG unit of the node in the V2 spelling (dots dropped). */
static bool is_mig_unit_v2(const dp_doc_node *units, const char *dev) {
        for (size_t i = 0; units && i < units->n; i++) {
                const char *id = str_of(units->items[i], "id");
                const char *a = id, *b = dev;
                while (*a && *b) {
                        if (*a == '.') {
                                a++;
                                continue;
                        }
                        if (*a != *b) break;
                        a++;
                        b++;
                }
                while (*a == '.')
                        a++;
                if (!*a && !*b) return true;
        }
        return false;
}

typedef struct gpu_parts {
        cell *cells;
        size_t n, cap;
} gpu_parts;

/* Replicas per GPU of a time-sliced node: a V1 resource whose capacity is a
 * multiple (> 1) of the node's whole GPUs. 1 when not time-sliced. */
static int replicas_of(const dp_doc_node *node, size_t n_whole) {
        const dp_doc_node *al = dp_doc_get(node, "v1Allocatable");
        int best = 1;
        for (size_t i = 0; al && al->type == DP_DOC_MAP && i < al->n; i++) {
                /* MIG resources count instances, not replicas */
                if (strstr(al->pairs[i].key, "/mig-")) continue;
                const char *v = al->pairs[i].value && al->pairs[i].value->str ? al->pairs[i].value->str : "";
                const char *sl = strchr(v, '/');
                long cap = sl ? strtol(sl + 1, NULL, 10) : 0;
                if (n_whole && cap > (long)n_whole && cap % (long)n_whole == 0 && cap / (long)n_whole <= 64)
                        best = DP_MAX(best, (int)(cap / (long)n_whole));
        }
        return best;
}

static int draw_node(page *pg, const dp_doc_node *node) {
        dp_strbuf *o = pg->o;
        const char *name = str_of(node, "name");
        const dp_doc_node *units = seq_of(node, "units"), *pods = seq_of(pg->run, "pods");
        size_t n = units ? units->n : 0;
        /* physical devices and, per device, its children / partitions */
        _cleanup_free_ size_t *phys = calloc(n + 1, sizeof(size_t));
        _cleanup_free_ gpu_parts *parts = calloc(n + 1, sizeof(gpu_parts));
        if (!phys || !parts) return -ENOMEM;
        size_t n_phys = 0, n_whole = 0;
        for (size_t i = 0; i < n; i++) {
                const char *k = str_of(units->items[i], "kind");
                if (streq(k, "gpu") || startswith(k, "gpu ") || i == 0 || !n_phys) {
                        phys[n_phys++] = i;
                        if (!startswith(k, "gpu (MIG")) n_whole++;
                }
        }
        /* DRA partitions held on this node that are not units themselves:
         * "<gpu id>-<rest>" goes inside that GPU. */
        int r = 0;
        for (size_t p = 0; pods && p < pods->n && r >= 0; p++) {
                const dp_doc_node *pod = pods->items[p];
                if (!streq(str_of(pod, "node"), name) || !strcmp(state_class(str_of(pod, "state")), "deleted"))
                        continue;
                const dp_doc_node *v2 = pod_devices(pod, "v2");
                for (size_t d = 0; v2 && d < v2->n && r >= 0; d++) {
                        const char *dev = v2->items[d]->str ? v2->items[d]->str : "";
                        /* a device that is a unit has its holders in heldBy already,
                         * unless it is another driver's device in the node's pool named
                         * like a GPU: then it is that whole GPU (one full cell) */
                        bool unit = false, whole = false;
                        size_t best = SIZE_MAX, best_len = 0;
                        for (size_t u = 0; u < n && !unit; u++) {
                                if (!streq(str_of(units->items[u], "id"), dev)) continue;
                                unit = true;
                                const dp_doc_node *hb = seq_of(units->items[u], "heldBy");
                                bool listed = false;
                                for (size_t h = 0; hb && h < hb->n; h++)
                                        listed |= streq_ptr(hb->items[h]->str, str_of(pod, "name"));
                                for (size_t k = 0; k < n_phys && !listed; k++)
                                        if (phys[k] == u) {
                                                best = k;
                                                whole = true;
                                        }
                        }
                        if (unit && !whole) continue;
                        if (!unit && is_mig_unit_v2(units, dev)) continue;
                        for (size_t k = 0; k < n_phys && !unit; k++) {
                                const char *id = str_of(units->items[phys[k]], "id");
                                size_t l = strlen(id);
                                if (l > best_len && strncmp(dev, id, l) == 0 && dev[l] == '-') {
                                        best = k;
                                        best_len = l;
                                }
                        }
                        if (best == SIZE_MAX) continue;
                        gpu_parts *gp = &parts[best];
                        if (DP_GROW(gp->cells, gp->cap, gp->n + 1) < 0) {
                                r = -ENOMEM;
                                break;
                        }
                        gp->cells[gp->n++] = (cell){.label = whole ? "whole" : dev + best_len + 1,
                                                    .title = dev,
                                                    .holder = str_of(pod, "name")};
                }
        }
        int replicas = replicas_of(node, n_whole);
        size_t cols = DP_MIN((size_t)PER_ROW, DP_MAX(n_phys, (size_t)1));
        size_t rows = (n_phys + cols - 1) / cols;
        int width = (int)cols * (BOX_W + GAP) + GAP, height = (int)rows * (BOX_H + GAP) + GAP;
        dp_strbuf_puts(o, "<div class=\"node\" data-node=\"");
        esc(o, name);
        dp_strbuf_puts(o, "\"><h3>");
        esc(o, name);
        const char *model = str_of(node, "model");
        dp_strbuf_printf(o, " <span class=\"badge %s\">",
                         streq(model, "both") ? "both"
                         : streq(model, "v1") ? "v1"
                                              : "v2");
        esc(o, streq(model, "both") ? "V1+V2" : streq(model, "v1") ? "V1" : "V2");
        dp_strbuf_puts(o, "</span></h3><div class=\"meta\">");
        esc(o, str_of(node, "profile"));
        dp_strbuf_puts(o, " · ");
        esc(o, str_of(node, "inUse"));
        dp_strbuf_puts(o, "/");
        esc(o, str_of(node, "healthy"));
        dp_strbuf_puts(o, " healthy devices in use · utilization ");
        esc(o, str_of(node, "utilization"));
        dp_strbuf_puts(o, " · fragmentation ");
        esc(o, str_of(node, "fragmentation"));
        if (replicas > 1) dp_strbuf_printf(o, " · time-sliced ×%d", replicas);
        dp_strbuf_printf(
                o,
                "</div><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                "role=\"img\">",
                width, height, width, height);
        for (size_t k = 0; k < n_phys; k++) {
                const dp_doc_node *u = units->items[phys[k]];
                const char *id = str_of(u, "id"), *kind = str_of(u, "kind");
                bool bad = streq(str_of(u, "health"), "Unhealthy"), mig = startswith(kind, "gpu (MIG");
                int x = GAP + (int)(k % cols) * (BOX_W + GAP), y = GAP + (int)(k / cols) * (BOX_H + GAP);
                dp_strbuf_printf(o, "<g class=\"dev%s\" data-device=\"", bad ? " unhealthy" : "");
                esc(o, name);
                dp_strbuf_putc(o, '/');
                esc(o, id);
                dp_strbuf_printf(o,
                                 "\"><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"7\" fill=\"%s\" "
                                 "stroke=\"%s\" stroke-width=\"%d\"/>",
                                 x, y, BOX_W, BOX_H, bad ? "#fdecec" : "#f3f5f9", bad ? "#c62828" : "#aab3c3",
                                 bad ? 3 : 1);
                dp_strbuf_printf(o, "<text x=\"%d\" y=\"%d\" font-size=\"12\" font-weight=\"bold\" fill=\"#1d2330\">",
                                 x + 8, y + 16);
                esc(o, id);
                dp_strbuf_puts(o, "</text>");
                size_t first = phys[k] + 1, last = k + 1 < n_phys ? phys[k + 1] : n;
                const char *tag = mig ? "MIG" : parts[k].n ? "partitions" : replicas > 1 ? "time-sliced" : "";
                /* partitions named <gpu>-mig-<j> / <gpu>-vgpu-<j> (compatibility-group modes) */
                bool all_mig = parts[k].n > 0, all_vgpu = parts[k].n > 0, whole_part = false;
                for (size_t c = 0; c < parts[k].n; c++) {
                        all_mig &= startswith(parts[k].cells[c].label, "mig-");
                        all_vgpu &= startswith(parts[k].cells[c].label, "vgpu-");
                        whole_part |= streq(parts[k].cells[c].label, "whole");
                }
                if (all_mig) tag = "MIG mode";
                if (all_vgpu) tag = "vGPU mode";
                if (whole_part) tag = "whole";
                char migtag[96];
                if (mig && last > first) {
                        /* "MIG 7×1g.10gb" when the instances share a profile */
                        const char *p0 = str_of(units->items[first], "kind");
                        bool same = true;
                        for (size_t c = first + 1; c < last && same; c++)
                                same = streq(str_of(units->items[c], "kind"), p0);
                        if (same && strlen(p0) < 40) {
                                dp_fmt(migtag, sizeof(migtag), "MIG %zu×%s", last - first, p0);
                                tag = migtag;
                        }
                }
                if (bad) tag = "✕ unhealthy";
                dp_strbuf_printf(o, "<text x=\"%d\" y=\"%d\" font-size=\"9\" text-anchor=\"end\" fill=\"%s\">",
                                 x + BOX_W - 7, y + 15, bad ? "#c62828" : "#5b6475");
                esc(o, tag);
                dp_strbuf_puts(o, "</text>");
                int ix = x + 6, iy = y + 24, iw = BOX_W - 12, ih = BOX_H - 30;
                if (mig) {
                        /* MIG instances are the units after their parent */
                        size_t m = last - first;
                        _cleanup_free_ cell *cs = calloc(m + 1, sizeof(cell));
                        if (!cs) return -ENOMEM;
                        for (size_t c = 0; c < m; c++) {
                                const dp_doc_node *cu = units->items[first + c];
                                const dp_doc_node *hb = seq_of(cu, "heldBy");
                                cs[c] = (cell){.title = str_of(cu, "id"),
                                               .holder = hb && hb->n ? hb->items[0]->str : NULL,
                                               .unhealthy = bad || streq(str_of(cu, "health"), "Unhealthy")};
                        }
                        /* up to 4 per row inside the box */
                        size_t per = m > 4 ? (m + 1) / 2 : m;
                        int rh = m > 4 ? (ih - 2) / 2 : ih;
                        draw_cells(pg, ix, iy, iw, rh, cs, DP_MIN(per, m));
                        if (m > per) draw_cells(pg, ix, iy + rh + 2, iw, rh, cs + per, m - per);
                } else if (parts[k].n) {
                        for (size_t c = 0; c < parts[k].n; c++)
                                parts[k].cells[c].unhealthy = bad;
                        /* held partitions, then the rest of the GPU free */
                        int used = whole_part ? iw : iw * 2 / 3;
                        draw_cells(pg, ix, iy, used, ih, parts[k].cells, parts[k].n);
                        cell rest = {.label = "free", .title = id, .unhealthy = bad};
                        if (!whole_part) draw_cells(pg, ix + used + 2, iy, iw - used - 2, ih, &rest, 1);
                } else {
                        const dp_doc_node *hb = seq_of(u, "heldBy");
                        size_t nh = hb ? hb->n : 0;
                        size_t slots = replicas > 1 ? (size_t)replicas : DP_MAX(nh, (size_t)1);
                        _cleanup_free_ cell *cs = calloc(slots + 1, sizeof(cell));
                        if (!cs) return -ENOMEM;
                        for (size_t c = 0; c < slots; c++)
                                cs[c] = (cell){.title = id, .unhealthy = bad};
                        if (replicas > 1) {
                                /* each holder's replica ids ("gpu-3:replica-1") say which share it has */
                                for (size_t p = 0; pods && p < pods->n; p++) {
                                        const dp_doc_node *pod = pods->items[p];
                                        if (!streq(str_of(pod, "node"), name) ||
                                            !strcmp(state_class(str_of(pod, "state")), "deleted"))
                                                continue;
                                        const dp_doc_node *v1 = pod_devices(pod, "v1");
                                        size_t l = strlen(id);
                                        for (size_t d = 0; v1 && d < v1->n; d++) {
                                                const char *dev = v1->items[d]->str ? v1->items[d]->str : "";
                                                if (strncmp(dev, id, l) || !startswith(dev + l, ":replica-")) continue;
                                                long ri = strtol(dev + l + strlen(":replica-"), NULL, 10);
                                                if (ri >= 0 && ri < replicas) cs[ri].holder = str_of(pod, "name");
                                        }
                                }
                                for (size_t c = 0; c < slots; c++)
                                        if (!cs[c].holder) cs[c].label = "free";
                        } else
                                for (size_t c = 0; c < nh; c++)
                                        cs[c].holder = hb->items[c]->str;
                        draw_cells(pg, ix, iy, iw, ih, cs, slots);
                }
                dp_strbuf_puts(o, "</g>");
        }
        dp_strbuf_puts(o, "</svg></div>\n");
        for (size_t k = 0; k < n_phys; k++)
                free(parts[k].cells);
        return r;
}

/* ---- sections ---- */

static void stat(dp_strbuf *o, const char *value, const char *label, bool bad) {
        dp_strbuf_printf(o, "<div class=\"stat%s\"><b>", bad ? " bad" : "");
        esc(o, value);
        dp_strbuf_printf(o, "</b><span>%s</span></div>", label);
}

static void summary_cards(page *pg) {
        dp_strbuf *o = pg->o;
        const dp_doc_node *s = dp_doc_get(pg->run, "summary");
        long unhealthy = (long)(int_of(s, "devices") - int_of(s, "healthyDevices"));
        char b[32];
        dp_strbuf_puts(o, "<div class=\"cards\">");
        stat(o, str_of(s, "nodes"), "nodes", false);
        stat(o, str_of(s, "devices"), "devices", false);
        dp_fmt(b, sizeof(b), "%ld", unhealthy);
        stat(o, b, "unhealthy devices", unhealthy > 0);
        stat(o, str_of(s, "running"), "pods running", false);
        stat(o, str_of(s, "pending"), "pods pending", int_of(s, "pending") > 0);
        stat(o, str_of(s, "waitingOnNode"), "waiting on a node", int_of(s, "waitingOnNode") > 0);
        stat(o, str_of(s, "utilization"), "utilization", false);
        stat(o, str_of(s, "fragmentation"), "fragmentation", false);
        dp_strbuf_puts(o, "</div>\n");
}

static void legend(page *pg, const dp_doc_node *pods) {
        dp_strbuf *o = pg->o;
        dp_strbuf_puts(o, "<div class=\"legend\" id=\"legend\">");
        size_t shown = DP_MIN(pods ? pods->n : 0, (size_t)DP_SIM_HTML_PODS_MAX);
        for (size_t i = 0; i < shown; i++) {
                const dp_doc_node *p = pods->items[i];
                char c[40];
                colour(c, sizeof(c), i);
                const char *st = str_of(p, "state");
                dp_strbuf_printf(o, "<span class=\"item\" data-pod=\"");
                esc(o, str_of(p, "name"));
                dp_strbuf_printf(o, "\"><span class=\"sw\" style=\"background:%s\"></span>", c);
                esc(o, str_of(p, "name"));
                dp_strbuf_printf(o, " <span class=\"badge %s\">", state_class(st));
                esc(o, st);
                if (str_of(p, "node")[0]) {
                        dp_strbuf_puts(o, " · ");
                        esc(o, str_of(p, "node"));
                }
                dp_strbuf_puts(o, "</span></span>");
        }
        dp_strbuf_puts(o, "<span class=\"item\"><span class=\"sw free\"></span>free</span>"
                          "<span class=\"item\"><span class=\"sw bad\"></span>unhealthy</span></div>\n");
        if (pods && pods->n > shown)
                dp_strbuf_printf(o, "<p class=\"note\">%zu more pods not listed.</p>\n", pods->n - shown);
}

/* A stacked bar of pod states for one run. */
static void state_bar(dp_strbuf *o, const dp_doc_node *s) {
        static const struct {
                const char *key, *label, *fill;
        } parts[] = {{"running", "running", "#43a047"},
                     {"waitingOnNode", "waiting", "#e64a19"},
                     {"pending", "pending", "#f0a30a"},
                     {"deleted", "deleted", "#a0a4ab"},
                     {"evicted", "evicted", "#6d4c41"}};
        int64_t total = 0;
        for (size_t i = 0; i < ELEMENTSOF(parts); i++)
                total += int_of(s, parts[i].key);
        dp_strbuf_puts(o,
                       "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"300\" height=\"58\" viewBox=\"0 0 300 58\">");
        int x = 0;
        for (size_t i = 0; i < ELEMENTSOF(parts) && total > 0; i++) {
                int64_t v = int_of(s, parts[i].key);
                int w = (int)(v * 300 / total);
                if (i + 1 == ELEMENTSOF(parts)) w = 300 - x;
                if (v == 0) continue;
                dp_strbuf_printf(o,
                                 "<rect x=\"%d\" y=\"0\" width=\"%d\" height=\"18\" fill=\"%s\"><title>%" PRId64
                                 " %s</title></rect>",
                                 x, w, parts[i].fill, v, parts[i].label);
                x += w;
        }
        int util = tenths(str_of(s, "utilization"));
        dp_strbuf_printf(o,
                         "<rect x=\"0\" y=\"30\" width=\"300\" height=\"10\" rx=\"3\" fill=\"#e6e9ef\"/>"
                         "<rect x=\"0\" y=\"30\" width=\"%d\" height=\"10\" rx=\"3\" fill=\"#3f6fd8\"/>"
                         "<text x=\"0\" y=\"55\" font-size=\"11\" fill=\"#5b6475\">device utilization ",
                         util * 300 / 1000);
        esc(o, str_of(s, "utilization"));
        dp_strbuf_puts(o, "</text></svg>");
}

/* One run's fleet, small: a row per node, a square per schedulable device
 * (a whole GPU, or each MIG instance of a GPU in MIG mode) coloured by its
 * first holder; a GPU with DRA partitions of another driver held takes the
 * colour of the first pod holding one. */
static void minimap(page *pg, const dp_doc_node *run) {
        dp_strbuf *o = pg->o;
        const dp_doc_node *nodes = seq_of(run, "nodes"), *pods = seq_of(run, "pods");
        size_t shown = DP_MIN(nodes ? nodes->n : 0, (size_t)DP_SIM_HTML_NODES_MAX), widest = 1;
        for (size_t i = 0; i < shown; i++) {
                const dp_doc_node *units = seq_of(nodes->items[i], "units");
                size_t w = 0;
                for (size_t u = 0; units && u < units->n; u++)
                        w += !startswith(str_of(units->items[u], "kind"), "gpu (MIG");
                widest = DP_MAX(widest, w);
        }
        const int S = 9, G = 2, L = 64, RH = 14;
        int width = L + (int)widest * (S + G), height = (int)shown * RH + 4;
        dp_strbuf_printf(o,
                         "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"mini\" width=\"%d\" height=\"%d\" "
                         "viewBox=\"0 0 %d %d\">",
                         width, height, width, height);
        for (size_t i = 0; i < shown; i++) {
                const dp_doc_node *node = nodes->items[i], *units = seq_of(node, "units");
                const char *name = str_of(node, "name");
                int y = 2 + (int)i * RH;
                dp_strbuf_printf(o, "<text x=\"0\" y=\"%d\" font-size=\"10\" fill=\"#1d2330\">", y + S);
                esc(o, name);
                dp_strbuf_puts(o, "</text>");
                int x = L;
                for (size_t u = 0; units && u < units->n; u++) {
                        const dp_doc_node *unit = units->items[u], *hb = seq_of(unit, "heldBy");
                        if (startswith(str_of(unit, "kind"), "gpu (MIG")) continue;
                        const char *id = str_of(unit, "id"), *holder = hb && hb->n ? hb->items[0]->str : NULL;
                        size_t l = strlen(id);
                        for (size_t p = 0; !holder && pods && p < pods->n; p++) {
                                const dp_doc_node *pod = pods->items[p], *v2 = pod_devices(pod, "v2");
                                if (!streq(str_of(pod, "node"), name) ||
                                    !strcmp(state_class(str_of(pod, "state")), "deleted"))
                                        continue;
                                for (size_t d = 0; v2 && d < v2->n && !holder; d++) {
                                        const char *dev = v2->items[d]->str ? v2->items[d]->str : "";
                                        if (strncmp(dev, id, l) == 0 &&
                                            (dev[l] == 0 || (dev[l] == '-' && !is_mig_unit_v2(units, dev))))
                                                holder = str_of(pod, "name");
                                }
                        }
                        bool bad = streq(str_of(unit, "health"), "Unhealthy");
                        char fill[40] = "#ffffff";
                        if (holder) holder_colour(pg, holder, fill, sizeof(fill));
                        dp_strbuf_printf(o,
                                         "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"1\" fill=\"%s\" "
                                         "stroke=\"%s\" stroke-width=\"%s\"><title>",
                                         x, y, S, S, fill, bad ? "#c62828" : "#b9c1cf", bad ? "2" : "1");
                        esc(o, name);
                        dp_strbuf_putc(o, '/');
                        esc(o, id);
                        dp_strbuf_puts(o, ": ");
                        esc(o, holder ? holder : "free");
                        dp_strbuf_puts(o, bad ? " (unhealthy)</title></rect>" : "</title></rect>");
                        x += S + G;
                }
        }
        dp_strbuf_puts(o, "</svg>");
        if (nodes && nodes->n > shown)
                dp_strbuf_printf(o, "<div class=\"note\">%zu more nodes</div>", nodes->n - shown);
}

static void comparison(page *pg) {
        dp_strbuf *o = pg->o;
        const dp_doc_node *cmp = dp_doc_get(pg->doc, "comparison");
        static const char *const keys[3] = {"asWritten", "allV1", "allV2"};
        static const char *const titles[3] = {"As written", "Every node on V1 (device plugin)",
                                              "Every node on V2 (DRA)"};
        dp_strbuf_puts(o, "<div class=\"side\">");
        for (int k = 0; k < 3; k++) {
                const dp_doc_node *s = dp_doc_get(cmp, keys[k]);
                dp_strbuf_printf(o, "<div class=\"col\" data-run=\"%s\"><h3>%s</h3>", keys[k], titles[k]);
                state_bar(o, s);
                dp_strbuf_puts(o, "<div class=\"note\">");
                esc(o, str_of(s, "running"));
                dp_strbuf_puts(o, " running · ");
                esc(o, str_of(s, "pending"));
                dp_strbuf_puts(o, " pending · ");
                esc(o, str_of(s, "waitingOnNode"));
                dp_strbuf_puts(o, " waiting · ");
                esc(o, str_of(s, "devicesInUse"));
                dp_strbuf_puts(o, " devices in use · fragmentation ");
                esc(o, str_of(s, "fragmentation"));
                dp_strbuf_puts(o, "</div>");
                const dp_doc_node *run = k == 0 ? pg->run : pg->forced[k - 1];
                if (run) minimap(pg, run);
                dp_strbuf_puts(o, "</div>");
        }
        dp_strbuf_puts(o, "</div>\n<table class=\"cmp\"><tr><th>pod</th><th>as written</th><th>all V1</th>"
                          "<th>all V2</th></tr>\n");
        const dp_doc_node *pods = seq_of(cmp, "pods");
        size_t shown = DP_MIN(pods ? pods->n : 0, (size_t)DP_SIM_HTML_PODS_MAX);
        for (size_t i = 0; i < shown; i++) {
                const dp_doc_node *p = pods->items[i];
                const podref *pr = find_pod(pg, str_of(p, "name"));
                char c[40] = "#8a8f98";
                if (pr) colour(c, sizeof(c), pr->idx);
                dp_strbuf_printf(o, "<tr><td><span class=\"sw\" style=\"background:%s\"></span> ", c);
                esc(o, str_of(p, "name"));
                dp_strbuf_puts(o, "</td>");
                for (int k = 0; k < 3; k++) {
                        const char *v = str_of(p, keys[k]);
                        dp_strbuf_printf(o, "<td class=\"%s\">", state_class(v));
                        esc(o, v);
                        dp_strbuf_puts(o, "</td>");
                }
                dp_strbuf_puts(o, "</tr>\n");
        }
        dp_strbuf_puts(o, "</table>\n");
}

static void pending(page *pg, const dp_doc_node *pods) {
        dp_strbuf *o = pg->o;
        size_t n = 0;
        for (size_t i = 0; pods && i < pods->n; i++) {
                const dp_doc_node *p = pods->items[i];
                const char *st = str_of(p, "state");
                if (!streq(st, "Pending") && !streq(st, "Waiting") && !streq(st, "Evicted")) continue;
                if (n++ >= DP_SIM_HTML_PODS_MAX) continue;
                dp_strbuf_printf(o, "<div class=\"pend %s\" data-pod=\"", state_class(st));
                esc(o, str_of(p, "name"));
                dp_strbuf_puts(o, "\"><b>");
                esc(o, str_of(p, "name"));
                dp_strbuf_printf(o, "</b> <span class=\"badge %s\">", state_class(st));
                esc(o, st);
                if (streq(st, "Waiting")) {
                        dp_strbuf_puts(o, " on ");
                        esc(o, str_of(p, "node"));
                }
                dp_strbuf_puts(o, "</span> <span class=\"note\">");
                esc(o, str_of(p, "attempts"));
                dp_strbuf_puts(o, int_of(p, "attempts") == 1 ? " scheduling attempt" : " scheduling attempts");
                dp_strbuf_puts(o, "</span><p class=\"reason\">");
                esc(o, str_of(p, "reason")[0] ? str_of(p, "reason") : "no reason recorded");
                dp_strbuf_puts(o, "</p></div>\n");
        }
        if (n == 0) dp_strbuf_puts(o, "<p class=\"note\">No pod is Pending: every pod found its devices.</p>\n");
        if (n > DP_SIM_HTML_PODS_MAX)
                dp_strbuf_printf(o, "<p class=\"note\">%zu more not shown.</p>\n", n - (size_t)DP_SIM_HTML_PODS_MAX);
}

static const char *event_kind(const char *text) {
        size_t l = strlen(text);
#define ENDS(s) (l >= strlen(s) && streq(text + l - strlen(s), s))
        if (ENDS(" created")) return "created";
        if (ENDS(" deleted") || strstr(text, " evicted: ")) return "deleted";
        if (ENDS(" unhealthy") || ENDS(" unhealthy (NoExecute)")) return "unhealthy";
        if (ENDS(" healthy again")) return "healthy";
#undef ENDS
        if (strstr(text, " bound to ")) return "bound";
        if (strstr(text, " started on ")) return "started";
        return "other";
}

/* "t=90s rest" -> 90, rest */
static int64_t event_time(const char *line, const char **ret_rest) {
        *ret_rest = line;
        if (!startswith(line, "t=")) return 0;
        char *end = NULL;
        long long t = strtoll(line + 2, &end, 10);
        if (end && *end == 's') end++;
        if (end && *end == ' ') end++;
        *ret_rest = end ? end : line;
        return t;
}

static void timeline(page *pg) {
        dp_strbuf *o = pg->o;
        const dp_doc_node *ev = seq_of(pg->run, "events");
        int64_t end = int_of(pg->run, "endSeconds");
        size_t n = ev ? ev->n : 0;
        for (size_t i = 0; i < n; i++) {
                const char *rest;
                end = DP_MAX(end, event_time(ev->items[i]->str ? ev->items[i]->str : "", &rest));
        }
        if (end <= 0) end = 1;
        /* one column of dots per distinct time, one dot per event kind present */
        static const char *const kinds[] = {"created", "bound", "started", "deleted", "unhealthy", "healthy", "other"};
        static const char *const fills[] = {"#5c8ee6", "#8e6ad8", "#2e9e4f", "#8a8f98",
                                            "#c62828", "#00897b", "#e69b00"};
        const int W = 960, L = 72, R = 20, axis = 20 + 14 * (int)ELEMENTSOF(kinds);
        dp_strbuf_printf(o,
                         "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                         "class=\"timeline\">",
                         W, axis + 26, W, axis + 26);
        for (size_t k = 0; k < ELEMENTSOF(kinds); k++)
                dp_strbuf_printf(
                        o,
                        "<text x=\"%d\" y=\"%d\" font-size=\"9\" text-anchor=\"end\" fill=\"#5b6475\">%s</text>"
                        "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#eceff4\"/>",
                        L - 4, 17 + 14 * (int)k, kinds[k], L, 14 + 14 * (int)k, W - R, 14 + 14 * (int)k);
        dp_strbuf_printf(o, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#1d2330\"/>", L, axis, W - R, axis);
        /* round ticks: the first step giving at most 8 of them */
        static const int64_t steps[] = {1,   2,   5,    10,   15,   30,    60,    120,  300,
                                        600, 900, 1800, 3600, 7200, 21600, 43200, 86400};
        int64_t step = steps[ELEMENTSOF(steps) - 1];
        for (size_t k = 0; k < ELEMENTSOF(steps); k++)
                if (end / steps[k] <= 8) {
                        step = steps[k];
                        break;
                }
        for (int64_t t = 0; t <= end; t += step) {
                int x = L + (int)((W - L - R) * t / end);
                char lab[32];
                if (t && t % 3600 == 0)
                        dp_fmt(lab, sizeof(lab), "%" PRId64 "h", t / 3600);
                else if (t && t % 60 == 0 && step >= 60)
                        dp_fmt(lab, sizeof(lab), "%" PRId64 "m", t / 60);
                else
                        dp_fmt(lab, sizeof(lab), "%" PRId64 "s", t);
                dp_strbuf_printf(o,
                                 "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#1d2330\"/>"
                                 "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\" fill=\"#5b6475\">"
                                 "%s</text>",
                                 x, axis, x, axis + 4, x, axis + 16, lab);
        }
        for (size_t i = 0; i < n;) {
                const char *rest;
                int64_t t = event_time(ev->items[i]->str ? ev->items[i]->str : "", &rest);
                size_t j = i, count[ELEMENTSOF(kinds)] = {0};
                for (; j < n; j++) {
                        const char *r2;
                        if (event_time(ev->items[j]->str ? ev->items[j]->str : "", &r2) != t) break;
                        const char *k = event_kind(r2);
                        for (size_t q = 0; q < ELEMENTSOF(kinds); q++)
                                if (streq(kinds[q], k)) count[q]++;
                }
                int x = L + (int)((W - L - R) * t / end);
                for (size_t q = 0; q < ELEMENTSOF(kinds); q++)
                        if (count[q])
                                dp_strbuf_printf(o,
                                                 "<circle cx=\"%d\" cy=\"%d\" r=\"%d\" fill=\"%s\"><title>t=%" PRId64
                                                 "s: %zu %s</title></circle>",
                                                 x, 14 + 14 * (int)q, count[q] > 3 ? 6 : 4, fills[q], t, count[q],
                                                 kinds[q]);
                i = j;
        }
        dp_strbuf_puts(o, "</svg>\n<ol class=\"events\">");
        for (size_t i = 0; i < DP_MIN(n, (size_t)DP_SIM_HTML_EVENTS_MAX); i++) {
                const char *line = ev->items[i]->str ? ev->items[i]->str : "", *rest;
                int64_t t = event_time(line, &rest);
                dp_strbuf_printf(o, "<li><span class=\"t\">t=%" PRId64 "s</span><span class=\"dot k-%s\"></span>", t,
                                 event_kind(rest));
                esc(o, rest);
                dp_strbuf_puts(o, "</li>");
        }
        dp_strbuf_puts(o, "</ol>\n");
        if (n > DP_SIM_HTML_EVENTS_MAX)
                dp_strbuf_printf(o, "<p class=\"note\">%zu more events not listed.</p>\n",
                                 n - (size_t)DP_SIM_HTML_EVENTS_MAX);
}

static void unhealthy_list(page *pg, const dp_doc_node *nodes) {
        dp_strbuf *o = pg->o;
        bool any = false;
        for (size_t i = 0; nodes && i < nodes->n; i++) {
                const dp_doc_node *units = seq_of(nodes->items[i], "units");
                for (size_t u = 0; units && u < units->n; u++) {
                        if (!streq(str_of(units->items[u], "health"), "Unhealthy")) continue;
                        if (!any)
                                dp_strbuf_puts(
                                        o, "<p class=\"unhealthy-list\"><span class=\"sw bad\"></span> Unhealthy: ");
                        else
                                dp_strbuf_puts(o, ", ");
                        any = true;
                        dp_strbuf_puts(o, "<b class=\"unhealthy\">");
                        esc(o, str_of(nodes->items[i], "name"));
                        dp_strbuf_putc(o, '/');
                        esc(o, str_of(units->items[u], "id"));
                        dp_strbuf_puts(o, "</b>");
                }
        }
        if (any) dp_strbuf_puts(o, " — no new pod receives these; pods already on them keep them.</p>\n");
}

static int render(page *pg) {
        dp_strbuf *o = pg->o;
        const dp_doc_node *pods = seq_of(pg->run, "pods"), *nodes = seq_of(pg->run, "nodes");
        dp_strbuf_puts(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                          "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
                          "<title>devplane simulate: ");
        esc(o, str_of(pg->doc, "fleet"));
        dp_strbuf_printf(o, "</title><style>%s</style></head>\n<body>\n", CSS);
        /* the hatch pattern every unhealthy device uses */
        dp_strbuf_puts(o, "<svg width=\"0\" height=\"0\" style=\"position:absolute\" aria-hidden=\"true\"><defs>"
                          "<pattern id=\"dp-hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
                          "patternTransform=\"rotate(45)\"><rect width=\"2.5\" height=\"6\" fill=\"#c62828\" "
                          "fill-opacity=\"0.55\"/></pattern></defs></svg>\n");
        dp_strbuf_puts(o, "<header><h1>Fleet ");
        esc(o, str_of(pg->doc, "fleet"));
        dp_strbuf_puts(o, "</h1><p>devplane simulate · scoring ");
        esc(o, str_of(pg->doc, "scoring"));
        dp_strbuf_puts(o, " · simulated until t=");
        esc(o, str_of(pg->run, "endSeconds"));
        dp_strbuf_puts(o, "s · as written (each node on the model its group names)</p></header>\n<main>\n");
        summary_cards(pg);
        dp_strbuf_puts(o, "<h2 id=\"fleet\">Fleet: devices coloured by the pods that hold them</h2>\n");
        legend(pg, pods);
        unhealthy_list(pg, nodes);
        dp_strbuf_puts(o, "<p class=\"note\">A box is a physical device. MIG instances and DRA partitions are drawn "
                          "inside their GPU; a time-sliced GPU is split into its replicas (shares of one GPU, no "
                          "isolation between them). Hover for device ids.</p>\n<div class=\"nodes\">\n");
        size_t shown = DP_MIN(nodes ? nodes->n : 0, (size_t)DP_SIM_HTML_NODES_MAX);
        for (size_t i = 0; i < shown; i++) {
                int r = draw_node(pg, nodes->items[i]);
                if (r < 0) return r;
        }
        dp_strbuf_puts(o, "</div>\n");
        if (nodes && nodes->n > shown)
                dp_strbuf_printf(o, "<p class=\"note\">%zu more nodes not drawn (at most %d).</p>\n", nodes->n - shown,
                                 DP_SIM_HTML_NODES_MAX);
        dp_strbuf_puts(o, "<h2 id=\"pending\">Pending pods and why</h2>\n");
        pending(pg, pods);
        dp_strbuf_puts(o, "<h2 id=\"compare\">V1 vs V2: the same workload with every node on one model</h2>\n");
        comparison(pg);
        dp_strbuf_puts(o, "<h2 id=\"timeline\">Timeline</h2>\n");
        timeline(pg);
        dp_strbuf_puts(o, "</main>\n<footer>Made by devplane simulate --report. Self-contained: no script, no external "
                          "resource.</footer>\n</body></html>\n");
        return dp_strbuf_failed(o) ? -ENOMEM : 0;
}

int dp_sim_html_render_doc(const dp_doc_node *doc, const dp_doc_node *const forced_runs[2], dp_strbuf *out,
                           dp_error *err) {
        const dp_doc_node *run = doc && doc->type == DP_DOC_MAP ? dp_doc_get(doc, "asWritten") : NULL;
        if (!run || run->type != DP_DOC_MAP)
                return dp_error_set(err, -EINVAL, "report: not a simulate report document");
        page pg = {.o = out, .doc = doc, .run = run};
        for (int k = 0; k < 2 && forced_runs; k++)
                pg.forced[k] = forced_runs[k] && forced_runs[k]->type == DP_DOC_MAP ? forced_runs[k] : NULL;
        const dp_doc_node *pods = seq_of(run, "pods");
        pg.n_pods = pods ? pods->n : 0;
        _cleanup_free_ podref *refs = calloc(pg.n_pods + 1, sizeof(podref));
        if (!refs) return -ENOMEM;
        for (size_t i = 0; i < pg.n_pods; i++)
                refs[i] = (podref){.name = str_of(pods->items[i], "name"), .idx = i, .pod = pods->items[i]};
        qsort(refs, pg.n_pods, sizeof(podref), cmp_podref);
        pg.by_name = refs;
        return render(&pg);
}

/* The page from the report text, and optionally the reports of the runs
 * with every node on V1 and on V2 (their asWritten runs are drawn small). */
int dp_sim_html_render(const char *json, size_t len, const char *const forced[2], const size_t forced_len[2],
                       dp_strbuf *out, dp_error *err) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
        if (!set) return -ENOMEM;
        int r = dp_doc_parse(set, json, len, "report", err);
        if (r < 0) return r;
        const dp_doc_node *doc = dp_doc_count(set) == 1 ? dp_doc_root(set, 0) : NULL;
        const dp_doc_node *fr[2] = {NULL, NULL};
        for (int k = 0; k < 2 && forced; k++) {
                size_t before = dp_doc_count(set);
                if ((r = dp_doc_parse(set, forced[k], forced_len[k], k ? "report (all V2)" : "report (all V1)", err)) <
                    0)
                        return r;
                const dp_doc_node *d = dp_doc_count(set) == before + 1 ? dp_doc_root(set, before) : NULL;
                fr[k] = d && d->type == DP_DOC_MAP ? dp_doc_get(d, "asWritten") : NULL;
        }
        return dp_sim_html_render_doc(doc, fr, out, err);
}

int dp_sim_html_from_json(const char *json, size_t len, dp_strbuf *out, dp_error *err) {
        assert_return(json && out, -EINVAL);
        return dp_sim_html_render(json, len, NULL, NULL, out, err);
}

int dp_sim_html(const dp_sim_input *in, dp_strbuf *out, dp_error *err) {
        assert_return(in && out, -EINVAL);
        /* the three runs once: the all-V1 and all-V2 pictures are those runs */
        return dp_sim_report_html(in, DP_SIM_OUT_JSON, NULL, out, NULL, err);
}
