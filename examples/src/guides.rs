//! The README and the guides in `docs/`, each the doc comment of an item here, so that every
//! Rust block in them compiles and runs as a doctest: a guide cannot drift from the API.
//! (`tests/docs.rs` checks that every guide is listed.)

#[doc = include_str!("../../README.md")]
pub struct Readme;

#[doc = include_str!("../../docs/writing-tools.md")]
pub struct WritingTools;

#[doc = include_str!("../../docs/pipeline.md")]
pub struct Pipeline;

#[doc = include_str!("../../docs/wrappers-and-policies.md")]
pub struct WrappersAndPolicies;

#[doc = include_str!("../../docs/bounding.md")]
pub struct Bounding;

#[doc = include_str!("../../docs/cards-and-sessions.md")]
pub struct CardsAndSessions;

#[doc = include_str!("../../docs/providers.md")]
pub struct Providers;

#[doc = include_str!("../../docs/mcp.md")]
pub struct Mcp;

#[doc = include_str!("../../docs/code-mode.md")]
pub struct CodeMode;

#[doc = include_str!("../../docs/cli.md")]
pub struct Cli;

#[doc = include_str!("../../docs/integrity.md")]
pub struct Integrity;

#[doc = include_str!("../../docs/telemetry.md")]
pub struct Telemetry;

#[doc = include_str!("../../docs/openapi.md")]
pub struct OpenApi;

#[doc = include_str!("../../docs/performance.md")]
pub struct Performance;

#[doc = include_str!("../../docs/reliability.md")]
pub struct Reliability;

#[doc = include_str!("../../docs/templates.md")]
pub struct Templates;

#[doc = include_str!("../../docs/security.md")]
pub struct Security;
