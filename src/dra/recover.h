/* SPDX-License-Identifier: Apache-2.0
 *
 * recover.h — what the driver can learn again from the files it wrote, when
 * its checkpoint cannot be trusted (corrupt, bad checksum), and which files
 * in its directories are provably its own.
 *
 * A CDI spec the driver wrote for a claim (prepare.h, cdi.h) is named
 * "<vendor>-<class>_<claim uid>.json" after the inventory's CDI kind, has
 * that kind, one CDI device "<uid>-<device>" per allocated device and
 * spec-level env DRA_RESOURCE_DRIVER_NAME=<driver> and
 * KUBERNETES_NODE_NAME=<node>. From such a spec comes back a prepared claim
 * that holds the same devices: uid, devices (pool = the inventory's pool,
 * the CDI ids, the shareID from a device's *_SHARE_ID env), the spec file
 * name, and whether it was admin access (DRA_ADMIN_ACCESS=true). What the
 * spec does not say stays empty: namespace, name, the request names and
 * the metadata files; the claim's next NodePrepareResources fills them
 * (agent/dra.c). A spec of another kind, driver or node is not ours.
 *
 * Temporary files: dp_write_file_atomic writes "<dir>/.<name>.XXXXXX"
 * (six characters from mkstemp) and renames it; one left behind is a
 * crash mid-write. Ours are those whose <name> is one of our spec names
 * or the checkpoint's name.
 *
 * Pure: names and bytes in, structs out (the directory walk is the
 * daemon's).
 */
#pragma once

#include "dra/cdi.h"
#include "dra/inventory.h"
#include "dra/prepared.h"

/* 1 and *ret_uid (malloc'd) when `name` is a spec file name of ours for
 * the CDI kind; 0 when not; -ENOMEM. */
int dp_dra_spec_file_uid(const char *cdi_kind, const char *name, char **ret_uid);
/* Whether `name` is a temp file of an atomic write of one of our spec files
 * (for cdi_kind) or of `checkpoint_name` (NULL: not checked). */
bool dp_dra_own_temp_file(const char *cdi_kind, const char *checkpoint_name, const char *name);
/* Rebuild the prepared claim of the spec `file` (its name in the CDI
 * directory) from its bytes. 0 and *ret filled (free with
 * dp_dra_prepared_claim_done); -EXDEV (a well-formed spec of another kind,
 * driver or node: not ours); -EBADMSG (err says why: not JSON, a device not
 * of this claim, a device the inventory does not have); -E2BIG (more than
 * DP_DRA_MAX_RESULTS devices); -ENOMEM.
 * ret_admin may be NULL. */
int dp_dra_recover_claim(const dp_dra_inventory *inv, const char *file, const char *buf, size_t len,
                         dp_dra_prepared_claim *ret, bool *ret_admin, dp_error *err);

/* ---- at start: the daemon's directories (recover-io.c, the only I/O here) ---- */

typedef struct dp_dra_recovery {
        size_t recovered; /* claims rebuilt from their specs into the checkpoint */
        size_t orphans;   /* specs of ours no checkpoint entry names, removed */
        size_t temps;     /* temp files of ours removed */
        char **unknown;   /* uids whose spec is ours by name but unreadable */
        char **unknown_why;
        size_t n_unknown;
} dp_dra_recovery;

void dp_dra_recovery_done(dp_dra_recovery *r);

/* Walk dirs->cdi_dir and dirs->state_dir once, at start, before serving:
 *   - our temp files (dp_dra_own_temp_file) are removed;
 *   - rebuild (the checkpoint was corrupt or missing): each spec of ours
 *     whose uid the checkpoint lacks is recovered into it
 *     (dp_dra_recover_claim);
 *   - otherwise (the checkpoint is trusted) such a spec is an orphan of a
 *     prepare that never completed, and is removed if it recovers (it is
 *     provably ours);
 *   - either way, a spec named like ours that cannot be read or recovered
 *     (-EBADMSG, too big) goes to ret->unknown: its devices are unknown and
 *     the caller hands them to nobody (our writes are atomic, so such a file
 *     is damage, not a crash); a well-formed one of another driver or node
 *     (-EXDEV) is left alone.
 * Only regular files are read (a FIFO named like a spec is not ours). Each
 * action is logged. 0, or -ENOMEM / the error of opening a directory. */
int dp_dra_recover_dirs(dp_dra_checkpoint *ckpt, const dp_dra_inventory *inv, const char *cdi_dir,
                        const char *state_dir, const char *checkpoint_name, bool rebuild, dp_dra_recovery *ret,
                        dp_error *err);
