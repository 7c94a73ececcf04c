"""Host-side tests of parse --flamegraph OUT.svg: no VM.

The sessions are test_parse_stacks.py's (tests/progs/calltree, mapped as
the kernel records it, its chains holding the program's real return
addresses), plus kernel frames from a kallsyms file and names that XML
must escape. The flame graph is checked against parse's own call tree
(--tree, --format folded): the same frames with the same counts, widths
proportional to them. The interactive part runs in headless Chromium,
driven over the DevTools protocol (tests/cdp.py): real clicks zoom, the
search box highlights.

    /usr/bin/python3 -m pytest tests/test_flamegraph.py
"""
import base64
import colorsys
import os
import re
import resource
import signal
import struct
import subprocess
import xml.etree.ElementTree as ET
import zlib

import pytest

import cdp
import sleepyfile as sf
from test_parse_stacks import prog, tree_session  # noqa: F401

SVG = "{http://www.w3.org/2000/svg}"
WIDTH, PAD, TOP, ROW, CHAR_W = 1200, 10, 50, 16, 7.3
DRAWN = WIDTH - 2 * PAD
ODD = "operator<<&\"quote'd"
LONG = "a_kernel_function_whose_name_is_far_too_long_for_its_frame_" * 3
KSYMS = f"""ffffffff81000000 T entry_SYSCALL_64
ffffffff81001000 T do_syscall_64
ffffffff81002000 T ksys_read
ffffffff81003000 T {ODD}
ffffffff81004000 T {LONG}
ffffffff81005000 T _etext
"""
# Each kind's hue family, degrees (flame.c's kind_styles).
HUES = {"app": (262, 298), "user": (4, 50), "kernel": (182, 220)}


def rich_session(prog):
    """tree_session (41 user samples), 6 kernel samples in ODD and 3 in
    LONG under ksys_read, from main -> zero_reader, and 2 samples of an
    application whose name needs escaping, without a chain: 52."""
    _, ret, syms = prog
    f = tree_session(prog)
    kernel = [0xffffffff81002010, 0xffffffff81001010, 0xffffffff81000050]
    user = [syms["zero_reader"] + 9, ret[("main", "a")]]
    f.chain(0, 7, kernel=kernel, user=user)
    f.chain(0, 8, kernel=kernel, user=user)
    for _ in range(6):
        f.sample(1, 0xffffffff81003004, mode=sf.MODE_KERNEL, pid=100,
                 chain=7)
    for _ in range(3):
        f.sample(1, 0xffffffff81004004, mode=sf.MODE_KERNEL, pid=100,
                 chain=8)
    f.appid(2, "x<y>&\"z'", pid=200)
    for _ in range(2):
        f.sample(2, 0x1234, pid=200)
    return f


@pytest.fixture
def ksyms(tmp_path):
    k = tmp_path / "k.kallsyms"
    k.write_text(KSYMS)
    return k


# ---------------------------------------------------------------- readers

def flame(path):
    """The frames of a flame graph SVG: dicts of name, kind, x, w (in
    samples), depth, title, rect (x, y, width, fill) and label, each with
    its path from the root (frames nest by their sample intervals)."""
    root = ET.parse(path).getroot()
    frames = []
    for g in root.iter(SVG + "g"):
        cls = g.get("class", "").split()
        if "f" not in cls:
            continue
        rect, text = g.find(SVG + "rect"), g.find(SVG + "text")
        frames.append({
            "name": g.get("data-n"), "kind": cls[1],
            "x": int(g.get("data-x")), "w": int(g.get("data-w")),
            "depth": int(g.get("data-d")), "title": g.find(SVG + "title").text,
            "rx": float(rect.get("x")), "ry": float(rect.get("y")),
            "rw": float(rect.get("width")), "fill": rect.get("fill"),
            "label": text.text or ""})
    frames.sort(key=lambda f: (f["depth"], f["x"]))
    for f in frames:
        if f["depth"] == 0:
            f["path"] = ()
            continue
        parents = [p for p in frames if p["depth"] == f["depth"] - 1 and
                   p["x"] <= f["x"] and f["x"] + f["w"] <= p["x"] + p["w"]]
        assert len(parents) == 1, (f, parents)
        f["path"] = parents[0]["path"] + (shown(f),)
    return frames


def shown(f):
    """A frame's name as --tree shows it."""
    return f["name"] + (" [k]" if f["kind"] == "kernel" else "")


def tree(stdout):
    """--tree's nodes: {path: (total samples, percent)}."""
    out, stack = {}, []
    for line in stdout.splitlines():
        m = re.match(r"^\s*([\d.]+)%\s+[\d.]+%\s+(\d+)  ( *)(\S.*)$", line)
        if not m:
            continue
        depth = len(m.group(3)) // 2
        stack[depth:] = [m.group(4)]
        out[tuple(stack)] = (int(m.group(2)), float(m.group(1)))
    return out


def title_counts(t):
    m = re.search(r": (\d+) samples?, (\d+\.\d\d)%$", t)
    assert m, t
    return int(m.group(1)), float(m.group(2))


def run_parse(parse_bin, session_file, tmp_path, *args, **kw):
    path = tmp_path / "session.bin"
    path.write_bytes(session_file.data())
    return subprocess.run([str(parse_bin), *map(str, args), str(path)],
                          capture_output=True, text=True, timeout=60, **kw)


# ---------------------------------------------------------------- the file

def test_frames_are_the_call_tree(parse_bin, prog, ksyms, tmp_path):
    """Every frame of the graph is a node of --tree (and every node a
    frame) with its total samples in data-w and in its title, its
    percentage too; the widths and places are proportional to the
    samples, the root at the bottom; the folded stacks through each
    frame add up to its count."""
    out = tmp_path / "f.svg"
    common = ("--mode", "all", "--kallsyms", ksyms)
    r = run_parse(parse_bin, rich_session(prog), tmp_path, "--flamegraph",
                  out, *common)
    assert r.returncode == 0, r.stderr
    assert "Samples by appid and EIP" in r.stdout  # the report as well
    frames = flame(out)
    t = tree(run_parse(parse_bin, rich_session(prog), tmp_path, "--tree",
                       "--min-percent", "0", *common).stdout)
    assert len(t) == 15
    got = {f["path"]: f for f in frames if f["depth"]}
    assert set(got) == set(t)
    root = frames[0]
    assert (root["name"], root["kind"], root["w"]) == ("all", "root", 52)
    assert root["title"] == "all: 52 samples, 100.00%"
    scale = DRAWN / 52
    depth = max(f["depth"] for f in frames)
    for path, f in got.items():
        assert f["w"] == t[path][0], path
        count, pct = title_counts(f["title"])
        assert count == f["w"] and abs(pct - t[path][1]) < 0.006, f
        assert abs(f["rx"] - (PAD + f["x"] * scale)) < 0.006, f
        assert abs(f["rw"] - f["w"] * scale) < 0.006, f
        assert f["ry"] == TOP + (depth - f["depth"]) * ROW, f
    # Children lie side by side within their caller, by name.
    for p in frames:
        kids = [f for f in frames if f["path"][:-1] == p["path"] and
                len(f["path"]) == len(p["path"]) + 1]
        assert sum(k["w"] for k in kids) <= p["w"]
        assert [k["name"] for k in kids] == sorted(k["name"] for k in kids)
    folded = run_parse(parse_bin, rich_session(prog), tmp_path, "--format",
                       "folded", *common).stdout
    stacks = [(line.rsplit(" ", 1)[0].replace("_[k]", " [k]").split(";"),
               int(line.rsplit(" ", 1)[1])) for line in folded.splitlines()]
    for path, f in got.items():
        assert sum(n for s, n in stacks
                   if tuple(s[:len(path)]) == path) == f["w"], path
    # A kernel frame's title names the kind and the DSO.
    (k,) = [f for f in frames if f["name"] == "ksys_read"]
    assert k["title"] == ("ksys_read (kernel, [kernel.kallsyms]): 9 "
                          "samples, 17.31%")


def test_colours_by_kind(parse_bin, prog, ksyms, tmp_path):
    """Each kind has its hue family; a name has the same colour wherever
    it is; the root is grey."""
    out = tmp_path / "f.svg"
    r = run_parse(parse_bin, rich_session(prog), tmp_path, "--flamegraph",
                  out, "--mode", "all", "--kallsyms", ksyms)
    assert r.returncode == 0, r.stderr
    frames = flame(out)
    assert {f["kind"] for f in frames} == {"root", "app", "user", "kernel"}
    by_name = {}
    for f in frames:
        rgb = [int(f["fill"][i:i + 2], 16) / 255 for i in (1, 3, 5)]
        h, _, s = colorsys.rgb_to_hls(*rgb)
        if f["kind"] == "root":
            assert s == 0, f
            continue
        lo, hi = HUES[f["kind"]]
        assert lo - 1 <= h * 360 <= hi + 1, (f["name"], f["fill"], h * 360)
        assert by_name.setdefault((f["name"], f["kind"]), f["fill"]) == \
            f["fill"]
    assert len(set(by_name.values())) > len(by_name) // 2


def test_names_escaped_and_cut(parse_bin, prog, ksyms, tmp_path):
    """The file is well-formed XML whatever the names hold; a label is
    the name, or its start and "..", as fits the frame."""
    out = tmp_path / "f.svg"
    r = run_parse(parse_bin, rich_session(prog), tmp_path, "--flamegraph",
                  out, "--mode", "all", "--kallsyms", ksyms)
    assert r.returncode == 0, r.stderr
    raw = out.read_text()
    assert "operator&lt;&lt;&amp;&quot;quote&#39;d" in raw
    assert "x&lt;y&gt;&amp;&quot;z&#39;#0" in raw
    assert ODD not in raw and "x<y>" not in raw
    frames = flame(out)      # parses
    names = {f["name"] for f in frames}
    assert ODD in names and "x<y>&\"z'#0" in names and LONG in names
    for f in frames:
        label, name = f["label"], f["name"]
        fits = int((f["rw"] - 6) / CHAR_W)
        if len(name) <= fits:
            assert label == name, f
        elif fits < 3:
            assert label == "", f
        else:
            assert label == name[:fits - 2] + "..", f
        assert len(label) * CHAR_W + 6 <= f["rw"] + 1e-9 or not label
    (long,) = [f for f in frames if f["name"] == LONG]
    assert long["label"].endswith("..") and len(long["label"]) > 5


def test_narrow_frames_and_min_percent(parse_bin, tmp_path):
    """Frames narrower than 0.1 px go; --min-percent P drops those under
    P% (only when given: --tree's default does not apply); the frames
    kept keep exact counts."""
    f = sf.SessionFile(nr_cpus=1, hz=1000)
    for appid, name, n in ((1, "big", 12000), (2, "tiny", 1),
                           (3, "small", 2)):
        f.appid(appid, name, pid=appid)
        for _ in range(n):
            f.sample(appid, 0x1000 * appid, pid=appid)
    out = tmp_path / "f.svg"
    r = run_parse(parse_bin, f, tmp_path, "--flamegraph", out, "--tree")
    assert r.returncode == 0, r.stderr
    assert "small#0" not in r.stdout        # the tree's 0.5%
    frames = flame(out)
    assert [(x["name"], x["w"]) for x in frames if x["depth"] == 1] == [
        ("big#0", 12000), ("small#0", 2)]   # 1 sample: 0.098 px
    assert frames[0]["title"] == "all: 12003 samples, 100.00%"
    (small,) = [x for x in frames if x["name"] == "small#0"]
    assert small["title"] == "small#0 (application): 2 samples, 0.02%"
    assert abs(small["rw"] - 2 * DRAWN / 12003) < 0.006
    r = run_parse(parse_bin, f, tmp_path, "--flamegraph", out,
                  "--min-percent", "50")
    assert r.returncode == 0, r.stderr
    assert [(x["name"], x["w"], x["depth"]) for x in flame(out)] == [
        ("all", 12003, 0), ("big#0", 12000, 1),
        ("[unknown]+0x1000", 12000, 2)]


def test_without_chains(parse_bin, prog, tmp_path):
    """Without call chains: the application, then the sampled function."""
    exe, _, syms = prog
    f = sf.SessionFile(version=2)
    f.appid(1, "calltree", pid=100, path=str(exe))
    f.mmap(1, 0x401000, 0x100000, pid=100, pgoff=0x1000, path=str(exe))
    for _ in range(3):
        f.sample(1, syms["leaf"] + 8, pid=100)
    f.sample(1, syms["c"] + 1, pid=100)
    out = tmp_path / "f.svg"
    r = run_parse(parse_bin, f, tmp_path, "--flamegraph", out)
    assert r.returncode == 0, r.stderr
    assert [(x["path"], x["w"]) for x in flame(out)] == [
        ((), 4), (("calltree#0",), 4), (("calltree#0", "c"), 1),
        (("calltree#0", "leaf"), 3)]


def test_inverted(parse_bin, prog, tmp_path):
    """--inverted: the callees at the root, as --tree --inverted."""
    out = tmp_path / "f.svg"
    r = run_parse(parse_bin, tree_session(prog), tmp_path, "--flamegraph",
                  out, "--inverted")
    assert r.returncode == 0, r.stderr
    title = ET.parse(out).getroot().find(SVG + "text").text
    assert title == "Flame graph, user mode, inverted: callees at the root"
    frames = flame(out)
    t = tree(run_parse(parse_bin, tree_session(prog), tmp_path, "--tree",
                       "--inverted", "--min-percent", "0").stdout)
    assert {f["path"]: f["w"] for f in frames if f["depth"]} == \
        {p: v[0] for p, v in t.items()}
    assert [f["name"] for f in frames if f["depth"] == 1] == ["leaf", "main"]


def test_write_errors(parse_bin, prog, tmp_path):
    """A file that cannot be written: one line, exit 1, no file (nor a
    temporary one) left, an older file untouched."""
    s = tree_session(prog)
    bad = tmp_path / "no" / "such" / "f.svg"
    r = run_parse(parse_bin, s, tmp_path, "--flamegraph", bad)
    assert r.returncode == 1
    assert r.stderr == f"parse: {bad}: No such file or directory\n"
    assert not (tmp_path / "no").exists()
    d = tmp_path / "adir"
    d.mkdir()
    r = run_parse(parse_bin, s, tmp_path, "--flamegraph", d)
    assert r.returncode == 1 and r.stderr == f"parse: {d}: Is a directory\n"
    assert d.is_dir() and not (tmp_path / "adir.tmp").exists()
    # A write that fails half way (the file size limit): the old file
    # stays as it was.
    out = tmp_path / "f.svg"
    out.write_text("old")

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (3000, 3000))

    r = run_parse(parse_bin, s, tmp_path, "--flamegraph", out,
                  preexec_fn=limit)
    assert r.returncode == 1, r.stderr
    assert r.stderr == f"parse: {out}: write failed\n"
    assert out.read_text() == "old"
    assert sorted(os.listdir(tmp_path)) == ["adir", "f.svg", "session.bin"]


@pytest.mark.parametrize("args, what", [
    (["--inverted"], "--inverted needs --tree or --flamegraph"),
    (["--min-percent", "1"], "--min-percent needs --tree or --flamegraph"),
    (["--flamegraph", "x.svg", "--min-percent", "200"],
     "--min-percent: invalid percentage '200'"),
])
def test_usage_errors(parse_bin, prog, tmp_path, args, what):
    r = run_parse(parse_bin, tree_session(prog), tmp_path, *args)
    assert r.returncode == 2 and what in r.stderr, r.stderr
    assert len(r.stderr.splitlines()) == 1


def test_help_and_other_outputs(parse_bin, prog, tmp_path):
    """--help tells of it; it goes with the other outputs (here the
    folded stacks on standard output and a plot)."""
    r = subprocess.run([str(parse_bin), "--help"], capture_output=True,
                       text=True)
    assert "--flamegraph OUT.svg" in r.stdout
    assert "frames under P% (default: none)" in r.stdout
    out, plot = tmp_path / "f.svg", tmp_path / "p.svg"
    r = run_parse(parse_bin, tree_session(prog), tmp_path, "--flamegraph",
                  out, "--plot", plot)
    assert r.returncode == 0, r.stderr
    assert plot.exists() and len(flame(out)) == 8
    r = run_parse(parse_bin, tree_session(prog), tmp_path, "--flamegraph",
                  out, "--format", "folded")
    assert r.returncode == 0 and r.stdout.count("\n") == 3, r.stderr
    assert len(flame(out)) == 8
    # --inverted is the graph's (and --tree's), not the folded stacks'.
    r = run_parse(parse_bin, tree_session(prog), tmp_path, "--flamegraph",
                  out, "--format", "folded", "--inverted")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "calltree#0;main 1"
    assert [f["name"] for f in flame(out) if f["depth"] == 1] == \
        ["leaf", "main"]


# ---------------------------------------------------------------- Chromium

@pytest.fixture(scope="module")
def browser():
    if not os.access(cdp.CHROMIUM, os.X_OK):
        pytest.skip(f"{cdp.CHROMIUM} missing (./build.sh installs "
                    "chromium)")
    b = cdp.Browser(timeout=30)
    try:
        yield b
    finally:
        b.close()


@pytest.fixture
def page(browser, parse_bin, prog, tmp_path):
    """tree_session's flame graph, loaded in a tab of 1300 x 900."""
    out = tmp_path / "f.svg"
    r = run_parse(parse_bin, tree_session(prog), tmp_path, "--flamegraph",
                  out)
    assert r.returncode == 0, r.stderr
    p = browser.page()
    p.navigate(out.as_uri())
    yield p
    assert p.exceptions() == []
    browser.send("Target.closeTarget", {"targetId": p.target})


# The frames as the page has them: name, kind, classes, client box,
# display, title, label, fill; n picks one by name and its index.
FRAMES_JS = """[].map.call(document.querySelectorAll('g.f'), function (g) {
  var r = g.querySelector('rect'), b = r.getBoundingClientRect();
  return {name: g.getAttribute('data-n'), cls: g.getAttribute('class'),
    x: b.x, y: b.y, w: b.width, h: b.height,
    display: getComputedStyle(g).display,
    title: g.querySelector('title').textContent,
    label: g.querySelector('text').textContent,
    fill: getComputedStyle(r).fill};
})"""


def frames_of(p):
    fs = p.evaluate(FRAMES_JS)
    for i, f in enumerate(fs):
        f["i"] = i
    return fs


def one(frames, name, nth=0):
    return [f for f in frames if f["name"] == name][nth]


def centre(f):
    return f["x"] + f["w"] / 2, f["y"] + f["h"] / 2


def pixel(p, x, y):
    """The rendered colour at (x, y): a 1x1 screenshot's one pixel (every
    PNG filter predicts 0 for the first pixel, so it is the raw bytes)."""
    png = base64.b64decode(p.send("Page.captureScreenshot", {
        "format": "png", "clip": {"x": x, "y": y, "width": 1, "height": 1,
                                  "scale": 1}})["data"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, i = {}, 8
    while i < len(png):
        n, kind = struct.unpack(">I4s", png[i:i + 8])
        chunks[kind] = chunks.get(kind, b"") + png[i + 8:i + 8 + n]
        i += 12 + n
    w, h, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (w, h, depth) == (1, 1, 8) and colour in (2, 6)
    return tuple(zlib.decompress(chunks[b"IDAT"])[1:4])


def test_renders(page):
    """Drawn as written: each frame where its rect says, in its colour,
    hit-testable at its centre; a label on the wide ones."""
    frames = frames_of(page)
    assert len(frames) == 8
    a = one(frames, "a")
    assert abs(a["w"] - 30 / 41 * DRAWN) < 0.01 and abs(a["x"] - PAD) < 0.01
    assert a["label"] == "a" and a["display"] != "none"
    hit = page.evaluate(f"document.elementFromPoint({centre(a)[0]}, "
                        f"{centre(a)[1]}).parentNode.getAttribute('data-n')")
    assert hit == "a"
    for f in frames:
        want = tuple(int(c) for c in re.findall(r"\d+", f["fill"]))
        assert pixel(page, f["x"] + f["w"] - 4, f["y"] + f["h"] / 2) == \
            want, f


def test_click_zooms(page):
    """A real click on a frame: it fills the width; its callers span it,
    faded; its sibling and the sibling's callees are hidden; the status
    line shows the frame. Reset zoom, and a click on all, go back."""
    before = frames_of(page)
    a, c = one(before, "a"), one(before, "c")
    page.click(*centre(a))
    after = frames_of(page)
    za = after[a["i"]]
    assert abs(za["x"] - PAD) < 0.01 and abs(za["w"] - DRAWN) < 0.01, za
    assert za["label"] == "a" and "faded" not in za["cls"]
    for name in ("all", "calltree#0", "main"):
        f = one(after, name)
        assert "faded" in f["cls"] and abs(f["w"] - DRAWN) < 0.01, f
        assert f["display"] != "none"
    assert one(after, "b")["w"] == za["w"] == one(after, "leaf")["w"]
    for f in (after[c["i"]], one(after, "leaf", 1)):
        assert f["display"] == "none" and f["w"] == 0, f
    status = page.evaluate("document.getElementById('status').textContent")
    assert status == a["title"]
    reset = page.evaluate("(function () { var b = document.getElementById("
                          "'reset').getBoundingClientRect(); return [b.x, "
                          "b.y, b.width, b.height]; })()")
    assert reset[2] > 20, "Reset zoom is not shown"
    page.click(reset[0] + reset[2] / 2, reset[1] + reset[3] / 2)
    back = frames_of(page)
    assert [(f["x"], f["w"], f["display"]) for f in back] == \
        [(f["x"], f["w"], f["display"]) for f in before]
    assert page.evaluate("document.getElementById('reset')"
                         ".getBoundingClientRect().width") == 0
    # Zoomed into c, the leaf it calls spans the width; a click on
    # "all" goes back.
    page.click(*centre(c))
    assert abs(one(frames_of(page), "leaf", 1)["w"] - DRAWN) < 0.01
    page.click(*centre(one(frames_of(page), "all")))
    assert [f["w"] for f in frames_of(page)] == [f["w"] for f in before]


def test_search(page):
    """Typed into the search box: matching frames highlighted, the share
    of all samples under them shown (nested matches counted once)."""
    page.evaluate("document.getElementById('search').focus()")
    page.insert_text("^leaf$")
    frames = frames_of(page)
    hits = [f["name"] for f in frames if "match" in f["cls"].split()]
    assert hits == ["leaf", "leaf"]
    assert all(f["fill"] == "rgb(230, 0, 230)" for f in frames
               if f["name"] == "leaf")
    assert one(frames, "a")["fill"] != "rgb(230, 0, 230)"

    def matched():
        return page.evaluate("document.getElementById('matched')"
                             ".textContent")

    assert matched() == "Matched: 97.56% of all samples (2 frames)"
    page.evaluate("(function (i) { i.value = '^[abc]$'; "
                  "i.dispatchEvent(new Event('input')); })("
                  "document.getElementById('search'))")
    assert matched() == "Matched: 97.56% of all samples (3 frames)"
    page.evaluate("(function (i) { i.value = '('; "
                  "i.dispatchEvent(new Event('input')); })("
                  "document.getElementById('search'))")
    assert matched() == "Matched: 0.00% of all samples (0 frames)"
    page.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": "Escape",
                                         "code": "Escape",
                                         "windowsVirtualKeyCode": 27})
    assert matched() == ""
    assert not any("match" in f["cls"].split() for f in frames_of(page))


def test_tooltips(page, prog):
    """Each frame's <title>: its name, kind, DSO, count and percentage;
    hovering shows it in the status line."""
    exe = prog[0]
    frames = frames_of(page)
    assert [f["title"] for f in frames] == [
        "all: 41 samples, 100.00%",
        "calltree#0 (application): 41 samples, 100.00%",
        f"main (user, {exe}): 41 samples, 100.00%",
        f"a (user, {exe}): 30 samples, 73.17%",
        f"b (user, {exe}): 30 samples, 73.17%",
        f"leaf (user, {exe}): 30 samples, 73.17%",
        f"c (user, {exe}): 10 samples, 24.39%",
        f"leaf (user, {exe}): 10 samples, 24.39%",
    ]
    c = one(frames, "c")
    page.mouse("mouseMoved", *centre(c))
    assert page.evaluate("document.getElementById('status').textContent") \
        == c["title"]


def test_logical_frames_drawn_green(browser, parse_bin, tmp_path):
    """The logical stacks' activity tree (--tree lstack): its logical
    frames are drawn where their rects say, in their green (hue 92 to
    140 degrees, apart from the other kinds'), and the legend shows that
    colour named "logical frame"."""
    from test_parse_lstack import server_session
    out = tmp_path / "f.svg"
    r = run_parse(parse_bin, server_session(), tmp_path, "--tree", "lstack",
                  "--flamegraph", out, "--symfs", tmp_path)
    assert r.returncode == 0, r.stderr
    p = browser.page()
    try:
        p.navigate(out.as_uri())
        frames = frames_of(p)
        logical = [f for f in frames if "logical" in f["cls"].split()]
        assert sorted(f["name"] for f in logical) == sorted(
            ["1", "2", "4", "5", "[truncated]", "6", "9", "10"])
        for f in logical:
            assert f["display"] != "none" and f["w"] > 8, f
            rgb = pixel(p, f["x"] + f["w"] - 4, f["y"] + f["h"] / 2)
            want = tuple(int(c) for c in re.findall(r"\d+", f["fill"]))
            assert rgb == want, f
            h, _, _ = colorsys.rgb_to_hls(*[c / 255 for c in rgb])
            assert 91 <= h * 360 <= 141, (f["name"], rgb)
        key = p.evaluate("""(function () {
          var g = document.querySelector('#legend g.logical');
          var b = g.querySelector('rect').getBoundingClientRect();
          return {x: b.x, y: b.y, w: b.width, h: b.height,
                  text: g.querySelector('text').textContent};
        })()""")
        assert key["text"] == "logical frame" and key["w"] == 12
        rgb = pixel(p, key["x"] + 6, key["y"] + 6)
        h, _, _ = colorsys.rgb_to_hls(*[c / 255 for c in rgb])
        assert 91 <= h * 360 <= 141, rgb
        # The status line shows a logical frame's title on hover.
        (scan,) = [f for f in logical if f["name"] == "5"]
        p.mouse("mouseMoved", *centre(scan))
        assert p.evaluate("document.getElementById('status')"
                          ".textContent") == scan["title"]
        assert scan["title"].startswith("5 (logical): 22 samples, 38.60%")
        assert p.exceptions() == []
    finally:
        browser.send("Target.closeTarget", {"targetId": p.target})
