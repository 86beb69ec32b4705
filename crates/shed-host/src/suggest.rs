//! What a sentence suggests doing next, written once per door, so that a
//! suggestion runs as shown for the caller it is shown to: at the terminal,
//! a `shed …` command with the `--as` (and the flags) it needs; on a page,
//! the page's own action; over MCP, a tool or the app's page; to an agent,
//! what to offer its person.

/// `word` as one word of a POSIX shell: as it is when it holds nothing a
/// shell reads, else single-quoted.
pub fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./-+:=@%,".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// `shed <words> [flags]`: a command as it runs at a terminal whose data
/// needs `flags` (empty when none).
pub fn terminal_command(words: &str, flags: &str) -> String {
    if flags.is_empty() {
        format!("shed {words}")
    } else {
        format!("shed {words} {flags}")
    }
}

/// [`terminal_command`] as a sentence shows it: `` `shed <words> [flags]` ``.
pub(crate) fn shed_command(words: &str, flags: &str) -> String {
    format!("`{}`", terminal_command(words, flags))
}

/// The door a caller came in by: where a suggestion has to work.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Door {
    /// An MCP client, over HTTP or stdio: it calls tools.
    Mcp,
    /// A browser on the platform's pages: it presses buttons.
    Web,
    /// Whoever runs `shed` on the server: it runs commands.
    Terminal {
        /// The flags a pasted command needs besides `--as` (`--data
        /// '/srv/shed'`); empty when none.
        flags: String,
    },
    /// An agent, through the broker: it offers what it cannot do to its
    /// person.
    Agent,
}

impl Door {
    /// The word a write's activity keeps for the door: `mcp`, `web`,
    /// `terminal`, `broker`.
    pub fn word(&self) -> &'static str {
        match self {
            Door::Mcp => "mcp",
            Door::Web => "web",
            Door::Terminal { .. } => "terminal",
            Door::Agent => "broker",
        }
    }
}

/// Who a suggestion is for, and where shed's pages are.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Suggest<'a> {
    pub door: &'a Door,
    /// The acting person's handle, for the terminal's `--as`.
    pub handle: &'a str,
    /// The platform's public URL, for a link to a page.
    pub home: &'a str,
}

impl Suggest<'_> {
    /// A `shed …` command as it runs at this terminal: `--as` and the flags added.
    fn command(&self, words: &str) -> String {
        let flags = match self.door {
            Door::Terminal { flags } => flags.as_str(),
            _ => "",
        };
        shed_command(&format!("{words} --as {}", self.handle), flags)
    }

    /// The app's page, where its versions, Roll back, Trash, Restore and
    /// Purge are: a full address, since an app's own pages (where a page
    /// may say this) are on its space's origin, not the platform's.
    fn page(&self, app: &str) -> String {
        match app.split_once('/') {
            Some((space, slug)) => format!("{}/spaces/{space}/apps/{slug}", self.home),
            None => format!("{}/spaces/{app}", self.home),
        }
    }

    /// How to take `app` out of the trash: `shed app restore … --as …`, or
    /// Restore on its page.
    pub(crate) fn restore(&self, app: &str) -> String {
        self.act(app, &format!("app restore {app}"), "Restore")
    }

    /// How to delete `app` for good from the trash.
    pub(crate) fn purge(&self, app: &str) -> String {
        self.act(app, &format!("app purge {app} --confirm {app}"), "Purge")
    }

    /// How to put `app` in the trash.
    pub(crate) fn trash(&self, app: &str) -> String {
        self.act(app, &format!("app trash {app}"), "Trash")
    }

    /// An act on `app`: at the terminal the command `words`, elsewhere the
    /// page's `button`.
    fn act(&self, app: &str, words: &str, button: &str) -> String {
        match self.door {
            Door::Terminal { .. } => self.command(words),
            _ => format!("with {button} on its page, {}", self.page(app)),
        }
    }

    /// Where `app`'s versions are listed: `… lists them`.
    pub(crate) fn versions(&self, app: &str) -> String {
        match self.door {
            Door::Terminal { .. } => {
                format!(
                    "{} lists them",
                    self.command(&format!("app versions {app}"))
                )
            }
            _ => format!("its page lists them, {}", self.page(app)),
        }
    }

    /// How the caller comes to deploy into `space`, which they neither own
    /// nor edit. Only the terminal, which stands as an owner of every space,
    /// is told whether it `exists`; anyone else reads the same sentence
    /// either way.
    pub(crate) fn deploy_into(&self, space: &str, exists: bool) -> String {
        let handle = self.handle;
        match self.door {
            Door::Terminal { flags } => {
                let flags = if flags.is_empty() {
                    String::new()
                } else {
                    format!(" {flags}")
                };
                if exists {
                    format!(
                        "`shed member add {space} {handle} --role editor{flags}` makes {handle} an editor of it"
                    )
                } else {
                    format!("there is no space {space} yet: `shed space add {space} --owner {handle}{flags}` makes it")
                }
            }
            Door::Mcp => "`spaces` lists the spaces you belong to, and an owner of a space can add you as an editor".to_string(),
            Door::Web | Door::Agent => "an owner of a space can add you as an editor".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(door: &Door) -> Suggest<'_> {
        Suggest {
            door,
            handle: "ada",
            home: "http://localhost:7700",
        }
    }

    #[test]
    fn each_door_is_told_what_runs_there() {
        let terminal = Door::Terminal {
            flags: "--data '/srv/my shed'".into(),
        };
        assert_eq!(
            at(&terminal).restore("demo/runs"),
            "`shed app restore demo/runs --as ada --data '/srv/my shed'`"
        );
        assert_eq!(
            at(&Door::Terminal {
                flags: String::new()
            })
            .purge("demo/runs"),
            "`shed app purge demo/runs --confirm demo/runs --as ada`"
        );
        assert_eq!(
            at(&Door::Web).restore("demo/runs"),
            "with Restore on its page, http://localhost:7700/spaces/demo/apps/runs"
        );
        assert_eq!(
            at(&Door::Mcp).restore("demo/runs"),
            "with Restore on its page, http://localhost:7700/spaces/demo/apps/runs"
        );
        assert!(
            at(&Door::Mcp)
                .deploy_into("demo", true)
                .starts_with("`spaces` lists")
        );
        assert!(
            at(&Door::Terminal {
                flags: String::new()
            })
            .deploy_into("demo", true)
            .starts_with("`shed member add demo ada --role editor`")
        );
    }
}
