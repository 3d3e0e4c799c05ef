# SPDX-License-Identifier: Apache-2.0
# The fake libnvidia-ml.so.1 (tests/devices/fake-nvml/): built from C source
# with the few base files it needs (position-independent, so not dp_base),
# exporting only the NVML subset. It lands in <build>/tests/fake-nvml/, where
# tests/devices/test-backend-nvml.c finds it through DP_BUILD_DIR.
add_library(fake-nvml SHARED
  ${CMAKE_CURRENT_SOURCE_DIR}/devices/fake-nvml/fake-nvml.c
  ${PROJECT_SOURCE_DIR}/src/doc/doc.c
  ${PROJECT_SOURCE_DIR}/src/doc/doc-parse.c
  ${PROJECT_SOURCE_DIR}/src/doc/doc-read.c
  ${PROJECT_SOURCE_DIR}/src/base/error.c
  ${PROJECT_SOURCE_DIR}/src/base/fileio.c
  ${PROJECT_SOURCE_DIR}/src/base/strbuf.c
  ${PROJECT_SOURCE_DIR}/src/base/strv.c
  ${PROJECT_SOURCE_DIR}/src/base/alloc.c)
target_include_directories(fake-nvml PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(fake-nvml PRIVATE PkgConfig::YAML)
target_compile_options(fake-nvml PRIVATE -fvisibility=hidden)
set_target_properties(fake-nvml PROPERTIES
  OUTPUT_NAME nvidia-ml PREFIX lib SUFFIX .so.1 NO_SONAME ON
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests/fake-nvml)
# The test target is created after this file is included: add the
# dependency once the directory is processed.
function(_dp_fake_nvml_dependency)
  if(TARGET devices-test-backend-nvml)
    add_dependencies(devices-test-backend-nvml fake-nvml)
  endif()
endfunction()
cmake_language(DEFER CALL _dp_fake_nvml_dependency)

# Fail each allocation of a backend scenario in turn (see devices/failmalloc.c).
dp_failmalloc_test(devices)
add_dependencies(devices-failmalloc fake-nvml)
