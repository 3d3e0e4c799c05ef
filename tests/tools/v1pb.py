# SPDX-License-Identifier: Apache-2.0
"""v1pb — a tiny hand-written protobuf codec for the Device Plugin API
(v1beta1), independent of devplane's generated C code, for the python3-grpcio
interop tests. Field numbers from wire-protocols.md section 2.2."""
import subprocess


def _varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def f_len(num, payload):
    if isinstance(payload, str):
        payload = payload.encode()
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def f_varint(num, v):
    if not v:
        return b""
    return _varint(num << 3) + _varint(int(v))


def decode(buf):
    """[(field, value)], value int (varint) or bytes (LEN)."""
    out, i = [], 0
    while i < len(buf):
        key, i = _read_varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _read_varint(buf, i)
        elif wt == 2:
            n, i = _read_varint(buf, i)
            v, i = bytes(buf[i:i + n]), i + n
        elif wt == 5:
            v, i = bytes(buf[i:i + 4]), i + 4
        elif wt == 1:
            v, i = bytes(buf[i:i + 8]), i + 8
        else:
            raise ValueError("wire type %d" % wt)
        out.append((num, v))
    return out


def _read_varint(buf, i):
    shift = v = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, i


def strs(fields, num):
    return [v.decode() for n, v in fields if n == num]


def get(fields, num, default=None):
    for n, v in fields:
        if n == num:
            return v
    return default


# ---- messages ----

def options(pre_start=False, preferred=False):
    return f_varint(1, pre_start) + f_varint(2, preferred)


def register_request(version, endpoint, resource, opts=b""):
    return f_len(1, version) + f_len(2, endpoint) + f_len(3, resource) + f_len(4, opts)


def list_and_watch_response(devices):
    """devices: [(id, health, [numa...])]"""
    out = b""
    for did, health, numa in devices:
        d = f_len(1, did) + f_len(2, health)
        if numa:
            d += f_len(3, b"".join(f_len(1, f_varint(1, n) or b"\x08\x00") for n in numa))
        out += f_len(1, d)
    return out


def parse_list_and_watch(buf):
    devs = []
    for n, d in decode(buf):
        if n != 1:
            continue
        df = decode(d)
        topo = get(df, 3)
        numa = [get(decode(x), 1, 0) for nn, x in decode(topo) if nn == 1] if topo is not None else []
        devs.append((get(df, 1, b"").decode(), get(df, 2, b"").decode(), numa))
    return devs


def parse_register_request(buf):
    f = decode(buf)
    o = decode(get(f, 4, b""))
    return {"version": get(f, 1, b"").decode(), "endpoint": get(f, 2, b"").decode(),
            "resource_name": get(f, 3, b"").decode(),
            "pre_start_required": bool(get(o, 1, 0)), "get_preferred_allocation_available": bool(get(o, 2, 0))}


def allocate_request(containers):
    return b"".join(f_len(1, b"".join(f_len(1, i) for i in ids)) for ids in containers)


def parse_allocate_request(buf):
    return [strs(decode(c), 1) for n, c in decode(buf) if n == 1]


def container_allocate_response(envs):
    return b"".join(f_len(1, f_len(1, k) + f_len(2, v)) for k, v in sorted(envs.items()))


def allocate_response(container_responses):
    return b"".join(f_len(1, c) for c in container_responses)


def parse_allocate_response(buf):
    """[{envs:{}, annotations:{}, mounts:n, devices:n, cdi:[...]}]"""
    out = []
    for n, c in decode(buf):
        if n != 1:
            continue
        cf = decode(c)
        r = {"envs": {}, "annotations": {}, "mounts": 0, "devices": 0, "cdi": []}
        for fn, v in cf:
            if fn in (1, 4):
                e = decode(v)
                r["envs" if fn == 1 else "annotations"][get(e, 1, b"").decode()] = get(e, 2, b"").decode()
            elif fn == 2:
                r["mounts"] += 1
            elif fn == 3:
                r["devices"] += 1
            elif fn == 5:
                r["cdi"].append(get(decode(v), 1, b"").decode())
        out.append(r)
    return out


def preferred_request(available, must, size):
    c = b"".join(f_len(1, a) for a in available) + b"".join(f_len(2, m) for m in must) + f_varint(3, size)
    return f_len(1, c)


def parse_preferred_request(buf):
    out = []
    for n, c in decode(buf):
        if n == 1:
            f = decode(c)
            out.append((strs(f, 1), strs(f, 2), get(f, 3, 0)))
    return out


def preferred_response(containers):
    return b"".join(f_len(1, b"".join(f_len(1, i) for i in ids)) for ids in containers)


def parse_preferred_response(buf):
    return [strs(decode(c), 1) for n, c in decode(buf) if n == 1]


def prestart_request(ids):
    return b"".join(f_len(1, i) for i in ids)


# ---- the devplane node's status, waited on through `devplane node status --wait` ----

def wait_status(devplane, plugin_dir, *conds, timeout=20):
    args = [devplane, "node", "status", "--plugin-dir", plugin_dir, "-o", "flat", "--timeout", str(timeout)]
    for c in conds:
        args += ["--wait", c]
    r = subprocess.run(args, capture_output=True, text=True, timeout=timeout + 10)
    if r.returncode != 0:
        raise AssertionError("waiting for %s: %s" % (conds, r.stderr))
    return r.stdout
