//! Showing cards and content in a terminal: a client that switches on the card kind only.

use std::borrow::Cow;
use std::fmt::Write as _;

use toolprism::ContentBlock;
use toolprism::present::Card;
/// Cutting a line for display: the runtime's, which the tools' renders use too.
pub use toolprism::present::{shorten, shorten_with};

use crate::visible::visible;

/// One card as a few lines of text. Written against the card kinds, not tool names: any tool
/// that emits a `search` card is shown by the same arm. Every field is shown
/// [visibly](crate::visible::visible): a path or a command is the tool's data.
pub fn card(card: &Card) -> String {
    let text = card_text(card);
    match visible(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(shown) => shown,
    }
}

fn card_text(card: &Card) -> String {
    match card {
        Card::Generic(card) => {
            let mut text = format!("▪ {} {}", card.title, shorten(&card.input.to_string(), 120));
            if card.is_error {
                text.push_str("  [failed]");
            }
            text
        }
        Card::Terminal(card) => {
            let ending = match (card.timed_out, card.exit_code) {
                (true, _) => "timed out".to_owned(),
                (false, Some(code)) => format!("exit {code}"),
                (false, None) => "killed".to_owned(),
            };
            let last = card.output_tail.lines().last().unwrap_or_default();
            format!(
                "$ {}  → {ending} in {} ms  …{}",
                card.command,
                card.duration_ms,
                shorten(last, 60)
            )
        }
        Card::Diff(card) => {
            let cut = if card.truncated { " (cut)" } else { "" };
            format!("± {}  +{} −{}{cut}", card.path, card.added, card.removed)
        }
        Card::Read(card) => format!(
            "📄 {}  lines {}–{} of {}",
            card.path, card.first_line, card.last_line, card.total_lines
        ),
        Card::Search(card) => {
            let mut text = format!("🔍 `{}`  {} matches", card.query, card.total);
            for found in card.matches.iter().take(3) {
                let _ = write!(text, "\n     {}", found.path);
                if let Some(line) = found.line {
                    let _ = write!(text, ":{line}");
                }
            }
            text
        }
        Card::Web(card) => format!(
            "🌐 {}  “{}”",
            card.url,
            card.title.as_deref().unwrap_or("untitled")
        ),
        other => format!("({} card)", other.kind()),
    }
}

/// Content blocks as indented text, at most `max_lines` lines of it, shown
/// [visibly](crate::visible::visible).
pub fn content(blocks: &[ContentBlock], max_lines: usize) -> String {
    let mut text = String::new();
    for block in blocks {
        let body = match block {
            ContentBlock::Text { text } => text.clone(),
            ContentBlock::Image { mime_type, data } => {
                format!("[image {mime_type}, {} base64 bytes]", data.len())
            }
            ContentBlock::Resource { uri, .. } => format!("[resource {uri}]"),
            ContentBlock::Audio { mime_type, data } => {
                format!("[audio {mime_type}, {} base64 bytes]", data.len())
            }
            ContentBlock::EmbeddedResource { uri, .. } => format!("[resource {uri}, inline]"),
            ContentBlock::ToolReference { name } => format!("[tool {name}]"),
            _ => "[content]".to_owned(),
        };
        let lines: Vec<&str> = body.lines().collect();
        for line in lines.iter().take(max_lines) {
            let _ = writeln!(text, "    │ {}", visible(&shorten(line, 150)));
        }
        if lines.len() > max_lines {
            let _ = writeln!(text, "    │ … {} more lines", lines.len() - max_lines);
        }
    }
    text
}
