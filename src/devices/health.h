/* SPDX-License-Identifier: Apache-2.0
 *
 * health.h — runtime health overrides for the mock backend, as a file.
 *
 * The file is `<state-dir>/health`, text, one override per line:
 *     # comment lines and blank lines are ignored
 *     gpu-3 unhealthy
 *     gpu-0-mig-1g10gb-2 unhealthy
 *     GPU-1f6a...   healthy
 * A line is "<device id or uuid> <healthy|unhealthy>" separated by blanks; a
 * MIG instance may also be named in the dotted form of earlier releases
 * (gpu-0-mig-1g.10gb-2, dp_mig_named).
 * The file is the whole override state: a device not named has its profile
 * health. The last line naming a device wins. The agent watches the state
 * directory with inotify (IN_CLOSE_WRITE | IN_MOVED_TO on "health") and on
 * each event re-reads the file, parses it, applies it, and republishes
 * whatever changed. Writers (`devplane agent health set gpu-3 unhealthy`)
 * read the old file, call dp_health_file_set(), write the result to a
 * temporary file in the same directory and rename() it over `health`, so the
 * agent never reads a half-written file.
 *
 * Pure: bytes in, structs out.
 */
#pragma once

#include "base/strbuf.h"
#include "devices/device.h"

#define DP_HEALTH_FILE_NAME "health"
#define DP_HEALTH_FILE_MAX (1u << 20) /* bytes; larger files are -E2BIG */
#define DP_HEALTH_FILE_LINES_MAX 4096

typedef struct dp_health_override {
        char *id; /* as written: device id, MIG id or uuid */
        dp_health health;
        unsigned line; /* 1-based, for error messages */
} dp_health_override;

typedef struct dp_health_file {
        dp_health_override *items;
        size_t n;
} dp_health_file;

dp_health_file *dp_health_file_free(dp_health_file *f);
DEFINE_FREEP(dp_health_file, dp_health_file_free)

/* Parse. -EINVAL with "<source>:<line>: <rule>" on a bad line, -E2BIG on a
 * file over the caps, -ENOMEM. An empty buffer is a valid empty file. */
int dp_health_file_parse(const char *buf, size_t len, const char *source, dp_health_file **ret, dp_error *err);

/* Apply overrides to a set: every device and MIG instance goes back to its
 * profile health, then each override is applied. `f` may be NULL (no
 * overrides). An id that names nothing in the set is -ENOENT with
 * "<source>:<line>: unknown device <id>" and the set is left unchanged.
 * On success returns the number of devices and MIG instances whose own
 * health changed (0 = nothing to republish). */
int dp_health_apply(dp_device_set *s, const dp_health_file *f, const char *source, dp_error *err);

/* Rewrite a health file so `id` has `health`: lines naming `id` are
 * dropped, one "<id> <health>" line is appended; other lines (comments too)
 * are kept byte for byte. `old` may be NULL/empty. The id must be a single
 * word (no blanks, no '#'): -EINVAL otherwise. Output goes to `out`. */
int dp_health_file_set(const char *old, size_t old_len, const char *id, dp_health health, dp_strbuf *out,
                       dp_error *err);
