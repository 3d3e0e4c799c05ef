/* SPDX-License-Identifier: Apache-2.0
 *
 * proto.h — the generated protobuf-c types of every Kubernetes node API
 * devplane speaks, plus size-capped pack/unpack helpers.
 *
 * The C types come from proto/ (generated at build time into the build tree;
 * include them as "<dir>/api.pb-c.h"). protobuf-c names follow the proto
 * package:
 *   deviceplugin v1beta1         V1beta1__Device, v1beta1__device__pack()
 *   pluginregistration           Pluginregistration__PluginInfo
 *   DRA v1 / v1beta1             K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim
 *   DRA health v1alpha1 / v1     V1alpha1__DeviceHealth, V1__DeviceHealth
 * DRA v1 Device.share_id is proto3 `optional` upstream; here it is a
 * one-member oneof (share_id_presence_case), which is the same on the wire.
 */
#pragma once

#include <protobuf-c/protobuf-c.h>

#include "base/macros.h"
#include "deviceplugin/v1beta1/api.pb-c.h"
#include "dra-health/v1/api.pb-c.h"
#include "dra-health/v1alpha1/api.pb-c.h"
#include "dra/v1/api.pb-c.h"
#include "dra/v1beta1/api.pb-c.h"
#include "pluginregistration/v1/api.pb-c.h"

/* grpc-go's default receive cap (wire-protocols.md 7.7); also the largest
 * message dp_proto_unpack() accepts. */
#define DP_PROTO_MAX_MESSAGE_SIZE (4u * 1024u * 1024u)

/* Serialize msg into a new buffer: *ret_data (caller frees; never NULL on
 * success, an empty message gives a 1-byte allocation and *ret_len 0).
 * Returns 0, -ENOMEM, or -E2BIG if the encoding would exceed INT32_MAX. */
int dp_proto_pack(const ProtobufCMessage *msg, uint8_t **ret_data, size_t *ret_len);

/* Parse len bytes as a message of type desc. Returns 0 and the message in
 * *ret (free with protobuf_c_message_free_unpacked(*ret, NULL)); -E2BIG when
 * len exceeds DP_PROTO_MAX_MESSAGE_SIZE; -ENOMEM when an allocation failed
 * (protobuf-c allocates through devplane's malloc here, which notes it);
 * -EBADMSG when the bytes are not a valid encoding (protobuf-c does not say
 * why); -EILSEQ when a string field holds a NUL byte or invalid UTF-8 (see
 * below). Call protobuf-c's own unpack functions nowhere else: their
 * allocations cannot be failed by the failmalloc tests, and their -ENOMEM
 * looks like a bad message. */
int dp_proto_unpack(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len, ProtobufCMessage **ret);

/* Which string field was refused: static strings of the descriptors. */
typedef struct dp_proto_bad_string {
        const char *message; /* "v1beta1.ContainerAllocateRequest" */
        const char *field;   /* "devices_ids" */
        const char *why;     /* "a NUL byte" or "invalid UTF-8" */
} dp_proto_bad_string;

/* dp_proto_unpack, which also refuses, with -EILSEQ and *ret_bad filled (may
 * be NULL), a string field (nested ones included) holding a NUL byte or
 * invalid UTF-8: protobuf-c would cut "gpu-0\0x" to "gpu-0" and accept it,
 * where Go's decoder refuses invalid UTF-8. Device ids, resource names,
 * versions and claim uids come through here. */
int dp_proto_unpack_checked(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len,
                            ProtobufCMessage **ret, dp_proto_bad_string *ret_bad);

/* Every message type of every API above, in a fixed order (for fuzzers and
 * tests that sweep them all). */
const ProtobufCMessageDescriptor *const *dp_proto_all_messages(size_t *ret_n);

/* Look a message type up by its fully qualified proto name
 * ("v1beta1.AllocateRequest"); NULL if unknown. */
const ProtobufCMessageDescriptor *dp_proto_find_message(const char *full_name);
