"""Debug info for stripped objects, as Debian ships them (host, no VM):
parse finds a stripped library's separate debug file by build-id under
/usr/lib/debug/.build-id, by its .gnu_debuglink (CRC checked), and from a
debuginfod server (Debian's own `debuginfod`, started here on 127.0.0.1
over a folder of `objcopy --only-keep-debug` files), and then names the
library's static functions and source lines, which .dynsym cannot.

The truth is the unstripped library: `nm` gives each function's range and
`addr2line` the line of each sampled address. Each way is checked alone:
the others are absent, and without it the same sample stays a bracket.
"""
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

import sleepyfile as sf
from test_parse_symbols import Obj, functions, mid, sh

LIB_C = r"""
__attribute__((noinline)) int dbg_entry(int n)
{
	return n * 2;
}

__attribute__((noinline, used)) static int dbg_hidden_hot(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s ^= i * 7;
	return s;
}

__attribute__((noinline)) int dbg_after(int n)
{
	return dbg_hidden_hot(n) + 1;
}
"""
GUEST = "/usr/lib/libdbg.so"
BASE = 0x7f3000000000


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    """The library built with -g, its debug file, and stripped copies
    with and without a .gnu_debuglink; plus a second build of another
    source whose debug file has the same name (a wrong CRC)."""
    d = tmp_path_factory.mktemp("dbg")
    (d / "dbg.c").write_text(LIB_C)
    (d / "other.c").write_text(LIB_C.replace("7", "9"))
    full = d / "libdbg.full.so"
    sh("gcc", "-g", "-O0", "-fPIC", "-shared", "-o", full, d / "dbg.c")
    other = d / "libother.so"
    sh("gcc", "-g", "-O0", "-fPIC", "-shared", "-o", other, d / "other.c")
    (d / "debug").mkdir()
    sh("objcopy", "--only-keep-debug", full, d / "debug" / "libdbg.debug")
    sh("objcopy", "--only-keep-debug", other, d / "other.debug")
    sh("strip", "--strip-all", "-o", d / "libdbg.nolink.so", full)
    sh("objcopy", "--strip-all",
       f"--add-gnu-debuglink={d / 'debug' / 'libdbg.debug'}", full,
       d / "libdbg.link.so")
    syms = functions(full)
    ip = BASE + mid(syms, "dbg_hidden_hot")
    line = sh("addr2line", "-e", full, hex(ip - BASE)).split(" (")[0].strip()
    # A stripped program (a PIE) too, its debug file in the same folder.
    (d / "main.c").write_text("int dbg_after(int n);\n"
                              "int main(void) { return dbg_after(3); }\n")
    exe = d / "dbgprog.full"
    sh("gcc", "-g", "-O0", "-fPIE", "-pie", "-o", exe, d / "dbg.c",
       d / "main.c")
    sh("objcopy", "--only-keep-debug", exe, d / "debug" / "dbgprog.debug")
    sh("strip", "--strip-all", "-o", d / "dbgprog", exe)
    exe_off = mid(functions(exe), "dbg_hidden_hot")
    exe_line = sh("addr2line", "-e", exe, hex(exe_off)).split(" (")[0]
    return {"dir": d, "full": full, "ip": ip, "line": line,
            "debug": d / "debug" / "libdbg.debug", "exe_off": exe_off,
            "exe_line": exe_line.strip()}


def install(lib, root, variant):
    """root/usr/lib/libdbg.so: the stripped variant ("nolink", "link")."""
    (root / "usr/lib").mkdir(parents=True, exist_ok=True)
    dst = root / "usr/lib/libdbg.so"
    shutil.copy(lib["dir"] / f"libdbg.{variant}.so", dst)
    return dst


def session(obj, ip, path):
    f = sf.SessionFile()
    f.appid(1, "dbgprog", pid=100, path="/usr/bin/dbgprog")
    obj.mmap(f, 1, 100, path=GUEST)
    for k in range(5):
        f.sample(1, ip, pid=100, tid=100, time_ns=k * 1_000_000)
    f.stats(samples_taken=5, samples_written=5)
    f.write(path)
    return path


def report(parse_bin, lib, root, tmp_path, env=None, *args):
    """parse's one row for the sample: (symbol, line) by --by line."""
    obj = Obj(root / "usr/lib/libdbg.so", GUEST, BASE)
    path = session(obj, lib["ip"], tmp_path / "s.slp")
    e = {k: v for k, v in os.environ.items() if not k.startswith("DEBUGINFOD")}
    e.update(env or {})
    r = subprocess.run([str(parse_bin), "--symfs", str(root), "--by", "line",
                        "--format", "csv", *args, str(path)],
                       capture_output=True, text=True, env=e, timeout=60)
    assert r.returncode == 0, r.stderr
    rows = r.stdout.splitlines()
    assert len(rows) == 2, r.stdout
    head = rows[0].split(",")
    row = dict(zip(head, rows[1].split(",")))
    return row["symbol"], row["line"]


BRACKET = ("dbg_entry->dbg_after", "??")


def test_without_debug_info_a_static_function_is_a_bracket(parse_bin, lib,
                                                            tmp_path):
    root = tmp_path / "root"
    install(lib, root, "nolink")
    assert report(parse_bin, lib, root, tmp_path) == BRACKET


def test_by_build_id_under_usr_lib_debug(parse_bin, lib, tmp_path):
    root = tmp_path / "root"
    obj = Obj(install(lib, root, "nolink"), GUEST, BASE)
    bid = obj.build_id.hex()
    dst = root / "usr/lib/debug/.build-id" / bid[:2] / f"{bid[2:]}.debug"
    dst.parent.mkdir(parents=True)
    shutil.copy(lib["debug"], dst)
    assert report(parse_bin, lib, root, tmp_path) == (
        "dbg_hidden_hot", lib["line"])
    # A file there with another build-id is not taken.
    shutil.copy(lib["dir"] / "other.debug", dst)
    assert report(parse_bin, lib, root, tmp_path) == BRACKET


@pytest.mark.parametrize("where", ["usr/lib", "usr/lib/.debug",
                                   "usr/lib/debug/usr/lib"])
def test_by_debuglink(parse_bin, lib, tmp_path, where):
    root = tmp_path / "root"
    install(lib, root, "link")
    (root / where).mkdir(parents=True, exist_ok=True)
    shutil.copy(lib["debug"], root / where / "libdbg.debug")
    assert report(parse_bin, lib, root, tmp_path) == (
        "dbg_hidden_hot", lib["line"])
    # The same name with another CRC-32: not the debug file.
    shutil.copy(lib["dir"] / "other.debug", root / where / "libdbg.debug")
    assert report(parse_bin, lib, root, tmp_path) == BRACKET


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def debuginfod(lib, tmp_path):
    """Debian's debuginfod serving lib's debug folder on 127.0.0.1: its
    URL, once it serves the debug file."""
    if not shutil.which("debuginfod"):
        pytest.fail("debuginfod missing: ./build.sh deps installs it")
    port = free_port()
    srv = subprocess.Popen(
        ["debuginfod", "-p", str(port), "-d", str(tmp_path / "idx.sqlite"),
         "-F", "-t", "1", str(lib["dir"] / "debug")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    bid = Obj(lib["full"], GUEST, BASE).build_id.hex()
    deadline = time.monotonic() + 60
    try:
        while True:
            try:
                with urllib.request.urlopen(
                        f"{url}/buildid/{bid}/debuginfo", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert srv.poll() is None, "debuginfod exited"
            assert time.monotonic() < deadline, "debuginfod never served it"
            time.sleep(0.2)
        yield srv, url
    finally:
        srv.terminate()
        srv.wait(timeout=30)


def test_by_debuginfod_and_its_cache(parse_bin, lib, tmp_path, debuginfod):
    srv, url = debuginfod
    root = tmp_path / "root"
    install(lib, root, "nolink")
    cache = tmp_path / "cache"
    env = {"DEBUGINFOD_URLS": url, "DEBUGINFOD_CACHE_PATH": str(cache)}
    assert report(parse_bin, lib, root, tmp_path, env) == (
        "dbg_hidden_hot", lib["line"])
    # Nothing else could have given it: without the server's URL, the
    # same session has no debug info.
    assert report(parse_bin, lib, root, tmp_path,
                  {"DEBUGINFOD_CACHE_PATH": str(cache)}) == BRACKET
    # The client's cache keeps the file: the server gone, it still works.
    srv.terminate()
    srv.wait(timeout=30)
    assert any(cache.rglob("debuginfo")), list(cache.rglob("*"))
    assert report(parse_bin, lib, root, tmp_path, env) == (
        "dbg_hidden_hot", lib["line"])


def test_a_stripped_program_through_debuginfod_only(parse_bin, lib,
                                                     tmp_path, debuginfod):
    """A stripped PIE: its static function and its line come from the
    server, and without it from nowhere."""
    _, url = debuginfod
    root = tmp_path / "root"
    (root / "usr/bin").mkdir(parents=True)
    shutil.copy(lib["dir"] / "dbgprog", root / "usr/bin/dbgprog")
    obj = Obj(root / "usr/bin/dbgprog", "/usr/bin/dbgprog", 0x555555554000)
    f = sf.SessionFile()
    f.appid(1, "dbgprog", pid=100, path="/usr/bin/dbgprog")
    obj.mmap(f, 1, 100)
    ip = obj.ip(lib["exe_off"])
    for k in range(4):
        f.sample(1, ip, pid=100, tid=100, time_ns=k * 1_000_000)
    f.stats(samples_taken=4, samples_written=4)
    path = f.write(tmp_path / "p.slp")
    by_line = ("--symfs", root, "--by", "line", "--format", "csv", path)
    env = {"DEBUGINFOD_URLS": url,
           "DEBUGINFOD_CACHE_PATH": str(tmp_path / "cache")}
    got = row(parse_cmd(parse_bin, *by_line, env=env))
    assert (got["dso"], got["symbol"], got["line"]) == (
        "/usr/bin/dbgprog", "dbg_hidden_hot", lib["exe_line"])
    got = row(parse_cmd(parse_bin, *by_line))
    assert got["symbol"] != "dbg_hidden_hot" and got["line"] == "??", got


def test_static_guest_parse_has_no_debuginfod_but_finds_files(
        user_build, lib, tmp_path):
    """The guest's parse (static, no libdebuginfod) still finds debug
    files by build-id and debuglink."""
    guest_parse = user_build("parse", "guest") / "guest" / "parse"
    root = tmp_path / "root"
    install(lib, root, "link")
    shutil.copy(lib["debug"], root / "usr/lib" / "libdbg.debug")
    assert report(guest_parse, lib, root, tmp_path) == (
        "dbg_hidden_hot", lib["line"])


# ---------------------------------------------------------------- --archive

def parse_cmd(parse_bin, *args, env=None, **kw):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("DEBUGINFOD")}
    e.update(env or {})
    return subprocess.run([str(parse_bin), *map(str, args)],
                          capture_output=True, text=True, env=e, timeout=60,
                          **kw)


def archived(lib, root, tmp_path):
    """A session of the debuglink variant installed in root with its debug
    file beside it: (session, build-id hex)."""
    obj = Obj(install(lib, root, "link"), GUEST, BASE)
    shutil.copy(lib["debug"], root / "usr/lib" / "libdbg.debug")
    return session(obj, lib["ip"], tmp_path / "s.slp"), obj.build_id.hex()


def test_archive_copies_files_by_build_id(parse_bin, lib, tmp_path):
    root = tmp_path / "root"
    slp, bid = archived(lib, root, tmp_path)
    arch = tmp_path / "arch"
    r = parse_cmd(parse_bin, "--symfs", root, "--archive", arch, slp)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(
        f"archived 1 ELF files and 1 debug files in {arch} (2 files, "), \
        r.stdout
    base = arch / ".build-id" / bid[:2] / bid[2:]
    assert base.read_bytes() == (root / "usr/lib/libdbg.so").read_bytes()
    assert Path(f"{base}.debug").read_bytes() == lib["debug"].read_bytes()
    assert sorted(p.name for p in base.parent.iterdir()) == [
        bid[2:], f"{bid[2:]}.debug"]
    # Again: the files are there already; nothing is written.
    r = parse_cmd(parse_bin, "--symfs", root, "--archive", arch, slp)
    assert "(0 files, 0 bytes written now)" in r.stdout, r.stdout


def row(r):
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 2, r.stdout
    return dict(zip(lines[0].split(","), lines[1].split(",")))


def test_buildid_dir_reads_a_session_whose_files_are_gone_or_rebuilt(
        parse_bin, lib, tmp_path):
    root = tmp_path / "root"
    slp, _ = archived(lib, root, tmp_path)
    arch = tmp_path / "arch"
    assert parse_cmd(parse_bin, "--symfs", root, "--archive", arch,
                     slp).returncode == 0
    by_line = ("--by", "line", "--format", "csv")
    # Deleted: the recorded path is empty.
    shutil.rmtree(root)
    root.mkdir()
    gone = row(parse_cmd(parse_bin, "--symfs", root, *by_line, slp))
    assert gone["symbol"] == "libdbg.so+" + gone["symbol"].split("+")[1]
    got = row(parse_cmd(parse_bin, "--symfs", root, "--buildid-dir", arch,
                        *by_line, slp))
    assert (got["dso"], got["symbol"], got["line"]) == (
        GUEST, "dbg_hidden_hot", lib["line"])
    # Rebuilt: another build at the path; the archive's copy is taken.
    (root / "usr/lib").mkdir(parents=True)
    shutil.copy(lib["dir"] / "libother.so", root / "usr/lib/libdbg.so")
    r = parse_cmd(parse_bin, "--symfs", root, *by_line, "--format", "json",
                  slp)
    assert '"build-id mismatch"' in r.stdout, r.stdout
    got = row(parse_cmd(parse_bin, "--symfs", root, "--buildid-dir", arch,
                        *by_line, slp))
    assert (got["symbol"], got["line"]) == ("dbg_hidden_hot", lib["line"])


def no_big_files():
    import resource
    import signal
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


def test_archive_errors_are_one_line_and_leave_no_partial_file(
        parse_bin, lib, tmp_path):
    root = tmp_path / "root"
    slp, bid = archived(lib, root, tmp_path)
    afile = tmp_path / "a-file"
    afile.write_text("x")
    r = parse_cmd(parse_bin, "--symfs", root, "--archive", afile, slp)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == f"parse: --archive: {afile}: Not a directory\n"
    # A file size limit (as a full disk): the copy fails, nothing half
    # written stays.
    arch = tmp_path / "arch"
    r = parse_cmd(parse_bin, "--symfs", root, "--archive", arch, slp,
                  preexec_fn=no_big_files)
    assert r.returncode == 1, r
    assert r.stderr == (f"parse: --archive: {arch}/.build-id/{bid[:2]}/"
                        f"{bid[2:]}: File too large\n")
    assert [p.name for p in (arch / ".build-id" / bid[:2]).iterdir()] == []
    for bad in (["--by", "dso"], ["--format", "csv"], ["--sqlite", "x.db"]):
        r = parse_cmd(parse_bin, "--archive", arch, *bad, slp)
        assert r.returncode == 2 and "exclude each other" in r.stderr, r
    r = parse_cmd(parse_bin, "--buildid-dir", afile, slp)
    assert r.returncode == 2
    assert r.stderr == f"parse: --buildid-dir: {afile}: not a directory\n"
