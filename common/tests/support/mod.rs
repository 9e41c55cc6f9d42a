//! Independent references for the solver's tests: a general LP crate (microlp) for
//! matrix games, and a brute-force recursion over raw `(A, B, C, d)` states with no
//! reduction of any kind.

#![allow(dead_code)]

use std::collections::HashMap;

use microlp::{ComparisonOp, OptimizationDirection, Problem, SolveOutcome};

/// The value of the zero-sum game `m` (rows x cols, payoff to the row player) by the
/// textbook LP: maximise v subject to sum_i x_i M[i][j] >= v for all j, x a distribution.
pub fn lp_game_value(m: &[f64], rows: usize, cols: usize) -> f64 {
    let mut problem = Problem::new(OptimizationDirection::Maximize);
    let x: Vec<_> = (0..rows)
        .map(|_| problem.add_var(0.0, (0.0, 1.0)))
        .collect();
    let v = problem.add_var(1.0, (f64::NEG_INFINITY, f64::INFINITY));
    for j in 0..cols {
        let mut terms: Vec<(microlp::Variable, f64)> =
            (0..rows).map(|i| (x[i], m[i * cols + j])).collect();
        terms.push((v, -1.0));
        problem.add_constraint(terms, ComparisonOp::Ge, 0.0);
    }
    problem.add_constraint(
        x.iter().map(|&xi| (xi, 1.0)).collect::<Vec<_>>(),
        ComparisonOp::Eq,
        1.0,
    );
    match problem
        .solve()
        .expect("the game LP is feasible and bounded")
    {
        SolveOutcome::Solution(solution) => solution.objective(),
        SolveOutcome::Interrupted(_) => panic!("the LP reference was interrupted"),
    }
}

/// Which objective the brute force plays.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum BruteObjective {
    Points,
    Win,
}

/// Memoised recursion on raw states: hands and prizes as bitmasks of cards 1..=n.
pub struct BruteForce {
    objective: BruteObjective,
    memo: HashMap<(u32, u32, u32, i32), f64>,
}

fn cards(mask: u32) -> Vec<i32> {
    (0..32)
        .filter(|b| mask & (1 << b) != 0)
        .map(|b| b + 1)
        .collect()
}

impl BruteForce {
    pub fn new(objective: BruteObjective) -> Self {
        BruteForce {
            objective,
            memo: HashMap::new(),
        }
    }

    /// The value for A of the raw state, before the next prize is turned up.
    pub fn value(&mut self, a: u32, b: u32, c: u32, d: i32) -> f64 {
        let d = if self.objective == BruteObjective::Points {
            0
        } else {
            d
        };
        if c == 0 {
            return match self.objective {
                BruteObjective::Points => 0.0,
                BruteObjective::Win => f64::from(d.signum()),
            };
        }
        if let Some(&v) = self.memo.get(&(a, b, c, d)) {
            return v;
        }
        let (hand_a, hand_b, prizes) = (cards(a), cards(b), cards(c));
        let k = prizes.len();
        let mut total = 0.0;
        for &prize in &prizes {
            let mut m = Vec::with_capacity(k * k);
            for &x in &hand_a {
                for &y in &hand_b {
                    let s = (x - y).signum();
                    let (ra, rb, rc) = (
                        a & !(1 << (x - 1)),
                        b & !(1 << (y - 1)),
                        c & !(1 << (prize - 1)),
                    );
                    m.push(match self.objective {
                        BruteObjective::Points => f64::from(prize * s) + self.value(ra, rb, rc, 0),
                        BruteObjective::Win => self.value(ra, rb, rc, d + prize * s),
                    });
                }
            }
            total += lp_game_value(&m, k, k);
        }
        let v = total / k as f64;
        self.memo.insert((a, b, c, d), v);
        v
    }
}

/// All k-subsets of 1..=n as bitmasks.
pub fn subsets(n: u8, k: usize) -> Vec<u32> {
    (0u32..1 << n)
        .filter(|m| m.count_ones() as usize == k)
        .collect()
}

/// A fixture line of ../shared/fixtures (copied into tests/fixtures).
pub struct FixtureState {
    pub n: u8,
    pub objective: String,
    pub a: Vec<u8>,
    pub b: Vec<u8>,
    pub c: Vec<u8>,
    pub d: i32,
    pub value: f64,
}

pub fn fixture_path(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(name)
}

pub fn read_fixture_states(name: &str) -> Vec<FixtureState> {
    let text = std::fs::read_to_string(fixture_path(name)).expect("fixture file");
    let list = |v: &serde_json::Value| -> Vec<u8> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap() as u8)
            .collect()
    };
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).expect("fixture json");
            FixtureState {
                n: v["n"].as_u64().unwrap() as u8,
                objective: v["objective"].as_str().unwrap().to_string(),
                a: list(&v["a"]),
                b: list(&v["b"]),
                c: list(&v["c"]),
                d: v["d"].as_i64().unwrap() as i32,
                value: v["value"].as_f64().unwrap(),
            }
        })
        .collect()
}

/// A matrix game (row-major payoffs, rows, cols).
pub type Game = (Vec<f64>, usize, usize);

/// `count` matrix games of layer `k` as a solve of `solution`'s game meets them: random
/// prize sets, upcards, canonical patterns and (for `win`) live score differences;
/// alternately the engine's game (repeated moves collapsed) and the full `k x k` game.
pub fn real_games(
    solution: &gops_common::solution::InMemorySolution,
    k: u8,
    count: usize,
    rng: &mut rand::rngs::StdRng,
) -> Vec<Game> {
    use gops_common::engine::{LayerEngine, fill_matrix};
    use gops_common::layout::full_game;
    use gops_common::prizes::{prize_rank, prize_unrank};
    use rand::Rng;
    let engine = LayerEngine::new(solution.n, k, solution.objective);
    let slices = solution.layers[k as usize].len() as u32;
    let kk = k as usize;
    let mut games = Vec::with_capacity(count);
    while games.len() < count {
        let prizes = prize_unrank(rng.random_range(0..slices), k);
        let upcard = prizes.iter().nth(rng.random_range(0..kk)).unwrap();
        let below = &solution.layers[kk - 1][prize_rank(prizes.without(upcard)) as usize];
        let range = solution.objective.diff_range(prizes);
        let d = rng.random_range(-range..=range);
        let p = rng.random_range(0..engine.layout.canonical_count());
        let (rows, cols, children, signs) = if games.len() % 2 == 0 {
            let (rows, cols, children, signs) = engine.children.of(p);
            (rows, cols, children.to_vec(), signs.to_vec())
        } else {
            let (children, signs) = full_game(engine.layout.canonical[p], &engine.below);
            (kk, kk, children, signs)
        };
        let mut m = vec![0.0; rows * cols];
        let objective = solution.objective;
        fill_matrix(objective, &mut m, &children, &signs, d, upcard, below);
        games.push((m, rows, cols));
    }
    games
}

/// `count` GOPS-shaped `k x k` games for sizes no small solved game reaches: a prize
/// times the comparison of two random hands from 1..=16, plus child values in +-30.
pub fn synthetic_games(k: usize, count: usize, rng: &mut rand::rngs::StdRng) -> Vec<Game> {
    use rand::Rng;
    use rand::seq::index::sample;
    (0..count)
        .map(|_| {
            let hand = |rng: &mut rand::rngs::StdRng| {
                let mut c: Vec<i32> = sample(rng, 16, k).into_iter().map(|c| c as i32).collect();
                c.sort();
                c
            };
            let (a, b) = (hand(rng), hand(rng));
            let prize = rng.random_range(1..=16);
            let m = a
                .iter()
                .flat_map(|x| b.iter().map(move |y| (x - y).signum()))
                .map(|s| f64::from(prize * s) + rng.random_range(-30.0..30.0))
                .collect();
            (m, k, k)
        })
        .collect()
}
