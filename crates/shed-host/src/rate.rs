//! Rate limits by the caller's address, for what anyone may ask without
//! signing in: a budget for each address and one for all addresses together,
//! each a burst that refills at a steady pace (the generic cell rate
//! algorithm: one instant kept a budget, the time it would be whole again).
//! A caller is counted as `client_address::counted` says (IPv6 by its
//! /64). The addresses remembered are bounded ([`MOST_ADDRESSES`]):
//! one whose budget is whole again is forgotten first, and when every one
//! is spending, the one nearest whole — so a caller with more addresses
//! than that may be counted afresh, but never past the budget of all.
//!
//! The clock is the caller's: every decision takes its `now`, so the tests
//! move time by hand.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The most addresses whose budgets are remembered: ≈ 40 bytes each, so
/// ≈ 160 KB at most, far more than the callers of one burst.
pub const MOST_ADDRESSES: usize = 4096;

/// A budget: up to `burst` at once, then one more each `every`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    /// How many are taken at once from a full budget.
    pub(crate) burst: u32,
    /// How often one more is taken once the burst is spent: the budget
    /// wins one back each `every`.
    pub(crate) every: Duration,
}

impl Rate {
    /// How far ahead of now a budget's whole-again instant may be and
    /// still take one more: all of the burst but the one being taken.
    fn slack(self) -> Duration {
        self.every * self.burst.saturating_sub(1)
    }

    /// The budget's whole-again instant after one more is taken at `now`,
    /// or how long until one may be.
    fn take(self, whole_at: Option<Instant>, now: Instant) -> Result<Instant, Duration> {
        let from = whole_at.filter(|at| *at > now).unwrap_or(now);
        let ahead = from - now;
        if ahead > self.slack() {
            return Err(ahead - self.slack());
        }
        Ok(from + self.every)
    }
}

/// Which budget ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spent {
    /// The caller's address's.
    Address,
    /// All addresses' together.
    Everyone,
}

/// A refusal: which budget ran out, and how long until it takes one more
/// (whole seconds, at least one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wait {
    /// Which budget ran out: the caller's address's, or everyone's.
    pub(crate) spent: Spent,
    /// Whole seconds until that budget takes one more, at least one
    /// (rounded up): what `Retry-After` says.
    pub(crate) seconds: u64,
}

/// The budgets of every address and of all of them together.
#[derive(Debug)]
pub(crate) struct Limiter {
    per_address: Rate,
    overall: Rate,
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    /// Each address's whole-again instant.
    addresses: HashMap<IpAddr, Instant>,
    /// All addresses' whole-again instant.
    everyone: Option<Instant>,
}

impl Limiter {
    pub(crate) fn new(per_address: Rate, overall: Rate) -> Limiter {
        Limiter {
            per_address,
            overall,
            kept: Mutex::new(Kept::default()),
        }
    }

    /// Takes one from the budgets of `peer`'s address and of everyone at
    /// `now`, or takes nothing and says how long to wait.
    pub(crate) fn take(&self, peer: Option<IpAddr>, now: Instant) -> Result<(), Wait> {
        let address = crate::client_address::counted(peer);
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let wait = |spent, wait: Duration| Wait {
            spent,
            seconds: wait.as_secs() + u64::from(wait.subsec_nanos() > 0),
        };
        let address_whole = self
            .per_address
            .take(kept.addresses.get(&address).copied(), now)
            .map_err(|w| wait(Spent::Address, w))?;
        let everyone_whole = self
            .overall
            .take(kept.everyone, now)
            .map_err(|w| wait(Spent::Everyone, w))?;
        kept.everyone = Some(everyone_whole);
        if !kept.addresses.contains_key(&address) && kept.addresses.len() >= MOST_ADDRESSES {
            kept.make_room(now);
        }
        kept.addresses.insert(address, address_whole);
        Ok(())
    }
}

impl Kept {
    /// Forgets the addresses whose budgets are whole again, or else the one
    /// nearest whole.
    fn make_room(&mut self, now: Instant) {
        self.addresses.retain(|_, whole_at| *whole_at > now);
        if self.addresses.len() < MOST_ADDRESSES {
            return;
        }
        let nearest = self
            .addresses
            .iter()
            .min_by_key(|(_, whole_at)| **whole_at)
            .map(|(address, _)| *address);
        if let Some(address) = nearest {
            self.addresses.remove(&address);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    fn limiter() -> Limiter {
        Limiter::new(
            Rate {
                burst: 3,
                every: MINUTE,
            },
            Rate {
                burst: 5,
                every: Duration::from_secs(10),
            },
        )
    }

    fn from(last: u8) -> Option<IpAddr> {
        Some(IpAddr::from([192, 0, 2, last]))
    }

    #[test]
    fn an_address_has_its_burst_then_one_each_period() {
        let limiter = limiter();
        let start = Instant::now();
        for _ in 0..3 {
            assert_eq!(limiter.take(from(1), start), Ok(()));
        }
        assert_eq!(
            limiter.take(from(1), start),
            Err(Wait {
                spent: Spent::Address,
                seconds: 60
            })
        );
        assert_eq!(
            limiter.take(from(1), start + Duration::from_millis(59_500)),
            Err(Wait {
                spent: Spent::Address,
                seconds: 1
            })
        );
        assert_eq!(limiter.take(from(1), start + MINUTE), Ok(()));
        assert!(limiter.take(from(1), start + MINUTE).is_err());
    }

    #[test]
    fn every_address_together_has_a_budget_of_its_own() {
        let limiter = limiter();
        let start = Instant::now();
        for last in 1..=5 {
            assert_eq!(limiter.take(from(last), start), Ok(()));
        }
        assert_eq!(
            limiter.take(from(6), start),
            Err(Wait {
                spent: Spent::Everyone,
                seconds: 10
            })
        );
        // A refusal takes nothing: the address still has its whole burst.
        let later = start + Duration::from_secs(30);
        for _ in 0..3 {
            assert_eq!(limiter.take(from(6), later), Ok(()));
        }
    }

    #[test]
    fn the_addresses_remembered_stay_bounded() {
        let limiter = Limiter::new(
            Rate {
                burst: 1,
                every: MINUTE,
            },
            Rate {
                burst: u32::MAX,
                every: Duration::from_nanos(1),
            },
        );
        let start = Instant::now();
        for n in 0..(MOST_ADDRESSES as u32 + 100) {
            let address = IpAddr::from((0x0a00_0000 + n).to_be_bytes());
            let now = start + Duration::from_millis(u64::from(n));
            assert_eq!(limiter.take(Some(address), now), Ok(()));
        }
        let kept = limiter.kept.lock().unwrap();
        assert_eq!(kept.addresses.len(), MOST_ADDRESSES);
        // The ones forgotten are those nearest whole: the first.
        assert!(!kept.addresses.contains_key(&IpAddr::from([10, 0, 0, 0])));
    }
}
