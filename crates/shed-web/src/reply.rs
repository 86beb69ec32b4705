//! The door's answers: a host refusal as HTTP — [`Refusal`], the one
//! `IntoResponse` of the host's error, its sentence as JSON for the page api
//! or on a small page for a browser — the platform's own pages, and the
//! one 303 every page redirects with ([`see_other`]).

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use shed_host::HostError;

/// The policy of the platform's own pages: nothing runs, nothing loads, and
/// a form may post only where `form_action` says (`'none'` on a page with
/// no form).
fn platform_csp(form_action: &str) -> String {
    format!(
        "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action {form_action}; frame-ancestors 'none'"
    )
}

/// The status a refusal is answered with.
pub(crate) fn status_of(error: &HostError) -> StatusCode {
    match error {
        HostError::SignIn(_) => StatusCode::UNAUTHORIZED,
        HostError::Refused(_) => StatusCode::FORBIDDEN,
        HostError::BadInput(_) => StatusCode::BAD_REQUEST,
        HostError::NotFound(_) => StatusCode::NOT_FOUND,
        HostError::Conflict(_) | HostError::ChangedSince(_) => StatusCode::CONFLICT,
        HostError::Busy(_) => StatusCode::TOO_MANY_REQUESTS,
        HostError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        // An answer rather than a refusal; no page of the person's asks one.
        HostError::Waiting(_) => StatusCode::ACCEPTED,
    }
}

/// JSON a program reads, never cached, never sniffed.
pub(crate) fn json(status: StatusCode, body: serde_json::Value) -> Response {
    let mut response = (status, Json(body)).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// A sentence of the door's own, as the page api answers it.
pub(crate) fn json_sentence(status: StatusCode, sentence: &str) -> Response {
    json(status, serde_json::json!({ "error": sentence }))
}

/// One of the platform's small pages: a title and paragraphs of HTML the
/// caller has escaped.
pub(crate) fn page(status: StatusCode, title: &str, body: &str) -> Response {
    form_page(status, title, body, "'none'")
}

/// A platform page whose form may post to `form_action` — for the sign-in
/// button `'self'` and the space hosts (`'self' http://*.localhost:7700`),
/// since a browser holds a form's redirects to `form-action` too.
pub(crate) fn form_page(
    status: StatusCode,
    title: &str,
    body: &str,
    form_action: &str,
) -> Response {
    let Ok(policy) = HeaderValue::from_str(&platform_csp(form_action)) else {
        return Refusal::page(HostError::Internal(format!(
            "the form targets {form_action} do not fit in a page's policy"
        )))
        .into_response();
    };
    html_response(status, small_page_html(title, body), policy)
}

/// The HTML of one of the platform's small pages, its content in a `main`
/// landmark.
fn small_page_html(title: &str, body: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>body{{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#222}}\
         code{{background:#f2f2f2;padding:.1rem .3rem;border-radius:3px}}\
         section{{border-top:1px solid #ddd;margin-top:1.5rem;padding-top:.5rem}}h2{{font-size:1.15rem}}\
         button{{font:inherit;padding:.45rem .9rem;border:1px solid #0b57d0;border-radius:6px;background:#0b57d0;color:#fff;cursor:pointer}}\
         button.secondary{{background:#fff;color:#1f2328;border-color:#c4c9cf}}\
         .refused{{padding:.6rem .8rem;border-radius:6px;background:#ffebe9;border:1px solid #ffcecb}}</style>\n<main>\n<h1>{title}</h1>\n{body}\n</main>\n",
        title = escape(title)
    )
}

/// A page of the signed-in person's own (home, account, a space, agents):
/// the product's look and `header`, then `body`. Its forms post only to
/// this host; the scripts it runs are this host's own (the copy buttons',
/// the passkeys'), which may call this host alone.
pub(crate) fn product_page(status: StatusCode, title: &str, header: &str, body: &str) -> Response {
    let policy = HeaderValue::from_static(
        "default-src 'none'; style-src 'unsafe-inline'; script-src 'self'; connect-src 'self'; \
         base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    );
    let html = format!(
        "<!doctype html>\n<html lang=\"en\">\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title} · shed</title>\n<style>{PRODUCT_STYLE}</style>\n\
         <script src=\"{PAGES_JS_PATH}\" defer></script>\n{header}\n<main>\n<h1>{title}</h1>\n{body}\n</main>\n",
        title = escape(title),
        PAGES_JS_PATH = crate::PAGES_JS_PATH,
    );
    html_response(status, html, policy)
}

/// A page of the product's look for anyone, signed in or not: the header
/// with shed's name only (linking home).
pub(crate) fn plain_product_page(status: StatusCode, title: &str, body: &str) -> Response {
    let header = "<header><a class=\"brand\" href=\"/\">shed</a></header>";
    product_page(status, title, header, body)
}

/// A host's sentence as a paragraph a page shows: its first letter a
/// capital, each `command` in it as code.
pub(crate) fn sentence_html(sentence: &str) -> String {
    let mut chars = sentence.chars();
    let capital: String = chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default();
    let html: String = escape(&capital)
        .split('`')
        .enumerate()
        .map(|(at, part)| {
            if at % 2 == 1 {
                format!("<code>{part}</code>")
            } else {
                part.to_string()
            }
        })
        .collect();
    format!("<p>{html}</p>")
}

/// The look of the person's pages: one column, readable at a phone's width.
/// A table wider than the screen (`.table`) shows that it scrolls sideways:
/// a shadow at each edge that has more, CSS alone — white covers that
/// scroll with the content hide a shadow that stays, at the edge reached.
const PRODUCT_STYLE: &str = "\
*{box-sizing:border-box}\
body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1f2328;background:#f6f7f9}\
header{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.25rem;padding:.75rem 1rem;background:#fff;border-bottom:1px solid #dde1e6}\
header .brand{font-weight:700;font-size:1.15rem;color:#1f2328;text-decoration:none;margin-right:auto}\
header nav{display:flex;gap:1rem;flex-wrap:wrap}\
header nav a{color:#0b57d0;text-decoration:none}\
header nav a[aria-current]{font-weight:600;color:#1f2328}\
header .who{color:#57606a;font-size:.9rem}\
header form{margin:0}\
main{max-width:52rem;margin:0 auto;padding:1rem}\
h1{font-size:1.5rem;margin:.5rem 0 1rem}\
h2{font-size:1.15rem;margin:0 0 .5rem}\
section,.card{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:1rem;margin:0 0 1rem}\
.card h3{margin:0 0 .5rem;font-size:1.05rem;display:flex;flex-wrap:wrap;gap:.5rem;align-items:baseline}\
ul.rows{list-style:none;margin:0;padding:0}\
ul.rows>li{display:flex;flex-wrap:wrap;gap:.25rem 1rem;align-items:center;justify-content:space-between;padding:.6rem 0;border-top:1px solid #eef0f2}\
ul.rows>li:first-child{border-top:0}\
.what{flex:1 1 16rem;min-width:0;overflow-wrap:anywhere}\
.meta{color:#57606a;font-size:.875rem}\
.tag{display:inline-block;font-size:.75rem;font-weight:600;padding:.05rem .45rem;border-radius:999px;background:#eef0f2;color:#3b434b}\
.tag.running{background:#dafbe1;color:#116329}\
.acts{display:flex;flex-wrap:wrap;gap:.5rem}\
form.inline{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:0}\
ul.rows+form.inline{border-top:1px solid #eef0f2;padding-top:.75rem}\
label{display:flex;flex-direction:column;gap:.2rem;font-size:.875rem;color:#3b434b}\
input,select{font:inherit;padding:.4rem .5rem;border:1px solid #c4c9cf;border-radius:6px;background:#fff;min-width:0}\
button{font:inherit;padding:.4rem .8rem;border:1px solid #c4c9cf;border-radius:6px;background:#fff;cursor:pointer}\
button.primary{background:#0b57d0;border-color:#0b57d0;color:#fff}\
button.danger{color:#b42318;border-color:#e8b4ae}\
code,pre{font:.85rem/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;background:#f2f4f6;border-radius:4px}\
code{padding:.1rem .3rem;overflow-wrap:anywhere}\
pre{padding:.75rem;white-space:pre-wrap;overflow-wrap:anywhere}\
.copyable{display:flex;flex-wrap:wrap;gap:.5rem;align-items:flex-start}\
.copyable>code,.copyable>pre{flex:1 1 14rem;min-width:0;margin:0}\
.copyable>pre{flex-basis:20rem}\
.note{padding:.6rem .8rem;border-radius:6px;background:#dafbe1;border:1px solid #aceebb}\
.refused{padding:.6rem .8rem;border-radius:6px;background:#ffebe9;border:1px solid #ffcecb}\
.once{padding:.6rem .8rem;border-radius:6px;background:#fff8c5;border:1px solid #eed888}\
.empty{color:#57606a}\
.tag.trashed,.tag.undone{background:#fff8c5;color:#7d4e00}\
.tag.this{background:#ddf4ff;color:#0550ae}\
section.trashed{border-color:#eed888;background:#fffdf0}\
a.open{overflow-wrap:anywhere}\
form.everywhere{margin:.75rem 0 0;padding-top:.75rem;border-top:1px solid #eef0f2}\
nav.tabs,nav.kinds{display:flex;flex-wrap:wrap;gap:.5rem 1rem;margin:0 0 1rem}\
nav.kinds a[aria-current] code{background:#ddf4ff;font-weight:600}\
form.narrow{margin:0 0 1rem;align-items:flex-end}\
form.narrow label{flex:1 1 8rem}\
form.narrow input{width:100%}\
.table{overflow-x:auto;border:1px solid #dde1e6;border-radius:8px;margin:0 0 1rem;\
background:linear-gradient(to right,#fff 40%,#fff0) left/2rem 100% no-repeat local,\
linear-gradient(to left,#fff 40%,#fff0) right/2rem 100% no-repeat local,\
linear-gradient(to right,#0000002e,#0000) left/.9rem 100% no-repeat scroll,\
linear-gradient(to left,#0000002e,#0000) right/.9rem 100% no-repeat scroll,#fff}\
.table:focus-visible{outline:2px solid #0b57d0;outline-offset:2px}\
table{border-collapse:collapse;width:100%;font-size:.875rem}\
th,td{text-align:left;vertical-align:top;padding:.4rem .6rem;border-top:1px solid #eef0f2;max-width:20rem;overflow-wrap:break-word}\
th{border-top:0;background:#f6f7f9;white-space:nowrap}\
td.stamp{min-width:9rem}\
.tag.approved{background:#dafbe1;color:#116329}\
.tag.denied,.tag.expired{background:#ffebe9;color:#b42318}\
p.note{overflow-wrap:anywhere}\
.badge{display:inline-block;min-width:1.25rem;margin-left:.2rem;padding:0 .35rem;border-radius:999px;background:#b42318;color:#fff;font-size:.75rem;font-weight:600;line-height:1.25rem;text-align:center}\
";

/// An HTML answer under `policy`: never cached, never sniffed.
fn html_response(status: StatusCode, html: String, policy: HeaderValue) -> Response {
    let mut response = (status, html).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(header::CONTENT_SECURITY_POLICY, policy);
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// A 303 to `to` that sets `cookies`, kept from caches and referrers (the
/// address it leaves, or the one it goes to, may carry a key or a code). An
/// address that cannot be a `Location` is a failure of the door's own.
pub(crate) fn see_other(
    to: &str,
    cookies: impl IntoIterator<Item = Option<HeaderValue>>,
) -> Response {
    let Ok(location) = HeaderValue::from_str(to) else {
        return Refusal::page(HostError::Internal(
            "the address to go on to cannot be sent as a Location".to_string(),
        ))
        .into_response();
    };
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    headers.insert(header::LOCATION, location);
    for cookie in cookies.into_iter().flatten() {
        headers.append(header::SET_COOKIE, cookie);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

/// The host's refusal as HTTP: its status, and its sentence where the
/// asker reads it — on a page for a browser (the sign-in page for "sign in
/// first"), as `{"error": "<sentence>"}` for the page api.
#[derive(Debug)]
pub(crate) struct Refusal {
    error: HostError,
    shape: Shape,
}

/// Where a refusal is read.
#[derive(Debug, Clone, Copy)]
enum Shape {
    Page,
    Json,
}

impl Refusal {
    /// The refusal on a page, for a browser.
    pub(crate) fn page(error: HostError) -> Refusal {
        Refusal {
            error,
            shape: Shape::Page,
        }
    }

    /// The refusal as JSON, for the page api.
    pub(crate) fn json(error: HostError) -> Refusal {
        Refusal {
            error,
            shape: Shape::Json,
        }
    }

    /// The same refusal, as JSON.
    pub(crate) fn into_json(self) -> Refusal {
        Refusal::json(self.error)
    }
}

impl From<HostError> for Refusal {
    fn from(error: HostError) -> Refusal {
        Refusal::page(error)
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let error = self.error;
        if let HostError::Internal(why) = &error {
            tracing::error!(%why, "the host failed answering a request");
        }
        match (self.shape, &error) {
            (Shape::Json, _) => json(
                status_of(&error),
                serde_json::json!({ "error": error.to_string() }),
            ),
            (Shape::Page, HostError::SignIn(_)) => sign_in_page(
                StatusCode::UNAUTHORIZED,
                "This page is for the members of its space.",
            ),
            (Shape::Page, HostError::Internal(_)) => page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Something broke",
                &format!("<p>{}</p>", escape(&error.to_string())),
            ),
            (Shape::Page, other) => page(
                status_of(other),
                "Not here",
                &format!("<p>{}</p>", linked(&other.to_string())),
            ),
        }
    }
}

/// The platform's page saying how to sign in, after `why`.
pub(crate) fn sign_in_page(status: StatusCode, why: &str) -> Response {
    page(status, "Sign in", &sign_in_words(why))
}

/// `why`, then how to sign in with a link: the words of the sign-in page.
fn sign_in_words(why: &str) -> String {
    format!(
        "<p>{}</p>\n<p>shed signs you in with a one-time link. Ask whoever runs this shed to run \
         <code>shed login &lt;your handle&gt;</code> on the server, open the link it prints and press its button: it works once, \
         for ten minutes, and signs you in on every space you belong to.</p>",
        escape(why)
    )
}

/// One of the platform's small pages that runs this host's own scripts
/// (the passkeys'), which may call this host alone; its forms post nowhere.
pub(crate) fn script_page(status: StatusCode, title: &str, body: &str) -> Response {
    let policy = HeaderValue::from_static(
        "default-src 'none'; style-src 'unsafe-inline'; script-src 'self'; connect-src 'self'; \
         base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    html_response(status, small_page_html(title, body), policy)
}

/// The button that signs in with a passkey, its sentence's place, and its
/// script.
fn sign_in_section() -> String {
    let passkeys_js = crate::PASSKEYS_JS_PATH;
    format!(
        "<section id=\"passkey\"><h2>Sign in with a passkey</h2>\n\
         <p>Added a passkey on your account page? Use it here instead of a link.</p>\n\
         <button type=\"button\" data-passkey-sign-in>Sign in with a passkey</button>\n\
         <p id=\"passkey-said\" role=\"status\" hidden></p>\n\
         <script src=\"{passkeys_js}\" defer></script>\n</section>"
    )
}

/// One of the platform's small pages, with the passkey sign-in button
/// after `body` — when passkeys are `on` — and `footer` last (the
/// operator's links, or nothing).
pub(crate) fn with_passkey_sign_in(
    on: bool,
    status: StatusCode,
    title: &str,
    body: &str,
    footer: &str,
) -> Response {
    if !on {
        return page(status, title, &format!("{body}{footer}"));
    }
    script_page(
        status,
        title,
        &format!("{body}\n{}{footer}", sign_in_section()),
    )
}

/// The platform host's sign-in page, after `why`: a link, or a passkey
/// when they are `on`; `footer` last.
pub(crate) fn passkey_sign_in_page(
    on: bool,
    status: StatusCode,
    why: &str,
    footer: &str,
) -> Response {
    with_passkey_sign_in(on, status, "Sign in", &sign_in_words(why), footer)
}

/// A sentence made safe inside HTML, each web address in it (`http://…`,
/// `https://…`, up to a space, a closing bracket, a comma or a closing
/// full stop) a link — as
/// where a trashed app is restored, its page on the platform.
pub(crate) fn linked(sentence: &str) -> String {
    let mut out = String::with_capacity(sentence.len());
    let mut rest = sentence;
    while let Some(at) = ["http://", "https://"]
        .iter()
        .filter_map(|scheme| rest.find(scheme))
        .min()
    {
        out.push_str(&escape(&rest[..at]));
        let address = &rest[at..];
        let end = address
            .find(|c: char| c.is_whitespace() || matches!(c, ')' | ',' | '<' | '>' | '"'))
            .unwrap_or(address.len());
        // A sentence's full stop is not the address's.
        let end = address[..end].trim_end_matches('.').len();
        let href = escape(&address[..end]);
        out.push_str(&format!("<a href=\"{href}\">{href}</a>"));
        rest = &address[end..];
    }
    out.push_str(&escape(rest));
    out
}

/// Text made safe inside HTML.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sentence_s_web_addresses_are_links() {
        assert_eq!(
            linked(
                "a/b is in the trash — (with Restore on its page, http://x.test/spaces/a/apps/b)"
            ),
            "a/b is in the trash — (with Restore on its page, \
             <a href=\"http://x.test/spaces/a/apps/b\">http://x.test/spaces/a/apps/b</a>)"
        );
        assert_eq!(
            linked("<b> at https://x.test/?a=1&b=\"2\", then"),
            "&lt;b&gt; at <a href=\"https://x.test/?a=1&amp;b=\">https://x.test/?a=1&amp;b=</a>&quot;2&quot;, then"
        );
        assert_eq!(linked("no address"), "no address");
        assert_eq!(
            linked("see http://x.test/a."),
            "see <a href=\"http://x.test/a\">http://x.test/a</a>."
        );
    }

    #[test]
    fn each_refusal_has_its_status() {
        let s = |e: HostError| status_of(&e).as_u16();
        assert_eq!(s(HostError::SignIn("x".into())), 401);
        assert_eq!(s(HostError::Refused("x".into())), 403);
        assert_eq!(s(HostError::BadInput("x".into())), 400);
        assert_eq!(s(HostError::NotFound("x".into())), 404);
        assert_eq!(s(HostError::Conflict("x".into())), 409);
        assert_eq!(s(HostError::Busy("x".into())), 429);
        assert_eq!(s(HostError::Internal("x".into())), 500);
    }

    #[test]
    fn a_refusal_is_json_for_the_api_and_a_page_for_a_browser() {
        let refused = || HostError::Refused("you can read this app but not change it".into());
        let json = Refusal::json(refused()).into_response();
        assert_eq!(json.status(), StatusCode::FORBIDDEN);
        assert!(
            json.headers()[header::CONTENT_TYPE]
                .to_str()
                .unwrap()
                .starts_with("application/json")
        );
        let page = Refusal::page(refused()).into_response();
        assert_eq!(page.status(), StatusCode::FORBIDDEN);
        assert!(
            page.headers()[header::CONTENT_TYPE]
                .to_str()
                .unwrap()
                .starts_with("text/html")
        );
        let sign_in = Refusal::page(HostError::SignIn("sign in first".into())).into_response();
        assert_eq!(sign_in.status(), StatusCode::UNAUTHORIZED);
    }

    #[test]
    fn a_form_page_posts_home_and_runs_nothing() {
        let response = form_page(
            StatusCode::OK,
            "Sign in",
            "<form></form>",
            "'self' http://*.localhost:7700",
        );
        let policy = response.headers()[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap();
        assert!(
            policy.contains("form-action 'self' http://*.localhost:7700;")
                && policy.starts_with("default-src 'none';")
                && !policy.contains("script-src"),
            "{policy}"
        );
        let plain = page(StatusCode::OK, "shed", "");
        assert!(
            plain.headers()[header::CONTENT_SECURITY_POLICY]
                .to_str()
                .unwrap()
                .contains("form-action 'none'")
        );
    }

    #[test]
    fn html_is_escaped() {
        assert_eq!(
            escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }
}
