//! The matrix-game kernel (DESIGN §4): the value and optimal mixed strategies of a small
//! dense zero-sum game, with a certificate.
//!
//! 1. A saddle-point check finds pure equilibria in O(rows x cols).
//! 2. Otherwise the game, rescaled to entries in [1, 2], is solved by the condensed-tableau
//!    simplex of game theory texts (one (rows+1) x (cols+1) tableau, labels exchanged on
//!    each pivot), with Dantzig's rule (after a first pivot on B's minimax column, see
//!    [`PivotStart`]) and, should that fail to converge or certify, a restart under
//!    Bland's rule, which cannot cycle; should that fail to certify too (near-equal
//!    rows or columns that f64 pivots cannot order), the simplex in exact rational
//!    arithmetic ([`exact`]).
//! 3. The certificate is the gap `max_i (M y)_i - min_j (x^T M)_j`, computed on the
//!    original matrix; the value is the midpoint of those two bounds, which enclose the
//!    true value.
//!
//! Every buffer is inline in [`GameSolver`]: repeated solves allocate nothing, and the
//! same inputs give bit-identical outputs. [`GameSolver::solve_pair`] solves two games of
//! the same size with their pivots interleaved (each game's arithmetic unchanged, so the
//! same bits as one by one): a pivot's chain of choices (entering column, division,
//! ratio test) leaves the core idle for cycles that the other game's pivot fills.
//!
//! Layout: this file holds the solver's driver (the entry points, the fallbacks'
//! order, reading the strategies); [`saddle`] the saddle-point check; [`simplex`] the
//! pivot loop, one game's and two games' interleaved; [`lanes`] the two implementations
//! of the pivot and the ratio test, a portable one and an AVX2 one, which perform the
//! same IEEE operations in the same order (no fused multiply-add anywhere) and so give
//! the same bits; [`polish`] the recomputation of strategies from the final basis;
//! [`exact`] the rational fallback; [`certificate`] the certificate's bounds. The AVX2
//! path is chosen at run time when the CPU has AVX2; the whole driver is compiled
//! twice, once per path.

#![expect(
    unsafe_code,
    reason = "the AVX2 entry points: called only after the CPU was found to have AVX2"
)]

mod certificate;
mod exact;
mod lanes;
mod polish;
mod saddle;
mod simplex;

#[cfg(target_arch = "x86_64")]
use crate::cpu::Avx2;
pub use certificate::certificate_bounds;
use certificate::{non_negative, normalise};
use lanes::{Isa, Portable};
use simplex::solve_pair;

/// The largest number of strategies per player.
pub const MAX_STRATEGIES: usize = 16;

/// Simplex solutions whose gap exceeds this times the scale are polished.
const POLISH_BELOW: f64 = 1e-13;

/// A game is certified when its gap is at most this times `max(1, max |M|)`.
pub const GAP_TOLERANCE: f64 = 1e-9;

/// f64 lanes of a vector (AVX2: 4). Tableau columns are padded to whole vectors.
const LANES: usize = 4;
/// Tableau column length: the rows + 1 used entries padded to a multiple of [`LANES`].
const HEIGHT: usize = (MAX_STRATEGIES + 1).div_ceil(LANES) * LANES;
/// Vectors per tableau column.
const BLOCKS: usize = HEIGHT / LANES;
/// Entries of the rescaled tableau within this of zero count as zero.
const PIVOT_EPS: f64 = 1e-11;
/// How far below zero a basic variable may drift in the ratio test (Harris).
const FEASIBILITY_TOL: f64 = 1e-12;
/// Labels at or above this are B's strategies (tableau columns at the start).
const B_LABEL: u8 = MAX_STRATEGIES as u8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameStatus {
    /// A pure equilibrium; the gap is exactly 0.
    Saddle,
    /// Solved by the simplex and certified within [`GAP_TOLERANCE`].
    Solved,
    /// The simplex ended but its certificate exceeds the tolerance: the value is not
    /// to be trusted.
    Uncertified,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GameOutcome {
    /// The value of the game for the row player (A).
    pub value: f64,
    /// The certificate `max_i (M y)_i - min_j (x^T M)_j`, >= 0, ~0 at an equilibrium.
    pub gap: f64,
    pub status: GameStatus,
}

/// What the one pass over the matrix found.
enum Prelude {
    NonFinite,
    Saddle(GameOutcome),
    /// No pure equilibrium; the smallest and largest entries.
    Range {
        lo: f64,
        hi: f64,
    },
}

/// Which column the simplex brings into the basis first. The values' last bits depend on
/// it, so it is part of a database's format: a db records which one its values were
/// computed with, and everything that re-solves them (resumed solves, the coordinator's
/// checks, `verify`, queries) uses the same.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PivotStart {
    /// Dantzig's rule from the first pivot. All reduced costs are equal then (-1), so the
    /// leftmost column enters: databases of formats 3 and 4.
    Leftmost,
    /// B's pure minimax strategy (the column whose largest entry is smallest), then
    /// Dantzig's rule: about 14 % fewer pivots on the games of a 10-card points solve
    /// (5.79 -> 4.99 per game that is not a saddle point). Databases of format 5 on.
    #[default]
    Minimax,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum PivotRule {
    Dantzig,
    Bland,
}

/// One tableau column in whole vectors, aligned for vector loads.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Column([[f64; LANES]; BLOCKS]);

impl Column {
    const ZERO: Column = Column([[0.0; LANES]; BLOCKS]);

    #[inline(always)]
    fn flat(&self) -> &[f64; HEIGHT] {
        self.0.as_flattened().try_into().expect("HEIGHT entries")
    }

    #[inline(always)]
    fn flat_mut(&mut self) -> &mut [f64; HEIGHT] {
        self.0
            .as_flattened_mut()
            .try_into()
            .expect("HEIGHT entries")
    }
}

/// Which implementation of the pivot and the ratio test a solver runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimdPath {
    /// Plain Rust, for any CPU.
    Portable,
    /// AVX2 intrinsics (x86-64 with AVX2 only); the same operations, the same bits.
    Avx2,
}

/// One game's working state: its tableau, labels and strategies.
#[derive(Clone)]
struct Game {
    /// Stored column by column: columns 0..cols are B's variables, column `cols` the
    /// right-hand side. In each column, entries 0..rows are A's constraints, entry
    /// `rows` the objective row, then zero padding up to [`HEIGHT`].
    tableau: [Column; MAX_STRATEGIES + 1],
    row_label: [u8; MAX_STRATEGIES],
    col_label: [u8; MAX_STRATEGIES],
    x: [f64; MAX_STRATEGIES],
    y: [f64; MAX_STRATEGIES],
    rows: usize,
    cols: usize,
    /// Pivots made by the last solve (Dantzig and Bland runs together).
    pivots: u32,
    /// B's pure minimax strategy (the column whose largest entry is smallest), from the
    /// saddle check: the first column the Dantzig run brings in under
    /// [`PivotStart::Minimax`].
    minimax_column: usize,
}

/// What a simplex does next.
#[derive(Clone, Copy)]
enum Next {
    /// Pivot on row p, column q, with `inv = 1 / a_pq`.
    Pivot { p: usize, q: usize, inv: f64 },
    /// No column enters: optimal.
    Converged,
    /// No row leaves: unbounded (impossible for a positive matrix).
    Failed,
}

/// A reusable solver with preallocated buffers: one game's, and a second for
/// [`GameSolver::solve_pair`].
#[derive(Clone)]
pub struct GameSolver {
    games: [Game; 2],
    start: PivotStart,
    /// The proof that this CPU has AVX2, held when the solver runs the AVX2 path (its
    /// [`SimdPath`] follows from it).
    #[cfg(target_arch = "x86_64")]
    avx2: Option<Avx2>,
}

impl Default for GameSolver {
    fn default() -> Self {
        Self::new()
    }
}

impl GameSolver {
    /// A solver on the fastest path this CPU supports.
    pub fn new() -> Self {
        Self::with_path(Self::best_path())
    }

    /// A solver on the given path; [`SimdPath::Avx2`] falls back to
    /// [`SimdPath::Portable`] on a CPU without AVX2. For tests and benchmarks: both paths
    /// give the same bits.
    pub fn with_path(path: SimdPath) -> Self {
        #[cfg(target_arch = "x86_64")]
        let avx2 = Avx2::detect().filter(|_| path == SimdPath::Avx2);
        // off x86-64 every path asked for is the portable one
        #[cfg(not(target_arch = "x86_64"))]
        let _ = path;
        let game = Game {
            tableau: [Column::ZERO; MAX_STRATEGIES + 1],
            row_label: [0; MAX_STRATEGIES],
            col_label: [0; MAX_STRATEGIES],
            x: [0.0; MAX_STRATEGIES],
            y: [0.0; MAX_STRATEGIES],
            rows: 0,
            cols: 0,
            pivots: 0,
            minimax_column: 0,
        };
        GameSolver {
            games: [game.clone(), game],
            start: PivotStart::default(),
            #[cfg(target_arch = "x86_64")]
            avx2,
        }
    }

    /// A solver on the fastest path, starting its simplex as `start` says.
    pub fn with_start(start: PivotStart) -> Self {
        let mut solver = Self::new();
        solver.start = start;
        solver
    }

    /// Sets how later solves start their simplex.
    pub fn set_start(&mut self, start: PivotStart) {
        self.start = start;
    }

    /// How this solver starts its simplex.
    pub fn start(&self) -> PivotStart {
        self.start
    }

    /// The fastest path this CPU supports.
    pub fn best_path() -> SimdPath {
        #[cfg(target_arch = "x86_64")]
        if Avx2::detect().is_some() {
            return SimdPath::Avx2;
        }
        SimdPath::Portable
    }

    /// The path this solver runs.
    pub fn path(&self) -> SimdPath {
        #[cfg(target_arch = "x86_64")]
        if self.avx2.is_some() {
            return SimdPath::Avx2;
        }
        SimdPath::Portable
    }

    /// A's optimal mixed strategy from the last [`GameSolver::solve`] (one probability
    /// per row); after [`GameSolver::solve_pair`], the first game's.
    pub fn strategy_a(&self) -> &[f64] {
        self.games[0].strategy_a()
    }

    /// B's optimal mixed strategy from the last [`GameSolver::solve`] (one probability
    /// per column); after [`GameSolver::solve_pair`], the first game's.
    pub fn strategy_b(&self) -> &[f64] {
        self.games[0].strategy_b()
    }

    /// Pivots made by the last solve: 0 for a saddle point, the Dantzig run's plus any
    /// Bland restart's otherwise. For benchmarks and statistics.
    pub fn last_pivots(&self) -> u32 {
        self.games[0].pivots
    }

    /// Both games' strategies (A's, B's) and pivots from the last
    /// [`GameSolver::solve_pair`].
    pub fn pair_results(&self) -> [(&[f64], &[f64], u32); 2] {
        self.games
            .each_ref()
            .map(|g| (g.strategy_a(), g.strategy_b(), g.pivots))
    }

    /// Solves the game with payoff matrix `m` (row-major, `rows x cols`, payoff to the
    /// row player). Panics if a dimension is 0 or above [`MAX_STRATEGIES`] or `m` has the
    /// wrong length: callers build these matrices themselves.
    pub fn solve(&mut self, m: &[f64], rows: usize, cols: usize) -> GameOutcome {
        check_dimensions(m, rows, cols);
        #[cfg(target_arch = "x86_64")]
        if let Some(avx2) = self.avx2 {
            // SAFETY: an `Avx2` exists only once AVX2 was detected on this CPU.
            return unsafe { self.solve_avx2(avx2, m, rows, cols) };
        }
        self.games[0].solve_on(Portable, m, rows, cols, self.start)
    }

    /// Solves two games of the same dimensions, `first` and `second`, with their simplex
    /// runs interleaved pivot by pivot: the two are independent, so the processor works
    /// on one while the other waits on a division or a comparison. Each outcome and
    /// each game's strategies ([`GameSolver::pair_results`]) are bit for bit what
    /// [`GameSolver::solve`] gives for that game alone. Panics as `solve` does.
    pub fn solve_pair(
        &mut self,
        first: &[f64],
        second: &[f64],
        rows: usize,
        cols: usize,
    ) -> [GameOutcome; 2] {
        check_dimensions(first, rows, cols);
        check_dimensions(second, rows, cols);
        #[cfg(target_arch = "x86_64")]
        if let Some(avx2) = self.avx2 {
            // SAFETY: an `Avx2` exists only once AVX2 was detected on this CPU.
            return unsafe { self.solve_pair_avx2(avx2, [first, second], rows, cols) };
        }
        solve_pair(
            Portable,
            &mut self.games,
            self.start,
            [first, second],
            rows,
            cols,
        )
    }

    /// [`GameSolver::solve`] compiled with AVX2: the driver and the vector code it calls
    /// are inlined here (for speed: the token `avx2` is what makes the vector code sound).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn solve_avx2(&mut self, avx2: Avx2, m: &[f64], rows: usize, cols: usize) -> GameOutcome {
        self.games[0].solve_on(avx2, m, rows, cols, self.start)
    }

    /// [`GameSolver::solve_pair`] compiled with AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn solve_pair_avx2(
        &mut self,
        avx2: Avx2,
        m: [&[f64]; 2],
        rows: usize,
        cols: usize,
    ) -> [GameOutcome; 2] {
        solve_pair(avx2, &mut self.games, self.start, m, rows, cols)
    }
}

/// The dimensions' contract of [`GameSolver::solve`].
fn check_dimensions(m: &[f64], rows: usize, cols: usize) {
    assert!((1..=MAX_STRATEGIES).contains(&rows) && (1..=MAX_STRATEGIES).contains(&cols));
    assert_eq!(m.len(), rows * cols);
}

impl Next {
    /// For a run that stopped here: whether it converged.
    fn converged(&self) -> bool {
        matches!(self, Next::Converged)
    }
}

impl Game {
    fn strategy_a(&self) -> &[f64] {
        &self.x[..self.rows]
    }

    fn strategy_b(&self) -> &[f64] {
        &self.y[..self.cols]
    }

    #[inline(always)]
    fn solve_on<I: Isa>(
        &mut self,
        isa: I,
        m: &[f64],
        rows: usize,
        cols: usize,
        start: PivotStart,
    ) -> GameOutcome {
        let prelude = self.prelude(isa, m, rows, cols);
        self.conclude(isa, m, prelude, start)
    }

    /// Takes the game's dimensions and runs the saddle check.
    #[inline(always)]
    fn prelude<I: Isa>(&mut self, isa: I, m: &[f64], rows: usize, cols: usize) -> Prelude {
        self.rows = rows;
        self.cols = cols;
        self.pivots = 0;
        self.saddle_check(isa, m)
    }

    /// The outcome after the saddle check: its own for a saddle point or a non-finite
    /// matrix, else the simplex's.
    #[inline(always)]
    fn conclude<I: Isa>(
        &mut self,
        isa: I,
        m: &[f64],
        prelude: Prelude,
        start: PivotStart,
    ) -> GameOutcome {
        let (lo, hi) = match prelude {
            Prelude::Range { lo, hi } => (lo, hi),
            Prelude::Saddle(outcome) => return outcome,
            Prelude::NonFinite => {
                self.x[..self.rows].fill(f64::NAN);
                self.y[..self.cols].fill(f64::NAN);
                return GameOutcome {
                    value: f64::NAN,
                    gap: f64::INFINITY,
                    status: GameStatus::Uncertified,
                };
            }
        };
        let outcome = self.simplex(isa, m, lo, hi - lo, PivotRule::Dantzig, start);
        self.finish(m, lo, hi, outcome)
    }

    /// The Dantzig run's outcome certified, or after a Bland restart, or marked
    /// uncertified.
    #[inline(always)]
    fn finish(&mut self, m: &[f64], lo: f64, hi: f64, dantzig: GameOutcome) -> GameOutcome {
        let scale = max(max(lo.abs(), hi.abs()), 1.0);
        let certified = |o: &GameOutcome| o.value.is_finite() && o.gap <= GAP_TOLERANCE * scale;
        let mut outcome = dantzig;
        if !certified(&outcome) {
            outcome = self.bland_restart(m, lo, hi, outcome);
        }
        if !certified(&outcome) {
            outcome = self.exact_or_keep(m, lo, outcome);
        }
        if !certified(&outcome) {
            outcome.status = GameStatus::Uncertified;
        }
        outcome
    }

    /// The restart under Bland's rule, on the portable path (rare: it need not be fast,
    /// and both paths give the same bits). Keeps the better of the two runs.
    #[inline(never)]
    fn bland_restart(&mut self, m: &[f64], lo: f64, hi: f64, dantzig: GameOutcome) -> GameOutcome {
        let (dantzig_x, dantzig_y) = (self.x, self.y);
        // Bland's rule chooses every column itself: the start does not apply
        let bland = self.simplex(
            Portable,
            m,
            lo,
            hi - lo,
            PivotRule::Bland,
            PivotStart::Leftmost,
        );
        if bland.gap < dantzig.gap || dantzig.gap.is_nan() {
            bland
        } else {
            self.x = dantzig_x;
            self.y = dantzig_y;
            dantzig
        }
    }

    /// The exact solution ([`exact`]) if its certificate is smaller than `outcome`'s;
    /// otherwise `outcome` and its strategies. Rarer still than the Bland restart.
    #[inline(never)]
    fn exact_or_keep(&mut self, m: &[f64], lo: f64, outcome: GameOutcome) -> GameOutcome {
        let (kept_x, kept_y) = (self.x, self.y);
        if exact::solve_exact(m, self.rows, self.cols, lo, &mut self.x, &mut self.y) {
            normalise(&mut self.x[..self.rows]);
            normalise(&mut self.y[..self.cols]);
            let exact = self.certify(m);
            if exact.gap < outcome.gap || outcome.gap.is_nan() {
                return exact;
            }
        }
        self.x = kept_x;
        self.y = kept_y;
        outcome
    }

    /// Solves the game rescaled to `(m - lo) / range + 1` and maps the result back.
    #[inline(always)]
    fn simplex<I: Isa>(
        &mut self,
        isa: I,
        m: &[f64],
        lo: f64,
        range: f64,
        rule: PivotRule,
        start: PivotStart,
    ) -> GameOutcome {
        // monomorphised on the vectors per column: the column loops unroll
        let converged = match (self.rows + 1).div_ceil(LANES) {
            1 => self.run::<I, 1>(isa, m, lo, range, rule, start),
            2 => self.run::<I, 2>(isa, m, lo, range, rule, start),
            3 => self.run::<I, 3>(isa, m, lo, range, rule, start),
            4 => self.run::<I, 4>(isa, m, lo, range, rule, start),
            _ => self.run::<I, BLOCKS>(isa, m, lo, range, rule, start),
        };
        self.after_run(m, lo, range, converged)
    }

    /// The outcome of a simplex run on the game rescaled by `lo` and `range`: the
    /// strategies read, certified and, if need be, polished.
    #[inline(always)]
    fn after_run(&mut self, m: &[f64], lo: f64, range: f64, converged: bool) -> GameOutcome {
        if !converged {
            return GameOutcome {
                value: f64::NAN,
                gap: f64::INFINITY,
                status: GameStatus::Uncertified,
            };
        }
        self.read_strategies();
        let outcome = self.certify(m);
        let scale = max(max(lo.abs(), (lo + range).abs()), 1.0);
        if outcome.gap <= POLISH_BELOW * scale {
            return outcome;
        }
        self.polish_or_keep(m, outcome)
    }

    /// Reads x (A) from the bottom row under A's labels and y (B) from the right column
    /// beside B's labels, normalised to sum 1.
    #[inline(always)]
    fn read_strategies(&mut self) {
        let (rows, cols) = (self.rows, self.cols);
        // whole arrays: a few stores, where a slice fill calls memset
        self.x = [0.0; MAX_STRATEGIES];
        self.y = [0.0; MAX_STRATEGIES];
        for (&label, column) in self.col_label[..cols].iter().zip(&self.tableau) {
            if label < B_LABEL {
                self.x[label as usize] = non_negative(column.flat()[rows]);
            }
        }
        let rhs = self.tableau[cols].flat();
        for (&label, &b) in self.row_label[..rows].iter().zip(rhs) {
            if label >= B_LABEL {
                self.y[(label - B_LABEL) as usize] = non_negative(b);
            }
        }
        normalise(&mut self.x[..rows]);
        normalise(&mut self.y[..cols]);
    }

    /// The certificate and the value from the strategies just read.
    #[inline(always)]
    fn certify(&self, m: &[f64]) -> GameOutcome {
        let (lower, upper) = certificate_bounds(
            m,
            self.rows,
            self.cols,
            self.strategy_a(),
            self.strategy_b(),
        );
        GameOutcome {
            value: 0.5 * (lower + upper),
            // NaN stays NaN (and uncertified); a rounding-negative gap is 0
            gap: if upper < lower { 0.0 } else { upper - lower },
            status: GameStatus::Solved,
        }
    }
}

/// The larger of two finite numbers, `a` on ties.
#[inline(always)]
fn max(a: f64, b: f64) -> f64 {
    if b > a { b } else { a }
}

#[cfg(test)]
mod tests;
