//! The orders preset's send schedule (open loop): order `first_k + j` is due at
//! `start_ms + j * 1000 / rate` (the TS `Pacer`), sent by client `k mod clients`; client `c`
//! belongs to socket thread `c mod threads`. Pure: time is passed in.

/// One step's schedule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    /// Run-wide number of the step's first order (order numbers continue across steps).
    pub first_k: u64,
    /// Orders in the step.
    pub count: u64,
    /// Epoch ms of the step's order 0.
    pub start_ms: f64,
    /// Orders per second (> 0).
    pub rate_per_sec: f64,
    /// Orders scheduled before this (epoch ms) are the warm-up: sent and checked, not measured.
    pub warm_end_ms: f64,
}

impl Schedule {
    /// Checks the values a `step` command carries; Err names the field and the rule.
    pub fn new(first_k: u64, count: u64, start_ms: f64, rate_per_sec: f64, warm_end_ms: f64) -> Result<Schedule, String> {
        if !(rate_per_sec > 0.0 && rate_per_sec <= 10_000_000.0) {
            return Err(format!("'ratePerSec' must be > 0 and <= 10000000, got {rate_per_sec}"));
        }
        if !start_ms.is_finite() || !warm_end_ms.is_finite() {
            return Err("'startMs' and 'warmEndMs' must be finite".into());
        }
        Ok(Schedule {
            first_k,
            count,
            start_ms,
            rate_per_sec,
            warm_end_ms,
        })
    }

    /// Due time of the step's order `j`, epoch ms.
    pub fn due_ms(&self, j: u64) -> f64 {
        self.start_ms + j as f64 * 1000.0 / self.rate_per_sec
    }

    /// Orders `0..n` are due at `now_ms` (n <= count).
    pub fn due_count(&self, now_ms: f64) -> u64 {
        if now_ms < self.start_ms {
            return 0;
        }
        let mut n = (((now_ms - self.start_ms) * self.rate_per_sec / 1000.0).floor() as u64 + 1).min(self.count);
        // the float quotient can land one off either way next to a due time: settle on `due_ms`,
        // the time the order is stamped with, so an order is never sent before its own due time
        while n > 0 && self.due_ms(n - 1) > now_ms {
            n -= 1;
        }
        while n < self.count && self.due_ms(n) <= now_ms {
            n += 1;
        }
        n
    }

    /// True when order `j` is measured (due at or after the warm-up's end).
    pub fn measured(&self, j: u64) -> bool {
        self.due_ms(j) >= self.warm_end_ms
    }
}

/// Which clients and orders one socket thread owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    pub clients: u64,
    pub threads: u64,
    pub thread: u64,
}

impl Share {
    /// The client that sends order `k`.
    pub fn client_of(&self, k: u64) -> u64 {
        k % self.clients
    }

    /// True when order `k` is this thread's to send.
    pub fn owns(&self, k: u64) -> bool {
        self.client_of(k) % self.threads == self.thread
    }

    /// The thread's local slot of client `c` (the clients it owns are `thread`, `thread + threads`, ...).
    pub fn slot_of(&self, c: u64) -> usize {
        (c / self.threads) as usize
    }

    /// The client at this thread's local slot `slot` (the inverse of `slot_of`).
    pub fn client_at(&self, slot: usize) -> u64 {
        self.thread + slot as u64 * self.threads
    }

    /// Clients this thread owns.
    pub fn owned_clients(&self) -> impl Iterator<Item = u64> + '_ {
        (self.thread..self.clients).step_by(self.threads as usize)
    }

    /// The first order index `j >= from` (of `s`) this thread owns, or `s.count` when none is left.
    /// Every client sends one of any `clients` consecutive orders and a thread owns at least one
    /// client (threads <= clients), so the scan is at most `clients` orders long.
    pub fn next_owned(&self, s: &Schedule, from: u64) -> u64 {
        let limit = s.count.min(from.saturating_add(self.clients));
        (from..limit).find(|&j| self.owns(s.first_k + j)).unwrap_or(s.count)
    }
}

/// The server (index into the `--url` list of `servers`) client `c` connects to: `c mod servers`,
/// as the Node engine's clients (so order `k` goes to server `(k mod clients) mod servers`).
pub fn server_of(c: u64, servers: usize) -> usize {
    (c % servers.max(1) as u64) as usize
}

/// When the pacing timer should fire for an order due at `due_ms`: not before `last_tick_ms +
/// min_tick_ms` (a floor on wake-ups per second; 0: each order at its own time).
pub fn next_tick_ms(due_ms: f64, last_tick_ms: f64, min_tick_ms: f64) -> f64 {
    due_ms.max(last_tick_ms + min_tick_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_fall_due_at_start_plus_k_over_rate() {
        let s = Schedule::new(1000, 5, 100.0, 20_000.0, 100.1).unwrap();
        assert_eq!(s.due_ms(0), 100.0);
        assert!((s.due_ms(3) - 100.15).abs() < 1e-9);
        assert_eq!(s.due_count(99.999), 0);
        assert_eq!(s.due_count(100.0), 1);
        assert_eq!(s.due_count(100.049), 1);
        assert_eq!(s.due_count(s.due_ms(1)), 2);
        assert_eq!(s.due_count(1e9), 5); // never past the step's count
        assert!(!s.measured(1) && s.measured(2)); // 100.05 < 100.1 <= 100.1

        // due times of a rate whose interval is not a binary fraction
        let t = Schedule::new(0, 1_000_000, 0.0, 3.0, 0.0).unwrap();
        for j in [1u64, 2, 3, 10, 12_345, 999_999] {
            assert_eq!(t.due_count(t.due_ms(j)), j + 1, "j={j}");
            assert_eq!(t.due_count(t.due_ms(j) - 1e-6), j, "j={j}");
        }
        assert!(Schedule::new(0, 1, 0.0, 0.0, 0.0).unwrap_err().contains("ratePerSec"));
        assert!(Schedule::new(0, 1, f64::NAN, 1.0, 0.0).is_err());
    }

    #[test]
    fn threads_share_clients_and_their_orders() {
        let s = Schedule::new(7, 20, 0.0, 1.0, 0.0).unwrap();
        for (clients, threads) in [(5u64, 2u64), (4, 2), (3, 3), (50, 1), (1, 1)] {
            let mut seen = vec![0u32; s.count as usize];
            for thread in 0..threads {
                let share = Share { clients, threads, thread };
                let mine: Vec<u64> = share.owned_clients().collect();
                assert!(!mine.is_empty());
                for (i, c) in mine.iter().enumerate() {
                    assert_eq!(share.slot_of(*c), i);
                    assert_eq!(share.client_at(i), *c);
                }
                let mut j = share.next_owned(&s, 0);
                while j < s.count {
                    assert!(mine.contains(&share.client_of(s.first_k + j)));
                    seen[j as usize] += 1;
                    j = share.next_owned(&s, j + 1);
                }
            }
            assert!(seen.iter().all(|&n| n == 1), "clients {clients} threads {threads}: {seen:?}");
        }
    }

    #[test]
    fn clients_spread_evenly_over_the_servers() {
        assert_eq!((0..5).map(|c| server_of(c, 2)).collect::<Vec<_>>(), [0, 1, 0, 1, 0]);
        assert_eq!((0..4).map(|c| server_of(c, 1)).collect::<Vec<_>>(), [0, 0, 0, 0]);
        // 50 clients, 3 servers: 17 / 17 / 16, and the orders of a step split the same way
        let mut per = [0u64; 3];
        for k in 0..50_000u64 {
            per[server_of(k % 50, 3)] += 1;
        }
        assert_eq!(per, [17_000, 17_000, 16_000]);
    }

    #[test]
    fn the_timer_waits_for_the_order_but_not_less_than_the_minimum_tick() {
        assert_eq!(next_tick_ms(10.0, 9.0, 0.0), 10.0);
        assert!((next_tick_ms(10.0, 9.95, 0.25) - 10.2).abs() < 1e-9);
        assert_eq!(next_tick_ms(10.0, 5.0, 0.25), 10.0);
    }
}
