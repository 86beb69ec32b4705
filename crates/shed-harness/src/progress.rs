//! A run's progress for a person watching a terminal: a line on stderr for
//! each model turn, each tool call and each retry, with the time since the
//! run started. When stderr is not a terminal (piped, a file, CI) nothing is
//! written, so what a script reads is the answer on stdout and, on failure,
//! the one error sentence on stderr.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// Where progress lines go, if anywhere.
pub struct Progress {
    started: Instant,
    shown: bool,
}

impl Progress {
    /// Progress on stderr when stderr is a terminal; none otherwise.
    pub fn on_terminal() -> Progress {
        Progress {
            started: Instant::now(),
            shown: std::io::stderr().is_terminal(),
        }
    }

    /// No progress at all.
    pub fn hidden() -> Progress {
        Progress {
            started: Instant::now(),
            shown: false,
        }
    }

    /// A model turn starts.
    pub fn turn(&self, turn: usize, max_turns: usize) {
        self.say(&format!("turn {turn} of {max_turns}: asking the model"));
    }

    /// A tool call was answered with `status`.
    pub fn tool(&self, name: &str, status: &str) {
        self.say(&format!("  {name} → {status}"));
    }

    /// The server answered `status`; try `next` of `tries` after `pause`.
    pub fn retrying(&self, status: u16, pause: Duration, next: u32, tries: u32) {
        self.say(&format!(
            "the model server answered HTTP {status}; try {next} of {tries} in {} s",
            pause.as_secs_f64()
        ));
    }

    /// The model answered in text.
    pub fn answered(&self) {
        self.say("the model answered");
    }

    fn say(&self, text: &str) {
        if self.shown {
            let _ = writeln!(std::io::stderr(), "{}", line(self.started.elapsed(), text));
        }
    }
}

/// One progress line: the elapsed time, then what happened.
fn line(elapsed: Duration, text: &str) -> String {
    format!("[{:>6.1} s] {text}", elapsed.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_leads_with_the_elapsed_time() {
        assert_eq!(
            line(
                Duration::from_millis(3_240),
                "turn 2 of 32: asking the model"
            ),
            "[   3.2 s] turn 2 of 32: asking the model"
        );
        assert_eq!(
            line(Duration::from_secs(612), "  run_command → executed"),
            "[ 612.0 s]   run_command → executed"
        );
    }
}
