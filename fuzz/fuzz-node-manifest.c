/* SPDX-License-Identifier: Apache-2.0
 * Fuzz the node's pod-manifest decoder (every document of the input as a
 * Pod) and the status-document round trip of what decodes. */
#include "doc/doc.h"
#include "node/pods.h"

/* Checked in every build type (assert() vanishes under NDEBUG). */
#define CHECK(x)                                                                                                       \
        do {                                                                                                           \
                if (!(x)) abort();                                                                                     \
        } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        dp_doc_set *s = dp_doc_set_new();
        if (!s) return 0;
        if (dp_doc_parse(s, (const char *)data, size, "fuzz.yaml", NULL) == 0) {
                for (size_t i = 0; i < dp_doc_count(s); i++) {
                        dp_node_pod *p = NULL;
                        dp_error e = DP_ERROR_INIT;
                        if (dp_node_pod_decode(dp_doc_root(s, i), "fuzz.yaml", &p, &e) == 0) {
                                CHECK(p->uid && p->ns && p->name && p->n_containers > 0);
                                for (size_t c = 0; c < p->n_containers; c++)
                                        for (size_t r = 0; r < p->containers[c].n_req; r++)
                                                CHECK(p->containers[c].req[r].count > 0 &&
                                                      p->containers[c].req[r].count <= DP_NODE_MAX_REQUEST);
                        } else {
                                CHECK(e.msg[0]);
                        }
                        dp_node_pod_free(p);
                }
        }
        dp_doc_set_free(s);
        return 0;
}
