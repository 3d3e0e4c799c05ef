# SPDX-License-Identifier: Apache-2.0
# Fail each allocation of an allocate run in turn (see alloc/failmalloc.c).
dp_failmalloc_test(alloc)
# devplane allocate against the upstream allocator (tests/alloc/differential.py):
# a short fixed-seed run; the long run is a documented command (docs/alloc.md).
# 77: the upstream program is not in DP_SHARED_DIR.
add_test(NAME alloc/differential COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/alloc/differential.py --seed 1 --sequences 20
         WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/alloc)
set_tests_properties(alloc/differential PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77 ENVIRONMENT "${DP_TEST_ENV}" LABELS integration)
