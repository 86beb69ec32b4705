//! Every `shed …` command a CLI answer suggests runs as printed (issue #24,
//! point 11): the scenarios of the admin tests (`apps`, `take_back`) are
//! played at the terminal on a data folder in a place of its own, each
//! suggested command is taken from what shed said, and run — pasted into a
//! shell elsewhere, with no `SHED_DATA` — on the data as it was when it was
//! suggested. Each must succeed. (A form with a `<placeholder>` is a form,
//! not a command, and is left out.)

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::broker_support::SHED;
use crate::data_place::on_sqlite;

/// A data folder at a path a shell must quote, used through `--data` only.
struct Terminal {
    dir: tempfile::TempDir,
    data: PathBuf,
}

impl Terminal {
    fn new() -> Terminal {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("my data");
        crate::data_place::make_private(&data);
        Terminal { dir, data }
    }

    /// `shed --data <data> <args>`: whether it succeeded, and all it said.
    fn shed(&self, args: &[&str]) -> (bool, String) {
        let out = Command::new(SHED)
            .arg("--data")
            .arg(&self.data)
            .args(args)
            .env_remove("SHED_DATA")
            .env_remove("SHED_DATABASE_URL")
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), said)
    }

    fn ok(&self, args: &[&str]) -> String {
        let (ok, said) = self.shed(args);
        assert!(ok, "shed {args:?}: {said}");
        said
    }

    /// Runs `args`, and then every command its answer suggests, each on
    /// the data as it was before that suggestion ran; the suggestions.
    fn provoke(&self, args: &[&str]) -> Vec<String> {
        let (_, said) = self.shed(args);
        let suggested = suggestions(&said);
        for command in &suggested {
            let kept = self.dir.path().join("kept");
            copy_folder(&self.data, &kept);
            let out = Command::new("sh")
                .args(["-c", command])
                .current_dir(std::env::temp_dir())
                .env("PATH", path_with_shed())
                .env_remove("SHED_DATA")
                .env_remove("SHED_DATABASE_URL")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "`shed {}` suggested `{command}`, which failed: {}{}",
                args.join(" "),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            std::fs::remove_dir_all(&self.data).unwrap();
            std::fs::rename(&kept, &self.data).unwrap();
        }
        suggested
    }
}

/// The `shed …` commands between backticks in what shed said, leaving out
/// forms with a `<placeholder>`.
fn suggestions(said: &str) -> Vec<String> {
    said.split('`')
        .skip(1)
        .step_by(2)
        .filter(|quoted| quoted.starts_with("shed ") && !quoted.contains('<'))
        .map(str::to_string)
        .collect()
}

/// PATH with the shed under test first.
fn path_with_shed() -> String {
    format!(
        "{}:{}",
        Path::new(SHED).parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

#[test]
fn every_command_the_cli_suggests_runs_as_printed() {
    // The data is copied and put back between suggestions: a folder's
    // SQLite file only. The sentences are the same on a server.
    if !on_sqlite("every_command_the_cli_suggests_runs_as_printed") {
        return;
    }
    let t = Terminal::new();
    let run_club = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/run-club");
    let run_club = run_club.to_str().unwrap();
    t.ok(&["person", "add", "ada", "--name", "Ada"]);
    t.ok(&["person", "add", "bo", "--name", "Bo"]);
    t.ok(&["space", "add", "demo", "--owner", "ada"]);
    t.ok(&["deploy", run_club, "--to", "demo/runs", "--as", "ada"]);
    t.ok(&[
        "deploy",
        run_club,
        "--to",
        "demo/runs",
        "--as",
        "ada",
        "--title",
        "Runs",
    ]);

    let mut seen = Vec::new();
    // An app's life: a version not there, the one answering, purge before trash.
    seen.extend(t.provoke(&["app", "rollback", "demo/runs", "9", "--as", "ada"]));
    seen.extend(t.provoke(&["app", "rollback", "demo/runs", "2", "--as", "ada"]));
    seen.extend(t.provoke(&[
        "app",
        "purge",
        "demo/runs",
        "--confirm",
        "demo/runs",
        "--as",
        "ada",
    ]));
    // The trash: what it answers, trashing twice, deploying to its name.
    seen.extend(t.provoke(&["app", "trash", "demo/runs", "--as", "ada"]));
    seen.extend(t.provoke(&["app", "trash", "demo/runs", "--as", "ada"]));
    seen.extend(t.provoke(&["deploy", run_club, "--to", "demo/runs", "--as", "ada"]));
    seen.extend(t.provoke(&["app", "versions", "demo/runs", "--as", "ada"]));
    t.ok(&["app", "restore", "demo/runs", "--as", "ada"]);
    // Deploying where one may not: a space that is, and one that is not.
    seen.extend(t.provoke(&["deploy", run_club, "--to", "demo/mine", "--as", "bo"]));
    seen.extend(t.provoke(&["deploy", run_club, "--to", "bos/mine", "--as", "bo"]));
    // Taking back: what is not there.
    seen.extend(t.provoke(&["token", "revoke", "99"]));
    seen.extend(t.provoke(&["member", "remove", "demo", "bo"]));
    seen.extend(t.provoke(&["person", "remove", "zed"]));
    seen.extend(t.provoke(&["job", "end", "job-9"]));

    for expected in [
        "app restore demo/runs --as ada",
        "app purge demo/runs --confirm demo/runs --as ada",
        "app trash demo/runs --as ada",
        "app versions demo/runs --as ada",
        "member add demo bo --role editor",
        "space add bos --owner bo",
        "token list",
        "member list demo",
        "job list",
    ] {
        assert!(
            seen.iter()
                .any(|command| command.starts_with(&format!("shed {expected}"))),
            "no suggestion `shed {expected} …` in {seen:#?}"
        );
    }
}
