//! Server-sent events, read as they arrive: bytes in any chunking, lines ended by `\n`, `\r\n`
//! or `\r`, `event:` lines optional, comments and unknown fields ignored, several `data:` lines
//! joined by `\n`, and a last event without its blank line still delivered at the end.
//!
//! A line is held until it ends, so memory is the longest line; a line longer than the limit is
//! an error before more of it is held.

use super::TurnError;

/// One event: its `data`, joined. Events without data (a bare `event:` or a comment) are not
/// delivered.
#[derive(Clone, Debug, Default)]
pub(super) struct SseDecoder {
    /// The line being read, before its end.
    line: Vec<u8>,
    /// The current event's data lines, joined by `\n`.
    data: Vec<u8>,
    /// Whether the current event has any `data:` line.
    has_data: bool,
    /// A `\r` ended the last line: a `\n` right after it belongs to it.
    after_cr: bool,
    max_line: usize,
    max_event: usize,
}

/// Why the bytes are not an event stream this reader will hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum SseError {
    /// A line longer than the limit.
    LineTooLong(usize),
    /// An event whose data is longer than the limit.
    EventTooLarge(usize),
}

impl SseDecoder {
    pub(super) fn new(max_line: usize, max_event: usize) -> Self {
        Self {
            max_line,
            max_event,
            ..Self::default()
        }
    }

    /// Reads `bytes`, handing each complete event's data to `event`.
    pub(super) fn feed(
        &mut self,
        mut bytes: &[u8],
        event: &mut dyn FnMut(&[u8]) -> Result<(), TurnError>,
    ) -> Result<(), FeedError> {
        while !bytes.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if bytes[0] == b'\n' {
                    bytes = &bytes[1..];
                    continue;
                }
            }
            let Some(end) = memchr::memchr2(b'\n', b'\r', bytes) else {
                self.push_line_part(bytes)?;
                break;
            };
            self.push_line_part(&bytes[..end])?;
            self.after_cr = bytes[end] == b'\r';
            bytes = &bytes[end + 1..];
            self.end_line(event)?;
        }
        Ok(())
    }

    /// The end of the stream: a line and an event left open are delivered.
    pub(super) fn finish(
        &mut self,
        event: &mut dyn FnMut(&[u8]) -> Result<(), TurnError>,
    ) -> Result<(), FeedError> {
        if !self.line.is_empty() {
            self.end_line(event)?;
        }
        self.dispatch(event)
    }

    fn push_line_part(&mut self, part: &[u8]) -> Result<(), FeedError> {
        if self.line.len() + part.len() > self.max_line {
            return Err(FeedError::Sse(SseError::LineTooLong(self.max_line)));
        }
        self.line.extend_from_slice(part);
        Ok(())
    }

    fn end_line(
        &mut self,
        event: &mut dyn FnMut(&[u8]) -> Result<(), TurnError>,
    ) -> Result<(), FeedError> {
        if self.line.is_empty() {
            return self.dispatch(event);
        }
        let line = std::mem::take(&mut self.line);
        let (field, value) = match memchr::memchr(b':', &line) {
            Some(0) => (&line[..0], &line[..0]), // a comment
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (&line[..], &line[..0]),
        };
        if field == b"data" {
            if self.has_data {
                self.data.push(b'\n');
            }
            if self.data.len() + value.len() > self.max_event {
                return Err(FeedError::Sse(SseError::EventTooLarge(self.max_event)));
            }
            self.data.extend_from_slice(value);
            self.has_data = true;
        }
        // The buffer is kept for the next line, without its contents.
        self.line = line;
        self.line.clear();
        Ok(())
    }

    fn dispatch(
        &mut self,
        event: &mut dyn FnMut(&[u8]) -> Result<(), TurnError>,
    ) -> Result<(), FeedError> {
        if !self.has_data {
            return Ok(());
        }
        self.has_data = false;
        let result = event(&self.data);
        self.data.clear();
        result.map_err(FeedError::Event)
    }
}

/// Why feeding stopped: the framing, or what the event handler said of an event.
#[derive(Debug)]
pub(super) enum FeedError {
    Sse(SseError),
    Event(TurnError),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&[u8]]) -> Vec<String> {
        let mut decoder = SseDecoder::new(1024, 4096);
        let mut seen = Vec::new();
        let mut push = |data: &[u8]| {
            seen.push(String::from_utf8(data.to_vec()).unwrap());
            Ok(())
        };
        for chunk in chunks {
            decoder.feed(chunk, &mut push).unwrap();
        }
        decoder.finish(&mut push).unwrap();
        seen
    }

    #[test]
    fn lines_end_every_way_and_events_need_data() {
        assert_eq!(
            events(&[b"event: a\r\ndata: {\"x\":1}\r\n\r\n: comment\n\ndata:2\rdata: 3\r\r"]),
            ["{\"x\":1}", "2\n3"]
        );
    }

    #[test]
    fn a_crlf_split_between_chunks_is_one_line_end() {
        assert_eq!(
            events(&[b"data: 1\r", b"\n\r", b"\ndata: 2\n\n"]),
            ["1", "2"]
        );
    }

    #[test]
    fn the_last_event_is_delivered_without_its_blank_line() {
        assert_eq!(events(&[b"data: 1\n\ndata: 2"]), ["1", "2"]);
    }

    #[test]
    fn a_line_over_the_limit_is_refused_before_it_is_held() {
        let mut decoder = SseDecoder::new(8, 64);
        let mut ignore = |_: &[u8]| Ok(());
        assert!(decoder.feed(b"data: 12", &mut ignore).is_ok());
        assert!(matches!(
            decoder.feed(b"3", &mut ignore),
            Err(FeedError::Sse(SseError::LineTooLong(8)))
        ));
    }
}
