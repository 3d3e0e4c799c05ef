# SPDX-License-Identifier: Apache-2.0
"""Answers a user can act on (issue 23) and what reaches the terminal
(issue 21 F9), through the devplane binary on kubectl-shaped input:
  1. owners written with only generateName (Kueue's sample Job, twice in one
     namespace, and a Deployment): their pods are named after the generated
     owner names, the same on every run; a pod name an owner would take from
     a Pod of the input is one clear error;
  2. the commands printed as hints keep the input flags the user gave;
  3. ESC/CR/LF and bidi controls in names reach neither the terminal nor the
     HTML report raw.
"""
import json
import os
import re
import shlex
import subprocess
import tempfile

DEVPLANE = os.environ["DEVPLANE"]


def run(args, ok=True, cwd=None):
    p = subprocess.run([DEVPLANE] + args, capture_output=True, text=True, timeout=120, cwd=cwd)
    if ok and p.returncode != 0:
        raise AssertionError("%s: exit %d: %s" % (args, p.returncode, p.stderr))
    return p


def node(name, gpus=4, labels=None, taints=None):
    alloc = {"cpu": "16", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
    n = {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": name, "labels": dict({"kubernetes.io/hostname": name}, **(labels or {}))},
         "status": {"capacity": dict(alloc), "allocatable": alloc}}
    if taints:
        n["spec"] = {"taints": taints}
    return n


def kueue_job(parallelism, gpus=0):
    """config/samples/sample-job.yaml of Kueue, as `kubectl get -o json` lists it."""
    res = {"requests": {"cpu": "1", "memory": "200Mi"}}
    if gpus:
        res["limits"] = {"nvidia.com/gpu": str(gpus)}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"generateName": "sample-job-", "namespace": "default",
                         "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}},
            "spec": {"parallelism": parallelism, "completions": parallelism, "suspend": False,
                     "template": {"spec": {"containers": [{"name": "dummy-job",
                                                           "image": "registry.k8s.io/e2e-test-images/agnhost:2.53",
                                                           "command": ["/bin/sh"], "args": ["-c", "sleep 60"],
                                                           "resources": res}],
                                           "restartPolicy": "Never"}}}}


def kubectl_list(items):
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def write(t, name, obj):
    p = os.path.join(t, name)
    with open(p, "w") as f:
        json.dump(obj, f)
    return p


def pods_of(out):
    return [l.split()[0] for l in out.split("\n\n")[1].splitlines()[1:]]


def test_generate_name(t):
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment",
              "metadata": {"generateName": "web-", "namespace": "default"},
              "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                       "template": {"metadata": {"labels": {"app": "web"}},
                                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    f = write(t, "jobs.json", kubectl_list([node("n1"), kueue_job(3), kueue_job(2, gpus=1), deploy]))
    out = run(["simulate", "-f", f]).stdout
    pods = pods_of(out)
    assert len(pods) == 7 and len(set(pods)) == 7, pods
    assert not any("deployment-" in p for p in pods), pods
    jobs = sorted({re.sub(r"-\d+$", "", p) for p in pods if p.startswith("default/sample-job-")})
    assert len(jobs) == 2 and all(re.match(r"^default/sample-job-[b-df-hj-np-tv-z2456789]{5}$", j) for j in jobs), jobs
    assert sum(p.startswith("default/web-") for p in pods) == 2, pods
    assert run(["simulate", "-f", f]).stdout == out, "generated names differ between runs"
    p = run(["explain", pods[0], "-f", f])
    assert "Running" in p.stdout, p.stdout
    print("ok - generateName owners: pods %s" % ", ".join(pods))

    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "train-0", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "x"}]}}
    job = kueue_job(2)
    job["metadata"] = {"name": "train", "namespace": "default"}
    f = write(t, "clash.json", kubectl_list([node("n1"), job, pod]))
    p = run(["simulate", "-f", f], ok=False)
    assert p.returncode == 2 and "Job train: its pod default/train-0 has the name of a Pod the input defines" \
        in p.stderr and "unknown error" not in p.stderr, p.stderr
    print("ok - an owner's pod name taken by a Pod of the input: a clear error, exit 2")


def pending_pod(name, gpus, ns="team", **spec):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": dict({"containers": [{"name": "c", "image": "x",
                                          "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}, **spec),
            "status": {"phase": "Pending"}}


def test_hints(t):
    d = os.path.join(t, "my dumps")
    os.mkdir(d)
    f = write(d, "cluster.json", kubectl_list([node("n1", gpus=1), node("n2", gpus=1), pending_pod("big", 2)]))
    cwd = os.path.dirname(d)
    p = run(["explain", "team/big", "-f", f, "--cordon", "n2"], cwd=cwd)
    hint = [l for l in p.stdout.splitlines() if "devplane explain" in l]
    want = "devplane explain team/big -f '%s' --cordon n2 --details" % f
    assert hint and hint[0].endswith(want), (hint, want)
    cmd = shlex.split(hint[0].split(": ", 1)[1])
    assert cmd[0] == "devplane"
    again = run(cmd[1:], cwd=cwd).stdout
    assert "Per node" in again and "cluster.json)" in again.splitlines()[0] and "n2: node(s) were unschedulable" in again, again
    html = os.path.join(t, "r.html")
    run(["simulate", "-f", f, "--report", html])
    page = open(html).read()
    assert "devplane explain pod team/big -f &#39;%s&#39; --details</code>" % f in page, \
        re.findall(r"<code>devplane explain[^<]*</code>", page)
    print("ok - hints keep -f (quoted) and what-if flags; pasted, they read the same input")


RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def test_escape(t):
    owner = "trainer\u202e\u2066gpt\x1b[2J\r\nfake"
    pod = pending_pod("p1", 2, ns="a")
    pod["metadata"]["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": owner, "uid": "u",
                                           "controller": True}]
    f = write(t, "owner.json", kubectl_list([node("n1", gpus=1), pod]))
    html = os.path.join(t, "owner.html")
    out = run(["simulate", "-f", f, "--report", html]).stdout + run(["explain", "a/p1", "-f", f]).stdout
    assert not RAW.search(out), repr(RAW.search(out))
    page = open(html, encoding="utf-8").read()
    assert not RAW.search(page.replace("\n", "")), repr(RAW.search(page.replace("\n", "")))
    assert "trainer\\u{202E}\\u{2066}gpt\\e[2J\\r" in page, re.findall(r"trainer[^<]{0,40}", page)
    bad = pending_pod("bad\x1b]0;owned\x07\r\nok-\u202e", 1, ns="a")
    f = write(t, "name.json", kubectl_list([node("n1"), bad]))
    for cmd in (["simulate", "-f", f], ["explain", "x", "-f", f], ["allocate", "-f", f]):
        p = run(cmd, ok=False)
        assert p.returncode == 2 and p.stderr.count("\n") == 1 and not RAW.search(p.stderr.rstrip("\n")), \
            (cmd, p.stderr)
        assert "bad\\e]0;owned\\x07\\r\\nok-\\u{202E}" in p.stderr, (cmd, p.stderr)
    print("ok - F9: controls and bidi controls in names reach neither the terminal nor the report raw")


def test_answers(t):
    """A 600-node cluster as `kubectl get nodes,pods -o json` lists it: A100,
    H100 and L40S nodes (the L40S ones tainted), a pod asking for B200s, one
    asking for more GPUs than a node has, one asking for more CPU."""
    items = []
    for prod, short in (("NVIDIA-A100-SXM4-80GB", "a100"), ("NVIDIA-H100-80GB-HBM3", "h100"), ("NVIDIA-L40S", "l40s")):
        for i in range(200):
            n = node("%s-%03d" % (short, i), gpus=8, labels={"nvidia.com/gpu.product": prod})
            if short == "l40s":
                n["spec"] = {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]}
            items.append(n)
    items.append(pending_pod("b200", 8, ns="ml", nodeSelector={"nvidia.com/gpu.product": "NVIDIA-B200"}))
    items.append(pending_pod("sixteen", 16, ns="ml"))
    cpu = pending_pod("cpu", 1, ns="ml")
    cpu["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "20"}
    items.append(cpu)
    bound = pending_pod("running", 3, ns="ml", nodeName="a100-000")
    bound["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "1500m"}
    bound["status"]["phase"] = "Running"
    items.append(bound)
    f = write(t, "fleet.json", kubectl_list(items))
    out = run(["explain", "ml/b200", "-f", f]).stdout
    assert "nodeSelector nvidia.com/gpu.product=NVIDIA-B200 matches 0 nodes; the nodes have nvidia.com/gpu.product: " \
        "NVIDIA-A100-SXM4-80GB ×200, NVIDIA-H100-80GB-HBM3 ×200, NVIDIA-L40S ×200" in out, out
    assert "tolerating {key: nvidia.com/gpu, value: present, effect: NoSchedule} passes the taint check on 200 " \
        "nodes (l40s-000, l40s-001, l40s-002, ...)" in out, out
    out = run(["explain", "ml/sixteen", "-f", f]).stdout
    assert "nvidia.com/gpu on a100-000: capacity 8, allocatable 8, requested 3 by 1 pod; this pod asks 16" in out, out
    out = run(["explain", "ml/cpu", "-f", f]).stdout
    assert "cpu on a100-000: capacity 16, allocatable 16, requested 1500m by 1 pod; this pod asks 20" in out, out
    print("ok - explain answers: label values that exist, the toleration that opens nodes, "
          "Node objects' capacity/allocatable/requested")


def dra_cluster(n_nodes):
    """n_nodes Node objects with 2 GPUs each in a ResourceSlice: on two
    thirds both held by running pods' claims, on the others tainted; a pod
    whose claim asks for one GPU."""
    cls = "gpu.example.com"
    items = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": cls},
              "spec": {"selectors": [{"cel": {"expression": "device.driver == '%s'" % cls}}]}}]

    def claim(name, node_name=None, dev=None):
        c = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": "ml"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": cls}}]}}}
        if node_name:
            c["status"] = {"allocation": {"devices": {"results": [{"request": "gpu", "driver": cls, "pool": node_name,
                                                                    "device": dev}]},
                                          "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                              {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}},
                           "reservedFor": [{"resource": "pods", "name": name, "uid": "u-" + name}]}
        return c

    def pod(name, node_name=None):
        p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ml", "uid": "u-" + name},
             "spec": {"containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}],
                      "resourceClaims": [{"name": "gpu", "resourceClaimName": name}]},
             "status": {"phase": "Running" if node_name else "Pending"}}
        if node_name:
            p["spec"]["nodeName"] = node_name
        return p

    for i in range(n_nodes):
        nn = "node-%03d" % i
        items.append(node(nn, gpus=0))
        devs = [{"name": "gpu-%d" % k} for k in range(2)]
        if i % 3 == 2:
            for d in devs:
                d["taints"] = [{"key": "gpu.example.com/xid", "value": "79", "effect": "NoSchedule"}]
        items.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": nn + "-gpu"},
                      "spec": {"driver": cls, "nodeName": nn, "pool": {"name": nn, "generation": 1,
                                                                         "resourceSliceCount": 1}, "devices": devs}})
        if i % 3 != 2:
            for k in range(2):
                c = "train-%03d-%d" % (i, k)
                items += [claim(c, nn, "gpu-%d" % k), pod(c, nn)]
    items += [claim("want"), pod("want")]
    return items


def test_group_by_kind(t):
    f = write(t, "dra.json", kubectl_list(dra_cluster(300)))
    out = run(["explain", "ml/want", "-f", f]).stdout
    groups = re.findall(r"^    on (\d+) of them:$", out, re.M)
    assert groups == ["200", "100"] and "more with other reasons" not in out, out
    assert "in use by claims ml/train-000-0, ml/train-000-1" in out, out
    print("ok - explain groups the allocator's reasons by kind: 300 nodes, 2 groups (%s)" % ", ".join(groups))


def main():
    t = tempfile.mkdtemp(prefix="dp-answers.")
    test_group_by_kind(t)
    test_answers(t)
    test_generate_name(t)
    test_hints(t)
    test_escape(t)


if __name__ == "__main__":
    main()
