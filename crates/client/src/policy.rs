//! Connection policy with no I/O: which URLs may be dialled, how a v3 URL carries its token (G-3), and how
//! URLs are written in logs (tokens redacted).

use std::net::IpAddr;

use url::Url;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("`{0}` is not a valid URL")]
    Invalid(String),
    #[error("the URL must start with ws:// or wss:// (got `{0}`)")]
    Scheme(String),
    #[error(
        "ws:// (unencrypted) to the public address `{0}` is refused: use wss://, or allow insecure connections in this profile"
    )]
    InsecurePublic(String),
    #[error("the token must not be put in the adapter URL (A-2): remove `?token=`")]
    TokenInUrl,
}

/// Is this host on this machine or a local network (loopback, private, link-local, ULA, `localhost`, `.local`, …)?
pub fn is_local_host(host: &url::Host<&str>) -> bool {
    match host {
        url::Host::Ipv4(ip) => is_local_ip(&IpAddr::V4(*ip)),
        url::Host::Ipv6(ip) => is_local_ip(&IpAddr::V6(*ip)),
        url::Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost"
                || d.ends_with(".localhost")
                || d.ends_with(".local")
                || d.ends_with(".lan")
                || d.ends_with(".home.arpa")
                || d.ends_with(".internal")
                || !d.contains('.') // a single-label name resolves on the LAN only
        }
    }
}

pub fn is_local_ip(ip: &IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback() || v4.is_private() || v4.is_link_local() || v4.is_unspecified(),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_local_ip(&IpAddr::V4(v4));
            }
            let seg0 = v6.segments()[0];
            v6.is_loopback() || v6.is_unspecified() || (seg0 & 0xfe00) == 0xfc00 || (seg0 & 0xffc0) == 0xfe80
        }
    }
}

/// Check a profile URL before dialling. `allow_insecure` is the profile's explicit flag.
pub fn check_url(raw: &str, allow_insecure: bool, adapter: bool) -> Result<Url, UrlError> {
    let url = Url::parse(raw.trim()).map_err(|_| UrlError::Invalid(raw.to_string()))?;
    match url.scheme() {
        "wss" => {}
        "ws" => {
            let host = url.host().ok_or_else(|| UrlError::Invalid(raw.to_string()))?;
            if !allow_insecure && !is_local_host(&host) {
                return Err(UrlError::InsecurePublic(host.to_string()));
            }
        }
        other => return Err(UrlError::Scheme(other.to_string())),
    }
    if url.host().is_none() {
        return Err(UrlError::Invalid(raw.to_string()));
    }
    if adapter && url.query_pairs().any(|(k, _)| k == "token") {
        return Err(UrlError::TokenInUrl);
    }
    Ok(url)
}

/// G-3: the v3 gateway URL with `?token=<jwt>` appended (percent-encoded; an existing `token` is replaced).
pub fn v3_url_with_token(url: &Url, token: &str) -> Url {
    let mut u = url.clone();
    let others: Vec<(String, String)> =
        u.query_pairs().filter(|(k, _)| k != "token").map(|(k, v)| (k.into(), v.into())).collect();
    {
        let mut q = u.query_pairs_mut();
        q.clear();
        for (k, v) in &others {
            q.append_pair(k, v);
        }
        q.append_pair("token", token);
    }
    u
}

/// G-9: the HTTP origin of a WebSocket URL (`wss→https`, `ws→http`).
pub fn http_origin(url: &Url) -> Url {
    let mut u = url.clone();
    let scheme = if url.scheme() == "wss" { "https" } else { "http" };
    // set_scheme refuses ws→http in the `url` crate's special-scheme rules; rebuild instead.
    let host = u.host_str().unwrap_or("localhost").to_string();
    let port = u.port().map(|p| format!(":{p}")).unwrap_or_default();
    let host = if host.contains(':') && !host.starts_with('[') { format!("[{host}]") } else { host };
    if let Ok(parsed) = Url::parse(&format!("{scheme}://{host}{port}/")) {
        u = parsed;
    }
    u
}

/// A URL fit for a log line: any `token`, `api_key`, `jwt` or `access_token` query value and any userinfo replaced
/// by `REDACTED`.
pub fn redact_url(raw: &str) -> String {
    let Ok(mut u) = Url::parse(raw) else { return "<unparsable url>".into() };
    if !u.username().is_empty() || u.password().is_some() {
        let _ = u.set_username("REDACTED");
        let _ = u.set_password(None);
    }
    if u.query().is_some() {
        let pairs: Vec<(String, String)> = u
            .query_pairs()
            .map(|(k, v)| {
                let secret =
                    matches!(k.to_ascii_lowercase().as_str(), "token" | "api_key" | "jwt" | "access_token" | "key");
                (k.into_owned(), if secret { "REDACTED".to_string() } else { v.into_owned() })
            })
            .collect();
        u.query_pairs_mut().clear().extend_pairs(pairs);
    }
    u.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a30_ws_to_local_addresses_is_allowed() {
        for u in [
            "ws://127.0.0.1:8787/ws",
            "ws://localhost:8787/ws",
            "ws://[::1]:8787/ws",
            "ws://192.168.1.20/ws",
            "ws://10.0.0.5/ws",
            "ws://172.16.3.4/ws",
            "ws://hermes.local/ws",
            "ws://nas/ws",
            "ws://[fd00::1]/ws",
        ] {
            assert!(check_url(u, false, true).is_ok(), "{u}");
        }
    }

    #[test]
    fn a30_ws_to_public_addresses_is_refused_without_the_flag() {
        for u in ["ws://8.8.8.8/ws", "ws://agent.example.com/ws", "ws://[2001:db8::1]/ws", "ws://[::ffff:1.2.3.4]/ws"] {
            assert!(matches!(check_url(u, false, true), Err(UrlError::InsecurePublic(_))), "{u}");
            assert!(check_url(u, true, true).is_ok(), "{u} with the flag");
        }
        assert!(check_url("wss://agent.example.com/ws", false, true).is_ok());
    }

    #[test]
    fn bad_urls_are_clear_errors() {
        assert!(matches!(check_url("http://x/ws", false, true), Err(UrlError::Scheme(_))));
        assert!(matches!(check_url("not a url", false, true), Err(UrlError::Invalid(_))));
        assert!(matches!(check_url("ws://127.0.0.1/ws?token=abc", false, true), Err(UrlError::TokenInUrl)));
        assert!(check_url("ws://127.0.0.1/ws/app?token=abc", false, false).is_ok());
    }

    #[test]
    fn g3_token_is_appended_and_redacted_in_logs() {
        let u = Url::parse("wss://gw.example.com/ws/app?x=1").unwrap();
        let with = v3_url_with_token(&u, "a.b+c/d=");
        assert!(with.as_str().contains("token=a.b%2Bc%2Fd%3D"), "{with}");
        let red = redact_url(with.as_str());
        assert!(!red.contains("a.b"), "{red}");
        assert!(red.contains("token=REDACTED") && red.contains("x=1"));
        assert_eq!(redact_url("wss://user:pw@h/x"), "wss://REDACTED@h/x");
    }

    #[test]
    fn g9_http_origin_of_ws_urls() {
        assert_eq!(
            http_origin(&Url::parse("wss://gw.example.com/ws/app").unwrap()).as_str(),
            "https://gw.example.com/"
        );
        assert_eq!(
            http_origin(&Url::parse("ws://127.0.0.1:8787/ws/app?token=x").unwrap()).as_str(),
            "http://127.0.0.1:8787/"
        );
        assert_eq!(http_origin(&Url::parse("ws://[::1]:9/ws/app").unwrap()).as_str(), "http://[::1]:9/");
    }
}
