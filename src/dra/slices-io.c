/* SPDX-License-Identifier: Apache-2.0
 * slices-io.c — published slices into a directory (--slices-dir). */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>

#include "dra/cdi.h"
#include "dra/slices.h"

/* "<prefix><digits><ext>" */
static bool pool_file(const char *name, const char *prefix, const char *ext) {
        size_t p = strlen(prefix), e = strlen(ext), n = strlen(name);
        if (n <= p + e || strncmp(name, prefix, p) != 0 || strcmp(name + n - e, ext) != 0) return false;
        for (size_t i = p; i < n - e; i++)
                if (!isdigit((unsigned char)name[i])) return false;
        return true;
}

int dp_dra_slices_write_dir(dp_resource_slice *const *v, size_t n, const char *dir, dp_doc_format fmt, dp_error *err) {
        assert_return(dir && v && n > 0, -EINVAL);
        const char *ext = fmt == DP_DOC_YAML ? ".yaml" : ".json";
        for (size_t i = 0; i < n; i++) {
                dp_strbuf sb = DP_STRBUF_INIT;
                int r = dp_dra_slices_emit(&v[i], 1, fmt, &sb);
                if (r < 0) {
                        dp_strbuf_done(&sb);
                        return dp_error_set(err, r, "out of memory");
                }
                if (fmt != DP_DOC_YAML) {
                        /* one object per file, not a List */
                        dp_strbuf_done(&sb);
                        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
                        dp_doc_node *x = s ? dp_resource_slice_encode(s, v[i]) : NULL;
                        if (!x) return dp_error_set(err, -ENOMEM, "out of memory");
                        dp_doc_emit(&sb, x, fmt);
                        dp_strbuf_putc(&sb, '\n');
                }
                _cleanup_free_ char *name = dp_asprintf("%s%s", v[i]->meta.name, ext);
                if (!name || dp_strbuf_failed(&sb)) {
                        dp_strbuf_done(&sb);
                        return dp_error_set(err, -ENOMEM, "out of memory");
                }
                r = dp_dra_file_write(dir, name, dp_strbuf_str(&sb), sb.len, 0644, err);
                dp_strbuf_done(&sb);
                if (r < 0) return r;
        }
        _cleanup_free_ char *prefix = dp_asprintf("%s-%s-", v[0]->node_name ? v[0]->node_name : "", v[0]->driver);
        if (!prefix) return dp_error_set(err, -ENOMEM, "out of memory");
        DIR *d = opendir(dir);
        if (!d) return dp_error_errno(err, -errno, "%s", dir);
        int r = 0;
        for (struct dirent *e; r >= 0 && (e = readdir(d));) {
                if (!pool_file(e->d_name, prefix, ext)) continue;
                bool current = false;
                for (size_t i = 0; i < n; i++) {
                        size_t k = strlen(v[i]->meta.name);
                        if (strncmp(e->d_name, v[i]->meta.name, k) == 0 && streq(e->d_name + k, ext)) current = true;
                }
                if (!current) r = dp_dra_file_remove(dir, e->d_name, err);
        }
        closedir(d);
        return r;
}
