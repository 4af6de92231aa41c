//! Hostile network (A-30): `ws://` to a public address is refused without the profile's explicit flag, and `wss://`
//! with a certificate that does not verify (wrong host, unknown issuer) is refused with a clear reason, while the
//! same server with a valid certificate for the dialled host connects (the positive control: the refusals are about
//! the certificate, not about the test setup).
//!
//! The trusted root is a CA generated here and given to the engine through `SSL_CERT_FILE` (read by
//! rustls-native-certs when the engine builds its one TLS configuration), so this file holds one test only.

mod common;

use std::net::SocketAddr;
use std::sync::Arc;

use common::*;
use futures_util::{SinkExt as _, StreamExt as _};
use hermes_client::StartError;
use hermes_client::policy::UrlError;
use hermes_protocol::{Dialect, Event};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;
use tokio_tungstenite::tungstenite::Message;

/// A wss:// agent on loopback presenting `chain` (leaf first): TLS, WebSocket, `hello` → `ready`.
async fn wss_server(chain: Vec<rustls::pki_types::CertificateDer<'static>>, key: &KeyPair) -> SocketAddr {
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    let acceptor = TlsAcceptor::from(Arc::new(cfg));
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = l.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else { return };
                let Ok(ws) = tokio_tungstenite::accept_async(tls).await else { return };
                let (mut tx, mut rx) = ws.split();
                if let Some(Ok(Message::Text(_))) = rx.next().await {
                    let _ = tx.send(Message::text(r#"{"t":"ready","session":"mobile:tls"}"#)).await;
                }
                while let Some(Ok(_)) = rx.next().await {}
            });
        }
    });
    addr
}

fn leaf(host: &str, ca: &CertifiedIssuer<'_, KeyPair>) -> (rustls::pki_types::CertificateDer<'static>, KeyPair) {
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec![host.to_string()]).unwrap().signed_by(&key, ca).unwrap();
    (cert.der().clone(), key)
}

/// Connect to `url` and return the first `ready` or `disconnected` event.
async fn dial(url: &str, dir: &std::path::Path) -> Event {
    let mut c = start(config(url, Dialect::Adapter, hermes_devserver::DEV_TOKEN, "tls-1", dir));
    let ev = c.wait(20, |e| matches!(e, Event::Ready { .. } | Event::Disconnected { .. })).await;
    c.handle.shutdown().await;
    ev
}

#[tokio::test]
async fn a30_public_ws_refused_without_the_flag_and_bad_certificates_refused_with_a_clear_reason() {
    let dir = tempfile::tempdir().unwrap();
    // a private CA, trusted by the engine through SSL_CERT_FILE (before any engine builds its TLS configuration)
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, ca.pem()).unwrap();
    // SAFETY: set before any thread reads the environment for TLS roots; this binary holds this one test.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("SSL_CERT_FILE", &ca_file);
    }

    // ws:// to a public address: the engine does not even start without the explicit flag (A-30)
    for url in ["ws://8.8.8.8/ws", "ws://agent.example.com/ws", "ws://[2001:db8::1]/ws"] {
        let cfg = config(url, Dialect::Adapter, hermes_devserver::DEV_TOKEN, "tls-0", dir.path());
        match hermes_client::spawn(cfg, Box::new(hermes_client::MemoryPersist::default())) {
            Err(StartError::Url(UrlError::InsecurePublic(host))) => {
                let msg = StartError::Url(UrlError::InsecurePublic(host)).to_string();
                assert!(msg.contains("refused") && msg.contains("wss://"), "a clear reason: {msg}");
            }
            Err(e) => panic!("{url}: wrong refusal {e}"),
            Ok(_) => panic!("{url}: ws:// to a public address was accepted without the flag"),
        }
        let mut cfg = config(url, Dialect::Adapter, hermes_devserver::DEV_TOKEN, "tls-0", dir.path());
        cfg.allow_insecure_ws = true;
        let (h, _ev) = hermes_client::spawn(cfg, Box::new(hermes_client::MemoryPersist::default()))
            .unwrap_or_else(|e| panic!("{url} with the flag: {e}"));
        h.shutdown().await;
    }

    // positive control: a certificate for `localhost` from the trusted CA connects
    let (cert, key) = leaf("localhost", &ca);
    let good = wss_server(vec![cert, ca.der().clone()], &key).await;
    let ev = dial(&format!("wss://localhost:{}/ws", good.port()), dir.path()).await;
    assert!(matches!(ev, Event::Ready { .. }), "a valid certificate connects: {ev:?}");

    // wrong host: a valid chain, but for another name
    let (cert, key) = leaf("agent.example.com", &ca);
    let wrong_host = wss_server(vec![cert, ca.der().clone()], &key).await;
    let ev = dial(&format!("wss://localhost:{}/ws", wrong_host.port()), dir.path()).await;
    let Event::Disconnected { reason, .. } = &ev else { panic!("wrong host must not connect: {ev:?}") };
    assert!(reason.to_lowercase().contains("certificate"), "a clear reason: {reason}");
    eprintln!("wrong host → {reason}");

    // self-signed (unknown issuer)
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    params.distinguished_name.push(rcgen::DnType::CommonName, "hostile self-signed");
    let cert = params.self_signed(&key).unwrap();
    let self_signed = wss_server(vec![cert.der().clone()], &key).await;
    let ev = dial(&format!("wss://localhost:{}/ws", self_signed.port()), dir.path()).await;
    let Event::Disconnected { reason, .. } = &ev else { panic!("a self-signed certificate must not connect: {ev:?}") };
    assert!(reason.to_lowercase().contains("certificate"), "a clear reason: {reason}");
    eprintln!("self-signed → {reason}");
}
