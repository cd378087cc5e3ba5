//! Secrets: read only from environment variables (shift_left's names), never from `config.yaml`, never
//! printed. [`Masked`] prints `****` in `Debug` and `Display`; [`Scrubber`] removes every known secret
//! value from any text before it reaches a terminal, a log or the journal — as written, and in the
//! forms a server may echo it back: URL-encoded (`%2B`, `+` for a space), JSON-escaped, and base64
//! (standard and URL-safe, at any alignment inside a longer encoded text, as in a Basic-auth token).
//! Credentials never travel in a URL: endpoints with user-info are refused ([`mask_userinfo`] shows
//! them masked).

use std::fmt;

/// Environment variable holding the Flink API key (`sql/v1`), as in shift_left.
pub const FLINK_API_KEY_VAR: &str = "SL_FLINK_API_KEY";
/// Environment variable holding the Flink API secret.
pub const FLINK_API_SECRET_VAR: &str = "SL_FLINK_API_SECRET";
/// Environment variable holding the Cloud API key (control plane, `fcpm/v2`).
pub const CLOUD_API_KEY_VAR: &str = "SL_CONFLUENT_CLOUD_API_KEY";
/// Environment variable holding the Cloud API secret.
pub const CLOUD_API_SECRET_VAR: &str = "SL_CONFLUENT_CLOUD_API_SECRET";

/// A secret value: its `Debug` and `Display` print `****`; [`Masked::expose`] is the only way to read it.
#[derive(Clone, PartialEq, Eq)]
pub struct Masked(String);

impl Masked {
    /// Wraps a secret.
    pub fn new(value: impl Into<String>) -> Self {
        Masked(value.into())
    }

    /// The secret itself: only for building an `Authorization` header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Masked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("****")
    }
}

impl fmt::Display for Masked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("****")
    }
}

/// An API key and secret pair (HTTP Basic credentials).
#[derive(Clone, Debug)]
pub struct Credentials {
    /// The key id. Not secret by Confluent's rules, but masked too: it identifies the account.
    pub key: Masked,
    /// The secret.
    pub secret: Masked,
}

pub use crate::config::MissingSecret;

impl Credentials {
    /// Reads a key/secret pair from two environment variables through `lookup` (usually
    /// `std::env::var`). Errors: the first unset or empty variable, by name.
    pub fn from_env_with(
        key_var: &str,
        secret_var: &str,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, MissingSecret> {
        let get = |v: &str| {
            lookup(v)
                .filter(|s| !s.is_empty())
                .ok_or_else(|| MissingSecret(v.to_string()))
        };
        Ok(Credentials {
            key: Masked::new(get(key_var)?),
            secret: Masked::new(get(secret_var)?),
        })
    }

    /// The Flink credentials from `SL_FLINK_API_KEY` / `SL_FLINK_API_SECRET`.
    pub fn flink_from_env() -> Result<Self, MissingSecret> {
        Self::from_env_with(FLINK_API_KEY_VAR, FLINK_API_SECRET_VAR, |v| {
            std::env::var(v).ok()
        })
    }

    /// `base64(key:secret)`, the value after `Basic ` in an `Authorization` header.
    pub fn basic_token(&self) -> String {
        base64(format!("{}:{}", self.key.expose(), self.secret.expose()).as_bytes())
    }

    /// The key as it may be shown in an error: its first four characters and `…` for a key of 12
    /// characters or more (Confluent's keys have 16), else `****`.
    pub fn key_hint(&self) -> String {
        let k = self.key.expose();
        if k.chars().count() >= 12 {
            format!("{}…", k.chars().take(4).collect::<String>())
        } else {
            "****".into()
        }
    }

    /// A scrubber that hides these credentials.
    pub fn scrubber(&self) -> Scrubber {
        Scrubber::new([
            self.key.expose().to_string(),
            self.secret.expose().to_string(),
            self.basic_token(),
        ])
    }
}

/// Replaces every occurrence of known secret values with `****`.
#[derive(Clone, Debug, Default)]
pub struct Scrubber {
    values: Vec<Masked>,
}

impl Scrubber {
    /// A scrubber for these values and their encoded forms ([`encoded_forms`]); values shorter than 4
    /// characters are ignored (they would mask ordinary words and cannot be secrets worth the name).
    pub fn new(values: impl IntoIterator<Item = String>) -> Self {
        let mut values: Vec<Masked> = values
            .into_iter()
            .filter(|v| v.len() >= 4)
            .flat_map(|v| encoded_forms(&v))
            .map(Masked)
            .collect();
        // Longest first, so a secret containing another is masked whole.
        values.sort_by_key(|v| std::cmp::Reverse(v.0.len()));
        values.dedup();
        Scrubber { values }
    }

    /// `text` with every secret replaced by `****`.
    pub fn scrub(&self, text: &str) -> String {
        let mut out = text.to_string();
        for v in &self.values {
            if out.contains(v.expose()) {
                out = out.replace(v.expose(), "****");
            }
        }
        out
    }
}

impl Scrubber {
    /// One scrubber hiding the values of both (a client's own credentials and every other secret of
    /// the environment).
    pub fn merged(mut self, other: &Scrubber) -> Scrubber {
        self.values.extend(other.values.iter().cloned());
        self.values.sort_by_key(|v| std::cmp::Reverse(v.0.len()));
        self.values.dedup();
        self
    }

    /// A scrubber for every secret flinkpipe reads from the environment through `env`: the Flink API
    /// key and secret, the Cloud API key and secret, the Kafka API key and secret, and the Basic-auth token of each pair
    /// (`base64(key:secret)`), so that none of them shows in any output, whichever client the command
    /// uses.
    pub fn of_environment(env: &dyn Fn(&str) -> Option<String>) -> Scrubber {
        let mut values = Vec::new();
        for (k, s) in [
            (FLINK_API_KEY_VAR, FLINK_API_SECRET_VAR),
            (CLOUD_API_KEY_VAR, CLOUD_API_SECRET_VAR),
            (
                super::kafka_rest::KAFKA_API_KEY_VAR,
                super::kafka_rest::KAFKA_API_SECRET_VAR,
            ),
        ] {
            let (key, secret) = (env(k), env(s));
            if let (Some(key), Some(secret)) = (&key, &secret) {
                values.push(base64(format!("{key}:{secret}").as_bytes()));
            }
            values.extend(key);
            values.extend(secret);
        }
        Scrubber::new(values)
    }
}

/// Text a server sent (a response body, and everything read from it: a statement's `status.detail`,
/// its exceptions and warnings, error details), **masked when it is built** — the only constructor,
/// [`ServerText::masked`], runs the [`Scrubber`] — so that no path from a response to an output (text,
/// JSON, files, logs) can forget the mask: a server that echoes the credentials (some error paths
/// do) never gets them printed. It derefs to `str`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerText(String);

impl ServerText {
    /// `raw` as received, with every secret `scrubber` knows (and their encoded forms) replaced by
    /// `****`.
    pub fn masked(raw: &str, scrubber: &Scrubber) -> ServerText {
        ServerText(scrubber.scrub(raw))
    }

    /// The masked text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for ServerText {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ServerText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Shortest encoded fragment masked: shorter ones could match ordinary text.
const MIN_FRAGMENT: usize = 8;

/// A secret as written and as a server may echo it: percent-encoded (upper- and lower-case hex,
/// form-encoded with `+` for a space, and with every non-alphanumeric character encoded), JSON-escaped, and base64 (standard and URL-safe) at each of
/// the three byte alignments it can have inside a longer base64 text (only the characters that depend
/// on the secret alone, when there are at least 8 of them).
pub fn encoded_forms(secret: &str) -> Vec<String> {
    let mut forms = vec![secret.to_string()];
    let upper = percent_encode(secret, false);
    forms.push(lower_hex(&upper));
    forms.push(upper);
    forms.push(percent_encode(secret, true));
    // Encoders that also encode `-`, `.`, `_` and `~`.
    let all: String = secret
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    forms.push(lower_hex(&all));
    forms.push(all);
    if let Ok(json) = serde_json::to_string(secret) {
        forms.push(json[1..json.len() - 1].to_string());
    }
    let bytes = secret.as_bytes();
    for k in 0..3usize {
        let mut padded = vec![0u8; k];
        padded.extend_from_slice(bytes);
        let b64 = base64(&padded);
        // Character j covers bits [6j, 6j + 6) of the padded text: keep those inside the secret.
        let from = (8 * k).div_ceil(6);
        let to = 8 * (k + bytes.len()) / 6;
        if to > from && to - from >= MIN_FRAGMENT {
            let stable = &b64[from..to];
            forms.push(stable.to_string());
            forms.push(stable.replace('+', "-").replace('/', "_"));
        }
    }
    forms.retain(|f| f.len() >= 4);
    forms.sort();
    forms.dedup();
    forms
}

/// RFC 3986 percent-encoding of everything but the unreserved characters, upper-case hex; `form`:
/// a space as `+` (`application/x-www-form-urlencoded`).
fn percent_encode(text: &str, form: bool) -> String {
    let mut out = String::with_capacity(text.len() * 3);
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else if form && b == b' ' {
            out.push('+');
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The same percent-encoding with lower-case hex digits.
fn lower_hex(encoded: &str) -> String {
    let mut out = String::with_capacity(encoded.len());
    let mut rest = encoded;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        let hex = rest.get(i + 1..i + 3).unwrap_or("");
        out.push('%');
        out.push_str(&hex.to_ascii_lowercase());
        rest = &rest[(i + 3).min(rest.len())..];
    }
    out.push_str(rest);
    out
}

/// A base URL of a service the targets call (the Flink endpoint, the control plane, the Metrics API,
/// the SQL Gateway, the JobManager), checked once for all of them: absolute, `http` or `https`, with a
/// host, and without credentials (`https://user:pw@host` would be printed in errors and sent instead of
/// the configured key). Returned with a trailing `/`, so that relative paths join under it. `what`
/// names the service in messages (`Flink endpoint`); `remedy` says where credentials belong instead.
///
/// Errors ([`super::TargetError::Config`], the URL shown with its user-info masked): `invalid {what} '{url}':
/// {why}`, or `the {what} '{url}' contains credentials (user:password@): {remedy}`.
pub fn base_url(url: &str, what: &str, remedy: &str) -> Result<reqwest::Url, super::TargetError> {
    let shown = mask_userinfo(url);
    let u = reqwest::Url::parse(&format!("{}/", url.trim_end_matches('/')))
        .map_err(|e| super::TargetError::Config(format!("invalid {what} '{shown}': {e}")))?;
    if !matches!(u.scheme(), "http" | "https") || u.host_str().is_none() {
        return Err(super::TargetError::Config(format!(
            "invalid {what} '{shown}': expected http(s)://host"
        )));
    }
    if !u.username().is_empty() || u.password().is_some() {
        return Err(super::TargetError::Config(format!(
            "the {what} '{shown}' contains credentials (user:password@): {remedy}"
        )));
    }
    Ok(u)
}

/// `url` with the user-info of its authority masked (`https://user:pw@host/x` → `https://****@host/x`),
/// for messages about a URL that may carry credentials; other text is returned unchanged.
pub fn mask_userinfo(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://****{}", &rest[at..]),
        None => url.to_string(),
    }
}

/// Standard base64 with padding (RFC 4648 §4, <https://www.rfc-editor.org/rfc/rfc4648#section-4>);
/// small enough not to need a crate.
pub fn base64(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        out.push(T[(n >> 18) as usize & 63] as char);
        out.push(T[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 {
            T[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if chunk.len() > 2 {
            T[n as usize & 63] as char
        } else {
            '='
        });
    }
    out
}

/// The HTTP client of the Confluent Cloud APIs (Flink, control plane, Metrics): `timeout` per request
/// (connecting within at most 10 s of it), our user agent, and **no automatic redirects** — reqwest
/// would carry the `Authorization` header along; callers re-issue a redirect by hand, to the configured
/// host only. Errors: a client that cannot be built.
pub fn cloud_http_client(
    timeout: std::time::Duration,
) -> Result<reqwest::Client, super::TargetError> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(timeout)
        .connect_timeout(timeout.min(std::time::Duration::from_secs(10)))
        .user_agent(concat!("flinkpipe/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| super::TargetError::Config(format!("cannot build the HTTP client: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_are_checked_once_for_every_service() {
        let u = base_url("http://127.0.0.1:8083", "SQL Gateway URL", "-").unwrap();
        assert_eq!(u.as_str(), "http://127.0.0.1:8083/");
        assert_eq!(
            base_url("https://h/p/", "x", "-").unwrap().as_str(),
            "https://h/p/"
        );
        let e = base_url("ftp://h", "Flink endpoint", "-")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("invalid Flink endpoint 'ftp://h': expected http(s)://host"),
            "{e}"
        );
        let e = base_url("not a url", "Metrics API URL", "-")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("invalid Metrics API URL 'not a url': "),
            "{e}"
        );
        let e = base_url(
            "https://me:pw@h",
            "control-plane URL",
            "keys come from K only",
        )
        .unwrap_err()
        .to_string();
        assert!(!e.contains("pw"), "{e}");
        assert!(
            e.contains("contains credentials (user:password@): keys come from K only"),
            "{e}"
        );
    }

    #[test]
    fn masked_never_prints() {
        let c = Credentials {
            key: Masked::new("KEY123"),
            secret: Masked::new("s3cr3t-value"),
        };
        let dbg = format!("{c:?} {} {}", c.key, c.secret);
        assert!(!dbg.contains("KEY123") && !dbg.contains("s3cr3t"), "{dbg}");
    }

    #[test]
    fn scrubber_hides_values_and_basic_token() {
        let c = Credentials {
            key: Masked::new("KEY123"),
            secret: Masked::new("s3cr3t-value"),
        };
        let s = c.scrubber();
        let text = format!(
            "auth Basic {} key=KEY123 secret=s3cr3t-value",
            c.basic_token()
        );
        let out = s.scrub(&text);
        assert_eq!(out, "auth Basic **** key=**** secret=****");
    }

    /// #15: a server echo of a secret URL-encoded or base64-encoded is masked too.
    #[test]
    fn scrubber_hides_encoded_forms() {
        let secret = "s3cr3t/Key+with spaces&\"q\"";
        let s = Scrubber::new([secret.to_string()]);
        // Forms masked whole.
        for f in [
            secret.to_string(),
            "s3cr3t%2FKey%2Bwith%20spaces%26%22q%22".to_string(),
            "s3cr3t%2fKey%2bwith%20spaces%26%22q%22".to_string(),
            "s3cr3t%2FKey%2Bwith+spaces%26%22q%22".to_string(),
            r#"s3cr3t/Key+with spaces&\"q\""#.to_string(),
        ] {
            assert_eq!(
                s.scrub(&format!("server said: {f} (request id r-1)")),
                "server said: **** (request id r-1)",
                "{f}"
            );
        }
        // Base64 inside a longer text: the characters that depend on the secret are masked, those of
        // the neighbouring bytes alone may stay (`user:` of a Basic token).
        for (before, after) in [("", ""), ("user:", ""), ("ab", "xyz"), ("x", "")] {
            let text = format!("{before}{secret}{after}");
            for f in [
                base64(text.as_bytes()),
                base64(text.as_bytes()).replace('+', "-").replace('/', "_"),
            ] {
                let out = s.scrub(&format!("server said: {f}"));
                let visible = out.trim_start_matches("server said: ").replace("****", "");
                let neighbours = (before.len() + after.len()) * 4 / 3 + 6;
                assert!(
                    out.contains("****") && visible.len() <= neighbours,
                    "{f} → {out}"
                );
            }
        }
        // Ordinary text is left alone.
        assert_eq!(
            s.scrub("GET /statements/x: HTTP 429"),
            "GET /statements/x: HTTP 429"
        );
    }

    /// #41.11: server text is masked when built — every secret of the environment, each pair's
    /// Basic token, in any form the scrubber knows.
    #[test]
    fn server_text_is_masked_when_built() {
        let env = |v: &str| match v {
            FLINK_API_KEY_VAR => Some("FLINKKEY12345678".to_string()),
            FLINK_API_SECRET_VAR => Some("flink-secret-abcdefgh".to_string()),
            CLOUD_API_KEY_VAR => Some("CLOUDKEY87654321".to_string()),
            CLOUD_API_SECRET_VAR => Some("cloud/secret+xyz".to_string()),
            _ => None,
        };
        let s = Scrubber::of_environment(&env);
        let flink = base64(b"FLINKKEY12345678:flink-secret-abcdefgh");
        let cloud = base64(b"CLOUDKEY87654321:cloud/secret+xyz");
        let raw = format!(
            r#"{{"status":{{"detail":"auth FLINKKEY12345678 flink-secret-abcdefgh Basic {flink} {cloud} cloud%2Fsecret%2Bxyz"}}}}"#
        );
        let t = ServerText::masked(&raw, &s);
        for secret in [
            "FLINKKEY12345678",
            "flink-secret-abcdefgh",
            "CLOUDKEY87654321",
            "cloud/secret+xyz",
            "cloud%2Fsecret%2Bxyz",
            flink.as_str(),
            cloud.as_str(),
        ] {
            assert!(!t.contains(secret), "{secret} in {t}");
        }
        // Still JSON: the structure is untouched.
        let v: serde_json::Value = serde_json::from_str(&t).unwrap();
        assert!(
            v["status"]["detail"]
                .as_str()
                .unwrap()
                .starts_with("auth ****")
        );
    }

    #[test]
    fn userinfo_is_masked_in_urls() {
        assert_eq!(
            mask_userinfo("http://user:pw@host:8083/x?y"),
            "http://****@host:8083/x?y"
        );
        assert_eq!(mask_userinfo("https://k@h"), "https://****@h");
        assert_eq!(mask_userinfo("https://h/a@b"), "https://h/a@b");
        assert_eq!(mask_userinfo("not a url"), "not a url");
    }

    #[test]
    fn base64_rfc4648_vectors() {
        for (i, o) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(i.as_bytes()), o);
        }
    }

    #[test]
    fn missing_variable_is_named() {
        let err = Credentials::from_env_with("A_KEY", "A_SECRET", |v| {
            (v == "A_KEY").then(|| "k".repeat(8))
        })
        .unwrap_err();
        assert_eq!(err, MissingSecret("A_SECRET".into()));
    }
}
