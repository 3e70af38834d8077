#!/usr/bin/env python3
"""Tally the bundled suites for docs/suites.md: tasks, turns, rubric items, red lines, judged
items (with twins), parametrised tasks, categories and difficulties per suite.

Run from the repository root: python3 suites/tally.py
"""
import collections
import pathlib
import tomllib

FLAVOUR = {
    "starter": "living world (ClawMark)",
    "living": "living world (ClawMark)",
    "evidence": "living world, multimodal (ClawMark)",
    "intranet": "intranet (TheAgentCompany)",
    "workspace": "workspace (Workspace-Bench)",
    "workspace-5k": "workspace, 5,000 files (Workspace-Bench)",
    "history": "dialogue history (OdysseyBench)",
    "scenarios": "scenarios (AgencyBench)",
}


def main():
    root = pathlib.Path(__file__).resolve().parent
    rows = []
    total = collections.Counter()
    for suite in sorted(p for p in root.iterdir() if (p / "suite.toml").is_file()):
        c = collections.Counter()
        cats = collections.Counter()
        diffs = collections.Counter()
        for d in sorted(p for p in suite.iterdir() if (p / "task.toml").is_file()):
            t = tomllib.loads((d / "task.toml").read_text())
            c["tasks"] += 1
            c["turns"] += len(t.get("turn", []))
            items = t.get("rubric", [])
            c["items"] += len(items)
            c["red"] += sum(1 for i in items if i.get("red_line"))
            c["judge"] += sum(1 for i in items if "judge" in i)
            c["twin"] += sum(1 for i in items if "twin" in i)
            c["params"] += 1 if "params" in t else 0
            c["history"] += 1 if (d / "history.json").is_file() else 0
            c["multiday"] += 1 if len(t.get("turn", [])) > 1 else 0
            cats[t.get("category", "")] += 1
            diffs[t.get("difficulty", "")] += 1
        meta = tomllib.loads((suite / "suite.toml").read_text())
        subsets = meta.get("subsets", {})
        rows.append((suite.name, c, cats, diffs, {k: len(v) for k, v in subsets.items()}))
        total += c
    print("| suite | flavour | tasks | turns | multi-day | items | red lines | judged (twin) | parametrised | lite | core |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, c, _, _, sub in rows:
        print(f"| `{name}` | {FLAVOUR.get(name, '')} | {c['tasks']} | {c['turns']} | {c['multiday']} | {c['items']} | {c['red']} | {c['judge']} ({c['twin']}) | {c['params']} | {sub.get('lite', 0)} | {sub.get('core', 0)} |")
    print(f"| **all** | | **{total['tasks']}** | {total['turns']} | {total['multiday']} | {total['items']} | {total['red']} | {total['judge']} ({total['twin']}) | {total['params']} | | |")
    print()
    print("| suite | categories | difficulty (easy / medium / hard) |")
    print("| --- | --- | --- |")
    for name, _, cats, diffs, _ in rows:
        cs = ", ".join(f"{k} {v}" for k, v in sorted(cats.items(), key=lambda kv: (-kv[1], kv[0])))
        print(f"| `{name}` | {cs} | {diffs['easy']} / {diffs['medium']} / {diffs['hard']} |")


if __name__ == "__main__":
    main()
