# SPDX-License-Identifier: Apache-2.0
# cmake -DBINARY=FILE -DSOURCE_DIR=DIR -P check-test-hooks.cmake
#
# Fails when BINARY holds what only a build for tests may hold: the name of
# a test hook (every "NAME" passed to dp_test_hook() in DIR/src,
# base/test-hooks.h), or the glibc tunable a release build once re-executed
# itself with (huge pages are a deployment setting: docs/deploy.md). Run
# after linking devplane in every build without DP_TEST_HOOKS, and by
# tests/tools/test-test-hooks.sh against a test build, where it must fail.
if(NOT BINARY OR NOT SOURCE_DIR)
  message(FATAL_ERROR "usage: cmake -DBINARY=FILE -DSOURCE_DIR=DIR -P check-test-hooks.cmake")
endif()
file(GLOB_RECURSE _srcs "${SOURCE_DIR}/src/*.c" "${SOURCE_DIR}/src/*.h")
set(_names "")
foreach(_src IN LISTS _srcs)
  file(STRINGS "${_src}" _calls REGEX "dp_test_hook\\(\"[A-Z0-9_]+\"\\)")
  foreach(_call IN LISTS _calls)
    string(REGEX MATCHALL "dp_test_hook\\(\"[A-Z0-9_]+\"\\)" _each "${_call}")
    foreach(_one IN LISTS _each)
      string(REGEX REPLACE "dp_test_hook\\(\"([A-Z0-9_]+)\"\\)" "\\1" _name "${_one}")
      list(APPEND _names "${_name}")
    endforeach()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES _names)
if(NOT _names)
  message(FATAL_ERROR "check-test-hooks: no dp_test_hook(\"NAME\") found under ${SOURCE_DIR}/src: the check would prove nothing")
endif()
list(APPEND _names "glibc.malloc.hugetlb")
file(STRINGS "${BINARY}" _strings)
set(_found "")
foreach(_name IN LISTS _names)
  foreach(_s IN LISTS _strings)
    string(FIND "${_s}" "${_name}" _at)
    if(NOT _at EQUAL -1)
      list(APPEND _found "${_name}")
      break()
    endif()
  endforeach()
endforeach()
if(_found)
  message(FATAL_ERROR "check-test-hooks: ${BINARY} holds ${_found}: test hooks belong only in builds with DP_TEST_HOOKS (base/test-hooks.h)")
endif()
list(LENGTH _names _n)
message(STATUS "check-test-hooks: none of ${_n} test-only names in ${BINARY}")
