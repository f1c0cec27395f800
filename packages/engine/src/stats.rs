//! `EngineStats`: the engine's one set of counters (cumulative) and gauges (current), from the hub
//! (store, sessions, fan-out, views, record history), the ingest lane, the order desk and the
//! cluster parts. Its fields are listed once, in `engine_stats_fields!`: the Rust struct here and
//! the JS object in `napi/stats.rs` are both made from that list, so the two cannot drift.

/// Calls `$m!` with every field of `EngineStats` (doc, name), in the order the JS object lists
/// them. Adding a field here adds it to the Rust struct, the JS object and `index.d.ts`. Docs are
/// `#[doc = "..."]`: a `///` comment passed through a macro reaches napi's type generator as a raw
/// string, which it would copy into `index.d.ts` as `r"`.
#[macro_export]
macro_rules! engine_stats_fields {
    ($m:ident) => {
        $m! {
            #[doc = " Publishes accepted by `ingest`."]
            publishes_in,
            #[doc = " Publishes merged into the store."]
            publishes_applied,
            #[doc = " Publishes refused by the store (a record would pass 128 fields)."]
            publishes_rejected,
            #[doc = " Messages delivered to sessions: appended to their outboxes, or published to a"]
            #[doc = " record's topic (`directDeliveries`)."]
            deliveries,
            #[doc = " Of `deliveries`, those published to a record's topic on the session's worker (one"]
            #[doc = " shared frame per worker) instead of copied into its outbox."]
            direct_deliveries,
            #[doc = " Frames flushed."]
            frames_out,
            #[doc = " Bytes flushed (frames, brackets included)."]
            bytes_out,
            #[doc = " Record updates merged into throttled deltas (`conflated: true`) instead of sent alone."]
            conflated_updates,
            #[doc = " Record updates slow consumers never got as deltas: dropped from a queue past"]
            #[doc = " `outboxConflateBytes`, or arriving while it conflated (an image replaces them)."]
            dropped_updates,
            #[doc = " Sessions closed as slow consumers (4008)."]
            slow_consumer_closes,
            #[doc = " Record status changes (ok -> stale and back)."]
            status_changes,
            #[doc = " Standby sources told `source.activate`."]
            failovers,
            #[doc = " Frames of replies sent to a blocked session ahead of its held record messages."]
            replies_ahead,
            #[doc = " Open sessions."]
            sessions,
            #[doc = " Current record subscriptions."]
            subscriptions,
            #[doc = " Published records."]
            records,
            #[doc = " Containers (published to or viewed; per-tier copies included)."]
            containers,
            #[doc = " Materialised views (unique container + filter + sort + tier; views in their grace period included)."]
            views,
            #[doc = " Open view windows (one per view subscriber), held ones included."]
            view_windows,
            #[doc = " Views of dropped sessions held for `view.resume` now."]
            views_detached,
            #[doc = " `view.resume`s that continued a held view, since start."]
            view_resumes,
            #[doc = " `view.resume`s answered by a fresh view flagged `reset`, since start."]
            view_resets,
            #[doc = " Held views closed unresumed (grace ended, or pushed out by the bounds), since start."]
            views_detached_closed,
            #[doc = " `view.resume`s that replayed messages lost in flight from the view's history, since start."]
            view_replays,
            #[doc = " Bytes held now by the views' histories of sent messages (`views.resumeHistoryBytes` per view)."]
            view_history_bytes,
            #[doc = " View messages dropped from a view's history before their time, or not kept, to keep all"]
            #[doc = " views' histories under `views.resumeHistoryTotalBytes`, since start (a resume from"]
            #[doc = " before them gets a reset)."]
            view_history_evicted,
            #[doc = " Record history (`record.resume`): bytes of the messages its rings hold now."]
            history_bytes,
            #[doc = " Record history: messages its rings hold now."]
            history_entries,
            #[doc = " Record history: messages dropped from a ring, oldest of any record first, to keep the"]
            #[doc = " total under `records.historyMaxBytes` (a resume of that record then gets a reset image)."]
            history_evicted,
            #[doc = " Orders accepted since start (0 with orders disabled)."]
            orders_accepted,
            #[doc = " Order requests rejected since start."]
            orders_rejected,
            #[doc = " Orders open now (new, acknowledged, partially filled; recovered ones included)."]
            orders_open,
            #[doc = " Last durable journal seq (0 = none)."]
            journal_durable_seq,
            #[doc = " DAY orders expired at an end of day (`endOfDay`) since start."]
            orders_expired,
            #[doc = " Cluster mode: batch messages of this node's record changes sent (one per engine pass)."]
            cluster_batches_sent,
            #[doc = " Cluster mode: record changes and container ops sent in them."]
            cluster_records_sent,
            #[doc = " Cluster mode: bytes of every message sent on NATS for records."]
            cluster_bytes_sent,
            #[doc = " Cluster mode: batch messages received from other nodes."]
            cluster_batches_received,
            #[doc = " Cluster mode: record changes and container ops received in them."]
            cluster_records_received,
            #[doc = " Cluster mode: bytes of every record message received from other nodes."]
            cluster_bytes_received,
            #[doc = " Cluster mode: snapshot and image requests sent (a gap or a late join)."]
            cluster_image_requests_sent,
            #[doc = " Cluster mode: snapshot and image requests answered."]
            cluster_image_requests_answered,
            #[doc = " Cluster mode: gaps seen (healed with a snapshot or an image)."]
            cluster_gaps,
            #[doc = " Cluster mode: batches dropped while NATS did not take them (healed once it does)."]
            cluster_batches_dropped,
            #[doc = " Cluster mode: local publishes refused (the subject is owned by another live node)."]
            cluster_publishes_refused,
            #[doc = " Cluster mode: messages from other nodes that could not be read."]
            cluster_decode_errors,
            #[doc = " Cluster mode: remote changes to subjects this node owns (two nodes publishing one subject)."]
            cluster_conflicts,
            #[doc = " Cluster mode (gauge): other nodes heard from within the owner timeout (3 s)."]
            cluster_peers,
            #[doc = " Cluster mode: 1 while this node is the order leader (decides orders), else 0."]
            order_leader,
            #[doc = " Cluster mode: 1 while this node decides orders on a provisional lease (the lease"]
            #[doc = " bucket has no NATS leader; docs/architecture.md, \"Election\"), else 0."]
            order_lease_provisional,
            #[doc = " Cluster mode: last order stream seq applied to this node's order book and blotters."]
            order_stream_seq,
            #[doc = " Cluster mode: the order stream seq at which this node stopped applying the stream,"]
            #[doc = " its message following another history than the one applied here (a NATS replica"]
            #[doc = " left diverged after a lost quorum; docs/architecture.md, \"Quorum lost\"), else 0."]
            order_stream_diverged_at,
            #[doc = " Cluster mode: order requests forwarded to the leader since start."]
            orders_forwarded,
            #[doc = " Cluster mode: order stream publishes that failed since start (no quorum, timed out, fenced)."]
            order_publish_failures,
            #[doc = " Cluster mode: order stream messages this node published as leader (group commit, first sends)."]
            order_batches,
            #[doc = " Cluster mode: order events in those messages."]
            order_batch_events,
            #[doc = " Cluster mode: bytes of those messages' bodies (the framed events)."]
            order_batch_bytes,
            #[doc = " Cluster mode (gauge): order stream messages published and not yet stored or refused."]
            order_batches_in_flight,
            #[doc = " Cluster mode: order stream messages of at most 1 event (cumulative histogram buckets,"]
            #[doc = " `cluster::batch_meter::EVENT_BUCKETS`; more than 256 events: only in `order_batches`)."]
            order_batches_le_1,
            #[doc = " Cluster mode: order stream messages of at most 2 events."]
            order_batches_le_2,
            #[doc = " Cluster mode: order stream messages of at most 4 events."]
            order_batches_le_4,
            #[doc = " Cluster mode: order stream messages of at most 8 events."]
            order_batches_le_8,
            #[doc = " Cluster mode: order stream messages of at most 16 events."]
            order_batches_le_16,
            #[doc = " Cluster mode: order stream messages of at most 32 events."]
            order_batches_le_32,
            #[doc = " Cluster mode: order stream messages of at most 64 events."]
            order_batches_le_64,
            #[doc = " Cluster mode: order stream messages of at most 128 events."]
            order_batches_le_128,
            #[doc = " Cluster mode: order stream messages of at most 256 events."]
            order_batches_le_256,
        }
    };
}

macro_rules! define_engine_stats {
    ($( $(#[$doc:meta])* $name:ident, )*) => {
        /// Engine counters (cumulative) and gauges (current); fields in `engine_stats_fields!`.
        #[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
        pub struct EngineStats {
            $( $(#[$doc])* pub $name: u64, )*
        }

        impl EngineStats {
            /// Number of fields.
            pub const LEN: usize = [$(stringify!($name)),*].len();

            /// Every field's value, in list order.
            pub fn values(&self) -> [u64; Self::LEN] {
                [$(self.$name),*]
            }

            /// The stats whose fields are `values`, in list order.
            pub fn from_values(values: [u64; Self::LEN]) -> Self {
                let [$($name),*] = values;
                EngineStats { $($name),* }
            }
        }
    };
}

engine_stats_fields!(define_engine_stats);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_in_list_order() {
        let s = EngineStats {
            publishes_in: 1,
            history_evicted: 7,
            order_batches_le_256: 9,
            ..EngineStats::default()
        };
        let v = s.values();
        assert_eq!(v[0], 1);
        assert_eq!(v[EngineStats::LEN - 1], 9);
        assert_eq!(EngineStats::from_values(v), s);
    }
}
