//! The cluster link against a real 3-server NATS cluster on 127.0.0.1.

#[path = "nats_util/mod.rs"]
mod nats_util;

use std::time::Duration;

use async_nats::jetstream::stream;
use tidewire_engine::cluster::{ClusterConfig, ClusterError, Link};

#[test]
fn link_connects_and_a_replicated_stream_survives_one_server() {
    if nats_util::skipped() {
        return;
    }
    let mut nats = nats_util::NatsCluster::start("link");
    let link = Link::connect(ClusterConfig::new(nats.urls(), "a")).expect("connect");
    assert!(link.connected());
    let js = link.jetstream();
    let info = link.handle().block_on(async {
        let mut s = loop {
            // The meta leader may still be settling right after start: retry until created.
            match js
                .get_or_create_stream(stream::Config {
                    name: "probe".into(),
                    subjects: vec!["probe.>".into()],
                    num_replicas: 3,
                    storage: stream::StorageType::File,
                    ..Default::default()
                })
                .await
            {
                Ok(s) => break s,
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        };
        for i in 0..10u32 {
            js.publish("probe.x", i.to_string().into())
                .await
                .unwrap()
                .await
                .unwrap();
        }
        s.info().await.unwrap().clone()
    });
    assert_eq!(info.state.messages, 10);
    assert_eq!(info.config.num_replicas, 3);

    // One server down: the stream still takes writes on the quorum of two.
    let leader = info
        .cluster
        .as_ref()
        .and_then(|c| c.leader.clone())
        .expect("a stream leader");
    nats.kill(nats.index_of(&leader).expect("leader is one of ours"));
    let stored = link.handle().block_on(async {
        loop {
            match js.publish("probe.x", "after".into()).await {
                Ok(ack) => match ack.await {
                    Ok(a) => break a.sequence,
                    Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
                },
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
    });
    assert_eq!(stored, 11);
}

#[test]
fn connect_refuses_bad_settings_and_unreachable_servers() {
    let mut cfg = ClusterConfig::new(vec!["nats://127.0.0.1:1".into()], "bad node");
    assert!(matches!(Link::connect(cfg.clone()), Err(ClusterError::Config(_))));
    cfg.node = "a".into();
    cfg.replicas = 0;
    assert!(matches!(Link::connect(cfg.clone()), Err(ClusterError::Config(_))));
    cfg.replicas = 3;
    cfg.connect_timeout = Duration::from_millis(300);
    match Link::connect(cfg) {
        Err(ClusterError::Connect { message, .. }) => assert!(message.contains("within"), "{message}"),
        other => panic!("expected a connect error, got {other:?}"),
    }
}

#[test]
fn nats_versions_are_read_from_the_version_line() {
    use nats_util::{nats_version_accepted, parse_nats_version, FIRST_BAD_NATS_VERSION, MIN_NATS_VERSION};
    assert_eq!(parse_nats_version("nats-server: v2.15.2\n"), Some((2, 15, 2)));
    assert_eq!(parse_nats_version("nats-server: v2.9.10"), Some((2, 9, 10)));
    assert_eq!(parse_nats_version("nats-server: v2.12.0-RC.1"), Some((2, 12, 0)));
    assert_eq!(parse_nats_version("nats-server: v2.15"), None);
    assert_eq!(parse_nats_version("nats-server: v2.15.2.1"), None);
    assert_eq!(parse_nats_version("nats-server: vx.y.z"), None);
    assert_eq!(parse_nats_version(""), None);
    assert_eq!(MIN_NATS_VERSION, (2, 12, 15));
    assert_eq!(FIRST_BAD_NATS_VERSION, (2, 14, 0));
    // compared as numbers, not text: 2.9.10 is older than 2.12.15
    let accepted = |line: &str| nats_version_accepted(parse_nats_version(line).unwrap());
    assert!(!accepted("nats-server: v2.9.10"));
    assert!(!accepted("nats-server: v2.11.17"));
    assert!(!accepted("nats-server: v2.12.14"));
    assert!(accepted("nats-server: v2.12.15"));
    assert!(accepted("nats-server: v2.13.0"));
    assert!(!accepted("nats-server: v2.14.0"));
    assert!(!accepted("nats-server: v2.15.2"));
    assert!(!accepted("nats-server: v3.0.0"));
}
