//! Each app's components and columns as the store knows them, whatever the
//! backend: the platform's own components, an app's catalog
//! ([`AppSchema`]), the checks of an app name and of a vocabulary, and the
//! readers' cache of catalogs. Each backend keeps the catalog and the
//! per-app tables it describes in its own way (`sqlite/schema.rs`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::names::{RESERVED, is_app_name, is_word};
use crate::{ColumnType, StoreError, Vocabulary};
use shed_words::STORE_COLUMNS;

/// The components every app knows without declaring them.
pub(crate) fn platform_components() -> Vec<Component> {
    vec![
        Component {
            name: "doc".into(),
            columns: vec![
                ("title".into(), ColumnType::Text),
                ("body".into(), ColumnType::Text),
            ],
        },
        Component {
            name: "comment".into(),
            columns: vec![("target".into(), ColumnType::Ref)],
        },
    ]
}

/// A component and its typed columns, in declared order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Component {
    pub name: String,
    pub columns: Vec<(String, ColumnType)>,
}

impl Component {
    pub(crate) fn column(&self, name: &str) -> Option<ColumnType> {
        self.position(name).map(|(_, t)| t)
    }

    /// The column's place among the component's columns, and its type.
    pub(crate) fn position(&self, name: &str) -> Option<(usize, ColumnType)> {
        self.columns
            .iter()
            .enumerate()
            .find(|(_, (c, _))| c == name)
            .map(|(i, (_, t))| (i, *t))
    }

    /// `jog has no column mile — it has who, miles, at`
    pub(crate) fn no_column(&self, column: &str) -> StoreError {
        let has: Vec<&str> = self.columns.iter().map(|(c, _)| c.as_str()).collect();
        let has = if has.is_empty() {
            "none".to_string()
        } else {
            has.join(", ")
        };
        StoreError::refused(format!(
            "{} has no column {column} — it has {has}",
            self.name
        ))
    }
}

/// One app's catalog as the store holds it.
#[derive(Clone, Debug)]
pub(crate) struct AppSchema {
    /// The app's name as given (`jeff/runs`).
    pub name: String,
    /// Its row in `ec_apps`; `None` for an app never declared nor written.
    pub id: Option<i64>,
    pub components: Vec<Component>,
}

impl AppSchema {
    pub(crate) fn component(&self, name: &str) -> Option<&Component> {
        self.components.iter().find(|c| c.name == name)
    }

    /// The SQL name of a component's table in this app.
    pub(crate) fn table(id: i64, component: &str) -> String {
        format!("\"ec_{id}_{component}\"")
    }

    /// The SQL name of this app's full-text table over `doc`.
    pub(crate) fn fts(id: i64) -> String {
        format!("\"ec_{id}__fts\"")
    }
}

/// The catalog cache readers use; the writer always reads its own transaction.
#[derive(Default)]
pub(crate) struct Schemas {
    /// (generation, cache): a load that raced a change is not kept.
    cache: Mutex<(u64, HashMap<String, Arc<AppSchema>>)>,
}

impl Schemas {
    /// The app's catalog from the cache, or else the generation to hand
    /// [`Schemas::keep`] with the catalog once loaded.
    pub(crate) fn cached(&self, app: &str) -> Result<Arc<AppSchema>, Option<u64>> {
        match self.cache.lock() {
            Ok(cache) => match cache.1.get(app) {
                Some(s) => Ok(s.clone()),
                None => Err(Some(cache.0)),
            },
            Err(_) => Err(None),
        }
    }

    /// Keeps a catalog loaded at `generation`, unless it changed since.
    pub(crate) fn keep(&self, generation: Option<u64>, schema: Arc<AppSchema>) {
        if let Ok(mut cache) = self.cache.lock()
            && Some(cache.0) == generation
        {
            cache.1.insert(schema.name.clone(), schema);
        }
    }

    /// Drops what the cache holds for an app whose catalog may have changed.
    pub(crate) fn forget(&self, app: &str) {
        if let Ok(mut cache) = self.cache.lock() {
            cache.0 += 1;
            cache.1.remove(app);
        }
    }
}

/// `jeff/Runs is not an app name — …`
pub(crate) fn check_app_name(app: &str) -> Result<(), StoreError> {
    if is_app_name(app) {
        Ok(())
    } else {
        Err(StoreError::refused(format!(
            "{app} is not an app name — an app is <space>/<slug>, like jeff/runs"
        )))
    }
}

/// `doc`'s title and body are searched through the app's full-text table;
/// every other column has an index of its own.
pub(crate) fn indexed(component: &str) -> bool {
    component != "doc"
}

/// Checks a vocabulary's names before anything is created.
pub(crate) fn check_vocabulary(vocab: &Vocabulary) -> Result<(), StoreError> {
    let platform = platform_components();
    for (i, (name, columns)) in vocab.components.iter().enumerate() {
        if !is_word(name) {
            return Err(StoreError::refused(format!(
                "{name} is not a component name — use a-z, 0-9 and _, starting with a letter, up to 40 characters"
            )));
        }
        if RESERVED.contains(&name.as_str()) {
            return Err(StoreError::refused(format!(
                "{name} is a word the store uses itself — name the component otherwise"
            )));
        }
        if vocab.components[..i].iter().any(|(n, _)| n == name) {
            return Err(StoreError::refused(format!(
                "{name} is declared twice — declare each component once"
            )));
        }
        if let Some(p) = platform.iter().find(|p| &p.name == name)
            && !columns.iter().all(|(c, t)| p.column(c) == Some(*t))
        {
            let has: Vec<String> = p
                .columns
                .iter()
                .map(|(c, t)| format!("{c}: {}", t.as_str()))
                .collect();
            return Err(StoreError::refused(format!(
                "{name} is the platform's own component ({}) — name yours otherwise",
                has.join(", ")
            )));
        }
        for (j, (column, _)) in columns.iter().enumerate() {
            if !is_word(column) {
                return Err(StoreError::refused(format!(
                    "{name}.{column} is not a column name — use a-z, 0-9 and _, starting with a letter, up to 40 characters"
                )));
            }
            if STORE_COLUMNS.contains(&column.as_str()) {
                return Err(StoreError::refused(format!(
                    "{name}.{column} is kept by the store on every row — name the column otherwise"
                )));
            }
            if columns[..j].iter().any(|(c, _)| c == column) {
                return Err(StoreError::refused(format!(
                    "{name}.{column} is declared twice — declare each column once"
                )));
            }
        }
    }
    Ok(())
}
