"""The VM runner, guest/vm.sh, without booting: its options and their QEMU
and kernel command lines (--dry-run), its errors, the splat scan on kernel
logs recorded from real boots (tests/data/vm/, see its README), and the
exit status, output and logs of whole runs against a fake QEMU
(tests/data/vm/fake-qemu), which does what QEMU and guest/init do with the
runner's control folder, so that the runner's real code runs: the files,
the streaming, timeout(1), the scan and the status mapping. What only a
boot shows (guest/init, the real console and dmesg) is in
test_pipeline.py."""
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import TOP, run_vm

VM_SH = TOP / "guest" / "vm.sh"
DATA = TOP / "tests" / "data" / "vm"
FAKE = DATA / "fake-qemu"
APPEND = "console=ttyS0 loglevel=5 panic=-1 oops=panic pci=noacpi"


@pytest.fixture
def build(tmp_path, monkeypatch):
    """An empty build folder (SLEEPY_BUILD_DIR) for the runner."""
    b = tmp_path / "build"
    b.mkdir()
    monkeypatch.setenv("SLEEPY_BUILD_DIR", str(b))
    for var in list(os.environ):
        if var.startswith("FAKE_QEMU_") or var == "SLEEPY_VM_DRY_RUN":
            monkeypatch.delenv(var)
    return b


@pytest.fixture
def images(build):
    """The build folder with stand-ins for the images of both kernels."""
    for flavor in ("release", "debug"):
        k = build / f"out-{flavor}" / "arch" / "x86" / "boot" / "bzImage"
        k.parent.mkdir(parents=True)
        k.write_bytes(b"kernel")
        for suffix in ("", "-perf"):
            (build / f"initramfs-{flavor}{suffix}.cpio").write_bytes(b"cpio")
    return build


def vm(*args, env=None, timeout=60):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([str(VM_SH), *map(str, args)], capture_output=True,
                          timeout=timeout, env=e, stdin=subprocess.DEVNULL)


def fake(*args, env=None, timeout=60):
    """A whole run of the runner against the fake QEMU."""
    return vm("--qemu", FAKE, *args, env=env, timeout=timeout)


def runs(build):
    d = build / "runs"
    return sorted(d.iterdir()) if d.exists() else []


# ---------------------------------------------------------------- options

def test_help_names_every_option():
    r = vm("--help")
    assert r.returncode == 0
    out = r.stdout.decode()
    assert out.startswith("usage: guest/vm.sh [OPTIONS] [-- CMD [ARG...]]")
    for opt in ("--smp N", "--mem MB", "--debug", "--share DIR", "--icount",
                "--timeout S", "--perf", "--mttcg", "--verbose", "--dry-run",
                "--kernel FILE", "--initrd FILE", "--qemu PROG",
                "--scan-log CONSOLE_LOG [DMESG]", "SLEEPY_VM_DRY_RUN=1",
                "--host-root"):
        assert opt in out, opt
    assert "124 on timeout" in out and "125 if the kernel" in out


@pytest.mark.parametrize("args, msg", [
    (["--smp", "0"], "--smp must be 1..64, not '0'"),
    (["--smp", "two"], "--smp must be 1..64, not 'two'"),
    (["--smp", "65"], "--smp must be 1..64, not '65'"),
    (["--smp", "0064"], "--smp must be 1..64, not '0064'"),
    (["--mem", "lots"], "--mem must be a number of MB, not 'lots'"),
    (["--mem", "0"], "--mem must be a number of MB, not '0'"),
    (["--timeout", "-3"], "--timeout must be seconds, not '-3'"),
    (["--timeout", "1.5"], "--timeout must be seconds, not '1.5'"),
    (["--smp"], "--smp needs a value"),
    (["--mem"], "--mem needs a value"),
    (["--timeout"], "--timeout needs a value"),
    (["--share"], "--share needs a value"),
    (["--kernel"], "--kernel needs a value"),
    (["--initrd"], "--initrd needs a value"),
    (["--qemu"], "--qemu needs a value"),
    (["--share", "/nonexistent/dir"], "--share /nonexistent/dir: not a directory"),
    (["--frob"], "unknown option: --frob"),
    (["vm"], "unknown option: vm"),
    (["--mttcg", "--smp", "x"], "--smp must be 1..64, not 'x'"),
    (["--dry-run", "--smp", "x"], "--smp must be 1..64, not 'x'"),
    (["--scan-log"], "--scan-log takes CONSOLE_LOG [DMESG]"),
    (["--scan-log", "a", "b", "c"], "--scan-log takes CONSOLE_LOG [DMESG]"),
    (["--scan-log", "/nonexistent/log"], "--scan-log /nonexistent/log: no such file"),
    (["--dry-run", "--scan-log", "x"], "--scan-log comes first, alone"),
])
def test_bad_options_exit_2_with_usage(args, msg, build):
    r = vm(*args)
    assert r.returncode == 2, r
    err = r.stderr.decode()
    assert err.startswith(f"vm.sh: {msg}\n"), err
    assert "usage: guest/vm.sh" in err
    assert r.stdout == b""
    assert runs(build) == []


def dry(*args, env=None):
    r = vm("--dry-run", *args, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stderr == b""
    return r.stdout.decode().splitlines()


def qemu_args(lines):
    """The QEMU argv of a dry run: the lines before append=."""
    return lines[:next(i for i, x in enumerate(lines)
                       if x.startswith("append="))]


def opt(argv, name):
    """The values of a QEMU option, in order."""
    return [argv[i + 1] for i, x in enumerate(argv) if x == name]


def test_dry_run_defaults(build):
    out = dry("--", "true")
    argv = qemu_args(out)
    assert argv[0] == "qemu-system-x86_64"
    assert argv[1:9] == ["-nodefaults", "-no-user-config", "-machine", "pc",
                         "-accel", "tcg,thread=single", "-cpu", "qemu64"]
    assert opt(argv, "-smp") == ["2"] and opt(argv, "-m") == ["512"]
    assert "-icount" not in argv
    assert opt(argv, "-kernel") == [
        f"{build}/out-release/arch/x86/boot/bzImage"]
    assert opt(argv, "-initrd") == [f"{build}/initramfs-release.cpio"]
    assert "-no-reboot" in argv and opt(argv, "-display") == ["none"]
    assert opt(argv, "-append") == [APPEND]
    run = f"{build}/runs/vm.DRY-RUN"
    assert opt(argv, "-fsdev") == [
        f"local,id=ctl,path={run}/ctl,security_model=none"]
    assert opt(argv, "-device") == [
        "virtio-9p-pci,fsdev=ctl,mount_tag=sleepyctl"]
    # The console goes to a file; the command's output comes back apart.
    assert opt(argv, "-serial") == [f"file:{run}/console.log"]
    assert out[len(argv):] == [f"append={APPEND}", "cmd=true"]
    # A dry run needs no images and leaves nothing behind.
    assert list(build.iterdir()) == []


def test_dry_run_every_option_maps_to_qemu(tmp_path):
    share = tmp_path / "a share"
    share.mkdir()
    out = dry("--smp", "4", "--mem", "768", "--icount", "--debug",
              "--share", share, "--", "echo", "a b")
    argv = qemu_args(out)
    assert opt(argv, "-smp") == ["4"] and opt(argv, "-m") == ["768"]
    assert opt(argv, "-icount") == ["shift=0,sleep=off"]
    assert opt(argv, "-kernel")[0].endswith("/out-debug/arch/x86/boot/bzImage")
    assert opt(argv, "-initrd")[0].endswith("/initramfs-debug.cpio")
    assert opt(argv, "-fsdev")[1] == (
        f"local,id=share,path={share},security_model=none")
    assert opt(argv, "-device")[1] == (
        "virtio-9p-pci,fsdev=share,mount_tag=share")
    assert out[len(argv):] == [
        f"append={APPEND} maxcpus=1 sleepy.online_cpus", f"share={share}",
        "cmd=echo", "cmd=a b"]


def test_dry_run_env_alias():
    args = ["--smp", "3", "--", "sh", "-c", "echo 'x'"]
    r = vm(*args, env={"SLEEPY_VM_DRY_RUN": "1"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().splitlines() == dry(*args)


@pytest.mark.parametrize("smp", [1, 2, 4, 64])
@pytest.mark.parametrize("icount", [False, True])
def test_smp_and_icount(smp, icount):
    out = dry("--smp", smp, *(["--icount"] if icount else []), "--", "true")
    argv = qemu_args(out)
    assert opt(argv, "-smp") == [str(smp)]
    assert opt(argv, "-icount") == (["shift=0,sleep=off"] if icount else [])
    append = opt(argv, "-append")[0]
    assert f"append={append}" in out
    # Under -icount, several vCPUs boot on one and init onlines the rest.
    if icount and smp > 1:
        assert append == f"{APPEND} maxcpus=1 sleepy.online_cpus"
    else:
        assert append == APPEND


@pytest.mark.parametrize("args, mem", [
    ([], "512"), (["--debug"], "1024"), (["--mem", "768"], "768"),
    (["--debug", "--mem", "300"], "300")])
def test_mem_defaults(args, mem):
    assert opt(qemu_args(dry(*args)), "-m") == [mem]


@pytest.mark.parametrize("args, kernel, initrd", [
    ([], "out-release", "initramfs-release.cpio"),
    (["--perf"], "out-release", "initramfs-release-perf.cpio"),
    (["--debug"], "out-debug", "initramfs-debug.cpio"),
    (["--debug", "--perf"], "out-debug", "initramfs-debug-perf.cpio"),
])
def test_images_by_flavor(args, kernel, initrd, build):
    argv = qemu_args(dry(*args, "--", "true"))
    assert opt(argv, "-kernel") == [
        f"{build}/{kernel}/arch/x86/boot/bzImage"]
    assert opt(argv, "-initrd") == [f"{build}/{initrd}"]


def test_kernel_and_initrd_overrides():
    argv = qemu_args(dry("--debug", "--perf", "--kernel", "/some/bzImage",
                         "--initrd", "/some/test.cpio", "--", "true"))
    assert opt(argv, "-kernel") == ["/some/bzImage"]
    assert opt(argv, "-initrd") == ["/some/test.cpio"]
    assert opt(argv, "-m") == ["1024"]


def test_mttcg_is_opt_in():
    assert opt(qemu_args(dry("--mttcg")), "-accel") == ["tcg,thread=multi"]
    assert opt(qemu_args(dry()), "-accel") == ["tcg,thread=single"]


def test_qemu_option(build):
    assert qemu_args(dry("--qemu", "/opt/q/qemu-x"))[0] == "/opt/q/qemu-x"


def test_interactive_uses_the_console_as_terminal():
    out = dry("--timeout", "5")
    argv = qemu_args(out)
    assert opt(argv, "-serial") == ["mon:stdio"]
    assert not [x for x in out if x.startswith("cmd=")]


def test_relative_share_is_made_absolute(tmp_path, monkeypatch):
    (tmp_path / "sh").mkdir()
    monkeypatch.chdir(tmp_path)
    assert f"share={tmp_path}/sh" in dry("--share", "sh")


def test_dry_run_shows_what_runs(images, tmp_path):
    """The arguments the fake QEMU gets are the dry run's, but for the
    run folder."""
    args = ["--smp", "3", "--icount", "--share", tmp_path, "--", "true"]
    shown = qemu_args(dry(*args))
    got = tmp_path / "args"
    r = fake(*args, env={"FAKE_QEMU_ARGS": str(got)})
    assert r.returncode == 0, r
    ran = got.read_text().splitlines()
    run = re.search(r"path=(.*)/ctl,", ran[ran.index("-fsdev") + 1]).group(1)
    assert run.startswith(f"{images}/runs/vm.")
    assert shown[0] == "qemu-system-x86_64"
    assert [x.replace(run, "RUN") for x in ran] == \
        [x.replace(f"{images}/runs/vm.DRY-RUN", "RUN") for x in shown[1:]]


def test_host_root_shares_the_root_read_only(tmp_path, build):
    share = tmp_path / "s"
    share.mkdir()
    out = dry("--host-root", "--debug", "--share", share, "--", "true")
    argv = qemu_args(out)
    assert opt(argv, "-fsdev")[-1] == (
        "local,id=hostroot,path=/,security_model=none,readonly=on,"
        "multidevs=remap")
    assert opt(argv, "-device")[-1] == (
        "virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot")
    # What the guest's init reads: our tools, our modules, the share's
    # host path (to mount it there as well).
    assert [x for x in out if x.startswith("host-root: ")] == [
        f"host-root: bin={build}/user/guest",
        f"host-root: modules={build}/mods-debug/lib/modules",
        f"host-root: share={share}"]
    assert "hostroot" not in " ".join(qemu_args(dry("--", "true")))


def test_host_root_needs_our_tools_and_modules(images):
    r = vm("--host-root", "--", "true")
    assert r.returncode == 2
    assert r.stderr.decode() == (
        f"vm.sh: {images}/user/guest/sample_start missing: run ./build.sh "
        "user and ./build.sh kernel\n")
    assert runs(images) == []
    tool = images / "user" / "guest" / "sample_start"
    tool.parent.mkdir(parents=True)
    tool.write_bytes(b"")
    r = vm("--host-root", "--", "true")
    assert r.returncode == 2
    assert r.stderr.decode().startswith(
        f"vm.sh: {images}/mods-release/lib/modules missing")


# ---------------------------------------------------------------- images

@pytest.mark.parametrize("args, missing, hint", [
    ([], "out-release/arch/x86/boot/bzImage", "./build.sh kernel"),
    (["--debug"], "out-debug/arch/x86/boot/bzImage",
     "./build.sh kernel --debug"),
])
def test_missing_kernel(args, missing, hint, build):
    r = vm(*args, "--", "true")
    assert r.returncode == 2
    assert r.stderr.decode() == f"vm.sh: {build}/{missing} missing: run {hint}\n"
    assert r.stdout == b"" and runs(build) == []


@pytest.mark.parametrize("args, missing, hint", [
    ([], "initramfs-release.cpio", "./build.sh initramfs"),
    (["--debug"], "initramfs-debug.cpio", "./build.sh initramfs --debug"),
    (["--perf"], "initramfs-release-perf.cpio",
     "./build.sh vm --perf (it builds it)"),
])
def test_missing_initrd(args, missing, hint, images):
    (images / missing).unlink()
    r = vm(*args, "--", "true")
    assert r.returncode == 2
    assert r.stderr.decode() == \
        f"vm.sh: {images}/{missing} missing: run {hint}\n"
    assert runs(images) == []


def test_missing_override(images, tmp_path):
    r = vm("--kernel", tmp_path / "nope", "--", "true")
    assert r.returncode == 2
    assert r.stderr.decode().startswith(f"vm.sh: {tmp_path}/nope missing")
    r = vm("--initrd", tmp_path / "nope.cpio")
    assert r.returncode == 2
    assert r.stderr.decode().startswith(f"vm.sh: {tmp_path}/nope.cpio missing")


def test_overrides_need_no_build_folder_images(build, tmp_path):
    k, i = tmp_path / "k", tmp_path / "i.cpio"
    k.write_bytes(b"k")
    i.write_bytes(b"i")
    r = fake("--kernel", k, "--initrd", i, "--", "echo", "hi")
    assert (r.returncode, r.stdout) == (0, b"hi\n"), r


# ---------------------------------------------------------------- the splat scan

# Kernel logs recorded from real boots (tests/data/vm/README.md): the
# console file (console.log, with the serial console's CRs) or the guest's
# dmesg, and a line the scan must report.
RECORDED = [
    ("warn.console", None, r"WARNING: CPU: \d+ PID: \d+ at .*sleepy_splat_test"),
    ("lockdep.console", None, r"WARNING: possible circular locking dependency detected"),
    ("lockdep.console", None, r"possible circular locking dependency detected"),
    ("atomic_sleep.console", None, r"BUG: sleeping function called from invalid context"),
    ("kasan.console", None, r"BUG: KASAN: .*use-after-free"),
    ("kmemleak.console", "kmemleak.dmesg", r"kmemleak: \d+ new suspected memory leaks"),
    ("panic.console", None, r"Kernel panic - not syncing: Fatal exception"),
    ("panic.console", None, r"general protection fault"),
]


@pytest.mark.parametrize("console, dmesg, pattern", RECORDED)
def test_scan_finds_recorded_splat(console, dmesg, pattern):
    args = [DATA / console] + ([DATA / dmesg] if dmesg else [])
    r = vm("--scan-log", *args)
    assert r.returncode == 1, r
    out = r.stdout.decode()
    assert re.search(pattern, out, re.M), out
    assert "\r" not in out
    assert len(out.splitlines()) <= 40


def test_kmemleak_is_in_dmesg_only():
    """kmemleak reports at KERN_INFO, below the console's loglevel 5: only
    the guest's dmesg file shows it, which is why the runner reads it."""
    assert vm("--scan-log", DATA / "kmemleak.console").returncode == 0


def test_scan_clean_boot():
    r = vm("--scan-log", DATA / "clean.console", DATA / "clean.dmesg")
    assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")


def test_scan_ignores_lines_without_a_timestamp(tmp_path):
    """Only timestamped printk lines of the console count: what the guest's
    shell or a program prints there (e.g. the interactive shell) does not."""
    console = tmp_path / "console.log"
    clean = (DATA / "clean.console").read_bytes()
    console.write_bytes(clean + b"WARNING: this is a program's output\r\n"
                        b"BUG: also output; Call Trace: too\r\n"
                        b"x[    1.0] WARNING: not at the line start\r\n")
    assert vm("--scan-log", console).returncode == 0
    console.write_bytes(clean + b"[   12.345678] WARNING: a kernel line\r\n")
    r = vm("--scan-log", console)
    assert (r.returncode, r.stdout) == (1, b"[   12.345678] WARNING: a kernel line\n")


def test_scan_reports_each_line_once(tmp_path):
    dmesg = tmp_path / "dmesg"
    line = b"[    3.000000] BUG: KASAN: double report\n"
    dmesg.write_bytes(line * 3)
    r = vm("--scan-log", DATA / "clean.console", dmesg)
    assert (r.returncode, r.stdout) == (1, line)


# ---------------------------------------------------------------- runs (fake QEMU)

@pytest.mark.parametrize("cmd, status", [
    (["true"], 0),
    (["sh", "-c", "exit 3"], 3),
    (["no-such-command-here"], 127),
])
def test_exit_status_comes_back(cmd, status, images):
    r = fake("--", *cmd)
    assert r.returncode == status, r
    assert runs(images) == [], "a finished run leaves no folder"


def test_stdout_and_stderr_come_back_apart_byte_for_byte(images):
    out = b"one\ntwo\n\n  three\t\n" + bytes(range(256)) + b"no newline"
    err = b"warning: something\n\x00\xff\x1b[0m"
    script = ("printf '%b' '" + "".join(f"\\0{b:03o}" for b in out) + "'; "
              "printf '%b' '" + "".join(f"\\0{b:03o}" for b in err) + "' >&2")
    r = fake("--", "sh", "-c", script)
    assert r.returncode == 0, r
    assert r.stdout == out
    assert r.stderr == err
    # Nothing of the console: no kernel lines, no CRs added.
    assert b"Linux version" not in r.stdout + r.stderr


def test_arguments_reach_the_command_unchanged(images):
    args = ["a b", "it's", "$HOME", "", "*", '"q"', "back\\slash", "new\nline",
            "ends in newlines\n\n", "''"]
    r = fake("--", "printf", "<%s>", *args)
    assert r.returncode == 0, r
    assert r.stdout.decode() == "".join(f"<{a}>" for a in args)


def test_large_output_is_complete(images, tmp_path):
    blob = tmp_path / "blob"
    blob.write_bytes(os.urandom(8 << 20))
    r = fake("--", "sh", "-c", f"cat {blob}; cat {blob} >&2; cat {blob}")
    assert r.returncode == 0
    data = blob.read_bytes()
    assert r.stdout == data + data
    assert r.stderr == data


def test_output_is_streamed_while_the_guest_runs(images):
    p = subprocess.Popen([str(VM_SH), "--qemu", str(FAKE), "--", "sh", "-c",
                          "echo first; echo to-stderr >&2; sleep 5; "
                          "echo second"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL)
    try:
        assert p.stdout.readline() == b"first\n"
        assert p.stderr.readline() == b"to-stderr\n"
        assert p.poll() is None, "the run should still be going"
        assert p.stdout.read() == b"second\n"
        assert p.wait(timeout=30) == 0
    finally:
        p.kill()
        p.wait()


def test_timeout_exits_124(images):
    t0 = time.monotonic()
    r = fake("--timeout", "2", "--", "sh", "-c", "echo before-the-hang",
             env={"FAKE_QEMU_HANG": "1"})
    took = time.monotonic() - t0
    assert r.returncode == 124, r
    err = r.stderr.decode()
    assert "vm.sh: timed out after 2 s; QEMU killed" in err
    assert took < 10
    assert r.stdout == b"before-the-hang\n"
    kept = re.search(r"vm.sh: logs kept in (\S+)", err).group(1)
    assert Path(kept, "console.log").exists()
    # No splat: the console's last lines say where the guest was.
    assert "last console lines:" in err
    assert "Linux version 6.1.0-sleepy (fake-qemu)" in err
    assert "\r" not in err


def test_no_timeout_by_default(images):
    r = fake("--", "sh", "-c", "sleep 1; echo done")
    assert (r.returncode, r.stdout) == (0, b"done\n"), r


def test_splat_on_the_console_exits_125(images):
    r = fake("--", "sh", "-c", "echo the-output; echo err >&2",
             env={"FAKE_QEMU_CONSOLE": str(DATA / "warn.console")})
    assert r.returncode == 125, r
    assert r.stdout == b"the-output\n"
    err = r.stderr.decode()
    assert err.startswith("err\n")
    assert "vm.sh: the kernel log shows problems:\n" in err
    assert re.search(r"^  \[ *[\d.]+\] WARNING: .*sleepy_splat_test", err, re.M)
    assert "vm.sh: failing the run (command status: 0)" in err
    kept = Path(re.search(r"vm.sh: logs kept in (\S+)", err).group(1))
    assert [kept] == runs(images)
    assert (kept / "console.log").read_bytes().endswith(
        b"reboot: Restarting system\r\n")
    assert (kept / "ctl" / "stdout").read_bytes() == b"the-output\n"


def test_splat_in_the_guests_dmesg_exits_125(images):
    r = fake("--", "sh", "-c", "exit 4",
             env={"FAKE_QEMU_DMESG": str(DATA / "kmemleak.dmesg")})
    assert r.returncode == 125, r
    err = r.stderr.decode()
    assert re.search(r"kmemleak: \d+ new suspected memory leaks", err)
    assert "(command status: 4)" in err


def test_panic_without_status_exits_125(images):
    r = fake("--", "true", env={"FAKE_QEMU_CONSOLE": str(DATA / "panic.console"),
                                "FAKE_QEMU_NO_STATUS": "1"})
    assert r.returncode == 125, r
    err = r.stderr.decode()
    assert "Kernel panic - not syncing" in err
    assert "(command status: none)" in err


def test_no_status_exits_125_with_the_console_and_qemus_words(images):
    r = fake("--", "true", env={"FAKE_QEMU_NO_STATUS": "1",
                                "FAKE_QEMU_EXIT": "1"})
    assert r.returncode == 125, r
    err = r.stderr.decode()
    assert "vm.sh: the guest did not report an exit status (QEMU exit 1)" in err
    assert "vm.sh: last console lines:\n  [    0.000000] Linux version" in err
    assert "vm.sh: QEMU said:\n  fake-qemu: exiting with status 1" in err
    assert "vm.sh: logs kept in" in err
    assert r.stdout == b""


def test_command_output_that_looks_like_a_splat_is_not_one(images):
    text = b"WARNING: only words\n[    1.000000] BUG: printed by the command\n"
    r = fake("--", "printf", text.decode())
    assert (r.returncode, r.stdout, r.stderr) == (0, text, b"")


def test_verbose_shows_the_console_on_stderr(images):
    r = fake("--verbose", "--", "sh", "-c", "echo out; echo err >&2")
    assert r.returncode == 0, r
    assert r.stdout == b"out\n"
    err = r.stderr.decode()
    assert "[    0.000000] Linux version 6.1.0-sleepy (fake-qemu)\n" in err
    assert f"Command line: {APPEND}\n" in err
    assert "err\n" in err and "\r" not in err
    assert runs(images) == []


def test_interactive_returns_the_guests_status(images):
    r = fake()
    assert r.returncode == 0, r
    assert b"Linux version" in r.stdout
    assert runs(images) == []


def test_interrupted_run_stops_qemu(images, tmp_path):
    pidfile = tmp_path / "pid"
    env = dict(os.environ, FAKE_QEMU_HANG="1", FAKE_QEMU_PID=str(pidfile))
    p = subprocess.Popen([str(VM_SH), "--qemu", str(FAKE), "--timeout", "60",
                          "--", "true"], env=env, stderr=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if pidfile.exists() and pidfile.read_text().strip():
                break
            time.sleep(0.1)
        qpid = int(pidfile.read_text())
        time.sleep(0.5)
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=15) == 130
        assert b"vm.sh: interrupted; QEMU stopped" in p.stderr.read()
        for _ in range(50):
            try:
                os.kill(qpid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            pytest.fail("the fake QEMU still runs")
    finally:
        p.kill()
        p.wait()


def test_run_vm_passes_its_keywords(images, tmp_path, monkeypatch):
    """conftest.run_vm: the runner's options from its keywords, the clean
    output in stdout/stdout_bytes."""
    got = tmp_path / "args"
    monkeypatch.setenv("FAKE_QEMU_ARGS", str(got))
    share = tmp_path / "share"
    share.mkdir()
    r = run_vm("printf 'x\\377'; echo e >&2; exit 4", smp=3, debug=True,
               share=share, timeout=50, icount=True, mem=700, verbose=True,
               extra=("--qemu", str(FAKE)))
    assert r.returncode == 4
    assert r.stdout_bytes == b"x\xff" and r.stdout == "x\ufffd"
    assert "e\n" in r.stderr and "Linux version" in r.stderr
    assert r.share == share
    argv = got.read_text().splitlines()
    assert opt(argv, "-smp") == ["3"] and opt(argv, "-m") == ["700"]
    assert opt(argv, "-icount") == ["shift=0,sleep=off"]
    assert opt(argv, "-kernel") == [
        f"{images}/out-debug/arch/x86/boot/bzImage"]
    assert f"local,id=share,path={share},security_model=none" in argv


# ---------------------------------------------------------------- style

def shell_scripts():
    """Every shell script of the checkout: the files whose first line
    runs sh or bash (build/ and .git left out), and the one that is only
    sourced (bench/timed.sh)."""
    found = [TOP / "bench" / "timed.sh"]
    for d, dirs, files in os.walk(TOP):
        dirs[:] = [x for x in dirs if x not in (".git", "build")]
        for f in files:
            path = Path(d) / f
            with open(path, "rb") as fh:
                first = fh.readline(80)
            if re.match(rb"#!\S*(/| )(ba|da)?sh\b", first):
                found.append(path)
    return sorted(found)


def test_shellcheck_clean():
    """shellcheck finds nothing in any of our shell scripts, notes
    included (-x: it follows what they source, from the top folder)."""
    sc = shutil.which("shellcheck")
    assert sc, "shellcheck is not installed (./build.sh deps installs it)"
    scripts = shell_scripts()
    for must in (VM_SH, FAKE, TOP / "build.sh", TOP / "guest" / "init",
                 TOP / "mk" / "kernel.sh"):
        assert must in scripts, must
    r = subprocess.run([sc, "-x", *map(str, scripts)], capture_output=True,
                       text=True, cwd=TOP)
    assert r.returncode == 0, r.stdout
