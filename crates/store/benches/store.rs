//! Store benchmarks and their goals (a conversation opens and search answers faster than a person notices):
//! 1. open a 10,000-message conversation (open + first page of 50 + count): ≤ 150 ms
//! 2. FTS query over 100,000 messages (10% Chinese, 10% Russian): ≤ 50 ms
//! 3. 1,000 streamed edits (upserts) of one message: ≤ 100 ms in total
//!
//! Fixtures are built outside the measured closures. Under `cargo test --all-targets`
//! (criterion's test mode: each bench runs once) the fixtures are scaled down; full size is
//! used only when run by `cargo bench` (which passes `--bench`).

use std::hint::black_box;
use std::path::Path;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use hermes_store::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn full_size() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn profile(s: &Store, name: &str) -> Profile {
    s.profile_create(&NewProfile {
        name: name.into(),
        url: "ws://127.0.0.1:8765".into(),
        dialect: Dialect::V3,
        v3_user_id: None,
        allow_insecure_ws: true,
        avatar_url: None,
    })
    .expect("profile")
}

/// Synthetic vocabulary: 4,000 pronounceable words; messages draw from it with a skewed
/// (Zipf-like) distribution, plus a few topic words at known rates.
struct TextGen {
    rng: StdRng,
    vocab: Vec<String>,
}

impl TextGen {
    fn new(seed: u64) -> Self {
        let mut rng = StdRng::seed_from_u64(seed);
        let syll = [
            "ka", "lo", "mi", "ne", "ru", "ta", "shi", "pe", "do", "ven", "gra", "tor", "lin", "bas", "qua", "zen",
            "fi", "mo", "rek", "sal",
        ];
        let vocab = (0..4000)
            .map(|_| {
                let n = rng.random_range(2..4);
                (0..n).map(|_| syll[rng.random_range(0..syll.len())]).collect::<String>()
            })
            .collect();
        TextGen { rng, vocab }
    }

    fn message(&mut self) -> String {
        // One message in ten is Chinese (random common characters: bigrams galore), one in ten Russian.
        match self.rng.random_range(0..10) {
            0 => return self.chinese(),
            1 => return self.russian(),
            _ => {}
        }
        let words = self.rng.random_range(6..40);
        let mut out = Vec::with_capacity(words + 2);
        for _ in 0..words {
            let u: f64 = self.rng.random();
            let idx = ((u * u * u) * self.vocab.len() as f64) as usize;
            out.push(self.vocab[idx.min(self.vocab.len() - 1)].clone());
        }
        if self.rng.random_ratio(1, 100) {
            out.push("kubernetes".into());
        }
        if self.rng.random_ratio(1, 20) {
            out.push("deployment".into());
        }
        out.join(" ")
    }

    fn chinese(&mut self) -> String {
        const POOL: &str = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说\
                            产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本\
                            去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但";
        let pool: Vec<char> = POOL.chars().filter(|c| !c.is_whitespace()).collect();
        let n = self.rng.random_range(10..60);
        let mut out: String = (0..n).map(|_| pool[self.rng.random_range(0..pool.len())]).collect();
        if self.rng.random_ratio(1, 20) {
            out.push_str("报告");
        }
        out.push('。');
        out
    }

    fn russian(&mut self) -> String {
        const WORDS: &[&str] = &[
            "привет",
            "завтра",
            "встреча",
            "проект",
            "сервер",
            "ёлка",
            "файл",
            "готов",
            "проверьте",
            "пожалуйста",
            "пришлите",
            "данные",
            "ошибка",
            "запуск",
            "неделя",
            "вопрос",
            "ответ",
            "всё",
            "ещё",
            "журнал",
        ];
        let n = self.rng.random_range(5..30);
        let mut out: Vec<&str> = (0..n).map(|_| WORDS[self.rng.random_range(0..WORDS.len())]).collect();
        if self.rng.random_ratio(1, 20) {
            out.push("отчёт");
        }
        out.join(" ")
    }
}

fn fill(s: &Store, conv: &str, n: usize, gen_: &mut TextGen) {
    for chunk in 0..n.div_ceil(5000) {
        s.atomically(|s| {
            for i in chunk * 5000..((chunk + 1) * 5000).min(n) {
                let dir = if i % 2 == 0 { Direction::Up } else { Direction::Down };
                let m = Message::new(conv, dir, &gen_.message(), 1_700_000_000_000 + i as i64 * 1000);
                s.message_upsert(&m)?;
            }
            Ok(())
        })
        .expect("fill");
    }
}

fn bench_open_conversation(c: &mut Criterion) {
    let n = if full_size() { 10_000 } else { 500 };
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join(DB_FILE_NAME);
    let conv_id = {
        let s = Store::open(&path).expect("open");
        let p = profile(&s, "bench");
        let conv = s.conversation_create(&p.id, "big").expect("conv");
        let other = s.conversation_create(&p.id, "other").expect("conv");
        let mut g = TextGen::new(1);
        fill(&s, &conv.id, n, &mut g);
        fill(&s, &other.id, n / 2, &mut g);
        s.checkpoint().expect("checkpoint");
        conv.id
    };
    c.bench_function(&format!("open_conversation_{n}_msgs (open+page50+count)"), |b| {
        b.iter(|| {
            let s = Store::open(black_box(&path)).expect("open");
            let page = s.page(&conv_id, None, 50).expect("page");
            let count = s.count(&conv_id).expect("count");
            assert_eq!(page.messages.len(), 50);
            assert_eq!(count, n as u64);
            black_box((page, count))
        })
    });
}

fn bench_search(c: &mut Criterion) {
    let n = if full_size() { 100_000 } else { 2_000 };
    let tmp = tempfile::tempdir().expect("tmp");
    let s = build_search_fixture(tmp.path(), n);
    let mut group = c.benchmark_group("search");
    group.sample_size(20);
    for (name, q) in [
        // ~1% of messages contain "kubernetes"; prefix on the last word.
        ("rare_word_plus_prefix", "kubernetes depl"),
        // A frequent vocabulary word: many thousands of matches to rank.
        ("frequent_word", "kaka"),
        // Chinese: one bigram in ~0.5% of messages, among 10% Chinese text.
        ("chinese_bigram", "报告"),
        // A frequent Chinese character as a prefix: thousands of bigrams to merge.
        ("chinese_one_char_prefix", "的"),
        // Russian typed without ё finds отчёт.
        ("russian_yo_folded", "отчет"),
    ] {
        group.bench_function(format!("{name}_{n}_msgs"), |b| {
            b.iter(|| {
                let hits = s.search(black_box(q), &SearchOptions::default()).expect("search");
                black_box(hits)
            })
        });
    }
    group.finish();
}

fn build_search_fixture(dir: &Path, n: usize) -> Store {
    let s = Store::open_in(dir).expect("open");
    let mut g = TextGen::new(2);
    // 100k messages over 2 profiles x 10 conversations.
    for pi in 0..2 {
        let p = profile(&s, &format!("p{pi}"));
        for ci in 0..10 {
            let conv = s.conversation_create(&p.id, &format!("c{ci}")).expect("conv");
            fill(&s, &conv.id, n / 20, &mut g);
        }
    }
    s.checkpoint().expect("checkpoint");
    s
}

fn bench_streamed_edits(c: &mut Criterion) {
    let tmp = tempfile::tempdir().expect("tmp");
    let s = Store::open_in(tmp.path()).expect("open");
    let p = profile(&s, "stream");
    let conv = s.conversation_create(&p.id, "stream").expect("conv");
    fill(&s, &conv.id, 1000, &mut TextGen::new(3));
    let deltas: Vec<String> = {
        let mut g = TextGen::new(4);
        (0..1000).map(|_| format!("{} ", g.message().split(' ').next().unwrap_or("x"))).collect()
    };
    let mut group = c.benchmark_group("stream");
    group.sample_size(20);
    group.bench_function("1000_streamed_upserts_of_one_message", |b| {
        b.iter_batched(
            || Message::new(&conv.id, Direction::Down, "", now_ms()),
            |mut m| {
                m.assembly = Assembly::Streaming;
                for (i, d) in deltas.iter().enumerate() {
                    m.text.push_str(d);
                    m.updated_at += 1;
                    if i == deltas.len() - 1 {
                        m.assembly = Assembly::Final;
                    }
                    s.message_upsert(&m).expect("upsert");
                }
                m
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, bench_open_conversation, bench_search, bench_streamed_edits);
criterion_main!(benches);
