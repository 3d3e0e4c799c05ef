/* SPDX-License-Identifier: Apache-2.0
 * html.c — the simulation report as one self-contained HTML page (html.h),
 * drawn from dp_sim_report()'s document: inline CSS and SVG, one inline
 * script (the filter box), no external resource. */
#include <inttypes.h>
#include <stdio.h>

#include "base/escape.h"
#include "base/hashmap.h"
#include "doc/doc.h"
#include "sched/fmt.h"
#include "sched/html-internal.h"
#include "sched/html.h"

/* ---- reading the report document ---- */

const char *dp_html_str(const dp_doc_node *n, const char *key) {
        const dp_doc_node *x = n ? dp_doc_get(n, key) : NULL;
        return x && x->type == DP_DOC_SCALAR && x->str ? x->str : "";
}

static int64_t int_of(const dp_doc_node *n, const char *key) { return strtoll(dp_html_str(n, key), NULL, 10); }

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
void dp_html_esc(dp_strbuf *o, const char *s) {
        dp_escape_html(o, s); /* also controls, bidi controls, non-UTF-8 made visible: base/escape.h */
}

/* ---- workloads and their colours ---- */

typedef struct podref {
        const char *name;
        size_t idx;
        size_t wl; /* its workload's index */
        const dp_doc_node *pod;
} podref;

/* A workload: the pods of one owner (Deployment, Job, StatefulSet...), or an
 * unowned pod alone. Indexed in the order of their first pod in the input. */
typedef struct workload {
        char *label; /* "Deployment default/train", "Pod default/x" */
        size_t pods, running, pending, waiting, gone;
} workload;

/* The pods on each node (a node set, not deleted or evicted), sorted by
 * node then input order: the drawings look up a node's pods here instead
 * of scanning every pod for every node. */
typedef struct nodepod {
        const char *node;
        size_t pod;
} nodepod;

typedef struct pod_index {
        nodepod *v;
        size_t n;
} pod_index;

typedef struct page {
        dp_strbuf *o;
        pod_index live; /* of the as-written run */
        const dp_doc_node *doc, *run;
        const dp_sim_html_extra *extra;
        podref *by_name; /* sorted by name */
        size_t n_pods;
        workload *wls;
        size_t n_wls;
        const dp_doc_node *forced[2]; /* the runs with every node on V1 / V2 (NULL: not drawn) */
        const dp_doc_node *nodes;     /* the as-written run's, the first `shown` drawn */
        size_t shown;
        size_t *fold; /* per node drawn, the node whose card stands for it (html-fold.c) */
} page;

static int cmp_podref(const void *a, const void *b) {
        return strcmp(((const podref *)a)->name, ((const podref *)b)->name);
}

static const podref *find_pod(const page *pg, const char *name) {
        podref key = {.name = name};
        return bsearch(&key, pg->by_name, pg->n_pods, sizeof(podref), cmp_podref);
}

/* A colour per workload: hues a golden angle (137.508°) apart, so
 * neighbours differ most and a hue comes back close to an earlier one only
 * after many; three lightness and two saturation steps on top, so two
 * workloads whose hues are close still differ (6 × the hues a person tells
 * apart before anything looks repeated). */
static void colour(char *buf, size_t size, size_t idx) {
        unsigned hue = (unsigned)((idx * 137508u / 1000u + 210u) % 360u);
        unsigned light = 40 + (unsigned)(idx % 3) * 11;
        unsigned sat = (idx / 3) % 2 ? 48 : 68;
        dp_fmt(buf, size, "hsl(%u,%u%%,%u%%)", hue, sat, light);
}

/* The class that colours a holder ("ns/pod" -> its workload's "w<N>"), or
 * NULL (a claim without consumer: grey). */
static const char *holder_class(const page *pg, const char *holder, char *buf, size_t size) {
        const podref *p = holder ? find_pod(pg, holder) : NULL;
        if (!p) return NULL;
        dp_fmt(buf, size, "w%zu", p->wl);
        return buf;
}

/* The text of a name cut to at most `max` characters (UTF-8 aware) as
 * head + "…" + tail, keeping its end, where names of one group differ
 * ("gpu-node-pool-a-…pool-a-117"). buf holds at least max * 4 + 4 bytes. */
static const char *cut_middle(const char *s, size_t max, char *buf, size_t size) {
        size_t chars = 0;
        for (const char *p = s; *p; p++)
                chars += ((unsigned char)*p & 0xC0) != 0x80;
        if (chars <= max || max < 6) return s;
        size_t tail = (max - 1) / 2 + (max - 1) % 2, head = max - 1 - tail;
        /* byte offsets of the head's end and the tail's start */
        size_t c = 0, hb = 0, tb = 0;
        for (size_t i = 0; s[i]; i++) {
                if (((unsigned char)s[i] & 0xC0) == 0x80) continue;
                if (c == head) hb = i;
                if (c == chars - tail) tb = i;
                c++;
        }
        dp_fmt(buf, size, "%.*s…%s", (int)hb, s, s + tb);
        return buf;
}

/* A name in an HTML box that may be narrower than it: the head shrinks
 * with an ellipsis (CSS), the last characters always show, the whole name
 * is the tooltip. The text content is the name itself. */
static void boxed_name(dp_strbuf *o, const char *cls, const char *name) {
        size_t l = strlen(name), keep = 12;
        dp_strbuf_printf(o, "<span class=\"nm %s\" title=\"", cls);
        dp_html_esc(o, name);
        dp_strbuf_puts(o, "\">");
        if (l > keep + 8) {
                size_t cut = l - keep;
                while (cut > 0 && ((unsigned char)name[cut] & 0xC0) == 0x80)
                        cut--;
                char head[1024];
                dp_fmt(head, sizeof(head), "%.*s", (int)DP_MIN(cut, sizeof(head) - 1), name);
                dp_strbuf_puts(o, "<span class=\"h\">");
                dp_html_esc(o, head);
                dp_strbuf_puts(o, "</span><span class=\"t\">");
                dp_html_esc(o, name + cut);
                dp_strbuf_puts(o, "</span>");
        } else {
                dp_strbuf_puts(o, "<span class=\"h\">");
                dp_html_esc(o, name);
                dp_strbuf_puts(o, "</span>");
        }
        dp_strbuf_puts(o, "</span>");
}

/* A name in a box that is usually wide enough: as text, unless it is
 * long (more than 40 bytes), then as boxed_name (head cut, end kept). */
static void short_name(dp_strbuf *o, const char *name) {
        if (strlen(name) > 40)
                boxed_name(o, "long", name);
        else
                dp_html_esc(o, name);
}

static const char *state_class(const char *st);

static int cmp_nodepod(const void *a, const void *b) {
        const nodepod *x = a, *y = b;
        int c = strcmp(x->node, y->node);
        return c ? c : (x->pod > y->pod) - (x->pod < y->pod);
}

static int pod_index_build(const dp_doc_node *pods, pod_index *ix) {
        size_t n = pods ? pods->n : 0;
        *ix = (pod_index){.v = calloc(n + 1, sizeof(nodepod))};
        if (!ix->v) return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const dp_doc_node *p = pods->items[i];
                const char *node = dp_html_str(p, "node");
                if (node[0] && strcmp(state_class(dp_html_str(p, "state")), "deleted"))
                        ix->v[ix->n++] = (nodepod){node, i};
        }
        qsort(ix->v, ix->n, sizeof(nodepod), cmp_nodepod);
        return 0;
}

/* The first entry of node's pods; *ret_n of them. */
static size_t pods_on(const pod_index *ix, const char *node, size_t *ret_n) {
        size_t lo = 0, hi = ix->n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (strcmp(ix->v[mid].node, node) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        size_t end = lo;
        while (end < ix->n && streq(ix->v[end].node, node))
                end++;
        *ret_n = end - lo;
        return lo;
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
        "*{box-sizing:border-box}[hidden]{display:none!important}"
        "body{margin:0;font:14px/1.45 'DejaVu Sans',system-ui,sans-serif;color:var(--ink);background:var(--bg)}"
        "header{background:#1f2a44;color:#fff;padding:14px 28px}"
        "header h1{margin:0;font-size:22px;font-weight:600;overflow-wrap:anywhere}"
        "header p{margin:4px 0 0;color:#c9d2e6}"
        ".bar{position:sticky;top:0;z-index:5;display:flex;flex-wrap:wrap;gap:6px 16px;align-items:center;"
        "background:#fff;border-bottom:1px solid var(--line);padding:6px 28px;font-size:13px}"
        ".bar input{width:340px;max-width:100%;padding:4px 8px;border:1px solid #aab3c3;border-radius:6px;font:inherit}"
        ".bar a{color:#1a3f8a}"
        "main{padding:10px 28px;max-width:1400px}"
        "h2{font-size:17px;margin:22px 0 10px;border-bottom:2px solid var(--line);padding-bottom:4px;"
        "scroll-margin-top:48px}"
        ".cards{display:flex;flex-wrap:wrap;gap:10px}"
        ".stat{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:6px 14px;min-width:110px}"
        ".stat b{display:block;font-size:20px}.stat span{color:var(--mute);font-size:12px}"
        ".stat.bad b{color:var(--bad)}"
        ".legend{display:flex;flex-wrap:wrap;gap:3px 14px;background:var(--card);border:1px solid var(--line);"
        "border-radius:8px;padding:8px 12px;max-height:140px;overflow-y:auto}"
        ".legend .item{display:flex;align-items:center;gap:5px;font-size:12px;max-width:420px;min-width:0}"
        ".legend .cnt{color:var(--mute);flex:none}"
        ".sw{display:inline-block;flex:none;width:14px;height:14px;border-radius:3px;border:1px solid rgba(0,0,0,.25);"
        "vertical-align:middle}"
        ".sw.free{background:#fff}.sw.bad{background:repeating-linear-gradient(45deg,#fff 0 3px,var(--bad) 3px 5px)}"
        ".sw.claim{background:#8a8f98}"
        ".nm{display:inline-flex;min-width:0;max-width:100%;white-space:pre;vertical-align:bottom}"
        ".nm .h{overflow:hidden;text-overflow:ellipsis;min-width:0}.nm .t{flex:none}"
        ".badge{display:inline-block;flex:none;font-size:11px;padding:1px "
        "7px;border-radius:9px;background:#e3e7ef;color:var(--ink);white-space:nowrap}"
        ".badge.running{background:#d8f0dc;color:#1b5e20}.badge.pending{background:#fde8c8;color:#8a4b00}"
        ".badge.waiting{background:#fbd9d0;color:#8e2a0b}.badge.deleted{background:#e4e4e4;color:#666}"
        ".badge.v1{background:#dde8fb;color:#1a3f8a}.badge.v2{background:#eadcf8;color:#5a1d8a}"
        ".badge.both{background:#d9f1f1;color:#0d5c5c}.badge.cpu{background:#eceff3;color:#455a64}"
        "table.ov td{vertical-align:top;padding:3px 10px}.ov .pname{font-weight:600;overflow-wrap:anywhere}"
        ".ov td.pn{max-width:260px}.ov .bad{color:var(--bad)}"
        ".ubar{display:inline-block;width:110px;height:9px;background:#e6e9ef;border-radius:3px;margin-right:8px;"
        "vertical-align:middle;overflow:hidden}.ubar i{display:block;height:100%;background:#2f6fb5}"
        ".heat{display:block}.heat rect{stroke:#9aa4b5;stroke-width:1}.heat rect.bad{stroke:#c62828;stroke-width:2}"
        ".hx{fill:#e9ecf1;background:#e9ecf1}.h0{fill:#fff;background:#fff}.h1{fill:#c6dbef;background:#c6dbef}"
        ".h2{fill:#6baed6;background:#6baed6}.h3{fill:#2f7fc1;background:#2f7fc1}.h4{fill:#08306b;background:#08306b}"
        ".nodes{display:flex;flex-wrap:wrap;gap:12px}"
        ".node{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:8px "
        "12px;max-width:100%;min-width:260px;overflow-x:auto}"
        ".node h3{display:flex;align-items:center;gap:6px;margin:0 0 2px;font-size:15px;width:0;min-width:100%}"
        ".node .meta{color:var(--mute);font-size:12px;margin-bottom:6px;width:0;min-width:100%;overflow:hidden;"
        "text-overflow:ellipsis;white-space:nowrap}"
        ".node svg{display:block}"
        ".like{font-size:12px;margin:0 0 6px;width:0;min-width:100%}.like summary{cursor:pointer;color:#1a3f8a}"
        ".likes{display:flex;flex-wrap:wrap;gap:1px 12px;max-height:150px;overflow-y:auto;margin-top:3px}"
        ".like-n{overflow-wrap:anywhere;min-width:0;scroll-margin-top:60px}"
        ".dev .box{fill:#f3f5f9;stroke:#aab3c3}.dev.unhealthy .box{fill:#fdecec;stroke:#c62828;stroke-width:3}"
        ".dev .id{font-size:12px;font-weight:bold;fill:#1d2330}"
        ".dev .tag{font-size:9px;text-anchor:end;fill:#5b6475}.dev.unhealthy .tag{fill:#c62828}"
        ".cell rect{stroke:#b9c1cf;rx:2px}.cl{font-size:9px;text-anchor:middle;fill:#5b6475}.cl.held{fill:#fff}"
        "svg text{font-family:'DejaVu Sans',sans-serif}"
        "table{border-collapse:collapse;background:var(--card);border:1px solid var(--line)}"
        "th,td{padding:3px 10px;border-bottom:1px solid var(--line);text-align:left;font-size:13px}"
        "th{background:#eef1f6;font-weight:600}"
        "td.running{background:#eef8f0}td.pending{background:#fff4e2}td.waiting{background:#fdece7}"
        "td.deleted{color:#777}"
        "table.cmp td:first-child{white-space:nowrap}table.cmp .nm{max-width:400px}"
        ".side{display:grid;grid-template-columns:repeat(3,minmax(0,1fr));gap:12px;margin-bottom:12px}"
        ".side .col{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:10px 12px;"
        "min-width:0}"
        ".side h3{margin:0 0 6px;font-size:14px}"
        ".clegend{display:flex;flex-wrap:wrap;gap:2px 12px;font-size:12px;color:var(--mute);margin:4px 0}"
        ".clegend span{display:inline-flex;align-items:center;gap:4px}"
        ".minibox{max-height:460px;overflow:auto;margin-top:8px;border-top:1px solid var(--line)}"
        ".side svg.mini{display:block;margin-top:6px}"
        ".mini rect{stroke:#b9c1cf;width:9px;height:9px}.mini rect.bad{stroke:#c62828;stroke-width:2}"
        ".mini text{font-size:10px;fill:#1d2330}"
        ".pgroup{background:var(--card);border:1px solid var(--line);border-left:4px solid #e69b00;"
        "border-radius:8px;padding:8px 12px;margin-bottom:8px}"
        ".pgroup.waiting{border-left-color:#d84315}.pgroup.deleted{border-left-color:#6d4c41}"
        ".pgroup p.reason{margin:4px 0;white-space:pre-wrap;overflow-wrap:anywhere;"
        "font-family:'DejaVu Sans Mono',monospace;font-size:12px}"
        ".pgroup summary{cursor:pointer;color:#1a3f8a;font-size:13px}"
        ".pods{display:flex;flex-wrap:wrap;gap:3px 6px;max-height:200px;overflow-y:auto;margin:6px 0}"
        ".pod{display:inline-flex;font-size:12px;background:#f1f3f7;border-radius:4px;padding:0 6px;max-width:360px;"
        "white-space:nowrap;min-width:0}"
        "pre.why{max-height:420px;overflow:auto;background:#f8f9fb;border:1px solid var(--line);border-radius:6px;"
        "padding:8px;margin:6px 0;font-size:12px}"
        ".evbox{max-height:640px;overflow-y:auto;margin-top:8px;border-top:1px solid var(--line)}"
        "ol.events{list-style:none;padding:0;margin:4px 0 0;columns:2 420px;font-size:13px}"
        "ol.events li{padding:1px 0;break-inside:avoid;overflow-wrap:anywhere}"
        "ol.events .t{display:inline-block;min-width:52px;color:var(--mute);font-variant-numeric:tabular-nums}"
        ".dot{display:inline-block;width:9px;height:9px;border-radius:50%;margin-right:6px}"
        ".k-created{background:#5c8ee6}.k-bound{background:#8e6ad8}.k-started{background:#2e9e4f}"
        ".k-deleted{background:#8a8f98}.k-unhealthy{background:#c62828}.k-healthy{background:#00897b}"
        ".k-other{background:#e69b00}"
        ".note{color:var(--mute);font-size:12px}"
        ".qcard{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:8px 14px;margin:10px 0;"
        "overflow-x:auto}.qcard h3{margin:0;font-size:15px;overflow-wrap:anywhere}.qser{font-size:12px;margin-top:6px}"
        ".qchurn-note{color:var(--bad);background:#fdecea;border:1px solid var(--bad);border-radius:6px;padding:6px 10px}"
        ".unhealthy-list{overflow-wrap:anywhere;max-height:64px;overflow-y:auto}"
        "footer{color:var(--mute);font-size:12px;padding:14px 28px 28px}";

/* The filter box: hides the nodes, legend entries, Pending groups, table
 * rows and events (class "f") whose text (holders' names included, from
 * the drawings' tooltips) lacks what is typed, and opens the lists of
 * folded nodes so a match among them shows. A link to a folded node
 * ("#n-<index>", the overview's squares) opens its list too. Without
 * script the page is the same, unfiltered. */
static const char SCRIPT[] =
        "(function(){var q=document.getElementById('q'),c=document.getElementById('qn'),e=null,t=[];"
        "q.addEventListener('input',function(){if(!e){e=document.querySelectorAll('.f');"
        "for(var i=0;i<e.length;i++)t.push(e[i].textContent.toLowerCase());}"
        "var v=q.value.trim().toLowerCase(),n=0;"
        "for(var i=0;i<e.length;i++){var h=v!==''&&t[i].indexOf(v)<0;e[i].hidden=h;if(!h)n++;}"
        "document.querySelectorAll('details.like').forEach(function(d){d.open=v!=='';});"
        "c.textContent=v?n+' of '+e.length+' items match':'';});"
        "function go(){var x=location.hash&&document.getElementById(location.hash.slice(1));if(!x)return;"
        "for(var p=x;p;p=p.parentElement)if(p.tagName==='DETAILS')p.open=true;x.scrollIntoView();}"
        "window.addEventListener('hashchange',go);go();})();";

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
        unsigned weight; /* its share of the row: a MIG instance's compute slices; 0 is 1 */
} cell;

/* Draw n cells side by side in (x, y, w, h). */
static void draw_cells(page *pg, int x, int y, int w, int h, const cell *c, size_t n) {
        dp_strbuf *o = pg->o;
        if (n == 0) return;
        int gap = n > 1 ? 2 : 0, room = w - gap * (int)(n - 1), cx = x;
        long total = 0;
        for (size_t i = 0; i < n; i++)
                total += c[i].weight ? c[i].weight : 1;
        for (size_t i = 0; i < n; i++) {
                int cw = (int)((long)room * (c[i].weight ? c[i].weight : 1) / total);
                if (cw < 2) cw = 2;
                if (i) cx += gap;
                char cls[32];
                const char *wc = c[i].holder ? holder_class(pg, c[i].holder, cls, sizeof(cls)) : NULL;
                dp_strbuf_printf(o, "<g class=\"cell%s\"><title>", c[i].unhealthy ? " unhealthy" : "");
                dp_html_esc(o, c[i].title);
                dp_strbuf_puts(o, c[i].holder ? ": " : ": free");
                if (c[i].holder) dp_html_esc(o, c[i].holder);
                if (c[i].unhealthy) dp_strbuf_puts(o, " (unhealthy)");
                dp_strbuf_printf(o, "</title><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" ", cx, y, cw, h);
                if (wc)
                        dp_strbuf_printf(o, "class=\"%s\"/>", wc);
                else
                        dp_strbuf_printf(o, "fill=\"%s\"/>", c[i].holder ? "#8a8f98" : "#fff");
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
                        dp_strbuf_printf(o, "<text x=\"%d\" y=\"%d\" class=\"cl%s\">", cx + cw / 2, y + h - 5,
                                         c[i].holder ? " held" : "");
                        dp_html_esc(o, label);
                        dp_strbuf_puts(o, "</text>");
                }
                dp_strbuf_puts(o, "</g>");
                cx += cw;
        }
}

/* The pod's device list on the node: "v1" or "v2". */
static const dp_doc_node *pod_devices(const dp_doc_node *pod, const char *model) {
        return seq_of(dp_doc_get(pod, "devices"), model);
}

/* Whether `dev` names a MIG unit of the node in the V2 spelling (dots dropped). */
static bool is_mig_unit_v2(const dp_doc_node *units, const char *dev) {
        for (size_t i = 0; units && i < units->n; i++) {
                const char *id = dp_html_str(units->items[i], "id");
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
        const dp_doc_node *al = dp_doc_get(node, "v1Allocatable"), *units = seq_of(node, "units");
        int best = 1;
        /* a Node object's shared GPUs list their replicas (GPU feature-discovery labels) */
        if (streq(dp_html_str(node, "profile"), "Node object")) {
                for (size_t i = 0; units && i < units->n; i++)
                        best = DP_MAX(best, (int)DP_MIN(int_of(units->items[i], "replicas"), 64));
                return best;
        }
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

const char *dp_html_model_badge(const char *model, const char **ret_text) {
        *ret_text = streq(model, "both") ? "V1+V2" : streq(model, "v1") ? "V1" : streq(model, "v2") ? "V2" : "CPU";
        return streq(model, "both") || streq(model, "v1") || streq(model, "v2") ? model : "cpu";
}

static void node_others(dp_strbuf *o, const dp_doc_node *other);

/* A node card's opening: its name and model, what it is (the GPU product
 * GFD labels, else the profile), its accelerators in use, and the devices
 * that are not accelerators (counted apart). idx is its anchor (#n-IDX). */
static void node_header(dp_strbuf *o, const dp_doc_node *node, size_t idx, int replicas) {
        const char *name = dp_html_str(node, "name"), *text,
                   *cls = dp_html_model_badge(dp_html_str(node, "model"), &text);
        const char *what =
                dp_html_str(node, "product")[0] ? dp_html_str(node, "product") : dp_html_str(node, "profile");
        const dp_doc_node *units = seq_of(node, "units"), *other = seq_of(node, "otherDevices");
        bool mps = false;
        for (size_t i = 0; units && i < units->n; i++)
                mps |= streq(dp_html_str(units->items[i], "sharing"), "mps");
        dp_strbuf_printf(o, "<div class=\"node f\" id=\"n-%zu\" data-inuse=\"%" PRId64 "\" data-node=\"", idx,
                         int_of(node, "inUse"));
        dp_html_esc(o, name);
        dp_strbuf_puts(o, "\"><h3>");
        boxed_name(o, "node-name", name);
        dp_strbuf_printf(o, " <span class=\"badge %s\">%s</span></h3><div class=\"meta\" title=\"", cls, text);
        dp_html_esc(o, what);
        dp_strbuf_puts(o, "\">");
        dp_html_esc(o, what);
        if (!int_of(node, "devices")) {
                dp_strbuf_puts(o, " · no accelerator</div>");
                node_others(o, other);
                return;
        }
        dp_strbuf_puts(o, " · ");
        dp_html_esc(o, dp_html_str(node, "inUse"));
        dp_strbuf_puts(o, "/");
        dp_html_esc(o, dp_html_str(node, "healthy"));
        dp_strbuf_puts(o, " healthy devices in use · utilization ");
        dp_html_esc(o, dp_html_str(node, "utilization"));
        dp_strbuf_puts(o, " · fragmentation ");
        dp_html_esc(o, dp_html_str(node, "fragmentation"));
        if (replicas > 1) dp_strbuf_printf(o, " · %s ×%d", mps ? "MPS" : "time-sliced", replicas);
        dp_strbuf_puts(o, "</div>");
        node_others(o, other);
}

/* The line of a node card that lists the devices that are not accelerators. */
static void node_others(dp_strbuf *o, const dp_doc_node *other) {
        if (!other || !other->n) return;
        dp_strbuf_puts(o, "<div class=\"meta\">not accelerators, not counted:");
        for (size_t i = 0; i < other->n; i++) {
                dp_strbuf_puts(o, i ? ", " : " ");
                dp_html_esc(o, dp_html_str(other->items[i], "name"));
                dp_strbuf_printf(o, " %" PRId64 "/%" PRId64 " in use", int_of(other->items[i], "inUse"),
                                 int_of(other->items[i], "total"));
        }
        dp_strbuf_puts(o, "</div>");
}

/* What a node card is drawn from, worked out before drawing: its physical
 * devices (indexes into units; a MIG GPU's instances follow it as units of
 * their own) and, per physical device, the DRA partitions held on it. */
typedef struct node_card {
        const dp_doc_node *units, *pods;
        const char *name;
        size_t n;     /* units */
        size_t *phys; /* n_phys indexes into units */
        size_t n_phys, n_whole;
        gpu_parts *parts; /* per physical device */
        size_t on, on_n;  /* the node's pods, in pg->live */
        int replicas;     /* replicas_of() */
        bool obj;         /* a Node object: its units say their own replicas */
} node_card;

static void node_card_done(node_card *v) {
        for (size_t k = 0; v->parts && k < v->n_phys; k++)
                free(v->parts[k].cells);
        free(v->parts);
        free(v->phys);
}

/* Fills v's physical devices: a MIG instance follows its GPU in MIG mode;
 * every other unit is a device. */
static int node_card_devices(node_card *v) {
        v->phys = calloc(v->n + 1, sizeof(size_t));
        v->parts = calloc(v->n + 1, sizeof(gpu_parts));
        if (!v->phys || !v->parts) return -ENOMEM;
        bool in_mig = false;
        for (size_t i = 0; i < v->n; i++) {
                const char *k = dp_html_str(v->units->items[i], "kind");
                if (in_mig && !streq(k, "gpu") && !startswith(k, "gpu ")) continue;
                v->phys[v->n_phys++] = i;
                in_mig = startswith(k, "gpu (MIG");
                if (!in_mig) v->n_whole++;
        }
        return 0;
}

/* Where the V2 device `dev` a pod holds is drawn as a partition: returns
 * false when it is not (a unit whose holders heldBy lists already, a MIG
 * instance, a device of no GPU here); else *ret_k is the physical device and
 * *ret_label what the cell says ("whole": another driver's device named like
 * the GPU, one full cell; else dev past "<gpu id>-"). */
static bool partition_home(const node_card *v, const dp_doc_node *pod, const char *dev, size_t *ret_k,
                           const char **ret_label) {
        const dp_doc_node *units = v->units;
        for (size_t u = 0; u < v->n; u++) {
                if (!streq(dp_html_str(units->items[u], "id"), dev)) continue;
                const dp_doc_node *hb = seq_of(units->items[u], "heldBy");
                for (size_t h = 0; hb && h < hb->n; h++)
                        if (streq_ptr(hb->items[h]->str, dp_html_str(pod, "name"))) return false;
                bool whole = false;
                for (size_t k = 0; k < v->n_phys; k++)
                        if (v->phys[k] == u) {
                                *ret_k = k;
                                whole = true;
                        }
                if (whole) *ret_label = "whole";
                return whole;
        }
        if (is_mig_unit_v2(units, dev)) return false;
        /* "<gpu id>-<rest>" goes inside that GPU (the longest id that fits) */
        size_t best = SIZE_MAX, best_len = 0;
        for (size_t k = 0; k < v->n_phys; k++) {
                const char *id = dp_html_str(units->items[v->phys[k]], "id");
                size_t l = strlen(id);
                if (l > best_len && strncmp(dev, id, l) == 0 && dev[l] == '-') {
                        best = k;
                        best_len = l;
                }
        }
        if (best == SIZE_MAX) return false;
        *ret_k = best;
        *ret_label = dev + best_len + 1;
        return true;
}

/* Files the DRA partitions held on the node that are not units themselves
 * under their GPUs (v->parts). */
static int node_card_partitions(const page *pg, node_card *v) {
        for (size_t q = 0; v->pods && q < v->on_n; q++) {
                const dp_doc_node *pod = v->pods->items[pg->live.v[v->on + q].pod];
                const dp_doc_node *v2 = pod_devices(pod, "v2");
                for (size_t d = 0; v2 && d < v2->n; d++) {
                        const char *dev = v2->items[d]->str ? v2->items[d]->str : "", *label;
                        size_t k;
                        if (!partition_home(v, pod, dev, &k, &label)) continue;
                        gpu_parts *gp = &v->parts[k];
                        if (DP_GROW(gp->cells, gp->cap, gp->n + 1) < 0) return -ENOMEM;
                        gp->cells[gp->n++] = (cell){.label = label, .title = dev, .holder = dp_html_str(pod, "name")};
                }
        }
        return 0;
}

/* The tag at the top right of device k's box ("MIG 7×1g.10gb", "partitions",
 * "time-sliced", "✕ unhealthy", ...), written into buf where it is made up;
 * *ret_whole says that a partition is the whole GPU. */
static const char *device_tag(const node_card *v, size_t k, int ureps, bool bad, char *buf, size_t size,
                              bool *ret_whole) {
        const dp_doc_node *u = v->units->items[v->phys[k]];
        const gpu_parts *gp = &v->parts[k];
        bool mig = startswith(dp_html_str(u, "kind"), "gpu (MIG");
        size_t first = v->phys[k] + 1, last = k + 1 < v->n_phys ? v->phys[k + 1] : v->n;
        const char *tag = mig         ? "MIG"
                          : gp->n     ? "partitions"
                          : ureps > 1 ? (streq(dp_html_str(u, "sharing"), "mps") ? "MPS" : "time-sliced")
                                      : "";
        /* partitions named <gpu>-mig-<j> / <gpu>-vgpu-<j> (compatibility-group modes) */
        bool all_mig = gp->n > 0, all_vgpu = gp->n > 0, whole = false;
        for (size_t c = 0; c < gp->n; c++) {
                all_mig &= startswith(gp->cells[c].label, "mig-");
                all_vgpu &= startswith(gp->cells[c].label, "vgpu-");
                whole |= streq(gp->cells[c].label, "whole");
        }
        if (all_mig) tag = "MIG mode";
        if (all_vgpu) tag = "vGPU mode";
        if (whole) tag = "whole";
        if (mig && last > first) {
                /* "MIG 7×1g.10gb" when the instances share a profile */
                const char *p0 = dp_html_str(v->units->items[first], "kind");
                bool same = true;
                for (size_t c = first + 1; c < last && same; c++)
                        same = streq(dp_html_str(v->units->items[c], "kind"), p0);
                if (same && strlen(p0) < 40) {
                        dp_fmt(buf, size, "MIG %zu×%s", last - first, p0);
                        tag = buf;
                }
        }
        *ret_whole = whole;
        return bad ? "✕ unhealthy" : tag;
}

/* A device box's first line: its id at the left, cut in the middle where it
 * would run into the tag (about 7.5 px a bold character at 12 px, 5.5 px one
 * at 9 px; the whole id is then the tooltip), and the tag at the right. */
static void device_title(dp_strbuf *o, const char *id, const char *tag, int x, int y) {
        char idbuf[128];
        size_t tag_chars = 0;
        for (const char *q = tag; *q; q++)
                tag_chars += ((unsigned char)*q & 0xC0) != 0x80;
        int room = BOX_W - 16 - (tag_chars ? (int)tag_chars * 11 / 2 + 6 : 0);
        const char *shown_id = cut_middle(id, (size_t)DP_MAX(room * 2 / 15, 6), idbuf, sizeof(idbuf));
        dp_strbuf_printf(o, "<text x=\"%d\" y=\"%d\" class=\"id\">", x + 8, y + 16);
        if (shown_id != id) {
                dp_strbuf_puts(o, "<title>");
                dp_html_esc(o, id);
                dp_strbuf_puts(o, "</title>");
        }
        dp_html_esc(o, shown_id);
        dp_strbuf_puts(o, "</text>");
        if (tag[0]) {
                dp_strbuf_printf(o, "<text x=\"%d\" y=\"%d\" class=\"tag\">", x + BOX_W - 7, y + 15);
                dp_html_esc(o, tag);
                dp_strbuf_puts(o, "</text>");
        }
}

/* The inside of a device box, below its title. */
typedef struct area {
        int x, y, w, h;
} area;

/* A MIG GPU's inside: its instances (the units after it), each as wide as
 * its compute slices ("3g.40gb": 3), up to 4 a row. */
static int draw_mig(page *pg, const node_card *v, size_t k, bool bad, area in) {
        size_t first = v->phys[k] + 1, last = k + 1 < v->n_phys ? v->phys[k + 1] : v->n;
        size_t m = last - first;
        _cleanup_free_ cell *cs = calloc(m + 1, sizeof(cell));
        if (!cs) return -ENOMEM;
        for (size_t c = 0; c < m; c++) {
                const dp_doc_node *cu = v->units->items[first + c];
                const dp_doc_node *hb = seq_of(cu, "heldBy");
                const char *prof = dp_html_str(cu, "kind");
                char *g = NULL;
                unsigned long sl = strtoul(prof, &g, 10);
                cs[c] = (cell){.title = dp_html_str(cu, "id"),
                               .holder = hb && hb->n ? hb->items[0]->str : NULL,
                               .unhealthy = bad || streq(dp_html_str(cu, "health"), "Unhealthy"),
                               .weight = g != prof && *g == 'g' && sl <= 8 ? (unsigned)sl : 1};
        }
        size_t per = m > 4 ? (m + 1) / 2 : m;
        int rh = m > 4 ? (in.h - 2) / 2 : in.h;
        draw_cells(pg, in.x, in.y, in.w, rh, cs, DP_MIN(per, m));
        if (m > per) draw_cells(pg, in.x, in.y + rh + 2, in.w, rh, cs + per, m - per);
        return 0;
}

/* A partitioned GPU's inside: the held partitions, then the rest free
 * (nothing is free when a partition is the whole GPU). */
static void draw_partitions(page *pg, gpu_parts *gp, const char *id, bool bad, bool whole, area in) {
        for (size_t c = 0; c < gp->n; c++)
                gp->cells[c].unhealthy = bad;
        int used = whole ? in.w : in.w * 2 / 3;
        draw_cells(pg, in.x, in.y, used, in.h, gp->cells, gp->n);
        cell rest = {.label = "free", .title = id, .unhealthy = bad};
        if (!whole) draw_cells(pg, in.x + used + 2, in.y, in.w - used - 2, in.h, &rest, 1);
}

/* The holders of a time-sliced GPU's replicas: each holder's V1 replica ids
 * ("gpu-3:replica-1") say which share it has; the others are free. */
static void replica_holders(const page *pg, const node_card *v, const char *id, int ureps, cell *cs) {
        size_t l = strlen(id);
        for (size_t q = 0; v->pods && q < v->on_n; q++) {
                const dp_doc_node *pod = v->pods->items[pg->live.v[v->on + q].pod];
                const dp_doc_node *v1 = pod_devices(pod, "v1");
                for (size_t d = 0; v1 && d < v1->n; d++) {
                        const char *dev = v1->items[d]->str ? v1->items[d]->str : "";
                        if (strncmp(dev, id, l) || !startswith(dev + l, ":replica-")) continue;
                        long ri = strtol(dev + l + strlen(":replica-"), NULL, 10);
                        if (ri >= 0 && ri < ureps) cs[ri].holder = dp_html_str(pod, "name");
                }
        }
        for (int c = 0; c < ureps; c++)
                if (!cs[c].holder) cs[c].label = "free";
}

/* Any other device's inside: one cell per share (a Node object's shared GPU
 * as its document lists them, a time-sliced GPU's replicas) or per holder. */
static int draw_shared(page *pg, const node_card *v, const dp_doc_node *u, int ureps, bool bad, area in) {
        const char *id = dp_html_str(u, "id");
        const dp_doc_node *hb = seq_of(u, "heldBy"), *sh = seq_of(u, "shares");
        size_t nh = hb ? hb->n : 0;
        size_t slots = sh ? sh->n : ureps > 1 ? (size_t)ureps : DP_MAX(nh, (size_t)1);
        _cleanup_free_ cell *cs = calloc(slots + 1, sizeof(cell));
        if (!cs) return -ENOMEM;
        for (size_t c = 0; c < slots; c++)
                cs[c] = (cell){.title = id, .unhealthy = bad};
        if (sh)
                for (size_t c = 0; c < slots; c++) {
                        const char *h = dp_html_str(sh->items[c], "heldBy");
                        cs[c].title = dp_html_str(sh->items[c], "id");
                        cs[c].holder = h[0] ? h : NULL;
                }
        else if (ureps > 1)
                replica_holders(pg, v, id, ureps, cs);
        else
                for (size_t c = 0; c < nh; c++)
                        cs[c].holder = hb->items[c]->str;
        draw_cells(pg, in.x, in.y, in.w, in.h, cs, slots);
        return 0;
}

/* Physical device k's box at (x, y). */
static int draw_device(page *pg, node_card *v, size_t k, int x, int y) {
        dp_strbuf *o = pg->o;
        const dp_doc_node *u = v->units->items[v->phys[k]];
        const char *id = dp_html_str(u, "id");
        bool bad = streq(dp_html_str(u, "health"), "Unhealthy");
        dp_strbuf_printf(o, "<g class=\"dev%s\" data-device=\"", bad ? " unhealthy" : "");
        dp_html_esc(o, v->name);
        dp_strbuf_putc(o, '/');
        dp_html_esc(o, id);
        dp_strbuf_printf(o, "\"><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"7\" class=\"box\"/>", x, y,
                         BOX_W, BOX_H);
        /* a Node object's units say their own replicas; a Fleet node's are the node's */
        int ureps = v->obj ? (int)DP_MIN(int_of(u, "replicas"), 64) : v->replicas;
        char tagbuf[96];
        bool whole;
        device_title(o, id, device_tag(v, k, ureps, bad, tagbuf, sizeof(tagbuf), &whole), x, y);
        area in = {x + 6, y + 24, BOX_W - 12, BOX_H - 30};
        int r = 0;
        if (startswith(dp_html_str(u, "kind"), "gpu (MIG"))
                r = draw_mig(pg, v, k, bad, in);
        else if (v->parts[k].n)
                draw_partitions(pg, &v->parts[k], id, bad, whole, in);
        else
                r = draw_shared(pg, v, u, ureps, bad, in);
        dp_strbuf_puts(o, "</g>");
        return r;
}

/* A node's card: its header, then one box a physical device, PER_ROW a row. */
static int draw_node(page *pg, const dp_doc_node *node, size_t idx) {
        _cleanup_(node_card_done) node_card v = {
                .units = seq_of(node, "units"),
                .pods = seq_of(pg->run, "pods"),
                .name = dp_html_str(node, "name"),
                .obj = streq(dp_html_str(node, "profile"), "Node object"),
        };
        v.n = v.units ? v.units->n : 0;
        v.on = pods_on(&pg->live, v.name, &v.on_n);
        int r = node_card_devices(&v);
        if (r >= 0) r = node_card_partitions(pg, &v);
        if (r < 0) return r;
        v.replicas = replicas_of(node, v.n_whole);
        size_t cols = DP_MIN((size_t)PER_ROW, DP_MAX(v.n_phys, (size_t)1));
        size_t rows = (v.n_phys + cols - 1) / cols;
        int width = (int)cols * (BOX_W + GAP) + GAP, height = (int)rows * (BOX_H + GAP) + GAP;
        node_header(pg->o, node, idx, v.replicas);
        if (pg->fold) dp_html_fold_list(pg->o, pg->nodes, pg->fold, pg->shown, idx);
        dp_strbuf_printf(pg->o,
                         "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                         "role=\"img\">",
                         width, height, width, height);
        for (size_t k = 0; k < v.n_phys && r >= 0; k++)
                r = draw_device(pg, &v, k, GAP + (int)(k % cols) * (BOX_W + GAP),
                                GAP + (int)(k / cols) * (BOX_H + GAP));
        dp_strbuf_puts(pg->o, "</svg></div>\n");
        return r;
}

/* ---- sections ---- */

static void stat(dp_strbuf *o, const char *value, const char *label, bool bad) {
        dp_strbuf_printf(o, "<div class=\"stat%s\"><b>", bad ? " bad" : "");
        dp_html_esc(o, value);
        dp_strbuf_printf(o, "</b><span>%s</span></div>", label);
}

static void summary_cards(page *pg) {
        dp_strbuf *o = pg->o;
        const dp_doc_node *s = dp_doc_get(pg->run, "summary");
        long unhealthy = (long)(int_of(s, "devices") - int_of(s, "healthyDevices"));
        char b[32];
        dp_strbuf_puts(o, "<div class=\"cards\">");
        stat(o, dp_html_str(s, "nodes"), "nodes", false);
        stat(o, dp_html_str(s, "devices"), "devices", false);
        dp_fmt(b, sizeof(b), "%ld", unhealthy);
        stat(o, b, "unhealthy devices", unhealthy > 0);
        stat(o, dp_html_str(s, "running"), "pods running", false);
        stat(o, dp_html_str(s, "pending"), "pods pending", int_of(s, "pending") > 0);
        stat(o, dp_html_str(s, "waitingOnNode"), "waiting on a node", int_of(s, "waitingOnNode") > 0);
        stat(o, dp_html_str(s, "utilization"), "utilization", false);
        stat(o, dp_html_str(s, "fragmentation"), "fragmentation", false);
        dp_strbuf_puts(o, "</div>\n");
}

/* The legend: a colour per workload with its pods' states ("12/20
 * running"), in input order; wraps, scrolls past a few rows. */
static void legend(page *pg) {
        dp_strbuf *o = pg->o;
        dp_strbuf_puts(o, "<div class=\"legend\" id=\"legend\">");
        size_t shown = DP_MIN(pg->n_wls, (size_t)DP_SIM_HTML_WORKLOADS_MAX);
        for (size_t i = 0; i < shown; i++) {
                const workload *w = &pg->wls[i];
                dp_strbuf_printf(o, "<span class=\"item f\" data-workload=\"%zu\"><span class=\"sw w%zu\"></span>", i,
                                 i);
                boxed_name(o, "wl", w->label);
                dp_strbuf_printf(o,
                                 "<span class=\"cnt\" title=\"%zu pod%s: %zu running, %zu pending, %zu waiting on a "
                                 "node, %zu deleted or evicted\">%zu/%zu running</span></span>",
                                 w->pods, w->pods == 1 ? "" : "s", w->running, w->pending, w->waiting, w->gone,
                                 w->running, w->pods);
        }
        dp_strbuf_puts(o, "<span class=\"item\"><span class=\"sw free\"></span>free</span>"
                          "<span class=\"item\"><span class=\"sw claim\"></span>claim without a pod</span>"
                          "<span class=\"item\"><span class=\"sw bad\"></span>unhealthy</span></div>\n");
        if (pg->n_wls > shown)
                dp_strbuf_printf(o, "<p class=\"note\">%zu more workloads not listed (at most %d).</p>\n",
                                 pg->n_wls - shown, DP_SIM_HTML_WORKLOADS_MAX);
}

/* The colour of each workload as a class: .wN paints a box (background)
 * and a drawing (fill) alike. */
static void workload_styles(page *pg) {
        dp_strbuf *o = pg->o;
        dp_strbuf_puts(o, "<style>");
        for (size_t i = 0; i < pg->n_wls; i++) {
                char c[40];
                colour(c, sizeof(c), i);
                dp_strbuf_printf(o, ".w%zu{background:%s;fill:%s}", i, c, c);
        }
        dp_strbuf_puts(o, "</style>\n");
}

/* The pod states of a run's stacked bar, with their colours. */
static const struct {
        const char *key, *label, *fill;
} STATE_PARTS[] = {{"running", "running", "#43a047"},
                   {"waitingOnNode", "waiting on a node", "#e64a19"},
                   {"pending", "pending", "#f0a30a"},
                   {"deleted", "deleted", "#a0a4ab"},
                   {"evicted", "evicted", "#6d4c41"}};

/* A stacked bar of pod states for one run, its legend (every state with
 * its count), and device utilization as a bar with its figure. */
static void state_bar(dp_strbuf *o, const dp_doc_node *s) {
        int64_t total = 0;
        for (size_t i = 0; i < ELEMENTSOF(STATE_PARTS); i++)
                total += int_of(s, STATE_PARTS[i].key);
        dp_strbuf_puts(o,
                       "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"300\" height=\"18\" viewBox=\"0 0 300 18\" "
                       "class=\"bar-states\">");
        int x = 0;
        for (size_t i = 0; i < ELEMENTSOF(STATE_PARTS) && total > 0; i++) {
                int64_t v = int_of(s, STATE_PARTS[i].key);
                int w = (int)(v * 300 / total);
                if (i + 1 == ELEMENTSOF(STATE_PARTS)) w = 300 - x;
                if (v == 0) continue;
                dp_strbuf_printf(o,
                                 "<rect x=\"%d\" y=\"0\" width=\"%d\" height=\"18\" fill=\"%s\"><title>%" PRId64
                                 " %s</title></rect>",
                                 x, w, STATE_PARTS[i].fill, v, STATE_PARTS[i].label);
                x += w;
        }
        dp_strbuf_puts(o, "</svg><div class=\"clegend\">");
        for (size_t i = 0; i < ELEMENTSOF(STATE_PARTS); i++)
                dp_strbuf_printf(o, "<span><i class=\"sw\" style=\"background:%s\"></i>%" PRId64 " %s</span>",
                                 STATE_PARTS[i].fill, int_of(s, STATE_PARTS[i].key), STATE_PARTS[i].label);
        int util = tenths(dp_html_str(s, "utilization"));
        dp_strbuf_printf(o,
                         "</div><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"300\" height=\"10\" "
                         "viewBox=\"0 0 300 10\" class=\"bar-util\"><rect x=\"0\" y=\"0\" width=\"300\" height=\"10\" "
                         "rx=\"3\" fill=\"#e6e9ef\"/><rect x=\"0\" y=\"0\" width=\"%d\" height=\"10\" rx=\"3\" "
                         "fill=\"#3f6fd8\"/></svg><div class=\"clegend\"><span><i class=\"sw\" "
                         "style=\"background:#3f6fd8\"></i>devices in use: ",
                         util * 300 / 1000);
        dp_html_esc(o, dp_html_str(s, "devicesInUse"));
        dp_strbuf_puts(o, " (utilization ");
        dp_html_esc(o, dp_html_str(s, "utilization"));
        dp_strbuf_puts(
                o, ")</span><span><i class=\"sw\" style=\"background:#e6e9ef\"></i>free</span><span>fragmentation ");
        dp_html_esc(o, dp_html_str(s, "fragmentation"));
        dp_strbuf_puts(o, "</span></div>");
}

#define MINI_TIPS_NODES 256

/* One run's fleet, small: a row per node, a square per schedulable device
 * (a whole GPU, or each MIG instance of a GPU in MIG mode) coloured by its
 * first holder's workload; a GPU with DRA partitions of another driver held
 * takes the colour of the first pod holding one. Node names longer than
 * the label column are cut in the middle (the tooltip has the whole). */
static int minimap(page *pg, const dp_doc_node *run) {
        dp_strbuf *o = pg->o;
        const dp_doc_node *nodes = seq_of(run, "nodes"), *pods = seq_of(run, "pods");
        pod_index own = {0};
        const pod_index *ix = &pg->live;
        if (run != pg->run) {
                if (pod_index_build(pods, &own) < 0) return -ENOMEM;
                ix = &own;
        }
        size_t shown = DP_MIN(nodes ? nodes->n : 0, (size_t)DP_SIM_HTML_NODES_MAX), widest = 1, longest = 4;
        for (size_t i = 0; i < shown; i++) {
                const dp_doc_node *units = seq_of(nodes->items[i], "units");
                size_t w = 0;
                for (size_t u = 0; units && u < units->n; u++)
                        w += !startswith(dp_html_str(units->items[u], "kind"), "gpu (MIG");
                widest = DP_MAX(widest, w);
                longest = DP_MAX(longest, strlen(dp_html_str(nodes->items[i], "name")));
        }
        /* about 6 px a character at 10 px; at most 28 characters */
        const size_t label_chars = DP_MIN(longest, (size_t)28);
        const int S = 9, G = 2, L = (int)label_chars * 6 + 8, RH = 14;
        /* a tooltip per device (node/device: holder) up to MINI_TIPS_NODES nodes; one per node beyond */
        const bool per_device = shown <= MINI_TIPS_NODES;
        int width = L + (int)widest * (S + G), height = (int)shown * RH + 4;
        dp_strbuf_printf(o,
                         "<div class=\"clegend\"><span><i class=\"sw free\"></i>free device</span><span><i "
                         "class=\"sw\" style=\"background:hsl(210,68%%,40%%)\"></i>held (the workload's colour, "
                         "as above)</span><span><i class=\"sw\" style=\"border:2px solid #c62828\"></i>"
                         "unhealthy</span></div><div class=\"minibox\"><svg xmlns=\"http://www.w3.org/2000/svg\" "
                         "class=\"mini\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">",
                         width, height, width, height);
        for (size_t i = 0; i < shown; i++) {
                const dp_doc_node *node = nodes->items[i], *units = seq_of(node, "units");
                const char *name = dp_html_str(node, "name");
                size_t on_n, on = pods_on(ix, name, &on_n);
                int y = 2 + (int)i * RH;
                char nb[160];
                const char *label = cut_middle(name, label_chars, nb, sizeof(nb));
                dp_strbuf_printf(o, "<g><text x=\"0\" y=\"%d\">", y + S);
                if (label != name || !per_device) {
                        dp_strbuf_puts(o, "<title>");
                        dp_html_esc(o, name);
                        if (!per_device)
                                dp_strbuf_printf(o,
                                                 ": %s of %s healthy devices in use (the node's own card has each "
                                                 "device's holder)",
                                                 dp_html_str(node, "inUse"), dp_html_str(node, "healthy"));
                        dp_strbuf_puts(o, "</title>");
                }
                dp_html_esc(o, label);
                dp_strbuf_puts(o, "</text>");
                int x = L;
                for (size_t u = 0; units && u < units->n; u++) {
                        const dp_doc_node *unit = units->items[u], *hb = seq_of(unit, "heldBy");
                        if (startswith(dp_html_str(unit, "kind"), "gpu (MIG")) continue;
                        const char *id = dp_html_str(unit, "id"), *holder = hb && hb->n ? hb->items[0]->str : NULL;
                        size_t l = strlen(id);
                        for (size_t q = 0; !holder && pods && q < on_n; q++) {
                                const dp_doc_node *pod = pods->items[ix->v[on + q].pod], *v2 = pod_devices(pod, "v2");
                                for (size_t d = 0; v2 && d < v2->n && !holder; d++) {
                                        const char *dev = v2->items[d]->str ? v2->items[d]->str : "";
                                        if (strncmp(dev, id, l) == 0 &&
                                            (dev[l] == 0 || (dev[l] == '-' && !is_mig_unit_v2(units, dev))))
                                                holder = dp_html_str(pod, "name");
                                }
                        }
                        bool bad = streq(dp_html_str(unit, "health"), "Unhealthy");
                        char cls[32];
                        const char *wc = holder ? holder_class(pg, holder, cls, sizeof(cls)) : NULL;
                        dp_strbuf_printf(o, "<rect x=\"%d\" y=\"%d\"", x, y);
                        if (wc || bad)
                                dp_strbuf_printf(o, " class=\"%s%s%s\"", wc ? wc : "", wc && bad ? " " : "",
                                                 bad ? "bad" : "");
                        if (!wc) dp_strbuf_printf(o, " fill=\"%s\"", holder ? "#8a8f98" : "#fff");
                        x += S + G;
                        if (!per_device) {
                                dp_strbuf_puts(o, "/>");
                                continue;
                        }
                        dp_strbuf_puts(o, "><title>");
                        dp_html_esc(o, name);
                        dp_strbuf_putc(o, '/');
                        dp_html_esc(o, id);
                        dp_strbuf_puts(o, ": ");
                        dp_html_esc(o, holder ? holder : "free");
                        dp_strbuf_puts(o, bad ? " (unhealthy)</title></rect>" : "</title></rect>");
                }
                dp_strbuf_puts(o, "</g>");
        }
        dp_strbuf_puts(o, "</svg></div>");
        if (nodes && nodes->n > shown)
                dp_strbuf_printf(o, "<div class=\"note\">%zu more nodes</div>", nodes->n - shown);
        free(own.v);
        return 0;
}

/* Tables longer than this start folded. */
#define OPEN_ROWS_MAX 300

static int comparison(page *pg) {
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
                const dp_doc_node *run = k == 0 ? pg->run : pg->forced[k - 1];
                if (run && minimap(pg, run) < 0) return -ENOMEM;
                dp_strbuf_puts(o, "</div>");
        }
        const dp_doc_node *pods = seq_of(cmp, "pods");
        size_t n = pods ? pods->n : 0, shown = DP_MIN(n, (size_t)DP_SIM_HTML_PODS_MAX);
        /* pods whose state differs between the runs first: they are the comparison's answer */
        size_t differ = 0;
        for (size_t i = 0; i < n; i++) {
                const dp_doc_node *p = pods->items[i];
                const char *a = state_class(dp_html_str(p, "asWritten"));
                differ += strcmp(a, state_class(dp_html_str(p, "allV1"))) ||
                          strcmp(a, state_class(dp_html_str(p, "allV2")));
        }
        dp_strbuf_printf(o,
                         "</div>\n<details class=\"cmp\"%s><summary>Pod by pod: %zu pods, %zu of them in another "
                         "state under one model than under the other or as written (listed first)</summary>\n"
                         "<table class=\"cmp\"><tr><th>pod</th><th>as written</th><th>all V1</th>"
                         "<th>all V2</th></tr>\n",
                         n <= OPEN_ROWS_MAX ? " open" : "", n, differ);
        size_t listed = 0;
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < n && listed < shown; i++) {
                        const dp_doc_node *p = pods->items[i];
                        const char *a = state_class(dp_html_str(p, "asWritten"));
                        bool d = strcmp(a, state_class(dp_html_str(p, "allV1"))) ||
                                 strcmp(a, state_class(dp_html_str(p, "allV2")));
                        if (d != (pass == 0)) continue;
                        listed++;
                        const podref *pr = find_pod(pg, dp_html_str(p, "name"));
                        dp_strbuf_puts(o, "<tr class=\"f\"><td>");
                        if (pr)
                                dp_strbuf_printf(o, "<i class=\"sw w%zu\"></i> ", pr->wl);
                        else
                                dp_strbuf_puts(o, "<i class=\"sw claim\"></i> ");
                        short_name(o, dp_html_str(p, "name"));
                        dp_strbuf_puts(o, "</td>");
                        for (int k = 0; k < 3; k++) {
                                const char *v = dp_html_str(p, keys[k]);
                                dp_strbuf_printf(o, "<td class=\"%s\">", state_class(v));
                                dp_html_esc(o, v);
                                dp_strbuf_puts(o, "</td>");
                        }
                        dp_strbuf_puts(o, "</tr>\n");
                }
        dp_strbuf_puts(o, "</table></details>\n");
        if (n > shown) dp_strbuf_printf(o, "<p class=\"note\">%zu more pods not listed.</p>\n", n - shown);
        return 0;
}

/* ---- Pending pods, grouped by reason ---- */

/* The pods of one (state, reason): kube-scheduler's message is the same
 * for every pod that failed for the same reasons on the same nodes. */
typedef struct pgroup {
        char *key; /* state '\n' reason: the map's key */
        const char *state, *reason;
        size_t *pods; /* indices into the run's pods, input order */
        size_t n, cap;
} pgroup;

static int state_rank(const char *st) { return streq(st, "Pending") ? 0 : streq(st, "Waiting") ? 1 : 2; }

static int cmp_pgroup(const void *a, const void *b) {
        const pgroup *x = a, *y = b;
        int rx = state_rank(x->state), ry = state_rank(y->state);
        if (rx != ry) return rx - ry;
        if (x->n != y->n) return x->n > y->n ? -1 : 1;
        return strcmp(x->key, y->key);
}

static const char *diag_of(const page *pg, const char *pod) {
        const dp_sim_html_extra *ex = pg->extra;
        for (size_t i = 0; ex && i < ex->n_diag; i++)
                if (streq_ptr(ex->diag_keys[i], pod)) return ex->diag_texts[i];
        return NULL;
}

static int pending_group(page *pg, const dp_doc_node *pods, const pgroup *g, size_t *listed) {
        dp_strbuf *o = pg->o;
        const char *cls = state_class(g->state);
        const char *first = dp_html_str(pods->items[g->pods[0]], "name");
        dp_strbuf_printf(o, "<div class=\"pgroup f %s\"><div><span class=\"badge %s\">", cls, cls);
        dp_html_esc(o, g->state);
        dp_strbuf_printf(o, "</span> <b>%zu pod%s</b>", g->n, g->n == 1 ? "" : "s");
        /* the workloads they belong to, the largest first (at most 4 named) */
        size_t named = 0, wl_n = 0;
        _cleanup_free_ size_t *cnt = calloc(pg->n_wls + 1, sizeof(size_t));
        if (!cnt) return -ENOMEM;
        for (size_t i = 0; i < g->n; i++) {
                const podref *pr = find_pod(pg, dp_html_str(pods->items[g->pods[i]], "name"));
                if (pr && cnt[pr->wl]++ == 0) wl_n++;
        }
        dp_strbuf_printf(o, " <span class=\"note\">of %zu workload%s:", wl_n, wl_n == 1 ? "" : "s");
        while (named < 4 && named < wl_n) {
                size_t best = 0;
                for (size_t w = 1; w < pg->n_wls; w++)
                        if (cnt[w] > cnt[best]) best = w;
                dp_strbuf_printf(o, "%s <i class=\"sw w%zu\"></i> ", named ? "," : "", best);
                dp_html_esc(o, pg->wls[best].label);
                dp_strbuf_printf(o, " (%zu)", cnt[best]);
                cnt[best] = 0;
                named++;
        }
        if (wl_n > named) dp_strbuf_printf(o, ", %zu more", wl_n - named);
        dp_strbuf_puts(o, "</span></div><p class=\"reason\">");
        dp_html_esc(o, g->reason[0] ? g->reason : "no reason recorded");
        dp_strbuf_printf(o, "</p>\n<details><summary>The %zu pod%s</summary><div class=\"pods\">", g->n,
                         g->n == 1 ? "" : "s");
        for (size_t i = 0; i < g->n && *listed < DP_SIM_HTML_PODS_MAX; i++, (*listed)++) {
                const dp_doc_node *p = pods->items[g->pods[i]];
                const char *name = dp_html_str(p, "name");
                dp_strbuf_puts(o, "<span class=\"pod\" data-pod=\"");
                dp_html_esc(o, name);
                dp_strbuf_puts(o, "\" title=\"");
                dp_html_esc(o, dp_html_str(p, "attempts"));
                dp_strbuf_puts(o, int_of(p, "attempts") == 1 ? " scheduling attempt" : " scheduling attempts");
                if (streq(g->state, "Waiting")) {
                        dp_strbuf_puts(o, "; bound to ");
                        dp_html_esc(o, dp_html_str(p, "node"));
                }
                dp_strbuf_puts(o, "\">");
                short_name(o, name);
                dp_strbuf_puts(o, "</span>");
        }
        if (*listed >= DP_SIM_HTML_PODS_MAX && g->n) dp_strbuf_puts(o, "<span class=\"note\">(list cut)</span>");
        dp_strbuf_puts(o, "</div></details>\n");
        if (streq(g->state, "Pending")) {
                const char *why = diag_of(pg, first);
                dp_strbuf_puts(o, "<details><summary>Why, node by node: <code>devplane explain pod ");
                dp_html_esc(o, first);
                dp_strbuf_puts(o, why ? " --details</code></summary><pre class=\"why\">"
                                      : " --details</code> (not computed for this group)</summary><pre class=\"why\">");
                if (why)
                        dp_html_esc(o, why[0] == '\n' ? why + 1 : why);
                else
                        dp_strbuf_printf(o, "The per-node reasons are computed for the first %d groups only.",
                                         DP_SIM_HTML_DIAG_MAX);
                dp_strbuf_puts(o, "</pre></details>\n");
        }
        dp_strbuf_puts(o, "</div>\n");
        return 0;
}

static int pending(page *pg, const dp_doc_node *pods) {
        dp_strbuf *o = pg->o;
        _cleanup_(dp_hashmap_freep) dp_hashmap *idx = dp_hashmap_new();
        pgroup *g = NULL;
        size_t ng = 0, cap = 0, n = 0;
        int r = idx ? 0 : -ENOMEM;
        for (size_t i = 0; r >= 0 && pods && i < pods->n; i++) {
                const dp_doc_node *p = pods->items[i];
                const char *st = dp_html_str(p, "state");
                if (!streq(st, "Pending") && !streq(st, "Waiting") && !streq(st, "Evicted")) continue;
                n++;
                _cleanup_free_ char *key = dp_asprintf("%s\n%s", st, dp_html_str(p, "reason"));
                if (!key) {
                        r = -ENOMEM;
                        break;
                }
                size_t k = (size_t)(uintptr_t)dp_hashmap_get(idx, key);
                if (k == 0) {
                        if (DP_GROW(g, cap, ng + 1) < 0) {
                                r = -ENOMEM;
                                break;
                        }
                        g[ng] = (pgroup){.key = key, .state = st, .reason = dp_html_str(p, "reason")};
                        key = NULL;
                        if ((r = dp_hashmap_put(idx, g[ng].key, (void *)(uintptr_t)(ng + 1))) < 0) {
                                free(g[ng].key);
                                break;
                        }
                        k = ++ng;
                }
                pgroup *x = &g[k - 1];
                if (DP_GROW(x->pods, x->cap, x->n + 1) < 0) {
                        r = -ENOMEM;
                        break;
                }
                x->pods[x->n++] = i;
        }
        if (r >= 0) {
                if (ng) qsort(g, ng, sizeof(*g), cmp_pgroup);
                if (n == 0)
                        dp_strbuf_puts(o, "<p class=\"note\">No pod is Pending: every pod found its devices.</p>\n");
                else
                        dp_strbuf_printf(
                                o,
                                "<p class=\"note\">%zu pod%s in %zu group%s: the pods of a group have the same "
                                "state and reason (kube-scheduler's message names how many nodes gave each "
                                "reason). Each group lists its pods and, for Pending pods, every node's "
                                "reason for its first pod.</p>\n",
                                n, n == 1 ? "" : "s", ng, ng == 1 ? "" : "s");
                size_t listed = 0;
                for (size_t k = 0; k < ng && r >= 0; k++)
                        r = pending_group(pg, pods, &g[k], &listed);
                if (r >= 0 && n > DP_SIM_HTML_PODS_MAX)
                        dp_strbuf_printf(o, "<p class=\"note\">%zu pods not listed by name.</p>\n",
                                         n - (size_t)DP_SIM_HTML_PODS_MAX);
        }
        for (size_t k = 0; k < ng; k++) {
                free(g[k].key);
                free(g[k].pods);
        }
        free(g);
        return r;
}

static void unhealthy_list(page *pg, const dp_doc_node *nodes) {
        dp_strbuf *o = pg->o;
        bool any = false;
        for (size_t i = 0; nodes && i < nodes->n; i++) {
                const dp_doc_node *units = seq_of(nodes->items[i], "units");
                for (size_t u = 0; units && u < units->n; u++) {
                        if (!streq(dp_html_str(units->items[u], "health"), "Unhealthy")) continue;
                        if (!any)
                                dp_strbuf_puts(
                                        o, "<p class=\"unhealthy-list\"><span class=\"sw bad\"></span> Unhealthy: ");
                        else
                                dp_strbuf_puts(o, ", ");
                        any = true;
                        dp_strbuf_puts(o, "<b class=\"unhealthy\">");
                        dp_html_esc(o, dp_html_str(nodes->items[i], "name"));
                        dp_strbuf_putc(o, '/');
                        dp_html_esc(o, dp_html_str(units->items[u], "id"));
                        dp_strbuf_puts(o, "</b>");
                }
        }
        if (any) dp_strbuf_puts(o, " — no new pod receives these; pods already on them keep them.</p>\n");
}

/* What node must share with another to be folded into its card (html-fold.c):
 * every accelerator healthy and idle, or held (then by the same workloads),
 * or none at all; the same pool, model, product or profile, units (their
 * kinds, hashed) and devices that are not accelerators with their use.
 * *ret NULL (drawn whatever) for a node partly used or with an unhealthy
 * device. -ENOMEM. */
static int fold_key(const page *pg, const dp_doc_node *node, char **ret) {
        int64_t devices = int_of(node, "devices"), healthy = int_of(node, "healthy"), used = int_of(node, "inUse");
        *ret = NULL;
        if (devices != healthy || (used && used < healthy)) return 0;
        const dp_doc_node *units = seq_of(node, "units"), *other = seq_of(node, "otherDevices");
        uint64_t h = 1469598103934665603u; /* FNV-1a of the units' kinds */
        for (size_t i = 0; units && i < units->n; i++)
                for (const char *k = dp_html_str(units->items[i], "kind");; k++) {
                        h = (h ^ (unsigned char)*k) * 1099511628211u;
                        if (!*k) break;
                }
        _cleanup_free_ bool *held = used ? calloc(pg->n_wls + 1, sizeof(bool)) : NULL;
        if (used && !held) return -ENOMEM;
        for (size_t i = 0; held && units && i < units->n; i++) {
                const dp_doc_node *hb = seq_of(units->items[i], "heldBy");
                for (size_t k = 0; hb && k < hb->n; k++) {
                        const podref *p = hb->items[k]->str ? find_pod(pg, hb->items[k]->str) : NULL;
                        if (p && p->wl < pg->n_wls) held[p->wl] = true;
                }
        }
        const char *state = !devices ? "none" : used ? "full" : "idle";
        dp_strbuf key = DP_STRBUF_INIT;
        dp_strbuf_printf(&key, "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%" PRId64 "\x1f%016" PRIx64 "\x1f", state,
                         dp_html_str(node, "pool"), dp_html_str(node, "model"), dp_html_str(node, "product"),
                         dp_html_str(node, "profile"), devices, h);
        for (size_t i = 0; other && i < other->n; i++)
                dp_strbuf_printf(&key, "%s %" PRId64 "/%" PRId64 ",", dp_html_str(other->items[i], "name"),
                                 int_of(other->items[i], "inUse"), int_of(other->items[i], "total"));
        for (size_t w = 0; held && w < pg->n_wls; w++)
                if (held[w]) dp_strbuf_printf(&key, "\x1fw%zu", w);
        if (dp_strbuf_failed(&key)) {
                dp_strbuf_done(&key);
                return -ENOMEM;
        }
        *ret = dp_strbuf_steal(&key);
        return *ret ? 0 : -ENOMEM;
}

/* The node cards, those alike folded into the first of them past
 * DP_HTML_FOLD_MIN_NODES (html-fold.c). */
static int node_cards(page *pg) {
        size_t n = pg->shown;
        _cleanup_free_ char **keys = calloc(n + 1, sizeof(char *));
        int r = keys ? 0 : -ENOMEM;
        for (size_t i = 0; r >= 0 && n >= DP_HTML_FOLD_MIN_NODES && i < n; i++)
                r = fold_key(pg, pg->nodes->items[i], &keys[i]);
        if (r >= 0) r = dp_html_fold(keys, n, &pg->fold);
        for (size_t i = 0; keys && i < n; i++)
                free(keys[i]);
        size_t folded = 0;
        for (size_t i = 0; r >= 0 && i < n; i++)
                folded += pg->fold[i] != i;
        if (r >= 0 && folded)
                dp_strbuf_printf(pg->o,
                                 "<p class=\"note\">%zu of the %zu nodes are folded into the card of a node like "
                                 "them (the same pool, model and devices, every accelerator idle or every one held "
                                 "by the same workloads, or none): open \"+N more\" for their names.</p>\n",
                                 folded, n);
        dp_strbuf_puts(pg->o, "<div class=\"nodes\">\n");
        for (size_t i = 0; r >= 0 && i < n; i++)
                if (pg->fold[i] == i) r = draw_node(pg, pg->nodes->items[i], i);
        dp_strbuf_puts(pg->o, "</div>\n");
        return r;
}

static int render(page *pg) {
        dp_strbuf *o = pg->o;
        const dp_doc_node *pods = seq_of(pg->run, "pods"), *nodes = seq_of(pg->run, "nodes");
        /* a cluster dump (Node objects, no Fleet) is a cluster, not a fleet */
        const char *what = pg->extra && pg->extra->cluster ? "Cluster" : "Fleet";
        /* a cluster is named by what it was read from (the document's "cluster") */
        const char *title = dp_html_str(pg->doc, "cluster")[0] && pg->extra && pg->extra->cluster
                                    ? dp_html_str(pg->doc, "cluster")
                                    : dp_html_str(pg->doc, "fleet");
        dp_strbuf_printf(o,
                         "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                         "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
                         "<title>devplane simulate: %s ",
                         what);
        dp_html_esc(o, title);
        dp_strbuf_printf(o, "</title><style>%s</style>\n", CSS);
        workload_styles(pg);
        dp_strbuf_puts(o, "</head>\n<body>\n");
        /* the hatch pattern every unhealthy device uses */
        dp_strbuf_puts(o, "<svg width=\"0\" height=\"0\" style=\"position:absolute\" aria-hidden=\"true\"><defs>"
                          "<pattern id=\"dp-hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
                          "patternTransform=\"rotate(45)\"><rect width=\"2.5\" height=\"6\" fill=\"#c62828\" "
                          "fill-opacity=\"0.55\"/></pattern></defs></svg>\n");
        dp_strbuf_printf(o, "<header><h1>%s ", what);
        dp_html_esc(o, title);
        dp_strbuf_puts(o, "</h1><p>devplane simulate · scoring ");
        dp_html_esc(o, dp_html_str(pg->doc, "scoring"));
        dp_strbuf_puts(o, " · simulated until t=");
        dp_html_esc(o, dp_html_str(pg->run, "endSeconds"));
        dp_strbuf_puts(o, pg->extra && pg->extra->cluster
                                  ? "s · as read (each node on the model its objects give it)</p></header>\n"
                                  : "s · as written (each node on the model its group names)</p></header>\n");
        dp_strbuf_puts(o, "<nav class=\"bar\"><input id=\"q\" type=\"search\" placeholder=\"Filter nodes, pods, "
                          "workloads, reasons…\" aria-label=\"filter\"><span id=\"qn\" class=\"note\"></span>"
                          "<a href=\"#overview\">Overview</a><a href=\"#fleet\">Nodes</a><a "
                          "href=\"#pending\">Pending</a><a href=\"#compare\">V1 vs V2</a>");
        if (dp_html_has_queues(pg->run)) dp_strbuf_puts(o, "<a href=\"#queues\">Queues</a>");
        dp_strbuf_puts(o, "<a href=\"#timeline\">Timeline</a></nav>\n<main>\n");
        summary_cards(pg);
        size_t shown = DP_MIN(nodes ? nodes->n : 0, (size_t)DP_SIM_HTML_NODES_MAX);
        if (dp_html_overview(o, nodes, shown) < 0) return -ENOMEM;
        dp_strbuf_printf(o, "<h2 id=\"fleet\">%s: devices coloured by the workload of the pods that hold them</h2>\n",
                         what);
        legend(pg);
        unhealthy_list(pg, nodes);
        dp_strbuf_puts(o, "<p class=\"note\">A box is a physical device. MIG instances and DRA partitions are drawn "
                          "inside their GPU; a time-sliced GPU is split into its replicas (shares of one GPU, no "
                          "isolation between them). Hover for device ids and the pods holding them.</p>\n");
        pg->nodes = nodes;
        pg->shown = shown;
        int r = node_cards(pg);
        if (r < 0) return r;
        if (nodes && nodes->n > shown)
                dp_strbuf_printf(o, "<p class=\"note\">%zu more nodes not drawn (at most %d).</p>\n", nodes->n - shown,
                                 DP_SIM_HTML_NODES_MAX);
        dp_strbuf_puts(o, "<h2 id=\"pending\">Pending pods and why</h2>\n");
        r = pending(pg, pods);
        if (r < 0) return r;
        dp_strbuf_puts(o, "<h2 id=\"compare\">V1 vs V2: the same workload with every node on one model</h2>\n");
        if ((r = comparison(pg)) < 0) return r;
        dp_html_queues(o, pg->run); /* Kueue's quota over time, when the input has queues (html-queue.c) */
        dp_strbuf_puts(o, "<h2 id=\"timeline\">Timeline</h2>\n");
        dp_html_timeline(o, pg->run);
        dp_strbuf_printf(o,
                         "</main>\n<footer>Made by devplane simulate --report. Self-contained: no external resource; "
                         "the one script is the filter box.</footer>\n<script>%s</script>\n</body></html>\n",
                         SCRIPT);
        return dp_strbuf_failed(o) ? -ENOMEM : 0;
}

static void workloads_done(page *pg) {
        for (size_t i = 0; i < pg->n_wls; i++)
                free(pg->wls[i].label);
        free(pg->wls);
        pg->wls = NULL;
        pg->n_wls = 0;
}

/* Each pod's workload: its owner's (from extra), else the pod alone. */
static int workloads_get(page *pg, const dp_doc_node *pods) {
        const dp_sim_html_extra *ex = pg->extra;
        _cleanup_(dp_hashmap_freep) dp_hashmap *owners = ex ? dp_hashmap_new() : NULL, *wl = dp_hashmap_new();
        if ((ex && !owners) || !wl) return -ENOMEM;
        for (size_t i = 0; ex && i < ex->n_pods; i++)
                if (ex->pod_keys[i] && ex->workloads[i] &&
                    dp_hashmap_put(owners, ex->pod_keys[i], (void *)ex->workloads[i]) == -ENOMEM)
                        return -ENOMEM;
        size_t cap = 0;
        /* in input order, so the first pod's workload gets the first colour */
        _cleanup_free_ size_t *of = calloc(pg->n_pods + 1, sizeof(size_t));
        if (!of) return -ENOMEM;
        for (size_t i = 0; i < pg->n_pods; i++) {
                const dp_doc_node *p = pods->items[i];
                const char *name = dp_html_str(p, "name"), *owner = owners ? dp_hashmap_get(owners, name) : NULL;
                const char *slash = strchr(name, '/');
                _cleanup_free_ char *label = NULL;
                if (owner) {
                        /* "Deployment/train" in namespace ns: "Deployment ns/train" */
                        const char *os = strchr(owner, '/');
                        label = dp_asprintf("%.*s %.*s%s", os ? (int)(os - owner) : (int)strlen(owner), owner,
                                            slash ? (int)(slash - name + 1) : 0, name, os ? os + 1 : "");
                } else
                        label = dp_asprintf("Pod %s", name);
                if (!label) return -ENOMEM;
                size_t k = (size_t)(uintptr_t)dp_hashmap_get(wl, label);
                if (k == 0) {
                        if (DP_GROW(pg->wls, cap, pg->n_wls + 1) < 0) return -ENOMEM;
                        pg->wls[pg->n_wls] = (workload){.label = TAKE_PTR(label)};
                        if (dp_hashmap_put(wl, pg->wls[pg->n_wls].label, (void *)(uintptr_t)(pg->n_wls + 1)) < 0) {
                                free(pg->wls[pg->n_wls].label);
                                return -ENOMEM;
                        }
                        k = ++pg->n_wls;
                }
                workload *w = &pg->wls[k - 1];
                of[i] = k - 1;
                w->pods++;
                const char *st = state_class(dp_html_str(p, "state"));
                if (streq(st, "running"))
                        w->running++;
                else if (streq(st, "pending"))
                        w->pending++;
                else if (streq(st, "waiting"))
                        w->waiting++;
                else
                        w->gone++;
        }
        for (size_t i = 0; i < pg->n_pods; i++)
                pg->by_name[i].wl = of[pg->by_name[i].idx];
        return 0;
}

int dp_sim_html_render_doc(const dp_doc_node *doc, const dp_doc_node *const forced_runs[2],
                           const dp_sim_html_extra *extra, dp_strbuf *out, dp_error *err) {
        const dp_doc_node *run = doc && doc->type == DP_DOC_MAP ? dp_doc_get(doc, "asWritten") : NULL;
        if (!run || run->type != DP_DOC_MAP)
                return dp_error_set(err, -EINVAL, "report: not a simulate report document");
        page pg = {.o = out, .doc = doc, .run = run, .extra = extra};
        for (int k = 0; k < 2 && forced_runs; k++)
                pg.forced[k] = forced_runs[k] && forced_runs[k]->type == DP_DOC_MAP ? forced_runs[k] : NULL;
        const dp_doc_node *pods = seq_of(run, "pods");
        pg.n_pods = pods ? pods->n : 0;
        _cleanup_free_ podref *refs = calloc(pg.n_pods + 1, sizeof(podref));
        if (!refs) return -ENOMEM;
        for (size_t i = 0; i < pg.n_pods; i++)
                refs[i] = (podref){.name = dp_html_str(pods->items[i], "name"), .idx = i, .pod = pods->items[i]};
        qsort(refs, pg.n_pods, sizeof(podref), cmp_podref);
        pg.by_name = refs;
        int r = workloads_get(&pg, pods);
        if (r >= 0) r = pod_index_build(pods, &pg.live);
        if (r >= 0) r = render(&pg);
        workloads_done(&pg);
        free(pg.live.v);
        free(pg.fold);
        return r;
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
        return dp_sim_html_render_doc(doc, fr, NULL, out, err);
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
