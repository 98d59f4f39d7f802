//! Closed-form queueing results the time model is validated against.
//!
//! Pure functions of a queue's parameters, each citing the textbook its
//! formula comes from. Times are in whatever unit the arguments use (the
//! tests use ns); rates are per that unit. A queue whose utilisation reaches
//! 1 has no steady state: its waiting time is `f64::INFINITY`.
//!
//! Arguments that are negative or not finite are programming errors in a
//! test, not user input, so they panic with the argument's name.

/// Checks that a parameter is finite and not negative.
fn check(name: &str, v: f64) {
    assert!(
        v.is_finite() && v >= 0.0,
        "{name} = {v}: must be finite and not negative"
    );
}

/// Mean waiting time in queue (before service starts), Wq, of the M/M/1
/// queue: Poisson arrivals at rate `lambda`, exponential service of mean
/// `mean_service`, one server, FCFS.
///
/// Wq = rho * S / (1 - rho), rho = lambda * S.
/// Source: Kleinrock, Queueing Systems Vol. 1, Section 3.2 (the M/M/1 queue);
/// Harchol-Balter, Performance Modeling and Design of Computer Systems,
/// Chapter 13 (the M/M/1 queue).
pub fn mm1_wait(lambda: f64, mean_service: f64) -> f64 {
    check("lambda", lambda);
    check("mean_service", mean_service);
    let rho = lambda * mean_service;
    if rho >= 1.0 {
        return f64::INFINITY;
    }
    rho * mean_service / (1.0 - rho)
}

/// Mean waiting time in queue of the M/D/1 queue (fixed service time
/// `service`): half the M/M/1 wait at the same utilisation.
///
/// Wq = rho * S / (2 (1 - rho)), the Pollaczek-Khinchine formula with
/// E[S^2] = S^2. Source: Kleinrock, Queueing Systems Vol. 1, Chapter 5
/// (the M/G/1 queue, mean-value formula applied to constant service).
pub fn md1_wait(lambda: f64, service: f64) -> f64 {
    check("lambda", lambda);
    check("service", service);
    let rho = lambda * service;
    if rho >= 1.0 {
        return f64::INFINITY;
    }
    rho * service / (2.0 * (1.0 - rho))
}

/// Mean waiting time in queue of the M/G/1 queue, FCFS: the
/// Pollaczek-Khinchine mean-value formula.
///
/// Wq = lambda * E[S^2] / (2 (1 - rho)), rho = lambda * E[S].
/// Source: Kleinrock, Queueing Systems Vol. 1, Chapter 5 (the M/G/1 queue);
/// Harchol-Balter, Chapter 23 (the M/G/1 queue and the inspection paradox).
pub fn mg1_wait(lambda: f64, mean_service: f64, second_moment: f64) -> f64 {
    check("lambda", lambda);
    check("mean_service", mean_service);
    check("second_moment", second_moment);
    let rho = lambda * mean_service;
    if rho >= 1.0 {
        return f64::INFINITY;
    }
    lambda * second_moment / (2.0 * (1.0 - rho))
}

/// Erlang's C formula: the probability that an arrival to an M/M/c queue
/// (`c` servers, offered load `offered_load` = lambda * S Erlangs) has to
/// wait. 1 when the load reaches `c` (no steady state).
///
/// C(c, a) = [a^c / c! * c / (c - a)] / [sum_{k<c} a^k / k! + a^c / c! * c / (c - a)].
/// Computed through Erlang's B formula's recursion, B(0) = 1,
/// B(k) = a B(k-1) / (k + a B(k-1)), then C = B / (1 - (a/c)(1 - B)), which
/// avoids the factorials' overflow. Source: Kleinrock, Queueing Systems
/// Vol. 1, Section 3.5 (the M/M/m queue); Harchol-Balter, Chapter 14
/// (server farms: M/M/k and M/M/k/k, Erlang-B and Erlang-C).
pub fn erlang_c(c: usize, offered_load: f64) -> f64 {
    assert!(c >= 1, "c = 0: a queue needs at least one server");
    check("offered_load", offered_load);
    let a = offered_load;
    if a >= c as f64 {
        return 1.0;
    }
    let mut b = 1.0;
    for k in 1..=c {
        b = a * b / (k as f64 + a * b);
    }
    b / (1.0 - (a / c as f64) * (1.0 - b))
}

/// Mean waiting time in queue of the M/M/c queue: `c` identical servers,
/// one FCFS queue, Poisson arrivals at `lambda`, exponential service of mean
/// `mean_service`.
///
/// Wq = C(c, a) * S / (c - a), a = lambda * S. Source: Kleinrock, Queueing
/// Systems Vol. 1, Section 3.5; Harchol-Balter, Chapter 14.
pub fn mmc_wait(lambda: f64, mean_service: f64, c: usize) -> f64 {
    check("lambda", lambda);
    check("mean_service", mean_service);
    let a = lambda * mean_service;
    if a >= c as f64 {
        return f64::INFINITY;
    }
    erlang_c(c, a) * mean_service / (c as f64 - a)
}

/// Mean waiting times in queue of a non-preemptive priority M/G/1 queue
/// (Cobham's formula). `classes[k]` = (arrival rate, mean service time,
/// second moment of the service time) of class k; class 0 is served first,
/// a job in service is never interrupted. Returns Wq per class, infinite
/// for every class from the first whose cumulative load reaches 1.
///
/// W0 = sum_i lambda_i E[S_i^2] / 2 (the mean residual work found in
/// service), sigma_k = sum_{i<=k} rho_i,
/// Wq_k = W0 / ((1 - sigma_{k-1}) (1 - sigma_k)).
/// Source: A. Cobham, "Priority Assignment in Waiting Line Problems",
/// Operations Research 2 (1954); Kleinrock, Queueing Systems Vol. 2,
/// Chapter 3 (priority queueing, the non-preemptive M/G/1 system);
/// Harchol-Balter, Chapter 31 (non-preemptive priority).
pub fn cobham_priority_waits(classes: &[(f64, f64, f64)]) -> Vec<f64> {
    for (k, &(l, s, s2)) in classes.iter().enumerate() {
        check(&format!("classes[{k}].lambda"), l);
        check(&format!("classes[{k}].mean_service"), s);
        check(&format!("classes[{k}].second_moment"), s2);
    }
    let w0: f64 = classes.iter().map(|&(l, _, s2)| l * s2 / 2.0).sum();
    let mut sigma_before = 0.0;
    classes
        .iter()
        .map(|&(l, s, _)| {
            let sigma = sigma_before + l * s;
            let w = if sigma >= 1.0 {
                f64::INFINITY
            } else {
                w0 / ((1.0 - sigma_before) * (1.0 - sigma))
            };
            sigma_before = sigma;
            w
        })
        .collect()
}

/// A station of a closed queueing network, for [`mva`]. `demand` is the
/// total service demand of one customer's cycle at the station (visits x
/// mean service time per visit), in the unit of the think time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Station {
    /// A queueing station with `servers` identical servers sharing one
    /// queue: FCFS with exponential service, or processor sharing (any
    /// service distribution); both have the same product-form solution.
    /// Several servers make its service rate load-dependent, min(j, c) / S
    /// with j customers present, and [`mva`] solves it exactly.
    Queue { demand: f64, servers: usize },
    /// A delay (infinite-server) station: no queueing, every customer
    /// spends `demand` there.
    Delay { demand: f64 },
}

/// What exact MVA gives for a population of `n` customers.
#[derive(Clone, Debug, PartialEq)]
pub struct MvaResult {
    /// System throughput X(n): customers' cycles completed per time unit.
    pub throughput: f64,
    /// Response time R(n): a cycle's time at the stations, think excluded.
    pub response: f64,
    /// Mean number of customers at each station (queued and in service).
    pub queue_length: Vec<f64>,
    /// Residence time per cycle at each station (all visits, queue and
    /// service).
    pub residence: Vec<f64>,
    /// A queueing station's utilisation: the fraction of its servers busy,
    /// X * D / c. A delay station's: the mean number of customers in it,
    /// X * D (it never saturates).
    pub utilization: Vec<f64>,
}

/// Exact mean value analysis of a closed, single-class, product-form
/// network: `n` customers, each thinking for a mean `think` between cycles
/// (a delay outside the stations), then visiting the `stations`.
///
/// For n = 1..N, with Q_k(0) = 0:
/// - delay station: R_k(n) = D_k;
/// - single-server queueing station: R_k(n) = D_k (1 + Q_k(n-1))
///   (the arrival theorem);
/// - c-server queueing station (load-dependent rate min(j, c) / S with j
///   customers present): the exact recursion on the marginal probabilities
///   p_k(j | n), written so only j < c is needed,
///   R_k(n) = D_k / c * (1 + Q_k(n-1) + sum_{j=0}^{c-2} (c-1-j) p_k(j | n-1)),
///   p_k(j | n) = D_k / j * X(n) * p_k(j-1 | n-1) for 1 <= j < c,
///   p_k(0 | n) = p_k(0 | n-1) * X(n) / X_{-k}(n), X_{-k} the throughput of
///   the same network without station k (solved the same way). The
///   textbook p_k(0 | n) = 1 - sum_{j>=1} p_k(j | n) subtracts nearly equal
///   numbers once the station saturates and diverges within a few dozen
///   customers; this form only multiplies positive numbers;
/// - X(n) = n / (Z + sum_k R_k(n)), Q_k(n) = X(n) R_k(n) (Little's law).
///
/// Each c-server station costs one more solution of the network without
/// it, so the work doubles per c-server station: meant for the few stations
/// of a validation model, not for large networks.
///
/// Source: M. Reiser and S. S. Lavenberg, "Mean-Value Analysis of Closed
/// Multichain Queuing Networks", JACM 27(2), 1980 (the recursion);
/// M. Reiser, "Mean-Value Analysis and Convolution Method for
/// Queue-Dependent Servers in Closed Queueing Networks", Performance
/// Evaluation 1(1), 1981 (the marginal probabilities and the
/// complement-network form of p_k(0 | n)); Lazowska, Zahorjan, Graham and
/// Sevcik, Quantitative System Performance, Chapter 6 (exact MVA) and its
/// treatment of load-dependent service centres; Bolch, Greiner, de Meer
/// and Trivedi, Queueing Networks and Markov Chains, Chapter 8 (MVA with
/// multiple servers).
///
/// Panics when a demand or the think time is negative or not finite, a
/// queueing station has no server, or `n > 0` and everything takes no
/// time (the throughput would be infinite).
pub fn mva(stations: &[Station], n: usize, think: f64) -> MvaResult {
    check("think", think);
    let mut total = think;
    for (k, s) in stations.iter().enumerate() {
        match *s {
            Station::Queue { demand, servers } => {
                check(&format!("stations[{k}].demand"), demand);
                assert!(
                    servers >= 1,
                    "stations[{k}].servers = 0: needs at least one"
                );
                total += demand;
            }
            Station::Delay { demand } => {
                check(&format!("stations[{k}].demand"), demand);
                total += demand;
            }
        }
    }
    assert!(
        n == 0 || total > 0.0,
        "every demand and the think time are zero: the throughput is unbounded"
    );
    solve(stations, n, think).1
}

/// [`mva`] without the checks, also returning X(pop) for pop = 0..=n (the
/// complement networks' throughputs feed p_k(0 | n)). A complement network
/// may take no time at all; its throughput is then infinite and the
/// station it left out is never empty (p_k(0 | n) = 0).
fn solve(stations: &[Station], n: usize, think: f64) -> (Vec<f64>, MvaResult) {
    let m = stations.len();
    let mut queue = vec![0.0; m];
    let mut residence = vec![0.0; m];
    // For each c-server station: p_k(j | pop) for j < c (empty at pop = 0)
    // and the throughputs of the network without it.
    let mut marginal: Vec<Option<(Vec<f64>, Vec<f64>)>> = stations
        .iter()
        .enumerate()
        .map(|(k, s)| match *s {
            Station::Queue { servers, .. } if servers > 1 => {
                let mut p = vec![0.0; servers];
                p[0] = 1.0;
                let mut others = stations.to_vec();
                others.remove(k);
                Some((p, solve(&others, n, think).0))
            }
            _ => None,
        })
        .collect();
    let mut xs = Vec::with_capacity(n + 1);
    xs.push(0.0);
    let mut x = 0.0;
    for pop in 1..=n {
        for (k, s) in stations.iter().enumerate() {
            residence[k] = match (*s, &marginal[k]) {
                (Station::Delay { demand }, _) => demand,
                (Station::Queue { demand, servers }, Some((p, _))) => {
                    let idle_share: f64 = (0..servers - 1)
                        .map(|j| (servers - 1 - j) as f64 * p[j])
                        .sum();
                    demand / servers as f64 * (1.0 + queue[k] + idle_share)
                }
                (Station::Queue { demand, .. }, None) => demand * (1.0 + queue[k]),
            };
        }
        x = pop as f64 / (think + residence.iter().sum::<f64>());
        xs.push(x);
        for (k, s) in stations.iter().enumerate() {
            queue[k] = x * residence[k];
            if let (Station::Queue { demand, servers }, Some((p, without))) = (*s, &mut marginal[k])
            {
                let empty = if without[pop].is_infinite() {
                    0.0
                } else {
                    p[0] * x / without[pop]
                };
                // Highest j first: p(j | pop) uses p(j-1 | pop-1).
                for j in (1..servers).rev() {
                    p[j] = demand / j as f64 * x * p[j - 1];
                }
                p[0] = empty;
            }
        }
    }
    let utilization = stations
        .iter()
        .map(|s| match *s {
            Station::Delay { demand } => x * demand,
            Station::Queue { demand, servers } => x * demand / servers as f64,
        })
        .collect();
    let result = MvaResult {
        throughput: x,
        response: residence.iter().sum(),
        queue_length: queue,
        residence,
        utilization,
    };
    (xs, result)
}

/// The response-time law of a closed interactive system: R = N / X - Z.
/// Source: Lazowska et al., Quantitative System Performance, Chapter 3
/// (fundamental laws: the response time law).
pub fn response_time_law(n: usize, throughput: f64, think: f64) -> f64 {
    n as f64 / throughput - think
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-300)
    }

    #[track_caller]
    fn assert_close(a: f64, b: f64) {
        assert!(close(a, b, 1e-9), "{a} != {b}");
    }

    #[test]
    fn single_server_queues_by_hand() {
        // rho = 0.5, S = 1: M/M/1 Wq = 0.5 * 1 / 0.5 = 1; M/D/1 half that.
        assert_close(mm1_wait(0.5, 1.0), 1.0);
        assert_close(md1_wait(0.5, 1.0), 0.5);
        // rho = 0.8, S = 10: M/M/1 Wq = 0.8 * 10 / 0.2 = 40; M/D/1 20.
        assert_close(mm1_wait(0.08, 10.0), 40.0);
        assert_close(md1_wait(0.08, 10.0), 20.0);
        // P-K with the exponential's E[S^2] = 2 S^2 is M/M/1, with S^2 M/D/1.
        for (l, s) in [(0.3, 2.0), (0.9, 1.0), (1e-4, 5e3)] {
            assert_close(mg1_wait(l, s, 2.0 * s * s), mm1_wait(l, s));
            assert_close(mg1_wait(l, s, s * s), md1_wait(l, s));
        }
        // Uniform service on [0, 2]: E[S] = 1, E[S^2] = 4/3; rho = 0.6:
        // Wq = 0.6 * (4/3) / (2 * 0.4) = 1.
        assert_close(mg1_wait(0.6, 1.0, 4.0 / 3.0), 1.0);
        assert_eq!(mm1_wait(1.0, 1.0), f64::INFINITY);
        assert_eq!(md1_wait(2.0, 1.0), f64::INFINITY);
        assert_eq!(mm1_wait(0.0, 3.0), 0.0);
    }

    #[test]
    fn erlang_c_by_hand_and_by_its_definition() {
        // c = 2, a = 1: (1/2 * 2/1) / (1 + 1 + 1) = 1/3.
        assert_close(erlang_c(2, 1.0), 1.0 / 3.0);
        // One server: the probability of waiting is rho.
        assert_close(erlang_c(1, 0.7), 0.7);
        // c = 3, a = 2: a^3/3! * 3/(3-2) = 4; sum_{k<3} = 1 + 2 + 2 = 5; 4/9.
        assert_close(erlang_c(3, 2.0), 4.0 / 9.0);
        // The definition with factorials, for loads where they do not overflow.
        for c in 1..=12usize {
            for frac in [0.1, 0.5, 0.8, 0.95] {
                let a = frac * c as f64;
                let fact = |k: usize| (1..=k).map(|i| i as f64).product::<f64>();
                let top = a.powi(c as i32) / fact(c) * c as f64 / (c as f64 - a);
                let below: f64 = (0..c).map(|k| a.powi(k as i32) / fact(k)).sum();
                assert!(close(erlang_c(c, a), top / (below + top), 1e-12));
            }
        }
        // Large c does not overflow.
        let v = erlang_c(500, 480.0);
        assert!(v > 0.0 && v < 1.0, "{v}");
        assert_eq!(erlang_c(4, 4.0), 1.0);
    }

    #[test]
    fn mmc_by_hand() {
        // c = 2, S = 1, lambda = 1 (rho = 0.5): C = 1/3, Wq = (1/3) / 1.
        assert_close(mmc_wait(1.0, 1.0, 2), 1.0 / 3.0);
        // One server is M/M/1.
        assert_close(mmc_wait(0.8, 1.0, 1), mm1_wait(0.8, 1.0));
        // c = 3, S = 1, lambda = 2: Wq = (4/9) / (3 - 2).
        assert_close(mmc_wait(2.0, 1.0, 3), 4.0 / 9.0);
        assert_eq!(mmc_wait(3.0, 1.0, 3), f64::INFINITY);
    }

    #[test]
    fn cobham_by_hand() {
        // Two classes, exponential service of mean 1 (E[S^2] = 2), each
        // lambda = 0.25: W0 = 2 * 0.25 * 2 / 2 = 0.5; sigma = 0.25, 0.5.
        // Wq_0 = 0.5 / (1 * 0.75) = 2/3; Wq_1 = 0.5 / (0.75 * 0.5) = 4/3.
        let w = cobham_priority_waits(&[(0.25, 1.0, 2.0), (0.25, 1.0, 2.0)]);
        assert_close(w[0], 2.0 / 3.0);
        assert_close(w[1], 4.0 / 3.0);
        // Conservation: with equal service distributions the load-weighted
        // mean wait equals the FCFS M/G/1 wait (Kleinrock's conservation law).
        let fcfs = mg1_wait(0.5, 1.0, 2.0);
        assert_close(0.5 * w[0] + 0.5 * w[1], fcfs);
        // One class is the M/G/1.
        let one = cobham_priority_waits(&[(0.3, 2.0, 5.0)]);
        assert_close(one[0], mg1_wait(0.3, 2.0, 5.0));
        // Reads (fixed 25, rate 0.01) ahead of writes (fixed 200, rate
        // 0.002): W0 = (0.01 * 625 + 0.002 * 40000) / 2 = 43.125;
        // sigma = 0.25, 0.65; Wq = 43.125 / 0.75 = 57.5 and
        // 43.125 / (0.75 * 0.35) = 164.2857...
        let w = cobham_priority_waits(&[(0.01, 25.0, 625.0), (0.002, 200.0, 40000.0)]);
        assert_close(w[0], 57.5);
        assert_close(w[1], 43.125 / (0.75 * 0.35));
        // Saturated low class: the high class still has a finite wait.
        let w = cobham_priority_waits(&[(0.5, 1.0, 1.0), (0.6, 1.0, 1.0)]);
        assert!(w[0].is_finite());
        assert_eq!(w[1], f64::INFINITY);
    }

    #[test]
    fn mva_single_servers_by_hand() {
        // D = (1, 2), Z = 0. n = 1: R = 1 + 2, X = 1/3, Q = (1/3, 2/3).
        // n = 2: R1 = 4/3, R2 = 2 * 5/3 = 10/3, X = 2 / (14/3) = 3/7.
        let st = [
            Station::Queue {
                demand: 1.0,
                servers: 1,
            },
            Station::Queue {
                demand: 2.0,
                servers: 1,
            },
        ];
        let r = mva(&st, 2, 0.0);
        assert_close(r.throughput, 3.0 / 7.0);
        assert_close(r.response, 14.0 / 3.0);
        assert_close(r.residence[0], 4.0 / 3.0);
        assert_close(r.queue_length[1], 3.0 / 7.0 * 10.0 / 3.0);
        assert_close(r.utilization[1], 6.0 / 7.0);
        // Buzen's convolution gives the same: G(1) = 3, G(2) = 1 + 2 + 4 = 7.
        let one = mva(&st, 1, 0.0);
        assert_close(one.throughput, 1.0 / 3.0);
        // Nobody in the network: no throughput, no queue.
        let zero = mva(&st, 0, 5.0);
        assert_eq!(zero.throughput, 0.0);
        assert_eq!(zero.queue_length, vec![0.0, 0.0]);
    }

    #[test]
    fn mva_response_time_law_and_bounds() {
        let st = [
            Station::Queue {
                demand: 3.0,
                servers: 4,
            },
            Station::Queue {
                demand: 1.0,
                servers: 1,
            },
            Station::Delay { demand: 2.0 },
        ];
        let z = 10.0;
        for n in [1, 2, 5, 24, 200] {
            let r = mva(&st, n, z);
            assert_close(response_time_law(n, r.throughput, z), r.response);
            let total: f64 = r.queue_length.iter().sum();
            assert_close(total + r.throughput * z, n as f64);
            // Asymptotic bounds (Lazowska et al., Chapter 5): X <= N / (D + Z)
            // and X <= 1 / max(D_k / c_k).
            assert!(r.throughput <= n as f64 / (6.0 + z) * (1.0 + 1e-12));
            assert!(r.throughput <= 1.0 + 1e-12);
        }
        // At 200 customers the single-server station (1 / D = 1) saturates.
        assert!(close(mva(&st, 200, z).throughput, 1.0, 1e-6));
    }

    /// The product-form solution by brute force: the throughput is
    /// G(N-1) / G(N), G(N) summing prod_k f_k(n_k) over every way of placing
    /// N customers on the stations and the think (a delay of demand Z), with
    /// f(n) = D^n / prod_{j=1}^{n} min(j, c) (c infinite for a delay).
    fn product_form_throughput(stations: &[Station], n: usize, think: f64) -> f64 {
        let mut all: Vec<(f64, usize)> = stations
            .iter()
            .map(|s| match *s {
                Station::Queue { demand, servers } => (demand, servers),
                Station::Delay { demand } => (demand, usize::MAX),
            })
            .collect();
        all.push((think, usize::MAX));
        let f = |&(d, c): &(f64, usize), k: usize| -> f64 {
            (1..=k).map(|j| d / j.min(c) as f64).product()
        };
        // g[m] over the stations processed so far (convolution).
        let mut g = vec![0.0; n + 1];
        g[0] = 1.0;
        for st in &all {
            let mut next = vec![0.0; n + 1];
            for (m, slot) in next.iter_mut().enumerate() {
                *slot = (0..=m).map(|k| f(st, k) * g[m - k]).sum();
            }
            g = next;
        }
        g[n - 1] / g[n]
    }

    #[test]
    fn mva_multi_server_matches_the_product_form() {
        let cases: Vec<(Vec<Station>, f64)> = vec![
            // A 4-core CPU and two devices, as the closed-loop tests run.
            (
                vec![
                    Station::Queue {
                        demand: 20.0,
                        servers: 4,
                    },
                    Station::Queue {
                        demand: 8.0,
                        servers: 1,
                    },
                    Station::Queue {
                        demand: 3.0,
                        servers: 2,
                    },
                ],
                50.0,
            ),
            // A saturating 2-core station and a delay, no think time.
            (
                vec![
                    Station::Queue {
                        demand: 5.0,
                        servers: 2,
                    },
                    Station::Delay { demand: 1.0 },
                ],
                0.0,
            ),
            (
                vec![Station::Queue {
                    demand: 1.0,
                    servers: 8,
                }],
                3.0,
            ),
        ];
        for (st, z) in &cases {
            for n in [1, 2, 3, 4, 7, 24, 60, 150] {
                let r = mva(st, n, *z);
                let x = product_form_throughput(st, n, *z);
                assert!(
                    close(r.throughput, x, 1e-9),
                    "n={n}: {} vs {x}",
                    r.throughput
                );
                assert_close(response_time_law(n, r.throughput, *z), r.response);
            }
        }
    }

    #[test]
    fn mva_machine_repairman_by_birth_death() {
        // One c-server station and think time Z: the finite-source
        // M/M/c//N queue, solved directly from its birth-death chain:
        // p(j) ∝ N! / (N-j)! * (S/Z)^j / prod_{i<=j} min(i, c).
        let (s, z, c, n) = (2.0, 5.0, 3usize, 10usize);
        let mut w = vec![1.0];
        for j in 1..=n {
            let prev = w[j - 1];
            w.push(prev * (n - j + 1) as f64 * (s / z) / j.min(c) as f64);
        }
        let total: f64 = w.iter().sum();
        let busy: f64 = w
            .iter()
            .enumerate()
            .map(|(j, p)| j.min(c) as f64 * p)
            .sum::<f64>()
            / total;
        let x = busy / s;
        let r = mva(
            &[Station::Queue {
                demand: s,
                servers: c,
            }],
            n,
            z,
        );
        assert!(close(r.throughput, x, 1e-12), "{} vs {x}", r.throughput);
        let mean_j: f64 = w.iter().enumerate().map(|(j, p)| j as f64 * p).sum::<f64>() / total;
        assert!(close(r.queue_length[0], mean_j, 1e-12));
        assert!(close(r.utilization[0], busy / c as f64, 1e-12));
    }

    #[test]
    fn mva_single_server_by_birth_death() {
        // One single-server station and think time Z: the finite-source
        // M/M/1//N queue, p(j) ∝ N! / (N-j)! * (S/Z)^j, X = (1 - p(0)) / S.
        let (s, z, n) = (2.0, 1.0, 5usize);
        let mut w = vec![1.0];
        for j in 1..=n {
            let prev = w[j - 1];
            w.push(prev * (n - j + 1) as f64 * (s / z));
        }
        let total: f64 = w.iter().sum();
        let r = mva(
            &[Station::Queue {
                demand: s,
                servers: 1,
            }],
            n,
            z,
        );
        assert!(close(r.throughput, (1.0 - w[0] / total) / s, 1e-12));
    }

    #[test]
    #[should_panic(expected = "think = -1")]
    fn negative_think_is_refused() {
        mva(&[], 1, -1.0);
    }
}
