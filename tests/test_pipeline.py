"""The build/boot pipeline: build.sh's arguments, the VM runner in real
boots (two on the release kernel, one on the debug kernel that must fail,
and a part of the debug kernel's shared 2-vCPU boot; the runner's unit
tests, without a boot, are in test_vm.py), the kernel patch series."""
import concurrent.futures
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import boots
from conftest import BUILD, TOP, build_sh, run_vm, scenario_ok

PATCH_DIR = TOP / "linux-patches"


def series():
    names = []
    for line in (PATCH_DIR / "series").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            names.append(line)
    return names


# ---------------------------------------------------------------- build.sh

def test_help_lists_every_subcommand():
    r = build_sh("--help")
    assert r.returncode == 0
    for sub in ("all", "deps", "kernel", "patches", "uapi", "user",
                "initramfs", "vm", "test", "demo", "bench", "clean"):
        assert re.search(rf"^  {sub}\b", r.stdout, re.M), sub


@pytest.mark.parametrize("args", [["frobnicate"], ["--bogus"]])
def test_unknown_subcommand_prints_usage_and_exits_2(args):
    r = build_sh(*args)
    assert r.returncode == 2
    assert "usage: ./build.sh" in r.stderr
    assert "unknown subcommand" in r.stderr


@pytest.mark.parametrize("args, msg", [
    (["kernel", "--release"], "unknown option"),
    (["initramfs", "--x"], "unknown option"),
    (["patches", "extra"], "takes no options"),
])
def test_bad_options_exit_2(args, msg):
    r = build_sh(*args)
    assert r.returncode == 2, r.stderr
    assert msg in r.stderr


# The runner's options, errors, splat scan and exit statuses are tested
# without booting in test_vm.py. The boots here show what only a real guest
# can: guest/init, the real kernel's console and dmesg, QEMU.

# ---------------------------------------------------------------- the guest

# Byte for byte what the guest script below writes on stdout and stderr.
GUEST_STDOUT = (b"line one\nline two\n\n\tindented, trailing space \n"
                + bytes([0, 1, 2, 13, 127, 128, 255]) + b"\n"
                + b"".join(b"%d\n" % i for i in range(1, 2001))
                + b"no newline at the end")
GUEST_STDERR = b"to stderr\n" + bytes([0, 255]) + b"\nlast stderr line\n"

GUEST_SCRIPT = r"""
S=/mnt/share
uname -r > $S/uname
{ nproc; grep -c ^processor /proc/cpuinfo; } > $S/nproc
cat $S/from-host > $S/from-host.copy
echo written-in-guest > $S/hello
mkdir -p $S/sub && echo nested > $S/sub/file
touch /var/log/writable && touch /tmp/writable && echo ok > $S/writable
id -u user > $S/user-uid
modprobe sleepy_splat_test && lsmod > $S/lsmod-loaded
rmmod sleepy_splat_test && lsmod > $S/lsmod-unloaded
modinfo -F description sleepy_splat_test > $S/modinfo
no-such-command-here 2> /dev/null; echo $? > $S/nocmd-status
printf 'line one\nline two\n\n\tindented, trailing space \n'
printf '\000\001\002\015\177\200\377\n'
seq 1 2000
printf 'no newline at the end'
printf 'to stderr\n\000\377\nlast stderr line\n' >&2
exit 3
"""


@pytest.fixture(scope="module")
@boots.own_boot("release-4cpu", minutes=0.3)
def guest(tmp_path_factory):
    """One release boot on 4 vCPUs for the runner's behaviour in a real
    guest: the kernel, the vCPUs, the shared folder both ways, the guest's
    file systems, user and modules, the command's stdout and stderr byte
    for byte and apart (no CR, no kernel line), and its exit status (3).
    About 15 s. It checks nothing of the guest's timing, so it shares the
    machine."""
    share = tmp_path_factory.mktemp("pipeline-guest")
    (share / "from-host").write_text("written-on-host\n")
    r = run_vm(GUEST_SCRIPT, smp=4, share=share, timeout=300, alone=False)
    assert r.returncode == 3, r
    return r


@pytest.mark.vm
def test_guest_runs_the_sleepy_kernel(guest):
    assert re.fullmatch(r"6\.1\.\d+-sleepy\n", guest.file("uname"))


@pytest.mark.vm
def test_nproc_equals_smp(guest):
    # -smp for 1, 2, 4 and 64 vCPUs: test_vm.py::test_smp_and_icount.
    assert guest.file("nproc").split() == ["4", "4"]


@pytest.mark.vm
def test_share_is_read_write(guest):
    assert guest.file("from-host.copy") == "written-on-host\n"
    assert guest.file("hello") == "written-in-guest\n"
    assert guest.file("sub/file") == "nested\n"


@pytest.mark.vm
def test_guest_has_writable_var_log_and_tmp_and_a_user(guest):
    assert guest.file("writable") == "ok\n"
    assert guest.file("user-uid") == "1000\n"


@pytest.mark.vm
def test_modprobe_and_rmmod_work(guest):
    assert re.search(r"^sleepy_splat_test\b", guest.file("lsmod-loaded"), re.M)
    assert "sleepy_splat_test" not in guest.file("lsmod-unloaded")
    assert "provoke" in guest.file("modinfo").lower()


@pytest.mark.vm
def test_command_output_comes_back_byte_for_byte(guest):
    # Streaming while the guest runs: test_vm.py (fake QEMU).
    assert guest.stdout_bytes == GUEST_STDOUT
    assert guest.stderr_bytes == GUEST_STDERR


@pytest.mark.vm
def test_exit_status_comes_back(guest):
    # The runner's status is the command's (3, in the fixture); the guest's
    # shell gives 127 for a missing command. 0, 3 and 127 through the
    # runner: test_vm.py::test_exit_status_comes_back.
    assert guest.returncode == 3
    assert guest.file("nocmd-status") == "127\n"


@pytest.mark.vm
def test_provoked_warning_fails_the_run():
    """The second release boot: a WARNING from the real kernel fails the run
    (125), with the command's output still complete and its status named.
    The fake QEMU of test_vm.py shows the runner's mapping on recorded
    logs, and the timeout (124) fully, since that is timeout(1) and the
    runner alone; only a boot shows that the real kernel's splat reaches
    the runner through the console (loglevel=5) and the dmesg file that
    guest/init writes after the command. About 10 s."""
    r = run_vm(["sh", "-c", "echo before; modprobe sleepy_splat_test "
                "provoke=warn; echo after"], smp=1, timeout=300, alone=False)
    assert r.returncode == 125, r
    assert r.stdout_bytes == b"before\nafter\n"
    assert "vm.sh: the kernel log shows problems" in r.stderr
    assert re.search(r"WARNING: .*sleepy_splat_test", r.stderr), r.stderr
    assert "(command status: 0)" in r.stderr
    kept = re.search(r"vm.sh: logs kept in (\S+)", r.stderr).group(1)
    assert "provoked warning" in (Path(kept) / "ctl" / "dmesg").read_text()
    shutil.rmtree(kept)


# ---------------------------------------------------------------- debug kernel

# The debug kernel's own checks, in the debug 2-vCPU boot that the other
# modules share: the boot fails on any splat outside a scenario, so also
# on one while the kernel boots.
SCENARIOS = {"debug-2cpu-a": r"""
scenario debug-kernel <<'EOF'
uname -r > $S/uname
cat /proc/sys/kernel/prove_locking > $S/prove_locking
test -e /sys/kernel/debug/kmemleak && echo kmemleak-on > $S/kmemleak
EOF
"""}
debug_vm = boots.boot_fixture("debug-2cpu-a")


@pytest.mark.vm
def test_debug_kernel_boots_clean(debug_vm):
    scenario_ok(debug_vm, "debug-kernel")
    # The release, lockdep on (prove_locking), kmemleak there.
    assert re.fullmatch(r"6\.1\.\d+-sleepy-debug\n",
                        (debug_vm / "uname").read_text())
    assert (debug_vm / "prove_locking").read_text() == "1\n"
    assert (debug_vm / "kmemleak").read_text() == "kmemleak-on\n"


@pytest.fixture(scope="module")
@boots.own_boot("debug-splats", minutes=1)
def debug_splats():
    """One debug boot provokes a lockdep report, then sleeping in atomic
    context (which lockdep's report, turning lockdep off, does not
    silence): the run fails and the runner names both."""
    r = run_vm("modprobe sleepy_splat_test provoke=lockdep && "
               "rmmod sleepy_splat_test && "
               "modprobe sleepy_splat_test provoke=atomic_sleep && echo done",
               smp=2, debug=True, icount=True, timeout=400)
    assert r.returncode == 125, r
    assert r.stdout == "done\n", r
    yield r
    kept = re.search(r"vm.sh: logs kept in (\S+)", r.stderr).group(1)
    shutil.rmtree(kept)


@pytest.mark.vm
@pytest.mark.parametrize("pattern", [
    r"possible circular locking dependency detected",
    r"BUG: sleeping function called from invalid context",
])
def test_debug_kernel_catches(debug_splats, pattern):
    assert re.search(pattern, debug_splats.stderr), debug_splats.stderr


# ---------------------------------------------------------------- patches

def test_series_lists_every_patch_file():
    files = sorted(p.name for p in PATCH_DIR.glob("*.patch"))
    assert sorted(series()) == files
    assert files, "the series is empty"


def test_every_patch_applies_in_order_to_pristine(tmp_path):
    """The series applies, patch by patch, to the pristine tree: to an
    index of its own (git apply --cached: no work tree to check out)."""
    tree = BUILD / "linux"
    assert (tree / ".git").is_dir(), "run ./build.sh kernel first"
    env = dict(os.environ, GIT_INDEX_FILE=str(tmp_path / "index"))
    git = ["git", "-C", str(tree)]
    subprocess.run(git + ["read-tree", "pristine"], env=env, check=True)
    for p in series():
        r = subprocess.run(git + ["apply", "--cached", str(PATCH_DIR / p)],
                           env=env, capture_output=True, text=True)
        assert r.returncode == 0, f"{p} does not apply:\n{r.stdout}{r.stderr}"
    # What it made is what the build applied with git am, unless the
    # developer has commits there not yet exported.
    tree_id = subprocess.run(git + ["write-tree"], env=env, check=True,
                             capture_output=True, text=True).stdout.strip()
    applied = (tree / ".git" / "sleepy-applied").read_text().split()[1]
    if applied == subprocess.run(git + ["rev-parse", "HEAD"], check=True,
                                 capture_output=True,
                                 text=True).stdout.strip():
        assert tree_id == subprocess.run(
            git + ["rev-parse", "HEAD^{tree}"], check=True,
            capture_output=True, text=True).stdout.strip()


def checkpatch(p):
    # On standard input: checkpatch checks a path that git tracks as a
    # source file (its --file mode), not as a patch.
    with open(PATCH_DIR / p) as f:
        return p, subprocess.run(
            ["perl", str(BUILD / "linux" / "scripts" / "checkpatch.pl"),
             "--strict", "--no-tree", "-"], stdin=f, capture_output=True,
            text=True).stdout


def test_checkpatch_strict_is_clean():
    assert (BUILD / "linux" / "scripts" / "checkpatch.pl").exists(), \
        "run ./build.sh kernel first"
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        for p, out in pool.map(checkpatch, series()):
            m = re.search(r"total: (\d+) errors, (\d+) warnings, "
                          r"(\d+) checks", out)
            assert m, f"{p}: no checkpatch summary:\n{out}"
            assert m.groups() == ("0", "0", "0"), f"{p}:\n{out}"
