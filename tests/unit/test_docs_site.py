"""The documentation site documents the code: every command, setting, route and module is on the
generated reference pages (scripts/docs_reference.py, run by `mkdocs build`), each with the text
the code gives it, and the hand-written pages name only commands, settings and routes that exist.
`make test` builds the site with --strict (broken links and references); these tests say which
thing is missing when one is."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
import yaml
from scripts import docs_reference as reference
from scripts.docs_griffe import drop_roles, escape_reference_pairs

import truthbase

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
#: The hand-written pages (the evaluations' write-ups are records, not the user's guide).
GUIDE = sorted(p for p in DOCS.glob("*.md"))
#: Variables the guide names that are not settings: the test suite's own.
NOT_SETTINGS = {"TRUTHBASE_TEST_INDEX_CACHE"}


@pytest.fixture(scope="module")
def http_page() -> str:
    return reference.http_page()


def test_every_command_has_its_section_and_help() -> None:
    page = reference.cli_page()
    paths = [doc.path for doc in reference.walk_commands()]
    assert {"truthbase ingest", "truthbase users add", "truthbase eval retrieval"} <= set(paths)
    for doc in reference.walk_commands():
        assert f"## `{doc.path}`" in page, doc.path
        assert (doc.command.help or "").strip(), f"{doc.path} has no help text"
        for param in doc.command.params:
            if isinstance(param, click.Option) and not param.hidden:
                assert param.opts[0] in page, f"{doc.path} {param.opts[0]}"
                assert param.help, f"{doc.path} {param.opts[0]} has no help"


def test_every_setting_has_its_row_with_description_and_default() -> None:
    page = reference.settings_page()
    settings = list(reference.walk_settings())
    assert len(settings) >= 100
    names = {doc.env for doc in settings}
    assert {"TRUTHBASE_DB", "TRUTHBASE_CHUNKING__MAX_CHARS", "TRUTHBASE_LLM__FALLBACKS"} <= names
    rows = {
        line.split("|")[2].strip(" `"): line
        for line in page.splitlines()
        if line.startswith("| `") and "`TRUTHBASE_" in line
    }
    for doc in settings:
        assert doc.field.description, f"{doc.name} has no description"
        row = rows[doc.env]
        assert f"`{doc.name}`" in row, doc.name
        assert f"`{reference.format_default(doc.field)}`" in row, doc.name
    assert "| `chunking.max_chars` | `TRUTHBASE_CHUNKING__MAX_CHARS` | `int` | `800` |" in page


def test_every_served_route_is_on_the_http_page(http_page: str) -> None:
    routes = reference.walk_routes(reference.reference_app())
    listed = {f"{r.method} {r.path}" for r in routes}
    assert {"POST /api/chat", "GET /api/search", "GET /view", "GET /pdfjs/..."} <= listed
    for route in routes:
        assert f"`{route.method} {route.path}`" in http_page, route
        if route.in_schema or not route.path.endswith("..."):
            assert (route.summary or route.description).strip(), f"{route} says nothing"
    app = reference.reference_app()
    served = {
        (method, route.path)
        for route in app.routes
        for method in getattr(route, "methods", None) or ()
        if method != "HEAD"
    }
    assert served <= {(r.method, r.path) for r in routes}


def test_every_module_has_its_api_page() -> None:
    pages = reference.api_pages()
    modules = reference.api_modules()
    assert {"truthbase", "truthbase.cli", "truthbase.server"} <= set(modules)
    index = pages["reference/api/index.md"]
    for name in modules:
        assert pages[f"reference/api/{name}.md"].endswith(f"::: {name}\n")
        assert f"]({name}.md)" in index
    # the tree as it is now, not a fixed list: every package folder of src/ has its page
    root = Path(truthbase.__file__).parent
    for init in root.rglob("__init__.py"):
        dotted = ".".join(("truthbase", *init.parent.relative_to(root).parts))
        assert dotted in modules, dotted


def test_every_hand_written_page_is_in_the_navigation() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text("utf-8"))

    def pages(nav: object) -> list[str]:
        if isinstance(nav, str):
            return [nav]
        items = nav.values() if isinstance(nav, dict) else nav
        return [p for item in items for p in pages(item)]  # type: ignore[union-attr]

    in_nav = set(pages(config["nav"]))
    assert {"reference/cli.md", "reference/settings.md", "reference/http.md"} <= in_nav
    for page in GUIDE:
        assert page.name in in_nav, f"docs/{page.name} is not in mkdocs.yml's nav"


def _guide_text() -> str:
    return "\n".join(p.read_text("utf-8") for p in GUIDE)


def test_the_guide_names_only_commands_that_exist() -> None:
    text = _guide_text()
    words = {doc.path.split()[1] for doc in reference.walk_commands()}
    named = set(re.findall(r"`truthbase (?:--db \S+ )?([a-z][a-z-]+)", text))
    assert {"ingest", "serve", "ask", "users"} <= named
    assert named <= words, named - words


def test_the_guide_names_only_settings_that_exist() -> None:
    text = _guide_text()
    envs = {doc.env for doc in reference.walk_settings()}
    named = set(re.findall(r"\bTRUTHBASE_[A-Z0-9_]*[A-Z0-9]", text))
    assert "TRUTHBASE_DATABASE_URL" in named
    assert named <= envs | NOT_SETTINGS, named - envs - NOT_SETTINGS
    dotted = {doc.name for doc in reference.walk_settings()}
    sections = {name.split(".")[0] for name in dotted if "." in name}
    mentioned = set(re.findall(r"`([a-z]+\.[a-z_]+)`", text))
    settings_named = {m for m in mentioned if m.split(".")[0] in sections}
    assert {"llm.base_url", "library.max_file_bytes"} <= settings_named
    assert settings_named <= dotted, settings_named - dotted


def test_the_guide_names_only_routes_that_exist() -> None:
    text = (DOCS / "web-app.md").read_text("utf-8")
    routes = reference.walk_routes(reference.reference_app())
    served = {f"{r.method} {r.path}" for r in routes}
    named = set(re.findall(r"^\| `((?:GET|POST|PATCH|DELETE|PUT) /[^`? ]*)", text, re.M))
    assert len(named) >= 25
    assert named <= served, named - served
    # and every route of the API and every page has its line in the guide's table
    missing = {s for s in served if not s.endswith("...") and "/openapi" not in s} - named
    assert not missing, f"not in docs/web-app.md's route table: {sorted(missing)}"


def test_the_readme_is_short_and_points_to_the_docs() -> None:
    readme = (REPO / "README.md").read_text("utf-8")
    assert len(readme.splitlines()) <= 80
    assert "make demo" in readme and "make test" in readme
    assert "](docs/index.md)" in readme and "](docs/getting-started.md)" in readme
    shot = re.search(r"!\[[^\]]*\]\((docs/screenshots/[^)]+)\)", readme)
    assert shot and (REPO / shot.group(1)).is_file()
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (REPO / link).exists(), link


def test_docstring_brackets_are_escaped_outside_code_only() -> None:
    text = 'groups ("[1][2]", "[1] [f3-10-80]") and ``[a][b]`` in code'
    assert escape_reference_pairs(text) == (
        'groups ("[1]\\[2]", "[1] \\[f3-10-80]") and ``[a][b]`` in code'
    )


def test_sphinx_roles_become_code_spans() -> None:
    text = "See :class:`~truthbase.api.Library` and :mod:`.common`, not `x`:"
    assert drop_roles(text) == "See `truthbase.api.Library` and `.common`, not `x`:"
