/* SPDX-License-Identifier: Apache-2.0
 * node-failmalloc — fail each allocation in turn while the node's DRA
 * manager starts (its state missing: rebuilt, saved) and reads a manifest directory (a pod with a claim from a template,
 * which it creates in the claims directory, a pod whose named claim is
 * allocated for a driver that is not registered, a pod without claims) and
 * builds its status; and while the manifests are decoded and checked as
 * `devplane node` does (pods.c). No sockets: no plugin registers.
 * A run must end with exactly the normal result or with -ENOMEM and a
 * message. The rescan has no caller to fail to: after a failed one, the
 * retry it schedules (done here at once, without failures) must reach the
 * normal status and claims directory. No crash, no leak (LeakSanitizer).
 * devplane's allocations are intercepted with the linker's --wrap. */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>

#include "base/log.h"
#include "base/strbuf.h"
#include "doc/doc.h"
#include "grpc/loop.h"
#include "node/dra-manager.h"
#include "node/dra-state.h"
#include "node/pods.h"

#include "failmalloc.h"

static const char manifest[] =
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: one-gpu, namespace: default}\n"
        "spec: {spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu.example.com}}]}}}\n---\n"
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: ready, namespace: default, uid: u-ready}\n"
        "spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu.example.com}}]}}\n"
        "status: {allocation: {devices: {results: [{request: g, driver: gpu.example.com, pool: n, device: gpu-0}]}}}\n"
        "---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: tpl, namespace: default, uid: p-tpl}\nspec:\n"
        "  containers: [{name: c, image: x, resources: {claims: [{name: g}]}}]\n"
        "  resourceClaims: [{name: g, resourceClaimTemplateName: one-gpu}]\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: named, namespace: default, uid: p-named}\nspec:\n"
        "  containers: [{name: c, image: x, resources: {claims: [{name: g}]}}]\n"
        "  resourceClaims: [{name: g, resourceClaimName: ready}]\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: plain}\nspec:\n"
        "  containers: [{name: c, image: x, resources: {limits: {example.com/gpu: 1}}}]\n";

static char root[64] = "/tmp/dp-node-failmalloc-XXXXXX";
static char reg_dir[128], man_dir[128], claims_dir[128], man_file[192];
static unsigned long bad;
static char *want_status; /* the normal status, once known: retries stop when it is reached */

static void fail(const char *what, const char *detail) {
        fprintf(stderr, "node-failmalloc: %s at allocation %lu: %s\n", what, fail_at, detail);
        bad++;
}

static void check_error(const char *what, int r, const dp_error *err) {
        if (r == -ENOMEM && (!err || err->msg[0])) return;
        char m[DP_ERROR_MSG_MAX + 32];
        snprintf(m, sizeof m, "%d \"%s\"", r, err ? err->msg : "");
        fail(what, m);
}

/* Created claims get a random uid: mask every 8-4-4-4-12 hex run. */
static void mask_uuids(char *s) {
        static const int parts[] = {8, 4, 4, 4, 12};
        for (; *s; s++) {
                char *p = s;
                bool ok = true;
                for (int k = 0; ok && k < 5; k++) {
                        for (int i = 0; ok && i < parts[k]; i++, p++)
                                ok = isxdigit((unsigned char)*p);
                        if (ok && k < 4) ok = *p++ == '-';
                }
                if (ok) memset(s, 'x', 36);
        }
}

/* The claims directory's files ("ns/name;..."), removing them when `clean`. */
static void claims_files(dp_strbuf *sb, bool clean) {
        DIR *top = opendir(claims_dir);
        for (struct dirent *de; top && (de = readdir(top));) {
                if (de->d_name[0] == '.') continue;
                char ns[512];
                snprintf(ns, sizeof ns, "%s/%s", claims_dir, de->d_name);
                DIR *d = opendir(ns);
                for (struct dirent *fe; d && (fe = readdir(d));) {
                        if (fe->d_name[0] == '.') continue;
                        dp_strbuf_printf(sb, "%s/%s;", de->d_name, fe->d_name);
                        if (clean) {
                                char f[1024];
                                snprintf(f, sizeof f, "%s/%s", ns, fe->d_name);
                                unlink(f);
                        }
                }
                if (d) closedir(d);
        }
        if (top) closedir(top);
}

static int status_json(dp_node_dra *d, dp_strbuf *out) {
        dp_doc_set *s = dp_doc_set_new();
        dp_doc_node *root_map = s ? dp_doc_new_map(s) : NULL;
        int r = root_map ? dp_node_dra_status(d, s, root_map) : -ENOMEM;
        if (r >= 0) dp_doc_emit(out, root_map, DP_DOC_JSON_COMPACT);
        if (r >= 0 && dp_strbuf_failed(out)) r = -ENOMEM;
        dp_doc_set_free(s);
        return r;
}

/* The DRA manager: new, rescan, status. *ret: the status and claims files
 * after a retry without failures, masked. */
static void dra_round(dp_strbuf *ret) {
        dp_error err = DP_ERROR_INIT;
        dp_loop *l = NULL;
        dp_node_dra *d = NULL;
        /* every round starts from a missing state */
        char state[256];
        snprintf(state, sizeof state, "%s/%s", root, DP_NODE_DRA_STATE_FILE);
        (void)unlink(state);
        int r = dp_loop_new(&l);
        if (r < 0) {
                check_error("loop", r, NULL);
                dp_strbuf_puts(ret, "(failed)");
                return;
        }
        /* backoff 1 ms: the retries after a failure come at once */
        dp_node_dra_options o = {.registry_dir = reg_dir,
                              .manifests_dir = man_dir,
                              .claims_dir = claims_dir,
                              .state_dir = root,
                              .backoff_initial_ms = 1,
                              .backoff_max_ms = 1};
        r = dp_node_dra_new(l, &o, &d, &err);
        if (r < 0) {
                check_error("dp_node_dra_new", r, &err);
                dp_loop_free(l);
                dp_strbuf_puts(ret, "(failed)");
                return;
        }
        dp_node_dra_rescan(d);
        dp_strbuf st = DP_STRBUF_INIT;
        r = status_json(d, &st);
        if (r < 0) check_error("status", r, NULL);
        dp_strbuf_done(&st);
        /* the retries (the manager's timer), without failures: run the loop
         * until the manager has nothing left to retry */
        unsigned long saved = fail_at;
        fail_at = 0;
        dp_node_dra_rescan(d);
        for (int i = 0; i < 10; i++) {
                dp_strbuf now = DP_STRBUF_INIT;
                if (status_json(d, &now) < 0) fail("status after the retry", "failed without failures");
                bool same = want_status && now.buf && streq(now.buf, want_status);
                dp_strbuf_done(&now);
                if (same || !want_status) break;
                if (dp_loop_run_once(l, 5) < 0) fail("loop", "failed without failures");
        }
        if (status_json(d, ret) < 0) fail("status after the retry", "failed without failures");
        if (!want_status && !(want_status = strdup(dp_strbuf_str(ret)))) exit(1);
        dp_strbuf_puts(ret, "\nclaims: ");
        claims_files(ret, true);
        fail_at = saved;
        dp_node_dra_free(d);
        dp_loop_free(l);

        if (ret->buf) mask_uuids(ret->buf);
        /* how often a pod was tried depends on the failures */
        for (char *a = ret->buf ? strstr(ret->buf, "\"attempts\":") : NULL; a; a = strstr(a + 1, "\"attempts\":"))
                for (char *q = a + 11; isdigit((unsigned char)*q); q++)
                        *q = '0';
}

/* pods.c: decode the manifest file, check the directory. */
static void pods_round(dp_strbuf *ret) {
        dp_error err = DP_ERROR_INIT;
        dp_node_pod **pods = NULL;
        size_t n = 0;
        int r = dp_node_pods_load_file(man_file, &pods, &n, &err);
        if (r < 0)
                check_error("pods load", r, &err);
        else {
                for (size_t i = 0; i < n; i++)
                        dp_strbuf_printf(ret, "%s/%s %s %zu %d;", pods[i]->ns, pods[i]->name, pods[i]->uid,
                                         pods[i]->n_containers, pods[i]->has_claims);
                dp_node_pods_free(pods, n);
        }
        dp_strbuf out = DP_STRBUF_INIT;
        size_t nbad = 0;
        dp_error_clear(&err);
        r = dp_node_manifests_check(man_dir, &out, &nbad, &err);
        if (r < 0)
                check_error("manifests check", r, &err);
        else if (dp_strbuf_failed(&out))
                dp_strbuf_puts(ret, "(check output lost)");
        else
                dp_strbuf_printf(ret, "\n%s%zu", dp_strbuf_str(&out), nbad);
        dp_strbuf_done(&out);
}

/* The node's DRA state: build a table, encode it, decode it, change it and
 * encode again. Every failure is -ENOMEM (with a message from the decoder)
 * and leaves nothing allocated. */
static void state_round(dp_strbuf *ret) {
        dp_node_dra_state *s = dp_node_dra_state_new(), *t = NULL;
        dp_strbuf a = DP_STRBUF_INIT;
        dp_error e = DP_ERROR_INIT;
        dp_node_dra_claim *c = NULL;
        char *req[] = {(char *)"gpu"}, *cdi[] = {(char *)"k8s.gpu.example.com/gpu=u0-gpu-0"};
        dp_node_dra_device dev = {(char *)"node-a", (char *)"gpu-0", req, 1, cdi, 1};
        int r = s ? 0 : -ENOMEM;
        if (r >= 0) r = dp_node_dra_state_add(s, "u0", "default", "c0", "gpu.example.com", &c);
        if (r >= 0) r = dp_node_dra_claim_set_devices(c, &dev, 1);
        if (r >= 0) r = dp_node_dra_claim_add_pod(c, "p0", "default", "pod0");
        if (r >= 0) r = dp_node_dra_state_set_unknown(s, "other.example.com", "UNIMPLEMENTED");
        if (r >= 0) r = dp_node_dra_state_encode(s, &a);
        if (r >= 0) {
                r = dp_node_dra_state_decode(a.buf, a.len, "state", &t, &e);
                if (r < 0) check_error("state decode", r, &e);
        }
        if (r >= 0) r = dp_node_dra_state_add(t, "u1", "default", "c1", "gpu.example.com", &c);
        if (r >= 0) r = dp_node_dra_claim_add_pod(c, "p1", "default", "pod1");
        if (r >= 0) {
                dp_node_dra_state_clear_unknown(t, "other.example.com");
                dp_strbuf_truncate(&a, 0);
                r = dp_node_dra_state_encode(t, &a);
        }
        if (r >= 0)
                dp_strbuf_puts(ret, dp_strbuf_str(&a));
        else if (r != -ENOMEM)
                check_error("state", r, NULL);
        else
                dp_strbuf_puts(ret, "(failed)");
        dp_strbuf_done(&a);
        dp_node_dra_state_free(s);
        dp_node_dra_state_free(t);
}

typedef struct round_run {
        const char *what;
        void (*round)(dp_strbuf *);
        dp_strbuf want;
} round_run;

/* One round. The reference run keeps its result; a later run's result must
 * equal it: pods_round's only when nothing failed, the DRA round's always
 * (after its retry without failures) unless it says "(failed)". */
static bool run(void *ctx) {
        round_run *x = ctx;
        if (fail_at == 0) {
                x->round(&x->want);
                return !bad && !dp_strbuf_failed(&x->want);
        }
        dp_strbuf got = DP_STRBUF_INIT;
        x->round(&got);
        bool compare = (x->round == dra_round && !streq(dp_strbuf_str(&got), "(failed)")) || !failed;
        if (compare && !streq(dp_strbuf_str(&got), dp_strbuf_str(&x->want))) {
                char m[4096];
                snprintf(m, sizeof m, "%s: result differs:\n  got  %s\n  want %s", x->what, dp_strbuf_str(&got),
                         dp_strbuf_str(&x->want));
                fail(x->what, m);
        }
        dp_strbuf_done(&got);
        return true;
}

static unsigned long each(const char *what, void (*round)(dp_strbuf *), unsigned long min_points) {
        round_run x = {what, round, DP_STRBUF_INIT};
        dp_failmalloc fm = {.name = "node-failmalloc", .run = run, .ctx = &x, .absorb = true, .min_points = min_points};
        dp_failmalloc_result r;
        bad += dp_failmalloc_each(&fm, &r);
        dp_strbuf_done(&x.want);
        return r.points;
}

int main(void) {
        dp_log_setup("node-failmalloc", DP_LOG_WARNING);
        /* claim files are written with fsync: a memory file system keeps that fast */
        struct stat sst;
        if (stat("/dev/shm", &sst) == 0 && S_ISDIR(sst.st_mode) && access("/dev/shm", W_OK) == 0)
                snprintf(root, sizeof root, "/dev/shm/dp-node-failmalloc-XXXXXX");
        if (!mkdtemp(root)) return 1;
        snprintf(reg_dir, sizeof reg_dir, "%s/registry", root);
        snprintf(man_dir, sizeof man_dir, "%s/manifests", root);
        snprintf(claims_dir, sizeof claims_dir, "%s/claims", root);
        snprintf(man_file, sizeof man_file, "%s/pods.yaml", man_dir);
        if (mkdir(reg_dir, 0755) < 0 || mkdir(man_dir, 0755) < 0 || mkdir(claims_dir, 0755) < 0) return 1;
        FILE *f = fopen(man_file, "w");
        if (!f || fwrite(manifest, 1, sizeof manifest - 1, f) != sizeof manifest - 1 || fclose(f) != 0) return 1;
        /* the scenario must keep reaching the code it is for (the YAML tree
         * allocates in blocks since the allocate speed work: 231 and 195 then;
         * its maps and lists no longer grow with realloc and JSON skips
         * libyaml since: 183 and 103) */
        unsigned long a = each("DRA manager", dra_round, 150);
        unsigned long b = each("pods", pods_round, 90);
        unsigned long c = each("DRA state", state_round, 50);
        printf("node-failmalloc: DRA manager %lu, pods %lu, DRA state %lu: %lu failure points, %lu bad\n", a, b, c,
               a + b + c, bad);
        /* leave nothing behind */
        dp_strbuf sb = DP_STRBUF_INIT;
        claims_files(&sb, true);
        dp_strbuf_done(&sb);
        free(want_status);
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
        if (system(cmd) != 0) return 1;
        return bad ? 1 : 0;
}
