//! `--optimize min|max`: the extremal value of a rational function over a box, by branch and
//! bound on sound interval bounds ([`crate::wellformed::bounds`]): the best value found at
//! exact points (a point attaining it is reported) and a sound enclosure `[lo, hi]` of the
//! optimum, refined until its width is within the relative precision asked for (relative to
//! the optimum, or to 1e-9 for an optimum nearer 0; or until a budget of boxes is spent: the
//! enclosure is sound either way).

use crate::space::Region;
use crate::wellformed::bounds;
use augur_ratfun::{rational_f64, RatFunc};
use num_rational::BigRational;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// The result of [`optimize`].
#[derive(Clone, Debug)]
pub struct ParamOptimum {
    /// The best value found (attained at `point`).
    pub value: f64,
    /// A point of the box where the function has `value`.
    pub point: Vec<BigRational>,
    /// A sound enclosure of the optimum over the box.
    pub bound: (f64, f64),
}

struct Item {
    key: f64,
    region: Region,
}

impl PartialEq for Item {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl Eq for Item {}
impl PartialOrd for Item {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Item {
    fn cmp(&self, o: &Self) -> Ordering {
        self.key.total_cmp(&o.key)
    }
}

/// Most boxes examined.
const BUDGET: usize = 200_000;

/// The maximum (`max`) or minimum of `f` over `region`, to relative precision `eps`.
pub fn optimize(f: &RatFunc, region: &Region, max: bool, eps: f64) -> ParamOptimum {
    // Minimising f is maximising -f.
    let g = if max { f.clone() } else { -f };
    let c = g.compiled();
    let value_at = |x: &[BigRational]| g.eval(x).map(|v| rational_f64(&v));
    let mut best = f64::NEG_INFINITY;
    let mut best_point = region.centre();
    let consider = |x: Vec<BigRational>, best: &mut f64, best_point: &mut Vec<BigRational>| {
        if let Some(v) = value_at(&x) {
            if v > *best {
                *best = v;
                *best_point = x;
            }
        }
    };
    for x in region.corners() {
        consider(x, &mut best, &mut best_point);
    }
    consider(region.centre(), &mut best, &mut best_point);
    let mut heap = BinaryHeap::new();
    let (_, hi) = bounds(&c, &g, region);
    heap.push(Item {
        key: hi,
        region: region.clone(),
    });
    let mut examined = 0;
    let upper = loop {
        let Some(top) = heap.pop() else {
            break best;
        };
        let gap = top.key - best;
        if gap <= eps * best.abs().max(1e-9) || examined >= BUDGET {
            break top.key.max(best);
        }
        examined += 1;
        let (a, b) = top.region.split();
        for r in [a, b] {
            consider(r.centre(), &mut best, &mut best_point);
            let (_, hi) = bounds(&c, &g, &r);
            if hi > best {
                heap.push(Item { key: hi, region: r });
            }
        }
    };
    let upper = upper.max(best);
    if max {
        ParamOptimum {
            value: best,
            point: best_point,
            bound: (best, upper),
        }
    } else {
        ParamOptimum {
            value: -best,
            point: best_point,
            bound: (-upper, -best),
        }
    }
}
