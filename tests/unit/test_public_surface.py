"""The public API and the docs: every command and setting is documented, the API is deliberate."""

from __future__ import annotations

from pathlib import Path

import click
from pydantic import BaseModel

import truthbase
from truthbase.cli import cli
from truthbase.config import Settings

README = (Path(__file__).resolve().parents[2] / "README.md").read_text("utf-8")


def test_public_api_is_deliberate() -> None:
    assert sorted(truthbase.__all__) == sorted(
        [
            "Chunk",
            "ChunkDraft",
            "DocumentInfo",
            "ExtractedDocument",
            "PageGeometry",
            "Rect",
            "SearchHit",
            "Settings",
            "Unit",
            "find_quote",
            "normalize",
            "quote_in",
            "span_line_rects",
        ]
    )
    for name in truthbase.__all__:
        assert getattr(truthbase, name) is not None


def _commands(group: click.Group, prefix: str = "truthbase") -> list[str]:
    names: list[str] = []
    for name, command in group.commands.items():
        path = f"{prefix} {name}"
        if isinstance(command, click.Group):
            names.extend(_commands(command, path))
        else:
            names.append(path)
    return names


def test_every_command_is_in_the_readme() -> None:
    commands = _commands(cli)
    assert len(commands) >= 5
    for path in commands:
        words = path.split()[1:]
        assert any(
            all(w in line for w in words) and line.lstrip("| ").startswith("`truthbase")
            for line in README.splitlines()
        ), f"{path} is not documented in README.md"


def _settings_env_names(model: type[BaseModel], prefix: str) -> list[str]:
    names: list[str] = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            names.extend(_settings_env_names(annotation, f"{prefix}{name.upper()}__"))
        else:
            names.append(f"{prefix}{name.upper()}")
    return names


def test_every_setting_is_in_the_readme() -> None:
    names = _settings_env_names(Settings, "TRUTHBASE_")
    assert "TRUTHBASE_CHUNKING__MAX_CHARS" in names
    for name in names:
        assert f"`{name}`" in README, f"{name} is not documented in README.md"
