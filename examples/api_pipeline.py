"""plan -> render -> verify -> push -> audit through vlanroute.api alone (docs/api.md).

    python examples/api_pipeline.py INVENTORY WORKDIR

Renders INVENTORY to WORKDIR/out, starts emulated switches for it on loopback
(`vlanroute lab up`, the only step that is not the API: a real site has real switches),
previews the push, pushes exactly what was previewed, pushes again (nothing left to change)
and audits the MAC tables. The lab's hosts send their learning frames over the pushed
configs (vlanroute/lab/learning.py), so the audit finds every entry in place, as on a real
fabric once the hosts' learning broadcasts went out.
Exit code: the push's (docs/exit-codes.md).
"""

from __future__ import annotations

import json
from pathlib import Path
import subprocess
import sys

from vlanroute import api


def main(argv: list[str]) -> int:
    inventory, work = Path(argv[0]), Path(argv[1])
    out, lab = work / "out", work / "lab"
    plan = api.plan(inventory)
    rendered = api.render(plan, out)
    report = api.verify(out)
    print(f"plan: {len(plan.vlans)} VLANs; render: {rendered.files} files; verify: "
          f"{'ok' if report.ok else 'FAILED'}")
    if not report.ok:
        return int(api.ExitCode.FAILED_CHECK)
    up = subprocess.run([sys.executable, "-m", "vlanroute.cli", "lab", "up", str(out), "--state-dir", str(lab),
                         "--json"], capture_output=True, text=True, check=True)
    env = json.loads(up.stdout)["environment"]
    try:
        creds = api.Credentials(env["VLANROUTE_SSH_USER"], password=env["VLANROUTE_SSH_PASSWORD"])
        where = {"known_hosts": env["VLANROUTE_KNOWN_HOSTS"], "targets": env["VLANROUTE_TARGETS"]}
        preview = api.push(out, creds, **where)                       # a dry run
        for r in preview.results:
            print(f"preview {r.switch}: {r.result}, {len(r.commands)} commands")
        run = api.push(out, creds, dry_run=False, **where,
                       expected={r.switch: r.running_canonical for r in preview.results})
        for r in run.results:
            print(f"push {r.switch}: {r.result}: {r.message}")
        again = api.push(out, creds, **where)
        print("push again:", ", ".join(sorted({r.result for r in again.results})))
        audit = api.audit(out, creds, **where)
        print(f"audit: {audit.to_json()['present']} of {audit.checked} MAC entries in place, "
              f"{len(audit.errors)} switch(es) not read")
        return int(run.exit_code)
    finally:
        subprocess.run([sys.executable, "-m", "vlanroute.cli", "lab", "down", "--state-dir", str(lab)],
                       capture_output=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
