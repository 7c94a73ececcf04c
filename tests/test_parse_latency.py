"""Host-side tests of parse's system call latency (issue 17): format
version 5's kernel context on samples and its SYSCALL, LATENCY and
LAT_SEGMENT records; --latency's histograms (text as bcc prints them,
CSV, JSON, SQLite), their percentiles and peaks, --compare, --peak's
samples, --plot in Chromium, and --by syscall/context. No VM: the
sessions are synthetic (tests/sleepyfile.py), so every figure is known.

    /usr/bin/python3 -m pytest -q tests/test_parse_latency.py
"""
import gzip
import json
import math
import re
import sqlite3

import pytest

import sleepyfile as sf
import sleepyread
from conftest import run
from test_flamegraph import browser  # noqa: F401 (Chromium, as it runs)

MS, US = 1_000_000, 1_000
K_COPY, K_SCHED, K_OTHER = 0xffffffff81000010, 0xffffffff81001010, \
    0xffffffff81002010
KSYMS = """ffffffff81000000 T copy_user_generic
ffffffff81001000 T schedule
ffffffff81002000 T other_function
ffffffff81003000 T _etext
"""
READ, NANOSLEEP, GETPPID, SAMPLE_START, WRITE, CLOSE = 0, 35, 110, 600, 1, 3


def lat_session(hists, *, appids=((1, "latency_demo", 0, 100),),
                segments=None, version=sf.FORMAT_VERSION, stats=None):
    """A session with these histograms (dicts of latency_record()'s
    arguments) in one segment, or segments: a list of (start_ns, end_ns,
    hists); appids (appid, name, instance, pid)."""
    f = sf.SessionFile(hz=1000, nr_cpus=2, version=version,
                       flags=sf.SAMPLE_F_LATENCY)
    for appid, name, inst, pid in appids:
        f.appid(appid, name, instance=inst, pid=pid, path=f"/bin/{name}")
    f.sample(appids[0][0], 0x401000, pid=appids[0][3], tid=appids[0][3])
    for i, (start, end, hs) in enumerate(segments or [(0, 2_000 * MS,
                                                       hists)]):
        f.segment(i, hs, start_ns=start, end_ns=end)
    calls = sum(sum(h["counts"].values()) for _, _, hs in
                segments or [(0, 0, hists)] for h in hs)
    f.stats(samples_taken=1, samples_written=1, appids=len(appids),
            syscalls_counted=calls, latency_segments=len(segments or [0]),
            **(stats or {}))
    return f


def ok(r):
    assert r.returncode == 0 and r.stderr == "", r.stderr
    return r.stdout


def error(r):
    """A usage or format error: status 2, one line."""
    assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr)
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("parse: "), \
        r.stderr
    return r.stderr


def lat_json(parse, f, *args):
    return json.loads(ok(parse(f, "--latency", "--format", "json", *args)))


# ---------------------------------------------------------------- names

def test_syscall_names_from_the_kernel_table(parse):
    """The names come from the kernel's syscall_64.tbl (generated at build
    time): read 0, nanosleep 35, getppid 110, sample_start 600; a number
    the table lacks is sys_NNN; 0x7fff, where the kernel notes every
    number it has no call of, is enosys."""
    hists = [dict(appid=1, nr=nr, counts={10: 1}) for nr in
             (READ, NANOSLEEP, GETPPID, SAMPLE_START, 1000, 0x7fff)]
    j = lat_json(parse, lat_session(hists))
    assert sorted((h["nr"], h["syscall"]) for h in j["histograms"]) == [
        (0, "read"), (35, "nanosleep"), (110, "getppid"),
        (600, "sample_start"), (1000, "sys_1000"), (0x7fff, "enosys")]
    # A name can be given for a number: --peak takes either.
    for name, want in (("getppid", "getppid"), ("110", "getppid"),
                       ("sys_110", "getppid"), ("enosys", "enosys"),
                       ("32767", "enosys")):
        r = parse(lat_session(hists), "--latency", "--peak",
                  f"latency_demo:{name}:1", "--by", "eip")
        assert ok(r) and f"peak latency_demo:{want}:1 " in r.stdout


# ---------------------------------------------------------------- histograms

NANOSLEEP_HIST = dict(appid=1, nr=NANOSLEEP, counts={20: 200},
                      sum_ns=200 * 1_520_000, max_ns=2_100_000)


def test_histogram_as_bcc_prints_it(parse):
    """A histogram is bcc's: 'nsecs : count distribution', 40 stars for
    the fullest bucket, the rows from the first non-empty bucket to the
    last, each with its peak; a line of figures above it."""
    getppid = dict(appid=1, nr=GETPPID, counts={8: 30, 9: 60, 11: 3},
                   sum_ns=60_000, max_ns=3000)
    out = ok(parse(lat_session([NANOSLEEP_HIST, getppid]), "--latency"))
    blocks = out.split("\n\n")
    assert re.search(r"^syscalls +counted 293, lost 0, restarts 0$",
                     blocks[0], re.M)
    assert blocks[1] == "System call latency by app: 2 histograms of 293 " \
        "calls, 1 segments"
    assert blocks[2] == (
        "app: latency_demo  syscall: nanosleep  calls 200  mean 1.52ms  "
        "p50 1.57ms  p99 2.09ms  max 2.1ms  restarts 0\n"
        "     nsecs               : count     distribution\n"
        "   1048576 -> 2097151    : 200      "
        "|****************************************|  peak 1")
    assert blocks[3] == (
        "app: latency_demo  syscall: getppid  calls 93  mean 645ns  "
        "p50 653ns  p99 3us  max 3us  restarts 0\n"
        "     nsecs               : count     distribution\n"
        "       256 -> 511        : 30       |********************"
        "                    |  peak 1\n"
        "       512 -> 1023       : 60       |*******************"
        "*********************|  peak 1\n"
        "      1024 -> 2047       : 0        |"
        "                                        |\n"
        "      2048 -> 4095       : 3        |**"
        "                                      |  peak 2\n")


def test_wide_histogram_past_2_32_ns(parse):
    """Past 2^32 ns bcc widens its columns and halves its bars."""
    h = dict(appid=1, nr=NANOSLEEP, counts={31: 1, 33: 2})
    out = ok(parse(lat_session([h]), "--latency"))
    assert "               nsecs                         : count     " \
        "distribution\n" in out
    assert "          8589934592 -> 17179869183          : 2        " \
        "|********************|  peak 2\n" in out


def test_percentiles_interpolated_and_clamped(parse):
    """p50 and p99 from the buckets: linear inside a bucket, at most the
    largest latency seen."""
    h = dict(appid=1, nr=READ, counts={10: 50, 11: 50}, sum_ns=250_000,
             max_ns=4095)
    g = lat_json(parse, lat_session([h]))["histograms"][0]
    assert (g["calls"], g["mean_ns"], g["max_ns"]) == (100, 2500.0, 4095)
    assert g["p50_ns"] == 2048.0                # the end of bucket 10
    assert g["p99_ns"] == pytest.approx(2048 + 2048 * 49 / 50, abs=1e-3)
    h["max_ns"] = 3000
    g = lat_json(parse, lat_session([h]))["histograms"][0]
    assert g["p99_ns"] == 3000.0
    # Bucket 0 is [0, 2).
    g = lat_json(parse, lat_session([dict(appid=1, nr=READ,
                                          counts={0: 4}, max_ns=1)]))
    assert g["histograms"][0]["buckets"] == [
        dict(lo_ns=0, hi_ns=2, count=4, peak=1)]
    assert g["histograms"][0]["p50_ns"] == 1.0


def test_csv_columns_exactly(parse):
    f = lat_session([NANOSLEEP_HIST, dict(appid=1, nr=READ,
                                          counts={12: 5, 14: 7})])
    out = ok(parse(f, "--latency", "--format", "csv"))
    assert out == ("app,syscall,bucket_lo_ns,bucket_hi_ns,count\n"
                   "latency_demo,nanosleep,1048576,2097152,200\n"
                   "latency_demo,read,4096,8192,5\n"
                   "latency_demo,read,16384,32768,7\n")


def test_json_values(parse):
    f = lat_session([NANOSLEEP_HIST], stats=dict(syscalls_lost=4,
                                                 syscall_restarts=2))
    j = lat_json(parse, f)
    assert j["by"] == "app" and j["calls"] == 200
    assert j["syscalls"] == dict(counted=200, lost=4, restarts=2)
    assert j["segments"] == [dict(segment=0, start_ns=0, end_ns=2000 * MS,
                                  calls=200, lost=0, histograms=1)]
    (g,) = j["histograms"]
    assert g["app"] == "latency_demo" and g["syscall"] == "nanosleep"
    assert (g["nr"], g["calls"], g["mean_ns"], g["max_ns"], g["restarts"]) \
        == (35, 200, 1_520_000.0, 2_100_000, 0)
    assert g["p50_ns"] == 1048576 * 1.5
    assert g["peaks"] == [dict(n=1, lo_ns=1 << 20, hi_ns=1 << 21,
                               calls=200)]
    assert j["statistics"]["syscalls_lost"] == 4


def test_grouping_by_app_or_appid_and_filters(parse):
    """--by app merges a name's instances, --by appid does not; --app,
    --appid and --pid choose appids; rows by calls, most first."""
    appids = ((1, "srv", 0, 100), (2, "srv", 1, 200), (3, "cli", 0, 300))
    hists = [dict(appid=1, nr=READ, counts={10: 3}),
             dict(appid=2, nr=READ, counts={10: 4}),
             dict(appid=3, nr=READ, counts={12: 5})]
    f = lat_session(hists, appids=appids)
    rows = [(g["app"], g["calls"]) for g in
            lat_json(parse, f)["histograms"]]
    assert rows == [("srv", 7), ("cli", 5)]
    rows = [(g["app"], g["calls"]) for g in
            lat_json(parse, f, "--by", "appid")["histograms"]]
    assert rows == [("cli#0", 5), ("srv#1", 4), ("srv#0", 3)]
    for args, want in ((("--app", "cli"), [("cli", 5)]),
                       (("--appid", "srv#1"), [("srv", 4)]),
                       (("--pid", "100"), [("srv", 3)]),
                       (("--top", "1"), [("srv", 7)])):
        rows = [(g["app"], g["calls"]) for g in
                lat_json(parse, f, *args)["histograms"]]
        assert rows == want, args
    out = ok(parse(f, "--latency", "--by", "appid"))
    assert "appid: srv#1  syscall: read  calls 4  " in out


def test_segments(parse):
    """--segments: a set per time-lapse segment, with its time range;
    --from and --to choose the segments that overlap them."""
    segs = [(0, 1000 * MS, [dict(appid=1, nr=READ, counts={10: 2})]),
            (1000 * MS, 2000 * MS, [dict(appid=1, nr=READ, counts={11: 3}),
                                    dict(appid=1, nr=WRITE,
                                         counts={9: 1})])]
    f = lat_session(None, segments=segs)
    out = ok(parse(f, "--latency", "--segments"))
    assert "\nsegment 0: 0.000 s to 1.000 s\n\napp: latency_demo  syscall: " \
        "read  calls 2  " in out
    assert "\nsegment 1: 1.000 s to 2.000 s\n\napp: latency_demo  syscall: " \
        "read  calls 3  " in out
    out = ok(parse(f, "--latency", "--segments", "--format", "csv"))
    assert out.splitlines() == [
        "segment,app,syscall,bucket_lo_ns,bucket_hi_ns,count",
        "0,latency_demo,read,1024,2048,2",
        "1,latency_demo,read,2048,4096,3",
        "1,latency_demo,write,512,1024,1"]
    j = lat_json(parse, f)
    assert [(g["syscall"], g["calls"]) for g in j["histograms"]] == \
        [("read", 5), ("write", 1)]
    j = lat_json(parse, f, "--from", "1.5")
    assert [(g["syscall"], g["calls"]) for g in j["histograms"]] == \
        [("read", 3), ("write", 1)]


def test_restarts_and_a_histogram_without_calls(parse):
    """A histogram of restarts only (the kernel writes one zero bucket)."""
    h = dict(appid=1, nr=READ, counts={}, first=0, nr_buckets=1, restarts=3)
    out = ok(parse(lat_session([h]), "--latency"))
    assert "syscall: read  calls 0  mean 0ns  p50 0ns  p99 0ns  max 0ns  " \
        "restarts 3\n     (no calls)\n" in out


# ---------------------------------------------------------------- peaks

@pytest.mark.parametrize("counts, peaks", [
    # Two peaks: an empty bucket between them.
    ({10: 100, 12: 50}, [(10, 10, 100), (12, 12, 50)]),
    # Two peaks: a valley (10 < half of min(100, 80)) between them.
    ({10: 100, 11: 10, 12: 80}, [(10, 10, 100), (12, 12, 80)]),
    # Not a valley: 40 is not below half of 80.
    ({10: 100, 11: 40, 12: 80}, [(10, 12, 220)]),
    # One broad peak must not split.
    ({8: 10, 9: 50, 10: 100, 11: 60, 12: 20, 13: 5}, [(8, 13, 245)]),
    # A valley of two buckets, then a third peak past an empty one.
    ({4: 90, 5: 9, 6: 9, 7: 50, 9: 1}, [(4, 4, 90), (7, 7, 50),
                                        (9, 9, 1)]),
])
def test_peaks(parse, counts, peaks):
    g = lat_json(parse, lat_session([dict(appid=1, nr=READ,
                                          counts=counts)]))["histograms"][0]
    assert [(p["lo_ns"], p["hi_ns"], p["calls"]) for p in g["peaks"]] == \
        [(1 << a, 1 << (b + 1), c) for a, b, c in peaks]
    assert [p["n"] for p in g["peaks"]] == list(range(1, len(peaks) + 1))
    for b in g["buckets"]:
        k = b["lo_ns"].bit_length() - 1
        want = [i + 1 for i, (a, z, _) in enumerate(peaks) if a <= k <= z]
        assert b["peak"] == (want[0] if want else 0)


# ---------------------------------------------------------------- compare

def test_compare_ranks_by_earth_movers_distance(parse_bin, tmp_path):
    """A shifted distribution ranks above an unchanged one; a pair with
    fewer than 10 calls in a session (one close() that took ten buckets
    longer) after those with enough, marked few; keys of one session only
    come last, marked new or gone."""
    old = lat_session([dict(appid=1, nr=NANOSLEEP, counts={20: 200}),
                       dict(appid=1, nr=GETPPID, counts={9: 1000}),
                       dict(appid=1, nr=READ, counts={12: 10, 13: 10}),
                       dict(appid=1, nr=CLOSE, counts={10: 1}),
                       dict(appid=1, nr=WRITE, counts={11: 5})])
    new = lat_session([dict(appid=1, nr=NANOSLEEP, counts={22: 200}),
                       dict(appid=1, nr=GETPPID, counts={9: 2000}),
                       dict(appid=1, nr=READ, counts={12: 10, 14: 10}),
                       dict(appid=1, nr=CLOSE, counts={20: 1}),
                       dict(appid=1, nr=SAMPLE_START, counts={15: 1})])
    a, b = old.write(tmp_path / "old"), new.write(tmp_path / "new")
    j = json.loads(ok(run(parse_bin, "--latency", "--compare", a, b,
                          "--format", "json")))
    rows = [(p["syscall"], p["status"], p["emd"], p["calls_old"],
             p["calls_new"], p["change"], p["change_percent"])
            for p in j["rows"]]
    assert rows == [
        ("nanosleep", "both", 2.0, 200, 200, 0, 0.0),
        ("read", "both", 0.5, 20, 20, 0, 0.0),
        ("getppid", "both", 0.0, 1000, 2000, 1000, 100.0),
        ("close", "few", 10.0, 1, 1, 0, 0.0),
        ("write", "gone", None, 5, 0, -5, -100.0),
        ("sample_start", "new", None, 0, 1, 1, None)]
    assert j["rows"][0]["mean_old_ns"] == float(1 << 20)
    assert j["rows"][0]["mean_new_ns"] == float(1 << 22)
    out = ok(run(parse_bin, "--latency", "--compare", a, b,
                 "--format", "csv"))
    assert out.splitlines()[:2] == [
        "app,syscall,status,emd,calls_old,calls_new,change,change_percent,"
        "mean_old_ns,mean_new_ns",
        "latency_demo,nanosleep,both,2.000000,200,200,0,0.0000,"
        "1048576.000,4194304.000"]
    assert out.splitlines()[-2] == \
        "latency_demo,write,gone,,5,0,-5,-100.0000,2048.000,"
    out = ok(run(parse_bin, "--latency", "--compare", a, b))
    lines = [line.split() for line in out.splitlines()[9:]]
    assert [(w[0], w[-7]) for w in lines] == [
        ("2.000", "nanosleep"), ("0.500", "read"), ("0.000", "getppid"),
        ("10.000", "close"), ("gone", "write"), ("new", "sample_start")]
    assert lines[3][1] == "few"
    assert lines[0][-2:] == ["1.05ms", "4.19ms"]
    assert lines[2][3:7] == ["1000", "2000", "+1000", "+100.00%"]


# ---------------------------------------------------------------- --peak

def peak_session():
    """latency_demo (pid 100, threads 101 and 102) reads: 10 fast calls
    (bucket 12) and 5 slow ones (bucket 20): two peaks. Two were sampled:
    a fast one of thread 101 at 1 ms, a slow one of 101 at 10 ms."""
    f = sf.SessionFile(hz=1000, nr_cpus=2, flags=sf.SAMPLE_F_LATENCY)
    f.appid(1, "latency_demo", pid=100, path="/bin/latency_demo")
    f.appid(2, "other", pid=200, path="/bin/other")
    kernel = dict(mode=sf.MODE_KERNEL, pid=100, kctx=READ)
    f.sample(1, K_COPY, tid=101, time_ns=1 * MS + 2 * US, **kernel)
    f.sample(1, K_SCHED, tid=101, time_ns=10 * MS + 500 * US, **kernel)
    f.sample(1, K_SCHED, tid=101, time_ns=11 * MS + 500 * US, **kernel)
    f.sample(1, K_OTHER, tid=101, time_ns=12 * MS, **kernel)    # after it
    f.sample(1, K_OTHER, tid=102, time_ns=10 * MS + 600 * US, **kernel)
    f.sample(1, K_OTHER, tid=101, time_ns=999 * US, **kernel)   # before
    f.sample(1, 0x401000, tid=101, time_ns=10 * MS + 700 * US, pid=100)
    f.sample(2, K_OTHER, tid=201, time_ns=10 * MS + 600 * US,
             mode=sf.MODE_KERNEL, pid=200, kctx=READ)
    f.syscall(1, READ, pid=100, tid=101, start_ns=1 * MS,
              latency_ns=5 * US)
    f.syscall(1, READ, pid=100, tid=101, start_ns=10 * MS,
              latency_ns=1 * MS + 500 * US)
    f.syscall(2, READ, pid=200, tid=201, start_ns=10 * MS,
              latency_ns=1 * MS + 500 * US)
    f.segment(0, [dict(appid=1, nr=READ, counts={12: 10, 20: 5}),
                  dict(appid=2, nr=READ, counts={20: 1})],
              end_ns=20 * MS)
    f.stats(samples_taken=8, samples_written=8, appids=2,
            syscalls_counted=16, syscall_records=3, latency_segments=1)
    return f


def test_peak_joins_samples_to_their_calls(parse, tmp_path):
    """--peak APP:SYSCALL:N: the report of the samples of the peak's
    sampled calls' threads within their time (both ends in); other
    threads, and times outside, are not."""
    ks = tmp_path / "k.kallsyms"
    ks.write_text(KSYMS)
    f = peak_session()
    out = ok(parse(f, "--latency", "--peak", "latency_demo:read:1",
                   "--by", "symbol", "--kallsyms", ks))
    assert re.search(r"^filters +peak latency_demo:read:1 \(4.1us to "
                     r"8.19us\): 10 calls, 1 sampled \(SYSCALL records\), 1 "
                     r"with 1 samples counted: 1 samples$", out, re.M), out
    assert re.search(r"^Samples by symbol, all modes: 1 samples\n.*\n +1 .* "
                     r"copy_user_generic$", out, re.M)
    out = ok(parse(f, "--latency", "--peak", "latency_demo:0:2", "--by",
                   "symbol", "--kallsyms", ks, "--format", "csv"))
    # The slow call's two kernel samples and its user one, not thread
    # 102's nor the other app's.
    rows = out.splitlines()[1:]
    assert len(rows) == 2 and rows[0] == \
        ",,,all,[kernel.kallsyms],schedule,2,66.67"
    assert rows[1].endswith(",1,33.33")
    j = json.loads(ok(parse(f, "--latency", "--peak", "latency_demo:read:2",
                            "--by", "tid", "--format", "json")))
    assert j["total"] == 3 and j["filters"]["peak"] == "latency_demo:read:2"
    assert [(r["tid"], r["samples"]) for r in j["rows"]] == [(101, 3)]
    # --mode applies when given.
    j = json.loads(ok(parse(f, "--latency", "--peak", "latency_demo:read:2",
                            "--mode", "kernel", "--format", "json")))
    assert j["total"] == 2


def test_peak_filters_the_second_pass_views(parse, tmp_path):
    """--peak's windows apply to the views that read the file a second
    time, as to the reports: perf-script's samples and pprof's are the
    peak's 3 (of thread 101 in its slow call), not all 8."""
    ks = tmp_path / "k.kallsyms"
    ks.write_text(KSYMS)
    f = peak_session()
    peak = ("--latency", "--peak", "latency_demo:read:2", "--kallsyms", ks)
    out = ok(parse(f, *peak, "--format", "perf-script"))
    heads = [b.splitlines()[0] for b in out.strip().split("\n\n")]
    assert [h.split()[:2] for h in heads] == [["latency_demo", "100/101"]] * 3
    # The file's order; the session began 1 s after boot.
    assert sorted(h.split()[3] for h in heads) == [
        "1.010500:", "1.010700:", "1.011500:"]
    prof = tmp_path / "peak.pb.gz"
    ok(parse(f, *peak, "--pprof", prof))
    with gzip.open(prof) as g:
        want = g.read()
    all_prof = tmp_path / "all.pb.gz"
    ok(parse(f, "--mode", "all", "--kallsyms", ks, "--pprof", all_prof))
    with gzip.open(all_prof) as g:
        every = g.read()
    # The samples: the first value of each Sample (profile.proto field 2;
    # its values, field 2, packed), summed.
    assert pb_samples(want) == 3 and pb_samples(every) == 8


def pb_fields(data):
    """A protobuf message's (field, value): ints, or bytes when
    length-delimited."""
    i = 0
    while i < len(data):
        key, i = varint(data, i)
        if key & 7 == 0:
            v, i = varint(data, i)
        elif key & 7 == 2:
            size, i = varint(data, i)
            v, i = data[i:i + size], i + size
        else:
            raise AssertionError(f"wire type {key & 7}")
        yield key >> 3, v


def pb_samples(profile):
    """The sample count a pprof profile holds (its first sample type)."""
    n = 0
    for field, sample in pb_fields(profile):
        if field == 2:
            values = [v for f, v in pb_fields(sample) if f == 2]
            n += varint(values[0], 0)[0] if isinstance(values[0], bytes) \
                else values[0]
    return n


def varint(data, i):
    v, shift = 0, 0
    while True:
        b = data[i]
        i += 1
        v |= (b & 0x7f) << shift
        shift += 7
        if b < 0x80:
            return v, i


@pytest.mark.parametrize("spec, what", [
    ("nosuch:read:1", "no latency histogram of nosuch and read"),
    ("latency_demo:write:1", "no latency histogram of latency_demo and "
     "write"),
    ("latency_demo:read:3", "latency_demo:read has 2 peaks, not 3"),
    ("latency_demo:nosuchcall:1", "unknown system call 'nosuchcall'"),
    ("latency_demo:read:0", "invalid peak number '0'"),
    ("read:1", "'read:1' is not APP:SYSCALL:N"),
])
def test_peak_errors(parse, spec, what):
    assert what in error(parse(peak_session(), "--latency", "--peak", spec))


# ---------------------------------------------------------------- contexts

def context_session(version=sf.FORMAT_VERSION):
    """A sample in each kernel context; version 4: without contexts."""
    f = sf.SessionFile(hz=1000, nr_cpus=1, version=version)
    f.appid(1, "app", pid=100)
    k = dict(mode=sf.MODE_KERNEL, pid=100, tid=100)
    v5 = version >= 5
    rows = [
        (3, dict(pid=100, tid=100), None),                  # user
        (4, k, READ), (2, k, NANOSLEEP), (1, k, GETPPID),   # syscalls
        (1, k, SAMPLE_START), (1, k, 999),
        (5, k, sf.KCTX_EXCEPTION),
        (6, dict(mode=sf.MODE_IRQ), sf.KCTX_HARDIRQ),
        (7, dict(mode=sf.MODE_IRQ), sf.KCTX_SOFTIRQ),
        (8, k, sf.KCTX_KTHREAD),
        (9, dict(mode=sf.MODE_IDLE), None),
        (2, k, None),                                       # no context
    ]
    for n, kw, kctx in rows:
        for _ in range(n):
            f.sample(1, K_OTHER if kw.get("mode") else 0x401000,
                     kctx=kctx if v5 else None, **kw)
    f.stats(samples_taken=49, samples_written=49, appids=1)
    return f


def test_by_context_and_syscall(parse):
    f = context_session()
    j = json.loads(ok(parse(f, "--mode", "all", "--by", "context",
                            "--format", "json")))
    assert {r["context"]: r["samples"] for r in j["rows"]} == dict(
        user=3, syscall=9, exception=5, hardirq=6, softirq=7, kthread=8,
        idle=9, kernel=2)
    assert "syscall" not in j["rows"][0]        # not grouped by it
    j = json.loads(ok(parse(f, "--mode", "all", "--by", "syscall",
                            "--format", "json")))
    assert {r["syscall"]: r["samples"] for r in j["rows"]} == {
        None: 40, "read": 4, "nanosleep": 2, "getppid": 1,
        "sample_start": 1, "sys_999": 1}
    out = ok(parse(f, "--mode", "kernel", "--by", "syscall,context"))
    assert re.search(r"^ +8 .*  kthread +-$", out, re.M)
    assert re.search(r"^ +4 .*  syscall +read$", out, re.M)
    out = ok(parse(f, "--mode", "all", "--by", "app,syscall", "--format",
                   "csv"))
    assert out.splitlines()[0] == \
        "app,instance,pid,mode,syscall,samples,percent"
    assert "app,,,all,,40,81.63" in out and "app,,,all,read,4,8.16" in out


def test_older_files_have_no_context(parse):
    """A version 4 file: kernel samples are 'kernel', none in a call; its
    reports do not change."""
    f = context_session(version=4)
    j = json.loads(ok(parse(f, "--mode", "all", "--by", "context",
                            "--format", "json")))
    assert {r["context"]: r["samples"] for r in j["rows"]} == dict(
        user=3, idle=9, kernel=37)
    out = ok(parse(f, "--latency"))
    assert "System call latency by app: 0 histograms of 0 calls, 0 " \
        "segments\n  (none" in out


def test_kctx_comes_before_the_other_optional_fields(parse, tmp_path):
    """The kernel context is the first optional field: a chain id after
    it is read right (its chain is found)."""
    f = sf.SessionFile(hz=1000, nr_cpus=1, flags=sf.SAMPLE_F_CALLCHAIN)
    f.appid(1, "app", pid=100)
    f.chain(0, 7, kernel=[K_SCHED], user=[0x401000])
    f.sample(1, K_COPY, mode=sf.MODE_KERNEL, pid=100, tid=100, kctx=READ,
             chain=7)
    f.stats(samples_taken=1, samples_written=1, appids=1)
    ks = tmp_path / "k.kallsyms"
    ks.write_text(KSYMS)
    out = ok(parse(f, "--mode", "all", "--format", "folded", "--kallsyms",
                   ks))
    assert out.endswith(";schedule_[k];copy_user_generic_[k] 1\n")
    assert "chains lost" not in ok(parse(f, "--mode", "all", "--tree",
                                         "--kallsyms", ks))
    s = sleepyread.read(f.write(tmp_path / "s"))
    assert s.samples[0]["kctx"] == READ


# ---------------------------------------------------------------- SQLite

def test_sqlite_tables(parse, tmp_path):
    db = tmp_path / "s.db"
    ok(parse(peak_session(), "--sqlite", db, "--mode", "all"))
    con = sqlite3.connect(db)
    assert con.execute("SELECT app, appid, syscall, nr, segment, "
                       "bucket_lo_ns, bucket_hi_ns, count FROM latency "
                       "ORDER BY appid, bucket_lo_ns").fetchall() == [
        ("latency_demo", 1, "read", 0, 0, 4096, 8192, 10),
        ("latency_demo", 1, "read", 0, 0, 1 << 20, 1 << 21, 5),
        ("other", 2, "read", 0, 0, 1 << 20, 1 << 21, 1)]
    assert con.execute("SELECT appid, pid, tid, nr, syscall, start_ns, "
                       "latency_ns, flags FROM syscalls ORDER BY tid, "
                       "start_ns").fetchall() == [
        (1, 100, 101, 0, "read", 1 * MS, 5 * US, 0),
        (1, 100, 101, 0, "read", 10 * MS, 1500 * US, 0),
        (2, 200, 201, 0, "read", 10 * MS, 1500 * US, 0)]
    assert con.execute("SELECT segment, calls, histograms FROM "
                       "lat_segments").fetchall() == [(0, 16, 2)]
    assert con.execute("SELECT context, syscall, SUM(samples) FROM samples "
                       "GROUP BY context, syscall ORDER BY context"
                       ).fetchall() == [("syscall", "read", 7),
                                        ("user", None, 1)]
    # --app keeps its appids' rows.
    ok(parse(peak_session(), "--sqlite", db, "--app", "other"))
    con = sqlite3.connect(db)
    assert con.execute("SELECT DISTINCT appid FROM latency UNION ALL "
                       "SELECT DISTINCT appid FROM syscalls").fetchall() == \
        [(2,), (2,)]


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("rec, what", [
    (sf.latency_record(1, 0, {10: 1}, size=40), "latency record of 40 bytes "
     "is shorter than its 52-byte fixed part"),
    (sf.latency_record(1, 0, {10: 1}, first=45, nr_buckets=4)[:52] +
     b"\0" * 32, "first bucket 45 and 4 buckets go past the 48 buckets"),
    (sf.latency_record(1, 0, {10: 1}, size=68) + b"\0" * 8,
     "latency record of 68 bytes: its 1 buckets make it 60"),
    (sf.latency_record(1, 0, {10: 1, 11: 2}, calls=4),
     "its counts add up to 3, not to its calls (4)"),
    (sf.syscall_record(1, 0, size=36)[:36], "syscall record of 36 bytes is shorter "
     "than its 40-byte fixed part"),
    (sf.syscall_record(1, 0, cpu=5), "syscall record: cpu 5 out of range"),
    (sf.lat_segment_record(0, size=40)[:40], "latency segment record of 40 bytes "
     "is shorter than its 48-byte fixed part"),
    (sf.sample(1, 0x10, flags=sf.SAMPLE_F_KCTX), "sample (with a kernel "
     "context) record of 36 bytes is shorter than its 38-byte fixed part"),
])
def test_corrupt_records(parse, rec, what):
    f = sf.SessionFile(nr_cpus=2)
    f.sample(1, 0x10)
    off = f.add(rec)
    msg = error(parse(f, "--latency"))
    assert what in msg and msg.endswith(f" at byte offset {off}\n"), msg


def test_records_that_do_not_add_up_warn(parse):
    """A LAT_SEGMENT whose LATENCY records are missing: a warning."""
    f = lat_session([NANOSLEEP_HIST])
    f.lat_segment(1, calls=5, histograms=1)
    r = parse(f, "--latency")
    assert r.returncode == 0
    assert "warning: segment 1: its LAT_SEGMENT record has 1 histograms of " \
        "5 calls, the file 0 of 0" in r.stderr


@pytest.mark.parametrize("args, what", [
    (["--segments"], "--segments needs --latency"),
    (["--peak", "a:read:1"], "--peak needs --latency"),
    (["--latency", "--by", "symbol"], "by app or appid"),
    (["--latency", "--mode", "all"], "--mode: not with --latency"),
    (["--latency", "--tid", "5"], "--tid: not with --latency"),
    (["--latency", "--format", "folded"], "prints text, csv or json"),
    (["--latency", "--compare", "x", "--peak", "a:read:1"],
     "--compare and --peak exclude each other"),
    (["--latency", "--plot", "x.png"], "PNG is not supported"),
])
def test_usage_errors(parse, args, what):
    assert what in error(parse(lat_session([NANOSLEEP_HIST]), *args))


def test_peak_needs_a_file(parse_bin):
    r = run(parse_bin, "--latency", "--peak", "a:read:1", "-")
    assert r.returncode == 2 and "not standard input" in r.stderr


def test_help_documents_the_options(parse_bin):
    out = ok(run(parse_bin, "--help"))
    for word in ("--latency", "--segments", "--compare OLD", "--peak APP:",
                 "context", "syscall"):
        assert word in out


# ---------------------------------------------------------------- plot

BARS_JS = """[].map.call(document.querySelectorAll('g.hist'), function (g) {
  return {nr: +g.getAttribute('data-nr'),
    bars: [].map.call(g.querySelectorAll('rect.bar'), function (r) {
      var b = r.getBoundingClientRect();
      var hit = document.elementFromPoint(b.x + b.width / 2,
                                          b.y + b.height / 2);
      return {bucket: +r.getAttribute('data-bucket'),
              count: +r.getAttribute('data-count'),
              peak: +r.getAttribute('data-peak'), x: b.x, y: b.y,
              w: b.width, h: b.height, hit: hit === r,
              fill: getComputedStyle(r).fill};
    }),
    peaks: [].map.call(g.querySelectorAll('g.peak'), function (p) {
      var b = p.getBoundingClientRect();
      return {n: +p.getAttribute('data-n'), x: b.x, w: b.width};
    })};
})"""


def test_plot_renders_in_chromium(parse, browser, tmp_path):
    """One panel per (app, system call): a bar per non-empty bucket on a
    log2 axis, its height log-scaled, in its peak's colour; the peaks
    marked above their bars."""
    svg = tmp_path / "lat.svg"
    f = lat_session([dict(appid=1, nr=READ, counts={10: 1000, 11: 10,
                                                    12: 100, 20: 1}),
                     NANOSLEEP_HIST])
    ok(parse(f, "--latency", "--plot", svg))
    text = svg.read_text()
    assert ">1us</text>" in text and ">1ms</text>" in text
    p = browser.page()
    p.navigate(svg.as_uri())
    hists = p.evaluate(BARS_JS)
    assert p.exceptions() == []
    browser.send("Target.closeTarget", {"targetId": p.target})
    assert [h["nr"] for h in hists] == [READ, NANOSLEEP]
    read = hists[0]
    assert [(b["bucket"], b["count"], b["peak"]) for b in read["bars"]] == \
        [(10, 1000, 1), (11, 10, 0), (12, 100, 2), (20, 1, 3)]
    assert all(b["hit"] for b in read["bars"])
    top = read["bars"][0]["h"]
    for b in read["bars"]:
        want = top * math.log10(b["count"] + 1) / math.log10(1001)
        assert abs(b["h"] - want) < 0.05, b
    # One axis: a bucket is as wide everywhere; buckets are ordered.
    xs = [b["x"] for b in read["bars"]]
    step = (xs[1] - xs[0])
    assert abs((xs[2] - xs[1]) - step) < 0.05
    assert abs((xs[3] - xs[2]) - 8 * step) < 0.05
    assert len({b["fill"] for b in read["bars"]}) == 4   # 3 peaks, a valley
    assert [k["n"] for k in read["peaks"]] == [1, 2, 3]
    for k, b in zip(read["peaks"], (read["bars"][0], read["bars"][2],
                                   read["bars"][3])):
        assert k["x"] <= b["x"] + 1 and k["x"] + k["w"] >= b["x"] + b["w"] - 1
