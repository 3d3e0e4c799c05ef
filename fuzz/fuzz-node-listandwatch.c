/* SPDX-License-Identifier: Apache-2.0
 * Fuzz the node's device manager with what a plugin may send: the input is a
 * ListAndWatchResponse (protobuf) followed, after the first 0xff byte, by
 * container requests (one byte each: how many devices). Each device list is
 * applied, containers are given devices, and the ledger must round-trip
 * through the kubelet checkpoint exactly; no device is ever held twice. */
#include <stdio.h>

#include "node/ckpt.h"
#include "node/devmgr.h"
#include "proto/proto.h"

/* Checked in every build type (assert() vanishes under NDEBUG). */
#define CHECK(x)                                                                                                       \
        do {                                                                                                           \
                if (!(x)) abort();                                                                                     \
        } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const uint8_t *sep = memchr(data, 0xff, size);
        size_t msg_len = sep ? (size_t)(sep - data) : size;
        ProtobufCMessage *m = NULL;
        if (dp_proto_unpack(&v1beta1__list_and_watch_response__descriptor, data, msg_len, &m) < 0) return 0;
        const V1beta1__ListAndWatchResponse *resp = (const V1beta1__ListAndWatchResponse *)m;
        dp_devmgr *dm = dp_devmgr_new();
        dp_nm_device *devs = calloc(resp->n_devices + 1, sizeof *devs);
        int64_t *numa = calloc(resp->n_devices * 4 + 1, sizeof *numa);
        if (!dm || !devs || !numa) goto out;
        for (size_t i = 0; i < resp->n_devices; i++) {
                devs[i].id = resp->devices[i]->id;
                devs[i].healthy = resp->devices[i]->health && streq(resp->devices[i]->health, "Healthy");
                devs[i].numa = &numa[i * 4];
                const V1beta1__TopologyInfo *t = resp->devices[i]->topology;
                for (size_t j = 0; t && j < t->n_nodes && j < 4; j++)
                        if (t->nodes[j]) numa[i * 4 + devs[i].n_numa++] = t->nodes[j]->id;
        }
        dp_nm_options o = {0};
        if (dp_devmgr_register(dm, "example.com/gpu", "p.sock", &o) < 0) goto out;
        if (dp_devmgr_set_devices(dm, "example.com/gpu", devs, resp->n_devices, NULL) < 0) goto out;
        size_t n_ctr = sep ? size - msg_len - 1 : 0;
        for (size_t c = 0; c < n_ctr && c < 64; c++) {
                char ctr[32];
                snprintf(ctr, sizeof ctr, "c%zu", c);
                size_t needed;
                const char **avail = NULL, **chosen = NULL;
                if (dp_devmgr_candidates(dm, "pod", ctr, "example.com/gpu", sep[1 + c] % 8 + 1, &needed, &avail, NULL) <
                    0)
                        continue;
                if (dp_devmgr_choose(avail, needed, NULL, 0, &chosen) == 0) {
                        for (size_t i = 0; chosen[i]; i++)
                                CHECK(!dp_devmgr_in_use(dm, "example.com/gpu", chosen[i]));
                        dp_devmgr_commit(dm, "pod", ctr, "example.com/gpu", chosen, (const uint8_t *)"x", 1);
                }
                free(avail);
                free(chosen);
        }
        dp_strbuf a = DP_STRBUF_INIT, b = DP_STRBUF_INIT;
        if (dp_node_checkpoint_encode(dm, &a) == 0 && !dp_strbuf_failed(&a)) {
                dp_devmgr *dm2 = dp_devmgr_new();
                dp_error e = DP_ERROR_INIT;
                int r = dm2 ? dp_node_checkpoint_load(dm2, a.buf, a.len, &e) : -ENOMEM;
                if (r == 0) {
                        CHECK(dp_devmgr_n_allocs(dm2) == dp_devmgr_n_allocs(dm));
                        for (size_t i = 0; i < dp_devmgr_n_allocs(dm); i++) {
                                const dp_nm_alloc *x = dp_devmgr_alloc_at(dm, i);
                                const dp_nm_alloc *y = dp_devmgr_alloc(dm2, x->pod_uid, x->container, x->resource);
                                CHECK(y && y->n_ids == x->n_ids);
                        }
                }
                dp_devmgr_free(dm2);
        }
        dp_strbuf_done(&a);
        dp_strbuf_done(&b);
out:
        free(devs);
        free(numa);
        dp_devmgr_free(dm);
        protobuf_c_message_free_unpacked(m, NULL);
        return 0;
}
