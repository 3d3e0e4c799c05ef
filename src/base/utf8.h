/* SPDX-License-Identifier: Apache-2.0
 *
 * utf8.h — the one UTF-8 decoder. Well-formed means RFC 3629: no overlong
 * forms, no surrogates (U+D800..U+DFFF), nothing past U+10FFFF, no sequence
 * cut short, no stray continuation byte. That is what Go's proto3 decoder,
 * CEL (cel-go) and Kubernetes' validation accept; the log and escape code
 * use it to tell text from bytes to escape.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The length (1..4) of the well-formed sequence at s, len bytes available,
 * with its code point in *ret_cp; 0 (and *ret_cp untouched) when the bytes
 * there are not well-formed UTF-8 or len is 0. */
size_t dp_utf8_decode(const void *s, size_t len, uint32_t *ret_cp);

/* Whether all len bytes at s are well-formed UTF-8. */
bool dp_utf8_valid(const void *s, size_t len);

/* Writes cp (at most U+10FFFF) as UTF-8 into out; returns its length (1..4). */
size_t dp_utf8_encode(uint32_t cp, char out[static 4]);
