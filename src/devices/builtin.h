/* SPDX-License-Identifier: Apache-2.0
 *
 * builtin.h — the profile files under profiles/, embedded at build time
 * (src/devices/module.cmake generates the definitions). Internal.
 */
#pragma once

#include <stddef.h>

/* NULL-terminated, sorted by name; texts[i] is NUL-terminated, lens[i] bytes. */
extern const char *const dp_builtin_profile_names[];
extern const char *const dp_builtin_profile_texts[];
extern const size_t dp_builtin_profile_lens[];
