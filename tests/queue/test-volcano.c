/* SPDX-License-Identifier: Apache-2.0
 *
 * test-volcano.c — Volcano's queue facts (tests/queue/volcano/case-NAME.yaml,
 * each naming the Volcano test or document it transcribes) through the
 * Volcano policy (queue/volcano.h), and the Queue decoder's warnings and
 * errors.
 *
 * A case file is Kubernetes YAML with a header of comments:
 *     # source: <where the fact comes from>
 *     # plugin: proportion|capacity                 (optional, proportion)
 *     # expect: NS/NAME Pending|Inqueue|Running [exact message]
 *     # note: NS/NAME <text the note contains>
 *     # deserved: QUEUE res=quantity,...            (those resources of its deserved)
 *     # allocated: QUEUE res=quantity,...
 *     # share: QUEUE value                          (as the report prints it, %.4g)
 *     # placed: NS/POD yes|no                       (allocated: handed to kube-scheduler)
 *     # actions: enqueue, allocate, backfill, preempt, reclaim (optional: the opt-in actions)
 *     # evicted: NS/POD yes|no                      (reclaim or preempt evicted it)
 *     # queue-note: QUEUE <text the queue's note contains>
 *     # queue-dra: QUEUE deviceclass/<class>=allocated/capability
 */
#include <math.h>
#include <stdio.h>

#include "base/fileio.h"
#include "cases.h"
#include "harness.h"
#include "queue/kueue.h"
#include "queue/volcano.h"

__attribute__((noinline)) static char *read_text(const char *path) {
        char *buf = NULL;
        size_t len = 0;
        dp_error err = DP_ERROR_INIT;
        if (dp_read_file(path, 1 << 20, &buf, &len, &err) < 0) DP_FAIL("%s: %s", path, err.msg);
        return buf;
}

static char *header(const char *text, const char *key) {
        char pat[64];
        snprintf(pat, sizeof(pat), "# %s: ", key);
        const char *p = strstr(text, pat);
        size_t k = strlen(pat);
        return p ? strndup(p + k, strcspn(p + k, "\n")) : NULL;
}

static dp_volcano *run_text(const char *name, const char *text, const dp_volcano_options *o, dp_object_list **ret_l) {
        dp_object_list *l = dp_object_list_new();
        ASSERT_TRUE(l);
        l->ext = &dp_queue_model_ext;
        dp_error err = DP_ERROR_INIT;
        if (dp_model_decode_buffer(text, strlen(text), name, l, &err) < 0 || dp_model_generate_names(l, &err) < 0 ||
            dp_model_validate(l, &err) < 0 || dp_model_apply_defaults(l, &err) < 0)
                DP_FAIL("%s: %s", name, err.msg);
        dp_volcano *v = NULL;
        ASSERT_OK(dp_volcano_new(o, &v));
        for (size_t i = 0; i < l->n; i++)
                ASSERT_OK(dp_volcano_add(v, l->items[i], &err));
        if (dp_volcano_run(v, &err) < 0) DP_FAIL("%s: %s", name, err.msg);
        ASSERT_OK(dp_volcano_apply(v));
        *ret_l = l; /* the objects v borrows */
        return v;
}

/* "NS/POD yes|no": whether Volcano handed the pod to kube-scheduler. */
static void check_placed(const char *file, const dp_object_list *l, const char *line) {
        char ref[300], want[8];
        if (sscanf(line, "%299s %7s", ref, want) != 2) DP_FAIL("%s: bad line %s", file, line);
        for (size_t i = 0; i < l->n; i++) {
                if (l->items[i].hdr->kind != DP_KIND_POD) continue;
                const dp_pod *p = l->items[i].pod;
                char key[600];
                snprintf(key, sizeof(key), "%s/%s", p->meta.namespace ? p->meta.namespace : "default", p->meta.name);
                if (!streq(key, ref)) continue;
                bool handed = !p->scheduler_name;
                if (handed != streq(want, "yes"))
                        DP_FAIL("%s: pod %s: allocated %s, expected %s", file, ref, handed ? "yes" : "no", want);
                return;
        }
        DP_FAIL("%s: no pod %s", file, ref);
}

static const char *phase_name(dp_vc_phase p) {
        return p == DP_VC_RUNNING ? "Running" : p == DP_VC_INQUEUE ? "Inqueue" : "Pending";
}

static void check_expect(const char *file, const dp_volcano *v, const char *line, bool note) {
        char ref[300], phase[32];
        const char *name = NULL, *rest = case_ref(file, line, note, ref, phase, &name), *slash = name - 1;
        const dp_vc_job *j = dp_volcano_find_job(v, ref, name);
        if (!j) DP_FAIL("%s: no PodGroup %s/%s", file, ref, slash + 1);
        if (note) {
                if (!j->note || !strstr(j->note, rest))
                        DP_FAIL("%s: %s/%s: note \"%s\" does not contain \"%s\"", file, ref, slash + 1,
                                j->note ? j->note : "(none)", rest);
                return;
        }
        if (!streq(phase_name(j->phase), phase))
                DP_FAIL("%s: %s/%s: %s, expected %s (message: %s)", file, ref, slash + 1, phase_name(j->phase), phase,
                        j->message ? j->message : "");
        if (*rest && !streq_ptr(j->message, rest))
                DP_FAIL("%s: %s/%s: message\n  got:      %s\n  expected: %s", file, ref, slash + 1,
                        j->message ? j->message : "(none)", rest);
}

/* "QUEUE res=q,res=q" against the queue's deserved or allocated. */
static void check_vector(const char *file, const dp_volcano *v, const char *line, bool deserved) {
        char qname[256], list[512];
        if (sscanf(line, "%255s %511s", qname, list) != 2) DP_FAIL("%s: bad line %s", file, line);
        const dp_vc_queue_info *q = dp_volcano_find_queue(v, qname);
        if (!q) DP_FAIL("%s: no queue %s", file, qname);
        for (char *save = NULL, *item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
                char *eq = strchr(item, '=');
                if (!eq) DP_FAIL("%s: bad item %s", file, item);
                *eq = 0;
                ssize_t d = dp_volcano_dim(v, item);
                if (d < 0) DP_FAIL("%s: %s: no resource %s", file, qname, item);
                char got[64];
                dp_volcano_format(v, (size_t)d, (deserved ? q->deserved : q->allocated)[d], got, sizeof(got));
                if (!streq(got, eq + 1))
                        DP_FAIL("%s: queue %s: %s %s is %s, expected %s", file, qname,
                                deserved ? "deserved" : "allocated", item, got, eq + 1);
        }
}

static void check_share(const char *file, const dp_volcano *v, const char *line) {
        char qname[256], want[64], got[64];
        if (sscanf(line, "%255s %63s", qname, want) != 2) DP_FAIL("%s: bad line %s", file, line);
        const dp_vc_queue_info *q = dp_volcano_find_queue(v, qname);
        if (!q) DP_FAIL("%s: no queue %s", file, qname);
        snprintf(got, sizeof(got), "%.4g", q->share);
        if (!streq(got, want)) DP_FAIL("%s: queue %s: share %s, expected %s", file, qname, got, want);
}

/* "NS/POD yes|no": whether reclaim evicted the pod. */
static void check_evicted(const char *file, const dp_volcano *v, const char *line) {
        char ns[128], pod[256], want[8], buf[700];
        if (sscanf(line, "%127[^/]/%255s %7s", ns, pod, want) != 3) DP_FAIL("%s: bad line %s", file, line);
        bool got = dp_volcano_pod_evicted(v, ns, pod, buf, sizeof(buf)) != NULL;
        if (got != streq(want, "yes"))
                DP_FAIL("%s: pod %s/%s: evicted %s, expected %s", file, ns, pod, got ? "yes" : "no", want);
}

/* "QUEUE text": the queue's note contains text. */
static void check_queue_note(const char *file, const dp_volcano *v, const char *line) {
        char qname[256];
        int used = 0;
        if (sscanf(line, "%255s %n", qname, &used) != 1) DP_FAIL("%s: bad line %s", file, line);
        const dp_vc_queue_info *q = dp_volcano_find_queue(v, qname);
        if (!q) DP_FAIL("%s: no queue %s", file, qname);
        if (!q->note || !strstr(q->note, line + used))
                DP_FAIL("%s: queue %s: note \"%s\" does not contain \"%s\"", file, qname, q->note ? q->note : "(none)",
                        line + used);
}

/* "QUEUE key=value": the queue's DRA quota in the report's words. */
static void check_queue_dra(const char *file, const dp_volcano *v, const char *line) {
        char qname[256], want[512];
        if (sscanf(line, "%255s %511s", qname, want) != 2) DP_FAIL("%s: bad line %s", file, line);
        dp_doc_set *s = dp_doc_set_new();
        ASSERT_TRUE(s);
        dp_strbuf out = DP_STRBUF_INIT;
        dp_volcano_print(dp_volcano_encode(s, v), &out);
        char pat[800];
        snprintf(pat, sizeof(pat), "Queue %s (", qname);
        const char *q = strstr(out.buf ? out.buf : "", pat), *dra = q ? strstr(q, "DRA quota") : NULL;
        const char *end = dra ? strchr(dra, '\n') : NULL;
        if (!dra || !end || !memmem(dra, (size_t)(end - dra), want, strlen(want)))
                DP_FAIL("%s: queue %s: no DRA quota %s in\n%s", file, qname, want, out.buf ? out.buf : "");
        dp_strbuf_done(&out);
        dp_doc_set_free(s);
}

static size_t run_case(const char *name) {
        char path[512];
        snprintf(path, sizeof(path), "volcano/%s", name);
        _cleanup_free_ char *text = read_text(path);
        _cleanup_free_ char *source = header(text, "source"), *plugin = header(text, "plugin");
        _cleanup_free_ char *actions = header(text, "actions");
        if (!source) DP_FAIL("%s: no '# source:' line", name);
        dp_object_list *l = NULL;
        dp_volcano_options o = {.plugin = plugin && streq(plugin, "capacity") ? DP_VC_CAPACITY : DP_VC_PROPORTION};
        dp_error err = DP_ERROR_INIT;
        if (actions && dp_volcano_options_actions(&o, actions, &err) < 0) DP_FAIL("%s: %s", name, err.msg);
        dp_volcano *v = run_text(name, text, &o, &l);
        static const char *const keys[] = {"expect: ", "note: ",    "deserved: ",   "allocated: ", "share: ",
                                           "placed: ", "evicted: ", "queue-note: ", "queue-dra: "};
        size_t n = 0;
        for (const char *p = text; (p = strstr(p, "\n# ")); p++)
                for (size_t k = 0; k < ELEMENTSOF(keys); k++) {
                        if (!startswith(p + 3, keys[k])) continue;
                        const char *at = p + 3 + strlen(keys[k]);
                        _cleanup_free_ char *line = strndup(at, strcspn(at, "\n"));
                        if (k <= 1)
                                check_expect(name, v, line, k == 1);
                        else if (k <= 3)
                                check_vector(name, v, line, k == 2);
                        else if (k == 4)
                                check_share(name, v, line);
                        else if (k == 5)
                                check_placed(name, l, line);
                        else if (k == 6)
                                check_evicted(name, v, line);
                        else if (k == 7)
                                check_queue_note(name, v, line);
                        else
                                check_queue_dra(name, v, line);
                        n++;
                }
        if (!n) DP_FAIL("%s: no '# expect:' line", name);
        dp_volcano_free(v);
        dp_object_list_free(l);
        return n;
}

TEST(volcano_cases) {
        size_t n = 0;
        run_cases("volcano", run_case, true, &n);
        ASSERT_TRUE(n >= 10);
}

/* Decoding: one error with the path for a bad value, a warning naming an
 * unknown field, defaults, and another group's Queue left alone. */
static int decode_text(const char *y, dp_object_list **ret, dp_error *err) {
        dp_object_list *l = dp_object_list_new();
        ASSERT_TRUE(l);
        l->ext = &dp_queue_model_ext;
        int r = dp_model_decode_buffer(y, strlen(y), "q.yaml", l, err);
        *ret = l;
        return r;
}

static void expect_error(const char *spec, const char *msg) {
        char y[1024];
        snprintf(y, sizeof(y), "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n%s\n",
                 spec);
        dp_object_list *l = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_EQ(decode_text(y, &l, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, msg);
        ASSERT_EQ(l->n, (size_t)0);
        dp_object_list_free(l);
}

TEST(volcano_queue_decode) {
        expect_error("spec: {weight: 0}", "q.yaml: Queue q: spec.weight: queue weight must be a positive integer");
        expect_error("spec: {capability: {cpu: \"-1\"}}", "spec.capability.cpu: must be greater than or equal to 0");
        expect_error("spec: {guarantee: {resource: {memory: \"-1Gi\"}}}", "spec.guarantee.resource.memory");
        expect_error("spec: {dequeueStrategy: lifo}", "spec.dequeueStrategy: unsupported value \"lifo\"");
        expect_error("status: {state: Paused}", "status.state: unsupported value \"Paused\"");
        expect_error("spec: {parent: q}", "spec.parent: a Queue cannot be its own parent");
        dp_object_list *l = NULL;
        dp_error err = DP_ERROR_INIT;
        const char *y =
                "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n"
                "spec: {capability: {cpu: 4}, colour: blue, affinity: {}}\nstatus: {state: Closed, running: 3}\n"
                "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: k}\n";
        ASSERT_OK(decode_text(y, &l, &err));
        ASSERT_EQ(l->n, (size_t)2); /* KAI's Queue (another apiVersion) goes to KAI's table */
        ASSERT_TRUE(dp_volcano_is_queue(l->items[0]));
        ASSERT_FALSE(dp_volcano_is_queue(l->items[1]));
        const dp_vc_queue *q = (const dp_vc_queue *)l->items[0].ext;
        ASSERT_EQ(q->weight, 1);
        ASSERT_TRUE(q->reclaimable);
        ASSERT_FALSE(q->fifo);
        ASSERT_STREQ(q->state, "Closed");
        ASSERT_EQ(q->n_capability, (size_t)1);
        ASSERT_EQ(l->n_warnings, (size_t)1);
        ASSERT_CONTAINS(l->warnings[0], "Queue q: spec: unknown field \"colour\"");
        ASSERT_EQ(l->n_skipped, (size_t)0);
        dp_object_list_free(l);
}

/* Over time: a pod deleted after the first sessions frees what it held
 * (a task's, or a bound pod of another scheduler), and the sessions run
 * again on what is left (dp_volcano_resume). */
TEST(volcano_over_time) {
        const char *y =
                "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
                "status: {allocatable: {cpu: \"4\", memory: 4Gi}, capacity: {cpu: \"4\", memory: 4Gi}}\n---\n"
                "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q1}\nspec: {weight: 1}\n---\n"
                "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: ns1}\n"
                "spec: {nodeName: n1, containers: [{name: c, image: x, resources: {requests: {cpu: \"3\"}}}]}\n---\n"
                "apiVersion: v1\nkind: Pod\nmetadata: {name: job-0, namespace: ns1, annotations: "
                "{scheduling.volcano.sh/queue-name: q1}}\n"
                "spec: {schedulerName: volcano, containers: [{name: c, image: x, resources: {requests: {cpu: "
                "\"2\"}}}]}\n";
        dp_object_list *l = NULL;
        dp_volcano_options o = {0};
        dp_volcano *v = run_text("over-time.yaml", y, &o, &l);
        const dp_vc_job *j = dp_volcano_find_job(v, "ns1", "podgroup-job-0");
        ASSERT_TRUE(j);
        ASSERT_EQ(j->phase, DP_VC_PENDING); /* 1 cpu free: overcommit keeps it out */
        ASSERT_FALSE(dp_volcano_pod_allocated(v, "ns1", "job-0"));
        ASSERT_EQ(dp_volcano_pod_deleted(v, "ns1", "nothing"), 0);
        ASSERT_EQ(dp_volcano_pod_deleted(v, "ns1", "web"), 1);
        ASSERT_EQ(dp_volcano_pod_deleted(v, "ns1", "web"), 0); /* once */
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_volcano_resume(v, &err));
        ASSERT_EQ(j->phase, DP_VC_RUNNING);
        ASSERT_TRUE(dp_volcano_pod_allocated(v, "ns1", "job-0"));
        ASSERT_EQ(dp_volcano_find_queue(v, "q1")->running, (size_t)1);
        ASSERT_EQ(dp_volcano_find_queue(v, "q1")->inqueued, (size_t)0);
        /* the task's own pod deleted: what it held is free again */
        ASSERT_EQ(dp_volcano_pod_deleted(v, "ns1", "job-0"), 1);
        ASSERT_FALSE(dp_volcano_pod_allocated(v, "ns1", "job-0"));
        dp_volcano_free(v);
        dp_object_list_free(l);
}
