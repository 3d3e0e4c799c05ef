/* SPDX-License-Identifier: Apache-2.0
 *
 * cdi.h — CDI spec files (wire-protocols §6) for prepared claims: a small
 * struct form, the JSON bytes, names, the minimum cdiVersion, and the file
 * I/O the daemon needs (atomic write into a spec directory, removal).
 *
 * One spec per prepared claim, file "<vendor>-<class>_<claim uid>.json"
 * (the transient-spec naming of §6.1), kind from the profile
 * ("k8s.gpu.example.com/gpu"), one CDI device "<claim uid>-<device>" per
 * allocated device, whose fully-qualified name "<kind>=<claim uid>-<device>"
 * goes back to the kubelet. Spec-level edits hold what every device of the
 * claim needs (KUBERNETES_NODE_NAME, DRA_RESOURCE_DRIVER_NAME, the profile's
 * common device nodes).
 *
 * Everything here is pure except dp_dra_file_write/dp_dra_file_remove.
 */
#pragma once

#include <sys/types.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "doc/state-file.h"

typedef struct dp_dra_cdi_node {
        char *path;      /* in the container */
        char *host_path; /* NULL: same as path */
} dp_dra_cdi_node;

typedef struct dp_dra_cdi_mount {
        char *host_path;
        char *container_path;
        char **options;
        size_t n_options;
        char *type; /* NULL: unset */
} dp_dra_cdi_mount;

typedef struct dp_dra_cdi_edits {
        char **env; /* "NAME=VALUE" */
        size_t n_env;
        dp_dra_cdi_node *nodes;
        size_t n_nodes;
        dp_dra_cdi_mount *mounts;
        size_t n_mounts;
} dp_dra_cdi_edits;

typedef struct dp_dra_cdi_device {
        char *name;
        dp_dra_cdi_edits edits;
} dp_dra_cdi_device;

typedef struct dp_dra_cdi_spec {
        char *kind;
        dp_dra_cdi_edits edits; /* spec-level containerEdits */
        dp_dra_cdi_device *devices;
        size_t n_devices;
} dp_dra_cdi_spec;

void dp_dra_cdi_spec_done(dp_dra_cdi_spec *s);
void dp_dra_cdi_edits_done(dp_dra_cdi_edits *e);
/* Builders: copy their arguments; 0 or -ENOMEM. */
int dp_dra_cdi_edits_env(dp_dra_cdi_edits *e, const char *name, const char *value);
int dp_dra_cdi_edits_node(dp_dra_cdi_edits *e, const char *path, const char *host_path);
int dp_dra_cdi_edits_mount(dp_dra_cdi_edits *e, const char *host_path, const char *container_path,
                           const char *const *options, size_t n_options);

/* The lowest cdiVersion that has every feature the spec uses (§6.4):
 * "0.3.0", "0.4.0" (mount type), "0.5.0" (device name starting with a digit,
 * deviceNodes hostPath), "0.6.0" (a dot in the class). */
const char *dp_dra_cdi_min_version(const dp_dra_cdi_spec *s);

/* Check names against §6.3 (kind "<vendor>/<class>", device names) and that
 * every device has edits and env entries have a '=' after a non-empty name:
 * 0 or -EINVAL with the rule. */
int dp_dra_cdi_spec_check(const dp_dra_cdi_spec *s, dp_error *err);

/* Compact JSON (the form the reference writer uses), keys in spec order:
 * cdiVersion, kind, devices[{name, containerEdits}], containerEdits. */
int dp_dra_cdi_spec_encode(const dp_dra_cdi_spec *s, dp_strbuf *out);
/* A CDI spec as a durable file type (doc/state-file.h): marshal only. CDI
 * is a public format whose readers (container runtimes) refuse fields the
 * spec does not name, so it carries no checksum; the spec's text is kept
 * in the driver checkpoint instead, which is how a damaged spec is found
 * and rewritten (dp_dra_cdi_reconcile). The cap is what recovery reads of
 * one spec (dra/recover.h): a larger spec is never written. */
#define DP_DRA_CDI_SPEC_MAX (4u << 20)
extern const dp_state_file_type dp_dra_cdi_spec_file;

/* "<vendor>-<class>_<id>.json" for kind "<vendor>/<class>" ('/' in id -> '_'). */
char *dp_dra_cdi_spec_file_name(const char *kind, const char *id);
/* "<kind>=<device>" */
char *dp_dra_cdi_qualified_name(const char *kind, const char *device);

/* ---- file I/O (the only impure functions of the module) ---- */

/* Write `name` (may contain '/': parent directories below `dir` are created
 * 0755) under `dir` atomically: temp file in the same directory, write,
 * fsync, rename, fsync the directory. `name` must be relative without "..".
 * 0 or negative errno with err naming the path. */
int dp_dra_file_write(const char *dir, const char *name, const char *data, size_t len, mode_t mode, dp_error *err);
/* Remove `name` under `dir` (absent is fine), then the parent directories
 * it had below `dir` while they are empty. */
int dp_dra_file_remove(const char *dir, const char *name, dp_error *err);
/* Read a whole file (at most max bytes: -E2BIG). -ENOENT when absent. */
int dp_dra_file_read(const char *path, size_t max, char **ret, size_t *ret_len, dp_error *err);
