#!/usr/bin/env bash
# Scenario 1: MIG strategies on a100-mixed. mixed: nvidia.com/gpu 4 and
# nvidia.com/mig-1g.10gb 28; none: nvidia.com/gpu 8 and no MIG names;
# single on a mixed node is refused. A pod asking one 1g.10gb gets exactly one
# MIG instance and its env names only it. SIGHUP reloads the config without
# losing allocations.
source "$(dirname "$0")/v1-lib.sh"
printf 'version: v1\nflags:\n  migStrategy: mixed\n' >"$T/mixed.yaml"
printf 'version: v1\nflags:\n  migStrategy: none\n' >"$T/none.yaml"
printf 'version: v1\nflags:\n  migStrategy: single\n' >"$T/single.yaml"

# single on a node mixing MIG and whole GPUs: refused, exit 2, clear error
rc=0
"$DEVPLANE" agent --plugin-dir "$PD" --node-name node-a --state-dir "$ST" --profile a100-mixed --config "$T/single.yaml" \
        2>"$T/err" || rc=$?
[ $rc -eq 2 ] || fail "single on a mixed node: exit $rc, want 2"
grep -qi "single" "$T/err" || fail "single: unclear error: $(cat "$T/err")"
pass "migStrategy single on a mixed node refused: $(tail -1 "$T/err")"

start_node
start_agent --profile a100-mixed --config "$T/mixed.yaml"
wait_status "resource nvidia.com/gpu capacity=4 allocatable=4" "resource nvidia.com/mig-1g.10gb capacity=28 allocatable=28"
pass "mixed: nvidia.com/gpu 4, nvidia.com/mig-1g.10gb 28"

pod mig main=nvidia.com/mig-1g.10gb:1
wait_status "pod default/mig phase=Running"
ids=$(held mig main nvidia.com/mig-1g.10gb)
[ -n "$ids" ] && [ "${ids#*,}" = "$ids" ] || fail "want exactly one MIG instance, got '$ids'"
envv=$(env_of mig main NVIDIA_VISIBLE_DEVICES)
[ "$envv" = "$ids" ] || fail "NVIDIA_VISIBLE_DEVICES='$envv' should name only $ids"
case "$ids" in MIG-*) ;; *) fail "not a MIG uuid: $ids";; esac
pass "pod got one MIG instance $ids, env names only it"

# reload to none: MIG names go away (their plugin socket closes), whole GPUs 8,
# and the pod keeps its MIG instance in the ledger
cp "$T/none.yaml" "$T/mixed.yaml"
kill -HUP "$AGENT_PID"
wait_status "resource nvidia.com/gpu capacity=8 allocatable=8 inuse=0 plugin=connected" \
        "resource nvidia.com/mig-1g.10gb capacity=28 allocatable=0 inuse=1 plugin=disconnected"
[ "$(held mig main nvidia.com/mig-1g.10gb)" = "$ids" ] || fail "allocation lost on reload"
pass "SIGHUP to none: nvidia.com/gpu 8, MIG resource disconnected, allocation kept"

# a bad config on SIGHUP is refused and the running one stays
printf 'version: v1\nflags:\n  migStrategy: sometimes\n' >"$T/mixed.yaml"
kill -HUP "$AGENT_PID"
timeout 20 grep -q -m1 "reload refused" <(tail -n +1 -f --pid=$$ "$T/agent.log") || fail "bad reload not reported"
kill -0 "$AGENT_PID" || fail "agent died on a bad reload"
pass "bad config on SIGHUP refused: $(grep 'reload refused' "$T/agent.log" | tail -1)"
stop "$AGENT_PID"
stop "$NODE_PID"

# none on a fresh node: 8 GPUs, no MIG names at all
rm -rf "$PD" && mkdir -p "$PD" && rm -f "$MF"/*.yaml
start_node
start_agent --profile a100-mixed --config "$T/none.yaml"
wait_status "resource nvidia.com/gpu capacity=8 allocatable=8" "!resource nvidia.com/mig"
pass "none: nvidia.com/gpu 8, no MIG resource"
