/* SPDX-License-Identifier: Apache-2.0
 *
 * test-kai.c — KAI-Scheduler's fair share and admission facts
 * (tests/queue/kai/case-NAME.yaml, each transcribing one of KAI's scenarios
 * with a `# source:` line) and the Queue decoder's rules.
 *
 * A case file is Kubernetes YAML (Nodes, KAI Queues, PodGroups, Pods) with
 * a header of comments:
 *     # source: <KAI file>:<line> "<test name>"
 *     # expect: NS/NAME Running|Admitted|Evicted|Pending [REASON]
 *     # fair-share: QUEUE RESOURCE=VALUE          (cpu millicores, memory MB, gpu)
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>

#include "base/fileio.h"
#include "harness.h"
#include "queue/kai.h"

static char *read_text(const char *path) {
        char *buf = NULL;
        size_t len = 0;
        dp_error err = DP_ERROR_INIT;
        if (dp_read_file(path, 1 << 20, &buf, &len, &err) < 0) DP_FAIL("%s: %s", path, err.msg);
        return buf;
}

static int load(const char *name, const char *text, dp_object_list **ret_l, dp_kai **ret_k, dp_error *err) {
        dp_object_list *l = dp_object_list_new();
        if (!l) return -ENOMEM;
        l->ext = &dp_kai_model_ext;
        int r = dp_model_decode_buffer(text, strlen(text), name, l, err);
        dp_kai *k = NULL;
        if (r >= 0) r = dp_kai_new(l, &k, err);
        *ret_l = l;
        *ret_k = k;
        return r;
}

static const char *state_word(dp_kai_state s) {
        return s == DP_KAI_RUNNING    ? "Running"
               : s == DP_KAI_ADMITTED ? "Admitted"
               : s == DP_KAI_EVICTED  ? "Evicted"
                                      : "Pending";
}

static void check_expect(const char *file, const dp_kai *k, const char *line) {
        char ref[300], state[32], reason[64] = "";
        if (sscanf(line, "%299s %31s %63s", ref, state, reason) < 2) DP_FAIL("%s: bad line %s", file, line);
        char *slash = strchr(ref, '/');
        if (!slash) DP_FAIL("%s: %s: NS/NAME expected", file, ref);
        *slash = 0;
        const dp_kai_group *g = dp_kai_find(k, ref, slash + 1);
        if (!g) DP_FAIL("%s: no group %s/%s", file, ref, slash + 1);
        if (!streq(state_word(g->state), state))
                DP_FAIL("%s: %s/%s: %s, expected %s (%s: %s)", file, ref, slash + 1, state_word(g->state), state,
                        g->reason ? g->reason : "-", g->message ? g->message : "-");
        if (reason[0] && !streq_ptr(g->reason, reason))
                DP_FAIL("%s: %s/%s: reason %s, expected %s (%s)", file, ref, slash + 1,
                        g->reason ? g->reason : "(none)", reason, g->message ? g->message : "");
}

static void check_share(const char *file, const dp_kai *k, const char *line) {
        char queue[256], res[16];
        double want = 0;
        if (sscanf(line, "%255s %15[^=]=%lf", queue, res, &want) != 3) DP_FAIL("%s: bad line %s", file, line);
        const dp_kai_queue *q = dp_kai_find_queue(k, queue);
        if (!q) DP_FAIL("%s: no queue %s", file, queue);
        int r = streq(res, "cpu") ? DP_KAI_CPU : streq(res, "memory") ? DP_KAI_MEMORY : DP_KAI_GPU;
        if (fabs(q->fair[r] - want) > 1e-6)
                DP_FAIL("%s: queue %s: fair share of %s %g, expected %g", file, queue, res, q->fair[r], want);
}

static int run_case(const char *name) {
        char path[512];
        snprintf(path, sizeof(path), "kai/%s", name);
        _cleanup_free_ char *text = read_text(path);
        if (!strstr(text, "# source: ")) DP_FAIL("%s: no # source: line", path);
        dp_object_list *l = NULL;
        dp_kai *k = NULL;
        dp_error err = DP_ERROR_INIT;
        if (load(path, text, &l, &k, &err) < 0) DP_FAIL("%s: %s", path, err.msg);
        ASSERT_OK(dp_kai_admit(k));
        int n = 0;
        for (const char *p = text; (p = strstr(p, "\n# ")); p++) {
                const char *line = p + 3;
                _cleanup_free_ char *rest = strndup(line, strcspn(line, "\n"));
                if (startswith(rest, "expect: "))
                        check_expect(path, k, rest + 8), n++;
                else if (startswith(rest, "fair-share: "))
                        check_share(path, k, rest + 12), n++;
        }
        if (!n) DP_FAIL("%s: no expectations", path);
        dp_kai_free(k);
        dp_object_list_free(l);
        return n;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

TEST(kai_cases) {
        DIR *d = opendir("kai");
        if (!d) DP_FAIL("kai/: cannot open");
        char *names[256];
        size_t n = 0;
        const char *only = getenv("DP_KAI_CASE"); /* one case (checking that a case fails when its rule breaks) */
        for (struct dirent *e; (e = readdir(d)) && n < ELEMENTSOF(names);)
                if (startswith(e->d_name, "case-") && strstr(e->d_name, ".yaml") && (!only || strstr(e->d_name, only)))
                        names[n++] = strdup(e->d_name);
        closedir(d);
        qsort(names, n, sizeof(char *), cmp_str);
        int checks = 0;
        for (size_t i = 0; i < n; i++) {
                checks += run_case(names[i]);
                free(names[i]);
        }
        printf("%zu KAI cases, %d expectations\n", n, checks);
        ASSERT_TRUE(getenv("DP_KAI_CASE") ? n == 1 : n >= 10);
}

/* ---- the decoder ---- */

static const char *decode_error(const char *yaml, char *warn, size_t warn_size) {
        static char msg[sizeof(((dp_error *)0)->msg)];
        dp_object_list *l = NULL;
        dp_kai *k = NULL;
        dp_error err = DP_ERROR_INIT;
        int r = load("q.yaml", yaml, &l, &k, &err);
        snprintf(msg, sizeof(msg), "%s", r < 0 ? err.msg : "");
        if (warn) snprintf(warn, warn_size, "%s", l && l->n_warnings ? l->warnings[0] : "");
        dp_kai_free(k);
        dp_object_list_free(l);
        return msg;
}

#define QUEUE_HEAD "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q}\nspec:\n"

TEST(kai_decode_rules) {
        char warn[1024];
        ASSERT_STREQ(decode_error(QUEUE_HEAD "  resources: {gpu: {quota: 2, limit: -1, overQuotaWeight: 1}}\n", warn,
                                  sizeof(warn)),
                     "");
        ASSERT_STREQ(warn, "");
        ASSERT_CONTAINS(decode_error(QUEUE_HEAD "  resources: {gpu: {quota: -2}}\n", NULL, 0),
                        "spec.resources.gpu.quota: must be -1 or more, got -2");
        ASSERT_CONTAINS(decode_error(QUEUE_HEAD "  resources: {cpu: {overQuotaWeight: -1}}\n", NULL, 0),
                        "spec.resources.cpu.overQuotaWeight: must be 0 or more");
        ASSERT_CONTAINS(decode_error(QUEUE_HEAD "  resources: {memory: {limit: lots}}\n", NULL, 0),
                        "spec.resources.memory.limit: expected a number");
        ASSERT_CONTAINS(decode_error(QUEUE_HEAD "  priority: high\n", NULL, 0), "spec.priority");
        ASSERT_CONTAINS(decode_error(QUEUE_HEAD "  parentQueue: q\n", NULL, 0), "a queue cannot be its own parent");
        ASSERT_STREQ(decode_error(QUEUE_HEAD "  colour: blue\n  resources: {gpu: {quota: 1, burst: 2}}\n", warn,
                                  sizeof(warn)),
                     "");
        ASSERT_CONTAINS(warn, "q.yaml: Queue q: spec: unknown field \"colour\"");
        ASSERT_CONTAINS(warn, "not a field devplane reads, ignored");
}

TEST(kai_parent_cycle) {
        const char *yaml =
                "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: a}\nspec: {parentQueue: b}\n---\n"
                "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: b}\nspec: {parentQueue: a}\n";
        ASSERT_CONTAINS(decode_error(yaml, NULL, 0), "KAI Queue a: spec.parentQueue: the parents form a cycle");
}

TEST(kai_volcano_queue_is_not_kai) {
        /* a Queue of another API group is not taken as KAI's */
        char warn[1024];
        const char *yaml =
                "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: v}\nspec: {weight: 1}\n";
        ASSERT_STREQ(decode_error(yaml, warn, sizeof(warn)), "");
        dp_object_list *l = dp_object_list_new();
        l->ext = &dp_kai_model_ext;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_model_decode_buffer(yaml, strlen(yaml), "v.yaml", l, &err));
        ASSERT_FALSE(dp_kai_input_has_queues(l));
        dp_object_list_free(l);
}
