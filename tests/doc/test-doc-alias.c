/* SPDX-License-Identifier: Apache-2.0
 * YAML anchors, aliases and merge keys (doc/doc-parse.c): taken as kubectl
 * takes them, the same tree from both readers, refused past the
 * expanded-size and depth caps, errors with positions. */
#include "harness.h"

#include "base/strbuf.h"
#include "doc/doc.h"

/* Parse with the fast readers or with libyaml alone; the documents as compact
 * JSON, one a line, or "error: <message>". */
static char *parse_json(const char *in, bool fast) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        ASSERT_TRUE(s);
        dp_error err = DP_ERROR_INIT;
        int r = fast ? dp_doc_parse(s, in, strlen(in), "in.yaml", &err)
                     : dp_doc_parse_libyaml(s, in, strlen(in), "in.yaml", &err);
        dp_strbuf out = DP_STRBUF_INIT;
        if (r < 0) {
                dp_strbuf_printf(&out, "error: %s", err.msg);
                return dp_strbuf_steal(&out);
        }
        for (size_t i = 0; i < dp_doc_count(s); i++) {
                dp_doc_emit(&out, dp_doc_root(s, i), DP_DOC_JSON_COMPACT);
                dp_strbuf_putc(&out, '\n');
        }
        return dp_strbuf_steal(&out);
}

static void both(const char *in, const char *want) {
        _cleanup_free_ char *a = parse_json(in, true), *b = parse_json(in, false);
        ASSERT_STREQ(a, want);
        ASSERT_STREQ(b, want);
}

/* A manifest as people write them with anchors: a selector list and a
 * toleration reused by several requests, a scalar anchor, a second document
 * without aliases (the fast reader takes it), then one with its own. */
static const char manifest[] =
        "apiVersion: resource.k8s.io/v1\n"
        "kind: ResourceClaimTemplate\n"
        "metadata: {name: trainer, namespace: ml}\n"
        "spec:\n"
        "  spec:\n"
        "    devices:\n"
        "      requests:\n"
        "      - name: gpu-a\n"
        "        exactly:\n"
        "          deviceClassName: &class gpu.example.com\n"
        "          selectors: &h100\n"
        "          - cel: {expression: \"device.attributes['gpu.example.com'].model == 'H100'\"}\n"
        "          tolerations:\n"
        "          - &maint {key: maintenance, operator: Exists, effect: NoSchedule}\n"
        "      - name: gpu-b\n"
        "        exactly:\n"
        "          deviceClassName: *class\n"
        "          selectors: *h100\n"
        "          tolerations: [*maint]\n"
        "---\n"
        "kind: Namespace\n"
        "metadata: {name: ml}\n"
        "---\n"
        "kind: ConfigMap\n"
        "data: &d {a: '1'}\n"
        "copy: *d\n";

TEST(manifest_with_anchors_parses_as_written_out) {
        both(manifest,
             "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaimTemplate\",\"metadata\":{\"name\":"
             "\"trainer\",\"namespace\":\"ml\"},\"spec\":{\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu-a\","
             "\"exactly\":{\"deviceClassName\":\"gpu.example.com\",\"selectors\":[{\"cel\":{\"expression\":"
             "\"device.attributes['gpu.example.com'].model == 'H100'\"}}],\"tolerations\":[{\"key\":\"maintenance\","
             "\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]}},{\"name\":\"gpu-b\",\"exactly\":{"
             "\"deviceClassName\":\"gpu.example.com\",\"selectors\":[{\"cel\":{\"expression\":"
             "\"device.attributes['gpu.example.com'].model == 'H100'\"}}],\"tolerations\":[{\"key\":\"maintenance\","
             "\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]}}]}}}}\n"
             "{\"kind\":\"Namespace\",\"metadata\":{\"name\":\"ml\"}}\n"
             "{\"kind\":\"ConfigMap\",\"data\":{\"a\":\"1\"},\"copy\":{\"a\":\"1\"}}\n");
}

TEST(aliased_node_keeps_the_anchor_position) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        const char *in = "a: &x\n  n: 1\nb: *x\n";
        ASSERT_OK(dp_doc_parse(s, in, strlen(in), "in.yaml", NULL));
        const dp_doc_node *b = dp_doc_get(dp_doc_get(dp_doc_root(s, 0), "b"), "n");
        ASSERT_TRUE(b);
        ASSERT_EQ(b->line, 2);
        ASSERT_EQ(b->col, 6);
}

TEST(anchors_hold_within_their_document) {
        both("a: &x 1\n---\nb: *x\n", "error: in.yaml:3:4: alias *x names no anchor before it in this document");
        /* a later anchor of the same name wins */
        both("a: &x 1\nb: &x 2\nc: *x\n", "{\"a\":1,\"b\":2,\"c\":2}\n");
        /* an alias as a key is its scalar; a collection is not a key */
        both("k: &k name\n*k : v\n", "{\"k\":\"name\",\"name\":\"v\"}\n");
        _cleanup_free_ char *key = parse_json("m: &m {a: 1}\n*m : v\n", true);
        ASSERT_CONTAINS(key, "map keys must be scalars");
}

/* nine aliases nested ten deep: 10^9 nodes written out, refused at once */
TEST(billion_laughs_is_refused) {
        dp_strbuf in = DP_STRBUF_INIT;
        dp_strbuf_puts(&in, "l0: &l0 lol\n");
        for (int i = 1; i <= 9; i++) {
                dp_strbuf_printf(&in, "l%d: &l%d [", i, i);
                for (int k = 0; k < 10; k++) dp_strbuf_printf(&in, "%s*l%d", k ? ", " : "", i - 1);
                dp_strbuf_puts(&in, "]\n");
        }
        _cleanup_free_ char *text = dp_strbuf_steal(&in);
        _cleanup_free_ char *a = parse_json(text, true), *b = parse_json(text, false);
        ASSERT_CONTAINS(a, "YAML aliases expand past 4194304 nodes (alias *l6)");
        ASSERT_STREQ(a, b);
        /* well under the cap is fine: 10^5 */
        dp_strbuf small = DP_STRBUF_INIT;
        dp_strbuf_puts(&small, "l0: &l0 lol\n");
        for (int i = 1; i <= 5; i++) {
                dp_strbuf_printf(&small, "l%d: &l%d [", i, i);
                for (int k = 0; k < 10; k++) dp_strbuf_printf(&small, "%s*l%d", k ? ", " : "", i - 1);
                dp_strbuf_puts(&small, "]\n");
        }
        _cleanup_free_ char *t2 = dp_strbuf_steal(&small);
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        ASSERT_OK(dp_doc_parse(s, t2, strlen(t2), "in.yaml", NULL));
        ASSERT_EQ(dp_doc_get(dp_doc_root(s, 0), "l5")->n, 10);
}

/* aliases of deep nodes inside deep nodes: the depth written out counts */
TEST(alias_depth_counts) {
        dp_strbuf in = DP_STRBUF_INIT;
        dp_strbuf_puts(&in, "a: &a ");
        for (int i = 0; i < 60; i++) dp_strbuf_putc(&in, '[');
        for (int i = 0; i < 60; i++) dp_strbuf_putc(&in, ']');
        dp_strbuf_puts(&in, "\nb: ");
        for (int i = 0; i < 50; i++) dp_strbuf_putc(&in, '[');
        dp_strbuf_puts(&in, "*a");
        for (int i = 0; i < 50; i++) dp_strbuf_putc(&in, ']');
        dp_strbuf_putc(&in, '\n');
        _cleanup_free_ char *text = dp_strbuf_steal(&in);
        _cleanup_free_ char *a = parse_json(text, true);
        ASSERT_CONTAINS(a, "nesting deeper than 100 levels");
}

/* A Deployment as people write one with merge keys: a container template
 * merged into two containers (each overriding its name and one limit), shared
 * labels merged with one of their own, and a sequence of maps. */
static const char merged_manifest[] = "apiVersion: apps/v1\n"
                                      "kind: Deployment\n"
                                      "metadata:\n"
                                      "  name: train\n"
                                      "  labels: &labels {app: train, team: ml}\n"
                                      "spec:\n"
                                      "  selector:\n"
                                      "    matchLabels: *labels\n"
                                      "  template:\n"
                                      "    metadata:\n"
                                      "      labels:\n"
                                      "        <<: *labels\n"
                                      "        tier: gpu\n"
                                      "    spec:\n"
                                      "      containers:\n"
                                      "      - &worker\n"
                                      "        name: worker\n"
                                      "        image: registry.example.com/train:1.4\n"
                                      "        resources:\n"
                                      "          limits: &limits {nvidia.com/gpu: 1, memory: 16Gi}\n"
                                      "      - <<: *worker\n"
                                      "        name: sidecar\n"
                                      "        resources:\n"
                                      "          limits:\n"
                                      "            <<: *limits\n"
                                      "            nvidia.com/gpu: 0\n"
                                      "      tolerations:\n"
                                      "      - <<: [{key: a, operator: Exists}, {key: b, effect: NoSchedule}]\n";

TEST(merge_keys_as_kubectl_reads_them) {
        both(merged_manifest,
             "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"train\",\"labels\":{"
             "\"app\":\"train\",\"team\":\"ml\"}},\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"train\","
             "\"team\":\"ml\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"train\",\"team\":\"ml\",\"tier\":"
             "\"gpu\"}},\"spec\":{\"containers\":[{\"name\":\"worker\",\"image\":\"registry.example.com/train:1.4\","
             "\"resources\":{\"limits\":{\"nvidia.com/gpu\":1,\"memory\":\"16Gi\"}}},{\"image\":"
             "\"registry.example.com/train:1.4\",\"name\":\"sidecar\",\"resources\":{\"limits\":{\"memory\":\"16Gi\","
             "\"nvidia.com/gpu\":0}}}],\"tolerations\":[{\"key\":\"a\",\"operator\":\"Exists\",\"effect\":"
             "\"NoSchedule\"}]}}}}\n");
}

TEST(merge_key_rules) {
        /* own keys win wherever "<<" is; it stands where it was written */
        both("b: &b {x: 1, y: 2}\nm: {y: 3, <<: *b, z: 4}\n",
             "{\"b\":{\"x\":1,\"y\":2},\"m\":{\"y\":3,\"x\":1,\"z\":4}}\n");
        /* of a sequence, the earlier map wins */
        both("m:\n  <<: [{a: 1}, {a: 2, b: 2}]\n", "{\"m\":{\"a\":1,\"b\":2}}\n");
        /* a merged map's own merge is already in it; "!!merge" is the key written out */
        both("a: &a {x: 1}\nb: &b {<<: *a, y: 2}\nc: {!!merge <<: *b}\n",
             "{\"a\":{\"x\":1},\"b\":{\"x\":1,\"y\":2},\"c\":{\"x\":1,\"y\":2}}\n");
        /* a quoted "<<" is a key like any other, and is written quoted */
        both("m: {'<<': {a: 1}}\n", "{\"m\":{\"\\u003c\\u003c\":{\"a\":1}}}\n");
        both("{\"m\": {\"<<\": {\"a\": 1}}}", "{\"m\":{\"\\u003c\\u003c\":{\"a\":1}}}\n");
        dp_strbuf y = DP_STRBUF_INIT;
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        ASSERT_OK(dp_doc_parse(s, "{\"<<\": 1}", 9, "in.json", NULL));
        dp_doc_emit(&y, dp_doc_root(s, 0), DP_DOC_YAML);
        _cleanup_free_ char *text = dp_strbuf_steal(&y);
        ASSERT_STREQ(text, "\"\\u003c\\u003c\": 1\n");
        _cleanup_(dp_doc_set_freep) dp_doc_set *back = dp_doc_set_new();
        ASSERT_OK(dp_doc_parse(back, text, strlen(text), "back.yaml", NULL));
        ASSERT_TRUE(dp_doc_get(dp_doc_root(back, 0), "<<"));
        /* what go-yaml refuses, with a position */
        both("m:\n  a: 1\n  <<: 3\n",
             "error: in.yaml:3:3: map merge requires a map or a sequence of maps as the value of \"<<\"");
        both("m:\n  <<: [{a: 1}, x]\n",
             "error: in.yaml:2:3: map merge requires a map or a sequence of maps as the value of \"<<\"");
        both("s: &s [1]\nm: {<<: *s}\n",
             "error: in.yaml:2:5: map merge requires a map or a sequence of maps as the value of \"<<\"");
        both("m:\n  <<: {a: 1}\n  <<: {b: 1}\n", "error: in.yaml:3:3: duplicate key \"<<\"");
        /* merged keys are not duplicates; own ones still are */
        both("m: {<<: {a: 1}, a: 2, a: 3}\n", "error: in.yaml:1:23: duplicate key \"a\"");
}

/* merges of aliases count against the same cap as aliases: a chain of maps
 * each merging the one before twice stays bounded */
TEST(merge_keys_are_bounded) {
        dp_strbuf in = DP_STRBUF_INIT;
        dp_strbuf_puts(&in, "m0: &m0 {");
        for (int k = 0; k < 64; k++)
                dp_strbuf_printf(&in, "%sk%d: v", k ? ", " : "", k);
        dp_strbuf_puts(&in, "}\n");
        for (int i = 1; i <= 40; i++)
                dp_strbuf_printf(&in, "m%d: &m%d {<<: [*m%d, *m%d], own%d: 1}\n", i, i, i - 1, i - 1, i);
        _cleanup_free_ char *text = dp_strbuf_steal(&in);
        _cleanup_free_ char *a = parse_json(text, true), *b = parse_json(text, false);
        ASSERT_CONTAINS(a, "YAML aliases expand past 4194304 nodes");
        ASSERT_STREQ(a, b);
}
