#!/usr/bin/env python3
"""Writes the pickle fixtures of tests/evidence/pickle_test.cpp into OUTDIR (committed under
tests/fixtures/evidence/pickle/): a dump-like value pickled by Python's own pickler at protocols
2 to 5, and hostile pickles made by hand, opcode by opcode. The torch-made ones come from
fr_gloo_gen.py. usage: make_pickle_fixtures.py OUTDIR
"""
import os
import pickle
import struct
import sys


def dump_like(proto=4):
    frame = {"name": "all_reduce", "filename": "/opt/torch/distributed/distributed_c10d.py", "line": 2924}
    user = {"name": "step", "filename": "/work/train.py", "line": 42}
    entries = []
    for seq in range(1, 4):
        entries.append({"record_id": seq - 1, "pg_id": 0, "process_group": ("0", "default_pg"),
                        "collective_seq_id": seq, "p2p_seq_id": 0, "op_id": seq,
                        "profiling_name": "nccl:all_reduce", "time_created_ns": 1700000000000000000 + seq,
                        "input_sizes": [[1024, 4]], "input_dtypes": ["Float"],
                        "output_sizes": [[1024, 4]], "output_dtypes": ["Float"],
                        "state": "completed" if seq < 3 else "started", "retired": seq < 3,
                        "time_discovered_started_ns": 1700000000000000100, "time_discovered_completed_ns": None,
                        "duration_ms": 1.25, "timeout_ms": 600000, "is_p2p": False,
                        "frames": [frame, user]})
    return {"version": "2.4", "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1]"}},
            "pg_status": {"0": {"last_enqueued_collective": 3, "last_started_collective": 3,
                                "last_completed_collective": 2}},
            "entries": entries, "big": -(2 ** 40), "neg": -5,
            # bytes at protocol 2 are a call of _codecs.encode, which the reader refuses
            "bytes": b"\x00\x01" if proto >= 3 else "no bytes at protocol 2"}


def binunicode(s):
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def hostile():
    marker = "/tmp/denpex-pickle-test-executed"
    return {
        # os.system("touch MARKER"): what a malicious dump would do under pickle.load.
        "global-os-system": b"\x80\x02cos\nsystem\n" + binunicode("touch " + marker) + b"\x85R.",
        "stack-global-eval": b"\x80\x04" + b"\x8c\x08builtins\x8c\x04eval\x93" + binunicode("1") + b"\x85R.",
        "rebuild-tensor": b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n)R.",
        "build-tensorlist": b"\x80\x02ctorch.jit._pickle\nbuild_tensorlist\n(]tR.",
        "newobj": b"\x80\x02ctorch.jit._pickle\nrestore_type_tag\n)\x81.",
        "build-opcode": b"\x80\x02}}b.",
        "persid": b"\x80\x02K\x01Q.",
        "deep-nesting": b"\x80\x02" + b"]" * 100000 + b"a" * 99999 + b".",
        "huge-length": b"\x80\x02X\xff\xff\xff\xff" + b"abc",
        "huge-binbytes8": b"\x80\x04\x8e" + struct.pack("<Q", 2 ** 63) + b".",
        "cycle": b"\x80\x02]q\x00h\x00a.",
        "truncated": pickle.dumps(dump_like(2), protocol=2)[:200],
        "bytes-at-protocol-2": pickle.dumps(b"\x00", protocol=2),
        "no-stop": b"\x80\x02K\x01",
        "long-binput-huge": b"\x80\x02K\x01r\xff\xff\xff\xff.",
        "binget-missing": b"\x80\x02h\x07.",
        "long1-wide": b"\x80\x02\x8a\x09" + b"\x01" * 9 + b".",
        "not-an-opcode": b"\x80\x02\xff.",
        "protocol-1": b"\x80\x01N.",
        "stack-underflow": b"\x80\x02a.",
    }, marker


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for proto in (2, 3, 4, 5):
        with open(os.path.join(out, f"python-protocol-{proto}.pkl"), "wb") as f:
            f.write(pickle.dumps(dump_like(proto), protocol=proto))
    cases, marker = hostile()
    for name, data in cases.items():
        with open(os.path.join(out, f"hostile-{name}.pkl"), "wb") as f:
            f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
