/* SPDX-License-Identifier: Apache-2.0
 *
 * prepared.h — what NodePrepareResources produced for a claim, and the
 * driver's own checkpoint of it (model-free: the daemons include this next to
 * devices/device.h).
 *
 * Checkpoint file (JSON, our own format; one per driver, e.g.
 * <plugins-dir>/<driver>/checkpoint.json):
 *
 *   {"checksum":"<16 hex digits>",
 *    "data":{"driver":"gpu.example.com","node":"node-a","version":1,
 *            "claims":[{"uid":"…","namespace":"…","name":"…",
 *                       "devices":[{"requests":["gpu"],"pool":"node-a","device":"gpu-0",
 *                                   "cdiDeviceIDs":["k8s.gpu.example.com/gpu=<uid>-gpu-0"],
 *                                   "shareID":"…"}],
 *                       "cdiSpecFile":"k8s.gpu.example.com-gpu_<uid>.json",
 *                       "cdiSpec":"{\"cdiVersion\":…}",
 *                       "metadataFiles":[{"request":"gpu","path":"<uid>/gpu/gpu.example.com-metadata.json",
 *                                         "containerPath":"/var/run/kubernetes.io/…"}],
 *                       "metadataGeneration":1}]}}
 *
 * `checksum` is FNV-1a-64 of the compact JSON of `data` exactly as the
 * encoder writes it (keys in the order above, claims in insertion order).
 * Decoding re-encodes what it read and compares: any change to the data, a
 * truncated file or a bad checksum is -EBADMSG ("checkpoint corrupt: …"),
 * never silently trusted. Unknown fields are refused. `cdiSpec` (the spec's
 * bytes) is optional, so files written before it was kept still load.
 * Caps: DP_DRA_CHECKPOINT_MAX (bytes; a save that would pass it is refused
 * with -E2BIG, so the driver never writes a file it could not read back),
 * DP_DRA_CHECKPOINT_MAX_CLAIMS.
 */
#pragma once

#include "base/error.h"
#include "base/strbuf.h"
#include "doc/state-file.h"

#define DP_DRA_CHECKPOINT_VERSION 1
#define DP_DRA_CHECKPOINT_MAX (16u << 20)
#define DP_DRA_CHECKPOINT_MAX_CLAIMS 4096
#define DP_DRA_MAX_RESULTS 32 /* AllocationResultsMaxSize: devices per claim */

typedef struct dp_dra_prepared_device {
        char **requests; /* the requests this device serves ("gpu", "req/sub") */
        size_t n_requests;
        char *pool;
        char *device;
        char **cdi_ids; /* fully qualified CDI names for the kubelet */
        size_t n_cdi_ids;
        char *share_id; /* NULL when the allocation has none */
} dp_dra_prepared_device;

typedef struct dp_dra_metadata_file {
        char *request;        /* the claim's request name */
        char *path;           /* relative to the driver's metadata directory */
        char *container_path; /* where the CDI spec bind-mounts it (read-only) */
} dp_dra_metadata_file;

typedef struct dp_dra_prepared_claim {
        char *uid, *namespace, *name;
        dp_dra_prepared_device *devices;
        size_t n_devices;
        char *cdi_spec_file; /* file name in the CDI directory; NULL when no devices */
        /* The spec's bytes as written (NUL-terminated JSON), kept in the
         * checkpoint so a spec that is deleted or damaged is written again
         * (dp_dra_cdi_reconcile). NULL in entries of checkpoints written
         * before it was kept: such a spec cannot be rewritten. */
        char *cdi_spec_text;
        dp_dra_metadata_file *metadata;
        size_t n_metadata;
        int64_t metadata_generation; /* 0 when no metadata files were written */
} dp_dra_prepared_claim;

void dp_dra_prepared_claim_done(dp_dra_prepared_claim *c);
dp_dra_prepared_claim *dp_dra_prepared_claim_free(dp_dra_prepared_claim *c);
DEFINE_FREEP(dp_dra_prepared_claim, dp_dra_prepared_claim_free)
/* Deep copy into *dst (zeroed first). 0 or -ENOMEM (dst left empty). */
int dp_dra_prepared_claim_copy(dp_dra_prepared_claim *dst, const dp_dra_prepared_claim *src);

typedef struct dp_dra_checkpoint {
        char *driver;
        char *node;
        dp_dra_prepared_claim *claims;
        size_t n_claims;
        size_t cap;
} dp_dra_checkpoint;

/* A new empty checkpoint for (driver, node); NULL on OOM. */
dp_dra_checkpoint *dp_dra_checkpoint_new(const char *driver, const char *node);
dp_dra_checkpoint *dp_dra_checkpoint_free(dp_dra_checkpoint *c);
DEFINE_FREEP(dp_dra_checkpoint, dp_dra_checkpoint_free)

dp_dra_prepared_claim *dp_dra_checkpoint_find(const dp_dra_checkpoint *c, const char *uid);
/* Add a copy of `claim` (replacing an entry with the same uid). 0, -E2BIG, -ENOMEM. */
int dp_dra_checkpoint_put(dp_dra_checkpoint *c, const dp_dra_prepared_claim *claim);
/* Remove the entry; with ret (may be NULL) the caller gets it (free with
 * dp_dra_prepared_claim_free). 0, or -ENOENT when absent. */
int dp_dra_checkpoint_remove(dp_dra_checkpoint *c, const char *uid, dp_dra_prepared_claim **ret);

/* The checkpoint as a durable file type (doc/state-file.h): what save and
 * load below read and write. */
extern const dp_state_file_type dp_dra_checkpoint_file;
/* Encode (appends to out). 0 or -ENOMEM. */
int dp_dra_checkpoint_encode(const dp_dra_checkpoint *c, dp_strbuf *out);
/* Decode and verify. -EBADMSG when corrupt (err says why), -E2BIG over the
 * caps, -ENOMEM. `source` names the file in messages. */
int dp_dra_checkpoint_decode(const char *buf, size_t len, const char *source, dp_dra_checkpoint **ret, dp_error *err);

/* ---- what prepare wants written, and the I/O that writes it ---- */

typedef struct dp_dra_file {
        char *name; /* relative to its directory */
        char *data;
        size_t len;
} dp_dra_file;

typedef struct dp_dra_prepare_output {
        dp_dra_prepared_claim claim; /* the result for the kubelet and the checkpoint */
        dp_dra_file cdi_spec;        /* in the CDI directory; name NULL when no devices */
        dp_dra_file *metadata;       /* in the metadata directory */
        size_t n_metadata;
} dp_dra_prepare_output;

void dp_dra_prepare_output_done(dp_dra_prepare_output *o);

/* Write the CDI spec and the metadata files atomically (metadata first, so a
 * spec never names a missing file). metadata_dir may be NULL when there are
 * none. 0 or negative errno with err naming the file. */
int dp_dra_prepare_output_write(const dp_dra_prepare_output *o, const char *cdi_dir, const char *metadata_dir,
                                dp_error *err);
/* Remove what prepare wrote for this claim (absent files are fine): the CDI
 * spec, then the metadata files and their per-claim directories. */
int dp_dra_unprepare_files(const dp_dra_prepared_claim *c, const char *cdi_dir, const char *metadata_dir,
                           dp_error *err);
/* Checkpoint file helpers: atomic save (mode 0600) and load (-ENOENT when
 * absent: start empty; -EBADMSG when corrupt). */
int dp_dra_checkpoint_save(const dp_dra_checkpoint *c, const char *dir, const char *name, dp_error *err);
int dp_dra_checkpoint_load(const char *path, dp_dra_checkpoint **ret, dp_error *err);

/* A file of ours that is damaged in a way rename(2) cannot overwrite (a
 * directory) or that must not be trusted (a corrupt checkpoint) is moved
 * aside, never deleted, as dp_file_set_aside() does it (base/fileio.h).
 * 0 (and *ret_to, malloc'd, when ret_to is not NULL), or a negative errno
 * with err naming the path. */
int dp_dra_file_set_aside(const char *path, char **ret_to, dp_error *err);

/* Every CDI spec the checkpoint names is compared with the copy the
 * checkpoint keeps (cdi_spec_text); a spec that is missing, holds other
 * bytes or is not a regular file (a directory is set aside) is written again
 * atomically. Logged per spec. Returns 0, -EIO when a spec could not be
 * written (err: the last reason; the rest were still checked), -ENOMEM. */
typedef struct dp_dra_cdi_check {
        size_t checked;   /* entries that name a spec */
        size_t rewritten; /* written again */
        size_t no_copy;   /* entries without cdi_spec_text: not checked */
        size_t failed;    /* could not be written again */
} dp_dra_cdi_check;
int dp_dra_cdi_reconcile(const dp_dra_checkpoint *c, const char *cdi_dir, dp_dra_cdi_check *ret, dp_error *err);
