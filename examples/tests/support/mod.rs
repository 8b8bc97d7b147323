//! What the tests of the real `mcp_server` share: processes started and killed, the project's
//! scripts (an S3 server, an authorization server), tokens, and MCP requests over HTTP as a
//! client would send them.

#![allow(
    dead_code,
    unreachable_pub,
    reason = "each test binary uses a part of it"
)]

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};

use serde_json::{Value, json};

/// A child process, killed when dropped.
pub struct Process {
    pub child: Child,
    /// Held open: the S3 server ends when its stdin closes (if this test dies, so does it).
    pub stdin: Option<ChildStdin>,
}

impl Process {
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}

pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scripts")
        .join(name)
}

/// The first line `child` prints.
pub fn first_line(child: &mut Child) -> String {
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("piped"))
        .read_line(&mut line)
        .expect("a first line");
    line
}

/// A loopback port nobody listens on (yet).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The S3 server, with `bucket` made, and where it is.
pub fn start_s3(bucket: &str) -> (Process, Value) {
    let mut child = Command::new(script("s3-server"))
        .arg(bucket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("scripts/s3-server starts");
    let stdin = child.stdin.take();
    let line = first_line(&mut child);
    let s3: Value = serde_json::from_str(&line).expect("one JSON line");
    (Process { child, stdin }, s3)
}

/// The environment that points `mcp_server --store s3://…` at `s3`.
pub fn s3_env(command: &mut Command, s3: &Value) {
    command
        .env("AWS_ENDPOINT", s3["endpoint"].as_str().unwrap())
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_REGION", s3["region"].as_str().unwrap())
        .env("AWS_ACCESS_KEY_ID", s3["access_key_id"].as_str().unwrap())
        .env(
            "AWS_SECRET_ACCESS_KEY",
            s3["secret_access_key"].as_str().unwrap(),
        );
}

/// The authorization server (on `port`, or one of its choosing), and its issuer URL.
pub fn start_issuer(port: Option<u16>) -> (Process, String) {
    let mut command = Command::new(script("oauth-server"));
    if let Some(port) = port {
        command.env("TOOLPRISM_OAUTH_PORT", port.to_string());
    }
    let mut child = command
        .stdout(Stdio::piped())
        .spawn()
        .expect("scripts/oauth-server starts");
    let line = first_line(&mut child);
    let started: Value = serde_json::from_str(&line).expect("one JSON line");
    let issuer = started["issuer"].as_str().unwrap().to_owned();
    (Process { child, stdin: None }, issuer)
}

/// An access token of `issuer` for `resource`, issued to `client` with `scopes`.
pub async fn token(issuer: &str, client: &str, scopes: &str, resource: &str) -> String {
    let encode = |text: &str| {
        text.replace('%', "%25")
            .replace(':', "%3A")
            .replace('/', "%2F")
            .replace(' ', "%20")
    };
    let form = format!(
        "grant_type=client_credentials&client_id={client}&scope={}&resource={}",
        encode(scopes),
        encode(resource)
    );
    let answer: Value = reqwest::Client::new()
        .post(format!("{issuer}/token"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    answer["access_token"].as_str().unwrap().to_owned()
}

/// `mcp_server` with `args`, once it says where it listens: the process and its URL.
pub fn start_server(configure: impl FnOnce(&mut Command)) -> (Process, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp_server"));
    configure(&mut command);
    let mut child = command
        .stdout(Stdio::piped())
        .spawn()
        .expect("mcp_server starts");
    let line = first_line(&mut child);
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("the server says where it listens: {line:?}"))
        .to_owned();
    (Process { child, stdin: None }, url)
}

/// An MCP client over HTTP, speaking 2026-07-28 statelessly: its token (if any) and the
/// capabilities it declares.
#[derive(Clone)]
pub struct Peer {
    pub http: reqwest::Client,
    pub token: Option<String>,
    pub capabilities: Value,
}

/// A response: its status, headers and JSON body (`null` when it is not JSON).
pub struct Answer {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
}

impl Peer {
    /// A client that answers forms.
    pub fn new(token: Option<String>) -> Self {
        Self {
            http: reqwest::Client::new(),
            token,
            capabilities: json!({"elicitation": {"form": {}}}),
        }
    }

    /// The same client, taking tasks too.
    pub fn taking_tasks(mut self) -> Self {
        self.capabilities["extensions"] = json!({"io.modelcontextprotocol/tasks": {}});
        self
    }

    /// One request; `params` get the request's `_meta`.
    pub async fn request(&self, url: &str, method: &str, params: Value) -> Answer {
        let mut params = params;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": self.capabilities,
        });
        let named = ["name", "uri", "taskId"]
            .iter()
            .find_map(|key| params.get(*key))
            .cloned();
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        self.post(
            url,
            method,
            named.as_ref().and_then(Value::as_str),
            body.to_string(),
        )
        .await
    }

    /// A raw body posted as a request of `method`.
    pub async fn post(&self, url: &str, method: &str, name: Option<&str>, body: String) -> Answer {
        let mut request = self
            .http
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method);
        // What the request names (a tool, a resource) goes in a header too.
        if let Some(name) = name {
            request = request.header("mcp-name", name);
        }
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        let response = request
            .body(body)
            .send()
            .await
            .expect("the endpoint answers (an error status at worst)");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.bytes().await.unwrap_or_default();
        Answer {
            status,
            headers,
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        }
    }

    pub async fn call(&self, url: &str, tool: &str, arguments: Value) -> Answer {
        self.request(
            url,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        )
        .await
    }

    /// The names of the tools a listing shows this client.
    pub async fn tool_names(&self, url: &str) -> Vec<String> {
        let listed = self.request(url, "tools/list", json!({})).await;
        assert_eq!(listed.status, 200, "{}", listed.body);
        listed.body["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_owned())
            .collect()
    }
}

/// The `toolprism://output/…` URI a bounded result names.
pub fn retained_uri(result: &Value) -> String {
    let text = result["result"]["content"][0]["text"].as_str().unwrap();
    let start = text
        .find("toolprism://output/")
        .unwrap_or_else(|| panic!("output was retained: {text}"));
    text[start..]
        .split(|c: char| c.is_whitespace() || c == ';')
        .next()
        .unwrap()
        .to_owned()
}
