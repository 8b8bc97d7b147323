//! Writing to standard output, where a reader that closed the pipe (`tools list | head`) ends
//! the command quietly, as Unix tools end, instead of a panic.

use std::fmt;
use std::io::{self, Write as _};

/// Writes `args` (and a newline, if `newline`) to standard output.
pub(crate) fn print(args: fmt::Arguments<'_>, newline: bool) {
    let mut stdout = io::stdout().lock();
    let written = stdout.write_fmt(args).and_then(|()| {
        if newline {
            stdout.write_all(b"\n")
        } else {
            Ok(())
        }
    });
    // Any other failure of standard output has nowhere to be told.
    if let Some(code) = written.err().as_ref().and_then(ended_by) {
        drop(stdout);
        std::process::exit(code);
    }
}

/// The exit code a failed write to standard output ends the command with: 0 when its reader
/// went away (nothing more is wanted), none for any other error.
fn ended_by(error: &io::Error) -> Option<i32> {
    (error.kind() == io::ErrorKind::BrokenPipe).then_some(0)
}

/// `println!` to standard output, quiet on a closed pipe.
macro_rules! outln {
    ($($arg:tt)*) => { $crate::out::print(format_args!($($arg)*), true) };
}

/// `print!` to standard output, quiet on a closed pipe.
macro_rules! out {
    ($($arg:tt)*) => { $crate::out::print(format_args!($($arg)*), false) };
}

pub(crate) use {out, outln};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_pipe_ends_quietly_and_nothing_else_does() {
        let (reader, mut writer) = io::pipe().unwrap();
        drop(reader);
        let error = writer.write_all(b"line\n").unwrap_err();
        assert_eq!(ended_by(&error), Some(0));
        assert_eq!(ended_by(&io::Error::other("disk full")), None);
    }
}
