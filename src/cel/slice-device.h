/* SPDX-License-Identifier: Apache-2.0
 *
 * slice-device.h — the CEL `device` variable of a device as a ResourceSlice
 * publishes it (model/objects.h), for every caller that evaluates selectors
 * against published devices (the allocator adapter, DeviceTaintRule
 * selectors in the simulator, `devplane cel`).
 */
#pragma once

#include "cel/cel.h"
#include "model/objects.h"

/* Fill attrs[0..d->n_attributes) and caps[0..d->n_capacity) (the caller's
 * storage, which must outlive *ret) and *ret, pointing into s and d.
 * -EINVAL for an attribute of a type CEL does not know (nothing else fails). */
int dp_cel_device_from_slice(const dp_resource_slice *s, const dp_device *d, dp_cel_attribute *attrs,
                             dp_cel_capacity *caps, dp_cel_device *ret);
