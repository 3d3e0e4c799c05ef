# SPDX-License-Identifier: Apache-2.0
# Helper programs for the interop tests (tests/grpc/test-interop-*.py): a gRPC
# server and a client built on dp_grpc, driven by Python's grpcio. They land
# in <build>/tests/ as grpc-peer-server and grpc-peer-client.
foreach(_peer server client)
  add_executable(grpc-peer-${_peer} ${CMAKE_CURRENT_SOURCE_DIR}/grpc/peer-${_peer}.c)
  target_link_libraries(grpc-peer-${_peer} PRIVATE dp_grpc)
endforeach()

# Fail each allocation of a full scenario in turn (see failmalloc.c).
dp_failmalloc_test(grpc)
