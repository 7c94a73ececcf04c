#!/usr/bin/env python3
"""What system call latency histograms cost, and what they take on disk.

./build.sh bench latency [--runs N] [--calls N] [--seconds S]

One VM (release kernel, 1 vCPU, -icount shift=0: guest time is the
instruction count, 1 ns per instruction, so a run repeats to the
nanosecond and host load does not count; the peers' initramfs, for
strace) runs:

- cost: bench/latency_cost.c, a timed loop of getppid() calls (the fastest
  of 5 rounds), with no session, a session (which notes each call's number
  for the tick: two stores), a session with --latency, and under the peer
  a user would pick, strace -c (perf trace -s needs the kernel's system
  call tracepoints, which this kernel is built without: CONFIG_FTRACE
  would change every other figure). Target: --latency adds at most 40 ns
  a call. And a session with --latency whose appid pool is full
  (--max-appids 16, 5,000 execs of /bin/true before the loop), where the
  loop's process has no appid: target within 10 ns of a session with
  room.
- size: a system-call-heavy mix (two programs: nanosleeps, getppid()s,
  /dev/zero reads, pipe reads that find data or block) for S seconds in
  a session with --latency-interval 1; the bytes of its LAT_SEGMENT and
  LATENCY records per second of the session, and of its SYSCALL records.

Results go to results/latency_cost.{json,csv}; the figures are printed.
"""
import argparse
import statistics
import struct

from icount_vm import icount_vm, write_results

# name: the command that runs latency_cost (CALLS: its options)
MODES = {
    "no-session": "latency_cost CALLS",
    "session": "sample_start -o /tmp/s.slp -- latency_cost CALLS",
    "latency": "sample_start -o /tmp/s.slp --latency -- latency_cost CALLS",
    # The appid pool full (16 appids; 5,000 execs before the loop): the
    # loop's process has no appid, and its calls are counted as lost.
    "full-pool": "sample_start -o /tmp/s.slp --latency --max-appids 16 -- "
                 "sh -c 'i=0; while [ $i -lt 5000 ]; do /bin/true; "
                 "i=$((i + 1)); done; exec latency_cost CALLS'",
    "strace": "strace -c -o /tmp/strace.txt latency_cost CALLS",
}
REC_SYSCALL, REC_LATENCY, REC_LAT_SEGMENT = 8, 9, 10
HEADER_SIZE_OFFSET = 12     # struct sleepy_file_header.header_size


def guest_script(runs, calls, seconds):
    opts = f"--calls {calls}"
    lines = ["S=/mnt/share",
             # Translate the code once before the measured runs (TCG).
             "latency_cost --calls 1000 --rounds 1 > /dev/null",
             "latency_demo counts --sleeps 2 --getppid 10 --reads 2 "
             "> /dev/null"]
    # strace stops the program twice a call: a tenth of the calls will do.
    slow = f"--calls {max(calls // 10, 1000)}"
    for run in range(runs):
        for mode, cmd in MODES.items():
            cmd = cmd.replace("CALLS", slow if mode == "strace" else opts)
            lines.append(f"{cmd} > $S/{mode}.{run} 2> /dev/null || exit 10")
    sleeps = int(seconds * 1000 / 2.2)
    lines += [
        "sample_start -o /tmp/size.slp --latency-interval 1 -- sh -c '"
        f"latency_demo counts --sleeps {sleeps} --sleep-us 2000 "
        f"--getppid 200000 --reads 100 > /dev/null & "
        f"latency_demo pipe --fast {int(seconds * 400)} "
        f"--slow {int(seconds * 200)} > /dev/null; wait' 2> $S/size.stats "
        "|| exit 11",
        "cp /tmp/size.slp $S/ || exit 12",
        "echo done > $S/done"]
    return "\n".join(lines) + "\n"


def ns_per_call(path):
    for line in path.read_text().splitlines():
        key, _, value = line.partition(" ")
        if key == "ns_per_call":
            return float(value)
    raise SystemExit(f"latency_bench: no ns_per_call in {path}")


def record_bytes(path):
    """Bytes by record type of a session file, and its last segment's end
    (the session's length, ns)."""
    data = path.read_bytes()
    (hsize,) = struct.unpack_from("<I", data, HEADER_SIZE_OFFSET)
    off, by_type, end_ns = hsize, {}, 0
    while off + 4 <= len(data):
        rtype, size = struct.unpack_from("<HH", data, off)
        if size < 4:
            raise SystemExit(f"latency_bench: bad record at {off}")
        by_type[rtype] = by_type.get(rtype, 0) + size
        if rtype == REC_LAT_SEGMENT:
            (end_ns,) = struct.unpack_from("<Q", data, off + 16)
        off += size
    return by_type, end_ns


def collect(share, runs):
    rows = [{"run": run, **{f"ns_{m}": ns_per_call(share / f"{m}.{run}")
                            for m in MODES}} for run in range(runs)]
    by_type, end_ns = record_bytes(share / "size.slp")
    secs = end_ns / 1e9
    size = {
        "seconds": secs,
        "histogram_bytes": by_type.get(REC_LATENCY, 0) +
        by_type.get(REC_LAT_SEGMENT, 0),
        "syscall_record_bytes": by_type.get(REC_SYSCALL, 0),
        "file_bytes": (share / "size.slp").stat().st_size,
    }
    size["histogram_bytes_per_s"] = size["histogram_bytes"] / secs
    size["syscall_record_bytes_per_s"] = size["syscall_record_bytes"] / secs
    return rows, size


def report(med, size, runs):
    base = med["ns_no-session"]
    print(f"system call latency costs, 1 vCPU, -icount shift=0 (1 ns = 1 "
          f"instruction), getppid(), median of {runs}")
    print(f"  no session:              {base:8.1f} ns a call")
    targets = {"latency": " (target: at most +40)"}
    for mode in list(MODES)[1:]:
        print(f"  {mode:<24} {med[f'ns_{mode}']:8.1f} ns a call, "
              f"{med[f'ns_{mode}'] - base:+8.1f}{targets.get(mode, '')}")
    print(f"  --latency over a session without it: "
          f"{med['ns_latency'] - med['ns_session']:+.1f} ns a call")
    print(f"  --latency, the appid pool full, over one with room: "
          f"{med['ns_full-pool'] - med['ns_latency']:+.1f} ns a call "
          f"(target: within 10)")
    print(f"size, a system-call-heavy mix for {size['seconds']:.1f} s with "
          f"--latency-interval 1:")
    print(f"  histograms: {size['histogram_bytes_per_s'] / 1024:.2f} KiB/s, "
          f"SYSCALL records: {size['syscall_record_bytes_per_s'] / 1024:.2f} "
          f"KiB/s (the whole file: {size['file_bytes'] / 1024:.0f} KiB)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--calls", type=int, default=200000)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--timeout", type=int, default=1800)
    args = ap.parse_args()
    with icount_vm(guest_script(args.runs, args.calls, args.seconds),
                   args.timeout, "latency_bench", extra=("--perf",)) as share:
        rows, size = collect(share, args.runs)
    med = {k: statistics.median(r[k] for r in rows)
           for k in rows[0] if k != "run"}
    write_results("latency_cost", rows, median=med, size=size)
    report(med, size, args.runs)


if __name__ == "__main__":
    main()
