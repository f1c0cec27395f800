//! Command-line arguments of `tidewire-loadgen-clients` (the TS CLI passes them; see USAGE).

use crate::clock::Clock;
use crate::conn::ConnSpec;
use std::net::{SocketAddr, ToSocketAddrs};

/// Usage text printed on a bad argument.
pub const USAGE: &str = "usage: tidewire-loadgen-clients --url ws://127.0.0.1:8080/stream --subject-prefix /BENCH/low \
--subject-count 1000 --subs-per-user 2 [--user alice] [--password alice123] [--token T] [--user-offset 0] [--threads 2] \
[--max-connecting 128] [--connect-timeout-ms 30000] [--max-frame-bytes 16777216] \
[--clock-epoch-ms E --clock-mono-ms M] [--max-seconds 3600]\n\
   or: tidewire-loadgen-clients --mode views --url ws://127.0.0.1:8080/stream [--light true] [--report-left true] \
[--response-timeout-ms 30000] [--threads 2] [--max-connecting 128] [--connect-timeout-ms 30000] [--max-frame-bytes 16777216] \
[--clock-epoch-ms E --clock-mono-ms M] [--max-seconds 3600]\n\
   or: tidewire-loadgen-clients --mode orders --url ws://127.0.0.1:8080/stream[,ws://...] --token T --clients 50 --id-prefix L1 \
[--tick-ms 0] [--spin-ms 0] [--threads 1] [--connect-timeout-ms 30000] [--max-frame-bytes 16777216] \
[--clock-epoch-ms E --clock-mono-ms M] [--max-seconds 3600]";

/// What the process simulates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Record subscribers (`connect` / `report` commands). @default
    Streams,
    /// View users (`openView` / `closeUser` / `closeAll` / `take` commands, see views.rs).
    Views,
    /// Order clients (`connect` / `step` / `cpu` / `take` commands, see orders.rs).
    Orders,
}

/// One server the clients connect to: a `ws://host:port/path` URL, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub addr: SocketAddr,
    /// `host:port` as given (the upgrade's Host header).
    pub host: String,
    /// Request path of the upgrade. @default /stream
    pub path: String,
}

impl Endpoint {
    /// Parses and resolves one `ws://` URL (an IPv4 address preferred); Err names the URL.
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let rest = url
            .strip_prefix("ws://")
            .ok_or_else(|| format!("--url must start with ws:// (wss is not supported), got {url:?}"))?;
        let (hostport, path) = match rest.find('/') {
            Some(i) => (&rest[..i], rest[i..].to_string()),
            None => (rest, String::from("/stream")),
        };
        let with_port = if hostport.rsplit_once(':').is_some_and(|(_, p)| p.parse::<u16>().is_ok()) {
            hostport.to_string()
        } else {
            format!("{hostport}:80")
        };
        let addrs: Vec<SocketAddr> = with_port
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve {hostport:?}: {e}"))?
            .collect();
        let addr = addrs
            .iter()
            .find(|a| a.is_ipv4())
            .or(addrs.first())
            .copied()
            .ok_or_else(|| format!("{hostport:?} resolves to nothing"))?;
        Ok(Endpoint {
            addr,
            host: hostport.to_string(),
            path,
        })
    }
}

/// Parsed arguments.
#[derive(Debug)]
pub struct Args {
    pub mode: Mode,
    /// The first server of `--url` (the only one outside orders mode).
    pub addr: SocketAddr,
    pub host: String,
    pub path: String,
    /// Orders: every server of `--url a,b,...`, in order (client `c` connects to `c mod n`).
    pub endpoints: Vec<Endpoint>,
    pub user: String,
    pub password: String,
    /// A session token from an earlier login: when set, users log in with it instead of the
    /// password (a password login costs the server a deliberate scrypt hash).
    pub token: Option<String>,
    /// Subjects are `{prefix}/{i}` for i in 0..subject_count (streams mode; unused for views).
    pub subject_prefix: String,
    pub subject_count: u64,
    /// Records each user subscribes to (<= subject_count).
    pub subs_per_user: u64,
    /// Where each user's records sit in the index space (`--assign`). @default spread
    pub assign: Assign,
    /// Global index of this process's first user (several processes share one run).
    pub user_offset: u64,
    /// Socket-loop threads. @default 2
    pub threads: usize,
    /// Handshakes in flight per thread. @default 64
    pub max_connecting: usize,
    pub connect_timeout_ms: f64,
    pub max_frame_bytes: usize,
    pub clock: Clock,
    /// The process exits after this long whatever happens. @default 3600
    pub max_seconds: f64,
    /// Views: decode only frames that may hold `view.created` or `error`. @default false
    pub light: bool,
    /// Views: hand back the subject of each row leaving a window (`left` lines). @default false
    pub report_left: bool,
    /// Views: a `view.create` unanswered after this long fails, ms. @default 30000
    pub response_timeout_ms: f64,
    /// Orders: trader connections (order `k` is sent by client `k mod clients`).
    pub clients: u64,
    /// Orders: client order ids are `<id_prefix>-<k base 36>` (unique per run on one journal).
    pub id_prefix: String,
    /// Orders: shortest time between two sends of a socket thread, ms. @default 0 (each order at its due time)
    pub tick_ms: f64,
    /// Orders: poll without sleeping when the next order is due within this long, ms. @default 0
    pub spin_ms: f64,
}

fn flag(name: &str, value: &str) -> Result<bool, String> {
    match value {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err(format!("{name} must be true or false, got {value:?}")),
    }
}

fn num<T: std::str::FromStr>(name: &str, value: &str) -> Result<T, String> {
    value.parse().map_err(|_| format!("{name} must be a number, got {value:?}"))
}

impl Args {
    /// Parses `--name value` pairs; every error names the flag and the value.
    pub fn parse(argv: impl Iterator<Item = String>) -> Result<Args, String> {
        let argv: Vec<String> = argv.collect();
        if !argv.len().is_multiple_of(2) {
            return Err(format!("flags come in '--name value' pairs, got {argv:?}"));
        }
        let mut url = String::from("ws://127.0.0.1:8080/stream");
        let (mut user, mut password) = (String::from("alice"), String::from("alice123"));
        let mut token = None;
        let mut prefix = None;
        let (mut count, mut subs) = (None, None);
        let mut assign = Assign::Spread;
        let (mut offset, mut threads, mut max_connecting) = (0u64, 2usize, 64usize);
        let (mut timeout, mut max_frame, mut max_seconds) = (30_000f64, 16usize << 20, 3600f64);
        let (mut epoch, mut mono) = (None, None);
        let (mut mode, mut light, mut report_left, mut response_timeout) = (Mode::Streams, false, false, 30_000f64);
        let (mut clients, mut id_prefix, mut tick_ms, mut spin_ms) = (0u64, String::new(), 0f64, 0f64);
        for pair in argv.chunks(2) {
            let (k, v) = (pair[0].as_str(), pair[1].as_str());
            match k {
                "--url" => url = v.to_string(),
                "--user" => user = v.to_string(),
                "--password" => password = v.to_string(),
                "--token" => token = Some(v.to_string()),
                "--subject-prefix" => prefix = Some(v.to_string()),
                "--subject-count" => count = Some(num::<u64>(k, v)?),
                "--subs-per-user" => subs = Some(num::<u64>(k, v)?),
                "--assign" => assign = Assign::parse(v)?,
                "--user-offset" => offset = num(k, v)?,
                "--threads" => threads = num(k, v)?,
                "--max-connecting" => max_connecting = num(k, v)?,
                "--connect-timeout-ms" => timeout = num(k, v)?,
                "--max-frame-bytes" => max_frame = num(k, v)?,
                "--clock-epoch-ms" => epoch = Some(num::<f64>(k, v)?),
                "--clock-mono-ms" => mono = Some(num::<f64>(k, v)?),
                "--max-seconds" => max_seconds = num(k, v)?,
                "--mode" => {
                    mode = match v {
                        "streams" => Mode::Streams,
                        "views" => Mode::Views,
                        "orders" => Mode::Orders,
                        _ => return Err(format!("--mode must be streams, views or orders, got {v:?}")),
                    }
                }
                "--light" => light = flag(k, v)?,
                "--report-left" => report_left = flag(k, v)?,
                "--response-timeout-ms" => response_timeout = num(k, v)?,
                "--clients" => clients = num(k, v)?,
                "--id-prefix" => id_prefix = v.to_string(),
                "--tick-ms" => tick_ms = num(k, v)?,
                "--spin-ms" => spin_ms = num(k, v)?,
                _ => return Err(format!("unknown flag {k:?}")),
            }
        }
        if mode == Mode::Orders {
            if token.is_none() {
                return Err("--mode orders needs --token (the clients log in with a session token)".into());
            }
            if !(1..=10_000).contains(&clients) {
                return Err(format!("--clients must be 1..10000, got {clients}"));
            }
            let id_ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-');
            if id_prefix.is_empty() || id_prefix.len() > 40 || !id_prefix.chars().all(id_ok) {
                return Err(format!(
                    "--id-prefix must be 1..40 characters of letters, digits and ._:-, got {id_prefix:?}"
                ));
            }
            if !(0.0..=100.0).contains(&tick_ms) {
                return Err(format!("--tick-ms must be 0..100, got {tick_ms}"));
            }
            if !(0.0..=10.0).contains(&spin_ms) {
                return Err(format!("--spin-ms must be 0..10, got {spin_ms}"));
            }
        }
        if mode != Mode::Streams {
            // view users and order clients ask for what the TS side sends them, not for records
            prefix = prefix.or(Some(String::new()));
            count = count.or(Some(1));
            subs = subs.or(Some(1));
        }
        let prefix = prefix.ok_or("--subject-prefix is required")?;
        let count = count.ok_or("--subject-count is required")?;
        let subs = subs.ok_or("--subs-per-user is required")?;
        if response_timeout.is_nan() || response_timeout <= 0.0 {
            return Err(format!("--response-timeout-ms must be positive, got {response_timeout}"));
        }
        if count == 0 || subs == 0 || subs > count {
            return Err(format!("need 1 <= --subs-per-user ({subs}) <= --subject-count ({count})"));
        }
        if !(1..=64).contains(&threads) {
            return Err(format!("--threads must be 1..64, got {threads}"));
        }
        if max_connecting == 0 || timeout.is_nan() || timeout <= 0.0 || max_seconds.is_nan() || max_seconds <= 0.0 {
            return Err("--max-connecting, --connect-timeout-ms and --max-seconds must be positive".into());
        }
        let endpoints = url.split(',').map(|u| Endpoint::parse(u.trim())).collect::<Result<Vec<_>, _>>()?;
        if endpoints.len() > 1 && mode != Mode::Orders {
            return Err(format!(
                "--url names {} servers: only --mode orders takes several (comma-separated)",
                endpoints.len()
            ));
        }
        if mode == Mode::Orders && endpoints.len() as u64 > clients {
            return Err(format!(
                "--url names {} servers, more than --clients ({clients}): a server would have no client",
                endpoints.len()
            ));
        }
        let Some(first) = endpoints.first().cloned() else {
            return Err("--url names no server".into());
        };
        let clock = match (epoch, mono) {
            (Some(e), Some(m)) => Clock::anchored(e, m),
            (None, None) => Clock::from_system(),
            _ => return Err("--clock-epoch-ms and --clock-mono-ms go together".into()),
        };
        Ok(Args {
            mode,
            addr: first.addr,
            host: first.host,
            path: first.path,
            endpoints,
            user,
            password,
            token,
            subject_prefix: prefix,
            subject_count: count,
            subs_per_user: subs,
            assign,
            user_offset: offset,
            threads,
            max_connecting,
            connect_timeout_ms: timeout,
            max_frame_bytes: max_frame,
            clock,
            max_seconds,
            light,
            report_left,
            response_timeout_ms: response_timeout,
            clients,
            id_prefix,
            tick_ms,
            spin_ms,
        })
    }

    /// The subjects user `user` subscribes to, placed by `assign` (the TS `subjectsForUser` in
    /// src/sources/subjects.ts is the same rule, and pins the same examples).
    pub fn subjects_for(&self, user: u64) -> Vec<String> {
        indexes_for(user, self.subs_per_user, self.subject_count, self.assign)
            .into_iter()
            .map(|i| format!("{}/{}", self.subject_prefix, i))
            .collect()
    }

    /// What every connection needs to log in.
    pub fn conn_spec(&self) -> ConnSpec {
        ConnSpec {
            host: self.host.clone(),
            path: self.path.clone(),
            user: self.user.clone(),
            password: self.password.clone(),
            token: self.token.clone(),
            max_frame_bytes: self.max_frame_bytes,
        }
    }
}

/// Where a user's records sit in the record index space (the source updates records in index
/// order, evenly over each period, so this decides how a user's updates arrive in time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Assign {
    /// Records `(u + j * stride) % count`, stride = count / S: updates evenly spaced in time.
    Spread,
    /// S consecutive records from `u * S`: one burst per period.
    Block,
    /// S distinct records drawn by Floyd's sampling over mulberry32 seeded by the user index.
    Random,
}

impl Assign {
    fn parse(v: &str) -> Result<Assign, String> {
        match v {
            "spread" => Ok(Assign::Spread),
            "block" => Ok(Assign::Block),
            "random" => Ok(Assign::Random),
            _ => Err(format!("--assign must be spread, block or random, got {v:?}")),
        }
    }
}

/// The record indexes user `user` (global, 0-based) subscribes to: `subs` of `0..count`.
pub fn indexes_for(user: u64, subs: u64, count: u64, assign: Assign) -> Vec<u64> {
    match assign {
        Assign::Block => (0..subs).map(|j| (user * subs + j) % count).collect(),
        Assign::Spread => {
            let stride = (count / subs).max(1);
            (0..subs).map(|j| (user + j * stride) % count).collect()
        }
        Assign::Random => {
            let mut next = mulberry32(user as u32);
            let mut out = Vec::with_capacity(subs as usize);
            let mut chosen = std::collections::HashSet::with_capacity(subs as usize);
            for j in count - subs..count {
                // the same integer draw as the TypeScript rule: floor(x * (j + 1) / 2^32)
                let t = (u64::from(next()) * (j + 1)) >> 32;
                let pick = if chosen.contains(&t) { j } else { t };
                chosen.insert(pick);
                out.push(pick);
            }
            out
        }
    }
}

/// mulberry32, the 32-bit PRNG of the TypeScript rule.
fn mulberry32(seed: u32) -> impl FnMut() -> u32 {
    let mut a = seed;
    move || {
        a = a.wrapping_add(0x6d2b_79f5);
        let mut t = a;
        t = (t ^ (t >> 15)).wrapping_mul(t | 1);
        t ^= t.wrapping_add((t ^ (t >> 7)).wrapping_mul(t | 61));
        t ^ (t >> 14)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Args, String> {
        Args::parse(s.split_whitespace().map(String::from))
    }

    #[test]
    fn parses_and_spreads_subjects() {
        let a = parse("--url ws://127.0.0.1:9/stream --subject-prefix /BENCH/x --subject-count 10 --subs-per-user 4").unwrap();
        assert_eq!(a.path, "/stream");
        assert_eq!(a.addr.port(), 9);
        assert_eq!(a.subjects_for(2), vec!["/BENCH/x/2", "/BENCH/x/4", "/BENCH/x/6", "/BENCH/x/8"]);
    }

    #[test]
    fn assigns_like_the_typescript_rule() {
        assert_eq!(indexes_for(2, 4, 10, Assign::Block), [8, 9, 0, 1]);
        assert_eq!(indexes_for(2, 4, 10, Assign::Spread), [2, 4, 6, 8]);
        assert_eq!(indexes_for(3, 4, 100, Assign::Spread), [3, 28, 53, 78]);
        assert_eq!(indexes_for(5, 4, 10, Assign::Random), [4, 6, 1, 9]);
        assert_eq!(indexes_for(12345, 6, 1000, Assign::Random), [974, 305, 482, 816, 508, 347]);
        let a = parse("--subject-prefix /BENCH/x --subject-count 10 --subs-per-user 4 --assign block").unwrap();
        assert_eq!(a.subjects_for(2), vec!["/BENCH/x/8", "/BENCH/x/9", "/BENCH/x/0", "/BENCH/x/1"]);
        assert!(parse("--subject-prefix /x --subject-count 1 --subs-per-user 1 --assign zig")
            .unwrap_err()
            .contains("--assign"));
    }

    #[test]
    fn random_assignment_is_distinct_and_in_range() {
        for user in 0..200 {
            let got = indexes_for(user, 30, 100, Assign::Random);
            let mut sorted = got.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), 30, "user {user}: {got:?}");
            assert!(got.iter().all(|&i| i < 100));
        }
    }

    #[test]
    fn refuses_bad_flags() {
        assert!(parse("--subject-prefix /x --subject-count 1 --subs-per-user 2")
            .unwrap_err()
            .contains("--subs-per-user"));
        assert!(parse("--bogus 1").unwrap_err().contains("--bogus"));
        assert!(parse("--threads x --subject-prefix /x --subject-count 1 --subs-per-user 1")
            .unwrap_err()
            .contains("--threads"));
        assert!(parse("--url wss://h/ --subject-prefix /x --subject-count 1 --subs-per-user 1")
            .unwrap_err()
            .contains("ws://"));
    }

    #[test]
    fn views_mode_needs_no_subjects() {
        let a = parse("--mode views --url ws://127.0.0.1:9/stream --light true --response-timeout-ms 500").unwrap();
        assert_eq!(
            (a.mode, a.light, a.report_left, a.response_timeout_ms),
            (Mode::Views, true, false, 500.0)
        );
        assert!(parse("--mode view").unwrap_err().contains("--mode"));
        assert!(parse("--mode views --light yes").unwrap_err().contains("--light"));
        assert!(parse("--mode views --response-timeout-ms 0")
            .unwrap_err()
            .contains("--response-timeout-ms"));
        assert!(parse("--url ws://127.0.0.1:9/stream").unwrap_err().contains("--subject-prefix"));
    }

    #[test]
    fn orders_mode_checks_its_flags() {
        let a = parse("--mode orders --url ws://127.0.0.1:9/stream --token T --clients 50 --id-prefix Lx1 --tick-ms 0.1").unwrap();
        assert_eq!(
            (a.mode, a.clients, a.id_prefix.as_str(), a.tick_ms, a.spin_ms),
            (Mode::Orders, 50, "Lx1", 0.1, 0.0)
        );
        let base = "--mode orders --url ws://127.0.0.1:9/stream";
        assert!(parse(&format!("{base} --clients 5 --id-prefix L")).unwrap_err().contains("--token"));
        assert!(parse(&format!("{base} --token T --id-prefix L")).unwrap_err().contains("--clients"));
        assert!(parse(&format!("{base} --token T --clients 0 --id-prefix L"))
            .unwrap_err()
            .contains("--clients"));
        assert!(parse(&format!("{base} --token T --clients 5")).unwrap_err().contains("--id-prefix"));
        assert!(parse(&format!("{base} --token T --clients 5 --id-prefix a/b"))
            .unwrap_err()
            .contains("--id-prefix"));
        assert!(parse(&format!("{base} --token T --clients 5 --id-prefix L --tick-ms -1"))
            .unwrap_err()
            .contains("--tick-ms"));
        assert!(parse(&format!("{base} --token T --clients 5 --id-prefix L --spin-ms 11"))
            .unwrap_err()
            .contains("--spin-ms"));
        assert!(parse(&format!("{base} --token T --clients x --id-prefix L"))
            .unwrap_err()
            .contains("--clients"));
    }

    #[test]
    fn orders_mode_takes_several_servers() {
        let a = parse("--mode orders --url ws://127.0.0.1:9/stream,ws://127.0.0.1:10/s2 --token T --clients 3 --id-prefix L").unwrap();
        let ports: Vec<u16> = a.endpoints.iter().map(|e| e.addr.port()).collect();
        assert_eq!(ports, [9, 10]);
        assert_eq!(
            (a.endpoints[1].host.as_str(), a.endpoints[1].path.as_str()),
            ("127.0.0.1:10", "/s2")
        );
        assert_eq!((a.addr.port(), a.path.as_str()), (9, "/stream"));
        let one = parse("--mode orders --url ws://127.0.0.1:9 --token T --clients 1 --id-prefix L").unwrap();
        assert_eq!(one.endpoints.len(), 1);
        assert!(
            parse("--mode orders --url ws://127.0.0.1:9,ws://127.0.0.1:10 --token T --clients 1 --id-prefix L")
                .unwrap_err()
                .contains("more than --clients")
        );
        assert!(
            parse("--mode orders --url ws://127.0.0.1:9,wss://h:1 --token T --clients 3 --id-prefix L")
                .unwrap_err()
                .contains("wss")
        );
        assert!(parse("--mode views --url ws://127.0.0.1:9,ws://127.0.0.1:10")
            .unwrap_err()
            .contains("only --mode orders"));
    }
}
