#!/usr/bin/env bash
# Bad input on the V1 node path: profiles, configs, manifests, flags. Each
# gets one clear error naming the file, the object and field path and the
# rule, and exit status 2; a running node reports a bad manifest in its
# status and keeps serving the good ones.
source "$(dirname "$0")/v1-lib.sh"

# expect2 PATTERN CMD...: exit status 2 and stderr matching PATTERN (grep -E)
expect2() {
        local pat=$1 rc=0
        shift
        "$@" >"$T/out" 2>"$T/err" || rc=$?
        [ $rc -eq 2 ] || fail "$* -> exit $rc, want 2 ($(cat "$T/err"))"
        grep -Eq -- "$pat" "$T/err" || fail "$*: error does not match '$pat': $(cat "$T/err")"
        pass "exit 2: $(grep -E -- "$pat" "$T/err" | head -1 | cut -c1-160)"
}
A=("$DEVPLANE" agent --plugin-dir "$PD" --state-dir "$ST" --node-name n)

expect2 'no-such-profile' "${A[@]}" --profile no-such-profile
cat >"$T/prof.yaml" <<'YAML'
apiVersion: devplane.io/v1alpha1
kind: DeviceProfile
metadata: {name: broken}
spec:
  domain: example.com
  devices:
  - count: 2
    numaNode: banana
YAML
expect2 'prof.yaml.*numaNode' "${A[@]}" --profile "$T/prof.yaml"
printf 'apiVersion: devplane.io/v1alpha1\nkind: DeviceProfile\nmetadata: {name: x}\nspec: {domain: "Not A Domain", devices: [{count: 1}]}\n' >"$T/prof2.yaml"
expect2 'prof2.yaml.*domain' "${A[@]}" --profile "$T/prof2.yaml"
printf 'version: v1\nflags:\n  migStrategy: sometimes\n' >"$T/c1.yaml"
expect2 'c1.yaml.*flags.migStrategy.*none, single, mixed' "${A[@]}" --config "$T/c1.yaml"
printf 'version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: -3\n' >"$T/c2.yaml"
expect2 'c2.yaml.*sharing.timeSlicing.resources\[0\].replicas' "${A[@]}" --config "$T/c2.yaml"
printf 'version: v1\nflags: {migStrategy: none\n' >"$T/c3.yaml"
expect2 'c3.yaml:[0-9]+:[0-9]+' "${A[@]}" --config "$T/c3.yaml"
expect2 'no-such.yaml' "${A[@]}" --config "$T/no-such.yaml"
printf 'version: v1\nflags: {migStrategy: single}\n' >"$T/c4.yaml"
expect2 'single cannot be used' "${A[@]}" --profile a100-mixed --config "$T/c4.yaml"
# only regular files are read: a pipe is refused, never waited on
expect2 'not a regular file \(a FIFO\)' "${A[@]}" --config <(printf 'version: v1\n')
expect2 'unexpected argument' "$DEVPLANE" agent stray
expect2 'must be mock, pci, devglob or nvml' "${A[@]}" --backend gpu-magic
expect2 'must be healthy or unhealthy' "$DEVPLANE" agent health --state-dir "$ST" set gpu-0 sickly
expect2 'not a directory' "$DEVPLANE" node --plugin-dir "$PD" --manifests "$T/none"
expect2 'must be table, json, yaml or flat' "$DEVPLANE" node status --plugin-dir "$PD" -o xml

# manifests: `node check` exits 2 naming file, object, field path, rule
mkdir -p "$T/m2"
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n    resources: {limits: {nvidia.com/gpu: 1}, requests: {nvidia.com/gpu: 2}}\n' >"$T/m2/a.yaml"
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: q}\nspec:\n  containers:\n  - name: a\n    resources: {limits: {gpu.example/too/many: 1}}\n' >"$T/m2/b.yaml"
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: r}\nspec: {containers: [{name: a, resources: {limits: {nvidia.com/gpu: 0.5}}}]}\n' >"$T/m2/c.yaml"
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\nspec: {containers: [{name: z}]}\n' >"$T/m2/g.yaml"
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: s\nspec: {}\n' >"$T/m2/e.yaml"
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\nspec: {containers: [{name: a, resources: {limits: {nvidia.com/gpu: 2}}}]}\n' >"$T/m2/f.yaml"
rc=0
"$DEVPLANE" node check --manifests "$T/m2" >"$T/out" 2>"$T/err" || rc=$?
[ $rc -eq 2 ] || fail "node check: exit $rc"
for pat in 'a.yaml: Pod default/p: spec.containers\[0\].resources.requests\[nvidia.com/gpu\]: must be equal to nvidia.com/gpu limit' \
           'b.yaml: Pod default/q: spec.containers\[0\].resources.limits\[gpu.example/too/many\]: .*not a valid extended resource name' \
           'c.yaml: Pod default/r: spec.containers\[0\].resources.limits\[nvidia.com/gpu\]: "0.5": must be a whole number' \
           'g.yaml: Pod default/ok: metadata.name: Duplicate value' \
           'e.yaml:[0-9]+:[0-9]+: invalid YAML'; do
        grep -Eq -- "$pat" "$T/err" || fail "node check: no error matching '$pat' in: $(cat "$T/err")"
done
grep -q "ok .*f.yaml: Pod default/ok uid=.* a:nvidia.com/gpu=2" "$T/out" || fail "node check: good manifest not listed"
pass "node check: 5 bad manifests named with field paths, exit 2; the good one listed"

# a running node: bad manifests are reported in status, good pods still run
cp "$T/m2/"*.yaml "$MF/"
start_node
start_agent
wait_status "pod default/ok phase=Running" "manifest-error c.yaml" "manifest-error a.yaml"
flat | grep -q '^manifest-error c.yaml .*"0.5": must be a whole number' || fail "status lacks the manifest error"
"$DEVPLANE" node status --plugin-dir "$PD" | grep -q "MANIFEST ERRORS" || fail "table lacks manifest errors"
pass "running node: bad manifests in status, good pod admitted"
rm "$MF/c.yaml"
wait_status "!manifest-error c.yaml"
pass "fixed manifest: error gone"
