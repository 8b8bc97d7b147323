//! Bounding what the model reads, and retaining the rest: previews, exact limits, UTF-8 at the
//! cut, retention, hostile call ids, and what is never bounded.

// Fixtures build text the readable way.
#![allow(clippy::format_collect)]

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use toolprism::bound::{
    BoundLimits, FsOutputStore, RetainedOutput, Retention, RetentionRule, count_lines, plan_cut,
    preview,
};
use toolprism::error::codes;
use toolprism::pipeline::{ExecuteCall, PostDecision};
use toolprism::prelude::*;
use toolprism_tests::TempDir;

/// `emit`: returns the text it is given, as its value and (by default render) its content.
fn emit() -> ToolDef {
    ToolDef::builder("emit")
        .description("Returns the text it is given.")
        .handler(|args: Value, _cx: ToolContext| async move {
            Ok::<_, ToolError>(args["text"].as_str().unwrap_or_default().to_owned())
        })
        .build()
}

fn registry(dir: &Path, limits: BoundLimits) -> Registry {
    Registry::builder()
        .tool(emit())
        .limits(limits)
        .output_store(FsOutputStore::new(dir))
        .build()
        .unwrap()
}

async fn emit_text(registry: &Registry, text: &str, surface: Surface) -> ToolOutcome {
    registry
        .dispatch(
            ToolCall::new("call_1", "emit", json!({"text": text})),
            surface,
        )
        .await
}

fn only_text(outcome: &ToolOutcome) -> &str {
    match outcome.content() {
        [ContentBlock::Text { text }] => text,
        other => panic!("expected one text block, got {other:?}"),
    }
}

fn numbered(lines: usize) -> String {
    (1..=lines).map(|n| format!("line {n}\n")).collect()
}

/// The location a preview names, between "saved at " and "; read".
fn location_in(preview: &str) -> PathBuf {
    let start = preview.find("saved at ").expect("a marker") + "saved at ".len();
    let end = start + preview[start..].find("; read").expect("a marker end");
    PathBuf::from(&preview[start..end])
}

#[tokio::test]
async fn oversized_text_becomes_head_marker_tail_and_is_retained_byte_identical() {
    let dir = TempDir::new("shape");
    let registry = registry(dir.path(), BoundLimits::default());
    let text = numbered(10_000);
    let outcome = emit_text(&registry, &text, Surface::Direct).await;
    let shown = only_text(&outcome);

    assert!(shown.starts_with("line 1\nline 2\n"), "{}", &shown[..40]);
    assert!(shown.ends_with("line 9999\nline 10000\n"));
    let markers: Vec<&str> = shown
        .lines()
        .filter(|l| l.starts_with("... output truncated"))
        .collect();
    assert_eq!(markers.len(), 1, "one marker between head and tail");
    assert!(markers[0].contains("lines ("), "{}", markers[0]);
    let totals = format!("(10000 lines, {} bytes)", text.len());
    assert!(markers[0].contains(&totals), "{}", markers[0]);
    assert!(markers[0].contains("8001 lines"), "{}", markers[0]);
    assert!(markers[0].contains("starts at line 1000"), "{}", markers[0]);
    assert!(
        markers[0].contains("read it with an offset"),
        "{}",
        markers[0]
    );
    assert!(count_lines(shown) <= 2_000);
    assert!(shown.len() <= 50 * 1024);

    // The value is untouched: programs get everything.
    assert_eq!(outcome.value().unwrap().as_str().unwrap(), text);
    // The full text is retained, byte for byte, where the marker says.
    let retained = location_in(shown);
    assert_eq!(fs::read_to_string(&retained).unwrap(), text);
    assert_eq!(
        retained.parent().unwrap(),
        fs::canonicalize(dir.path()).unwrap()
    );
}

#[tokio::test]
async fn limits_are_exact_in_lines_and_in_bytes() {
    let dir = TempDir::new("exact");
    let limits = BoundLimits::new(100, 4_096);
    let registry = registry(dir.path(), limits);

    // Lines: at, below, one over; with and without a final newline.
    for (text, bounded) in [
        (numbered(99), false),
        (numbered(100), false),
        (numbered(100).trim_end().to_owned(), false),
        (numbered(101), true),
        (format!("{}x", numbered(100)), true),
    ] {
        let outcome = emit_text(&registry, &text, Surface::Direct).await;
        assert_eq!(
            only_text(&outcome) != text,
            bounded,
            "{} lines",
            count_lines(&text)
        );
        assert_eq!(plan_cut(&text, &limits).is_some(), bounded);
    }
    // Bytes: at, below, one over (one long line, few lines).
    for (len, bounded) in [(4_095, false), (4_096, false), (4_097, true)] {
        let text = "b".repeat(len);
        let outcome = emit_text(&registry, &text, Surface::Direct).await;
        let shown = only_text(&outcome);
        assert_eq!(shown != text, bounded, "{len} bytes");
        assert!(shown.len() <= 4_096, "{len} bytes shown as {}", shown.len());
    }
    assert_eq!(
        outputs(&dir).len(),
        3,
        "only oversized outputs were retained"
    );
}

/// The outputs retained in `dir`: its files but each one's `.retention` record.
fn outputs(dir: &TempDir) -> Vec<std::path::PathBuf> {
    let files = dir.files();
    for output in files.iter().filter(|file| file.extension().is_none()) {
        let mut record = output.clone().into_os_string();
        record.push(".retention");
        assert!(
            files.contains(&record.into()),
            "{} has its record",
            output.display()
        );
    }
    files
        .into_iter()
        .filter(|file| file.extension().is_none())
        .collect()
}

#[test]
fn multi_byte_characters_are_never_split() {
    let retained = RetainedOutput {
        handle: "h".into(),
        location: "/store/h".into(),
    };
    let limits = BoundLimits::new(10, 2_048);
    // Lines of mixed 1- to 4-byte characters, and single lines with no newline at all, at many
    // lengths so that the cut lands on every offset within a character.
    for len in 2_040..2_080 {
        for unit in ["é", "€", "😀", "aé€😀"] {
            let one_line: String = unit.repeat(len / unit.len() + 1);
            let many_lines: String = (0..len).map(|n| format!("{unit}{n}\n")).collect();
            for text in [&one_line, &many_lines] {
                if let Some(cut) = plan_cut(text, &limits) {
                    assert!(
                        text.is_char_boundary(cut.head_end)
                            && text.is_char_boundary(cut.tail_start)
                    );
                    let shown = preview(text, &cut, &retained, &limits);
                    assert!(shown.len() <= 2_048, "{}", shown.len());
                    assert!(count_lines(&shown) <= 10, "{}", count_lines(&shown));
                    assert!(text.starts_with(&shown[..cut.head_end]));
                }
            }
        }
    }
}

#[tokio::test]
async fn a_retention_failure_fails_the_call() {
    // A directory cannot be created under a regular file.
    let file = std::env::temp_dir().join(format!("toolprism-bounding-file-{}", std::process::id()));
    fs::write(&file, "not a directory").unwrap();
    let registry = registry(&file.join("store"), BoundLimits::new(10, 2_048));
    let outcome = emit_text(&registry, &numbered(50), Surface::Direct).await;
    fs::remove_file(&file).unwrap();
    assert_eq!(
        outcome.error().and_then(|e| e.code()),
        Some(codes::OUTPUT_NOT_RETAINED)
    );
    assert!(outcome.value().is_none(), "never a lossy success");

    // Small outputs never touch the store, so they still succeed.
    let registry = registry_at_unwritable();
    let outcome = emit_text(&registry, "short", Surface::Direct).await;
    assert!(!outcome.is_error());
}

fn registry_at_unwritable() -> Registry {
    registry(
        Path::new("/proc/toolprism-cannot-exist"),
        BoundLimits::default(),
    )
}

#[tokio::test]
async fn hostile_call_ids_cannot_escape_the_store_or_collide() {
    let dir = TempDir::new("hostile");
    let registry = registry(dir.path(), BoundLimits::new(10, 2_048));
    let text = numbered(50);
    let long = "x/".repeat(5_000);
    let ids = [
        "../../../../tmp/escaped",
        "/etc/passwd",
        "a\0b",
        "..",
        "",
        &long,
        "same",
        "same",
    ];
    for id in ids {
        let call = ToolCall::new(id, "emit", json!({"text": text}));
        let outcome = registry.dispatch(call, Surface::Direct).await;
        let retained = location_in(only_text(&outcome));
        assert_eq!(
            retained.parent().unwrap(),
            fs::canonicalize(dir.path()).unwrap(),
            "{id:?}"
        );
        assert_eq!(fs::read_to_string(&retained).unwrap(), text);
    }
    // One file per call: the repeated id did not overwrite the first file.
    assert_eq!(outputs(&dir).len(), ids.len());
    assert!(!Path::new("/tmp/escaped").exists());
    for file in outputs(&dir) {
        let name = file.file_name().unwrap().to_str().unwrap();
        assert!(name.len() < 120, "{name}");
        assert!(
            name.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
            "{name}"
        );
    }
}

#[tokio::test]
async fn images_and_nested_calls_are_untouched() {
    let dir = TempDir::new("untouched");
    let big_image = ContentBlock::image("A".repeat(200_000), "image/png");
    let image = big_image.clone();
    let picture = ToolDef::builder("picture")
        .description("Returns a big picture and a caption.")
        .handler(|args: Value, _cx: ToolContext| async move {
            Ok::<_, ToolError>(args["caption"].as_str().unwrap_or_default().to_owned())
        })
        .render(move |_args: &Value, caption: &String| {
            vec![image.clone(), ContentBlock::text(caption.clone())]
        })
        .build();
    let registry = Registry::builder()
        .tool(picture)
        .tool(emit())
        .limits(BoundLimits::new(10, 2_048))
        .output_store(FsOutputStore::new(dir.path()))
        .build()
        .unwrap();

    let small = registry
        .dispatch(
            ToolCall::new("c", "picture", json!({"caption": "a cat"})),
            Surface::Direct,
        )
        .await;
    assert_eq!(
        small.content(),
        [big_image.clone(), ContentBlock::text("a cat")]
    );
    assert!(dir.files().is_empty());

    let caption = numbered(100);
    let large = registry
        .dispatch(
            ToolCall::new("c", "picture", json!({"caption": caption})),
            Surface::Direct,
        )
        .await;
    assert_eq!(large.content()[0], big_image, "the image stays, first");
    assert!(
        large.content()[1]
            .as_text()
            .unwrap()
            .contains("output truncated")
    );

    let text = numbered(10_000);
    let nested = emit_text(&registry, &text, Surface::Nested).await;
    assert_eq!(
        only_text(&nested),
        text,
        "nested results never enter model context"
    );
    assert_eq!(outputs(&dir).len(), 1);
}

#[tokio::test]
async fn generic_bounding_runs_after_tool_owned_projections_and_policies() {
    let dir = TempDir::new("ordering");
    // A tool that owns its formatting limit: every match in the value, the first page in text.
    let search = ToolDef::builder("search")
        .description("Finds many things.")
        .handler(|_args: Value, _cx: ToolContext| async move {
            Ok::<_, ToolError>(
                (0..100_000)
                    .map(|n| format!("match {n}"))
                    .collect::<Vec<_>>(),
            )
        })
        .render(|_args: &Value, matches: &Vec<String>| {
            format!(
                "{}\n(first 50 of {} matches)",
                matches[..50].join("\n"),
                matches.len()
            )
        })
        .build();
    let flood = |_call: &ExecuteCall, outcome: &ToolOutcome| {
        if outcome
            .value()
            .is_some_and(|value| value.as_str() == Some("flood"))
        {
            PostDecision::replace_content(vec![ContentBlock::text(numbered(5_000))])
        } else {
            PostDecision::keep()
        }
    };
    let keep = |_call: &ExecuteCall, _outcome: &ToolOutcome| PostDecision::keep();
    let registries = [
        Registry::builder().post_execute(flood).post_execute(keep),
        Registry::builder().post_execute(keep).post_execute(flood),
    ]
    .map(|builder| {
        builder
            .tool(search.clone())
            .tool(emit())
            .output_store(FsOutputStore::new(dir.path()))
            .build()
            .unwrap()
    });
    for registry in &registries {
        let paged = registry
            .dispatch(ToolCall::new("c", "search", json!({})), Surface::Direct)
            .await;
        assert!(only_text(&paged).ends_with("(first 50 of 100000 matches)"));
        assert_eq!(paged.value().unwrap().as_array().unwrap().len(), 100_000);

        let flooded = emit_text(registry, "flood", Surface::Direct).await;
        assert!(only_text(&flooded).contains("output truncated"));
        assert!(count_lines(only_text(&flooded)) <= 2_000);
    }
}

#[tokio::test]
async fn a_tool_may_have_its_own_limits() {
    let dir = TempDir::new("per-tool");
    let registry = Registry::builder()
        .tool(emit().with_limits(BoundLimits::new(20, 2_048)))
        .output_store(FsOutputStore::new(dir.path()))
        .build()
        .unwrap();
    let outcome = emit_text(&registry, &numbered(30), Surface::Direct).await;
    assert!(only_text(&outcome).contains("output truncated"));
    assert!(count_lines(only_text(&outcome)) <= 20);
}

#[tokio::test]
async fn failure_text_is_bounded_too() {
    let dir = TempDir::new("failure");
    let noisy = ToolDef::builder("noisy")
        .description("Fails loudly.")
        .handler(|_args: Value, _cx: ToolContext| async move {
            Err::<(), _>(ToolError::new(numbered(5_000)).with_code("LOUD"))
        })
        .build();
    let registry = Registry::builder()
        .tool(noisy)
        .output_store(FsOutputStore::new(dir.path()))
        .build()
        .unwrap();
    let outcome = registry
        .dispatch(ToolCall::new("c", "noisy", json!({})), Surface::Direct)
        .await;
    assert_eq!(outcome.error().and_then(|e| e.code()), Some("LOUD"));
    assert!(count_lines(only_text(&outcome)) <= 2_000);
}

#[tokio::test]
async fn oversized_or_invalid_meta_is_dropped_and_the_call_succeeds() {
    let dir = TempDir::new("meta");
    let with_meta = |name: &str, meta: fn(&Value, &String) -> toolprism::present::Json<Value>| {
        ToolDef::builder(name)
            .description("Has metadata.")
            .handler(
                |_args: Value, _cx: ToolContext| async move { Ok::<_, ToolError>("ok".to_owned()) },
            )
            .presentation_meta(meta)
            .build()
    };
    let nan_meta = ToolDef::builder("nan_meta")
        .description("Has metadata that is not JSON.")
        .handler(
            |_args: Value, _cx: ToolContext| async move { Ok::<_, ToolError>("ok".to_owned()) },
        )
        .presentation_meta(|_args: &Value, _value: &String| {
            toolprism::present::Json(vec![f64::NAN])
        })
        .build();
    let registry = Registry::builder()
        .tool(with_meta("big_meta", |_, _| {
            toolprism::present::Json(json!({"blob": "x".repeat(100_000)}))
        }))
        .tool(with_meta("small_meta", |_, _| {
            toolprism::present::Json(json!({"badge": "small"}))
        }))
        .tool(nan_meta)
        .output_store(FsOutputStore::new(dir.path()))
        .build()
        .unwrap();
    for name in ["big_meta", "nan_meta"] {
        let outcome = registry
            .dispatch(ToolCall::new("c", name, json!({})), Surface::Direct)
            .await;
        assert!(!outcome.is_error(), "{name}: {outcome:?}");
        assert_eq!(outcome.meta(), None, "{name}");
        assert_eq!(outcome.value().unwrap(), &json!("ok"));
    }
    let small = registry
        .dispatch(ToolCall::new("c", "small_meta", json!({})), Surface::Direct)
        .await;
    assert_eq!(small.meta(), Some(&json!({"badge": "small"})));
}

#[test]
fn cleanup_removes_by_age_then_oldest_first_and_nothing_else() {
    let dir = TempDir::new("cleanup");
    let store = FsOutputStore::new(dir.path());
    let age = |days: u64| SystemTime::now() - Duration::from_secs(days * 24 * 60 * 60);
    let mut retained = Vec::new();
    for (days, size) in [(10, 100), (3, 400), (2, 300), (1, 200)] {
        let output = store
            .retain_now("c", &[&"x".repeat(size)], &Retention::default())
            .unwrap();
        fs::File::options()
            .write(true)
            .open(&output.location)
            .unwrap()
            .set_modified(age(days))
            .unwrap();
        retained.push(PathBuf::from(output.location));
    }
    let foreign = dir.path().join("notes.txt");
    fs::write(&foreign, "x".repeat(10_000)).unwrap();

    let report = store
        .cleanup(&RetentionRule {
            max_age: Duration::from_secs(7 * 24 * 60 * 60),
            max_total_bytes: 600,
        })
        .unwrap();
    // The 10-day-old file goes by age; then the 3-day-old one, the oldest, to get under 600.
    assert_eq!((report.removed_files, report.removed_bytes), (2, 500));
    assert_eq!((report.kept_files, report.kept_bytes), (2, 500));
    let exists: Vec<bool> = retained.iter().map(|path| path.exists()).collect();
    assert_eq!(exists, [false, false, true, true]);
    assert!(
        foreign.exists(),
        "files the store did not name are left alone"
    );
}
