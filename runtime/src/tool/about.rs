//! What a tool says about itself besides its name and schemas: a title, behaviour hints,
//! icons, example arguments, a timeout, whether it is loaded on demand, who may call it, and
//! whether a call may outlive the request that made it (an MCP task).
//! Hosts read these to decide what needs the user's approval and what to show; providers and
//! MCP peers get them where they have a field for them.

use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

/// What a tool says about itself. Built with the `with_…` methods of [`ToolDef`](super::ToolDef)
/// (or `#[tool(...)]` options); read from [`AdvertisedTool::about`](super::AdvertisedTool::about).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ToolAbout {
    /// A human-readable name for a UI (`"Read file"`); the name stays what the model calls.
    pub title: Option<String>,
    /// What calling it does, as hints a host may weigh (never guarantees: an imported tool's
    /// hints come from a server nobody here controls).
    pub hints: Hints,
    /// Icons a UI may show beside it.
    pub icons: Vec<Icon>,
    /// Example arguments, each valid against the input schema (checked at registration).
    pub examples: Vec<Value>,
    /// How long a call may run before its body is dropped (where it awaits) and it fails with
    /// `TOOL_TIMEOUT`.
    pub timeout: Option<Duration>,
    /// Left out of the first request and found through tool search (it stays callable).
    pub defer_loading: bool,
    /// Who may call it: the model, programs (Code Mode, a provider's code execution), or both.
    pub callers: Callers,
    /// The group OpenAI Responses shows it in.
    pub namespace: Option<Namespace>,
    /// Whether a call may run on as a task its caller polls (MCP's tasks extension).
    pub task: TaskSupport,
    /// The OAuth scopes a caller needs (an MCP server behind authorization refuses a token
    /// without them, and lists the tool only to one that has them).
    pub scopes: Vec<String>,
    /// The resource a call touches, named from its arguments
    /// ([`effects`](crate::effects)): calls on different resources may overlap even when
    /// they write.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource: Option<crate::effects::ResourceTemplate>,
    /// It is a tool search ([`ToolSearch`](crate::search::ToolSearch)): lowered for OpenAI
    /// Responses as its client-side `tool_search` tool.
    #[serde(skip)]
    pub(crate) tool_search: bool,
}

/// What calling a tool does, in MCP's four hints. `None` says nothing (MCP's defaults then
/// apply: not read-only, destructive, not idempotent, open-world).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Hints {
    /// It changes nothing.
    pub read_only: Option<bool>,
    /// It may destroy or overwrite something (meaningful when not read-only).
    pub destructive: Option<bool>,
    /// Calling it twice with the same arguments does what calling it once does.
    pub idempotent: Option<bool>,
    /// It reaches beyond a closed set of things (the web, a shell).
    pub open_world: Option<bool>,
}

impl Hints {
    /// Whether any hint is said.
    pub fn is_empty(&self) -> bool {
        self.read_only.is_none()
            && self.destructive.is_none()
            && self.idempotent.is_none()
            && self.open_world.is_none()
    }
}

/// An icon: where it is, and what it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Icon {
    /// An `https:` or `http:` URL, or a `data:` URI.
    pub src: String,
    /// Its media type (`image/png`).
    pub mime_type: Option<String>,
    /// Sizes it suits: `"48x48"`, or `"any"` for a vector icon.
    pub sizes: Vec<String>,
    /// The theme it is drawn for.
    pub theme: Option<IconTheme>,
}

impl Icon {
    /// An icon at `src`.
    pub fn new(src: impl Into<String>) -> Self {
        Self {
            src: src.into(),
            mime_type: None,
            sizes: Vec::new(),
            theme: None,
        }
    }

    /// With its media type.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// With a size it suits (`"48x48"`, `"any"`).
    #[must_use]
    pub fn with_size(mut self, size: impl Into<String>) -> Self {
        self.sizes.push(size.into());
        self
    }

    /// Drawn for this theme.
    #[must_use]
    pub fn with_theme(mut self, theme: IconTheme) -> Self {
        self.theme = Some(theme);
        self
    }
}

/// The theme an icon is drawn for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum IconTheme {
    /// For a light background.
    Light,
    /// For a dark background.
    Dark,
}

/// A group of tools OpenAI Responses shows the model together, under the group's name and
/// description (a `namespace` tool); the tools keep their own names, and a call to one is
/// dispatched by its name. Other providers have no groups: there the tools are listed as
/// they are.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Namespace {
    /// Its name, under the rule tool names follow (`crm`).
    pub name: String,
    /// What its tools are for, shown to the model.
    pub description: String,
}

impl Namespace {
    /// A group named `name`, described by `description`.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
        }
    }
}

/// Who may call a tool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Callers {
    /// The model, and programs (the default).
    #[default]
    Both,
    /// The model only (direct calls): left out of Code Mode's declarations, refused to a
    /// nested call.
    Direct,
    /// Programs only (Code Mode, a provider's code execution): not offered to the model,
    /// refused to a direct call.
    Programs,
}

/// Whether a call of a tool may run on as a task: the request that made it is answered at
/// once with the task's id, and its caller polls for the result (MCP's
/// `io.modelcontextprotocol/tasks` extension). Only a host that runs tasks reads it; a direct
/// dispatch waits for the result whatever it says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskSupport {
    /// The call is answered when it ends (the default). Its body may still ask to run on
    /// ([`ToolContext::detach`](crate::ToolContext::detach)).
    #[default]
    Never,
    /// A task from its start for a caller that takes tasks; answered when it ends otherwise.
    Optional,
    /// A task from its start; a caller that does not take tasks is refused.
    Required,
}

impl Callers {
    /// Whether the model may call the tool directly.
    pub fn direct(self) -> bool {
        self != Self::Programs
    }

    /// Whether a program may call the tool (a nested call).
    pub fn programs(self) -> bool {
        self != Self::Direct
    }
}

impl ToolAbout {
    /// What a call of the tool does with these arguments, as it declares
    /// ([`effects`](crate::effects)): a read when it says it is read-only, a write otherwise;
    /// on the resource its template names.
    pub fn effect_of(&self, arguments: &Value) -> crate::effects::Effect {
        use crate::effects::Effect;
        let resource = self
            .resource
            .as_ref()
            .and_then(|template| template.resource(arguments));
        if self.hints.read_only == Some(true) {
            Effect::read(resource)
        } else {
            Effect::write(resource)
        }
    }

    /// Why registration would refuse this account of a tool: a tool both read-only and
    /// destructive, an empty title, an icon whose address is not http(s) or `data:`, whose
    /// media type is not `type/subtype` or whose size is not `WIDTHxHEIGHT` or `any`, a zero
    /// timeout, a namespace without a valid name or a description.
    pub fn check(&self) -> Result<(), String> {
        check(self)
    }
}

/// Why a tool's account of itself is refused at registration.
pub(crate) fn check(about: &ToolAbout) -> Result<(), String> {
    for scope in &about.scopes {
        if !crate::access::is_valid_scope(scope) {
            return Err(format!(
                "its scope `{}` is not printable ASCII without spaces, `\"` or `\\`",
                crate::text::printable(scope, 80)
            ));
        }
    }
    if about.hints.read_only == Some(true) && about.hints.destructive == Some(true) {
        return Err("it says it is both read-only and destructive".to_owned());
    }
    if about
        .title
        .as_ref()
        .is_some_and(|title| title.trim().is_empty())
    {
        return Err("its title is empty".to_owned());
    }
    for (at, icon) in about.icons.iter().enumerate() {
        let scheme_ok = ["https://", "http://", "data:"]
            .iter()
            .any(|scheme| icon.src.starts_with(scheme));
        if !scheme_ok {
            return Err(format!(
                "icon {at} is not an http(s) URL or a data: URI: `{}`",
                crate::text::printable(&icon.src, 80)
            ));
        }
        if let Some(mime) = &icon.mime_type
            && !crate::present::is_media_type(mime)
        {
            return Err(format!(
                "icon {at}'s media type is not type/subtype: `{}`",
                crate::text::printable(mime, 80)
            ));
        }
        for size in &icon.sizes {
            let fine = size == "any"
                || size.split_once('x').is_some_and(|(width, height)| {
                    !width.is_empty()
                        && !height.is_empty()
                        && width.bytes().all(|b| b.is_ascii_digit())
                        && height.bytes().all(|b| b.is_ascii_digit())
                });
            if !fine {
                return Err(format!(
                    "icon {at}'s size is not WIDTHxHEIGHT or `any`: `{}`",
                    crate::text::printable(size, 80)
                ));
            }
        }
    }
    if about.timeout.is_some_and(|timeout| timeout.is_zero()) {
        return Err("its timeout is zero".to_owned());
    }
    if let Some(namespace) = &about.namespace {
        if !super::is_valid_tool_name(&namespace.name) {
            return Err(format!(
                "its namespace's name `{}` is not 1 to 64 of [a-zA-Z0-9_-]",
                crate::text::printable(&namespace.name, 80)
            ));
        }
        if namespace.description.trim().is_empty() {
            return Err(format!(
                "its namespace `{}` has no description",
                namespace.name
            ));
        }
    }
    Ok(())
}
