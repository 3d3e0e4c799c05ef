/* SPDX-License-Identifier: Apache-2.0
 *
 * cel.h — CEL for DRA device selectors (the Kubernetes `device` environment).
 *
 * Compile once per distinct expression, evaluate many times:
 *
 *     dp_cel_program *p = NULL;
 *     dp_error err = DP_ERROR_INIT;
 *     if (dp_cel_compile("device.driver == 'gpu.example.com'", NULL, &p, &err) < 0)
 *             puts(err.msg);             // "ERROR: <input>:1:14: ..." (column 1-based)
 *     dp_cel_result res;
 *     if (dp_cel_eval(p, &device, &res, &err) < 0)
 *             puts(err.msg);             // runtime error: fails the whole allocation upstream
 *     else if (res.matches) ...
 *     p = dp_cel_program_free(p);
 *
 * Contracts:
 *   - A program is immutable after dp_cel_compile(); dp_cel_eval() only reads
 *     it, so one program may be evaluated concurrently from several threads and
 *     against any number of devices. A selector's result depends only on
 *     (program, device), so callers may cache it per (expression, device).
 *   - The device is read, never kept: it must stay valid during the call only.
 *   - Limits mirror Kubernetes: expressions longer than DP_CEL_MAX_EXPR_LEN
 *     bytes are refused without compiling (-E2BIG); parser nesting is capped
 *     at DP_CEL_MAX_DEPTH; estimated cost above the cost limit is refused at
 *     compile time when opts->check_estimated_cost is set (API validation
 *     does that; the scheduler does not); the runtime cost limit stops an
 *     evaluation with "operation cancelled: actual cost limit exceeded" (-E2BIG).
 *   - Errors: dp_cel_compile() returns -EINVAL (syntax or type error, message
 *     "ERROR: <input>:LINE:COL: text" per error, lines joined by '\n'), -E2BIG
 *     (a limit), -ENOMEM. dp_cel_eval() returns 0 and fills *ret, or -EINVAL
 *     with the runtime error text (e.g. "no such key: model"), -E2BIG when the
 *     runtime cost limit is exceeded, -ENOMEM.
 */
#pragma once

#include "base/error.h"
#include "model/quantity.h"

#define DP_CEL_MAX_EXPR_LEN (10 * 1024)  /* api CELSelectorExpressionMaxLength */
#define DP_CEL_MAX_COST 1000000ULL       /* api CELSelectorExpressionMaxCost */
#define DP_CEL_MAX_DEPTH 250             /* cel-go parser recursion limit */

/* Typed attribute values, as a ResourceSlice carries them. */
typedef enum {
        DP_CEL_ATTR_INT = 0,
        DP_CEL_ATTR_BOOL,
        DP_CEL_ATTR_STRING,
        DP_CEL_ATTR_VERSION,  /* semver text; a parse failure is a runtime error */
        /* List-typed attributes (DRAListTypeAttributes, alpha): `n` entries. */
        DP_CEL_ATTR_INTS,
        DP_CEL_ATTR_BOOLS,
        DP_CEL_ATTR_STRINGS,
        DP_CEL_ATTR_VERSIONS,
} dp_cel_attr_type;

typedef struct dp_cel_attr_value {
        dp_cel_attr_type type;
        int64_t i;                  /* INT */
        bool b;                     /* BOOL */
        const char *s;              /* STRING, VERSION */
        const int64_t *ints;        /* INTS */
        const bool *bools;          /* BOOLS */
        const char *const *strs;    /* STRINGS, VERSIONS */
        size_t n;                   /* entries of the list forms */
} dp_cel_attr_value;

/* A device attribute. `domain` NULL means `name` is the name as written in
 * the ResourceSlice: split on its first '/', and a name without '/' belongs
 * to the driver's domain (Kubernetes' DeviceMatches). */
typedef struct dp_cel_attribute {
        const char *domain;
        const char *name;
        dp_cel_attr_value value;
} dp_cel_attribute;

typedef struct dp_cel_capacity {
        const char *domain; /* same rule as dp_cel_attribute.domain */
        const char *name;
        dp_quantity value;
} dp_cel_capacity;

/* The `device` variable. Callers fill plain C data; no CEL values needed. */
typedef struct dp_cel_device {
        const char *driver;
        const dp_cel_attribute *attributes;
        size_t n_attributes;
        const dp_cel_capacity *capacities;
        size_t n_capacities;
        bool allow_multiple_allocations;
} dp_cel_device;

typedef struct dp_cel_options {
        /* DRAConsumableCapacity: declares device.allowMultipleAllocations
         * (beta, on by default in 1.36). Off: using the field is a compile error. */
        bool consumable_capacity;
        /* DRAListTypeAttributes (alpha): enables `includes`. */
        bool list_type_attributes;
        /* Refuse expressions whose estimated cost exceeds cost_limit
         * ("too complex, exceeds cost limit"), as API validation does. */
        bool check_estimated_cost;
        /* Runtime cost limit; 0 means DP_CEL_MAX_COST. */
        uint64_t cost_limit;
} dp_cel_options;

/* The defaults: consumable_capacity on, list types off, no estimate check,
 * cost limit DP_CEL_MAX_COST. */
void dp_cel_options_init(dp_cel_options *opts);

typedef struct dp_cel_program dp_cel_program;

/* Parse, expand macros, type-check against the DRA environment. opts may
 * be NULL (defaults). */
int dp_cel_compile(const char *expr, const dp_cel_options *opts, dp_cel_program **ret, dp_error *err);
dp_cel_program *dp_cel_program_free(dp_cel_program *p);
DEFINE_FREEP(dp_cel_program, dp_cel_program_free)

const char *dp_cel_program_expression(const dp_cel_program *p);
/* Upper bound of the cost estimate (saturating). */
uint64_t dp_cel_program_estimated_cost(const dp_cel_program *p);

typedef struct dp_cel_result {
        bool matches;
        uint64_t cost; /* actual runtime cost, cel-go's model */
} dp_cel_result;

/* Evaluate against one device. Reentrant; the program is not modified. */
int dp_cel_eval(const dp_cel_program *p, const dp_cel_device *dev, dp_cel_result *ret, dp_error *err);
