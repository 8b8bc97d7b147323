//! A call: the request built from validated arguments, sent with a real HTTP client within a
//! time and a response size, and the response read back as the tool's value. A status other
//! than 2xx is the tool's failure, carrying the status and the API's body.

use std::collections::HashMap;
use std::time::Duration;

use base64::Engine as _;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Client, Url};
use serde_json::{Map, Value, json};
use toolprism::ToolError;

use crate::auth::{self, Credentials, Requirements};
use crate::document::cut;
use crate::encode;
use crate::operation::{Argument, Location, is_json};
use crate::routes::Method;

/// What starts a JSON object or a path template's parameter.
const OPEN_BRACE: char = '{';

/// The most of an error response's body read and quoted in the tool's failure.
pub const MAX_ERROR_BODY_BYTES: usize = 2 * 1024;
/// The most redirects followed (all to the base URL's origin).
pub const MAX_REDIRECTS: usize = 5;

/// What a call of an operation needs from its plan.
pub(crate) struct Endpoint {
    pub(crate) method: Method,
    pub(crate) path: String,
    pub(crate) arguments: Vec<Argument>,
    pub(crate) body_media: Option<String>,
    /// The operation requires a body: one is sent even when no field of it was given.
    pub(crate) body_required: bool,
    pub(crate) security: Requirements,
}

/// What every call of one document shares: the client, the base URL and the credentials.
pub(crate) struct Connection {
    pub(crate) client: Client,
    /// Without a trailing `/`: the path is appended to it.
    pub(crate) base: String,
    pub(crate) origin: reqwest::Url,
    pub(crate) credentials: Credentials,
    pub(crate) max_response_bytes: usize,
}

impl Connection {
    pub(crate) fn new(
        base: &str,
        credentials: Credentials,
        timeout: Duration,
        max_response_bytes: usize,
    ) -> Result<Self, String> {
        let origin = Url::parse(base).map_err(|error| format!("the base URL: {error}"))?;
        if !matches!(origin.scheme(), "http" | "https") || origin.host().is_none() {
            return Err("the base URL is not an http(s) URL with a host".to_owned());
        }
        if origin.query().is_some() || origin.fragment().is_some() || !origin.username().is_empty()
        {
            return Err("the base URL has a query, a fragment or credentials".to_owned());
        }
        let home = origin.clone();
        let client = Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .redirect(reqwest::redirect::Policy::custom(move |attempt| {
                // `previous()` holds every URL asked for so far, this one's source included.
                if attempt.previous().len() > MAX_REDIRECTS {
                    attempt.error("too many redirects")
                } else if attempt.url().origin() == home.origin() {
                    attempt.follow()
                } else {
                    // Another host: the 3xx is the answer, a failure the model sees.
                    attempt.stop()
                }
            }))
            .build()
            .map_err(|error| error.to_string())?;
        Ok(Self {
            client,
            base: base.trim_end_matches('/').to_owned(),
            origin,
            credentials,
            max_response_bytes,
        })
    }

    /// Calls `endpoint` with `arguments` (already validated against its input schema).
    pub(crate) async fn call(
        &self,
        endpoint: &Endpoint,
        arguments: Value,
    ) -> Result<Value, ToolError> {
        let request = self
            .request(endpoint, arguments)
            .map_err(|error| ToolError::new(error).with_code("INVALID_REQUEST"))?;
        let response = self.client.execute(request).await.map_err(sent_error)?;
        let status = response.status();
        let media = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
            .to_owned();
        if !status.is_success() {
            let body = read_prefix(response, MAX_ERROR_BODY_BYTES + 1).await;
            let text = String::from_utf8_lossy(&body);
            return Err(ToolError::new(format!(
                "{} {} answered {status}{}{}",
                endpoint.method,
                endpoint.path,
                if text.trim().is_empty() { "" } else { ": " },
                cut_bytes_lossy(&text, MAX_ERROR_BODY_BYTES)
            ))
            .with_code(format!("HTTP_{}", status.as_u16())));
        }
        let body = read_bounded(response, self.max_response_bytes)
            .await
            .map_err(|error| ToolError::new(error).with_code("HTTP_RESPONSE_TOO_LARGE"))?;
        value_of(&media, body)
    }

    fn request(&self, endpoint: &Endpoint, arguments: Value) -> Result<reqwest::Request, String> {
        let Placed {
            path,
            mut query,
            mut headers,
            mut cookies,
            fields,
            body,
        } = place(endpoint, arguments)?;
        let applied = auth::apply(&endpoint.security, &self.credentials);
        add_credentials(&applied, &mut headers, &mut query, &mut cookies)?;
        if !cookies.is_empty() {
            headers.append(
                reqwest::header::COOKIE,
                header_value(&cookies.join("; "), true)?,
            );
        }
        let mut url = format!("{}{path}", self.base);
        if !query.is_empty() {
            url.push('?');
            url.push_str(&query.join("&"));
        }
        let url = Url::parse(&url).map_err(|error| format!("the request's URL: {error}"))?;
        if url.origin() != self.origin.origin() {
            return Err("the request's URL leaves the base URL's origin".to_owned());
        }
        let mut request = self
            .client
            .request(endpoint.method.http(), url)
            .headers(headers);
        if let Some(media) = &endpoint.body_media {
            let payload = match body {
                Some(whole) => Some(whole),
                // An optional body none of whose fields were given is not sent.
                None if endpoint.body_required || !fields.is_empty() => Some(Value::Object(fields)),
                None => None,
            };
            if let Some(payload) = payload {
                let media = if media == "*/*" {
                    "application/json"
                } else {
                    media
                };
                request = request
                    .header(reqwest::header::CONTENT_TYPE, media)
                    .body(payload.to_string());
            }
        }
        request
            .build()
            .map_err(|error| error.without_url().to_string())
    }
}

/// The chosen credentials on the request, where no argument has put a value already: the
/// model may not replace a secret with one of its own.
fn add_credentials(
    applied: &auth::Applied,
    headers: &mut HeaderMap,
    query: &mut Vec<String>,
    cookies: &mut Vec<String>,
) -> Result<(), String> {
    let taken =
        |list: &[String], wire: &str| list.iter().any(|pair| pair_name(pair) == pair_name(wire));
    for (name, secret) in &applied.headers {
        let name = header_name(name)?;
        if headers.contains_key(&name) {
            return Err(carries_credentials("header", name.as_str()));
        }
        headers.append(name, header_value(secret, true)?);
    }
    for (name, secret) in &applied.query {
        let secret = Value::from(secret.as_str());
        let pairs = encode::query_pairs(name, &secret, encode::Style::Form, true)?;
        if pairs.iter().any(|pair| taken(query, pair)) {
            return Err(carries_credentials("query parameter", name));
        }
        query.extend(pairs);
    }
    for (name, secret) in &applied.cookies {
        let pair = encode::cookie_pair(name, &Value::from(secret.as_str()))?;
        if taken(cookies, &pair) {
            return Err(carries_credentials("cookie", name));
        }
        cookies.push(pair);
    }
    Ok(())
}

/// The arguments in their places on the request, encoded.
struct Placed {
    path: String,
    query: Vec<String>,
    headers: HeaderMap,
    cookies: Vec<String>,
    fields: Map<String, Value>,
    body: Option<Value>,
}

fn place(endpoint: &Endpoint, arguments: Value) -> Result<Placed, String> {
    let Value::Object(mut arguments) = arguments else {
        return Err("the arguments are not an object".to_owned());
    };
    let mut placed = Placed {
        path: endpoint.path.clone(),
        query: Vec::new(),
        headers: HeaderMap::new(),
        cookies: Vec::new(),
        fields: Map::new(),
        body: None,
    };
    // Which argument sets each query parameter: a free-form object's keys may not take a
    // declared parameter's name (and so escape its schema) or another object's.
    let mut query_names: HashMap<String, &str> = endpoint
        .arguments
        .iter()
        .filter(|argument| argument.location == Location::Query)
        .map(|argument| (encode::encoded(&argument.wire), argument.key.as_str()))
        .collect();
    for argument in &endpoint.arguments {
        let Some(value) = arguments.remove(&argument.key) else {
            continue;
        };
        let value = if argument.as_json {
            Value::String(value.to_string())
        } else {
            value
        };
        let name = &argument.wire;
        let (style, explode) = (argument.style, argument.explode);
        match argument.location {
            Location::Path => {
                let text = encode::path_value(name, &value, style, explode)?;
                placed.path = placed.path.replace(&format!("{{{name}}}"), &text);
            }
            // An optional parameter given as `null`: left out.
            _ if value.is_null() && argument.location != Location::BodyField => {}
            Location::Query => {
                let pairs = encode::query_pairs(name, &value, style, explode)?;
                claim_query_names(&mut query_names, &argument.key, &pairs)?;
                placed.query.extend(pairs);
            }
            Location::Header => {
                let text = encode::header_value(name, &value, explode)?;
                placed
                    .headers
                    .append(header_name(name)?, header_value(&text, false)?);
            }
            Location::Cookie => placed.cookies.push(encode::cookie_pair(name, &value)?),
            Location::BodyField => {
                placed.fields.insert(name.clone(), value);
            }
            Location::Body => placed.body = Some(value),
        }
    }
    encode::check_segments(&endpoint.path, &placed.path)?;
    if let Some(open) = placed.path.find(OPEN_BRACE) {
        return Err(format!(
            "the path argument for {} is missing",
            cut(&placed.path[open..], 64)
        ));
    }
    if let Some(extra) = arguments.keys().next() {
        return Err(format!(
            "the argument `{}` is not a parameter",
            cut(extra, 64)
        ));
    }
    Ok(placed)
}

/// Records `key` as the argument setting each of `pairs`' names; one another argument owns
/// is refused.
fn claim_query_names<'a>(
    owners: &mut HashMap<String, &'a str>,
    key: &'a str,
    pairs: &[String],
) -> Result<(), String> {
    for pair in pairs {
        let owner = owners.entry(pair_name(pair).to_owned()).or_insert(key);
        if *owner != key {
            return Err(format!(
                "the argument `{key}` sets the query parameter `{}`, which is `{owner}`'s",
                cut(pair_name(pair), 64)
            ));
        }
    }
    Ok(())
}

/// A `name=value` pair's name, as encoded.
fn pair_name(pair: &str) -> &str {
    pair.split_once('=').map_or(pair, |(name, _)| name)
}

fn carries_credentials(kind: &str, name: &str) -> String {
    format!(
        "the {kind} `{}` carries the credentials: an argument may not set it",
        cut(name, 64)
    )
}

fn header_name(name: &str) -> Result<HeaderName, String> {
    HeaderName::from_bytes(name.as_bytes())
        .map_err(|_| format!("`{}` is not a header name", cut(name, 64)))
}

fn header_value(text: &str, sensitive: bool) -> Result<HeaderValue, String> {
    let mut value = HeaderValue::from_str(text)
        .map_err(|_| "a header value holds a character a header cannot carry".to_owned())?;
    value.set_sensitive(sensitive);
    Ok(value)
}

/// A failure to send or read: never with the URL, which may carry an API key.
fn sent_error(error: reqwest::Error) -> ToolError {
    let code = if error.is_timeout() {
        "HTTP_TIMEOUT"
    } else if error.is_connect() {
        "HTTP_UNREACHABLE"
    } else if error.is_redirect() {
        "HTTP_REDIRECT"
    } else {
        "HTTP_FAILED"
    };
    let error = error.without_url();
    let mut message = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    ToolError::new(cut(&message, 500)).with_code(code)
}

/// A response's body, up to `max` bytes; past that, why not.
pub(crate) async fn read_bounded(
    response: reqwest::Response,
    max: usize,
) -> Result<Vec<u8>, String> {
    if let Some(length) = response.content_length()
        && length > max as u64
    {
        return Err(format!(
            "the response is {length} bytes, more than the {max} read"
        ));
    }
    let mut body = Vec::new();
    let mut response = response;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| error.without_url().to_string())?
    {
        if body.len() + chunk.len() > max {
            return Err(format!("the response is more than the {max} bytes read"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The first `max` bytes of a response's body (an error's, quoted to the model), whatever its
/// size; a body that fails midway is what was read before.
async fn read_prefix(mut response: reqwest::Response, max: usize) -> Vec<u8> {
    let mut body = Vec::new();
    while body.len() < max {
        let Ok(Some(chunk)) = response.chunk().await else {
            break;
        };
        let room = max - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
    }
    body
}

/// The schema of a binary response's value.
pub(crate) fn binary_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "content_type": {"type": "string"},
            "bytes": {"type": "integer", "minimum": 0},
            "base64": {"type": "string", "contentEncoding": "base64"},
        },
        "required": ["content_type", "bytes", "base64"],
        "additionalProperties": false,
    })
}

/// A 2xx body as the tool's value: JSON as itself, text as a string, nothing as `null`,
/// anything else as its media type, size and bytes in base64.
fn value_of(media: &str, body: Vec<u8>) -> Result<Value, ToolError> {
    if body.is_empty() {
        return Ok(Value::Null);
    }
    if is_json(media) && media != "*/*" {
        return serde_json::from_slice(&body).map_err(|error| {
            ToolError::new(format!("the API's JSON response does not parse: {error}"))
                .with_code("HTTP_INVALID_JSON")
        });
    }
    let textual = media.is_empty() || media.starts_with("text/") || media.contains("xml");
    if textual && let Ok(text) = String::from_utf8(body.clone()) {
        return Ok(Value::String(text));
    }
    Ok(json!({
        "content_type": media,
        "bytes": body.len(),
        "base64": base64::engine::general_purpose::STANDARD.encode(&body),
    }))
}

fn cut_bytes_lossy(text: &str, max: usize) -> String {
    crate::operation::cut_bytes(&cut(text, max), max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::{Placement, Scheme, Secret};

    fn argument(key: &str, location: Location, style: encode::Style, explode: bool) -> Argument {
        Argument {
            key: key.to_owned(),
            wire: key.to_owned(),
            location,
            style,
            explode,
            as_json: false,
        }
    }

    fn endpoint(path: &str, arguments: Vec<Argument>) -> Endpoint {
        Endpoint {
            method: Method::Post,
            path: path.to_owned(),
            arguments,
            body_media: None,
            body_required: false,
            security: Vec::new(),
        }
    }

    fn connection(credentials: Credentials) -> Connection {
        Connection::new(
            "http://127.0.0.1:9/api",
            credentials,
            Duration::from_secs(1),
            1024,
        )
        .unwrap()
    }

    #[test]
    fn arguments_cannot_change_the_path_whatever_the_style() {
        let connection = connection(Credentials::new());
        let label = endpoint(
            "/files/{name}",
            vec![argument(
                "name",
                Location::Path,
                encode::Style::Label,
                false,
            )],
        );
        let error = connection.request(&label, json!({"name": ""})).unwrap_err();
        assert!(error.contains("change the request's path"), "{error}");
        let two = endpoint(
            "/a/{x}{y}/b",
            vec![
                argument("x", Location::Path, encode::Style::Simple, false),
                argument("y", Location::Path, encode::Style::Simple, false),
            ],
        );
        assert!(
            connection
                .request(&two, json!({"x": ".", "y": "."}))
                .is_err()
        );
        let fine = connection
            .request(&two, json!({"x": ".", "y": "x"}))
            .unwrap();
        assert_eq!(fine.url().path(), "/api/a/.x/b");
    }

    #[test]
    fn a_free_form_object_cannot_take_another_parameters_name_or_the_key() {
        let mut search = endpoint(
            "/search",
            vec![
                argument("limit", Location::Query, encode::Style::Form, true),
                argument("filter", Location::Query, encode::Style::Form, true),
            ],
        );
        search.security = vec![vec![Scheme {
            name: "key".to_owned(),
            placement: Placement::Query("api_key".to_owned()),
        }]];
        let connection = connection(Credentials::new().with("key", Secret::new("k")));
        let error = connection
            .request(&search, json!({"filter": {"limit": "100000"}}))
            .unwrap_err();
        assert!(error.contains("which is `limit`'s"), "{error}");
        let error = connection
            .request(&search, json!({"filter": {"api_key": "mine"}}))
            .unwrap_err();
        assert!(error.contains("carries the credentials"), "{error}");
        let fine = connection
            .request(&search, json!({"limit": 3, "filter": {"color": "red"}}))
            .unwrap();
        assert_eq!(fine.url().query(), Some("limit=3&color=red&api_key=k"));
    }

    #[test]
    fn a_header_argument_cannot_replace_the_credentials() {
        let mut keyed = endpoint(
            "/x",
            vec![argument(
                "X-Key",
                Location::Header,
                encode::Style::Simple,
                false,
            )],
        );
        keyed.security = vec![vec![Scheme {
            name: "key".to_owned(),
            placement: Placement::Header("X-Key".to_owned()),
        }]];
        let connection = connection(Credentials::new().with("key", Secret::new("k")));
        let error = connection
            .request(&keyed, json!({"X-Key": "mine"}))
            .unwrap_err();
        assert!(error.contains("carries the credentials"), "{error}");
        let sent = connection.request(&keyed, json!({})).unwrap();
        assert_eq!(sent.headers()["x-key"], "k");
        assert!(sent.headers()["x-key"].is_sensitive());
    }

    #[test]
    fn an_optional_body_none_of_whose_fields_is_given_is_not_sent() {
        let connection = connection(Credentials::new());
        let mut fields = endpoint(
            "/x",
            vec![argument(
                "name",
                Location::BodyField,
                encode::Style::Simple,
                false,
            )],
        );
        fields.body_media = Some("application/json".to_owned());
        let sent = connection.request(&fields, json!({})).unwrap();
        assert!(sent.body().is_none());
        fields.body_required = true;
        let sent = connection.request(&fields, json!({})).unwrap();
        assert_eq!(
            sent.body().and_then(|body| body.as_bytes()),
            Some(&b"{}"[..])
        );
        let sent = connection.request(&fields, json!({"name": "n"})).unwrap();
        assert_eq!(
            sent.body().and_then(|body| body.as_bytes()),
            Some(&br#"{"name":"n"}"#[..])
        );
    }
}
