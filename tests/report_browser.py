#!/usr/bin/env python3
"""The HTML report in a real browser (README "The run as a picture").

usage: report_browser.py FOLDSWEEP_BINARY

Runs a small synthetic sweep (8 trials x 3 folds) whose sweep file, data
file and run folder are named with markup that would log to the console if
it ever ran (<script>console.error(..)</script>, <img onerror=..>,
<svg onload=..>), then opens the run's report.html in headless Chromium:

  - no console message at all (Chromium's log, --enable-logging), no error
    caught by the page's own recorder (the data-js-errors attribute of
    <html>), and the page's script ran to its end (data-js-ready="1");
  - from the DOM after scripts (--dump-dom): every section, 8 leaderboard
    rows, 8 trial sections, 8 learning-curve charts each with 9 series
    (3 folds x training loss, validation loss, validation Q3) drawn as 9
    paths, a strip plot per swept option with one group per value, the
    importance and profile bars, the throughput scatter, 5 confusion
    matrices; the markup from the names present as text, never as elements;
  - intervals, ties and the front (issues 29 and 30), against the run's
    leaderboard.json (the sweep has run.objectives: [q3, params]): the
    leaderboard's score chart and every strip plot draw each complete
    trial's dot at its mean and a bar whose ends are its q3_ci95 (through
    the chart's data-ymap, itself checked against the axis' tick labels),
    tied trials and only they marked tied; each value's effect bar spans
    the mean of its trials' Q3 +- t(0.975, m-1) s / sqrt(m); the Pareto
    chart has the compared trials at their params and Q3 (log axis exactly
    when params span a decade), marks exactly leaderboard.json's front, and
    its step line passes through the front's points and no other, turning
    at the corners both neighbours dominate;
  - sorting: a copy of the page with a test script appended clicks column
    headers, and the DOM shows the rows in the new order; a link to a trial
    (#t-ID) opens its section; the same script reads the strokes the
    browser paints: in every learning-curve chart each series' 3 fold
    curves have 3 different colours (shades), so folds can be told apart;
  - a screenshot (1280x2000) that is not blank: the PNG is checked to be
    1280x2000, at least 8 times the size of a screenshot of an empty page
    taken in the same run, and its decompressed image data to hold at
    least 64 distinct byte values (an empty page's has a handful).

Chromium is Debian's `chromium`; where it is missing the test installs it
with apt-get (as root), and exits 77 (skipped) with the reason where it
cannot. Exit 0 passed, 1 failed. FS_KEEP_TMP=1 keeps the work folder.
"""

import html.parser
import json
import math
import os
import pathlib
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print(f"FAIL: {msg}", flush=True)


def skip(why):
    print(f"report_browser: SKIPPED: {why}", flush=True)
    sys.exit(77)


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def install_chromium():
    """apt-get install chromium, quietly; returns None or why it failed."""
    if not shutil.which("apt-get"):
        return "no apt-get on this machine"
    if os.geteuid() != 0:
        return "not root, so apt-get cannot install it (apt-get install chromium)"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    why = ""
    for cmd in (["install"], ["update"], ["install"]):
        args = ["apt-get", "-y", "-qq", cmd[0]] + (["chromium"] if cmd[0] == "install" else [])
        print("$ " + " ".join(args), flush=True)
        try:
            r = subprocess.run(args, env=env, capture_output=True, text=True, timeout=900)
        except subprocess.TimeoutExpired:
            return "apt-get timed out"
        if cmd[0] == "install" and r.returncode == 0:
            return None
        why = (r.stderr or r.stdout).strip().splitlines()[-1:] or [f"exit {r.returncode}"]
        why = why[0]
    return f"apt-get install chromium failed ({why})"


class Dom(html.parser.HTMLParser):
    """The elements of a DOM dump, each with its attributes, its parents'
    tags and classes, and the text of the whole page."""

    VOID = {"meta", "link", "br", "img", "input", "hr", "circle", "line", "rect", "path", "col", "source", "wbr"}

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.elements, self.stack, self.text = [], [], []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        el = {"tag": tag, "attrs": a, "cls": set((a.get("class") or "").split()), "parents": list(self.stack)}
        self.elements.append(el)
        if tag not in self.VOID:
            self.stack.append(el)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if self.stack and self.stack[-1]["tag"] == tag and tag not in self.VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i]["tag"] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        self.text.append(data)
        if self.stack:
            self.stack[-1]["text"] = self.stack[-1].get("text", "") + data

    def find(self, tag=None, cls=None, inside=None, **attrs):
        out = []
        for el in self.elements:
            if tag and el["tag"] != tag:
                continue
            if cls and cls not in el["cls"]:
                continue
            if inside is not None and not any(p is inside for p in el["parents"]):
                continue
            if any(el["attrs"].get(k) != v for k, v in attrs.items()):
                continue
            out.append(el)
        return out


def png_info(path):
    """(width, height, decompressed image data) of a PNG file."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return 0, 0, b""
    pos, idat, w, h = 8, [], 0, 0
    while pos + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + n]
        if kind == b"IHDR":
            w, h = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + n
    return w, h, zlib.decompress(b"".join(idat))


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    fs = os.path.abspath(sys.argv[1])
    chrome = find_chromium()
    if not chrome:
        why = install_chromium()
        chrome = find_chromium()
        if not chrome:
            skip(f"no Chromium here and it could not be installed: {why}")
    tmp = tempfile.mkdtemp(prefix="fs_report_browser_")
    try:
        run_checks(fs, chrome, tmp)
    finally:
        if os.environ.get("FS_KEEP_TMP"):
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"report_browser: {len(failures)} check(s) failed", flush=True)
        return 1
    print("report_browser: passed", flush=True)
    return 0


def chromium(chrome, tmp, args, timeout=180):
    """Headless Chromium with its own profile (no clash with another one
    running); returns (stdout, stderr, seconds)."""
    cmd = [
        chrome,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--hide-scrollbars",
        f"--user-data-dir={tmp}/chromium-profile",
        "--enable-logging=stderr",
        "--v=0",
    ] + args
    print("$ " + " ".join(f"'{a}'" if any(c in a for c in " <>'()&;") else a for a in cmd), flush=True)
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, errors="replace")
    return r.stdout, r.stderr, time.time() - t0


def console_lines(stderr):
    return [l for l in stderr.splitlines() if "CONSOLE" in l or "Uncaught" in l]


def run_checks(fs, chrome, tmp):
    # Names that would run script if the report ever wrote them as markup.
    sweep_dir = os.path.join(tmp, "<script>console.error('XSS-sweep')<")
    os.mkdir(sweep_dir)
    sweep = os.path.join(sweep_dir, "script>.yaml")  # the path holds <script>console.error('XSS-sweep')</script>.yaml
    data = os.path.join(tmp, "<img src=x onerror=console.error('XSS-data')>.txt")
    run = os.path.join(tmp, "run<svg onload=console.error('XSS-run')>")
    subprocess.run([fs, "synth", "-o", data, "--proteins", "120", "--seed", "3"], check=True, capture_output=True)
    with open(sweep, "w") as f:
        f.write(
            "data:\n"
            f"  inputs: [\"{data}\"]\n"
            "  format: records\n  window: 9\n  folds: 3\n"
            "model:\n  depth: 1\n  filters: [8, 16]\n  kernel: [3, 5]\n  dense: [0, 16]\n"
            "training:\n  epochs: 4\n  batch_size: 16\n  seed: 5\n  early_stopping: {criterion: gl, alpha: 0.5}\n"
            "run:\n  objectives: [q3, params]\n"
        )
    cmd = [fs, "run", sweep, "--out", run, "--threads", "2", "--quiet"]
    print("$ " + " ".join(f"'{a}'" for a in cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    check(r.returncode == 0, f"foldsweep run exited {r.returncode}: {r.stderr}")
    report = pathlib.Path(run) / "report.html"
    if not report.exists():
        check(False, f"{report} was not written")
        return
    print(f"report: {report.stat().st_size} bytes", flush=True)

    # 1. The DOM after scripts, and the console.
    out, err, secs = chromium(chrome, tmp, ["--dump-dom", report.as_uri()])
    print(f"--dump-dom: {len(out)} characters in {secs:.2f} s", flush=True)
    check(not console_lines(err), "console output: " + " | ".join(console_lines(err)))
    check("XSS" not in err, "a payload from a file name ran")
    dom = Dom(out)
    root = dom.find("html")
    check(root and root[0]["attrs"].get("data-js-ready") == "1", "the page's script did not run to its end")
    check(root and "data-js-errors" not in root[0]["attrs"], f"script errors: {root and root[0]['attrs'].get('data-js-errors')}")
    for sid in ("leaderboard", "test", "effects", "trials", "profile", "confusion", "identity"):
        sec = dom.find("section", id=sid)
        check(len(sec) == 1, f"section {sid}: {len(sec)} found")
        if sec:
            check(dom.find("p", cls="why", inside=sec[0]), f"section {sid} has no one-line explanation")
    board = dom.find("table", id="board")
    check(board and len(dom.find("tr", inside=board[0])) == 9, "the leaderboard has not 8 rows and a header")
    # The tied group shaded: the rows leaderboard.json marks tied_with_best.
    with open(pathlib.Path(run) / "leaderboard.json") as f:
        tied = sum(1 for row in json.load(f) if row.get("tied_with_best") is True)
    shaded = dom.find("tr", cls="tied", inside=board[0]) if board else []
    check(tied >= 1 and len(shaded) == tied, f"{len(shaded)} leaderboard rows shaded as tied, leaderboard.json has {tied}")
    check(len(dom.find("details", cls="trial")) == 8, "not 8 trial sections")
    curves = dom.find("svg", cls="curves")
    check(len(curves) == 8, f"{len(curves)} learning-curve charts, expected 8")
    for svg in curves:
        paths = dom.find("path", cls="series", inside=svg)
        check(svg["attrs"].get("data-series") == "9" and len(paths) == 9,
              f"a curve chart has data-series={svg['attrs'].get('data-series')} and {len(paths)} series paths, expected 9")
        check(len([p for p in paths if "q3" in p["cls"]]) == 3, "a curve chart lacks 3 validation Q3 series")
    strips = dom.find("svg", cls="strip")
    check(len(strips) == 3, f"{len(strips)} strip plots, expected 3 (filters, kernel, dense)")
    for svg in strips:
        groups = dom.find("g", cls="group", inside=svg)
        check(str(len(groups)) == svg["attrs"].get("data-series") == "2", "a strip plot has not 2 value groups")
        dots = [d for g in dom.find("g", cls="trial", inside=svg) for d in dom.find("circle", cls="dot", inside=g)]
        check(len(dots) == 8, "a strip plot has not 8 trial dots")
    check(len(dom.find("svg", cls="bars")) == 2, "not 2 bar charts (importance, profile)")
    with open(pathlib.Path(run) / "leaderboard.json") as f:
        check_intervals(dom, strips, json.load(f))
    scat = dom.find("svg", cls="scatter")
    check(len(scat) == 1 and len(dom.find("circle", cls="dot", inside=scat[0])) == 24, "throughput scatter: not 24 folds")
    check(len(dom.find("table", cls="cm")) == 5, "not 5 confusion matrices")
    # The markup from the names: text on the page, never elements.
    text = "".join(dom.text)
    for s in ("<script>console.error('XSS-sweep')</script>.yaml", "<img src=x onerror=console.error('XSS-data')>.txt",
              "run<svg onload=console.error('XSS-run')>"):
        check(s in text, f"the page does not show {s!r} as text")
    check(len(dom.find("script")) == 2, f"{len(dom.find('script'))} script elements, expected the page's own 2")
    check(not dom.find("img") and not [e for e in dom.elements if "onload" in e["attrs"] or "onerror" in e["attrs"]],
          "an element from a file name is in the DOM")

    # 2. Sorting and links, by a test script appended to a copy.
    page = report.read_text(encoding="utf-8")
    probe = (
        "<script>(function(){var h=document.documentElement,b=document.querySelectorAll('#board thead button');"
        "function col(i){return Array.prototype.map.call(document.querySelectorAll('#board tbody tr'),"
        "function(r){return r.cells[i].getAttribute('data-v');}).join(',');}"
        "b[0].click();b[0].click();h.setAttribute('data-test-rank-desc',col(0));"
        "b[3].click();h.setAttribute('data-test-q3-asc',col(3));"
        # Charts whose every series has its 3 fold curves in 3 painted colours.
        "var c=document.querySelectorAll('svg.curves'),ok=0;"
        "for(var i=0;i<c.length;i++){var good=1;['train','val','q3'].forEach(function(k){"
        "var p=c[i].querySelectorAll('path.series.'+k),s={};"
        "for(var j=0;j<p.length;j++)s[getComputedStyle(p[j]).stroke]=1;"
        "if(p.length!==3||Object.keys(s).length!==3)good=0;});ok+=good;}"
        "h.setAttribute('data-test-fold-shades',ok+'/'+c.length);})();</script>"
    )
    sorted_copy = pathlib.Path(tmp) / "sorted.html"
    sorted_copy.write_text(page.replace("</body>", probe + "</body>"), encoding="utf-8")
    out2, err2, _ = chromium(chrome, tmp, ["--dump-dom", sorted_copy.as_uri()])
    r2 = Dom(out2).find("html")
    a = r2[0]["attrs"] if r2 else {}
    check(a.get("data-test-rank-desc") == "8,7,6,5,4,3,2,1", f"rank sorted descending: {a.get('data-test-rank-desc')}")
    q3 = [float(v) for v in (a.get("data-test-q3-asc") or "").split(",") if v]
    check(len(q3) == 8 and q3 == sorted(q3), f"Q3 sorted ascending: {a.get('data-test-q3-asc')}")
    check(a.get("data-test-fold-shades") == "8/8",
          f"learning-curve charts whose folds are painted in 3 shades per series: {a.get('data-test-fold-shades')}, expected 8/8")
    check(not console_lines(err2) and "data-js-errors" not in a, "errors while sorting")
    last = dom.find("details", cls="trial")[-1]["attrs"]["id"]
    out3, _, _ = chromium(chrome, tmp, ["--dump-dom", report.as_uri() + "#" + last])
    opened = Dom(out3).find("details", id=last)
    check(opened and "open" in opened[0]["attrs"], f"#{last} did not open its trial section")

    # 3. A screenshot that is not blank, against an empty page's.
    blank = pathlib.Path(tmp) / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body></body></html>")
    shots = {}
    for name, uri in (("blank", blank.as_uri()), ("report", report.as_uri())):
        png = os.path.join(tmp, f"{name}.png")
        chromium(chrome, tmp, [f"--screenshot={png}", "--window-size=1280,2000", uri])
        shots[name] = (os.path.getsize(png) if os.path.exists(png) else 0, png)
    size, png = shots["report"]
    w, h, pixels = png_info(png) if size else (0, 0, b"")
    distinct = len(set(pixels))
    print(f"screenshot: {size} bytes, {w}x{h}, {distinct} distinct bytes in its image data; "
          f"empty page: {shots['blank'][0]} bytes", flush=True)
    check((w, h) == (1280, 2000), f"screenshot is {w}x{h}")
    check(size >= 8 * max(shots["blank"][0], 1), "the screenshot is not much larger than an empty page's")
    check(distinct >= 64, f"the screenshot's image data has only {distinct} distinct byte values (blank?)")


# Student's t quantile t(0.975, df), from tables (the strip plots' values
# have 4 trials each here: df 3).
T975 = {1: 12.7062047362, 2: 4.30265272975, 3: 3.18244630528, 4: 2.7764451052, 5: 2.57058183661, 6: 2.44691185114,
        7: 2.36462425159}


def axis_map(g, attr):
    """data-ymap / data-xmap ("[log10] v0 p0 v1 p1") as a function from a value to its place."""
    parts = (g["attrs"].get(attr) or "0 0 1 0").split()
    log = parts[0] == "log10"
    v0, p0, v1, p1 = map(float, parts[1:] if log else parts)
    return lambda v: p0 + ((math.log10(v) if log else v) - v0) * (p1 - p0) / (v1 - v0)


def near(a, b, tol=0.06):
    return abs(float(a) - float(b)) <= tol


def check_map_ticks(dom, svg, g, name):
    """The map a chart claims is where its y axis' tick labels are (a label sits 4 below its value)."""
    ymap, n = axis_map(g, "data-ymap"), 0
    for t in dom.find("g", cls="tick", inside=svg)[:1]:
        for e in dom.find("text", inside=t):
            n += 1
            check(near(float(e["attrs"]["y"]) - 4, ymap(float(e["text"])), 0.11), f"{name}: tick {e.get('text')} off its axis map")
    check(n >= 2, f"{name}: no y-axis ticks")


def check_trials(dom, g, by_id, name):
    """Each trial's dot at its mean and its bar over its q3_ci95 (from leaderboard.json), tied ones marked.
    Returns the trial ids drawn."""
    ymap, ids = axis_map(g, "data-ymap"), []
    for t in dom.find("g", cls="trial", inside=g):
        tid = t["attrs"].get("data-trial")
        row, ids = by_id.get(tid, {}), ids + [tid]
        lo, hi = row.get("q3_ci95") or (None, None)
        ci, dot = dom.find("line", cls="ci", inside=t), dom.find("circle", cls="dot", inside=t)
        check(lo is not None and len(ci) == 1 and near(ci[0]["attrs"]["y1"], ymap(100 * lo))
              and near(ci[0]["attrs"]["y2"], ymap(100 * hi)), f"{name}: {tid}'s interval bar is not its q3_ci95 {lo}..{hi}")
        check(len(dot) == 1 and near(dot[0]["attrs"]["cy"], ymap(100 * row["metric"]["mean"])), f"{name}: {tid}'s dot is not at its mean")
        check(bool(dot) and ("tied" in dot[0]["cls"]) == (row.get("tied_with_best") is True),
              f"{name}: {tid} marked tied={bool(dot) and 'tied' in dot[0]['cls']}, leaderboard.json: {row.get('tied_with_best')}")
    return ids


def check_intervals(dom, strips, rows):
    """Issue 29 item 5 and 30 item 3 in the report: intervals, the tied group, effects, the Pareto front."""
    by_id = {r["id"]: r for r in rows}
    complete = {r["id"] for r in rows if r.get("q3_ci95")}
    check(len(complete) == 8 and any(r.get("tied_with_best") for r in rows), "leaderboard.json: not 8 intervals and a tie")
    scores = dom.find("svg", cls="scores")
    check(len(scores) == 1, f"{len(scores)} leaderboard score charts, expected 1")
    for svg in scores:
        g = dom.find("g", cls="marks", inside=svg)[0]
        check_map_ticks(dom, svg, g, "scores")
        ids = check_trials(dom, g, by_id, "scores")
        check(ids == [r["id"] for r in rows if r["id"] in complete], f"the score chart's trials are not the complete ones by rank: {ids}")
    for svg in strips:
        g = dom.find("g", cls="marks", inside=svg)
        check(len(g) == 1, "a strip plot has no marks group")
        if not g:
            continue
        check_map_ticks(dom, svg, g[0], "strip")
        check(sorted(check_trials(dom, g[0], by_id, "strip")) == sorted(complete), "a strip plot lacks a trial")
        ymap = axis_map(g[0], "data-ymap")
        for grp in dom.find("g", cls="group", inside=svg):
            q = [100 * by_id[t["attrs"]["data-trial"]]["metric"]["mean"] for t in dom.find("g", cls="trial", inside=grp)]
            m = sum(q) / len(q)
            half = T975[len(q) - 1] * math.sqrt(sum((x - m) ** 2 for x in q) / (len(q) - 1) / len(q))
            e = dom.find("line", cls="effect-ci", inside=grp)
            check(len(e) == 1 and near(e[0]["attrs"]["y1"], ymap(m - half)) and near(e[0]["attrs"]["y2"], ymap(m + half)),
                  f"value {grp['attrs'].get('data-value')}: its effect's interval is not {m - half:.3f}..{m + half:.3f}")
    pareto = dom.find("svg", cls="pareto")
    check(len(pareto) == 1, f"{len(pareto)} Pareto charts, expected 1")
    for svg in pareto:
        g = dom.find("g", cls="marks", inside=svg)[0]
        xmap, ymap = axis_map(g, "data-xmap"), axis_map(g, "data-ymap")
        params = [r["params"] for r in rows if r.get("pareto") is not None]
        check(g["attrs"].get("data-xmap", "").startswith("log10") == (max(params) >= 10 * min(params)),
              f"the params axis' scale: {g['attrs'].get('data-xmap')} for params {min(params)}..{max(params)}")
        dots = {d["attrs"]["data-trial"]: d for d in dom.find("circle", cls="dot", inside=g)}
        check(set(dots) == {r["id"] for r in rows if r.get("pareto") is not None}, "the Pareto chart's trials are not the compared ones")
        front = {r["id"] for r in rows if r.get("pareto") is True}
        check(front and {t for t, d in dots.items() if "front" in d["cls"]} == front, "the Pareto chart's front marks are not leaderboard.json's")
        for t, d in dots.items():
            check(near(d["attrs"]["cx"], xmap(by_id[t]["params"])) and near(d["attrs"]["cy"], ymap(100 * by_id[t]["metric"]["mean"])),
                  f"Pareto: {t} is not at its params and Q3")
        line = dom.find("path", cls="front-line", inside=g)
        pts = [tuple(map(float, p.split())) for p in line[0]["attrs"]["d"][1:].split("L")] if line else []
        on = {t for t, d in dots.items() if any(near(d["attrs"]["cx"], x, 0.02) and near(d["attrs"]["cy"], y, 0.02) for x, y in pts)}
        check(on == front and len(pts) == 2 * len(front) - 1,
              f"the front's line passes through {sorted(on)} in {len(pts)} vertices, the front is {sorted(front)}")
        # Between two front points the line turns at the corner worse than both: more
        # parameters (further right) and a lower Q3 (further down).
        for i in range(1, len(pts) - 1, 2):
            (ax, ay), (cx, cy), (bx, by) = pts[i - 1], pts[i], pts[i + 1]
            check(near(cx, max(ax, bx), 0.02) and near(cy, max(ay, by), 0.02),
                  f"the front's line turns at {cx},{cy} between {ax},{ay} and {bx},{by}, not at the corner both dominate")


if __name__ == "__main__":
    sys.exit(main())
