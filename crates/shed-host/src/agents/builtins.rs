//! The platform's built-in commands, beside the apps' own: named with dots,
//! scope `global` or `loom` (an app the call names with `--loom`). Some carry
//! the declarations the protocol knows — `developer`, `actors`,
//! `origins_refused`, `origin`, a consent `grant` — and this command layer
//! enforces them on every call, whoever lists what.
//!
//! Each built-in is one type (in its own module) holding its row and its
//! body; [`Builtin`] names them all, so every `match` over it is checked by
//! the compiler, and a name from the wire is parsed into it once.

mod app_deploy;
mod app_files;
mod apps_list;
mod body;
mod doc_comment;
mod graph_apply;
mod graph_query;
mod row;
mod space_invite;
mod token_create;

use app_deploy::AppDeploy;
use app_files::AppFiles;
use apps_list::AppsList;
use body::{Args, BuiltinCommand, Invocation};
use doc_comment::DocComment;
use graph_apply::GraphApply;
use graph_query::GraphQuery;
use row::BuiltinRow;
use space_invite::SpaceInvite;
use token_create::TokenCreate;

use super::command::{AgentCall, CommandRow, Scope};
use crate::registry::LiveApp;
use crate::{Answer, Caller, Host, HostError};

/// A built-in command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Builtin {
    AppsList,
    GraphQuery,
    GraphApply,
    AppDeploy,
    SpaceInvite,
    AppFiles,
    TokenCreate,
    DocComment,
}

impl Builtin {
    /// Every built-in, in listing order.
    pub(crate) const ALL: [Builtin; 8] = [
        Builtin::AppsList,
        Builtin::GraphQuery,
        Builtin::GraphApply,
        Builtin::AppDeploy,
        Builtin::SpaceInvite,
        Builtin::AppFiles,
        Builtin::TokenCreate,
        Builtin::DocComment,
    ];

    /// The built-in of this name, if there is one.
    pub(crate) fn named(name: &str) -> Option<Builtin> {
        Builtin::ALL
            .into_iter()
            .find(|builtin| builtin.name() == name)
    }

    fn about(self) -> &'static BuiltinRow {
        match self {
            Builtin::AppsList => &AppsList::ROW,
            Builtin::GraphQuery => &GraphQuery::ROW,
            Builtin::GraphApply => &GraphApply::ROW,
            Builtin::AppDeploy => &AppDeploy::ROW,
            Builtin::SpaceInvite => &SpaceInvite::ROW,
            Builtin::AppFiles => &AppFiles::ROW,
            Builtin::TokenCreate => &TokenCreate::ROW,
            Builtin::DocComment => &DocComment::ROW,
        }
    }

    /// `apps.list`, `graph.query`, …
    pub(crate) fn name(self) -> &'static str {
        self.about().name
    }

    pub(crate) fn scope(self) -> Scope {
        self.about().scope
    }

    /// Its row as the protocol lists it.
    pub(crate) fn row(self) -> CommandRow {
        self.about().command_row()
    }

    /// Runs the built-in for the caller on `app` (the `--loom` app, for a
    /// built-in of scope loom), after its declarations admit the call.
    pub(crate) async fn run(
        self,
        host: &Host,
        caller: &Caller,
        call: &AgentCall,
        app: Option<&LiveApp>,
    ) -> Result<Answer, HostError> {
        let about = self.about();
        about.declarations.admit(about.name, caller, call)?;
        let invocation = Invocation {
            host,
            caller,
            name: about.name,
            args: Args::read(about.name, call.args.clone())?,
            expect: call.expect,
            app,
        };
        match self {
            Builtin::AppsList => AppsList::run(&invocation).await,
            Builtin::GraphQuery => GraphQuery::run(&invocation).await,
            Builtin::GraphApply => GraphApply::run(&invocation).await,
            Builtin::AppDeploy => AppDeploy::run(&invocation).await,
            Builtin::SpaceInvite => SpaceInvite::run(&invocation).await,
            Builtin::AppFiles => AppFiles::run(&invocation).await,
            Builtin::TokenCreate => TokenCreate::run(&invocation).await,
            Builtin::DocComment => DocComment::run(&invocation).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_has_a_schema_object_and_a_body() {
        for builtin in Builtin::ALL {
            let row = builtin.row().row;
            assert_eq!(row["inputSchema"]["type"], "object", "{}", builtin.name());
            assert!(row["outputs"].is_object(), "{}", builtin.name());
        }
    }

    #[test]
    fn every_builtin_is_found_by_its_own_name_only() {
        for builtin in Builtin::ALL {
            assert_eq!(Builtin::named(builtin.name()), Some(builtin));
        }
        assert_eq!(Builtin::named("graph.delete"), None);
    }
}
