"""Validates lowered wire JSON against the providers' own SDK types.

Input: a JSON file holding a list of {"name": ..., "type": <key of TYPES>, "value": ...}.
Output: one JSON object on stdout, {"checked": n, "failures": [{"name", "type", "error"}]};
exit status 1 if anything failed.

TypedDict params (openai, anthropic) ignore unknown keys when validated, so after validating,
every key the input has must also be in the validated result: an unknown key is a failure
too. The google-genai models forbid unknown fields themselves.
"""

import json
import sys
import typing

import typing_extensions

from pydantic import TypeAdapter, ValidationError

from openai.types.chat import ChatCompletionFunctionToolParam, ChatCompletionMessageParam
from openai.types.chat.completion_create_params import (
    CompletionCreateParamsNonStreaming,
    CompletionCreateParamsStreaming,
)
from openai.types.responses import FunctionToolParam, ResponseInputItemParam
from openai.types.responses.response_create_params import (
    ResponseCreateParamsNonStreaming,
    ResponseCreateParamsStreaming,
)
from anthropic.types import MessageParam, ToolParam, ToolResultBlockParam
from anthropic.types.message_create_params import (
    MessageCreateParamsNonStreaming,
    MessageCreateParamsStreaming,
)
from google.genai import types as genai

TYPES = {
    "openai.chat.tool": ChatCompletionFunctionToolParam,
    "openai.chat.message": ChatCompletionMessageParam,
    "openai.responses.tool": FunctionToolParam,
    "openai.responses.input_item": ResponseInputItemParam,
    "anthropic.tool": ToolParam,
    "anthropic.tool_result": ToolResultBlockParam,
    "anthropic.message": MessageParam,
    "gemini.tool": genai.Tool,
    "gemini.part": genai.Part,
    # Whole requests: what a host sends after reading a turn back.
    "openai.chat.request": CompletionCreateParamsNonStreaming,
    "openai.responses.request": ResponseCreateParamsNonStreaming,
    "anthropic.request": MessageCreateParamsNonStreaming,
    "openai.chat.stream_request": CompletionCreateParamsStreaming,
    "openai.responses.stream_request": ResponseCreateParamsStreaming,
    "anthropic.stream_request": MessageCreateParamsStreaming,
    "gemini.content": genai.Content,
}

# A `generateContent` body has no SDK type of its own (the SDK builds it from its
# parameters): its parts are checked with the SDK's models, and no other key is allowed.
GEMINI_REQUEST_PARTS = {
    "contents": genai.Content,
    "tools": genai.Tool,
    "systemInstruction": genai.Content,
    "toolConfig": genai.ToolConfig,
}


def check_gemini_request(value):
    errors = []
    for key, items in value.items():
        kind = GEMINI_REQUEST_PARTS.get(key)
        if kind is None:
            errors.append(f"$.{key}: not a field of a generateContent request")
            continue
        for index, item in enumerate(items if isinstance(items, list) else [items]):
            try:
                TypeAdapter(kind).validate_python(item)
            except ValidationError as error:
                errors.append(f"$.{key}[{index}]: {error}")
    return "; ".join(errors) if errors else None


def materialize(value):
    """Lists for the lazy iterators pydantic returns for `Iterable[...]` (validating them)."""
    if isinstance(value, dict):
        return {key: materialize(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [materialize(item) for item in value]
    if hasattr(value, "model_dump"):
        return value
    if not isinstance(value, (str, bytes)) and hasattr(value, "__iter__"):
        return [materialize(item) for item in value]
    return value


def unknown_keys(given, validated, path="$"):
    if isinstance(given, dict) and isinstance(validated, dict):
        for key, item in given.items():
            if key not in validated:
                yield f"{path}.{key}: not a field of this type"
            else:
                yield from unknown_keys(item, validated[key], f"{path}.{key}")
    elif isinstance(given, list) and isinstance(validated, list):
        for index, (item, checked) in enumerate(zip(given, validated)):
            yield from unknown_keys(item, checked, f"{path}[{index}]")


def check(case):
    if case["type"] == "gemini.request":
        return check_gemini_request(case["value"])
    kind = TYPES[case["type"]]
    adapter = TypeAdapter(kind)
    try:
        validated = materialize(adapter.validate_python(case["value"]))
    except ValidationError as error:
        return str(error)
    if typing_extensions.is_typeddict(kind) or typing.get_origin(kind) is not None:
        unknown = list(unknown_keys(case["value"], validated))
        if unknown:
            return "; ".join(unknown)
    return None


def main():
    with open(sys.argv[1], encoding="utf-8") as file:
        cases = json.load(file)
    failures = []
    for case in cases:
        error = check(case)
        if error is not None:
            failures.append({"name": case["name"], "type": case["type"], "error": error})
    print(json.dumps({"checked": len(cases), "failures": failures}))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
