//! Reading a space host's request path: `/<app>/<file path>`, each segment
//! percent-decoded on its own, so an encoded `/` or `..` can never step out
//! of the app (`%2e%2e`, `%2F` and `%5C` are refused like `..`).

use percent_encoding::percent_decode_str;

/// What a space host's path names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AppPath {
    /// `/`: the space itself.
    Space,
    /// `/<app>` without its slash: the door sends the browser to `/<app>/`.
    AppWithoutSlash(String),
    /// `/<app>/<path>`: `path` decoded, empty or ending in `/` for a folder.
    File {
        /// The app's slug, decoded.
        app: String,
        /// The file's path inside the app, decoded.
        path: String,
    },
    /// A path no file can have: a bad encoding, a `.` or `..` segment, an
    /// encoded `/` or `\`.
    Unreadable,
}

/// Reads a request path (as sent, still percent-encoded).
pub fn split_app_path(raw: &str) -> AppPath {
    let Some(rest) = raw.strip_prefix('/') else {
        return AppPath::Unreadable;
    };
    if rest.is_empty() {
        return AppPath::Space;
    }
    let (app, file) = match rest.split_once('/') {
        Some((app, file)) => (app, Some(file)),
        None => (rest, None),
    };
    let Some(app) = decode_segment(app) else {
        return AppPath::Unreadable;
    };
    let Some(file) = file else {
        return AppPath::AppWithoutSlash(app);
    };
    let mut path = Vec::new();
    for segment in file.split('/') {
        match decode_segment(segment) {
            Some(segment) => path.push(segment),
            None => return AppPath::Unreadable,
        }
    }
    AppPath::File {
        app,
        path: path.join("/"),
    }
}

/// One segment, decoded; `None` when it could step elsewhere or is not text.
fn decode_segment(segment: &str) -> Option<String> {
    let decoded = percent_decode_str(segment).decode_utf8().ok()?;
    let steps = decoded == "." || decoded == ".." || decoded.contains(['/', '\\', '\0']);
    (!steps).then(|| decoded.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(app: &str, path: &str) -> AppPath {
        AppPath::File {
            app: app.into(),
            path: path.into(),
        }
    }

    #[test]
    fn paths_name_an_app_and_a_file() {
        assert_eq!(split_app_path("/"), AppPath::Space);
        assert_eq!(
            split_app_path("/runs"),
            AppPath::AppWithoutSlash("runs".into())
        );
        assert_eq!(split_app_path("/runs/"), file("runs", ""));
        assert_eq!(
            split_app_path("/runs/img/a%20b.png"),
            file("runs", "img/a b.png")
        );
        assert_eq!(split_app_path("/runs/sub/"), file("runs", "sub/"));
    }

    #[test]
    fn nothing_steps_out_of_the_app() {
        for raw in [
            "/runs/../x",
            "/runs/%2e%2e/x",
            "/runs/%2E%2E/x",
            "/runs/.%2e/x",
            "/runs/a%2fb",
            "/runs/a%2F..%2Fb",
            "/runs/a%5cb",
            "/runs/./x",
            "/runs/%00",
            "/runs/%ff",
            "/../etc/passwd",
            "/%2e%2e/x",
            "runs",
        ] {
            assert_eq!(split_app_path(raw), AppPath::Unreadable, "{raw}");
        }
    }

    proptest::proptest! {
        #[test]
        fn a_decoded_path_never_holds_a_step(raw in "/[a-z%./\\\\0-9A-F]{0,40}") {
            if let AppPath::File { path, .. } = split_app_path(&raw) {
                proptest::prop_assert!(path.split('/').all(|s| s != ".." && s != "." && !s.contains('\\')));
            }
        }
    }
}
