//! TLS between the cluster's processes: a coordinator with `--tls-cert/--tls-key` serves
//! TLS only, with a certificate the test makes itself (rcgen); workers and `status`
//! trust it through `--tls-ca`; strangers are refused with clear errors; bad TLS flags
//! and files are bad input.

use std::path::{Path, PathBuf};

use crate::support::{Proc, checksums, gops, listening_address, reference, stderr, temp_db};

/// A self-signed certificate for localhost and 127.0.0.1 and its key, as PEM files
/// `NAME.crt` and `NAME.key` in `dir`.
fn self_signed(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let made = rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()])
        .expect("rcgen makes a certificate");
    let cert = dir.join(format!("{name}.crt"));
    let key = dir.join(format!("{name}.key"));
    std::fs::write(&cert, made.cert.pem()).unwrap();
    std::fs::write(&key, made.signing_key.serialize_pem()).unwrap();
    (cert, key)
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs `gops args`, expects exit code `code` with one line on stderr containing every
/// one of `needles`.
fn fails_with(args: &[&str], code: i32, needles: &[&str]) {
    let out = gops(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(code), "gops {args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "gops {args:?}: {err}");
    for needle in needles {
        assert!(
            err.contains(needle),
            "gops {args:?}: no '{needle}' in: {err}"
        );
    }
}

#[test]
fn a_tls_cluster_matches_the_single_process_run_and_refuses_strangers() {
    let (dir, db) = temp_db();
    let (cert, key) = self_signed(dir.path(), "coordinator");
    let (stranger, _) = self_signed(dir.path(), "stranger");
    let token = dir.path().join("token");
    std::fs::write(&token, "s3cret\n").unwrap();
    let mut coord = Proc::spawn(&[
        "coordinator",
        "--n",
        "6",
        "--db",
        path(&db),
        "--listen",
        "127.0.0.1:0",
        "--tls-cert",
        path(&cert),
        "--tls-key",
        path(&key),
        "--token-file",
        path(&token),
        "--exit-when-done",
        "--lease-ms",
        "2000",
    ]);
    let address = listening_address(&mut coord);
    let port = address.rsplit(':').next().unwrap();
    let url = format!("https://{address}");
    let by_name = format!("https://localhost:{port}");
    let (ca, tok) = (path(&cert), path(&token));

    // the run is open: nobody has solved anything yet, so these cannot race its end
    let status = |url: &str, extra: &[&str]| {
        let mut args = vec!["status", "--coordinator", url, "--json"];
        args.extend_from_slice(extra);
        gops(&args)
    };
    for (extra, why) in [
        (vec!["--token-file", tok], "UnknownIssuer"), // the webpki roots do not know it
        (
            vec!["--token-file", tok, "--tls-ca", path(&stranger)],
            "invalid peer certificate",
        ),
    ] {
        let out = status(&url, &extra);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        for needle in ["TLS with the coordinator failed", why] {
            assert!(stderr(&out).contains(needle), "{extra:?}: {}", stderr(&out));
        }
    }
    // a plain client gets no answer from a TLS server
    let plain = format!("http://{address}");
    let out = status(&plain, &["--token-file", tok]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("use https://"), "{}", stderr(&out));
    // the token is still checked behind TLS
    let out = status(&url, &["--tls-ca", ca]);
    assert!(
        stderr(&out).contains("missing or wrong token"),
        "{}",
        stderr(&out)
    );
    let out = status(&by_name, &["--tls-ca", ca, "--token-file", tok]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (json["n"].as_u64(), json["complete"].as_bool()),
        (Some(6), Some(false))
    );

    // a worker that does not trust the certificate stops at once instead of retrying
    let refused = Proc::spawn(&[
        "worker",
        "--coordinator",
        &url,
        "--token-file",
        tok,
        "--tls-ca",
        path(&stranger),
    ]);
    let (ok, lines) = refused.finish();
    assert!(!ok);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("refused") && l.contains("TLS")),
        "{}",
        lines.join("\n")
    );
    // a plain worker retries (it cannot tell a TLS server from a broken network) and
    // gives up
    let plain_worker = Proc::spawn(&[
        "worker",
        "--coordinator",
        &plain,
        "--token-file",
        tok,
        "--give-up-secs",
        "1",
    ]);
    let (ok, lines) = plain_worker.finish();
    assert!(!ok);
    // never reached (no hello answered): the first-contact message
    assert!(
        lines
            .iter()
            .any(|l| l.contains("could not reach the coordinator")),
        "{}",
        lines.join("\n")
    );

    let solver = Proc::spawn(&[
        "worker",
        "--coordinator",
        &url,
        "--token-file",
        tok,
        "--tls-ca",
        ca,
        "--threads",
        "1",
    ]);
    let (ok, lines) = solver.finish();
    assert!(ok, "{}", lines.join("\n"));
    assert!(
        lines.iter().any(|l| l.contains("run finished")),
        "{}",
        lines.join("\n")
    );
    let (ok, lines) = coord.finish();
    assert!(ok, "{}", lines.join("\n"));
    assert!(
        lines.iter().any(|l| l.contains("tls=true")),
        "{}",
        lines.join("\n")
    );
    assert_eq!(checksums(&db), reference(6, "points"));
}

#[test]
fn bad_tls_flags_and_files_are_bad_input() {
    let (dir, db) = temp_db();
    let (cert, key) = self_signed(dir.path(), "good");
    let (_, other_key) = self_signed(dir.path(), "other");
    let garbage = dir.path().join("garbage.pem");
    std::fs::write(&garbage, "not a certificate\n").unwrap();
    let broken = dir.path().join("broken.pem");
    std::fs::write(
        &broken,
        "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    let missing = dir.path().join("missing.pem");
    let coordinator = |extra: &[&str]| -> Vec<String> {
        let mut args = vec![
            "coordinator",
            "--n",
            "4",
            "--db",
            path(&db),
            "--listen",
            "127.0.0.1:0",
        ];
        args.extend_from_slice(extra);
        args.into_iter().map(String::from).collect()
    };
    let cases: Vec<(Vec<String>, Vec<&str>)> = vec![
        (coordinator(&["--tls-cert", path(&cert)]), vec!["--tls-key"]),
        (coordinator(&["--tls-key", path(&key)]), vec!["--tls-cert"]),
        (
            coordinator(&["--tls-cert", path(&garbage), "--tls-key", path(&key)]),
            vec!["--tls-cert", "garbage.pem", "no PEM certificate"],
        ),
        (
            coordinator(&["--tls-cert", path(&broken), "--tls-key", path(&key)]),
            vec!["--tls-cert", "broken.pem", "not usable"],
        ),
        (
            coordinator(&["--tls-cert", path(&cert), "--tls-key", path(&garbage)]),
            vec!["--tls-key", "garbage.pem", "no PEM private key"],
        ),
        (
            coordinator(&["--tls-cert", path(&cert), "--tls-key", path(&missing)]),
            vec!["cannot read --tls-key", "missing.pem"],
        ),
        (
            coordinator(&["--tls-cert", path(&cert), "--tls-key", path(&other_key)]),
            vec!["--tls-cert", "--tls-key", "KeyMismatch"],
        ),
    ];
    let https = "https://127.0.0.1:1";
    let clients: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (
            vec![
                "worker",
                "--coordinator",
                "http://127.0.0.1:1",
                "--tls-ca",
                path(&cert),
            ],
            vec!["not https://"],
        ),
        (
            vec!["worker", "--coordinator", https, "--tls-ca", path(&garbage)],
            vec!["--tls-ca", "garbage.pem", "no PEM certificate"],
        ),
        (
            vec!["worker", "--coordinator", https, "--tls-ca", path(&broken)],
            vec!["--tls-ca", "broken.pem", "not usable"],
        ),
        (
            vec!["status", "--coordinator", https, "--tls-ca", path(&missing)],
            vec!["cannot read --tls-ca", "missing.pem"],
        ),
        (
            vec![
                "status",
                "--coordinator",
                "http://127.0.0.1:1",
                "--tls-ca",
                path(&cert),
            ],
            vec!["not https://"],
        ),
        (
            vec!["status", "--db", path(&db), "--tls-ca", path(&cert)],
            vec!["--tls-ca", "--db"],
        ),
    ];
    let cases = cases
        .iter()
        .map(|(args, needles)| (args.iter().map(String::as_str).collect::<Vec<_>>(), needles))
        .chain(
            clients
                .iter()
                .map(|(args, needles)| (args.clone(), needles)),
        );
    for (args, needles) in cases {
        fails_with(&args, 2, needles);
    }
    assert!(!db.exists(), "a refused coordinator created its db");
}
