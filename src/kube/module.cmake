# SPDX-License-Identifier: Apache-2.0
# libcurl is not linked: kube/curl-load.c dlopen()s libcurl.so.4 when the
# agent is given --kubeconfig or --in-cluster (kube/curl-api.h). Only its
# headers are used at build time (libcurl4-openssl-dev stays a build
# dependency); dlopen/dlsym come from libdl (part of libc since glibc 2.34).
target_include_directories(dp_kube PRIVATE ${CURL_INCLUDE_DIRS})
target_compile_options(dp_kube PRIVATE ${CURL_CFLAGS_OTHER})
target_link_libraries(dp_kube PUBLIC ${CMAKE_DL_LIBS})
