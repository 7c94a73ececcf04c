"""Shared fixtures for the sleepy test suite.

Every VM test boots the kernel under QEMU TCG through ./build.sh vm, the same
runner a researcher uses. Boots are the expensive part, so a test module
batches its guest-side checks into one script per boot where it can, writes
the results into a shared folder, and its tests read them.
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


class VMResult:
    def __init__(self, proc, share):
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.share = share

    def file(self, name):
        return (self.share / name).read_text()

    def __repr__(self):
        return (f"VMResult(rc={self.returncode})\n--- stdout ---\n"
                f"{self.stdout[-4000:]}\n--- stderr ---\n{self.stderr[-4000:]}")


def run_vm(cmd, *, smp=2, debug=False, share=None, timeout=300, icount=False,
           mem=None, extra=()):
    """Boot the VM, run cmd (a list, or a shell script string) as root."""
    args = [str(BUILD_SH), "vm", "--smp", str(smp), "--timeout", str(timeout)]
    if debug:
        args.append("--debug")
    if icount:
        args.append("--icount")
    if mem:
        args += ["--mem", str(mem)]
    if share is not None:
        args += ["--share", str(share)]
    args += list(extra)
    if isinstance(cmd, str):
        cmd = ["sh", "-c", cmd]
    proc = subprocess.run(args + ["--"] + list(cmd), capture_output=True,
                          text=True, errors="replace", timeout=timeout + 600,
                          stdin=subprocess.DEVNULL)
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


def make_parse(tmp_path_factory, target):
    """parse built from this checkout ("host" or "guest") into a fresh
    folder, so that a test never runs a stale binary: its path."""
    out = tmp_path_factory.mktemp(target)
    r = subprocess.run(["make", "-s", "-C", str(TOP / "parse"), f"OUT={out}",
                        f"KERNEL_UAPI={BUILD / 'uapi'}", target],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out / target / "parse"


@pytest.fixture(scope="session")
def parse_bin(tmp_path_factory):
    """The host parse, built once per test session."""
    return make_parse(tmp_path_factory, "host")
