//! The server's `fix.*` settings as a [`GatewayConfig`]: one [`SessionSpec`] per configured
//! session, checked here so every embedding refuses the same bad values with the same words.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

use super::GatewayConfig;
use crate::fix::acceptor::{AcceptorConfig, SessionSettings};
use crate::fix::dictionary::Dictionary;
use crate::fix::session::SessionConfig;

/// One session as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSpec {
    /// `FIX.4.2` or `FIX.4.4`.
    pub begin_string: String,
    /// Our CompID (SenderCompID of what we send).
    pub sender_comp_id: String,
    /// The counterparty's CompID.
    pub target_comp_id: String,
    /// The Tidewire user the session's orders belong to.
    pub user: String,
    /// FIX 4.4: Username (553) its Logon must carry.
    pub username: Option<String>,
    /// FIX 4.4: Password (554) its Logon must carry.
    pub password: Option<String>,
    /// Prefix that turns a Symbol without a leading `/` into an instrument (`/FX/`).
    pub symbol_prefix: String,
    /// Benchmarks only: the session echoes each NewOrderSingle back instead of taking orders.
    pub bench_echo: bool,
}

fn comp_id_ok(s: &str) -> bool {
    !s.is_empty() && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_graphic() && b != b'=')
}

/// The gateway's config: listening on `host`:`port`, stores under `store_dir`. Errors name the
/// session (by index) and the field.
pub fn gateway_config(
    host: &str,
    port: u16,
    store_dir: PathBuf,
    sessions: &[SessionSpec],
) -> Result<GatewayConfig, String> {
    let bind: SocketAddr = (host, port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| format!("fix host {host:?} does not resolve to an address to listen on"))?;
    let mut settings = Vec::with_capacity(sessions.len());
    let mut prefixes = Vec::with_capacity(sessions.len());
    let mut echo = Vec::with_capacity(sessions.len());
    for (i, s) in sessions.iter().enumerate() {
        let at = format!("fix.sessions.{i}");
        let dictionary = match s.begin_string.as_str() {
            "FIX.4.2" => Dictionary::fix42(),
            "FIX.4.4" => Dictionary::fix44(),
            other => return Err(format!("{at}.beginString must be FIX.4.2 or FIX.4.4, got {other:?}")),
        };
        for (name, v) in [("senderCompId", &s.sender_comp_id), ("targetCompId", &s.target_comp_id)] {
            if !comp_id_ok(v) {
                return Err(format!(
                    "{at}.{name} must be 1..64 printable characters without '=', got {v:?}"
                ));
            }
        }
        if (s.username.is_some() || s.password.is_some()) && !dictionary.is_fix44() {
            return Err(format!(
                "{at}: username / password are FIX 4.4 Logon fields (553/554); this session is FIX.4.2"
            ));
        }
        let mut config = SessionConfig::new(dictionary, &s.sender_comp_id, &s.target_comp_id);
        config.username.clone_from(&s.username);
        config.password.clone_from(&s.password);
        settings.push(SessionSettings {
            config,
            user: s.user.clone(),
        });
        prefixes.push(s.symbol_prefix.clone());
        echo.push(s.bench_echo);
    }
    let mut acceptor = AcceptorConfig::new(bind, settings);
    acceptor.store_dir = Some(store_dir);
    // an echo session takes no orders: nothing of it to recover, and its messages are not synced
    acceptor.memory_stores.clone_from(&echo);
    let mut cfg = GatewayConfig::new(acceptor);
    cfg.symbol_prefixes = prefixes;
    cfg.bench_echo = echo;
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(begin: &str) -> SessionSpec {
        SessionSpec {
            begin_string: begin.into(),
            sender_comp_id: "TW".into(),
            target_comp_id: "CLIENT".into(),
            user: "alice".into(),
            username: None,
            password: None,
            symbol_prefix: "/FX/".into(),
            bench_echo: false,
        }
    }

    #[test]
    fn sessions_become_acceptor_settings_and_bad_values_are_named() {
        let cfg = gateway_config(
            "127.0.0.1",
            9878,
            "/tmp/fix".into(),
            &[spec("FIX.4.4"), spec("FIX.4.2")],
        )
        .unwrap();
        assert_eq!(cfg.acceptor.bind.port(), 9878);
        assert_eq!(cfg.acceptor.sessions.len(), 2);
        assert!(cfg.acceptor.sessions[0].config.dictionary.is_fix44());
        assert_eq!(cfg.symbol_prefixes, ["/FX/", "/FX/"]);
        assert_eq!(cfg.bench_echo, [false, false]);
        let mut echo = spec("FIX.4.2");
        echo.bench_echo = true;
        let e = gateway_config("127.0.0.1", 1, "/tmp".into(), &[echo]).unwrap();
        assert_eq!(
            (e.bench_echo.as_slice(), e.acceptor.memory_stores.as_slice()),
            (&[true][..], &[true][..])
        );
        let e = gateway_config("127.0.0.1", 1, "/tmp".into(), &[spec("FIX.5.0")]).unwrap_err();
        assert_eq!(
            e,
            "fix.sessions.0.beginString must be FIX.4.2 or FIX.4.4, got \"FIX.5.0\""
        );
        let mut s = spec("FIX.4.2");
        s.password = Some("x".into());
        let e = gateway_config("127.0.0.1", 1, "/tmp".into(), &[spec("FIX.4.4"), s]).unwrap_err();
        assert!(e.starts_with("fix.sessions.1: username / password"), "{e}");
        let mut s = spec("FIX.4.4");
        s.target_comp_id = "A=B".into();
        assert!(gateway_config("127.0.0.1", 1, "/tmp".into(), &[s])
            .unwrap_err()
            .contains("targetCompId"));
        assert!(gateway_config("no such host.invalid", 1, "/tmp".into(), &[]).is_err());
    }
}
