# SPDX-License-Identifier: Apache-2.0
"""kubeletckpt — writes the kubelet device-manager checkpoint
(kubelet_internal_checkpoint) as the kubelet does, independent of devplane's
C code, for tests: JSON of Data, Checksum = FNV-1a-32 of the go-spew text of
Data (wire-protocols.md section 5.3)."""
import base64
import json
import os


def _fnv1a32(b):
    h = 0x811C9DC5
    for c in b:
        h = ((h ^ c) * 0x01000193) & 0xFFFFFFFF
    return h


def _strlist(v):
    return "[" + " ".join(v) + "]"


def spew(entries, registered):
    """entries: [(pod_uid, container, resource, {numa: [ids]}, alloc_resp bytes)]."""
    out = ["(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)"]
    if entries is None:
        out.append("<nil>")
    else:
        es = []
        for uid, ctr, res, ids, resp in entries:
            numa = "map[" + " ".join("%d:%s" % (k, _strlist(ids[k])) for k in sorted(ids)) + "]"
            by = "[" + " ".join(str(x) for x in resp) + "]"
            es.append("{PodUID:(string)%s ContainerName:(string)%s ResourceName:(string)%s "
                      "DeviceIDs:(checkpoint.DevicesPerNUMA)%s AllocResp:([]uint8)%s}" % (uid, ctr, res, numa, by))
        out.append("[" + " ".join(es) + "]")
    out.append(" RegisteredDevices:(map[string][]string)map[")
    out.append(" ".join("%s:%s" % (k, _strlist(registered[k])) for k in sorted(registered)))
    out.append("]}")
    return "".join(out).encode()


def encode(entries, registered):
    data = {"PodDeviceEntries": None if entries is None else [
        {"PodUID": uid, "ContainerName": ctr, "ResourceName": res,
         "DeviceIDs": {str(k): ids[k] for k in sorted(ids)},
         "AllocResp": base64.b64encode(resp).decode()} for uid, ctr, res, ids, resp in entries],
        "RegisteredDevices": registered}
    return json.dumps({"Data": data, "Checksum": _fnv1a32(spew(entries, registered))},
                      separators=(",", ":")).encode()


def write(pd, raw):
    """Atomically, as the kubelet: temp file in the same directory, rename."""
    tmp = os.path.join(pd, ".ckpt-test")
    with open(tmp, "wb") as f:
        f.write(raw)
    os.rename(tmp, os.path.join(pd, "kubelet_internal_checkpoint"))


if __name__ == "__main__":
    # the two real files of wire-protocols.md 5.5
    assert _fnv1a32(spew(None, {"nvidia.com/gpu": ["GPU-0650a168-e770-3ea8-8ac3-8a1d419763e0"]})) == 3952659280
    resp = base64.b64decode("Ch8KFk5WSURJQV9WSVNJQkxFX0RFVklDRVMSBXRlZ3Jh")
    assert _fnv1a32(spew([("bf52b2cd-b611-4e79-86b1-280b283185c3", "check", "nvidia.com/gpu", {-1: ["tegra"]}, resp)],
                         {"nvidia.com/gpu": ["tegra"]})) == 3660592824
    print("ok")
