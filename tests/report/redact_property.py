#!/usr/bin/env python3
"""--redact leaks nothing: no name the report or its input holds survives in any redacted output.

  redact_property.py PROBE REAL_LOG_DIR

For every fixture and every real paste (golden.py's inputs), `denpex-probe diagnose` runs once
without --redact (JSON) and once with it (text, stderr, JSON, HTML). The tokens that name
someone are taken, by this test's own tokenizer, from the unredacted JSON and from the input:
the hosts of "host"/"hosts" keys and of "processes" entries, "process HOST:PID", the host of
an NCCL line header (HOST:PID:TID [DEV] NCCL), each FQDN and its short name, IPv4 addresses
(but loopback and 0.0.0.0), both sides of user@host, and the user of /home/NAME or /Users/NAME.
None may appear, as a whole word, in any redacted output. Exit 0 when none leaks, 1 otherwise,
77 without the real pastes.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "golden"))
import golden  # noqa: E402

SKIP = 77
ENV = dict(os.environ, LC_ALL="C", TZ="UTC", NO_COLOR="1", TERM="dumb")
NAME = r"[A-Za-z][A-Za-z0-9_.-]*[A-Za-z0-9]"
# Names that a line's shape yields but that identify no one: public sites, and words of the
# tools' own messages that stand where a host or user would.
PUBLIC = {"github.com", "pytorch.org", "nvidia.com", "python.org", "huggingface.co", "localhost", "git", "root"}


def text_tokens(s):
    out = set()
    for m in re.finditer(r"process(?:es)? (" + NAME + r"):\d+", s):
        out.add(m.group(1))
    for m in re.finditer(r"(?:^|[\s\[(])(" + NAME + r"):\d+:\d+ \[\d+\] NCCL", s, re.M):
        out.add(m.group(1))
    for m in re.finditer(r"(?<![\w.])(\d{1,3}(?:\.\d{1,3}){3})(?![\w.])", s):
        ip = m.group(1)
        if all(int(p) <= 255 for p in ip.split(".")) and not ip.startswith("127.") and ip != "0.0.0.0":
            out.add(ip)
    for m in re.finditer(r"(?<![\w.@-])(" + NAME + r")@(" + NAME + r")", s):
        out.update([m.group(1), m.group(2)])
    for m in re.finditer(r"/(?:home|Users)/([A-Za-z0-9_.-]{2,})", s):
        out.add(m.group(1))
    return out


def json_tokens(j, key=""):
    out = set()
    if isinstance(j, dict):
        for k, v in j.items():
            out |= json_tokens(v, k)
    elif isinstance(j, list):
        for v in j:
            out |= json_tokens(v, key)
    elif isinstance(j, str):
        if key in ("host", "hosts") and re.search(r"[A-Za-z]", j) and not j.startswith("image "):
            out.add(j)
        if key == "processes" and ":" in j:
            out.add(j.rsplit(":", 1)[0])
        out |= text_tokens(j)
    return out


def names(tokens):
    out = set()
    for t in tokens:
        t = t.strip(".")
        if len(t) < 3 or t.lower() in PUBLIC or any(t.endswith("." + p) for p in PUBLIC):
            continue
        out.add(t)
        # An FQDN's short name names the same host.
        short = t.split(".")[0]
        if "." in t and not re.fullmatch(r"[\d.]+", t) and len(short) >= 3:
            out.add(short)
    return out


def run(probe, case, work):
    name, cwd, paths = case
    tag = re.sub(r"[^A-Za-z0-9]+", "_", name)
    plain, red, page = (os.path.join(work, tag + x) for x in (".json", ".r.json", ".r.html"))
    subprocess.run([probe, "diagnose", "--json", plain] + paths, cwd=cwd, env=ENV, stdin=subprocess.DEVNULL,
                   capture_output=True, timeout=120)
    p = subprocess.run([probe, "diagnose", "--redact", "--color", "never", "--json", red, "--html", page] + paths,
                       cwd=cwd, env=ENV, stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    tokens = set()
    if os.path.exists(plain):
        tokens |= json_tokens(json.load(open(plain)))
    for path in paths:
        full = os.path.join(cwd, path)
        if os.path.isfile(full):
            tokens |= text_tokens(open(full, "rb").read(4 << 20).decode("utf-8", "replace"))
    outputs = {"text": p.stdout.decode("utf-8", "replace"), "stderr": p.stderr.decode("utf-8", "replace")}
    for label, f in (("json", red), ("html", page)):
        outputs[label] = open(f, encoding="utf-8", errors="replace").read() if os.path.exists(f) else ""
    # The redaction's own placeholders (host-N, user-N, /path-N) are not names: a user called
    # "user" is replaced by "user-1", which holds the word without leaking it.
    placeholders = re.compile(r"(?<![A-Za-z0-9])(?:host|user|path)-\d+(?![A-Za-z0-9])")
    outputs = {label: placeholders.sub("<redacted>", out) for label, out in outputs.items()}
    leaks = []
    for t in sorted(names(tokens)):
        pattern = re.compile(r"(?<![A-Za-z0-9])" + re.escape(t) + r"(?![A-Za-z0-9])")
        for label, out in outputs.items():
            m = pattern.search(out)
            if m:
                around = out[max(0, m.start() - 40):m.end() + 40].replace("\n", "\\n")
                leaks.append(f"{name}: {t!r} in the redacted {label}: ...{around}...")
    return len(names(tokens)), leaks


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    probe, real_dir = os.path.abspath(argv[1]), argv[2]
    real = golden.real_cases(real_dir)
    if not real:
        print(f"redact_property: {real_dir} is absent: skipped")
        return SKIP
    cases = golden.fixture_cases() + real
    with tempfile.TemporaryDirectory(prefix="denpex-redact.") as work:
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(lambda c: run(probe, c, work), cases))
    tokens = sum(n for n, _ in results)
    leaks = [l for _, ls in results for l in ls]
    for l in leaks[:60]:
        print(l)
    print(f"redact_property: {len(cases)} inputs, {tokens} names, {len(leaks)} leaked")
    return 1 if leaks else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
