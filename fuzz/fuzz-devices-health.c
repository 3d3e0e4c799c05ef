/* SPDX-License-Identifier: Apache-2.0
 * Fuzz the health override file: parse, apply to a100-mixed, and rewrite
 * it with dp_health_file_set (the result must parse again). */
#include <stdio.h>

#include "devices/health.h"
#include "devices/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        dp_health_file *f = NULL;
        if (dp_health_file_parse((const char *)data, size, "fuzz", &f, NULL) == 0) {
                dp_device_set *s = NULL;
                if (dp_profile_builtin("a100-mixed", "node-a", &s, NULL) == 0) {
                        (void)dp_health_apply(s, f, "fuzz", NULL);
                        dp_device_set_free(s);
                }
                dp_strbuf out = DP_STRBUF_INIT;
                if (dp_health_file_set((const char *)data, size, "gpu-3", DP_HEALTH_UNHEALTHY, &out, NULL) == 0) {
                        dp_health_file *g = NULL;
                        if (dp_health_file_parse(out.buf, out.len, "fuzz2", &g, NULL) < 0 &&
                            out.len <= DP_HEALTH_FILE_MAX) {
                                fprintf(stderr, "rewritten file does not parse:\n%s\n", out.buf);
                                abort();
                        }
                        dp_health_file_free(g);
                }
                dp_strbuf_done(&out);
                dp_health_file_free(f);
        }
        return 0;
}
