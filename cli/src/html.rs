//! A session log as one self-contained HTML page: no script, no network, no CDN. The
//! reference renderer of the card protocol: it switches on the card kind only, never on a
//! tool's name, so UI authors can copy it arm by arm.
//!
//! Everything a tool or a model produced is untrusted: every piece of it goes through
//! [`escape`] (text and attributes alike), images are shown only as `data:` URLs of an
//! `image/*` type with base64 data, and only `http`/`https` URLs become links.

use std::fmt::Write as _;

use serde_json::Value;
use toolprism::ContentBlock;
use toolprism::present::{
    Card, DiffCard, GenericCard, ReadCard, SearchCard, TerminalCard, WebCard,
};
use toolprism::session::{LogContents, ReplayedCall, replay};

use crate::visible::push_visible;

/// The page for a session's log: each call with its card, what the model saw, the nested
/// calls a program made (folded under their parent), and the log's problems.
pub fn page(title: &str, contents: &LogContents) -> String {
    let calls = replay(&contents.events);
    let failed = calls
        .iter()
        .filter(|call| call.result.as_ref().is_some_and(|result| result.is_error))
        .count();
    let mut out = String::new();
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n\
         <p class=\"summary\">{} calls, {failed} failed</p>\n",
        escape(title),
        escape(title),
        calls.len()
    );
    for problem in &contents.problems {
        let _ = writeln!(
            out,
            "<p class=\"problem\">{}</p>",
            escape(&format!("{problem:?}"))
        );
    }
    for (index, call) in calls.iter().enumerate() {
        render_call(&mut out, index + 1, call);
    }
    out.push_str("</body></html>\n");
    out
}

fn render_call(out: &mut String, number: usize, call: &ReplayedCall) {
    let failed = call.result.as_ref().is_some_and(|result| result.is_error);
    let status = match &call.result {
        None => "no result",
        Some(result) if result.is_error => "failed",
        Some(_) => "ok",
    };
    // The title, when the tool has one, and the name the model called it by.
    let shown_name = match &call.call.title {
        Some(title) => format!(
            "<span class=\"title\">{}</span> <span class=\"tool\">{}</span>",
            escape(title),
            escape(&call.call.name)
        ),
        None => format!("<span class=\"tool\">{}</span>", escape(&call.call.name)),
    };
    let _ = write!(
        out,
        "<section class=\"call{}\" data-tool=\"{}\" id=\"call-{number}\">\n<header><span class=\"n\">{number}</span> \
         {shown_name} <code class=\"args\">{}</code> <span class=\"status\">{status}</span></header>\n",
        if failed { " failed" } else { "" },
        escape(&call.call.name),
        escape(&call.call.shown_args().to_string()),
    );
    if !call.nested.is_empty() {
        let _ = write!(
            out,
            "<details class=\"nested\"><summary>{} nested calls</summary><ol>",
            call.nested.len()
        );
        for nested in &call.nested {
            let _ = write!(
                out,
                "<li class=\"nested-call{}\"><span class=\"tool\">{}</span> <span class=\"status\">{}</span>",
                if nested.is_error { " failed" } else { "" },
                escape(&nested.name),
                if nested.is_error { "failed" } else { "ok" },
            );
            render_content(out, &nested.content);
            out.push_str("</li>");
        }
        out.push_str("</ol></details>\n");
    }
    if let Some(result) = &call.result {
        render_card(out, &result.card, &result.content);
        if let Some(error) = &result.error {
            let code = error.code().unwrap_or("-");
            let _ = writeln!(out, "<p class=\"error\"><b>{}</b></p>", escape(code));
        }
    }
    out.push_str("</section>\n");
}

/// One card, by kind; the content the model saw goes below the cards that do not carry it.
fn render_card(out: &mut String, card: &Card, content: &[ContentBlock]) {
    let _ = write!(out, "<div class=\"card\" data-card=\"{}\">", card.kind());
    match card {
        Card::Generic(card) => generic(out, card),
        Card::Terminal(card) => terminal(out, card),
        Card::Diff(card) => diff(out, card),
        Card::Read(card) => read(out, card, content),
        Card::Search(card) => search(out, card),
        Card::Web(card) => web(out, card),
        other => {
            let _ = write!(out, "<p>({} card)</p>", escape(other.kind()));
        }
    }
    out.push_str("</div>\n");
    if !matches!(card, Card::Generic(_) | Card::Read(_)) {
        out.push_str("<details class=\"model\"><summary>What the model saw</summary>");
        render_content(out, content);
        out.push_str("</details>\n");
    }
}

fn generic(out: &mut String, card: &GenericCard) {
    let _ = write!(
        out,
        "<p class=\"title\">{}</p><pre class=\"input\">{}</pre>",
        escape(&card.title),
        escape(&serde_json::to_string_pretty(&card.input).unwrap_or_default())
    );
    if let Some(output) = &card.output {
        render_content(out, output);
    }
}

fn terminal(out: &mut String, card: &TerminalCard) {
    let ending = match (card.timed_out, card.exit_code) {
        (true, _) => "timed out".to_owned(),
        (false, Some(code)) => format!("exit {code}"),
        (false, None) => "killed".to_owned(),
    };
    let _ = write!(
        out,
        "<p class=\"command\"><code>$ {}</code> <span class=\"ending\">{} in {} ms</span></p><pre class=\"terminal\">{}</pre>",
        escape(&card.command),
        escape(&ending),
        card.duration_ms,
        ansi_to_html(&card.output_tail)
    );
}

fn diff(out: &mut String, card: &DiffCard) {
    let _ = write!(
        out,
        "<p class=\"path\">{} <span class=\"added\">+{}</span> <span class=\"removed\">−{}</span>{}</p><pre class=\"diff\">",
        escape(&card.path),
        card.added,
        card.removed,
        if card.truncated { " (cut)" } else { "" }
    );
    for line in card.diff.lines() {
        let class = match line.as_bytes().first() {
            _ if line.starts_with("+++") || line.starts_with("---") => "file",
            Some(b'+') => "add",
            Some(b'-') => "del",
            Some(b'@') => "hunk",
            _ => "ctx",
        };
        let _ = writeln!(out, "<span class=\"{class}\">{}</span>", escape(line));
    }
    out.push_str("</pre>");
}

fn read(out: &mut String, card: &ReadCard, content: &[ContentBlock]) {
    let _ = write!(
        out,
        "<p class=\"path\">{} <span class=\"range\">lines {}–{} of {}</span></p>",
        escape(&card.path),
        card.first_line,
        card.last_line,
        card.total_lines
    );
    // The model's text is the numbered lines themselves.
    render_content(out, content);
}

fn search(out: &mut String, card: &SearchCard) {
    let _ = write!(
        out,
        "<p class=\"query\"><code>{}</code> {} matches</p>",
        escape(&card.query),
        card.total
    );
    // Grouped by file, in the order files first appear.
    let mut files: Vec<(&str, Vec<&toolprism::present::SearchMatch>)> = Vec::new();
    for found in &card.matches {
        match files.iter_mut().find(|(path, _)| *path == found.path) {
            Some((_, matches)) => matches.push(found),
            None => files.push((&found.path, vec![found])),
        }
    }
    for (path, matches) in files {
        let _ = write!(
            out,
            "<div class=\"file\"><p class=\"path\">{}</p><ul>",
            escape(path)
        );
        for found in matches {
            let line = found
                .line
                .map(|line| format!("{line}: "))
                .unwrap_or_default();
            let text = found.text.as_deref().unwrap_or_default();
            let _ = write!(
                out,
                "<li><span class=\"line\">{}</span>{}</li>",
                escape(&line),
                escape(text)
            );
        }
        out.push_str("</ul></div>");
    }
}

fn web(out: &mut String, card: &WebCard) {
    let title = card.title.as_deref().unwrap_or("untitled");
    let _ = write!(
        out,
        "<p class=\"page-title\">{}</p><p class=\"url\">",
        escape(title)
    );
    if is_web_url(&card.url) {
        let _ = write!(
            out,
            "<a href=\"{}\" rel=\"noreferrer noopener\">{}</a>",
            escape(&card.url),
            escape(&card.url)
        );
    } else {
        out.push_str(&escape(&card.url));
    }
    let _ = write!(
        out,
        "</p><blockquote>{}</blockquote>",
        escape(&card.excerpt)
    );
}

fn is_web_url(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    lower.starts_with("https://") || lower.starts_with("http://")
}

/// Content blocks: text as preformatted text (a spilled output's preview marked), images
/// inline, everything else named.
fn render_content(out: &mut String, blocks: &[ContentBlock]) {
    for block in blocks {
        match block {
            ContentBlock::Text { text } => {
                let spilled = text.contains("... output truncated:");
                let _ = write!(
                    out,
                    "<pre class=\"content{}\">{}</pre>",
                    if spilled { " spilled" } else { "" },
                    escape(text)
                );
            }
            ContentBlock::Image { data, mime_type } if is_inline_image(mime_type, data) => {
                let _ = write!(
                    out,
                    "<img class=\"content\" alt=\"image\" src=\"data:{};base64,{}\">",
                    escape(mime_type),
                    escape(data)
                );
            }
            ContentBlock::Image { mime_type, data } | ContentBlock::Audio { mime_type, data } => {
                let _ = write!(
                    out,
                    "<p class=\"content media\">[{}, {} base64 bytes]</p>",
                    escape(mime_type),
                    data.len()
                );
            }
            ContentBlock::Resource { uri, .. } => {
                let _ = write!(
                    out,
                    "<p class=\"content resource\">[resource {}]</p>",
                    escape(uri)
                );
            }
            ContentBlock::EmbeddedResource { uri, .. } => {
                let _ = write!(
                    out,
                    "<p class=\"content resource\">[resource {}, inline]</p>",
                    escape(uri)
                );
            }
            ContentBlock::ToolReference { name } => {
                let _ = write!(out, "<p class=\"content\">[tool {}]</p>", escape(name));
            }
            other => {
                let kind = serde_json::to_value(other)
                    .ok()
                    .and_then(|value| value.get("type").and_then(Value::as_str).map(str::to_owned))
                    .unwrap_or_default();
                let _ = write!(out, "<p class=\"content\">[{} content]</p>", escape(&kind));
            }
        }
    }
}

/// An image type (not SVG, which is a document) with base64 data only.
fn is_inline_image(mime_type: &str, data: &str) -> bool {
    matches!(
        mime_type,
        "image/png" | "image/jpeg" | "image/gif" | "image/webp"
    ) && data
        .bytes()
        .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'/' | b'='))
}

/// Text safe in element content and in quoted attribute values, with nothing that reorders
/// it ([`visible`](crate::visible::visible)).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control and bidirectional characters are shown, not passed on.
            c => push_visible(&mut out, c),
        }
    }
    out
}

/// Terminal output with its SGR colors (bold, the 16 colors) as spans; every other escape
/// sequence is dropped, and the text between them escaped.
fn ansi_to_html(text: &str) -> String {
    let mut out = String::new();
    let mut open = false;
    let mut rest = text;
    while let Some(start) = rest.find('\x1b') {
        out.push_str(&escape(&rest[..start]));
        let sequence = &rest[start + 1..];
        let Some(body) = sequence.strip_prefix('[') else {
            rest = sequence.get(1..).unwrap_or_default();
            continue;
        };
        let end = body
            .find(|c: char| c.is_ascii_alphabetic() || c == '~')
            .unwrap_or(body.len());
        let (parameters, command) = (&body[..end], body[end..].chars().next());
        rest = body.get(end + 1..).unwrap_or_default();
        if command != Some('m') {
            continue;
        }
        if open {
            out.push_str("</span>");
            open = false;
        }
        let classes: Vec<String> = parameters
            .split(';')
            .filter_map(|code| match code.parse::<u8>().ok()? {
                1 => Some("b".to_owned()),
                code @ (30..=37 | 90..=97) => Some(format!("f{code}")),
                code @ (40..=47 | 100..=107) => Some(format!("g{code}")),
                _ => None,
            })
            .collect();
        if !classes.is_empty() {
            let _ = write!(out, "<span class=\"{}\">", classes.join(" "));
            open = true;
        }
    }
    out.push_str(&escape(rest));
    if open {
        out.push_str("</span>");
    }
    out
}

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:60em;padding:0 1em;color:#1b1f24;background:#fff}\
h1{font-size:1.3em}.summary{color:#57606a}.problem{color:#9a6700}\
section.call{border:1px solid #d0d7de;border-radius:6px;margin:1em 0;padding:.6em 1em}\
section.call.failed{border-color:#cf222e;background:#fff8f8}\
header .n{color:#57606a}header .title{font-weight:600}header .tool{font-weight:600;font-family:monospace}header .title+.tool{font-weight:400;color:#57606a}header .args{color:#57606a;word-break:break-all}\
.status{float:right;font-size:.85em;color:#1a7f37}.failed>.status,.failed>header>.status{color:#cf222e}\
pre{background:#f6f8fa;padding:.5em;overflow-x:auto;white-space:pre-wrap;word-break:break-word;margin:.4em 0}\
pre.spilled{border-left:3px solid #9a6700}pre.terminal{background:#0d1117;color:#e6edf3}pre.terminal,pre.content{max-height:22em;overflow-y:auto}\
.diff .add{color:#1a7f37}.diff .del{color:#cf222e}.diff .hunk{color:#8250df}.diff .file{font-weight:600}\
.added{color:#1a7f37}.removed{color:#cf222e}.error{color:#cf222e}.path,.page-title,.title{font-weight:600}\
.b{font-weight:700}.f31,.f91{color:#ff7b72}.f32,.f92{color:#7ee787}.f33,.f93{color:#e3b341}.f34,.f94{color:#79c0ff}\
.f35,.f95{color:#d2a8ff}.f36,.f96{color:#a5d6ff}.f30,.f90{color:#8b949e}\
details.nested{margin:.4em 0}li.nested-call.failed .status{color:#cf222e}img.content{max-width:100%}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_is_total() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
        assert_eq!(escape("bell\u{7}"), "bell\\u{7}");
        // Nothing a browser would lay out backwards.
        assert_eq!(escape("txt\u{202e}exe"), "txt\\u{202e}exe");
        assert_eq!(escape("tab\tnew\nline"), "tab\tnew\nline");
    }

    #[test]
    fn ansi_colors_become_spans_and_other_escapes_go() {
        assert_eq!(
            ansi_to_html("\x1b[1;31merror\x1b[0m: <x>\x1b[2K"),
            "<span class=\"b f31\">error</span>: &lt;x&gt;"
        );
    }
}
