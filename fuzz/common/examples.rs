//! The JSON examples of spec/adapter.md, spec/chat-v3.md and the two seed documents (see
//! crates/protocol/tests/golden.rs for where each comes from). Used by the structured targets to feed realistic
//! frames; the same examples are the seed files in `fuzz/seeds/`.
#![allow(dead_code)]

pub const ADAPTER_DOWN: &[&str] = &[
    r#"{"t":"ready","session":"mobile:desktop-1","avatar_url":"https://agent.example.com/avatar.html","capabilities":{"audio":true,"media":true,"max_media_bytes":16777216}}"#,
    r#"{"t":"ready","session":"mobile:desktop-1"}"#,
    r#"{"t":"message","id":"r1","text":"…","chunk":{"index":0,"total":2},"final":false}"#,
    r#"{"t":"message","id":"r1","text":"!","chunk":{"index":1,"total":2},"final":true}"#,
    r#"{"t":"message","id":"r1","text":"Counting","edit":true,"chunk":{"index":0,"total":1},"final":false}"#,
    r#"{"t":"message","id":"r1","text":"Counting the answer…","edit":true,"chunk":{"index":0,"total":1},"final":true}"#,
    r#"{"t":"message","id":"r1","text":"Считаю","edit":true,"chunk":{"index":0,"total":1},"final":false}"#,
    r#"{"t":"typing","stop":true}"#,
    r#"{"t":"typing"}"#,
    r#"{"t":"avatar","state":"thinking"}"#,
    r#"{"t":"prompt","id":"5f6a…","kind":"clarify","text":"Which format?","options":[{"id":"c0","label":"CSV","style":""},{"id":"c1","label":"JSON","style":""},{"id":"other","label":"✏️ Your own answer","style":""}],"session":"mobile:tel-1","timeout_seconds":300}"#,
    r#"{"t":"prompt_done","prompt_id":"5f6a…","option_id":"c1"}"#,
    r#"{"t":"prompt_done","id":"5f6a…","expired":true}"#,
    r#"{"t":"media","id":"a1","kind":"image","mime":"image/png","filename":"chart.png","caption":"Chart","part":0,"parts":1,"final":true,"size":20480,"data":"<base64>"}"#,
    r#"{"t":"media","id":"a2","kind":"image","mime":"image/png","filename":"../chart.png","part":0,"parts":1,"final":true,"size":5,"data":"aGVsbG8="}"#,
    r#"{"t":"media","id":"a3","kind":"voice","mime":"audio/ogg","part":0,"parts":2,"data":"aGVsbG8="}"#,
    r#"{"t":"media","id":"a3","kind":"voice","mime":"audio/ogg","part":1,"parts":2,"final":true,"data":"aGVsbG8="}"#,
    r#"{"t":"media","id":"v1","kind":"voice","mime":"audio/ogg","part":0,"parts":1,"final":true,"url":"https://agent.example.com/v1.ogg"}"#,
    r#"{"t":"error","code":"forbidden"}"#,
    r#"{"t":"error","code":"too_big","text":"file > 8 MiB","id":"m1"}"#,
    r#"{"t":"sticker","id":"x"}"#,
];

pub const ADAPTER_UP: &[&str] = &[
    r#"{"t":"hello","token":"<64 hex>","device":{"id":"desktop-…","name":"<host name>","platform":"linux|macos|windows"}}"#,
    r#"{"t":"hello","token":"<token>","device":{"id":"cli"}}"#,
    r#"{"t":"text","id":"<stable id>","text":"…"}"#,
    r#"{"t":"prompt","prompt_id":"<card id>","option_id":"<option id>"}"#,
    r#"{"t":"prompt","prompt_id":"…","option_id":"other","text":"…"}"#,
    r#"{"t":"prompt","prompt_id":"…","text":"…"}"#,
    r#"{"t":"media","id":"m1","kind":"image","mime":"image/jpeg","filename":"photo.jpg","caption":"Look","data":"<base64>","part":0,"parts":1}"#,
    r#"{"t":"audio","id":"…","format":"wav","data":"<base64>"}"#,
];

pub const V3: &[&str] = &[
    r#"{"id":"uuid","type":"…","from":"user_id","to":"user_id | hermes","session":"uuid","reply_to":"uuid | null","ts":1719123456,"data":{}}"#,
    r#"{"id":"msg_001","type":"text","from":"admin","to":"hermes","session":"abc-123-def","ts":1719123456,"data":{"text":"帮我写个快速排序"}}"#,
    r#"{"id":"msg_002","type":"text","from":"hermes","to":"admin","session":"abc-123-def","reply_to":"msg_001","ts":1719123457,"data":{"text":"好的，马上处理"}}"#,
    r#"{"id":"msg_003","type":"image","from":"admin","to":"hermes","session":"abc-123-def","ts":1719123456,"data":{"text":"看下这张图","media":{"id":"med_a1b2c3","name":"photo.jpg","type":"image/jpeg","size":245760,"width":1920,"height":1080}}}"#,
    r#"{"id":"msg_004","type":"voice","from":"admin","to":"hermes","session":"abc-123-def","ts":1719123456,"data":{"media":{"id":"med_d4e5f6","type":"audio/aac","size":48000,"duration":15},"text":"帮我查下今天的天气"}}"#,
    r#"{"id":"msg_005","type":"video","from":"admin","to":"hermes","session":"abc-123-def","ts":1719123456,"data":{"text":"看下这个演示","media":{"id":"med_g7h8i9","name":"demo.mp4","type":"video/mp4","size":5242880,"duration":30,"width":1920,"height":1080}}}"#,
    r#"{"id":"msg_006","type":"file","from":"admin","to":"hermes","session":"abc-123-def","ts":1719123456,"data":{"text":"分析下这个数据","media":{"id":"med_j0k1l2","name":"sales.csv","type":"text/csv","size":10240}}}"#,
    r#"{"id":"str_001","type":"stream_start","from":"hermes","to":"admin","session":"abc-123-def","reply_to":"msg_001","ts":1719123457}"#,
    r#"{"type":"stream","from":"hermes","to":"admin","session":"abc-123-def","data":{"text":"快速排序的"}}"#,
    r#"{"type":"stream_end","from":"hermes","to":"admin","session":"abc-123-def"}"#,
    r#"{"id":"err_001","type":"error","from":"hermes","to":"admin","session":"abc-123-def","reply_to":"msg_001","ts":1719123457,"data":{"code":"timeout","text":"处理超时，请稍后再试"}}"#,
    r#"{"type":"ping"}"#,
    r#"{"type":"pong"}"#,
];
