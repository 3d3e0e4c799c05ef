/* SPDX-License-Identifier: Apache-2.0
 * agent-failmalloc — the agent's DRA request path (agent_dra_reply: claim
 * files read through the model, prepare through the driver core, CDI spec
 * and checkpoint written, ledger holds, the reply packed) run once per
 * allocation, failing exactly that allocation. Every run must end in a
 * reply or -ENOMEM, never a crash or another error; between runs the claims
 * are unprepared without failures, and the state must be clean again (no
 * CDI spec left, the device free for the next run). LeakSanitizer checks at
 * exit that every failure path freed what it had. */
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>

#include "agent/dra-internal.h"
#include "proto/proto.h"

#include "failmalloc.h"

#define MUST(x)                                                                                                        \
        do {                                                                                                           \
                if (!(x)) {                                                                                            \
                        fprintf(stderr, "agent-failmalloc: %s:%d: %s (fail_at %lu)\n", __FILE__, __LINE__, #x,         \
                                fail_at);                                                                              \
                        exit(1);                                                                                       \
                }                                                                                                      \
        } while (0)

static char root[64] = "/tmp/dp-agent-failmalloc-XXXXXX";
static char cdi[128];

static void put(const char *dir, const char *name, const char *dev, const char *extra) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s.yaml", dir, name);
        FILE *f = fopen(path, "we");
        MUST(f);
        fprintf(f,
                "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: %s, namespace: default, uid: "
                "uid-%s}\n"
                "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}\n"
                "status: {allocation: {devices: {results: [{request: gpu, driver: gpu.example.com, pool: fm, device: "
                "%s%s}]}}}\n",
                name, name, dev, extra);
        fclose(f);
}

static int cdi_files(void) {
        DIR *d = opendir(cdi);
        int n = 0;
        MUST(d);
        for (struct dirent *e; (e = readdir(d));)
                n += e->d_name[0] != '.';
        closedir(d);
        return n;
}

typedef struct run_ctx {
        agent_dra *d;
        const ProtobufCMessage *req;
        unsigned long replies;
} run_ctx;

/* One prepare reply with the armed failure, then, without failures, the
 * unprepare that brings the state back: no CDI spec left. */
static bool run(void *p) {
        run_ctx *c = p;
        uint8_t *out = NULL;
        size_t len = 0;
        counting = true;
        int r = agent_dra_reply(c->d, true, true, c->req, &out, &len);
        counting = false;
        MUST(r == 0 || r == -ENOMEM);
        if (r == 0) {
                c->replies++;
                ProtobufCMessage *m = NULL;
                MUST(dp_proto_unpack(&k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__descriptor,
                                     out, len, &m) >= 0);
                protobuf_c_message_free_unpacked(m, NULL);
                free(out);
        }
        out = NULL;
        MUST(agent_dra_reply(c->d, false, true, c->req, &out, &len) == 0);
        free(out);
        MUST(cdi_files() == 0);
        return r == 0;
}

int main(void) {
        counting = false;
        MUST(mkdtemp(root));
        char claims[128], ns[160], reg[128], plugins[128];
        snprintf(claims, sizeof claims, "%s/claims", root);
        snprintf(ns, sizeof ns, "%s/default", claims);
        snprintf(reg, sizeof reg, "%s/reg", root);
        snprintf(plugins, sizeof plugins, "%s/plugins", root);
        snprintf(cdi, sizeof cdi, "%s/cdi", root);
        MUST(mkdir(claims, 0700) == 0 && mkdir(ns, 0700) == 0);
        put(ns, "a", "gpu-0", "");
        put(ns, "b", "gpu-1", ", shareID: 7e2c1a36-31a5-4e4c-9e2b-36c8f1e1c8a0");
        struct dp_device_set *set = NULL;
        MUST(dp_dra_device_set_load("example-gpu", "fm", &set, NULL) >= 0);
        dp_dra_inventory *inv = NULL;
        dp_dra_inventory_options io = DP_DRA_INVENTORY_OPTIONS_INIT;
        MUST(dp_dra_inventory_build(set, &io, &inv, NULL) >= 0);
        dp_ledger *ledger = dp_ledger_new(set, inv);
        dp_loop *l = NULL;
        MUST(ledger && dp_loop_new(&l) >= 0);
        agent_dra *d = NULL;
        agent_dra_options o = {
                .node_name = "fm", .registry_dir = reg, .plugins_dir = plugins, .cdi_dir = cdi, .claims_dir = claims};
        MUST(agent_dra_new(l, &o, ledger, inv, &d, NULL) >= 0);

        K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim c[2] = {K8S__IO__KUBELET__PKG__APIS__DRA__V1__CLAIM__INIT,
                                                            K8S__IO__KUBELET__PKG__APIS__DRA__V1__CLAIM__INIT};
        K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim *cp[2] = {&c[0], &c[1]};
        c[0].namespace_ = c[1].namespace_ = (char *)"default";
        c[0].name = (char *)"a";
        c[0].uid = (char *)"uid-a";
        c[1].name = (char *)"b";
        c[1].uid = (char *)"uid-b";
        K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest pr =
                K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCES_REQUEST__INIT;
        pr.claims = cp;
        pr.n_claims = 2;
        run_ctx ctx = {d, &pr.base, 0};
        dp_failmalloc fm = {.name = "agent-failmalloc", .run = run, .ctx = &ctx, .absorb = true, .min_points = 1};
        dp_failmalloc_result res;
        MUST(dp_failmalloc_each(&fm, &res) == 0);
        /* The last run passed every allocation: both claims prepared. */
        uint8_t *out = NULL;
        size_t len = 0;
        MUST(agent_dra_reply(d, true, true, &pr.base, &out, &len) == 0);
        ProtobufCMessage *m = NULL;
        MUST(dp_proto_unpack(&k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__descriptor, out,
                             len, &m) >= 0);
        const K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse *resp = (const void *)m;
        MUST(resp->n_claims == 2);
        for (size_t i = 0; i < 2; i++)
                MUST(!resp->claims[i]->value->error || !*resp->claims[i]->value->error);
        protobuf_c_message_free_unpacked(m, NULL);
        free(out);
        MUST(cdi_files() == 2);
        printf("agent-failmalloc: %lu runs (%lu with a reply), every failure handled\n", res.points + 1, ctx.replies);
        agent_dra_free(d);
        dp_ledger_free(ledger);
        dp_dra_device_set_free(set);
        dp_loop_free(l);
        char rm[128];
        snprintf(rm, sizeof rm, "rm -rf '%s'", root);
        MUST(system(rm) == 0);
        return 0;
}
