#!/usr/bin/env python3
"""frun.map against serial Python and the standard pools, side by side in one run.

Workloads (one record per item): a no-op, str.upper, json.loads on JSONL, sha256 per record,
and the batch API's no-op (records per second through frun.map(batch=True)). Each tool runs
each workload REPEAT times; the median wall time is reported. The pools run at each chunksize of
CHUNKS and only their best is shown. joblib runs when it is installed.

usage: python3 benches/python.py [--records N] [--batch-records N] [--repeat R] [--out FILE]
QUICK=1 in the environment: a few thousand records, one repeat (a smoke run).
"""

import argparse
import concurrent.futures
import hashlib
import json
import multiprocessing
import os
import platform
import statistics
import sys
import tempfile
import time

import frun

CHUNKS = [64, 1024, 8192]


def noop(s):
    return None


def upper(s):
    return s.upper()


def sha(s):
    return hashlib.sha256(s.encode()).hexdigest()


WORKLOADS = {
    "no-op": (noop, lambda i: f"record {i}"),
    "str.upper": (upper, lambda i: f"record number {i} of the input"),
    "json.loads": (json.loads, lambda i: json.dumps({"id": i, "name": f"n{i}", "tags": ["a", "b"]})),
    "sha256": (sha, lambda i: f"record number {i} of the input"),
}


def timed(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def serial(fn, items):
    return list(map(fn, items))


def pool_imap(fn, items, chunksize, workers):
    with multiprocessing.Pool(workers) as p:
        return list(p.imap(fn, items, chunksize=chunksize))


def executor_map(fn, items, chunksize, workers):
    with concurrent.futures.ProcessPoolExecutor(workers) as ex:
        return list(ex.map(fn, items, chunksize=chunksize))


def joblib_map(fn, items, workers):
    import joblib

    return joblib.Parallel(n_jobs=workers, batch_size="auto")(joblib.delayed(fn)(x) for x in items)


def best_of_chunks(run, repeat):
    best = None
    for c in CHUNKS:
        t = timed(lambda c=c: run(c), repeat)
        if best is None or t < best[0]:
            best = (t, c)
    return best


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {
        "cpu": cpu,
        "usable cpus": len(os.sched_getaffinity(0)),
        "python": platform.python_version(),
        "kernel": platform.release(),
        "load average at start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def main():
    quick = os.environ.get("QUICK") == "1"
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=5_000 if quick else 1_000_000)
    ap.add_argument("--batch-records", type=int, default=100_000 if quick else 100_000_000)
    ap.add_argument("--repeat", type=int, default=1 if quick else 3)
    ap.add_argument("--out")
    a = ap.parse_args()
    workers = len(os.sched_getaffinity(0))
    has_joblib = True
    try:
        import joblib  # noqa: F401
    except ImportError:
        has_joblib = False
    rows = []
    for name, (fn, make) in WORKLOADS.items():
        items = [make(i) for i in range(a.records)]
        want = serial(fn, items)
        assert frun.map(fn, items) == want, name
        t_serial = timed(lambda: serial(fn, items), a.repeat)
        t_frun = timed(lambda: frun.map(fn, items), a.repeat)
        t_pool, c_pool = best_of_chunks(lambda c: pool_imap(fn, items, c, workers), a.repeat)
        t_exec, c_exec = best_of_chunks(lambda c: executor_map(fn, items, c, workers), a.repeat)
        t_job = timed(lambda: joblib_map(fn, items, workers), a.repeat) if has_joblib else None
        rows.append((name, a.records, t_serial, t_frun, (t_pool, c_pool), (t_exec, c_exec), t_job))
        print(f"{name}: serial {t_serial:.3f}s frun {t_frun:.3f}s pool {t_pool:.3f}s "
              f"executor {t_exec:.3f}s" + (f" joblib {t_job:.3f}s" if t_job else ""), flush=True)
    # The batch no-op: a file of short records, the function called once per batch.
    with tempfile.NamedTemporaryFile(suffix=".txt") as f:
        line = b"x\n"
        chunk = line * (1 << 20)
        left = a.batch_records
        while left > 0:
            n = min(left, 1 << 20)
            f.write(chunk[: n * len(line)])
            left -= n
        f.flush()
        counted = sum(frun.map(lambda b: [len(b.data) // 2], f.name, batch=True, ordered=False))
        assert counted == a.batch_records, counted
        t_batch = timed(lambda: frun.map(lambda b: None, f.name, batch=True), a.repeat)
    batch_rate = a.batch_records / t_batch
    print(f"batch no-op: {a.batch_records} records in {t_batch:.3f}s = {batch_rate / 1e6:.1f}M/s")
    report(a, rows, t_batch, batch_rate, has_joblib)


def report(a, rows, t_batch, batch_rate, has_joblib):
    m = machine()
    lines = [
        "# frun.map against serial Python and the pools",
        "",
        "Machine (shared with other jobs, so expect noise of ±20% between runs): "
        + "; ".join(f"{k}: {v}" for k, v in m.items())
        + ".",
        f"Median of {a.repeat} runs each; wall time in seconds; the pools at their best chunksize "
        f"of {CHUNKS} (shown). Speed-ups are serial time / frun time and best pool time / frun "
        "time.",
        "",
        "| workload | records | serial | frun.map | Pool.imap | ProcessPoolExecutor.map | "
        + ("joblib | " if has_joblib else "")
        + "frun vs serial | frun vs best pool |",
        "|---|---|---|---|---|---|" + ("---|" if has_joblib else "") + "---|---|",
    ]
    for name, n, ts, tf, (tp, cp), (te, ce), tj in rows:
        best = min(tp, te, tj or float("inf"))
        lines.append(
            f"| {name} | {n} | {ts:.3f} | {tf:.3f} | {tp:.3f} (chunk {cp}) | {te:.3f} (chunk {ce}) | "
            + (f"{tj:.3f} | " if has_joblib else "")
            + f"{ts / tf:.2f}× | {best / tf:.2f}× |"
        )
    lines += [
        "",
        f"Batch API no-op (`frun.map(lambda b: None, PATH, batch=True)` over {a.batch_records} "
        f"records of 2 bytes): {t_batch:.3f} s, {batch_rate / 1e6:.1f}M records/s.",
        "",
    ]
    text = "\n".join(lines)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    sys.exit(main())
