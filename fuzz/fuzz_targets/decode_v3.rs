//! v3 decoder and `body()` on arbitrary input: never panic; a decoded envelope re-encodes to one that decodes,
//! with the same header and the same verdict of `body()`.
#![no_main]

use hermes_protocol::v3;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(env) = v3::decode(&text) else { return };
    let body = env.body();
    let again = v3::decode(&v3::encode(&env)).expect("an encoded envelope decodes");
    assert_eq!(
        (&again.id, &again.kind, &again.from, &again.to, &again.session, &again.reply_to, again.ts),
        (&env.id, &env.kind, &env.from, &env.to, &env.session, &env.reply_to, env.ts)
    );
    assert_eq!(again.body().is_ok(), body.is_ok(), "body() verdict changed by a re-encode: {env:?}");
});
