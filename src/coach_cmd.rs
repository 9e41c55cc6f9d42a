//! `gops coach`: the coach of a real game in the terminal (`gops_arena::coach` does the
//! work). The player types each upcard and the opponent's bid; the coach answers the
//! advice (the safe exploiter's mix against a model of the opponent, and one bid drawn
//! from it), the opponent's exact loss on each decision and what was banked. The
//! opponent's decisions go to the session file, written whole to a temporary file and
//! renamed after every round, so that a crash loses nothing. Works with stdin a pipe,
//! as `gops play` does.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use gops_arena::agent::{Base, Model};
use gops_arena::coach::{Coach, cards_text};
use gops_arena::table::Table;
use gops_common::human::strategy_line;
use gops_db::read::CachedReader;
use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::args::CoachArgs;
use crate::db_open::read_options;
use crate::failure::Failure;

/// Slices the coach keeps in memory.
const CACHE_BYTES: usize = 256 << 20;

/// A line of input, or the end of it.
enum Answer {
    Line(String),
    Quit,
}

struct Terminal<'a> {
    input: std::io::StdinLock<'a>,
    out: std::io::StdoutLock<'a>,
    echoes: bool,
}

impl Terminal<'_> {
    fn say(&mut self, text: &str) -> Result<(), Failure> {
        writeln!(self.out, "{text}").map_err(io)
    }

    fn ask(&mut self, prompt: &str) -> Result<Answer, Failure> {
        write!(self.out, "{prompt}").map_err(io)?;
        self.out.flush().map_err(io)?;
        let mut line = String::new();
        let read = self
            .input
            .read_line(&mut line)
            .map_err(|e| Failure::Runtime(format!("cannot read input: {e}")))?;
        let answer = line.trim().to_string();
        if !self.echoes {
            writeln!(self.out, "{answer}").map_err(io)?;
        }
        if read == 0 || answer.eq_ignore_ascii_case("q") || answer.eq_ignore_ascii_case("quit") {
            return Ok(Answer::Quit);
        }
        Ok(Answer::Line(answer))
    }

    /// A card of `allowed`, asked until one is given (an empty answer takes `default`).
    fn card(
        &mut self,
        prompt: &str,
        allowed: gops_common::cards::CardSet,
        default: Option<u8>,
    ) -> Result<Option<u8>, Failure> {
        loop {
            let Answer::Line(text) = self.ask(prompt)? else {
                return Ok(None);
            };
            if text.is_empty()
                && let Some(card) = default
            {
                return Ok(Some(card));
            }
            match text.parse::<u8>() {
                Ok(card) if allowed.contains(card) => return Ok(Some(card)),
                _ => self.say(&format!(
                    "'{text}' is not one of {}; try again",
                    cards_text(allowed)
                ))?,
            }
        }
    }
}

fn io(e: std::io::Error) -> Failure {
    Failure::Runtime(format!("cannot write to the terminal: {e}"))
}

/// The session's lines, if the file exists.
fn read_session(path: &Path) -> Result<Vec<String>, Failure> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text.lines().map(str::to_string).collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(Failure::Usage(format!(
            "cannot read the session {}: {e}",
            path.display()
        ))),
    }
}

/// Writes the session whole, atomically: a temporary file beside it, synced, renamed.
fn write_session(path: &Path, lines: &[String]) -> Result<(), Failure> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let fail = |e: std::io::Error| {
        Failure::Runtime(format!("cannot write the session {}: {e}", path.display()))
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(fail)?;
    for line in lines {
        writeln!(tmp, "{line}").map_err(fail)?;
    }
    tmp.as_file().sync_all().map_err(fail)?;
    tmp.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
}

pub fn coach(args: CoachArgs) -> Result<(), Failure> {
    let session: Option<PathBuf> = args
        .session
        .clone()
        .or_else(|| args.learn.then(|| PathBuf::from("coach-session.jsonl")));
    let lines = match &session {
        Some(path) => read_session(path)?,
        None => Vec::new(),
    };
    let model = args.opponent.clone().unwrap_or(Model::of(Base::Uniform));
    let mut coach = Coach::new(model, args.learn, args.risk, &lines).map_err(Failure::Usage)?;
    let book = crate::db_open::open_reader(&args.db, &read_options(&args.on_demand))?;
    let mut reader = CachedReader::cached(&book, CACHE_BYTES);
    let seed = args.seed.unwrap_or_else(crate::input::clock_seed);
    let mut rng = StdRng::seed_from_u64(seed);
    let stdin = std::io::stdin();
    let mut term = Terminal {
        echoes: stdin.is_terminal(),
        input: stdin.lock(),
        out: std::io::stdout().lock(),
    };
    let n = book.n();
    term.say(&format!(
        "Coach for {n}-card GOPS ({}), risk {} a game (seed {seed}). You are A, the opponent B.",
        book.objective(),
        args.risk
    ))?;
    term.say(&format!(
        "Model of the opponent: {}{}. Type each upcard, then your bid (Enter takes the advice) and theirs; 'q' quits.",
        coach.model_name(),
        if args.learn { " (learned as they play)" } else { "" }
    ))?;
    if let Some(path) = &session {
        term.say(&format!(
            "Session {}: {} of their decisions so far.",
            path.display(),
            coach.lines().len()
        ))?;
    }
    let mut longest = 0.0f64;
    'games: loop {
        let mut table = Table::new(n, book.objective());
        term.say(&format!("\ngame {}", coach.game() + 1))?;
        while !table.is_over() {
            let state = *table.state();
            let (yours, theirs) = table.taken();
            term.say(&format!(
                "\nround {}: score you {yours}, them {theirs}; prizes left {}; your cards {}; theirs {}",
                table.round(),
                cards_text(state.prizes),
                cards_text(state.a),
                cards_text(state.b)
            ))?;
            let Some(upcard) = term.card("upcard> ", state.prizes, None)? else {
                break 'games;
            };
            table.turn_up_card(upcard).expect("a prize left");
            let started = Instant::now();
            let advice = coach.advise(&mut reader, &table, &mut rng)?.clone();
            longest = longest.max(started.elapsed().as_secs_f64());
            let d = &advice.decision;
            term.say(&format!(
                "advice: bid {}, drawn from  {}",
                advice.suggested,
                strategy_line(state.a, &d.mix)
            ))?;
            term.say(&format!(
                "        the value here {:+.3}; against the model it expects {:+.3} more (budget {:.3})",
                d.value,
                d.expected_gain(),
                d.budget
            ))?;
            let Some(mine) = term.card(
                &format!("your bid [{}]> ", advice.suggested),
                state.a,
                Some(advice.suggested),
            )?
            else {
                break 'games;
            };
            let Some(bid) = term.card("their bid> ", state.b, None)? else {
                break 'games;
            };
            let settled = coach
                .settle(&mut reader, &mut table, mine, bid)?
                .expect("both bids were checked against the hands");
            term.say(&format!(
                "round {}: prize {upcard}, you {mine}, them {bid}: they lost {:.3} on this decision; banked {:+.3} (now {:.3})",
                settled.round, settled.their_loss, settled.gift, settled.banked
            ))?;
            if let Some(path) = &session {
                write_session(path, coach.lines())?;
            }
        }
        let (yours, theirs) = table.taken();
        let result = match yours.cmp(&theirs) {
            std::cmp::Ordering::Greater => "you win",
            std::cmp::Ordering::Less => "they win",
            std::cmp::Ordering::Equal => "a draw",
        };
        term.say(&format!(
            "\ngame over: you {yours}, them {theirs}: {result}"
        ))?;
        let Answer::Line(again) = term.ask("another game? [Y/n]> ")? else {
            break;
        };
        if again.eq_ignore_ascii_case("n") || again.eq_ignore_ascii_case("no") {
            break;
        }
        coach.next_game();
    }
    let habits = coach.habits();
    term.say("\nThe opponent's habits:")?;
    match (&habits.model, &habits.weights) {
        (Some(model), Some(weights)) => {
            term.say(&format!(
                "  over {} decisions they bid like {model}",
                habits.decisions
            ))?;
            let shown: Vec<String> = weights
                .iter()
                .map(|(rule, w)| format!("{rule} {:.0} %", w * 100.0))
                .collect();
            term.say(&format!("  ({})", shown.join(", ")))?;
        }
        _ => term.say("  no decision of theirs yet")?,
    }
    if !habits.loss_by_round.is_empty() {
        term.say(&format!(
            "  they lost {:.3} a decision against the equilibrium; by round: {}",
            habits.mean_loss,
            habits
                .loss_by_round
                .iter()
                .map(|(r, l)| format!("{r}: {l:.2}"))
                .collect::<Vec<_>>()
                .join(", ")
        ))?;
    }
    term.say(&format!("  the longest wait for advice: {longest:.2} s"))?;
    Ok(())
}
