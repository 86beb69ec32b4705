//! The `<base href>` rule every door serves an app's HTML pages with: a page
//! gets `<base href="<the app's address>">` so its relative URLs (`./style.css`)
//! load from the app, unless it carries a `<base>` of its own, which it keeps.
//!
//! The page is read by an HTML parser (lol_html), never by pattern matching:
//! the tag goes right after the doctype when there is one (so the page stays in
//! standards mode), else at the very start.

use std::cell::Cell;

use lol_html::{RewriteStrSettings, doctype, element, rewrite_str};

/// The page with `<base href="{href}">` added, unless it has a `<base>` already.
pub fn with_base_href(html: &str, href: &str) -> String {
    let has_base = Cell::new(false);
    let doctype_end = Cell::new(0usize);
    let settings = RewriteStrSettings::new()
        .with_strict(false)
        .append_element_content_handler(element!("base", |_el| {
            has_base.set(true);
            Ok(())
        }))
        .append_document_content_handler(doctype!(|doctype| {
            doctype_end.set(doctype.source_location().bytes().end);
            Ok(())
        }));
    // A page the parser cannot read at all gets the tag at its start: the
    // browser will make what it can of it either way.
    if rewrite_str(html, settings).is_err() {
        doctype_end.set(0);
    }
    if has_base.get() {
        return html.to_string();
    }
    let at = doctype_end.get();
    let (head, tail) = match (html.get(..at), html.get(at..)) {
        (Some(head), Some(tail)) => (head, tail),
        _ => ("", html),
    };
    format!("{head}<base href=\"{}\">{tail}", escape_attribute(href))
}

fn escape_attribute(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const HREF: &str = "http://jeff.localhost:7700/runs/";

    #[test]
    fn the_tag_goes_after_the_doctype() {
        let page = "<!doctype html>\n<meta charset=\"utf-8\" />\n<link rel=\"stylesheet\" href=\"./style.css\" />";
        assert_eq!(
            with_base_href(page, HREF),
            "<!doctype html><base href=\"http://jeff.localhost:7700/runs/\">\n<meta charset=\"utf-8\" />\n<link rel=\"stylesheet\" href=\"./style.css\" />"
        );
    }

    #[test]
    fn a_page_without_a_doctype_gets_it_first() {
        assert_eq!(
            with_base_href("<p>hi</p>", HREF),
            format!("<base href=\"{HREF}\"><p>hi</p>")
        );
    }

    #[test]
    fn a_page_with_its_own_base_keeps_it() {
        let page = "<!doctype html><head><base href=\"https://elsewhere/\"></head>";
        assert_eq!(with_base_href(page, HREF), page);
    }

    #[test]
    fn a_base_spelled_in_a_comment_or_a_script_is_not_a_base() {
        let page = "<!-- <base href=x> --><script>let s = '<base href=y>'</script>";
        assert!(with_base_href(page, HREF).starts_with("<base href=\"http://jeff"));
    }

    #[test]
    fn the_address_is_escaped() {
        assert!(with_base_href("", "http://a/\"x").contains("href=\"http://a/&quot;x\""));
    }

    proptest::proptest! {
        #[test]
        fn any_page_keeps_its_text_and_gains_at_most_one_tag(page in ".{0,200}") {
            let out = with_base_href(&page, HREF);
            proptest::prop_assert!(out == page || out.len() == page.len() + HREF.len() + 14);
        }
    }
}
