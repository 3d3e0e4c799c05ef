# SPDX-License-Identifier: Apache-2.0
# Extra dra test: the DRA example driver's workloads against the example-gpu
# slices and prepare. It evaluates CEL selectors, so it links dp_cel as well.
add_executable(dra-conformance-workloads ${CMAKE_CURRENT_SOURCE_DIR}/dra/conformance-workloads.c)
target_include_directories(dra-conformance-workloads PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(dra-conformance-workloads PRIVATE dp_dra dp_cel)
add_test(NAME dra/conformance-workloads COMMAND dra-conformance-workloads
         WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/dra)
set_tests_properties(dra/conformance-workloads PROPERTIES TIMEOUT 120 ENVIRONMENT "${DP_TEST_ENV}" LABELS unit)

# Fail each allocation of a driver-core scenario in turn (see dra/failmalloc.c).
dp_failmalloc_test(dra)
dp_failmalloc_test(dra NAME failmalloc-recover ARGS recover)
