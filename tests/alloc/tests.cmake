# SPDX-License-Identifier: Apache-2.0
# Fail each allocation of an allocate run in turn (see alloc/failmalloc.c).
add_executable(alloc-failmalloc ${CMAKE_CURRENT_SOURCE_DIR}/alloc/failmalloc.c)
target_link_libraries(alloc-failmalloc PRIVATE dp_alloc)
target_link_options(alloc-failmalloc PRIVATE -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup)
add_test(NAME alloc/failmalloc COMMAND alloc-failmalloc)
set_tests_properties(alloc/failmalloc PROPERTIES TIMEOUT 300 ENVIRONMENT "${DP_TEST_ENV}" LABELS unit)
