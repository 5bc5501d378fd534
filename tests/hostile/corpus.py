#!/usr/bin/env python3
"""A hostile corpus, made here and run through the real denpex-probe binary.

    corpus.py PROBE SCRATCH_DIR [CASE_NAME_SUBSTRING]

Every case is an input an attacker could hand to someone who runs denpex-probe (as root, in a
prolog, or at a terminal): rank records whose host names or paths are shell syntax or terminal
escape sequences, logs with ESC/OSC/C1 sequences, right-to-left overrides and NUL bytes, file and
folder names that are commands, a torch/version.py that writes to the terminal, an `explain`
name with escapes. Each case runs one mode of the probe and is held to the same rules:

  - it exits 0, 1 or 2 (as the case expects), and an exit of 2 comes with a line on stderr that
    names the tool;
  - stdout and stderr are valid UTF-8 without control characters (but newline and tab), C1
    controls or bidirectional formatting characters: the input is shown escaped, never obeyed;
  - nothing ran: the marker file every payload would create is absent;
  - nothing outside the outputs it named changed: the scratch tree is listed before and after;
  - every command the JSON report gives as words (verify_argv, verify_or.argv) is what a shell
    makes of its text: the text is evaluated by bash as words (eval "set -- TEXT", PATH empty)
    and must give exactly those words and create no marker. A verify given as prose (argv null)
    must not carry the payload.

Exit 0 when every case holds, 1 otherwise (each failure printed), 77 when python3 lacks what it
needs. The corpus is deterministic: the same cases every run.
"""
import json
import os
import shutil
import stat
import subprocess
import sys

PROBE, SCRATCH = os.path.abspath(sys.argv[1]), sys.argv[2]
ONLY = sys.argv[3] if len(sys.argv) > 3 else ""
TIMEOUT = 60

# Payloads: each would create MARKER if any shell, terminal or program obeyed it.
BIDI = ["\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u202a", "\u202b", "\u202c", "\u202d", "\u200e",
        "\u200f", "\u061c"]


def payload_hosts(marker):
    return [
        f"nodeA$(touch {marker})",
        f"nodeA`touch {marker}`",
        f"nodeA;touch {marker}",
        f"nodeA|touch {marker}",
        f"nodeA&&touch {marker}",
        f"nodeA>{marker}",
        f"nodeA'$(touch {marker})'",
        f"nodeA\"$(touch {marker})\"",
        f"nodeA\ntouch {marker}",
        f"nodeA\rtouch {marker}",
        f"-oProxyCommand=touch {marker}",
        f"nodeA\x1b]0;touch {marker}\x07",
        f"nodeA\x1b[2J\x1b[8mtouch {marker}",
        f"nodeA\u202etouch {marker}",
        f"nodeA\u009b2Jtouch {marker}",
        f"nodeA\x00touch {marker}",
        f"nodeA\x7ftouch {marker}",
        f"nodeA ${{IFS}}touch${{IFS}}{marker}",
        "~root",
        "node*",
    ]


def listing(root, skip):
    """Every entry under root but `skip` (outputs named): kind, size, mode, mtime, link target."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            if any(p == s or p.startswith(s + os.sep) for s in skip):
                continue
            st = os.lstat(p)
            link = os.readlink(p) if stat.S_ISLNK(st.st_mode) else ""
            out[p] = (stat.S_IFMT(st.st_mode), st.st_size, st.st_mode, st.st_mtime_ns, link)
    return out


def bad_bytes(data):
    """Why `data` (a stream the probe wrote) could act on a terminal, or ''."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return f"not UTF-8 at byte {e.start}"
    for i, ch in enumerate(text):
        cp = ord(ch)
        if (cp < 0x20 and ch not in "\n\t") or cp == 0x7f:
            return f"control character U+{cp:04X} at {i}: {text[max(0, i - 30):i + 10]!r}"
        if 0x80 <= cp <= 0x9f:
            return f"C1 control U+{cp:04X} at {i}"
        if ch in BIDI:
            return f"bidirectional formatting U+{cp:04X} at {i}"
    return ""


def words_of(text, cwd, env):
    """What bash makes of `text` as words, run with no PATH: (words, stderr). Lines before the
    last (a verify's variables) run first, as pasted."""
    head, _, last = text.rpartition("\n")
    r = subprocess.run(["/bin/bash", "-c", 'eval "$1" && eval "set -- $2" && printf "%s\\0" "$@"', "_", head or ":", last],
                       cwd=cwd, env=env, capture_output=True, timeout=TIMEOUT)
    if r.returncode != 0:
        return None, r.stderr.decode("utf-8", "replace")
    parts = r.stdout.split(b"\0")
    return [p.decode("utf-8", "surrogateescape") for p in parts[:-1]], ""


class Corpus:
    def __init__(self, probe, scratch):
        self.probe = probe
        self.scratch = scratch
        self.failures = []
        self.cases = 0

    def fail(self, name, why):
        self.failures.append(f"FAIL [{name}]: {why}")
        print(f"FAIL [{name}]: {why}", flush=True)

    def run(self, name, args, expect, outputs=(), stdin=None, tree=None, payload="touch", prefix=(), says=""):
        """Runs one case in its own directory; `tree(dir, marker)` makes its inputs and returns the
        argument list's substitutions. `outputs` are the files the case names (relative)."""
        if ONLY and ONLY not in name:
            return
        self.cases += 1
        d = os.path.join(self.scratch, f"case{self.cases:03d}")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        marker = os.path.join(d, "marker")
        subst = tree(d, marker) if tree else {}
        argv = [a.format(d=d, marker=marker, **subst) if isinstance(a, str) else a for a in args]
        # Outputs go to d/out/ (made now): nothing else may appear there, and nothing may change
        # anywhere else.
        out_dir = os.path.join(d, "out")
        os.makedirs(out_dir)
        outs = [os.path.join(d, o) for o in outputs]
        before = listing(self.scratch, [out_dir])
        env = {"PATH": "/usr/bin:/bin", "HOME": d, "LANG": "C.UTF-8"}
        data = stdin(d, marker) if stdin else None
        try:
            extra = {"input": data} if data is not None else {"stdin": subprocess.DEVNULL}
            r = subprocess.run(list(prefix) + [self.probe] + argv, cwd=d, env=env, capture_output=True, timeout=TIMEOUT,
                               **extra)
        except subprocess.TimeoutExpired:
            self.fail(name, f"did not finish within {TIMEOUT} s")
            return
        shown = f"{name} ({' '.join(repr(a) for a in argv)})"
        if r.returncode not in expect:
            self.fail(shown, f"exit {r.returncode}, expected {sorted(expect)}; stderr: {r.stderr[-400:]!r}")
        if r.returncode == 2 and b"denpex-probe" not in r.stderr:
            self.fail(shown, f"exit 2 without a line naming the tool on stderr: {r.stderr[-400:]!r}")
        if says and says.encode() not in r.stderr:
            self.fail(shown, f"stderr does not say {says!r}: {r.stderr[-400:]!r}")
        for stream, data_out in (("stdout", r.stdout), ("stderr", r.stderr)):
            why = bad_bytes(data_out)
            if why:
                self.fail(shown, f"{stream}: {why}")
        if os.path.lexists(marker):
            self.fail(shown, "the marker exists: a payload ran")
        after = listing(self.scratch, [out_dir])
        extra = sorted(set(os.listdir(out_dir)) - {os.path.basename(o) for o in outs})
        if extra:
            self.fail(shown, f"left in the output folder beside its outputs: {extra}")
        changed = sorted(set(before) ^ set(after) | {p for p in before if p in after and before[p] != after[p]})
        if changed:
            self.fail(shown, f"changed outside its outputs: {changed[:5]}")
        for o in outs:
            if o.endswith(".json") and os.path.isfile(o):
                self.check_commands(shown, o, d, marker, env)

    def check_commands(self, shown, path, cwd, marker, env):
        try:
            with open(path, encoding="utf-8") as f:
                report = json.load(f)
        except (OSError, ValueError) as e:
            self.fail(shown, f"{path}: not JSON: {e}")
            return
        found = []

        def walk(j):
            if isinstance(j, dict):
                if "verify" in j and isinstance(j["verify"], str):
                    found.append((j["verify"], j.get("verify_argv"), j.get("verify_vars") or {}))
                    vo = j.get("verify_or")
                    if isinstance(vo, dict):
                        found.append((vo.get("text", ""), vo.get("argv"), vo.get("vars") or {}))
                for v in j.values():
                    walk(v)
            elif isinstance(j, list):
                for v in j:
                    walk(v)

        walk(report)
        if "findings" in report and report.get("mode") == "diagnose" and report["findings"] and not found:
            self.fail(shown, "a diagnose report without a verify command")
        bare = {"PATH": "/nonexistent", "HOME": cwd}
        for text, argv, variables in found:
            if argv is None:
                if "touch" in text:
                    self.fail(shown, f"verify prose carries the payload: {text!r}")
                continue
            # Variables set on their own lines before the command: the command's "$NAME" words
            # are their values once those lines have run.
            argv = [variables.get(w[1:], w) if w.startswith("$") else w for w in argv]
            words, err = words_of(text, cwd, bare)
            if os.path.lexists(marker):
                self.fail(shown, f"pasting the verify ran the payload: {text!r}")
                os.unlink(marker)
            if words != argv:
                self.fail(shown, f"verify {text!r} is {words!r} to a shell ({err.strip()}), the JSON says {argv!r}")


def write(path, data, mode="wb"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as f:
        f.write(data)


def record(rank, host, nccl="2.28.9", path=None, torch="2.5.1+cu124"):
    lib = path or f"/usr/lib/x86_64-linux-gnu/libnccl.so.{nccl}"
    code = int(nccl.split(".")[0]) * 10000 + int(nccl.split(".")[1]) * 100 + int(nccl.split(".")[2])
    return {
        "rank": rank, "host": host, "pid": 1000 + rank, "probe_version": "0.1.0", "arch": "x86_64",
        "container": False, "mode": "live",
        "nccl": {"status": "ok", "path": lib, "version": nccl, "version_code": code, "cuda_build": "12.4",
                 "method": "dlopen", "origin": "ld.so.cache", "static_version": nccl},
        "torch": {"status": "ok", "version": torch, "cuda": "12.4", "path": "/venv/lib/python3.11/site-packages/torch",
                  "nccl": {"path": lib, "version": nccl, "linkage": "system"}},
    }


def records_tree(host, odd_field="host", nccl_path=None):
    def make(d, marker):
        h = host.replace("{marker}", marker)
        recs = [record(0, "node01"), record(1, "node02"), record(2, h, nccl="2.27.3", path=nccl_path)]
        if odd_field == "path":
            recs[2] = record(2, "node03", nccl="2.27.3", path=h)
        for r in recs:
            write(os.path.join(d, "records", f"rank{r['rank']}.json"), json.dumps(r).encode())
        return {}
    return make


def log_tree(lines, name="job.log", pad=0):
    def make(d, marker):
        body = "".join(f"node01:100:100 [0] NCCL INFO step {i} ok\n" for i in range(pad)).encode()
        body += lines.replace("{marker}", marker).encode("utf-8", "surrogateescape")
        write(os.path.join(d, "logs", name.replace("{marker}", marker)), body)
        return {"log": os.path.join(d, "logs", name.replace("{marker}", marker))}
    return make


def main():
    os.makedirs(SCRATCH, exist_ok=True)
    scratch = os.path.realpath(SCRATCH)
    shutil.rmtree(os.path.join(scratch, "corpus"), ignore_errors=True)
    c = Corpus(PROBE, os.path.join(scratch, "corpus"))
    os.makedirs(c.scratch)
    placeholder = "{marker}"

    # Rank records whose host names are commands or escapes: compare and diagnose judge them; the
    # odd rank's host goes into a finding, and diagnose's verify runs the gate on it.
    for i, h in enumerate(payload_hosts(placeholder)):
        c.run(f"record_host_{i}_compare", ["compare", "{d}/records", "--json", "{d}/out/out.json"], {0, 1, 2},
              outputs=["out/out.json"], tree=records_tree(h))
        c.run(f"record_host_{i}_diagnose", ["diagnose", "{d}/records", "--json", "{d}/out/out.json"], {1, 2},
              outputs=["out/out.json"], tree=records_tree(h))
        c.run(f"record_host_{i}_diagnose_html", ["diagnose", "{d}/records", "--html", "{d}/out/out.html", "--redact"],
              {1, 2}, outputs=["out/out.html"], tree=records_tree(h))
    # The same payloads as library paths inside a record.
    for i, h in enumerate(payload_hosts(placeholder)[:12]):
        c.run(f"record_path_{i}_compare", ["compare", "{d}/records", "--json", "{d}/out/out.json"], {0, 1, 2},
              outputs=["out/out.json"], tree=records_tree("/opt/" + h + "/libnccl.so.2", odd_field="path"))

    # Logs whose lines write to the terminal: escapes, OSC, hidden text, C1, bidi, NUL after the
    # part told by content (so the text is read), bare carriage returns.
    err = "[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered"
    escapes = {
        "csi_clear": f"{err} \x1b[2J\x1b[H touch {placeholder}\n",
        "osc_title": f"{err} \x1b]0;touch {placeholder}\x07 \x1b]8;;file:///etc\x1b\\link\x1b]8;;\x1b\\\n",
        "hidden": f"{err} \x1b[8mhidden touch {placeholder}\x1b[0m\n",
        "c1_csi": f"{err} \u009b2J touch {placeholder}\n",
        "bidi": f"{err} \u202etouch {placeholder}\u202c \u2066x\u2069\n",
        "nul": f"{err} before\x00after touch {placeholder}\n",
        "cr": f"{err} visible\rtouch {placeholder}\n",
        "del_bs": f"{err} ab\x08\x08\x7f touch {placeholder}\n",
        "bad_utf8": f"{err} \udcff\udcfe touch {placeholder}\n",
    }
    for key, line in escapes.items():
        for pad in (0, 6000):
            lines = f"node01:100:100 [1] NCCL WARN Cuda failure 'an illegal memory access' {line}" + line
            if key == "nul" and pad == 0:
                expect = {2}   # a NUL in the first blocks: told as binary, refused in one line
            else:
                expect = {1, 2}
            c.run(f"log_{key}_{pad}_diagnose", ["diagnose", "{log}", "--json", "{d}/out/out.json"], expect,
                  outputs=["out/out.json"], tree=log_tree(lines, pad=pad))
            c.run(f"log_{key}_{pad}_stdin", ["diagnose", "-"], expect,
                  stdin=lambda d, m, lines=lines, pad=pad: (
                      "".join(f"node01:100:100 [0] NCCL INFO step {i} ok\n" for i in range(pad)) +
                      lines.replace(placeholder, m)).encode("utf-8", "surrogateescape"))
            c.run(f"log_{key}_{pad}_collectives", ["collectives", "{log}"], {0, 1, 2},
                  tree=log_tree(lines, pad=pad))

    # File and folder names that are commands: verify lines that name a folder quote it.
    ras = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "diagnose", "fixtures", "diag_ras",
                            "rank0.out"), "rb").read()
    for i, name in enumerate([f"d$(touch {placeholder})", f"d;touch {placeholder}", f"-rf", f"d\x1b]0;x\x07",
                              f"d\u202etouch", "d'q'", "d with spaces"]):
        def ras_tree(d, marker, name=name):
            n = name.replace(placeholder, marker).replace("/", "_")
            write(os.path.join(d, n, "rank0.out"), ras)
            return {"dir": os.path.join(d, n)}
        c.run(f"dir_name_{i}_diagnose", ["diagnose", "{dir}", "--json", "{d}/out/out.json"], {1, 2},
              outputs=["out/out.json"], tree=ras_tree)
        c.run(f"file_name_{i}_diagnose", ["diagnose", "{log}", "--json", "{d}/out/out.json"], {1, 2},
              outputs=["out/out.json"],
              tree=log_tree(f"node01:100:100 [1] NCCL WARN {err}\n{err}\n", name=name.replace("/", "_") + ".log"))

    # A torch/version.py (in an image tree read with --root) that writes to the terminal.
    for i, v in enumerate([f"2.5.1\x1b]0;touch {placeholder}\x07", f"2.5.1\u202e1.0", f"2.5.1\x1b[2J",
                           f"2.5.1$(touch {placeholder})", "2.5.1\\x1b[2J"]):
        def torch_tree(d, marker, v=v):
            sp = os.path.join(d, "image", "usr", "lib", "python3", "dist-packages")
            write(os.path.join(sp, "torch", "version.py"),
                  f"__version__ = {json.dumps(v.replace(placeholder, marker))}\ncuda = '12.4'\n".encode())
            write(os.path.join(sp, "torch", "__init__.py"), b"")
            return {"sp": sp}
        c.run(f"torch_version_{i}_root", ["--root", "{d}/image", "--site-packages", "/usr/lib/python3/dist-packages",
                                          "--json", "{d}/out/out.json"], {0, 1}, outputs=["out/out.json"], tree=torch_tree)

    # explain with a name that is an escape sequence, or a command.
    for i, name in enumerate(["\x1b]0;pwned\x07", "nccl.\u202eevil", "$(touch {marker})", "x\x00y"[:1] + "y"]):
        c.run(f"explain_{i}", ["explain", name], {2})

    failures = c.failures + permission_cases()
    print(f"corpus.py: {c.cases} cases, {len(failures)} failures", flush=True)
    return 1 if failures else 0


def permission_cases():
    """Inputs and outputs the user may not read or write. As root every permission is granted,
    so the probe then runs as nobody (setpriv), from a copy in a fresh directory under /tmp that
    nobody can reach. Returns the failures."""
    import tempfile
    prefix = []
    top = tempfile.mkdtemp(prefix="denpex-corpus-")
    try:
        probe = PROBE
        if os.geteuid() == 0:
            if not shutil.which("setpriv"):
                print("corpus.py: setpriv is absent: the permission cases are not run as nobody", flush=True)
                return ["setpriv missing under root"]
            prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
            probe = os.path.join(top, "denpex-probe")
            shutil.copy(PROBE, probe)
        os.chmod(top, 0o755)
        c = Corpus(probe, os.path.join(top, "corpus"))
        os.makedirs(c.scratch)
        os.chmod(c.scratch, 0o777)
        err = "[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered\n"

        def opened(d, marker, mode_log=0o644, mode_dir=0o777):
            os.chmod(d, 0o777)
            write(os.path.join(d, "logs", "job.log"), err.encode())
            os.chmod(os.path.join(d, "logs", "job.log"), mode_log)
            os.chmod(os.path.join(d, "logs"), mode_dir)
            os.chmod(os.path.join(d, "out"), 0o777) if os.path.isdir(os.path.join(d, "out")) else None
            return {}

        c.run("perm_unreadable_log", ["diagnose", "{d}/logs/job.log"], {2}, prefix=prefix,
              says="Permission denied", tree=lambda d, m: opened(d, m, mode_log=0o000))
        c.run("perm_unreadable_dir", ["diagnose", "{d}/logs"], {2}, prefix=prefix,
              says="Permission denied", tree=lambda d, m: opened(d, m, mode_dir=0o000))
        c.run("perm_unreadable_record", ["compare", "{d}/logs/job.log"], {2}, prefix=prefix,
              says="Permission denied", tree=lambda d, m: opened(d, m, mode_log=0o000))

        def readonly_out(d, m):
            opened(d, m)
            os.makedirs(os.path.join(d, "ro"))
            os.chmod(os.path.join(d, "ro"), 0o555)
            return {}
        c.run("perm_json_readonly_dir", ["diagnose", "{d}/logs/job.log", "--json", "{d}/ro/out.json"], {2},
              prefix=prefix, says="Permission denied", tree=readonly_out)

        def foreign_out(d, m):
            opened(d, m)
            write(os.path.join(d, "root-owned.json"), b"{}\n")
            os.chmod(os.path.join(d, "root-owned.json"), 0o644)
            os.chmod(d, 0o755)
            return {}
        if prefix:
            c.run("perm_json_over_root_file", ["diagnose", "{d}/logs/job.log", "--json", "{d}/root-owned.json"], {2},
                  prefix=prefix, says="Permission denied", tree=foreign_out)
        print(f"corpus.py: permission cases{' as nobody' if prefix else ''}: {c.cases} cases, "
              f"{len(c.failures)} failures", flush=True)
        return c.failures
    finally:
        for dirpath, dirnames, _ in os.walk(top):
            for n in dirnames:
                try:
                    os.chmod(os.path.join(dirpath, n), 0o755)
                except OSError:
                    pass
        shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
