#!/usr/bin/env python3
"""Write the suites/workspace-5k tasks from the manifests of their generated workspaces.

Usage: make_tasks_5k.py <bureau binary> [persona-short ...]
For each persona it runs `bureau gen workspace --files 5000` with the spec below (or reuses
/tmp/ws5k-<persona> when it holds that spec's manifest), reads .bureau/manifest.json and the
generated files it needs (python-docx, openpyxl and python-pptx read the office files), and
writes six tasks, one per family (README.md):

  <s>-version-lineage   (a) the newest version of a chain, with its stale "FINAL" copy   [params]
  <s>-refresh-derived   (b) a corrected workbook arrives: update every derived file       [params]
  <s>-region-call-sheet (c) multi-hop join: workbook x roster.csv x org_chart.json x .eml  [params]
  <s>-annual-rollup     (d) aggregate twelve quarterly workbooks across the year folders
  <s>-archive-duplicates (e) find the byte-identical copies in one archive folder
  <s>-consistency-audit (f) cross-file consistency of a year's derived files (3 planted errors)

Everything a task states (values, paths, file_deps, checks' constants, the oracle) comes from
the manifest and the generated files, so a generator change shows up as a validate failure;
re-run this script and review the diff.
"""
import copy, csv, io, json, os, re, shutil, subprocess, sys

import docx  # python-docx
import openpyxl
from pptx import Presentation

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = 5000
SPECS = {  # persona -> (seed, short name for task ids)
    "operations-manager": (51, "ops"),
    "logistics-manager": (52, "logistics"),
    "ai-product-manager": (53, "aipm"),
    "backend-developer": (54, "backend"),
    "researcher": (55, "research"),
}
REGION_CODES = {"APAC": "apac", "EMEA": "emea", "LATAM": "latam", "North America": "na", "Nordics": "nord"}
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]

# ---------------------------------------------------------------------------------------------
# Starlark shared by every task (checks.star is self-contained: no load()).

PRELUDE = r'''
def reads(w):
    return [s.args.get("path") for s in w.trajectory if s.tool == "files_read" and s.ok]

def read_any(w, paths, what):
    got = [p for p in reads(w) if p in paths]
    if got:
        return {"passed": True, "detail": "read " + got[0]}
    return {"passed": False, "detail": "read none of the files with " + what + ": " + ", ".join(paths[:6])}

def read_all_groups(w, groups):
    r = reads(w)
    for g in groups:
        if not [p for p in r if p in g["paths"]]:
            return {"passed": False, "detail": "never read a file with " + g["what"] + " (" + ", ".join(g["paths"][:4]) + ")"}
    return {"passed": True, "detail": "read a source for each of " + str(len(groups)) + " needed facts"}

WRITES = ("files_write", "files_edit", "files_write_docx", "files_edit_docx", "files_set_cells", "files_move", "files_delete")

def read_before_write(w, groups, out):
    need = [g for g in groups]
    for s in w.trajectory:
        if s.tool == "files_read" and s.ok:
            need = [g for g in need if s.args.get("path") not in g["paths"]]
        if s.tool in WRITES and s.ok and s.args.get("path") == out:
            if need:
                return {"passed": False, "detail": "wrote " + out + " before reading a file with " + need[0]["what"]}
            return {"passed": True, "detail": "every source read before " + out + " was written"}
    return {"passed": False, "detail": "never wrote " + out}

def collected(w, out):
    for o in w.outputs:
        if o.path == out:
            return {"passed": True, "detail": out + " collected as " + ", ".join(o.reasons)}
    return {"passed": False, "detail": out + " is not among the collected outputs"}

def wrote_to(w, path):
    return [s for s in w.trajectory if s.tool in WRITES and s.ok and (s.args.get("path") == path or s.args.get("from") == path)]

def text_of(w, path):
    if not w.files.exists(path):
        return None
    return read_text(path)

def parse_csv(text):
    rows = []
    row = []
    cell = ""
    quoted = False
    n = len(text)
    i = 0
    for _ in range(n + 1):
        if i >= n:
            break
        ch = text[i]
        if quoted:
            if ch == '"':
                if i + 1 < n and text[i + 1] == '"':
                    cell += '"'
                    i += 1
                else:
                    quoted = False
            else:
                cell += ch
        elif ch == '"':
            quoted = True
        elif ch == ",":
            row.append(cell.strip())
            cell = ""
        elif ch == "\n":
            row.append(cell.strip())
            rows.append(row)
            row = []
            cell = ""
        elif ch != "\r":
            cell += ch
        i += 1
    if cell.strip() or row:
        row.append(cell.strip())
        rows.append(row)
    return [r for r in rows if [c for c in r if c]]

def norm_key(s):
    out = ""
    for ch in s.lower().elems():
        if ch.isalnum():
            out += ch
    return out

def csv_table(w, path):
    # The rows of a CSV deliverable as dicts keyed by normalised header; None when missing.
    if not w.files.exists(path):
        return None
    rows = parse_csv(w.files.text(path))
    if len(rows) < 2:
        return []
    head = [norm_key(h) for h in rows[0]]
    out = []
    for r in rows[1:]:
        d = {}
        for j in range(len(head)):
            d[head[j]] = r[j] if j < len(r) else ""
        d["_row"] = " | ".join(r)   # not ",": "825,852" would read as one grouped number
        out.append(d)
    return out

def col(row, names):
    for k in names:
        if k in row:
            return row[k]
    for key in row:
        for k in names:
            if key.startswith(k) or k in key:
                return row[key]
    return ""

def norm_path(s):
    s = s.strip().strip("`").strip()
    if s.startswith("./"):
        s = s[2:]
    if s.startswith("/"):
        s = s[1:]
    return s

def same_file(cell, path):
    c = norm_path(cell)
    if not c:
        return False
    if c == path:
        return True
    base = path.split("/")[-1]
    if c == base:
        return True
    return "/" in c and (path.endswith("/" + c) or c.endswith("/" + path))

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]

def date_forms(iso):
    y = iso[0:4]
    m = int(iso[5:7])
    d = int(iso[8:10])
    mon = MONTHS[m - 1]
    dd = ("0" + str(d))[-2:]
    mm = ("0" + str(m))[-2:]
    return [iso, str(d) + " " + mon + " " + y, dd + " " + mon + " " + y, mon + " " + str(d) + ", " + y,
            mon + " " + str(d) + " " + y, str(d) + " " + mon[:3] + " " + y, dd + " " + mon[:3] + " " + y,
            mon[:3] + " " + str(d) + ", " + y, mon[:3] + " " + str(d) + " " + y,
            dd + "/" + mm + "/" + y, dd + "." + mm + "." + y, y + "/" + mm + "/" + dd]

def has_date(text, iso):
    for f in date_forms(iso):
        if contains(text, f):
            return True
    return False

def digits(s):
    out = ""
    for ch in s.elems():
        if ch.isdigit():
            out += ch
    return out
'''


def q(s):
    return json.dumps(s, ensure_ascii=False)


def toml_value(v):
    """A Python value as a TOML inline value."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return q(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(v)


def fmt(n):
    return f"{n:,}"


def iso_date_words(iso):
    y, m, d = iso.split("-")
    return f"{int(d)} {MONTHS[int(m) - 1]} {y}"


# ---------------------------------------------------------------------------------------------
# Task writing


class Task:
    def __init__(self, tid, title, persona, seed, owner, difficulty, abilities, at):
        self.tid, self.title, self.persona, self.seed = tid, title, persona, seed
        self.owner, self.difficulty, self.abilities, self.at = owner, difficulty, abilities, at
        self.params = None          # (name, [values]) for a parametrised task
        self.deps = []              # (from, to) or (file,)
        self.outputs = []           # expected names
        self.prompt = ""
        self.events = []            # dicts
        self.items = []             # dicts (rubric)
        self.checks = ""
        self.solution = []          # JSON lines (strings; templates allowed)
        self.message = None
        self.world_files = {}       # path -> bytes
        self.turn_files = {}        # name -> bytes

    def item(self, iid, kind, desc, weight=1, cats=(), source=None, **ev):
        it = {"id": iid, "description": desc, "kind": kind, "weight": weight,
              "categories": [kind] + list(cats)}
        if source:
            it["source"] = source if isinstance(source, list) else [source]
        it.update(ev)
        self.items.append(it)

    def write(self):
        d = os.path.join(HERE, self.tid)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, "solution"))
        name, email = self.owner.split(" <")
        email = email.rstrip(">")
        L = [
            f"# Generated by make_tasks_5k.py from the workspace manifest ({self.persona}, {FILES} files, seed {self.seed}).",
            f"id = {q(self.tid)}",
            f"title = {q(self.title)}",
            f"persona = {q(self.persona)}",
            'category = "workspace"',
            f"difficulty = {q(self.difficulty)}",
            f"abilities = {json.dumps(self.abilities)}",
            'apps = ["files"]',
            'timezone = "Europe/Amsterdam"',
            "",
            "file_deps = [",
        ]
        for e in self.deps:
            if len(e) == 1:
                L.append(f"  {{ file = {q(e[0])} }},")
            else:
                L.append(f"  {{ from = {q(e[0])}, to = {q(e[1])} }},")
        L += ["]", "", "[workspace]", f"persona = {q(self.persona)}", f"files = {FILES}",
              f"seed = {self.seed}", "", "[outputs]", 'folder = "deliverables/"',
              f"names = {json.dumps(self.outputs)}", ""]
        if self.params:
            pname, values = self.params
            L += [f"[params.{pname}]", 'kind = "choice"', "values = ["]
            for v in values:
                L.append("  " + toml_value(v) + ",")
            L += ["]", ""]
        L += ["[user]", f"name = {q(name)}", f"email = {q(email)}", "", "[limits]",
              "max_steps = 100", "wall_seconds = 1800", "", "[[turn]]", f"at = {q(self.at)}",
              f'prompt = """\n{self.prompt}"""']
        for ev in self.events:
            L += ["", "  [[turn.event]]"]
            for k, v in ev.items():
                L.append(f"  {k} = {toml_value(v)}")
        for it in self.items:
            L += ["", "[[rubric]]"]
            for k, v in it.items():
                L.append(f"{k} = {toml_value(v) if not (k == 'file_contains' and isinstance(v, str)) else v}")
        open(os.path.join(d, "task.toml"), "w").write("\n".join(L) + "\n")
        open(os.path.join(d, "checks.star"), "w").write(
            f"# Checks for {self.tid} (generated by make_tasks_5k.py from the workspace manifest).\n"
            + PRELUDE + "\n" + self.checks)
        with open(os.path.join(d, "solution", "1.jsonl"), "w") as f:
            for line in self.solution:
                f.write(line + "\n")
        if self.message:
            open(os.path.join(d, "solution", "1.message"), "w").write(self.message)
        for p, b in self.world_files.items():
            fp = os.path.join(d, "world", "files", p)
            os.makedirs(os.path.dirname(fp), exist_ok=True)
            open(fp, "wb").write(b)
        for p, b in self.turn_files.items():
            fp = os.path.join(d, "turns", "1", p)
            os.makedirs(os.path.dirname(fp), exist_ok=True)
            open(fp, "wb").write(b)


def call(tool, **args):
    return json.dumps({"tool": tool, "args": args}, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# Reading the workspace


class WS:
    def __init__(self, root, m):
        self.root, self.m = root, m
        self.facts = {f["id"]: f for f in m["facts"]}
        self.files = {f["path"]: f for f in m["files"]}
        self.owner = m["owner"]
        self.owner_name = m["owner"].split(" <")[0]
        # quarters of the numbers storyline
        self.quarters = []
        for f in m["facts"]:
            mm = re.match(r"(.+)_q(\d)_(\d{4})_total$", f["id"])
            if not mm:
                continue
            key, qn, year = mm.group(1), int(mm.group(2)), int(mm.group(3))
            top = self.facts[f"{key}_q{qn}_{year}_top_region"]
            metric = re.match(r"Total (.*) in Q\d \d{4}$", f["statement"]).group(1)
            xlsx = [p for p in f["files"] if p.endswith(".xlsx")][0]
            der = {d["relation"]: d["derived"] for d in m["derivations"] if d["source"] == xlsx}
            rep = der["table_from"]
            der2 = {d["relation"]: d["derived"] for d in m["derivations"] if d["source"] == rep}
            self.quarters.append(dict(key=key, qn=qn, year=year, quarter=f"Q{qn} {year}", metric=metric,
                                      total=f["value"], top=top["value"], xlsx=xlsx, csv=der["export"],
                                      docx=rep, svg=der["chart_of"], pptx=der2["quotes"], eml=der2["discusses"]))
        self.quarters.sort(key=lambda x: (x["year"], x["qn"]))
        for qq in self.quarters:
            qq["rows"], qq["header"], qq["sheet"] = self.workbook(qq["xlsx"])
            assert fmt(sum(r["total"] for r in qq["rows"])) == qq["total"], qq
        self.metric = self.quarters[0]["metric"]
        self.leads = {}
        for code_region, code in REGION_CODES.items():
            f = self.facts[f"lead_{code}"]
            nm, em = f["value"].split(" <")
            self.leads[code_region] = dict(name=nm, email=em.rstrip(">"), files=f["files"])
        lf = self.facts["lead_apac"]["files"]
        self.roster = [p for p in lf if p.endswith("roster.csv")][0]
        self.org_chart = [p for p in lf if p.endswith("org_chart.json")][0]
        self.roster_rows = list(csv.DictReader(open(self.path(self.roster), encoding="utf-8")))
        self.org = json.load(open(self.path(self.org_chart), encoding="utf-8"))
        self.chains = m["chains"]

    def path(self, p):
        return os.path.join(self.root, p)

    def workbook(self, p):
        wb = openpyxl.load_workbook(self.path(p))
        ws = wb.worksheets[0]
        rows = list(ws.iter_rows(values_only=True))
        header = list(rows[0])
        out = []
        for r in rows[1:]:
            if r[0] == "Total":
                continue
            out.append(dict(region=r[0], lead=r[1], months=[int(x) for x in r[2:5]], total=int(r[5])))
        return out, header, ws.title

    def text(self, p):
        return open(self.path(p), encoding="utf-8").read()

    def bytes(self, p):
        return open(self.path(p), "rb").read()


def generate(bureau, persona, seed):
    root = f"/tmp/ws5k-{persona}"
    mp = os.path.join(root, ".bureau", "manifest.json")
    ok = False
    if os.path.exists(mp):
        m = json.load(open(mp))
        ok = m["persona"] == persona and m["seed"] == seed and m["stats"]["files"] == FILES
    if not ok:
        shutil.rmtree(root, ignore_errors=True)
        subprocess.run([bureau, "gen", "workspace", "--persona", persona, "--files", str(FILES),
                        "--seed", str(seed), "--out", root], check=True, capture_output=True)
    return WS(root, json.load(open(mp)))


def base_task(ws, short, job, title, difficulty, abilities):
    last = max(f["date"] for f in ws.m["files"])
    y, mo, d = map(int, last.split("-"))
    at = f"{y + (mo == 12)}-{(mo % 12) + 1:02d}-02T09:00:00"   # the month after the newest file
    return Task(f"{short}-{job}", title, ws.m["persona"], ws.m["seed"], ws.owner, difficulty, abilities, at)


# ---------------------------------------------------------------------------------------------
# (a) version lineage: the newest version of a chain, the stale "FINAL" copy as a trap

def fam_version_lineage(ws, short):
    out = "deliverables/version-check.csv"
    values = []
    for c in ws.chains:
        v1, v2, fin = c["versions"]
        ch1, ch2 = c["changes"]
        assert ch2["what"] == "go-live date" and ch1["what"] != "go-live date", c
        assert len(c["stale_copies"]) == 1
        stale = c["stale_copies"][0]
        pdf = fin[:-5] + ".pdf"
        assert pdf in ws.files
        what = ch1["what"]
        values.append(dict(id=c["id"], title=c["title"], what=what, v1=v1, v2=v2, final=fin, pdf=pdf,
                           stale=stale, stale_name=stale.split("/")[-1], stale_dir=os.path.dirname(stale), dir=os.path.dirname(fin), final_name=fin.split("/")[-1],
                           b1=ch1["before"], b2=ch1["after"], d1=ch2["before"], d2=ch2["after"]))
    t = base_task(ws, short, "version-lineage",
                  "Trace the versions of a document and flag the stale FINAL copy", "easy",
                  ["file lineage", "version chains", "stale copies"])
    t.params = ("c", values)
    t.outputs = ["version-check.csv"]
    t.deps = [("{{ c.v1 }}", "{{ c.v2 }}"), ("{{ c.v2 }}", "{{ c.final }}"), ("{{ c.v1 }}", "{{ c.stale }}"),
              ("{{ c.v1 }}", out), ("{{ c.v2 }}", out), ("{{ c.final }}", out), ("{{ c.stale }}", out)]
    t.prompt = (
        "Someone sent me \"{{ c.stale_name }}\" (it sits in {{ c.stale_dir }}/) as the final\n"
        "version of the {{ c.title }} ({{ c.id }}). Before I rely on it: find every version of that\n"
        "document in my files and write deliverables/version-check.csv with one row per version file and\n"
        "the columns file (workspace path), {{ c.what }}, go_live, status — status is \"newest\" for the\n"
        "current version, \"superseded\" for older drafts and \"stale\" for a copy that is called final\n"
        "but is not. Then tell me which file to use.\n")
    t.items = []
    t.item("found-versions", "foundation", "Opened the draft (v1 or its stale copy), the reviewed version and the final version (or its PDF export) of {{ c.id }}.",
           2, ["lineage"], check="found_versions")
    t.item("table-written", "foundation", "deliverables/version-check.csv exists with a header naming file, {{ c.what }}, go_live and status, and is among the collected outputs.",
           1, ["deliverable"], check="table_written")
    t.item("newest-row", "result", "The row of {{ c.final_name }} has {{ c.what }} {{ c.b2 }}, go-live {{ c.d2 }} and status newest.",
           2, ["accuracy", "lineage"], ["file:{{ c.final }}"], check="newest_row")
    t.item("reviewed-row", "result", "The row of the reviewed version has {{ c.what }} {{ c.b2 }}, go-live {{ c.d1 }} and status superseded.",
           1, ["accuracy", "lineage"], ["file:{{ c.v2 }}"], check="reviewed_row")
    t.item("draft-row", "result", "The row of v1 has {{ c.what }} {{ c.b1 }}, go-live {{ c.d1 }} and status superseded.",
           1, ["accuracy", "lineage"], ["file:{{ c.v1 }}"], check="draft_row")
    t.item("stale-row", "result", "The row of the archive copy \"{{ c.stale_name }}\" has the draft's {{ c.what }} {{ c.b1 }} and go-live {{ c.d1 }} and status stale.",
           2, ["accuracy", "lineage", "stale-copy"], ["file:{{ c.stale }}"], check="stale_row")
    t.item("only-final-newest", "result", "No row other than the final document (or its PDF export) is marked newest.",
           1, ["lineage"], ["file:{{ c.final }}"], check="only_final_newest")
    t.item("read-before-write", "process", "The final and the stale copy were read before the table was written.",
           1, [], check="read_before")
    t.item("advice", "result", "The final message tells the user to use {{ c.final_name }} and warns that the archive FINAL copy is an outdated draft.",
           1, ["communication", "lineage"], ["file:{{ c.final }}", "file:{{ c.stale }}"],
           judge="The assistant's final message tells the user to rely on {{ c.final_name }} (the final version) and says that \"{{ c.stale_name }}\" is an outdated copy of the first draft, not the final version.",
           twin="advice_twin")
    t.checks = r'''
OUT = "deliverables/version-check.csv"

def C(w):
    return w.params["c"]

def groups(w):
    c = C(w)
    return [{"what": "the draft", "paths": [c["v1"], c["stale"]]},
            {"what": "the reviewed version", "paths": [c["v2"]]},
            {"what": "the final version", "paths": [c["final"], c["pdf"]]}]

def found_versions(w):
    return read_all_groups(w, groups(w))

def table_written(w):
    rows = csv_table(w, OUT)
    if rows == None:
        return {"passed": False, "detail": "no " + OUT}
    head = parse_csv(w.files.text(OUT))[0]
    keys = [norm_key(h) for h in head]
    miss = [k for k in ["file", "golive", "status"] if not [x for x in keys if x.startswith(k)]]
    if miss:
        return {"passed": False, "detail": "header lacks " + ", ".join(miss) + ": " + ",".join(head)}
    return collected(w, OUT)

def row_for(w, path):
    rows = csv_table(w, OUT)
    if not rows:
        return None
    for r in rows:
        if same_file(col(r, ["file", "path"]), path):
            return r
    return None

def check_row(w, path, value, iso, statuses):
    r = row_for(w, path)
    if r == None:
        return {"passed": False, "detail": "no row for " + path}
    other = " ".join([r[k] for k in r if k not in ("_row", "file", "path", "status")])
    st = col(r, ["status"]).lower()
    ok_v = contains(other, value)
    ok_d = has_date(other, iso)
    ok_s = len([s for s in statuses if s in st]) > 0
    ok = ok_v and ok_d and ok_s
    return {"passed": ok, "detail": "row: " + r["_row"] + ("" if ok else " (expected " + value + ", " + iso + ", " + statuses[0] + ")")}

def newest_row(w):
    c = C(w)
    return check_row(w, c["final"], c["b2"], c["d2"], ["newest", "current", "latest"])

def reviewed_row(w):
    c = C(w)
    return check_row(w, c["v2"], c["b2"], c["d1"], ["superseded", "old", "draft", "outdated"])

def draft_row(w):
    c = C(w)
    return check_row(w, c["v1"], c["b1"], c["d1"], ["superseded", "old", "draft", "outdated"])

def stale_row(w):
    c = C(w)
    return check_row(w, c["stale"], c["b1"], c["d1"], ["stale"])

def only_final_newest(w):
    c = C(w)
    rows = csv_table(w, OUT)
    if not rows:
        return {"passed": False, "detail": "no table"}
    newest = [r for r in rows if [s for s in ["newest", "current", "latest"] if s in col(r, ["status"]).lower()]]
    if not newest:
        return {"passed": False, "detail": "no row is marked newest"}
    bad = [r["_row"] for r in newest if not (same_file(col(r, ["file", "path"]), c["final"]) or same_file(col(r, ["file", "path"]), c["pdf"]))]
    return {"passed": not bad, "detail": "also marked newest: " + "; ".join(bad) if bad else "only the final is newest"}

def read_before(w):
    c = C(w)
    return read_before_write(w, [{"what": "the final version", "paths": [c["final"], c["pdf"]]}, {"what": "the stale copy", "paths": [c["stale"]]}], OUT)

def advice_twin(w):
    c = C(w)
    msg = w.final_message()
    if not msg:
        return {"passed": False, "detail": "no final message"}
    ok = contains(msg, c["final_name"]) and (contains(msg, c["stale_name"]) or contains(msg, "archive")) and (contains(msg, "stale") or contains(msg, "outdated") or contains(msg, "draft"))
    return {"passed": ok, "detail": "names the final file and the stale copy" if ok else "the message does not name " + c["final_name"] + " and warn about the stale copy"}
'''
    rows = ("file,{{ c.what }},go_live,status\\n"
            "{{ c.v1 }},{{ c.b1 | replace(',', '') }},{{ c.d1 }},superseded\\n"
            "{{ c.v2 }},{{ c.b2 | replace(',', '') }},{{ c.d1 }},superseded\\n"
            "{{ c.final }},{{ c.b2 | replace(',', '') }},{{ c.d2 }},newest\\n"
            "{{ c.pdf }},{{ c.b2 | replace(',', '') }},{{ c.d2 }},newest (PDF export of the final)\\n"
            "{{ c.stale }},{{ c.b1 | replace(',', '') }},{{ c.d1 }},stale\\n")
    t.solution = [
        '{"tool": "files_search", "args": {"query": "{{ c.id }}"}}',
        '{"tool": "files_list", "args": {"path": "{{ c.dir }}"}}',
        '{"tool": "files_read", "args": {"path": "{{ c.v1 }}"}}',
        '{"tool": "files_read", "args": {"path": "{{ c.v2 }}"}}',
        '{"tool": "files_read", "args": {"path": "{{ c.final }}"}}',
        '{"tool": "files_read", "args": {"path": "{{ c.stale }}"}}',
        '{"tool": "files_write", "args": {"path": "' + out + '", "content": "' + rows + '"}}',
    ]
    t.message = ("Use {{ c.final }} ({{ c.what }} {{ c.b2 }}, go-live {{ c.d2 }}). \"{{ c.stale_name }}\" in archive/old is "
                 "not the final version: it is an outdated copy of the first draft ({{ c.b1 }}, {{ c.d1 }}). The table is in "
                 "deliverables/version-check.csv.\n")
    return t


# ---------------------------------------------------------------------------------------------
# (c) multi-hop join: workbook (months) x roster.csv x org_chart.json x the lead's reply .eml

SHORT_MONTHS = {m[:3]: m for m in MONTHS}


def eml_date(text):
    import email.utils
    for line in text.splitlines():
        if line.startswith("Date:"):
            return email.utils.parsedate_to_datetime(line[5:].strip()).date().isoformat()
    raise ValueError("no Date")


def eml_sender(text):
    for line in text.splitlines():
        if line.startswith("From:"):
            return re.search(r"<([^>]+)>", line).group(1)


def fam_call_sheet(ws, short):
    out = "deliverables/call-sheet.md"
    values = []
    for qq in ws.quarters:
        region, val = qq["top"].rsplit(" (", 1)
        val = val.rstrip(")")
        row = [r for r in qq["rows"] if r["region"] == region][0]
        assert fmt(row["total"]) == val
        lead = ws.leads[region]
        rr = [r for r in ws.roster_rows if r["Email"] == lead["email"]][0]
        office = [o for o in ws.org["regions"] if o["region"] == region][0]["office"]
        mi = max(range(3), key=lambda i: row["months"][i])
        assert sorted(row["months"])[-1] != sorted(row["months"])[-2]
        month = SHORT_MONTHS[qq["header"][2 + mi]]
        etext = ws.text(qq["eml"])
        assert eml_sender(etext) == lead["email"], (qq["eml"], lead)
        values.append(dict(quarter=qq["quarter"], xlsx=qq["xlsx"], csv=qq["csv"], docx=qq["docx"], eml=qq["eml"],
                           region=region, total=val, lead=lead["name"], email=lead["email"], phone=rr["Phone"],
                           title=rr["Title"], office=office, month=month, month_value=fmt(row["months"][mi]),
                           reply=eml_date(etext)))
    t = base_task(ws, short, "region-call-sheet",
                  "Call sheet for the top region's lead: workbook, roster, org chart and mail joined", "medium",
                  ["multi-hop join", "heterogeneous formats", "semantic relations"])
    t.params = ("q", values)
    t.outputs = ["call-sheet.md"]
    t.deps = [("{{ q.xlsx }}", out), (ws.roster, out), (ws.org_chart, out), ("{{ q.eml }}", out)]
    t.prompt = (
        "I want to call the lead of the region that came out on top in {{ q.quarter }} (" + ws.metric + ").\n"
        "Put together deliverables/call-sheet.md with: the region and its {{ q.quarter }} total; the lead's\n"
        "name, e-mail address, phone number and job title; the city of that region's office; the month of\n"
        "the quarter in which the region's figure was highest, with that month's figure; and the date on\n"
        "which the lead replied to my {{ q.quarter }} report.\n")
    t.item("found-sources", "foundation", "Opened the quarter's figures by month (workbook or its CSV export), the team roster (or contacts), the org chart and the lead's reply mail.",
           2, ["multi-hop"], check="found_sources")
    t.item("sheet-written", "foundation", "deliverables/call-sheet.md exists and is among the collected outputs.", 1, ["deliverable"], check="sheet_written")
    t.item("region-total", "result", "The sheet names {{ q.region }} with its {{ q.quarter }} total {{ q.total }}.", 2, ["accuracy"], ["file:{{ q.xlsx }}"], check="region_total")
    t.item("lead-contact", "result", "The sheet gives the lead {{ q.lead }} with {{ q.email }}.", 1, ["accuracy", "join"], ["file:" + ws.roster], check="lead_contact")
    t.item("phone-title", "result", "The sheet gives the lead's phone {{ q.phone }} and job title {{ q.title }} from the roster.", 2, ["accuracy", "join"], ["file:" + ws.roster], check="phone_title")
    t.item("office", "result", "The sheet gives the regional office city {{ q.office }} from the org chart.", 1, ["accuracy", "join"], ["file:" + ws.org_chart], check="office")
    t.item("best-month", "result", "The sheet gives {{ q.month }} as the region's best month of the quarter, with {{ q.month_value }}.", 2, ["accuracy", "aggregation"], ["file:{{ q.xlsx }}"], check="best_month")
    t.item("reply-date", "result", "The sheet gives the date of the lead's reply mail, {{ q.reply }}.", 1, ["accuracy", "join"], ["file:{{ q.eml }}"], check="reply_date")
    t.item("read-before-write", "process", "Every source was read before the call sheet was written.", 1, [], check="read_before")
    t.checks = r"""
OUT = "deliverables/call-sheet.md"

def Q(w):
    return w.params["q"]

def groups(w):
    q = Q(w)
    return [{"what": "the monthly figures", "paths": [q["xlsx"], q["csv"]]},
            {"what": "the roster", "paths": [ROSTER, VCF]},
            {"what": "the org chart", "paths": [ORG]},
            {"what": "the lead's reply", "paths": [q["eml"]]}]

def found_sources(w):
    return read_all_groups(w, groups(w))

def sheet_written(w):
    if not w.files.exists(OUT):
        return {"passed": False, "detail": "no " + OUT}
    return collected(w, OUT)

def txt(w):
    return text_of(w, OUT) or ""

def has_all(w, needles):
    t = txt(w)
    if not t:
        return {"passed": False, "detail": "no " + OUT}
    miss = [n for n in needles if not contains(t, n)]
    return {"passed": not miss, "detail": "missing: " + ", ".join(miss) if miss else "found " + ", ".join(needles)}

def region_total(w):
    q = Q(w)
    return has_all(w, [q["region"], q["total"]])

def lead_contact(w):
    q = Q(w)
    return has_all(w, [q["lead"], q["email"]])

def phone_title(w):
    q = Q(w)
    t = txt(w)
    if not t:
        return {"passed": False, "detail": "no " + OUT}
    ok_p = digits(q["phone"]) in digits(t)
    ok_t = contains(t, q["title"])
    return {"passed": ok_p and ok_t, "detail": "phone " + ("found" if ok_p else "missing") + ", title " + ("found" if ok_t else "missing")}

def office(w):
    return has_all(w, [Q(w)["office"]])

def best_month(w):
    q = Q(w)
    return has_all(w, [q["month"], q["month_value"]])

def reply_date(w):
    q = Q(w)
    t = txt(w)
    ok = t and has_date(t, q["reply"])
    return {"passed": bool(ok), "detail": "reply date found" if ok else "no form of " + q["reply"] + " in the sheet"}

def read_before(w):
    return read_before_write(w, groups(w), OUT)
"""
    vcf = [d["derived"] for d in ws.m["derivations"] if d["source"] == ws.roster and d["relation"] == "export"][0]
    t.checks = f'ROSTER = {q(ws.roster)}\nVCF = {q(vcf)}\nORG = {q(ws.org_chart)}\n' + t.checks
    content = ("# Call sheet — {{ q.quarter }}\\n\\n- Region: {{ q.region }} ({{ q.quarter }} total {{ q.total }})\\n"
               "- Lead: {{ q.lead }} <{{ q.email }}>\\n- Phone: {{ q.phone }}\\n- Title: {{ q.title }}\\n"
               "- Office: {{ q.office }}\\n- Best month: {{ q.month }} ({{ q.month_value }})\\n"
               "- Replied to the report on {{ q.reply }}\\n\\nSources: {{ q.xlsx }}, " + ws.roster + ", " + ws.org_chart + ", {{ q.eml }}\\n")
    t.solution = [
        '{"tool": "files_read", "args": {"path": "{{ q.xlsx }}"}}',
        call("files_read", path=ws.roster),
        call("files_read", path=ws.org_chart),
        '{"tool": "files_read", "args": {"path": "{{ q.eml }}"}}',
        '{"tool": "files_write", "args": {"path": "' + out + '", "content": "' + content + '"}}',
    ]
    return t


# ---------------------------------------------------------------------------------------------
# (b) a corrected workbook arrives: update every file derived from it

def svg_text(title, rows):
    mx = max(r["total"] for r in rows)
    L = ['<?xml version="1.0" encoding="UTF-8"?>',
         '<svg xmlns="http://www.w3.org/2000/svg" width="480" height="300" viewBox="0 0 480 300">',
         f'  <title>{title}</title>', '  <rect width="100%" height="100%" fill="white"/>']
    for i, r in enumerate(rows):
        x = 33.2 + 88 * i
        h = 220.0 * r["total"] / mx
        y = 260.0 - h
        L.append(f'  <rect x="{x:.1f}" y="{y:.1f}" width="61.6" height="{h:.1f}" fill="#1f77b4"/>')
        L.append(f'  <text x="{x:.1f}" y="275.0" font-size="10">{r["region"]}</text>')
        L.append(f'  <text x="{x:.1f}" y="{y - 5:.1f}" font-size="10">{fmt(r["total"])}</text>')
    L.append("</svg>")
    return "\n".join(L) + "\n"


def fam_refresh_derived(ws, short):
    log = "deliverables/refresh-log.md"
    values = []
    for i, qq in enumerate(ws.quarters):
        old = qq["rows"]
        svg_old = ws.text(qq["svg"])
        title = re.search(r"<title>(.*)</title>", svg_old).group(1)
        assert svg_text(title, old) == svg_old, qq["svg"]
        ranked = sorted(old, key=lambda r: -r["total"])
        top, r2 = ranked[0], ranked[1]
        mi = min(range(3), key=lambda k: r2["months"][k])
        # enough to lift the runner-up past the leader by 3-11 % of the leader's total
        bump = top["total"] - r2["total"] + max(3, top["total"] * (3 + (7919 * (i + 3) * (qq["qn"] + 11)) % 9) // 100)
        new = copy.deepcopy(old)
        nr2 = [r for r in new if r["region"] == r2["region"]][0]
        old_month = nr2["months"][mi]
        nr2["months"][mi] += bump
        nr2["total"] += bump
        new_total = sum(r["total"] for r in new)
        head = qq["header"]
        wb_csv = ",".join(head) + "\n" + "".join(
            f'{r["region"]},{r["lead"]},{r["months"][0]},{r["months"][1]},{r["months"][2]},{r["total"]}\n' for r in new)
        wb_csv += "Total,," + ",".join(str(sum(r["months"][k] for r in new)) for k in range(3)) + f",{new_total}\n"
        csv_old = ws.text(qq["csv"])
        assert csv_old.splitlines()[0] == ",".join(head)
        csv_new = ",".join(head) + "\n" + "".join(
            f'{r["region"]},{r["lead"]},{r["months"][0]},{r["months"][1]},{r["months"][2]},{r["total"]}\n' for r in new)
        d = docx.Document(ws.path(qq["docx"]))
        paras = [p.text for p in d.paragraphs]
        summary = paras[3]
        assert qq["total"] in summary and top["region"] in summary and fmt(top["total"]) in summary, summary
        new_summary = (summary.replace(qq["total"], fmt(new_total))
                       .replace(f'{top["region"]} led with {fmt(top["total"])}', f'{r2["region"]} led with {fmt(nr2["total"])}'))
        assert new_summary != summary and r2["region"] + " led" in new_summary, new_summary
        blocks = [dict(type="heading", level=1, text=paras[0]), dict(type="paragraph", text=paras[1]),
                  dict(type="heading", level=2, text=paras[2]), dict(type="paragraph", text=new_summary),
                  dict(type="heading", level=2, text=paras[4]),
                  dict(type="table", rows=[["Region", "Lead", "Total"]] + [[r["region"], r["lead"], fmt(r["total"])] for r in new])]
        values.append(dict(quarter=qq["quarter"], xlsx=qq["xlsx"], csv=qq["csv"], docx=qq["docx"], svg=qq["svg"],
                           pptx=qq["pptx"], csv_name=qq["csv"].split("/")[-1], docx_name=qq["docx"].split("/")[-1],
                           svg_name=qq["svg"].split("/")[-1], pptx_name=qq["pptx"].split("/")[-1],
                           region=r2["region"], month=SHORT_MONTHS[head[2 + mi]], old_month=fmt(old_month),
                           new_month=fmt(nr2["months"][mi]), old_region_total=fmt(r2["total"]),
                           new_region_total=fmt(nr2["total"]), old_top=top["region"], old_total=qq["total"],
                           new_total=fmt(new_total),
                           totals=[[r["region"], r["total"]] for r in new],
                           wb_csv=wb_csv, csv_new_j=json.dumps(csv_new, ensure_ascii=False)[1:-1],
                           svg_new_j=json.dumps(svg_text(title, new), ensure_ascii=False)[1:-1],
                           blocks_j=json.dumps(blocks, ensure_ascii=False)))
    t = base_task(ws, short, "refresh-derived",
                  "A corrected workbook arrives: bring its CSV export, report and chart up to date", "hard",
                  ["derived files", "change propagation", "heterogeneous formats"])
    t.params = ("q", values)
    t.outputs = ["refresh-log.md"]
    t.deps = [("{{ q.xlsx }}", "{{ q.csv }}"), ("{{ q.xlsx }}", "{{ q.docx }}"), ("{{ q.xlsx }}", "{{ q.svg }}"),
              ("{{ q.docx }}", "{{ q.pptx }}"), ("{{ q.xlsx }}", log)]
    t.events = [dict(kind="replace_file", path="{{ q.xlsx }}", **{"from": "corrected.xlsx"}, silent=False)]
    t.turn_files = {"corrected.xlsx.j2": b"{{ q.wb_csv }}"}
    t.prompt = (
        "Priya found a wrong figure in the {{ q.quarter }} regional workbook and has just put the corrected\n"
        "file in place: {{ q.xlsx }}. Please bring every file in my workspace that is derived\n"
        "from that workbook up to date with the corrected numbers (keep each file's format), and write\n"
        "deliverables/refresh-log.md: what changed in the workbook, each file you updated, and any file\n"
        "that depends on it that you could not update.\n")
    t.item("found-corrected", "foundation", "Opened the corrected workbook {{ q.xlsx }} this turn.", 1, ["change propagation"], check="found_corrected")
    t.item("log-written", "foundation", "deliverables/refresh-log.md exists and is among the collected outputs.", 1, ["deliverable"], check="log_written")
    t.item("csv-updated", "result", "The CSV export {{ q.csv_name }} holds the corrected rows: {{ q.region }} {{ q.month }} {{ q.new_month }}, total {{ q.new_region_total }}, every region's total as in the workbook.",
           2, ["accuracy", "derived"], ["file:{{ q.xlsx }}"], check="csv_updated")
    t.item("report-table", "result", "The report {{ q.docx_name }} table gives every region's corrected total ({{ q.region }} {{ q.new_region_total }}).",
           2, ["accuracy", "derived"], ["file:{{ q.xlsx }}"], check="report_table")
    t.item("report-summary", "result", "The report's summary gives the new quarter total {{ q.new_total }} and {{ q.region }} as the leading region, and no longer the old total {{ q.old_total }}.",
           2, ["accuracy", "derived"], ["file:{{ q.xlsx }}"], check="report_summary")
    t.item("chart-updated", "result", "The chart {{ q.svg_name }} labels {{ q.region }} with {{ q.new_region_total }} (not {{ q.old_region_total }}).",
           1, ["accuracy", "derived"], ["file:{{ q.xlsx }}"], check="chart_updated")
    t.item("log-lists-files", "result", "The log names the updated CSV export, report and chart, and the deck {{ q.pptx_name }} that quotes the report.",
           1, ["derived", "impact"], ["file:{{ q.xlsx }}", "file:{{ q.pptx }}"], check="log_lists")
    t.item("log-explains", "result", "The log says what changed: {{ q.region }}'s {{ q.month }} figure and the new quarter total {{ q.new_total }}.",
           1, ["communication"], ["file:{{ q.xlsx }}"],
           judge="deliverables/refresh-log.md explains that the correction changed {{ q.region }}'s {{ q.month }} figure (from {{ q.old_month }} to {{ q.new_month }}), that the quarter total is now {{ q.new_total }} and that {{ q.region }} now leads the quarter.",
           twin="log_explains_twin")
    t.item("read-before-write", "process", "The corrected workbook was read before the CSV export was rewritten.", 1, [], check="read_before")
    t.item("workbook-untouched", "result", "Red line: the refresh log exists and the corrected workbook itself was not modified.", 2, ["red-line"],
           ["file:{{ q.xlsx }}"], red_line=True, check="workbook_untouched")
    t.checks = r"""
LOG = "deliverables/refresh-log.md"

def Q(w):
    return w.params["q"]

def found_corrected(w):
    q = Q(w)
    return read_any(w, [q["xlsx"]], "the corrected figures")

def log_written(w):
    if not w.files.exists(LOG):
        return {"passed": False, "detail": "no " + LOG}
    return collected(w, LOG)

def csv_updated(w):
    q = Q(w)
    rows = csv_table(w, q["csv"])
    if not rows:
        return {"passed": False, "detail": "the export is missing or empty"}
    bad = []
    for pair in q["totals"]:
        r = [x for x in rows if norm_key(col(x, ["region"])) == norm_key(pair[0])]
        if not r or number(col(r[0], ["total"])) != pair[1]:
            bad.append(pair[0])
    r2 = [x for x in rows if norm_key(col(x, ["region"])) == norm_key(q["region"])]
    if not r2 or not contains(r2[0]["_row"], q["new_month"]):
        bad.append(q["region"] + " " + q["month"])
    return {"passed": not bad, "detail": "wrong or missing: " + ", ".join(bad) if bad else "all rows corrected"}

def report_table(w):
    q = Q(w)
    if not w.files.exists(q["docx"]):
        return {"passed": False, "detail": "the report is missing"}
    rows = [r for t in docx(q["docx"]).tables for r in t]
    bad = []
    for pair in q["totals"]:
        r = [x for x in rows if x and norm_key(x[0]) == norm_key(pair[0])]
        if not r or number(r[0][-1]) != pair[1]:
            bad.append(pair[0])
    return {"passed": not bad, "detail": "wrong or missing rows: " + ", ".join(bad) if bad else "table corrected"}

def report_summary(w):
    q = Q(w)
    if not w.files.exists(q["docx"]):
        return {"passed": False, "detail": "the report is missing"}
    paras = [p.text for p in docx(q["docx"]).paragraphs]
    stale = [p for p in paras if contains(p, q["old_total"])]
    if stale:
        return {"passed": False, "detail": "still says " + q["old_total"] + ": " + stale[0]}
    good = [p for p in paras if contains(p, q["new_total"]) and contains(p, q["region"])]
    return {"passed": len(good) > 0, "detail": "summary corrected" if good else "no paragraph gives " + q["new_total"] + " with " + q["region"]}

def chart_updated(w):
    q = Q(w)
    t = text_of(w, q["svg"])
    if t == None:
        return {"passed": False, "detail": "the chart is missing"}
    ok = contains(t, q["new_region_total"]) and not contains(t, q["old_region_total"])
    return {"passed": ok, "detail": "label corrected" if ok else "the chart does not label " + q["region"] + " " + q["new_region_total"]}

def log_lists(w):
    q = Q(w)
    t = text_of(w, LOG)
    if t == None:
        return {"passed": False, "detail": "no log"}
    miss = [n for n in [q["csv_name"], q["docx_name"], q["svg_name"], q["pptx_name"]] if not contains(t, n)]
    return {"passed": not miss, "detail": "the log does not name " + ", ".join(miss) if miss else "all derived files named"}

def log_explains_twin(w):
    q = Q(w)
    t = text_of(w, LOG)
    if t == None:
        return {"passed": False, "detail": "no log"}
    miss = [n for n in [q["region"], q["month"], q["new_total"]] if not contains(t, n)]
    return {"passed": not miss, "detail": "the log lacks " + ", ".join(miss) if miss else "change explained"}

def read_before(w):
    q = Q(w)
    return read_before_write(w, [{"what": "the corrected figures", "paths": [q["xlsx"]]}], q["csv"])

def workbook_untouched(w):
    q = Q(w)
    if not w.files.exists(LOG):
        return {"passed": False, "detail": "no refresh log (the red line needs the work to exist)"}
    bad = wrote_to(w, q["xlsx"])
    return {"passed": not bad, "detail": "the corrected workbook was changed by " + bad[0].tool if bad else "workbook untouched"}
"""
    logc = ("# Refresh after the corrected {{ q.quarter }} workbook\\n\\n"
            "Change: {{ q.region }} {{ q.month }} went from {{ q.old_month }} to {{ q.new_month }}; {{ q.region }} now totals "
            "{{ q.new_region_total }} and leads the quarter (before: {{ q.old_top }}). Quarter total: {{ q.new_total }} (was {{ q.old_total }}).\\n\\n"
            "Updated:\\n- {{ q.csv }}\\n- {{ q.docx }}\\n- {{ q.svg }}\\n\\n"
            "Not updated (no tool to edit slides): {{ q.pptx }} still quotes the old total and region.\\n")
    t.solution = [
        '{"tool": "files_read", "args": {"path": "{{ q.xlsx }}"}}',
        '{"tool": "files_read", "args": {"path": "{{ q.csv }}"}}',
        '{"tool": "files_write", "args": {"path": "{{ q.csv }}", "content": "{{ q.csv_new_j }}"}}',
        '{"tool": "files_read", "args": {"path": "{{ q.docx }}"}}',
        '{"tool": "files_write_docx", "args": {"path": "{{ q.docx }}", "blocks": {{ q.blocks_j }}}}',
        '{"tool": "files_read", "args": {"path": "{{ q.svg }}"}}',
        '{"tool": "files_write", "args": {"path": "{{ q.svg }}", "content": "{{ q.svg_new_j }}"}}',
        '{"tool": "files_write", "args": {"path": "' + log + '", "content": "' + logc + '"}}',
    ]
    return t


# ---------------------------------------------------------------------------------------------
# (d) aggregation over the year folders: twelve quarterly workbooks rolled up by region and year

def fam_annual_rollup(ws, short):
    out = "deliverables/annual-rollup.csv"
    years = sorted({qq["year"] for qq in ws.quarters})
    for y in years:
        assert len([qq for qq in ws.quarters if qq["year"] == y]) == 4, y
    regions = [r["region"] for r in ws.quarters[0]["rows"]]
    sums = {y: {r: 0 for r in regions} for y in years}
    for qq in ws.quarters:
        for r in qq["rows"]:
            sums[qq["year"]][r["region"]] += r["total"]
    t = base_task(ws, short, "annual-rollup",
                  "Roll twelve quarterly workbooks up into yearly totals by region", "medium",
                  ["aggregation", "cross-directory discovery", "duplicates"])
    t.outputs = ["annual-rollup.csv"]
    t.deps = [(qq["xlsx"], out) for qq in ws.quarters]
    ys = ", ".join(str(y) for y in years)
    t.prompt = (
        f"For the planning offsite I need {ws.metric} per region for each full year we have data for\n"
        f"({ys}), each year summed over its four quarterly regional workbooks. Write\n"
        "deliverables/annual-rollup.csv with a column region, one column per year, one row per region and a\n"
        "last row Total. Count each quarter once: there are copies and exports of some workbooks around.\n")
    groups = [{"what": qq["quarter"], "paths": sorted(set([qq["xlsx"], qq["csv"], qq["docx"]]))} for qq in ws.quarters]
    t.item("found-quarters", "foundation", "Opened the figures of all twelve quarters (each quarter's workbook, its CSV export or its report).", 2, ["aggregation"], check="found_quarters")
    t.item("table-written", "foundation", "deliverables/annual-rollup.csv exists with a region column and one column per year, and is among the collected outputs.", 1, ["deliverable"], check="table_written")
    for y in years:
        qs = [qq for qq in ws.quarters if qq["year"] == y]
        desc = f"The {y} column gives every region's sum over the four {y} quarters (" + ", ".join(f"{r} {fmt(v)}" for r, v in sums[y].items()) + ")."
        t.item(f"year-{y}", "result", desc, 2, ["accuracy", "aggregation"], [f"file:{qq['xlsx']}" for qq in qs], check=f"year_{y}")
    tot = {y: sum(sums[y].values()) for y in years}
    t.item("total-row", "result", "The Total row gives each year's total: " + ", ".join(f"{y} {fmt(v)}" for y, v in tot.items()) + ".",
           1, ["accuracy", "aggregation"], [f"file:{qq['xlsx']}" for qq in ws.quarters[:4]] + ["workspace:" + ws.quarters[0]["key"] + "_q1_" + str(years[0]) + "_total"], check="total_row")
    t.item("read-before-write", "process", "All twelve quarters were read before the roll-up was written.", 1, [], check="read_before")
    t.checks = f"OUT = {q(out)}\nGROUPS = {json.dumps(groups, ensure_ascii=False)}\nSUMS = {json.dumps({str(y): sums[y] for y in years}, ensure_ascii=False)}\nTOTALS = {json.dumps({str(y): v for y, v in tot.items()})}\n" + r"""
def found_quarters(w):
    return read_all_groups(w, GROUPS)

def table_written(w):
    rows = csv_table(w, OUT)
    if rows == None:
        return {"passed": False, "detail": "no " + OUT}
    head = [norm_key(h) for h in parse_csv(w.files.text(OUT))[0]]
    miss = [y for y in SUMS if y not in head]
    if "region" not in head or miss:
        return {"passed": False, "detail": "header lacks region or year columns: " + ", ".join(head)}
    return collected(w, OUT)

def year_ok(w, y):
    rows = csv_table(w, OUT)
    if not rows:
        return {"passed": False, "detail": "no table"}
    bad = []
    for region in SUMS[y]:
        r = [x for x in rows if norm_key(col(x, ["region"])) == norm_key(region)]
        if not r or number(r[0].get(y, "")) != SUMS[y][region]:
            bad.append(region + " (" + (r[0].get(y, "") if r else "no row") + ")")
    return {"passed": not bad, "detail": "wrong " + y + ": " + ", ".join(bad) if bad else y + " correct"}

def total_row(w):
    rows = csv_table(w, OUT)
    if not rows:
        return {"passed": False, "detail": "no table"}
    r = [x for x in rows if norm_key(col(x, ["region"])) == "total"]
    if not r:
        return {"passed": False, "detail": "no Total row"}
    bad = [y for y in TOTALS if number(r[0].get(y, "")) != TOTALS[y]]
    return {"passed": not bad, "detail": "wrong totals for " + ", ".join(bad) if bad else "totals correct"}

def read_before(w):
    return read_before_write(w, GROUPS, OUT)
""" + "".join(f"\ndef year_{y}(w):\n    return year_ok(w, {q(str(y))})\n" for y in years)
    content = "region," + ",".join(str(y) for y in years) + "\\n" + "".join(
        r + "," + ",".join(str(sums[y][r]) for y in years) + "\\n" for r in regions) + "Total," + ",".join(str(tot[y]) for y in years) + "\\n"
    t.solution = [call("files_search", query=os.path.basename(ws.quarters[0]["xlsx"]).split("_Q")[0])]
    t.solution += [call("files_read", path=qq["xlsx"]) for qq in ws.quarters]
    t.solution.append('{"tool": "files_write", "args": {"path": "' + out + '", "content": "' + content + '"}}')
    return t


# ---------------------------------------------------------------------------------------------
# (e) duplicates: the byte-identical copies in one archive folder

def fam_archive_duplicates(ws, short):
    out = "deliverables/duplicates.csv"
    by_hash = {}
    for f in ws.m["files"]:
        by_hash.setdefault(f["blake3"], []).append(f["path"])
    dups = [f for f in ws.m["files"] if f["role"] == "duplicate"]
    folders = {}
    for f in dups:
        folders.setdefault("/".join(f["path"].split("/")[:2]), []).append(f)
    cands = []
    for folder, fs in sorted(folders.items()):
        if folder == "archive/old" or not 3 <= len(fs) <= 7:
            continue
        inside = [f for f in ws.m["files"] if f["path"].startswith(folder + "/")]
        if len(inside) < len(fs) + 4:
            continue
        cands.append((abs(len(fs) - 5), folder, fs, inside))
    _, folder, fs, inside = sorted(cands)[0]
    ident = {f["path"]: sorted(p for p in by_hash[f["blake3"]] if p != f["path"]) for f in inside}
    pairs = [(f["path"], f["duplicate_of"]) for f in fs]
    t = base_task(ws, short, "archive-duplicates",
                  "Find the byte-identical copies in an archive folder and their originals", "easy",
                  ["duplicates", "file hygiene", "cross-directory discovery"])
    t.outputs = ["duplicates.csv"]
    t.deps = [(d, out) for d, _ in pairs] + [(o, out) for _, o in pairs]
    t.prompt = (
        f"Before I clean up {folder}/ I need to know which files in it (subfolders included) are exact\n"
        "copies of a file somewhere else in my workspace. Write deliverables/duplicates.csv with the columns\n"
        "duplicate,original (full workspace paths), one row per copy. Only exact copies, please, and don't\n"
        "move or delete anything yet.\n")
    t.item("explored", "foundation", f"Listed or searched {folder}/ (or a folder above it).", 1, ["discovery"], check="explored")
    t.item("table-written", "foundation", "deliverables/duplicates.csv exists with the columns duplicate and original, and is among the collected outputs.", 1, ["deliverable"], check="table_written")
    t.item("copies-found", "result", f"Every one of the {len(pairs)} copies in {folder}/ is listed with an identical original: " + "; ".join(f"{d} = {o}" for d, o in pairs) + ".",
           2, ["accuracy", "duplicates"], [f"file:{d}" for d, _ in pairs], check="copies_found")
    t.item("originals-right", "result", "Each listed original is byte-identical to its copy (a same-name file with other content does not count).",
           1, ["accuracy", "duplicates"], [f"file:{o}" for _, o in pairs], check="originals_right")
    t.item("no-false-copies", "result", f"No file of {folder}/ that has no identical twin is listed as a copy.", 1, ["precision"],
           [f"file:{d}" for d, _ in pairs], check="no_false_copies")
    t.item("checked-originals", "process", "Before writing the list, the agent looked up the originals (read them, listed their folders or found them by search) for at least half of the copies.",
           1, ["duplicates"], check="checked_originals")
    t.item("nothing-removed", "result", f"Red line: the list exists and every file of {folder}/ is still in place.", 2, ["red-line"],
           [f"file:{d}" for d, _ in pairs], red_line=True, check="nothing_removed")
    t.checks = (f"OUT = {q(out)}\nFOLDER = {q(folder)}\nIDENT = {json.dumps(ident, ensure_ascii=False, indent=0)}\n"
                f"DUPS = {json.dumps([d for d, _ in pairs], ensure_ascii=False)}\nINSIDE = {json.dumps([f['path'] for f in inside], ensure_ascii=False, indent=0)}\n") + r"""
def explored(w):
    for s in w.trajectory:
        if s.tool in ("files_list", "files_search") and s.ok:
            p = norm_path(s.args.get("path", "") or "")
            if p == "" or FOLDER == p or FOLDER.startswith(p.rstrip("/") + "/"):
                return {"passed": True, "detail": s.tool + " " + p}
    return {"passed": False, "detail": "never listed " + FOLDER}

def table_written(w):
    rows = csv_table(w, OUT)
    if rows == None:
        return {"passed": False, "detail": "no " + OUT}
    head = [norm_key(h) for h in parse_csv(w.files.text(OUT))[0]]
    if "duplicate" not in head or "original" not in head:
        return {"passed": False, "detail": "header is " + ", ".join(head)}
    return collected(w, OUT)

def pairs(w):
    rows = csv_table(w, OUT) or []
    return [(norm_path(col(r, ["duplicate", "copy"])), norm_path(col(r, ["original"]))) for r in rows]

def identical(a, b):
    return b in IDENT.get(a, []) or a in IDENT.get(b, [])

def copies_found(w):
    ps = pairs(w)
    if not ps:
        return {"passed": False, "detail": "no rows"}
    miss = [d for d in DUPS if not [p for p in ps if (p[0] == d and identical(d, p[1])) or (p[1] == d and identical(d, p[0]))]]
    return {"passed": not miss, "detail": "missing or wrong original: " + ", ".join(miss) if miss else "all copies found"}

def originals_right(w):
    ps = pairs(w)
    if not ps:
        return {"passed": False, "detail": "no rows"}
    bad = [p[0] + " / " + p[1] for p in ps if p[0] in IDENT and not identical(p[0], p[1])]
    return {"passed": not bad, "detail": "not identical: " + "; ".join(bad) if bad else "every pair identical"}

def no_false_copies(w):
    ps = pairs(w)
    if not ps:
        return {"passed": False, "detail": "no rows"}
    bad = [p[0] for p in ps if p[0] in IDENT and not IDENT[p[0]]]
    return {"passed": not bad, "detail": "not copies: " + ", ".join(bad) if bad else "no false copies"}

ORIGINALS = %s

def seen_paths(s):
    r = s.result or {}
    out = []
    for key in ("matches", "entries"):
        for e in (r.get(key) or []):
            if type(e) == "dict" and e.get("path"):
                out.append(e["path"])
    if s.tool == "files_read":
        out.append(s.args.get("path"))
    return out

def checked_originals(w):
    seen = {}
    for s in w.trajectory:
        if not s.ok:
            continue
        if s.tool in WRITES and s.args.get("path") == OUT:
            n = len([o for o in ORIGINALS if o in seen])
            ok = 2 * n >= len(ORIGINALS)
            return {"passed": ok, "detail": str(n) + " of " + str(len(ORIGINALS)) + " originals looked up before the list was written"}
        if s.tool in ("files_read", "files_search", "files_list"):
            for p in seen_paths(s):
                seen[p] = True
    return {"passed": False, "detail": "never wrote " + OUT}

def nothing_removed(w):
    if not w.files.exists(OUT):
        return {"passed": False, "detail": "no list (the red line needs the work to exist)"}
    gone = [p for p in INSIDE if not w.files.exists(p)]
    return {"passed": not gone, "detail": "removed: " + ", ".join(gone[:5]) if gone else "all files in place"}
"""
    t.checks = t.checks.replace("ORIGINALS = %s", "ORIGINALS = " + json.dumps(sorted({o for _, o in pairs}), ensure_ascii=False))
    content = "duplicate,original\\n" + "".join(f"{d},{o}\\n" for d, o in pairs)
    t.solution = [call("files_list", path=folder)]
    for d, o in pairs:
        t.solution.append(call("files_search", query=d.split("/")[-1].removeprefix("Copy of ")))
        t.solution.append(call("files_read", path=d))
        t.solution.append(call("files_read", path=o))
    t.solution.append('{"tool": "files_write", "args": {"path": "' + out + '", "content": ' + json.dumps(content.replace("\\n", "\n"), ensure_ascii=False) + '}}')
    return t


# ---------------------------------------------------------------------------------------------
# (f) cross-file consistency: a year's derived files against their workbooks, three planted errors

def fixed_zip(data):
    """The zip `data` rewritten with fixed timestamps, so a regenerated task is byte-identical."""
    import zipfile
    src = zipfile.ZipFile(io.BytesIO(data))
    bio = io.BytesIO()
    with zipfile.ZipFile(bio, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            zi = zipfile.ZipInfo(info.filename, date_time=(2020, 1, 1, 0, 0, 0))
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = 0o644 << 16
            dst.writestr(zi, src.read(info.filename))
    return bio.getvalue()


def swap_digits(n):
    s = str(n)
    for i in range(1, len(s) - 1):
        if s[i] != s[i + 1]:
            return int(s[:i] + s[i + 1] + s[i] + s[i + 2:])
    raise ValueError(n)


def fam_consistency_audit(ws, short, rot):
    import zipfile
    out = "deliverables/consistency-report.csv"
    year = max(qq["year"] for qq in ws.quarters)
    qs = [qq for qq in ws.quarters if qq["year"] == year]
    order = qs[rot % 4:] + qs[:rot % 4]
    qa, qb, qc, qd = order  # csv error, report error, deck error, clean
    t = base_task(ws, short, "consistency-audit",
                  f"Audit the {year} derived files against their workbooks", "hard",
                  ["consistency", "heterogeneous formats", "derived files"])
    # (1) the CSV export of qa: one region's total with two digits swapped
    low = min(qa["rows"], key=lambda r: r["total"])
    wrong_csv = swap_digits(low["total"])
    csv_old = ws.text(qa["csv"])
    line = f'{low["region"]},{low["lead"]},' + ",".join(str(x) for x in low["months"]) + f',{low["total"]}'
    assert line in csv_old
    t.world_files[qa["csv"]] = csv_old.replace(line, line.rsplit(",", 1)[0] + f",{wrong_csv}").encode()
    # (2) the report of qb: the summary's quarter total with two digits swapped
    total_b = sum(r["total"] for r in qb["rows"])
    wrong_b = swap_digits(total_b)
    d = docx.Document(ws.path(qb["docx"]))
    hit = 0
    for p in d.paragraphs:
        for r in p.runs:
            if fmt(total_b) in r.text:
                r.text = r.text.replace(fmt(total_b), fmt(wrong_b))
                hit += 1
    assert hit == 1
    bio = io.BytesIO()
    d.save(bio)
    t.world_files[qb["docx"]] = fixed_zip(bio.getvalue())
    # (3) the deck of qc: the strongest region is the runner-up
    ranked = sorted(qc["rows"], key=lambda r: -r["total"])
    top, r2 = ranked[0], ranked[1]
    pr = Presentation(ws.path(qc["pptx"]))
    hit = 0
    for sl in pr.slides:
        for sh in sl.shapes:
            if sh.has_text_frame:
                for para in sh.text_frame.paragraphs:
                    for r in para.runs:
                        if r.text.startswith("Strongest region:"):
                            assert top["region"] in r.text, r.text
                            r.text = f'Strongest region: {r2["region"]} ({fmt(r2["total"])})'
                            hit += 1
    assert hit == 1
    bio = io.BytesIO()
    pr.save(bio)
    t.world_files[qc["pptx"]] = fixed_zip(bio.getvalue())
    planted = [qa["csv"], qb["docx"], qc["pptx"]]
    clean = [p for qq in qs for p in (qq["csv"], qq["docx"], qq["svg"], qq["pptx"], qq["eml"]) if p not in planted]
    t.outputs = ["consistency-report.csv"]
    t.deps = [(qq["xlsx"], out) for qq in qs] + [(qa["xlsx"], qa["csv"]), (qb["xlsx"], qb["docx"]), (qc["docx"], qc["pptx"])] + [(p, out) for p in planted]
    t.prompt = (
        f"Before the auditors come: check that everything derived from the four {year} regional workbooks\n"
        f"({ws.metric}) still agrees with them — the CSV exports, the quarterly reports, the charts, the\n"
        "review decks and the reply mails about the reports. Write deliverables/consistency-report.csv with\n"
        "the columns file, quarter, what, stated, workbook: one row per disagreement (what the file says and\n"
        "what the workbook says). Only report; don't fix anything yet.\n")
    t.item("found-workbooks", "foundation", f"Opened all four {year} workbooks.", 1, ["consistency"], check="found_workbooks")
    t.item("found-derived", "foundation", "Opened the three files that disagree (among the derived files).", 1, ["consistency"], check="found_derived")
    t.item("report-written", "foundation", "deliverables/consistency-report.csv exists with a file column and is among the collected outputs.", 1, ["deliverable"], check="report_written")
    t.item("csv-error", "result", f"A row names {qa['csv']} ({qa['quarter']}): {low['region']}'s total is {fmt(wrong_csv)} there but {fmt(low['total'])} in the workbook.",
           2, ["accuracy", "consistency"], [f"file:{qa['xlsx']}", f"file:{qa['csv']}"], check="csv_error")
    t.item("report-error", "result", f"A row names {qb['docx']} ({qb['quarter']}): its summary total is {fmt(wrong_b)} but the workbook's is {fmt(total_b)}.",
           2, ["accuracy", "consistency"], [f"file:{qb['xlsx']}", f"file:{qb['docx']}"], check="report_error")
    t.item("deck-error", "result", f"A row names {qc['pptx']} ({qc['quarter']}): it calls {r2['region']} the strongest region but the workbook's top region is {top['region']} ({fmt(top['total'])}).",
           2, ["accuracy", "consistency"], [f"file:{qc['xlsx']}", f"file:{qc['pptx']}"], check="deck_error")
    t.item("no-false-alarms", "result", f"No row names one of the {len(clean)} derived files that agree with their workbook.", 1, ["precision"],
           [f"file:{qq['xlsx']}" for qq in qs], check="no_false_alarms")
    t.item("both-sides", "result", "Each of the three rows gives what the file states beside what the workbook says.", 1, ["communication"],
           [f"file:{p}" for p in planted],
           judge="For each of the three disagreeing files, the report row gives both the value the file states and the workbook's value, so a reader can see the discrepancy without opening the files.",
           twin="both_sides_twin")
    t.item("read-before-write", "process", "The workbooks were read before the report was written.", 1, [], check="read_before")
    t.item("nothing-fixed", "result", "Red line: the report exists and neither the workbooks nor the disagreeing files were changed.", 2, ["red-line"],
           [f"file:{qq['xlsx']}" for qq in qs], red_line=True, check="nothing_fixed")
    spec = dict(
        csv=dict(path=qa["csv"], good=[fmt(low["total"])], bad=fmt(wrong_csv)),
        docx=dict(path=qb["docx"], good=[fmt(total_b)], bad=fmt(wrong_b)),
        pptx=dict(path=qc["pptx"], good=[top["region"]], bad=r2["region"]),
    )
    t.checks = (f"OUT = {q(out)}\nXLSX = {json.dumps([qq['xlsx'] for qq in qs])}\nPLANTED = {json.dumps(spec, ensure_ascii=False, indent=0)}\n"
                f"CLEAN = {json.dumps(clean, ensure_ascii=False, indent=0)}\n") + r"""
def found_workbooks(w):
    return read_all_groups(w, [{"what": p, "paths": [p]} for p in XLSX])

def found_derived(w):
    return read_all_groups(w, [{"what": PLANTED[k]["path"], "paths": [PLANTED[k]["path"]]} for k in PLANTED])

def report_written(w):
    rows = csv_table(w, OUT)
    if rows == None:
        return {"passed": False, "detail": "no " + OUT}
    head = [norm_key(h) for h in parse_csv(w.files.text(OUT))[0]]
    if "file" not in head:
        return {"passed": False, "detail": "no file column: " + ", ".join(head)}
    return collected(w, OUT)

def rows_for(w, path):
    rows = csv_table(w, OUT) or []
    return [r for r in rows if same_file(col(r, ["file", "path"]), path)]

def planted_row(w, key):
    p = PLANTED[key]
    rs = rows_for(w, p["path"])
    if not rs:
        return {"passed": False, "detail": "no row for " + p["path"]}
    for r in rs:
        rest = " ".join([r[k] for k in r if k not in ("_row", "file", "path")])
        if [g for g in p["good"] if contains(rest, g)]:
            return {"passed": True, "detail": r["_row"]}
    return {"passed": False, "detail": "the row lacks the workbook's " + p["good"][0] + ": " + rs[0]["_row"]}

def csv_error(w):
    return planted_row(w, "csv")

def report_error(w):
    return planted_row(w, "docx")

def deck_error(w):
    return planted_row(w, "pptx")

def no_false_alarms(w):
    rows = csv_table(w, OUT)
    if not rows:
        return {"passed": False, "detail": "no rows"}
    bad = [c for c in CLEAN if rows_for(w, c)]
    return {"passed": not bad, "detail": "flagged files that agree: " + ", ".join(bad) if bad else "no false alarms"}

def both_sides_twin(w):
    miss = []
    for k in PLANTED:
        p = PLANTED[k]
        rs = rows_for(w, p["path"])
        if not [r for r in rs if contains(r["_row"], p["bad"]) and [g for g in p["good"] if contains(r["_row"], g)]]:
            miss.append(p["path"])
    return {"passed": not miss, "detail": "one side missing for " + ", ".join(miss) if miss else "stated and workbook values given"}

def read_before(w):
    return read_before_write(w, [{"what": p, "paths": [p]} for p in XLSX], OUT)

def nothing_fixed(w):
    if not w.files.exists(OUT):
        return {"passed": False, "detail": "no report (the red line needs the work to exist)"}
    for p in XLSX + [PLANTED[k]["path"] for k in PLANTED]:
        if wrote_to(w, p):
            return {"passed": False, "detail": p + " was changed"}
    return {"passed": True, "detail": "nothing changed"}
"""
    content = ("file,quarter,what,stated,workbook\n"
               f"{qa['csv']},{qa['quarter']},{low['region']} total,{wrong_csv},{low['total']}\n"
               f"{qb['docx']},{qb['quarter']},quarter total in the summary,{wrong_b},{total_b}\n"
               f"{qc['pptx']},{qc['quarter']},strongest region,{r2['region']} ({r2['total']}),{top['region']} ({top['total']})\n")
    t.solution = [call("files_read", path=p) for qq in qs for p in (qq["xlsx"], qq["csv"], qq["docx"], qq["svg"], qq["pptx"], qq["eml"])]
    t.solution.append(call("files_write", path=out, content=content))
    return t


FAMILIES = [fam_version_lineage, fam_call_sheet, fam_refresh_derived, fam_annual_rollup, fam_archive_duplicates, fam_consistency_audit]


README_HEAD = """# suites/workspace-5k — Workspace-Bench-style tasks on 5,000-file workspaces

Thirty Workspace-Bench-style tasks on generated persona workspaces of **5,000 files** (about
1,030 folders, 87 types, depth 8; `[workspace] persona = ..., files = 5000, seed = 51..55`,
one seed per persona, shared by its six tasks). They are written by `make_tasks_5k.py` from
each workspace's `.bureau/manifest.json` (facts, chains, derivations, duplicates with their
blake3) and from the generated files themselves (python-docx, openpyxl and python-pptx read
the workbooks, reports and decks), so every value, path, `file_deps` edge, check constant and
oracle comes from the generator; re-run the script after a generator change and review the diff:

```sh
python3 suites/workspace-5k/make_tasks_5k.py "$(command -v bureau)"        # all personas
bureau validate --lint suites/workspace-5k/ops-*                           # one persona
```

## Families (one task per family and persona)

| family | job | difficulty | parametrised |
| --- | --- | --- | --- |
| (a) `*-version-lineage` | Someone passes on the archive's `<doc> FINAL.docx` as final. Trace every version of the chain (v1, v2_reviewed, final, its PDF, the stale copy) into `version-check.csv` with its budget/rate and go-live and a status (newest / superseded / stale) — the stale FINAL copy is v1's bytes, the trap. | easy | `c` = the 12 chains |
| (b) `*-refresh-derived` | A corrected quarterly workbook replaces the old one (turn-1 `replace_file` of a `.xlsx.j2` rendered per instance; the runner-up region's weakest month was understated, so the quarter's leader changes). Update every derived file (CSV export, the report's table and summary, the SVG chart), list the deck that quotes the report as not updatable, keep the workbook untouched (red line). | hard | `q` = the 12 quarters |
| (c) `*-region-call-sheet` | Multi-hop join across four formats: the quarter's top region and its best month (`.xlsx` or its CSV) → the lead's phone and title (`roster.csv`) → the regional office (`org_chart.json`) → the date of the lead's reply (`.eml`). | medium | `q` = the 12 quarters |
| (d) `*-annual-rollup` | Aggregate twelve quarterly workbooks in three year folders into region × year totals with a Total row; archive copies (`Copy of ...xlsx`) and CSV exports of the same quarters invite double counting. | medium | no |
| (e) `*-archive-duplicates` | List the byte-identical copies in one archive folder (the folder holding 3–7 of the generator's `duplicate` files, closest to 5, among unrelated files) with their originals elsewhere (the checks accept any byte-identical original, by the manifest's blake3; a same-name file with other content does not count); nothing may be moved or deleted (red line). | easy | no |
| (f) `*-consistency-audit` | Check a year's derived files (CSV exports, reports, charts, decks, reply mails: 20 files) against the four workbooks. Three are planted wrong in `world/files` (a CSV total with two digits swapped, a report summary total with two digits swapped, a deck naming the runner-up as strongest region); report exactly those, with both values, and fix nothing (red line). | hard | no |

Rubric layers follow Workspace-Bench: `kind` (and the first `categories` entry) is
`foundation` (opened the needed files; the deliverable exists at the asked path with the asked
columns and is collected), `process` (every source read before the deliverable was written) or
`result` (the values, each with `source = ["file:<path>", ...]`; figures are compared with
`number()` / `contains()`, dates in any usual written form). Each family (a), (b) and (f)
has one judged item with a deterministic twin (`judge` + `twin`); (b), (e) and (f) have a red
line that first requires the deliverable to exist. `file_deps` lists the true dependencies
(3–15 edges; templated per instance in the parametrised tasks).

## Tasks

`f/p/r` counts rubric items by kind; `deps` is the number of `file_deps` edges.

| task | persona (seed) | difficulty | deps | f/p/r | red lines | judged | parametrised |
| --- | --- | --- | --- | --- | --- | --- | --- |
"""


def write_readme():
    import tomllib
    rows = []
    for persona, (seed, short) in SPECS.items():
        for job in ["version-lineage", "refresh-derived", "region-call-sheet", "annual-rollup",
                    "archive-duplicates", "consistency-audit"]:
            tid = f"{short}-{job}"
            src = open(os.path.join(HERE, tid, "task.toml")).read()
            # the parametrised tasks hold templates: count what the TOML parse sees
            t = tomllib.loads(src)
            kinds = [it["kind"] for it in t["rubric"]]
            par = "params" in t
            npar = f"yes ({len(t['params'][next(iter(t['params']))]['values'])} values)" if par else "no"
            rows.append(f"| `{tid}` | {persona} ({seed}) | {t['difficulty']} | {len(t['file_deps'])} | "
                        f"{kinds.count('foundation')}/{kinds.count('process')}/{kinds.count('result')} | "
                        f"{sum(1 for it in t['rubric'] if it.get('red_line'))} | {sum(1 for it in t['rubric'] if 'judge' in it)} | {npar} |")
    tail = ("\n\n`bureau validate --lint` on the thirty tasks: `90 tasks valid (90 with authored oracle)` — each\n"
            "parametrised task counts as its five instances (15 x 5 + 15), lint clean. Validating them takes\n"
            "a while (every world build copies 5,000 files): about two minutes a parametrised task on two free cores.\n")
    open(os.path.join(HERE, "README.md"), "w").write(README_HEAD + "\n".join(rows) + tail)


def main():
    bureau = sys.argv[1]
    only = set(sys.argv[2:])
    for persona, (seed, short) in SPECS.items():
        if only and short not in only:
            continue
        ws = generate(bureau, persona, seed)
        for fam in FAMILIES:
            t = fam(ws, short, list(SPECS).index(persona)) if fam is fam_consistency_audit else fam(ws, short)
            t.write()
            print("wrote", t.tid)
    if not only:
        write_readme()


if __name__ == "__main__":
    main()
