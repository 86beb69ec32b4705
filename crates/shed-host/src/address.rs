//! Where a space and an app live on the web: `--public-url http://localhost:7700`
//! puts space `jeff` at `http://jeff.localhost:7700/` and its app `runs` at
//! `http://jeff.localhost:7700/runs/`, a subdomain per space so spaces keep
//! separate origins.

/// The public URL split into its scheme and its authority (host and port).
#[derive(Clone, Debug)]
pub(crate) struct PublicUrl {
    scheme: String,
    authority: String,
    full: String,
}

impl PublicUrl {
    /// Reads `http://localhost:7700` (a path or trailing slash is dropped).
    pub(crate) fn parse(url: &str) -> Result<PublicUrl, crate::HostError> {
        let bad = || {
            crate::HostError::BadInput(format!(
                "{url} is not a public URL — say one like http://localhost:7700"
            ))
        };
        let (scheme, rest) = url.split_once("://").ok_or_else(bad)?;
        let scheme = scheme.to_ascii_lowercase();
        let authority = rest.split('/').next().unwrap_or_default();
        let default_port = match scheme.as_str() {
            "http" => "80",
            "https" => "443",
            _ => return Err(bad()),
        };
        if authority.is_empty() || authority.contains(['@', '?', '#', ' ']) {
            return Err(bad());
        }
        // As a browser writes the origin: host in lower case, no default port.
        let authority = authority.to_ascii_lowercase();
        let authority = match port_of(&authority) {
            Some((host, port)) if port == default_port => host.to_string(),
            _ => authority,
        };
        Ok(PublicUrl {
            full: format!("{scheme}://{authority}"),
            scheme,
            authority,
        })
    }

    /// `http://localhost:7700`
    pub(crate) fn as_str(&self) -> &str {
        &self.full
    }

    /// The host, without its port: `localhost`, `[::1]`.
    pub(crate) fn host(&self) -> &str {
        port_of(&self.authority).map_or(&self.authority, |(host, _)| host)
    }

    /// `http://jeff.localhost:7700`
    pub(crate) fn space_origin(&self, space: &str) -> String {
        format!("{}://{space}.{}", self.scheme, self.authority)
    }

    /// `http://jeff.localhost:7700/runs/`
    pub(crate) fn app_address(&self, space: &str, app: &str) -> String {
        format!("{}/{app}/", self.space_origin(space))
    }
}

/// An authority's host and port, when it names a port: `localhost:7700`,
/// `[::1]:7700`.
fn port_of(authority: &str) -> Option<(&str, &str)> {
    let after_host = authority.rfind(']').unwrap_or(0);
    let colon = after_host + authority[after_host..].rfind(':')?;
    Some((&authority[..colon], &authority[colon + 1..]))
}

/// An address without its scheme, as the `commands` listing prints it.
pub(crate) fn without_scheme(address: &str) -> &str {
    address.split_once("://").map_or(address, |(_, rest)| rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_app_lives_under_its_space_subdomain() {
        let url = PublicUrl::parse("http://localhost:7700/").unwrap();
        assert_eq!(url.as_str(), "http://localhost:7700");
        assert_eq!(
            url.app_address("jeff", "runs"),
            "http://jeff.localhost:7700/runs/"
        );
        assert_eq!(
            without_scheme(&url.app_address("jeff", "runs")),
            "jeff.localhost:7700/runs/"
        );
    }

    #[test]
    fn the_origin_is_written_as_a_browser_sends_it() {
        for (given, origin) in [
            ("https://shed.example.org:443/", "https://shed.example.org"),
            ("HTTP://Shed.Example.org:80", "http://shed.example.org"),
            ("http://shed.example.org:443", "http://shed.example.org:443"),
            ("http://[::1]:80", "http://[::1]"),
            ("http://[::1]:7700", "http://[::1]:7700"),
            ("http://[::1]", "http://[::1]"),
        ] {
            assert_eq!(PublicUrl::parse(given).unwrap().as_str(), origin, "{given}");
        }
        assert_eq!(
            PublicUrl::parse("https://example.org:443")
                .unwrap()
                .space_origin("jeff"),
            "https://jeff.example.org"
        );
    }

    #[test]
    fn the_host_is_the_authority_without_its_port() {
        for (given, host) in [
            ("http://localhost:7700", "localhost"),
            ("https://shed.example.org", "shed.example.org"),
            ("http://[::1]:7700", "[::1]"),
            ("http://[::1]", "[::1]"),
        ] {
            assert_eq!(PublicUrl::parse(given).unwrap().host(), host, "{given}");
        }
    }

    #[test]
    fn a_url_without_a_scheme_is_refused() {
        assert!(PublicUrl::parse("localhost:7700").is_err());
        assert!(PublicUrl::parse("ftp://x").is_err());
    }
}
