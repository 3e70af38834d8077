"""Open every large file of a grown workspace (`--grow-to`, role "bulk") with readers nobody
at Bureau wrote: numpy for .npy (also inside run archives), json + struct for .safetensors
(the format's own layout: u64 header length, JSON header, contiguous tensor data), csv,
json, sqlite3, tarfile, zipfile and gzip for the rest.

Usage: check_bulk.py <workspace> <manifest.json>
Prints a JSON summary {"checked": n, "types": [...]}; exits 1 listing every failure.
"""
import csv
import gzip
import io
import json
import sqlite3
import struct
import sys
import tarfile
import zipfile

import numpy as np


def check_npy(b):
    a = np.load(io.BytesIO(b), allow_pickle=False)
    assert a.dtype == np.float32, a.dtype
    assert a.ndim == 2 and a.shape[0] >= 1 and a.shape[1] >= 1, a.shape
    assert np.isfinite(a).all(), "non-finite values"
    assert float(a.std()) > 0, "constant array"


def check_safetensors(b):
    (n,) = struct.unpack("<Q", b[:8])
    header = json.loads(b[8 : 8 + n])
    data = len(b) - 8 - n
    spans = []
    sizes = {"F32": 4, "F16": 2, "BF16": 2, "I64": 8}
    for name, t in header.items():
        if name == "__metadata__":
            assert all(isinstance(v, str) for v in t.values()), "metadata must be str→str"
            continue
        lo, hi = t["data_offsets"]
        count = 1
        for d in t["shape"]:
            count *= d
        assert hi - lo == count * sizes[t["dtype"]], f"{name}: size does not match shape"
        spans.append((lo, hi, name))
    spans.sort()
    pos = 0
    for lo, hi, name in spans:
        assert lo == pos, f"{name}: hole or overlap at {pos}"
        pos = hi
    assert pos == data, f"tensor data {pos} != buffer {data}"
    # Read one tensor with numpy to be sure the bytes are float32 weights.
    lo, hi, name = spans[0]
    w = np.frombuffer(b[8 + n + lo : 8 + n + hi], dtype="<f4")
    assert np.isfinite(w).all(), name


def check_csv(text):
    rows = list(csv.reader(io.StringIO(text)))
    assert len(rows) >= 2, "no data rows"
    widths = {len(r) for r in rows}
    assert len(widths) == 1, f"ragged rows {widths}"


def check_jsonl(text):
    lines = text.splitlines()
    assert lines
    for l in lines:
        json.loads(l)


def check_log(text):
    lines = text.splitlines()
    assert lines
    for l in lines:
        ts, level = l.split(" ")[:2]
        assert ts.endswith("Z") and "T" in ts, l
        assert level in ("INFO", "WARN", "ERROR"), l


def check_sql(text):
    con = sqlite3.connect(":memory:")
    con.executescript(text)
    n = sum(con.execute(f"select count(*) from {t}").fetchone()[0] for t in ("orders", "order_lines"))
    assert n >= 1, "no rows"


def check_tar(b):
    with tarfile.open(fileobj=io.BytesIO(b), mode="r:") as t:
        members = t.getmembers()
        assert members
        for m in members:
            body = t.extractfile(m).read()
            if m.name.endswith(".npy"):
                check_npy(body)
            elif m.name.endswith(".jsonl"):
                check_jsonl(body.decode())
            elif m.name.endswith(".log"):
                check_log(body.decode())
            elif m.name.endswith(".yaml"):
                assert body.decode().strip()


def check_zip(b):
    with zipfile.ZipFile(io.BytesIO(b)) as z:
        assert z.testzip() is None
        names = z.namelist()
        assert names
        for n in names:
            check_csv(z.read(n).decode())


def check_gz(path, b):
    text = gzip.decompress(b).decode()
    if path.endswith(".log.gz"):
        check_log(text)
    else:
        check_csv(text)


def main():
    root, manifest_path = sys.argv[1], sys.argv[2]
    m = json.load(open(manifest_path))
    failures, checked, types = [], 0, set()
    for f in m["files"]:
        if f["role"] != "bulk":
            continue
        path = f"{root}/{f['path']}"
        t = f["type"]
        try:
            b = open(path, "rb").read()
            assert len(b) == f["size"], "size differs from the manifest"
            if t == "npy":
                check_npy(b)
            elif t == "safetensors":
                check_safetensors(b)
            elif t == "csv":
                check_csv(b.decode())
            elif t == "jsonl":
                check_jsonl(b.decode())
            elif t == "log":
                check_log(b.decode())
            elif t == "sql":
                check_sql(b.decode())
            elif t == "tar":
                check_tar(b)
            elif t == "zip":
                check_zip(b)
            elif t == "gz":
                check_gz(path, b)
            else:
                raise AssertionError(f"no check for type {t}")
            checked += 1
            types.add(t)
        except Exception as e:  # noqa: BLE001 - every failure is reported
            failures.append(f"{f['path']} ({t}): {type(e).__name__}: {e}")
    if failures:
        print("\n".join(failures), file=sys.stderr)
        sys.exit(1)
    print(json.dumps({"checked": checked, "types": sorted(types)}))


main()
