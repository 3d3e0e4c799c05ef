/* SPDX-License-Identifier: Apache-2.0
 * Fuzz prepare (dra/prepare.h) with arbitrary ResourceClaim YAML/JSON: every
 * decodable claim is prepared against the example-gpu slices (whole devices
 * and partition mode), with metadata files. Prepare must succeed or explain;
 * a success gives a CDI spec that re-parses and a prepared claim that goes
 * through the checkpoint and back. Nothing is written to disk. */
#include <stdio.h>

#include "dra/inventory.h"
#include "dra/prepare.h"
#include "dra/slices.h"

typedef struct node {
        dp_dra_inventory *inv;
        dp_dra_publisher *pub;
} node;

static node nodes[2];

static void setup(void) {
        if (nodes[0].inv) return;
        for (int i = 0; i < 2; i++) {
                struct dp_device_set *set = NULL;
                dp_dra_inventory_options o = DP_DRA_INVENTORY_OPTIONS_INIT;
                o.partitions = i ? 4 : 0;
                o.allow_multiple = i;
                if (dp_dra_device_set_load("example-gpu", "node-a", &set, NULL) < 0) abort();
                dp_dra_device_set_health(set, "gpu-3", false, NULL);
                if (dp_dra_inventory_build(set, &o, &nodes[i].inv, NULL) < 0) abort();
                nodes[i].pub = dp_dra_publisher_new(1);
                if (dp_dra_publisher_update(nodes[i].pub, nodes[i].inv, NULL, NULL) < 0) abort();
                dp_dra_device_set_free(set);
        }
}

static void prepare_one(const node *n, const dp_resource_claim *claim) {
        dp_dra_prepare_input in = {0};
        in.inv = n->inv;
        in.slices = dp_dra_publisher_slices(n->pub, &in.n_slices);
        in.metadata_dir = "/run/devplane/metadata";
        dp_dra_prepare_output out;
        dp_error err = DP_ERROR_INIT;
        if (dp_dra_prepare(&in, claim, &out, &err) < 0) {
                if (!err.msg[0]) abort();
                return;
        }
        if (out.cdi_spec.name) {
                dp_doc_set *s = dp_doc_set_new();
                if (s && dp_doc_parse(s, out.cdi_spec.data, out.cdi_spec.len, "spec", &err) == -EINVAL) {
                        fprintf(stderr, "CDI spec does not parse: %s\n%s\n", err.msg, out.cdi_spec.data);
                        abort();
                }
                dp_doc_set_free(s);
        }
        for (size_t i = 0; i < out.n_metadata; i++) {
                dp_doc_set *s = dp_doc_set_new();
                if (s && dp_doc_parse(s, out.metadata[i].data, out.metadata[i].len, "md", &err) == -EINVAL) abort();
                dp_doc_set_free(s);
        }
        /* the result goes through the checkpoint */
        dp_dra_checkpoint *c = dp_dra_checkpoint_new(n->inv->driver, n->inv->node_name);
        dp_strbuf sb = DP_STRBUF_INIT;
        if (c && dp_dra_checkpoint_put(c, &out.claim) == 0 && dp_dra_checkpoint_encode(c, &sb) == 0) {
                dp_dra_checkpoint *d = NULL;
                if (dp_dra_checkpoint_decode(sb.buf, sb.len, "ck", &d, &err) < 0) {
                        fprintf(stderr, "checkpoint of a prepared claim does not decode: %s\n%s\n", err.msg, sb.buf);
                        abort();
                }
                dp_dra_checkpoint_free(d);
        }
        dp_strbuf_done(&sb);
        dp_dra_checkpoint_free(c);
        /* a rewrite bumps the metadata generation */
        in.prev = &out.claim;
        dp_dra_prepare_output again;
        if (dp_dra_prepare(&in, claim, &again, &err) < 0) abort();
        if (out.n_metadata && again.claim.metadata_generation != out.claim.metadata_generation + 1) abort();
        dp_dra_prepare_output_done(&again);
        dp_dra_prepare_output_done(&out);
        dp_dra_skip_node_operation(claim->allocation, n->inv->driver, DP_DRA_NODE_PREPARE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        setup();
        dp_object_list *l = dp_object_list_new();
        if (!l) return 0;
        if (dp_model_decode_buffer((const char *)data, size, "fuzz", l, NULL) == 0)
                for (size_t i = 0; i < l->n; i++)
                        if (l->items[i].hdr->kind == DP_KIND_RESOURCE_CLAIM)
                                for (int k = 0; k < 2; k++)
                                        prepare_one(&nodes[k], l->items[i].claim);
        dp_object_list_free(l);
        return 0;
}
