//! What is emitted when the input is wrong: the user's item, unchanged but for the helper
//! attributes the macro consumes, plus the errors and stand-ins for what the macro would have
//! generated. The user sees the real errors, not a cascade of "cannot find `Read`".

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Ident, ItemFn, Path};

use crate::errors::Errors;
use crate::unit::UnitStruct;

pub(crate) fn not_a_function(item: TokenStream) -> TokenStream {
    let error = syn::Error::new_spanned(
        &item,
        "`#[tool]` goes on a function, or on a method inside a `#[toolset]` impl block",
    )
    .to_compile_error();
    quote!(#error #item)
}

pub(crate) fn not_an_impl(item: TokenStream) -> TokenStream {
    let error =
        syn::Error::new_spanned(&item, "`#[toolset]` goes on an impl block").to_compile_error();
    quote!(#error #item)
}

pub(crate) fn tool_fn(
    item: &ItemFn,
    struct_ident: Option<&Ident>,
    krate: &Path,
    errors: Errors,
) -> TokenStream {
    let errors = errors.into_compile_errors();
    // A method (it has a receiver) is inside an impl block, where a struct cannot go.
    let stand_in = struct_ident
        .filter(|_| item.sig.receiver().is_none())
        .map(|struct_ident| {
            let unit = UnitStruct::new(item, struct_ident);
            let declaration = unit.declaration("A stand-in: `#[tool]` reported errors.");
            let path = unit.path();
            quote! {
                #declaration
                impl #krate::__private::IntoToolDef for #path {
                    fn into_tool_def(self) -> #krate::__private::ToolDef {
                        ::core::unreachable!()
                    }
                }
            }
        });
    quote! {
        #errors
        #item
        #stand_in
    }
}

pub(crate) fn toolset(item: &syn::ItemImpl, krate: &Path, errors: Errors) -> TokenStream {
    let errors = errors.into_compile_errors();
    let stand_in = (item.trait_.is_none() && item.generics.params.is_empty()).then(|| {
        let self_ty = &item.self_ty;
        quote! {
            impl #krate::__private::Toolset for #self_ty {
                fn tool_defs(self: #krate::__private::Arc<Self>) -> ::std::vec::Vec<#krate::__private::ToolDef> {
                    ::core::unreachable!()
                }
            }
        }
    });
    quote! {
        #errors
        #item
        #stand_in
    }
}
