/* SPDX-License-Identifier: Apache-2.0
 * Fuzz quantity parsing. Properties: no crash; a parsed value prints a
 * canonical form that parses back to the same value and prints identically;
 * add/sub/cmp agree with each other. */
#include <stdio.h>

#include "model/quantity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char s[DP_QUANTITY_MAX_LEN * 2 + 2];
        if (size > sizeof(s) - 1) size = sizeof(s) - 1;
        memcpy(s, data, size);
        s[size] = 0;
        /* two quantities separated by a space, when there is one */
        char *second = strchr(s, ' ');
        if (second) *second++ = 0;

        dp_quantity a, b, r, back;
        dp_error err = DP_ERROR_INIT;
        if (dp_quantity_parse(s, &a, &err) < 0) {
                if (!err.msg[0]) __builtin_trap();
                return 0;
        }
        char buf[DP_QUANTITY_MAX_LEN], buf2[DP_QUANTITY_MAX_LEN];
        dp_quantity_format(&a, buf, sizeof(buf));
        if (dp_quantity_parse(buf, &back, NULL) < 0 || back.nanos != a.nanos) __builtin_trap();
        dp_quantity_format(&back, buf2, sizeof(buf2));
        if (strcmp(buf, buf2) != 0) __builtin_trap();
        (void)dp_quantity_value(&a);
        (void)dp_quantity_milli_value(&a);
        (void)dp_quantity_as_double(&a);

        if (second && dp_quantity_parse(second, &b, NULL) == 0) {
                if (dp_quantity_add(&a, &b, &r) == 0) {
                        dp_quantity d;
                        if (dp_quantity_sub(&r, &b, &d) < 0 || dp_quantity_cmp(&d, &a) != 0) __builtin_trap();
                        dp_quantity_format(&r, buf, sizeof(buf));
                }
                int c = dp_quantity_cmp(&a, &b);
                if (dp_quantity_sub(&a, &b, &r) == 0) {
                        int sign = r.nanos < 0 ? -1 : r.nanos > 0;
                        if (sign != c) __builtin_trap();
                }
        }
        return 0;
}
