//! A decision's exact loss. Let v be the value of the game revealed at a state (after
//! the upcard), M its payoff matrix for A and (x, y) the equilibrium. Against an opponent
//! who plays the equilibrium everywhere, a bot that mixes p loses, in expectation, v - pᵀ
//! M y in seat A and xᵀ M p - v in seat B (both at least 0, up to the kernel's
//! certificate gap). Summed along a game these telescope: the bot's expected result is
//! the game's value minus the expected sum of its decisions' losses.

use gops_db::read::RevealedGame;

use crate::protocol::Seat;

/// What the bot in `seat`, mixing `bot` over its cards (ascending), expects to earn in
/// `game` against the equilibrium opponent, for itself.
pub fn expected_payoff(seat: Seat, game: &RevealedGame, bot: &[f64]) -> f64 {
    let k = bot.len();
    debug_assert_eq!(game.matrix.len(), k * k);
    let (rows, cols) = match seat {
        Seat::A => (bot, &game.strategy_b[..]),
        Seat::B => (&game.strategy_a[..], bot),
    };
    let mut for_a = 0.0;
    for (i, &p) in rows.iter().enumerate() {
        if p == 0.0 {
            continue;
        }
        let row = &game.matrix[i * k..][..k];
        let earned: f64 = row.iter().zip(cols).map(|(m, q)| m * q).sum();
        for_a += p * earned;
    }
    seat.own(for_a)
}

/// The loss of the bot in `seat` mixing `bot` in `game`: the game's value for it minus
/// what it expects to earn.
pub fn decision_loss(seat: Seat, game: &RevealedGame, bot: &[f64]) -> f64 {
    seat.own(game.value) - expected_payoff(seat, game, bot)
}
