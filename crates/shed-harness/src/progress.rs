//! A run's progress for a person watching a terminal: a line on stderr for
//! each model turn, each tool call and each retry, with the time since the
//! run started. When stderr is not a terminal (piped, a file, CI) nothing is
//! written, so what a script reads is the answer on stdout and, on failure,
//! the one error sentence on stderr.
//!
//! Text the model chose reaches a terminal only through [`escaped`]: a
//! control character (C0, DEL, C1) or a bidirectional override is written as
//! its escape (`\u{1b}`), so a tool name or an answer cannot move the cursor,
//! rewrite a line, set a window title or reorder what a person reads; a tool
//! name is also cut to [`SHOWN_NAME_MAX_CHARS`]. A JSON result printed for a
//! person goes through [`json_escaped`], which does the same with JSON's own
//! escapes.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// The most characters of a tool name a progress line shows: OpenAI's limit
/// for a function's name, well past the harness's own (`run_read_command`).
pub const SHOWN_NAME_MAX_CHARS: usize = 64;

/// What [`escaped`] leaves as it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// Every control is escaped: the text is one line.
    OneLine,
    /// Newlines and tabs are kept: the text is an answer of several lines.
    LinesAndTabs,
}

/// `text` with every control character (C0, DEL, C1) and every Unicode
/// bidirectional formatting character escaped as `\u{…}`, except what `keep`
/// keeps.
pub fn escaped(text: &str, keep: Keep) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let kept = keep == Keep::LinesAndTabs && matches!(c, '\n' | '\t');
        if !kept && (c.is_control() || is_bidi_control(c)) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// JSON text with every control and bidirectional formatting character
/// written as a JSON escape (`\u009b`): the same JSON, read by a program,
/// and nothing a terminal acts on. (`serde_json` escapes C0 itself, not DEL,
/// C1 or the bidirectional characters; none can stand outside a string.)
pub fn json_escaped(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        let structural = c == '\n';
        if (c.is_control() && !structural) || is_bidi_control(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// The characters that reorder the text around them (Unicode's bidirectional
/// formatting characters): shown as escapes, so what a person reads is what
/// the text holds, in its order.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// A name the model chose, cut to [`SHOWN_NAME_MAX_CHARS`] and marked `…`
/// where cut ([`line`] escapes it).
fn shown_name(name: &str) -> String {
    let mut chars = name.chars();
    let cut: String = chars.by_ref().take(SHOWN_NAME_MAX_CHARS).collect();
    let more = if chars.next().is_some() { "…" } else { "" };
    format!("{cut}{more}")
}

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
        self.say(&format!("  {} → {status}", shown_name(name)));
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

/// One progress line: the elapsed time, then what happened, on one line.
fn line(elapsed: Duration, text: &str) -> String {
    format!(
        "[{:>6.1} s] {}",
        elapsed.as_secs_f64(),
        escaped(text, Keep::OneLine)
    )
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

    #[test]
    fn controls_and_reordering_are_shown_as_escapes() {
        let spoof = "run_command\u{1b}[2K\r  run_command → refused_by_policy\u{7}";
        assert_eq!(
            escaped(spoof, Keep::OneLine),
            "run_command\\u{1b}[2K\\u{d}  run_command → refused_by_policy\\u{7}"
        );
        assert_eq!(
            escaped("a\tb\nc\u{9b}2J\u{202e}d\u{7f}", Keep::LinesAndTabs),
            "a\tb\nc\\u{9b}2J\\u{202e}d\\u{7f}"
        );
        assert_eq!(escaped("a\tb\n", Keep::OneLine), "a\\u{9}b\\u{a}");
        assert_eq!(escaped("plain → ok", Keep::OneLine), "plain → ok");
    }

    #[test]
    fn json_keeps_its_meaning_and_loses_its_controls() {
        let value = serde_json::json!({"t": "a\u{1b}[2J\u{9b}2J\u{7f}\u{202e}z\n"});
        let text = serde_json::to_string_pretty(&value).unwrap();
        let shown = json_escaped(&text);
        assert!(
            !shown
                .chars()
                .any(|c| (c.is_control() && c != '\n') || is_bidi_control(c))
        );
        assert!(shown.contains("\\u009b2J\\u007f\\u202ez"), "{shown}");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&shown).unwrap(),
            value
        );
    }

    #[test]
    fn a_long_name_is_cut() {
        let name = "n".repeat(SHOWN_NAME_MAX_CHARS + 10);
        let shown = shown_name(&name);
        assert_eq!(shown.chars().count(), SHOWN_NAME_MAX_CHARS + 1);
        assert!(shown.ends_with("n…"));
        assert_eq!(shown_name("run_command"), "run_command");
    }
}
