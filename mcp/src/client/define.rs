//! A remote tool's definition as a toolprism tool: its name, schemas (validated here when
//! they can be), what it says of itself, and the handler that calls it.

use std::sync::Arc;

use rmcp::model::Tool;
use serde_json::Value;
use toolprism::present::is_media_type;
use toolprism::schema::{check_input_schema, check_output_schema};
use toolprism::tool::{Icon, IconTheme, ToolAbout};
use toolprism::{ToolContext, ToolDef, ToolError};

use super::call::{OutputShape, Remote};
use super::shared::{ClientShared, RemoteTool};
use crate::wire::schema::unwrap;

/// `held`: the refusal every call gets, for a tool shown as pinned while its server lists
/// another definition.
pub(super) fn remote_tool_def(
    local: String,
    tool: Tool,
    shared: &ClientShared,
    held: Option<String>,
) -> (RemoteTool, ToolDef) {
    let (peer, progress) = (shared.peer.clone(), shared.progress.clone());
    let in_flight = shared.in_flight.clone();
    let timeout = shared.options.call_timeout;
    let remote_name = tool.name.to_string();
    let mut about = remote_about(&tool);
    about.namespace.clone_from(&shared.options.namespace);
    about.defer_loading = shared.options.defer_loading;
    let input = Value::Object(Arc::unwrap_or_clone(tool.input_schema));
    let input_validated = check_input_schema(&input).is_ok();
    let declared = tool
        .output_schema
        .map(|schema| Value::Object(Arc::unwrap_or_clone(schema)));
    let (output_schema, shape) = match declared {
        Some(schema) => match unwrap(&schema) {
            Some(inner) if check_output_schema(&inner).is_ok() => (inner, OutputShape::Wrapped),
            None if check_output_schema(&schema).is_ok() => (schema, OutputShape::Typed),
            _ => (Value::Bool(true), OutputShape::Untyped),
        },
        None => (Value::Bool(true), OutputShape::Untyped),
    };
    let output_validated = !matches!(shape, OutputShape::Untyped);

    let wire_name = remote_name.clone();
    let builder = ToolDef::builder(local.clone())
        .description(
            tool.description
                .map(std::borrow::Cow::into_owned)
                .unwrap_or_default(),
        )
        .input_schema(if input_validated {
            input.clone()
        } else {
            serde_json::json!({"type": "object"})
        })
        .output_schema(output_schema)
        .presented_handler(move |args: Value, cx: ToolContext| {
            let remote = Remote {
                peer: peer.clone(),
                progress: progress.clone(),
                in_flight: in_flight.clone(),
                timeout,
            };
            let name = wire_name.clone();
            let shape = shape.clone();
            let held = held.clone();
            async move {
                if let Some(refusal) = held {
                    return Err(ToolError::new(refusal).with_code(crate::DEFINITION_CHANGED));
                }
                remote.call(name, args, cx, &shape).await
            }
        });
    let mut def = builder.build().with_about(about);
    if !input_validated {
        def = def.with_advertised_input_schema(input);
    }
    (
        RemoteTool {
            local_name: local,
            remote_name,
            input_validated,
            output_validated,
        },
        def,
    )
}

/// The most icons kept of an imported tool, and the longest title and icon address.
pub(super) const MAX_REMOTE_ICONS: usize = 8;
pub(super) const MAX_REMOTE_TITLE: usize = 200;
pub(super) const MAX_REMOTE_ICON_SRC: usize = 2_048;

/// What a remote tool says of itself: its title, hints and icons, kept as the server's hints —
/// nothing here trusts them for a decision. What registration would refuse is left out rather
/// than refusing the tool: a title past 200 characters is cut (and left out if what remains
/// is blank), icons past 8 or whose address is not http(s) or data: (or past 2,048 bytes) are
/// dropped, a media type or size registration would refuse is left out of its icon, and hints
/// that contradict each other (read-only and destructive) say neither.
pub(super) fn remote_about(tool: &Tool) -> ToolAbout {
    let mut about = ToolAbout::default();
    let annotations = tool.annotations.as_ref();
    about.title = tool
        .title
        .clone()
        .or_else(|| annotations.and_then(|annotations| annotations.title.clone()))
        .map(|title| title.chars().take(MAX_REMOTE_TITLE).collect::<String>())
        .filter(|title| !title.trim().is_empty());
    if let Some(annotations) = annotations {
        about.hints.read_only = annotations.read_only_hint;
        about.hints.destructive = annotations.destructive_hint;
        about.hints.idempotent = annotations.idempotent_hint;
        about.hints.open_world = annotations.open_world_hint;
        if about.hints.read_only == Some(true) && about.hints.destructive == Some(true) {
            about.hints.read_only = None;
            about.hints.destructive = None;
        }
    }
    for icon in tool.icons.iter().flatten().take(MAX_REMOTE_ICONS) {
        let scheme_ok = ["https://", "http://", "data:"]
            .iter()
            .any(|scheme| icon.src.starts_with(scheme));
        if !scheme_ok || icon.src.len() > MAX_REMOTE_ICON_SRC {
            continue;
        }
        let mut kept = Icon::new(icon.src.clone());
        if let Some(mime) = icon
            .mime_type
            .as_ref()
            .filter(|mime| mime.len() <= 128 && is_media_type(mime))
        {
            kept = kept.with_mime_type(mime.clone());
        }
        for size in icon.sizes.iter().flatten().take(8) {
            let fine = size == "any"
                || size.split_once('x').is_some_and(|(width, height)| {
                    !width.is_empty()
                        && !height.is_empty()
                        && width.len() <= 6
                        && height.len() <= 6
                        && width
                            .bytes()
                            .chain(height.bytes())
                            .all(|b| b.is_ascii_digit())
                });
            if fine {
                kept = kept.with_size(size.clone());
            }
        }
        if let Some(theme) = icon.theme {
            kept = kept.with_theme(match theme {
                rmcp::model::IconTheme::Dark => IconTheme::Dark,
                _ => IconTheme::Light,
            });
        }
        about.icons.push(kept);
    }
    // Whatever else registration would refuse in them, the title and icons go, not the tool.
    if about.check().is_err() {
        about.title = None;
        about.icons.clear();
    }
    about
}
