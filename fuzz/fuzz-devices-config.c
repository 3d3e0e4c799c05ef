/* SPDX-License-Identifier: Apache-2.0
 * Fuzz the agent config loader; a config that loads is checked against the
 * a100-mixed profile and, if it fits, planned and allocated from. */
#include "devices/profile.h"
#include "devices/v1.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        dp_agent_config *c = NULL;
        if (dp_agent_config_load((const char *)data, size, "fuzz", &c, NULL) < 0) return 0;
        /* NVIDIA's flags and environment over it, as the agent applies them. */
        static const dp_config_override ov[] = {{"device-list-strategy", "envvar,cdi-cri", "DEVICE_LIST_STRATEGY"},
                                                {"mps-root", "/run/nvidia/mps", "MPS_ROOT"}};
        if (size && data[0] % 2 && dp_agent_config_apply(c, ov, 2, NULL) < 0) {
                dp_agent_config_free(c);
                return 0;
        }
        dp_device_set *s = NULL;
        if (dp_profile_builtin("a100-mixed", "node-a", &s, NULL) == 0) {
                dp_v1_plan *p = NULL;
                if (dp_v1_plan_build(s, c, &p, NULL) == 0) {
                        for (size_t i = 0; i < p->n_resources; i++) {
                                const dp_v1_resource *r = &p->resources[i];
                                const char *ids[3];
                                size_t n = DP_MIN(r->n_devices, (size_t)3);
                                for (size_t k = 0; k < n; k++)
                                        ids[k] = r->devices[r->n_devices - 1 - k].id;
                                dp_v1_container_response *resp = NULL;
                                if (n && dp_v1_allocate(p, s, c, r->name, ids, n, &resp, NULL) == 0)
                                        dp_v1_container_response_free(resp);
                                char **out = NULL;
                                if (n &&
                                    dp_v1_preferred_allocation(p, s, c, r->name, ids, n, NULL, 0, n, &out, NULL) == 0)
                                        dp_v1_ids_free(out);
                        }
                        dp_v1_plan_free(p);
                }
                dp_device_set_free(s);
        }
        dp_agent_config_free(c);
        return 0;
}
