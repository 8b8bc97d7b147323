//! The rules a tool function must follow, each reported on the token that breaks it.

use syn::spanned::Spanned as _;
use syn::{ReceiverKind, Type};

use crate::ast::{ArgsForm, Input, Output, ToolFn, ToolsetImpl, struct_ident};
use crate::errors::Errors;

/// Where the function is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Site {
    /// A free function.
    Free,
    /// A method inside a `#[toolset]` impl block.
    Toolset,
}

/// The longest name providers accept. The expansion pins this rule to the runtime's
/// (`toolprism::tool::is_valid_tool_name`) with a compile-time assertion.
const MAX_TOOL_NAME_LEN: usize = 64;

/// The rules of a `#[toolset]` impl block, then of each of its tools.
pub(crate) fn check_toolset(set: &ToolsetImpl, item: &syn::ItemImpl, errors: &mut Errors) {
    if let Some((path, _)) = &item.trait_ {
        errors.push_spanned(
            path,
            "`#[toolset]` goes on an inherent impl block (`impl MyState { … }`), not on a trait impl",
        );
    }
    if !item.generics.params.is_empty() {
        errors.push_spanned(
            &item.generics,
            "`#[toolset]` on a generic impl block is not supported: implement it for a concrete type",
        );
    }
    if set.prefix.is_none() {
        errors.push_spanned(
            &item.self_ty,
            "`#[toolset]` needs a named type, like `impl Workspace { … }`",
        );
    }
    if set.tools.is_empty() {
        errors.push_spanned(
            &item.self_ty,
            "this `#[toolset]` has no tools: mark the methods that are tools with `#[tool]`",
        );
    }
    for tool in &set.tools {
        check(tool, Site::Toolset, errors);
    }
}

pub(crate) fn check(tool: &ToolFn, site: Site, errors: &mut Errors) {
    check_signature(tool, errors);
    check_receiver(tool, site, errors);
    check_inputs(tool, errors);
    check_output(&tool.output, errors);
    check_name_and_description(tool, site, errors);
}

fn check_signature(tool: &ToolFn, errors: &mut Errors) {
    let sig = &tool.sig;
    if let syn::Safety::Unsafe(token) = &sig.safety {
        errors.push_spanned(
            token,
            "a tool cannot be `unsafe`: models and programs call it with arbitrary arguments",
        );
    }
    if let Some(abi) = &sig.abi {
        errors.push_spanned(abi, "a tool cannot have an `extern` ABI");
    }
    if !sig.generics.params.is_empty() {
        errors.push_spanned(
            &sig.generics,
            "a tool cannot be generic: its JSON Schemas are derived from concrete argument and return types",
        );
    } else if let Some(clause) = &sig.generics.where_clause {
        errors.push_spanned(clause, "a tool cannot have a `where` clause");
    }
    if let Some(variadic) = &sig.variadic {
        errors.push_spanned(variadic, "a tool cannot be variadic");
    }
}

fn check_receiver(tool: &ToolFn, site: Site, errors: &mut Errors) {
    let Some(receiver) = &tool.receiver else {
        return;
    };
    if site == Site::Free {
        errors.push_spanned(
            receiver,
            "`#[tool]` on a method needs `#[toolset]` on its impl block, which captures the state once for all its tools",
        );
        return;
    }
    match &receiver.kind {
        ReceiverKind::Reference(_, _, None) => {}
        ReceiverKind::Reference(_, _, Some(_)) => errors.push_spanned(
            receiver,
            "a tool method takes `&self`, not `&mut self`: calls may run concurrently, so use interior mutability (a `Mutex`, an atomic) for state that changes",
        ),
        _ => errors.push_spanned(
            receiver,
            "a tool method takes `&self`: the state is shared by every call of every tool in the set, so it cannot be taken by value",
        ),
    }
}

fn check_inputs(tool: &ToolFn, errors: &mut Errors) {
    let mut seen_context = false;
    for input in &tool.inputs {
        if let Input::Context(ty) = input {
            if seen_context {
                errors.push_spanned(ty, "a tool takes at most one `&ToolContext` parameter");
            }
            seen_context = true;
            match ty {
                Type::Reference(reference) if reference.mutability.is_some() => {
                    errors.push_spanned(
                        ty,
                        "take the context as `&ToolContext`; it cannot be mutated",
                    );
                }
                Type::Reference(_) => {}
                _ => errors.push_spanned(ty, "take the context by reference: `&ToolContext`"),
            }
        }
    }
    match tool.args_form() {
        ArgsForm::Whole(param) => {
            check_owned(&param.ty, errors);
            if let Some(name) = non_object_type(&param.ty) {
                errors.push_spanned(
                    &param.ty,
                    format!(
                        "a single parameter is taken as the whole arguments type, which must be a JSON object (a struct with named fields), not `{name}`; mark it `#[arg]` to make it one parameter of a generated arguments struct"
                    ),
                );
            }
        }
        ArgsForm::List(params) => {
            for param in params {
                if param.ident().is_none() {
                    errors.push_spanned(
                        &param.pat,
                        "in a parameter list each parameter needs a plain name, which becomes its argument's name",
                    );
                }
                check_owned(&param.ty, errors);
            }
        }
    }
}

/// Arguments are deserialized into owned values.
fn check_owned(ty: &Type, errors: &mut Errors) {
    match ty {
        Type::Reference(_) => errors.push_spanned(
            ty,
            "tool arguments are deserialized into owned values: take `String` rather than `&str`, `Vec<T>` rather than `&[T]`",
        ),
        Type::ImplTrait(_) => errors.push_spanned(ty, "a tool parameter needs a concrete type, not `impl Trait`"),
        _ => {}
    }
}

/// The name of a type that obviously is not a JSON object, for the single-parameter rule.
fn non_object_type(ty: &Type) -> Option<String> {
    const NOT_OBJECTS: &[&str] = &[
        "bool", "char", "str", "String", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16",
        "u32", "u64", "u128", "usize", "f32", "f64", "Vec", "VecDeque", "Option", "HashSet",
        "BTreeSet", "PathBuf",
    ];
    match ty {
        Type::Path(path) => {
            let last = path.path.segments.last()?;
            NOT_OBJECTS
                .contains(&last.ident.to_string().as_str())
                .then(|| quote::quote!(#ty).to_string().replace(' ', ""))
        }
        Type::Tuple(_) | Type::Array(_) | Type::Slice(_) => {
            Some(quote::quote!(#ty).to_string().replace(' ', ""))
        }
        _ => None,
    }
}

fn check_output(output: &Output, errors: &mut Errors) {
    let ty = match output {
        Output::Unit => return,
        Output::Plain(ty) => ty,
        Output::Result { ty, ok: None, .. } => {
            errors.push_spanned(ty, "cannot find the value type: write `Result<T, E>`");
            return;
        }
        Output::Result { ok: Some(ok), .. } => ok,
    };
    match ty {
        Type::ImplTrait(_) => errors.push_spanned(
            ty,
            "a tool returns a concrete type, whose JSON Schema becomes the output schema; `impl Trait` has none",
        ),
        Type::Reference(reference)
            if reference.lifetime.as_ref().is_none_or(|lifetime| lifetime.ident != "static") =>
        {
            errors.push_spanned(
                ty,
                "a tool returns an owned value (or a `&'static` one): its value outlives the call",
            );
        }
        _ => {}
    }
}

fn check_name_and_description(tool: &ToolFn, site: Site, errors: &mut Errors) {
    let name = tool.tool_name();
    if !is_valid_tool_name(&name) {
        let message = format!(
            "tool name `{name}` is refused: names must match `^[a-zA-Z0-9_-]{{1,64}}$`, which every provider accepts"
        );
        match &tool.attr.name {
            Some(literal) => errors.push_spanned(literal, message),
            None => {
                errors.push_spanned(&tool.sig.ident, message + "; set one with `name = \"...\"`");
            }
        }
    }
    if tool.attr.description.is_none() {
        if let Some(attr) = &tool.doc.non_literal {
            errors.push_spanned(
                attr,
                "cannot read the description from a non-literal doc attribute; set `description = \"...\"`",
            );
        } else if tool.description().is_empty() {
            errors.push_spanned(
                &tool.sig.ident,
                format!(
                    "tool `{name}` has no description, and the model needs one: add a doc comment (`/// …`) or `description = \"...\"`"
                ),
            );
        }
    }
    if site == Site::Free {
        check_struct_name(tool, errors);
    }
    if site == Site::Toolset
        && let Some(struct_name) = &tool.attr.struct_name
    {
        errors.push_spanned(
            struct_name,
            "`struct_name` names the unit struct of a free function; a `#[toolset]` method has none",
        );
    }
    if site == Site::Toolset
        && let Some(krate) = &tool.attr.krate
    {
        errors.push(syn::Error::new(
            krate.span(),
            "inside `#[toolset]`, set `crate = \"...\"` on `#[toolset]` itself",
        ));
    }
}

/// Names of the Rust prelude a glob-imported struct would hide in the user's module.
const PRELUDE: &[&str] = &[
    "AsMut",
    "AsRef",
    "Box",
    "Clone",
    "Copy",
    "Default",
    "DoubleEndedIterator",
    "Drop",
    "Eq",
    "Err",
    "ExactSizeIterator",
    "Extend",
    "Fn",
    "FnMut",
    "FnOnce",
    "From",
    "FromIterator",
    "Future",
    "Into",
    "IntoFuture",
    "IntoIterator",
    "Iterator",
    "None",
    "Ok",
    "Option",
    "Ord",
    "PartialEq",
    "PartialOrd",
    "Result",
    "Send",
    "Sized",
    "Some",
    "String",
    "Sync",
    "ToOwned",
    "ToString",
    "TryFrom",
    "TryInto",
    "Unpin",
    "Vec",
];

/// Whether a struct of this name would hide a name of the Rust prelude.
pub(crate) fn hides_prelude(name: &str) -> bool {
    PRELUDE.contains(&name)
}

fn check_struct_name(tool: &ToolFn, errors: &mut Errors) {
    let Some(ident) = struct_ident(tool) else {
        errors.push_spanned(
            &tool.sig.ident,
            "`#[tool]` generates a unit struct named after the function in PascalCase, so the function needs a snake_case name (or set `struct_name = \"...\"`)",
        );
        return;
    };
    let name = ident.to_string();
    if hides_prelude(&name) {
        let message = format!(
            "`#[tool]` would generate a unit struct `{name}` here, hiding the prelude's `{name}` in this module; name it with `#[tool(struct_name = \"{name}Tool\")]`"
        );
        match &tool.attr.struct_name {
            Some(literal) => errors.push_spanned(literal, message),
            None => errors.push_spanned(&tool.sig.ident, message),
        }
    }
}

fn is_valid_tool_name(name: &str) -> bool {
    (1..=MAX_TOOL_NAME_LEN).contains(&name.len())
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
}
