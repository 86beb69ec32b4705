//! Group commit on PostgreSQL: the applies of a process share transactions,
//! and so the flush of each commit's WAL. An apply is queued; when no group
//! is running, its caller starts a task that takes every apply waiting (up
//! to [`MAX_GROUP`]), runs them one after another in one transaction (its
//! `BEGIN` sent with the first apply's statements), each in a savepoint of
//! its own when there are several, commits once and only then answers each
//! caller — so an answered write is durable (`synchronous_commit` on), and
//! a write refused in a group is rolled back to its savepoint alone while
//! the others land. The task takes the next group as long as applies wait.
//!
//! Each apply locks its app's row (`postgres/apply.rs`), held to the
//! group's commit: writers of one app on other servers wait for it, so the
//! `was` checks and versions hold across servers. A group runs its applies
//! ordered by app, so two groups on two servers take their apps' locks in
//! the same order and never wait on each other in a cycle.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use deadpool_postgres::Pool;
use tokio::sync::oneshot;

use super::apply::{self, Pipeline};
use crate::wire::Bundle;
use crate::write_metrics::{COMMIT_SECONDS, WRITE_GROUP_SIZE};
use crate::{Actor, Applied, StoreError};

/// The most applies one group commit takes. Each runs in a savepoint, a
/// subtransaction with an id of its own once it writes; PostgreSQL keeps
/// 64 of them per transaction where every snapshot sees them, and past
/// that every session's snapshots read `pg_subtrans` from disk.
pub(crate) const MAX_GROUP: usize = 64;

/// What an apply answers: what it wrote, and whether it made the app.
pub(crate) type Answer = Result<(Applied, bool), StoreError>;

/// An apply waiting for its group.
struct Job {
    app: String,
    actor: Actor,
    bundles: Vec<Bundle>,
    expect: Option<u64>,
    answer: oneshot::Sender<Answer>,
}

/// The applies waiting, and whether a task is taking them.
#[derive(Default)]
struct Queue {
    jobs: Vec<Job>,
    running: bool,
}

/// The group commit of one process.
pub(crate) struct Writer {
    pool: Pool,
    queue: Arc<Mutex<Queue>>,
}

impl Writer {
    pub(crate) fn new(pool: Pool) -> Writer {
        Writer {
            pool,
            queue: Arc::default(),
        }
    }

    /// Queues an apply and waits for its group's commit: traced as every
    /// store write is (a "store write" span).
    #[tracing::instrument(level = "debug", name = "store write", skip_all)]
    pub(crate) async fn apply(
        &self,
        app: &str,
        actor: &Actor,
        bundles: Vec<Bundle>,
        expect: Option<u64>,
    ) -> Answer {
        let (answer, answered) = oneshot::channel();
        let job = Job {
            app: app.to_string(),
            actor: actor.clone(),
            bundles,
            expect,
            answer,
        };
        let start = {
            let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
            queue.jobs.push(job);
            !std::mem::replace(&mut queue.running, true)
        };
        if start {
            tokio::spawn(drain(self.pool.clone(), self.queue.clone()));
        }
        answered.await.unwrap_or_else(|_| {
            Err(StoreError::Internal(
                "the write was dropped before its group committed; nothing of it is acknowledged"
                    .into(),
            ))
        })
    }
}

/// The queue as its task holds it. Its next group is taken under the lock
/// that, when none waits, marks the queue as taken by no task — so an
/// apply queued after that starts another task, and one queued before is
/// in the group. Dropped otherwise (a runtime shut down drops the task
/// mid-group), it marks the queue so itself.
struct Running(Option<Arc<Mutex<Queue>>>);

impl Running {
    /// The applies waiting, up to [`MAX_GROUP`]; `None` when none waits,
    /// the queue then left to the next apply's task.
    fn next_group(&mut self) -> Option<Vec<Job>> {
        let queue = self.0.take()?;
        let mut held = queue.lock().unwrap_or_else(PoisonError::into_inner);
        if held.jobs.is_empty() {
            held.running = false;
            return None;
        }
        let taken = held.jobs.len().min(MAX_GROUP);
        let group = held.jobs.drain(..taken).collect();
        drop(held);
        self.0 = Some(queue);
        Some(group)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(queue) = &self.0 {
            queue.lock().unwrap_or_else(PoisonError::into_inner).running = false;
        }
    }
}

/// Commits groups while applies wait.
async fn drain(pool: Pool, queue: Arc<Mutex<Queue>>) {
    let mut running = Running(Some(queue));
    while let Some(group) = running.next_group() {
        // A group of its own task: one that panics answers its writers
        // (their answers dropped) and the next group still runs.
        let _ = tokio::spawn(commit(pool.clone(), group)).await;
    }
}

/// A group's pooled connection: back to the pool only once its
/// transaction has ended ([`Session::finished`]). Dropped before — the
/// commit failed, a rollback to a savepoint failed, the task panicked or
/// was dropped — the connection is closed, and the server rolls the
/// transaction back, rather than pooled with the transaction open for the
/// next borrower to commit.
struct Session(Option<deadpool_postgres::Client>);

impl Session {
    fn finished(mut self) {
        drop(self.0.take());
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(client) = self.0.take() {
            drop(deadpool_postgres::Object::take(client));
        }
    }
}

/// Runs a group in one transaction and answers each apply once the
/// transaction is committed, or known not to be. An apply runs in a
/// savepoint only when the group holds others: alone, its refusal rolls
/// back the whole transaction.
async fn commit(pool: Pool, mut group: Vec<Job>) {
    group.sort_by(|a, b| a.app.cmp(&b.app));
    let session = match pool.get().await {
        Ok(client) => Session(Some(client)),
        Err(e) => return answer_all(group, &e.into()),
    };
    let Some(client) = &session.0 else {
        return;
    };
    let pipeline = match Pipeline::begin(client).await {
        Ok(pipeline) => pipeline,
        Err(e) => return answer_all(group, &e),
    };
    let savepoints = group.len() > 1;
    let (answers, lost) = run(&pipeline, &group, savepoints).await;
    let answered: Vec<(Job, Answer)> = group.into_iter().zip(answers).collect();
    let kept = answered.iter().filter(|(_, a)| a.is_ok()).count();
    let committed = match lost {
        Some(e) => Err(e),
        None => {
            let started = Instant::now();
            let ended = pipeline.end(kept > 0).await;
            if kept > 0 {
                metrics::histogram!(COMMIT_SECONDS).record(started.elapsed());
                metrics::histogram!(WRITE_GROUP_SIZE).record(kept as f64);
            }
            ended
        }
    };
    drop(pipeline);
    match &committed {
        Ok(()) => session.finished(),
        Err(e) => tracing::error!(error = %e, writes = kept, "a group commit failed"),
    }
    for (job, answer) in answered {
        let answer = match (&committed, answer) {
            (Err(e), Ok(_)) => Err(e.clone()),
            (_, answer) => answer,
        };
        let _ = job.answer.send(answer);
    }
}

/// Runs a group's applies in order on its transaction: each one's answer,
/// and what made the transaction unusable, if anything did (the answer
/// then of every apply not run). A written apply of several leaves its
/// last statements to be answered with the next apply's first wait: when
/// they failed, the next apply ran in an aborted transaction — both are
/// rolled back to the failed one's savepoint and the next runs again.
async fn run(
    pipeline: &Pipeline<'_>,
    group: &[Job],
    savepoints: bool,
) -> (Vec<Answer>, Option<StoreError>) {
    let mut answers: Vec<Answer> = Vec::with_capacity(group.len());
    let lost = async {
        // The apply whose last statements are not yet answered.
        let mut left: Option<usize> = None;
        while let Some(job) = group.get(answers.len()) {
            let answer = apply::apply(
                pipeline,
                &job.app,
                &job.actor,
                &job.bundles,
                job.expect,
                savepoints,
            )
            .await;
            if let Some(before) = left.take()
                && let Some(Err(e)) = pipeline.left_answer()
            {
                answers[before] = Err(e);
                apply::roll_back(pipeline).await?;
                continue;
            }
            let refused = answer.is_err();
            answers.push(answer);
            if savepoints && refused {
                apply::roll_back(pipeline).await?;
            } else if savepoints {
                left = Some(answers.len() - 1);
            }
        }
        if let Some(before) = left {
            pipeline.settle().await?;
            if let Some(Err(e)) = pipeline.left_answer() {
                answers[before] = Err(e);
                apply::roll_back(pipeline).await?;
            }
        }
        Ok::<_, StoreError>(())
    }
    .await
    .err();
    if let Some(e) = &lost {
        answers.resize_with(group.len(), || Err(e.clone()));
    }
    (answers, lost)
}

/// Answers every apply of a group that could not begin.
fn answer_all(group: Vec<Job>, e: &StoreError) {
    for job in group {
        let _ = job.answer.send(Err(e.clone()));
    }
}
