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
    /// A tool the model may call from now on, found by tool search: Anthropic expands it into
    /// the tool's definition (a `tool_reference` block); elsewhere it is a line of text.
    ToolReference {
        /// The tool's name.
        name: String,
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

    /// An image block from already base64-encoded data. A call whose content holds inline
    /// bytes that are not standard base64 with padding, or a media type that is not
    /// `type/subtype`, fails with `INVALID_TOOL_OUTPUT`: a provider would refuse the request.
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

    /// Why this block is not one every bridge can carry: inline bytes that are not standard
    /// base64 with padding, or a media type that is not `type/subtype`. A provider refuses a
    /// whole request over one such block, so the pipeline refuses the output that holds it.
    pub(crate) fn malformed(&self) -> Option<String> {
        let (what, data, mime_type) = match self {
            Self::Image { data, mime_type } => ("an image", data, Some(mime_type)),
            Self::Audio { data, mime_type } => ("an audio clip", data, Some(mime_type)),
            Self::EmbeddedResource {
                contents: ResourceContents::Blob(data),
                mime_type,
                ..
            } => ("an embedded resource", data, mime_type.as_ref()),
            Self::Text { .. }
            | Self::Resource { .. }
            | Self::EmbeddedResource { .. }
            | Self::ToolReference { .. } => {
                return None;
            }
        };
        if let Some(at) = base64_error(data) {
            return Some(format!(
                "is {what} whose data is not standard base64 with padding (at byte {at} of {})",
                data.len()
            ));
        }
        match mime_type {
            Some(mime_type) if !is_media_type(mime_type) => Some(format!(
                "is {what} whose media type `{}` is not `type/subtype`",
                crate::text::printable(mime_type, 80)
            )),
            _ => None,
        }
    }
}

/// Where `data` stops being standard base64 with padding (`A–Z a–z 0–9 + /`, whole groups of
/// four, at most two `=` at the very end); `None` when it is.
fn base64_error(data: &str) -> Option<usize> {
    let bytes = data.as_bytes();
    let padding = bytes
        .iter()
        .rev()
        .take(2)
        .take_while(|&&byte| byte == b'=')
        .count();
    let body = &bytes[..bytes.len() - padding];
    if let Some(at) = body
        .iter()
        .position(|&byte| !(byte.is_ascii_alphanumeric() || byte == b'+' || byte == b'/'))
    {
        return Some(at);
    }
    // Whole groups of four: padding, at the end only, completes the last one.
    (!bytes.len().is_multiple_of(4)).then_some(bytes.len())
}

/// `type/subtype`, each a restricted name of RFC 6838 (a letter or digit, then up to 126 of
/// letters, digits and `! # $ & - ^ _ . +`), then optional parameters after a `;` in printable
/// ASCII.
pub fn is_media_type(mime_type: &str) -> bool {
    let (essence, parameters) = mime_type.split_once(';').unwrap_or((mime_type, ""));
    let restricted_name = |name: &str| {
        (1..=127).contains(&name.len())
            && name.as_bytes()[0].is_ascii_alphanumeric()
            && name
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&byte))
    };
    essence
        .split_once('/')
        .is_some_and(|(kind, subtype)| restricted_name(kind) && restricted_name(subtype.trim_end()))
        && parameters
            .bytes()
            .all(|byte| byte == b' ' || byte.is_ascii_graphic())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_bytes_are_standard_base64_with_padding() {
        for good in ["", "QQ==", "QUI=", "QUJD", "iVBORw==", "+/+/"] {
            assert_eq!(base64_error(good), None, "{good}");
        }
        for (bad, at) in [
            ("QQ", 2),
            ("QQ=", 3),
            ("Q===", 1),
            ("====", 0),
            ("QUJD====", 4),
            ("QU JD", 2),
            ("-_-_", 0),
            ("QUJD\n", 4),
            ("QQ==QQ==", 2),
        ] {
            assert_eq!(base64_error(bad), Some(at), "{bad:?}");
        }
    }

    #[test]
    fn media_types_are_type_slash_subtype() {
        for good in [
            "image/png",
            "audio/wav",
            "image/svg+xml",
            "text/plain; charset=utf-8",
            "application/vnd.ms-excel",
        ] {
            assert!(is_media_type(good), "{good}");
        }
        for bad in [
            "",
            "png",
            "image/",
            "/png",
            "image png",
            "image/png\r\nX: y",
            "image/p\u{1b}ng",
            "a/b/c",
        ] {
            assert!(!is_media_type(bad), "{bad:?}");
        }
    }

    #[test]
    fn only_inline_bytes_and_their_media_types_are_checked() {
        assert_eq!(ContentBlock::text("not base64 at all").malformed(), None);
        assert_eq!(
            ContentBlock::image_from_bytes(b"\x89PNG", "image/png").malformed(),
            None
        );
        let problem = ContentBlock::image("data:image/png;base64,QQ==", "image/png").malformed();
        assert_eq!(
            problem.as_deref(),
            Some("is an image whose data is not standard base64 with padding (at byte 4 of 26)")
        );
        let audio = ContentBlock::Audio {
            data: "QQ==".into(),
            mime_type: "wav".into(),
        };
        assert_eq!(
            audio.malformed().as_deref(),
            Some("is an audio clip whose media type `wav` is not `type/subtype`")
        );
        let blob = ContentBlock::EmbeddedResource {
            uri: "file:///a".into(),
            mime_type: None,
            contents: ResourceContents::Blob("not base64".into()),
        };
        assert!(blob.malformed().is_some());
    }
}
