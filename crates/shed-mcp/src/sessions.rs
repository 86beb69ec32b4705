//! The bound on the MCP door's sessions. Only the legacy lifecycle (an
//! `initialize` answered with an `Mcp-Session-Id`) keeps anything between
//! requests — 2026-07-28's sessionless requests hold nothing and are not
//! counted. A session belongs to the person of its `initialize`'s bearer
//! token or, signed out (or with a token the host does not know), to the
//! address it came from; past a cap an `initialize` is refused with a
//! [`SessionRefusal`]. A session that asks nothing after its `initialize`
//! is closed after [`UNUSED_SESSION_TIMEOUT`]; any other once it has asked
//! nothing for [`IDLE_SESSION_TIMEOUT`]. Both are closed here, through the
//! ledger, so their places come back: rmcp's own keep-alive stops a
//! session's worker without telling its session manager, which would leave
//! the place taken for good.
//!
//! [`Sessions`] is rmcp's in-memory session manager with a ledger beside
//! it: the HTTP door reserves a place before the `initialize` reaches rmcp
//! and binds it to the session id rmcp answers with; closing the session
//! gives the place back.

use std::{
    collections::HashMap,
    net::IpAddr,
    sync::{Arc, Mutex, MutexGuard, PoisonError},
    time::Duration,
};

use futures::Stream;
use rmcp::{
    model::{ClientJsonRpcMessage, ServerJsonRpcMessage},
    transport::streamable_http_server::{
        SessionId, SessionManager,
        session::{
            ServerSseMessage,
            local::{LocalSessionManager, LocalSessionManagerError},
        },
    },
};
use tokio::time::Instant;

/// The most sessions held at once: at ≈136 KB a session, ≈140 MB at most.
pub const MAX_SESSIONS: usize = 1024;

/// The most sessions one person holds: their clients and agents, with room
/// for the sessions of clients that restarted without closing theirs.
pub const MAX_SESSIONS_PER_PERSON: usize = 64;

/// The most sessions opened signed out, all addresses together: a quarter of
/// [`MAX_SESSIONS`], so strangers cannot take the places people need.
pub const MAX_SIGNED_OUT_SESSIONS: usize = 256;

/// The most sessions opened signed out from one address: a machine's few
/// clients, each restarted a few times within the idle keep-alive.
pub const MAX_SIGNED_OUT_SESSIONS_PER_ADDRESS: usize = 16;

/// How long a session may ask nothing after its `initialize`: a client asks
/// its first request (`tools/list`) right after the handshake.
pub const UNUSED_SESSION_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a session may ask nothing before it is closed: rmcp's own
/// keep-alive, five minutes — a client quiet that long has gone.
pub const IDLE_SESSION_TIMEOUT: Duration = Duration::from_secs(5 * 60);

pub use shed_host::client_address::IPV6_ADDRESS_BITS;

/// Why a new session was refused: the cap it would pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SessionRefusal {
    /// Every place is taken.
    #[error(
        "shed already holds {MAX_SESSIONS} MCP sessions, the most it keeps at once; try again in a few minutes, or connect with a client speaking MCP 2026-07-28, which needs no session"
    )]
    Full,
    /// Every place for signed-out sessions is taken.
    #[error(
        "shed already holds {MAX_SIGNED_OUT_SESSIONS} MCP sessions opened signed out, the most it keeps; sign in (send `Authorization: Bearer <token>` with a token from `shed token create <handle>`) or try again in a few minutes"
    )]
    SignedOutFull,
    /// The person holds their most.
    #[error(
        "you already hold {MAX_SESSIONS_PER_PERSON} MCP sessions, the most shed keeps for one person; close one you no longer use (HTTP DELETE /mcp with its Mcp-Session-Id) or wait a few minutes for an idle one to end"
    )]
    PersonFull,
    /// The address holds its most signed-out sessions.
    #[error(
        "your address already holds {MAX_SIGNED_OUT_SESSIONS_PER_ADDRESS} MCP sessions opened signed out, the most shed keeps for one address; close one (HTTP DELETE /mcp with its Mcp-Session-Id), wait a few minutes for an idle one to end, or sign in with a token from `shed token create <handle>`"
    )]
    AddressFull,
}

/// Who holds a session, for counting.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Owner {
    /// A person, by eid — whether their token or their agent's opened it.
    Person(String),
    /// Signed out: the peer address, an IPv6 one by its first
    /// [`IPV6_ADDRESS_BITS`]. Unknown (no `ConnectInfo`) is the unspecified
    /// address, one for all.
    Address(IpAddr),
}

impl Owner {
    /// The owner of a signed-out session from `peer`.
    pub(crate) fn address(peer: Option<IpAddr>) -> Owner {
        Owner::Address(shed_host::client_address::counted(peer))
    }
}

/// The places taken, and by whom.
#[derive(Debug, Default)]
struct Ledger {
    /// Sessions and reservations, by owner.
    held: HashMap<Owner, usize>,
    /// All sessions and reservations.
    total: usize,
    /// Those of signed-out owners.
    signed_out: usize,
    /// The owner of each live session.
    owners: HashMap<SessionId, Owner>,
    /// When each live session is closed unless it asks something first.
    deadlines: HashMap<SessionId, Instant>,
}

/// The gauge of sessions open (and places reserved for sessions opening).
const OPEN_SESSIONS: &str = "shed_mcp_sessions_open";

impl Ledger {
    /// Takes a place for `owner`, or says which cap it would pass.
    fn take(&mut self, owner: &Owner) -> Result<(), SessionRefusal> {
        let held = self.held.get(owner).copied().unwrap_or(0);
        let signed_out = matches!(owner, Owner::Address(_));
        if signed_out && held >= MAX_SIGNED_OUT_SESSIONS_PER_ADDRESS {
            return Err(SessionRefusal::AddressFull);
        }
        if !signed_out && held >= MAX_SESSIONS_PER_PERSON {
            return Err(SessionRefusal::PersonFull);
        }
        if signed_out && self.signed_out >= MAX_SIGNED_OUT_SESSIONS {
            return Err(SessionRefusal::SignedOutFull);
        }
        if self.total >= MAX_SESSIONS {
            return Err(SessionRefusal::Full);
        }
        *self.held.entry(owner.clone()).or_default() += 1;
        self.total += 1;
        if signed_out {
            self.signed_out += 1;
        }
        metrics::gauge!(OPEN_SESSIONS).set(self.total as f64);
        Ok(())
    }

    /// Gives `owner`'s place back.
    fn give_back(&mut self, owner: &Owner) {
        if let Some(held) = self.held.get_mut(owner) {
            *held -= 1;
            if *held == 0 {
                self.held.remove(owner);
            }
            self.total -= 1;
            if matches!(owner, Owner::Address(_)) {
                self.signed_out -= 1;
            }
            metrics::gauge!(OPEN_SESSIONS).set(self.total as f64);
        }
    }
}

/// rmcp's local session manager, counted. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Sessions {
    local: Arc<LocalSessionManager>,
    ledger: Arc<Mutex<Ledger>>,
    /// [`UNUSED_SESSION_TIMEOUT`] and [`IDLE_SESSION_TIMEOUT`] (shorter in tests).
    unused_for: Duration,
    idle_for: Duration,
}

impl Default for Sessions {
    fn default() -> Sessions {
        Sessions::closing_after(UNUSED_SESSION_TIMEOUT, IDLE_SESSION_TIMEOUT)
    }
}

/// A place taken for a session about to open; given back when dropped
/// unless [`Sessions::bind`] gave it a session.
pub(crate) struct Reservation {
    sessions: Sessions,
    owner: Option<Owner>,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if let Some(owner) = self.owner.take() {
            self.sessions.ledger().give_back(&owner);
        }
    }
}

impl Sessions {
    /// Sessions closed after `unused_for` when they ask nothing after their
    /// `initialize`, and after `idle_for` without a request otherwise.
    fn closing_after(unused_for: Duration, idle_for: Duration) -> Sessions {
        Sessions {
            local: Arc::default(),
            ledger: Arc::default(),
            unused_for,
            idle_for,
        }
    }

    fn ledger(&self) -> MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes a place for a session `owner` is opening.
    pub(crate) fn reserve(&self, owner: Owner) -> Result<Reservation, SessionRefusal> {
        self.ledger().take(&owner)?;
        Ok(Reservation {
            sessions: self.clone(),
            owner: Some(owner),
        })
    }

    /// Holds the reserved place until session `id` closes. A session that
    /// closed already gives it back at once.
    pub(crate) async fn bind(&self, mut reservation: Reservation, id: SessionId) {
        let Some(owner) = reservation.owner.take() else {
            return;
        };
        self.ledger().owners.insert(id.clone(), owner);
        // Recorded first, then checked: a close running meanwhile either
        // finds the record or has already removed the session checked here.
        if !matches!(self.local.has_session(&id).await, Ok(true)) {
            self.forget(&id);
        }
    }

    /// Gives back the place of session `id`, if it held one.
    fn forget(&self, id: &SessionId) {
        let mut ledger = self.ledger();
        ledger.deadlines.remove(id);
        if let Some(owner) = ledger.owners.remove(id) {
            ledger.give_back(&owner);
        }
    }

    /// Notes that session `id` asked something: it lives `idle_for` more.
    fn used(&self, id: &SessionId) {
        let deadline = Instant::now() + self.idle_for;
        if let Some(at) = self.ledger().deadlines.get_mut(id) {
            *at = deadline;
        }
    }

    /// Closes the new session `id` once it passes its deadline: `unused_for`
    /// from now, pushed on by every request ([`Sessions::used`]).
    fn close_when_idle(&self, id: SessionId) {
        let first = Instant::now() + self.unused_for;
        self.ledger().deadlines.insert(id.clone(), first);
        let sessions = self.clone();
        tokio::spawn(async move {
            loop {
                // Gone from the ledger: closed already.
                let Some(deadline) = sessions.ledger().deadlines.get(&id).copied() else {
                    return;
                };
                if Instant::now() < deadline {
                    tokio::time::sleep_until(deadline).await;
                    continue;
                }
                tracing::debug!(session = %id, "closing a session that asked nothing lately");
                if let Err(error) = sessions.close_session(&id).await {
                    tracing::warn!(%error, "could not close an idle session");
                }
                return;
            }
        });
    }
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.local.create_session().await?;
        self.close_when_idle(id.clone());
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.local.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.local.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let closed = self.local.close_session(id).await;
        self.forget(id);
        closed
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.used(id);
        self.local.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        // A notification or a reply is no request: `initialized` alone
        // leaves a session unused.
        self.local.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.used(id);
        self.local.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.used(id);
        self.local.resume(id, last_event_id).await
    }
}

#[cfg(test)]
mod tests {
    use std::net::Ipv6Addr;

    use super::*;

    fn signed_out(last: u8) -> Owner {
        Owner::address(Some(IpAddr::from([192, 0, 2, last])))
    }

    #[test]
    fn an_address_past_its_cap_is_refused_and_others_are_not() {
        let sessions = Sessions::default();
        let held: Vec<_> = (0..MAX_SIGNED_OUT_SESSIONS_PER_ADDRESS)
            .map(|_| sessions.reserve(signed_out(1)).unwrap())
            .collect();
        assert_eq!(
            sessions.reserve(signed_out(1)).err(),
            Some(SessionRefusal::AddressFull)
        );
        assert!(sessions.reserve(signed_out(2)).is_ok());
        drop(held);
        assert!(sessions.reserve(signed_out(1)).is_ok());
    }

    #[test]
    fn signed_out_sessions_leave_room_for_people() {
        let sessions = Sessions::default();
        let _held: Vec<_> = (0..MAX_SIGNED_OUT_SESSIONS)
            .map(|i| {
                let address = Ipv6Addr::from_bits((i as u128) << 64);
                sessions
                    .reserve(Owner::address(Some(address.into())))
                    .unwrap()
            })
            .collect();
        assert_eq!(
            sessions.reserve(signed_out(1)).err(),
            Some(SessionRefusal::SignedOutFull)
        );
        assert!(sessions.reserve(Owner::Person("ada".into())).is_ok());
    }

    #[test]
    fn a_person_past_their_cap_is_refused() {
        let sessions = Sessions::default();
        let ada = || Owner::Person("ada".into());
        let _held: Vec<_> = (0..MAX_SESSIONS_PER_PERSON)
            .map(|_| sessions.reserve(ada()).unwrap())
            .collect();
        assert_eq!(
            sessions.reserve(ada()).err(),
            Some(SessionRefusal::PersonFull)
        );
    }

    #[test]
    fn one_ipv6_network_is_one_address() {
        let one: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let other: IpAddr = "2001:db8:1:2:ffff::9".parse().unwrap();
        let elsewhere: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(Owner::address(Some(one)), Owner::address(Some(other)));
        assert_ne!(Owner::address(Some(one)), Owner::address(Some(elsewhere)));
        let mapped: IpAddr = "::ffff:192.0.2.1".parse().unwrap();
        assert_eq!(Owner::address(Some(mapped)), signed_out(1));
    }

    #[tokio::test]
    async fn a_session_idle_past_its_time_is_closed_and_its_place_given_back() {
        let sessions =
            Sessions::closing_after(Duration::from_millis(100), Duration::from_millis(300));
        let ada = || Owner::Person("ada".into());
        let held = sessions.reserve(ada()).unwrap();
        let (id, _transport) = sessions.create_session().await.unwrap();
        sessions.bind(held, id.clone()).await;
        // Used in time, it outlives the unused timeout…
        sessions.used(&id);
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(sessions.has_session(&id).await.unwrap());
        // …and is closed once idle, its place given back.
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert!(!sessions.has_session(&id).await.unwrap());
        assert_eq!(sessions.ledger().total, 0);
        assert!(sessions.ledger().held.is_empty());
    }
}
