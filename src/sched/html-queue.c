/* SPDX-License-Identifier: Apache-2.0
 * html-queue.c — the report page's Queues section (html-internal.h,
 * docs/report.md): per Kueue ClusterQueue, and per Cohort, its quota used
 * over time as inline SVG step charts, one per flavor and resource, against
 * its nominal quota (and borrowing limit), the part above nominal
 * (borrowed) in another colour; under each the admissions, finishes and
 * preemptions as marks with the workloads' names, how many wait, and who
 * waited. Where admission stopped on a proved preemption loop (queue/loop.c)
 * the section says so and every chart marks it.
 *
 * Drawn from the report document's asWritten.queues.usageOverTime
 * (queue/history.c), which says the axis: Kueue's cycles at t=0 without a
 * Timeline, the simulated time with one. No script; integer coordinates,
 * so the same input gives the same bytes.
 */
#include <inttypes.h>
#include <stdio.h>

#include "queue/queue.h"
#include "sched/html-internal.h"
#include "sched/html.h"

/* the chart's geometry, px */
#define CW 720
#define CL 64 /* left margin: the value labels */
#define CR 14
#define CT 10
#define CH 90                 /* the plot's height */
#define MARK_Y (CT + CH + 28) /* admitted; finished and preempted a row lower each */
#define MARK_ROW 10
#define CHART_H (MARK_Y + 2 * MARK_ROW + 8)
/* per-step tooltips only for lines this short (the numbers are in -o json) */
#define STEP_TITLES_MAX 64
/* names in one mark's tooltip */
#define MARK_NAMES_MAX 10
/* entries of a ClusterQueue's "who waited" list */
#define WAITED_MAX 50

typedef struct qaxis {
        bool time;   /* seconds; else cycles */
        int64_t end; /* the axis' last value, >= 1 */
        bool churn;  /* admission stopped for churn at churn_at */
        int64_t churn_at;
        const char *res; /* the series' resource, for formatting */
} qaxis;

static int64_t num(const dp_doc_node *n, const char *key) { return strtoll(dp_html_str(n, key), NULL, 10); }

static const dp_doc_node *seq(const dp_doc_node *n, const char *key) {
        const dp_doc_node *v = dp_doc_get(n, key);
        return v && v->type == DP_DOC_SEQ ? v : NULL;
}

static int64_t at(const qaxis *ax, const dp_doc_node *p) { return num(p, ax->time ? "t" : "cycle"); }

static int xpos(const qaxis *ax, int64_t v) {
        v = DP_MAX(0, DP_MIN(v, ax->end));
        return CL + (int)((double)(CW - CL - CR) * (double)v / (double)ax->end + 0.5);
}

static int ypos(int64_t v, int64_t ymax) { return CT + CH - (int)((double)CH * (double)v / (double)ymax + 0.5); }

/* "t=30s (cycle 3)" or "cycle 3" */
static void when(dp_strbuf *o, const qaxis *ax, const dp_doc_node *p) {
        if (ax->time)
                dp_strbuf_printf(o, "t=%" PRId64 "s (cycle %" PRId64 ")", num(p, "t"), num(p, "cycle"));
        else
                dp_strbuf_printf(o, "cycle %" PRId64, num(p, "cycle"));
}

static void fmt(const qaxis *ax, int64_t v, char *buf, size_t size) { dp_queue_format(ax->res, v, buf, size); }

/* The axis line, its ticks (at most 8 round steps), the value labels. */
static void frame(dp_strbuf *o, const qaxis *ax, int64_t ymax) {
        int64_t step = 1; /* 1 2 5 10 20 50 ...: the first giving at most 8 ticks */
        for (int64_t p = 1, k = 0; ax->end / step > 8; k = (k + 1) % 3, p *= k ? 1 : 10)
                step = p * (k == 0 ? 2 : k == 1 ? 5 : 10);
        dp_strbuf_printf(o, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#1d2330\"/>", CL, CT + CH, CW - CR,
                         CT + CH);
        for (int64_t v = 0; v <= ax->end; v += step)
                dp_strbuf_printf(o,
                                 "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#1d2330\"/><text x=\"%d\" "
                                 "y=\"%d\" font-size=\"10\" text-anchor=\"middle\" fill=\"#5b6475\">%s%" PRId64
                                 "%s</text>",
                                 xpos(ax, v), CT + CH, xpos(ax, v), CT + CH + 4, xpos(ax, v), CT + CH + 15,
                                 !ax->time && !v ? "cycle " : "", v, ax->time ? "s" : "");
        char top[64];
        fmt(ax, ymax, top, sizeof(top));
        dp_strbuf_printf(o,
                         "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\" fill=\"#5b6475\">0</text>"
                         "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\" fill=\"#5b6475\">",
                         CL - 4, CT + CH + 3, CL - 4, CT + 8);
        dp_html_esc(o, top);
        dp_strbuf_puts(o, "</text>");
}

/* A dashed level (nominal, nominal + borrowing limit) with its label. */
static void level(dp_strbuf *o, const qaxis *ax, int64_t v, int64_t ymax, const char *what, const char *dash) {
        char buf[64];
        fmt(ax, v, buf, sizeof(buf));
        int y = ypos(v, ymax);
        dp_strbuf_printf(o,
                         "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#1d2330\" stroke-dasharray=\"%s\"/>"
                         "<text x=\"%d\" y=\"%d\" font-size=\"9\" text-anchor=\"end\" fill=\"#1d2330\">%s ",
                         CL, y, CW - CR, y, dash, CL - 4, y + 3, what);
        dp_html_esc(o, buf);
        dp_strbuf_puts(o, "</text>");
}

/* The step line's outline: "M x y H x V y ..." from the first point to
 * the axis' end; closed down to zero when area. */
static void step_path(dp_strbuf *o, const qaxis *ax, const dp_doc_node *pts, int64_t ymax, bool area) {
        int x0 = xpos(ax, at(ax, pts->items[0]));
        dp_strbuf_printf(o, "M%d %d", x0, area ? ypos(0, ymax) : ypos(num(pts->items[0], "used"), ymax));
        for (size_t i = 0; i < pts->n; i++) {
                if (i || area) dp_strbuf_printf(o, "V%d", ypos(num(pts->items[i], "used"), ymax));
                int x1 = i + 1 < pts->n ? xpos(ax, at(ax, pts->items[i + 1])) : xpos(ax, ax->end);
                dp_strbuf_printf(o, "H%d", x1);
        }
        if (area) dp_strbuf_printf(o, "V%dZ", ypos(0, ymax));
}

/* One hover box per step: when, the value, of the nominal, borrowed. */
static void step_titles(dp_strbuf *o, const qaxis *ax, const dp_doc_node *pts, int64_t nominal) {
        for (size_t i = 0; pts->n <= STEP_TITLES_MAX && i < pts->n; i++) {
                int x0 = xpos(ax, at(ax, pts->items[i]));
                int x1 = i + 1 < pts->n ? xpos(ax, at(ax, pts->items[i + 1])) : xpos(ax, ax->end);
                if (x1 <= x0) continue;
                char used[64], nom[64], bor[64];
                fmt(ax, num(pts->items[i], "used"), used, sizeof(used));
                fmt(ax, nominal, nom, sizeof(nom));
                fmt(ax, num(pts->items[i], "borrowed"), bor, sizeof(bor));
                dp_strbuf_printf(o, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"transparent\"><title>",
                                 x0, CT, x1 - x0, CH);
                when(o, ax, pts->items[i]);
                dp_strbuf_puts(o, ": ");
                dp_html_esc(o, used);
                dp_strbuf_puts(o, " used of ");
                dp_html_esc(o, nom);
                dp_strbuf_puts(o, " nominal, ");
                dp_html_esc(o, bor);
                dp_strbuf_puts(o, " borrowed</title></rect>");
        }
}

/* Events at one x of one kind share a mark; its tooltip names them. */
static void marks(dp_strbuf *o, const qaxis *ax, const dp_doc_node *ev) {
        for (size_t i = 0; ev && i < ev->n;) {
                const char *kind = dp_html_str(ev->items[i], "kind");
                int x = xpos(ax, at(ax, ev->items[i]));
                size_t j = i;
                while (j < ev->n && streq(dp_html_str(ev->items[j], "kind"), kind) &&
                       xpos(ax, at(ax, ev->items[j])) == x)
                        j++;
                const int y = MARK_Y + MARK_ROW * (streq(kind, "admitted") ? 0 : streq(kind, "finished") ? 1 : 2);
                dp_strbuf_printf(o, "<g class=\"qev qev-%s\"><title>", kind);
                when(o, ax, ev->items[i]);
                dp_strbuf_printf(o, ": %s ", kind);
                for (size_t k = i; k < j && k < i + MARK_NAMES_MAX; k++) {
                        dp_strbuf_puts(o, k > i ? ", " : "");
                        dp_html_esc(o, dp_html_str(ev->items[k], "workload"));
                        if (streq(kind, "preempted")) {
                                dp_strbuf_puts(o, " by ");
                                dp_html_esc(o, dp_html_str(ev->items[k], "by"));
                        }
                }
                if (j - i > MARK_NAMES_MAX) dp_strbuf_printf(o, " (+%zu more)", j - i - MARK_NAMES_MAX);
                dp_strbuf_puts(o, "</title>");
                if (streq(kind, "admitted"))
                        dp_strbuf_printf(o, "<path d=\"M%d %dL%d %dL%d %dZ\" fill=\"#2e9e4f\"/>", x - 4, y + 4, x,
                                         y - 4, x + 4, y + 4);
                else if (streq(kind, "finished"))
                        dp_strbuf_printf(o, "<circle cx=\"%d\" cy=\"%d\" r=\"3.5\" fill=\"#8a8f98\"/>", x, y);
                else
                        dp_strbuf_printf(o,
                                         "<path d=\"M%d %dL%d %dM%d %dL%d %d\" stroke=\"#c62828\" "
                                         "stroke-width=\"2\"/>",
                                         x - 4, y - 4, x + 4, y + 4, x - 4, y + 4, x + 4, y - 4);
                dp_strbuf_puts(o, "</g>");
                i = j;
        }
}

/* The largest value the chart must show, with room above it. */
static int64_t chart_top(const dp_doc_node *series, const dp_doc_node *pts) {
        int64_t nominal = num(series, "nominal"), top = nominal;
        if (dp_html_str(series, "borrowingLimit")[0]) top += num(series, "borrowingLimit");
        for (size_t i = 0; i < pts->n; i++)
                top = DP_MAX(top, num(pts->items[i], "used"));
        return DP_MAX(top + (top + 7) / 8, (int64_t)1);
}

/* One flavor-resource's chart; id tells its clip path apart. */
static void chart(dp_strbuf *o, const qaxis *axis, const dp_doc_node *series, const dp_doc_node *ev, size_t id) {
        const dp_doc_node *pts = seq(series, "points");
        if (!pts || !pts->n) return;
        qaxis ax = *axis;
        ax.res = dp_html_str(series, "resource");
        int64_t nominal = num(series, "nominal"), ymax = chart_top(series, pts);
        dp_strbuf_puts(o, "<div class=\"qser\">");
        dp_html_esc(o, dp_html_str(series, "flavor"));
        dp_strbuf_puts(o, " · ");
        dp_html_esc(o, ax.res);
        dp_strbuf_printf(o,
                         "</div><svg xmlns=\"http://www.w3.org/2000/svg\" class=\"qchart\" width=\"%d\" "
                         "height=\"%d\" viewBox=\"0 0 %d %d\" data-flavor=\"",
                         CW, CHART_H, CW, CHART_H);
        dp_html_esc(o, dp_html_str(series, "flavor"));
        dp_strbuf_puts(o, "\" data-resource=\"");
        dp_html_esc(o, ax.res);
        dp_strbuf_printf(o, "\" data-nominal=\"%" PRId64 "\" data-steps=\"", nominal);
        for (size_t i = 0; i < pts->n; i++)
                dp_strbuf_printf(o, "%s%" PRId64 "/%" PRId64 "=%" PRId64, i ? " " : "", num(pts->items[i], "t"),
                                 num(pts->items[i], "cycle"), num(pts->items[i], "used"));
        dp_strbuf_printf(o,
                         "\"><defs><clipPath id=\"qc%zu\"><rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\"/>"
                         "</clipPath></defs><path fill=\"#9ecae1\" d=\"",
                         id, CW, ypos(nominal, ymax));
        step_path(o, &ax, pts, ymax, true);
        dp_strbuf_printf(o, "\"/><path fill=\"#f4a259\" clip-path=\"url(#qc%zu)\" d=\"", id);
        step_path(o, &ax, pts, ymax, true);
        dp_strbuf_puts(o, "\"/><path fill=\"none\" stroke=\"#08306b\" stroke-width=\"1.5\" d=\"");
        step_path(o, &ax, pts, ymax, false);
        dp_strbuf_puts(o, "\"/>");
        frame(o, &ax, ymax);
        level(o, &ax, nominal, ymax, "nominal", "5 3");
        if (dp_html_str(series, "borrowingLimit")[0])
                level(o, &ax, nominal + num(series, "borrowingLimit"), ymax, "+ borrowing limit", "2 2");
        if (ax.churn)
                dp_strbuf_printf(o,
                                 "<g class=\"qchurn\"><title>admission stopped here: preemption churn</title><line "
                                 "x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#c62828\" stroke-width=\"2\" "
                                 "stroke-dasharray=\"4 2\"/></g>",
                                 xpos(&ax, ax.churn_at), CT, xpos(&ax, ax.churn_at), MARK_Y + 2 * MARK_ROW + 4);
        step_titles(o, &ax, pts, nominal);
        marks(o, &ax, ev);
        dp_strbuf_puts(o, "</svg>\n");
}

/* How many of the ClusterQueue's workloads wait, as a thin step strip. */
static void waiting_strip(dp_strbuf *o, const qaxis *ax, const dp_doc_node *pend) {
        int64_t top = 1;
        for (size_t i = 0; pend && i < pend->n; i++)
                top = DP_MAX(top, num(pend->items[i], "waiting"));
        if (!pend || !pend->n) return;
        dp_strbuf_printf(o,
                         "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"qwait\" width=\"%d\" height=\"28\" "
                         "viewBox=\"0 0 %d 28\"><text x=\"%d\" y=\"16\" font-size=\"9\" text-anchor=\"end\" "
                         "fill=\"#5b6475\">waiting<title>at most %" PRId64 " waiting</title></text>",
                         CW, CW, CL - 4, top);
        for (size_t i = 0; i < pend->n; i++) {
                int64_t v = num(pend->items[i], "waiting");
                int x0 = xpos(ax, at(ax, pend->items[i]));
                int x1 = i + 1 < pend->n ? xpos(ax, at(ax, pend->items[i + 1])) : xpos(ax, ax->end);
                int h = (int)(24 * v / top);
                if (x1 <= x0 || !v) continue;
                dp_strbuf_printf(o, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#e69b00\"><title>", x0,
                                 26 - h, x1 - x0, h);
                when(o, ax, pend->items[i]);
                dp_strbuf_printf(o, ": %" PRId64 " waiting</title></rect>", v);
        }
        dp_strbuf_puts(o, "</svg>\n");
}

/* Who waited: admitted after the first cycle (or later than t=0), and
 * those still waiting at the end with Kueue's message. */
static void waited(dp_strbuf *o, const qaxis *ax, const dp_doc_node *ev, const dp_doc_node *wls) {
        size_t late = 0, still = 0, listed = 0;
        for (size_t i = 0; ev && i < ev->n; i++)
                late += streq(dp_html_str(ev->items[i], "kind"), "admitted") &&
                        (num(ev->items[i], "t") > 0 || num(ev->items[i], "cycle") > 1);
        for (size_t i = 0; wls && i < wls->n; i++)
                still += streq(dp_html_str(wls->items[i], "state"), "Pending");
        if (!late && !still) return;
        dp_strbuf_printf(o,
                         "<details class=\"qwho\"><summary>Who waited: %zu admitted after waiting, %zu still "
                         "waiting at the end</summary><ul>",
                         late, still);
        for (size_t i = 0; ev && i < ev->n && listed < WAITED_MAX; i++) {
                const dp_doc_node *e = ev->items[i];
                if (!streq(dp_html_str(e, "kind"), "admitted") || (num(e, "t") <= 0 && num(e, "cycle") <= 1)) continue;
                dp_strbuf_puts(o, "<li>");
                dp_html_esc(o, dp_html_str(e, "workload"));
                dp_strbuf_puts(o, " waited until ");
                when(o, ax, e);
                dp_strbuf_puts(o, "</li>");
                listed++;
        }
        for (size_t i = 0; wls && i < wls->n && listed < WAITED_MAX; i++) {
                const dp_doc_node *w = wls->items[i];
                if (!streq(dp_html_str(w, "state"), "Pending")) continue;
                dp_strbuf_puts(o, "<li>");
                dp_html_esc(o, dp_html_str(w, "name"));
                dp_strbuf_puts(o, " still waiting: ");
                dp_html_esc(o, dp_html_str(w, "message"));
                dp_strbuf_puts(o, "</li>");
                listed++;
        }
        if (late + still > listed) dp_strbuf_printf(o, "<li>%zu more</li>", late + still - listed);
        dp_strbuf_puts(o, "</ul></details>\n");
}

/* One ClusterQueue (hist: its usageOverTime entry, doc: its queues entry). */
static void cq_card(dp_strbuf *o, const qaxis *ax, const dp_doc_node *hist, const dp_doc_node *doc, size_t *id) {
        dp_strbuf_puts(o, "<div class=\"qcard f\"><h3>ClusterQueue ");
        dp_html_esc(o, dp_html_str(hist, "name"));
        dp_strbuf_puts(o, "</h3><p class=\"note\">");
        if (dp_html_str(hist, "cohort")[0]) {
                dp_strbuf_puts(o, "cohort ");
                dp_html_esc(o, dp_html_str(hist, "cohort"));
                dp_strbuf_puts(o, " · ");
        }
        dp_strbuf_printf(o, "at the end: %" PRId64 " admitted, %" PRId64 " pending</p>\n", num(doc, "admitted"),
                         num(doc, "pending"));
        const dp_doc_node *ser = seq(hist, "series"), *ev = seq(hist, "events");
        for (size_t i = 0; ser && i < ser->n; i++)
                chart(o, ax, ser->items[i], ev, (*id)++);
        waiting_strip(o, ax, seq(hist, "pending"));
        if (num(hist, "eventsDropped"))
                dp_strbuf_printf(o, "<p class=\"note\">%" PRId64 " more events not marked (at most %d kept).</p>\n",
                                 num(hist, "eventsDropped"), DP_QUEUE_HISTORY_EVENTS_MAX);
        waited(o, ax, ev, seq(doc, "workloads"));
        dp_strbuf_puts(o, "</div>\n");
}

/* The axis: the simulated time when anything happened after t=0, else
 * the cycles. */
static qaxis axis_of(const dp_doc_node *run, const dp_doc_node *hist) {
        qaxis ax = {.time = streq(dp_html_str(hist, "axis"), "time")};
        ax.end = ax.time ? num(run, "endSeconds") : num(hist, "cycles");
        const dp_doc_node *cqs = seq(hist, "clusterQueues");
        for (size_t c = 0; ax.time && cqs && c < cqs->n; c++) {
                const dp_doc_node *ev = seq(cqs->items[c], "events"), *ser = seq(cqs->items[c], "series");
                if (ev && ev->n) ax.end = DP_MAX(ax.end, num(ev->items[ev->n - 1], "t"));
                for (size_t i = 0; ser && i < ser->n; i++) {
                        const dp_doc_node *pts = seq(ser->items[i], "points");
                        if (pts && pts->n) ax.end = DP_MAX(ax.end, num(pts->items[pts->n - 1], "t"));
                }
        }
        /* room after the last change: a tenth of the time, one cycle */
        ax.end = ax.time ? ax.end + DP_MAX(ax.end / 10, (int64_t)1) : ax.end + 1;
        const dp_doc_node *churn = dp_doc_get(hist, "churnStop");
        if ((ax.churn = churn && churn->type == DP_DOC_MAP)) ax.churn_at = at(&ax, churn);
        return ax;
}

static void intro(dp_strbuf *o, const qaxis *ax, const dp_doc_node *hist) {
        dp_strbuf_printf(o,
                         "<p class=\"note\">Per ClusterQueue and flavor-resource, the quota used (blue; above the "
                         "nominal quota, borrowed from the cohort: orange) against the nominal quota (dashed) and "
                         "nominal plus borrowing limit (dotted), %s. Under the axis: <span style=\"color:#2e9e4f\">"
                         "▲ admitted</span>, <span style=\"color:#8a8f98\">● finished</span>, <span "
                         "style=\"color:#c62828\">✕ preempted</span> (hover for the workloads); under each chart how "
                         "many wait. A line keeps at most %d changes (the rest: -o json's usageOverTime says "
                         "dropped).</p>\n",
                         ax->time ? "over the simulated time (the Timeline released quota)"
                                  : "over Kueue's scheduling cycles (no Timeline: all at t=0)",
                         DP_QUEUE_HISTORY_POINTS_MAX);
        const dp_doc_node *c = dp_doc_get(hist, "churnStop");
        if (!ax->churn) return;
        dp_strbuf_puts(o, "<p class=\"qchurn-note\"><b>Admission stopped at ");
        when(o, ax, c);
        dp_strbuf_puts(o, ":</b> ");
        dp_html_esc(o, dp_html_str(c, "workload"));
        dp_strbuf_puts(o, " in ClusterQueue ");
        dp_html_esc(o, dp_html_str(c, "clusterQueue"));
        dp_strbuf_printf(o, " was preempted %" PRId64 " times (last by ", num(c, "timesPreempted"));
        dp_html_esc(o, dp_html_str(c, "by"));
        dp_strbuf_puts(o, "): the admission state after this cycle is one seen before, so Kueue would repeat the "
                          "cycles between forever (a proved preemption loop); devplane stops admission there "
                          "(red dashed line).</p>\n");
}

/* The Cohorts: their ClusterQueues' use summed against the subtree's quota. */
static void cohorts(dp_strbuf *o, const qaxis *ax, const dp_doc_node *list, size_t *id) {
        size_t n = list ? list->n : 0;
        if (!n) return;
        dp_strbuf_puts(o, "<h3>Cohorts: their ClusterQueues' use summed, against the nominal quota of the whole "
                          "cohort</h3>\n");
        for (size_t i = 0; i < DP_MIN(n, (size_t)DP_SIM_HTML_COHORTS_MAX); i++) {
                dp_strbuf_puts(o, "<div class=\"qcard f\"><h3>Cohort ");
                dp_html_esc(o, dp_html_str(list->items[i], "name"));
                dp_strbuf_puts(o, "</h3>\n");
                const dp_doc_node *ser = seq(list->items[i], "series");
                for (size_t k = 0; ser && k < ser->n; k++)
                        chart(o, ax, ser->items[k], NULL, (*id)++);
                dp_strbuf_puts(o, "</div>\n");
        }
        if (n > DP_SIM_HTML_COHORTS_MAX)
                dp_strbuf_printf(o, "<p class=\"note\">%zu more cohorts not drawn (at most %d).</p>\n",
                                 n - DP_SIM_HTML_COHORTS_MAX, DP_SIM_HTML_COHORTS_MAX);
}

bool dp_html_has_queues(const dp_doc_node *run) {
        return dp_doc_get(dp_doc_get(run, "queues"), "usageOverTime") != NULL;
}

void dp_html_queues(dp_strbuf *o, const dp_doc_node *run) {
        const dp_doc_node *queues = dp_doc_get(run, "queues"), *hist = dp_doc_get(queues, "usageOverTime");
        if (!hist || hist->type != DP_DOC_MAP) return;
        qaxis ax = axis_of(run, hist);
        const dp_doc_node *cqs = seq(hist, "clusterQueues"), *docs = seq(queues, "clusterQueues");
        size_t n = cqs ? cqs->n : 0, id = 0;
        dp_strbuf_puts(o, "<h2 id=\"queues\">Queues: quota used over time</h2>\n");
        intro(o, &ax, hist);
        for (size_t c = 0; c < DP_MIN(n, (size_t)DP_SIM_HTML_QUEUES_MAX); c++) {
                const dp_doc_node *doc = docs && c < docs->n ? docs->items[c] : NULL;
                if (doc && !streq(dp_html_str(doc, "name"), dp_html_str(cqs->items[c], "name"))) doc = NULL;
                cq_card(o, &ax, cqs->items[c], doc, &id);
        }
        if (n > DP_SIM_HTML_QUEUES_MAX)
                dp_strbuf_printf(o,
                                 "<p class=\"note\">%zu more ClusterQueues not drawn (at most %d; -o json has "
                                 "every one under asWritten.queues.usageOverTime).</p>\n",
                                 n - DP_SIM_HTML_QUEUES_MAX, DP_SIM_HTML_QUEUES_MAX);
        cohorts(o, &ax, seq(hist, "cohorts"), &id);
}
