/* SPDX-License-Identifier: Apache-2.0
 * sched-failmalloc — fail each allocation in turn while
 *   (a) a Fleet + workload (failmalloc/sim.yaml: V1 and V2 pods, a claim
 *       template, a shared claim, a NoExecute device fault on the Timeline;
 *       a 3-GPU profile file keeps it fast) is read and simulated through
 *       the public sim API (dp_sim_load, dp_sim_report), and so is a
 *       cluster dump (failmalloc/dump.yaml: Node objects, a bound pod holding
 *       a claim, generateName, a Job, a skipped kind) with what-if flags;
 *   (b) the resourceclaim controller and the scheduler run over a store
 *       (dp_sched_claims_from_templates, dp_sched_run).
 * Every run must end with exactly the normal result, or with -ENOMEM and a
 * non-empty message; no other error, no crash, no leak (LeakSanitizer at
 * exit). In (b) the store must show no partial state after a failure: a
 * claim reserved for a pod that is not bound, or allocated for nobody; and
 * the scheduler run again without failures must reach the normal placement.
 * devplane's allocations are intercepted with the linker's --wrap. */
#include <stdio.h>

#include "sched/sim.h"

/* The wrappers of ../failmalloc.h, plus FM_TRACE=N: print the stack of
 * allocation N of every run when it is failed (to find where a bad result
 * comes from). */
void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t a, size_t b);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
void __sanitizer_print_stack_trace(void) __attribute__((weak));

static unsigned long fail_at, counter, trace_at;
static bool failed, counting = true;

static bool should_fail(void) {
        if (!counting || !fail_at || ++counter != fail_at) return false;
        failed = true;
        if (trace_at == fail_at && __sanitizer_print_stack_trace) __sanitizer_print_stack_trace();
        return true;
}
void *__wrap_malloc(size_t n) { return should_fail() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t a, size_t b) { return should_fail() ? NULL : __real_calloc(a, b); }
void *__wrap_realloc(void *p, size_t n) { return should_fail() ? NULL : __real_realloc(p, n); }
char *__wrap_strdup(const char *s) { return should_fail() ? NULL : __real_strdup(s); }
char *__wrap_strndup(const char *s, size_t n) { return should_fail() ? NULL : __real_strndup(s, n); }

#define CLASS                                                                                                          \
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.example.com}\n"                       \
        "spec: {selectors: [{cel: {expression: \"device.driver == 'gpu.example.com'\"}}]}\n---\n"
#define TEMPLATE                                                                                                       \
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: one-gpu}\n"                     \
        "spec: {spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu.example.com}}]}}}\n---\n"
#define SHARED                                                                                                         \
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: shared}\n"                              \
        "spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu.example.com}}]}}\n---\n"
#define RES "example.com/gpu"
#define POD_V1(name, n)                                                                                                \
        "apiVersion: v1\nkind: Pod\nmetadata: {name: " name "}\nspec:\n"                                               \
        "  containers: [{name: c, image: x, resources: {limits: {" RES ": " #n "}}}]\n---\n"
#define POD_TEMPLATE(name)                                                                                             \
        "apiVersion: v1\nkind: Pod\nmetadata: {name: " name "}\nspec:\n"                                               \
        "  containers: [{name: c, image: x, resources: {claims: [{name: g}]}}]\n"                                      \
        "  resourceClaims: [{name: g, resourceClaimTemplateName: one-gpu}]\n---\n"
#define POD_SHARED(name)                                                                                               \
        "apiVersion: v1\nkind: Pod\nmetadata: {name: " name "}\nspec:\n"                                               \
        "  containers: [{name: c, image: x, resources: {claims: [{name: g}]}}]\n"                                      \
        "  resourceClaims: [{name: g, resourceClaimName: shared}]\n---\n"

#define SLICE(node)                                                                                                    \
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: " node "-gpu}\n"                        \
        "spec:\n  driver: gpu.example.com\n  nodeName: " node "\n"                                                     \
        "  pool: {name: " node ", generation: 1, resourceSliceCount: 1}\n"                                             \
        "  devices: [{name: gpu-0}, {name: gpu-1}]\n---\n"
#define NODE(name)                                                                                                     \
        "apiVersion: v1\nkind: Node\nmetadata: {name: " name "}\n"                                                     \
        "status: {capacity: {" RES ": \"2\"}, allocatable: {" RES ": \"2\"}}\n---\n"

static const char store_yaml[] = NODE("n1") NODE("n2") SLICE("n1") SLICE("n2") CLASS TEMPLATE SHARED POD_V1("v1", 2)
        POD_V1("v2", 2) POD_V1("v3", 1) POD_TEMPLATE("t1") POD_TEMPLATE("t2") POD_SHARED("s1") POD_SHARED("s2");

static unsigned long points, bad;

/* A failed call must say -ENOMEM with a message. */
static void check_error(const char *what, int r, const dp_error *err) {
        if (r == -ENOMEM && err->msg[0]) return;
        fprintf(stderr, "sched-failmalloc: %s: allocation %lu: %d with \"%s\"\n", what, fail_at, r, err->msg);
        bad++;
}

/* ---- (a) simulate ---- */
static const char *sim_path;
static int simulate(dp_strbuf *out, dp_error *err) {
        dp_sim_input *in = NULL;
        const char *paths[] = {sim_path};
        int r = dp_sim_load(paths, 1, &in, err);
        /* the dump runs with what-if changes on top (failmalloc/dump.yaml) */
        char *cordon[] = {(char *)"gpu-b"}, *fail[] = {(char *)"dra-a/gpu-1"}, *mode[] = {(char *)"gpu-b=v2"};
        dp_sim_whatif w = {cordon, 1, fail, 1, mode, 1};
        if (r >= 0 && strstr(sim_path, "dump")) r = dp_sim_set_whatif(in, &w, err);
        if (r >= 0) r = dp_sim_report(in, DP_SIM_OUT_JSON, out, NULL, err);
        dp_sim_input_free(in);
        return r;
}

static unsigned long run_sim(const char *path) {
        dp_strbuf want = DP_STRBUF_INIT;
        dp_error err = DP_ERROR_INIT;
        sim_path = path;
        fail_at = 0;
        if (simulate(&want, &err) < 0 || dp_strbuf_failed(&want)) {
                fprintf(stderr, "sched-failmalloc: simulate fails without failures: %s\n", err.msg);
                exit(1);
        }
        unsigned long n;
        for (n = 1;; n++) {
                fail_at = n;
                counter = 0;
                failed = false;
                dp_strbuf out = DP_STRBUF_INIT;
                dp_error_clear(&err);
                int r = simulate(&out, &err);
                bool done = !failed;
                if (r < 0)
                        check_error("simulate", r, &err);
                else if (dp_strbuf_failed(&out) || !streq(dp_strbuf_str(&out), dp_strbuf_str(&want))) {
                        fprintf(stderr, "sched-failmalloc: simulate: allocation %lu: output differs\n", n);
                        bad++;
                }
                dp_strbuf_done(&out);
                if (done) break;
        }
        dp_strbuf_done(&want);
        fail_at = 0;
        return n - 1;
}

/* ---- (b) the scheduler over a store ---- */
static dp_store *new_store(void) {
        dp_store *st = dp_store_new();
        dp_object_list *l = dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        if (!st || !l || dp_model_decode_buffer(store_yaml, sizeof(store_yaml) - 1, "store.yaml", l, &err) < 0) {
                fprintf(stderr, "sched-failmalloc: store: %s\n", err.msg);
                exit(1);
        }
        for (size_t i = 0; i < l->n; i++)
                if (dp_store_add(st, l->items[i], NULL) < 0) exit(1);
        l->n = 0;
        dp_object_list_free(l);
        return st;
}

/* "pod=node;..." and "claim=devices>consumers;..." for comparing runs. */
static void describe(dp_store *st, dp_strbuf *sb) {
        dp_object o;
        for (size_t i = 0; dp_store_next(st, DP_KIND_POD, &i, &o, NULL);)
                dp_strbuf_printf(sb, "%s=%s;", o.pod->meta.name, o.pod->node_name ? o.pod->node_name : "-");
        for (size_t i = 0; dp_store_next(st, DP_KIND_RESOURCE_CLAIM, &i, &o, NULL);) {
                const dp_resource_claim *c = o.claim;
                dp_strbuf_printf(sb, "%s=", c->meta.name);
                if (c->allocation)
                        for (size_t k = 0; k < c->allocation->n_results; k++)
                                dp_strbuf_printf(sb, "%s/%s,", c->allocation->results[k].pool,
                                                 c->allocation->results[k].device);
                dp_strbuf_puts(sb, ">");
                for (size_t k = 0; k < c->n_reserved_for; k++)
                        dp_strbuf_printf(sb, "%s,", c->reserved_for[k].name);
                dp_strbuf_puts(sb, ";");
        }
}

/* No claim reserved for a pod that is not bound; no claim allocated for nobody. */
static bool consistent(dp_store *st) {
        dp_object o;
        for (size_t i = 0; dp_store_next(st, DP_KIND_RESOURCE_CLAIM, &i, &o, NULL);) {
                const dp_resource_claim *c = o.claim;
                if (c->allocation && c->n_reserved_for == 0) return false;
                for (size_t k = 0; k < c->n_reserved_for; k++) {
                        dp_object p = dp_store_get(st, DP_KIND_POD, dp_store_ns_of(o),
                                                   c->reserved_for[k].name, NULL);
                        if (!p.hdr || !p.pod->node_name) return false;
                }
        }
        return true;
}

static int schedule(dp_store *st, dp_sched *s, dp_error *err) {
        int r = dp_sched_claims_from_templates(st, err);
        if (r >= 0) r = dp_sched_run(s, 0, err);
        return r;
}

static unsigned long run_sched(void) {
        dp_strbuf want = DP_STRBUF_INIT;
        dp_error err = DP_ERROR_INIT;
        dp_sched_config cfg = {.policy = DP_SCORE_BINPACK};
        fail_at = 0;
        dp_store *st = new_store();
        dp_sched *s = NULL;
        if (dp_sched_new(st, &cfg, &s) < 0 || schedule(st, s, &err) < 0) {
                fprintf(stderr, "sched-failmalloc: scheduling fails without failures: %s\n", err.msg);
                exit(1);
        }
        describe(st, &want);
        dp_sched_free(s);
        dp_store_free(st);
        unsigned long n;
        for (n = 1;; n++) {
                counting = false;
                st = new_store();
                counting = true;
                fail_at = n;
                counter = 0;
                failed = false;
                dp_error_clear(&err);
                s = NULL;
                int r = dp_sched_new(st, &cfg, &s);
                if (r >= 0) {
                        r = schedule(st, s, &err);
                        if (r < 0) check_error("schedule", r, &err);
                } else if (r != -ENOMEM) {
                        fprintf(stderr, "sched-failmalloc: dp_sched_new: allocation %lu: %d\n", n, r);
                        bad++;
                }
                bool done = !failed;
                fail_at = 0;
                if (!consistent(st)) {
                        fprintf(stderr, "sched-failmalloc: allocation %lu: partial state in the store\n", n);
                        bad++;
                }
                /* without failures, the same scheduler gets to the normal placement */
                if (!s && dp_sched_new(st, &cfg, &s) < 0) exit(1);
                dp_error_clear(&err);
                r = schedule(st, s, &err);
                dp_strbuf got = DP_STRBUF_INIT;
                describe(st, &got);
                if (r < 0 || !streq(dp_strbuf_str(&got), dp_strbuf_str(&want))) {
                        fprintf(stderr, "sched-failmalloc: allocation %lu: rerun: %d %s\n  got  %s\n  want %s\n", n,
                                r, err.msg, dp_strbuf_str(&got), dp_strbuf_str(&want));
                        bad++;
                }
                dp_strbuf_done(&got);
                dp_sched_free(s);
                dp_store_free(st);
                if (done) break;
        }
        dp_strbuf_done(&want);
        return n - 1;
}

int main(void) {
        const char *t = getenv("FM_TRACE");
        trace_at = t ? strtoul(t, NULL, 10) : 0;
        if (getenv("FM_ONLY_SCHED")) {
                unsigned long b = run_sched();
                printf("sched-failmalloc: scheduler: %lu failure points, %lu bad\n", b, bad);
                return bad ? 1 : 0;
        }
        unsigned long a = run_sim("failmalloc/sim.yaml");
        printf("sched-failmalloc: simulate: %lu failure points\n", a);
        unsigned long c = run_sim("failmalloc/dump.yaml");
        printf("sched-failmalloc: simulate a cluster dump: %lu failure points\n", c);
        unsigned long b = run_sched();
        printf("sched-failmalloc: scheduler: %lu failure points\n", b);
        points = a + b + c;
        if (a < 1000 || b < 100 || c < 500) { /* the scenarios must keep reaching the code they are for */
                fprintf(stderr, "sched-failmalloc: too few allocations: the scenario no longer runs\n");
                bad++;
        }
        printf("sched-failmalloc: %lu failure points, %lu bad\n", points, bad);
        return bad ? 1 : 0;
}
