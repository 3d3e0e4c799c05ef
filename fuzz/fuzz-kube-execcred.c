/* SPDX-License-Identifier: Apache-2.0
 * libFuzzer: an exec credential plugin's output (kube/exec-cred.c,
 * dp_kube_exec_decode), an RFC 3339 time, and the escaping of what a person
 * reads (base/escape.c): 0 or a negative errno with a message; a decoded
 * credential has a token or a certificate and key; escaped text holds no
 * control, bidi control or byte that is not UTF-8. */
#include "base/escape.h"
#include "kube/kube.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        dp_kube_credential c;
        dp_error e = DP_ERROR_INIT;
        int r = dp_kube_exec_decode((const char *)data, size, "client.authentication.k8s.io/v1", "fuzz", &c, &e);
        if (r < 0 && r != -ENOMEM && !e.msg[0]) __builtin_trap();
        if (r >= 0) {
                if (!c.token && !(c.cert_data && c.key_data)) __builtin_trap();
                if (!dp_escape_is_safe(e.msg, strlen(e.msg), 0)) __builtin_trap();
                dp_kube_credential_done(&c);
        } else if (r == -EINVAL && !dp_escape_is_safe(e.msg, strlen(e.msg), 0)) {
                __builtin_trap(); /* messages quote the output escaped */
        }
        char *s = strndup((const char *)data, size);
        if (s) {
                int64_t t;
                (void)dp_kube_parse_time(s, &t);
                free(s);
        }
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_escape_append(&sb, (const char *)data, size, 0);
        if (!dp_strbuf_failed(&sb) && !dp_escape_is_safe(dp_strbuf_str(&sb), sb.len, 0)) __builtin_trap();
        dp_strbuf_done(&sb);
        return 0;
}
