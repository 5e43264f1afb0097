//! TLS as libpq users write it: `sslmode` (disable, allow, prefer, require,
//! verify-ca, verify-full) and `sslrootcert` in the connection string, else from
//! `PGSSLMODE` and `PGSSLROOTCERT`, with rustls (no OpenSSL on the machine).
//!
//! The driver's own parser knows only disable, prefer and require and refuses
//! `sslrootcert`, so both keys are taken out of the string here and the rest is
//! handed to it unchanged.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use percent_encoding::percent_decode_str;
use postgres::config::{Host, SslMode};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::{Error, Result};

/// How the server's certificate is checked (libpq's `sslmode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Disable,
    /// TLS when the server offers it (`allow` is taken as this too: the
    /// driver cannot try without TLS first).
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl Mode {
    fn parse(value: &str, from: &str) -> Result<Mode> {
        Ok(match value {
            "disable" => Mode::Disable,
            "allow" | "prefer" => Mode::Prefer,
            "require" => Mode::Require,
            "verify-ca" => Mode::VerifyCa,
            "verify-full" => Mode::VerifyFull,
            _ => {
                return Err(Error::InvalidInput(format!(
                    "{from}: sslmode {value:?} is not one of disable, allow, prefer, require, verify-ca, verify-full"
                )))
            }
        })
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Mode::Disable => "disable",
            Mode::Prefer => "prefer",
            Mode::Require => "require",
            Mode::VerifyCa => "verify-ca",
            Mode::VerifyFull => "verify-full",
        }
    }
}

/// The TLS settings of a connection string, and the string without them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Split {
    /// The connection string for the driver.
    pub rest: String,
    pub mode: Option<Mode>,
    pub root_cert: Option<PathBuf>,
}

/// Take `sslmode` and `sslrootcert` out of a libpq connection string (keyword
/// = value pairs or a `postgresql://` URI).
pub(crate) fn split(url: &str) -> Result<Split> {
    let mut out = Split {
        rest: String::new(),
        mode: None,
        root_cert: None,
    };
    let mut take = |key: &str, value: String| -> Result<bool> {
        match key {
            "sslmode" => out.mode = Some(Mode::parse(&value, "remote connection string")?),
            "sslrootcert" => out.root_cert = Some(PathBuf::from(value)),
            _ => return Ok(false),
        }
        Ok(true)
    };
    let rest = if let Some(after) = ["postgresql://", "postgres://"]
        .iter()
        .find_map(|p| url.strip_prefix(p))
    {
        let prefix = &url[..url.len() - after.len()];
        match after.split_once('?') {
            None => url.to_string(),
            Some((base, query)) => {
                let mut kept = Vec::new();
                for pair in query.split('&').filter(|p| !p.is_empty()) {
                    let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                    let decode = |s: &str| percent_decode_str(s).decode_utf8_lossy().into_owned();
                    if !take(&decode(k), decode(v))? {
                        kept.push(pair);
                    }
                }
                let query = kept.join("&");
                let sep = if query.is_empty() { "" } else { "?" };
                format!("{prefix}{base}{sep}{query}")
            }
        }
    } else {
        let mut kept = Vec::new();
        for (key, value, text) in pairs(url)? {
            if !take(key, value)? {
                kept.push(text);
            }
        }
        kept.join(" ")
    };
    out.rest = rest;
    Ok(out)
}

/// The `key = value` pairs of a keyword/value connection string: each key, its
/// value unquoted, and the pair's own text. Values follow libpq's rules: single
/// quotes around a value with spaces, a backslash before a quote or backslash.
fn pairs(s: &str) -> Result<Vec<(&str, String, &str)>> {
    let bad =
        |why: &str| Error::InvalidInput(format!("remote connection string is not valid: {why}"));
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == b.len() {
            return Ok(out);
        }
        let start = i;
        while i < b.len() && b[i] != b'=' && !b[i].is_ascii_whitespace() {
            i += 1;
        }
        let key = &s[start..i];
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == b.len() || b[i] != b'=' {
            return Err(bad(&format!("{key:?} is not followed by \"=\"")));
        }
        i += 1;
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut value = Vec::new();
        if b.get(i) == Some(&b'\'') {
            i += 1;
            loop {
                match b.get(i) {
                    None => return Err(bad(&format!("the value of {key} has no closing quote"))),
                    Some(b'\'') => {
                        i += 1;
                        break;
                    }
                    Some(b'\\') if i + 1 < b.len() => {
                        value.push(b[i + 1]);
                        i += 2;
                    }
                    Some(&c) => {
                        value.push(c);
                        i += 1;
                    }
                }
            }
        } else {
            while i < b.len() && !b[i].is_ascii_whitespace() {
                if b[i] == b'\\' && i + 1 < b.len() {
                    i += 1;
                }
                value.push(b[i]);
                i += 1;
            }
        }
        // Only ASCII bytes were looked at, so the value is whole UTF-8 runs.
        let value = String::from_utf8_lossy(&value).into_owned();
        out.push((key, value, &s[start..i]));
    }
}

/// The connector for a connection: `config` gets the driver's `SslMode`.
/// `PGSSLMODE` and `PGSSLROOTCERT` stand in for keys the string lacks, as
/// in libpq; over Unix sockets there is no TLS, as in libpq.
pub(crate) fn connector(
    split: &Split,
    config: &mut postgres::Config,
) -> Result<(Mode, MakeRustlsConnect)> {
    let mode = match (&split.mode, std::env::var("PGSSLMODE")) {
        (Some(m), _) => *m,
        (None, Ok(v)) if !v.is_empty() => Mode::parse(&v, "PGSSLMODE")?,
        _ => Mode::Prefer,
    };
    let root = split.root_cert.clone().or_else(|| {
        std::env::var_os("PGSSLROOTCERT")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    });
    let unix_only = config
        .get_hosts()
        .iter()
        .all(|h| matches!(h, Host::Unix(_)))
        && config.get_hostaddrs().is_empty();
    let mode = if unix_only { Mode::Disable } else { mode };
    config.ssl_mode(match mode {
        Mode::Disable => SslMode::Disable,
        Mode::Prefer => SslMode::Prefer,
        Mode::Require | Mode::VerifyCa | Mode::VerifyFull => SslMode::Require,
    });
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    // libpq's default root file; `require` with a root file verifies as verify-ca.
    let root = root.or_else(|| {
        let home = std::env::var_os("HOME")?;
        let p = Path::new(&home).join(".postgresql/root.crt");
        p.exists().then_some(p)
    });
    let verifier: Arc<dyn ServerCertVerifier> = match (mode, root) {
        (Mode::VerifyCa | Mode::VerifyFull, None) => {
            return Err(Error::InvalidInput(format!(
                "sslmode={} needs the certificate authority to trust: set sslrootcert (or PGSSLROOTCERT) to its PEM file",
                mode.name()
            )))
        }
        (Mode::Disable | Mode::Prefer, _) | (Mode::Require, None) => Arc::new(Relaxed {
            provider: provider.clone(),
            chain: None,
        }),
        (_, Some(path)) => {
            let webpki = WebPkiServerVerifier::builder_with_provider(
                Arc::new(roots(&path)?),
                provider.clone(),
            )
            .build()
            .map_err(|e| {
                Error::InvalidInput(format!("sslrootcert {}: {e}", path.display()))
            })?;
            if mode == Mode::VerifyFull {
                webpki as Arc<dyn ServerCertVerifier>
            } else {
                Arc::new(Relaxed {
                    provider: provider.clone(),
                    chain: Some(webpki),
                })
            }
        }
    };
    let tls = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Internal(format!("TLS configuration: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok((mode, MakeRustlsConnect::new(tls)))
}

/// The certificates of a PEM file, as roots of trust.
fn roots(path: &Path) -> Result<RootCertStore> {
    let bad = |why: String| Error::InvalidInput(format!("sslrootcert {}: {why}", path.display()));
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(e.to_string()))?
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| bad(e.to_string()))?;
    let mut store = RootCertStore::empty();
    let (added, _) = store.add_parsable_certificates(certs);
    if added == 0 {
        return Err(bad("holds no certificate".into()));
    }
    Ok(store)
}

/// The checks of `prefer` and `require` without a root file (`chain: None`:
/// encrypted, the certificate not checked, libpq's behaviour) and of
/// `verify-ca` (the chain must lead to a trusted root, the host name is not
/// checked: webpki checks the chain first, so a name error means it held). The
/// handshake's signatures are verified in every mode.
#[derive(Debug)]
struct Relaxed {
    provider: Arc<CryptoProvider>,
    chain: Option<Arc<WebPkiServerVerifier>>,
}

impl ServerCertVerifier for Relaxed {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_keys_leave_a_keyword_string_and_the_rest_stays_as_written() {
        let s = split(
            "host=db.example port=5432 sslmode = verify-full sslrootcert='/etc/my ca/root.crt' password='a\\'b c'",
        )
        .expect("split");
        assert_eq!(s.mode, Some(Mode::VerifyFull));
        assert_eq!(s.root_cert, Some(PathBuf::from("/etc/my ca/root.crt")));
        assert_eq!(s.rest, "host=db.example port=5432 password='a\\'b c'");
        let parsed: postgres::Config = s.rest.parse().expect("the driver reads the rest");
        assert_eq!(parsed.get_password(), Some(&b"a'b c"[..]));
    }

    #[test]
    fn tls_keys_leave_a_uri_query_and_are_percent_decoded() {
        let s = split(
            "postgresql://u@db.example:5433/app?application_name=x&sslmode=require&sslrootcert=%2Ftmp%2Fca%20file.crt",
        )
        .expect("split");
        assert_eq!(s.mode, Some(Mode::Require));
        assert_eq!(s.root_cert, Some(PathBuf::from("/tmp/ca file.crt")));
        assert_eq!(
            s.rest,
            "postgresql://u@db.example:5433/app?application_name=x"
        );
        let only = split("postgres://db/app?sslmode=disable").expect("split");
        assert_eq!(
            (only.rest.as_str(), only.mode),
            ("postgres://db/app", Some(Mode::Disable))
        );
    }

    #[test]
    fn a_bad_sslmode_or_unclosed_quote_is_refused_naming_it() {
        let e = split("host=x sslmode=verify").expect_err("bad mode");
        assert_eq!(e.kind(), crate::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("sslmode \"verify\""), "{e}");
        let e = split("host=x password='abc").expect_err("open quote");
        assert!(e.to_string().contains("password"), "{e}");
    }
}
