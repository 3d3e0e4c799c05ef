/* SPDX-License-Identifier: Apache-2.0
 * recover-io.c — the start-up walk of the driver's directories (contract in
 * recover.h): temp files, orphaned specs, a checkpoint rebuilt from specs. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "base/log.h"
#include "dra/cdi.h"
#include "dra/recover.h"

void dp_dra_recovery_done(dp_dra_recovery *r) {
        if (!r) return;
        for (size_t i = 0; i < r->n_unknown; i++)
                dp_free_many(r->unknown[i], r->unknown_why[i]);
        dp_free_many(r->unknown, r->unknown_why);
        *r = (dp_dra_recovery){0};
}

static int add_unknown(dp_dra_recovery *r, const char *uid, const char *why) {
        char **u = realloc(r->unknown, (r->n_unknown + 1) * sizeof *u);
        if (!u) return -ENOMEM;
        r->unknown = u;
        char **w = realloc(r->unknown_why, (r->n_unknown + 1) * sizeof *w);
        if (!w) return -ENOMEM;
        r->unknown_why = w;
        u[r->n_unknown] = dp_strdup(uid);
        w[r->n_unknown] = dp_strdup(why);
        if (!u[r->n_unknown] || !w[r->n_unknown]) {
                dp_free_many(u[r->n_unknown], w[r->n_unknown]);
                return -ENOMEM;
        }
        r->n_unknown++;
        return 0;
}

/* A regular file, read up to max (-E2BIG beyond); never blocks on a FIFO. */
static int read_regular(int dfd, const char *name, size_t max, char **ret, size_t *ret_len) {
        _cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
        if (fd < 0) return -errno;
        struct stat st;
        if (fstat(fd, &st) < 0) return -errno;
        if (!S_ISREG(st.st_mode)) return -EBADF;
        dp_strbuf sb = DP_STRBUF_INIT;
        char buf[16384];
        for (;;) {
                ssize_t n = read(fd, buf, sizeof buf);
                if (n < 0 && errno == EINTR) continue;
                if (n < 0) {
                        int r = -errno;
                        dp_strbuf_done(&sb);
                        return r;
                }
                if (n == 0) break;
                if (sb.len + (size_t)n > max) {
                        dp_strbuf_done(&sb);
                        return -E2BIG;
                }
                dp_strbuf_append(&sb, buf, (size_t)n);
        }
        *ret_len = sb.len;
        dp_strbuf_putc(&sb, 0);
        if (dp_strbuf_failed(&sb)) {
                dp_strbuf_done(&sb);
                return -ENOMEM;
        }
        *ret = dp_strbuf_steal(&sb);
        return *ret ? 0 : -ENOMEM;
}

static void remove_temps(DIR *dir, const char *path, const char *kind, const char *ckpt_name, dp_dra_recovery *ret) {
        rewinddir(dir);
        for (struct dirent *de; (de = readdir(dir));) {
                if (!dp_dra_own_temp_file(kind, ckpt_name, de->d_name)) continue;
                struct stat st;
                if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode)) continue;
                if (unlinkat(dirfd(dir), de->d_name, 0) < 0) {
                        log_warning("%s/%s: cannot remove a temp file left by a crash: %s", path, de->d_name,
                                    strerror(errno));
                        continue;
                }
                log_info("%s/%s: removed a temp file left by a crash mid-write", path, de->d_name);
                ret->temps++;
        }
}

/* One spec of ours not in the checkpoint. */
static int one_spec(dp_dra_checkpoint *ckpt, const dp_dra_inventory *inv, DIR *dir, const char *path, const char *name,
                    const char *uid, bool rebuild, dp_dra_recovery *ret) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        dp_error e = DP_ERROR_INIT;
        dp_dra_prepared_claim c = {0};
        int r = read_regular(dirfd(dir), name, DP_DRA_CDI_SPEC_MAX, &buf, &len);
        if (r == -EBADF || r == -ELOOP) return 0; /* not a regular file: not one we wrote */
        if (r == -ENOMEM) return r;
        if (r < 0)
                dp_error_set(&e, r, "CDI spec %s: %s", name, r == -E2BIG ? "too large" : strerror(-r));
        else
                r = dp_dra_recover_claim(inv, name, buf, len, &c, NULL, &e);
        if (r == -ENOMEM) return r;
        if (r == -EXDEV) {
                log_warning("%s/%s: %s: not ours, left alone", path, name, dp_error_msg(&e));
                return 0;
        }
        if (r < 0) {
                log_error("%s/%s: %s; the devices of claim %s are unknown: handed to nobody until the claim is "
                          "prepared again or unprepared",
                          path, name, dp_error_msg(&e), uid);
                return add_unknown(ret, uid, dp_error_msg(&e));
        }
        if (!rebuild) {
                dp_dra_prepared_claim_done(&c);
                if (unlinkat(dirfd(dir), name, 0) < 0) {
                        log_warning("%s/%s: cannot remove an orphaned CDI spec: %s", path, name, strerror(errno));
                        return 0;
                }
                log_info("%s/%s: removed an orphaned CDI spec (claim %s: no checkpoint entry; its prepare never "
                         "completed)",
                         path, name, uid);
                ret->orphans++;
                return 0;
        }
        r = dp_dra_checkpoint_put(ckpt, &c);
        dp_dra_prepared_claim_done(&c);
        if (r == -E2BIG) return add_unknown(ret, uid, "more claims than the checkpoint holds");
        if (r < 0) return r;
        log_warning("%s/%s: claim %s recovered into the checkpoint (its devices held again; namespace, name and "
                    "requests come back with its next NodePrepareResources)",
                    path, name, uid);
        ret->recovered++;
        return 0;
}

int dp_dra_recover_dirs(dp_dra_checkpoint *ckpt, const dp_dra_inventory *inv, const char *cdi_dir,
                        const char *state_dir, const char *checkpoint_name, bool rebuild, dp_dra_recovery *ret,
                        dp_error *err) {
        assert_return(ckpt && inv && cdi_dir && state_dir && checkpoint_name && ret, -EINVAL);
        *ret = (dp_dra_recovery){0};
        DIR *sd = opendir(state_dir);
        if (!sd) return dp_error_errno(err, -errno, "%s", state_dir);
        remove_temps(sd, state_dir, NULL, checkpoint_name, ret);
        closedir(sd);
        DIR *cd = opendir(cdi_dir);
        if (!cd) return dp_error_errno(err, -errno, "%s", cdi_dir);
        remove_temps(cd, cdi_dir, inv->cdi_kind, NULL, ret);
        rewinddir(cd);
        int r = 0;
        for (struct dirent *de; r >= 0 && (de = readdir(cd));) {
                _cleanup_free_ char *uid = NULL;
                r = dp_dra_spec_file_uid(inv->cdi_kind, de->d_name, &uid);
                if (r <= 0) continue;
                if (dp_dra_checkpoint_find(ckpt, uid)) continue;
                r = one_spec(ckpt, inv, cd, cdi_dir, de->d_name, uid, rebuild, ret);
        }
        closedir(cd);
        if (r < 0) {
                dp_dra_recovery_done(ret);
                return dp_error_set(err, r, "out of memory");
        }
        return 0;
}
