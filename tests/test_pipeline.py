"""The build/boot pipeline: build.sh's arguments, the VM runner, the kernel
patch series. Guest checks are batched into as few boots as possible."""
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import BUILD, TOP, build_sh, run_vm

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
    for sub in ("all", "deps", "kernel", "patches", "user", "initramfs",
                "vm", "test", "demo", "bench", "clean"):
        assert re.search(rf"^  {sub}\b", r.stdout, re.M), sub


@pytest.mark.parametrize("args", [["frobnicate"], ["--bogus"]])
def test_unknown_subcommand_prints_usage_and_exits_2(args):
    r = build_sh(*args)
    assert r.returncode == 2
    assert "usage: ./build.sh" in r.stderr
    assert "unknown subcommand" in r.stderr


@pytest.mark.parametrize("args, msg", [
    (["vm", "--smp", "0"], "--smp must be"),
    (["vm", "--smp", "two"], "--smp must be"),
    (["vm", "--mem", "lots"], "--mem must be"),
    (["vm", "--timeout", "-3"], "--timeout must be"),
    (["vm", "--smp"], "--smp needs a value"),
    (["vm", "--share", "/nonexistent/dir"], "not a directory"),
    (["vm", "--frob"], "unknown option"),
    (["vm", "--mttcg", "--smp", "x"], "--smp must be"),
    (["kernel", "--release"], "unknown option"),
    (["initramfs", "--x"], "unknown option"),
    (["patches", "extra"], "takes no options"),
])
def test_bad_options_exit_2(args, msg):
    r = build_sh(*args)
    assert r.returncode == 2, r.stderr
    assert msg in r.stderr


def dry_vm(*args):
    r = build_sh("vm", *args, env={"SLEEPY_VM_DRY_RUN": "1"})
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_vm_options_map_to_qemu():
    share = tempfile.mkdtemp()
    try:
        out = dry_vm("--smp", "4", "--mem", "768", "--icount", "--debug",
                     "--share", share, "--", "echo", "a b")
    finally:
        shutil.rmtree(share)
    joined = " ".join(out)
    assert out[0] == "qemu-system-x86_64"
    assert "-smp 4" in joined and "-m 768" in joined
    assert "-icount shift=0,sleep=off" in joined
    assert "out-debug/arch/x86/boot/bzImage" in joined
    assert "initramfs-debug.cpio" in joined
    assert f"share={share}" in out
    assert out[-2:] == ["cmd=echo", "cmd=a b"]


def test_vm_defaults():
    joined = " ".join(dry_vm("--", "true"))
    assert "-smp 2" in joined and "-m 512" in joined
    assert "-icount" not in joined
    assert "out-release/arch/x86/boot/bzImage" in joined
    assert "-accel tcg,thread=single" in joined


def test_vm_mttcg_is_opt_in():
    assert "-accel tcg,thread=multi" in " ".join(dry_vm("--mttcg", "--", "true"))


# ---------------------------------------------------------------- the guest

GUEST_SCRIPT = r"""
set -x
uname -r > /mnt/share/uname
nproc > /mnt/share/nproc
echo written-in-guest > /mnt/share/hello
mkdir -p /mnt/share/sub && echo nested > /mnt/share/sub/file
touch /var/log/writable && touch /tmp/writable && echo ok > /mnt/share/writable
id -u user > /mnt/share/user-uid
modprobe sleepy_splat_test && lsmod > /mnt/share/lsmod-loaded
rmmod sleepy_splat_test && lsmod > /mnt/share/lsmod-unloaded
modinfo -F description sleepy_splat_test > /mnt/share/modinfo
echo streamed-to-console
"""


@pytest.fixture(scope="module")
def guest(module_share):
    r = run_vm(GUEST_SCRIPT, smp=2, share=module_share, timeout=300)
    assert r.returncode == 0, r
    return r


def test_guest_runs_the_sleepy_kernel(guest):
    assert re.fullmatch(r"6\.1\.\d+-sleepy\n", guest.file("uname"))


def test_share_is_read_write(guest):
    assert guest.file("hello") == "written-in-guest\n"
    assert guest.file("sub/file") == "nested\n"


def test_guest_has_writable_var_log_and_tmp_and_a_user(guest):
    assert guest.file("writable") == "ok\n"
    assert guest.file("user-uid") == "1000\n"


def test_modprobe_and_rmmod_work(guest):
    assert re.search(r"^sleepy_splat_test\b", guest.file("lsmod-loaded"), re.M)
    assert "sleepy_splat_test" not in guest.file("lsmod-unloaded")
    assert "provokes" in guest.file("modinfo").lower() or \
        "splat" in guest.file("modinfo").lower()


def test_command_output_is_streamed(guest):
    assert "streamed-to-console" in guest.stdout


@pytest.mark.parametrize("smp", [1, 2, 4])
def test_nproc_equals_smp(smp, share_dir):
    r = run_vm(f"nproc > /mnt/share/n; grep -c ^processor /proc/cpuinfo "
               f">> /mnt/share/n", smp=smp, share=share_dir, timeout=300)
    assert r.returncode == 0, r
    assert (share_dir / "n").read_text().split() == [str(smp), str(smp)]


@pytest.mark.parametrize("cmd, status", [
    (["true"], 0),
    (["sh", "-c", "exit 3"], 3),
    (["no-such-command-here"], 127),
])
def test_exit_status_comes_back(cmd, status):
    r = run_vm(cmd, smp=1, timeout=300)
    assert r.returncode == status, r


def test_hanging_command_is_killed_by_timeout():
    r = run_vm(["sleep", "100000"], smp=1, timeout=25)
    assert r.returncode == 124, r
    assert "timed out after 25 s" in r.stderr


def test_provoked_warning_fails_the_run():
    r = run_vm(["modprobe", "sleepy_splat_test", "provoke=warn"], smp=1,
               timeout=300)
    assert r.returncode == 125, r
    assert "the kernel log shows problems" in r.stderr
    assert re.search(r"WARNING: .*sleepy_splat_test", r.stderr), r.stderr


# ---------------------------------------------------------------- debug kernel

def test_debug_kernel_boots_clean():
    r = run_vm("uname -r; cat /proc/sys/kernel/prove_locking 2>/dev/null;"
               " test -e /sys/kernel/debug/kmemleak && echo kmemleak-on",
               smp=2, debug=True, timeout=400)
    assert r.returncode == 0, r
    assert re.search(r"^6\.1\.\d+-sleepy-debug\r?$", r.stdout, re.M)
    assert "kmemleak-on" in r.stdout


@pytest.mark.parametrize("what, pattern", [
    ("lockdep", r"possible circular locking dependency detected"),
    ("atomic_sleep", r"BUG: sleeping function called from invalid context"),
])
def test_debug_kernel_catches(what, pattern):
    r = run_vm(["modprobe", "sleepy_splat_test", f"provoke={what}"], smp=2,
               debug=True, timeout=400)
    assert r.returncode == 125, r
    assert re.search(pattern, r.stderr), r.stderr


# ---------------------------------------------------------------- patches

def test_series_lists_every_patch_file():
    files = sorted(p.name for p in PATCH_DIR.glob("*.patch"))
    assert sorted(series()) == files
    assert files, "the series is empty"


def test_every_patch_applies_in_order_to_pristine():
    tree = BUILD / "linux"
    assert (tree / ".git").is_dir(), "run ./build.sh kernel first"
    wt = Path(tempfile.mkdtemp(prefix="sleepy-apply-")) / "wt"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@localhost"]
    try:
        subprocess.run(git + ["-C", str(tree), "worktree", "add", "-q",
                              "--detach", str(wt), "pristine"], check=True)
        for p in series():
            r = subprocess.run(git + ["-C", str(wt), "am", "-3", "-q",
                                      str(PATCH_DIR / p)],
                               capture_output=True, text=True)
            assert r.returncode == 0, f"{p} does not apply:\n{r.stdout}{r.stderr}"
        n = subprocess.run(["git", "-C", str(wt), "rev-list", "--count",
                            "pristine..HEAD"], capture_output=True, text=True,
                           check=True).stdout.strip()
        assert int(n) == len(series())
    finally:
        subprocess.run(["git", "-C", str(tree), "worktree", "remove",
                        "--force", str(wt)], capture_output=True)
        shutil.rmtree(wt.parent, ignore_errors=True)


def test_checkpatch_strict_is_clean():
    checkpatch = BUILD / "linux" / "scripts" / "checkpatch.pl"
    assert checkpatch.exists(), "run ./build.sh kernel first"
    for p in series():
        # On standard input: checkpatch checks a path that git tracks as a
        # source file (its --file mode), not as a patch.
        r = subprocess.run(["perl", str(checkpatch), "--strict", "--no-tree",
                            "-"], stdin=open(PATCH_DIR / p), capture_output=True,
                           text=True)
        m = re.search(r"total: (\d+) errors, (\d+) warnings, (\d+) checks",
                      r.stdout)
        assert m, f"{p}: no checkpatch summary:\n{r.stdout}"
        assert m.groups() == ("0", "0", "0"), f"{p}:\n{r.stdout}"
