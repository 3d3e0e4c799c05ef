# SPDX-License-Identifier: Apache-2.0
# Fail each allocation of CEL compile and evaluation in turn (cel/failmalloc.c).
# The CEL sources are compiled into the test with CEL_ARENA_EXACT so that every
# arena allocation is a malloc of its own and can be failed.
file(GLOB _cel_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/cel/*.c)
dp_failmalloc_test(cel SOURCES ${_cel_sources} LIBS dp_model PkgConfig::PCRE2)
target_compile_definitions(cel-failmalloc PRIVATE CEL_ARENA_EXACT)
target_include_directories(cel-failmalloc PRIVATE ${PROJECT_SOURCE_DIR}/src)

# The devplane side of the CEL differential against the upstream allocator
# (cel/test-cel-diff.py): evaluates a file of selectors against slices.
add_executable(cel-diff-eval ${CMAKE_CURRENT_SOURCE_DIR}/cel/cel-diff-eval.c)
target_link_libraries(cel-diff-eval PRIVATE dp_alloc dp_cel dp_model)
