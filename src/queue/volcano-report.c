/* SPDX-License-Identifier: Apache-2.0
 *
 * volcano-report.c — Volcano's admission as a document (`simulate -o
 * json|yaml`, key "volcano") and as text: per queue its state, weight,
 * deserved, allocated, share and whether it is overused; per PodGroup its
 * phase (Pending, Inqueue, Running) and Volcano's reason and message.
 */
#include <inttypes.h>
#include <stdio.h>

#include "queue/volcano-internal.h"

#define PUT(s, m, k, v)                                                                                                \
        do {                                                                                                           \
                if (dp_doc_map_add((s), (m), (k), (v)) < 0) return NULL;                                               \
        } while (0)

static const char *phase_name(dp_vc_phase p) {
        return p == DP_VC_RUNNING ? "Running" : p == DP_VC_INQUEUE ? "Inqueue" : "Pending";
}

/* A vector as {resource: quantity}, the resources that are not 0 (cpu and
 * memory always). */
static dp_doc_node *vec_doc(dp_doc_set *s, const dp_volcano *v, const double *x) {
        dp_doc_node *m = dp_doc_new_map(s);
        if (!m) return NULL;
        for (size_t d = 0; d < v->n_dims; d++) {
                if (d >= 2 && x[d] < VC_EPS) continue;
                char buf[64];
                if (x[d] > 1e18)
                        snprintf(buf, sizeof(buf), "unlimited");
                else
                        dp_volcano_format(v, d, x[d], buf, sizeof(buf));
                PUT(s, m, v->dims[d], dp_doc_new_str(s, buf));
        }
        return m;
}

/* The capacity plugin's DRA quota of queue q: per class named in some
 * capability, what it holds and its limit (0: none). */
static dp_doc_node *dra_doc(dp_doc_set *s, const dp_volcano *v, size_t q) {
        dp_doc_node *d = dp_doc_new_map(s);
        for (size_t c = 0; d && c < v->n_dra; c++) {
                char key[300], val[64];
                snprintf(key, sizeof(key), "deviceclass/%s", v->dra_classes[c]);
                snprintf(val, sizeof(val), "%" PRId64 "/%" PRId64, v->dra_alloc[q * v->n_dra + c],
                         v->dra_cap[q * v->n_dra + c]);
                PUT(s, d, key, dp_doc_new_str(s, val));
        }
        return d;
}

static dp_doc_node *queue_doc(dp_doc_set *s, const dp_volcano *v, const dp_vc_queue_info *q) {
        dp_doc_node *d = dp_doc_new_map(s);
        if (!d) return NULL;
        char share[32];
        snprintf(share, sizeof(share), "%.4g", q->share);
        PUT(s, d, "name", dp_doc_new_str(s, q->name));
        PUT(s, d, "state", dp_doc_new_str(s, q->queue && q->queue->state ? q->queue->state : "Open"));
        PUT(s, d, "weight", dp_doc_new_int(s, q->queue ? q->queue->weight : 1));
        if (q->queue && q->queue->priority) PUT(s, d, "priority", dp_doc_new_int(s, q->queue->priority));
        if (q->queue && q->queue->parent) PUT(s, d, "parent", dp_doc_new_str(s, q->queue->parent));
        PUT(s, d, "dequeueStrategy", dp_doc_new_str(s, q->queue && q->queue->fifo ? "fifo" : "traverse"));
        if (!q->queue) PUT(s, d, "note", dp_doc_new_str(s, "not in the input: Volcano's installation creates it"));
        if (q->note) PUT(s, d, "note", dp_doc_new_str(s, q->note));
        if (v->n_dra) PUT(s, d, "dra", dra_doc(s, v, (size_t)(q - v->qs)));
        PUT(s, d, "deserved", vec_doc(s, v, q->deserved));
        PUT(s, d, "allocated", vec_doc(s, v, q->allocated));
        PUT(s, d, "realCapability", vec_doc(s, v, q->real_capability));
        PUT(s, d, "share", dp_doc_new_raw(s, share));
        PUT(s, d, "overused", dp_doc_new_bool(s, q->active && q->overused));
        PUT(s, d, "pending", dp_doc_new_int(s, (int64_t)q->pending));
        PUT(s, d, "inqueue", dp_doc_new_int(s, (int64_t)q->inqueued));
        PUT(s, d, "running", dp_doc_new_int(s, (int64_t)q->running));
        return d;
}

static dp_doc_node *job_doc(dp_doc_set *s, const dp_vc_job *j) {
        dp_doc_node *d = dp_doc_new_map(s);
        if (!d) return NULL;
        char name[600];
        snprintf(name, sizeof(name), "%s/%s", j->ns, j->name);
        PUT(s, d, "name", dp_doc_new_str(s, name));
        PUT(s, d, "queue", dp_doc_new_str(s, j->queue));
        PUT(s, d, "phase", dp_doc_new_str(s, phase_name(j->phase)));
        PUT(s, d, "minMember", dp_doc_new_int(s, j->min_member));
        PUT(s, d, "pods", dp_doc_new_int(s, (int64_t)j->n_tasks));
        PUT(s, d, "priority", dp_doc_new_int(s, j->priority));
        if (j->implicit) PUT(s, d, "implicit", dp_doc_new_bool(s, true));
        if (j->session) PUT(s, d, "session", dp_doc_new_int(s, (int64_t)j->session));
        if (j->reason) PUT(s, d, "reason", dp_doc_new_str(s, j->reason));
        if (j->message) PUT(s, d, "message", dp_doc_new_str(s, j->message));
        if (j->note) PUT(s, d, "note", dp_doc_new_str(s, j->note));
        return d;
}

dp_doc_node *dp_volcano_encode(dp_doc_set *s, const dp_volcano *v) {
        dp_doc_node *d = dp_doc_new_map(s), *qs = dp_doc_new_seq(s), *jobs = dp_doc_new_seq(s);
        if (!d || !qs || !jobs) return NULL;
        for (size_t i = 0; i < v->n_qs; i++) /* "default" not in the input shows when a job uses it */
                if ((v->qs[i].queue || v->qs[i].active) && dp_doc_seq_add(s, qs, queue_doc(s, v, &v->qs[i])) < 0)
                        return NULL;
        for (size_t j = 0; j < v->n_jobs; j++)
                if (dp_doc_seq_add(s, jobs, job_doc(s, &v->jobs[j])) < 0) return NULL;
        PUT(s, d, "plugin", dp_doc_new_str(s, dp_volcano_plugin_name(v)));
        PUT(s, d, "sessions", dp_doc_new_int(s, (int64_t)v->sessions));
        PUT(s, d, "total", vec_doc(s, v, v->total));
        PUT(s, d, "queues", qs);
        PUT(s, d, "podGroups", jobs);
        return d;
}

/* ---- text ---- */

static const char *str_of(const dp_doc_node *n, const char *key) {
        const dp_doc_node *v = dp_doc_get(n, key);
        return v && v->type == DP_DOC_SCALAR ? v->str : "";
}

static void vec_text(const dp_doc_node *m, dp_strbuf *out) {
        for (size_t i = 0; m && m->type == DP_DOC_MAP && i < m->n; i++)
                dp_strbuf_printf(out, "%s%s=%s", i ? "," : "", m->pairs[i].key, m->pairs[i].value->str);
}

void dp_volcano_print(const dp_doc_node *doc, dp_strbuf *out) {
        const dp_doc_node *qs = dp_doc_get(doc, "queues"), *jobs = dp_doc_get(doc, "podGroups");
        dp_strbuf_printf(out, "Volcano admission (%s plugin, %s sessions; cluster ", str_of(doc, "plugin"),
                         str_of(doc, "sessions"));
        vec_text(dp_doc_get(doc, "total"), out);
        dp_strbuf_puts(out, ")\n");
        for (size_t i = 0; qs && i < qs->n; i++) {
                const dp_doc_node *q = qs->items[i];
                dp_strbuf_printf(out, "Queue %s (%s, weight %s, %s): %s running, %s inqueue, %s pending; deserved ",
                                 str_of(q, "name"), str_of(q, "state"), str_of(q, "weight"),
                                 str_of(q, "dequeueStrategy"), str_of(q, "running"), str_of(q, "inqueue"),
                                 str_of(q, "pending"));
                vec_text(dp_doc_get(q, "deserved"), out);
                dp_strbuf_puts(out, " allocated ");
                vec_text(dp_doc_get(q, "allocated"), out);
                dp_strbuf_printf(out, " share %s%s\n", str_of(q, "share"),
                                 streq(str_of(q, "overused"), "true") ? " (overused)" : "");
                const dp_doc_node *dra = dp_doc_get(q, "dra");
                if (dra && dra->n) {
                        dp_strbuf_puts(out, "    DRA quota (allocated/capability, 0: none) ");
                        vec_text(dra, out);
                        dp_strbuf_puts(out, "\n");
                }
                if (str_of(q, "note")[0]) dp_strbuf_printf(out, "    note: %s\n", str_of(q, "note"));
        }
        for (size_t i = 0; jobs && i < jobs->n; i++) {
                const dp_doc_node *j = jobs->items[i];
                dp_strbuf_printf(out, "  PodGroup %-40s %-8s queue %s\n", str_of(j, "name"), str_of(j, "phase"),
                                 str_of(j, "queue"));
                if (str_of(j, "message")[0])
                        dp_strbuf_printf(out, "      %s: %s\n", str_of(j, "reason"), str_of(j, "message"));
                if (str_of(j, "note")[0]) dp_strbuf_printf(out, "      note: %s\n", str_of(j, "note"));
        }
}
