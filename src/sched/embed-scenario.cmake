# SPDX-License-Identifier: Apache-2.0
# cmake -DOUT=<file.c> -DIN=<seed.yaml> -P embed-scenario.cmake
# Defines dp_sim_builtin_scenario() (sched/sim.h) over the file's bytes.
file(READ ${IN} _hex HEX)
string(LENGTH "${_hex}" _hexlen)
math(EXPR _len "${_hexlen} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," _bytes "${_hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n" _bytes "${_bytes}")
set(_body "/* Generated from examples/seed.yaml by embed-scenario.cmake; do not edit. */\n#include \"sched/sim.h\"\n\nstatic const char seed[] = {\n${_bytes}0x00};\n\nconst char *dp_sim_builtin_scenario(size_t *ret_len) {\n        if (ret_len) *ret_len = ${_len};\n        return seed;\n}\n")
file(WRITE ${OUT}.tmp "${_body}")
file(RENAME ${OUT}.tmp ${OUT})
