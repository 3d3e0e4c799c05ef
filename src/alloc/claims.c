/* SPDX-License-Identifier: Apache-2.0
 * claims.c — `devplane allocate` as a library call: claims of an object
 * list allocated in input order, reports printed as Kubernetes objects or a
 * table. */
#include <stdio.h>

#include "alloc/adapter.h"
#include "alloc/oom.h"
#include "alloc/reasons.h"
#include "base/hashmap.h"
#include "base/strv.h"
#include "base/table.h"

dp_alloc_run *dp_alloc_run_free(dp_alloc_run *r) {
        if (!r) return NULL;
        for (size_t i = 0; i < r->n; i++) {
                dp_allocation_result_free(r->items[i].allocation);
                dp_free_many(r->items[i].node, r->items[i].why, r->items[i].reason);
        }
        dp_strv_free_n(r->nodes, r->n_nodes);
        dp_free_many(r->items, r);
        return NULL;
}

static int oom_claim(const dp_resource_claim *cl, const char *what, dp_error *err) {
        return alloc_oom(err, "%s ResourceClaim %s/%s", what, cl->meta.namespace ? cl->meta.namespace : "",
                         cl->meta.name);
}

static int one_claim(dp_alloc_cluster *c, dp_alloc_claim_spec *cs, const char *node, uint64_t budget,
                     alloc_reasons *rs, dp_alloc_outcome *o, dp_error *err) {
        dp_alloc_snapshot *s = dp_alloc_cluster_snapshot(c);
        const dp_alloc_claim *cp = &cs->claim;
        dp_alloc_result *res = NULL;
        /* upstream gives a node 10 s (filterTimeout); a step budget keeps the
         * command bounded the same way, deterministically */
        dp_alloc_options opts = {.explain = true, .max_effort = budget};
        int r;
        size_t ni = 0;
        if (node) {
                _cleanup_strbuf_ dp_strbuf why = DP_STRBUF_INIT;
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
                        char *text = dp_strbuf_steal(&pre);
                        if (!text || alloc_reasons_from_text(rs, text, o) < 0)
                                return oom_claim(cs->source, "explaining", err);
                        return 0;
                }
        } else {
                r = dp_alloc_allocate_first_fit(s, &cp, 1, &opts, &ni, &res, NULL, err);
                if (r == 0) {
                        r = alloc_reasons_first_fit(rs, cp, &opts, o, err);
                        /* its own running out of memory leaves err alone */
                        if (r == -ENOMEM && (!err || err->code != -ENOMEM))
                                return oom_claim(cs->source, "explaining", err);
                        if (r == 0) return 0;
                }
        }
        if (r == -EDOM || r == -ETIME) {
                /* the input is valid: this claim is not allocated, with the reason
                 * (a search over its step budget, or an error of the claim upstream
                 * would raise), and the run goes on */
                free(o->reason);
                free(o->why);
                o->reason = o->why = NULL;
                char *text = dp_asprintf("%s\n", dp_error_msg(err));
                if (err) *err = (dp_error)DP_ERROR_INIT;
                if (!text || alloc_reasons_from_text(rs, text, o) < 0)
                        return oom_claim(cs->source, "explaining", err);
                return 0;
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
        o->node = dp_strdup(node ? node : dp_alloc_node_name(s, ni));
        if (!o->node) {
                dp_allocation_result_free(a);
                return oom_claim(cs->source, "recording the allocation of", err);
        }
        o->allocation = a;
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
        _cleanup_(alloc_reasons_freep) alloc_reasons *rs =
                r >= 0 ? alloc_reasons_new(s, node != NULL, opts && opts->details) : NULL;
        if (r >= 0 && !rs) r = alloc_oom(err, "starting the allocation run");
        for (size_t i = 0; i < run->n && r >= 0; i++) {
                r = one_claim(c, specs[i], node, budget, rs, &run->items[i], err);
                if (r >= 0 && !run->items[i].allocation) run->n_failed++;
                /* the outcome holds copies: its memory serves the next claims */
                specs[i] = dp_alloc_claim_spec_free(specs[i]);
        }
        for (size_t i = 0; i < run->n; i++) dp_alloc_claim_spec_free(specs[i]);
        free(specs);
        if (r < 0) return r;
        run->one_node = node != NULL;
        /* the node names, to group the reasons by node when printing */
        run->nodes = calloc(dp_alloc_node_count(s) + 1, sizeof(*run->nodes));
        if (!run->nodes) return alloc_oom(err, "recording the node names");
        for (; run->n_nodes < dp_alloc_node_count(s); run->n_nodes++)
                if (!(run->nodes[run->n_nodes] = dp_strdup(dp_alloc_node_name(s, run->n_nodes))))
                        return alloc_oom(err, "recording the node names");
        dp_alloc_stats st;
        dp_alloc_get_stats(s, &st);
        run->effort = st.effort;
        *ret = TAKE_PTR(run);
        return 0;
}

/* Columns as wide as their widest cell (base/table.h). */
static void table(const dp_alloc_run *r, dp_strbuf *out) {
        _cleanup_table_ dp_table t = DP_TABLE_INIT(4);
        dp_table_add(&t, "CLAIM");
        dp_table_add(&t, "NODE");
        dp_table_add(&t, "REQUEST");
        dp_table_add(&t, "DEVICE");
        for (size_t i = 0; i < r->n; i++) {
                const dp_alloc_outcome *o = &r->items[i];
                const char *ns = o->claim->meta.namespace ? o->claim->meta.namespace : "default";
                if (!o->allocation) {
                        dp_table_addf(&t, "%s/%s", ns, o->claim->meta.name);
                        dp_table_add(&t, "-");
                        dp_table_add(&t, "-");
                        dp_table_add(&t, "(not allocated)");
                        continue;
                }
                const dp_allocation_result *a = o->allocation;
                for (size_t k = 0; k < a->n_results; k++) {
                        const dp_device_allocation_result *d = &a->results[k];
                        if (k)
                                dp_table_add(&t, "");
                        else
                                dp_table_addf(&t, "%s/%s", ns, o->claim->meta.name);
                        dp_table_add(&t, k ? "" : o->node);
                        dp_table_add(&t, d->request);
                        dp_table_addf(&t, "%s/%s/%s%s%s%s", d->driver, d->pool, d->device,
                                      d->admin_access ? " (admin)" : "", d->share_id ? " share " : "",
                                      d->share_id ? d->share_id : "");
                }
        }
        dp_table_print(&t, out);
}

int dp_alloc_run_print_why(const dp_alloc_run *r, bool details, dp_strbuf *why) {
        assert_return(r && why, -EINVAL);
        for (size_t i = 0; i < r->n && r->n_failed; i++) {
                const dp_alloc_outcome *o = &r->items[i];
                if (o->allocation) continue;
                dp_strbuf_puts(why, "ResourceClaim ");
                dp_strbuf_puts(why, o->claim->meta.namespace ? o->claim->meta.namespace : "default");
                dp_strbuf_putc(why, '/');
                dp_strbuf_puts(why, o->claim->meta.name);
                dp_strbuf_puts(why, ": not allocated");
                if (o->reason) dp_strbuf_puts(why, o->reason);
                dp_strbuf_putc(why, '\n');
                if (!details) continue;
                const char *p = o->why ? o->why : "";
                while (*p) {
                        const char *nl = strchr(p, '\n');
                        size_t len = nl ? (size_t)(nl - p) : strlen(p);
                        dp_strbuf_append(why, "  ", 2);
                        dp_strbuf_append(why, p, len);
                        dp_strbuf_putc(why, '\n');
                        p += len + (nl ? 1 : 0);
                }
        }
        return dp_strbuf_failed(why) ? -ENOMEM : 0;
}

/* The claim as printed: the input claim with the allocation made (a shallow
 * copy in `buf`, valid while the run is; nothing is cloned). */
static const dp_resource_claim *with_allocation(const dp_alloc_outcome *o, dp_resource_claim *buf) {
        if (!o->allocation) return o->claim;
        *buf = *o->claim;
        buf->allocation = o->allocation;
        return buf;
}

/* A List, written one claim at a time as dp_doc_emit() of the whole would
 * write it (keys sorted: apiVersion, items, kind): no tree of every claim. */
/* With a stream, what is in `out` goes to it whenever it passes this size:
 * the List of 5,000 claims is written through one small buffer instead of
 * growing (and copying) a buffer of all of it. */
#define PRINT_FLUSH_AT (64u << 10)

static int flush_to(FILE *f, dp_strbuf *out) {
        if (!f || out->len < PRINT_FLUSH_AT || dp_strbuf_failed(out)) return 0;
        if (fwrite(out->buf, 1, out->len, f) != out->len) return -EIO;
        dp_strbuf_truncate(out, 0);
        return 0;
}

static int print_list(const dp_alloc_run *r, bool json, dp_strbuf *out, FILE *f) {
        dp_doc_format df = json ? DP_DOC_JSON_PRETTY : DP_DOC_YAML;
        if (r->n == 0)
                dp_strbuf_puts(out, json ? "{\n  \"apiVersion\": \"v1\",\n  \"items\": [],\n"
                                         : "apiVersion: v1\nitems: []\n");
        else
                dp_strbuf_puts(out, json ? "{\n  \"apiVersion\": \"v1\",\n  \"items\": [" : "apiVersion: v1\nitems:\n");
        /* one encoder for every claim's tree (its memory serves the next) */
        _cleanup_(dp_encoder_freep) dp_encoder *enc = dp_encoder_new();
        for (size_t i = 0; i < r->n; i++) {
                dp_resource_claim cl;
                const dp_doc_node *n = enc ? dp_encoder_claim(enc, with_allocation(&r->items[i], &cl)) : NULL;
                if (!n) return -ENOMEM;
                dp_doc_emit_top_item(out, n, i, df);
                if (dp_strbuf_failed(out)) return -ENOMEM;
                int k = flush_to(f, out);
                if (k < 0) return k;
        }
        if (r->n && json) dp_strbuf_puts(out, "\n  ],\n");
        dp_strbuf_puts(out, json ? "  \"kind\": \"List\"\n}\n" : "kind: List\n");
        return dp_strbuf_failed(out) ? -ENOMEM : 0;
}

static int run_print(const dp_alloc_run *r, dp_alloc_output fmt, dp_strbuf *out, dp_strbuf *why, FILE *f) {
        if (fmt == DP_ALLOC_OUTPUT_TABLE) {
                table(r, out);
        } else if (r->n == 1) {
                _cleanup_(dp_encoder_freep) dp_encoder *enc = dp_encoder_new();
                dp_resource_claim cl;
                const dp_doc_node *root = enc ? dp_encoder_claim(enc, with_allocation(&r->items[0], &cl)) : NULL;
                if (!root) return -ENOMEM;
                dp_doc_emit(out, root, fmt == DP_ALLOC_OUTPUT_JSON ? DP_DOC_JSON_PRETTY : DP_DOC_YAML);
        } else {
                int k = print_list(r, fmt == DP_ALLOC_OUTPUT_JSON, out, f);
                if (k < 0) return k;
        }
        if (why && dp_alloc_run_print_why(r, false, why) < 0) return -ENOMEM;
        if (dp_strbuf_failed(out) || (why && dp_strbuf_failed(why))) return -ENOMEM;
        return 0;
}

int dp_alloc_run_print(const dp_alloc_run *r, dp_alloc_output fmt, dp_strbuf *out, dp_strbuf *why) {
        assert_return(r && out, -EINVAL);
        return run_print(r, fmt, out, why, NULL);
}

int dp_alloc_run_write(const dp_alloc_run *r, dp_alloc_output fmt, FILE *f) {
        assert_return(r && f, -EINVAL);
        _cleanup_strbuf_ dp_strbuf out = DP_STRBUF_INIT;
        int k = run_print(r, fmt, &out, NULL, f);
        if (k < 0) return k;
        if (out.len && fwrite(out.buf, 1, out.len, f) != out.len) return -EIO;
        return fflush(f) == 0 ? 0 : -EIO;
}
