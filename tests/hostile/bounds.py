#!/usr/bin/env python3
"""Hostile inputs that cost memory or time, or that a reader could wrap or cut short, end to end
through the real denpex-probe (tests/hostile/FAULTS.md, "Inputs that cost memory or time"):

  bounds.py CASE PROBE SCRATCH_DIR [--sanitized]

Each case makes its inputs at test time in SCRATCH_DIR (the big ones are a few MB compressed,
never committed), runs `diagnose` (or `collectives`) and holds it to: exit 0, 1 or 2 with a clear
line; done within 30 s; and within the memory bound the readers document, measured as the
child's peak resident set (wait4) above the probe's own on a one-line log. Under the sanitizer
build (--sanitized) ASan's own accounting replaces the measurement: the run is given
ASAN_OPTIONS=hard_rss_limit_mb=2048 (an address-space limit would abort ASan itself).

Cases:
  fr_json_gz        a 59 KB gzip'd Flight Recorder JSON dump of 15 million one-number tensors
                    (60 MB of JSON), and a real-shaped 20,000-entry dump beside it
  ras_json          a 100 MB NCCL RAS JSON output of 360,000 ranks, and one of empty records
  numbers           19-digit and 2^31 ranks in a Flight Recorder pg_config, a 2^32+1 rank in RAS
  zst_bomb          a 330 KB .zst of 10 GiB of newlines
  gz_bomb           a 10 MB .gz of 10 GiB of newlines
  size_limit        the .zst bomb with the ratio limit off and --max-decoded-size 32M, for
                    diagnose and collectives
  damaged           a garbage-trailed .gz and a truncated .xz beside a good log; a .gz damaged
                    from its first byte; a truncated .gz among the per-rank logs of collectives
  absent_ranks      a 319-byte trace and an NCCL Inspector record claiming a communicator of
                    2^31-1 ranks (it took all memory), and a trace claiming 4,000,000
  event_cap         20,010 watchdog lines of the followers before the real out-of-memory error,
                    and 60,000 ranks each timing out (a cap of 20,000 events dropped the error,
                    and named ranks 0-19999 only)
  line_breaks       the two-node out-of-memory fixture with CR-only line ends, and with a progress
                    bar redrawn with CR before every rank's line: the verdict of the LF original (a lone
                    CR was no break: the whole log read as one line)
  processes         120,000 processes on as many hosts, one NCCL version line each, two versions
                    (was over 30 s: every new host was compared with every host seen)

Exit 0 pass, 1 fail, 77 skipped (a program the case needs is absent).
"""
import gzip
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time

DEADLINE_S = 30
MIB = 1 << 20
HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(os.path.dirname(HERE), "diagnose", "fixtures")

failures = []


def bad(msg):
    failures.append(msg)
    print("FAIL: " + msg)


class Run:
    def __init__(self, rc, out, err, secs, rss_kib):
        self.rc, self.out, self.err, self.secs, self.rss_kib = rc, out, err, secs, rss_kib


def run(probe, args, cwd, sanitized):
    """Runs the probe; returns its exit code, output, time and peak RSS (KiB). Killed at the
    deadline (rc None). The peak is measured by /usr/bin/time, whose own small child is the
    probe: a child of this Python would count the interpreter's pages from before its exec."""
    env = dict(os.environ)
    if sanitized:
        env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":hard_rss_limit_mb=2048").lstrip(":")

    def limit():
        os.setsid()
        # A safety net for the machine only (a reader that runs away is stopped at 6 GiB): the
        # bound itself is checked on the measured peak. Not under ASan (it reserves more).
        if not sanitized:
            resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))

    out_path, err_path = os.path.join(cwd, "out.txt"), os.path.join(cwd, "err.txt")
    rss_path = os.path.join(cwd, "rss.txt")
    t0 = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", rss_path, probe] + args, cwd=cwd, env=env,
                             stdout=out, stderr=err, preexec_fn=limit)
        try:
            p.wait(timeout=DEADLINE_S)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            rc = None
    secs = time.monotonic() - t0
    with open(out_path, errors="replace") as f:
        out_text = f.read()
    with open(err_path, errors="replace") as f:
        err_text = f.read()
    rss = 0
    try:
        with open(rss_path) as f:
            rss = int(f.read().split()[-1])
    except (OSError, ValueError, IndexError):
        pass
    return Run(rc, out_text, err_text, secs, rss)


def held(r, name, bound_kib, base_kib, sanitized, quiet=False):
    """The common contract: exit 0/1/2, a line on stderr or stdout (with -q only for exit 2),
    the deadline, the bound."""
    print("{}: exit {}, {:.2f} s, peak RSS {} MiB (bound {} MiB above the probe's own {} MiB)".format(
        name, r.rc, r.secs, r.rss_kib // 1024, bound_kib // 1024, base_kib // 1024))
    if r.rc is None:
        bad("{}: still running after {} s (killed)".format(name, DEADLINE_S))
        return False
    if r.rc not in (0, 1, 2):
        bad("{}: exit {} (a crash or a kill), stderr: {}".format(name, r.rc, r.err[-400:]))
        return False
    if not (r.err.strip() or r.out.strip()) and (r.rc == 2 or not quiet):
        bad("{}: exit {} without a word".format(name, r.rc))
    if not sanitized and r.rss_kib > base_kib + bound_kib:
        bad("{}: peak RSS {} MiB, past the documented bound ({} MiB + {} MiB)".format(
            name, r.rss_kib // 1024, base_kib // 1024, bound_kib // 1024))
    return True


def report(path, name):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        bad("{}: no JSON report ({})".format(name, e))
        return None


def base_rss(probe, w, sanitized):
    d = os.path.join(w, "base")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "one.log"), "w") as f:
        f.write("hello\n")
    return run(probe, ["diagnose", "one.log", "-q"], d, sanitized).rss_kib


def need(*programs):
    """Skips the case (77) when a program it needs is absent."""
    for p in programs:
        if shutil.which(p) is None:
            print("SKIP: needs {}".format(p))
            sys.exit(77)


def sh(cmd, cwd):
    subprocess.run(cmd, shell=True, check=True, cwd=cwd)


def cuts_of(rep, why=None):
    cuts = (rep or {}).get("inputs", {}).get("cut", []) if isinstance((rep or {}).get("inputs"), dict) else \
        (rep or {}).get("inputs_cut", [])
    return [c for c in cuts if why is None or c.get("why") == why]


# ---- A: Flight Recorder and RAS JSON --------------------------------------------------------

def fr_entry(i, extra=""):
    return ('{"collective_seq_id":%d,"input_dtypes":["Float"],"input_sizes":[[4]%s],"is_p2p":false,'
            '"op_id":%d,"output_dtypes":["Float"],"output_sizes":[[4]],"p2p_seq_id":0,"pg_id":0,'
            '"process_group":["0","default_pg"],"profiling_name":"nccl:all_reduce","record_id":%d,'
            '"retired":true,"state":"completed","thread_id":"140334430960512","thread_name":"python3",'
            '"time_created_ns":%d,"time_discovered_completed_ns":0,"time_discovered_started_ns":0,'
            '"timeout_ms":600000}') % (i + 1, extra, i + 1, i, 1796154459061684079 + i * 1000)


def fr_dump(entries, ranks='"[0, 1]"'):
    # torch's dump_json: nlohmann's sorted keys, compact.
    return ('{"entries":[' + ",".join(entries) + '],"nccl_version":"2.27.3","pg_config":{"0":{"desc":'
            '"default_pg","name":"0","ranks":' + ranks + '}},"pg_status":{"0":{"last_completed_collective":'
            '"%d","last_enqueued_collective":"%d","last_started_collective":"-1"}},"version":"2.10"}') % (
                len(entries), len(entries))


def case_fr_json_gz(probe, w, base, sanitized):
    hostile = os.path.join(w, "hostile")
    os.makedirs(hostile)
    # 15 million one-number tensors: 60 MB of JSON in 59 KB of gzip (read whole, it was 4.2 GB).
    text = fr_dump([fr_entry(0, ",[0]" * 15000000)]).encode()
    with open(os.path.join(hostile, "nccl_trace_rank_0.json.gz"), "wb") as f:
        f.write(gzip.compress(text, 9))
    # The bound of evidence/fr_dump.h: 4 bytes kept per byte read plus 1 MiB, twice that while a
    # vector moves; plus the parser's buffers.
    bound = (8 * len(text) + 2 * MIB + 16 * MIB) // 1024
    for extra in ([], ["--max-decoded-ratio", "0"]):
        r = run(probe, ["diagnose", "hostile", "--json", "r.json", "-q"] + extra, w, sanitized)
        if held(r, "fr_json_gz " + " ".join(extra), bound, base, sanitized, quiet=True):
            if "not read" not in r.err:
                bad("fr_json_gz: the dump is not refused with a line saying so: " + r.err[-300:])
    # A real-shaped dump of 20,000 entries per rank (9 MB each) is read whole, within the bound.
    real = os.path.join(w, "real")
    os.makedirs(real)
    total = 0
    for rank in range(2):
        text = fr_dump([fr_entry(i) for i in range(20000)]).encode()
        total += len(text)
        with open(os.path.join(real, "nccl_trace_rank_%d.json.gz" % rank), "wb") as f:
            f.write(gzip.compress(text, 6))
    r = run(probe, ["diagnose", "real", "--json", "r.json", "-q"], w, sanitized)
    if held(r, "fr_json_gz real", (8 * total + 4 * MIB + 16 * MIB) // 1024, base, sanitized, quiet=True):
        if "not read" in r.err or "out of range" in r.err:
            bad("fr_json_gz: a real-shaped dump is refused: " + r.err[-300:])


def ras_doc(ranks, compact=True):
    with open(os.path.join(os.path.dirname(HERE), "fixtures", "evidence", "ras-text", "status.json")) as f:
        doc = json.load(f)
    comm = doc["communicators"][0]
    comm["ranks"] = ranks(comm["ranks"][0])
    comm["size"] = max(len(comm["ranks"]), comm["size"])
    return json.dumps(doc, separators=(",", ":") if compact else None)


def case_ras_json(probe, w, base, sanitized):
    # 360,000 ranks as RAS writes them (made compact): 104 MB.
    text = ras_doc(lambda r: [dict(r, rank=i, pid=1000 + i, host="10.0.%d.%d" % (i // 256 % 256, i % 256))
                              for i in range(360000)])
    empty = '{"nccl_version":"2.28.9","cuda_runtime_version":12080,"communicators":[{"hash":"0x1","size":8,' \
            '"ranks":[' + ",".join(["{}"] * 30000000) + ']}]}'
    for name, doc in (("ras_json 360,000 ranks", text), ("ras_json empty records", empty)):
        d = os.path.join(w, name.split()[-1])
        os.makedirs(d)
        with open(os.path.join(d, "ras.json"), "w") as f:
            f.write(doc)
        # The bound of evidence/ras_json.h: 6 bytes kept per byte read plus 1 MiB, twice that
        # while a vector moves; plus what the judge holds for one operation at a time.
        bound = (12 * len(doc) + 2 * MIB + 64 * MIB) // 1024
        r = run(probe, ["diagnose", os.path.basename(d), "--json", "r.json", "-q"], w, sanitized)
        if held(r, name, bound, base, sanitized, quiet=True) and name.endswith("records") and "not read" not in r.err:
            bad("ras_json: 30 million empty records are not refused: " + r.err[-300:])


# ---- B: numbers out of range ----------------------------------------------------------------

def case_numbers(probe, w, base, sanitized):
    d = os.path.join(w, "dumps")
    os.makedirs(d)
    for rank in range(2):
        text = fr_dump([fr_entry(i) for i in range(5)], ranks='"[0, 1, 9223372036854775807]"')
        # A second group whose ranks are a list: 2^31 became -2147483648.
        text = text.replace('"pg_config":{', '"pg_config":{"1":{"desc":"sub","name":"1","ranks":[0,2147483648]},')
        with open(os.path.join(d, "nccl_trace_rank_%d.json" % rank), "w") as f:
            f.write(text)
    ras = ras_doc(lambda r: [dict(r, rank=4294967297), dict(r, rank=0)])
    with open(os.path.join(d, "ras.json"), "w") as f:
        f.write(ras)
    r = run(probe, ["diagnose", "dumps", "--json", "r.json"], w, sanitized)
    if not held(r, "numbers", 64 * MIB // 1024, base, sanitized):
        return
    rep = report(os.path.join(w, "r.json"), "numbers")
    if not rep:
        return
    wrapped = sorted({x for f in rep["findings"] for x in f.get("ranks", []) if x < 0 or x >= (1 << 22)})
    if wrapped:
        bad("numbers: ranks wrapped from numbers out of range: {}".format(wrapped))
    if 1 in {x for f in rep["findings"] if f["code"].startswith("ras-") for x in f.get("ranks", [])}:
        bad("numbers: RAS rank 4294967297 read as rank 1")
    samples = [s["text"] for s in rep["inputs"]["unreadable_samples"]]
    if rep["inputs"]["unreadable"] < 5 or not any("9223372036854775807 is out of range" in s for s in samples) \
            or not any("4294967297 is out of range" in s for s in samples):
        bad("numbers: the refused records are not counted with samples: {} {}".format(
            rep["inputs"]["unreadable"], samples))
    if "out of range" not in r.err:
        bad("numbers: no line on stderr names a number out of range")


# ---- C: decompression bombs -----------------------------------------------------------------

def bomb(w, tool, piece_mib, copies):
    """10 GiB of newlines: one compressed piece of `piece_mib` MiB, repeated (gzip members and
    zstd frames read one after another as one stream)."""
    piece = os.path.join(w, "piece")
    sh("head -c {}M /dev/zero | tr '\\0' '\\n' | {} > '{}'".format(
        piece_mib, "gzip -9" if tool == "gzip" else "zstd -19 -q", piece), w)
    with open(piece, "rb") as f:
        data = f.read()
    out = os.path.join(w, "bomb." + ("gz" if tool == "gzip" else "zst"))
    with open(out, "wb") as f:
        for _ in range(copies):
            f.write(data)
    os.unlink(piece)
    return os.path.basename(out), len(data) * copies


def bomb_checks(r, rep, name, why):
    cuts = cuts_of(rep, why)
    if not cuts:
        bad("{}: no inputs.cut entry with why {}: {}".format(name, why, cuts_of(rep)))
        return
    if cuts[0]["decoded_bytes"] >= 10 << 30 or cuts[0]["compressed_offset"] <= 0:
        bad("{}: the cut does not say where: {}".format(name, cuts[0]))
    if "cut: " not in r.out and "input-cut" not in r.out:
        bad("{}: the text report does not say the input was cut".format(name))


def case_bomb(probe, w, base, sanitized, tool):
    need(tool, "head", "tr")
    name, size = bomb(w, tool, 128 if tool == "zstd" else 64, 80 if tool == "zstd" else 160)
    print("{}: {} bytes, 10 GiB of newlines".format(name, size))
    r = run(probe, ["diagnose", name, "--json", "r.json"], w, sanitized)
    if held(r, tool + "_bomb", 64 * MIB // 1024, base, sanitized):
        bomb_checks(r, report(os.path.join(w, "r.json"), tool + "_bomb"), tool + "_bomb", "ratio-limit")
        if "--max-decoded-ratio" not in r.err:
            bad("{}_bomb: stderr does not name the option that raises the limit".format(tool))


def case_size_limit(probe, w, base, sanitized):
    need("zstd", "head", "tr")
    name, _ = bomb(w, "zstd", 128, 80)
    limits = ["--max-decoded-ratio", "0", "--max-decoded-size", "32M"]
    r = run(probe, ["diagnose", name, "--json", "r.json"] + limits, w, sanitized)
    if held(r, "size_limit diagnose", 64 * MIB // 1024, base, sanitized):
        rep = report(os.path.join(w, "r.json"), "size_limit")
        bomb_checks(r, rep, "size_limit", "size-limit")
        cuts = cuts_of(rep, "size-limit")
        if cuts and cuts[0]["decoded_bytes"] != 32 * MIB:
            bad("size_limit: cut at {} bytes, not at 32 MiB".format(cuts[0]["decoded_bytes"]))
    # A value that is not a size, or is negative, is a usage error (never wrapped to no limit).
    for bad_value in (["--max-decoded-ratio", "-3"], ["--max-decoded-size", "99999999999999999999"],
                      ["--max-decoded-size", "-1"]):
        r = run(probe, ["diagnose", name] + bad_value, w, sanitized)
        if held(r, "size_limit " + " ".join(bad_value), 64 * MIB // 1024, base, sanitized) and (
                r.rc != 2 or len(r.err.strip().splitlines()) != 1 or bad_value[0] not in r.err):
            bad("size_limit: {} is not refused in one line naming the option: {}".format(bad_value, r.err[-300:]))
    r = run(probe, ["collectives", name] + limits, w, sanitized)
    if held(r, "size_limit collectives", 64 * MIB // 1024, base, sanitized):
        if r.rc != 2 or len(r.err.strip().splitlines()) != 1 or "decodes to more than 32 MiB" not in r.err:
            bad("size_limit: collectives does not end with one line naming the cut: " + r.err[-300:])


# ---- D: damaged compressed files ------------------------------------------------------------

def coll_log(rank, ranks, steps):
    lines = ["gpu-node001:{0}:{0} [{1}] NCCL INFO comm 0x{2:x} rank {1} nranks {3} cudaDev {1} nvmlDev {1} "
             "busId {4:x}000 commId 0x5d7c1e0a9b3f2c44 localRanks {3} localRank {1} MNNVL 0 - Init COMPLETE".format(
                 41000 + rank, rank, 0x55d0a0000000 + rank * 0x1000, ranks, 0x1b + rank)]
    for s in range(steps):
        lines.append("gpu-node001:{0}:{0} [{1}] NCCL INFO AllReduce: opCount {2:x} sendbuff 0x7f00 recvbuff 0x7f00 "
                     "count {3} datatype 7 op 0 root 0 comm 0x{4:x} [nranks={5}] stream 0x55d0b1e00000".format(
                         41000 + rank, rank, s, 1024 + s % 7, 0x55d0a0000000 + rank * 0x1000, ranks))
    return "\n".join(lines) + "\n"


def case_damaged(probe, w, base, sanitized):
    need("gzip", "xz")
    src = os.path.join(FIXTURES, "oom_two_nodes")
    d = os.path.join(w, "logs")
    os.makedirs(d)
    # node02 (rank 6's out-of-memory error) with bytes after its gzip member; node01 cut at two
    # thirds of its xz stream, past its lines of 10:42 (after the error at 10:12).
    sh("gzip -c '{}/node02.log' > node02.log.gz && printf 'not gzip' >> node02.log.gz".format(src), d)
    sh("xz -c '{0}/node01.log' > full.xz && head -c $(( $(stat -c %s full.xz) * 2 / 3 )) full.xz > node01.log.xz"
       " && rm full.xz".format(src), d)
    r = run(probe, ["diagnose", "logs", "--json", "r.json"], w, sanitized)
    if held(r, "damaged", 64 * MIB // 1024, base, sanitized):
        rep = report(os.path.join(w, "r.json"), "damaged")
        if rep:
            cuts = cuts_of(rep, "damaged")
            if len(cuts) != 2 or any(c["compressed_offset"] <= 0 or c["line"] < 1 for c in cuts):
                bad("damaged: inputs.cut does not name both files and where: {}".format(cuts))
            if r.rc != 1 or (rep["diagnosis"]["initiating"] or {}).get("ranks") != [6]:
                bad("damaged: rank 6 is not named from what decoded (exit {}): {}".format(
                    r.rc, rep["diagnosis"]["initiating"]))
            if r.out.count("\ncut: ") != 2:
                bad("damaged: the text report does not list the two cuts")
    # A gzip file damaged from its first byte: nothing of it decodes, the rest is judged, and
    # since its rank's failure could have come first nobody is named.
    with open(os.path.join(d, "node03.log.gz"), "wb") as f:
        f.write(b"\x1f\x8b\x07\x00" + b"\x5a" * 100)
    r = run(probe, ["diagnose", "logs", "--json", "r.json"], w, sanitized)
    if held(r, "damaged from byte 0", 64 * MIB // 1024, base, sanitized):
        rep = report(os.path.join(w, "r.json"), "damaged from byte 0")
        if rep and (r.rc != 2 or rep["diagnosis"]["initiating"] is not None or
                    "node03.log.gz" not in rep["diagnosis"].get("inconclusive", "")):
            bad("damaged from byte 0: the blame is not withheld naming the file (exit {}): {}".format(
                r.rc, rep["diagnosis"].get("inconclusive")))
    case_damaged_collectives(probe, w, base, sanitized)


def case_damaged_collectives(probe, w, base, sanitized):
    d = os.path.join(w, "coll")
    os.makedirs(d)
    for rank in range(4):
        text = coll_log(rank, 4, 3000).encode()
        if rank == 3:  # cut at half: rank 3's calls stop where the copy broke, not where it did
            packed = gzip.compress(text, 6)
            with open(os.path.join(d, "rank3.log.gz"), "wb") as f:
                f.write(packed[: len(packed) // 2])
        else:
            with open(os.path.join(d, "rank%d.log" % rank), "wb") as f:
                f.write(text)
    r = run(probe, ["collectives", "coll", "--json", "r.json"], w, sanitized)
    if held(r, "damaged collectives", 64 * MIB // 1024, base, sanitized):
        rep = report(os.path.join(w, "r.json"), "damaged collectives")
        if rep:
            codes = [f["code"] for f in rep["findings"]]
            if r.rc != 0 or "input-cut" not in codes or any(c.startswith("collective-m") for c in codes):
                bad("damaged collectives: exit {}, findings {} (rank 3 blamed for the cut?)".format(r.rc, codes))
            if not any("cut" in i for i in rep["inputs"]) or not cuts_of(rep, "damaged"):
                bad("damaged collectives: the JSON does not name the cut input")
    # diagnose streams the calls (evidence/coll_stream.h): the cut rank is not blamed either.
    r = run(probe, ["diagnose", "coll", "--json", "r.json"], w, sanitized)
    if held(r, "damaged diagnose of COLL logs", 64 * MIB // 1024, base, sanitized):
        rep = report(os.path.join(w, "r.json"), "damaged diagnose of COLL logs")
        if rep and any(f["code"].startswith("collective-") and 3 in f.get("ranks", []) for f in rep["findings"]):
            bad("damaged diagnose: rank 3 blamed for the calls cut from its log: {}".format(
                [f["message"] for f in rep["findings"]]))
    r = run(probe, ["collectives", "coll", "--strict", "-q"], w, sanitized)
    if held(r, "damaged collectives --strict", 64 * MIB // 1024, base, sanitized, quiet=True) and r.rc != 1:
        bad("damaged collectives: --strict does not refuse a judgement made without the cut part")


# ---- counts read from an input, and many processes ------------------------------------------

def trace(nranks):
    return "\n".join([
        '{"schema":"denpex.trace.v1","host":"nodeA","pid":100,"rank":0}',
        '{"ev":"comm","comm":"00000000000000aa","handle":"0x1","rank":0,"nranks":%d,"how":"InitRank","status":0}' % nranks,
        '{"ev":"call","comm":"00000000000000aa","seq":0,"op":"AllReduce","count":8,"dtype":7,"redop":0,'
        '"root":-1,"peer":-1,"rank":0,"nranks":%d}' % nranks]) + "\n"


def case_absent_ranks(probe, w, base, sanitized):
    for mode in ("collectives", "diagnose"):
        with open(os.path.join(w, "huge.jsonl"), "w") as f:
            f.write(trace(2147483647))
        r = run(probe, [mode, "huge.jsonl"], w, sanitized)
        if held(r, mode + " nranks 2^31-1", 64 * MIB // 1024, base, sanitized) and r.rc != 2:
            bad("{} nranks 2^31-1: exit {}, not 2 (the record is out of range, nothing else is read)".format(mode, r.rc))
    with open(os.path.join(w, "big.jsonl"), "w") as f:
        f.write(trace(4000000))
    r = run(probe, ["collectives", "big.jsonl", "--json", "c.json"], w, sanitized)
    if held(r, "collectives nranks 4,000,000", 64 * MIB // 1024, base, sanitized):
        rep = report(os.path.join(w, "c.json"), "absent_ranks")
        absent = [f for f in (rep or {}).get("findings", []) if f["code"] == "collective-ranks-absent"]
        if not absent or len(absent[0]["ranks"]) > 1024 or absent[0].get("ranks_total") != 3999999 \
                or absent[0].get("rank_ranges") != [[1, 3999999]]:
            bad("absent_ranks: 3,999,999 absent ranks not given as at most 1,024 ranks plus ranges: {}".format(
                json.dumps(absent)[:300]))
        if "3999999 ranks (1-3999999)" not in r.out:
            bad("absent_ranks: the text does not name the absent ranks as a range")
    rec = {"header": {"id": "0xabc", "rank": 0, "n_ranks": 2147483647, "nnodes": 1},
           "metadata": {"inspector_output_format_version": "v4.0", "hostname": "nodeA", "pid": 7},
           "coll_perf": {"coll": "AllReduce", "coll_sn": 1, "coll_msg_size_bytes": 8}}
    with open(os.path.join(w, "inspector.log"), "w") as f:
        f.write(json.dumps(rec) + "\n")
    r = run(probe, ["collectives", "inspector.log"], w, sanitized)
    held(r, "inspector n_ranks 2^31-1", 64 * MIB // 1024, base, sanitized)


def case_processes(probe, w, base, sanitized):
    # Under ASan (several times slower) 40,000: a cost quadratic in processes still misses 30 s.
    n = 40000 if sanitized else 120000
    with open(os.path.join(w, "procs.log"), "w") as f:
        for i in range(n):
            f.write("node%06d:%d:%d [0] NCCL INFO NCCL version 2.18.%d+cuda12.1\n" % (i, 1000 + i, 1000 + i, i % 2))
    r = run(probe, ["diagnose", "procs.log", "--json", "p.json"], w, sanitized)
    if held(r, "{:,} processes".format(n), 512 * MIB // 1024, base, sanitized):
        rep = report(os.path.join(w, "p.json"), "processes")
        if rep and not any(f["code"] == "nccl-version-mismatch" for f in rep["findings"]):
            bad("processes: the two NCCL versions are not found")


def case_event_cap(probe, w, base, sanitized):
    fx = os.path.join(FIXTURES, "oom_two_nodes")
    n1 = open(os.path.join(fx, "node01.log")).read().splitlines(True)
    n2 = open(os.path.join(fx, "node02.log")).read().splitlines(True)
    wd = [l for l in n1 if "Watchdog caught" in l]
    with open(os.path.join(w, "flood.log"), "w") as f:
        f.writelines(n1 + [wd[i % len(wd)] for i in range(20010)] + n2)
    r = run(probe, ["diagnose", "flood.log"], w, sanitized)
    if held(r, "20,010 follower lines", 256 * MIB // 1024, base, sanitized):
        started = [l for l in r.out.splitlines() if l.startswith("Started by:")]
        if not started or "rank 6" not in started[0] or "OutOfMemoryError" not in started[0]:
            bad("event_cap: the out-of-memory error after the flood is not what started it: {}".format(started))
        if "not kept:" not in r.out:
            bad("event_cap: the events not kept are not said in the text report")
    with open(os.path.join(w, "many.log"), "w") as f:
        for i in range(60000):
            f.write("[rank%d]:[E514 10:42:05.123456789 ProcessGroupNCCL.cpp:632] [Rank %d] Watchdog caught collective "
                    "operation timeout: WorkNCCL(SeqNum=1201, OpType=ALLREDUCE, NumelIn=25, NumelOut=25, "
                    "Timeout(ms)=1800000) ran for 1800043 milliseconds before timing out.\n" % (i, i))
    r = run(probe, ["diagnose", "many.log"], w, sanitized)
    if held(r, "60,000 ranks timing out", 512 * MIB // 1024, base, sanitized) and "ranks 0-59999" not in r.err + r.out:
        bad("event_cap: the 60,000 waiting ranks are not all named (ranks 0-59999)")


def case_line_breaks(probe, w, base, sanitized):
    fx = os.path.join(FIXTURES, "oom_two_nodes")
    texts = [open(os.path.join(fx, n), encoding="utf-8").read() for n in ("node01.log", "node02.log")]
    bar = "\r  3%|#         | 1/30 [00:01<00:29]\r 10%|##        | 3/30 [00:02<00:20]\r"
    shapes = {
        "lf": lambda t: t,
        "cr": lambda t: t.replace("\n", "\r"),
        "crlf": lambda t: t.replace("\n", "\r\n"),
        # A rank's bar redrawn in place, then its next log line written after the last redraw.
        "bar": lambda t: "".join(bar + l if l.startswith("[rank") else l for l in t.splitlines(True)),
    }
    verdicts = {}
    for name, shape in shapes.items():
        d = os.path.join(w, name)
        os.makedirs(d, exist_ok=True)
        for i, t in enumerate(texts):
            with open(os.path.join(d, "node0%d.log" % (i + 1)), "w", encoding="utf-8", newline="") as f:
                f.write(shape(t))
        r = run(probe, ["diagnose", name], w, sanitized)
        if held(r, "line ends " + name, 64 * MIB // 1024, base, sanitized):
            verdicts[name] = [l for l in r.out.splitlines() if l.startswith(("Started by:", "denpex-probe diagnose:"))]
    want = verdicts.get("lf")
    if not want or "rank 6 on node02" not in want[0] or "8 ranks, 2 hosts" not in want[-1]:
        bad("line_breaks: the LF original no longer names rank 6 on node02 (8 ranks, 2 hosts): {}".format(want))
    for name in ("cr", "crlf", "bar"):
        if verdicts.get(name) != want:
            bad("line_breaks: {} gives {}, the LF original {}".format(name, verdicts.get(name), want))


CASES = {
    "fr_json_gz": case_fr_json_gz,
    "ras_json": case_ras_json,
    "numbers": case_numbers,
    "zst_bomb": lambda p, w, b, s: case_bomb(p, w, b, s, "zstd"),
    "gz_bomb": lambda p, w, b, s: case_bomb(p, w, b, s, "gzip"),
    "size_limit": case_size_limit,
    "damaged": case_damaged,
    "absent_ranks": case_absent_ranks,
    "line_breaks": case_line_breaks,
    "processes": case_processes,
    "event_cap": case_event_cap,
}


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in CASES:
        print("usage: bounds.py {} PROBE SCRATCH_DIR [--sanitized]".format("|".join(CASES)))
        return 2
    case, probe, scratch = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    sanitized = "--sanitized" in sys.argv[4:]
    need("/usr/bin/time")
    w = os.path.join(scratch, "bounds_" + case)
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(w)
    base = base_rss(probe, w, sanitized)
    CASES[case](probe, w, base, sanitized)
    shutil.rmtree(w, ignore_errors=True)  # the inputs are large; nothing is kept
    print(("FAIL [bounds_{}]: {} problem(s)".format(case, len(failures))) if failures else "PASS [bounds_" + case + "]")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
