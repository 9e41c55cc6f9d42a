//! A hostile client with the run's token, attacking while two honest workers solve: it
//! acts under the honest workers' ids, hoards shards, submits garbage and forged slices,
//! asks for a slice many times over, floods hellos and leaves a slice stream unread. The
//! honest workers finish with no rejection against them, and the checksums equal the
//! single-process solve.

use std::time::Duration;

use gops_proto::call_metadata::submit_call;
use gops_proto::v1::{
    FetchRequest, HeartbeatRequest, HelloRequest, LeaseRequest, ReleaseRequest, SliceData,
    StatusRequest, SubmitRequest, lease_reply,
};
use gops_worker::{Client, connect};
use tonic::Code;

use crate::support::{Proc, checksums, listening_address, reference, temp_db};

const TOKEN: &str = "a-token-for-this-test-only";

async fn hello(client: &mut Client, name: &str) -> (u64, Vec<u8>) {
    let reply = client
        .hello(HelloRequest {
            protocol_version: gops_proto::PROTOCOL_VERSION,
            worker_name: name.into(),
            threads: 1,
        })
        .await
        .unwrap()
        .into_inner();
    (reply.worker_id, reply.session_key)
}

fn garbage(layer: u32, rank: u32) -> SliceData {
    SliceData {
        layer,
        prize_rank: rank,
        digest: vec![7; 32],
        body: vec![0; 64],
        max_gap: 0.0,
        games: 1,
    }
}

/// One round of every attack; the honest workers' ids come from the status. The number
/// of calls made in another worker's name (each refused).
async fn attack(client: &mut Client) -> usize {
    let status = client.status(StatusRequest {}).await.unwrap().into_inner();
    let layer = status.open_layer.unwrap_or(1);
    let honest: Vec<u64> = status
        .workers
        .iter()
        .filter(|w| w.name.starts_with("honest"))
        .map(|w| w.id)
        .collect();
    // acting for another worker: refused, and counted against nobody
    for &victim in &honest {
        let forged_key = vec![0x5A; 32];
        let submit = client
            .submit(submit_call(SubmitRequest {
                worker_id: victim,
                lease_id: 1,
                slices: vec![garbage(layer, 0)],
                session_key: forged_key.clone(),
            }))
            .await
            .unwrap_err();
        assert_eq!(
            submit.code(),
            Code::PermissionDenied,
            "{}",
            submit.message()
        );
        let release = client
            .release(ReleaseRequest {
                worker_id: victim,
                lease_id: 1,
                session_key: forged_key.clone(),
                failure: None,
            })
            .await
            .unwrap_err();
        assert_eq!(release.code(), Code::PermissionDenied);
        let beat = client
            .heartbeat(HeartbeatRequest {
                worker_id: victim,
                lease_id: 1,
                session_key: forged_key,
            })
            .await
            .unwrap_err();
        assert_eq!(beat.code(), Code::PermissionDenied);
    }
    let forged = 3 * honest.len();
    // hoarding: three leases at most (solving, handing in, leased ahead), then "wait"
    let (me, key) = hello(client, "mallory").await;
    let mut leases = Vec::new();
    for _ in 0..5 {
        let reply = client
            .lease(LeaseRequest {
                worker_id: me,
                session_key: key.clone(),
            })
            .await;
        match reply.map(|r| r.into_inner().reply) {
            Ok(Some(lease_reply::Reply::Shard(shard))) => leases.push(shard),
            Ok(_) => {}
            Err(status) => panic!("{status}"),
        }
    }
    let most = gops_coordinator::cluster::CoordinatorConfig::default().max_leases_per_worker;
    assert_eq!(most, 3);
    assert!(
        leases.len() <= most,
        "{} leases held by one worker",
        leases.len()
    );
    // garbage under its own lease, and forged slices under a lease never granted
    if let Some(shard) = leases.first() {
        let rank = shard.prize_ranks[0];
        for lease_id in [shard.lease_id, 999_999] {
            let reply = client
                .submit(submit_call(SubmitRequest {
                    worker_id: me,
                    lease_id,
                    slices: vec![garbage(shard.layer, rank)],
                    session_key: key.clone(),
                }))
                .await;
            match reply {
                // the honest workers completed that layer meanwhile: a late copy of a
                // complete layer is counted a duplicate, and nothing is stored
                Ok(late) => assert_eq!(late.into_inner().stored, 0),
                Err(err) => assert!(
                    matches!(err.code(), Code::InvalidArgument | Code::FailedPrecondition),
                    "{err}"
                ),
            }
        }
    }
    // one rank asked for many times
    if layer > 1 {
        let err = client
            .fetch_slices(FetchRequest {
                layer: layer - 1,
                prize_ranks: vec![0; 4000],
            })
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument);
    }
    forged
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_token_holder_cannot_stop_or_poison_honest_workers() {
    let (dir, db) = temp_db();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, TOKEN).unwrap();
    let token_arg = token_file.to_str().unwrap();
    let mut coordinator = Proc::spawn(&[
        "coordinator",
        "--n",
        "10",
        "--db",
        db.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
        "--token-file",
        token_arg,
        "--lease-ms",
        "1000",
        "--exit-when-done",
    ]);
    let url = format!("http://{}", listening_address(&mut coordinator));
    let workers: Vec<Proc> = (0..2)
        .map(|i| {
            Proc::spawn(&[
                "worker",
                "--coordinator",
                &url,
                "--token-file",
                token_arg,
                "--threads",
                "1",
                "--name",
                &format!("honest{i}"),
            ])
        })
        .collect();
    let mut client = connect(&url, Some(TOKEN)).unwrap();
    // a flood of sessions, then an unread slice stream held open throughout
    for i in 0..300 {
        hello(&mut client, &format!("flood{i}")).await;
    }
    let mut unread = None;
    let mut rounds = 0;
    let mut forged = 0;
    loop {
        let status = match client.status(StatusRequest {}).await {
            Ok(s) => s.into_inner(),
            // the coordinator exited once the run was complete
            Err(status) if rounds > 0 => {
                eprintln!("status: {status}");
                break;
            }
            Err(status) => panic!("status: {status}"),
        };
        if status.run.as_ref().is_some_and(|r| r.complete) {
            break;
        }
        if unread.is_none() && status.open_layer.unwrap_or(1) > 1 {
            let stream = client
                .fetch_slices(FetchRequest {
                    layer: 1,
                    prize_ranks: (0..8).collect(),
                })
                .await
                .unwrap();
            unread = Some(stream);
        }
        forged += attack(&mut client).await;
        rounds += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(rounds > 0, "the run ended before any attack");
    for w in workers {
        let (ok, lines) = w.finish();
        assert!(ok, "honest worker failed:\n{}", lines.join("\n"));
        assert!(
            lines.iter().any(|l| l.contains("rejected=0")),
            "an honest worker had a submission rejected:\n{}",
            lines.join("\n")
        );
    }
    let (ok, lines) = coordinator.finish();
    assert!(ok, "coordinator failed:\n{}", lines.join("\n"));
    assert!(forged > 0, "no call was made in an honest worker's name");
    eprintln!("{rounds} rounds of attacks, {forged} calls in honest workers' names");
    drop(unread);
    assert_eq!(checksums(&db), reference(10, "points"));
}
