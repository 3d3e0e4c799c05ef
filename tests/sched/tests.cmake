# SPDX-License-Identifier: Apache-2.0
# Fail each allocation of a simulation and of a scheduler run in turn (see
# sched/failmalloc.c).
dp_failmalloc_test(sched TIMEOUT 900)
# The HTML report at 1,000 nodes and 10,000 pods, with long names, in headless
# Chromium (not globbed as test-*.sh: the 1,000-node simulation under the
# sanitizers needs more than the default 300 s on a loaded machine).
add_test(NAME sched/report-scale COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/sched/report-scale.sh
         WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/sched)
set_tests_properties(sched/report-scale PROPERTIES TIMEOUT 900 ENVIRONMENT "${DP_TEST_ENV}" LABELS integration)
