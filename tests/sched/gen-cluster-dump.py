#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Write a cluster as `kubectl get nodes,pods,replicasets,deployments,
resourceslices,resourceclaims -o yaml` prints it (one `kind: List`), shaped
like the clusters of issue 23's threads, for the report's tests.

  gen-cluster-dump.py issue          the 8-node cluster of the issue threads
  gen-cluster-dump.py big [N P]      N nodes (default 1000), P pods (10000)
  gen-cluster-dump.py --new-pods K   K new (unbound) GPU pods, a file of its own
  gen-cluster-dump.py mig            four MIG nodes as GPU feature discovery labels them

`issue`: two AKS ND96asr_v4 device-plugin nodes with GPU feature-discovery
labels (one whose 8 GPUs are all held by running pods, one with 3 held and
RDMA shared devices), a time-sliced T4 node (nvidia.com/gpu: 40 = 4 GPUs x 10
replicas, as GFD labels it), a kwok DGX H100 node with SR-IOV NICs
(nvidia.com/hostdev) and RDMA, two AKS DRA nodes publishing gpu.nvidia.com
ResourceSlices (one GPU held through an allocated claim), and two CPU-only
nodes running a Deployment's pods (ReplicaSet with pod-template-hash).

`big`: 60 % device-plugin nodes (8 A100s each, every GPU held by a running
pod; 8 SR-IOV VFs each, RDMA on one in ten), 30 % DRA nodes (8 GPUs in a
ResourceSlice; two thirds of them held by running pods' allocated claims),
10 % CPU nodes; the rest of the pods are CPU pods and GPU pods still to
place (a Job on DRA through a claim template, one on the device plugin).
`mig`: an A100-40GB node under the single strategy (56 x 1g.5gb: gpu.product
NVIDIA-A100-SXM4-40GB-MIG-1g.5gb, gpu.count 56), one of 32 x 1g.10gb (four to
a GPU: the profile takes two of its eight memory slices), an H100 node under
the mixed strategy in the GPU operator's all-balanced layout (per GPU 1 x
3g.40gb, 1 x 2g.20gb, 2 x 1g.10gb: nvidia.com/mig-<profile> resources and
nvidia.com/mig-<profile>.* labels), and an A100-80GB node with four GPUs in
MIG mode (28 x 1g.10gb) and four whole; running pods hold some instances.
Deterministic: the same arguments give the same bytes.
"""
import sys

out = []
w = out.append


def labels_yaml(d, ind):
    return "\n".join("%s%s: %s" % (ind, k, '"%s"' % v) for k, v in d.items())


def gfd(product, count, replicas=None, strategy=None, mig="single"):
    l = {
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": product,
        "nvidia.com/gpu.count": str(count),
        "nvidia.com/gpu.memory": "81920",
        "nvidia.com/gpu.family": "ampere",
        "nvidia.com/cuda.driver.major": "550",
        "nvidia.com/mig.capable": "true",
        "nvidia.com/mig.strategy": mig,
        "nvidia.com/gpu.sharing-strategy": strategy or "none",
    }
    if replicas:
        l["nvidia.com/gpu.replicas"] = str(replicas)
    return l


def node(name, labels, alloc, taints=None, annotations=None):
    w("- apiVersion: v1\n  kind: Node\n  metadata:\n    name: %s" % name)
    if annotations:
        w("    annotations:\n" + labels_yaml(annotations, "      "))
    lb = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
    lb.update(labels)
    w("    labels:\n" + labels_yaml(lb, "      "))
    if taints:
        w("  spec:\n    taints:")
        for k, v, e in taints:
            w("    - {key: %s, value: %s, effect: %s}" % (k, v, e))
    a = {"cpu": "96", "memory": "1843Gi", "pods": "110", "ephemeral-storage": "2Ti"}
    a.update(alloc)
    w("  status:\n    capacity:\n" + labels_yaml(a, "      ") + "\n    allocatable:\n" + labels_yaml(a, "      "))


def owner_objects(ns, dep, rs_hash, replicas, containers_yaml, tolerate=None):
    w("""- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: %s, namespace: %s, uid: dep-%s}
  spec:
    replicas: %d
    selector: {matchLabels: {app: %s}}
    template:
      metadata: {labels: {app: %s}}
      spec:
        containers: %s""" % (dep, ns, dep, replicas, dep, dep, containers_yaml))
    if tolerate:
        w("        tolerations: [{key: %s, operator: Exists, effect: NoSchedule}]" % tolerate)
    w("""- apiVersion: apps/v1
  kind: ReplicaSet
  metadata:
    name: %s-%s
    namespace: %s
    uid: rs-%s
    labels: {app: %s, pod-template-hash: %s}
    ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: %s, uid: dep-%s, controller: true}]
  spec:
    replicas: %d
    selector: {matchLabels: {app: %s, pod-template-hash: %s}}
    template:
      metadata: {labels: {app: %s, pod-template-hash: %s}}
      spec:
        containers: %s""" % (dep, rs_hash, ns, dep, dep, rs_hash, dep, dep, replicas, dep, rs_hash, dep, rs_hash,
                            containers_yaml))
    if tolerate:
        w("        tolerations: [{key: %s, operator: Exists, effect: NoSchedule}]" % tolerate)


SUFFIX = "bcdfghjklmnpqrstvwxz2456789"


def suffix(i):
    s = ""
    for _ in range(5):
        s += SUFFIX[i % len(SUFFIX)]
        i //= len(SUFFIX)
    return s


def rs_pod(ns, dep, rs_hash, i, node_name, containers_yaml, tolerate=None):
    w("""- apiVersion: v1
  kind: Pod
  metadata:
    name: %s-%s-%s
    namespace: %s
    labels: {app: %s, pod-template-hash: %s}
    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: %s-%s, uid: rs-%s, controller: true}]
  spec:
    nodeName: %s
    containers: %s""" % (dep, rs_hash, suffix(i), ns, dep, rs_hash, dep, rs_hash, dep, node_name, containers_yaml))
    if tolerate:
        w("    tolerations: [{key: %s, operator: Exists, effect: NoSchedule}]" % tolerate)
    w("  status: {phase: Running}")


def gpu_containers(n, extra=""):
    return "[{name: main, image: nvcr.io/nvidia/pytorch:24.05-py3, resources: {limits: {nvidia.com/gpu: \"%d\"%s}}}]" % (
        n, extra)


def dra_class():
    w("""- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: gpu.nvidia.com}
  spec:
    selectors: [{cel: {expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}]""")


def dra_slice(node_name, n_gpus, product):
    w("""- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: %s-gpu.nvidia.com-x7k2p}
  spec:
    driver: gpu.nvidia.com
    nodeName: %s
    pool: {name: %s, generation: 1, resourceSliceCount: 1}
    devices:""" % (node_name, node_name, node_name))
    for i in range(n_gpus):
        w("    - {name: gpu-%d, attributes: {type: {string: gpu}, index: {int: %d}, productName: {string: %s}, "
          "uuid: {string: GPU-%08x-0000-4000-8000-%012x}}, capacity: {memory: {value: 80Gi}}}"
          % (i, i, product, sum(map(ord, node_name)) * 977 + i, i))


def dra_bound_pod(ns, name, node_name, gpu, owner=None):
    """A running pod holding gpu-<gpu> of the node's pool through its allocated claim;
    owner: the StatefulSet that made it."""
    w("""- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata: {name: %s-gpu-q8wz4, namespace: %s}
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]
  status:
    allocation:
      devices:
        results: [{request: gpu, driver: gpu.nvidia.com, pool: %s, device: gpu-%d}]
    reservedFor: [{resource: pods, name: %s, uid: uid-%s}]""" % (name, ns, node_name, gpu, name, name))
    w("""- apiVersion: v1
  kind: Pod
  metadata:
    name: %s
    namespace: %s
    uid: uid-%s%s
  spec:
    nodeName: %s
    containers: [{name: main, image: nvcr.io/nvidia/cuda:12.4.1-base, resources: {claims: [{name: gpu}]}}]
    resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu-1}]
  status:
    phase: Running
    resourceClaimStatuses: [{name: gpu, resourceClaimName: %s-gpu-q8wz4}]""" % (
        name, ns, name, "\n    ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: %s, uid: sts-%s, "
        "controller: true}]" % (owner, owner) if owner else "", node_name, name))


def header():
    w("apiVersion: v1\nkind: List\nmetadata: {resourceVersion: \"\"}\nitems:")


def issue():
    header()
    a100 = "NVIDIA-A100-SXM4-40GB"
    np0, np1 = "aks-gpunp-28745190-vmss000000", "aks-gpunp-28745190-vmss000001"
    pool = {"kubernetes.azure.com/agentpool": "gpunp", "node.kubernetes.io/instance-type": "Standard_ND96asr_v4"}
    node(np0, dict(pool, **gfd(a100, 8)), {"nvidia.com/gpu": "8"},
         taints=[("sku", "gpu", "NoSchedule")])
    node(np1, dict(pool, **gfd(a100, 8)), {"nvidia.com/gpu": "8", "rdma/hca_shared_devices_a": "1000"},
         taints=[("sku", "gpu", "NoSchedule")])
    ts = "gpu-ts-t4-0"
    node(ts, dict({"node.kubernetes.io/instance-type": "g4dn.12xlarge", "eks.amazonaws.com/nodegroup": "t4-shared"},
                  **gfd("Tesla-T4-SHARED", 4, replicas=10, strategy="time-slicing")), {"nvidia.com/gpu": "40"})
    dgx = "kwok-dgx-h100-0"
    node(dgx, dict({"type": "kwok", "nvidia.com/gpu.machine": "DGX-H100"}, **gfd("NVIDIA-H100-80GB-HBM3", 8)),
         {"nvidia.com/gpu": "8", "nvidia.com/hostdev": "8", "rdma/hca_shared_devices_a": "1000"},
         taints=[("kwok.x-k8s.io/node", "fake", "NoSchedule")], annotations={"kwok.x-k8s.io/node": "fake"})
    dra0, dra1 = "aks-gpudra-41093712-vmss000000", "aks-gpudra-41093712-vmss000001"
    for n in (dra0, dra1):
        node(n, {"kubernetes.azure.com/agentpool": "gpudra",
                 "node.kubernetes.io/instance-type": "Standard_NC48ads_A100_v4"}, {})
    sysn, cpun = "aks-system-17350482-vmss000000", "aks-cpunp-17350482-vmss000000"
    node(sysn, {"kubernetes.azure.com/agentpool": "system", "kubernetes.azure.com/mode": "system"}, {})
    node(cpun, {"kubernetes.azure.com/agentpool": "cpunp"}, {})
    dra_class()
    for n in (dra0, dra1):
        dra_slice(n, 2, "NVIDIA A100 80GB PCIe")
    w("""- apiVersion: resource.k8s.io/v1
  kind: ResourceClaimTemplate
  metadata: {name: gpu-1, namespace: ml}
  spec:
    spec:
      devices:
        requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]""")
    # np0: all 8 GPUs held (two 4-GPU trainers); np1: 3 held
    owner_objects("ml", "train", "6d9f7c8b5", 2, gpu_containers(4), tolerate="sku")
    rs_pod("ml", "train", "6d9f7c8b5", 0, np0, gpu_containers(4), tolerate="sku")
    rs_pod("ml", "train", "6d9f7c8b5", 1, np0, gpu_containers(4), tolerate="sku")
    owner_objects("ml", "infer", "5b7c9d4f8", 3, gpu_containers(1, ", rdma/hca_shared_devices_a: \"1\""),
                  tolerate="sku")
    for i in range(3):
        rs_pod("ml", "infer", "5b7c9d4f8", i, np1, gpu_containers(1, ", rdma/hca_shared_devices_a: \"1\""),
               tolerate="sku")
    # the time-sliced node: 6 notebook pods, one replica each
    owner_objects("notebooks", "jupyter", "7f5d8c6b9", 6, gpu_containers(1))
    for i in range(6):
        rs_pod("notebooks", "jupyter", "7f5d8c6b9", i, ts, gpu_containers(1))
    # the kwok DGX: a pod with 8 GPUs and 8 VFs
    w("""- apiVersion: v1
  kind: Pod
  metadata: {name: nccl-allreduce-0, namespace: perf}
  spec:
    nodeName: %s
    tolerations: [{key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}]
    containers: [{name: nccl, image: nvcr.io/nvidia/pytorch:24.05-py3, resources: {limits: {nvidia.com/gpu: "8", nvidia.com/hostdev: "8", rdma/hca_shared_devices_a: "1"}}}]
  status: {phase: Running}""" % dgx)
    dra_bound_pod("ml", "dra-resident", dra0, 0)
    # CPU nodes: a Deployment's pods
    owner_objects("web", "frontend", "84f9b6c7d5", 4,
                  "[{name: nginx, image: nginx:1.27, resources: {requests: {cpu: 500m, memory: 256Mi}}}]")
    for i in range(4):
        rs_pod("web", "frontend", "84f9b6c7d5", i, cpun if i % 2 else sysn,
               "[{name: nginx, image: nginx:1.27, resources: {requests: {cpu: 500m, memory: 256Mi}}}]")


def gfd_mig_single(product, profile, count, mem, sms, gi):
    """GFD's labels under the single strategy: gpu.* describe the MIG devices."""
    l = gfd("%s-MIG-%s" % (product, profile), count, mig="single")
    l.update({"nvidia.com/gpu.memory": str(mem), "nvidia.com/gpu.multiprocessors": str(sms),
              "nvidia.com/gpu.slices.gi": str(gi), "nvidia.com/gpu.slices.ci": str(gi),
              "nvidia.com/gpu.engines.copy": str(gi), "nvidia.com/gpu.engines.decoder": "0",
              "nvidia.com/gpu.engines.encoder": "0", "nvidia.com/gpu.engines.jpeg": "0",
              "nvidia.com/gpu.engines.ofa": "0", "nvidia.com/mig.config": "all-%s" % profile,
              "nvidia.com/mig.config.state": "success"})
    return l


def gfd_mig_mixed(product, gpus, profiles, config):
    """GFD's labels under the mixed strategy: nvidia.com/mig-<profile>.* per profile
    (count, memory in MiB, multiprocessors, slices)."""
    l = gfd(product, gpus, mig="mixed")
    for prof, count, mem, sms in profiles:
        gi = prof.split("g.")[0]
        for k, v in (("count", count), ("memory", mem), ("multiprocessors", sms), ("slices.gi", gi),
                     ("slices.ci", gi), ("engines.copy", gi), ("engines.decoder", 0), ("engines.encoder", 0),
                     ("engines.jpeg", 0), ("engines.ofa", 0)):
            l["nvidia.com/mig-%s.%s" % (prof, k)] = str(v)
    l.update({"nvidia.com/mig.config": config, "nvidia.com/mig.config.state": "success"})
    return l


def mig_pods(name, node_name, res, n, per=1):
    for i in range(n):
        w("""- apiVersion: v1
  kind: Pod
  metadata: {name: %s-%d, namespace: ml}
  spec:
    nodeName: %s
    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
    containers: [{name: main, image: nvcr.io/nvidia/pytorch:24.05-py3, resources: {limits: {%s: "%d"}}}]
  status: {phase: Running}""" % (name, i, node_name, res, per))


def mig():
    header()
    taint = [("nvidia.com/gpu", "present", "NoSchedule")]
    pool = {"node.kubernetes.io/instance-type": "p4d.24xlarge"}
    node("mig-single-a100-0", dict(pool, **gfd_mig_single("NVIDIA-A100-SXM4-40GB", "1g.5gb", 56, 4864, 14, 1)),
         {"nvidia.com/gpu": "56"}, taints=taint)
    node("mig-single-a100-1", dict(pool, **gfd_mig_single("NVIDIA-A100-SXM4-40GB", "1g.10gb", 32, 9856, 14, 1)),
         {"nvidia.com/gpu": "32"}, taints=taint)
    node("mig-mixed-h100-0", dict({"node.kubernetes.io/instance-type": "p5.48xlarge"},
                                  **gfd_mig_mixed("NVIDIA-H100-80GB-HBM3", 8,
                                                  [("1g.10gb", 16, 9984, 16), ("2g.20gb", 8, 20096, 32),
                                                   ("3g.40gb", 8, 40320, 60)], "all-balanced")),
         {"nvidia.com/mig-1g.10gb": "16", "nvidia.com/mig-2g.20gb": "8", "nvidia.com/mig-3g.40gb": "8"}, taints=taint)
    node("mig-mixed-a100-0", dict({"node.kubernetes.io/instance-type": "p4de.24xlarge"},
                                  **gfd_mig_mixed("NVIDIA-A100-SXM4-80GB", 8, [("1g.10gb", 28, 9728, 14)], "custom")),
         {"nvidia.com/gpu": "4", "nvidia.com/mig-1g.10gb": "28"}, taints=taint)
    mig_pods("tiny", "mig-single-a100-0", "nvidia.com/gpu", 10)
    mig_pods("small", "mig-single-a100-1", "nvidia.com/gpu", 5)
    mig_pods("big", "mig-mixed-h100-0", "nvidia.com/mig-3g.40gb", 8)
    mig_pods("tiny-h100", "mig-mixed-h100-0", "nvidia.com/mig-1g.10gb", 3)
    mig_pods("whole", "mig-mixed-a100-0", "nvidia.com/gpu", 1, per=4)
    mig_pods("tiny-a100", "mig-mixed-a100-0", "nvidia.com/mig-1g.10gb", 7)


def new_pods(k):
    """k new pods asking one device-plugin GPU each (a Job on the gpunp pool), as a second file."""
    w("""apiVersion: batch/v1
kind: Job
metadata: {name: sweep, namespace: ml}
spec:
  parallelism: %d
  completions: %d
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {kubernetes.azure.com/agentpool: gpunp}
      tolerations: [{key: sku, operator: Exists, effect: NoSchedule}]
      containers: [{name: main, image: nvcr.io/nvidia/pytorch:24.05-py3, resources: {limits: {nvidia.com/gpu: "1"}}}]"""
      % (k, k))


def big(n_nodes, n_pods):
    header()
    n_dp = n_nodes * 6 // 10
    n_dra = n_nodes * 3 // 10
    n_cpu = n_nodes - n_dp - n_dra
    a100 = "NVIDIA-A100-SXM4-80GB"
    dp_names = ["aks-gpunp%d-31415926-vmss%06x" % (i // 200, i % 200) for i in range(n_dp)]
    dra_names = ["aks-gpudra%d-27182818-vmss%06x" % (i // 150, i % 150) for i in range(n_dra)]
    cpu_names = ["aks-cpunp-16180339-vmss%06x" % i for i in range(n_cpu)]
    for i, n in enumerate(dp_names):
        alloc = {"nvidia.com/gpu": "8", "openshift.io/mlxnics": "8"}
        if i % 10 == 0:
            alloc["rdma/hca_shared_devices_a"] = "1000"
        node(n, dict({"kubernetes.azure.com/agentpool": "gpunp%d" % (i // 200),
                      "node.kubernetes.io/instance-type": "Standard_ND96amsr_A100_v4"}, **gfd(a100, 8)), alloc,
             taints=[("sku", "gpu", "NoSchedule")])
    for i, n in enumerate(dra_names):
        node(n, {"kubernetes.azure.com/agentpool": "gpudra%d" % (i // 150),
                 "node.kubernetes.io/instance-type": "Standard_ND96amsr_A100_v4"}, {})
    for n in cpu_names:
        node(n, {"kubernetes.azure.com/agentpool": "cpunp"}, {"cpu": "32", "memory": "128Gi"})
    dra_class()
    for n in dra_names:
        dra_slice(n, 8, "NVIDIA A100-SXM4-80GB")
    pods = 0
    # device-plugin nodes: every GPU held (a 4-GPU trainer with one VF, four 1-GPU pods)
    owner_objects("ml", "trainer", "6d9f7c8b5", n_dp, gpu_containers(4, ", openshift.io/mlxnics: \"1\""),
                  tolerate="sku")
    owner_objects("ml", "serve", "5b7c9d4f8", n_dp * 4, gpu_containers(1), tolerate="sku")
    for i, n in enumerate(dp_names):
        rs_pod("ml", "trainer", "6d9f7c8b5", i, n, gpu_containers(4, ", openshift.io/mlxnics: \"1\""), tolerate="sku")
        pods += 1
    for i, n in enumerate(dp_names):
        for k in range(4):
            rs_pod("ml", "serve", "5b7c9d4f8", i * 4 + k, n, gpu_containers(1), tolerate="sku")
            pods += 1
    # DRA nodes: the first two thirds' GPUs held through allocated claims
    n_dra_busy = n_dra * 2 // 3
    for i, n in enumerate(dra_names[:n_dra_busy]):
        for g in range(8):
            dra_bound_pod("dra", "vllm-%d" % (i * 8 + g), n, g, owner="vllm")
            pods += 1
    # GPU pods still to place: on DRA through a claim template, and on the device plugin (all held: Pending)
    left = n_pods - pods
    n_new_dra = min(left // 3, (n_dra - n_dra_busy) * 7 - 3)
    n_new_v1 = min(left // 10, 400)
    n_cpu_pods = left - n_new_dra - n_new_v1
    w("""- apiVersion: resource.k8s.io/v1
  kind: ResourceClaimTemplate
  metadata: {name: gpu-1, namespace: batch}
  spec:
    spec:
      devices:
        requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]
- apiVersion: batch/v1
  kind: Job
  metadata: {name: dra-sweep, namespace: batch}
  spec:
    parallelism: %d
    completions: %d
    template:
      spec:
        restartPolicy: Never
        containers: [{name: main, image: nvcr.io/nvidia/cuda:12.4.1-base, resources: {claims: [{name: gpu}]}}]
        resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu-1}]
- apiVersion: batch/v1
  kind: Job
  metadata: {name: v1-sweep, namespace: batch}
  spec:
    parallelism: %d
    completions: %d
    template:
      spec:
        restartPolicy: Never
        tolerations: [{key: sku, operator: Exists, effect: NoSchedule}]
        containers: [{name: main, image: nvcr.io/nvidia/pytorch:24.05-py3, resources: {limits: {nvidia.com/gpu: "1"}}}]"""
      % (n_new_dra, n_new_dra, n_new_v1, n_new_v1))
    cpu_c = "[{name: app, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: 100m, memory: 128Mi}}}]"
    owner_objects("web", "frontend", "84f9b6c7d5", n_cpu_pods, cpu_c)
    for i in range(n_cpu_pods):
        rs_pod("web", "frontend", "84f9b6c7d5", i, cpu_names[i % n_cpu], cpu_c)


def main(argv):
    if argv[:1] == ["issue"]:
        issue()
    elif argv[:1] == ["big"]:
        big(int(argv[1]) if len(argv) > 1 else 1000, int(argv[2]) if len(argv) > 2 else 10000)
    elif argv[:1] == ["mig"]:
        mig()
    elif argv[:1] == ["--new-pods"]:
        new_pods(int(argv[1]))
    else:
        sys.exit(__doc__)
    sys.stdout.write("\n".join(out) + "\n")


main(sys.argv[1:])
