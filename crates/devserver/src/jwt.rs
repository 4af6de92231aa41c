//! Minimal HS256 JWTs for the v3 gateway (G-3): sign (for demos and tests) and verify.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// An HS256 JWT with `sub` (and `exp` when given, Unix seconds), signed with `secret`.
pub fn make_jwt(secret: &str, sub: &str, exp: Option<i64>) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
    let mut claims = serde_json::json!({ "sub": sub, "iat": crate::unix_now() });
    if let Some(e) = exp {
        claims["exp"] = e.into();
    }
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    let signing_input = format!("{header}.{payload}");
    let sig = URL_SAFE_NO_PAD.encode(sign(secret, &signing_input));
    format!("{signing_input}.{sig}")
}

fn sign(secret: &str, input: &str) -> Vec<u8> {
    // HMAC accepts keys of any length: `new_from_slice` cannot fail for it.
    match HmacSha256::new_from_slice(secret.as_bytes()) {
        Ok(mut m) => {
            m.update(input.as_bytes());
            m.finalize().into_bytes().to_vec()
        }
        Err(_) => Vec::new(),
    }
}

/// Verify an HS256 JWT: header `alg` HS256, signature, and `exp` (if present) not in the past.
/// Returns the claims.
pub fn verify_jwt(secret: &str, token: &str, now: i64) -> Option<Value> {
    let mut it = token.split('.');
    let (h, p, s) = (it.next()?, it.next()?, it.next()?);
    if it.next().is_some() {
        return None;
    }
    let header: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(h).ok()?).ok()?;
    if header.get("alg")?.as_str()? != "HS256" {
        return None;
    }
    let sig = URL_SAFE_NO_PAD.decode(s).ok()?;
    let mut mac = HmacSha256::new_from_slice(secret.as_bytes()).ok()?;
    mac.update(h.as_bytes());
    mac.update(b".");
    mac.update(p.as_bytes());
    mac.verify_slice(&sig).ok()?; // constant-time
    let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(p).ok()?).ok()?;
    if let Some(exp) = claims.get("exp")
        && exp.as_i64().is_none_or(|e| e <= now)
    {
        return None;
    }
    Some(claims)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g3_sign_verify() {
        let now = crate::unix_now();
        let t = make_jwt("s3cret", "alice", Some(now + 60));
        let c = verify_jwt("s3cret", &t, now).unwrap();
        assert_eq!(c["sub"], "alice");
        assert_eq!(hermes_protocol::v3::jwt_subject(&t).as_deref(), Some("alice"));
        assert!(verify_jwt("other", &t, now).is_none());
        assert!(verify_jwt("s3cret", &t, now + 61).is_none());
        let mut forged = t.clone();
        forged.push('x');
        assert!(verify_jwt("s3cret", &forged, now).is_none());
        assert!(verify_jwt("s3cret", "a.b", now).is_none());
    }
}
