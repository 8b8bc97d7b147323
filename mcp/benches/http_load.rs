//! `tools/call` over streamable HTTP under load: 1, 16 and 64 concurrent clients against
//! toolprism's server and an rmcp `#[tool_router]` server serving the same tool (stateless,
//! JSON responses, protocol 2026-07-28), each without authorization and with it (a JWT of a
//! real authorization server checked on every request), and toolprism as three replicas behind
//! HAProxy against one replica behind it. Prints requests per second and p50/p99 latency, and
//! each figure's ratio to its baseline measured in the same run.
//!
//! `cargo bench -p toolprism-mcp --bench http_load`
//!
//! Not criterion: criterion times one function run again and again, and a load test needs
//! many clients at once and the spread of their latencies.
//!
//! Each row is measured in `ROUNDS` turns taken in alternation with the other rows, so that
//! what else the machine does weighs on all alike. Every turn is bounded: at most `REQUESTS`
//! requests or `DURATION`, whichever comes first, on loopback only. The authorization server and HAProxy come from `scripts/oauth-server` and
//! `scripts/haproxy`, which install them on first use.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{DecodingKey, Validation, decode, decode_header};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use toolprism_mcp::{Authorization, HttpMode};

mod servers;

/// The turns of each row.
const ROUNDS: usize = 3;
/// The most requests one turn sends.
const REQUESTS: usize = 10_000;
/// The longest one turn runs.
const DURATION: Duration = Duration::from_millis(1500);
/// Requests sent before measuring, to open connections and warm caches.
const WARM_UP: usize = 300;
const CLIENTS: [usize; 3] = [1, 16, 64];

/// A child process, killed when dropped.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scripts")
        .join(name)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn url(port: u16) -> String {
    format!("http://127.0.0.1:{port}/mcp")
}

/// The authorization server: its issuer URL.
fn start_issuer() -> (Process, String) {
    let mut child = Command::new(script("oauth-server"))
        .stdout(Stdio::piped())
        .spawn()
        .expect("scripts/oauth-server starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let started: Value = serde_json::from_str(&line).expect("one JSON line");
    (
        Process(child),
        started["issuer"].as_str().unwrap().to_owned(),
    )
}

/// A token of `issuer` for `resource`.
async fn token(issuer: &str, resource: &str) -> String {
    let resource: String = resource
        .bytes()
        .map(|byte| match byte {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'-' => char::from(byte).to_string(),
            _ => format!("%{byte:02X}"),
        })
        .collect();
    let response: Value = reqwest::Client::new()
        .post(format!("{issuer}/token"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!(
            "grant_type=client_credentials&client_id=load&scope=mcp%3Acall&resource={resource}"
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    response["access_token"].as_str().unwrap().to_owned()
}

/// toolprism's server for one `add`, on `port`, behind `authorization` if given.
async fn toolprism(port: u16, authorization: Option<Authorization>) {
    let mut server = servers::toolprism_server(1);
    if let Some(authorization) = authorization {
        server = server
            .with_authorization(authorization)
            .expect("the bench requires no scope of an unknown tool");
    }
    let running = server
        .serve_http(
            SocketAddr::from(([127, 0, 0, 1], port)),
            HttpMode::Stateless,
        )
        .await
        .unwrap();
    // Serves until the process ends.
    std::mem::forget(running);
}

/// What an rmcp server needs to check a JWT by hand: the issuer's keys, the issuer, itself.
struct RmcpJwt {
    keys: HashMap<String, DecodingKey>,
    issuer: String,
    audience: String,
}

impl RmcpJwt {
    async fn fetch(issuer: &str, audience: &str) -> Self {
        let metadata: Value = reqwest::get(format!("{issuer}/.well-known/openid-configuration"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let set: JwkSet = reqwest::get(metadata["jwks_uri"].as_str().unwrap())
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let keys = set
            .keys
            .iter()
            .filter_map(|jwk| Some((jwk.common.key_id.clone()?, DecodingKey::from_jwk(jwk).ok()?)))
            .collect();
        Self {
            keys,
            issuer: issuer.to_owned(),
            audience: audience.to_owned(),
        }
    }
}

/// The bearer check an rmcp server writes for itself: signature, issuer, audience, expiry.
async fn rmcp_jwt_guard(State(jwt): State<Arc<RmcpJwt>>, request: Request, next: Next) -> Response {
    let token = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    let valid = token.is_some_and(|token| {
        let Ok(head) = decode_header(token) else {
            return false;
        };
        let Some(key) = head.kid.as_ref().and_then(|kid| jwt.keys.get(kid)) else {
            return false;
        };
        let mut validation = Validation::new(head.alg);
        validation.set_issuer(&[&jwt.issuer]);
        validation.set_audience(&[&jwt.audience]);
        decode::<Value>(token, key, &validation).is_ok()
    });
    if !valid {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    next.run(request).await
}

/// rmcp's `#[tool_router]` server for the same `add`, configured as toolprism's stateless
/// endpoint is, on `port`, with the hand-written bearer check if given.
async fn rmcp(port: u16, jwt: Option<RmcpJwt>) {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None);
    let service = StreamableHttpService::new(
        || Ok(servers::rmcp_server(1)),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let mut router = axum::Router::new().nest_service("/mcp", service);
    if let Some(jwt) = jwt {
        router = router.layer(axum::middleware::from_fn_with_state(
            Arc::new(jwt),
            rmcp_jwt_guard,
        ));
    }
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
}

/// HAProxy on `port`, round robin over `backends`.
fn balancer(port: u16, backends: &[u16], dir: &Path) -> Process {
    let mut servers = String::new();
    for backend in backends {
        writeln!(servers, "    server r{backend} 127.0.0.1:{backend}").unwrap();
    }
    let config = format!(
        "global\n    maxconn 1024\n    nbthread 1\n\
         defaults\n    mode http\n    timeout connect 1s\n    timeout client 30s\n    \
         timeout server 30s\n    option http-keep-alive\n\
         frontend mcp\n    bind 127.0.0.1:{port}\n    default_backend replicas\n\
         backend replicas\n    balance roundrobin\n{servers}"
    );
    let file = dir.join(format!("haproxy-{port}.cfg"));
    std::fs::write(&file, config).unwrap();
    let child = Command::new(script("haproxy"))
        .arg("-db")
        .arg("-f")
        .arg(&file)
        .stdout(Stdio::null())
        .spawn()
        .expect("scripts/haproxy starts");
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "HAProxy did not listen"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Process(child)
}

/// One `tools/call` of `add`, as the protocol's 2026-07-28 stateless requests are.
fn call(http: &reqwest::Client, url: &str, token: Option<&str>) -> reqwest::RequestBuilder {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {
            "name": "add_0", "arguments": {"a": 2, "b": 3},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    });
    let mut request = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "add_0")
        .body(body.to_string());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request
}

/// Sends one call and checks the answer is the sum.
async fn checked_call(http: &reqwest::Client, url: &str, token: Option<&str>) {
    let response = call(http, url, token).send().await.expect("an answer");
    assert_eq!(response.status(), 200, "{url}");
    let body = response.bytes().await.unwrap();
    assert!(
        body.windows(8).any(|window| window == br#""sum":5}"#),
        "{url}: {}",
        String::from_utf8_lossy(&body)
    );
}

/// What one row's turns measured: each call's latency, and the time they took.
#[derive(Default)]
struct Measured {
    latencies: Vec<Duration>,
    elapsed: Duration,
}

impl Measured {
    fn per_second(&self) -> f64 {
        #[allow(clippy::cast_precision_loss, reason = "a count of requests")]
        let calls = self.latencies.len() as f64;
        calls / self.elapsed.as_secs_f64()
    }

    /// The latency `quantile` of the calls are within (the latencies sorted).
    fn at(&self, quantile: f64) -> Duration {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss,
            reason = "an index into some thousands of latencies"
        )]
        let index = ((self.latencies.len() - 1) as f64 * quantile).round() as usize;
        self.latencies[index]
    }
}

/// One turn: `clients` loops calling `url` until `REQUESTS` were sent or `DURATION` passed,
/// added to `measured`.
async fn load(url: &str, token: Option<&str>, clients: usize, measured: &mut Measured) {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(clients)
        .build()
        .unwrap();
    let warm = (0..WARM_UP.max(clients)).map(|_| checked_call(&http, url, token));
    futures_util::future::join_all(warm).await;
    let sent = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let mut loops = tokio::task::JoinSet::new();
    for _ in 0..clients {
        let (http, url, token, sent) = (
            http.clone(),
            url.to_owned(),
            token.map(str::to_owned),
            sent.clone(),
        );
        loops.spawn(async move {
            let mut latencies = Vec::new();
            while sent.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < REQUESTS
                && started.elapsed() < DURATION
            {
                let began = Instant::now();
                checked_call(&http, &url, token.as_deref()).await;
                latencies.push(began.elapsed());
            }
            latencies
        });
    }
    while let Some(done) = loops.join_next().await {
        measured.latencies.extend(done.unwrap());
    }
    measured.elapsed += started.elapsed();
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1_000.0
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this too: only check then.
    let quick = !std::env::args().any(|arg| arg == "--bench");
    // `cargo bench --bench http_load -- WORD`: only the rows whose name holds WORD.
    let only = std::env::args()
        .skip(1)
        .find(|arg| !arg.starts_with('-'))
        .unwrap_or_default();
    let (_issuer_process, issuer) = start_issuer();
    let work = tempfile::tempdir().unwrap();
    // The servers get two threads of their own; the clients, two others.
    let servers = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let clients = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();

    let ports: Vec<u16> = (0..8).map(|_| free_port()).collect();
    let [
        tp,
        tp_auth,
        rm,
        rm_auth,
        replica_a,
        replica_b,
        replica_c,
        balanced,
    ] = ports[..]
    else {
        unreachable!()
    };
    let balanced_one = free_port();
    servers.block_on(async {
        toolprism(tp, None).await;
        let authorization = Authorization::jwt(&issuer, &url(tp_auth)).await.unwrap();
        toolprism(tp_auth, Some(authorization)).await;
        rmcp(rm, None).await;
        rmcp(rm_auth, Some(RmcpJwt::fetch(&issuer, &url(rm_auth)).await)).await;
        for replica in [replica_a, replica_b, replica_c] {
            toolprism(replica, None).await;
        }
    });
    let _three = balancer(balanced, &[replica_a, replica_b, replica_c], work.path());
    let _one = balancer(balanced_one, &[replica_a], work.path());

    let (tp_token, rm_token) = clients.block_on(async {
        (
            token(&issuer, &url(tp_auth)).await,
            token(&issuer, &url(rm_auth)).await,
        )
    });
    // (name, URL, token, the baseline's row)
    let runs: [Row<'_>; 6] = [
        ("rmcp", url(rm), None, None),
        ("toolprism", url(tp), None, Some(0)),
        ("rmcp + JWT check", url(rm_auth), Some(&rm_token), None),
        (
            "toolprism + authorization",
            url(tp_auth),
            Some(&tp_token),
            Some(2),
        ),
        (
            "toolprism, 1 replica behind HAProxy",
            url(balanced_one),
            None,
            None,
        ),
        (
            "toolprism, 3 replicas behind HAProxy",
            url(balanced),
            None,
            Some(4),
        ),
    ];
    if quick {
        // Every server answers the sum, with and without its token as it should.
        clients.block_on(async {
            let http = reqwest::Client::new();
            for (name, url, token, _) in &runs {
                checked_call(&http, url, *token).await;
                if token.is_some() {
                    let refused = call(&http, url, None).send().await.unwrap();
                    assert_eq!(refused.status(), 401, "{name}");
                }
            }
        });
        return;
    }
    measure(&clients, &runs, &only);
}

/// A row: its name, the URL called, the token sent, and the row that is its baseline.
type Row<'a> = (&'a str, String, Option<&'a str>, Option<usize>);

/// Loads every row whose name holds `only`, prints the table.
fn measure(clients: &tokio::runtime::Runtime, runs: &[Row<'_>], only: &str) {
    println!(
        "{:<38} {:>7} {:>10} {:>9} {:>9} {:>10}",
        "server", "clients", "calls/s", "p50 ms", "p99 ms", "vs base"
    );
    for clients_count in CLIENTS {
        let mut rows: Vec<Measured> = runs.iter().map(|_| Measured::default()).collect();
        for _ in 0..ROUNDS {
            for ((name, url, token, _), measured) in runs.iter().zip(&mut rows) {
                if name.contains(only) {
                    clients.block_on(load(url, *token, clients_count, measured));
                }
            }
        }
        for measured in &mut rows {
            measured.latencies.sort_unstable();
        }
        for ((name, _, _, baseline), measured) in runs.iter().zip(&rows) {
            if measured.latencies.is_empty() {
                continue;
            }
            let ratio = baseline.map_or(String::new(), |row| {
                format!("{:.2}×", measured.per_second() / rows[row].per_second())
            });
            println!(
                "{name:<38} {clients_count:>7} {:>10.0} {:>9.3} {:>9.3} {ratio:>10}",
                measured.per_second(),
                millis(measured.at(0.50)),
                millis(measured.at(0.99)),
            );
        }
        println!();
    }
}
