//! Content blocks: the model-facing projection of a tool's value.

use base64::Engine as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One block of what the model sees. The kinds match what MCP and the model providers carry:
/// text, an inline image or audio clip, a reference to a file or resource, and a resource's
/// contents carried inline.
///
/// Serialized with a `type` tag:
///
/// ```
/// use toolprism::ContentBlock;
///
/// let block = ContentBlock::text("hello");
/// assert_eq!(serde_json::to_string(&block).unwrap(), r#"{"type":"text","text":"hello"}"#);
///
/// let image = ContentBlock::image_from_bytes(b"\x89PNG", "image/png");
/// assert_eq!(
///     serde_json::to_value(&image).unwrap(),
///     serde_json::json!({"type": "image", "data": "iVBORw==", "mime_type": "image/png"}),
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[schemars(
    description = "One block of what the model sees: text, an inline image or audio clip, a reference to a resource, or a resource's contents inline."
)]
#[non_exhaustive]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, inline.
    Image {
        /// The image bytes, standard base64 with padding.
        data: String,
        /// The media type, e.g. `image/png`.
        mime_type: String,
    },
    /// A reference to a file or resource the host can resolve.
    Resource {
        /// Where the resource is, e.g. `file:///workspace/a.txt`.
        uri: String,
        /// The media type, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// A display name, when there is one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    /// An audio clip, inline.
    Audio {
        /// The audio bytes, standard base64 with padding.
        data: String,
        /// The media type, e.g. `audio/wav`.
        mime_type: String,
    },
    /// A resource's contents, carried inline (MCP's embedded resource): its text or its bytes.
    EmbeddedResource {
        /// Which resource this is.
        uri: String,
        /// The media type, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The contents.
        contents: ResourceContents,
    },
}

/// The contents of an [`ContentBlock::EmbeddedResource`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ResourceContents {
    /// Text.
    Text(String),
    /// Bytes, standard base64 with padding.
    Blob(String),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// An image block from already base64-encoded data.
    pub fn image(data_base64: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Image {
            data: data_base64.into(),
            mime_type: mime_type.into(),
        }
    }

    /// An image block from raw bytes, base64-encoded here.
    pub fn image_from_bytes(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        Self::image(
            base64::engine::general_purpose::STANDARD.encode(bytes),
            mime_type,
        )
    }

    /// A resource reference with no media type or name.
    pub fn resource(uri: impl Into<String>) -> Self {
        Self::Resource {
            uri: uri.into(),
            mime_type: None,
            name: None,
        }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text { text } => Some(text),
            _ => None,
        }
    }
}

/// What a `render` function may return: content blocks, one block, a string, or a
/// `Result` of those whose error becomes an `INVALID_TOOL_OUTPUT` failure.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not something a render function can return",
    label = "a render function returns `Vec<ContentBlock>`, a `ContentBlock`, a `String`, or a `Result` of those",
    note = "render is `fn(&Args, &Value) -> Vec<ContentBlock>`"
)]
pub trait IntoContent {
    /// Converts into content blocks, or the message of why rendering failed.
    fn into_content(self) -> Result<Vec<ContentBlock>, String>;
}

impl IntoContent for Vec<ContentBlock> {
    fn into_content(self) -> Result<Vec<ContentBlock>, String> {
        Ok(self)
    }
}

impl IntoContent for ContentBlock {
    fn into_content(self) -> Result<Vec<ContentBlock>, String> {
        Ok(vec![self])
    }
}

impl IntoContent for String {
    fn into_content(self) -> Result<Vec<ContentBlock>, String> {
        Ok(vec![ContentBlock::Text { text: self }])
    }
}

impl<C: IntoContent, E: std::fmt::Display> IntoContent for Result<C, E> {
    fn into_content(self) -> Result<Vec<ContentBlock>, String> {
        self.map_err(|error| error.to_string())?.into_content()
    }
}
