"""Faults: exceptions, crashes and os._exit in the function, Ctrl-C, threads at fork."""

import os
import signal
import time

import frun
import pytest

from conftest import alive, descendants, where_they_wait

RECORDS = [str(i) for i in range(2000)]
DATA = b"".join(r.encode() + b"\n" for r in RECORDS)
# The input offset of each record of DATA.
OFFSETS = {r: DATA.index(b"\n" + r.encode() + b"\n") + 1 for r in RECORDS[1:]}


def fails_on(bad):
    def fn(s):
        if s == bad:
            raise ValueError(f"bad record {s}")
        return s

    return fn


@pytest.mark.parametrize("ordered", [True, False])
def test_an_exception_raises_task_error_with_offset_and_traceback(ordered):
    with pytest.raises(frun.TaskError) as e:
        frun.map(fails_on("1234"), DATA, ordered=ordered)
    assert e.value.offset == OFFSETS["1234"]
    assert "ValueError: bad record 1234" in e.value.traceback
    assert "Traceback (most recent call last)" in e.value.traceback
    assert "in fn" in e.value.traceback


def test_stream_raises_at_the_failed_record_in_order():
    got = []
    with pytest.raises(frun.TaskError):
        for r in frun.stream(fails_on("1500"), DATA):
            got.append(r)
    assert got == RECORDS[: len(got)] and len(got) <= 1500


def test_skip_leaves_the_records_out_and_reports_them(capfd):
    bad = {"7", "700", "1999"}

    def fn(s):
        if s in bad:
            raise KeyError(s)
        return s

    s = frun.stream(fn, DATA, on_error="skip")
    got = list(s)
    assert got == [r for r in RECORDS if r not in bad]
    assert sorted(e.offset for e in s.errors) == sorted(OFFSETS[b] for b in bad)
    assert all(isinstance(e, frun.TaskError) and "KeyError" in e.traceback for e in s.errors)
    err = capfd.readouterr().err
    assert err.count("skipped the record at input offset") == 3
    assert frun.map(fn, DATA, on_error="skip") == got


def test_retry_calls_again_then_raises():
    def flaky(s):
        # Fails the first two calls of each record, in the worker that runs it.
        global calls
        calls = globals().get("calls", {})
        calls[s] = calls.get(s, 0) + 1
        if calls[s] <= 2:
            raise RuntimeError("not yet")
        return s

    assert frun.map(flaky, RECORDS, on_error="retry", retries=2) == RECORDS
    with pytest.raises(frun.TaskError) as e:
        frun.map(flaky, RECORDS[:10], on_error="retry", retries=1)
    assert "not yet" in e.value.traceback


def crash_once(marker, how):
    """A function that kills its worker on record 1000, the first time only (a marker file
    says it happened), like a transient crash."""

    def fn(s):
        if s == "1000" and not os.path.exists(marker):
            open(marker, "w").close()
            if how == "segv":
                import ctypes

                ctypes.string_at(0)
            elif how == "exit":
                os._exit(7)
            else:
                os.kill(os.getpid(), signal.SIGKILL)
        return s

    return fn


@pytest.mark.parametrize("how", ["segv", "exit", "kill"])
def test_a_worker_that_dies_has_its_batch_retried_on_a_fresh_worker(tmp_path, how):
    marker = str(tmp_path / "crashed")
    assert frun.map(crash_once(marker, how), DATA) == RECORDS
    assert os.path.exists(marker)


@pytest.mark.parametrize("how", ["segv", "exit"])
def test_a_worker_that_always_dies_raises_with_the_records_offset(how):
    def fn(s):
        if s == "1000":
            if how == "segv":
                import ctypes

                ctypes.string_at(0)
            os._exit(7)
        return s

    with pytest.raises(frun.TaskError) as e:
        frun.map(fn, DATA, retries=1)
    # The failing batch was split down to the record.
    assert e.value.offset == OFFSETS["1000"]
    assert e.value.status == 3
    # With on_error="skip" the record is left out.
    got = frun.map(fn, DATA, retries=1, on_error="skip")
    assert got == [r for r in RECORDS if r != "1000"]


SLOW_RUN = """
import os, signal, sys, time, frun
# A job a non-interactive shell starts in the background inherits SIGINT ignored, and Python
# then never raises KeyboardInterrupt: take Ctrl-C as an interactive Python does.
signal.signal(signal.SIGINT, signal.default_int_handler)
piddir = sys.argv[1] if len(sys.argv) > 1 else "pids"
os.makedirs(piddir, exist_ok=True)
def slow(s):
    open(os.path.join(piddir, str(os.getpid())), "w").close()
    time.sleep(0.05)
    return s
print("parent", os.getpid(), flush=True)
try:
    frun.map(slow, [str(i) for i in range(100000)], workers=2)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    raise
"""


def pids_in(d):
    return [int(p) for p in os.listdir(d)] if os.path.isdir(d) else []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_a_signal_to_the_parent_leaves_no_worker(tmp_path, sig):
    import subprocess
    import sys

    script = tmp_path / "slow.py"
    script.write_text(SLOW_RUN)
    piddir = tmp_path / "pids"
    p = subprocess.Popen(
        [sys.executable, str(script), str(piddir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    deadline = time.time() + 30
    while len(pids_in(piddir)) < 2 and time.time() < deadline:
        time.sleep(0.05)
    workers = pids_in(piddir)
    assert len(workers) >= 2
    p.send_signal(sig)
    try:
        out, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        # Say where each process waits, then end them: the failure stays this test's, and
        # the tests after it do not find them left behind.
        tree = [p.pid] + descendants(p.pid)
        state = where_they_wait(tree)
        for pid in reversed(tree):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        p.wait()
        pytest.fail(f"the run did not end within 30 s of {sig!r}:\n{state}")
    if sig == signal.SIGINT:
        assert "interrupted" in out and "KeyboardInterrupt" in err
    assert p.returncode != 0
    deadline = time.time() + 10
    while any(alive(w) for w in pids_in(piddir)) and time.time() < deadline:
        time.sleep(0.05)
    assert not [w for w in pids_in(piddir) if alive(w)]


def test_forking_with_other_threads_running_warns_once(run_script):
    r = run_script(
        """
        import threading, time, warnings, frun
        t = threading.Thread(target=time.sleep, args=(3,), daemon=True)
        t.start()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert frun.map(str.upper, ["a", "b"]) == ["A", "B"]
            assert frun.map(str.upper, ["c"]) == ["C"]
        print(sum("other threads" in str(x.message) for x in w))
        """
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "1"


def test_no_warning_without_threads(run_script):
    r = run_script(
        """
        import warnings, frun
        warnings.simplefilter("error")
        print(frun.map(str.upper, ["a"]))
        """
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "['A']"


def test_abandoning_a_stream_stops_its_workers():
    s = frun.stream(lambda r: (time.sleep(0.01), r)[1], RECORDS)
    assert next(s) == "0"
    s.close()
    del s


def test_a_checkpoint_resumes_a_stopped_stream_without_redoing_done_records(tmp_path):
    ck = tmp_path / "checkpoint"
    done = tmp_path / "done"
    done.mkdir()
    marker = tmp_path / "failed-once"

    def fn(s):
        if s == "1500" and not marker.exists():
            marker.touch()
            raise ValueError("stop here")
        (done / s).touch()
        return s

    first = []
    with pytest.raises(frun.TaskError):
        for r in frun.stream(fn, DATA, checkpoint=str(ck)):
            first.append(r)
    assert ck.exists()
    ran_first = set(os.listdir(done))
    assert "1500" not in ran_first
    for name in ran_first:
        (done / name).unlink()
    second = list(frun.stream(fn, DATA, checkpoint=str(ck)))
    # What the two runs yielded is every result once, in order: the second yields exactly what
    # the first did not (a batch cut short by the stop runs again whole, and is yielded then).
    assert first + second == RECORDS
    # It skipped the batches the checkpoint lists as done.
    assert len(second) < len(RECORDS)
    assert set(os.listdir(done)) >= set(second)
    # A run that ends normally removes its checkpoint.
    assert not ck.exists()


@pytest.mark.parametrize("call", ["map", "run"])
def test_a_checkpoint_is_refused_where_a_resumed_run_could_not_return_every_result(tmp_path, call):
    # map (and run) return everything at once: resumed, they would return only what the second
    # run ran, every position shifted. Refused before anything runs; stream is the way.
    ck = tmp_path / "checkpoint"
    with pytest.raises(ValueError, match=r"checkpoint: .*frun\.stream"):
        if call == "map":
            frun.map(str.upper, ["a"], checkpoint=str(ck))
        else:
            frun.run(["echo"], ["a"], checkpoint=str(ck))
    assert not ck.exists()
