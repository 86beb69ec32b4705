//! View keys as the store keeps them, on either backend: a key opens only
//! the app it was made for, only while it lives, and keeping one forgets
//! those expired.

use shed_store::ViewKey;

use crate::common::open_store;

#[tokio::test]
async fn a_view_key_names_its_person_for_its_app_until_it_expires() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await;
    let ada = store.add_person("ada", "Ada").await.unwrap();
    let key = |hash| ViewKey {
        hash,
        person: &ada.eid,
        space: "jeff",
        slug: "runs",
    };
    store.add_view_key(key("k1"), 100, 0).await.unwrap();
    let person = |hash, slug, now| store.view_key_person(hash, "jeff", slug, now);
    assert_eq!(
        person("k1", "runs", 99).await.unwrap(),
        Some(ada.eid.clone())
    );
    assert_eq!(person("k1", "club", 99).await.unwrap(), None, "another app");
    assert_eq!(person("k1", "runs", 100).await.unwrap(), None, "expired");
    assert_eq!(person("k2", "runs", 0).await.unwrap(), None, "never made");
    // Keeping a key at 100 forgets k1, expired then: made again, it is new.
    store.add_view_key(key("k2"), 200, 100).await.unwrap();
    store.add_view_key(key("k1"), 300, 100).await.unwrap();
    assert_eq!(
        person("k1", "runs", 250).await.unwrap(),
        Some(ada.eid.clone())
    );
    assert_eq!(person("k2", "runs", 150).await.unwrap(), Some(ada.eid));
}
