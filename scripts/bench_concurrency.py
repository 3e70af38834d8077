#!/usr/bin/env python3
"""Concurrent trials under model latency: wall time against the ideal, and memory.

Run by scripts/bench-concurrency.sh (which builds the release binaries first); see
docs/BENCHMARKS.md, "Concurrent trials under model latency".

Against the scripted model server (crates/agents/examples/scripted_model.rs: every call
answered after a fixed latency; per turn K `files_list` calls, then a text) it runs
`bureau run <suite> --agent llm:openai:scripted --epochs E --concurrency C` and reports:

- ideal wall: the run loop's own schedule (job i to the first free worker, in run order —
  costliest first) with every trial costing only its model calls: turns × (K + 1) × latency.
  With C ≥ trials this is the longest trial (3 turns × 5 calls × 1 s = 15 s for the starter
  suite).
- measured wall, and the ratio measured / ideal;
- peak memory of the whole process tree (bureau and every descendant: forked check children,
  shells), sampled from /proc every 50 ms, as the sum of PSS (proportional set size: a page
  shared by a parent and its forked child counts once in total, not once per process) and as
  the sum of RSS (counts such pages once per process — an overcount for forked children);
  plus /usr/bin/time's maximum RSS of the bureau process itself;
- peak scratch: the most the `--scratch` directory's file system held above what it held
  before the case (the trials' trees, when given a tmpfs; its pages are in no process's PSS,
  so they are counted here);
- memory per concurrent trial = (peak tree PSS + peak scratch of the case − the same of a
  1-trial run) / concurrency;
- the server's maximum number of requests in flight at once (the overlap, proven);
- whether every trial's verdicts equal those of a concurrency-1 run (verdicts.json compared
  with the epoch field dropped).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path


def tree_pids(root):
    """root and all its descendants (processes, not threads)."""
    children = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # comm may hold spaces and parentheses: the fields after the last ')'.
        rest = stat[stat.rfind(b")") + 2 :].split()
        children.setdefault(int(rest[1]), []).append(int(d))
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def memory_kb(pid):
    """(pss, rss) in kB of one process, (0, 0) when it is gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            text = f.read()
    except OSError:
        return 0, 0
    pss = re.search(r"^Pss:\s+(\d+)", text, re.M)
    rss = re.search(r"^Rss:\s+(\d+)", text, re.M)
    return (int(pss.group(1)) if pss else 0, int(rss.group(1)) if rss else 0)


class Sampler(threading.Thread):
    """Peak summed PSS / RSS / process count of the tree under `root` (excluded: root itself,
    /usr/bin/time)."""

    def __init__(self, root, scratch, interval=0.05):
        super().__init__(daemon=True)
        self.root, self.interval = root, interval
        self.peak_pss = self.peak_rss = self.peak_procs = self.peak_shm = 0
        self.scratch = scratch
        self.shm_before = used_bytes(scratch)
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            pids = [p for p in tree_pids(self.root) if p != self.root]
            pss = rss = 0
            for p in pids:
                a, b = memory_kb(p)
                pss += a
                rss += b
            self.peak_pss = max(self.peak_pss, pss)
            self.peak_rss = max(self.peak_rss, rss)
            self.peak_procs = max(self.peak_procs, len(pids))
            self.peak_shm = max(self.peak_shm, used_bytes(self.scratch) - self.shm_before)
            self.stop.wait(self.interval)


def used_bytes(path):
    """Bytes in use on the file system of `path` (0 for none: `--scratch none`)."""
    if path is None:
        return 0
    try:
        st = os.statvfs(path)
    except OSError:
        return 0
    return (st.f_blocks - st.f_bfree) * st.f_frsize


def http(url, method="GET"):
    req = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def start_server(binary, latency_ms, tool_calls):
    proc = subprocess.Popen(
        [binary, "--latency-ms", str(latency_ms), "--tool-calls", str(tool_calls)],
        stdout=subprocess.PIPE,
        text=True,
    )
    base = proc.stdout.readline().strip()
    if not base.startswith("http://"):
        proc.kill()
        sys.exit(f"the scripted model server did not print its URL (got {base!r})")
    return proc, base


def task_order(suite):
    """Task directories of the suite, in the order bureau loads them, with their turns."""
    tasks = []
    for d in sorted(Path(suite).iterdir()):
        toml = d / "task.toml"
        if toml.is_file():
            turns = len(re.findall(r"^\[\[turn\]\]", toml.read_text(), re.M))
            tasks.append((d.name, turns))
    return tasks


def ideal_wall(costs, concurrency):
    """The run loop's schedule with no overhead: each job to the first free worker."""
    free = [0.0] * min(concurrency, len(costs))
    end = 0.0
    # `bureau run` starts the costliest trials first (longest processing time first).
    for c in sorted(costs, reverse=True):
        i = min(range(len(free)), key=free.__getitem__)
        free[i] += c
        end = max(end, free[i])
    return end


def verdicts_by_task(out):
    """{task: [verdict lists of every epoch, epoch field dropped]}."""
    found = {}
    for path in sorted(Path(out, "trials").glob("*/*/*/verdicts.json")):
        task = path.parts[-4]
        entries = json.loads(path.read_text())
        for e in entries:
            e.pop("epoch", None)
        found.setdefault(task, []).append(entries)
    return found


def run_case(args, base, name, targets, epochs, concurrency, costs):
    # A fresh directory per invocation: deleting a run right before the next one starts
    # is measured by some file systems (ext4 without a journal scans past every inode
    # deleted in the last minutes when it allocates one). Earlier invocations' outputs are
    # deleted after the table is printed (`main`).
    out = Path(args.work, args.stamp, name)
    out.parent.mkdir(parents=True, exist_ok=True)
    http(base.removesuffix("/v1") + "/reset", "POST")
    env = dict(os.environ, OPENAI_BASE_URL=base, OPENAI_API_KEY="scripted-bench-key")
    timing = Path(args.work, args.stamp, name + ".time")
    cmd = [
        "/usr/bin/time", "-v", "-o", str(timing),
        args.bureau, "run", *targets,
        "--agent", "llm:openai:scripted",
        "--epochs", str(epochs),
        "--concurrency", str(concurrency),
        "--out", str(out),
        "--scratch", args.scratch,
        "--quiet",
    ]
    started = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    sampler = Sampler(proc.pid, None if args.scratch == "none" else args.scratch)
    sampler.start()
    _, err = proc.communicate()
    wall = time.monotonic() - started
    sampler.stop.set()
    sampler.join()
    if proc.returncode != 0:
        sys.exit(f"{name}: bureau run failed ({proc.returncode}):\n{err.decode()[-3000:]}")
    max_rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", timing.read_text()).group(1))
    stats = http(base.removesuffix("/v1") + "/stats")
    summary = json.loads(Path(out, "summary.json").read_text())
    trials = sum(1 for _ in Path(out, "trials").glob("*/*/*/result.json"))
    return {
        "case": name,
        "trials": trials,
        "concurrency": concurrency,
        "ideal": ideal_wall(costs, concurrency),
        "wall": wall,
        "peak_pss_mb": sampler.peak_pss / 1024,
        "peak_rss_mb": sampler.peak_rss / 1024,
        "peak_shm_mb": sampler.peak_shm / (1 << 20),
        "peak_procs": sampler.peak_procs,
        "bureau_max_rss_mb": max_rss / 1024,
        "requests": stats["requests"],
        "max_in_flight": stats["max_in_flight"],
        "out": str(out),
        "summary_trials": summary.get("trials", summary.get("total")),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bureau", required=True)
    ap.add_argument("--server", required=True)
    ap.add_argument("--suite", default="suites/starter")
    ap.add_argument("--latency-ms", type=int, default=1000)
    ap.add_argument("--tool-calls", type=int, default=4)
    ap.add_argument("--work", default="/tmp/bureau-bench-concurrency")
    ap.add_argument("--scratch", default="none", help="bureau run --scratch: where trials build their trees (a tmpfs mounted for it, say)")
    ap.add_argument("--cases", default="1,100,1000", help="concurrencies to run: 1 (one trial), 100 (104 trials), 1000 (1,001 trials)")
    ap.add_argument("--serial", action="store_true", help="also one epoch of the suite at concurrency 1 with latency (slow)")
    args = ap.parse_args()
    Path(args.work).mkdir(parents=True, exist_ok=True)
    args.stamp = time.strftime("%Y%m%d-%H%M%S")
    tasks = task_order(args.suite)
    calls = args.tool_calls + 1
    latency = args.latency_ms / 1000
    cost = {t: turns * calls * latency for t, turns in tasks}

    def costs(epochs, names=None):
        return [cost[t] for t, _ in tasks if names is None or t in names for _ in range(epochs)]

    # The reference verdicts: every task once, concurrency 1, no latency.
    fast, fast_base = start_server(args.server, 0, args.tool_calls)
    try:
        ref = run_case(args, fast_base, "reference", [args.suite], 1, 1, [0.0] * len(tasks))
    finally:
        fast.kill()
    reference = {t: v[0] for t, v in verdicts_by_task(ref["out"]).items()}
    print(f"reference (13 trials, concurrency 1, no latency): {ref['wall']:.1f} s, "
          f"{ref['wall'] / ref['trials'] * 1000:.0f} ms of Bureau per trial", flush=True)

    server, base = start_server(args.server, args.latency_ms, args.tool_calls)
    longest = max(tasks, key=lambda t: t[1])[0]
    rows = []
    try:
        wanted = args.cases.split(",")
        plan = [("c1", [f"{args.suite}/{longest}"], 1, 1, costs(1, {longest}))] if "1" in wanted else []
        if args.serial:
            plan.append(("serial", [args.suite], 1, 1, costs(1)))
        if "100" in wanted:
            plan.append(("c100", [args.suite], 8, 100, costs(8)))
        if "1000" in wanted:
            plan.append(("c1000", [args.suite], 77, 1000, costs(77)))
        for name, targets, epochs, conc, c in plan:
            print(f"{name}: {len(c)} trial(s) at concurrency {conc} ...", flush=True)
            rows.append(run_case(args, base, name, targets, epochs, conc, c))
    finally:
        server.kill()

    held = lambda r: r["peak_pss_mb"] + r["peak_shm_mb"]
    baseline = next((held(r) for r in rows if r["case"] == "c1"), None)
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    print(f"\nlatency {latency:g} s, {calls} calls per turn; load average at the end: {' '.join(load)}")
    print("| trials | concurrency | ideal | measured | ratio | peak tree PSS | peak scratch | peak tree RSS (sum) | bureau max RSS | per concurrent trial | procs | max in flight | verdicts = c1 |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    failed = False
    for r in rows:
        got = verdicts_by_task(r["out"])
        same = all(v == reference.get(t) for t, vs in got.items() for v in vs) and bool(got)
        failed |= not same
        per = "—"
        if baseline is not None and r["case"] not in ("c1", "serial"):
            per = f"{(held(r) - baseline) / r['concurrency'] * 1024:.0f} kB"
        print(
            f"| {r['trials']} | {r['concurrency']} | {r['ideal']:.1f} s | {r['wall']:.1f} s | "
            f"{r['wall'] / r['ideal']:.2f}× | {r['peak_pss_mb']:.0f} MB | {r['peak_shm_mb']:.0f} MB | {r['peak_rss_mb']:.0f} MB | "
            f"{r['bureau_max_rss_mb']:.0f} MB | {per} | {r['peak_procs']} | {r['max_in_flight']} | "
            f"{'yes' if same else 'NO'} |"
        )
    print("per concurrent trial = (peak tree PSS + peak scratch − the same of the 1-trial run) / concurrency")
    # Outputs of earlier invocations (and of the old layout, a directory per case) go now,
    # after the measurements; this invocation's stay for inspection.
    for old in Path(args.work).iterdir():
        if old.name != args.stamp:
            if old.is_dir():
                shutil.rmtree(old, ignore_errors=True)
            else:
                old.unlink(missing_ok=True)
    if failed:
        sys.exit("verdicts differ from the concurrency-1 run")


if __name__ == "__main__":
    main()
