"""One HTTP/1.1 request over a plain TCP connection, read to the server's close: what a scraper
or a probe does to the agent's metrics and probe server (no tests here)."""

from __future__ import annotations

import anyio


async def fetch(port: int, request: bytes) -> tuple[int, dict[str, str], str]:
    async with await anyio.connect_tcp("127.0.0.1", port) as stream:
        await stream.send(request)
        chunks = []
        with anyio.fail_after(5):
            try:
                while True:
                    chunks.append(await stream.receive())
            except anyio.EndOfStream:
                pass
    raw = b"".join(chunks).decode()
    head, _, body = raw.partition("\r\n\r\n")
    status_line, *header_lines = head.split("\r\n")
    headers = dict(line.split(": ", 1) for line in header_lines)
    return int(status_line.split()[1]), headers, body


def get(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
