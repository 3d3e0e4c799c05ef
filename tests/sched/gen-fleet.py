#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# A large simulate input for the HTML report tests (tests/sched/report-scale.sh):
#   gen-fleet.py NODES PODS [--long-names] [--small-profile=FILE] > fleet.yaml
# NODES a100 nodes in three groups (V1, V2, both with a taint), PODS pods in
# Deployments, Jobs and StatefulSets of a few sizes plus unowned pods (one in
# twenty), asking 1, 2 or 4 GPUs through limits (a workload in ten through a
# claim template, the costlier path to simulate); more GPUs asked than there
# are, a node selector no node has, a taint few tolerate: so pods stay
# Pending for several reasons. Deterministic (no randomness).
# --long-names: group and workload names of 60+ characters sharing long
# prefixes (nodes differ only at the end of their names).
# --small-profile=FILE: 4 more nodes (V2) of that DeviceProfile file (a node
# with one or two devices draws a narrow card).
import sys

args = [a for a in sys.argv[1:] if not a.startswith("--")]
long_names = "--long-names" in sys.argv
small = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--small-profile=")]
nodes, pods = int(args[0]), int(args[1])
pre = "a-very-long-name-prefix-that-goes-on-and-on-for-the-layout-" if long_names else ""
out = []
w = out.append
w("apiVersion: devplane.io/v1alpha1\nkind: Fleet\nmetadata: {name: gen-%d}\nspec:\n  scoring: binpack\n  nodeGroups:\n" % nodes)
n_v1 = nodes * 45 // 100
n_both = nodes // 10
n_v2 = nodes - n_v1 - n_both
for name, cnt, model, extra in (("v1", n_v1, "v1", ""), ("v2", n_v2, "v2", ""),
                                ("both", n_both, "both",
                                 "    taints: [{key: dedicated, value: batch, effect: NoSchedule}]\n")):
    if cnt:
        w("  - name: %s%s\n    profile: a100-80gb-8\n    count: %d\n    model: %s\n    labels: {pool: %s}\n%s"
          % (pre, name, cnt, model, name, extra))
if small:
    w("  - name: %ssm\n    profile: %s\n    count: 4\n    model: v2\n    labels: {pool: small}\n" % (pre, small[0]))
w("---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.nvidia.com}\n"
  "spec:\n  selectors:\n  - cel: {expression: \"device.driver == 'gpu.nvidia.com' && "
  "device.attributes['gpu.nvidia.com'].type == 'gpu'\"}\n")
for k in (1, 2, 4):
    w("---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: gpus-%d}\n"
      "spec:\n  spec:\n    devices:\n      requests:\n      - name: gpu\n"
      "        exactly: {deviceClassName: gpu.nvidia.com, count: %d}\n" % (k, k))


def pod_spec(i, indent):
    k = (1, 1, 1, 1, 2, 4)[i % 6]
    s = ""
    if i % 17 == 0:
        s += "nodeSelector: {pool: nowhere}\n"
    if i % 5 == 0:
        s += "tolerations: [{key: dedicated, operator: Equal, value: batch, effect: NoSchedule}]\n"
    if i % 10 != 1:
        s += "containers:\n- name: c\n  image: x\n  resources: {limits: {nvidia.com/gpu: %d}}\n" % k
    else:
        s += ("containers:\n- name: c\n  image: x\n  resources: {claims: [{name: g}]}\n"
              "resourceClaims:\n- {name: g, resourceClaimTemplateName: gpus-%d}\n" % k)
    return "".join(indent + line + "\n" for line in s.splitlines())


kinds = (("apps/v1", "Deployment", "replicas"), ("batch/v1", "Job", "parallelism"),
         ("apps/v1", "StatefulSet", "replicas"))
sizes = (200, 100, 50, 20, 5)
left, i, wl = pods, 0, 0
loose = []
while left > 0:
    if wl % 20 == 19 and len(loose) < pods // 20:
        loose.append(wl)
        left -= 1
        wl += 1
        continue
    api, kind, field = kinds[wl % 3]
    n = min(sizes[wl % len(sizes)], left)
    name = "%s%s-%d" % (pre, kind.lower(), wl)
    w("---\napiVersion: %s\nkind: %s\nmetadata: {name: %s}\nspec:\n  %s: %d\n" % (api, kind, name, field, n))
    if kind != "Job":
        w("  selector: {matchLabels: {app: %s}}\n" % name[-60:])
    if kind == "StatefulSet":
        w("  serviceName: %s\n" % name[-60:])
    w("  template:\n    metadata: {labels: {app: %s}}\n    spec:\n" % name[-60:])
    w(pod_spec(wl, "      "))
    left -= n
    wl += 1
if loose:
    w("---\napiVersion: v1\nkind: List\nitems:\n")
    for x in loose:
        w("- apiVersion: v1\n  kind: Pod\n  metadata: {name: %sloose-%d}\n  spec:\n" % (pre, x))
        w(pod_spec(x, "    "))
sys.stdout.write("".join(out))
