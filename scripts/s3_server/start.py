"""moto's S3 server on 127.0.0.1, on a port the OS picks; run by scripts/s3-server.

Creates the buckets named as arguments, prints one JSON line
{"endpoint", "region", "access_key_id", "secret_access_key"} on stdout, then serves until
SIGTERM/SIGINT/SIGKILL, or until stdin closes when stdin is a pipe or a socket (a parent that
spawned it with a piped stdin and dies takes it along). Nothing else goes to stdout; request
logs are off, errors go to stderr.
"""

import json
import logging
import os
import signal
import stat
import sys
import threading
import urllib.error
import urllib.request

REGION = "us-east-1"
# moto accepts any credentials; these are what the clients sign with.
ACCESS_KEY_ID = "toolprism-test"
SECRET_ACCESS_KEY = "toolprism-test-secret"

os.environ.setdefault("AWS_DEFAULT_REGION", REGION)
os.environ.setdefault("AWS_ACCESS_KEY_ID", ACCESS_KEY_ID)
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", SECRET_ACCESS_KEY)

from moto.server import ThreadedMotoServer  # noqa: E402

logging.getLogger("werkzeug").setLevel(logging.ERROR)


def stdin_is_pipe() -> bool:
    try:
        mode = os.fstat(0).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def main() -> None:
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"

    for bucket in sys.argv[1:]:
        # Path-style, unsigned: moto routes unsigned requests to S3 and creates it in us-east-1.
        request = urllib.request.Request(f"{endpoint}/{bucket}", method="PUT", data=b"")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                response.read()
        except urllib.error.HTTPError as error:
            body = error.read().decode(errors="replace")
            sys.exit(f"s3-server: cannot create bucket {bucket!r}: HTTP {error.code} {body}")

    line = {
        "endpoint": endpoint,
        "region": REGION,
        "access_key_id": ACCESS_KEY_ID,
        "secret_access_key": SECRET_ACCESS_KEY,
    }
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()

    if stdin_is_pipe():

        def watch_stdin() -> None:
            while os.read(0, 65536):
                pass
            stop.set()

        threading.Thread(target=watch_stdin, daemon=True).start()

    stop.wait()
    # Daemon threads (the server's, the stdin watcher) end with the process.
    os._exit(0)


if __name__ == "__main__":
    main()
