//! `OrderSlab`: every order, by id, in fixed-size chunks that never move.
//!
//! A plain `Vec<Order>` doubles as it grows: at 65,536 orders the engine thread copied ~13 MB
//! and touched ~26 MB of new pages in one push (several ms on the order path, once per doubling
//! and per book, so a p99 made of growth stalls). Here a push allocates at most one new chunk of
//! `CHUNK` orders; existing orders are never copied, and only the small table of chunk pointers
//! grows (one pointer per `CHUNK` orders).

use super::model::Order;

/// Orders per chunk (a power of two: index = chunk * CHUNK + offset). At ~200 bytes per order a
/// chunk is ~800 KiB: allocated (and its pages touched) as orders arrive, not all at once.
pub const CHUNK: usize = 4096;

/// Orders in acceptance order (index `i` holds order id `i + 1`); see the module doc.
#[derive(Debug, Default, Clone)]
pub struct OrderSlab {
    chunks: Vec<Vec<Order>>,
    len: usize,
}

impl OrderSlab {
    /// Number of orders.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there is no order.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The order at index `i` (order id `i + 1`); `None` past the end.
    pub fn get(&self, i: usize) -> Option<&Order> {
        self.chunks.get(i / CHUNK)?.get(i % CHUNK)
    }

    /// Mutable order at index `i`; `None` past the end.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut Order> {
        self.chunks.get_mut(i / CHUNK)?.get_mut(i % CHUNK)
    }

    /// Appends `o` (never moves the orders already held) and returns it.
    pub fn push(&mut self, o: Order) -> &Order {
        if self.len.is_multiple_of(CHUNK) {
            self.chunks.push(Vec::with_capacity(CHUNK));
        }
        let chunk = self.chunks.last_mut().expect("a chunk with room was just ensured");
        chunk.push(o);
        self.len += 1;
        chunk.last().expect("just pushed")
    }

    /// Every order, oldest first (reversible: `.rev()` is newest first).
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Order> + '_ {
        self.chunks.iter().flatten()
    }
}

impl PartialEq for OrderSlab {
    /// Same orders in the same order (chunk capacities do not matter).
    fn eq(&self, other: &OrderSlab) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::order::{OrderStatus, Side, TimeInForce};

    fn order(id: u64) -> Order {
        Order {
            order_id: id,
            user: "u".into(),
            client_order_id: format!("c{id}"),
            instrument: "/I".into(),
            side: Side::Buy,
            quantity: 1,
            price: None,
            time_in_force: TimeInForce::Day,
            status: OrderStatus::New,
            filled_quantity: 0,
            average_price: 0.0,
            fills: 0,
            last_fill: None,
            reason: None,
            created_ms: 0,
            updated_ms: 0,
            version: 1,
        }
    }

    #[test]
    fn indexes_across_chunk_boundaries_without_moving_orders() {
        let mut s = OrderSlab::default();
        assert!(s.is_empty() && s.get(0).is_none());
        let first = s.push(order(1)) as *const Order;
        let n = 2 * CHUNK + 3;
        for id in 2..=n as u64 {
            assert_eq!(s.push(order(id)).order_id, id);
        }
        assert_eq!(s.len(), n);
        // The first order stayed where it was while two more chunks were added.
        assert!(std::ptr::eq(first, s.get(0).unwrap()));
        for i in [0, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, n - 1] {
            assert_eq!(s.get(i).unwrap().order_id, i as u64 + 1);
        }
        assert!(s.get(n).is_none() && s.get_mut(n).is_none());
        s.get_mut(CHUNK).unwrap().version = 7;
        assert_eq!(s.get(CHUNK).unwrap().version, 7);
        let ids: Vec<u64> = s.iter().map(|o| o.order_id).collect();
        assert_eq!(ids, (1..=n as u64).collect::<Vec<_>>());
        assert_eq!(s.iter().next_back().unwrap().order_id, n as u64);
    }

    #[test]
    fn equality_compares_orders_not_capacity() {
        let (mut a, mut b) = (OrderSlab::default(), OrderSlab::default());
        for id in 1..=CHUNK as u64 + 1 {
            a.push(order(id));
            b.push(order(id));
        }
        assert_eq!(a, b);
        b.get_mut(CHUNK).unwrap().version = 2;
        assert_ne!(a, b);
        b.push(order(CHUNK as u64 + 2));
        assert_ne!(a, b);
    }
}
