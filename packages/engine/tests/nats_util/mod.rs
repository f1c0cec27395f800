//! A real 3-server NATS cluster with JetStream on 127.0.0.1, for the cluster tests (included with
//! `#[path]`, not a test target of its own). Each server gets its own client, route and monitor
//! ports and its own store directory; servers can be killed (SIGKILL) and started again on the
//! same ports and store. Needs `nats-server` on the PATH, at least [`MIN_NATS_VERSION`]
//! (`.ci/run` installs the pinned one with `go install`).
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tidewire_engine::cluster::nats_version;

/// The oldest nats-server the cluster tests accept under `CI=true` (`.ci/run` pins this one).
/// Older servers (Debian's 2.9) can leave a stream's replicas holding different messages at one
/// seq after a lost quorum, which the quorum tests then catch as a flake.
pub const MIN_NATS_VERSION: (u32, u32, u32) = nats_version::PINNED;

/// The first nats-server the cluster tests refuse under `CI=true`: from it (at least up to
/// 2.15.3) a publish refused on `Nats-Expected-Last-Msg-Id` stops the stream for good.
pub const FIRST_BAD_NATS_VERSION: (u32, u32, u32) = nats_version::MSG_ID_FENCE_BROKEN_FROM;

/// `(major, minor, patch)` from `nats-server --version` output (`nats-server: v2.12.15`); `None`
/// when it names no such version.
pub fn parse_nats_version(out: &str) -> Option<(u32, u32, u32)> {
    nats_version::parse(out)
}

/// Whether the cluster tests accept `version` under `CI=true`: from [`MIN_NATS_VERSION`] up to,
/// not including, [`FIRST_BAD_NATS_VERSION`].
pub fn nats_version_accepted(version: (u32, u32, u32)) -> bool {
    (MIN_NATS_VERSION..FIRST_BAD_NATS_VERSION).contains(&version)
}

/// Whether `nats-server` can be run here. Under `CI=true` its absence, or a version outside
/// [`nats_version_accepted`], is a failure, not a skip; outside CI such a server runs the tests
/// with a warning on stderr (the benches compare versions with it).
pub fn nats_available() -> bool {
    let ci = std::env::var("CI").as_deref() == Ok("true");
    let out = Command::new("nats-server")
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success());
    let Some(out) = out else {
        if ci {
            panic!("nats-server is not on the PATH (CI must install it: .ci/run)");
        }
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let (a, b, c) = MIN_NATS_VERSION;
    match parse_nats_version(&text) {
        Some(v) if nats_version_accepted(v) => {}
        found => {
            let found = found.map_or_else(|| format!("{:?}", text.trim()), |(x, y, z)| format!("v{x}.{y}.{z}"));
            // the problem and the fix for a known-bad one; else (2.12.0..2.12.14) the pin
            let why = nats_version::classify(&text).warning().unwrap_or_else(|| {
                format!(
                    "older than the pinned v{a}.{b}.{c}: install it with `go install \
                     github.com/nats-io/nats-server/v2@v{a}.{b}.{c}` and put $(go env GOPATH)/bin first on the PATH"
                )
            });
            let msg = format!("nats-server on the PATH is {found}: {why}");
            if ci {
                panic!("{msg}");
            }
            eprintln!("warning: {msg}; running the cluster tests on it anyway");
        }
    }
    true
}

/// Whether a cluster test is skipped here: `nats-server` cannot be run (outside CI; under
/// `CI=true` `nats_available` fails the test instead). Says so on stderr. A test starts with
/// `if nats_util::skipped() { return; }`.
pub fn skipped() -> bool {
    let skip = !nats_available();
    if skip {
        eprintln!("nats-server not found: skipped");
    }
    skip
}

/// `n` distinct free ports: every listener is held until all are chosen (a port just released
/// can come back from the next ephemeral bind).
fn free_ports(n: usize) -> Vec<u16> {
    let held: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port"))
        .collect();
    held.iter()
        .map(|l| l.local_addr().expect("local addr").port())
        .collect()
}

struct Server {
    name: String,
    client_port: u16,
    cluster_port: u16,
    monitor_port: u16,
    store: PathBuf,
    conf: PathBuf,
    child: Option<Child>,
}

/// Three nats-server processes in one JetStream cluster. Dropping it kills them and removes
/// their stores.
pub struct NatsCluster {
    dir: PathBuf,
    servers: Vec<Server>,
}

impl NatsCluster {
    /// Starts the servers and waits (up to 60 s) until JetStream answers with a meta leader.
    /// A server that exits while starting (a port taken between choosing it and binding it, by
    /// another test's server or an outgoing connection) fails the attempt at once; the cluster
    /// is then started again on new ports, at most 3 times.
    pub fn start(tag: &str) -> NatsCluster {
        let mut failures = Vec::new();
        for _ in 0..3 {
            match Self::try_start(tag) {
                Ok(c) => return c,
                Err(e) => failures.push(e),
            }
        }
        panic!("nats cluster did not start in 3 attempts:\n{}", failures.join("\n"));
    }

    fn try_start(tag: &str) -> Result<NatsCluster, String> {
        static N: AtomicU64 = AtomicU64::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("tw-nats-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the cluster dir");
        let ports = free_ports(9);
        let mut servers: Vec<Server> = (0..3)
            .map(|i| Server {
                name: format!("n{i}"),
                client_port: ports[3 * i],
                cluster_port: ports[3 * i + 1],
                monitor_port: ports[3 * i + 2],
                store: dir.join(format!("store-{i}")),
                conf: dir.join(format!("n{i}.conf")),
                child: None,
            })
            .collect();
        let routes: Vec<String> = servers
            .iter()
            .map(|s| format!("nats-route://127.0.0.1:{}", s.cluster_port))
            .collect();
        for s in &servers {
            let conf = format!(
                "server_name: {name}\nlisten: 127.0.0.1:{cp}\nhttp: 127.0.0.1:{mp}\n\
                 jetstream {{ store_dir: \"{store}\" }}\n\
                 cluster {{ name: tw-test\n listen: 127.0.0.1:{rp}\n routes: [{routes}] }}\n",
                name = s.name,
                cp = s.client_port,
                mp = s.monitor_port,
                store = s.store.display(),
                rp = s.cluster_port,
                routes = routes.join(", ")
            );
            std::fs::write(&s.conf, conf).expect("write a server config");
        }
        for s in &mut servers {
            Self::spawn(s);
        }
        let mut cluster = NatsCluster { dir, servers };
        // on an error the cluster is dropped here: its servers killed, its stores removed
        cluster.ready_within(Duration::from_secs(60))?;
        Ok(cluster)
    }

    fn spawn(s: &mut Server) {
        let log = std::fs::File::create(s.conf.with_extension("log")).expect("create a server log");
        let child = Command::new("nats-server")
            .arg("-c")
            .arg(&s.conf)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start nats-server");
        s.child = Some(child);
    }

    /// The client URLs of the servers, in order.
    pub fn urls(&self) -> Vec<String> {
        self.servers
            .iter()
            .map(|s| format!("nats://127.0.0.1:{}", s.client_port))
            .collect()
    }

    /// The server names (`n0`, `n1`, `n2`), in order.
    pub fn names(&self) -> Vec<String> {
        self.servers.iter().map(|s| s.name.clone()).collect()
    }

    /// Kills server `i` with SIGKILL (its store stays).
    pub fn kill(&mut self, i: usize) {
        if let Some(mut c) = self.servers[i].child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts server `i` again on its ports and store.
    pub fn restart(&mut self, i: usize) {
        self.kill(i);
        Self::spawn(&mut self.servers[i]);
    }

    /// Kills every server, removes their stores and starts them again empty on the same ports (a
    /// NATS system replaced under running clients), then waits until they are healthy.
    pub fn wipe(&mut self) {
        for i in 0..self.servers.len() {
            self.kill(i);
        }
        for s in &mut self.servers {
            let _ = std::fs::remove_dir_all(&s.store);
        }
        for s in &mut self.servers {
            Self::spawn(s);
        }
        self.wait_ready(Duration::from_secs(60));
    }

    /// The monitor endpoints of the servers (`Monitor::streams` for a failure message).
    pub fn monitor(&self) -> Monitor {
        Monitor {
            servers: self.servers.iter().map(|s| (s.name.clone(), s.monitor_port)).collect(),
        }
    }

    /// Index of the server named `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.servers.iter().position(|s| s.name == name)
    }

    /// Waits until every running server's monitor says it is healthy (JetStream current).
    pub fn wait_ready(&mut self, within: Duration) {
        if let Err(e) = self.ready_within(within) {
            panic!("{e}");
        }
    }

    /// Every running server healthy within `within`; else which one was not, and why (it
    /// exited, or it did not answer), with the end of its log.
    fn ready_within(&mut self, within: Duration) -> Result<(), String> {
        let deadline = Instant::now() + within;
        for s in self.servers.iter_mut().filter(|s| s.child.is_some()) {
            loop {
                if healthz(s.monitor_port) {
                    break;
                }
                let exited = s.child.as_mut().and_then(|c| c.try_wait().ok().flatten());
                if exited.is_some() || Instant::now() > deadline {
                    let log = std::fs::read_to_string(s.conf.with_extension("log")).unwrap_or_default();
                    let tail: Vec<&str> = log.lines().rev().take(5).collect();
                    let why = match exited {
                        Some(status) => format!("exited ({status})"),
                        None => format!("not healthy within {within:?}"),
                    };
                    return Err(format!(
                        "nats-server {} {why}; log ends:\n{}",
                        s.name,
                        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                    ));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Ok(())
    }
}

/// The servers' monitor endpoints (cheap to clone; usable while the cluster is borrowed).
#[derive(Debug, Clone)]
pub struct Monitor {
    servers: Vec<(String, u16)>,
}

impl Monitor {
    /// Each server's view of the JetStream meta leader and of every stream (its leader and last
    /// seq, `/jsz`): two servers naming different leaders, or one a leader whose last seq is
    /// behind the others', is a raft group still electing or a stale leader.
    pub fn streams(&self) -> String {
        let mut out = String::new();
        for (name, port) in &self.servers {
            let body = http_get(*port, "/jsz?streams=true&config=false&consumers=false").unwrap_or_default();
            let view: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
            out.push_str(&format!(
                "nats-server {name}: meta leader {}",
                view["meta_cluster"]["leader"]
            ));
            let streams = view["account_details"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|a| a["stream_detail"].as_array().into_iter().flatten());
            for st in streams {
                out.push_str(&format!(
                    "; {} leader {} last_seq {}",
                    st["name"], st["cluster"]["leader"], st["state"]["last_seq"]
                ));
            }
            out.push('\n');
        }
        out
    }
}

impl Monitor {
    /// Whether every server names the same leader for `stream` (and knows the stream).
    pub fn stream_led(&self, stream: &str) -> bool {
        let leaders: Vec<Option<String>> = self
            .servers
            .iter()
            .map(|(_, port)| {
                let body = http_get(*port, "/jsz?streams=true&config=false&consumers=false")?;
                let view: serde_json::Value = serde_json::from_str(&body).ok()?;
                let st = view["account_details"]
                    .as_array()?
                    .iter()
                    .flat_map(|a| a["stream_detail"].as_array().into_iter().flatten())
                    .find(|st| st["name"] == stream)?;
                st["cluster"]["leader"].as_str().map(str::to_owned)
            })
            .collect();
        leaders[0].is_some() && leaders.iter().all(|l| *l == leaders[0])
    }
}

/// The body of GET `path` on a monitor port (`None`: no answer within 2 s).
fn http_get(port: u16, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    let req = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    s.write_all(req.as_bytes()).ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    text.split_once("\r\n\r\n").map(|(_, body)| body.to_owned())
}

/// GET /healthz on the monitor port: `{"status":"ok"}` once the server (and JetStream) is up.
fn healthz(port: u16) -> bool {
    http_get(port, "/healthz").is_some_and(|body| body.contains("\"ok\""))
}

impl Drop for NatsCluster {
    fn drop(&mut self) {
        for i in 0..self.servers.len() {
            self.kill(i);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
