//! Presentation: what the model reads of a value ([`ContentBlock`]s from `render`), what a UI
//! shows of a call ([`Card`]s), and the presentation metadata a tool projects from its value
//! ([`IntoMeta`]).

mod card;
mod content;
mod cut;
mod meta;

pub use card::{
    Card, DiffCard, GenericCard, ReadCard, SearchCard, SearchMatch, TerminalCard, WebCard,
    present_call, present_result,
};
pub use content::{ContentBlock, IntoContent, ResourceContents, is_media_type};
pub use cut::{shorten, shorten_with};
pub use meta::{IntoMeta, Json, MetaError};
