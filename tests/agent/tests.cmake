# SPDX-License-Identifier: Apache-2.0
# Fail each allocation of the agent's DRA request path in turn (see
# agent/failmalloc.c).
add_executable(agent-failmalloc ${CMAKE_CURRENT_SOURCE_DIR}/agent/failmalloc.c)
target_link_libraries(agent-failmalloc PRIVATE dp_agent)
target_link_options(agent-failmalloc PRIVATE -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup)
add_test(NAME agent/failmalloc COMMAND agent-failmalloc WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/agent)
set_tests_properties(agent/failmalloc PROPERTIES TIMEOUT 300 ENVIRONMENT "${DP_TEST_ENV}" LABELS unit)
