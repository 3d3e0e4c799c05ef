/* SPDX-License-Identifier: Apache-2.0
 * Fuzz the agent's DRA request handling as the kubelet (or anyone reaching
 * dra.sock) may drive it: byte 0 picks NodePrepareResources or
 * NodeUnprepareResources and v1 or v1beta1; the rest is the protobuf request.
 * The driver is a real agent_dra on example-gpu with a claims directory
 * holding a few claims (so prepare succeeds, conflicts in the ledger and
 * fails per claim); every input is followed by an unprepare of the same
 * claims so the state stays small. Replies must decode again and answer
 * every claim. Files go to a temporary directory. */
#include <stdio.h>
#include <sys/stat.h>

#include "agent/dra-internal.h"
#include "proto/proto.h"

#define CHECK(x)                                                                                                       \
        do {                                                                                                           \
                if (!(x)) abort();                                                                                     \
        } while (0)

static agent_dra *drv;
/* Live as long as the process (statics, so leak checks see them reachable). */
static struct dp_device_set *set;
static dp_ledger *ledger;
static dp_loop *loop;

static void put(const char *dir, const char *name, const char *uid, const char *dev, const char *extra) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.yaml", dir, name);
        FILE *f = fopen(path, "we");
        CHECK(f);
        fprintf(f,
                "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: %s, namespace: default, uid: "
                "%s}\n"
                "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}\n"
                "status: {allocation: {devices: {results: [{request: gpu, driver: gpu.example.com, pool: fuzz, device: "
                "%s%s}]}}}\n",
                name, uid, dev, extra);
        fclose(f);
}

static char dir[] = "/tmp/fuzz-agent-dra.XXXXXX";

static void cleanup(void) {
        char rm[128];
        snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
        if (system(rm) != 0) fprintf(stderr, "fuzz-agent-dra: could not remove %s\n", dir);
}

static void setup(void) {
        CHECK(mkdtemp(dir));
        atexit(cleanup);
        char claims[4200], ns[4300];
        snprintf(claims, sizeof claims, "%s/claims", dir);
        snprintf(ns, sizeof ns, "%s/default", claims);
        CHECK(mkdir(claims, 0700) == 0 && mkdir(ns, 0700) == 0);
        put(ns, "a", "uid-a", "gpu-0", "");
        put(ns, "b", "uid-b", "gpu-0", "");
        put(ns, "c", "uid-c", "gpu-9", "");
        put(ns, "d", "uid-d", "gpu-1", ", shareID: 7e2c1a36-31a5-4e4c-9e2b-36c8f1e1c8a0");
        CHECK(dp_dra_device_set_load("example-gpu", "fuzz", &set, NULL) >= 0);
        dp_dra_inventory *inv = NULL;
        dp_dra_inventory_options io = DP_DRA_INVENTORY_OPTIONS_INIT;
        CHECK(dp_dra_inventory_build(set, &io, &inv, NULL) >= 0);
        ledger = dp_ledger_new(set, inv);
        CHECK(ledger);
        CHECK(dp_loop_new(&loop) >= 0);
        char reg[4200], plugins[4200], cdi[4200];
        snprintf(reg, sizeof reg, "%s/reg", dir);
        snprintf(plugins, sizeof plugins, "%s/plugins", dir);
        snprintf(cdi, sizeof cdi, "%s/cdi", dir);
        agent_dra_options o = {
                .node_name = "fuzz", .registry_dir = reg, .plugins_dir = plugins, .cdi_dir = cdi, .claims_dir = claims};
        CHECK(agent_dra_new(loop, &o, ledger, inv, &drv, NULL) >= 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (!drv) setup();
        if (size < 1) return 0;
        bool prepare = data[0] & 1, v1 = data[0] & 2;
        ProtobufCMessage *m = NULL;
        const ProtobufCMessageDescriptor *d =
                prepare ? &k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__descriptor
                        : &k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__descriptor;
        if (dp_proto_unpack(d, data + 1, size - 1, &m) < 0) return 0;
        uint8_t *out = NULL;
        size_t len = 0;
        int r = agent_dra_reply(drv, prepare, v1, m, &out, &len);
        if (r >= 0) {
                ProtobufCMessage *back = NULL;
                const ProtobufCMessageDescriptor *rd =
                        prepare ? &k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__descriptor
                                : &k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__descriptor;
                CHECK(dp_proto_unpack(rd, out, len, &back) >= 0);
                /* one map entry per requested claim */
                const K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest *q = (const void *)m;
                const K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse *a = (const void *)back;
                CHECK(a->n_claims == q->n_claims);
                protobuf_c_message_free_unpacked(back, NULL);
                free(out);
        } else
                CHECK(r == -E2BIG || r == -ENOMEM);
        if (prepare) { /* give everything back */
                out = NULL;
                if (agent_dra_reply(drv, false, true, m, &out, &len) >= 0) free(out);
        }
        protobuf_c_message_free_unpacked(m, NULL);
        return 0;
}
