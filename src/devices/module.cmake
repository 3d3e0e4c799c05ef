# SPDX-License-Identifier: Apache-2.0
# Embed the built-in profiles (profiles/*.yaml) into dp_devices: a generated
# C file holds each file's bytes, so the binary needs no data directory.
file(GLOB _dp_profiles CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/profiles/*.yaml)
list(SORT _dp_profiles)
set(_dp_profiles_c ${CMAKE_CURRENT_BINARY_DIR}/devices-builtin-profiles.c)
add_custom_command(
  OUTPUT ${_dp_profiles_c}
  COMMAND ${CMAKE_COMMAND} -DOUT=${_dp_profiles_c} "-DFILES=${_dp_profiles}"
          -P ${PROJECT_SOURCE_DIR}/src/devices/embed-profiles.cmake
  DEPENDS ${_dp_profiles} ${PROJECT_SOURCE_DIR}/src/devices/embed-profiles.cmake
  COMMENT "Embedding built-in device profiles"
  VERBATIM)
target_sources(dp_devices PRIVATE ${_dp_profiles_c})
