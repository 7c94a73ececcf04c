"""The benchmarks: checksums computed independently (on the host, from
this checkout's sources), and the demo and the benchmark runner (in the
VM)."""
import json
import os
import re
import subprocess
import time

import pytest

import boots
from conftest import BUILD, TOP, build_sh

M64 = 2**64


@pytest.fixture(scope="module")
def guest(user_build):
    """The benchmarks' guest binaries: static, so they run on the host
    too."""
    return user_build("bench", "all") / "guest"


@pytest.fixture
def run(guest):
    """run(prog, *args): its key=value output as a dict, with what this
    side saw of the run: "wall" (seconds from start to exit, a monotonic
    clock) and "ru_utime", "ru_stime" (the child's CPU time, wait4)."""
    def _run(prog, *args):
        t0 = time.monotonic()
        p = subprocess.Popen([str(guest / prog), *args],
                             stdout=subprocess.PIPE, text=True)
        out = p.stdout.read()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        assert p.returncode == 0, (prog, args, out)
        got = dict(re.findall(r"(\w+)=(\S+)", out))
        got.update(wall=wall, ru_utime=ru.ru_utime, ru_stime=ru.ru_stime)
        return got
    return _run


def btree_expected(n):
    """The benchmark's seeded LCG and 80/20 mix, with a set for the tree."""
    x, keys, distinct, found, inserts = 0x5EED5EED, set(), 0, 0, 0
    for _ in range(n):
        x = (x * 6364136223846793005 + 1442695040888963407) % M64
        r = x >> 33
        x = (x * 6364136223846793005 + 1442695040888963407) % M64
        key = (x >> 33) % (1 << 20)
        if r % 10 < 2:
            inserts += 1
            if key not in keys:
                keys.add(key)
                distinct += 1
        elif key in keys:
            found += 1
    return inserts, distinct, found, (found * 2654435761 + distinct) % M64


@pytest.mark.parametrize("suffix", ["", "-O2"])
@pytest.mark.parametrize("n", [1, 10, 12345, 10_000_000])
def test_loop_checksum(run, suffix, n):
    got = run("loop" + suffix, str(n))
    assert int(got["checksum"]) == (n * (n - 1) // 2) % M64
    # The loop's own clock runs inside the process's life; the CPU time
    # it prints is what wait4 gives its parent (read a little before it
    # exits: 5 ms of slack), and cannot exceed the loop's own time by
    # more than the start-up's.
    elapsed = float(got["elapsed"])
    cpu = float(got["utime"]) + float(got["stime"])
    ru = got["ru_utime"] + got["ru_stime"]
    assert 0 < elapsed <= got["wall"], got
    assert ru - 0.005 <= cpu <= ru + 1e-6, got
    assert cpu <= elapsed + 0.005, got


@pytest.mark.parametrize("suffix", ["", "-O2"])
@pytest.mark.parametrize("n", [1, 3, 100, 3000])
def test_call_checksum(run, suffix, n):
    got = run("call" + suffix, str(n))
    assert int(got["checksum"]) == (n * (n - 1) * (n - 2) // 6) % M64


@pytest.mark.parametrize("suffix", ["", "-O2"])
@pytest.mark.parametrize("n", [1, 1000, 100_000])
def test_btree_checksum(run, suffix, n):
    got = run("btree" + suffix, str(n))
    inserts, distinct, found, checksum = btree_expected(n)
    assert int(got["inserts"]) == inserts
    assert int(got["distinct"]) == distinct
    assert int(got["found"]) == found
    assert int(got["lookups"]) == n - inserts
    assert int(got["checksum"]) == checksum


def test_quick_and_paper_sizes(run, guest):
    assert run("loop", "--quick")["n"] == "10000000"
    assert run("call", "--quick")["n"] == "3000"
    assert run("btree", "--quick")["n"] == "100000"
    out = subprocess.run([str(guest / "loop"), "--help"], capture_output=True,
                         text=True, check=True).stdout
    assert "1000000000" in out


@pytest.mark.parametrize("arg", ["x", "0", "-5", "--bogus"])
def test_bad_arguments(guest, arg):
    r = subprocess.run([str(guest / "loop"), arg], capture_output=True,
                       text=True)
    assert r.returncode == 2
    assert r.stderr.startswith("loop: ") and r.stderr.count("\n") == 1


@pytest.mark.vm
@pytest.mark.minutes(0.3)
def test_demo_profiles_the_three_benchmarks():
    # The demo's boot runs under -icount: it may share the machine.
    with boots.machine_slot(BUILD, alone=False):
        r = build_sh("demo", timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    apps = re.search(r"==> per application \(user mode\)\n(.*?)\n\n", r.stdout,
                     re.S).group(1)
    for b in ("loop", "call", "btree"):
        assert re.search(rf"^\s+\d+\s+[\d.]+s\s+[\d.]+%\s+{b}\s", apps,
                         re.M), apps
        assert re.search(rf"^  \[ok\] {b}: ", r.stdout, re.M), r.stdout
    assert "[FAILED]" not in r.stdout
    # Per function, with the guest's binaries as --symfs: the benchmarks'
    # functions by name, with their shares.
    syms = re.search(r"==> per appid and function.*?\n(.*?)\n\n", r.stdout,
                     re.S).group(1)
    for appid, fn in (("loop#0", "main"), ("call#0", "loop"),
                      ("btree#0", "find_index")):
        assert re.search(rf"^\s+\d+\s+(?:[\d.]+s\s+)?[\d.]+%\s+"
                         rf"{re.escape(appid)}\s+\S+"
                         rf"\s+{fn}$", syms, re.M), syms
    # The annotated hot loop: instructions with their samples.
    ann = re.search(r"==> the loop benchmark's hot loop.*?\n(.*?)\n\n",
                    r.stdout, re.S).group(1)
    assert "Annotation of main in /usr/bin/loop" in ann
    assert len(re.findall(r"^ +\d+ +[\d.]+% +[0-9a-f]+ +\w", ann, re.M)) >= 3
    # btree's call tree: main -> insert -> insert_rec ..., and lookup ->
    # find_child or find_index; the flame graph and the folded stacks.
    tree = re.search(r"==> btree's call tree.*?\n(.*?)\n\n", r.stdout,
                     re.S).group(1)
    indent = {}     # each function's first node
    for m in re.finditer(r"^ +\S+% +\S+% +\d+( +)(\w+)$", tree, re.M):
        indent.setdefault(m.group(2), len(m.group(1)))
    for caller, callee in (("main", "insert"), ("insert", "insert_rec"),
                           ("main", "lookup")):
        assert indent[callee] == indent[caller] + 2, (caller, callee, tree)
    # lookup does most of the work, so its callees come first.
    assert indent["lookup"] + 2 in (indent.get("find_child"),
                                    indent.get("find_index")), tree
    import xml.etree.ElementTree as ET
    svg = ET.parse(BUILD / "demo" / "flamegraph.svg").getroot()
    assert "insert_rec" in "".join(svg.itertext())
    folded = (BUILD / "demo" / "samples.folded").read_text().splitlines()
    assert any(line.startswith("btree#0;") and ";main;insert;insert_rec"
               in line for line in folded), folded[:20]
    assert (BUILD / "demo" / "samples").stat().st_size > 1000
    for f in ("loop-eip-histogram.svg", "call-eip-histogram.svg",
              "btree-function-histogram.svg"):
        assert (BUILD / "demo" / f).stat().st_size > 0, f


@pytest.mark.vm
@pytest.mark.minutes(0.5)
def test_bench_quick_runs_every_configuration_and_its_checks(tmp_path):
    with boots.machine_slot(BUILD, alone=False):
        r = build_sh("bench", "--quick", "--runs", "1", "--out",
                     str(tmp_path), timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    table = r.stdout[r.stdout.index("Overhead, median"):]
    for label in ("control (no profiler)", "sleepy sampling, no write",
                  "sleepy backup (writes file)", "sleepy backup --callchain",
                  "perf record -F 1000",
                  "perf record -F 4000", "perf record -g -F 1000"):
        assert re.search(rf"^{re.escape(label)}\s+\d", table, re.M), label
    assert "[FAILED]" not in r.stdout
    assert r.stdout.count("  [ok] ") == 4
    data = json.loads((tmp_path / "bench.json").read_text())
    assert len(data["results"]) == 21
    assert all(c["ok"] for c in data["correctness"])
    for cell in data["results"]:
        assert cell["checksum"] == data["results"][0]["checksum"] or \
            cell["bench"] != data["results"][0]["bench"]
    for f in ("bench.csv", "overhead.svg", "loop-eip-histogram.svg",
              "call-eip-histogram.svg", "btree-function-histogram.svg"):
        assert (tmp_path / f).stat().st_size > 0, f


TICK_PROFILE = TOP / "bench" / "tick_profile.sh"


def test_tick_profile_refuses_bad_use(tmp_path):
    """--help works without a kernel; a missing command, a bad --top and
    a kernel folder without System.map are one clear line each."""
    r = subprocess.run([TICK_PROFILE, "--help"], capture_output=True,
                       text=True)
    assert r.returncode == 0 and "usage:" in r.stdout
    for args, words in ((["--"], "no guest command"),
                        (["--top", "x", "--", "true"], "--top needs"),
                        (["--kernel", str(tmp_path), "--", "true"],
                         "System.map: not readable")):
        r = subprocess.run([TICK_PROFILE, *args], capture_output=True,
                           text=True)
        assert r.returncode == 1 and words in r.stderr, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def profile_sessions(out):
    """{(session, kind): (ticks, instructions a tick, {function: insns})}
    from tick_profile.sh's report."""
    sessions, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"session (\d+), (other ticks|kernel-mode ticks with "
                     r"chains): (\d+) ticks, (\d+) instructions", line)
        if m:
            cur = {}
            sessions[(int(m[1]), m[2] != "other ticks")] = \
                (int(m[3]), int(m[4]), cur)
        elif cur is not None and re.match(r"\s+[\d.]+\s+\S+$", line):
            v, name = line.split()
            cur[name] = float(v)
    return sessions


@pytest.mark.vm
@pytest.mark.minutes(3.7)
def test_tick_profile_counts_every_tick():
    """The tracer finds on_hard_interrupt() at every tick: per session, the
    ticks it followed are exactly the calls the kernel counted
    (irq_calls); without chains no tick takes a kernel chain, with
    them the chain code shows and costs instructions."""
    # Frame pointers (loop has them): the unwind tables' helper would
    # make tables under the tracer, minutes of it for nothing checked here.
    script = ("for f in '' '--callchain --no-unwind'; do "
              "sample_start -o /tmp/s $f || exit 1; loop 20000000; "
              "sample_stop --json | grep irq_calls; done")
    with boots.machine_slot(BUILD, alone=False):
        r = subprocess.run([TICK_PROFILE, "--top", "40", "--", "sh", "-c",
                            script], capture_output=True, text=True,
                           timeout=1500)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    calls = [int(x) for x in re.findall(r'"irq_calls": (\d+)', r.stdout)]
    s = profile_sessions(r.stdout)
    assert len(calls) == 2 and all(n > 100 for n in calls), calls
    assert (1, True) not in s
    for session, n in ((1, calls[0]), (2, calls[1])):
        ticks = sum(s[k][0] for k in s if k[0] == session)
        assert ticks == n, (session, ticks, n)
    plain, chains = s[(1, False)], s[(2, False)]
    assert plain[2]["on_hard_interrupt"] > 0
    # The user-mode walk runs inline in on_hard_interrupt() (chain_walk.h):
    # a chained tick costs it more (loop's one-frame walk and the cache's
    # lookup, some 105 instructions), and the session's first chains
    # are defined by a call of sleepy_define_chain().
    assert "sleepy_define_chain" not in plain[2]
    assert chains[2]["sleepy_define_chain"] > 0
    assert chains[2]["on_hard_interrupt"] > plain[2]["on_hard_interrupt"] + 50
    assert chains[1] > plain[1] + 50


def test_unwind_bench_leaves_xz_start_up_out(tmp_path, monkeypatch):
    """bench unwind: xz's work is its run less its start-up (the same
    command on 1000 bytes), run by run, and each profiler's cost on that
    start-up is given apart; the interpreters' runs are taken whole."""
    monkeypatch.syspath_prepend(str(TOP / "bench"))
    import unwind_bench
    runs = {"control": [(900e6, 5.0e6), (901e6, 6.0e6), (900e6, 5.0e6)],
            "sleepy": [(902e6, 6.5e6), (903e6, 7.5e6), (902e6, 6.5e6)],
            "perf": [(910e6, 5.1e6), (911e6, 6.1e6), (910e6, 5.1e6)]}
    for cfg, pairs in runs.items():
        for r, (whole, start) in enumerate(pairs):
            (tmp_path / f"xz.{cfg}.{r}.ns").write_text(f"{whole:.0f}\n")
            (tmp_path / f"xz.{cfg}.{r}.start.ns").write_text(f"{start:.0f}\n")
            (tmp_path / f"perl.{cfg}.{r}.ns").write_text(f"{whole:.0f}\n")
    xz = unwind_bench.cost(tmp_path, "xz", 3)
    # Work: control 895 ms, sleepy 895.5, perf 904.9 in every run.
    assert xz["control_s"] == pytest.approx(0.895)
    assert xz["sleepy_start_up_ms"] == pytest.approx(1.5)
    assert xz["perf_start_up_ms"] == pytest.approx(0.1)
    assert xz["sleepy_ns_a_tick"] == pytest.approx(0.5e6 / 895)
    assert xz["perf_ns_a_tick"] == pytest.approx(9.9e6 / 895)
    assert xz["sleepy_spread_pct"] == pytest.approx(0)
    perl = unwind_bench.cost(tmp_path, "perl", 3)
    assert "sleepy_start_up_ms" not in perl
    assert perl["sleepy_ns_a_tick"] == pytest.approx(2e6 / 900)
    assert perl["control_spread_pct"] == pytest.approx(100 * 1e6 / 900e6)


def test_unwind_bench_fixes_python3_layout_only(monkeypatch):
    """bench unwind: python3's timed runs, and only they, run with the
    same address space each time under every profiler, with the
    environment that keeps perf dwarf's copy of the stack at 8 KiB; the
    shell makes that environment 12,000 bytes."""
    monkeypatch.syspath_prepend(str(TOP / "bench"))
    import unwind_bench
    script = unwind_bench.guest_script(2)
    timed = [line for line in script.splitlines() if "UW_TIME=" in line]
    py = [line for line in timed if "/tmp/uw.py" in line]
    assert len(py) == 2 * len(unwind_bench.COST_CONFIGS)
    assert all("setarch x86_64 -R env UW_PAD=$PAD /usr/bin/python3" in line
               for line in py), py
    assert not any("setarch" in line for line in timed if line not in py)
    pad = next(line for line in script.splitlines()
               if line.startswith("PAD="))
    out = subprocess.run(["bash", "-c", pad + '; printf %s "$PAD"'],
                         capture_output=True, text=True, check=True).stdout
    assert out == "x" * 12000
