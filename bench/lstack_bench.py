#!/usr/bin/env python3
"""What logical stacks cost: a push and a pop, the tick, a context switch.

./build.sh bench lstack [--runs N] [--seconds S] [--round-trips N]

One VM (release kernel, 1 vCPU, -icount shift=0: guest time is the
instruction count, 1 ns per instruction, so a run repeats to the
nanosecond and host load does not count) runs bench/lstack_cost.c:

- push/pop: N SLEEPY_LSTACK_PUSH/POP pairs against the same loop without
  them: the instructions of a pair. Target: at most 10.
- the tick: a registered thread spins with a logical stack of depth D
  (0, 8 and 16) in a session with --lstack, and the same spin in a session
  without it; the tick's own time per call (the session's irq_ns_total /
  irq_calls, which the tick measures with the TSC: instructions here) of
  the two. Target at depth 8: at most 50 ns more per sample.
- a context switch: two threads pinned to one CPU play ping-pong over
  pipes (two blocking reads, so two switches, a round trip: each switch
  is one thread's block and the other's wake), with no session,
  a session without --lstack, a session with --lstack whose threads have
  not registered, and one whose threads have: what the scheduler's hooks
  add to a switch.

Results go to results/lstack_cost.{json,csv}; the figures are printed.
"""
import argparse
import json
import statistics
from pathlib import Path

from icount_vm import icount_vm, write_results

TOP = Path(__file__).resolve().parent.parent
DEPTHS = (0, 8, 16)
# name: sample_start's options (None: no session), lstack_cost's
SWITCH_MODES = {
    "no-session": (None, ""),
    "session": ("", ""),
    "lstack-unregistered": ("--lstack", "--unregistered"),
    "lstack": ("--lstack", ""),
}


def guest_script(runs, seconds, trips, pairs):
    lines = ["S=/mnt/share",
             # Translate the code once before the measured runs (TCG).
             "lstack_cost --pairs 100000 --round-trips 1000 > /dev/null"]
    for run in range(runs):
        lines.append(f"lstack_cost --pairs {pairs} --round-trips 0 "
                     f"> $S/pairs.{run} || exit 10")
        for depth in DEPTHS:
            for opts in ("", "--lstack"):
                tag = f"tick.{depth}.{'lstack' if opts else 'plain'}.{run}"
                lines += [
                    f"sample_start -o /tmp/{tag}.slp {opts} || exit 11",
                    f"lstack_cost --pairs 0 --round-trips 0 --spin-depth "
                    f"{depth} --seconds {seconds} > $S/{tag}.out || exit 12",
                    f"sample_stop --json > $S/{tag}.json || exit 13",
                    f"rm -f /tmp/{tag}.slp"]
        for mode, (start, cost) in SWITCH_MODES.items():
            tag = f"switch.{mode}.{run}"
            run_cost = (f"lstack_cost --pairs 0 --round-trips {trips} "
                        f"--cpu 0 {cost} > $S/{tag}.out || exit 14")
            if start is None:
                lines.append(run_cost)
                continue
            lines += [f"sample_start -o /tmp/{tag}.slp {start} || exit 15",
                      run_cost,
                      f"sample_stop --json > $S/{tag}.json || exit 16",
                      f"rm -f /tmp/{tag}.slp"]
    lines.append("echo done > $S/done")
    return "\n".join(lines) + "\n"


def keyvals(path):
    out = {}
    for line in path.read_text().splitlines():
        key, _, value = line.partition(" ")
        try:
            out[key] = float(value)
        except ValueError:
            out[key] = value
    return out


def tick_ns(stats):
    """The tick's mean time per call in a session's statistics."""
    return stats["irq_ns_total"] / stats["irq_calls"]


def collect(share, runs):
    """The per-run figures: pairs, ticks by depth and session, switches."""
    rows = []
    for run in range(runs):
        row = {"run": run,
               "ns_per_pair": keyvals(share / f"pairs.{run}")["ns_per_pair"]}
        for depth in DEPTHS:
            for kind in ("plain", "lstack"):
                tag = f"tick.{depth}.{kind}.{run}"
                st = json.loads((share / f"{tag}.json").read_text())
                row[f"tick_{kind}_{depth}"] = tick_ns(st)
                row[f"lstack_samples_{kind}_{depth}"] = \
                    st.get("lstack_samples", 0)
        for mode in SWITCH_MODES:
            out = keyvals(share / f"switch.{mode}.{run}.out")
            row[f"trip_{mode}"] = out["ns_per_round_trip"]
            js = share / f"switch.{mode}.{run}.json"
            if js.exists():
                row[f"offcpu_{mode}"] = json.loads(
                    js.read_text()).get("offcpu_records", 0)
        rows.append(row)
    return rows


def summarize(rows):
    med = {k: statistics.median(r[k] for r in rows)
           for k in rows[0] if k != "run"}
    summary = {"ns_per_pair": med["ns_per_pair"]}
    for depth in DEPTHS:
        summary[f"tick_extra_ns_depth{depth}"] = (
            med[f"tick_lstack_{depth}"] - med[f"tick_plain_{depth}"])
    base = med["trip_no-session"]
    for mode in SWITCH_MODES:
        # Two switches a round trip: each thread blocks once.
        summary[f"switch_extra_ns_{mode}"] = (med[f"trip_{mode}"] - base) / 2
    return med, summary


def report(med, summary, args):
    print(f"logical stack costs, 1 vCPU, -icount shift=0 (1 ns = 1 "
          f"instruction), median of {args.runs}")
    print(f"  push + pop: {summary['ns_per_pair']:.2f} instructions "
          f"(target: at most 10)")
    for depth in DEPTHS:
        print(f"  tick at depth {depth:>2}: {med[f'tick_plain_{depth}']:.0f} "
              f"ns without --lstack, {med[f'tick_lstack_{depth}']:.0f} ns "
              f"with: {summary[f'tick_extra_ns_depth{depth}']:+.0f} ns a "
              f"sample" + (" (target: at most +50)" if depth == 8 else ""))
    print(f"  pipe ping-pong, 2 switches a round trip: "
          f"{med['trip_no-session']:.0f} ns a trip with no session")
    for mode in list(SWITCH_MODES)[1:]:
        print(f"    {mode:<20} {med[f'trip_{mode}']:>8.0f} ns a trip, "
              f"{summary[f'switch_extra_ns_{mode}']:+7.1f} ns a switch")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--round-trips", type=int, default=20000)
    ap.add_argument("--pairs", type=int, default=10_000_000)
    ap.add_argument("--timeout", type=int, default=1800)
    args = ap.parse_args()
    with icount_vm(guest_script(args.runs, args.seconds, args.round_trips,
                                args.pairs), args.timeout,
                   "lstack_bench") as share:
        rows = collect(share, args.runs)
    med, summary = summarize(rows)
    write_results("lstack_cost", rows, median=med, summary=summary)
    report(med, summary, args)


if __name__ == "__main__":
    main()
