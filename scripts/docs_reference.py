"""The reference pages of the documentation site, generated from the code at build time.

mkdocs-gen-files runs this file on every `mkdocs build` (mkdocs.yml, `plugins: gen-files`), so
no generated page is ever committed or stale. Four references, each read from the thing itself:

- the command line: every command of the click group `truthbase.cli.cli`, walked recursively,
  with its help text, usage and options, as `truthbase COMMAND --help` prints them;
- the settings: every field of the settings tree `truthbase.config.Settings`, walked
  recursively, with its dotted name, `TRUTHBASE_*` variable, type, default and description;
- the HTTP routes: every operation of the app's OpenAPI schema (`create_app(...).openapi()`),
  and the pages and static folders the schema leaves out, read from the app's routes;
- the Python API: one page per module that `pkgutil.walk_packages` finds under `truthbase`,
  each rendered by mkdocstrings from the docstrings (so a new or moved module gets its page).

The pure functions (`cli_page`, `settings_page`, `http_page`, `api_pages`) return Markdown;
tests/unit/test_docs_site.py checks them against the code. `write_pages` is the gen-files shell.
"""

from __future__ import annotations

import json
import pkgutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from pydantic import BaseModel
from pydantic.fields import FieldInfo

import truthbase
from truthbase.cli import cli
from truthbase.config import Settings

#: Where the generated pages go, relative to the docs folder (git-ignored there: see
#: write_pages, gen-files keeps them in the build only).
REFERENCE = "reference"
ENV_PREFIX = "TRUTHBASE_"
HTTP_METHODS = ("get", "post", "put", "patch", "delete")


# -- the command line --------------------------------------------------------------------------


@dataclass(frozen=True)
class CommandDoc:
    """One command of the CLI: its full name (`truthbase users add`) and its click context."""

    path: str
    command: click.Command
    context: click.Context


def walk_commands(
    group: click.Group = cli, parent: click.Context | None = None
) -> Iterator[CommandDoc]:
    """Every command under ``group``, depth first in name order (groups and their commands)."""
    context = parent or _root_context()
    for name in sorted(group.commands):
        command = group.commands[name]
        child = click.Context(command, info_name=name, parent=context)
        yield CommandDoc(child.command_path, command, child)
        if isinstance(command, click.Group):
            yield from walk_commands(command, child)


def _root_context() -> click.Context:
    """The root's context as `truthbase --help` makes it (help options, content width), at a
    fixed terminal width; the commands' contexts inherit it."""
    return click.Context(cli, info_name="truthbase", **cli.context_settings, terminal_width=100)


def _anchor(text: str) -> str:
    return "-".join(text.replace("_", "-").split()).lower()


def cli_page() -> str:
    """The command-line reference: the root's help, then one section per command."""
    root = _root_context()
    lines = [
        "# Command line reference",
        "",
        "Generated from the click commands (`truthbase.cli`) when the site is built; "
        "`truthbase COMMAND --help` prints the same. A guide to what each command is for: "
        "[Command line](../commands.md).",
        "",
        "```text",
        cli.get_help(root),
        "```",
        "",
    ]
    for doc in walk_commands():
        kind = "group" if isinstance(doc.command, click.Group) else "command"
        lines += [
            f"## `{doc.path}` {{#{_anchor(doc.path)}}}",
            "",
            f"*{kind}*: {doc.command.get_short_help_str(limit=200)}",
            "",
            "```text",
            doc.command.get_help(doc.context),
            "```",
            "",
        ]
    return "\n".join(lines)


# -- the settings ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SettingDoc:
    """One leaf of the settings tree."""

    name: str  # dotted: chunking.max_chars
    env: str  # TRUTHBASE_CHUNKING__MAX_CHARS
    field: FieldInfo
    section: type[BaseModel]


def _is_section(annotation: object) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def walk_settings(model: type[BaseModel] = Settings, prefix: str = "") -> Iterator[SettingDoc]:
    """Every leaf setting of ``model``, in declaration order, sections recursively."""
    for name, field in model.model_fields.items():
        dotted = f"{prefix}{name}"
        if _is_section(field.annotation):
            yield from walk_settings(field.annotation, f"{dotted}.")  # type: ignore[arg-type]
        else:
            env = ENV_PREFIX + dotted.upper().replace(".", "__")
            yield SettingDoc(dotted, env, field, model)


def _type_name(annotation: object) -> str:
    text = getattr(annotation, "__name__", None) if isinstance(annotation, type) else None
    return text or str(annotation).replace("typing.", "").replace("pathlib.", "")


def format_default(field: FieldInfo) -> str:
    """A field's default as the settings page shows it: JSON where it has a JSON form."""
    default = field.get_default(call_default_factory=True)
    if default is None:
        return "none"
    if isinstance(default, Path):
        return str(default)
    if isinstance(default, BaseModel):
        return json.dumps(default.model_dump(mode="json"))
    try:
        return json.dumps(default)
    except TypeError:
        return str(default)


def _cell(text: str) -> str:
    """``text`` on one line of a Markdown table: pipes escaped, and `][` so that a URL pattern
    such as ``[&start=S][&zoom=1]`` is not read as a reference link."""
    return " ".join(text.split()).replace("|", "\\|").replace("][", "]\\[")


def settings_page() -> str:
    """The settings reference: one table per section of the tree."""
    lines = [
        "# Settings reference",
        "",
        "Generated from the settings tree (`truthbase.config.Settings`) when the site is built. "
        "Every setting is read from its `TRUTHBASE_*` environment variable and from an optional "
        "`truthbase.toml` in the working directory; nested fields use `__` in the environment "
        "(`TRUTHBASE_CHUNKING__MAX_CHARS=600`). Flags win over the environment, the environment "
        "over the file. Lists and objects are given as JSON.",
        "",
    ]
    section: type[BaseModel] | None = None
    for doc in walk_settings():
        if doc.section is not section:
            section = doc.section
            title = "top level" if section is Settings else doc.name.split(".")[0]
            summary = (section.__doc__ or "").strip().split("\n\n")[0]
            if section is Settings:
                summary = "Where the index lives."
            lines += [f"## {title}", ""] + ([_cell(summary), ""] if summary else [])
            lines += ["| setting | env | type | default | meaning |", "|---|---|---|---|---|"]
        lines.append(
            f"| `{doc.name}` | `{doc.env}` | `{_cell(_type_name(doc.field.annotation))}` "
            f"| `{_cell(format_default(doc.field))}` | {_cell(doc.field.description or '')} |"
        )
    return "\n".join(lines) + "\n"


# -- the HTTP routes ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RouteDoc:
    """One route the app serves: `GET /api/search`, with what it says about itself."""

    method: str
    path: str
    summary: str
    description: str
    in_schema: bool


def reference_app() -> Any:
    """The app over an index path that is never opened (the app's lifespan never runs, so
    nothing is created there; the folder is gone before the app is used)."""
    from truthbase.server import create_app

    with tempfile.TemporaryDirectory(prefix="truthbase-docs-") as folder:
        return create_app(Settings(db=Path(folder) / "reference.sqlite"))


def _served(routes: Any) -> Any:
    """Every route, an included router's routes in its place: FastAPI keeps an included
    ``APIRouter`` as one entry of ``app.routes`` (its routes under ``original_router``)."""
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            yield from _served(inner.routes)
        else:
            yield route


def walk_routes(app: Any) -> list[RouteDoc]:
    """Every method and path the app answers: the OpenAPI operations, then the rest."""
    routes: list[RouteDoc] = []
    schema = app.openapi()
    for path, operations in schema["paths"].items():
        for method in HTTP_METHODS:
            if method in operations:
                op = operations[method]
                routes.append(
                    RouteDoc(
                        method.upper(),
                        path,
                        op.get("summary", ""),
                        op.get("description", ""),
                        True,
                    )
                )
    for route in _served(app.routes):
        methods = sorted(getattr(route, "methods", None) or ())
        if getattr(route, "include_in_schema", True) and methods:
            continue  # an OpenAPI operation: listed above
        endpoint = getattr(route, "endpoint", None)
        about = (getattr(endpoint, "__doc__", None) or "").strip()
        if route.path == app.openapi_url:
            about = "The OpenAPI schema of the API operations above (JSON)."
        if not methods:  # a mounted folder of static files
            routes.append(RouteDoc("GET", f"{route.path}/...", "", "Static files.", False))
            continue
        for method in methods:
            if method != "HEAD":
                routes.append(RouteDoc(method, route.path, "", about, False))
    return routes


def http_page(app: Any | None = None) -> str:
    """The HTTP reference: each operation with its parameters and answers, then the pages."""
    app = app or reference_app()
    schema = app.openapi()
    routes = walk_routes(app)
    lines = [
        "# HTTP reference",
        "",
        "Generated from the app (`truthbase.server.create_app`) when the site is built: its "
        "OpenAPI schema, which a running server also serves at `/openapi.json` and shows at "
        "`/docs`, and the pages and static folders the schema leaves out. What the routes are "
        "for, with examples: [Web app and HTTP API](../web-app.md).",
        "",
        "## API operations",
        "",
    ]
    for route in (r for r in routes if r.in_schema):
        op = schema["paths"][route.path][route.method.lower()]
        lines += [f"### `{route.method} {route.path}`", ""]
        if route.summary:
            lines += [f"**{route.summary}**", ""]
        if route.description:
            lines += [route.description.strip(), ""]
        lines += _parameters(op) + _responses(op)
    lines += [
        "## Pages and static files",
        "",
        "Outside the OpenAPI schema: the HTML pages and the files they load.",
        "",
        "| route | what it serves |",
        "|---|---|",
    ]
    for route in (r for r in routes if not r.in_schema):
        lines.append(f"| `{route.method} {route.path}` | {_cell(route.description)} |")
    return "\n".join(lines) + "\n"


def _parameters(op: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    params = op.get("parameters", [])
    if params:
        lines += ["| parameter | in | required | type | meaning |", "|---|---|---|---|---|"]
        for p in params:
            kind = p.get("schema", {}).get("type") or p.get("schema", {}).get("anyOf", "")
            lines.append(
                f"| `{p['name']}` | {p['in']} | {'yes' if p.get('required') else 'no'} "
                f"| {_cell(str(kind))} | {_cell(p.get('description', ''))} |"
            )
        lines.append("")
    body = op.get("requestBody", {}).get("content", {})
    if body:
        media = ", ".join(f"`{m}`" for m in body)
        refs = [c.get("schema", {}).get("$ref", "") for c in body.values()]
        named = ", ".join(f"`{r.rsplit('/', 1)[-1]}`" for r in refs if r)
        lines += [f"Body: {media}" + (f" ({named})" if named else "") + ".", ""]
    return lines


def _responses(op: dict[str, Any]) -> list[str]:
    answers = [
        f"`{code}` {_cell(r.get('description', '')).rstrip('.')}"
        for code, r in op["responses"].items()
    ]
    return ["Answers: " + "; ".join(answers) + ".", ""]


# -- the Python API ----------------------------------------------------------------------------


def api_modules() -> list[str]:
    """Every module and package of truthbase, as the package tree has them now."""
    names = ["truthbase"]
    for info in pkgutil.walk_packages(truthbase.__path__, prefix="truthbase."):
        if not info.name.rsplit(".", 1)[-1].startswith("_"):
            names.append(info.name)
    return sorted(names)


def api_pages() -> dict[str, str]:
    """One page per module (mkdocstrings renders it from its docstrings), and an index."""
    pages: dict[str, str] = {}
    index = [
        "# Python API reference",
        "",
        "Generated from the docstrings when the site is built: one page per module of the "
        "package tree. The public surface is `truthbase.__all__` (see "
        "[Python API](../../python-api.md) for a tour); everything else is internal and may "
        "change.",
        "",
    ]
    for name in api_modules():
        depth = name.count(".")
        index.append(f"{'    ' * depth}- [`{name}`]({name}.md)")
        pages[f"{REFERENCE}/api/{name}.md"] = f"# `{name}`\n\n::: {name}\n"
    pages[f"{REFERENCE}/api/index.md"] = "\n".join(index) + "\n"
    return pages


# -- the shell: mkdocs-gen-files ---------------------------------------------------------------


def all_pages() -> dict[str, str]:
    """Every generated page by its path under the docs folder."""
    pages = {
        f"{REFERENCE}/cli.md": cli_page(),
        f"{REFERENCE}/settings.md": settings_page(),
        f"{REFERENCE}/http.md": http_page(),
    }
    pages.update(api_pages())
    return pages


def write_pages() -> None:
    """Write the pages into the build (gen-files' virtual files: nothing lands in docs/)."""
    import mkdocs_gen_files

    for path, text in all_pages().items():
        with mkdocs_gen_files.open(path, "w") as handle:
            handle.write(text)


if __name__ in {"__main__", "<run_path>"}:
    write_pages()
