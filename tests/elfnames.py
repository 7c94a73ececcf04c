"""Functions of an ELF file named by its .dynsym, with keys that do not
depend on the tool that printed an address: for the host-root tests
(test_hostroot, test_unwind), which compare sleepy with perf on Debian's
stripped programs.
"""
import bisect
import subprocess


def dynsyms(path):
    """The functions of path's .dynsym: [(start, end, name)] by start."""
    out = subprocess.run(["nm", "-D", "--defined-only", "-S", str(path)],
                         capture_output=True, text=True, check=True).stdout
    syms = []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "TtWwi":
            start = int(f[0], 16)
            # nm prints a versioned name as NAME@VERSION or NAME@@VERSION.
            syms.append((start, start + int(f[1], 16), f[3].split("@")[0]))
    return sorted(syms)


def segments(path):
    """The LOAD segments of path: [(offset, vaddr, filesz)]."""
    out = subprocess.run(["readelf", "-lW", str(path)], capture_output=True,
                         text=True, check=True).stdout
    return [(int(f[1], 16), int(f[2], 16), int(f[4], 16))
            for f in (line.split() for line in out.splitlines())
            if f and f[0] == "LOAD"]


class Names:
    """Names functions of one ELF file by their .dynsym ranges, with keys
    that do not depend on which alias of a function a tool prints: a
    function's start, or for code between two functions ("A->B" in
    parse's reports) the start of the function before it."""

    def __init__(self, path):
        self.syms = dynsyms(path)
        self.starts = [s for s, _, _ in self.syms]
        self.by_name = {n: s for s, _, n in self.syms}
        self.segs = segments(path)

    def key_of_offset(self, off):
        """The key of the code at file offset off (perf's "[.] 0x...")."""
        for o, v, n in self.segs:
            if o <= off < o + n:
                return self.key_of_vaddr(off - o + v)
        return ("offset", off)

    def key_of_vaddr(self, va):
        i = bisect.bisect_right(self.starts, va) - 1
        if i >= 0 and va < self.syms[i][1]:
            return ("in", self.syms[i][0])
        return ("after", self.syms[i][0] if i >= 0 else 0)

    def key_of_name(self, name):
        """The key of one of parse's symbol names, or None."""
        if "->" in name:
            before = name.split("->")[0]
            return ("after", self.by_name[before]) \
                if before in self.by_name else None
        return ("in", self.by_name[name]) if name in self.by_name else None
