//! Content blocks between toolprism and MCP: every kind both carry maps one to one, so remote
//! content stays the server's and served content is what the pipeline rendered.

use rmcp::model::{self as mcp, AudioContent, EmbeddedResource, ImageContent, Resource};
use toolprism::ContentBlock;
use toolprism::present::ResourceContents;

/// A toolprism block as MCP content.
pub(crate) fn into_mcp(block: ContentBlock) -> mcp::ContentBlock {
    match block {
        ContentBlock::Text { text } => mcp::ContentBlock::text(text),
        ContentBlock::Image { data, mime_type } => {
            mcp::ContentBlock::Image(ImageContent::new(data, mime_type))
        }
        ContentBlock::Audio { data, mime_type } => {
            mcp::ContentBlock::Audio(AudioContent::new(data, mime_type))
        }
        ContentBlock::Resource {
            uri,
            mime_type,
            name,
        } => {
            let name = name.unwrap_or_else(|| uri.clone());
            let mut link = Resource::new(uri, name);
            link.mime_type = mime_type;
            mcp::ContentBlock::ResourceLink(link)
        }
        ContentBlock::EmbeddedResource {
            uri,
            mime_type,
            contents,
        } => {
            let contents = match contents {
                ResourceContents::Text(text) => mcp::ResourceContents::TextResourceContents {
                    uri,
                    mime_type,
                    text,
                    meta: None,
                },
                ResourceContents::Blob(blob) => mcp::ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    meta: None,
                },
                // A kind added later reaches MCP peers as its JSON, like a block's.
                other => mcp::ResourceContents::TextResourceContents {
                    uri,
                    mime_type,
                    text: serde_json::to_string(&other).unwrap_or_default(),
                    meta: None,
                },
            };
            mcp::ContentBlock::Resource(EmbeddedResource::new(contents))
        }
        // MCP has no tool reference: a line of text, the way lowering says it elsewhere.
        ContentBlock::ToolReference { name } => mcp::ContentBlock::text(format!("[tool: {name}]")),
        // A kind added to toolprism later reaches MCP peers as its JSON, never not at all.
        other => mcp::ContentBlock::text(serde_json::to_string(&other).unwrap_or_default()),
    }
}

/// MCP content as a toolprism block: the server's content, kept as it is.
pub(crate) fn from_mcp(block: mcp::ContentBlock) -> ContentBlock {
    match block {
        mcp::ContentBlock::Text(text) => ContentBlock::text(text.text),
        mcp::ContentBlock::Image(image) => ContentBlock::image(image.data, image.mime_type),
        mcp::ContentBlock::Audio(audio) => ContentBlock::Audio {
            data: audio.data,
            mime_type: audio.mime_type,
        },
        mcp::ContentBlock::ResourceLink(link) => ContentBlock::Resource {
            uri: link.uri,
            mime_type: link.mime_type,
            name: Some(link.name),
        },
        mcp::ContentBlock::Resource(embedded) => match embedded.resource {
            mcp::ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => ContentBlock::EmbeddedResource {
                uri,
                mime_type,
                contents: ResourceContents::Text(text),
            },
            mcp::ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => ContentBlock::EmbeddedResource {
                uri,
                mime_type,
                contents: ResourceContents::Blob(blob),
            },
            other => ContentBlock::text(serde_json::to_string(&other).unwrap_or_default()),
        },
        other => ContentBlock::text(serde_json::to_string(&other).unwrap_or_default()),
    }
}
