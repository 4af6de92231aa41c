//! The scanner agrees with serde on every frame it reads; the fast decoder as a whole always does.

use super::scan::scan_message;
use super::*;
use proptest::prelude::*;

/// What serde makes of a `message` frame (the reference the scanner must agree with).
fn serde_message(text: &str) -> Option<DownMessage> {
    serde_json::from_str::<MessageRef>(text).ok().map(MessageRef::into_owned)
}

/// When the scanner reads a frame, it reads it exactly as serde does; and the fast decoder as a whole always
/// agrees with serde (the scanner's `None` sends the frame to serde).
fn assert_scan_agrees(text: &str) -> bool {
    let scanned = scan_message(text).map(MessageRef::into_owned);
    if let Some(m) = &scanned {
        assert_eq!(Some(m), serde_message(text).as_ref(), "scanner and serde disagree on {text:?}");
    }
    if text.starts_with(r#"{"t":"message""#) {
        assert_eq!(decode_message_ref(text).map(MessageRef::into_owned), serde_message(text), "{text:?}");
    }
    scanned.is_some()
}

/// A-9, A-10, A-21, A-22: the frames the scanner reads itself, each read as serde reads it.
#[test]
fn a22_message_scanner_reads_usual_frames_like_serde() {
    let read = [
        r#"{"t":"message","id":"m1","text":"hello number 1, a short reply","final":true}"#,
        r#"{"t":"message","id":"r1","text":"…","chunk":{"index":0,"total":2},"final":false}"#,
        r#"{"t":"message","id":"r1","text":"b","chunk":{"total":2,"index":1},"final":true}"#,
        r#"{"t":"message","id":"r1","text":"Counting","edit":true,"final":null,"reply_to":"q1"}"#,
        r#"{"t":"message","final":true,"reply_to":null,"text":"field order","id":"x"}"#,
        "{\"t\":\"message\" ,\r\n\t\"id\" : \"ws\" , \"text\":\"x\" }\n",
        r#"{"t":"message","id":"u","text":"héllo — 日本語 🎉 and a long tail to cross the eight-byte steps"}"#,
        r#"{"t":"message","id":"","text":""}"#,
        r#"{"t":"message","id":"e","session":"s","ts":null,"seen":false,"x":"y"}"#,
        r#"{"t":"message","id":"c","chunk":null,"edit":false}"#,
        r#"{"t":"message","id":"n","chunk":{"index":4294967295,"total":0}}"#,
        "{\"t\":\"message\",\"id\":\"del\",\"text\":\"\u{7f}\"}",
    ];
    for c in read {
        assert!(assert_scan_agrees(c), "the scanner should read {c:?}");
    }
}

/// A-22: what the scanner leaves to serde — escapes, nested or numeric unknown values, duplicates, odd numbers,
/// wrong types, malformed JSON, trailing bytes — gets serde's answer (a frame, or an error: `None`).
#[test]
fn a22_message_scanner_leaves_the_unusual_to_serde() {
    let left = [
        r#"{"t":"message","id":"a\"b","text":"x"}"#,
        r#"{"t":"message","id":"a","text":"line\nbreak \u00e9 \ud83c\udf89"}"#,
        r#"{"t":"message","id":"a","text":"bad \x escape"}"#,
        r#"{"t":"message","id":"a","text":"lone \ud800"}"#,
        r#"{"t":"message","\u0069d":"escaped key"}"#,
        r#"{"t":"message","id":"a","extra":{"x":[1,2]}}"#,
        r#"{"t":"message","id":"a","extra":5}"#,
        r#"{"t":"message","id":"a","extra":[]}"#,
        r#"{"t":"message","id":"a","id":"b"}"#,
        r#"{"t":"message","id":"a","t":"message"}"#,
        r#"{"t":"message","id":"a","t":"media"}"#,
        r#"{"t":"message","id":"a","final":true,"final":false}"#,
        r#"{"t":"message","id":"a","chunk":{"index":1,"index":1,"total":2}}"#,
        r#"{"t":"message","id":"a","chunk":{"index":1}}"#,
        r#"{"t":"message","id":"a","chunk":{"index":1,"total":2,"x":0}}"#,
        r#"{"t":"message","id":"a","chunk":[1,2]}"#,
        r#"{"t":"message","id":"a","chunk":{"index":01,"total":2}}"#,
        r#"{"t":"message","id":"a","chunk":{"index":-1,"total":2}}"#,
        r#"{"t":"message","id":"a","chunk":{"index":1.0,"total":2}}"#,
        r#"{"t":"message","id":"a","chunk":{"index":1e0,"total":2}}"#,
        r#"{"t":"message","id":"a","chunk":{"index":4294967296,"total":2}}"#,
        r#"{"t":"message","id":"a","chunk":{"index":99999999999,"total":2}}"#,
        r#"{"t":"message","id":5}"#,
        r#"{"t":"message","id":null}"#,
        r#"{"t":"message","id":"x","text":null}"#,
        r#"{"t":"message","id":"x","final":"yes"}"#,
        r#"{"t":"message","id":"x","final":1}"#,
        r#"{"t":"message","id":"x","edit":tru}"#,
        r#"{"t":"message","id":"x","reply_to":7}"#,
        r#"{"t":"message","text":"no id"}"#,
        r#"{"t":"message"}"#,
        r#"{"t":"message","id":"x",}"#,
        r#"{"t":"message","id":"x"} x"#,
        r#"{"t":"message","id":"x"}}"#,
        r#"{"t":"message","id":"x""#,
        r#"{"t":"message","id":"x"#,
        r#"{"t":"message","id" "x"}"#,
        r#"{"t":"message",,"id":"x"}"#,
        "{\"t\":\"message\",\"id\":\"tab\there\"}",
        "{\"t\":\"message\",\"id\":\"nul\u{0}\"}",
        "{\"t\":\"message\",\u{a0}\"id\":\"nbsp is not JSON whitespace\"}",
        "{\"t\":\"message\",\"id\":\"x\"}\u{a0}",
    ];
    for c in left {
        assert!(!assert_scan_agrees(c), "the scanner should leave {c:?} to serde");
    }
}

/// No prefix of a frame (a frame cut anywhere) makes the scanner panic or disagree.
#[test]
fn a22_message_scanner_every_prefix_is_safe() {
    let frame = r#"{"t":"message","id":"r1","text":"é 🎉 x","chunk":{"index":0,"total":2},"edit":true,"final":false,"reply_to":"q","x":null}"#;
    for (end, _) in frame.char_indices().chain([(frame.len(), ' ')]) {
        let cut = &frame[..end];
        assert_eq!(assert_scan_agrees(cut), end == frame.len(), "{cut:?}");
    }
}

fn arb_string() -> impl Strategy<Value = String> {
    // plain text, unicode, quotes and backslashes (escaped), escapes of every kind, raw control characters
    let piece = prop_oneof![
        "[a-z ]{0,12}",
        Just("é日🎉".to_string()),
        Just("\\\"".to_string()),
        Just("\\\\".to_string()),
        Just("\\n\\t\\/".to_string()),
        Just("\\u00e9\\ud83c\\udf89".to_string()),
        Just("\\ud800".to_string()),
        Just("\\q".to_string()),
        Just("\t".to_string()),
        Just("\u{1}".to_string()),
        Just("\u{7f}".to_string()),
    ];
    proptest::collection::vec(piece, 0..4).prop_map(|p| format!("\"{}\"", p.concat()))
}

fn arb_value() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => arb_string(),
        1 => Just("true".to_string()),
        1 => Just("false".to_string()),
        1 => Just("null".to_string()),
        1 => prop_oneof![Just("0"), Just("7"), Just("-1"), Just("01"), Just("1.5"), Just("4294967296"), Just("1e3")]
            .prop_map(str::to_string),
        1 => (0u64..5_000_000_000, 0u64..5_000_000_000, any::<bool>(), "[ \t]{0,1}").prop_map(|(i, t, swap, w)| {
            if swap {
                format!(r#"{{"total":{t}{w},"index":{i}}}"#)
            } else {
                format!(r#"{{{w}"index":{w}{i},"total":{t}}}"#)
            }
        }),
        1 => Just(r#"{"index":1}"#.to_string()),
        1 => Just(r#"[1,2]"#.to_string()),
        1 => Just(r#"{"a":[1,{"b":null}]}"#.to_string()),
    ]
}

fn arb_frame() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        Just("id"),
        Just("id"),
        Just("text"),
        Just("chunk"),
        Just("edit"),
        Just("final"),
        Just("reply_to"),
        Just("t"),
        Just("extra"),
        Just("\\u0069d"),
    ];
    let ws = prop_oneof![8 => Just(""), 1 => Just(" "), 1 => Just("\n\t\r "), 1 => Just("\u{a0}")];
    let tail = prop_oneof![8 => Just(""), 1 => Just(" "), 1 => Just(","), 1 => Just("}"), 1 => Just("x")];
    (proptest::collection::vec((key, arb_value(), ws.clone(), ws), 0..7), tail).prop_map(|(fields, tail)| {
        let mut f = r#"{"t":"message""#.to_string();
        for (k, v, w1, w2) in fields {
            f.push_str(&format!(",{w1}\"{k}\"{w2}:{w1}{v}{w2}"));
        }
        f.push('}');
        f.push_str(tail);
        f
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// A-22: generated frames (any field order, duplicates, escapes, unicode, control characters, wrong types,
    /// extra fields, trailing bytes): the scanner never disagrees with serde and never panics.
    #[test]
    fn a22_message_scanner_equals_serde(frame in arb_frame()) {
        assert_scan_agrees(&frame);
    }

    /// A-22: arbitrary bytes after the `message` head: no panic, no disagreement.
    #[test]
    fn a22_message_scanner_survives_garbage(rest in "\\PC{0,40}") {
        assert_scan_agrees(&format!(r#"{{"t":"message"{rest}"#));
        assert_scan_agrees(&format!(r#"{{"t":"message","id":"{rest}"}}"#));
    }
}

/// The fast path of `decode_down` agrees with decoding the enum directly, on good and odd input.
#[test]
fn a22_fast_decode_equals_enum_decode() {
    let cases = [
        r#"{"t":"message","id":"r1","text":"hi","chunk":{"index":0,"total":2},"final":false}"#,
        r#"{"id":"r1","text":"hi","t":"message","edit":true,"extra":{"x":[1,2]}}"#,
        r#"{"t":"message","text":"no id"}"#,
        r#"{"t":"message","id":5}"#,
        r#"{"t":"message","id":"x","text":null}"#,
        r#"{"t":"prompt","id":"p","kind":"clarify","text":"?","options":[{"id":"a","label":"A"}],"timeout_seconds":3}"#,
        r#"{"t":"prompt","id":"p","options":"nope"}"#,
        r#"{"t":"prompt_done","id":"p","expired":true}"#,
        r#"{"t":"media","id":"m","kind":"image","part":0,"parts":1,"final":true,"data":"aGk="}"#,
        r#"{"t":"media","id":"m","part":-1}"#,
        r#"{"t":"ready","session":"s","capabilities":{"media":true}}"#,
        r#"{"t":"typing","stop":true}"#,
        r#"{"t":"future","whatever":[{}]}"#,
        r#"{"t":5}"#,
        r#"{"x":1}"#,
        r#"["message","x"]"#,
        r#"{"t":"message","id":"a","t":"media"}"#,
        r#"{"t":"message","id":"a","t":"message"}"#,
        r#"{"t":"message","id":"a","text":"x","final":true,"reply_to":"q","chunk":{"index":1,"total":3}}"#,
        r#"{"t":"message" , "id":"a","text":"é\u00e9","edit":true,"extra":[1]}"#,
        r#"{"t":"message","id":"a","id":"b"}"#,
        r#"{"t":"message"}"#,
        r#"{"t":"message","id":"a","final":"yes"}"#,
        r#"{"t":"messages","id":"a"}"#,
        "not json",
        "",
    ];
    for c in cases {
        let fast = decode_down(c);
        let slow = serde_json::from_str::<Down>(c);
        match (&fast, &slow) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{c}"),
            (Err(_), Err(_)) => {}
            _ => panic!("fast and enum decoding disagree on {c}: {fast:?} vs {slow:?}"),
        }
    }
}
