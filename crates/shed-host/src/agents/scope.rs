//! A job's scope: globs over command names. `--allow` globs admit a command
//! to the job's listing and runs; `--read-only` globs admit a read command
//! and grant it read-only execution (the `readOnlyGranted` stamp). `*`
//! crosses `/` and `.`, so `demo/runs.*` is every command of demo/runs and
//! `graph.*` every graph built-in.

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

use super::command::Effect;

/// A glob that is not one, as the sentence that says so.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0}")]
pub struct BadGlob(pub String);

/// The compiled globs of one job.
#[derive(Clone, Debug)]
pub struct JobScope {
    allow: GlobSet,
    read_only: GlobSet,
}

fn compile(flag: &str, globs: &[String]) -> Result<GlobSet, BadGlob> {
    let mut set = GlobSetBuilder::new();
    for glob in globs {
        if glob.trim().is_empty() || glob.chars().any(char::is_control) {
            return Err(BadGlob(format!(
                "{flag} takes a glob of command names, like demo/runs.* or graph.query — not an empty one"
            )));
        }
        let compiled: Glob = GlobBuilder::new(glob)
            .literal_separator(false)
            .build()
            .map_err(|e| {
                BadGlob(format!(
                    "{flag} {glob} is not a glob ({}) — say one like demo/runs.* or graph.query",
                    e.kind()
                ))
            })?;
        set.add(compiled);
    }
    set.build().map_err(|e| BadGlob(format!("{flag}: {e}")))
}

impl JobScope {
    /// Compiles a job's globs.
    pub fn new(allow: &[String], read_only: &[String]) -> Result<JobScope, BadGlob> {
        Ok(JobScope {
            allow: compile("--allow", allow)?,
            read_only: compile("--read-only", read_only)?,
        })
    }

    /// Whether the job may list and run the command.
    pub fn admits(&self, name: &str, effect: Effect) -> bool {
        self.allow.is_match(name) || self.grants_read_only(name, effect)
    }

    /// Whether the job may run the command read-only.
    pub fn grants_read_only(&self, name: &str, effect: Effect) -> bool {
        effect == Effect::Read && self.read_only.is_match(name)
    }

    /// Whether any glob could admit a command of this name.
    pub fn names(&self, name: &str) -> bool {
        self.allow.is_match(name) || self.read_only.is_match(name)
    }
}

/// The first glob, as `(flag, glob)`, that admits none of `commands` (each a
/// name and its effect): an `--allow` glob naming no command, or a
/// `--read-only` glob naming no read. A job holding one could never run what
/// it names, so it is refused before it is made.
pub fn first_admitting_nothing<'a>(
    allow: &'a [String],
    read_only: &'a [String],
    commands: &[(&str, Effect)],
) -> Result<Option<(&'static str, &'a str)>, BadGlob> {
    for glob in allow {
        let set = compile("--allow", std::slice::from_ref(glob))?;
        if !commands.iter().any(|(name, _)| set.is_match(name)) {
            return Ok(Some(("--allow", glob)));
        }
    }
    for glob in read_only {
        let set = compile("--read-only", std::slice::from_ref(glob))?;
        let reads = commands
            .iter()
            .filter(|(_, effect)| *effect == Effect::Read);
        if !reads.into_iter().any(|(name, _)| set.is_match(name)) {
            return Ok(Some(("--read-only", glob)));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(allow: &[&str], read_only: &[&str]) -> JobScope {
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        JobScope::new(&owned(allow), &owned(read_only)).unwrap()
    }

    #[test]
    fn an_app_glob_admits_its_commands_only() {
        let s = scope(&["demo/runs.*"], &[]);
        assert!(s.admits("demo/runs.log_run", Effect::Write));
        assert!(!s.admits("demo/runsx.log_run", Effect::Write));
        assert!(!s.admits("graph.query", Effect::Read));
        assert!(!s.grants_read_only("demo/runs.leaderboard", Effect::Read));
    }

    #[test]
    fn a_read_only_glob_admits_and_grants_reads_only() {
        let s = scope(&[], &["demo/runs.*"]);
        assert!(s.admits("demo/runs.leaderboard", Effect::Read));
        assert!(s.grants_read_only("demo/runs.leaderboard", Effect::Read));
        assert!(!s.admits("demo/runs.log_run", Effect::Write));
        assert!(!s.grants_read_only("demo/runs.log_run", Effect::Write));
    }

    #[test]
    fn a_bad_glob_is_a_sentence() {
        let error = JobScope::new(&["demo/[runs".to_string()], &[]).unwrap_err();
        assert!(
            error.0.starts_with("--allow demo/[runs is not a glob"),
            "{error}"
        );
        assert!(JobScope::new(&[], &[" ".to_string()]).is_err());
    }

    #[test]
    fn a_glob_that_admits_no_command_is_named() {
        let commands = [
            ("demo/runs.log_run", Effect::Write),
            ("demo/runs.leaderboard", Effect::Read),
        ];
        let globs = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let allow = globs(&["demo/runs.*", "runs"]);
        assert_eq!(
            first_admitting_nothing(&allow, &[], &commands).unwrap(),
            Some(("--allow", "runs"))
        );
        let read_only = globs(&["demo/runs.log_*"]);
        assert_eq!(
            first_admitting_nothing(&[], &read_only, &commands).unwrap(),
            Some(("--read-only", "demo/runs.log_*"))
        );
        let fine = globs(&["demo/runs.*"]);
        assert_eq!(
            first_admitting_nothing(&fine, &fine, &commands).unwrap(),
            None
        );
    }

    proptest::proptest! {
        #[test]
        fn any_glob_compiles_or_is_refused_without_panic(glob in ".{0,30}", name in ".{0,30}") {
            if let Ok(s) = JobScope::new(std::slice::from_ref(&glob), &[]) {
                let _ = s.admits(&name, Effect::Read);
            }
        }
    }
}
