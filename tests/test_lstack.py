"""Logical stacks (sample_start --lstack, sleepy_lstack(2)), checked in
the VM against the programs' own accounts, read with sleepyread
independently of parse, and parse's activity tree against both.

A part of the release kernel's boot release-1cpu-a (1 vCPU, -icount:
guest time counts instructions, so the program's clocks and the tick agree
and a run repeats; boots.BOOTS): bench/lstack_server, the demonstration
query server, whose frames print their own CPU and blocked time, and the
one-command demo.

A part of the debug kernel's boot debug-2cpu-a (lockdep, KASAN, kmemleak,
DEBUG_ATOMIC_SLEEP; 2 vCPUs under -icount): the torn-read storms
(tests/progs/lstack_storm: a stack changed as fast as its thread can, and
rewritten by a writer on the other CPU), whose every recorded stack must
be a state the program was in, and the registration's lifetime
(tests/progs/lstack_life: errors, new threads, fork, exit and exec, a
storm of threads that register and exit); a splat while they run fails
them.

One boot of the release kernel with 2 vCPUs under multi-threaded TCG, so
that the writer really runs during the tick's copies: the torn copies are
caught, retried and left out. It takes both cores: it runs alone.
"""
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest

import sleepyfile as sf
import sleepyread
from boots import boot_fixture
from conftest import scenario_ok

pytestmark = pytest.mark.vm

# Two workers on the one vCPU. With four, the CPU is saturated and CFS
# lets a woken worker run at the next tick more often than not; under
# -icount its next frames then run in lockstep with the tick, and parse,
# the first frame after a wake, gets 3.8 points fewer samples than its
# CPU time (measured: 9.4% of the samples against 13.2%): a bias of tick
# sampling itself, which a deterministic clock makes systematic.
SERVER_OPTS = "--threads 2 --requests 300"
# The on-CPU shares and scan's split by table are checked on one worker
# (the scenario shares): with two, a worker woken
# while the other runs still waits for the next tick often enough that
# scan, the frame about 1 ms into a request, got 2.3 to 3.1 points more
# than its CPU time in four runs (2026-11-29; one CI run past the 3-point
# bound). With one worker, nothing waits for the CPU: within 1.2 points in
# three runs. Twice the requests keep about 1,300 samples.
SHARES_OPTS = "--threads 1 --requests 600"

SERVER_SCRIPT = r"""
# Translate the programs' code once before the measured runs (TCG).
lstack_server --threads 1 --requests 5 > /dev/null

scenario server <<'EOF'
sample_start -o /var/log/server.slp --lstack -- \
    lstack_server """ + SERVER_OPTS + r""" > $S/server.out 2> $S/server.err || exit 10
cp /var/log/server.slp /var/log/server.slp.lstack-*.names $S/ || exit 11
parse --tree lstack --format json /var/log/server.slp > $S/server.json || exit 12
EOF
scenario shares <<'EOF'
sample_start -o /var/log/shares.slp --lstack -- \
    lstack_server """ + SHARES_OPTS + r""" > $S/shares.out 2> $S/shares.err || exit 10
cp /var/log/shares.slp $S/ || exit 11
parse --tree lstack --lstack-args --format json /var/log/shares.slp \
    > $S/shares-args.json || exit 12
EOF

# Call chains and logical stacks together: the machine stack above the
# logical frames.
scenario chained <<'EOF'
sample_start -o /var/log/chained.slp --lstack --callchain -- \
    lstack_server --threads 1 --requests 60 > $S/chained.out || exit 10
cp /var/log/chained.slp /var/log/chained.slp.* $S/ || exit 11
parse --tree lstack --lstack-with-callchain --format folded \
    /var/log/chained.slp > $S/chained.folded || exit 12
EOF

# The documented one-command run (usage.md).
scenario demo <<'EOF'
sample_start --lstack -o /tmp/q.slp -- lstack_server > /dev/null &&
    parse --tree lstack /tmp/q.slp > $S/demo.out
EOF
"""

STORM_SCRIPT = r"""
storm() { name=$1; opts=$2; shift 2
          sample_start -o /var/log/$name.slp --lstack $opts || exit 10
          lstack_storm "$@" > $S/$name.out || exit 12
          sample_stop --json > $S/$name.stats || exit 11
          cp /var/log/$name.slp $S/; }

lstack_storm --mode A --seconds 0.2 > /dev/null

scenario storm_a <<'EOF'
storm storm_a "" --mode A --seconds 3 --depth 3
EOF

scenario storm_deep <<'EOF'
storm storm_deep --callchain --mode A --seconds 2 --depth 20
EOF

scenario storm_b <<'EOF'
storm storm_b "" --mode B --seconds 3 --depth 4
EOF

# Registration errors, threads, fork, exec, and a storm of threads that
# register and exit, while a session records logical stacks.
scenario life <<'EOF'
sample_start -o /var/log/life.slp --lstack || exit 10
lstack_life --storm 2000 > $S/life.out || exit 12
sample_stop --json > $S/life.stats || exit 11
EOF

"""

# A real writer on the other CPU needs two vCPUs that run at once:
# multi-threaded TCG (single-threaded TCG runs one vCPU at a time, in
# slices far longer than a copy, so a copy is never torn there). One
# session start and stop only: see development.md on --mttcg and static
# keys.
MTTCG_SCRIPT = r"""
scenario storm_mttcg <<'EOF'
sample_start -o /var/log/storm_mttcg.slp --lstack || exit 10
lstack_storm --mode B --seconds 3 --depth 4 > $S/storm_mttcg.out || exit 12
sample_stop --json > $S/storm_mttcg.stats || exit 11
cp /var/log/storm_mttcg.slp $S/
EOF
"""

FRAMES = ("request", "parse", "plan", "execute", "scan", "sort", "io_wait",
          "lock_wait")


SCENARIOS = {"release-1cpu-a": SERVER_SCRIPT,
             "debug-2cpu-a": STORM_SCRIPT, "release-2cpu-mttcg": MTTCG_SCRIPT}
server_vm = boot_fixture("release-1cpu-a")
storm_vm = boot_fixture("debug-2cpu-a")
mttcg_vm = boot_fixture("release-2cpu-mttcg")


def server_truth(path):
    """The server's own table: {(frame, arg): row} and its header."""
    rows, head = {}, {}
    for line in Path(path).read_text().splitlines():
        if line.startswith("#"):
            key, _, value = line[1:].strip().partition(" ")
            head[key] = value.strip()
        elif line and not line.startswith("frame "):
            f = line.split()
            rows[(f[0], int(f[2]))] = dict(
                id=int(f[1]), self_cpu_ns=int(f[3]), wait_ns=int(f[5]),
                calls=int(f[6]))
    return rows, head


def server_session(share, name="server"):
    s = sleepyread.read(share / f"{name}.slp")
    (app,) = s.by_name("lstack_server")
    return s, app["appid"]


def top_id(lstack):
    """The top frame's id of a recorded logical stack, 0 at depth 0."""
    return lstack["frames"][-1][0] if lstack["frames"] else 0


def test_server_registered_every_worker(server_vm):
    scenario_ok(server_vm, "server")
    rows, head = server_truth(server_vm / "server.out")
    assert head["registered"] == "2"
    s, appid = server_session(server_vm)
    assert s.header["flags"] & sf.SAMPLE_F_LSTACK
    tids = {x["tid"] for x in s.samples
            if x["appid"] == appid and x["lstack"] is not None}
    assert len(tids) == 2
    st = s.stats
    lsamples = sum(1 for x in s.samples if x["lstack"] is not None)
    assert st["lstack_samples"] == lsamples > 1000
    # Nothing changes a worker's stack under the tick but the worker.
    assert st["lstack_torn"] == st["lstack_retries"] == 0
    assert st["lstack_faults"] == st["lstack_truncated"] == 0
    assert st["offcpu_dropped"] == 0
    assert st["offcpu_records"] == len(s.offcpu) > 0


def test_server_on_cpu_shares_match_its_own_clock(server_vm):
    """Each frame's share of the workers' on-CPU samples (self: the top
    frame; all modes, since a frame's system calls are its own) is its
    share of their CPU time by the server's own clock, within 3 points
    (SHARES_OPTS: one worker)."""
    scenario_ok(server_vm, "shares")
    rows, head = server_truth(server_vm / "shares.out")
    s, appid = server_session(server_vm, "shares")
    ids = {r["id"]: f for (f, _), r in rows.items()}
    counts = Counter(top_id(x["lstack"]) for x in s.samples
                     if x["appid"] == appid and x["lstack"] is not None)
    total = sum(counts.values())
    cpu = defaultdict(int)
    for (frame, _), r in rows.items():
        cpu[frame] += r["self_cpu_ns"]
    cpu_total = sum(cpu.values()) + int(head["outside_cpu_ns"])
    for i, frame in ids.items():
        got = 100 * counts[i] / total
        want = 100 * cpu[frame] / cpu_total
        assert abs(got - want) <= 3, (frame, got, want)


def test_server_off_cpu_time_matches_its_own_clock(server_vm):
    """The off-CPU time of io_wait and lock_wait (OFFCPU records whose top
    frame is theirs) is their blocked time by the server's own clock,
    within 10%."""
    scenario_ok(server_vm, "server")
    rows, _ = server_truth(server_vm / "server.out")
    s, appid = server_session(server_vm)
    off = Counter()
    for r in s.offcpu:
        if r["appid"] == appid:
            off[top_id(r["lstack"])] += r["off_ns"]
    for frame in ("io_wait", "lock_wait"):
        ((_, row),) = [(k, v) for k, v in rows.items() if k[0] == frame]
        assert row["wait_ns"] > 0
        assert abs(off[row["id"]] - row["wait_ns"]) <= 0.1 * row["wait_ns"], \
            (frame, off[row["id"]], row["wait_ns"])
    # The computing frames hardly block: well under their waits.
    waits = off[rows[("io_wait", 0)]["id"]] + off[rows[("lock_wait", 0)]["id"]]
    assert off[rows[("sort", 0)]["id"]] < 0.05 * waits


def test_server_stacks_are_its_call_paths(server_vm):
    """Every recorded stack is a path of the server's frame tree."""
    scenario_ok(server_vm, "server")
    rows, _ = server_truth(server_vm / "server.out")
    idof = {f: r["id"] for (f, _), r in rows.items()}
    leaves = ["parse", "plan", "scan", "sort", "io_wait", "lock_wait"]
    paths = {()}
    for leaf in leaves:
        path = ["request"] + (["execute"] if leaf not in ("parse", "plan")
                              else []) + [leaf]
        for n in range(1, len(path) + 1):
            paths.add(tuple(idof[f] for f in path[:n]))
    s, appid = server_session(server_vm)
    for x in s.samples + s.offcpu:
        if x["appid"] == appid and x["lstack"] is not None:
            assert tuple(i for i, _ in x["lstack"]["frames"]) in paths, x


def test_server_scan_split_by_table(server_vm):
    """scan's arg is its table; table 1 costs twice table 0: the samples
    of scan(0) and scan(1) split as the server's own clock does, within 3
    points of scan's samples, and parse --lstack-args counts them as the
    file does (SHARES_OPTS: one worker)."""
    scenario_ok(server_vm, "shares")
    rows, _ = server_truth(server_vm / "shares.out")
    s, appid = server_session(server_vm, "shares")
    scan = rows[("scan", 0)]["id"]
    by_arg = Counter(x["lstack"]["frames"][-1][1] for x in s.samples
                     if x["appid"] == appid and x["lstack"] is not None and
                     x["lstack"]["frames"] and
                     x["lstack"]["frames"][-1][0] == scan)
    assert set(by_arg) == {0, 1}
    own = {a: rows[("scan", a)]["self_cpu_ns"] for a in (0, 1)}
    for a in (0, 1):
        got = 100 * by_arg[a] / sum(by_arg.values())
        want = 100 * own[a] / sum(own.values())
        assert abs(got - want) <= 3, (a, got, want)
    tree = json.loads((server_vm / "shares-args.json").read_text())
    assert {a: tree_self(tree, f"scan({a})") for a in (0, 1)} == \
        dict(by_arg)


def tree_nodes(tree):
    """Every node of parse's JSON activity tree."""
    return tree["nodes"]


def tree_self(tree, name):
    """The on-CPU self samples of every node of that name, summed."""
    return sum(n["self"] for n in tree_nodes(tree) if n["name"] == name)


def test_parse_tree_agrees_with_the_file(server_vm):
    """parse's activity tree: each frame's self samples and off-CPU self
    time, summed over the tree, are the file's."""
    scenario_ok(server_vm, "server")
    rows, _ = server_truth(server_vm / "server.out")
    s, appid = server_session(server_vm)
    tree = json.loads((server_vm / "server.json").read_text())
    nodes = list(tree_nodes(tree))
    for frame in FRAMES:
        fid = rows[next(k for k in rows if k[0] == frame)]["id"]
        want = sum(1 for x in s.samples if x["appid"] == appid and
                   x["lstack"] is not None and top_id(x["lstack"]) == fid)
        assert tree_self(tree, frame) == want, frame
        off = sum(r["off_ns"] for r in s.offcpu if r["appid"] == appid and
                  top_id(r["lstack"]) == fid)
        got = sum(n["offcpu_self_ns"] for n in nodes if n["name"] == frame)
        assert got == off, frame


def test_callchain_above_the_logical_frames(server_vm):
    """With --callchain too, every sample has both (sleepyread), and
    --lstack-with-callchain's folded stacks put the C functions each
    frame ran above it: sort's include glibc's qsort machinery and the
    server's comparison function, scan's the server's scan."""
    scenario_ok(server_vm, "chained")
    s = sleepyread.read(server_vm / "chained.slp")
    (app,) = s.by_name("lstack_server")
    worker = [x for x in s.samples if x["appid"] == app["appid"] and
              x["lstack"] is not None and x["lstack"]["frames"]]
    assert len(worker) > 100
    assert all(x.get("chain") is not None for x in worker)
    lines = (server_vm / "chained.folded").read_text().splitlines()
    above = defaultdict(set)
    for line in lines:
        stack, _, n = line.rpartition(" ")
        frames = stack.split(";")
        for i, f in enumerate(frames):
            if f in ("sort", "scan") and frames[i - 1] == "execute":
                above[f].update(frames[i + 1:])
    assert any(f in ("compare_ints", "qsort") or "msort" in f
               for f in above["sort"]), above["sort"]
    assert any("scan" in f for f in above["scan"]), above["scan"]
    assert not above["sort"] & set(FRAMES)


def test_demo_shows_waits_beside_computation(server_vm):
    """The documented one-command demo prints an activity tree in which
    io_wait and lock_wait have off-CPU time beside sort's samples."""
    scenario_ok(server_vm, "demo")
    text = (server_vm / "demo.out").read_text()
    lines = {line.split()[-1]: line for line in text.splitlines()
             if line.strip() and line.split()[-1] in FRAMES}
    assert set(FRAMES) <= set(lines), text
    for frame in ("io_wait", "lock_wait"):
        assert re.search(r"[1-9][0-9.]*s\b", lines[frame]), lines[frame]


def storm_states(path):
    """lstack_storm's output: its registered tid, its depth and its set
    of valid states (tuples of (id, arg), bottom first)."""
    tid, depth, valid = None, None, set()
    for line in Path(path).read_text().splitlines():
        f = line.split()
        if f[0] == "tid":
            tid = int(f[1])
        elif f[0] == "depth":
            depth = int(f[1])
        elif f[0] == "valid":
            valid.add(tuple(tuple(int(v) for v in x.split(":"))
                            for x in f[1:]))
    return tid, depth, valid


def check_storm(share, name):
    """Every stack recorded for the storm's thread is a valid state (its
    bottom 16 frames when deeper); the statistics count what the file
    holds. Returns the session and the thread's lstack samples."""
    scenario_ok(share, name)
    tid, depth, valid = storm_states(share / f"{name}.out")
    s = sleepyread.read(share / f"{name}.slp")
    storm = {a["appid"] for a in s.by_name("lstack_storm")}
    mine = sorted((x for x in s.samples
                   if x["tid"] == tid and x["appid"] in storm),
                  key=lambda x: x["time_ns"])
    recorded = [x for x in mine if x["lstack"] is not None]
    assert len(recorded) > 500
    # The thread has a stack from its registration to its end: samples
    # without one come before the first sample with one, or after the last.
    first, last = recorded[0]["time_ns"], recorded[-1]["time_ns"]
    assert all(not first <= x["time_ns"] <= last for x in mine
               if x["lstack"] is None)
    cut = {v[:sf.LSTACK_SAMPLE_FRAMES] for v in valid}
    for x in recorded:
        ls = x["lstack"]
        if ls["torn"] or ls["fault"]:
            assert not ls["frames"]
            continue
        # A whole stack is a valid state; a cut one, the bottom 16 frames
        # of one deeper than a record.
        if ls["truncated"]:
            assert len(ls["frames"]) == 16 < depth, ls
            assert tuple(ls["frames"]) in cut, ls
        else:
            assert tuple(ls["frames"]) in valid, ls
    st = json.loads((share / f"{name}.stats").read_text())
    assert st["lstack_samples"] == sum(1 for x in s.samples
                                       if x["lstack"] is not None)
    assert st["lstack_torn"] == sum(1 for x in s.samples
                                    if x["lstack"] and x["lstack"]["torn"])
    assert st["lstack_faults"] == sum(1 for x in s.samples
                                      if x["lstack"] and x["lstack"]["fault"])
    return s, recorded, st


def test_storm_own_pushes(storm_vm):
    """The thread pushes and pops as fast as it can: the tick interrupts
    it, so every copy is whole (no retry) and many depths are seen."""
    s, recorded, st = check_storm(storm_vm, "storm_a")
    assert st["lstack_torn"] == st["lstack_faults"] == 0
    seen = Counter(len(x["lstack"]["frames"]) for x in recorded)
    assert set(seen) == {0, 1, 2, 3}, seen


def test_storm_deeper_than_a_record(storm_vm):
    """At depth 20 a record holds the bottom 16 frames, flagged
    truncated, and the statistics count them."""
    s, recorded, st = check_storm(storm_vm, "storm_deep")
    deep = [x for x in recorded if x["lstack"]["truncated"]]
    assert deep and all(len(x["lstack"]["frames"]) == 16 for x in deep)
    assert st["lstack_truncated"] == len(deep)


def test_storm_writer_on_another_cpu(storm_vm):
    """A writer on the other CPU rewrites the spinning thread's stack:
    whatever the tick records is a state the stack was in."""
    s, recorded, st = check_storm(storm_vm, "storm_b")
    assert st["lstack_faults"] == 0


def test_lifetime(storm_vm):
    """lstack_life's checks under the debug kernel with a session on:
    every registration error, new threads and forks start unregistered,
    exec drops the registration, a storm of threads registers and exits;
    the session accounts exactly."""
    scenario_ok(storm_vm, "life")
    out = (storm_vm / "life.out").read_text()
    assert "FAIL" not in out and out.rstrip().endswith("done: 0 failed"), out
    for check in ("EFAULT", "EINVAL", "EBUSY", "exec", "storm"):
        assert check in out, check
    st = json.loads((storm_vm / "life.stats").read_text())
    assert st["offcpu_dropped"] == 0


def test_no_leak(storm_vm):
    scenario_ok(storm_vm, "kmemleak")
    assert (storm_vm / "kmemleak.out").read_text() == ""


def test_storm_torn_copies_are_caught(mttcg_vm):
    """With both vCPUs running at once, the writer changes the stack
    during copies: the state word catches them, a copy is retried, and
    one that changes again is left out as torn; every stack recorded is
    still a state the stack was in."""
    s, recorded, st = check_storm(mttcg_vm, "storm_mttcg")
    assert st["lstack_retries"] > 0, st
    assert st["lstack_torn"] <= st["lstack_retries"]
    assert st["lstack_faults"] == 0
