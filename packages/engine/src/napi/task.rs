//! One generic napi `Task` for every engine question answered off the JS thread: the question
//! runs on libuv's thread pool (it waits for the engine thread's answer), the conversion to JS
//! values on the JS thread. An engine error rejects the promise with `CODE: message`.

use napi::bindgen_prelude::{AsyncTask, ToNapiValue, TypeName};
use napi::{Env, Status};

/// The work of an `EngineTask`: runs once, off the JS thread.
type Work<T> = Box<dyn FnOnce() -> crate::error::Result<T> + Send>;

/// A question to the engine (`work`) and how its answer becomes a JS value (`to_js`).
pub struct EngineTask<T, J> {
    work: Option<Work<T>>,
    to_js: fn(T) -> J,
}

impl<T: Send + 'static, J: ToNapiValue + TypeName> napi::Task for EngineTask<T, J> {
    type Output = T;
    type JsValue = J;

    fn compute(&mut self) -> napi::Result<T> {
        let work = self
            .work
            .take()
            .ok_or_else(|| napi::Error::new(Status::GenericFailure, "INTERNAL: an engine task ran twice"))?;
        work().map_err(|e| napi::Error::new(Status::GenericFailure, format!("{}: {e}", e.code().as_str())))
    }

    fn resolve(&mut self, _env: Env, out: T) -> napi::Result<J> {
        Ok((self.to_js)(out))
    }
}

/// A promise of `to_js(work())`, `work` run off the JS thread.
pub fn ask<T, J>(
    work: impl FnOnce() -> crate::error::Result<T> + Send + 'static,
    to_js: fn(T) -> J,
) -> AsyncTask<EngineTask<T, J>>
where
    T: Send + 'static,
    J: ToNapiValue + TypeName,
{
    AsyncTask::new(EngineTask {
        work: Some(Box::new(work)),
        to_js,
    })
}
