"""Which ServiceAccount the agent runs as: the flag, else the in-cluster token's subject."""

from __future__ import annotations

import base64
from pathlib import Path

import orjson
import pytest

from syncagent.cli.errors import UserError
from syncagent.cli.run.ownaccount import own_account, token_account
from syncagent.render import AgentAccount


def _jwt(claims: dict[str, object]) -> str:
    payload = base64.urlsafe_b64encode(orjson.dumps(claims)).decode().rstrip("=")
    return f"eyJhbGciOiJSUzI1NiJ9.{payload}.c2lnbmF0dXJl"


def test_the_flag_names_the_account(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text(_jwt({"sub": "system:serviceaccount:other:x"}))
    assert own_account("sys/syncagent", token=token) == AgentAccount("sys", "syncagent")


@pytest.mark.parametrize("flag", ["syncagent", "/x", "ns/", "a/b/c"])
def test_a_flag_without_namespace_and_name_is_a_user_error(flag: str) -> None:
    with pytest.raises(UserError, match="expected NAMESPACE/NAME"):
        own_account(flag, token=Path("/nonexistent"))


def test_without_the_flag_the_tokens_subject_names_it(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text(_jwt({"sub": "system:serviceaccount:sys:r1-syncagent", "aud": ["x"]}) + "\n")
    assert own_account("", token=token) == AgentAccount("sys", "r1-syncagent")
    assert own_account("", token=tmp_path / "missing") is None


@pytest.mark.parametrize(
    "jwt",
    ["", "not-a-jwt", "a.!!!.c", _jwt({"sub": "user:alice"}), _jwt({}), "a.W10.c"],
)
def test_a_token_that_names_no_service_account_names_none(jwt: str) -> None:
    assert token_account(jwt) is None
