/* SPDX-License-Identifier: Apache-2.0
 *
 * oom.h — how the alloc module reports running out of memory (not installed;
 * separate from internal.h so that adapter.c and claims.c need not see the
 * snapshot's types).
 */
#pragma once

#include "base/error.h"

/* An allocation failed: fill err with "out of memory while <what>" unless an
 * inner call already explained this -ENOMEM (err->code == -ENOMEM with a
 * message). Returns -ENOMEM. Functions that take no err return a bare
 * -ENOMEM; the first caller that has one calls this (snapshot.c). */
int alloc_oom(dp_error *err, const char *fmt, ...) _printf_(2, 3);
