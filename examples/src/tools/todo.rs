//! `todo_write`: the model's task list. Each call replaces the whole list; the value is the
//! list and its counts.
//!
//! Crates: `toolprism`, `serde`, `schemars`.

use std::fmt::Write as _;
use std::sync::Mutex;

use toolprism::context::State;
use toolprism::prelude::*;

/// Where a task stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

/// One task.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Todo {
    /// What to do.
    pub content: String,
    /// Where it stands.
    pub status: TodoStatus,
}

/// Arguments of `todo_write`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoArgs {
    /// The whole list, replacing the previous one.
    pub todos: Vec<Todo>,
}

/// How many tasks stand where.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TodoCounts {
    /// Not started.
    pub pending: u64,
    /// Being worked on.
    pub in_progress: u64,
    /// Done.
    pub completed: u64,
}

/// The value of `todo_write`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TodoValue {
    /// The list.
    pub todos: Vec<Todo>,
    /// Its counts.
    pub counts: TodoCounts,
}

/// The current task list: host state, shared by every call of `todo_write` (and readable by
/// the host, to show it).
#[derive(Debug, Default)]
pub struct TodoList(Mutex<Vec<Todo>>);

impl TodoList {
    /// The tasks as the model last wrote them.
    pub fn current(&self) -> Vec<Todo> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// Replaces the task list. Keep one task `in_progress` at a time, and mark tasks
/// `completed` as soon as they are done.
#[tool(
    render = render,
    title = "Update task list",
    idempotent,
    open_world = false,
    examples = [r#"{"todos": [{"content": "Write the tests", "status": "in_progress"}, {"content": "Fix the bug", "status": "pending"}]}"#]
)]
pub fn todo_write(args: TodoArgs, State(list): State<TodoList>) -> TodoValue {
    let mut counts = TodoCounts::default();
    for todo in &args.todos {
        match todo.status {
            TodoStatus::Pending => counts.pending += 1,
            TodoStatus::InProgress => counts.in_progress += 1,
            TodoStatus::Completed => counts.completed += 1,
        }
    }
    list.0
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone_from(&args.todos);
    TodoValue {
        todos: args.todos,
        counts,
    }
}

fn render(_args: &TodoArgs, value: &TodoValue) -> String {
    let total = value.todos.len();
    let mut text = format!("Todos ({}/{total} completed):", value.counts.completed);
    for todo in &value.todos {
        let mark = match todo.status {
            TodoStatus::Pending => "[ ]",
            TodoStatus::InProgress => "[>]",
            TodoStatus::Completed => "[x]",
        };
        let _ = write!(text, "\n{mark} {}", todo.content);
    }
    text
}
