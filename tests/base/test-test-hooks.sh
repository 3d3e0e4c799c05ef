#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# base/test-hooks.h and cmake/check-test-hooks.cmake: a test hook's name and
# its getenv are in a build with DP_TEST_HOOKS and in no other (even at -O0),
# and the check run after every Release link fails on a binary that holds a
# hook (this test build's devplane) and passes on one that does not.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok - $*"; }
: "${DEVPLANE:?}" "${DP_SOURCE_DIR:?}"
T=$(mktemp -d "${TMPDIR:-/tmp}/dp-test-hooks.XXXXXX")
trap 'rm -rf "$T"' EXIT
CC=${CC:-cc}
check() { cmake -DBINARY="$1" -DSOURCE_DIR="$DP_SOURCE_DIR" -P "$DP_SOURCE_DIR/cmake/check-test-hooks.cmake" 2>&1; }

# The test build's devplane has the hook (test-v2-node-restart.sh uses it),
# and the check refuses it, naming it.
grep -q -a DP_NODE_DRA_CRASH "$DEVPLANE" ||
        fail "$DEVPLANE has no DP_NODE_DRA_CRASH: the test configuration must build with DP_TEST_HOOKS"
if out=$(check "$DEVPLANE"); then fail "the check passed a binary with test hooks: $out"; fi
# CMake wraps a message at a width, so where the line breaks depends on the
# length of the binary's path: compare with the whitespace folded.
tr -s ' \n' '  ' <<<"$out" | grep -q "holds DP_NODE_DRA_CRASH" || fail "check output: $out"
pass "check-test-hooks refuses a binary with DP_NODE_DRA_CRASH"

# One hook used as dra-manager.c uses it, compiled with and without hooks.
cat >"$T/hook.c" <<'C'
#include <signal.h>
#include <stdio.h>
#include "base/test-hooks.h"
#include "base/macros.h"
int main(void) {
        int crash = streq_ptr(dp_test_hook("DP_NODE_DRA_CRASH"), "after-prepare");
        if (DP_TEST_HOOKS && crash) {
                fputs("DP_NODE_DRA_CRASH=after-prepare: killed\n", stderr);
                raise(SIGKILL);
        }
        return 0;
}
C
for opt in -O0 -O2; do
        $CC $opt -D_GNU_SOURCE -I"$DP_SOURCE_DIR/src" -o "$T/off" "$T/hook.c"
        $CC $opt -D_GNU_SOURCE -DDP_TEST_HOOKS=1 -I"$DP_SOURCE_DIR/src" -o "$T/on" "$T/hook.c"
        check "$T/off" >/dev/null || fail "$opt without hooks: $(check "$T/off")"
        if check "$T/on" >/dev/null; then fail "$opt with hooks: the check passed"; fi
        DP_NODE_DRA_CRASH=after-prepare "$T/off" || fail "$opt without hooks: the hook fired"
        rc=0
        { DP_NODE_DRA_CRASH=after-prepare "$T/on"; } 2>/dev/null || rc=$?
        [ $rc -eq $((128 + 9)) ] || fail "$opt with hooks: exit $rc, want SIGKILL"
        "$T/on" || fail "$opt with hooks, variable unset: exit $?"
        pass "$opt: the hook fires only with DP_TEST_HOOKS, and only then is its name in the binary"
done
