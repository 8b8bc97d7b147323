//! Finding one tool among many: BM25 recall over 425 real tool definitions written by others
//! (`golden/search`, provenance in its `SOURCES.md`) against tasks labeled for this test, the
//! regular-expression mode, and the `tool_search` tool end to end with each provider: found
//! tools are callable on the next turn, deferred tools stay dispatchable.

use std::sync::LazyLock;

use proptest::prelude::*;
use serde_json::{Value, json};
use toolprism::lower::{Provider, ToolOptions};
use toolprism::pipeline::Snapshot;
use toolprism::prelude::*;
use toolprism::search::{MIN_SHARED_PREFIX, ToolIndex, ToolSearch, words};
use toolprism::tool::IntoToolDef;
use toolprism::turn::{Conversation, RunOptions, read_response, run_calls};
use toolprism_tests::check_wire;

fn corpus() -> Vec<Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/golden/search/tools.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The corpus as tools of a registry: each advertises its real schema.
fn corpus_registry() -> Registry {
    let tools = corpus().into_iter().map(|tool| {
        let mut def = ToolDef::builder(tool["name"].as_str().unwrap())
            .description(tool["description"].as_str().unwrap_or_default())
            .input_schema(json!({"type": "object"}))
            .output_schema(json!(true))
            .handler(|_: Value, _cx: ToolContext| async { Ok::<_, ToolError>(Value::Null) })
            .build()
            .with_advertised_input_schema(tool["inputSchema"].clone());
        if let Some(title) = tool["title"].as_str() {
            def = def.with_title(title);
        }
        def
    });
    Registry::builder().tools(tools).build().unwrap()
}

#[test]
fn bm25_finds_the_tool_for_nine_tasks_in_ten_among_425_real_ones() {
    let registry = corpus_registry();
    let snapshot = registry.snapshot();
    assert_eq!(snapshot.definitions().len(), 425);
    let index = ToolIndex::new(snapshot.definitions());
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/golden/search/queries.json");
    let queries: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(queries.len() >= 50);
    let mut missed = Vec::new();
    for query in &queries {
        let found = index.search(query["query"].as_str().unwrap(), 5);
        let expected = query["expected"].as_str().unwrap();
        assert!(
            snapshot.definition(expected).is_some(),
            "{expected} is in the corpus"
        );
        if !found.iter().any(|tool| tool.name() == expected) {
            missed.push(format!("{} -> {expected}", query["query"]));
        }
    }
    let found = u32::try_from(queries.len() - missed.len()).unwrap();
    let recall = f64::from(found) / f64::from(u32::try_from(queries.len()).unwrap());
    println!(
        "recall@5 = {recall:.3} ({found} of {} tasks)",
        queries.len()
    );
    assert!(
        recall >= 0.9,
        "recall@5 {recall:.3}; missed:\n{}",
        missed.join("\n")
    );
    // Nothing found for words no tool has.
    assert!(index.search("zyzzyva quux", 5).is_empty());
}

/// The names of the first five tools a search of the registry's snapshot finds for a query.
fn searcher(registry: &Registry) -> impl Fn(&str) -> Vec<String> {
    let snapshot = registry.snapshot();
    let index = ToolIndex::new(snapshot.definitions());
    move |query| {
        index
            .search(query, 5)
            .iter()
            .map(|tool| tool.name().to_owned())
            .collect()
    }
}

/// A tool that does nothing, searched by its name and description.
fn described(name: &str, description: &str) -> ToolDef {
    ToolDef::builder(name)
        .description(description)
        .input_schema(json!({"type": "object"}))
        .handler(|_: Value, _cx: ToolContext| async { Ok::<_, ToolError>(Value::Null) })
        .build()
}

#[test]
fn a_query_word_the_tools_lack_is_read_as_their_closest_words() {
    let registry = Registry::builder()
        .tool(described("tag_issue", "Adds a label to an issue."))
        .tool(described(
            "labeled_items",
            "Lists the items that are labeled.",
        ))
        .tool(described("jira_login", "Signs in to Atlassian."))
        .tool(described("lookup", "Reads the information of a record."))
        .build()
        .unwrap();
    let names = searcher(&registry);
    // No tool has `labeling` or `labelz`: each is read as the words sharing its longest start
    // (`label`, `labeled`) that share three quarters of the shorter word too: `labeled`
    // shares five of its seven letters with `labeling`, and five of six with `labelz`.
    assert_eq!(names("labeling"), ["tag_issue"]);
    let mut both = names("labelz");
    both.sort();
    assert_eq!(both, ["labeled_items", "tag_issue"]);
    // A misspelling finds the word it misses.
    assert_eq!(names("informaton"), ["lookup"]);
    // Four shared letters of seven are not enough: `atlanta` is not `atlassian`.
    assert!(names("atlanta").is_empty());
    // A word of the query itself outweighs a variant of another.
    assert_eq!(names("label labeling")[0], "tag_issue");
    // Nor is a word that shares fewer than four letters with every word of the tools.
    assert!(names("lab").is_empty());
}

/// A temperature's unit.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Unit {
    Celsius,
    Fahrenheit,
}

/// How a route is travelled.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Mode {
    /// By car.
    Driving,
    /// On foot.
    Walking,
}

/// Gets the current conditions at a place.
#[tool]
fn conditions(#[arg] place: String, #[arg] unit: Option<Unit>) -> String {
    format!("{place} {unit:?}")
}

/// Plans a route between two places.
#[tool]
fn route(#[arg] from: String, #[arg] to: String, #[arg] modes: Vec<Mode>) -> String {
    format!("{from} {to} {modes:?}")
}

#[test]
fn a_tool_is_found_by_the_values_its_parameters_are_limited_to() {
    // 33 values, a value longer than a listed value may be, a string past the 32 entries of an
    // `enum` read, and a parameter whose schema refers to itself.
    let many: Vec<Value> = (0..31)
        .map(|n| format!("alpha{n}"))
        .chain(["zeppelin".to_owned(), "xylophone".to_owned()])
        .map(|value| json!({"const": value}))
        .collect();
    let numbers: Vec<Value> = (0..100_000)
        .map(|n| json!(n))
        .chain([json!("late")])
        .collect();
    let hostile = described("pick", "Picks one.").with_advertised_input_schema(json!({
        "type": "object",
        "properties": {
            "choice": {"oneOf": many},
            "long": {"enum": ["w".repeat(65), "kiwi", "kiwi"]},
            "looping": {"$ref": "#/properties/looping", "anyOf": [{"$ref": "#"}]},
            "numbered": {"enum": numbers},
        },
    }));
    let registry = Registry::builder()
        .tool(Conditions)
        .tool(Route)
        .tool(hostile)
        .build()
        .unwrap();
    let names = searcher(&registry);
    // `Option<Unit>`: an `anyOf` of a `$ref` to an `enum`, and null.
    assert_eq!(names("how warm is it, in fahrenheit"), ["conditions"]);
    // `Vec<Mode>`: the items' `$ref` to a `oneOf` of a `const` each (its variants have docs).
    assert_eq!(names("walking"), ["route"]);
    // The first 32 values of a parameter are read, no more.
    assert_eq!(names("zeppelin"), ["pick"]);
    assert!(names("xylophone").is_empty());
    // A value of at most 64 bytes is read; a longer one is not.
    assert_eq!(names("kiwi"), ["pick"]);
    assert!(names(&"w".repeat(65)).is_empty());
    // Only the first 32 entries of an `enum` are read.
    assert!(names("late").is_empty());
}

/// The first 60 tools of the corpus, by name and description alone, and their index: built
/// once for every case of the property below.
static SMALL_INDEX: LazyLock<(Vec<(String, String)>, ToolIndex)> = LazyLock::new(|| {
    let tools: Vec<(String, String)> = corpus()
        .iter()
        .take(60)
        .map(|tool| {
            let description = tool["description"].as_str().unwrap_or_default();
            (
                tool["name"].as_str().unwrap().to_owned(),
                description.to_owned(),
            )
        })
        .collect();
    let registry = Registry::builder()
        .tools(
            tools
                .iter()
                .map(|(name, description)| described(name, description)),
        )
        .build()
        .unwrap();
    let index = ToolIndex::new(registry.snapshot().definitions());
    (tools, index)
});

/// What a model might add to a word it misspells or inflects.
const ENDINGS: [&str; 7] = ["", "ing", "ed", "z", "é", "ies", "\u{1F600}"];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Whatever the query, a search repeats exactly, returns at most what it is asked for, and
    /// returns a tool only for a word they share: one of the query's, or one a word of the
    /// query no tool has is read as (its first letters shared).
    #[test]
    fn a_search_returns_a_tool_only_for_a_word_they_share(
        picks in proptest::collection::vec(
            (0usize..60, 0usize..40, 0usize..20, proptest::sample::select(ENDINGS.to_vec())),
            1..5,
        ),
        noise in "\\PC{0,12}",
    ) {
        let (tools, index) = &*SMALL_INDEX;
        let mut query = noise.clone();
        // Words of the tools, cut short or with something added.
        for (tool, word, kept, ending) in &picks {
            let (name, description) = &tools[*tool];
            let known = words(&format!("{name} {description}"));
            let word = &known[word % known.len()];
            let kept = kept % (word.chars().count() + 1);
            query.push(' ');
            query.extend(word.chars().take(kept));
            query.push_str(ending);
        }
        let search = |query: &str| -> Vec<String> {
            index.search(query, 5).iter().map(|tool| tool.name().to_owned()).collect()
        };
        let found = search(&query);
        prop_assert_eq!(&found, &search(&query));
        prop_assert!(found.len() <= 5);
        let asked = words(&query);
        let start = |word: &str| word.chars().take(MIN_SHARED_PREFIX).collect::<String>();
        for name in &found {
            let (_, description) = tools.iter().find(|(tool, _)| tool == name).unwrap();
            let has = words(&format!("{name} {description}"));
            let shares = has.iter().any(|word| {
                asked.contains(word)
                    || asked.iter().any(|asked| {
                        asked.chars().count() >= MIN_SHARED_PREFIX && start(asked) == start(word)
                    })
            });
            prop_assert!(shares, "{} for {:?}", name, query);
        }
    }
}

#[test]
fn the_regex_mode_matches_names_and_descriptions_and_refuses_what_it_cannot_run() {
    let registry = corpus_registry();
    let index = ToolIndex::new(registry.snapshot().definitions());
    let found = index.search_regex("^git_(status|log)$", 10).unwrap();
    let names: Vec<&str> = found.iter().map(|tool| tool.name()).collect();
    assert_eq!(names, ["git_status", "git_log"]);
    assert!(
        index
            .search_regex("(?=look)ahead", 5)
            .unwrap_err()
            .contains("not a regular expression")
    );
    assert!(
        index
            .search_regex(&"a".repeat(201), 5)
            .unwrap_err()
            .contains("longer than 200")
    );
}

/// Lists the open pull requests of a repository.
#[tool(defer_loading)]
fn list_pull_requests(#[arg(description = "owner/name")] repo: String) -> Vec<String> {
    vec![format!("{repo}#1")]
}

/// Reads a file.
#[tool]
fn read(#[arg] path: String) -> String {
    path
}

fn registry() -> Registry {
    Registry::builder()
        .tool(Read)
        .tool(ListPullRequests)
        .tool(ToolSearch::new().tool())
        .build()
        .unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

/// Reads the model's `response`, runs its calls in `snapshot`, adds the turn to
/// `conversation`, and returns the turn's outcomes and the next request's body.
fn take_turn(
    conversation: &mut Conversation,
    snapshot: &Snapshot,
    response: &Value,
) -> (Vec<ToolOutcome>, Value) {
    let turn = read_response(conversation.provider(), response.to_string().as_bytes()).unwrap();
    let outcomes = runtime()
        .block_on(run_calls(snapshot, &turn, &RunOptions::default()))
        .unwrap();
    conversation.push_turn(&turn, &outcomes).unwrap();
    (
        outcomes,
        conversation
            .request("http://127.0.0.1:1", "key", false)
            .body,
    )
}

/// The first element of `list` whose `key` is `value`.
fn find<'a>(list: &'a Value, key: &str, value: &str) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|item| item[key] == value)
        .unwrap_or_else(|| panic!("no {key} {value} in {list:#}"))
}

fn names(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .flat_map(|tool| {
            let declarations = tool["functionDeclarations"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let own = tool["name"]
                .as_str()
                .or_else(|| tool["function"]["name"].as_str())
                .map(str::to_owned);
            own.into_iter().chain(
                declarations
                    .into_iter()
                    .filter_map(|d| d["name"].as_str().map(str::to_owned)),
            )
        })
        .collect()
}

#[test]
fn a_deferred_tool_is_found_and_offered_on_the_next_turn_where_a_provider_cannot_defer() {
    let registry = registry();
    let snapshot = registry.snapshot();
    let mut conversation = Conversation::new(Provider::OpenAiChat, "a-model")
        .with_tools(&snapshot, ToolOptions::default())
        .unwrap();
    conversation.user("Which pull requests are open on toolprism/toolprism?");
    assert_eq!(
        names(&conversation.tools()),
        ["read", "tool_search"],
        "deferred: not offered yet"
    );

    let body = json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "tool_search", "arguments": "{\"query\": \"open pull requests\"}"}}]}}]});
    let (outcomes, _) = take_turn(&mut conversation, &snapshot, &body);
    assert_eq!(
        outcomes[0].value().unwrap()["tools"][0]["name"],
        "list_pull_requests"
    );
    assert_eq!(
        names(&conversation.tools()),
        ["read", "list_pull_requests", "tool_search"]
    );

    // Deferred or not, it was dispatchable all along.
    let outcome = runtime().block_on(registry.dispatch(
        ToolCall::new("c2", "list_pull_requests", json!({"repo": "a/b"})),
        Surface::Direct,
    ));
    assert_eq!(outcome.value().unwrap(), &json!(["a/b#1"]));
}

#[test]
fn each_provider_continues_from_the_form_it_knows() {
    let registry = registry();
    let snapshot = registry.snapshot();
    let mut cases = Vec::new();

    // Anthropic: every tool sent, the deferred one marked; the search's result carries a
    // `tool_reference` the API expands.
    let mut anthropic = Conversation::new(Provider::Anthropic, "claude")
        .with_tools(&snapshot, ToolOptions::default())
        .unwrap();
    anthropic.user("open PRs?");
    let body = json!({"type": "message", "role": "assistant", "stop_reason": "tool_use", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "tool_search", "input": {"query": "pull requests"}}]});
    let (_, request) = take_turn(&mut anthropic, &snapshot, &body);
    let deferred = find(&request["tools"], "name", "list_pull_requests");
    assert_eq!(deferred["defer_loading"], true);
    let result = &request["messages"][2]["content"][0];
    assert!(
        result["content"]
            .as_array()
            .unwrap()
            .contains(&json!({"type": "tool_reference", "tool_name": "list_pull_requests"})),
        "{result}"
    );
    cases.push(json!({"name": "anthropic", "type": "anthropic.request", "value": request}));

    // OpenAI Responses: the search is its client-side `tool_search`, answered with a
    // `tool_search_output` holding the found tools' definitions.
    let mut responses = Conversation::new(Provider::OpenAiResponses, "gpt")
        .with_tools(&snapshot, ToolOptions::default())
        .unwrap();
    responses.user("open PRs?");
    let first = responses.request("http://127.0.0.1:1", "key", false).body;
    let search = find(&first["tools"], "type", "tool_search");
    assert_eq!(search["execution"], "client");
    let body = json!({"object": "response", "status": "completed", "output": [
        {"type": "tool_search_call", "id": "tsc_1", "call_id": "call_s", "execution": "client", "status": "completed", "arguments": {"query": "pull requests"}}]});
    let (outcomes, request) = take_turn(&mut responses, &snapshot, &body);
    assert_eq!(
        outcomes[0].value().unwrap()["tools"][0]["name"],
        "list_pull_requests"
    );
    let output = find(&request["input"], "type", "tool_search_output");
    assert_eq!(output["call_id"], "call_s");
    assert_eq!(output["tools"][0]["name"], "list_pull_requests");
    cases.push(json!({"name": "responses", "type": "openai.responses.request", "value": request}));

    // Gemini: no deferral of its own: the found tool's declaration is sent from then on.
    let mut gemini = Conversation::new(Provider::Gemini, "gemini")
        .with_tools(&snapshot, ToolOptions::default())
        .unwrap();
    gemini.user("open PRs?");
    let body = json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "tool_search", "args": {"query": "pull requests"}}}]}, "finishReason": "STOP"}]});
    let (_, request) = take_turn(&mut gemini, &snapshot, &body);
    assert!(names(request["tools"].as_array().unwrap()).contains(&"list_pull_requests".to_owned()));
    cases.push(json!({"name": "gemini", "type": "gemini.request", "value": request}));

    let report = check_wire("search-cases.json", &cases);
    assert_eq!(report["failures"], json!([]), "{report:#}");
}

/// The weather forecast for a city.
#[tool(defer_loading)]
fn forecast(#[arg] city: String) -> String {
    city
}

#[test]
fn the_index_follows_the_snapshot_a_call_runs_in() {
    let registry = registry();
    let runtime = runtime();
    let search = |query: &str| {
        let outcome = runtime.block_on(registry.dispatch(
            ToolCall::new("c", "tool_search", json!({"query": query})),
            Surface::Direct,
        ));
        outcome.value().unwrap()["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert!(search("weather forecast").is_empty());
    registry.register(Forecast.into_tool_def()).unwrap();
    assert_eq!(search("weather forecast"), ["forecast"]);
    // The search tool does not find itself, nor a tool only programs may call.
    assert!(!search("finds tools search").contains(&"tool_search".to_owned()));
}

/// The customer a CRM knows by an email address.
#[tool]
fn get_customer(#[arg] email: String) -> String {
    email
}

/// The orders a CRM holds for a customer.
#[tool(defer_loading)]
fn list_orders(#[arg] email: String) -> Vec<String> {
    vec![email]
}

#[test]
fn a_namespace_groups_its_tools_for_responses_and_its_found_tools_come_back_in_it() {
    use toolprism::tool::Namespace;
    let crm = || Namespace::new("crm", "The customer relationship manager.");
    let registry = Registry::builder()
        .tool(GetCustomer.into_tool_def().with_namespace(crm()))
        .tool(ListOrders.into_tool_def().with_namespace(crm()))
        .tool(ToolSearch::new().tool())
        .build()
        .unwrap();
    let snapshot = registry.snapshot();

    let tools = toolprism::lower::lower_tools(
        Provider::OpenAiResponses,
        snapshot.definitions(),
        ToolOptions::default(),
    )
    .unwrap();
    assert_eq!(tools.len(), 2, "one namespace and the search: {tools:#?}");
    assert_eq!(
        (tools[0]["type"].clone(), tools[0]["name"].clone()),
        (json!("namespace"), json!("crm"))
    );
    assert_eq!(
        names(tools[0]["tools"].as_array().unwrap()),
        ["get_customer", "list_orders"]
    );
    assert_eq!(tools[0]["tools"][1]["defer_loading"], true);
    // Providers without groups list the tools as they are.
    let anthropic = toolprism::lower::lower_tools(
        Provider::Anthropic,
        snapshot.definitions(),
        ToolOptions::default(),
    )
    .unwrap();
    assert_eq!(
        names(&anthropic),
        ["get_customer", "list_orders", "tool_search"]
    );

    let mut conversation = Conversation::new(Provider::OpenAiResponses, "gpt")
        .with_tools(&snapshot, ToolOptions::default())
        .unwrap();
    conversation.user("what did ada order?");
    let search = json!({"object": "response", "status": "completed", "output": [
        {"type": "tool_search_call", "id": "tsc_1", "call_id": "call_s", "execution": "client", "status": "completed", "arguments": {"query": "customer orders"}}]});
    let (_, request) = take_turn(&mut conversation, &snapshot, &search);
    let output = find(&request["input"], "type", "tool_search_output");
    assert_eq!(
        output["tools"].as_array().unwrap().len(),
        1,
        "both found tools in one group: {output:#}"
    );
    assert_eq!(output["tools"][0]["name"], "crm");
    assert_eq!(
        names(output["tools"][0]["tools"].as_array().unwrap()),
        ["list_orders", "get_customer"]
    );

    // The model calls a tool of the namespace by its name in it; the call is echoed with it.
    let call = json!({"object": "response", "status": "completed", "output": [
        {"type": "function_call", "id": "fc_1", "call_id": "call_o", "namespace": "crm", "name": "list_orders", "arguments": "{\"email\":\"ada@example.com\"}", "status": "completed"}]});
    let (outcomes, request) = take_turn(&mut conversation, &snapshot, &call);
    assert_eq!(outcomes[0].value().unwrap(), &json!(["ada@example.com"]));
    let echoed = find(&request["input"], "type", "function_call");
    assert_eq!(echoed["namespace"], "crm");
    let report = check_wire(
        "namespace-cases.json",
        &[json!({"name": "responses", "type": "openai.responses.request", "value": request})],
    );
    assert_eq!(report["failures"], json!([]), "{report:#}");

    // Two descriptions of one namespace are refused.
    let other = Namespace::new("crm", "Something else.");
    let refused = registry
        .register(Forecast.into_tool_def().with_namespace(other))
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("namespace `crm` is described otherwise"),
        "{refused}"
    );
}

#[test]
fn a_failed_search_is_told_to_a_responses_model_after_the_outputs() {
    let registry = registry();
    let snapshot = registry.snapshot();
    let mut conversation = Conversation::new(Provider::OpenAiResponses, "gpt")
        .with_tools(&snapshot, ToolOptions::default())
        .unwrap();
    conversation.user("open PRs?");
    let body = json!({"object": "response", "status": "completed", "output": [
        {"type": "tool_search_call", "id": "tsc_1", "call_id": "call_s", "execution": "client", "status": "completed",
         "arguments": {"query": "pull(", "regex": true}}]});
    let (outcomes, request) = take_turn(&mut conversation, &snapshot, &body);
    assert!(outcomes[0].is_error());
    let input = request["input"].as_array().unwrap();
    let output_at = input
        .iter()
        .position(|item| item["type"] == "tool_search_output")
        .unwrap();
    assert_eq!(input[output_at]["tools"], json!([]));
    let told = &input[output_at + 1];
    assert_eq!(told["role"], "user");
    let text = told["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("not a regular expression"), "{text}");
    let report = check_wire(
        "failed-search-cases.json",
        &[json!({"name": "responses", "type": "openai.responses.request", "value": request})],
    );
    assert_eq!(report["failures"], json!([]), "{report:#}");
}
