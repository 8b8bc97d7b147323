"""A FastMCP server over stdio, with a tool of each shape toolprism's client must import.

- weather: a typed (pydantic) value, object-rooted outputSchema; a title, hints and icons
  (one whose address is a script);
- double: an int, advertised wrapped with `x-fastmcp-wrap-result`;
- odd: an outputSchema beyond toolprism's validated subset (a look-ahead pattern); a title
  blank in its first 200 characters, an icon whose media type is not one;
- fail: raises ToolError, so the result has isError; hints that contradict each other;
- unlock: adds the tool `bonus` and tells the client the list changed.
"""

import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from pydantic import BaseModel

server = FastMCP("fastmcp-peer")


class Weather(BaseModel):
    city: str
    celsius: int


@server.tool(
    title="City weather",
    annotations={"readOnlyHint": True, "openWorldHint": True},
    icons=[
        mcp_types.Icon(src="https://example.com/sun.png", mimeType="image/png", sizes=["48x48"]),
        mcp_types.Icon(src="javascript:alert(1)"),
    ],
)
def weather(city: str) -> Weather:
    """The weather in a city."""
    return Weather(city=city, celsius=len(city))


@server.tool
def double(n: int) -> int:
    """Twice n."""
    return n * 2


@server.tool(
    output_schema={"type": "object", "properties": {"s": {"type": "string", "pattern": "^(?=x)"}}},
    title=" " * 200 + "x",
    icons=[mcp_types.Icon(src="https://example.com/odd.png", mimeType="not a media type")],
)
def odd() -> dict:
    """A schema with a look-ahead."""
    return {"s": "xyz"}


@server.tool(annotations={"readOnlyHint": True, "destructiveHint": True})
def fail() -> str:
    """Always fails."""
    raise ToolError("quota exceeded")


def bonus() -> str:
    """Registered late."""
    return "bonus!"


@server.tool
async def unlock(ctx: Context) -> str:
    """Adds the tool `bonus`."""
    server.add_tool(bonus)
    await ctx.send_notification(mcp_types.ToolListChangedNotification())
    return "unlocked"


if __name__ == "__main__":
    server.run(show_banner=False)
