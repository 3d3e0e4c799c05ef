/* SPDX-License-Identifier: Apache-2.0
 *
 * test-admission.c — Kueue's admission facts (tests/queue/cases/case-NAME.yaml, each
 * naming the Kueue test or document it transcribes) and the behaviour around
 * them: decoding warnings and errors, what admission does to Jobs and Pods.
 *
 * A case file is Kubernetes YAML with a header of comments:
 *     # source: <where the fact comes from>
 *     # fixture: <file in cases/ loaded first>        (optional)
 *     # cycles: <n>                                   (optional: Kueue's tests look at one cycle)
 *     # fair-sharing: true                            (optional: Kueue's Configuration fairSharing.enable)
 *     # kueue-config: <Configuration file in cases/>  (optional: Kueue's Configuration)
 *     # expect: NS/NAME Admitted [res=flavor,...]
 *     # expect: NS/NAME Pending|Inadmissible [exact condition message]
 *     # note: NS/NAME <text the note contains>
 *     # preempted: NS/NAME REASON                     (Kueue's Preempted condition reason)
 *     # preempted: none
 *     # count: NS/NAME PODSET=N[,PODSET=N]            (partial admission: the pods admitted per pod set)
 * A case with "# preempted:" lines names every workload preempted, no more.
 */
#include <stdio.h>

#include "base/fileio.h"
#include "cases.h"
#include "harness.h"
#include "queue/queue.h"

static char *read_case(const char *name) {
        char path[512];
        snprintf(path, sizeof(path), "cases/%s", name);
        char *buf = NULL;
        size_t len = 0;
        dp_error err = DP_ERROR_INIT;
        if (dp_read_file(path, 1 << 20, &buf, &len, &err) < 0) DP_FAIL("%s: %s", path, err.msg);
        return buf;
}

static void load(dp_object_list *l, const char *name, const char *text) {
        dp_error err = DP_ERROR_INIT;
        if (dp_model_decode_buffer(text, strlen(text), name, l, &err) < 0) DP_FAIL("%s: %s", name, err.msg);
}

static char *header(const char *text, const char *key) {
        char pat[64];
        snprintf(pat, sizeof(pat), "# %s: ", key);
        const char *p = strstr(text, pat);
        if (!p) return NULL;
        p += strlen(pat);
        return strndup(p, strcspn(p, "\n"));
}

static void flavors_of(const dp_queue_workload *w, char *buf, size_t size) {
        size_t len = 0;
        buf[0] = 0;
        for (size_t p = 0; p < w->n_podsets; p++)
                for (size_t i = 0; i < w->podsets[p].n_requests; i++)
                        if (w->podsets[p].flavors[i] && len < size)
                                len += (size_t)snprintf(buf + len, size - len, "%s%s=%s", len ? "," : "",
                                                        w->podsets[p].requests[i].name, w->podsets[p].flavors[i]);
}

static void check_line(const char *file, const dp_queue *q, const char *line, bool note) {
        char ref[300], state[32];
        const char *name = NULL, *rest = case_ref(file, line, note, ref, state, &name), *slash = name - 1;
        const dp_queue_workload *w = dp_queue_find(q, ref, name);
        if (!w) DP_FAIL("%s: no workload %s/%s", file, ref, slash + 1);
        if (note) {
                if (!w->note || !strstr(w->note, rest))
                        DP_FAIL("%s: %s/%s: note \"%s\" does not contain \"%s\"", file, ref, slash + 1,
                                w->note ? w->note : "(none)", rest);
                return;
        }
        const char *got = w->state == DP_QW_ADMITTED ? "Admitted" : w->state == DP_QW_PENDING ? "Pending" : "Inadmissible";
        if (!streq(got, state))
                DP_FAIL("%s: %s/%s: %s, expected %s (message: %s)", file, ref, slash + 1, got, state,
                        w->message ? w->message : "");
        char fl[512];
        flavors_of(w, fl, sizeof(fl));
        if (w->state == DP_QW_ADMITTED && *rest && !streq(fl, rest))
                DP_FAIL("%s: %s/%s: flavors %s, expected %s", file, ref, slash + 1, fl, rest);
        if (w->state != DP_QW_ADMITTED && *rest && !streq_ptr(w->message, rest))
                DP_FAIL("%s: %s/%s: message\n  got:      %s\n  expected: %s", file, ref, slash + 1,
                        w->message ? w->message : "(none)", rest);
}

/* "# preempted: NS/NAME REASON" or "none"; returns 1 for a workload. */
static size_t check_preempted(const char *file, const dp_queue *q, const char *line) {
        char ref[300], reason[64] = "";
        if (streq(line, "none")) return 0;
        if (sscanf(line, "%299s %63s", ref, reason) != 2) DP_FAIL("%s: bad line %s", file, line);
        char *slash = strchr(ref, '/');
        if (!slash) DP_FAIL("%s: %s: NS/NAME expected", file, ref);
        *slash = 0;
        const dp_queue_workload *w = dp_queue_find(q, ref, slash + 1);
        if (!w) DP_FAIL("%s: no workload %s/%s", file, ref, slash + 1);
        if (!w->preempted_by || !streq_ptr(w->preempted_reason, reason))
                DP_FAIL("%s: %s/%s: preempted %s (by %s), expected %s", file, ref, slash + 1,
                        w->preempted_reason ? w->preempted_reason : "never", w->preempted_by ? w->preempted_by : "-",
                        reason);
        return 1;
}

/* "# count: NS/NAME PODSET=N,...": the admitted workload's counts. */
static void check_count(const char *file, const dp_queue *q, const char *line) {
        char ref[300], want[600];
        if (sscanf(line, "%299s %599s", ref, want) != 2) DP_FAIL("%s: bad line %s", file, line);
        char *slash = strchr(ref, '/');
        if (!slash) DP_FAIL("%s: %s: NS/NAME expected", file, ref);
        *slash = 0;
        const dp_queue_workload *w = dp_queue_find(q, ref, slash + 1);
        if (!w || w->state != DP_QW_ADMITTED) DP_FAIL("%s: %s/%s: not admitted", file, ref, slash + 1);
        char got[600];
        size_t len = 0;
        got[0] = 0;
        for (size_t p = 0; p < w->n_podsets && len < sizeof(got); p++)
                len += (size_t)snprintf(got + len, sizeof(got) - len, "%s%s=%d", p ? "," : "", w->podsets[p].name,
                                        w->podsets[p].admitted_count);
        if (!streq(got, want)) DP_FAIL("%s: %s/%s: counts %s, expected %s", file, ref, slash + 1, got, want);
}

static size_t run_case(const char *name) {
        _cleanup_free_ char *text = read_case(name);
        _cleanup_free_ char *fixture = header(text, "fixture"), *cycles = header(text, "cycles");
        _cleanup_free_ char *source = header(text, "source"), *fair = header(text, "fair-sharing");
        if (!source) DP_FAIL("%s: no '# source:' line", name);
        _cleanup_(dp_object_list_freep) dp_object_list *l = dp_object_list_new();
        ASSERT_TRUE(l);
        l->ext = &dp_queue_model_ext;
        if (fixture) {
                _cleanup_free_ char *ft = read_case(fixture);
                load(l, fixture, ft);
        }
        load(l, name, text);
        dp_error err = DP_ERROR_INIT;
        if (dp_model_generate_names(l, &err) < 0 || dp_model_validate(l, &err) < 0) DP_FAIL("%s: %s", name, err.msg);
        _cleanup_free_ char *config = header(text, "kueue-config");
        _cleanup_(dp_kueue_config_freep) dp_kueue_config *cfg = NULL;
        if (config) {
                _cleanup_free_ char *ct = read_case(config);
                if (dp_kueue_config_parse(ct, strlen(ct), config, &cfg, &err) < 0) DP_FAIL("%s: %s", name, err.msg);
        }
        dp_queue_options opts = {.config = cfg};
        _cleanup_(dp_queue_freep) dp_queue *q = NULL;
        if (dp_queue_new_opts(l, &opts, &q, &err) < 0) DP_FAIL("%s: %s", name, err.msg);
        dp_queue_set_fair_sharing(q, fair && streq(fair, "true"));
        int r = cycles ? dp_queue_admit_cycles(q, (size_t)atoi(cycles), &err) : dp_queue_admit(q, &err);
        if (r < 0) DP_FAIL("%s: %s", name, err.msg);
        size_t n = 0, named = 0;
        bool preemptions = false;
        for (const char *p = text; (p = strstr(p, "\n# ")); p++) {
                if (startswith(p + 3, "preempted: ")) {
                        _cleanup_free_ char *line = strndup(p + 14, strcspn(p + 14, "\n"));
                        named += check_preempted(name, q, line);
                        preemptions = true;
                        n++;
                        continue;
                }
                if (startswith(p + 3, "count: ")) {
                        _cleanup_free_ char *line = strndup(p + 10, strcspn(p + 10, "\n"));
                        check_count(name, q, line);
                        n++;
                        continue;
                }
                bool note = startswith(p + 3, "note: ");
                if (!note && !startswith(p + 3, "expect: ")) continue;
                _cleanup_free_ char *line = strndup(p + (note ? 9 : 11), strcspn(p + (note ? 9 : 11), "\n"));
                check_line(name, q, line, note);
                n++;
        }
        if (!n) DP_FAIL("%s: no '# expect:' line", name);
        size_t preempted = 0;
        for (size_t i = 0; i < dp_queue_n_workloads(q); i++)
                preempted += dp_queue_workload_at(q, i)->times_preempted > 0;
        if (preemptions && preempted != named)
                DP_FAIL("%s: %zu workload(s) preempted, the case names %zu", name, preempted, named);
        return n;
}

TEST(kueue_cases) {
        size_t n = 0;
        run_cases("cases", run_case, false, &n);
        ASSERT_TRUE(n >= 1);
}
