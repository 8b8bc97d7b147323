//! Parsing the attributes: `#[tool(...)]` options and the `#[arg(...)]` parameter helper.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::parse::Parser as _;
use syn::spanned::Spanned as _;
use syn::{Attribute, LitStr, Path};

use crate::errors::Errors;

const TOOL_OPTIONS: &str = "`name`, `description`, `render`, `presentation_meta`, `struct_name`, `crate`, `title`, `read_only`, `destructive`, `idempotent`, `open_world`, `icon(...)`, `examples`, `timeout`, `defer_loading`, `callers`, `task`, `scopes`, `resource`";

/// The hints a tool may state, as flags.
const HINTS: [&str; 4] = ["read_only", "destructive", "idempotent", "open_world"];
const ARG_OPTIONS: &str = "`description`";

/// The options of one `#[tool(...)]`.
#[derive(Default)]
pub(crate) struct ToolAttr {
    pub(crate) name: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) render: Option<Path>,
    pub(crate) presentation_meta: Option<Path>,
    /// The name of the generated unit struct, instead of the function's name in `PascalCase`.
    pub(crate) struct_name: Option<LitStr>,
    pub(crate) krate: Option<Path>,
    /// What the tool says about itself.
    pub(crate) about: AboutAttr,
}

/// What `#[tool(...)]` says of the tool besides its name and schemas.
#[derive(Default)]
pub(crate) struct AboutAttr {
    pub(crate) title: Option<LitStr>,
    /// `read_only`, `destructive`, `idempotent`, `open_world`: each its value and where it was said.
    pub(crate) hints: Vec<(String, bool, Span)>,
    pub(crate) icons: Vec<IconAttr>,
    /// Each example's text, checked to be a JSON object.
    pub(crate) examples: Vec<LitStr>,
    pub(crate) timeout_millis: Option<(u64, Span)>,
    pub(crate) defer_loading: Option<Span>,
    /// `direct`, `programs` or `both`.
    pub(crate) callers: Option<LitStr>,
    /// `never`, `optional` or `required`.
    pub(crate) task: Option<LitStr>,
    /// The OAuth scopes a caller needs.
    pub(crate) scopes: Vec<LitStr>,
    /// The resource a call touches, as a template over its arguments (`"file:{path}"`).
    pub(crate) resource: Option<LitStr>,
}

/// One `icon(src = "…", mime_type = "…", size = "…", theme = "…")`.
pub(crate) struct IconAttr {
    pub(crate) src: LitStr,
    pub(crate) mime_type: Option<LitStr>,
    pub(crate) sizes: Vec<LitStr>,
    pub(crate) theme: Option<LitStr>,
}

/// Parses the tokens inside `#[tool(...)]`, recording every problem in `errors`.
pub(crate) fn parse_tool_attr(tokens: TokenStream, errors: &mut Errors) -> ToolAttr {
    let mut attr = ToolAttr::default();
    let parser = syn::meta::parser(|meta| parse_tool_option(&mut attr, &meta, errors));
    if let Err(error) = parser.parse2(tokens) {
        errors.push(error);
    }
    attr
}

/// Parses a `#[tool]` or `#[tool(...)]` found on a method inside `#[toolset]`.
pub(crate) fn parse_tool_attribute(attribute: &Attribute, errors: &mut Errors) -> ToolAttr {
    match &attribute.meta {
        syn::Meta::Path(_) => ToolAttr::default(),
        syn::Meta::List(list) => parse_tool_attr(list.tokens.clone(), errors),
        syn::Meta::NameValue(name_value) => {
            errors.push_spanned(name_value, "expected `#[tool]` or `#[tool(option = ...)]`");
            ToolAttr::default()
        }
    }
}

fn parse_tool_option(
    attr: &mut ToolAttr,
    meta: &ParseNestedMeta<'_>,
    errors: &mut Errors,
) -> syn::Result<()> {
    let Some(key) = meta.path.get_ident().map(ToString::to_string) else {
        errors.push(meta.error(format!("expected one of {TOOL_OPTIONS}")));
        return skip_value(meta);
    };
    let known = [
        "name",
        "description",
        "render",
        "presentation_meta",
        "struct_name",
        "crate",
    ]
    .contains(&key.as_str());
    if known && !meta.input.peek(syn::Token![=]) {
        errors.push(meta.error(format!("expected `{key} = ...`")));
        return skip_value(meta);
    }
    if HINTS.contains(&key.as_str()) {
        return parse_hint(&mut attr.about, &key, meta, errors);
    }
    if parse_about_option(&mut attr.about, &key, meta, errors)? {
        return Ok(());
    }
    match key.as_str() {
        "name" => set(&mut attr.name, meta.value()?.parse()?, meta, errors),
        "description" => set(&mut attr.description, meta.value()?.parse()?, meta, errors),
        "render" => set(&mut attr.render, meta.value()?.parse()?, meta, errors),
        "presentation_meta" => set(
            &mut attr.presentation_meta,
            meta.value()?.parse()?,
            meta,
            errors,
        ),
        "struct_name" => parse_struct_name(attr, meta, errors)?,
        "crate" => parse_crate(attr, meta, errors)?,
        "meta" => {
            errors.push(meta.error(
                "the option is `presentation_meta = path`: the projection from arguments and value to presentation metadata",
            ));
            return skip_value(meta);
        }
        _ => {
            errors.push(meta.error(format!(
                "unknown option `{key}`; expected one of {TOOL_OPTIONS}"
            )));
            return skip_value(meta);
        }
    }
    Ok(())
}

/// The options that say what a tool is and does (its title, icon, examples, scopes, resource,
/// timeout, deferral, callers and tasks): whether `key` is one of them.
fn parse_about_option(
    about: &mut AboutAttr,
    key: &str,
    meta: &ParseNestedMeta<'_>,
    errors: &mut Errors,
) -> syn::Result<bool> {
    match key {
        "title" => set(&mut about.title, meta.value()?.parse()?, meta, errors),
        "icon" => parse_icon(about, meta, errors)?,
        "examples" => parse_examples(about, meta, errors)?,
        "scopes" => parse_scopes(about, meta, errors)?,
        "resource" => parse_resource(about, meta, errors)?,
        "timeout" => parse_timeout(about, meta, errors)?,
        "defer_loading" => {
            if about.defer_loading.is_some() {
                errors.push(meta.error("duplicate option `defer_loading`"));
            }
            about.defer_loading = Some(meta.path.span());
        }
        "callers" => set_choice(
            &mut about.callers,
            &["direct", "programs", "both"],
            "`callers` is `\"direct\"` (the model), `\"programs\"` (Code Mode) or `\"both\"`",
            meta,
            errors,
        )?,
        "task" => set_choice(
            &mut about.task,
            &["never", "optional", "required"],
            "`task` is `\"optional\"` (a task for a caller that takes tasks), `\"required\"` or `\"never\"`",
            meta,
            errors,
        )?,
        _ => return Ok(false),
    }
    Ok(true)
}

/// `struct_name = "ReadTool"`: an identifier.
fn parse_struct_name(
    attr: &mut ToolAttr,
    meta: &ParseNestedMeta<'_>,
    errors: &mut Errors,
) -> syn::Result<()> {
    let literal: LitStr = meta.value()?.parse()?;
    if literal.parse::<syn::Ident>().is_ok() {
        set(&mut attr.struct_name, literal, meta, errors);
    } else {
        errors.push_spanned(
            &literal,
            "`struct_name` must be an identifier, e.g. `struct_name = \"ReadTool\"`",
        );
    }
    Ok(())
}

/// `crate = "my_toolprism"`: a path.
fn parse_crate(
    attr: &mut ToolAttr,
    meta: &ParseNestedMeta<'_>,
    errors: &mut Errors,
) -> syn::Result<()> {
    let literal: LitStr = meta.value()?.parse()?;
    match literal.parse::<Path>() {
        Ok(path) => set(&mut attr.krate, path, meta, errors),
        Err(_) => errors.push_spanned(
            &literal,
            "`crate` must be a path, e.g. `crate = \"my_toolprism\"`",
        ),
    }
    Ok(())
}

/// `read_only`, or `read_only = false`: a hint, once; `read_only` with `destructive` is a
/// contradiction, reported on the second said.
fn parse_hint(
    about: &mut AboutAttr,
    key: &str,
    meta: &ParseNestedMeta<'_>,
    errors: &mut Errors,
) -> syn::Result<()> {
    let value = if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<syn::LitBool>()?.value
    } else {
        true
    };
    let span = meta.path.span();
    if about.hints.iter().any(|(said, _, _)| said == key) {
        errors.push(meta.error(format!("duplicate option `{key}`")));
        return Ok(());
    }
    let contradicts = |other: &str| {
        about
            .hints
            .iter()
            .any(|(said, said_value, _)| said == other && *said_value)
    };
    if value
        && ((key == "destructive" && contradicts("read_only"))
            || (key == "read_only" && contradicts("destructive")))
    {
        errors.push(syn::Error::new(
            span,
            "a tool cannot be both `read_only` and `destructive`: a read-only tool changes nothing",
        ));
    }
    about.hints.push((key.to_owned(), value, span));
    Ok(())
}

/// `icon(src = "…", mime_type = "…", size = "…", theme = "light" | "dark")`.
fn parse_icon(
    about: &mut AboutAttr,
    meta: &ParseNestedMeta<'_>,
    errors: &mut Errors,
) -> syn::Result<()> {
    let mut src = None;
    let mut mime_type = None;
    let mut sizes = Vec::new();
    let mut theme = None;
    meta.parse_nested_meta(|inner| {
        match inner.path.get_ident().map(ToString::to_string).as_deref() {
            Some("src") => set(&mut src, inner.value()?.parse()?, &inner, errors),
            Some("mime_type") => set(&mut mime_type, inner.value()?.parse()?, &inner, errors),
            Some("size") => sizes.push(inner.value()?.parse()?),
            Some("theme") => {
                let literal: LitStr = inner.value()?.parse()?;
                if ["light", "dark"].contains(&literal.value().as_str()) {
                    set(&mut theme, literal, &inner, errors);
                } else {
                    errors.push_spanned(&literal, "an icon's `theme` is `\"light\"` or `\"dark\"`");
                }
            }
            _ => {
                errors
                    .push(inner.error(
                        "unknown icon option; expected `src`, `mime_type`, `size`, `theme`",
                    ));
                skip_value(&inner)?;
            }
        }
        Ok(())
    })?;
    match src {
        Some(src) => about.icons.push(IconAttr {
            src,
            mime_type,
            sizes,
            theme,
        }),
        None => errors.push(meta.error("an `icon(...)` needs `src = \"…\"`")),
    }
    Ok(())
}

/// Reads an option's array (`["…", …]`) in order: `each` takes every string literal; an
/// element that is not one is an error on its own span, saying `what` it should be.
fn each_string_literal(
    meta: &ParseNestedMeta<'_>,
    errors: &mut Errors,
    what: &str,
    mut each: impl FnMut(LitStr, &mut Errors),
) -> syn::Result<()> {
    let array: syn::ExprArray = meta.value()?.parse()?;
    for element in array.elems {
        match element {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(literal),
                ..
            }) => each(literal, errors),
            other => errors.push_spanned(&other, what),
        }
    }
    Ok(())
}

/// `examples = [r#"{…}"#, …]`: each a JSON object of arguments, checked here so that one that
/// is not JSON is a compile error on its own span.
fn parse_examples(
    about: &mut AboutAttr,
    meta: &ParseNestedMeta<'_>,
    errors: &mut Errors,
) -> syn::Result<()> {
    let what =
        "an example is a string literal holding a JSON object, e.g. `r#\"{\"path\": \"a.txt\"}\"#`";
    each_string_literal(
        meta,
        errors,
        what,
        |literal, errors| match crate::json::check(&literal.value()) {
            Ok(true) => about.examples.push(literal),
            Ok(false) => errors.push_spanned(&literal, "an example is a JSON object of arguments"),
            Err(problem) => {
                errors.push_spanned(&literal, format!("this example is not JSON: {problem}"));
            }
        },
    )
}

/// `scopes = ["files:write"]`: OAuth scope tokens (RFC 6749: printable ASCII, no space, `"` or
/// `\`).
fn parse_scopes(
    about: &mut AboutAttr,
    meta: &ParseNestedMeta<'_>,
    errors: &mut Errors,
) -> syn::Result<()> {
    let what = "a scope is a string literal, e.g. `\"files:write\"`";
    each_string_literal(meta, errors, what, |literal, errors| {
        let scope = literal.value();
        let valid = !scope.is_empty()
            && scope
                .bytes()
                .all(|byte| byte.is_ascii_graphic() && byte != b'"' && byte != b'\\');
        if valid {
            about.scopes.push(literal);
        } else {
            errors.push_spanned(
                &literal,
                "a scope is printable ASCII without spaces, `\"` or `\\`, e.g. `\"files:write\"`",
            );
        }
    })
}

/// `resource = "file:{path}"`: a template over the arguments, checked here.
fn parse_resource(
    about: &mut AboutAttr,
    meta: &ParseNestedMeta<'_>,
    errors: &mut Errors,
) -> syn::Result<()> {
    let literal: LitStr = meta.value()?.parse()?;
    match template_problem(&literal.value()) {
        None => set(&mut about.resource, literal, meta, errors),
        Some(problem) => errors.push_spanned(&literal, problem),
    }
    Ok(())
}

/// Why a resource template would be refused (the rules of `toolprism::effects`): `{name}`
/// of letters, digits and `_`, `{{` and `}}` for braces, at least one argument named.
fn template_problem(template: &str) -> Option<String> {
    let example = "e.g. `resource = \"file:{path}\"`";
    let mut chars = template.chars().peekable();
    let mut named = false;
    while let Some(char) = chars.next() {
        match (char, chars.peek()) {
            ('{', Some('{')) | ('}', Some('}')) => {
                chars.next();
            }
            ('{', _) => {
                let mut closed = false;
                let name: String = chars
                    .by_ref()
                    .take_while(|c| {
                        closed = *c == '}';
                        !closed
                    })
                    .collect();
                let valid = closed
                    && !name.is_empty()
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if !valid {
                    return Some(format!(
                        "a resource names an argument as `{{name}}`, letters, digits and `_`; {example}"
                    ));
                }
                named = true;
            }
            ('}', _) => {
                return Some(format!(
                    "this `}}` closes nothing (`}}}}` is a brace); {example}"
                ));
            }
            _ => {}
        }
    }
    (!named).then(|| {
        format!("a resource names at least one argument, or every call touches the same thing; {example}")
    })
}

/// `30s`, `500ms`, `2m`, `1h`: milliseconds, more than zero.
fn parse_duration(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text.find(|ch: char| !ch.is_ascii_digit())?;
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().ok()?;
    let millis = match unit.trim() {
        "ms" => number,
        "s" => number.checked_mul(1_000)?,
        "m" => number.checked_mul(60_000)?,
        "h" => number.checked_mul(3_600_000)?,
        _ => return None,
    };
    (millis > 0).then_some(millis)
}

/// The options of `#[toolset(...)]`.
#[derive(Default)]
pub(crate) struct ToolsetAttr {
    pub(crate) krate: Option<Path>,
}

/// Parses the tokens inside `#[toolset(...)]`, recording every problem in `errors`.
pub(crate) fn parse_toolset_attr(tokens: TokenStream, errors: &mut Errors) -> ToolsetAttr {
    let mut attr = ToolsetAttr::default();
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("crate") {
            let literal: LitStr = meta.value()?.parse()?;
            match literal.parse::<Path>() {
                Ok(path) => set(&mut attr.krate, path, &meta, errors),
                Err(_) => errors.push_spanned(
                    &literal,
                    "`crate` must be a path, e.g. `crate = \"my_toolprism\"`",
                ),
            }
            Ok(())
        } else {
            errors.push(meta.error(format!(
                "unknown option `{}`; `#[toolset]` takes only `crate = \"...\"`",
                key_of(&meta)
            )));
            skip_value(&meta)
        }
    });
    if let Err(error) = parser.parse2(tokens) {
        errors.push(error);
    }
    attr
}

/// What `#[arg(...)]` on a parameter says.
pub(crate) struct ArgAttr {
    /// Where the `#[arg]` is, if there is one.
    pub(crate) span: Option<Span>,
    pub(crate) description: Option<LitStr>,
}

/// Reads the `#[arg]` helpers of one parameter.
pub(crate) fn parse_arg_attrs(attrs: &[Attribute], errors: &mut Errors) -> ArgAttr {
    let mut arg = ArgAttr {
        span: None,
        description: None,
    };
    for attribute in attrs.iter().filter(|a| a.path().is_ident("arg")) {
        if arg.span.is_some() {
            errors.push_spanned(attribute, "duplicate `#[arg]` on one parameter");
            continue;
        }
        arg.span = Some(
            attribute
                .path()
                .get_ident()
                .map_or_else(Span::call_site, syn::Ident::span),
        );
        if let syn::Meta::Path(_) = attribute.meta {
            continue;
        }
        let result = attribute.parse_nested_meta(|meta| {
            if meta.path.is_ident("description") {
                set(&mut arg.description, meta.value()?.parse()?, &meta, errors);
                Ok(())
            } else {
                errors.push(meta.error(format!(
                    "unknown option `{}`; expected {ARG_OPTIONS}",
                    key_of(&meta)
                )));
                skip_value(&meta)
            }
        });
        if let Err(error) = result {
            errors.push(error);
        }
    }
    arg
}

/// Whether an attribute is one `#[tool]` consumes on a parameter (and so strips from the
/// emitted function).
pub(crate) fn is_param_helper(attribute: &Attribute) -> bool {
    let path = attribute.path();
    path.is_ident("arg") || path.is_ident("serde") || path.is_ident("schemars")
}

/// Removes `#[arg]`, `#[serde]` and `#[schemars]` from parameters: they are read by the
/// macro and mean nothing to rustc there.
pub(crate) fn strip_param_helpers(sig: &mut syn::Signature) {
    for input in &mut sig.inputs {
        if let syn::FnArg::Typed(typed) = input {
            typed.attrs.retain(|attr| !is_param_helper(attr));
        }
    }
}

/// `timeout = "30s"`.
fn parse_timeout(
    about: &mut AboutAttr,
    meta: &ParseNestedMeta<'_>,
    errors: &mut Errors,
) -> syn::Result<()> {
    let literal: LitStr = meta.value()?.parse()?;
    match parse_duration(&literal.value()) {
        Some(millis) if about.timeout_millis.is_none() => {
            about.timeout_millis = Some((millis, literal.span()));
        }
        Some(_) => errors.push(meta.error("duplicate option `timeout`")),
        None => errors.push_spanned(
            &literal,
            "`timeout` is a duration such as `\"30s\"`, `\"500ms\"` or `\"2m\"`, more than zero",
        ),
    }
    Ok(())
}

/// A string option that is one of `allowed`; `help` says which where it is not.
fn set_choice(
    slot: &mut Option<LitStr>,
    allowed: &[&str],
    help: &str,
    meta: &ParseNestedMeta<'_>,
    errors: &mut Errors,
) -> syn::Result<()> {
    let literal: LitStr = meta.value()?.parse()?;
    if allowed.contains(&literal.value().as_str()) {
        set(slot, literal, meta, errors);
    } else {
        errors.push_spanned(&literal, help);
    }
    Ok(())
}

fn set<T>(slot: &mut Option<T>, value: T, meta: &ParseNestedMeta<'_>, errors: &mut Errors) {
    if slot.is_some() {
        errors.push(meta.error(format!("duplicate option `{}`", key_of(meta))));
    } else {
        *slot = Some(value);
    }
}

/// The option's name, as written.
fn key_of(meta: &ParseNestedMeta<'_>) -> String {
    meta.path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_default()
}

/// Consumes whatever follows an unknown key, so parsing can go on to report the next one.
pub(crate) fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.input.parse::<proc_macro2::TokenTree>()?;
    }
    Ok(())
}

/// The `crate = "..."` of an attribute that takes only that (`#[verbatim]`, `#[tool_args]`):
/// the path into the runtime, when it is given.
pub(crate) fn parse_crate_only(attr: TokenStream, errors: &mut Errors) -> Option<Path> {
    let mut krate = None;
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("crate") {
            let path: LitStr = meta.value()?.parse()?;
            krate = Some(path.parse::<Path>()?);
            Ok(())
        } else {
            Err(meta.error("expected `crate = \"...\"`"))
        }
    });
    if let Err(error) = parser.parse2(attr) {
        errors.push(error);
    }
    krate
}
