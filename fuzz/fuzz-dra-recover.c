/* SPDX-License-Identifier: Apache-2.0
 * Fuzz the recovery of a prepared claim from a CDI spec (dra/recover.h),
 * against the example-gpu inventory: every refusal explains itself, and a
 * recovered claim names only inventory devices, each with one CDI id. */
#include <stdio.h>

#include "dra/recover.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static dp_dra_inventory *inv;
        if (!inv) {
                struct dp_device_set *set = NULL;
                dp_error e = DP_ERROR_INIT;
                if (dp_dra_device_set_load("example-gpu", "node-a", &set, &e) < 0 ||
                    dp_dra_inventory_build(set, NULL, &inv, &e) < 0)
                        abort();
                dp_dra_device_set_free(set);
        }
        dp_dra_prepared_claim c;
        dp_error err = DP_ERROR_INIT;
        bool admin = false;
        int r = dp_dra_recover_claim(inv, "k8s.gpu.example.com-gpu_uid-1.json", (const char *)data, size, &c, &admin,
                                     &err);
        if (r < 0) {
                if (!err.msg[0]) abort();
                return 0;
        }
        for (size_t i = 0; i < c.n_devices; i++) {
                bool known = false;
                for (size_t k = 0; k < inv->n_devices; k++)
                        known |= streq(inv->devices[k].name, c.devices[i].device);
                if (!known || c.devices[i].n_cdi_ids != 1) abort();
        }
        dp_dra_prepared_claim_done(&c);
        return 0;
}
