/* SPDX-License-Identifier: Apache-2.0
 * files.c — the module's only I/O: atomic writes of CDI specs, metadata
 * files and the checkpoint (temp + fsync + rename + directory fsync), and
 * their removal. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/log.h"
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

int dp_dra_file_set_aside(const char *path, char **ret_to, dp_error *err) {
        assert_return(path, -EINVAL);
        int r = dp_file_set_aside(path, ret_to);
        if (r == -EEXIST)
                return dp_error_set(err, r, "%s: cannot set it aside: %s.corrupt and .corrupt.1 to .%u are taken", path,
                                    path, DP_SET_ASIDE_MAX - 1);
        if (r < 0) return dp_error_errno(err, r, "%s: setting it aside", path);
        return 0;
}

/* Where a file of ours belongs, anything but a regular file (a directory,
 * which rename(2) cannot replace; a symlink, say to /dev/zero; a FIFO) is
 * damage, as corrupt content is: set aside first, so it is kept, not
 * silently replaced. */
static int clear_target(const char *dir, const char *name, dp_error *err) {
        _cleanup_free_ char *path = dp_asprintf("%s/%s", dir, name);
        if (!path) return dp_error_set(err, -ENOMEM, "out of memory");
        struct stat st;
        if (lstat(path, &st) < 0 || S_ISREG(st.st_mode)) return 0;
        _cleanup_free_ char *to = NULL;
        int r = dp_dra_file_set_aside(path, &to, err);
        if (r < 0) return r;
        log_warning("%s: not a regular file where a file of ours belongs: set aside as %s", path, to);
        return 0;
}

int dp_dra_file_write(const char *dir, const char *name, const char *data, size_t len, mode_t mode, dp_error *err) {
        assert_return(dir && (data || !len), -EINVAL);
        if (!name_ok(name)) return dp_error_set(err, -EINVAL, "%s: not a relative file name", name ? name : "(null)");
        int r = make_parents(dir, name);
        if (r < 0) return dp_error_errno(err, r, "%s/%s: creating directories", dir, name);
        if ((r = clear_target(dir, name, err)) < 0) return r;
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
        dp_free_many(o->cdi_spec.name, o->cdi_spec.data);
        for (size_t i = 0; i < o->n_metadata; i++)
                dp_free_many(o->metadata[i].name, o->metadata[i].data);
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
        _cleanup_strbuf_ dp_strbuf sb = DP_STRBUF_INIT;
        int r = dp_state_file_marshal(&dp_dra_checkpoint_file, c, &sb, err);
        if (r < 0) {
                dp_error_prefix(err, "%s/%s", dir, name);
                return r;
        }
        return dp_dra_file_write(dir, name, dp_strbuf_str(&sb), sb.len, 0600, err);
}

int dp_dra_checkpoint_load(const char *path, dp_dra_checkpoint **ret, dp_error *err) {
        return dp_state_file_load(&dp_dra_checkpoint_file, path, (void **)ret, err);
}

/* ---- CDI specs against the checkpoint ---- */

/* 1 when <cdi_dir>/<name> holds exactly text; 0 when not (missing, other
 * bytes, not a regular file, unreadable). */
static int spec_intact(const char *cdi_dir, const char *name, const char *text) {
        _cleanup_free_ char *path = dp_asprintf("%s/%s", cdi_dir, name);
        if (!path) return -ENOMEM;
        size_t want = strlen(text), len = 0;
        _cleanup_free_ char *buf = NULL;
        int r = dp_read_file(path, want, &buf, &len, NULL);
        if (r == -ENOMEM) return r;
        return r == 0 && len == want && memcmp(buf, text, len) == 0;
}

int dp_dra_cdi_reconcile(const dp_dra_checkpoint *c, const char *cdi_dir, dp_dra_cdi_check *ret, dp_error *err) {
        assert_return(c && cdi_dir && ret, -EINVAL);
        *ret = (dp_dra_cdi_check){0};
        for (size_t i = 0; i < c->n_claims; i++) {
                const dp_dra_prepared_claim *pc = &c->claims[i];
                if (!pc->cdi_spec_file) continue;
                ret->checked++;
                if (!pc->cdi_spec_text) {
                        ret->no_copy++;
                        continue;
                }
                int r = spec_intact(cdi_dir, pc->cdi_spec_file, pc->cdi_spec_text);
                if (r < 0) return dp_error_set(err, r, "out of memory");
                if (r > 0) continue;
                dp_error e = DP_ERROR_INIT;
                r = dp_dra_file_write(cdi_dir, pc->cdi_spec_file, pc->cdi_spec_text, strlen(pc->cdi_spec_text), 0644,
                                      &e);
                if (r < 0) {
                        ret->failed++;
                        log_error("CDI spec %s/%s of claim %s is missing or damaged and cannot be written again: %s",
                                  cdi_dir, pc->cdi_spec_file, pc->uid, dp_error_msg(&e));
                        if (err) *err = e;
                        continue;
                }
                ret->rewritten++;
                log_warning("CDI spec %s/%s of claim %s was missing or damaged: written again from the driver "
                            "checkpoint",
                            cdi_dir, pc->cdi_spec_file, pc->uid);
        }
        return ret->failed ? -EIO : 0;
}
