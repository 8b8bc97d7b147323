//! A model of one tool function that keeps the user's syntax, so every later error can be
//! spanned on the token it is about.

use syn::{Attribute, FnArg, Ident, Pat, Receiver, ReturnType, Signature, Type, Visibility};

use crate::attr::{ArgAttr, ToolAttr, parse_arg_attrs};
use crate::errors::Errors;

/// One function marked `#[tool]`, free or a method.
pub(crate) struct ToolFn {
    pub(crate) attr: ToolAttr,
    pub(crate) vis: Visibility,
    pub(crate) sig: Signature,
    pub(crate) doc: Doc,
    pub(crate) receiver: Option<Receiver>,
    pub(crate) inputs: Vec<Input>,
    pub(crate) output: Output,
}

/// The doc comment, line by line.
pub(crate) struct Doc {
    pub(crate) lines: Vec<String>,
    /// A `#[doc = …]` whose value is not a string literal (e.g. `include_str!`).
    pub(crate) non_literal: Option<Attribute>,
}

/// One parameter other than the receiver.
#[allow(clippy::large_enum_variant, reason = "built once per tool function")]
pub(crate) enum Input {
    /// The `&ToolContext` parameter.
    Context(Type),
    /// A `State<T>` parameter: host state of type `T`, from the registry.
    State {
        /// `T`.
        inner: Type,
    },
    /// A parameter that comes from the arguments.
    Param(Param),
}

pub(crate) struct Param {
    pub(crate) pat: Pat,
    pub(crate) ty: Type,
    pub(crate) arg: ArgAttr,
    /// `#[serde(...)]` and `#[schemars(...)]`, forwarded to the generated args field.
    pub(crate) forwarded: Vec<Attribute>,
}

/// What the function returns.
#[allow(clippy::large_enum_variant, reason = "built once per tool function")]
pub(crate) enum Output {
    /// Nothing: the value is `()`, which is JSON `null`.
    Unit,
    /// A value that cannot fail.
    Plain(Type),
    /// `…::Result<T, E>` or an alias `…::Result<T>`: the value is `T`.
    Result {
        ty: Type,
        ok: Option<Type>,
        err: Option<Type>,
    },
}

/// How the arguments reach the function.
pub(crate) enum ArgsForm<'a> {
    /// One parameter whose type is the whole args type.
    Whole(&'a Param),
    /// A parameter list, for which an args struct is generated.
    List(Vec<&'a Param>),
}

impl ToolFn {
    pub(crate) fn new(
        attr: ToolAttr,
        attrs: &[Attribute],
        vis: &Visibility,
        sig: &Signature,
        errors: &mut Errors,
    ) -> Self {
        let mut receiver = None;
        let mut inputs = Vec::new();
        for input in &sig.inputs {
            match input {
                FnArg::Receiver(found) => receiver = Some(found.clone()),
                FnArg::Typed(typed) if is_context(&typed.ty) => {
                    inputs.push(Input::Context((*typed.ty).clone()));
                }
                FnArg::Typed(typed) if state_inner(&typed.ty).is_some() => {
                    inputs.push(Input::State {
                        inner: state_inner(&typed.ty)
                            .cloned()
                            .unwrap_or_else(|| (*typed.ty).clone()),
                    });
                }
                FnArg::Typed(typed) => inputs.push(Input::Param(Param {
                    pat: (*typed.pat).clone(),
                    ty: (*typed.ty).clone(),
                    arg: parse_arg_attrs(&typed.attrs, errors),
                    forwarded: typed
                        .attrs
                        .iter()
                        .filter(|a| a.path().is_ident("serde") || a.path().is_ident("schemars"))
                        .cloned()
                        .collect(),
                })),
            }
        }
        Self {
            attr,
            vis: vis.clone(),
            sig: sig.clone(),
            doc: Doc::from_attrs(attrs),
            receiver,
            inputs,
            output: Output::from_return(&sig.output),
        }
    }

    pub(crate) fn params(&self) -> impl Iterator<Item = &Param> {
        self.inputs.iter().filter_map(|input| match input {
            Input::Param(param) => Some(param),
            Input::Context(_) | Input::State { .. } => None,
        })
    }

    /// The `T` of every `State<T>` parameter.
    pub(crate) fn states(&self) -> impl Iterator<Item = &Type> {
        self.inputs.iter().filter_map(|input| match input {
            Input::State { inner, .. } => Some(inner),
            Input::Context(_) | Input::Param(_) => None,
        })
    }

    /// A single unmarked parameter is the whole args type; anything else is a parameter list.
    pub(crate) fn args_form(&self) -> ArgsForm<'_> {
        let params: Vec<&Param> = self.params().collect();
        match params.as_slice() {
            [only] if only.arg.span.is_none() && only.forwarded.is_empty() => ArgsForm::Whole(only),
            _ => ArgsForm::List(params),
        }
    }

    /// The name the tool is registered under: the `name` option, or the function's name.
    pub(crate) fn tool_name(&self) -> String {
        self.attr
            .name
            .as_ref()
            .map_or_else(|| unraw(&self.sig.ident), syn::LitStr::value)
    }

    pub(crate) fn description(&self) -> String {
        self.attr
            .description
            .as_ref()
            .map_or_else(|| self.doc.text(), syn::LitStr::value)
    }
}

impl Param {
    /// The parameter's name, when it is a plain identifier pattern.
    pub(crate) fn ident(&self) -> Option<&Ident> {
        match &self.pat {
            Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => Some(&pat.ident),
            _ => None,
        }
    }
}

impl Doc {
    fn from_attrs(attrs: &[Attribute]) -> Self {
        let mut lines = Vec::new();
        let mut non_literal = None;
        for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
            match &attr.meta {
                syn::Meta::NameValue(syn::MetaNameValue {
                    value:
                        syn::Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Str(text),
                            ..
                        }),
                    ..
                }) => lines.extend(text.value().lines().map(str::to_owned)),
                _ => non_literal = Some(attr.clone()),
            }
        }
        Self { lines, non_literal }
    }

    /// The doc comment as plain text: one leading space per line removed (rustdoc's
    /// `/// text` convention), blank lines at either end dropped.
    pub(crate) fn text(&self) -> String {
        let lines: Vec<&str> = self
            .lines
            .iter()
            .map(|line| line.strip_prefix(' ').unwrap_or(line).trim_end())
            .collect();
        lines.join("\n").trim_matches('\n').to_owned()
    }
}

impl Output {
    fn from_return(output: &ReturnType) -> Self {
        let ty = match output {
            ReturnType::Default => return Self::Unit,
            ReturnType::Type(_, ty) => ty,
        };
        if let Type::Path(path) = &**ty
            && path.qself.is_none()
            && let Some(last) = path.path.segments.last()
            && last.ident == "Result"
        {
            let mut types = match &last.arguments {
                syn::PathArguments::AngleBracketed(args) => args
                    .args
                    .iter()
                    .filter_map(|arg| match arg {
                        syn::GenericArgument::Type(ty) => Some(ty.clone()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .into_iter(),
                _ => Vec::new().into_iter(),
            };
            return Self::Result {
                ty: (**ty).clone(),
                ok: types.next(),
                err: types.next(),
            };
        }
        Self::Plain((**ty).clone())
    }
}

/// `&ToolContext`, `&mut ToolContext` or `ToolContext`, by its last path segment.
fn is_context(ty: &Type) -> bool {
    let ty = match ty {
        Type::Reference(reference) => &*reference.elem,
        other => other,
    };
    matches!(ty, Type::Path(path) if path.qself.is_none()
        && path.path.segments.last().is_some_and(|last| last.ident == "ToolContext"))
}

/// The `T` of `State<T>` (by its last path segment), if the type is one.
fn state_inner(ty: &Type) -> Option<&Type> {
    let Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    if path.qself.is_some() || last.ident != "State" {
        return None;
    }
    match &last.arguments {
        syn::PathArguments::AngleBracketed(args) if args.args.len() == 1 => {
            match args.args.first()? {
                syn::GenericArgument::Type(inner) => Some(inner),
                _ => None,
            }
        }
        _ => None,
    }
}

/// One `#[toolset]` impl block: its type, the prefix of its generated names, and its tools.
pub(crate) struct ToolsetImpl {
    /// `PascalCase` of the type's last segment, for `{Type}{Method}Args`.
    pub(crate) prefix: Option<String>,
    /// The tool methods, each with the name of its args struct.
    pub(crate) tools: Vec<ToolFn>,
}

impl ToolsetImpl {
    /// Reads the impl block, taking the `#[tool]` attributes off its methods (they are this
    /// macro's to read) and the parameter helpers off their signatures.
    pub(crate) fn from_syn(item: &mut syn::ItemImpl, errors: &mut Errors) -> Self {
        let prefix = match &*item.self_ty {
            Type::Path(path) if path.qself.is_none() => path
                .path
                .segments
                .last()
                .map(|last| pascal_case(&last.ident)),
            _ => None,
        };
        let mut tools = Vec::new();
        for impl_item in &mut item.items {
            let syn::ImplItem::Fn(method) = impl_item else {
                continue;
            };
            let (tool_attrs, rest): (Vec<_>, Vec<_>) = method
                .attrs
                .drain(..)
                .partition(|attr| attr.path().is_ident("tool"));
            method.attrs = rest;
            let Some(first) = tool_attrs.first() else {
                continue;
            };
            for duplicate in &tool_attrs[1..] {
                errors.push_spanned(duplicate, "duplicate `#[tool]` on one method");
            }
            let options = crate::attr::parse_tool_attribute(first, errors);
            tools.push(ToolFn::new(
                options,
                &method.attrs,
                &method.vis,
                &method.sig,
                errors,
            ));
            crate::attr::strip_param_helpers(&mut method.sig);
        }
        Self { prefix, tools }
    }
}

/// The identifier without a raw prefix: `r#type` → `type`.
pub(crate) fn unraw(ident: &Ident) -> String {
    let text = ident.to_string();
    text.strip_prefix("r#")
        .map_or_else(|| text.clone(), str::to_owned)
}

/// `read_file` → `ReadFile`, `r#type` → `Type`.
pub(crate) fn pascal_case(ident: &Ident) -> String {
    unraw(ident)
        .split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().chain(chars).collect()
            })
        })
        .collect()
}

/// The unit struct `#[tool]` generates for a free function: the `struct_name` option, or the
/// function's name in `PascalCase` when that is an identifier distinct from the function's.
pub(crate) fn struct_ident(tool: &ToolFn) -> Option<Ident> {
    if let Some(name) = &tool.attr.struct_name {
        return name.parse::<Ident>().ok();
    }
    let fn_ident = &tool.sig.ident;
    let name = pascal_case(fn_ident);
    let ident = syn::parse_str::<Ident>(&name).ok()?;
    (ident != *fn_ident).then(|| Ident::new(&name, fn_ident.span()))
}
