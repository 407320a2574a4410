"""The collections routes (a router): a user's named collections of documents, to limit chat
questions and searches to (``collection`` in ``POST /api/chat``, ``GET /api/search``). Who keeps
which collection, and what may go in, is the application's (:mod:`truthbase.app.collections`):
another user's collection is a 404, as one that does not exist."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter
from fastapi import Path as PathParam
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from ..app.collections import MAX_DOCUMENTS, MAX_NAME
from ..people import CollectionRecord
from .deps import CurrentService

__all__ = ["COLLECTION_ROUTES", "router"]

COLLECTION_ROUTES = (
    "GET /api/collections",
    "POST /api/collections",
    "PATCH /api/collections/{name}",
    "DELETE /api/collections/{name}",
)

router = APIRouter()

_Name = Annotated[str, PathParam(min_length=1, max_length=MAX_NAME, description="Its name.")]
_Ids = Annotated[list[str], Field(max_length=MAX_DOCUMENTS)]


class CollectionOut(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    documents: list[str] = Field(description="The ids of its documents the caller may see.")
    created_at: str

    @classmethod
    def of(cls, collection: CollectionRecord) -> CollectionOut:
        return cls(
            name=collection.name,
            documents=list(collection.documents),
            created_at=collection.created_at,
        )


class CollectionsOut(BaseModel):
    collections: list[CollectionOut]


class CollectionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=MAX_NAME)
    documents: _Ids = []


class CollectionChangeIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(
        default=None, min_length=1, max_length=MAX_NAME, description="A new name."
    )
    add: _Ids = []
    remove: _Ids = []


@router.get("/api/collections", response_model=CollectionsOut, tags=["collections"])
async def list_collections(service: CurrentService) -> CollectionsOut:
    """The caller's collections by name, each with the ids of the documents in it that the
    caller may (still) see."""
    kept = await run_in_threadpool(service.collections)
    return CollectionsOut(collections=[CollectionOut.of(c) for c in kept])


@router.post(
    "/api/collections", status_code=201, response_model=CollectionOut, tags=["collections"]
)
async def create_collection(body: CollectionIn, service: CurrentService) -> CollectionOut:
    """A new collection of the caller's; 400 for a name they use already, 404 for a document
    they may not see."""
    created = await run_in_threadpool(service.create_collection, body.name, body.documents)
    return CollectionOut.of(created)


@router.patch("/api/collections/{name}", response_model=CollectionOut, tags=["collections"])
async def change_collection(
    name: _Name, body: CollectionChangeIn, service: CurrentService
) -> CollectionOut:
    """Add documents (ids or unique prefixes of documents the caller may see), take some out,
    and/or rename it."""

    def run() -> CollectionOut:
        service.change_collection(name, add=body.add, remove=body.remove)
        current = name
        if body.name is not None and body.name != name:
            service.rename_collection(name, body.name)
            current = body.name.strip()
        return CollectionOut.of(next(c for c in service.collections() if c.name == current))

    return await run_in_threadpool(run)


@router.delete("/api/collections/{name}", tags=["collections"])
async def delete_collection(name: _Name, service: CurrentService) -> dict[str, str]:
    """Delete one of the caller's collections (its documents stay in the library)."""
    await run_in_threadpool(service.delete_collection, name)
    return {"deleted": name}
