"""`vlanroute render`: plan -> OUTDIR with switch configs, the host program and its tables, refresh jobs,
plan.json, cabling.csv, the printable cabling sheet cabling.html and the post-push checks (checks.json,
and anta/ for Arista EOS switches) (docs/outdir-layout.md).

Everything is rendered into a temporary directory next to OUTDIR, verified there, listed
with its sha256 in manifest.json (vlanroute.bundle.manifest), and only then swapped into
place, so a failure at any step leaves OUTDIR exactly as it was. An OUTDIR holding files an
earlier render did not write is not replaced unless `force`: they would be lost. Push keeps
its backups in a state directory outside OUTDIR (vlanroute.device.statedir).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol
from dataclasses import dataclass
from pathlib import Path

import jinja2

from vlanroute.atomic_dir import cleanup_on_sigterm, publish_dir
from vlanroute.bundle.cables import PlannedCable, cabling_csv_text as cables_csv, planned_cables
from vlanroute.bundle.document import PlanDocument, SwitchDoc
from vlanroute.bundle.manifest import read_manifest, tree_files, write_manifest
from vlanroute.bundle.platforms import resolve_platforms
from vlanroute.bundle.reader import PLAN_FILE
from vlanroute.drivers import FAMILIES, family_of
from vlanroute.drivers.family import Family, syntax_key
from vlanroute.errors import UserError, VerificationError, disk_error
from vlanroute.model.platforms import Platform
from vlanroute.hostside import table
from vlanroute.render.context import (DocIndex, HostSide, SwitchContext, host_network, host_side,
                                      learning_method, refresh_context, switch_context)
from vlanroute.render.antacatalog import CATALOG_FILE, INVENTORY_FILE, catalog_yaml, inventory_yaml
from vlanroute.render.checks import CHECKS_FILE, checks_json, switch_checks
from vlanroute.render.sheet import SHEET_FILE, sheet_html
from vlanroute.vlanlist import bridge_vids, format_vlan_list as compress
from vlanroute.resources import template_loader
from vlanroute.safeio.paths import require_nameable

# What an OUTDIR rendered before manifests existed holds (docs/outdir-layout.md).
OLD_LAYOUT = (PLAN_FILE, "cabling.csv", "switches/", "hosts/", "refresh/", "ansible/")
# Each switch's target config as it prints it, for line-by-line tools (docs/ansible.md).
TARGET_DIR = "ansible"


@dataclass(frozen=True)
class RenderOptions:
    learning_method: str | None = None   # overrides plan settings.learning.method (system|ip-link|vconfig|raw)
    host_network: str | None = None      # who owns the sub-interfaces: script (default)|networkd|networkmanager|netplan
    per_host_scripts: bool = False       # also hosts/per-host/<host>.sh, each with its own row inside
    verify: bool = True                  # run verify_outdir on the temp dir before publishing
    force: bool = False                  # replace OUTDIR even if it holds files render did not write
    # Files written beside the rendered ones and listed in the manifest: (path, text), e.g.
    # repair.json of `vlanroute repair`.
    extra_files: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class RenderResult:
    outdir: Path
    files: int
    bytes: int
    verified: bool
    warnings: list[str]


def environment() -> jinja2.Environment:
    """The templates: the package's, then those of families that bring their own folder."""
    extra = [jinja2.FileSystemLoader(str(f.template_dir)) for f in FAMILIES.values() if f.template_dir]
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader([template_loader(), *extra]) if extra else template_loader(),
        undefined=jinja2.StrictUndefined, autoescape=False,
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
    )
    env.filters["vlanlist"] = compress
    env.filters["bridge_vids"] = bridge_vids
    return env


def cabling_csv_text(doc: PlanDocument) -> str:
    return cables_csv(planned_cables(doc))


def render_switch(ctx: SwitchContext, env: jinja2.Environment) -> str:
    """One switch's config text from its family's template."""
    try:
        template = env.get_template(ctx.family.template)
    except jinja2.TemplateNotFound:
        raise UserError(f"no switch template {ctx.family.template} for family '{ctx.family.name}' "
                        f"(switch {ctx.switch}, platform {ctx.platform.name})",
                        fix="install the family's template, or use a platform of another family") from None
    return template.render(ctx.__dict__)


def platforms_of(doc: PlanDocument, source: str = PLAN_FILE) -> dict[str, Platform]:
    """Each switch's platform: built in, or derived and recorded in the plan; never guessed."""
    return resolve_platforms(doc, source=source, guess=False).by_switch


def target_config(rendered: str, switch: str, platform: Platform) -> str | None:
    """The config as the switch prints it once applied (docs/ansible.md), for the families
    that offer one: what line-by-line tools such as Ansible's os6_config compare."""
    family = family_of(platform)
    if type(family).target_config is Family.target_config:
        return None                            # not offered: skip the parse
    cfg = family.parse(rendered, switch=switch, platform=platform, source=f"switches/{switch}.cfg")
    return family.target_config(cfg)


def render_files(doc: PlanDocument, options: RenderOptions = RenderOptions(),
                 env: jinja2.Environment | None = None) -> dict[str, str]:
    """Relative path -> text of every file, in memory (no I/O): the unit that tests and bench use."""
    env = env or environment()
    cables = planned_cables(doc)
    platforms = platforms_of(doc)
    files: dict[str, str] = {PLAN_FILE: doc.to_json_text(), "cabling.csv": cables_csv(cables),
                             SHEET_FILE: sheet_html(doc, cables, platforms)}
    aging_times: list[int] = []
    index = DocIndex.of(doc)
    contexts: dict[str, SwitchContext] = {}
    for name in sorted(doc.switches):
        ctx = contexts[name] = switch_context(doc, name, platforms[name], index)
        aging_times.append(ctx.settings.aging_time)
        files[f"switches/{name}.cfg"] = render_switch(ctx, env)
        target = target_config(files[f"switches/{name}.cfg"], name, platforms[name])
        if target is not None:
            files[f"{TARGET_DIR}/{name}.cfg"] = target
    files.update(check_files(doc, contexts, cables))
    method = learning_method(doc, options.learning_method)
    network = host_network(method, options.host_network)
    if doc.hosts:
        side = host_side(doc, method, network, index)
        files.update(render_host_side(side, env, options.per_host_scripts))
    if doc.hosts and aging_times:
        rctx = refresh_context(doc, aging_times, network).__dict__
        for unit in ("vlanroute-refresh.cron", "vlanroute-refresh.service", "vlanroute-refresh.timer"):
            files[f"refresh/{unit}"] = env.get_template(f"refresh/{unit}.j2").render(rctx)
    return files


def check_files(doc: PlanDocument, contexts: Mapping[str, SwitchContext], cables: list[PlannedCable]) -> dict[str, str]:
    """checks.json, and for a plan with Arista EOS switches the ANTA catalog (and inventory)
    of the same checks (docs/checks.md)."""
    checks, left_out = switch_checks(doc, contexts, cables)
    files = {CHECKS_FILE: checks_json(doc, checks, left_out)}
    name = doc.name or "plan"
    for rel, text in ((CATALOG_FILE, catalog_yaml(name, checks)), (INVENTORY_FILE, inventory_yaml(name, checks))):
        if text is not None:
            files[rel] = text
    return files


def options_record(doc: PlanDocument, options: RenderOptions) -> dict[str, object]:
    """The render options plan.json does not hold, as resolved (manifest.json's "render"),
    so that `verify` can render the same bundle again (vlanroute.render.exact)."""
    method = learning_method(doc, options.learning_method)
    return {"learning_method": method, "host_network": host_network(method, options.host_network),
            "per_host_scripts": options.per_host_scripts}


def render_host_side(side: HostSide, env: jinja2.Environment, per_host_scripts: bool = False) -> dict[str, str]:
    """hosts/: one program for every host, its two tables, install.sh and an Ansible playbook
    (and, if asked, one program per host with that host's row inside)."""
    program = env.get_template("host/vlanroute-host.j2")
    base = {**side.__dict__, "fixed_host": None}
    hosts_text = table.hosts_tsv(side.plan_name, side.hosts)
    vlans_text = table.vlans_tsv(side.plan_name, side.vlans)
    files = {
        "hosts/vlanroute-host": program.render(base),
        f"hosts/{table.HOSTS_FILE}": hosts_text,
        f"hosts/{table.VLANS_FILE}": vlans_text,
        "hosts/install.sh": env.get_template("host/install.sh.j2").render(base),
        "hosts/ansible-playbook.yml": env.get_template("host/ansible-playbook.yml.j2").render(base),
    }
    if per_host_scripts:
        for row in side.hosts:
            files[f"hosts/per-host/{row.host}.sh"] = program.render(
                {**base, "fixed_host": row.host, "hosts_table": table.hosts_tsv(side.plan_name, [row]),
                 "vlans_table": vlans_text})
    return files


# Modes set explicitly, whatever the umask: the host program and the refresh units run as
# root on every node, so nobody but the owner may change them; everything may be read.
FILE_MODE, PROGRAM_MODE, DIR_MODE = 0o644, 0o755, 0o755


def _make_dirs(root: Path, rel_dir: Path) -> None:
    path = root
    for part in rel_dir.parts:
        path = path / part
        try:
            os.mkdir(path, DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(path, DIR_MODE)        # mkdir's mode is masked by the umask


def _write_tree(root: Path, files: Mapping[str, str]) -> int:
    total = 0
    for rel, text in files.items():
        path = root / rel
        _make_dirs(root, Path(rel).parent)
        data = text.encode("utf-8")
        # scripts: switches/*.cfg of linux-bridge, hosts/ programs
        mode = PROGRAM_MODE if text.startswith("#!") else FILE_MODE
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), mode)
            fh.write(data)
        total += len(data)
    return total


def _run_verifier(tmp: Path, platforms: Mapping[str, Platform], doc: PlanDocument) -> bool:
    """verify_outdir (parse back, join, simulate); False if that module is not installed.
    It gets `doc`, which tmp/plan.json was just written from, rather than validating that
    file again (about a second on a 32x32 torus); everything else it reads from tmp."""
    try:
        from vlanroute.verify.configs import verify_outdir
    except ImportError:
        return False
    report = verify_outdir(tmp, platforms, doc)
    if not report.ok:
        raise VerificationError([str(v) for v in report.violations])
    return True


def _check_outdir(outdir: Path, force: bool) -> None:
    """Refuse to replace anything that is not a previous vlanroute OUTDIR, or one holding
    files the render did not write (unless `force`)."""
    require_nameable(outdir, "-o/--outdir")
    if outdir.is_symlink():
        raise UserError(f"{outdir} is a symbolic link", field="-o/--outdir",
                        fix="give the real directory path")
    here = Path.cwd()
    if outdir == here or outdir in here.parents:
        raise UserError(f"{outdir} is the current directory or contains it, and OUTDIR is replaced "
                        "as a whole", field="-o/--outdir", fix="give a subdirectory, e.g. -o out")
    if not outdir.exists():
        return
    if not outdir.is_dir():
        raise UserError(f"{outdir} exists and is not a directory", field="-o/--outdir",
                        fix="choose a new directory name")
    if not any(outdir.iterdir()):
        return
    manifest = read_manifest(outdir)
    if manifest is None and not (outdir / PLAN_FILE).is_file():
        raise UserError(f"{outdir} is not empty and holds no {PLAN_FILE}, so it is not a vlanroute "
                        "output directory; refusing to replace it", field="-o/--outdir",
                        fix="choose a new or empty directory, or the OUTDIR of an earlier render")
    if force:
        return
    present = tree_files(outdir)
    if manifest is not None:
        foreign = [f for f in present if f not in manifest]
    else:
        foreign = [f for f in present if not f.startswith(OLD_LAYOUT)]
    if foreign:
        shown = ", ".join(foreign[:10]) + (f" (and {len(foreign) - 10} more)" if len(foreign) > 10 else "")
        note = (" (push keeps its backups in the state directory now, see docs/push.md)"
                if any(f.startswith("backups/") for f in foreign) else "")
        raise UserError(f"{outdir} holds files an earlier render did not write, which replacing it "
                        f"would delete: {shown}{note}", field="-o/--outdir",
                        fix="move them out of OUTDIR, or pass --force to delete them")


def render_to_dir(doc: PlanDocument, outdir: Path, options: RenderOptions = RenderOptions()) -> RenderResult:
    with cleanup_on_sigterm():
        return _render_to_dir(doc, outdir, options)


def _render_to_dir(doc: PlanDocument, outdir: Path, options: RenderOptions) -> RenderResult:
    outdir = Path(os.path.abspath(outdir))      # normalises "." and "..", keeps symlinks visible
    _check_outdir(outdir, options.force)
    files = render_files(doc, options)
    files.update(options.extra_files)
    by_switch = platforms_of(doc)
    platforms = {p.name: p for p in by_switch.values()}
    try:
        outdir.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=outdir.parent, prefix=f".{outdir.name}.tmp-"))
    except OSError as exc:
        raise disk_error(exc, outdir.parent) from None
    try:
        total = _write_tree(tmp, files)
        verified = _run_verifier(tmp, platforms, doc) if options.verify else False
        total += write_manifest(tmp, options_record(doc, options)).stat().st_size
        os.chmod(tmp, 0o755)        # mkdtemp makes it 0700
        publish_dir(tmp, outdir)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise disk_error(exc, outdir) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    warnings = []
    if options.verify and not verified:
        warnings.append("vlanroute.verify.configs is not available: the rendered configs were not "
                        "re-parsed and simulated before publishing")
    warnings.extend(syntax_warnings(doc, by_switch))
    warnings.extend(advice_warnings(doc, by_switch))
    return RenderResult(outdir, len(files) + 1, total, verified, warnings)


def switch_vlan_count(sw: SwitchDoc) -> int:
    """How many VLANs a switch of the plan holds once configured, VLAN 1 included: every
    VLAN one of its ports or LAGs is a member of."""
    vlans = {1}
    for port in sw.ports.values():
        vlans.update(port.untagged or [], port.tagged or [])
    for lag in sw.lags.values():
        vlans.update(lag.tagged)
    return len(vlans)


def advice_warnings(doc: PlanDocument, by_switch: Mapping[str, Platform]) -> list[str]:
    """What each family in use warns about for its switches' VLAN counts (Family.advice)."""
    counts: dict[str, dict[str, int]] = {}
    families = {}
    for name, platform in by_switch.items():
        family = family_of(platform)
        families[family.name] = family
        counts.setdefault(family.name, {})[name] = switch_vlan_count(doc.switches[name])
    return [w for key in sorted(families) for w in families[key].advice(counts[key])]


def syntax_warnings(doc: PlanDocument, by_switch: Mapping[str, Platform]) -> list[str]:
    """One warning per family in use whose rendered commands are not all confirmed: its
    unconfirmed commands, and those for untagged host ports where a switch of the family
    has host_attachment untagged, less those the inventory acknowledges
    (site.acknowledged_syntax, checked when planning). `by_switch`: each switch's platform
    (`platforms_of`)."""
    return family_syntax_warnings(((p, doc.switches[name].host_attachment) for name, p in by_switch.items()),
                                  doc.acknowledged_syntax)


class Acknowledged(Protocol):
    """An acknowledgment: plan.json's record or the inventory's (model/site.py)."""
    @property
    def family(self) -> str: ...
    @property
    def commands(self) -> Sequence[str]: ...


def family_syntax_warnings(switches: Iterable[tuple[Platform, str]],
                           acknowledgments: Iterable[Acknowledged] = ()) -> list[str]:
    """syntax_warnings from (platform, host_attachment) per switch, less the site's
    acknowledgments: render prints them, the report (vlanroute report) shows them."""
    acks = list(acknowledgments)
    families = {}
    untagged: set[str] = set()
    for platform, attachment in switches:
        family = family_of(platform)
        families[family.name] = family
        if attachment == "untagged":
            untagged.add(family.name)
    found = []
    for key, f in sorted(families.items()):
        acknowledged = {syntax_key(c) for ack in acks if ack.family == key for c in ack.commands}
        items = [item for item in f.unconfirmed + (f.unconfirmed_untagged_hosts if key in untagged else ())
                 if syntax_key(item) not in acknowledged]
        if items:
            found.append(f"{f.title} syntax that no public source confirms (docs/platforms/{f.name}.md), "
                         f"check it in switches/*.cfg on one switch before pushing: {'; '.join(items)}. "
                         f"Once checked, acknowledge it in the inventory: site.acknowledged_syntax, "
                         f"family {f.name} (docs/render.md)")
    return found
