"""The session file reader under libFuzzer (tests/fuzz/reader_fuzz.c).

The target is built with clang's fuzzer, address and undefined-behaviour
sanitizers from parse/reader.c and parse --latency's code as they are,
seeded with small valid files (tests/fuzz/make_seeds.py), and run for a
bounded time; any crash, leak, sanitizer report, memory over the limit,
hang or broken promise of reader.h (or of the latency reports) fails the
test. The inputs in tests/fuzz/regressions/ (crashes
found once) run on every test run.
"""
import os
import shutil
import subprocess

import pytest

from conftest import TOP, UAPI

FUZZ_DIR = TOP / "tests" / "fuzz"
REGRESSIONS = FUZZ_DIR / "regressions"
SECONDS = int(os.environ.get("SLEEPY_FUZZ_SECONDS", "60"))
CLANG = shutil.which("clang")

pytestmark = pytest.mark.skipif(
    CLANG is None, reason="clang is not installed (./build.sh deps)")


# What the target links of parse: the reader, and parse --latency's code
# (its records, histograms, writers, --peak and the pass that joins the
# samples to its calls) with what that calls; none reads or writes files
# but the input.
PARSE_SOURCES = [
    "reader.c", "latency.c", "lathist.c", "latreport.c", "latout.c",
    "peak.c", "session.c", "appids.c", "strtab.c", "filters.c",
    "syscalls.c", "fmt.c", "json.c", "counts.c", "chains.c", "stackids.c",
    "lstack.c", "maps.c",
]


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    uapi = UAPI / "linux" / "sleepy.h"
    tbl = UAPI / "syscall_64.tbl"
    for f in (uapi, tbl):
        assert f.exists(), (
            f"{f} missing: the host tests need the patch series' uapi "
            f"headers and system call table in {UAPI}")
    d = tmp_path_factory.mktemp("fuzz")
    exe = d / "reader_fuzz"
    # The system call names, generated as parse's Makefile does.
    names = d / "syscall_names.c"
    with open(names, "w") as out:
        subprocess.run(["awk", "-f", str(TOP / "parse" / "syscall_names.awk"),
                        str(tbl)], stdout=out, check=True, timeout=60)
    cmd = [CLANG, "-std=c11", "-g", "-O1", "-Wall", "-Wextra", "-Werror",
           "-D_DEFAULT_SOURCE", "-fsanitize=fuzzer,address,undefined",
           "-fno-sanitize-recover=undefined",
           "-I", str(UAPI), "-I", str(TOP / "parse"),
           str(FUZZ_DIR / "reader_fuzz.c"),
           *(str(TOP / "parse" / f) for f in PARSE_SOURCES), str(names),
           "-o", str(exe)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return exe


def fuzz_env():
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0"
    env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    return env


def test_seeds_are_valid_and_pass(target, parse_bin, tmp_path):
    seeds = tmp_path / "seeds"
    subprocess.run(["/usr/bin/python3", str(FUZZ_DIR / "make_seeds.py"),
                    str(seeds)], check=True, timeout=60)
    files = sorted(seeds.iterdir())
    assert len(files) >= 4
    r = subprocess.run([str(target), *map(str, files)], capture_output=True,
                       text=True, timeout=120, env=fuzz_env())
    assert r.returncode == 0, r.stderr[-4000:]
    for f in files:
        assert f"Executed {f}" in r.stderr
        # Valid seeds: parse reads each to its end.
        p = subprocess.run([str(parse_bin), "--mode", "all", str(f)],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, (f, p.stderr)


def test_regression_inputs(target):
    files = sorted(p for p in REGRESSIONS.iterdir() if p.name != "README.md")
    if not files:
        pytest.skip("no regression inputs (no crash found so far)")
    r = subprocess.run([str(target), *map(str, files)], capture_output=True,
                       text=True, timeout=300, env=fuzz_env())
    assert r.returncode == 0, r.stderr[-4000:]


def test_fuzz_bounded(target, tmp_path):
    seeds = tmp_path / "seeds"
    work = tmp_path / "corpus"
    artifacts = tmp_path / "artifacts"
    for d in (work, artifacts):
        d.mkdir()
    subprocess.run(["/usr/bin/python3", str(FUZZ_DIR / "make_seeds.py"),
                    str(seeds)], check=True, timeout=60)
    r = subprocess.run(
        [str(target), f"-max_total_time={SECONDS}", "-rss_limit_mb=512",
         "-timeout=10", "-max_len=4096", "-print_final_stats=1",
         f"-artifact_prefix={artifacts}/", str(work), str(seeds)],
        capture_output=True, text=True, timeout=SECONDS + 300,
        env=fuzz_env())
    found = sorted(artifacts.iterdir())
    assert r.returncode == 0 and not found, (
        f"reader_fuzz failed (exit {r.returncode}); keep the input in "
        f"tests/fuzz/regressions/: {[str(p) for p in found]}\n"
        + r.stderr[-4000:])
    runs = int(next(line.rsplit(":", 1)[1] for line in r.stderr.splitlines()
                    if line.startswith("stat::number_of_executed_units")))
    print(f"reader_fuzz: {runs} inputs in {SECONDS} s, no crash")
    assert runs > 1000
