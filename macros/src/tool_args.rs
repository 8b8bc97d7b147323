//! `#[tool_args]`: `Deserialize` and `JsonSchema` for a tool's argument struct, by the runtime's
//! shared code, as a parameter list gets them. What `#[derive(Deserialize, JsonSchema)]` with
//! `#[serde(deny_unknown_fields)]` does for a plain struct, in a few lines whose spans are the
//! struct's own: rustc checks a derive's output again whenever an edit above it moves it (its
//! syntax context carries the derive's position), and these it does not.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Fields, ItemStruct, LitStr, Pat, PatIdent};

use crate::ast::{Doc, Param};
use crate::attr::{ArgAttr, parse_crate_only};
use crate::errors::Errors;
use crate::expand::{SHARED_FIELDS_MAX, anchored, shared_reading};

/// Expands `#[tool_args]` on a struct.
pub(crate) fn tool_args(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let krate = parse_crate_only(attr, &mut errors);
    let item: ItemStruct = match syn::parse2(item) {
        Ok(item) => item,
        Err(error) => {
            return syn::Error::new(
                error.span(),
                "`#[tool_args]` takes a struct with named fields",
            )
            .to_compile_error();
        }
    };
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
    let doc = Doc::from_attrs(&item.attrs).text();
    let Some(read) = shared_reading(
        &borrowed,
        fields.brace_token.span.join(),
        &item.ident,
        &doc,
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
    const PLAIN: &str = "`#[tool_args]` reads a plain struct: for this one, derive `Deserialize` \
                         and `JsonSchema` instead";
    if !item.generics.params.is_empty() || item.generics.where_clause.is_some() {
        errors.push_spanned(
            &item.generics,
            format!("{PLAIN} (it has generic parameters)"),
        );
    }
    for attr in &item.attrs {
        if theirs(attr) {
            errors.push_spanned(
                attr,
                format!("{PLAIN} (serde and schemars attributes are theirs to read)"),
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
        for attr in &field.attrs {
            if theirs(attr) {
                errors.push_spanned(
                    attr,
                    format!("{PLAIN} (serde and schemars attributes are theirs to read)"),
                );
            }
        }
        let doc = Doc::from_attrs(&field.attrs);
        if let Some(attr) = &doc.non_literal {
            errors.push_spanned(
                attr,
                "`#[tool_args]` reads a field's description from its doc comment, written out",
            );
        }
        let Some(ident) = field.ident.clone() else {
            continue;
        };
        let description = doc.text();
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
                    .then(|| LitStr::new(&description, proc_macro2::Span::call_site())),
            },
            forwarded: Vec::new(),
        });
    }
    params
}

/// A `#[serde]` or `#[schemars]` attribute.
fn theirs(attr: &syn::Attribute) -> bool {
    attr.path().is_ident("serde") || attr.path().is_ident("schemars")
}
