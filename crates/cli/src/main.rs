//! `hermes-chat`: a terminal client for people, and a `--jsonl` scripting interface (a stable contract: README).

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::{Context as _, bail};
use clap::Parser;
use clap::builder::{PossibleValuesParser, TypedValueParser as _};

use hermes_client::Secret;
use hermes_protocol::{Command, Dialect, DisconnectCode, Event};
use tokio::io::{AsyncBufReadExt as _, BufReader};

/// Talk to your Hermes agent from a terminal.
///
/// The token comes from the HERMES_TOKEN environment variable (or the OS keychain), never from a flag.
#[derive(Debug, Parser)]
#[command(name = "hermes-chat", version)]
struct Args {
    /// Adapter: ws(s)://host:port/ws. v3: the gateway's ws(s)://host/ws/app (the token is appended).
    #[arg(long)]
    url: String,
    /// This device's id: choose once, keep forever.
    #[arg(long)]
    device_id: String,
    #[arg(long, default_value = "adapter",
          value_parser = PossibleValuesParser::new(["adapter", "v3"]).try_map(|s| s.parse::<Dialect>()))]
    dialect: Dialect,
    /// Where the outbox, history and received files live (default: the OS data folder).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// v3: our user id (default: the JWT's `sub`).
    #[arg(long)]
    user_id: Option<String>,
    /// v3: the conversation (session UUID) to talk in.
    #[arg(long)]
    session: Option<String>,
    /// Allow unencrypted ws:// to a public address.
    #[arg(long)]
    allow_insecure_ws: bool,
    /// The largest file to download from the agent, in MiB (default 2048 = 2 GiB). Downloads also stop before they
    /// would fill the disk.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024 * 1024))]
    max_download_mb: Option<u64>,
    /// Our per-file limit for the agent's files both ways, in MiB (default 64). The agent's `max_media_bytes` is
    /// clamped to it: an agent cannot make this program hold more.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=16 * 1024))]
    max_media_mb: Option<u64>,
    /// The most the media folder may hold, in MiB (default 2048 = 2 GiB); a received file that would go over it is
    /// refused (`media_quota_full`), the message's text kept.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024 * 1024))]
    media_quota_mb: Option<u64>,
    /// One JSON command per stdin line, one JSON event per stdout line.
    #[arg(long)]
    jsonl: bool,
}

/// The token: `HERMES_TOKEN`, else the OS keychain entry of the profile. Never a flag, never printed.
fn token(profile: &hermes_store::Profile) -> anyhow::Result<Secret> {
    if let Ok(t) = std::env::var("HERMES_TOKEN")
        && !t.trim().is_empty()
    {
        return Ok(Secret::new(t.trim()));
    }
    match hermes_client::keychain::get(profile.keychain_account()) {
        Ok(Some(t)) => Ok(t),
        Ok(None) => bail!(
            "no token: set HERMES_TOKEN, or store one in the OS keychain for this profile (service `{}`, account `{}`)",
            hermes_client::keychain::SERVICE,
            profile.keychain_account()
        ),
        Err(e) => bail!("no token: HERMES_TOKEN is not set and {e}"),
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let mut filter = tracing_subscriber::EnvFilter::try_from_env("HERMES_LOG").unwrap_or_else(|_| "warn".into());
    // The WebSocket and HTTP layers print whole frames and requests at debug/trace: the `hello` frame carries the
    // token. Capped whatever HERMES_LOG says (crates/cli/tests/crash.rs greps a trace-level run for it).
    for quiet in
        ["tungstenite=info", "tokio_tungstenite=info", "hyper=info", "hyper_util=info", "h2=info", "reqwest=info"]
    {
        if let Ok(d) = quiet.parse() {
            filter = filter.add_directive(d);
        }
    }
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
    let data_dir = hermes_store::resolve_data_dir(args.data_dir.as_deref())?;
    std::fs::create_dir_all(&data_dir).with_context(|| format!("cannot create {}", data_dir.display()))?;
    let app = hermes_app::App::open(&data_dir)
        .with_context(|| format!("cannot open the history in {}", data_dir.display()))?;
    // The profile of this URL, dialect and device id (created on first use), so a later run finds its history.
    let new = hermes_store::NewProfile {
        name: format!("hermes-chat {}", args.device_id),
        url: args.url.clone(),
        dialect: args.dialect,
        v3_user_id: args.user_id.clone(),
        allow_insecure_ws: args.allow_insecure_ws,
        avatar_url: None,
    };
    let profile = app.device_profile(&new, &args.device_id)?;
    let opts = hermes_app::ConnectOptions {
        session: args.session.clone(),
        new_title: Some("hermes-chat".into()),
        user_id: args.user_id.clone(),
        allow_insecure_ws: args.allow_insecure_ws,
        max_download_bytes: args.max_download_mb.map(|mb| mb * 1024 * 1024),
        max_media_bytes: args.max_media_mb.map(|mb| mb * 1024 * 1024),
        media_quota_bytes: args.media_quota_mb.map(|mb| mb * 1024 * 1024),
    };
    let conn = app.connect(&profile, token(&profile)?, &opts)?;
    let (handle, events) = (conn.handle, conn.events);
    // the OS's "network is back" / "machine woke" makes the engine reconnect at once (netwatch.rs).
    let watch = hermes_client::netwatch::start().await;
    if args.jsonl { run_jsonl(handle, events, watch).await } else { run_interactive(handle, events, watch).await }
}

/// The next line of stdin; meanwhile each OS wake-up (network back, machine woke) makes the engine reconnect now.
async fn next_line(
    lines: &mut tokio::io::Lines<BufReader<tokio::io::Stdin>>,
    watch: &mut Option<hermes_client::netwatch::Watcher>,
    handle: &hermes_client::Handle,
) -> std::io::Result<Option<String>> {
    loop {
        tokio::select! {
            line = lines.next_line() => return line,
            _ = hermes_client::netwatch::next_wake(watch) => {
                let _ = handle.send(Command::Reconnect).await;
            }
        }
    }
}

/// The `--jsonl` contract: stdin commands, stdout events; a bad line gets `rejected` and nothing is sent.
async fn run_jsonl(
    handle: hermes_client::Handle,
    mut events: hermes_client::Events,
    mut watch: Option<hermes_client::netwatch::Watcher>,
) -> anyhow::Result<()> {
    let out = tokio::spawn(async move {
        // A burst of events (a fast stream of replies) is written with one flush, not one per line.
        loop {
            let batch = events.recv_batch().await;
            if batch.is_empty() {
                break;
            }
            let mut lines = String::new();
            for ev in &batch {
                lines.push_str(&serde_json::to_string(ev).unwrap_or_default());
                lines.push('\n');
            }
            let mut stdout = std::io::stdout().lock();
            if stdout.write_all(lines.as_bytes()).and_then(|_| stdout.flush()).is_err() {
                break;
            }
        }
    });
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Some(line) = next_line(&mut lines, &mut watch, &handle).await? {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Command>(&line) {
            Ok(Command::Quit) => break,
            Ok(cmd) => {
                if handle.send(cmd).await.is_err() {
                    break;
                }
            }
            Err(e) => {
                let cmd = serde_json::from_str::<serde_json::Value>(&line)
                    .ok()
                    .and_then(|v| v.get("cmd").and_then(|c| c.as_str()).map(str::to_string))
                    .unwrap_or_else(|| "?".into());
                let r = hermes_protocol::Refusal::BadCommand(e.to_string());
                let ev = Event::Rejected { cmd, code: r.code().into(), reason: r.to_string(), id: None };
                println!("{}", serde_json::to_string(&ev).unwrap_or_default());
            }
        }
    }
    handle.shutdown().await;
    let _ = out.await;
    Ok(())
}

/// A friendly chat: streamed replies printed as they grow, cards answered by number.
async fn run_interactive(
    handle: hermes_client::Handle,
    mut events: hermes_client::Events,
    mut watch: Option<hermes_client::netwatch::Watcher>,
) -> anyhow::Result<()> {
    println!(
        "hermes-chat — type a message and press Enter. /file PATH, /audio PATH, /quit. Answer a card with its number."
    );
    let cards = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(String, Vec<String>)>::new()));
    let cards_out = cards.clone();
    let printer = tokio::spawn(async move {
        let mut printed: (String, usize) = (String::new(), 0);
        while let Some(ev) = events.recv().await {
            print_event(&ev, &mut printed, &cards_out);
        }
    });
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Some(line) = next_line(&mut lines, &mut watch, &handle).await? {
        let line = line.trim().to_string();
        if line.is_empty() {
            continue;
        }
        let cmd = if line == "/quit" {
            break;
        } else if let Some(p) = line.strip_prefix("/file ") {
            Command::File { path: p.trim().into(), caption: None, id: None, session: None, retry_of: None }
        } else if let Some(p) = line.strip_prefix("/audio ") {
            Command::Audio { path: p.trim().into(), text: None, id: None, session: None, retry_of: None }
        } else if let Some(answer) = card_answer(&line, &cards) {
            answer
        } else {
            Command::Text { text: line, reply_to: None, id: None, session: None, retry_of: None }
        };
        if let Err(e) = handle.command(cmd).await {
            eprintln!("  ✗ {e}");
        }
    }
    handle.shutdown().await;
    printer.abort();
    Ok(())
}

type Cards = std::sync::Arc<std::sync::Mutex<Vec<(String, Vec<String>)>>>;

/// `N` answers the newest open card with its N-th option; `other: text` gives a free answer.
fn card_answer(line: &str, cards: &Cards) -> Option<Command> {
    let guard = cards.lock().ok()?;
    let (id, options) = guard.last()?;
    if let Ok(n) = line.parse::<usize>() {
        let opt = options.get(n.checked_sub(1)?)?;
        return Some(Command::Prompt { prompt_id: id.clone(), option_id: Some(opt.clone()), text: None });
    }
    let text = line.strip_prefix("other:")?;
    Some(Command::Prompt { prompt_id: id.clone(), option_id: Some("other".into()), text: Some(text.trim().into()) })
}

/// Why an agent could not be reached, in words (a connection that was up and dropped says its own reason).
fn cant_reach(code: DisconnectCode) -> Option<&'static str> {
    Some(match code {
        DisconnectCode::Refused => "connection refused (is the adapter running on that port?)",
        DisconnectCode::Unreachable => "no route to the host (is the network up?)",
        DisconnectCode::Dns => "the host name is not known",
        DisconnectCode::Timeout => "no answer in time",
        DisconnectCode::Tls => "the secure connection failed (certificate?)",
        DisconnectCode::Http => "the server refused the WebSocket upgrade (is the URL's path right?)",
        _ => return None,
    })
}

fn print_event(ev: &Event, printed: &mut (String, usize), cards: &Cards) {
    let mut out = std::io::stdout().lock();
    match ev {
        Event::Connecting { attempt } if *attempt > 1 => {
            let _ = writeln!(out, "… reconnecting (attempt {attempt})");
        }
        Event::Ready { session, .. } => {
            let _ = writeln!(out, "● connected ({session})");
        }
        Event::Message { id, text, final_, .. } => {
            // print only what grew; a rewrite (edit) reprints the message
            if *id == printed.0 && text.len() >= printed.1 && text.is_char_boundary(printed.1) {
                let _ = write!(out, "{}", &text[printed.1..]);
            } else {
                let _ = write!(out, "\n◆ {text}");
            }
            *printed = (id.to_string(), text.len());
            if *final_ {
                let _ = writeln!(out);
                printed.0.clear();
            }
        }
        Event::Prompt { id, text, options, command, description, timeout_seconds, .. } => {
            let _ = writeln!(out, "\n┌ {text}");
            if let Some(c) = command {
                let _ = writeln!(out, "│   $ {c}");
            }
            if let Some(d) = description {
                let _ = writeln!(out, "│ {d}");
            }
            for (i, o) in options.iter().enumerate() {
                let _ = writeln!(out, "│ [{}] {}", i + 1, o.label);
            }
            if let Some(t) = timeout_seconds {
                let _ = writeln!(out, "└ answer with a number within {t} s");
            }
            if let Ok(mut c) = cards.lock() {
                c.push((id.clone(), options.iter().map(|o| o.id.clone()).collect()));
            }
        }
        Event::PromptDone { prompt_id, option_id, expired } => {
            if let Ok(mut c) = cards.lock() {
                c.retain(|(id, _)| id != prompt_id);
            }
            if *expired {
                let _ = writeln!(out, "  (card expired)");
            } else {
                let _ = writeln!(out, "  ✓ answered: {}", option_id.as_deref().unwrap_or("-"));
            }
        }
        Event::Media { kind, filename, path, size, caption, .. } => {
            let _ = writeln!(
                out,
                "📎 {kind}: {filename} ({size} bytes) → {path}{}",
                caption.as_deref().map(|c| format!(" — {c}")).unwrap_or_default()
            );
        }
        Event::Error { code, text, .. } if code == hermes_client::http::MEDIA_QUOTA_FULL => {
            let _ = writeln!(out, "⚠ {code}: {text} — remove files from the media folder or raise --media-quota-mb");
        }
        Event::Error { code, text, .. } => {
            let _ = writeln!(out, "⚠ {code}: {text}");
        }
        Event::Disconnected { code, reason, retry_in_ms } => {
            let retry = retry_in_ms.map(|ms| format!(" — retrying in {:.1} s", ms as f64 / 1000.0)).unwrap_or_default();
            let _ = match cant_reach(*code) {
                Some(cause) => writeln!(out, "○ can't reach the agent — {cause}{retry}"),
                None => writeln!(out, "○ disconnected: {reason}{retry}"),
            };
        }
        Event::AccessDenied { reason } => {
            let _ = writeln!(out, "✗ access denied: {reason}. Check the token and that this device is approved.");
        }
        Event::Rejected { cmd, reason, .. } => {
            let _ = writeln!(out, "✗ {cmd} not sent: {reason}");
        }
        _ => {}
    }
    let _ = out.flush();
}
