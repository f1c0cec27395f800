//! napi: a source's publish grants and a trader's order grants (`wire::grants`), compiled once
//! per login or configuration reload (`Engine.publishGrants` / `Engine.orderGrants`, in mod.rs's
//! `impl JsEngine`) and handed to `Engine.ingest` with each of the source's frames, or to
//! `Engine.orderSubmitFrame` with each of the trader's orders.

use napi::Env;
use napi_derive::napi;

use super::error::to_js;
use crate::wire::grants::{OrderGrants as CompiledOrder, PublishGrants as Compiled};

/// The subjects one source may publish, compiled (its role's and its own `publish` rules); made
/// by `Engine.publishGrants` only.
#[napi]
pub struct PublishGrants {
    pub(super) inner: Compiled,
}

/// `Engine.publishGrants`: compiles `patterns` for `user` of `role`; BAD_REQUEST thrown as a JS
/// error naming the first invalid pattern.
pub(super) fn compile(env: &Env, user: &str, role: &str, patterns: &[String]) -> napi::Result<PublishGrants> {
    Compiled::compile(user, role, patterns)
        .map(|inner| PublishGrants { inner })
        .map_err(|e| to_js(env, e))
}

#[napi]
impl PublishGrants {
    /// False when the rules grant every subject the engine lets any source publish (`/**`, at
    /// most minus `/TRADE` and `/BLOTTER`): frames are then not checked.
    #[napi(getter)]
    pub fn checks(&self) -> bool {
        self.inner.checks()
    }

    /// True when the source may publish `subject`.
    #[napi]
    pub fn permits(&self, subject: String) -> bool {
        self.inner.permits(&subject)
    }
}

/// The instruments one trader may order, compiled (its role's and its own `order` rules, and its
/// price tier); made by `Engine.orderGrants` only.
#[napi]
pub struct OrderGrants {
    pub(super) inner: CompiledOrder,
}

/// `Engine.orderGrants`: compiles `patterns` for `user` of `role` and `tier` among `tiers`;
/// BAD_REQUEST thrown as a JS error naming the first invalid pattern.
pub(super) fn compile_order(
    env: &Env,
    user: &str,
    role: &str,
    patterns: &[String],
    tier: Option<&str>,
    tiers: &[String],
) -> napi::Result<OrderGrants> {
    CompiledOrder::compile(user, role, patterns, tier, tiers)
        .map(|inner| OrderGrants { inner })
        .map_err(|e| to_js(env, e))
}

#[napi]
impl OrderGrants {
    /// True when the trader may order `instrument` (the check `orderSubmitFrame` makes; for
    /// orders that arrive another way: decoded frames, FIX).
    #[napi]
    pub fn permits(&self, instrument: String) -> bool {
        self.inner.permits(&instrument)
    }
}
