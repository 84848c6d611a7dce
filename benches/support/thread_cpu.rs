//! Criterion measurement of the benchmark thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), not
//! wall time: on a machine shared with other builds, wall time counts the time the thread
//! waits for a core. Included by path (`#[path = ...] mod thread_cpu;`) in the benches that use it.

use criterion::Throughput;

/// Criterion measurement of the thread's CPU time.
pub struct ThreadCpu;

struct DurationFormatter;

impl criterion::measurement::ValueFormatter for DurationFormatter {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = if typical < 1e3 {
            (1.0, "ns")
        } else if typical < 1e6 {
            (1e-3, "µs")
        } else if typical < 1e9 {
            (1e-6, "ms")
        } else {
            (1e-9, "s")
        };
        for v in values {
            *v *= factor;
        }
        unit
    }
    fn scale_throughputs(
        &self,
        _typical: f64,
        throughput: &Throughput,
        values: &mut [f64],
    ) -> &'static str {
        let (n, unit) = match throughput {
            Throughput::Bytes(b) | Throughput::BytesDecimal(b) => (*b as f64, "B/s"),
            Throughput::Elements(e) => (*e as f64, "elem/s"),
        };
        for v in values {
            *v = n * 1e9 / *v;
        }
        unit
    }
    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}

impl criterion::measurement::Measurement for ThreadCpu {
    type Intermediate = cpu_time::ThreadTime;
    type Value = std::time::Duration;
    fn start(&self) -> Self::Intermediate {
        cpu_time::ThreadTime::now()
    }
    fn end(&self, i: Self::Intermediate) -> Self::Value {
        i.elapsed()
    }
    fn add(&self, a: &Self::Value, b: &Self::Value) -> Self::Value {
        *a + *b
    }
    fn zero(&self) -> Self::Value {
        std::time::Duration::ZERO
    }
    fn to_f64(&self, v: &Self::Value) -> f64 {
        v.as_nanos() as f64
    }
    fn formatter(&self) -> &dyn criterion::measurement::ValueFormatter {
        &DurationFormatter
    }
}
