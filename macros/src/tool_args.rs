//! `#[tool_args]`: `Deserialize` and `JsonSchema` for a tool's argument struct, by the runtime's
//! shared code, as a parameter list gets them. What `#[derive(Deserialize, JsonSchema)]` with
//! `#[serde(deny_unknown_fields)]` does for a plain struct, in a few lines whose spans are the
//! struct's own: rustc checks a derive's output again whenever an edit above it moves it (its
//! syntax context carries the derive's position), and these it does not.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Attribute, Expr, ExprLit, Fields, ItemStruct, Lit, LitStr, Meta, Pat, PatIdent};

use crate::ast::Param;
use crate::attr::{ArgAttr, parse_crate_only};
use crate::errors::Errors;
use crate::expand::{SHARED_FIELDS_MAX, anchored, crate_path, shared_reading};

/// Why a struct is refused, before the reason.
const PLAIN: &str = "`#[tool_args]` reads a plain struct: for this one, derive `Deserialize` and \
                     `JsonSchema` instead";

/// Expands `#[tool_args]` on a struct.
pub(crate) fn tool_args(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let krate = crate_path(parse_crate_only(attr, &mut errors).as_ref());
    let item: ItemStruct = match syn::parse2(item.clone()) {
        Ok(parsed) => parsed,
        Err(error) => {
            // The item as it was, so that its uses report nothing more.
            let error = syn::Error::new(
                error.span(),
                "`#[tool_args]` takes a struct with named fields",
            )
            .to_compile_error();
            return quote!(#item #error);
        }
    };
    let struct_doc = doc_of(&item.attrs, &mut errors);
    let params = params(&item, &mut errors);
    if !errors.is_empty() {
        // The struct without its serde and schemars attributes, which nothing reads now: the
        // reasons above are all there is to read, not the compiler's echoes of them.
        let mut item = item;
        item.attrs.retain(|attr| !theirs(attr));
        for field in &mut item.fields {
            field.attrs.retain(|attr| !theirs(attr));
        }
        let errors = errors.into_compile_errors();
        return quote!(#item #errors);
    }
    let Fields::Named(fields) = &item.fields else {
        return quote!(#item);
    };
    let borrowed: Vec<&Param> = params.iter().collect();
    let Some(read) = shared_reading(
        &borrowed,
        fields.brace_token.span.join(),
        &item.ident,
        &struct_doc,
        &krate,
    ) else {
        return quote!(#item);
    };
    let generated = anchored(read, item.ident.span(), fields.brace_token.span.close());
    quote! {
        #item

        #generated
    }
}

/// The struct's fields as the parameters of a list, each field's doc comment its description;
/// the reasons a struct is not one the shared code reads, in `errors`.
fn params(item: &ItemStruct, errors: &mut Errors) -> Vec<Param> {
    if !item.generics.params.is_empty() || item.generics.where_clause.is_some() {
        errors.push_spanned(
            &item.generics,
            format!("{PLAIN} (it has generic parameters)"),
        );
    }
    check_attributes(&item.attrs, errors);
    for attr in item
        .attrs
        .iter()
        .filter(|attr| attr.path().is_ident("derive"))
    {
        let derives_ours = attr
            .parse_args_with(
                syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
            )
            .is_ok_and(|paths| {
                paths.iter().any(|path| {
                    path.segments.last().is_some_and(|last| {
                        last.ident == "Deserialize" || last.ident == "JsonSchema"
                    })
                })
            });
        if derives_ours {
            errors.push_spanned(
                attr,
                "`#[tool_args]` implements `Deserialize` and `JsonSchema` itself: derive neither",
            );
        }
    }
    let Fields::Named(fields) = &item.fields else {
        errors.push_spanned(
            &item.fields,
            format!("{PLAIN} (its fields are not named: a tool's arguments are an object)"),
        );
        return Vec::new();
    };
    if fields.named.len() > SHARED_FIELDS_MAX {
        errors.push_spanned(
            &item.ident,
            format!("{PLAIN} (it has more than {SHARED_FIELDS_MAX} fields)"),
        );
    }
    let mut params = Vec::new();
    for field in &fields.named {
        check_attributes(&field.attrs, errors);
        if let Some(attr) = field.attrs.iter().find(|attr| attr.path().is_ident("cfg")) {
            errors.push_spanned(
                attr,
                format!("{PLAIN} (a field that is there or not by `cfg`)"),
            );
        }
        let description = doc_of(&field.attrs, errors);
        let Some(ident) = field.ident.clone() else {
            continue;
        };
        params.push(Param {
            pat: Pat::Ident(PatIdent {
                attrs: Vec::new(),
                by_ref: None,
                mutability: None,
                ident,
                subpat: None,
            }),
            ty: field.ty.clone(),
            arg: ArgAttr {
                span: None,
                description: (!description.is_empty())
                    .then(|| LitStr::new(&description, Span::call_site())),
            },
            forwarded: Vec::new(),
        });
    }
    params
}

/// Refuses the attributes the derives would read and this does not: `#[serde]`, `#[schemars]`,
/// and `#[cfg_attr]` (which may stand for either, or for a doc).
fn check_attributes(attrs: &[Attribute], errors: &mut Errors) {
    for attr in attrs {
        if theirs(attr) {
            errors.push_spanned(
                attr,
                format!("{PLAIN} (serde and schemars attributes are theirs to read)"),
            );
        } else if attr.path().is_ident("cfg_attr") {
            errors.push_spanned(attr, format!("{PLAIN} (an attribute behind `cfg_attr`)"));
        }
    }
}

/// A doc comment as schemars's derive reads it: each `#[doc = "…"]` without its first space,
/// joined by line breaks. A doc that is not written out (`#[doc = include_str!(…)]`) is
/// refused: it is known only once expanded, after this runs. `#[doc(hidden)]` and the like
/// are no text.
fn doc_of(attrs: &[Attribute], errors: &mut Errors) -> String {
    let mut lines = Vec::new();
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("doc")) {
        let Meta::NameValue(name_value) = &attr.meta else {
            continue;
        };
        match &name_value.value {
            Expr::Lit(ExprLit {
                lit: Lit::Str(text),
                ..
            }) => {
                let text = text.value();
                lines.push(
                    text.strip_prefix(' ')
                        .map_or_else(|| text.clone(), str::to_owned),
                );
            }
            _ => errors.push_spanned(
                attr,
                "`#[tool_args]` reads a description from a doc comment written out",
            ),
        }
    }
    lines.join("\n")
}

/// A `#[serde]` or `#[schemars]` attribute.
fn theirs(attr: &Attribute) -> bool {
    attr.path().is_ident("serde") || attr.path().is_ident("schemars")
}
