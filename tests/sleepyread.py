"""Read sleepy session files in the test suite, independently of parse.

The struct layouts come from sleepyfile.py (which follows the uapi header);
this reader is deliberately simple and strict: it is the ground truth the
tests compare the kernel's output and parse's reports with. It reads
format versions 1 to 6; stats is the STATS record as version 6's struct
sample_stats in every version (fields a version lacks are 0; from version
1: buffers_hwm the largest of its per-CPU array), cpu_stats the CPU_STATS
records likewise. A sample with a call chain gets "chain": the callers of
its IP, innermost first, as a dict (kernel, user: lists of addresses;
truncated; nr_table: how many user return addresses unwind tables found;
sp_ret: the user return addresses start with the word at the
stack pointer; user_cut: the user walk stopped early), or None when its
CHAIN record is not in the file; chains are checked to come before their
samples, once per (cpu, id). Every sample gets "lstack": None for a thread
without a logical stack, else a dict (frames: a list of (id, arg), bottom
first; flags; truncated, torn, fault); offcpu lists the OFFCPU records as
dicts with their lstack alike. A logical stack holds at most 16 frames,
and none when it was left out (torn, fault). Version 5: a kernel-mode
sample's "kctx" (a system call's number or a KCTX_* value; None without
one); syscalls lists the SYSCALL records, segments the LAT_SEGMENT
records, each with its "histograms": the LATENCY records that follow it,
as dicts whose "counts" maps bucket to count.
"""
import re
from dataclasses import dataclass, field

import sleepyfile as sf


@dataclass
class Session:
    header: dict
    samples: list = field(default_factory=list)   # dicts
    appids: dict = field(default_factory=dict)    # appid -> dict
    mmaps: list = field(default_factory=list)
    stats: dict = None
    cpu_stats: list = field(default_factory=list)  # dicts, in CPU order
    chains: dict = field(default_factory=dict)     # (cpu, id) -> dict
    offcpu: list = field(default_factory=list)     # dicts, in file order
    syscalls: list = field(default_factory=list)   # dicts, in file order
    segments: list = field(default_factory=list)   # dicts, in file order

    def by_name(self, name):
        """Appid records of a binary name, ordered by instance."""
        return sorted((a for a in self.appids.values() if a["name"] == name),
                      key=lambda a: a["instance"])

    def samples_of(self, appids, mode=None):
        ids = set(appids)
        return [s for s in self.samples
                if s["appid"] in ids and (mode is None or s["mode"] == mode)]


def read(path):
    data = open(path, "rb").read()
    h = sf.HEADER.unpack_from(data, 0)
    header = dict(zip(("magic", "version", "header_size", "hz", "nr_cpus",
                       "flags", "reserved", "start_realtime_ns",
                       "start_mono_ns", "release", "machine", "reserved2"), h))
    assert header["magic"] == sf.MAGIC, "bad magic"
    assert header["version"] in (1, 2, 3, 4, 5, 6), header["version"]
    header["release"] = header["release"].split(b"\0")[0].decode()
    s = Session(header)
    off = header["header_size"]
    while off < len(data):
        rtype, size = sf.REC_HDR.unpack_from(data, off)
        assert size >= sf.REC_HDR.size and off + size <= len(data), \
            f"bad record at {off}"
        if rtype == sf.REC_SAMPLE:
            s.samples.append(_sample(s, data, off, size))
        elif rtype == sf.REC_CHAIN and header["version"] >= 3:
            _chain(s, data, off, size)
        elif rtype == sf.REC_OFFCPU and header["version"] >= 4:
            s.offcpu.append(_offcpu(s, data, off, size))
        elif rtype == sf.REC_SYSCALL and header["version"] >= 5:
            s.syscalls.append(_syscall(s, data, off, size))
        elif rtype == sf.REC_LAT_SEGMENT and header["version"] >= 5:
            s.segments.append(_segment(s, data, off, size))
        elif rtype == sf.REC_LATENCY and header["version"] >= 5:
            _latency(s, data, off, size)
        elif rtype == sf.REC_APPID:
            (_, _, appid, inst, pid, parent, origin, flags, nlen, plen, _,
             t) = sf.APPID.unpack_from(data, off)
            p = off + sf.APPID_SIZE
            name = data[p:p + nlen].decode()
            path = data[p + nlen + 1:p + nlen + 1 + plen].decode()
            assert appid not in s.appids, f"appid {appid} twice"
            s.appids[appid] = dict(appid=appid, name=name, instance=inst,
                                   pid=pid, parent=parent, origin=origin,
                                   flags=flags, path=path, time_ns=t)
        elif rtype == sf.REC_MMAP:
            (_, _, appid, pid, start, length, pgoff, t, idlen, bid, flags,
             plen) = sf.MMAP.unpack_from(data, off)
            p = off + sf.MMAP_SIZE
            s.mmaps.append(dict(appid=appid, pid=pid, start=start,
                                len=length, pgoff=pgoff, time_ns=t,
                                build_id=bid[:idlen].hex(), flags=flags,
                                path=data[p:p + plen].decode()))
        elif rtype == sf.REC_CPU_STATS and header["version"] >= 2:
            want = sf.CPU_STATS_SIZES.get(header["version"],
                                          sf.CPU_STATS_SIZE)
            assert size == want, f"CPU_STATS of {size} bytes"
            assert s.stats is None, "CPU_STATS after STATS"
            vals = sf.CPU_STATS.unpack(
                data[off:off + size].ljust(sf.CPU_STATS_SIZE, b"\0"))[2:]
            rec = dict(zip((n for n, _ in sf.CPU_STATS_FIELDS), vals))
            assert rec["cpu"] < header["nr_cpus"], rec
            assert not s.cpu_stats or rec["cpu"] > s.cpu_stats[-1]["cpu"]
            s.cpu_stats.append(rec)
        elif rtype == sf.REC_STATS:
            s.stats = _stats(data, off, size, header["version"])
        off += size
    return s


def _sample(s, data, off, size):
    (_, _, mode, flags, cpu, appid, pid, tid, t,
     ip) = sf.SAMPLE.unpack_from(data, off)
    rec = dict(mode=mode, flags=flags, cpu=cpu, appid=appid, pid=pid,
               tid=tid, time_ns=t, ip=ip, user_ip=None, offset=off,
               lstack=None)
    p = off + sf.SAMPLE_SIZE
    rec["kctx"] = None
    if flags & sf.SAMPLE_F_KCTX:
        assert s.header["version"] >= 5
        rec["kctx"] = int.from_bytes(data[p:p + 2], "little")
        p += 2
    if flags & sf.SAMPLE_F_USER_IP:
        rec["user_ip"] = int.from_bytes(data[p:p + 8], "little")
        p += 8
    if flags & sf.SAMPLE_F_CHAIN:
        assert s.header["version"] >= 3
        rec["chain_id"] = int.from_bytes(data[p:p + 4], "little")
        rec["chain"] = s.chains.get((cpu, rec["chain_id"]))
        p += 4
    if flags & sf.SAMPLE_F_LSTACK:
        assert s.header["version"] >= 4
        rec["lstack"], p = _lstack(data, p, off + size)
    assert p == off + size, f"sample of {size} bytes at {off}"
    return rec


def _lstack(data, p, end):
    """The logical stack part at p (before end); and where it ends."""
    assert p + sf.LSTACK.size <= end, f"logical stack at {p}"
    nr, flags = sf.LSTACK.unpack_from(data, p)
    p += sf.LSTACK.size
    assert nr <= sf.LSTACK_SAMPLE_FRAMES, f"{nr} frames at {p}"
    assert p + nr * sf.LSTACK_FRAME.size <= end, f"logical stack at {p}"
    assert nr == 0 or not flags & (sf.LSTACK_F_TORN | sf.LSTACK_F_FAULT)
    frames = [sf.LSTACK_FRAME.unpack_from(data, p + i * sf.LSTACK_FRAME.size)
              for i in range(nr)]
    return dict(frames=frames, flags=flags,
                truncated=bool(flags & sf.LSTACK_F_TRUNCATED),
                torn=bool(flags & sf.LSTACK_F_TORN),
                fault=bool(flags & sf.LSTACK_F_FAULT)), \
        p + nr * sf.LSTACK_FRAME.size


def _offcpu(s, data, off, size):
    (_, _, cpu, state, _, appid, pid, tid, t,
     off_ns) = sf.OFFCPU.unpack_from(data, off)
    assert size >= sf.OFFCPU_SIZE and cpu < s.header["nr_cpus"], \
        f"OFFCPU at {off}"
    lstack, p = _lstack(data, off + sf.OFFCPU.size, off + size)
    assert p == off + size, f"OFFCPU of {size} bytes at {off}"
    return dict(cpu=cpu, state=state, appid=appid, pid=pid, tid=tid,
                time_ns=t, off_ns=off_ns, lstack=lstack, offset=off)


def _syscall(s, data, off, size):
    (_, _, cpu, nr, appid, pid, tid, flags, start,
     latency) = sf.SYSCALL.unpack_from(data, off)
    assert size == sf.SYSCALL_SIZE and cpu < s.header["nr_cpus"], \
        f"SYSCALL at {off}"
    return dict(cpu=cpu, nr=nr, appid=appid, pid=pid, tid=tid, flags=flags,
                start_ns=start, latency_ns=latency, offset=off)


def _segment(s, data, off, size):
    (_, _, seg, start, end, calls, lost, hists,
     _) = sf.LAT_SEGMENT.unpack_from(data, off)
    assert size == sf.LAT_SEGMENT_SIZE, f"LAT_SEGMENT at {off}"
    assert seg == len(s.segments), f"segment {seg} out of order"
    assert not s.segments or \
        len(s.segments[-1]["histograms"]) == s.segments[-1]["nr"], \
        "a segment's LATENCY records are missing"
    return dict(segment=seg, start_ns=start, end_ns=end, calls=calls,
                lost=lost, nr=hists, histograms=[])


def _latency(s, data, off, size):
    (_, _, seg, appid, nr, first, n, _, calls, sum_ns, max_ns,
     restarts) = sf.LATENCY.unpack_from(data, off)
    assert size == sf.LATENCY_SIZE + 8 * n and first + n <= sf.LAT_BUCKETS, \
        f"LATENCY at {off}"
    assert s.segments and s.segments[-1]["segment"] == seg, \
        f"LATENCY of segment {seg} at {off} outside it"
    counts = sf.struct.unpack_from(f"<{n}Q", data, off + sf.LATENCY_SIZE)
    assert sum(counts) == calls, f"LATENCY at {off}: counts != calls"
    s.segments[-1]["histograms"].append(dict(
        appid=appid, nr=nr, calls=calls, sum_ns=sum_ns, max_ns=max_ns,
        restarts=restarts,
        counts={first + i: c for i, c in enumerate(counts) if c}))


def _chain(s, data, off, size):
    (_, _, cpu, nk, nu, cid, flags, nt) = sf.CHAIN.unpack_from(data, off)
    assert size == sf.CHAIN_SIZE + 8 * (nk + nu), f"CHAIN at {off}"
    assert cpu < s.header["nr_cpus"] and cid, f"CHAIN at {off}"
    assert (cpu, cid) not in s.chains, f"chain {cid} of CPU {cpu} twice"
    frames = list(sf.struct.unpack_from(f"<{nk + nu}Q", data,
                                        off + sf.CHAIN_SIZE))
    s.chains[(cpu, cid)] = dict(kernel=frames[:nk], user=frames[nk:],
                                truncated=bool(flags & sf.CHAIN_F_TRUNCATED),
                                sp_ret=bool(flags & sf.CHAIN_F_SP_RET),
                                user_cut=bool(flags & sf.CHAIN_F_USER_CUT),
                                nr_table=nt)


def _stats(data, off, size, version):
    """A STATS record's struct sample_stats, as version 6's."""
    _, _, _, stats_size = sf.STATS_HDR.unpack_from(data, off)
    body = data[off + sf.STATS_HDR.size:off + sf.STATS_HDR.size + stats_size]
    assert sf.STATS_HDR.size + stats_size <= size, "stats_size too big"
    if version == 1:
        assert stats_size >= sf.SAMPLE_STATS_SIZE_V1
        vals = sf.SAMPLE_STATS_V1.unpack_from(body)
        names = [n for n, _ in sf.STATS_FIELDS_V1]
        st = dict(zip(names, vals))
        del st["size"]
        hwm = vals[len(names):][:min(st["nr_cpus"], sf.STATS_MAX_CPUS_V1)]
        st.update(buffers_hwm=max(hwm, default=0))
        return {n: st.get(n, 0) for n, _ in sf.STATS_FIELDS}
    assert stats_size >= sf.SAMPLE_STATS_SIZE_VER0
    body = body[:sf.SAMPLE_STATS_SIZE].ljust(sf.SAMPLE_STATS_SIZE, b"\0")
    return dict(zip((n for n, _ in sf.STATS_FIELDS),
                    sf.SAMPLE_STATS.unpack(body)))


def symbol_range(binary, symbol):
    """(start, end) of a function symbol of an ELF file, from nm."""
    import subprocess
    out = subprocess.run(["nm", "-S", "--defined-only", str(binary)],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[3] == symbol and parts[2] in "tT":
            start, size = int(parts[0], 16), int(parts[1], 16)
            return start, start + size
    raise KeyError(symbol)


def build_id(binary):
    """The GNU build-id of an ELF file, in hex, from readelf."""
    import subprocess
    out = subprocess.run(["readelf", "-n", str(binary)], capture_output=True,
                         text=True, check=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    return m.group(1) if m else ""
