/* SPDX-License-Identifier: Apache-2.0
 *
 * checks.c — Kueue's AdmissionChecks (kueue.x-k8s.io v1beta2 and v1beta1):
 * the AdmissionCheck kind, a ClusterQueue's admissionChecksStrategy (and
 * v1beta1's admissionChecks), a Workload's status.admissionChecks, and what
 * they change in admission (docs/queues.md, "Admission checks"):
 *   - a ClusterQueue naming a check the input does not hold, or one whose
 *     status.conditions Active is not True, is inactive (Kueue's
 *     AdmissionCheckNotFound / AdmissionCheckInactive, and MultiKueue's
 *     rules: one MultiKueue check at most, on every flavor), as Kueue's
 *     cache (pkg/cache/scheduler/clusterqueue.go updateWithAdmissionChecks,
 *     inactiveReason) says;
 *   - a workload whose quota is reserved waits for the checks that apply to
 *     the flavors it got (no onFlavors: every flavor; workload.go
 *     AdmissionChecksForWorkload) to be Ready before it is Admitted
 *     (SyncAdmittedCondition): a check's state is its controller's, decided
 *     at run time, so offline it is Ready only where the input's Workload
 *     says so (status.admissionChecks), otherwise the workload stays
 *     QuotaReserved and its pods suspended or gated;
 *   - a Workload the input shows with a Rejected check is deactivated
 *     (reconcileCheckBasedEviction: "Admission check(s): a, were rejected").
 * An AdmissionCheck without status.conditions Active (a manifest, not a
 * dump) is taken as active: its controller marks it so once it runs.
 */
#include <stdio.h>

#include "base/strbuf.h"
#include "base/strv.h"
#include "queue/decode-kq.h"
#include "queue/queue-internal.h"

/* ---- decoding ---- */

static const char *const top_level[] = {"apiVersion", "kind", "metadata", "status", NULL};
static const char *const check_states[] = {"Pending", "Ready", "Retry", "Rejected", NULL};

static int parameters(kq *q, const dp_doc_node *n, dp_kq_admission_check *ac) {
        KQ_FIELDS(q, n, k, v, if (streq(k, "kind")) r = get_str(q->c, v, &ac->parameters_kind);
                  else if (streq(k, "name")) r = get_str(q->c, v, &ac->parameters_name);
                  else if (streq(k, "apiGroup")) r = 0;);
        return 0;
}

static int ac_spec(kq *q, const dp_doc_node *n, dp_kq_admission_check *ac) {
        KQ_FIELDS(q, n, k, v, if (streq(k, "controllerName")) r = get_str(q->c, v, &ac->controller_name);
                  else if (streq(k, "parameters")) r = parameters(q, v, ac);
                  else if (streq(k, "retryDelayMinutes")) r = 0;); /* deprecated, not read by Kueue either */
        return 0;
}

/* status.conditions[type Active]: the record its controller keeps (not
 * validated beyond what is read). */
static int ac_active(const dp_doc_node *status, dp_kq_admission_check *ac) {
        const dp_doc_node *conds = status && status->type == DP_DOC_MAP ? dp_doc_get(status, "conditions") : NULL;
        for (size_t i = 0; conds && conds->type == DP_DOC_SEQ && i < conds->n; i++) {
                const dp_doc_node *c = conds->items[i], *t = dp_doc_get(c, "type"), *st = dp_doc_get(c, "status");
                const dp_doc_node *msg = dp_doc_get(c, "message");
                if (!t || t->type != DP_DOC_SCALAR || !streq(t->str, "Active")) continue;
                ac->has_active = true;
                ac->active = st && st->type == DP_DOC_SCALAR && streq(st->str, "True");
                free(ac->active_message);
                ac->active_message = NULL;
                if (msg && msg->type == DP_DOC_SCALAR && msg->str[0] && !(ac->active_message = strdup(msg->str)))
                        return -ENOMEM;
        }
        return 0;
}

int kq_decode_admission_check(dctx *c, const dp_doc_node *root, dp_object o, dp_object_list *out) {
        kq q = {c, out, o};
        if (kq_need_name(c, root, o) < 0) return -EINVAL;
        dp_kq_admission_check *ac = (dp_kq_admission_check *)o.ext;
        KQ_FIELDS(&q, root, k, v, if (in_list(k, top_level)) r = 0; else if (streq(k, "spec")) r = ac_spec(&q, v, ac););
        if (!ac->controller_name || !ac->controller_name[0])
                return dfail(c, root, -EINVAL, "spec.controllerName: Required value");
        if (ac_active(dp_doc_get(root, "status"), ac) < 0) return dp_error_set(c->err, -ENOMEM, "out of memory");
        return 0;
}

void kq_admission_check_done(dp_object o) {
        dp_kq_admission_check *ac = (dp_kq_admission_check *)o.ext;
        dp_free_many(ac->controller_name, ac->parameters_kind, ac->parameters_name, ac->active_message);
}

/* One rule: a name (v1beta1's admissionChecks[]) or {name, onFlavors}. */
static int rule(kq *q, const dp_doc_node *n, bool strategy, dp_kq_check_rule *x) {
        if (!strategy) return get_str(q->c, n, &x->name);
        KQ_FIELDS(q, n, k, v, if (streq(k, "name")) r = get_str(q->c, v, &x->name); else if (streq(k, "onFlavors")) {
                r = get_strv(q->c, v, &x->on_flavors, &x->n_on_flavors);
                if (r >= 0 && x->n_on_flavors > DP_KUEUE_MAX_FLAVORS)
                        r = dfail(q->c, v, -E2BIG, "must have at most %d items", DP_KUEUE_MAX_FLAVORS);
        });
        return 0;
}

static int rules(kq *q, const dp_doc_node *n, bool strategy, dp_cluster_queue *cq) {
        int r = expect_seq(q->c, n);
        if (r <= 0) return r;
        if (n->n > DP_KUEUE_MAX_ADMISSION_CHECKS)
                return dfail(q->c, n, -E2BIG, "must have at most %d items, has %zu", DP_KUEUE_MAX_ADMISSION_CHECKS,
                             n->n);
        kq_cq_checks_free(cq);
        if (!(cq->checks = calloc(n->n + 1, sizeof(*cq->checks))))
                return dp_error_set(q->c->err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < n->n; i++) {
                size_t m = path_index(q->c, i);
                dp_kq_check_rule *x = &cq->checks[cq->n_checks++];
                if ((r = rule(q, n->items[i], strategy, x)) < 0) return r;
                if (!x->name || !x->name[0]) return dfail(q->c, n->items[i], -EINVAL, "name: Required value");
                for (size_t k = 0; k < i; k++) /* listType=map, keyed by name */
                        if (streq(cq->checks[k].name, x->name))
                                return dfail(q->c, n->items[i], -EINVAL, "name: Duplicate value: \"%.100s\"", x->name);
                path_pop(q->c, m);
        }
        return 0;
}

int kq_cq_checks(kq *q, const dp_doc_node *v, bool strategy, dp_cluster_queue *cq) {
        if (dp_doc_is_null(v)) return 0;
        if (!strategy) return rules(q, v, false, cq);
        KQ_FIELDS(q, v, k, x, if (streq(k, "admissionChecks")) r = rules(q, x, true, cq););
        return 0;
}

int kq_cq_checks_both(kq *q, const dp_doc_node *spec) {
        const dp_doc_node *a = dp_doc_get(spec, "admissionChecks"), *s = dp_doc_get(spec, "admissionChecksStrategy");
        if (!a || !s || dp_doc_is_null(s) || a->type != DP_DOC_SEQ || !a->n) return 0;
        return dfail(q->c, spec, -EINVAL,
                     "Invalid value: Either AdmissionChecks or AdmissionCheckStrategy can be set, "
                     "but not both");
}

void kq_cq_checks_free(dp_cluster_queue *cq) {
        for (size_t i = 0; i < cq->n_checks; i++) {
                free(cq->checks[i].name);
                dp_strv_free_n(cq->checks[i].on_flavors, cq->checks[i].n_on_flavors);
        }
        free(cq->checks);
        cq->checks = NULL;
        cq->n_checks = 0;
}

static int check_state(kq *q, const dp_doc_node *n, dp_kq_check_state *x) {
        KQ_FIELDS(q, n, k, v, if (streq(k, "name")) r = get_str(q->c, v, &x->name);
                  else if (streq(k, "state")) r = get_str(q->c, v, &x->state);
                  else if (streq(k, "message")) r = get_str(q->c, v, &x->message);
                  else if (streq(k, "lastTransitionTime") || streq(k, "podSetUpdates") ||
                           streq(k, "requeueAfterSeconds") || streq(k, "retryCount")) r = 0;);
        if (!x->name || !x->name[0]) return dfail(q->c, n, -EINVAL, "name: Required value");
        if (!x->state) return dfail(q->c, n, -EINVAL, "state: Required value");
        for (const char *const *s = check_states; *s; s++)
                if (streq(*s, x->state)) return 0;
        return dfail(q->c, n, -EINVAL,
                     "state: Unsupported value: \"%.60s\": supported values: \"Pending\", "
                     "\"Ready\", \"Retry\", \"Rejected\"",
                     x->state);
}

int kq_wl_checks(kq *q, const dp_doc_node *v, dp_kq_workload *w) {
        int r = expect_seq(q->c, v);
        if (r <= 0) return r;
        if (v->n > DP_KUEUE_MAX_WORKLOAD_ADMISSION_CHECKS)
                return dfail(q->c, v, -E2BIG, "must have at most %d items, has %zu",
                             DP_KUEUE_MAX_WORKLOAD_ADMISSION_CHECKS, v->n);
        kq_wl_checks_free(w);
        if (!(w->checks = calloc(v->n + 1, sizeof(*w->checks))))
                return dp_error_set(q->c->err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < v->n; i++) {
                size_t m = path_index(q->c, i);
                if ((r = check_state(q, v->items[i], &w->checks[w->n_checks++])) < 0) return r;
                path_pop(q->c, m);
        }
        return 0;
}

void kq_wl_checks_free(dp_kq_workload *w) {
        for (size_t i = 0; i < w->n_checks; i++)
                dp_free_many(w->checks[i].name, w->checks[i].state, w->checks[i].message);
        free(w->checks);
        w->checks = NULL;
        w->n_checks = 0;
}

/* ---- the ClusterQueue's state ---- */

static const dp_kq_admission_check *admission_check(const dp_queue *q, const char *name) {
        return q_index_get(q, "A\x1f%s", name);
}

static bool in_strv(char *const *v, size_t n, const char *s) {
        for (size_t i = 0; i < n; i++)
                if (streq(v[i], s)) return true;
        return false;
}

static bool cq_has_flavor(const dp_cluster_queue *cq, const char *f) {
        for (size_t g = 0; g < cq->n_groups; g++)
                for (size_t k = 0; k < cq->groups[g].n_flavors; k++)
                        if (streq(cq->groups[g].flavors[k].name, f)) return true;
        return false;
}

/* A rule's flavors are every flavor of the ClusterQueue (no onFlavors, or
 * onFlavors naming all of them: Kueue's sets.Equal). */
static bool rule_on_all_flavors(const dp_cluster_queue *cq, const dp_kq_check_rule *x) {
        if (!x->n_on_flavors) return true;
        for (size_t g = 0; g < cq->n_groups; g++)
                for (size_t k = 0; k < cq->groups[g].n_flavors; k++)
                        if (!in_strv(x->on_flavors, x->n_on_flavors, cq->groups[g].flavors[k].name)) return false;
        for (size_t i = 0; i < x->n_on_flavors; i++)
                if (!cq_has_flavor(cq, x->on_flavors[i])) return false;
        return true;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* ", " + "what: a,b" (sorted, as Kueue sorts them) when n > 0. */
static void put_list(dp_strbuf *sb, const char *what, const char **v, size_t n) {
        if (!n) return;
        qsort(v, n, sizeof(*v), cmp_str);
        dp_strbuf_printf(sb, "%s%s", sb->len ? ", " : "", what);
        for (size_t i = 0; i < n; i++)
                dp_strbuf_printf(sb, "%s%s", i ? "," : "", v[i]);
}

/* Kueue's message for an inactive ClusterQueue, its parts in Kueue's order
 * (stopped, missing flavors, then the checks'). */
static char *inactive_message(const dp_queue *q, const dp_cluster_queue *cq, const char **v[4], const size_t n[4]) {
        dp_strbuf sb = DP_STRBUF_INIT;
        if (cq->stop_policy && !streq(cq->stop_policy, "None")) dp_strbuf_puts(&sb, "is stopped");
        _cleanup_free_ const char **missing =
                calloc(DP_KUEUE_MAX_RESOURCE_GROUPS * DP_KUEUE_MAX_FLAVORS + 1, sizeof(char *));
        size_t nm = 0;
        for (size_t g = 0; missing && g < cq->n_groups; g++)
                for (size_t k = 0; k < cq->groups[g].n_flavors; k++)
                        if (!q_index_get(q, "F\x1f%s", cq->groups[g].flavors[k].name))
                                missing[nm++] = cq->groups[g].flavors[k].name;
        if (!missing) return NULL;
        put_list(&sb, "references missing ResourceFlavor(s): ", missing, nm);
        put_list(&sb, "references missing AdmissionCheck(s): ", v[0], n[0]);
        put_list(&sb, "references inactive AdmissionCheck(s): ", v[1], n[1]);
        put_list(&sb, "Cannot use multiple MultiKueue AdmissionChecks on the same ClusterQueue, found: ", v[2],
                 n[2] > 1 ? n[2] : 0);
        put_list(&sb, "Cannot specify MultiKueue AdmissionCheck per flavor, found: ", v[3], n[3]);
        _cleanup_free_ char *parts = dp_strbuf_steal(&sb);
        return parts ? dp_asprintf("Can't admit new workloads: %s.", parts) : NULL;
}

int q_checks_cluster_queue(dp_queue *q, qcq *c) {
        const dp_cluster_queue *cq = c->cq;
        if (!cq->n_checks) return 0;
        /* missing, inactive, MultiKueue, MultiKueue on some flavors only */
        _cleanup_free_ const char **buf = calloc(4 * cq->n_checks + 1, sizeof(char *));
        if (!buf) return -ENOMEM;
        const char **v[4] = {buf, buf + cq->n_checks, buf + 2 * cq->n_checks, buf + 3 * cq->n_checks};
        size_t n[4] = {0};
        for (size_t i = 0; i < cq->n_checks; i++) {
                const dp_kq_check_rule *x = &cq->checks[i];
                const dp_kq_admission_check *ac = admission_check(q, x->name);
                if (!ac) {
                        v[0][n[0]++] = x->name;
                        continue;
                }
                if (ac->has_active && !ac->active) v[1][n[1]++] = x->name;
                if (!streq(ac->controller_name, DP_KUEUE_MULTIKUEUE_CONTROLLER)) continue;
                v[2][n[2]++] = x->name;
                if (!rule_on_all_flavors(cq, x)) v[3][n[3]++] = x->name;
        }
        static const char *const reasons[] = {"AdmissionCheckNotFound", "AdmissionCheckInactive",
                                              "MultipleMultiKueueAdmissionChecks",
                                              "MultiKueueAdmissionCheckAppliedPerFlavor"};
        const char *reason = NULL;
        for (size_t k = 0; k < 4 && !reason; k++)
                if (n[k] > (k == 2)) reason = reasons[k];
        if (!reason) return 0;
        if (!c->inactive) c->inactive = reason;
        free(c->inactive_msg);
        return (c->inactive_msg = inactive_message(q, cq, v, n)) ? 0 : -ENOMEM;
}

/* ---- a workload's checks ---- */

static const dp_kq_workload *workload_object(const dp_queue *q, const dp_queue_workload *w) {
        return streq(w->kind, "Workload") ? q_index_get(q, "O\x1f%s\x1f%s", w->ns, w->name) : NULL;
}

/* The input Workload's state for check name, NULL when it has none. */
static const dp_kq_check_state *input_state(const dp_kq_workload *kw, const char *name) {
        for (size_t i = 0; kw && i < kw->n_checks; i++)
                if (streq(kw->checks[i].name, name)) return &kw->checks[i];
        return NULL;
}

/* AdmissionChecksForWorkload: every check when each runs on every flavor;
 * else those whose flavors include one w got. */
static bool check_applies(const dp_cluster_queue *cq, const dp_kq_check_rule *x, bool all_everywhere,
                          const dp_queue_workload *w) {
        if (all_everywhere) return true;
        for (size_t p = 0; p < w->n_podsets; p++)
                for (size_t i = 0; i < w->podsets[p].n_requests; i++) {
                        const char *f = w->podsets[p].flavors ? w->podsets[p].flavors[i] : NULL;
                        if (f && (x->n_on_flavors ? in_strv(x->on_flavors, x->n_on_flavors, f) : cq_has_flavor(cq, f)))
                                return true;
                }
        return false;
}

/* --set-check for check name, NULL when none. */
static const dp_queue_set_check *whatif_state(const dp_queue *q, const char *name) {
        for (size_t i = 0; q->opts && i < q->opts->n_checks; i++)
                if (streq(q->opts->checks[i].name, name)) return &q->opts->checks[i];
        return NULL;
}

/* Whether check k of w's ClusterQueue holds w back: it applies to w's
 * flavors and is not Ready (--set-check, else the input's Workload). */
static bool check_pending(const dp_queue *q, const dp_queue_workload *w, size_t k) {
        const dp_cluster_queue *cq = q->cqs[w->cq].cq;
        bool all_everywhere = true;
        for (size_t j = 0; j < cq->n_checks; j++)
                all_everywhere &= rule_on_all_flavors(cq, &cq->checks[j]);
        if (!check_applies(cq, &cq->checks[k], all_everywhere, w)) return false;
        const dp_queue_set_check *sc = whatif_state(q, cq->checks[k].name);
        if (sc) return !sc->ready;
        const dp_kq_check_state *st = input_state(workload_object(q, w), cq->checks[k].name);
        return !(st && streq(st->state, "Ready"));
}

int q_checks_reserved(dp_queue *q, size_t i) {
        dp_queue_workload *w = &q->wl[i];
        free(w->checks_pending);
        w->checks_pending = NULL;
        if (!w->cluster_queue || w->cq >= q->n_cqs) return 0;
        const dp_cluster_queue *cq = q->cqs[w->cq].cq;
        dp_strbuf sb = DP_STRBUF_INIT;
        for (size_t k = 0; k < cq->n_checks; k++)
                if (check_pending(q, w, k)) dp_strbuf_printf(&sb, "%s%s", sb.len ? ", " : "", cq->checks[k].name);
        if (!sb.len) return 0;
        return (w->checks_pending = dp_strbuf_steal(&sb)) ? 0 : -ENOMEM;
}

const char *q_checks_rejected(const dp_kq_workload *kw, char *buf, size_t size) {
        size_t len = 0;
        for (size_t i = 0; kw && i < kw->n_checks && len < size; i++)
                if (streq(kw->checks[i].state, "Rejected"))
                        len += (size_t)snprintf(buf + len, size - len, "%s%s",
                                                len ? "," : "Admission check(s): ", kw->checks[i].name);
        if (!len) return NULL;
        if (len < size) snprintf(buf + len, size - len, ", were rejected");
        return buf;
}

int q_checks_explain(const dp_queue *q, const dp_queue_workload *w, dp_strbuf *out) {
        if (w->state != DP_QW_ADMITTED || !w->checks_pending) return 0;
        const dp_kq_workload *kw = workload_object(q, w);
        dp_strbuf_printf(out,
                         "Not admitted yet (Kueue: UnsatisfiedChecks, The workload has not all checks ready): "
                         "admission check(s) %s\n",
                         w->checks_pending);
        const dp_cluster_queue *cq = q->cqs[w->cq].cq;
        for (size_t k = 0; k < cq->n_checks; k++) {
                if (!check_pending(q, w, k)) continue;
                const char *name = cq->checks[k].name;
                const dp_kq_admission_check *ac = admission_check(q, name);
                const dp_kq_check_state *st = input_state(kw, name);
                dp_strbuf_printf(out, "  %s (%s): ", name, ac ? ac->controller_name : "?");
                if (whatif_state(q, name))
                        dp_strbuf_puts(out, "Pending by --set-check\n");
                else if (st)
                        dp_strbuf_printf(out, "%s in the input%s%s\n", st->state, st->message ? ": " : "",
                                         st->message ? st->message : "");
                else
                        dp_strbuf_puts(out, "its controller decides at run time, which devplane does not simulate "
                                            "(a Workload's status.admissionChecks in the input is read)\n");
        }
        dp_strbuf_puts(out, "Its pods stay suspended or gated until every check is Ready. What if they pass:");
        for (size_t k = 0; k < cq->n_checks; k++)
                if (check_pending(q, w, k)) dp_strbuf_printf(out, " --set-check %s=Ready", cq->checks[k].name);
        dp_strbuf_putc(out, '\n');
        return dp_strbuf_failed(out) ? -ENOMEM : 0;
}

/* ---- --set-check ---- */

int dp_queue_options_add_check(dp_queue_options *o, const char *arg, dp_error *err) {
        assert_return(o && arg, -EINVAL);
        const char *eq = strrchr(arg, '=');
        if (!eq || eq == arg || (!streq(eq + 1, "Ready") && !streq(eq + 1, "Pending")))
                return dp_error_set(err, -EINVAL,
                                    "--set-check %s: must be ADMISSIONCHECK=Ready or ADMISSIONCHECK=Pending", arg);
        dp_queue_set_check *x = realloc(o->checks, (o->n_checks + 1) * sizeof(*x));
        if (!x) return dp_error_set(err, -ENOMEM, "out of memory");
        o->checks = x;
        x[o->n_checks] = (dp_queue_set_check){strndup(arg, (size_t)(eq - arg)), streq(eq + 1, "Ready")};
        return x[o->n_checks++].name ? 0 : dp_error_set(err, -ENOMEM, "out of memory");
}

int q_checks_whatif(const dp_queue *q, dp_error *err) {
        for (size_t i = 0; q->opts && i < q->opts->n_checks; i++)
                if (!admission_check(q, q->opts->checks[i].name))
                        return dp_error_set(err, -EINVAL, "--set-check %s=%s: AdmissionCheck %s is not in the input",
                                            q->opts->checks[i].name, q->opts->checks[i].ready ? "Ready" : "Pending",
                                            q->opts->checks[i].name);
        return 0;
}
