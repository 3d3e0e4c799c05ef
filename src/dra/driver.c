/* SPDX-License-Identifier: Apache-2.0
 * driver.c — prepare/unprepare with checkpoint, files and ledger (contract
 * in driver.h). */
#include <stdio.h>

#include "dra/driver.h"

static const char *ckpt_name(const dp_dra_node_dirs *d) {
        return d->checkpoint_name ? d->checkpoint_name : DP_DRA_CHECKPOINT_NAME;
}

static char *holder_of(const dp_dra_prepared_claim *c) {
        return dp_asprintf("claim %s/%s (%s)", c->namespace ? c->namespace : "", c->name ? c->name : "",
                           c->uid ? c->uid : "");
}

static bool admin_for(const dp_resource_claim *claim, const dp_dra_prepared_device *d) {
        const dp_allocation_result *a = claim->allocation;
        for (size_t i = 0; a && i < a->n_results; i++)
                if (streq_ptr(a->results[i].pool, d->pool) && streq_ptr(a->results[i].device, d->device) &&
                    a->results[i].has_admin_access && a->results[i].admin_access)
                        return true;
        return false;
}

static int hold(dp_ledger *l, const dp_resource_claim *claim, const dp_dra_prepared_claim *c, const char *holder,
                dp_error *err) {
        for (size_t i = 0; i < c->n_devices; i++) {
                const dp_dra_prepared_device *d = &c->devices[i];
                unsigned flags = (d->share_id ? DP_LEDGER_SHARED : 0) | (admin_for(claim, d) ? DP_LEDGER_ADMIN : 0);
                const char *v[] = {d->device};
                int r = dp_ledger_acquire(l, DP_LEDGER_V2, holder, v, 1, flags, err);
                if (r < 0) {
                        dp_ledger_release(l, holder);
                        return r;
                }
        }
        return 0;
}

int dp_dra_node_prepare(dp_dra_checkpoint *ckpt, dp_ledger *ledger, const dp_dra_prepare_input *in,
                        const dp_resource_claim *claim, const dp_dra_node_dirs *dirs, dp_dra_prepared_claim *ret,
                        dp_error *err) {
        assert_return(ckpt && in && claim && dirs && dirs->cdi_dir && dirs->state_dir && ret, -EINVAL);
        const dp_dra_prepared_claim *saved = dp_dra_checkpoint_find(ckpt, claim->meta.uid);
        if (saved) {
                int r = dp_dra_prepared_claim_copy(ret, saved);
                return r < 0 ? dp_error_set(err, r, "out of memory") : 0;
        }
        dp_dra_prepare_input x = *in;
        x.metadata_dir = dirs->metadata_dir;
        dp_dra_prepare_output out;
        int r = dp_dra_prepare(&x, claim, &out, err);
        if (r < 0) return r;
        _cleanup_free_ char *holder = holder_of(&out.claim);
        if (!holder) {
                dp_dra_prepare_output_done(&out);
                return dp_error_set(err, -ENOMEM, "out of memory");
        }
        if (ledger && (r = hold(ledger, claim, &out.claim, holder, err)) < 0) goto fail;
        if ((r = dp_dra_prepare_output_write(&out, dirs->cdi_dir, dirs->metadata_dir, err)) < 0) goto undo_files;
        if ((r = dp_dra_checkpoint_put(ckpt, &out.claim)) < 0) {
                dp_error_set(err, r, "checkpoint: %s", r == -E2BIG ? "too many claims" : "out of memory");
                goto undo_files;
        }
        if ((r = dp_dra_checkpoint_save(ckpt, dirs->state_dir, ckpt_name(dirs), err)) < 0) {
                dp_dra_checkpoint_remove(ckpt, out.claim.uid, NULL);
                goto undo_files;
        }
        if ((r = dp_dra_prepared_claim_copy(ret, &out.claim)) < 0) {
                /* prepared and saved: the next call answers from the checkpoint */
                dp_error_set(err, r, "out of memory");
                dp_dra_prepare_output_done(&out);
                return r;
        }
        dp_dra_prepare_output_done(&out);
        return 1;

undo_files:
        dp_dra_unprepare_files(&out.claim, dirs->cdi_dir, dirs->metadata_dir, NULL);
        if (ledger) dp_ledger_release(ledger, holder);
fail:
        dp_dra_prepare_output_done(&out);
        return r;
}

int dp_dra_node_unprepare(dp_dra_checkpoint *ckpt, dp_ledger *ledger, const char *uid, const dp_dra_node_dirs *dirs,
                          dp_error *err) {
        assert_return(ckpt && uid && dirs && dirs->cdi_dir && dirs->state_dir, -EINVAL);
        dp_dra_prepared_claim *c = dp_dra_checkpoint_find(ckpt, uid);
        if (!c) return 0;
        _cleanup_free_ char *holder = holder_of(c);
        if (!holder) return dp_error_set(err, -ENOMEM, "out of memory");
        int r = dp_dra_unprepare_files(c, dirs->cdi_dir, dirs->metadata_dir, err);
        if (r < 0) return r;
        dp_dra_prepared_claim *gone = NULL;
        r = dp_dra_checkpoint_remove(ckpt, uid, &gone);
        if (r < 0) return dp_error_set(err, r, "out of memory");
        r = dp_dra_checkpoint_save(ckpt, dirs->state_dir, ckpt_name(dirs), err);
        if (r < 0) {
                /* keep the entry (and the holds) so a retry finds them */
                int q = dp_dra_checkpoint_put(ckpt, gone);
                dp_dra_prepared_claim_free(gone);
                return q < 0 ? q : r;
        }
        dp_dra_prepared_claim_free(gone);
        if (ledger) dp_ledger_release(ledger, holder);
        return 1;
}
