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
            "Library",
            "PageGeometry",
            "Rect",
            "SearchHit",
            "Settings",
            "TruthBaseError",
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


def _readme_defaults() -> dict[str, str]:
    rows: dict[str, str] = {}
    for line in README.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[1].startswith("`TRUTHBASE_"):
            rows[cells[1].strip("`")] = cells[2].strip("`").lower()
    return rows


def _settings_defaults(model: type[BaseModel], prefix: str) -> dict[str, object]:
    defaults: dict[str, object] = {}
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            defaults.update(_settings_defaults(annotation, f"{prefix}{name.upper()}__"))
        else:
            defaults[f"{prefix}{name.upper()}"] = field.default
    return defaults


def test_the_readme_shows_the_real_defaults() -> None:
    documented = _readme_defaults()
    checked = 0
    for name, default in _settings_defaults(Settings, "TRUTHBASE_").items():
        shown = documented[name]
        if isinstance(default, bool):
            assert shown == str(default).lower(), name
        elif isinstance(default, int | float):
            assert float(shown) == float(default), f"{name}: README says {shown}, code {default}"
        elif isinstance(default, str) and default:
            assert shown == default.lower(), name
        else:
            continue
        checked += 1
    assert checked >= 25
