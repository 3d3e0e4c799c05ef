# SPDX-License-Identifier: Apache-2.0
# The agent is also the DRA driver: it calls the driver core (src/dra) and
# reads claims through the model, and publishes through the API (dp_kube).
target_link_libraries(dp_agent PUBLIC dp_dra dp_model dp_kube)
# The node-path benchmarks, bench/v1/bench-v1.c and bench/v2/bench-v2.c: V1
# drives a real `devplane agent` process, V2 NodePrepare/Unprepare round
# trips against a real `devplane agent --dra` and its memory with both paths
# on; an in-process node plays the kubelet. So they link dp_agent and
# dp_node and know where the devplane binary is. (They live under bench/v*/
# because bench/CMakeLists.txt links its bench-*.c programs with dp_alloc
# only.)
foreach(path v1 v2)
  if(EXISTS ${PROJECT_SOURCE_DIR}/bench/${path}/bench-${path}.c)
    add_executable(bench-${path} ${PROJECT_SOURCE_DIR}/bench/${path}/bench-${path}.c)
    target_link_libraries(bench-${path} PRIVATE dp_agent dp_node PkgConfig::NGHTTP2 PkgConfig::PROTOBUFC)
    target_compile_definitions(bench-${path} PRIVATE DP_DEVPLANE_PATH="$<TARGET_FILE:devplane>")
    add_dependencies(bench-${path} devplane)
  endif()
endforeach()
