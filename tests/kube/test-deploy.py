# SPDX-License-Identifier: Apache-2.0
"""deploy/: every YAML parses (python3-yaml) into the kinds we ship, with
their required fields; RBAC grants exactly the verbs the agent needs; the
DaemonSet mounts the kubelet's and CDI's host paths and /dev, takes the node
name from the downward API, and its arguments are accepted by the real
binary; the Dockerfile is multi-stage (Debian build, slim runtime); the
systemd unit starts the agent. No cluster here: the manifests are checked,
not applied."""
import os
import re
import subprocess

import yaml

SRC = os.environ["DP_SOURCE_DIR"]
DEVPLANE = os.environ["DEVPLANE"]
D = os.path.join(SRC, "deploy")

objs = {}
for f in sorted(os.listdir(D)):
    if f.endswith(".yaml"):
        for o in yaml.safe_load_all(open(os.path.join(D, f))):
            assert o and o.get("apiVersion") and o.get("kind") and o["metadata"].get("name"), (f, o)
            objs.setdefault(o["kind"], []).append(o)
kinds = sorted(objs)
assert kinds == ["ClusterRole", "ClusterRoleBinding", "DaemonSet", "DeviceClass", "Namespace", "ServiceAccount"], kinds
print("ok - deploy/*.yaml parse: %s" % ", ".join("%s x%d" % (k, len(objs[k])) for k in kinds))

ns = objs["Namespace"][0]["metadata"]["name"]
sa = objs["ServiceAccount"][0]
assert sa["metadata"]["namespace"] == ns
role = objs["ClusterRole"][0]
grants = {}
for r in role["rules"]:
    assert set(r) == {"apiGroups", "resources", "verbs"}, r
    for g in r["apiGroups"]:
        for res in r["resources"]:
            grants[(g, res)] = sorted(r["verbs"])
assert grants == {
    ("resource.k8s.io", "resourceslices"): sorted(["create", "update", "delete", "get", "list", "watch"]),
    ("resource.k8s.io", "resourceclaims"): sorted(["get", "list", "watch"]),
    ("", "nodes"): ["get"],
}, grants
b = objs["ClusterRoleBinding"][0]
assert b["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role["metadata"]["name"]}
assert b["subjects"] == [{"kind": "ServiceAccount", "name": sa["metadata"]["name"], "namespace": ns}], b["subjects"]
print("ok - RBAC: exactly resourceslices create/update/delete/get/list/watch, resourceclaims get/list/watch, "
      "nodes get; bound to %s/%s" % (ns, sa["metadata"]["name"]))

ds = objs["DaemonSet"][0]
assert ds["apiVersion"] == "apps/v1" and ds["metadata"]["namespace"] == ns
spec = ds["spec"]
assert spec["selector"]["matchLabels"].items() <= spec["template"]["metadata"]["labels"].items()
pod = spec["template"]["spec"]
assert pod["serviceAccountName"] == sa["metadata"]["name"]
c = pod["containers"][0]
assert c["image"] and c["args"][0] == "agent"
env = {e["name"]: e for e in c["env"]}
assert env["NODE_NAME"]["valueFrom"] == {"fieldRef": {"fieldPath": "spec.nodeName"}}
assert "--node-name=$(NODE_NAME)" in c["args"] and "--in-cluster" in c["args"] and "--dra" in c["args"]
vols = {v["name"]: v["hostPath"]["path"] for v in pod["volumes"]}
mounts = {m["mountPath"]: vols[m["name"]] for m in c["volumeMounts"]}
for p in ("/var/lib/kubelet/device-plugins", "/var/lib/kubelet/plugins", "/var/lib/kubelet/plugins_registry",
          "/var/run/cdi", "/dev"):
    assert mounts.get(p) == p, (p, mounts)
flags = {a.split("=", 1)[0]: a.split("=", 1)[1] for a in c["args"][1:] if "=" in a}
for flag, path in (("--plugin-dir", "/var/lib/kubelet/device-plugins"), ("--plugins-dir", "/var/lib/kubelet/plugins"),
                   ("--registry-dir", "/var/lib/kubelet/plugins_registry"), ("--cdi-dir", "/var/run/cdi")):
    assert flags[flag] == path and path in mounts, flag
port = int(flags["--metrics-addr"].rsplit(":", 1)[1])
assert {"name": "metrics", "containerPort": port} in c["ports"]
r = subprocess.run([DEVPLANE] + c["args"] + ["--help"], capture_output=True, text=True)
assert r.returncode == 0, r.stderr
print("ok - DaemonSet: host paths %s, NODE_NAME from spec.nodeName, %d args accepted by the binary"
      % (", ".join(sorted(mounts)), len(c["args"])))

drivers = set()
for dc in objs["DeviceClass"]:
    assert dc["apiVersion"] == "resource.k8s.io/v1"
    exprs = [s["cel"]["expression"] for s in dc["spec"]["selectors"]]
    assert exprs and all("device.driver == '" in e for e in exprs), exprs
    drivers |= {re.search(r"device.driver == '([^']+)'", e).group(1) for e in exprs}
profiles = set()
for f in os.listdir(os.path.join(SRC, "profiles")):
    for o in yaml.safe_load_all(open(os.path.join(SRC, "profiles", f))):
        profiles.add(o["spec"]["driverName"])
assert profiles <= drivers, (profiles, drivers)
print("ok - DeviceClasses %s cover every built-in profile's driver %s"
      % (sorted(d["metadata"]["name"] for d in objs["DeviceClass"]), sorted(profiles)))

df = open(os.path.join(D, "Dockerfile")).read()
froms = re.findall(r"^FROM (\S+)(?: AS (\S+))?", df, re.M)
assert len(froms) == 2 and froms[0][0].startswith("debian:") and froms[0][1] == "build", froms
assert froms[1][0].startswith("debian:") and froms[1][0].endswith("-slim"), froms
runtime = df.split("FROM " + froms[1][0], 1)[1]
assert "COPY --from=build" in runtime and "-dev" not in runtime and "cmake" not in runtime
ldd = subprocess.run(["ldd", DEVPLANE], capture_output=True, text=True).stdout
for lib, pkg in (("libyaml-0", "libyaml-0-2"), ("libnghttp2", "libnghttp2-14"), ("libprotobuf-c", "libprotobuf-c1"),
                 ("libpcre2-8", "libpcre2-8-0")):
    assert lib in ldd and pkg in runtime, (lib, pkg)
# libcurl is dlopen()ed for --in-cluster (the DaemonSet's mode), so the image
# carries it although the binary does not link it (kube/curl-api.h).
assert "libcurl" not in ldd and "libcurl4" in runtime, ldd
print("ok - Dockerfile: build on %s, run on %s with the runtime libraries the binary links, and libcurl4 "
      "(dlopen()ed for the API)" % (froms[0][0], froms[1][0]))

unit = open(os.path.join(D, "devplane-agent.service")).read()
for sec in ("[Unit]", "[Service]", "[Install]"):
    assert sec in unit, sec
exec_start = re.search(r"^ExecStart=(.*(?:\\\n.*)*)", unit, re.M).group(1).replace("\\\n", " ").split()
assert exec_start[1] == "agent", exec_start
r = subprocess.run([DEVPLANE] + exec_start[1:] + ["--help"], capture_output=True, text=True)
assert r.returncode == 0, r.stderr
print("ok - systemd unit: ExecStart `devplane %s` accepted by the binary" % " ".join(exec_start[1:4]))
