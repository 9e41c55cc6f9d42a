//! What the benches that take a db share to read their command line.

use std::str::FromStr;

/// The number that follows option `name` in `args`, or why there is none.
pub fn number<T: FromStr>(
    args: &mut impl Iterator<Item = String>,
    name: &str,
) -> Result<T, String> {
    let text = args.next().ok_or(format!("{name} needs a value"))?;
    text.parse()
        .map_err(|_| format!("{name} {text}: not a number"))
}
