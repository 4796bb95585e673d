"""frun.map / frun.stream against serial Python: every source kind, delimiter and order."""

import io
import os

import frun
import pytest
from hypothesis import given, settings, strategies as st

DELIMS = [b"\n", b"\0", b","]


def records_for(delim):
    """Lists of records (text without the delimiter), sometimes empty ones."""
    alphabet = st.characters(blacklist_categories=("Cs",), blacklist_characters=delim.decode())
    return st.lists(st.text(alphabet=alphabet, max_size=12), max_size=300)


def serial(fn, records):
    return list(map(fn, records))


def as_sources(records, delim, tmp_path):
    """The same records as each kind of source, with the encoding each one calls for."""
    data = b"".join(r.encode() + delim for r in records)
    path = tmp_path / "input"
    path.write_bytes(data)
    return {
        "iterable of str": records,
        "iterable of bytes": [r.encode() for r in records],
        "bytes": data,
        "bytearray": bytearray(data),
        "memoryview": memoryview(data),
        "path str": str(path),
        "path object": path,
        "binary file": io.BytesIO(data),
    }


def tagged(record):
    return f"<{record.upper()}>"


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_map_equals_serial_for_every_source_delimiter_and_order(tmp_path_factory, data):
    delim = data.draw(st.sampled_from(DELIMS))
    records = data.draw(records_for(delim))
    ordered = data.draw(st.booleans())
    workers = data.draw(st.sampled_from([None, 1, 2, 3]))
    expected = serial(tagged, records)
    tmp = tmp_path_factory.mktemp("src")
    for kind, source in as_sources(records, delim, tmp).items():
        got = frun.map(tagged, source, delimiter=delim, ordered=ordered, workers=workers)
        if ordered:
            assert got == expected, kind
        else:
            assert sorted(got) == sorted(expected), kind


@settings(max_examples=10, deadline=None)
@given(st.lists(st.binary(max_size=20).filter(lambda b: b"\n" not in b), max_size=200))
def test_bytes_records_with_encoding_none(records):
    data = b"".join(r + b"\n" for r in records)
    assert frun.map(bytes.upper, data, encoding=None) == serial(bytes.upper, records)
    assert frun.map(bytes.upper, records, encoding=None) == serial(bytes.upper, records)


def test_a_final_record_without_delimiter_is_a_record():
    assert frun.map(str.upper, b"a\nb\nlast") == ["A", "B", "LAST"]


def test_results_of_any_picklable_type_and_none():
    records = [str(i) for i in range(500)]
    fn = lambda s: None if int(s) % 7 == 0 else {"n": int(s), "sq": int(s) ** 2}  # noqa: E731
    assert frun.map(fn, records) == serial(fn, records)


def test_text_bytes_none_and_other_results_keep_their_order_within_a_batch():
    kinds = [lambda i: f"s{i}", lambda i: f"b{i}".encode(), lambda i: None, lambda i: (i, [i])]
    fn = lambda s: kinds[int(s) % 4 if int(s) < 2000 else 0](int(s))  # noqa: E731
    records = [str(i) for i in range(4000)]
    for ordered in (True, False):
        got = frun.map(fn, records, workers=2, ordered=ordered)
        want = serial(fn, records)
        assert (got if ordered else sorted(got, key=repr)) == (
            want if ordered else sorted(want, key=repr)
        )


def test_a_callable_that_keeps_its_argument_tuple_sees_it_unchanged():
    # An exception keeps the very tuple it was called with as `.args`.
    records = [f"r{i}" for i in range(3000)]
    got = frun.map(KeyError, records, workers=2)
    assert [e.args for e in got] == [(r,) for r in records]


def test_stream_yields_the_same_as_map():
    records = [str(i) for i in range(3000)]
    s = frun.stream(lambda r: r * 2, records, workers=2)
    assert list(s) == [r * 2 for r in records]


def test_workers_see_globals_and_closures_without_pickling():
    import threading

    lock = threading.Lock()  # cannot be pickled
    offset = 1000
    local = lambda s: (int(s) + offset, lock.locked())  # noqa: E731
    records = [str(i) for i in range(200)]
    assert frun.map(local, records) == serial(local, records)


def test_other_encodings():
    records = ["é", "ü", "ß"]
    data = "\n".join(records).encode("latin-1")
    assert frun.map(lambda s: s, data, encoding="latin-1") == records
    assert frun.map(lambda s: s, records, encoding="latin-1") == records


def test_batch_objects_carry_records_bytes_index_and_offset():
    records = [f"r{i}" for i in range(5000)]
    data = b"".join(r.encode() + b"\n" for r in records)

    def look(b):
        view = bytes(b.data)
        assert b.records == view.decode().splitlines()
        return [(b.index, b.offset, len(view), b.records)]

    batches = frun.map(look, data, batch=True)
    # Batches tile the input in order: each starts where the one before ended.
    at = 0
    seen = []
    for i, (index, offset, length, recs) in enumerate(batches):
        assert index == i and offset == at
        at += length
        seen += recs
    assert at == len(data) and seen == records


def test_batch_results_are_the_iterables_it_returns():
    records = [str(i) for i in range(1000)]
    assert frun.map(lambda b: [r + "!" for r in b.records], records, batch=True) == [
        r + "!" for r in records
    ]
    assert frun.map(lambda b: None, records, batch=True) == []
    assert frun.map(lambda b: bytes(b.data), [b"a", b"b"], batch=True, workers=1) in (
        [b"a\nb\n"],
        [b"a\n", b"b\n"],
    )


def test_the_batch_view_is_refused_after_the_call():
    def keep(b):
        global saved
        seen = []
        if "saved" in globals():
            for get in (lambda: bytes(saved.data), lambda: saved.records):
                try:
                    get()
                    seen.append("open")
                except ValueError:
                    seen.append("closed")
        saved = b
        return seen

    got = frun.map(keep, [str(i) for i in range(100_000)], batch=True, workers=1)
    assert got and set(got) == {"closed"}


def test_empty_inputs():
    assert frun.map(str.upper, []) == []
    assert frun.map(str.upper, b"") == []


def test_bad_arguments_are_refused_with_one_line():
    for kw in [
        {"on_error": "ignore"},
        {"delimiter": b"ab"},
        {"delimiter": 5},
        {"workers": 0},
        {"retries": -1},
        {"encoding": "no-such-codec"},
    ]:
        with pytest.raises((ValueError, LookupError)) as e:
            frun.map(str.upper, ["a"], **kw)
        assert "\n" not in str(e.value)
    with pytest.raises(ValueError):
        frun.map(str.upper, ["a\nb"])
    with pytest.raises(ValueError, match="delimiter"):
        frun.map(str.upper, (s for s in ["a", "b\nc", "d"]))
    with pytest.raises(ValueError, match="delimiter"):
        frun.map(bytes.upper, [b"x"] * 5000 + [b"y,z"], delimiter=b",", encoding=None)
    with pytest.raises(ValueError):
        frun.map(str.upper, [1, 2])
    with pytest.raises(ValueError):
        frun.map(str.upper, 42)
    with pytest.raises(ValueError):
        frun.map(str.upper, io.StringIO("text\n"))


def test_a_bad_keyword_is_a_value_error_naming_it():
    # Each keyword maps to a setting of the engine's ConfigBuilder; the error names the keyword.
    for kw, name in [
        ({"workers": 0}, "workers"),
        ({"retries": -1}, "retries"),
        ({"on_error": "ignore"}, "on_error"),
        ({"delimiter": b"ab"}, "delimiter"),
        ({"checkpoint": ""}, "checkpoint"),
    ]:
        with pytest.raises(ValueError) as e:
            frun.map(str.upper, ["a"], **kw)
        assert name in str(e.value), (kw, str(e.value))
        assert "\n" not in str(e.value)
    with pytest.raises(ValueError) as e:
        frun.run([""], ["a"])
    assert "command" in str(e.value)
    with pytest.raises(ValueError) as e:
        frun.run(["echo"], ["a"], workers=0)
    assert "workers" in str(e.value)
    with pytest.raises(ValueError) as e:
        frun.run(["echo"], ["a"], checkpoint="")
    assert "checkpoint" in str(e.value)


def test_a_missing_path_raises():
    with pytest.raises(frun.TaskError) as e:
        frun.map(str.upper, "/nonexistent/input")
    assert e.value.status != 0


def test_the_source_iterator_raising_stops_the_run():
    def gen():
        yield "a"
        raise KeyError("from the source")

    with pytest.raises(KeyError):
        frun.map(str.upper, gen())


def test_a_path_is_read_from_the_file_itself(tmp_path):
    p = tmp_path / "big"
    with open(p, "wb") as f:
        for i in range(100_000):
            f.write(b"%d\n" % i)
    got = frun.map(int, os.fspath(p))
    assert got == list(range(100_000))


def test_a_stream_over_a_generator_yields_while_the_generator_still_runs():
    # The generator gives one record, then waits until the result of that record has been
    # yielded: the stream must yield it while the generator is still inside its next().
    import threading

    yielded = threading.Event()

    def records():
        yield "a"
        assert yielded.wait(60), "the first result never came while the generator waited"
        yield "b"

    got = []
    for r in frun.stream(str.upper, records()):
        got.append(r)
        yielded.set()
    assert got == ["A", "B"]


def test_a_generator_that_raises_later_stops_the_stream_with_its_exception():
    def records():
        yield from (str(i) for i in range(1000))
        raise KeyError("the source broke")

    with pytest.raises(KeyError, match="the source broke"):
        list(frun.stream(str.upper, records()))
    # Nothing is left running: the next run starts and ends normally.
    assert frun.map(str.upper, iter(["x"])) == ["X"]


def test_leaving_a_stream_over_an_endless_generator_stops_it():
    import itertools

    s = frun.stream(str.upper, (str(i) for i in itertools.count()))
    assert [next(s) for _ in range(5)] == ["0", "1", "2", "3", "4"]
    s.close()
    assert frun.map(str.upper, iter(["y"])) == ["Y"]
