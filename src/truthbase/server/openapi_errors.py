"""The error answers in the OpenAPI document: every operation declares a ``default`` response
(any status it does not list: 400, 401, 403, 404, 409, 413, 429, 503, ...) whose body is
:class:`ErrorOut`, and its 422 answers the same body.

Every error of the app is ``{"detail": ...}``: a message (HTTPException, TruthBaseError, the
500 of a bug) or, for a request that fails validation, the list :mod:`.invalid` writes. A client
generated from /openapi.json (and schemathesis, tests/integration/test_schema_fuzz.py) can then
read every answer the server gives.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel, Field

__all__ = ["ErrorOut", "declare_error_responses"]


class ValidationErrorOut(BaseModel):
    type: str = Field(description="The kind of error (pydantic's error type).")
    loc: list[str | int] = Field(description="Where: body, query, path or header, then names.")
    msg: str


class ErrorOut(BaseModel):
    detail: str | list[ValidationErrorOut] = Field(
        description="What went wrong: a message, or one entry per invalid part of the request."
    )


def _error_response(ref: str, description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": {"$ref": ref}}}}


def declare_error_responses(app: FastAPI) -> None:
    """Make ``app.openapi()`` declare the error answers of every operation (see module doc)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = build()
        schemas = schema.setdefault("components", {}).setdefault("schemas", {})
        for model in (ValidationErrorOut, ErrorOut):
            schemas[model.__name__] = model.model_json_schema(
                ref_template="#/components/schemas/{model}"
            )
        ref = "#/components/schemas/ErrorOut"
        for item in schema.get("paths", {}).values():
            for operation in item.values():
                if not isinstance(operation, dict) or "responses" not in operation:
                    continue
                responses = operation["responses"]
                if "422" in responses:
                    responses["422"] = _error_response(ref, "The request is invalid.")
                responses.setdefault(
                    "default", _error_response(ref, "An error (the status says which).")
                )
        schemas.pop("HTTPValidationError", None)
        schemas.pop("ValidationError", None)
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
