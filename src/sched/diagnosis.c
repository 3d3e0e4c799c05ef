/* SPDX-License-Identifier: Apache-2.0
 * diagnosis.c — verdict codes, their histogram and kube-scheduler's
 * "0/N nodes are available" message (diagnosis.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "sched/diagnosis.h"
#include "sched/fmt.h"

void dp_diag_strings_done(dp_diag_strings *t) {
        for (size_t i = 0; i < t->n; i++)
                free(t->strs[i]);
        free(t->strs);
        dp_hashmap_free(t->ids);
        *t = (dp_diag_strings){0};
}

int64_t dp_diag_intern(dp_diag_strings *t, const char *s) {
        if (!s || !s[0]) return 0;
        if (!t->ids && !(t->ids = dp_hashmap_new())) return -ENOMEM;
        uintptr_t id = (uintptr_t)dp_hashmap_get(t->ids, s);
        if (id) return (int64_t)id; /* stored as id + 1, and id 0 is "" */
        if (DP_GROW(t->strs, t->cap, t->n + 1) < 0) return -ENOMEM;
        char *c = dp_strdup(s);
        if (!c) return -ENOMEM;
        if (dp_hashmap_put(t->ids, c, (void *)(uintptr_t)(t->n + 1)) < 0) {
                free(c);
                return -ENOMEM;
        }
        t->strs[t->n++] = c;
        return (int64_t)t->n;
}

const char *dp_diag_string(const dp_diag_strings *t, uint32_t id) {
        return id == 0 || id > t->n ? "" : t->strs[id - 1];
}

void dp_diag_hist_clear(dp_diag_hist *h) {
        free(h->v);
        *h = (dp_diag_hist){0};
}

int dp_diag_hist_add(dp_diag_hist *h, dp_verdict_code code, uint32_t arg) {
        for (size_t i = 0; i < h->n; i++)
                if (h->v[i].code == code && h->v[i].arg == arg) {
                        h->v[i].nodes++;
                        return 0;
                }
        if (DP_GROW(h->v, h->cap, h->n + 1) < 0) return -ENOMEM;
        h->v[h->n++] = (dp_diag_count){(uint16_t)code, arg, 1};
        return 0;
}

void dp_verdict_text(dp_verdict_code code, const char *arg, char *buf, size_t size) {
        switch (code) {
        case DP_VERDICT_FIT: dp_fmt(buf, size, "fits"); break;
        case DP_VERDICT_NODE_UNSCHEDULABLE: dp_fmt(buf, size, "node(s) were unschedulable"); break;
        case DP_VERDICT_TAINT: dp_fmt(buf, size, "node(s) had untolerated taint %s", arg); break;
        case DP_VERDICT_AFFINITY: dp_fmt(buf, size, "node(s) didn't match Pod's node affinity/selector"); break;
        case DP_VERDICT_INSUFFICIENT_CPU: dp_fmt(buf, size, "Insufficient cpu"); break;
        case DP_VERDICT_INSUFFICIENT_MEMORY: dp_fmt(buf, size, "Insufficient memory"); break;
        case DP_VERDICT_INSUFFICIENT: dp_fmt(buf, size, "Insufficient %s", arg); break;
        case DP_VERDICT_CLAIM_UNREACHABLE:
                dp_fmt(buf, size, "resourceclaim %s is allocated to devices another node cannot reach", arg);
                break;
        case DP_VERDICT_DRA: dp_fmt(buf, size, "cannot allocate all claims"); break;
        /* inter-pod affinity and topology spread */
        case DP_VERDICT_SPREAD: dp_fmt(buf, size, "node(s) didn't match pod topology spread constraints"); break;
        case DP_VERDICT_SPREAD_LABEL:
                dp_fmt(buf, size, "node(s) didn't match pod topology spread constraints (missing required label)");
                break;
        case DP_VERDICT_POD_AFFINITY: dp_fmt(buf, size, "node(s) didn't match pod affinity rules"); break;
        case DP_VERDICT_POD_ANTI_AFFINITY: dp_fmt(buf, size, "node(s) didn't match pod anti-affinity rules"); break;
        case DP_VERDICT_EXISTING_ANTI_AFFINITY:
                dp_fmt(buf, size, "node(s) didn't satisfy existing pods anti-affinity rules");
                break;
        case DP_VERDICT_TOO_MANY_PODS: dp_fmt(buf, size, "Too many pods"); break;
        case DP_VERDICT_NODE_PORTS: dp_fmt(buf, size, "node(s) didn't have free ports for the requested pod ports"); break;
        case DP_VERDICT_NO_VICTIMS: dp_fmt(buf, size, "No preemption victims found for incoming pod"); break;
        case DP_VERDICT_NOT_HELPFUL: dp_fmt(buf, size, "Preemption is not helpful for scheduling"); break;
        default: dp_fmt(buf, size, "unknown verdict %d", (int)code); break;
        }
}

bool dp_verdict_unresolvable(dp_verdict_code code, bool dra_preemption) {
        switch (code) {
        case DP_VERDICT_NODE_UNSCHEDULABLE:
        case DP_VERDICT_TAINT:
        case DP_VERDICT_AFFINITY:
        case DP_VERDICT_CLAIM_UNREACHABLE:
        case DP_VERDICT_SPREAD_LABEL:
        case DP_VERDICT_POD_AFFINITY:
        case DP_VERDICT_NO_VICTIMS:
        case DP_VERDICT_NOT_HELPFUL: return true;
        case DP_VERDICT_DRA: return !dra_preemption;
        default: return false;
        }
}

typedef struct text_count {
        char *text;
        size_t n;
} text_count;

static int cmp_text(const void *a, const void *b) {
        return strcmp(((const text_count *)a)->text, ((const text_count *)b)->text);
}

char *dp_diag_message(const dp_diag_hist *h, const dp_diag_strings *t, size_t n_nodes) {
        text_count *v = calloc(h->n + 1, sizeof(*v));
        if (!v) return NULL;
        char *msg = NULL;
        size_t n = 0;
        for (size_t i = 0; i < h->n; i++) {
                char b[768];
                if (h->v[i].code == DP_VERDICT_TAINT) /* the summary does not name the taint */
                        dp_fmt(b, sizeof(b), "node(s) had untolerated taint(s)");
                else
                        dp_verdict_text(h->v[i].code, dp_diag_string(t, h->v[i].arg), b, sizeof(b));
                size_t j = 0;
                while (j < n && !streq(v[j].text, b)) /* two arguments, one text (taints, truncation) */
                        j++;
                if (j < n) {
                        v[j].n += h->v[i].nodes;
                        continue;
                }
                if (!(v[n].text = dp_strdup(b))) goto out;
                v[n++].n = h->v[i].nodes;
        }
        for (size_t i = 0; i < n; i++) { /* "count text", sorted as strings */
                char *c = dp_asprintf("%zu %s", v[i].n, v[i].text);
                if (!c) goto out;
                free(v[i].text);
                v[i].text = c;
        }
        qsort(v, n, sizeof(*v), cmp_text);
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_strbuf_printf(&sb, "0/%zu nodes are available", n_nodes);
        for (size_t i = 0; i < n; i++)
                dp_strbuf_printf(&sb, "%s %s", i ? "," : ":", v[i].text);
        dp_strbuf_puts(&sb, ".");
        msg = dp_strbuf_steal(&sb); /* NULL when the buffer failed */
out:
        for (size_t i = 0; i < n; i++)
                free(v[i].text);
        free(v);
        return msg;
}
