# SPDX-License-Identifier: Apache-2.0
"""libcurl is loaded at run time, only for the API client (kube/curl-api.h).

- The binary does not name libcurl (nor the TLS, Kerberos, LDAP, SSH
  libraries it drags in) in DT_NEEDED, and ldd resolves none of them.
- A V1 agent and a --dra agent publishing to a directory never map it.
- --kubeconfig / --in-cluster with libcurl missing ($DP_CURL_LIBRARY at a
  file that does not exist) or lacking a symbol: one clear error naming the
  flag and libcurl.so.4, exit status 2, before anything starts (no plugin
  directory made), never a crash."""
import os
import subprocess
import sys
import tempfile

DEVPLANE = os.environ["DEVPLANE"]
HEAVY = ("libcurl", "libssl", "libcrypto", "libgnutls", "libgssapi", "libkrb5", "libldap", "libssh", "librtmp",
         "libnettle", "libpsl", "libidn2", "libbrotli", "libzstd", "liblber", "libsasl2")

readelf = subprocess.run(["readelf", "-d", DEVPLANE], capture_output=True, text=True, check=True).stdout
needed = [l.split("[", 1)[1].split("]", 1)[0] for l in readelf.splitlines() if "(NEEDED)" in l]
assert needed, readelf
for lib in needed:
    assert not lib.startswith(HEAVY), ("DT_NEEDED", lib, needed)
ldd = subprocess.run(["ldd", DEVPLANE], capture_output=True, text=True, check=True).stdout
for l in ldd.splitlines():
    assert not l.strip().startswith(HEAVY), ("ldd", l)
print("ok - NEEDED: %s; ldd resolves %d libraries, none of libcurl's" % (" ".join(needed), len(ldd.splitlines())))

t = tempfile.mkdtemp(prefix="dp-curl.")
dirs = {k: os.path.join(t, k) for k in ("plugin-dir", "registry-dir", "plugins-dir", "cdi-dir", "state-dir",
                                        "slices-dir")}


def agent_args(extra):
    return [DEVPLANE, "agent", "--profile", "example-gpu", "--node-name", "node-a"] + \
        sum([["--" + k, v] for k, v in dirs.items() if k != "slices-dir"], []) + extra


def mapped_while_serving(extra, ready):
    """Start the agent, wait for the log line `ready`, return its mappings."""
    p = subprocess.Popen(agent_args(extra), stderr=subprocess.PIPE, text=True)
    seen = []
    for line in p.stderr:
        seen.append(line)
        if ready in line:
            break
    else:
        p.wait()
        raise AssertionError("agent exited (%s) before %r:\n%s" % (p.returncode, ready, "".join(seen)))
    maps = open("/proc/%d/maps" % p.pid).read()
    p.terminate()
    p.stderr.read()
    assert p.wait() == 0
    return maps


maps = mapped_while_serving([], "serving ")
assert "libcurl" not in maps and "libssl" not in maps, "V1 agent maps libcurl"
maps = mapped_while_serving(["--dra", "--slices-dir", dirs["slices-dir"]], "ResourceSlices generation 1")
assert "libcurl" not in maps and "libssl" not in maps, "--dra agent without API maps libcurl"
print("ok - V1 and --dra --slices-dir agents never map libcurl")

kc = os.path.join(t, "kc.yaml")
with open(kc, "w") as f:
    f.write("current-context: c\nclusters: [{name: k, cluster: {server: 'https://127.0.0.1:1', "
            "insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: tok}}]\n"
            "contexts: [{name: c, context: {cluster: k, user: u}}]\n")
sa = os.path.join(t, "sa")
os.mkdir(sa)
for n in ("token", "ca.crt"):
    open(os.path.join(sa, n), "w").write("x\n")


def refused(lib, flag_args, want):
    fresh = os.path.join(t, "fresh-plugins")
    env = dict(os.environ, DP_CURL_LIBRARY=lib, KUBERNETES_SERVICE_HOST="127.0.0.1", KUBERNETES_SERVICE_PORT="1")
    args = agent_args(["--dra"] + flag_args)
    args[args.index("--plugin-dir") + 1] = fresh
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 2, (lib, flag_args, r.returncode, r.stderr)
    for w in want:
        assert w in r.stderr, (w, r.stderr)
    for bad in ("AddressSanitizer", "runtime error", "Segmentation", "Aborted"):
        assert bad not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not os.path.exists(fresh), "the agent started before refusing"
    return r.stderr.strip()


missing = os.path.join(t, "nonexistent", "libcurl.so.4")
print("ok - " + refused(missing, ["--kubeconfig", kc],
                        ["--kubeconfig needs libcurl.so.4: %s: cannot open shared object file" % missing,
                         "DP_CURL_LIBRARY"]))
print("ok - " + refused(missing, ["--in-cluster", "--service-account-dir", sa],
                        ["--in-cluster needs libcurl.so.4: %s" % missing]))
# A library that loads but is not libcurl: the first symbol is named.
print("ok - " + refused("libc.so.6", ["--kubeconfig", kc],
                        ["--kubeconfig needs libcurl.so.4: libc.so.6 has no symbol curl_global_init"]))
subprocess.run(["rm", "-rf", t])
