//! napi: a source's publish grants (`wire::grants`), compiled once per login or configuration
//! reload (`Engine.publishGrants`, in mod.rs's `impl JsEngine`) and handed to `Engine.ingest`
//! with each of the source's frames.

use napi::Env;
use napi_derive::napi;

use super::error::to_js;
use crate::wire::grants::PublishGrants as Compiled;

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
