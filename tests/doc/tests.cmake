# SPDX-License-Identifier: Apache-2.0
# tests/doc/test-doc-bulk.c counts libyaml parsers: wrap yaml_parser_initialize
# (the test target is created after this file is included: add the option
# once the directory is processed).
function(_dp_doc_bulk_wrap)
  if(TARGET doc-test-doc-bulk)
    target_link_options(doc-test-doc-bulk PRIVATE -Wl,--wrap=yaml_parser_initialize)
  endif()
endfunction()
cmake_language(DEFER CALL _dp_doc_bulk_wrap)

# Fail each allocation of a libyaml parse in turn, libyaml's own included
# (see doc/failmalloc.c).
dp_failmalloc_test(doc)
