//! `sk_rank(messages)`: the cache's relevance, an FTS5 auxiliary function
//! (FORMAT.md §23.5). It is FTS5's own BM25 (k1 = 1.2, b = 0.75, the same
//! weight for every phrase and the same length normalisation) except in one
//! input: the number of rows that hold a phrase is counted only up to
//! [`COUNTED`]. FTS5's `bm25()` counts every row holding each phrase of the
//! query, once per query, by evaluating the phrase over the whole index: for
//! a phrase in every tenth message that count was the whole cost of a query
//! (8.2 ms of a file's 8.4 ms, on a 1 GiB store), while the matches ranked
//! took 0.2 ms. Counted to the cap, a phrase in more rows than that weighs
//! as one in exactly that many; a rarer phrase weighs exactly as in BM25.

use std::ffi::{c_int, c_void, CStr};
use std::ptr;

use rusqlite::ffi;
use rusqlite::Connection;

/// Rows counted for a phrase's weight, at most.
pub(crate) const COUNTED: i64 = 5000;

/// The name the function is registered under, on each connection.
pub(crate) const NAME: &CStr = c"sk_rank";

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Register `sk_rank` on `conn` (each connection has its own functions).
pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    // SAFETY: the handle is the open connection's; the statement is
    // prepared, stepped and finalized here, and `api` outlives it.
    unsafe {
        let db = conn.handle();
        let mut api: *mut ffi::fts5_api = ptr::null_mut();
        let mut stmt = ptr::null_mut();
        let rc = ffi::sqlite3_prepare_v2(
            db,
            c"SELECT fts5(?1)".as_ptr(),
            -1,
            &mut stmt,
            ptr::null_mut(),
        );
        if rc != ffi::SQLITE_OK {
            return Err(rusqlite::Error::SqliteFailure(ffi::Error::new(rc), None));
        }
        ffi::sqlite3_bind_pointer(
            stmt,
            1,
            (&mut api as *mut *mut ffi::fts5_api).cast(),
            c"fts5_api_ptr".as_ptr(),
            None,
        );
        ffi::sqlite3_step(stmt);
        let rc = ffi::sqlite3_finalize(stmt);
        let create = api.as_ref().and_then(|a| a.xCreateFunction);
        let (Some(create), ffi::SQLITE_OK) = (create, rc) else {
            return Err(rusqlite::Error::SqliteFailure(
                ffi::Error::new(ffi::SQLITE_ERROR),
                Some("FTS5's API is not available".into()),
            ));
        };
        let rc = create(api, NAME.as_ptr(), ptr::null_mut(), Some(rank), None);
        if rc != ffi::SQLITE_OK {
            return Err(rusqlite::Error::SqliteFailure(ffi::Error::new(rc), None));
        }
    }
    Ok(())
}

/// What a query's rows share: each phrase's weight and the average row
/// length, computed at its first row.
struct Shared {
    idf: Vec<f64>,
    avgdl: f64,
}

/// The per-row function. BM25 is negative here, as FTS5's: lower is better.
unsafe extern "C" fn rank(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    _n: c_int,
    _args: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 calls this with its API table and the current row's
    // context, valid for the call.
    let result = std::panic::catch_unwind(|| unsafe { score(&*api, fts) });
    match result {
        Ok(Ok(score)) => unsafe { ffi::sqlite3_result_double(ctx, score) },
        Ok(Err(rc)) => unsafe { ffi::sqlite3_result_error_code(ctx, rc) },
        Err(_) => unsafe { ffi::sqlite3_result_error_code(ctx, ffi::SQLITE_INTERNAL) },
    }
}

/// Turn an FTS5 return code into a `Result`.
fn ok(rc: c_int) -> Result<(), c_int> {
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rc)
    }
}

/// The score of the current row.
///
/// # Safety
/// `api` and `fts` are those FTS5 gave the auxiliary function for this row.
unsafe fn score(api: &ffi::Fts5ExtensionApi, fts: *mut ffi::Fts5Context) -> Result<f64, c_int> {
    let missing = ffi::SQLITE_MISUSE;
    let get = api.xGetAuxdata.ok_or(missing)?;
    let mut shared = get(fts, 0) as *const Shared;
    if shared.is_null() {
        let computed = Box::into_raw(Box::new(self::shared(api, fts)?));
        let set = api.xSetAuxdata.ok_or(missing)?;
        // FTS5 frees it with `free_shared`, also when this call fails.
        ok(set(fts, computed.cast(), Some(free_shared)))?;
        shared = computed;
    }
    let shared = &*shared;
    let mut freq = vec![0f64; shared.idf.len()];
    let mut n = 0;
    ok(api.xInstCount.ok_or(missing)?(fts, &mut n))?;
    let inst = api.xInst.ok_or(missing)?;
    for i in 0..n {
        let (mut phrase, mut col, mut off) = (0, 0, 0);
        ok(inst(fts, i, &mut phrase, &mut col, &mut off))?;
        if let Some(f) = usize::try_from(phrase).ok().and_then(|p| freq.get_mut(p)) {
            *f += 1.0;
        }
    }
    let mut tokens = 0;
    ok(api.xColumnSize.ok_or(missing)?(fts, -1, &mut tokens))?;
    let norm = K1 * (1.0 - B + B * f64::from(tokens) / shared.avgdl);
    let score: f64 = shared
        .idf
        .iter()
        .zip(&freq)
        .map(|(idf, f)| idf * (f * (K1 + 1.0)) / (f + norm))
        .sum();
    Ok(-score)
}

/// Each phrase's weight (FTS5's BM25 IDF, from a count of its rows that
/// stops at [`COUNTED`]) and the average row length.
///
/// # Safety
/// As [`score`].
unsafe fn shared(api: &ffi::Fts5ExtensionApi, fts: *mut ffi::Fts5Context) -> Result<Shared, c_int> {
    let missing = ffi::SQLITE_MISUSE;
    let (mut rows, mut total) = (0i64, 0i64);
    ok(api.xRowCount.ok_or(missing)?(fts, &mut rows))?;
    ok(api.xColumnTotalSize.ok_or(missing)?(fts, -1, &mut total))?;
    let phrases = api.xPhraseCount.ok_or(missing)?(fts);
    let query = api.xQueryPhrase.ok_or(missing)?;
    let mut idf = Vec::with_capacity(usize::try_from(phrases).unwrap_or(0));
    for p in 0..phrases {
        let mut hits: i64 = 0;
        ok(query(fts, p, (&mut hits as *mut i64).cast(), Some(count)))?;
        let (n, h) = (rows as f64, hits as f64);
        // As FTS5's bm25(): a phrase in more than half the rows gets a weight
        // just above zero, never a negative one.
        let w = ((n - h + 0.5) / (h + 0.5)).ln();
        idf.push(if w <= 0.0 { 1e-6 } else { w });
    }
    let avgdl = if rows > 0 {
        total as f64 / rows as f64
    } else {
        1.0
    };
    Ok(Shared {
        idf,
        avgdl: avgdl.max(f64::MIN_POSITIVE),
    })
}

/// `xQueryPhrase`'s callback: one more row holds the phrase; enough once
/// [`COUNTED`] do (`SQLITE_DONE` ends the count without an error).
unsafe extern "C" fn count(
    _api: *const ffi::Fts5ExtensionApi,
    _fts: *mut ffi::Fts5Context,
    hits: *mut c_void,
) -> c_int {
    // SAFETY: `hits` is the `i64` that `shared` passed.
    let hits = unsafe { &mut *hits.cast::<i64>() };
    *hits += 1;
    if *hits >= COUNTED {
        ffi::SQLITE_DONE
    } else {
        ffi::SQLITE_OK
    }
}

unsafe extern "C" fn free_shared(p: *mut c_void) {
    // SAFETY: `p` came from `Box::into_raw` in `score`, and FTS5 frees it once.
    drop(unsafe { Box::from_raw(p.cast::<Shared>()) });
}
