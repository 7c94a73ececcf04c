"""Shared paths, fixtures and helpers of the sleepy test suite.

Two kinds of tests:

- host tests (no marker) need the Debian packages and the uapi headers in
  UAPI (BUILD/uapi/linux/{sleepy,sleepy_pmu}.h) and nothing else: each
  builds the programs it runs from this checkout into a temporary folder
  (user_build, parse_bin);
- tests marked vm boot the kernel under QEMU TCG through guest/vm.sh
  (run_vm), the runner behind ./build.sh vm, or need the kernel and
  initramfs images it boots.

    /usr/bin/python3 -m pytest -m "not vm" tests/    # host tests only
    /usr/bin/python3 -m pytest -m vm tests/          # the rest

Boots are the expensive part, so a VM test module runs many guest
scenarios in one script per boot. Each scenario leaves its exit status and
its standard error in the shared folder and never stops the script
(SCENARIO_SH); each test checks the scenarios whose results it reads
(scenario_ok), so that a failing scenario fails its own tests only. The
boot fixture checks the boot alone (boot_scenarios): no splat, no
timeout, the script ran to its end.
"""
import fcntl
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest

import boots

TOP = Path(__file__).resolve().parent.parent
BUILD = Path(os.environ.get("SLEEPY_BUILD_DIR", TOP / "build"))
BUILD_SH = TOP / "build.sh"
# The uapi headers the programs build against (they come from the patch
# series, not from a kernel build).
UAPI = BUILD / "uapi"
# libsleepy.h's SLEEPY_EXIT_NO_SUPPORT, as usage.md documents it: every
# tool's status on a kernel without sleepy.
NO_SUPPORT_STATUS = 69
# What ./build.sh user built: the programs the VM runs (its /usr/bin) and
# their host builds. Only VM tests use these; host tests build their own.
GUEST_BIN = BUILD / "user" / "guest"
HOST_BIN = BUILD / "user" / "host"
# parse asks the debuginfod servers DEBUGINFOD_URLS names for the debug
# files of stripped objects (Debian's login shells set it to
# debuginfod.debian.net): the tests ask only the server they start.
os.environ.pop("DEBUGINFOD_URLS", None)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "vm: boots the kernel under QEMU or needs the kernel and "
        "initramfs images; a host-only run deselects these: -m 'not vm'")
    config.addinivalue_line(
        "markers", "minutes(N): a test that boots a guest of its own takes "
        "about N minutes (the scheduler starts the longest first)")
    # A misspelt marker is an error, not a test silently left unmarked.
    config.option.strict_markers = True
    # The controller of a pytest-xdist run names the run, so that its
    # workers' shared folder (user_out) is known to it too.
    if hasattr(config.option, "testrunuid") and \
            not hasattr(config, "workerinput") and \
            config.option.testrunuid is None:
        config.option.testrunuid = uuid.uuid4().hex


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """The tests that share a boot stay together, longest first
    (boots.schedule), for test processes side by side (pytest -n): before
    pytest-xdist's own hook, which names each test's group in its id."""
    items[:] = boots.schedule(items)


class VMResult:
    """A run of guest/vm.sh: returncode (the command's status, 124 timeout,
    125 splat or no status, 2 usage), stdout_bytes and stderr_bytes (the
    command's own output, byte for byte; stderr also carries the runner's
    messages: "vm.sh: the kernel log shows problems:", "vm.sh: timed out
    after N s", and the kernel console with verbose=True), stdout and
    stderr (the same decoded, undecodable bytes replaced), and share."""

    def __init__(self, proc, share):
        self.returncode = proc.returncode
        self.stdout_bytes = proc.stdout
        self.stderr_bytes = proc.stderr
        self.stdout = proc.stdout.decode(errors="replace")
        self.stderr = proc.stderr.decode(errors="replace")
        self.share = share

    def file(self, name):
        return (self.share / name).read_text()

    def __repr__(self):
        return (f"VMResult(rc={self.returncode})\n--- stdout ---\n"
                f"{self.stdout[-4000:]}\n--- stderr ---\n{self.stderr[-4000:]}")


def run_vm(cmd, *, smp=2, debug=False, share=None, timeout=300, icount=False,
           mem=None, verbose=False, extra=(), alone=None):
    """Boot the VM with guest/vm.sh (the images must exist: ./build.sh vm
    builds them, the runner does not), run cmd (a list, or a shell script
    string) as root. alone: whether no other boot may run beside this one
    (boots.machine_slot); by default, a boot without -icount runs alone,
    one with -icount shares the machine."""
    args = [str(TOP / "guest" / "vm.sh"), "--smp", str(smp),
            "--timeout", str(timeout)]
    if debug:
        args.append("--debug")
    if icount:
        args.append("--icount")
    if mem:
        args += ["--mem", str(mem)]
    if share is not None:
        args += ["--share", str(share)]
    if verbose:
        args.append("--verbose")
    args += list(extra)
    if isinstance(cmd, str):
        cmd = ["sh", "-c", cmd]
    if alone is None:
        alone = not icount
    with boots.machine_slot(BUILD, alone):
        proc = subprocess.run(args + ["--"] + list(cmd), capture_output=True,
                              timeout=timeout + 600, stdin=subprocess.DEVNULL)
    return VMResult(proc, Path(share) if share is not None else None)


@pytest.fixture
def share_dir():
    d = Path(tempfile.mkdtemp(prefix="sleepy-share-"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def module_share():
    d = Path(tempfile.mkdtemp(prefix="sleepy-share-"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


def build_sh(*args, env=None, timeout=120):
    e = dict(os.environ)
    if env:
        e.update(env)
    return subprocess.run([str(BUILD_SH), *args], capture_output=True,
                          text=True, timeout=timeout, env=e,
                          stdin=subprocess.DEVNULL)


# ---------------------------------------------------------------- host builds

@pytest.fixture(scope="session")
def user_build(tmp_path_factory):
    """build(folder, *targets): make targets of a folder of this checkout
    (parse, syscalls-user, bench, tests/progs) against UAPI, all into one
    fresh OUT per test run, so that a test never runs a stale binary nor
    needs ./build.sh user; returns OUT (programs in OUT/guest and
    OUT/host, as under BUILD/user). Test processes side by side share
    one OUT (user_out) and build in it one at a time (flock), so that
    each file is compiled once; make runs a job per core, and ccache
    (where it is installed) keeps compilers' results across runs."""
    out = user_out(tmp_path_factory)
    cc = ["CC=ccache gcc"] if shutil.which("ccache") else []

    def build(folder, *targets):
        for name in ("sleepy.h", "sleepy_pmu.h"):
            header = UAPI / "linux" / name
            assert header.exists(), (
                f"{header} missing: the host tests need the patch series' "
                f"uapi headers in {UAPI}")
        with open(out / ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            r = subprocess.run(["make", "-s", f"-j{os.cpu_count()}", "-C",
                                str(TOP / folder), f"OUT={out}",
                                f"KERNEL_UAPI={UAPI}", *cc, *targets],
                               capture_output=True, text=True)
        assert r.returncode == 0, (
            f"make -C {folder} {' '.join(targets)} failed:\n"
            f"{r.stdout}{r.stderr}")
        return out
    return build


def user_out(tmp_path_factory):
    """The folder of user_build: the session's own, or with pytest-xdist
    one per test run (its run id), which pytest_sessionfinish removes."""
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run_id:
        return tmp_path_factory.mktemp("user")
    out = Path(tempfile.gettempdir()) / f"sleepy-user-{run_id}"
    out.mkdir(exist_ok=True)
    return out


def times_dir(config):
    """Where the run's boots leave their times (record_times): one folder
    per run, shared by pytest-xdist's workers and controller."""
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID") or \
        getattr(config.option, "testrunuid", None) or str(os.getpid())
    return Path(tempfile.gettempdir()) / f"sleepy-times-{run_id}"


def record_times(config, boot, share, seconds):
    """Boot's host seconds, and each scenario's guest seconds (the .time
    files SCENARIO_SH leaves), for the run's summary."""
    rows = [f"{seconds:.1f} {boot}"]
    for f in share.glob("**/*.time"):
        t0, t1 = map(float, f.read_text().split())
        rows.append(f"{t1 - t0:.1f} {f.relative_to(share).with_suffix('')}")
    d = times_dir(config)
    d.mkdir(exist_ok=True)
    (d / f"{boot}.txt").write_text("\n".join(rows) + "\n")


def pytest_terminal_summary(terminalreporter, config):
    """The boots by host time, each with its longest scenarios by guest
    time: where the suite's time goes."""
    d = times_dir(config)
    boots_seen = []
    for f in d.glob("*.txt") if d.exists() else ():
        head, *rows = [line.split(" ", 1) for line in
                       f.read_text().splitlines()]
        rows.sort(key=lambda r: -float(r[0]))
        boots_seen.append((float(head[0]), head[1], rows[:6]))
    if not boots_seen:
        return
    terminalreporter.section("boots (host seconds) and their longest "
                             "scenarios (guest seconds)")
    for seconds, boot, rows in sorted(boots_seen, reverse=True):
        terminalreporter.write_line(
            f"{seconds:7.1f} s {boot}: " +
            ", ".join(f"{name} {t}" for t, name in rows))


def pytest_unconfigure(config):
    if not hasattr(config, "workerinput"):
        shutil.rmtree(times_dir(config), ignore_errors=True)


def pytest_sessionfinish(session):
    # The controller of a pytest-xdist run (its workers have workerinput)
    # removes the run's user_out.
    run_id = not hasattr(session.config, "workerinput") and \
        getattr(session.config.option, "testrunuid", None)
    if run_id:
        shutil.rmtree(Path(tempfile.gettempdir()) / f"sleepy-user-{run_id}",
                      ignore_errors=True)


@pytest.fixture(scope="session")
def parse_bin(user_build):
    """The host parse of this checkout."""
    return user_build("parse", "host") / "host" / "parse"


def run(binary, *args, stdin=None, timeout=60):
    return subprocess.run([str(binary), *map(str, args)], capture_output=True,
                          text=True, errors="replace", timeout=timeout,
                          input=stdin)


def uapi_values(tmp_path, exprs):
    """The values of C expressions (sizeof, offsetof, the uapi header's
    constants) as a program built against UAPI prints them: a dict from
    each expression's text to its value."""
    src = tmp_path / "layout.c"
    src.write_text(
        "#include <stdio.h>\n#include <stddef.h>\n#include <linux/sleepy.h>\n"
        "#define P(x) printf(\"%s %zu\\n\", #x, (size_t)(x))\n"
        "int main(void)\n{\n" + "".join(f"\tP({e});\n" for e in exprs) +
        "\treturn 0;\n}\n")
    exe = tmp_path / "layout"
    subprocess.run(["gcc", f"-I{UAPI}", "-o", str(exe), str(src)],
                   check=True)
    return {k: int(v) for k, v in (line.rsplit(" ", 1) for line in
                                   run(exe).stdout.splitlines())}


@pytest.fixture
def parse(parse_bin, tmp_path):
    """parse(data_or_SessionFile, *args): run the host parse on a file of
    data (bytes, or a sleepyfile.SessionFile)."""
    def _parse(data, *args):
        if hasattr(data, "data"):
            data = data.data()
        path = tmp_path / "session.bin"
        path.write_bytes(data)
        return run(parse_bin, *args, path)
    return _parse


# ---------------------------------------------------------------- guest scenarios

# The start of every scenario script (boot_scenarios adds it).
# `scenario NAME <<'EOF' ... EOF` runs the here-document's commands in a
# subshell, so that an exit (the scripts' `|| exit N` checks) ends this
# scenario only. Its standard error goes to $S/NAME.log and its exit status
# (an exit's, or else its last command's) to $S/NAME.status; then the
# script goes on. Shell functions and variables defined outside scenarios
# are seen by all; those a scenario defines, by itself only.
SCENARIO_SH = r"""
export S=/mnt/share
# A debug kernel's kmemleak scans once, at the boot's end
# (KMEMLEAK_SCENARIO), and not also on its own from the boot's first
# minute on: a scan takes some 10 s of guest time.
if [ -w /sys/kernel/debug/kmemleak ]; then
    echo scan=off > /sys/kernel/debug/kmemleak
fi
scenario() {
    _body=$(cat)
    echo "<4>sleepy-test: scenario ${_part:+$_part/}$1 begins" > /dev/kmsg
    read -r _t0 _rest < /proc/uptime
    ( eval "$_body" ) 2> "$S/$1.log"
    echo $? > "$S/$1.status"
    read -r _t1 _rest < /proc/uptime
    echo "$_t0 $_t1" > "$S/$1.time"
    echo "<4>sleepy-test: scenario ${_part:+$_part/}$1 ends" > /dev/kmsg
}
# in_call PID NR [WCHAN]: wait until process PID sleeps in system call NR
# (the first field of /proc/PID/syscall, which shows a call only while
# its task sleeps in it) and, with WCHAN, in a kernel function that
# matches that extended pattern (/proc/PID/wchan); 60 s of guest time at
# most. If it never does: what was seen, on stderr, and status 1.
in_call() {
    _i=0
    while [ $_i -lt 600 ]; do
        read -r _nr _rest < /proc/$1/syscall 2> /dev/null || _nr=gone
        _wchan=$(cat /proc/$1/wchan 2> /dev/null)
        if [ "$_nr" = "$2" ]; then
            [ -z "$3" ] && return 0
            echo "$_wchan" | grep -qE "$3" && return 0
        fi
        [ "$_nr" = gone ] && break
        sleep 0.1; _i=$((_i + 1))
    done
    echo "in_call: pid $1 never slept in system call $2${3:+ in $3}" \
        "(last seen: ${_nr:-none}, in ${_wchan:-nothing})" >&2
    return 1
}
"""


def syscall_numbers():
    """Our system calls' numbers and those the scripts wait in, {name:
    nr}, from the kernel tree's table (UAPI/syscall_64.tbl, which the
    build copies)."""
    table = UAPI / "syscall_64.tbl"
    nrs = {}
    for line in table.read_text().splitlines():
        f = line.split()
        if len(f) >= 3 and f[0].isdigit() and (
                f[2].startswith(("sample_", "sleepy_")) or f[2] == "openat"):
            nrs[f[2]] = int(f[0])
    return nrs


# A debug boot's last scenario (_Boots adds it to each): kmemleak reports
# objects older than 5 s, so wait, then scan. A scan that finds new leaks
# says so in the kernel log, which fails this scenario (its .splat); the
# list, read only then (reading it takes as long as the scan, some 40 s
# on this machine's debug guest), goes to $S/kmemleak.out (empty: no
# leak).
KMEMLEAK_SCENARIO = r"""
scenario kmemleak <<'EOF'
sleep 6
echo scan > /sys/kernel/debug/kmemleak || exit 10
: > $S/kmemleak.out
if dmesg | grep -q "kmemleak: [0-9]* new suspected"; then
    cat /sys/kernel/debug/kmemleak > $S/kmemleak.out
fi
EOF
"""


def boot_scenarios(script, share, **kw):
    """Boot a VM (run_vm's keywords) that runs SCENARIO_SH, our system
    calls' numbers ($NR_sample_start, ...) and script, which shares the
    folder share (/mnt/share, $S). Assert that the boot worked: the
    script reached its end, no timeout, and no kernel splat outside the
    scenarios. A splat while a scenario ran is that scenario's: it goes
    to NAME.splat in the scenario's folder, which scenario_ok reads, and
    fails that scenario's tests only. Returns run_vm's result."""
    nrs = "".join(f"NR_{name}={nr}\n"
                  for name, nr in sorted(syscall_numbers().items()))
    r = run_vm(SCENARIO_SH + nrs + script + "\necho all-done > $S/done\n",
               share=share, **kw)
    splats = {}
    kept = re.search(r"vm.sh: logs kept in (\S+)", r.stderr)
    if r.returncode == 125 and kept:
        splats = boots.attribute_splats(boots.kernel_log(kept[1]),
                                        boots.splat_re(TOP))
    done = Path(share) / "done"
    died = "" if done.exists() else (
        "the script did not reach its end; the scenario running then: "
        f"{last_scenario(kept[1]) if kept else 'unknown'}\n")
    assert r.returncode in (0, 125) and None not in splats and not died \
        and (r.returncode == 0 or splats), f"{died}{r}"
    for name, lines in splats.items():
        (Path(share) / f"{name}.splat").write_text("\n".join(lines) + "\n")
    if kept:
        shutil.rmtree(kept[1], ignore_errors=True)
    assert done.read_text() == "all-done\n", r
    return r


def last_scenario(kept):
    """The scenario that began last in a kept run's kernel log."""
    names = [m[1] for m in map(boots.MARK.search, boots.kernel_log(kept))
             if m and m[2] == "begins"]
    return names[-1] if names else "none began"


class Shared:
    """A folder of scenario results: share, and file(name)'s text."""

    def __init__(self, share):
        self.share = Path(share)

    def file(self, name):
        return (self.share / name).read_text()


class _Boots:
    """The session's shared boots (boots.BOOTS), each run once, when a
    test first needs it, with the parts of every module collected. A
    part runs in a subshell, with $S its folder of the shared one and
    $S_HOST that folder's path on the host (where --host-root shows it
    too). A debug boot's kmemleak scan comes after the other parts and
    before those its last names (which may lock debugfs away)."""

    def __init__(self, session, tmp_path_factory):
        self.session = session
        self.tmp = tmp_path_factory
        self.shares = {}

    def modules(self, name):
        mods = {boots.part_name(item.module): item.module
                for item in self.session.items
                if item.module is not None and
                name in getattr(item.module, "SCENARIOS", {})}
        last = [m for m in boots.BOOTS[name].last if m in mods]
        return [mods[k] for k in sorted(set(mods) - set(last)) + last]

    def run(self, name):
        boot = boots.BOOTS[name]
        share = self.tmp.mktemp(name)
        script, parts = "", []
        for mod in self.modules(name):
            part = boots.part_name(mod)
            if part in boot.last and boot.kernel == "debug" and \
                    KMEMLEAK_SCENARIO not in script:
                script += KMEMLEAK_SCENARIO
            parts.append(part)
            (share / part).mkdir()
            script += (f"(\n_part={part}; S=/mnt/share/{part}; "
                       f"S_HOST={shlex.quote(str(share / part))}\n"
                       f"{mod.SCENARIOS[name]}\n)\n")
        if boot.kernel == "debug" and KMEMLEAK_SCENARIO not in script:
            script += KMEMLEAK_SCENARIO
        t0 = time.monotonic()
        boot_scenarios(script, share, **boot.run_vm_kw())
        record_times(self.session.config, name, share, time.monotonic() - t0)
        # The one kmemleak scan of the boot is every part's.
        for f in share.glob("kmemleak.*"):
            for part in parts:
                shutil.copy(f, share / part / f.name)
        return share

    def part(self, name, module):
        if name not in getattr(module, "SCENARIOS", {}):
            raise KeyError(f"{module.__name__} has no part in boot {name}")
        if name not in self.shares:
            self.shares[name] = self.run(name)
        return self.shares[name] / boots.part_name(module)


@pytest.fixture(scope="session")
def _sleepy_boots(request, tmp_path_factory):
    return _Boots(request.session, tmp_path_factory)


def scenario_ok(share, *names):
    """Assert that each scenario (SCENARIO_SH) of these names ran, left
    no splat in the kernel log while it ran, and exited 0; if not, show
    the splat, or its status and standard error."""
    for name in names:
        splat = Path(share) / f"{name}.splat"
        assert not splat.exists(), (
            f"scenario {name}: the kernel log shows problems while it "
            f"ran:\n{splat.read_text()}")
        status = Path(share) / f"{name}.status"
        assert status.exists(), f"scenario {name} did not run"
        code = status.read_text().strip()
        if code != "0":
            log = (Path(share) / f"{name}.log").read_text(errors="replace")
            raise AssertionError(
                f"scenario {name} exited {code}; its standard error:\n"
                f"{log[-4000:]}")
