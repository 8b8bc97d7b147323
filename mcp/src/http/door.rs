//! What a client may send the HTTP endpoint: a request's head and body, bounded in size and in
//! time, and the body read within those bounds only when someone needs it (after the token is
//! checked, when there is one to check). A body of many small values (a 4 MiB array of zeros
//! decodes into some 400 MB at its peak as rmcp reads it: `tests/body_memory.rs`) is heavy:
//! at most [`MAX_HEAVY_BODIES`] of those are decoded and held at once, so that a burst of 16
//! stays within a 1 GiB host.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use http_body_util::BodyExt as _;
use tokio::sync::Semaphore;

/// How long a client has to send a request's head (line and headers), from when the connection
/// opened or its previous response ended; a connection that sends none in time is closed.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// The most a request's head may weigh, its line included; a bigger one is refused with `431`.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;
/// The most headers a request may have (`431` past it).
pub const MAX_HEADERS: usize = 100;
/// How long a request body may take to arrive, whole; a slower one fails the request (`408`).
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// The biggest request body taken (rmcp's own limit); a bigger one is refused (`413`).
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// How long stopping a server waits for the requests in flight (a client that stops reading
/// its answer would hold it forever).
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// A body holding more JSON values than this is heavy: decoded, it takes some 190 bytes per
/// value at its peak where its text took 2.
pub const HEAVY_BODY_VALUES: usize = 64 * 1024;
/// The most heavy bodies decoded and held at once; more wait their turn (within the body's
/// time), each holding its place until its response has been sent.
pub const MAX_HEAVY_BODIES: usize = 2;

/// What the door keeps between requests: the room for heavy bodies.
pub(crate) struct Door {
    heavy: Arc<Semaphore>,
}

impl Door {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            heavy: Arc::new(Semaphore::new(MAX_HEAVY_BODIES)),
        })
    }
}

/// About how many JSON values `body` holds: the structural characters outside strings (a
/// bound on the values, read without decoding anything).
pub(crate) fn count_values(body: &[u8]) -> usize {
    let (mut values, mut in_string, mut escaped) = (1_usize, false, false);
    for &byte in body {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match byte {
                b'"' => in_string = true,
                // A comma, `[` or `{` (written as its code, which line counters read as a brace).
                b',' | b'[' | b'\x7b' => values += 1,
                _ => {}
            }
        }
    }
    values
}

/// A request's body, whole, within [`BODY_READ_TIMEOUT`] and [`MAX_BODY_BYTES`]; otherwise the
/// answer to send instead (`408`, `413`, or `400` for a body that broke off or is malformed).
pub(crate) async fn read_body(body: Body) -> Result<Bytes, Response> {
    match tokio::time::timeout(
        BODY_READ_TIMEOUT,
        axum::body::to_bytes(body, MAX_BODY_BYTES),
    )
    .await
    {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(error)) => {
            let too_large = std::error::Error::source(&error)
                .is_some_and(<dyn std::error::Error>::is::<http_body_util::LengthLimitError>);
            Err(if too_large {
                StatusCode::PAYLOAD_TOO_LARGE
            } else {
                StatusCode::BAD_REQUEST
            }
            .into_response())
        }
        Err(_) => Err(StatusCode::REQUEST_TIMEOUT.into_response()),
    }
}

/// Reads the body within its bounds before the endpoint sees the request; a heavy one waits
/// for room (within [`BODY_READ_TIMEOUT`], `503` past it) and holds it until its response has
/// been sent.
pub(crate) async fn bounded_body(
    State(door): State<Arc<Door>>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = match read_body(body).await {
        Ok(bytes) => bytes,
        Err(refused) => return refused,
    };
    if count_values(&bytes) <= HEAVY_BODY_VALUES {
        return next
            .run(Request::from_parts(parts, Body::from(bytes)))
            .await;
    }
    let room = tokio::time::timeout(BODY_READ_TIMEOUT, door.heavy.clone().acquire_owned()).await;
    let Ok(Ok(room)) = room else {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    };
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    // Held with the body: a streamed response keeps the decoded request alive until it ends.
    response.map(|body| {
        Body::new(body.map_frame(move |frame| {
            let _held = &room;
            frame
        }))
    })
}

#[cfg(test)]
mod tests {
    use super::count_values;

    #[test]
    fn values_are_counted_outside_strings_only() {
        assert_eq!(count_values(b"0"), 1);
        assert_eq!(count_values(b"[0,0,0]"), 4);
        assert_eq!(count_values(br#"{"a":[1,{"b":2}]}"#), 5);
        // Commas and brackets inside strings, escaped quotes included, are text.
        assert_eq!(count_values(br#"["a,[{", "\",]"]"#), 3);
    }
}
