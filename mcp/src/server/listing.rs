//! What `tools/list` shows: the registry's definitions in MCP's form, for each protocol
//! generation, built once per registry generation.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use toolprism::lower::description_with_examples;
use toolprism::pipeline::Snapshot;
use toolprism::tool::{IconTheme, ToolAbout};

use crate::wire::schema::{as_object, legacy_form, wrap};

/// The advertised tools of one registry generation, for each protocol generation.
pub(super) struct ToolLists {
    pub(super) generation: u64,
    /// 2026-07-28: schemas as registered.
    pub(super) current: Vec<Tool>,
    /// 2025-11-25: output schemas object-rooted, wrapped where they were not.
    pub(super) legacy: Vec<Tool>,
}

impl ToolLists {
    /// The lists of `snapshot`'s generation.
    pub(super) fn of(snapshot: &Snapshot) -> Self {
        let mut current = Vec::with_capacity(snapshot.definitions().len());
        let mut legacy = Vec::with_capacity(snapshot.definitions().len());
        // A tool only programs may call is not offered to an MCP host's model.
        for definition in snapshot
            .definitions()
            .filter(|definition| definition.about().callers.direct())
        {
            let (input, output) = (definition.input_schema(), definition.output_schema());
            let tool = |input: JsonObject, output: JsonObject| {
                about_tool(
                    Tool::new_with_raw(
                        definition.name().to_owned(),
                        Some(description_with_examples(definition).into_owned().into()),
                        Arc::new(input),
                    )
                    .with_raw_output_schema(Arc::new(output)),
                    definition.about(),
                )
            };
            let legacy_output = if definition.output_is_object() {
                legacy_form(output)
            } else {
                wrap(output)
            };
            legacy.push(tool(legacy_form(input), legacy_output));
            current.push(tool(as_object(input), as_object(output)));
        }
        Self {
            generation: snapshot.generation(),
            current,
            legacy,
        }
    }
}

/// A tool's title, hints and icons, in MCP's fields (the same at both protocol generations).
fn about_tool(mut tool: Tool, about: &ToolAbout) -> Tool {
    if let Some(title) = &about.title {
        tool = tool.with_title(title.clone());
    }
    let hints = about.hints;
    if !hints.is_empty() {
        let mut annotations = ToolAnnotations::new();
        if let Some(value) = hints.read_only {
            annotations = annotations.read_only(value);
        }
        if let Some(value) = hints.destructive {
            annotations = annotations.destructive(value);
        }
        if let Some(value) = hints.idempotent {
            annotations = annotations.idempotent(value);
        }
        if let Some(value) = hints.open_world {
            annotations = annotations.open_world(value);
        }
        tool = tool.with_annotations(annotations);
    }
    if !about.icons.is_empty() {
        let icons = about
            .icons
            .iter()
            .map(|icon| {
                let mut mcp_icon = rmcp::model::Icon::new(icon.src.clone());
                if let Some(mime) = &icon.mime_type {
                    mcp_icon = mcp_icon.with_mime_type(mime.clone());
                }
                if !icon.sizes.is_empty() {
                    mcp_icon = mcp_icon.with_sizes(icon.sizes.clone());
                }
                if let Some(theme) = icon.theme {
                    mcp_icon = mcp_icon.with_theme(match theme {
                        IconTheme::Dark => rmcp::model::IconTheme::Dark,
                        _ => rmcp::model::IconTheme::Light,
                    });
                }
                mcp_icon
            })
            .collect();
        tool = tool.with_icons(icons);
    }
    tool
}
