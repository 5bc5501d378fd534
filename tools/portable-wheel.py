#!/usr/bin/env python3
"""Packs the portable tarball (tools/portable-build.sh) as a manylinux wheel, so that an image
gets the gate the way torchrun users install things: `pip install denpex_probe-...whl`.

  tools/portable-wheel.py TARBALL OUTDIR [VERSION]

Writes OUTDIR/denpex_probe-VERSION-py3-none-manylinux_2_31_x86_64.whl (VERSION: the one
`bin/denpex-probe --version` prints). The wheel installs what the tarball holds under the
environment's prefix, in the tarball's layout, so the binary finds its MPI plugins as it does
there (<bin>/../lib/denpex/):
  denpex_probe-V.data/scripts/  denpex-probe, denpex-validate-image, denpex-prolog  -> PREFIX/bin
  denpex_probe-V.data/data/lib/ libdenpex-trace.so, denpex/*.so                      -> PREFIX/lib
  denpex_probe-V.data/data/share/                                                    -> PREFIX/share
  denpex_probe/__init__.py      binary(): where denpex-probe is; `python -m denpex_probe` runs it
The binaries are installed as they are (no Python between torchrun and the gate). The tag is
manylinux_2_31: the tarball is built against glibc 2.31 and needs no other library
(tests/portable/check.sh checks both). Standard library only; exit 2 with one line on a
missing or malformed tarball."""
import base64
import hashlib
import io
import os
import re
import stat
import subprocess
import sys
import tarfile
import tempfile
import zipfile

TAG = "py3-none-manylinux_2_31_x86_64"
SCRIPTS = ("denpex-probe", "denpex-validate-image", "denpex-prolog")

INIT = '''"""denpex-probe, installed from its wheel: the binaries are in the environment's bin/."""
import os
import sys

__version__ = "{version}"


def binary(name="denpex-probe"):
    """The path of an installed denpex program (denpex-probe, denpex-validate-image, ...)."""
    return os.path.join(sys.prefix, "bin", name)
'''

MAIN = '''import os
import sys

from denpex_probe import binary

# Runs the installed binary in this process's place: its exit code is the gate's.
os.execv(binary(), [binary()] + sys.argv[1:])
'''


def die(msg):
    print("portable-wheel.py: " + msg, file=sys.stderr)
    sys.exit(2)


def digest(data):
    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "sha256=" + h


def tarball_members(path):
    try:
        tar = tarfile.open(path, "r:gz")
    except (OSError, tarfile.TarError) as e:
        die("%s: not a readable .tar.gz: %s" % (path, e))
    files = {}
    for m in tar.getmembers():
        name = os.path.normpath(m.name).lstrip("./")
        if name.startswith("..") or os.path.isabs(name):
            die("%s: member %s points outside the tree" % (path, m.name))
        if m.isfile():
            files[name] = (tar.extractfile(m).read(), m.mode)
        elif m.issym():
            files[name] = ("symlink", m.linkname)
    if "bin/denpex-probe" not in files:
        die("%s: no bin/denpex-probe (make it with tools/portable-build.sh)" % path)
    return files


def probe_version(files):
    with tempfile.TemporaryDirectory() as d:
        exe = os.path.join(d, "denpex-probe")
        with open(exe, "wb") as f:
            f.write(files["bin/denpex-probe"][0])
        os.chmod(exe, 0o755)
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30).stdout
    m = re.search(r"(\d+\.\d+\.\d+)", out)
    if not m:
        die("bin/denpex-probe --version printed no version: %r" % out[:200])
    return m.group(1)


def wheel_entries(files, version):
    data = "denpex_probe-%s.data" % version
    entries = []   # (archive name, bytes, unix mode)
    for name, (content, mode) in sorted(files.items()):
        if content == "symlink":
            target = os.path.normpath(os.path.join(os.path.dirname(name), mode))
            if target not in files or files[target][0] == "symlink":
                continue
            content, mode = files[target]
        top, _, rest = name.partition("/")
        if top == "bin" and rest in SCRIPTS:
            entries.append(("%s/scripts/%s" % (data, rest), content, 0o755))
        elif top in ("lib", "share"):
            entries.append(("%s/data/%s" % (data, name), content, mode & 0o777 or 0o644))
    entries.append(("denpex_probe/__init__.py", INIT.format(version=version).encode(), 0o644))
    entries.append(("denpex_probe/__main__.py", MAIN.encode(), 0o644))
    return entries


def dist_info(version):
    d = "denpex_probe-%s.dist-info" % version
    metadata = "\n".join([
        "Metadata-Version: 2.1",
        "Name: denpex-probe",
        "Version: " + version,
        "Summary: Pre-flight gate for distributed GPU jobs: the NCCL, CUDA driver and PyTorch "
        "every rank would load, compared across ranks (mpirun, srun, torchrun)",
        "Requires-Python: >=3.6",
        "", ""])
    wheel = "\n".join(["Wheel-Version: 1.0", "Generator: denpex tools/portable-wheel.py",
                       "Root-Is-Purelib: false", "Tag: " + TAG, "", ""])
    return [(d + "/METADATA", metadata.encode(), 0o644), (d + "/WHEEL", wheel.encode(), 0o644)], d


def write_wheel(out_dir, version, entries):
    meta, d = dist_info(version)
    entries = entries + meta
    path = os.path.join(out_dir, "denpex_probe-%s-%s.whl" % (version, TAG))
    record = io.StringIO()
    with zipfile.ZipFile(path + ".part", "w", zipfile.ZIP_DEFLATED) as z:
        for name, content, mode in entries:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (stat.S_IFREG | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, content)
            record.write("%s,%s,%d\n" % (name, digest(content), len(content)))
        record.write("%s/RECORD,,\n" % d)
        info = zipfile.ZipInfo(d + "/RECORD", date_time=(2026, 1, 1, 0, 0, 0))
        info.external_attr = (stat.S_IFREG | 0o644) << 16
        z.writestr(info, record.getvalue())
    os.replace(path + ".part", path)
    return path


def main():
    if len(sys.argv) < 3:
        die("usage: tools/portable-wheel.py TARBALL OUTDIR [VERSION]")
    files = tarball_members(sys.argv[1])
    version = sys.argv[3] if len(sys.argv) > 3 else probe_version(files)
    os.makedirs(sys.argv[2], exist_ok=True)
    print(write_wheel(sys.argv[2], version, wheel_entries(files, version)))


if __name__ == "__main__":
    main()
