/* SPDX-License-Identifier: Apache-2.0
 * claims.c — `devplane allocate` as a library call: claims of an object
 * list allocated in input order, reports printed as Kubernetes objects or a
 * table. */
#include <stdio.h>

#include "alloc/adapter.h"
#include "alloc/oom.h"

dp_alloc_run *dp_alloc_run_free(dp_alloc_run *r) {
        if (!r) return NULL;
        for (size_t i = 0; i < r->n; i++) {
                dp_resource_claim_free(r->items[i].allocated);
                free(r->items[i].node);
                free(r->items[i].why);
        }
        free(r->items);
        free(r);
        return NULL;
}

static int oom_claim(const dp_resource_claim *cl, const char *what, dp_error *err) {
        return alloc_oom(err, "%s ResourceClaim %s/%s", what, cl->meta.namespace ? cl->meta.namespace : "",
                         cl->meta.name);
}

static int one_claim(dp_alloc_cluster *c, dp_alloc_claim_spec *cs, const char *node, uint64_t budget,
                     dp_alloc_outcome *o, dp_error *err) {
        dp_alloc_snapshot *s = dp_alloc_cluster_snapshot(c);
        const dp_alloc_claim *cp = &cs->claim;
        dp_alloc_result *res = NULL;
        _cleanup_strbuf_ dp_strbuf why = DP_STRBUF_INIT;
        /* upstream gives a node 10 s (filterTimeout); a step budget keeps the
         * command bounded the same way, deterministically */
        dp_alloc_options opts = {.explain = true, .max_effort = budget};
        int r;
        size_t ni = 0;
        if (node) {
                r = dp_alloc_allocate(s, node, &cp, 1, &opts, &res, &why, err);
                if (r == 0) {
                        if (dp_strbuf_failed(&why)) return oom_claim(cs->source, "explaining", err);
                        /* prefix each line with the node, as first-fit does */
                        _cleanup_strbuf_ dp_strbuf pre = DP_STRBUF_INIT;
                        const char *p = dp_strbuf_str(&why);
                        while (*p) {
                                const char *nl = strchr(p, '\n');
                                size_t len = nl ? (size_t)(nl - p) : strlen(p);
                                dp_strbuf_printf(&pre, "%s: %.*s\n", node, (int)len, p);
                                p += len + (nl ? 1 : 0);
                        }
                        if (dp_strbuf_failed(&pre)) return oom_claim(cs->source, "explaining", err);
                        o->why = dp_strbuf_steal(&pre);
                        return o->why ? 0 : oom_claim(cs->source, "explaining", err);
                }
        } else {
                r = dp_alloc_allocate_first_fit(s, &cp, 1, &opts, &ni, &res, &why, err);
                if (r == 0) {
                        if (dp_strbuf_failed(&why)) return oom_claim(cs->source, "explaining", err);
                        o->why = dp_strbuf_steal(&why);
                        if (!o->why) o->why = dp_strdup("no nodes\n");
                        return o->why ? 0 : oom_claim(cs->source, "explaining", err);
                }
        }
        if (r == -EDOM || r == -ETIME) {
                /* the input is valid: this claim is not allocated, with the reason
                 * (a search over its step budget, or an error of the claim upstream
                 * would raise), and the run goes on */
                o->why = dp_asprintf("%s\n", dp_error_msg(err));
                if (err) *err = (dp_error)DP_ERROR_INIT;
                return o->why ? 0 : oom_claim(cs->source, "explaining", err);
        }
        if (r < 0) {
                const dp_resource_claim *cl = cs->source;
                /* keep r: with err NULL, dp_error_prefix() would answer -EINVAL */
                dp_error_prefix(err, "ResourceClaim %s/%s", cl->meta.namespace ? cl->meta.namespace : "",
                                cl->meta.name);
                return r;
        }
        dp_allocation_result *a = NULL;
        r = dp_alloc_result_to_model(c, cs, &res[0], &a, err);
        if (r >= 0) {
                r = dp_alloc_commit(s, &cs->claim, &res[0]);
                if (r == -ENOMEM) r = oom_claim(cs->source, "committing the allocation of", err);
                else if (r < 0) r = dp_error_set(err, r, "committing the allocation: %s", strerror(-r));
        }
        dp_alloc_results_free(res, 1);
        if (r < 0) {
                dp_allocation_result_free(a);
                return r;
        }
        o->allocated = dp_resource_claim_clone(cs->source);
        o->node = dp_strdup(node ? node : dp_alloc_node_name(s, ni));
        if (!o->allocated || !o->node) {
                dp_allocation_result_free(a);
                return oom_claim(cs->source, "recording the allocation of", err);
        }
        dp_allocation_result_free(o->allocated->allocation);
        o->allocated->allocation = a;
        return 0;
}

int dp_alloc_run_claims(const dp_object_list *objs, const char *node, dp_alloc_run **ret, dp_error *err) {
        return dp_alloc_run_claims_budget(objs, node, 0, ret, err);
}

int dp_alloc_run_claims_budget(const dp_object_list *objs, const char *node, uint64_t budget, dp_alloc_run **ret,
                               dp_error *err) {
        return dp_alloc_run_claims_opts(objs, node, budget, NULL, ret, err);
}

int dp_alloc_run_claims_opts(const dp_object_list *objs, const char *node, uint64_t budget,
                             const dp_alloc_cluster_options *opts, dp_alloc_run **ret, dp_error *err) {
        assert_return(objs && ret, -EINVAL);
        if (!budget) budget = DP_ALLOC_RUN_MAX_EFFORT;
        _cleanup_(dp_alloc_cluster_freep) dp_alloc_cluster *c = NULL;
        int r = dp_alloc_cluster_new_opts(objs, opts, &c, err);
        if (r < 0) return r;
        dp_alloc_snapshot *s = dp_alloc_cluster_snapshot(c);
        if (node) {
                bool found = false;
                for (size_t i = 0; i < dp_alloc_node_count(s); i++) found |= streq(dp_alloc_node_name(s, i), node);
                if (!found)
                        return dp_error_set(err, -EINVAL,
                                            "--node %s: no such node (nodes come from Node objects and ResourceSlice spec.nodeName)",
                                            node);
        }
        _cleanup_(dp_alloc_run_freep) dp_alloc_run *run = calloc(1, sizeof(*run));
        if (!run) return alloc_oom(err, "starting the allocation run");
        size_t n = 0;
        for (size_t i = 0; i < objs->n; i++)
                if (objs->items[i].hdr->kind == DP_KIND_RESOURCE_CLAIM && !objs->items[i].claim->allocation) n++;
        run->items = calloc(n + 1, sizeof(*run->items));
        if (!run->items) return alloc_oom(err, "starting the allocation run");
        /* compile every claim first: bad input fails before anything is allocated */
        dp_alloc_claim_spec **specs = calloc(n + 1, sizeof(*specs));
        if (!specs) return alloc_oom(err, "starting the allocation run");
        for (size_t i = 0; i < objs->n && r >= 0; i++) {
                dp_object o = objs->items[i];
                if (o.hdr->kind != DP_KIND_RESOURCE_CLAIM || o.claim->allocation) continue;
                run->items[run->n].claim = o.claim;
                r = dp_alloc_claim_prepare(c, o.claim, &specs[run->n], err);
                run->n++;
        }
        for (size_t i = 0; i < run->n && r >= 0; i++) {
                r = one_claim(c, specs[i], node, budget, &run->items[i], err);
                if (r >= 0 && !run->items[i].allocated) run->n_failed++;
        }
        for (size_t i = 0; i < run->n; i++) dp_alloc_claim_spec_free(specs[i]);
        free(specs);
        if (r < 0) return r;
        dp_alloc_stats st;
        dp_alloc_get_stats(s, &st);
        run->effort = st.effort;
        *ret = TAKE_PTR(run);
        return 0;
}

static void table(const dp_alloc_run *r, dp_strbuf *out) {
        dp_strbuf_printf(out, "%-32s %-16s %-20s %s\n", "CLAIM", "NODE", "REQUEST", "DEVICE");
        for (size_t i = 0; i < r->n; i++) {
                const dp_alloc_outcome *o = &r->items[i];
                char name[300];
                snprintf(name, sizeof(name), "%s/%s", o->claim->meta.namespace ? o->claim->meta.namespace : "default",
                         o->claim->meta.name);
                if (!o->allocated) {
                        dp_strbuf_printf(out, "%-32s %-16s %-20s %s\n", name, "-", "-", "(not allocated)");
                        continue;
                }
                const dp_allocation_result *a = o->allocated->allocation;
                for (size_t k = 0; k < a->n_results; k++) {
                        const dp_device_allocation_result *d = &a->results[k];
                        dp_strbuf_printf(out, "%-32s %-16s %-20s %s/%s/%s%s%s%s\n", k ? "" : name, k ? "" : o->node,
                                         d->request, d->driver, d->pool, d->device,
                                         d->admin_access ? " (admin)" : "", d->share_id ? " share " : "",
                                         d->share_id ? d->share_id : "");
                }
        }
}

int dp_alloc_run_print(const dp_alloc_run *r, dp_alloc_output fmt, dp_strbuf *out, dp_strbuf *why) {
        assert_return(r && out, -EINVAL);
        if (fmt == DP_ALLOC_OUTPUT_TABLE) {
                table(r, out);
        } else {
                _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
                if (!set) return -ENOMEM;
                dp_doc_node *root;
                if (r->n == 1) {
                        const dp_resource_claim *cl = r->items[0].allocated ? r->items[0].allocated : r->items[0].claim;
                        root = dp_resource_claim_encode(set, cl);
                } else {
                        root = dp_doc_new_map(set);
                        dp_doc_node *items = dp_doc_new_seq(set);
                        if (!root || !items) return -ENOMEM;
                        for (size_t i = 0; i < r->n; i++) {
                                const dp_resource_claim *cl = r->items[i].allocated ? r->items[i].allocated : r->items[i].claim;
                                if (dp_doc_seq_add(set, items, dp_resource_claim_encode(set, cl)) < 0) return -ENOMEM;
                        }
                        if (dp_doc_map_add(set, root, "apiVersion", dp_doc_new_str(set, "v1")) < 0 ||
                            dp_doc_map_add(set, root, "items", items) < 0 ||
                            dp_doc_map_add(set, root, "kind", dp_doc_new_str(set, "List")) < 0)
                                return -ENOMEM;
                }
                if (!root) return -ENOMEM;
                dp_doc_emit(out, root, fmt == DP_ALLOC_OUTPUT_JSON ? DP_DOC_JSON_PRETTY : DP_DOC_YAML);
        }
        if (why)
                for (size_t i = 0; i < r->n; i++) {
                        const dp_alloc_outcome *o = &r->items[i];
                        if (o->allocated) continue;
                        dp_strbuf_printf(why, "ResourceClaim %s/%s: not allocated\n",
                                         o->claim->meta.namespace ? o->claim->meta.namespace : "default", o->claim->meta.name);
                        const char *p = o->why ? o->why : "";
                        while (*p) {
                                const char *nl = strchr(p, '\n');
                                size_t len = nl ? (size_t)(nl - p) : strlen(p);
                                dp_strbuf_printf(why, "  %.*s\n", (int)len, p);
                                p += len + (nl ? 1 : 0);
                        }
                }
        if (dp_strbuf_failed(out) || (why && dp_strbuf_failed(why))) return -ENOMEM;
        return 0;
}
