//! How many live streams (`watch.rs`) each person, each signed-out address
//! and the server hold open, and the bounds on them: a stream is counted
//! while its [`Held`] lives, and one past a bound is refused with the
//! sentence saying which.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// The most streams one person holds open at once, on this server: a
/// person's tabs, a few pages each.
pub const MOST_WATCHES_PER_PERSON: usize = 32;

/// The most streams signed-out callers from one address (an IPv6 /64)
/// hold open at once, on this server.
pub const MOST_WATCHES_PER_ADDRESS: usize = 16;

/// The most streams open at once on this server, everybody's.
pub const MOST_WATCHES: usize = 10_000;

/// Who holds how many streams open, for the bounds.
#[derive(Default)]
pub(crate) struct Streams {
    open: Arc<Mutex<Count>>,
}

#[derive(Default)]
struct Count {
    all: usize,
    by: HashMap<Holder, usize>,
}

/// Whose a stream is, as the bounds count it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Holder {
    Person(String),
    Address(IpAddr),
}

/// One open stream, counted until dropped.
pub(crate) struct Held {
    open: Arc<Mutex<Count>>,
    holder: Holder,
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut count = self.open.lock().unwrap_or_else(|e| e.into_inner());
        count.all -= 1;
        if let Some(n) = count.by.get_mut(&self.holder) {
            *n -= 1;
            if *n == 0 {
                count.by.remove(&self.holder);
            }
        }
    }
}

impl Streams {
    /// Counts one more stream for `holder`, or the sentence of the bound it
    /// would pass.
    pub(crate) fn hold(&self, holder: Holder) -> Result<Held, String> {
        let mut count = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let held = count.by.get(&holder).copied().unwrap_or(0);
        if count.all >= MOST_WATCHES {
            return Err(format!(
                "this server has {MOST_WATCHES} live streams open, its most — try again in a \
             minute, or reload the page to read it as it is now"
            ));
        }
        match &holder {
            Holder::Person(_) if held >= MOST_WATCHES_PER_PERSON => {
                return Err(format!(
                    "you have {MOST_WATCHES_PER_PERSON} live streams open on this server, the most \
                 one person may — close a tab or page that watches an app, then try again"
                ));
            }
            Holder::Address(_) if held >= MOST_WATCHES_PER_ADDRESS => {
                return Err(format!(
                    "{MOST_WATCHES_PER_ADDRESS} live streams are open from your address without \
                 signing in, the most one address may — sign in, or close a page that watches \
                 an app, then try again"
                ));
            }
            _ => {}
        }
        count.all += 1;
        *count.by.entry(holder.clone()).or_default() += 1;
        Ok(Held {
            open: self.open.clone(),
            holder,
        })
    }
}
