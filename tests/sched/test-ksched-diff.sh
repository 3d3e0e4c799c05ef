#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The differential test against kube-scheduler 1.35 (differential-ksched.py,
# the oracle decompressed from DP_SHARED_DIR into the build directory), a
# short run: a few random clusters, every pod must agree (node, or Pending
# with the same message). The long run is in docs/scheduler.md.
set -euo pipefail
: "${DEVPLANE:?}" "${DP_SOURCE_DIR:?}" "${DP_BUILD_DIR:?}"
exec /usr/bin/python3 "$DP_SOURCE_DIR/tests/sched/differential-ksched.py" --seed 7 --clusters 12
