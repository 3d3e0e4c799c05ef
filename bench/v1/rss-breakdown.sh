#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# rss-breakdown.sh — what the resident memory of `devplane agent` (V1,
# profile a100-80gb-8 unless given) is made of, once `devplane node` shows it
# registered and its devices connected: /proc/PID/status (VmRSS, RssAnon,
# RssFile), then /proc/PID/smaps summed per mapping name (the executable,
# each library, [heap], [stack], anonymous mappings, thread stacks), Rss and
# its anonymous part, largest first; the thread count. The agent trims its
# file pages DP_AGENT_RSS_TRIM ms (default 100) after registering: the
# figures are read once it has (its log says so), or at once with
# DP_AGENT_RSS_TRIM=0.
#
#   bench/v1/rss-breakdown.sh BUILD_DIR [PROFILE]
#   DP_AGENT_RSS_TRIM=0 bench/v1/rss-breakdown.sh BUILD_DIR [PROFILE]
set -euo pipefail
BUILD=$(cd "${1:?usage: rss-breakdown.sh BUILD_DIR [PROFILE]}" && pwd)
PROFILE=${2:-a100-80gb-8}
DEV=$BUILD/devplane
[ -x "$DEV" ] || { echo "build devplane in $BUILD first" >&2; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/dp-rss-v1.XXXXXX")
PIDS=()
cleanup() {
        for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
        for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
        rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T/pd" "$T/mf" "$T/st"
"$DEV" node --plugin-dir "$T/pd" --manifests "$T/mf" --node-name node-a >"$T/node.log" 2>&1 &
node=$!
PIDS+=("$node")
"$DEV" node status --plugin-dir "$T/pd" --timeout 20 --wait "node node-a running pid=$node" -o flat >/dev/null
"$DEV" agent --plugin-dir "$T/pd" --node-name node-a --state-dir "$T/st" --profile "$PROFILE" -v >"$T/agent.log" 2>&1 &
agent=$!
PIDS+=("$agent")
"$DEV" node status --plugin-dir "$T/pd" --timeout 20 \
        --wait "resource nvidia.com/gpu capacity=8 allocatable=8 inuse=0 plugin=connected" -o flat >/dev/null ||
        { cat "$T/agent.log" >&2; exit 1; }
if [ "${DP_AGENT_RSS_TRIM:-}" != 0 ]; then
        { timeout 20 tail -n +1 -F "$T/agent.log" 2>/dev/null || true; } | grep -q -m1 'rss trim 1:' ||
                { cat "$T/agent.log" >&2; exit 1; }
        # the trim logs, then drops the pages and goes back to epoll_wait
        for _ in $(seq 1000); do grep -q epoll "/proc/$agent/wchan" && break; done
        echo "after the trim: $(grep 'rss trim 1:' "$T/agent.log")"
fi
grep -E '^(VmRSS|RssAnon|RssFile|RssShmem|VmHWM|Threads):' "/proc/$agent/status" | tr -s ' \t' ' '
awk '
/^[0-9a-f]+-[0-9a-f]+ / { name = (NF >= 6) ? $6 : "[anon]"; sub(/.*\//, "", name); next }
/^Rss:/       { rss[name] += $2 }
/^Anonymous:/ { anon[name] += $2 }
END { for (n in rss) if (rss[n] > 0) printf "%8d KiB rss %8d KiB anon  %s\n", rss[n], anon[n], n }
' "/proc/$agent/smaps" | sort -rn
