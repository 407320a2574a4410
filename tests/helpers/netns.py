"""Network namespaces of this machine that stand in for machines of their own.

:class:`Host` makes one namespace with nothing in it but its own loopback and one end of a veth
pair; the other end stays in the root namespace. Inside, ``127.0.0.1`` is the namespace's own
loopback (the root namespace's servers on 127.0.0.1 are out of reach) and the root namespace
is ``gateway`` (``10.231.N.1``), so a program started through :meth:`Host.command` reaches a
server only at that address, over the veth pair: as a worker on another machine reaches the
database over the network. The file system is shared (namespaces split the network only), as
a data folder mounted on every machine is.

Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) and ``ip`` from iproute2; :func:`unavailable`
says why not, for a skip. Each host is removed (namespace and veth pair) on exit.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Sequence
from types import TracebackType

__all__ = ["Host", "unavailable"]


def _ip(*args: str, namespace: str | None = None, check: bool = True) -> str:
    cmd = ["ip", *(["netns", "exec", namespace, "ip"] if namespace else []), *args]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {result.stderr.strip()}")
    return result.stdout


def unavailable() -> str | None:
    """Why no namespace can be made here (None: they can): not root, no ``ip``, or the
    kernel or the container refuses (no CAP_SYS_ADMIN)."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "no `ip` command (iproute2)"
    probe = f"tb-probe-{uuid.uuid4().hex[:6]}"
    made = subprocess.run(
        ["ip", "netns", "add", probe], capture_output=True, text=True, check=False
    )
    if made.returncode != 0:
        return f"`ip netns add` refused: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True, check=False)
    return None


class Host:
    """One namespace joined to the root namespace by a veth pair: ``address`` inside,
    ``gateway`` outside (the root namespace's end), on ``10.231.{index}.0/24``."""

    def __init__(self, index: int) -> None:
        if not 1 <= index <= 254:
            raise ValueError("index: 1 to 254")
        tag = uuid.uuid4().hex[:6]
        self.name = f"tb-host-{tag}"
        self.outside = f"tbv{tag}o"  # interface names: at most 15 characters
        self.inside = f"tbv{tag}i"
        self.gateway = f"10.231.{index}.1"
        self.address = f"10.231.{index}.2"
        self._made: list[str] = []

    @staticmethod
    def network() -> str:
        """The networks of all hosts, for a server's access rules (pg_hba.conf)."""
        return "10.231.0.0/16"

    def start(self) -> Host:
        _ip("netns", "add", self.name)
        self._made.append("netns")
        _ip("link", "add", self.outside, "type", "veth", "peer", "name", self.inside)
        self._made.append("link")
        _ip("link", "set", self.inside, "netns", self.name)
        _ip("addr", "add", f"{self.gateway}/24", "dev", self.outside)
        _ip("link", "set", self.outside, "up")
        _ip("addr", "add", f"{self.address}/24", "dev", self.inside, namespace=self.name)
        _ip("link", "set", self.inside, "up", namespace=self.name)
        _ip("link", "set", "lo", "up", namespace=self.name)
        return self

    def addresses(self) -> str:
        """``ip -brief addr`` inside the namespace: its loopback and its end of the pair."""
        return _ip("-brief", "addr", namespace=self.name)

    def command(self, argv: Sequence[str], cpus: str | None = None) -> list[str]:
        """``argv`` run inside the namespace (``ip netns exec`` and ``taskset`` both exec, so
        the process started is ``argv``'s own); ``cpus`` ("0", "1-2") pins it to those cores,
        as a machine of its own would have them."""
        pinned = ["taskset", "-c", cpus] if cpus is not None else []
        return ["ip", "netns", "exec", self.name, *pinned, *argv]

    def stop(self) -> None:
        if "link" in self._made:
            _ip("link", "del", self.outside, check=False)  # deletes both ends
        if "netns" in self._made:
            _ip("netns", "del", self.name, check=False)
        self._made.clear()

    def __enter__(self) -> Host:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
