"""frun.run against the shell tools it stands for, and memory while streaming."""

import subprocess

import frun
import pytest

RECORDS = [f"word{i}" for i in range(5000)]
DATA = b"".join(r.encode() + b"\n" for r in RECORDS)


def test_run_passes_records_as_arguments_like_xargs():
    out = frun.run(["echo"], RECORDS)
    xargs = subprocess.run(["xargs", "echo"], input=DATA, capture_output=True).stdout
    # Batches may differ in size from xargs', never the words or their order.
    assert out.split() == xargs.split()


def test_run_with_stdin_feeds_each_batch_to_the_command():
    assert frun.run(["cat"], DATA, stdin=True) == DATA
    counts = frun.run(["wc", "-l"], DATA, stdin=True, ordered=False)
    assert sum(int(n) for n in counts.split()) == len(RECORDS)


def test_run_of_a_failing_command_raises_with_its_status():
    with pytest.raises(frun.TaskError) as e:
        frun.run(["false"], ["a"])
    # As GNU xargs says when a command failed.
    xargs = subprocess.run(["xargs", "false"], input=b"a\n")
    assert e.value.status == xargs.returncode == 123
    with pytest.raises(ValueError):
        frun.run([], ["a"])


def test_run_of_a_missing_command_raises():
    with pytest.raises(frun.TaskError) as e:
        frun.run(["/nonexistent/command"], ["a"])
    assert e.value.status == 127


GIB = 1 << 30


def test_streaming_4_gib_stays_under_256_mib(run_script):
    # 4096 items of 1 MiB each (4 GiB) through the spool; the function returns a small result.
    r = run_script(
        """
        import resource, frun
        item = b"x" * ((1 << 20) - 1)
        total = 0
        for n in frun.stream(len, (item for _ in range(4096)), encoding=None, ordered=False):
            total += n
        assert total == 4096 * len(item), total
        peak_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        peak_child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        print(peak_self, peak_child)
        """,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    peak_self, peak_child = (int(x) * 1024 for x in r.stdout.split())
    assert peak_self < 256 << 20, peak_self
    assert peak_child < 256 << 20, peak_child
