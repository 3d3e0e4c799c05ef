/* SPDX-License-Identifier: Apache-2.0
 * Fuzz protobuf decoding of every message type of every API (the first byte
 * picks the type, the rest is the encoding). What decodes must re-encode,
 * decode again and re-encode to the same bytes. */
#include "proto/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 1) return 0;
        size_t n;
        const ProtobufCMessageDescriptor *const *all = dp_proto_all_messages(&n);
        const ProtobufCMessageDescriptor *d = all[data[0] % n];
        ProtobufCMessage *m;
        if (dp_proto_unpack(d, data + 1, size - 1, &m) < 0) return 0;
        uint8_t *a = NULL, *b = NULL;
        size_t la, lb;
        if (dp_proto_pack(m, &a, &la) == 0) {
                ProtobufCMessage *m2;
                if (dp_proto_unpack(d, a, la, &m2) < 0) __builtin_trap();
                if (dp_proto_pack(m2, &b, &lb) < 0) __builtin_trap();
                if (la != lb || (la && memcmp(a, b, la) != 0)) __builtin_trap();
                protobuf_c_message_free_unpacked(m2, NULL);
        }
        free(a);
        free(b);
        protobuf_c_message_free_unpacked(m, NULL);
        return 0;
}
