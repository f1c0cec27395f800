//! `EngineStats` as a JS object: made from the same field list as the Rust struct
//! (`crate::engine_stats_fields!`), every count as a number.

use napi_derive::napi;

macro_rules! js_engine_stats {
    ($( $(#[$doc:meta])* $name:ident, )*) => {
        /// Engine counters (cumulative) and gauges (current): `crate::stats::EngineStats`.
        #[napi(object)]
        pub struct EngineStats {
            $( $(#[$doc])* pub $name: f64, )*
        }

        impl From<crate::stats::EngineStats> for EngineStats {
            fn from(s: crate::stats::EngineStats) -> Self {
                EngineStats { $( $name: s.$name as f64, )* }
            }
        }
    };
}

crate::engine_stats_fields!(js_engine_stats);
