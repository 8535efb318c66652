//! The `[load]` table of an HTTP preset: its sweep axes, and the
//! [`HttpWork`] of one run picked out of them.

use iolab_model::attack::{DEFAULT_MESSAGE, DEFAULT_MESSAGE_RATE, DEFAULT_OPEN_RATE};
use iolab_model::experiment::{HeldLoad, HttpWork};
use iolab_model::limits::{thousands, MAX_CONNECTIONS};
use iolab_model::{Arrival, ConnectionMode, Driver};

use super::super::file::{
    ArrivalKind, ConnectionKind, DriverKind, HeldSection, LoadSection, TargetSection,
};
use super::super::sweep::{Axis, Point};
use super::super::values::Count;
use super::{counts, fault, FieldError, Pick};
use super::{DEFAULT_INTERVAL, DEFAULT_TIMEOUT, MIN_INTERVAL};

/// Counts a run holds as `u32`, checked before they are narrowed (a
/// `concurrency = 99999999999` is refused as written, not as `u32::MAX`).
fn check_counts(load: &LoadSection) -> Result<(), FieldError> {
    let max = u64::from(MAX_CONNECTIONS);
    let fields = [
        (
            "load.concurrency",
            load.concurrency.as_ref().map(|c| c.values()),
        ),
        (
            "load.max_connections",
            load.max_connections.as_ref().map(std::slice::from_ref),
        ),
    ];
    for (field, values) in fields {
        if let Some(c) = values.into_iter().flatten().find(|c| c.0 > max) {
            return Err(fault(
                field,
                format!(
                    "{} is past the most connections one run holds, {}",
                    thousands(c.0),
                    thousands(max)
                ),
            ));
        }
    }
    Ok(())
}

pub(super) fn http_axes(
    load: &LoadSection,
    held: Option<&HeldSection>,
) -> Result<Vec<Axis>, FieldError> {
    check_counts(load)?;
    if held.is_some() && load.driver != DriverKind::Held {
        return Err(fault(
            "held",
            "a [held] table needs driver = \"held\" in [load]",
        ));
    }
    let mut axes = vec![Axis::new(
        "steps",
        load.steps
            .values()
            .iter()
            .map(|s| Point::Steps(s.0.clone()))
            .collect(),
    )];
    axes.extend(driver_axes(load, held)?);
    if let Some(d) = &load.duration {
        axes.push(Axis::new(
            "duration",
            d.values().iter().map(|d| Point::Duration(d.0)).collect(),
        ));
    }
    if let Some(t) = &load.timeout {
        axes.push(Axis::new(
            "timeout",
            t.values().iter().map(|d| Point::Duration(d.0)).collect(),
        ));
    }
    if let Some(c) = &load.connections {
        axes.push(Axis::new(
            "connections",
            c.values().iter().map(|c| Point::Connections(*c)).collect(),
        ));
    }
    if load.seed.is_some() && load.arrival != ArrivalKind::Poisson {
        return Err(fault(
            "load.seed",
            "a seed applies to arrival = \"poisson\"",
        ));
    }
    Ok(axes)
}

/// The open loop's rate, the closed loop's clients (and request cap), or
/// the WebSockets held.
fn driver_axes(load: &LoadSection, held: Option<&HeldSection>) -> Result<Vec<Axis>, FieldError> {
    match load.driver {
        DriverKind::Held => held_axes(load, held),
        DriverKind::Open => open_axes(load),
        DriverKind::Closed => closed_axes(load),
    }
}

/// The connections a held load opens, from its [held] table.
fn held_axes(load: &LoadSection, held: Option<&HeldSection>) -> Result<Vec<Axis>, FieldError> {
    let h = held.ok_or_else(|| {
        fault(
            "held",
            "driver = \"held\" needs a [held] table, e.g. connections = [1000, 5000], hold = \"30s\"",
        )
    })?;
    let given = [
        ("load.rate", load.rate.is_some()),
        ("load.concurrency", load.concurrency.is_some()),
        ("load.requests", load.requests.is_some()),
        ("load.duration", load.duration.is_some()),
    ];
    if let Some((field, _)) = given.into_iter().find(|(_, on)| *on) {
        return Err(fault(
            field,
            "a held load opens [held] connections for [held] hold: remove it",
        ));
    }
    if let Some(r) = h.message_rate.filter(|r| !(r.is_finite() && *r >= 0.0)) {
        return Err(fault(
            "held.message_rate",
            format!("{r}: give messages per connection per second, 0 or more"),
        ));
    }
    Ok(vec![Axis::new(
        "held",
        h.connections
            .values()
            .iter()
            .map(|c| Point::Count(c.0))
            .collect(),
    )])
}

/// The rates of an open loop.
fn open_axes(load: &LoadSection) -> Result<Vec<Axis>, FieldError> {
    let rate = load.rate.as_ref().ok_or_else(|| {
        fault(
            "load.rate",
            "an open loop needs `rate` (requests per second), e.g. rate = 200",
        )
    })?;
    if load.concurrency.is_some() || load.requests.is_some() {
        return Err(fault(
            if load.concurrency.is_some() {
                "load.concurrency"
            } else {
                "load.requests"
            },
            "applies to a closed loop: set driver = \"closed\" or remove it",
        ));
    }
    if load.duration.is_none() {
        return Err(fault(
            "load.duration",
            "an open loop needs `duration`, e.g. \"5s\"",
        ));
    }
    Ok(vec![Axis::new(
        "rate",
        rate.values().iter().map(|r| Point::Number(r.0)).collect(),
    )])
}

/// The clients of a closed loop, and its request cap.
fn closed_axes(load: &LoadSection) -> Result<Vec<Axis>, FieldError> {
    let c = load.concurrency.as_ref().ok_or_else(|| {
        fault(
            "load.concurrency",
            "a closed loop needs `concurrency` (clients), e.g. 50",
        )
    })?;
    if load.rate.is_some() {
        return Err(fault(
            "load.rate",
            "applies to an open loop: set driver = \"open\" or use `concurrency`",
        ));
    }
    if load.duration.is_none() && load.requests.is_none() {
        return Err(fault(
            "load.duration",
            "a closed loop needs `duration` or `requests`",
        ));
    }
    let mut axes = vec![Axis::new(
        "concurrency",
        c.values().iter().map(|c| Point::Count(c.0)).collect(),
    )];
    axes.extend(counts("requests", &load.requests));
    Ok(axes)
}

/// The work of the run at `pick`: the axes' points, scaled (every point
/// `http_axes` and the target made is there, else a fault names the field).
pub(super) fn http_work(
    load: &LoadSection,
    held: Option<&HeldSection>,
    target: &TargetSection,
    pick: &Pick,
    scale: f64,
) -> Result<HttpWork, FieldError> {
    let steps = pick.steps().ok_or_else(|| {
        fault(
            "load.steps",
            "give the workload, e.g. steps = \"sleep:100\"",
        )
    })?;
    let duration = pick.duration("duration");
    let held = match (load.driver, held) {
        (DriverKind::Held, Some(h)) => Some(held_load(h, pick)?.scaled(scale)),
        _ => None,
    };
    let driver = match load.driver {
        // Already scaled: the opens of the scaled load.
        DriverKind::Held => held.as_ref().map_or_else(
            || Err(fault("held", "driver = \"held\" needs a [held] table")),
            |h| Ok(h.opens().scaled(1.0 / scale)),
        )?,
        DriverKind::Open => {
            let (Some(rate), Some(duration)) = (pick.number("rate"), duration) else {
                return Err(fault(
                    "load.rate",
                    "an open loop needs `rate` and `duration`, e.g. rate = 200, duration = \"5s\"",
                ));
            };
            Driver::Open {
                phases: vec![iolab_model::Phase::hold(rate, duration)],
                arrival: match load.arrival {
                    ArrivalKind::Constant => Arrival::Constant,
                    ArrivalKind::Poisson => Arrival::Poisson {
                        seed: load.seed.unwrap_or(1),
                    },
                },
            }
        }
        DriverKind::Closed => Driver::Closed {
            concurrency: pick.count_u32("concurrency").ok_or_else(|| {
                fault(
                    "load.concurrency",
                    "a closed loop needs `concurrency` (clients), e.g. 50",
                )
            })?,
            requests: pick.count("requests"),
            duration,
        },
    };
    let max = load
        .max_connections
        .map_or(ConnectionMode::DEFAULT_MAX, Count::u32);
    let connections = match pick.connections() {
        Some(ConnectionKind::NewPerRequest) => ConnectionMode::NewPerRequest { max },
        Some(ConnectionKind::KeepAlive) | None => ConnectionMode::KeepAlive { max },
    };
    let timeout = pick.duration("timeout").unwrap_or(DEFAULT_TIMEOUT);
    let interval = load.interval.map_or(DEFAULT_INTERVAL, |d| d.0);
    Ok(HttpWork {
        steps: steps.clone().scaled(scale),
        driver: driver.scaled(scale),
        connections,
        timeout: timeout.mul_f64(scale),
        interval: interval.mul_f64(scale).max(MIN_INTERVAL),
        command: target.command.clone(),
        body: load.body,
        foreign: super::foreign::spec(target),
        held,
    })
}

/// The held load at `pick` (unscaled): the `held` axis's connections and
/// the `[held]` table's settings, `iolab attack`'s defaults where it is silent.
fn held_load(h: &HeldSection, pick: &Pick) -> Result<HeldLoad, FieldError> {
    let connections = pick.count_u32("held").ok_or_else(|| {
        fault(
            "held.connections",
            "give the WebSockets to hold, e.g. [1000, 5000]",
        )
    })?;
    Ok(HeldLoad {
        connections,
        open_rate: h.open_rate.map_or(DEFAULT_OPEN_RATE, |r| r.0),
        hold: h.hold.0,
        message_rate: h.message_rate.unwrap_or(DEFAULT_MESSAGE_RATE),
        message: h
            .message
            .clone()
            .unwrap_or_else(|| DEFAULT_MESSAGE.to_string()),
        source_addrs: h.source_addrs.clone(),
    })
}
