//! `lock`: the registry's definitions written to a lock file, or (`--check`) compared with it,
//! each change classified; a breaking one fails the command, so CI catches it.

use std::path::Path;

use toolprism::Registry;
use toolprism::integrity::{Audience, Lock, Severity, compare};

use crate::exit;
use crate::out::outln;
use crate::visible::visible;

/// The most bytes of a value a change line shows.
const SHOWN_BYTES: usize = 120;

/// Writes the lock, or checks the registry against it.
pub(crate) fn lock(registry: &Registry, file: &Path, check: bool) -> u8 {
    let now = Lock::of(&registry.snapshot());
    if !check {
        return match std::fs::write(file, now.to_json()) {
            Ok(()) => {
                outln!("locked {} tools in {}", now.tools.len(), file.display());
                exit::OK
            }
            Err(problem) => crate::error(exit::USAGE, &format!("{}: {problem}", file.display())),
        };
    }
    let text = match read_bounded(file) {
        Ok(text) => text,
        Err(problem) => return crate::error(exit::USAGE, &problem),
    };
    let locked = match Lock::from_json(&text) {
        Ok(locked) => locked,
        Err(problem) => {
            return crate::error(exit::USAGE, &format!("{}: {problem}", file.display()));
        }
    };
    let changes = compare(&locked, &now);
    for change in &changes {
        let severity = match change.severity() {
            Severity::Breaking => "breaking  ",
            Severity::Compatible => "compatible",
        };
        let audience = match change.rule.audience() {
            Audience::Callers => "callers",
            Audience::Model => "the model",
        };
        let shown = |value: &Option<serde_json::Value>| {
            value.as_ref().map_or_else(
                || "—".to_owned(),
                |value| crate::terminal::shorten(&value.to_string(), SHOWN_BYTES),
            )
        };
        outln!(
            "{severity} {} {} — {} (for {audience}): {} → {}",
            visible(&change.tool),
            visible(if change.path.is_empty() {
                "/"
            } else {
                &change.path
            }),
            change.rule.describe(),
            visible(&shown(&change.before)),
            visible(&shown(&change.after)),
        );
    }
    let breaking = changes
        .iter()
        .filter(|change| change.severity() == Severity::Breaking)
        .count();
    if breaking > 0 {
        eprintln!(
            "{breaking} breaking change(s) since {}; if they are meant, say so in the release and write the lock again (`lock`)",
            file.display()
        );
        exit::BREAKING_CHANGE
    } else {
        if !changes.is_empty() {
            eprintln!(
                "{} compatible change(s) since {}; `lock` writes them in",
                changes.len(),
                file.display()
            );
        }
        exit::OK
    }
}

/// The file's text, refused past the lock's size limit without reading the rest.
fn read_bounded(file: &Path) -> Result<String, String> {
    use std::io::Read as _;
    let opened =
        std::fs::File::open(file).map_err(|problem| format!("{}: {problem}", file.display()))?;
    let mut text = String::new();
    let limit = toolprism::integrity::MAX_LOCK_BYTES as u64 + 1;
    opened
        .take(limit)
        .read_to_string(&mut text)
        .map_err(|problem| format!("{}: {problem}", file.display()))?;
    Ok(text)
}
