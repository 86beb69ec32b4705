//! A file of a deploy made ready to serve: its content type, an ETag, and
//! for an HTML page the `<base href>` at the app's address (shed-host's one
//! rule, shared with the views) and a strict Content-Security-Policy naming
//! the sha256 of each inline script the page was deployed with — so the
//! scripts the app shipped run, and a script injected into the page later
//! (through data drawn as HTML) does not.

use std::cell::{Cell, RefCell};

use lol_html::{RewriteStrSettings, element, rewrite_str, text};
use sha2::{Digest, Sha256};
use shed_host::base_href::with_base_href;
use shed_host::web::WebFile;

use crate::kinds::content_type;

/// A file ready to serve.
#[derive(Debug)]
pub(crate) struct Rendered {
    pub body: axum::body::Bytes,
    pub content_type: &'static str,
    /// `"<deploy>-<sha256 prefix>"`, quoted as HTTP wants it.
    pub etag: String,
    /// The page's Content-Security-Policy; `None` for a file that is not a page.
    pub csp: Option<String>,
}

impl Rendered {
    /// A file served as it is.
    pub(crate) fn asset(deploy: i64, body: Vec<u8>, content_type: &'static str) -> Rendered {
        Rendered {
            etag: etag(deploy, &body),
            body: body.into(),
            content_type,
            csp: None,
        }
    }
}

fn etag(deploy: i64, body: &[u8]) -> String {
    let digest = hex::encode(Sha256::digest(body));
    format!("\"{deploy}-{}\"", digest.get(..20).unwrap_or(&digest))
}

/// Renders a file of a deploy: a page gets its `<base href>` and its policy.
pub(crate) fn render(file: &WebFile, bytes: Vec<u8>) -> Rendered {
    if !file.page {
        return Rendered::asset(file.deploy, bytes, content_type(&file.path));
    }
    let html = with_base_href(&String::from_utf8_lossy(&bytes), &file.address);
    let csp = content_security_policy(&inline_script_hashes(&html));
    Rendered {
        etag: etag(file.deploy, html.as_bytes()),
        body: html.into_bytes().into(),
        content_type: "text/html; charset=utf-8",
        csp: Some(csp),
    }
}

/// The policy an app page is served with: its own origin (the space) for
/// everything, inline scripts only by the hashes given, inline styles
/// allowed, no plugins, no `<base>` or form target elsewhere, framed only by
/// its own space.
pub fn content_security_policy(script_hashes: &[String]) -> String {
    let mut scripts = String::from("'self'");
    for hash in script_hashes {
        scripts.push_str(&format!(" '{hash}'"));
    }
    format!(
        "default-src 'self'; script-src {scripts}; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; \
         font-src 'self' data:; media-src 'self' blob:; connect-src 'self'; object-src 'none'; base-uri 'self'; \
         form-action 'self'; frame-ancestors 'self'"
    )
}

/// `sha256-<base64>` of every inline `<script>` (one without `src`), as a
/// browser hashes it: the element's text after the HTML parser's newline
/// normalisation (CR LF and CR become LF) and NUL replacement. Read by an
/// HTML parser (lol_html), never by pattern matching. Each hash once.
pub fn inline_script_hashes(html: &str) -> Vec<String> {
    let scripts: RefCell<Vec<String>> = RefCell::new(Vec::new());
    let inline = Cell::new(false);
    let settings = RewriteStrSettings::new()
        .with_strict(false)
        .append_element_content_handler(element!("script", |el| {
            let is_inline = el.get_attribute("src").is_none();
            inline.set(is_inline);
            if is_inline {
                scripts.borrow_mut().push(String::new());
            }
            Ok(())
        }))
        .append_element_content_handler(text!("script", |chunk| {
            if inline.get()
                && let Some(last) = scripts.borrow_mut().last_mut()
            {
                last.push_str(chunk.as_str());
            }
            Ok(())
        }));
    if let Err(error) = rewrite_str(html, settings) {
        tracing::warn!(%error, "a page could not be read for its scripts; its inline scripts will not run");
        return Vec::new();
    }
    let mut hashes: Vec<String> = Vec::new();
    for script in scripts.into_inner() {
        let text = script
            .replace("\r\n", "\n")
            .replace('\r', "\n")
            .replace('\0', "\u{FFFD}");
        let hash = format!("sha256-{}", base64(&Sha256::digest(text.as_bytes())));
        if !hashes.contains(&hash) {
            hashes.push(hash);
        }
    }
    hashes
}

/// Standard base64 with padding, as CSP hash sources are written.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk.first().copied().unwrap_or(0),
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_the_standard_one() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn only_inline_scripts_are_hashed_as_the_browser_reads_them() {
        // The hash of `alert(1)` as CSP documents give it.
        let page = "<script src=\"/_shed/app.js\"></script><script>alert(1)</script><p>x</p><script>alert(1)</script>";
        assert_eq!(
            inline_script_hashes(page),
            ["sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI="]
        );
        assert_eq!(
            inline_script_hashes("<script>a\r\nb</script>"),
            inline_script_hashes("<script>a\nb</script>")
        );
        assert!(inline_script_hashes("<!-- <script>x</script> --><p>").is_empty());
    }

    #[test]
    fn a_page_gets_its_base_and_a_policy_naming_its_scripts() {
        let file = WebFile {
            app: "demo/runs".into(),
            deploy: 7,
            path: "index.html".into(),
            address: "http://demo.localhost:7700/runs/".into(),
            page: true,
            private: true,
        };
        let rendered = render(&file, b"<!doctype html><script>alert(1)</script>".to_vec());
        assert_eq!(
            std::str::from_utf8(&rendered.body).unwrap(),
            "<!doctype html><base href=\"http://demo.localhost:7700/runs/\"><script>alert(1)</script>"
        );
        let csp = rendered.csp.unwrap();
        assert!(
            csp.contains(
                "script-src 'self' 'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI=';"
            ),
            "{csp}"
        );
        assert!(csp.contains("connect-src 'self'") && csp.contains("object-src 'none'"));
        assert!(rendered.etag.starts_with("\"7-"));
        assert_eq!(rendered.content_type, "text/html; charset=utf-8");
    }

    proptest::proptest! {
        #[test]
        fn any_page_reads_without_panicking(page in ".{0,300}") {
            let _ = inline_script_hashes(&page);
        }
    }
}
