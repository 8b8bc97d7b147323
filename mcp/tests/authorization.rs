//! The HTTP endpoint as an OAuth 2.1 resource server, against a real authorization server
//! (oauth2-mock-server, started on loopback by `scripts/oauth-server`): metadata, `401` with
//! where to get a token, tokens refused for every reason a token can be wrong, scopes per tool,
//! and the caller's claims reaching the tool.

#![cfg(feature = "auth")]

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use toolprism::prelude::*;
use toolprism_mcp::{
    Authorization, Caller, FollowRedirect, HttpMode, ImportOptions, IntrospectionValidator,
    JwtValidator, McpClient, McpServer, OAuth, RunningHttp,
};

/// The authorization server, stopped when dropped.
struct Issuer {
    child: Child,
    url: String,
}

impl Drop for Issuer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_issuer() -> Issuer {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut child = Command::new(root.join("scripts/oauth-server"))
        .stdout(Stdio::piped())
        .spawn()
        .expect("scripts/oauth-server starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("piped"))
        .read_line(&mut line)
        .expect("the issuer prints where it is");
    let started: Value = serde_json::from_str(&line).expect("one JSON line");
    let url = started["issuer"].as_str().expect("an issuer").to_owned();
    Issuer { child, url }
}

/// Says who called.
#[tool]
fn whoami(cx: &ToolContext) -> String {
    match cx.extension::<Caller>() {
        Some(caller) => format!(
            "{} with {}",
            caller.subject.clone().unwrap_or_default(),
            caller.scopes.iter().cloned().collect::<Vec<_>>().join(" ")
        ),
        None => "nobody".to_owned(),
    }
}

/// Deletes everything.
#[tool(scopes = ["mcp:write"])]
fn delete_all() -> String {
    "deleted".to_owned()
}

/// A free loopback port, for an endpoint whose URL the authorization must know first.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn protected(issuer: &Issuer) -> (RunningHttp, String) {
    let (port, resource) = endpoint();
    // `delete_all` says the scope it needs itself; `whoami` needs one required here.
    let authorization = Authorization::jwt(&issuer.url, &resource)
        .await
        .unwrap()
        .require_scope("whoami", "mcp:read");
    let registry = Registry::builder()
        .tool(Whoami)
        .tool(DeleteAll)
        .build()
        .unwrap();
    (serve(port, registry, authorization).await, resource)
}

/// A free loopback port, and the URL of an endpoint there.
fn endpoint() -> (u16, String) {
    let port = free_port();
    (port, format!("http://127.0.0.1:{port}/mcp"))
}

/// `registry` served statelessly on `port`, behind `authorization`.
async fn serve(port: u16, registry: Registry, authorization: Authorization) -> RunningHttp {
    McpServer::new(registry)
        .with_authorization(authorization)
        .expect("every scope is required of a tool the registry has")
        .serve_http(
            format!("127.0.0.1:{port}").parse().unwrap(),
            HttpMode::Stateless,
        )
        .await
        .unwrap()
}

/// A token of `issuer`, the form saying what it should hold.
async fn token(issuer: &Issuer, form: &[(&str, &str)]) -> String {
    let mut fields = vec![("grant_type", "client_credentials"), ("client_id", "ada")];
    fields.extend_from_slice(form);
    let body = fields
        .iter()
        .map(|(key, value)| format!("{key}={}", urlencode(value)))
        .collect::<Vec<_>>()
        .join("&");
    let response = reqwest::Client::new()
        .post(format!("{}/token", issuer.url))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .unwrap();
    let answer: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    answer["access_token"].as_str().unwrap().to_owned()
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|byte| {
            if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
                char::from(byte).to_string()
            } else {
                format!("%{byte:02X}")
            }
        })
        .collect()
}

/// A 2026-07-28 request to the endpoint; its status, `WWW-Authenticate` and body.
async fn post(
    resource: &str,
    token: Option<&str>,
    method: &str,
    params: Value,
) -> (u16, String, Value) {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let mut request = reqwest::Client::new()
        .post(resource)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = params.get("name").and_then(Value::as_str) {
        request = request.header("mcp-name", name);
    }
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let response = request
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|value| value.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let bytes = response.bytes().await.unwrap();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, challenge, body)
}

#[tokio::test]
async fn the_endpoint_says_where_to_get_a_token_and_takes_only_good_ones() {
    let issuer = start_issuer();
    let (_running, resource) = protected(&issuer).await;
    let metadata_url = resource.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");

    // The protected-resource metadata, at the origin and under the endpoint's path.
    for url in [
        metadata_url.clone(),
        metadata_url.trim_end_matches("/mcp").to_owned(),
    ] {
        let metadata: Value =
            serde_json::from_slice(&reqwest::get(&url).await.unwrap().bytes().await.unwrap())
                .unwrap();
        assert_eq!(metadata["resource"], resource.as_str());
        assert_eq!(metadata["authorization_servers"], json!([issuer.url]));
        assert_eq!(
            metadata["scopes_supported"],
            json!(["mcp:read", "mcp:write"])
        );
    }

    // No token: 401, naming the metadata.
    let (status, challenge, _) = post(&resource, None, "tools/list", json!({})).await;
    assert_eq!(status, 401);
    assert_eq!(
        challenge,
        format!("Bearer resource_metadata=\"{metadata_url}\"")
    );

    // A good token: the caller's claims reach the tool.
    let read = token(&issuer, &[("scope", "mcp:read"), ("resource", &resource)]).await;
    let (status, _, body) = post(
        &resource,
        Some(&read),
        "tools/call",
        json!({"name": "whoami"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["structuredContent"], "ada with mcp:read");

    // Without the tool's scope: 403 naming it, and a listing without the tool.
    let (status, challenge, _) = post(
        &resource,
        Some(&read),
        "tools/call",
        json!({"name": "delete_all"}),
    )
    .await;
    assert_eq!(status, 403);
    assert!(
        challenge.contains("error=\"insufficient_scope\""),
        "{challenge}"
    );
    assert!(challenge.contains("scope=\"mcp:write\""), "{challenge}");
    let (_, _, listed) = post(&resource, Some(&read), "tools/list", json!({})).await;
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert_eq!(names, ["whoami"]);

    // A scope required of a tool by the endpoint counts the same as one the tool says.
    let bare = token(&issuer, &[("resource", &resource)]).await;
    let (status, challenge, _) = post(
        &resource,
        Some(&bare),
        "tools/call",
        json!({"name": "whoami"}),
    )
    .await;
    assert_eq!(status, 403);
    assert!(challenge.contains("scope=\"mcp:read\""), "{challenge}");

    // With it, the call runs.
    let write = token(
        &issuer,
        &[("scope", "mcp:read mcp:write"), ("resource", &resource)],
    )
    .await;
    let (status, _, body) = post(
        &resource,
        Some(&write),
        "tools/call",
        json!({"name": "delete_all"}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["result"]["structuredContent"], "deleted");
}

#[tokio::test]
async fn every_kind_of_bad_token_is_refused_alike() {
    let issuer = start_issuer();
    let (_running, resource) = protected(&issuer).await;
    let good = token(&issuer, &[("scope", "mcp:read"), ("resource", &resource)]).await;
    let expired = token(&issuer, &[("resource", &resource), ("expires_in", "-3600")]).await;
    let not_yet = token(
        &issuer,
        &[("resource", &resource), ("not_before_in", "3600")],
    )
    .await;
    let elsewhere = token(&issuer, &[("resource", "http://127.0.0.1:1/mcp")]).await;
    let unsigned = {
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
        let claims = good.split('.').nth(1).unwrap();
        format!("{header}.{claims}.")
    };
    let tampered = {
        let mut parts: Vec<String> = good.split('.').map(str::to_owned).collect();
        let claims = URL_SAFE_NO_PAD.decode(&parts[1]).unwrap();
        let mut claims: Value = serde_json::from_slice(&claims).unwrap();
        claims["scope"] = json!("mcp:read mcp:write");
        parts[1] = URL_SAFE_NO_PAD.encode(claims.to_string());
        parts.join(".")
    };
    let hmac = {
        // Signed with a secret anyone could read: the algorithm is refused before any key.
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
        let claims = good.split('.').nth(1).unwrap();
        format!("{header}.{claims}.c2lnbmF0dXJl")
    };
    let oversized = format!("{good}{}", "A".repeat(9 * 1024));
    let other_issuer = start_issuer();
    let foreign = token(&other_issuer, &[("resource", &resource)]).await;

    for (why, token) in [
        ("garbage", "not a token"),
        ("expired", expired.as_str()),
        ("not yet valid", not_yet.as_str()),
        ("for another resource", elsewhere.as_str()),
        ("alg none", unsigned.as_str()),
        ("tampered", tampered.as_str()),
        ("HMAC", hmac.as_str()),
        ("oversized", oversized.as_str()),
        ("another issuer's", foreign.as_str()),
    ] {
        let (status, challenge, body) = post(
            &resource,
            Some(token),
            "tools/call",
            json!({"name": "whoami"}),
        )
        .await;
        assert_eq!(status, 401, "{why}");
        assert!(
            challenge.contains("error=\"invalid_token\""),
            "{why}: {challenge}"
        );
        // Nothing of why is said.
        assert_eq!(body, Value::Null, "{why}");
    }
    let (status, _, _) = post(
        &resource,
        Some(&good),
        "tools/call",
        json!({"name": "whoami"}),
    )
    .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn an_issuer_whose_keys_never_come_is_an_error_not_a_hang() {
    // A listener that accepts and never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let _held = Arc::new(tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            open.push(stream);
        }
    }));
    let error = JwtValidator::with_jwks_uri(
        "http://issuer",
        "http://127.0.0.1:1/mcp",
        &format!("http://{address}/jwks"),
    )
    .await
    .unwrap_err();
    assert!(error.to_string().contains("jwks"), "{error}");
}

/// A loopback HTTP server answering every request with `body` (status 200).
async fn answering(body: &'static str) -> std::net::SocketAddr {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut request = [0; 4096];
            let _ = stream.read(&mut request).await;
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(answer.as_bytes()).await;
        }
    });
    address
}

#[tokio::test]
async fn an_issuer_whose_keys_are_garbage_is_an_error() {
    for garbage in [
        "not json at all",
        r#"{"keys": "not a list"}"#,
        r#"{"keys": [{"kty": "RSA", "kid": "k", "n": "!!", "e": "AQAB"}]}"#,
        r#"{"keys": [{"kty": "oct", "kid": "k", "k": "c2VjcmV0"}]}"#,
    ] {
        let address = answering(garbage).await;
        let validator = JwtValidator::with_jwks_uri(
            "http://issuer",
            "http://127.0.0.1:1/mcp",
            &format!("http://{address}/jwks"),
        )
        .await;
        match validator {
            // A key set with no usable key is taken, and every token is then refused.
            Ok(validator) => {
                let (port, resource) = endpoint();
                let registry = Registry::builder().tool(Whoami).build().unwrap();
                let authorization = Authorization::new(&resource, "http://issuer", validator);
                let _running = serve(port, registry, authorization).await;
                let forged = format!(
                    "{}.{}.{}",
                    URL_SAFE_NO_PAD.encode(r#"{"alg":"RS256","kid":"k"}"#),
                    URL_SAFE_NO_PAD.encode(
                        json!({"iss": "http://issuer", "aud": resource, "exp": 9_999_999_999_u64})
                            .to_string()
                    ),
                    URL_SAFE_NO_PAD.encode("sig")
                );
                let (status, _, body) =
                    post(&resource, Some(&forged), "tools/list", json!({})).await;
                assert_eq!(status, 401, "{garbage}: {body}");
            }
            Err(error) => assert!(error.to_string().contains("jwks"), "{garbage}: {error}"),
        }
    }
}

#[tokio::test]
async fn an_anonymous_request_is_refused_before_its_body_is_read() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let issuer = start_issuer();
    let (_running, resource) = protected(&issuer).await;
    let address = resource
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap();
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    // A body announced and never sent: reading it would take the 30 s body limit.
    let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                Content-Length: 1000000\r\n\r\n";
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0; 1024];
    let read = stream.read(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer[..read]);
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
}

#[tokio::test]
async fn the_client_imports_from_a_protected_server_with_the_hosts_token() {
    let issuer = start_issuer();
    let (_running, resource) = protected(&issuer).await;
    let read = token(&issuer, &[("scope", "mcp:read"), ("resource", &resource)]).await;

    let refused = McpClient::connect_http(&resource, ImportOptions::default()).await;
    assert!(refused.is_err(), "without a token the server refuses");

    let options = ImportOptions::default().bearer_token(read.clone());
    assert!(
        !format!("{options:?}").contains(&read),
        "the token is never printed"
    );
    let client = McpClient::connect_http(&resource, options).await.unwrap();
    let local = Registry::builder().build().unwrap();
    let imported = client.import_into(&local).await.unwrap();
    let names: Vec<&str> = imported
        .iter()
        .map(|tool| tool.local_name.as_str())
        .collect();
    assert_eq!(names, ["whoami"], "only what the token may call is listed");
    let outcome = local
        .dispatch(ToolCall::new("c1", "whoami", json!({})), Surface::Direct)
        .await;
    assert_eq!(outcome.value().unwrap(), &json!("ada with mcp:read"));
}

#[tokio::test]
async fn an_opaque_token_is_asked_about_at_the_issuer() {
    let issuer = start_issuer();
    let (port, resource) = endpoint();
    let validator = IntrospectionValidator::new(format!("{}/introspection", issuer.url), &resource);
    let registry = Registry::builder().tool(Whoami).build().unwrap();
    let authorization = Authorization::new(&resource, &issuer.url, validator);
    let _running = serve(port, registry, authorization).await;
    let good = token(&issuer, &[("scope", "mcp:read"), ("resource", &resource)]).await;
    let (status, _, body) = post(
        &resource,
        Some(&good),
        "tools/call",
        json!({"name": "whoami"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["structuredContent"], "ada with mcp:read");

    let elsewhere = token(&issuer, &[("resource", "http://127.0.0.1:1/mcp")]).await;
    let expired = token(&issuer, &[("resource", &resource), ("expires_in", "-3600")]).await;
    for (why, token) in [
        ("never issued", "an-opaque-token-nobody-issued"),
        ("for another resource", elsewhere.as_str()),
        ("expired", expired.as_str()),
    ] {
        let (status, _, _) = post(
            &resource,
            Some(token),
            "tools/call",
            json!({"name": "whoami"}),
        )
        .await;
        assert_eq!(status, 401, "{why}");
    }
    // An issuer that cannot be asked is the server's trouble, not the token's: 503.
    let (port, resource) = endpoint();
    let nowhere = format!("http://127.0.0.1:{}/introspection", free_port());
    let validator = IntrospectionValidator::new(nowhere, &resource);
    let registry = Registry::builder().tool(Whoami).build().unwrap();
    let authorization = Authorization::new(&resource, &issuer.url, validator);
    let _cut_off = serve(port, registry, authorization).await;
    let (status, _, _) = post(
        &resource,
        Some(&good),
        "tools/call",
        json!({"name": "whoami"}),
    )
    .await;
    assert_eq!(status, 503);
}

#[tokio::test]
async fn the_client_authorizes_itself_with_the_authorization_code_flow() {
    let issuer = start_issuer();
    let (_running, resource) = protected(&issuer).await;
    // The mock grants at once: the authorization URL redirects straight back with a code.
    let oauth = OAuth::new(
        "http://127.0.0.1:9/callback",
        FollowRedirect::new().unwrap(),
    )
    .client_id("ada", None)
    .scopes(["mcp:read"]);
    let client = McpClient::connect_http(&resource, ImportOptions::default().oauth(oauth))
        .await
        .unwrap();
    let local = Registry::builder().build().unwrap();
    let imported = client.import_into(&local).await.unwrap();
    let names: Vec<&str> = imported
        .iter()
        .map(|tool| tool.local_name.as_str())
        .collect();
    assert_eq!(
        names,
        ["whoami"],
        "the token holds the scope asked for, no more"
    );
    let outcome = local
        .dispatch(ToolCall::new("c1", "whoami", json!({})), Surface::Direct)
        .await;
    assert_eq!(outcome.value().unwrap(), &json!("ada with mcp:read"));
}

#[tokio::test]
async fn a_token_accepted_before_is_refused_once_it_expires() {
    let issuer = start_issuer();
    let (_running, resource) = protected(&issuer).await;
    // Expired 18 s ago: still within the 30 s leeway, for 12 s more.
    let token = token(
        &issuer,
        &[
            ("scope", "mcp:read"),
            ("resource", &resource),
            ("expires_in", "-18"),
        ],
    )
    .await;
    let call = || {
        post(
            &resource,
            Some(&token),
            "tools/call",
            json!({"name": "whoami"}),
        )
    };
    assert_eq!(
        call().await.0,
        200,
        "accepted, and its signature kept as checked"
    );
    assert_eq!(call().await.0, 200);
    tokio::time::sleep(std::time::Duration::from_secs(14)).await;
    assert_eq!(
        call().await.0,
        401,
        "kept or not, an expired token is refused"
    );
}
