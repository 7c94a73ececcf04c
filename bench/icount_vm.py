"""One benchmark VM run under -icount, shared by the benchmark drivers
(pmu_cost.py, lstack_bench.py, ...): the release kernel on 1 vCPU unless
told otherwise, guest time the instruction count, a shared folder for the
script's results."""
import contextlib
import csv
import json
import subprocess
import sys
import tempfile
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
RESULTS = TOP / "results"


@contextlib.contextmanager
def icount_vm(script, timeout, name, extra=(), smp=1):
    """Boot the VM to run script (sh) with a fresh shared folder as $S
    (/mnt/share): the script must write $S/done last; extra are more of
    build.sh vm's options (--perf: the peers' initramfs, --debug: the
    debug kernel); smp: the vCPUs. Yields the
    folder, removed afterwards; a failed run exits with the runner's
    output."""
    with tempfile.TemporaryDirectory(prefix=f"sleepy-{name}-") as d:
        share = Path(d)
        cmd = [str(TOP / "build.sh"), "vm", "--smp", str(smp), "--icount",
               "--timeout", str(timeout), "--share", str(share), *extra,
               "--",
               "sh", "-c", script]
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL)
        if proc.returncode != 0 or not (share / "done").exists():
            sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
            sys.exit(f"{name}: the VM run failed (status {proc.returncode})")
        yield share


def write_results(name, rows, **summary):
    """results/NAME.json (the runs and the summary's keys) and
    results/NAME.csv (the runs, one row each; the columns of every row,
    empty where a row has none)."""
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(
        {"runs": rows, **summary}, indent=2) + "\n")
    columns = list(dict.fromkeys(k for row in rows for k in row))
    with open(RESULTS / f"{name}.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns)
        w.writeheader()
        w.writerows(rows)
