#!/usr/bin/env python3
"""sleepy_pmu's 2-vCPU storm, boot after boot: what each CPU counted.

./build.sh bench storms [--boots N] [--debug] [--max-time-percent P]
                        [--verbose]

Each boot (2 vCPUs, -icount: QEMU 7.2 serves them in turns on one host
thread) loads sleepy_pmu, sets the software source to an overflow every
100 us of CPU time, and runs a registered spinner pinned to each CPU for
10 s of its CPU time, the storm of tests/test_pmu.py. Per boot and CPU
it prints what the spinner saw (its CPU time, the time its loop took,
the CPU time it spent before the loop, starting up, unregistered, its
spins of user-mode work, the signals it received) and what the CPU's
handler counted
(overflows, signals, coalesced, unregistered, throttled, holds for the
time budget), and two checks:

- ratio: the CPU's overflows per 100 us of its spinner's CPU time. About
  1 when the CPU's time is counted once (other tasks' time adds a
  little); about 2 when it is counted twice (pmu.md).
- test: whether the storm test's bounds hold on this CPU: every overflow
  accounted for, and on the release kernel the spinner's signals and
  coalesced overflows within 10% of its CPU time / 100 us, at least a
  signal for every two spins; on the debug kernel, some signals.

And per boot: guest seconds the storm took, soft lockups in the log.
Results go to results/pmu_storms.{json,csv}.
"""
import argparse
import json
import sys

from icount_vm import icount_vm, write_results

PERIOD_NS = 100_000


def guest_script(percent):
    budget = ("echo %d > /sys/module/sleepy_pmu/parameters/max_time_percent"
              " || exit 1" % percent) if percent else ":"
    return f"""S=/mnt/share
modprobe sleepy_pmu || exit 1
{budget}
sleepy_pmu config --source software --threshold {PERIOD_NS} > /dev/null || exit 1
pmu_check busy --seconds 0.5 > /dev/null || exit 1
cut -d' ' -f1 /proc/uptime > $S/up-before
sleepy_pmu stats > $S/before
pmu_check busy --seconds 10 --cpu 0 > $S/storm0.json &
pmu_check busy --seconds 10 --cpu 1 > $S/storm1.json &
wait
sleepy_pmu stats > $S/after
cut -d' ' -f1 /proc/uptime > $S/up-after
dmesg | grep -c 'soft lockup' > $S/lockups
sleepy_pmu stop > /dev/null
dmesg | grep -e sleepy_pmu -e 'soft lockup' > $S/log
touch $S/done
"""


def stats(path):
    """sleepy_pmu stats: {cpu: {column: value}} for each CPU's row."""
    rows = [line.split() for line in path.read_text().splitlines()]
    head = rows[1][1:]
    return {int(r[0]): dict(zip(head, map(int, r[1:])))
            for r in rows[2:] if r[0] != "all"}


def test_ok(d, run, debug):
    """The storm test's bounds on one CPU: the release kernel's
    (test_10k_signals_per_second_on_two_cpus), or the debug kernel's
    (test_storm_on_two_cpus: signals, and every overflow accounted)."""
    exact = d["overflows"] == sum(d[k] for k in (
        "signals", "coalesced", "unregistered", "send_failed", "queue_full",
        "throttled"))
    if debug:
        return exact and run["received"] > 0
    want = run["cpu_ns"] / PERIOD_NS
    mine = d["signals"] + d["coalesced"]
    return exact and abs(mine - want) <= 0.10 * want and \
        run["spins"] > 0 and run["received"] >= run["spins"] / 2


def cpu_row(boot, cpu, run, before, after, seconds, lockups, debug):
    d = {k: after[cpu][k] - before[cpu][k] for k in after[cpu]}
    want = run["cpu_ns"] / PERIOD_NS
    ok = test_ok(d, run, debug)
    return {"boot": boot, "cpu": cpu, "cpu_s": run["cpu_ns"] / 1e9,
            "wall_s": round(run["wall_ns"] / 1e9, 2),
            "setup_s": round(run["setup_cpu_ns"] / 1e9, 2),
            "spins": run["spins"], "received": run["received"],
            "overflows": d["overflows"], "signals": d["signals"],
            "coalesced": d["coalesced"], "unregistered": d["unregistered"],
            "throttled": d["throttled"], "overtime": d.get("overtime", 0),
            "ratio": round(d["overflows"] / want, 3), "test": ok,
            "storm_s": seconds, "lockups": lockups}


def one_boot(boot, args):
    extra = ["--debug"] if args.debug else []
    with icount_vm(guest_script(args.max_time_percent), 1200,
                   "pmu-storms", extra=extra, smp=2) as share:
        before, after = stats(share / "before"), stats(share / "after")
        seconds = float((share / "up-after").read_text()) - \
            float((share / "up-before").read_text())
        lockups = int((share / "lockups").read_text())
        if args.verbose:
            sys.stdout.write((share / "log").read_text())
        return [cpu_row(boot, cpu,
                        json.loads((share / f"storm{cpu}.json").read_text()),
                        before, after, round(seconds, 1), lockups, args.debug)
                for cpu in (0, 1)]


COLUMNS = ("boot", "cpu", "cpu_s", "wall_s", "setup_s", "spins", "received",
           "overflows", "signals", "coalesced", "unregistered", "throttled",
           "overtime", "ratio", "test", "storm_s", "lockups")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boots", type=int, default=10,
                    help="boots in a row (default 10)")
    ap.add_argument("--debug", action="store_true",
                    help="the debug kernel (lockdep, KASAN, ...)")
    ap.add_argument("--max-time-percent", type=int, default=0,
                    help="set sleepy_pmu's max_time_percent (default: "
                    "the module's own)")
    ap.add_argument("--verbose", action="store_true",
                    help="print each boot's kernel log lines of sleepy_pmu")
    args = ap.parse_args()
    if args.boots < 1 or not 0 <= args.max_time_percent <= 100:
        sys.exit("pmu_storms: --boots must be at least 1 and "
                 "--max-time-percent 1 to 100")
    rows = []
    print(" ".join(COLUMNS), flush=True)
    for boot in range(args.boots):
        for r in one_boot(boot, args):
            rows.append(r)
            print(" ".join(str(r[c]) for c in COLUMNS), flush=True)
    failed = sum(not r["test"] for r in rows)
    doubled = sum(r["ratio"] > 1.5 for r in rows)
    print(f"{args.boots} boots: {failed} CPU storms outside the test's "
          f"bounds, {doubled} counted about twice (ratio > 1.5), "
          f"{sum(r['lockups'] for r in rows[::2])} soft lockups")
    write_results("pmu_storms", rows, boots=args.boots,
                  kernel="debug" if args.debug else "release",
                  max_time_percent=args.max_time_percent or None)


if __name__ == "__main__":
    main()
