//! Cluster mode: several Tidewire nodes sharing records and one replicated order book through a
//! NATS cluster with JetStream (docs/architecture.md, "Cluster mode").
//!
//! This module holds what every cluster part shares: the settings (`ClusterConfig`) and the
//! `Link`, one NATS connection per node driven by a small tokio runtime of its own (one worker
//! thread), so the engine thread never runs async code: it hands work to the link through
//! channels and takes results back as commands, like the journal writer thread does.

pub mod batch;
pub mod batch_meter;
pub mod chain;
pub mod lease;
pub mod nats_version;
pub mod orders;
pub mod records;
pub mod stages;
pub mod verdict;

use std::time::Duration;

use thiserror::Error;

/// Cluster settings (the server's `cluster.*` settings fill them).
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterConfig {
    /// NATS server URLs (`nats://host:port`); the client connects to any and fails over to the rest.
    pub urls: Vec<String>,
    /// This node's name: unique in the cluster, `[A-Za-z0-9_-]{1,64}` (it is a NATS subject token).
    pub node: String,
    /// The cluster's name: prefix of every NATS subject, stream and bucket this cluster uses, so
    /// two clusters can share one NATS system. Same rules as `node`.
    pub name: String,
    /// Replicas of the order stream (3 in production; 1 only for a single NATS server).
    pub replicas: usize,
    /// How long a request to NATS (a stream publish, a forwarded order) may take before it is
    /// answered `UNAVAILABLE`.
    pub request_timeout: Duration,
    /// How long the first connection may take at start-up.
    pub connect_timeout: Duration,
}

impl ClusterConfig {
    /// Settings with the defaults for everything but the URLs and the node name.
    pub fn new(urls: Vec<String>, node: impl Into<String>) -> ClusterConfig {
        ClusterConfig {
            urls,
            node: node.into(),
            name: "tidewire".to_owned(),
            replicas: 3,
            request_timeout: Duration::from_secs(2),
            connect_timeout: Duration::from_secs(10),
        }
    }

    /// Checks the settings (names usable as subject tokens, at least one URL, 1..=5 replicas).
    pub fn validate(&self) -> Result<(), ClusterError> {
        if self.urls.is_empty() {
            return Err(ClusterError::Config("cluster: at least one NATS URL is needed".into()));
        }
        for (what, v) in [("node", &self.node), ("name", &self.name)] {
            let ok = !v.is_empty()
                && v.len() <= 64
                && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
            if !ok {
                return Err(ClusterError::Config(format!(
                    "cluster: {what} {v:?} must be 1-64 characters of A-Z, a-z, 0-9, _ and -"
                )));
            }
        }
        if !(1..=5).contains(&self.replicas) {
            return Err(ClusterError::Config(format!(
                "cluster: replicas must be 1 to 5, not {}",
                self.replicas
            )));
        }
        Ok(())
    }

    /// `<name>.<suffix>`: a subject (or, with `_` for `.`, a stream / bucket name) of this cluster.
    pub fn subject(&self, suffix: &str) -> String {
        format!("{}.{suffix}", self.name)
    }
}

/// Why the cluster link failed.
#[derive(Debug, Error)]
pub enum ClusterError {
    /// Bad settings.
    #[error("{0}")]
    Config(String),
    /// No NATS server answered in time, or the connection failed.
    #[error("cluster: cannot connect to NATS ({urls}): {message}")]
    Connect {
        /// The URLs tried.
        urls: String,
        /// What the client said.
        message: String,
    },
    /// The link's runtime could not start.
    #[error("cluster: {0}")]
    Runtime(String),
}

/// One NATS connection and the runtime that drives it.
pub struct Link {
    cfg: ClusterConfig,
    client: async_nats::Client,
    /// The version the first NATS server named in its INFO (`version`).
    server_version: String,
    // Dropped last: stops the runtime's thread after the client's tasks.
    runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("node", &self.cfg.node)
            .field("urls", &self.cfg.urls)
            .finish_non_exhaustive()
    }
}

impl Link {
    /// Starts the runtime and connects (waiting up to `connect_timeout` for a first server).
    pub fn connect(cfg: ClusterConfig) -> Result<Link, ClusterError> {
        cfg.validate()?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name(format!("tw-cluster-{}", cfg.node))
            .enable_all()
            .build()
            .map_err(|e| ClusterError::Runtime(e.to_string()))?;
        let urls = cfg.urls.join(",");
        let opts = async_nats::ConnectOptions::new()
            .name(format!("tidewire-{}-{}", cfg.name, cfg.node))
            .connection_timeout(cfg.connect_timeout)
            .request_timeout(Some(cfg.request_timeout))
            .retry_on_initial_connect();
        let addrs: Vec<async_nats::ServerAddr> = cfg
            .urls
            .iter()
            .map(|u| {
                u.parse::<async_nats::ServerAddr>()
                    .map_err(|e| ClusterError::Config(format!("cluster: bad NATS URL {u:?}: {e}")))
            })
            .collect::<Result<_, _>>()?;
        let deadline = cfg.connect_timeout;
        let client = runtime.block_on(async move {
            let connecting = opts.connect(addrs.as_slice());
            let client = tokio::time::timeout(deadline, connecting)
                .await
                .map_err(|_| format!("no server answered within {} ms", deadline.as_millis()))?
                .map_err(|e| e.to_string())?;
            // retry_on_initial_connect returns at once: wait until the connection is up.
            let waited = tokio::time::timeout(deadline, async {
                while client.connection_state() != async_nats::connection::State::Connected {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            })
            .await;
            match waited {
                Ok(()) => Ok(client),
                Err(_) => Err(format!("no server answered within {} ms", deadline.as_millis())),
            }
        });
        let client = client.map_err(|message| ClusterError::Connect { urls, message })?;
        let server_version = client.server_info().version;
        Ok(Link {
            cfg,
            client,
            server_version,
            runtime,
        })
    }

    /// The settings.
    pub fn config(&self) -> &ClusterConfig {
        &self.cfg
    }

    /// The version the NATS server this link first connected to named (`version` in its INFO).
    pub fn server_version(&self) -> &str {
        &self.server_version
    }

    /// What that version means for cluster mode (`nats_version`); a warning for the log when
    /// it is not good.
    pub fn server_verdict(&self) -> nats_version::NatsVersion {
        nats_version::classify(&self.server_version)
    }

    /// The NATS client (cheap to clone; usable from any thread through `handle`).
    pub fn client(&self) -> &async_nats::Client {
        &self.client
    }

    /// A JetStream context over the client (it spawns its acker task on the link's runtime).
    pub fn jetstream(&self) -> async_nats::jetstream::Context {
        let _in_runtime = self.runtime.enter();
        async_nats::jetstream::new(self.client.clone())
    }

    /// The runtime's handle: `spawn` tasks, or `block_on` from a thread outside the runtime.
    pub fn handle(&self) -> &tokio::runtime::Handle {
        self.runtime.handle()
    }

    /// Whether the client is connected to a NATS server right now.
    pub fn connected(&self) -> bool {
        self.client.connection_state() == async_nats::connection::State::Connected
    }
}
