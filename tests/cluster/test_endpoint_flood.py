"""Issue 40 item 3: probes are always answered. 500 idle or slow connections to each of the
agent's ports (probes, metrics, history) leave /healthz and /readyz answering within 1 s, and the
agent closes the held connections before their headers are whole, in 1-2 s."""

from __future__ import annotations

import socket
import time

import orjson

from tests.support.agent import Agent, running_agent
from tests.support.polling import eventually

PER_PORT = 500
ANSWER_WITHIN = 1.0
HEADER_DEADLINE = 2.0  # the agent's is 1.5 s; this is what the issue allows


def served_port(agent: Agent, what: str) -> int:
    for line in agent.logs().splitlines():
        if f'"msg":"serving {what}"' in line:
            return int(orjson.loads(line)["address"].rsplit(":", 1)[1])
    raise AssertionError(f"the agent logged no {what} port")


def flood(port: int) -> list[socket.socket]:
    """Half idle (connected, silent), half slow (a request line, never a whole header)."""
    held = []
    for i in range(PER_PORT):
        conn = socket.create_connection(("127.0.0.1", port), timeout=5)
        if i % 2:
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        held.append(conn)
    return held


def status_line(port: int, path: str) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        return conn.recv(64)


def answer_time(port: int, path: str) -> float:
    started = time.monotonic()
    status = status_line(port, path)
    assert status.startswith(b"HTTP/1.1 200"), (path, status)
    return time.monotonic() - started


def closed_by_agent(conn: socket.socket) -> bool:
    try:
        return conn.recv(1, socket.MSG_DONTWAIT | socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def answered_and_evicted(probes: int, held: list[socket.socket]) -> bool:
    """Both probes answered within ANSWER_WITHIN (else fail), and every flooding connection
    closed by the agent."""
    assert answer_time(probes, "/healthz") < ANSWER_WITHIN
    assert answer_time(probes, "/readyz") < ANSWER_WITHIN
    return all(closed_by_agent(conn) for conn in held)


def test_a_flood_of_idle_and_slow_connections_leaves_the_probes_answering(control_plane):
    flags = ("--health-probe-bind-address", "127.0.0.1:0", "--history-bind-address", "127.0.0.1:0")
    with running_agent(control_plane.kubeconfig, *flags) as agent:
        probes = served_port(agent, "probes")
        eventually(
            lambda: status_line(probes, "/readyz").startswith(b"HTTP/1.1 200"),
            deadline=30,
            what="the agent to be ready",
        )
        ports = [probes, agent.port, served_port(agent, "history")]
        held = [conn for port in ports for conn in flood(port)]
        try:
            # Answered throughout; the last connection opened is gone HEADER_DEADLINE later.
            eventually(
                lambda: answered_and_evicted(probes, held),
                deadline=HEADER_DEADLINE,
                what="the agent to close the idle and slow connections, answering the probes",
            )
        finally:
            for conn in held:
                conn.close()
        assert answer_time(agent.port, "/metrics") < ANSWER_WITHIN
