"""What every MCP tool is made of: its arguments as one typed model (the JSON schema a model
reads is generated from it, and a call is validated by it, so the two cannot drift), the call
(the caller's service and address) and the tool itself (name, description, arguments, handler).
The tools are :mod:`.tools` and :mod:`.kept`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import mcp_types as types
from pydantic import BaseModel, ConfigDict, ValidationError

from ..app import Service
from ..errors import InvalidInput

__all__ = ["Arguments", "Call", "NoArguments", "Tool", "input_schema", "parse_arguments"]


class Arguments(BaseModel):
    """A tool's arguments: unknown names refused, JSON types taken as they are (no coercion:
    ``"5"`` is not a number, ``true`` is not one either)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class NoArguments(Arguments):
    """The arguments of a tool that takes none."""


ArgumentsT = TypeVar("ArgumentsT", bound=Arguments)


def _plain(node: Any) -> Any:
    """A JSON schema as a model reads it best: no titles, and an optional value as its own type
    (pydantic writes ``anyOf: [T, null]`` with ``default: null``; a missing argument is None)."""
    if isinstance(node, list):
        return [_plain(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {k: _plain(v) for k, v in node.items() if k != "title"}
    options = node.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options and len(options) == 2:
        (kept,) = [option for option in options if option != {"type": "null"}]
        node = {**{k: v for k, v in node.items() if k != "anyOf"}, **kept}
        if node.get("default", "") is None:
            del node["default"]
    return node


def input_schema(arguments: type[Arguments]) -> dict[str, Any]:
    """The JSON schema of a tool's arguments, generated from their model."""
    schema: dict[str, Any] = _plain(arguments.model_json_schema())
    schema.setdefault("properties", {})
    return schema


def parse_arguments(tool: str, model: type[ArgumentsT], args: Mapping[str, Any]) -> ArgumentsT:
    """The arguments as their model, or InvalidInput naming each wrong one."""
    unknown = sorted(set(args) - set(model.model_fields))
    if unknown:
        raise InvalidInput(f"{tool} takes no argument {', '.join(map(repr, unknown))}")
    try:
        return model.model_validate(dict(args))
    except ValidationError as exc:
        problems = "; ".join(
            f"argument {'.'.join(map(str, e['loc']))!r}: {e['msg']}" for e in exc.errors()
        )
        raise InvalidInput(f"{tool}: {problems}") from exc


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call: the service as the caller may use it, and the caller's address (None over
    stdio: not counted against a quota)."""

    service: Service
    address: str | None = None


@dataclass(frozen=True, slots=True)
class Tool:
    """One tool: what a model sees of it (the schema from ``arguments``) and what runs it."""

    name: str
    description: str
    arguments: type[Arguments]
    handler: Callable[[Call, Any], dict[str, Any]]
    read_only: bool = True

    def listed(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            description=self.description,
            input_schema=input_schema(self.arguments),
            annotations=types.ToolAnnotations(
                read_only_hint=self.read_only, idempotent_hint=self.read_only
            ),
        )
