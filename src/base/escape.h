/* SPDX-License-Identifier: Apache-2.0
 *
 * escape.h — text from input made safe for the person who reads it.
 *
 * Names, API-server messages and a plugin's standard error are input: they
 * may carry ESC (terminal control sequences), CR (a line that overwrites
 * the one before), LF (a forged line), the other C0 and C1 controls, DEL,
 * Unicode's bidirectional controls (U+061C, U+200E/F, U+202A..E,
 * U+2066..9: "Trojan Source", text that reads in another order than it is
 * stored), the line and paragraph separators U+2028/9, and bytes that are
 * not UTF-8. Each is written as a visible escape instead: \e \r \n \t
 * \xNN for the other bytes, \u{202E} for code points; a backslash stays as
 * it is (the escapes are for reading, not for decoding back).
 */
#pragma once

#include "base/strbuf.h"

/* Keep LF and TAB as they are (multi-line text such as a report); without
 * it they are escaped too (one-line messages). */
#define DP_ESCAPE_KEEP_NEWLINES 1u

/* The length of the unsafe sequence at s[0..len) (a byte or a UTF-8
 * sequence), 0 when s[0] starts a safe character. */
size_t dp_escape_unsafe_len(const char *s, size_t len, unsigned flags);
/* true when nothing in s[0..len) needs escaping. */
bool dp_escape_is_safe(const char *s, size_t len, unsigned flags);
/* Append s[0..len) with every unsafe sequence escaped. */
void dp_escape_append(dp_strbuf *out, const char *s, size_t len, unsigned flags);
/* A copy of s, escaped (one line: flags 0). NULL on OOM. */
char *dp_escape_dup(const char *s);
/* HTML text (element content and attribute values): & < > " ' as
 * references, LF and TAB kept, every other unsafe sequence as its visible
 * escape (a numeric reference would still act as the control). */
void dp_escape_html(dp_strbuf *out, const char *s);
