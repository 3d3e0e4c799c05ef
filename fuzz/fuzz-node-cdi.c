/* SPDX-License-Identifier: Apache-2.0
 * Fuzz the node's reading of CDI spec files (dp_node_dra_cdi_env_doc): the
 * input is a spec file (YAML or JSON, as the runtime reads /var/run/cdi);
 * every document is asked for a fixed device id and for the id its own
 * kind and first device name make, and the resulting env map must print. */
#include <stdio.h>

#include "doc/doc.h"
#include "node/dra-manager.h"

#define CHECK(x)                                                                                                       \
        do {                                                                                                           \
                if (!(x)) abort();                                                                                     \
        } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        dp_doc_set *s = dp_doc_set_new();
        CHECK(s);
        if (dp_doc_parse(s, (const char *)data, size, "fuzz.json", NULL) >= 0) {
                for (size_t i = 0; i < dp_doc_count(s); i++) {
                        const dp_doc_node *root = dp_doc_root(s, i);
                        dp_doc_node *env = dp_doc_new_map(s);
                        CHECK(env);
                        CHECK(dp_node_dra_cdi_env_doc(root, "k8s.gpu.example.com/gpu=uid-gpu-0", s, env) >= 0);
                        const dp_doc_node *k = dp_doc_get(root, "kind");
                        const dp_doc_node *devs = dp_doc_get(root, "devices");
                        const dp_doc_node *nm =
                                devs && devs->type == DP_DOC_SEQ && devs->n ? dp_doc_get(devs->items[0], "name") : NULL;
                        if (k && k->type == DP_DOC_SCALAR && nm && nm->type == DP_DOC_SCALAR) {
                                char *id = dp_asprintf("%s=%s", k->str, nm->str);
                                CHECK(id);
                                CHECK(dp_node_dra_cdi_env_doc(root, id, s, env) >= 0);
                                free(id);
                        }
                        dp_strbuf sb = DP_STRBUF_INIT;
                        dp_doc_emit(&sb, env, DP_DOC_JSON_COMPACT);
                        dp_strbuf_done(&sb);
                }
        }
        dp_doc_set_free(s);
        return 0;
}
