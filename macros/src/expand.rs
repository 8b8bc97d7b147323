//! Code generation: the args struct, the `ToolDef` builder expression, the unit struct that
//! registers a free function, and the `Toolset` impl of an impl block.

use proc_macro2::{Delimiter, Group, Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned as _;
use syn::{Ident, ItemFn, ItemImpl, Path};

use crate::ast::{
    ArgsForm, Input, Output, Param, ToolFn, ToolsetImpl, pascal_case, struct_ident, unraw,
};
use crate::attr::{parse_tool_attr, parse_toolset_attr, strip_param_helpers};
use crate::errors::Errors;
use crate::fallback;
use crate::unit::{UnitStruct, allowed};
use crate::valid::{Site, check, check_toolset, hides_prelude};

/// `#[tool]` on a free function.
pub(crate) fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let options = parse_tool_attr(attr, &mut errors);
    let Ok(mut item) = syn::parse2::<ItemFn>(item.clone()) else {
        return fallback::not_a_function(item);
    };
    let tool = ToolFn::new(options, &item.attrs, &item.vis, &item.sig, &mut errors);
    strip_param_helpers(&mut item.sig);
    check(&tool, Site::Free, &mut errors);
    let krate = crate_path(tool.attr.krate.as_ref());
    // No stand-in for a name that would hide the prelude: that is the error being reported.
    let struct_ident = struct_ident(&tool).filter(|ident| !hides_prelude(&ident.to_string()));
    let Some(struct_ident) = struct_ident.clone().filter(|_| errors.is_empty()) else {
        return fallback::tool_fn(&item, struct_ident.as_ref(), &krate, errors);
    };

    let args_ident = format_ident!("{}Args", struct_ident);
    let args_struct = args_struct(&tool, &args_ident, &krate);
    let def = tool_def(&tool, &args_ident, &krate, &Callee::Free);
    let doc = format!(
        "The `{}` tool, made by `#[tool]` from [`{}`](fn@super::{}). Register it with `Registry::builder().tool({struct_ident})`.",
        tool.tool_name(),
        item.sig.ident,
        item.sig.ident,
    );
    let name_pin = name_pin(&tool, &krate);
    let unit = UnitStruct::new(&item, &struct_ident);
    let declaration = unit.declaration(&doc);
    let path = unit.path();
    // `#struct_ident` resolves to the glob-imported struct unless an item of the same name in
    // this scope hides it; then this fails, with the message on `GeneratedTool`.
    let ident_here = Ident::new(&struct_ident.to_string(), Span::call_site());
    let allowed = allowed();
    let generated = quote! {
        #declaration

        #args_struct

        #allowed
        #[automatically_derived]
        impl #krate::__private::IntoToolDef for #path {
            fn into_tool_def(self) -> #krate::__private::ToolDef {
                #def
            }
        }

        #allowed
        #[automatically_derived]
        #[diagnostic::do_not_recommend]
        impl #krate::__private::GeneratedTool for #path {}

        #allowed
        const _: () = #krate::__private::assert_generated_tool::<#ident_here>();

        #name_pin
    };
    let generated = anchored(
        generated,
        item.sig.ident.span(),
        item.block.brace_token.span.close(),
    );
    quote! {
        #item

        #generated
    }
}

/// The generated items, made as cheap to move as the user's own: an edit above a tool moves
/// its expansion, and rustc checks an item again when the hash of its spans changes. A span is
/// hashed relative to its item when the item's span contains it, and by line and column when
/// not; its syntax context is hashed too, and the macro call's context carries the call's
/// position. So every token takes the function's syntax context (its position kept: the
/// messages point where they did), and every item opens at the attribute and closes (`}`, `;`)
/// at the item's last brace, so that its span contains the user's tokens it repeats.
/// `context` is a token of the user's, for its syntax context; `close` is their item's last
/// brace.
pub(crate) fn anchored(generated: TokenStream, context: Span, close: Span) -> TokenStream {
    anchor(generated, context, close.resolved_at(context))
}

fn anchor(tokens: TokenStream, context: Span, close: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|token| match token {
            TokenTree::Group(group) => {
                let mut anchored =
                    Group::new(group.delimiter(), anchor(group.stream(), context, close));
                anchored.set_span(if group.delimiter() == Delimiter::Brace {
                    close
                } else {
                    group.span().resolved_at(context)
                });
                TokenTree::Group(anchored)
            }
            // `$crate` names the crate of the `macro_rules!` that wrote it by its own syntax
            // context: a tool declared by another crate's macro keeps it.
            TokenTree::Ident(ident) if ident == "$crate" => TokenTree::Ident(ident),
            TokenTree::Punct(mut punct) => {
                punct.set_span(if punct.as_char() == ';' {
                    close
                } else {
                    punct.span().resolved_at(context)
                });
                TokenTree::Punct(punct)
            }
            mut other => {
                other.set_span(other.span().resolved_at(context));
                other
            }
        })
        .collect()
}

/// `#[toolset]` on an impl block: parse, validate, expand — every problem reported at once.
pub(crate) fn toolset(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let options = parse_toolset_attr(attr, &mut errors);
    let krate = crate_path(options.krate.as_ref());
    let Ok(mut item) = syn::parse2::<ItemImpl>(item.clone()) else {
        return fallback::not_an_impl(item);
    };
    let set = ToolsetImpl::from_syn(&mut item, &mut errors);
    check_toolset(&set, &item, &mut errors);
    let Some(prefix) = set.prefix.as_ref().filter(|_| errors.is_empty()) else {
        return fallback::toolset(&item, &krate, errors);
    };
    let mut args_structs = Vec::new();
    let mut defs = Vec::new();
    let mut pins = Vec::new();
    for tool in &set.tools {
        let args_ident = format_ident!("{prefix}{}Args", pascal_case(&tool.sig.ident));
        args_structs.push(args_struct(tool, &args_ident, &krate));
        let callee = Callee::Method {
            has_receiver: tool.receiver.is_some(),
        };
        defs.push(tool_def(tool, &args_ident, &krate, &callee));
        pins.push(name_pin(tool, &krate));
    }
    let self_ty = &item.self_ty;
    let allowed = allowed();
    let generated = quote! {
        #(#args_structs)*

        #(#pins)*

        #allowed
        #[automatically_derived]
        impl #krate::__private::Toolset for #self_ty {
            fn tool_defs(
                self: #krate::__private::Arc<Self>,
            ) -> ::std::vec::Vec<#krate::__private::ToolDef> {
                // Not `vec!`: a macro called here would be checked again whenever it moved.
                ::std::vec::Vec::from([#(#defs),*])
            }
        }
    };
    let generated = anchored(
        generated,
        item.impl_token.span,
        item.brace_token.span.close(),
    );
    quote! {
        #item

        #generated
    }
}

/// How the generated handler reaches the user's function.
pub(crate) enum Callee {
    /// A free function, by name.
    Free,
    /// A method of the toolset, through the captured `Arc<Self>` named `__toolprism_state`.
    Method { has_receiver: bool },
}

/// The `ToolDef` builder expression for one tool, in the builder's order: name and
/// description, the argument and value types, the body (which must be `Send`), the host state
/// it takes, its projections.
pub(crate) fn tool_def(
    tool: &ToolFn,
    args_ident: &Ident,
    krate: &Path,
    callee: &Callee,
) -> TokenStream {
    let head = head_steps(tool, krate);
    let signature = signature_steps(tool, args_ident, krate);
    let handler = handler_closure(tool, krate, callee);
    let states = tool
        .states()
        .map(|inner| quote_spanned!(inner.span()=> .requires_state::<#inner>()));
    let projections = projection_steps(tool);
    let about = about_steps(tool, krate);
    quote! {
        #head #signature .erased_body(#handler)
            #(#states)*
            #projections
            .build()
            #about
    }
}

/// `.with_title(…)`, `.read_only(true)`, `.with_icon(…)`, `.with_example(…)`,
/// `.with_timeout(…)`, `.with_defer_loading(true)`, `.with_callers(…)`, `.with_task(…)`: what
/// the attribute said of the tool, each on the definition `build()` made.
fn about_steps(tool: &ToolFn, krate: &Path) -> TokenStream {
    let about = &tool.attr.about;
    let title = about
        .title
        .as_ref()
        .map(|title| quote!(.with_title(#title)));
    let hints = about.hints.iter().map(|(key, value, span)| {
        let method = Ident::new(key, *span);
        quote!(.#method(#value))
    });
    let icons = about.icons.iter().map(|icon| {
        let src = &icon.src;
        let mime = icon
            .mime_type
            .as_ref()
            .map(|mime| quote!(.with_mime_type(#mime)));
        let sizes = icon.sizes.iter().map(|size| quote!(.with_size(#size)));
        let theme = icon.theme.as_ref().map(|theme| {
            let variant = Ident::new(
                if theme.value() == "dark" {
                    "Dark"
                } else {
                    "Light"
                },
                theme.span(),
            );
            quote!(.with_theme(#krate::__private::IconTheme::#variant))
        });
        quote!(.with_icon(#krate::__private::Icon::new(#src) #mime #(#sizes)* #theme))
    });
    let examples = about
        .examples
        .iter()
        .map(|example| quote!(.with_example(#krate::__private::example(#example))));
    let timeout = about
        .timeout_millis
        .map(|(millis, _)| quote!(.with_timeout(::core::time::Duration::from_millis(#millis))));
    let defer = about
        .defer_loading
        .map(|_| quote!(.with_defer_loading(true)));
    let callers = about.callers.as_ref().map(|callers| {
        let variant = Ident::new(
            match callers.value().as_str() {
                "direct" => "Direct",
                "programs" => "Programs",
                _ => "Both",
            },
            callers.span(),
        );
        quote!(.with_callers(#krate::__private::Callers::#variant))
    });
    let task = about.task.as_ref().map(|task| {
        let variant = Ident::new(
            match task.value().as_str() {
                "optional" => "Optional",
                "required" => "Required",
                _ => "Never",
            },
            task.span(),
        );
        quote!(.with_task(#krate::__private::TaskSupport::#variant))
    });
    let scopes = about.scopes.iter().map(|scope| quote!(.with_scope(#scope)));
    let resource = about
        .resource
        .as_ref()
        .map(|template| quote!(.with_resource(#krate::__private::resource(#template))));
    quote!(#title #(#hints)* #(#icons)* #(#examples)* #timeout #defer #callers #task #(#scopes)* #resource)
}

/// `ToolDef::builder(name).description(text)`.
fn head_steps(tool: &ToolFn, krate: &Path) -> TokenStream {
    let name = tool.tool_name();
    let description = tool.description();
    quote! {
        #krate::__private::ToolDef::builder(#name).description(#description)
    }
}

/// `.args::<A>().returns::<T>()`: each type named in its own step, spanned on the user's
/// token, so a missing trait is reported once and on that type. A tool with `render` or
/// `presentation_meta` then asks whether `T` is `Verbatim` (method lookup finds the answer: no
/// bound, so any `T` compiles), and if it is, they borrow the value the body returned.
fn signature_steps(tool: &ToolFn, args_ident: &Ident, krate: &Path) -> TokenStream {
    let args_step = match tool.args_form() {
        ArgsForm::Whole(param) => {
            let ty = &param.ty;
            quote_spanned!(ty.span()=> .args::<#ty>())
        }
        ArgsForm::List(_) => quote!(.args::<#args_ident>()),
    };
    let returns_step = match &tool.output {
        Output::Unit => quote!(.returns::<()>()),
        Output::Plain(ty) | Output::Result { ok: Some(ty), .. } => {
            quote_spanned!(ty.span()=> .returns::<#ty>())
        }
        Output::Result { ty, ok: None, .. } => quote_spanned!(ty.span()=> .returns::<#ty>()),
    };
    let projected = tool.attr.render.is_some() || tool.attr.presentation_meta.is_some();
    let keep_step = projected.then(|| {
        quote! {
            .keep_if_verbatim(|kind| {
                use #krate::__private::{KeepsVerbatim as _, ReadsBack as _};
                (&kind).keep()
            })
        }
    });
    quote!(#args_step #returns_step #keep_step)
}

/// The body the builder takes: `|args, cx, finish| tool_body_must_be_send(async move { … })`
/// (`sync_body(move || { … })` for a synchronous function), which takes the host state out of
/// the context, calls the user's function, converts its error and snapshots its value. The
/// future is boxed here, and the value finished inside it, so the generic code of the runtime
/// never names the future: an edit of one tool's body recompiles that tool's code, not the
/// runtime's instantiations for every tool. A synchronous function runs in a closure that
/// `sync_body` calls when polled: no future of its own.
fn handler_closure(tool: &ToolFn, krate: &Path, callee: &Callee) -> TokenStream {
    let states = tool.states().enumerate().map(|(index, inner)| {
        let binding = format_ident!("__toolprism_state_{index}");
        quote! {
            let #binding = match #krate::__private::state::<#inner>(&__toolprism_cx) {
                ::core::result::Result::Ok(__toolprism_state) => __toolprism_state,
                ::core::result::Result::Err(__toolprism_error) => {
                    return #krate::__private::BodyOutput::failed(__toolprism_error);
                }
            };
        }
    });
    let result = result_expr(tool, krate, &call_expr(tool, callee));
    // Spanned on the function: an `async` body whose future is not `Send` is reported there,
    // "required by a bound in `tool_body_must_be_send`" (the function named for what it checks).
    let span = tool.sig.ident.span();
    let krate = &respanned(krate, span);
    let body = if tool.sig.asyncness.is_some() {
        quote_spanned! {span=>
            #krate::__private::tool_body_must_be_send(async move { #(#states)* #result })
        }
    } else {
        quote_spanned! {span=>
            #krate::__private::sync_body(move || { #(#states)* #result })
        }
    };
    let params = quote_spanned! {span=>
        __toolprism_args,
        __toolprism_cx: #krate::__private::ToolContext,
        __toolprism_finish
    };
    match callee {
        Callee::Free => quote_spanned! {span=> |#params| { #body } },
        Callee::Method { .. } => quote_spanned! {span=> {
            let __toolprism_shared = ::core::clone::Clone::clone(&self);
            move |#params| {
                let __toolprism_self = ::core::clone::Clone::clone(&__toolprism_shared);
                #body
            }
        }},
    }
}

/// The call of the user's function with its arguments, awaited if it is `async`.
fn call_expr(tool: &ToolFn, callee: &Callee) -> TokenStream {
    let mut state_index = 0;
    let call_args: Vec<TokenStream> = tool
        .inputs
        .iter()
        .map(|input| match input {
            Input::Context(_) => quote!(&__toolprism_cx),
            Input::State { .. } => {
                let binding = format_ident!("__toolprism_state_{state_index}");
                state_index += 1;
                quote!(#binding)
            }
            Input::Param(param) => {
                if let (ArgsForm::List(_), Some(ident)) = (tool.args_form(), param.ident()) {
                    quote!(__toolprism_args.#ident)
                } else {
                    quote!(__toolprism_args)
                }
            }
        })
        .collect();
    let ident = &tool.sig.ident;
    let call = match callee {
        Callee::Free => quote!(#ident(#(#call_args),*)),
        Callee::Method { has_receiver: true } => {
            quote!(Self::#ident(&*__toolprism_self, #(#call_args),*))
        }
        Callee::Method {
            has_receiver: false,
        } => quote!(Self::#ident(#(#call_args),*)),
    };
    if tool.sig.asyncness.is_some() {
        quote!(#call.await)
    } else {
        call
    }
}

/// What the body produced: its value finished (snapshotted), or its error converted (spanned
/// on the user's error type, so a missing conversion is reported there).
fn result_expr(tool: &ToolFn, krate: &Path, call: &TokenStream) -> TokenStream {
    match &tool.output {
        Output::Result { ty, err, .. } => {
            let span = err.as_ref().unwrap_or(ty).span();
            let krate = respanned(krate, span);
            let convert =
                quote_spanned!(span=> #krate::__private::into_tool_error(__toolprism_error));
            quote! {
                match #call {
                    ::core::result::Result::Ok(__toolprism_value) => {
                        __toolprism_finish.value(__toolprism_value, &__toolprism_cx)
                    }
                    ::core::result::Result::Err(__toolprism_error) => {
                        #krate::__private::BodyOutput::failed(#convert)
                    }
                }
            }
        }
        Output::Unit | Output::Plain(_) => {
            quote!(__toolprism_finish.value(#call, &__toolprism_cx))
        }
    }
}

/// `.render(path)` and `.presentation_meta(path)`, each spanned on the user's path.
fn projection_steps(tool: &ToolFn) -> TokenStream {
    let render = tool
        .attr
        .render
        .as_ref()
        .map(|path| quote_spanned!(path.span()=> .render(#path)));
    let meta = tool
        .attr
        .presentation_meta
        .as_ref()
        .map(|path| quote_spanned!(path.span()=> .presentation_meta(#path)));
    quote!(#render #meta)
}

/// A compile-time check that the runtime accepts the name the macro accepted: the two
/// implementations of the name rule cannot drift apart.
pub(crate) fn name_pin(tool: &ToolFn, krate: &Path) -> TokenStream {
    let name = tool.tool_name();
    let allowed = allowed();
    quote! {
        #allowed
        const _: () = #krate::__private::assert_tool_name(#name);
    }
}

/// The struct generated for a parameter list; nothing for a whole args type.
pub(crate) fn args_struct(tool: &ToolFn, args_ident: &Ident, krate: &Path) -> TokenStream {
    let ArgsForm::List(params) = tool.args_form() else {
        return TokenStream::new();
    };
    let vis = &tool.vis;
    let allowed = allowed();
    let doc = format!(
        "The arguments of the `{}` tool, one field per parameter.",
        tool.tool_name()
    );
    let parameters = tool.sig.paren_token.span.join();
    let shared = shared_reading(&params, parameters, args_ident, &doc, krate);
    let read_by_shared_code = shared.is_some();
    // A field's doc is its description. A struct read by the shared code describes itself
    // from the table, so a parameter without a description gets a doc that says what it is
    // (a crate that denies `missing_docs` takes the struct); a derived struct's docs are its
    // schema's descriptions, so there it gets none.
    let fields = params.iter().filter_map(|param| {
        let ident = param.ident()?;
        let ty = &param.ty;
        let forwarded = &param.forwarded;
        let doc = match &param.arg.description {
            Some(text) => Some(quote!(#[doc = #text])),
            None if read_by_shared_code => {
                let text = format!("The `{}` parameter.", unraw(ident));
                Some(quote!(#[doc = #text]))
            }
            None => None,
        };
        Some(quote!(#doc #(#forwarded)* #vis #ident: #ty))
    });
    if let Some(read) = shared {
        return quote! {
            #allowed
            #[doc = #doc]
            #vis struct #args_ident {
                #(#fields,)*
            }

            #read
        };
    }
    let krate_text = quote!(#krate).to_string().replace(' ', "");
    let serde_path = format!("{krate_text}::__private::serde");
    let schemars_path = format!("{krate_text}::__private::schemars");
    quote! {
        #allowed
        #[doc = #doc]
        #[derive(#krate::__private::serde::Deserialize, #krate::__private::schemars::JsonSchema)]
        #[serde(crate = #serde_path, deny_unknown_fields)]
        #[schemars(crate = #schemars_path)]
        #vis struct #args_ident {
            #(#fields,)*
        }
    }
}

/// The crate's path with every token at `span`: a call through it is then reported where the
/// rest of the call is.
fn respanned(krate: &Path, span: Span) -> TokenStream {
    quote!(#krate)
        .into_iter()
        .map(|mut token| {
            token.set_span(span);
            token
        })
        .collect()
}

/// The most parameters a list read by the runtime's shared code may have (the tuples
/// `FieldTypes` is implemented for).
pub(crate) const SHARED_FIELDS_MAX: usize = 12;

/// `Deserialize` and `JsonSchema` for the struct of a parameter list, by the runtime's shared
/// code over the tuple of the parameter types and a table of their names and descriptions:
/// what `#[derive(Deserialize, JsonSchema)]` with `#[serde(deny_unknown_fields)]` does, in a
/// few lines that rustc does not check again when an edit above moves them. `None` for a list
/// the shared code does not read: one with `#[serde]` or `#[schemars]` on a parameter, or
/// longer than the tuples it takes. The calls that need every parameter's type to be
/// `Deserialize` and `JsonSchema` are spanned on the parameter list, so a type that is not is
/// reported there.
pub(crate) fn shared_reading(
    params: &[&Param],
    parameters: Span,
    args_ident: &Ident,
    doc: &str,
    krate: &Path,
) -> Option<TokenStream> {
    if params.len() > SHARED_FIELDS_MAX || params.iter().any(|param| !param.forwarded.is_empty()) {
        return None;
    }
    let idents = params
        .iter()
        .map(|param| param.ident())
        .collect::<Option<Vec<_>>>()?;
    let types = params.iter().map(|param| &param.ty);
    let types = quote_spanned!(parameters=> (#(#types,)*));
    let at_parameters = respanned(krate, parameters);
    let read =
        quote_spanned!(parameters=> #at_parameters::__private::deserialize_params::<__D, #types>);
    let describe = quote_spanned!(parameters=> #at_parameters::__private::params_schema::<#types>);
    let names = idents.iter().map(|ident| unraw(ident));
    let names = quote!(&[#(#names),*]);
    let descriptions = params.iter().map(|param| {
        param
            .arg
            .description
            .as_ref()
            .map(syn::LitStr::value)
            .unwrap_or_default()
    });
    let name = args_ident.to_string();
    let allowed = allowed();
    Some(quote! {
        #allowed
        #[automatically_derived]
        impl<'de> #krate::__private::serde::Deserialize<'de> for #args_ident {
            fn deserialize<__D: #krate::__private::serde::Deserializer<'de>>(
                __toolprism_deserializer: __D,
            ) -> ::core::result::Result<Self, __D::Error> {
                let (#(#idents,)*) = #read(
                    __toolprism_deserializer,
                    #name,
                    #names,
                )?;
                ::core::result::Result::Ok(Self { #(#idents),* })
            }
        }

        #allowed
        #[automatically_derived]
        impl #krate::__private::schemars::JsonSchema for #args_ident {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed(#name)
            }

            fn schema_id() -> ::std::borrow::Cow<'static, str> {
                #krate::__private::schema_id::<Self>()
            }

            fn json_schema(
                __toolprism_generator: &mut #krate::__private::schemars::SchemaGenerator,
            ) -> #krate::__private::schemars::Schema {
                #describe(
                    __toolprism_generator,
                    #doc,
                    #names,
                    &[#(#descriptions),*],
                )
            }
        }
    })
}

/// `::toolprism`, or the `crate = "..."` override.
pub(crate) fn crate_path(krate: Option<&Path>) -> Path {
    krate.cloned().unwrap_or_else(|| {
        let mut path = Path::from(Ident::new("toolprism", Span::call_site()));
        path.leading_colon = Some(syn::token::PathSep::default());
        path
    })
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::tool;

    #[test]
    fn the_crate_override_is_the_only_path_into_the_runtime() {
        // A plain list is read by the runtime's shared code; one with `#[serde]` on a
        // parameter is derived, and the derives are told the path too.
        let shared = tool(
            quote!(crate = "my_tp"),
            quote! {
                /// Adds.
                fn add(a: i64, b: i64) -> i64 { a + b }
            },
        )
        .to_string();
        let derived = tool(
            quote!(crate = "my_tp"),
            quote! {
                /// Adds.
                fn add(a: i64, #[serde(default)] b: i64) -> i64 { a + b }
            },
        )
        .to_string();
        for expanded in [&shared, &derived] {
            assert!(
                expanded.contains("my_tp :: __private :: ToolDef"),
                "{expanded}"
            );
            assert!(!expanded.contains(":: toolprism ::"), "{expanded}");
            assert!(!expanded.contains("\"::toolprism"), "{expanded}");
        }
        assert!(
            shared.contains("my_tp :: __private :: deserialize_params"),
            "{shared}"
        );
        assert!(!shared.contains("derive (my_tp"), "{shared}");
        assert!(derived.contains("\"my_tp::__private::serde\""), "{derived}");
        assert!(!derived.contains("deserialize_params"), "{derived}");
    }

    #[test]
    fn errors_keep_the_function_and_add_a_stand_in() {
        let expanded = tool(
            quote!(bogus = 1),
            quote! {
                /// Adds.
                fn add(#[arg] a: i64) -> i64 { a }
            },
        )
        .to_string();
        assert!(expanded.contains("compile_error"), "{expanded}");
        assert!(expanded.contains("fn add (a : i64)"), "{expanded}");
        assert!(expanded.contains("struct Add ;"), "{expanded}");
        assert!(
            expanded.contains("use __toolprism_tool_add :: *"),
            "{expanded}"
        );
        assert!(
            !expanded.contains("# [arg]"),
            "helper attributes are stripped: {expanded}"
        );
    }
}
