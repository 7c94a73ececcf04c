"""Host-side tests of parse's logical stacks (issue 16): format version 4's
logical stack parts and OFFCPU records, and the activity tree (--tree
lstack) in every output. No VM: the sessions are synthetic
(tests/sleepyfile.py), of a query server whose logical stacks are known,
so that every count in the tree is known too.

    /usr/bin/python3 -m pytest tests/test_parse_lstack.py
"""
import colorsys
import json
import random
import re
import sqlite3
import subprocess
import xml.etree.ElementTree as ET

import pytest

import sleepyfile as sf
import sleepyread
from conftest import run, uapi_values
from test_parse_stacks import KSYMS, prog  # noqa: F401

# The server's frame ids, as its names file names them.
(REQUEST, PARSE, PLAN, EXECUTE, SCAN, SORT, IO_WAIT, LOCK_WAIT, BACKGROUND,
 FLUSH) = range(1, 11)
NAMES = {REQUEST: "request", PARSE: "parse", PLAN: "plan",
         EXECUTE: "execute", SCAN: "scan", SORT: "sort", IO_WAIT: "io_wait",
         LOCK_WAIT: "lock_wait", BACKGROUND: "background", FLUSH: "flush"}
MS = 1_000_000
USER_IP, KERNEL_IP = 0x401000, 0xffffffff81001000
SVG = "{http://www.w3.org/2000/svg}"

# The server's samples: (count, logical stack or None, tid, mode, lstack
# flags). Stacks are bottom first; a frame (id, arg) or an id (arg 0).
SAMPLES = [
    (10, [REQUEST, PARSE], 101, sf.MODE_USER, 0),
    (15, [REQUEST, (EXECUTE, 1), SCAN], 101, sf.MODE_USER, 0),
    (5, [REQUEST, (EXECUTE, 1), SCAN], 101, sf.MODE_KERNEL, 0),
    (6, [REQUEST, (EXECUTE, 2), SORT], 102, sf.MODE_USER, 0),
    (4, [REQUEST, (EXECUTE, 1)], 102, sf.MODE_USER, 0),
    (3, [], 101, sf.MODE_USER, 0),                  # depth 0: the app's
    (5, [BACKGROUND], 103, sf.MODE_USER, 0),        # a disjoint tree
    (7, [BACKGROUND, FLUSH], 103, sf.MODE_KERNEL, 0),
    (2, [REQUEST, (EXECUTE, 1), SCAN], 101, sf.MODE_USER,
     sf.LSTACK_F_TRUNCATED),
    (4, None, 104, sf.MODE_USER, 0),                # not registered
    (2, [], 101, sf.MODE_USER, sf.LSTACK_F_TORN),
    (1, [], 102, sf.MODE_USER, sf.LSTACK_F_FAULT),
]
CLIENT_SAMPLES = 9      # appid 2, no logical stacks
# The server's OFFCPU records: (tid, time_ns, off_ns, stack, flags).
OFFCPU = [
    (101, 100 * MS, 5 * MS, [REQUEST, (EXECUTE, 1), IO_WAIT], 0),
    (102, 110 * MS, 10 * MS, [REQUEST, (EXECUTE, 2), LOCK_WAIT], 0),
    (101, 120 * MS, 7 * MS, [REQUEST, (EXECUTE, 1), IO_WAIT], 0),
    (101, 140 * MS, 8 * MS, [REQUEST, (EXECUTE, 1), IO_WAIT], 0),
    (102, 150 * MS, 30 * MS, [REQUEST, (EXECUTE, 2), LOCK_WAIT], 0),
    (101, 200 * MS, 4 * MS, [], 0),
    (103, 210 * MS, 6 * MS, [BACKGROUND], 0),
    (101, 220 * MS, 2 * MS, [], sf.LSTACK_F_TORN),
]


def server_session(*, version=sf.FORMAT_VERSION, lstacks=True):
    """The server (appid 1, pid 100) and a client without logical stacks
    (appid 2, pid 200); samples 1 ms apart from 0, off-CPU records later.
    lstacks=False writes the same samples without their logical stacks."""
    f = sf.SessionFile(hz=1000, nr_cpus=2, version=version,
                       flags=sf.SAMPLE_F_LSTACK if lstacks else 0)
    f.appid(1, "server", pid=100, path="/usr/bin/server")
    f.appid(2, "client", pid=200, path="/usr/bin/client")
    t = 0
    for n, stack, tid, mode, flags in SAMPLES:
        for _ in range(n):
            kw = dict(lstack=stack, lstack_flags=flags) if lstacks else {}
            f.sample(1, KERNEL_IP if mode else USER_IP, mode=mode, pid=100,
                     tid=tid, cpu=t % 2, time_ns=t * MS, **kw)
            t += 1
    for _ in range(CLIENT_SAMPLES):
        f.sample(2, USER_IP, pid=200, tid=200, cpu=t % 2, time_ns=t * MS)
        t += 1
    for tid, when, off, stack, flags in OFFCPU if lstacks else ():
        f.offcpu(1, off, cpu=tid % 2, pid=100, tid=tid, time_ns=when,
                 state=sf.OFFCPU_DISK if stack[-1:] == [IO_WAIT] else
                 sf.OFFCPU_SLEEP, lstack=stack, lstack_flags=flags)
    st = dict(samples_taken=t, samples_written=t, appids=2)
    if lstacks:
        st.update(lstack_samples=t - 4 - CLIENT_SAMPLES, lstack_retries=5,
                  lstack_torn=2, lstack_faults=1, lstack_truncated=2,
                  offcpu_records=len(OFFCPU) + 1, offcpu_dropped=1)
    f.stats(**st)
    return f


def names_text(names=NAMES):
    return "".join(f"{i} {n}\n" for i, n in names.items())


@pytest.fixture
def lparse(parse, tmp_path):
    """parse(session, *args, names=TEXT): parse with the server's names
    file next to the session (names=None: none), and an empty --symfs
    folder unless args give one, so that no /tmp file is read."""
    empty = tmp_path / "empty-symfs"
    empty.mkdir()

    def _run(f, *args, names=names_text()):
        side = tmp_path / "session.bin.lstack-100.names"
        if names is None:
            side.unlink(missing_ok=True)
        else:
            side.write_text(names)
        if "--symfs" not in args:
            args += ("--symfs", empty)
        return parse(f, *args)
    return _run


ROW = re.compile(r"^ *([\d.]+)%  +([\d.]+)%  +(\d+)  +(\d+)  +([\d.]+)s"
                 r"  +([\d.]+)s  ( *)(\S.*)$")


def tree_rows(stdout):
    """The activity tree's rows: (depth, name, total %, self %, total,
    self, off-CPU total s, off-CPU self s)."""
    out = []
    for line in stdout.splitlines():
        m = ROW.match(line)
        if m:
            out.append((len(m.group(7)) // 2, m.group(8), m.group(1),
                        m.group(2), int(m.group(3)), int(m.group(4)),
                        m.group(5), m.group(6)))
    return out


def row(depth, name, total, self, off, off_self, all_=57):
    """A row as text prints it, from its counts (off in ms)."""
    return (depth, name, f"{100 * total / all_:.2f}",
            f"{100 * self / all_:.2f}", total, self, f"{off / 1000:.3f}",
            f"{off_self / 1000:.3f}")


# The tree of server_session, all modes, frames named: 57 samples, 70 ms
# off-CPU. Counted by hand from SAMPLES and OFFCPU.
TREE = [
    row(0, "server#0", 57, 3, 70, 4),
    row(1, "request", 42, 0, 60, 0),
    row(2, "execute", 32, 4, 60, 0),
    row(3, "scan", 22, 20, 0, 0),
    row(4, "[truncated]", 2, 2, 0, 0),
    row(3, "sort", 6, 6, 0, 0),
    row(3, "lock_wait", 0, 0, 40, 40),
    row(3, "io_wait", 0, 0, 20, 20),
    row(2, "parse", 10, 10, 0, 0),
    row(1, "background", 12, 5, 6, 6),
    row(2, "flush", 7, 7, 0, 0),
]


# ---------------------------------------------------------------- the format

def test_layout_matches_the_uapi_header(tmp_path):
    """sleepyfile.py's logical stack records are the C header's."""
    got = uapi_values(tmp_path, [
        "sizeof(struct sleepy_rec_offcpu)",
        "offsetof(struct sleepy_rec_offcpu, cpu)",
        "offsetof(struct sleepy_rec_offcpu, state)",
        "offsetof(struct sleepy_rec_offcpu, appid)",
        "offsetof(struct sleepy_rec_offcpu, time_ns)",
        "offsetof(struct sleepy_rec_offcpu, off_ns)",
        "offsetof(struct sleepy_rec_offcpu, lstack)",
        "sizeof(struct sleepy_rec_lstack)",
        "sizeof(struct sleepy_lstack_frame)",
        "SLEEPY_REC_OFFCPU",
        "SLEEPY_SAMPLE_F_LSTACK",
        "SAMPLE_F_LSTACK",
        "SLEEPY_LSTACK_F_TRUNCATED",
        "SLEEPY_LSTACK_F_TORN",
        "SLEEPY_LSTACK_F_FAULT",
        "SLEEPY_LSTACK_SAMPLE_FRAMES",
        "SLEEPY_OFFCPU_SLEEP",
        "SLEEPY_OFFCPU_DISK",
        "SLEEPY_OFFCPU_OTHER",
        "SAMPLE_STATS_SIZE_VER3",
        "sizeof(struct sleepy_rec_cpu_stats)",
        "offsetof(struct sleepy_rec_cpu_stats, lstack_samples)",
    ])
    assert got["sizeof(struct sleepy_rec_offcpu)"] == sf.OFFCPU_SIZE == 38
    fields = ["hdr", "hdr2", "cpu", "state", "reserved", "appid", "pid",
              "tid", "time_ns", "off_ns"]
    fmt = "<HHHBBIIIQQ"
    for name in ("cpu", "state", "appid", "time_ns", "off_ns"):
        i = fields.index(name)
        assert got[f"offsetof(struct sleepy_rec_offcpu, {name})"] == \
            sf.struct.calcsize(fmt[:i + 1]), name
    assert got["offsetof(struct sleepy_rec_offcpu, lstack)"] == \
        sf.OFFCPU.size
    assert got["sizeof(struct sleepy_rec_lstack)"] == sf.LSTACK.size
    assert got["sizeof(struct sleepy_lstack_frame)"] == sf.LSTACK_FRAME.size
    assert (got["SLEEPY_REC_OFFCPU"], got["SLEEPY_SAMPLE_F_LSTACK"],
            got["SAMPLE_F_LSTACK"]) == (sf.REC_OFFCPU, sf.SAMPLE_F_LSTACK,
                                        sf.SAMPLE_F_LSTACK)
    assert (got["SLEEPY_LSTACK_F_TRUNCATED"], got["SLEEPY_LSTACK_F_TORN"],
            got["SLEEPY_LSTACK_F_FAULT"]) == (
        sf.LSTACK_F_TRUNCATED, sf.LSTACK_F_TORN, sf.LSTACK_F_FAULT)
    assert got["SLEEPY_LSTACK_SAMPLE_FRAMES"] == sf.LSTACK_SAMPLE_FRAMES
    assert (got["SLEEPY_OFFCPU_SLEEP"], got["SLEEPY_OFFCPU_DISK"],
            got["SLEEPY_OFFCPU_OTHER"]) == (
        sf.OFFCPU_SLEEP, sf.OFFCPU_DISK, sf.OFFCPU_OTHER)
    assert got["SAMPLE_STATS_SIZE_VER3"] == sf.SAMPLE_STATS_SIZE_V4
    assert got["sizeof(struct sleepy_rec_cpu_stats)"] == sf.CPU_STATS_SIZE


def test_sleepyread_reads_what_sleepyfile_writes(tmp_path):
    """The test suite's reader: samples' logical stacks (none, depth 0,
    frames with args, flags), OFFCPU records, the new statistics."""
    s = sleepyread.read(server_session().write(tmp_path / "s"))
    assert s.header["version"] == sf.FORMAT_VERSION
    stacks = [x["lstack"] for x in s.samples if x["appid"] == 1]
    assert stacks[0] == dict(frames=[(REQUEST, 0), (PARSE, 0)], flags=0,
                             truncated=False, torn=False, fault=False)
    assert sum(x is None for x in stacks) == 4
    assert sum(x is not None and x["frames"] == [] and not x["flags"]
               for x in stacks) == 3
    assert sum(x is not None and x["torn"] for x in stacks) == 2
    assert [(o["tid"], o["off_ns"], o["lstack"]["frames"])
            for o in s.offcpu[:2]] == [
        (101, 5 * MS, [(REQUEST, 0), (EXECUTE, 1), (IO_WAIT, 0)]),
        (102, 10 * MS, [(REQUEST, 0), (EXECUTE, 2), (LOCK_WAIT, 0)])]
    assert s.offcpu[0]["state"] == sf.OFFCPU_DISK
    assert s.stats["offcpu_dropped"] == 1 and s.stats["lstack_torn"] == 2
    assert sum(c["lstack_truncated"] for c in s.cpu_stats) == 2


@pytest.mark.parametrize("rec, what", [
    (sf.sample(1, 0x10, flags=sf.SAMPLE_F_LSTACK),
     "sample (with a logical stack) record of 36 bytes is shorter than "
     "its 38-byte fixed part"),
    (sf.sample(1, 0x10, lstack=list(range(1, 18))),
     "sample (with a logical stack) record: a logical stack of 17 frames "
     "(at most 16)"),
    (sf.sample(1, 0x10, lstack=[1, 2], lstack_nr=3),
     "sample (with a logical stack) record of 70 bytes is shorter than "
     "its logical stack of 3 frames"),
    (sf.sample(1, 0x10, user_ip=5, chain=1, lstack=[1], lstack_nr=2),
     "record of 66 bytes is shorter than its logical stack of 2 frames"),
    (sf.sample(1, 0x10, lstack=[1], lstack_flags=sf.LSTACK_F_TORN),
     "a logical stack left out (torn) has 1 frames"),
    (sf.sample(1, 0x10, lstack=[1, 2], lstack_flags=sf.LSTACK_F_FAULT),
     "a logical stack left out (unreadable) has 2 frames"),
    (sf.offcpu_record(1, 5, size=37) + b"\0",
     "off-CPU record of 37 bytes is shorter than its 38-byte fixed part"),
    (sf.offcpu_record(1, 5, lstack=list(range(17))),
     "off-CPU record: a logical stack of 17 frames (at most 16)"),
    (sf.offcpu_record(1, 5, lstack=[1], lstack_nr=2),
     "off-CPU record of 54 bytes is shorter than its logical stack of 2 "
     "frames"),
    (sf.offcpu_record(1, 5, cpu=2), "off-CPU record: cpu 2 out of range "
     "(the header has 2 CPUs)"),
    (sf.offcpu_record(1, 5, lstack=[3], lstack_flags=sf.LSTACK_F_TORN),
     "off-CPU record: a logical stack left out (torn) has 1 frames"),
])
@pytest.mark.parametrize("args", [(), ("--tree", "lstack")])
def test_malformed_records_are_refused(parse, rec, what, args):
    """One line naming the problem and the record's offset, status 2,
    nothing on standard output: in any report."""
    f = sf.SessionFile(flags=sf.SAMPLE_F_LSTACK)
    f.sample(1, 0x10, lstack=[1])
    off = f.add(rec)
    f.sample(1, 0x10)
    r = parse(f, *args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("parse: ") and what in lines[0], lines[0]
    assert lines[0].endswith(f" at byte offset {off}"), lines[0]


def test_sixteen_frames_and_no_frames_are_fine(parse):
    f = sf.SessionFile()
    f.sample(1, 0x10, lstack=list(range(1, 17)),
             lstack_flags=sf.LSTACK_F_TRUNCATED)
    f.sample(1, 0x10, lstack=[], lstack_flags=sf.LSTACK_F_TORN |
             sf.LSTACK_F_FAULT)
    f.offcpu(1, 0, lstack=list(range(1, 17)))
    r = parse(f, "--tree", "lstack", "--min-percent", "0")
    assert r.returncode == 0, r.stderr
    rows = tree_rows(r.stdout)
    assert [x[1] for x in rows] == ["?appid=1"] + [str(i) for i in
                                                   range(1, 17)] + \
        ["[truncated]"]
    assert rows[-1][4] == 1 and rows[-2][4] == 1 and rows[-2][5] == 0


def test_older_versions_are_unaffected(parse):
    """The same samples without logical stacks, as versions 1 to 4 write
    them, and with them: every report is the same; version 3 knows no
    OFFCPU record (a later one, skipped) nor lstack statistics."""
    reports = {}
    cases = [(v, False) for v in (1, 2, 3, 4)] + [(4, True)]
    for v, ls in cases:
        f = server_session(version=v, lstacks=ls)
        out = []
        for args in (("--format", "csv", "--mode", "all"),
                     ("--format", "csv", "--by", "appid,tid")):
            r = parse(f, *args)
            assert r.returncode == 0 and r.stderr == "", (v, r.stderr)
            out.append(r.stdout)
        reports[(v, ls)] = out
    assert len({tuple(x) for x in reports.values()}) == 1
    f = sf.SessionFile(version=3)
    f.sample(1, 0x10)
    f.add(sf.offcpu_record(1, 5, lstack=list(range(20))))   # not v3's
    f.stats(samples_taken=1, samples_written=1)
    r = parse(f)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert re.search(r"^records .* 1 unknown$", r.stdout, re.M)
    assert "lstacks" not in r.stdout
    j = json.loads(parse(f, "--format", "json").stdout)
    assert j["statistics"]["lstack_samples"] == 0
    assert j["cpu_stats"][0]["offcpu_records"] == 0


# ---------------------------------------------------------------- the tree

def test_tree_text(lparse):
    """The server's tree, exactly: the application (its depth 0 samples
    and off-CPU time its own), the request tree and the disjoint
    background tree, children by samples then off-CPU time; the off-CPU
    leaves kept (0 samples, but more than 0.5% of the off-CPU time)."""
    r = lparse(server_session(), "--tree", "lstack")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    title = ("Activity tree (logical stacks), all modes: 57 samples, "
             "0.070s off-CPU; nodes under 0.5% left out")
    assert title in r.stdout.splitlines()
    body = r.stdout.split(title + "\n")[1].splitlines()
    assert body[:2] == [
        "------------ on-CPU samples ------------  ---- off-CPU time ----",
        "   total      self      total       self       total        self"
        "  frame"]
    assert tree_rows(r.stdout) == TREE
    assert body[2] == (" 100.00%     5.26%         57          3"
                       "      0.070s      0.004s  server#0")
    assert body[6] == ("   3.51%     3.51%          2          2"
                       "      0.000s      0.000s          [truncated]")


def test_summary(lparse):
    """The session's lstack statistics, then what went into the tree and
    what was left out, and the names files found."""
    r = lparse(server_session(), "--tree", "lstack")
    lines = r.stdout.splitlines()
    for want in [
            "kernel        6.1.0-sleepy x86_64, HZ 1000, 2 CPUs, flags "
            "lstack",
            "records       73 samples, 2 appids, 0 mmaps, 2 cpu stats, 1 "
            "stats, 0 unknown, 8 off-CPU",
            "lstacks       60 samples with one; retried 5, torn 2, "
            "unreadable 1, truncated 2",
            "off-CPU       9 records made, 1 lost, 0 over the budget",
            "lstack tree   57 samples, 7 off-CPU records (0.070s)",
            "truncated     2 samples, 0 off-CPU records: under [truncated]",
            "no lstack     13 samples: threads without a logical stack",
            "torn          2 samples, 1 off-CPU records (0.002s): left out",
            "unreadable    1 samples, 0 off-CPU records (0.000s): left out",
            "frame names   1 of 1 processes have a names file"]:
        assert want in lines, (want, r.stdout)
    # The lines of the logical stacks fit 80 columns.
    head = r.stdout.split("\n\nActivity tree")[0].splitlines()
    assert max(len(x) for x in head if x.startswith((
        "lstack", "off-CPU", "truncated", "no lstack", "torn", "unreadable",
        "frame names"))) <= 80
    # A session that recorded none says so.
    r = lparse(server_session(lstacks=False), "--tree", "lstack")
    assert r.returncode == 0, r.stderr
    assert "lstacks       none: the session recorded no logical stacks " \
        "(sample_start --lstack)" in r.stdout
    assert "no lstack     73 samples" in r.stdout
    assert tree_rows(r.stdout) == []


def merge_bottom_up(stacks):
    """The IP.com disclosure's merge, independently of parse: each sample
    stack walks the profile's frames from the bottom while they are the
    same, copies its other frames as a new branch there, and counts on
    its top frame. Totals are then the sums of the subtrees. Returns
    {path: [samples, self, off_ns, off_self_ns]}."""
    profile = {}                        # path -> [self, off_self]
    for frames, n, off in stacks:
        depth = 0
        while depth < len(frames) and tuple(frames[:depth + 1]) in profile:
            depth += 1
        for k in range(depth, len(frames)):     # the new branch
            profile[tuple(frames[:k + 1])] = [0, 0]
        top = profile[tuple(frames)]
        top[0] += n
        top[1] += off
    out = {}
    for path, (n, off) in profile.items():
        tot = [sum(v[i] for p, v in profile.items() if p[:len(path)] == path)
               for i in (0, 1)]
        out[path] = [tot[0], n, tot[1], off]
    return out


def json_tree(stdout):
    """{path: [samples, self, off ns, off self ns]} of --format json."""
    nodes = json.loads(stdout)["nodes"]
    paths = {}
    out = {}
    for x in nodes:
        assert x["id"] == len(paths)
        paths[x["id"]] = () if x["parent"] is None else \
            paths[x["parent"]] + (x["name"],)
        if x["parent"] is not None:
            out[paths[x["id"]]] = [x["samples"], x["self"], x["offcpu_ns"],
                                   x["offcpu_self_ns"]]
    return out


def test_random_stacks_merge_as_the_disclosure_says(lparse):
    """300 random stacks over 5 frame names, several bottoms (disjoint
    trees), names at several depths (merged only along the same path),
    samples and off-CPU time: the tree is the disclosure's profile."""
    rng = random.Random(16)
    f = sf.SessionFile(hz=1000, nr_cpus=2)
    f.appid(1, "server", pid=100)
    stacks = []
    for _ in range(300):
        frames = [rng.randrange(1, 6) for _ in range(rng.randrange(0, 7))]
        if rng.random() < 0.7:
            f.sample(1, USER_IP, pid=100, tid=101, lstack=frames)
            stacks.append((["server#0"] + [NAMES[i] for i in frames], 1, 0))
        else:
            off = rng.randrange(1, 10) * MS
            f.offcpu(1, off, pid=100, tid=101, lstack=frames)
            stacks.append((["server#0"] + [NAMES[i] for i in frames], 0,
                           off))
    r = lparse(f, "--tree", "lstack", "--format", "json")
    assert r.returncode == 0, r.stderr
    want = merge_bottom_up(stacks)
    assert json_tree(r.stdout) == want
    assert len({p[1] for p in want if len(p) > 1}) == 5   # 5 bottoms


def test_common_prefix_and_disjoint_trees(lparse):
    """a;b;c and a;b;d share a;b; b;c is another tree (b at the bottom is
    not the b above a); a alone counts on a."""
    f = sf.SessionFile()
    f.appid(1, "server", pid=100)
    for stack, n in (([1, 2, 3], 4), ([1, 2, 4], 2), ([2, 3], 5), ([1], 1)):
        for _ in range(n):
            f.sample(1, USER_IP, pid=100, lstack=stack)
    r = lparse(f, "--tree", "lstack", "--format", "folded",
               names="1 a\n2 b\n3 c\n4 d\n")
    assert r.stdout.splitlines() == [
        "server#0;a 1", "server#0;a;b;c 4", "server#0;a;b;d 2",
        "server#0;b;c 5"]
    assert json_tree(lparse(f, "--tree", "lstack", "--format", "json",
                            names="1 a\n2 b\n3 c\n4 d\n").stdout) == {
        ("server#0",): [12, 0, 0, 0], ("server#0", "a"): [7, 1, 0, 0],
        ("server#0", "a", "b"): [6, 0, 0, 0],
        ("server#0", "a", "b", "c"): [4, 4, 0, 0],
        ("server#0", "a", "b", "d"): [2, 2, 0, 0],
        ("server#0", "b"): [5, 0, 0, 0], ("server#0", "b", "c"): [5, 5, 0, 0]}


def test_lstack_args_split_frames(lparse):
    """--lstack-args: execute(1) and execute(2) are two frames, with the
    samples and off-CPU time of each."""
    r = lparse(server_session(), "--tree", "lstack", "--lstack-args")
    assert r.returncode == 0, r.stderr
    assert tree_rows(r.stdout) == [
        row(0, "server#0", 57, 3, 70, 4),
        row(1, "request(0)", 42, 0, 60, 0),
        row(2, "execute(1)", 26, 4, 20, 0),
        row(3, "scan(0)", 22, 20, 0, 0),
        row(4, "[truncated]", 2, 2, 0, 0),
        row(3, "io_wait(0)", 0, 0, 20, 20),
        row(2, "parse(0)", 10, 10, 0, 0),
        row(2, "execute(2)", 6, 0, 40, 0),
        row(3, "sort(0)", 6, 6, 0, 0),
        row(3, "lock_wait(0)", 0, 0, 40, 40),
        row(1, "background(0)", 12, 5, 6, 6),
        row(2, "flush(0)", 7, 7, 0, 0),
    ]
    folded = lparse(server_session(), "--tree", "lstack", "--lstack-args",
                    "--format", "folded").stdout.splitlines()
    assert "server#0;request(0);execute(2);sort(0) 6" in folded
    assert "server#0;request(0);execute(1) 4" in folded


def test_filters(lparse):
    """--mode user leaves out the kernel-mode samples (not the off-CPU
    time); --tid, --pid and --app choose threads and processes; --from
    and --to keep the off-CPU time within them."""
    r = lparse(server_session(), "--tree", "lstack", "--mode", "user")
    assert "Activity tree (logical stacks), user mode: 45 samples, " \
        "0.070s off-CPU" in r.stdout
    got = {x[1]: x[4] for x in tree_rows(r.stdout)}
    assert (got["scan"], got["background"], "flush" in got) == (17, 5, False)
    r = lparse(server_session(), "--tree", "lstack", "--tid", "102",
               "--format", "json")
    j = json.loads(r.stdout)
    assert json_tree(r.stdout) == {
        ("server#0",): [10, 0, 40 * MS, 0],
        ("server#0", "request"): [10, 0, 40 * MS, 0],
        ("server#0", "request", "execute"): [10, 4, 40 * MS, 0],
        ("server#0", "request", "execute", "sort"): [6, 6, 0, 0],
        ("server#0", "request", "execute", "lock_wait"): [0, 0, 40 * MS,
                                                          40 * MS]}
    assert j["unreadable"] == {"samples": 1, "offcpu_records": 0,
                               "offcpu_ns": 0}
    for args in (("--pid", "200"), ("--app", "client")):
        r = lparse(server_session(), "--tree", "lstack", *args)
        assert "no lstack     9 samples" in r.stdout
        assert tree_rows(r.stdout) == []
    r = lparse(server_session(), "--tree", "lstack", "--app", "server")
    assert tree_rows(r.stdout) == TREE
    # io_wait blocked at 100 (5 ms), 120 (7 ms) and 140 ms (8 ms):
    # 125-127 and 140-145 ms fall within; no sample does.
    r = lparse(server_session(), "--tree", "lstack", "--from", "0.125",
               "--to", "0.145", "--format", "json")
    assert json_tree(r.stdout) == {
        ("server#0",): [0, 0, 7 * MS, 0],
        ("server#0", "request"): [0, 0, 7 * MS, 0],
        ("server#0", "request", "execute"): [0, 0, 7 * MS, 0],
        ("server#0", "request", "execute", "io_wait"): [0, 0, 7 * MS,
                                                        7 * MS]}
    assert json.loads(r.stdout)["in_tree"]["offcpu_records"] == 2


def test_min_percent(lparse):
    """--min-percent P keeps a node whose share of the samples or of the
    off-CPU time is at least P: lock_wait (no samples, 57% of the
    off-CPU time) stays at 30, io_wait (29%) goes."""
    r = lparse(server_session(), "--tree", "lstack", "--min-percent", "30")
    assert [x[1] for x in tree_rows(r.stdout)] == [
        "server#0", "request", "execute", "scan", "lock_wait"]
    r = lparse(server_session(), "--tree", "lstack", "--min-percent", "0")
    assert tree_rows(r.stdout) == TREE and "nodes under" not in r.stdout


def test_by_app(lparse):
    """--by app: two instances of the server under one root."""
    f = sf.SessionFile()
    for appid, inst in ((1, 0), (2, 1)):
        f.appid(appid, "server", instance=inst, pid=100)
        for _ in range(3):
            f.sample(appid, USER_IP, pid=100, lstack=[REQUEST])
    r = lparse(f, "--tree", "lstack", "--format", "folded")
    assert r.stdout == "server#0;request 3\nserver#1;request 3\n"
    r = lparse(f, "--tree", "lstack", "--format", "folded", "--by", "app")
    assert r.stdout == "server;request 6\n"


# ---------------------------------------------------------------- names

def test_names_missing_junk_later_line(lparse, tmp_path):
    """Without a names file a frame is its id's number; bad lines are
    skipped and counted (one warning); a later line for an id wins;
    control bytes are shown as '?' and ';' as ':' in folded stacks."""
    r = lparse(server_session(), "--tree", "lstack", names=None)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert [x[1] for x in tree_rows(r.stdout)][:4] == [
        "server#0", str(REQUEST), str(EXECUTE), str(SCAN)]
    assert "frame names   0 of 1 processes have a names file" in r.stdout
    junk = (names_text() + "x 12\n\n7\n 4 spaced\n-3 negative\n"
            "99999999999999999999999 too big\n5 \n6\tsorted\n"
            f"3 {'e' * 1001}\n2 pa\0rse\n"
            "5 scan again\n6 so\x1b[31mrt;x\r\n")
    r = lparse(server_session(), "--tree", "lstack", names=junk)
    assert r.returncode == 0
    side = tmp_path / "session.bin.lstack-100.names"
    assert r.stderr == (f"parse: {tmp_path / 'session.bin'}: warning: "
                        f"{side}: 10 bad lines skipped\n")
    names = [x[1] for x in tree_rows(r.stdout)]
    assert names[:4] == ["server#0", "request", "execute", "scan again"]
    assert "so?[31mrt:x" in names and "parse" in names
    folded = lparse(server_session(), "--tree", "lstack", "--format",
                    "folded", names=junk).stdout
    assert "server#0;request;execute;so?[31mrt:x 6\n" in folded


def test_names_under_symfs(lparse, tmp_path):
    """Without FILE.lstack-PID.names: DIR/tmp/sleepy-lstack-PID.names
    under --symfs DIR; the file next to the session comes first."""
    root = tmp_path / "root"
    (root / "tmp").mkdir(parents=True)
    (root / "tmp" / "sleepy-lstack-100.names").write_text(
        "1 req_from_symfs\n")
    r = lparse(server_session(), "--tree", "lstack", "--symfs", root,
               names=None)
    assert tree_rows(r.stdout)[1][1] == "req_from_symfs"
    r = lparse(server_session(), "--tree", "lstack", "--symfs", root)
    assert tree_rows(r.stdout)[1][1] == "request"
    # A names file that is not a regular file is not read.
    (root / "tmp" / "sleepy-lstack-100.names").unlink()
    (root / "tmp" / "sleepy-lstack-100.names").mkdir()
    r = lparse(server_session(), "--tree", "lstack", "--symfs", root,
               names=None)
    assert r.returncode == 0 and tree_rows(r.stdout)[1][1] == "1"


# ---------------------------------------------------------------- outputs

def test_folded(lparse):
    """Logical frames in the stacks, weighed by the samples; --offcpu: by
    the off-CPU time in microseconds."""
    r = lparse(server_session(), "--tree", "lstack", "--format", "folded")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.splitlines() == [
        "server#0 3",
        "server#0;background 5",
        "server#0;background;flush 7",
        "server#0;request;execute 4",
        "server#0;request;execute;scan 20",
        "server#0;request;execute;scan;[truncated] 2",
        "server#0;request;execute;sort 6",
        "server#0;request;parse 10",
    ]
    r = lparse(server_session(), "--tree=lstack", "--format", "folded",
               "--offcpu")
    assert r.stdout.splitlines() == [
        "server#0 4000",
        "server#0;background 6000",
        "server#0;request;execute;io_wait 20000",
        "server#0;request;execute;lock_wait 40000",
    ]


def test_offcpu_microseconds_round(lparse):
    f = sf.SessionFile()
    f.appid(1, "server", pid=100)
    for off, stack in ((1499, [1]), (1500, [2]), (499, [3]), (2, [4]),
                       (600, [4])):
        f.offcpu(1, off, pid=100, lstack=stack)
    r = lparse(f, "--tree", "lstack", "--format", "folded", "--offcpu",
               names="1 a\n2 b\n3 c\n4 d\n")
    assert r.stdout == "server#0;a 1\nserver#0;b 2\nserver#0;d 1\n"


def test_json(lparse):
    """The tree's nodes in preorder, each with its parent, its samples and
    off-CPU time (total and self) and their shares; what went in and what
    was left out; every JSON report's session and statistics."""
    r = lparse(server_session(), "--tree", "lstack", "--format", "json")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    j = json.loads(r.stdout)
    assert (j["tree"], j["by"], j["lstack_args"],
            j["lstack_with_callchain"]) == ("lstack", "appid", False, False)
    assert j["filters"]["mode"] == "all"
    assert j["statistics"]["offcpu_records"] == 9
    assert j["in_tree"] == {"samples": 57, "offcpu_records": 7,
                            "offcpu_ns": 70 * MS}
    assert j["truncated"] == {"samples": 2, "offcpu_records": 0}
    assert j["no_lstack"]["samples"] == 13
    assert j["torn"] == {"samples": 2, "offcpu_records": 1,
                         "offcpu_ns": 2 * MS}
    assert j["names_files"] == {"processes": 1, "found": 1}
    nodes = j["nodes"]
    assert nodes[0] == {
        "id": 0, "parent": None, "depth": 0, "name": "all", "kind": "root",
        "dso": None, "samples": 57, "self": 0, "percent": 100.0,
        "self_percent": 0.0, "offcpu_ns": 70 * MS, "offcpu_self_ns": 0,
        "offcpu_percent": 100.0}
    # Preorder: the text tree's order, every node (no --min-percent).
    assert [(x["depth"] - 1, x["name"]) for x in nodes[1:]] == \
        [(t[0], t[1]) for t in TREE]
    by_name = {x["name"]: x for x in nodes}
    assert by_name["scan"]["kind"] == "logical"
    assert by_name["server#0"]["kind"] == "app"
    assert by_name["lock_wait"]["offcpu_percent"] == round(400 / 7, 4)
    assert by_name["execute"]["self_percent"] == round(400 / 57, 4)
    want = merge_bottom_up(
        [(["server#0"] + [NAMES[i if isinstance(i, int) else i[0]]
                          for i in stack] +
          (["[truncated]"] if fl & sf.LSTACK_F_TRUNCATED else []), n, 0)
         for n, stack, _, _, fl in SAMPLES
         if stack is not None and not fl & (sf.LSTACK_F_TORN |
                                            sf.LSTACK_F_FAULT)] +
        [(["server#0"] + [NAMES[i if isinstance(i, int) else i[0]]
                          for i in stack], 0, off)
         for _, _, off, stack, fl in OFFCPU if not fl])
    assert json_tree(r.stdout) == want
    r = lparse(server_session(), "--tree", "lstack", "--format", "json",
               "--min-percent", "30")
    assert [x["name"] for x in json.loads(r.stdout)["nodes"]] == [
        "all", "server#0", "request", "execute", "scan", "lock_wait"]


def test_with_callchain(lparse, prog, tmp_path):
    """--lstack-with-callchain: the machine stack above the logical
    frames, as the call tree has it (user frames outermost first, then
    the kernel's), so request;execute;sort, then main;a;b;leaf."""
    exe, ret, syms = prog
    ks = tmp_path / "k.kallsyms"
    ks.write_text(KSYMS)
    f = sf.SessionFile(hz=1000, flags=sf.SAMPLE_F_CALLCHAIN |
                       sf.SAMPLE_F_LSTACK)
    f.appid(1, "calltree", pid=100, path=str(exe))
    f.mmap(1, 0x401000, 0x100000, pid=100, pgoff=0x1000, path=str(exe))
    f.chain(0, 1, user=[ret[("b", "leaf")], ret[("a", "b")],
                        ret[("main", "a")]], flags=sf.CHAIN_F_SP_RET)
    f.chain(0, 2, kernel=[0xffffffff81002010, 0xffffffff81001010,
                          0xffffffff81000050],
            user=[syms["zero_reader"] + 9, ret[("main", "a")]])
    stack = [REQUEST, (EXECUTE, 1), SORT]
    for _ in range(30):
        f.sample(1, syms["leaf"] + 8, pid=100, chain=1, lstack=stack)
    for _ in range(4):
        f.sample(1, 0xffffffff81003004, mode=sf.MODE_KERNEL, pid=100,
                 chain=2, lstack=stack[:2])
    f.sample(1, syms["main"] + 4, pid=100, lstack=[])   # no chain
    f.offcpu(1, 3 * MS, pid=100, lstack=stack[:2] + [IO_WAIT])
    f.stats(samples_taken=35, samples_written=35, chains_defined=2)
    args = ("--tree", "lstack", "--lstack-with-callchain", "--kallsyms", ks,
            "--symfs", "/")
    r = lparse(f, *args, "--format", "folded")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.splitlines() == [
        "calltree#0;main 1",
        "calltree#0;request;execute;main;zero_reader;entry_SYSCALL_64_[k];"
        "do_syscall_64_[k];ksys_read_[k];read_iter_zero_[k] 4",
        "calltree#0;request;execute;sort;main;a;b;leaf 30",
    ]
    r = lparse(f, *args, "--format", "folded", "--offcpu")
    assert r.stdout == "calltree#0;request;execute;io_wait 3000\n"
    rows = tree_rows(lparse(f, *args).stdout)
    assert [(x[0], x[1]) for x in rows][:6] == [
        (0, "calltree#0"), (1, "request"), (2, "execute"), (3, "sort"),
        (4, "main"), (5, "a")]
    assert ("read_iter_zero [k]", 4) in [(x[1], x[5]) for x in rows]
    j = json.loads(lparse(f, *args, "--format", "json").stdout)
    assert j["lstack_with_callchain"] is True
    kinds = {x["name"]: (x["kind"], x["dso"]) for x in j["nodes"]}
    assert kinds["leaf"] == ("user", str(exe))
    assert kinds["sort"] == ("logical", None)
    assert kinds["ksys_read"] == ("kernel", "[kernel.kallsyms]")


def test_sqlite(lparse, tmp_path):
    """The database: each sample row's logical stack (NULL: none), the
    stacks and their frames, the OFFCPU records aggregated, and the names
    files; the documented queries give the tree's figures."""
    db = tmp_path / "s.db"
    r = lparse(server_session(), "--sqlite", db, "--mode", "all",
               names=names_text() + "5 scan_old\n5 scan\n")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    con = sqlite3.connect(db)
    frames = {}
    for ls, depth, fid, arg in con.execute(
            "SELECT lstack, depth, id, arg FROM lstack_frames "
            "ORDER BY lstack, depth"):
        frames.setdefault(ls, []).append((fid, arg))
    stacks = {ls: (tuple(frames.get(ls, [])), fl) for ls, nr, fl in
              con.execute("SELECT lstack, nr, flags FROM lstacks")
              if len(frames.get(ls, [])) == nr}
    assert len(stacks) == con.execute(
        "SELECT COUNT(*) FROM lstacks").fetchone()[0]
    got = {}
    for ls, n in con.execute("SELECT lstack, SUM(samples) FROM samples "
                             "GROUP BY lstack"):
        key = None if ls is None else stacks[ls]
        got[key] = got.get(key, 0) + n
    want = {None: 4 + CLIENT_SAMPLES}
    for n, stack, _, _, fl in SAMPLES:
        if stack is not None:
            key = (tuple(f if isinstance(f, tuple) else (f, 0)
                         for f in stack), fl)
            want[key] = want.get(key, 0) + n
    assert got == want
    off = {}
    for ls, recs, ns in con.execute("SELECT lstack, SUM(records), "
                                    "SUM(off_ns) FROM offcpu GROUP BY "
                                    "lstack"):
        off[stacks[ls]] = (recs, ns)
    assert off == {
        (((REQUEST, 0), (EXECUTE, 1), (IO_WAIT, 0)), 0): (3, 20 * MS),
        (((REQUEST, 0), (EXECUTE, 2), (LOCK_WAIT, 0)), 0): (2, 40 * MS),
        ((), 0): (1, 4 * MS), (((BACKGROUND, 0),), 0): (1, 6 * MS),
        ((), sf.LSTACK_F_TORN): (1, 2 * MS)}
    assert con.execute("SELECT DISTINCT state FROM offcpu ORDER BY "
                       "state").fetchall() == [("disk",), ("sleep",)]
    assert dict(con.execute("SELECT id, name FROM lstack_names WHERE "
                            "pid = 100")) == NAMES
    # parse.md's queries.
    doc = (sf.__file__.rsplit("/", 2)[0] + "/Documentation/parse.md")
    queries = re.findall(r"^### (L\d)\. [^\n]*\n\n```sql\n(.*?)```",
                         open(doc).read(), re.S | re.M)
    assert [q for q, _ in queries] == ["L1", "L2"]
    q13 = dict((name, (total, self)) for name, total, self in
               con.execute(queries[0][1]).fetchall())
    assert q13["scan"] == (22, 20) and q13["execute"] == (32, 4)
    assert q13["request"] == (42, 0) and q13["flush"] == (7, 7)
    q14 = con.execute(queries[1][1]).fetchall()
    assert q14 == [("lock_wait", 2, 40.0), ("io_wait", 3, 20.0),
                   ("background", 1, 6.0)]


def test_sqlite_filters(lparse, tmp_path):
    """--app and --tid apply to the OFFCPU rows as to the samples."""
    db = tmp_path / "s.db"
    r = lparse(server_session(), "--sqlite", db, "--mode", "all", "--tid",
               "103")
    assert r.returncode == 0, r.stderr
    con = sqlite3.connect(db)
    assert con.execute("SELECT SUM(off_ns), COUNT(*) FROM "
                       "offcpu").fetchone() == (6 * MS, 1)
    r = lparse(server_session(), "--sqlite", db, "--app", "client")
    con = sqlite3.connect(db)
    assert con.execute("SELECT COUNT(*) FROM offcpu").fetchone() == (0,)
    assert con.execute("SELECT COUNT(*) FROM lstack_names").fetchone() == \
        (0,)


# ---------------------------------------------------------------- flame graph

def flame_frames(path):
    root = ET.parse(path).getroot()
    out = []
    for g in root.iter(SVG + "g"):
        cls = g.get("class", "").split()
        if "f" in cls:
            out.append(dict(name=g.get("data-n"), kind=cls[1],
                            w=int(g.get("data-w")), d=int(g.get("data-d")),
                            title=g.find(SVG + "title").text,
                            fill=g.find(SVG + "rect").get("fill")))
    return root, out


def hue(fill):
    h, _, _ = colorsys.rgb_to_hls(*[int(fill[i:i + 2], 16) / 255
                                    for i in (1, 3, 5)])
    return h * 360


def test_flamegraph(lparse, tmp_path):
    """--tree lstack --flamegraph: the activity tree drawn, logical frames
    green (their own family, named in a legend), titles with the off-CPU
    time; --offcpu: widths by off-CPU time."""
    out = tmp_path / "f.svg"
    r = lparse(server_session(), "--tree", "lstack", "--flamegraph", out)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert tree_rows(r.stdout) == TREE          # the text as well
    root, frames = flame_frames(out)
    assert root.find(SVG + "text").text == \
        "Activity flame graph (logical stacks), all modes"
    widths = {(f["d"], f["name"]): f["w"] for f in frames}
    assert widths == {(0, "all"): 57, **{(t[0] + 1, t[1]): t[4]
                                         for t in TREE if t[4]}}
    logical = [f for f in frames if f["kind"] == "logical"]
    assert {f["name"] for f in logical} == {
        "request", "execute", "scan", "[truncated]", "sort", "parse",
        "background", "flush"}
    assert all(92 - 1 <= hue(f["fill"]) <= 140 + 1 for f in logical)
    (scan,) = [f for f in frames if f["name"] == "scan"]
    assert scan["title"] == "scan (logical): 22 samples, 38.60%; 0.000s " \
        "off-CPU"
    (app,) = [f for f in frames if f["kind"] == "app"]
    assert app["title"] == "server#0 (application): 57 samples, 100.00%; " \
        "0.070s off-CPU"
    legend = root.find(f".//{SVG}g[@id='legend']")
    keys = [(g.get("class"), g.find(SVG + "text").text,
             g.find(SVG + "rect").get("fill")) for g in legend]
    assert [k[:2] for k in keys] == [
        ("key app", "application"), ("key logical", "logical frame"),
        ("key user", "user function"), ("key kernel", "kernel function")]
    assert 91 <= hue(keys[1][2]) <= 141
    r = lparse(server_session(), "--tree", "lstack", "--flamegraph", out,
               "--offcpu", "--format", "folded")
    assert r.returncode == 0, r.stderr
    assert "io_wait 20000" in r.stdout
    root, frames = flame_frames(out)
    assert root.find(SVG + "text").text == "Activity flame graph (logical " \
        "stacks), all modes, by off-CPU time"
    assert {f["name"]: f["w"] for f in frames} == {
        "all": 70 * MS, "server#0": 70 * MS, "request": 60 * MS,
        "execute": 60 * MS, "lock_wait": 40 * MS, "io_wait": 20 * MS,
        "background": 6 * MS}
    (io,) = [f for f in frames if f["name"] == "io_wait"]
    assert io["title"] == "io_wait (logical): 0.020s off-CPU, 28.57%; 0 " \
        "samples"
    assert "what: 'off-CPU time'" in out.read_text()


# ---------------------------------------------------------------- the line

@pytest.mark.parametrize("args, what", [
    (["--lstack-args"], "--lstack-args needs --tree lstack"),
    (["--tree", "--lstack-with-callchain"],
     "--lstack-with-callchain needs --tree lstack"),
    (["--tree", "calls", "--offcpu"], "--offcpu needs --tree lstack"),
    (["--tree", "lstack", "--offcpu"], "--offcpu: weighs the folded stacks "
     "and the flame graph by off-CPU time: needs --format folded or "
     "--flamegraph"),
    (["--tree=bogus"], "--tree: unknown value 'bogus' (one of: calls, "
     "lstack)"),
    (["--tree="], "--tree: unknown value ''"),
    (["--tree", "lstack", "--inverted"], "--inverted: not with --tree "
     "lstack"),
    (["--tree", "lstack", "--format", "csv"], "--tree lstack: prints text, "
     "json or folded"),
    (["--tree", "lstack", "--by", "symbol"], "--by: the call chains' views "
     "start at the application: app or appid only"),
    (["--tree", "lstack", "--sqlite", "x.db"], "--tree and --sqlite "
     "exclude each other"),
    (["--tree", "--format", "json"], "--tree: prints text"),
    (["--lstack-arg"], "--lstack-arg: unknown option"),
    (["--offcpu=1"], "--offcpu=1: unknown option"),
])
def test_usage_errors(parse, args, what):
    r = parse(server_session(), *args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.startswith("parse: ") and what in r.stderr, r.stderr
    assert len(r.stderr.splitlines()) == 1 and r.stdout == ""


def test_tree_spellings(lparse, parse_bin, tmp_path):
    """--tree lstack and --tree=lstack; --tree calls and --tree=calls are
    plain --tree; a FILE after --tree is still the FILE."""
    outs = {}
    for args in (("--tree", "lstack"), ("--tree=lstack",),
                 ("--tree", "calls"), ("--tree=calls",), ("--tree",)):
        r = lparse(server_session(), *args)
        assert r.returncode == 0, (args, r.stderr)
        outs[args] = r.stdout
    assert outs[("--tree", "lstack")] == outs[("--tree=lstack",)]
    assert outs[("--tree", "calls")] == outs[("--tree=calls",)] == \
        outs[("--tree",)]
    assert "Call tree, user mode" in outs[("--tree",)]
    f = tmp_path / "lstack"          # a FILE named like a kind: ./lstack
    f.write_bytes(server_session().data())
    r = subprocess.run([str(parse_bin), "--tree", "./lstack"],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0 and "Call tree" in r.stdout, r.stderr
    r = subprocess.run([str(parse_bin), "--tree", "lstack", "lstack"],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0 and "Activity tree" in r.stdout, r.stderr


def test_help(parse_bin):
    out = run(parse_bin, "--help").stdout
    for want in ("--tree lstack", "--lstack-args", "--lstack-with-callchain",
                 "--offcpu", "all modes unless --mode"):
        assert want in out, want
    assert max(len(x) for x in out.splitlines()) <= 80


def test_cpu_stats_must_add_up(parse):
    """The CPU_STATS records' lstack figures add up to the STATS record's,
    or parse warns."""
    f = sf.SessionFile()
    f.sample(1, 0x10, lstack=[])
    f.stats(samples_taken=1, samples_written=1, lstack_samples=1,
            offcpu_records=3,
            cpus=[dict(samples_taken=1, lstack_samples=1, offcpu_records=2),
                  dict()])
    r = parse(f)
    assert r.returncode == 0
    assert r.stderr.endswith("warning: the CPU_STATS records do not add up "
                             "to the STATS record: offcpu_records 2 against "
                             "3\n"), r.stderr
