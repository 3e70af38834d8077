"""Open a sample of every generated file type with a reader nobody at Bureau wrote.

Usage: check_types.py <workspace> <manifest.json> <per-type sample size>
Prints one line per file checked; exits 1 listing every failure. Missing readers are
failures, never skips.
"""
import ast
import configparser
import csv
import email
import email.policy
import gzip
import html.parser
import io
import json
import mailbox
import re
import sqlite3
import sys
import tarfile
import tomllib
import xml.etree.ElementTree as ET
import zipfile

import docx  # python-docx
import nbformat
import openpyxl
import pptx  # python-pptx
import pypdf
import yaml
from PIL import Image


def text(b):
    s = b.decode("utf-8")
    assert s.strip(), "empty"
    return s


def balanced(s, open_, close):
    depth = 0
    for ch in s:
        if ch == open_:
            depth += 1
        elif ch == close:
            depth -= 1
            assert depth >= 0, f"unbalanced {close}"
    assert depth == 0, f"unbalanced {open_}"


class StrictHTML(html.parser.HTMLParser):
    VOID = {"meta", "br", "img", "hr", "link", "input"}

    def __init__(self):
        super().__init__()
        self.stack = []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> does not close {self.stack[-1:]}"
        self.stack.pop()


def check_html(b):
    p = StrictHTML()
    p.feed(text(b))
    p.close()
    assert not p.stack, f"unclosed {p.stack}"


def check_csv(b, delim):
    rows = list(csv.reader(io.StringIO(text(b)), delimiter=delim))
    assert len(rows) >= 2, "no data rows"
    assert len({len(r) for r in rows}) == 1, "ragged rows"


def check_ics(b):
    s = text(b)
    assert s.startswith("BEGIN:VCALENDAR\r\n") and s.rstrip().endswith("END:VCALENDAR")
    assert s.count("BEGIN:VEVENT") == s.count("END:VEVENT") >= 1
    for line in s.split("\r\n"):
        assert len(line.encode()) <= 75 or False, "line longer than 75 octets"
        assert line == "" or line.startswith(" ") or ":" in line, f"bad line {line!r}"


def check_vcf(b):
    s = text(b)
    assert s.count("BEGIN:VCARD") == s.count("END:VCARD") >= 1
    assert "FN:" in s and "VERSION:3.0" in s


def check_eml(b):
    m = email.message_from_bytes(b, policy=email.policy.default)
    for h in ("From", "To", "Subject", "Date", "Message-ID"):
        assert m[h], f"no {h}"
    assert m.get_body(preferencelist=("plain",)).get_content().strip()


def check_mbox(path):
    box = mailbox.mbox(path)
    msgs = list(box)
    assert msgs, "no messages"
    for m in msgs:
        assert m["From"] and m["Subject"]


def check_sql(b):
    con = sqlite3.connect(":memory:")
    con.executescript(text(b))
    n = con.execute("select count(*) from sqlite_master where type='table'").fetchone()[0]
    assert n >= 1


def check_ini(b):
    cp = configparser.ConfigParser()
    cp.read_string(text(b))
    assert cp.sections()


def check_editorconfig(b):
    cp = configparser.ConfigParser()
    cp.read_string("[__top__]\n" + text(b))
    assert len(cp.sections()) >= 2


def check_kv(b):
    for line in text(b).splitlines():
        if line.strip() and not line.startswith("#"):
            assert re.match(r"^[A-Za-z_][A-Za-z0-9_.]*=", line), f"bad line {line!r}"


def check_xml(b):
    ET.fromstring(b)


def check_image(b):
    im = Image.open(io.BytesIO(b))
    im.verify()
    im = Image.open(io.BytesIO(b))
    im.load()
    assert im.size[0] > 0


def check_zip(b):
    z = zipfile.ZipFile(io.BytesIO(b))
    assert z.testzip() is None and z.namelist()


def check_tar(b, mode):
    t = tarfile.open(fileobj=io.BytesIO(b), mode=mode)
    members = t.getmembers()
    assert members
    for m in members:
        t.extractfile(m).read()


def check_ipynb(b):
    nb = nbformat.reads(b.decode(), as_version=4)
    nbformat.validate(nb)
    for c in nb.cells:
        if c.cell_type == "code":
            ast.parse(c.source)


def check_bib(b):
    s = text(b)
    assert re.search(r"@\w+\{[^,]+,", s)
    balanced(s, "{", "}")


def check_ris(b):
    s = text(b)
    assert s.startswith("TY  - ") and "ER  - " in s


def check_tex(b):
    s = text(b)
    assert "\\begin{document}" in s and s.rstrip().endswith("\\end{document}")
    assert len(re.findall(r"\\begin\{", s)) == len(re.findall(r"\\end\{", s))
    balanced(re.sub(r"\\[{}]", "", s), "{", "}")


def check_rtf(b):
    s = b.decode("ascii")
    assert s.startswith("{\\rtf1")
    balanced(re.sub(r"\\[{}\\]", "", s), "{", "}")


def check_arff(b):
    s = text(b)
    assert "@RELATION" in s and "@ATTRIBUTE" in s and "@DATA" in s
    n = s.count("@ATTRIBUTE")
    data = s.split("@DATA", 1)[1].strip().splitlines()
    for row in csv.reader(data, quotechar="'"):
        assert len(row) == n, f"row of {len(row)} values, {n} attributes"


def check_dat(b):
    rows = [l.split() for l in text(b).splitlines() if l and not l.startswith("#")]
    assert rows and len({len(r) for r in rows}) == 1


def check_srt(b):
    s = text(b)
    assert re.search(r"^1\n\d\d:\d\d:\d\d,\d{3} --> \d\d:\d\d:\d\d,\d{3}\n", s, re.M)


def check_vtt(b):
    s = text(b)
    assert s.startswith("WEBVTT") and re.search(r"\d\d:\d\d:\d\d\.\d{3} --> ", s)


def check_patch(b):
    s = text(b)
    assert re.search(r"^--- a/", s, re.M) and re.search(r"^\+\+\+ b/", s, re.M)
    assert re.search(r"^@@ -\d+,\d+ \+\d+,\d+ @@", s, re.M)


def check_geojson(b):
    g = json.loads(b)
    assert g["type"] == "FeatureCollection" and g["features"]


def check_jsonl(b):
    lines = text(b).splitlines()
    assert lines
    for l in lines:
        json.loads(l)


def check_pdf(b):
    r = pypdf.PdfReader(io.BytesIO(b))
    assert len(r.pages) >= 1
    assert r.pages[0].extract_text().strip()


def check_scan(b):
    """An image-only PDF: every page one picture that Pillow opens, no text layer."""
    r = pypdf.PdfReader(io.BytesIO(b))
    assert len(r.pages) >= 1
    for page in r.pages:
        assert not page.extract_text().strip(), "a scan page with text"
        images = page.images
        assert len(images) == 1, f"{len(images)} images on a page"
        img = Image.open(io.BytesIO(images[0].data))
        img.load()
        assert img.width > 500 and img.height > 500


def check_docx(b):
    d = docx.Document(io.BytesIO(b))
    assert any(p.text.strip() for p in d.paragraphs)


def check_xlsx(b):
    wb = openpyxl.load_workbook(io.BytesIO(b), data_only=True)
    ws = wb.worksheets[0]
    assert ws.max_row >= 2


def check_pptx(b):
    p = pptx.Presentation(io.BytesIO(b))
    assert len(p.slides) >= 1
    assert any(sh.has_text_frame and sh.text_frame.text.strip() for s in p.slides for sh in s.shapes)


CHECKS = {
    "docx": check_docx,
    "xlsx": check_xlsx,
    "pptx": check_pptx,
    "pdf": check_pdf,
    "csv": lambda b: check_csv(b, ","),
    "tsv": lambda b: check_csv(b, "\t"),
    "md": text,
    "txt": text,
    "rst": text,
    "log": text,
    "html": check_html,
    "tex": check_tex,
    "rtf": check_rtf,
    "eml": check_eml,
    "ics": check_ics,
    "vcf": check_vcf,
    "srt": check_srt,
    "vtt": check_vtt,
    "json": json.loads,
    "jsonl": check_jsonl,
    "geojson": check_geojson,
    "ipynb": check_ipynb,
    "xml": check_xml,
    "kml": check_xml,
    "gpx": check_xml,
    "svg": check_xml,
    "drawio": check_xml,
    "sql": check_sql,
    "arff": check_arff,
    "dat": check_dat,
    "bib": check_bib,
    "ris": check_ris,
    "yaml": yaml.safe_load,
    "yml": yaml.safe_load,
    "toml": lambda b: tomllib.loads(text(b)),
    "ini": check_ini,
    "cfg": check_ini,
    "conf": check_ini,
    "editorconfig": check_editorconfig,
    "env": check_kv,
    "properties": check_kv,
    "py": lambda b: ast.parse(text(b)),
    "png": check_image,
    "jpg": check_image,
    "gif": check_image,
    "zip": check_zip,
    "tar": lambda b: check_tar(b, "r:"),
    "tar.gz": lambda b: check_tar(b, "r:gz"),
    "gz": lambda b: text(gzip.decompress(b)),
    "patch": check_patch,
}


def main():
    root, manifest_path, per_type = sys.argv[1], sys.argv[2], int(sys.argv[3])
    m = json.load(open(manifest_path))
    seen = {}
    failures = []
    checked = 0
    for f in m["files"]:
        t = f["type"]
        if t not in CHECKS and t != "mbox":
            continue
        if seen.get(t, 0) >= per_type:
            continue
        seen[t] = seen.get(t, 0) + 1
        path = f"{root}/{f['path']}"
        try:
            if t == "mbox":
                check_mbox(path)
            elif f.get("media") == "scan":
                check_scan(open(path, "rb").read())
            else:
                CHECKS[t](open(path, "rb").read())
            checked += 1
        except Exception as e:  # noqa: BLE001 - every failure is reported
            failures.append(f"{t}: {f['path']}: {type(e).__name__}: {e}")
    print(json.dumps({"checked": checked, "types": sorted(seen)}))
    if failures:
        print("\n".join(failures), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
