//! The shapes of the names the host takes: space and app slugs, the way a
//! call names an app (`runs` or `jeff/runs`), and the paths of an app's files.

use crate::HostError;

/// The page an app's address opens (and a folder's, under it).
pub(crate) const INDEX_PAGE: &str = "index.html";

/// The longest file path an app may hold.
const MAX_PATH: usize = 200;

/// The most characters a slug (of a space, an app) or a handle may have.
pub const SLUG_CHARS: usize = 40;

/// A space or app slug, like a handle: `[a-z][a-z0-9-]{0,39}`.
pub(crate) fn is_slug(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= SLUG_CHARS
        && b.first().is_some_and(u8::is_ascii_lowercase)
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// The sentence for a slug that is not one.
pub(crate) fn bad_slug(what: &str, slug: &str) -> HostError {
    HostError::BadInput(format!(
        "{} is not a {what} slug — use a-z, 0-9 and -, starting with a letter, at most 40",
        shown(slug)
    ))
}

/// How a call names an app: a slug alone, or `space/slug`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AppName<'a> {
    Slug(&'a str),
    Full { space: &'a str, slug: &'a str },
}

impl<'a> AppName<'a> {
    /// Reads `runs` or `jeff/runs`.
    pub(crate) fn parse(name: &'a str) -> Result<AppName<'a>, HostError> {
        match name.split_once('/') {
            None if is_slug(name) => Ok(AppName::Slug(name)),
            Some((space, slug)) if is_slug(space) && is_slug(slug) => {
                Ok(AppName::Full { space, slug })
            }
            _ => Err(not_an_app(name)),
        }
    }
}

/// The sentence for a name that is not an app's: that a slug is lower
/// case, where the name in lower case would be one.
fn not_an_app(name: &str) -> HostError {
    let lower = name.to_lowercase();
    let is_app = match lower.split_once('/') {
        None => is_slug(&lower),
        Some((space, slug)) => is_slug(space) && is_slug(slug),
    };
    let how = if is_app {
        format!("a slug is lower case: {}", shown(&lower))
    } else {
        "name one by its slug, like runs, or as space/app, like jeff/runs".to_string()
    };
    HostError::BadInput(format!("{} is not an app — {how}", shown(name)))
}

/// A file path inside an app: relative, `/`-separated, no empty, `.` or `..`
/// segment, no backslash or control character. `Err` is the sentence.
pub(crate) fn check_path(path: &str) -> Result<(), String> {
    let fine = !path.is_empty()
        && path.len() <= MAX_PATH
        && !path.contains('\\')
        && !path.chars().any(char::is_control)
        && path
            .split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..");
    if fine {
        Ok(())
    } else {
        Err(format!(
            "{} is not a file path of an app — say one relative to the app, like index.html or img/logo.png, \
             with no .. and at most {MAX_PATH} characters",
            shown(path)
        ))
    }
}

/// A name as a sentence quotes it: cut short and with controls escaped, so a
/// hostile name cannot run on or break the line.
pub(crate) fn shown(s: &str) -> String {
    let cut: String = s.chars().take(60).collect();
    let escaped = cut.escape_debug().to_string();
    let escaped = if escaped.is_empty() {
        "\"\"".to_string()
    } else {
        escaped
    };
    if s.chars().count() > 60 {
        format!("{escaped}…")
    } else {
        escaped
    }
}

/// Joins names the way a sentence does: `a`, `a and b`, `a, b and c`.
pub(crate) fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_app_is_named_by_slug_or_space_and_slug() {
        assert_eq!(AppName::parse("runs").unwrap(), AppName::Slug("runs"));
        assert_eq!(
            AppName::parse("jeff/runs").unwrap(),
            AppName::Full {
                space: "jeff",
                slug: "runs"
            }
        );
        for bad in ["", "/", "jeff/", "Jeff/runs", "a/b/c", "runs/"] {
            assert!(AppName::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_path_stays_inside_the_app() {
        for good in ["index.html", "img/logo.png", "a.b/c"] {
            assert!(check_path(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../b",
            "a//b",
            "a\\b",
            "./a",
            "a\n",
        ] {
            assert!(check_path(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn lists_read_as_sentences() {
        let l = |v: &[&str]| and_list(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(l(&["a"]), "a");
        assert_eq!(l(&["a", "b"]), "a and b");
        assert_eq!(l(&["a", "b", "c"]), "a, b and c");
    }

    proptest::proptest! {
        #[test]
        fn reading_any_name_never_panics(name in ".{0,80}") {
            let _ = AppName::parse(&name);
            let _ = check_path(&name);
            proptest::prop_assert!(shown(&name).chars().count() <= 61 * 10);
        }
    }
}
