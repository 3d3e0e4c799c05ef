#!/usr/bin/env bash
# The short fault-injection soak of the node path (issue 11): node + agent
# (V1 and V2 on the same GPUs), kill -9 of either at random moments, a
# corrupted checkpoint now and then, restart, and after every round: no device
# held twice, no Running pod without its devices, no claim prepared 10 s after
# its pod went, every checkpoint readable, no V1 pod waiting while GPUs are
# free. Seed 12 adds issue 21's damage: the plugin directory's disk filled
# (a small tmpfs in a user namespace), the checkpoint deleted, state files
# turned into directories or /dev/zero links, a second node on the same
# directory. Fixed seeds so a failure reproduces; the long run (2,000+
# rounds) is in docs/v2-node-path.md.
set -euo pipefail
: "${DEVPLANE:?DEVPLANE must point to the devplane binary}"
HERE=$(cd "$(dirname "$0")" && pwd)
/usr/bin/python3 "$HERE/soak-node.py" --devplane "$DEVPLANE" --rounds 15 --seed 11 --settle-ms 600 \
        --kill-rate 0.6 --corrupt-rate 0.4
/usr/bin/python3 "$HERE/soak-node.py" --devplane "$DEVPLANE" --rounds 20 --seed 12 --settle-ms 600 \
        --kill-rate 0.6 --corrupt-rate 0.3 --missing-rate 0.4 --odd-rate 0.4 --second-rate 0.2 \
        --disk-full-rate 0.3 --tmpfs-size 1m
