//! What the HTTP endpoint does with a client that sends too much or too slowly: a request head
//! over the size limit is refused, and a client that stops sending (before its head is whole,
//! or in the middle of its body), sits idle between requests, or stops reading its answer
//! loses its connection or its request instead of holding them.

#![cfg(feature = "http-server")]

use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use toolprism::bound::FsOutputStore;
use toolprism::prelude::*;
use toolprism_mcp::{
    BODY_READ_TIMEOUT, HEADER_READ_TIMEOUT, HttpMode, MAX_BODY_BYTES, MAX_HEADER_BYTES, McpServer,
    RunningHttp, WRITE_TIMEOUT,
};

/// Adds two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// A value far bigger than what the sockets between client and server hold (some MiB).
#[tool]
fn huge() -> String {
    "x".repeat(32 * 1024 * 1024)
}

async fn serve() -> RunningHttp {
    let store = std::env::temp_dir().join(format!("toolprism-door-{}", std::process::id()));
    let registry = Registry::builder()
        .tool(Add)
        .tool(Huge)
        .output_store(FsOutputStore::new(store))
        .build()
        .unwrap();
    McpServer::new(registry)
        .serve_http("127.0.0.1:0".parse().unwrap(), HttpMode::Stateless)
        .await
        .unwrap()
}

/// Reads what the server sends until it closes the connection; a guard of several times the
/// timeout under test turns a server that never closes into a failure, not a hang.
async fn until_closed(stream: &mut TcpStream, timeout: Duration) -> String {
    let mut answer = Vec::new();
    tokio::time::timeout(timeout * 4, stream.read_to_end(&mut answer))
        .await
        .expect("the server closes the connection")
        .ok();
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test]
async fn a_head_over_the_limit_is_refused() {
    let running = serve().await;
    let mut stream = TcpStream::connect(running.local_addr()).await.unwrap();
    let padding = "x".repeat(MAX_HEADER_BYTES);
    let head = format!("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: {padding}\r\n\r\n");
    // The server may close before it has read everything: a failed write is fine.
    let _ = stream.write_all(head.as_bytes()).await;
    let answer = until_closed(&mut stream, HEADER_READ_TIMEOUT).await;
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
}

#[tokio::test]
async fn a_client_that_never_finishes_its_head_loses_the_connection() {
    let running = serve().await;
    // One sends nothing at all; another stops in the middle of its headers.
    let mut silent = TcpStream::connect(running.local_addr()).await.unwrap();
    let mut halting = TcpStream::connect(running.local_addr()).await.unwrap();
    halting
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    let (silent, halting) = tokio::join!(
        until_closed(&mut silent, HEADER_READ_TIMEOUT),
        until_closed(&mut halting, HEADER_READ_TIMEOUT)
    );
    assert!(!silent.contains("200 OK"), "{silent}");
    assert!(!halting.contains("200 OK"), "{halting}");
}

#[tokio::test]
async fn a_body_that_stops_coming_fails_the_request() {
    let running = serve().await;
    let mut stream = TcpStream::connect(running.local_addr()).await.unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    // Half the body, then nothing.
    stream
        .write_all(&body.as_bytes()[..body.len() / 2])
        .await
        .unwrap();
    let mut answer = vec![0; 4096];
    let read = tokio::time::timeout(BODY_READ_TIMEOUT * 4, stream.read(&mut answer))
        .await
        .expect("the server answers a stalled body")
        .unwrap_or(0);
    let answer = String::from_utf8_lossy(&answer[..read]);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused() {
    let running = serve().await;
    let mut stream = TcpStream::connect(running.local_addr()).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
        MAX_BODY_BYTES + 1
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    // Sent until the server stops reading: it may refuse before all of it arrives.
    let chunk = vec![b' '; 64 * 1024];
    for _ in 0..=MAX_BODY_BYTES / chunk.len() {
        if stream.write_all(&chunk).await.is_err() {
            break;
        }
    }
    let mut answer = vec![0; 4096];
    let read = tokio::time::timeout(BODY_READ_TIMEOUT * 4, stream.read(&mut answer))
        .await
        .expect("the server answers")
        .unwrap_or(0);
    let answer = String::from_utf8_lossy(&answer[..read]);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
}

/// A whole request of 2026-07-28 (its method's headers first), kept alive.
fn request(headers: &str, body: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

#[tokio::test]
async fn a_connection_left_idle_after_its_answer_is_closed() {
    let running = serve().await;
    let mut stream = TcpStream::connect(running.local_addr()).await.unwrap();
    let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{META}}}}}"#);
    let head = request("Mcp-Method: tools/list\r\n", &body);
    stream.write_all(head.as_bytes()).await.unwrap();
    // Answered, then nothing more is sent: the connection is closed, not kept for good.
    let answer = until_closed(&mut stream, HEADER_READ_TIMEOUT).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("\"tools\""), "{answer}");
}

#[tokio::test]
async fn a_client_that_stops_reading_its_answer_loses_the_connection() {
    let running = serve().await;
    let mut stream = TcpStream::connect(running.local_addr()).await.unwrap();
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"huge","arguments":{{}},{META}}}}}"#
    );
    let head = request("Mcp-Method: tools/call\r\nMcp-Name: huge\r\n", &body);
    stream.write_all(head.as_bytes()).await.unwrap();
    // The client reads nothing while the server writes; past the write timeout, it finds the
    // answer cut short and the connection closed.
    tokio::time::sleep(WRITE_TIMEOUT + Duration::from_secs(5)).await;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(WRITE_TIMEOUT, stream.read_to_end(&mut answer))
        .await
        .expect("the server closed the connection");
    let text = String::from_utf8_lossy(&answer[..answer.len().min(64)]).into_owned();
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(
        answer.len() < 32 * 1024 * 1024,
        "{} bytes: the answer was cut short",
        answer.len()
    );
}
