# SPDX-License-Identifier: Apache-2.0
# Fail each allocation protobuf-c makes in dp_proto_unpack in turn (see
# proto/failmalloc.c).
dp_failmalloc_test(proto)
