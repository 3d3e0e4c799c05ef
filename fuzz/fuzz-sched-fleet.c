/* SPDX-License-Identifier: Apache-2.0
 * fuzz-sched-fleet — simulate's input reader (Fleet, Timeline, and the
 * Kubernetes objects beside them), then one simulated run of what it
 * accepted and its report (the units of Node objects: time-slicing and MIG
 * read from their labels), small fleets only so each input stays fast. */
#include <stdio.h>

#include "sched/sim-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size > 64 * 1024) return 0;
        dp_sim_input *in = NULL;
        dp_error err = DP_ERROR_INIT;
        if (dp_sim_load_buffer((const char *)data, size, "fuzz.yaml", &in, &err) < 0) {
                assert(err.msg[0]);
                return 0;
        }
        size_t nodes = 0;
        for (size_t i = 0; i < in->n_groups; i++)
                nodes += (size_t)in->groups[i].count;
        if (nodes <= 8 && in->n_events <= 64 && in->objs->n <= 64) {
                sim_run *r = NULL;
                if (sim_run_new(in, 0, &r, &err) >= 0) sim_run_free(r);
                dp_strbuf out = DP_STRBUF_INIT;
                (void)dp_sim_report(in, DP_SIM_OUT_JSON, &out, NULL, &err);
                dp_strbuf_done(&out);
        }
        dp_sim_input_free(in);
        return 0;
}
