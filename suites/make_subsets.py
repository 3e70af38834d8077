#!/usr/bin/env python3
"""Write the `lite` and `core` subsets of every bundled suite (docs/suites.md).

lite (for suites without a hand-made one): about 20% of the suite, at least 2, stratified by
category and difficulty — categories take turns (largest first), and within a category the
difficulties take turns starting from a different one per category, so every category is
covered before any gets a second task and easy/medium/hard stay mixed.

core: up to three tasks per suite (one per difficulty where the lite has it), taken from the
lite, so `bureau run suites@core` is a quick comparison across every flavour.

Run from the repository root: python3 suites/make_subsets.py
"""
import math
import pathlib
import re
import tomllib

ORDER = {"easy": 0, "medium": 1, "hard": 2}


def tasks_of(suite: pathlib.Path):
    out = []
    for d in sorted(p for p in suite.iterdir() if (p / "task.toml").is_file()):
        t = tomllib.loads((d / "task.toml").read_text())
        out.append((t["id"], t.get("category", ""), t.get("difficulty", "medium")))
    return out


def stratified(tasks, n):
    cats = {}
    for t in tasks:
        cats.setdefault(t[1], []).append(t)
    ordered = sorted(cats.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    queues = []
    for k, (_, ts) in enumerate(ordered):
        by = sorted(ts, key=lambda t: (ORDER.get(t[2], 1), t[0]))
        # rotate the difficulties: category k starts at difficulty k % 3
        groups = [[t for t in by if ORDER.get(t[2], 1) == d] for d in range(3)]
        q, start = [], k % 3
        while any(groups):
            for d in [(start + i) % 3 for i in range(3)]:
                if groups[d]:
                    q.append(groups[d].pop(0))
        queues.append(q)
    picked = []
    while len(picked) < n and any(queues):
        for q in queues:
            if q and len(picked) < n:
                picked.append(q.pop(0))
    return picked


def write_subset(text, name, ids):
    line = f'{name} = [{", ".join(chr(34) + i + chr(34) for i in ids)}]'
    if re.search(rf"(?m)^{name} = \[.*\]$", text):
        return re.sub(rf"(?m)^{name} = \[.*\]$", line, text)
    if "[subsets]" not in text:
        text = text.rstrip() + "\n\n[subsets]\n"
    return text.rstrip() + "\n" + line + "\n"


def main():
    root = pathlib.Path(__file__).resolve().parent
    for suite in sorted(p for p in root.iterdir() if (p / "suite.toml").is_file()):
        tasks = tasks_of(suite)
        if not tasks:
            continue
        toml_path = suite / "suite.toml"
        text = toml_path.read_text()
        meta = tomllib.loads(text)
        lite = meta.get("subsets", {}).get("lite")
        if lite is None:
            n = max(2, math.ceil(0.2 * len(tasks)))
            lite = [t[0] for t in stratified(tasks, n)]
            text = write_subset(text, "lite", lite)
        by_id = {t[0]: t for t in tasks}
        core, seen = [], set()
        for t in sorted((by_id[i] for i in lite if i in by_id), key=lambda t: (ORDER.get(t[2], 1), t[0])):
            if t[2] not in seen:
                seen.add(t[2])
                core.append(t[0])
        text = write_subset(text, "core", core[:3])
        toml_path.write_text(text)
        print(f"{suite.name}: {len(tasks)} tasks, lite {len(lite)}, core {core[:3]}")


if __name__ == "__main__":
    main()
