/* SPDX-License-Identifier: Apache-2.0
 *
 * state-file.c — the durable files' codec and manager, and devplane's
 * checksummed envelope (state-file.h).
 */
#include <stdio.h>

#include "base/fileio.h"
#include "doc/state-file.h"

/* ---- the envelope ---- */

static uint64_t fnv1a64(const char *p, size_t n) {
        uint64_t h = 0xcbf29ce484222325ull;
        for (size_t i = 0; i < n; i++) {
                h ^= (unsigned char)p[i];
                h *= 0x100000001b3ull;
        }
        return h;
}

/* DATA for obj, built in set, and its checksum text. */
static int data_digest(const dp_state_envelope *e, const void *obj, dp_doc_set *set, dp_doc_node **ret_data,
                       char sum[17]) {
        dp_doc_builder b = DP_DOC_BUILDER_INIT(set);
        dp_doc_node *data = e->build(&b, obj);
        if (b.r < 0 || !data) return -ENOMEM;
        _cleanup_strbuf_ dp_strbuf sb = DP_STRBUF_INIT;
        dp_doc_emit(&sb, data, DP_DOC_JSON_COMPACT);
        if (dp_strbuf_failed(&sb)) return -ENOMEM;
        snprintf(sum, 17, "%016llx", (unsigned long long)fnv1a64(dp_strbuf_str(&sb), sb.len));
        *ret_data = data;
        return 0;
}

int dp_state_envelope_marshal(const dp_state_envelope *e, const void *obj, dp_strbuf *out) {
        assert_return(e && obj && out, -EINVAL);
        _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
        if (!set) return -ENOMEM;
        dp_doc_node *data = NULL;
        char sum[17];
        int r = data_digest(e, obj, set, &data, sum);
        if (r < 0) return r;
        dp_doc_builder b = DP_DOC_BUILDER_INIT(set);
        dp_doc_node *root = dp_doc_b_map(&b);
        dp_doc_b_put_str(&b, root, "checksum", sum);
        dp_doc_b_put(&b, root, "data", data);
        if (b.r < 0) return b.r;
        dp_doc_emit(out, root, DP_DOC_JSON_COMPACT);
        dp_strbuf_putc(out, '\n');
        return dp_strbuf_failed(out) ? -ENOMEM : 0;
}

static const char *const envelope_keys[] = {"checksum", "data", NULL};

int dp_state_envelope_unmarshal(const dp_state_envelope *e, const char *buf, size_t len, const char *source, void *obj,
                                dp_error *err) {
        assert_return(e && (buf || !len) && obj, -EINVAL);
        dp_doc_decoder d = {source ? source : e->what, e->what, err};
        _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
        if (!set) return dp_doc_dec_oom(&d);
        dp_error pe = DP_ERROR_INIT;
        int r = dp_doc_parse(set, buf ? buf : "", len, d.source, &pe);
        if (r == -ENOMEM) return dp_doc_dec_oom(&d);
        if (r < 0 || dp_doc_count(set) != 1)
                return dp_error_set(err, -EBADMSG, "%s: %s corrupt: %s", d.source, e->what,
                                    r < 0 ? dp_error_msg(&pe) : "expected one JSON document");
        const dp_doc_node *root = dp_doc_root(set, 0);
        _cleanup_free_ char *sum = NULL;
        r = dp_doc_dec_only_keys(&d, root, "", envelope_keys);
        if (r >= 0) r = dp_doc_dec_str(&d, root, "checksum", DP_DOC_DEC_NONEMPTY, "", &sum);
        if (r >= 0) r = e->decode(&d, dp_doc_get(root, "data"), obj);
        if (r < 0) return r;
        /* The checksum covers what was decoded, built again: any change shows. */
        _cleanup_(dp_doc_set_freep) dp_doc_set *again = dp_doc_set_new();
        dp_doc_node *data = NULL;
        char want[17];
        if (!again || data_digest(e, obj, again, &data, want) < 0) return dp_doc_dec_oom(&d);
        if (!streq(sum, want))
                return dp_error_set(err, -EBADMSG,
                                    "%s: %s corrupt: checksum mismatch: file says %s, content hashes to %s", d.source,
                                    e->what, sum, want);
        return 0;
}

/* ---- the manager ---- */

int dp_state_file_marshal(const dp_state_file_type *t, const void *obj, dp_strbuf *out, dp_error *err) {
        assert_return(t && obj && out, -EINVAL);
        size_t start = out->len;
        int r = t->marshal(obj, out);
        if (r < 0) return dp_error_set(err, r, "encoding the %s", t->what);
        if (out->len - start > t->max) {
                size_t n = out->len - start;
                dp_strbuf_truncate(out, start);
                return dp_error_set(err, -E2BIG, "the %s would be %zu bytes, over %zu", t->what, n, t->max);
        }
        return 0;
}

int dp_state_file_unmarshal(const dp_state_file_type *t, const char *buf, size_t len, const char *source, void **ret,
                            dp_error *err) {
        assert_return(t && t->unmarshal && (buf || !len) && ret, -EINVAL);
        if (!source) source = t->what;
        if (len > t->max) return dp_error_set(err, -E2BIG, "%s: larger than %zu bytes", source, t->max);
        return t->unmarshal(buf, len, source, ret, err);
}

int dp_state_file_save(const dp_state_file_type *t, const void *obj, const char *dir, const char *name, mode_t mode,
                       dp_error *err) {
        assert_return(dir && name, -EINVAL);
        _cleanup_strbuf_ dp_strbuf sb = DP_STRBUF_INIT;
        int r = dp_state_file_marshal(t, obj, &sb, err);
        if (r < 0) {
                dp_error_prefix(err, "%s/%s", dir, name);
                return r;
        }
        return dp_write_file_atomic(dir, name, dp_strbuf_str(&sb), sb.len, mode, DP_WRITE_DURABLE, err);
}

int dp_state_file_load(const dp_state_file_type *t, const char *path, void **ret, dp_error *err) {
        assert_return(t && path && ret, -EINVAL);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r = dp_read_file(path, t->max, &buf, &len, err);
        if (r < 0) return r;
        return dp_state_file_unmarshal(t, buf, len, path, ret, err);
}
