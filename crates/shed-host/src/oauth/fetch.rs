//! The fetch of a client metadata document, which a stranger asks for (an
//! anonymous `/oauth/authorize?client_id=<url>`), so it is bounded every way
//! a stranger could use it: only from an address [`addresses`] allows —
//! the address itself when the URL writes one, every address a name
//! resolves to otherwise, and the connection made to those only — with no
//! proxy and no redirect followed, at most [`MOST_DOCUMENT_BYTES`] within
//! [`FETCH_SECONDS`], and at most [`MOST_DOCUMENT_FETCHES`] at once
//! ([`MOST_DOCUMENT_FETCHES_PER_ADDRESS`] for one asker's address): past
//! those, refused at once rather than queued. Every way a fetch fails is
//! one answer, [`FetchRefusal::Unreadable`] — a closed port, an HTTP
//! status, a slow or large answer alike — so shed cannot be used to tell
//! which ports answer where; the precise reason is logged at debug level.
//!
//! [`addresses`]: super::addresses

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::Duration;

use super::addresses::{PublicOnly, fetchable, literal_of};
use crate::HostError;
use crate::client_address;
use crate::names::shown;

/// The most bytes of a metadata document.
pub const MOST_DOCUMENT_BYTES: usize = 5 * 1024;
/// The longest a fetch of a document may take, in seconds.
pub const FETCH_SECONDS: u64 = 5;
/// The most documents fetched at once.
pub const MOST_DOCUMENT_FETCHES: usize = 16;
/// The most documents fetched at once for one asker's address.
pub const MOST_DOCUMENT_FETCHES_PER_ADDRESS: usize = 4;

/// Why a document was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FetchRefusal {
    /// Every place for a fetch is taken.
    #[error(
        "shed is already reading {MOST_DOCUMENT_FETCHES} client metadata documents, the most it reads at once — try again in a few seconds"
    )]
    Busy,
    /// The asker's address holds its most places.
    #[error(
        "your address already has {MOST_DOCUMENT_FETCHES_PER_ADDRESS} client metadata documents being read, the most shed reads at once for one address — try again in a few seconds"
    )]
    AddressBusy,
    /// The fetch was not allowed or failed, the same for every reason.
    #[error("the document could not be read")]
    Unreadable,
}

/// What a fetch read.
pub(crate) struct Fetched {
    pub body: Vec<u8>,
    /// Its `Cache-Control` header.
    pub cache_control: Option<String>,
}

/// How the fetches are made, as the server set it.
#[derive(Default)]
struct Settings {
    extra_roots: Vec<reqwest::Certificate>,
    loopback: bool,
}

/// The fetches running: in all, and by asker's address.
#[derive(Default)]
struct Running {
    all: usize,
    by_address: HashMap<IpAddr, usize>,
}

/// The documents' fetcher: its settings, the client made from them, and
/// the fetches running.
#[derive(Default)]
pub(crate) struct Fetches {
    settings: Mutex<Settings>,
    client: Mutex<Option<reqwest::Client>>,
    running: Mutex<Running>,
}

/// A fetch's place among those running, given back when dropped.
struct Place<'a> {
    running: &'a Mutex<Running>,
    address: IpAddr,
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        let Ok(mut running) = self.running.lock() else {
            return;
        };
        running.all = running.all.saturating_sub(1);
        if let Some(held) = running.by_address.get_mut(&self.address) {
            *held = held.saturating_sub(1);
            if *held == 0 {
                running.by_address.remove(&self.address);
            }
        }
    }
}

impl Fetches {
    /// Changes the settings, and makes the client again from them now, so
    /// a setting it cannot take is refused when given.
    fn settle(&self, change: impl FnOnce(&mut Settings)) -> Result<(), HostError> {
        let poisoned = || HostError::Internal("the metadata documents' settings".to_string());
        change(&mut *self.settings.lock().map_err(|_| poisoned())?);
        *self.client.lock().map_err(|_| poisoned())? = None;
        self.client().map(drop)
    }

    /// Trusts these root certificates besides the system's.
    pub(crate) fn trust(&self, roots: Vec<reqwest::Certificate>) -> Result<(), HostError> {
        self.settle(|settings| settings.extra_roots.extend(roots))
    }

    /// Lets documents be fetched from loopback addresses, and over plain
    /// http there: for development and tests only.
    pub(crate) fn allow_loopback(&self) -> Result<(), HostError> {
        self.settle(|settings| settings.loopback = true)
    }

    /// Whether documents may be fetched from loopback addresses.
    pub(crate) fn loopback_allowed(&self) -> bool {
        self.settings.lock().is_ok_and(|settings| settings.loopback)
    }

    /// A place for a fetch asked from `asker`, or the cap it would pass.
    fn take_place(&self, asker: Option<IpAddr>) -> Result<Place<'_>, FetchRefusal> {
        let address = client_address::counted(asker);
        let mut running = self.running.lock().map_err(|_| FetchRefusal::Busy)?;
        if running.all >= MOST_DOCUMENT_FETCHES {
            return Err(FetchRefusal::Busy);
        }
        let held = running.by_address.entry(address).or_default();
        if *held >= MOST_DOCUMENT_FETCHES_PER_ADDRESS {
            return Err(FetchRefusal::AddressBusy);
        }
        *held += 1;
        running.all += 1;
        Ok(Place {
            running: &self.running,
            address,
        })
    }

    /// The client made from the settings.
    fn client(&self) -> Result<reqwest::Client, HostError> {
        let poisoned = || HostError::Internal("the metadata documents' client".to_string());
        let mut client = self.client.lock().map_err(|_| poisoned())?;
        if let Some(made) = &*client {
            return Ok(made.clone());
        }
        let settings = self.settings.lock().map_err(|_| poisoned())?;
        let made = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .dns_resolver(PublicOnly {
                loopback: settings.loopback,
            })
            .timeout(Duration::from_secs(FETCH_SECONDS))
            .user_agent(concat!("shed/", env!("CARGO_PKG_VERSION")))
            .tls_certs_merge(settings.extra_roots.iter().cloned())
            .build()
            .map_err(|e| {
                HostError::Internal(format!(
                    "could not make the client that reads metadata documents: {e}"
                ))
            })?;
        *client = Some(made.clone());
        Ok(made)
    }

    /// Reads the document at `url` for `asker`: one whose address is
    /// allowed, answered 200, of at most [`MOST_DOCUMENT_BYTES`].
    pub(crate) async fn fetch(
        &self,
        url: &str,
        asker: Option<IpAddr>,
    ) -> Result<Fetched, FetchRefusal> {
        let unreadable = |why: &dyn std::fmt::Display| {
            tracing::debug!(url = %shown(url), %why, "a client metadata document was not read");
            FetchRefusal::Unreadable
        };
        let parsed = reqwest::Url::parse(url).map_err(|e| unreadable(&e))?;
        if let Some(address) = literal_of(&parsed)
            && !fetchable(address, self.loopback_allowed())
        {
            return Err(unreadable(&format!("{address} is not a public address")));
        }
        let _place = self.take_place(asker)?;
        let client = self.client().map_err(|e| {
            tracing::error!(%e, "could not fetch a client metadata document");
            FetchRefusal::Unreadable
        })?;
        let mut response = client
            .get(parsed)
            .header(http::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| unreadable(&error_chain(&e)))?;
        if response.status() != reqwest::StatusCode::OK {
            return Err(unreadable(&format!("it answered {}", response.status())));
        }
        if response
            .content_length()
            .is_some_and(|length| length > MOST_DOCUMENT_BYTES as u64)
        {
            return Err(unreadable(&"its Content-Length is too large"));
        }
        let cache_control = response
            .headers()
            .get(http::header::CACHE_CONTROL)
            .and_then(|value| value.to_str().ok())
            .map(str::to_string);
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| unreadable(&error_chain(&e)))?
        {
            body.extend_from_slice(&chunk);
            if body.len() > MOST_DOCUMENT_BYTES {
                return Err(unreadable(&"its body is too large"));
            }
        }
        Ok(Fetched {
            body,
            cache_control,
        })
    }
}

/// An error and its sources, for the debug log: reqwest's own says only
/// "error sending request".
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut said = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        said.push_str(": ");
        said.push_str(&cause.to_string());
        source = cause.source();
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_capped_in_all_and_by_address_and_given_back() {
        let fetches = Fetches::default();
        let one: IpAddr = "203.0.113.1".parse().unwrap();
        let held: Vec<Place<'_>> = (0..MOST_DOCUMENT_FETCHES_PER_ADDRESS)
            .map(|_| fetches.take_place(Some(one)).unwrap())
            .collect();
        assert_eq!(
            fetches.take_place(Some(one)).err(),
            Some(FetchRefusal::AddressBusy)
        );
        let same_64: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let also_same_64: IpAddr = "2001:db8:1:2::99".parse().unwrap();
        let mut more: Vec<Place<'_>> = (0..MOST_DOCUMENT_FETCHES_PER_ADDRESS)
            .map(|_| fetches.take_place(Some(same_64)).unwrap())
            .collect();
        assert_eq!(
            fetches.take_place(Some(also_same_64)).err(),
            Some(FetchRefusal::AddressBusy),
            "an IPv6 /64 is one address"
        );
        let mut next = 2u8;
        while more.len() + held.len() < MOST_DOCUMENT_FETCHES {
            let address = IpAddr::from([198, 51, 100, next]);
            more.push(fetches.take_place(Some(address)).unwrap());
            next += 1;
        }
        let fresh = IpAddr::from([198, 51, 100, 200]);
        assert_eq!(
            fetches.take_place(Some(fresh)).err(),
            Some(FetchRefusal::Busy)
        );
        drop(held);
        assert!(fetches.take_place(Some(one)).is_ok(), "places come back");
        drop(more);
        let running = fetches.running.lock().unwrap();
        assert_eq!((running.all, running.by_address.len()), (0, 0));
    }
}
