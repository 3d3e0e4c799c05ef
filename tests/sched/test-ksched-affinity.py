#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""InterPodAffinity and PodTopologySpread filters: devplane against the real
kube-scheduler 1.35 (shared tools/kube-scheduler, the oracle).

devplane's default scoring is binpack and the oracle's default profile spreads,
so placements are not compared node for node. What is compared is decided by
the filters alone, through the oracle's --check mode:
  - every pod devplane binds, checked on devplane's node in devplane's order,
    must be feasible for the oracle;
  - every pod devplane leaves Pending is checked (as a copy per node, after all
    the bindings) on every node: each must be infeasible, and the oracle's
    reasons must be the reason `devplane explain --details` gives that node;
  - where a case says so (`pending`), the pods left Pending are the same in the
    oracle's own run, with the same "0/N nodes are available" reasons (those in
    `not_retried`, left Pending by the queue although a node would take them
    now, are not checked per node).

The oracle runs without an API server: matchLabelKeys/mismatchLabelKeys of pod
(anti-)affinity are merged into the labelSelector by kube-apiserver when a pod
is created, so the oracle's copy of the input gets them merged as the API server
stores them (devplane merges them itself; merging twice changes nothing).

random_topology_fields() draws pod (anti-)affinity and topology spread fields
for differential tests of whole clusters (the ksched harness reuses it); with
--random N this script runs N random clusters through the same comparisons.
"""
import argparse
import copy
import json
import lzma
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

ORACLE_XZ = "tools/kube-scheduler/ksched-oracle-v1.35.4.xz"
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


# ---- objects ----

def node(name, zone=None, cpu="8", labels=None, taints=None):
    lb = {HOST: name}
    if zone:
        lb[ZONE] = zone
    lb.update(labels or {})
    res = {"cpu": cpu, "memory": "16Gi", "pods": "110"}
    n = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": lb},
         "status": {"capacity": dict(res), "allocatable": dict(res)}}
    if taints:
        n["spec"] = {"taints": taints}
    return n


def pod(name, labels=None, ns=None, on=None, cpu="1", **spec):
    s = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}
    if on:
        s["nodeName"] = on
    s.update(spec)
    md = {"name": name, "labels": dict(labels or {})}
    if ns:
        md["namespace"] = ns
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": s}


def namespace(name, labels):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def term(match, key, **extra):
    t = {"labelSelector": {"matchLabels": match} if match is not None else None, "topologyKey": key}
    if t["labelSelector"] is None:
        del t["labelSelector"]
    t.update(extra)
    return t


def affinity(aff=None, anti=None):
    a = {}
    if aff:
        a["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": aff}
    if anti:
        a["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": anti}
    return a


def spread(key, match, skew=1, when="DoNotSchedule", **extra):
    c = {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": when,
         "labelSelector": {"matchLabels": match}}
    c.update(extra)
    return c


# ---- the shapes ----

def cases():
    c = {}
    web_anti = affinity(anti=[term({"app": "web"}, HOST)])
    c["anti-hostname"] = dict(objs=[node("n1", "a"), node("n2", "a"), node("n3", "b")] +
                              [pod(f"web-{i}", {"app": "web"}, affinity=web_anti) for i in range(4)],
                              pending=["web-3"])
    zone_anti = affinity(anti=[term({"app": "db"}, ZONE)])
    c["anti-zone"] = dict(objs=[node("n1", "a"), node("n2", "a"), node("n3", "b")] +
                          [pod(f"db-{i}", {"app": "db"}, affinity=zone_anti) for i in range(3)],
                          pending=["db-2"])
    guard = affinity(anti=[term({"app": "web"}, HOST)])
    c["existing-anti"] = dict(objs=[node("n1", "a"), node("n2", "a", cpu="1"),
                                    pod("guard", {"app": "guard"}, on="n1", affinity=guard),
                                    pod("filler", {"app": "filler"}, on="n2"),
                                    pod("web", {"app": "web"}), pod("other", {"app": "other"})],
                              pending=["web"])
    # Queueing hints on a pod bound: only InterPodAffinity (the added pod
    # matches all of the waiting pod's affinity terms) and PodTopologySpread
    # requeue; "shy" (rejected by anti-affinity and a taint) keeps the
    # reasons of its first attempt, "follower" is tried again once "fill" runs.
    # (A pod's order is its place in the list: "fan" is tried before "fill".)
    taint = [{"key": "t", "value": "x", "effect": "NoSchedule"}]
    c["hints-on-pod-bound"] = dict(objs=[
        node("n1", "a", cpu="2500m"), node("n2", "b", taints=taint),
        pod("guard", {"app": "guard"}, on="n1"),
        pod("shy", {"app": "shy"}, affinity=affinity(anti=[term({"app": "guard"}, HOST)])),
        pod("lonely", {"app": "lonely"}, affinity=affinity(aff=[term({"app": "nobody"}, HOST)])),
        pod("follower", {"app": "follower"}, cpu="100m", affinity=affinity(aff=[term({"app": "fill"}, HOST)])),
        pod("fill", {"app": "fill"}),
        # the hint matches a namespaceSelector against no labels: "fan" is not tried again
        namespace("team-a", {"team": "a"}),
        pod("fan", {"app": "fan"}, cpu="100m", affinity=affinity(aff=[
            term({"app": "teamfill"}, HOST, namespaceSelector={"matchLabels": {"team": "a"}})])),
        pod("teamfill", {"app": "teamfill"}, ns="team-a", cpu="100m")], pending=["shy", "lonely", "fan"],
        not_retried=["fan"])
    near = affinity(aff=[term({"app": "cache"}, ZONE)])
    c["affinity-existing"] = dict(objs=[node("n1", "a"), node("n2", "a"), node("n3", "b"),
                                        pod("cache-0", {"app": "cache"}, on="n2"),
                                        pod("near-cache", {}, affinity=near),
                                        pod("near-nothing", {}, affinity=affinity(aff=[term({"app": "db"}, ZONE)])),
                                        pod("no-key", {}, affinity=affinity(aff=[term({"app": "cache"}, "rack")]))],
                                  pending=["near-nothing", "no-key"])
    grp = affinity(aff=[term({"app": "grp"}, ZONE)])
    c["self-affinity"] = dict(objs=[node("n1", "a"), node("n2", "b"), node("n3", "b")] +
                              [pod(f"grp-{i}", {"app": "grp"}, affinity=grp) for i in range(3)] +
                              [pod("not-self", {"app": "other"}, affinity=affinity(aff=[term({"app": "nobody"}, ZONE)]))],
                              pending=["not-self"])
    c["namespace-selector"] = dict(objs=[
        node("n1", "a"), node("n2", "a"), namespace("team-a", {"team": "a"}), namespace("team-b", {"team": "b"}),
        pod("db", {"app": "db"}, ns="team-a", on="n1"),
        pod("away", {}, affinity=affinity(anti=[term({"app": "db"}, HOST, namespaceSelector={"matchLabels": {"team": "a"}})])),
        pod("near-any-ns", {}, affinity=affinity(aff=[term({"app": "db"}, HOST, namespaceSelector={})])),
        pod("near-team-b", {}, affinity=affinity(aff=[term({"app": "db"}, HOST, namespaces=["team-b"])])),
        pod("near-own-ns", {}, affinity=affinity(aff=[term({"app": "db"}, HOST)])),
        pod("near-by-name", {}, affinity=affinity(aff=[term({"app": "db"}, HOST, namespaceSelector={
            "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["team-a"]}]})]))],
        pending=["near-team-b", "near-own-ns"])
    mlk = affinity(anti=[term({"app": "x"}, HOST, matchLabelKeys=["version"])])
    mis = affinity(aff=[term({"app": "x"}, HOST, mismatchLabelKeys=["version"])])
    c["match-label-keys"] = dict(objs=[node("n1", "a"), node("n2", "a", cpu="1"),
                                       pod("x1", {"app": "x", "version": "v1"}, on="n1"),
                                       pod("fill", {}, on="n2"),
                                       pod("x-v1", {"app": "x", "version": "v1"}, affinity=mlk),
                                       pod("x-v2", {"app": "x", "version": "v2"}, affinity=mlk),
                                       pod("y-v1", {"app": "y", "version": "v1"}, affinity=mis),
                                       pod("y-v3", {"app": "y", "version": "v3"}, affinity=mis)],
                                 pending=["x-v1"])
    zs = {"topologySpreadConstraints": [spread(ZONE, {"app": "s"})]}
    c["spread-zone"] = dict(objs=[node("z1-a", "z1"), node("z1-b", "z1"), node("z2-a", "z2", cpu="2")] +
                            [pod(f"s-{i}", {"app": "s"}, **zs) for i in range(6)], pending=["s-5"])
    hs = {"topologySpreadConstraints": [spread(HOST, {"app": "h"})]}
    c["spread-hostname"] = dict(objs=[node("n1", "a", cpu="3"), node("n2", "a"), node("n3", "b", cpu="1")] +
                                [pod(f"h-{i}", {"app": "h"}, **hs) for i in range(8)],
                                pending=["h-5", "h-6", "h-7"])
    md = {"topologySpreadConstraints": [spread(ZONE, {"app": "m"}, minDomains=3)]}
    c["min-domains"] = dict(objs=[node("n1", "a"), node("n2", "b")] +
                            [pod(f"m-{i}", {"app": "m"}, **md) for i in range(3)], pending=["m-2"])
    honor = {"topologySpreadConstraints": [spread(ZONE, {"app": "p"})], "nodeSelector": {"disk": "ssd"}}
    ignore = {"topologySpreadConstraints": [spread(ZONE, {"app": "q"}, nodeAffinityPolicy="Ignore")],
              "nodeSelector": {"disk": "ssd"}}
    c["node-affinity-policy"] = dict(objs=[node("n1", "a", labels={"disk": "ssd"}), node("n2", "a", labels={"disk": "ssd"}),
                                           node("n3", "b")] +
                                     [pod(f"p-{i}", {"app": "p"}, **honor) for i in range(2)] +
                                     [pod(f"q-{i}", {"app": "q"}, **ignore) for i in range(2)],
                                     pending=["q-1"])
    taint = [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]
    th = {"topologySpreadConstraints": [spread(ZONE, {"app": "t"}, nodeTaintsPolicy="Honor")]}
    ti = {"topologySpreadConstraints": [spread(ZONE, {"app": "u"})]}
    c["node-taints-policy"] = dict(objs=[node("n1", "a"), node("n2", "a"), node("n3", "b", taints=taint)] +
                                   [pod(f"t-{i}", {"app": "t"}, **th) for i in range(2)] +
                                   [pod(f"u-{i}", {"app": "u"}, **ti) for i in range(2)],
                                   pending=["u-1"])
    ml = {"topologySpreadConstraints": [spread(HOST, {"app": "r"}, matchLabelKeys=["hash"])]}
    anyway = {"topologySpreadConstraints": [spread(HOST, {"app": "r"}, when="ScheduleAnyway"),
                                            spread(ZONE, {"app": "r"})]}
    c["spread-keys-and-anyway"] = dict(objs=[node("n1", "a"), node("n2", "b"), node("n3"),
                                             pod("r-old-0", {"app": "r", "hash": "h1"}, on="n1"),
                                             pod("r-old-1", {"app": "r", "hash": "h1"}, on="n1")] +
                                       [pod(f"r-new-{i}", {"app": "r", "hash": "h2"}, **ml) for i in range(3)] +
                                       [pod("r-any", {"app": "r"}, **anyway)],
                                       pending=[])
    empty_sel = {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                                                "labelSelector": {}}]}
    c["spread-empty-selector"] = dict(objs=[node("n1", "a"), node("n2", "b")] +
                                      [pod(f"e-{i}", {"app": "e"}, **empty_sel) for i in range(4)], pending=[])
    dra = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}},
           {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "one-gpu"},
            "spec": {"spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu"}}]}}}}]
    dra += [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{n}-gpu"},
             "spec": {"driver": "gpu.example.com", "nodeName": n, "pool": {"name": n, "generation": 1, "resourceSliceCount": 1},
                      "devices": [{"name": "gpu-0"}]}} for n in ("n1", "n2")]
    claim = {"resourceClaims": [{"name": "g", "resourceClaimTemplateName": "one-gpu"}]}
    dpods = []
    for i in range(3):
        p = pod(f"d-{i}", {"app": "d"}, affinity=affinity(anti=[term({"app": "d"}, HOST)]), **claim)
        p["spec"]["containers"][0]["resources"]["claims"] = [{"name": "g"}]
        dpods.append(p)
    # the claims' filter comes after these plugins: n3 (no device) says so only where they pass
    c["dra-and-anti"] = dict(objs=[node("n1", "a"), node("n2", "a"), node("n3", "b")] + dra + dpods, pending=["d-2"])
    return c


# ---- the random generator (reused by the differential harness) ----

def random_selector(rng, apps):
    if rng.random() < 0.7:
        return {"matchLabels": {"app": rng.choice(apps)}}
    op = rng.choice(["In", "NotIn", "Exists", "DoesNotExist"])
    req = {"key": rng.choice(["app", "tier"]), "operator": op}
    if op in ("In", "NotIn"):
        req["values"] = rng.sample(apps, rng.randint(1, min(2, len(apps))))
    return {"matchExpressions": [req]}


def random_topology_fields(rng, apps, keys=(HOST, ZONE), namespaces=()):
    """Pod spec fields drawn at random: required pod affinity / anti-affinity
    terms (namespaces, namespaceSelector, matchLabelKeys/mismatchLabelKeys)
    and topology spread constraints (DoNotSchedule and ScheduleAnyway,
    minDomains, nodeAffinityPolicy, nodeTaintsPolicy, matchLabelKeys). May
    return {} (no such field)."""
    spec = {}
    aff, anti = [], []
    for lst, p in ((aff, 0.25), (anti, 0.35)):
        while rng.random() < p and len(lst) < 2:
            t = {"labelSelector": random_selector(rng, apps), "topologyKey": rng.choice(keys)}
            r = rng.random()
            if r < 0.1 and namespaces:
                t["namespaces"] = rng.sample(list(namespaces), 1)
            elif r < 0.2:
                t["namespaceSelector"] = {} if rng.random() < 0.5 else {"matchLabels": {"team": "a"}}
            if rng.random() < 0.15:
                t["matchLabelKeys" if rng.random() < 0.5 else "mismatchLabelKeys"] = ["tier"]
            lst.append(t)
    if aff or anti:
        spec["affinity"] = affinity(aff, anti)
    cons, used = [], set()
    while rng.random() < 0.4 and len(cons) < 2:
        key, when = rng.choice(keys), rng.choice(["DoNotSchedule", "DoNotSchedule", "ScheduleAnyway"])
        if (key, when) in used:
            break
        used.add((key, when))
        c = {"maxSkew": rng.choice([1, 1, 2]), "topologyKey": key, "whenUnsatisfiable": when,
             "labelSelector": random_selector(rng, apps)}
        if when == "DoNotSchedule" and rng.random() < 0.2:
            c["minDomains"] = rng.randint(1, 4)
        if rng.random() < 0.2:
            c["nodeAffinityPolicy"] = rng.choice(["Honor", "Ignore"])
        if rng.random() < 0.2:
            c["nodeTaintsPolicy"] = rng.choice(["Honor", "Ignore"])
        if rng.random() < 0.15:
            c["matchLabelKeys"] = ["tier"]
        cons.append(c)
    if cons:
        spec["topologySpreadConstraints"] = cons
    return spec


def random_case(seed):
    rng = random.Random(seed)
    apps = ["a", "b", "c"]
    zones = ["z1", "z2", "z3"][:rng.randint(1, 3)]
    objs = [namespace("team-a", {"team": "a"}), namespace("team-b", {"team": "b"})]
    nodes = []
    for i in range(rng.randint(3, 6)):
        taints = [{"key": "t", "value": "x", "effect": "NoSchedule"}] if rng.random() < 0.15 else None
        lb = {"disk": "ssd"} if rng.random() < 0.5 else {}
        n = node(f"n{i}", rng.choice(zones + [None]) if rng.random() < 0.15 else rng.choice(zones),
                 cpu=str(rng.randint(2, 4)), labels=lb, taints=taints)
        nodes.append(n)
    objs += nodes
    for i in range(rng.randint(4, 12)):
        labels = {"app": rng.choice(apps)}
        if rng.random() < 0.5:
            labels["tier"] = rng.choice(["fe", "be"])
        ns = rng.choice([None, None, "team-a", "team-b"])
        spec = random_topology_fields(rng, apps, namespaces=("team-a", "team-b", "default"))
        if rng.random() < 0.2:
            spec["nodeSelector"] = {"disk": "ssd"}
        if rng.random() < 0.1:
            spec["tolerations"] = [{"operator": "Exists"}]
        on = rng.choice(nodes)["metadata"]["name"] if rng.random() < 0.3 else None
        objs.append(pod(f"p{i}", labels, ns=ns, on=on, **spec))
    return dict(objs=objs, pending=None)


# ---- running both ----

def api_server_merge(objs):
    """kube-apiserver's create-time merge of pod (anti-)affinity
    matchLabelKeys (In) and mismatchLabelKeys (NotIn) into the labelSelector."""
    out = [copy.deepcopy(o) for o in objs]  # one by one: the cases share spec dicts between pods
    for o in out:
        if o["kind"] != "Pod":
            continue
        labels = o["metadata"].get("labels") or {}
        for kind in ("podAffinity", "podAntiAffinity"):
            terms = (o["spec"].get("affinity") or {}).get(kind, {}).get("requiredDuringSchedulingIgnoredDuringExecution") or []
            for t in terms:
                if t.get("labelSelector") is None:
                    continue
                exprs = t["labelSelector"].setdefault("matchExpressions", [])
                for key, op in [(k, "In") for k in t.get("matchLabelKeys", [])] + \
                               [(k, "NotIn") for k in t.get("mismatchLabelKeys", [])]:
                    if key in labels:
                        exprs.append({"key": key, "operator": op, "values": [labels[key]]})
    return out


def find_oracle(tmp):
    shared = os.environ.get("DP_SHARED_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared")
    xz = os.path.join(shared, ORACLE_XZ)
    if not os.path.exists(xz):
        return None
    out = os.path.join(tmp, "ksched-oracle")
    with lzma.open(xz) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    os.chmod(out, 0o755)
    return out


def write(tmp, name, objs):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": objs}, f)
    return path


def key_of(o):
    return f'{o["metadata"].get("namespace") or "default"}/{o["metadata"]["name"]}'


def taint_text(why):
    """kube-scheduler 1.35 no longer names the taint; devplane still does (its
    TaintToleration text is not this test's subject)."""
    return re.sub(r"untolerated taint \{.*\}$", "untolerated taint(s)", why) if why else why


def reasons_of(msg):
    """The "N reason" items of a "0/N nodes are available: ..." message."""
    head = msg.split(". ")[0].rstrip(".")
    return sorted(taint_text(r) for r in head.split(": ", 1)[1].split(", ")) if ": " in head else [head]


def devplane_explain(devplane, path, pod_key):
    out = subprocess.run([devplane, "explain", pod_key, "-f", path, "--details"], capture_output=True, text=True)
    per_node, on = {}, False
    for line in out.stdout.splitlines():
        if line.startswith("Per node"):
            on = True
        elif on and line.startswith("  ") and ": " in line:
            n, why = line.strip().split(": ", 1)
            per_node[n] = why
    return per_node


def run_case(name, case, devplane, oracle, tmp, verbose):
    objs = case["objs"]
    path = write(tmp, f"{name}.json", objs)
    out = subprocess.run([devplane, "simulate", "-f", path, "-o", "json"], capture_output=True, text=True)
    if out.returncode != 0:
        return [f"devplane simulate failed ({out.returncode}): {out.stderr.strip()}"]
    dp = {p["name"]: p for p in json.loads(out.stdout)["asWritten"]["pods"]}
    unbound = [o for o in objs if o["kind"] == "Pod" and not o["spec"].get("nodeName")]
    nodes = [o["metadata"]["name"] for o in objs if o["kind"] == "Node"]
    order = {key_of(o): i for i, o in enumerate(unbound)}
    bound = sorted((k for k in order if dp[k].get("node")), key=lambda k: (dp[k]["attempts"] > 1, order[k]))
    pending = [k for k in order if not dp[k].get("node")]
    # the oracle's input: the API server's merge, plus a copy of each Pending pod per node
    oobjs = api_server_merge(objs)
    checks = [{"pod": k, "node": dp[k]["node"]} for k in bound]
    # not_retried: Pending as no event moved them, though a node would take them now
    not_retried = {f"default/{p}" if "/" not in p else p for p in case.get("not_retried", [])}
    for k in (k for k in pending if k not in not_retried):
        src = next(o for o in oobjs if o["kind"] == "Pod" and key_of(o) == k)
        for n in nodes:
            cp = copy.deepcopy(src)
            cp["metadata"]["name"] += f"--on--{n}"
            oobjs.append(cp)
            checks.append({"pod": key_of(cp), "node": n, "of": k})
    opath = write(tmp, f"{name}.oracle.json", oobjs)
    cpath = os.path.join(tmp, f"{name}.check.json")
    with open(cpath, "w") as f:
        json.dump([{"pod": c["pod"], "node": c["node"]} for c in checks], f)
    res = subprocess.run([oracle, "-f", opath, "--check", cpath], capture_output=True, text=True)
    if res.returncode != 0:
        return [f"oracle failed ({res.returncode}): {res.stderr.strip()[-400:]}"]
    got = json.loads(res.stdout)["checks"]
    bad = []
    explained = {}
    for c, g in zip(checks, got):
        if "of" not in c:
            if not g.get("feasible"):
                bad.append(f'{c["pod"]} bound to {c["node"]} by devplane; the oracle: {g.get("plugin")}: {g.get("reasons")}')
            continue
        k = c["of"]
        if k not in explained:
            explained[k] = devplane_explain(devplane, path, k)
        mine = taint_text(explained[k].get(c["node"]))
        if g.get("feasible"):
            bad.append(f'{k} Pending in devplane ({dp[k].get("reason")}), the oracle fits it on {c["node"]}')
        elif mine not in (g.get("reasons") or []):
            bad.append(f'{k} on {c["node"]}: devplane "{mine}", the oracle {g.get("plugin")}: {g.get("reasons")}')
    if case.get("pending") is not None:
        want = sorted(f"default/{p}" if "/" not in p else p for p in case["pending"])
        if sorted(pending) != want:
            bad.append(f"devplane left {sorted(pending)} Pending, the case expects {want}")
        res = subprocess.run([oracle, "-f", opath], capture_output=True, text=True)
        opods = {f'{p["namespace"]}/{p["name"]}': p for p in json.loads(res.stdout)["pods"]}
        opend = sorted(k for k in order if not opods[k].get("node"))
        if opend != sorted(pending):
            bad.append(f"Pending: devplane {sorted(pending)}, the oracle {opend}")
        for k in set(opend) & set(pending):
            if reasons_of(dp[k].get("reason", "")) != reasons_of(opods[k].get("message", "")):
                bad.append(f'{k}: devplane "{dp[k].get("reason")}", the oracle "{opods[k].get("message")}"')
    if verbose:
        print(f"{name}: bound {len(bound)}, pending {len(pending)}, checks {len(checks)}, problems {len(bad)}")
    return bad


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--random", type=int, default=12, help="random clusters after the shapes")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", help="run only cases whose name contains this")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv)
    devplane = os.environ.get("DEVPLANE", "devplane")
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        oracle = find_oracle(tmp)
        if not oracle:
            print("SKIP: kube-scheduler (shared tools/kube-scheduler) is not available")
            return 77
        all_cases = list(cases().items())
        all_cases += [(f"random-{a.seed}-{i}", random_case(a.seed * 1000 + i)) for i in range(a.random)]
        for name, case in all_cases:
            if a.only and a.only not in name:
                continue
            bad = run_case(name, case, devplane, oracle, tmp, a.verbose)
            for b in bad:
                print(f"FAIL {name}: {b}")
            failed += bool(bad)
    print(f"{len(all_cases)} cases, {failed} with differences")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
