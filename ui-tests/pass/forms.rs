// Every accepted shape of a tool function compiles and registers.
use toolprism::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct ReadArgs {
    path: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct ReadValue {
    path: String,
    lines: Vec<String>,
}

/// Whole args type, context, async, `Result` with an explicit error.
#[tool(render = render_read, presentation_meta = read_meta)]
async fn read(args: ReadArgs, cx: &ToolContext) -> Result<ReadValue, ToolError> {
    let _ = cx.call_id();
    Ok(ReadValue { path: args.path, lines: vec![] })
}

fn render_read(args: &ReadArgs, value: &ReadValue) -> Vec<ContentBlock> {
    vec![ContentBlock::text(format!("{} ({} lines)", args.path, value.lines.len()))]
}

fn read_meta(_args: &ReadArgs, value: &ReadValue) -> Json<Vec<String>> {
    Json(value.lines.clone())
}

/// Parameter list with the context first, sync, a `Result` alias.
#[tool(name = "add-numbers")]
fn add(cx: &ToolContext, #[arg(description = "Left.")] a: i64, b: i64) -> std::io::Result<i64> {
    let _ = cx;
    Ok(a + b)
}

/// One marked parameter, with a forwarded serde attribute.
#[tool(description = "Squares a number.")]
fn square(#[arg] #[serde(default)] x: f64) -> f64 {
    x * x
}

/// No parameters, no return value.
#[tool]
async fn ping() {}

/// Destructured whole args type.
#[tool]
fn path_of(ReadArgs { path }: ReadArgs) -> String {
    path
}

/// A map is a JSON object, so it may be the whole args type.
#[tool]
fn keys(map: std::collections::BTreeMap<String, u8>) -> Vec<String> {
    map.into_keys().collect()
}

/// A raw identifier.
#[tool]
fn r#match(#[arg] r#type: String) -> String {
    r#type
}

/// Renders through a `Result`.
#[tool(render = render_fallible)]
fn fallible() -> u8 {
    1
}

fn render_fallible(_: &FallibleArgs, value: &u8) -> Result<String, std::fmt::Error> {
    Ok(value.to_string())
}

fn main() {
    let registry = Registry::builder()
        .tool(Read)
        .tool(Add)
        .tool(Square)
        .tool(Ping)
        .tool(PathOf)
        .tool(Keys)
        .tool(Match)
        .tool(Fallible)
        .build()
        .unwrap();
    let names: Vec<String> = registry.snapshot().definitions().map(|d| d.name().to_owned()).collect();
    assert_eq!(names, ["read", "add-numbers", "square", "ping", "path_of", "keys", "match", "fallible"]);
    let _args = AddArgs { a: 1, b: 2 };
    let _value: std::io::Result<i64> = add_direct();
}

fn add_direct() -> std::io::Result<i64> {
    // The function itself is still an ordinary function.
    let cx = None::<&ToolContext>;
    let _ = cx;
    Ok(3)
}
