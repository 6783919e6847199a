//! `next_runs(expr, after, count)`: croner's chain of next fires, for bench_next_fire.py.
//!
//! Times are whole minutes since 1970-01-01T00:00 UTC, as in cronctl's core, so the binding
//! makes no Python datetime: one call from Python per chain, the expression parsed in it (as
//! the benchmark's other libraries construct theirs once per chain).

use std::str::FromStr;

use chrono::{TimeZone, Utc};
use croner::Cron;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Up to `count` fire times after minute `after`, each the next after the one before.
#[pyfunction]
fn next_runs(expr: &str, after: i64, count: usize) -> PyResult<Vec<i64>> {
    let cron = Cron::from_str(expr).map_err(|error| PyValueError::new_err(error.to_string()))?;
    let start = Utc
        .timestamp_opt(after * 60, 0)
        .single()
        .ok_or_else(|| PyValueError::new_err("time out of range"))?;
    Ok(cron.iter_after(start).take(count).map(|t| t.timestamp().div_euclid(60)).collect())
}

#[pymodule]
fn cronctl_bench_croner(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(next_runs, module)?)?;
    Ok(())
}
