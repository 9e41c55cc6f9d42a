//! Solving on demand: how a book that keeps only its game's top layers ([`crate::book`])
//! answers for a state below its lowest layer. The state's subtree is
//! solved from the last round up ([`gops_common::subtree`]) with the db's engine and
//! arithmetic, so every value and strategy is the full db's, bit for bit.
//!
//! One [`OnDemand`] serves every reader of its book, from any number of threads:
//!
//! * solved subtrees stay in memory, within a byte budget; the least recently used go
//!   first when a new one needs the room;
//! * a state that a solved subtree holds is answered from it; one that a subtree being
//!   solved holds waits for that solve rather than starting its own, so queries for the
//!   same subtree at the same time share one solve;
//! * a subtree estimated over the limit of games, or over the budget of bytes, is refused
//!   before any work, with the estimate, the limit, and what to do instead in the words
//!   of the front end that set the limits ([`LimitNames`]);
//! * an observer hears each solve start, advance and end (the command line's progress
//!   bars and log lines), and [`OnDemand::under_way`] lists the solves running (the
//!   explorer's progress view).
//!
//! Its limits and observer are given when the book is opened ([`crate::book::ReadOptions`])
//! and never change after.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use gops_common::CardSet;
use gops_common::engine::{EngineError, LayerEngine};
use gops_common::kernel::PivotStart;
use gops_common::layout::Layouts;
use gops_common::objective::Objective;
use gops_common::prizes::prize_rank;
use gops_common::slice::Slice;
use gops_common::state::GameState;
use gops_common::subtree::{
    SolvedSubtree, SubtreeEstimate, SubtreePlan, SubtreeRoot, SubtreeShape,
};
use gops_common::sync::lock;

use crate::book::ReadOptions;

/// The default largest subtree solved on demand, in matrix games (estimated, at most):
/// every state of the shipped books (the 13-card win book keeps layers 11-13, and its
/// largest subtree below them, of a state with 10 cards left, is estimated below this).
pub const DEFAULT_MAX_GAMES: u64 = 2_000_000_000;

/// The default memory for solved subtrees: 4 GiB.
pub const DEFAULT_BUDGET_BYTES: u64 = 4 << 30;

/// How a front end names the two limits of solving on demand, for the advice of a
/// refusal: what its user can raise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LimitNames {
    /// The limit of matrix games ([`OnDemandLimits::max_games`]).
    pub games: &'static str,
    /// The memory budget ([`OnDemandLimits::memory_bytes`]).
    pub memory: &'static str,
}

impl LimitNames {
    /// The command line's flags (`gops value`, `serve`, `arena`, `verify`, ...).
    pub const FLAGS: LimitNames = LimitNames {
        games: "--max-on-demand-games",
        memory: "--memory-mb",
    };
}

/// What a book may solve on demand, and what its user calls those limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OnDemandLimits {
    /// The largest subtree solved, in estimated matrix games.
    pub max_games: u64,
    /// The memory kept for solved subtrees (and the largest one solved).
    pub memory_bytes: u64,
    pub names: LimitNames,
}

impl Default for OnDemandLimits {
    fn default() -> OnDemandLimits {
        OnDemandLimits {
            max_games: DEFAULT_MAX_GAMES,
            memory_bytes: DEFAULT_BUDGET_BYTES,
            names: LimitNames::FLAGS,
        }
    }
}

/// Why a state could not be answered on demand. A refusal carries the estimate and the
/// limit, and words its advice with the names the front end gave its limits.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OnDemandError {
    #[error(
        "the subtree of this state ({k} cards left) is estimated at up to {games} matrix games, over the limit of {limit}: ask a state with fewer cards left, raise {}, use a book that keeps more layers (`gops book --from-layer {k}` of a full db), or solve the whole game (`gops solve`)",
        .names.games
    )]
    OverLimit {
        k: u8,
        games: u64,
        limit: u64,
        names: LimitNames,
    },
    #[error(
        "the subtree of this state ({k} cards left) may need up to {} MB of memory, over the budget of {} MB: raise {}, use a book that keeps more layers, or solve the whole game",
        .bytes >> 20,
        .budget >> 20,
        .names.memory
    )]
    OverBudget {
        k: u8,
        bytes: u64,
        budget: u64,
        names: LimitNames,
    },
    #[error("solving on demand failed: {0}")]
    Engine(#[from] EngineError),
}

/// What an observer of on-demand solves hears.
pub trait SolveObserver: Send + Sync {
    /// A subtree's solve starts.
    fn started(&self, root: &SubtreeRoot, estimate: &SubtreeEstimate);
    /// Estimated games done so far, and in all.
    fn advanced(&self, root: &SubtreeRoot, done: u64, all: u64);
    /// It ended: the games solved and the time taken (or the error).
    fn finished(&self, root: &SubtreeRoot, outcome: Result<(u64, Duration), &OnDemandError>);
}

/// What the solver keeps: the solved subtrees, most recently used last, and those
/// being solved.
#[derive(Default)]
struct Kept {
    solved: Vec<Arc<SolvedSubtree>>,
    running: Vec<Running>,
    bytes: u64,
}

/// A solve under way: its shape, when it started and how far it has got (updated by the
/// solving thread without the lock on [`Kept`]).
struct Running {
    shape: Arc<SubtreeShape>,
    started: Instant,
    progress: Arc<Progress>,
}

/// Estimated matrix games done, and in all.
#[derive(Default)]
struct Progress {
    done: AtomicU64,
    total: AtomicU64,
}

/// What [`OnDemand::under_way`] says of one solve under way.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SolveUnderWay {
    pub root: SubtreeRoot,
    /// Estimated matrix games done so far, and in all.
    pub done: u64,
    pub total: u64,
    pub elapsed: Duration,
}

/// A test hook: every on-demand value of a subtree's root changed in its lowest bit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fault {
    #[default]
    None,
    FlipRootValues,
}

/// The on-demand solver of one book.
pub struct OnDemand {
    objective: Objective,
    start: PivotStart,
    /// The book's lowest layer: states of fewer cards are solved on demand.
    from_layer: u8,
    layouts: Arc<Layouts>,
    limits: OnDemandLimits,
    kept: Mutex<Kept>,
    /// Signalled whenever a solve ends.
    ended: Condvar,
    solves: AtomicU64,
    observer: Option<Arc<dyn SolveObserver>>,
    fault: Fault,
}

impl OnDemand {
    /// The solver of a book of the game `layouts` lays out, keeping layers
    /// `from_layer..=n`, with the limits, observer and fault of `options`.
    pub fn new(
        objective: Objective,
        start: PivotStart,
        from_layer: u8,
        layouts: Arc<Layouts>,
        options: &ReadOptions,
    ) -> OnDemand {
        OnDemand {
            objective,
            start,
            from_layer,
            layouts,
            limits: options.limits,
            kept: Mutex::new(Kept::default()),
            ended: Condvar::new(),
            solves: AtomicU64::new(0),
            observer: options.observer.clone(),
            fault: options.fault,
        }
    }

    pub fn from_layer(&self) -> u8 {
        self.from_layer
    }

    /// Subtrees solved since this solver was made.
    pub fn solves(&self) -> u64 {
        self.solves.load(Ordering::Relaxed)
    }

    /// The solves under way, oldest first.
    pub fn under_way(&self) -> Vec<SolveUnderWay> {
        lock(&self.kept)
            .running
            .iter()
            .map(|r| SolveUnderWay {
                root: r.shape.root,
                done: r.progress.done.load(Ordering::Relaxed),
                total: r.progress.total.load(Ordering::Relaxed),
                elapsed: r.started.elapsed(),
            })
            .collect()
    }

    /// Bytes the solved subtrees kept take now.
    pub fn kept_bytes(&self) -> u64 {
        lock(&self.kept).bytes
    }

    /// Whether the value of a state with `k` cards left is solved on demand.
    pub fn answers_value(&self, k: u8) -> bool {
        k < self.from_layer
    }

    /// Whether the game of a state with `k` cards left after an upcard is solved on
    /// demand (it reads layer `k - 1`).
    pub fn answers_revealed(&self, k: u8) -> bool {
        k >= 1 && k - 1 < self.from_layer
    }

    /// What a subtree of `state` would cost, without solving it.
    pub fn estimate(&self, state: &GameState) -> SubtreeEstimate {
        self.plan(state).estimate
    }

    /// What the subtree of the game of `state` after `upcard` would cost (for a state of
    /// the book's lowest layer; below it, the state's whole subtree), without solving it.
    pub fn estimate_after(&self, state: &GameState, upcard: u8) -> SubtreeEstimate {
        self.plan_of(self.root_after(state, upcard)).estimate
    }

    /// Whether asking for `state` (with `upcard`, the game after it) would be refused
    /// over the limits, without solving anything: the refusal it would get.
    pub fn refusal(&self, state: &GameState, upcard: Option<u8>) -> Option<OnDemandError> {
        let plan = match upcard {
            Some(u) => self.plan_of(self.root_after(state, u)),
            None => self.plan(state),
        };
        self.check_limits(&plan).err()
    }

    fn plan(&self, state: &GameState) -> SubtreePlan {
        self.plan_of(self.root_of(state))
    }

    fn plan_of(&self, root: SubtreeRoot) -> SubtreePlan {
        SubtreePlan::new(self.objective, self.start, root, &self.layouts)
    }

    /// The value for A of `state` (reachable; checked by the caller).
    pub fn value(&self, state: &GameState) -> Result<f64, OnDemandError> {
        let subtree = self.subtree(state)?;
        let value = subtree.value(state).expect("the subtree holds its state");
        let flip = self.fault == Fault::FlipRootValues && subtree.shape.root == self.root_of(state);
        Ok(if flip {
            f64::from_bits(value.to_bits() ^ 1)
        } else {
            value
        })
    }

    fn root_of(&self, state: &GameState) -> SubtreeRoot {
        SubtreeRoot::of(state, self.objective, &self.layouts.get(state.k()))
    }

    /// A solved subtree holding `state`: one kept, the one being solved that holds it
    /// (waited for), or `state`'s own, solved now. Its plan is made outside the lock,
    /// then the lock is taken again to look once more (another thread may have started
    /// a subtree that holds it meanwhile).
    pub fn subtree(&self, state: &GameState) -> Result<Arc<SolvedSubtree>, OnDemandError> {
        self.find_or_solve(|shape| shape.holds(state), || self.plan(state))
    }

    /// A solved subtree holding what the game of `state` after `upcard` reads (the
    /// slice of layer k - 1 after it). A state of the book's lowest layer gets the
    /// subtree of that game alone (its own value is stored): about 1/k of its whole
    /// subtree, which for the 13-card win book is the difference between 2.7e8 games
    /// and 2.9e9.
    pub fn subtree_after(
        &self,
        state: &GameState,
        upcard: u8,
    ) -> Result<Arc<SolvedSubtree>, OnDemandError> {
        let root = self.root_after(state, upcard);
        self.find_or_solve(
            |shape| shape.holds_game_after(state, upcard),
            || self.plan_of(root),
        )
    }

    /// The root of the subtree [`OnDemand::subtree_after`] solves: below the book the
    /// state's whole subtree (its value kept too); in the book's lowest layer, the
    /// subtree of that one game.
    fn root_after(&self, state: &GameState, upcard: u8) -> SubtreeRoot {
        if self.answers_value(state.k()) {
            self.root_of(state)
        } else {
            self.root_of(state).after(upcard)
        }
    }

    /// The value for A of `state`, a state of the book's lowest layer (whose value the
    /// book stores), solved again as `gops verify` does, and the largest certificate gap
    /// of the games solved. From the state's whole subtree when that is within the
    /// limits; otherwise from each upcard's game: the subtree of each
    /// ([`OnDemand::subtree_after`], about 1/k of the whole), then the state's own slice
    /// from the slices they read, computed as the whole subtree's solve computes its
    /// root layer, so the bits are the same.
    pub fn resolve_stored(&self, state: &GameState) -> Result<(f64, f64), OnDemandError> {
        let whole = self.plan(state);
        if state.k() == 0 || self.check_limits(&whole).is_ok() {
            let value = self.value(state)?;
            return Ok((value, self.subtree(state)?.max_gap));
        }
        let k = state.k();
        let mut below: Vec<(CardSet, Slice)> = Vec::with_capacity(usize::from(k));
        let mut max_gap = 0.0f64;
        for upcard in state.prizes.iter() {
            let subtree = self.subtree_after(state, upcard)?;
            let (_, slice) = subtree
                .below(state, upcard)
                .expect("the subtree of the game after an upcard holds what it reads");
            below.push((state.prizes.without(upcard), slice.clone()));
            max_gap = max_gap.max(subtree.max_gap);
        }
        // every subtree of the state's games lays out the layers the state reaches, as its
        // whole subtree does
        let shape = &whole.shape;
        let engine = LayerEngine::within_subtree(
            self.objective,
            shape.layout(k).clone(),
            shape.layout(k - 1).clone(),
            (shape.root.prizes, shape.root.diff),
        )
        .with_start(self.start);
        let dependency = |prizes: CardSet| -> &Slice {
            &below
                .iter()
                .find(|(p, _)| *p == prizes)
                .expect("the root's slice reads the slices after its upcards")
                .1
        };
        let solved = engine.solve_slice(prize_rank(state.prizes), &dependency)?;
        let value = state.value_in(self.objective, shape.layout(k), &solved.slice);
        let value = if self.fault == Fault::FlipRootValues {
            f64::from_bits(value.to_bits() ^ 1)
        } else {
            value
        };
        Ok((value, max_gap.max(solved.max_gap)))
    }

    /// A solved subtree whose shape `covers` the question: one kept, one being solved
    /// (waited for), or the one `make_plan` makes, solved now.
    fn find_or_solve(
        &self,
        covers: impl Fn(&SubtreeShape) -> bool,
        make_plan: impl Fn() -> SubtreePlan,
    ) -> Result<Arc<SolvedSubtree>, OnDemandError> {
        let mut plan: Option<SubtreePlan> = None;
        let mut kept = lock(&self.kept);
        let plan = loop {
            if let Some(at) = kept.solved.iter().position(|s| covers(&s.shape)) {
                let subtree = kept.solved.remove(at);
                kept.solved.push(Arc::clone(&subtree));
                return Ok(subtree);
            }
            if kept.running.iter().any(|r| covers(&r.shape)) {
                kept = self.ended.wait(kept).unwrap_or_else(|e| e.into_inner());
                continue;
            }
            match plan.take() {
                Some(plan) => break plan,
                None => {
                    drop(kept);
                    let made = make_plan();
                    self.check_limits(&made)?;
                    plan = Some(made);
                    kept = lock(&self.kept);
                }
            }
        };
        let progress = Arc::new(Progress::default());
        progress.total.store(plan.estimate.games, Ordering::Relaxed);
        kept.running.push(Running {
            shape: Arc::clone(&plan.shape),
            started: Instant::now(),
            progress: Arc::clone(&progress),
        });
        drop(kept);
        let solved = self.solve(&plan, &progress);
        let mut kept = lock(&self.kept);
        kept.running.retain(|r| !Arc::ptr_eq(&r.shape, &plan.shape));
        let result = solved.map(|subtree| {
            let subtree = Arc::new(subtree);
            self.keep(&mut kept, Arc::clone(&subtree));
            subtree
        });
        drop(kept);
        self.ended.notify_all();
        Ok(result?)
    }

    fn check_limits(&self, plan: &SubtreePlan) -> Result<(), OnDemandError> {
        let (k, estimate, limits) = (plan.shape.root.k(), plan.estimate, self.limits);
        if estimate.games > limits.max_games {
            return Err(OnDemandError::OverLimit {
                k,
                games: estimate.games,
                limit: limits.max_games,
                names: limits.names,
            });
        }
        if estimate.bytes > limits.memory_bytes {
            return Err(OnDemandError::OverBudget {
                k,
                bytes: estimate.bytes,
                budget: limits.memory_bytes,
                names: limits.names,
            });
        }
        Ok(())
    }

    /// Solves `plan`, telling the observer and `progress`.
    fn solve(&self, plan: &SubtreePlan, progress: &Progress) -> Result<SolvedSubtree, EngineError> {
        let observer = self.observer.as_ref();
        let root = plan.shape.root;
        if let Some(o) = &observer {
            o.started(&root, &plan.estimate);
        }
        let started = Instant::now();
        let solved = plan.solve(&|so_far, all| {
            progress.done.store(so_far, Ordering::Relaxed);
            progress.total.store(all, Ordering::Relaxed);
            if let Some(o) = &observer {
                o.advanced(&root, so_far, all);
            }
        });
        self.solves.fetch_add(1, Ordering::Relaxed);
        if let Some(o) = &observer {
            match &solved {
                Ok(s) => o.finished(&root, Ok((s.games, started.elapsed()))),
                Err(e) => o.finished(&root, Err(&OnDemandError::Engine(e.clone()))),
            }
        }
        solved
    }

    /// Keeps `subtree`, the least recently used ones dropped to make room.
    fn keep(&self, kept: &mut Kept, subtree: Arc<SolvedSubtree>) {
        let budget = self.limits.memory_bytes;
        let bytes = subtree.bytes as u64;
        while !kept.solved.is_empty() && kept.bytes + bytes > budget {
            let old = kept.solved.remove(0);
            kept.bytes -= old.bytes as u64;
        }
        kept.bytes += bytes;
        kept.solved.push(subtree);
    }
}
