/* SPDX-License-Identifier: Apache-2.0
 * fuzz-sched-schedconfig — the KubeSchedulerConfiguration reader of
 * --scheduler-config (sched/score-config.c): every input is either read,
 * with each profile's weights and shape within upstream's bounds, or refused
 * with a message. */
#include <assert.h>

#include "sched/score.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size > 64 * 1024) return 0;
        dp_score_config *c = NULL;
        dp_error err = DP_ERROR_INIT;
        if (dp_score_config_parse((const char *)data, size, "fuzz.yaml", &c, &err) < 0) {
                assert(err.msg[0]);
                assert(!c);
                return 0;
        }
        assert(c->n_profiles >= 1);
        for (size_t i = 0; i < c->n_profiles; i++) {
                const dp_score_profile *p = &c->profiles[i];
                assert(p->n_fit <= DP_SCORE_RESOURCES_MAX && p->n_balanced <= DP_SCORE_RESOURCES_MAX);
                assert(p->n_shape <= DP_SCORE_SHAPE_MAX);
                for (size_t k = 1; k < p->n_shape; k++)
                        assert(p->shape[k].utilization > p->shape[k - 1].utilization);
                for (int k = 0; k < DP_PLUGIN_N; k++)
                        assert(p->weight[k] >= 0);
                assert(dp_score_config_profile(c, p->scheduler_name) != NULL);
        }
        dp_score_config_free(c);
        return 0;
}
