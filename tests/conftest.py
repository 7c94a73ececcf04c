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
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parent.parent
BUILD = Path(os.environ.get("SLEEPY_BUILD_DIR", TOP / "build"))
BUILD_SH = TOP / "build.sh"
# The uapi headers the programs build against (they come from the patch
# series, not from a kernel build).
UAPI = BUILD / "uapi"
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
    # A misspelt marker is an error, not a test silently left unmarked.
    config.option.strict_markers = True


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
           mem=None, verbose=False, extra=()):
    """Boot the VM with guest/vm.sh (the images must exist: ./build.sh vm
    builds them, the runner does not), run cmd (a list, or a shell script
    string) as root."""
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
    fresh OUT per test session, so that a test never runs a stale binary
    nor needs ./build.sh user; returns OUT (programs in OUT/guest and
    OUT/host, as under BUILD/user)."""
    out = tmp_path_factory.mktemp("user")

    def build(folder, *targets):
        for name in ("sleepy.h", "sleepy_pmu.h"):
            header = UAPI / "linux" / name
            assert header.exists(), (
                f"{header} missing: the host tests need the patch series' "
                f"uapi headers in {UAPI}")
        r = subprocess.run(["make", "-s", "-C", str(TOP / folder),
                            f"OUT={out}", f"KERNEL_UAPI={UAPI}", *targets],
                           capture_output=True, text=True)
        assert r.returncode == 0, (
            f"make -C {folder} {' '.join(targets)} failed:\n"
            f"{r.stdout}{r.stderr}")
        return out
    return build


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
S=/mnt/share
scenario() {
    _body=$(cat)
    ( eval "$_body" ) 2> "$S/$1.log"
    echo $? > "$S/$1.status"
}
"""


# A debug boot's last scenario: kmemleak reports objects older than 5 s,
# so wait, then scan; its report goes to $S/kmemleak.out (empty: no leak).
KMEMLEAK_SCENARIO = r"""
scenario kmemleak <<'EOF'
sleep 6
echo scan > /sys/kernel/debug/kmemleak
cat /sys/kernel/debug/kmemleak > $S/kmemleak.out
EOF
"""


def boot_scenarios(script, share, **kw):
    """Boot a VM (run_vm's keywords) that runs SCENARIO_SH and script,
    which shares the folder share (/mnt/share, $S); assert that the boot
    worked (the runner's status 0: no splat, no timeout) and that the
    script reached its end. Whether each scenario worked is its tests'
    business (scenario_ok). Returns run_vm's result."""
    r = run_vm(SCENARIO_SH + script + "\necho all-done > $S/done\n",
               share=share, **kw)
    assert r.returncode == 0, r
    done = Path(share) / "done"
    assert done.exists() and done.read_text() == "all-done\n", r
    return r


def scenario_ok(share, *names):
    """Assert that each scenario (SCENARIO_SH) of these names ran and
    exited 0; if not, show its status and standard error."""
    for name in names:
        status = Path(share) / f"{name}.status"
        assert status.exists(), f"scenario {name} did not run"
        code = status.read_text().strip()
        if code != "0":
            log = (Path(share) / f"{name}.log").read_text(errors="replace")
            raise AssertionError(
                f"scenario {name} exited {code}; its standard error:\n"
                f"{log[-4000:]}")
