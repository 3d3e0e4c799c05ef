/* SPDX-License-Identifier: Apache-2.0
 *
 * checkpoint.h — the kubelet device manager's checkpoint file
 * (`kubelet_internal_checkpoint`), byte-compatible with the kubelet.
 *
 * JSON, written as Go's encoding/json writes it:
 *   {"Data":{"PodDeviceEntries":[{"PodUID":..,"ContainerName":..,"ResourceName":..,
 *     "DeviceIDs":{"<numa>":[ids..]},"AllocResp":"<base64>"}],
 *     "RegisteredDevices":{"<resource>":[ids..]}},"Checksum":<uint32>}
 * Checksum = FNV-1a-32 of the go-spew `%#v` text of Data (see
 * wire-protocols §5.3). Null versus empty matters for that text, so the
 * structs below keep it (`*_null` flags). AllocResp is opaque bytes (the
 * protobuf ContainerAllocateResponse; this module never decodes it).
 *
 * Decoding follows the kubelet: unknown keys are ignored (BootID is kept),
 * a missing Data.PodDeviceEntries / Data.RegisteredDevices reads as empty
 * (not null), a checksum mismatch is -EBADMSG ("corrupt checkpoint:
 * checksum mismatch: file says N, content hashes to M"). Encoding always
 * writes every key and computes the checksum. Pure: bytes in, bytes out.
 */
#pragma once

#include "base/error.h"
#include "base/strbuf.h"
#include "doc/state-file.h"

#define DP_CHECKPOINT_FILE_NAME "kubelet_internal_checkpoint"
#define DP_CHECKPOINT_MAX_INPUT (16u << 20) /* bytes */

typedef struct dp_ckpt_ids {
        char **ids;
        size_t n;
        bool null; /* JSON null (spew "<nil>") rather than [] */
} dp_ckpt_ids;

typedef struct dp_ckpt_numa {
        int64_t numa; /* NUMA node, -1 = no topology */
        dp_ckpt_ids ids;
} dp_ckpt_numa;

typedef struct dp_ckpt_entry {
        char *pod_uid;
        char *container_name;
        char *resource_name;
        dp_ckpt_numa *device_ids; /* kept sorted by numa */
        size_t n_device_ids;
        bool device_ids_null;
        uint8_t *alloc_resp;
        size_t alloc_resp_len;
        bool alloc_resp_null;
} dp_ckpt_entry;

typedef struct dp_ckpt_registered {
        char *resource_name;
        dp_ckpt_ids ids;
} dp_ckpt_registered;

typedef struct dp_checkpoint {
        dp_ckpt_entry *entries;
        size_t n_entries;
        bool entries_null;
        dp_ckpt_registered *registered; /* kept sorted by resource name (bytewise) */
        size_t n_registered;
        bool registered_null;
        char *boot_id;     /* NULL when absent; written only when non-empty */
        uint32_t checksum; /* as read (decode) or as last written (encode) */
} dp_checkpoint;

dp_checkpoint *dp_checkpoint_new(void); /* empty: entries null, registered {} */
dp_checkpoint *dp_checkpoint_free(dp_checkpoint *c);
DEFINE_FREEP(dp_checkpoint, dp_checkpoint_free)

/* Builders (copy their arguments). Entry: `numas[i]` holds `ids_per_numa[i]`
 * ids; `alloc_resp` may be NULL for null. 0 or -ENOMEM/-EINVAL. */
int dp_checkpoint_add_entry(dp_checkpoint *c, const char *pod_uid, const char *container_name,
                            const char *resource_name, const int64_t *numas, const char *const *const *ids_per_numa,
                            const size_t *n_ids_per_numa, size_t n_numas, const uint8_t *alloc_resp,
                            size_t alloc_resp_len);
/* -EINVAL unless resource_name is made of [A-Za-z0-9._/-], 1..317 bytes. */
int dp_checkpoint_set_registered(dp_checkpoint *c, const char *resource_name, const char *const *ids, size_t n_ids);

/* The checkpoint as a durable file type (doc/state-file.h). */
extern const dp_state_file_type dp_checkpoint_file;

/* Decode and verify. -EINVAL (syntax, types: err says which field),
 * -EBADMSG (checksum), -E2BIG (over DP_CHECKPOINT_MAX_INPUT), -ENOMEM. */
int dp_checkpoint_decode(const char *buf, size_t len, dp_checkpoint **ret, dp_error *err);
/* The same without the checksum check (c->checksum is the stored value):
 * for reporting what a corrupt checkpoint held, never for trusting it. */
int dp_checkpoint_decode_unverified(const char *buf, size_t len, dp_checkpoint **ret, dp_error *err);
/* Encode (compact, Go key order and escaping); sets c->checksum. -ENOMEM. */
int dp_checkpoint_encode(dp_checkpoint *c, dp_strbuf *out);
/* The go-spew text the checksum covers, and its FNV-1a-32. */
int dp_checkpoint_spew(const dp_checkpoint *c, dp_strbuf *out);
uint32_t dp_checkpoint_checksum(const dp_checkpoint *c);
uint32_t dp_fnv1a32(const void *data, size_t len);
