//! Reading a session log from arbitrary bytes, and replaying it. Findings: a panic, an abort, a
//! hang; and an event read from the bytes that does not survive being written and read again.

#![no_main]

use libfuzzer_sys::fuzz_target;
use toolprism::session::{SessionLog, replay};

fuzz_target!(|data: &[u8]| {
    let Ok(contents) = SessionLog::read_from(data) else {
        return;
    };
    let _ = replay(&contents.events);
    // Every event the reader accepted reads back the same from its own line.
    for event in &contents.events {
        let mut line = serde_json::to_value(event).expect("an event serializes");
        line["v"] = serde_json::json!(1);
        let text = format!("{line}\n");
        let again = SessionLog::read_from(text.as_bytes()).expect("reads");
        assert_eq!(again.events.len(), 1, "{text}: {:?}", again.problems);
        assert_eq!(&again.events[0], event);
    }
});
