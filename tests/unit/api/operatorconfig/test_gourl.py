"""Go's url.Parse failures, from Go's net/url behaviour (url.go: getScheme, parse, parseHost)."""

from __future__ import annotations

import pytest

from syncagent.api.operatorconfig.gourl import url_problem


@pytest.mark.parametrize(
    "url",
    [
        "http://model-express.dynamo:8080",
        "grpc://me:8001/x?y=1",
        "/relative/path",
        "http://[::1]:80",
    ],
)
def test_urls_go_accepts(url: str) -> None:
    assert url_problem(url) is None


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("://bad-url", "missing protocol scheme"),
        ("10.0.0.1:8080", "first path segment"),
        ("http://host:port", "invalid port"),
        ("http://[::1", "missing ']'"),
        ("http://h/%zz", "percent escape"),
        ("http://h/\x7f", "control character"),
    ],
)
def test_urls_go_refuses(url: str, why: str) -> None:
    problem = url_problem(url)
    assert problem is not None
    assert why in problem
