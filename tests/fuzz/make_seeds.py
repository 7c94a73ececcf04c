"""Seed corpus for reader_fuzz: small valid session files, one per shape
the reader knows (written with tests/sleepyfile.py).

    /usr/bin/python3 tests/fuzz/make_seeds.py OUTDIR
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import sleepyfile as sf  # noqa: E402


READ, WRITE, NANOSLEEP, EXIT_GROUP = 0, 1, 35, 231
KTEXT = 0xffffffff81000000


def latency_seed():
    """Version 5's system calls (header flag SAMPLE_F_LATENCY): samples
    with a kernel context (a system call, an exception, a hard and a soft
    interrupt, a kernel thread; user and idle ones without), SYSCALL
    records whose windows hold some of them (one the task exited in, one
    a signal ended), two segments of LATENCY records (restarts only, one
    bucket, buckets 0 to 47 with several peaks), the latency statistics."""
    f = sf.SessionFile(nr_cpus=2, flags=sf.SAMPLE_F_LATENCY)
    f.appid(1, "server", pid=100, path="/usr/bin/server")
    f.appid(2, "[kworker/1:0]", pid=7, flags=sf.APPID_F_KTHREAD)
    kernel = dict(mode=sf.MODE_KERNEL, pid=100)
    f.sample(1, 0x401000, pid=100, tid=101, time_ns=1000)
    f.sample(1, KTEXT, tid=101, time_ns=2000, kctx=READ, **kernel)
    f.sample(1, KTEXT + 0x100, cpu=1, tid=102, time_ns=3000,
             kctx=sf.KCTX_EXCEPTION, user_ip=0x401004, **kernel)
    f.sample(1, KTEXT + 0x200, mode=sf.MODE_IRQ, cpu=1, pid=100, tid=102,
             time_ns=3500, kctx=sf.KCTX_HARDIRQ)
    f.sample(1, KTEXT + 0x300, mode=sf.MODE_IRQ, pid=100, tid=101,
             time_ns=4000, kctx=sf.KCTX_SOFTIRQ)
    f.sample(2, KTEXT + 0x400, mode=sf.MODE_KERNEL, cpu=1, pid=7, tid=7,
             time_ns=4500, kctx=sf.KCTX_KTHREAD)
    f.sample(1, KTEXT + 0x500, tid=103, time_ns=900_000, kctx=NANOSLEEP,
             **kernel)
    f.sample(0, 0xffffffff81001000, mode=sf.MODE_IDLE, cpu=1,
             time_ns=950_000)
    # read() from 1500 ns for 3 us (bucket 11): the samples at 2000 and
    # 4000 ns; exit_group() (bucket 9): those at 3000 and 3500 ns.
    f.syscall(1, READ, pid=100, tid=101, start_ns=1500, latency_ns=3000)
    f.syscall(1, EXIT_GROUP, cpu=1, pid=100, tid=102, start_ns=2900,
              latency_ns=700, flags=sf.SYSCALL_F_EXITED)
    f.segment(0, [
        dict(appid=1, nr=READ, counts={}, first=0, nr_buckets=1,
             restarts=2),
        dict(appid=1, nr=WRITE, counts={12: 3}),
        dict(appid=1, nr=EXIT_GROUP, counts={9: 1}),
    ], start_ns=0, end_ns=500_000)
    # nanosleep() a signal ended (bucket 19): the sample at 900 us.
    f.syscall(1, NANOSLEEP, pid=100, tid=103, start_ns=10_000,
              latency_ns=1_000_000, flags=sf.SYSCALL_F_EINTR)
    f.segment(1, [
        dict(appid=1, nr=READ, counts={0: 2, 1: 1, 10: 4, 11: 9, 12: 2,
                                       19: 1, 30: 3, 47: 1}, restarts=1),
        dict(appid=1, nr=NANOSLEEP, counts={19: 1}),
    ], start_ns=500_000, end_ns=2_000_000, lost=1)
    f.stats(samples_taken=8, samples_written=8, appids=2, buffers_hwm=1,
            syscalls_counted=28, syscalls_lost=1, syscall_restarts=3,
            syscall_records=3, latency_segments=2)
    return f.data()


def seeds():
    """(name, bytes) pairs."""
    out = [("header-only", sf.header())]

    f = sf.SessionFile(hz=1000, nr_cpus=1)
    f.appid(1, "loop", pid=100, path="/usr/bin/loop")
    f.mmap(1, 0x400000, 0x1000, pid=100, pgoff=0x1000,
           build_id=bytes(range(20)), path="/usr/bin/loop")
    f.sample(1, 0x401000, pid=100, tid=100, time_ns=1000)
    f.sample(1, 0xffffffff81000000, mode=sf.MODE_KERNEL, pid=100, tid=100,
             user_ip=0x401004, time_ns=2000)
    f.sample(1, 0x401008, mode=sf.MODE_IRQ, cpu=0)
    f.stats(samples_taken=3, samples_written=3, appids=1,
            buffers_hwm=1)
    out.append(("session", f.data()))

    f = sf.SessionFile(header_size=sf.HEADER_SIZE + 12, extra=b"\0" * 12)
    f.record(99, b"later record type")
    f.appid(7, "[kworker/0:1]", flags=sf.APPID_F_KTHREAD)
    f.appid(0, "[idle]", flags=sf.APPID_F_IDLE)
    f.sample(0, 0xffffffff81001000, mode=sf.MODE_IDLE)
    out.append(("long-header-unknown-record", f.data()))

    f = sf.SessionFile()
    for i in range(4):
        f.appid(i, f"app{i}", instance=i, pid=200 + i,
                path=f"/bin/app{i}", origin=i)
        f.mmap(i, 0x7f0000000000 + i * 0x10000, 0x2000, pid=200 + i,
               path=f"/lib/lib{i}.so")
        f.sample(i, 0x7f0000000100 + i * 0x10000, cpu=i, pid=200 + i)
    out.append(("many", f.data()))

    # Statistics: CPU_STATS records (CPU 1 of 4 missing), a
    # STATS record of SAMPLE_STATS_SIZE_VER0 bytes.
    f = sf.SessionFile(nr_cpus=4)
    f.sample(1, 0x401000, cpu=3)
    f.stats(samples_taken=2, samples_written=1, dropped_max_size=1,
            buffers_hwm=2, struct_bytes=sf.SAMPLE_STATS_SIZE_VER0,
            cpus=[dict(samples_taken=1, buffers_hwm=2), None,
                  dict(), dict(samples_taken=1, irq_calls=1)])
    out.append(("cpu-stats", f.data()))

    # Version 1: its STATS record, and a type 5 record it does not know.
    f = sf.SessionFile(version=1, nr_cpus=2)
    f.appid(1, "loop", pid=100, path="/usr/bin/loop")
    f.sample(1, 0x401000, pid=100, tid=100, time_ns=1000)
    f.record(sf.REC_CPU_STATS, b"not yet")
    f.stats(samples_taken=1, samples_written=1, appids=1,
            buffers_hwm=[1, 3])
    out.append(("version-1", f.data()))

    # Version 3's call chains: kernel and user frames, a truncated chain,
    # an empty one, a sample whose chain was lost, chain statistics.
    f = sf.SessionFile(nr_cpus=2, flags=sf.SAMPLE_F_CALLCHAIN)
    f.appid(1, "loop", pid=100, path="/usr/bin/loop")
    f.chain(0, 1, user=[0x401100, 0x401200])
    f.sample(1, 0x401000, pid=100, chain=1)
    f.chain(1, 1, kernel=[0xffffffff81000100], user=[0x401004, 0x401100],
            flags=sf.CHAIN_F_TRUNCATED)
    f.sample(1, 0xffffffff81000000, mode=sf.MODE_KERNEL, cpu=1, chain=1)
    f.chain(0, 2)
    f.sample(1, 0x401000, chain=2)
    f.sample(1, 0x401000, chain=9)
    f.stats(samples_taken=4, samples_written=4, chains_defined=3,
            chains_truncated=1, user_stop_not_up=1)
    out.append(("chains", f.data()))

    # Version 4's logical stacks: samples with one (depth 0, truncated,
    # torn), with a chain and user_ip too, OFFCPU records, their
    # statistics.
    f = sf.SessionFile(nr_cpus=2, flags=sf.SAMPLE_F_LSTACK |
                       sf.SAMPLE_F_CALLCHAIN)
    f.appid(1, "server", pid=100, path="/usr/bin/server")
    f.sample(1, 0x401000, pid=100, tid=101, lstack=[(1, 0), (2, 42)])
    f.sample(1, 0x401000, pid=100, tid=101, lstack=[])
    f.chain(1, 1, user=[0x401100])
    f.sample(1, 0xffffffff81000000, mode=sf.MODE_KERNEL, cpu=1, pid=100,
             tid=102, chain=1, lstack=list(range(1, 17)),
             lstack_flags=sf.LSTACK_F_TRUNCATED)
    f.sample(1, 0x401000, pid=100, tid=103, user_ip=0x401000, lstack=[],
             lstack_flags=sf.LSTACK_F_TORN)
    f.offcpu(1, 5_000_000, cpu=1, pid=100, tid=101, time_ns=1000,
             state=sf.OFFCPU_DISK, lstack=[(1, 0), (3, 7)])
    f.offcpu(1, 20_000, pid=100, tid=102, lstack=[],
             lstack_flags=sf.LSTACK_F_FAULT)
    f.stats(samples_taken=4, samples_written=4, lstack_samples=4,
            lstack_torn=1, lstack_truncated=1, offcpu_records=2,
            chains_defined=1)
    out.append(("lstack", f.data()))

    out.append(("latency", latency_seed()))

    # Version 3: 116-byte CPU_STATS, a 176-byte STATS struct.
    f = sf.SessionFile(version=3, nr_cpus=2, flags=sf.SAMPLE_F_CALLCHAIN)
    f.chain(0, 1, user=[0x401100])
    f.sample(1, 0x401000, chain=1)
    f.stats(samples_taken=1, samples_written=1, chains_defined=1)
    out.append(("version-3", f.data()))

    # Version 2: 68-byte CPU_STATS, a 128-byte STATS struct.
    f = sf.SessionFile(version=2, nr_cpus=2)
    f.sample(1, 0x401000)
    f.stats(samples_taken=1, samples_written=1)
    out.append(("version-2", f.data()))
    return out


def main(argv):
    d = Path(argv[1])
    d.mkdir(parents=True, exist_ok=True)
    for name, data in seeds():
        (d / name).write_bytes(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
