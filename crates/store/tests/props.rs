//! Property tests: each table's operations against a simple in-memory model.

use std::collections::HashMap;

use hermes_store::*;
use proptest::prelude::*;

fn store_with_v3() -> (Store, Profile, Conversation) {
    let s = Store::open_in_memory().expect("open");
    let p = s
        .profile_create(&NewProfile {
            name: "P".into(),
            url: "ws://x".into(),
            dialect: Dialect::V3,
            v3_user_id: None,
            allow_insecure_ws: false,
            avatar_url: None,
        })
        .expect("profile");
    let c = s.conversation_create(&p.id, "c").expect("conv");
    (s, p, c)
}

fn opt_string() -> impl Strategy<Value = Option<String>> {
    proptest::option::of(any::<String>())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn profile_roundtrip(
        name in any::<String>(),
        url in any::<String>(),
        v3 in any::<bool>(),
        user in opt_string(),
        insecure in any::<bool>(),
        avatar in opt_string(),
        new_name in any::<String>(),
    ) {
        let s = Store::open_in_memory().expect("open");
        let np = NewProfile {
            name, url,
            dialect: if v3 { Dialect::V3 } else { Dialect::Adapter },
            v3_user_id: user, allow_insecure_ws: insecure, avatar_url: avatar,
        };
        let p = s.profile_create(&np).expect("create");
        prop_assert_eq!(&p.name, &np.name);
        prop_assert_eq!(&p.url, &np.url);
        prop_assert_eq!(&p.v3_user_id, &np.v3_user_id);
        prop_assert_eq!(&p.avatar_url, &np.avatar_url);
        prop_assert_eq!(p.allow_insecure_ws, np.allow_insecure_ws);
        prop_assert!(p.device_id.len() == 24 && p.device_id.starts_with("desktop-"));
        prop_assert!(p.device_id[8..].chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        prop_assert_eq!(s.profile_get(&p.id).expect("get"), Some(p.clone()));
        let mut up = ProfileUpdate::from(&p);
        up.name = new_name.clone();
        let p2 = s.profile_update(&p.id, &up).expect("update");
        prop_assert_eq!(&p2.name, &new_name);
        prop_assert_eq!(&p2.device_id, &p.device_id);
        let json = serde_json::to_value(&p2).expect("ser");
        let keys: Vec<&String> = json.as_object().expect("object").keys().collect();
        prop_assert!(
            keys.iter().all(|k| *k == "has_token" || !k.contains("token")),
            "only the has_token flag may mention a token: {:?}", keys
        );
    }

    /// Random upserts (new ids and streamed updates of old ones) then paging through the whole
    /// history with a random page size: newest first, nothing lost or duplicated.
    #[test]
    fn messages_upsert_page_count(
        ops in proptest::collection::vec((0usize..12, 0i64..8, "[a-z ]{0,12}"), 1..60),
        limit in 1u32..9,
    ) {
        let (s, _, c) = store_with_v3();
        let ids: Vec<String> = (0..12).map(|_| new_id()).collect();
        // model: id -> (created_at, insertion order, text)
        let mut model: HashMap<String, (i64, usize, String)> = HashMap::new();
        for (k, (idx, at, text)) in ops.iter().enumerate() {
            let mut m = Message::new(&c.id, Direction::Down, text, *at);
            m.id = ids[*idx].clone();
            m.assembly = Assembly::Streaming;
            s.message_upsert(&m).expect("upsert");
            let e = model.entry(m.id.clone()).or_insert((*at, k, String::new()));
            e.2 = text.clone(); // created_at and order stay those of the first write
        }
        prop_assert_eq!(s.count(&c.id).expect("count"), model.len() as u64);
        let mut expected: Vec<(&String, &(i64, usize, String))> = model.iter().collect();
        expected.sort_by_key(|e| std::cmp::Reverse((e.1.0, e.1.1)));
        let mut got = Vec::new();
        let mut before = None;
        loop {
            let page = s.page(&c.id, before, limit).expect("page");
            prop_assert!(page.messages.len() <= limit as usize);
            got.extend(page.messages.into_iter().map(|m| (m.id, m.text, m.created_at)));
            match page.next { Some(cur) => before = Some(cur), None => break }
        }
        let want: Vec<(String, String, i64)> =
            expected.into_iter().map(|(id, (at, _, t))| (id.clone(), t.clone(), *at)).collect();
        prop_assert_eq!(got, want);
        prop_assert!(s.integrity_check().expect("check").is_empty());
    }

    /// Any user input is a valid search; words of stored messages are found.
    #[test]
    fn search_never_errors_and_finds_words(
        query in any::<String>(),
        words in proptest::collection::vec("[a-z]{3,8}", 1..6),
        pick in any::<proptest::sample::Index>(),
    ) {
        let (s, p, c) = store_with_v3();
        let text = words.join(" ");
        let m = Message::new(&c.id, Direction::Down, &text, 1);
        s.message_upsert(&m).expect("upsert");
        s.search(&query, &SearchOptions::default()).expect("arbitrary query must not error");
        let word = pick.get(&words);
        for q in [word.clone(), word[..2].to_string(), format!("  {}\"  ", word.to_uppercase())] {
            let hits = s.search(&q, &SearchOptions { profile_id: Some(p.id.clone()), ..Default::default() })
                .expect("search");
            prop_assert_eq!(hits.len(), 1, "query {:?} in {:?}", q, text);
            prop_assert_eq!(&hits[0].message_id, &m.id);
            prop_assert!(hits[0].snippet.contains('[') && hits[0].snippet.contains(']'));
        }
    }

    #[test]
    fn fts_query_is_always_balanced(input in any::<String>()) {
        if let Some(q) = fts_query(&input, true) {
            // Every phrase is quoted: an even number of quote characters overall.
            prop_assert_eq!(q.matches('"').count() % 2, 0);
            prop_assert!(q.starts_with('"'));
        }
    }

    #[test]
    fn media_roundtrip(
        segs in proptest::collection::vec("[A-Za-z0-9_ .-]{1,10}", 1..4),
        sha in "[0-9a-f]{64}",
        mime in any::<String>(),
        size in 0u64..=(i64::MAX as u64),
        filename in opt_string(),
        received in any::<bool>(),
    ) {
        let (s, p, _) = store_with_v3();
        let path = segs.join("/");
        prop_assume!(!segs.iter().any(|x| x == ".." ));
        let e = MediaEntry {
            id: new_id(), profile_id: p.id.clone(), message_id: Some(new_id()), path, sha256: sha.clone(),
            mime, size, filename,
            origin: if received { MediaOrigin::Received } else { MediaOrigin::Sent }, created_at: 5,
        };
        s.media_insert(&e).expect("insert");
        prop_assert_eq!(s.media_get(&e.id).expect("get"), Some(e.clone()));
        prop_assert_eq!(s.media_by_sha256(&sha, Some(&p.id)).expect("sha"), vec![e.clone()]);
        let mid = e.message_id.clone().expect("mid");
        prop_assert_eq!(s.media_for_message(&mid).expect("msg"), vec![e]);
    }

    /// v3 conversations under random create / rename / delete match a model.
    #[test]
    fn conversations_model(ops in proptest::collection::vec((0u8..3, 0usize..6, "[a-z]{0,6}"), 1..30)) {
        let (s, p, first) = store_with_v3();
        let mut model: Vec<(String, String)> = vec![(first.id.clone(), first.title.clone())];
        for (op, idx, title) in ops {
            match op {
                0 => {
                    let c = s.conversation_create(&p.id, &title).expect("create");
                    prop_assert_eq!(&c.title, &title);
                    model.push((c.id, title));
                }
                1 if !model.is_empty() => {
                    let i = idx % model.len();
                    s.conversation_rename(&model[i].0, &title).expect("rename");
                    model[i].1 = title;
                }
                2 if !model.is_empty() => {
                    let i = idx % model.len();
                    s.conversation_delete(&model[i].0).expect("delete");
                    let (id, _) = model.remove(i);
                    prop_assert!(matches!(s.conversation_delete(&id), Err(Error::NotFound(_))));
                }
                _ => {}
            }
        }
        let mut got: Vec<(String, String)> =
            s.conversations(&p.id).expect("list").into_iter().map(|c| (c.id, c.title)).collect();
        got.sort();
        model.sort();
        prop_assert_eq!(got, model);
        let sessions: std::collections::HashSet<String> =
            s.conversations(&p.id).expect("list").into_iter().map(|c| c.session).collect();
        prop_assert_eq!(sessions.len(), s.conversations(&p.id).expect("list").len());
    }

    #[test]
    fn export_contains_every_message(texts in proptest::collection::vec(("[a-zA-Z0-9 .,!?]{1,30}", any::<bool>()), 0..15)) {
        let (s, _, c) = store_with_v3();
        for (i, (t, out)) in texts.iter().enumerate() {
            let dir = if *out { Direction::Up } else { Direction::Down };
            s.message_upsert(&Message::new(&c.id, dir, t, i as i64 * 1000)).expect("upsert");
        }
        let ex = s.export_json(&c.id).expect("json");
        prop_assert_eq!(ex.messages.len(), texts.len());
        let md = render_markdown(&ex);
        prop_assert_eq!(md.matches("\n---\n").count() + usize::from(md.starts_with("---")), texts.len());
        let mut pos = 0;
        for (t, _) in &texts {
            let t = t.trim_end();
            if t.is_empty() { continue; }
            let found = md[pos..].find(t);
            prop_assert!(found.is_some(), "{:?} missing in order", t);
            pos += found.unwrap_or(0) + t.len();
        }
        let back: ConversationExport = serde_json::from_str(&serde_json::to_string(&ex).expect("ser")).expect("de");
        prop_assert_eq!(back, ex);
    }
}

fn is_invalid_state(r: &Result<()>) -> bool {
    matches!(r, Err(Error::InvalidState { .. }))
}

#[derive(Debug, Clone)]
enum OutboxOp {
    Insert,
    MarkInFlight(usize),
    Requeue,
    Confirm(usize),
    Fail(usize),
    Retry(usize),
    Delete(usize),
    Purge,
}

fn outbox_op() -> impl Strategy<Value = OutboxOp> {
    prop_oneof![
        3 => Just(OutboxOp::Insert),
        3 => (0usize..16).prop_map(OutboxOp::MarkInFlight),
        1 => Just(OutboxOp::Requeue),
        2 => (0usize..16).prop_map(OutboxOp::Confirm),
        1 => (0usize..16).prop_map(OutboxOp::Fail),
        1 => (0usize..16).prop_map(OutboxOp::Retry),
        1 => (0usize..16).prop_map(OutboxOp::Delete),
        1 => Just(OutboxOp::Purge),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// The outbox against a state-machine model: states, attempts, order and errors.
    #[test]
    fn outbox_state_machine(ops in proptest::collection::vec(outbox_op(), 1..50)) {
        let (s, p, c) = store_with_v3();
        // model: ordered entries (id, state, attempts)
        let mut model: Vec<(String, OutboxState, u32)> = Vec::new();
        let mut next = 0;
        let pick = |model: &Vec<(String, OutboxState, u32)>, i: usize| -> Option<usize> {
            if model.is_empty() { None } else { Some(i % model.len()) }
        };
        for op in ops {
            match op {
                OutboxOp::Insert => {
                    let id = format!("w{next}");
                    next += 1;
                    s.outbox_insert(&NewOutboxEntry {
                        id: id.clone(), profile_id: p.id.clone(), conversation_id: c.id.clone(),
                        kind: OutboxKind::Media, payload: serde_json::json!({"path": id}),
                    }).expect("insert");
                    model.push((id, OutboxState::Pending, 0));
                }
                OutboxOp::MarkInFlight(i) => if let Some(i) = pick(&model, i) {
                    let r = s.outbox_mark_in_flight(&model[i].0);
                    match model[i].1 {
                        OutboxState::Pending | OutboxState::InFlight => {
                            prop_assert!(r.is_ok());
                            model[i].1 = OutboxState::InFlight;
                            model[i].2 += 1;
                        }
                        _ => prop_assert!(is_invalid_state(&r)),
                    }
                },
                OutboxOp::Requeue => {
                    let n = s.outbox_requeue_in_flight(&p.id).expect("requeue");
                    let mut want = 0;
                    for e in model.iter_mut().filter(|e| e.1 == OutboxState::InFlight) {
                        e.1 = OutboxState::Pending;
                        want += 1;
                    }
                    prop_assert_eq!(n, want);
                }
                OutboxOp::Confirm(i) => if let Some(i) = pick(&model, i) {
                    prop_assert!(s.outbox_confirm(&model[i].0).expect("confirm"));
                    model[i].1 = OutboxState::Confirmed;
                },
                OutboxOp::Fail(i) => if let Some(i) = pick(&model, i) {
                    let r = s.outbox_fail(&model[i].0, "boom");
                    if model[i].1 == OutboxState::Confirmed {
                        prop_assert!(is_invalid_state(&r));
                    } else {
                        prop_assert!(r.is_ok());
                        model[i].1 = OutboxState::Failed;
                    }
                },
                OutboxOp::Retry(i) => if let Some(i) = pick(&model, i) {
                    let r = s.outbox_retry(&model[i].0);
                    match model[i].1 {
                        OutboxState::Confirmed => prop_assert!(is_invalid_state(&r)),
                        OutboxState::Failed => { prop_assert!(r.is_ok()); model[i].1 = OutboxState::Pending; }
                        _ => prop_assert!(r.is_ok()),
                    }
                },
                OutboxOp::Delete(i) => if let Some(i) = pick(&model, i) {
                    prop_assert!(s.outbox_delete(&model[i].0).expect("delete"));
                    let (id, _, _) = model.remove(i);
                    prop_assert!(!s.outbox_delete(&id).expect("delete again"));
                },
                OutboxOp::Purge => {
                    let n = s.outbox_purge_confirmed(i64::MAX).expect("purge");
                    let before = model.len();
                    model.retain(|e| e.1 != OutboxState::Confirmed);
                    prop_assert_eq!(n, before - model.len());
                }
            }
            // Invariants after every step.
            let pending: Vec<(String, OutboxState, u32)> = s.outbox_pending(&p.id).expect("pending")
                .into_iter().map(|e| (e.id, e.state, e.attempts)).collect();
            let want: Vec<(String, OutboxState, u32)> = model.iter()
                .filter(|e| matches!(e.1, OutboxState::Pending | OutboxState::InFlight)).cloned().collect();
            prop_assert_eq!(pending, want);
            let failed: Vec<String> = s.outbox_failed(&p.id).expect("failed").into_iter().map(|e| e.id).collect();
            let want_failed: Vec<String> = model.iter().filter(|e| e.1 == OutboxState::Failed).map(|e| e.0.clone()).collect();
            prop_assert_eq!(failed, want_failed);
        }
        for (id, state, attempts) in &model {
            let e = s.outbox_get(id).expect("get").expect("present");
            prop_assert_eq!((e.state, e.attempts), (*state, *attempts));
            prop_assert_eq!(e.kind, OutboxKind::Media);
        }
    }
}
