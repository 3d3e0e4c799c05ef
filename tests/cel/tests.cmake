# SPDX-License-Identifier: Apache-2.0
# Fail each allocation of CEL compile and evaluation in turn (cel/failmalloc.c).
# The CEL sources are compiled into the test with CEL_ARENA_EXACT so that every
# arena allocation is a malloc of its own and can be failed.
file(GLOB _cel_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/cel/*.c)
add_executable(cel-failmalloc ${CMAKE_CURRENT_SOURCE_DIR}/cel/failmalloc.c ${_cel_sources})
target_compile_definitions(cel-failmalloc PRIVATE CEL_ARENA_EXACT)
target_include_directories(cel-failmalloc PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(cel-failmalloc PRIVATE dp_model PkgConfig::PCRE2)
target_link_options(cel-failmalloc PRIVATE -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup)
add_test(NAME cel/failmalloc COMMAND cel-failmalloc)
set_tests_properties(cel/failmalloc PROPERTIES TIMEOUT 300 ENVIRONMENT "${DP_TEST_ENV}" LABELS unit)

# The devplane side of the CEL differential against the upstream allocator
# (cel/test-cel-diff.py): evaluates a file of selectors against slices.
add_executable(cel-diff-eval ${CMAKE_CURRENT_SOURCE_DIR}/cel/cel-diff-eval.c)
target_link_libraries(cel-diff-eval PRIVATE dp_alloc dp_cel dp_model)
