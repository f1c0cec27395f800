//! A real 3-server NATS cluster with JetStream on 127.0.0.1, for the cluster tests (included with
//! `#[path]`, not a test target of its own). Each server gets its own client, route and monitor
//! ports and its own store directory; servers can be killed (SIGKILL) and started again on the
//! same ports and store. Needs `nats-server` on the PATH (`.ci/run` installs Debian's).
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Whether `nats-server` can be run here. Under `CI=true` its absence is a failure, not a skip.
pub fn nats_available() -> bool {
    let ok = Command::new("nats-server")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok && std::env::var("CI").as_deref() == Ok("true") {
        panic!("nats-server is not on the PATH (CI must install it)");
    }
    ok
}

fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port");
    l.local_addr().expect("local addr").port()
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
    pub fn start(tag: &str) -> NatsCluster {
        static N: AtomicU64 = AtomicU64::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("tw-nats-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the cluster dir");
        let mut servers: Vec<Server> = (0..3)
            .map(|i| Server {
                name: format!("n{i}"),
                client_port: free_port(),
                cluster_port: free_port(),
                monitor_port: free_port(),
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
        let cluster = NatsCluster { dir, servers };
        cluster.wait_ready(Duration::from_secs(60));
        cluster
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

    /// Index of the server named `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.servers.iter().position(|s| s.name == name)
    }

    /// Waits until every running server's monitor says it is healthy (JetStream current).
    pub fn wait_ready(&self, within: Duration) {
        let deadline = Instant::now() + within;
        for s in self.servers.iter().filter(|s| s.child.is_some()) {
            loop {
                if healthz(s.monitor_port) {
                    break;
                }
                if Instant::now() > deadline {
                    panic!("nats-server {} not healthy within {within:?}", s.name);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

/// GET /healthz on the monitor port: `{"status":"ok"}` once the server (and JetStream) is up.
fn healthz(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let req = format!("GET /healthz HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    if s.write_all(req.as_bytes()).is_err() {
        return false;
    }
    let mut body = String::new();
    let _ = s.read_to_string(&mut body);
    body.contains("\"ok\"")
}

impl Drop for NatsCluster {
    fn drop(&mut self) {
        for i in 0..self.servers.len() {
            self.kill(i);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
