//! `tools openapi SPEC [--base-url URL] [--secret SCHEME=VAR]… COMMAND`: an HTTP API's OpenAPI
//! document as the registry the other commands (`list`, `schema`, `call`, `serve`, …) work on.

use std::time::Duration;

use clap::Parser;
use toolprism::Registry;
use toolprism_openapi::{Credentials, Document, OpenApi, Secret};

/// What `tools openapi` takes before the command it runs.
#[derive(Debug, Parser)]
#[command(
    name = "tools openapi",
    about = "An HTTP API's OpenAPI 3.0 or 3.1 document as tools: list, schema, call, serve them."
)]
struct OpenApiArgs {
    /// The document: a file (JSON or YAML) or an http(s) URL.
    spec: String,
    /// Where requests go (default: the document's first server, when it is absolute).
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// The secret for the security scheme SCHEME, read from the environment variable VAR
    /// (never from the command line, where other users could see it).
    #[arg(long = "secret", value_name = "SCHEME=VAR")]
    secrets: Vec<String>,
    /// How long one request may take, in seconds.
    #[arg(long, default_value_t = 30, value_name = "SECONDS")]
    timeout: u64,
    /// The command and its arguments (`list`, `call TOOL ARGS`, `serve`, …).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
    command: Vec<String>,
}

/// The registry of the document's tools, and the command line to run over it (its first
/// item the program name). Operations skipped are reported on standard error.
pub fn registry<I, T>(args: I) -> Result<(Registry, Vec<String>), String>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let parsed = OpenApiArgs::try_parse_from(args).map_err(|error| error.to_string())?;
    let document = if parsed.spec.starts_with("http://") || parsed.spec.starts_with("https://") {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| error.to_string())?
            .block_on(Document::from_url(&parsed.spec))
    } else {
        Document::from_file(parsed.spec.as_ref())
    }
    .map_err(|error| error.to_string())?;
    let mut credentials = Credentials::new();
    for pair in &parsed.secrets {
        let (scheme, variable) = pair
            .split_once('=')
            .ok_or_else(|| format!("--secret {pair}: expected SCHEME=VAR"))?;
        let secret = Secret::from_env(variable).ok_or_else(|| {
            format!("--secret {scheme}: the environment variable {variable} is not set")
        })?;
        credentials = credentials.with(scheme, secret);
    }
    let mut openapi = OpenApi::new(document)
        .credentials(credentials)
        .timeout(Duration::from_secs(parsed.timeout));
    if let Some(base) = parsed.base_url {
        openapi = openapi.base_url(base);
    }
    let generated = openapi.build().map_err(|error| error.to_string())?;
    for skipped in generated.skipped.iter().filter(|skipped| !skipped.excluded) {
        eprintln!(
            "skipped {} {}: {}",
            skipped.method,
            crate::visible::visible(&skipped.path),
            crate::visible::visible(&skipped.reason)
        );
    }
    let registry = Registry::builder()
        .tools(generated.tools)
        .build()
        .map_err(|error| error.to_string())?;
    let mut command = vec!["tools openapi".to_owned()];
    command.extend(parsed.command);
    Ok((registry, command))
}
