#!/usr/bin/env python3
"""Mutated docker-save and OCI archives for tests/hostile/mutate_images.sh.

  mutate_images.py STANDINS_DIR OUT_DIR COUNT SEED HOSTLIB SCRATCH [SCRATCH...]

Writes OUT_DIR/NNNN-<kind>.tar (or .tar.gz) and OUT_DIR/list (one "NNNN KIND WORKER PATH" a
line). Mutant i is made for worker i % len(SCRATCH): every hostile path in it (absolute, or
`../` from validate-image's unpack directory, which the runner puts at SCRATCH/../tmp/<run>/)
points into that worker's scratch tree, where the runner watches for changes and markers.
HOSTLIB holds the audit/preload library (libmarker-audit.so) and a directory a hostile
LD_LIBRARY_PATH names (llp/). Deterministic: the same SEED gives the same archives, byte for byte.
"""
import gzip
import hashlib
import io
import json
import os
import random
import sys
import tarfile

standins, out_dir, count, seed, hostlib = sys.argv[1:6]
scratches = sys.argv[6:]
count, seed = int(count), int(seed)
rng = random.Random(seed)


def read(path):
    with open(path, "rb") as f:
        return f.read()


NCCL_OLD = read(os.path.join(standins, "nccl-2.21.5", "libnccl.so.2"))
NCCL_NEW = read(os.path.join(standins, "nccl-2.27.3", "libnccl.so.2"))
HEX = "0123456789abcdef"


def member(name, kind="file", data=b"", target="", mode=0o644, dev=(1, 3)):
    """One tar member as a tuple, turned into bytes by make_tar."""
    return (name, kind, data, target, mode, dev)


def make_tar(members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as t:
        for name, kind, data, target, mode, dev in members:
            ti = tarfile.TarInfo(name)
            ti.mtime, ti.uid, ti.gid, ti.uname, ti.gname, ti.mode = 0, 0, 0, "root", "root", mode
            if kind == "file":
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
                continue
            ti.type = {"dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE,
                       "fifo": tarfile.FIFOTYPE, "chr": tarfile.CHRTYPE, "blk": tarfile.BLKTYPE}[kind]
            if kind in ("dir",):
                ti.mode = 0o755
            ti.linkname = target
            ti.devmajor, ti.devminor = dev
            t.addfile(ti)
    return buf.getvalue()


def base_layers():
    lib = "usr/lib/x86_64-linux-gnu/"
    l1 = [member("usr/", "dir"), member("usr/lib/", "dir"), member(lib, "dir"),
          member(lib + "libnccl.so.2.21.5", data=NCCL_OLD),
          member(lib + "libnccl.so.2", "symlink", target="libnccl.so.2.21.5"),
          member("etc/", "dir"), member("etc/ld.so.conf", data=b"/usr/lib/x86_64-linux-gnu\n")]
    l2 = [member(lib + ".wh.libnccl.so.2", data=b""), member(lib + ".wh.libnccl.so.2.21.5", data=b""),
          member(lib + "libnccl.so.2.27.3", data=NCCL_NEW),
          member(lib + "libnccl.so.2", "symlink", target="libnccl.so.2.27.3")]
    return [l1, l2]


def base_config():
    return {"architecture": "amd64", "os": "linux",
            "config": {"Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                               "NCCL_PROTO=Simple"]},
            "rootfs": {"type": "layers", "diff_ids": []}}


def js(v):
    return json.dumps(v).encode()


class Ctx:
    """The hostile values of one worker."""

    def __init__(self, scratch):
        self.s = scratch
        self.up = "../../../" + os.path.basename(scratch)  # from <tmp>/<run>/{archive,rootfs}
        self.audit = os.path.join(hostlib, "libmarker-audit.so")
        self.llp = os.path.join(hostlib, "llp")
        self.marker = os.path.join(scratch, "markers")

    def hostile_paths(self, name):
        return [os.path.join(self.s, name), self.up + "/" + name, "a/../" + self.up + "/" + name,
                "../" + name, "/" + name, "./" + name, "a//" + name, name + "/", "",
                "a/layer.tar\n" + os.path.join(self.s, name), "a/layer.tar\u0000", "~/" + name,
                "$(touch " + self.marker + "/sh)", "`touch " + self.marker + "/sh`",
                "a/layer.tar; touch " + self.marker + "/sh", "x" * 5000, "a\\layer.tar"]

    def hostile_env(self):
        return ["LD_AUDIT=" + self.audit, "LD_PRELOAD=" + self.audit, "LD_LIBRARY_PATH=" + self.llp,
                "LD_DEBUG=all", "LD_DEBUG_OUTPUT=" + self.marker + "/lddebug",
                "BASH_ENV=" + os.path.join(hostlib, "startup.sh"), "ENV=" + os.path.join(hostlib, "startup.sh"),
                "GCONV_PATH=" + self.llp, "LD_PROFILE=libc.so.6", "LD_PROFILE_OUTPUT=" + self.marker,
                "MALLOC_TRACE=" + self.marker + "/mtrace", "TMPDIR=" + self.s, "HOME=" + self.s,
                "JQ_LIBRARY_PATH=" + self.llp, "SHELLOPTS=xtrace", "PS4=$(touch " + self.marker + "/ps4)"]


def docker_archive(layers, config, manifest=None, extra=(), replace=None, cfg_name="cfg.json"):
    """members of a docker-save archive; `replace` maps member names to members put instead."""
    names = []
    members = []
    for i, l in enumerate(layers):
        d = "l%d" % i
        members += [member(d + "/", "dir"), member(d + "/layer.tar", data=l if isinstance(l, bytes) else make_tar(l))]
        names.append(d + "/layer.tar")
    if config is not None:
        members.append(member(cfg_name, data=config if isinstance(config, bytes) else js(config)))
    if manifest is None:
        manifest = [{"Config": cfg_name, "RepoTags": ["mutant:1"], "Layers": names}]
    members.append(member("manifest.json", data=manifest if isinstance(manifest, bytes) else js(manifest)))
    if replace:
        members = [replace.get(m[0], m) for m in members]
        members = [m for m in members if m is not None]
    return make_tar(members + list(extra)), names


def sha(b):
    return "sha256:" + hashlib.sha256(b).hexdigest()


def oci_archive(layers, config, mutate=None):
    """members of an OCI layout: index.json -> manifest -> config, gzip layers. `mutate(doc)`
    may change the dict of documents {"index", "manifest", "blobs"} before it is written."""
    blobs = {}
    ldesc = []
    for l in layers:
        b = gzip.compress(l if isinstance(l, bytes) else make_tar(l), mtime=0)
        blobs[sha(b)] = b
        ldesc.append({"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": sha(b), "size": len(b)})
    cb = config if isinstance(config, bytes) else js(config)
    blobs[sha(cb)] = cb
    manifest = {"schemaVersion": 2, "config": {"digest": sha(cb)}, "layers": ldesc}
    doc = {"manifest": manifest, "blobs": blobs, "extra": [], "index_extra": None}
    if mutate:
        mutate(doc)
    mb = doc["manifest"] if isinstance(doc["manifest"], bytes) else js(doc["manifest"])
    blobs[sha(mb)] = mb
    index = doc.get("index") or {"schemaVersion": 2, "manifests": [
        {"digest": doc.get("manifest_digest", sha(mb)), "platform": {"architecture": "amd64", "os": "linux"}}]}
    members = [member("oci-layout", data=b'{"imageLayoutVersion":"1.0.0"}'),
               member("index.json", data=index if isinstance(index, bytes) else js(index)),
               member("blobs/", "dir"), member("blobs/sha256/", "dir")]
    links = doc.get("links", {})
    for d, b in sorted(blobs.items()):
        name = "blobs/" + d.replace(":", "/", 1)
        members.append(links.get(d) or member(name, data=b))
    return make_tar(members + doc["extra"])


# --- the mutations: each returns (archive bytes, suffix) -------------------------------------------
def m_manifest_type(c):
    v = rng.choice([b"{}", b'"x"', b"5", b"null", b"[]", b"[null]", b"[[]]", b"[5]", b"[{}]", b"",
                    b'[{"Layers": {}}]', b'[{"Layers": "l0/layer.tar"}]', b'[{"Layers": null}]',
                    b'[{"Layers": []}]', b'[{"Layers": ["l0/layer.tar"]', b"\x00\xff\xfe junk",
                    b"[" * 20000 + b"]" * 20000, b'[{"Layers": [[["l0/layer.tar"]]]}]',
                    b'[{"Layers": ["l0/layer.tar"], "Config": {"x": 1}}]',
                    b'[{"Layers": ["l0/layer.tar"], "RepoTags": "a\\nb"}]',
                    b'[{"Layers": ["l0/layer.tar"], "RepoTags": [5, "t:1"]}]'])
    return docker_archive(base_layers(), base_config(), manifest=v)[0]


def m_missing_key(c):
    a, names = docker_archive(base_layers(), base_config())
    man = [{"Config": "cfg.json", "RepoTags": ["mutant:1"], "Layers": names}]
    k = rng.choice(["Layers", "Config", "RepoTags", "all"])
    if k == "all":
        man[0] = {}
    else:
        del man[0][k]
    if rng.random() < 0.3:
        man.append({"Layers": [os.path.join(c.s, "host-layer.tar")]})
    return docker_archive(base_layers(), base_config(), manifest=man)[0]


def m_huge_layers(c):
    n = rng.choice([1001, 5000, 20000])
    return docker_archive(base_layers(), base_config(),
                          manifest=[{"Config": "cfg.json", "Layers": ["l0/layer.tar"] * n}])[0]


def m_layer_path(c):
    names = ["l0/layer.tar", "l1/layer.tar"]
    bad = rng.choice(c.hostile_paths("host-layer.tar") + [5, None, {}, [], True, 1e300])
    names[rng.randrange(2)] = bad
    return docker_archive(base_layers(), base_config(),
                          manifest=[{"Config": "cfg.json", "RepoTags": ["m:1"], "Layers": names}])[0]


def m_config_path(c):
    bad = rng.choice(c.hostile_paths("host-config.json") + [5, {}, [], True, "l0", "l0/layer.tar", "nope.json"])
    return docker_archive(base_layers(), base_config(),
                          manifest=[{"Config": bad, "Layers": ["l0/layer.tar", "l1/layer.tar"]}])[0]


def m_symlink_member(c):
    which = rng.choice(["manifest", "layer", "config", "layer-rel", "config-rel", "loop", "inside", "dir"])
    rep = {}
    extra = []
    if which == "manifest":
        rep["manifest.json"] = member("manifest.json", "symlink", target=os.path.join(c.s, "fake-manifest.json"))
    elif which == "layer":
        rep["l0/layer.tar"] = member("l0/layer.tar", "symlink", target=os.path.join(c.s, "host-layer.tar"))
    elif which == "config":
        rep["cfg.json"] = member("cfg.json", "symlink", target=os.path.join(c.s, "host-config.json"))
    elif which == "layer-rel":
        rep["l1/layer.tar"] = member("l1/layer.tar", "symlink", target="../" + c.up + "/host-layer.tar")
    elif which == "config-rel":
        rep["cfg.json"] = member("cfg.json", "symlink", target=c.up + "/host-config.json")
    elif which == "loop":
        rep["l0/layer.tar"] = member("l0/layer.tar", "symlink", target="layer.tar")
    elif which == "inside":   # docker's legacy save links shared layers: allowed
        rep["l1/layer.tar"] = member("l1/layer.tar", "symlink", target="../l0/layer.tar")
    else:                     # a directory member that is a link out, then a member under it
        rep["l1/"] = member("l1", "symlink", target=c.s)
    return docker_archive(base_layers(), base_config(), replace=rep, extra=extra)[0]


def m_special_member(c):
    name = rng.choice(["manifest.json", "cfg.json", "l0/layer.tar"])
    kind = rng.choice(["fifo", "chr", "blk", "dir", "hardlink-out"])
    if kind == "hardlink-out":
        m = member(name, "hardlink", target=os.path.join(c.s, "victim.txt").lstrip("/"))
    elif kind == "dir":
        m = member(name, "dir")
    else:
        m = member(name, kind, dev=(1, 3) if kind == "chr" else (7, 0))
    return docker_archive(base_layers(), base_config(), replace={name: m})[0]


def m_outer_names(c):
    e = rng.choice([
        member(c.up + "/evil.txt", data=b"pwned"),
        member(os.path.join(c.s, "evil.txt"), data=b"pwned"),
        member("a/../" + c.up + "/evil.txt", data=b"pwned"),
        member("h", "hardlink", target=c.up + "/victim.txt"),
        member("h", "hardlink", target=os.path.join(c.s, "victim.txt")),
        member("esc", "symlink", target=c.s),
    ])
    extra = [e]
    if e[1] == "symlink":
        extra.append(member("esc/evil.txt", data=b"pwned"))
    return docker_archive(base_layers(), base_config(), extra=extra)[0]


def m_env_loader(c):
    cfg = base_config()
    pick = rng.sample(c.hostile_env(), rng.randint(1, 5))
    if rng.random() < 0.5:
        pick += ["LD_AUDIT=" + c.audit]
    cfg["config"]["Env"] += pick
    if rng.random() < 0.2:
        cfg["Env"] = cfg.pop("config")["Env"]
    if rng.random() < 0.5:
        return oci_archive(base_layers(), cfg)
    return docker_archive(base_layers(), cfg)[0]


def m_env_types(c):
    cfg = base_config()
    env = cfg["config"]["Env"]
    v = rng.choice(["nonstring", "noeq", "nul", "ctrl", "hugevalue", "notarray", "manyentries", "huge"])
    if v == "nonstring":
        env += rng.sample([5, None, {}, [], True, 1.5, ["LD_AUDIT=" + c.audit], {"LD_AUDIT": c.audit}], 3)
    elif v == "noeq":
        env += ["NOEQ", "=x", "="]
    elif v == "nul":
        env += ["LD_AUDIT=" + c.audit + "\u0000x", "A\u0000B=1"]
    elif v == "ctrl":
        env += ["X=\n\r\x1b[31mred\x07", "Y\n=1", "LD_LIBRARY_PATH=" + c.llp + "\n"]
    elif v == "hugevalue":
        env += ["BIG=" + "a" * rng.choice([140000, 300000])]
    elif v == "notarray":
        cfg["config"]["Env"] = rng.choice(["PATH=/bin", {"LD_AUDIT": c.audit}, 5, True])
    elif v == "manyentries":
        env += ["V%d=%d" % (i, i) for i in range(20000)]
    else:   # an environment larger than any process's: the probe refuses the file
        env += ["H%d=%s" % (i, "h" * 100000) for i in range(45)]
    return docker_archive(base_layers(), cfg)[0] if rng.random() < 0.6 else oci_archive(base_layers(), cfg)


def m_config_type(c):
    v = rng.choice([b"[]", b'"x"', b"5", b"null", b'{"config": 5}', b'{"config": {"Env": null}}',
                    b'{"config": "x", "Env": ["PATH=/bin"]}', b'{"architecture": "../x"}',
                    b'{"architecture": "arm64\\nfoo"}', b'{"architecture": 5}', b'{"architecture": "s390x"}',
                    b'{"architecture": "arm64"}', b'{"os": {"x": 1}}', b'{"config": {"Env": ["A=1"]',
                    b"\xff\xfe", b'{"config": {"Env": [' + b'"A=1",' * 10 + b'"B=2"]}}',
                    b"{" + b'"a":{' * 3000 + b"}" * 3001])
    return docker_archive(base_layers(), v)[0] if rng.random() < 0.6 else oci_archive(base_layers(), v)


def m_layer_bytes(c):
    good = make_tar(base_layers()[0])
    v = rng.choice(["truncated", "random", "empty", "gz-truncated", "gz-junk"])
    if v == "truncated":
        bad = good[:rng.randrange(1, len(good))]
    elif v == "random":
        bad = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 20000)))
    elif v == "empty":
        bad = b""
    elif v == "gz-truncated":
        g = gzip.compress(good, mtime=0)
        bad = g[:rng.randrange(1, len(g))]
    else:
        bad = b"\x1f\x8b\x08\x00" + bytes(rng.randrange(256) for _ in range(500))
    layers = base_layers()
    layers[rng.randrange(2)] = bad
    return docker_archive(layers, base_config())[0] if rng.random() < 0.5 else oci_archive(layers, base_config())


def m_layer_members(c):
    """Members of a layer that reach out of the tree, alone or through a lower layer."""
    s, up = c.s, c.up
    v = rng.randrange(19)
    lower, upper = [], []
    if v == 0:
        upper = [member(up + "/evil.txt", data=b"pwned")]
    elif v == 1:
        upper = [member(os.path.join(s, "evil.txt"), data=b"pwned")]
    elif v == 2:
        upper = [member("a/../" + up + "/evil.txt", data=b"pwned")]
    elif v == 3:   # a link out, then a member through it, in one layer
        upper = [member("esc", "symlink", target=s), member("esc/evil.txt", data=b"pwned")]
    elif v == 4:   # through a lower layer's link
        lower = [member("esc", "symlink", target=s)]
        upper = [member("esc/evil.txt", data=b"pwned")]
    elif v == 5:
        upper = [member("h", "hardlink", target=up + "/victim.txt")]
    elif v == 6:
        upper = [member("h", "hardlink", target=os.path.join(s, "victim.txt"))]
    elif v == 7:   # a hard link whose target lies behind a lower layer's link
        lower = [member("esc", "symlink", target=s)]
        upper = [member("h", "hardlink", target="esc/victim.txt")]
    elif v == 8:   # a regular file over a lower layer's link to a host file
        lower = [member("s", "symlink", target=os.path.join(s, "victim.txt"))]
        upper = [member("s", data=b"pwned")]
    elif v == 9:   # names the listing escapes: backslash, newline
        n = rng.choice(["a\\b", "a\nb", "a\\nb", "\x01esc", "a b"])
        lower = [member(n, "symlink", target=s)]
        upper = [member(n + "/evil.txt", data=b"pwned")]
    elif v == 10:
        upper = [member("dev/", "dir"), member("dev/null2", "chr", dev=(1, 3)),
                 member("dev/sda", "blk", dev=(8, 0)), member("fifo", "fifo")]
    elif v == 11:
        upper = [member(rng.choice([".wh..", ".wh.", "a/.wh..", "../.wh.victim.txt", up + "/.wh.victim.txt",
                                    ".wh..wh..opq", "a/.wh..wh..opq/x"]), data=b"")]
    elif v == 12:   # whiteouts through a lower layer's link
        lower = [member("esc", "symlink", target=s)]
        upper = [member(rng.choice(["esc/.wh.victim.txt", "esc/.wh..wh..opq"]), data=b"")]
    elif v == 13:   # a link to a host file, the probe reads the image's loader config from it
        upper = [member("etc/", "dir"), member("etc/ld.so.cache", "symlink", target=os.path.join(s, "victim.txt")),
                 member("usr/lib/x86_64-linux-gnu/libnccl.so.2", "symlink", target=os.path.join(s, "victim.txt"))]
    elif v == 14:   # a hard link through a link the same layer made
        upper = [member("esc", "symlink", target=s), member("h", "hardlink", target="esc/victim.txt")]
    elif v == 15:   # a directory member that is a link out (dir in lower, link in upper)
        lower = [member("d/", "dir"), member("d/f", data=b"x")]
        upper = [member(".wh.d", data=b""), member("d", "symlink", target=s), member("d/evil.txt", data=b"pwned")]
    elif v == 16:   # a long chain of links that ends outside
        upper = [member("c%d" % i, "symlink", target="c%d" % (i + 1)) for i in range(50)] + \
                [member("c50", "symlink", target=s)]
    elif v == 17:   # the same name as a directory, then a link out, in the same layer
        upper = [member("x/", "dir"), member("x", "symlink", target=s), member("x/evil.txt", data=b"pwned")]
    else:           # a whiteout of a link to a host directory: removes the link only
        lower = [member("esc", "symlink", target=s)]
        upper = [member(".wh.esc", data=b"")]
    layers = base_layers()
    if lower:
        layers.insert(1, lower)
    layers.append(upper)
    return docker_archive(layers, base_config())[0] if rng.random() < 0.5 else oci_archive(layers, base_config())


def bad_digest(c):
    return rng.choice(["sha256:../../etc/passwd", "sha256:XYZ", "", "sha256:" + "a" * 63,
                       "sha256:" + "A" * 64, "SHA256:" + "a" * 64, 5, None, {}, "sha256:" + "0" * 64,
                       "sha512:" + "a" * 64, "md5:" + "a" * 32, "sha256:" + "a" * 64 + "/../../x",
                       "sha256:" + "a" * 64 + "\n", "sha256/" + "a" * 64, ":" + "a" * 64,
                       "sha256:" + "a" * 64 + ":x", "sha256:" + c.up + "/host-layer.tar",
                       "../" + "a" * 64, "sha256:" + "a" * 10000])


def m_oci_digest(c):
    where = rng.choice(["manifest", "layer", "config"])
    d = bad_digest(c)

    def mut(doc):
        if where == "layer":
            doc["manifest"]["layers"][rng.randrange(2)]["digest"] = d
        elif where == "config":
            doc["manifest"]["config"]["digest"] = d
        else:
            doc["manifest_digest"] = d
    return oci_archive(base_layers(), base_config(), mut)


def m_oci_blob_link(c):
    which = rng.choice(["layer", "config", "blobs-dir", "alg-dir", "index", "inside", "layer-rel"])

    def mut(doc):
        layer_d = doc["manifest"]["layers"][0]["digest"]
        cfg_d = doc["manifest"]["config"]["digest"]
        if which == "layer":
            doc["links"] = {layer_d: member("blobs/" + layer_d.replace(":", "/"), "symlink",
                                            target=os.path.join(c.s, "host-layer.tar"))}
        elif which == "layer-rel":
            doc["links"] = {layer_d: member("blobs/" + layer_d.replace(":", "/"), "symlink",
                                            target="../../" + c.up + "/host-layer.tar")}
        elif which == "config":
            doc["links"] = {cfg_d: member("blobs/" + cfg_d.replace(":", "/"), "symlink",
                                          target=os.path.join(c.s, "host-config.json"))}
        elif which == "inside":   # a blob linked to another blob of the layout: allowed
            other = doc["manifest"]["layers"][1]["digest"]
            doc["manifest"]["layers"][0]["digest"] = other
        elif which == "blobs-dir":
            doc["extra"].append(member("blobs", "symlink", target=c.s))
        elif which == "alg-dir":
            doc["extra"].append(member("blobs/sha512", "symlink", target=c.s))
            doc["manifest"]["layers"][0]["digest"] = "sha512:" + "b" * 128
        else:
            doc["extra"].append(member("index.json", "symlink", target=os.path.join(c.s, "fake-index.json")))
    return oci_archive(base_layers(), base_config(), mut)


def m_oci_index_shape(c):
    v = rng.randrange(12)

    def mut(doc):
        mb = js(doc["manifest"])
        d = sha(mb)
        idx = {"schemaVersion": 2, "manifests": [{"digest": d, "platform": {"architecture": "amd64", "os": "linux"}}]}
        if v == 0:
            idx = rng.choice([{}, [], "x", 5, None])
        elif v == 1:
            idx["manifests"] = rng.choice([{}, "x", 5, None])
        elif v == 2:
            idx["manifests"] = [rng.choice([5, None, "x", []])]
        elif v == 3:
            idx["manifests"][0]["digest"] = rng.choice([5, None, {}, []])
        elif v == 4:
            idx["manifests"][0]["platform"] = rng.choice(["linux/amd64", 5, []])
        elif v == 5:
            idx["manifests"][0]["platform"] = {"os": rng.choice(["../x", "a\nb", "a, b", 5, "a/b"]), "architecture": "amd64"}
        elif v == 6:
            idx["manifests"][0]["annotations"] = rng.choice([[], "x", {"org.opencontainers.image.ref.name": "a\nb"},
                                                             {"org.opencontainers.image.ref.name": 5}])
        elif v == 7:   # an index that lists itself: nesting ends at the bound
            self_idx = {"schemaVersion": 2, "manifests": [{"digest": "sha256:" + "c" * 64}]}
            b = js(self_idx)
            doc["blobs"][sha(b)] = b
            self_idx["manifests"][0]["digest"] = sha(b)
            idx = {"schemaVersion": 2, "manifests": [{"digest": sha(b)}]}
            doc["extra"].append(member("blobs/sha256/" + "c" * 64, data=b))
        elif v == 8:
            idx["manifests"] = idx["manifests"] * 2000
        elif v == 9:   # two platforms, one weird: every platform is checked
            idx["manifests"].append({"digest": d, "platform": {"architecture": "arm64", "os": "linux"}})
        elif v == 10:
            idx["manifests"][0]["platform"] = {"os": "unknown", "architecture": "unknown"}
        else:
            doc["manifest"] = rng.choice([{"layers": "x", "config": {}}, {"layers": [], "config": {"digest": d}},
                                          {"layers": [5]}, {"config": {"digest": 5}, "layers": [{"digest": d}]},
                                          [], "x", {"manifests": "x"}])
            return
        doc["index"] = js(idx)
    return oci_archive(base_layers(), base_config(), mut)


def m_outer_junk(c):
    good = docker_archive(base_layers(), base_config())[0]
    v = rng.choice(["truncated", "random", "empty", "gz-junk", "zeros"])
    if v == "truncated":
        return good[:rng.randrange(1, len(good))]
    if v == "random":
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 5000)))
    if v == "empty":
        return b""
    if v == "zeros":
        return b"\0" * 10240
    return b"\x1f\x8b\x08\x00" + bytes(rng.randrange(256) for _ in range(300))


KINDS = [m_manifest_type, m_missing_key, m_huge_layers, m_layer_path, m_config_path, m_symlink_member,
         m_special_member, m_outer_names, m_env_loader, m_env_types, m_config_type, m_layer_bytes,
         m_layer_members, m_oci_digest, m_oci_blob_link, m_oci_index_shape, m_outer_junk]

os.makedirs(out_dir, exist_ok=True)
with open(os.path.join(out_dir, "list"), "w") as lst:
    for i in range(count):
        kind = KINDS[i % len(KINDS)]
        worker = i % len(scratches)
        data = kind(Ctx(scratches[worker]))
        path = os.path.join(out_dir, "%04d-%s.tar" % (i, kind.__name__[2:]))
        with open(path, "wb") as f:
            f.write(data)
        lst.write("%04d %s %d %s\n" % (i, kind.__name__[2:], worker, path))
