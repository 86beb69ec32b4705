//! Passkeys and their ceremonies' states as the store keeps them, on either
//! backend: a credential is kept once, a person lists and removes only
//! their own, a sign-in moves its record on, a ceremony's state is taken
//! once and only while it lives, and removing a person forgets theirs.

use shed_store::passkeys::{CeremonyCaps, CeremonyKept, CeremonyKind, NewCeremony, NewPasskey};
use shed_store::revocable::PersonRemoval;
use shed_store::{Person, Store, secret_hash};

use crate::common::open_store;

fn passkey(person: &Person, credential: &str, name: &str) -> NewPasskey {
    NewPasskey {
        person: person.eid.clone(),
        credential: credential.to_string(),
        passkey: format!("{{\"cred\":\"{credential}\",\"counter\":0}}"),
        name: name.to_string(),
        created_at: 1_000,
    }
}

async fn store_with_ada_and_bob() -> (tempfile::TempDir, Store, Person, Person) {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await;
    let ada = store.add_person("ada", "Ada").await.unwrap();
    let bob = store.add_person("bob", "Bob").await.unwrap();
    (dir, store, ada, bob)
}

#[tokio::test]
async fn passkeys_are_kept_once_listed_used_and_removed_by_their_person() {
    let (_dir, store, ada, bob) = store_with_ada_and_bob().await;
    let laptop = store
        .add_passkey(passkey(&ada, "Y3JlZC0x", "laptop"))
        .await
        .unwrap()
        .expect("a new credential is kept");
    let phone = store
        .add_passkey(passkey(&ada, "Y3JlZC0y", "phone"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        store
            .add_passkey(passkey(&bob, "Y3JlZC0x", "stolen"))
            .await
            .unwrap(),
        None,
        "a credential kept already is not kept again, for anyone"
    );
    let adas = store.passkeys(&ada.eid).await.unwrap();
    let names: Vec<&str> = adas.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["laptop", "phone"]);
    assert_eq!(adas[0].id, laptop);
    assert_eq!((adas[0].created_at, adas[0].last_used_at), (1_000, None));
    assert!(store.passkeys(&bob.eid).await.unwrap().is_empty());

    let found = store
        .passkey_by_credential("Y3JlZC0y")
        .await
        .unwrap()
        .expect("found by its credential");
    assert_eq!((found.id, found.person.as_str()), (phone, ada.eid.as_str()));
    assert_eq!(store.passkey_by_credential("bm9uZQ").await.unwrap(), None);

    assert!(
        store
            .passkey_used(phone, "{\"counter\":7}", 2_000)
            .await
            .unwrap()
    );
    let used = store
        .passkey_by_credential("Y3JlZC0y")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (used.passkey.as_str(), used.last_used_at),
        ("{\"counter\":7}", Some(2_000))
    );

    assert!(
        !store.remove_passkey(&bob.eid, phone).await.unwrap(),
        "bob cannot remove ada's passkey"
    );
    assert!(store.remove_passkey(&ada.eid, phone).await.unwrap());
    assert!(!store.remove_passkey(&ada.eid, phone).await.unwrap());
    assert_eq!(store.passkey_by_credential("Y3JlZC0y").await.unwrap(), None);
    assert!(!store.passkey_used(phone, "{}", 3_000).await.unwrap());
}

fn ceremony(secret: &str, kind: CeremonyKind, person: Option<&Person>) -> NewCeremony {
    NewCeremony {
        hash: secret_hash(secret),
        kind,
        person: person.map(|p| p.eid.clone()),
        name: person.map(|_| "laptop".to_string()),
        state: format!("{{\"state\":\"{secret}\"}}"),
        expires_at: 300,
        address: None,
    }
}

#[tokio::test]
async fn a_ceremony_is_taken_once_of_its_kind_while_it_lives() {
    let (_dir, store, ada, _bob) = store_with_ada_and_bob().await;
    store
        .add_ceremony(ceremony("r", CeremonyKind::Register, Some(&ada)), 0, None)
        .await
        .unwrap();
    store
        .add_ceremony(ceremony("s", CeremonyKind::SignIn, None), 0, None)
        .await
        .unwrap();
    assert_eq!(
        store
            .take_ceremony(&secret_hash("r"), CeremonyKind::SignIn, 10)
            .await
            .unwrap(),
        None,
        "a registration is no sign-in"
    );
    let taken = store
        .take_ceremony(&secret_hash("r"), CeremonyKind::Register, 10)
        .await
        .unwrap()
        .expect("taken while it lives");
    assert_eq!(taken.person.as_deref(), Some(ada.eid.as_str()));
    assert_eq!(taken.name.as_deref(), Some("laptop"));
    assert_eq!(taken.state, "{\"state\":\"r\"}");
    assert_eq!(
        store
            .take_ceremony(&secret_hash("r"), CeremonyKind::Register, 10)
            .await
            .unwrap(),
        None,
        "taken once"
    );
    assert_eq!(
        store
            .take_ceremony(&secret_hash("s"), CeremonyKind::SignIn, 300)
            .await
            .unwrap(),
        None,
        "expired at its time"
    );
    // A new state forgets the expired ones; a live one stays.
    store
        .add_ceremony(ceremony("t", CeremonyKind::SignIn, None), 100, None)
        .await
        .unwrap();
    assert!(
        store
            .take_ceremony(&secret_hash("t"), CeremonyKind::SignIn, 200)
            .await
            .unwrap()
            .is_some()
    );
}

// Under caps, a sign-in's state is kept only while fewer live sign-ins than
// the caps are kept from its address and in all; expired ones and
// registrations do not count.
#[tokio::test]
async fn sign_ins_under_caps_are_kept_up_to_them_per_address_and_in_all() {
    let (_dir, store, ada, _bob) = store_with_ada_and_bob().await;
    let caps = Some(CeremonyCaps {
        all: 3,
        per_address: 2,
    });
    let from = |secret: &str, address: &str, expires_at: i64| NewCeremony {
        address: Some(address.into()),
        expires_at,
        ..ceremony(secret, CeremonyKind::SignIn, None)
    };
    let kept = async |new: NewCeremony, now: i64| store.add_ceremony(new, now, caps).await.unwrap();
    // One that expires soon, and registrations, which are not counted.
    assert_eq!(kept(from("old", "a", 50), 0).await, CeremonyKept::Kept);
    for i in 0..3 {
        store
            .add_ceremony(
                ceremony(&format!("r{i}"), CeremonyKind::Register, Some(&ada)),
                0,
                None,
            )
            .await
            .unwrap();
    }
    assert_eq!(kept(from("a1", "a", 300), 10).await, CeremonyKept::Kept);
    assert_eq!(
        kept(from("a2", "a", 300), 10).await,
        CeremonyKept::AddressFull
    );
    assert_eq!(kept(from("b1", "b", 300), 10).await, CeremonyKept::Kept);
    assert_eq!(kept(from("c1", "c", 300), 10).await, CeremonyKept::AllFull);
    // Once the first expired, its place is free.
    assert_eq!(kept(from("a3", "a", 300), 60).await, CeremonyKept::Kept);
    assert_eq!(
        kept(from("a4", "a", 300), 60).await,
        CeremonyKept::AddressFull
    );
    // Those refused were not kept; the others were.
    for (secret, there) in [
        ("a1", true),
        ("a2", false),
        ("b1", true),
        ("c1", false),
        ("a3", true),
        ("a4", false),
    ] {
        let taken = store
            .take_ceremony(&secret_hash(secret), CeremonyKind::SignIn, 100)
            .await
            .unwrap();
        assert_eq!(taken.is_some(), there, "{secret}");
    }
}

#[tokio::test]
async fn removing_a_person_forgets_their_passkeys_and_ceremonies() {
    let (_dir, store, ada, bob) = store_with_ada_and_bob().await;
    store
        .add_passkey(passkey(&ada, "YWRh", "laptop"))
        .await
        .unwrap();
    store
        .add_passkey(passkey(&bob, "Ym9i", "phone"))
        .await
        .unwrap();
    store
        .add_ceremony(ceremony("r", CeremonyKind::Register, Some(&ada)), 0, None)
        .await
        .unwrap();
    assert!(matches!(
        store.remove_person(&ada.eid, 50).await.unwrap(),
        PersonRemoval::Done(_)
    ));
    assert!(store.passkeys(&ada.eid).await.unwrap().is_empty());
    assert_eq!(store.passkey_by_credential("YWRh").await.unwrap(), None);
    assert_eq!(
        store
            .take_ceremony(&secret_hash("r"), CeremonyKind::Register, 10)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store.passkeys(&bob.eid).await.unwrap().len(),
        1,
        "bob keeps his"
    );
}

/// A column that holds another type than the store reads (here a passkey's
/// `created_at` made text behind the store's back) is the database failing
/// the store: a read answers a typed error, and nothing panics.
#[tokio::test]
async fn a_column_of_another_type_is_an_error_not_a_panic() {
    let (dir, store, ada, _bob) = store_with_ada_and_bob().await;
    store
        .add_passkey(passkey(&ada, "YWRh", "laptop"))
        .await
        .unwrap();
    match shed_test_database::for_folder(dir.path()) {
        None => {
            rusqlite::Connection::open(dir.path().join("shed.db"))
                .unwrap()
                .execute("UPDATE passkeys SET created_at = 'then'", [])
                .unwrap();
        }
        Some(url) => {
            crate::common::server_client(&url)
                .await
                .batch_execute(
                    "ALTER TABLE passkeys ALTER COLUMN created_at TYPE TEXT USING 'then'",
                )
                .await
                .unwrap();
        }
    }
    let read = tokio::spawn(async move { store.passkeys(&ada.eid).await })
        .await
        .expect("a read of a column of another type does not panic");
    assert!(
        matches!(read, Err(shed_store::StoreError::Database(_))),
        "{read:?}"
    );
}
