#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Differential test of `devplane allocate` against the upstream allocator.

Random clusters and claim sequences are generated from a seed (several nodes,
node-local and network-attached pools, shared counters, consumable capacity,
adminAccess, firstAvailable, allocationMode All, matchAttribute /
distinctAttribute, taints and tolerations). Each sequence runs through
`devplane allocate` and the upstream program (dra-oracle, decompressed from
DP_SHARED_DIR at run time). Both see the same state: when they part ways on
a claim, the rest of the sequence is run again with devplane's allocations so
far given as existing allocations.

Every devplane allocation is checked by an independent validity check
(devices reachable, selectors, taints, counts, All, counters, capacity,
constraints, no device twice unless it may be shared). When the two differ, a
brute-force referee enumerates the claim's allocations in upstream's search
order (nodes by name, requests in order, firstAvailable entries in order,
device combinations in pool order) and says which answer is right. Known
upstream bugs are classified, not counted:
  kubernetes#140600  upstream's allocation breaks distinctAttribute
  kubernetes#140436  upstream misses an allocation the referee finds, on a
                     node with shared counters (counters of a rejected
                     candidate are not released)
  no-answer          upstream hit its deadline

usage: differential.py [--seed N] [--sequences N] [--oracle PATH] [--keep DIR] [-v]
Exit status 0 when there are no disagreements and no invalid allocations.
"""
import argparse
import itertools
import json
import lzma
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

D = "gpu.example.com"
N = "net.example.com"
ORACLE_XZ = "tools/upstream-dra/dra-oracle-v1.36.2.xz"
KEEP = None  # --keep DIR: inputs where the two differ are copied there


# ---------------------------------------------------------------- generator

class NoAliases(yaml.SafeDumper):
    def ignore_aliases(self, data):
        return True


# A selector is (CEL text, python predicate over a device dict).
def sel_attr(name, value):
    lit = f"'{value}'" if isinstance(value, str) else str(value)
    cel = f"'{name}' in device.attributes['{D}'] && device.attributes['{D}'].{name} == {lit}"
    return (cel, lambda d: attr(d, name) == value)


def attr(d, name):
    """The value of gpu.example.com/<name> (other drivers' attributes are in their own domain)."""
    return d["attrs"].get(name) if d["driver"] == D else None


SEL_MULTI = ("device.allowMultipleAllocations", lambda d: d["multi"])
SEL_SHARED_PLAIN = ("device.allowMultipleAllocations && !('part' in device.attributes['gpu.example.com'])",
                    lambda d: d["multi"] and "part" not in d["attrs"])
SEL_PLAIN = ("!device.allowMultipleAllocations && !('part' in device.attributes['gpu.example.com'])",
             lambda d: not d["multi"] and "part" not in d["attrs"])

TAINTS = [("k1", "v", "NoSchedule"), ("k2", "v", "NoExecute"), ("k3", "v", "None"), ("k1", "w", "NoExecute")]
TOLERATIONS = [
    {"key": "k1", "operator": "Exists"},
    {"key": "k2", "operator": "Equal", "value": "v"},
    {"operator": "Exists"},
    {"key": "k1", "operator": "Equal", "value": "v", "effect": "NoSchedule"},
]


def gen_cluster(rng):
    nodes = [f"node-{i}" for i in range(rng.randint(2, 3))]
    objs = [
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{D}'"}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "any"},
         "spec": {"selectors": [{"cel": {"expression": "true"}}]}},
        {"apiVersion": "v1", "kind": "Namespace",
         "metadata": {"name": "default", "labels": {"resource.kubernetes.io/admin-access": "true"}}},
    ]
    devices = []  # dicts, in upstream search order (pools sorted by driver, pool)
    for i, n in enumerate(nodes):
        objs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": {"rack": f"r{i % 2}"}}})
    pools = []
    for n in nodes:
        pool = f"{n}-gpu"
        devs = []
        counters = None
        if rng.random() < 0.5:
            counters = {"name": "cs", "counters": {"mem": {"value": str(rng.randint(3, 6))}}}
        for k in range(rng.randint(2, 6)):
            d = {"name": f"d{k}", "driver": D, "pool": pool, "node": n, "sel": None, "all_nodes": False,
                 "attrs": {}, "multi": False, "caps": {}, "taints": [], "counters": {}}
            if rng.random() < 0.9:
                d["attrs"]["numa"] = rng.randint(0, 1)
            d["attrs"]["model"] = rng.choice(["a", "b"])
            if rng.random() < 0.25:
                d["taints"].append(rng.choice(TAINTS))
            r = rng.random()
            if r < 0.25:
                d["multi"] = True
                d["caps"]["bw"] = rng.choice([8, 10])
            elif r < 0.35:
                d["caps"]["bw"] = rng.choice([4, 10])
            if counters and rng.random() < 0.7:
                d["counters"] = {"mem": rng.randint(1, 3)}
                d["attrs"]["part"] = True
            devs.append(d)
        pools.append((pool, n, None, devs, counters))
    if rng.random() < 0.6:
        devs = []
        sel = rng.choice([None, "r0", "r1"])
        for k in range(rng.randint(1, 3)):
            d = {"name": f"nic{k}", "driver": N, "pool": "fabric", "node": None, "sel": sel,
                 "all_nodes": sel is None, "attrs": {"model": rng.choice(["a", "b"])}, "multi": False,
                 "caps": {}, "taints": [], "counters": {}}
            if rng.random() < 0.5:
                d["attrs"]["numa"] = rng.randint(0, 1)
            if rng.random() < 0.3:
                d["multi"] = True
                d["caps"]["bw"] = 10
            if rng.random() < 0.15:
                d["taints"].append(rng.choice(TAINTS))
            devs.append(d)
        pools.append(("fabric", None, sel, devs, None))
    pools.sort(key=lambda p: (p[3][0]["driver"], p[0]))
    for pool, node, sel, devs, counters in pools:
        spec_base = {"driver": devs[0]["driver"],
                     "pool": {"name": pool, "generation": 1, "resourceSliceCount": 2 if counters else 1}}
        if node:
            spec_base["nodeName"] = node
        elif sel:
            spec_base["nodeSelector"] = {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "rack", "operator": "In", "values": [sel]}]}]}
        else:
            spec_base["allNodes"] = True
        out = []
        for d in devs:
            o = {"name": d["name"]}
            attrs = {}
            for k, v in d["attrs"].items():
                attrs[k] = {"bool": v} if isinstance(v, bool) else {"int": v} if isinstance(v, int) else {"string": v}
            if attrs:
                o["attributes"] = attrs
            if d["caps"]:
                o["capacity"] = {k: {"value": str(v)} for k, v in d["caps"].items()}
            if d["multi"]:
                o["allowMultipleAllocations"] = True
            if d["taints"]:
                o["taints"] = [{"key": k, "value": v, "effect": e} for k, v, e in d["taints"]]
            if d["counters"]:
                o["consumesCounters"] = [{"counterSet": "cs", "counters": {
                    k: {"value": str(v)} for k, v in d["counters"].items()}}]
            out.append(o)
            devices.append(d)
        objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                     "metadata": {"name": f"{pool}-devices"}, "spec": dict(spec_base, devices=out)})
        if counters:
            objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                         "metadata": {"name": f"{pool}-counters"}, "spec": dict(spec_base, sharedCounters=[counters])})
    counter_sets = {p[0]: {k: int(v["value"]) for k, v in p[4]["counters"].items()} for p in pools if p[4]}
    return {"nodes": nodes, "objs": objs, "devices": devices, "counter_sets": counter_sets}


def gen_sub(rng, name, allow_admin, allow_all):
    """One request (or firstAvailable entry): (yaml dict, model dict)."""
    cls = rng.choice(["gpu", "gpu", "any"])
    sels = []
    r = rng.random()
    if r < 0.3:
        sels.append(sel_attr("numa", rng.randint(0, 1)))
    elif r < 0.45:
        sels.append(sel_attr("model", rng.choice(["a", "b"])))
    m = {"name": name, "class": cls, "all": False, "count": 1, "admin": False, "tolerations": [], "cap": None}
    if allow_admin and rng.random() < 0.08:
        # adminAccess: not on devices with counters (upstream charges counters
        # for adminAccess devices too, devplane does not: not covered here)
        m["admin"] = True
        if rng.random() < 0.5:
            sels.append(SEL_PLAIN)
        else:
            sels.append(SEL_SHARED_PLAIN)
            m["cap"] = rng.choice([None, 2, 5])
    elif rng.random() < 0.15:
        sels.append(SEL_MULTI)
        m["cap"] = rng.choice([None, 2, 3, 5])
    if allow_all and rng.random() < 0.15:
        m["all"] = True
        if not sels:
            sels.append(sel_attr("numa", rng.randint(0, 1)))
    else:
        m["count"] = rng.choice([1, 1, 1, 2, 2, 3])
    if rng.random() < 0.25:
        m["tolerations"] = [rng.choice(TOLERATIONS)]
    m["sels"] = sels
    y = {"deviceClassName": cls}
    if m["all"]:
        y["allocationMode"] = "All"
    else:
        y["count"] = m["count"]
    if sels:
        y["selectors"] = [{"cel": {"expression": s[0]}} for s in sels]
    if m["tolerations"]:
        y["tolerations"] = m["tolerations"]
    if m["cap"]:
        y["capacity"] = {"requests": {"bw": str(m["cap"])}}
    if m["admin"]:
        y["adminAccess"] = True
    return y, m


def gen_claim(rng, name):
    reqs, model = [], []
    for i in range(rng.choice([1, 1, 2, 2, 3])):
        rn = f"r{i}"
        if rng.random() < 0.2:
            subs, ms = [], []
            for k in range(rng.randint(2, 3)):
                y, m = gen_sub(rng, f"s{k}", False, True)
                y["name"] = m["name"]
                subs.append(y)
                ms.append(m)
            reqs.append({"name": rn, "firstAvailable": subs})
            model.append({"name": rn, "subs": ms, "fa": True})
        else:
            y, m = gen_sub(rng, rn, True, True)
            reqs.append({"name": rn, "exactly": y})
            model.append({"name": rn, "subs": [m], "fa": False})
    cons = []
    for _ in range(rng.choice([0, 0, 1, 1, 2])):
        kind = rng.choice(["matchAttribute", "distinctAttribute"])
        attr = rng.choice(["numa", "numa", "model"])
        names = []
        if len(model) > 1 and rng.random() < 0.5:
            names = sorted(rng.sample([r["name"] for r in model], 2))
        c = {kind: f"{D}/{attr}"}
        if names:
            c["requests"] = names
        cons.append(c)
    spec = {"devices": {"requests": reqs}}
    if cons:
        spec["devices"]["constraints"] = cons
    obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
           "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}, "spec": spec}
    cm = [{"kind": "match" if "matchAttribute" in c else "distinct",
           "attr": (c.get("matchAttribute") or c.get("distinctAttribute")).split("/")[1],
           "requests": c.get("requests", [])} for c in cons]
    return obj, {"name": name, "requests": model, "constraints": cm}


# ---------------------------------------------------------------- model of the rules

def dev_id(d):
    return (d["driver"], d["pool"], d["name"])


def reaches(cluster, d, node):
    if d["node"]:
        return d["node"] == node
    if d["all_nodes"]:
        return True
    i = cluster["nodes"].index(node)
    return f"r{i % 2}" == d["sel"]


def class_ok(cls, d):
    return cls == "any" or d["driver"] == D


def tolerated(sub, d):
    for key, value, effect in d["taints"]:
        if effect not in ("NoSchedule", "NoExecute"):
            continue
        ok = False
        for t in sub["tolerations"]:
            if t.get("effect") and t["effect"] != effect:
                continue
            if t.get("operator") == "Exists":
                ok = ok or not t.get("key") or t["key"] == key
            else:
                ok = ok or (t.get("key") == key and t.get("value", "") == value)
        if not ok:
            return False
    return True


def amount(sub, d):
    """Capacity taken from device d per capacity name, or None when d cannot give it."""
    out = {}
    if sub["cap"] is not None and "bw" not in d["caps"]:
        return None
    for name, value in d["caps"].items():
        want = sub["cap"] if (sub["cap"] is not None and name == "bw") else None
        if want is not None and want > value:
            return None
        if d["multi"]:
            out[name] = want if want is not None else value
    return out


class State:
    def __init__(self, cluster):
        self.cluster = cluster
        self.excl = set()        # non-multi devices in use
        self.cap = {}            # (dev id, cap) -> used
        self.shared = set()      # multi devices with a share
        self.ctr = {}            # (pool, counter) -> used

    def copy(self):
        s = State(self.cluster)
        s.excl, s.cap, s.shared, s.ctr = set(self.excl), dict(self.cap), set(self.shared), dict(self.ctr)
        return s

    def room(self, d, amt, extra=None):
        extra = extra or {}
        return all(self.cap.get((dev_id(d), k), 0) + extra.get((dev_id(d), k), 0) + v <= d["caps"][k]
                   for k, v in amt.items())

    def counters_fit(self, d):
        if d["multi"] and dev_id(d) in self.shared:
            return True
        limits = self.cluster["counter_sets"].get(d["pool"], {})
        return all(self.ctr.get((d["pool"], k), 0) + v <= limits.get(k, 0) for k, v in d["counters"].items())

    def take(self, d, amt, admin):
        if admin:
            return
        if d["multi"]:
            first = dev_id(d) not in self.shared
            self.shared.add(dev_id(d))
            for k, v in amt.items():
                self.cap[(dev_id(d), k)] = self.cap.get((dev_id(d), k), 0) + v
        else:
            first = True
            self.excl.add(dev_id(d))
        if first:
            for k, v in d["counters"].items():
                self.ctr[(d["pool"], k)] = self.ctr.get((d["pool"], k), 0) + v


def matching(cluster, sub, node):
    return [d for d in cluster["devices"] if reaches(cluster, d, node) and class_ok(sub["class"], d)
            and all(f(d) for _, f in sub["sels"])]


def all_set(state, sub, node):
    """allocationMode All: the devices it must take (upstream: shared ones without room left out)."""
    out = []
    for d in matching(state.cluster, sub, node):
        amt = amount(sub, d)
        if amt is None:
            continue
        if d["multi"] and not state.room(d, amt):
            continue
        out.append(d)
    return out


def constraint_applies(c, req, sub_name, fa):
    if not c["requests"]:
        return True
    return req in c["requests"] or (fa and f"{req}/{sub_name}" in c["requests"])


def check_claim(state, claim, node, picks):
    """picks: [(request model, sub model, [device dicts])]. Returns (ok, reason); state is
    updated when ok."""
    st = state.copy()
    in_claim = set()
    admin_cap = {}  # capacity adminAccess shares take within the claim (not kept after it)
    for req, sub, devs in picks:
        want = None if sub["all"] else sub["count"]
        if sub["all"]:
            exp = all_set(state, sub, node)
            if not exp or [dev_id(d) for d in exp] != [dev_id(d) for d in devs]:
                return False, f"request {req['name']}: All takes {[d['name'] for d in exp]}"
        elif len(devs) != want:
            return False, f"request {req['name']}: {len(devs)} devices, {want} wanted"
        for d in devs:
            if not reaches(state.cluster, d, node):
                return False, f"{d['name']} not reachable from {node}"
            if not class_ok(sub["class"], d) or not all(f(d) for _, f in sub["sels"]):
                return False, f"{d['name']} does not pass the selectors"
            if not tolerated(sub, d):
                return False, f"{d['name']} tainted"
            amt = amount(sub, d)
            if amt is None:
                return False, f"{d['name']} cannot give the capacity"
            if dev_id(d) in in_claim and not d["multi"]:
                return False, f"{d['name']} twice in the claim"
            in_claim.add(dev_id(d))
            if d["multi"] and not st.room(d, amt, admin_cap):
                return False, f"{d['name']} capacity exceeded"
            if not sub["admin"]:
                if not d["multi"] and dev_id(d) in st.excl:
                    return False, f"{d['name']} already in use"
                if not st.counters_fit(d):
                    return False, f"{d['name']} counters exceeded"
            elif d["multi"]:
                for k, v in amt.items():
                    admin_cap[(dev_id(d), k)] = admin_cap.get((dev_id(d), k), 0) + v
            st.take(d, amt, sub["admin"])
    for c in claim["constraints"]:
        vals = []
        for req, sub, devs in picks:
            if constraint_applies(c, req["name"], sub["name"], req["fa"]):
                vals += [attr(d, c["attr"]) for d in devs]
        if any(v is None for v in vals):
            return False, f"constraint on {c['attr']}: a device lacks it"
        if c["kind"] == "match" and len(set(vals)) > 1:
            return False, f"matchAttribute {c['attr']} broken: {vals}"
        if c["kind"] == "distinct" and len(set(vals)) != len(vals):
            return False, f"distinctAttribute {c['attr']} broken: {vals}"
    return True, st


class TooBig(Exception):
    """The referee's enumeration went past its budget."""


REFEREE_BUDGET = 50000


class ClaimError(Exception):
    """allocationMode All reached a device that breaks a constraint: upstream fails the claim."""


def referee(state, claim):
    """The first allocation in upstream's search order, as (node, picks); (node, "error")
    when the search reaches upstream's All-constraint error first; None."""
    for node in state.cluster["nodes"]:
        try:
            found = referee_node(state, claim, node)
        except ClaimError:
            return node, "error"
        if found is not None:
            return node, found
    return None


def all_error(state, claim, node, picks, req, sub, exp):
    """Upstream places the All devices one by one: in use, counters, taints refuse the
    request; a broken constraint is an error (ClaimError)."""
    ok, st = check_claim(state, {"constraints": []}, node, picks)
    if not ok:
        return
    in_claim = {dev_id(d) for _, _, ds in picks for d in ds}
    done = []
    for d in exp:
        if not sub["admin"] and not d["multi"] and dev_id(d) in st.excl:
            return
        if dev_id(d) in in_claim and not d["multi"]:
            return
        if not sub["admin"] and not st.counters_fit(d):
            return
        if not tolerated(sub, d):
            return
        for c in claim["constraints"]:
            if not constraint_applies(c, req["name"], sub["name"], req["fa"]):
                continue
            vals = [attr(x, c["attr"]) for r2, s2, ds in picks for x in ds
                    if constraint_applies(c, r2["name"], s2["name"], r2["fa"])]
            vals += [attr(x, c["attr"]) for x in done]
            v = attr(d, c["attr"])
            if v is None or (c["kind"] == "match" and vals and vals[0] != v) or (c["kind"] == "distinct" and v in vals):
                raise ClaimError()
        amt = amount(sub, d) or {}
        if d["multi"] and not st.room(d, amt):
            return
        st.take(d, amt, sub["admin"])
        in_claim.add(dev_id(d))
        done.append(d)


def referee_node(state, claim, node):
    reqs = claim["requests"]
    options = []
    for req in reqs:
        per = []
        for sub in req["subs"]:
            if sub["all"]:
                per.append((sub, [all_set(state, sub, node)]))
            else:
                cands = [d for d in matching(state.cluster, sub, node)]
                per.append((sub, cands))
        options.append(per)

    spent = [0]

    def rec(i, picks):
        spent[0] += 1
        if spent[0] > REFEREE_BUDGET:
            raise TooBig()
        if i == len(reqs):
            ok, _ = check_claim(state, claim, node, picks)
            return list(picks) if ok else None
        for sub, cands in options[i]:
            combos = [cands[0]] if sub["all"] else itertools.combinations(cands, sub["count"])
            if sub["all"] and not cands[0]:
                continue
            if sub["all"]:
                all_error(state, claim, node, picks, reqs[i], sub, cands[0])
            for combo in combos:
                picks.append((reqs[i], sub, list(combo)))
                if i + 1 < len(reqs) and not partial_ok(state, claim, node, picks):
                    picks.pop()
                    continue
                r = rec(i + 1, picks)
                picks.pop()
                if r is not None:
                    return r
        return None
    return rec(0, [])


def partial_ok(state, claim, node, picks):
    sub_claim = {"constraints": [c for c in claim["constraints"]]}
    # constraints over requests not yet picked are checked at the end; a partial
    # pick only needs each device rule and the constraints among what is picked
    ok, _ = check_claim(state, sub_claim, node, picks)
    return ok


# ---------------------------------------------------------------- running both

def run_both(devplane, oracle, path):
    """Both programs on one input, side by side."""
    dp = subprocess.Popen([devplane, "allocate", "-f", path, "-o", "json", "--details"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    orc = subprocess.Popen([oracle, "-pretty=false", "-timeout", "10s", path], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    dout, derr = dp.communicate(timeout=300)
    oout, oerr = orc.communicate(timeout=600)
    if dp.returncode not in (0, 1):
        raise RuntimeError(f"devplane allocate exit {dp.returncode} on {path}: {derr[-2000:]}")
    if orc.returncode != 0:
        raise RuntimeError(f"oracle exit {orc.returncode} on {path}: {oerr[-2000:]}")
    doc = json.loads(dout)
    items = doc["items"] if doc.get("kind") == "List" else [doc]
    return {o["metadata"]["name"]: o for o in items}, derr, {c["name"]: c for c in json.loads(oout)["claims"]}


def dp_result(obj):
    a = (obj.get("status") or {}).get("allocation")
    if not a:
        return None, None
    node = None
    for t in (a.get("nodeSelector") or {}).get("nodeSelectorTerms", []):
        for f in t.get("matchFields", []):
            if f.get("key") == "metadata.name" and f.get("operator") == "In":
                node = f["values"][0]
    devs = [(r["request"], r["driver"], r["pool"], r["device"], bool(r.get("adminAccess")),
             tuple(sorted((k, str(v)) for k, v in (r.get("consumedCapacity") or {}).items())))
            for r in a["devices"]["results"]]
    return node, devs


def or_result(c):
    if c.get("error") or not c.get("node") and not c.get("devices"):
        return None, None
    devs = [(r["request"], r["driver"], r["pool"], r["device"], bool(r.get("adminAccess")),
             tuple(sorted((k, str(v)) for k, v in (r.get("consumedCapacity") or {}).items())))
            for r in c["devices"]]
    return c.get("node") or None, devs


def picks_of(cluster, claim, devs):
    """devplane/oracle result rows -> picks for check_claim, or None if malformed."""
    by_id = {dev_id(d): d for d in cluster["devices"]}
    picks = []
    for req in claim["requests"]:
        rows = [r for r in devs if r[0] == req["name"] or r[0].startswith(req["name"] + "/")]
        names = {r[0] for r in rows}
        if len(names) != 1:
            return None
        rn = names.pop()
        sub = req["subs"][0] if not req["fa"] else next((s for s in req["subs"] if f"{req['name']}/{s['name']}" == rn), None)
        if sub is None or (req["fa"] and rn == req["name"]):
            return None
        ds = []
        for r in rows:
            d = by_id.get((r[1], r[2], r[3]))
            if d is None or r[4] != sub["admin"]:
                return None
            ds.append(d)
        picks.append((req, sub, ds))
    if sum(len(p[2]) for p in picks) != len(devs):
        return None
    return picks


def expected_caps(picks):
    out = []
    for req, sub, ds in picks:
        for d in ds:
            amt = amount(sub, d) or {}
            out.append(tuple(sorted((k, str(v)) for k, v in amt.items())) if d["multi"] else ())
    return out


def valid(state, claim, node, devs, cluster):
    picks = picks_of(cluster, claim, devs)
    if picks is None:
        return False, "results do not match the requests", None
    nodes = [node] if node else [n for n in cluster["nodes"]
                                 if all(reaches(cluster, d, n) for p in picks for d in p[2])]
    if [r[5] for r in devs] != expected_caps(picks):
        return False, f"consumedCapacity {[r[5] for r in devs]}, expected {expected_caps(picks)}", None
    why = "no node reaches every device"
    for n in nodes:
        ok, st = check_claim(state, claim, n, picks)
        if ok:
            return True, "", st
        why = st
    return False, why, None


def key_of(devs):
    return [r[:5] for r in devs] if devs else None


class Stats:
    def __init__(self):
        self.steps = self.agree = self.allocated = self.disagree = self.invalid = 0
        self.refereed = self.referee_gave_up = self.both_error = 0
        self.classified = {}
        self.notes = []


def run_sequence(seed, devplane, oracle, tmp, stats, verbose):
    rng = random.Random(seed)
    cluster = gen_cluster(rng)
    claims = [gen_claim(rng, f"c{i}") for i in range(rng.randint(4, 9))]
    state = State(cluster)
    held = []            # devplane's allocated claim objects so far
    pending = list(range(len(claims)))
    path = os.path.join(tmp, f"seq-{seed}.yaml")
    while pending:
        objs = cluster["objs"] + held + [claims[i][0] for i in pending]
        with open(path, "w") as f:
            yaml.dump_all(objs, f, Dumper=NoAliases, sort_keys=False)
        dp, dp_err, orc = run_both(devplane, oracle, path)
        stop = None
        for k, ci in enumerate(pending):
            obj, cm = claims[ci]
            name = obj["metadata"]["name"]
            stats.steps += 1
            dnode, ddevs = dp_result(dp[name])
            onode, odevs = or_result(orc[name])
            if ddevs is not None:
                stats.allocated += 1
                ok, why, st = valid(state, cm, dnode, ddevs, cluster)
                if not ok:
                    stats.invalid += 1
                    stats.notes.append(f"seed {seed} claim {name}: devplane allocation invalid: {why}: {ddevs}")
                    st = None
            same = key_of(ddevs) == key_of(odevs) and (dnode is None or onode is None or dnode == onode) \
                and (ddevs is None or [r[5] for r in ddevs] == [r[5] for r in odevs])
            if same:
                stats.agree += 1
                if ddevs is None and "no later node is tried" in claim_reasons(dp_err, name):
                    # devplane: an error of the claim on node X; upstream must fail it
                    # the same way, or the referee must reach the same error
                    enode = claim_reasons(dp_err, name).strip().split(":")[0]
                    m = re.search(r"([\w.-]+): claim [^;]*claim constraint would not be satisfied",
                                  orc[name].get("error", ""))
                    try:
                        ref = None if m and m.group(1) == enode else referee(state, cm)
                    except TooBig:
                        ref = None
                        stats.referee_gave_up += 1
                    if (m and m.group(1) == enode) or ref == (enode, "error"):
                        stats.both_error += 1
                    else:
                        stats.disagree += 1
                        if KEEP:
                            os.makedirs(KEEP, exist_ok=True)
                            shutil.copy(path, os.path.join(KEEP, f"seed-{seed}-{name}.yaml"))
                        stats.notes.append(f"seed {seed} claim {name}: devplane: error of the claim on {enode}; "
                                           f"upstream: {orc[name].get('error', '')[:200]}; referee: {ref and ref[0]}")
                elif ddevs is None:
                    # both found nothing: the referee must not find anything either
                    try:
                        ref = referee(state, cm)
                    except TooBig:
                        ref = None
                        stats.referee_gave_up += 1
                    if ref is not None and ref[1] != "error":
                        stats.disagree += 1
                        stats.notes.append(f"seed {seed} claim {name}: both found nothing, the referee finds "
                                           f"{ref[0]}: {[(r['name'], s['name'], [d['name'] for d in ds]) for r, s, ds in ref[1]]}")
                        if KEEP:
                            os.makedirs(KEEP, exist_ok=True)
                            shutil.copy(path, os.path.join(KEEP, f"seed-{seed}-{name}.yaml"))
                    else:
                        stats.refereed += 1
                elif ddevs is not None:
                    try:
                        ref = referee(state, cm)
                    except TooBig:
                        ref = "too big"
                        stats.referee_gave_up += 1
                    rkey = None if ref in (None, "too big") or ref[1] == "error" else [
                        (r["name"] if not r["fa"] else f"{r['name']}/{s['name']}", d["driver"], d["pool"], d["name"],
                         s["admin"]) for r, s, ds in ref[1] for d in ds]
                    if ref == "too big":
                        pass
                    elif ref is None or rkey != key_of(ddevs):
                        stats.disagree += 1
                        stats.notes.append(f"seed {seed} claim {name}: both allocated {key_of(ddevs)}, the referee "
                                           f"says {ref and ref[0]}: {rkey}")
                    else:
                        stats.refereed += 1
            else:
                classify(seed, name, cluster, state, cm, (dnode, ddevs), (onode, odevs), orc[name], dp_err, stats,
                         verbose)
                if KEEP:
                    os.makedirs(KEEP, exist_ok=True)
                    shutil.copy(path, os.path.join(KEEP, f"seed-{seed}-{name}.yaml"))
            if ddevs is not None and st is not None:
                state = st
            if not same:
                stop = k
                break
        done = pending if stop is None else pending[:stop + 1]
        for ci in done:
            o = dp[claims[ci][0]["metadata"]["name"]]
            if (o.get("status") or {}).get("allocation"):
                held.append(o)
        pending = [] if stop is None else pending[stop + 1:]
    if verbose:
        print(f"seed {seed}: {len(claims)} claims")


def claim_reasons(stderr, name):
    """The lines devplane printed for one claim that was not allocated."""
    out, inside = [], False
    for line in stderr.splitlines():
        if line.startswith("ResourceClaim "):
            inside = line.startswith(f"ResourceClaim default/{name}:")
        elif inside:
            out.append(line)
    return "\n".join(out)


def classify(seed, name, cluster, state, claim, dres, ores, orc, dp_err, stats, verbose):
    dnode, ddevs = dres
    dp_err = claim_reasons(dp_err, name)
    onode, odevs = ores
    err = orc.get("error", "")
    label = None
    if "deadline" in err or "context" in err and "exceeded" in err:
        label = "no-answer (upstream deadline)"
    elif ddevs is None and "no later node is tried" in dp_err and "claim constraint would not be satisfied" in err \
            and re.search(r"([\w.-]+): claim [^;]*claim constraint would not be satisfied", err).group(1) == \
            dp_err.strip().split(":")[0]:
        label = None  # both: an error of the claim; only the wording differs
        stats.agree += 1
        stats.both_error += 1
        return
    else:
        try:
            ref = referee(state, claim)
        except TooBig:
            ref = "too big"
        if ref == "too big":
            stats.disagree += 1
            stats.notes.append(f"seed {seed} claim {name}: DISAGREE (the referee gave up) devplane={dnode}:"
                               f"{key_of(ddevs)} upstream={onode}:{key_of(odevs)} {err[:300]}")
            return
        rkey = None
        dp_error_node = None
        if ddevs is None and "no later node is tried" in dp_err:
            dp_error_node = dp_err.strip().split(":")[0]
        if ref is not None and ref[1] == "error":
            rkey = ("error", ref[0])
        elif ref is not None:
            rnode, picks = ref
            rkey = [(req["name"] if not req["fa"] else f"{req['name']}/{sub['name']}", d["driver"], d["pool"],
                     d["name"], sub["admin"]) for req, sub, ds in picks for d in ds]
        o_ok, o_why = (valid(state, claim, onode, odevs, cluster)[:2]) if odevs is not None else (False, "")
        dkey = ("error", dp_error_node) if dp_error_node else key_of(ddevs)
        if dkey == rkey:
            if odevs is not None and not o_ok:
                if "distinctAttribute" in o_why:
                    label = "kubernetes#140600 (upstream allocation breaks distinctAttribute)"
                else:
                    label = None
            elif ref is not None and any(d["counters"] for n in cluster["nodes"] for d in cluster["devices"]
                                         if reaches(cluster, d, n) and n <= ref[0]):
                label = "kubernetes#140436 (upstream misses the first valid allocation, shared counters on the way)"
        if label is None:
            stats.disagree += 1
            stats.notes.append(f"seed {seed} claim {name}: DISAGREE devplane={dnode}:{key_of(ddevs)} "
                               f"upstream={onode}:{key_of(odevs)} {err[:300]} referee={rkey}")
            return
    stats.classified[label] = stats.classified.get(label, 0) + 1
    if verbose:
        print(f"seed {seed} claim {name}: {label}")


def find_oracle(explicit, tmp):
    if explicit:
        return explicit
    shared = os.environ.get("DP_SHARED_DIR")
    if not shared:
        here = os.path.dirname(os.path.abspath(__file__))
        shared = os.path.join(here, "..", "..", "..", "shared")
    xz = os.path.join(shared, ORACLE_XZ)
    if not os.path.exists(xz):
        return None
    out = os.path.join(tmp, "dra-oracle")
    with lzma.open(xz) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    os.chmod(out, 0o755)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sequences", type=int, default=20)
    ap.add_argument("--oracle")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--keep", help="copy the inputs where devplane and upstream differ into this directory")
    a = ap.parse_args(argv)
    global KEEP
    KEEP = a.keep
    devplane = os.environ.get("DEVPLANE", "devplane")
    with tempfile.TemporaryDirectory() as tmp:
        oracle = find_oracle(a.oracle, tmp)
        if not oracle:
            print("SKIP: the upstream allocator (shared tools/upstream-dra) is not available")
            return 77
        stats = Stats()
        for i in range(a.sequences):
            run_sequence(a.seed * 100003 + i, devplane, oracle, tmp, stats, a.verbose)
    print(f"sequences {a.sequences} (seed {a.seed}), steps {stats.steps}, agree {stats.agree}, "
          f"devplane allocations {stats.allocated}, invalid {stats.invalid}, disagreements {stats.disagree}; "
          f"agreements confirmed by the referee {stats.refereed} (gave up on {stats.referee_gave_up}), "
          f"both an error of the claim {stats.both_error}")
    for k, v in sorted(stats.classified.items()):
        print(f"  classified: {k}: {v}")
    for n in stats.notes[:40]:
        print("  " + n)
    return 0 if stats.disagree == 0 and stats.invalid == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
