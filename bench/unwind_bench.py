#!/usr/bin/env python3
"""Unwind tables against perf --call-graph dwarf on Debian's own programs.

./build.sh bench unwind [--runs N]

One VM (release kernel, 1 vCPU, -icount shift=0: guest time is the
instruction count; --host-root: Debian's python3, perl and xz as the host
has them) runs each program with no profiler, under sleepy (sample_start
--callchain=127: unwind tables, the helper's cache warmed by a first
run) and under perf record --call-graph dwarf -F 1000 -e cpu-clock:u
(perf's sample rate matches the guest's HZ=1000), N times each; and so
the paper's loop, call and btree built -O2 -fomit-frame-pointer.
Figures:

- completeness: the share of each program's user samples whose stack
  reaches its entry code (_start, past __libc_start_call_main), sleepy's
  and perf's (perf script unwinds perf's on the host, from the same
  files). Target: sleepy's at least 98%.
- agreement: the ten functions with the most inclusive samples in perf's
  profile, and how many points sleepy's differ (both named by .dynsym).
  Target: each within 3.
- cost: each profiler's overhead on the guest time of the program's work
  (median of N), timed by the program's own clock (python3's and perl's
  around their work, after start-up; loop, call and btree their
  elapsed=), so that neither the profilers' starts and stops nor the
  interpreters' reads over 9p, whose idle waits jump the -icount clock,
  are in it; as a share and as ns a tick (both profilers sample at
  1 kHz), sleepy's against perf's; and sleepy's tick handler's mean time
  a call. xz has no clock of its own: bash times xz run from a tmpfs
  copy, on the data and on its first 1000 bytes, and the work is the
  difference, so that its start-up (exec, the dynamic linker, the wait
  for its tables) is left out as the interpreters' is; each profiler's
  cost on that start-up is given apart, a cost per exec. Target: at most
  a tenth of perf's; on loop, call and btree at most 0.06%. The guest
  reads the interpreters' code into the page cache before each timed run
  (a page read over 9p during the work idles the vCPU, and the -icount
  clock jumps). ASLR stays on, but for python3's timed runs: its work
  moved by 0.5% from run to run with the address space's layout, ten
  times sleepy's cost. Those run with the same layout each time
  (setarch -R) and an environment of 12 KB, so that perf still finds
  8 KiB of stack above the stack pointer to copy, as it does under ASLR.
- size: bytes per sample of the session file and of perf.data. Target:
  sleepy's at most 1/50 of perf's.
- memory: each table's bytes against its .eh_frame (libc, libpython3.11,
  perl; sleepy_unwind table on the host). Target: at most twice.
- delay: from exec to the first whole stack without waiting for tables
  and with no cache (--no-unwind-wait), and the samples before it; and
  the waits of the default (the program waits for its tables).

Results go to results/unwind_bench.{json,csv}; the figures are printed.
"""
import argparse
import re
import functools
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

from icount_vm import icount_vm, write_results

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP / "tests"))
import unwindcmp  # noqa: E402
from elfnames import Names  # noqa: E402

BUILD = TOP / "build"
PROGRAMS = unwindcmp.PROGRAMS
PAPER = {"loop": "loop-nofp 1000000000", "call": "call-nofp 100000",
         "btree": "btree-nofp 3000000"}
TABLE_FILES = ["/usr/lib/x86_64-linux-gnu/libc.so.6",
               "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0",
               "/usr/bin/perl"]
SLEEPY = "sample_start -o /tmp/s.slp --callchain=127 --"
PERF = unwindcmp.PERF_DWARF + " -o /tmp/p.data --"
COST_CONFIGS = {"control": "", "sleepy": SLEEPY, "perf": PERF}
# The interpreters' hash seeds fixed for the timed runs: a random seed
# moves python3's work by up to 1% from run to run, perl's by 0.5%.
SEEDS = "PYTHONHASHSEED=0 PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0"
# What a program's timed runs run under (PAD: SETUP's): python3's work
# moved by up to 0.5% with ASLR's layout of its memory, so it has the
# same layout each run (perl's and xz's runs spread up to 0.07% and
# 0.01% with ASLR, 2026-11-29).
LAYOUT = {"python3": "setarch x86_64 -R env UW_PAD=$PAD"}

SETUP = "S=/mnt/share\n" + unwindcmp.SETUP_SH + r"""
# fail N: the errors so far on the runner's output, and exit N
fail() { cat $S/err >&2; exit "$1"; }
# ASLR stays on, as everywhere: with it off the stack's top is the top of
# user space, and perf's copy of a sample's stack (8 KiB at most, up to
# that top) shrank to 2.5 KB, its tick to half (2026-11-29).
# warm: the interpreters' code read into the page cache just before a
# timed run. A page read over 9p inside the work idles the vCPU, and the
# -icount clock jumps to the next timer: whole milliseconds with the tick
# running, seconds without (a perl run once took 6 s for its 2); xz -9's
# 674 MB evicts them.
# libs FILE...: the shared libraries the FILEs load, by path
libs() { for f; do ldd "$f" | sed -n 's/.*=> \(\/[^ ]*\).*/\1/p'; done; }
WARM=$( (printf '%s\n' /usr/bin/python3.11 /usr/bin/perl
    libs /usr/bin/python3.11 /usr/bin/perl) | sort -u)
WARM="$WARM $(find /usr/lib/python3.11/lib-dynload \
    /usr/lib/x86_64-linux-gnu/perl* -name '*.so' 2> /dev/null)"
warm() { cat $WARM > /dev/null; }
# PAD: LAYOUT's environment. With ASLR off the stack's top is the top of
# user space, and perf copies (and writes) a sample's stack only up to
# there; 12 KB more on the stack keeps its copy at 8 KiB, as under ASLR,
# where python3's samples had 7.8 to 22 KB above the stack pointer.
PAD=$(head -c 12000 /dev/zero | tr '\0' x)
# xz and its libraries copied to tmpfs, run by their dynamic linker: no
# file read over 9p (and no idle jump under -icount) inside xz's timing
mkdir -p /tmp/x
cp -L $(libs /usr/bin/xz) /lib64/ld-linux-x86-64.so.2 /usr/bin/xz /tmp/x/ \
    || fail 9
# xzt.sh TAG FILE (bash): the guest time in ns of xz on FILE, read by
# bash's own clock with no process between the reads but xz, into
# $S/TAG.ns; /tmp/uw.start, the data's first 1000 bytes, times xz's
# start-up
head -c 1000 /tmp/uw.data > /tmp/uw.start
cat > /tmp/xzt.sh <<'SH'
t0=$EPOCHREALTIME
LC_ALL=C /tmp/x/ld-linux-x86-64.so.2 --library-path /tmp/x /tmp/x/xz \
    -9 -T1 -c "$2" > /dev/null || exit 1
t1=$EPOCHREALTIME
echo $(( (${t1/./} - ${t0/./}) * 1000 )) > /mnt/share/$1.ns
SH
"""


def timed(tag, profiler, name):
    """The line that runs program name under profiler (none: "") and has
    the guest time of its work written to $S/TAG.ns: python3's and perl's
    own clocks around their work (UW_TIME), xz's by bash around it, the
    paper's benchmarks' own elapsed= line (in $S/TAG.out); and xz's
    start-up, xz on 1000 bytes, to $S/TAG.start.ns."""
    if name in PAPER:
        return (f"{profiler} {PAPER[name]} > $S/{tag}.out 2>> $S/err "
                f"|| fail 10")
    if name == "xz":
        return "\n".join(
            f"{profiler} bash /tmp/xzt.sh {t} {f} 2>> $S/err || fail 10"
            for t, f in ((tag, "/tmp/uw.data"),
                         (f"{tag}.start", "/tmp/uw.start")))
    return (f"UW_TIME=$S/{tag}.ns {SEEDS} {profiler} {LAYOUT.get(name, '')} "
            f"{PROGRAMS[name][2]} > /dev/null 2>> $S/err || fail 10")


def guest_script(runs):
    lines = [SETUP]
    for name, (_, _, cmd) in PROGRAMS.items():
        # The helper's cache warmed; then the delay, with no cache.
        lines.append(f"{SLEEPY} {cmd} > /dev/null 2>> $S/err || fail 11")
        # The profiles compared: each profiler on the program itself.
        lines.append(f"{SLEEPY} {cmd} > /dev/null 2>> $S/err || fail 11")
        lines.append(f"cp /tmp/s.slp $S/{name}.slp")
        lines.append(f"{PERF} {cmd} > /dev/null 2>> $S/err || fail 11")
        lines.append(f"cp /tmp/p.data $S/{name}.perf")
        lines.append(f"SLEEPY_UNWIND_CACHE= sample_start -o /tmp/c.slp "
                     f"--callchain=127 --no-unwind-wait -- {cmd} > /dev/null "
                     f"2>> $S/err || fail 12")
        lines.append(f"cp /tmp/c.slp $S/{name}.cold")
    for name in [*PROGRAMS, *PAPER]:
        if name in PAPER:
            lines.append(f"{SLEEPY} {PAPER[name]} > /dev/null 2>> $S/err "
                         f"|| fail 13")
        for r in range(runs):
            for cfg, prof in COST_CONFIGS.items():
                lines.append("warm")
                lines.append(timed(f"{name}.{cfg}.{r}", prof, name))
    lines.append("touch $S/done")
    return "\n".join(lines) + "\n"


def run_ns(share, tag):
    """A timed run's guest time in ns."""
    f = share / f"{tag}.ns"
    if f.exists():
        return int(f.read_text())
    out = (share / f"{tag}.out").read_text()
    return round(1e9 * float(re.search(r"elapsed=([0-9.]+)", out).group(1)))


def start_up(share, name, runs):
    """xz's start-up under each profiler less without one (medians, ms):
    a cost per exec, left out of the work's."""
    med = {cfg: statistics.median(run_ns(share, f"{name}.{cfg}.{r}.start")
                                  for r in range(runs))
           for cfg in COST_CONFIGS}
    return {f"{cfg}_start_up_ms": (med[cfg] - med["control"]) / 1e6
            for cfg in ("sleepy", "perf")}


def work_ns(share, name, tag):
    """A timed run's work in ns of guest time: xz's less its start-up."""
    ns = run_ns(share, tag)
    return ns - run_ns(share, f"{tag}.start") if name == "xz" else ns


def cost(share, name, runs):
    """Each profiler's overhead on name's work (median of the runs, %),
    the runs' spread (max - min, % of the median), and its cost a tick
    (ns of guest time a millisecond of the work: both sample at 1 kHz)."""
    med = {}
    out = start_up(share, name, runs) if name == "xz" else {}
    for cfg in COST_CONFIGS:
        ns = [work_ns(share, name, f"{name}.{cfg}.{r}") for r in range(runs)]
        med[cfg] = statistics.median(ns)
        out[f"{cfg}_spread_pct"] = 100 * (max(ns) - min(ns)) / med[cfg]
    ctrl = med["control"]
    out["control_s"] = ctrl / 1e9
    for cfg in ("sleepy", "perf"):
        out[f"{cfg}_overhead_pct"] = 100 * (med[cfg] - ctrl) / ctrl
        out[f"{cfg}_ns_a_tick"] = (med[cfg] - ctrl) / (ctrl / 1e6)
    return out


def delay(path, comm, exe):
    """Without waiting, no cache: ms from exec to the first whole stack,
    and the samples before it."""
    stacks, s = unwindcmp.sleepy_stacks(path, comm)
    apps = [a for a in s.appids.values() if a["name"] == comm]
    start = min(a["time_ns"] for a in apps)
    # The same samples, in the same order, as sleepy_stacks() took.
    samples = s.samples_of([a["appid"] for a in apps], mode=0)
    timed = sorted(zip((x["time_ns"] for x in samples), stacks))
    for n, (t, st) in enumerate(timed):
        if unwindcmp.whole([st], exe):
            return (t - start) / 1e6, n
    return None, len(stacks)


def program_figures(share, name, runs, names):
    comm, exe, _ = PROGRAMS[name]
    ours, s = unwindcmp.sleepy_stacks(share / f"{name}.slp", comm)
    perf = unwindcmp.perf_stacks(share / f"{name}.perf", comm)
    inc_o, inc_p = (unwindcmp.inclusive(x, names) for x in (ours, perf))
    top = sorted(inc_p, key=inc_p.get, reverse=True)[:10]
    ms, before = delay(share / f"{name}.cold", comm, exe)
    st = s.stats
    return {
        "program": name, "samples": len(ours), "perf_samples": len(perf),
        "whole_pct": 100 * unwindcmp.whole(ours, exe),
        "perf_whole_pct": 100 * unwindcmp.whole(perf, exe),
        "top10_max_points_off": max(abs(100 * (inc_o.get(k, 0) - inc_p[k]))
                                    for k in top),
        **cost(share, name, runs),
        "bytes_per_sample": (share / f"{name}.slp").stat().st_size /
        max(1, st["samples_written"]),
        "perf_bytes_per_sample": (share / f"{name}.perf").stat().st_size /
        max(1, len(perf)),
        "delay_ms_no_wait_no_cache": ms, "samples_before": before,
        "waits": st["unwind_waits"], "wait_ms": st["unwind_wait_ns"] / 1e6,
        "tick_ns_mean": st["irq_ns_total"] / max(1, st["irq_calls"]),
    }


def table_sizes():
    # The guest's static build (build.sh bench builds it; the host's
    # dynamic one is the tests' own) runs on the host as well.
    out = subprocess.run([str(BUILD / "user" / "guest" / "sleepy_unwind"),
                          "table", *TABLE_FILES], capture_output=True,
                         text=True, check=True).stdout.splitlines()[1:]
    return [{"file": f[0], "table": int(f[1]), "eh_frame": int(f[2]),
             "ratio": float(f[3])} for f in (line.split() for line in out)]


def cost_line(c):
    """Each profiler's overhead and cost a tick, and sleepy's against
    perf's."""
    ratio = c["sleepy_overhead_pct"] / c["perf_overhead_pct"] \
        if c["perf_overhead_pct"] > 0 else float("nan")
    return (f"overhead {c['sleepy_overhead_pct']:+.3f}% "
            f"({c['sleepy_ns_a_tick']:.0f} ns a tick) vs perf dwarf "
            f"{c['perf_overhead_pct']:+.3f}% ({c['perf_ns_a_tick']:.0f} ns): "
            f"{ratio:.3f} of perf's (target <= 0.1); runs' spread "
            f"{max(c[k + '_spread_pct'] for k in COST_CONFIGS):.3f}%")


def report(rows, paper, tables):
    for r in rows:
        print(f"{r['program']}: whole {r['whole_pct']:.1f}% (perf dwarf "
              f"{r['perf_whole_pct']:.1f}%; target >= 98%), top ten "
              f"inclusive at most {r['top10_max_points_off']:.1f} points "
              f"off perf's (target <= 3)")
        print(f"  {cost_line(r)}")
        if "sleepy_start_up_ms" in r:
            print(f"  start-up, a cost per exec left out of the above: "
                  f"sleepy {r['sleepy_start_up_ms']:+.2f} ms, perf dwarf "
                  f"{r['perf_start_up_ms']:+.2f} ms")
        print(f"  {r['bytes_per_sample']:.1f} bytes/sample vs "
              f"{r['perf_bytes_per_sample']:.0f} (target <= 1/50); the "
              f"tick handler {r['tick_ns_mean']:.0f} ns a call")
        ms = r["delay_ms_no_wait_no_cache"]
        print(f"  exec to first whole stack, no wait, no cache: "
              f"{'never (the run ended)' if ms is None else f'{ms:.0f} ms'}"
              f", {r['samples_before']} samples before it; default (wait, "
              f"cache warm): {r['waits']} waits, {r['wait_ms']:.0f} ms")
    for b, c in paper.items():
        print(f"{b} -O2 -fomit-frame-pointer ({c['control_s']:.3f} s): "
              f"{cost_line(c)}; target <= 0.06%")
    for t in tables:
        print(f"{t['file']}: table {t['table']} bytes, .eh_frame "
              f"{t['eh_frame']}: {t['ratio']:.2f}x (target <= 2)")


def main():
    p = argparse.ArgumentParser(prog="./build.sh bench unwind",
                                description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()
    names = functools.lru_cache(None)(
        lambda path: Names(path) if Path(path).is_file() else None)
    # First, so that nothing the guest measured is lost to it failing.
    tables = table_sizes()
    with icount_vm(guest_script(args.runs), 3600, "unwind",
                   extra=("--host-root", "--mem", "1024")) as share:
        rows = [program_figures(share, n, args.runs, names)
                for n in PROGRAMS]
        paper = {b: cost(share, b, args.runs) for b in PAPER}
    # The figures first: nothing the guest measured is lost to a failed
    # write.
    report(rows, paper, tables)
    write_results("unwind_bench", rows, paper=paper, tables=tables,
                  nr_runs=args.runs, command=shlex.join(sys.argv))


if __name__ == "__main__":
    main()
