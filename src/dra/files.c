/* SPDX-License-Identifier: Apache-2.0
 * files.c — the module's only I/O: atomic writes of CDI specs, metadata
 * files and the checkpoint (temp + fsync + rename + directory fsync), and
 * their removal. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "dra/cdi.h"
#include "dra/prepared.h"

static bool name_ok(const char *name) {
        if (!name || !*name || name[0] == '/') return false;
        for (const char *p = name; *p;) {
                const char *slash = strchr(p, '/');
                size_t n = slash ? (size_t)(slash - p) : strlen(p);
                if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) return false;
                p += n + (slash ? 1 : 0);
                if (slash && !*p) return false;
        }
        return true;
}

/* mkdir -p of the parents of path below dir. */
static int make_parents(const char *dir, const char *name) {
        _cleanup_free_ char *p = dp_asprintf("%s/%s", dir, name);
        if (!p) return -ENOMEM;
        size_t base = strlen(dir) + 1;
        for (char *s = p + base; (s = strchr(s, '/')); s++) {
                *s = 0;
                if (mkdir(p, 0755) < 0 && errno != EEXIST) return -errno;
                *s = '/';
        }
        return 0;
}

int dp_dra_file_write(const char *dir, const char *name, const char *data, size_t len, mode_t mode, dp_error *err) {
        assert_return(dir && (data || !len), -EINVAL);
        if (!name_ok(name)) return dp_error_set(err, -EINVAL, "%s: not a relative file name", name ? name : "(null)");
        int r = make_parents(dir, name);
        if (r < 0) return dp_error_errno(err, r, "%s/%s: creating directories", dir, name);
        return dp_write_file_atomic(dir, name, data, len, mode, DP_WRITE_DURABLE, err);
}

int dp_dra_file_remove(const char *dir, const char *name, dp_error *err) {
        assert_return(dir, -EINVAL);
        if (!name_ok(name)) return dp_error_set(err, -EINVAL, "%s: not a relative file name", name ? name : "(null)");
        _cleanup_free_ char *path = dp_asprintf("%s/%s", dir, name);
        if (!path) return dp_error_set(err, -ENOMEM, "out of memory");
        if (unlink(path) < 0 && errno != ENOENT) return dp_error_errno(err, -errno, "%s: removing", path);
        /* empty parents below dir go too */
        size_t base = strlen(dir);
        for (char *s = strrchr(path, '/'); s && (size_t)(s - path) > base; s = strrchr(path, '/')) {
                *s = 0;
                if (rmdir(path) < 0) break;
        }
        return 0;
}

int dp_dra_file_read(const char *path, size_t max, char **ret, size_t *ret_len, dp_error *err) {
        return dp_read_file(path, max, ret, ret_len, err);
}

/* ---- prepare output, unprepare, checkpoint files ---- */

void dp_dra_prepare_output_done(dp_dra_prepare_output *o) {
        if (!o) return;
        dp_dra_prepared_claim_done(&o->claim);
        free(o->cdi_spec.name);
        free(o->cdi_spec.data);
        for (size_t i = 0; i < o->n_metadata; i++) {
                free(o->metadata[i].name);
                free(o->metadata[i].data);
        }
        free(o->metadata);
        memset(o, 0, sizeof(*o));
}

int dp_dra_prepare_output_write(const dp_dra_prepare_output *o, const char *cdi_dir, const char *metadata_dir,
                                dp_error *err) {
        assert_return(o && cdi_dir, -EINVAL);
        if (o->n_metadata && !metadata_dir) return dp_error_set(err, -EINVAL, "no metadata directory");
        for (size_t i = 0; i < o->n_metadata; i++) {
                int r = dp_dra_file_write(metadata_dir, o->metadata[i].name, o->metadata[i].data, o->metadata[i].len,
                                          0644, err);
                if (r < 0) return r;
        }
        if (o->cdi_spec.name)
                return dp_dra_file_write(cdi_dir, o->cdi_spec.name, o->cdi_spec.data, o->cdi_spec.len, 0644, err);
        return 0;
}

int dp_dra_unprepare_files(const dp_dra_prepared_claim *c, const char *cdi_dir, const char *metadata_dir,
                           dp_error *err) {
        assert_return(c && cdi_dir, -EINVAL);
        int r = 0;
        if (c->cdi_spec_file) r = dp_dra_file_remove(cdi_dir, c->cdi_spec_file, err);
        for (size_t i = 0; r >= 0 && i < c->n_metadata; i++)
                if (metadata_dir) r = dp_dra_file_remove(metadata_dir, c->metadata[i].path, err);
        return r;
}

int dp_dra_checkpoint_save(const dp_dra_checkpoint *c, const char *dir, const char *name, dp_error *err) {
        dp_strbuf sb = DP_STRBUF_INIT;
        int r = dp_dra_checkpoint_encode(c, &sb);
        if (r < 0) {
                dp_strbuf_done(&sb);
                return dp_error_set(err, r, "encoding the checkpoint");
        }
        r = dp_dra_file_write(dir, name, dp_strbuf_str(&sb), sb.len, 0600, err);
        dp_strbuf_done(&sb);
        return r;
}

int dp_dra_checkpoint_load(const char *path, dp_dra_checkpoint **ret, dp_error *err) {
        char *buf = NULL;
        size_t len = 0;
        int r = dp_dra_file_read(path, DP_DRA_CHECKPOINT_MAX, &buf, &len, err);
        if (r < 0) return r;
        r = dp_dra_checkpoint_decode(buf, len, path, ret, err);
        free(buf);
        return r;
}
