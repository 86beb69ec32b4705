//! What the store's benches share: the kind they fill, and the person who
//! writes it.

use shed_store::{Actor, ColumnType, Store, Vocabulary};

/// `jog {who: text, miles: number, at: time}`, the run club's kind.
pub fn jog_vocabulary() -> Vocabulary {
    Vocabulary {
        components: vec![(
            "jog".into(),
            vec![
                ("who".into(), ColumnType::Text),
                ("miles".into(), ColumnType::Number),
                ("at".into(), ColumnType::Time),
            ],
        )],
    }
}

/// Adds the person `ada`, declares [`jog_vocabulary`] for each of `apps`,
/// and answers ada as the actor of the writes.
pub async fn ada_writing(store: &Store, apps: &[&str]) -> Actor {
    let ada = store.add_person("ada", "Ada").await.unwrap();
    for app in apps {
        store.declare(app, &jog_vocabulary()).await.unwrap();
    }
    Actor {
        person: ada.eid,
        via: None,
        through: None,
    }
}
