"""A 2025-11-25 MCP server over stdio that takes 12 s to start and answers every method but
its own with "method not found": what an older server looks like to a client on a first
`npx` run, while its package installs. No dependencies."""

import json
import os
import sys
import time

# Each start is written down, for a test to count.
if "SLOW_SERVER_STARTS" in os.environ:
    with open(os.environ["SLOW_SERVER_STARTS"], "a") as starts:
        starts.write("started\n")
time.sleep(12)
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message.get("method")
    if method == "initialize":
        result = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "slow-legacy", "version": "0"},
        }
    elif method == "tools/list":
        result = {"tools": [{"name": "hello", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "hello"}], "isError": False}
    else:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
