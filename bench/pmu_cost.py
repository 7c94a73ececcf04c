#!/usr/bin/env python3
"""The cost of one overflow signal: sleepy_pmu against perf.

./build.sh bench pmu [--runs N] [--iterations N] [--periods NS,NS]

One VM (release kernel, 1 vCPU, -icount shift=0: guest time is the
instruction count, 1 ns per instruction, so a run repeats to the
nanosecond and host load does not count) runs bench/pmu_cost.c: a
self-timed busy loop with no signals, with sleepy_pmu's software counter
signalling it every PERIOD of CPU time, and with a perf_event_open()
cpu-clock event signalling it (O_ASYNC/F_SETSIG) at the same period. The
cost per signal is the loop's extra time over the baseline divided by the
signals it received. Target: sleepy at most half of perf's, at 1 ms and
100 us. The same boot also times COUNT getppid() calls and COUNT tgkill()
calls that each deliver a signal to the caller: the difference is the floor
of one signal (queue, frame, handler, sigreturn) with no interrupt at all.
Results go to results/pmu_cost.{json,csv}.
"""
import argparse
import csv
import json
import statistics
import sys
from pathlib import Path

from icount_vm import icount_vm

TOP = Path(__file__).resolve().parent.parent
RESULTS = TOP / "results"
MODES = ("none", "sleepy", "perf", "sleepy-nosignal", "perf-nosignal")
FLOOR_MODES = ("syscall", "selfsignal", "queued")
FLOOR_COUNT = 200_000


def guest_script(periods, runs, iterations):
    lines = ["S=/mnt/share", "modprobe sleepy_pmu || exit 10"]
    for period in periods:
        for run in range(runs):
            for mode in MODES:
                lines.append(f"pmu_cost {mode} {period} {iterations} "
                             f">> $S/results.jsonl || exit 11")
    for run in range(runs):
        for mode in FLOOR_MODES:
            lines.append(f"pmu_cost {mode} {FLOOR_COUNT} "
                         f">> $S/floor.jsonl || exit 13")
    lines += ["rmmod sleepy_pmu || exit 12", "echo done > $S/done"]
    return "\n".join(lines) + "\n"


def boot(script, timeout):
    with icount_vm(script, timeout, "pmu_cost") as share:
        return [[json.loads(x) for x in
                 (share / name).read_text().splitlines()]
                for name in ("results.jsonl", "floor.jsonl")]


def summarize(rows, periods):
    out = []
    for period in periods:
        med = {}
        sig = {}
        for mode in MODES:
            runs = [r for r in rows
                    if r["mode"] == mode and r["period_ns"] == period]
            med[mode] = statistics.median(r["self_ns"] for r in runs)
            sig[mode] = statistics.median(r["signals"] for r in runs)
        for mode in MODES[1:]:
            extra = med[mode] - med["none"]
            out.append({
                "period_ns": period, "mode": mode,
                "baseline_s": med["none"] / 1e9, "self_s": med[mode] / 1e9,
                "signals": sig[mode], "extra_ms": extra / 1e6,
                "overhead_pct": 100.0 * extra / med["none"],
                "us_per_signal": extra / sig[mode] / 1e3 if sig[mode] else None,
            })
    return out


def summarize_floor(rows):
    """Median ns per call of each floor mode, and the signal's share."""
    def med(mode, key):
        return statistics.median(r[key] / r["count"] for r in rows
                                 if r["mode"] == mode)
    syscall, selfsignal = med("syscall", "self_ns"), med("selfsignal", "self_ns")
    return {"syscall_ns": syscall, "selfsignal_ns": selfsignal,
            "signal_floor_ns": selfsignal - syscall,
            "queue_ns": med("queued", "queue_ns"),
            "deliver_ns": med("queued", "deliver_ns")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--iterations", type=int, default=200_000_000)
    ap.add_argument("--periods", default="1000000,100000",
                    help="periods in ns, comma-separated")
    ap.add_argument("--timeout", type=int, default=1800)
    args = ap.parse_args()
    periods = [int(p) for p in args.periods.split(",")]
    rows, floor_rows = boot(guest_script(periods, args.runs,
                                         args.iterations), args.timeout)
    table = summarize(rows, periods)
    floor = summarize_floor(floor_rows)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "pmu_cost.json").write_text(json.dumps(
        {"runs": rows, "summary": table, "floor_runs": floor_rows,
         "floor": floor}, indent=2) + "\n")
    with open(RESULTS / "pmu_cost.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(table[0]))
        w.writeheader()
        w.writerows(table)

    print("overflow-signal cost, 1 vCPU, -icount shift=0 "
          f"({args.iterations} iterations, median of {args.runs})")
    print(f"{'period':>8} {'source':<15} {'self s':>9} {'signals':>8} "
          f"{'extra ms':>9} {'overhead':>9} {'us/signal':>10}")
    for r in table:
        per = r["us_per_signal"]
        print(f"{r['period_ns'] / 1e3:>6.0f}us {r['mode']:<15} "
              f"{r['self_s']:>9.4f} {r['signals']:>8.0f} "
              f"{r['extra_ms']:>9.2f} {r['overhead_pct']:>8.3f}% "
              + (f"{per:>10.3f}" if per is not None else f"{'-':>10}"))
    print(f"the floor of a signal, with no interrupt ({FLOOR_COUNT} calls): "
          f"getppid() {floor['syscall_ns'] / 1e3:.3f} us, tgkill() to self "
          f"with delivery {floor['selfsignal_ns'] / 1e3:.3f} us; the signal "
          f"alone {floor['signal_floor_ns'] / 1e3:.3f} us")
    print(f"  queued while blocked, then delivered in batches: queueing "
          f"{floor['queue_ns'] / 1e3:.3f} us per tgkill(), delivering "
          f"{floor['deliver_ns'] / 1e3:.3f} us per signal (dequeue, frame, "
          f"handler, sigreturn)")
    failed = False
    for period in periods:
        s, p = [r for r in table if r["period_ns"] == period and
                r["mode"] in ("sleepy", "perf")]
        ratio = s["us_per_signal"] / p["us_per_signal"]
        ok = ratio <= 0.5
        failed |= not ok
        print(f"target at {period / 1e3:.0f} us: sleepy/perf per signal = "
              f"{ratio:.2f} (<= 0.50): {'met' if ok else 'MISSED'}; half of "
              f"perf is {p['us_per_signal'] / 2:.3f} us, delivering a queued "
              f"signal alone {floor['deliver_ns'] / 1e3:.3f} us")
    print(f"results: {RESULTS / 'pmu_cost.json'}, {RESULTS / 'pmu_cost.csv'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
