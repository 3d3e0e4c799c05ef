/* SPDX-License-Identifier: Apache-2.0
 * Fuzz the DeviceProfile loader; a profile that loads is run through the V1
 * plan (all MIG strategies, time-slicing), Allocate and
 * GetPreferredAllocation, so whatever a profile can express is exercised. */
#include "devices/profile.h"
#include "devices/v1.h"

static void exercise(const dp_device_set *s, dp_agent_config *c) {
        dp_v1_plan *p = NULL;
        if (dp_v1_plan_build(s, c, &p, NULL) < 0) return;
        for (size_t i = 0; i < p->n_resources; i++) {
                const dp_v1_resource *r = &p->resources[i];
                size_t n = DP_MIN(r->n_devices, (size_t)8);
                const char *ids[8];
                for (size_t k = 0; k < n; k++)
                        ids[k] = r->devices[k].id;
                dp_v1_container_response *resp = NULL;
                if (n && dp_v1_allocate(p, s, c, r->name, ids, n, &resp, NULL) == 0)
                        dp_v1_container_response_free(resp);
                char **out = NULL;
                if (n && dp_v1_preferred_allocation(p, s, c, r->name, ids, n, ids, 1, (n + 1) / 2, &out, NULL) == 0)
                        dp_v1_ids_free(out);
        }
        dp_v1_plan_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        dp_device_set *s = NULL;
        dp_error err = DP_ERROR_INIT;
        if (dp_profile_load((const char *)data, size, "fuzz", "node-a", &s, &err) < 0) return 0;
        dp_agent_config *c = dp_agent_config_new_default();
        if (c) {
                c->device_list_strategy =
                        DP_DLS_ENVVAR | DP_DLS_VOLUME_MOUNTS | DP_DLS_CDI_ANNOTATIONS | DP_DLS_CDI_CRI;
                c->pass_device_specs = true;
                for (int m = DP_MIG_NONE; m <= DP_MIG_MIXED; m++) {
                        c->mig_strategy = (dp_mig_strategy)m;
                        c->device_id_strategy = m == DP_MIG_MIXED ? DP_ID_INDEX : DP_ID_UUID;
                        exercise(s, c);
                }
                dp_agent_config_free(c);
        }
        dp_device_set_free(s);
        return 0;
}
