//! `web_fetch`: fetches a page over plain HTTP and returns its text.
//!
//! A template of a tool that talks to the network: a bounded read (at most
//! [`MAX_BODY_BYTES`]), a timeout, a value that keeps the status and the title, and a `web`
//! card. It speaks HTTP/1.1 over a TCP stream and has no TLS stack, so `https://` URLs are a
//! typed failure; a real deployment would put an HTTP client with TLS in its place.
//!
//! Crates: `toolprism`, `serde`, `schemars`, `tokio` (features `net`, `io-util`, `time`).

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use toolprism::prelude::*;
use toolprism::present::{Card, WebCard};

// Failure codes this tool sets, for a host or a test to match on.
/// The server sent a malformed response.
pub const BAD_RESPONSE: &str = "BAD_RESPONSE";
/// The server answered with an error status.
pub const HTTP_ERROR: &str = "HTTP_ERROR";
/// The request took too long.
pub const TIMED_OUT: &str = "TIMEOUT";
/// The URL is not plain `http://`.
pub const UNSUPPORTED_URL: &str = "UNSUPPORTED_URL";

/// The most bytes of a response that are read.
pub const MAX_BODY_BYTES: usize = 5 * 1024 * 1024;
/// How long the whole fetch may take.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// Arguments of `web_fetch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebFetchArgs {
    /// The URL, `http://host[:port]/path`.
    pub url: String,
}

/// The value of `web_fetch`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WebFetchValue {
    /// The URL fetched.
    pub url: String,
    /// The HTTP status.
    pub status: u16,
    /// The page title, for HTML.
    pub title: Option<String>,
    /// The text: HTML with its tags, scripts and styles removed; other types as they are.
    pub text: String,
    /// Whether the body was longer than [`MAX_BODY_BYTES`] and cut there.
    pub truncated: bool,
}

/// Fetches a web page over HTTP and returns its text.
#[tool(
    render = render,
    presentation_meta = card,
    title = "Fetch web page",
    read_only,
    open_world,
    examples = [r#"{"url": "http://example.com/"}"#]
)]
pub async fn web_fetch(args: WebFetchArgs) -> Result<WebFetchValue, ToolError> {
    let Some(rest) = args.url.strip_prefix("http://") else {
        return Err(ToolError::new(format!(
            "cannot fetch `{}`: only http:// URLs are supported by this tool",
            args.url
        ))
        .with_code(UNSUPPORTED_URL));
    };
    let (authority, path) = rest
        .split_once('/')
        .map_or((rest, "/".to_owned()), |(a, p)| (a, format!("/{p}")));
    let address = if authority.contains(':') {
        authority.to_owned()
    } else {
        format!("{authority}:80")
    };
    let response = tokio::time::timeout(TIMEOUT, get(&address, authority, &path))
        .await
        .map_err(|_| {
            ToolError::new(format!("fetching `{}` timed out", args.url)).with_code(TIMED_OUT)
        })??;
    let (status, headers, body, truncated) = parse_response(&response)?;
    if status >= 400 {
        return Err(
            ToolError::new(format!("GET {} returned HTTP {status}", args.url))
                .with_code(HTTP_ERROR),
        );
    }
    let body = String::from_utf8_lossy(&body).into_owned();
    let is_html = headers
        .iter()
        .any(|(name, value)| name.eq_ignore_ascii_case("content-type") && value.contains("html"));
    let (title, text) = if is_html {
        html_text(&body)
    } else {
        (None, body)
    };
    Ok(WebFetchValue {
        url: args.url,
        status,
        title,
        text,
        truncated,
    })
}

async fn get(address: &str, host: &str, path: &str) -> std::io::Result<Vec<u8>> {
    let mut stream = TcpStream::connect(address).await?;
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: toolprism-web-fetch\r\nAccept: text/html, text/plain\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await?;
    let mut response = Vec::new();
    // One byte past the limit tells a complete body from a cut one.
    (&mut stream)
        .take(MAX_BODY_BYTES as u64 + 64 * 1024)
        .read_to_end(&mut response)
        .await?;
    Ok(response)
}

type Response = (u16, Vec<(String, String)>, Vec<u8>, bool);

fn parse_response(response: &[u8]) -> Result<Response, ToolError> {
    let malformed =
        || ToolError::new("the server sent a malformed HTTP response").with_code(BAD_RESPONSE);
    let split = response
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .ok_or_else(malformed)?;
    let head = std::str::from_utf8(&response[..split]).map_err(|_| malformed())?;
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|code| code.parse().ok())
        .ok_or_else(malformed)?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_owned(), value.trim().to_owned()))
        .collect();
    let mut body = response[split + 4..].to_vec();
    let chunked = headers.iter().any(|(name, value)| {
        name.eq_ignore_ascii_case("transfer-encoding") && value.eq_ignore_ascii_case("chunked")
    });
    if chunked {
        body = dechunk(&body).ok_or_else(malformed)?;
    }
    let truncated = body.len() > MAX_BODY_BYTES;
    body.truncate(MAX_BODY_BYTES);
    Ok((status, headers, body, truncated))
}

fn dechunk(mut body: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = body.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&body[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(body.get(..size)?);
        body = body.get(size + 2..)?;
    }
}

/// The title and the visible text of an HTML page, roughly: tags dropped, `script` and
/// `style` dropped whole, whitespace runs collapsed.
fn html_text(html: &str) -> (Option<String>, String) {
    let lower = html.to_ascii_lowercase();
    let title = lower.find("<title").and_then(|start| {
        let open_end = start + lower[start..].find('>')? + 1;
        let close = open_end + lower[open_end..].find("</title>")?;
        Some(html[open_end..close].trim().to_owned())
    });
    let mut text = String::new();
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        text.push_str(&rest[..open]);
        let tag = rest[open..].to_ascii_lowercase();
        let skip_to = ["script", "style", "title"]
            .iter()
            .find(|name| tag.starts_with(&format!("<{name}")))
            .and_then(|name| {
                tag.find(&format!("</{name}>"))
                    .map(|end| end + name.len() + 3)
            });
        let consumed = skip_to
            .or_else(|| tag.find('>').map(|end| end + 1))
            .unwrap_or(tag.len());
        text.push(' ');
        rest = &rest[open + consumed..];
    }
    text.push_str(rest);
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (
        title,
        text.replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">"),
    )
}

fn render(_args: &WebFetchArgs, value: &WebFetchValue) -> String {
    let mut text = value.text.clone();
    if value.truncated {
        text.push_str("\n\n(The page was longer; only its beginning was fetched.)");
    }
    text
}

fn card(_args: &WebFetchArgs, value: &WebFetchValue) -> Card {
    Card::Web(WebCard::new(
        &value.url,
        value.title.as_deref(),
        &value.text,
    ))
}
