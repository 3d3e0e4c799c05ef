# SPDX-License-Identifier: Apache-2.0
"""deploy/: every YAML parses (python3-yaml) into the kinds we ship, with
their required fields; RBAC grants exactly the verbs the API client in
src/kube calls (derived from its source, not listed by hand); the namespace
allows privileged pods (Pod Security); the admission policy keeps the
agent's ResourceSlice writes to its own node; the DaemonSet mounts the
kubelet's and CDI's host paths and /dev and only ConfigMaps that exist,
takes the node name from the downward API, sets NVIDIA's container
environment, probes /healthz on the metrics port (which the agent serves),
and its arguments are accepted by the real binary; every shipped config
loads; the Dockerfile is multi-stage (Debian build, slim runtime) with
NVIDIA's environment; the systemd unit starts the agent. No cluster here:
the manifests are checked, not applied."""
import os
import re
import select
import socket
import subprocess
import time
import urllib.request

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
assert kinds == ["ClusterRole", "ClusterRoleBinding", "ConfigMap", "DaemonSet", "DeviceClass", "Namespace",
                 "ServiceAccount", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"], kinds
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
# What src/kube calls: each request's method and path, mapped to the verb
# the API server authorizes (a GET of a collection is list, with watch=true
# watch; POST create, PUT update, DELETE delete).
used = {}
KSRC = os.path.join(SRC, "src", "kube")
for f in sorted(os.listdir(KSRC)):
    if not f.endswith(".c") or f == "list.c":
        # list.c reads the snapshot of `devplane simulate/explain --kubeconfig`
        # under the user's own credentials (GET only), never the agent's account
        continue
    text = open(os.path.join(KSRC, f)).read()
    res_of = {"/api/v1/nodes/": ("", "nodes"), "resourceclaims/": ("resource.k8s.io", "resourceclaims"),
              "SLICES_PATH": ("resource.k8s.io", "resourceslices")}
    prev = 0
    for call in re.finditer(r"dp_kube_(request|stream)_start\(([^;]*);", text, re.S):
        # the path is built just above the call, after the previous one
        before = text[max(prev, call.start() - 900):call.end()]
        prev = call.end()
        kind = "stream" if call.group(1) == "stream" else "request"
        m = re.search(r'"(GET|POST|PUT|DELETE|PATCH)"|methods\[', call.group(2))
        if "dp_kube_client *c" in call.group(2):
            continue  # the definitions in client.c, not calls
        local = before.split("\n\n")[-1] + call.group(2)
        keys = [k for k in res_of if k in local] or [k for k in res_of if k in text]
        assert len(keys) == 1, (f, call.group(0), keys)
        for key in keys:
            res = res_of[key]
            if kind == "stream" or "watch=true" in before.split("\n\n")[-1]:
                verbs = {"watch"}
            elif m and m.group(0) == "methods[":
                table = re.search(r"methods\[\] = \{([^}]*)\}", text).group(1)
                verbs = {{"POST": "create", "PUT": "update", "DELETE": "delete"}[x]
                         for x in re.findall(r'"(POST|PUT|DELETE)"', table)}
            elif m and m.group(1) == "GET":
                verbs = {"list"} if key == "SLICES_PATH" else {"get"}
            else:
                continue
            used.setdefault(res, set()).update(verbs)
used = {k: sorted(v) for k, v in used.items()}
assert used == {
    ("resource.k8s.io", "resourceslices"): sorted(["create", "update", "delete", "list", "watch"]),
    ("resource.k8s.io", "resourceclaims"): ["get"],
    ("", "nodes"): ["get"],
}, used
assert grants == used, (grants, used)
b = objs["ClusterRoleBinding"][0]
assert b["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role["metadata"]["name"]}
assert b["subjects"] == [{"kind": "ServiceAccount", "name": sa["metadata"]["name"], "namespace": ns}], b["subjects"]
print("ok - RBAC: exactly the verbs src/kube calls (%s); bound to %s/%s"
      % ("; ".join("%s %s" % (k[1], "/".join(v)) for k, v in sorted(used.items())), ns, sa["metadata"]["name"]))

nsobj = objs["Namespace"][0]
assert nsobj["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged", nsobj
print("ok - namespace %s: Pod Security enforce=privileged" % ns)

agent_user = "system:serviceaccount:%s:%s" % (ns, sa["metadata"]["name"])
vap = objs["ValidatingAdmissionPolicy"][0]
vb = objs["ValidatingAdmissionPolicyBinding"][0]
assert vap["apiVersion"] == vb["apiVersion"] == "admissionregistration.k8s.io/v1"
assert vb["spec"]["policyName"] == vap["metadata"]["name"] and vb["spec"]["validationActions"] == ["Deny"]
rr = vap["spec"]["matchConstraints"]["resourceRules"]
assert any(r["apiGroups"] == ["resource.k8s.io"] and r["resources"] == ["resourceslices"]
           and set(r["operations"]) == {"CREATE", "UPDATE", "DELETE"} for r in rr), rr
assert any(agent_user in c["expression"] for c in vap["spec"]["matchConditions"]), vap["spec"]["matchConditions"]
text = yaml.safe_dump(vap["spec"])
assert "authentication.kubernetes.io/node-name" in text and "spec.nodeName" in text and "oldObject" in text
print("ok - admission policy: %s may create/update/delete only ResourceSlices of its own node" % agent_user)

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
vols = {v["name"]: v["hostPath"]["path"] for v in pod["volumes"] if "hostPath" in v}
cms = {v["name"]: v["configMap"]["name"] for v in pod["volumes"] if "configMap" in v}
assert set(vols) | set(cms) == {v["name"] for v in pod["volumes"]}, pod["volumes"]
shipped = {o["metadata"]["name"]: o for o in objs["ConfigMap"] if o["metadata"]["namespace"] == ns}
for vname, cmname in cms.items():
    assert cmname in shipped, "volume %s mounts ConfigMap %s, which deploy/ does not ship" % (vname, cmname)
mounts = {m["mountPath"]: vols[m["name"]] for m in c["volumeMounts"] if m["name"] in vols}
cm_mounts = {m["mountPath"]: cms[m["name"]] for m in c["volumeMounts"] if m["name"] in cms}
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
# The config directory is the mounted ConfigMap; each of its configs loads.
assert cm_mounts.get(flags["--config-dir"]) == "devplane-agent-config", (flags, cm_mounts)
for key, text in shipped["devplane-agent-config"]["data"].items():
    cf = "/tmp/dp-deploy-config-%d.yaml" % os.getpid()
    with open(cf, "w") as f:
        f.write(text)
    r = subprocess.run([DEVPLANE, "agent", "--dry-run", "--strict-config", "--profile", "a100-80gb-8", "--node-name",
                        "n", "--config-file", cf], capture_output=True, text=True)
    os.unlink(cf)
    assert r.returncode == 0 and r.stdout.startswith("nvidia.com/gpu "), (key, r.stdout, r.stderr)
# NVIDIA's container environment, so the NVIDIA runtime gives the agent NVML.
assert env["NVIDIA_VISIBLE_DEVICES"]["value"] == "all", env
assert env["NVIDIA_DRIVER_CAPABILITIES"]["value"] == "compute,utility", env
# Probes on the metrics port's /healthz, which the agent answers.
for probe in ("startupProbe", "livenessProbe"):
    assert c[probe]["httpGet"] == {"path": "/healthz", "port": "metrics"}, c[probe]
with socket.socket() as so:
    so.bind(("127.0.0.1", 0))
    hport = so.getsockname()[1]
hd = "/tmp/dp-deploy-healthz-%d" % os.getpid()
a = subprocess.Popen([DEVPLANE, "agent", "--node-name", "n", "--plugin-dir", hd, "--state-dir", hd + "/st",
                      "--metrics-addr", "127.0.0.1:%d" % hport], stderr=subprocess.PIPE)
try:
    # The listener is up once the agent says where (its log line).
    buf, deadline = b"", time.monotonic() + 60
    while b"metrics on http://" not in buf and time.monotonic() < deadline:
        if not select.select([a.stderr], [], [], deadline - time.monotonic())[0]:
            break
        chunk = os.read(a.stderr.fileno(), 65536)
        if not chunk:
            break
        buf += chunk
    body = urllib.request.urlopen("http://127.0.0.1:%d/healthz" % hport, timeout=30).read()
    assert body == b"ok\n", body
finally:
    a.terminate()
    a.wait(timeout=60)
    subprocess.run(["rm", "-rf", hd])
print("ok - DaemonSet: host paths %s, ConfigMap %s at %s (every config loads), NODE_NAME from spec.nodeName, "
      "NVIDIA_VISIBLE_DEVICES/NVIDIA_DRIVER_CAPABILITIES, startup and liveness probes on /healthz (served), "
      "%d args accepted by the binary" % (", ".join(sorted(mounts)), ", ".join(sorted(set(cm_mounts.values()))),
                                          ", ".join(sorted(cm_mounts)), len(c["args"])))

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
assert re.search(r"^ENV .*NVIDIA_VISIBLE_DEVICES=all", runtime, re.M), runtime
assert re.search(r"^ENV .*NVIDIA_DRIVER_CAPABILITIES=compute,utility", runtime, re.M), runtime
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
