import io
import logging

import orjson

from syncagent.runtime.logging import configure_logging, format_line


def record(msg, *args, level=logging.INFO, exc_info=None, **extra):
    rec = logging.LogRecord("syncagent.test", level, __file__, 1, msg, args, exc_info)
    for k, v in extra.items():
        setattr(rec, k, v)
    return rec


def test_line_has_ts_level_msg_and_fields():
    line = format_line(record("applied %s", "x", object="Deployment/ns/x", field="spec.replicas"))
    data = orjson.loads(line)
    assert data["msg"] == "applied x"
    assert data["level"] == "info"
    assert data["object"] == "Deployment/ns/x"
    assert data["field"] == "spec.replicas"
    assert data["logger"] == "syncagent.test"
    assert data["ts"].endswith("Z")
    assert "T" in data["ts"]
    assert b"\n" not in line


def test_fields_cannot_clobber_core_keys():
    data = orjson.loads(format_line(record("real", level=logging.WARNING, ts="fake")))
    assert data["msg"] == "real"
    assert data["level"] == "warning"
    assert data["field.ts"] == "fake"
    assert data["ts"] != "fake"


def test_non_json_values_are_stringified():
    data = orjson.loads(format_line(record("m", keys={"b"}, obj=object(), err=ValueError("v"))))
    assert data["keys"] == ["b"]
    assert data["obj"].startswith("<object")
    assert data["err"] == "ValueError('v')"


def test_exception_fields():
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        import sys

        rec = record("failed", level=logging.ERROR, exc_info=sys.exc_info())
    data = orjson.loads(format_line(rec))
    assert data["error"] == "boom"
    assert "RuntimeError: boom" in data["traceback"]


def test_configure_logging_writes_one_object_per_line():
    stream = io.StringIO()
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    try:
        configure_logging(level="debug", stream=stream)
        log = logging.getLogger("syncagent.x")
        log.info("one", extra={"key": "ns/a"})
        log.debug("two\nlines")
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
    lines = stream.getvalue().splitlines()
    assert [orjson.loads(line)["msg"] for line in lines] == ["one", "two\nlines"]
    assert orjson.loads(lines[0])["key"] == "ns/a"
