#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The differential test against kube-scheduler 1.35 (differential-ksched.py,
# the oracle decompressed from DP_SHARED_DIR into the build directory), a
# short run: a few random clusters, every pod must agree (node, or Pending
# with the same message), first without scores, then with the default
# profile's scores on both sides and with MostAllocated. The long runs are in
# docs/scheduler.md.
set -euo pipefail
: "${DEVPLANE:?}" "${DP_SOURCE_DIR:?}" "${DP_BUILD_DIR:?}"
diff=("$DP_SOURCE_DIR/tests/sched/differential-ksched.py")
/usr/bin/python3 "${diff[@]}" --seed 7 --clusters 12
/usr/bin/python3 "${diff[@]}" --seed 8 --clusters 12 --scores
exec /usr/bin/python3 "${diff[@]}" --seed 9 --clusters 6 --scores --strategy most
