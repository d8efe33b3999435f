//! Deterministic shards: `K/N` selects the tests whose key hashes to `K`
//! among `N` buckets, so that `N` machines running `K = 1..=N` cover every
//! test exactly once, whatever order they run in and whatever else changes.
//!
//! The key is the path of the test as `expected.csv` writes it
//! (`NAME.litmus` for generated tests), so `ptxmc gen --shard K/N` and
//! `ptxmc check --shard K/N` over the unsharded `expected.csv` select the
//! same tests.

use std::fmt;
use std::str::FromStr;

/// One shard of `count`: `index` is 1-based, as in Jest and Playwright.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Which shard, from 1 to `count`.
    pub index: u64,
    /// How many shards.
    pub count: u64,
}

impl Shard {
    /// The shard containing everything.
    pub const ALL: Shard = Shard { index: 1, count: 1 };

    /// Whether the test with key `key` belongs to this shard.
    pub fn contains(&self, key: &str) -> bool {
        // XXH3 is stable across platforms and releases: shards agree between machines.
        xxhash_rust::xxh3::xxh3_64(key.as_bytes()) % self.count == self.index - 1
    }
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        let err = || format!("expected a shard `K/N` with 1 <= K <= N, found `{s}`");
        let (k, n) = s.split_once('/').ok_or_else(err)?;
        let index: u64 = k.trim().parse().map_err(|_| err())?;
        let count: u64 = n.trim().parse().map_err(|_| err())?;
        if count == 0 || index == 0 || index > count {
            return Err(err());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        assert_eq!("3/8".parse(), Ok(Shard { index: 3, count: 8 }));
        assert_eq!(
            "0/4".parse::<Shard>(),
            Err("expected a shard `K/N` with 1 <= K <= N, found `0/4`".to_string())
        );
        assert!("5/4".parse::<Shard>().is_err());
        assert!("1/0".parse::<Shard>().is_err());
        assert!("1-4".parse::<Shard>().is_err());
    }

    #[test]
    fn every_key_is_in_exactly_one_shard() {
        for key in [
            "MP+rlx.gpu@cluster.litmus",
            "a",
            "",
            "litmus/sb/SB+weak.litmus",
        ] {
            let n = (1..=7)
                .filter(|&k| Shard { index: k, count: 7 }.contains(key))
                .count();
            assert_eq!(n, 1, "{key}");
        }
        assert!(Shard::ALL.contains("anything"));
    }
}
