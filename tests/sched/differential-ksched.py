#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Differential test of `devplane simulate` against the real kube-scheduler.

Random clusters (nodes labelled over zones and hosts, cpu/memory/pods and an
extended resource, taints, cordons; pods with requests or only limits, init
containers, node selectors and required node affinity, tolerations, host
ports, PriorityClasses, creation timestamps, scheduling gates, other
schedulers, DRA claims, pods already bound, pod (anti-)affinity and
topology spread constraints with app/tier labels and namespaces) are generated from a seed and run through `devplane simulate -o
json` and ksched-oracle (kube-scheduler 1.35 as a program, decompressed from
DP_SHARED_DIR at run time, never into the repository). Pod by pod they must
agree: the same node, or both Pending with the same message ("0/6 nodes are
available: 2 Insufficient cpu, 4 node(s) had untolerated taint(s)."), or both
leaving the pod to another scheduler.

Scores: kube-scheduler's default profile spreads (LeastAllocated,
BalancedAllocation, ...), devplane binpacks. Until devplane scores as the
default profile does, both run without scores that tell nodes apart: the
oracle under a profile whose only Score plugin is ImageLocality (no node
lists images, so every feasible node scores 0 and the oracle's tie-break
patch picks the lowest node name; with no Score plugin at all kube-scheduler
takes the first feasible node from a rotating start, not by name) and
devplane with `--scoring none` (the first feasible node in name order). Placement is then decided by the filters, the
queue order and what earlier pods took, which is what this test is about.
With the `preemption` feature the oracle's PostFilter (DynamicResources,
DefaultPreemption) runs, devplane preempts too, Pending pods are compared on
kube-scheduler's whole message (devplane's `message`: "... no new claims to
deallocate, preemption: 0/4 nodes are available: ...") and victims on
(preempted, node); without it PostFilter is off on both sides
(`--no-preemption`).

Features are switched on with --features (default: every implemented one);
another generator plugs in by adding a function to POD_FEATURES or
NODE_FEATURES (name -> fn(rng, cluster, obj), called in that order on each
pod or node), or CLUSTER_FEATURES (name -> fn(rng, cluster) -> objects), and
its name to IMPLEMENTED. `cluster["nodes"]` holds the node names.

With --scores both keep kube-scheduler's default Score plugins: the oracle
runs the default profile (PostFilter still disabled) and devplane reads the
same KubeSchedulerConfiguration with --scheduler-config; --strategy most
adds NodeResourcesFit's MostAllocated to both. The features "prefer"
(PreferNoSchedule taints, tolerations of them, preferred node affinity) and
"softaffinity" (preferred pod affinity / anti-affinity) and "images"
(node.status.images, pods' images: ImageLocality) and "owners" (ReplicaSets and
a StatefulSet without replicas controlling pods: PodTopologySpread's default
constraints) and "services" (Services selecting pods, a ReplicationController
controlling some: the same constraints' selectors) only change scores.

usage: differential-ksched.py [--seed N] [--clusters N] [--features a,b]
                              [--scores [--strategy least|most]]
                              [--oracle PATH] [--devplane PATH] [--keep DIR] [-v]
Exit status 0 when every pod agrees; 1 with the disagreements listed. A pod
Pending on both sides with another message whose message is kube-scheduler's
own timing (timing_pods: the oracle rerun gives devplane's message, or its
log shows a nomination's end reaching the scheduler during that pod's cycle)
is listed with "timing: " and does not fail the run.
"""
import argparse
import importlib.util
import json
import lzma
import os
import random
import shutil
import subprocess
import sys
import tempfile

import yaml

ORACLE_XZ = "tools/kube-scheduler/ksched-oracle-v1.35.4.xz"
GPU = "example.com/gpu"
ZONES = ["zone-a", "zone-b", "zone-c"]
GATE = "example.com/admission"
PROFILE = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      disabled: [{name: "*"}]
      enabled: [{name: ImageLocality}]
    postFilter:
      disabled: [{name: "*"}]
"""
POSTFILTER_OFF = """    postFilter:
      disabled: [{name: "*"}]
"""
SCORES_PROFILE = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    postFilter:
      disabled: [{name: "*"}]
"""
MOST_ALLOCATED = """  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}, {name: memory, weight: 2}]
"""


class NoAliases(yaml.SafeDumper):
    def ignore_aliases(self, data):
        return True


# ---------------------------------------------------------------- nodes

def node_base(rng, i, feats):
    name = f"node-{i:02d}"
    zone = rng.choice(ZONES)
    labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}
    if "selectors" in feats:
        if rng.random() < 0.6:
            labels["tier"] = rng.choice(["gold", "silver"])
        labels["cores"] = str(rng.choice([4, 8, 16]))
        if rng.random() < 0.3:
            labels["disk"] = "ssd"
    res = {"cpu": rng.choice(["2", "4", "3500m", "8"]), "memory": rng.choice(["4Gi", "8Gi", "16Gi"])}
    if "resources" in feats and rng.random() < 0.8:
        res["ephemeral-storage"] = rng.choice(["10Gi", "30Gi", "100Gi"])
    if "pods" in feats:
        res["pods"] = str(rng.choice([2, 3, 4, 110]))
    else:
        res["pods"] = "110"
    if "extended" in feats and rng.random() < 0.6:
        res[GPU] = str(rng.choice([1, 2, 4, 8]))
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "spec": {}, "status": {"capacity": dict(res), "allocatable": dict(res)}}
    return node


def node_taints(rng, cluster, node):
    taints = []
    r = rng.random()
    if r < 0.25:
        taints.append({"key": "dedicated", "value": rng.choice(["infra", "gpu"]),
                       "effect": rng.choice(["NoSchedule", "NoExecute", "PreferNoSchedule"])})
    if rng.random() < 0.1:
        taints.append({"key": "maintenance", "effect": "NoSchedule"})
    if taints:
        node["spec"]["taints"] = taints
    if rng.random() < 0.08:
        node["spec"]["unschedulable"] = True


def node_defaults(rng, cluster, node):
    """What the API server and the kubelet fill in: allocatable from capacity, 110 pods."""
    r = rng.random()
    if r < 0.15:
        del node["status"]["allocatable"]
    elif r < 0.25:
        del node["status"]["allocatable"]["pods"]
        del node["status"]["capacity"]["pods"]
    if rng.random() < 0.1:  # tolerated by every pod (DefaultTolerationSeconds)
        node["spec"].setdefault("taints", []).append(
            {"key": rng.choice(["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]),
             "effect": "NoExecute"})


DRIVER = "gpu.example.com"


def dra_objects(rng, cluster):
    """A DeviceClass, claim templates, and a ResourceSlice on about half the nodes."""
    objs = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
             "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]}}]
    for name, count, sel in (("one-gpu", 1, None), ("two-gpu", 2, None), ("h100", 1, "h100")):
        exactly = {"deviceClassName": DRIVER, "count": count}
        if sel:
            exactly["selectors"] = [{"cel": {"expression": f"device.attributes['{DRIVER}'].model == '{sel}'"}}]
        objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                     "metadata": {"name": name, "namespace": "default"},
                     "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}})
    for node in cluster["nodes"]:
        if rng.random() < 0.5:
            continue
        devs = [{"name": f"gpu-{i}", "attributes": {"model": {"string": rng.choice(["a100", "h100"])}}}
                for i in range(rng.choice([1, 2, 4]))]
        objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                     "metadata": {"name": f"{node}-gpu"},
                     "spec": {"driver": DRIVER, "nodeName": node, "devices": devs,
                              "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}}})
    return objs



# ---------------------------------------------------------------- pods


def quantities(rng, feats, gpu_ok):
    q = {}
    if "resources" in feats:
        if rng.random() < 0.85:
            q["cpu"] = rng.choice(["100m", "250m", "500m", "1", "1500m", "2"])
        if rng.random() < 0.8:
            q["memory"] = rng.choice(["128Mi", "512Mi", "1Gi", "2Gi", "3Gi"])
        if rng.random() < 0.15:
            q["ephemeral-storage"] = rng.choice(["1Gi", "5Gi", "20Gi"])
    if gpu_ok and "extended" in feats and rng.random() < 0.4:
        q[GPU] = str(rng.choice([1, 1, 2, 4]))
    return q


def container(rng, feats, name, gpu_ok=True):
    c = {"name": name, "image": "registry.example/app:1"}
    q = quantities(rng, feats, gpu_ok)
    if q:
        ext = {k: v for k, v in q.items() if k == GPU}
        nat = {k: v for k, v in q.items() if k != GPU}
        r = rng.random()
        if r < 0.6:
            c["resources"] = {"requests": nat, "limits": ext} if ext else {"requests": nat}
        elif r < 0.85:  # limits only: the API server copies them to requests
            c["resources"] = {"limits": dict(q)}
        else:
            c["resources"] = {"requests": dict(q), "limits": dict(q)}
        for part in ("requests", "limits"):
            if part in c["resources"] and not c["resources"][part]:
                del c["resources"][part]
    return c


def pod_base(rng, i, feats):
    name = f"pod-{i:03d}"
    spec = {"containers": [container(rng, feats, "main")]}
    if rng.random() < 0.2:
        spec["containers"].append(container(rng, feats, "side", gpu_ok=rng.random() < 0.3))
    if "resources" in feats and rng.random() < 0.2:
        spec["initContainers"] = [container(rng, feats, "init", gpu_ok=rng.random() < 0.5)]
        if rng.random() < 0.4:  # a sidecar: counted with the containers
            side = container(rng, feats, "sidecar", gpu_ok=rng.random() < 0.3)
            side["restartPolicy"] = "Always"
            spec["initContainers"].insert(rng.randrange(0, 2), side)
    if "resources" in feats and rng.random() < 0.05:
        spec["overhead"] = {"cpu": "250m", "memory": "128Mi"}
    if "resources" in feats and rng.random() < 0.08:  # PodLevelResources: the pod's own requests win
        q = {"cpu": rng.choice(["500m", "2", "3"]), "memory": rng.choice(["1Gi", "3Gi"])}
        spec["resources"] = {"limits": q} if rng.random() < 0.5 else {"requests": q, "limits": dict(q)}
        for c in spec["containers"] + spec.get("initContainers", []):  # at most the pod's: none here
            for part in c.get("resources", {}).values():
                if isinstance(part, dict):
                    part.pop("cpu", None)
                    part.pop("memory", None)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def pod_selectors(rng, cluster, pod):
    spec = pod["spec"]
    r = rng.random()
    if r < 0.15:
        spec["nodeSelector"] = {"topology.kubernetes.io/zone": rng.choice(ZONES)}
    elif r < 0.25:
        spec["nodeSelector"] = {"tier": rng.choice(["gold", "silver"])}
    elif r < 0.45:
        ops = [
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": rng.sample(ZONES, 2)},
            {"key": "tier", "operator": "NotIn", "values": ["silver"]},
            {"key": "disk", "operator": "Exists"},
            {"key": "disk", "operator": "DoesNotExist"},
            {"key": "cores", "operator": "Gt", "values": [str(rng.choice([4, 8]))]},
            {"key": "cores", "operator": "Lt", "values": ["16"]},
            {"key": "tier", "operator": "In", "values": ["gold"]},
            {"key": "kubernetes.io/hostname", "operator": "NotIn", "values": [rng.choice(cluster["nodes"])]},
        ]
        terms = [{"matchExpressions": rng.sample(ops, rng.choice([1, 2]))}]
        if rng.random() < 0.3:
            terms.append({"matchFields": [{"key": "metadata.name", "operator": "In",
                                           "values": [rng.choice(cluster["nodes"])]}]})
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                                             {"nodeSelectorTerms": terms}}}


def pod_tolerations(rng, cluster, pod):
    if rng.random() < 0.35:
        pod["spec"]["tolerations"] = rng.sample([
            {"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"},
            {"key": "dedicated", "operator": "Exists"},
            {"key": "dedicated", "operator": "Equal", "value": "gpu"},
            {"key": "maintenance", "operator": "Exists", "effect": "NoSchedule"},
            {"operator": "Exists"},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 60},
            {"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoExecute", "tolerationSeconds": 30},
        ], rng.choice([1, 2]))


def pod_ports(rng, cluster, pod):
    if rng.random() < 0.3:
        port = {"containerPort": 80, "hostPort": rng.choice([8080, 8080, 9090])}
        if rng.random() < 0.3:
            port["protocol"] = "UDP"
        if rng.random() < 0.2:
            port["hostIP"] = rng.choice(["10.0.0.1", "0.0.0.0", "127.0.0.1"])
        cs = pod["spec"]["containers"] + pod["spec"].get("initContainers", [])
        rng.choice(cs)["ports"] = [port]  # sidecars' count, other init containers' do not


def pod_priority(rng, cluster, pod):
    r = rng.random()
    if r < 0.5:
        pod["spec"]["priorityClassName"] = rng.choice(["high", "low", "system-cluster-critical"])


def pod_gates(rng, cluster, pod):
    if rng.random() < 0.08:
        pod["spec"]["schedulingGates"] = [{"name": GATE}]


def pod_timestamps(rng, cluster, pod):
    if rng.random() < 0.8:
        pod["metadata"]["creationTimestamp"] = f"2026-01-01T00:{rng.randrange(0, 6):02d}:00Z"


def pod_schedulers(rng, cluster, pod):
    r = rng.random()
    if r < 0.06:
        pod["spec"]["schedulerName"] = rng.choice(["kai-scheduler", "volcano"])
    elif r < 0.1:
        pod["spec"]["schedulerName"] = "default-scheduler"


def pod_dra(rng, cluster, pod):
    if rng.random() < 0.3:
        pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName":
                                          rng.choice(["one-gpu", "one-gpu", "two-gpu", "h100"])}]
        pod["spec"]["containers"][0].setdefault("resources", {})["claims"] = [{"name": "gpu"}]


def _affinity_module():
    """test-ksched-affinity.py holds the one copy of the topology generator."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "test-ksched-affinity.py")
    spec = importlib.util.spec_from_file_location("ksched_affinity", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


AFF = _affinity_module()
APPS = ["a", "b", "c"]
TEAMS = {"team-a": {"team": "a"}, "team-b": {"team": "b"}}


def node_topology(rng, cluster, node):
    """Some nodes lack the zone label: spreading skips them, affinity cannot match there."""
    if rng.random() < 0.1:
        del node["metadata"]["labels"]["topology.kubernetes.io/zone"]


def pod_topology(rng, cluster, pod):
    """app/tier labels on every pod, a namespace on some, and on some the
    InterPodAffinity / PodTopologySpread fields of random_topology_fields()."""
    md = pod["metadata"]
    md["labels"] = {"app": rng.choice(APPS)}
    if rng.random() < 0.5:
        md["labels"]["tier"] = rng.choice(["fe", "be"])
    if rng.random() < 0.2 and "resourceClaims" not in pod["spec"]:  # the claim templates are in default
        md["namespace"] = rng.choice(sorted(TEAMS))
    if rng.random() < 0.5:
        fields = AFF.random_topology_fields(rng, APPS, namespaces=tuple(sorted(TEAMS)) + ("default",))
        aff = fields.pop("affinity", None)
        if aff:
            pod["spec"].setdefault("affinity", {}).update(aff)
        pod["spec"].update(fields)


def node_prefer(rng, cluster, node):
    """PreferNoSchedule taints: TaintToleration's score, never a filter."""
    if rng.random() < 0.3:
        node["spec"].setdefault("taints", []).append(
            {"key": rng.choice(["spot", "noisy"]), "value": "yes", "effect": "PreferNoSchedule"})


def pod_prefer(rng, cluster, pod):
    """Tolerations of PreferNoSchedule taints and preferred node affinity."""
    spec = pod["spec"]
    if rng.random() < 0.25:
        spec.setdefault("tolerations", []).append(rng.choice([
            {"key": "spot", "operator": "Exists", "effect": "PreferNoSchedule"},
            {"key": "noisy", "operator": "Equal", "value": "yes"},
            {"key": "spot", "operator": "Exists", "effect": "NoSchedule"}]))
    if rng.random() < 0.35:
        terms = []
        for _ in range(rng.choice([1, 1, 2])):
            ops = [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": [rng.choice(ZONES)]},
                   {"key": "disk", "operator": "Exists"},
                   {"key": "tier", "operator": "NotIn", "values": ["gold"]},
                   {"key": "cores", "operator": "Gt", "values": ["4"]}]
            pref = {"matchExpressions": [rng.choice(ops)]}
            if rng.random() < 0.15:
                pref = {"matchFields": [{"key": "metadata.name", "operator": "In",
                                         "values": [rng.choice(cluster["nodes"])]}]}
            terms.append({"weight": rng.choice([1, 10, 50, 100]), "preference": pref})
        spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})[
            "preferredDuringSchedulingIgnoredDuringExecution"] = terms


def pod_softaffinity(rng, cluster, pod):
    """Preferred pod affinity / anti-affinity (InterPodAffinity's score), on
    the pods' app label; bound pods with them score the pods that follow."""
    if rng.random() < 0.4:
        aff = pod["spec"].setdefault("affinity", {})
        for kind in rng.sample(["podAffinity", "podAntiAffinity"], rng.choice([1, 1, 2])):
            terms = []
            for _ in range(rng.choice([1, 2])):
                t = {"labelSelector": AFF.random_selector(rng, APPS),
                     "topologyKey": rng.choice(["kubernetes.io/hostname", "topology.kubernetes.io/zone"])}
                if rng.random() < 0.15:
                    t["namespaceSelector"] = {}
                terms.append({"weight": rng.choice([1, 5, 20, 100]), "podAffinityTerm": t})
            aff.setdefault(kind, {})["preferredDuringSchedulingIgnoredDuringExecution"] = terms


IMAGES = {"registry.example/app:1": 300, "registry.example/db:2": 900, "registry.example/web:latest": 60,
          "registry.example/tool:3": 1500}


def node_images(rng, cluster, node):
    """node.status.images (ImageLocality's score): some of the pods' images, sizes in MB."""
    if rng.random() < 0.5:
        imgs = []
        for name in rng.sample(sorted(IMAGES), rng.randint(1, 3)):
            names = [name] + ([name.replace("registry.example/", "registry.example/mirror/")] if rng.random() < 0.2 else [])
            imgs.append({"names": names, "sizeBytes": IMAGES[name] * 1024 * 1024 + rng.randrange(0, 1000)})
        node["status"]["images"] = imgs


def pod_images(rng, cluster, pod):
    """Each container's image from IMAGES (the web image without its tag: looked up as :latest)."""
    for c in pod["spec"]["containers"] + pod["spec"].get("initContainers", []):
        c["image"] = rng.choice(sorted(IMAGES) + ["registry.example/web", "registry.example/other:9"])


OWNERS = [("ReplicaSet", "rs-a", "a"), ("ReplicaSet", "rs-b", "b"), ("StatefulSet", "ss-c", "c")]


def owner_objects(rng, cluster):
    """A ReplicaSet per app a/b and a StatefulSet for c, each with no replicas
    (no controller runs here): their selectors feed PodTopologySpread's
    default constraints for the pods they control."""
    objs = []
    for kind, name, app in OWNERS:
        spec = {"replicas": 0, "selector": {"matchLabels": {"app": app}},
                "template": {"metadata": {"labels": {"app": app}},
                             "spec": {"containers": [{"name": "c", "image": "registry.example/app:1"}]}}}
        if kind == "StatefulSet":
            spec["serviceName"] = name
        objs.append({"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": "default"},
                     "spec": spec})
    return objs


def pod_owners(rng, cluster, pod):
    """A controller ownerReference to the app's ReplicaSet/StatefulSet on most pods with an app label."""
    app = (pod["metadata"].get("labels") or {}).get("app")
    if app and rng.random() < 0.7:
        kind, name = next((k, n) for k, n, a in OWNERS if a == app)
        pod["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": kind, "name": name,
                                               "uid": f"uid-{name}", "controller": True}]


def service_objects(rng, cluster):
    """A ReplicationController for app a (no replicas) and some Services
    (selecting app b, tier fe, app c in team-a; one without a selector):
    PodTopologySpread's default constraints select with the selectors of the
    Services that select a pod merged with its controller's
    (helper.DefaultSelector), so a pod no owner controls may spread too."""
    tmpl = {"metadata": {"labels": {"app": "a"}},
            "spec": {"containers": [{"name": "c", "image": "registry.example/app:1"}]}}
    objs = [{"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc-a", "namespace": "default"},
             "spec": {"replicas": 0, "selector": {"app": "a"}, "template": tmpl}}]
    for name, ns, sel, p in (("svc-b", "default", {"app": "b"}, 0.5), ("svc-fe", "default", {"tier": "fe"}, 0.3),
                             ("svc-c", "team-a", {"app": "c"}, 0.3), ("svc-none", "default", None, 0.3)):
        if rng.random() < p:
            spec = {"ports": [{"port": 80}]}
            if sel:
                spec["selector"] = sel
            objs.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns},
                         "spec": spec})
    return objs


def pod_services(rng, cluster, pod):
    """Some app-a pods controlled by the ReplicationController rc-a instead."""
    if (pod["metadata"].get("labels") or {}).get("app") == "a" and rng.random() < 0.4:
        pod["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ReplicationController", "name": "rc-a",
                                               "uid": "uid-rc-a", "controller": True}]


def namespaces(rng, cluster):
    return [AFF.namespace(name, labels) for name, labels in sorted(TEAMS.items())]


def pod_bound(rng, cluster, pod):
    """Pods already running (a dump's): they hold resources, ports and pod slots; finished ones hold nothing."""
    if rng.random() < 0.15:
        spec = pod["spec"]
        spec["nodeName"] = rng.choice(cluster["nodes"])
        for k in ("schedulingGates", "resourceClaims", "schedulerName"):
            spec.pop(k, None)
        for c in spec["containers"]:
            c.get("resources", {}).pop("claims", None)
        if rng.random() < 0.2:
            pod["status"] = {"phase": rng.choice(["Succeeded", "Failed"])}


PREEMPT_CLASSES = ["urgent", "urgent", "mid", "urgent-never", "system-cluster-critical"]


def pod_preemption(rng, cluster, pod):
    """Running low-priority pods that fill nodes, pending pods of classes
    that preempt (or not: urgent-never), labels the PDBs select, and a
    distinct status.startTime on every running pod (victims are ordered by
    it; equal times are left in an order kube-scheduler does not fix)."""
    spec, md = pod["spec"], pod["metadata"]
    r = rng.random()
    if r < 0.3 and not spec.get("nodeName"):  # a filler, already running
        spec["nodeName"] = rng.choice(cluster["nodes"])
        for k in ("schedulingGates", "resourceClaims", "schedulerName"):
            spec.pop(k, None)
        for c in spec["containers"]:
            c.get("resources", {}).pop("claims", None)
        spec.pop("priorityClassName", None)
        if rng.random() < 0.7:
            spec["priorityClassName"] = rng.choice(["low", "batch", "mid"])
    elif r < 0.55 and not spec.get("nodeName"):
        spec["priorityClassName"] = rng.choice(PREEMPT_CLASSES)
    if rng.random() < 0.5:
        md.setdefault("labels", {})["budget"] = rng.choice(["a", "b"])
    if spec.get("nodeName"):
        cluster["started"] = cluster.get("started", 0) + 1
        n = cluster["started"]
        pod.setdefault("status", {})["startTime"] = f"2025-01-01T{n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z"


def preemption_objects(rng, cluster):
    """Classes that preempt and one that does not; PodDisruptionBudgets over
    the `budget` label with 0-2 disruptions allowed (their status as written:
    no disruption controller runs on either side)."""
    objs = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n}, "value": v,
             **({"preemptionPolicy": "Never"} if never else {})}
            for n, v, never in (("urgent", 100000, False), ("mid", 500, False), ("batch", 5, False),
                                ("urgent-never", 100000, True))]
    for name in ("a", "b"):
        if rng.random() < 0.6:
            pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                   "metadata": {"name": f"budget-{name}", "namespace": "default"},
                   "spec": {"selector": {"matchLabels": {"budget": name}}},
                   "status": {"disruptionsAllowed": rng.choice([0, 0, 1, 2])}}
            if rng.random() < 0.5:
                pdb["spec"]["minAvailable"] = rng.choice([1, "50%"])
            else:
                pdb["spec"]["maxUnavailable"] = rng.choice([1, "30%"])
            objs.append(pdb)
    return objs


NODE_FEATURES = {"taints": node_taints, "defaults": node_defaults, "topology": node_topology,
                 "prefer": node_prefer, "images": node_images}
POD_FEATURES = {"dra": pod_dra, "selectors": pod_selectors, "taints": pod_tolerations, "ports": pod_ports,
                "priority": pod_priority, "gates": pod_gates, "timestamps": pod_timestamps,
                "schedulers": pod_schedulers, "topology": pod_topology, "prefer": pod_prefer,
                "softaffinity": pod_softaffinity, "images": pod_images, "owners": pod_owners,
                "services": pod_services, "bound": pod_bound, "preemption": pod_preemption}
IMPLEMENTED = ["resources", "extended", "pods", "taints", "selectors", "ports", "priority", "gates",
               "timestamps", "defaults", "schedulers", "dra", "bound", "topology", "prefer", "softaffinity",
               "images", "owners", "services", "preemption"]


def priority_classes(rng):
    classes = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
         "value": 1000, "preemptionPolicy": "Never"},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"}, "value": 10},
    ]
    if rng.random() < 0.5:
        classes.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                        "metadata": {"name": "default-batch"}, "value": 100, "globalDefault": True})
    return classes


# Objects of the cluster besides nodes and pods: name -> fn(rng, cluster) -> [objects].
CLUSTER_FEATURES = {"priority": lambda rng, cluster: priority_classes(rng), "dra": dra_objects,
                    "topology": namespaces, "owners": owner_objects, "services": service_objects,
                    "preemption": preemption_objects}


def gen_cluster(rng, feats):
    n_nodes = rng.randint(3, 10)
    n_pods = rng.randint(8, 24)
    cluster = {"nodes": [f"node-{i:02d}" for i in range(n_nodes)]}
    objs = []
    for i in range(n_nodes):
        node = node_base(rng, i, feats)
        for f, fn in NODE_FEATURES.items():
            if f in feats:
                fn(rng, cluster, node)
        objs.append(node)
    for f, fn in CLUSTER_FEATURES.items():
        if f in feats:
            objs += fn(rng, cluster)
    pods = []
    for i in range(n_pods):
        pod = pod_base(rng, i, feats)
        for f, fn in POD_FEATURES.items():
            if f in feats:
                fn(rng, cluster, pod)
        pods.append(pod)
    rng.shuffle(pods)
    return {"apiVersion": "v1", "kind": "List", "items": objs + pods}


# ---------------------------------------------------------------- runs

def oracle_outcome(p):
    if p.get("preempted"):
        return ("preempted", p.get("node"))
    if "schedulerName" in p.get("ignored", ""):
        return ("foreign",)
    if p.get("ignored", "").startswith("phase "):  # Succeeded/Failed: devplane leaves them out too
        return ("finished",)
    if p.get("node"):
        return ("node", p["node"])
    return ("pending", p.get("message", ""))


def devplane_outcome(p):
    if p.get("state") == "Preempted":
        return ("preempted", p.get("node"))
    if p.get("node") and p.get("state") in ("Running", "Waiting"):
        return ("node", p["node"])
    reason = p.get("message", p.get("reason", ""))  # message: with the PostFilter's words
    if reason.startswith("not scheduled by default-scheduler"):
        return ("foreign",)
    return ("pending", reason)


STATS = {"victims": 0, "pending": 0, "oracle_reruns": 0}


def run_one(args, tmp, seed, feats):
    rng = random.Random(seed)
    doc = gen_cluster(rng, feats)
    path = os.path.join(tmp, f"cluster-{seed}.yaml")
    with open(path, "w") as f:
        yaml.dump(doc, f, Dumper=NoAliases, sort_keys=False)
    # No API server in front of the oracle: merge pod (anti-)affinity
    # matchLabelKeys/mismatchLabelKeys as kube-apiserver stores them.
    opath = os.path.join(tmp, f"cluster-{seed}.oracle.yaml")
    with open(opath, "w") as f:
        yaml.dump(dict(doc, items=AFF.api_server_merge(doc["items"])), f, Dumper=NoAliases, sort_keys=False)
    preempt = "preemption" in feats
    oracle_cmd = [args.oracle, "--profile-config", args.profile_preempt if preempt else args.profile,
                  "--pretty=false", "-f", opath]
    for _ in range(3):  # "no nodes available": the oracle began before its informers saw a node (load)
        o = subprocess.run(oracle_cmd, capture_output=True, text=True, timeout=120)
        if o.returncode != 0 or NO_NODES not in o.stdout:
            break
        STATS["oracle_reruns"] += 1
    if o.returncode != 0:
        return None, f"oracle exit {o.returncode}: {o.stderr.strip()[-400:]}", path
    scoring = ["--scheduler-config", args.profile] if args.scores else ["--scoring", "none"]
    d = subprocess.run([args.devplane, "simulate", *scoring, "-o", "json", "-f", path] +
                       ([] if preempt else ["--no-preemption"]),
                       capture_output=True, text=True, timeout=120)
    if d.returncode != 0:
        return None, f"devplane exit {d.returncode}: {d.stderr.strip()[-400:]}", path
    want = {f"{p['namespace']}/{p['name']}": oracle_outcome(p) for p in json.loads(o.stdout)["pods"]}
    got = {}
    for p in json.loads(d.stdout)["asWritten"]["pods"]:
        key = p["name"] if "/" in p["name"] else "default/" + p["name"]
        got[key] = devplane_outcome(p)
    diffs = []
    STATS["victims"] += sum(1 for w in want.values() if w[0] == "preempted")
    STATS["pending"] += sum(1 for w in want.values() if w[0] == "pending")
    for key in sorted(want):
        if got.get(key, ("finished",)) != want[key]:
            diffs.append(f"{key}: kube-scheduler {want[key]}, devplane {got.get(key)}")
    pend = [k for k in sorted(want) if want[k][0] == "pending" and got.get(k, ("",))[0] == "pending" and
            got[k] != want[k]]
    if pend:
        timing = timing_pods(oracle_cmd, pend, want, got)
        diffs = [TIMING + d if d.split(":", 1)[0] in timing else d for d in diffs]
    return len(want), diffs, path


NO_NODES = "no nodes available to schedule pods"
TIMING = "timing: "


def raced_pods(log):
    """The pods kube-scheduler moved back to the queue, when their attempt
    failed, for a nomination's end that arrived during that attempt: its
    own status write (nominatedNodeName cleared) reaches its informer while
    the next pod is already in its cycle, and the in-flight pod gets an
    AssignedPodDelete (one more attempt); had the write arrived before that
    pod was popped (devplane's order, and kube-scheduler's when its informer
    is quicker), it would not have moved it. From a --v 6 log: "Checking
    event for in-flight pod", then NodeResourcesFit's "another scheduled pod
    was deleted" naming a pod that was never deleted."""
    deleted, raced, inflight = set(), set(), None
    for line in log.splitlines():
        if '"Delete event for scheduled pod"' in line:
            deleted.add(line.split('pod="', 1)[1].split('"', 1)[0])
    for line in log.splitlines():
        if '"Checking event for in-flight pod"' in line and 'event="AssignedPodDelete"' in line:
            inflight = line.split('pod="', 1)[1].split('"', 1)[0]
        elif inflight and "another scheduled pod was deleted" in line and f'pod="{inflight}"' in line:
            if line.split('deletedPod="', 1)[1].split('"', 1)[0] not in deleted:
                raced.add(inflight)
            inflight = None
    return raced


def timing_pods(oracle_cmd, pend, want, got):
    """Of the pods Pending on both sides with other messages, those whose
    message is a matter of timing in kube-scheduler itself: the oracle run
    again (up to 3 times, with its log) gives devplane's message, or gives
    its own again with the race above in its log. Still listed; a pod that
    shows neither stays a plain disagreement."""
    timing = set()
    for _ in range(3):
        o = subprocess.run(oracle_cmd + ["--v", "6"], capture_output=True, text=True, timeout=120)
        if o.returncode != 0:
            break
        again = {f"{p['namespace']}/{p['name']}": oracle_outcome(p) for p in json.loads(o.stdout)["pods"]}
        raced = raced_pods(o.stderr)
        timing |= {k for k in pend if again.get(k) == got[k] or (again.get(k) == want[k] and k in raced)}
        if timing >= set(pend):
            break
    return timing



def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--clusters", type=int, default=20)
    ap.add_argument("--features", default=",".join(IMPLEMENTED))
    ap.add_argument("--oracle")
    ap.add_argument("--devplane", default=os.environ.get("DEVPLANE", "devplane"))
    ap.add_argument("--keep", help="copy the inputs that disagree here")
    ap.add_argument("--scores", action="store_true", help="keep the default profile's scores on both sides")
    ap.add_argument("--strategy", choices=["least", "most"], default="least")
    ap.add_argument("-v", action="store_true")
    args = ap.parse_args()
    feats = set(f for f in args.features.split(",") if f)
    unknown = feats - set(IMPLEMENTED)
    if unknown:
        sys.exit(f"unknown features: {', '.join(sorted(unknown))} (known: {', '.join(IMPLEMENTED)})")
    if not args.scores:  # the no-scores profile keeps ImageLocality: no node may list images
        feats.discard("images")
    tmp = tempfile.mkdtemp(prefix="ksched-diff-")
    try:
        if not args.oracle:
            shared = os.environ.get("DP_SHARED_DIR", os.path.join(os.path.dirname(__file__), "../../../shared"))
            xz = os.path.join(shared, ORACLE_XZ)
            if not os.path.exists(xz):
                print(f"SKIP: {xz} not found")
                return 0
            args.oracle = os.path.join(os.environ.get("DP_BUILD_DIR", tmp), "ksched-oracle")
            if not os.path.exists(args.oracle):
                part = args.oracle + f".{os.getpid()}"
                with lzma.open(xz) as src, open(part, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                os.chmod(part, 0o755)
                os.replace(part, args.oracle)
        args.profile = os.path.join(tmp, "scores.yaml" if args.scores else "no-scores.yaml")
        with open(args.profile, "w") as f:
            text = (SCORES_PROFILE + (MOST_ALLOCATED if args.strategy == "most" else "")) if args.scores else PROFILE
            f.write(text)
        assert POSTFILTER_OFF in text
        args.profile_preempt = os.path.join(tmp, "preemption.yaml")
        with open(args.profile_preempt, "w") as f:
            f.write(text.replace(POSTFILTER_OFF, "    postFilter: {}\n"))
        pods = bad_clusters = 0
        all_diffs = []
        for k in range(args.clusters):
            seed = args.seed * 100003 + k
            n, diffs, path = run_one(args, tmp, seed, feats)
            if n is None:
                all_diffs.append(f"cluster seed {seed}: {diffs}")
                bad_clusters += 1
                if args.keep:
                    os.makedirs(args.keep, exist_ok=True)
                    shutil.copy(path, args.keep)
                continue
            pods += n
            if diffs:
                bad_clusters += 1
                all_diffs += [f"cluster seed {seed}: {x}" for x in diffs]
                if args.keep:
                    os.makedirs(args.keep, exist_ok=True)
                    shutil.copy(path, args.keep)
            elif args.v:
                print(f"cluster seed {seed}: {n} pods agree")
        for x in all_diffs:
            print(x)
        mode = f"scores {args.strategy}" if args.scores else "no scores"
        timing = sum(1 for x in all_diffs if TIMING in x)
        print(f"{pods} pods in {args.clusters} clusters ({mode}; features {','.join(sorted(feats))}; "
              f"{STATS['victims']} preempted, {STATS['pending']} pending): "
              f"{len(all_diffs)} disagreements in {bad_clusters} clusters"
              + (f", {timing} of them timing (a nomination's end raced the next cycle)" if timing else "")
              + (f"; the oracle rerun {STATS['oracle_reruns']} times ({NO_NODES})" if STATS["oracle_reruns"] else ""))
        return 1 if len(all_diffs) > timing else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
