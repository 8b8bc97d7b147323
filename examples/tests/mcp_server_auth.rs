//! The `mcp_server` example on a network, tried as an attacker would: the real server over
//! loopback HTTP, tokens from a real authorization server (`scripts/oauth-server`), and two
//! callers — `alice`, who may run the shell, write files and fetch pages, and `mallory`, another
//! client who may only write files. Each attack is performed and shown refused.

mod support;

use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use support::{
    Peer, Process, free_port, retained_uri, s3_env, start_issuer, start_s3, start_server, token,
};

/// What `alice` is granted: every scope the coding tools need.
const ALICE_SCOPES: &str = "shell:run files:write web:fetch";
/// What `mallory` is granted.
const MALLORY_SCOPES: &str = "files:write";
/// The resource every replica serves, as clients would reach it behind a balancer.
const RESOURCE: &str = "http://mcp.example/mcp";

/// A workspace with a file too long for the model (read, it is retained).
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let rows = (1..=200).fold(String::new(), |mut rows, row| {
        rows.push_str("row ");
        rows.push_str(&row.to_string());
        rows.push('\n');
        rows
    });
    std::fs::write(dir.path().join("big.txt"), rows).unwrap();
    dir
}

/// `mcp_server` behind `issuer`, with the demo tools and Code Mode, bounding output to 5 lines.
fn server_behind(issuer: &str, root: &Path, extra: impl FnOnce(&mut Command)) -> (Process, String) {
    start_server(|command| {
        command
            .args([
                "--http",
                "127.0.0.1:0",
                "--max-lines",
                "5",
                "--demo",
                "--code-mode",
            ])
            .args(["--issuer", issuer, "--resource", RESOURCE])
            .arg("--root")
            .arg(root);
        extra(command);
    })
}

/// The JSON-RPC error of `answer`, with every occurrence of `named` (an id, a URI) made
/// `<named>`: what differs between two errors once what they name is set aside.
fn error_without(answer: &support::Answer, named: &str) -> String {
    assert_eq!(answer.status, 200, "{}", answer.body);
    let error = &answer.body["error"];
    assert!(error.is_object(), "an error: {}", answer.body);
    error.to_string().replace(named, "<named>")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outputs_and_tasks_are_their_callers_on_every_replica() {
    let (_issuer, issuer) = start_issuer(None);
    let bucket = "toolprism-attacks";
    let (_s3, s3) = start_s3(bucket);
    let root = workspace();
    let key_file = root.path().join("state-key");
    std::fs::write(&key_file, [9_u8; 32]).unwrap();
    let replica = || {
        server_behind(&issuer, root.path(), |command| {
            command
                .arg("--stateless")
                .args(["--store", &format!("s3://{bucket}/attacks")])
                .arg("--state-key-file")
                .arg(&key_file);
            s3_env(command, &s3);
        })
    };
    let ((_one, one), (_two, two)) = (replica(), replica());
    let alice = Peer::new(Some(token(&issuer, "alice", ALICE_SCOPES, RESOURCE).await));
    let mallory = Peer::new(Some(
        token(&issuer, "mallory", MALLORY_SCOPES, RESOURCE).await,
    ));

    outputs_stay_with_their_caller(&alice, &mallory, &one, &two).await;
    tasks_stay_with_their_caller(&alice, &mallory, &one, &two).await;
}

/// Mallory brackets Alice's call between two of its own, then tries the handles around its
/// own and Alice's: with 128 random bits, there is nothing around them to find. Even holding
/// Alice's URI, Mallory is answered as for one that names nothing, on either replica.
async fn outputs_stay_with_their_caller(alice: &Peer, mallory: &Peer, one: &str, two: &str) {
    // Mallory brackets Alice's call between two of its own, then tries the handles around
    // its own and Alice's: with 128 random bits, there is nothing around them to find.
    let read_big = json!({"path": "big.txt"});
    let before = retained_uri(&mallory.call(one, "read", read_big.clone()).await.body);
    let alices = retained_uri(&alice.call(one, "read", read_big.clone()).await.body);
    let after = retained_uri(&mallory.call(one, "read", read_big).await.body);
    let random = |uri: &str| u128::from_str_radix(uri.rsplit('-').next().unwrap(), 16).unwrap();
    let prefix = |uri: &str| uri.rsplit_once('-').unwrap().0.to_owned();
    for (a, b) in [(&before, &alices), (&alices, &after)] {
        assert!(random(a).abs_diff(random(b)) > 1 << 64, "{a} {b}");
    }
    let unknown = mallory
        .request(
            two,
            "resources/read",
            json!({"uri": format!("{}-0", prefix(&before))}),
        )
        .await;
    let unknown = error_without(&unknown, &format!("{}-0", prefix(&before)));
    for guess in [&before, &after, &alices] {
        for step in 1..=8_u128 {
            for value in [
                random(guess).wrapping_add(step),
                random(guess).wrapping_sub(step),
            ] {
                let uri = format!("{}-{value:032x}", prefix(guess));
                let answer = mallory
                    .request(two, "resources/read", json!({"uri": uri}))
                    .await;
                assert_eq!(error_without(&answer, &uri), unknown);
            }
        }
    }
    // Even holding Alice's URI, Mallory is answered as for one that names nothing, on the
    // other replica too; Alice reads it whole on either.
    for url in [one, two] {
        let stolen = mallory
            .request(url, "resources/read", json!({"uri": alices}))
            .await;
        assert_eq!(error_without(&stolen, &alices), unknown);
        let read = alice
            .request(url, "resources/read", json!({"uri": alices}))
            .await;
        let text = read.body["result"]["contents"][0]["text"].as_str().unwrap();
        assert!(
            text.contains("row 1\n") && text.contains("row 200"),
            "{text}"
        );
    }
}

/// Alice's call becomes a task that waits for her answer; Mallory, holding its id, can neither
/// read it, answer it nor cancel it, on any replica; Alice answers it and gets her result.
async fn tasks_stay_with_their_caller(alice: &Peer, mallory: &Peer, one: &str, two: &str) {
    // Alice's call becomes a task that waits for her answer; Mallory, holding its id, can
    // neither read it, answer it nor cancel it, on any replica.
    let alice_tasks = alice.clone().taking_tasks();
    let mallory_tasks = mallory.clone().taking_tasks();
    let created = alice_tasks.call(one, "greet", json!({})).await;
    let task = created.body["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {}", created.body))
        .to_owned();
    let nobody = "0123456789abcdef0123456789abcdef";
    let unknown_task = error_without(
        &mallory_tasks
            .request(two, "tasks/get", json!({"taskId": nobody}))
            .await,
        nobody,
    );
    let answer =
        json!({"visitor": {"action": "accept", "content": {"name": "Mallory", "times": 1}}});
    for (method, params) in [
        ("tasks/get", json!({"taskId": task})),
        (
            "tasks/update",
            json!({"taskId": task, "inputResponses": answer}),
        ),
        ("tasks/cancel", json!({"taskId": task})),
    ] {
        for url in [one, two] {
            let tried = mallory_tasks.request(url, method, params.clone()).await;
            assert_eq!(error_without(&tried, &task), unknown_task, "{method}");
        }
    }
    // The task still waits for Alice, who answers it on the other replica and gets her result.
    let mut polled = Value::Null;
    for _ in 0..100 {
        polled = alice_tasks
            .request(two, "tasks/get", json!({"taskId": task}))
            .await
            .body;
        if polled["result"]["status"] == "input_required" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(polled["result"]["status"], "input_required", "{polled}");
    let answer = json!({"visitor": {"action": "accept", "content": {"name": "Alice", "times": 1}}});
    let answered = alice_tasks
        .request(
            two,
            "tasks/update",
            json!({"taskId": task, "inputResponses": answer}),
        )
        .await;
    assert_eq!(answered.status, 200, "{}", answered.body);
    for _ in 0..100 {
        polled = alice_tasks
            .request(one, "tasks/get", json!({"taskId": task}))
            .await
            .body;
        if polled["result"]["status"] == "completed" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        polled["result"]["result"]["structuredContent"],
        json!("Hello, Alice!"),
        "{polled}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scopes_hold_wherever_a_call_runs() {
    let (_issuer, issuer) = start_issuer(None);
    let root = workspace();
    let (_server, url) = server_behind(&issuer, root.path(), |command| {
        command.arg("--stateless");
    });
    let alice = Peer::new(Some(token(&issuer, "alice", ALICE_SCOPES, RESOURCE).await));
    let mallory = Peer::new(Some(
        token(&issuer, "mallory", MALLORY_SCOPES, RESOURCE).await,
    ));

    // Without a token, nothing; with one, a listing of only what the caller may call.
    assert_eq!(
        Peer::new(None)
            .request(&url, "tools/list", json!({}))
            .await
            .status,
        401
    );
    let listed = mallory.tool_names(&url).await;
    for open in ["read", "write", "edit", "run_code"] {
        assert!(listed.iter().any(|name| name == open), "{listed:?}");
    }
    for closed in ["bash", "web_fetch"] {
        assert!(!listed.iter().any(|name| name == closed), "{listed:?}");
    }
    let everything = alice.tool_names(&url).await;
    assert!(
        everything.iter().any(|name| name == "bash"),
        "{everything:?}"
    );

    // A direct call: `403 insufficient_scope`, naming the scope.
    let direct = mallory
        .call(&url, "bash", json!({"command": "echo PWNED"}))
        .await;
    assert_eq!(direct.status, 403);
    let challenge = direct.headers["www-authenticate"].to_str().unwrap();
    assert!(
        challenge.contains("insufficient_scope") && challenge.contains("shell:run"),
        "{challenge}"
    );

    // A body the door cannot read (the tool named twice) is refused, not handed on unread.
    let twice = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","name":"bash","arguments":{"command":"echo PWNED"}}}"#;
    let refused = mallory
        .post(&url, "tools/call", Some("read"), twice.to_owned())
        .await;
    assert_eq!(refused.status, 400, "{}", refused.body);

    // Through a program: `run_code` declares to Mallory only what Mallory may call, and the
    // program's `tools` holds nothing else, so a call made anyway fails and the shell never
    // runs. (A nested call that reaches dispatch is refused there: `tests/tests/access.rs`.)
    let tools = mallory.request(&url, "tools/list", json!({})).await.body;
    let run_code = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "run_code")
        .unwrap()["description"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        !run_code.contains("bash(") && run_code.contains("write("),
        "{run_code}"
    );
    let program = "return [typeof tools.bash, typeof tools.write];";
    let ran = mallory
        .call(&url, "run_code", json!({"code": program}))
        .await;
    assert_eq!(
        ran.body["result"]["structuredContent"]["result"],
        json!(["undefined", "function"]),
        "{}",
        ran.body
    );
    let sneaked = r#"return await tools.bash({command: "touch pwned"});"#;
    let ran = mallory
        .call(&url, "run_code", json!({"code": sneaked}))
        .await;
    assert_eq!(ran.body["result"]["isError"], json!(true), "{}", ran.body);
    assert!(!root.path().join("pwned").exists(), "the shell never ran");
    // Alice's program reaches the shell: her token has the scope.
    let ran = alice.call(&url, "run_code", json!({"code": sneaked})).await;
    assert_eq!(ran.body["result"]["isError"], json!(false), "{}", ran.body);
    assert!(root.path().join("pwned").exists());

    // `web_fetch`, granted, still reaches nothing on the machine's own network: not the
    // authorization server on loopback, not the cloud metadata address.
    for inside in [
        format!("{issuer}/.well-known/openid-configuration"),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
    ] {
        let fetched = alice.call(&url, "web_fetch", json!({"url": inside})).await;
        assert_eq!(
            fetched.body["result"]["isError"],
            json!(true),
            "{}",
            fetched.body
        );
        assert_eq!(
            fetched.body["result"]["_meta"]["toolprism.dev/error"]["code"],
            json!("FORBIDDEN_ADDRESS"),
            "{}",
            fetched.body
        );
    }
}

/// A 2025-11-25 session opened by `peer` on `url`: its id.
async fn open_session(peer: &Peer, url: &str) -> (u16, Option<String>) {
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "attacker", "version": "1"}}});
    let mut request = peer
        .http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(token) = &peer.token {
        request = request.bearer_auth(token);
    }
    let response = request.body(initialize.to_string()).send().await.unwrap();
    let status = response.status().as_u16();
    let id = response
        .headers()
        .get("mcp-session-id")
        .map(|id| id.to_str().unwrap().to_owned());
    if let Some(id) = &id {
        let mut initialized = peer
            .http
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", id)
            .header("mcp-protocol-version", "2025-11-25");
        if let Some(token) = &peer.token {
            initialized = initialized.bearer_auth(token);
        }
        let notified = initialized
            .body(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string())
            .send()
            .await
            .unwrap();
        assert!(notified.status().is_success(), "{}", notified.status());
    }
    (status, id)
}

/// A request in session `id` as `peer`: its status and body.
async fn in_session(peer: &Peer, url: &str, method: reqwest::Method, id: &str) -> (u16, String) {
    let mut request = peer
        .http
        .request(method.clone(), url)
        .header("mcp-session-id", id)
        .header("mcp-protocol-version", "2025-11-25")
        .header("accept", "application/json, text/event-stream");
    if method == reqwest::Method::POST {
        request = request
            .header("content-type", "application/json")
            .body(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string());
    }
    if let Some(token) = &peer.token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    // A stream stays open: its first bytes are enough.
    let body = tokio::time::timeout(Duration::from_secs(2), response.text())
        .await
        .unwrap_or_else(|_| Ok(String::new()))
        .unwrap_or_default();
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_answers_only_the_caller_that_opened_it() {
    let (_issuer, issuer) = start_issuer(None);
    let root = workspace();
    let (_server, url) = server_behind(&issuer, root.path(), |_| {});
    let alice = Peer::new(Some(token(&issuer, "alice", ALICE_SCOPES, RESOURCE).await));
    let mallory = Peer::new(Some(
        token(&issuer, "mallory", MALLORY_SCOPES, RESOURCE).await,
    ));

    let (status, id) = open_session(&alice, &url).await;
    assert_eq!(status, 200);
    let id = id.expect("a session");
    let unknown = in_session(&mallory, &url, reqwest::Method::POST, "no-such-session").await;
    assert_eq!(unknown.0, 404);
    // Mallory, holding Alice's session id, cannot post to it, replay its stream or delete it:
    // each is answered as for a session that does not exist.
    for method in [
        reqwest::Method::POST,
        reqwest::Method::GET,
        reqwest::Method::DELETE,
    ] {
        let tried = in_session(&mallory, &url, method.clone(), &id).await;
        assert_eq!(tried, unknown, "{method}");
    }
    let (status, body) = in_session(&alice, &url, reqwest::Method::POST, &id).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"tools\""), "{body}");

    // Sessions are capped per caller: Mallory cannot fill the server, and Alice still gets in.
    let cap = toolprism_mcp::MAX_SESSIONS_PER_CALLER;
    for _ in 0..cap {
        assert_eq!(open_session(&mallory, &url).await.0, 200);
    }
    let (status, refused) = open_session(&mallory, &url).await;
    assert_eq!((status, refused), (503, None));
    assert_eq!(open_session(&alice, &url).await.0, 200);
}

#[test]
fn a_server_that_would_hand_out_a_shell_refuses_to_start() {
    let root = workspace();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_mcp_server"))
            .args(args)
            .arg("--root")
            .arg(root.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .unwrap()
    };
    // Every interface, no authorization: refused, saying what to add.
    let open = run(&["--http", "0.0.0.0:0"]);
    let said = String::from_utf8_lossy(&open.stderr);
    assert!(!open.status.success());
    assert!(
        said.contains("--issuer") && said.contains("--allow-unauthenticated"),
        "{said}"
    );
    // A scope required of a tool the server lacks: refused, naming the tools it has.
    let port = free_port().to_string();
    let mistyped = run(&[
        "--http",
        &format!("127.0.0.1:{port}"),
        "--issuer",
        "http://127.0.0.1:9",
        "--resource",
        RESOURCE,
        "--scope",
        "bsh=shell:run",
    ]);
    let said = String::from_utf8_lossy(&mistyped.stderr);
    assert!(!mistyped.status.success());
    assert!(said.contains("`bsh`") && said.contains("`bash`"), "{said}");
    // An output store inside the workspace: the file tools would read every caller's outputs.
    let inside = root.path().join("outputs");
    let nested = run(&[
        "--http",
        "127.0.0.1:0",
        "--output-dir",
        inside.to_str().unwrap(),
    ]);
    let said = String::from_utf8_lossy(&nested.stderr);
    assert!(!nested.status.success());
    assert!(said.contains("inside the workspace"), "{said}");
    // Said out loud, it serves.
    let (mut loud, url) = start_server(|command| {
        command
            .args(["--http", "0.0.0.0:0", "--allow-unauthenticated", "--root"])
            .arg(root.path());
    });
    assert!(url.starts_with("http://0.0.0.0:"), "{url}");
    loud.kill();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_issuer_makes_the_server_wait_not_stop() {
    let port = free_port();
    // The name the authorization server calls itself by.
    let issuer = format!("http://localhost:{port}");
    let root = workspace();
    let (_server, url) = server_behind(&issuer, root.path(), |command| {
        command.arg("--stateless");
    });
    // Up without its issuer: a request with a token is told to come back.
    let waiting = Peer::new(Some("a.b.c".to_owned()))
        .request(&url, "tools/list", json!({}))
        .await;
    assert_eq!(waiting.status, 503);
    assert!(waiting.headers.contains_key("retry-after"));
    // Without a token it is still told where to get one.
    assert_eq!(
        Peer::new(None)
            .request(&url, "tools/list", json!({}))
            .await
            .status,
        401
    );

    let (_issuer, started) = start_issuer(Some(port));
    assert_eq!(started, issuer);
    let alice = Peer::new(Some(token(&issuer, "alice", ALICE_SCOPES, RESOURCE).await));
    // The keys are looked for again every few seconds: within a minute, the token passes.
    let mut status = 0;
    for _ in 0..60 {
        status = alice.request(&url, "tools/list", json!({})).await.status;
        if status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legitimate_request_is_answered_through_a_connection_flood() {
    toolprism_mcp::raise_fd_limit();
    let root = workspace();
    let (_server, url) = start_server(|command| {
        command
            .args(["--http", "127.0.0.1:0", "--stateless", "--root"])
            .arg(root.path());
    });
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    // A bounded attacker: 1,500 connections, each sending part of a head and never the rest,
    // reopened as the server closes them, for 30 s.
    let flood = std::thread::spawn({
        let addr = addr.clone();
        move || {
            const HELD: usize = 1_500;
            let until = std::time::Instant::now() + Duration::from_secs(30);
            let open = |addr: &str| {
                let mut stream = std::net::TcpStream::connect(addr).ok()?;
                stream
                    .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                    .ok()?;
                stream.set_nonblocking(true).ok()?;
                Some(stream)
            };
            let mut held: Vec<std::net::TcpStream> =
                (0..HELD).filter_map(|_| open(&addr)).collect();
            let mut peak = held.len();
            while std::time::Instant::now() < until {
                // Closed by the server: read returns 0 (or the reset). Reopen it.
                held.retain_mut(|stream| match stream.read(&mut [0; 1]) {
                    Err(error) => error.kind() == std::io::ErrorKind::WouldBlock,
                    Ok(read) => read > 0,
                });
                while held.len() < HELD {
                    match open(&addr) {
                        Some(stream) => held.push(stream),
                        None => break,
                    }
                }
                peak = peak.max(held.len());
                std::thread::sleep(Duration::from_millis(200));
            }
            peak
        }
    });
    tokio::time::sleep(Duration::from_secs(3)).await;
    let peer = Peer {
        http: reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap(),
        ..Peer::new(None)
    };
    for _ in 0..3 {
        let listed = peer.request(&url, "tools/list", json!({})).await;
        assert_eq!(listed.status, 200, "{}", listed.body);
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
    let peak = flood.join().unwrap();
    // Connections the client held open (some of them waiting in the server's listen queue).
    assert!(peak >= 1_000, "the flood held {peak} connections");
}
