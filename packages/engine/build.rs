//! Links the addon against Node's N-API symbols when the `napi` feature is on.
fn main() {
    if std::env::var_os("CARGO_FEATURE_NAPI").is_some() {
        napi_build::setup();
    }
}
