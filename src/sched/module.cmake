# SPDX-License-Identifier: Apache-2.0
# Embed the built-in simulate scenario (examples/seed.yaml) into dp_sched, so
# `devplane simulate` without -f needs no data directory.
set(_dp_seed ${PROJECT_SOURCE_DIR}/examples/seed.yaml)
set(_dp_seed_c ${CMAKE_CURRENT_BINARY_DIR}/sched-seed-scenario.c)
add_custom_command(
  OUTPUT ${_dp_seed_c}
  COMMAND ${CMAKE_COMMAND} -DOUT=${_dp_seed_c} -DIN=${_dp_seed}
          -P ${PROJECT_SOURCE_DIR}/src/sched/embed-scenario.cmake
  DEPENDS ${_dp_seed} ${PROJECT_SOURCE_DIR}/src/sched/embed-scenario.cmake
  COMMENT "Embedding the built-in simulate scenario"
  VERBATIM)
target_sources(dp_sched PRIVATE ${_dp_seed_c})
# V2 nodes publish what the DRA driver would (dra/inventory.h, dra/slices.h).
target_link_libraries(dp_sched PUBLIC dp_dra)
# bench/bench-sched.c: bench/CMakeLists.txt links its bench-*.c programs with
# dp_alloc only and is read after the modules, so the scheduler is added to
# that program once the whole tree is configured.
function(_dp_sched_bench_link)
  if(TARGET bench-sched)
    target_link_libraries(bench-sched PRIVATE dp_sched)
  endif()
endfunction()
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL _dp_sched_bench_link)
