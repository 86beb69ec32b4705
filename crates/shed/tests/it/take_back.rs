//! Taking access back, black-box: `shed token revoke`, `shed member remove`
//! and `shed person remove` run on the data folder while `shed serve`
//! answers, and the very next request refuses — through MCP (a bearer
//! token), the page api (a bearer token or a signed-in browser's cookie) and
//! `shed command run` (an agent's job, over the broker's queue).

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::broker_support::{answered, cli};
use crate::web_door::{Shed, run, shed_output};

/// A run club `log_run` through MCP's `command` tool.
fn log_run(who: &str) -> Value {
    json!({ "name": "log_run", "app": "demo/runs",
            "args": { "who": who, "miles": 3, "at": "2026-09-01" } })
}

impl Shed {
    /// `./api/apply` of demo/runs with `Authorization: Bearer <token>`: the status.
    pub(crate) async fn apply_with_token(&self, token: &str) -> StatusCode {
        self.http
            .post(self.demo("/runs/api/apply"))
            .bearer_auth(token)
            .json(&run("Ed", 2.0))
            .send()
            .await
            .unwrap()
            .status()
    }

    /// `shed command run demo/runs.log_run` as the job `job`: the outcome.
    pub(crate) fn run_as_job(&self, job: &str) -> Value {
        let queue = self.data.path().join("command-queue.sock");
        let args = [
            "command",
            "run",
            "demo/runs.log_run",
            "--args-json",
            "-",
            "--json",
        ];
        let input = json!({ "who": "Ed", "miles": 4, "at": "2026-09-02" });
        answered(&cli(&queue, Some(job), &args, &input.to_string()))
    }

    /// A job for `handle` that may run the run club's commands.
    pub(crate) fn job_for(&self, handle: &str) -> String {
        self.shed(&[
            "job",
            "create",
            "--person",
            handle,
            "--allow",
            "demo/runs.*",
        ])
        .trim()
        .to_string()
    }

    /// `shed <args>` that must be refused: its one sentence.
    pub(crate) fn refused(&self, args: &[&str]) -> String {
        let output = shed_output(self.data.path(), self.port, args);
        assert!(!output.status.success(), "shed {args:?} was not refused");
        String::from_utf8(output.stderr).unwrap().trim().to_string()
    }
}

/// Ed's ways in, each working now: a token over MCP and the page api, a
/// browser signed in on demo, and a job over the broker.
struct Ways {
    token: String,
    cookie: String,
    job: String,
}

async fn ed_gets_in(shed: &Shed) -> Ways {
    let ways = Ways {
        token: shed.token("ed"),
        cookie: shed.demo_cookie("ed").await,
        job: shed.job_for("ed"),
    };
    let (error, said) = shed.mcp(&ways.token, "command", log_run("Ed")).await;
    assert!(!error, "{said}");
    assert_eq!(shed.apply_with_token(&ways.token).await, StatusCode::OK);
    let (status, wrote) = shed.apply("runs", run("Ed", 1.0), Some(&ways.cookie)).await;
    assert_eq!(status, StatusCode::OK, "{wrote}");
    let outcome = shed.run_as_job(&ways.job);
    assert_eq!(outcome["ok"], true, "{outcome}");
    ways
}

#[tokio::test]
async fn a_revoked_token_is_refused_at_its_next_request() {
    let shed = Shed::start().await;
    let token = shed.shed(&["token", "create", "ed", "--name", "laptop", "--ttl", "30d"]);
    let token = token.trim();
    let (error, said) = shed.mcp(token, "command", log_run("Ed")).await;
    assert!(!error, "{said}");
    assert_eq!(shed.apply_with_token(token).await, StatusCode::OK);

    let listed = shed.shed(&["token", "list", "ed"]);
    assert!(
        !listed.contains(token),
        "a list never shows a secret: {listed}"
    );
    let line = crate::cli_lists::rows(&listed)
        .into_iter()
        .find(|row| row[1] == "laptop")
        .unwrap_or_else(|| panic!("no laptop token in {listed}"));
    // ID, NAME, PERSON, CREATED, LAST USED, EXPIRES
    assert!(
        line[2] == "ed" && line[4].starts_with("20") && line[5] != "never",
        "{line:?}"
    );
    let id = line[0];
    assert!(shed.shed(&["token", "list"]).contains("laptop"));

    assert_eq!(
        shed.shed(&["token", "revoke", id]).trim(),
        format!("revoked token {id}")
    );
    let (error, said) = shed.mcp(token, "command", log_run("Ed")).await;
    assert!(error, "MCP answered a revoked token: {said}");
    let challenge = said["unauthorized"].as_str().unwrap_or_default();
    assert!(
        challenge.contains("error=\"invalid_token\"")
            && challenge.contains("it was revoked, has expired"),
        "a revoked token is a 401 invalid_token: {said}"
    );
    assert_eq!(shed.apply_with_token(token).await, StatusCode::UNAUTHORIZED);
    assert!(!shed.shed(&["token", "list", "ed"]).contains("laptop"));
    assert_eq!(
        shed.refused(&["token", "revoke", id]),
        format!("no live token {id} — `shed token list` shows the live ones")
    );
}

#[tokio::test]
async fn a_member_taken_out_is_refused_at_the_next_request_and_the_last_owner_stays() {
    let shed = Shed::start().await;
    let ways = ed_gets_in(&shed).await;
    let members = shed.shed(&["member", "list", "demo"]);
    assert_eq!(
        crate::cli_lists::rows(&members)[..2],
        [["ada", "owner", "Ada"], ["ed", "editor", "Ed"]],
        "{members}"
    );

    assert_eq!(
        shed.shed(&["member", "remove", "demo", "ed"]).trim(),
        "ed (editor) is no longer a member of demo"
    );
    let (error, said) = shed.mcp(&ways.token, "command", log_run("Ed")).await;
    assert!(error, "MCP let a removed member write: {said}");
    let (status, said) = shed.apply("runs", run("Ed", 1.0), Some(&ways.cookie)).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{said}");
    assert_eq!(
        shed.apply_with_token(&ways.token).await,
        StatusCode::NOT_FOUND
    );
    let outcome = shed.run_as_job(&ways.job);
    assert_ne!(
        outcome["ok"], true,
        "the broker let a removed member write: {outcome}"
    );
    assert!(
        !shed
            .shed(&["member", "list", "demo"])
            .contains("ed  editor")
    );

    assert_eq!(
        shed.refused(&["member", "remove", "demo", "ada"]),
        "the last owner of demo is @ada, and a space keeps at least one — make another owner \
         first (`shed member add demo <handle> --role owner`)"
    );
    assert_eq!(
        shed.refused(&["member", "remove", "demo", "sam"]),
        "sam is no member of demo — `shed member list demo` shows who is"
    );
    let spaces = shed.shed(&["space", "list"]);
    assert!(
        crate::cli_lists::rows(&spaces).contains(&vec!["demo", "2", "3"]),
        "{spaces}"
    );
}

#[tokio::test]
async fn a_removed_person_is_refused_everywhere_and_what_they_wrote_stays() {
    let shed = Shed::start().await;
    let ways = ed_gets_in(&shed).await;
    let said = shed.shed(&["person", "remove", "ed"]);
    assert!(
        said.starts_with("removed ed: 1 token revoked, 2 sessions and 1 job ended, out of 1 space"),
        "{said}"
    );

    let (error, said) = shed.mcp(&ways.token, "command", log_run("Ed")).await;
    assert!(error, "MCP answered a removed person: {said}");
    assert_eq!(
        shed.apply_with_token(&ways.token).await,
        StatusCode::UNAUTHORIZED
    );
    let (status, said) = shed.apply("runs", run("Ed", 1.0), Some(&ways.cookie)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{said}");
    let outcome = shed.run_as_job(&ways.job);
    assert_eq!(outcome["code"], "forbidden", "{outcome}");

    let people = shed.shed(&["person", "list"]);
    let people = crate::cli_lists::rows(&people);
    assert!(
        !people.contains(&vec!["ed", "Ed"]) && people.contains(&vec!["ada", "Ada"]),
        "{people:?}"
    );
    assert_eq!(
        shed.refused(&["token", "create", "ed"]),
        "no person ed — `shed person add ed` adds them"
    );
    let ada = shed.demo_cookie("ada").await;
    let (status, rows) = shed
        .query("runs", ".jog.who=Ed&.created!", Some(&ada))
        .await;
    assert_eq!(status, StatusCode::OK, "{rows}");
    let rows = rows["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "Ed's runs stay: {rows:?}");
    assert!(
        rows.iter().all(|row| row["created"]["by"]["name"] == "Ed"),
        "and stay his: {rows:?}"
    );

    assert_eq!(
        shed.refused(&["person", "remove", "ada"]),
        "the last owner of demo is @ada, and a space keeps at least one — make another owner \
         first (`shed member add <space> <handle> --role owner`)"
    );
}
