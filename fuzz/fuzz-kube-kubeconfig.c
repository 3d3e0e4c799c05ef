/* SPDX-License-Identifier: Apache-2.0
 * libFuzzer: kubeconfig parsing (kube/kubeconfig.c), with and without an
 * explicit context, exec plugins refused and accepted, must return 0 or a
 * negative errno with a message; an accepted exec has a command. */
#include "kube/kube.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        for (int k = 0; k < 4; k++) {
                dp_kube_config *c = NULL;
                dp_error e = DP_ERROR_INIT;
                int r = dp_kube_config_parse_flags((const char *)data, size, "fuzz/kc.yaml", k & 1 ? "ctx" : NULL,
                                                   k & 2 ? DP_KUBE_CONFIG_EXEC : 0, &c, &e);
                if (r < 0 && r != -ENOMEM && !e.msg[0]) __builtin_trap();
                if (r >= 0 && (!c || !c->server)) __builtin_trap();
                if (r >= 0 && c->exec && (!(k & 2) || !c->exec->command || !c->exec->args[0])) __builtin_trap();
                dp_kube_config_free(c);
        }
        char *out = NULL;
        size_t n = 0;
        if (dp_kube_base64_decode((const char *)data, size, &out, &n) == 0) {
                if (n > size) __builtin_trap();
                free(out);
        }
        return 0;
}
