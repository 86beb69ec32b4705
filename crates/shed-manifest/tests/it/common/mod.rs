//! Helpers the integration tests share: an app's files from literal text.

use std::collections::BTreeMap;

use shed_manifest::{Command, Filled, Manifest, Refusal, Timestamp, read_app};

/// The clock the tests fill commands by: a `time` argument's `now` is
/// 2026-12-01T18:50:12Z, `today` 2026-12-01, `yesterday` 2026-11-30.
pub fn clock() -> Timestamp {
    "2026-12-01T18:50:12.345Z".parse().expect("a timestamp")
}

/// An app's files from `(path, text)` pairs.
pub fn files(pairs: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
    pairs
        .iter()
        .map(|(path, text)| (path.to_string(), text.as_bytes().to_vec()))
        .collect()
}

/// The name the tests read their apps under, as `<space>/<app>`.
pub const APP: &str = "jeff/recipes";

/// Reads an app that must read, as [`APP`].
pub fn read(pairs: &[(&str, &str)]) -> Manifest {
    read_as(APP, pairs)
}

/// Reads an app named `app` that must read.
pub fn read_as(app: &str, pairs: &[(&str, &str)]) -> Manifest {
    match read_app(&files(pairs), app) {
        Ok(manifest) => manifest,
        Err(Refusal(sentence)) => panic!("refused: {sentence}"),
    }
}

/// The sentence an app that must be refused is refused with.
pub fn refused(pairs: &[(&str, &str)]) -> String {
    match read_app(&files(pairs), APP) {
        Ok(manifest) => panic!("read, with commands {:?}", names(&manifest)),
        Err(Refusal(sentence)) => sentence,
    }
}

pub fn names(manifest: &Manifest) -> Vec<&str> {
    manifest.commands.iter().map(|c| c.name.as_str()).collect()
}

pub fn command<'m>(manifest: &'m Manifest, name: &str) -> &'m Command {
    manifest
        .command(name)
        .unwrap_or_else(|| panic!("no command {name} in {:?}", names(manifest)))
}

/// The filter line a query command fills to.
pub fn query(command: &Command, args: serde_json::Value) -> String {
    match command.fill(&args, clock()) {
        Ok(Filled::Query(line)) => line,
        other => panic!("{} filled {other:?}", command.name),
    }
}

/// The bundle(s) an apply command fills to.
pub fn apply(command: &Command, args: serde_json::Value) -> serde_json::Value {
    match command.fill(&args, clock()) {
        Ok(Filled::Apply(body)) => body,
        other => panic!("{} filled {other:?}", command.name),
    }
}

/// The argument errors of a call that must fail, as the one sentence.
pub fn arg_errors(command: &Command, args: serde_json::Value) -> String {
    match command.fill(&args, clock()) {
        Err(errors) => errors.to_string(),
        Ok(filled) => panic!("{} filled {filled:?}", command.name),
    }
}
