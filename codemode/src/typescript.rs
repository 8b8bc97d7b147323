//! TypeScript programs: type syntax stripped by oxc (parse, transform, print), with a map
//! from the printed JavaScript back to the program's own lines and columns, so errors still
//! say where in what the model wrote.
//!
//! Only a program QuickJS refuses as JavaScript is tried as TypeScript: plain JavaScript runs
//! exactly as written.

use std::path::Path;

use oxc::allocator::Allocator;
use oxc::codegen::{Codegen, CodegenOptions};
use oxc::parser::{ParseOptions, Parser};
use oxc::semantic::SemanticBuilder;
use oxc::span::SourceType;
use oxc::transformer::{TransformOptions, Transformer};

/// A program with its types stripped.
#[derive(Debug)]
pub(crate) struct Stripped {
    pub(crate) code: String,
    pub(crate) positions: Positions,
}

/// Where each printed position came from: `(printed line, printed column, source line,
/// source column)`, 0-based, in printed order.
#[derive(Debug, Default)]
pub(crate) struct Positions(Vec<(u32, u32, u32, u32)>);

impl Positions {
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The source position (1-based) of a printed one (1-based), when the map knows it.
    pub(crate) fn original(&self, line: u32, column: u32) -> Option<(u32, u32)> {
        let (line, column) = (line.checked_sub(1)?, column.checked_sub(1)?);
        let after = self
            .0
            .partition_point(|&(printed_line, printed_column, ..)| {
                (printed_line, printed_column) <= (line, column)
            });
        let &(printed_line, printed_column, source_line, source_column) =
            self.0.get(after.checked_sub(1)?)?;
        if printed_line != line {
            return None;
        }
        Some((
            source_line + 1,
            source_column + (column - printed_column) + 1,
        ))
    }
}

/// Strips the types of `source` (a whole script, the program inside its async wrapper); `None`
/// when it is not TypeScript either.
pub(crate) fn strip(source: &str) -> Option<Stripped> {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, SourceType::ts())
        .with_options(ParseOptions::default())
        .parse();
    if parsed.panicked || !parsed.diagnostics.is_empty() {
        return None;
    }
    let mut program = parsed.program;
    let scoping = SemanticBuilder::new()
        .build(&program)
        .semantic
        .into_scoping();
    let options = TransformOptions::default();
    let transformed = Transformer::new(&allocator, Path::new("program.ts"), &options)
        .build_with_scoping(scoping, &mut program);
    if !transformed.diagnostics.is_empty() {
        return None;
    }
    let printed = Codegen::new()
        .with_options(CodegenOptions {
            source_map_path: Some("program.ts".into()),
            ..CodegenOptions::default()
        })
        .build(&program);
    let positions = printed
        .map
        .map(|map| {
            map.get_tokens()
                .map(|token| {
                    (
                        token.get_dst_line(),
                        token.get_dst_col(),
                        token.get_src_line(),
                        token.get_src_col(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    Some(Stripped {
        code: printed.code,
        positions: Positions(positions),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_go_and_positions_map_back() {
        let source = "(async () => {\nconst n: number = 1;\ninterface A { x: string }\nconst a: A = { x: 'hi' };\n  missing(n as number);\n})()";
        let stripped = strip(source).unwrap();
        assert!(!stripped.code.contains("number"), "{}", stripped.code);
        assert!(!stripped.code.contains("interface"), "{}", stripped.code);
        let printed_line = stripped
            .code
            .lines()
            .position(|line| line.contains("missing("))
            .unwrap();
        let printed_line = u32::try_from(printed_line).unwrap() + 1;
        let column = u32::try_from(
            stripped
                .code
                .lines()
                .nth(printed_line as usize - 1)
                .unwrap()
                .find("missing")
                .unwrap(),
        )
        .unwrap()
            + 1;
        assert_eq!(
            stripped.positions.original(printed_line, column),
            Some((5, 3))
        );
    }

    #[test]
    fn what_is_not_typescript_either_is_refused() {
        assert!(strip("(async () => {\nconst b = ;\n})()").is_none());
    }
}
