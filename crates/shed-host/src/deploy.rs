//! Deploys: an app's files (from a folder, or from its drafts) become its next
//! version. The manifest is read whole before anything is planted; a refusal
//! is one sentence and changes nothing (the last good deploy keeps
//! answering). On success the components are planted first (the store's
//! declare), then the deploy is recorded — files as rows, version one up — and
//! the registry sees it by the deploy counter.

use std::collections::BTreeMap;

use shed_store::Vocabulary;
use shed_store::platform::{AppRecord, NewDeploy};

use crate::access::{Act, Standing, Subject, may, name_in_the_trash};
use crate::answer::{Answer, Deployed};
use crate::names::{AppName, INDEX_PAGE, and_list, bad_slug, check_path, is_slug};
use crate::reach::Reach;
use crate::{Access, Caller, Host, HostError, Person};

/// The most files one app may hold.
pub(crate) const MAX_FILES: usize = 2000;
/// The most bytes one app's files may hold together.
pub(crate) const MAX_BYTES: usize = 64 * 1024 * 1024;
/// The longest title.
const MAX_TITLE: usize = 120;

/// The app a deploy (or a draft) goes to, and who is deploying.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub space: String,
    pub slug: String,
    pub person: Person,
    /// Where the person stands in the space (an owner or an editor, for a deploy).
    pub standing: Standing,
}

impl Target {
    pub(crate) fn name(&self) -> String {
        format!("{}/{}", self.space, self.slug)
    }
}

impl Host {
    /// Deploys the files of a folder (path → bytes) as the app's next version.
    pub async fn deploy_folder(
        &self,
        caller: &Caller,
        app: &str,
        files: BTreeMap<String, Vec<u8>>,
        title: Option<String>,
        access: Option<Access>,
    ) -> Result<Answer<Deployed>, HostError> {
        let target = self.deploy_target(caller, app).await?;
        let made = Made {
            title,
            access,
            ..Made::default()
        };
        self.deploy(&target, files, made).await
    }

    /// Deploys the app's drafts (its current files with every `app_files`
    /// write since) as its next version; the first deploy makes the app.
    pub async fn app_deploy(
        &self,
        caller: &Caller,
        app: &str,
        title: Option<String>,
        access: Option<Access>,
    ) -> Result<Answer<Deployed>, HostError> {
        let target = self.deploy_target(caller, app).await?;
        let files = self.next_files(&target.space, &target.slug).await?;
        if files.is_empty() {
            return Err(HostError::BadInput(format!(
                "{} has no files to deploy — write them with app_files first (an index.html, and a tools.json or vocab.json for commands)",
                target.name()
            )));
        }
        let made = Made {
            title,
            access,
            clear_drafts: true,
            rolls_back_to: None,
        };
        self.deploy(&target, files, made).await
    }

    /// The app's files as its next deploy would hold them: the current
    /// deploy's, with its drafts written over them.
    pub(crate) async fn next_files(
        &self,
        space: &str,
        slug: &str,
    ) -> Result<BTreeMap<String, Vec<u8>>, HostError> {
        let store = &self.inner.store;
        let mut files = match store.platform_app(space, slug).await? {
            Some(record) => store.deploy_files(record.deploy).await?,
            None => BTreeMap::new(),
        };
        for (path, content) in store.drafts(space, slug).await? {
            match content {
                Some(bytes) => files.insert(path, bytes),
                None => files.remove(&path),
            };
        }
        Ok(files)
    }

    /// Where a deploy or a draft named `app` goes, refusing a caller who may
    /// not deploy there. A slug alone means the app of that slug in the
    /// caller's spaces, or — for a new app — the one space they edit.
    pub(crate) async fn deploy_target(
        &self,
        caller: &Caller,
        app: &str,
    ) -> Result<Target, HostError> {
        let (reach, snapshot) = self.reach_and_snapshot(caller).await?;
        let (space, slug) = match AppName::parse(app)? {
            AppName::Full { space, slug } => (space.to_string(), slug.to_string()),
            AppName::Slug(slug) => {
                if reach.apps(&snapshot).iter().any(|live| live.slug == slug) {
                    let live = reach.resolve(&snapshot, slug)?;
                    (live.space.clone(), slug.to_string())
                } else {
                    (only_space_edited(&reach, slug)?, slug.to_string())
                }
            }
        };
        let standing = reach.standing(&space);
        if let Err(refused) = may(Subject::space(&space), standing, Act::Deploy) {
            return Err(match refused {
                HostError::NotFound(sentence) => {
                    let exists = self.inner.store.space_exists(&space).await?;
                    let next = reach.suggest().deploy_into(&space, exists);
                    HostError::NotFound(format!("{sentence} — {next}"))
                }
                other => other,
            });
        }
        if let Some(app) = snapshot.app(&format!("{space}/{slug}"))
            && app.trashed.is_some()
        {
            let suggest = reach.suggest();
            return Err(name_in_the_trash(
                app.subject(),
                &suggest.restore(&app.name),
                &suggest.purge(&app.name),
            ));
        }
        Ok(Target {
            space,
            slug,
            person: reach.person,
            standing,
        })
    }

    /// Deploys `files` as the target's next version, as `made` says.
    pub(crate) async fn deploy(
        &self,
        target: &Target,
        files: BTreeMap<String, Vec<u8>>,
        made: Made,
    ) -> Result<Answer<Deployed>, HostError> {
        let Made {
            title,
            access,
            clear_drafts,
            rolls_back_to,
        } = made;
        let name = target.name();
        if !is_slug(&target.slug) {
            return Err(bad_slug("app", &target.slug));
        }
        check_files(&files)?;
        let index_page = files.contains_key(INDEX_PAGE);
        let title = title.map(|t| check_title(&t)).transpose()?;
        if let Some(wanted) = access {
            let current = match self
                .inner
                .store
                .platform_app(&target.space, &target.slug)
                .await?
            {
                Some(record) => Some(record.access.parse::<Access>().map_err(|_| {
                    HostError::Internal(format!("{name} has an access this build does not know"))
                })?),
                None => None,
            };
            let subject = Subject {
                name: &name,
                space: &target.space,
                access: current.unwrap_or(wanted),
            };
            let changes = current.is_some_and(|current| current != wanted);
            may(subject, target.standing, Act::SetAccess { changes })?;
        }
        let manifest = shed_manifest::read_app(&files, &name)
            .map_err(|refusal| HostError::BadInput(refusal.0))?;
        let commands: Vec<String> = manifest.commands.iter().map(|c| c.name.clone()).collect();
        if rolls_back_to.is_none()
            && let Some(current) = self
                .unchanged(target, &files, title.as_deref(), access)
                .await?
        {
            return Ok(self.deployed(current, &name, index_page, commands, true));
        }
        let vocabulary = vocabulary(&manifest.vocab);
        self.inner.store.declare(&name, &vocabulary).await?;
        let record = self
            .inner
            .store
            .record_deploy(NewDeploy {
                space: target.space.clone(),
                slug: target.slug.clone(),
                title,
                access: access.map(|a| a.as_str().to_string()),
                by: target.person.eid.clone(),
                files,
                clear_drafts,
                rolls_back_to,
            })
            .await?;
        tracing::info!(app = %name, version = record.version, by = %target.person.handle, "deployed");
        Ok(self.deployed(record, &name, index_page, commands, false))
    }

    /// The app as it answers, when a deploy of `files` with this `title`
    /// and `access` would change nothing of it (not in the trash): a
    /// redeploy of an unchanged folder makes no new version.
    async fn unchanged(
        &self,
        target: &Target,
        files: &BTreeMap<String, Vec<u8>>,
        title: Option<&str>,
        access: Option<Access>,
    ) -> Result<Option<AppRecord>, HostError> {
        let store = &self.inner.store;
        let Some(current) = store.platform_app(&target.space, &target.slug).await? else {
            return Ok(None);
        };
        let same = current.trashed.is_none()
            && title.is_none_or(|title| title == current.title)
            && access.is_none_or(|access| access.as_str() == current.access)
            && store.deploy_files(current.deploy).await? == *files;
        Ok(same.then_some(current))
    }

    /// The answer of a deploy that made `record` (or, `unchanged`, found
    /// the app already so).
    fn deployed(
        &self,
        record: AppRecord,
        name: &str,
        index_page: bool,
        commands: Vec<String>,
        unchanged: bool,
    ) -> Answer<Deployed> {
        let address = self.app_address(&record.space, &record.slug);
        let opens = if index_page {
            address.clone()
        } else {
            format!("no pages — add an {INDEX_PAGE} to open it at {address}")
        };
        let listed = if commands.is_empty() {
            "none".to_string()
        } else {
            commands.join(", ")
        };
        let what = if unchanged {
            format!("{name} unchanged — still v{}", record.version)
        } else {
            format!("deployed {name} v{}", record.version)
        };
        Answer {
            text: format!("{what}: {opens}\ncommands: {listed}"),
            data: Deployed {
                app: name.to_string(),
                version: record.version,
                address,
                title: record.title,
                access: record.access,
                commands,
            },
        }
    }
}

/// How a deploy is made, beside its files.
#[derive(Debug, Default)]
pub(crate) struct Made {
    /// A new title; kept as it was when `None`.
    pub title: Option<String>,
    /// A new access; kept as it was when `None`.
    pub access: Option<Access>,
    /// Forget the app's drafts: they are what is deployed.
    pub clear_drafts: bool,
    /// The earlier version whose files these are, for a roll back.
    pub rolls_back_to: Option<i64>,
}

/// For a new app named by slug alone: the one space the caller edits.
fn only_space_edited(reach: &Reach, slug: &str) -> Result<String, HostError> {
    let edited: Vec<&String> = reach
        .roles
        .iter()
        .filter(|(space, role)| {
            may(Subject::space(space), Standing::Member(**role), Act::Deploy).is_ok()
        })
        .map(|(space, _)| space)
        .collect();
    match edited.as_slice() {
        [one] => Ok((*one).clone()),
        [] if !reach.roles.is_empty() => Err(HostError::Refused(
            "you can read the apps of your spaces but not deploy them — an owner can make you an editor".into(),
        )),
        [] => Err(HostError::Refused(
            "you belong to no space yet — an owner of a space can add you as an editor".into(),
        )),
        many => {
            let names: Vec<String> = many.iter().map(|space| format!("{space}/{slug}")).collect();
            Err(HostError::BadInput(format!("say which space {slug} goes in: {}", and_list(&names).replace(" and ", " or "))))
        }
    }
}

/// Every path inside the app, and the app within its bounds.
pub(crate) fn check_files(files: &BTreeMap<String, Vec<u8>>) -> Result<(), HostError> {
    let bad: Vec<String> = files
        .keys()
        .filter_map(|path| check_path(path).err())
        .collect();
    if !bad.is_empty() {
        return Err(HostError::BadInput(bad.join("; ")));
    }
    if files.len() > MAX_FILES {
        return Err(HostError::BadInput(format!(
            "an app holds at most {MAX_FILES} files and this one has {} — leave out what its pages do not load",
            files.len()
        )));
    }
    let bytes: usize = files.values().map(Vec::len).sum();
    if bytes > MAX_BYTES {
        return Err(HostError::BadInput(format!(
            "an app holds at most {} MiB and this one has {:.1} MiB — leave out what its pages do not load",
            MAX_BYTES / (1024 * 1024),
            bytes as f64 / (1024.0 * 1024.0)
        )));
    }
    Ok(())
}

fn check_title(title: &str) -> Result<String, HostError> {
    let title = title.trim();
    if title.is_empty() || title.chars().count() > MAX_TITLE || title.chars().any(char::is_control)
    {
        return Err(HostError::BadInput(format!(
            "a title is one line of 1 to {MAX_TITLE} characters, like Run club"
        )));
    }
    Ok(title.to_string())
}

/// The manifest's kinds as the store declares them (one `ColumnType`,
/// shed-words', on both sides).
fn vocabulary(vocab: &shed_manifest::Vocab) -> Vocabulary {
    let components = vocab
        .components
        .iter()
        .map(|(component, columns)| {
            let typed = columns.iter().map(|(c, ty)| (c.clone(), *ty)).collect();
            (component.clone(), typed)
        })
        .collect();
    Vocabulary { components }
}
