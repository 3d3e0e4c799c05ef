/* SPDX-License-Identifier: Apache-2.0
 *
 * state-file.h — one codec for every durable file, in the shape of the
 * kubelet's checkpointmanager: a file type says how its object becomes
 * bytes and back (Marshal/Unmarshal, the checksum verified while
 * unmarshalling), and one manager reads and writes every type the same
 * way: read capped at the type's size, written atomically and durably
 * (temporary file, fsync, rename, directory fsync: base/fileio.h), and
 * never written larger than the next start could read back.
 *
 * Types: the device-manager checkpoint (the kubelet's own format and
 * checksum: devices/checkpoint.c), the DRA driver checkpoint
 * (dra/checkpoint.c), the node's DRA manager state (node/dra-state.c), CDI
 * specs (dra/cdi.c: a public format with no room for a checksum, so only
 * marshal and the atomic write).
 *
 * devplane's own files share one envelope, one compact JSON line
 *     {"checksum":"<16 hex digits>","data":DATA}
 * where the checksum is FNV-1a-64 of DATA's compact JSON as the encoder
 * writes it. A type with an envelope gives only the DATA builder and the
 * DATA decoder (dp_state_envelope); the reader decodes DATA, builds it
 * again and compares checksums, so one changed byte anywhere is -EBADMSG.
 */
#pragma once

#include <sys/types.h>

#include "doc/builder.h"

/* devplane's checksummed envelope around a type's DATA. */
typedef struct dp_state_envelope {
        const char *what; /* "checkpoint", "node DRA state": in messages */
        /* Build DATA for obj (failures are the builder's, sticky). */
        dp_doc_node *(*build)(dp_doc_builder *b, const void *obj);
        /* Decode DATA into obj (a fresh, zeroed object the caller frees on
         * failure); strict, failures as dp_doc_decoder says. */
        int (*decode)(const dp_doc_decoder *d, const dp_doc_node *data, void *obj);
} dp_state_envelope;

/* Append the envelope line (and a newline) for obj. 0 or -ENOMEM. */
int dp_state_envelope_marshal(const dp_state_envelope *e, const void *obj, dp_strbuf *out);
/* Parse one JSON document, decode DATA into obj and verify the checksum.
 * -EBADMSG ("<source>: <what> corrupt: ..."), -E2BIG, -ENOMEM. */
int dp_state_envelope_unmarshal(const dp_state_envelope *e, const char *buf, size_t len, const char *source, void *obj,
                                dp_error *err);

/* One kind of durable file (the kubelet's Checkpoint interface). */
typedef struct dp_state_file_type {
        const char *what; /* in messages */
        size_t max;       /* the largest file read or written */
        /* Append the whole file for obj to out: 0 or -ENOMEM. */
        int (*marshal)(const void *obj, dp_strbuf *out);
        /* A new object from the file, its checksum verified. NULL for a
         * type that is never read back (CDI specs: the runtime reads them). */
        int (*unmarshal)(const char *buf, size_t len, const char *source, void **ret, dp_error *err);
} dp_state_file_type;

/* The file's bytes for obj: appended to out; -E2BIG when longer than
 * t->max (never write what the next start could not read), -ENOMEM. */
int dp_state_file_marshal(const dp_state_file_type *t, const void *obj, dp_strbuf *out, dp_error *err);
/* A new object from buf (at most t->max bytes: -E2BIG), verified. */
int dp_state_file_unmarshal(const dp_state_file_type *t, const char *buf, size_t len, const char *source, void **ret,
                            dp_error *err);
/* Marshal obj and replace <dir>/<name> with it, atomically and durably. */
int dp_state_file_save(const dp_state_file_type *t, const void *obj, const char *dir, const char *name, mode_t mode,
                       dp_error *err);
/* Read path (dp_read_file, capped at t->max) and unmarshal it: -ENOENT
 * when there is no file, the reader's or unmarshal's failures otherwise. */
int dp_state_file_load(const dp_state_file_type *t, const char *path, void **ret, dp_error *err);
