# SPDX-License-Identifier: Apache-2.0
# Fail each allocation of the DRA manager's rescan and status and of the
# manifest decoding in turn (see node/failmalloc.c).
add_executable(node-failmalloc ${CMAKE_CURRENT_SOURCE_DIR}/node/failmalloc.c)
target_link_libraries(node-failmalloc PRIVATE dp_node)
target_link_options(node-failmalloc PRIVATE -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup)
add_test(NAME node/failmalloc COMMAND node-failmalloc)
set_tests_properties(node/failmalloc PROPERTIES TIMEOUT 300 ENVIRONMENT "${DP_TEST_ENV}" LABELS unit)
