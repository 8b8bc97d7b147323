"""Drives a toolprism MCP server over stdio with the official Python SDK's ClientSession.

Usage: drive_server.py legacy|current SERVER [ARGS...]

Prints one JSON report of what the SDK saw. The SDK itself validates every successful
result's structuredContent against the tool's outputSchema (and raises if it does not match).
"""

import asyncio
import json
import re
import sys

import mcp_types as types
from mcp import ClientSession
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError


async def answer_forms(asked: list):
    """An elicitation callback that answers every form the same way, and keeps what it saw."""

    async def on_elicit(context: ClientRequestContext, params: types.ElicitRequestParams):
        asked.append({"message": params.message, "schema": getattr(params, "requested_schema", None)})
        return types.ElicitResult(action="accept", content={"name": "Ada", "times": 2})

    return on_elicit


async def call_answering(session: ClientSession, generation: str, name: str, args: dict):
    """A call whose questions the session answers: live at 2025-11-25; at 2026-07-28 by
    retrying with the answers and the sealed requestState, as SEP-2322 says (the loop the
    high-level mcp.Client runs for you)."""
    if generation == "legacy":
        return await session.call_tool(name, args), 0
    result = await session.call_tool(name, args, allow_input_required=True)
    rounds = 0
    while isinstance(result, types.InputRequiredResult):
        rounds += 1
        responses = {}
        for key, request in (result.input_requests or {}).items():
            context = ClientRequestContext(session=session, request_id=key)
            responses[key] = await session.dispatch_input_request(context, request)
        result = await session.call_tool(
            name,
            args,
            input_responses=responses,
            request_state=result.request_state,
            allow_input_required=True,
        )
    return result, rounds


async def main(generation: str, command: list[str]) -> dict:
    report: dict = {"generation": generation}
    params = StdioServerParameters(command=command[0], args=command[1:])
    asked: list = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, elicitation_callback=await answer_forms(asked)) as session:
            if generation == "legacy":
                result = await session.initialize()
                report["server"] = result.server_info.name
            else:
                result = await session.discover()
                report["supported_versions"] = result.supported_versions

            tools = (await session.list_tools()).tools
            report["tools"] = [tool.name for tool in tools]
            report["output_schemas"] = {tool.name: tool.output_schema for tool in tools}
            # What each tool says about itself, as the SDK's own types parsed it.
            report["about"] = {
                tool.name: {
                    "title": tool.title,
                    "annotations": tool.annotations.model_dump(by_alias=True, exclude_none=True)
                    if tool.annotations
                    else None,
                    "description": tool.description,
                }
                for tool in tools
            }

            ok = await session.call_tool("read", {"path": "small.txt"})
            report["read"] = {
                "is_error": ok.is_error,
                "text": [block.text for block in ok.content if block.type == "text"],
                "structured": ok.structured_content,
                "meta": ok.meta,
            }

            bad = await session.call_tool("read", {"path": 5})
            report["invalid"] = {
                "is_error": bad.is_error,
                "text": [block.text for block in bad.content if block.type == "text"],
                "structured": bad.structured_content,
                "meta": bad.meta,
            }

            try:
                await session.call_tool("no_such_tool", {})
                report["unknown"] = None
            except MCPError as error:
                report["unknown"] = {"code": error.error.code, "message": error.error.message}

            progress: list = []

            async def on_progress(done, total, message):
                progress.append([done, total, message])

            counted = await session.call_tool("count_to", {"to": 4}, progress_callback=on_progress)
            report["count_to"] = {"structured": counted.structured_content, "progress": progress}

            greeted, rounds = await call_answering(session, generation, "greet", {})
            report["greet"] = {
                "text": [block.text for block in greeted.content if block.type == "text"],
                "asked": asked,
                "rounds": rounds,
            }

            big = await session.call_tool("read", {"path": "big.txt"})
            text = "\n".join(block.text for block in big.content if block.type == "text")
            match = re.search(r"toolprism://output/[A-Za-z0-9_-]+", text)
            report["spilled"] = {"uri": match.group(0) if match else None, "shown_bytes": len(text)}
            if match:
                contents = (await session.read_resource(match.group(0))).contents
                report["spilled"]["read"] = [getattr(item, "text", None) for item in contents]
    return report


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2:]))))
