#!/usr/bin/env python3
"""Write the 5,000-file suites/workspace tasks from the manifests of their generated workspaces.

Usage: make_tasks_5k.py <bureau binary> [persona-short ...]
For each persona it runs `bureau gen workspace --files 5000` with the spec below (or reuses
/tmp/ws5k-<persona> when it holds that spec's manifest), reads .bureau/manifest.json and the
generated files it needs (python-docx, openpyxl and python-pptx read the office files), and
writes six tasks, one per family (README-workspace5k.md):

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
        d["_row"] = ",".join(r)
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


FAMILIES = [fam_version_lineage]


def main():
    bureau = sys.argv[1]
    only = set(sys.argv[2:])
    for persona, (seed, short) in SPECS.items():
        if only and short not in only:
            continue
        ws = generate(bureau, persona, seed)
        for fam in FAMILIES:
            t = fam(ws, short)
            t.write()
            print("wrote", t.tid)


if __name__ == "__main__":
    main()
