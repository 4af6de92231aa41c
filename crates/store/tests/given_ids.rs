//! Profiles and conversations with ids chosen elsewhere (the CLI's `--device-id` and `--session`).

use hermes_store::{Dialect, Error, NewProfile, Store};

fn new(dialect: Dialect) -> NewProfile {
    NewProfile {
        name: "cli".into(),
        url: "ws://127.0.0.1:8787/ws".into(),
        dialect,
        v3_user_id: None,
        allow_insecure_ws: false,
        avatar_url: None,
    }
}

#[test]
fn a1_a_given_device_id_is_kept_and_validated() {
    let s = Store::open_in_memory().unwrap();
    let p = s.profile_create_with_device_id(&new(Dialect::Adapter), "cli-laptop.1").unwrap();
    assert_eq!(s.profile_get(&p.id).unwrap().unwrap().device_id, "cli-laptop.1");
    for bad in ["", "has space", "semi;colon", "slash/", &"x".repeat(129)] {
        assert!(
            matches!(s.profile_create_with_device_id(&new(Dialect::Adapter), bad), Err(Error::InvalidInput(_))),
            "{bad:?}"
        );
    }
    // device ids are unique
    assert!(s.profile_create_with_device_id(&new(Dialect::Adapter), "cli-laptop.1").is_err());
    // generated ones still have the desktop- form
    assert!(s.profile_create(&new(Dialect::Adapter)).unwrap().device_id.starts_with("desktop-"));
}

#[test]
fn g11_a_given_session_makes_one_conversation() {
    let s = Store::open_in_memory().unwrap();
    let p = s.profile_create(&new(Dialect::V3)).unwrap();
    let c = s.conversation_create_with_session(&p.id, "t", "11111111-2222-4333-8444-555555555555").unwrap();
    assert_eq!(c.session, "11111111-2222-4333-8444-555555555555");
    assert!(s.conversation_create_with_session(&p.id, "again", &c.session).is_err(), "one conversation per session");
    let a = s.profile_create(&new(Dialect::Adapter)).unwrap();
    assert!(matches!(s.conversation_create_with_session(&a.id, "t", "x"), Err(Error::WrongDialect { .. })));
}
