//! The small walls a newcomer's second ten minutes met at the terminal
//! (issue #39), black-box: a typo'd subcommand suggests the near one; `shed
//! up` whose reader has gone keeps serving, no panic; `--data` naming a file
//! says it is a file and changes nothing; an app named in upper case says
//! slugs are lower case; the token `shed up` makes is named `shed up`.

use std::process::{Command, Stdio};

use crate::data_place::{DataIn, private_folder};
use crate::listening::{free_port, wait_until_listening};
use crate::operating_support::{SHED, shed};

#[test]
fn a_typo_d_subcommand_suggests_the_near_one() {
    for (typed, near) in [("uo", "up"), ("serv", "serve"), ("deplyo", "deploy")] {
        let out = Command::new(SHED).arg(typed).output().unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "shed {typed}: {said}");
        assert!(
            said.contains(&format!("unrecognized subcommand '{typed}'"))
                && said.contains(&format!("tip: a similar subcommand exists: '{near}'")),
            "shed {typed}: {said}"
        );
    }
}

#[test]
fn shed_up_whose_reader_has_gone_serves_on_quietly() {
    let data = private_folder();
    let port = free_port();
    // A pipe whose reading end is closed before shed starts (`shed up | true`).
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut up = Command::new(SHED)
        .args(["up", "--port", &port.to_string()])
        .data_in(data.path())
        .env("RUST_LOG", "warn")
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until_listening(port);
    assert!(up.try_wait().unwrap().is_none(), "shed up ended");
    let _ = up.kill();
    let out = up.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!said.contains("panicked"), "{said}");
}

#[test]
fn data_naming_a_file_says_it_is_a_file_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "mine").unwrap();
    for args in [
        &["up", "--port", "0"][..],
        &["serve", "--port", "0"],
        &["person", "list"],
    ] {
        let out = Command::new(SHED)
            .args(args)
            .env("SHED_DATA", &file)
            .env_remove("SHED_DATABASE_URL")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "shed {args:?}: {said}");
        assert_eq!(
            said.trim_end(),
            format!(
                "shed: {} is a file, not a folder — give --data (or SHED_DATA) a folder: `shed up` makes it when missing; nothing was changed",
                file.display()
            ),
            "shed {args:?}"
        );
        assert!(out.stdout.is_empty(), "shed {args:?} printed");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
    }
}

#[test]
fn an_app_named_in_upper_case_says_slugs_are_lower_case() {
    let data = private_folder();
    let path = data.path();
    for args in [
        &["person", "add", "you"][..],
        &["space", "add", "demo", "--owner", "you"],
    ] {
        let (ok, _, said) = shed(path, args);
        assert!(ok, "{said}");
    }
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/reading-list");
    let (ok, printed, said) = shed(
        path,
        &["deploy", examples, "--to", "demo/Reading", "--as", "you"],
    );
    assert!(!ok, "{printed}");
    assert_eq!(
        said.trim_end(),
        "demo/Reading is not an app — a slug is lower case: demo/reading"
    );
}

#[test]
fn the_token_shed_up_makes_is_named_shed_up() {
    let data = private_folder();
    let (child, _port, _token) = crate::listening::shed_up(data.path(), &[], &[]);
    let mut child = child;
    let (ok, listed, said) = shed(data.path(), &["token", "list"]);
    let _ = child.kill();
    let _ = child.wait();
    assert!(ok, "{said}");
    let row = listed
        .lines()
        .find(|line| line.contains(" you "))
        .unwrap_or_else(|| panic!("no token of you: {listed}"));
    assert!(row.contains("shed up"), "{listed}");
}
