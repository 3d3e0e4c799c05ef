/* SPDX-License-Identifier: Apache-2.0
 * explain-answers.c — numbers and names under explain's reasons
 * (explain-answers.h). */
#include <stdio.h>

#include "base/escape.h"
#include "doc/doc.h"
#include "model/quantity.h"
#include "sched/explain-answers.h"

#define SHOWN_VALUES 6 /* label values listed, most nodes first */
#define SHOWN_NODES 3

/* ---- kube-scheduler's recorded word ---- */

/* The object's tree as the input holds it (a List's item included). */
static const dp_doc_node *raw_object(const dp_sim_input *in, const dp_object_header *h) {
        for (size_t i = 0; i < in->n_k8s_docs; i++) {
                size_t d = in->k8s_docs[i];
                if (in->k8s_doc_index[i] != h->doc_index || !streq_ptr(dp_doc_source(in->docs, d), h->source))
                        continue;
                const dp_doc_node *root = dp_doc_root(in->docs, d), *items = dp_doc_get(root, "items");
                if (!items) return root;
                return items->type == DP_DOC_SEQ && h->item_index < items->n ? items->items[h->item_index] : NULL;
        }
        return NULL;
}

static const char *str_of(const dp_doc_node *m, const char *key) {
        const char *s = NULL;
        return dp_doc_get_str(dp_doc_get(m, key), false, &s, NULL) == 0 ? s : NULL;
}

void sim_explain_recorded(sim_run *r, const sim_pod *sp, const char *now, dp_strbuf *out) {
        dp_object o = dp_store_get(r->store, DP_KIND_POD, sp->ns, sp->name, NULL);
        const dp_doc_node *pod = o.hdr ? raw_object(r->in, o.hdr) : NULL;
        const dp_doc_node *conds = dp_doc_get(dp_doc_get(pod, "status"), "conditions");
        for (size_t i = 0; conds && conds->type == DP_DOC_SEQ && i < conds->n; i++) {
                const dp_doc_node *c = conds->items[i];
                const char *type = str_of(c, "type"), *status = str_of(c, "status"), *msg = str_of(c, "message");
                if (!streq_ptr(type, "PodScheduled") || !streq_ptr(status, "False") || !msg) continue;
                const char *at = str_of(c, "lastTransitionTime");
                dp_strbuf_puts(out, "kube-scheduler said");
                if (at) {
                        dp_strbuf_puts(out, " at ");
                        dp_escape_append(out, at, strlen(at), 0);
                }
                dp_strbuf_puts(out, ": ");
                dp_escape_append(out, msg, strlen(msg), 0);
                if (now && streq(now, msg))
                        dp_strbuf_puts(out, "; devplane says the same now\n");
                else if (now)
                        dp_strbuf_printf(out, "; devplane says now: %s\n", now);
                else if (sp->node)
                        dp_strbuf_printf(out, "; devplane says now: it fits, on %s\n", sp->node);
                else
                        dp_strbuf_puts(out, "; devplane has no message for it now\n");
                return;
        }
}

/* ---- allocator reasons by kind ---- */

#define DELIMS " ,;:()=\n"

static bool ends_with(const dp_strbuf *sb, const char *suffix) {
        size_t n = strlen(suffix);
        return sb->len >= n && memcmp(sb->buf + sb->len - n, suffix, n) == 0;
}

/* s with each word that has a digit as "#" and each claim list after "in
 * use by claim(s)" as "*"; the other words and the delimiters kept. */
static void shape(const char *s, dp_strbuf *out) {
        bool holders = false; /* inside a claim list */
        for (const char *p = s; *p;) {
                size_t n = strcspn(p, DELIMS);
                if (!n) {
                        if (*p == '\n') holders = false;
                        if (!holders) dp_strbuf_putc(out, *p);
                        p++;
                        continue;
                }
                bool digit = false, count = true;
                for (size_t i = 0; i < n; i++) {
                        bool d = p[i] >= '0' && p[i] <= '9';
                        digit |= d;
                        count &= d;
                }
                if (holders && count) holders = false; /* the next part: "2 not evaluated" */
                if (!holders) {
                        if (digit)
                                dp_strbuf_putc(out, '#');
                        else
                                dp_strbuf_append(out, p, n);
                        holders = ends_with(out, "in use by claim") || ends_with(out, "in use by claims");
                        if (holders) dp_strbuf_puts(out, " *");
                }
                p += n;
        }
}

bool sim_same_reason_kind(const char *a, const char *b) {
        if (streq(a, b)) return true;
        dp_strbuf x = DP_STRBUF_INIT, y = DP_STRBUF_INIT;
        shape(a, &x);
        shape(b, &y);
        bool same = !dp_strbuf_failed(&x) && !dp_strbuf_failed(&y) && streq(dp_strbuf_str(&x), dp_strbuf_str(&y));
        dp_strbuf_done(&x);
        dp_strbuf_done(&y);
        return same;
}

/* ---- Insufficient R on a Node object ---- */

static const dp_quantity *named(const dp_named_quantity *q, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (streq(q[i].name, name)) return &q[i].value;
        return NULL;
}

/* One container's request for res: requests, else limits (the API server
 * defaults a request to its limit). */
static dp_quantity container_request(const dp_container *c, const char *res) {
        const dp_quantity *q = named(c->requests, c->n_requests, res);
        if (!q) q = named(c->limits, c->n_limits, res);
        return q ? *q : (dp_quantity){0};
}

/* What the scheduler counts for a pod: pod-level requests when set, else
 * max(sum of containers, largest init container), plus overhead. */
static dp_quantity pod_request(const dp_pod *p, const char *res) {
        const dp_quantity *pl = named(p->pod_requests, p->n_pod_requests, res);
        dp_quantity sum = {0}, init = {0}, t;
        if (pl)
                sum = *pl;
        else {
                for (size_t i = 0; i < p->n_containers; i++) {
                        dp_quantity c = container_request(&p->containers[i], res);
                        if (dp_quantity_add(&sum, &c, &t) == 0) sum = t;
                }
                for (size_t i = 0; i < p->n_init_containers; i++) {
                        dp_quantity c = container_request(&p->init_containers[i], res);
                        if (dp_quantity_cmp(&c, &init) > 0) init = c;
                }
                if (dp_quantity_cmp(&init, &sum) > 0) sum = init;
        }
        const dp_quantity *oh = named(p->overhead, p->n_overhead, res);
        if (oh && dp_quantity_add(&sum, oh, &t) == 0) sum = t;
        return sum;
}

static void insufficient(sim_run *r, const dp_pod *pod, const dp_sched_node_verdict *v, dp_strbuf *out) {
        const char *res = v->code == DP_VERDICT_INSUFFICIENT_CPU      ? "cpu"
                          : v->code == DP_VERDICT_INSUFFICIENT_MEMORY ? "memory"
                                                                       : v->arg;
        sim_node *sn = sim_find_node(r, v->node);
        const dp_node *n = dp_store_get(r->store, DP_KIND_NODE, NULL, v->node, NULL).node;
        if (!res || !n || (sn && sn->group)) return; /* a Fleet node: report.c's v1_detail */
        dp_quantity used = {0}, t;
        size_t pods = 0, i = 0;
        dp_object o;
        while (dp_store_next(r->store, DP_KIND_POD, &i, &o, NULL)) {
                if (!streq_ptr(o.pod->node_name, v->node)) continue;
                dp_quantity q = pod_request(o.pod, res);
                if (q.nanos == 0) continue;
                pods++;
                if (dp_quantity_add(&used, &q, &t) == 0) used = t;
        }
        const dp_quantity *cap = named(n->capacity, n->n_capacity, res);
        const dp_quantity *al = named(n->allocatable, n->n_allocatable, res);
        dp_quantity ask = pod_request(pod, res);
        char c[DP_QUANTITY_MAX_LEN] = "0", a[DP_QUANTITY_MAX_LEN] = "0", u[DP_QUANTITY_MAX_LEN], k[DP_QUANTITY_MAX_LEN];
        if (cap) dp_quantity_format(cap, c, sizeof(c));
        if (al) dp_quantity_format(al, a, sizeof(a));
        dp_quantity_format(&used, u, sizeof(u));
        dp_quantity_format(&ask, k, sizeof(k));
        dp_strbuf_printf(out, "      %s on %s: capacity %s, allocatable %s, requested %s by %zu pod%s; this pod asks %s\n",
                         res, v->node, c, a, u, pods, pods == 1 ? "" : "s", k);
}

/* ---- a selector no node matches ---- */

typedef struct value_count {
        const char *value; /* NULL: the label is absent */
        size_t nodes;
} value_count;

static int cmp_count(const void *a, const void *b) {
        const value_count *x = a, *y = b;
        if (x->nodes != y->nodes) return x->nodes < y->nodes ? 1 : -1;
        if (!x->value || !y->value) return !x->value - !y->value;
        return strcmp(x->value, y->value);
}

/* "key: v1 ×n1, v2 ×n2, ..." over the store's Nodes, most nodes first. */
static void label_values(sim_run *r, const char *key, dp_strbuf *out) {
        size_t n_nodes = 0, nv = 0, i = 0;
        dp_object o;
        while (dp_store_next(r->store, DP_KIND_NODE, &i, &o, NULL))
                n_nodes++;
        value_count *vc = calloc(n_nodes + 1, sizeof(*vc));
        if (!vc) return;
        for (i = 0; dp_store_next(r->store, DP_KIND_NODE, &i, &o, NULL);) {
                const char *val = dp_kv_get(o.node->meta.labels, o.node->meta.n_labels, key);
                size_t k = 0;
                while (k < nv && !streq_ptr(vc[k].value, val))
                        k++;
                if (k == nv) vc[nv++].value = val;
                vc[k].nodes++;
        }
        qsort(vc, nv, sizeof(*vc), cmp_count);
        dp_strbuf_printf(out, "%s: ", key);
        for (size_t k = 0; k < nv && k < SHOWN_VALUES; k++)
                dp_strbuf_printf(out, "%s%s ×%zu", k ? ", " : "", vc[k].value ? vc[k].value : "(no such label)",
                                 vc[k].nodes);
        if (nv > SHOWN_VALUES) dp_strbuf_printf(out, ", and %zu more values", nv - SHOWN_VALUES);
        free(vc);
}

static size_t nodes_with(sim_run *r, const char *key, const char *value) {
        size_t n = 0, i = 0;
        dp_object o;
        while (dp_store_next(r->store, DP_KIND_NODE, &i, &o, NULL)) {
                const char *v = dp_kv_get(o.node->meta.labels, o.node->meta.n_labels, key);
                n += v && (!value || streq(v, value));
        }
        return n;
}

static void selector(sim_run *r, const dp_pod *pod, dp_strbuf *out) {
        for (size_t i = 0; i < pod->n_node_selector; i++) {
                const dp_kv *s = &pod->node_selector[i];
                size_t have = nodes_with(r, s->key, s->value);
                dp_strbuf_printf(out, "      nodeSelector %s=%s matches %zu node%s; the nodes have ", s->key, s->value,
                                 have, have == 1 ? "" : "s");
                label_values(r, s->key, out);
                dp_strbuf_puts(out, "\n");
        }
        const dp_node_selector *ns = pod->required_node_affinity;
        for (size_t t = 0; ns && t < ns->n_terms; t++)
                for (size_t e = 0; e < ns->terms[t].n_match_expressions; e++) {
                        const dp_node_selector_requirement *q = &ns->terms[t].match_expressions[e];
                        dp_strbuf_printf(out, "      required node affinity, term %zu, %s %s", t + 1, q->key,
                                         q->n_values ? "in/not in [" : "");
                        for (size_t k = 0; k < q->n_values; k++)
                                dp_strbuf_printf(out, "%s%s", k ? ", " : "", q->values[k]);
                        dp_strbuf_puts(out, q->n_values ? "]; the nodes have " : "; the nodes have ");
                        label_values(r, q->key, out);
                        dp_strbuf_puts(out, "\n");
                }
}

/* ---- taints ---- */

/* The node's NoSchedule/NoExecute taints the pod does not tolerate, as
 * "{key=value:Effect} and ..." (empty when none). */
static void untolerated(const dp_pod *pod, const dp_node *n, char *buf, size_t size) {
        dp_strbuf sb = DP_STRBUF_INIT;
        for (size_t i = 0; i < n->n_taints; i++) {
                const dp_taint *x = &n->taints[i];
                bool blocks = streq_ptr(x->effect, "NoSchedule") || streq_ptr(x->effect, "NoExecute");
                if (blocks && !dp_tolerations_tolerate(pod->tolerations, pod->n_tolerations, x))
                        dp_strbuf_printf(&sb, "%s{key: %s%s%s, effect: %s}", sb.len ? " and " : "", x->key,
                                         x->value ? ", value: " : ", operator: Exists", x->value ? x->value : "",
                                         x->effect);
        }
        snprintf(buf, size, "%s", dp_strbuf_str(&sb));
        dp_strbuf_done(&sb);
}

typedef struct taint_group {
        char text[512];
        size_t nodes;
        const char *first[SHOWN_NODES];
} taint_group;

static void taints(sim_run *r, const dp_pod *pod, const dp_sched_node_verdict *v, size_t n, dp_strbuf *out) {
        taint_group *g = calloc(n + 1, sizeof(*g));
        size_t ng = 0;
        for (size_t i = 0; g && i < n; i++) {
                if (v[i].code != DP_VERDICT_TAINT) continue;
                const dp_node *node = dp_store_get(r->store, DP_KIND_NODE, NULL, v[i].node, NULL).node;
                char t[512];
                if (!node) continue;
                untolerated(pod, node, t, sizeof(t));
                size_t k = 0;
                while (k < ng && !streq(g[k].text, t))
                        k++;
                if (k == ng) snprintf(g[ng++].text, sizeof(g[0].text), "%s", t);
                if (g[k].nodes < SHOWN_NODES) g[k].first[g[k].nodes] = v[i].node;
                g[k].nodes++;
        }
        for (size_t k = 0; k < ng && k < SHOWN_VALUES; k++) {
                if (!g[k].text[0]) continue;
                dp_strbuf_printf(out, "      tolerating %s passes the taint check on %zu node%s (", g[k].text,
                                 g[k].nodes, g[k].nodes == 1 ? "" : "s");
                for (size_t x = 0; x < g[k].nodes && x < SHOWN_NODES; x++)
                        dp_strbuf_printf(out, "%s%s", x ? ", " : "", g[k].first[x]);
                dp_strbuf_printf(out, "%s)\n", g[k].nodes > SHOWN_NODES ? ", ..." : "");
        }
        free(g);
}

void sim_explain_answer(sim_run *r, const sim_pod *sp, const dp_sched_node_verdict *v, size_t n,
                        const dp_sched_node_verdict *first, dp_strbuf *out) {
        const dp_pod *pod = dp_store_get(r->store, DP_KIND_POD, sp->ns, sp->name, NULL).pod;
        if (!pod || !first) return;
        switch (first->code) {
        case DP_VERDICT_INSUFFICIENT:
        case DP_VERDICT_INSUFFICIENT_CPU:
        case DP_VERDICT_INSUFFICIENT_MEMORY: insufficient(r, pod, first, out); break;
        case DP_VERDICT_AFFINITY: selector(r, pod, out); break;
        case DP_VERDICT_TAINT: taints(r, pod, v, n, out); break;
        default: break;
        }
}
