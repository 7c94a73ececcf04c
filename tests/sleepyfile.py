"""Write sleepy session files for tests (Python 3 standard library only).

The layout follows build/uapi/linux/sleepy.h: a 180-byte file header, then
packed little-endian records, each starting with (type: u16, size: u16).

    f = SessionFile(hz=250, nr_cpus=2)
    f.appid(1, "loop", instance=0, pid=100, path="/usr/bin/loop")
    f.sample(appid=1, ip=0x401000)                 # user mode, 36 bytes
    f.sample(appid=1, ip=0xffffffff81000000, mode=MODE_KERNEL,
             user_ip=0x401000)                     # 44 bytes
    f.stats(samples_taken=2, samples_written=2)    # CPU_STATS, then STATS
    f.write(path)

Files are format version 4 by default; SessionFile(version=3) writes
version 3 (no logical stacks: CPU_STATS records of 116 bytes, a 176-byte
struct sample_stats), SessionFile(version=2) version 2 (no call chains
either: CPU_STATS records of 68 bytes, a 128-byte struct sample_stats),
SessionFile(version=1) version 1 (its STATS record holds the old struct
sample_stats, with size and buffers_hwm[64], and there are no CPU_STATS
records). Call chains:
    f.chain(cpu=0, id=1, kernel=[...], user=[...])  # CHAIN record
    f.sample(appid=1, ip=0x401000, chain=1)         # 40 bytes
Logical stacks (version 4): frames bottom first, each (id, arg) or an id
(arg 0); [] is a registered thread at depth 0:
    f.sample(appid=1, ip=0x401000, lstack=[(1, 0), (2, 42)])  # 70 bytes
    f.offcpu(appid=1, off_ns=5_000_000, lstack=[1, 3])        # OFFCPU
System calls (version 5): a kernel-mode sample's context (a system call's
number or a KCTX_* value), the calls the tick sampled, and a time-lapse
segment's histograms (each a dict of bucket -> count):
    f.sample(appid=1, ip=0xffffffff81000000, mode=MODE_KERNEL, kctx=35)
    f.syscall(appid=1, nr=35, tid=100, start_ns=10, latency_ns=1_500_000)
    f.segment(0, [dict(appid=1, nr=35, counts={20: 200})], end_ns=10**9)
Every record method returns the record's byte offset in the file. The
module-level functions build single records as bytes, for tests that
assemble broken files by hand.

Run as a script, it writes a large synthetic session for benchmarks:
    python3 tests/sleepyfile.py synth OUT --samples N [--appids K] [--ips M]
"""
import argparse
import random
import struct
import sys

MAGIC = b"SLEEPY\r\n"
FORMAT_VERSION = 6

REC_SAMPLE, REC_APPID, REC_MMAP, REC_STATS, REC_CPU_STATS = 1, 2, 3, 4, 5
REC_CHAIN, REC_OFFCPU = 6, 7
REC_SYSCALL, REC_LATENCY, REC_LAT_SEGMENT = 8, 9, 10
MODE_USER, MODE_KERNEL, MODE_IRQ, MODE_IDLE = 0, 1, 2, 3
SAMPLE_F_USER_IP, SAMPLE_F_CHAIN, SAMPLE_F_EXEC = 0x1, 0x2, 0x4
# A sample's flag (a logical stack part follows) and the header's (the
# session records logical stacks): the same bit.
SAMPLE_F_LSTACK = 0x8
# A sample's kernel context (version 5): a __u16 after ip, first of the
# optional fields; a system call's number or one of the KCTX_* values.
SAMPLE_F_KCTX = 0x10
KCTX_SYSCALL_MAX = 0x7FFF
KCTX_EXCEPTION, KCTX_HARDIRQ, KCTX_SOFTIRQ, KCTX_KTHREAD = \
    0x8000, 0x8001, 0x8002, 0x8003
# The header's / config's: latency histograms (version 5).
SAMPLE_F_LATENCY = 0x10
SAMPLE_F_UNWIND = 0x20
LAT_BUCKETS = 48
SYSCALL_F_EXITED, SYSCALL_F_EINTR = 0x1, 0x2
# header / config flags
SAMPLE_F_USER_ONLY, SAMPLE_F_NO_WRITE, SAMPLE_F_CALLCHAIN = 0x1, 0x2, 0x4
LSTACK_F_TRUNCATED, LSTACK_F_TORN, LSTACK_F_FAULT = 0x1, 0x2, 0x4
LSTACK_SAMPLE_FRAMES = 16
OFFCPU_SLEEP, OFFCPU_DISK, OFFCPU_OTHER = 1, 2, 3
CHAIN_F_TRUNCATED, CHAIN_F_SP_RET, CHAIN_F_USER_CUT = 0x1, 0x2, 0x4
USER_STOPS = ("user_stop_depth", "user_stop_not_present",
              "user_stop_unmapped", "user_stop_not_up")
ORIGIN_RUNNING, ORIGIN_FORK, ORIGIN_EXEC, ORIGIN_TICK = 0, 1, 2, 3
APPID_F_KTHREAD, APPID_F_IDLE = 0x1, 0x2
MMAP_F_ANON, MMAP_F_MPROTECT = 0x1, 0x2
NO_PARENT = 0xFFFFFFFF
BUILD_ID_MAX = 20

# struct sleepy_file_header
HEADER = struct.Struct("<8sIIIIIIQQ65s65sH")
HEADER_SIZE = HEADER.size                           # 180
# struct sleepy_rec_hdr
REC_HDR = struct.Struct("<HH")
# struct sleepy_rec_sample: hdr, mode, flags, cpu, appid, pid, tid, time, ip
SAMPLE = struct.Struct("<HHBBHIIIQQ")
SAMPLE_SIZE = SAMPLE.size                           # 36
SAMPLE_USER_IP_SIZE = SAMPLE_SIZE + 8               # 44
SAMPLE_CHAIN_SIZE = SAMPLE_SIZE + 4                 # 40
# struct sleepy_rec_chain: hdr, cpu, nr_kernel, nr_user, id, flags,
# nr_table (version 6), reserved
CHAIN = struct.Struct("<HHHBBIBB2x")
CHAIN_SIZE = CHAIN.size                             # 16
# struct sleepy_rec_lstack: nr, flags; then nr frames of (id, arg)
LSTACK = struct.Struct("<BB")
LSTACK_FRAME = struct.Struct("<QQ")
# struct sleepy_rec_offcpu: hdr, cpu, state, reserved, appid, pid, tid,
# time_ns, off_ns, then its struct sleepy_rec_lstack
OFFCPU = struct.Struct("<HHHBBIIIQQ")
OFFCPU_SIZE = OFFCPU.size + LSTACK.size             # 38
# struct sleepy_rec_appid: hdr, appid, instance, pid, parent_appid, origin,
# flags, name_len, path_len, reserved, time_ns
APPID = struct.Struct("<HHIIIIBBHHHQ")
APPID_SIZE = APPID.size                             # 36
# struct sleepy_rec_mmap: hdr, appid, pid, start, len, pgoff, time_ns,
# build_id_len, build_id, flags (SLEEPY_MMAP_F_*), path_len
MMAP = struct.Struct("<HHIIQQQQB20sBH")
MMAP_SIZE = MMAP.size                               # 68
# struct sample_stats (natural alignment, no padding): 232 bytes (version
# 3's kernels: the first 176, version 2's: the first 128). A kernel may
# write the first SAMPLE_STATS_SIZE_VER0 (120) bytes only.
STATS_FIELDS = [
    ("nr_cpus", "I"), ("appids", "I"),
    ("samples_taken", "Q"), ("samples_written", "Q"),
    ("dropped_no_buffer", "Q"), ("dropped_no_appid", "Q"),
    ("dropped_write_error", "Q"), ("discarded_no_write", "Q"),
    ("skipped_not_user", "Q"), ("bytes_written", "Q"), ("write_errors", "Q"),
    ("first_write_error", "i"), ("meta_dropped", "I"), ("pids_mapped", "I"),
    ("buffers_hwm", "I"),
    ("irq_ns_total", "Q"), ("irq_ns_max", "Q"), ("irq_calls", "Q"),
    ("dropped_max_size", "Q"),
    ("chains_defined", "Q"), ("chains_truncated", "Q"),
] + [(name, "Q") for name in USER_STOPS]
# The logical stacks' figures (version 4), in both statistics structs.
LSTACK_STATS = ("lstack_samples", "lstack_retries", "lstack_torn",
                "lstack_faults", "lstack_truncated", "offcpu_records",
                "offcpu_dropped")
STATS_FIELDS += [(name, "Q") for name in LSTACK_STATS]
# The system calls' figures (version 5), in struct sample_stats only.
LATENCY_STATS = [
    ("syscalls_counted", "Q"), ("syscalls_lost", "Q"),
    ("syscall_restarts", "Q"), ("syscall_records", "Q"),
    ("syscall_records_dropped", "Q"), ("latency_segments", "I"),
    ("latency_records_dropped", "I"),
]
STATS_FIELDS += LATENCY_STATS
# The unwind tables' figures (version 6): the walks' in both statistics
# structs, the tables' in struct sample_stats only.
UNWIND_WALK_STATS = ("unwind_frames", "unwind_fp_frames",
                     "unwind_fallback_no_table", "unwind_fallback_marked")
STATS_FIELDS += [(name, "Q") for name in UNWIND_WALK_STATS] + [
    ("unwind_tables", "I"), ("unwind_refused", "I"), ("unwind_files", "I"),
    ("unwind_ranges_dropped", "I"), ("unwind_mem_hwm", "Q"),
    ("unwind_wait_ns", "Q"), ("unwind_waits", "I"),
    ("unwind_wait_timeouts", "I"),
]
# The budgets' figures (a version 6 STATS record of 368 bytes).
STATS_FIELDS += [("mmap_repeats", "I"), ("mmap_over_budget", "I"),
                 ("offcpu_over_budget", "Q")]
SAMPLE_STATS = struct.Struct("<" + "".join(t for _, t in STATS_FIELDS))
SAMPLE_STATS_SIZE = SAMPLE_STATS.size               # 368
SAMPLE_STATS_SIZE_V6 = 352                          # the unwind kernels' first
SAMPLE_STATS_SIZE_V5 = 280                          # version 5's kernels
SAMPLE_STATS_SIZE_VER0 = 120
SAMPLE_STATS_SIZE_V2 = 128                          # version 2's kernels
SAMPLE_STATS_SIZE_V3 = 176                          # version 3's kernels
SAMPLE_STATS_SIZE_V4 = 232                          # version 4's kernels
# struct sleepy_rec_stats: hdr, reserved, stats_size, stats
STATS_HDR = struct.Struct("<HHHH")
STATS_SIZE = STATS_HDR.size + SAMPLE_STATS_SIZE     # 288
# struct sleepy_rec_syscall: hdr, cpu, nr, appid, pid, tid, flags,
# start_ns, latency_ns (version 5)
SYSCALL = struct.Struct("<HHHHIIIIQQ")
SYSCALL_SIZE = SYSCALL.size                         # 40
# struct sleepy_rec_lat_segment: hdr, segment, start_ns, end_ns, calls,
# lost, histograms, reserved
LAT_SEGMENT = struct.Struct("<HHIQQQQII")
LAT_SEGMENT_SIZE = LAT_SEGMENT.size                 # 48
# struct sleepy_rec_latency: hdr, segment, appid, nr, first, nr_buckets,
# reserved, calls, sum_ns, max_ns, restarts; then __u64 counts
LATENCY = struct.Struct("<HHIIHBBIQQQQ")
LATENCY_SIZE = LATENCY.size                         # 52
# struct sleepy_rec_cpu_stats: hdr, then these
CPU_STATS_FIELDS = [
    ("cpu", "I"), ("buffers_hwm", "I"), ("samples_taken", "Q"),
    ("dropped_no_buffer", "Q"), ("dropped_no_appid", "Q"),
    ("skipped_not_user", "Q"), ("irq_ns_total", "Q"), ("irq_ns_max", "Q"),
    ("irq_calls", "Q"),
    ("chains_defined", "Q"), ("chains_truncated", "Q"),
] + [(name, "Q") for name in USER_STOPS] + \
    [(name, "Q") for name in LSTACK_STATS] + \
    [(name, "Q") for name in UNWIND_WALK_STATS]
CPU_STATS = struct.Struct("<HH" + "".join(t for _, t in CPU_STATS_FIELDS))
CPU_STATS_SIZE = CPU_STATS.size                     # 204
CPU_STATS_SIZE_V4 = 172                             # versions 4 and 5
CPU_STATS_SIZE_V2 = 68                              # version 2's
CPU_STATS_SIZE_V3 = 116                             # version 3's
# Version 1's struct sample_stats (376 bytes): size first, appids after
# first_write_error, no buffers_hwm nor dropped_max_size, then
# buffers_hwm[64].
STATS_MAX_CPUS_V1 = 64
STATS_FIELDS_V1 = [
    ("size", "I"), ("nr_cpus", "I"),
    ("samples_taken", "Q"), ("samples_written", "Q"),
    ("dropped_no_buffer", "Q"), ("dropped_no_appid", "Q"),
    ("dropped_write_error", "Q"), ("discarded_no_write", "Q"),
    ("skipped_not_user", "Q"), ("bytes_written", "Q"), ("write_errors", "Q"),
    ("first_write_error", "i"), ("appids", "I"), ("meta_dropped", "I"),
    ("pids_mapped", "I"),
    ("irq_ns_total", "Q"), ("irq_ns_max", "Q"), ("irq_calls", "Q"),
]
SAMPLE_STATS_V1 = struct.Struct(
    "<" + "".join(t for _, t in STATS_FIELDS_V1) + f"{STATS_MAX_CPUS_V1}I")
SAMPLE_STATS_SIZE_V1 = SAMPLE_STATS_V1.size         # 376
STATS_SIZE_V1 = STATS_HDR.size + SAMPLE_STATS_SIZE_V1   # 384

# Offsets of header fields, for tests of error offsets.
HEADER_VERSION_OFFSET = 8
HEADER_SIZE_OFFSET = 12


def _cstr(s):
    return s.encode() if isinstance(s, str) else bytes(s)


def header(*, hz=250, nr_cpus=2, flags=0, release="6.1.0-sleepy",
           machine="x86_64", start_realtime_ns=1_700_000_000_000_000_000,
           start_mono_ns=1_000_000_000, magic=MAGIC,
           version=FORMAT_VERSION, header_size=HEADER_SIZE, extra=b""):
    """The file header (plus extra bytes, for a header_size > 180)."""
    return HEADER.pack(magic, version, header_size, hz, nr_cpus, flags, 0,
                       start_realtime_ns, start_mono_ns, _cstr(release),
                       _cstr(machine), 0) + extra


def record(rtype, payload=b"", size=None):
    """A record of any type: the 4-byte header and payload. size overrides
    the header's size field (which then may not match the bytes)."""
    n = REC_HDR.size + len(payload)
    return REC_HDR.pack(rtype, n if size is None else size) + payload


def lstack_part(frames, *, flags=0, nr=None):
    """A logical stack part: its head (nr, flags) and its frames, bottom
    first, each (id, arg) or an id (arg 0). nr overrides the count."""
    pairs = [f if isinstance(f, tuple) else (f, 0) for f in frames]
    return LSTACK.pack(len(pairs) if nr is None else nr, flags) + \
        b"".join(LSTACK_FRAME.pack(i, a) for i, a in pairs)


def sample(appid, ip, *, mode=MODE_USER, cpu=0, pid=0, tid=0, time_ns=0,
           user_ip=None, chain=None, lstack=None, lstack_flags=0,
           lstack_nr=None, kctx=None, flags=None, size=None):
    """A sample: 36 bytes, 2 more with kctx (version 5), 8 with user_ip, 4
    with a chain id, then with lstack (a list of frames, [] for depth 0) a
    logical stack part (lstack_part()); each sets its flag unless flags is
    given."""
    if flags is None:
        flags = (SAMPLE_F_USER_IP if user_ip is not None else 0) | \
            (SAMPLE_F_CHAIN if chain is not None else 0) | \
            (SAMPLE_F_LSTACK if lstack is not None else 0) | \
            (SAMPLE_F_KCTX if kctx is not None else 0)
    tail = b"" if kctx is None else struct.pack("<H", kctx)
    tail += b"" if user_ip is None else struct.pack("<Q", user_ip)
    if chain is not None:
        tail += struct.pack("<I", chain)
    if lstack is not None:
        tail += lstack_part(lstack, flags=lstack_flags, nr=lstack_nr)
    n = SAMPLE_SIZE + len(tail)
    return SAMPLE.pack(REC_SAMPLE, n if size is None else size, mode, flags,
                       cpu, appid, pid, tid, time_ns, ip) + tail


def chain_record(cpu, chain_id, *, kernel=(), user=(), flags=0, size=None,
                 nr_kernel=None, nr_user=None, nr_table=0):
    """A CHAIN record (version 3): the callers of a sample's IP, innermost
    first, kernel frames then user frames; the first nr_table user return
    addresses found by unwind tables (version 6). nr_kernel, nr_user and
    size override the record's fields."""
    frames = list(kernel) + list(user)
    n = CHAIN_SIZE + 8 * len(frames)
    return CHAIN.pack(REC_CHAIN, n if size is None else size, cpu,
                      len(kernel) if nr_kernel is None else nr_kernel,
                      len(user) if nr_user is None else nr_user, chain_id,
                      flags, nr_table) + \
        struct.pack(f"<{len(frames)}Q", *frames)


def offcpu_record(appid, off_ns, *, cpu=0, state=OFFCPU_SLEEP, pid=0,
                  tid=0, time_ns=0, lstack=(), lstack_flags=0,
                  lstack_nr=None, size=None):
    """An OFFCPU record (version 4): a registered thread was off the CPU
    for off_ns from time_ns, with this logical stack (lstack_part())."""
    part = lstack_part(lstack, flags=lstack_flags, nr=lstack_nr)
    n = OFFCPU.size + len(part)
    return OFFCPU.pack(REC_OFFCPU, n if size is None else size, cpu, state,
                       0, appid, pid, tid, time_ns, off_ns) + part


def syscall_record(appid, nr, *, cpu=0, pid=0, tid=0, flags=0, start_ns=0,
                   latency_ns=0, size=None):
    """A SYSCALL record (version 5): a call of number nr during which the
    tick sampled its task, from start_ns for latency_ns."""
    return SYSCALL.pack(REC_SYSCALL, SYSCALL_SIZE if size is None else size,
                        cpu, nr, appid, pid, tid, flags, start_ns, latency_ns)


def lat_segment_record(segment, *, start_ns=0, end_ns=0, calls=0, lost=0,
                       histograms=0, size=None):
    """A LAT_SEGMENT record (version 5): its histograms' LATENCY records
    follow."""
    return LAT_SEGMENT.pack(REC_LAT_SEGMENT,
                            LAT_SEGMENT_SIZE if size is None else size,
                            segment, start_ns, end_ns, calls, lost,
                            histograms, 0)


def latency_record(appid, nr, counts, *, segment=0, sum_ns=None, max_ns=None,
                   restarts=0, calls=None, first=None, nr_buckets=None,
                   size=None):
    """A LATENCY record (version 5): counts maps bucket -> count (bucket b
    holds [2^b, 2^(b+1)) ns); the buckets from the first to the last
    non-empty one are written. sum_ns and max_ns default to each call at
    its bucket's low end; calls, first, nr_buckets and size override."""
    lo = [b for b, c in counts.items() if c]
    f = min(lo) if lo else 0
    n = max(lo) - f + 1 if lo else 0
    if first is not None:
        f = first
    if nr_buckets is not None:
        n = nr_buckets
    values = [counts.get(f + i, 0) for i in range(n)]
    if sum_ns is None:
        sum_ns = sum(c * (1 << b if b else 0) for b, c in counts.items())
    if max_ns is None:
        max_ns = (1 << max(lo) if max(lo) else 0) if lo else 0
    body = struct.pack(f"<{n}Q", *values)
    total = LATENCY_SIZE + len(body)
    return LATENCY.pack(
        REC_LATENCY, total if size is None else size, segment, appid, nr, f,
        n, 0, sum(counts.values()) if calls is None else calls, sum_ns,
        max_ns, restarts) + body


def appid_record(appid, name, *, instance=0, pid=0, path="",
                 parent=NO_PARENT, origin=ORIGIN_EXEC, flags=0, time_ns=0,
                 name_len=None, path_len=None, size=None, terminate=True):
    """An APPID record. name_len/path_len/size override the computed
    fields; terminate=False leaves out the strings' NULs."""
    name_b, path_b = _cstr(name), _cstr(path)
    nul = b"\0" if terminate else b""
    strings = name_b + nul + path_b + nul
    n = APPID_SIZE + len(strings)
    return APPID.pack(
        REC_APPID, n if size is None else size, appid, instance, pid, parent,
        origin, flags, len(name_b) if name_len is None else name_len,
        len(path_b) if path_len is None else path_len, 0, time_ns) + strings


def mmap_record(appid, start, length, *, pid=0, pgoff=0, time_ns=0,
                build_id=b"", path="", size=None, flags=0):
    """An MMAP record (an executable mapping: a file's, or anonymous with
    flags MMAP_F_ANON)."""
    path_b = _cstr(path)
    n = MMAP_SIZE + len(path_b) + 1
    return MMAP.pack(REC_MMAP, n if size is None else size, appid, pid,
                     start, length, pgoff, time_ns, len(build_id),
                     build_id.ljust(BUILD_ID_MAX, b"\0"), flags,
                     len(path_b)) + path_b + b"\0"


def _values(fields, given, defaults):
    names = [n for n, _ in fields]
    unknown = set(given) - set(names)
    if unknown:
        raise TypeError(f"unknown fields: {sorted(unknown)}")
    values = {n: 0 for n in names}
    values.update(defaults)
    values.update(given)
    return [values[n] for n in names]


def stats_record(*, version=FORMAT_VERSION, struct_bytes=None,
                 stats_size=None, size=None, **fields):
    """A STATS record; fields are struct sample_stats members (nr_cpus
    defaults to 2, the rest to 0). Version 1: the old struct, whose
    buffers_hwm is a list (one per CPU; an int is every CPU's) and which
    has no dropped_max_size. struct_bytes writes that many bytes of the
    struct (cut short, or zero-padded as a later kernel's larger struct);
    stats_size and size override the record's fields."""
    if version == 1:
        hwm = fields.pop("buffers_hwm", ())
        nr = fields.get("nr_cpus", 2)
        if isinstance(hwm, int):
            hwm = [hwm] * min(nr, STATS_MAX_CPUS_V1)
        hwm = list(hwm) + [0] * (STATS_MAX_CPUS_V1 - len(hwm))
        body = SAMPLE_STATS_V1.pack(*_values(
            STATS_FIELDS_V1, fields,
            {"size": SAMPLE_STATS_SIZE_V1, "nr_cpus": 2}), *hwm)
    else:
        body = SAMPLE_STATS.pack(*_values(STATS_FIELDS, fields,
                                          {"nr_cpus": 2}))
        body = body[:{2: SAMPLE_STATS_SIZE_V2,
                      3: SAMPLE_STATS_SIZE_V3,
                      4: SAMPLE_STATS_SIZE_V4}.get(version, len(body))]
    if struct_bytes is not None:
        body = body[:struct_bytes].ljust(struct_bytes, b"\0")
    if stats_size is None:
        stats_size = len(body)
    n = STATS_HDR.size + len(body)
    return STATS_HDR.pack(REC_STATS, n if size is None else size, 0,
                          stats_size) + body


CPU_STATS_SIZES = {2: CPU_STATS_SIZE_V2, 3: CPU_STATS_SIZE_V3,
                   4: CPU_STATS_SIZE_V4, 5: CPU_STATS_SIZE_V4}


def cpu_stats_record(cpu, *, version=FORMAT_VERSION, size=None, **fields):
    """A CPU_STATS record (version 2 on; 68 bytes in version 2, 116 in
    version 3, 172 in versions 4 and 5, 204 from version 6); fields are
    struct sleepy_rec_cpu_stats members, 0 by default."""
    fields["cpu"] = cpu
    n = CPU_STATS_SIZES.get(version, CPU_STATS_SIZE)
    return CPU_STATS.pack(REC_CPU_STATS, n if size is None else size,
                          *_values(CPU_STATS_FIELDS, fields, {}))[:n]


# The figures a CPU_STATS record has, and how the STATS record has them:
# summed over the CPUs, or the largest.
CPU_SUMS = ("samples_taken", "dropped_no_buffer", "dropped_no_appid",
            "skipped_not_user", "irq_ns_total", "irq_calls",
            "chains_defined", "chains_truncated") + USER_STOPS + \
    LSTACK_STATS + UNWIND_WALK_STATS
CPU_MAXES = ("buffers_hwm", "irq_ns_max")


def cpu_split(nr_cpus, totals):
    """Per-CPU figures (a list of dicts, one per CPU) that add up to the
    STATS record's totals: the sums split as evenly as they go, the
    largest values on CPU 0."""
    if not nr_cpus:
        return []
    out = [{} for _ in range(nr_cpus)]
    for name in CPU_SUMS:
        v = totals.get(name, 0)
        for c in range(nr_cpus):
            out[c][name] = v // nr_cpus + (c < v % nr_cpus)
    for name in CPU_MAXES:
        out[0][name] = totals.get(name, 0)
    return out


class SessionFile:
    """A session file being assembled in memory."""

    def __init__(self, **header_args):
        self.parts = [header(**header_args)]
        self.size = len(self.parts[0])
        self.version = header_args.get("version", FORMAT_VERSION)
        self.nr_cpus = header_args.get("nr_cpus", 2)

    def add(self, data):
        """Append raw bytes (a record, or junk); returns their offset."""
        offset = self.size
        self.parts.append(bytes(data))
        self.size += len(data)
        return offset

    def sample(self, appid, ip, **kw):
        return self.add(sample(appid, ip, **kw))

    def appid(self, appid, name, **kw):
        return self.add(appid_record(appid, name, **kw))

    def mmap(self, appid, start, length, **kw):
        return self.add(mmap_record(appid, start, length, **kw))

    def chain(self, cpu, chain_id, **kw):
        return self.add(chain_record(cpu, chain_id, **kw))

    def offcpu(self, appid, off_ns, **kw):
        return self.add(offcpu_record(appid, off_ns, **kw))

    def syscall(self, appid, nr, **kw):
        return self.add(syscall_record(appid, nr, **kw))

    def latency(self, appid, nr, counts, **kw):
        return self.add(latency_record(appid, nr, counts, **kw))

    def lat_segment(self, segment, **kw):
        return self.add(lat_segment_record(segment, **kw))

    def segment(self, segment, hists, *, start_ns=0, end_ns=0, lost=0):
        """A LAT_SEGMENT record, then a LATENCY record per histogram (a
        dict of latency_record()'s arguments: appid, nr, counts, ...).
        Returns the LAT_SEGMENT record's offset."""
        calls = sum(h.get("calls", sum(h["counts"].values())) for h in hists)
        off = self.lat_segment(segment, start_ns=start_ns, end_ns=end_ns,
                               calls=calls, lost=lost,
                               histograms=len(hists))
        for h in hists:
            h = dict(h)
            self.latency(h.pop("appid"), h.pop("nr"), h.pop("counts"),
                         segment=segment, **h)
        return off

    def cpu_stats(self, cpu, **kw):
        kw.setdefault("version", self.version)
        return self.add(cpu_stats_record(cpu, **kw))

    def stats(self, *, cpus=None, **kw):
        """The statistics: from version 2 on, a CPU_STATS record for each
        CPU (cpus: a list of dicts, one per CPU, None for a CPU without
        one, or by default the totals split with cpu_split(); [] for
        none), then STATS. Returns the STATS record's offset."""
        if self.version >= 2:
            kw.setdefault("nr_cpus", self.nr_cpus)
            if cpus is None:
                cpus = cpu_split(self.nr_cpus, kw)
            for c, figures in enumerate(cpus):
                if figures is not None:     # None: not a possible CPU
                    self.cpu_stats(c, **figures)
        return self.add(stats_record(version=self.version, **kw))

    def record(self, rtype, payload=b"", **kw):
        return self.add(record(rtype, payload, **kw))

    def data(self):
        return b"".join(self.parts)

    def write(self, path):
        with open(path, "wb") as f:
            f.write(self.data())
        return path


def synth(path, samples, appids=16, ips=4096, seed=1, kernel_share=0.2):
    """A large synthetic session: appids' APPID records, then samples with
    random appids and IPs (kernel-mode ones carry a user_ip), then STATS.
    A block of distinct samples is repeated to keep generation fast."""
    rng = random.Random(seed)
    block_n = min(samples, 1 << 18)
    block = bytearray()
    for i in range(block_n):
        a = rng.randrange(appids)
        if rng.random() < kernel_share:
            block += sample(a, 0xffffffff81000000 + 16 * rng.randrange(ips),
                            mode=MODE_KERNEL, cpu=i & 1, pid=1000 + a,
                            tid=1000 + a, time_ns=i * 4_000_000,
                            user_ip=0x400000 + 16 * rng.randrange(ips))
        else:
            block += sample(a, 0x400000 + 16 * rng.randrange(ips),
                            cpu=i & 1, pid=1000 + a, tid=1000 + a,
                            time_ns=i * 4_000_000)
    with open(path, "wb") as f:
        f.write(header())
        for a in range(appids):
            f.write(appid_record(a, f"app{a % 5}", instance=a // 5,
                                 pid=1000 + a, path=f"/bin/app{a % 5}"))
        left = samples
        while left:
            n = min(left, block_n)
            if n == block_n:
                f.write(block)
            else:
                # Records differ in size: cut at a record boundary.
                cut, k = 0, 0
                while k < n:
                    cut += struct.unpack_from("<H", block, cut + 2)[0]
                    k += 1
                f.write(block[:cut])
            left -= n
        totals = dict(samples_taken=samples, samples_written=samples,
                      appids=appids)
        for c, figures in enumerate(cpu_split(2, totals)):
            f.write(cpu_stats_record(c, **figures))
        f.write(stats_record(**totals))


def main(argv):
    p = argparse.ArgumentParser(prog="sleepyfile.py")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("synth", help="write a large synthetic session")
    s.add_argument("out")
    s.add_argument("--samples", type=int, required=True)
    s.add_argument("--appids", type=int, default=16)
    s.add_argument("--ips", type=int, default=4096)
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--kernel-share", type=float, default=0.2)
    a = p.parse_args(argv)
    synth(a.out, a.samples, a.appids, a.ips, a.seed, a.kernel_share)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
