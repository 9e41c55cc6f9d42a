//! `gops export`: every format read back with its own reader (csv, serde_json, parquet,
//! rusqlite), the formats agree with each other, and sampled rows equal what
//! `gops value` / `gops strategy` print for the same states; the SQLite file answers a
//! one-state lookup through its index; bad arguments leave nothing behind.

use std::collections::HashSet;
use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, UInt8Type};
use arrow_array::{Array, ListArray};
use gops_common::objective::Objective;
use gops_common::plan::LayerSize;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::Value;

use crate::support::{gops, gops_ok, snapshot, solve, state_query, stderr, temp_db};

/// One row as read back from a file.
#[derive(Clone, Debug, PartialEq)]
struct Row {
    k: u8,
    pattern: String,
    a: Vec<u8>,
    b: Vec<u8>,
    prizes: Vec<u8>,
    diff: i32,
    upcard: Option<u8>,
    value: f64,
    strategy_a: Option<Vec<f64>>,
    strategy_b: Option<Vec<f64>>,
    gap: Option<f64>,
}

fn list<T: std::str::FromStr>(text: &str) -> Vec<T>
where
    T::Err: std::fmt::Debug,
{
    text.split(',')
        .filter(|t| !t.is_empty())
        .map(|t| t.parse().unwrap())
        .collect()
}

fn optional<T: std::str::FromStr>(text: &str) -> Option<T>
where
    T::Err: std::fmt::Debug,
{
    (!text.is_empty()).then(|| text.parse().unwrap())
}

fn read_csv(path: &Path) -> Vec<Row> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        header,
        [
            "k",
            "pattern",
            "a",
            "b",
            "prizes",
            "diff",
            "upcard",
            "value",
            "strategy_a",
            "strategy_b",
            "gap"
        ]
    );
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            Row {
                k: r[0].parse().unwrap(),
                pattern: r[1].to_string(),
                a: list(&r[2]),
                b: list(&r[3]),
                prizes: list(&r[4]),
                diff: r[5].parse().unwrap(),
                upcard: optional(&r[6]),
                value: r[7].parse().unwrap(),
                strategy_a: (!r[8].is_empty()).then(|| list(&r[8])),
                strategy_b: (!r[9].is_empty()).then(|| list(&r[9])),
                gap: optional(&r[10]),
            }
        })
        .collect()
}

fn read_jsonl(path: &Path) -> Vec<Row> {
    let numbers = |v: &Value| -> Option<Vec<f64>> {
        v.as_array()
            .map(|a| a.iter().map(|x| x.as_f64().unwrap()).collect())
    };
    let cards = |v: &Value| -> Vec<u8> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as u8)
            .collect()
    };
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).unwrap();
            Row {
                k: v["k"].as_u64().unwrap() as u8,
                pattern: v["pattern"].as_str().unwrap().to_string(),
                a: cards(&v["a"]),
                b: cards(&v["b"]),
                prizes: cards(&v["prizes"]),
                diff: v["diff"].as_i64().unwrap() as i32,
                upcard: v["upcard"].as_u64().map(|c| c as u8),
                value: v["value"].as_f64().unwrap(),
                strategy_a: numbers(&v["strategy_a"]),
                strategy_b: numbers(&v["strategy_b"]),
                gap: v["gap"].as_f64(),
            }
        })
        .collect()
}

fn read_parquet(path: &Path) -> Vec<Row> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let metadata = builder.schema().metadata().clone();
    assert!(metadata.contains_key("gops.n") && metadata.contains_key("gops.objective"));
    let mut rows = Vec::new();
    for batch in builder.build().unwrap() {
        let batch = batch.unwrap();
        let column = |name: &str| batch.column_by_name(name).unwrap().clone();
        let k = column("k");
        let k = k.as_primitive::<UInt8Type>();
        let pattern = column("pattern");
        let pattern = pattern.as_string::<i32>();
        let cards = |name: &str, i: usize| -> Vec<u8> {
            let array = column(name);
            let list: &ListArray = array.as_list();
            list.value(i).as_primitive::<UInt8Type>().values().to_vec()
        };
        let probabilities = |name: &str, i: usize| -> Option<Vec<f64>> {
            let array = column(name);
            let list: &ListArray = array.as_list();
            (!list.is_null(i)).then(|| {
                list.value(i)
                    .as_primitive::<Float64Type>()
                    .values()
                    .to_vec()
            })
        };
        let diff = column("diff");
        let diff = diff.as_primitive::<Int32Type>();
        let upcard = column("upcard");
        let upcard = upcard.as_primitive::<UInt8Type>();
        let value = column("value");
        let value = value.as_primitive::<Float64Type>();
        let gap = column("gap");
        let gap = gap.as_primitive::<Float64Type>();
        for i in 0..batch.num_rows() {
            rows.push(Row {
                k: k.value(i),
                pattern: pattern.value(i).to_string(),
                a: cards("a", i),
                b: cards("b", i),
                prizes: cards("prizes", i),
                diff: diff.value(i),
                upcard: (!upcard.is_null(i)).then(|| upcard.value(i)),
                value: value.value(i),
                strategy_a: probabilities("strategy_a", i),
                strategy_b: probabilities("strategy_b", i),
                gap: (!gap.is_null(i)).then(|| gap.value(i)),
            });
        }
    }
    rows
}

fn read_sqlite(path: &Path) -> Vec<Row> {
    let connection = rusqlite::Connection::open(path).unwrap();
    let mut query = connection
        .prepare("SELECT k, pattern, a, b, prizes, diff, upcard, value, strategy_a, strategy_b, gap FROM states ORDER BY rowid")
        .unwrap();
    query
        .query_map([], |r| {
            let text = |i: usize| -> rusqlite::Result<String> { r.get(i) };
            let probabilities = |i: usize| -> rusqlite::Result<Option<Vec<f64>>> {
                Ok(r.get::<_, Option<String>>(i)?.map(|t| list(&t)))
            };
            Ok(Row {
                k: r.get(0)?,
                pattern: text(1)?,
                a: list(&text(2)?),
                b: list(&text(3)?),
                prizes: list(&text(4)?),
                diff: r.get(5)?,
                upcard: r.get(6)?,
                value: r.get(7)?,
                strategy_a: probabilities(8)?,
                strategy_b: probabilities(9)?,
                gap: r.get(10)?,
            })
        })
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn export(db: &Path, dir: &Path, format: &str, extra: &[&str]) -> PathBuf {
    let out = dir.join(format!("export-{}.{format}", extra.join("")));
    let mut args = vec![
        "export",
        "--db",
        db.to_str().unwrap(),
        "--format",
        format,
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let printed = gops_ok(&args);
    assert!(printed.starts_with("exported "), "{printed}");
    out
}

/// Exports in all four formats, checks they read back identical, and returns the rows.
fn export_all_formats(db: &Path, dir: &Path, extra: &[&str]) -> Vec<Row> {
    let csv = read_csv(&export(db, dir, "csv", extra));
    let jsonl = read_jsonl(&export(db, dir, "jsonl", extra));
    let parquet = read_parquet(&export(db, dir, "parquet", extra));
    let sqlite = read_sqlite(&export(db, dir, "sqlite", extra));
    assert!(!csv.is_empty());
    for (name, other) in [
        ("jsonl", &jsonl),
        ("parquet", &parquet),
        ("sqlite", &sqlite),
    ] {
        assert_eq!(csv.len(), other.len(), "rows in csv and {name}");
        if let Some((x, y)) = csv.iter().zip(other).find(|(x, y)| x != y) {
            panic!("csv and {name} differ:\n{x:?}\n{y:?}");
        }
    }
    csv
}

/// `gops value` or `gops strategy` for the state of `row`, as JSON.
fn cli_for(db: &Path, row: &Row) -> Value {
    state_query(
        db,
        (&row.a, &row.b, &row.prizes),
        i64::from(row.diff),
        row.upcard,
    )
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// Every `step`-th row against the command line, within `tolerance` (0: the command
/// solves the same matrix, so the numbers are the same bits).
fn check_rows_against_cli(db: &Path, rows: &[Row], step: usize, tolerance: f64) {
    for row in rows.iter().step_by(step) {
        let printed = cli_for(db, row);
        let close = |x: f64, y: f64| (x - y).abs() <= tolerance;
        assert!(
            close(printed["value"].as_f64().unwrap(), row.value),
            "{row:?} vs {printed}"
        );
        match row.upcard {
            None => assert!(row.strategy_a.is_none() && row.gap.is_none()),
            Some(_) => {
                for (key, exported) in [
                    ("strategy_a", &row.strategy_a),
                    ("strategy_b", &row.strategy_b),
                ] {
                    let exported = exported.as_ref().unwrap();
                    let printed = floats(&printed[key]);
                    assert_eq!(exported.len(), printed.len());
                    assert!(
                        exported.iter().zip(&printed).all(|(x, y)| close(*x, *y)),
                        "{key} of {row:?}: {printed:?}"
                    );
                }
                assert!(row.gap.unwrap() <= 1e-9);
            }
        }
    }
}

#[test]
fn every_format_reads_back_equal_to_value_and_strategy() {
    let (dir, db) = temp_db();
    solve(&db, 5, &[]);
    let rows = export_all_formats(&db, dir.path(), &[]);
    // one row per canonical state and one per state and upcard: layer k has k + 1 rows
    // per state, and canonical patterns are written once
    let states: HashSet<(String, Vec<u8>)> = rows
        .iter()
        .map(|r| (r.pattern.clone(), r.prizes.clone()))
        .collect();
    let per_state = |k: u8| rows.iter().filter(|r| r.k == k).count() / (usize::from(k) + 1);
    assert_eq!(
        (1..=5).map(per_state).sum::<usize>(),
        states.len(),
        "rows per state"
    );
    // every canonical state of the game, those whose value is exactly -1 or +1 too (a
    // one-card state with prize 1 left is worth exactly ±1)
    let canonical: u64 = (1..=5)
        .map(|k| LayerSize::of(5, k, Objective::Points).dense_values)
        .sum();
    assert_eq!(states.len() as u64, canonical, "every canonical state");
    assert!(
        rows.iter()
            .any(|r| r.upcard.is_none() && r.value.abs() == 1.0)
    );
    check_rows_against_cli(&db, &rows, 13, 0.0);

    // concrete rows: every (A, B) of both orientations; a sample equals the command line
    let concrete = export_all_formats(&db, dir.path(), &["--concrete", "--layers", "2..3"]);
    assert!(concrete.iter().all(|r| (2..=3).contains(&r.k)));
    assert!(concrete.len() > rows.iter().filter(|r| (2..=3).contains(&r.k)).count());
    let canonical_patterns: HashSet<&str> = rows.iter().map(|r| r.pattern.as_str()).collect();
    assert!(
        concrete
            .iter()
            .any(|r| !canonical_patterns.contains(r.pattern.as_str())),
        "concrete export has both orientations"
    );
    check_rows_against_cli(&db, &concrete, 17, 0.0);
}

#[test]
fn win_export_carries_the_score_difference() {
    let (dir, db) = temp_db();
    solve(&db, 4, &["--objective", "win"]);
    let rows = export_all_formats(&db, dir.path(), &[]);
    assert!(rows.iter().any(|r| r.diff != 0));
    // by default only undecided differences are written
    assert!(
        rows.iter()
            .filter(|r| r.upcard.is_none())
            .all(|r| r.value.abs() < 1.0)
    );
    check_rows_against_cli(&db, &rows, 7, 0.0);
    let all = export_all_formats(&db, dir.path(), &["--all-diffs"]);
    assert!(all.len() > rows.len());
    assert!(all.iter().any(|r| r.upcard.is_none() && r.value == 1.0));
    check_rows_against_cli(&db, &all, 11, 0.0);
}

#[test]
fn sqlite_lookup_of_one_state_equals_value() {
    let (dir, db) = temp_db();
    solve(&db, 5, &[]);
    let out = export(&db, dir.path(), "sqlite", &["--concrete"]);
    let connection = rusqlite::Connection::open(&out).unwrap();
    let lookup = "SELECT value FROM states WHERE a = ?1 AND b = ?2 AND prizes = ?3 AND diff = 0 AND upcard IS NULL";
    let plan: String = connection
        .query_row(
            &format!("EXPLAIN QUERY PLAN {lookup}"),
            ["1,4", "2,4", "3,5"],
            |r| r.get(3),
        )
        .unwrap();
    assert!(plan.contains("states_by_hands"), "lookup plan: {plan}");
    for (a, b, prizes) in [
        ("1,4", "2,4", "3,5"),
        ("2,3,5", "1,4,5", "1,2,3"),
        ("1", "1", "4"),
    ] {
        let stored: f64 = connection
            .query_row(lookup, [a, b, prizes], |r| r.get(0))
            .unwrap();
        let printed: Value = serde_json::from_str(&gops_ok(&[
            "value",
            "--db",
            db.to_str().unwrap(),
            "--a",
            a,
            "--b",
            b,
            "--prizes",
            prizes,
            "--json",
        ]))
        .unwrap();
        assert_eq!(
            stored,
            printed["value"].as_f64().unwrap(),
            "{a} {b} {prizes}"
        );
    }
    let n: String = connection
        .query_row("SELECT value FROM meta WHERE key = 'n'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, "5");
}

#[test]
fn bad_export_arguments_leave_files_alone() {
    let (dir, db) = temp_db();
    solve(&db, 3, &[]);
    let out = dir.path().join("keep.csv");
    std::fs::write(&out, "precious").unwrap();
    let before = snapshot(dir.path());
    let db_text = db.to_str().unwrap();
    let out_text = out.to_str().unwrap();
    for (args, needle) in [
        (vec!["--format", "csv", "--out", out_text], "exists"),
        (vec!["--format", "xml", "--out", "x.xml"], "xml"),
        (
            vec!["--format", "csv", "--out", "y.csv", "--layers", "0..2"],
            "--layers",
        ),
        (
            vec!["--format", "csv", "--out", "y.csv", "--layers", "3..2"],
            "--layers",
        ),
        (
            vec!["--format", "csv", "--out", "y.csv", "--layers", "4"],
            "--layers",
        ),
    ] {
        let mut full = vec!["export", "--db", db_text];
        full.extend(args);
        let output = gops(&full);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{full:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(needle),
            "{full:?}: {}",
            stderr(&output)
        );
    }
    assert_eq!(snapshot(dir.path()), before);
    // --force replaces it
    gops_ok(&[
        "export", "--db", db_text, "--format", "csv", "--out", out_text, "--force",
    ]);
    assert!(
        std::fs::read_to_string(&out)
            .unwrap()
            .starts_with("k,pattern")
    );
}
