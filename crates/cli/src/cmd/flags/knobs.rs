//! `--threads`, `--workers`, ... : one flag per model knob, generated from
//! the knob table (`iolab_model::KNOBS`), so a new knob is a flag of every
//! subcommand that takes knobs without a line here. Each takes one value or
//! a comma-separated list (a sweep, where the subcommand sweeps), checked
//! against the knob's range as it is parsed.

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};

use iolab_model::knob::{KnobDef, KNOBS};
use iolab_model::ModelParams;

/// The knob flags given: each knob's values, in the order written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KnobFlags {
    given: Vec<(&'static KnobDef, Vec<u32>)>,
}

impl KnobFlags {
    /// The knobs as one set: one value each (a list is refused, naming the flag).
    pub fn params(&self) -> Result<ModelParams, KnobFlagError> {
        let mut p = ModelParams::default();
        for (k, values) in &self.given {
            match values.as_slice() {
                [v] => (k.set)(&mut p, Some(*v)),
                _ => return Err(KnobFlagError::OneValue(k.flag())),
            }
        }
        Ok(p)
    }

    /// The values given for the knob called `name` (empty when not given).
    pub fn values(&self, name: &str) -> &[u32] {
        self.given
            .iter()
            .find(|(k, _)| k.name == name)
            .map_or(&[], |(_, v)| v.as_slice())
    }

    /// Every combination of the values given (one set when none is a list).
    pub fn sweep(&self, skip: &[&str]) -> Vec<ModelParams> {
        let mut sets = vec![ModelParams::default()];
        for (k, values) in self.given.iter().filter(|(k, _)| !skip.contains(&k.name)) {
            sets = sets
                .iter()
                .flat_map(|p| {
                    values.iter().map(move |v| {
                        let mut q = p.clone();
                        (k.set)(&mut q, Some(*v));
                        q
                    })
                })
                .collect();
        }
        sets
    }
}

/// A knob flag's value that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum KnobFlagError {
    /// Not a whole number.
    #[error("'{0}' is not a whole number")]
    NotNumber(String),
    /// Out of the knob's range.
    #[error(transparent)]
    Range(#[from] iolab_model::KnobError),
    /// A list where one value is taken.
    #[error("{0} takes one value here")]
    OneValue(String),
}

/// Parse one value of `k`: a whole number in its range.
fn parse(k: &'static KnobDef, text: &str) -> Result<u32, KnobFlagError> {
    let v: u64 = text
        .trim()
        .parse()
        .map_err(|_| KnobFlagError::NotNumber(text.to_string()))?;
    k.check(v).map_err(KnobFlagError::from)
}

impl Args for KnobFlags {
    fn augment_args(cmd: Command) -> Command {
        let cmd = cmd.next_help_heading("Model knobs");
        KNOBS.iter().fold(cmd, |cmd, k| {
            cmd.arg(
                Arg::new(k.name)
                    .long(k.name.replace('_', "-"))
                    .value_name("N")
                    .help(iolab_model::concurrency::knob_help(k))
                    .action(ArgAction::Append)
                    .value_delimiter(',')
                    .value_parser(move |s: &str| parse(k, s)),
            )
        })
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for KnobFlags {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let given = KNOBS
            .iter()
            .filter_map(|k| {
                let values: Vec<u32> = m.get_many::<u32>(k.name)?.copied().collect();
                Some((k, values))
            })
            .collect();
        Ok(KnobFlags { given })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct T {
        #[command(flatten)]
        k: KnobFlags,
    }

    #[test]
    fn every_knob_is_a_flag_checked_against_its_range() {
        let t = T::try_parse_from(["t", "--threads", "8", "--mc-pool", "2"]).unwrap();
        let p = t.k.params().unwrap();
        assert_eq!((p.threads, p.mc_pool), (Some(8), Some(2)));
        for k in KNOBS {
            let flag = k.flag();
            assert!(
                T::try_parse_from(["t", flag.as_str(), "1"]).is_ok(),
                "{flag}"
            );
            let e = T::try_parse_from(["t", flag.as_str(), "0"]).unwrap_err();
            assert!(e.to_string().contains("out of range"), "{e}");
        }
        let e = T::try_parse_from(["t", "--workers", "4294967295"]).unwrap_err();
        assert!(e.to_string().contains("1..=1024"), "{e}");
    }

    #[test]
    fn lists_sweep_and_are_refused_where_one_value_is_wanted() {
        let t = T::try_parse_from(["t", "--workers", "4,8", "--threads", "2"]).unwrap();
        assert_eq!(t.k.values("workers"), [4, 8]);
        assert!(t
            .k
            .params()
            .unwrap_err()
            .to_string()
            .contains("--workers takes one value"));
        let sets = t.k.sweep(&[]);
        assert_eq!(sets.len(), 2);
        assert_eq!((sets[1].workers, sets[1].threads), (Some(8), Some(2)));
        assert_eq!(t.k.sweep(&["workers"]).len(), 1);
    }
}
