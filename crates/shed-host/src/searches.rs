//! How many searches one caller runs at once. A read that may scan
//! (`FilterLine::may_scan`: a `~`, a stamp compared or ordered by) holds a
//! blocking thread and a database connection for up to the read deadline,
//! so one caller running many at once slows everyone's reads. A caller —
//! the person (an agent counts as its person), or a signed-out caller's
//! address as [`crate::client_address::counted`] counts it — runs at most
//! [`MOST_SEARCHES_PER_CALLER`] at once; one more waits up to
//! [`SEARCH_WAIT`] for a place, then is refused with a sentence saying to
//! wait. A caller's entry lives while one of its searches runs or waits, so
//! the table never holds more callers than searches in flight.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::{Caller, HostError};

/// The most searches one caller runs at once: a page's few lists and a
/// search box, or an agent's batch of four calls; each may hold a thread
/// for the read deadline.
pub const MOST_SEARCHES_PER_CALLER: usize = 4;

/// How long a search past [`MOST_SEARCHES_PER_CALLER`] waits for one of
/// the caller's others to finish before it is refused: long enough for a
/// cheap search to make room, short against the read deadline.
pub const SEARCH_WAIT: Duration = Duration::from_secs(1);

/// Who a search is counted against.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Searcher {
    /// A person, by eid: signed in, or an agent acting for them.
    Person(String),
    /// Signed out: the address the caller asks from.
    Address(IpAddr),
}

impl Searcher {
    /// The searcher `caller` is, asking from `from` (when known).
    pub(crate) fn of(caller: &Caller, from: Option<IpAddr>) -> Searcher {
        match caller.person() {
            Some(person) => Searcher::Person(person.eid.clone()),
            None => Searcher::Address(crate::client_address::counted(from)),
        }
    }
}

/// The searches running, by searcher: each searcher's places.
#[derive(Clone, Debug, Default)]
pub(crate) struct Searches(Arc<Mutex<HashMap<Searcher, Arc<Semaphore>>>>);

/// A place taken by one search, given back when dropped.
pub(crate) struct Searching {
    place: Option<OwnedSemaphorePermit>,
    searches: Searches,
    searcher: Searcher,
}

impl Searches {
    /// A place for one more search of `searcher`: at once, or after waiting
    /// up to [`SEARCH_WAIT`]; else the sentence saying to wait.
    pub(crate) async fn enter(&self, searcher: Searcher) -> Result<Searching, HostError> {
        let places = self
            .table()
            .entry(searcher.clone())
            .or_insert_with(|| Arc::new(Semaphore::new(MOST_SEARCHES_PER_CALLER)))
            .clone();
        match tokio::time::timeout(SEARCH_WAIT, places.acquire_owned()).await {
            Ok(Ok(place)) => Ok(Searching {
                place: Some(place),
                searches: self.clone(),
                searcher,
            }),
            _ => {
                self.forget_if_idle(&searcher);
                Err(HostError::Busy(format!(
                    "you have {MOST_SEARCHES_PER_CALLER} searches running — wait for one to finish, then ask again"
                )))
            }
        }
    }

    /// Drops `searcher`'s entry when none of its searches runs or waits.
    fn forget_if_idle(&self, searcher: &Searcher) {
        let mut table = self.table();
        if table
            .get(searcher)
            .is_some_and(|places| Arc::strong_count(places) == 1)
        {
            table.remove(searcher);
        }
    }

    fn table(&self) -> MutexGuard<'_, HashMap<Searcher, Arc<Semaphore>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    #[cfg(test)]
    fn callers(&self) -> usize {
        self.table().len()
    }
}

impl Drop for Searching {
    fn drop(&mut self) {
        drop(self.place.take());
        self.searches.forget_if_idle(&self.searcher);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ada() -> Searcher {
        Searcher::Person("ada".into())
    }

    async fn all_of_adas_places(searches: &Searches) -> Vec<Searching> {
        let mut held = Vec::new();
        for _ in 0..MOST_SEARCHES_PER_CALLER {
            held.push(searches.enter(ada()).await.unwrap());
        }
        held
    }

    #[tokio::test]
    async fn past_its_places_a_caller_waits_then_hears_the_sentence() {
        let searches = Searches::default();
        let mut held = all_of_adas_places(&searches).await;
        let refused = searches.enter(ada()).await.err().unwrap();
        assert_eq!(
            refused.to_string(),
            "you have 4 searches running — wait for one to finish, then ask again"
        );
        assert!(matches!(refused, HostError::Busy(_)));
        // Another caller is counted apart; a place given back is taken.
        let bob = searches.enter(Searcher::Person("bob".into())).await;
        assert!(bob.is_ok());
        held.pop();
        assert!(searches.enter(ada()).await.is_ok());
    }

    #[tokio::test]
    async fn a_waiting_search_takes_the_place_given_back() {
        let searches = Searches::default();
        let mut held = all_of_adas_places(&searches).await;
        let waiting = tokio::spawn({
            let searches = searches.clone();
            async move { searches.enter(ada()).await.map(drop) }
        });
        tokio::time::sleep(SEARCH_WAIT / 2).await;
        held.pop();
        assert!(waiting.await.unwrap().is_ok());
    }

    #[tokio::test]
    async fn the_table_holds_only_callers_searching_now() {
        let searches = Searches::default();
        let mut held = Vec::new();
        for last in 0..100u8 {
            let from = Searcher::Address(IpAddr::from([192, 0, 2, last]));
            held.push(searches.enter(from).await.unwrap());
        }
        assert_eq!(searches.callers(), 100);
        drop(held);
        assert_eq!(searches.callers(), 0);
        let _ = searches.enter(ada()).await;
        assert_eq!(searches.callers(), 0);
    }

    #[test]
    fn a_signed_out_searcher_is_its_address_an_ipv6_one_by_its_slash_64() {
        assert_eq!(
            Searcher::of(&Caller::Nobody, Some("2001:db8::1".parse().unwrap())),
            Searcher::of(&Caller::Nobody, Some("2001:db8::2".parse().unwrap()))
        );
        assert_ne!(
            Searcher::of(&Caller::Nobody, Some("192.0.2.1".parse().unwrap())),
            Searcher::of(&Caller::Nobody, Some("192.0.2.2".parse().unwrap()))
        );
    }
}
