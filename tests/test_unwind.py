"""Unwind tables (sample_start --callchain, SAMPLE_F_UNWIND): user stacks
of code built without frame pointers, walked at the tick by the rules
sleepy_unwind(2) took from each file's .eh_frame.

Ground truth: tests/progs/uwtruth, built -O2 -fomit-frame-pointer, whose
call tree is known (uwtruth.c: a leaf reached through two paths 3:1, one
through five frames of a recursion), as a static binary and with its tree
in a shared library; the functions are the ELF symbols' ranges (nm). The
same binary walked by frame pointers only (--no-unwind) must get it
wrong, so that these checks can fail; uwtruth-fp-noeh, with frame
pointers but no .eh_frame, must get whole stacks from the fallback, and
its walks are counted as such.

Parts of the release kernel's release-1cpu-b (1 vCPU under -icount: each
tick samples the one running program) and of the debug kernel's
debug-2cpu-b (the fuzzer of the table-loading interface and the churn of
fork, exec, dlopen and munmap while ticks walk: no splat, no leak).
Read with sleepyread, independently of parse.
"""
import bisect
import collections
import functools
import json
import subprocess
from pathlib import Path

import pytest

import sleepyfile as sf
import sleepyread
import unwindcmp
from boots import boot_fixture
from conftest import GUEST_BIN, scenario_ok
from elfnames import Names

pytestmark = pytest.mark.vm

# run NAME OPTIONS CMD...: CMD in a session of its own (sample_start's
# OPTIONS, one word), its statistics in $S/NAME.stats (JSON).
RUN_SH = r"""
run() { name=$1; opts=$2; shift 2
        # shellcheck disable=SC2086 # OPTIONS: words
        sample_start -o /var/log/$name.samples $opts -- "$@" \
            > $S/$name.out 2> $S/$name.err || exit 10
        cp /var/log/$name.samples $S/; }
"""

SCRIPT = RUN_SH + r"""
# The tables' helper and the programs, translated once (TCG).
uwtruth tree 0.1 > /dev/null
scenario truth <<'EOF'
run truth --callchain uwtruth tree 3
EOF
scenario truth_dyn <<'EOF'
run truth_dyn --callchain uwtruth-dyn tree 3
EOF
# Frame pointers only: the same binary's stacks are wrong or cut.
scenario truth_fp <<'EOF'
run truth_fp "--callchain --no-unwind" uwtruth tree 2
EOF
# Frame pointers but no .eh_frame: the fallback walks them.
scenario fallback <<'EOF'
run fallback --callchain uwtruth-fp-noeh tree 2
EOF
scenario vdso <<'EOF'
run vdso --callchain uwtruth-dyn vdso 2
EOF
# Two callers of the same deep frames, in phases: the CPU's memo of its
# last walk must see which.
scenario twin <<'EOF'
run twin --callchain uwtruth twin 4
EOF
# Without waiting for the tables, and no cache of them: the samples
# before them.
scenario nowait <<'EOF'
SLEEPY_UNWIND_CACHE= run nowait "--callchain --no-unwind-wait" uwtruth tree 3
EOF
# The plain form: sample_start, the program, sample_stop.
scenario plain <<'EOF'
sample_start -o /var/log/plain.samples --callchain || exit 10
uwtruth-dyn tree 2 > $S/plain.out || exit 11
sample_stop --json > $S/plain.stats || exit 12
cp /var/log/plain.samples $S/
EOF
# A file the session's owner cannot read gets no table: an owner with
# CAP_PERFMON but not root, a program it may run but not read.
scenario unreadable <<'EOF'
cp /usr/bin/uwtruth /tmp/secret && chmod 0711 /tmp/secret
mkdir -p /tmp/u && chown 1000:1000 /tmp/u
runas --cap perfmon 1000:1000 sh -c \
    'sample_start -o /tmp/u/s --callchain -- /tmp/secret tree 1 \
        > /tmp/u/out 2> /tmp/u/err' || exit 10
cp /tmp/u/s $S/unreadable.samples
EOF
"""
# Debian's python3, perl and xz as the host has them (--host-root), each
# under sleepy's tables and under perf record --call-graph dwarf, at 1 vCPU
# under -icount; perf script unwinds perf's samples on the host.
HOSTROOT_SCRIPT = unwindcmp.SETUP_SH + r"""
pair() { name=$1; shift
    sample_start -o /tmp/$name.slp --callchain=127 -- "$@" > /dev/null \
        2> $S/$name.stats || exit 10
    cp /tmp/$name.slp $S/
    """ + unwindcmp.PERF_DWARF + r""" -o $S/$name.perf -- "$@" \
        > /dev/null || exit 11; }
"""
for _name, (_, _, _cmd) in unwindcmp.PROGRAMS.items():
    HOSTROOT_SCRIPT += (f"scenario uw_{_name} <<'EOF'\npair uw_{_name} "
                        f"{_cmd}\nEOF\n")

# The debug kernel (lockdep, KASAN, kmemleak, ...), 2 vCPUs: the fuzzer
# of the table-loading interface for 60 s, and the churn of fork, exec,
# dlopen and munmap while ticks walk for 10 s. (60 s of the fuzzer's fixed
# seed made 7,958 calls, took 29 tables and refused in 8 ways, the churn
# 112 rounds in 20 s: the checks below ask for 1,000, 5, 5 and 20.)
DEBUG_SCRIPT = r"""
scenario uwfuzz <<'EOF'
sample_start -o /var/log/uwfuzz.samples --callchain -- uwfuzz --seed 7 60 \
    > $S/uwfuzz.json 2> $S/uwfuzz.err || exit 10
EOF
scenario uwchurn <<'EOF'
sample_start -o /var/log/uwchurn.samples --callchain -- uwchurn 10 \
    > $S/uwchurn.out 2> $S/uwchurn.err || exit 10
cp /var/log/uwchurn.samples $S/
EOF
"""

SCENARIOS = {"release-1cpu-b": SCRIPT,
             "release-1cpu-hostroot": HOSTROOT_SCRIPT,
             "debug-2cpu-b": DEBUG_SCRIPT}
vm = boot_fixture("release-1cpu-b")
hostroot = boot_fixture("release-1cpu-hostroot")
debug_vm = boot_fixture("debug-2cpu-b")

# The true stacks of uwtruth, outermost first, from main.
TREE_A = ("main", "uw_run") + ("uw_recurse",) * 5 + ("uw_path_a", "uw_leaf")
TREE_B = ("main", "uw_run", "uw_path_b", "uw_leaf")
TWIN = ("main", "uw_twin", None, "uw_shared") + ("uw_chain",) * 5 + \
    ("uw_leaf",)
# Where a whole stack ends: the program's entry (past the C library's
# start, whose own symbols Debian's libc.so.6 does not keep), or a
# thread's start.
ROOTS = {"_start", "start_thread", "clone3"}


class Symbols:
    """Function names by address, from nm of the ELF files mapped at
    known addresses: the static binary at its link addresses, a shared
    library at the base its MMAP record gives."""

    def __init__(self):
        self.addrs, self.names = [], []

    def add(self, path, base=0):
        out = subprocess.run(["nm", "--defined-only", str(path)],
                             capture_output=True, text=True,
                             check=True).stdout
        for p in (line.split() for line in out.splitlines()):
            if len(p) == 3 and p[1] in "tTwWiI":
                self.addrs.append(int(p[0], 16) + base)
                self.names.append(p[2])
        order = sorted(range(len(self.addrs)), key=self.addrs.__getitem__)
        self.addrs = [self.addrs[i] for i in order]
        self.names = [self.names[i] for i in order]
        return self

    def name(self, addr):
        i = bisect.bisect_right(self.addrs, addr) - 1
        if i < 0 or addr - self.addrs[i] > 1 << 20:
            return None
        return self.names[i]


def session(vm, name):
    scenario_ok(vm, name)
    s = sleepyread.read(vm / f"{name}.samples")
    return s


def user_samples(s, binary):
    appids = [a["appid"] for a in s.appids.values() if a["name"] == binary]
    return [x for x in s.samples_of(appids) if x["mode"] == sf.MODE_USER]


def symbols_of(s, binary):
    """The program's symbols and its library's, from our build, at the
    bases the session's MMAP records give (a static binary's: its link
    addresses); the C library's are not known here."""
    syms = Symbols()
    files = {"/usr/bin/" + binary: GUEST_BIN / binary,
             "/usr/bin/libuwtruth.so": GUEST_BIN / "libuwtruth.so"}
    for m in s.mmaps:
        if m["path"] in files:
            path = files.pop(m["path"])
            pie = subprocess.run(["readelf", "-h", str(path)],
                                 capture_output=True, text=True,
                                 check=True).stdout
            base = m["start"] - m["pgoff"] if "DYN" in pie else 0
            syms.add(path, base)
    return syms


def stack(x, syms):
    """The sample's user functions, outermost first: its callers (return
    addresses, looked up one byte back), then its IP's."""
    chain = x["chain"]
    return tuple(syms.name(a - 1) for a in reversed(chain["user"])) + \
        (syms.name(x["ip"]),)


def from_main(st):
    return st[st.index("main"):] if "main" in st else None


def check_truth(s, binary):
    """uw_leaf's samples: every stack one of the two true paths from main,
    each reaching the C library's start; the inclusive split 3:1 within 3
    points. Returns the stacks."""
    syms = symbols_of(s, binary)
    samples = user_samples(s, binary)
    assert len(samples) > 1000, len(samples)
    stacks = [stack(x, syms) for x in samples]
    leaf = [st for st in stacks if st[-1] == "uw_leaf"]
    assert len(leaf) >= 0.9 * len(stacks), (len(leaf), len(stacks))
    wrong = [st for st in leaf if from_main(st) not in (TREE_A, TREE_B)]
    assert not wrong, (len(wrong), wrong[:5])
    rooted = [st for st in leaf if ROOTS & set(st)]
    assert len(rooted) == len(leaf), (len(rooted), len(leaf))
    share_a = sum("uw_path_a" in st for st in stacks) / len(stacks)
    share_b = sum("uw_path_b" in st for st in stacks) / len(stacks)
    share_r = sum("uw_recurse" in st for st in stacks) / len(stacks)
    assert abs(share_a - 0.75) <= 0.03, (share_a, share_b)
    assert abs(share_b - 0.25) <= 0.03, (share_a, share_b)
    assert share_r == pytest.approx(share_a, abs=0.01)
    return stacks


@pytest.mark.parametrize("name, binary", [("truth", "uwtruth"),
                                          ("truth_dyn", "uwtruth-dyn")])
def test_known_tree_without_frame_pointers(vm, name, binary):
    """Static and in a shared library: whole, true stacks, the split
    right, every sample's chain whole (no walk cut), and the tables
    counted: loaded for the files the program mapped, frames by table."""
    s = session(vm, name)
    check_truth(s, binary)
    st = s.stats
    assert s.header["flags"] & sf.SAMPLE_F_UNWIND
    assert st["unwind_tables"] >= 2 and st["unwind_refused"] == 0, st
    assert st["unwind_frames"] > 5 * len(user_samples(s, binary)), st
    cut = [x for x in user_samples(s, binary) if x["chain"]["user_cut"]]
    assert not cut, len(cut)


def test_frame_pointers_alone_get_it_wrong(vm):
    """The check of the true paths fails on the same binary walked by
    frame pointers: it can fail."""
    s = session(vm, "truth_fp")
    assert not s.header["flags"] & sf.SAMPLE_F_UNWIND
    with pytest.raises(AssertionError):
        check_truth(s, "uwtruth")
    syms = symbols_of(s, "uwtruth")
    stacks = [stack(x, syms) for x in user_samples(s, "uwtruth")]
    whole = [st for st in stacks if from_main(st) in (TREE_A, TREE_B)]
    assert len(whole) < 0.1 * len(stacks), (len(whole), len(stacks))


def test_the_fallback_walks_frame_pointers(vm):
    """No .eh_frame: no table, and every walk counted as having used the
    frame pointers for that reason; those get the leaf's callers right
    (the leaf pushes no frame: the stack's top word names its caller)."""
    s = session(vm, "fallback")
    samples = user_samples(s, "uwtruth-fp-noeh")
    syms = symbols_of(s, "uwtruth-fp-noeh")
    stacks = [stack(x, syms) for x in samples]
    leaf = [st for st in stacks if st[-1] == "uw_leaf"]
    assert len(leaf) >= 0.9 * len(stacks)
    good = [st for st in leaf if from_main(st) in (TREE_A, TREE_B)]
    assert len(good) >= 0.95 * len(leaf), (len(good), len(leaf),
                                          collections.Counter(leaf))
    st = s.stats
    assert st["unwind_fallback_no_table"] >= len(samples), st
    assert st["unwind_fp_frames"] >= 5 * len(samples), st


def test_the_memo_of_the_last_walk_sees_a_changed_caller(vm):
    """uwtruth twin: uw_leaf's frames below uw_twin_a and below
    uw_twin_b are the same registers and words, so a walk joins the CPU's
    memo of its last walk there (chain_walk.h's struct uw_memo); only the
    return address into the twin tells them apart. Every stack must name
    the twin its phase ran, 0.3 s of uw_twin_a to 0.1 s of uw_twin_b,
    within 3 points. A memo that did not re-read it gives the phase
    before's twin to the next phase's samples until a walk does not join
    it: with the re-read taken out of sleepy_uw_memo_follow(), 17.6% of
    the leaf's samples were uw_twin_b's (2026-11-29)."""
    s = session(vm, "twin")
    syms = symbols_of(s, "uwtruth")
    stacks = [from_main(stack(x, syms))
              for x in user_samples(s, "uwtruth")]
    leaf = [st for st in stacks if st and st[-1] == "uw_leaf"]
    assert len(leaf) >= 0.9 * len(stacks) > 600, (len(leaf), len(stacks))
    twins = collections.Counter(st[2] for st in leaf)
    wrong = [st for st in leaf
             if st[:2] + (None,) + st[3:] != TWIN or
             st[2] not in ("uw_twin_a", "uw_twin_b")]
    assert not wrong, (len(wrong), wrong[:3])
    share_b = twins["uw_twin_b"] / len(leaf)
    assert abs(share_b - 0.25) <= 0.03, twins
    assert s.stats["unwind_frames"] >= 9 * len(leaf), s.stats


def test_vdso_frames_reach_main(vm):
    """Samples in the vDSO's clock_gettime: its table, the vDSO's own,
    walks them to main through the C library."""
    s = session(vm, "vdso")
    syms = symbols_of(s, "uwtruth-dyn")
    samples = user_samples(s, "uwtruth-dyn")
    in_vdso = [x for x in samples if syms.name(x["ip"]) is None and
               x["ip"] >= 0x7f0000000000]
    assert len(in_vdso) >= 100, len(in_vdso)
    whole = [x for x in in_vdso
             if "uw_vdso" in stack(x, syms) and "main" in stack(x, syms)]
    assert len(whole) >= 0.98 * len(in_vdso), (len(whole), len(in_vdso))


def test_without_waiting_the_first_samples_have_no_table(vm):
    """--no-unwind-wait: the program runs while its tables are made; the
    samples before its first whole stack are counted, and after it every
    stack is whole. The figures go to the test's output."""
    s = session(vm, "nowait")
    assert s.stats["unwind_waits"] == 0
    syms = symbols_of(s, "uwtruth")
    samples = sorted(user_samples(s, "uwtruth"), key=lambda x: x["time_ns"])
    whole = [i for i, x in enumerate(samples)
             if ROOTS & set(stack(x, syms))]
    assert whole, "no whole stack at all"
    first = whole[0]
    start = min(a["time_ns"] for a in s.appids.values()
                if a["name"] == "uwtruth")
    delay = (samples[first]["time_ns"] - start) / 1e6
    print(f"exec to first whole stack {delay:.0f} ms (guest), "
          f"{first} samples before it of {len(samples)}")
    after = samples[first:]
    assert len(whole) >= 0.98 * len(after), (len(whole), len(after))


def test_waiting_programs_have_whole_stacks_from_the_start(vm):
    """With waiting (the default): the very first samples are whole; the
    waits are counted and none timed out."""
    s = session(vm, "truth")
    syms = symbols_of(s, "uwtruth")
    samples = sorted(user_samples(s, "uwtruth"), key=lambda x: x["time_ns"])
    first = [ROOTS & set(stack(x, syms)) for x in samples[:20]]
    assert all(first), first
    st = s.stats
    assert st["unwind_waits"] >= 1 and st["unwind_wait_timeouts"] == 0, st
    print(f"waits {st['unwind_waits']}, "
          f"{st['unwind_wait_ns'] / 1e6:.0f} ms in all (guest)")


def test_plain_start_and_stop(vm):
    """sample_start, the program, sample_stop: the helper runs between."""
    scenario_ok(vm, "plain")
    s = sleepyread.read(vm / "plain.samples")
    stats = json.loads((vm / "plain.stats").read_text())
    assert stats["unwind_tables"] >= 2, stats
    check_truth(s, "uwtruth-dyn")


def test_a_file_the_owner_cannot_read_gets_no_table(vm):
    """The helper opens files with the owner's rights: a program the
    owner may run but not read gets no table (its walks fall back), the
    C library does."""
    s = session(vm, "unreadable")
    st = s.stats
    assert st["unwind_files"] >= 1 and st["unwind_refused"] == 0, st
    # Every file the session's processes mapped has one but this one; the
    # vDSO's is not a file's.
    assert st["unwind_tables"] == st["unwind_files"], st
    samples = user_samples(s, "secret")
    assert len(samples) > 500, len(samples)
    assert st["unwind_fallback_no_table"] >= 0.9 * len(samples), st


@pytest.mark.parametrize("name", sorted(unwindcmp.PROGRAMS))
def test_debian_programs_stacks_are_whole_and_agree_with_perf(hostroot,
                                                              name):
    """At least 98% of the program's user samples have a stack that
    reaches its entry code (past the C library's start), as perf dwarf's
    do; the ten functions with the most inclusive samples in perf's are
    within 3 points in sleepy's. Both named by one symbolizer (.dynsym)."""
    scenario_ok(hostroot, f"uw_{name}")
    comm, exe, _ = unwindcmp.PROGRAMS[name]
    ours, s = unwindcmp.sleepy_stacks(hostroot / f"uw_{name}.slp", comm)
    perf = unwindcmp.perf_stacks(hostroot / f"uw_{name}.perf", comm)
    assert len(ours) > 500 and len(perf) > 500, (len(ours), len(perf))
    w_ours, w_perf = unwindcmp.whole(ours, exe), unwindcmp.whole(perf, exe)
    names = functools.lru_cache(None)(
        lambda p: Names(p) if Path(p).is_file() else None)
    inc_ours = unwindcmp.inclusive(ours, names)
    inc_perf = unwindcmp.inclusive(perf, names)
    top = sorted(inc_perf, key=inc_perf.get, reverse=True)[:10]
    diffs = {k: round(100 * (inc_ours.get(k, 0) - inc_perf[k]), 1)
             for k in top}
    print(f"{name}: whole {100 * w_ours:.1f}% (perf dwarf "
          f"{100 * w_perf:.1f}%), {len(ours)} samples ({len(perf)}); "
          f"top ten inclusive, points off perf's: {sorted(diffs.values())}")
    assert w_ours >= 0.98, (w_ours, w_perf)
    assert all(abs(d) <= 3 for d in diffs.values()), diffs
    assert s.stats["unwind_refused"] == 0, s.stats


def test_fuzzed_tables_on_the_debug_kernel(debug_vm):
    """60 s of random and mutated tables, bad descriptors, sizes and
    pointers: every error a documented one, valid random tables taken
    and walked by the tick in the copies that ran, refusals of several
    kinds; no splat, no leak (the boot's checks)."""
    scenario_ok(debug_vm, "uwfuzz", "kmemleak")
    r = json.loads((debug_vm / "uwfuzz.json").read_text())
    assert r["undocumented"] == 0, r
    assert r["calls"] > 1000 and r["accepted"] >= 5 and r["runs"] >= 20, r
    kinds = [code for code, n in enumerate(r["refused"]) if n]
    assert len(kinds) >= 5, r
    assert "unreferenced object" not in \
        (debug_vm / "kmemleak.out").read_text()


def test_churn_while_ticks_walk_on_the_debug_kernel(debug_vm):
    """fork, exec, dlopen, dlclose, mmap and munmap of code while every
    tick walks by tables: the rounds ran, the tables were loaded and
    used, no wait timed out; no splat, no leak."""
    scenario_ok(debug_vm, "uwchurn", "kmemleak")
    assert int((debug_vm / "uwchurn.out").read_text()) >= 20
    s = sleepyread.read(debug_vm / "uwchurn.samples")
    st = s.stats
    assert st["unwind_tables"] >= 4 and st["unwind_frames"] > 0, st
    assert st["unwind_refused"] == 0 and st["unwind_wait_timeouts"] == 0, st
    assert "unreferenced object" not in \
        (debug_vm / "kmemleak.out").read_text()
