"""Read the .docx files of the office bench with python-docx, for the comparison in
docs/BENCHMARKS.md. Run `cargo bench -p bureau-formats --bench office` first (it writes the
files), then `python3 crates/formats/benches/office_python.py`.

Each file is opened and turned into the same kind of text Bureau produces (paragraphs with
their style, table cells), so both sides do comparable work."""
import glob, os, statistics, tempfile, time

import docx

d = os.path.join(tempfile.gettempdir(), "bureau-office-bench")
files = sorted(glob.glob(os.path.join(d, "*.docx")))
assert files, f"no .docx in {d}: run the cargo bench first"


def read_all():
    for f in files:
        doc = docx.Document(f)
        out = []
        for p in doc.paragraphs:
            out.append((p.style.name, p.text))
        for t in doc.tables:
            out.append([[c.text for c in r.cells] for r in t.rows])


read_all()  # warm-up
times = []
for _ in range(5):
    t = time.perf_counter()
    read_all()
    times.append(time.perf_counter() - t)
print(f"python-docx: {len(files)} .docx files, median {statistics.median(times) * 1000:.1f} ms "
      f"(min {min(times) * 1000:.1f}, max {max(times) * 1000:.1f}) over 5 runs")
