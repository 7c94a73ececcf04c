"""Host-side tests of parse's groupings and filters (no VM, no ELF files).

A synthetic session with several appids, CPUs, modes and a known sample
time line; the expected report of every --by combination without symbols
and of every filter is computed here from the samples, independently of
parse, and compared row by row (CSV and JSON), with totals and
percentages relative to the filtered set.

    /usr/bin/python3 -m pytest tests/test_parse_reports.py
"""
import collections
import csv
import io
import json
import random
import re
import subprocess
import xml.etree.ElementTree as ET

import pytest

import sleepyfile as sf
from conftest import TOP

MODE_NAMES = ["user", "kernel", "irq", "idle"]

# appid -> (name, instance, pid); appid 9 has samples but no record.
APPIDS = {
    1: ("loop", 0, 100),
    2: ("loop", 1, 101),
    3: ("call", 0, 102),
    4: ("btree", 0, 103),
    5: ("[idle]", 0, 0),
}
S = collections.namedtuple("S", "appid pid tid cpu mode ip time_ns")


def make_samples():
    rng = random.Random(5)
    out = []
    for i in range(3000):
        a = rng.choice([1, 1, 1, 2, 2, 3, 4, 4, 5, 9])
        pid = APPIDS[a][2] if a in APPIDS else 999
        if a == 5:
            mode = sf.MODE_IDLE
        else:
            mode = rng.choice([sf.MODE_USER] * 6 + [sf.MODE_KERNEL] * 2 +
                              [sf.MODE_IRQ])
        ip = (0x400000 + 16 * rng.randrange(12) if mode == sf.MODE_USER
              else 0xffffffff81000000 + 16 * rng.randrange(6))
        # Three threads a process (the idle task's tid is 0).
        tid = pid + i % 3 if pid else 0
        out.append(S(a, pid, tid, rng.randrange(3), mode, ip,
                     i * 1_000_000))
    return out


SAMPLES = make_samples()


@pytest.fixture(scope="session")
def session_file(tmp_path_factory):
    f = sf.SessionFile(nr_cpus=3)
    for a, (name, inst, pid) in APPIDS.items():
        if a != 4:
            f.appid(a, name, instance=inst, pid=pid)
    for s in SAMPLES:
        f.sample(s.appid, s.ip, mode=s.mode, cpu=s.cpu, pid=s.pid,
                 tid=s.tid, time_ns=s.time_ns,
                 user_ip=0x400000 if s.mode == sf.MODE_KERNEL else None)
    name, inst, pid = APPIDS[4]
    f.appid(4, name, instance=inst, pid=pid)    # after its samples
    f.stats(samples_taken=len(SAMPLES), samples_written=len(SAMPLES))
    return f.write(tmp_path_factory.mktemp("s") / "session.bin")


def run(parse_bin, *args):
    return subprocess.run([str(parse_bin), *map(str, args)],
                          capture_output=True, text=True, timeout=60)


# ---------------------------------------------------------------- model

def select(mode="user", app=None, appid=None, pid=None, tid=None, cpu=None,
           t_from=None, t_to=None):
    out = []
    for s in SAMPLES:
        if mode != "all" and s.mode != MODE_NAMES.index(mode):
            continue
        info = APPIDS.get(s.appid)
        if app is not None and (not info or info[0] != app):
            continue
        if appid is not None and (not info or
                                  f"{info[0]}#{info[1]}" != appid):
            continue
        if pid is not None and s.pid != pid:
            continue
        if tid is not None and s.tid != tid:
            continue
        if cpu is not None and s.cpu != cpu:
            continue
        if t_from is not None and s.time_ns < t_from * 1e9:
            continue
        if t_to is not None and s.time_ns >= t_to * 1e9:
            continue
        out.append(s)
    return out


def app_key(fields, s):
    """Identity and order of the app column."""
    info = APPIDS.get(s.appid)
    if "app" in fields:
        return (0, info[0].encode(), 0, 0) if info else (1, b"", 0, s.appid)
    if "appid" in fields:
        return (0, info[0].encode(), info[1], s.appid) if info else \
            (1, b"", 0, s.appid)
    return ()


def expected(fields, mode="user", top=None, **filters):
    """CSV rows of a generic (non-base) report."""
    rows = select(mode, **filters)
    total = len(rows)
    c = collections.Counter()
    for s in rows:
        key = (app_key(fields, s),
               s.mode if "mode" in fields else -1,
               s.tid if "tid" in fields else -1,
               s.cpu if "cpu" in fields else -1,
               s.ip if "eip" in fields else -1)
        c[key] += 1
    out = []
    for (ak, m, tid, cpu, ip), n in sorted(c.items(),
                                      key=lambda kv: (-kv[1], kv[0])):
        row = []
        if ak:
            if ak[0] == 1:
                row += [f"?appid={ak[3]}", "", ""]
            else:
                name = ak[1].decode()
                if "appid" in fields:
                    inst = ak[2]
                    pid = APPIDS[ak[3]][2]
                    row += [name, str(inst), str(pid)]
                else:
                    row += [name, "", ""]
        else:
            row += ["", "", ""]
        row.append(MODE_NAMES[m] if "mode" in fields else mode)
        if "tid" in fields:
            row.append(str(tid))
        if "cpu" in fields:
            row.append(str(cpu))
        if "eip" in fields:
            row.append(hex(ip))
        row += [str(n), f"{n * 100 / total:.2f}"]
        out.append(row)
    return (out[:top] if top else out), total


def csv_rows(text):
    return list(csv.reader(io.StringIO(text)))


FILTERS = {
    "none": ([], {}),
    "app": (["--app", "loop"], {"app": "loop"}),
    "appid": (["--appid", "loop#1"], {"appid": "loop#1"}),
    "appid-late-record": (["--appid", "btree#0"], {"appid": "btree#0"}),
    "pid": (["--pid", "102"], {"pid": 102}),
    "tid": (["--tid", "101"], {"tid": 101}),
    "tid-of-a-thread": (["--tid", "103"], {"tid": 103}),
    "cpu": (["--cpu", "2"], {"cpu": 2}),
    "from": (["--from", "1.5"], {"t_from": 1.5}),
    "to": (["--to", "0.75"], {"t_to": 0.75}),
    "window": (["--from", "0.5", "--to", "2.25"],
               {"t_from": 0.5, "t_to": 2.25}),
    "combined": (["--app", "loop", "--cpu", "1", "--from", "1"],
                 {"app": "loop", "cpu": 1, "t_from": 1.0}),
    "nothing": (["--pid", "4242"], {"pid": 4242}),
}

GENERIC_BYS = ["cpu", "mode", "appid,mode", "app,cpu", "mode,cpu,eip",
               "appid,cpu,mode,eip", "app,eip", "cpu,eip", "tid",
               "appid,tid", "tid,cpu,eip"]


@pytest.mark.parametrize("by", GENERIC_BYS)
@pytest.mark.parametrize("mode", ["user", "all"])
@pytest.mark.parametrize("filt", sorted(FILTERS))
def test_generic_reports_with_filters(parse_bin, session_file, by, mode,
                                      filt):
    args, kw = FILTERS[filt]
    r = run(parse_bin, "--by", by, "--mode", mode, "--format", "csv", *args,
            session_file)
    assert r.returncode == 0, r.stderr
    fields = by.split(",")
    want, _ = expected(fields, mode, **kw)
    rows = csv_rows(r.stdout)
    head = ["app", "instance", "pid", "mode"] + \
        [f for f in ("tid", "cpu", "eip") if f in fields] + \
        ["samples", "percent"]
    assert rows[0] == head
    assert rows[1:] == want


def test_sqlite_samples_keep_their_tid(parse_bin, session_file, tmp_path):
    db = tmp_path / "s.db"
    r = run(parse_bin, "--mode", "all", "--sqlite", db, session_file)
    assert r.returncode == 0, r.stderr
    got = subprocess.run(
        ["sqlite3", "-csv", db, "SELECT pid, tid, SUM(samples) FROM samples "
         "GROUP BY pid, tid ORDER BY pid, tid"], capture_output=True,
        text=True, check=True).stdout
    want = collections.Counter((s.pid, s.tid) for s in SAMPLES)
    assert got == "".join(f"{p},{t},{n}\n" for (p, t), n in
                          sorted(want.items()))


def base_expected(by, mode, **kw):
    """The base reports' CSV rows (report.c's layout)."""
    rows = select(mode, **kw)
    total = len(rows)
    c = collections.Counter()
    for s in rows:
        if by == "eip":
            c[((), s.ip)] += 1
        else:
            c[(app_key([by.replace("-eip", "")], s),
               s.ip if by == "appid-eip" else -1)] += 1
    out = []
    for (ak, ip), n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])):
        if not ak:
            row = ["", "", ""]
        elif ak[0] == 1:
            row = [f"?appid={ak[3]}", "", ""]
        elif by == "app":
            row = [ak[1].decode(), "", ""]
        else:
            row = [ak[1].decode(), str(ak[2]), str(APPIDS[ak[3]][2])]
        out.append(row + [mode, hex(ip) if ip >= 0 else "", str(n),
                          f"{n * 100 / total:.2f}"])
    return out


@pytest.mark.parametrize("by", ["app", "appid", "eip", "appid-eip"])
@pytest.mark.parametrize("filt", sorted(FILTERS))
def test_base_reports_with_filters(parse_bin, session_file, by, filt):
    args, kw = FILTERS[filt]
    r = run(parse_bin, "--by", by, "--mode", "all", "--format", "csv", *args,
            session_file)
    assert r.returncode == 0, r.stderr
    rows = csv_rows(r.stdout)
    assert rows[0] == "app,instance,pid,mode,eip,samples,percent".split(",")
    assert rows[1:] == base_expected(by, "all", **kw)


@pytest.mark.parametrize("by", ["appid", "appid,cpu", "eip"])
def test_top_limits_rows_not_totals(parse_bin, session_file, by):
    want, total = expected(by.split(","), "all", top=3)
    r = run(parse_bin, "--by", by, "--mode", "all", "--top", "3", "--format",
            "json", session_file)
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["total"] == total and j["top"] == 3
    assert len(j["rows"]) == 3 and j["rows_total"] > 3
    assert [str(row["samples"]) for row in j["rows"]] == \
        [w[-2] for w in want]
    r = run(parse_bin, "--by", by, "--mode", "all", "--top", "3",
            session_file)
    assert re.search(rf": {total} samples$", r.stdout, re.M)
    assert "(top 3 of " in r.stdout or by == "eip"


def test_text_reports_state_totals_and_filters(parse_bin, session_file):
    r = run(parse_bin, "--by", "appid,cpu", "--app", "loop", "--cpu", "1",
            session_file)
    assert r.returncode == 0, r.stderr
    _, total = expected(["appid", "cpu"], app="loop", cpu=1)
    assert re.search(rf"^filters +app loop, cpu 1: {total} samples$",
                     r.stdout, re.M)
    assert re.search(rf"^Samples by appid and CPU, user mode: {total} "
                     r"samples$", r.stdout, re.M)
    assert max(map(len, r.stdout.splitlines())) <= 80
    pcts = re.findall(r"^ +\d+ +[\d.]+s +([\d.]+)%", r.stdout, re.M)
    assert abs(sum(map(float, pcts)) - 100) < 0.1


def test_json_base_report(parse_bin, session_file):
    r = run(parse_bin, "--by", "appid-eip", "--format", "json", "--from",
            "1", session_file)
    j = json.loads(r.stdout)
    want, total = expected(["appid", "eip"], t_from=1.0)
    assert j["total"] == total and j["by"] == ["appid", "eip"]
    assert j["filters"]["from"] == 1.0 and j["filters"]["to"] is None
    got = [[row["app"], "" if row["instance"] is None else
            str(row["instance"]), "" if row["pid"] is None else
            str(row["pid"]), row["mode"], row["eip"], str(row["samples"]),
            f"{row['percent']:.2f}"] for row in j["rows"]]
    assert got == want
    assert j["unresolved"] == {}
    assert j["session"]["samples"] == len(SAMPLES)


def test_json_default_is_appid_eip(parse_bin, session_file):
    j = json.loads(run(parse_bin, "--format", "json", session_file).stdout)
    assert j["by"] == ["appid", "eip"]


def test_svg_plots(parse_bin, session_file, tmp_path):
    ns = {"s": "http://www.w3.org/2000/svg"}
    svg = tmp_path / "eip.svg"
    r = run(parse_bin, "--by", "eip", "--app", "loop", "--plot", svg,
            session_file)
    assert r.returncode == 0, r.stderr
    root = ET.parse(svg).getroot()
    bars = [e for e in root.findall("s:rect", ns) if e.find("s:title", ns)
            is not None]
    want = collections.Counter(s.ip for s in select(app="loop"))
    assert len(bars) == len(want)
    got = {}
    for b in bars:
        m = re.match(r"0x([0-9a-f]+) .*: (\d+) samples",
                     b.find("s:title", ns).text)
        got[int(m.group(1), 16)] = int(m.group(2))
    assert got == dict(want)
    # Bars in address order, heights proportional to samples.
    xs = [float(b.get("x")) for b in bars]
    assert xs == sorted(xs)
    hmax = max(float(b.get("height")) for b in bars)
    for b in bars:
        n = int(re.search(r": (\d+) samples",
                          b.find("s:title", ns).text).group(1))
        assert abs(float(b.get("height")) - hmax * n / max(want.values())) \
            < 0.01
    svg = tmp_path / "cpu.svg"
    r = run(parse_bin, "--by", "appid,cpu", "--mode", "all", "--plot", svg,
            "--format", "csv", session_file)
    assert r.returncode == 0, r.stderr
    root = ET.parse(svg).getroot()
    assert len(root.findall("s:rect", ns)) == 1 + len(
        expected(["appid", "cpu"], "all")[0])
    r = run(parse_bin, "--by", "cpu", "--plot", tmp_path / "no/such.svg",
            session_file)
    assert r.returncode == 1 and "no/such.svg" in r.stderr


def test_streaming_memory_is_bounded_by_keys(parse_bin, tmp_path):
    """Ten times the samples over the same keys: about the same memory."""
    def peak(n):
        path = tmp_path / f"s{n}.bin"
        subprocess.run(["/usr/bin/python3", str(TOP / "tests/sleepyfile.py"),
                        "synth", str(path), "--samples", str(n), "--ips",
                        "256"], check=True)
        r = subprocess.run(["/usr/bin/time", "-f", "%M", str(parse_bin),
                            "--by", "appid,cpu,mode,eip", "--mode", "all",
                            "--format", "csv", str(path)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return int(r.stderr.strip().splitlines()[-1])
    small, big = peak(100_000), peak(1_000_000)
    assert big < small * 1.5 + 2048, (small, big)


GOLDEN = {
    ("--by", "appid,mode", "--mode", "all", "--top", "5"): """\
Samples by appid and mode, all modes: 3000 samples
samples    time  percent  appid     mode
    582  2.328s   19.40%  loop#0    user
    421  1.684s   14.03%  loop#1    user
    394  1.576s   13.13%  btree#0   user
    307  1.228s   10.23%  [idle]#0  idle
    225  0.900s    7.50%  call#0    user
  (top 5 of 16 rows)
""",
    ("--by", "cpu,eip", "--app", "call", "--from", "1", "--to", "2",
     "--top", "4"): """\
filters       app call, time 1.000 s to 2.000 s: 69 samples

Samples by CPU and EIP, user mode: 69 samples
samples    time  percent  cpu  eip
      5  0.020s    7.25%    2  0x400040
      4  0.016s    5.80%    0  0x400020
      4  0.016s    5.80%    0  0x400080
      4  0.016s    5.80%    1  0x400030
  (top 4 of 29 rows)
""",
}


@pytest.mark.parametrize("args", sorted(GOLDEN))
def test_golden_text(parse_bin, session_file, args):
    """The text layout, pinned (the counts are the model's: see the CSV
    tests)."""
    r = run(parse_bin, *args, session_file)
    assert r.returncode == 0, r.stderr
    first = GOLDEN[args].splitlines()[0].split()[0]
    start = r.stdout.index("\n" + first) + 1
    assert r.stdout[start:] == GOLDEN[args]
