/* SPDX-License-Identifier: Apache-2.0
 *
 * dra-state.h — the node's DRA manager state, as the kubelet keeps its
 * cm/dra/state checkpoint: which claims are prepared (or being prepared)
 * through which driver, for which pods, with what devices and CDI ids. Pure:
 * a table with encode/decode; the I/O (atomic write, reading at start) is the
 * DRA manager's.
 *
 * File (JSON, devplane's own format), <plugin-dir>/dra_manager_state.json:
 *
 *   {"checksum":"<16 hex digits>",
 *    "data":{"version":1,"rebuild":false,
 *            "claims":[{"uid":"…","namespace":"…","name":"…","driver":"gpu.example.com",
 *                       "state":"preparing"|"prepared","skipped":false,"skipUnprepare":false,
 *                       "pods":[{"uid":"…","namespace":"…","name":"…"}],
 *                       "devices":[{"pool":"node-a","device":"gpu-0","requests":["gpu"],
 *                                   "cdiDeviceIDs":["k8s.gpu.example.com/gpu=…"]}]}],
 *            "unknownDrivers":[{"driver":"…","reason":"…"}]}}
 *
 * "rebuild" is true from a start that found the file missing or corrupt
 * until every registered driver has answered the List call (the node asks
 * each driver what it holds to rebuild the table).
 * "preparing" is written before NodePrepareResources is called (so a node
 * killed while the driver prepares still knows the claim and can unprepare
 * it); "prepared" once the driver answered. "unknownDrivers" are drivers
 * whose holdings the node could not learn after its state was lost (they do
 * not serve the PreparedClaims List call): the node may not know every claim
 * they hold.
 *
 * `checksum` is FNV-1a-64 of the compact JSON of `data` as the encoder writes
 * it. Decoding is strict (unknown fields, wrong types, duplicate (uid,
 * driver) entries are refused) and re-encodes what it read to compare the
 * checksum: one changed byte is -EBADMSG, never trusted. Caps below.
 */
#pragma once

#include "base/error.h"
#include "base/strbuf.h"
#include "doc/state-file.h"

#define DP_NODE_DRA_STATE_FILE "dra_manager_state.json"
#define DP_NODE_DRA_STATE_VERSION 1
#define DP_NODE_DRA_STATE_MAX_INPUT (16u << 20)
#define DP_NODE_DRA_STATE_MAX_CLAIMS 4096 /* as the driver checkpoint */
#define DP_NODE_DRA_STATE_MAX_PODS 256    /* ResourceClaimReservedForMaxSize */
#define DP_NODE_DRA_STATE_MAX_DEVICES 32  /* AllocationResultsMaxSize */
#define DP_NODE_DRA_STATE_MAX_STRINGS 64  /* requests or CDI ids of one device */
#define DP_NODE_DRA_STATE_MAX_DRIVERS 256 /* the DRA manager's plugin cap */

typedef struct dp_node_dra_device {
        char *pool, *device;
        char **requests; /* the requests the device serves ("gpu", "req/sub") */
        size_t n_requests;
        char **cdi; /* fully qualified CDI device ids */
        size_t n_cdi;
} dp_node_dra_device;

typedef struct dp_node_dra_pod {
        char *uid, *ns, *name;
} dp_node_dra_pod;

typedef enum { DP_NODE_DRA_PREPARING = 0, DP_NODE_DRA_PREPARED } dp_node_dra_phase;

typedef struct dp_node_dra_claim {
        char *uid, *ns, *name, *driver;
        dp_node_dra_phase phase;
        bool skipped;        /* skipNodeOperations: prepare not called */
        bool skip_unprepare; /* nor unprepare */
        dp_node_dra_pod *pods;
        size_t n_pods;
        dp_node_dra_device *devs;
        size_t n_devs;
        /* Runtime only (not encoded): the unprepare retry. */
        uint64_t next_try; /* µs */
        unsigned attempts;
        char *error;
} dp_node_dra_claim;

typedef struct dp_node_dra_unknown {
        char *driver, *reason;
} dp_node_dra_unknown;

typedef struct dp_node_dra_state {
        dp_node_dra_claim *claims;
        size_t n_claims, cap;
        dp_node_dra_unknown *unknown;
        size_t n_unknown;
        bool rebuild; /* the table was lost and is being rebuilt from the drivers */
} dp_node_dra_state;

dp_node_dra_state *dp_node_dra_state_new(void);
dp_node_dra_state *dp_node_dra_state_free(dp_node_dra_state *s);
DEFINE_FREEP(dp_node_dra_state, dp_node_dra_state_free)
void dp_node_dra_claim_done(dp_node_dra_claim *c);

dp_node_dra_claim *dp_node_dra_state_find(const dp_node_dra_state *s, const char *uid, const char *driver);
/* Every string stored must be one the file can hold (UTF-8 of characters a
 * YAML stream may carry; drivers send what they like): -EINVAL otherwise,
 * and for an empty uid or driver. Reasons are stored with such characters
 * replaced by '?'.
 *
 * A new entry (phase preparing, no pods, no devices); pointers into the
 * table move on add and remove. 0, -EEXIST (the pair is there: *ret is it),
 * -E2BIG (DP_NODE_DRA_STATE_MAX_CLAIMS), -EINVAL, -ENOMEM. */
int dp_node_dra_state_add(dp_node_dra_state *s, const char *uid, const char *ns, const char *name, const char *driver,
                          dp_node_dra_claim **ret);
/* Remove the entry (c points into s->claims); the last one takes its place. */
void dp_node_dra_state_remove(dp_node_dra_state *s, dp_node_dra_claim *c);
/* 1 added, 0 already there, -E2BIG, -EINVAL, -ENOMEM. */
int dp_node_dra_claim_add_pod(dp_node_dra_claim *c, const char *uid, const char *ns, const char *name);
/* true when it was there. */
bool dp_node_dra_claim_remove_pod(dp_node_dra_claim *c, const char *uid);
bool dp_node_dra_claim_has_pod(const dp_node_dra_claim *c, const char *uid);
/* Replace the devices (deep copy of devs). 0, -E2BIG (over the caps),
 * -EINVAL, -ENOMEM (c unchanged on failure). */
int dp_node_dra_claim_set_devices(dp_node_dra_claim *c, const dp_node_dra_device *devs, size_t n);

/* Mark / unmark a driver whose holdings are unknown. 1 changed, 0 not,
 * -EINVAL, -ENOMEM, -E2BIG. */
int dp_node_dra_state_set_unknown(dp_node_dra_state *s, const char *driver, const char *reason);
bool dp_node_dra_state_clear_unknown(dp_node_dra_state *s, const char *driver);
const char *dp_node_dra_state_unknown_reason(const dp_node_dra_state *s, const char *driver);

/* The state as a durable file type (doc/state-file.h). */
extern const dp_state_file_type dp_node_dra_state_file;
/* Encode (appended to out, one line). 0 or -ENOMEM. */
int dp_node_dra_state_encode(const dp_node_dra_state *s, dp_strbuf *out);
/* Decode and verify. -EBADMSG corrupt (err: "<source>: node DRA state
 * corrupt: <field path>: <rule>"), -E2BIG over a cap, -ENOMEM. */
int dp_node_dra_state_decode(const char *buf, size_t len, const char *source, dp_node_dra_state **ret, dp_error *err);
