//! `#[verbatim]`: serde's `Serialize` and `Deserialize` for a type whose JSON is all of it, and
//! the `Verbatim` impl that says so. Every serde attribute that skips, converts or reshapes a
//! field is refused, and every field's type must be `Verbatim` itself.

use proc_macro2::{TokenStream, TokenTree};
use quote::{ToTokens, quote, quote_spanned};
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Attribute, Data, DeriveInput, Fields, GenericParam, Ident, Path, Type};

use crate::attr::{parse_crate_only, skip_value};
use crate::errors::Errors;
use crate::expand::crate_path;

/// Where a serde attribute is written, and which of its options keep a type's JSON all of it.
#[derive(Clone, Copy)]
enum Place {
    Container,
    Variant,
    Field,
}

impl Place {
    fn allowed(self) -> &'static [&'static str] {
        match self {
            // `default` only fills fields missing from the JSON, and none is: every field is
            // serialized.
            Self::Container => &[
                "rename",
                "rename_all",
                "rename_all_fields",
                "deny_unknown_fields",
                "tag",
                "content",
                "bound",
                "expecting",
                "default",
            ],
            Self::Variant => &["rename", "alias", "rename_all", "bound"],
            Self::Field => &["rename", "alias", "default", "bound"],
        }
    }
}

/// Why an option is refused, for the error.
fn why_refused(option: &str) -> &'static str {
    match option {
        "skip" | "skip_serializing" | "skip_serializing_if" | "skip_deserializing" => {
            "it leaves a field out of the JSON or out of reading it back"
        }
        "with" | "serialize_with" | "deserialize_with" | "getter" | "from" | "try_from"
        | "into" | "remote" => "it converts through code that could serialize less than the value",
        "untagged" => "an untagged enum can read its JSON back as another variant",
        "flatten" => "a flattened field shares its object with others and can read back otherwise",
        "other" => "a catch-all variant reads other variants' JSON back as itself",
        "transparent" => "write the newtype as a tuple struct instead: it serializes the same",
        "crate" => {
            "`#[verbatim]` sets the serde path itself (`#[verbatim(crate = \"...\")]` moves it)"
        }
        "borrow" => "a tool's value owns its data",
        _ => "it is not one `#[verbatim]` knows to keep the JSON all of the value",
    }
}

/// Expands `#[verbatim]` on a struct or an enum.
pub(crate) fn verbatim(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let krate = crate_path(parse_crate_only(attr, &mut errors).as_ref());
    let input: DeriveInput = match syn::parse2(item) {
        Ok(input) => input,
        Err(error) => return error.to_compile_error(),
    };

    check_attributes(&input.attrs, Place::Container, &mut errors);
    check_generics(&input, &mut errors);
    let (field_types, not_null) = match &input.data {
        Data::Struct(data) => {
            check_fields(&data.fields, &mut errors);
            let not_null = match &data.fields {
                Fields::Unit => NotNull::Never,
                // A newtype serializes as what it wraps.
                Fields::Unnamed(fields) if fields.unnamed.len() == 1 => {
                    NotNull::If(Box::new(fields.unnamed[0].ty.clone()))
                }
                _ => NotNull::Always,
            };
            (field_types(&data.fields), not_null)
        }
        Data::Enum(data) => {
            let mut types = Vec::new();
            for variant in &data.variants {
                check_attributes(&variant.attrs, Place::Variant, &mut errors);
                check_fields(&variant.fields, &mut errors);
                types.extend(field_types(&variant.fields));
            }
            // A unit variant is its name, a string; every other is an object.
            (types, NotNull::Always)
        }
        Data::Union(data) => {
            errors.push_spanned(
                data.union_token,
                "`#[verbatim]` takes a struct or an enum: serde derives nothing for a union",
            );
            (Vec::new(), NotNull::Never)
        }
    };

    if !errors.is_empty() {
        // The type alone, without its serde attributes: the reasons above are all there is to
        // read, not serde's or the trait solver's echoes of them.
        let mut input = input;
        strip_serde(&mut input);
        let errors = errors.into_compile_errors();
        return quote!(#input #errors);
    }
    let impls = impls(&input, &krate, &field_types, not_null);
    let serde_path = path_text(&krate) + "::__private::serde";
    // The derive comes before the item's own attributes, so that the `#[serde]` helpers among
    // them are its own.
    quote! {
        #[derive(#krate::__private::serde::Serialize, #krate::__private::serde::Deserialize)]
        #[serde(crate = #serde_path)]
        #input
        #impls
    }
}

/// Removes the serde attributes of a type refused, which nothing would read.
fn strip_serde(input: &mut DeriveInput) {
    let keep = |attr: &Attribute| {
        let serde = attr.path().is_ident("serde")
            || (attr.path().is_ident("cfg_attr") && mentions(attr, "serde"));
        !serde
    };
    input.attrs.retain(keep);
    let fields: Vec<&mut Fields> = match &mut input.data {
        Data::Struct(data) => vec![&mut data.fields],
        Data::Enum(data) => data
            .variants
            .iter_mut()
            .map(|variant| {
                variant.attrs.retain(keep);
                &mut variant.fields
            })
            .collect(),
        Data::Union(_) => Vec::new(),
    };
    for fields in fields {
        for field in fields.iter_mut() {
            field.attrs.retain(keep);
        }
    }
}

/// Whether a type's JSON can be `null`.
enum NotNull {
    Always,
    Never,
    /// When this type's can.
    If(Box<Type>),
}

/// `impl Verbatim` (and `impl NotNull` unless the JSON can be `null`), bounded by every type
/// parameter and every field type that names one being `Verbatim`. A field type that names no
/// parameter is asserted apart, on its own tokens: as a bound it would be a trivial one, which
/// the compiler reports on the attribute instead.
fn impls(
    input: &DeriveInput,
    krate: &Path,
    field_types: &[Type],
    not_null: NotNull,
) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, type_generics, where_clause) = input.generics.split_for_impl();
    let existing = where_clause.map(|clause| &clause.predicates);
    let params: Vec<&Ident> = input
        .generics
        .params
        .iter()
        .filter_map(|param| match param {
            GenericParam::Type(param) => Some(&param.ident),
            _ => None,
        })
        .collect();
    let generic = |ty: &Type| names_any(ty.to_token_stream(), &params);
    let verbatim = quote!(#krate::value::Verbatim);
    let not_null_trait = quote!(#krate::value::NotNull);
    let bounds: Vec<TokenStream> = params
        .iter()
        .map(|param| quote!(#param: #verbatim))
        .chain(
            field_types
                .iter()
                .filter(|ty| generic(ty))
                .map(|ty| quote_spanned!(ty.span()=> #ty: #verbatim)),
        )
        .collect();
    let asserted: Vec<TokenStream> = field_types
        .iter()
        .filter(|ty| !generic(ty))
        .map(|ty| quote_spanned!(ty.span()=> field_is_verbatim::<#ty>();))
        .collect();
    let verbatim_impl = quote! {
        impl #impl_generics #verbatim for #ident #type_generics
        where #existing #(#bounds,)* {}
    };
    // What `NotNull` needs beyond `Verbatim`'s bounds; `None`: the type can be `null`.
    let not_null_bound = match &not_null {
        NotNull::Never => None,
        NotNull::Always => Some(TokenStream::new()),
        // Higher-ranked, so that a newtype of a type that can be `null` is simply not
        // `NotNull`: a bound naming no parameter would be a trivial one, an error when false.
        NotNull::If(ty) => Some(quote_spanned!(ty.span()=> for<'__verbatim> #ty: #not_null_trait)),
    };
    let not_null_impl = not_null_bound.map(|bound| {
        quote! {
            impl #impl_generics #not_null_trait for #ident #type_generics
            where #existing #(#bounds,)* #bound {}
        }
    });
    let assertions = (!asserted.is_empty()).then(|| {
        quote! {
            // Never called: it only has to compile.
            #[allow(dead_code)]
            const _: () = {
                fn field_is_verbatim<T: #verbatim>() {}
                fn fields() { #(#asserted)* }
            };
        }
    });
    quote!(#verbatim_impl #not_null_impl #assertions)
}

/// Whether `tokens` name any of `params`.
fn names_any(tokens: TokenStream, params: &[&Ident]) -> bool {
    tokens.into_iter().any(|token| match token {
        TokenTree::Ident(ident) => params.iter().any(|param| **param == ident),
        TokenTree::Group(group) => names_any(group.stream(), params),
        _ => false,
    })
}

fn field_types(fields: &Fields) -> Vec<Type> {
    fields.iter().map(|field| field.ty.clone()).collect()
}

fn check_fields(fields: &Fields, errors: &mut Errors) {
    for field in fields {
        check_attributes(&field.attrs, Place::Field, errors);
    }
}

/// A value type owns its data: no lifetimes (a tool's value is `DeserializeOwned`).
fn check_generics(input: &DeriveInput, errors: &mut Errors) {
    for param in &input.generics.params {
        if let GenericParam::Lifetime(lifetime) = param {
            errors.push_spanned(
                lifetime,
                "a `#[verbatim]` type owns its data: it cannot borrow for a lifetime",
            );
        }
    }
}

/// Refuses the serde options that would make the JSON less than the value, a serde attribute
/// behind `cfg_attr` (which cannot be read here), and a derive of `Serialize` or `Deserialize`
/// beside this one.
fn check_attributes(attrs: &[Attribute], place: Place, errors: &mut Errors) {
    for attr in attrs {
        if attr.path().is_ident("serde") {
            let parsed = attr.parse_nested_meta(|meta| check_option(&meta, place, errors));
            if let Err(error) = parsed {
                errors.push(error);
            }
        } else if attr.path().is_ident("cfg_attr") && mentions(attr, "serde") {
            errors.push_spanned(
                attr,
                "`#[verbatim]` cannot check a `#[serde]` attribute behind `cfg_attr`: write it plainly",
            );
        } else if attr.path().is_ident("derive")
            && (mentions(attr, "Serialize") || mentions(attr, "Deserialize"))
        {
            errors.push_spanned(
                attr,
                "`#[verbatim]` derives `Serialize` and `Deserialize` itself: remove them from this derive",
            );
        }
    }
}

fn check_option(meta: &ParseNestedMeta<'_>, place: Place, errors: &mut Errors) -> syn::Result<()> {
    let option = meta
        .path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_default();
    if !place.allowed().contains(&option.as_str()) {
        errors.push(meta.error(format!(
            "`#[serde({option})]` is not allowed on a `#[verbatim]` type: {}",
            why_refused(&option)
        )));
        return skip_value(meta);
    }
    // `rename(serialize = "a", deserialize = "b")` writes one name and reads another.
    if ["rename", "rename_all", "rename_all_fields"].contains(&option.as_str())
        && meta.input.peek(syn::token::Paren)
    {
        errors.push(meta.error(format!(
            "`#[serde({option}(...))]` is not allowed on a `#[verbatim]` type: a name written one way and read another does not read back; give one name"
        )));
    }
    skip_value(meta)
}

/// Whether an identifier appears anywhere in an attribute's tokens.
fn mentions(attr: &Attribute, name: &str) -> bool {
    fn walk(tokens: TokenStream, name: &str) -> bool {
        tokens.into_iter().any(|token| match token {
            TokenTree::Ident(ident) => ident == name,
            TokenTree::Group(group) => walk(group.stream(), name),
            _ => false,
        })
    }
    walk(attr.meta.to_token_stream(), name)
}

/// A path as serde's `crate = "..."` takes it.
fn path_text(path: &Path) -> String {
    path.to_token_stream().to_string().replace(' ', "")
}
