//! Rate limits by the caller's address, for what anyone may ask without
//! signing in: a budget for each address and one for all addresses together,
//! each a burst that refills at a steady pace (the generic cell rate
//! algorithm: one instant kept a budget, the time it would be whole again).
//! A caller is counted as `client_address::counted` says (IPv6 by its
//! /64).
//!
//! Everyone's budget keeps a reserve ([`Reserve`]) for addresses new to it:
//! once all but the reserve is spent, an address that took one within the
//! reserve's window is refused, and only the others may take what is left —
//! so a handful of addresses that spent everyone's budget are refused
//! themselves, while a newcomer still takes one. And since an address may
//! take from everyone's budget only while it is above the reserve, what
//! refills goes to the reserve first.
//!
//! The addresses remembered are bounded ([`MOST_ADDRESSES`]): one whose
//! budget is whole again and that took none within the reserve's window is
//! forgotten first, and when every one matters, the one that matters the
//! shortest — so a caller with more addresses than that may be counted
//! afresh, but never past the budget of all.
//!
//! The clock is the caller's: every decision takes its `now`, so the tests
//! move time by hand.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The most addresses whose budgets are remembered: ≈ 60 bytes each, so
/// ≈ 250 KB at most, far more than the callers of one burst.
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
    /// How many are taken at once from a full budget.
    pub const fn burst(self) -> u32 {
        self.burst
    }

    /// How far ahead of now a budget's whole-again instant may be and
    /// still take one more: all of the burst but the one being taken.
    fn slack(self) -> Duration {
        self.every * self.burst.saturating_sub(1)
    }

    /// This budget with `held` of its burst kept back.
    fn less(self, held: u32) -> Rate {
        Rate {
            burst: self.burst.saturating_sub(held),
            ..self
        }
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

/// The part of everyone's budget only addresses new to it may take: once
/// all but `held` of it is spent, an address that took one within `window`
/// is refused. `held` is below the overall burst.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reserve {
    /// How many of everyone's budget are kept for newcomers.
    pub(crate) held: u32,
    /// How long after its last take an address is new again.
    pub(crate) window: Duration,
}

impl Reserve {
    /// How many of everyone's budget are kept for newcomers.
    pub const fn held(self) -> u32 {
        self.held
    }
}

/// Which budget ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spent {
    /// The caller's address's.
    Address,
    /// All addresses' together.
    Everyone,
    /// All addresses' but its reserve, which the caller's address may not
    /// take: it took one within the reserve's window.
    Reserve,
}

/// A refusal: which budget ran out, and how long until it takes one more
/// (whole seconds, at least one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wait {
    /// Which budget ran out: the caller's address's, everyone's, or
    /// everyone's but the reserve the address may not take.
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
    reserve: Reserve,
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    /// What is remembered of each address.
    addresses: HashMap<IpAddr, Seen>,
    /// All addresses' whole-again instant.
    everyone: Option<Instant>,
}

/// What is remembered of an address.
#[derive(Debug, Clone, Copy)]
struct Seen {
    /// Its budget's whole-again instant.
    whole_at: Instant,
    /// When it last took one.
    last: Instant,
}

impl Seen {
    /// Until when it matters: its budget is spent, or it may not take from
    /// the reserve.
    fn matters_until(self, window: Duration) -> Instant {
        self.whole_at.max(self.last + window)
    }
}

impl Limiter {
    pub(crate) fn new(per_address: Rate, overall: Rate, reserve: Reserve) -> Limiter {
        Limiter {
            per_address,
            overall,
            reserve,
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
        let seen = kept.addresses.get(&address).copied();
        let address_whole = self
            .per_address
            .take(seen.map(|seen| seen.whole_at), now)
            .map_err(|w| wait(Spent::Address, w))?;
        let everyone = self.overall.take(kept.everyone, now);
        let everyone_whole = match self.new_again_in(seen, now) {
            None => everyone.map_err(|w| wait(Spent::Everyone, w))?,
            Some(new_again) => self
                .overall
                .less(self.reserve.held)
                .take(kept.everyone, now)
                .map_err(|above_reserve| {
                    // It may take one once everyone's budget is above its
                    // reserve again, or once it is new and one is left.
                    let as_newcomer = everyone.err().unwrap_or_default().max(new_again);
                    wait(Spent::Reserve, above_reserve.min(as_newcomer))
                })?,
        };
        kept.everyone = Some(everyone_whole);
        if !kept.addresses.contains_key(&address) && kept.addresses.len() >= MOST_ADDRESSES {
            kept.make_room(now, self.reserve.window);
        }
        let seen = Seen {
            whole_at: address_whole,
            last: now,
        };
        kept.addresses.insert(address, seen);
        Ok(())
    }

    /// How long until an address `seen` so may take from the reserve:
    /// `None` when it may now (it took none within the window, or there is
    /// no reserve).
    fn new_again_in(&self, seen: Option<Seen>, now: Instant) -> Option<Duration> {
        let new_at = seen?.last + self.reserve.window;
        (self.reserve.held > 0 && new_at > now).then(|| new_at - now)
    }
}

impl Kept {
    /// Forgets the addresses that no longer matter, or else the one that
    /// matters the shortest.
    fn make_room(&mut self, now: Instant, window: Duration) {
        self.addresses
            .retain(|_, seen| seen.matters_until(window) > now);
        if self.addresses.len() < MOST_ADDRESSES {
            return;
        }
        let nearest = self
            .addresses
            .iter()
            .min_by_key(|(_, seen)| seen.matters_until(window))
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

    /// No part of everyone's budget kept back.
    const NO_RESERVE: Reserve = Reserve {
        held: 0,
        window: MINUTE,
    };

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
            NO_RESERVE,
        )
    }

    /// Three from an address, ten from everyone — four of them kept for
    /// addresses that took none in the last ten minutes.
    fn with_a_reserve() -> Limiter {
        Limiter::new(
            Rate {
                burst: 3,
                every: MINUTE,
            },
            Rate {
                burst: 10,
                every: Duration::from_secs(10),
            },
            Reserve {
                held: 4,
                window: 10 * MINUTE,
            },
        )
    }

    fn refused(spent: Spent, seconds: u64) -> Result<(), Wait> {
        Err(Wait { spent, seconds })
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
            NO_RESERVE,
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

    #[test]
    fn once_everyones_budget_is_down_to_its_reserve_only_newcomers_take_it() {
        let limiter = with_a_reserve();
        let start = Instant::now();
        // Two flooders spend all of everyone's budget but the reserve…
        for flooder in [1, 2] {
            for _ in 0..3 {
                assert_eq!(limiter.take(from(flooder), start), Ok(()));
            }
        }
        // …and a third, new, takes one of the reserve, then is refused:
        // 70 s of everyone's budget are spent, 50 s may be without the
        // reserve, so it waits 20 s (not the ten minutes until it is new).
        assert_eq!(limiter.take(from(3), start), Ok(()));
        assert_eq!(limiter.take(from(3), start), refused(Spent::Reserve, 20));
        // Newcomers take the rest; past it, everyone waits.
        for newcomer in 4..=6 {
            assert_eq!(limiter.take(from(newcomer), start), Ok(()));
        }
        assert_eq!(limiter.take(from(7), start), refused(Spent::Everyone, 10));
        // A flooder whose own budget is spent hears about its own first.
        assert_eq!(limiter.take(from(1), start), refused(Spent::Address, 60));
    }

    #[test]
    fn what_refills_goes_to_the_reserve_first() {
        let limiter = with_a_reserve();
        let start = Instant::now();
        for flooder in 1..=3 {
            for _ in 0..2 {
                assert_eq!(limiter.take(from(flooder), start), Ok(()));
            }
        }
        for newcomer in 4..=7 {
            assert_eq!(limiter.take(from(newcomer), start), Ok(()));
        }
        // Forty seconds on, four are back: the reserve, for newcomers only.
        let refilled = start + Duration::from_secs(40);
        assert_eq!(limiter.take(from(1), refilled), refused(Spent::Reserve, 10));
        assert_eq!(limiter.take(from(8), refilled), Ok(()));
        assert_eq!(limiter.take(from(2), refilled), refused(Spent::Reserve, 20));
        // Once the reserve is whole again, what refills past it is anyone's.
        let past = start + Duration::from_secs(70);
        assert_eq!(limiter.take(from(2), past), Ok(()));
        assert_eq!(limiter.take(from(3), past), Ok(()));
        assert_eq!(limiter.take(from(1), past), refused(Spent::Reserve, 10));
    }

    #[test]
    fn an_address_is_new_again_a_window_after_its_last_take() {
        // Everyone's budget refills so slowly that it stays at its reserve.
        let limiter = Limiter::new(
            Rate {
                burst: 3,
                every: MINUTE,
            },
            Rate {
                burst: 10,
                every: 60 * MINUTE,
            },
            Reserve {
                held: 4,
                window: 10 * MINUTE,
            },
        );
        let start = Instant::now();
        for address in 1..=6 {
            assert_eq!(limiter.take(from(address), start), Ok(()));
        }
        // Told the ten minutes until it is new, not the hour until the
        // budget is above its reserve.
        assert_eq!(limiter.take(from(1), start), refused(Spent::Reserve, 600));
        assert_eq!(limiter.take(from(1), start + 10 * MINUTE), Ok(()));
    }
}
