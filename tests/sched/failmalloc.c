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

#include "failmalloc.h"

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

typedef struct sim_run {
        dp_strbuf want;
} sim_run;

/* One simulation: the reference run keeps its output; a later one must give
 * exactly that output or -ENOMEM with a message. */
static bool sim_once(void *ctx) {
        sim_run *x = ctx;
        dp_error err = DP_ERROR_INIT;
        if (fail_at == 0) {
                if (simulate(&x->want, &err) < 0 || dp_strbuf_failed(&x->want)) {
                        fprintf(stderr, "sched-failmalloc: simulate fails without failures: %s\n", err.msg);
                        return false;
                }
                return true;
        }
        dp_strbuf out = DP_STRBUF_INIT;
        int r = simulate(&out, &err);
        if (r < 0)
                check_error("simulate", r, &err);
        else if (dp_strbuf_failed(&out) || !streq(dp_strbuf_str(&out), dp_strbuf_str(&x->want))) {
                fprintf(stderr, "sched-failmalloc: simulate: allocation %lu: output differs\n", fail_at);
                bad++;
        }
        dp_strbuf_done(&out);
        return true;
}

static unsigned long run_sim(const char *path, unsigned long min_points) {
        sim_run x = {DP_STRBUF_INIT};
        sim_path = path;
        dp_failmalloc fm = {
                .name = "sched-failmalloc", .run = sim_once, .ctx = &x, .absorb = true, .min_points = min_points};
        dp_failmalloc_result r;
        bad += dp_failmalloc_each(&fm, &r);
        dp_strbuf_done(&x.want);
        return r.points;
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

typedef struct sched_run {
        dp_strbuf want;
} sched_run;

/* One scheduler run over a fresh store (built without failures). The
 * reference run keeps the placement; after a failed run the store must show
 * no partial state, and the same scheduler run again without failures must
 * reach the reference placement. */
static bool sched_once(void *ctx) {
        sched_run *x = ctx;
        dp_error err = DP_ERROR_INIT;
        dp_sched_config cfg = {.policy = DP_SCORE_BINPACK};
        unsigned long n = fail_at;
        bool was = counting;
        counting = false;
        dp_store *st = new_store();
        counting = was;
        dp_sched *s = NULL;
        if (n == 0) {
                bool ok = dp_sched_new(st, &cfg, &s) >= 0 && schedule(st, s, &err) >= 0;
                if (!ok) fprintf(stderr, "sched-failmalloc: scheduling fails without failures: %s\n", err.msg);
                if (ok) describe(st, &x->want);
                dp_sched_free(s);
                dp_store_free(st);
                return ok;
        }
        int r = dp_sched_new(st, &cfg, &s);
        if (r >= 0) {
                r = schedule(st, s, &err);
                if (r < 0) check_error("schedule", r, &err);
        } else if (r != -ENOMEM) {
                fprintf(stderr, "sched-failmalloc: dp_sched_new: allocation %lu: %d\n", n, r);
                bad++;
        }
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
        if (r < 0 || !streq(dp_strbuf_str(&got), dp_strbuf_str(&x->want))) {
                fprintf(stderr, "sched-failmalloc: allocation %lu: rerun: %d %s\n  got  %s\n  want %s\n", n, r, err.msg,
                        dp_strbuf_str(&got), dp_strbuf_str(&x->want));
                bad++;
        }
        dp_strbuf_done(&got);
        dp_sched_free(s);
        dp_store_free(st);
        fail_at = n;
        return true;
}

static unsigned long run_sched(unsigned long min_points) {
        sched_run x = {DP_STRBUF_INIT};
        dp_failmalloc fm = {
                .name = "sched-failmalloc", .run = sched_once, .ctx = &x, .absorb = true, .min_points = min_points};
        dp_failmalloc_result r;
        bad += dp_failmalloc_each(&fm, &r);
        dp_strbuf_done(&x.want);
        return r.points;
}

int main(void) {
        /* each scenario must keep reaching the code it is for */
        if (getenv("FM_ONLY_SCHED")) {
                unsigned long b = run_sched(0);
                printf("sched-failmalloc: scheduler: %lu failure points, %lu bad\n", b, bad);
                return bad ? 1 : 0;
        }
        unsigned long a = run_sim("failmalloc/sim.yaml", 1000);
        printf("sched-failmalloc: simulate: %lu failure points\n", a);
        unsigned long c = run_sim("failmalloc/dump.yaml", 500);
        printf("sched-failmalloc: simulate a cluster dump: %lu failure points\n", c);
        unsigned long b = run_sched(100);
        printf("sched-failmalloc: scheduler: %lu failure points\n", b);
        points = a + b + c;
        printf("sched-failmalloc: %lu failure points, %lu bad\n", points, bad);
        return bad ? 1 : 0;
}
