"""Whole user stacks, sleepy's and perf --call-graph dwarf's, read into one
form and named by one symbolizer, for test_unwind's host-root part and
./build.sh bench unwind.

A stack is a tuple of frames, outermost first; a frame is (path, "off",
file offset) or (path, "va", ELF virtual address) of the code, a caller's taken one byte before its return address
(in its call instruction). Functions are named by the file's .dynsym
(tests/test_hostroot.Names: the same keys for both profilers, a static
function as the one before it). A stack is whole when its outermost frame
is the executable's entry code (_start, past the C library's start-up
functions) or a thread's start.
"""
import bisect
import collections
import re
import subprocess
from pathlib import Path

import sleepyfile as sf
import sleepyread

# The guest's workloads (a --host-root guest: Debian's own programs): a
# JSON round trip and a sort in python3 (its C accelerator, _json, a
# dlopen'd extension), a hash of 400,000 keys sorted in perl, xz -9 on
# 3 MB of a real binary. Written to /tmp by SETUP_SH. With UW_TIME set,
# the scripts write the guest time of their work (after start-up: the
# interpreter's reads of its modules over 9p not in it), in ns, to that
# file (./build.sh bench unwind).
SETUP_SH = r"""
cat > /tmp/uw.py <<'PY'
import json, os, random, time
t0 = time.monotonic_ns()
random.seed(1)
d = [{"k": random.random(), "s": str(i) * 3} for i in range(40000)]
for _ in range(4):
    t = json.loads(json.dumps(d))
    t.sort(key=lambda x: x["k"])
print(len(t))
if "UW_TIME" in os.environ:
    with open(os.environ["UW_TIME"], "w") as f:
        f.write(f"{time.monotonic_ns() - t0}\n")
PY
cat > /tmp/uw.pl <<'PL'
use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC);
my $t0 = clock_gettime(CLOCK_MONOTONIC);
my %h;
$h{($_ * 7919) % 1000003} = $_ for 1 .. 400000;
my @k = sort { $a <=> $b } keys %h;
print scalar(@k), "\n";
if (defined $ENV{UW_TIME}) {
    open(my $f, ">", $ENV{UW_TIME}) or die "$ENV{UW_TIME}: $!";
    printf $f "%d\n", (clock_gettime(CLOCK_MONOTONIC) - $t0) * 1e9;
}
PL
head -c 3000000 /usr/bin/python3.11 > /tmp/uw.data
echo 0 > /proc/sys/kernel/perf_event_paranoid
"""
# name: (comm, executable, command line)
PROGRAMS = {
    "python3": ("python3", "/usr/bin/python3.11",
                "/usr/bin/python3 /tmp/uw.py"),
    "perl": ("perl", "/usr/bin/perl", "/usr/bin/perl /tmp/uw.pl"),
    "xz": ("xz", "/usr/bin/xz", "/usr/bin/xz -9 -T1 -c /tmp/uw.data"),
}
# perf's peer: DWARF call graphs at the guest's HZ (1000), user mode.
PERF_DWARF = "perf record -q --call-graph dwarf -F 1000 -e cpu-clock:u"


def elf_entry(path):
    """path's entry point: (its file offset, its virtual address)."""
    out = subprocess.run(["readelf", "-hlW", str(path)], capture_output=True,
                         text=True, check=True).stdout
    entry = int(re.search(r"Entry point address:\s+0x([0-9a-f]+)",
                          out).group(1), 16)
    for f in (line.split() for line in out.splitlines()):
        if f and f[0] == "LOAD":
            off, va, size = int(f[1], 16), int(f[2], 16), int(f[4], 16)
            if va <= entry < va + size:
                return entry - va + off, entry
    raise AssertionError(f"{path}: entry {entry:#x} in no segment")


class Maps:
    """A process's executable file mappings: address -> (path, offset)."""

    def __init__(self):
        self.starts, self.maps = [], []

    def add(self, start, length, pgoff, path):
        i = bisect.bisect_right(self.starts, start)
        self.starts.insert(i, start)
        self.maps.insert(i, (start, length, pgoff, path))

    def frame(self, addr):
        i = bisect.bisect_right(self.starts, addr) - 1
        if i >= 0:
            start, length, pgoff, path = self.maps[i]
            if addr < start + length:
                return (path, "off", addr - start + pgoff)
        return ("?", "va", addr)


def sleepy_stacks(path, comm):
    """The user-mode samples of the program named comm in the session
    file at path: their stacks, and the session."""
    s = sleepyread.read(path)
    appids = {a["appid"] for a in s.appids.values() if a["name"] == comm}
    maps = collections.defaultdict(Maps)
    for m in s.mmaps:
        if m["appid"] in appids and m["path"]:
            maps[m["pid"]].add(m["start"], m["len"], m["pgoff"], m["path"])
    stacks = []
    for x in s.samples_of(list(appids), mode=sf.MODE_USER):
        mp = maps[x["pid"]]
        user = x["chain"]["user"] if x["chain"] else []
        frames = [mp.frame(a - 1) for a in reversed(user)]
        stacks.append(tuple(frames) + (mp.frame(x["ip"]),))
    return stacks, s


FRAME = re.compile(r"^\s+([0-9a-f]+) \((.*)\)$")


def perf_stacks(perf_data, comm):
    """The samples of comm in perf_data (perf record --call-graph dwarf),
    unwound by perf script here, from the same files (--host-root). perf
    prints a frame's address relative to its mapping: a file offset."""
    out = subprocess.run(
        ["perf", "script", "-i", str(perf_data), "-F", "comm,pid,ip,dso",
         "--no-inline", "--comms", comm],
        capture_output=True, text=True, check=True).stdout
    stacks, cur = [], None
    for line in out.splitlines() + [""]:
        m = FRAME.match(line)
        if m and cur is not None:
            va = int(m.group(1), 16)
            cur.append((m.group(2), "off", va - 1 if cur else va))
        elif not line.strip():
            if cur:
                stacks.append(tuple(reversed(cur)))
            cur = None
        else:
            cur = []
    return stacks


def interpreter(exe):
    """The program interpreter exe names (PT_INTERP), resolved."""
    out = subprocess.run(["readelf", "-lW", str(exe)], capture_output=True,
                         text=True, check=True).stdout
    m = re.search(r"Requesting program interpreter: (\S+)\]", out)
    return str(Path(m.group(1)).resolve()) if m else None


def whole(stacks, exe):
    """The share of stacks whose outermost frame is the entry code of exe
    or of its program interpreter (the dynamic linker's, at start-up)."""
    roots = {str(Path(p).resolve()): dict(zip(("off", "va"), elf_entry(p)))
             for p in (exe, interpreter(exe)) if p}
    ok = sum(1 for st in stacks if st and st[0][0] in roots and
             0 <= st[0][2] - roots[st[0][0]][st[0][1]] < 0x40)
    return ok / len(stacks) if stacks else 0.0


def inclusive(stacks, names):
    """{function key: share of stacks with it}; names(path) -> Names."""
    counts = collections.Counter()
    for st in stacks:
        keys = set()
        for path, kind, at in st:
            n = names(path) if path.startswith("/") else None
            if n:
                keys.add((path,) + (n.key_of_offset(at) if kind == "off"
                                    else n.key_of_vaddr(at)))
        counts.update(keys)
    return {k: v / len(stacks) for k, v in counts.items()}
