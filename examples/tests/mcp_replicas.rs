//! Three replicas of `mcp_server --http --stateless` behind a real load balancer (HAProxy, from
//! Debian's packages: `scripts/haproxy`), keeping retained output and task records in S3 (moto's
//! S3-compatible server, from PyPI: `scripts/s3-server`) through `object_store`, and a shared
//! key for calls waiting on input. Everything listens on loopback and is started here; the
//! scripts install what they run on first use.

mod support;

use std::fmt::Write as _;
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Peer, Process, retained_uri, s3_env, script, start_s3, start_server};

/// One replica serving `root` statelessly on a port of its choosing, its output and tasks in
/// `s3`'s `bucket`, sealing calls that wait for input with the key in `key_file`; its URL and
/// process id.
fn start_replica(s3: &Value, bucket: &str, root: &Path, key_file: &Path) -> (Process, String, u32) {
    let (process, url) = start_server(|command| {
        command
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
            .arg(root);
        s3_env(command, s3);
    });
    let pid = process.child.id();
    (process, url, pid)
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
        Process { child, stdin: None },
        format!("http://127.0.0.1:{port}/mcp"),
    )
}

/// A stateless request of a client that answers forms: its status and JSON-RPC body.
async fn request(http: &reqwest::Client, url: &str, method: &str, params: Value) -> (u16, Value) {
    let peer = Peer {
        http: http.clone(),
        ..Peer::new(None)
    };
    let answer = peer.request(url, method, params).await;
    (answer.status, answer.body)
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
