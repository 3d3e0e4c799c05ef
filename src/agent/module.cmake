# SPDX-License-Identifier: Apache-2.0
# The agent is also the DRA driver: it calls the driver core (src/dra) and
# reads claims through the model, and publishes through the API (dp_kube).
target_link_libraries(dp_agent PUBLIC dp_dra dp_model dp_kube)
# The V1 node-path benchmark, bench/v1/bench-v1.c: it drives a real `devplane
# agent` process and an in-process node, so it links dp_agent and dp_node and
# knows where the devplane binary is. (It lives under bench/v1/ because
# bench/CMakeLists.txt links its bench-*.c programs with dp_alloc only.)
if(EXISTS ${PROJECT_SOURCE_DIR}/bench/v1/bench-v1.c)
  add_executable(bench-v1 ${PROJECT_SOURCE_DIR}/bench/v1/bench-v1.c)
  target_link_libraries(bench-v1 PRIVATE dp_agent dp_node PkgConfig::NGHTTP2 PkgConfig::PROTOBUFC)
  target_compile_definitions(bench-v1 PRIVATE DP_DEVPLANE_PATH="$<TARGET_FILE:devplane>")
  add_dependencies(bench-v1 devplane)
endif()
# The V2 node-path benchmark, bench/v2/bench-v2.c: NodePrepare/Unprepare
# round trips against a real `devplane agent --dra` and its memory with both
# paths on (an in-process node plays the kubelet).
if(EXISTS ${PROJECT_SOURCE_DIR}/bench/v2/bench-v2.c)
  add_executable(bench-v2 ${PROJECT_SOURCE_DIR}/bench/v2/bench-v2.c)
  target_link_libraries(bench-v2 PRIVATE dp_agent dp_node PkgConfig::NGHTTP2 PkgConfig::PROTOBUFC)
  target_compile_definitions(bench-v2 PRIVATE DP_DEVPLANE_PATH="$<TARGET_FILE:devplane>")
  add_dependencies(bench-v2 devplane)
endif()
