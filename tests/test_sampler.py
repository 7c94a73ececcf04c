"""The in-kernel tick sampler, checked against ground truth in the VM.

Everything runs on the debug kernel (lockdep, KASAN, kmemleak, ...): the
runner fails a boot on any splat. Two boots: one at 2 vCPUs batching most
scenarios, one at 4 vCPUs for fairness, a starved pool and start/stop
cycles under a fork storm. Each scenario leaves its session file and the
tools' output in the shared folder; the tests read them with sleepyread,
which is independent of parse.
"""
import collections
import json
import re

import pytest

import sleepyfile as sf
import sleepyread
from conftest import BUILD, run_vm

GUEST_BIN = BUILD / "user" / "guest"
HZ = 1000

RUN = r"""
S=/mnt/share
run() { name=$1; shift; sample_start -o /var/log/$name.samples || exit 10
        "$@"; sample_stop --json > $S/$name.stats || exit 11
        cp /var/log/$name.samples $S/; }
"""

# One vCPU: with several, single-threaded TCG runs them in turn and a vCPU
# that waits for its turn gets its missed timer ticks as one, so some ticks
# never happen (about 5% here with two); CPU time × HZ is the truth only
# where every tick is delivered.
SCRIPT_1CPU = RUN + r"""
# A busy loop: where its samples fall, and how many. Long enough that
# startup (slow under TCG, which translates code on first execution) is
# a small part of it.
run loop sh -c 'loop 300000000 > /mnt/share/loop.out; sleep 0.3'
parse /var/log/loop.samples > $S/parse-loop.txt
parse --format csv --by appid-eip /var/log/loop.samples > $S/parse-loop.csv
echo all-done > $S/done
"""

SCRIPT_2CPU = RUN + r"""

# exec in place and fork-then-exec: the busy part is loop's, not sh's.
run exec sh -c 'sh -c "exec loop 30000000" > /mnt/share/exec1.out;
                sh -c "loop 30000000; echo forked" > /mnt/share/exec2.out'

# Threads share the appid; tids tell them apart.
run threads sh -c 'spin -t 4 -s 1 > /mnt/share/threads.out'

# Two spinners on two CPUs get fair shares.
run fair2 sh -c 'taskset -c 0 spin -s 2 > /mnt/share/fair2-1.out &
                 taskset -c 1 spin -s 2 > /mnt/share/fair2-2.out & wait'

# A process that exits long before sample_stop keeps path and mappings.
run short sh -c 'loop 1000 > /dev/null; sleep 1'

# Errors and edge cases.
abi_check /tmp > $S/abi.out 2>&1
su user -s /bin/sh -c 'sample_start -o /tmp/u.samples' > $S/eperm.out 2>&1
echo "status=$?" >> $S/eperm.out
sample_start -o /nonexistent/x > $S/enoent.out 2>&1; echo "status=$?" >> $S/enoent.out
sample_start -o /tmp > $S/eisdir.out 2>&1; echo "status=$?" >> $S/eisdir.out
ln -s /tmp/symlink-target /tmp/link
sample_start -o /tmp/link > $S/symlink.out 2>&1; echo "status=$?" >> $S/symlink.out
test -e /tmp/symlink-target && echo "target-created" >> $S/symlink.out
sample_stop > $S/stop-none.out 2>&1; echo "status=$?" >> $S/stop-none.out
sample_start -o /tmp/busy1 && { sample_start -o /tmp/busy2 > $S/ebusy.out 2>&1
  echo "status=$?" >> $S/ebusy.out; sample_stop > /dev/null; }

# A full file system: the write error is reported, the kernel carries on.
mkdir -p /mnt/full && mount -t tmpfs -o size=1m tmpfs /mnt/full
dd if=/dev/zero of=/mnt/full/fill bs=1k count=1000 2>/dev/null
sample_start -o /mnt/full/s.samples && loop 50000000 > /dev/null
sample_stop > $S/full.out 2>&1; echo "status=$?" >> $S/full.out
run after sh -c 'loop 1000000 > /dev/null'

# PID reuse: pid_max at its minimum, more sequential processes than pids.
old=$(cat /proc/sys/kernel/pid_max)
echo 301 > /proc/sys/kernel/pid_max
run reuse sh -c 'i=0; while [ $i -lt 400 ]; do /bin/true; i=$((i+1)); done'
echo $old > /proc/sys/kernel/pid_max
echo all-done > $S/done
"""

SCRIPT_4CPU = r"""
S=/mnt/share
sample_start -o /var/log/fair4.samples || exit 10
for i in 0 1 2 3; do taskset -c $i spin -s 3 > $S/fair4-$i.out & done; wait
sample_stop --json > $S/fair4.stats; cp /var/log/fair4.samples $S/

# A starved pool under load: real-time spinners on every CPU keep the
# writer waiting; drops are counted, nothing goes unaccounted.
sample_start -o /var/log/tiny.samples --buffers 2 --buffer-size 256 || exit 12
for i in 1 2 3 4; do spin --fifo -s 1 > /dev/null & done; wait
sample_stop --json > $S/tiny.stats; cp /var/log/tiny.samples $S/

# The default pool under full load: zero drops.
sample_start -o /var/log/full4.samples || exit 13
for i in 1 2 3 4; do spin -s 2 > /dev/null & done; wait
sample_stop --json > $S/full4.stats

# 1000 start/stop cycles while a fork/exit storm runs on the other CPUs.
( while [ ! -e /tmp/stop ]; do /bin/true; done ) &
( while [ ! -e /tmp/stop ]; do /bin/true; done ) &
cycles 1000 /var/log/cycle.samples > $S/cycles.out 2>&1
touch /tmp/stop; wait

# One session through a storm of short processes: pid entries come back.
sample_start -o /var/log/storm.samples --max-appids 4096 || exit 14
i=0; while [ $i -lt 300 ]; do /bin/true; i=$((i+1)); done
sample_stop --json > $S/storm.stats

# kmemleak reports objects older than 5 s: wait, then scan.
sleep 6
echo scan > /sys/kernel/debug/kmemleak
cat /sys/kernel/debug/kmemleak > $S/kmemleak.out
echo all-done > $S/done
"""


@pytest.fixture(scope="module")
def one(tmp_path_factory):
    share = tmp_path_factory.mktemp("one")
    r = run_vm(SCRIPT_1CPU, smp=1, debug=True, share=share, timeout=1500)
    assert r.returncode == 0, r
    assert r.file("done") == "all-done\n", r
    return r


@pytest.fixture(scope="module")
def two(module_share):
    r = run_vm(SCRIPT_2CPU, smp=2, debug=True, share=module_share,
               timeout=1500)
    assert r.returncode == 0, r
    assert r.file("done") == "all-done\n", r
    return r


@pytest.fixture(scope="module")
def four(tmp_path_factory):
    share = tmp_path_factory.mktemp("four")
    r = run_vm(SCRIPT_4CPU, smp=4, debug=True, share=share, timeout=1500)
    assert r.returncode == 0, r
    assert r.file("done") == "all-done\n", r
    return r


def session(r, name):
    return sleepyread.read(r.share / f"{name}.samples")


def stats(r, name):
    return json.loads(r.file(f"{name}.stats"))


def check_accounting(st):
    assert st["samples_taken"] == (
        st["samples_written"] + st["dropped_no_buffer"] +
        st["dropped_no_appid"] + st["dropped_write_error"] +
        st["discarded_no_write"]), st


def kv(text):
    return dict(re.findall(r"(\w+)=(\S+)", text))


# ------------------------------------------------------------ accuracy

def test_loop_samples_fall_in_main(one):
    s = session(one, "loop")
    [app] = s.by_name("loop")
    assert app["path"] == "/usr/bin/loop"
    user = s.samples_of([app["appid"]], sf.MODE_USER)
    assert len(user) > 200
    lo, hi = sleepyread.symbol_range(GUEST_BIN / "loop", "main")
    inside = sum(lo <= x["ip"] < hi for x in user)
    assert inside / len(user) >= 0.99, (inside, len(user))


def test_loop_samples_match_cpu_time(one):
    s = session(one, "loop")
    [app] = s.by_name("loop")
    user = s.samples_of([app["appid"]], sf.MODE_USER)
    utime = float(kv(one.file("loop.out"))["utime"])
    expected = utime * HZ
    assert abs(len(user) - expected) <= 0.05 * expected, (len(user), utime)


def test_header_describes_the_session(one):
    s = session(one, "loop")
    h = s.header
    assert h["hz"] == HZ and h["nr_cpus"] == 1
    assert re.fullmatch(r"6\.1\.\d+-sleepy-debug", h["release"])
    assert h["start_realtime_ns"] > 1_600_000_000 * 10**9


def test_every_sample_is_well_formed(one):
    s = session(one, "loop")
    assert s.stats is not None
    assert len(s.samples) == s.stats["samples_written"]
    ncpu = s.header["nr_cpus"]
    last = collections.defaultdict(int)
    for x in s.samples:
        assert x["cpu"] < ncpu
        assert x["appid"] in s.appids, x
        assert x["mode"] in (sf.MODE_USER, sf.MODE_KERNEL, sf.MODE_IRQ,
                             sf.MODE_IDLE)
        # Per CPU, time only moves forward.
        assert x["time_ns"] >= last[x["cpu"]]
        last[x["cpu"]] = x["time_ns"]
        if x["mode"] == sf.MODE_USER:
            assert x["ip"] < 2**47 and x["user_ip"] is None
        else:
            assert x["ip"] >= 0xffff800000000000
        if x["user_ip"] is not None:
            assert x["user_ip"] < 2**47


def test_idle_and_kernel_threads_have_their_own_appids(one):
    s = session(one, "loop")
    names = {a["name"] for a in s.appids.values()}
    assert "[idle]" in names
    idle = {a["appid"] for a in s.appids.values() if a["name"] == "[idle]"}
    idle_samples = s.samples_of(idle)
    assert idle_samples and all(x["mode"] in (sf.MODE_IDLE, sf.MODE_IRQ)
                                for x in idle_samples)
    kthreads = [a for a in s.appids.values() if a["flags"] & sf.APPID_F_KTHREAD]
    assert all(re.fullmatch(r"\[.+\]", a["name"]) for a in kthreads)


def test_kernel_samples_carry_the_user_ip(one):
    s = session(one, "loop")
    user_procs = {a["appid"] for a in s.appids.values()
                  if not a["flags"] and a["path"]}
    k = [x for x in s.samples if x["appid"] in user_procs
         and x["mode"] == sf.MODE_KERNEL]
    assert k, "no kernel-mode samples of user processes"
    # Also while it exits, after its mm is gone: the entry registers stay.
    assert all(x["user_ip"] is not None for x in k), \
        [x for x in k if x["user_ip"] is None][:5]
    kthread = {a["appid"] for a in s.appids.values() if a["flags"]}
    assert all(x["user_ip"] is None for x in s.samples
               if x["appid"] in kthread)


def test_accounting_is_exact(one, two):
    check_accounting(stats(one, "loop"))
    for name in ("exec", "threads", "fair2", "short", "after",
                 "reuse"):
        st = stats(two, name)
        check_accounting(st)
        assert st["write_errors"] == 0
        s = session(two, name)
        assert len(s.samples) == st["samples_written"]
        assert s.stats["samples_taken"] == st["samples_taken"]


def test_guest_parse_shows_loops_hot_eip(one):
    lo, hi = sleepyread.symbol_range(GUEST_BIN / "loop", "main")
    rows = [l.split(",") for l in one.file("parse-loop.csv").splitlines()]
    assert rows[0] == ["app", "instance", "pid", "mode", "eip", "samples",
                       "percent"]
    loop_rows = [r for r in rows[1:] if r[0] == "loop" and r[4]]
    top = max(loop_rows, key=lambda r: int(r[5]))
    assert lo <= int(top[4], 16) < hi
    assert "loop#0" in one.file("parse-loop.txt")


# ------------------------------------------------------------ appids

def test_exec_attributes_the_work_to_the_new_binary(two):
    s = session(two, "exec")
    loops = s.by_name("loop")
    assert [a["instance"] for a in loops] == [0, 1]
    assert all(a["origin"] == sf.ORIGIN_EXEC for a in loops)
    loop_user = s.samples_of([a["appid"] for a in loops], sf.MODE_USER)
    sh_user = s.samples_of([a["appid"] for a in s.by_name("sh")],
                           sf.MODE_USER)
    assert len(loop_user) > 100
    assert len(sh_user) < 0.02 * len(loop_user), (len(sh_user), len(loop_user))
    # Each loop ran under the pid its shell had: exec keeps the pid. (busybox
    # runs some of its applets by exec of /proc/self/exe: "busybox".)
    for a in loops:
        parent = s.appids[a["parent"]]
        assert parent["name"] in ("sh", "busybox"), parent
        assert parent["pid"] == a["pid"]
        for x in s.samples_of([a["appid"]]):
            assert x["pid"] == a["pid"]


def test_threads_share_one_appid(two):
    s = session(two, "threads")
    [app] = s.by_name("spin")
    out = two.file("threads.out")
    pid = int(kv(out)["pid"])
    tids = {int(t) for t in re.findall(r"tid=(\d+)", out)}
    assert app["pid"] == pid and len(tids) == 4
    user = s.samples_of([app["appid"]], sf.MODE_USER)
    assert {x["tid"] for x in user} == tids
    assert {x["pid"] for x in user} == {pid}


def test_short_lived_process_keeps_path_and_mappings(two):
    s = session(two, "short")
    [app] = s.by_name("loop")
    assert app["path"] == "/usr/bin/loop"
    maps = [m for m in s.mmaps if m["appid"] == app["appid"]]
    assert maps and all(m["path"] == "/usr/bin/loop" for m in maps)
    lo, _ = sleepyread.symbol_range(GUEST_BIN / "loop", "main")
    assert any(m["start"] <= lo < m["start"] + m["len"] for m in maps)
    build_id = sleepyread.build_id(GUEST_BIN / "loop")
    assert all(m["build_id"] == build_id for m in maps)


def test_pid_reuse_gives_distinct_instances(two):
    s = session(two, "reuse")
    trues = s.by_name("true")
    assert [a["instance"] for a in trues] == list(range(400))
    pids = collections.Counter(a["pid"] for a in trues)
    assert len(pids) < 300, "pids were not reused"
    assert max(pids.values()) > 1
    assert all(a["pid"] <= 300 for a in trues)


# ------------------------------------------------------------ SMP

def fair_shares(s, nr):
    """Each spinner (pinned to a CPU of its own) against the samples its
    CPU took while it ran, and its samples in all. Single-threaded TCG
    runs the vCPUs in turn and does not deliver every tick, nor the same
    number to each vCPU, so raw sample counts would measure the emulator;
    against the ticks each CPU did deliver, fair spinners get equal
    ratios, near 1."""
    spins = s.by_name("spin")
    assert len(spins) == nr
    ratios, total = [], 0
    for a in spins:
        mine = s.samples_of([a["appid"]])
        t0, t1 = min(x["time_ns"] for x in mine), max(x["time_ns"] for x in mine)
        cpus = {x["cpu"] for x in mine}
        assert len(cpus) == 1, "a pinned spinner ran on several CPUs"
        ticks = sum(1 for x in s.samples
                    if x["cpu"] in cpus and t0 <= x["time_ns"] <= t1)
        ratios.append(len(mine) / ticks)
        total += len(mine)
    return ratios, total


def test_two_spinners_get_fair_shares(two):
    ratios, total = fair_shares(session(two, "fair2"), 2)
    assert total > 1000
    mean = sum(ratios) / len(ratios)
    assert all(abs(r - mean) <= 0.05 * mean for r in ratios), ratios
    assert mean > 0.9, ratios


def test_four_spinners_get_fair_shares(four):
    s = session(four, "fair4")
    ratios, total = fair_shares(s, 4)
    # Single-threaded TCG runs the 4 vCPUs in turn: each gets about a
    # quarter of the ticks of its 3 s, a few hundred samples.
    assert total > 1000
    mean = sum(ratios) / len(ratios)
    assert all(abs(r - mean) <= 0.05 * mean for r in ratios), ratios
    assert mean > 0.9, ratios
    assert all(x["cpu"] < 4 for x in s.samples)
    assert {x["cpu"] for x in s.samples} == {0, 1, 2, 3}


def test_default_pool_has_no_drops_at_four_cpus(four):
    st = stats(four, "full4")
    check_accounting(st)
    assert st["samples_taken"] > 1000
    assert st["dropped_no_buffer"] == 0 and st["dropped_no_appid"] == 0
    assert max(st["buffers_hwm"][:4]) >= 1


def test_starved_pool_counts_its_drops(four):
    st = stats(four, "tiny")
    check_accounting(st)
    assert st["dropped_no_buffer"] > 0
    s = session(four, "tiny")
    assert len(s.samples) == st["samples_written"]
    assert all(h <= 2 for h in st["buffers_hwm"][:4])


def test_start_stop_cycles_under_fork_storm(four):
    got = kv(four.file("cycles.out"))
    assert got["cycles"] == "1000" and got["bad"] == "0", got
    assert int(got["samples"]) > 0
    assert four.file("kmemleak.out") == ""


def test_pid_entries_come_back_after_exit(four):
    st = stats(four, "storm")
    # 300 processes came and went; only the few still alive stay mapped.
    assert st["appids"] >= 600
    assert st["pids_mapped"] < 40, st["pids_mapped"]


# ------------------------------------------------------------ errors

def test_abi_errors(two):
    got = dict(l.split(": ", 1) for l in two.file("abi.out").splitlines())
    assert got == {
        "stop-without-start": "EINVAL",
        "start-path-efault": "EFAULT",
        "start-cfg-efault": "EFAULT",
        "start-unknown-flag": "EINVAL",
        "start-too-many-buffers": "EINVAL",
        "start-tiny-buffer": "EINVAL",
        "start-huge-buffer": "EINVAL",
        "start-huge-pool": "EINVAL",
        "start-huge-appids": "EINVAL",
        "start-bad-size": "EINVAL",
        "start-reserved": "EINVAL",
        "start-enoent": "ENOENT",
        "start-eisdir": "EISDIR",
        "start-ok": "OK",
        "start-ebusy": "EBUSY",
        "stop-efault": "EFAULT",
        "stop-bad-size": "EINVAL",
        "stop-ok": "OK",
        "stop-again": "EINVAL",
        "stop-null-without-start": "EINVAL",
        "start-null-cfg": "OK",
        "stop-null-stats": "OK",
    }


def test_tool_errors(two):
    assert two.file("eperm.out") == (
        "sample_start: /tmp/u.samples: Operation not permitted "
        "(needs CAP_SYS_ADMIN or CAP_PERFMON)\nstatus=1\n")
    assert two.file("enoent.out") == (
        "sample_start: /nonexistent/x: No such file or directory\nstatus=1\n")
    assert two.file("eisdir.out") == "sample_start: /tmp: Is a directory\nstatus=1\n"
    assert two.file("symlink.out").startswith("sample_start: /tmp/link: ")
    assert "status=1" in two.file("symlink.out")
    assert "target-created" not in two.file("symlink.out")
    assert two.file("stop-none.out") == (
        "sample_stop: no sampling session is active\nstatus=1\n")
    assert two.file("ebusy.out") == (
        "sample_start: a sampling session is already active\nstatus=1\n")


def test_full_filesystem_is_reported(two):
    out = two.file("full.out")
    assert out.rstrip().endswith("status=1"), out
    assert "No space left on device" in out
    st = stats(two, "after")   # the next session works
    assert st["samples_written"] > 0 and st["write_errors"] == 0
