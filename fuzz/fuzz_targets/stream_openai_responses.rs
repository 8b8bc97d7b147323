//! The OpenAiResponses reader on arbitrary bytes: as a stream in arbitrary chunks (read the same as whole)
//! and as a whole response. Findings: a panic, an abort, a hang, memory past the limits.

#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use toolprism::lower::Provider;

fuzz_target!(|data: &[u8]| {
    common::read_stream(Provider::OpenAiResponses, data);
    common::read_whole(Provider::OpenAiResponses, data);
});
