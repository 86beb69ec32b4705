//! The command registry: every deployed app as it answers now, or its place
//! in the trash, keyed by the platform's generation in the database (the
//! last deploy's id and the last trash, restore or purge's). Every call
//! first reads the generation (two indexed rows), so a deploy or a trash
//! made by any process on the same data directory (the CLI while a server
//! runs) is seen by the next call; only the apps whose deploy changed are
//! read again.
//!
//! A snapshot keeps of each app only what routes a call and lists it — its
//! name, title, access, version, address, its commands by name and the
//! pages they name: about a kilobyte ([`LiveApp`]). The rest of a deploy
//! — its manifest and its part of the `commands` listing, rendered
//! ([`AppParts`]) — is read from the store when a call needs it and kept by
//! deploy id (a deploy never changes, so nothing is kept stale), at most
//! [`LOADED_APPS_BYTES`] of them: a server that has served a hundred
//! thousand apps holds the small part of each and the parts of some of
//! those it served lately, within that budget.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use serde_json::{Value, json};
use shed_manifest::Manifest;
use shed_store::lifecycle::Generation;
use shed_store::platform::{AppRecord, Trashed};
use shed_store::{Person, Store};

use crate::address::{PublicUrl, without_scheme};
use crate::names::INDEX_PAGE;
use crate::{Access, Host, HostError};

/// The most bytes of deploys' parts ([`AppParts`]) the registry keeps read,
/// counted as the manifest files they were read from plus their rendered
/// listing and rows: past it, keeping one more forgets others (any), read
/// again from the store at their app's next call that needs them (one
/// indexed read of the deploy's manifest files). The run club weighs
/// 4,220 bytes this way, so about 1,000 of them are kept; in the server's
/// memory an app's parts take about six times their weight
/// (`docs/decisions/hosted-store-layout.md`, "`shed serve`'s memory").
pub const LOADED_APPS_BYTES: usize = 4 * 1024 * 1024;

/// One deployed app as its last good deploy answers: what a call needs to
/// find it, check it and list it. Its manifest and rendered listing are
/// its [`AppParts`], read through the registry.
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
    /// Writes by agents to it wait for their person's approval (its
    /// owner's setting; a change moves the generation, so this is the
    /// database's at every call).
    pub agent_writes_need_approval: bool,
    /// `http://jeff.localhost:7700/runs/`
    pub address: String,
    /// Its deploy holds `index.html`: its address opens a page.
    pub index_page: bool,
    /// The names of its commands, in listing order.
    pub commands: Vec<String>,
    /// The pages its commands name, each once, in the order first named.
    pub views: Vec<String>,
    /// The bytes its part adds to the text listing every command: its
    /// listing, a blank line, its rows as compact JSON with commas.
    pub listing_bytes: usize,
}

/// The parts of an app's deploy a call reads on demand: the manifest, and
/// its part of the `commands` listing rendered.
#[derive(Debug)]
pub(crate) struct AppParts {
    pub manifest: Manifest,
    /// The app's section of the `commands` text, heading included.
    pub listing: String,
    /// The app's rows of the `commands` structured answer.
    pub rows: Vec<Value>,
    /// What it counts for against [`LOADED_APPS_BYTES`]: its manifest
    /// files' bytes, its listing's and its rows' as compact JSON.
    weight: usize,
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
        self.commands.clone()
    }

    /// Whether it offers a command `name`.
    pub(crate) fn offers(&self, name: &str) -> bool {
        self.commands.iter().any(|command| command == name)
    }

    /// The app of `record` at the deploy read as `read`, with its parts.
    fn build(record: &AppRecord, read: ReadDeploy, url: &PublicUrl) -> (LiveApp, AppParts) {
        let name = record.name();
        let address = url.app_address(&record.space, &record.slug);
        let access = record.access.parse().unwrap_or_else(|_| {
            tracing::warn!(app = %name, access = %record.access, "unknown access word; treating the app as private");
            Default::default()
        });
        let mut views: Vec<String> = Vec::new();
        for view in read
            .manifest
            .commands
            .iter()
            .filter_map(|c| c.view.as_ref())
        {
            if !views.contains(view) {
                views.push(view.clone());
            }
        }
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
            agent_writes_need_approval: record.agent_writes_need_approval,
            address,
            index_page: read.index_page,
            commands: read
                .manifest
                .commands
                .iter()
                .map(|c| c.name.clone())
                .collect(),
            views,
            listing_bytes: 0,
        };
        let parts = app.render(read);
        app.listing_bytes = parts.listing.len() + 2 + parts.rows_bytes();
        (app, parts)
    }

    /// Its part of the `commands` listing, from its deploy read as `read`.
    fn render(&self, read: ReadDeploy) -> AppParts {
        let ReadDeploy {
            manifest,
            source_bytes,
            ..
        } = read;
        // The app's title and address, said once: on its first command's
        // line, as the spec's example puts them on its apps' one command each.
        let mut at = format!(
            " — {}, an app at {}",
            self.title,
            without_scheme(&self.address)
        );
        let mut listing = format!("## {}", self.name);
        let mut rows = Vec::with_capacity(manifest.commands.len());
        for command in &manifest.commands {
            let confirm = if command.confirm {
                " — waits for your approval when an agent calls it"
            } else {
                ""
            };
            listing.push_str(&format!(
                "\n{} — {}{}{confirm}",
                command.call_shape(),
                command.description,
                std::mem::take(&mut at)
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
            }
            rows.push(row);
        }
        if let Some(times) = manifest.time_arguments_line() {
            listing.push('\n');
            listing.push_str(&times);
        }
        let mut parts = AppParts {
            manifest,
            listing,
            rows,
            weight: 0,
        };
        parts.weight = source_bytes + parts.listing.len() + parts.rows_bytes();
        parts
    }
}

impl AppParts {
    /// The bytes of its rows as compact JSON, commas between them: what
    /// they add to a listing's text.
    fn rows_bytes(&self) -> usize {
        self.rows.iter().map(|row| row.to_string().len() + 1).sum()
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

/// The snapshot, the lock that keeps two callers from rebuilding it at
/// once, and the deploys' parts read lately.
pub(crate) struct Registry {
    current: RwLock<Arc<Snapshot>>,
    rebuilding: tokio::sync::Mutex<()>,
    kept: Mutex<Kept>,
    /// The most bytes of parts kept: [`LOADED_APPS_BYTES`], but for tests.
    budget: usize,
}

impl Default for Registry {
    fn default() -> Registry {
        Registry::with_budget(LOADED_APPS_BYTES)
    }
}

/// Deploys' parts by deploy id, and what they weigh together.
#[derive(Default)]
struct Kept {
    parts: HashMap<i64, Arc<AppParts>>,
    bytes: usize,
}

impl Kept {
    /// Keeps `parts` of `deploy`, first forgetting others (any) until they
    /// fit `budget` with them; parts heavier than the budget alone are not
    /// kept (read again at each call).
    fn keep(&mut self, deploy: i64, parts: Arc<AppParts>, budget: usize) {
        if parts.weight > budget || self.parts.contains_key(&deploy) {
            return;
        }
        while self.bytes + parts.weight > budget {
            let Some(forgotten) = self.parts.keys().next().copied() else {
                break;
            };
            if let Some(gone) = self.parts.remove(&forgotten) {
                self.bytes -= gone.weight;
            }
        }
        self.bytes += parts.weight;
        self.parts.insert(deploy, parts);
    }
}

impl Registry {
    /// A registry keeping at most `budget` bytes of deploys' parts.
    fn with_budget(budget: usize) -> Registry {
        Registry {
            current: RwLock::default(),
            rebuilding: tokio::sync::Mutex::default(),
            kept: Mutex::default(),
            budget,
        }
    }

    fn cached(&self, generation: Generation) -> Option<Arc<Snapshot>> {
        let current = self.current.read().ok()?;
        (current.generation == generation).then(|| current.clone())
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
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
                Some(app)
                    if app.deploy == record.deploy
                        && app.trashed == record.trashed
                        && app.agent_writes_need_approval == record.agent_writes_need_approval =>
                {
                    app.clone()
                }
                _ => {
                    // Another process may have declared its components.
                    store.forget_schema(&record.name());
                    let read = read_deploy(store, &record.name(), record.deploy).await?;
                    let (app, parts) = LiveApp::build(&record, read, url);
                    self.kept().keep(app.deploy, Arc::new(parts), self.budget);
                    Arc::new(app)
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

    /// The parts of `app`'s deploy: kept, or read from the store and kept.
    async fn parts(&self, store: &Store, app: &LiveApp) -> Result<Arc<AppParts>, HostError> {
        if let Some(parts) = self.kept().parts.get(&app.deploy) {
            return Ok(parts.clone());
        }
        let read = read_deploy(store, &app.name, app.deploy).await?;
        let parts = Arc::new(app.render(read));
        self.kept().keep(app.deploy, parts.clone(), self.budget);
        Ok(parts)
    }
}

impl Host {
    /// The parts of `app`'s deploy — its manifest, its rendered listing —
    /// kept by the registry or read again.
    pub(crate) async fn parts(&self, app: &LiveApp) -> Result<Arc<AppParts>, HostError> {
        self.inner.registry.parts(&self.inner.store, app).await
    }

    /// The parts of each of `apps`, in their order: those not kept are read
    /// for this call, so a call over more apps than the registry keeps has
    /// every one's, whatever it forgets meanwhile.
    pub(crate) async fn parts_of(
        &self,
        apps: &[&Arc<LiveApp>],
    ) -> Result<Vec<Arc<AppParts>>, HostError> {
        let mut parts = Vec::with_capacity(apps.len());
        for app in apps {
            parts.push(self.parts(app).await?);
        }
        Ok(parts)
    }
}

/// A deploy as read back: its manifest, whether it holds `index.html`, and
/// the bytes of the manifest files it was read from.
struct ReadDeploy {
    manifest: Manifest,
    index_page: bool,
    source_bytes: usize,
}

/// Reads one app's deploy back into its manifest. A deploy that reads no
/// longer (a manifest rule tightened since) answers with no commands rather
/// than taking the whole registry down.
async fn read_deploy(store: &Store, name: &str, deploy: i64) -> Result<ReadDeploy, HostError> {
    let files = store
        .deploy_files_with_contents_of(deploy, shed_manifest::MANIFEST_FILES)
        .await?;
    let manifest = shed_manifest::read_app(&files, name).unwrap_or_else(|refusal| {
        tracing::warn!(app = %name, %refusal, "a stored deploy no longer reads; it offers no commands");
        Manifest { vocab: Default::default(), commands: Vec::new() }
    });
    Ok(ReadDeploy {
        manifest,
        index_page: files.contains_key(INDEX_PAGE),
        source_bytes: files.values().map(Vec::len).sum(),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use serde_json::json;

    use super::Registry;
    use crate::{Access, Host, HostConfig};

    /// The most bytes of parts the test's registry keeps: two or three of
    /// its apps' (each weighs about 1.3 KiB).
    const BUDGET: usize = 4 * 1024;

    /// Apps deployed: more than the budget keeps, and their whole listing
    /// still one answer.
    const APPS: usize = 10;

    fn vocab(i: usize) -> BTreeMap<String, Vec<u8>> {
        let vocab = format!(r#"{{ "kind{i}": {{ "n": "number" }} }}"#);
        BTreeMap::from([("vocab.json".to_string(), vocab.into_bytes())])
    }

    /// What the registry keeps: the parts' count and bytes.
    fn kept(host: &Host) -> (usize, usize) {
        let kept = host.inner.registry.kept();
        (kept.parts.len(), kept.bytes)
    }

    #[tokio::test]
    async fn more_apps_than_the_registry_keeps_all_answer_and_it_keeps_within_its_budget() {
        let (dir, mut host) = crate::test_host("http://localhost:7700").await;
        Arc::get_mut(&mut host.inner)
            .expect("the host is not shared yet")
            .registry = Registry::with_budget(BUDGET);
        host.add_person("jeff", Some("Jeff")).await.unwrap();
        host.add_space("jeff", "jeff").await.unwrap();
        let jeff = host.caller_for_handle("jeff").await.unwrap();
        for i in 1..=APPS {
            let app = format!("jeff/a{i}");
            let title = Some(format!("App {i}"));
            host.deploy_folder(&jeff, &app, vocab(i), title, Some(Access::Private))
                .await
                .unwrap();
            assert!(
                kept(&host).1 <= BUDGET,
                "after deploying {app}: {:?}",
                kept(&host)
            );
        }

        let whole = host.commands(&jeff, None).await.unwrap();
        for i in 1..=APPS {
            assert!(
                whole.text.contains(&format!("## jeff/a{i}\nadd_kind{i}(")),
                "a{i} in the whole listing: {}",
                whole.text
            );
        }
        let rows = whole.data_json()["commands"].as_array().unwrap().len();
        assert_eq!(rows, 2 * APPS, "two commands an app");
        let (count, bytes) = kept(&host);
        assert!(
            bytes <= BUDGET && count < APPS,
            "kept {count} apps' parts, {bytes} bytes"
        );

        for i in 1..=APPS {
            let added = host
                .command(
                    &jeff,
                    &format!("add_kind{i}"),
                    json!({ "title": "t", "n": i }),
                    None,
                )
                .await
                .unwrap();
            assert!(added.text.contains(&format!("jeff/a{i}")), "{}", added.text);
            let one = host.commands(&jeff, Some(&format!("a{i}"))).await.unwrap();
            assert!(
                one.text.starts_with(&format!("## jeff/a{i}\nadd_kind{i}(")),
                "{}",
                one.text
            );
            assert!(kept(&host).1 <= BUDGET, "after a{i}: {:?}", kept(&host));
        }

        // A deploy by another process is seen at the next call, its new
        // parts read, though the old ones may still be kept.
        let other = Host::open(HostConfig {
            data_dir: dir.path().to_path_buf(),
            public_url: "http://localhost:7700".into(),
            database: shed_test_database::for_folder(dir.path()),
        })
        .await
        .unwrap();
        let jeff_there = other.caller_for_handle("jeff").await.unwrap();
        other
            .deploy_folder(&jeff_there, "jeff/a1", vocab(100), None, None)
            .await
            .unwrap();
        let one = host.commands(&jeff, Some("a1")).await.unwrap();
        assert!(
            one.text.starts_with("## jeff/a1\nadd_kind100("),
            "{}",
            one.text
        );
        let refused = host
            .command(&jeff, "add_kind1", json!({ "title": "t" }), None)
            .await
            .unwrap_err();
        assert!(
            refused.to_string().starts_with("no command add_kind1"),
            "{refused}"
        );
    }
}
