"""A server on the official Python SDK's MCPServer, over stdio: a typed tool and a scalar."""

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

server = MCPServer("sdk-peer")


class Sum(BaseModel):
    total: int
    terms: int


@server.tool()
def add(a: int, b: int) -> Sum:
    """Adds two integers."""
    return Sum(total=a + b, terms=2)


@server.tool()
def shout(word: str) -> str:
    """Upper-cases a word."""
    return word.upper()


if __name__ == "__main__":
    server.run()
