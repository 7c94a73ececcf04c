"""Floods from unprivileged users into a privileged session: what any
user's process can make a session write is budgeted, and the tick keeps
its samples.

A part of the release kernel's boot release-2cpu (2 vCPUs under -icount;
boots.BOOTS): the debug kernel flips pages too slowly to run past the
budgets in a few seconds (its lockdep and KASAN checks of the same paths
run in the lstack and latency storms). In each scenario root's session
(sample_start --lstack) runs a spinner and, as user 1000, a flood
(tests/progs/flood), both pinned to CPU 0, for FLOODS' seconds:

- mprotect: one page flipped between writable and executable: every
  record after the first repeats its range (mmap_repeats);
- mprotect64: 64 pages flipped in turn, each flip a new range: past the
  group's budget (mmap_over_budget);
- offcpu: 8 pairs of threads with logical stacks waking each other: past
  the CPU's budget, or its buffers' half that is the tick's
  (offcpu_over_budget).

The spinner keeps at least 99% of its ticks (its CPU time x HZ, from its
rusage), the file holds its samples and what the budgets allowed (at
most 300 bytes a record) and little more, and the statistics count what
was not written. Without the budgets, each flip was an MMAP record of
some 70 bytes (22,216 flips in 3 s of the debug guest: 1.5 MB; some
300,000 a second on this machine's own kernel), each block and wake an
OFFCPU record.
"""
import json

import pytest

import sleepyfile as sf
import sleepyread
from boots import boot_fixture
from conftest import scenario_ok

pytestmark = pytest.mark.vm

# Seconds of each flood: enough, on the release kernel, to run far past
# the budgets (the debug kernel flipped some 170 new ranges a second beside
# the spinner, and took 16 s of guest time, 7 minutes of CI, to show it).
FLOODS = {"mprotect": ("mprotect --pages 1", 2),
          "mprotect64": ("mprotect --pages 64", 2),
          "offcpu": ("offcpu --pairs 8", 2)}
# The kernel's budgets (uapi/linux/sleepy.h).
EXEC_BURST, EXEC_RATE = 512, 64
OFFCPU_BURST, OFFCPU_RATE = 8000, 4000
# The most bytes a record the budgets let through takes (an OFFCPU
# record with a full logical stack; an MMAP record of an anonymous range
# is some 70), and a sample with its chain; the file is held to its
# samples and the records the budget allows, plus 64 KiB (the header, the
# statistics, the processes' own records).
RECORD_MAX, SAMPLE_MAX = 300, 100

SCRIPT = "".join(f"""
scenario flood_{name} <<'EOF'
sample_start -o /var/log/flood_{name}.slp --lstack || exit 10
taskset -c 0 spin -s {secs} > $S/flood_{name}.spin &
taskset -c 0 runas 1000:1000 flood {args} --seconds {secs} \\
    > $S/flood_{name}.out || exit 11
wait
sample_stop --json > $S/flood_{name}.stats || exit 12
cp /var/log/flood_{name}.slp $S/ || exit 13
EOF
""" for name, (args, secs) in FLOODS.items())

SCENARIOS = {"release-2cpu": SCRIPT}
vm = boot_fixture("release-2cpu")


def flood(share, name):
    """The session, the flood's own count and the spinner's output."""
    scenario_ok(share, f"flood_{name}")
    s = sleepyread.read(share / f"flood_{name}.slp")
    out = (share / f"flood_{name}.out").read_text().split()
    spin = dict(line.split("=", 1) for line in (
        share / f"flood_{name}.spin").read_text().split() if "=" in line)
    return s, out, spin


def check_spinner(s, spin):
    """The spinner's samples are at least 99% of its ticks: nothing the
    flood wrote took its buffers."""
    ticks = (float(spin["utime"]) + float(spin["stime"])) * s.header["hz"]
    got = sum(1 for x in s.samples if x["pid"] == int(spin["pid"]))
    assert got >= 0.99 * ticks > 100, (got, ticks)
    st = s.stats
    assert st["dropped_no_buffer"] == 0


def span_s(s):
    return max(x["time_ns"] for x in s.samples) / 1e9


def check_file(share, name, s, allowed):
    """The file holds its samples and the records the budget allowed,
    and little more."""
    size = (share / f"flood_{name}.slp").stat().st_size
    bound = 65536 + SAMPLE_MAX * s.stats["samples_written"] + \
        RECORD_MAX * allowed
    assert size < bound, (size, bound)


def flood_mmaps(s):
    """The MMAP records of the flood's anonymous executable ranges."""
    ids = {a["appid"] for a in s.by_name("flood")}
    return [m for m in s.mmaps if m["appid"] in ids and
            m["flags"] & sf.MMAP_F_ANON]


def test_one_page_flipped_is_recorded_once(vm):
    s, out, spin = flood(vm, "mprotect")
    flips = int(out[2])
    assert flips > 1000
    check_spinner(s, spin)
    check_file(vm, "mprotect", s, 1)
    st = s.stats
    made = len(flood_mmaps(s))
    assert made == 1
    assert st["mmap_repeats"] == flips - 1
    assert st["mmap_over_budget"] == 0


def test_many_pages_flipped_stay_within_the_budget(vm):
    s, out, spin = flood(vm, "mprotect64")
    flips = int(out[2])
    allowed = EXEC_BURST + EXEC_RATE * (span_s(s) + 1)
    check_spinner(s, spin)
    check_file(vm, "mprotect64", s, allowed)
    st = s.stats
    made = len(flood_mmaps(s))
    assert EXEC_BURST <= made <= allowed < flips, (made, allowed, flips)
    # Every flip is one of the three (a repeat: the range of the last one
    # made, which the round of 64 comes back to while over the budget).
    assert made + st["mmap_over_budget"] + st["mmap_repeats"] == flips
    assert st["mmap_over_budget"] > 0


def test_off_cpu_records_stay_within_the_budget(vm):
    s, out, spin = flood(vm, "offcpu")
    waits = int(out[2])
    per_cpu = OFFCPU_BURST + OFFCPU_RATE * (span_s(s) + 1)
    allowed = s.header["nr_cpus"] * per_cpu
    check_spinner(s, spin)
    check_file(vm, "offcpu", s, allowed)
    st = s.stats
    ids = {a["appid"] for a in s.by_name("flood")}
    made = sum(1 for r in s.offcpu if r["appid"] in ids)
    assert len(s.offcpu) <= allowed
    assert st["offcpu_records"] == len(s.offcpu) + st["offcpu_dropped"]
    # All of the flood's threads ran on CPU 0: past one CPU's budget.
    assert waits > per_cpu and st["offcpu_over_budget"] > 0, \
        (waits, made, st["offcpu_over_budget"])
    assert json.loads((vm / "flood_offcpu.stats").read_text())[
        "offcpu_over_budget"] == st["offcpu_over_budget"]
