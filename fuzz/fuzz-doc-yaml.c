/* SPDX-License-Identifier: Apache-2.0
 * Fuzz devplane's YAML reader (dp_doc_parse_bulk, the bulk loader's parse)
 * against libyaml (dp_doc_parse_each_libyaml): every input is parsed both
 * ways and both must agree — the same result, the same error message, the
 * same documents handed to the callback in the same order (node types,
 * strings, plain flags, line and column of every node, keys and their
 * positions), with the callback refusing one of them for some inputs. Each
 * tree is also written as YAML and read again both ways. dp_doc_parse (the
 * daemons' parse: the JSON reader, else libyaml) is compared with libyaml
 * too. */
#include <stdlib.h>

#include "doc/doc.h"

/* the same tree, marks included (dp_doc_dump of both) */
static void same_tree(const dp_doc_node *a, const dp_doc_node *b) {
        dp_strbuf da = DP_STRBUF_INIT, db = DP_STRBUF_INIT;
        dp_doc_dump(&da, a);
        dp_doc_dump(&db, b);
        if (!dp_strbuf_failed(&da) && !dp_strbuf_failed(&db) && strcmp(dp_strbuf_str(&da), dp_strbuf_str(&db)) != 0)
                abort();
        dp_strbuf_done(&da);
        dp_strbuf_done(&db);
}

typedef struct {
        dp_strbuf seen;
        size_t refuse; /* index of the document the callback refuses */
} each_state;

static int each_fn(dp_doc_node *root, const char *source, size_t index, void *userdata, dp_error *err) {
        each_state *st = userdata;
        dp_strbuf_printf(&st->seen, "[%zu %s]", index, source);
        dp_doc_dump(&st->seen, root);
        if (index == st->refuse) return dp_error_set(err, -EBADMSG, "%s: document %zu refused", source, index);
        return 0;
}

/* dp_doc_parse and dp_doc_parse_libyaml agree on data */
static void same_parse(const char *data, size_t size, dp_doc_set *fast, dp_doc_set *slow) {
        dp_error ef = DP_ERROR_INIT, es = DP_ERROR_INIT;
        int rf = dp_doc_parse(fast, data, size, "fuzz", &ef);
        int rs = dp_doc_parse_libyaml(slow, data, size, "fuzz", &es);
        if (rf == -ENOMEM || rs == -ENOMEM) return;
        if (rf != rs || strcmp(dp_error_msg(&ef), dp_error_msg(&es)) != 0) abort();
        if (rf == 0) {
                if (dp_doc_count(fast) != dp_doc_count(slow)) abort();
                for (size_t i = 0; i < dp_doc_count(fast); i++)
                        same_tree(dp_doc_root(fast, i), dp_doc_root(slow, i));
        }
}

/* dp_doc_parse_bulk and dp_doc_parse_each_libyaml agree on data */
static void same_each(const char *data, size_t size, size_t refuse) {
        dp_error ef = DP_ERROR_INIT, es = DP_ERROR_INIT;
        each_state a = {.seen = DP_STRBUF_INIT, .refuse = refuse}, b = {.seen = DP_STRBUF_INIT, .refuse = refuse};
        int rf = dp_doc_parse_bulk(data, size, "fuzz", each_fn, &a, &ef);
        int rs = dp_doc_parse_each_libyaml(data, size, "fuzz", each_fn, &b, &es);
        if (rf != -ENOMEM && rs != -ENOMEM && !dp_strbuf_failed(&a.seen) && !dp_strbuf_failed(&b.seen)) {
                if (rf != rs || strcmp(dp_error_msg(&ef), dp_error_msg(&es)) != 0) abort();
                if (strcmp(dp_strbuf_str(&a.seen), dp_strbuf_str(&b.seen)) != 0) abort();
        }
        dp_strbuf_done(&a.seen);
        dp_strbuf_done(&b.seen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        dp_doc_set *fast = dp_doc_set_new(), *slow = dp_doc_set_new();
        if (!fast || !slow) goto out;
        same_parse((const char *)data, size, fast, slow);
        /* one input in four has a document refused by the callback */
        same_each((const char *)data, size, size % 4 == 0 ? size / 4 % 3 : SIZE_MAX);
        /* the trees written as YAML (kubectl's style, what the reader is for) read the same way too */
        for (size_t i = 0; i < dp_doc_count(fast) && i < 4; i++) {
                dp_strbuf y = DP_STRBUF_INIT;
                dp_doc_emit(&y, dp_doc_root(fast, i), DP_DOC_YAML);
                if (!dp_strbuf_failed(&y)) same_each(dp_strbuf_str(&y), y.len, SIZE_MAX);
                dp_strbuf_done(&y);
        }
out:
        dp_doc_set_free(fast);
        dp_doc_set_free(slow);
        return 0;
}
