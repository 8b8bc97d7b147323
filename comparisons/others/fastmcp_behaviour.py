"""The comparison's four tools written with FastMCP, called through FastMCP's own client over
its in-memory transport with the same arguments as the other frameworks. Prints one JSON line
per case: {case, outcome, shown} — `shown` is what the client received (structured content as
JSON, else the text)."""

import asyncio
import json
import math
from typing import Annotated

from fastmcp import Client, FastMCP
from pydantic import BaseModel, Field

server = FastMCP("comparison")


@server.tool
def add(a: Annotated[int, Field(le=100)], b: int) -> int:
    """Adds two numbers; a is at most 100."""
    return a + b


class Reading(BaseModel):
    value: float


@server.tool
def reading() -> Reading:
    """A reading that is not a number."""
    return Reading(value=math.nan)


class Count(BaseModel):
    count: int


@server.tool(output_schema=Count.model_json_schema())
def liar() -> dict:
    """Says count is an integer and returns a string."""
    return {"count": "3"}


CASES = [
    ("valid arguments", "add", {"a": 1, "b": 2}),
    ("an unknown argument", "add", {"a": 1, "b": 2, "c": 3}),
    ("a string where the schema says integer", "add", {"a": "one", "b": 2}),
    ("a above the maximum of 100", "add", {"a": 1000, "b": 2}),
    ("a value holding NaN", "reading", {}),
    ("a value that breaks its own output schema", "liar", {}),
]


async def main() -> None:
    async with Client(server) as client:
        for label, name, args in CASES:
            try:
                result = await client.call_tool(name, args, raise_on_error=False)
            except Exception as error:  # the client itself refused what it received
                print(json.dumps({"case": label, "outcome": "error", "shown": str(error).splitlines()[0]}))
                continue
            if result.is_error:
                text = " ".join(block.text for block in result.content if hasattr(block, "text"))
                print(json.dumps({"case": label, "outcome": "error", "shown": text.splitlines()[0] if text else ""}))
            elif result.structured_content is not None:
                shown = json.dumps(result.structured_content, allow_nan=True)
                print(json.dumps({"case": label, "outcome": "success", "shown": shown}))
            else:
                text = " ".join(block.text for block in result.content if hasattr(block, "text"))
                print(json.dumps({"case": label, "outcome": "success", "shown": text}))


asyncio.run(main())
