//! Prometheus metrics of a coordinator, rendered from its status on each scrape, and
//! the plain HTTP server that answers `/metrics`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use tokio::net::TcpListener;
use tracing::{info, warn};

use crate::cluster::Coordinator;

/// The metrics in the Prometheus text format.
pub fn render(core: &Coordinator) -> String {
    let Ok(status) = core.status(Instant::now()) else {
        return "# status unavailable\n".into();
    };
    let mut registry = Registry::with_prefix("gops");
    let gauge = |registry: &mut Registry, name: &str, help: &str, value: f64| {
        let g = Gauge::<f64, std::sync::atomic::AtomicU64>::default();
        g.set(value);
        registry.register(name, help, g);
    };
    let done_layers = status.run.layers.iter().filter(|l| l.complete).count();
    let done_slices: usize = status.run.layers.iter().map(|l| l.done).sum();
    let all_slices: usize = status.run.layers.iter().map(|l| l.slices).sum();
    gauge(
        &mut registry,
        "n",
        "Cards per player of the game being solved",
        f64::from(status.run.n),
    );
    gauge(
        &mut registry,
        "layers_complete",
        "Layers complete",
        done_layers as f64,
    );
    gauge(
        &mut registry,
        "open_layer",
        "The layer being solved (0 when complete)",
        f64::from(status.open_layer.unwrap_or(0)),
    );
    gauge(
        &mut registry,
        "slices_stored",
        "Slices stored over all layers",
        done_slices as f64,
    );
    gauge(
        &mut registry,
        "slices_total",
        "Slices of the whole game",
        all_slices as f64,
    );
    gauge(
        &mut registry,
        "workers_live",
        "Workers seen within two lease periods",
        status.workers.len() as f64,
    );
    gauge(
        &mut registry,
        "games_per_second",
        "Matrix games solved per second this run",
        status.games_per_second,
    );
    gauge(
        &mut registry,
        "slices_per_second",
        "Slices stored per second this run",
        status.slices_per_second,
    );
    gauge(
        &mut registry,
        "submissions_rejected",
        "Submissions that failed validation this run",
        status.rejected_submissions as f64,
    );
    if let Some(shards) = &status.shards {
        gauge(
            &mut registry,
            "shards_pending",
            "Shards of the open layer waiting",
            shards.pending as f64,
        );
        gauge(
            &mut registry,
            "shards_leased",
            "Shards of the open layer leased",
            shards.leased as f64,
        );
        gauge(
            &mut registry,
            "shards_done",
            "Shards of the open layer done",
            shards.done as f64,
        );
    }
    let mut text = String::new();
    if encode(&mut text, &registry).is_err() {
        return "# encoding failed\n".into();
    }
    text
}

/// Serves Prometheus metrics (text format) on `addr` until the task is dropped.
pub async fn serve_metrics(addr: SocketAddr, core: Arc<Coordinator>) -> std::io::Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = TcpListener::bind(addr).await?;
    info!(%addr, "metrics at /metrics");
    loop {
        let (mut socket, _) = listener.accept().await?;
        let core = Arc::clone(&core);
        tokio::spawn(async move {
            let mut request = [0u8; 1024];
            let _ = socket.read(&mut request).await;
            let body = tokio::task::spawn_blocking(move || render(&core))
                .await
                .unwrap_or_else(|e| format!("# metrics failed: {e}\n"));
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            if let Err(e) = socket.write_all(format!("{head}{body}").as_bytes()).await {
                warn!(error = %e, "metrics write failed");
            }
        });
    }
}
