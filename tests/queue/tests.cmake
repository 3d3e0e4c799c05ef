# SPDX-License-Identifier: Apache-2.0
# test-kai places pods on nodes with the kube-scheduler engine's node
# predicates (dp_sched_pod_node_allowed), as simulate does: it links dp_sched.
function(_dp_queue_kai_links)
  if(TARGET queue-test-kai)
    target_link_libraries(queue-test-kai PRIVATE dp_sched)
  endif()
endfunction()
cmake_language(DEFER CALL _dp_queue_kai_links)
