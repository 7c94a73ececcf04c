"""sleepy_pmu: overflow signals on the fixed APIC vector, in the VM.

Parts of four boots (boots.BOOTS), with the software event source, the
one that works without a PMU (a splat while a scenario runs fails it):

- debug-1cpu, the debug kernel (lockdep, KASAN, kmemleak, ...), 1 vCPU
  under -icount: the signal rate, signals only to registered processes
  and only while they run, the example program, a storm, an idle CPU;
- release-1cpu-a, the release kernel, 1 vCPU under -icount: the same
  rates to 10%, and 10,000 signals per second of CPU time for 10 s;
- release-2cpu, the release kernel, 2 vCPUs under -icount: 10,000 signals
  per second on two CPUs for 10 s;
- debug-2cpu-b, the debug kernel, 2 vCPUs under -icount: the error
  cases, counter reads across CPUs, a storm on both CPUs, exec, CPU
  hotplug and rmmod while counters run, and lockdown (last).

The guest side is tests/pmu/pmu_check.c and the sleepy_pmu tool; the tests
read what they left in the shared folder. Each scenario leaves its status
there too (conftest.SCENARIO_SH), which the tests that read it check.
"""
import json

import pytest

from boots import boot_fixture, boot_params_fixture
from conftest import scenario_ok

pytestmark = pytest.mark.vm

MS = 1_000_000

# One vCPU under -icount: guest time is the instruction count, so timers
# fire when they are due however slowly TCG runs. Without it (and with more
# than one vCPU, which single-threaded TCG runs in turns of 100 ms), a timer
# fires late, several periods at once, and a rate measures the emulator.
# Rates, shares, the example program and the 10,000 signals/s run are here.
# Wait until N processes are registered (under the debug kernel, a
# process can take a while to start).
WAIT = r"""
registered() { for i in $(seq 300); do
    [ $(sleepy_pmu list | wc -l) -gt $1 ] && return 0; sleep 0.1; done
    echo "timed out waiting for $1 registrations" >&2; return 1; }
"""



def pmu_setup(threshold):
    """The module loaded, the software source at threshold ns, and a first
    short run (which lets the work that loading the module leaves to
    kthreads settle)."""
    return rf"""
scenario setup <<'EOF'
modprobe sleepy_pmu > $S/modprobe.out 2>&1 || exit 10
sleepy_pmu config --source software --threshold {threshold} > $S/config.out 2>&1 || exit 11
pmu_check busy --seconds 0.5 > /dev/null || exit 11
EOF
"""


# The scenarios of rates and shares, run on both kernels.
RATES = pmu_setup(MS) + r"""
# A registered spinner alone.
scenario rate <<'EOF'
pmu_check busy --seconds 3 > $S/rate.json
EOF
# A registered spinner and an unregistered one beside it.
scenario beside <<'EOF'
pmu_check busy --seconds 1.5 > $S/beside-reg.json &
pmu_check busy --seconds 1.5 --no-register > $S/unreg.json &
wait
EOF
# Two registered spinners sharing the CPU, and a registered sleeper.
scenario share <<'EOF'
pmu_check busy --seconds 1.5 > $S/share-a.json &
pmu_check busy --seconds 1.5 > $S/share-b.json &
pmu_check busy --seconds 3 --sleep > $S/sleeper.json &
registered 3; sleepy_pmu list > $S/list.out 2>&1
wait
EOF
# The example program.
scenario example <<'EOF'
pmu_example --seconds 2 > $S/example.out 2>&1; echo "status=$?" >> $S/example.out
EOF
# Unregistering takes back an overflow signal still pending.
scenario pending <<'EOF'
sleepy_pmu stats > $S/pending-before.out 2>&1
pmu_check pending > $S/pending.out 2>&1; echo "status=$?" >> $S/pending.out
sleepy_pmu stats > $S/pending-after.out 2>&1
EOF
"""

# The debug kernel, one vCPU under -icount (lockdep, KASAN, kmemleak: the
# runner fails the boot on any splat).
SCRIPT_1CPU = WAIT + RATES + r"""
# A storm under lockdep and KASAN: every overflow accounted for. (Here one
# signal's round trip costs about 100 us of guest time, so the period is
# 200 us; at 100 us the spinner would make almost no progress of its own.)
# An idle CPU takes no timer interrupts of ours: an idle second costs as
# many with a 200 us counter running as with none. (The storm runs with
# the counter this configures.)
scenario idle <<'EOF'
sleepy_pmu stop > /dev/null || exit 12
grep LOC: /proc/interrupts > $S/idle0-before.out; sleep 1
grep LOC: /proc/interrupts > $S/idle0-after.out
sleepy_pmu config --source software --threshold 200000 > /dev/null || exit 12
sleepy_pmu stats > $S/idle-stats-before.out
grep LOC: /proc/interrupts > $S/idle-before.out; sleep 1
grep LOC: /proc/interrupts > $S/idle-after.out
sleepy_pmu stats > $S/idle-stats-after.out
EOF
scenario dstorm <<'EOF'
sleepy_pmu stats > $S/dstorm-before.out
pmu_check busy --seconds 3 > $S/dstorm.json
sleepy_pmu stats > $S/dstorm-after.out
EOF
scenario unload <<'EOF'
sleepy_pmu stop > /dev/null || exit 13
rmmod sleepy_pmu || exit 14
EOF
"""

# The release kernel, one vCPU under -icount: the same scenarios, where
# the rates are checked to 10% (on the debug kernel each overflow makes
# about 145 us of work for the RCU kthread, likely through kmemleak, which
# the CPU's counter counts too, see Documentation/pmu.md); 10,000 signals per
# second of CPU time for 10 s;
# and the signal-cost benchmark's program, briefly, to check both of its
# signal paths work.
SCRIPT_RELEASE = WAIT + RATES + r"""
# The statistics are read with the counter stopped: read while it runs,
# a snapshot can catch an overflow's outcome without the overflow (one
# CI run's "before" had one signal more than its overflows explain).
scenario stress <<'EOF'
sleepy_pmu stop > /dev/null 2>&1
sleepy_pmu stats > $S/stress-before.out
sleepy_pmu config --source software --threshold 100000 > /dev/null || exit 11
pmu_check busy --seconds 10 > $S/stress.json
sleepy_pmu stop > /dev/null || exit 12
sleepy_pmu stats > $S/stress-after.out
sleepy_pmu list > $S/stress-list.out
EOF
# The time budget at its lowest, 1% of a tick (10 us of handler time): a
# spinner's overflows every 50 us hold the CPU, and every overflow is
# still accounted for; 0 and 101 are refused. (Every 100 us, a tick has
# about 9 overflows of some 1.1-1.2 us each: their sum sits at the budget,
# and one CI boot never went over it.)
scenario budget <<'EOF'
cat /sys/module/sleepy_pmu/parameters/max_time_percent > $S/budget-default.out
sleepy_pmu stats > $S/budget-before.out
echo 1 > /sys/module/sleepy_pmu/parameters/max_time_percent || exit 11
sleepy_pmu config --source software --threshold 50000 > /dev/null || exit 11
pmu_check busy --seconds 2 > $S/budget.json
sleepy_pmu stop > /dev/null || exit 12
echo 25 > /sys/module/sleepy_pmu/parameters/max_time_percent || exit 12
sleepy_pmu stats > $S/budget-after.out
for v in 0 101; do
    echo $v 2>> $S/budget-bad.out > /sys/module/sleepy_pmu/parameters/max_time_percent
    echo "status=$?" >> $S/budget-bad.out
done
EOF
scenario cost <<'EOF'
for mode in none sleepy perf; do
    pmu_cost $mode 1000000 20000000 >> $S/cost.jsonl || exit 13
done
EOF
scenario floor <<'EOF'
for mode in syscall selfsignal queued; do
    pmu_cost $mode 20000 >> $S/floor.jsonl || exit 13
done
EOF
scenario unload <<'EOF'
rmmod sleepy_pmu || exit 14
EOF
"""

# The release kernel, two vCPUs under -icount (the runner boots on one and
# init onlines the other: QEMU 7.2 cannot bring it up during boot under
# icount): 10,000 signals per second on two CPUs for 10 s. A registered
# spinner on each CPU, an overflow every 100 us of CPU time on each.
SCRIPT_RELEASE_2CPU = WAIT + pmu_setup(100_000) + r"""
scenario storm <<'EOF'
sleepy_pmu stats > $S/storm-before.out 2>&1
pmu_check busy --seconds 10 --cpu 0 > $S/storm0.json &
pmu_check busy --seconds 10 --cpu 1 > $S/storm1.json &
wait
sleepy_pmu stats > $S/storm-after.out 2>&1
sleepy_pmu list > $S/after-list.out 2>&1
EOF
scenario unload <<'EOF'
sleepy_pmu stop > /dev/null || exit 12
rmmod sleepy_pmu || exit 13
EOF
"""

# Two vCPUs under -icount (the debug kernel): errors, reads across CPUs,
# the storm, exec, hotplug and rmmod. (Without icount each CPU's
# sched_clock, filtered by its own ticks that TCG delays, was seen to jump
# ahead of CLOCK_MONOTONIC, which the monotonic check cannot tell from a
# bad read.)
SCRIPT_2CPU = WAIT + r"""
scenario setup <<'EOF'
modprobe sleepy_pmu > $S/modprobe.out 2>&1 || exit 10
EOF
scenario device <<'EOF'
ls -l /dev/sleepy_pmu > $S/dev.out 2>&1
sleepy_pmu --help > $S/help.out 2>&1
pmu_example --help > $S/example-help.out 2>&1
EOF
scenario errors <<'EOF'
pmu_check errors > $S/errors.jsonl 2> $S/errors.err
EOF

# The hardware source refuses where there is no PMU (TCG has none).
scenario hw <<'EOF'
sleepy_pmu config --source hardware --event 0x3c --threshold 100000 \
    > $S/hw.out 2>&1; echo "status=$?" >> $S/hw.out
EOF
# Tool errors.
scenario tool-errors <<'EOF'
sleepy_pmu config --source software --threshold 0 > $S/tool-zero.out 2>&1
echo "status=$?" >> $S/tool-zero.out
su user -s /bin/sh -c 'sleepy_pmu config --source software --threshold 1000000' \
    > $S/tool-eperm.out 2>&1; echo "status=$?" >> $S/tool-eperm.out
sleepy_pmu read > $S/tool-read-none.out 2>&1; echo "status=$?" >> $S/tool-read-none.out
su user -s /bin/sh -c 'sleepy_pmu read' > $S/tool-read-eperm.out 2>&1
echo "status=$?" >> $S/tool-read-eperm.out
EOF

# Counter reads: CPU 1 (busy) from CPU 0, and the caller's own CPU.
scenario reads <<'EOF'
sleepy_pmu config --source software --threshold 20000000 > /dev/null || exit 12
pmu_check busy --seconds 3 --cpu 1 --no-register > /dev/null &
pmu_check monotonic --cpu 1 --threshold 20000000 --seconds 2 > $S/mono.json 2>&1
sleepy_pmu read > $S/read.out 2>&1
sleepy_pmu read --cpu 1 --counter 0 > $S/read1.out 2>&1
wait
EOF

# A storm on both CPUs: a registered spinner on each, an overflow asked for
# every 100 us of CPU time, and counter reads across CPUs meanwhile. The
# registrations are listed once both are there; the spinners spin until
# the list has been read (then 10 s at least in all), so that a shell the
# emulator starves still finds them (a fixed sleep before the list once
# came after the release storm's end, 70e3ad2).
scenario storm <<'EOF'
sleepy_pmu config --source software --threshold 100000 > /dev/null || exit 13
sleepy_pmu stats > $S/storm-before.out 2>&1
rm -f /tmp/storm-listed
pmu_check busy --seconds 10 --until /tmp/storm-listed --cpu 0 > $S/storm0.json &
pmu_check busy --seconds 10 --until /tmp/storm-listed --cpu 1 > $S/storm1.json &
pmu_check monotonic --cpu 1 --threshold 100000 --seconds 8 > $S/storm-mono.json 2>&1 &
registered 2; sleepy_pmu list > $S/storm-list.out 2>&1
touch /tmp/storm-listed
wait
sleepy_pmu stats > $S/storm-after.out 2>&1
EOF

# A registered process that execs: the new program (its handlers reset)
# is not registered, so no overflow signal kills it.
scenario exec <<'EOF'
pmu_check busy --seconds 0.5 -- sh -c "sleepy_pmu list > $S/exec-list.out
    i=0; while [ \$i -lt 30000 ]; do i=\$((i+1)); done; echo survived \$\$" \
    > $S/exec.out 2>&1; echo "status=$?" >> $S/exec.out
EOF

# The software source at its shortest period on both CPUs, a registered
# spinner on each, with max_rate at its lowest (HZ: one overflow interrupt
# a tick): each CPU is held to it, and a shell command still answers. (The
# command's time is guest time, from /proc/uptime; the spinners run long
# enough to cover it.) At the default cap this guest's CPUs take fewer
# interrupts than the cap (the emulated timer comes late); see the test.
scenario throttle <<'EOF'
cat /sys/module/sleepy_pmu/parameters/max_rate > $S/max-rate.out
echo 1000 > /sys/module/sleepy_pmu/parameters/max_rate || exit 21
sleepy_pmu config --source software --threshold 10000 > /dev/null || exit 18
sleepy_pmu stats > $S/throttle-before.out 2>&1
read u0 rest < /proc/uptime
pmu_check busy --seconds 4 --cpu 0 > $S/throttle0.json &
pmu_check busy --seconds 4 --cpu 1 > $S/throttle1.json &
registered 2
read t0 rest < /proc/uptime
ls / > /dev/null
read t1 rest < /proc/uptime
echo "$t0 $t1" > $S/throttle-answer.out
wait
read u1 rest < /proc/uptime
echo "$u0 $u1" > $S/throttle-window.out
sleepy_pmu stats > $S/throttle-after.out 2>&1
sleepy_pmu config --source software --threshold 1000000 > /dev/null || exit 19
echo 25000 > /sys/module/sleepy_pmu/parameters/max_rate || exit 22
echo 100 > /sys/module/sleepy_pmu/parameters/max_rate 2> $S/max-rate-low.out
echo "status=$?" >> $S/max-rate-low.out
EOF

# The device as a process in a new pid namespace reads it: only the
# registrations of that namespace, by the pids it gives them; and as the
# outer namespace reads it meanwhile: both, by their outer pids. The outer
# process is a registered sleeper, there until it is killed; the outer
# list is read once the inner one has shown the inner spinner. Each list
# is read until it shows what it should, 30 s at most. The inner spinner
# spins a second and then until the outer list has been read: a spinner
# of a fixed length could end before the outer shell got to read (with
# 3 s it once did, in CI, leaving one row).
scenario pidns <<'EOF'
rm -f /tmp/ns-listed /tmp/ns-read
pmu_check busy --sleep --seconds 300 --cpu 1 > /dev/null &
outer=$!
echo "$outer" > $S/ns-outer-pid.out
registered 1
unshare -p -f --mount-proc sh -c '
    pmu_check busy --seconds 1 --until /tmp/ns-read > /tmp/ns-inner.json &
    echo "$!" > /tmp/ns-pid.out
    for i in $(seq 300); do
        sleepy_pmu list > /tmp/ns-list.out 2>&1
        [ $(wc -l < /tmp/ns-list.out) -gt 1 ] && break
        sleep 0.1
    done
    touch /tmp/ns-listed
    wait' &
ns=$!
for i in $(seq 300); do [ -e /tmp/ns-listed ] && break; sleep 0.1; done
for i in $(seq 300); do
    sleepy_pmu list > $S/ns-outer-list.out 2>&1
    [ $(wc -l < $S/ns-outer-list.out) -gt 2 ] && break
    sleep 0.1
done
touch /tmp/ns-read
wait $ns || exit 20
kill $outer
wait $outer
cp /tmp/ns-inner.json /tmp/ns-list.out /tmp/ns-pid.out $S/
EOF

# CPU hotplug while a counter runs: CPU 1 goes down and comes back, and
# counts again.
scenario hotplug <<'EOF'
sleepy_pmu config --source software --threshold 1000000 > /dev/null || exit 15
echo 0 > /sys/devices/system/cpu/cpu1/online || exit 16
sleepy_pmu read --cpu 1 > $S/hp-offline.out 2>&1; echo "status=$?" >> $S/hp-offline.out
pmu_check busy --seconds 0.5 > $S/hp-alone.json
echo 1 > /sys/devices/system/cpu/cpu1/online || exit 17
pmu_check busy --seconds 1.5 --cpu 1 > $S/hp-back.json
EOF

# rmmod while the device is open: refused. The spinner holds the device
# open until the shell has tried: when QEMU serves the shell's vCPU
# little, a second of the shell's guest time can take several (the
# release 2-vCPU storm's docstring says more), and a spinner of a fixed
# 4 s once ended in CI before the starved shell saw it register.
scenario rmmod-open <<'EOF'
sleepy_pmu config --source software --threshold 1000000 > /dev/null || exit 14
rm -f /tmp/rmmod-open-done
pmu_check busy --seconds 1 --until /tmp/rmmod-open-done --cpu 1 \
  > $S/open.json &
registered 1
rmmod sleepy_pmu > $S/rmmod-open.out 2>&1; echo "status=$?" >> $S/rmmod-open.out
touch /tmp/rmmod-open-done
wait
EOF
# rmmod while counters run and a registered process spins (its file
# closed): the module stops the counters and goes; the process lives on,
# and spins 2 s more once rmmod is done, to show that no signal comes
# then. (A spinner of a fixed length, 8 s, once ended in CI before the
# starved shell reached rmmod.)
scenario rmmod-run <<'EOF'
rm -f /tmp/rmmod-done
pmu_check busy --seconds 1 --until /tmp/rmmod-done --after 2 --cpu 1 \
  --close-fd > $S/closed.json &
registered 1; sleep 1
rmmod sleepy_pmu > $S/rmmod-run.out 2>&1; echo "status=$?" >> $S/rmmod-run.out
touch /tmp/rmmod-done
test -e /dev/sleepy_pmu && echo "device-still-there" >> $S/rmmod-run.out
wait
EOF
scenario remod <<'EOF'
modprobe sleepy_pmu > $S/remod.out 2>&1; echo "status=$?" >> $S/remod.out
sleepy_pmu list >> $S/remod.out 2>&1
sleepy_pmu stats >> $S/remod.out 2>&1
rmmod sleepy_pmu >> $S/remod.out 2>&1; echo "status=$?" >> $S/remod.out
EOF

# Lockdown for confidentiality refuses sampling and the counters, as it
# refuses perf. It cannot be undone: the boot's last scenario.
scenario lockdown <<'EOF'
modprobe sleepy_pmu || exit 10
sleepy_pmu config --source software --threshold 1000000 > /dev/null || exit 11
mount -t securityfs securityfs /sys/kernel/security || exit 12
cat /sys/kernel/security/lockdown > $S/lockdown.out
echo confidentiality > /sys/kernel/security/lockdown || exit 13
cat /sys/kernel/security/lockdown >> $S/lockdown.out
sample_start -o /tmp/l.samples >> $S/lockdown.out 2>&1
echo "status=$?" >> $S/lockdown.out
sleepy_pmu read >> $S/lockdown.out 2>&1; echo "status=$?" >> $S/lockdown.out
sleepy_pmu config --source software --threshold 2000000 >> $S/lockdown.out 2>&1
echo "status=$?" >> $S/lockdown.out
EOF
"""


SCENARIOS = {"debug-1cpu": SCRIPT_1CPU, "release-1cpu-a": SCRIPT_RELEASE,
             "release-2cpu": SCRIPT_RELEASE_2CPU, "debug-2cpu-b": SCRIPT_2CPU}
one_cpu = boot_fixture("debug-1cpu")
release = boot_fixture("release-1cpu-a")
release_two = boot_fixture("release-2cpu")
two_cpus = boot_fixture("debug-2cpu-b")
# (share, kernel): the rate scenarios' results on each kernel.
rates = boot_params_fixture({"release": "release-1cpu-a",
                             "debug": "debug-1cpu"})
# (share, boot): the boots that unload the module at their end.
unloaded = boot_params_fixture({"debug-1cpu": "debug-1cpu",
                                "release-1cpu": "release-1cpu-a",
                                "release-2cpu": "release-2cpu"})


def read(share, name):
    return (share / name).read_text()


def load(share, name):
    return json.loads(read(share, name))


def test_device_and_help(two_cpus):
    scenario_ok(two_cpus, "setup", "device")
    assert "crw-rw-rw-" in read(two_cpus, "dev.out")
    for name in ("help.out", "example-help.out"):
        assert "usage:" in read(two_cpus, name)


def test_error_cases(two_cpus):
    scenario_ok(two_cpus, "setup", "errors")
    rows = [json.loads(line)
            for line in read(two_cpus, "errors.jsonl").splitlines()]
    assert not read(two_cpus, "errors.err")
    wrong = [r for r in rows if r["want"] != r["got"]]
    assert not wrong
    cases = {r["case"] for r in rows}
    # Each error the issue lists is among them.
    for case in ("counter out of range", "unknown source", "unknown flag",
                 "zero threshold", "read a CPU that is not online",
                 "register bad pointer", "configure bad pointer",
                 "read bad pointer", "unprivileged configure",
                 "unprivileged read, not registered",
                 "unprivileged read, registered",
                 "unprivileged read, perf_event_paranoid 0",
                 "register beyond the per-user limit",
                 "unprivileged reader does not see root's registration",
                 "unprivileged reader sees its own user's registrations",
                 "unprivileged unregister all", "unprivileged register",
                 "hardware source without a PMU", "register beyond capacity",
                 "dead children are dropped", "read after stop"):
        assert case in cases


def test_hardware_source_refuses_without_pmu(two_cpus):
    scenario_ok(two_cpus, "setup", "hw")
    out = read(two_cpus, "hw.out")
    assert "status=1" in out
    assert "no usable hardware event source" in out
    assert out.count("\n") == 2     # one line of error, one of status


def test_tool_errors(two_cpus):
    scenario_ok(two_cpus, "setup", "tool-errors")
    zero = read(two_cpus, "tool-zero.out")
    assert "status=2" in zero and "--threshold" in zero
    eperm = read(two_cpus, "tool-eperm.out")
    assert "status=1" in eperm and "CAP_PERFMON" in eperm
    none = read(two_cpus, "tool-read-none.out")
    assert "status=1" in none and "no such counter is running" in none
    assert read(two_cpus, "tool-read-eperm.out") == (
        "cpu  counter  value\n"
        "sleepy_pmu: read: cpu 0, counter 0: Operation not permitted "
        "(counts are CPU-wide: needs CAP_PERFMON, or "
        "kernel.perf_event_paranoid at 0 or below)\nstatus=1\n")


def expected(run, threshold):
    return run["cpu_ns"] / threshold


def clean(run):
    """Every PC inside the process's own text, every value sane."""
    assert run["outside_text"] == 0, run
    assert run["bad_counter"] == 0 and run["foreign"] == 0, run
    assert run["events"] == run["received"] and run["dropped"] == 0, run


def check_rate(run):
    """Signals match CPU time / threshold to 10%, on both kernels. (Before
    each registration preallocated its signal queue entries, the debug
    kernel allocated one per signal, and kmemleak's bookkeeping of those
    made RCU work that the counter counted too: its rates were 41% to 127%
    of this, Documentation/pmu.md.)"""
    want = expected(run, MS)
    assert abs(run["received"] - want) <= 0.10 * want, run
    clean(run)


def test_rate_and_pcs(rates):
    share, _ = rates
    scenario_ok(share, "setup", "rate")
    rate = load(share, "rate.json")
    assert expected(rate, MS) > 2500
    check_rate(rate)
    # The value at each overflow is at least the threshold.
    assert rate["min_value"] >= MS


def test_unregistered_neighbour_gets_none(rates):
    share, _ = rates
    scenario_ok(share, "setup", "beside")
    reg, unreg = load(share, "beside-reg.json"), load(share, "unreg.json")
    assert unreg["cpu_ns"] > 1.4e9
    assert unreg["received"] == 0 and unreg["foreign"] == 0
    check_rate(reg)


def test_signals_only_while_running(rates):
    share, _ = rates
    scenario_ok(share, "setup", "share")
    a, b = load(share, "share-a.json"), load(share, "share-b.json")
    for run in (a, b):
        check_rate(run)
    sleeper = load(share, "sleeper.json")
    assert sleeper["wall_ns"] > 2.9e9
    # The sleeper runs in short stretches; each holds a threshold crossing
    # with probability (its length / threshold), so its signals are a sum
    # of Bernoulli trials: their mean is its CPU time / threshold, and
    # their spread at most the root of that. Signals while it slept, or
    # none while it ran, would show as more, or fewer. That holds only if
    # its stretches fall anywhere in the counter's period: its naps are of
    # random length (pmu_check's nap()). With naps of one length its
    # wake-ups lock to the crossings, and it gets a signal in every cycle
    # of their drift or in none: with 10.000 to 10.055 ms naps in steps of
    # 5 us, 19 signals for a mean of 1.1 at 10.010 ms and none at the
    # others (release kernel, 2026-11-24); a CI run with 10 ms naps got 15.
    # Both bounds hold on both kernels.
    mean = expected(sleeper, MS)
    assert sleeper["received"] <= mean + 4 * mean ** 0.5 + 2, sleeper
    assert sleeper["received"] >= mean - 4 * mean ** 0.5 - 2, sleeper
    rows = read(share, "list.out").splitlines()
    assert rows[0].split() == ["pid", "signal", "name"]
    pids = {int(line.split()[0]) for line in rows[1:]}
    assert {a["pid"], b["pid"], sleeper["pid"]} <= pids


def test_unregister_takes_back_a_pending_signal(rates):
    """A process blocks its signal until an overflow signal is pending,
    unregisters, restores the default action and unblocks the signal:
    nothing is left pending, and it lives. (Before UNREGISTER took back
    pending signals, the unblock killed it.)"""
    share, _ = rates
    scenario_ok(share, "setup", "pending")
    assert read(share, "pending.out").splitlines() == [
        '{"pending": 1, "after": 0}', "alive", "status=0"]
    # The stats count the signal taken back.
    d = stats_delta(share, "pending-before.out", "pending-after.out")
    assert d["withdrawn"] == 1, d


def test_example_program(rates):
    share, _ = rates
    scenario_ok(share, "setup", "example")
    out = read(share, "example.out")
    assert "status=0" in out
    shares = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0].startswith("work_"):
            shares[parts[0]] = float(parts[2].rstrip("%"))
    # The workload's 3:2:1 split, within a few points.
    assert set(shares) == {"work_heavy", "work_medium", "work_light"}
    assert abs(shares["work_heavy"] - 50) < 8
    assert abs(shares["work_medium"] - 33.3) < 8
    assert abs(shares["work_light"] - 16.7) < 8


def test_counter_reads_monotonic_across_cpus(two_cpus):
    scenario_ok(two_cpus, "setup", "reads")
    mono = load(two_cpus, "mono.json")
    assert mono["reads"] > 100
    # 2 s of a busy CPU at 20 ms per overflow: up to 100 overflows seen
    # (fewer where TCG delivers a late timer's periods at once).
    assert 20 <= mono["overflows"] <= 110, mono
    assert mono["violations"] == 0, mono
    assert mono["self_wrong_cpu"] == 0 and mono["self_reads"] == mono["reads"]
    rows = read(two_cpus, "read.out").splitlines()
    assert rows[0].split() == ["cpu", "counter", "value"]
    assert {r.split()[0] for r in rows[1:]} == {"0", "1"}
    one = read(two_cpus, "read1.out").splitlines()
    assert len(one) == 2 and one[1].split()[:2] == ["1", "0"]


def stats_rows(share, name):
    """The stats (source, header, all, then each CPU) by row name: "all"
    and each CPU number; "all" checked against the sum of the CPU lines."""
    rows = [line.split() for line in read(share, name).splitlines()]
    head = rows[1]
    assert head[0] == "cpu" and rows[2][0] == "all"
    out = {("all" if r[0] == "all" else int(r[0])):
           {k: int(v) for k, v in zip(head[1:], r[1:])} for r in rows[2:]}
    cpus = [list(c.values()) for k, c in out.items() if k != "all"]
    assert cpus and [sum(c) for c in zip(*cpus)] == list(out["all"].values())
    return out


def stats_delta(share, before, after, per_cpu=False):
    """after - before: of the "all" row, or of every row if per_cpu."""
    a, b = stats_rows(share, before), stats_rows(share, after)
    d = {row: {k: b[row][k] - a[row][k] for k in a[row]} for row in a}
    return d if per_cpu else d["all"]


def accounted(d):
    """Every overflow ends as exactly one of these."""
    return d["signals"] + d["coalesced"] + d["unregistered"] + \
        d["send_failed"] + d["queue_full"] + d["throttled"]


def test_10k_signals_per_second_for_10_s(release):
    scenario_ok(release, "setup", "stress")
    run = load(release, "stress.json")
    clean(run)
    seconds = run["cpu_ns"] / 1e9
    assert seconds >= 10
    # One signal per 100 us of CPU time, within 10%.
    want = expected(run, 100_000)
    assert abs(run["received"] - want) <= 0.10 * want, run
    assert run["received"] / seconds >= 10_000 * 0.9, run
    d = stats_delta(release, "stress-before.out", "stress-after.out")
    assert d["send_failed"] == 0 and d["spurious"] == 0
    assert accounted(d) == d["overflows"]
    assert d["signals"] - d["withdrawn"] == run["received"], d
    # The handlers stayed within the time budget (max_time_percent).
    assert d["overtime"] == 0, d
    # The registration survived it: pmu_check's own unregister at the end
    # fails otherwise. After it, none is left.
    rows = read(release, "stress-list.out").splitlines()
    assert rows[0].split() == ["pid", "signal", "name"] and len(rows) == 1


def test_time_budget_holds_a_cpu(release):
    """With max_time_percent at 1, a CPU whose handlers take more than
    10 us of a tick is held for a tick: the holds are counted (overtime),
    the periods that pass in them are throttled, not signalled, and every
    overflow is still accounted for. (Without the budget the spinner
    would get a signal every 50 us of its CPU time: 20 a tick, under the
    rate cap's 25.)"""
    scenario_ok(release, "setup", "budget")
    assert read(release, "budget-default.out").split() == ["25"]
    run = load(release, "budget.json")
    clean(run)
    d = stats_delta(release, "budget-before.out", "budget-after.out")
    assert d["overtime"] > 0 and d["throttled"] > 0, d
    assert accounted(d) == d["overflows"], d
    assert d["signals"] - d["withdrawn"] == run["received"], d
    # Held, the spinner gets at most half its signals, and still some.
    assert 0 < run["received"] <= expected(run, 50_000) / 2, run
    bad = read(release, "budget-bad.out")
    assert bad.count("status=1") == 2 and "Invalid argument" in bad, bad


def test_10k_signals_per_second_on_two_cpus(release_two):
    """Both CPUs overflow every 100 us of CPU time for 10 s, at once.
    Together they deliver at least 10,000 signals per second, every
    overflow is accounted for, and both registrations survive.

    QEMU 7.2 runs the two vCPUs in turns on one host thread, and under
    -icount a vCPU runs until the next timer deadline unless it yields
    (fixed upstream in QEMU 8.1, commit 83ecdb18eb65). With a counter
    timer re-armed every 100 us on both CPUs, one vCPU is often left
    about 2% of the instructions: its spinner then has rarely returned to
    user mode by its next overflow, which is counted as coalesced
    (Documentation/pmu.md has the measurements). So each CPU's share of
    the signals is checked against the user-mode work its spinner got to
    do, not against the clock, and no shell command runs during the
    storm: in such a run, one in CI took longer than the whole storm to
    list the registrations.
    """
    scenario_ok(release_two, "setup", "storm")
    runs = [load(release_two, f"storm{cpu}.json") for cpu in (0, 1)]
    seconds = max(r["cpu_ns"] for r in runs) / 1e9
    for r in runs:
        clean(r)
        assert r["wrong_cpu"] == 0, r
        assert r["cpu_ns"] >= 10e9, r
        # Both CPUs signal throughout, not one alone: at least one signal
        # for every two spins of user-mode work. A spin takes about one
        # 100 us period when QEMU serves both vCPUs alike (1.35 to 1.85
        # signals a spin were seen), and a starved vCPU's spinner gets
        # more signals a spin, not fewer (3.2 for 531 spins); a CPU whose
        # signals stopped gets none for thousands of spins.
        assert r["spins"] > 0 and r["received"] >= r["spins"] / 2, r
    total = sum(r["received"] for r in runs)
    assert total / seconds >= 10_000, (total, seconds)
    d = stats_delta(release_two, "storm-before.out", "storm-after.out",
                    per_cpu=True)
    for cpu, r in enumerate(runs):
        # The spinner's counter overflowed once per 100 us of its CPU time,
        # each overflow signalled or coalesced into a pending signal. (The
        # CPU's other overflows, those of other tasks, are "unregistered".)
        mine = d[cpu]["signals"] + d[cpu]["coalesced"]
        want = r["cpu_ns"] / 100_000
        assert abs(mine - want) <= 0.10 * want, (cpu, d[cpu], r)
    d = d["all"]
    assert d["send_failed"] == 0 and d["spurious"] == 0
    assert accounted(d) == d["overflows"]
    assert d["signals"] - d["withdrawn"] == total, d
    # Both registrations lasted to the end (pmu_check's own unregister
    # fails otherwise, and it prints nothing), and none is left after.
    assert len(read(release_two, "after-list.out").splitlines()) == 1


def test_storm_under_lockdep_and_kasan(one_cpu):
    scenario_ok(one_cpu, "setup", "idle", "dstorm")
    run = load(one_cpu, "dstorm.json")
    clean(run)
    assert run["received"] > 1000
    d = stats_delta(one_cpu, "dstorm-before.out", "dstorm-after.out")
    assert d["send_failed"] == 0
    assert accounted(d) == d["overflows"]
    assert d["signals"] - d["withdrawn"] == run["received"], d


def test_cost_benchmark_paths(release):
    """bench/pmu_cost.c: both signal paths deliver at the asked period."""
    scenario_ok(release, "setup", "cost")
    rows = {r["mode"]: r for r in
            map(json.loads, read(release, "cost.jsonl").splitlines())}
    assert rows["none"]["signals"] == 0
    for mode in ("sleepy", "perf"):
        r = rows[mode]
        want = r["self_ns"] / r["period_ns"]
        assert want > 50
        assert abs(r["signals"] - want) <= 0.10 * want + 2, r
        assert r["self_ns"] > rows["none"]["self_ns"]


def test_cost_benchmark_floor(release):
    """bench/pmu_cost.c's floor modes: every tgkill() delivered, and a
    signal costs more than a bare system call."""
    scenario_ok(release, "floor")
    rows = {r["mode"]: r for r in
            map(json.loads, read(release, "floor.jsonl").splitlines())}
    assert rows["syscall"]["signals"] == 0
    for mode in ("selfsignal", "queued"):
        assert rows[mode]["signals"] == rows[mode]["count"] == 20000
    syscall = rows["syscall"]["self_ns"]
    assert rows["selfsignal"]["self_ns"] > 2 * syscall
    q = rows["queued"]
    # Queueing is a tgkill() each; delivering is a frame and a sigreturn.
    assert q["queue_ns"] > syscall and q["deliver_ns"] > syscall


def test_storm_on_two_cpus(two_cpus):
    """No hang, no registration lost, no splat (the boot checks that), and
    every overflow accounted for, with both CPUs interrupting at once."""
    scenario_ok(two_cpus, "setup", "storm")
    runs = [load(two_cpus, "storm0.json"), load(two_cpus, "storm1.json")]
    for r in runs:
        clean(r)
        assert r["wrong_cpu"] == 0 and r["received"] > 0
    # Both spinners stayed registered (pmu_check fails if its unregister
    # finds no registration) and were listed halfway.
    rows = read(two_cpus, "storm-list.out").splitlines()[1:]
    assert {r["pid"] for r in runs} <= {int(x.split()[0]) for x in rows}
    d = stats_delta(two_cpus, "storm-before.out", "storm-after.out")
    assert d["send_failed"] == 0
    assert accounted(d) == d["overflows"]
    assert d["signals"] - d["withdrawn"] == \
        sum(r["received"] for r in runs), d
    mono = load(two_cpus, "storm-mono.json")
    assert mono["violations"] == 0 and mono["reads"] > 10, mono


def test_rate_cap_keeps_the_shell_answering(two_cpus):
    """Both CPUs at the software source's shortest period (10 us), a
    registered spinner on each, max_rate at its lowest (HZ, one overflow
    interrupt a tick): each CPU takes at most two overflow interrupts a
    tick (the one allowed, and the one past it that starts a hold of a
    tick), the periods past the cap are counted as throttled, every
    overflow is still accounted for, and a shell command answers within a
    few seconds of guest time.

    At the default cap (25,000 a second) this guest's CPU 0 took 3,323 to
    3,475 overflow interrupts a second at 10 us, CPU 1 1,930 to 2,009
    (debug kernel, 2026-11-25, Documentation/pmu.md): the emulated timer
    comes late, and the other periods end as missed. CPU 0's rate is above
    the bound checked here (2,200 a second), so the bound fails without
    the cap. Under -icount one vCPU can be starved (QEMU 7.2), and a
    starved CPU may take too few interrupts to be throttled: so throttling
    is required of the two together, the bound of each."""
    scenario_ok(two_cpus, "setup", "throttle")
    assert read(two_cpus, "max-rate.out").split() == ["25000"]
    t0, t1 = map(float, read(two_cpus, "throttle-answer.out").split())
    assert t1 - t0 < 3.0, (t0, t1)
    for cpu in (0, 1):
        r = load(two_cpus, f"throttle{cpu}.json")
        clean(r)
        assert r["wrong_cpu"] == 0 and r["received"] > 0, r
    u0, u1 = map(float, read(two_cpus, "throttle-window.out").split())
    d = stats_delta(two_cpus, "throttle-before.out", "throttle-after.out",
                    per_cpu=True)
    for cpu in (0, 1):
        # Two a tick of the window (jiffies may run 10% apart from the
        # clock under icount), and a few for the shell around it.
        assert d[cpu]["interrupts"] <= 2 * 1000 * (u1 - u0) * 1.1 + 20, \
            (cpu, d[cpu], u1 - u0)
    assert d["all"]["throttled"] > 0, d["all"]
    assert accounted(d["all"]) == d["all"]["overflows"], d["all"]
    assert d["all"]["send_failed"] == 0 and d["all"]["queue_full"] == 0
    low = read(two_cpus, "max-rate-low.out")
    assert "status=1" in low and "Invalid argument" in low, low


def test_device_list_in_a_pid_namespace(two_cpus):
    """A reader in a new pid namespace sees the registrations made there,
    by the pids the namespace gives them, and not the others; a reader
    outside sees both, by its own pids."""
    scenario_ok(two_cpus, "setup", "pidns")
    inner = load(two_cpus, "ns-inner.json")
    outer = int(read(two_cpus, "ns-outer-pid.out"))
    ns_pid = int(read(two_cpus, "ns-pid.out"))
    assert inner["pid"] == ns_pid and inner["received"] > 0, inner
    rows = read(two_cpus, "ns-list.out").splitlines()
    assert rows[0].split() == ["pid", "signal", "name"]
    assert [int(r.split()[0]) for r in rows[1:]] == [ns_pid], rows
    outer_rows = read(two_cpus, "ns-outer-list.out").splitlines()[1:]
    pids = [int(r.split()[0]) for r in outer_rows]
    assert len(pids) == 2 and outer in pids, outer_rows
    # The inner process, by its pid out here.
    assert ns_pid not in pids, outer_rows


def test_idle_cpu_takes_no_timer_interrupts(one_cpu):
    """With a 200 us counter running, an idle second takes the local timer
    interrupts it takes with none (the 1000 Hz tick and whatever wakes),
    plus at most one per overflow that the CPU time of what did wake
    (kthreads, under the debug kernel) made: not one every 200 us."""
    scenario_ok(one_cpu, "setup", "idle")
    def delta(name):
        before, after = (int(read(one_cpu, f"{name}-{when}.out").split()[1])
                         for when in ("before", "after"))
        return after - before
    base, counting = delta("idle0"), delta("idle")
    d = stats_delta(one_cpu, "idle-stats-before.out", "idle-stats-after.out")
    assert base >= 900, base
    assert counting <= base + d["overflows"] + 150, (base, counting, d)
    # Without the stop, the timer alone would add 5,000.
    assert counting <= base + 2500, (base, counting, d)


def test_exec_drops_the_registration(two_cpus):
    scenario_ok(two_cpus, "setup", "exec")
    out = read(two_cpus, "exec.out").splitlines()
    run = json.loads(out[0])
    assert run["received"] > 0, run
    # The same process, now sh: not listed, not killed, exited cleanly.
    assert out[1:] == [f"survived {run['pid']}", "status=0"], out
    rows = read(two_cpus, "exec-list.out").splitlines()
    assert rows[0].split() == ["pid", "signal", "name"]
    assert str(run["pid"]) not in [r.split()[0] for r in rows[1:]]


def test_cpu_hotplug_while_counting(two_cpus):
    """CPU 1 offline: not readable; back online: it counts again."""
    scenario_ok(two_cpus, "setup", "hotplug")
    off = read(two_cpus, "hp-offline.out")
    assert "status=1" in off and "not online" in off.lower(), off
    alone = load(two_cpus, "hp-alone.json")
    assert alone["received"] > 0
    back = load(two_cpus, "hp-back.json")
    clean(back)
    assert back["wrong_cpu"] == 0
    # Two vCPUs in TCG deliver timers late (several periods at once), so
    # this is a bound, not a rate.
    assert back["received"] >= 0.3 * expected(back, MS), back


def test_rmmod(two_cpus):
    scenario_ok(two_cpus, "setup", "rmmod-open", "rmmod-run", "remod")
    assert "status=1" in read(two_cpus, "rmmod-open.out")
    opened = load(two_cpus, "open.json")
    assert opened["received"] > 0
    run = read(two_cpus, "rmmod-run.out")
    assert "status=0" in run and "device-still-there" not in run
    closed = load(two_cpus, "closed.json")
    # Signals came until the module went, then none in 2 s of CPU time
    # (at 1 kHz, some 2000 would have come).
    assert closed["received_until"] > 0, closed
    assert closed["received"] == closed["received_until"], closed
    assert closed["cpu_ns"] >= 3e9, closed
    remod = read(two_cpus, "remod.out").splitlines()
    assert remod[0] == "status=0"
    assert remod[1].split() == ["pid", "signal", "name"]
    assert remod[2] == "source none"
    assert remod[-1] == "status=0"


def test_module_unloads_at_the_end(unloaded):
    """The counters stop and rmmod works after the rates and the storms."""
    scenario_ok(unloaded[0], "unload")


def test_lockdown_refuses_sampling_and_counters(two_cpus):
    """Under lockdown=confidentiality (LOCKDOWN_PERF), sample_start and
    the device's CONFIGURE and READ_COUNTER are refused, as perf is."""
    scenario_ok(two_cpus, "lockdown")
    out = read(two_cpus, "lockdown.out").splitlines()
    assert out[0] == "[none] integrity confidentiality"
    assert out[1] == "none integrity [confidentiality]"
    why = ("the kernel is locked down for confidentiality, which refuses "
           "it as it refuses perf")
    assert out[2:] == [
        f"sample_start: /tmp/l.samples: Operation not permitted ({why})",
        "status=1",
        "cpu  counter  value",
        f"sleepy_pmu: read: cpu 0, counter 0: Operation not permitted ({why})",
        "status=1",
        f"sleepy_pmu: config: Operation not permitted ({why})",
        "status=1"], out
