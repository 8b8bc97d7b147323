//! What a client may send the HTTP endpoint: a request's head and body, bounded in size and in
//! time, and the body read within those bounds only when someone needs it (after the token is
//! checked, when there is one to check).

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};

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

/// Reads the body within its bounds before the endpoint sees the request.
pub(crate) async fn bounded_body(request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    match read_body(body).await {
        Ok(bytes) => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
        Err(refused) => refused,
    }
}
