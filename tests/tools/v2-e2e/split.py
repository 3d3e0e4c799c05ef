# SPDX-License-Identifier: Apache-2.0
# split.py OUTDIR NAME FILE... — stage dra-example-driver workload files (read
# from the shared folder, never copied into the repository) for
# test-v2-e2e.sh, playing the API server and the controllers that are not the
# node's:
#   OUTDIR/NAME-pods.yaml    pods (Deployments expanded as the ReplicaSet
#                            controller would: <deployment>-<i>), templates,
#                            PodGroups: what the node reads
#   OUTDIR/NAME-claims.yaml  the workload's own ResourceClaims with a uid
#   OUTDIR/NAME-rules.yaml   Namespaces (their admin-access label) and
#                            DeviceTaintRules: for `devplane allocate` only
#   OUTDIR/NAME-pods.txt     "<ns>/<pod> <claim the node resolves first>"
# Claims from templates are NOT written: `devplane node` creates them.
import sys, yaml

out, name, files = sys.argv[1], sys.argv[2], sys.argv[3:]
docs = []
for f in files:
    docs += [d for d in yaml.safe_load_all(open(f)) if d]
pods, node_objs, claims, rules = [], [], [], []
for d in docs:
    kind = d.get("kind")
    ns = d.get("metadata", {}).get("namespace", "default")
    if kind == "Pod":
        d.setdefault("apiVersion", "v1")  # device-taint-pod-noschedule/4 leaves it out
        pods.append(d)
    elif kind == "Deployment":
        t = d["spec"]["template"]
        for i in range(d["spec"].get("replicas", 1)):
            pods.append({"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": "%s-%d" % (d["metadata"]["name"], i), "namespace": ns,
                                      "labels": t.get("metadata", {}).get("labels", {})},
                         "spec": t["spec"]})
    elif kind in ("ResourceClaimTemplate", "PodGroup"):
        node_objs.append(d)
    elif kind == "ResourceClaim":
        d["metadata"]["uid"] = "uid-%s-%s" % (ns, d["metadata"]["name"])
        claims.append(d)
    elif kind in ("DeviceTaintRule", "Namespace"):
        rules.append(d)
groups = {(g["metadata"].get("namespace", "default"), g["metadata"]["name"]): g for g in node_objs
          if g["kind"] == "PodGroup"}
with open("%s/%s-pods.txt" % (out, name), "w") as f:
    for p in pods:
        ns = p["metadata"].get("namespace", "default")
        rc = p["spec"]["resourceClaims"][0]
        if "resourceClaimName" in rc:
            first = rc["resourceClaimName"]
        else:
            g = groups.get((ns, p["spec"].get("schedulingGroup", {}).get("podGroupName")))
            shared = g and any(c["name"] == rc["name"] and c.get("resourceClaimTemplateName") ==
                               rc["resourceClaimTemplateName"] for c in g["spec"].get("resourceClaims", []))
            first = "%s-%s" % (g["metadata"]["name"] if shared else p["metadata"]["name"], rc["name"])
        f.write("%s/%s %s\n" % (ns, p["metadata"]["name"], first))
yaml.safe_dump_all(node_objs + pods, open("%s/%s-pods.yaml" % (out, name), "w"))
yaml.safe_dump_all(claims, open("%s/%s-claims.yaml" % (out, name), "w"))
yaml.safe_dump_all(rules, open("%s/%s-rules.yaml" % (out, name), "w"))
