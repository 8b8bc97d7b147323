//! Three replicas of `mcp_server --http --stateless` behind a real load balancer (HAProxy, from
//! Debian's packages: `scripts/haproxy`), keeping retained output and task records in S3 (moto's
//! S3-compatible server, from PyPI: `scripts/s3-server`) through `object_store`, and a shared
//! key for calls waiting on input. Everything listens on loopback and is started here; the
//! scripts install what they run on first use.

use std::fmt::Write as _;
use std::io::{BufRead as _, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A child process, killed when dropped.
struct Process {
    child: Child,
    /// Held open: the S3 server ends when its stdin closes (if this test dies, so does it).
    _stdin: Option<ChildStdin>,
}

impl Process {
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scripts")
        .join(name)
}

/// The first line `child` prints.
fn first_line(child: &mut Child) -> String {
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("piped"))
        .read_line(&mut line)
        .expect("a first line");
    line
}

/// The S3 server, with `bucket` made, and where it is.
fn start_s3(bucket: &str) -> (Process, Value) {
    let mut child = Command::new(script("s3-server"))
        .arg(bucket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("scripts/s3-server starts");
    let stdin = child.stdin.take();
    let line = first_line(&mut child);
    let s3: Value = serde_json::from_str(&line).expect("one JSON line");
    (
        Process {
            child,
            _stdin: stdin,
        },
        s3,
    )
}

/// One replica serving `root` statelessly on a port of its choosing, its output and tasks in
/// `s3`'s `bucket`, sealing calls that wait for input with the key in `key_file`; its URL and
/// process id.
fn start_replica(s3: &Value, bucket: &str, root: &Path, key_file: &Path) -> (Process, String, u32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp_server"))
        .args([
            "--http",
            "127.0.0.1:0",
            "--stateless",
            "--max-lines",
            "5",
            "--demo",
        ])
        .args(["--store", &format!("s3://{bucket}/replicas")])
        .arg("--state-key-file")
        .arg(key_file)
        .arg("--root")
        .arg(root)
        .env("AWS_ENDPOINT", s3["endpoint"].as_str().unwrap())
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_REGION", s3["region"].as_str().unwrap())
        .env("AWS_ACCESS_KEY_ID", s3["access_key_id"].as_str().unwrap())
        .env(
            "AWS_SECRET_ACCESS_KEY",
            s3["secret_access_key"].as_str().unwrap(),
        )
        .stdout(Stdio::piped())
        .spawn()
        .expect("mcp_server starts");
    let line = first_line(&mut child);
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .expect("the server says where it listens")
        .to_owned();
    let pid = child.id();
    (
        Process {
            child,
            _stdin: None,
        },
        url,
        pid,
    )
}

/// HAProxy on a free loopback port, round robin over `replicas` (health-checked every 200 ms,
/// a connection refused tried on another), and the balanced endpoint's URL.
fn start_balancer(replicas: &[&str], dir: &Path) -> (Process, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut servers = String::new();
    for (index, url) in replicas.iter().enumerate() {
        let address = url
            .strip_prefix("http://")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .unwrap();
        writeln!(servers, "    server replica{index} {address}").unwrap();
    }
    let config = format!(
        "global
    maxconn 512
    nbthread 1

defaults
    mode http
    timeout connect 1s
    timeout client 30s
    timeout server 30s
    timeout check 1s
    retries 3
    retry-on conn-failure
    option redispatch 1

frontend mcp
    bind 127.0.0.1:{port}
    default_backend replicas

backend replicas
    balance roundrobin
    option httpchk GET /
    http-check expect rstatus ^[234]
    default-server check inter 200ms fall 1 rise 1
{servers}"
    );
    let file = dir.join("haproxy.cfg");
    std::fs::write(&file, config).unwrap();
    let child = Command::new(script("haproxy"))
        .arg("-db")
        .arg("-f")
        .arg(&file)
        .stdout(Stdio::null())
        .spawn()
        .expect("scripts/haproxy starts");
    // Installing HAProxy on first use takes a while: wait for the port, at most two minutes.
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "HAProxy did not listen"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (
        Process {
            child,
            _stdin: None,
        },
        format!("http://127.0.0.1:{port}/mcp"),
    )
}

/// One stateless MCP request (protocol 2026-07-28, from a client that answers forms): the HTTP
/// status and the JSON-RPC body.
async fn request(http: &reqwest::Client, url: &str, method: &str, params: Value) -> (u16, Value) {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    });
    let mut request = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    // What the request names (a tool, a resource) goes in a header too.
    let named = params.get("name").or_else(|| params.get("uri"));
    if let Some(name) = named.and_then(Value::as_str) {
        request = request.header("mcp-name", name);
    }
    let response = request
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string())
        .send()
        .await
        .expect("the endpoint answers (an error status at worst)");
    let status = response.status().as_u16();
    let body = response.bytes().await.unwrap_or_default();
    (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

async fn call(http: &reqwest::Client, url: &str, tool: &str, arguments: Value) -> (u16, Value) {
    request(
        http,
        url,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    )
    .await
}

/// The `toolprism://output/…` URI a bounded result names.
fn retained_uri(result: &Value) -> String {
    let text = result["result"]["content"][0]["text"].as_str().unwrap();
    let start = text
        .find("toolprism://output/")
        .expect("output was retained");
    text[start..]
        .split(|c: char| c.is_whitespace() || c == ';')
        .next()
        .unwrap()
        .to_owned()
}

async fn read_resource(http: &reqwest::Client, url: &str, uri: &str) -> String {
    let (status, body) = request(http, url, "resources/read", json!({"uri": uri})).await;
    assert_eq!(status, 200, "{body}");
    body["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{body}"))
        .to_owned()
}

/// `greet` asks through `first`, whose sealed state `second` opens with the answer.
async fn greet_across(http: &reqwest::Client, first: &str, second: &str) {
    let (status, asked) = call(http, first, "greet", json!({})).await;
    assert_eq!(status, 200, "{asked}");
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    assert!(
        asked["result"]["inputRequests"]["visitor"].is_object(),
        "{asked}"
    );
    let answered = json!({
        "name": "greet",
        "arguments": {},
        "inputResponses": {"visitor": {"action": "accept", "content": {"name": "Ada", "times": 2}}},
        "requestState": asked["result"]["requestState"],
    });
    let (status, greeted) = request(http, second, "tools/call", answered).await;
    assert_eq!(status, 200, "{greeted}");
    assert_eq!(
        greeted["result"]["structuredContent"],
        json!("Hello, Ada! Hello, Ada!"),
        "{greeted}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_behind_a_balancer_share_output_in_s3_and_survive_one_killed() {
    let bucket = "toolprism-replicas";
    let (_s3, s3) = start_s3(bucket);
    let workspace = tempfile::tempdir().unwrap();
    let rows = (1..=500).fold(String::new(), |mut rows, row| {
        writeln!(rows, "row {row}").unwrap();
        rows
    });
    std::fs::write(workspace.path().join("big.txt"), rows).unwrap();
    let key_file = workspace.path().join("state-key");
    std::fs::write(&key_file, [7_u8; 32]).unwrap();
    let mut replicas: Vec<_> = (0..3)
        .map(|_| start_replica(&s3, bucket, workspace.path(), &key_file))
        .collect();
    let urls: Vec<String> = replicas.iter().map(|(_, url, _)| url.clone()).collect();
    let http = reqwest::Client::new();

    // Output spilled through one replica is read whole through each of the others.
    let (status, spilled) = call(&http, &urls[1], "read", json!({"path": "big.txt"})).await;
    assert_eq!(status, 200, "{spilled}");
    let uri = retained_uri(&spilled);
    for url in [&urls[0], &urls[2]] {
        let full = read_resource(&http, url, &uri).await;
        assert!(
            full.contains("row 1\n") && full.contains("row 500"),
            "{full}"
        );
    }

    // A call that asks the user, sealed by one replica and resumed by another (the key shared).
    greet_across(&http, &urls[0], &urls[2]).await;

    let (_balancer, balanced) = start_balancer(
        &urls.iter().map(String::as_str).collect::<Vec<_>>(),
        workspace.path(),
    );

    // A wave of calls through the balancer; each says which replica runs it, then waits for
    // the test to let it finish.
    let calls = 12;
    let mut wave = tokio::task::JoinSet::new();
    for n in 0..calls {
        let (http, balanced) = (http.clone(), balanced.clone());
        wave.spawn(async move {
            let command = format!(
                "echo $PPID > started-{n}; while [ ! -e released ]; do sleep 0.05; done; echo done-{n}"
            );
            (
                n,
                call(&http, &balanced, "bash", json!({"command": command})).await,
            )
        });
    }
    // Every call is running (on some replica) before one replica is killed: at most a minute.
    let started = Instant::now();
    let running_on = |n: usize| -> Option<u32> {
        std::fs::read_to_string(workspace.path().join(format!("started-{n}")))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    while (0..calls).any(|n| running_on(n).is_none()) {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "calls never ran"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let killed_pid = replicas[1].2;
    let on_killed: Vec<usize> = (0..calls)
        .filter(|&n| running_on(n) == Some(killed_pid))
        .collect();
    assert!(
        !on_killed.is_empty(),
        "round robin sent some calls to every replica"
    );
    replicas[1].0.kill();
    std::fs::write(workspace.path().join("released"), "").unwrap();

    // The killed replica's calls in flight fail, as errors; every other call completes.
    while let Some(joined) = wave.join_next().await {
        let (n, (status, body)) = joined.unwrap();
        if on_killed.contains(&n) {
            assert!(
                status >= 500,
                "call {n} on the killed replica: {status} {body}"
            );
        } else {
            assert_eq!(status, 200, "call {n}: {body}");
            let out = &body["result"]["structuredContent"]["stdout"];
            assert_eq!(out, &json!(format!("done-{n}\n")), "call {n}: {body}");
        }
    }

    // After the kill, no call fails: the balancer sends them to the two left.
    for n in 0..calls {
        let command = format!("echo after-{n}");
        let (status, body) = call(&http, &balanced, "bash", json!({"command": command})).await;
        assert_eq!(status, 200, "call {n} after the kill: {body}");
    }
    // Nothing retained is lost: what the killed replica spilled is still read whole.
    let full = read_resource(&http, &balanced, &uri).await;
    assert!(full.contains("row 500"), "{full}");
}
