//! The host configuration file (`--loom-commands-config`): where the host's
//! CLI is, which variable carries the job id, and the broker queue it talks to;
//! and where the binary reads the job id itself — a file only its owner may
//! read (`--command-job-id-file`) or a descriptor it inherited
//! (`--command-job-id-fd`), never its command line, which `ps` shows.

use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// A host configuration that passed every check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostConfig {
    /// The host CLI, an absolute path.
    pub cli_path: PathBuf,
    /// The variable that carries the current job id, when the host wants one.
    pub job_id_env_var: Option<String>,
    /// The broker's queue, handed to the CLI as `LOOM_PAGE_RPC_QUEUE`.
    pub queue_path: PathBuf,
}

/// Why a host configuration was refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The path given is relative; it holds the path as given.
    #[error(
        "the host configuration path {0} is not absolute — give --loom-commands-config an absolute path"
    )]
    NotAbsolute(String),
    /// The file could not be read.
    #[error(
        "cannot read the host configuration {path}: {source} — check the path and its permissions"
    )]
    Read {
        /// The configuration file's path, as shown.
        path: String,
        /// What the read failed with.
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("the host configuration {path} is not valid JSON ({detail}) — fix the file")]
    Json {
        /// The configuration file's path (or the name the caller gave it).
        path: String,
        /// The JSON parser's account of where and why.
        detail: String,
    },
    /// The file is JSON, but not an object.
    #[error("the host configuration {path} must be a JSON object with cliPath and transport")]
    NotAnObject {
        /// The configuration file's path (or the name the caller gave it).
        path: String,
    },
    /// A required field is absent.
    #[error("the host configuration {path} has no {field} — add it ({what})")]
    Missing {
        /// The configuration file's path (or the name the caller gave it).
        path: String,
        /// The field, dotted where nested (`transport.queuePath`).
        field: &'static str,
        /// What the field should hold, as the sentence says it.
        what: &'static str,
    },
    /// A field is present with a value of the wrong kind (a relative path,
    /// a number for a string, …).
    #[error("the host configuration {path}: {field} must be {what}")]
    Invalid {
        /// The configuration file's path (or the name the caller gave it).
        path: String,
        /// The field, dotted where nested (`transport.kind`).
        field: &'static str,
        /// What the field must hold instead.
        what: &'static str,
    },
    /// `transport.kind` is `direct`, which would let this file, not the
    /// broker, attribute the commands.
    #[error(
        "the host configuration {path} asks for a direct transport, which is refused: only the broker transport is accepted, because a direct transport would leave the command's attribution to this file instead of the broker — set transport.kind to \"broker\" with the broker's queuePath"
    )]
    DirectTransport {
        /// The configuration file's path (or the name the caller gave it).
        path: String,
    },
    /// `transport.kind` names a kind other than `broker` or `direct`.
    #[error(
        "the host configuration {path} names transport kind {kind:?}, which is unknown — the only accepted kind is \"broker\""
    )]
    UnknownTransport {
        /// The configuration file's path (or the name the caller gave it).
        path: String,
        /// The kind the file names.
        kind: String,
    },
    /// `jobIdEnvVar` is not an uppercase variable name.
    #[error(
        "the host configuration {path}: jobIdEnvVar {name:?} is not a variable name — use uppercase letters, digits and underscores, starting with a letter or underscore"
    )]
    BadJobIdEnvVar {
        /// The configuration file's path (or the name the caller gave it).
        path: String,
        /// The name the file gives.
        name: String,
    },
    /// `jobIdEnvVar` names `PATH` or `LOOM_PAGE_RPC_QUEUE`, which the
    /// harness sets itself.
    #[error(
        "the host configuration {path}: jobIdEnvVar may not be {name} — that variable is set by the harness itself; pick another name such as LOOM_COMMAND_JOB_ID"
    )]
    ReservedJobIdEnvVar {
        /// The configuration file's path (or the name the caller gave it).
        path: String,
        /// The reserved name the file gives.
        name: String,
    },
}

/// The variable carrying the broker queue to the host CLI.
pub const QUEUE_ENV_VAR: &str = "LOOM_PAGE_RPC_QUEUE";

/// Reads and checks the configuration file at `path`, which must be absolute.
pub fn load(path: &Path) -> Result<HostConfig, ConfigError> {
    let shown = path.display().to_string();
    if !path.is_absolute() {
        return Err(ConfigError::NotAbsolute(shown));
    }
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: shown.clone(),
        source,
    })?;
    parse(&text, &shown)
}

/// Checks a configuration's text; `path` only names the file in sentences.
pub fn parse(text: &str, path: &str) -> Result<HostConfig, ConfigError> {
    let path = path.to_string();
    let value: Value = serde_json::from_str(text).map_err(|e| ConfigError::Json {
        path: path.clone(),
        detail: e.to_string(),
    })?;
    let Some(object) = value.as_object() else {
        return Err(ConfigError::NotAnObject { path });
    };
    let cli_path = match object.get("cliPath") {
        None => {
            return Err(ConfigError::Missing {
                path,
                field: "cliPath",
                what: "the absolute path of the host's CLI",
            });
        }
        Some(Value::String(p)) if Path::new(p).is_absolute() => PathBuf::from(p),
        Some(_) => {
            return Err(ConfigError::Invalid {
                path,
                field: "cliPath",
                what: "an absolute path to the host's CLI, as a string",
            });
        }
    };
    let transport = match object.get("transport") {
        None => {
            return Err(ConfigError::Missing {
                path,
                field: "transport",
                what: "{\"kind\": \"broker\", \"queuePath\": \"/…\"}",
            });
        }
        Some(Value::Object(t)) => t,
        Some(_) => {
            return Err(ConfigError::Invalid {
                path,
                field: "transport",
                what: "an object {\"kind\": \"broker\", \"queuePath\": \"/…\"}",
            });
        }
    };
    match transport.get("kind") {
        Some(Value::String(kind)) if kind == "broker" => {}
        Some(Value::String(kind)) if kind == "direct" => {
            return Err(ConfigError::DirectTransport { path });
        }
        Some(Value::String(kind)) => {
            return Err(ConfigError::UnknownTransport {
                path,
                kind: kind.clone(),
            });
        }
        _ => {
            return Err(ConfigError::Invalid {
                path,
                field: "transport.kind",
                what: "the string \"broker\"",
            });
        }
    }
    let queue_path = match transport.get("queuePath") {
        Some(Value::String(q)) if Path::new(q).is_absolute() => PathBuf::from(q),
        None => {
            return Err(ConfigError::Missing {
                path,
                field: "transport.queuePath",
                what: "the absolute path of the broker's queue",
            });
        }
        Some(_) => {
            return Err(ConfigError::Invalid {
                path,
                field: "transport.queuePath",
                what: "an absolute path to the broker's queue, as a string",
            });
        }
    };
    let job_id_env_var = match object.get("jobIdEnvVar") {
        None | Some(Value::Null) => None,
        Some(Value::String(name)) => Some(check_job_id_env_var(name, &path)?),
        Some(_) => {
            return Err(ConfigError::Invalid {
                path,
                field: "jobIdEnvVar",
                what: "a variable name as a string, such as \"LOOM_COMMAND_JOB_ID\"",
            });
        }
    };
    // A `jobId` in the file is ignored on purpose: the embedder supplies the
    // job id for each invocation, never the configuration.
    Ok(HostConfig {
        cli_path,
        job_id_env_var,
        queue_path,
    })
}

fn check_job_id_env_var(name: &str, path: &str) -> Result<String, ConfigError> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_uppercase() || c == '_');
    let rest_ok = chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    if !first_ok || !rest_ok {
        return Err(ConfigError::BadJobIdEnvVar {
            path: path.to_string(),
            name: name.to_string(),
        });
    }
    if name == "PATH" || name == QUEUE_ENV_VAR {
        return Err(ConfigError::ReservedJobIdEnvVar {
            path: path.to_string(),
            name: name.to_string(),
        });
    }
    Ok(name.to_string())
}

/// The most bytes a job id file or descriptor may hold: far past any job id
/// (shed's is 128 random bits, 32 hex characters), and short enough to
/// read whole.
pub const JOB_ID_MAX_BYTES: usize = 1024;

/// The mode bits that let another account read or write a file.
const OPEN_TO_OTHERS: u32 = 0o077;

/// Why the job id could not be read. No sentence holds the id itself.
#[derive(Debug, thiserror::Error)]
pub enum JobIdError {
    /// The job id file could not be opened, examined or read.
    #[error("cannot read the job id file {path}: {source} — check the path and its permissions")]
    Read {
        /// The job id file's path, as shown.
        path: String,
        /// What the open, status or read failed with.
        source: std::io::Error,
    },
    /// The path names a directory, a device or another non-file.
    #[error(
        "the job id file {path} is not a regular file — write the job id to a file of its own, or pass it on a descriptor with --command-job-id-fd"
    )]
    NotAFile {
        /// The job id file's path, as shown.
        path: String,
    },
    /// The file's mode lets another account read or write it.
    #[error(
        "the job id file {path} may be opened by other accounts (mode {mode:o}) — run `chmod 600 {path}` and try again"
    )]
    OpenToOthers {
        /// The job id file's path, as shown.
        path: String,
        /// The file's permission bits (`0o644`, say).
        mode: u32,
    },
    /// The file belongs to an account other than the one the harness runs as.
    #[error(
        "the job id file {path} belongs to another account (uid {owner}) — copy the job id to a file of your own and run `chmod 600` on it"
    )]
    NotYours {
        /// The job id file's path, as shown.
        path: String,
        /// The uid that owns the file.
        owner: u32,
    },
    /// `--command-job-id-fd` names descriptor 0, 1 or 2; it holds the number.
    #[error(
        "--command-job-id-fd {0} is standard input, output or error — pass the job id on a descriptor of its own, 3 or above (e.g. `3<job-id`)"
    )]
    StandardDescriptor(u32),
    /// Descriptor `fd` could not be opened or read.
    #[error(
        "cannot read the job id from descriptor {fd}: {source} — open it for reading in the calling process (e.g. `{fd}<job-id`)"
    )]
    Descriptor {
        /// The descriptor `--command-job-id-fd` names.
        fd: u32,
        /// What the open or read failed with.
        source: std::io::Error,
    },
    /// The source holds more than [`JOB_ID_MAX_BYTES`]; it holds the source's
    /// name (the file's path, or `descriptor N`).
    #[error(
        "the job id from {0} is longer than {JOB_ID_MAX_BYTES} bytes — it must hold the job id alone, as `shed job create` printed it"
    )]
    TooLong(String),
    /// The source is empty, not UTF-8 or holds a control character (a line
    /// end after the id aside); it holds the source's name.
    #[error(
        "the job id from {0} is empty, not UTF-8, or holds a control character — it must hold the job id alone, as `shed job create` printed it"
    )]
    Malformed(String),
}

/// Reads the job id from the file at `path`, which must be a regular file
/// of this account that no other account may open (mode 0600 or stricter).
pub fn job_id_from_file(path: &Path) -> Result<String, JobIdError> {
    let shown = path.display().to_string();
    let read = |source| JobIdError::Read {
        path: shown.clone(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read)?;
    // The open file's own status, so the file checked is the file read.
    let meta = file.metadata().map_err(read)?;
    if !meta.is_file() {
        return Err(JobIdError::NotAFile { path: shown });
    }
    if meta.uid() != effective_uid() {
        return Err(JobIdError::NotYours {
            path: shown,
            owner: meta.uid(),
        });
    }
    let mode = meta.mode() & 0o777;
    if mode & OPEN_TO_OTHERS != 0 {
        return Err(JobIdError::OpenToOthers { path: shown, mode });
    }
    job_id_from(file, &shown, read)
}

/// Reads the job id from descriptor `fd`, inherited from the calling
/// process (a pipe, or a file it opened), through `/dev/fd`.
pub fn job_id_from_descriptor(fd: u32) -> Result<String, JobIdError> {
    if fd <= 2 {
        return Err(JobIdError::StandardDescriptor(fd));
    }
    let opened = std::fs::File::open(format!("/dev/fd/{fd}"))
        .map_err(|source| JobIdError::Descriptor { fd, source })?;
    job_id_from(opened, &format!("descriptor {fd}"), |source| {
        JobIdError::Descriptor { fd, source }
    })
}

/// The job id `source` holds: its text without the line end that follows
/// it, bounded at [`JOB_ID_MAX_BYTES`]; `failed` names a read that failed.
fn job_id_from(
    source: impl Read,
    shown: &str,
    failed: impl FnOnce(std::io::Error) -> JobIdError,
) -> Result<String, JobIdError> {
    let mut bytes = Vec::new();
    source
        .take(JOB_ID_MAX_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(failed)?;
    if bytes.len() > JOB_ID_MAX_BYTES {
        return Err(JobIdError::TooLong(shown.to_string()));
    }
    let malformed = || JobIdError::Malformed(shown.to_string());
    let text = String::from_utf8(bytes).map_err(|_| malformed())?;
    let id = text.trim_end_matches(['\n', '\r']);
    if id.is_empty() || id.chars().any(char::is_control) {
        return Err(malformed());
    }
    Ok(id.to_string())
}

/// The account this process acts as.
fn effective_uid() -> u32 {
    // SAFETY: geteuid takes nothing, cannot fail and touches no memory of ours.
    unsafe { libc::geteuid() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(extra: &str) -> String {
        format!(
            r#"{{"cliPath":"/opt/loom/bin/loom","transport":{{"kind":"broker","queuePath":"/run/q"}}{extra}}}"#
        )
    }

    #[test]
    fn a_broker_configuration_reads() {
        let c = parse(
            &cfg(r#","jobIdEnvVar":"LOOM_COMMAND_JOB_ID","jobId":"j-1""#),
            "f",
        )
        .unwrap();
        assert_eq!(c.cli_path, PathBuf::from("/opt/loom/bin/loom"));
        assert_eq!(c.job_id_env_var.as_deref(), Some("LOOM_COMMAND_JOB_ID"));
        assert_eq!(c.queue_path, PathBuf::from("/run/q"));
    }

    #[test]
    fn job_id_variable_names_are_checked() {
        for bad in ["lower", "1ABC", "A-B", "", "PATH", "LOOM_PAGE_RPC_QUEUE"] {
            let text = cfg(&format!(r#","jobIdEnvVar":"{bad}""#));
            assert!(parse(&text, "f").is_err(), "{bad} should be refused");
        }
        for good in ["_X", "JOB_1", "A"] {
            let text = cfg(&format!(r#","jobIdEnvVar":"{good}""#));
            assert!(parse(&text, "f").is_ok(), "{good} should be accepted");
        }
    }

    #[test]
    fn direct_transport_is_refused_with_its_reason() {
        let text = r#"{"cliPath":"/x","transport":{"kind":"direct"}}"#;
        let err = parse(text, "/etc/h.json").unwrap_err().to_string();
        assert!(
            err.contains("only the broker transport is accepted"),
            "{err}"
        );
        assert!(err.contains("attribution"), "{err}");
    }
}
