//! `hermes-devserver`: the reference Hermes agent on loopback, for demos and manual tests.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Parser;
use hermes_devserver::{Config, DEV_JWT_SECRET, DEV_TOKEN};

/// Reference Hermes agent: the adapter protocol at /ws and Hermes Chat v3 at /ws/app, with a demo agent.
#[derive(Debug, Parser)]
#[command(name = "hermes-devserver", version)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8787")]
    bind: SocketAddr,
    /// Adapter token expected in `hello` (default: the well-known dev token).
    #[arg(long, env = "HERMES_DEV_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Allow only this device id on the adapter (repeatable; default: any device).
    #[arg(long = "allow-device", value_name = "ID")]
    allow_device: Vec<String>,
    /// Per-file media limit in bytes (announced as capabilities.max_media_bytes).
    #[arg(long, default_value_t = 8 * 1024 * 1024)]
    max_media_bytes: u64,
    /// `ready.capabilities` of the adapter: `real` (only `max_media_bytes`, as the real adapter), `absent`, or a
    /// JSON object such as '{"media":false}' or '{}'.
    #[arg(long, default_value = "real", value_parser = hermes_devserver::Capabilities::parse)]
    capabilities: hermes_devserver::Capabilities,
    /// Where received and demo files are kept (default: a temporary folder).
    #[arg(long)]
    media_dir: Option<PathBuf>,
    /// Turn the demo agent off: accept and log only.
    #[arg(long)]
    no_demo: bool,
    /// `ready.avatar_url` to announce.
    #[arg(long)]
    avatar_url: Option<String>,
    /// A v3 token accepted as is (repeatable).
    #[arg(long = "v3-token", value_name = "TOKEN", hide_env_values = true)]
    v3_token: Vec<String>,
    /// HS256 secret for v3 JWTs (default: the well-known dev secret).
    #[arg(long, env = "HERMES_DEV_JWT_SECRET", hide_env_values = true)]
    v3_jwt_secret: Option<String>,
    /// `user_id` for a v3 token without `sub`, and the `sub` of the printed dev JWT.
    #[arg(long, default_value = "dev-user")]
    v3_user: String,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let a = Args::parse();
    let custom_token = a.token.is_some();
    let token = a.token.unwrap_or_else(|| DEV_TOKEN.to_string());
    let secret = a.v3_jwt_secret.unwrap_or_else(|| DEV_JWT_SECRET.to_string());
    let cfg = Config {
        bind: a.bind,
        token: token.clone(),
        allowed_devices: (!a.allow_device.is_empty()).then_some(a.allow_device),
        v3_tokens: a.v3_token,
        v3_jwt_secret: Some(secret),
        v3_user_id: a.v3_user.clone(),
        max_media_bytes: a.max_media_bytes,
        capabilities: a.capabilities,
        demo: !a.no_demo,
        media_dir: a.media_dir,
        avatar_url: a.avatar_url,
        ..Config::default()
    };
    let server = hermes_devserver::start(cfg).await?;
    let jwt = server.mint_v3_token(&a.v3_user).unwrap_or_default();
    // The one place a token is printed: the well-known dev token, which the user needs to connect. A token the
    // user chose is not echoed. Tokens received from clients are never logged.
    let shown = if custom_token { "<your token from --token / HERMES_DEV_TOKEN>".to_string() } else { token };
    let token = shown;
    eprintln!(
        "hermes-devserver on {addr}\n  adapter: {adapter}   token: {token}\n  chat v3: {v3}?token={jwt}\n  \
         manual check: wscat -c {adapter}  then  {{\"t\":\"hello\",\"token\":\"{token}\",\"device\":{{\"id\":\"cli\"}}}}\n  \
         send /help for the demo commands; Ctrl-C stops",
        addr = server.addr(),
        adapter = server.adapter_url(),
        v3 = server.v3_url(),
    );
    wait_for_stop().await?;
    tracing::info!("stopping");
    server.shutdown().await;
    Ok(())
}

/// Ctrl-C, or SIGTERM on Unix.
async fn wait_for_stop() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            r = tokio::signal::ctrl_c() => r,
            _ = term.recv() => Ok(()),
        }
    }
    #[cfg(not(unix))]
    {
        tokio::signal::ctrl_c().await
    }
}
