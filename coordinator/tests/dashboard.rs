//! The Grafana dashboard in `deploy/grafana`: it parses, its panels have titles, and
//! every metric its queries use is one the coordinator exports.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use gops_common::objective::Objective;
use gops_coordinator::cluster::{Coordinator, CoordinatorConfig};
use gops_coordinator::report::metrics::render;
use gops_coordinator::report::observer::Silent;
use gops_db::store::Store;
use serde_json::Value;

const DASHBOARD: &str = "../deploy/grafana/gops-coordinator.json";

/// Every `gops_[a-z_]+` word of `text`.
fn metric_names(text: &str, into: &mut BTreeSet<String>) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(at) = text[i..].find("gops_") {
        let start = i + at;
        let preceded =
            start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_');
        let mut end = start + "gops_".len();
        while end < bytes.len() && (bytes[end].is_ascii_lowercase() || bytes[end] == b'_') {
            end += 1;
        }
        if !preceded && end > start + "gops_".len() {
            into.insert(text[start..end].to_string());
        }
        i = end;
    }
}

/// The metric names in every `expr` (panel queries) and `query` (template variables)
/// string anywhere in the dashboard.
fn queried(value: &Value, into: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                match (key.as_str(), v) {
                    ("expr" | "query", Value::String(s)) => metric_names(s, into),
                    ("query", Value::Object(q)) => {
                        if let Some(Value::String(s)) = q.get("query") {
                            metric_names(s, into);
                        }
                    }
                    _ => queried(v, into),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| queried(v, into)),
        _ => {}
    }
}

/// The metric names of a rendering: the names on its `# TYPE` lines.
fn exported(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

#[test]
fn the_dashboard_uses_only_exported_metrics() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(DASHBOARD);
    let text = std::fs::read_to_string(&path).unwrap();
    let dashboard: Value = serde_json::from_str(&text).unwrap();

    let panels = dashboard["panels"].as_array().expect("panels");
    assert!(!panels.is_empty());
    for panel in panels {
        let title = panel["title"].as_str().unwrap_or_default();
        assert!(!title.trim().is_empty(), "a panel without a title: {panel}");
        if panel["type"] != "row" {
            let targets = panel["targets"].as_array().map(Vec::len).unwrap_or(0);
            assert!(targets > 0, "panel {title} has no query");
        }
    }

    let mut used = BTreeSet::new();
    queried(&dashboard, &mut used);
    assert!(
        used.len() >= 5,
        "too few metrics found in the queries: {used:?}"
    );

    // a fresh run has an open layer, so every metric (shards included) is rendered
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_or_create(&dir.path().join("db"), 3, Objective::Points).unwrap();
    let core = Coordinator::new(store, CoordinatorConfig::default(), Arc::new(Silent)).unwrap();
    let rendered = render(&core);
    let exported = exported(&rendered);
    assert!(exported.contains("gops_shards_pending"), "{rendered}");
    let unknown: Vec<_> = used.difference(&exported).collect();
    assert!(
        unknown.is_empty(),
        "the dashboard queries metrics the coordinator does not export: {unknown:?}\n{rendered}"
    );
}

#[test]
fn metric_names_are_found_in_promql() {
    let mut names = BTreeSet::new();
    metric_names(
        "(gops_slices_total{instance=~\"$instance\"} - gops_slices_stored) / rate(gops_x[5m]) + notgops_y + gops_",
        &mut names,
    );
    let want: BTreeSet<String> = ["gops_slices_total", "gops_slices_stored", "gops_x"]
        .map(String::from)
        .into();
    assert_eq!(names, want);
}
