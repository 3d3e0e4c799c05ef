/* SPDX-License-Identifier: Apache-2.0
 *
 * driver.h — one call per claim for the daemon's NodePrepareResources and
 * NodeUnprepareResources: prepare.h + the checkpoint + the files + the
 * ledger, in the order that keeps them consistent. This file does I/O
 * (through files.c); the decisions stay in the pure functions it calls.
 *
 * Prepare (idempotent across calls and restarts):
 *   1. the claim's uid is in the checkpoint: its saved result is returned
 *      and nothing is written (the example driver's rule);
 *   2. else dp_dra_prepare(); ledger holds for every device (holder
 *      "claim <ns>/<name> (<uid>)"; DP_LEDGER_SHARED with a shareID,
 *      DP_LEDGER_ADMIN with admin access); metadata files and CDI spec
 *      written atomically; the claim put into the checkpoint and the
 *      checkpoint saved. A failure at any step undoes the earlier ones
 *      (files removed, holds released, checkpoint unchanged), so a retry
 *      starts clean.
 * Unprepare: files removed, holds released, entry dropped, checkpoint saved;
 * a claim the checkpoint does not know is a success (already unprepared).
 */
#pragma once

#include "dra/ledger.h"
#include "dra/prepare.h"

#define DP_DRA_CHECKPOINT_NAME "checkpoint.json"

typedef struct dp_dra_node_dirs {
        const char *cdi_dir;         /* --cdi-dir (default /var/run/cdi) */
        const char *metadata_dir;    /* host directory of KEP-5304 files; NULL: none */
        const char *state_dir;       /* where the checkpoint lives (<plugins-dir>/<driver>) */
        const char *checkpoint_name; /* NULL: DP_DRA_CHECKPOINT_NAME */
} dp_dra_node_dirs;

/* in->metadata_dir is taken from dirs. ledger may be NULL. On success *ret
 * holds a copy of the prepared claim (free with dp_dra_prepared_claim_done)
 * and the return value is 1 when this call prepared it, 0 when it came from
 * the checkpoint. Errors: those of dp_dra_prepare (per-claim, -EINVAL),
 * -EBUSY from the ledger, I/O errors, -ENOMEM; err says which. */
int dp_dra_node_prepare(dp_dra_checkpoint *ckpt, dp_ledger *ledger, const dp_dra_prepare_input *in,
                        const dp_resource_claim *claim, const dp_dra_node_dirs *dirs, dp_dra_prepared_claim *ret,
                        dp_error *err);
/* 1 when something was unprepared, 0 when the claim was unknown. */
int dp_dra_node_unprepare(dp_dra_checkpoint *ckpt, dp_ledger *ledger, const char *uid, const dp_dra_node_dirs *dirs,
                          dp_error *err);
