//! What the runtime needs to start in cluster mode: the node's link and the record replication
//! settings (`Engine::start_with_cluster`).

use std::sync::Arc;

use crate::cluster::records::RecordsConfig;
use crate::cluster::{ClusterConfig, Link};
use crate::error::{EngineError, Result};

/// What `Engine::start_with_cluster` needs for cluster mode.
#[derive(Debug)]
pub struct ClusterStart {
    /// The node's NATS link (shared with the order stream).
    pub link: Arc<Link>,
    /// Record replication settings.
    pub records: RecordsConfig,
}

impl ClusterStart {
    /// Connects to NATS with `cfg` (waiting up to its connect timeout), with the default record
    /// replication settings. INTERNAL (the message names the URLs and the cause) when no server
    /// answers or the settings are bad.
    pub fn connect(cfg: ClusterConfig) -> Result<ClusterStart> {
        let link = Link::connect(cfg).map_err(|e| EngineError::Internal { message: e.to_string() })?;
        Ok(ClusterStart {
            link: Arc::new(link),
            records: RecordsConfig::default(),
        })
    }
}

/// This machine's host name (the default cluster node name): `$HOSTNAME`, else /etc/hostname,
/// else `node`. A node name is a NATS subject token: `web-1.example.com` -> `web-1-example-com`.
pub fn host_name() -> String {
    let from_env = std::env::var("HOSTNAME").ok().filter(|h| !h.trim().is_empty());
    from_env
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| {
            h.trim()
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                        c
                    } else {
                        '-'
                    }
                })
                .take(64)
                .collect::<String>()
        })
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "node".to_owned())
}
