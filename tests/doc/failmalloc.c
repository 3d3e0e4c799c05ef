/* SPDX-License-Identifier: Apache-2.0
 * doc-failmalloc — a daemon's YAML read (dp_doc_parse: libyaml's parser) under
 * the one failmalloc runner (../failmalloc.h). libyaml takes no allocator, so
 * the failmalloc tests link its static archive whole (tests/CMakeLists.txt):
 * --wrap then reaches the malloc/realloc/strdup calls inside libyaml too, and
 * its buffers, token queues, anchors and scalar copies fail in turn with
 * devplane's own tree. Each failure must come back -ENOMEM (libyaml's
 * YAML_MEMORY_ERROR) with nothing leaked; a run without one gives the
 * reference tree. */
#include <stdio.h>
#include <yaml.h>

#include "doc/doc.h"

#include "failmalloc.h"

static const char input[] = "# a daemon's config, as people write it\n"
                            "apiVersion: devplane.io/v1alpha1\n"
                            "kind: AgentConfig\n"
                            "defaults: &d {health: poll, interval: 10s}\n"
                            "resources:\n"
                            "- name: nvidia.com/gpu\n"
                            "  <<: *d\n"
                            "  devices: [gpu-0, gpu-1, \"gpu-\\u00e9\"]\n"
                            "  note: |\n"
                            "    a block scalar\n"
                            "    of two lines\n"
                            "---\n"
                            "{\"json\": [1, 2.5, null, true]}\n";

static char *reference;

static bool run(void *ctx) {
        (void)ctx;
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        if (!s) return false;
        dp_error err = {0};
        int r = dp_doc_parse(s, input, sizeof(input) - 1, "config.yaml", &err);
        if (r < 0) {
                if (r != -ENOMEM) fprintf(stderr, "doc-failmalloc: %s (%d), not -ENOMEM\n", err.msg, r);
                return false;
        }
        bool was = counting;
        counting = false; /* the comparison is not under test */
        dp_strbuf o = DP_STRBUF_INIT;
        for (size_t i = 0; i < dp_doc_count(s); i++)
                dp_doc_emit(&o, dp_doc_root(s, i), DP_DOC_JSON_COMPACT);
        bool ok = !dp_strbuf_failed(&o);
        if (ok && !reference)
                reference = strdup(dp_strbuf_str(&o));
        else if (ok)
                ok = streq(reference, dp_strbuf_str(&o));
        dp_strbuf_done(&o);
        counting = was;
        return ok;
}

int main(void) {
        /* libyaml's own first allocation (the parser's input buffer), failed
         * directly: without the static archive it could not be */
        yaml_parser_t p;
        fail_at = 1;
        counter = 0;
        int got = yaml_parser_initialize(&p);
        fail_at = 0;
        if (got) {
                yaml_parser_delete(&p);
                fprintf(stderr, "doc-failmalloc: libyaml's allocations are not intercepted "
                                "(is the test linked with libyaml.a?)\n");
                return 1;
        }
        dp_failmalloc fm = {.name = "doc-failmalloc", .run = run, .min_points = 40};
        dp_failmalloc_result r;
        int rc = dp_failmalloc_each(&fm, &r);
        printf("doc-failmalloc: %lu allocations (libyaml's and devplane's), each failed in turn\n", r.points);
        free(reference);
        return rc;
}
