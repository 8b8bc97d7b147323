//! Route maps: which operations become tools, chosen by method, path pattern or tag, and
//! what they are called. The first map that matches an operation decides; an operation no
//! map matches becomes a tool.

use std::fmt;

use regex::Regex;

/// An HTTP method an operation can have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Method {
    Get,
    Put,
    Post,
    Delete,
    Options,
    Head,
    Patch,
    Trace,
}

impl Method {
    /// Every method, in the order a path item lists them.
    pub const ALL: [Method; 8] = [
        Self::Get,
        Self::Put,
        Self::Post,
        Self::Delete,
        Self::Options,
        Self::Head,
        Self::Patch,
        Self::Trace,
    ];

    /// The key a path item holds the operation under (`get`, `post`, …).
    pub fn key(self) -> &'static str {
        match self {
            Self::Get => "get",
            Self::Put => "put",
            Self::Post => "post",
            Self::Delete => "delete",
            Self::Options => "options",
            Self::Head => "head",
            Self::Patch => "patch",
            Self::Trace => "trace",
        }
    }

    pub(crate) fn http(self) -> reqwest::Method {
        match self {
            Self::Get => reqwest::Method::GET,
            Self::Put => reqwest::Method::PUT,
            Self::Post => reqwest::Method::POST,
            Self::Delete => reqwest::Method::DELETE,
            Self::Options => reqwest::Method::OPTIONS,
            Self::Head => reqwest::Method::HEAD,
            Self::Patch => reqwest::Method::PATCH,
            Self::Trace => reqwest::Method::TRACE,
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.key().to_ascii_uppercase())
    }
}

/// What a route map does with the operations it matches.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Action {
    Include,
    Exclude,
}

/// Matches operations by method, path pattern and tag (all that are given must match), and
/// includes or excludes them.
///
/// ```
/// use toolprism_openapi::{Method, RouteMap};
///
/// // Only reads, and none of the admin routes.
/// let maps = [
///     RouteMap::new().path(r"^/admin/").unwrap().exclude(),
///     RouteMap::new().methods([Method::Get, Method::Head]).include(),
///     RouteMap::new().exclude(),
/// ];
/// # let _ = maps;
/// ```
#[derive(Clone, Debug)]
pub struct RouteMap {
    methods: Vec<Method>,
    path: Option<Regex>,
    tags: Vec<String>,
    action: Action,
    rename: Option<String>,
}

impl Default for RouteMap {
    fn default() -> Self {
        Self::new()
    }
}

impl RouteMap {
    /// A map matching every operation, including it.
    pub fn new() -> Self {
        Self {
            methods: Vec::new(),
            path: None,
            tags: Vec::new(),
            action: Action::Include,
            rename: None,
        }
    }

    /// Matches only these methods.
    #[must_use]
    pub fn methods(mut self, methods: impl IntoIterator<Item = Method>) -> Self {
        self.methods = methods.into_iter().collect();
        self
    }

    /// Matches only paths (as the document writes them, `/items/{id}`) this regular
    /// expression finds a match in.
    pub fn path(mut self, pattern: &str) -> Result<Self, regex::Error> {
        self.path = Some(Regex::new(pattern)?);
        Ok(self)
    }

    /// Matches only operations carrying one of these tags.
    #[must_use]
    pub fn tags(mut self, tags: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.tags = tags.into_iter().map(Into::into).collect();
        self
    }

    /// The operations matched become tools.
    #[must_use]
    pub fn include(mut self) -> Self {
        self.action = Action::Include;
        self
    }

    /// The operations matched do not.
    #[must_use]
    pub fn exclude(mut self) -> Self {
        self.action = Action::Exclude;
        self
    }

    /// The operation matched becomes a tool of this name (normalized and made unique like any
    /// other); meant for a map matching one operation.
    #[must_use]
    pub fn rename(mut self, name: impl Into<String>) -> Self {
        self.action = Action::Include;
        self.rename = Some(name.into());
        self
    }

    fn matches(&self, method: Method, path: &str, tags: &[String]) -> bool {
        (self.methods.is_empty() || self.methods.contains(&method))
            && self
                .path
                .as_ref()
                .is_none_or(|pattern| pattern.is_match(path))
            && (self.tags.is_empty() || self.tags.iter().any(|tag| tags.contains(tag)))
    }
}

/// What the maps decide for one operation.
pub(crate) enum Route {
    /// A tool, under the map's name if it gives one.
    Include(Option<String>),
    /// Left out by the map at this index.
    Exclude(usize),
}

pub(crate) fn route(maps: &[RouteMap], method: Method, path: &str, tags: &[String]) -> Route {
    match maps
        .iter()
        .enumerate()
        .find(|(_, map)| map.matches(method, path, tags))
    {
        Some((at, map)) if map.action == Action::Exclude => Route::Exclude(at),
        Some((_, map)) => Route::Include(map.rename.clone()),
        None => Route::Include(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_matching_map_decides() {
        let maps = [
            RouteMap::new().path("^/admin").unwrap().exclude(),
            RouteMap::new().tags(["pets"]).rename("pets"),
            RouteMap::new().methods([Method::Delete]).exclude(),
        ];
        assert!(matches!(
            route(&maps, Method::Get, "/admin/users", &[]),
            Route::Exclude(0)
        ));
        assert!(matches!(
            route(&maps, Method::Delete, "/pets/1", &["pets".to_owned()]),
            Route::Include(Some(name)) if name == "pets"
        ));
        assert!(matches!(
            route(&maps, Method::Delete, "/users/1", &[]),
            Route::Exclude(2)
        ));
        assert!(matches!(
            route(&maps, Method::Get, "/users", &[]),
            Route::Include(None)
        ));
    }
}
