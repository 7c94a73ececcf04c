"""The build: make decides what is stale, one build runs at a time, and the
initramfs is described in gen_init_cpio's list format (no root needed)."""
import os
import select
import stat
import subprocess

import pytest

from conftest import BUILD, TOP

MAKE = ["make", "--no-print-directory", "-f", str(TOP / "Makefile")]


def make(*targets):
    return subprocess.run(MAKE + list(targets), capture_output=True,
                          text=True, timeout=600, stdin=subprocess.DEVNULL)


def test_a_second_build_waits_for_the_first():
    """While another build.sh holds build/.lock, a build waits for it and
    says so, then does its work once the lock is free."""
    BUILD.mkdir(parents=True, exist_ok=True)
    # -o: the lock is flock's own, not the command's, so killing flock
    # frees it. The command says "held" once flock has the lock: the
    # build starts only then (a build that came first would not wait).
    holder = subprocess.Popen(["flock", "-o", str(BUILD / ".lock"), "sh",
                               "-c", "echo held; exec sleep 600"],
                              stdout=subprocess.PIPE, text=True,
                              start_new_session=True)
    try:
        ready, _, _ = select.select([holder.stdout], [], [], 600)
        assert ready and holder.stdout.readline() == "held\n", \
            "flock did not take the lock in 600 s"
        # uapi: up to date in both tiers of the suite (./build.sh test
        # and test --host), so the second build has nothing to compile.
        build = subprocess.Popen([str(TOP / "build.sh"), "uapi"],
                                 stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True,
                                 stdin=subprocess.DEVNULL)
        first = build.stderr.readline()
        assert build.poll() is None, "it did not wait"
    finally:
        os.killpg(holder.pid, 9)
        holder.wait()
    rest = build.stderr.read()
    assert build.wait(timeout=600) == 0, first + rest
    assert "another ./build.sh is building" in first
    assert "waiting for it to finish" in first


def test_a_fresh_tree_makes_nothing():
    """Once built, make host runs no step (the stamps are make's)."""
    assert make("host").returncode == 0
    uapi = BUILD / "uapi" / "linux" / "sleepy.h"
    before = uapi.stat().st_mtime_ns
    r = make("host")
    assert r.returncode == 0, r.stderr
    assert "prepare" not in r.stdout and "extracting" not in r.stdout
    assert uapi.stat().st_mtime_ns == before


def test_the_uapi_header_is_the_trees():
    assert make("host").returncode == 0
    tree = BUILD / "linux" / "include" / "uapi" / "linux"
    for name in ("sleepy.h", "sleepy_pmu.h"):
        assert (BUILD / "uapi" / "linux" / name).read_bytes() == \
            (tree / name).read_bytes()


# ---------------------------------------------------------------- initramfs

def cpio_list(flavor):
    r = subprocess.run([str(TOP / "mk" / "initramfs-list.sh"), "base",
                        str(TOP), str(BUILD), flavor], capture_output=True,
                       text=True, check=True)
    return [line.split() for line in r.stdout.splitlines()]


@pytest.mark.vm
@pytest.mark.parametrize("flavor", ["release", "debug"])
def test_initramfs_list_is_complete_and_ordered(flavor):
    entries = cpio_list(flavor)
    names = [e[1] for e in entries]
    by_name = {}
    for e in entries:
        by_name[e[1]] = e       # the last line for a name wins
    # Every entry's parent directory comes before it.
    listed = set()
    for e in entries:
        parent = os.path.dirname(e[1])
        assert parent == "/" or parent in listed, e
        listed.add(e[1])
    assert by_name["/home/user"] == ["dir", "/home/user", "0755", "1000",
                                     "1000"]
    assert by_name["/tmp"][:3] == ["dir", "/tmp", "1777"]
    assert by_name["/dev/console"] == ["nod", "/dev/console", "0600", "0",
                                       "0", "c", "5", "1"]
    assert by_name["/init"][2] == str(TOP / "guest" / "init")
    assert by_name["/sbin/modprobe"][:3] == ["slink", "/sbin/modprobe",
                                             "/bin/kmod"]
    assert by_name["/bin/sh"][:3] == ["slink", "/bin/sh", "/bin/busybox"]
    for tool in sorted(os.listdir(BUILD / "user" / "guest")):
        e = by_name[f"/usr/bin/{tool}"]
        assert e[0] == "file" and e[2] == str(BUILD / "user" / "guest" / tool)
    # Every file line names a host file that exists; no name twice but dirs.
    for e in entries:
        if e[0] == "file":
            assert stat.S_ISREG(os.stat(e[2]).st_mode), e
    dup = {n for n in names if names.count(n) > 1}
    assert all(by_name[n][0] == "dir" for n in dup), dup
    release = (BUILD / f"out-{flavor}" / "include" / "config" /
               "kernel.release").read_text().strip()
    assert f"/lib/modules/{release}/modules.dep" in by_name


def newc_entries(data):
    """(name, mode, uid, gid, rdev major, rdev minor) of a newc archive."""
    pos = 0
    while True:
        h = data[pos:pos + 110]
        assert h[:6] == b"070701", pos
        f = [int(h[6 + 8 * i:14 + 8 * i], 16) for i in range(13)]
        mode, uid, gid, size, namesize = f[1], f[2], f[3], f[6], f[11]
        name = data[pos + 110:pos + 110 + namesize - 1].decode()
        pos = (pos + 110 + namesize + 3) & ~3
        pos = (pos + size + 3) & ~3
        if name == "TRAILER!!!":
            return
        yield "/" + name.lstrip("/"), mode, uid, gid, f[9], f[10]


@pytest.mark.vm
def test_initramfs_archive_holds_the_list():
    """The archive is what the list says, owners and modes included."""
    rows = {e[0]: e for e in
            newc_entries((BUILD / "initramfs-release.cpio").read_bytes())}
    last = {e[1]: e for e in cpio_list("release")}     # the last line wins
    for e in last.values():
        assert e[1] in rows, e
        if e[0] in ("dir", "file"):
            _, mode, uid, gid, _, _ = rows[e[1]]
            assert (stat.S_IMODE(mode), uid, gid) == \
                (int(e[-3], 8), int(e[-2]), int(e[-1])), e
    _, mode, _, _, major, minor = rows["/dev/console"]
    assert stat.S_ISCHR(mode) and (major, minor) == (5, 1)
