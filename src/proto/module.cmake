# SPDX-License-Identifier: Apache-2.0
# Generate C from proto/**/*.proto with protoc-c at build time. Output goes to
# <build>/proto-gen/<dir>/<name>.pb-c.{c,h}, mirroring proto/, and that folder
# is a PUBLIC include directory of dp_proto, so code writes
#     #include "deviceplugin/v1beta1/api.pb-c.h"
# (included by src/proto/proto.h for convenience).
find_program(DP_PROTOC_C protoc-c REQUIRED)
set(_gen ${PROJECT_BINARY_DIR}/proto-gen)
file(GLOB_RECURSE _protos CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/proto/*.proto)
set(_gen_srcs "")
foreach(_p ${_protos})
  file(RELATIVE_PATH _rel ${PROJECT_SOURCE_DIR}/proto ${_p})
  string(REGEX REPLACE "\\.proto$" "" _base ${_rel})
  add_custom_command(
    OUTPUT ${_gen}/${_base}.pb-c.c ${_gen}/${_base}.pb-c.h
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_gen}
    COMMAND ${DP_PROTOC_C} --proto_path=${PROJECT_SOURCE_DIR}/proto --c_out=${_gen} ${_p}
    # protoc-c names the service vtable slot of rpc Register "register", a C
    # keyword; devplane does not use protobuf-c services, so rename the slot.
    COMMAND sed -i "s/(\\*register)(/(*register_)(/" ${_gen}/${_base}.pb-c.h
    DEPENDS ${_p}
    COMMENT "protoc-c ${_rel}"
    VERBATIM)
  list(APPEND _gen_srcs ${_gen}/${_base}.pb-c.c)
endforeach()
# Generated code is not ours to restyle: keep warnings on, minus the ones
# protoc-c output trips.
set_source_files_properties(${_gen_srcs} PROPERTIES GENERATED TRUE
  COMPILE_OPTIONS "-Wno-missing-prototypes;-Wno-shadow")
target_sources(dp_proto PRIVATE ${_gen_srcs})
target_include_directories(dp_proto PUBLIC ${_gen})
