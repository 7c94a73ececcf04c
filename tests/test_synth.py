"""synth_big, the generator of the parse speed benchmark's session files:
deterministic, valid, and its mappings match the real ELF files it names."""
import subprocess

import pytest

import sleepyfile as sf
import sleepyread

# The real ELF files the sessions name, in the OUT of user_build.
ELFS = ["guest/btree", "guest/hotpie", "guest/libhot.so"]


@pytest.fixture(scope="module")
def out(user_build):
    user_build("bench", "all")
    return user_build("tests/progs", "all", "host")


@pytest.fixture(scope="module")
def synth(out):
    return out / "host" / "synth_big"


@pytest.fixture(scope="module")
def elfs(out):
    return [out / e for e in ELFS]


def gen(synth, out, *args):
    r = subprocess.run([str(synth), "-o", str(out), *map(str, args)],
                       capture_output=True, text=True, timeout=120)
    return r


def test_deterministic_and_valid(synth, elfs, parse_bin, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for f in (a, b):
        r = gen(synth, f, "--samples", 20000, "--appids", 7, *elfs)
        assert r.returncode == 0, r.stderr
    assert a.read_bytes() == b.read_bytes()
    c = tmp_path / "c"
    gen(synth, c, "--samples", 20000, "--appids", 7, "--seed", 2, *elfs)
    assert c.read_bytes() != a.read_bytes()

    s = sleepyread.read(a)
    assert len(s.samples) == 20000 and len(s.appids) == 7
    assert s.stats["samples_written"] == 20000
    # Everything but the STATS record, the CPU_STATS records included.
    assert s.stats["bytes_written"] == a.stat().st_size - sf.STATS_SIZE
    assert [c["samples_taken"] for c in s.cpu_stats] == [10000, 10000]
    kernel = [x for x in s.samples if x["mode"] == 1]
    assert 1500 < len(kernel) < 2500          # 1 in 10
    assert all(x["user_ip"] is not None for x in kernel)
    # Every mapping is an executable segment of a named file, with its
    # build-id; every user address falls in one of its appid's mappings.
    for m in s.mmaps:
        assert m["path"] in map(str, elfs)
        assert m["build_id"] == sleepyread.build_id(m["path"])
    maps = {}
    for m in s.mmaps:
        maps.setdefault(m["appid"], []).append(m)
    assert set(maps) == set(s.appids)
    for x in s.samples:
        ip = x["user_ip"] if x["mode"] == 1 else x["ip"]
        assert any(m["start"] <= ip < m["start"] + m["len"]
                   for m in maps[x["appid"]]), hex(ip)
    # OUT.kallsyms names every kernel address.
    ksyms = [int(line.split()[0], 16) for line in
             (tmp_path / "a.kallsyms").read_text().splitlines()]
    assert ksyms == sorted(ksyms) and len(ksyms) > 1000
    assert all(ksyms[0] <= x["ip"] < ksyms[-1] for x in kernel)
    r = subprocess.run([str(parse_bin), "--mode", "all", str(a)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_chains(synth, elfs, parse_bin, tmp_path):
    """--chains DEPTH: every sample refers to a CHAIN record of its CPU
    written before it, of DEPTH - 1 frames (a kernel sample's kernel
    frames first) in its ELF's mappings; the stacks stay a real session's
    few, not one per sample."""
    f = tmp_path / "c"
    r = gen(synth, f, "--samples", 50000, "--appids", 7, "--chains", 20,
            *elfs)
    assert r.returncode == 0, r.stderr
    s = sleepyread.read(f)
    assert s.header["version"] == sf.FORMAT_VERSION
    assert s.header["flags"] & sf.SAMPLE_F_CALLCHAIN
    assert all(x["chain"] is not None for x in s.samples)
    for x in s.samples:
        c = x["chain"]
        assert len(c["kernel"]) + len(c["user"]) == 19
        assert (len(c["kernel"]) > 0) == (x["mode"] == 1)
        assert all(k >= 0xffffffff80000000 for k in c["kernel"])
    stacks = {(x["appid"], x["ip"], tuple(x["chain"]["user"]))
              for x in s.samples}
    # At most 64 chains an appid, each in one function at 8 places, per
    # ELF and mode.
    assert 100 < len(stacks) <= 7 * 64 * 8 * len(elfs) * 2, len(stacks)
    r = subprocess.run([str(parse_bin), "--format", "folded", "--mode",
                        "all", str(f)], capture_output=True, text=True)
    assert r.returncode == 0 and "missing" not in r.stderr, r.stderr
    assert sum(int(line.rsplit(" ", 1)[1])
               for line in r.stdout.splitlines()) == 50000
    for bad in ("1", "128"):
        r = gen(synth, f, "--chains", bad, *elfs)
        assert r.returncode == 2 and "--chains: 2 to 127" in r.stderr


@pytest.mark.parametrize("args,msg", [
    (["--samples", "0", "{elf}"], "not a positive number"),
    (["--samples", "10"], "at least one ELF file"),
    (["--samples", "10", "/etc/passwd"], "not an ELF file"),
    (["--samples", "10", "/nonexistent"], "No such file"),
])
def test_errors(synth, elfs, tmp_path, args, msg):
    r = gen(synth, tmp_path / "x",
            *(a.replace("{elf}", str(elfs[0])) for a in args))
    assert r.returncode != 0
    assert r.stderr.startswith("synth_big: ") and msg in r.stderr
    assert r.stderr.count("\n") == 1
