"""An OTLP/HTTP receiver for the tests; run by scripts/otel-sink.

    sink.py --out FILE [--http-port N] [--port-file PATH]

Serves OTLP/HTTP (POST /v1/traces, /v1/metrics, /v1/logs; protobuf, the OTLP default, or the
OTLP/JSON encoding, whose trace and span ids are hex; gzip-compressed or not) on 127.0.0.1
only, on --http-port (0, the default: a port the OS picks). The requests are decoded with the
official `opentelemetry-proto` bindings; no gRPC endpoint is served. Once listening it writes the port number to --port-file, through a temporary name
renamed into place, so a reader never sees a partial file; without --port-file the port is
printed as the only line on stdout.

Every export request received appends one line to FILE, flushed before the answer goes out:

    {"signal": "traces"|"metrics"|"logs", "body": MessageToDict(request)}

MessageToDict gives camelCase names (resourceSpans, startTimeUnixNano, …), 64-bit integers as
strings and bytes as base64; as a convenience, every `traceId`, `spanId` and `parentSpanId`
(spans, span links, log records, exemplars) is rewritten as lowercase hex, as a W3C
traceparent spells it. An id left empty is absent, as MessageToDict leaves it.

The answer to an accepted request is an empty Export*ServiceResponse (status 200), in the
encoding of the request. A body over 16 MiB (as sent or once decompressed) gets 413, a body
that does not decode 400, another content type 415, another path 404. Errors answer a
google.rpc.Status, as OTLP/HTTP asks.

Exits 0 on SIGTERM or SIGINT, or when stdin closes if stdin is a pipe or a socket (a parent
that spawned it with a piped stdin and dies takes it along). Request logs are off; errors go
to stderr.
"""

import argparse
import base64
import json
import os
import signal
import stat
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

MAX_BODY = 16 * 1024 * 1024

SIGNALS = {
    "/v1/traces": ("traces", ExportTraceServiceRequest, ExportTraceServiceResponse),
    "/v1/metrics": ("metrics", ExportMetricsServiceRequest, ExportMetricsServiceResponse),
    "/v1/logs": ("logs", ExportLogsServiceRequest, ExportLogsServiceResponse),
}

ID_KEYS = frozenset(("traceId", "spanId", "parentSpanId"))

PROTOBUF = "application/x-protobuf"
JSON = "application/json"


class TooLarge(Exception):
    pass


class BadRequest(Exception):
    pass


def hex_ids(node):
    """Rewrites, in place, the base64 trace and span ids of a MessageToDict tree as hex."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ID_KEYS and isinstance(value, str):
                node[key] = base64.b64decode(value).hex()
            else:
                hex_ids(value)
    elif isinstance(node, list):
        for item in node:
            hex_ids(item)


def base64_ids(node):
    """Rewrites, in place, the hex trace and span ids of an OTLP/JSON tree as base64.

    OTLP/JSON spells these ids in hex, where the protobuf JSON mapping that json_format.Parse
    follows expects base64 for every bytes field."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ID_KEYS and isinstance(value, str):
                try:
                    node[key] = base64.b64encode(bytes.fromhex(value)).decode("ascii")
                except ValueError:
                    raise BadRequest(f"{key} {value!r} is not hex") from None
            else:
                base64_ids(value)
    elif isinstance(node, list):
        for item in node:
            base64_ids(item)


def rpc_status(code: int, message: str) -> bytes:
    """A google.rpc.Status {code, message}, encoded by hand (two fields, no dependency)."""

    def varint(n: int) -> bytes:
        out = bytearray()
        while True:
            byte = n & 0x7F
            n >>= 7
            if n:
                out.append(byte | 0x80)
            else:
                out.append(byte)
                return bytes(out)

    text = message.encode()
    return b"\x08" + varint(code) + b"\x12" + varint(len(text)) + text


def inflate(body: bytes, encoding: str) -> bytes:
    """Decompresses a gzip or deflate body, refusing one that grows past MAX_BODY."""
    wbits = {"gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}.get(encoding)
    if wbits is None:
        raise BadRequest(f"unsupported Content-Encoding {encoding!r}")
    decompressor = zlib.decompressobj(wbits)
    try:
        out = decompressor.decompress(body, MAX_BODY + 1)
    except zlib.error as error:
        raise BadRequest(f"cannot decompress the body: {error}") from None
    if len(out) > MAX_BODY or decompressor.unconsumed_tail:
        raise TooLarge()
    if not decompressor.eof:
        raise BadRequest("truncated compressed body")
    return out


class Sink:
    def __init__(self, out_path: str):
        self.out = open(out_path, "a", encoding="utf-8")
        self.lock = threading.Lock()

    def record(self, signal_name: str, request) -> None:
        body = json_format.MessageToDict(request, preserving_proto_field_name=False)
        hex_ids(body)
        line = json.dumps({"signal": signal_name, "body": body}, separators=(",", ":"))
        with self.lock:
            self.out.write(line + "\n")
            self.out.flush()

    def close(self) -> None:
        with self.lock:
            self.out.close()


def make_handler(sink: Sink):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "toolprism-otel-sink"
        sys_version = ""

        def log_message(self, format, *args):  # noqa: A002 - the base class's name
            pass

        def answer(self, status: int, content_type: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)

        def fail(self, status: int, grpc_code: int, message: str, as_json: bool) -> None:
            if as_json:
                body = json.dumps({"code": grpc_code, "message": message}).encode()
                self.answer(status, JSON, body)
            else:
                self.answer(status, PROTOBUF, rpc_status(grpc_code, message))

        def read_body(self) -> bytes:
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                return self.read_chunked()
            length = self.headers.get("Content-Length")
            if length is None:
                self.close_connection = True
                raise BadRequest("no Content-Length")
            try:
                size = int(length)
            except ValueError:
                self.close_connection = True
                raise BadRequest("bad Content-Length") from None
            if size < 0:
                self.close_connection = True
                raise BadRequest("bad Content-Length")
            if size > MAX_BODY:
                # The body is left unread: the connection cannot be reused.
                self.close_connection = True
                raise TooLarge()
            body = self.rfile.read(size)
            if len(body) != size:
                self.close_connection = True
                raise BadRequest("truncated body")
            return body

        def read_chunked(self) -> bytes:
            body = bytearray()
            while True:
                line = self.rfile.readline(1024)
                try:
                    size = int(line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    self.close_connection = True
                    raise BadRequest("bad chunk size") from None
                if size == 0:
                    # Trailers, up to the empty line.
                    while self.rfile.readline(8192) not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(body)
                if len(body) + size > MAX_BODY:
                    self.close_connection = True
                    raise TooLarge()
                chunk = self.rfile.read(size)
                if len(chunk) != size:
                    self.close_connection = True
                    raise BadRequest("truncated chunk")
                body += chunk
                self.rfile.readline(8)

        def do_POST(self):  # noqa: N802 - the base class's name
            content_type = self.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
            as_json = content_type == JSON
            route = SIGNALS.get(self.path.split("?", 1)[0])
            if route is None:
                self.close_connection = True
                self.fail(404, 5, f"no OTLP signal at {self.path}", as_json)
                return
            try:
                body = self.read_body()
                if content_type not in (PROTOBUF, JSON):
                    self.fail(415, 3, f"unsupported Content-Type {content_type!r}", as_json)
                    return
                encoding = self.headers.get("Content-Encoding", "identity").strip().lower()
                if encoding not in ("", "identity"):
                    body = inflate(body, encoding)
                signal_name, request_type, response_type = route
                request = request_type()
                try:
                    if as_json:
                        tree = json.loads(body)
                        base64_ids(tree)
                        json_format.ParseDict(tree, request)
                    else:
                        request.ParseFromString(body)
                except (DecodeError, json_format.ParseError, ValueError) as error:
                    raise BadRequest(f"cannot decode the {signal_name} request: {error}") from None
            except TooLarge:
                self.fail(413, 8, f"body over {MAX_BODY} bytes", as_json)
                return
            except BadRequest as error:
                self.fail(400, 3, str(error), as_json)
                return
            sink.record(signal_name, request)
            if as_json:
                self.answer(200, JSON, json_format.MessageToJson(response_type()).encode())
            else:
                self.answer(200, PROTOBUF, response_type().SerializeToString())

    return Handler


def stdin_is_pipe() -> bool:
    try:
        mode = os.fstat(0).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def write_port_file(path: str, port: int) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    temporary = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    with open(temporary, "w", encoding="ascii") as file:
        file.write(f"{port}\n")
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)


def main() -> None:
    parser = argparse.ArgumentParser(description="OTLP/HTTP receiver writing JSON lines")
    parser.add_argument("--out", required=True, help="file to append one JSON line per request to")
    parser.add_argument("--http-port", type=int, default=0, help="port on 127.0.0.1; 0: any free")
    parser.add_argument("--port-file", help="where to write the port once listening")
    args = parser.parse_args()

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    sink = Sink(args.out)
    ThreadingHTTPServer.allow_reuse_address = True
    server = ThreadingHTTPServer(("127.0.0.1", args.http_port), make_handler(sink))
    server.daemon_threads = True
    port = server.server_address[1]
    serving = threading.Thread(target=server.serve_forever, name="otlp-http", daemon=True)
    serving.start()

    if args.port_file:
        write_port_file(args.port_file, port)
    else:
        print(port, flush=True)

    if stdin_is_pipe():

        def watch_stdin() -> None:
            while os.read(0, 4096):
                pass
            stop.set()

        threading.Thread(target=watch_stdin, name="stdin", daemon=True).start()

    # Waited on in short steps: a signal's handler then runs within half a second, whatever
    # the interpreter does with a wait that never times out.
    while not stop.wait(0.5):
        pass
    server.shutdown()
    server.server_close()
    sink.close()


if __name__ == "__main__":
    main()
