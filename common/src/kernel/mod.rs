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
//! Layout: this file holds the solver's driver (saddle check, simplex loop, strategies,
//! certificate); [`lanes`] the two implementations of the pivot and the ratio test, a
//! portable one and an AVX2 one, which perform the same IEEE operations in the same
//! order (no fused multiply-add anywhere) and so give the same bits; [`polish`] the
//! recomputation of strategies from the final basis; [`exact`] the rational fallback. The AVX2 path is chosen at run time
//! when the CPU has AVX2; the whole driver is compiled twice, once per path.

mod exact;
mod lanes;
mod polish;

use lanes::{Isa, Portable};

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
    path: SimdPath,
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
        let path = match path {
            SimdPath::Avx2 if Self::best_path() == SimdPath::Avx2 => SimdPath::Avx2,
            _ => SimdPath::Portable,
        };
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
            path,
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
        if std::arch::is_x86_feature_detected!("avx2") {
            return SimdPath::Avx2;
        }
        SimdPath::Portable
    }

    /// The path this solver runs.
    pub fn path(&self) -> SimdPath {
        self.path
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
        if self.path == SimdPath::Avx2 {
            // SAFETY: `path` is Avx2 only when `best_path` detected AVX2 on this CPU.
            return unsafe { self.solve_avx2(m, rows, cols) };
        }
        self.games[0].solve_on::<Portable>(m, rows, cols, self.start)
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
        if self.path == SimdPath::Avx2 {
            // SAFETY: `path` is Avx2 only when `best_path` detected AVX2 on this CPU.
            return unsafe { self.solve_pair_avx2([first, second], rows, cols) };
        }
        self.solve_pair_on::<Portable>([first, second], rows, cols)
    }

    /// [`GameSolver::solve`] compiled with AVX2: the driver and the vector code it calls
    /// are inlined here.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn solve_avx2(&mut self, m: &[f64], rows: usize, cols: usize) -> GameOutcome {
        self.games[0].solve_on::<lanes::Avx2>(m, rows, cols, self.start)
    }

    /// [`GameSolver::solve_pair`] compiled with AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn solve_pair_avx2(&mut self, m: [&[f64]; 2], rows: usize, cols: usize) -> [GameOutcome; 2] {
        self.solve_pair_on::<lanes::Avx2>(m, rows, cols)
    }

    #[inline(always)]
    fn solve_pair_on<I: Isa>(
        &mut self,
        m: [&[f64]; 2],
        rows: usize,
        cols: usize,
    ) -> [GameOutcome; 2] {
        let start = self.start;
        let [first, second] = &mut self.games;
        let preludes = [
            first.prelude(m[0], rows, cols),
            second.prelude(m[1], rows, cols),
        ];
        let [
            Prelude::Range { lo: lo0, hi: hi0 },
            Prelude::Range { lo: lo1, hi: hi1 },
        ] = preludes
        else {
            // at most one simplex: nothing to interleave
            let [p0, p1] = preludes;
            return [
                first.conclude::<I>(m[0], p0, start),
                second.conclude::<I>(m[1], p1, start),
            ];
        };
        let ranges = [(lo0, hi0 - lo0), (lo1, hi1 - lo1)];
        let converged = match (rows + 1).div_ceil(LANES) {
            1 => run_pair::<I, 1>(first, second, m, ranges, start),
            2 => run_pair::<I, 2>(first, second, m, ranges, start),
            3 => run_pair::<I, 3>(first, second, m, ranges, start),
            4 => run_pair::<I, 4>(first, second, m, ranges, start),
            _ => run_pair::<I, BLOCKS>(first, second, m, ranges, start),
        };
        let o0 = first.after_run(m[0], lo0, hi0 - lo0, converged[0]);
        let o1 = second.after_run(m[1], lo1, hi1 - lo1, converged[1]);
        [
            first.finish(m[0], lo0, hi0, o0),
            second.finish(m[1], lo1, hi1, o1),
        ]
    }
}

/// The dimensions' contract of [`GameSolver::solve`].
fn check_dimensions(m: &[f64], rows: usize, cols: usize) {
    assert!((1..=MAX_STRATEGIES).contains(&rows) && (1..=MAX_STRATEGIES).contains(&cols));
    assert_eq!(m.len(), rows * cols);
}

/// Both games' Dantzig runs, a pivot of each in turn (both choices first, then both
/// pivots, so that one game's choice overlaps the other's pivot), then whichever is
/// still running on its own. Each game makes exactly the pivots [`Game::run`] makes.
#[inline(always)]
fn run_pair<I: Isa, const B: usize>(
    first: &mut Game,
    second: &mut Game,
    m: [&[f64]; 2],
    ranges: [(f64, f64); 2],
    start: PivotStart,
) -> [bool; 2] {
    let rule = PivotRule::Dantzig;
    first.begin::<I, B>(m[0], ranges[0].0, ranges[0].1);
    second.begin::<I, B>(m[1], ranges[1].0, ranges[1].1);
    let max_pivots = first.max_pivots(rule);
    for n in 0..max_pivots {
        let a = first.next_pivot::<I, B>(n, rule, start);
        let b = second.next_pivot::<I, B>(n, rule, start);
        if let Next::Pivot { p, q, inv } = a {
            first.apply::<I, B>(p, q, inv);
        }
        if let Next::Pivot { p, q, inv } = b {
            second.apply::<I, B>(p, q, inv);
        }
        match (a, b) {
            (Next::Pivot { .. }, Next::Pivot { .. }) => {}
            (Next::Pivot { .. }, done) => {
                return [first.resume::<I, B>(n + 1, rule, start), done.converged()];
            }
            (done, Next::Pivot { .. }) => {
                return [done.converged(), second.resume::<I, B>(n + 1, rule, start)];
            }
            (a, b) => return [a.converged(), b.converged()],
        }
    }
    [false, false]
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
        m: &[f64],
        rows: usize,
        cols: usize,
        start: PivotStart,
    ) -> GameOutcome {
        let prelude = self.prelude(m, rows, cols);
        self.conclude::<I>(m, prelude, start)
    }

    /// Takes the game's dimensions and runs the saddle check.
    #[inline(always)]
    fn prelude(&mut self, m: &[f64], rows: usize, cols: usize) -> Prelude {
        self.rows = rows;
        self.cols = cols;
        self.pivots = 0;
        self.saddle_check(m)
    }

    /// The outcome after the saddle check: its own for a saddle point or a non-finite
    /// matrix, else the simplex's.
    #[inline(always)]
    fn conclude<I: Isa>(&mut self, m: &[f64], prelude: Prelude, start: PivotStart) -> GameOutcome {
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
        let outcome = self.simplex::<I>(m, lo, hi - lo, PivotRule::Dantzig, start);
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
        let bland =
            self.simplex::<Portable>(m, lo, hi - lo, PivotRule::Bland, PivotStart::Leftmost);
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

    /// One pass over `m`: its finiteness, each row's minimum and each column's maximum.
    /// A pure equilibrium exists when the largest row minimum equals the smallest column
    /// maximum; otherwise the smallest and largest entries (the least row minimum and the
    /// greatest column maximum) set the rescaling. Minima and maxima are strict
    /// comparisons that keep the earlier of equal entries, so they are exact and the
    /// same on every machine.
    #[inline(always)]
    fn saddle_check(&mut self, m: &[f64]) -> Prelude {
        // monomorphised on the row length: the column maxima stay in registers (a
        // variable length vectorises with masked stores, which are slow on AMD)
        match self.cols {
            1 => self.saddle_of::<1>(m),
            2 => self.saddle_of::<2>(m),
            3 => self.saddle_of::<3>(m),
            4 => self.saddle_of::<4>(m),
            5 => self.saddle_of::<5>(m),
            6 => self.saddle_of::<6>(m),
            7 => self.saddle_of::<7>(m),
            8 => self.saddle_of::<8>(m),
            9 => self.saddle_of::<9>(m),
            10 => self.saddle_of::<10>(m),
            11 => self.saddle_of::<11>(m),
            12 => self.saddle_of::<12>(m),
            13 => self.saddle_of::<13>(m),
            14 => self.saddle_of::<14>(m),
            15 => self.saddle_of::<15>(m),
            _ => self.saddle_of::<16>(m),
        }
    }

    /// [`GameSolver::saddle_check`] for `C` columns.
    #[inline(always)]
    fn saddle_of<const C: usize>(&mut self, m: &[f64]) -> Prelude {
        let mut col_max = [f64::NEG_INFINITY; C];
        let mut finite = true;
        let mut best_row = 0;
        let mut lower = f64::NEG_INFINITY;
        let mut lo = f64::INFINITY;
        for (i, row) in m.chunks_exact(C).enumerate() {
            let row: &[f64; C] = row.try_into().expect("C entries");
            for (c, &v) in col_max.iter_mut().zip(row) {
                finite &= v * 0.0 == 0.0; // false for infinities and NaN
                *c = if v > *c { v } else { *c };
            }
            let mut row_min = f64::INFINITY;
            for &v in row {
                row_min = if v < row_min { v } else { row_min };
            }
            if row_min > lower {
                lower = row_min;
                best_row = i;
            }
            lo = if row_min < lo { row_min } else { lo };
        }
        if !finite {
            return Prelude::NonFinite;
        }
        let mut best_col = 0;
        let mut upper = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        for (j, &c) in col_max.iter().enumerate() {
            if c < upper {
                upper = c;
                best_col = j;
            }
            hi = if c > hi { c } else { hi };
        }
        if lower != upper {
            self.minimax_column = best_col;
            return Prelude::Range { lo, hi };
        }
        self.x = [0.0; MAX_STRATEGIES];
        self.y = [0.0; MAX_STRATEGIES];
        self.x[best_row] = 1.0;
        self.y[best_col] = 1.0;
        Prelude::Saddle(GameOutcome {
            value: lower,
            gap: 0.0,
            status: GameStatus::Saddle,
        })
    }

    /// Solves the game rescaled to `(m - lo) / range + 1` and maps the result back.
    #[inline(always)]
    fn simplex<I: Isa>(
        &mut self,
        m: &[f64],
        lo: f64,
        range: f64,
        rule: PivotRule,
        start: PivotStart,
    ) -> GameOutcome {
        // monomorphised on the vectors per column: the column loops unroll
        let converged = match (self.rows + 1).div_ceil(LANES) {
            1 => self.run::<I, 1>(m, lo, range, rule, start),
            2 => self.run::<I, 2>(m, lo, range, rule, start),
            3 => self.run::<I, 3>(m, lo, range, rule, start),
            4 => self.run::<I, 4>(m, lo, range, rule, start),
            _ => self.run::<I, BLOCKS>(m, lo, range, rule, start),
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

    /// Fills the tableau and pivots until no column enters (true) or the pivot budget is
    /// spent or the problem looks unbounded (false). `B` vectors hold a column.
    #[inline(always)]
    fn run<I: Isa, const B: usize>(
        &mut self,
        m: &[f64],
        lo: f64,
        range: f64,
        rule: PivotRule,
        start: PivotStart,
    ) -> bool {
        self.begin::<I, B>(m, lo, range);
        self.resume::<I, B>(0, rule, start)
    }

    /// Fills the tableau from `m` rescaled by `lo` and `range`, and labels the rows and
    /// columns.
    #[inline(always)]
    fn begin<I: Isa, const B: usize>(&mut self, m: &[f64], lo: f64, range: f64) {
        let (rows, cols) = (self.rows, self.cols);
        let inv_range = 1.0 / range;
        I::fill::<B>(&mut self.tableau[..=cols], m, rows, lo, inv_range);
        for (j, label) in self.col_label[..cols].iter_mut().enumerate() {
            *label = B_LABEL + j as u8;
        }
        for (i, label) in self.row_label[..rows].iter_mut().enumerate() {
            *label = i as u8;
        }
    }

    /// The most pivots a run under `rule` may make.
    #[inline(always)]
    fn max_pivots(&self, rule: PivotRule) -> usize {
        match rule {
            PivotRule::Dantzig => 8 * (self.rows + self.cols),
            PivotRule::Bland => 256 * (self.rows + self.cols),
        }
    }

    /// Pivots from pivot number `from` on until no column enters (true) or the budget is
    /// spent or no row leaves (false).
    #[inline(always)]
    fn resume<I: Isa, const B: usize>(
        &mut self,
        from: usize,
        rule: PivotRule,
        start: PivotStart,
    ) -> bool {
        for n in from..self.max_pivots(rule) {
            match self.next_pivot::<I, B>(n, rule, start) {
                Next::Pivot { p, q, inv } => self.apply::<I, B>(p, q, inv),
                stop => return stop.converged(),
            }
        }
        false
    }

    /// The pivot number `n` of the run chooses.
    #[inline(always)]
    fn next_pivot<I: Isa, const B: usize>(
        &self,
        n: usize,
        rule: PivotRule,
        start: PivotStart,
    ) -> Next {
        let q = if n == 0 && rule == PivotRule::Dantzig && start == PivotStart::Minimax {
            // every objective entry is -1 here, so any column may enter; starting from
            // B's best pure strategy saves pivots on average (see PivotStart)
            self.minimax_column
        } else {
            let Some(q) = self.entering_column(rule) else {
                return Next::Converged;
            };
            q
        };
        match I::leaving_row::<B>(
            &self.tableau,
            self.rows,
            self.cols,
            q,
            rule,
            &self.row_label,
        ) {
            Some((p, inv)) => Next::Pivot { p, q, inv },
            None => Next::Failed,
        }
    }

    /// Pivots on (p, q), `inv = 1 / a_pq`, and exchanges the two labels.
    #[inline(always)]
    fn apply<I: Isa, const B: usize>(&mut self, p: usize, q: usize, inv: f64) {
        I::pivot::<B>(&mut self.tableau[..=self.cols], self.rows, p, q, inv);
        std::mem::swap(&mut self.row_label[p], &mut self.col_label[q]);
        self.pivots += 1;
    }

    /// The entering column: among the columns whose objective entry is below
    /// `-PIVOT_EPS`, the most negative (Dantzig; the first of equals) or the one with the
    /// smallest label (Bland).
    #[inline(always)]
    fn entering_column(&self, rule: PivotRule) -> Option<usize> {
        let (rows, cols) = (self.rows, self.cols);
        let columns = &self.tableau[..cols];
        match rule {
            PivotRule::Dantzig => {
                // branch-free: a running strict minimum below the threshold
                let mut best = usize::MAX;
                let mut best_v = -PIVOT_EPS;
                for (j, column) in columns.iter().enumerate() {
                    let v = column.flat()[rows];
                    let better = v < best_v;
                    best = if better { j } else { best };
                    best_v = if better { v } else { best_v };
                }
                (best != usize::MAX).then_some(best)
            }
            PivotRule::Bland => {
                let mut best: Option<usize> = None;
                for (j, column) in columns.iter().enumerate() {
                    if column.flat()[rows] >= -PIVOT_EPS {
                        continue;
                    }
                    best = match best {
                        Some(b) if self.col_label[b] <= self.col_label[j] => Some(b),
                        _ => Some(j),
                    };
                }
                best
            }
        }
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

/// `x` if above 0, else +0 (NaN included): what `f64::max(x, 0.0)` gives on x86-64,
/// written out so that no target may resolve -0 or NaN another way.
#[inline(always)]
fn non_negative(x: f64) -> f64 {
    if x > 0.0 { x } else { 0.0 }
}

/// The larger of two finite numbers, `a` on ties.
#[inline(always)]
fn max(a: f64, b: f64) -> f64 {
    if b > a { b } else { a }
}

/// `(min_j (x^T M)_j, max_i (M y)_i)`: what A's strategy guarantees and what B's strategy
/// concedes at most. The game value lies between them.
pub fn certificate_bounds(m: &[f64], rows: usize, cols: usize, x: &[f64], y: &[f64]) -> (f64, f64) {
    let (m, x) = (&m[..rows * cols], &x[..rows]);
    // monomorphised on the row length: the sums unroll and stay in registers
    match cols {
        1 => bounds_of::<1>(m, x, y),
        2 => bounds_of::<2>(m, x, y),
        3 => bounds_of::<3>(m, x, y),
        4 => bounds_of::<4>(m, x, y),
        5 => bounds_of::<5>(m, x, y),
        6 => bounds_of::<6>(m, x, y),
        7 => bounds_of::<7>(m, x, y),
        8 => bounds_of::<8>(m, x, y),
        9 => bounds_of::<9>(m, x, y),
        10 => bounds_of::<10>(m, x, y),
        11 => bounds_of::<11>(m, x, y),
        12 => bounds_of::<12>(m, x, y),
        13 => bounds_of::<13>(m, x, y),
        14 => bounds_of::<14>(m, x, y),
        15 => bounds_of::<15>(m, x, y),
        16 => bounds_of::<16>(m, x, y),
        _ => panic!("{cols} columns: at most {MAX_STRATEGIES}"),
    }
}

/// [`certificate_bounds`] for `C` columns. Every sum is added in the same order as
/// `Iterator::sum` would, from the same -0.0 start: (M y)_i over j, and (x^T M)_j over
/// i, all columns at once, row by row. The max and min are strict comparisons in order
/// (NaN sums are skipped, the first of equal sums kept): exact on every machine, where
/// f64::max/min may be reordered or resolve +0/-0 differently by target.
fn bounds_of<const C: usize>(m: &[f64], x: &[f64], y: &[f64]) -> (f64, f64) {
    let y: &[f64; C] = y[..C].try_into().expect("C entries");
    let mut upper = f64::NEG_INFINITY;
    let mut column = [-0.0f64; C];
    for (row, &xi) in m.chunks_exact(C).zip(x) {
        let row: &[f64; C] = row.try_into().expect("C entries");
        let mut v = -0.0;
        for (a, b) in row.iter().zip(y) {
            v += a * b;
        }
        upper = if v > upper { v } else { upper };
        for (c, &v) in column.iter_mut().zip(row) {
            *c += xi * v;
        }
    }
    let lower = column
        .iter()
        .fold(f64::INFINITY, |lower, &v| if v < lower { v } else { lower });
    (lower, upper)
}

fn normalise(p: &mut [f64]) {
    let total: f64 = p.iter().sum();
    if total > 0.0 {
        let inv = 1.0 / total;
        p.iter_mut().for_each(|v| *v *= inv);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solve(m: &[f64], rows: usize, cols: usize) -> (GameOutcome, Vec<f64>, Vec<f64>) {
        let mut s = GameSolver::new();
        let o = s.solve(m, rows, cols);
        (o, s.strategy_a().to_vec(), s.strategy_b().to_vec())
    }

    #[test]
    fn one_by_one() {
        let (o, x, y) = solve(&[-3.5], 1, 1);
        assert_eq!(o.value, -3.5);
        assert_eq!(o.status, GameStatus::Saddle);
        assert_eq!((x, y), (vec![1.0], vec![1.0]));
    }

    #[test]
    fn matching_pennies() {
        let (o, x, y) = solve(&[1.0, -1.0, -1.0, 1.0], 2, 2);
        assert_eq!(o.status, GameStatus::Solved);
        assert!(o.value.abs() < 1e-15);
        assert!(o.gap < 1e-15);
        assert!((x[0] - 0.5).abs() < 1e-15 && (y[1] - 0.5).abs() < 1e-15);
    }

    #[test]
    fn rock_paper_scissors_shifted() {
        let m = [3.0, 2.0, 4.0, 4.0, 3.0, 2.0, 2.0, 4.0, 3.0];
        let (o, x, _) = solve(&m, 3, 3);
        assert!((o.value - 3.0).abs() < 1e-14, "{o:?}");
        for p in x {
            assert!((p - 1.0 / 3.0).abs() < 1e-14);
        }
    }

    #[test]
    fn saddle_point() {
        // row 1 column 0 is min of its row and max of its column
        let m = [1.0, 5.0, 2.0, 3.0];
        let (o, x, y) = solve(&m, 2, 2);
        assert_eq!(o.status, GameStatus::Saddle);
        assert_eq!(o.value, 2.0);
        assert_eq!((x, y), (vec![0.0, 1.0], vec![1.0, 0.0]));
    }

    #[test]
    fn rectangular_game() {
        // A: 2 rows, B: 3 columns; value 1/2 with x = (1/2, 1/2)
        let m = [1.0, 0.0, 2.0, 0.0, 1.0, -1.0];
        let (o, x, _) = solve(&m, 2, 3);
        assert!((o.value - 0.5).abs() < 1e-14, "{o:?}");
        assert!((x[0] - 0.5).abs() < 1e-14);
    }

    /// N = 12, layer 5: three equal columns made the plain ratio test pivot on 1.9e-11
    /// and the simplex ended with a gap of 0.84.
    #[test]
    fn regression_degenerate_equal_columns_tiny_pivot() {
        let m = [
            -29.798657718120808,
            -34.0,
            -26.879027421409646,
            -26.879027421409646,
            -26.879027421409646,
            -19.798657718120808,
            -34.0,
            -26.953941801480482,
            -26.953941801480482,
            -26.953941801480482,
            -19.798657718120808,
            -34.0,
            -26.953941801480482,
            -26.953941801480482,
            -26.953941801480482,
            -21.86577181208053,
            -24.0,
            -29.09401492958626,
            -29.09401492958626,
            -29.09401492958626,
            -23.93288590604027,
            -14.0,
            -31.233603278618823,
            -31.233603278618823,
            -31.233603278618823,
        ];
        let (o, _, _) = solve(&m, 5, 5);
        assert_eq!(o.status, GameStatus::Solved);
        assert!(o.gap < 1e-12, "{o:?}");
        assert!((o.value - -28.152250796449422).abs() < 1e-12, "{o:?}");
    }

    /// N = 12, layer 6: nearly equal rows (differing by 6e-8) left the simplex with a
    /// gap of 3e-9 before the basis polish.
    #[test]
    fn regression_near_equal_rows_need_polish() {
        let m = [
            -23.473421711216027,
            -26.197359022906728,
            -25.15887978987788,
            -24.015004140866672,
            -21.571828901000583,
            -21.571828901000583,
            -19.473421711216027,
            -26.197359022906728,
            -25.15887978987788,
            -24.0150042035605,
            -21.571828901000583,
            -21.571828901000583,
            -19.473421711216027,
            -26.197359022906728,
            -25.15887978987788,
            -24.0150042035605,
            -21.571828901000583,
            -21.571828901000583,
            -19.473421711216027,
            -26.197359022906728,
            -25.15887978987788,
            -24.0150042035605,
            -21.571828901000583,
            -21.571828901000583,
            -19.95756165262511,
            -22.197359022906728,
            -26.197359022906728,
            -24.819643084243975,
            -22.563476082470277,
            -22.563476082470277,
            -22.505988023952096,
            -21.0,
            -20.023668639053255,
            -24.023668639053255,
            -28.023668639053255,
            -28.023668639053255,
        ];
        let (o, _, _) = solve(&m, 6, 6);
        assert_eq!(o.status, GameStatus::Solved);
        assert!(o.gap < 1e-12, "{o:?}");
    }

    #[test]
    fn non_finite_entries_are_never_certified() {
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let (o, _, _) = solve(&[1.0, bad, -1.0, 0.5], 2, 2);
            assert_eq!(o.status, GameStatus::Uncertified, "{bad}");
            assert!(o.value.is_nan());
        }
    }
}
