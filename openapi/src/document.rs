//! A document read within its limits (JSON or YAML), its version, and the references inside
//! it followed: only local ones (`#/…`), never past [`MAX_REF_HOPS`].

use serde_json::Value;

/// What starts a JSON object or a path template's parameter.
const OPEN_BRACE: char = '{';

/// The largest document read, as text.
pub const MAX_DOCUMENT_BYTES: usize = 64 << 20;

/// The deepest a document nests (arrays and objects), as the runtime allows a schema.
pub const MAX_DOCUMENT_DEPTH: usize = toolprism::depth::MAX_DEPTH;

/// The most `$ref`s followed one after another before a reference is called a loop.
pub const MAX_REF_HOPS: usize = 32;

/// Why a document could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// Larger than [`MAX_DOCUMENT_BYTES`]: at least this many bytes.
    #[error("the document is over {MAX_DOCUMENT_BYTES} bytes, the most read ({0} or more)")]
    TooLarge(usize),
    /// Neither JSON nor YAML, or past a limit while read.
    #[error("the document is not JSON or YAML: {0}")]
    Syntax(String),
    /// Deeper than [`MAX_DOCUMENT_DEPTH`].
    #[error("the document nests {0}")]
    TooDeep(String),
    /// Not an OpenAPI 3.0 or 3.1 document.
    #[error("not an OpenAPI 3.0 or 3.1 document: {0}")]
    NotOpenApi(String),
    /// The file or URL could not be read.
    #[error("the document could not be read: {0}")]
    Read(String),
}

/// Which OpenAPI a document is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// 3.0.x: schemas are OpenAPI's own dialect (`nullable`, boolean exclusive bounds).
    V3_0,
    /// 3.1.x: schemas are JSON Schema 2020-12.
    V3_1,
}

/// A document, read and checked to be OpenAPI 3.0 or 3.1.
#[derive(Clone, Debug)]
pub struct Document {
    pub(crate) root: Value,
    pub(crate) version: Version,
    /// The URL it was read from: a relative server URL is relative to it.
    pub(crate) source: Option<String>,
}

impl Document {
    /// Reads a document from its text, JSON or YAML.
    pub fn parse(text: &str) -> Result<Self, LoadError> {
        if text.len() > MAX_DOCUMENT_BYTES {
            return Err(LoadError::TooLarge(text.len()));
        }
        let root = if text.trim_start().starts_with(OPEN_BRACE) {
            serde_json::from_str(text).map_err(|error| LoadError::Syntax(error.to_string()))?
        } else {
            parse_yaml(text)?
        };
        Self::from_value(root)
    }

    /// A document already read as JSON.
    pub fn from_value(root: Value) -> Result<Self, LoadError> {
        if nests_deeper_than(&root, MAX_DOCUMENT_DEPTH) {
            return Err(LoadError::TooDeep(format!(
                "deeper than {MAX_DOCUMENT_DEPTH} levels"
            )));
        }
        let declared = root
            .get("openapi")
            .and_then(Value::as_str)
            .ok_or_else(|| LoadError::NotOpenApi("it has no `openapi` version".to_owned()))?;
        let version = if declared.starts_with("3.0.") || declared == "3.0" {
            Version::V3_0
        } else if declared.starts_with("3.1.") || declared == "3.1" {
            Version::V3_1
        } else {
            return Err(LoadError::NotOpenApi(format!(
                "its version is {}",
                cut(declared, 40)
            )));
        };
        if !root.get("paths").is_none_or(Value::is_object) {
            return Err(LoadError::NotOpenApi(
                "its `paths` is not an object".to_owned(),
            ));
        }
        Ok(Self {
            root,
            version,
            source: None,
        })
    }

    /// Reads a document from a file.
    pub fn from_file(path: &std::path::Path) -> Result<Self, LoadError> {
        use std::io::Read as _;
        let failed =
            |error: std::io::Error| LoadError::Read(format!("{}: {error}", path.display()));
        let file = std::fs::File::open(path).map_err(failed)?;
        // Read no further than the limit, whatever the file says its size is (a pipe, a
        // device, a file still growing).
        let mut bytes = Vec::new();
        file.take(MAX_DOCUMENT_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(failed)?;
        if bytes.len() > MAX_DOCUMENT_BYTES {
            return Err(LoadError::TooLarge(bytes.len()));
        }
        let text = String::from_utf8(bytes)
            .map_err(|_| LoadError::Syntax("the document is not UTF-8".to_owned()))?;
        Self::parse(&text)
    }

    /// Reads a document from an `http(s)` URL, within [`MAX_DOCUMENT_BYTES`] and 30 seconds.
    pub async fn from_url(url: &str) -> Result<Self, LoadError> {
        let client = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(30))
            .build()
            .map_err(|error| LoadError::Read(error.to_string()))?;
        let response = client
            .get(url)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|error| LoadError::Read(error.without_url().to_string()))?;
        let bytes = crate::call::read_bounded(response, MAX_DOCUMENT_BYTES)
            .await
            .map_err(LoadError::Read)?;
        let text = String::from_utf8(bytes)
            .map_err(|_| LoadError::Syntax("the document is not UTF-8".to_owned()))?;
        let mut document = Self::parse(&text)?;
        document.source = Some(url.to_owned());
        Ok(document)
    }

    /// Its OpenAPI version.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The first server's URL, when the document names one.
    pub fn server_url(&self) -> Option<&str> {
        self.root.pointer("/servers/0/url").and_then(Value::as_str)
    }

    /// What a local reference (`#/components/…`) names, following references until a value
    /// that is not one; a reference elsewhere (another file, a URL) or a loop is why not.
    pub(crate) fn resolve<'a>(&'a self, mut value: &'a Value) -> Result<&'a Value, String> {
        for _ in 0..MAX_REF_HOPS {
            let Some(reference) = value.get("$ref").and_then(Value::as_str) else {
                return Ok(value);
            };
            value = self.pointer(reference)?;
        }
        Err(format!(
            "references follow one another more than {MAX_REF_HOPS} times"
        ))
    }

    /// The value a local reference points at.
    pub(crate) fn pointer(&self, reference: &str) -> Result<&Value, String> {
        let Some(pointer) = reference.strip_prefix('#') else {
            return Err(format!(
                "the reference {} is not local to the document: remote references are refused",
                quoted(reference)
            ));
        };
        // The fragment is a URI's: `%7B` and the like stand for what the pointer names.
        let decoded = percent_encoding::percent_decode_str(pointer).decode_utf8_lossy();
        self.root
            .pointer(&decoded)
            .ok_or_else(|| format!("the reference {} names nothing", quoted(reference)))
    }
}

/// Whether `value` nests arrays and objects deeper than `max`, found without recursion.
fn nests_deeper_than(value: &Value, max: usize) -> bool {
    let mut pending = vec![(value, 0)];
    while let Some((value, depth)) = pending.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        if depth >= max {
            return true;
        }
        pending.extend(children.map(|child| (child, depth + 1)));
    }
    false
}

/// YAML as JSON, within a budget: depth, aliases and the size of what they expand to bounded.
fn parse_yaml(text: &str) -> Result<Value, LoadError> {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = MAX_DOCUMENT_DEPTH;
    budget.max_aliases = 10_000;
    budget.max_anchors = 10_000;
    budget.max_nodes = 10_000_000;
    budget.max_total_scalar_bytes = MAX_DOCUMENT_BYTES;
    budget.max_documents = 1;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    serde_saphyr::from_str_with_options(text, options).map_err(|error| {
        // Its first line says what and where; the rest quotes the document.
        let text = error.to_string();
        LoadError::Syntax(cut(text.lines().next().unwrap_or_default(), 500))
    })
}

/// `text` cut to `max` characters, for quoting a document's text in an error.
pub(crate) fn cut(text: &str, max: usize) -> String {
    let mut chars = text
        .chars()
        .map(|ch| if ch.is_control() { '?' } else { ch });
    let mut kept: String = chars.by_ref().take(max).collect();
    if chars.next().is_some() {
        kept.push('…');
    }
    kept
}

/// `text` quoted (and cut) for an error.
pub(crate) fn quoted(text: &str) -> String {
    format!("`{}`", cut(text, 200))
}
