/* SPDX-License-Identifier: Apache-2.0
 * Fuzz the path of `devplane allocate` after the model: objects decoded and
 * validated from YAML, the adapter (CEL compile and evaluation, taint rules,
 * existing allocations), the allocator and the printers. Nothing may crash or
 * leak; a run that succeeds must print. */
#include "alloc/adapter.h"
#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size > 64 * 1024) return 0;
        dp_object_list *objs = dp_object_list_new();
        if (!objs) return 0;
        dp_error err = DP_ERROR_INIT;
        if (dp_model_decode_buffer((const char *)data, size, "fuzz", objs, &err) == 0 &&
            dp_model_validate(objs, &err) == 0) {
                dp_alloc_run *run = NULL;
                /* a small budget: slow shapes end as -ETIME instead of a fuzzer
                 * timeout; odd sizes run with DRADeviceCompatibilityGroups off,
                 * every other pair of sizes with DRAListTypeAttributes on */
                dp_alloc_cluster_options o = {.compat_groups_off = size & 1, .list_type_attributes = (size >> 1) & 1};
                if (dp_alloc_run_claims_opts(objs, NULL, 200000, &o, &run, &err) == 0) {
                        dp_strbuf out = DP_STRBUF_INIT, why = DP_STRBUF_INIT;
                        if (dp_alloc_run_print(run, DP_ALLOC_OUTPUT_YAML, &out, &why) == 0 && run->n && !out.len)
                                __builtin_trap();
                        dp_strbuf_done(&out);
                        dp_strbuf_done(&why);
                        dp_alloc_run_free(run);
                }
        }
        dp_object_list_free(objs);
        return 0;
}
