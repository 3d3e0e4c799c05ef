# SPDX-License-Identifier: Apache-2.0
# Fail each allocation of a decode/validate/encode/expand scenario in turn
# (see model/failmalloc.c).
add_executable(model-failmalloc ${CMAKE_CURRENT_SOURCE_DIR}/model/failmalloc.c)
target_link_libraries(model-failmalloc PRIVATE dp_model)
target_link_options(model-failmalloc PRIVATE -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup)
add_test(NAME model/failmalloc COMMAND model-failmalloc WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/model)
set_tests_properties(model/failmalloc PROPERTIES TIMEOUT 300 ENVIRONMENT "${DP_TEST_ENV}" LABELS unit)
