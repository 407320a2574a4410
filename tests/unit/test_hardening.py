"""The pure parts of the server's HTTP hardening: Host names, allowed hosts, chat slots and
what non-admins see of an answer's events."""

from __future__ import annotations

from starlette.types import Receive, Scope, Send

from truthbase.app.redaction import ERROR_MESSAGE, HIDDEN, redact_event
from truthbase.config import ServerSettings
from truthbase.server.chat_limits import Slots
from truthbase.server.middleware import HostCheck, allowed_hosts, host_name


async def _app(scope: Scope, receive: Receive, send: Send) -> None:  # pragma: no cover
    pass


def test_host_names_drop_the_port_and_brackets() -> None:
    assert host_name("LocalHost:8000") == "localhost"
    assert host_name("[::1]:8000") == "::1"
    assert host_name("[::1]") == "::1"
    assert host_name("127.0.0.1") == "127.0.0.1"
    assert host_name("") == ""


def test_allowed_hosts_default_to_the_loopback_names_and_the_bind_host() -> None:
    assert allowed_hosts(ServerSettings()) == ["127.0.0.1", "::1", "localhost"]
    assert allowed_hosts(ServerSettings(host="::1")) == ["127.0.0.1", "::1", "localhost"]
    assert allowed_hosts(ServerSettings(host="0.0.0.0")) is None  # logins are required there
    assert allowed_hosts(ServerSettings(allowed_hosts=["Docs.Example.org"])) == ["docs.example.org"]
    check = HostCheck(_app, [".example.org", "localhost"])
    assert check.allows("example.org") and check.allows("a.example.org")
    assert not check.allows("example.org.evil") and not check.allows("evilexample.org")
    assert HostCheck(_app, ["*"]).allows("anything")


def test_slots_never_wait_and_come_back_once() -> None:
    slots = Slots(chats=2, agent=1)
    agent = slots.take(agent=True)
    assert agent is not None
    assert slots.take(agent=True) is None  # the agent slot is taken
    chat = slots.take(agent=False)
    assert chat is not None
    assert slots.take(agent=False) is None  # both chat slots are taken
    agent()
    agent()  # a second release changes nothing
    assert slots.take(agent=False) is not None
    assert slots.take(agent=False) is None


def test_non_admins_see_no_endpoint_or_provider_error() -> None:
    done = {
        "type": "done",
        "answer": {
            "answerer": "qwen@http://10.0.0.5:8080/v1",
            "info": {
                "failed": [{"model": "a@https://internal.example/v1", "error": "HTTP 500 key=s3"}],
                "fallback_reason": "no verified passage",
            },
            "problems": ["model http://10.0.0.5:8080/v1 timed out"],
        },
    }
    seen = redact_event("done", done)
    text = repr(seen)
    assert "10.0.0.5" not in text and "internal.example" not in text and "s3" not in text
    assert seen["answer"]["answerer"] == f"qwen@{HIDDEN}"
    assert seen["answer"]["info"]["failed"][0]["error"] == HIDDEN
    assert seen["answer"]["info"]["fallback_reason"] == "no verified passage"
    error = redact_event("error", {"type": "error", "stage": "answer", "message": "LLMError: x"})
    assert error == {"type": "error", "stage": "answer", "message": ERROR_MESSAGE}
