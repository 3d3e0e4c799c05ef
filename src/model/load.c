/* SPDX-License-Identifier: Apache-2.0
 *
 * load.c — the file-reading entry of the model: files, directories and
 * standard input ("-") in, one validated collection out (all or nothing).
 */
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/strbuf.h"
#include "base/strv.h"
#include "model/model.h"

int dp_model_read_stdin(char **ret, size_t *ret_len, dp_error *err) {
        assert_return(ret && ret_len, -EINVAL);
        _cleanup_strbuf_ dp_strbuf sb = DP_STRBUF_INIT;
        char chunk[65536];
        for (;;) {
                ssize_t k = read(STDIN_FILENO, chunk, sizeof(chunk));
                if (k < 0 && errno == EINTR) continue;
                if (k < 0) return dp_error_errno(err, -errno, "%s", DP_MODEL_STDIN_NAME);
                if (k == 0) break;
                if (sb.len + (size_t)k > DP_DOC_MAX_INPUT)
                        return dp_error_set(err, -E2BIG, "%s: larger than %u bytes", DP_MODEL_STDIN_NAME,
                                            DP_DOC_MAX_INPUT);
                dp_strbuf_append(&sb, chunk, (size_t)k);
        }
        if (dp_strbuf_failed(&sb)) return dp_error_set(err, -ENOMEM, "out of memory");
        size_t len = sb.len;
        char *s = dp_strbuf_steal(&sb);
        if (!s && !(s = dp_strdup(""))) return dp_error_set(err, -ENOMEM, "out of memory");
        *ret = s;
        *ret_len = len;
        return 0;
}

static int decode_one(dp_doc_node *root, const char *source, size_t index, void *userdata, dp_error *err) {
        return dp_model_decode(root, source, index, userdata, err);
}

/* Each document is decoded as soon as it is parsed and its tree dropped:
 * the peak holds the decoded objects and one document's tree, not a tree of
 * the whole file. A syntax error anywhere still wins over a decoding error
 * (dp_doc_parse_each), as when the file was parsed whole first. The one
 * caller of dp_doc_parse_bulk: -f files may be cluster dumps of megabytes,
 * and devplane's own YAML reader loads them 4x faster than libyaml. */
int dp_model_load_file(const char *path, dp_object_list *out, dp_error *err) {
        assert_return(path && out, -EINVAL);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        int r;
        const char *source = path;
        if (streq(path, DP_MODEL_STDIN)) {
                source = DP_MODEL_STDIN_NAME;
                r = dp_model_read_stdin(&buf, &len, err);
        } else {
                r = dp_read_file(path, DP_DOC_MAX_INPUT, &buf, &len, err);
                if (r == -E2BIG)
                        return dp_error_set(err, r, "%s: file larger than %u MiB", path, DP_DOC_MAX_INPUT >> 20);
        }
        if (r < 0) return r;
        size_t start = out->n;
        r = dp_doc_parse_bulk(buf, len, source, decode_one, out, err);
        if (r < 0)
                while (out->n > start)
                        dp_object_free(out->items[--out->n]);
        return r;
}

static bool has_input_suffix(const char *name) {
        size_t n = strlen(name);
        return (n > 5 && streq(name + n - 5, ".yaml")) || (n > 4 && streq(name + n - 4, ".yml")) ||
               (n > 5 && streq(name + n - 5, ".json"));
}

/* Input files of a directory as paths, sorted by name (hidden files skipped). */
static int list_dir(const char *dir, char ***ret, size_t *ret_n, dp_error *err) {
        char **v;
        size_t n;
        int r = dp_dir_names(dir, has_input_suffix, &v, &n);
        if (r < 0) return r == -ENOMEM ? dp_error_set(err, r, "out of memory") : dp_error_errno(err, r, "%s", dir);
        size_t dl = strlen(dir);
        for (size_t i = 0; i < n; i++) {
                char *path = dp_asprintf("%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", v[i]);
                if (!path) {
                        dp_strv_free(v);
                        return dp_error_set(err, -ENOMEM, "out of memory");
                }
                free(v[i]);
                v[i] = path;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

int dp_model_load(const char *const *paths, size_t n_paths, dp_object_list **ret, dp_error *err) {
        assert_return(ret, -EINVAL);
        assert_return(paths || n_paths == 0, -EINVAL);
        _cleanup_(dp_object_list_freep) dp_object_list *l = dp_object_list_new();
        if (!l) return dp_error_set(err, -ENOMEM, "out of memory");
        bool stdin_read = false;
        for (size_t i = 0; i < n_paths; i++) {
                struct stat st;
                int r;
                if (streq(paths[i], DP_MODEL_STDIN)) {
                        if (stdin_read)
                                return dp_error_set(err, -EINVAL, "-f -: standard input can be read only once");
                        stdin_read = true;
                        r = dp_model_load_file(paths[i], l, err);
                        if (r < 0) return r;
                        continue;
                }
                if (stat(paths[i], &st) < 0) return dp_error_errno(err, -errno, "%s", paths[i]);
                if (S_ISDIR(st.st_mode)) {
                        char **names = NULL;
                        size_t n = 0;
                        r = list_dir(paths[i], &names, &n, err);
                        if (r < 0) return r;
                        for (size_t j = 0; j < n && r >= 0; j++)
                                r = dp_model_load_file(names[j], l, err);
                        dp_strv_free_n(names, n);
                } else {
                        r = dp_model_load_file(paths[i], l, err);
                }
                if (r < 0) return r;
        }
        int r = dp_model_generate_names(l, err);
        if (r >= 0) r = dp_model_validate(l, err);
        if (r < 0) return r;
        *ret = TAKE_PTR(l);
        return 0;
}
