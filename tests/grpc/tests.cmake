# SPDX-License-Identifier: Apache-2.0
# Helper programs for the interop tests (tests/grpc/test-interop-*.py): a gRPC
# server and a client built on dp_grpc, driven by Python's grpcio. They land
# in <build>/tests/ as grpc-peer-server and grpc-peer-client.
foreach(_peer server client)
  add_executable(grpc-peer-${_peer} ${CMAKE_CURRENT_SOURCE_DIR}/grpc/peer-${_peer}.c)
  target_link_libraries(grpc-peer-${_peer} PRIVATE dp_grpc)
endforeach()

# Fail each allocation of a full scenario in turn (see failmalloc.c).
add_executable(grpc-failmalloc ${CMAKE_CURRENT_SOURCE_DIR}/grpc/failmalloc.c)
target_link_libraries(grpc-failmalloc PRIVATE dp_grpc)
target_link_options(grpc-failmalloc PRIVATE -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup)
add_test(NAME grpc/failmalloc COMMAND grpc-failmalloc)
set_tests_properties(grpc/failmalloc PROPERTIES TIMEOUT 300 ENVIRONMENT "${DP_TEST_ENV}" LABELS unit)
