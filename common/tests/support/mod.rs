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
