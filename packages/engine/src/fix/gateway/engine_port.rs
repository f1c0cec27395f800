//! The running engine as the gateway's [`OrderPort`]: requests go to its order desk on the
//! engine thread (`Engine::gateway_request`, `Engine::attach_gateway`).

use std::sync::Arc;

use super::OrderPort;
use crate::order_desk::{GatewayOp, GatewaySink};
use crate::runtime::Engine;

impl OrderPort for Engine {
    fn request(&self, user: &str, request: u64, op: GatewayOp) -> Result<(), String> {
        self.gateway_request(user, request, op).map_err(|e| e.to_string())
    }

    fn attach(&self, users: Vec<String>, sink: Arc<dyn GatewaySink>) -> Result<(), String> {
        self.attach_gateway(users, sink).map_err(|e| e.to_string())
    }

    fn node(&self) -> Option<String> {
        self.cluster().map(|link| link.config().node.clone())
    }
}
