//! `app_files`: the files of an app's NEXT deploy. Drafts are kept in the
//! database as writes over the current deploy's files (a path with content,
//! or a deletion), so the next deploy is "the current files, then the
//! drafts"; a member reads any file back (tools.json and vocab.json too), and
//! owners and editors write. Nothing is read as a manifest here: `app_deploy`
//! does that.

use std::collections::BTreeMap;

use crate::access::{Act, Subject, may};
use crate::answer::{Answer, FileEntry, FileRead, Files};
use crate::deploy::{Target, check_files};
use crate::names::{AppName, check_path};
use crate::texts::{bounded_list, count};
use crate::{Caller, Host, HostError};

impl Host {
    /// Writes (`Some(text)`) or deletes (`None`) files of the app's next
    /// deploy, then reads the paths in `read`; with neither, lists the files.
    pub async fn app_files(
        &self,
        caller: &Caller,
        app: &str,
        write: BTreeMap<String, Option<String>>,
        read: Vec<String>,
    ) -> Result<Answer<Files>, HostError> {
        let target = self.files_target(caller, app, !write.is_empty()).await?;
        let name = target.name();
        let bad: Vec<String> = write
            .keys()
            .chain(read.iter())
            .filter_map(|path| check_path(path).err())
            .collect();
        if !bad.is_empty() {
            return Err(HostError::BadInput(bad.join("; ")));
        }
        let store = &self.inner.store;
        let deployed = store.platform_app(&target.space, &target.slug).await?;
        let current = match &deployed {
            Some(record) => store.deploy_files(record.deploy).await?,
            None => BTreeMap::new(),
        };
        let mut next = self.next_files(&target.space, &target.slug).await?;
        let mut wrote = Vec::new();
        let mut deleted = Vec::new();
        for (path, content) in &write {
            match content {
                Some(text) => {
                    next.insert(path.clone(), text.clone().into_bytes());
                    wrote.push(path.clone());
                }
                None if next.remove(path).is_some() => deleted.push(path.clone()),
                None => {
                    return Err(HostError::NotFound(format!(
                        "no file {path} to delete in {name}'s next deploy — {}",
                        has_files(&next)
                    )));
                }
            }
        }
        check_files(&next)?;
        let missing: Vec<&String> = read
            .iter()
            .filter(|path| !next.contains_key(*path))
            .collect();
        if let Some(path) = missing.first() {
            return Err(HostError::NotFound(format!(
                "no file {path} in {name}'s next deploy — {}",
                has_files(&next)
            )));
        }
        if !write.is_empty() {
            let writes = write
                .into_iter()
                .map(|(path, text)| (path, text.map(String::into_bytes)))
                .collect();
            store
                .write_drafts(&target.space, &target.slug, writes)
                .await?;
        }

        let next_version = deployed.as_ref().map_or(1, |record| record.version + 1);
        let mut parts = Vec::new();
        if !wrote.is_empty() || !deleted.is_empty() {
            let mut said = Vec::new();
            if !wrote.is_empty() {
                said.push(format!("wrote {}", bounded_list(&wrote)));
            }
            if !deleted.is_empty() {
                said.push(format!("deleted {}", bounded_list(&deleted)));
            }
            parts.push(format!(
                "{name}: {} — app_deploy deploys them as v{next_version}",
                said.join("; ")
            ));
        }
        let mut read_back = Vec::new();
        for path in &read {
            let bytes = next.get(path).map(Vec::as_slice).unwrap_or_default();
            let text = std::str::from_utf8(bytes).ok();
            parts.push(match text {
                Some(text) => format!("--- {path} ---\n{text}"),
                None => format!("--- {path} ---\n(binary, {} bytes)", bytes.len()),
            });
            read_back.push(FileRead {
                path: path.clone(),
                bytes: bytes.len(),
                text: text.map(str::to_string),
            });
        }
        let files: Vec<FileEntry> = next
            .iter()
            .map(|(path, bytes)| FileEntry {
                path: path.clone(),
                bytes: bytes.len(),
                draft: current.get(path) != Some(bytes),
            })
            .collect();
        let removed: Vec<String> = current
            .keys()
            .filter(|path| !next.contains_key(*path))
            .cloned()
            .collect();
        if parts.is_empty() {
            let mut lines = vec![format!(
                "{name}: {} for v{next_version}{}",
                count(next.len(), "file", "files"),
                if deployed.is_none() {
                    ", its first deploy"
                } else {
                    ""
                }
            )];
            for (path, bytes) in &next {
                let draft = if current.get(path) != Some(bytes) {
                    ", not deployed yet"
                } else {
                    ""
                };
                lines.push(format!(
                    "{path} ({}{draft})",
                    count(bytes.len(), "byte", "bytes")
                ));
            }
            for path in &removed {
                lines.push(format!("{path} (deleted, not deployed yet)"));
            }
            parts.push(lines.join("\n"));
        }
        Ok(Answer {
            text: parts.join("\n\n"),
            data: Files {
                app: name,
                next_version,
                files,
                deleted: removed,
                wrote,
                read: read_back,
            },
        })
    }

    /// The app whose files a call reads or writes: members read an app's
    /// files, owners and editors write them (and draft a new app).
    async fn files_target(
        &self,
        caller: &Caller,
        app: &str,
        writing: bool,
    ) -> Result<Target, HostError> {
        if writing {
            return self.deploy_target(caller, app).await;
        }
        let (reach, snapshot) = self.reach_and_snapshot(caller).await?;
        let (space, slug) = match AppName::parse(app)? {
            AppName::Full { space, slug } => (space.to_string(), slug.to_string()),
            AppName::Slug(_) => {
                let live = reach.resolve(&snapshot, app)?;
                (live.space.clone(), live.slug.clone())
            }
        };
        let name = format!("{space}/{slug}");
        // An app not deployed yet has nothing to read but the drafts of
        // those who may deploy it.
        let act = match snapshot.app(&name) {
            Some(_) => Act::ReadFiles,
            None => Act::Deploy,
        };
        let standing = reach.standing(&space);
        match may(Subject::space(&space), standing, act) {
            Ok(()) => {
                if let Some(app) = snapshot.app(&name) {
                    reach.reachable(app)?;
                }
                Ok(Target {
                    space,
                    slug,
                    person: reach.person,
                    standing,
                })
            }
            Err(_) => Err(reach.no_app(&snapshot, &name)),
        }
    }
}

/// "it has index.html, tools.json" / "it has no files yet".
fn has_files(files: &BTreeMap<String, Vec<u8>>) -> String {
    if files.is_empty() {
        "it has no files yet".to_string()
    } else {
        format!(
            "it has {}",
            bounded_list(&files.keys().cloned().collect::<Vec<_>>())
        )
    }
}
