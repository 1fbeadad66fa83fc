"""pydantic models of commands' `--json` objects whose schema file is generated from them
(vlanroute/bundle/schemagen.py): render, verify, audit, push, analyze, save, rollback,
report, draw, whatif, repair, `cabling check`, lab, import, discover, watch, emulate and
`emulate --traffic`. The command builds the model and prints
its `to_json()`, so the schema cannot drift from what is printed. Fields are in the
order the objects print them (docs/json.md). A data package imports no stage: plain types."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Count = Annotated[int, Field(ge=0)]
# A figure printed as computed: an int stays an int (pydantic's float would print 2 as 2.0).
Number = int | float


class _Output(BaseModel):
    """One command's --json object; `schema` (a BaseModel attribute) keeps its JSON name
    through an alias."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    def to_json(self) -> dict[str, object]:
        return self.model_dump(by_alias=True)


class RenderDocument(_Output):
    """`vlanroute render --json`."""

    schema_: Literal["vlanroute-render/1"] = Field(default="vlanroute-render/1", alias="schema")
    outdir: str
    written: bool
    files: Count
    bytes: Count
    verified: bool
    warnings: list[str]


class TableSize(BaseModel):
    """One switch's MAC table in the simulation: entries learned, and its capacity."""

    model_config = ConfigDict(extra="forbid")

    learned: Count
    capacity: Count


class VerifyDocument(_Output):
    """`vlanroute verify --json`."""

    schema_: Literal["vlanroute-verify/1"] = Field(default="vlanroute-verify/1", alias="schema")
    outdir: str
    ok: bool
    summary: list[str]
    violation_counts: dict[str, Count]
    violations: list[str]
    tables: dict[str, TableSize]


class AuditFinding(BaseModel):
    """One MAC entry a switch lacks, or has on another port."""

    model_config = ConfigDict(extra="forbid")

    switch: str
    vlan: Annotated[int, Field(ge=1, le=4094)]
    host: str
    mac: str
    expected_port: str
    found_port: str | None


class AuditDocument(_Output):
    """`vlanroute audit --json`."""

    schema_: Literal["vlanroute-audit/1"] = Field(default="vlanroute-audit/1", alias="schema")
    outdir: str
    ok: bool
    checked: Count
    present: Count
    findings: list[AuditFinding]
    errors: dict[str, str]
    no_mac: list[str]


# Keys an object leaves out rather than print null (their schema: never null, not required);
# `Model.key` for a key of a record inside it.
ABSENT_WHEN_NONE: dict[str, tuple[str, ...]] = {"push": ("journal", "refused", "transition", "TransitionCut.pairs", "TransitionStep.lines"),
                                                "rollback": ("transition", "refused", "TransitionCut.pairs", "TransitionStep.lines"), "analyze": ("throughput",),
                                                "cabling-check": ("CableRecord.seen_b",),
                                                "import": ("switches", "ImportedHost.port", "ImportedHost.mac",
                                                           "ImportedHost.interface", "name", "platform", "topology",
                                                           "notes"),
                                                "discover": ("DiscoveredInventory.hosts", "DiscoveredSwitch.ssh_port"),
                                                "whatif": ("guarantees",)}


def _without_absent(doc: BaseModel, name: str) -> dict[str, object]:
    """The object without the keys ABSENT_WHEN_NONE[name] leaves out when None (a transition
    cut's `pairs` among them)."""
    out = doc.model_dump(by_alias=True, exclude={k for k in ABSENT_WHEN_NONE[name]
                                                 if "." not in k and getattr(doc, k) is None})
    transition = out.get("transition")
    for cut in transition.get("cuts", []) if isinstance(transition, dict) else []:
        if cut.get("pairs") is None:
            cut.pop("pairs", None)
    for step in transition.get("steps", []) if isinstance(transition, dict) else []:
        if step.get("lines") is None:
            step.pop("lines", None)
    return out


# The values of device/results.py (tests/test_json_output.py checks the two agree).
PushResult = Literal["applied", "applied-unsaved", "unchanged", "dry-run", "not-started", "skipped",
                     "rolled-back", "ROLLBACK-FAILED", "SAVE-UNCERTAIN", "partly-applied"]


class SwitchRecord(BaseModel):
    """How one switch ended (device/push.SwitchResult.to_json)."""

    model_config = ConfigDict(extra="forbid")

    switch: str
    result: PushResult
    commands_sent: Count
    seconds: Number
    backup: str | None
    message: str
    diff: list[str]
    commands: list[str]
    switch_diff: list[str]


class LinkCount(BaseModel):
    model_config = ConfigDict(extra="forbid")

    active_max: Count
    protected: Count


class TransitionStep(BaseModel):
    """One step of a transition and its proof (transition/report.py)."""

    model_config = ConfigDict(extra="forbid")

    step: Annotated[int, Field(ge=1)]
    wave: Annotated[int, Field(ge=1)]
    switch: str
    kind: Literal["change", "remove", "add"]
    commands: Count
    states_checked: Count
    vlans: list[int]
    forest: Literal[True]
    links: dict[str, LinkCount]
    lines: list[str] | None = None          # a split change's halves only


class TransitionCut(BaseModel):
    """Host pairs delivered before and after a transition, not during these steps."""

    model_config = ConfigDict(extra="forbid")

    steps: Annotated[list[Annotated[int, Field(ge=1)]], Field(min_length=2, max_length=2)]
    vlan: int
    from_switch: str
    to_switch: str
    host_pairs: Count
    source_hosts: list[str]
    dest_hosts: list[str]
    pairs: list[Annotated[list[str], Field(min_length=2, max_length=2)]] | None = None


class TransitionRecord(BaseModel):
    """The loop-free transition a push or rollback planned (docs/push.md, "Transitions")."""

    model_config = ConfigDict(extra="forbid")

    steps: list[TransitionStep]
    split: list[str]
    cuts: list[TransitionCut]
    host_pairs_cut: Count
    notes: list[str]


class PushDocument(_Output):
    """`vlanroute push --json`. `journal` (the run's journal) and `refused` (why nothing was
    pushed) are printed only when there is one."""

    schema_: Literal["vlanroute-push/1"] = Field(default="vlanroute-push/1", alias="schema")
    outdir: str
    dry_run: bool
    exit_code: Literal[0, 1, 2, 3, 4, 130]      # docs/exit-codes.md, the codes push ends with
    counts: dict[str, Count]
    switches: list[SwitchRecord]
    not_pushed: list[SwitchRecord]
    journal: str | None = None
    refused: str | None = None
    transition: TransitionRecord | None = None

    def to_json(self) -> dict[str, object]:
        return _without_absent(self, "push")



class PlanFigures(BaseModel):
    """The figures of one plan (plan/metrics.Metrics.to_json): those named here always, the
    others as the plan gives them."""

    model_config = ConfigDict(extra="allow")

    switches: Count
    hosts: Count
    vlan_count: Count
    inter_switch_links: Count
    diameter: int
    mean_hops: Number
    max_link_load: Number
    link_load_lower_bound: Number
    max_mac_entries: Count
    mac_capacity: Count
    deadlock_free: bool


class AnalyzedInventory(BaseModel):
    """An inventory analyze planned."""

    model_config = ConfigDict(extra="forbid")

    inventory: str
    ok: Literal[True]
    name: str
    max_vlans: Count
    metrics: PlanFigures
    warnings: list[str]


class RefusedInventory(BaseModel):
    """An inventory analyze could not plan, and why."""

    model_config = ConfigDict(extra="forbid")

    inventory: str
    ok: Literal[False]
    error: str


class ThroughputRow(BaseModel):
    """One plan (or the spanning tree, or the big switch) under one traffic pattern
    (perf/table.py); other keys as perf gives them."""

    model_config = ConfigDict(extra="allow")

    label: str
    cables: Count
    flows: Count
    aggregate_gbps: Annotated[Number, Field(ge=0)]
    slowest_mbps: Annotated[Number, Field(ge=0)]
    exchange_s: Annotated[Number, Field(ge=0)]
    effective_gbps: Annotated[Number, Field(ge=0)]
    vs_first: Number | None
    vs_stp: Number | None
    bottlenecks: list[str]


class ThroughputTable(BaseModel):
    """Every plan's row under one traffic pattern."""

    model_config = ConfigDict(extra="allow")

    pattern: str
    rows: list[ThroughputRow]


class AnalyzeDocument(_Output):
    """`vlanroute analyze --json`; `throughput` only with --patterns."""

    schema_: Literal["vlanroute-analyze/1"] = Field(default="vlanroute-analyze/1", alias="schema")
    sets: list[str]
    inventories: list[AnalyzedInventory | RefusedInventory]
    throughput: list[ThroughputTable] | None = None

    def to_json(self) -> dict[str, object]:
        return self.model_dump(by_alias=True, exclude={"throughput"} if self.throughput is None else None)


class FabricRecord(BaseModel):
    """How one switch ended a save or a rollback (device/fabric.FabricResult.to_json)."""

    model_config = ConfigDict(extra="forbid")

    switch: str
    result: str
    commands_sent: Count
    backup: str | None
    message: str


class SaveDocument(_Output):
    """`vlanroute save --json`."""

    schema_: Literal["vlanroute-save/1"] = Field(default="vlanroute-save/1", alias="schema")
    journal: str
    exit_code: int
    switches: list[FabricRecord]


class RollbackDocument(_Output):
    """`vlanroute rollback --json`."""

    schema_: Literal["vlanroute-rollback/1"] = Field(default="vlanroute-rollback/1", alias="schema")
    journal: str
    dry_run: bool
    exit_code: int
    switches: list[FabricRecord]
    transition: TransitionRecord | None = None
    refused: str | None = None

    def to_json(self) -> dict[str, object]:
        return _without_absent(self, "rollback")


class ReportDocument(_Output):
    """`vlanroute report --json`."""

    schema_: Literal["vlanroute-report/1"] = Field(default="vlanroute-report/1", alias="schema")
    output: str
    bytes: Count
    name: str


class DrawDocument(_Output):
    """`vlanroute draw --json`."""

    schema_: Literal["vlanroute-draw/1"] = Field(default="vlanroute-draw/1", alias="schema")
    outdir: str
    format: str
    files: list[str]
    left_out: list[str]
    index: str


HealName = Literal["failover+repair", "repair", "split"]
OutageName = Literal["none", "failover", "repair", "person", "until-return"]
FailoverName = Literal["covers", "partial", "none", "no-backups", "not-needed", "switch"]
DoubleKind = Literal["pair+pair", "pair+switch", "switch+switch"]


class WhatifFailure(BaseModel):
    """One single failure and its minimal repair (routing/whatif/failures.py's rows; other keys as
    routing gives them), then how it heals (bundle/guarantees.py; absent from the rows of
    a whatif before the guarantees, which still read)."""

    model_config = ConfigDict(extra="allow")

    kind: Literal["pair", "switch"]
    failure: str
    pairs_cut: Count
    hosts_lost: Count
    trees: Count
    links_added: Count
    unrepairable: Count
    max_link_load: Number | None
    link_load_lower_bound: Number
    heal: HealName | None = None
    heals: bool | None = None
    outage: OutageName | None = None
    automatic: bool | None = None
    not_automatic_because: str | None = None
    failover: FailoverName | None = None
    hosts_lost_names: list[str] | None = None
    cut_off: list[list[str]] | None = None
    cut_off_hosts: Count | None = None
    max_link_load_failed_over: Number | None = None
    deadlock_free_after: bool | None = None
    deadlock_note: str | None = None
    deadlock_free_failed_over: bool | None = None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LoadSpread(_Strict):
    median: Number
    max: Number


class HealGroup(_Strict):
    """A group of failure sets (single pair, single switch, or one kind of double): how many
    heal how, their outage classes, how many the watcher heals by itself, deadlock freedom
    after the heal (counted where the plan was deadlock-free), the max load per cable
    after the repair and while failed over, over those that heal."""

    count: Count
    heal: dict[HealName, Count]
    outage: dict[OutageName, Count]
    automatic: Count
    deadlock_checked: Count
    deadlock_free_after: Count
    max_link_load: LoadSpread | None
    max_link_load_failed_over: LoadSpread | None


class WatchBrief(_Strict):
    """The watcher's policy as far as healing goes (plan.json `operation.watch`, or its defaults)."""

    policy: Literal["auto", "propose"]
    heal: list[str]
    strategies: list[str]


class FailureSet(_Strict):
    """Failed neighbour pairs `a:b` and switches."""

    cables: list[str]
    pairs: list[str]
    switches: list[str]


class DoubleFailure(_Strict):
    """One sampled double failure, healed as the watcher heals it: from the published plan,
    around both."""

    kind: DoubleKind
    failures: FailureSet
    pairs_cut: Count | None
    hosts_lost: Count
    max_link_load: Number | None
    heal: HealName
    heals: bool
    outage: OutageName
    automatic: bool
    not_automatic_because: str
    failover: FailoverName
    hosts_lost_names: list[str]
    cut_off: list[list[str]]
    cut_off_hosts: Count
    max_link_load_failed_over: Number | None
    deadlock_free_after: bool | None
    deadlock_note: str
    deadlock_free_failed_over: bool | None


class DoubleSample(_Strict):
    """The double failures: how many there are of each kind, the seeded sample and its classes."""

    population: dict[DoubleKind, Count]
    sampled: Count
    seed: int
    heal: Count
    share_heal: Number | None
    kinds: dict[DoubleKind, HealGroup]
    failures: list[DoubleFailure]


class WhatifGuarantees(_Strict):
    """What heals by itself (docs/failures.md, "What heals by itself: the guarantees")."""

    policy: WatchBrief
    detection_bound_s: Number
    summary: list[str]
    single: dict[Literal["pair", "switch"], HealGroup]
    doubles: DoubleSample | None


class WhatifDocument(_Output):
    """`vlanroute whatif --json`."""

    schema_: Literal["vlanroute-whatif/1"] = Field(default="vlanroute-whatif/1", alias="schema")
    inventory: str              # the INVENTORY argument: an inventory, or a bundle render wrote
    sets: list[str]
    name: str | None
    max_link_load: Number | None
    failures: list[WhatifFailure]
    # Absent from a whatif before the guarantees (so it still reads).
    guarantees: WhatifGuarantees | None = None

    def to_json(self) -> dict[str, object]:
        out = _without_absent(self, "whatif")
        # A row prints what it was given: the healing keys only where they were.
        out["failures"] = [r.model_dump(exclude_unset=True) for r in self.failures]
        return out


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RepairFailures(_Record):
    """What is down: cables `switch:port`, neighbour pairs `a:b`, switches."""

    cables: list[str]
    pairs: list[str]
    switches: list[str]


class LostCapacity(_Record):
    """A neighbour pair's cables, and how many of them still work."""

    pair: str
    cables: Count
    live: Count


# A link `[a, b]`: a list as printed (a tuple would come back from model_dump as one).
Link = Annotated[list[str], Field(min_length=2, max_length=2)]


class TreeChange(_Record):
    """One VLAN's tree: the links the repair took out and put in."""

    vlan: int
    forced: bool
    removed: list[Link]
    added: list[Link]


class FullReplan(_Record):
    """The plan of the degraded fabric from scratch, to compare with."""

    algorithm: str
    vlan_count: int
    max_link_load: Number
    deadlock_free: bool
    hosts_new_pvid: int
    trees_changed: int


class FailoverMove(_Record):
    """A routing VLAN's sources moved onto a backup VLAN: their host ports' PVID."""

    vlan: int
    backup: int
    sources: list[str]
    ports: Count


class NotFailedOver(_Record):
    vlan: int
    sources: list[str]
    why: str


class RepairRecord(_Record):
    """The repair (bundle/repaired.py's record, also the repaired bundle's repair.json)."""

    format: Literal["vlanroute-repair/1"]
    plan: str | None
    failures: RepairFailures
    lost_capacity: list[LostCapacity]
    broken_vlans: list[int]
    changes: list[TreeChange]
    affected_vlans: list[int]
    switches_touched: list[str]
    hosts_lost: list[str]
    links_added: Count
    extra_changes: Count
    max_link_load: Number | None
    link_load_lower_bound: Number
    deadlock_free: bool
    deadlock_note: str
    full_replan: FullReplan | None
    push_order: list[str]
    push_order_loop_free: bool
    down_cables: list[Annotated[list[str], Field(min_length=4, max_length=4)]]
    # A failed-over bundle (bundle/failedover.py): what moved onto which backup VLAN, and
    # what could not; empty for a repair.
    failover: list[FailoverMove] = []
    not_failed_over: list[NotFailedOver] = []


class RepairDocument(_Output):
    """`vlanroute repair --json`."""

    schema_: Literal["vlanroute-repair/1"] = Field(default="vlanroute-repair/1", alias="schema")
    outdir: str
    newdir: str
    files: Count
    verified: bool
    host_tables_unchanged: bool
    warnings: list[str]
    repair: RepairRecord


class CableRecord(_Record):
    """One cable of cabling.csv and what LLDP showed at its ends; `seen_b` only for an
    inter-switch cable (a host's end is not read)."""

    cable: str
    kind: Literal["inter-switch", "host"]
    a: str
    a_port: str
    b: str
    b_port: str
    status: Literal["ok", "missing", "swapped", "unknown", "no-lldp", "unexpected"]   # device/cabling.py
    seen_a: str
    seen_b: str | None = None
    fixes: list[str]


class UnexpectedCable(_Record):
    """A cable LLDP shows that cabling.csv does not have: its two ends `switch port`."""

    ends: Link
    fix: str
    returned: bool          # a cable of the published plan a repair took out, back again


class CablingCheckDocument(_Output):
    """`vlanroute cabling check --json`."""

    schema_: Literal["vlanroute-cabling-check/1"] = Field(default="vlanroute-cabling-check/1", alias="schema")
    ok: bool
    cables: list[CableRecord]
    unexpected: list[UnexpectedCable]
    fixes: list[str]
    not_read: dict[str, str]

    def to_json(self) -> dict[str, object]:
        doc = self.model_dump(by_alias=True)
        doc["cables"] = [{k: v for k, v in c.items() if not (k == "seen_b" and v is None)} for c in doc["cables"]]
        return doc


class LabSwitch(_Record):
    """Where an emulated switch listens."""

    host: str
    port: int | None
    platform: str


class LabCable(_Record):
    """A cable of the lab's wiring, by its two ends."""

    a: str
    a_port: str
    b: str
    b_port: str


class LabUpDocument(_Output):
    """`vlanroute lab up --json`."""

    schema_: Literal["vlanroute-lab/1"] = Field(default="vlanroute-lab/1", alias="schema")
    action: Literal["up"] = "up"
    plan: str | None
    pid: Count
    state_dir: str
    switches: dict[str, LabSwitch]
    environment: dict[str, str]


class LabDownDocument(_Output):
    """`vlanroute lab down --json`."""

    schema_: Literal["vlanroute-lab/1"] = Field(default="vlanroute-lab/1", alias="schema")
    action: Literal["down"] = "down"
    stopped: Count
    state_dir: str


class LabCableDocument(_Output):
    """`vlanroute lab cable-down|cable-up --json`."""

    schema_: Literal["vlanroute-lab/1"] = Field(default="vlanroute-lab/1", alias="schema")
    action: Literal["cable-down", "cable-up"]
    state_dir: str
    cables: list[LabCable]
    ends_down: Count


class ImportedHost(_Record):
    """A host of the Ansible inventory as the inventory's hosts.list takes it (the keys an
    inventory variable gave; model/inventory.py's HostEntry checked them)."""

    name: str
    switch: str
    port: str | None = None
    mac: str | None = Field(default=None, pattern=r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")
    interface: str | None = None


class ImportedHosts(_Record):
    """The inventory's hosts section: `list`, every host."""

    entries: list[ImportedHost] = Field(alias="list", min_length=1)   # `list` would hide the builtin


class ImportedSwitch(BaseModel):
    """A switch's management address (an address or a DNS name)."""

    model_config = ConfigDict(extra="allow")

    mgmt: str


class ImportedTopology(_Record):
    """`import nautobot`'s custom topology: the switches and every cable's ports."""

    kind: Literal["custom"]
    switches: list[str]
    links: list[dict[str, Any]]


class ImportDocument(_Output):
    """`vlanroute import ansible --json`: the inventory sections it wrote; `switches` only
    when the inventory names switch groups. `import nautobot --json`: the whole inventory
    (`name`, `platform`, `topology` too), `groups` the selection, `notes` what was left out."""

    schema_: Literal["vlanroute-import/1"] = Field(default="vlanroute-import/1", alias="schema")
    source: str
    groups: list[str]
    name: str | None = None
    platform: str | None = None
    topology: ImportedTopology | None = None
    hosts: ImportedHosts
    switches: dict[str, ImportedSwitch] | None = None
    notes: list[str] | None = None

    def to_json(self) -> dict[str, object]:
        # Nothing it prints is null: a key without a value is left out.
        return self.model_dump(by_alias=True, exclude_none=True)


class DiscoveredTopology(_Record):
    """The custom topology LLDP showed: its switches and links (device/discover.py's link
    records, as an inventory's topology.links takes them)."""

    kind: Literal["custom"]
    switches: list[str]
    links: list[dict[str, Any]]


class DiscoveredSwitch(_Record):
    """How to reach a switch: `ssh_port` only when not 22."""

    mgmt: str
    ssh_port: int | None = None


class DiscoveredInventory(_Record):
    """The inventory fragment discover writes; `hosts` only when LLDP showed hosts."""

    name: str
    platform: str
    topology: DiscoveredTopology
    hosts: dict[str, list[dict[str, str]]] | None = None
    switches: dict[str, DiscoveredSwitch]


class DiscoverDocument(_Output):
    """`vlanroute discover --json`."""

    schema_: Literal["vlanroute-discover/1"] = Field(default="vlanroute-discover/1", alias="schema")
    inventory: DiscoveredInventory
    notes: list[str]
    not_read: dict[str, str]

    def to_json(self) -> dict[str, object]:
        doc = self.model_dump(by_alias=True)
        inventory = doc["inventory"]
        if inventory["hosts"] is None:
            del inventory["hosts"]
        for switch in inventory["switches"].values():
            if switch["ssh_port"] is None:
                del switch["ssh_port"]
        return doc


class EmulateCheck(_Record):
    """One check of an emulation run (emulate/run.py's Check): what it proved, or each problem."""

    name: str
    ok: bool
    detail: str
    problems: list[str]


class EmulateDocument(_Output):
    """`vlanroute emulate --json`, and the --json-report file (emulate/run.py's Report builds
    it; in the VM the report file is read back through it)."""

    schema_: Literal["vlanroute-emulate/1"] = Field(default="vlanroute-emulate/1", alias="schema")
    outdir: str
    plan: str
    kernel: str
    size: str
    checks: list[EmulateCheck]
    phases: dict[str, Annotated[float, Field(ge=0)]]      # phase -> seconds
    storm_frames: Count
    teardown: str
    teardown_clean: bool
    aborted: str
    ok: bool


Mbit = Annotated[float, Field(ge=0)]


class TrafficRow(_Record):
    """One traffic pattern on one network (emulate/traffic.py's Measured), in Mbit/s."""

    pattern: str
    fabric: Literal["VLAN routing", "spanning tree"]
    flows: Count
    predicted_mbit: Mbit              # the max-min allocation of the flow model
    measured_mbit: Mbit
    slowest_predicted_mbit: Mbit
    slowest_measured_mbit: Mbit
    max_mbit: Mbit                    # the largest aggregate any allocation of the links gives
    tcp_mbit: Mbit                    # the TCP model's (proportionally fair) aggregate
    tcp_slowest_mbit: Mbit
    ratio: Annotated[float, Field(ge=0)]      # measured / predicted (max-min)
    tcp_ratio: Annotated[float, Field(ge=0)]  # measured / tcp_mbit


class EmulateTrafficDocument(_Output):
    """`vlanroute emulate --traffic --json`, and its --json-report file (emulate/traffic.py's
    TrafficReport builds it)."""

    schema_: Literal["vlanroute-emulate-traffic/1"] = Field(default="vlanroute-emulate-traffic/1", alias="schema")
    outdir: str
    rate_mbit: Mbit
    queue: Literal["sfq", "fifo"]
    goodput: Annotated[float, Field(ge=0, le=1)]     # TCP payload per frame
    notes: list[str]
    aborted: str
    rows: list[TrafficRow]


class ExportChange(_Record):
    """One change `export nautobot` made (or, with --dry-run, would make)."""

    kind: Literal["VLAN group", "VLAN", "LAG", "interface", "cable"]
    action: Literal["create", "update"]
    what: str


class ExportNautobotDocument(_Output):
    """`vlanroute export nautobot OUTDIR --json` (docs/import.md): every change, the count of
    each kind, `written` false on a dry run or when nothing changed."""

    schema_: Literal["vlanroute-export-nautobot/1"] = Field(default="vlanroute-export-nautobot/1", alias="schema")
    outdir: str
    server: str
    selection: str
    dry_run: bool
    written: bool
    changes: list[ExportChange]
    counts: dict[str, Count]
    notes: list[str]


class WatchAction(_Record):
    """One action of the watcher in this run (docs/watch.md): a heal, a return, a note."""

    action: str                 # its id: a UTC time stamp
    kind: Literal["heal", "return", "note"]
    mode: Literal["auto", "propose", "note"]
    outcome: str                # healed, returned, proposed, noted, retry, gave-up, needs-person, failed, abandoned
    failures: RepairFailures
    bundle: str | None


class WatchDocument(_Output):
    """`vlanroute watch --json`: printed when the watcher stops (or after `--once`)."""

    schema_: Literal["vlanroute-watch/1"] = Field(default="vlanroute-watch/1", alias="schema")
    outdir: str
    state_dir: str
    exit_code: int
    policy: dict[str, Any]
    acted: RepairFailures       # the failures the fabric is set up for (empty: the plan)
    observed: RepairFailures    # the failures the links showed last
    actions: list[WatchAction]
