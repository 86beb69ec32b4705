//! The command registry: every deployed app as it answers now — its manifest,
//! and its part of the `commands` listing already rendered, or its place in
//! the trash — kept in memory and keyed by the platform's generation in the
//! database (the last deploy's id and the last trash, restore or purge's).
//! Every call first reads the generation (two indexed rows), so a deploy or
//! a trash made by any process on the same data directory (the CLI while a
//! server runs) is seen by the next call; only the apps whose deploy changed
//! are read again.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use serde_json::{Value, json};
use shed_manifest::Manifest;
use shed_store::lifecycle::Generation;
use shed_store::platform::{AppRecord, Trashed};
use shed_store::{Person, Store};

use crate::address::{PublicUrl, without_scheme};
use crate::names::INDEX_PAGE;
use crate::{Access, HostError};

/// One deployed app, as its last good deploy answers.
#[derive(Debug)]
pub(crate) struct LiveApp {
    /// `space/slug`: the app's name in the store and as `command` takes it.
    pub name: String,
    pub space: String,
    pub slug: String,
    pub title: String,
    pub access: Access,
    /// The deploy's version, v1, v2, …
    pub version: i64,
    /// The deploy's id (platform-wide, only grows).
    pub deploy: i64,
    /// When the deploy was made (RFC 3339), and by whom.
    pub deployed_at: String,
    pub deployed_by: Person,
    /// Set while the app is in the trash: then nothing of it is reached
    /// (see `reach`), and its name is not free.
    pub trashed: Option<Trashed>,
    /// `http://jeff.localhost:7700/runs/`
    pub address: String,
    /// Its deploy holds `index.html`: its address opens a page.
    pub index_page: bool,
    pub manifest: Manifest,
    /// The app's section of the `commands` text, heading included.
    pub listing: String,
    /// The app's rows of the `commands` structured answer.
    pub rows: Vec<Value>,
    /// The bytes of its rows as compact JSON, commas between them: what
    /// they add to a listing's text.
    pub rows_bytes: usize,
    /// The pages its commands name, each once, in the order first named.
    pub views: Vec<String>,
}

impl LiveApp {
    /// The app as the rule book names it in a sentence.
    pub(crate) fn subject(&self) -> crate::access::Subject<'_> {
        crate::access::Subject {
            name: &self.name,
            space: &self.space,
            access: self.access,
        }
    }

    /// `ui://jeff/runs/leaderboard.html`
    pub(crate) fn view_uri(&self, file: &str) -> String {
        format!("ui://{}/{}/{file}", self.space, self.slug)
    }

    /// The names of its commands, in listing order.
    pub(crate) fn command_names(&self) -> Vec<String> {
        self.manifest
            .commands
            .iter()
            .map(|c| c.name.clone())
            .collect()
    }

    fn build(record: &AppRecord, manifest: Manifest, index_page: bool, url: &PublicUrl) -> LiveApp {
        let name = record.name();
        let address = url.app_address(&record.space, &record.slug);
        let access = record.access.parse().unwrap_or_else(|_| {
            tracing::warn!(app = %name, access = %record.access, "unknown access word; treating the app as private");
            Default::default()
        });
        let mut app = LiveApp {
            name,
            space: record.space.clone(),
            slug: record.slug.clone(),
            title: record.title.clone(),
            access,
            version: record.version,
            deploy: record.deploy,
            deployed_at: record.deployed_at.clone(),
            deployed_by: record.deployed_by.clone(),
            trashed: record.trashed.clone(),
            address,
            index_page,
            manifest,
            listing: String::new(),
            rows: Vec::new(),
            rows_bytes: 0,
            views: Vec::new(),
        };
        app.render();
        app
    }

    fn render(&mut self) {
        let at = format!(
            "{}, an app at {}",
            self.title,
            without_scheme(&self.address)
        );
        let mut listing = format!("## {}", self.name);
        for command in &self.manifest.commands {
            let confirm = if command.confirm {
                " — waits for your approval when an agent calls it"
            } else {
                ""
            };
            listing.push_str(&format!(
                "\n{} — {} — {at}{confirm}",
                command.call_shape(),
                command.description
            ));
            let mut row = json!({
                "at": self.name,
                "name": command.name,
                "title": self.title,
                "description": command.description,
                "readOnly": command.read_only(),
                "input": command.input_schema(),
            });
            if let (true, Some(fields)) = (command.confirm, row.as_object_mut()) {
                fields.insert("confirm".into(), Value::Bool(true));
            }
            if let (Some(view), Some(fields)) = (&command.view, row.as_object_mut()) {
                fields.insert("view".into(), Value::String(self.view_uri(view)));
                if !self.views.contains(view) {
                    self.views.push(view.clone());
                }
            }
            self.rows.push(row);
        }
        if let Some(times) = self.manifest.time_arguments_line() {
            listing.push('\n');
            listing.push_str(&times);
        }
        self.listing = listing;
        self.rows_bytes = self.rows.iter().map(|row| row.to_string().len() + 1).sum();
    }
}

/// The registry at one generation: every app, trashed ones too, in listing
/// order (by space slug, then in the order the apps were made).
#[derive(Debug, Default)]
pub(crate) struct Snapshot {
    pub generation: Generation,
    pub apps: Vec<Arc<LiveApp>>,
    by_name: HashMap<String, usize>,
}

impl Snapshot {
    /// The app named `space/slug`.
    pub(crate) fn app(&self, name: &str) -> Option<&Arc<LiveApp>> {
        self.by_name.get(name).and_then(|&i| self.apps.get(i))
    }

    /// The apps of one space out of the trash, in the order they were made.
    pub(crate) fn apps_in(&self, space: &str) -> Vec<&Arc<LiveApp>> {
        self.apps
            .iter()
            .filter(|app| app.space == space && app.trashed.is_none())
            .collect()
    }
}

/// The cache and the lock that keeps two callers from rebuilding it at once.
#[derive(Default)]
pub(crate) struct Registry {
    current: RwLock<Arc<Snapshot>>,
    rebuilding: tokio::sync::Mutex<()>,
}

impl Registry {
    fn cached(&self, generation: Generation) -> Option<Arc<Snapshot>> {
        let current = self.current.read().ok()?;
        (current.generation == generation).then(|| current.clone())
    }

    /// The registry as the database has it now.
    pub(crate) async fn snapshot(
        &self,
        store: &Store,
        url: &PublicUrl,
    ) -> Result<Arc<Snapshot>, HostError> {
        let generation = store.generation().await?;
        self.snapshot_at(store, url, generation).await
    }

    /// The registry as of `generation`, just read from the database.
    pub(crate) async fn snapshot_at(
        &self,
        store: &Store,
        url: &PublicUrl,
        generation: Generation,
    ) -> Result<Arc<Snapshot>, HostError> {
        if let Some(snapshot) = self.cached(generation) {
            return Ok(snapshot);
        }
        let _one_at_a_time = self.rebuilding.lock().await;
        if let Some(snapshot) = self.cached(generation) {
            return Ok(snapshot);
        }
        let previous = self.current.read().map(|c| c.clone()).unwrap_or_default();
        let (read_at, records) = store.platform_apps().await?;
        let mut snapshot = Snapshot {
            generation: read_at,
            ..Snapshot::default()
        };
        for record in records {
            let app = match previous.app(&record.name()) {
                Some(app) if app.deploy == record.deploy && app.trashed == record.trashed => {
                    app.clone()
                }
                _ => {
                    // Another process may have declared its components.
                    store.forget_schema(&record.name());
                    Arc::new(load(store, &record, url).await?)
                }
            };
            snapshot
                .by_name
                .insert(app.name.clone(), snapshot.apps.len());
            snapshot.apps.push(app);
        }
        let snapshot = Arc::new(snapshot);
        if let Ok(mut current) = self.current.write() {
            *current = snapshot.clone();
        }
        Ok(snapshot)
    }
}

/// Reads one app's deploy back into its manifest. A deploy that reads no
/// longer (a manifest rule tightened since) answers with no commands rather
/// than taking the whole registry down.
async fn load(store: &Store, record: &AppRecord, url: &PublicUrl) -> Result<LiveApp, HostError> {
    let files = store
        .deploy_files_with_contents_of(record.deploy, shed_manifest::MANIFEST_FILES)
        .await?;
    let manifest = shed_manifest::read_app(&files, &record.name()).unwrap_or_else(|refusal| {
        tracing::warn!(app = %record.name(), %refusal, "a stored deploy no longer reads; it offers no commands");
        Manifest { vocab: Default::default(), commands: Vec::new() }
    });
    let index_page = files.contains_key(INDEX_PAGE);
    Ok(LiveApp::build(record, manifest, index_page, url))
}
