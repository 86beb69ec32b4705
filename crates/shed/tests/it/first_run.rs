//! The first run, black-box: a command where there is no data folder
//! changes nothing and says how to make one; `shed up` sets up a folder with
//! nobody in it as a first run; it listens before it sets anything up (a
//! port already taken changes nothing), takes `--port` and `--listen
//! localhost:PORT`, prints the configuration for the address it serves at
//! on every run, and says where the links point when it listens on every
//! address.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::data_place::{DataIn, on_server, private_folder};
use crate::listening::free_port;
use crate::operating_support::{SHED, Shed, data_folder, shed};

/// Commands that read or change a shed's data without serving it.
const CLI_COMMANDS: &[&[&str]] = &[
    &["token", "create", "you"],
    &["person", "list"],
    &["person", "add", "ada"],
    &["space", "list"],
    &["mcp", "--as", "you"],
    &["login", "you"],
    &["job", "list"],
    &["app", "list"],
];

/// The server `shed <args>` starts on `data` (and its database, on the
/// test server), listening on loopback `port`; its logs in [`logs`].
fn start(data: &Path, args: &[&str], port: u16) -> Shed {
    let database = shed_test_database::for_folder(data);
    Shed::start(data, database.as_deref(), args, port, &logs(data), &[])
}

/// The file the servers [`start`] starts on `data` log to, beside it.
fn logs(data: &Path) -> PathBuf {
    data.with_file_name("logs")
}

#[test]
fn a_command_where_there_is_no_data_folder_changes_nothing_and_says_how_to_make_one() {
    let empty = tempfile::tempdir().unwrap();
    for args in CLI_COMMANDS {
        // As a person types it in a folder of theirs: no --data, no variables.
        let out = Command::new(SHED)
            .args(*args)
            .current_dir(empty.path())
            .env_remove("SHED_DATA")
            .env_remove("SHED_DATABASE_URL")
            .env_remove("SHED_PUBLIC_URL")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "shed {args:?} succeeded: {said}");
        for words in [
            "there is no data folder at shed-data",
            "`shed up` makes one",
            "--data or SHED_DATA",
        ] {
            assert!(said.contains(words), "shed {args:?} said: {said}");
        }
        let left: Vec<_> = std::fs::read_dir(empty.path()).unwrap().collect();
        assert!(left.is_empty(), "shed {args:?} left {left:?} behind");
    }
}

#[test]
fn on_a_database_server_a_command_makes_no_data_folder() {
    if !on_server() {
        eprintln!("on_a_database_server_a_command_makes_no_data_folder: runs on PostgreSQL only");
        return;
    }
    let (_dir, data) = data_folder();
    let (ok, _, said) = shed(&data, &["person", "list"]);
    assert!(ok, "{said}");
    assert!(
        !data.exists(),
        "the data is on the server, yet it made {}",
        data.display()
    );
}

#[test]
fn shed_up_on_a_folder_with_nobody_in_it_sets_it_up_as_a_first_run() {
    let data = private_folder();
    // What a command run there before `shed up` leaves: a database, nobody in it.
    let (ok, _, said) = shed(data.path(), &["person", "list"]);
    assert!(ok, "{said}");
    let logs = tempfile::NamedTempFile::new().unwrap();
    let up = Shed::up(data.path(), logs.path(), &[]);
    assert!(up.token().starts_with("shed_"), "{:?}", up.printed());
    assert!(up.printed_line(VOCAB_LINE).is_some(), "{:?}", up.printed());
}

#[test]
fn a_taken_port_is_refused_before_anything_is_set_up() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let (_dir, data) = data_folder();
    for server in ["up", "serve"] {
        let (ok, printed, said) = shed(&data, &[server, "--listen", &format!("127.0.0.1:{port}")]);
        assert!(!ok, "shed {server} served on a taken port: {printed}");
        assert!(
            said.contains(&format!("port {port} on 127.0.0.1 is taken")) && said.contains("--port"),
            "shed {server} said: {said}"
        );
        assert!(
            !printed.contains("Token:"),
            "shed {server} printed: {printed}"
        );
        assert!(!data.exists(), "shed {server} made {}", data.display());
    }
}

#[test]
fn shed_up_takes_a_port_and_prints_the_configuration_for_it_on_every_run() {
    let (_dir, data) = data_folder();
    let first = free_port();
    let up = start(&data, &["up", "--port", &first.to_string()], first);
    let mcp = format!("http://localhost:{first}/mcp");
    assert_eq!(
        up.printed_line("MCP address:"),
        Some(mcp),
        "{:?}",
        up.printed()
    );
    let sign_in = up
        .printed_line("Sign in:")
        .expect("the first run prints a sign-in link");
    let home = format!("http://localhost:{first}/_shed/login?key=");
    assert!(sign_in.starts_with(&home), "{sign_in}");
    drop(up);

    let again = free_port();
    let listen = format!("localhost:{again}");
    let up = start(&data, &["up", "--listen", &listen], again);
    // A token and a sign-in link, one line each: a command that works as
    // pasted into the shell `shed up` ran in, and what it is for.
    let pasted = |label: &str| {
        let line = up.printed_line(label).unwrap_or_else(|| {
            panic!("no line {label} in {:?}", up.printed());
        });
        let (command, _) = line.split_once("  ").unwrap_or((&line, ""));
        let words: Vec<&str> = command.split_whitespace().collect();
        assert_eq!(words.first(), Some(&"shed"), "{line}");
        let (ok, printed, said) = shed(&data, &words[1..]);
        assert!(ok, "{line}: {said}");
        (line.clone(), printed)
    };
    let (line, printed) = pasted("A token:");
    let token = printed
        .trim()
        .lines()
        .last()
        .unwrap_or_default()
        .to_string();
    assert!(token.contains("shed_"), "{line}: {printed}");
    let (line, printed) = pasted("A sign-in link:");
    let link = format!("http://localhost:{again}/_shed/login?key=");
    assert!(printed.contains(&link), "{line}: {printed}");
    let printed = up.printed().join("\n");
    let mcp = format!("http://localhost:{again}/mcp");
    let serving = format!(
        "shed is serving {} at {mcp} (set up earlier)",
        data.display()
    );
    assert!(printed.starts_with(&serving), "{printed}");
    assert!(
        printed.contains(&format!("\"url\": \"{mcp}\"")),
        "{printed}"
    );
    // Where add_<kind> and find_<kind> come from, on every run.
    assert!(up.printed_line(VOCAB_LINE).is_some(), "{printed}");
}

/// How the line `shed up` prints of the generated commands starts.
const VOCAB_LINE: &str =
    "add_jog and find_jog are made from the kind jog in the run club's vocab.json";

#[test]
fn listening_on_every_address_without_a_public_url_says_the_links_use_localhost() {
    let (_dir, data) = data_folder();
    let port = free_port();
    drop(start(
        &data,
        &["serve", "--listen", &format!("0.0.0.0:{port}")],
        port,
    ));
    let said = std::fs::read_to_string(logs(&data)).unwrap();
    let links = format!("the links it prints and serves use http://localhost:{port}");
    assert!(
        said.contains(&links) && said.contains("--public-url"),
        "{said}"
    );
}

#[test]
fn a_second_shed_up_on_a_served_folder_says_which_one_serves_it_and_prints_nothing_else() {
    let (_dir, data) = data_folder();
    let port = free_port();
    let first = start(&data, &["up", "--port", &port.to_string()], port);
    let served = format!(
        "shed already serves {} at http://localhost:{port} (process {}) — use that one, or stop it first",
        data.display(),
        first.pid()
    );
    for server in ["up", "serve"] {
        for at in [port, free_port()] {
            let out = Command::new(SHED)
                .args([server, "--port", &at.to_string()])
                .data_in(&data)
                .env("RUST_LOG", "warn")
                .stdin(Stdio::null())
                .output()
                .unwrap();
            let said = String::from_utf8_lossy(&out.stderr);
            let printed = String::from_utf8_lossy(&out.stdout);
            assert_eq!(
                out.status.code(),
                Some(1),
                "shed {server} on port {at}: {printed}{said}"
            );
            assert_eq!(said.trim_end(), served, "shed {server} on port {at}");
            assert_eq!(printed, "", "shed {server} on port {at} printed");
        }
    }
}
