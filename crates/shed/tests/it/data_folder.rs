//! The data folder, black-box: `shed up` on a new folder makes it 0700 and
//! the files it writes there 0600; a folder or database file already there
//! that other accounts may open gets a warning naming the `chmod`.

use crate::data_place::{DataIn, on_server, on_sqlite};
use crate::listening::{free_port, wait_until_listening};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};

const SHED: &str = env!("CARGO_BIN_EXE_shed");

/// A running `shed up`, stopped when dropped.
struct Up(Child);

impl Drop for Up {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The permission bits of `path`, in octal as `chmod` takes them, e.g. "600".
fn mode(path: &Path) -> String {
    let meta = std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    format!("{:o}", meta.permissions().mode() & 0o777)
}

/// `shed <args> --data <data>`, which must succeed; what it said on stderr.
fn shed_stderr(data: &Path, args: &[&str]) -> String {
    let output = Command::new(SHED)
        .args(args)
        .data_in(data)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(output.status.success(), "shed {args:?} failed: {stderr}");
    stderr
}

#[test]
fn shed_up_makes_a_new_data_folder_and_its_files_private() {
    let parent = tempfile::tempdir().unwrap();
    let data = parent.path().join("data");
    let port = free_port();
    let _up = Up(Command::new(SHED)
        .args(["up", "--listen", &format!("127.0.0.1:{port}")])
        .data_in(&data)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .unwrap());
    // It listens once the example is deployed and the queue is open.
    wait_until_listening(port);
    assert_eq!(mode(&data), "700", "the data folder");
    let database = ["shed.db", "shed.db-wal", "shed.db-shm"];
    for file in ["serve.lock", "command-queue.sock"] {
        assert_eq!(mode(&data.join(file)), "600", "{file}");
    }
    for file in database {
        match on_server() {
            false => assert_eq!(mode(&data.join(file)), "600", "{file}"),
            true => assert!(
                !data.join(file).exists(),
                "{file}: the data is on the database server, not in the folder"
            ),
        }
    }
}

#[test]
fn a_data_folder_or_database_open_to_others_is_warned_about() {
    let data = tempfile::tempdir().unwrap();
    let data = data.path();
    let chmod = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    chmod(data, 0o755);
    let said = shed_stderr(data, &["person", "add", "ada"]);
    let folder = format!(
        "the data folder {0} is open to other accounts on this machine (mode 755) — run chmod 700 {0}",
        data.display()
    );
    assert!(said.contains(&folder), "{said}");
    if !on_sqlite("a_data_folder_or_database_open_to_others_is_warned_about (the database file)") {
        return;
    }
    assert_eq!(
        mode(&data.join("shed.db")),
        "600",
        "made new in an old folder"
    );

    chmod(data, 0o700);
    let database = data.join("shed.db");
    chmod(&database, 0o644);
    let said = shed_stderr(data, &["person", "add", "bo"]);
    let file = format!(
        "the database file {0} is open to other accounts on this machine (mode 644) — run chmod 600 {0}",
        database.display()
    );
    assert!(said.contains(&file), "{said}");
    assert!(!said.contains("the data folder"), "{said}");
}
