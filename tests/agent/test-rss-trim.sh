#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The agent's resident-memory trim (src/agent/rss.c) with real `devplane node`
# and `devplane agent` processes: with DP_AGENT_RSS_TRIM=20 the agent drops
# its file pages after registering and again after each burst of calls, and
# still allocates (Allocate), reports health (ListAndWatch) and re-registers;
# with DP_AGENT_RSS_TRIM=0 it never trims; a bad value is refused (exit 2).
# Every wait is on an event: the node's status (inotify) or a line of the
# agent's log (tail -F, inotify), with a timeout.
source "$DP_SOURCE_DIR/tests/tools/v1-lib.sh"

# wait_log FILE PATTERN: until a line of FILE matches (grep -E).
wait_log() {
        { timeout "$WAIT_TIMEOUT" tail -n +1 -F "$1" 2>/dev/null || true; } | grep -q -m1 -E "$2" ||
                fail "waiting for \"$2\" in $1"
}

# trims: how many trims the agent has logged so far.
trims() { grep -c "rss trim [0-9]*: dropping" "$LOG" || true; }

rss_file_kib() { sed -n 's/^RssFile:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status"; }

# ---- bad values: one clear error, exit 2 -----------------------------------
for bad in abc -1 10ms 86400001; do
        set +e
        out=$(DP_AGENT_RSS_TRIM=$bad "$DEVPLANE" agent --plugin-dir "$PD" --state-dir "$ST" 2>&1)
        rc=$?
        set -e
        [ $rc -eq 2 ] || fail "DP_AGENT_RSS_TRIM=$bad: exit $rc, want 2"
        grep -q "DP_AGENT_RSS_TRIM=\"$bad\": must be 0 (off) or milliseconds" <<<"$out" ||
                fail "DP_AGENT_RSS_TRIM=$bad: $out"
done
pass "bad DP_AGENT_RSS_TRIM values refused with exit 2"

start_node

# ---- trim on (20 ms) -----------------------------------------------------
export DP_AGENT_RSS_TRIM=20
start_agent -v
unset DP_AGENT_RSS_TRIM
LOG=$T/agent.log
wait_status "resource nvidia.com/gpu capacity=8 allocatable=8 inuse=0 plugin=connected"
wait_log "$LOG" "rss trim 1: dropping [1-9][0-9]* KiB of start-up's file pages"
after=$(rss_file_kib "$AGENT_PID")
pass "trimmed after registration (RssFile now $after KiB)"

# Allocate after the trim: the pod gets two GPUs with their environment;
# once its calls are over, the agent trims again.
n=$(trims)
pod train main=nvidia.com/gpu:2
wait_status "pod default/train phase=Running"
ids=$(held train main nvidia.com/gpu)
[ "$(tr ',' '\n' <<<"$ids" | grep -c .)" = 2 ] || fail "train/main holds \"$ids\""
[ "$(env_of train main NVIDIA_VISIBLE_DEVICES)" != "" ] || fail "no NVIDIA_VISIBLE_DEVICES after the trim"
wait_log "$LOG" "rss trim $((n + 1)): dropping"
pass "Allocate served after a trim, trimmed again after the burst"

# ListAndWatch after the trim: a health flip and its recovery reach the node.
n=$(trims)
"$DEVPLANE" agent health --state-dir "$ST" set gpu-3 unhealthy
wait_status "resource nvidia.com/gpu capacity=8 allocatable=7"
wait_log "$LOG" "rss trim $((n + 1)): dropping"
"$DEVPLANE" agent health --state-dir "$ST" set gpu-3 healthy
wait_status "resource nvidia.com/gpu capacity=8 allocatable=8"
pass "ListAndWatch updates delivered after trims"

# A second pod after the last trim, and a kubelet restart: re-registration.
pod infer main=nvidia.com/gpu:1
wait_status "pod default/infer phase=Running"
stop "$NODE_PID"
start_node
wait_status "resource nvidia.com/gpu capacity=8 allocatable=8 inuse=3 plugin=connected"
pass "allocation and re-registration after trims"
stop "$AGENT_PID"
grep -q "rss trim 1: .*again after 20 ms" "$LOG" || fail "first trim line does not name the period"

# ---- trim off (0) ------------------------------------------------------------
mv "$LOG" "$T/agent-trim.log"
export DP_AGENT_RSS_TRIM=0
start_agent -v
unset DP_AGENT_RSS_TRIM
wait_status "resource nvidia.com/gpu capacity=8 allocatable=8 inuse=3 plugin=connected"
wait_log "$LOG" "rss trim: off"
pod third main=nvidia.com/gpu:1
wait_status "pod default/third phase=Running"
"$DEVPLANE" agent health --state-dir "$ST" set gpu-5 unhealthy
wait_status "resource nvidia.com/gpu capacity=8 allocatable=7"
stop "$AGENT_PID"
if grep -q "rss trim [0-9]" "$LOG"; then fail "DP_AGENT_RSS_TRIM=0 trimmed: $(grep 'rss trim' "$LOG")"; fi
pass "DP_AGENT_RSS_TRIM=0: no trim"
