//! Channel values as stored (FORMAT.md §24.3): content-addressed by the
//! SHA-256 of their serialized bytes, each written once per thread, as a zstd
//! frame made with the value it replaces as the frame's prefix (a delta, as
//! `zstd --patch-from` makes), as a plain zstd frame, or as the bytes
//! themselves; in the log line, or in `blobs/` when large.

use sha2::{Digest, Sha256};
use zstd::zstd_safe::{CCtx, CParameter, DCtx, DParameter};

use crate::error::{Error, Result};

/// Values shorter than this are stored as they are: a frame would not pay.
pub(crate) const RAW_BELOW: usize = 64;
/// The longest chain of deltas from a value to one stored whole: bounds the
/// work of decoding a value nothing decoded recently.
pub(crate) const MAX_DEPTH: u32 = 32;
/// zstd's level: its default, fast to write.
const LEVEL: i32 = 3;
/// The largest window a delta may need: a base and its value together past it
/// are compressed without the base. 2^27 bytes is what every zstd decoder
/// accepts without a setting (`ZSTD_WINDOWLOG_LIMIT_DEFAULT`).
const MAX_WINDOW_LOG: u32 = 27;

/// How a stored value's bytes were encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    Identity,
    Zstd,
}

impl Encoding {
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Identity => "identity",
            Encoding::Zstd => "zstd",
        }
    }

    pub fn parse(s: &str) -> Option<Encoding> {
        match s {
            "identity" => Some(Encoding::Identity),
            "zstd" => Some(Encoding::Zstd),
            _ => None,
        }
    }
}

/// A value's id: the lowercase hex SHA-256 of its bytes.
pub(crate) fn value_id(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The window log a frame over `base` and `value` needs, if within the limit.
fn window_log(base: usize, value: usize) -> Option<u32> {
    let need = (base + value).max(1 << 10).next_power_of_two();
    let log = need.trailing_zeros();
    (log <= MAX_WINDOW_LOG).then_some(log)
}

fn zstd_error(what: &str, code: usize) -> Error {
    Error::Internal(format!(
        "zstd {what}: {}",
        zstd::zstd_safe::get_error_name(code)
    ))
}

/// Encode `value`, with `base` (the value it replaces) as the frame's prefix
/// when given. `None` when a frame is no shorter than the value.
pub(crate) fn compress(value: &[u8], base: Option<&[u8]>) -> Result<Option<Vec<u8>>> {
    if value.len() < RAW_BELOW {
        return Ok(None);
    }
    let base = base.filter(|b| window_log(b.len(), value.len()).is_some());
    let mut cctx = CCtx::create();
    let set = |cctx: &mut CCtx<'_>, p| {
        cctx.set_parameter(p)
            .map(|_| ())
            .map_err(|c| zstd_error("parameter", c))
    };
    set(&mut cctx, CParameter::CompressionLevel(LEVEL))?;
    set(&mut cctx, CParameter::ContentSizeFlag(true))?;
    set(&mut cctx, CParameter::ChecksumFlag(false))?;
    let mut out = Vec::with_capacity(zstd::zstd_safe::compress_bound(value.len()));
    let n = match base {
        Some(b) => {
            let log = window_log(b.len(), value.len()).unwrap_or(MAX_WINDOW_LOG);
            set(&mut cctx, CParameter::WindowLog(log))?;
            cctx.ref_prefix(b).map_err(|c| zstd_error("prefix", c))?;
            cctx.compress2(&mut out, value)
        }
        None => cctx.compress2(&mut out, value),
    }
    .map_err(|c| zstd_error("compression", c))?;
    out.truncate(n);
    Ok((out.len() < value.len()).then_some(out))
}

/// Decode a frame of `size` bytes made by [`compress`] with `base` as prefix.
pub(crate) fn decompress(frame: &[u8], size: usize, base: Option<&[u8]>) -> Result<Vec<u8>> {
    let mut dctx = DCtx::create();
    dctx.set_parameter(DParameter::WindowLogMax(MAX_WINDOW_LOG))
        .map_err(|c| zstd_error("parameter", c))?;
    if let Some(b) = base {
        dctx.ref_prefix(b).map_err(|c| zstd_error("prefix", c))?;
    }
    let mut out = Vec::with_capacity(size);
    let n = dctx.decompress(&mut out, frame).map_err(|c| {
        Error::Corrupt(format!(
            "a checkpoint value's zstd frame: {}",
            zstd::zstd_safe::get_error_name(c)
        ))
    })?;
    out.truncate(n);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delta_is_small_and_decodes_to_the_value() {
        let base: Vec<u8> = (0..2000u32)
            .flat_map(|i| format!("message {i};").into_bytes())
            .collect();
        let mut value = b"\xdc\x07\xd1".to_vec();
        value.extend(&base);
        value.extend(b"one more message at the end");
        let frame = compress(&value, Some(&base)).unwrap().unwrap();
        // A few hundred bytes for a 26 KB value: the edits, not the value.
        assert!(
            frame.len() * 50 < value.len(),
            "delta of {} bytes",
            frame.len()
        );
        assert_eq!(decompress(&frame, value.len(), Some(&base)).unwrap(), value);
        // Without its base the frame does not decode to the value.
        assert!(decompress(&frame, value.len(), None)
            .map(|v| v != value)
            .unwrap_or(true));
    }

    #[test]
    fn short_or_incompressible_values_stay_as_they_are() {
        assert_eq!(compress(b"tiny", None).unwrap(), None);
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        assert_eq!(compress(&noise, None).unwrap(), None);
    }
}
