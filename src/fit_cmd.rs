//! `gops fit`: the mixture of the simple rules that best explains recorded decisions
//! (`gops_arena::agent::fit` does the work).

use gops_arena::agent::fit::{fit as fit_model, read_records};
use serde::Serialize;

use crate::args::FitArgs;
use crate::failure::Failure;

/// What `gops fit --json` prints.
#[derive(Serialize)]
struct FitReport {
    games: String,
    #[serde(flatten)]
    fit: gops_arena::agent::fit::Fit,
}

pub fn fit(args: FitArgs) -> Result<(), Failure> {
    let decisions = read_records(&args.games).map_err(|e| Failure::Usage(e.to_string()))?;
    let report = FitReport {
        games: args.games.display().to_string(),
        fit: fit_model(&decisions),
    };
    if args.json {
        crate::out!("{}", crate::output::json_line(&report));
        return Ok(());
    }
    let fit = &report.fit;
    crate::out!(
        "{} decisions of {} fitted to {}",
        fit.decisions,
        report.games,
        fit.model
    );
    for (rule, weight) in &fit.weights {
        crate::out!("  {rule:<16} {weight:.6}");
    }
    crate::out!(
        "log likelihood {:.4} ({:.6} a decision), {} steps of EM",
        fit.log_likelihood,
        fit.mean_log_likelihood,
        fit.steps
    );
    crate::out!("use it as a model: fit:{}", report.games);
    Ok(())
}
