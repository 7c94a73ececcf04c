"""Seed corpus for reader_fuzz: small valid session files, one per shape
the reader knows (written with tests/sleepyfile.py).

    /usr/bin/python3 tests/fuzz/make_seeds.py OUTDIR
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import sleepyfile as sf  # noqa: E402


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
