"""The kubectl plugin's command line and the generated shell completion (a real bash)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from syncagent.cli.plugin import COMMANDS, PROG, hoist
from syncagent.cli.plugin import main as plugin_main


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["status", "g", "-n", "ns"], ["status", "g", "-n", "ns"]),
        (["-n", "ns", "status", "g"], ["status", "-n", "ns", "g"]),
        (
            ["--context=c", "-nns", "--kubeconfig", "k", "blame", "deploy/x"],
            ["blame", "--context=c", "-nns", "--kubeconfig", "k", "deploy/x"],
        ),
        (["--as", "u", "managers", "g"], ["managers", "--as", "u", "g"]),
        (["--help"], ["--help"]),
        (["-n", "ns"], ["-n", "ns"]),  # no command: argparse says so
        (["-n", "ns", "run"], ["-n", "ns", "run"]),  # not a plugin command
    ],
)
def test_global_flags_before_the_command_move_after_it(argv, expected) -> None:
    assert hoist(argv) == expected


def test_the_plugin_offers_the_inspect_commands_only(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        plugin_main(["run"])
    assert exited.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {PROG}: argument COMMAND: invalid choice: 'run'")
    with pytest.raises(SystemExit):
        plugin_main(["--help"])
    out = capsys.readouterr().out
    assert out.startswith(f"usage: {PROG} ")
    assert all(f"\n    {c}" in out for c in COMMANDS)


BASH = r"""
source <("$PYTHON" -m syncagent.cli.main completion bash)
fn=$(complete -p syncagent | sed -E 's/.* -F ([^ ]+) .*/\1/')
ask() {  # the words on the line; the last is the one being completed
  COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
  COMPREPLY=(); "$fn" syncagent "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
  echo "${COMPREPLY[*]}"
}
complete -p syncagent
ask syncagent ""
ask syncagent status --w
ask syncagent status -o ""
"""


def test_bash_completion_comes_from_the_parser() -> None:
    done = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", BASH],
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHON": sys.executable, "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    registered, commands, flags, outputs = done.stdout.splitlines()
    assert registered.startswith("complete ")
    assert registered.endswith(" syncagent")
    assert {"status", "plan", "blame", "conflicts", "managers", "completion"} <= set(
        commands.split()
    )
    assert flags.split() == ["--watch"]
    assert outputs.split() == ["text", "yaml", "json"]


@pytest.mark.parametrize(
    ("shell", "marker"), [("zsh", "#compdef syncagent"), ("fish", "complete -c syncagent")]
)
def test_zsh_and_fish_scripts_name_every_command(shell: str, marker: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "syncagent.cli.main", "completion", shell],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert marker in done.stdout
    flags = ("--watch", "--kubeconfig") if shell == "zsh" else ("-l watch", "-l kubeconfig")
    assert all(c in done.stdout for c in (*COMMANDS, *flags))
