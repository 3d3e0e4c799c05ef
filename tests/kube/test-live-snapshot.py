# SPDX-License-Identifier: Apache-2.0
"""`devplane simulate/explain --kubeconfig` against the fake API server over HTTPS.

tests/kube/fakeapi.py answers the cluster-wide LISTs as kube-apiserver does
(<Kind>List, metadata.resourceVersion and continue, items without
kind/apiVersion, pages smaller than the limit). Covered:
  1. the snapshot simulates: Node objects are the nodes, bound pods stay
     where they are (their claim holds its device, their extended resources
     count), only unbound pods are scheduled; every page is read
     (limit/continue); devicetaintrules not served (404) is left out;
     finished pods are not listed (fieldSelector); only GET requests;
  2. -f adds workloads on top, what-if flags apply, explain works;
  3. --context picks the context; --in-cluster (token file, ca.crt);
  4. clear errors, exit 2: 401 (bad token), 403 (RBAC), 410 (continue
     expired), no server.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fakeapi import FakeAPI  # noqa: E402

DEVPLANE = os.environ["DEVPLANE"]
TOKEN = "live-token-0123456789"


def node(name, gpus=None, taints=None, unschedulable=False):
    alloc = {"cpu": "16", "memory": "64Gi", "pods": "110", "ephemeral-storage": "100Gi"}
    if gpus:
        alloc["nvidia.com/gpu"] = str(gpus)
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": "uid-" + name, "resourceVersion": "10",
                         "creationTimestamp": "2026-01-01T00:00:00Z",
                         "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"},
                         "managedFields": [{"manager": "kubelet", "operation": "Update", "apiVersion": "v1",
                                            "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1",
                                            "fieldsV1": {"f:status": {}}}]},
            "spec": dict({"podCIDR": "10.0.0.0/24", "podCIDRs": ["10.0.0.0/24"]},
                         **({"taints": taints} if taints else {}),
                         **({"unschedulable": True} if unschedulable else {})),
            "status": {"capacity": dict(alloc), "allocatable": alloc,
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                       "lastHeartbeatTime": "2026-01-01T00:00:00Z"}],
                       "addresses": [{"type": "InternalIP", "address": "172.18.0.2"}],
                       "nodeInfo": {"kubeletVersion": "v1.35.0", "architecture": "amd64"},
                       "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}}}}


def pod(name, ns, node_name=None, limits=None, claim=None, phase="Running", generate=False):
    spec = {"containers": [{"name": "c", "image": "x", "resources": {}, "terminationMessagePath": "/dev/termination-log",
                            "imagePullPolicy": "IfNotPresent"}],
            "restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler",
            "serviceAccountName": "default", "terminationGracePeriodSeconds": 30, "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority", "priority": 0, "securityContext": {},
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                             "tolerationSeconds": 300},
                            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}
    if node_name:
        spec["nodeName"] = node_name
    if limits:
        spec["containers"][0]["resources"]["limits"] = limits
    status = {"phase": phase, "qosClass": "BestEffort"}
    if claim:
        spec["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
        status["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": claim}]
    meta = {"namespace": ns, "uid": "uid-" + name, "resourceVersion": "20"}
    meta["generateName" if generate else "name"] = name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def cluster(api):
    api.objects = {
        "nodes": [node("gpu-%d" % i, gpus=2) for i in range(3)] +
                 [node("dra-0", taints=[{"key": "nvidia.com/gpu", "effect": "NoSchedule"}])],
        "pods": [pod("v1-a", "team", "gpu-0", {"nvidia.com/gpu": "2"}),
                 pod("v1-b", "team", "gpu-1", {"nvidia.com/gpu": "1"}),
                 pod("done", "team", "gpu-2", {"nvidia.com/gpu": "2"}, phase="Succeeded"),
                 pod("trainer", "ml", "dra-0", claim="trainer-gpu"),
                 pod("pending-v1", "team", limits={"nvidia.com/gpu": "2"}, phase="Pending"),
                 pod("pending-v1b", "team", limits={"nvidia.com/gpu": "1"}, phase="Pending"),
                 pod("pending-dra", "ml", claim="wants-gpu", phase="Pending")],
        "deviceclasses": [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                           "metadata": {"name": "gpu.nvidia.com", "resourceVersion": "5"},
                           "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}}],
        "resourceslices": [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                            "metadata": {"name": "dra-0-gpu.nvidia.com-abcde", "resourceVersion": "7",
                                         "generateName": "dra-0-gpu.nvidia.com-",
                                         "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "dra-0",
                                                              "uid": "uid-dra-0", "controller": True}]},
                            "spec": {"driver": "gpu.nvidia.com", "nodeName": "dra-0",
                                     "pool": {"name": "dra-0", "generation": 1, "resourceSliceCount": 1},
                                     "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}}],
        "resourceclaims": [
            {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "trainer-gpu", "namespace": "ml", "uid": "c1", "resourceVersion": "30"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                 "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1}}]}},
             "status": {"allocation": {"devices": {"results": [
                 {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "dra-0", "device": "gpu-0"}]},
                 "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                     {"key": "metadata.name", "operator": "In", "values": ["dra-0"]}]}]}},
                 "reservedFor": [{"resource": "pods", "name": "trainer", "uid": "uid-trainer"}]}},
            {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "wants-gpu", "namespace": "ml", "uid": "c2", "resourceVersion": "31"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                 "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1}}]}}}],
        "resourceclaimtemplates": [],
    }
    api.missing = {"devicetaintrules"}
    api.page_size = 2  # fewer than the limit asked: the client must follow continue


def run(args, env=None, ok=True):
    p = subprocess.run([DEVPLANE] + args, capture_output=True, text=True, env=env, timeout=120)
    if ok and p.returncode != 0:
        raise AssertionError("%s: exit %d: %s" % (args, p.returncode, p.stderr))
    return p


def line_of(out, key):
    for l in out.splitlines():
        if l.startswith(key + " "):
            return l.split()
    raise AssertionError("no %s in:\n%s" % (key, out))


def main():
    t = tempfile.mkdtemp(prefix="dp-kube-live.")
    api = FakeAPI(TOKEN, "unused", "unused", t)
    port = api.start()
    cluster(api)
    kc = os.path.join(t, "kubeconfig")
    with open(kc, "w") as f:
        f.write("apiVersion: v1\nkind: Config\ncurrent-context: other\n"
                "clusters:\n- name: fake\n  cluster:\n    server: https://127.0.0.1:%d\n"
                "    certificate-authority: ca.crt\n"
                "- name: nowhere\n  cluster:\n    server: https://127.0.0.1:1\n    certificate-authority: ca.crt\n"
                "users:\n- name: viewer\n  user:\n    token: %s\n- name: bad\n  user:\n    token: wrong\n"
                "contexts:\n- name: test\n  context: {cluster: fake, user: viewer}\n"
                "- name: badtoken\n  context: {cluster: fake, user: bad}\n"
                "- name: other\n  context: {cluster: nowhere, user: viewer}\n" % (port, TOKEN))
    live = ["--kubeconfig", kc, "--context", "test"]

    # 1. the snapshot
    out = run(["simulate"] + live).stdout
    assert out.startswith("Cluster (API server): "), out.splitlines()[0]
    assert line_of(out, "ml/trainer")[1:4] == ["Running", "dra-0", "V2"], out
    assert line_of(out, "team/v1-a")[1:3] == ["Running", "gpu-0"], out
    assert "team/done" not in out, out
    # gpu-0 is full, gpu-1 has 1 left, gpu-2 2 (the finished pod holds nothing)
    assert line_of(out, "team/pending-v1")[1:3] == ["Running", "gpu-2"], out
    assert line_of(out, "team/pending-v1b")[1:3] == ["Running", "gpu-1"], out
    assert line_of(out, "ml/pending-dra")[1:4] == ["Running", "dra-0", "V2"], out
    assert "gpu-1" in line_of(out, "ml/pending-dra"), out  # gpu-0 is the trainer's
    gets = [(m, p) for m, p, c in api.log]
    assert all(m == "GET" for m, _ in gets), gets
    assert not api.violations, api.violations
    pages = [p for _, p in gets if p.startswith("/api/v1/nodes")]
    assert len(pages) == 2 and "continue=nodes%3A2" in pages[1], pages
    assert any("devicetaintrules" in p for _, p in gets), gets
    print("ok - snapshot: Node objects, bound pods, paging (%d GETs, no writes), 404 API left out" % len(gets))

    # 2. workloads on top, what-if, explain
    w = os.path.join(t, "work.yaml")
    with open(w, "w") as f:
        json.dump(pod("perf-", "team", limits={"nvidia.com/gpu": "1"}, phase="Pending", generate=True), f)
    out = run(["simulate"] + live + ["-f", w]).stdout
    assert out.startswith("Cluster (API server and 1 file): "), out.splitlines()[0]
    perf = [l for l in out.splitlines() if l.startswith("team/perf-")]
    assert perf and perf[0].split()[1] == "Pending" and "Insufficient nvidia.com/gpu" in perf[0], out
    out = run(["simulate"] + live + ["--cordon", "gpu-2"]).stdout
    assert line_of(out, "team/pending-v1")[1] == "Pending", out
    out = run(["simulate"] + live + ["--fail-device", "dra-0/gpu-1"]).stdout
    assert line_of(out, "ml/pending-dra")[1] == "Pending", out
    out = run(["explain", "pending-dra", "-n", "ml"] + live + ["--fail-device", "dra-0/gpu-1"]).stdout
    assert "Pod ml/pending-dra: Pending" in out and "dra-0" in out, out
    assert "(cluster (API server))" in out.splitlines()[0], out
    print("ok - -f on top of the snapshot, --cordon, --fail-device, explain")

    # 3. in-cluster credentials
    sa = os.path.join(t, "sa")
    os.mkdir(sa)
    with open(os.path.join(sa, "token"), "w") as f:
        f.write(TOKEN)
    with open(os.path.join(sa, "namespace"), "w") as f:
        f.write("default")
    with open(api.ca) as src, open(os.path.join(sa, "ca.crt"), "w") as dst:
        dst.write(src.read())
    env = dict(os.environ, KUBERNETES_SERVICE_HOST="127.0.0.1", KUBERNETES_SERVICE_PORT=str(port))
    out = run(["simulate", "--in-cluster", "--service-account-dir", sa], env=env).stdout
    assert line_of(out, "ml/trainer")[1] == "Running", out
    print("ok - --in-cluster")

    # 4. errors: exit 2, one clear line, no report
    def fails(args, want):
        p = run(args, ok=False)
        assert p.returncode == 2 and not p.stdout, (args, p.returncode, p.stdout)
        assert want in p.stderr, (args, p.stderr)
    fails(["simulate", "--kubeconfig", kc, "--context", "badtoken"], "refused the credentials")
    fails(["simulate", "--kubeconfig", kc], "cannot reach the API server https://127.0.0.1:1")
    api.forbidden = {"pods"}
    fails(["simulate"] + live, 'forbidden (403): the user may not list it: pods is forbidden')
    api.forbidden = set()
    api.expire_continue = True
    fails(["explain", "ml/trainer"] + live, "410 Gone")
    api.expire_continue = False
    fails(["simulate", "--context", "test"], "--context needs --kubeconfig")
    assert all(m == "GET" for m, p, c in api.log), api.log
    print("ok - 401, 403, 410, unreachable: exit 2 with the reason; still only GET")
    api.stop()


if __name__ == "__main__":
    main()
