#!/usr/bin/env python3
"""What a wakeup costs against what a switch costs, in a schedlab run, read
the way perf's call-graph profile of a real kernel reads them.

LKP's hackbench reports give `perf-profile.children.cycles-pp.try_to_wake_up`
and `...__schedule`: the share of all cycles spent inside each function and
what it calls. Divided by the wakeups (about the voluntary switches) and by
all the switches, their ratio says what one wakeup costs against one
switch on that box (docs/validation-history.md, "The wakeup against the
switch, as LKP's profiles split them"). This prints the model's side of the
same ratio from a run's JSON (`schedlab perf bench ... --json`, or
`schedlab run ... --json`, whose stats are the repeats' means):

- the wakeup path, per wakeup: the `wakeup` work (try_to_wake_up()'s own
  bookkeeping, the wakee's activation and the cache lines both touch), the
  IPIs the wakers send (`ipis_sent` x `ipi_send`; the `ipi` path also holds
  the targets' handlers, which perf puts under the interrupt, not
  try_to_wake_up()) and one runqueue lock hold (`rq_lock_hold`) a wakeup;
- its placement apart (`placement`: select_task_rq(), which the kernel's
  profile lists as select_task_rq_fair() inside try_to_wake_up());
- the switch path, per switch: `context_switch`, `schedule` (schedule()'s
  own work, the sleeper's dequeue and its lines), the newidle balances
  (pick_next_task_fair() runs them inside __schedule()) and the rest of the
  lock holds.

Approximations, each a few ns a wakeup on seed 000's messaging (a review
measured them with an instrumented build, stop 74): the `wakeup` path and
the lock holds counted a wakeup include the work the target CPU does for a
wakeup queued on its wake list (sched_ttwu_pending() in the IPI, which perf
puts under the interrupt), the lines of that activation land in `rq_lock`
and so on the switch's side, and the waker's store to a polling target's
flag (in `ipi`) is left out. Corrected, the 0.472 of the split shipped before
stop 75 is 0.475. The switches include an idle CPU's switch to a woken task, which
rusage does not count (about 2.6% of them there).

The ratios: `per event` (per wakeup over per switch: the cost split),
`shares` (the two paths' totals, as perf's children percentages compare
them) and `with placement` (per event, placement in the wakeup's side).
The costs `ipi_send` and `rq_lock_hold` come from the machine profile
(--machine, a profile's name or a .toml file; `extends` is followed).
"""
import argparse
import json
import pathlib
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def load_costs(machine):
    path = pathlib.Path(machine)
    if path.suffix != ".toml":
        path = ROOT / "machines" / f"{machine}.toml"
    profile = tomllib.loads(path.read_text())
    costs = {}
    parent = profile.get("machine", {}).get("extends")
    if parent:
        costs.update(load_costs(parent))
    for name, entry in profile.get("costs", {}).items():
        costs[name] = entry["value"]
    return costs


def split(stats, costs):
    work = stats["work_ns_by_path"]
    wakeups = stats["wakeups"]
    switches = stats["context_switches"]
    wake_locks = wakeups * costs["rq_lock_hold"]
    wakeup_path = work["wakeup"] + stats["ipis_sent"] * costs["ipi_send"] + wake_locks
    switch_path = (work["context_switch"] + work["schedule"] + stats["balance"]["newidle"]["cost_ns"]
                   + max(work["rq_lock"] - wake_locks, 0))
    per_wakeup = wakeup_path / wakeups
    per_switch = switch_path / switches
    placement = work["placement"] / wakeups
    return {
        "wakeups": wakeups,
        "switches": switches,
        "per_wakeup_ns": per_wakeup,
        "placement_ns": placement,
        "per_switch_ns": per_switch,
        "per_event": per_wakeup / per_switch,
        "shares": wakeup_path / switch_path,
        "with_placement": (per_wakeup + placement) / per_switch,
    }


def runs(doc):
    if "experiment" in doc:
        for variant, workloads in doc["stats"].items():
            for workload, stats in workloads.items():
                yield f"{workload} / {variant}", stats
    else:
        yield doc.get("args", "run"), doc["stats"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--machine", required=True, help="the run's machine profile (name or .toml)")
    parser.add_argument("json", nargs="?", help="schedlab's JSON output (default: stdin)")
    args = parser.parse_args()
    doc = json.load(open(args.json) if args.json else sys.stdin)
    costs = load_costs(args.machine)
    print(f"{'run':48} {'wakeups':>9} {'switches':>9} {'wakeup ns':>9} {'placement':>9} "
          f"{'switch ns':>9} {'per event':>9} {'shares':>7} {'w/ place':>8}")
    for name, stats in runs(doc):
        s = split(stats, costs)
        print(f"{name[:48]:48} {s['wakeups']:>9.0f} {s['switches']:>9.0f} {s['per_wakeup_ns']:>9.0f} "
              f"{s['placement_ns']:>9.0f} {s['per_switch_ns']:>9.0f} {s['per_event']:>9.2f} "
              f"{s['shares']:>7.2f} {s['with_placement']:>8.2f}")


if __name__ == "__main__":
    main()
