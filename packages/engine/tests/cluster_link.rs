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

/// The order stream fences each later message of a term on the previous message's id
/// (`Nats-Expected-Last-Msg-Id`): a refused fence must leave the stream taking the next writer's
/// messages (nats-server 2.14.0 and later, at least to 2.15.3, stop the stream on every replica
/// instead). The link also reads the server's version from its INFO.
#[test]
fn a_refused_last_msg_id_fence_leaves_the_stream_writable() {
    if nats_util::skipped() {
        return;
    }
    let nats = nats_util::NatsCluster::start("fence");
    let link = Link::connect(ClusterConfig::new(nats.urls(), "a")).expect("connect");
    let cli = std::process::Command::new("nats-server")
        .arg("--version")
        .output()
        .expect("nats-server --version");
    assert_eq!(
        nats_util::parse_nats_version(link.server_version()),
        nats_util::parse_nats_version(&String::from_utf8_lossy(&cli.stdout)),
        "INFO version {:?}",
        link.server_version()
    );
    let js = link.jetstream();
    let (refused, next) = link.handle().block_on(async {
        loop {
            let created = js
                .get_or_create_stream(stream::Config {
                    name: "fence".into(),
                    subjects: vec!["fence.>".into()],
                    num_replicas: 3,
                    storage: stream::StorageType::File,
                    ..Default::default()
                })
                .await;
            if created.is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let publish = |id: &'static str, fence: Option<&'static str>| {
            let js = js.clone();
            async move {
                let mut h = async_nats::HeaderMap::new();
                h.insert("Nats-Msg-Id", id);
                if let Some(last) = fence {
                    h.insert("Nats-Expected-Last-Sequence", "1");
                    h.insert("Nats-Expected-Last-Msg-Id", last);
                }
                match js.publish_with_headers("fence.x", h, id.into()).await {
                    Ok(ack) => ack.await.map(|a| a.sequence).map_err(|e| e.to_string()),
                    Err(e) => Err(e.to_string()),
                }
            }
        };
        // the first message, sent again (same id) while the new stream's leader settles
        let mut first = publish("one", None).await;
        for _ in 0..50 {
            if first.is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            first = publish("one", None).await;
        }
        assert_eq!(first, Ok(1));
        let refused = publish("stale", Some("not-one")).await;
        // the next writer's message: unanswered ones (5 s each) sent again with the same id, 6 times
        let mut next = publish("two", None).await;
        for _ in 0..5 {
            if next.is_ok() {
                break;
            }
            next = publish("two", None).await;
        }
        (refused, next)
    });
    let refused = refused.expect_err("a publish fenced on an id the stream's last message does not have");
    assert!(
        refused.contains("10070") || refused.contains("wrong last msg ID"),
        "{refused}"
    );
    assert_eq!(next, Ok(2), "the stream took no more writes after the refused fence");
}
