/* SPDX-License-Identifier: Apache-2.0
 * html-timeline.c — the report page's last section: the run's events on a
 * time axis, a row per kind, and the event list (html-internal.h). */
#include <inttypes.h>
#include <stdio.h>

#include "sched/fmt.h"
#include "sched/html-internal.h"
#include "sched/html.h"

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

void dp_html_timeline(dp_strbuf *o, const dp_doc_node *run) {
        const dp_doc_node *ev = dp_doc_get(run, "events");
        if (ev && ev->type != DP_DOC_SEQ) ev = NULL;
        int64_t end = strtoll(dp_html_str(run, "endSeconds"), NULL, 10);
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
        /* the list scrolls past about 30 lines (5,000 events were 52,000 px of page) */
        dp_strbuf_puts(o, "</svg>\n<div class=\"evbox\"><ol class=\"events\">");
        for (size_t i = 0; i < DP_MIN(n, (size_t)DP_SIM_HTML_EVENTS_MAX); i++) {
                const char *line = ev->items[i]->str ? ev->items[i]->str : "", *rest;
                int64_t t = event_time(line, &rest);
                dp_strbuf_printf(
                        o, "<li class=\"f\"><span class=\"t\">t=%" PRId64 "s</span><span class=\"dot k-%s\"></span>", t,
                        event_kind(rest));
                dp_html_esc(o, rest);
                dp_strbuf_puts(o, "</li>");
        }
        dp_strbuf_puts(o, "</ol></div>\n");
        if (n > DP_SIM_HTML_EVENTS_MAX)
                dp_strbuf_printf(o, "<p class=\"note\">%zu more events not listed.</p>\n",
                                 n - (size_t)DP_SIM_HTML_EVENTS_MAX);
}
