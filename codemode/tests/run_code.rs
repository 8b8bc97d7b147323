//! `run_code` end to end: programs calling real tools through the pipeline, every way a run
//! can end, and the host left as it was.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolprism::RegistryBuilder;
use toolprism::pipeline::{ExecuteCall, PostDecision};
use toolprism::prelude::*;
use toolprism::present::present_result;
use toolprism_codemode::{CodeMode, Limits, Stop};
use toolprism_examples::tools::{self, Workspace};

/// Adds two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Fails, always, with its own code.
#[tool]
fn broken(#[arg] reason: String) -> Result<i64, ToolError> {
    Err(ToolError::new(reason)
        .with_code("BROKEN")
        .with_name("BrokenError"))
}

/// A count no JavaScript number holds exactly.
#[tool]
fn huge() -> u64 {
    u64::MAX
}

/// Counts calls, and waits for ever; notes when it is dropped.
struct Waiter {
    started: AtomicUsize,
    dropped: Arc<AtomicBool>,
}

#[toolset]
impl Waiter {
    /// Waits for ever.
    #[tool]
    async fn wait(&self) -> u32 {
        self.started.fetch_add(1, Ordering::SeqCst);
        let _guard = DropFlag(self.dropped.clone());
        std::future::pending::<()>().await;
        0
    }
}

struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

struct Fixture {
    registry: Registry,
    waiter: Arc<Waiter>,
    dir: tempfile::TempDir,
}

fn fixture(limits: Limits) -> Fixture {
    fixture_with(limits, |builder| builder)
}

fn fixture_with(limits: Limits, extra: impl FnOnce(RegistryBuilder) -> RegistryBuilder) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("notes.txt"),
        "alpha\nTODO: beta\ngamma\nTODO: delta\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("secret.txt"), "TODO: the secret plan\n").unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    let waiter = Arc::new(Waiter {
        started: AtomicUsize::new(0),
        dropped: Arc::new(AtomicBool::new(false)),
    });
    let builder = tools::register_all(Registry::builder(), &workspace)
        .tool(Add)
        .tool(Broken)
        .tool(Huge)
        .toolset_shared(waiter.clone());
    let registry = extra(builder).build().unwrap();
    CodeMode::new().limits(limits).register(&registry).unwrap();
    Fixture {
        registry,
        waiter,
        dir,
    }
}

async fn run(registry: &Registry, code: &str) -> ToolOutcome {
    let call = ToolCall::new("run", "run_code", json!({ "code": code }));
    registry.dispatch(call, Surface::Direct).await
}

fn value(outcome: &ToolOutcome) -> Value {
    match outcome.value() {
        Some(value) => value.as_value().clone(),
        None => panic!("the run failed: {:?}", outcome.error()),
    }
}

/// The failure's code and message.
fn failure(outcome: &ToolOutcome) -> (String, String) {
    let error = outcome.error().expect("the run should fail");
    (
        error.code().unwrap_or_default().to_owned(),
        error.message.clone(),
    )
}

fn assert_stop(outcome: &ToolOutcome, stop: Stop) -> String {
    let (code, message) = failure(outcome);
    assert_eq!(code, stop.code(), "{message}");
    assert_eq!(
        outcome.error().unwrap().info.as_ref().unwrap().name,
        "CodeModeError"
    );
    message
}

/// A run after a failed one behaves as the first did.
async fn assert_host_unaffected(registry: &Registry) {
    let outcome = run(registry, "return await tools.add({a: 20, b: 22});").await;
    assert_eq!(value(&outcome), json!({"logs": [], "result": 42}));
}

#[tokio::test]
async fn a_program_combines_tools_and_gets_their_canonical_values() {
    let fixture = fixture(Limits::default());
    let program = r#"
        const found = await tools.grep({ pattern: "TODO" });
        const files = [...new Set(found.matches.map(m => m.path))].sort();
        let lines = 0;
        for (const path of files) {
            const file = await tools.read({ path });
            console.log(path, file.kind, file.total_lines);
            lines += file.total_lines;
        }
        return { files, lines, first: found.matches[0].line };
    "#;
    let outcome = run(&fixture.registry, program).await;
    assert_eq!(
        value(&outcome),
        json!({
            "logs": ["notes.txt text 4", "secret.txt text 1"],
            "result": {"files": ["notes.txt", "secret.txt"], "lines": 5, "first": "TODO: beta"}
        })
    );
    let text = outcome.content()[0].as_text().unwrap();
    assert!(
        text.starts_with("Logs:\nnotes.txt text 4\nsecret.txt text 1\n\nResult:\n{"),
        "{text}"
    );
    // Nested calls are not bounded and carry no presentation: only the outer result does.
    assert!(outcome.meta().is_none());
}

#[tokio::test]
async fn a_failed_call_throws_an_error_the_program_can_catch() {
    let fixture = fixture(Limits::default());
    let program = r#"
        const seen = [];
        try { await tools.broken({ reason: "no luck" }); }
        catch (e) { seen.push([e instanceof Error, e.name, e.code, e.message]); }
        try { await tools.add({ a: "one", b: 2 }); }
        catch (e) { seen.push([e.name, e.code]); }
        try { await tools.add({ a: NaN, b: 2 }); }
        catch (e) { seen.push([e.code, e.message]); }
        try { await tools.huge(); }
        catch (e) { seen.push([e.code, e.message]); }
        return seen;
    "#;
    let result = value(&run(&fixture.registry, program).await)["result"].clone();
    assert_eq!(result[0], json!([true, "BrokenError", "BROKEN", "no luck"]));
    assert_eq!(result[1], json!(["ToolInputError", "INVALID_TOOL_INPUT"]));
    assert_eq!(result[2][0], "INVALID_TOOL_INPUT");
    assert!(
        result[2][1].as_str().unwrap().contains("`args.a` is NaN"),
        "{result}"
    );
    assert_eq!(result[3][0], "VALUE_NOT_REPRESENTABLE");
    assert!(
        result[3][1].as_str().unwrap().contains("`value`"),
        "{result}"
    );
}

/// Gives back the arguments it is given.
#[tool]
fn echo(args: Value) -> Value {
    args
}

/// Ids, the last beyond what a JavaScript number holds exactly.
#[tool]
fn ids() -> Vec<u64> {
    vec![1, u64::MAX]
}

#[tokio::test]
async fn values_cross_to_the_program_and_back_as_they_are() {
    let fixture = fixture_with(Limits::default(), |builder| builder.tool(Echo).tool(Ids));
    let sent = json!([
        0, -7, 2_147_483_647, -2_147_483_648, 2_147_483_648_i64, -9_007_199_254_740_991_i64,
        0.1, -2.5e-300, 1e300, "", "é \u{1F600}", true, false, null,
        {"nested": {"list": [1, "two", {"three": 3.5}]}, "": [], "__proto__": {"kept": true}}
    ]);
    // Parsed, not written as a literal: in a literal, `__proto__` would set the prototype.
    let text = serde_json::to_string(&sent.to_string()).unwrap();
    let program = format!(
        "const sent = JSON.parse({text});\n\
         const back = [];\n\
         for (const value of sent) back.push((await tools.echo({{ value }})).value);\n\
         return back;"
    );
    let outcome = run(&fixture.registry, &program).await;
    assert_eq!(value(&outcome)["result"], sent);

    let program = "try { await tools.ids(); } catch (e) { return [e.code, e.message]; }";
    let result = value(&run(&fixture.registry, program).await)["result"].clone();
    assert_eq!(result[0], "VALUE_NOT_REPRESENTABLE");
    assert!(
        result[1]
            .as_str()
            .unwrap()
            .starts_with("`value[1]` is an integer"),
        "{result}"
    );
}

#[tokio::test]
async fn promise_all_over_more_calls_than_the_width_completes_them_all() {
    let fixture = fixture(Limits::default().concurrent_calls(2));
    let program = "
        const sums = await Promise.all(Array.from({ length: 25 }, (_, i) => tools.add({ a: i, b: 1 })));
        return sums.reduce((x, y) => x + y, 0);
    ";
    assert_eq!(
        value(&run(&fixture.registry, program).await)["result"],
        json!(325)
    );
}

#[tokio::test]
async fn arguments_of_every_size_and_key_read_whole_call_after_call() {
    // Objects of 0 to 40 keys (past the key lists a run holds), read three times each, and 600
    // distinct key names (past the names it keeps), one of them past the length it keeps: each
    // call gets every key and value as sent.
    let fixture = fixture_with(Limits::default(), |builder| builder.tool(Echo));
    let program = "const long = 'k'.repeat(100);\n\
         const back = [];\n\
         for (let round = 0; round < 3; round++) {\n\
           for (let n = 0; n <= 40; n++) {\n\
             const sent = {};\n\
             for (let i = 0; i < n; i++) sent[`key${round * 200 + n * 4 + i}`] = i;\n\
             if (n === 7) sent[long] = round;\n\
             const got = (await tools.echo({ value: sent })).value;\n\
             const same = Object.keys(got).length === Object.keys(sent).length\n\
               && Object.keys(sent).every((key) => got[key] === sent[key]);\n\
             back.push(same ? 'same' : JSON.stringify([sent, got]));\n\
           }\n\
         }\n\
         return back.filter((each) => each !== 'same');";
    let outcome = run(&fixture.registry, program).await;
    assert_eq!(value(&outcome)["result"], json!([]), "{outcome:?}");
}

#[tokio::test]
async fn reading_arguments_forgets_each_call_s_objects() {
    // A refused cycle, then the same object without it, then one object twice in one value
    // (shared, not a cycle), then a getter that calls a tool while its own call's arguments
    // are being read: each call is read on its own, as if it were the run's first.
    let fixture = fixture_with(Limits::default(), |builder| builder.tool(Echo));
    let program = "const o = {}; o.self = o;\n\
         let refused = '';\n\
         try { await tools.echo({ value: o }); } catch (e) { refused = e.message; }\n\
         delete o.self;\n\
         const again = (await tools.echo({ value: o })).value;\n\
         const shared = { x: 1 };\n\
         const twice = (await tools.echo({ value: { a: shared, b: [shared] } })).value;\n\
         let inner;\n\
         const args = { get value() { inner = tools.echo({ value: { c: shared } }); return [shared]; } };\n\
         const outer = (await tools.echo(args)).value;\n\
         return [refused.includes('`args.value.self` is a cycle'), again, twice, outer, (await inner).value];";
    let outcome = run(&fixture.registry, program).await;
    assert_eq!(
        value(&outcome)["result"],
        json!([true, {}, {"a": {"x": 1}, "b": [{"x": 1}]}, [{"x": 1}], {"c": {"x": 1}}]),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn results_are_lossless_or_refused_naming_the_path() {
    let fixture = fixture(Limits::default());
    for (program, path_and_kind) in [
        ("return { a: [1, NaN] };", "`result.a[1]` is NaN"),
        ("return [1, undefined];", "`result[1]` is `undefined`"),
        ("return { big: 10n };", "`result.big` is a BigInt"),
        ("return { f() {} };", "`result.f` is a function"),
        (
            "const o = {}; o.self = o; return o;",
            "`result.self` is a cycle",
        ),
        ("return { m: new Map() };", "`result.m` is a Map object"),
        (
            "return { \"odd key\": Infinity };",
            "`result[\"odd key\"]` is Infinity",
        ),
        (
            "return { inner: { ['\\uD800']: 1 } };",
            "`result.inner` is an object with a key that is not valid Unicode",
        ),
    ] {
        let message = assert_stop(&run(&fixture.registry, program).await, Stop::NotJson);
        assert!(message.contains(path_and_kind), "{program}: {message}");
    }
    // What JSON holds comes back as it was: null is a result, undefined is none.
    let outcome = run(
        &fixture.registry,
        "return { n: null, x: 0.1, big: 9007199254740991, s: '\\u00e9' };",
    )
    .await;
    assert_eq!(
        value(&outcome)["result"],
        json!({"n": null, "x": 0.1, "big": 9_007_199_254_740_991_i64, "s": "é"})
    );
    // A key with a NUL in it is the whole key, not its text up to the NUL.
    let outcome = run(
        &fixture.registry,
        "return { ['a\\u0000b']: 1, ['a\\u0000c']: 2 };",
    )
    .await;
    assert_eq!(
        value(&outcome)["result"],
        json!({"a\u{0}b": 1, "a\u{0}c": 2})
    );
    assert_eq!(
        value(&run(&fixture.registry, "return null;").await),
        json!({"logs": [], "result": null})
    );
    assert_eq!(
        value(&run(&fixture.registry, "const x = 1;").await),
        json!({"logs": []})
    );
}

#[tokio::test]
async fn syntax_errors_and_exceptions_say_where() {
    let fixture = fixture(Limits::default());
    let message = assert_stop(
        &run(&fixture.registry, "const a = 1;\nconst b = ;").await,
        Stop::Syntax,
    );
    assert!(message.contains("line 2, column"), "{message}");
    let message = assert_stop(
        &run(&fixture.registry, "const a = 1;\n\n  null.boom;").await,
        Stop::Exception,
    );
    assert!(message.contains("TypeError"), "{message}");
    assert!(message.contains("line 3, column 3"), "{message}");
    // A SyntaxError the program throws is an exception, not a syntax error.
    assert_stop(
        &run(&fixture.registry, "JSON.parse('{');").await,
        Stop::Exception,
    );
    // An uncaught tool failure names its code.
    let message = assert_stop(
        &run(&fixture.registry, "await tools.broken({reason: 'nope'});").await,
        Stop::Exception,
    );
    assert!(message.contains("BrokenError (BROKEN): nope"), "{message}");
}

#[tokio::test]
async fn every_limit_ends_the_run_with_its_own_code_and_the_host_carries_on() {
    let limits = Limits::default()
        .memory_bytes(16 << 20)
        .cpu_time(Duration::from_millis(300))
        .wall_time(Duration::from_secs(20))
        .log_bytes(4 << 10)
        .tool_calls(1_000)
        .result_bytes(64 << 10);
    let fixture = fixture(limits);
    let cases = [
        ("while (true) {}", Stop::CpuTime),
        (
            "for (;;) { try { while (true) {} } catch (e) {} }",
            Stop::CpuTime,
        ),
        (
            "const a = []; while (true) a.push('x'.repeat(1000) + a.length);",
            Stop::Memory,
        ),
        ("function f(n) { return f(n + 1) + 1; } f(0);", Stop::Stack),
        ("while (true) console.log('flood');", Stop::Logs),
        (
            "for (;;) { try { console.log('x'.repeat(100)); } catch (e) {} }",
            Stop::Logs,
        ),
        (
            "for (let i = 0; i < 10000; i++) await tools.add({a: i, b: 0});",
            Stop::ToolCalls,
        ),
        ("await new Promise(() => {});", Stop::NeverSettled),
        ("return 'x'.repeat(100000);", Stop::ResultSize),
    ];
    for (program, stop) in cases {
        assert_stop(&run(&fixture.registry, program).await, stop);
        assert_host_unaffected(&fixture.registry).await;
    }
    // Logs up to the limit are kept, in the message.
    let message = assert_stop(
        &run(
            &fixture.registry,
            "console.log('before'); while (true) console.log('flood');",
        )
        .await,
        Stop::Logs,
    );
    assert!(
        message.contains("Logs before it ended:\nbefore\nflood"),
        "{message}"
    );
}

#[tokio::test]
async fn wall_time_drops_the_calls_still_running() {
    let fixture = fixture(Limits::default().wall_time(Duration::from_millis(300)));
    let outcome = run(&fixture.registry, "await tools.wait();").await;
    assert_stop(&outcome, Stop::WallTime);
    assert_eq!(fixture.waiter.started.load(Ordering::SeqCst), 1);
    assert!(fixture.waiter.dropped.load(Ordering::SeqCst));
    assert_host_unaffected(&fixture.registry).await;
}

#[tokio::test]
async fn dropping_run_code_cancels_the_nested_call() {
    let fixture = fixture(Limits::default());
    let registry = fixture.registry.clone();
    let task = tokio::spawn(async move { run(&registry, "await tools.wait(); return 1;").await });
    for _ in 0..1_000 {
        if fixture.waiter.started.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(fixture.waiter.started.load(Ordering::SeqCst), 1);
    assert!(!fixture.waiter.dropped.load(Ordering::SeqCst));
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    assert!(fixture.waiter.dropped.load(Ordering::SeqCst));
    assert_host_unaffected(&fixture.registry).await;
}

/// Hides what `secret.txt` says from the model, but not from programs: content only.
fn hide_secret_text(call: &ExecuteCall, _outcome: &ToolOutcome) -> PostDecision {
    if call.name() == "read" && call.args()["path"] == "secret.txt" {
        PostDecision::replace_content(vec![ContentBlock::text("[hidden]")])
    } else {
        PostDecision::keep()
    }
}

/// Replaces `add`'s value, and blocks `huge`: the value itself is what changes. Replaces what
/// the model sees of a run.
fn rewrite_values(call: &ExecuteCall, _outcome: &ToolOutcome) -> PostDecision {
    match call.name() {
        "add" => PostDecision::replace_value(json!(-1)),
        "huge" => PostDecision::block("not for you"),
        "run_code" => PostDecision::replace_content(vec![ContentBlock::text("[run reviewed]")]),
        _ => PostDecision::keep(),
    }
}

#[tokio::test]
async fn replacing_content_is_not_confidentiality_but_replacing_the_value_is() {
    let fixture = fixture_with(Limits::default(), |builder| {
        builder
            .post_execute(hide_secret_text)
            .post_execute(rewrite_values)
    });
    let program = r#"
        const secret = await tools.read({ path: "secret.txt" });
        const sum = await tools.add({ a: 1, b: 2 });
        let blocked;
        try { await tools.huge(); } catch (e) { blocked = e.code; }
        return { line: secret.lines[0].text, sum, blocked };
    "#;
    let outcome = run(&fixture.registry, program).await;
    assert_eq!(
        value(&outcome)["result"],
        json!({"line": "TODO: the secret plan", "sum": -1, "blocked": "BLOCKED_BY_POLICY"})
    );
    // The run's card shows the final, post-policy content.
    let card = present_result(
        "run_code",
        &json!({}),
        outcome.content(),
        false,
        outcome.meta(),
    );
    let Card::Generic(card) = card else {
        panic!("{card:?}")
    };
    assert_eq!(card.output.unwrap(), [ContentBlock::text("[run reviewed]")]);
}

#[tokio::test]
async fn a_program_cannot_reach_anything_but_tools_and_console() {
    let fixture = fixture(Limits::default());
    let program = r#"
        const names = Object.getOwnPropertyNames(globalThis);
        return {
            require: typeof require, process: typeof process, fetch: typeof fetch,
            std: typeof std, os: typeof os, setTimeout: typeof setTimeout,
            tools: Object.keys(tools).sort(), console: typeof console.log,
            host: names.filter(n => ["tools", "console"].includes(n)).sort(),
            frozen: Object.isFrozen(tools),
        };
    "#;
    let result = value(&run(&fixture.registry, program).await)["result"].clone();
    for global in ["require", "process", "fetch", "std", "os", "setTimeout"] {
        assert_eq!(result[global], "undefined", "{global}");
    }
    let tools: Vec<&str> = result["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(
        tools.contains(&"read") && tools.contains(&"add"),
        "{tools:?}"
    );
    assert!(
        !tools.contains(&"run_code"),
        "run_code does not call itself"
    );
    assert_eq!(result["frozen"], true);
}

#[tokio::test]
async fn the_description_declares_the_tools_in_typescript() {
    let fixture = fixture(Limits::default());
    let snapshot = fixture.registry.snapshot();
    let description = snapshot.definition("run_code").unwrap().description();
    assert!(
        description.contains("declare const tools: {"),
        "{description}"
    );
    assert!(
        description.contains("read(args: ReadArgs): Promise<ReadValue>;"),
        "{description}"
    );
    assert!(
        description.contains("add(args: AddArgs): Promise<AddValue>;"),
        "{description}"
    );
    assert!(!description.contains("run_code("), "{description}");
}

/// Counts the calls in flight, and the most there ever were.
#[derive(Default)]
struct Gauge {
    now: AtomicUsize,
    most: AtomicUsize,
}

#[toolset]
impl Gauge {
    /// Holds a slot for a few turns of the executor.
    #[tool(read_only)]
    async fn hold(&self) -> u32 {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        for _ in 0..3 {
            tokio::task::yield_now().await;
        }
        self.now.fetch_sub(1, Ordering::SeqCst);
        1
    }

    /// Holds a slot for a while.
    #[tool(read_only)]
    async fn linger(&self) -> u32 {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(20)).await;
        self.now.fetch_sub(1, Ordering::SeqCst);
        1
    }
}

#[tokio::test]
async fn concurrent_calls_never_exceed_the_bound_and_do_overlap() {
    let gauge = Arc::new(Gauge::default());
    let fixture = fixture_with(Limits::default().concurrent_calls(3), |builder| {
        builder.toolset_shared(gauge.clone())
    });
    let program = "const all = await Promise.all(Array.from({length: 30}, () => tools.hold())); return all.length;";
    assert_eq!(
        value(&run(&fixture.registry, program).await)["result"],
        json!(30)
    );
    assert_eq!(gauge.most.load(Ordering::SeqCst), 3);
}

/// Slots a program reads and writes, each write giving way before it lands.
#[derive(Default)]
struct Slots(std::sync::Mutex<std::collections::BTreeMap<String, i64>>);

#[toolset]
impl Slots {
    /// Sets a slot, after a few turns of the executor: the old value.
    #[tool(resource = "slot:{key}")]
    async fn put(&self, #[arg] key: String, #[arg] value: i64) -> i64 {
        for _ in 0..3 {
            tokio::task::yield_now().await;
        }
        self.0.lock().unwrap().insert(key, value).unwrap_or(0)
    }

    /// Reads a slot.
    #[tool(read_only, resource = "slot:{key}")]
    fn get(&self, #[arg] key: String) -> i64 {
        self.0.lock().unwrap().get(&key).copied().unwrap_or(0)
    }
}

#[tokio::test]
async fn a_programs_calls_made_at_once_keep_its_order_where_their_effects_meet() {
    let fixture = fixture_with(Limits::default(), |builder| {
        builder.toolset_shared(Arc::new(Slots::default()))
    });
    let program = r#"
        const [wrote, read, other] = await Promise.all([
            tools.put({ key: "a", value: 5 }),
            tools.get({ key: "a" }),
            tools.get({ key: "b" }),
        ]);
        const [again, last] = await Promise.all([
            tools.put({ key: "a", value: 7 }),
            tools.put({ key: "a", value: 9 }),
        ]);
        return [wrote, read, other, again, last, await tools.get({ key: "a" })];
    "#;
    assert_eq!(
        value(&run(&fixture.registry, program).await)["result"],
        json!([0, 5, 0, 5, 7, 9]),
        "the read of `a` waits for the write to `a`; the writes to `a` keep their order"
    );
}

#[tokio::test]
async fn the_session_log_holds_each_nested_call_and_replays_the_run_exactly() {
    use toolprism::session::{LogOptions, SessionEvent, SessionLog, replay};
    let fixture = fixture(Limits::default());
    let path = fixture.dir.path().join("session.jsonl");
    let (log, _) = SessionLog::open(&path, LogOptions::default()).unwrap();
    let program = r#"
        const sum = await tools.add({ a: 2, b: 3 });
        const file = await tools.read({ path: "notes.txt" });
        try { await tools.broken({ reason: "expected" }); } catch (e) { console.log(e.code); }
        return { sum, lines: file.total_lines };
    "#;
    let call = ToolCall::new("run-1", "run_code", json!({ "code": program }));
    let live = log
        .dispatch(&fixture.registry.snapshot(), call, Surface::Direct)
        .await
        .unwrap();
    assert_eq!(value(&live)["result"], json!({"sum": 5, "lines": 4}));

    let contents = SessionLog::read(&path).unwrap();
    assert!(contents.problems.is_empty(), "{:?}", contents.problems);
    let nested: Vec<_> = contents
        .events
        .iter()
        .filter_map(|event| match event {
            SessionEvent::NestedResult(nested) => Some(nested),
            _ => None,
        })
        .collect();
    let shown: Vec<_> = nested
        .iter()
        .map(|n| (n.id.as_str(), n.name.as_str(), n.is_error))
        .collect();
    assert_eq!(
        shown,
        [
            ("run-1.1", "add", false),
            ("run-1.2", "read", false),
            ("run-1.3", "broken", true)
        ]
    );
    assert!(nested.iter().all(|n| n.parent_id == "run-1"));
    // The rendered content, never the value: `read`'s text has line numbers its value lacks.
    assert_eq!(nested[0].content, [ContentBlock::text("5")]);
    assert!(
        nested[1].content[0]
            .as_text()
            .unwrap()
            .contains("TODO: beta")
    );
    assert_eq!(nested[2].content, [ContentBlock::text("expected")]);

    let replayed = replay(&contents.events);
    assert_eq!(replayed.len(), 1);
    let result = replayed[0].result.as_ref().unwrap();
    let live_card = present_result(
        "run_code",
        &json!({ "code": program }),
        live.content(),
        live.is_error(),
        live.meta(),
    );
    assert_eq!(
        serde_json::to_string(&result.card).unwrap(),
        serde_json::to_string(&live_card).unwrap()
    );
    assert_eq!(result.content, live.content());
    assert_eq!(replayed[0].nested.len(), 3);
}

#[tokio::test]
async fn typescript_programs_run_with_their_types_stripped_and_errors_where_they_were_written() {
    let fixture = fixture(Limits::default());
    let program = "
        interface Sum { total: number; parts: number[] }
        const parts: number[] = [1, 2, 3];
        const sums = await Promise.all(parts.map((n: number) => tools.add({ a: n, b: n })));
        const result: Sum = { total: sums.reduce((x: number, y: number) => x + y, 0), parts: sums as number[] };
        return result;
    ";
    assert_eq!(
        value(&run(&fixture.registry, program).await)["result"],
        json!({"total": 12, "parts": [2, 4, 6]})
    );
    let program =
        "type Row = { n: number };\nconst rows: Row[] = [];\n\n    (rows[0] as Row).n.toFixed();";
    let message = assert_stop(&run(&fixture.registry, program).await, Stop::Exception);
    assert!(message.contains("line 4, column 6"), "{message}");
    // Neither JavaScript nor TypeScript: the JavaScript syntax error is reported.
    let message = assert_stop(
        &run(&fixture.registry, "const a: number = ;").await,
        Stop::Syntax,
    );
    assert!(message.contains("line 1, column"), "{message}");
}

/// Far more text than a model may read at once.
#[tool]
fn big() -> String {
    "a line of output\n".repeat(20_000)
}

#[tokio::test]
async fn nested_values_are_never_bounded_only_the_run_is() {
    use toolprism::bound::BoundLimits;
    let fixture = fixture_with(Limits::default(), |builder| {
        builder.tool(Big).limits(BoundLimits::new(40, 4 * 1024))
    });
    // The program reads the whole value, 340,000 bytes, though the model may read 4 KiB.
    let program = "const text = await tools.big(); return text.split('\\n').length;";
    assert_eq!(
        value(&run(&fixture.registry, program).await)["result"],
        json!(20_001)
    );
    // The run's own result is bounded for the model; its value is whole.
    let outcome = run(&fixture.registry, "return await tools.big();").await;
    assert_eq!(
        value(&outcome)["result"].as_str().unwrap().len(),
        17 * 20_000
    );
    let text = outcome.content()[0].as_text().unwrap();
    assert!(text.len() < 8 * 1024, "{} bytes shown", text.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_beyond_the_bound_wait_their_turn() {
    let gauge = Arc::new(Gauge::default());
    let registry = Registry::builder()
        .toolset_shared(gauge.clone())
        .build()
        .unwrap();
    CodeMode::new()
        .concurrent_runs(1)
        .register(&registry)
        .unwrap();
    let program = "let n = 0; for (let i = 0; i < 5; i++) n += await tools.linger(); return n;";
    let runs: Vec<_> = (0..4)
        .map(|_| {
            let registry = registry.clone();
            tokio::spawn(async move { run(&registry, program).await })
        })
        .collect();
    for run in runs {
        assert_eq!(value(&run.await.unwrap())["result"], json!(5));
    }
    // One program at a time, each making one call at a time: never two calls in flight.
    assert_eq!(gauge.most.load(Ordering::SeqCst), 1);
}

/// Counts its calls, and takes `ms` milliseconds of the calling thread each time.
struct Sleeper {
    calls: AtomicUsize,
}

#[toolset]
impl Sleeper {
    /// Sleeps, blocking its thread.
    #[tool]
    fn nap(&self, #[arg] ms: u64) -> u64 {
        self.calls.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(ms));
        ms
    }
}

fn sleeper_fixture(limits: Limits) -> (Fixture, Arc<Sleeper>) {
    let sleeper = Arc::new(Sleeper {
        calls: AtomicUsize::new(0),
    });
    let shared = sleeper.clone();
    let fixture = fixture_with(limits, move |builder| builder.toolset_shared(shared));
    (fixture, sleeper)
}

#[tokio::test]
async fn calls_that_complete_at_once_still_end_at_the_wall_time() {
    let (fixture, sleeper) =
        sleeper_fixture(Limits::default().wall_time(Duration::from_millis(300)));
    let outcome = run(
        &fixture.registry,
        "for (let i = 0; i < 100; i++) await tools.nap({ms: 50}); return 1;",
    )
    .await;
    assert_stop(&outcome, Stop::WallTime);
    assert!(sleeper.calls.load(Ordering::SeqCst) < 100);
    assert_host_unaffected(&fixture.registry).await;
}

#[tokio::test]
async fn a_dropped_run_makes_no_more_calls() {
    let (fixture, sleeper) = sleeper_fixture(Limits::default());
    let registry = fixture.registry.clone();
    let task = tokio::spawn(async move {
        run(
            &registry,
            "for (let i = 0; i < 1000; i++) await tools.nap({ms: 2}); return 1;",
        )
        .await
    });
    for _ in 0..1_000 {
        if sleeper.calls.load(Ordering::SeqCst) >= 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    // The call running when it was dropped may finish; none starts after.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let after_drop = sleeper.calls.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(sleeper.calls.load(Ordering::SeqCst), after_drop);
    assert!(after_drop < 1_000);
    assert_host_unaffected(&fixture.registry).await;
}
