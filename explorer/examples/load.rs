//! Load test of a running `gops serve`: many concurrent clients, each on its own
//! keep-alive HTTP/1.1 connection, fire random valid `/api/value` and `/api/strategy`
//! lookups (random hands, prizes and upcard of a random layer; half of each) for a while
//! and the lookups per second, latencies and errors are printed. Plain threads and
//! sockets: no HTTP client crate. See explorer/README.md for the measured figures.
//!
//! ```sh
//! cargo run --release -p gops-explorer --example load -- --url http://127.0.0.1:7800 \
//!     [--clients 64] [--seconds 20] [--warmup 3] [--token T] [--seed S]
//! ```

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

struct Options {
    address: String,
    clients: usize,
    seconds: f64,
    warmup: f64,
    token: Option<String>,
    seed: u64,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        address: "127.0.0.1:7800".into(),
        clients: 64,
        seconds: 20.0,
        warmup: 3.0,
        token: None,
        seed: 1,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        let number = |text: String| {
            text.parse::<f64>()
                .map_err(|_| format!("{flag}: '{text}' is not a number"))
        };
        match flag.as_str() {
            "--url" => {
                let url = value()?;
                let rest = url
                    .strip_prefix("http://")
                    .ok_or("--url must start with http://")?;
                options.address = rest.trim_end_matches('/').to_string();
            }
            "--clients" => options.clients = number(value()?)?.max(1.0) as usize,
            "--seconds" => options.seconds = number(value()?)?,
            "--warmup" => options.warmup = number(value()?)?,
            "--token" => options.token = Some(value()?),
            "--seed" => options.seed = number(value()?)? as u64,
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(options)
}

/// One keep-alive connection; reconnects when the server closes it.
struct Client {
    address: String,
    auth: String,
    stream: Option<BufReader<TcpStream>>,
    reconnects: u64,
}

impl Client {
    fn new(address: &str, token: Option<&str>) -> Client {
        Client {
            address: address.to_string(),
            auth: token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n")),
            stream: None,
            reconnects: 0,
        }
    }

    /// GET `path`: the status and the body; one retry on a fresh connection when the
    /// kept one was closed.
    fn get(&mut self, path: &str) -> std::io::Result<(u16, Vec<u8>)> {
        match self.try_get(path) {
            Ok(answer) => Ok(answer),
            Err(_) => {
                self.stream = None;
                self.reconnects += 1;
                self.try_get(path)
            }
        }
    }

    fn try_get(&mut self, path: &str) -> std::io::Result<(u16, Vec<u8>)> {
        if self.stream.is_none() {
            let stream = TcpStream::connect(&self.address)?;
            stream.set_nodelay(true)?;
            stream.set_read_timeout(Some(Duration::from_secs(30)))?;
            self.stream = Some(BufReader::new(stream));
        }
        let reader = self.stream.as_mut().expect("connected");
        write!(
            reader.get_mut(),
            "GET {path} HTTP/1.1\r\nHost: {}\r\n{}\r\n",
            self.address,
            self.auth
        )?;
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or(std::io::ErrorKind::InvalidData)?;
        let (mut length, mut close) = (0usize, false);
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let lower = header.to_ascii_lowercase();
            if let Some(value) = lower.strip_prefix("content-length:") {
                length = value
                    .trim()
                    .parse()
                    .map_err(|_| std::io::ErrorKind::InvalidData)?;
            }
            close |= lower == "connection: close";
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        if close {
            self.stream = None;
        }
        Ok((status, body))
    }
}

fn list(cards: &[u8]) -> String {
    cards
        .iter()
        .map(u8::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// A random valid lookup of the `n`-card game: `/api/value` or `/api/strategy`.
fn random_lookup(rng: &mut impl Rng, n: u8, win: bool) -> (bool, String) {
    let k = rng.random_range(1..=n) as usize;
    let mut deck: Vec<u8> = (1..=n).collect();
    let mut pick = |rng: &mut dyn rand::RngCore| {
        deck.shuffle(rng);
        let mut cards = deck[..k].to_vec();
        cards.sort_unstable();
        cards
    };
    let (a, b, prizes) = (pick(rng), pick(rng), pick(rng));
    let diff = if win {
        let played: i64 =
            (1..=i64::from(n)).sum::<i64>() - prizes.iter().map(|&c| i64::from(c)).sum::<i64>();
        rng.random_range(-played..=played)
    } else {
        0
    };
    let state = format!(
        "a={}&b={}&prizes={}&diff={diff}",
        list(&a),
        list(&b),
        list(&prizes)
    );
    if rng.random_bool(0.5) {
        (false, format!("/api/value?{state}"))
    } else {
        let upcard = prizes[rng.random_range(0..k)];
        (true, format!("/api/strategy?{state}&upcard={upcard}"))
    }
}

#[derive(Default)]
struct Tally {
    values: u64,
    strategies: u64,
    errors: u64,
    first_error: Option<String>,
    reconnects: u64,
    latencies_us: Vec<u32>,
}

fn main() {
    let options = match options() {
        Ok(options) => options,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let mut probe = Client::new(&options.address, options.token.as_deref());
    let game: serde_json::Value = match probe.get("/api/game") {
        Ok((200, body)) => serde_json::from_slice(&body).expect("/api/game answers JSON"),
        Ok((status, body)) => {
            eprintln!(
                "error: /api/game answered {status}: {}",
                String::from_utf8_lossy(&body).trim()
            );
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("error: cannot reach http://{}: {e}", options.address);
            std::process::exit(1);
        }
    };
    let n = game["n"].as_u64().expect("n") as u8;
    let win = game["objective"] == "win";
    println!(
        "{} clients, {} s (after {} s of warm-up), against http://{} ({n}-card {})",
        options.clients, options.seconds, options.warmup, options.address, game["objective"]
    );

    let started = Instant::now();
    let counting_from = started + Duration::from_secs_f64(options.warmup);
    let until = counting_from + Duration::from_secs_f64(options.seconds);
    let failed = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..options.clients)
        .map(|i| {
            let (address, token) = (options.address.clone(), options.token.clone());
            let seed = options.seed.wrapping_mul(1_000_003).wrapping_add(i as u64);
            let failed = Arc::clone(&failed);
            std::thread::spawn(move || {
                let mut rng = StdRng::seed_from_u64(seed);
                let mut client = Client::new(&address, token.as_deref());
                let mut tally = Tally::default();
                loop {
                    let now = Instant::now();
                    if now >= until || failed.load(Ordering::Relaxed) {
                        break;
                    }
                    let (strategy, path) = random_lookup(&mut rng, n, win);
                    let answer = client.get(&path);
                    if now < counting_from {
                        continue;
                    }
                    match answer {
                        Ok((200, _)) => {
                            tally
                                .latencies_us
                                .push(now.elapsed().as_micros().min(u128::from(u32::MAX)) as u32);
                            if strategy {
                                tally.strategies += 1;
                            } else {
                                tally.values += 1;
                            }
                        }
                        Ok((status, body)) => {
                            tally.errors += 1;
                            tally.first_error.get_or_insert_with(|| {
                                format!(
                                    "{path}: {status} {}",
                                    String::from_utf8_lossy(&body).trim()
                                )
                            });
                        }
                        Err(e) => {
                            tally.errors += 1;
                            tally
                                .first_error
                                .get_or_insert_with(|| format!("{path}: {e}"));
                            if tally.errors > 1000 {
                                failed.store(true, Ordering::Relaxed);
                            }
                        }
                    }
                }
                tally.reconnects = client.reconnects;
                tally
            })
        })
        .collect();
    let mut total = Tally::default();
    for worker in workers {
        let tally = worker.join().expect("a client thread");
        total.values += tally.values;
        total.strategies += tally.strategies;
        total.errors += tally.errors;
        total.reconnects += tally.reconnects;
        total.latencies_us.extend(tally.latencies_us);
        if total.first_error.is_none() {
            total.first_error = tally.first_error;
        }
    }
    let elapsed = Instant::now()
        .min(until)
        .saturating_duration_since(counting_from)
        .as_secs_f64();
    let lookups = total.values + total.strategies;
    total.latencies_us.sort_unstable();
    let quantile = |q: f64| {
        let l = &total.latencies_us;
        if l.is_empty() {
            0.0
        } else {
            f64::from(l[((l.len() - 1) as f64 * q) as usize]) / 1000.0
        }
    };
    println!(
        "{lookups} lookups in {elapsed:.1} s: {:.0} lookups/s ({} value, {} strategy); latency ms p50 {:.2}, p90 {:.2}, p99 {:.2}, max {:.2}; {} errors, {} reconnects",
        lookups as f64 / elapsed.max(1e-9),
        total.values,
        total.strategies,
        quantile(0.5),
        quantile(0.9),
        quantile(0.99),
        quantile(1.0),
        total.errors,
        total.reconnects
    );
    if let Some(error) = total.first_error {
        println!("first error: {error}");
    }
    if total.errors > 0 {
        std::process::exit(1);
    }
}
