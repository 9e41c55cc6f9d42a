//! Lossless transforms and codecs on a solved db's own slices, measured, not adopted: for
//! the slices of chosen layers (all, or `--slices N` spread evenly over each layer), the
//! values each slice stores (`Slice::stored_values`, in the stored order, as f64 bits)
//! go through each transform (none; byte planes; XOR with the previous value, then byte
//! planes; the difference of the bit patterns from the previous one, then byte planes)
//! and each codec (none; lz4 blocks; zstd at `--zstd` levels). Every slice is encoded
//! alone (or in blocks of `--block V` values, each alone, as a format that keeps reads in
//! part would need), decoded back to f64s and checked bit for bit: a difference panics.
//! Prints per layer: the values' bytes, the compressed bytes, the ratio to today's record
//! bytes (the record's header and window table kept as they are, the values replaced by
//! the compressed bytes) and to the raw f64 bytes, encode and decode speed (decode:
//! decompress and undo the transform into f64s), each the best of `--rounds`, in MB of
//! raw f64 values a second; beside today's `Slice::decode_for` and blake3 digest of the
//! same slices (`dec/today`: the codec's decode time over today's digest and decode, what
//! a whole read of a slice adds on top of today's); the bytes a value of each byte plane
//! by zstd-3 alone (where the bytes that do not compress are); and the window tables'
//! bytes by zstd-3 (round-trip checked). Then the whole db's size if each measured layer
//! shrank by its ratio, with and without the window tables compressed too.
//!
//! ```sh
//! cargo bench -p gops-bench --bench codec -- --db DIR [--layers 7,8] [--slices 12] [--zstd 1,3,9] [--block 0] [--rounds 3]
//! ```
//!
//! Codecs (dev-dependencies of this crate only): `zstd`, the reference libzstd through
//! its long-kept binding, the codec a smaller format would most likely take; `lz4_flex`,
//! pure Rust LZ4 blocks in its safe code, the fast-decode end of the range.
//!
//! The db is opened read only (`Store::open_existing`: sealed layers, nothing written).

use std::hint::black_box;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use gops_bench::args::number;
use gops_common::checksum::digest_bytes;
use gops_common::prizes::prize_set_count;
use gops_common::slice::Slice;
use gops_db::store::Store;

struct Args {
    db: PathBuf,
    layers: Option<Vec<u8>>,
    slices: usize,
    zstd: Vec<i32>,
    block: usize,
    rounds: usize,
}

fn parse_args() -> Result<Option<Args>, String> {
    let mut args = std::env::args().skip(1);
    let (mut db, mut layers, mut slices, mut zstd) = (None, None, 0, vec![1, 3, 9]);
    let (mut block, mut rounds) = (0, 3);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--db" => db = args.next().map(PathBuf::from),
            "--layers" => layers = Some(list(args.next(), "--layers")?),
            "--slices" => slices = number(&mut args, "--slices")?,
            "--zstd" => zstd = list(args.next(), "--zstd")?,
            "--block" => block = number(&mut args, "--block")?,
            "--rounds" => rounds = number(&mut args, "--rounds")?,
            "--bench" => {}
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(db.map(|db| Args {
        db,
        layers,
        slices,
        zstd,
        block,
        rounds: rounds.max(1),
    }))
}

/// The numbers of a comma-separated list given to `name`.
fn list<T: std::str::FromStr>(text: Option<String>, name: &str) -> Result<Vec<T>, String> {
    let text = text.ok_or(format!("{name} needs a value"))?;
    text.split(',')
        .map(|x| x.trim().parse())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("{name} {text}: not a list of numbers"))
}

/// `count` prize ranks spread evenly over `0..total`; all of them when `count` is 0.
fn spread(total: usize, count: usize) -> Vec<u32> {
    let count = if count == 0 { total } else { count.min(total) };
    (0..count).map(|i| (i * total / count) as u32).collect()
}

/// A lossless map of a run of f64 bit patterns to bytes.
#[derive(Clone, Copy, PartialEq)]
enum Transform {
    /// The values as stored today: f64 little-endian.
    Raw,
    /// Byte 0 of every value, then byte 1, ...
    Planes,
    /// Each value XOR the one before (0 before the first), then byte planes.
    XorPlanes,
    /// Each bit pattern minus the one before (wrapping), then byte planes.
    DeltaPlanes,
}

const TRANSFORMS: [(Transform, &str); 4] = [
    (Transform::Raw, "none"),
    (Transform::Planes, "planes"),
    (Transform::XorPlanes, "xor+planes"),
    (Transform::DeltaPlanes, "delta+planes"),
];

impl Transform {
    /// `bits` transformed into `out` (cleared first).
    fn apply(self, bits: &[u64], out: &mut Vec<u8>) {
        out.clear();
        if self == Transform::Raw {
            out.extend(bits.iter().flat_map(|b| b.to_le_bytes()));
            return;
        }
        let mut prev = 0u64;
        let words: Vec<u64> = bits
            .iter()
            .map(|&b| {
                let w = match self {
                    Transform::XorPlanes => b ^ prev,
                    Transform::DeltaPlanes => b.wrapping_sub(prev),
                    _ => b,
                };
                prev = b;
                w
            })
            .collect();
        for plane in 0..8 {
            out.extend(words.iter().map(|w| (w >> (8 * plane)) as u8));
        }
    }

    /// The values whose transform is `bytes`.
    fn undo(self, bytes: &[u8]) -> Vec<f64> {
        assert_eq!(bytes.len() % 8, 0, "a transform of {} bytes", bytes.len());
        if self == Transform::Raw {
            return bytes
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect();
        }
        let n = bytes.len() / 8;
        let mut words = vec![0u64; n];
        for (plane, bytes) in bytes.chunks_exact(n.max(1)).enumerate() {
            for (w, &b) in words.iter_mut().zip(bytes) {
                *w |= u64::from(b) << (8 * plane);
            }
        }
        let mut prev = 0u64;
        for w in &mut words {
            *w = match self {
                Transform::XorPlanes => *w ^ prev,
                Transform::DeltaPlanes => w.wrapping_add(prev),
                _ => *w,
            };
            prev = *w;
        }
        words.into_iter().map(f64::from_bits).collect()
    }
}

/// A codec on a transformed buffer.
#[derive(Clone, Copy)]
enum Codec {
    None,
    Lz4,
    Zstd(i32),
}

impl Codec {
    fn name(self) -> String {
        match self {
            Codec::None => "none".into(),
            Codec::Lz4 => "lz4".into(),
            Codec::Zstd(level) => format!("zstd-{level}"),
        }
    }
}

/// A codec's reusable state: zstd's contexts.
struct Coder {
    codec: Codec,
    zc: Option<zstd::bulk::Compressor<'static>>,
    zd: zstd::bulk::Decompressor<'static>,
}

impl Coder {
    fn new(codec: Codec) -> Coder {
        let zc = match codec {
            Codec::Zstd(level) => Some(zstd::bulk::Compressor::new(level).expect("zstd level")),
            _ => None,
        };
        let zd = zstd::bulk::Decompressor::new().expect("zstd decompressor");
        Coder { codec, zc, zd }
    }

    fn compress(&mut self, bytes: &[u8]) -> Vec<u8> {
        match self.codec {
            Codec::None => bytes.to_vec(),
            Codec::Lz4 => lz4_flex::block::compress(bytes),
            Codec::Zstd(_) => self
                .zc
                .as_mut()
                .expect("a zstd codec")
                .compress(bytes)
                .expect("zstd compresses"),
        }
    }

    /// `packed` decompressed into `out`, whose length is the original's.
    fn decompress(&mut self, packed: &[u8], out: &mut [u8]) {
        let len = match self.codec {
            Codec::None => {
                out.copy_from_slice(packed);
                packed.len()
            }
            Codec::Lz4 => lz4_flex::block::decompress_into(packed, out).expect("lz4 decodes"),
            Codec::Zstd(_) => self
                .zd
                .decompress_to_buffer(packed, out)
                .expect("zstd decodes"),
        };
        assert_eq!(len, out.len(), "decompressed to another length");
    }
}

/// One sampled slice: its record as stored today and its stored values.
struct Sampled {
    rank: u32,
    record_bytes: u64,
    body: Vec<u8>,
    bits: Vec<u64>,
}

/// A run of values encoded alone: a whole slice, or a block of one.
struct Unit<'a> {
    slice: usize,
    bits: &'a [u64],
}

/// The best of `rounds` timings of `f`.
fn best(rounds: usize, mut f: impl FnMut()) -> f64 {
    (0..rounds)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Encodes every unit with `transform` and `codec`, checks that each decodes to its
/// values bit for bit (panicking if not), then times encode and decode.
fn measure(
    units: &[Unit],
    transform: Transform,
    codec: Codec,
    rounds: usize,
    what: &str,
) -> (u64, f64, f64) {
    let mut coder = Coder::new(codec);
    let mut scratch = Vec::new();
    let packed: Vec<Vec<u8>> = units
        .iter()
        .map(|u| {
            transform.apply(u.bits, &mut scratch);
            coder.compress(&scratch)
        })
        .collect();
    for (u, p) in units.iter().zip(&packed) {
        scratch.resize(8 * u.bits.len(), 0);
        coder.decompress(p, &mut scratch);
        let back = transform.undo(&scratch);
        let same =
            back.len() == u.bits.len() && back.iter().zip(u.bits).all(|(v, &b)| v.to_bits() == b);
        assert!(
            same,
            "{what}, slice #{}: does not round-trip bit for bit",
            u.slice
        );
    }
    let encode_s = best(rounds, || {
        for u in units {
            transform.apply(u.bits, &mut scratch);
            black_box(coder.compress(&scratch));
        }
    });
    let decode_s = best(rounds, || {
        for (u, p) in units.iter().zip(&packed) {
            scratch.resize(8 * u.bits.len(), 0);
            coder.decompress(p, &mut scratch);
            black_box(transform.undo(&scratch));
        }
    });
    let bytes = packed.iter().map(|p| p.len() as u64).sum();
    (bytes, encode_s, decode_s)
}

/// Bytes a value that each byte plane of `transform` takes (plane 7, the sign, exponent
/// and top of the mantissa, first), each plane of each unit compressed alone by zstd-3.
fn plane_sizes(units: &[Unit], transform: Transform) -> [f64; 8] {
    let mut coder = Coder::new(Codec::Zstd(3));
    let (mut scratch, mut packed, mut values) = (Vec::new(), [0u64; 8], 0);
    for u in units {
        transform.apply(u.bits, &mut scratch);
        values += u.bits.len();
        for (plane, bytes) in scratch.chunks_exact(u.bits.len().max(1)).enumerate() {
            packed[7 - plane] += coder.compress(bytes).len() as u64;
        }
    }
    packed.map(|p| p as f64 / values.max(1) as f64)
}

/// What a layer's measurement gives the db's estimate.
struct LayerResult {
    k: u8,
    layer_bytes: u64,
    /// Per transform and codec: the ratio of the new record bytes to today's.
    ratios: Vec<(String, f64)>,
    /// The share of the records that the window tables' best zstd-3 would save.
    tables_saved: f64,
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(Some(args)) => args,
        Ok(None) => {
            println!("codec: no --db given, nothing measured");
            println!(
                "usage: cargo bench -p gops-bench --bench codec -- --db DIR [--layers K,K2,...] [--slices N] [--zstd 1,3,9] [--block V] [--rounds 3]"
            );
            return ExitCode::SUCCESS;
        }
        Err(why) => {
            eprintln!("codec: {why}");
            return ExitCode::from(2);
        }
    };
    let store = match Store::open_existing(&args.db) {
        Ok(store) => store,
        Err(e) => {
            eprintln!("codec: {e}");
            return ExitCode::from(2);
        }
    };
    let n = store.n();
    let layers = args
        .layers
        .clone()
        .unwrap_or_else(|| (1..=n).filter(|&k| prize_set_count(n, k) > 8).collect());
    let mut codecs = vec![Codec::None, Codec::Lz4];
    codecs.extend(args.zstd.iter().map(|&l| Codec::Zstd(l)));
    println!(
        "{n}-card {} db {}; each slice encoded {}; speeds in MB of raw f64 values a second, best of {}",
        store.objective(),
        args.db.display(),
        if args.block == 0 {
            "whole".to_string()
        } else {
            format!("in blocks of {} values", args.block)
        },
        args.rounds
    );
    let mut results = Vec::new();
    for &k in &layers {
        match run_layer(&store, k, &args, &codecs) {
            Ok(result) => results.push(result),
            Err(why) => {
                eprintln!("codec: {why}");
                return ExitCode::from(1);
            }
        }
    }
    match db_estimate(&store, &results) {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("codec: {why}");
            ExitCode::from(1)
        }
    }
}

/// The record bytes of every slice of layer `k`.
fn layer_bytes(store: &Store, k: u8) -> Result<u64, String> {
    let mut total = 0;
    for rank in store.stored_ranks(k).map_err(|e| e.to_string())? {
        let place = store.record_place(k, rank).map_err(|e| e.to_string())?;
        total += u64::from(place.ok_or(format!("layer {k} rank {rank}: no place"))?.len);
    }
    Ok(total)
}

/// The slices of `ranks` of layer `k`, read and checked against their digests.
fn sample(store: &Store, k: u8, ranks: &[u32]) -> Result<Vec<Sampled>, String> {
    ranks
        .iter()
        .map(|&rank| {
            let bytes = store
                .require_slice_bytes(k, rank)
                .map_err(|e| e.to_string())?;
            let place = store
                .record_place(k, rank)
                .map_err(|e| e.to_string())?
                .ok_or(format!("layer {k} rank {rank}: no place"))?;
            let slice = Slice::decode_for(store.n(), store.objective(), k, rank, &bytes.body)?;
            Ok(Sampled {
                rank,
                record_bytes: u64::from(place.len),
                bits: slice.stored_values().map(f64::to_bits).collect(),
                body: bytes.body,
            })
        })
        .collect()
}

/// Measures layer `k`'s sample and prints its table.
fn run_layer(store: &Store, k: u8, args: &Args, codecs: &[Codec]) -> Result<LayerResult, String> {
    let n = store.n();
    if k < 1 || k > n || !matches!(store.layer(k), Ok(Some(_))) {
        return Err(format!("layer {k} of this {n}-card db is not complete"));
    }
    let count = prize_set_count(n, k);
    let ranks = spread(count, args.slices);
    let slices = sample(store, k, &ranks)?;
    let record: u64 = slices.iter().map(|s| s.record_bytes).sum();
    let values: u64 = slices.iter().map(|s| s.bits.len() as u64).sum();
    let raw = 8 * values;
    let layer_bytes = layer_bytes(store, k)?;
    println!();
    println!(
        "layer {k}: {} slices of {count} ({:.1} MB of the layer's {:.1} MB); {values} values, {:.3} record bytes a value; record headers and window tables {:.1} % of them",
        slices.len(),
        record as f64 / 1e6,
        layer_bytes as f64 / 1e6,
        record as f64 / values.max(1) as f64,
        100.0 * (record - raw) as f64 / record as f64
    );
    let mb_s = |s: f64| raw as f64 / 1e6 / s;
    // today's reads: the body's digest, and its decode into a slice
    let (objective, rounds) = (store.objective(), args.rounds);
    let digest_s = best(rounds, || {
        for s in &slices {
            black_box(digest_bytes(&s.body));
        }
    });
    let decode_today_s = best(rounds, || {
        for s in &slices {
            let slice = Slice::decode_for(n, objective, k, s.rank, &s.body).expect("decodes");
            black_box(slice);
        }
    });
    let today_s = digest_s + decode_today_s;
    println!(
        "  today: Slice::decode_for {:.0} MB/s, blake3 of the bodies {:.0} MB/s, both {:.0} MB/s",
        mb_s(decode_today_s),
        mb_s(digest_s),
        mb_s(today_s)
    );
    // the window tables (the bodies before their values), by zstd-3 as they are and
    // by byte column (every pattern's byte 0, then byte 1, ...)
    let mut coder = Coder::new(Codec::Zstd(3));
    let (mut tables, mut as_is, mut by_column) = (0, 0, 0);
    for table in slices
        .iter()
        .map(|s| &s.body[..s.body.len() - 8 * s.bits.len()])
    {
        let columns: Vec<u8> = (0..4)
            .flat_map(|c| table.iter().skip(c).step_by(4).copied())
            .collect();
        for (bytes, sum) in [(table, &mut as_is), (&columns[..], &mut by_column)] {
            let packed = coder.compress(bytes);
            let back = zstd::bulk::decompress(&packed, bytes.len()).expect("zstd decodes");
            assert!(
                back == bytes,
                "layer {k}: a window table does not round-trip"
            );
            *sum += packed.len() as u64;
        }
        tables += table.len() as u64;
    }
    if tables > 0 {
        println!("  window tables {tables} bytes; zstd-3 {as_is}, by byte column {by_column}");
    }
    let tables_saved = tables.saturating_sub(as_is.min(by_column)) as f64 / record as f64;
    let units: Vec<Unit> = slices
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            let block = if args.block == 0 {
                s.bits.len().max(1)
            } else {
                args.block
            };
            s.bits
                .chunks(block)
                .map(move |bits| Unit { slice: i, bits })
        })
        .collect();
    println!(
        "  {:<13} {:<8} {:>14} {:>8} {:>8} {:>10} {:>10} {:>8}",
        "transform", "codec", "bytes", "/record", "/f64", "enc MB/s", "dec MB/s", "dec/today"
    );
    let mut rows = Vec::new();
    for (transform, tname) in TRANSFORMS {
        for &codec in codecs {
            let what = format!("layer {k}, {tname}, {}", codec.name());
            let (packed, encode_s, decode_s) = measure(&units, transform, codec, rounds, &what);
            rows.push((format!("{tname} {}", codec.name()), packed));
            let new_record = record - raw + packed;
            println!(
                "  {:<13} {:<8} {:>14} {:>8.3} {:>8.3} {:>10.0} {:>10.0} {:>8.2}",
                tname,
                codec.name(),
                packed,
                new_record as f64 / record as f64,
                packed as f64 / raw as f64,
                mb_s(encode_s),
                mb_s(decode_s),
                decode_s / today_s
            );
        }
    }
    println!("  bytes a value by byte plane, 7 (sign, exponent) to 0, each plane by zstd-3 alone:");
    for (transform, tname) in &TRANSFORMS[1..] {
        let sizes = plane_sizes(&units, *transform);
        let text: Vec<String> = sizes.iter().map(|b| format!("{b:.3}")).collect();
        let total: f64 = sizes.iter().sum();
        println!("  {tname:<13} {} = {total:.3}", text.join(" "));
    }
    Ok(LayerResult {
        k,
        layer_bytes,
        ratios: rows
            .iter()
            .map(|(name, packed)| (name.clone(), (record - raw + packed) as f64 / record as f64))
            .collect(),
        tables_saved,
    })
}

/// The db's data files if each measured layer shrank by its sample's ratio and the
/// others stayed as they are, for the best few transforms and codecs.
fn db_estimate(store: &Store, results: &[LayerResult]) -> Result<(), String> {
    let Some(first) = results.first() else {
        return Ok(());
    };
    let mut total = 0;
    for k in 1..=store.n() {
        total += layer_bytes(store, k)?;
    }
    let measured: u64 = results.iter().map(|r| r.layer_bytes).sum();
    let layers: Vec<String> = results.iter().map(|r| r.k.to_string()).collect();
    println!();
    println!(
        "the db's records: {:.1} MB, of which layers {} {:.1} MB ({:.1} %); the whole db's size with each measured layer at its sample's ratio (and with its window tables by zstd-3 too):",
        total as f64 / 1e6,
        layers.join(","),
        measured as f64 / 1e6,
        100.0 * measured as f64 / total as f64
    );
    let saved: f64 = results
        .iter()
        .map(|r| r.layer_bytes as f64 * r.tables_saved)
        .sum();
    let mut estimates: Vec<(f64, &str)> = first
        .ratios
        .iter()
        .enumerate()
        .map(|(i, (name, _))| {
            let shrunk: f64 = results
                .iter()
                .map(|r| r.layer_bytes as f64 * r.ratios[i].1)
                .sum();
            (
                ((total - measured) as f64 + shrunk) / total as f64,
                name.as_str(),
            )
        })
        .collect();
    estimates.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (ratio, name) in estimates {
        let both = ratio - saved / total as f64;
        println!("  {name:<24} {ratio:.3}x ({both:.3}x)");
    }
    Ok(())
}
