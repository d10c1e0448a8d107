"""The HTML report as a person sees it: headless Chromium opens a report of a small tuning
database from a file, takes a screenshot, and the test checks that every chart was drawn with
its data (marks for each tuned problem, coloured pixels in the screenshot), that each tuned
problem's native_f32 search has its section with every view, that the console stayed empty and
that no request left the page. Skips (exit 77) without Chromium.

Usage: browser_test.py TUNEKIT_CLI SOURCE_DIR"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from png_pixels import coloured_pixels, read_png  # noqa: E402

SKIP = 77
PROBLEMS = [
    "GemmTunableOp_float_NN,nn_64_32_48_ld_64_48_64",
    "GemmTunableOp_float_NN,nn_96_17_33_ld_96_33_96",
    "GemmTunableOp_float_TN,tn_128_16_64_ld_64_64_128",
]
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run(*cmd, env=None):
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return done


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def browse(browser, page, work, *extra):
    """Runs headless Chromium on `page`; returns (stdout, console lines, requested URLs)."""
    net = os.path.join(work, "net.json")
    # The browser's own traffic (updates, sign-in) is switched off: any request left is the page's.
    cmd = [browser, "--headless", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--disable-default-apps", "--no-default-browser-check",
           "--user-data-dir=" + os.path.join(work, "profile"), "--enable-logging=stderr",
           "--v=0", "--log-net-log=" + net, "--virtual-time-budget=5000", *extra,
           "file://" + page]
    if os.geteuid() == 0:
        cmd.insert(1, "--no-sandbox")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    console = [line for line in done.stderr.splitlines() if "CONSOLE" in line]
    urls = set()
    try:
        with open(net, encoding="utf-8", errors="replace") as f:
            text = f.read().rstrip().rstrip(",")
        if not text.endswith("}"):
            text += "]}"
        log = json.loads(text)
        start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
        url_of, started = {}, []
        for event in log.get("events", []):
            params, source = event.get("params", {}), event.get("source", {}).get("id")
            if "url" in params:
                url_of.setdefault(source, params["url"])
            # A request a document started carries its origin ("null" for a file); Chromium's
            # own (updates, sign-in, which no flag fully silences) say "not an origin".
            if event.get("type") == start_job and params.get("initiator", "not an origin") != \
                    "not an origin":
                started.append(source)
        urls.update(url_of.get(source, "?") for source in started)
    except (OSError, ValueError, KeyError):
        urls.add("<net log unreadable>")
    return done.stdout, console, urls


def leaving(urls):
    return sorted(u for u in urls if not u.startswith(("file:", "data:", "chrome", "about:")))


class Canvases(HTMLParser):
    """data-marks of every canvas, and body's data-charts, of the DOM Chromium dumped; and per
    search section its h2 heading and the labels of its canvases."""

    def __init__(self):
        super().__init__()
        self.marks, self.charts = [], None
        self.ticks = []  # (aria-label, x tick labels, y tick labels) of every canvas
        self.h1, self.no_data = 0, 0
        self.sections = []  # {"class", "heading", "labels"} in page order
        self.in_heading = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "canvas":
            self.marks.append((a.get("aria-label", ""), int(a.get("data-marks", "-1"))))
            self.ticks.append((a.get("aria-label", ""), a.get("data-x-ticks", ""),
                               a.get("data-y-ticks", "")))
            if self.sections:
                self.sections[-1]["labels"].append(a.get("aria-label", ""))
        if tag == "h1":
            self.h1 += 1
        if tag == "p" and a.get("class") == "nodata":
            self.no_data += 1
        if tag == "body":
            self.charts = a.get("data-charts")
        if tag == "section":
            self.sections.append({"class": a.get("class", ""), "heading": "", "labels": []})
        self.in_heading = tag == "h2" and bool(self.sections) and not self.sections[-1]["heading"]

    def handle_endtag(self, tag):
        if tag == "h2":
            self.in_heading = False

    def handle_data(self, data):
        if self.in_heading:
            self.sections[-1]["heading"] += data

    def searches(self):
        return [(s["heading"], s["labels"]) for s in self.sections if s["class"] == "search"]


SEARCH_VIEWS = ("Best time so far against trials", "Best time so far against tuning time",
                "Distribution of measured times", "Knob importance", "Best time per pair")


def check_native_searches(canvases):
    """The native candidates' searches are stored and each has every view."""
    native = [s for s in canvases.searches() if s[0].startswith("Search: native_f32 on ")]
    for problem in PROBLEMS:
        check(any(heading.startswith(f"Search: native_f32 on {problem} ") for heading, _ in native),
              f"the native_f32 search of {problem} has its section")
    for heading, labels in native:
        missing = [v for v in SEARCH_VIEWS if not any(lbl.startswith(v) for lbl in labels)]
        check(not missing, f"'{heading[:60]}' has every view (missing: {missing})")


def check_two_knob_ticks(canvases):
    """Each two-knob view labels its ticks with the knobs' values (none empty, no quotes)."""
    views = [t for t in canvases.ticks if t[0].startswith("Best time per pair")]
    check(views, "the page has two-knob views")
    for label, xs, ys in views:
        labels = xs.split("|") + ys.split("|")
        check(all(labels) and not any('"' in x for x in labels),
              f"'{label[:50]}' labels its ticks with values: x {xs[:60]!r}, y {ys[:60]!r}")


def check_markup_in_names(tk, browser, work):
    """A name with "<!--<script>" in a results file leaves the page whole: the heading and the
    charts are drawn, and the speed-ups (no Default was timed) say there is no data."""
    results = os.path.join(work, "markup.csv")
    with open(results, "w") as f:
        f.write("Validator,PT_VERSION,2.2.0\n"
                "GemmTunableOp_float_NN,nn_68_32_48_ld_68_48_68,<!--<script>,0.007\n")
    page = os.path.join(work, "markup.html")
    run(tk, "report", "--results", results, "-o", page)
    dom, console, _ = browse(browser, page, work, "--dump-dom")
    canvases = Canvases()
    canvases.feed(dom)
    check(not console, "markup page: no console message: " + "; ".join(console[:3]))
    check(canvases.h1 == 1, "markup page: the heading is drawn")
    check(canvases.marks and canvases.charts == str(len(canvases.marks)),
          f"markup page: its charts are drawn ({canvases.charts} of {len(canvases.marks)})")
    check(canvases.no_data >= 1, "markup page: the empty speed-up chart says there is no data")


def make_database(tk, source, work):
    env = dict(os.environ, TUNEKIT_DB=os.path.join(work, "t.db"), TUNEKIT_SYSTEM_DB="off")
    problems = os.path.join(work, "problems.csv")
    with open(problems, "w") as f:
        f.write("\n".join(PROBLEMS) + "\n")
    # The default candidates: the libraries and the native templates, whose searches the
    # database keeps.
    budget = ["--max-tuning-duration-ms", "2", "--max-tuning-iterations", "5", "--threads", "1"]
    results = os.path.join(work, "r.csv")
    run(tk, "tune-file", problems, "--results", results, *budget, env=env)
    run(tk, "compare", problems, "--results", results, "--threads", "1", "--head-to-head", "0",
        "--sample-ms", "0.2", env=env)
    cache = os.path.join(source, "tests", "data", "autotvm", "convolution_subset.json.gz")
    run(tk, "db", "import", cache, env=env)
    return env["TUNEKIT_DB"]


def observation_works(browser, work):
    """The test would miss nothing: a page that logs an error and fetches a URL is caught."""
    control = os.path.join(work, "control.html")
    with open(control, "w") as f:
        f.write("<script>console.error('control error');"
                "fetch('http://127.0.0.1:9/control').catch(() => {});</script>")
    _, console, urls = browse(browser, control, work, "--dump-dom")
    check(any("control error" in c for c in console), "the console of a page is observed")
    check(any("127.0.0.1:9" in u for u in urls), "a request leaving a page is observed")


def main():
    tk, source = sys.argv[1], sys.argv[2]
    browser = chromium()
    if browser is None:
        print("SKIP: Chromium is not installed (apt-get install chromium); the report's "
              "browser test needs it")
        return SKIP
    work = tempfile.mkdtemp(prefix="tunekit-report-test-")
    db = make_database(tk, source, work)
    page = os.path.join(work, "report.html")
    run(tk, "report", "--db", db, "-o", page)
    observation_works(browser, work)

    dom, console, urls = browse(browser, page, work, "--dump-dom")
    check(not console, "no console message: " + "; ".join(console[:3]))
    check(not leaving(urls), "no request leaves the page: " + ", ".join(leaving(urls)[:3]))
    canvases = Canvases()
    canvases.feed(dom)
    check(len(canvases.marks) >= 5 and canvases.charts == str(len(canvases.marks)),
          f"every chart was created ({canvases.charts} of {len(canvases.marks)} canvases)")
    for label, marks in canvases.marks:
        check(marks > 0, f"chart '{label}' has {marks} marks")
    check_native_searches(canvases)
    check_two_knob_ticks(canvases)
    per_problem = [m for label, m in canvases.marks if label.startswith("Every candidate")]
    check(per_problem and sum(per_problem) >= len(PROBLEMS) * 2,
          f"candidates' times chart: marks {per_problem} for {len(PROBLEMS)} tuned problems")

    check_markup_in_names(tk, browser, work)

    shot = os.path.join(work, "shot.png")
    browse(browser, page, work, "--screenshot=" + shot, "--window-size=1280,1400")
    width, height, _, _ = read_png(shot)
    check(width == 1280, f"screenshot is 1280 px wide ({width}x{height})")
    pixels = coloured_pixels(shot)
    check(pixels > 3000, f"coloured chart marks in the screenshot: {pixels} pixels")
    if not failures:
        shutil.rmtree(work, ignore_errors=True)
    print(f"report browser test: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
