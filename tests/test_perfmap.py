"""parse names JIT code from perf maps (host, no VM): a synthetic session
maps anonymous executable memory (MMAP records with SLEEPY_MMAP_F_ANON, as
the kernel writes them for a JIT's code) and samples addresses in it;
the process's perf map (perf's jit-interface format, "START SIZE NAME"
in hex without 0x) lies next to the session as FILE.perf-PID.map, as
sample_stop copies it, or in /tmp under --symfs. The truth is the map's
own lines."""
import json
import subprocess

import pytest

import sleepyfile as sf

PID = 4242
BASE = 0x7f5500000000
# (start offset, size, name): V8-like names, with spaces and colons.
FUNCS = [(0x0, 0x40, "JS:*hotLoop /tmp/hot.js:1:17"),
         (0x40, 0x20, "JS:^cold /tmp/hot.js:9:1"),
         (0x100, 0x80, "Builtin:ArgumentsAdaptorTrampoline")]
MAP_TEXT = (
    "".join(f"{BASE + o:x} {n:x} {name}\n" for o, n, name in FUNCS)
    # Lines that are not "START SIZE NAME" are skipped...
    + "garbage\n7f55 zz bad size\n\n" + f"{BASE + 0x200:x} 0 zero size\n"
    # ...and a later line for the same START wins (the JIT reused it).
    + f"{BASE + 0x100:x} 80 JS:*reused /tmp/hot.js:20:3\n")
# (ip, samples, symbol, reason)
TRUTH = [(BASE + 0x10, 7, "JS:*hotLoop /tmp/hot.js:1:17", None),
         (BASE + 0x45, 3, "JS:^cold /tmp/hot.js:9:1", None),
         (BASE + 0x120, 2, "JS:*reused /tmp/hot.js:20:3", None),
         (BASE + 0x900, 1, f"perf-{PID}.map+{BASE + 0x900:#x}",
          "no symbol")]


def session(path):
    f = sf.SessionFile()
    f.appid(1, "node", pid=PID, path="/usr/bin/node")
    f.mmap(1, BASE, 0x1000, pid=PID, flags=sf.MMAP_F_ANON | sf.MMAP_F_MPROTECT)
    t = 0
    for ip, n, _, _ in TRUTH:
        for _ in range(n):
            f.sample(1, ip, pid=PID, tid=PID, time_ns=t)
            t += 1_000_000
    f.stats(samples_taken=13, samples_written=13)
    f.write(path)
    return path


def rows(parse_bin, path, *args):
    r = subprocess.run([str(parse_bin), "--by", "dso,symbol", "--format",
                        "json", *map(str, args), str(path)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["rows"]


def by_symbol(rs):
    return {r["symbol"]: (r["dso"], r["samples"], r["kind"],
                          r.get("reason")) for r in rs}


def test_jit_code_is_named_from_the_map_next_to_the_session(parse_bin,
                                                            tmp_path):
    slp = session(tmp_path / "s.slp")
    (tmp_path / f"s.slp.perf-{PID}.map").write_text(MAP_TEXT)
    got = by_symbol(rows(parse_bin, slp))
    dso = f"perf-{PID}.map"
    assert got == {sym: (dso, n, "unresolved" if why else "symbol", why)
                   for _, n, sym, why in TRUTH}, got


def test_jit_map_under_symfs_tmp(parse_bin, tmp_path):
    slp = session(tmp_path / "s.slp")
    root = tmp_path / "root"
    (root / "tmp").mkdir(parents=True)
    (root / "tmp" / f"perf-{PID}.map").write_text(MAP_TEXT)
    got = by_symbol(rows(parse_bin, slp, "--symfs", root))
    assert got["JS:*hotLoop /tmp/hot.js:1:17"][:2] == (f"perf-{PID}.map", 7)


def test_without_a_map_jit_samples_are_unresolved_file_missing(parse_bin,
                                                                tmp_path):
    slp = session(tmp_path / "s.slp")
    root = tmp_path / "empty"
    root.mkdir()
    got = rows(parse_bin, slp, "--symfs", root)
    assert {r["reason"] for r in got} == {"file missing"}, got
    assert sum(r["samples"] for r in got) == 13
    assert all(r["symbol"].startswith(f"perf-{PID}.map+0x7f55")
               for r in got), got


@pytest.mark.parametrize("kind", ["fifo", "dir"])
def test_a_map_that_is_not_a_regular_file_is_not_read(parse_bin, tmp_path,
                                                       kind):
    import os
    slp = session(tmp_path / "s.slp")
    side = tmp_path / f"s.slp.perf-{PID}.map"
    if kind == "fifo":
        os.mkfifo(side)
    else:
        side.mkdir()
    root = tmp_path / "empty"
    root.mkdir()
    got = rows(parse_bin, slp, "--symfs", root)
    assert {r["reason"] for r in got} == {"file missing"}, got
