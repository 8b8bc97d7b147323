//! The MCP server as an OAuth 2.1 resource server, as MCP's authorization specification
//! asks: access tokens accepted only for this resource (RFC 8707 audience), checked as JWTs
//! against the issuer's keys or by introspection; the scopes each tool needs; and the
//! protected-resource metadata (RFC 9728) naming the authorization servers. The caller's
//! claims reach the tools (`cx.extension::<Caller>()`); the token itself is never logged,
//! echoed or kept. The HTTP side (`401`, `403 insufficient_scope`, the metadata routes) is
//! `http::guard`'s.
//!
//! - who a token says made a request is `toolprism::access::Caller`;
//! - `token`: what a validator is, its limits, why a token is refused;
//! - `jwt`, `introspection`: the two validators;
//! - `authorization`: the resource, its issuers and the scopes each tool needs.

pub(crate) mod authorization;
pub(crate) mod introspection;
pub(crate) mod jwt;
pub(crate) mod token;
