/* SPDX-License-Identifier: Apache-2.0
 * What `devplane node` does with its files at start, and how it writes them:
 * one owner per plugin directory (a lock), the device-manager checkpoint read
 * or rebuilt from the other records when it is corrupt, missing or not a
 * regular file, pods whose holdings cannot be proven marked so that their
 * devices go to nobody, and state files that are not regular files set aside
 * as corrupt ones are. The rules are DESIGN.md's "Durable state and failing
 * closed"; docs/v1-node-path.md has the details. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/lockfile.h"
#include "base/log.h"
#include "devices/checkpoint.h"
#include "node/ckpt.h"
#include "node/dra-state.h"
#include "node/node-internal.h"

/* ---- files that are not regular files --------------------------------------- */

/* Not a regular file, nor a symlink to one: a directory, a FIFO, a device, a
 * dangling symlink. */
bool node_file_is_odd(const char *path) {
        struct stat st;
        if (lstat(path, &st) < 0) return false;
        return stat(path, &st) < 0 || !S_ISREG(st.st_mode);
}

int node_write_state(const char *dir, const char *name, const void *data, size_t len, mode_t mode, unsigned flags,
                     dp_error *err) {
        int r = dp_write_file_atomic(dir, name, data, len, mode, flags, err);
        if (r >= 0 || r == -ENOSPC || r == -EDQUOT || r == -ENOMEM) return r;
        /* rename(2) cannot replace a directory: set it aside, once */
        _cleanup_free_ char *path = dp_asprintf("%s/%s", dir, name);
        _cleanup_free_ char *to = NULL;
        struct stat st;
        if (!path || lstat(path, &st) < 0 || S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) return r;
        if (dp_file_set_aside(path, &to) < 0) return r;
        log_error("%s is not a regular file: set aside as %s", path, to);
        return dp_write_file_atomic(dir, name, data, len, mode, flags, err);
}

/* A state file read at start that is not a regular file is set aside (it is
 * damage, like corrupt content). true when it was. */
static bool set_aside_if_odd(const char *path, const char *what) {
        if (!node_file_is_odd(path)) return false;
        _cleanup_free_ char *to = NULL;
        int r = dp_file_set_aside(path, &to);
        if (r < 0)
                log_error("%s %s is not a regular file and cannot be set aside: %s", what, path, strerror(-r));
        else
                log_error("%s %s is not a regular file: set aside as %s and rebuilt", what, path, to);
        return r >= 0;
}

/* ---- the lock ------------------------------------------------------------------------ */

/* The lock file says "<pid>\n", and "served\n" after it once a node has
 * started in the directory (and served pods there, or could have): the
 * evidence that a missing checkpoint is lost state rather than a fresh node.
 * A node that fails to start does not add it, and keeps it when there. */
static void write_lock(dp_kubelet *n) {
        char buf[48];
        int k = snprintf(buf, sizeof buf, "%d\n%s", (int)getpid(), n->lock_existed ? "served\n" : "");
        if (ftruncate(n->lock_fd, 0) < 0 || pwrite(n->lock_fd, buf, (size_t)k, 0) != k)
                log_warning("%s/%s: cannot write: %m", n->plugin_dir, DP_NODE_LOCK_FILE);
}

int node_lock(dp_kubelet *n, dp_error *err) {
        _cleanup_free_ char *path = dp_asprintf("%s/%s", n->plugin_dir, DP_NODE_LOCK_FILE);
        if (!path) return dp_error_set(err, -ENOMEM, "out of memory");
        char old[64] = "";
        _cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        ssize_t k = fd >= 0 ? read(fd, old, sizeof old - 1) : -1;
        if (k > 0) old[k] = 0;
        pid_t holder = 0;
        int r = dp_lock_path(path, &n->lock_fd, &holder, err);
        if (r == -EBUSY)
                return dp_error_prefix(err,
                                       "another devplane node owns the plugin directory %s (its sockets, checkpoint "
                                       "and pods); refusing to start",
                                       n->plugin_dir);
        if (r < 0) return r;
        n->lock_existed = strstr(old, "served") != NULL;
        if (n->lock_existed) write_lock(n);
        return 0;
}

void node_mark_served(dp_kubelet *n) {
        if (n->lock_fd < 0 || n->lock_existed) return;
        n->lock_existed = true;
        write_lock(n);
}

/* ---- the checkpoint ------------------------------------------------------------------ */

static bool path_exists(const char *dir, const char *name) {
        _cleanup_free_ char *p = dp_asprintf("%s/%s", dir, name);
        struct stat st;
        return p && lstat(p, &st) == 0;
}

/* Has this plugin directory served pods before (a node started there, or
 * left a record)? Only a node with no prior state at all starts fresh when
 * its checkpoint is missing. */
static bool prior_state(const dp_kubelet *n) {
        return n->lock_existed || path_exists(n->plugin_dir, DP_NODE_STATUS_FILE) ||
               path_exists(n->plugin_dir, DP_NODE_DRA_STATE_FILE) ||
               path_exists(n->plugin_dir, DP_CHECKPOINT_FILE_NAME ".corrupt");
}

/* The node's status file into the (empty) ledger: what each container was
 * given. true when it could be read. */
static bool salvage_status(dp_kubelet *n, size_t *ret_n, dp_error *err) {
        _cleanup_free_ char *spath = dp_asprintf("%s/%s", n->plugin_dir, DP_NODE_STATUS_FILE);
        if (!spath) return false;
        (void)set_aside_if_odd(spath, "status file");
        _cleanup_free_ char *sbuf = NULL;
        size_t slen = 0;
        return dp_read_file(spath, DP_DOC_MAX_INPUT, &sbuf, &slen, err) >= 0 &&
               dp_node_status_salvage(n->dm, sbuf, slen, ret_n, err) >= 0;
}

/* A checkpoint that is corrupt, missing or not a regular file is never
 * trusted and never forgotten (DESIGN.md, "Durable state and failing
 * closed"): a damaged file is kept as <file>.corrupt, and the ledger is
 * rebuilt from every record of what running containers hold: the node's
 * status file (what each container was given, written before any pod is
 * Running), then what the damaged file still says (unverified) for
 * containers the status file does not list. When the status file cannot be
 * read either, the pods of the manifests are marked unproven once they are
 * read (node_mark_unproven): the devices they may hold go to nobody. The
 * kubelet instead starts empty, and may hand a running pod's devices to
 * another. */
static int rebuild(dp_kubelet *n, const char *path, const char *buf, size_t len, const char *state, const char *why,
                   bool set_aside) {
        _cleanup_free_ char *aside = NULL;
        int kept = set_aside ? dp_file_set_aside(path, &aside) : 0;
        dp_devmgr *fresh = dp_devmgr_new();
        if (!fresh) return -ENOMEM;
        dp_devmgr_free(n->dm);
        n->dm = fresh;
        size_t from_status = 0;
        dp_error se = DP_ERROR_INIT, e = DP_ERROR_INIT;
        bool from_st = salvage_status(n, &from_status, &se);
        size_t before = dp_devmgr_n_allocs(n->dm);
        bool from_file = buf && dp_node_checkpoint_salvage(n->dm, buf, len, &e) >= 0;
        size_t from_file_n = dp_devmgr_n_allocs(n->dm) - before;
        n->unproven_pending = !from_st;
        log_error("checkpoint %s is %s: %s; %s; ledger rebuilt from %s (%zu container device list(s)) and from "
                  "%s (%zu more allocation(s)): their devices stay held until their pods go%s",
                  path, state, why,
                  !set_aside  ? "nothing to keep"
                  : kept >= 0 ? "kept as <file>.corrupt"
                              : "could not keep a copy",
                  from_st ? DP_NODE_STATUS_FILE : "no readable status file", from_status,
                  from_file ? "the damaged file, unverified" : "nothing of the damaged file", from_file_n,
                  from_st ? "" : "; the devices of pods not listed there are withheld until those pods go");
        if (!from_st) log_error("status file: %s", dp_error_msg(&se));
        n->checkpoint_error = dp_asprintf("%s: %s (%s); rebuilt from %s and %s%s", path, state, why,
                                          from_file ? "the damaged file" : "-", from_st ? DP_NODE_STATUS_FILE : "-",
                                          from_st ? "" : "; devices pods may hold are withheld");
        return n->checkpoint_error ? 0 : -ENOMEM;
}

int node_load_checkpoint(dp_kubelet *n, dp_error *err) {
        _cleanup_free_ char *path = dp_asprintf("%s/%s", n->plugin_dir, DP_CHECKPOINT_FILE_NAME);
        _cleanup_free_ char *spath = dp_asprintf("%s/%s", n->plugin_dir, DP_NODE_STATUS_FILE);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        dp_error e = DP_ERROR_INIT;
        if (!path || !spath) return dp_error_set(err, -ENOMEM, "out of memory");
        int r = dp_read_file(path, DP_CHECKPOINT_MAX_INPUT, &buf, &len, &e);
        if (r == -ENOENT && !node_file_is_odd(path)) {
                if (!prior_state(n)) {
                        log_info("checkpoint %s: none, and no other state in %s: a fresh node", path, n->plugin_dir);
                        return 0;
                }
                r = rebuild(n, path, NULL, 0, "missing", "the node has served pods in this directory before", false);
                return r < 0 ? dp_error_set(err, r, "out of memory") : 0;
        }
        if (r == -ENOMEM) return dp_error_set(err, r, "%s", dp_error_msg(&e));
        /* Not a regular file (a directory, a symlink to a device, a dangling
         * or looping symlink) or too large: damage, handled as corrupt. */
        bool odd = r == -EISDIR || r == -EINVAL || r == -ELOOP || r == -ENOENT;
        if (r < 0 && !odd && r != -E2BIG)
                return dp_error_set(err, r, "checkpoint %s cannot be read (the node does not start without it): %s",
                                    path, dp_error_msg(&e));
        if (r >= 0) r = dp_node_checkpoint_load(n->dm, buf, len, &e);
        if (r == -ENOMEM) return dp_error_set(err, r, "%s", dp_error_msg(&e));
        if (r < 0) {
                r = rebuild(n, path, odd ? NULL : buf, len, odd ? "not a regular file" : "corrupt", dp_error_msg(&e),
                            true);
                return r < 0 ? dp_error_set(err, r, "out of memory") : 0;
        }
        (void)set_aside_if_odd(spath, "status file");
        log_info("checkpoint %s: %zu allocation(s) restored", path, dp_devmgr_n_allocs(n->dm));
        return 0;
}

/* ---- after the manifests are read ------------------------------------------------------ */

static size_t held_count(const dp_kubelet *n, const char *uid, const char *ctr, const char *res) {
        const dp_nm_alloc *a = dp_devmgr_alloc(n->dm, uid, ctr, res);
        const char **ids = NULL;
        size_t k = 0;
        if (!a || dp_nm_alloc_ids(a, &ids) < 0) return 0;
        while (ids[k])
                k++;
        free(ids);
        return k;
}

int node_mark_unproven(dp_kubelet *n) {
        if (!n->unproven_pending) return 0;
        n->unproven_pending = false;
        size_t marked = 0;
        for (size_t i = 0; i < n->n_pods; i++) {
                const dp_node_pod *p = n->pods[i]->pod;
                for (size_t c = 0; c < p->n_containers; c++)
                        for (size_t k = 0; k < p->containers[c].n_req; k++) {
                                const dp_node_request *rq = &p->containers[c].req[k];
                                if (held_count(n, p->uid, p->containers[c].name, rq->resource) >= rq->count) continue;
                                int r = dp_devmgr_mark_unproven(n->dm, p->uid, rq->resource, NULL, 0);
                                if (r < 0) return r;
                                log_error("pod %s/%s: its %s devices are not in any readable record; every %s device "
                                          "no record holds is withheld until the pod goes",
                                          p->ns, p->name, rq->resource, rq->resource);
                                marked++;
                        }
        }
        if (marked) log_error("%zu (pod, resource) holding(s) cannot be proven: see `devplane node status`", marked);
        return 0;
}

/* Does a manifest name pod uid? */
static bool pod_active(const dp_kubelet *n, const char *uid) {
        for (size_t j = 0; j < n->n_pods; j++)
                if (streq(n->pods[j]->pod->uid, uid)) return true;
        return false;
}

/* Allocations of pods that no manifest names any more are released, as the
 * kubelet releases devices of pods that are not active. */
void node_release_orphans(dp_kubelet *n) {
        for (size_t i = 0; i < dp_devmgr_n_allocs(n->dm);) {
                const dp_nm_alloc *a = dp_devmgr_alloc_at(n->dm, i);
                if (pod_active(n, a->pod_uid)) {
                        i++;
                        continue;
                }
                log_info("releasing devices of pod uid %s (no manifest names it)", a->pod_uid);
                _cleanup_free_ char *uid = strdup(a->pod_uid);
                if (!uid) return;
                dp_devmgr_release_pod(n->dm, uid);
        }
        for (size_t i = 0; i < dp_devmgr_n_unproven(n->dm);) {
                const dp_nm_unproven *u = dp_devmgr_unproven_at(n->dm, i);
                if (pod_active(n, u->pod_uid)) {
                        i++;
                        continue;
                }
                log_info("pod uid %s is gone: the %s devices withheld for it are free again", u->pod_uid, u->resource);
                _cleanup_free_ char *uid = strdup(u->pod_uid);
                if (!uid) return;
                dp_devmgr_release_pod(n->dm, uid);
        }
}
