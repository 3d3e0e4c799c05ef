/* SPDX-License-Identifier: Apache-2.0
 * One YAML parser for everything a daemon reads: dp_doc_parse,
 * dp_doc_parse_each and dp_doc_parse_file read YAML with libyaml alone
 * (JSON with the JSON reader); only dp_doc_parse_bulk, the model's bulk
 * loader, uses devplane's own YAML reader. Counted by wrapping libyaml's
 * yaml_parser_initialize (tests/doc/tests.cmake). */
#include <yaml.h>

#include "doc/doc.h"
#include "harness.h"

static int n_libyaml;

int __real_yaml_parser_initialize(yaml_parser_t *parser);
int __wrap_yaml_parser_initialize(yaml_parser_t *parser);
int __wrap_yaml_parser_initialize(yaml_parser_t *parser) {
        n_libyaml++;
        return __real_yaml_parser_initialize(parser);
}

static const char block[] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n---\nkind: B\n";
static const char json[] = "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"a\"}}";

static int count(dp_doc_node *root, const char *source, size_t index, void *userdata, dp_error *err) {
        (*(size_t *)userdata)++;
        return 0;
}

TEST(daemons_read_yaml_with_libyaml) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        n_libyaml = 0;
        ASSERT_OK(dp_doc_parse(s, block, strlen(block), "a.yaml", NULL));
        ASSERT_EQ(dp_doc_count(s), 2);
        ASSERT_EQ(n_libyaml, 1);
        size_t n = 0;
        ASSERT_OK(dp_doc_parse_each(block, strlen(block), "a.yaml", count, &n, NULL));
        ASSERT_EQ(n, 2);
        ASSERT_EQ(n_libyaml, 2);
}

TEST(bulk_reads_block_yaml_itself) {
        n_libyaml = 0;
        size_t n = 0;
        ASSERT_OK(dp_doc_parse_bulk(block, strlen(block), "a.yaml", count, &n, NULL));
        ASSERT_EQ(n, 2);
        ASSERT_EQ(n_libyaml, 0);
}

TEST(json_reader_everywhere) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        n_libyaml = 0;
        ASSERT_OK(dp_doc_parse(s, json, strlen(json), "a.json", NULL));
        size_t n = 0;
        ASSERT_OK(dp_doc_parse_each(json, strlen(json), "a.json", count, &n, NULL));
        ASSERT_OK(dp_doc_parse_bulk(json, strlen(json), "a.json", count, &n, NULL));
        ASSERT_EQ(n, 2);
        ASSERT_EQ(n_libyaml, 0);
}
