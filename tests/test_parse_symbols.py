"""Host-side tests of parse's symbolized reports (no VM).

Real ELF objects are built here with gcc (a static executable, a dynamic
non-PIE executable, a PIE, a shared library and a stripped shared
library); a synthetic session file maps them as the kernel would (MMAP
records with start, length, file offset and build-id) and puts samples at
addresses computed from `nm` and the objects' program headers. parse's
attribution is then checked exactly against that ground truth, including
brackets in the stripped library and each reason an IP stays unresolved.
Source lines are checked against binutils' addr2line, annotation against
objdump, and the SQLite database through the sqlite3 shell with the ten
queries of Documentation/parse.md.

    /usr/bin/python3 -m pytest tests/test_parse_symbols.py
"""
import collections
import csv
import io
import json
import re
import struct
import subprocess
from pathlib import Path

import pytest

import sleepyfile as sf
from conftest import TOP

DOC = TOP / "Documentation" / "parse.md"
PAGE = 0x1000

HOT_C = r"""
int hot_lib(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += i * 3;
	return s;
}

int cold_lib(int n)
{
	return n + 1;
}

int a_function_with_a_really_long_name_to_see_how_parse_cuts_it_to_80(int n)
{
	return n - 1;
}
"""
LONG = "a_function_with_a_really_long_name_to_see_how_parse_cuts_it_to_80"

STRIPPED_C = r"""
__attribute__((noinline)) int a_first(int n)
{
	return n * 2;
}

__attribute__((noinline, used)) static int hidden_middle(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s ^= i;
	return s;
}

__attribute__((noinline)) int z_last(int n)
{
	return hidden_middle(n) + 1;
}

__attribute__((noinline, used)) static int hidden_tail(int n)
{
	int s = 1;
	for (int i = 0; i < n; i++)
		s *= i;
	return s;
}
"""

MAIN_C = r"""
int hot_lib(int n);
static volatile int sink;

__attribute__((noinline)) int spin_main(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += i;
	return s;
}

int main(void)
{
	sink = hot_lib(10) + spin_main(10);
	return 0;
}
"""


def sh(*args, **kw):
    return subprocess.run([str(a) for a in args], check=True,
                          capture_output=True, text=True, **kw).stdout


# ---------------------------------------------------------------- ELF facts

def elf_loads(path):
    """The PT_LOAD headers of an ELF64 file: (offset, vaddr, filesz,
    flags)."""
    data = Path(path).read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2
    e_type, = struct.unpack_from("<H", data, 16)
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    loads = []
    for i in range(phnum):
        p_type, p_flags, p_offset, p_vaddr, _, p_filesz = \
            struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if p_type == 1:
            loads.append((p_offset, p_vaddr, p_filesz, p_flags))
    return e_type, loads


def build_id(path):
    """The GNU build-id, from `readelf -n`."""
    m = re.search(r"Build ID: ([0-9a-f]+)", sh("readelf", "-n", path))
    return bytes.fromhex(m.group(1))


def functions(path, dynamic=False):
    """name -> (value, size) of the defined functions, from nm."""
    out = sh("nm", "-S", "--defined-only", *(["-D"] if dynamic else []),
             path)
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "Tt":
            syms[parts[3]] = (int(parts[0], 16), int(parts[1], 16))
    return syms


class Obj:
    """An ELF object as a session would map it at base (0 for ET_EXEC)."""

    def __init__(self, path, guest_path, base):
        self.path = Path(path)
        self.guest = guest_path
        e_type, loads = elf_loads(path)
        self.base = base if e_type == 3 else 0
        self.text = next(l for l in loads if l[3] & 1)     # PF_X
        self.build_id = build_id(path)

    def mmap(self, f, appid, pid=0, build_id=None, path=None):
        """The MMAP record of the executable segment."""
        off, vaddr, filesz, _ = self.text
        start = self.base + (vaddr & ~(PAGE - 1))
        end = self.base + vaddr + filesz
        f.mmap(appid, start, (end - start + PAGE - 1) & ~(PAGE - 1),
               pid=pid, pgoff=off & ~(PAGE - 1),
               build_id=self.build_id if build_id is None else build_id,
               path=self.guest if path is None else path)

    def ip(self, value):
        """The runtime address of a symbol value."""
        return self.base + value

    def file_offset(self, value):
        off, vaddr, _, _ = self.text
        return value - vaddr + off


@pytest.fixture(scope="session")
def objs(tmp_path_factory):
    """The objects, under root/ as a guest's filesystem (for --symfs)."""
    d = tmp_path_factory.mktemp("objs")
    root = d / "root"
    (root / "usr/lib").mkdir(parents=True)
    (root / "usr/bin").mkdir(parents=True)
    for name, src in (("hot.c", HOT_C), ("strip.c", STRIPPED_C),
                      ("main.c", MAIN_C)):
        (d / name).write_text(src)
    lib = root / "usr/lib/libhot.so"
    sh("gcc", "-g", "-O1", "-fPIC", "-shared", "-o", lib, d / "hot.c")
    unstripped = d / "libstripped.so"
    sh("gcc", "-g", "-O0", "-fPIC", "-shared", "-o", unstripped,
       d / "strip.c")
    stripped = root / "usr/lib/libstripped.so"
    sh("strip", "-o", stripped, unstripped)
    dyn = root / "usr/bin/dyn"
    sh("gcc", "-g", "-O1", "-no-pie", "-o", dyn, d / "main.c", lib)
    pie = root / "usr/bin/pie"
    sh("gcc", "-g", "-O1", "-fPIE", "-pie", "-o", pie, d / "main.c", lib)
    static = root / "usr/bin/static"
    sh("gcc", "-g", "-O1", "-static", "-o", static, d / "main.c",
       d / "hot.c")
    return {
        "root": root,
        "dir": d,
        "lib": Obj(lib, "/usr/lib/libhot.so", 0x7f0000000000),
        "stripped": Obj(stripped, "/usr/lib/libstripped.so",
                        0x7f1000000000),
        "unstripped": unstripped,
        "dyn": Obj(dyn, "/usr/bin/dyn", 0),
        "pie": Obj(pie, "/usr/bin/pie", 0x555555554000),
        "static": Obj(static, "/usr/bin/static", 0),
    }


KALLSYMS = """\
ffffffff81000000 T _stext
ffffffff81000100 T do_syscall_64
ffffffff81000400 t handle_irq
ffffffff81000800 T _etext
ffffffffc0000000 t ext4_find_entry\t[ext4]
ffffffffc0000300 t ext4_readdir\t[ext4]
ffffffff82000000 D some_data
"""
K_SYSCALL = 0xffffffff81000180
K_IRQ = 0xffffffff81000410
K_EXT4 = 0xffffffffc0000010
K_PAST_ETEXT = 0xffffffff81000900

# (appid, name, instance, pid): named like the paper's benchmarks, so
# that the documented SQL queries (which use those names) run as written.
SYM_APPIDS = [(1, "loop", 0, 100), (2, "call", 0, 101), (3, "btree", 0, 102),
              (4, "loop", 1, 103)]
NAMES = {a: (n, i, p) for a, n, i, p in SYM_APPIDS}


def mid(syms, name):
    value, size = syms[name]
    assert size > 2, name
    return value + size // 2


Truth = collections.namedtuple(
    "Truth", "appid mode ip count dso symbol kind reason")
Sample = collections.namedtuple("Sample", "appid mode ip cpu time_ns")


def sym_session(objs, release="6.1.0-sleepy"):
    """The session, its ground truth (a list of Truth) and its samples
    (a list of Sample, in file order)."""
    lib, stripped = objs["lib"], objs["stripped"]
    dyn, pie, static = objs["dyn"], objs["pie"], objs["static"]
    lib_syms = functions(lib.path)
    un = functions(objs["unstripped"])
    st = functions(stripped.path, dynamic=True)
    f = sf.SessionFile(release=release)
    truth = []

    def add(appid, ip, n, dso, symbol, kind="symbol", reason=None,
            mode=sf.MODE_USER):
        truth.append(Truth(appid, mode, ip, n, dso, symbol, kind, reason))

    for appid, name, inst, pid in SYM_APPIDS:
        f.appid(appid, name, instance=inst, pid=pid,
                path=["", "/usr/bin/dyn", "/usr/bin/pie", "/usr/bin/static",
                      "/usr/bin/dyn"][appid])
    # dyn#0: the executable and the library.
    dyn.mmap(f, 1, 100)
    lib.mmap(f, 1, 100)
    add(1, dyn.ip(mid(functions(dyn.path), "spin_main")), 7, dyn.guest,
        "spin_main")
    add(1, lib.ip(mid(lib_syms, "hot_lib")), 11, lib.guest, "hot_lib")
    add(1, lib.ip(lib_syms["cold_lib"][0]), 1, lib.guest, "cold_lib")
    add(1, lib.ip(lib_syms[LONG][0]), 1, lib.guest, LONG)
    # pie#0: a PIE, the library and the stripped library.
    pie.mmap(f, 2, 101)
    lib.mmap(f, 2, 101)
    stripped.mmap(f, 2, 101)
    add(2, pie.ip(mid(functions(pie.path), "spin_main")), 5, pie.guest,
        "spin_main")
    add(2, lib.ip(mid(lib_syms, "hot_lib")), 3, lib.guest, "hot_lib")
    add(2, stripped.ip(mid(un, "hidden_middle")), 6, stripped.guest,
        "a_first->z_last", "bracket")
    add(2, stripped.ip(st["a_first"][0] + 1), 2, stripped.guest, "a_first")
    add(2, stripped.ip(st["z_last"][0]), 4, stripped.guest, "z_last")
    # Past the last exported function: a bracket to the end.
    add(2, stripped.ip(mid(un, "hidden_tail")), 3, stripped.guest,
        "z_last->(end)", "bracket")
    # static#0: one static executable.
    static.mmap(f, 3, 102)
    ss = functions(static.path)
    add(3, static.ip(mid(ss, "spin_main")), 4, static.guest, "spin_main")
    add(3, static.ip(mid(ss, "hot_lib")), 9, static.guest, "hot_lib")
    # dyn#1: the library with another build-id, a missing library, and an
    # address nothing maps.
    dyn.mmap(f, 4, 103)
    lib.mmap(f, 4, 103, build_id=bytes(20))
    gone_start = 0x7f2000000000
    f.mmap(4, gone_start, 0x2000, pid=103, pgoff=0x1000,
           build_id=bytes(range(20)), path="/usr/lib/libgone.so")
    ip = lib.ip(mid(lib_syms, "hot_lib"))
    add(4, ip, 3, lib.guest, f"libhot.so+{lib.file_offset(ip - lib.base):#x}",
        "unresolved", "build-id mismatch")
    add(4, gone_start + 0x10, 2, "/usr/lib/libgone.so", "libgone.so+0x1010",
        "unresolved", "file missing")
    add(4, 0x1234, 1, "[unknown]", "[unknown]+0x1234", "unresolved",
        "no mapping")
    # Kernel samples of dyn#0.
    add(1, K_SYSCALL, 5, "[kernel.kallsyms]", "do_syscall_64",
        mode=sf.MODE_KERNEL)
    add(1, K_EXT4, 2, "[ext4]", "ext4_find_entry", mode=sf.MODE_KERNEL)
    add(1, K_PAST_ETEXT, 1, "[kernel.kallsyms]",
        f"[kernel.kallsyms]+{K_PAST_ETEXT:#x}", "unresolved", "no symbol",
        mode=sf.MODE_KERNEL)
    add(3, K_IRQ, 3, "[kernel.kallsyms]", "handle_irq", mode=sf.MODE_IRQ)
    samples = []
    t = 0
    for x in truth:
        pid = NAMES[x.appid][2]
        for k in range(x.count):
            samples.append(Sample(x.appid, x.mode, x.ip, k % 2, t))
            f.sample(x.appid, x.ip, mode=x.mode, cpu=k % 2, pid=pid,
                     tid=pid, time_ns=t)
            t += 4_000_000
    f.stats(samples_taken=len(samples), samples_written=len(samples))
    return f, truth, samples


@pytest.fixture
def symfile(objs, tmp_path):
    """(session path, truth, samples), with FILE.kallsyms next to it."""
    f, truth, samples = sym_session(objs)
    path = tmp_path / "session.bin"
    f.write(path)
    Path(str(path) + ".kallsyms").write_text(KALLSYMS)
    return path, truth, samples


def run_parse(parse_bin, *args):
    r = subprocess.run([str(parse_bin), *map(str, args)], capture_output=True,
                       text=True, timeout=60)
    return r


def truth_rows(truth, key, modes=None):
    """Aggregate truth by key(t) -> count, for the selected modes."""
    c = collections.Counter()
    for t in truth:
        if modes is None or t.mode in modes:
            c[key(t)] += t.count
    return c


def app_order(appid):
    name, inst, _ = NAMES[appid]
    return (name.encode(), inst, appid)


def pct(n, total):
    return f"{n * 100 / total:.2f}"


def csv_of(text):
    return list(csv.reader(io.StringIO(text)))


ALL_MODES = ("--mode", "all")


# ---------------------------------------------------------------- symbols

def test_csv_by_appid_symbol_is_exact(parse_bin, symfile, objs):
    path, truth, _ = symfile
    r = run_parse(parse_bin, "--by", "appid,symbol", "--format", "csv",
                  *ALL_MODES, "--symfs", objs["root"], path)
    assert r.returncode == 0, r.stderr
    rows = csv_of(r.stdout)
    assert rows[0] == ["app", "instance", "pid", "mode", "dso", "symbol",
                       "samples", "percent"]
    c = truth_rows(truth, lambda t: (t.appid, t.dso, t.symbol))
    total = sum(c.values())
    want = []
    for (a, dso, sym), n in sorted(c.items(), key=lambda kv: (
            -kv[1], app_order(kv[0][0]), kv[0][1], kv[0][2])):
        name, inst, pid = NAMES[a]
        want.append([name, str(inst), str(pid), "all", dso, sym, str(n),
                     pct(n, total)])
    assert rows[1:] == want


def test_json_marks_brackets_and_unresolved_reasons(parse_bin, symfile,
                                                    objs):
    path, truth, _ = symfile
    r = run_parse(parse_bin, "--by", "appid,symbol", "--format", "json",
                  *ALL_MODES, "--symfs", objs["root"], path)
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["by"] == ["appid", "dso", "symbol"]
    assert j["total"] == sum(t.count for t in truth)
    assert j["rows_total"] == len(j["rows"])
    assert j["kernel_symbols"] == str(path) + ".kallsyms"
    want = {(NAMES[t.appid][0], NAMES[t.appid][1], t.dso, t.symbol):
            (t.kind, t.reason) for t in truth}
    got = {(row["app"], row["instance"], row["dso"], row["symbol"]):
           (row["kind"], row["reason"]) for row in j["rows"]}
    assert got == want
    reasons = collections.Counter()
    for t in truth:
        if t.reason:
            reasons[t.reason] += t.count
    assert j["unresolved"]["samples"] == sum(reasons.values())
    assert {k: v for k, v in j["unresolved"]["by_reason"].items() if v} == \
        dict(reasons)
    for row in j["rows"]:
        assert set(row) == {"app", "instance", "pid", "mode", "tid", "cpu",
                            "eip",
                            "dso", "symbol", "line", "kind", "reason",
                            "samples", "percent"}
        assert row["cpu"] is None and row["eip"] is None
        assert row["line"] is None and row["mode"] == "all"


def test_hot_functions_get_all_their_samples(parse_bin, symfile, objs):
    """The text report by symbol: each program's hot function, with the
    share computed here."""
    path, truth, _ = symfile
    r = run_parse(parse_bin, "--by", "symbol", "--app", "btree",
                  "--symfs", objs["root"], path)
    assert r.returncode == 0, r.stderr
    assert max(map(len, r.stdout.splitlines())) <= 80
    user = [t for t in truth if t.appid == 3 and t.mode == sf.MODE_USER]
    total = sum(t.count for t in user)
    assert re.search(rf"^Samples by symbol, user mode: {total} samples$",
                     r.stdout, re.M)
    hz = 250    # the session's: samples / HZ is the time column
    for t in user:
        assert re.search(rf"^ +{t.count} +{t.count / hz:.3f}s +"
                         rf"{pct(t.count, total)}% +static +{t.symbol}$",
                         r.stdout, re.M), r.stdout


def test_without_symfs_the_guest_files_are_missing(parse_bin, symfile):
    path, truth, _ = symfile
    r = run_parse(parse_bin, "--by", "symbol", "--format", "json", path)
    j = json.loads(r.stdout)
    user = [t for t in truth if t.mode == sf.MODE_USER]
    assert j["total"] == sum(t.count for t in user)
    assert j["unresolved"]["by_reason"]["file missing"] == sum(
        t.count for t in user if t.dso != "[unknown]")
    assert j["unresolved"]["by_reason"]["no mapping"] == 1
    assert all(row["kind"] == "unresolved" for row in j["rows"])


def test_text_fits_80_columns_and_cuts_long_names(parse_bin, symfile, objs):
    path, _, _ = symfile
    for by in ("symbol", "appid,symbol", "app,dso,symbol", "line",
               "appid,line", "appid,cpu,mode,eip,symbol"):
        r = run_parse(parse_bin, "--by", by, *ALL_MODES, "--symfs",
                      objs["root"], path)
        assert r.returncode == 0, (by, r.stderr)
        lines = r.stdout.splitlines()
        assert max(map(len, lines)) <= 80, (by, r.stdout)
        assert any(LONG[:5] in line and "..." in line for line in lines), by


@pytest.mark.parametrize("by, cols", [
    ("dso", ["dso"]),
    ("symbol", ["dso", "symbol"]),
    ("line", ["dso", "symbol", "line"]),
    ("app,dso,symbol", ["dso", "symbol"]),
    ("cpu,mode", ["cpu"]),
    ("appid,eip,symbol", ["eip", "dso", "symbol"]),
])
def test_csv_columns(parse_bin, symfile, objs, by, cols):
    path, _, _ = symfile
    r = run_parse(parse_bin, "--by", by, "--format", "csv", "--symfs",
                  objs["root"], path)
    assert r.returncode == 0, r.stderr
    assert csv_of(r.stdout)[0] == ["app", "instance", "pid", "mode", *cols,
                                   "samples", "percent"]


def test_by_dso_is_exact(parse_bin, symfile, objs):
    path, truth, _ = symfile
    r = run_parse(parse_bin, "--by", "app,dso", "--format", "csv",
                  *ALL_MODES, "--symfs", objs["root"], path)
    c = truth_rows(truth, lambda t: (NAMES[t.appid][0], t.dso))
    total = sum(c.values())
    want = [[app, "", "", "all", dso, str(n), pct(n, total)]
            for (app, dso), n in sorted(c.items(), key=lambda kv: (
                -kv[1], kv[0][0].encode(), kv[0][1]))]
    assert csv_of(r.stdout)[1:] == want


def addr2line(obj, vaddr):
    out = sh("addr2line", "-e", obj, hex(vaddr)).strip()
    return re.sub(r" \(discriminator \d+\)$", "", out)


def test_source_lines_agree_with_addr2line(parse_bin, symfile, objs):
    path, truth, _ = symfile
    r = run_parse(parse_bin, "--by", "appid,line", "--format", "csv",
                  "--symfs", objs["root"], path)
    assert r.returncode == 0, r.stderr
    rows = csv_of(r.stdout)
    assert rows[0][4:7] == ["dso", "symbol", "line"]
    got = {(row[0], row[1], row[5]): row[6] for row in rows[1:]}
    objs_by_guest = {o.guest: o for o in (objs[k] for k in
                     ("lib", "dyn", "pie", "static", "stripped"))}
    checked = 0
    for t in truth:
        if t.mode != sf.MODE_USER:
            continue
        key = (NAMES[t.appid][0], str(NAMES[t.appid][1]), t.symbol)
        o = objs_by_guest.get(t.dso)
        if t.kind != "symbol" or o is objs["stripped"]:
            assert got[key] == "??", key
            continue
        assert got[key] == addr2line(o.path, t.ip - o.base), key
        checked += 1
    assert checked >= 6


# ---------------------------------------------------------------- kernel

def kernel_json(parse_bin, path, *args):
    r = run_parse(parse_bin, "--by", "symbol", "--mode", "kernel",
                  "--format", "json", *args, path)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_kernel_symbols_from_the_kallsyms_next_to_the_file(parse_bin,
                                                           symfile):
    path, truth, _ = symfile
    j = kernel_json(parse_bin, path)
    got = {(row["dso"], row["symbol"]): row["samples"] for row in j["rows"]}
    assert got == {(t.dso, t.symbol): t.count for t in truth
                   if t.mode == sf.MODE_KERNEL}
    assert j["unresolved"]["by_reason"]["no symbol"] == 1


def test_kallsyms_option_and_missing_symbols(parse_bin, symfile, objs,
                                             tmp_path):
    path, truth, _ = symfile
    nkernel = sum(t.count for t in truth if t.mode == sf.MODE_KERNEL)
    other = tmp_path / "other.kallsyms"
    other.write_text(KALLSYMS.replace("do_syscall_64", "renamed_entry"))
    j = kernel_json(parse_bin, path, "--kallsyms", other)
    assert j["kernel_symbols"] == str(other)
    assert {row["symbol"] for row in j["rows"]} >= {"renamed_entry"}
    # No symbols at all: every kernel IP unresolved, with the reason.
    Path(str(path) + ".kallsyms").unlink()
    j = kernel_json(parse_bin, path)
    assert j["kernel_symbols"] is None
    assert j["unresolved"]["by_reason"]["no kernel symbols"] == nkernel
    assert {row["dso"] for row in j["rows"]} == {"[kernel.kallsyms]"}
    # Another kernel's copy (its release comment says so).
    other.write_text("# release 5.10.0-other\n" + KALLSYMS)
    j = kernel_json(parse_bin, path, "--kallsyms", other)
    assert j["unresolved"]["by_reason"]["no kernel symbols"] == nkernel
    r = run_parse(parse_bin, "--by", "symbol", "--kallsyms", other, path)
    assert "5.10.0-other" in r.stdout
    # Addresses hidden by kptr_restrict.
    other.write_text(re.sub(r"^[0-9a-f]{16}", "0" * 16, KALLSYMS,
                            flags=re.M))
    j = kernel_json(parse_bin, path, "--kallsyms", other)
    assert j["unresolved"]["by_reason"]["no kernel symbols"] == nkernel
    # A copy of another kernel (symbols elsewhere): nothing resolves, and
    # parse warns.
    other.write_text(KALLSYMS.replace("ffffffff8", "ffffffff9").replace(
        "ffffffffc", "ffffffffd"))
    f, _, _ = sym_session(objs)
    for _ in range(10):
        f.sample(1, K_SYSCALL, mode=sf.MODE_KERNEL)
    f.write(path)
    r = run_parse(parse_bin, "--by", "symbol", "--mode", "kernel",
                  "--kallsyms", other, path)
    assert r.returncode == 0
    assert "none of 18 kernel samples falls in a function" in r.stderr


@pytest.mark.parametrize("text, what", [
    ("ffffffff81000000 T\n", "line 1"),
    ("zzzz T x\n", "line 1"),
    ("ffffffff81000000 T ok\nffffffff81000100\n", "line 2"),
    ("f" * 2000 + "\n", "line 1: longer than"),
])
def test_bad_kallsyms_is_an_error(parse_bin, symfile, tmp_path, text, what):
    path, _, _ = symfile
    bad = tmp_path / "bad.kallsyms"
    bad.write_text(text)
    r = run_parse(parse_bin, "--by", "symbol", "--kallsyms", bad, path)
    assert r.returncode == 2
    assert r.stderr.startswith("parse: ") and what in r.stderr
    assert len(r.stderr.splitlines()) == 1
    r = run_parse(parse_bin, "--by", "symbol", "--kallsyms",
                  tmp_path / "nope", path)
    assert r.returncode == 2 and "No such file" in r.stderr
    fifo = tmp_path / "fifo"
    subprocess.run(["mkfifo", str(fifo)], check=True)
    r = run_parse(parse_bin, "--by", "symbol", "--kallsyms", fifo, path)
    assert r.returncode == 2 and "not a regular file" in r.stderr


def test_symfs_paths_cannot_climb_out(parse_bin, objs, tmp_path):
    """A hostile MMAP path with ".." must not reach a file outside --symfs,
    even one that is there and would resolve."""
    lib = objs["lib"]
    climb = "/.." * (len(objs["root"].resolve().parts) + 1) + \
        str(lib.path.resolve())
    f = sf.SessionFile()
    ip = lib.ip(mid(functions(lib.path), "hot_lib"))
    for appid, path in ((1, climb), (2, lib.guest)):
        f.appid(appid, "dyn", instance=appid, pid=100 + appid,
                path="/usr/bin/dyn")
        lib.mmap(f, appid, 100 + appid, path=path)
        f.sample(appid, ip, pid=100 + appid, tid=100 + appid)
    f.stats(samples_taken=2, samples_written=2)
    path = tmp_path / "climb.bin"
    f.write(path)
    r = run_parse(parse_bin, "--by", "appid,symbol", "--format", "json",
                  "--symfs", objs["root"], path)
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    reasons = {k: v for k, v in j["unresolved"]["by_reason"].items() if v}
    assert reasons == {"file missing": 1}
    got = {(row["instance"], row["symbol"]) for row in j["rows"]}
    assert (2, "hot_lib") in got and (1, "hot_lib") not in got
    # Without --symfs the absolute path is the session's to name.
    r = run_parse(parse_bin, "--by", "appid,symbol", "--format", "json", path)
    got = {(row["instance"], row["symbol"])
           for row in json.loads(r.stdout)["rows"]}
    assert (1, "hot_lib") in got


def test_symfs_must_be_a_directory(parse_bin, symfile, tmp_path):
    path, _, _ = symfile
    for d, what in ((tmp_path / "nope", "No such file"),
                    (path, "not a directory")):
        r = run_parse(parse_bin, "--by", "symbol", "--symfs", d, path)
        assert r.returncode == 2
        assert r.stderr == f"parse: --symfs: {d}: {what}" + \
            ("" if what == "not a directory" else " or directory") + "\n"


def test_lines_from_a_separate_debug_file(parse_bin, objs, tmp_path):
    """An object without DWARF: its lines come from
    /usr/lib/debug/.build-id/xx/yyyy.debug under --symfs."""
    root = tmp_path / "root"
    (root / "usr/lib").mkdir(parents=True)
    full = objs["lib"].path
    lib = root / "usr/lib/libhot.so"
    sh("objcopy", "--strip-debug", full, lib)
    bid = build_id(lib).hex()
    dbg = root / "usr/lib/debug/.build-id" / bid[:2] / (bid[2:] + ".debug")
    dbg.parent.mkdir(parents=True)
    sh("objcopy", "--only-keep-debug", full, dbg)
    o = Obj(lib, "/usr/lib/libhot.so", 0x7f0000000000)
    f = sf.SessionFile()
    f.appid(1, "loop", pid=1)
    o.mmap(f, 1, 1)
    vaddr = mid(functions(lib), "hot_lib")
    for _ in range(3):
        f.sample(1, o.ip(vaddr))
    f.stats(samples_taken=3, samples_written=3)
    path = f.write(tmp_path / "s.bin")
    r = run_parse(parse_bin, "--by", "line", "--format", "csv", "--symfs",
                  root, path)
    assert r.returncode == 0, r.stderr
    assert csv_of(r.stdout)[1][4:7] == ["/usr/lib/libhot.so", "hot_lib",
                                        addr2line(full, vaddr)]
    dbg.unlink()
    r = run_parse(parse_bin, "--by", "line", "--format", "csv", "--symfs",
                  root, path)
    assert csv_of(r.stdout)[1][6] == "??"


VMLINUX_C = r"""
const char linux_banner[] = "Linux version %s (test) #1 SMP\n";
void entry_one(void) { __asm__ volatile("nop; nop; nop; nop; nop; nop"); }
void entry_two(void) { __asm__ volatile("nop; nop; nop; nop; nop; nop"); }
"""


@pytest.fixture(scope="session")
def vmlinux(tmp_path_factory):
    """A fake vmlinux linked at the kernel's address, with a banner."""
    d = tmp_path_factory.mktemp("vmlinux")
    out = {}
    for rel in ("6.1.0-sleepy", "6.1.0-other"):
        (d / "v.c").write_text(VMLINUX_C.replace("%s", rel))
        obj = d / "v.o"
        sh("gcc", "-c", "-O1", "-g", "-mcmodel=kernel", "-fno-pic",
           "-ffreestanding", "-o", obj, d / "v.c")
        v = d / f"vmlinux-{rel}"
        sh("ld", "-static", "-e", "entry_one", "-Ttext=0xffffffff81000000",
           "-o", v, obj)
        out[rel] = v
    return out


def test_vmlinux_symbols_and_release_check(parse_bin, tmp_path, vmlinux):
    v = vmlinux["6.1.0-sleepy"]
    syms = functions(v)
    f = sf.SessionFile(release="6.1.0-sleepy")
    f.appid(1, "k", pid=1)
    for name, n in (("entry_one", 3), ("entry_two", 2)):
        for _ in range(n):
            f.sample(1, syms[name][0] + 1, mode=sf.MODE_KERNEL)
    f.stats(samples_taken=5, samples_written=5)
    path = f.write(tmp_path / "s.bin")
    j = kernel_json(parse_bin, path, "--vmlinux", v)
    assert j["kernel_symbols"] == str(v)
    assert [(row["dso"], row["symbol"], row["samples"]) for row in j["rows"]] \
        == [("[kernel.kallsyms]", "entry_one", 3),
            ("[kernel.kallsyms]", "entry_two", 2)]
    r = run_parse(parse_bin, "--annotate", "entry_one", "--mode", "kernel",
                  "--vmlinux", v, path)
    assert r.returncode == 0, r.stderr
    assert re.search(r"^ +3 +100\.00% +ffffffff8100000\w +nop", r.stdout,
                     re.M), r.stdout
    j = kernel_json(parse_bin, path, "--vmlinux", vmlinux["6.1.0-other"])
    assert j["unresolved"]["by_reason"]["no kernel symbols"] == 5


# ---------------------------------------------------------------- annotate

def objdump_addresses(obj, name):
    """The instruction addresses of function name, from objdump."""
    out = sh("objdump", "-d", "--no-show-raw-insn", obj)
    m = re.search(rf"^[0-9a-f]+ <{re.escape(name)}>:\n(.*?)(?:\n\n|\Z)",
                  out, re.M | re.S)
    return [int(line.split(":")[0], 16) for line in m.group(1).splitlines()
            if re.match(r"^ +[0-9a-f]+:", line)]


def annotation_rows(text):
    """(address, samples) of each instruction line."""
    rows = []
    for line in text.splitlines():
        m = re.match(r"^( {0,7}\d+| {8})  ( {0,2}[\d.]+%| {7})  "
                     r"([0-9a-f]+) +\S", line)
        if m:
            rows.append((int(m.group(3), 16),
                         int(m.group(1)) if m.group(1).strip() else 0))
    return rows


def test_annotate_counts_per_instruction(parse_bin, symfile, objs):
    path, truth, _ = symfile
    lib = objs["lib"]
    r = run_parse(parse_bin, "--annotate", "hot_lib", "--appid", "loop#0",
                  "--symfs", objs["root"], path)
    assert r.returncode == 0, r.stderr
    assert "Annotation of hot_lib in /usr/lib/libhot.so" in r.stdout
    rows = annotation_rows(r.stdout)
    addrs = objdump_addresses(lib.path, "hot_lib")
    assert [a for a, _ in rows] == addrs
    # The sample address lies inside one instruction: all 11 samples there.
    hot = next(t for t in truth if t.appid == 1 and t.symbol == "hot_lib")
    vaddr = hot.ip - lib.base
    want = max(a for a in addrs if a <= vaddr)
    assert [(a, n) for a, n in rows if n] == [(want, hot.count)]
    assert re.search(rf"^ +{hot.count} +100\.00% +{want:x} ", r.stdout, re.M)


def test_annotate_all_instances_and_objects(parse_bin, symfile, objs):
    path, truth, _ = symfile
    r = run_parse(parse_bin, "--annotate", "hot_lib", "--symfs",
                  objs["root"], path)
    assert r.returncode == 0, r.stderr
    heads = re.findall(r"^Annotation of hot_lib in (\S+)$", r.stdout, re.M)
    assert heads == ["/usr/lib/libhot.so", "/usr/bin/static"]
    lib_n = sum(t.count for t in truth if t.symbol == "hot_lib" and
                t.dso == "/usr/lib/libhot.so")
    assert re.search(rf"^  {lib_n} samples, ", r.stdout, re.M)


def test_annotate_errors(parse_bin, symfile, objs):
    path, _, _ = symfile
    for args, what in ((["--annotate", "no_such_function"], "no samples"),
                       (["--annotate", "do_syscall_64", "--mode", "kernel"],
                        "needs --vmlinux"),
                       (["--annotate", "hot_lib", "--app", "call",
                         "--cpu", "7"], "no samples")):
        r = run_parse(parse_bin, *args, "--symfs", objs["root"], path)
        assert r.returncode == 2, args
        assert r.stderr.startswith("parse: ") and what in r.stderr
        assert len(r.stderr.splitlines()) == 1


# ---------------------------------------------------------------- hostile

def test_overlapping_and_hostile_mappings(parse_bin, objs, tmp_path):
    """A later MMAP record wins where it overlaps an earlier one; a length
    that wraps around, a zero length and mappings of other appids are
    handled without a wrong symbol."""
    lib = objs["lib"]
    syms = functions(lib.path)
    f = sf.SessionFile()
    f.appid(1, "loop", pid=1)
    f.appid(2, "call", pid=2)
    # A junk mapping over the library's range, then the library over it:
    # the library wins (later).
    off, vaddr, filesz, _ = lib.text
    f.mmap(1, lib.base, 1 << 40, path="/usr/lib/libgone.so")
    lib.mmap(f, 1)
    hot = lib.ip(mid(syms, "hot_lib"))
    # Appid 2: the library first, then junk over it (junk wins), a
    # mapping whose length wraps past 2^64, and one of length zero.
    lib.mmap(f, 2)
    f.mmap(2, hot & ~(PAGE - 1), PAGE, path="/usr/lib/libgone.so")
    f.mmap(2, 0xffff_0000_0000_0000 - PAGE, 0xffff_ffff_ffff_ffff,
           path="/usr/lib/libwrap.so")
    f.mmap(2, 0x1000, 0, path="/usr/lib/libzero.so")
    for appid, ip, n in ((1, hot, 4), (2, hot, 3), (2, 0x1800, 2),
                         (2, 0xffff_0000_0000_0000 + 8, 1)):
        for _ in range(n):
            f.sample(appid, ip)
    f.stats(samples_taken=10, samples_written=10)
    path = f.write(tmp_path / "s.bin")
    r = run_parse(parse_bin, "--by", "appid,symbol", "--format", "csv",
                  "--symfs", objs["root"], path)
    assert r.returncode == 0, r.stderr
    got = {(row[0], row[4], row[5]): int(row[6])
           for row in csv_of(r.stdout)[1:]}
    page_off = (hot & (PAGE - 1))
    assert got == {
        ("loop", "/usr/lib/libhot.so", "hot_lib"): 4,
        ("call", "/usr/lib/libgone.so", f"libgone.so+{page_off:#x}"): 3,
        ("call", "[unknown]", "[unknown]+0x1800"): 2,
        ("call", "/usr/lib/libwrap.so", f"libwrap.so+{PAGE + 8:#x}"): 1,
    }


BAD_BUILD_ID_LEN = bytearray(sf.mmap_record(1, 0, 1, path="/bin/x"))
BAD_BUILD_ID_LEN[44] = 21       # struct sleepy_rec_mmap.build_id_len
BAD_BUILD_ID_LEN = bytes(BAD_BUILD_ID_LEN)


@pytest.mark.parametrize("rec, what", [
    (sf.mmap_record(1, 0, 1, path="/bin/x")[:-1] + b"x", "not NUL"),
    (sf.mmap_record(1, 0, 1, path="/bin/x", size=70), "path of 6 bytes"),
    (BAD_BUILD_ID_LEN, "build_id_len 21"),
])
def test_bad_mmap_records_name_their_offset(parse_bin, tmp_path, rec, what):
    f = sf.SessionFile()
    f.sample(1, 0x10)
    off = f.add(rec + b"\0" * 8)
    f.stats(samples_taken=1, samples_written=1)
    path = f.write(tmp_path / "s.bin")
    r = run_parse(parse_bin, "--by", "symbol", path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.endswith(f" at byte offset {off}\n"), r.stderr
    assert what in r.stderr


def test_many_mappings_stay_fast(parse_bin, objs, tmp_path):
    """100,000 overlapping MMAP records of one appid: resolved at once."""
    lib = objs["lib"]
    f = sf.SessionFile()
    f.appid(1, "loop", pid=1)
    for i in range(100_000):
        f.mmap(1, 0x10000000 + 0x1000 * (i % 5000), 0x100000 + i,
               path=f"/usr/lib/lib{i % 7}.so")
    lib.mmap(f, 1)
    hot = lib.ip(mid(functions(lib.path), "hot_lib"))
    for i in range(1000):
        f.sample(1, hot if i % 2 else 0x10000000 + 64 * i)
    f.stats(samples_taken=1000, samples_written=1000)
    path = f.write(tmp_path / "s.bin")
    r = run_parse(parse_bin, "--by", "symbol", "--format", "json", "--symfs",
                  objs["root"], path)
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["rows"]
    assert rows[0]["symbol"] == "hot_lib" and rows[0]["samples"] == 500
    assert sum(row["samples"] for row in rows) == 1000


# ---------------------------------------------------------------- SQLite

def doc_queries():
    """The ten queries of Documentation/parse.md: {"Q1": sql, ...}."""
    text = DOC.read_text()
    found = re.findall(r"^### (Q\d+)\. [^\n]*\n\n```sql\n(.*?)```", text,
                       re.M | re.S)
    return dict(found)


def sqlite_rows(db, sql):
    r = subprocess.run(["sqlite3", "-bail", "-csv", str(db), sql],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and not r.stderr, (sql, r.stderr)
    return csv_of(r.stdout)


def norm(rows):
    """Rows with numbers as floats, for comparing SQLite's text."""
    def cell(v):
        try:
            return round(float(v), 6)
        except (TypeError, ValueError):
            return "" if v is None else str(v)
    return [[cell(v) for v in row] for row in rows]


def expected_queries(truth, samples, objs):
    """What each documented query returns on the test session, computed
    from the ground truth."""
    info = {(t.appid, t.ip): t for t in truth}
    rows = []
    for s in samples:
        t = info[(s.appid, s.ip)]
        name, inst, pid = NAMES[s.appid]
        rows.append(dict(appid=s.appid, app=name, inst=inst, pid=pid,
                         mode=["user", "kernel", "irq", "idle"][s.mode],
                         cpu=s.cpu, slice=s.time_ns // 100_000_000,
                         dso=t.dso, sym=t.symbol, kind=t.kind,
                         reason=t.reason, ip=s.ip))
    total = len(rows)
    C = collections.Counter
    q = {}
    by_sym = C((r["dso"], r["sym"]) for r in rows)
    top = sorted(by_sym.items(), key=lambda kv: (-kv[1], kv[0]))
    q["Q1"] = [[d, s, n, round(100 * n / total, 2)] for (d, s), n in top[:10]]
    per_app = collections.defaultdict(C)
    for r in rows:
        per_app[r["app"]][(r["dso"], r["sym"])] += 1
    q["Q2"] = []
    for app in sorted(per_app):
        ranked = sorted(per_app[app].items(),
                        key=lambda kv: (-kv[1], kv[0][1]))
        q["Q2"] += [[app, s, n] for (_, s), n in ranked[:3]]
    loop = collections.defaultdict(lambda: [0, 0])
    for r in rows:
        if r["app"] == "loop":
            loop[(r["dso"], r["sym"])][r["inst"]] += 1
    q["Q3"] = [[s, a, b] for (d, s), (a, b) in sorted(
        loop.items(), key=lambda kv: (-sum(kv[1]), kv[0][1]))]
    per_appid = C(r["appid"] for r in rows)
    q["Q4"] = sorted(([f"{NAMES[a][0]}#{NAMES[a][1]}", NAMES[a][2], "",
                       "exec", n] for a, n in per_appid.items()),
                     key=lambda x: (-x[4], x[0]))
    q["Q5"] = [[round(sl * 0.1, 3), app, n] for (sl, app), n in
               sorted(C((r["slice"], r["app"]) for r in rows).items())]
    q["Q6"] = []
    for app in per_app:
        m = C(r["mode"] for r in rows if r["app"] == app)
        q["Q6"].append([app, m["user"], m["kernel"], m["irq"], m["idle"],
                        sum(m.values())])
    q["Q6"].sort(key=lambda x: (-x[5], x[0]))
    q["Q7"] = [[c, m, n] for (c, m), n in
               sorted(C((r["cpu"], r["mode"]) for r in rows).items())]
    unres = collections.defaultdict(lambda: [set(), 0])
    for r in rows:
        if r["kind"] == "unresolved":
            unres[r["reason"]][0].add(r["dso"])
            unres[r["reason"]][1] += 1
    q["Q8"] = sorted(([k, len(v[0]), v[1]] for k, v in unres.items()),
                     key=lambda x: (-x[2], x[0]))
    user_sym = C((r["dso"], r["sym"]) for r in rows
                 if r["mode"] == "user" and r["kind"] == "symbol")
    (hd, hs), _ = sorted(user_sym.items(), key=lambda kv: (-kv[1],
                                                           kv[0]))[0]
    assert (hd, hs) == ("/usr/lib/libhot.so", "hot_lib")
    lib = objs["lib"]
    hot = [r for r in rows if (r["dso"], r["sym"]) == (hd, hs)]
    lines = C(addr2line(lib.path, r["ip"] - lib.base) for r in hot)
    q["Q9"] = sorted(([k, n] for k, n in lines.items()),
                     key=lambda x: (-x[1], x[0]))
    eips = C(r["ip"] for r in hot)
    q["Q10"] = [[hex(ip), n] for ip, n in sorted(eips.items())]
    return q


def test_sqlite_database_and_documented_queries(parse_bin, symfile, objs,
                                                tmp_path):
    path, truth, samples = symfile
    db = tmp_path / "s.db"
    db.write_text("old contents are replaced")
    r = run_parse(parse_bin, "--by", "symbol", "--mode", "all", "--sqlite",
                  db, "--symfs", objs["root"], path)
    assert r.returncode == 0, r.stderr
    # The tables hold what the session says.
    assert sqlite_rows(db, "SELECT hz, release, sample_records, samples, "
                       "slice_ns, kernel_symbols FROM session") == \
        [["250", "6.1.0-sleepy", str(len(samples)), str(len(samples)),
          "100000000", str(path) + ".kallsyms"]]
    assert sqlite_rows(db, "SELECT appid, name, instance, pid FROM appids "
                       "ORDER BY appid") == \
        [[str(a), n, str(i), str(p)] for a, n, i, p in SYM_APPIDS]
    assert sqlite_rows(db, "SELECT COUNT(*) FROM mappings") == [["9"]]
    assert sqlite_rows(db, "SELECT SUM(samples) FROM samples") == \
        [[str(len(samples))]]
    got = sqlite_rows(db, "SELECT appid, printf('0x%x', eip), dso, symbol, "
                      "kind, COALESCE(reason, '') FROM symbols")
    want = {(str(t.appid), hex(t.ip), t.dso, t.symbol, t.kind,
             t.reason or "") for t in truth}
    assert sorted(map(tuple, got)) == sorted(want)
    assert {row[0] for row in sqlite_rows(
        db, "SELECT name FROM sqlite_master WHERE type = 'index'")} >= {
        "samples_appid_eip", "samples_slice", "symbols_symbol"}
    # The documented queries, as written.
    queries = doc_queries()
    assert sorted(queries, key=lambda k: int(k[1:])) == \
        [f"Q{i}" for i in range(1, 13)]
    want = expected_queries(truth, samples, objs)
    # Without call chains a stack is the sampled IP alone: a function's
    # inclusive samples are its own, and nothing calls find_index.
    # (test_parse_stacks.py runs Q11 and Q12 on call chains.)
    want["Q11"] = [[d, s, n, p] for d, s, n, p in want["Q1"]]
    want["Q12"] = []
    for name, sql in queries.items():
        assert norm(sqlite_rows(db, sql)) == norm(want[name]), name


def test_sqlite_keeps_the_filtered_samples(parse_bin, symfile, objs,
                                           tmp_path):
    path, truth, samples = symfile
    db = tmp_path / "f.db"
    r = run_parse(parse_bin, "--by", "appid", "--app", "loop", "--sqlite",
                  db, "--slice-ms", "50", "--symfs", objs["root"], path)
    assert r.returncode == 0, r.stderr
    n = sum(1 for s in samples if NAMES[s.appid][0] == "loop" and
            s.mode == sf.MODE_USER)
    assert sqlite_rows(db, "SELECT samples, slice_ns, mode_filter, filters "
                       "FROM session") == [[str(n), "50000000", "user",
                                            "app loop"]]
    assert sqlite_rows(db, "SELECT SUM(samples), MAX(slice) FROM samples") \
        == [[str(n), str(max(s.time_ns for s in samples
                              if NAMES[s.appid][0] == "loop" and
                              s.mode == sf.MODE_USER) // 50_000_000)]]
    r = run_parse(parse_bin, "--sqlite", tmp_path / "no/such.db", path)
    assert r.returncode == 1 and "no/such.db" in r.stderr


def test_mapped_paths_that_are_not_elf_files(parse_bin, tmp_path):
    """A FIFO, a directory and a text file named by MMAP records: 'not
    ELF', never a hang."""
    root = tmp_path / "root"
    root.mkdir()
    subprocess.run(["mkfifo", str(root / "fifo")], check=True)
    (root / "dir").mkdir()
    (root / "text").write_text("hello\n")
    f = sf.SessionFile()
    f.appid(1, "x", pid=1)
    for i, name in enumerate(("fifo", "dir", "text")):
        start = 0x10000000 * (i + 1)
        f.mmap(1, start, 0x1000, path=f"/{name}")
        f.sample(1, start + 0x10)
    f.stats(samples_taken=3, samples_written=3)
    path = f.write(tmp_path / "s.bin")
    r = run_parse(parse_bin, "--by", "symbol", "--format", "json", "--symfs",
                  root, path)
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["unresolved"]["by_reason"]["not ELF"] == 3
    assert sorted(row["symbol"] for row in j["rows"]) == \
        ["dir+0x10", "fifo+0x10", "text+0x10"]


@pytest.fixture(scope="session")
def guest_parse(user_build):
    return user_build("parse", "guest") / "guest" / "parse"


def test_static_guest_parse_symbolizes_like_the_host(parse_bin, guest_parse,
                                                     symfile, objs):
    """The guest's static parse has every feature (libelf, libdw,
    capstone, SQLite linked in)."""
    path, _, _ = symfile
    assert "statically linked" in sh("file", guest_parse)
    for args in (["--by", "appid,line", "--mode", "all", "--format", "csv"],
                 ["--annotate", "hot_lib"]):
        host = run_parse(parse_bin, *args, "--symfs", objs["root"], path)
        guest = run_parse(guest_parse, *args, "--symfs", objs["root"], path)
        assert host.returncode == 0 and guest.returncode == 0, guest.stderr
        assert guest.stdout == host.stdout
    db = path.parent / "g.db"
    r = run_parse(guest_parse, "--by", "symbol", "--sqlite", db, path)
    assert r.returncode == 0, r.stderr
    assert sqlite_rows(db, "SELECT COUNT(*) FROM symbols") != [["0"]]


CXX_SRC = r"""
namespace ns {
struct Hot {
	static int spin(int n);
};

__attribute__((noinline)) int Hot::spin(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += i;
	return s;
}

__attribute__((noinline)) double over(double x)
{
	return x * 2 + 1;
}

__attribute__((noinline)) int over(int x)
{
	return x * 3 + Hot::spin(x);
}
}
"""


def test_cxx_names_are_demangled_as_cxxfilt_does(parse_bin, tmp_path):
    """C++ functions are named as binutils' c++filt names them, overloads
    apart, in an unstripped library and in a stripped one (.dynsym)."""
    src = tmp_path / "hot.cc"
    src.write_text(CXX_SRC)
    root = tmp_path / "root"
    (root / "usr/lib").mkdir(parents=True)
    lib = root / "usr/lib/libcxx.so"
    sh("g++", "-g", "-O0", "-fPIC", "-shared", "-o", lib, src)
    stripped = root / "usr/lib/libcxx-stripped.so"
    sh("strip", "--strip-all", "-o", stripped, lib)
    syms = {n: v for n, v in functions(lib).items() if n.startswith("_ZN2ns")}
    assert len(syms) == 3, syms
    plain = dict(zip(syms, sh("c++filt", *syms).splitlines()))
    assert set(plain.values()) == {"ns::Hot::spin(int)", "ns::over(double)",
                                   "ns::over(int)"}
    f = sf.SessionFile()
    f.appid(1, "cxx", pid=7, path="/usr/bin/cxx")
    objs = [Obj(lib, "/usr/lib/libcxx.so", 0x7f6000000000),
            Obj(stripped, "/usr/lib/libcxx-stripped.so", 0x7f7000000000)]
    for o in objs:
        o.mmap(f, 1, 7)
        for name in syms:
            f.sample(1, o.ip(mid(syms, name)), pid=7, tid=7)
    f.stats(samples_taken=6, samples_written=6)
    path = f.write(tmp_path / "s.slp")
    r = run_parse(parse_bin, "--by", "symbol", "--format", "csv", "--symfs",
                  root, path)
    assert r.returncode == 0, r.stderr
    got = {(x[4], x[5]) for x in csv_of(r.stdout)[1:]}
    assert got == {(o.guest, plain[n]) for o in objs for n in syms}, got
