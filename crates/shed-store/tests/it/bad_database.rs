//! A database URL that cannot serve answers one sentence and writes nothing:
//! a URL that does not parse, a server not listening (named by host and
//! port), a wrong password, a database holding another program's tables.

use crate::common;

use shed_store::Store;

async fn refusal(url: &str) -> String {
    match Store::connect(url).await {
        Ok(_) => panic!("{url} opened"),
        Err(e) => e.to_string(),
    }
}

#[tokio::test]
async fn urls_that_do_not_parse_or_reach_nothing_are_sentences() {
    assert_eq!(
        refusal("mysql://a@b/c").await,
        "mysql://a@b/c is not a database URL shed knows — give postgres://user[:password]@host[:port]/database"
    );
    assert_eq!(
        refusal("postgres://nohost").await,
        "postgres://nohost is not a database URL (it names no user) — give postgres://user[:password]@host[:port]/database"
    );
    let unreachable = refusal("postgres://shed:secret@127.0.0.1:1/shed").await;
    assert!(
        unreachable.starts_with("could not reach PostgreSQL at 127.0.0.1:1 ("),
        "{unreachable}"
    );
    assert!(!unreachable.contains("secret"), "{unreachable}");
}

#[tokio::test]
async fn a_wrong_password_and_foreign_tables_are_refused_with_nothing_written() {
    let Some(url) = common::fresh_database() else {
        eprintln!("a test of a PostgreSQL server: SHED_TEST_DATABASE is not set");
        return;
    };
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let (scheme_user, rest) = url.split_once('@').unwrap();
    if let Some((user, _password)) = scheme_user
        .rsplit_once(':')
        .filter(|(u, _)| u.contains("//"))
    {
        let wrong = refusal(&format!("{user}:not-the-password@{rest}")).await;
        assert!(
            wrong.contains("refused user shed: wrong password or no such user"),
            "{wrong}"
        );
    }
    client
        .batch_execute("CREATE TABLE invoices(id INTEGER)")
        .await
        .unwrap();
    let foreign = refusal(&url).await;
    assert!(
        foreign.contains(
            "holds tables shed did not make (invoices) — give shed an empty database of its own"
        ),
        "{foreign}"
    );
    let tables: i64 = client
        .query_one(
            "SELECT COUNT(*) FROM pg_tables WHERE schemaname = current_schema()",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(tables, 1, "nothing was written beside the foreign table");
}
