//! The one place `EngineError` becomes a JS `Error`: `code` is the protocol code string,
//! `message` the human text, plus `index` / `field` when the error names them.

use napi::{sys, Env, Status};

use crate::error::EngineError;

/// Throws `e` as a JS Error with `code` (and `index`, `field`) and returns the marker error
/// napi-rs expects for an exception that is already pending.
pub fn to_js(env: &Env, e: EngineError) -> napi::Error {
    let code = e.code().as_str();
    let message = e.to_string();
    // SAFETY: `env` is the live env of the current JS call; every napi_value created here is
    // used only within this call, and each step's status is checked before the next.
    let thrown = unsafe { throw_error(env.raw(), code, &message, e.index(), e.field()) };
    if thrown {
        napi::Error::from_status(Status::PendingException)
    } else {
        napi::Error::new(Status::GenericFailure, format!("{code}: {message}"))
    }
}

unsafe fn string(env: sys::napi_env, s: &str) -> Option<sys::napi_value> {
    let mut v = std::ptr::null_mut();
    let st = unsafe { sys::napi_create_string_utf8(env, s.as_ptr().cast(), s.len() as isize, &mut v) };
    (st == sys::Status::napi_ok).then_some(v)
}

unsafe fn throw_error(env: sys::napi_env, code: &str, message: &str, index: Option<u32>, field: Option<&str>) -> bool {
    unsafe {
        let (Some(code_v), Some(msg_v)) = (string(env, code), string(env, message)) else {
            return false;
        };
        let mut err = std::ptr::null_mut();
        if sys::napi_create_error(env, code_v, msg_v, &mut err) != sys::Status::napi_ok {
            return false;
        }
        if let Some(i) = index {
            let mut v = std::ptr::null_mut();
            if sys::napi_create_uint32(env, i, &mut v) == sys::Status::napi_ok {
                sys::napi_set_named_property(env, err, c"index".as_ptr().cast(), v);
            }
        }
        if let Some(v) = field.and_then(|f| string(env, f)) {
            sys::napi_set_named_property(env, err, c"field".as_ptr().cast(), v);
        }
        sys::napi_throw(env, err) == sys::Status::napi_ok
    }
}
