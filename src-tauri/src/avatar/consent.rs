//! Which avatar pages may open: the rules for an agent's `avatar_url` (or a profile's override), and the
//! user's answers, remembered per profile and origin.
//!
//! - Only `https`, or `http` on the loopback (`localhost`, `127.0.0.0/8`, `::1`); no user name or password in the
//!   address; anything else is blocked and never loads.
//! - Every origin needs the user's consent, once per profile: the avatar pane shows the origin and asks. A page on
//!   another host than the agent's own is marked as such in the question ("not your agent's server"): it opens only
//!   when the user allows that other origin.
//! - The answers live in `avatar-consent.json` in the data folder (`{profile id: {origin: "allowed"|"declined"}}`),
//!   written atomically like the other settings files; Settings (the profile's form) lists and revokes them. A
//!   deleted profile's answers go with the next write.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use specta::Type;

use crate::error::{AppError, AppResult};

const CONSENT_FILE: &str = "avatar-consent.json";

/// The user's answer for one origin of one profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "camelCase")]
pub enum Consent {
    Allowed,
    /// "Not now": the page stays closed until the user changes it (in the pane or in Settings).
    Declined,
}

/// Why a page is never opened, whatever the user says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "camelCase")]
pub enum Blocked {
    /// Not a web address with a host (`javascript:`, `file:`, `data:`, garbage…) or one carrying a user/password.
    Invalid,
    /// Plain `http` to anything but the loopback.
    NotSecure,
}

/// A page that passed the address rules: what the user is asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub url: url::Url,
    /// `scheme://host[:port]`, international names in their punycode form (what the user sees and allows).
    pub origin: String,
    /// The agent's own host, as the profile's address names it.
    pub agent_host: String,
    /// On another host than the agent's.
    pub foreign: bool,
}

fn is_loopback(host: &url::Host<&str>) -> bool {
    match host {
        url::Host::Domain(d) => d.eq_ignore_ascii_case("localhost") || d.to_ascii_lowercase().ends_with(".localhost"),
        url::Host::Ipv4(ip) => IpAddr::V4(*ip).is_loopback(),
        url::Host::Ipv6(ip) => IpAddr::V6(*ip).is_loopback(),
    }
}

/// The host of the profile's own address (`ws(s)://host:port/…` or a gateway's `https://…`), lower-case.
pub fn agent_host(profile_url: &str) -> Option<String> {
    let u = url::Url::parse(profile_url.trim()).ok()?;
    u.host_str().map(|h| h.to_ascii_lowercase())
}

/// The address rules: `raw` (the agent's `avatar_url` or the override) checked against the profile's address.
pub fn check_page(raw: &str, profile_url: &str) -> Result<Page, Blocked> {
    let u = url::Url::parse(raw.trim()).map_err(|_| Blocked::Invalid)?;
    if !u.username().is_empty() || u.password().is_some() {
        return Err(Blocked::Invalid);
    }
    let host = u.host().ok_or(Blocked::Invalid)?;
    match u.scheme() {
        "https" => {}
        "http" if is_loopback(&host) => {}
        "http" => return Err(Blocked::NotSecure),
        _ => return Err(Blocked::Invalid),
    }
    let origin = u.origin().ascii_serialization();
    let page_host = u.host_str().unwrap_or_default().to_ascii_lowercase();
    let agent_host = agent_host(profile_url).unwrap_or_default();
    let foreign = agent_host.is_empty() || page_host != agent_host;
    Ok(Page { url: u, origin, agent_host, foreign })
}

/// Navigation in the remote window stays on the page's own origin.
pub fn same_origin(a: &url::Url, b: &url::Url) -> bool {
    a.origin() == b.origin()
}

type Answers = BTreeMap<String, BTreeMap<String, Consent>>;

/// Managed state: the answers and where they live.
pub struct ConsentStore {
    dir: PathBuf,
    answers: Mutex<Answers>,
}

impl ConsentStore {
    pub fn new(data_dir: &Path) -> Self {
        ConsentStore {
            dir: data_dir.to_path_buf(),
            answers: Mutex::new(crate::settings::read_json::<Answers>(data_dir, CONSENT_FILE)),
        }
    }

    pub fn get(&self, profile_id: &str, origin: &str) -> Option<Consent> {
        self.answers.lock().ok()?.get(profile_id)?.get(origin).copied()
    }

    /// Remember (or with `None` forget) an answer; written before it counts (a failed write changes nothing).
    /// `keep`: the profile ids that still exist (the others' answers are dropped).
    pub fn set(&self, profile_id: &str, origin: &str, consent: Option<Consent>, keep: &[String]) -> AppResult<()> {
        if origin.len() > 2048 || url::Url::parse(origin).is_err() {
            return Err(AppError::invalid("not an origin"));
        }
        let mut g = self.answers.lock()?;
        let mut next = g.clone();
        next.retain(|p, _| keep.iter().any(|k| k == p));
        let per = next.entry(profile_id.to_string()).or_default();
        match consent {
            Some(c) => {
                per.insert(origin.to_string(), c);
            }
            None => {
                per.remove(origin);
            }
        }
        next.retain(|_, m| !m.is_empty());
        crate::settings::write_json(&self.dir, CONSENT_FILE, &next)?;
        *g = next;
        Ok(())
    }

    /// Every remembered answer of a profile, by origin.
    pub fn of(&self, profile_id: &str) -> Vec<(String, Consent)> {
        self.answers
            .lock()
            .map(|g| g.get(profile_id).map(|m| m.iter().map(|(o, c)| (o.clone(), *c)).collect()).unwrap_or_default())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AGENT: &str = "wss://agent.example:8787/ws";

    #[test]
    fn a27_only_https_or_loopback_http() {
        assert!(check_page("https://agent.example/avatar/", AGENT).is_ok());
        for ok in ["http://127.0.0.1:8080/a.html", "http://localhost:9/", "http://[::1]:81/", "http://127.3.4.5/"] {
            assert!(check_page(ok, "ws://127.0.0.1:8787/ws").is_ok(), "{ok}");
        }
        for bad in ["http://agent.example/avatar/", "http://192.168.1.5/", "http://10.0.0.1:8080/", "http://[fe80::1]/"]
        {
            assert_eq!(check_page(bad, AGENT), Err(Blocked::NotSecure), "{bad}");
        }
        for bad in [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "tauri://localhost/index.html",
            "data:text/html,x",
            "ftp://agent.example/",
            "ws://agent.example/",
            "nope",
            "",
            "https://user:pw@agent.example/",
            "https://agent.example@evil.example/",
        ] {
            assert_eq!(check_page(bad, AGENT), Err(Blocked::Invalid), "{bad}");
        }
    }

    #[test]
    fn a27_the_agents_own_host_or_another_marked_as_foreign() {
        let own = check_page("https://agent.example/face/", AGENT).unwrap();
        assert_eq!(
            (own.origin.as_str(), own.agent_host.as_str(), own.foreign),
            ("https://agent.example", "agent.example", false)
        );
        // another port of the same host is the agent's host (its own origin still needs consent)
        let port = check_page("https://AGENT.example:8443/", AGENT).unwrap();
        assert_eq!((port.origin.as_str(), port.foreign), ("https://agent.example:8443", false));
        for other in
            ["https://evil.example/", "https://agent.example.evil.example/", "https://example/", "https://127.0.0.1/"]
        {
            assert!(check_page(other, AGENT).unwrap().foreign, "{other}");
        }
        // a look-alike international name is shown (and allowed) in its punycode form
        let idn = check_page("https://аgent.example/", AGENT).unwrap();
        assert!(idn.foreign && idn.origin.starts_with("https://xn--"), "{}", idn.origin);
        // loopback by name and by number are different hosts
        assert!(check_page("http://localhost:1/", "ws://127.0.0.1:8787/ws").unwrap().foreign);
        assert!(!check_page("http://127.0.0.1:1/", "ws://127.0.0.1:8787/ws").unwrap().foreign);
        assert!(check_page("http://127.0.0.2:1/", "ws://127.0.0.1:8787/ws").unwrap().foreign);
        // no agent address to compare with: foreign
        assert!(check_page("https://agent.example/", "not a url").unwrap().foreign);
    }

    #[test]
    fn remote_navigation_stays_on_its_origin() {
        let a = url::Url::parse("https://agent.example/avatar/").unwrap();
        assert!(same_origin(&a, &url::Url::parse("https://agent.example/other").unwrap()));
        assert!(!same_origin(&a, &url::Url::parse("https://evil.example/").unwrap()));
        assert!(!same_origin(&a, &url::Url::parse("https://agent.example:444/").unwrap()));
        assert!(!same_origin(&a, &url::Url::parse("tauri://localhost/").unwrap()));
    }

    #[test]
    fn a27_answers_are_per_profile_per_origin_and_remembered() {
        let dir = tempfile::tempdir().unwrap();
        let keep = vec!["p1".to_string(), "p2".to_string()];
        let s = ConsentStore::new(dir.path());
        assert_eq!(s.get("p1", "https://agent.example"), None);
        s.set("p1", "https://agent.example", Some(Consent::Allowed), &keep).unwrap();
        s.set("p2", "https://agent.example", Some(Consent::Declined), &keep).unwrap();
        assert_eq!(s.get("p1", "https://agent.example"), Some(Consent::Allowed));
        assert_eq!(s.get("p1", "https://agent.example:8443"), None, "another origin is asked again");
        assert_eq!(s.get("p2", "https://agent.example"), Some(Consent::Declined), "another profile has its own");
        // remembered across a restart
        let s2 = ConsentStore::new(dir.path());
        assert_eq!(s2.get("p1", "https://agent.example"), Some(Consent::Allowed));
        assert_eq!(s2.of("p2"), vec![("https://agent.example".to_string(), Consent::Declined)]);
        // revoked: asked again
        s2.set("p1", "https://agent.example", None, &keep).unwrap();
        assert_eq!(ConsentStore::new(dir.path()).get("p1", "https://agent.example"), None);
        // a deleted profile's answers go with the next write
        s2.set("p1", "https://x.example", Some(Consent::Allowed), &["p1".to_string()]).unwrap();
        assert_eq!(ConsentStore::new(dir.path()).of("p2"), vec![]);
        assert!(s2.set("p1", "not an origin", Some(Consent::Allowed), &keep).is_err());
        // a broken file: nothing allowed
        std::fs::write(dir.path().join(CONSENT_FILE), b"{broken").unwrap();
        assert_eq!(ConsentStore::new(dir.path()).get("p1", "https://x.example"), None);
    }
}
