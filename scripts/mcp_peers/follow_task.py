"""Follows a toolprism MCP server's task from the official Python SDK's side (stdio, 2026-07-28).

Usage: follow_task.py SERVER [ARGS...]

The SDK (mcp 2.3) ships no tasks client; the extension (io.modelcontextprotocol/tasks, SEP-2663)
is declared with its generic client-extension hooks, and tasks/get and tasks/update go through
ClientSession.send_request with models of the extension's wire shapes, which the SDK validates.
Calls `greet` (a form, then a greeting): the call is answered with a task, the task shows the
form as an input request, the SDK's elicitation callback answers it, and the task completes.
Prints one JSON report.
"""

import asyncio
import json
import sys
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp import ClientSession
from mcp.client.extension import ClientExtension, NotificationBinding, ResultClaim
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import StdioServerParameters, stdio_client
from pydantic import ConfigDict, Field

TASKS = "io.modelcontextprotocol/tasks"
TERMINAL = {"completed", "failed", "cancelled"}


class TaskFields(types.Result):
    model_config = ConfigDict(populate_by_name=True)
    task_id: str = Field(alias="taskId")
    status: Literal["working", "input_required", "completed", "failed", "cancelled"]
    created_at: str = Field(alias="createdAt")
    last_updated_at: str = Field(alias="lastUpdatedAt")
    ttl_ms: float | None = Field(default=None, alias="ttlMs")
    poll_interval_ms: float | None = Field(default=None, alias="pollIntervalMs")


class CreateTaskResult(TaskFields):
    result_type: Literal["task"] = Field(alias="resultType")


class GetTaskResult(TaskFields):
    result_type: Literal["complete"] | None = Field(default=None, alias="resultType")
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = Field(default=None, alias="inputRequests")


class TaskIdParams(types.RequestParams):
    task_id: str = Field(serialization_alias="taskId")


class UpdateParams(types.RequestParams):
    task_id: str = Field(serialization_alias="taskId")
    input_responses: dict[str, Any] = Field(serialization_alias="inputResponses")


class GetTask(types.Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskIdParams


class UpdateTask(types.Request[UpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: UpdateParams


class TasksExtension(ClientExtension):
    """Declares the tasks extension; a tools/call answered with a task is handed back as is."""

    identifier = TASKS

    def __init__(self, on_status):
        self._on_status = on_status

    def claims(self):
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=self._keep)]

    def notifications(self):
        return [
            NotificationBinding(
                method="notifications/tasks", params_type=GetTaskResult, handler=self._on_status
            )
        ]

    async def _keep(self, created, _context):
        return created


async def on_elicit(context: ClientRequestContext, params: types.ElicitRequestParams):
    return types.ElicitResult(action="accept", content={"name": "Grace", "times": 1})


async def follow(session: ClientSession, task_id: str, seen: list) -> GetTaskResult:
    """Polls the task to its end, answering what it asks (at most 10 s)."""
    with anyio.fail_after(10):
        while True:
            task = await session.send_request(
                GetTask(params=TaskIdParams(task_id=task_id)), GetTaskResult
            )
            seen.append({"status": task.status, "asks": sorted((task.input_requests or {}).keys())})
            if task.status in TERMINAL:
                return task
            if task.status == "input_required" and task.input_requests:
                answers = {}
                for key, raw in task.input_requests.items():
                    request = types.ElicitRequest.model_validate(raw)
                    context = ClientRequestContext(session=session, request_id=key)
                    answer = await session.dispatch_input_request(context, request)
                    answers[key] = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
                await session.send_request(
                    UpdateTask(params=UpdateParams(task_id=task_id, input_responses=answers)),
                    types.Result,
                )
            await anyio.sleep((task.poll_interval_ms or 500) / 1000)


async def main(command: list[str]) -> dict:
    told: list = []

    async def on_status(params: GetTaskResult):
        told.append(params.status)

    extension = TasksExtension(on_status)
    params = StdioServerParameters(command=command[0], args=command[1:])
    report: dict = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(
            read,
            write,
            elicitation_callback=on_elicit,
            extensions={extension.identifier: extension.settings()},
            result_claims={extension.identifier: extension.claims()},
            notification_bindings=extension.notifications(),
        ) as session:
            await session.discover()
            created = await session.call_tool("greet", {}, allow_claimed=True)
            report["created"] = created.model_dump(by_alias=True, exclude_none=True)
            seen: list = []
            final = await follow(session, created.task_id, seen)
            report["seen"] = seen
            report["final"] = final.model_dump(by_alias=True, exclude_none=True)
            # A plain tool is still answered at once.
            counted = await session.call_tool("count_to", {"to": 2})
            report["count_to"] = counted.structured_content
            # The last notification may trail the result polled: wait for it (at most 2 s).
            with anyio.move_on_after(2):
                while "completed" not in told:
                    await anyio.sleep(0.02)
    report["told"] = told
    return report


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1:]))))
