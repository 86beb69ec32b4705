//! A browser's `User-Agent` in a few readable words — "Chrome on Linux",
//! "Safari on iPhone" — for the account page's sign-in sessions. A small
//! reading of our own rather than a dependency: it names the common
//! browsers and systems and says "a browser" for the rest; the page shows
//! the whole string on hover.

/// `user_agent` as "<browser> on <system>", or the words for what it could
/// not tell.
pub(crate) fn browser_words(user_agent: Option<&str>) -> String {
    let Some(said) = user_agent.filter(|said| !said.trim().is_empty()) else {
        return "A browser that did not say which".to_string();
    };
    let browser = browser_of(said);
    match system_of(said) {
        Some(system) => format!("{browser} on {system}"),
        None => browser.to_string(),
    }
}

/// The browser: the first sign that tells it, most specific first (Edge and
/// Opera say "Chrome" too; Chrome says "Safari").
fn browser_of(said: &str) -> &'static str {
    const SIGNS: &[(&str, &str)] = &[
        ("Edg/", "Edge"),
        ("EdgiOS/", "Edge"),
        ("OPR/", "Opera"),
        ("SamsungBrowser/", "Samsung Internet"),
        ("Firefox/", "Firefox"),
        ("FxiOS/", "Firefox"),
        ("HeadlessChrome/", "Headless Chrome"),
        ("CriOS/", "Chrome"),
        ("Chromium/", "Chromium"),
        ("Chrome/", "Chrome"),
        ("Safari/", "Safari"),
        ("curl/", "curl"),
    ];
    SIGNS
        .iter()
        .find(|(sign, _)| said.contains(sign))
        .map_or("A browser", |(_, name)| name)
}

/// The system, when the string names one (phones before the systems they
/// run on: an iPhone's says "like Mac OS X", an Android's "Linux").
fn system_of(said: &str) -> Option<&'static str> {
    const SIGNS: &[(&str, &str)] = &[
        ("iPhone", "iPhone"),
        ("iPad", "iPad"),
        ("Android", "Android"),
        ("CrOS", "ChromeOS"),
        ("Windows", "Windows"),
        ("Mac OS X", "macOS"),
        ("Macintosh", "macOS"),
        ("Linux", "Linux"),
    ];
    SIGNS
        .iter()
        .find(|(sign, _)| said.contains(sign))
        .map(|(_, name)| *name)
}

#[cfg(test)]
mod tests {
    use super::browser_words;

    #[test]
    fn common_browsers_read_as_a_browser_on_a_system() {
        for (said, words) in [
            (
                "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36",
                "Chrome on Linux",
            ),
            (
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36 Edg/140.0.0.0",
                "Edge on Windows",
            ),
            (
                "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Safari/605.1.15",
                "Safari on macOS",
            ),
            (
                "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1",
                "Safari on iPhone",
            ),
            (
                "Mozilla/5.0 (Android 15; Mobile; rv:140.0) Gecko/140.0 Firefox/140.0",
                "Firefox on Android",
            ),
            (
                "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/140.0.0.0 Safari/537.36",
                "Headless Chrome on Linux",
            ),
            ("curl/8.5.0", "curl"),
            ("something else", "A browser"),
        ] {
            assert_eq!(browser_words(Some(said)), words, "{said}");
        }
        assert_eq!(browser_words(None), "A browser that did not say which");
        assert_eq!(browser_words(Some("  ")), browser_words(None));
    }
}
