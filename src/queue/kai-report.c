/* SPDX-License-Identifier: Apache-2.0
 *
 * kai-report.c — what KAI's admission does to the input (started groups'
 * pods go to devplane's kube-scheduler engine, evicted groups' pods lose
 * their node) and the result as a document (`simulate -o json|yaml`, key
 * "kaiQueues": per queue deserved, fair share, allocated and limit per
 * resource; per group its state and KAI's reason) and as text.
 */
#include <stdio.h>

#include "queue/kai-internal.h"

#define PUT(s, m, k, v)                                                                                                \
        do {                                                                                                           \
                if (dp_doc_map_add((s), (m), (k), (v)) < 0) return NULL;                                               \
        } while (0)

static const char *const res_names[DP_KAI_NRES] = {"cpu", "memory", "gpu"};

static const char *kai_state_name(dp_kai_state s) {
        return s == DP_KAI_RUNNING    ? "Running"
               : s == DP_KAI_ADMITTED ? "Admitted"
               : s == DP_KAI_EVICTED  ? "Evicted"
                                      : "Pending";
}

/* ---- apply ---- */

int dp_kai_apply(const dp_kai *k, dp_object_list *l, dp_error *err) {
        assert_return(k && l, -EINVAL);
        (void)err;
        for (size_t i = 0; i < k->n_pods; i++) {
                const dp_kai_pod *kp = &k->pods[i];
                dp_pod *p = kp->pod;
                if (k->g[kp->group].state == DP_KAI_EVICTED && kp->running) {
                        free(p->node_name); /* evicted: it waits again, with its scheduler */
                        p->node_name = NULL;
                } else if (!kp->running && kp->node != KAI_NONE) {
                        free(p->scheduler_name); /* KAI placed it: devplane's scheduler places it again */
                        p->scheduler_name = NULL;
                }
        }
        return 0;
}

/* ---- document ---- */

static dp_doc_node *num(dp_doc_set *s, double v) {
        char buf[64];
        snprintf(buf, sizeof(buf), "%.10g", v); /* cpu millicores, memory MB, gpu devices */
        return dp_doc_new_raw(s, buf);
}

static dp_doc_node *per_res(dp_doc_set *s, const double v[DP_KAI_NRES]) {
        dp_doc_node *m = dp_doc_new_map(s);
        if (!m) return NULL;
        for (int r = 0; r < DP_KAI_NRES; r++)
                PUT(s, m, res_names[r], num(s, v[r]));
        return m;
}

static dp_doc_node *queue_doc(dp_doc_set *s, const dp_kai *k, const dp_kai_queue *q) {
        dp_doc_node *d = dp_doc_new_map(s);
        if (!d) return NULL;
        PUT(s, d, "name", dp_doc_new_str(s, q->name));
        if (q->parent != KAI_NONE) PUT(s, d, "parent", dp_doc_new_str(s, k->q[q->parent].name));
        PUT(s, d, "priority", dp_doc_new_int(s, q->priority));
        PUT(s, d, "deserved", per_res(s, q->deserved));
        PUT(s, d, "fairShare", per_res(s, q->fair));
        PUT(s, d, "allocated", per_res(s, q->allocated));
        PUT(s, d, "requested", per_res(s, q->request));
        PUT(s, d, "limit", per_res(s, q->limit));
        PUT(s, d, "overQuotaWeight", per_res(s, q->weight));
        return d;
}

static dp_doc_node *group_doc(dp_doc_set *s, const dp_kai_group *g) {
        dp_doc_node *d = dp_doc_new_map(s);
        if (!d) return NULL;
        char name[600];
        snprintf(name, sizeof(name), "%s/%s", g->ns, g->name);
        PUT(s, d, "name", dp_doc_new_str(s, name));
        PUT(s, d, "kind", dp_doc_new_str(s, g->bare_pod ? "Pod" : g->from_job ? "Job" : "PodGroup"));
        if (g->queue) PUT(s, d, "queue", dp_doc_new_str(s, g->queue));
        PUT(s, d, "priority", dp_doc_new_int(s, g->priority));
        PUT(s, d, "preemptible", dp_doc_new_bool(s, g->preemptible));
        PUT(s, d, "minMember", dp_doc_new_int(s, g->min_member));
        PUT(s, d, "pods", dp_doc_new_uint(s, g->n_pods));
        PUT(s, d, "state", dp_doc_new_str(s, kai_state_name(g->state)));
        PUT(s, d, "admitted", dp_doc_new_bool(s, g->state == DP_KAI_RUNNING || g->state == DP_KAI_ADMITTED));
        PUT(s, d, "startedPods", dp_doc_new_uint(s, g->started));
        if (g->reason && g->state != DP_KAI_ADMITTED && g->state != DP_KAI_RUNNING) {
                PUT(s, d, "reason", dp_doc_new_str(s, g->reason));
                PUT(s, d, "message", dp_doc_new_str(s, g->message));
        }
        if (g->by) PUT(s, d, "evicted", dp_doc_new_str(s, g->by));
        return d;
}

dp_doc_node *dp_kai_encode(dp_doc_set *s, const dp_kai *k) {
        dp_doc_node *d = dp_doc_new_map(s), *qs = dp_doc_new_seq(s), *gs = dp_doc_new_seq(s);
        if (!d || !qs || !gs) return NULL;
        PUT(s, d, "policy", dp_doc_new_str(s, "kai"));
        PUT(s, d, "capacity", per_res(s, k->capacity));
        for (size_t i = 0; i < k->n_q; i++)
                if (dp_doc_seq_add(s, qs, queue_doc(s, k, &k->q[i])) < 0) return NULL;
        for (size_t i = 0; i < k->n_g; i++)
                if (dp_doc_seq_add(s, gs, group_doc(s, &k->g[i])) < 0) return NULL;
        PUT(s, d, "queues", qs);
        PUT(s, d, "groups", gs);
        return d;
}

/* ---- text ---- */

static const char *str_of(const dp_doc_node *n, const char *key) {
        const dp_doc_node *v = dp_doc_get(n, key);
        return v && v->type == DP_DOC_SCALAR ? v->str : "";
}

static void res_line(const dp_doc_node *q, const char *key, dp_strbuf *out) {
        const dp_doc_node *m = dp_doc_get(q, key);
        if (!streq(key, "capacity")) dp_strbuf_printf(out, " %s", key);
        for (int r = 0; r < DP_KAI_NRES; r++)
                dp_strbuf_printf(out, " %s=%s", res_names[r], str_of(m, res_names[r]));
}

void dp_kai_print(const dp_doc_node *doc, dp_strbuf *out) {
        const dp_doc_node *qs = dp_doc_get(doc, "queues"), *gs = dp_doc_get(doc, "groups");
        dp_strbuf_puts(out, "KAI-Scheduler fair share (capacity, the nodes' allocatable:");
        res_line(doc, "capacity", out);
        dp_strbuf_puts(out, ")\n");
        for (size_t i = 0; qs && i < qs->n; i++) {
                const dp_doc_node *q = qs->items[i];
                dp_strbuf_printf(out, "Queue %s%s%s:", str_of(q, "name"), str_of(q, "parent")[0] ? " in " : "",
                                 str_of(q, "parent"));
                res_line(q, "deserved", out);
                res_line(q, "fairShare", out);
                res_line(q, "allocated", out);
                dp_strbuf_putc(out, '\n');
        }
        for (size_t i = 0; gs && i < gs->n; i++) {
                const dp_doc_node *g = gs->items[i];
                dp_strbuf_printf(out, "  %-40s %-8s queue %s: %s\n", str_of(g, "name"), str_of(g, "kind"),
                                 str_of(g, "queue"), str_of(g, "state"));
                if (str_of(g, "reason")[0])
                        dp_strbuf_printf(out, "      %s: %s\n", str_of(g, "reason"), str_of(g, "message"));
                if (str_of(g, "evicted")[0]) dp_strbuf_printf(out, "      %s\n", str_of(g, "evicted"));
        }
}
