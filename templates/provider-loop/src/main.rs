//! Your tools in a loop with a model, over HTTP, streamed:
//!
//! ```text
//! PROVIDER=anthropic API_KEY=sk-ant-… MODEL=claude-sonnet-4-5 cargo run -- "How many words in 'to be or not to be'?"
//! ```
//!
//! `PROVIDER` is `openai-chat`, `openai-responses`, `anthropic` or `gemini`; `BASE_URL`
//! points at another server (any OpenAI-compatible one for `openai-chat`). Replace
//! `count_words` with your own tools.

use futures_util::StreamExt as _;
use toolprism::lower::{Provider, ToolOptions};
use toolprism::prelude::*;
use toolprism::turn::{Conversation, RunOptions, StreamEvent, StreamReader, run_calls};

/// How many words a text has, and the longest.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Words {
    /// The number of words.
    count: usize,
    /// The longest word, if there is one.
    longest: Option<String>,
}

/// Counts the words of a text.
#[tool]
fn count_words(#[arg(description = "The text.")] text: String) -> Words {
    let words: Vec<&str> = text.split_whitespace().collect();
    Words {
        count: words.len(),
        longest: words.iter().max_by_key(|word| word.len()).map(|word| (*word).to_owned()),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let variable = |name: &str| std::env::var(name).map_err(|_| format!("set {name}"));
    let provider = match variable("PROVIDER")?.as_str() {
        "openai-chat" => Provider::OpenAiChat,
        "openai-responses" => Provider::OpenAiResponses,
        "anthropic" => Provider::Anthropic,
        "gemini" => Provider::Gemini,
        other => return Err(format!("unknown PROVIDER `{other}`").into()),
    };
    let base_url = std::env::var("BASE_URL").unwrap_or_else(|_| {
        match provider {
            Provider::Anthropic => "https://api.anthropic.com",
            Provider::Gemini => "https://generativelanguage.googleapis.com",
            _ => "https://api.openai.com/v1",
        }
        .to_owned()
    });
    let (key, model) = (variable("API_KEY")?, variable("MODEL")?);
    let prompt = std::env::args().skip(1).collect::<Vec<_>>().join(" ");

    let registry = Registry::builder().tool(CountWords).build()?;
    let snapshot = registry.snapshot();
    let mut conversation = Conversation::new(provider, model).with_tools(&snapshot, ToolOptions::default())?;
    conversation.user(&prompt);
    let client = reqwest::Client::new();

    for _ in 0..10 {
        let request = conversation.request(&base_url, &key, true);
        let mut sending = client.post(&request.url).json(&request.body);
        for (name, value) in &request.headers {
            sending = sending.header(*name, value);
        }
        let response = sending.send().await?.error_for_status()?;

        // The turn, read as it streams: text shown as it comes.
        let mut reader = StreamReader::new(provider);
        let mut body = response.bytes_stream();
        while let Some(chunk) = body.next().await {
            let chunk = chunk?;
            for event in reader.feed(&chunk)? {
                if let StreamEvent::Text(text) = event {
                    print!("{text}");
                }
            }
        }
        let turn = reader.finish()?;
        println!();
        if turn.calls().is_empty() {
            return Ok(());
        }

        // Its calls, run: invalid arguments and cut-off calls become errors the model reads.
        let outcomes = run_calls(&snapshot, &turn, &RunOptions::default()).await?;
        for (call, outcome) in turn.calls().iter().zip(&outcomes) {
            let shown: Vec<&str> = outcome.content().iter().filter_map(ContentBlock::as_text).collect();
            println!("[{}] {}", call.name(), shown.join(" "));
        }
        conversation.push_turn(&turn, &outcomes)?;
    }
    Err("no answer after 10 steps".into())
}
