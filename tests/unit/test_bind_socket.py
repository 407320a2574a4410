"""`serve` and `mcp --http` print their URL before the server has started: the socket they bind
must already accept connections then (a client that connects on reading the line is queued,
not refused), and a port in use is a clear error."""

from __future__ import annotations

import socket

import pytest

from truthbase.cli.common import bind_socket
from truthbase.errors import InvalidInput


def test_a_client_may_connect_before_the_server_accepts() -> None:
    with bind_socket("127.0.0.1", 0) as sock:
        port = sock.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port), timeout=5) as client:
            client.sendall(b"GET / HTTP/1.0\r\n\r\n")  # queued until the server accepts
        accepted, _ = sock.accept()
        accepted.close()


def test_a_port_in_use_is_an_invalid_input() -> None:
    with bind_socket("127.0.0.1", 0) as sock:
        port = sock.getsockname()[1]
        with pytest.raises(InvalidInput, match=f"cannot listen on 127.0.0.1:{port}"):
            bind_socket("127.0.0.1", port).close()
