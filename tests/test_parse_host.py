"""Host-side tests of parse and of the system call tools' argument handling.

No VM: the tools are built for the host into a temporary directory, and
session files are written with tests/sleepyfile.py. Expected reports are
computed here independently of parse.

    /usr/bin/python3 -m pytest tests/test_parse_host.py
"""
import collections
import errno as errno_mod
import csv
import io
import os
import random
import re
import struct
import subprocess
from pathlib import Path

import pytest

import sleepyfile as sf
from conftest import NO_SUPPORT_STATUS, UAPI, run, uapi_values

MODES = {"user": sf.MODE_USER, "kernel": sf.MODE_KERNEL, "irq": sf.MODE_IRQ,
         "idle": sf.MODE_IDLE}
CSV_HEADER = "app,instance,pid,mode,eip,samples,percent"


# ---------------------------------------------------------------- building

@pytest.fixture(scope="session")
def out_dir(user_build):
    """parse (guest and host) and the syscall tools (guest and host), built
    from this tree into a temporary OUT."""
    user_build("parse", "all")
    return user_build("syscalls-user", "all", "host")


def has_interp(path):
    """Whether an ELF64 file has a PT_INTERP program header (is dynamic)."""
    data = Path(path).read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    return any(struct.unpack_from("<I", data, phoff + i * phentsize)[0] == 3
               for i in range(phnum))


def test_guest_binaries_are_static_and_host_parse_runs(out_dir):
    for name in ("parse", "sample_start", "sample_stop"):
        assert not has_interp(out_dir / "guest" / name), name
    assert run(out_dir / "host" / "parse", "--help").returncode == 0


def member(name):
    """The C member of a field sleepyfile.py names: user_stop_X is
    user_stops[SLEEPY_USER_STOP_X]."""
    if name in sf.USER_STOPS:
        return f"user_stops[{sf.USER_STOPS.index(name)}]"
    if name.startswith("unwind_fallback_"):
        return f"unwind_fallbacks[{sf.UNWIND_WALK_STATS.index(name) - 2}]"
    return name


def test_python_layout_matches_the_uapi_header(tmp_path):
    """sleepyfile.py's record layouts are the C header's: every field of
    struct sample_stats and struct sleepy_rec_cpu_stats at its offset (the
    user walks' stops, named one by one here, are an array there)."""
    fields = [("struct sample_stats", member(n)) for n, _ in sf.STATS_FIELDS]
    fields += [("struct sleepy_rec_cpu_stats", member(n))
               for n, _ in sf.CPU_STATS_FIELDS]
    got = uapi_values(tmp_path, [
        "sizeof(struct sleepy_file_header)",
        "offsetof(struct sleepy_file_header, version)",
        "offsetof(struct sleepy_file_header, header_size)",
        "offsetof(struct sleepy_file_header, release)",
        "sizeof(struct sleepy_rec_sample)",
        "offsetof(struct sleepy_rec_sample, ip)",
        "sizeof(struct sleepy_rec_appid)",
        "offsetof(struct sleepy_rec_appid, name_len)",
        "sizeof(struct sleepy_rec_mmap)",
        "offsetof(struct sleepy_rec_mmap, path_len)",
        "sizeof(struct sleepy_rec_stats)",
        "offsetof(struct sleepy_rec_stats, stats)",
        "sizeof(struct sample_stats)",
        "SAMPLE_STATS_SIZE_VER0",
        "SAMPLE_STATS_SIZE_VER1",
        "SAMPLE_STATS_SIZE_VER2",
        "SAMPLE_STATS_SIZE_VER3",
        "SAMPLE_STATS_SIZE_VER4",
        "SAMPLE_STATS_SIZE_VER5",
        "SAMPLE_STATS_SIZE_VER6",
        "sizeof(struct sleepy_rec_cpu_stats)",
        "sizeof(struct sleepy_rec_chain)",
        "offsetof(struct sleepy_rec_chain, id)",
        "offsetof(struct sleepy_rec_chain, flags)",
        "sizeof(struct sample_config)",
        "SAMPLE_CONFIG_SIZE_VER0",
        "SAMPLE_CONFIG_SIZE_VER1",
        "SAMPLE_CONFIG_SIZE_VER2",
        "SAMPLE_CONFIG_SIZE_VER3",
        "SAMPLE_CONFIG_SIZE_VER4",
        "offsetof(struct sample_config, max_unwind_mem)",
        "offsetof(struct sample_config, max_size)",
        "offsetof(struct sample_config, latency_interval_ms)",
        "offsetof(struct sample_config, callchain_depth)",
        "SLEEPY_FORMAT_VERSION",
        "SLEEPY_REC_CPU_STATS",
        "SLEEPY_REC_CHAIN",
        "SLEEPY_SAMPLE_F_CHAIN",
        "SAMPLE_F_CALLCHAIN",
        "SLEEPY_CHAIN_F_TRUNCATED",
        "SLEEPY_CHAIN_F_SP_RET",
        "SLEEPY_CHAIN_F_USER_CUT",
        "SLEEPY_SAMPLE_F_EXEC",
    ] + [f"offsetof({t}, {n})" for t, n in fields])

    def off(fmt, fields, name):
        for n, t in fields:
            if n == name:
                return struct.calcsize(fmt)
            fmt += t
        raise KeyError(name)

    assert got["sizeof(struct sleepy_file_header)"] == sf.HEADER_SIZE
    assert got["offsetof(struct sleepy_file_header, version)"] == \
        sf.HEADER_VERSION_OFFSET
    assert got["offsetof(struct sleepy_file_header, header_size)"] == \
        sf.HEADER_SIZE_OFFSET
    assert got["offsetof(struct sleepy_file_header, release)"] == \
        struct.calcsize("<8sIIIIIIQQ")
    assert got["sizeof(struct sleepy_rec_sample)"] == sf.SAMPLE_SIZE
    assert got["offsetof(struct sleepy_rec_sample, ip)"] == \
        struct.calcsize("<HHBBHIIIQ")
    assert got["sizeof(struct sleepy_rec_appid)"] == sf.APPID_SIZE
    assert got["offsetof(struct sleepy_rec_appid, name_len)"] == \
        struct.calcsize("<HHIIIIBB")
    assert got["sizeof(struct sleepy_rec_mmap)"] == sf.MMAP_SIZE
    assert got["offsetof(struct sleepy_rec_mmap, path_len)"] == \
        struct.calcsize("<HHIIQQQQB20sB")
    assert got["sizeof(struct sleepy_rec_stats)"] == sf.STATS_SIZE
    assert got["offsetof(struct sleepy_rec_stats, stats)"] == \
        sf.STATS_HDR.size
    assert got["sizeof(struct sample_stats)"] == sf.SAMPLE_STATS_SIZE == \
        got["SAMPLE_STATS_SIZE_VER6"]
    assert got["SAMPLE_STATS_SIZE_VER5"] == sf.SAMPLE_STATS_SIZE_V6 == \
        off("<", sf.STATS_FIELDS, "mmap_repeats")
    assert got["SAMPLE_STATS_SIZE_VER4"] == sf.SAMPLE_STATS_SIZE_V5 == \
        off("<", sf.STATS_FIELDS, "unwind_frames")
    assert got["SAMPLE_STATS_SIZE_VER3"] == sf.SAMPLE_STATS_SIZE_V4 == \
        off("<", sf.STATS_FIELDS, "syscalls_counted")
    assert got["SAMPLE_STATS_SIZE_VER2"] == sf.SAMPLE_STATS_SIZE_V3 == \
        off("<", sf.STATS_FIELDS, "lstack_samples")
    assert got["SAMPLE_STATS_SIZE_VER1"] == sf.SAMPLE_STATS_SIZE_V2 == \
        off("<", sf.STATS_FIELDS, "chains_defined")
    assert got["SAMPLE_STATS_SIZE_VER0"] == sf.SAMPLE_STATS_SIZE_VER0 == \
        off("<", sf.STATS_FIELDS, "dropped_max_size")
    assert got["sizeof(struct sleepy_rec_cpu_stats)"] == sf.CPU_STATS_SIZE
    assert off("<HH", sf.CPU_STATS_FIELDS, "chains_defined") == \
        sf.CPU_STATS_SIZE_V2
    assert off("<HH", sf.CPU_STATS_FIELDS, "lstack_samples") == \
        sf.CPU_STATS_SIZE_V3
    assert off("<HH", sf.CPU_STATS_FIELDS, "unwind_frames") == \
        sf.CPU_STATS_SIZE_V4
    assert got["sizeof(struct sleepy_rec_chain)"] == sf.CHAIN_SIZE
    assert got["offsetof(struct sleepy_rec_chain, id)"] == \
        struct.calcsize("<HHHBB")
    assert got["offsetof(struct sleepy_rec_chain, flags)"] == \
        struct.calcsize("<HHHBBI")
    assert got["sizeof(struct sample_config)"] == \
        got["SAMPLE_CONFIG_SIZE_VER4"] == 48
    assert got["offsetof(struct sample_config, max_unwind_mem)"] == \
        got["SAMPLE_CONFIG_SIZE_VER3"] == 40
    assert got["offsetof(struct sample_config, latency_interval_ms)"] == \
        got["SAMPLE_CONFIG_SIZE_VER2"] == 32
    assert got["offsetof(struct sample_config, callchain_depth)"] == \
        got["SAMPLE_CONFIG_SIZE_VER1"] == 24
    assert got["offsetof(struct sample_config, max_size)"] == \
        got["SAMPLE_CONFIG_SIZE_VER0"] == 16
    assert got["SLEEPY_FORMAT_VERSION"] == sf.FORMAT_VERSION
    assert got["SLEEPY_REC_CPU_STATS"] == sf.REC_CPU_STATS
    assert got["SLEEPY_REC_CHAIN"] == sf.REC_CHAIN
    assert got["SLEEPY_SAMPLE_F_CHAIN"] == sf.SAMPLE_F_CHAIN
    assert got["SAMPLE_F_CALLCHAIN"] == sf.SAMPLE_F_CALLCHAIN
    assert got["SLEEPY_CHAIN_F_TRUNCATED"] == sf.CHAIN_F_TRUNCATED
    assert got["SLEEPY_CHAIN_F_SP_RET"] == sf.CHAIN_F_SP_RET
    assert got["SLEEPY_CHAIN_F_USER_CUT"] == sf.CHAIN_F_USER_CUT
    assert got["SLEEPY_SAMPLE_F_EXEC"] == sf.SAMPLE_F_EXEC
    # struct sample_stats has natural alignment; its fields need no
    # padding, which the packed format string assumes.
    for n, _ in sf.STATS_FIELDS:
        assert got[f"offsetof(struct sample_stats, {member(n)})"] == \
            off("<", sf.STATS_FIELDS, n), n
    for n, _ in sf.CPU_STATS_FIELDS:
        assert got[f"offsetof(struct sleepy_rec_cpu_stats, {member(n)})"] \
            == off("<HH", sf.CPU_STATS_FIELDS, n), n


def test_version_1_stats_layout():
    """Version 1's STATS record, as the uapi header's comment describes it
    (the header no longer defines the struct): 376 bytes, appids after
    first_write_error, buffers_hwm[64] last."""
    assert sf.SAMPLE_STATS_SIZE_V1 == 376 and sf.STATS_SIZE_V1 == 384
    names = [n for n, _ in sf.STATS_FIELDS_V1]
    assert names[:2] == ["size", "nr_cpus"]
    assert names[names.index("first_write_error"):] == [
        "first_write_error", "appids", "meta_dropped", "pids_mapped",
        "irq_ns_total", "irq_ns_max", "irq_calls"]
    assert struct.calcsize("<" + "".join(t for _, t in sf.STATS_FIELDS_V1)) \
        == 376 - 4 * sf.STATS_MAX_CPUS_V1


# ---------------------------------------------------------------- a session

# appid -> (name, instance, pid)
APPIDS = {
    1: ("loop", 0, 100),
    2: ("loop", 1, 101),
    3: ("call", 0, 102),
    4: ('we,ird "name"', 0, 103),
    5: ("[kworker/0:1]", 0, 7),
    6: ("[idle]", 0, 0),
}
UNKNOWN_APPID = 9       # samples, no APPID record

# (appid, ip, mode, count): ties on purpose (equal counts across keys).
SAMPLES = [
    (1, 0x401000, sf.MODE_USER, 7),
    (1, 0x401010, sf.MODE_USER, 3),
    (2, 0x401000, sf.MODE_USER, 5),
    (2, 0x401020, sf.MODE_USER, 3),
    (3, 0x402000, sf.MODE_USER, 3),
    (4, 0x403000, sf.MODE_USER, 2),
    (UNKNOWN_APPID, 0x404000, sf.MODE_USER, 2),
    (1, 0xffffffff81001000, sf.MODE_KERNEL, 4),
    (3, 0xffffffff81001000, sf.MODE_KERNEL, 4),
    (5, 0xffffffff81002000, sf.MODE_KERNEL, 2),
    (2, 0xffffffff81003000, sf.MODE_IRQ, 1),
    (6, 0xffffffff81004000, sf.MODE_IDLE, 6),
]


def session(*, with_stats=True, unknown_records=False,
            version=sf.FORMAT_VERSION):
    """The test session: appid 3's record comes after its samples, samples
    of different keys interleave, kernel samples carry a user_ip. Version
    1 or 2 of the format, with the same statistics (version 2 adds its
    CPU_STATS records)."""
    f = sf.SessionFile(hz=250, nr_cpus=2, release="6.1.99-sleepy",
                       version=version)
    for a, (name, inst, pid) in APPIDS.items():
        if a != 3:
            f.appid(a, name, instance=inst, pid=pid, path=f"/bin/{name}")
    expanded = [(a, ip, mode) for a, ip, mode, n in SAMPLES
                for _ in range(n)]
    random.Random(7).shuffle(expanded)
    for i, (a, ip, mode) in enumerate(expanded):
        uip = 0x401000 + i if mode == sf.MODE_KERNEL else None
        f.sample(a, ip, mode=mode, cpu=i % 2, pid=100 + a, tid=100 + a,
                 time_ns=i * 4_000_000, user_ip=uip)
        if unknown_records and i % 5 == 0:
            f.record(200 + i % 3, b"future record" * (i % 4))
        if i == 10:
            f.mmap(1, 0x400000, 0x2000, pid=100, path="/bin/loop",
                   build_id=bytes(range(20)))
    name, inst, pid = APPIDS[3]
    f.appid(3, name, instance=inst, pid=pid, path="/bin/call")
    if with_stats:
        n = len(expanded)
        cpus = [dict(buffers_hwm=3, samples_taken=25, dropped_no_buffer=2,
                     irq_ns_total=50_000, irq_ns_max=3000, irq_calls=25),
                dict(buffers_hwm=4, samples_taken=n + 3 - 25,
                     dropped_no_appid=1, irq_ns_total=60_000,
                     irq_ns_max=4000, irq_calls=n + 3 - 25)]
        totals = dict(samples_taken=n + 3, samples_written=n,
                      dropped_no_buffer=2, dropped_no_appid=1,
                      appids=len(APPIDS), bytes_written=f.size,
                      irq_ns_total=110_000, irq_ns_max=4000,
                      irq_calls=n + 3, pids_mapped=5, meta_dropped=1)
        if version == 1:
            f.stats(buffers_hwm=[3, 4], **totals)
        else:
            f.stats(buffers_hwm=4, cpus=cpus, **totals)
    return f


def selected(mode):
    return [(a, ip, n) for a, ip, m, n in SAMPLES
            if mode == "all" or m == MODES[mode]]


def appid_key(a):
    if a in APPIDS:
        name, inst, _ = APPIDS[a]
        return (0, name.encode(), inst, a)
    return (1, b"", 0, a)


def pct(n, total):
    return f"{n * 100 / total:.2f}"


def expected_csv(by, mode):
    """The CSV rows parse should print, computed independently."""
    rows = selected(mode)
    total = sum(n for _, _, n in rows)
    out = []
    if by == "appid-eip":
        c = collections.Counter()
        for a, ip, n in rows:
            c[(a, ip)] += n
        for (a, ip), n in sorted(c.items(), key=lambda kv: (
                -kv[1], appid_key(kv[0][0]), kv[0][1])):
            out.append(appid_cols(a) + [mode, hex(ip), str(n),
                                        pct(n, total)])
    elif by == "appid":
        c = collections.Counter()
        for a, _, n in rows:
            c[a] += n
        for a, n in sorted(c.items(),
                           key=lambda kv: (-kv[1], appid_key(kv[0]))):
            out.append(appid_cols(a) + [mode, "", str(n), pct(n, total)])
    elif by == "app":
        c = collections.Counter()
        for a, _, n in rows:
            c[("n", APPIDS[a][0]) if a in APPIDS else ("u", a)] += n

        def key(kv):
            k, n = kv
            return (-n, (0, k[1].encode(), 0) if k[0] == "n"
                    else (1, b"", k[1]))
        for k, n in sorted(c.items(), key=key):
            app = k[1] if k[0] == "n" else f"?appid={k[1]}"
            out.append([app, "", "", mode, "", str(n), pct(n, total)])
    elif by == "eip":
        c = collections.Counter()
        for _, ip, n in rows:
            c[ip] += n
        for ip, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])):
            out.append(["", "", "", mode, hex(ip), str(n), pct(n, total)])
    return out, total


def appid_cols(a):
    if a in APPIDS:
        name, inst, pid = APPIDS[a]
        return [name, str(inst), str(pid)]
    return [f"?appid={a}", "", ""]


def csv_rows(text):
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == CSV_HEADER.split(",")
    return rows[1:]


@pytest.mark.parametrize("by", ["appid-eip", "appid", "app", "eip"])
@pytest.mark.parametrize("mode", ["user", "kernel", "irq", "idle", "all"])
def test_csv_reports_are_exact(parse, by, mode):
    r = parse(session(), "--by", by, "--mode", mode, "--format", "csv")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    want, _ = expected_csv(by, mode)
    assert csv_rows(r.stdout) == want


def test_default_csv_is_both_paper_reports_in_user_mode(parse):
    r = parse(session(), "--format", "csv")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == CSV_HEADER
    want = expected_csv("appid-eip", "user")[0] + \
        expected_csv("appid", "user")[0]
    assert csv_rows(r.stdout) == want


def test_csv_lines_exactly(parse):
    """A few rows as raw text: quoting, hex, empty fields, percent."""
    r = parse(session(), "--by", "appid", "--format", "csv")
    lines = r.stdout.splitlines()
    assert lines[0] == CSV_HEADER
    # user: 10 loop#0, 8 loop#1, 3 call, 2 weird, 2 unknown = 25
    assert lines[1:] == [
        "loop,0,100,user,,10,40.00",
        "loop,1,101,user,,8,32.00",
        "call,0,102,user,,3,12.00",
        '"we,ird ""name""",0,103,user,,2,8.00',
        "?appid=9,,,user,,2,8.00",
    ]
    r = parse(session(), "--by", "eip", "--mode", "kernel", "--format", "csv")
    assert r.stdout.splitlines()[1:] == [
        ",,,kernel,0xffffffff81001000,8,80.00",
        ",,,kernel,0xffffffff81002000,2,20.00",
    ]


def text_report(out, title):
    """The rows of the text report titled title: (total, [row words]),
    each row's estimated CPU time (its second column, samples / HZ)
    checked and left out."""
    lines = out.splitlines()
    hz = int(re.search(r"\bHZ (\d+)\b", out).group(1))
    for i, line in enumerate(lines):
        m = re.fullmatch(re.escape(title) + r", (.+): (\d+) samples", line)
        if m:
            assert lines[i + 1].split()[:3] == ["samples", "time", "percent"]
            rows = []
            for row in lines[i + 2:]:
                if not row.strip():
                    break
                words = row.split()
                assert words[1] == f"{int(words[0]) / hz:.3f}s", row
                rows.append(words[:1] + words[2:])
            return m.group(1), int(m.group(2)), rows
    raise AssertionError(f"no report {title!r} in:\n{out}")


def test_default_text_has_header_and_both_reports(parse, tmp_path):
    r = parse(session())
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    out = r.stdout
    assert max(len(line) for line in out.splitlines()) <= 80
    # The file's path, or as much of its end as fits in 80 columns (the
    # path of a test's folder is longer under pytest -n).
    path = str(tmp_path / "session.bin")
    shown = out.splitlines()[0].split(None, 1)
    assert shown[0] == "file", out
    assert shown[1] == path or (shown[1].startswith("...") and
                                path.endswith(shown[1][3:]) and
                                len(out.splitlines()[0]) == 80), out
    assert "6.1.99-sleepy" in out and "HZ 250" in out and "2 CPUs" in out
    n = sum(s[3] for s in SAMPLES)
    assert re.search(rf"^samples +{n} total: user 25, kernel 10, irq 1, "
                     r"idle 6$", out, re.M)
    assert re.search(rf"^session +taken {n + 3}, written {n}\b", out, re.M)
    assert re.search(r"^dropped +3: no buffer 2, no appid 1\b", out, re.M)

    mode, total, rows = text_report(out, "Samples by appid and EIP")
    assert (mode, total) == ("user mode", 25)
    want, _ = expected_csv("appid-eip", "user")
    assert len(rows) == len(want)
    for got, w in zip(rows, want):
        assert got[0] == w[5] and got[1] == w[6] + "%"
        assert got[-1] == w[4]
        label = f"{w[0]}#{w[1]}" if w[1] else w[0]
        assert " ".join(got[2:-1]) == label
    mode, total, rows = text_report(out, "Samples by appid")
    assert (mode, total) == ("user mode", 25)
    assert [r[0] for r in rows] == ["10", "8", "3", "2", "2"]
    assert rows[0][2:] == ["loop#0", "100"]
    assert rows[-1][2:] == ["?appid=9", "-"]


@pytest.mark.parametrize("by, title", [
    ("app", "Samples by application (all instances)"),
    ("appid", "Samples by appid"),
    ("eip", "Samples by EIP"),
    ("appid-eip", "Samples by appid and EIP"),
])
@pytest.mark.parametrize("mode", ["user", "kernel", "all"])
def test_text_reports_match_csv(parse, by, title, mode):
    r = parse(session(), "--by", by, "--mode", mode)
    assert r.returncode == 0, r.stderr
    mode_title = "all modes" if mode == "all" else f"{mode} mode"
    got_mode, total, rows = text_report(r.stdout, title)
    want, want_total = expected_csv(by, mode)
    assert (got_mode, total) == (mode_title, want_total)
    assert [(row[0], row[1]) for row in rows] == \
        [(w[5], w[6] + "%") for w in want]
    assert max(len(line) for line in r.stdout.splitlines()) <= 80


def test_app_report_merges_instances(parse):
    r = parse(session(), "--by", "app", "--mode", "all")
    _, total, rows = text_report(r.stdout,
                                 "Samples by application (all instances)")
    assert total == sum(s[3] for s in SAMPLES)
    loop = [row for row in rows if row[2] == "loop"]
    assert loop == [["23", pct(23, total) + "%", "loop", "2"]]


def test_long_names_are_cut_to_80_columns_keeping_the_instance(parse):
    f = sf.SessionFile()
    f.appid(1, "x" * 300, instance=12, pid=5)
    f.appid(2, "tab\there", instance=0, pid=6)
    f.sample(1, 0xffffffffffffffff)
    f.sample(2, 0x1)
    f.stats(samples_taken=2, samples_written=2)
    r = parse(f)
    assert r.returncode == 0, r.stderr
    assert max(len(line) for line in r.stdout.splitlines()) <= 80
    assert re.search(r"x\.\.\.#12 +0xffffffffffffffff$", r.stdout, re.M)
    assert "tab?here#0" in r.stdout
    r = parse(f, "--format", "csv", "--by", "appid")
    # Raw names in CSV; equal counts, so by name: "t" < "x".
    assert [row[0] for row in csv_rows(r.stdout)] == ["tab\there", "x" * 300]


def test_unknown_appid_is_shown_as_such(parse):
    f = sf.SessionFile()
    f.appid(1, "known", pid=1)
    f.sample(1, 0x10)
    f.sample(42, 0x20)
    f.sample(42, 0x20)
    f.stats(samples_taken=3, samples_written=3)
    r = parse(f, "--by", "appid")
    _, _, rows = text_report(r.stdout, "Samples by appid")
    assert rows[0][2:] == ["?appid=42", "-"]
    r = parse(f, "--by", "appid-eip", "--format", "csv")
    assert r.stdout.splitlines()[1] == "?appid=42,,,user,0x20,2,66.67"


def test_unknown_record_types_are_skipped(parse):
    plain = parse(session(), "--format", "csv", "--mode", "all")
    extra = parse(session(unknown_records=True), "--format", "csv", "--mode",
                  "all")
    assert extra.returncode == 0, extra.stderr
    assert extra.stdout == plain.stdout
    text = parse(session(unknown_records=True)).stdout
    assert re.search(r"^records .* \d+ unknown$", text, re.M)


def test_no_stats_record_parses_with_a_warning(parse):
    r = parse(session(with_stats=False), "--format", "csv")
    assert r.returncode == 0
    assert csv_rows(r.stdout) == expected_csv("appid-eip", "user")[0] + \
        expected_csv("appid", "user")[0]
    warn = r.stderr.splitlines()
    assert len(warn) == 1 and "warning" in warn[0] and "STATS" in warn[0]
    r = parse(session(with_stats=False))
    assert r.returncode == 0 and "no STATS record" in r.stdout


# ------------------------------------------------ statistics, versions 1, 2

def strip_versions(j):
    """A JSON report without what tells the versions apart: the version
    and the CPU_STATS records (version 2 on)."""
    del j["session"]["version"]
    return {k: v for k, v in j.items() if k != "cpu_stats"}


def test_versions_1_to_3_report_the_same(parse):
    """The same session written as format versions 1, 2 and 3: every
    report is the same, but for the version and the CPU_STATS records."""
    import json
    got = {}
    for v in (1, 2, 3):
        text = parse(session(version=v), "--mode", "all")
        csv_ = parse(session(version=v), "--format", "csv", "--by",
                     "appid-eip", "--mode", "all")
        js = parse(session(version=v), "--format", "json")
        for r in (text, csv_, js):
            assert r.returncode == 0 and r.stderr == "", (v, r.stderr)
        got[v] = (text.stdout, csv_.stdout, json.loads(js.stdout))
    (t1, c1, j1), (t2, c2, j2), (t3, c3, j3) = got[1], got[2], got[3]
    assert c1 == c2 == c3 and t2 == t3
    assert j2["cpu_stats"] == j3["cpu_stats"]
    assert j3["session"]["version"] == 3
    assert strip_versions(j3) == strip_versions(dict(j2, session=dict(
        j2["session"])))
    records = re.compile(r"^records .*\n", re.M)
    assert records.search(t1).group() == "records       42 samples, 6 " \
        "appids, 1 mmaps, 0 cpu stats, 1 stats, 0 unknown\n"
    assert records.search(t2).group() == "records       42 samples, 6 " \
        "appids, 1 mmaps, 2 cpu stats, 1 stats, 0 unknown\n"
    assert records.sub("", t1) == records.sub("", t2)
    assert (j1["session"]["version"], j2["session"]["version"]) == (1, 2)
    assert j1["cpu_stats"] == []
    assert strip_versions(j1) == strip_versions(j2)
    st = j2["statistics"]
    assert [k for k in st] == [n for n, _ in sf.STATS_FIELDS]
    assert (st["samples_taken"], st["buffers_hwm"], st["dropped_max_size"],
            st["pids_mapped"]) == (45, 4, 0, 5)


def test_statistics_in_every_output(parse, tmp_path):
    """The STATS record's new figures (dropped_max_size, buffers_hwm) and
    the CPU_STATS records: text, JSON and SQLite."""
    import json
    import sqlite3
    f = sf.SessionFile(nr_cpus=3)
    f.sample(1, 0x10, cpu=2)
    cpus = [dict(samples_taken=4, dropped_no_buffer=1, buffers_hwm=2),
            dict(), dict(samples_taken=3, skipped_not_user=7,
                         buffers_hwm=5, irq_ns_max=9, irq_calls=3)]
    f.stats(samples_taken=7, samples_written=1, dropped_no_buffer=1,
            dropped_max_size=5, skipped_not_user=7, buffers_hwm=5,
            irq_ns_max=9, irq_calls=3, first_write_error=-28, cpus=cpus)
    r = parse(f)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert re.search(r"^dropped +6: no buffer 1, no appid 0, write error 0, "
                     r"max size 5$", r.stdout, re.M)
    assert re.search(r"^buffers +5 in use at most, on the busiest CPU$",
                     r.stdout, re.M)
    j = json.loads(parse(f, "--format", "json").stdout)
    assert j["statistics"]["dropped_max_size"] == 5
    assert j["statistics"]["first_write_error"] == -28
    assert [c["cpu"] for c in j["cpu_stats"]] == [0, 1, 2]
    assert j["cpu_stats"][2] == dict(
        cpu=2, buffers_hwm=5, samples_taken=3, dropped_no_buffer=0,
        dropped_no_appid=0, skipped_not_user=7, irq_ns_total=0,
        irq_ns_max=9, irq_calls=3, chains_defined=0, chains_truncated=0,
        **{n: 0 for n in sf.USER_STOPS + sf.LSTACK_STATS +
           sf.UNWIND_WALK_STATS})
    db = tmp_path / "s.db"
    assert parse(f, "--sqlite", db).returncode == 0
    con = sqlite3.connect(db)
    cols = [c[1] for c in con.execute("PRAGMA table_info(stats)")]
    assert cols == [n for n, _ in sf.STATS_FIELDS]
    row = dict(zip(cols, con.execute("SELECT * FROM stats").fetchone()))
    assert (row["dropped_max_size"], row["buffers_hwm"],
            row["first_write_error"]) == (5, 5, -28)
    assert con.execute("SELECT dropped FROM session").fetchall() == [(6,)]
    cols = [c[1] for c in con.execute("PRAGMA table_info(cpu_stats)")]
    assert cols == [n for n, _ in sf.CPU_STATS_FIELDS]
    # The schema parse.md shows.
    doc = (Path(__file__).parent.parent / "Documentation" /
           "parse.md").read_text()
    for table in ("stats", "cpu_stats"):
        m = re.search(rf"CREATE TABLE {table} \(.*?\n(.*?)\);", doc,
                      re.S)
        assert re.findall(r"(\w+) INTEGER", m.group(1)) == [
            c[1] for c in con.execute(f"PRAGMA table_info({table})")]
    assert con.execute("SELECT cpu, samples_taken, buffers_hwm FROM "
                       "cpu_stats ORDER BY cpu").fetchall() == \
        [(0, 4, 2), (1, 0, 0), (2, 3, 5)]
    f = sf.SessionFile()
    f.sample(1, 0x10)
    assert parse(f, "--sqlite", db).returncode == 0
    con = sqlite3.connect(db)
    assert con.execute("SELECT COUNT(*) FROM stats").fetchall() == [(0,)]
    assert con.execute("SELECT COUNT(*) FROM cpu_stats").fetchall() == [(0,)]


@pytest.mark.parametrize("struct_bytes", [120, 128, 200])
def test_stats_of_any_size_from_ver0(parse, struct_bytes):
    """A kernel's struct sample_stats may be SAMPLE_STATS_SIZE_VER0 bytes
    (dropped_max_size is then 0) or larger than ours (the rest is
    ignored)."""
    import json
    f = sf.SessionFile()
    f.sample(1, 0x10)
    f.stats(samples_taken=3, samples_written=1, dropped_max_size=2,
            irq_calls=4, struct_bytes=struct_bytes)
    r = parse(f, "--format", "json")
    assert r.returncode == 0, r.stderr
    st = json.loads(r.stdout)["statistics"]
    assert st["irq_calls"] == 4
    assert st["dropped_max_size"] == (0 if struct_bytes == 120 else 2)


def cpu_stats_file(*records):
    """A version 2 file with these records (CPU_STATS and STATS, as
    (cpu,) or "stats") after a sample; the offset of each."""
    f = sf.SessionFile(nr_cpus=4)
    f.sample(1, 0x10)
    return f, [f.stats(samples_taken=1, samples_written=1, cpus=[])
               if r == "stats" else f.cpu_stats(r) for r in records]


@pytest.mark.parametrize("records, bad, what", [
    ((0, 1, 1, 2), 2, "cpu stats record: a second one for cpu 1"),
    ((0, 2, 1, 3), 2, "cpu stats record: cpu 1 after cpu 2 (one per CPU, "
     "in CPU order)"),
    ((0, 1, 0), 2, "cpu 0 after cpu 1"),
    ((0, 1, 2, 3, "stats", 3), 5, "cpu stats record for cpu 3 after the "
     "STATS record (it must come before)"),
    (("stats", 0), 1, "after the STATS record"),
    ((0, 4), 1, "cpu stats record: cpu 4 out of range (the header has 4 "
     "CPUs)"),
])
def test_bad_cpu_stats_records(parse, records, bad, what):
    f, offs = cpu_stats_file(*records)
    assert_format_error(parse(f), offs[bad], what)


def test_cpu_stats_records_need_not_be_contiguous(parse):
    """Possible CPUs may have holes: 0, 1 and 3 of 4."""
    f, _ = cpu_stats_file(0, 1, 3, "stats")
    r = parse(f, "--format", "csv")
    assert r.returncode == 0, r.stderr
    assert "CPU_STATS records do not add up" in r.stderr


def test_type_5_in_a_version_1_file_is_unknown(parse):
    """Version 1 had no CPU_STATS: a type 5 record there is a later
    format's, skipped even when it would be a bad CPU_STATS record."""
    f = sf.SessionFile(version=1)
    f.sample(1, 0x10)
    f.stats(samples_taken=1, samples_written=1)
    f.add(sf.cpu_stats_record(99, size=20)[:20])
    r = parse(f, "--mode", "all")
    assert r.returncode == 0, r.stderr
    assert re.search(r"^records .* 0 cpu stats, 1 stats, 1 unknown$",
                     r.stdout, re.M)
    assert "records after the STATS record: 1" in r.stderr


@pytest.mark.parametrize("cpus, warning", [
    ([], "no CPU_STATS records before the STATS record"),
    ([dict(samples_taken=1), dict(samples_taken=1)],
     "the CPU_STATS records do not add up to the STATS record: "
     "samples_taken 2 against 3"),
    ([dict(samples_taken=3, buffers_hwm=2), dict(buffers_hwm=1)],
     "the CPU_STATS records do not add up to the STATS record: "
     "buffers_hwm 2 against 4"),
])
def test_cpu_stats_disagreeing_with_stats_warn(parse, cpus, warning):
    f = sf.SessionFile()
    f.sample(1, 0x10)
    f.stats(samples_taken=3, samples_written=1, discarded_no_write=2,
            buffers_hwm=4, cpus=cpus)
    r = parse(f, "--format", "csv")
    assert r.returncode == 0
    assert r.stderr.splitlines() == [
        f"parse: {f_path(r)}: warning: {warning}"]


def f_path(r):
    """The session file parse read (its last argument)."""
    return r.args[-1]


def test_stats_disagreeing_with_the_file_warns(parse):
    f = sf.SessionFile()
    f.sample(1, 1)
    f.stats(samples_taken=5, samples_written=5)
    r = parse(f)
    assert r.returncode == 0
    assert "says 5 samples were written, the file holds 1" in r.stderr


def test_empty_session(parse):
    f = sf.SessionFile(flags=sf.SAMPLE_F_NO_WRITE)
    f.stats(samples_taken=10, discarded_no_write=10)
    r = parse(f)
    assert r.returncode == 0, r.stderr
    assert "Samples by appid and EIP, user mode: 0 samples" in r.stdout
    assert "flags no-write" in r.stdout
    r = parse(f, "--format", "csv")
    assert r.stdout == CSV_HEADER + "\n"


def test_reads_standard_input(parse_bin):
    data = session().data()
    r = subprocess.run([str(parse_bin), "--format", "csv", "-"], input=data,
                       capture_output=True)
    assert r.returncode == 0
    rows = csv_rows(r.stdout.decode())
    assert rows == expected_csv("appid-eip", "user")[0] + \
        expected_csv("appid", "user")[0]


def test_large_file_streams_across_buffer_refills(parse, tmp_path):
    """Several MiB: records straddle the reader's buffer boundaries."""
    rng = random.Random(3)
    f = sf.SessionFile()
    want = collections.Counter()
    names = {}
    for i in range(150_000):
        a = rng.randrange(40)
        if a not in names and rng.random() < 0.01:
            names[a] = "n" * rng.randrange(1, 3000) + str(a)
            f.appid(a, names[a], instance=a, pid=a, path="/p" * 500)
        ip = 0x400000 + 4 * rng.randrange(5000)
        if rng.random() < 0.3:
            f.sample(a, ip, mode=sf.MODE_KERNEL, user_ip=ip)
        else:
            f.sample(a, ip)
            want[(a, ip)] += 1
    assert f.size > 3 << 20
    r = parse(f, "--by", "appid-eip", "--format", "csv")
    assert r.returncode == 0
    got = {}
    for row in csv_rows(r.stdout):
        a = int(row[0][len("?appid="):]) if row[0].startswith("?") else \
            int(row[1])
        got[(a, int(row[4], 16))] = int(row[5])
    assert got == dict(want)


# ---------------------------------------------------------------- bad files

def assert_format_error(r, offset, what=None):
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("parse: ") and "session.bin: " in lines[0]
    assert lines[0].endswith(f" at byte offset {offset}"), lines[0]
    if what:
        assert what in lines[0], lines[0]
    assert r.stdout == ""


def layout():
    """A small file and the offsets of its records."""
    f = sf.SessionFile()
    offs = [f.appid(1, "loop", pid=1, path="/bin/loop"),
            f.sample(1, 0x401000),
            f.sample(1, 0xffffffff81000000, mode=sf.MODE_KERNEL,
                     user_ip=0x401000),
            f.mmap(1, 0x400000, 0x1000, path="/bin/loop"),
            f.cpu_stats(0, samples_taken=1),
            f.cpu_stats(1, samples_taken=1),
            f.stats(samples_taken=2, samples_written=2, cpus=[])]
    return f.data(), offs


@pytest.mark.parametrize("cut", [0, 1, 7, 8, 100, 179])
def test_truncated_header(parse, cut):
    data, _ = layout()
    assert_format_error(parse(data[:cut]), 0, "truncated file header")


def test_truncated_records(parse):
    data, offs = layout()
    ends = offs[1:] + [len(data)]
    for start, end in zip(offs, ends):
        # Inside the record header, then inside the record's body.
        for cut in (start + 1, start + 3):
            assert_format_error(parse(data[:cut]), start,
                                "truncated record header")
        for cut in (start + 4, (start + end) // 2, end - 1):
            assert_format_error(parse(data[:cut]), start, "past the end")
    # At a record boundary the file is whole, only not stopped cleanly.
    r = parse(data[:offs[-1]])
    assert r.returncode == 0 and "warning" in r.stderr


def test_bad_magic(parse):
    data, _ = layout()
    assert_format_error(parse(b"SLEEPX\r\n" + data[8:]), 0, "magic")
    assert_format_error(parse(b"hello"), 0, "magic")
    assert_format_error(parse(b"\0" * 1000), 0, "magic")


@pytest.mark.parametrize("version", [0, 7, 0xFFFFFFFF])
def test_unknown_version(parse, version):
    f = sf.SessionFile(version=version)
    f.sample(1, 1)
    assert_format_error(parse(f), sf.HEADER_VERSION_OFFSET,
                        f"version {version}")


@pytest.mark.parametrize("size", [0, 100, 179, 4097, 0x7FFFFFFF,
                                  0xFFFFFFFF])
def test_bad_header_size(parse, size):
    f = sf.SessionFile(header_size=size)
    f.sample(1, 1)
    assert_format_error(parse(f), sf.HEADER_SIZE_OFFSET, "header_size")


def test_longer_header_is_skipped(parse):
    f = sf.SessionFile(header_size=sf.HEADER_SIZE + 20, extra=b"\xff" * 20)
    f.appid(1, "a", pid=1)
    f.sample(1, 0x10)
    f.stats(samples_taken=1, samples_written=1)
    r = parse(f, "--format", "csv", "--by", "appid")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1] == "a,0,1,user,,1,100.00"
    f = sf.SessionFile(header_size=sf.HEADER_SIZE + 20)
    assert_format_error(parse(f), 0, "truncated file header")


def bad_record_file(rec):
    f = sf.SessionFile()
    f.sample(1, 0x10)
    off = f.add(rec)
    f.sample(1, 0x10)
    f.stats(samples_taken=2, samples_written=2)
    return f, off


@pytest.mark.parametrize("rec, what", [
    (sf.record(sf.REC_SAMPLE, size=0), "size 0"),
    (sf.record(123, size=0), "size 0"),
    (sf.record(123, size=3) + b"\0" * 40, "size 3"),
    (sf.sample(1, 0x10, size=20) + b"\0" * 20, "shorter"),
    (sf.sample(1, 0x10, size=35) + b"\0", "shorter"),
    (sf.sample(1, 0x10, flags=sf.SAMPLE_F_USER_IP), "user_ip"),
    (sf.appid_record(1, "abc", size=30) + b"\0" * 10, "shorter"),
    (sf.appid_record(1, "abc", terminate=False), "name"),
    (sf.appid_record(1, "abc", name_len=2), "name is not NUL-terminated"),
    (sf.appid_record(1, "abc", name_len=1000), "name of 1000 bytes"),
    (sf.appid_record(1, "abc", path="/x", path_len=1), "path"),
    (sf.appid_record(1, "abc", path="/x", path_len=60000), "path"),
    (sf.appid_record(1, "a\0c"), "contains a NUL"),
    (sf.mmap_record(1, 0, 1, path="/bin/x", size=60) + b"\0" * 20,
     "shorter"),
    (sf.stats_record(size=100) + b"\0" * 200, "shorter"),
    (sf.stats_record(version=2, stats_size=119), "stats_size 119 out of "
     "range (120..128)"),
    (sf.stats_record(version=2, stats_size=129), "stats_size 129 out of "
     "range (120..128)"),
    (sf.cpu_stats_record(0, size=203) + b"\0", "cpu stats record of 203 "
     "bytes is shorter than its 204-byte fixed part"),
    (sf.sample(1, 0x10, flags=sf.SAMPLE_F_CHAIN), "sample (with a chain "
     "id) record of 36 bytes is shorter than its 40-byte fixed part"),
    (sf.sample(1, 0x10, user_ip=5, flags=3), "shorter than its 48-byte"),
    (sf.chain_record(0, 1, size=15) + b"\0", "chain record of 15 bytes is "
     "shorter than its 16-byte fixed part"),
    (sf.chain_record(0, 1, kernel=[1, 2], nr_user=1), "chain record of 32 "
     "bytes is shorter than its 3 frames"),
    (sf.chain_record(2, 1), "chain record: cpu 2 out of range"),
    (sf.chain_record(0, 0), "chain record: id 0"),
    (sf.cpu_stats_record(2), "cpu stats record: cpu 2 out of range (the "
     "header has 2 CPUs)"),
    (sf.cpu_stats_record(0xFFFFFFFF), "cpu 4294967295 out of range"),
])
def test_bad_records(parse, rec, what):
    f, off = bad_record_file(rec)
    assert_format_error(parse(f), off, what)


def test_version_2_cpu_stats_are_68_bytes(parse):
    """Version 2's CPU_STATS records have no chain figures: 68 bytes are
    whole, 67 are short; and version 2 knows no CHAIN record (skipped as
    unknown)."""
    f = sf.SessionFile(version=2, nr_cpus=1)
    f.sample(1, 0x10)
    f.add(sf.chain_record(0, 0))
    f.stats(samples_taken=1, samples_written=1)
    r = parse(f, "--format", "json")
    assert r.returncode == 0, r.stderr
    import json
    j = json.loads(r.stdout)
    assert j["cpu_stats"][0]["samples_taken"] == 1
    assert ", 1 unknown\n" in parse(f).stdout
    f = sf.SessionFile(version=2, nr_cpus=1)
    off = f.add(sf.cpu_stats_record(0, version=2, size=67) + b"\0")
    assert_format_error(parse(f), off, "cpu stats record of 67 bytes is "
                        "shorter than its 68-byte fixed part")


def test_name_without_nul_at_the_end_of_the_file(parse):
    f = sf.SessionFile()
    off = f.add(sf.appid_record(1, "abcdef")[:-2])   # drop both NULs
    r = parse(f)
    assert_format_error(r, off)


def test_record_past_eof(parse):
    f = sf.SessionFile()
    f.sample(1, 0x10)
    off = f.add(sf.sample(1, 0x10, size=0xFFFF))
    assert_format_error(parse(f), off, "past the end")


def test_mutated_files_never_crash_or_hang(parse):
    """Random corruption: parse exits 0 or 2, and quickly."""
    base, _ = layout()
    base = session(unknown_records=True).data() + base[sf.HEADER_SIZE:]
    rng = random.Random(11)
    for i in range(300):
        data = bytearray(base)
        for _ in range(rng.randrange(1, 6)):
            pos = rng.randrange(sf.HEADER_SIZE - 8, len(data))
            data[pos] = rng.randrange(256)
        if i % 3 == 0:
            data = data[:rng.randrange(len(data))]
        r = parse(bytes(data), "--mode", "all")
        assert r.returncode in (0, 2), (i, r.returncode, r.stderr)
        if r.returncode == 2:
            assert len(r.stderr.splitlines()) == 1
            assert "byte offset" in r.stderr


# ---------------------------------------------------------------- usage

@pytest.mark.parametrize("args, what", [
    ([], "missing FILE"),
    (["--by", "function", "f"], "--by: unknown value 'function'"),
    (["--mode", "sys", "f"], "--mode: unknown value 'sys'"),
    (["--format", "xml", "f"], "--format: unknown value 'xml'"),
    (["--by", "app,appid", "f"], "--by: app and appid exclude each other"),
    (["--by", "symbol,nope", "f"], "--by: unknown value 'nope'"),
    (["--top", "0", "f"], "--top: must be at least 1"),
    (["--pid", "x", "f"], "--pid: invalid number 'x'"),
    (["--appid", "loop", "f"], "--appid: 'loop' is not NAME#INSTANCE"),
    (["--from", "2", "--to", "1", "f"], "--to must be after --from"),
    (["--kallsyms", "k", "--vmlinux", "v", "f"], "exclude each other"),
    (["--plot", "x.png", "f"], "--plot: PNG is not supported"),
    (["--plot", "x.pdf", "f"], "must end in .svg"),
    (["--by"], "--by: missing value"),
    (["--frob", "f"], "--frob: unknown option"),
    (["a", "b"], "b: unexpected argument"),
])
def test_parse_usage_errors(parse_bin, args, what):
    r = run(parse_bin, *args)
    assert r.returncode == 2
    assert r.stderr.splitlines() == [r.stderr.rstrip("\n")]
    assert r.stderr.startswith("parse: ") and what in r.stderr


def test_parse_help_and_missing_file(parse_bin, tmp_path):
    r = run(parse_bin, "--help")
    assert r.returncode == 0 and r.stdout.startswith("usage: parse")
    r = run(parse_bin, tmp_path / "nope")
    assert r.returncode == 1
    assert r.stderr == f"parse: {tmp_path / 'nope'}: No such file or " \
        "directory\n"


# ------------------------------------------------- sample_start, sample_stop
# Only paths that end before the system call: the host kernel is not sleepy.

@pytest.fixture(scope="session")
def host_tools(out_dir):
    return out_dir / "host"


@pytest.mark.parametrize("tool", ["sample_start", "sample_stop"])
def test_tools_help(host_tools, tool):
    r = run(host_tools / tool, "--help")
    assert r.returncode == 0
    assert r.stdout.startswith(f"usage: {tool}")
    assert r.stderr == ""


@pytest.mark.parametrize("opt", ["--buffers", "--buffer-size",
                                 "--max-appids", "--max-size"])
@pytest.mark.parametrize("val", ["x", "-1", "12x", "", "+5", " 5", "0x10",
                                 "1.5", "18446744073709551616",
                                 "99999999999999999999999", "64KK", "64KB",
                                 "64T", "17179869184G"])
def test_sample_start_rejects_bad_numbers(host_tools, opt, val):
    for args in ([opt, val], [f"{opt}={val}"]):
        r = run(host_tools / "sample_start", *args)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr == f"sample_start: {opt}: invalid number '{val}'\n"
        assert r.stdout == ""


@pytest.mark.parametrize("args, what", [
    (["--buffers", "4097"], "--buffers: 4097 is out of range (1..4096"),
    (["--buffer-size", "255"], "--buffer-size: 255 is out of range"),
    (["--buffer-size", "17M"], "--buffer-size: 17825792 is out of range"),
    (["--max-appids", "1048577"], "--max-appids: 1048577 is out of range"),
    (["--max-appids", "15"], "--max-appids: 15 is out of range (16..1048576"),
    (["--max-appids", "1"], "--max-appids: 1 is out of range (16..1048576"),
    (["--buffers", "4294967296"], "--buffers: invalid number"),
    (["--max-size", "1K"], "--max-size: 1024 is below the minimum of 65536 "
     "bytes (64K), or 0 for no limit"),
    (["--max-size", "65535"], "--max-size: 65535 is below the minimum"),
    (["--buffers", "4096", "--buffer-size", "1M"], "per-CPU limit"),
    (["--buffers"], "--buffers: missing value"),
    (["-o"], "-o: missing value"),
    (["-o", ""], "-o: empty path"),
    (["--bogus"], "--bogus: unknown option"),
    (["extra"], "extra: unexpected argument"),
    (["--callchain=128"], "--callchain: 128 is out of range (1..127"),
    (["--callchain=x"], "--callchain: invalid number 'x'"),
    (["--callchain", "8"], "8: unexpected argument"),
    (["--callchains"], "--callchains: unknown option"),
    # The largest chain record (16 + 63 x 8) and its sample (42 bytes).
    (["--callchain", "--buffer-size", "561"], "--buffer-size: 561 bytes "
     "cannot hold a call chain of 64 frames with its sample (562 bytes)"),
    (["--latency-interval", "0.001"], "--latency-interval: 0.001 s is out "
     "of range (0.01..3600 s)"),
    (["--latency-interval", "1.2345"], "--latency-interval: invalid number "
     "of seconds '1.2345' (at most three decimals)"),
    (["--latency-interval", "3601"], "--latency-interval: 3601 s is out "
     "of range"),
    (["--latency-interval=-1"], "--latency-interval: invalid number"),
    (["--latency-slots", "100"], "--latency-slots: 100 is not a power of 2"),
    (["--latency-slots", "8"], "--latency-slots: 8 is out of range "
     "(16..65536"),
    (["--max-unwind-mem", "1M"], "--max-unwind-mem: needs --callchain"),
    (["--callchain", "--no-unwind", "--max-unwind-mem", "1M"],
     "--max-unwind-mem: needs --callchain, without --no-unwind"),
    (["--callchain", "--max-unwind-mem", "1K"], "--max-unwind-mem: 1024 "
     "is outside 64K..1024M"),
    (["--callchain", "--max-unwind-mem", "x"], "--max-unwind-mem: invalid "
     "number"),
])
def test_sample_start_usage_errors(faked, args, what):
    """Refused by the tool itself: one line, status 2, no system call."""
    r, call = faked("sample_start", *args)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("sample_start: ") and what in r.stderr
    assert len(r.stderr.splitlines()) == 1
    assert call is None


@pytest.mark.parametrize("possible, size, ok", [
    # 180 + 1000 x 204 + 376 + 32768 = 237324 bytes on 1000 CPU ids.
    ("0-999\n", "64K", False),
    ("0-999\n", "237323", False),
    ("0-999\n", "237324", True),
    ("0-499,512-999\n", "237323", False),     # a hole: still 1000 ids
    ("0,2-998,999\n", "237324", True),
    ("0-1\n", "64K", True),
    ("junk\n", "64K", True),                  # unknown: the kernel judges
])
def test_sample_start_max_size_holds_the_statistics(faked, possible, size,
                                                    ok):
    """The kernel wants room for the header, a CPU_STATS record for each
    CPU id (nr_cpu_ids: the highest possible CPU + 1) and the STATS
    record, plus SAMPLE_MIN_MAX_SIZE / 2: the tool refuses what it would
    refuse."""
    r, call = faked("sample_start", "-o", "s", "--max-size", size,
                    possible=possible)
    if ok:
        assert r.returncode == 0, r.stderr
        assert call[6] == str(sf_size(size))
    else:
        assert r.returncode == 2 and call is None
        assert r.stderr == (
            f"sample_start: --max-size: {sf_size(size)} is below the minimum "
            "of 237324 bytes on 1000 CPUs (the file header and statistics "
            "records, plus 32768)\n")


def sf_size(text):
    """A --max-size value in bytes."""
    return int(text[:-1]) << 10 if text.endswith("K") else int(text)


@pytest.mark.parametrize("args", [["--bogus"], ["extra"], ["--json=1"]])
def test_sample_stop_usage_errors(host_tools, args):
    r = run(host_tools / "sample_stop", *args)
    assert r.returncode == 2
    assert r.stderr.startswith("sample_stop: ")
    assert len(r.stderr.splitlines()) == 1


# A stand-in for the sleepy system calls: LD_PRELOADed into the host-built
# tools, it replaces libc's syscall(). Each call is logged to $FAKE_LOG:
# sample_start's path, size argument and configuration, sample_stop's size
# argument; sample_stop's stats come from $FAKE_STATS ("name=value ...");
# $FAKE_ERRNO makes either call fail. With $FAKE_POSSIBLE set, reading
# /sys/devices/system/cpu/possible gives its value.
FAKE_SYSCALLS_C = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sleepy.h>

FILE *fopen(const char *path, const char *mode)
{
	static FILE *(*real)(const char *, const char *);
	const char *possible = getenv("FAKE_POSSIBLE");

	if (possible && !strcmp(path, "/sys/devices/system/cpu/possible"))
		return fmemopen((void *)possible, strlen(possible), "r");
	if (!real)
		real = (FILE *(*)(const char *, const char *))dlsym(RTLD_NEXT,
								    "fopen");
	return real(path, mode);
}

static void fill_stats(struct sample_stats *s)
{
	char *v = strdup(getenv("FAKE_STATS") ? getenv("FAKE_STATS") : "");
	char *save, *tok;

	for (tok = strtok_r(v, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');
		long long x = strtoll(eq + 1, NULL, 0);

		*eq = '\0';
#define F(n) if (!strcmp(tok, #n)) s->n = x;
		F(nr_cpus) F(appids) F(samples_taken) F(samples_written)
		F(dropped_no_buffer) F(dropped_no_appid)
		F(dropped_write_error) F(discarded_no_write)
		F(skipped_not_user) F(bytes_written) F(write_errors)
		F(first_write_error) F(meta_dropped) F(pids_mapped)
		F(buffers_hwm) F(irq_ns_total) F(irq_ns_max) F(irq_calls)
		F(dropped_max_size) F(chains_defined) F(chains_truncated)
		if (!strncmp(tok, "user_stops", 10))
			s->user_stops[tok[10] - '0'] = x;
	}
	free(v);
}

long syscall(long nr, ...)
{
	const char *e = getenv("FAKE_ERRNO");
	int err = e ? atoi(e) : 0;
	FILE *log;
	va_list ap;

	/* The unwind helper's calls: no session (it exits), no log. */
	if (nr == __NR_sleepy_unwind) {
		errno = ESRCH;
		return -1;
	}
	log = fopen(getenv("FAKE_LOG"), "w");
	va_start(ap, nr);
	if (nr == __NR_sample_start) {
		const char *path = va_arg(ap, const char *);
		const struct sample_config *c =
			va_arg(ap, const struct sample_config *);
		size_t size = va_arg(ap, size_t);

		fprintf(log, "%s %zu %u %u %u %u %llu %u %u %u %llu\n", path,
			size, c->flags, c->nr_buffers, c->buffer_size,
			c->max_appids, (unsigned long long)c->max_size,
			c->callchain_depth, c->latency_interval_ms,
			c->latency_slots,
			(unsigned long long)c->max_unwind_mem);
	} else if (nr == __NR_sample_stop) {
		struct sample_stats *s = va_arg(ap, struct sample_stats *);
		size_t size = va_arg(ap, size_t);

		fprintf(log, "stop %zu\n", size);
		if (size != sizeof(*s))
			err = EFAULT;
		if (!err)
			fill_stats(s);
	} else {
		err = ENOSYS;
	}
	va_end(ap);
	fclose(log);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}
"""


@pytest.fixture(scope="session")
def fake_syscalls(tmp_path_factory):
    d = tmp_path_factory.mktemp("fake")
    (d / "fake.c").write_text(FAKE_SYSCALLS_C)
    subprocess.run(["gcc", "-shared", "-fPIC", f"-I{UAPI}", "-o",
                    str(d / "fake.so"), str(d / "fake.c")], check=True)
    return d / "fake.so"


@pytest.fixture
def faked(host_tools, fake_syscalls, tmp_path):
    """faked(tool, *args, errno=0, stats="", possible=None): run a
    host-built tool against the fake system calls (and possible CPUs, if
    given); returns (result, the logged call's words)."""
    log = tmp_path / "call.log"

    def _run(tool, *args, errno=0, stats="", possible=None):
        log.unlink(missing_ok=True)
        env = dict(os.environ, LD_PRELOAD=str(fake_syscalls),
                   FAKE_LOG=str(log), FAKE_ERRNO=str(errno),
                   FAKE_STATS=stats)
        if possible is not None:
            env["FAKE_POSSIBLE"] = possible
        # In tmp_path: sample_start writes PATH.kallsyms next to a
        # relative PATH.
        r = subprocess.run([str(host_tools / tool), *args],
                           capture_output=True, text=True, env=env,
                           timeout=30, cwd=tmp_path)
        call = log.read_text().split() if log.exists() else None
        return r, call
    return _run


@pytest.mark.parametrize("args, call", [
    (["-o", "{tmp}/x", "--buffers", "8", "--buffer-size", "4K",
      "--max-appids", "100", "--user-only", "--no-write"],
     ["{tmp}/x", "48", "3", "8", "4096", "100", "0", "0", "0", "0", "0"]),
    (["--output=rel/p", "--buffers=0", "--buffer-size=2m", "--user-only"],
     ["rel/p", "48", "1", "0", "2097152", "0", "0", "0", "0", "0", "0"]),
    (["-o{tmp}/p", "--buffers", "4096", "--buffer-size", "64K"],
     ["{tmp}/p", "48", "0", "4096", "65536", "0", "0", "0", "0", "0", "0"]),
    # --max-size: its smallest value, suffixes as powers of 1024, 0 (no
    # limit), and a value past 32 bits.
    (["-o{tmp}/p", "--max-size", "64K"],
     ["{tmp}/p", "48", "0", "0", "0", "0", "65536", "0", "0", "0", "0"]),
    (["-o{tmp}/p", "--max-size=3m", "--max-appids", "16"],
     ["{tmp}/p", "48", "0", "0", "0", "16", "3145728", "0", "0", "0", "0"]),
    (["-o{tmp}/p", "--max-size", "5G"],
     ["{tmp}/p", "48", "0", "0", "0", "0", "5368709120", "0", "0", "0", "0"]),
    (["-o{tmp}/p", "--max-size", "65536", "--max-size", "0"],
     ["{tmp}/p", "48", "0", "0", "0", "0", "0", "0", "0", "0", "0"]),
    # --callchain: the flag, and the depth (0: the kernel's default).
    (["-o{tmp}/p", "--callchain"],
     ["{tmp}/p", "48", "100", "0", "0", "0", "0", "0", "0", "0", "0"]),
    # --callchain asks for unwind tables and waits for them (0x60);
    # --no-unwind: frame pointers only; --no-unwind-wait; --max-unwind-mem:
    # the tables' cap.
    (["-o{tmp}/p", "--callchain", "--no-unwind"],
     ["{tmp}/p", "48", "4", "0", "0", "0", "0", "0", "0", "0", "0"]),
    (["-o{tmp}/p", "--callchain", "--no-unwind-wait"],
     ["{tmp}/p", "48", "36", "0", "0", "0", "0", "0", "0", "0", "0"]),
    (["-o{tmp}/p", "--callchain", "--max-unwind-mem", "1M"],
     ["{tmp}/p", "48", "100", "0", "0", "0", "0", "0", "0", "0", "1048576"]),
    (["-o{tmp}/p", "--callchain=127", "--user-only"],
     ["{tmp}/p", "48", "101", "0", "0", "0", "0", "127", "0", "0", "0"]),
    (["-o{tmp}/p", "--callchain=1", "--buffer-size", "256"],
     ["{tmp}/p", "48", "100", "0", "256", "0", "0", "1", "0", "0", "0"]),
    # --latency: the flag; the interval, to the ms, and the table's slots
    # imply it.
    (["-o{tmp}/p", "--latency"],
     ["{tmp}/p", "48", "16", "0", "0", "0", "0", "0", "0", "0", "0"]),
    (["-o{tmp}/p", "--latency-interval", "0.25"],
     ["{tmp}/p", "48", "16", "0", "0", "0", "0", "0", "250", "0", "0"]),
    (["-o{tmp}/p", "--latency-interval=2", "--latency-slots", "64",
      "--callchain"],
     ["{tmp}/p", "48", "116", "0", "0", "0", "0", "0", "2000", "64", "0"]),
    (["-o{tmp}/p", "--latency-slots=65536", "--latency-interval", "0.01"],
     ["{tmp}/p", "48", "16", "0", "0", "0", "0", "0", "10", "65536", "0"]),
])
def test_sample_start_passes_the_configuration(faked, tmp_path, args, call):
    """Paths in tmp_path: sample_start also copies /proc/kallsyms to
    PATH.kallsyms (the fake system call creates no session file)."""
    (tmp_path / "rel").mkdir()
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    call = [a.replace("{tmp}", str(tmp_path)) for a in call]
    r, got = faked("sample_start", *args)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    assert r.stderr == "" or "kernel hid its symbol addresses" in r.stderr
    assert got == call
    kallsyms = Path(call[0] if call[0].startswith("/") else
                    tmp_path / call[0]).with_name(
                        Path(call[0]).name + ".kallsyms")
    assert kallsyms.exists()


def test_sample_start_default_path(faked):
    """The default session path (sample_start's kallsyms copy goes next to
    it, in /var/log, which may not exist on the host: a warning then)."""
    side = Path("/var/log/samples.kallsyms")
    existed = side.exists()
    try:
        r, got = faked("sample_start")
    finally:
        if not existed and side.exists():
            side.unlink()
    assert r.returncode == 0, r.stderr
    # The size argument is sizeof(struct sample_config),
    # SAMPLE_CONFIG_SIZE_VER3.
    assert got == ["/var/log/samples", "48", "0", "0", "0", "0", "0", "0", "0",
                   "0", "0"]
    assert r.stderr == "" or r.stderr.startswith("sample_start: ")


@pytest.mark.parametrize("err, message", [
    (errno_mod.ENOENT, "sample_start: /nonexistent/x: No such file or "
     "directory\n"),
    (errno_mod.EBUSY, "sample_start: a sampling session is already active\n"),
    (errno_mod.EPERM, "sample_start: /nonexistent/x: Operation not permitted "
     "(needs CAP_SYS_ADMIN or CAP_PERFMON)\n"),
    (errno_mod.ENOSYS, "sample_start: this kernel has no sleepy support\n"),
    (errno_mod.EINVAL, None),
])
def test_sample_start_errors(faked, err, message):
    """Each errno's one line; status 1, but NO_SUPPORT_STATUS on a kernel
    without sleepy."""
    r, _ = faked("sample_start", "-o", "/nonexistent/x", errno=err)
    assert r.returncode == (NO_SUPPORT_STATUS if err == errno_mod.ENOSYS
                            else 1)
    assert r.stdout == ""
    if message:
        assert r.stderr == message
    else:
        assert r.stderr.startswith("sample_start: /nonexistent/x: "
                                   "Invalid argument")
        assert len(r.stderr.splitlines()) == 1


def _owned_by_1000(p):
    p.write_text("")
    os.chown(p, 1000, 1000)
    p.chmod(0o600)


def _mode_644(p):
    p.write_text("")
    p.chmod(0o644)


def _two_links(p):
    p.write_text("")
    p.chmod(0o600)
    os.link(p, p.with_name("other-link"))


@pytest.mark.parametrize("err, make, why", [
    (errno_mod.EACCES, _owned_by_1000, "owned by uid 1000, not by you"),
    (errno_mod.EACCES, _mode_644, "mode 0644 lets group or others in"),
    (errno_mod.EACCES, _two_links, "has 2 hard links"),
    (errno_mod.EINVAL, lambda p: os.mkfifo(p), "is a FIFO"),
    (errno_mod.ELOOP, lambda p: p.symlink_to("elsewhere"),
     "is a symbolic link"),
])
def test_sample_start_says_which_rule_a_file_breaks(faked, tmp_path, err,
                                                     make, why):
    """The kernel refuses an existing file that is not private to the
    caller; the tool names the rule the file breaks."""
    if os.geteuid() != 0 and make is _owned_by_1000:
        pytest.skip("chown needs root")
    path = tmp_path / "s.samples"
    make(path)
    r, _ = faked("sample_start", "-o", str(path), errno=err)
    assert r.returncode == 1
    assert r.stderr.startswith(f"sample_start: {path}: {why}"), r.stderr
    assert len(r.stderr.splitlines()) == 1


def test_sample_start_explains_the_memory_limit(faked):
    r, _ = faked("sample_start", "-o", "/nonexistent/x", "--buffers", "64",
                 errno=errno_mod.E2BIG)
    assert r.returncode == 1
    assert r.stderr == ("sample_start: /nonexistent/x: the session would "
                        "take more than 1/4 of the machine's memory (64 "
                        "buffers of 65536 bytes on each CPU, tables for "
                        "4096 appids)\n")


@pytest.mark.parametrize("make, kept", [
    (_owned_by_1000, True), (_mode_644, True), (_two_links, True),
    (lambda p: p.symlink_to(p.with_name("target")), True),
    (lambda p: (p.write_text("old contents"), p.chmod(0o600)), False),
])
def test_kallsyms_copy_follows_the_session_file_rules(faked, tmp_path, make,
                                                      kept):
    """PATH.kallsyms is created afresh (0600), or reuses an existing file
    only if it is private to the caller; anything else is left alone with
    a warning, and the session still starts."""
    if os.geteuid() != 0 and make is _owned_by_1000:
        pytest.skip("chown needs root")
    side = tmp_path / "s.samples.kallsyms"
    make(side)
    before = (side.lstat().st_mode, side.lstat().st_size)
    r, _ = faked("sample_start", "-o", str(tmp_path / "s.samples"))
    assert r.returncode == 0
    assert not (tmp_path / "target").exists()
    if kept:
        assert "cannot save the kernel's symbols" in r.stderr
        assert (side.lstat().st_mode, side.lstat().st_size) == before
    else:
        assert "cannot save" not in r.stderr
        assert side.stat().st_mode & 0o777 == 0o600
        assert side.read_text() != "old contents"


def test_kallsyms_copy_is_created_private(faked, tmp_path):
    r, _ = faked("sample_start", "-o", str(tmp_path / "s"))
    assert r.returncode == 0
    assert (tmp_path / "s.kallsyms").stat().st_mode & 0o777 == 0o600


GOOD_STATS = ("nr_cpus=2 samples_taken=1000 samples_written=940 "
              "dropped_no_buffer=30 dropped_no_appid=20 dropped_max_size=10 "
              "bytes_written=40000 appids=7 meta_dropped=1 pids_mapped=5 "
              "irq_ns_total=1234000 irq_calls=1000 irq_ns_max=9000 "
              "buffers_hwm=11")


def table_value(out, label):
    m = re.search(rf"^  {re.escape(label)} +(\S+)", out, re.M)
    assert m, f"no {label!r} in:\n{out}"
    return m.group(1)


def test_sample_stop_table(faked):
    r, _ = faked("sample_stop", stats=GOOD_STATS)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    out = r.stdout
    assert table_value(out, "samples taken") == "1000"
    assert table_value(out, "samples written") == "940"
    assert table_value(out, "dropped: no free buffer") == "30"
    assert table_value(out, "dropped: appid pool full") == "20"
    assert table_value(out, "dropped: file max size") == "10"
    assert re.search(r"^  dropped: file max size +10 +1\.00%$", out, re.M)
    assert table_value(out, "bytes written") == "40000"
    assert "42.6 per written sample" in out
    assert table_value(out, "appids") == "7"
    assert table_value(out, "meta records dropped") == "1"
    assert table_value(out, "pid entries in use at stop") == "5"
    assert table_value(out, "irq time: mean") == "1234"
    assert table_value(out, "irq time: max") == "9000"
    assert re.search(r"^  buffers in use: high mark +11  on the busiest "
                     r"CPU$", out, re.M)
    assert "cpu 0" not in out
    assert re.search(r"^accounting: exact \(taken = written \+ dropped \+ "
                     r"discarded\)$", out, re.M)


def test_sample_stop_json(faked):
    import json
    r, _ = faked("sample_stop", "--json", stats=GOOD_STATS)
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["samples_taken"] == 1000 and j["samples_written"] == 940
    assert j["dropped_no_buffer"] == 30 and j["dropped_no_appid"] == 20
    assert j["dropped_max_size"] == 10 and j["pids_mapped"] == 5
    assert j["irq_ns_mean"] == 1234 and j["irq_ns_max"] == 9000
    assert j["buffers_hwm"] == 11
    assert j["accounted"] == 1000 and j["accounting_exact"] is True
    assert j["first_write_error_text"] is None


def test_sample_stop_accounting_mismatch(faked):
    r, _ = faked("sample_stop", stats=GOOD_STATS.replace(
        "samples_taken=1000", "samples_taken=1005"))
    assert r.returncode == 1
    assert re.search(r"^accounting: MISMATCH.*1005.*1000.*missing 5", r.stdout,
                     re.M)
    assert r.stderr.startswith("sample_stop: accounting")


def test_sample_stop_write_errors(faked):
    stats = ("nr_cpus=1 samples_taken=10 samples_written=4 "
             "dropped_write_error=6 write_errors=3 first_write_error=-28")
    r, _ = faked("sample_stop", stats=stats)
    assert r.returncode == 1
    assert re.search(r"^  write errors +3 +first: No space left on device",
                     r.stdout, re.M)
    assert "accounting: exact" in r.stdout
    assert r.stderr.splitlines() == [
        "sample_stop: session file: 3 write errors, the first: No space "
        "left on device; the samples after it were lost"]
    r, _ = faked("sample_stop", "--json", stats=stats)
    assert r.returncode == 1
    assert '"first_write_error_text": "No space left on device"' in r.stdout


@pytest.mark.parametrize("cmd, status, first", [
    (["sh", "-c", "echo out; echo err >&2; exit 3"], 3, "err"),
    (["sh", "-c", "kill -TERM $$"], 128 + 15, None),
    (["/nonexistent/prog", "arg"], 127,
     "sample_start: /nonexistent/prog: No such file or directory"),
    (["/etc/passwd"], 126, "sample_start: /etc/passwd: Permission denied"),
])
def test_sample_start_runs_a_command(faked, tmp_path, cmd, status, first):
    """sample_start -- CMD: CMD's output and exit status; the session is
    stopped after it (the last system call), its statistics on stderr."""
    r, call = faked("sample_start", "-o", str(tmp_path / "s"), "--", *cmd,
                    stats=GOOD_STATS)
    assert r.returncode == status, r.stderr
    assert r.stdout == ("out\n" if status == 3 else "")
    err = r.stderr.splitlines()
    if first:
        assert err[0] == first
    assert "sleepy session statistics (2 CPUs)" in err
    assert table_value(r.stderr, "samples taken") == "1000"
    assert err[-1] == ("accounting: exact (taken = written + dropped + "
                       "discarded)")
    assert call == ["stop", "368"]


def test_sample_start_command_with_a_bad_session(faked, tmp_path):
    """CMD succeeded, but the session lost samples: status 1, and the line
    that says why comes after the statistics."""
    r, _ = faked("sample_start", "-o", str(tmp_path / "s"), "--", "true",
                 stats="nr_cpus=1 samples_taken=10 samples_written=4 "
                 "dropped_write_error=6 write_errors=3 first_write_error=-28")
    assert r.returncode == 1
    assert r.stderr.splitlines()[-1] == (
        "sample_start: session file: 3 write errors, the first: No space "
        "left on device; the samples after it were lost")


def test_sample_stop_passes_its_stats_size(faked):
    """sizeof(struct sample_stats), SAMPLE_STATS_SIZE_VER6; the fake fails
    the call with EFAULT for any other size."""
    r, call = faked("sample_stop", stats="nr_cpus=300")
    assert r.returncode == 0, r.stderr
    assert call == ["stop", "368"]
    assert "(300 CPUs)" in r.stdout
    assert "call chains" not in r.stdout


def test_sample_stop_shows_the_call_chains(faked):
    """A session with call chains: its chain records, truncations and the
    user walks' stops, by cause, in the table and in JSON."""
    import json
    stats = ("samples_taken=200 samples_written=200 chains_defined=12 "
             "chains_truncated=5 user_stops0=5 user_stops1=1 "
             "user_stops2=3 user_stops3=40")
    r, _ = faked("sample_stop", stats=stats)
    assert r.returncode == 0, r.stderr
    for label, v in [("call chains recorded", "12"),
                     ("chains cut at the depth", "5 +2.50%"),
                     ("user walk stop: depth", "5 +2.50%"),
                     ("user walk stop: not present", "1 +0.50%"),
                     ("user walk stop: unmapped", "3 +1.50%"),
                     ("user walk stop: not up", "40 +20.00%")]:
        assert re.search(rf"^  {label} +{v}$", r.stdout, re.M), label
    # One column of numbers: the longest label leaves room for the rest.
    ends = {m.end(1) - m.start(0)
            for m in re.finditer(r"^  [a-z][a-z :-]*? +(\d+)\b", r.stdout,
                                 re.M)}
    assert len(ends) == 1, r.stdout
    r, _ = faked("sample_stop", "--json", stats=stats)
    j = json.loads(r.stdout)
    assert (j["chains_defined"], j["chains_truncated"], j["user_stop_depth"],
            j["user_stop_not_present"], j["user_stop_unmapped"],
            j["user_stop_not_up"]) == (12, 5, 5, 1, 3, 40)


def test_sample_stop_counts_max_size_drops_in_the_accounting(faked):
    r, _ = faked("sample_stop", stats="samples_taken=10 samples_written=7")
    assert r.returncode == 1
    assert "missing 3" in r.stdout
    r, _ = faked("sample_stop", "--json", stats="samples_taken=10 "
                 "samples_written=7 dropped_max_size=3")
    assert r.returncode == 0, r.stderr
    assert '"accounting_exact": true' in r.stdout


@pytest.mark.parametrize("err, message", [
    (errno_mod.EINVAL, "sample_stop: no sampling session is active\n"),
    (errno_mod.ENOSYS, "sample_stop: this kernel has no sleepy support\n"),
    (errno_mod.EFAULT, "sample_stop: stopping the session: Bad address\n"),
])
def test_sample_stop_errors(faked, err, message):
    r, _ = faked("sample_stop", errno=err)
    assert r.returncode == (NO_SUPPORT_STATUS if err == errno_mod.ENOSYS
                            else 1)
    assert r.stdout == ""
    assert r.stderr == message


@pytest.mark.parametrize("flags, shown", [
    (0, "none"), (sf.SAMPLE_F_USER_ONLY, "user-only"),
    (sf.SAMPLE_F_USER_ONLY | sf.SAMPLE_F_NO_WRITE, "user-only,no-write"),
    (sf.SAMPLE_F_CALLCHAIN, "callchain"),
    (sf.SAMPLE_F_CALLCHAIN | 0x30, "callchain,latency,0x20"), (0x80000000,
                                                       "0x80000000"),
])
def test_header_flags_are_named(parse, flags, shown):
    """The session's flags by name, and a later kernel's bits in hex."""
    f = sf.SessionFile(flags=flags)
    f.sample(1, 0x10)
    r = parse(f)
    assert r.returncode == 0
    assert re.search(rf"^kernel .*, flags {shown}$", r.stdout, re.M)
