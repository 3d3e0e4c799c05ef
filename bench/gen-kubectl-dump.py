#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Write tests/sched/gen-cluster-dump.py's cluster as a real `kubectl get
... -o yaml|json` prints it from a live API server: every object with the
server's fields (uid, resourceVersion, creationTimestamp, generation), its
managedFields (FieldsV1 trees of `f:` keys mirroring the object, one entry
per manager: kubectl-client-side-apply, the controller or kubelet, the
status subresource) and, for what kubectl applied, the
kubectl.kubernetes.io/last-applied-configuration annotation (one line of
JSON with a newline, which kubectl -o yaml prints as a `|` block scalar).
These fields are most of the bytes of a real dump; the YAML readers are
measured on them (docs/benchmarks.md, "The fast YAML path").

  gen-kubectl-dump.py yaml|json N_NODES N_PODS > dump.yaml|json

Needs python3-yaml. Deterministic: the same arguments give the same bytes.
"""
import json
import os
import re
import subprocess
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "..", "tests", "sched", "gen-cluster-dump.py")


def fields(obj, depth=0):
    """A FieldsV1 tree for obj: f:<key> for map keys, k:{...} for list items
    keyed by name, . for a leaf set by the manager."""
    if isinstance(obj, dict):
        out = {".": {}} if depth else {}
        for k, v in obj.items():
            out["f:" + k] = fields(v, depth + 1)
        return out
    if isinstance(obj, list):
        out = {}
        for i, v in enumerate(obj):
            if isinstance(v, dict) and "name" in v:
                out['k:{"name":"%s"}' % v["name"]] = fields(v, depth + 1)
            else:
                out["v:%s" % json.dumps(v, sort_keys=True, separators=(",", ":"))] = {}
        return out
    return {}


def augment(o, i):
    md = o.setdefault("metadata", {})
    kind = o["kind"]
    uid = "%08x-%04x-4%03x-8%03x-%012x" % (i * 2654435761 & 0xFFFFFFFF, i & 0xFFFF, i % 4096, (i * 7) % 4096, i)
    md.setdefault("uid", uid)
    md["resourceVersion"] = str(1000000 + i * 17)
    md["creationTimestamp"] = "2026-11-%02dT%02d:%02d:%02dZ" % (1 + i % 28, i % 24, i % 60, (i * 7) % 60)
    if kind in ("Deployment", "ReplicaSet", "ResourceSlice", "DeviceClass"):
        md["generation"] = 1 + i % 5
    applied = {k: v for k, v in o.items() if k in ("apiVersion", "kind", "spec")}
    applied["metadata"] = {k: md[k] for k in ("name", "namespace", "labels") if k in md}
    if kind in ("Deployment", "DeviceClass", "ResourceClaimTemplate") or (kind == "Pod" and i % 3 == 0):
        ann = md.setdefault("annotations", {})
        ann["kubectl.kubernetes.io/last-applied-configuration"] = (
            json.dumps(applied, sort_keys=True, separators=(",", ":")) + "\n"
        )
    managers = [
        {
            "apiVersion": o["apiVersion"],
            "fieldsType": "FieldsV1",
            "fieldsV1": fields({"metadata": {k: md[k] for k in ("labels", "annotations") if k in md},
                                "spec": o.get("spec", {})}),
            "manager": "kubectl-client-side-apply" if kind != "Node" else "kubelet",
            "operation": "Update",
            "time": md["creationTimestamp"],
        }
    ]
    if "status" in o:
        managers.append(
            {
                "apiVersion": o["apiVersion"],
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:status": fields(o["status"], 1)},
                "manager": {"Node": "kubelet", "Pod": "kubelet", "ResourceClaim": "kube-scheduler"}.get(
                    kind, "kube-controller-manager"
                ),
                "operation": "Update",
                "subresource": "status",
                "time": md["creationTimestamp"],
            }
        )
    md["managedFields"] = managers
    if kind == "Pod":
        st = o.setdefault("status", {})
        st.setdefault("phase", "Pending")
        st["conditions"] = [
            {"lastProbeTime": None, "lastTransitionTime": md["creationTimestamp"], "status": "True", "type": t}
            for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")
        ]
        st["qosClass"] = "BestEffort"


class Dumper(yaml.SafeDumper):
    pass


def str_presenter(dumper, data):
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


Dumper.add_representer(str, str_presenter)


def main(argv):
    fmt, n_nodes, n_pods = argv[0], argv[1], argv[2]
    src = subprocess.run([sys.executable, GEN, "big", n_nodes, n_pods], check=True, capture_output=True).stdout
    lst = yaml.load(src, Loader=yaml.CSafeLoader)
    for i, o in enumerate(lst["items"]):
        augment(o, i)
    if fmt == "json":
        sys.stdout.write(json.dumps(lst, indent=4) + "\n")
    else:
        text = yaml.dump(lst, Dumper=Dumper, default_flow_style=False, sort_keys=True, width=1 << 20)
        # kubectl (go-yaml) quotes with double quotes where PyYAML uses single ones
        text = re.sub(r"(: |- )'([^'\\\"\n]*)'$", r'\1"\2"', text, flags=re.M)
        sys.stdout.write(text)


main(sys.argv[1:])
