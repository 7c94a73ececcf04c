"""The tools on a kernel without sleepy: the host's own, whose stock
kernel has none of sleepy's system calls (600 to 603, numbers no upstream
release uses). Each tool that talks to the kernel says so in one line,
"PROG: this kernel has no sleepy support", and exits with a status of its
own, 69 (libsleepy.h's SLEEPY_EXIT_NO_SUPPORT), apart from its other
errors' 1 and a wrong command line's 2; it creates no file. (The
logical-stack library's registration fails with ENOSYS there:
test_lstack_lib.py. A binary built against the numbers before fails
cleanly on the sleepy kernel: abi_check's old-* cases in test_sampler.py.)
"""
import ctypes
import errno
import os
import re
import subprocess

import pytest

from conftest import NO_SUPPORT_STATUS, UAPI, uapi_values

CALLS = ("sample_start", "sample_stop", "sleepy_lstack", "sleepy_unwind")


@pytest.fixture(scope="module")
def numbers(tmp_path_factory):
    """The calls' numbers, as a program built against the uapi header
    has them."""
    got = uapi_values(tmp_path_factory.mktemp("nr"),
                      [f"__NR_{c}" for c in CALLS])
    return {c: got[f"__NR_{c}"] for c in CALLS}


def test_the_numbers_stay_100_above_upstream(numbers):
    """The rule the uapi header states: at least 100 above upstream's
    highest number, which it names; and past x32's 512 to 547."""
    text = (UAPI / "linux" / "sleepy.h").read_text()
    m = re.search(r"at least 100 above the highest that upstream Linux has\s+"
                  r"\* assigned on x86_64.*?: (\d+) \(", text, re.S)
    assert m, "the uapi header states no rule"
    assert min(numbers.values()) >= max(int(m.group(1)) + 100, 548), numbers
    assert sorted(numbers.values()) == list(range(600, 604)), numbers


@pytest.fixture(scope="module")
def host(user_build, numbers):
    """The tools built for the host, on a host whose kernel has no sleepy
    (else the test is wrong, and says so)."""
    libc = ctypes.CDLL(None, use_errno=True)
    r = libc.syscall(ctypes.c_long(numbers["sleepy_unwind"]),
                     ctypes.c_uint(0xffffffff), ctypes.c_int(-1), None,
                     ctypes.c_size_t(0))
    assert r == -1 and ctypes.get_errno() == errno.ENOSYS, (
        "the host's kernel answers sleepy_unwind: these tests need a "
        "kernel without sleepy")
    return user_build("syscalls-user", "host") / "host"


@pytest.mark.parametrize("prog, args", [
    ("sample_start", ["-o", "{tmp}/s"]),
    ("sample_start", ["-o", "{tmp}/s", "--callchain", "--", "true"]),
    ("sample_stop", []),
    ("sleepy_unwind", ["serve"]),
    ("sleepy_pmu", ["list"]),
    ("sleepy_pmu", ["stats"]),
    ("pmu_example", []),
])
def test_each_tool_says_the_kernel_has_no_sleepy(host, tmp_path, prog, args):
    env = {**os.environ, "SLEEPY_UNWIND_CACHE": str(tmp_path)}
    r = subprocess.run([str(host / prog), *(a.format(tmp=tmp_path)
                                            for a in args)],
                       capture_output=True, text=True, timeout=60, env=env)
    assert (r.returncode, r.stderr, r.stdout) == (
        NO_SUPPORT_STATUS, f"{prog}: this kernel has no sleepy support\n",
        ""), r
    assert not (tmp_path / "s").exists()


def test_other_errors_keep_their_status(host, tmp_path):
    """A wrong command line is still 2, not the kernel's status."""
    r = subprocess.run([str(host / "sample_start"), "--no-such-option"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r
