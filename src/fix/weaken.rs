//! `ptxmc fix --weaken`: the *maximal* weakenings that keep every property
//! of the test, not only its condition (`docs/fix.md`, "Weakening").
//!
//! A weakening is *safe* when the changed program, compared with the program
//! as written, still forbids the outcome, every execution still terminates,
//! no execution reaches undefined behaviour, no pair of instructions races
//! that did not race before, and every location and register ends with the
//! same set of final values. It is *maximal* when no site can be weakened
//! further (another site changed, or a changed site taken further) with the
//! result still safe.
//!
//! Each property is monotone in strength: a weaker program has at least the
//! executions of a stronger one, so at least its outcomes, hangs, undefined
//! steps and races (the fix search rests on the same fact). The safe
//! weakenings are therefore closed downwards, and the search below finds
//! exactly their maximal elements with three prunings, each counted:
//!
//! * *known safe*: a weakening below one already shown safe is safe;
//! * *known unsafe*: one above a weakening already shown unsafe is unsafe;
//! * *covered*: a subtree whose greatest element lies below a maximal
//!   weakening already found holds no new maximal one.
//!
//! The search is depth first over the sites in order, each site's variants
//! furthest first and "as written" last, so that any weakening strictly
//! above a configuration lies in a subtree explored before it: a safe
//! configuration no maximal weakening found so far covers is itself
//! maximal. Every weakening listed is therefore maximal even when the time
//! limit stops the search early (the list is then only incomplete).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::engine::{self, EngineChoice, RunOptions, Termination};
use crate::ir::{LocId, Program, Prop, ThreadId, Value};
use crate::limits::Limits;
use crate::outcome::{Column, Columns};

use super::sites::{self, Action, Positions, Site};
use super::{Change, Fix, FixOptions, FixReport};

/// A weakening: a variant per site (`None`: the site as written).
type Config = Vec<Option<usize>>;

/// A racing pair of instructions of the program as written: the location,
/// then each side's (thread, instruction).
type RaceKey = (LocId, (ThreadId, usize), (ThreadId, usize));

/// What a weakening changes that the test's condition does not observe,
/// and that makes it unsafe: a single-site weakening that keeps the
/// outcome forbidden but changes something else.
#[derive(Clone, Debug, Serialize)]
pub struct Flagged {
    /// The change.
    pub change: Change,
    /// What it changes, one item each (`new final value sem=1`, `new race:
    /// …`, `an execution can hang: …`).
    pub changes_what: Vec<String>,
}

/// The counters of a weakening search (`docs/fix.md`, "Weakening").
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct WeakenStats {
    /// Programs the oracle ran (each a changed program).
    pub checked: u64,
    /// Weakenings judged safe without a run: below one shown safe.
    pub known_safe: u64,
    /// Weakenings judged unsafe without a run: above one shown unsafe.
    pub known_unsafe: u64,
    /// Subtrees skipped: their greatest weakening is below a maximal one
    /// found already.
    pub covered: u64,
    /// Nodes of the depth-first search.
    pub nodes: u64,
    /// Weakenings whose run did not finish (its share of the time limit,
    /// another limit, the engines disagreeing): counted unsafe, so a
    /// weakening listed is safe but might be taken further at them.
    pub undecided: u64,
}

/// The share of the time limit one run of the search may take.
const RUN_SHARE: f64 = 0.1;

/// Where a running search stands, for a progress line.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// The counters so far.
    pub stats: WeakenStats,
    /// Maximal safe weakenings found so far.
    pub found: usize,
    /// Seconds since the search began.
    pub seconds: f64,
}

/// What one run of a program shows, for comparison with the program as
/// written.
struct Profile {
    /// Some final state satisfies the outcome to keep forbidden (`None`:
    /// not shown either way, a loop bound cut executions short).
    allowed: Option<bool>,
    termination: Termination,
    undefined: Option<crate::model::ub::Undefined>,
    /// Racing pairs by instruction of the program as written, with the
    /// race's kind.
    races: BTreeMap<RaceKey, &'static str>,
    /// Per column of the final states, the values it ends with.
    values: Vec<BTreeSet<Value>>,
}

/// Why a run gave no profile.
enum NoProfile {
    /// The search's time is up.
    Time,
    /// Another limit, or (verification) the engines disagreed: the text.
    Other(String),
}

/// What a weakening search adds to the report (`FixReport::weaken`).
#[derive(Clone, Debug, Serialize)]
pub struct WeakenReport {
    /// The counters.
    pub stats: WeakenStats,
    /// Why the search stopped before the end (`null`: it finished): the
    /// weakenings listed are maximal and safe, others may exist.
    pub stopped: Option<String>,
    /// The time limit, in seconds (`null`: none).
    pub limit_seconds: Option<f64>,
}

/// The maximal safe weakenings of `p` (every property kept, `want`
/// forbidden), named with the positions `at`; `progress` is called after
/// every oracle run.
pub fn weaken(
    p: &Program,
    want: &Prop,
    opts: &FixOptions,
    at: &Positions,
    progress: &mut dyn FnMut(&Progress),
) -> FixReport {
    let start = Instant::now();
    // The search stops at four fifths of the time limit, so that the
    // weakenings it found can still be verified by both engines.
    let deadline = opts.timeout.map(|t| start + t.mul_f64(0.8));
    let end = opts.timeout.map(|t| start + t);
    let sites = sites::weakening_sites(p, at);
    let mut report = FixReport {
        outcome: crate::litmus::print::prop(p, want),
        allowed: false,
        fixes: Vec::new(),
        sites: sites.len(),
        checked: 0,
        incomplete: false,
        seconds: 0.0,
        why: None,
        problem: None,
        outcome_kept: false,
        flagged: Vec::new(),
        weaken: None,
    };
    let limit_seconds = opts.timeout.map(|t| t.as_secs_f64());
    let identity = pc_map(p, &sites, &vec![None; sites.len()]);
    let orig = match profile(p, want, &identity, opts, EngineChoice::Ax, deadline) {
        Ok(o) => o,
        Err(e) => {
            report.incomplete = true;
            report.weaken = Some(WeakenReport {
                stats: WeakenStats::default(),
                stopped: Some(match e {
                    NoProfile::Time => {
                        "the time limit stopped the run of the program as written".into()
                    }
                    NoProfile::Other(why) => {
                        format!("the program as written could not be checked: {why}")
                    }
                }),
                limit_seconds,
            });
            report.seconds = start.elapsed().as_secs_f64();
            return report;
        }
    };
    report.allowed = orig.allowed != Some(false);
    if report.allowed {
        if orig.allowed.is_none() {
            // Not reached within the loop bound is not forbidden.
            report.incomplete = true;
            report.weaken = Some(WeakenReport {
                stats: WeakenStats::default(),
                stopped: Some(format!(
                    "the program as written does not show the outcome forbidden: an execution reaches the loop bound ({}; --loop-bound)",
                    opts.loop_bound
                )),
                limit_seconds,
            });
        }
        report.seconds = start.elapsed().as_secs_f64();
        return report;
    }
    let cols = Columns::of(p);
    let n = sites.len();
    let mut s = Searcher {
        p,
        want,
        at,
        cols: &cols,
        sites: &sites,
        opts,
        orig: &orig,
        deadline,
        start,
        safe: Vec::new(),
        unsafe_: Vec::new(),
        maximal: Vec::new(),
        alone: vec![Vec::new(); n],
        flagged: Vec::new(),
        stats: WeakenStats::default(),
        stopped: None,
        progress,
    };
    s.single_sites();
    if s.stopped.is_none() {
        let tops: Vec<Option<Option<usize>>> = (0..n).map(|i| s.unique_top(i)).collect();
        let mut prefix: Config = vec![None; n];
        s.dfs(&mut prefix, 0, &tops);
    }
    let (maximal, flagged, stats, stopped) = (s.maximal, s.flagged, s.stats, s.stopped);
    report.checked = stats.checked;
    // An undecided weakening is a limit's answer too: the list may not be
    // maximal.
    report.incomplete = stopped.is_some() || stats.undecided > 0;
    report.flagged = flagged
        .into_iter()
        .map(|(site, k, what)| Flagged {
            change: change(&sites, site, k),
            changes_what: what,
        })
        .collect();
    for c in maximal {
        let choice = choice_of(&c);
        let q = sites::apply(p, &sites, &choice);
        // Verification: both engines, every property again.
        let map = pc_map(p, &sites, &c);
        let verified = match profile(&q, want, &map, opts, EngineChoice::Both, end) {
            Ok(v) => differences(p, at, &cols, &orig, &v).is_empty(),
            Err(NoProfile::Time) => {
                report.incomplete = true;
                false
            }
            Err(NoProfile::Other(_)) => false,
        };
        let changes: Vec<Change> = choice.iter().map(|&(s, k)| change(&sites, s, k)).collect();
        let cost = changes.iter().map(|c| c.cost).sum();
        report.fixes.push(Fix {
            changes,
            cost,
            verified,
            undefined: None,
            program: q,
        });
    }
    report.fixes.sort_by(|a, b| {
        b.cost
            .cmp(&a.cost)
            .then(a.changes.len().cmp(&b.changes.len()))
    });
    report.weaken = Some(WeakenReport {
        stats,
        stopped,
        limit_seconds,
    });
    report.seconds = start.elapsed().as_secs_f64();
    report
}

/// What removing fence `pc` of thread `t` of `p` changes, by the check
/// `--weaken` makes of every weakening ([`differences`]): the outcome
/// `want` becomes allowed, an execution hangs, undefined behaviour, a new
/// race, a final value gained or lost; empty when the removal is safe.
/// `Err` says why it could not be judged (a limit, the loop bound, no such
/// removal). `explain::lints` says "not needed" only when this is empty, so
/// that its note and `fix --weaken` never disagree.
pub fn fence_removal_changes(
    p: &Program,
    want: &Prop,
    t: usize,
    pc: usize,
    opts: &FixOptions,
) -> Result<Vec<String>, String> {
    let at = Positions::new();
    let sites = sites::weakening_sites(p, &at);
    let mut c: Config = vec![None; sites.len()];
    let found =
        sites.iter().enumerate().find_map(|(s, site)| {
            site.variants.iter().position(|v| {
            matches!(v.action, Action::Remove { thread, pc: k } if thread == t && k == pc)
        })
        .map(|k| (s, k))
        });
    let Some((s, k)) = found else {
        return Err("no removal of that instruction is a weakening".into());
    };
    c[s] = Some(k);
    let end = opts.timeout.map(|d| Instant::now() + d);
    let why = |e: NoProfile| match e {
        NoProfile::Time => "the time limit stopped the check".to_string(),
        NoProfile::Other(w) => w,
    };
    let identity = pc_map(p, &sites, &vec![None; sites.len()]);
    let orig = profile(p, want, &identity, opts, EngineChoice::Ax, end).map_err(why)?;
    if orig.allowed != Some(false) {
        return Err("the outcome is not forbidden as written".into());
    }
    let q = sites::apply(p, &sites, &choice_of(&c));
    let now = profile(
        &q,
        want,
        &pc_map(p, &sites, &c),
        opts,
        EngineChoice::Ax,
        end,
    )
    .map_err(why)?;
    Ok(differences(p, &at, &Columns::of(p), &orig, &now))
}

/// One change of a site, as the report names it.
fn change(sites: &[Site], s: usize, k: usize) -> Change {
    Change {
        thread: sites[s].thread_name.clone(),
        text: sites[s].variants[k].text.clone(),
        cost: sites[s].variants[k].cost,
    }
}

/// The (site, variant) pairs of a weakening, for [`sites::apply`].
fn choice_of(c: &Config) -> Vec<(usize, usize)> {
    c.iter()
        .enumerate()
        .filter_map(|(s, v)| v.map(|k| (s, k)))
        .collect()
}

/// Per thread of the weakened program, the instruction of the program as
/// written that each of its instructions is (weakenings replace or remove
/// instructions, never insert).
fn pc_map(p: &Program, sites: &[Site], c: &Config) -> Vec<Vec<usize>> {
    let mut removed: BTreeSet<(usize, usize)> = BTreeSet::new();
    for (s, k) in choice_of(c) {
        if let Action::Remove { thread, pc } = sites[s].variants[k].action {
            removed.insert((thread, pc));
        }
    }
    p.threads
        .iter()
        .enumerate()
        .map(|(t, th)| {
            (0..th.code.len())
                .filter(|&pc| !removed.contains(&(t, pc)))
                .collect()
        })
        .collect()
}

/// Runs `q` (a weakening of the program as written, `map` its instructions'
/// origins) with `engine` and what it shows; the run stops at `deadline`.
fn profile(
    q: &Program,
    want: &Prop,
    map: &[Vec<usize>],
    opts: &FixOptions,
    engine: EngineChoice,
    deadline: Option<Instant>,
) -> Result<Profile, NoProfile> {
    let timeout = deadline.map(|d| d.saturating_duration_since(Instant::now()));
    if timeout == Some(Duration::ZERO) {
        return Err(NoProfile::Time);
    }
    let r = engine::run(
        q,
        &RunOptions {
            engine,
            loop_bound: opts.loop_bound,
            barriers: opts.barriers,
            termination: true,
            limits: Limits {
                timeout,
                ..Limits::default()
            },
            ..RunOptions::default()
        },
    );
    if let Some(why) = r.incomplete {
        return Err(if deadline.is_some_and(|d| Instant::now() >= d) {
            NoProfile::Time
        } else {
            NoProfile::Other(why)
        });
    }
    if r.disagreement.is_some() {
        return Err(NoProfile::Other("the engines disagree".into()));
    }
    let cols = Columns::of(q);
    let found = super::satisfied(q, &r.outcomes, want);
    let allowed = (found || !r.bound_hit).then_some(found);
    let mut values = vec![BTreeSet::new(); cols.len()];
    for state in &r.outcomes {
        for (k, v) in state.iter().enumerate() {
            values[k].insert(*v);
        }
    }
    let orig = |a: &crate::ax::race::Access| {
        (
            a.thread,
            map.get(a.thread)
                .and_then(|m| m.get(a.pc))
                .copied()
                .unwrap_or(a.pc),
        )
    };
    let races = r
        .races
        .found
        .iter()
        .map(|f| {
            (
                (f.race.loc, orig(&f.race.first), orig(&f.race.second)),
                f.race.kind.as_str(),
            )
        })
        .collect();
    Ok(Profile {
        allowed,
        termination: r.termination,
        undefined: r.undefined,
        races,
        values,
    })
}

/// What `now` (a weakening) shows that `orig` (the program as written,
/// `p`) does not, one item each; empty: the weakening is safe. Columns are
/// those of `p` (weakenings keep threads, registers and locations).
fn differences(
    p: &Program,
    at: &Positions,
    cols: &Columns,
    orig: &Profile,
    now: &Profile,
) -> Vec<String> {
    let mut out = Vec::new();
    match now.allowed {
        Some(false) => {}
        Some(true) => out.push("the outcome becomes allowed".to_string()),
        None => out.push(
            "the outcome is not shown forbidden (an execution reaches the loop bound)".to_string(),
        ),
    }
    match (&orig.termination, &now.termination) {
        (Termination::Hangs(_), _) => {}
        (_, Termination::Hangs(h)) => {
            out.push(format!("an execution can hang ({})", h.kind().as_str()))
        }
        (Termination::Terminates { .. }, Termination::NotChecked(_)) => out.push(
            "termination is no longer shown (an execution reaches the loop bound)".to_string(),
        ),
        _ => {}
    }
    if let (None, Some(u)) = (&orig.undefined, &now.undefined) {
        out.push(format!("undefined behaviour: {}", u.kind.what()));
    }
    for (k, col) in cols.columns.iter().enumerate() {
        let name = match col {
            Column::Reg { thread, reg } => {
                format!(
                    "{}:{}",
                    p.threads[*thread].name, p.threads[*thread].regs[*reg].name
                )
            }
            Column::Loc(l) => p.locations[*l].name.clone(),
        };
        let (was, is) = (&orig.values[k], &now.values[k]);
        for v in is.difference(was) {
            out.push(format!("new final value {name}={v}"));
        }
        for v in was.difference(is) {
            out.push(format!("final value {name}={v} no longer reached"));
        }
    }
    for ((loc, a, b), kind) in &now.races {
        if !orig.races.contains_key(&(*loc, *a, *b)) {
            let side = |(t, pc): (ThreadId, usize)| {
                format!("{} {}", p.threads[t].name, sites::quoted_at(p, t, pc, at))
            };
            out.push(format!(
                "new race on {}: {} / {} ({kind})",
                p.locations[*loc].name,
                side(*a),
                side(*b)
            ));
        }
    }
    out
}

/// What a run of the oracle found about a weakening: whether the outcome
/// stayed forbidden, and what changed (empty: safe).
struct Finding {
    forbidden: bool,
    changed: Vec<String>,
}

/// A weakening judged: safe or not, and the run's finding when it took
/// one (`None`: decided from what was known).
type Judged = (bool, Option<Finding>);

/// The state of one search.
struct Searcher<'a, 'b> {
    p: &'a Program,
    want: &'a Prop,
    at: &'a Positions,
    cols: &'a Columns,
    sites: &'a [Site],
    opts: &'a FixOptions,
    orig: &'a Profile,
    deadline: Option<Instant>,
    start: Instant,
    /// Weakenings shown safe (only the greatest kept).
    safe: Vec<Config>,
    /// Weakenings shown unsafe (only the least kept).
    unsafe_: Vec<Config>,
    /// The maximal safe weakenings found, in the order found.
    maximal: Vec<Config>,
    /// Per site, the variants that are safe on their own, in the site's
    /// order (least far first).
    alone: Vec<Vec<usize>>,
    /// Single-site weakenings that keep the outcome forbidden but change
    /// something else, least far first per site: (site, variant, what).
    flagged: Vec<(usize, usize, Vec<String>)>,
    stats: WeakenStats,
    /// Why the search stopped early.
    stopped: Option<String>,
    progress: &'b mut dyn FnMut(&Progress),
}

impl Searcher<'_, '_> {
    /// Whether weakening `a` goes nowhere further than `b`: at every site,
    /// `b` is as written only where `a` is, and otherwise at least as far.
    fn leq(&self, a: &Config, b: &Config) -> bool {
        a.iter().zip(b).enumerate().all(|(s, (x, y))| match (x, y) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(x), Some(y)) => self.sites[s].leq(*x, *y),
        })
    }

    /// Whether `c` is safe: from what is known when it decides, otherwise
    /// by a run of the oracle. `None`: the time is up. With a run, also
    /// what changed and whether the outcome stayed forbidden.
    fn judge(&mut self, c: &Config) -> Option<Judged> {
        if self.safe.iter().any(|g| self.leq(c, g)) {
            self.stats.known_safe += 1;
            return Some((true, None));
        }
        if self.unsafe_.iter().any(|b| self.leq(b, c)) {
            self.stats.known_unsafe += 1;
            return Some((false, None));
        }
        if self.stopped.is_some() {
            return None;
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.stop_for_time();
            return None;
        }
        let q = sites::apply(self.p, self.sites, &choice_of(c));
        let map = pc_map(self.p, self.sites, c);
        // One run may take the search's time on its own (a weakening can
        // turn a retry loop into a loop bounded by the loop bound): each
        // run has a share of the limit, and a run that takes it all is
        // undecided (counted unsafe, and said so).
        let cap = self
            .opts
            .timeout
            .map(|t| Instant::now() + t.mul_f64(RUN_SHARE).max(Duration::from_millis(500)));
        let run_deadline = match (cap, self.deadline) {
            (Some(c), Some(d)) => Some(c.min(d)),
            (c, d) => c.or(d),
        };
        let what = match profile(
            &q,
            self.want,
            &map,
            self.opts,
            EngineChoice::Ax,
            run_deadline,
        ) {
            Ok(now) => Finding {
                forbidden: now.allowed == Some(false),
                changed: differences(self.p, self.at, self.cols, self.orig, &now),
            },
            Err(NoProfile::Time) if self.deadline.is_some_and(|d| Instant::now() >= d) => {
                self.stop_for_time();
                return None;
            }
            Err(NoProfile::Time) => {
                self.stats.undecided += 1;
                Finding {
                    forbidden: false,
                    changed: vec!["not decided within the time one run may take".to_string()],
                }
            }
            Err(NoProfile::Other(why)) => {
                self.stats.undecided += 1;
                Finding {
                    forbidden: false,
                    changed: vec![format!("the check did not finish: {why}")],
                }
            }
        };
        self.stats.checked += 1;
        let ok = what.changed.is_empty();
        if ok {
            let keep: Vec<Config> = std::mem::take(&mut self.safe)
                .into_iter()
                .filter(|g| !self.leq(g, c))
                .collect();
            self.safe = keep;
            self.safe.push(c.clone());
        } else {
            let keep: Vec<Config> = std::mem::take(&mut self.unsafe_)
                .into_iter()
                .filter(|b| !self.leq(c, b))
                .collect();
            self.unsafe_ = keep;
            self.unsafe_.push(c.clone());
        }
        (self.progress)(&Progress {
            stats: self.stats,
            found: self.maximal.len(),
            seconds: self.start.elapsed().as_secs_f64(),
        });
        Some((ok, Some(what)))
    }

    fn stop_for_time(&mut self) {
        if self.stopped.is_none() {
            self.stopped = Some(format!(
                "the time limit ({} s) stopped the search",
                self.opts.timeout.map_or(0.0, |t| t.as_secs_f64())
            ));
        }
    }

    /// Every variant of every site on its own, least far first: the
    /// variants safe alone (the only ones a safe weakening can use, since
    /// the safe set is closed downwards), and the least far of those that
    /// keep the outcome forbidden but change something else (flagged).
    fn single_sites(&mut self) {
        let n = self.sites.len();
        for s in 0..n {
            for k in 0..self.sites[s].variants.len() {
                let mut c: Config = vec![None; n];
                c[s] = Some(k);
                let Some((ok, run)) = self.judge(&c) else {
                    return;
                };
                if ok {
                    self.alone[s].push(k);
                } else if let Some(Finding {
                    forbidden: true,
                    changed,
                }) = run
                {
                    self.flagged.push((s, k, changed));
                }
            }
        }
    }

    /// Site `s`'s furthest variant that is safe alone, when one is beyond
    /// all the others (`Some(None)`: none is safe alone; `None`: several
    /// incomparable ones, no single greatest).
    fn unique_top(&self, s: usize) -> Option<Option<usize>> {
        let site = &self.sites[s];
        let tops: Vec<usize> = self.alone[s]
            .iter()
            .copied()
            .filter(|&k| !self.alone[s].iter().any(|&j| j != k && site.leq(k, j)))
            .collect();
        match tops.as_slice() {
            [] => Some(None),
            [k] => Some(Some(*k)),
            _ => None,
        }
    }

    /// Adds `c` (safe) as maximal unless a maximal weakening found covers it
    /// or it changes nothing (the program as written is no weakening: when
    /// it is the only safe one, there is none to list).
    fn add_maximal(&mut self, c: Config) {
        if c.iter().all(Option::is_none) || self.maximal.iter().any(|m| self.leq(&c, m)) {
            return;
        }
        self.maximal.push(c);
    }

    /// The depth-first search below `prefix` (safe; sites `i..` as written).
    fn dfs(&mut self, prefix: &mut Config, i: usize, tops: &[Option<Option<usize>>]) {
        if self.stopped.is_some() {
            return;
        }
        self.stats.nodes += 1;
        let n = self.sites.len();
        if i == n {
            self.add_maximal(prefix.clone());
            return;
        }
        // The subtree's greatest safe candidate: every free site at its
        // furthest variant safe alone (any safe weakening of the subtree is
        // below it, the safe set being closed downwards).
        if tops[i..].iter().all(Option::is_some) {
            let mut top = prefix.clone();
            for s in i..n {
                top[s] = tops[s].flatten();
            }
            if self.maximal.iter().any(|m| self.leq(&top, m)) {
                self.stats.covered += 1;
                return;
            }
            match self.judge(&top) {
                None => return,
                Some((true, _)) => {
                    self.add_maximal(top);
                    return;
                }
                Some((false, _)) => {}
            }
        }
        // Furthest first, "as written" last: anything strictly further than
        // a configuration is explored before it.
        let order: Vec<Option<usize>> = self.alone[i]
            .iter()
            .rev()
            .map(|&k| Some(k))
            .chain([None])
            .collect();
        for v in order {
            prefix[i] = v;
            let ok = match v {
                None => true,
                Some(_) => match self.judge(prefix) {
                    None => {
                        prefix[i] = None;
                        return;
                    }
                    Some((ok, _)) => ok,
                },
            };
            if ok {
                self.dfs(prefix, i + 1, tops);
            }
            if self.stopped.is_some() {
                break;
            }
        }
        prefix[i] = None;
    }
}
