//! The `mcp_server` example with `--issuer` and `--resource`: the coding tools behind OAuth,
//! tokens from a real authorization server (`scripts/oauth-server`) on loopback.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

/// A child process, stopped when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `command`; the process and its first line of output.
fn start(command: &mut Command) -> (Running, String) {
    let mut child = command.stdout(Stdio::piped()).spawn().expect("it starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("piped"))
        .read_line(&mut line)
        .expect("it says where it is");
    (Running(child), line.trim().to_owned())
}

async fn tools_list(url: &str, token: Option<&str>) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/list");
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let response = request
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}})
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let body = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap_or(Value::Null);
    (status, body)
}

#[tokio::test]
async fn the_coding_tools_behind_oauth_show_a_caller_only_what_it_may_call() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let (_issuer, line) = start(&mut Command::new(root.join("scripts/oauth-server")));
    let issuer: Value = serde_json::from_str(&line).unwrap();
    let issuer = issuer["issuer"].as_str().unwrap().to_owned();

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let workspace = tempfile::tempdir().unwrap();
    let (_server, listening) = start(
        Command::new(env!("CARGO_BIN_EXE_mcp_server"))
            .args(["--http", &format!("127.0.0.1:{port}"), "--stateless"])
            .args(["--issuer", &issuer, "--resource", &url])
            .args(["--scope", "write=files:write", "--root"])
            .arg(workspace.path()),
    );
    assert_eq!(listening, format!("listening on {url}"));

    assert_eq!(tools_list(&url, None).await.0, 401);
    let form = format!(
        "grant_type=client_credentials&client_id=ada&scope=files%3Aread&resource={}",
        url.replace(':', "%3A").replace('/', "%2F")
    );
    let answer: Value = serde_json::from_slice(
        &reqwest::Client::new()
            .post(format!("{issuer}/token"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form)
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap(),
    )
    .unwrap();
    let token = answer["access_token"].as_str().unwrap();
    let (status, body) = tools_list(&url, Some(token)).await;
    assert_eq!(status, 200, "{body}");
    let names: Vec<&str> = body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert!(names.contains(&"read"), "{names:?}");
    assert!(!names.contains(&"write"), "{names:?}");
}
