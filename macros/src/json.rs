//! Whether a string literal is JSON, so that an example argument object that is not is a
//! compile error on its span rather than a registration error at run time. Syntax only (RFC
//! 8259), without a JSON dependency in the macro; the runtime parses the example again and
//! checks it against the input schema when the tool is registered.

/// Where `text` stops being one JSON value, and why; `Ok` with whether it is an object.
pub(crate) fn check(text: &str) -> Result<bool, String> {
    let mut reader = Reader {
        bytes: text.as_bytes(),
        at: 0,
        depth: 0,
    };
    reader.skip_space();
    let is_object = reader.peek() == Some(b'{');
    reader.value()?;
    reader.skip_space();
    if reader.at != reader.bytes.len() {
        return Err(reader.error("more text after the value"));
    }
    Ok(is_object)
}

/// Nesting past this is refused here as the runtime refuses it.
const MAX_DEPTH: usize = 64;

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    depth: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn error(&self, what: &str) -> String {
        format!("{what} at byte {}", self.at + 1)
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(&format!("expected `{}`", char::from(byte))))
        }
    }

    fn value(&mut self) -> Result<(), String> {
        self.skip_space();
        match self.peek() {
            Some(b'{') => self.nested(b'}', true),
            Some(b'[') => self.nested(b']', false),
            Some(b'"') => self.string(),
            Some(b't') => self.word("true"),
            Some(b'f') => self.word("false"),
            Some(b'n') => self.word("null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error("expected a JSON value")),
            None => Err(self.error("the text ends where a value was expected")),
        }
    }

    fn nested(&mut self, close: u8, object: bool) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(&format!("nested deeper than {MAX_DEPTH} levels")));
        }
        self.at += 1;
        self.skip_space();
        if self.peek() == Some(close) {
            self.at += 1;
            self.depth -= 1;
            return Ok(());
        }
        loop {
            if object {
                self.skip_space();
                if self.peek() != Some(b'"') {
                    return Err(self.error("expected a quoted key"));
                }
                self.string()?;
                self.skip_space();
                self.expect(b':')?;
            }
            self.value()?;
            self.skip_space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(byte) if byte == close => {
                    self.at += 1;
                    self.depth -= 1;
                    return Ok(());
                }
                _ => return Err(self.error(&format!("expected `,` or `{}`", char::from(close)))),
            }
        }
    }

    fn string(&mut self) -> Result<(), String> {
        self.at += 1;
        loop {
            match self.peek() {
                None => return Err(self.error("the text ends inside a string")),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.at += 1;
                    match self.peek() {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.at += 1;
                        }
                        Some(b'u') => {
                            self.at += 1;
                            for _ in 0..4 {
                                if !self.peek().is_some_and(|byte| byte.is_ascii_hexdigit()) {
                                    return Err(self.error("expected four hex digits after `\\u`"));
                                }
                                self.at += 1;
                            }
                        }
                        _ => return Err(self.error("an unknown escape")),
                    }
                }
                Some(byte) if byte < 0x20 => {
                    return Err(self.error("a control character inside a string"));
                }
                Some(_) => self.at += 1,
            }
        }
    }

    fn word(&mut self, word: &str) -> Result<(), String> {
        if self.bytes[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(())
        } else {
            Err(self.error("expected a JSON value"))
        }
    }

    fn number(&mut self) -> Result<(), String> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error("expected a digit")),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if !self.peek().is_some_and(|byte| byte.is_ascii_digit()) {
                return Err(self.error("expected a digit after `.`"));
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if !self.peek().is_some_and(|byte| byte.is_ascii_digit()) {
                return Err(self.error("expected a digit in the exponent"));
            }
            self.digits();
        }
        Ok(())
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|byte| byte.is_ascii_digit()) {
            self.at += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn json_is_told_from_what_is_not() {
        assert_eq!(
            check(r#"{"a": [1, -2.5e3, true, null, "x\u00e9\n"]}"#),
            Ok(true)
        );
        assert_eq!(check("[1]"), Ok(false));
        assert!(
            check(r#"{"a": 1,}"#)
                .unwrap_err()
                .contains("expected a quoted key")
        );
        assert!(check("{a: 1}").is_err());
        assert!(check(r#"{"a": 01}"#).is_err());
        assert!(check(r#"{"a": 1} x"#).unwrap_err().contains("more text"));
        assert!(
            check(&"[".repeat(70))
                .unwrap_err()
                .contains("deeper than 64")
        );
    }
}
