"""A small shop API in FastAPI, publishing its own OpenAPI 3.1 document at /openapi.json.

The toolprism-openapi tests turn that document into tools and call them: listing, reading,
creating and deleting items, error statuses, a bearer token and an API key, parameters in
every location, a response that contradicts the document, a long refusal, a redirect to
another host.
"""

import os
import socket
import sys
import threading
from typing import Annotated

import uvicorn
from fastapi import Cookie, Depends, FastAPI, Header, HTTPException, Query, Request, Security
from fastapi.responses import JSONResponse, PlainTextResponse, RedirectResponse
from fastapi.security import APIKeyQuery, HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field

TOKEN = "shop-token-7f3a"
API_KEY = "shop-key-91c2"

app = FastAPI(title="Shop", version="1.0.0")
ITEMS: dict[int, dict] = {1: {"id": 1, "name": "lamp", "price": 12.5, "tags": ["home"]}}


class NewItem(BaseModel):
    name: str = Field(description="What the item is called.", min_length=1)
    price: float = Field(ge=0)
    tags: list[str] = []


class Item(NewItem):
    id: int


@app.get("/items", operation_id="list_items", tags=["items"], summary="Lists items.")
def list_items(
    tag: Annotated[list[str] | None, Query()] = None, limit: int = 10
) -> list[Item]:
    found = [item for item in ITEMS.values() if not tag or set(tag) & set(item["tags"])]
    return [Item(**item) for item in found[:limit]]


@app.get("/items/{item_id}", operation_id="get_item", tags=["items"], summary="Reads an item.")
def get_item(item_id: int) -> Item:
    if item_id not in ITEMS:
        raise HTTPException(status_code=404, detail=f"no item {item_id}")
    return Item(**ITEMS[item_id])


@app.post("/items", operation_id="create_item", tags=["items"], status_code=201)
def create_item(item: NewItem) -> Item:
    new_id = max(ITEMS, default=0) + 1
    ITEMS[new_id] = {"id": new_id, **item.model_dump()}
    return Item(**ITEMS[new_id])


@app.delete("/items/{item_id}", operation_id="delete_item", tags=["items"], status_code=204)
def delete_item(item_id: int) -> None:
    if ITEMS.pop(item_id, None) is None:
        raise HTTPException(status_code=404, detail=f"no item {item_id}")


@app.get("/echo/{word}", operation_id="echo", tags=["echo"])
def echo(
    request: Request,
    word: str,
    q: Annotated[list[str] | None, Query()] = None,
    x_trace: Annotated[str | None, Header()] = None,
    session: Annotated[str | None, Cookie()] = None,
) -> dict:
    """Says back what it received, as the server saw it on the wire."""
    return {
        "raw_path": request.scope["raw_path"].decode(),
        "word": word,
        "raw_query": request.scope["query_string"].decode(),
        "q": q,
        "x_trace": x_trace,
        "session": session,
    }


bearer = HTTPBearer()


@app.get("/secure", operation_id="secure", tags=["auth"])
def secure(credentials: Annotated[HTTPAuthorizationCredentials, Security(bearer)]) -> dict:
    if credentials.credentials != TOKEN:
        raise HTTPException(status_code=401, detail="bad token")
    return {"ok": True}


api_key = APIKeyQuery(name="api_key")


@app.get("/keyed", operation_id="keyed", tags=["auth"])
def keyed(key: Annotated[str, Security(api_key)]) -> dict:
    if key != API_KEY:
        raise HTTPException(status_code=403, detail="bad key")
    return {"ok": True}


@app.get("/liar", operation_id="liar", tags=["drift"], response_model=Item)
def liar():
    """Promises an item, answers something else (as a drifting API would)."""
    return JSONResponse({"id": "not-a-number", "name": 7})


@app.get("/away", operation_id="away", tags=["drift"])
def away() -> dict:
    """Redirects to another host."""
    return RedirectResponse(os.environ.get("SHOP_AWAY", "http://127.0.0.2:9/stolen"))


@app.get("/notes", operation_id="notes", tags=["text"], response_class=PlainTextResponse)
def notes(size: int = 5) -> str:
    return "n" * size


@app.get("/refusal", operation_id="refusal", tags=["drift"])
def refusal(size: int = 100_000) -> dict:
    """Refuses with a long body: the failure quotes its start."""
    return PlainTextResponse("why " * (size // 4), status_code=422)


@app.post("/labels", operation_id="label", tags=["echo"])
def label(name: str, item: NewItem) -> dict:
    """A query parameter named like a field of the body: both must arrive, each in its place."""
    return {"query_name": name, "body_name": item.name}


def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    # Listening before the URL is printed: a client that connects at once waits in the backlog
    # until uvicorn accepts, rather than being refused.
    sock.listen(128)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    if not sys.stdin.isatty():
        def watch_stdin() -> None:
            sys.stdin.read()
            server.should_exit = True

        threading.Thread(target=watch_stdin, daemon=True).start()
    print(f"http://127.0.0.1:{port}", flush=True)
    server.run(sockets=[sock])


if __name__ == "__main__":
    main()
