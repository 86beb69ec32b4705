//! How a run ends besides with an answer, and the exit codes that say so: a
//! host answer saying the job the run acts for is over — ended, expired or
//! not a job at all — stops the run at that answer (nothing more can run,
//! so asking the model again only spends turns); and a run that answered
//! although every write it tried was refused, and nothing was written, says
//! so on its last line. Piped, as cron runs it, the exit code is what shows.

use crate::outcome::HostOutcome;

/// The model answered (`run`), or the tool's result was printed (`tool`).
/// The codes are listed in `--help` ([`EXIT_CODES_HELP`]) and the README.
pub const EXIT_ANSWERED: i32 = 0;
/// The run failed: the model server, `--max-turns`, the transcript or the
/// policy trace — its sentence on stderr.
pub const EXIT_FAILED: i32 = 1;
/// The arguments or the host configuration were refused before anything ran.
pub const EXIT_USAGE: i32 = 2;
/// The host said the job is ended, expired or unknown: the run stopped at
/// that answer, the host's sentence on stderr.
pub const EXIT_JOB_OVER: i32 = 3;
/// The model answered, but a write it tried was refused (by the policy, as
/// without `--task-slot direct-command`, or by the host) and nothing was
/// written: the last line says so.
pub const EXIT_NOTHING_WRITTEN: i32 = 4;

/// The exit codes as `--help` lists them.
pub const EXIT_CODES_HELP: &str = "\
Exit codes:
  0  the model answered (`run`), or the tool's result was printed (`tool`)
  1  the run failed: the model server, --max-turns, the transcript or the policy trace
  2  the arguments or the host configuration were refused; nothing ran
  3  the host said the job is ended, expired or unknown: the run stopped at that answer,
     the host's sentence on stderr (`shed job create` makes a new job)
  4  `run`: the model answered, but a write was refused (by the policy — pass
     --task-slot direct-command for a task the person typed — or by the host) and
     nothing was written: the last line of stdout says so";

/// The host's sentence, when it says the job is over: a refusal (`forbidden`)
/// whose sentence names no job, or the job as ended or expired — what shed's
/// broker answers, to a listing or a run, for every call such a job makes.
pub fn job_over(code: &str, message: &str) -> Option<String> {
    let over = code == "forbidden"
        && (message.starts_with("no job")
            || message.strip_prefix("job ").is_some_and(|rest| {
                rest.split_once(' ').is_some_and(|(_, said)| {
                    said.starts_with("was ended") || said.starts_with("expired")
                })
            }));
    over.then(|| message.to_string())
}

/// What a run met that decides how it ends.
#[derive(Debug, Default)]
pub struct RunEnd {
    /// The host's sentence saying the job is over, from the first answer
    /// that said so.
    pub job_over: Option<String>,
    /// The sentence of the first write refused.
    pub refused_write: Option<String>,
    /// Whether any call wrote, or may have.
    pub landed: bool,
}

impl RunEnd {
    /// Notes a host's refusal of the listing.
    pub fn listing_refused(&mut self, code: &str, message: &str) {
        if self.job_over.is_none() {
            self.job_over = job_over(code, message);
        }
    }

    /// Notes a host's answer to a call; `write` whether the command writes.
    pub fn answered(&mut self, outcome: &HostOutcome, write: bool) {
        if self.job_over.is_none() {
            self.job_over = job_over(&outcome.code, &outcome.message);
        }
        if outcome.may_have_landed == serde_json::Value::Bool(true) {
            self.landed = true;
        }
        if write && !outcome.ok && matches!(outcome.code.as_str(), "forbidden" | "refused") {
            self.write_refused(&outcome.message);
        }
    }

    /// Notes a write refused, by the policy or the host.
    pub fn write_refused(&mut self, sentence: &str) {
        if self.refused_write.is_none() {
            self.refused_write = Some(sentence.to_string());
        }
    }

    /// The last line of a run that answered but wrote nothing because a
    /// write was refused; `None` for any other run.
    pub fn nothing_written(&self) -> Option<String> {
        match (&self.refused_write, self.landed) {
            (Some(sentence), false) => Some(format!(
                "nothing was written: a write was refused — {sentence}"
            )),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_broker_s_sentences_for_a_job_that_is_over_are_read_as_such() {
        for said in [
            "job job-1 was ended at 2026-09-01T10:00:00Z — its agent runs nothing more; `shed job create` makes a new job",
            "job job-12 expired at 2026-09-01T10:00:00Z — `shed job create --ttl <duration>` makes a new job that runs longer",
            "no job — the request carries no LOOM_COMMAND_JOB_ID; the broker runs commands only for a job",
        ] {
            assert_eq!(job_over("forbidden", said).as_deref(), Some(said));
            assert_eq!(job_over("refused", said), None);
        }
        for not_over in [
            "job job-1 grants no read-only run of a/b.log — its --read-only globs do not name it",
            "a/b.log changes data, and a read-only run runs only reads",
        ] {
            assert_eq!(job_over("forbidden", not_over), None);
        }
    }
}
