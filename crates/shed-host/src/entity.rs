//! An entity's page: [`Host::entity`] reads one entity of an app under the
//! rule book — its components now (the app's own read of it, a ref shown
//! as `{eid, name}`), who made and last changed it, its edges both ways,
//! and its history newest first, each version with its write
//! (`jeff/runs@12`), when, who, via which agent, through which door,
//! command and client, and what it changed, field by field (before →
//! after). The read itself is the act's (`act.rs`).

use serde::Serialize;
use serde_json::Value;
use shed_store::undo::{EntityRecord, Version};

use crate::access::{Act, may};
use crate::answer::Answer;
use crate::texts::count;
use crate::{Caller, Host, HostError};

/// One entity of an app, as its page shows it.
#[derive(Debug, Clone, Serialize)]
pub struct EntityView {
    /// The app it is in (`jeff/runs`).
    pub app: String,
    /// Its row as the app's read answers it now — `kind`, `entity` (eid,
    /// num, version, alias), each component it wears with its columns (a
    /// ref as `{eid, name}`), `created` and `updated` — or `None` once
    /// tombstoned.
    pub now: Option<Value>,
    /// Its eid, alias, version and tombstone; `created`/`updated` with the
    /// person's handle and the agent; its edges out and in; its versions
    /// newest first, each with its write, stamp, door/command/client where
    /// kept, and `changed` (field, before, after).
    #[serde(flatten)]
    pub record: EntityRecord,
    /// Whether the caller may undo a write of this app (the rule book's
    /// `Act::Undo`), for a page's Undo button; not sent.
    #[serde(skip)]
    pub may_undo: bool,
}

impl Host {
    /// One entity of `app` (`space/slug`, or a slug of the caller's
    /// spaces), named by eid or by its alias while it is live, read as
    /// `caller` may read the app: an outsider of a private app is told
    /// `no app <app>`, as for an app nobody made. The text: `jeff/runs:
    /// <eid> at version 3 — 3 versions, 1 edge out, 0 in` (`, tombstoned`
    /// after the version when it is), then a line per version, newest
    /// first ([`version_line`]).
    pub async fn entity(
        &self,
        caller: &Caller,
        app: &str,
        eid_or_alias: &str,
    ) -> Result<Answer<EntityView>, HostError> {
        let (app, standing) = self.named_app(caller, app).await?;
        let declared = app.manifest.vocab.components.keys().map(String::as_str);
        let components: Vec<&str> = shed_manifest::PLATFORM_COMPONENTS
            .iter()
            .copied()
            .chain(declared)
            .collect();
        let (now, record) = self
            .read_entity(&app, standing, eid_or_alias, &components)
            .await?;
        let tombstoned = if record.tombstoned {
            ", tombstoned"
        } else {
            ""
        };
        let mut text = format!(
            "{}: {} at version {}{tombstoned} — {}, {} out, {} in",
            app.name,
            record.eid,
            record.version,
            count(
                record.versions.len() + record.older_versions,
                "version",
                "versions"
            ),
            count(record.edges_out.len(), "edge", "edges"),
            record.edges_in.len(),
        );
        for version in &record.versions {
            text.push('\n');
            text.push_str(&version_line(version));
        }
        Ok(Answer {
            text,
            data: EntityView {
                app: app.name.clone(),
                now,
                record,
                may_undo: may(app.subject(), standing, Act::Undo).is_ok(),
            },
        })
    }
}

/// One version as a line: `version 2 — jeff/runs@7 at <time> by @ada
/// (agent:job-3) through broker log_run: jog.miles 5 → 6; alias "tue" →
/// null` (the door, command and client where its write kept them — `from
/// Claude (claimed)` after the command, unless the client is the job `via`
/// names; each value as JSON).
fn version_line(version: &Version) -> String {
    let stamp = &version.stamp;
    let via = stamp
        .via
        .as_ref()
        .map(|via| format!(" ({via})"))
        .unwrap_or_default();
    let through = version
        .through
        .as_ref()
        .map(|t| {
            let command = t
                .command
                .as_ref()
                .map(|c| format!(" {c}"))
                .unwrap_or_default();
            // A job's client is the job its `via` already names.
            let client = t
                .client
                .as_ref()
                .filter(|client| crate::activity::job_of(stamp.via.as_deref()) != Some(client))
                .map(|client| format!(" from {client}"))
                .unwrap_or_default();
            format!(" through {}{command}{client}", t.door)
        })
        .unwrap_or_default();
    let changed: Vec<String> = version
        .changed
        .iter()
        .map(|c| format!("{} {} → {}", c.field, c.before, c.after))
        .collect();
    format!(
        "version {} — {} at {} by @{}{via}{through}: {}",
        version.version,
        version.write,
        stamp.at,
        stamp.by.handle,
        changed.join("; ")
    )
}
