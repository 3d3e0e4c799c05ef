/* SPDX-License-Identifier: Apache-2.0
 * Fuzz the CEL pipeline: parse, check and evaluate any input as a DRA
 * selector against a fixed device, with the estimated-cost check on and
 * off. Any outcome but a crash, a sanitizer report or a leak is fine. */
#include "cel/cel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size > DP_CEL_MAX_EXPR_LEN + 16) return 0;
        char *expr = malloc(size + 1);
        if (!expr) return 0;
        memcpy(expr, data, size);
        expr[size] = 0;

        static const int64_t ints[] = {1, 2, 3};
        static const char *const strs[] = {"a", "b"};
        dp_cel_attribute attrs[] = {
                {NULL, "model", {.type = DP_CEL_ATTR_STRING, .s = "A100-SXM4-80GB"}},
                {NULL, "index", {.type = DP_CEL_ATTR_INT, .i = 3}},
                {NULL, "healthy", {.type = DP_CEL_ATTR_BOOL, .b = true}},
                {NULL, "driverVersion", {.type = DP_CEL_ATTR_VERSION, .s = "550.54.15"}},
                {"gpu.example.com", "cc", {.type = DP_CEL_ATTR_VERSION, .s = "8.0.0"}},
                {NULL, "other.example.com/ints", {.type = DP_CEL_ATTR_INTS, .ints = ints, .n = 3}},
                {NULL, "strs", {.type = DP_CEL_ATTR_STRINGS, .strs = strs, .n = 2}},
        };
        dp_cel_capacity caps[1];
        caps[0].domain = NULL;
        caps[0].name = "memory";
        caps[0].value = dp_quantity_from_int(80LL << 30, DP_QUANTITY_BINARY_SI);
        dp_cel_device dev = {"gpu.example.com", attrs, ELEMENTSOF(attrs), caps, 1, true};

        for (int variant = 0; variant < 2; variant++) {
                dp_cel_options o;
                dp_cel_options_init(&o);
                o.list_type_attributes = variant == 1;
                o.check_estimated_cost = variant == 1;
                dp_cel_program *p = NULL;
                dp_error err = DP_ERROR_INIT;
                if (dp_cel_compile(expr, &o, &p, &err) < 0) continue;
                dp_cel_result res;
                /* list-valued attributes only where the gate is on (else every evaluation fails) */
                dev.n_attributes = variant == 1 ? ELEMENTSOF(attrs) : ELEMENTSOF(attrs) - 2;
                (void)dp_cel_eval(p, &dev, &res, &err);
                dp_cel_program_free(p);
        }
        free(expr);
        return 0;
}
