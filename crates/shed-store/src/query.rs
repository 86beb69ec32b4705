//! Running a filter line, in three stages: [`plan`] checks the line against
//! the app's schema and types every value (every refusal is raised there),
//! [`sql`] writes the plan as one SELECT in the backend's dialect with every
//! value a bound parameter, and each backend's `rows` runs it and shapes the
//! rows as DESIGN says. Every statement is filtered on the app.

pub(crate) mod cursor;
pub(crate) mod plan;
#[cfg(test)]
pub(crate) mod plans;
pub(crate) mod sql;

use std::pin::pin;
use std::task::{Context, Poll, Waker};

use crate::StoreError;

/// The answer of a future that never waits — a plan whose lookups read a
/// connection in place (SQLite's) — polled once, on the caller's thread.
pub(crate) fn at_once<T>(f: impl Future<Output = Result<T, StoreError>>) -> Result<T, StoreError> {
    match pin!(f).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(answer) => answer,
        Poll::Pending => Err(StoreError::Internal(
            "a read that never waits waited".into(),
        )),
    }
}
