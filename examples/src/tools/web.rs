//! `web_fetch`: fetches a page over plain HTTP and returns its text.
//!
//! A template of a tool that talks to the network: a bounded read (at most
//! [`MAX_BODY_BYTES`]), a timeout, a value that keeps the status and the title, and a `web`
//! card. It speaks HTTP/1.1 over a TCP stream and has no TLS stack, so `https://` URLs are a
//! typed failure; a real deployment would put an HTTP client with TLS in its place.
//!
//! The model picks the URL, so the tool must not become a way into the machine's own network
//! (server-side request forgery): every address a host name resolves to is checked before
//! connecting — loopback, private, link-local, shared, unspecified, multicast and reserved
//! ranges are refused, IPv4 and IPv6 alike, IPv4 inside IPv6 too — and the connection goes to
//! the address that was checked, not to a second lookup. Redirects are followed (at most
//! [`MAX_REDIRECTS`]), each hop checked the same way. A host the operator trusts is let through
//! with a [`FetchPolicy`] in the registry's state.
//!
//! Crates: `toolprism`, `serde`, `schemars`, `tokio` (features `net`, `io-util`, `time`).

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
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
/// The host resolves to an address this tool does not reach (the machine's own network).
pub const FORBIDDEN_ADDRESS: &str = "FORBIDDEN_ADDRESS";
/// The host name does not resolve.
pub const UNRESOLVED_HOST: &str = "UNRESOLVED_HOST";
/// Redirects went on past [`MAX_REDIRECTS`].
pub const TOO_MANY_REDIRECTS: &str = "TOO_MANY_REDIRECTS";

/// The most redirects followed for one fetch.
pub const MAX_REDIRECTS: usize = 5;

/// Hosts `web_fetch` may reach although their addresses are private, as the registry's state
/// (`Registry::builder().state(FetchPolicy::default().allow("intranet:8080"))`); without one,
/// none is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FetchPolicy {
    allowed: BTreeSet<String>,
}

impl FetchPolicy {
    /// The same policy, letting `host` (a name or an address, with `:port` for that port only)
    /// through whatever it resolves to.
    #[must_use]
    pub fn allow(mut self, host: impl Into<String>) -> Self {
        self.allowed.insert(host.into().to_ascii_lowercase());
        self
    }

    fn allows(&self, host: &str, port: u16) -> bool {
        let host = host.to_ascii_lowercase();
        self.allowed.contains(&host) || self.allowed.contains(&format!("{host}:{port}"))
    }
}

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
    scopes = ["web:fetch"],
    examples = [r#"{"url": "http://example.com/"}"#]
)]
pub async fn web_fetch(args: WebFetchArgs, cx: &ToolContext) -> Result<WebFetchValue, ToolError> {
    let policy = cx.state::<FetchPolicy>().unwrap_or_default();
    let (status, headers, body, truncated) =
        tokio::time::timeout(TIMEOUT, follow(&args.url, &policy))
            .await
            .map_err(|_| {
                ToolError::new(format!("fetching `{}` timed out", args.url)).with_code(TIMED_OUT)
            })??;
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

/// Fetches `url`, following redirects, every hop's address checked against `policy`.
async fn follow(url: &str, policy: &FetchPolicy) -> Result<Response, ToolError> {
    let mut url = url.to_owned();
    for _ in 0..=MAX_REDIRECTS {
        let target = Target::parse(&url)?;
        let address = target.checked_address(policy).await?;
        let response = get(address, &target.authority, &target.path)
            .await
            .map_err(|error| ToolError::new(format!("fetching `{url}` failed: {error}")))?;
        let response = parse_response(&response)?;
        let location = response
            .1
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("location"))
            .map(|(_, value)| value.clone());
        match location {
            Some(location) if (300..400).contains(&response.0) => {
                url = target.resolve(&location);
            }
            _ => return Ok(response),
        }
    }
    Err(ToolError::new(format!(
        "fetching `{url}` was redirected more than {MAX_REDIRECTS} times"
    ))
    .with_code(TOO_MANY_REDIRECTS))
}

/// An `http://` URL, taken apart.
struct Target {
    /// What the `Host` header says.
    authority: String,
    /// The host, without brackets around an IPv6 address.
    host: String,
    port: u16,
    path: String,
}

impl Target {
    fn parse(url: &str) -> Result<Self, ToolError> {
        let unsupported = || {
            ToolError::new(format!(
                "cannot fetch `{}`: only http://host[:port]/path URLs are supported by this tool",
                url.escape_debug()
            ))
            .with_code(UNSUPPORTED_URL)
        };
        // A space or a line break would end the request line and start a header of the URL's.
        if url.chars().any(|ch| ch.is_whitespace() || ch.is_control()) {
            return Err(unsupported());
        }
        let rest = url
            .get(..7)
            .filter(|scheme| scheme.eq_ignore_ascii_case("http://"))
            .map(|_| &url[7..])
            .ok_or_else(unsupported)?;
        let (authority, path) = match rest.find(['/', '?', '#']) {
            Some(at) => (&rest[..at], rest[at..].to_owned()),
            None => (rest, "/".to_owned()),
        };
        let path = path.split('#').next().unwrap_or("/").to_owned();
        let path = if path.starts_with('/') {
            path
        } else {
            format!("/{path}")
        };
        // `user@host` would name the host after the `@`: refused rather than guessed.
        if authority.is_empty() || authority.contains('@') || authority.contains(' ') {
            return Err(unsupported());
        }
        let (host, port) = match authority.strip_prefix('[') {
            Some(bracketed) => {
                let (host, after) = bracketed.split_once(']').ok_or_else(unsupported)?;
                (host, after.strip_prefix(':'))
            }
            None => match authority.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, None),
            },
        };
        let port = match port {
            Some(port) => port.parse().map_err(|_| unsupported())?,
            None => 80,
        };
        if host.is_empty() {
            return Err(unsupported());
        }
        Ok(Self {
            authority: authority.to_owned(),
            host: host.to_owned(),
            port,
            path,
        })
    }

    /// Where a redirect's `Location` points, from this URL.
    fn resolve(&self, location: &str) -> String {
        if location.contains("://") {
            location.to_owned()
        } else if location.starts_with("//") {
            format!("http:{location}")
        } else if location.starts_with('/') {
            format!("http://{}{location}", self.authority)
        } else {
            let base = self.path.rsplit_once('/').map_or("", |(base, _)| base);
            format!("http://{}{base}/{location}", self.authority)
        }
    }

    /// The address to connect to: every address the host resolves to must be public, unless
    /// the policy lets the host through (then the first one).
    async fn checked_address(&self, policy: &FetchPolicy) -> Result<SocketAddr, ToolError> {
        let resolved: Vec<SocketAddr> = tokio::net::lookup_host((self.host.as_str(), self.port))
            .await
            .map_err(|error| {
                ToolError::new(format!("cannot resolve `{}`: {error}", self.host))
                    .with_code(UNRESOLVED_HOST)
            })?
            .collect();
        let first = *resolved.first().ok_or_else(|| {
            ToolError::new(format!("`{}` resolves to no address", self.host))
                .with_code(UNRESOLVED_HOST)
        })?;
        if policy.allows(&self.host, self.port) {
            return Ok(first);
        }
        // All or none: a name that also resolves privately could be rebound to it.
        if let Some(refused) = resolved.iter().find(|address| !is_public(address.ip())) {
            return Err(ToolError::new(format!(
                "`{}` resolves to {}, in a range this tool does not reach (loopback, private, link-local or reserved)",
                self.host,
                refused.ip()
            ))
            .with_code(FORBIDDEN_ADDRESS));
        }
        Ok(first)
    }
}

/// Whether `ip` is an address of the public internet: not loopback, private, link-local,
/// shared (CGNAT), unspecified, broadcast, multicast, documentation or otherwise reserved; an
/// IPv4 address inside an IPv6 one (mapped, compatible, NAT64, 6to4) is judged as itself.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        // Shared address space (RFC 6598), IETF protocol assignments, benchmarking, reserved.
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (18..20).contains(&b))
        || a >= 240)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let [first, second, ..] = ip.segments();
    // Global unicast only (2000::/3): loopback, unspecified, link- and site-local, unique
    // local, multicast, discard-only, local-use NAT64 and the IPv4-translated lie outside it.
    (first & 0xe000) == 0x2000
        // Teredo, benchmarking, ORCHID and the rest of the IETF protocol assignments
        // (2001::/23), and documentation (2001:db8::/32).
        && !(first == 0x2001 && (second < 0x0200 || second == 0x0db8))
}

/// The IPv4 address an IPv6 one carries, if it carries one: mapped (`::ffff:a.b.c.d`),
/// compatible (`::a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`) or 6to4 (`2002:AABB:CCDD::`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    let segments = ip.segments();
    let octets = ip.octets();
    let tail = Ipv4Addr::new(octets[12], octets[13], octets[14], octets[15]);
    if segments[..6] == [0; 6] && !ip.is_loopback() && !ip.is_unspecified() {
        return Some(tail);
    }
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(tail);
    }
    if segments[0] == 0x2002 {
        return Some(Ipv4Addr::new(octets[2], octets[3], octets[4], octets[5]));
    }
    None
}

async fn get(address: SocketAddr, host: &str, path: &str) -> std::io::Result<Vec<u8>> {
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
    // One pass over the page: `lower` has the page's byte offsets (ASCII lowercasing keeps
    // them), and a closing tag looked for in vain is not looked for again (it is not further
    // on either), so that a page of many `<` costs its length, not its square.
    let mut text = String::new();
    let mut rest = html;
    let mut at = 0;
    let mut unclosed = [false; 3];
    while let Some(open) = rest.find('<') {
        text.push_str(&rest[..open]);
        let tag = &lower[at + open..];
        let skip_to = ["script", "style", "title"]
            .iter()
            .enumerate()
            .find(|(_, name)| tag.get(1..=name.len()).is_some_and(|start| start == **name))
            .and_then(|(kind, name)| {
                if unclosed[kind] {
                    return None;
                }
                let end = tag.find(&format!("</{name}>"));
                unclosed[kind] = end.is_none();
                end.map(|end| end + name.len() + 3)
            });
        let consumed = skip_to
            .or_else(|| tag.find('>').map(|end| end + 1))
            .unwrap_or(tag.len());
        text.push(' ');
        rest = &rest[open + consumed..];
        at += open + consumed;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_addresses_are_reached_whatever_their_form() {
        for refused in [
            "127.0.0.1",
            "127.9.9.9",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "192.0.2.1",
            "240.0.0.1",
            "::1",
            "::",
            "fe80::1",
            "fc00::1",
            "fd12:3456::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::10.0.0.1",
            "64:ff9b::7f00:1",
            "2002:7f00:1::",
            "2001:db8::1",
            "fec0::1",
        ] {
            assert!(!is_public(refused.parse().unwrap()), "{refused}");
        }
        for public in [
            "93.184.216.34",
            "8.8.8.8",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn urls_are_taken_apart_and_anything_ambiguous_refused() {
        let target = Target::parse("http://[::1]:8080/a?b#c").unwrap();
        assert_eq!(
            (target.host.as_str(), target.port, target.path.as_str()),
            ("::1", 8080, "/a?b")
        );
        let target = Target::parse("HTTP://example.com").unwrap();
        assert_eq!(
            (target.host.as_str(), target.port, target.path.as_str()),
            ("example.com", 80, "/")
        );
        for refused in [
            "https://x",
            "http://",
            "http://user@evil",
            "http://[::1",
            "http://x:port/",
        ] {
            assert!(Target::parse(refused).is_err(), "{refused}");
        }
        let target = Target::parse("http://a.example/dir/page").unwrap();
        assert_eq!(target.resolve("/root"), "http://a.example/root");
        assert_eq!(target.resolve("next"), "http://a.example/dir/next");
        assert_eq!(target.resolve("//b.example/x"), "http://b.example/x");
    }

    #[test]
    fn a_page_is_read_in_one_pass_whatever_its_tags() {
        let (title, text) = html_text("<TITLE>T</title><script>x<y</script>a<b>c<style>");
        assert_eq!((title.as_deref(), text.as_str()), (Some("T"), "a c"));
        // Many openings with no closing: every one is text, once.
        let page = "<script <style ".repeat(20_000);
        assert_eq!(html_text(&page).1, "");
    }

    #[test]
    fn an_allowed_host_is_let_through_by_name_or_with_its_port() {
        let policy = FetchPolicy::default()
            .allow("Intranet")
            .allow("127.0.0.1:8080");
        assert!(policy.allows("intranet", 1));
        assert!(policy.allows("127.0.0.1", 8080));
        assert!(!policy.allows("127.0.0.1", 8081));
    }
}
