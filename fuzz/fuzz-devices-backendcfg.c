/* SPDX-License-Identifier: Apache-2.0
 * Fuzz the BackendConfig loader (pci/devglob rules, health fault table) and
 * the DP_DISABLE/ENABLE_HEALTHCHECKS list parser: an input starting with
 * '!' is "<disable>\n<enable>" for dp_fault_table_apply_env; anything else
 * is a config document, which, when it loads, classifies every Xid and runs
 * the tracker's recovery over a few devices. */
#include <stdio.h>

#include "devices/backend.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size > 0 && data[0] == '!') {
                char buf[512];
                size_t n = DP_MIN(size - 1, sizeof buf - 1);
                memcpy(buf, data + 1, n);
                buf[n] = 0;
                char *enable = strchr(buf, '\n');
                if (enable) *enable++ = 0;
                dp_fault_table t;
                dp_fault_table_init(&t);
                (void)dp_fault_table_apply_env(&t, buf, enable, NULL);
                return 0;
        }
        dp_backend_config *c = NULL;
        if (dp_backend_config_load((const char *)data, size, "fuzz", &c, NULL) < 0) return 0;
        dp_fault_tracker tr = {0};
        char cls[DP_FAULT_CLASS_MAX];
        for (unsigned x = 0; x <= DP_FAULT_XID_MAX + 1; x++)
                if (dp_fault_table_classify(&c->faults, DP_FAULT_XID, x, cls) == DP_FAULT_UNHEALTHY) {
                        char dev[32];
                        snprintf(dev, sizeof dev, "gpu-%u", x % 8);
                        (void)dp_fault_tracker_raise(&tr, dev, cls, x % 5 == 0, x);
                }
        (void)dp_fault_tracker_next_expiry(&tr, c->faults.recover_after_usec);
        (void)dp_fault_tracker_expire(&tr, UINT64_MAX / 2, c->faults.recover_after_usec);
        dp_fault_tracker_done(&tr);
        dp_backend_config_free(c);
        return 0;
}
