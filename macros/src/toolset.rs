//! `#[toolset]` on an impl block: every `#[tool]` method becomes a tool that shares the
//! state, captured once as an `Arc<Self>` when the set is built.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::parse::Parser as _;
use syn::{ImplItem, ItemImpl, Path, Type};

use crate::ast::{ToolFn, pascal_case};
use crate::attr::parse_tool_attribute;
use crate::errors::Errors;
use crate::expand::{Callee, args_struct, crate_path, strip_param_helpers, tool_def};
use crate::fallback;
use crate::valid::{Site, check};

pub(crate) fn toolset(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let krate = crate_path(parse_toolset_attr(attr, &mut errors).as_ref());
    let Ok(mut item) = syn::parse2::<ItemImpl>(item.clone()) else {
        let error =
            syn::Error::new_spanned(&item, "`#[toolset]` goes on an impl block").to_compile_error();
        return quote!(#error #item);
    };
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
    let prefix = match &*item.self_ty {
        Type::Path(path) if path.qself.is_none() => path
            .path
            .segments
            .last()
            .map(|last| pascal_case(&last.ident)),
        _ => None,
    };
    let Some(prefix) = prefix else {
        errors.push_spanned(
            &item.self_ty,
            "`#[toolset]` needs a named type, like `impl Workspace { … }`",
        );
        return fallback::toolset(&item, &krate, errors);
    };

    let mut args_structs = Vec::new();
    let mut defs = Vec::new();
    for impl_item in &mut item.items {
        let ImplItem::Fn(method) = impl_item else {
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
        let options = parse_tool_attribute(first, &mut errors);
        let tool = ToolFn::new(
            options,
            &method.attrs,
            &method.vis,
            &method.sig,
            &mut errors,
        );
        strip_param_helpers(&mut method.sig);
        check(&tool, Site::Toolset, &mut errors);
        let args_ident = format_ident!("{prefix}{}Args", pascal_case(&method.sig.ident));
        args_structs.push(args_struct(&tool, &args_ident, &krate));
        let callee = Callee::Method {
            has_receiver: tool.receiver.is_some(),
        };
        defs.push(tool_def(&tool, &args_ident, &krate, &callee));
    }
    if defs.is_empty() {
        errors.push_spanned(
            &item.self_ty,
            "this `#[toolset]` has no tools: mark the methods that are tools with `#[tool]`",
        );
    }
    if !errors.is_empty() {
        return fallback::toolset(&item, &krate, errors);
    }

    let self_ty = &item.self_ty;
    quote! {
        #item

        #(#args_structs)*

        #[automatically_derived]
        impl #krate::__private::Toolset for #self_ty {
            fn tool_defs(
                self: #krate::__private::Arc<Self>,
            ) -> ::std::vec::Vec<#krate::__private::ToolDef> {
                ::std::vec![#(#defs),*]
            }
        }
    }
}

/// `#[toolset]` takes one option, `crate = "..."`.
fn parse_toolset_attr(attr: TokenStream, errors: &mut Errors) -> Option<Path> {
    let mut krate = None;
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("crate") {
            let literal: syn::LitStr = meta.value()?.parse()?;
            if krate.is_some() {
                return Err(meta.error("duplicate option `crate`"));
            }
            krate = Some(literal.parse::<Path>()?);
            Ok(())
        } else {
            Err(meta.error("unknown option; `#[toolset]` takes only `crate = \"...\"`"))
        }
    });
    if let Err(error) = parser.parse2(attr) {
        errors.push(error);
    }
    krate
}
