"""libsleepy_lstack, its programs and the tools' logical-stack options, on
the host (no VM; issue 16).

The host kernel has no sleepy_lstack: registration fails there, while
pushes and pops, the names files and the programs work the same. A fake
of the system calls (tests/progs/lstack_fake.c, by LD_PRELOAD) stands in
for the kernel where a test needs a registration or a session file.

    /usr/bin/python3 -m pytest -q -m "not vm" tests/test_lstack_lib.py
"""
import os
import re
import stat
import subprocess
import time
from pathlib import Path

import pytest

from conftest import UAPI, run

# Frame ids of bench/lstack_server.c.
SERVER_FRAMES = {"request": 1, "parse": 2, "plan": 3, "execute": 4,
                 "scan": 5, "sort": 6, "io_wait": 7, "lock_wait": 8}


@pytest.fixture(scope="module")
def out(user_build):
    """OUT with the library, sample_start/stop, the bench and test
    programs built for the host."""
    user_build("syscalls-user", "host")
    user_build("bench", "host")
    return user_build("tests/progs", "host")


@pytest.fixture(scope="module")
def host(out):
    return out / "host"


@pytest.fixture(scope="module")
def fake(host):
    """tests/progs/lstack_fake.so: the system calls as lstack-spec.md has
    them, for LD_PRELOAD."""
    return host / "lstack_fake.so"


def faked(fake, *cmd, timeout=60, cwd=None, log=None):
    env = dict(os.environ, LD_PRELOAD=str(fake))
    if log:
        env["FAKE_LOG"] = str(log)
    return subprocess.run([str(c) for c in cmd], capture_output=True,
                          text=True, env=env, timeout=timeout, cwd=cwd)


def names_file(pid):
    return Path(f"/tmp/sleepy-lstack-{pid}.names")


def peek(host, *ops):
    """lstack_peek's lines after its pid line, and the pid."""
    r = run(host / "lstack_peek", *ops)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("pid=")
    return lines[1:], int(lines[0][4:])


def area(depth, count, frames):
    return (f"depth={depth} count={count} reserved=0 frames=" +
            ",".join(f"{i}:{a}" for i, a in frames))


# ---------------------------------------------------------------- library

def test_the_library_builds_with_its_tls_area(out):
    lib = out / "libsleepy_lstack.a"
    assert lib.exists()
    syms = subprocess.run(["readelf", "-sW", str(lib)], capture_output=True,
                          text=True, check=True).stdout
    tls = [line.split() for line in syms.splitlines()
           if line.endswith(" sleepy_lstack_tls")]
    # 16 + 32 frames of 16 bytes, a thread-local object.
    assert [t[2:5] for t in tls] == [["528", "TLS", "GLOBAL"]], syms
    for fn in ("sleepy_lstack_register", "sleepy_lstack_unregister",
               "sleepy_lstack_name"):
        assert re.search(rf"FUNC +GLOBAL +DEFAULT +\d+ {fn}$", syms,
                         re.M), fn
    sections = subprocess.run(["readelf", "-SW", str(lib)],
                              capture_output=True, text=True,
                              check=True).stdout
    tbss = [line for line in sections.splitlines() if ".tbss" in line]
    assert tbss and int(tbss[0].split()[-1]) % 16 == 0, sections


def instructions_in_loop(binary, function):
    """The instructions of function's loop: from the target of its
    backward jump to the jump."""
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn",
                          str(binary)], capture_output=True, text=True,
                         check=True).stdout
    body = re.search(rf"<{function}>:\n(.*?)\n\n", dis, re.S)[1]
    insns = [(int(m[1], 16), m[2]) for m in
             re.finditer(r"^ *([0-9a-f]+):\t(.*)$", body, re.M)]
    for addr, text in reversed(insns):
        jump = re.match(r"j\w+ +([0-9a-f]+) ", text)
        if jump and int(jump[1], 16) < addr:
            start = int(jump[1], 16)
            return [t for a, t in insns if start <= a <= addr]
    raise AssertionError(f"no loop in {function}:\n{body}")


def test_a_push_and_a_pop_cost_at_most_10_instructions(host):
    """lstack_cost's timed loop of pairs against its empty loop: the
    difference is the pair (the target of issue 16)."""
    pairs = instructions_in_loop(host / "lstack_cost", "pairs_loop")
    empty = instructions_in_loop(host / "lstack_cost", "empty_loop")
    assert len(pairs) - len(empty) <= 10, pairs
    # Plain loads and stores: no lock prefix, no call, no system call.
    assert not any(re.match(r"(lock|call|syscall|xchg)", t) for t in pairs)


def test_push_and_pop_move_depth_and_frames(host):
    lines, _ = peek(host, "push:1:10", "push:2:20", "push:3:30", "pop",
                    "push:4:40", "popn:3", "show")
    assert lines == [
        area(1, 1, [(1, 10)]),
        area(2, 2, [(1, 10), (2, 20)]),
        area(3, 3, [(1, 10), (2, 20), (3, 30)]),
        area(2, 4, [(1, 10), (2, 20)]),
        area(3, 5, [(1, 10), (2, 20), (4, 40)]),
        area(0, 8, []),
        area(0, 8, []),
    ]


def test_pushes_past_the_capacity_count_depth_and_store_nothing(host):
    full = [(i, 10 * i) for i in range(1, 33)]
    lines, _ = peek(host, "pushn:34", "popn:2", "push:99:9", "pop",
                    "popn:31", "push:5:50")
    assert lines == [
        # 34 deep, the 32 bottom frames stored.
        area(34, 34, full),
        area(32, 36, full),
        # A push past the capacity does not overwrite anything.
        area(33, 37, full),
        area(32, 38, full),
        area(1, 69, [(1, 10)]),
        area(2, 70, [(1, 10), (5, 50)]),
    ]


def test_the_c_push_matches_the_assembly_one(host, tmp_path):
    """SLEEPY_LSTACK_NO_ASM (the C push, and the one of other
    architectures) gives the same areas, at -O0 and -O2."""
    top = Path(__file__).resolve().parent.parent
    ops = ["push:1:10", "pushn:40", "pop", "push:7:70", "popn:30", "show"]
    want, _ = peek(host, *ops)
    for flags in (["-O2", "-DSLEEPY_LSTACK_NO_ASM"], ["-O0"]):
        exe = tmp_path / "lstack_peek"
        subprocess.run(
            ["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", *flags,
             f"-I{UAPI}", f"-I{top / 'syscalls-user'}",
             f"-I{top / 'common'}", "-o", str(exe),
             str(top / "tests/progs/lstack_peek.c"),
             str(top / "syscalls-user/libsleepy_lstack.c")], check=True)
        got, _ = peek(tmp_path, *ops)
        assert got == want, flags


def test_register_fails_on_the_host_and_pushes_still_work(host):
    lines, _ = peek(host, "register", "push:1:2", "unregister", "pop")
    reg, err = lines[0].split(" ")
    # ENOSYS: the host's kernel has no call of that number, so it tells
    # "no sleepy here" from a refused registration (EBUSY, EINVAL, EFAULT).
    assert reg == "register=-1" and err == "ENOSYS", lines
    assert lines[1] == area(1, 1, [(1, 2)])
    assert lines[2].startswith("unregister=-1 ")
    assert lines[3] == area(0, 2, [])


def test_register_and_unregister_against_the_fake_kernel(host, fake):
    r = faked(fake, host / "lstack_peek", "register", "register",
              "unregister", "unregister", "register")
    assert r.stdout.splitlines()[1:] == [
        "register=0", "register=-1 EBUSY", "unregister=0",
        "unregister=-1 EINVAL", "register=0"]


# ---------------------------------------------------------------- names

def test_names_are_appended_one_line_each(host):
    long_ok, too_long = "n" * 255, "n" * 256
    ops = ["name:1:request", "name:2:exe cute", f"name:3:{long_ok}",
           f"name:4:{too_long}", "name:5:", "name:6:a\nb", "name:7:a\tb",
           "name:8:a\x7fb", "name:18446744073709551615:max",
           "name:1:request again", "name:9:naïve"]
    r = subprocess.run([str(host / "lstack_peek"), *ops],
                       capture_output=True, text=True, umask=0o022)
    lines = r.stdout.splitlines()
    path = names_file(int(lines[0][4:]))
    try:
        assert lines[1:] == ["name=0", "name=0", "name=0",
                             "name=-1 EINVAL", "name=-1 EINVAL",
                             "name=-1 EINVAL", "name=-1 EINVAL",
                             "name=-1 EINVAL", "name=0", "name=0", "name=0"]
        assert path.read_text() == (
            f"1 request\n2 exe cute\n3 {long_ok}\n"
            "18446744073709551615 max\n1 request again\n9 naïve\n")
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
    finally:
        path.unlink(missing_ok=True)


@pytest.mark.parametrize("kind", ["symlink", "fifo", "others"])
def test_names_file_is_only_a_regular_file_of_ours(host, tmp_path, kind):
    """The shell execs lstack_peek with its own pid: the file is there
    first. A symbolic link is not followed, a FIFO does not block, a file
    of another user is not written."""
    target = tmp_path / "target"
    make = {"symlink": f"ln -s {target} $f",
            "fifo": "mkfifo $f",
            "others": "touch $f && chown 65534 $f"}[kind]
    if kind == "others" and os.geteuid() != 0:
        pytest.skip("needs root to give the file away")
    script = (f"f=/tmp/sleepy-lstack-$$.names; {make} || exit 9; "
              f"exec {host / 'lstack_peek'} name:1:x")
    r = subprocess.run(["sh", "-c", script], capture_output=True, text=True,
                       timeout=20)
    lines = r.stdout.splitlines()
    path = names_file(int(lines[0][4:]))
    try:
        want = {"symlink": ["ELOOP"], "fifo": ["ENXIO", "EACCES"],
                "others": ["EACCES"]}[kind]
        assert lines[1] in [f"name=-1 {e}" for e in want], lines
        assert not target.exists()
        if kind == "others":
            assert path.read_text() == ""
    finally:
        path.unlink(missing_ok=True)


# ---------------------------------------------------------------- sample_start

def test_sample_start_help_lists_lstack(host):
    r = run(host / "sample_start", "--help")
    assert r.returncode == 0
    assert "[--lstack]" in r.stdout
    assert re.search(r"^  --lstack +record the logical stack", r.stdout,
                     re.M), r.stdout
    assert "PATH.lstack-PID.names" in r.stdout


@pytest.mark.parametrize("args, flags", [
    (["--lstack"], 8),
    (["--lstack", "--callchain=4", "--user-only"], 109),
])
def test_sample_start_lstack_sets_the_flag(host, fake, tmp_path, args, flags):
    log = tmp_path / "log"
    r = faked(fake, host / "sample_start", "-o", tmp_path / "s", *args,
              log=log, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert log.read_text() == f"flags {flags}\n"
    Path("/run/sleepy-session").unlink(missing_ok=True)


@pytest.mark.parametrize("args, need", [
    (["--lstack", "--buffer-size", "256"],
     "256 bytes cannot hold a sample with its logical stack of 16 frames "
     "(304 bytes)"),
    (["--lstack", "--callchain", "--buffer-size", "512"],
     "512 bytes cannot hold a call chain of 64 frames with its sample and "
     "logical stack (820 bytes)"),
])
def test_sample_start_wants_room_for_a_logical_stack(host, args, need):
    r = run(host / "sample_start", "-o", "/nonexistent/s", *args)
    assert r.returncode == 2
    assert r.stderr == f"sample_start: --buffer-size: {need}\n"


def test_the_stop_copies_the_names_files_of_the_session(host, fake,
                                                        tmp_path):
    """sample_start -- CMD: the names file CMD wrote, copied privately as
    PATH.lstack-PID.names; an old one of a process gone and a symbolic
    link are not copied."""
    session = tmp_path / "s.slp"
    # Above the largest pid_max (2^22): no such process.
    old = names_file(9999990)
    link = names_file(9999991)
    pid = None
    old.write_text("1 old\n")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    link.symlink_to(tmp_path / "elsewhere")
    try:
        r = faked(fake, host / "sample_start", "-o", session, "--",
                  host / "lstack_peek", "name:1:alpha", "name:2:beta",
                  cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        pid = int(r.stdout.splitlines()[0][4:])
        copy = Path(f"{session}.lstack-{pid}.names")
        assert copy.read_text() == "1 alpha\n2 beta\n"
        assert stat.S_IMODE(copy.stat().st_mode) == 0o600
        assert re.search(rf"^sample_start: copied \d+ lstack names files? "
                         rf"next to {session}$", r.stderr, re.M), r.stderr
        assert not Path(f"{session}.lstack-9999990.names").exists()
        assert not Path(f"{session}.lstack-9999991.names").exists()
    finally:
        for p in (old, link) + ((names_file(pid),) if pid else ()):
            p.unlink(missing_ok=True)


def test_sample_stop_copies_the_names_file_of_a_running_process(
        host, fake, tmp_path):
    """Written before the session started, by a process still running
    (this test's): copied, as perf maps are."""
    session = tmp_path / "s.slp"
    mine = names_file(os.getpid())
    mine.write_text("3 mine\n")
    os.utime(mine, (time.time() - 3600, time.time() - 3600))
    try:
        r = faked(fake, host / "sample_start", "-o", session, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        r = faked(fake, host / "sample_stop")
        assert r.returncode == 0, r.stderr
        assert re.search(rf"^sample_stop: copied \d+ lstack names files? "
                         rf"next to {session}$", r.stderr, re.M), r.stderr
        copy = Path(f"{session}.lstack-{os.getpid()}.names")
        assert copy.read_text() == "3 mine\n"
    finally:
        mine.unlink(missing_ok=True)


# ---------------------------------------------------------------- programs

def server_table(stdout):
    """lstack_server's "# KEY VALUE" lines and its table rows by
    (frame, arg)."""
    keys, rows, header = {}, {}, None
    for line in stdout.splitlines():
        if line.startswith("# "):
            k, _, v = line[2:].partition(" ")
            keys[k] = v
        elif header is None:
            header = line.split()
        else:
            row = dict(zip(header, line.split()))
            rows[(row["frame"], int(row["arg"]))] = row
    assert header == ["frame", "id", "arg", "self_cpu_ns", "cpu_pct",
                      "wait_ns", "calls"], stdout
    return keys, rows


SERVER_ARGS = ["--threads", "2", "--requests", "20", "--parse-us", "300",
               "--plan-us", "200", "--scan-us", "400", "--sort-us", "500",
               "--io-us", "1000", "--lock-us", "1000"]


def test_the_server_runs_without_the_system_call(host):
    r = run(host / "lstack_server", *SERVER_ARGS, timeout=120)
    assert r.returncode == 0, r.stderr
    err = r.stderr.splitlines()
    assert len(err) == 1 and err[0].startswith(
        "lstack_server: warning: sleepy_lstack_register: "), r.stderr
    keys, rows = server_table(r.stdout)
    names = names_file(int(keys["pid"]))
    try:
        assert keys["registered"] == "0" and keys["threads"] == "2"
        assert set(rows) == {(f, 0) for f in SERVER_FRAMES} | {("scan", 1)}
        for (frame, arg), row in rows.items():
            assert int(row["id"]) == SERVER_FRAMES[frame]
            assert int(row["calls"]) == (20 if frame == "scan" else 40)
            assert int(row["self_cpu_ns"]) > 0, row
        assert abs(sum(float(x["cpu_pct"]) for x in rows.values()) - 100) \
            < 0.1
        # The work is sized by CPU time, timed at startup: within a factor.
        for frame, us, calls in (("parse", 300, 40), ("plan", 200, 40),
                                 ("sort", 500, 40)):
            got = int(rows[(frame, 0)]["self_cpu_ns"])
            assert 0.3 * us * 1000 * calls < got < 3 * us * 1000 * calls, \
                (frame, got)
        # Table 1 scans twice what table 0 does.
        ratio = int(rows[("scan", 1)]["self_cpu_ns"]) / int(
            rows[("scan", 0)]["self_cpu_ns"])
        assert 1.3 < ratio < 3, ratio
        # Every read waits the helper's delay; the lock is held by another.
        assert int(rows[("io_wait", 0)]["wait_ns"]) >= 0.9 * 1000e3 * 40
        assert int(rows[("lock_wait", 0)]["wait_ns"]) > 0.05 * 1000e3 * 40
        for frame in ("parse", "plan", "scan", "sort", "request"):
            assert all(row["wait_ns"] == "0" for (f, _), row in
                       rows.items() if f == frame)
        # Each worker named the eight ids: whole lines, none mixed.
        assert sorted(names.read_text().splitlines()) == sorted(
            f"{i} {f}" for f, i in SERVER_FRAMES.items() for _ in range(2))
    finally:
        names.unlink(missing_ok=True)


def test_the_server_registers_its_workers(host, fake):
    r = faked(fake, host / "lstack_server", *SERVER_ARGS[:4],
              "--io-us", "0", "--lock-us", "0", timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    keys, rows = server_table(r.stdout)
    names_file(int(keys["pid"])).unlink(missing_ok=True)
    assert keys["registered"] == "2"
    # A step of 0 microseconds leaves its frame out.
    assert ("io_wait", 0) not in rows and ("lock_wait", 0) not in rows


@pytest.mark.parametrize("args, message", [
    (["--threads", "0"], "--threads: '0' is not a number from 1 to 64"),
    (["--io-us", "-5"], "--io-us: '-5' is not a number from 0 to 10000000"),
    (["--tables", "9"], "--tables: '9' is not a number from 1 to 8"),
    (["--requests"], "--requests: missing value"),
    (["--bogus"], "--bogus: unknown option (see --help)"),
])
def test_the_server_refuses_bad_options(host, args, message):
    r = run(host / "lstack_server", *args)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == f"lstack_server: {message}\n"


@pytest.mark.parametrize("prog", ["lstack_server", "lstack_cost",
                                  "lstack_storm", "lstack_life",
                                  "lstack_peek"])
def test_help(host, prog):
    r = run(host / prog, "--help")
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.startswith(f"usage: {prog}")


def test_the_cost_program_prints_its_figures(host):
    r = run(host / "lstack_cost", "--pairs", "1000000", "--round-trips",
            "200", "--unregistered")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    kv = dict(line.split(" ") for line in r.stdout.splitlines())
    assert list(kv) == ["registered", "pairs", "pairs_ns", "empty_ns",
                        "ns_per_pair", "round_trips", "round_trip_ns",
                        "ns_per_round_trip"]
    assert kv["registered"] == "0" and kv["pairs"] == "1000000"
    assert int(kv["pairs_ns"]) > 0 and float(kv["ns_per_round_trip"]) > 0


def test_the_cost_program_spins_with_a_stack(host, fake):
    r = faked(fake, host / "lstack_cost", "--pairs", "0", "--round-trips",
              "0", "--spin-depth", "8", "--seconds", "0.3")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    kv = dict(line.split(" ") for line in r.stdout.splitlines())
    assert kv["registered"] == "1" and kv["ns_per_pair"] == "0.000"
    assert kv["spin_depth"] == "8" and kv["spin_seconds"] == "0.300"
    assert int(kv["spins"]) > 0


def test_the_cost_program_registers_both_players(host, fake):
    r = faked(fake, host / "lstack_cost", "--pairs", "1000",
              "--round-trips", "10")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("registered 2\n")


@pytest.mark.parametrize("mode, states", [
    ("A", ["", "1:10", "1:10 2:20", "1:10 2:20 3:30", "1:11", "1:11 2:21",
           "1:11 2:21 3:31"]),
    ("B", ["", "1:100 2:200 3:300 4:400 5:500 6:600 7:700 8:800",
           "1:101 2:201 3:301 4:401 5:501 6:601 7:701 8:801"]),
])
def test_the_storm_prints_its_valid_states(host, fake, mode, states):
    if mode == "B" and len(os.sched_getaffinity(0)) < 2:
        pytest.skip("mode B needs two CPUs")
    r = faked(fake, host / "lstack_storm", "--mode", mode, "--seconds", "1")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"mode {mode}" and lines[1].startswith("tid ")
    assert lines[2] == ("depth 3" if mode == "A" else "depth 8")
    valid = [line[6:] for line in lines if line.startswith("valid")]
    assert valid == states
    kv = dict(line.split(" ") for line in lines[-3:])
    assert int(kv["cycles"]) > 1000 and 0.9 < float(kv["seconds"]) < 5


def test_the_storm_fails_where_it_cannot_register(host):
    r = run(host / "lstack_storm", "--seconds", "1")
    assert r.returncode == 1
    assert r.stderr.startswith("lstack_storm: sleepy_lstack_register: ")


def test_life_passes_against_the_fake_kernel(host, fake):
    """lstack_life's expectations are the spec's: a fake that follows it
    passes every check, the exec from a second thread included."""
    r = faked(fake, host / "lstack_life", "--storm", "200", timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert not [line for line in lines if line.startswith("FAIL")], lines
    assert lines[-1] == "done: 0 failed"
    for check in ("efault-unmapped", "einval-misaligned", "ebusy-same-area",
                  "unregister-wrong-area", "fork-child-starts-unregistered",
                  "new-thread-starts-unregistered", "storm",
                  "exec-starts-unregistered"):
        assert any(line.startswith(f"ok {check}:") for line in lines), check


def test_life_says_the_kernel_lacks_the_call(host):
    r = run(host / "lstack_life")
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == ("lstack_life: the kernel has no sleepy_lstack "
                        "(unregister-none)\n")
