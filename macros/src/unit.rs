//! The unit struct `#[tool]` makes of a free function, declared where a user's own item of
//! the same name hides it; and the lints every generated item allows.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
use syn::{ItemFn, Visibility};

use crate::ast::unraw;

/// The unit struct of a free function. It is declared in a hidden module and glob-imported,
/// so that an item of the same name in the user's scope hides it (a glob import gives way to
/// an explicit item) instead of clashing with it in a cascade of errors: the assertion after it
/// then reports the collision once, and says how to rename the struct.
pub(crate) struct UnitStruct<'a> {
    item: &'a ItemFn,
    ident: &'a Ident,
    module: Ident,
}

impl<'a> UnitStruct<'a> {
    pub(crate) fn new(item: &'a ItemFn, ident: &'a Ident) -> Self {
        let module = format_ident!("__toolprism_tool_{}", unraw(&item.sig.ident));
        Self {
            item,
            ident,
            module,
        }
    }

    /// The hidden module declaring the struct, and the glob import that brings it in scope.
    pub(crate) fn declaration(&self, doc: &str) -> TokenStream {
        let Self { ident, module, .. } = self;
        let vis = &self.item.vis;
        let inner = inner_visibility(vis);
        let name = ident.to_string();
        let allowed = allowed();
        quote! {
            #allowed
            #[doc(hidden)]
            mod #module {
                #[doc = #doc]
                #inner struct #ident;

                // Written out, not derived: a derive's expansion is checked again when moved.
                impl ::core::clone::Clone for #ident {
                    fn clone(&self) -> Self {
                        *self
                    }
                }

                impl ::core::marker::Copy for #ident {}

                impl ::core::fmt::Debug for #ident {
                    fn fmt(&self, formatter: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        formatter.write_str(#name)
                    }
                }

                impl ::core::default::Default for #ident {
                    fn default() -> Self {
                        Self
                    }
                }
            }
            #allowed
            #vis use #module::*;
        }
    }

    /// The path that names the struct whatever hides it in the user's scope.
    pub(crate) fn path(&self) -> TokenStream {
        let Self { ident, module, .. } = self;
        quote!(#module::#ident)
    }
}

/// The visibility of the struct inside its module, so that the glob import can re-export it
/// as far as the function is visible.
fn inner_visibility(vis: &Visibility) -> TokenStream {
    match vis {
        Visibility::Inherited => quote!(pub(super)),
        Visibility::Public(_) => quote!(pub),
        Visibility::Restricted(restricted) => {
            let path = &restricted.path;
            let first = path
                .segments
                .first()
                .map(|segment| segment.ident.to_string());
            match first.as_deref() {
                Some("self") => quote!(pub(super)),
                Some("super") => quote!(pub(in super::#path)),
                _ => quote!(#vis),
            }
        }
    }
}

/// On every generated item: the lints a user turns on are for the code they wrote. The
/// expansion has their code's syntax context (see `expand::anchored`), so the lints that skip a
/// macro's output would not know to skip it. (A parameter's type need not be `Debug` or
/// `Copy`, and a deprecated type or field is the user's to use.) An `allow` under a `forbid` of
/// the same lint is an error: none here is one a crate is likely to forbid, and `missing_docs`,
/// which is, is met instead (every field has a doc).
pub(crate) fn allowed() -> TokenStream {
    quote! {
        #[allow(
            deprecated,
            missing_debug_implementations,
            missing_copy_implementations,
            unused_imports,
            unused_qualifications,
            clippy::all,
            clippy::pedantic,
            clippy::nursery,
            clippy::restriction
        )]
    }
}
