"""One exception root: every exception class TruthBase defines is a TruthBaseError."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import truthbase
from truthbase.embed import EmbedderMismatchError, EmbeddingError
from truthbase.errors import InvalidInput, NotFound, TruthBaseError, Unavailable
from truthbase.eval.golden import GoldenError
from truthbase.extract import ExtractionError
from truthbase.llm.chain import AllModelsFailed
from truthbase.llm.client import LLMError, LLMTimeout
from truthbase.server.app import error_status
from truthbase.server.epub_files import BookFileError
from truthbase.store import StoreError

#: Exception classes defined in src/truthbase that are deliberately not TruthBaseErrors, as
#: "module.Class": why. Empty: the internal control-flow ones (AgentFailed, ToolError) are below
#: the root too, so a new class has to say here why it is not.
ALLOWED_OUTSIDE_THE_ROOT: dict[str, str] = {}


def _exception_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(truthbase.__path__, prefix="truthbase."):
        if info.name.endswith("__main__"):
            continue  # importing it would run the CLI
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseException)
                and obj.__module__ == module.__name__
            ):
                found[f"{module.__name__}.{name}"] = obj
    return found


def test_every_exception_class_is_below_the_root() -> None:
    classes = _exception_classes()
    # the walk finds them (thirteen stage kinds and the root's own four at the time of writing)
    assert len(classes) >= 17, sorted(classes)
    outside = sorted(
        name
        for name, cls in classes.items()
        if not issubclass(cls, TruthBaseError) and name not in ALLOWED_OUTSIDE_THE_ROOT
    )
    assert outside == [], f"derive these from truthbase.errors.TruthBaseError: {outside}"
    stale = sorted(set(ALLOWED_OUTSIDE_THE_ROOT) - set(classes))
    assert stale == [], f"allow-listed classes that no longer exist: {stale}"


def test_kinds_keep_the_builtin_bases_callers_rely_on() -> None:
    # InvalidInput replaces builtin ValueError checks: callers that catch ValueError still do.
    for cls in (InvalidInput, GoldenError, EmbedderMismatchError):
        assert issubclass(cls, ValueError), cls
    assert issubclass(NotFound, LookupError)
    assert issubclass(LLMTimeout, LLMError) and issubclass(AllModelsFailed, LLMError)


@pytest.mark.parametrize(
    ("exc", "status"),
    [
        (NotFound("no document x"), 404),
        (BookFileError("no member 'a.png'"), 404),
        (EmbeddingError("cannot load ONNX model"), 503),
        (LLMTimeout("timed out"), 503),
        (StoreError("cannot connect to the database"), 503),
        (Unavailable("down"), 503),
        (InvalidInput("unknown answer mode"), 400),
        (EmbedderMismatchError("re-index"), 400),
        (GoldenError("bad golden file"), 400),
        (ExtractionError("corrupt", "bad pdf"), 400),
        (TruthBaseError("anything else"), 400),
    ],
)
def test_error_status_by_kind(exc: TruthBaseError, status: int) -> None:
    assert error_status(exc) == status
