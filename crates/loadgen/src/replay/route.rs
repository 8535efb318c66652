//! Route templates: how recorded paths are grouped into endpoints. A
//! segment that is a number, a UUID or a long hex string is an id and
//! becomes `{id}` (`/orders/42` and `/orders/43` are one endpoint); the
//! user's own templates (`--route /users/{name}/posts`) win over that rule.
//! The query string is no part of a route.

use super::error::ReplayError;

/// The user's templates, tried in order before the id rule.
#[derive(Debug, Clone, Default)]
pub struct Routes {
    templates: Vec<Vec<String>>,
}

impl Routes {
    /// Read `--route` templates: each an absolute path.
    pub fn new(templates: &[String]) -> Result<Routes, ReplayError> {
        let mut out = Vec::new();
        for t in templates {
            if !t.starts_with('/') || t.contains('?') {
                return Err(ReplayError::BadRoute {
                    template: t.clone(),
                    why: "a template is a path starting with / and without a query".into(),
                });
            }
            out.push(segments(t).map(str::to_string).collect());
        }
        Ok(Routes { templates: out })
    }

    /// The route template of `path` (a query is dropped).
    pub fn template(&self, path: &str) -> String {
        let path = path.split(['?', '#']).next().unwrap_or_default();
        let segs: Vec<&str> = segments(path).collect();
        if let Some(t) = self.templates.iter().find(|t| matches(t, &segs)) {
            return join(t.iter().map(String::as_str), path.ends_with('/'));
        }
        let generic = segs.iter().map(|s| if is_id(s) { "{id}" } else { s });
        join(generic, path.ends_with('/') && !segs.is_empty())
    }
}

fn segments(path: &str) -> impl Iterator<Item = &str> {
    path.split('/').filter(|s| !s.is_empty())
}

fn join<'a>(segs: impl Iterator<Item = &'a str>, slash: bool) -> String {
    let mut s = String::new();
    for seg in segs {
        s.push('/');
        s.push_str(seg);
    }
    if s.is_empty() || slash {
        s.push('/');
    }
    s
}

/// A template matches a path of as many segments whose literal segments
/// are equal; a `{name}` segment matches any one.
fn matches(template: &[String], segs: &[&str]) -> bool {
    template.len() == segs.len()
        && template
            .iter()
            .zip(segs)
            .all(|(t, s)| (t.starts_with('{') && t.ends_with('}')) || t == s)
}

/// A number, a UUID, or 8+ hex digits with at least one digit (a hash or
/// an object id; `deadbeef` alone, all letters, reads as a word).
pub fn is_id(seg: &str) -> bool {
    let b = seg.as_bytes();
    if !b.is_empty() && b.iter().all(u8::is_ascii_digit) {
        return true;
    }
    if is_uuid(b) {
        return true;
    }
    b.len() >= 8 && b.iter().all(u8::is_ascii_hexdigit) && b.iter().any(u8::is_ascii_digit)
}

fn is_uuid(b: &[u8]) -> bool {
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_uuid_and_hex_segments_become_id() {
        let r = Routes::default();
        assert_eq!(r.template("/api/orders/42?x=1"), "/api/orders/{id}");
        assert_eq!(
            r.template("/u/3f2504e0-4f89-11d3-9a0c-0305e82c3301/posts"),
            "/u/{id}/posts"
        );
        assert_eq!(r.template("/blob/5f3a9c0e11aa"), "/blob/{id}");
        assert_eq!(r.template("/feed/deadbeef"), "/feed/deadbeef");
        assert_eq!(r.template("/v2/items"), "/v2/items");
        assert_eq!(r.template("/"), "/");
        assert_eq!(r.template(""), "/");
        assert_eq!(r.template("/dir/"), "/dir/");
    }

    #[test]
    fn user_templates_win_over_the_id_rule() {
        let r = Routes::new(&["/users/{name}/posts".into()]).unwrap();
        assert_eq!(r.template("/users/alice/posts"), "/users/{name}/posts");
        assert_eq!(r.template("/users/42/posts"), "/users/{name}/posts");
        assert_eq!(r.template("/users/42"), "/users/{id}");
        let e = Routes::new(&["users/{id}".into()]).unwrap_err().to_string();
        assert!(
            e.starts_with("--route 'users/{id}'") && !e.contains('\n'),
            "{e}"
        );
    }
}
