/* SPDX-License-Identifier: Apache-2.0
 * dp_encoder (scratch trees that point into the object) against
 * dp_resource_claim_encode (trees in a doc set): the same bytes in every
 * format, for every claim of the fixtures and the allocate cases and for
 * claims full of text that needs escaping or quoting, with one encoder
 * reused claim after claim. */
#include <glob.h>
#include <inttypes.h>
#include <stdio.h>

#include "harness.h"
#include "model/model.h"

static const dp_doc_format formats[] = {DP_DOC_JSON_COMPACT, DP_DOC_JSON_PRETTY, DP_DOC_YAML};

static size_t check_claims(dp_encoder *x, const dp_object_list *l, const char *what) {
        size_t n = 0;
        for (size_t i = 0; i < l->n; i++) {
                if (l->items[i].hdr->kind != DP_KIND_RESOURCE_CLAIM) continue;
                const dp_resource_claim *c = l->items[i].claim;
                dp_doc_set *s = dp_doc_set_new();
                const dp_doc_node *want = dp_resource_claim_encode(s, c);
                ASSERT_TRUE(want);
                for (size_t f = 0; f < ELEMENTSOF(formats); f++) {
                        /* a new tree per format: each call reuses the last one's memory */
                        const dp_doc_node *got = dp_encoder_claim(x, c);
                        ASSERT_TRUE(got);
                        _cleanup_strbuf_ dp_strbuf a = DP_STRBUF_INIT, b = DP_STRBUF_INIT;
                        dp_doc_emit(&a, want, formats[f]);
                        dp_doc_emit(&b, got, formats[f]);
                        if (a.len != b.len || memcmp(dp_strbuf_str(&a), dp_strbuf_str(&b), a.len) != 0)
                                DP_FAIL("%s: claim %s, format %zu:\nset:\n%s\nencoder:\n%s", what, c->meta.name, f,
                                        dp_strbuf_str(&a), dp_strbuf_str(&b));
                }
                dp_doc_set_free(s);
                n++;
        }
        return n;
}

static size_t check_file(dp_encoder *x, const char *path) {
        dp_object_list *l = dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        if (dp_model_load_file(path, l, &err) < 0) DP_FAIL("%s", err.msg);
        size_t n = check_claims(x, l, path);
        dp_object_list_free(l);
        return n;
}

/* An allocate case (tests/alloc/cases): its `objects` list, decoded. */
static size_t check_case(dp_encoder *x, const char *path) {
        dp_doc_set *s = dp_doc_set_new();
        ASSERT_OK(dp_doc_parse_file(s, path, NULL));
        const dp_doc_node *objs = dp_doc_get(dp_doc_root(s, 0), "objects");
        _cleanup_strbuf_ dp_strbuf y = DP_STRBUF_INIT;
        for (size_t i = 0; objs && i < objs->n; i++) {
                dp_strbuf_puts(&y, "---\n");
                dp_doc_emit(&y, objs->items[i], DP_DOC_YAML);
        }
        dp_doc_set_free(s);
        dp_object_list *l = dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        /* a case of bad input on purpose has nothing to compare */
        size_t n = dp_model_decode_buffer(dp_strbuf_str(&y), y.len, path, l, &err) < 0 ? 0 : check_claims(x, l, path);
        dp_object_list_free(l);
        return n;
}

TEST(encoder_same_as_set_on_fixtures_and_cases) {
        dp_encoder *x = dp_encoder_new();
        ASSERT_TRUE(x);
        size_t n = check_file(x, "data/claims.yaml");
        ASSERT_TRUE(n > 0);
        glob_t g;
        ASSERT_EQ(glob("../alloc/cases/*.yaml", 0, NULL, &g), 0);
        ASSERT_TRUE(g.gl_pathc > 10);
        for (size_t i = 0; i < g.gl_pathc; i++)
                n += check_case(x, g.gl_pathv[i]);
        globfree(&g);
        fprintf(stderr, "%zu claims compared\n", n);
        ASSERT_TRUE(n > 40);
        dp_encoder_free(x);
}

/* Text that must be escaped in JSON or quoted in YAML, non-ASCII, maps of
 * more keys than the encoder sorts by insertion, parameters with empty and
 * nested collections, a status with every list. */
static const char odd_claims[] =
        "apiVersion: resource.k8s.io/v1\n"
        "kind: ResourceClaim\n"
        "metadata:\n"
        "  name: odd\n"
        "  namespace: \"n\\u00e9\"\n"
        "  uid: \"123\"\n"
        "  generation: 7\n"
        "  creationTimestamp: \"2026-11-01T10:10:00Z\"\n"
        "  labels: {z: \"yes\", a: \"true\", m: \"a: b\", k18: \"#x\", b: \"\", \"c d\": \"0x1f\", e: \"- x\",\n"
        "           f: \"1_000\", g: \".inf\", h: \"~\", i: null-ish, j: \"caf\\u00e9 \\u65e5\", k: \"x #y\",\n"
        "           l: \"<&>\", n: \"q\\\"uote\", o: \"back\\\\slash\", p: \"tab\\there\", q: \"nl\\nhere\",\n"
        "           r: \"\\u0001\", s: \"1e5\", t: \"-3\", u: \"+1\", v: \"No\"}\n"
        "  annotations: {\"x/y\": \"line one\\nline two\", \"k:\": \"v \"}\n"
        "  ownerReferences:\n"
        "  - {apiVersion: v1, kind: Pod, name: \"p&q\", uid: u1, controller: true}\n"
        "spec:\n"
        "  devices:\n"
        "    requests:\n"
        "    - name: r\n"
        "      exactly:\n"
        "        deviceClassName: \"cl<ass>\"\n"
        "        allocationMode: All\n"
        "        adminAccess: true\n"
        "        selectors:\n"
        "        - cel: {expression: \"device.attributes[\\\"x\\\"].s == 'a\\\\nb' && 1 < 2\"}\n"
        "    config:\n"
        "    - requests: [r]\n"
        "      opaque:\n"
        "        driver: d.example.com\n"
        "        parameters: {z: [], a: {}, list: [[1, 2], [], {k: \"v: w\"}], s: \"\\u00e9\", n: null,\n"
        "                     t: true, f: 1.5, nested: {b: {d: 1, c: 2}, a: [x, \"yes\"]}}\n"
        "status:\n"
        "  allocation:\n"
        "    devices:\n"
        "      results:\n"
        "      - {request: r, driver: d.example.com, pool: \"p#1\", device: \"dev 0\", adminAccess: true,\n"
        "         bindingConditions: [\"a:b\"], bindingFailureConditions: [\"\"]}\n"
        "    allocationTimestamp: \"2026-11-01T10:10:00Z\"\n"
        "  reservedFor:\n"
        "  - {resource: pods, name: \"w\\u00e9b\", uid: u2}\n"
        "  devices:\n"
        "  - driver: d.example.com\n"
        "    pool: \"p#1\"\n"
        "    device: \"dev 0\"\n"
        "    conditions:\n"
        "    - {type: Ready, status: \"True\", reason: \"ok\", message: \"a\\tb\",\n"
        "       lastTransitionTime: \"2026-11-01T10:10:00Z\"}\n"
        "    data: {x: [1, {}]}\n"
        "    networkData: {interfaceName: eth0, ips: [\"10.0.0.1/24\"], hardwareAddress: \"aa:bb\"}\n"
        "---\n"
        "apiVersion: resource.k8s.io/v1\n"
        "kind: ResourceClaim\n"
        "metadata: {name: empty, namespace: default}\n"
        "spec: {}\n";

TEST(encoder_same_as_set_on_odd_text) {
        dp_object_list *l = dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        if (dp_model_decode_buffer(odd_claims, strlen(odd_claims), "odd.yaml", l, &err) < 0) DP_FAIL("%s", err.msg);
        dp_encoder *x = dp_encoder_new();
        ASSERT_TRUE(x);
        /* twice over: the second round runs in the first round's memory */
        ASSERT_EQ(check_claims(x, l, "odd.yaml"), 2);
        ASSERT_EQ(check_claims(x, l, "odd.yaml"), 2);
        /* and the odd text is there, escaped */
        const dp_doc_node *t = dp_encoder_claim(x, l->items[0].claim);
        _cleanup_strbuf_ dp_strbuf j = DP_STRBUF_INIT, y = DP_STRBUF_INIT;
        dp_doc_emit(&j, t, DP_DOC_JSON_PRETTY);
        dp_doc_emit(&y, t, DP_DOC_YAML);
        ASSERT_CONTAINS(dp_strbuf_str(&j), "\"l\": \"\\u003c\\u0026\\u003e\"");
        ASSERT_CONTAINS(dp_strbuf_str(&j), "\"list\": [\n");
        ASSERT_CONTAINS(dp_strbuf_str(&y), "    z: \"yes\"\n");
        ASSERT_CONTAINS(dp_strbuf_str(&y), "    j: caf\xc3\xa9 \xe6\x97\xa5\n");
        ASSERT_CONTAINS(dp_strbuf_str(&y), "          z: []\n");
        dp_encoder_free(x);
        dp_object_list_free(l);
}

TEST(encoder_null_arguments) {
        ASSERT_TRUE(dp_encoder_free(NULL) == NULL);
        ASSERT_TRUE(dp_encoder_claim(NULL, NULL) == NULL);
}

/* Numbers are formatted without printf: as printf would. */
TEST(encoder_integers) {
        static const int64_t values[] = {1, -1, 9, 10, 99, -100, 1234567890123, INT64_MAX, INT64_MIN, INT64_MIN + 1};
        dp_doc_set *s = dp_doc_set_new();
        for (size_t i = 0; i < ELEMENTSOF(values); i++) {
                dp_object_meta m = {.name = "x", .generation = values[i]};
                const dp_doc_node *n = dp_doc_get(dp_object_meta_encode(s, &m), "generation");
                char want[32];
                snprintf(want, sizeof want, "%" PRId64, values[i]);
                ASSERT_TRUE(n && n->plain);
                ASSERT_STREQ(n->str, want);
        }
        dp_doc_set_free(s);
}
