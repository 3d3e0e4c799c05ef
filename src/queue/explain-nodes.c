/* SPDX-License-Identifier: Apache-2.0
 *
 * explain-nodes.c — the --add-nodes FLAVOR=N what-if and explain's answer
 * for a workload Kueue admitted and kube-scheduler did not place.
 *
 * Kueue's admission counts quota, not nodes: an admitted workload's pods
 * may stay Pending (the allocator, a taint, a full node). The answer is
 * more nodes of the flavor it got: N copies of the first Node object of the
 * input the flavor's nodeLabels select, taints and all (sched/sim-input.c
 * adds them, named FLAVOR-whatif-I, before anything is placed). explain
 * checks it through the simulator's trial (dp_queue_place_trial): the least
 * N that places every pod of the workload, at most one node per Pending pod
 * tried, then bisected.
 */
#include <stdio.h>

#include "queue/queue-internal.h"

int dp_queue_options_add_nodes(dp_queue_options *o, const char *arg, dp_error *err) {
        assert_return(o && arg, -EINVAL);
        const char *eq = strrchr(arg, '=');
        char *end = NULL;
        long long n = eq ? strtoll(eq + 1, &end, 10) : 0;
        if (!eq || eq == arg || !eq[1] || *end || n < 1 || n > DP_QUEUE_MAX_ADD_NODES)
                return dp_error_set(err, -EINVAL, "--add-nodes %s: must be FLAVOR=N (1 <= N <= %d)", arg,
                                    DP_QUEUE_MAX_ADD_NODES);
        dp_queue_add_nodes *x = realloc(o->add_nodes, (o->n_add_nodes + 1) * sizeof(*x));
        if (!x) return dp_error_set(err, -ENOMEM, "out of memory");
        o->add_nodes = x;
        x[o->n_add_nodes] = (dp_queue_add_nodes){strndup(arg, (size_t)(eq - arg)), (int32_t)n};
        return x[o->n_add_nodes++].flavor ? 0 : dp_error_set(err, -ENOMEM, "out of memory");
}

static bool selects(const dp_resource_flavor *rf, const dp_node *n) {
        for (size_t k = 0; k < rf->n_node_labels; k++)
                if (!streq_ptr(dp_kv_get(n->meta.labels, n->meta.n_labels, rf->node_labels[k].key),
                               rf->node_labels[k].value))
                        return false;
        return true;
}

int dp_queue_flavor_node(const dp_object_list *l, const dp_queue_add_nodes *an, const dp_node **ret, dp_error *err) {
        assert_return(l && an && ret, -EINVAL);
        const dp_resource_flavor *rf = NULL;
        for (size_t i = 0; i < l->n && !rf; i++)
                if (dp_queue_kind(l->items[i]) == DP_KQ_RESOURCE_FLAVOR &&
                    streq(l->items[i].ext->meta.name, an->flavor))
                        rf = (const dp_resource_flavor *)l->items[i].ext;
        if (!rf)
                return dp_error_set(err, -EINVAL, "--add-nodes %s=%d: ResourceFlavor %s is not in the input",
                                    an->flavor, an->count, an->flavor);
        for (size_t i = 0; i < l->n; i++)
                if (l->items[i].hdr->kind == DP_KIND_NODE && selects(rf, l->items[i].node)) {
                        *ret = l->items[i].node;
                        return 0;
                }
        char labels[512] = "";
        for (size_t k = 0; k < rf->n_node_labels; k++) {
                size_t len = strlen(labels);
                snprintf(labels + len, sizeof(labels) - len, "%s%s=%s", k ? "," : "", rf->node_labels[k].key,
                         rf->node_labels[k].value ? rf->node_labels[k].value : "");
        }
        return dp_error_set(err, -EINVAL,
                            "--add-nodes %s=%d: no Node object in the input has ResourceFlavor %s's nodeLabels "
                            "(%s) to copy (a Fleet's node groups are not copied: raise the group's count)",
                            an->flavor, an->count, an->flavor, labels[0] ? labels : "none");
}

/* The least n in 1..max that places every pod of w (bisected), 0 when max
 * does not; -ENOMEM, or -EINVAL with err when the trial cannot run. */
static int least_nodes(dp_queue_place_trial trial, void *userdata, const char *flavor, int32_t max,
                       const dp_queue_workload *w, int32_t *ret, dp_error *err) {
        int ok = trial(userdata, flavor, max, w, err);
        if (ok <= 0) {
                *ret = 0;
                return ok;
        }
        int32_t lo = 0, hi = max; /* hi places them, lo does not */
        while (hi - lo > 1) {
                int32_t mid = lo + (hi - lo) / 2;
                if ((ok = trial(userdata, flavor, mid, w, err)) < 0) return ok;
                if (ok)
                        hi = mid;
                else
                        lo = mid;
        }
        *ret = hi;
        return 1;
}

/* The distinct flavors w got, in pod-set and request order. */
static size_t flavors_of(const dp_queue_workload *w, const char **v, size_t max) {
        size_t n = 0;
        for (size_t p = 0; p < w->n_podsets; p++)
                for (size_t i = 0; i < w->podsets[p].n_requests; i++) {
                        const char *f = w->podsets[p].flavors ? w->podsets[p].flavors[i] : NULL;
                        bool seen = !f;
                        for (size_t k = 0; k < n && !seen; k++)
                                seen = streq(v[k], f);
                        if (!seen && n < max) v[n++] = f;
                }
        return n;
}

int q_explain_nodes(dp_queue *q, size_t i, dp_queue_place_trial trial, void *userdata, dp_strbuf *out) {
        const dp_queue_workload *w = &q->wl[i];
        const char *fl[16];
        size_t n = flavors_of(w, fl, ELEMENTSOF(fl));
        int32_t max = DP_MIN(w->pods_unplaced, DP_QUEUE_MAX_ADD_NODES); /* a pod takes one node */
        bool found = false;
        dp_strbuf_puts(out, "What would place them (Kueue admits by quota, not nodes):\n");
        for (size_t k = 0; k < n; k++) {
                dp_error err = DP_ERROR_INIT;
                int32_t least = 0;
                int r = least_nodes(trial, userdata, fl[k], max, w, &least, &err);
                if (r == -ENOMEM) return r;
                if (r < 0)
                        dp_strbuf_printf(out, "  flavor %s: %s\n", fl[k], dp_error_msg(&err));
                else if (r == 0)
                        dp_strbuf_printf(out, "  flavor %s: --add-nodes %s=%d does not place them either\n", fl[k],
                                         fl[k], max);
                else {
                        dp_strbuf_printf(out, "  --add-nodes %s=%d (copies of the first node flavor %s selects)\n",
                                         fl[k], least, fl[k]);
                        found = true;
                }
        }
        if (!n) dp_strbuf_puts(out, "  no flavor: its pods go wherever kube-scheduler finds room\n");
        if (found)
                dp_strbuf_puts(out,
                               "  (each the least that places all its pods, checked by simulating again with it)\n");
        return dp_strbuf_failed(out) ? -ENOMEM : 0;
}
