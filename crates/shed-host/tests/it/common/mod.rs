//! What every host test starts from: a host on a fresh data directory, people
//! with roles, and the run club's files.

use std::collections::BTreeMap;
use std::path::Path;

use shed_host::{Access, Caller, Host, HostConfig, HostError, Role};

pub const URL: &str = "http://localhost:7700";

pub struct World {
    pub host: Host,
    pub dir: tempfile::TempDir,
}

pub async fn world() -> World {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let host = open(dir.path()).await;
    World { host, dir }
}

/// Another host on the same data directory: another process, as far as the
/// database can tell (its own connections, its own registry). On the test
/// server (`SHED_TEST_DATABASE`) the directory's database is there.
pub async fn open(dir: &Path) -> Host {
    Host::open(HostConfig {
        data_dir: dir.to_path_buf(),
        public_url: URL.into(),
        database: shed_test_database::for_folder(dir),
    })
    .await
    .expect("the host opens")
}

pub async fn person(host: &Host, handle: &str, name: &str) -> Caller {
    host.add_person(handle, Some(name))
        .await
        .expect("a new person");
    host.caller_for_handle(handle)
        .await
        .expect("the person signs in")
}

/// A space `slug` owned by a new person `owner`; answers the owner.
pub async fn space(host: &Host, slug: &str, owner: &str) -> Caller {
    let caller = match host.caller_for_handle(owner).await {
        Ok(caller) => caller,
        Err(_) => person(host, owner, owner).await,
    };
    host.add_space(slug, owner).await.expect("a new space");
    caller
}

pub async fn member(host: &Host, space: &str, handle: &str, role: Role) -> Caller {
    let caller = match host.caller_for_handle(handle).await {
        Ok(caller) => caller,
        Err(_) => person(host, handle, handle).await,
    };
    host.add_member(space, handle, role)
        .await
        .expect("a new member");
    caller
}

/// The files of a folder, path relative to it → bytes.
pub fn folder(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(dir).expect("the folder reads") {
        let entry = entry.expect("an entry");
        if entry.path().is_file() {
            let name = entry.file_name().to_string_lossy().to_string();
            files.insert(name, std::fs::read(entry.path()).expect("the file reads"));
        }
    }
    files
}

/// examples/run-club: vocab.json, tools.json, index.html, leaderboard.html, style.css.
pub fn run_club() -> BTreeMap<String, Vec<u8>> {
    folder(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/run-club"))
}

/// Files from (path, text) pairs.
pub fn files(pairs: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
    pairs
        .iter()
        .map(|(p, t)| (p.to_string(), t.as_bytes().to_vec()))
        .collect()
}

pub async fn deploy(
    host: &Host,
    caller: &Caller,
    app: &str,
    files: BTreeMap<String, Vec<u8>>,
    title: &str,
    access: Access,
) -> String {
    host.deploy_folder(caller, app, files, Some(title.into()), Some(access))
        .await
        .unwrap_or_else(|e| panic!("{app} deploys: {e}"))
        .text
}

/// Deploys the run club to `app` as `caller`, titled "Run club", private.
pub async fn deploy_run_club(host: &Host, caller: &Caller, app: &str) -> String {
    deploy(host, caller, app, run_club(), "Run club", Access::Private).await
}

/// The sentence of a refusal, with its kind.
pub fn refusal<T: std::fmt::Debug>(result: Result<T, HostError>) -> (&'static str, String) {
    match result {
        Ok(answer) => panic!("expected a refusal, got {answer:?}"),
        Err(e) => {
            let kind = match &e {
                HostError::SignIn(_) => "sign-in",
                HostError::Refused(_) => "refused",
                HostError::BadInput(_) => "bad-input",
                HostError::NotFound(_) => "not-found",
                HostError::Conflict(_) | HostError::ChangedSince(_) => "conflict",
                HostError::Busy(_) => "busy",
                HostError::Waiting(_) => "waiting",
                HostError::Internal(_) => "internal",
            };
            (kind, e.to_string())
        }
    }
}

/// Whether `s` is 32 lowercase hex digits.
pub fn is_eid(s: &str) -> bool {
    s.len() == 32
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}
