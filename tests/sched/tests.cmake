# SPDX-License-Identifier: Apache-2.0
# Fail each allocation of a simulation and of a scheduler run in turn (see
# sched/failmalloc.c).
add_executable(sched-failmalloc ${CMAKE_CURRENT_SOURCE_DIR}/sched/failmalloc.c)
target_link_libraries(sched-failmalloc PRIVATE dp_sched)
target_link_options(sched-failmalloc PRIVATE -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup)
add_test(NAME sched/failmalloc COMMAND sched-failmalloc WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/sched)
set_tests_properties(sched/failmalloc PROPERTIES TIMEOUT 900 ENVIRONMENT "${DP_TEST_ENV}" LABELS unit)
