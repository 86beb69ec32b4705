//! The CLI's edges issue #34 found, black-box: a person's name holding a
//! control or bidirectional character is refused, as a token's and a
//! client's are; `shed job create --host-config FILE` writes FILE private
//! (0600) and never through a symbolic link or into another account's
//! file; every command that prints ends quietly when its reader has gone
//! (no panic, no exit 101); `shed command` exits 2 on `--args-json` that is
//! not JSON, as the README says.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::data_place::{DataIn, private_folder};

const SHED: &str = env!("CARGO_BIN_EXE_shed");

/// `shed <args>` on `data`, whatever it answers.
fn shed(data: &Path, args: &[&str]) -> Output {
    Command::new(SHED)
        .args(args)
        .data_in(data)
        .output()
        .unwrap()
}

/// `shed <args>` on `data`, which must succeed: its stdout.
fn shed_ok(data: &Path, args: &[&str]) -> String {
    let out = shed(data, args);
    assert!(
        out.status.success(),
        "shed {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A data folder with ada, owner of demo, where the run club is deployed.
fn demo() -> tempfile::TempDir {
    let data = private_folder();
    let club = crate::web_door::run_club();
    for args in [
        &["person", "add", "ada", "--name", "Ada"][..],
        &["space", "add", "demo", "--owner", "ada"],
        &[
            "deploy",
            club.to_str().unwrap(),
            "--to",
            "demo/runs",
            "--as",
            "ada",
        ],
        &["token", "create", "ada", "--name", "laptop"],
    ] {
        shed_ok(data.path(), args);
    }
    data
}

#[test]
fn a_person_s_name_with_a_control_or_reordering_character_is_refused() {
    let data = private_folder();
    for (handle, name) in [
        ("eve", "Eve\u{1b}[2J"),
        ("mal", "Mal\u{202e}lory"),
        ("nul", "a\u{9b}b"),
    ] {
        let out = shed(data.path(), &["person", "add", handle, "--name", name]);
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name:?} was taken");
        assert!(said.contains("plain characters"), "{said}");
        assert!(
            !said.contains('\u{1b}') && !said.contains('\u{202e}'),
            "{said}"
        );
    }
    let listed = shed_ok(data.path(), &["person", "list"]);
    for handle in ["eve", "mal", "nul"] {
        assert!(!listed.contains(handle), "{listed}");
    }
    shed_ok(
        data.path(),
        &["person", "add", "ada", "--name", "Ada Lovelace"],
    );
}

/// `shed job create --person ada --host-config <file>`, whatever it answers.
fn host_config(data: &Path, file: &Path) -> Output {
    shed(
        data,
        &[
            "job",
            "create",
            "--person",
            "ada",
            "--host-config",
            file.to_str().unwrap(),
        ],
    )
}

#[test]
fn the_host_configuration_is_made_private_and_never_through_a_link_or_into_another_s_file() {
    let data = demo();
    let place = tempfile::tempdir().unwrap();
    // A new file: 0600 whatever the umask lets through.
    let file = place.path().join("host.json");
    let made = host_config(data.path(), &file);
    assert!(made.status.success(), "{made:?}");
    assert_eq!(std::fs::metadata(&file).unwrap().mode() & 0o777, 0o600);
    assert!(std::fs::read_to_string(&file).unwrap().contains("cliPath"));
    // A file of ours already there, open to others: replaced, private.
    std::fs::set_permissions(&file, PermissionsExt::from_mode(0o644)).unwrap();
    let again = host_config(data.path(), &file);
    assert!(again.status.success(), "{again:?}");
    assert_eq!(std::fs::metadata(&file).unwrap().mode() & 0o777, 0o600);

    let jobs_before = shed_ok(data.path(), &["job", "list", "--json"]);
    // A symbolic link: refused, its target untouched, no job made.
    let target = place.path().join("target");
    std::fs::write(&target, "the target's own words\n").unwrap();
    let link = place.path().join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let refused = host_config(data.path(), &link);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{refused:?}");
    assert!(said.contains(link.to_str().unwrap()), "{said}");
    assert!(said.contains("symbolic link"), "{said}");
    assert!(
        refused.stdout.is_empty(),
        "a secret was printed: {refused:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "the target's own words\n"
    );
    // Another account's file: refused, untouched.
    let theirs = place.path().join("theirs.json");
    std::fs::write(&theirs, "theirs\n").unwrap();
    // SAFETY: geteuid takes nothing, cannot fail and touches no memory of ours.
    let root = unsafe { libc::geteuid() } == 0;
    let theirs = if root {
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        theirs
    } else {
        Path::new("/etc/hostname").to_path_buf()
    };
    let before = std::fs::read(&theirs).unwrap();
    let refused = host_config(data.path(), &theirs);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{refused:?}");
    assert!(said.contains(theirs.to_str().unwrap()), "{said}");
    assert!(said.contains("another account"), "{said}");
    assert_eq!(std::fs::read(&theirs).unwrap(), before);
    assert_eq!(
        shed_ok(data.path(), &["job", "list", "--json"]),
        jobs_before,
        "a refused host configuration left a job"
    );
}

#[test]
fn a_command_whose_reader_has_gone_ends_quietly() {
    let data = demo();
    for args in [
        &["activity", "--as", "ada"][..],
        &["token", "list"],
        &["app", "list", "--as", "ada"],
        &["person", "list"],
        &["job", "list"],
        &["version"],
    ] {
        // A pipe whose reading end is closed before shed starts.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = Command::new(SHED)
            .args(args)
            .data_in(data.path())
            .stdout(Stdio::from(writer))
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!said.contains("panicked"), "shed {args:?}: {said}");
        assert_ne!(out.status.code(), Some(101), "shed {args:?}: {said}");
    }
}

#[test]
fn shed_command_exits_2_on_args_that_are_not_json_as_the_readme_says() {
    let out = Command::new(SHED)
        .args([
            "command",
            "run",
            "demo/runs.log_run",
            "--args-json",
            "{not json",
        ])
        .env("LOOM_PAGE_RPC_QUEUE", "/nonexistent/command-queue.sock")
        .env("LOOM_COMMAND_JOB_ID", "0123456789abcdef0123456789abcdef")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("not JSON"), "{said}");
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let readme = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        readme.contains("2 when its `--args-json` is not JSON or its flags are wrong"),
        "the README's exit codes of `shed command` do not say 2"
    );
}
