/* SPDX-License-Identifier: Apache-2.0
 * slice-device.c — a published device as the CEL `device` variable. */
#include <errno.h>

#include "cel/slice-device.h"

int dp_cel_device_from_slice(const dp_resource_slice *s, const dp_device *d, dp_cel_attribute *attrs,
                             dp_cel_capacity *caps, dp_cel_device *ret) {
        for (size_t i = 0; i < d->n_attributes; i++) {
                const dp_device_attribute *a = &d->attributes[i];
                dp_cel_attr_value v = {.i = a->i,
                                       .b = a->b,
                                       .s = a->s,
                                       .ints = a->ints,
                                       .bools = a->bools,
                                       .strs = (const char *const *)a->strs,
                                       .n = a->n};
                switch (a->type) {
                case DP_ATTR_INT: v.type = DP_CEL_ATTR_INT; break;
                case DP_ATTR_BOOL: v.type = DP_CEL_ATTR_BOOL; break;
                case DP_ATTR_STRING: v.type = DP_CEL_ATTR_STRING; break;
                case DP_ATTR_VERSION: v.type = DP_CEL_ATTR_VERSION; break;
                case DP_ATTR_INTS: v.type = DP_CEL_ATTR_INTS; break;
                case DP_ATTR_BOOLS: v.type = DP_CEL_ATTR_BOOLS; break;
                case DP_ATTR_STRINGS: v.type = DP_CEL_ATTR_STRINGS; break;
                case DP_ATTR_VERSIONS: v.type = DP_CEL_ATTR_VERSIONS; break;
                default: return -EINVAL;
                }
                attrs[i] = (dp_cel_attribute){NULL, a->name, v};
        }
        for (size_t i = 0; i < d->n_capacity; i++)
                caps[i] = (dp_cel_capacity){NULL, d->capacity[i].name, d->capacity[i].value};
        *ret = (dp_cel_device){s->driver, attrs, d->n_attributes, caps, d->n_capacity, d->allow_multiple_allocations};
        return 0;
}
