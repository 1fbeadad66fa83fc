"""Run one command inside a throw-away QEMU VM booted from the host's stock Debian kernel.

Why: the host kernel here (and on CI) has no bridge VLAN filtering and no 802.1Q
devices, but the Debian kernel package ships both as modules. We boot that kernel under
TCG (KVM hangs on this workplace) with a tiny busybox initramfs that only loads the
virtio/9p modules, mounts the host's `/` read-only over 9p, mounts one work directory
read-write at the same path, chroots into the host tree and runs the command there.
So every host tool (ip, bridge, python3 with vlanroute installed) works unchanged
inside the guest. The command's exit status comes back through `isa-debug-exit`.

The VM has no network card: nothing it does can leave it.
"""

from __future__ import annotations

import hashlib
import io
import lzma
import os
import re
import select
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable

from vlanroute.errors import UserError

# Kernel modules the initramfs must load before it can mount the host: virtio PCI
# transport plus 9p over virtio. Their dependencies are resolved with modprobe.
BOOT_MODULES = ("virtio_pci", "9pnet_virtio", "9p")
HOST_TAG = "vrhost"
WORK_TAG = "vrwork"
# isa-debug-exit: a byte b written to this port ends QEMU with status (b << 1) | 1.
DEBUG_EXIT_PORT = 0xF4
# Marks the line that carries the guest command's exit status on the console, a second
# channel in case the debug-exit device is missing.
STATUS_MARK = "@@vlanroute-vm-status@@"
# The VM's one kernel carries every switch and host: each frame a bridge floods to a veth
# waits in the receiving CPU's input backlog (net.core.netdev_max_backlog, 1000 by default).
# With 225 hosts learning 24 at a time, one run dropped 271 frames there and missed 12 MAC
# entries, an artefact of the emulation, not of the plan; the throwaway VM gets a deeper one.
VM_NETDEV_MAX_BACKLOG = 10000
DEBIAN_PACKAGES = ("qemu-system-x86", "linux-image-amd64", "busybox-static", "kmod", "iproute2")


@dataclass(frozen=True)
class VmResult:
    returncode: int          # the guest command's exit status
    output: str              # everything the guest printed on its console
    boot_seconds: float      # QEMU start until the guest command started
    total_seconds: float
    accel: str = "tcg"       # the QEMU accelerator it ran under: kvm or tcg


# The VM's vCPUs: 2 unless VLANROUTE_VM_CPUS says otherwise. Under TCG each vCPU is a host
# thread and the guest keeps both busy, so on a 2-core host shared with other work (the test
# suite's second worker) 1 vCPU does the same run in less host CPU (tests/conftest.py sets 1).
CPUS_ENV = "VLANROUTE_VM_CPUS"
DEFAULT_CPUS = 2


def default_cpus() -> int:
    """VLANROUTE_VM_CPUS when set (1 to 64), else DEFAULT_CPUS."""
    value = os.environ.get(CPUS_ENV, "").strip()
    if not value:
        return DEFAULT_CPUS
    if not value.isdigit() or not 1 <= int(value) <= 64:
        raise UserError(f"{CPUS_ENV}={value!r} is not a vCPU count", fix="set it to a number from 1 to 64, or unset it")
    return int(value)


@dataclass(frozen=True)
class VmConfig:
    memory_mb: int = 1536
    cpus: int = field(default_factory=default_cpus)
    timeout_s: float = 600.0
    kernel: Path | None = None           # default: newest /boot/vmlinuz-*
    qemu: str = "qemu-system-x86_64"
    extra_env: dict[str, str] = field(default_factory=dict)
    accel: str = ""                      # "kvm" or "tcg"; empty: choose_accel()


KVM_DEVICE = Path("/dev/kvm")
ACCEL_ENV = "VLANROUTE_VM_ACCEL"        # kvm or tcg: overrides the choice (e.g. to compare them)
# QEMU's -cpu per accelerator. Under KVM the host's CPU without arch-capabilities: nested
# KVM hosts (a CI runner in a VM) refuse to set that MSR and QEMU aborts at start
# ("failed to set MSR 0x10a"); the guest does not need it. Under TCG every feature QEMU
# emulates.
CPU_MODEL = {"kvm": "host,-arch-capabilities", "tcg": "max"}


def kvm_usable(device: Path = KVM_DEVICE) -> bool:
    """Can this process open the KVM device read-write (exists, and our user may)?"""
    try:
        fd = os.open(device, os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return False
    os.close(fd)
    return True


# Under KVM the guest reaches its command in seconds. Some hosts offer a /dev/kvm that
# cannot boot a stock kernel (e.g. a sandbox's nested PVM, which runs only PVM guests): the
# guest then hangs silently. After this long without the start mark the VM is killed, TCG
# runs instead, and a marker file under the user's cache directory keeps later runs on TCG.
KVM_BOOT_LIMIT_S = 30.0


def _kvm_failed_marker() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "vlanroute" / "kvm-cannot-boot"


def choose_accel(device: Path = KVM_DEVICE) -> str:
    """kvm where /dev/kvm is usable (and has not failed to boot the guest before), else tcg
    (QEMU's emulation, 5-20x slower); the VLANROUTE_VM_ACCEL environment variable overrides."""
    forced = os.environ.get(ACCEL_ENV, "").strip().lower()
    if forced:
        if forced not in CPU_MODEL:
            raise UserError(f"{ACCEL_ENV}={forced!r} is not an accelerator", fix="set it to kvm or tcg, or unset it")
        return forced
    return "kvm" if kvm_usable(device) and not _kvm_failed_marker().exists() else "tcg"


# In the script, replaced by the accelerator the VM runs under (KVM or TCG), so what the
# guest prints names it even after a fallback from KVM.
ACCEL_TOKEN = "@VM_ACCEL@"


class _KvmStalled(Exception):
    """The guest did not start its command within KVM_BOOT_LIMIT_S under KVM."""


def find_kernel() -> Path:
    """Newest /boot/vmlinuz-* (the version changes with Debian updates)."""
    kernels = sorted(Path("/boot").glob("vmlinuz-*"), key=lambda p: _version_key(p.name))
    if not kernels:
        raise UserError("no kernel image in /boot",
                        fix="apt-get install linux-image-amd64 (see .ci/packages.txt)")
    return kernels[-1]


def _version_key(name: str) -> list[object]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def missing_tools(config: VmConfig | None = None) -> list[str]:
    """What must be installed before a VM can boot; empty when all is there."""
    config = config or VmConfig()
    missing = []
    if shutil.which(config.qemu) is None:
        missing.append(f"{config.qemu} (qemu-system-x86)")
    if not list(Path("/boot").glob("vmlinuz-*")):
        missing.append("/boot/vmlinuz-* (linux-image-amd64)")
    if _busybox() is None:
        missing.append("busybox (busybox-static)")
    if shutil.which("modprobe") is None and not Path("/usr/sbin/modprobe").exists():
        missing.append("modprobe (kmod)")
    return missing


def _busybox() -> Path | None:
    for candidate in ("/bin/busybox", "/usr/bin/busybox"):
        if Path(candidate).exists():
            return Path(candidate)
    found = shutil.which("busybox")
    return Path(found) if found else None


def _modprobe() -> str:
    return shutil.which("modprobe") or "/usr/sbin/modprobe"


def _kernel_version(kernel: Path) -> str:
    return kernel.name.removeprefix("vmlinuz-")


def _module_files(version: str) -> list[Path]:
    """The .ko files to insmod, in load order, for BOOT_MODULES (deduplicated)."""
    ordered: list[Path] = []
    for module in BOOT_MODULES:
        proc = subprocess.run([_modprobe(), "--show-depends", "-S", version, module],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise UserError(f"kernel {version} has no module {module}: {proc.stderr.strip()}",
                            fix="apt-get install linux-image-amd64 kmod")
        for line in proc.stdout.splitlines():
            parts = line.split()
            # "builtin X" lines need nothing; "insmod /path [params]" lines need the file.
            if len(parts) >= 2 and parts[0] == "insmod":
                path = Path(parts[1])
                if path not in ordered:
                    ordered.append(path)
    return ordered


def _read_module(path: Path) -> bytes:
    """Module bytes, decompressed: busybox insmod of the static build loads plain .ko only."""
    data = path.read_bytes()
    if path.suffix == ".xz":
        return lzma.decompress(data)
    if path.suffix == ".zst":
        return subprocess.run(["zstd", "-dc", str(path)], check=True, capture_output=True).stdout
    if path.suffix == ".gz":
        import gzip
        return gzip.decompress(data)
    return data


_INIT = r"""#!/bin/busybox sh
# vlanroute VM init: mount the host read-only, the work dir read-write, run the command.
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /host
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in $(cat /modules.order); do insmod /modules/$m || echo "vm: insmod $m failed"; done
W=
for x in $(cat /proc/cmdline); do case "$x" in vr_work=*) W="${x#vr_work=}";; esac; done
O9="trans=virtio,version=9p2000.L,msize=524288"
mount -t 9p -o "$O9,ro,cache=loose" @HOST@ /host || echo "vm: cannot mount host root"
mount -t proc proc /host/proc
mount -t sysfs sysfs /host/sys
mount -t devtmpfs devtmpfs /host/dev
mount -t tmpfs tmpfs /host/run
mount -t 9p -o "$O9,rw,cache=none" @WORK@ "/host$W" || echo "vm: cannot mount work dir $W"
echo 0 > /proc/sys/kernel/printk 2>/dev/null
echo @BACKLOG@ > /proc/sys/net/core/netdev_max_backlog
chroot /host /bin/sh -c 'cd "$1" && exec /bin/sh ./command.sh' vm "$W" </dev/null >/dev/console 2>&1
rc=$?
sync
echo "@MARK@ $rc" >/dev/console
printf "\\$(printf %o "$rc")" | dd of=/dev/port bs=1 seek=@PORT@ count=1 conv=notrunc 2>/dev/null
poweroff -f
"""


def build_initramfs(kernel: Path, cache_dir: Path | None = None) -> Path:
    """A newc cpio with busybox, the boot modules and /init; cached per kernel version."""
    version = _kernel_version(kernel)
    busybox = _busybox()
    if busybox is None:
        raise UserError("busybox not found", fix="apt-get install busybox-static")
    cache_dir = cache_dir or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "vlanroute"
    cache_dir.mkdir(parents=True, exist_ok=True)
    init = (_INIT.replace("@HOST@", HOST_TAG).replace("@WORK@", WORK_TAG)
            .replace("@MARK@", STATUS_MARK).replace("@PORT@", str(DEBUG_EXIT_PORT))
            .replace("@BACKLOG@", str(VM_NETDEV_MAX_BACKLOG)))
    modules = _module_files(version)
    # The cache key covers everything that goes in, so a changed init or busybox rebuilds.
    stamp = f"{version}|{busybox.stat().st_mtime_ns}|{hashlib.sha256(init.encode()).hexdigest()[:16]}|{[str(m) for m in modules]}"
    target = cache_dir / f"initramfs-{version}.cpio"
    stamp_file = target.with_suffix(".stamp")
    if target.exists() and stamp_file.exists() and stamp_file.read_text() == stamp:
        return target
    archive = _Cpio()
    for d in ("bin", "dev", "proc", "sys", "host", "modules"):
        archive.add_dir(d)
    archive.add_file("bin/busybox", busybox.read_bytes(), 0o755)
    names = []
    for path in modules:
        name = path.name.split(".ko")[0] + ".ko"
        names.append(name)
        archive.add_file(f"modules/{name}", _read_module(path), 0o644)
    archive.add_file("modules.order", ("\n".join(names) + "\n").encode(), 0o644)
    archive.add_file("init", init.encode(), 0o755)
    # Unique temporary names: concurrent runs (parallel test suites) each publish a whole file.
    tmp = target.with_suffix(f".tmp{os.getpid()}")
    tmp.write_bytes(archive.finish())
    tmp.replace(target)
    tmp_stamp = stamp_file.with_suffix(f".tmp{os.getpid()}")
    tmp_stamp.write_text(stamp)
    tmp_stamp.replace(stamp_file)
    return target


class _Cpio:
    """Minimal writer of the newc cpio format the kernel unpacks as initramfs."""

    def __init__(self) -> None:
        self._buf = io.BytesIO()
        self._ino = 1

    def _entry(self, name: str, mode: int, data: bytes) -> None:
        encoded = name.encode() + b"\0"
        header = "070701" + "".join(f"{v:08x}" for v in (
            self._ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(encoded), 0))
        self._ino += 1
        self._buf.write(header.encode() + encoded)
        self._pad()
        self._buf.write(data)
        self._pad()

    def _pad(self) -> None:
        self._buf.write(b"\0" * (-self._buf.tell() % 4))

    def add_dir(self, name: str) -> None:
        self._entry(name, 0o040755, b"")

    def add_file(self, name: str, data: bytes, perm: int) -> None:
        self._entry(name, 0o100000 | perm, data)

    def finish(self) -> bytes:
        self._entry("TRAILER!!!", 0, b"")
        return self._buf.getvalue()


def run_in_vm(script: str, workdir: Path, config: VmConfig | None = None,
              on_line: Callable[[str], None] | None = None) -> VmResult:
    """Boot the VM, run `script` (POSIX sh) with `workdir` as cwd, return its status.

    `workdir` is shared read-write; everything else of the host is read-only. The VM is
    killed when the timeout passes or the caller is interrupted, which also tears down
    everything the command built inside it. Under KVM where it can (VmResult.accel says).
    """
    config = config or VmConfig()
    accel = config.accel or choose_accel()
    if accel != "kvm" or config.accel:
        return _run_once(script, workdir, config, on_line, accel)
    try:
        return _run_once(script, workdir, config, on_line, "kvm")
    except _KvmStalled:
        marker = _kvm_failed_marker()
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text(f"the guest did not boot under KVM within {KVM_BOOT_LIMIT_S:.0f} s; "
                              "delete this file to try KVM again\n")
        except OSError:
            pass                  # no cache directory: the next run tries KVM again
        if on_line is not None:
            on_line(f"vm: the guest did not boot under KVM within {KVM_BOOT_LIMIT_S:.0f} s "
                    f"(/dev/kvm cannot run a stock kernel here); running under TCG, 5-20x slower "
                    f"(later runs go straight to TCG: {marker})\n")
        return _run_once(script, workdir, config, on_line, "tcg")


def _run_once(script: str, workdir: Path, config: VmConfig, on_line: Callable[[str], None] | None,
              accel: str) -> VmResult:
    missing = missing_tools(config)
    if missing:
        raise UserError("cannot boot the emulation VM, missing: " + ", ".join(missing),
                        fix="apt-get install " + " ".join(DEBIAN_PACKAGES))
    workdir = workdir.resolve()
    if re.search(r"\s", str(workdir)):
        raise UserError(f"VM work directory must not contain white space: {workdir}")
    kernel = config.kernel or find_kernel()
    script = script.replace(ACCEL_TOKEN, accel.upper())
    initrd = build_initramfs(kernel)
    env_lines = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in {
        # The host's own interpreter first, so `python3` in the guest has vlanroute installed.
        "PATH": f"{Path(sys.executable).parent}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": str(workdir), "TMPDIR": str(workdir), "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        # The guest imports the very vlanroute the host runs, wherever it is checked out.
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]), **config.extra_env}.items())
    (workdir / "command.sh").write_text(
        "# written by vlanroute.emulate.vm\n" + env_lines + f"echo {STATUS_MARK}-started\n" + script + "\n")
    # norandmaps: without address-space randomisation every process maps its libraries at
    # the same addresses, so TCG reuses translated code across process starts (~40 % faster
    # per `ip` call, measured). The guest is a throw-away test harness.
    cmdline = (f"console=ttyS0 quiet loglevel=1 panic=-1 mitigations=off nokaslr norandmaps "
               f"rdinit=/init vr_work={workdir}")
    argv = [
        config.qemu, "-machine", f"pc,accel={accel}", "-cpu", CPU_MODEL[accel],
        "-m", str(config.memory_mb), "-smp", str(config.cpus),
        "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
        "-serial", "stdio", "-monitor", "none", "-nic", "none",
        "-kernel", str(kernel), "-initrd", str(initrd), "-append", cmdline,
        "-device", f"isa-debug-exit,iobase={DEBUG_EXIT_PORT:#x},iosize=0x04",
        "-fsdev", "local,id=fsh,path=/,security_model=none,readonly=on,multidevs=remap",
        "-device", f"virtio-9p-pci,fsdev=fsh,mount_tag={HOST_TAG}",
        "-fsdev", f"local,id=fsw,path={workdir},security_model=none,multidevs=remap",
        "-device", f"virtio-9p-pci,fsdev=fsw,mount_tag={WORK_TAG}",
    ]
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    lines: list[str] = []
    started_at: float | None = None
    status: int | None = None
    pending = b""
    try:
        while True:
            remaining = start + config.timeout_s - time.monotonic()
            if remaining <= 0:
                raise VmTimeout(config.timeout_s, "".join(lines))
            if accel == "kvm" and started_at is None and time.monotonic() - start > KVM_BOOT_LIMIT_S:
                raise _KvmStalled()
            ready, _, _ = select.select([proc.stdout], [], [], min(remaining, 1.0))
            if not ready:
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            pending += chunk
            *complete, pending = pending.split(b"\n")
            for raw in complete:
                line = raw.decode(errors="replace").rstrip("\r") + "\n"
                if line.startswith(f"{STATUS_MARK}-started"):
                    started_at = time.monotonic()
                    continue
                if line.startswith(STATUS_MARK):
                    status = int(line.split()[1])
                    continue
                lines.append(line)
                if on_line is not None:
                    on_line(line)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    end = time.monotonic()
    if pending:
        lines.append(pending.decode(errors="replace"))
    output = "".join(lines)
    # QEMU's own status from isa-debug-exit is (b << 1) | 1; the console line is the fallback.
    if proc.returncode is not None and proc.returncode % 2 == 1 and proc.returncode > 0:
        status = (proc.returncode - 1) >> 1
    if status is None:
        raise VmError(f"the VM stopped without reporting a status (qemu exit {proc.returncode})",
                      output)
    boot = (started_at or end) - start
    return VmResult(returncode=status, output=output, boot_seconds=boot,
                    total_seconds=end - start, accel=accel)


class VmError(Exception):
    """The VM did not run the command to completion (boot failure, crash)."""

    def __init__(self, message: str, output: str) -> None:
        self.output = output
        tail = "\n".join(output.splitlines()[-30:])
        super().__init__(f"{message}\n--- last VM console lines ---\n{tail}")


class VmTimeout(VmError):
    def __init__(self, timeout_s: float, output: str) -> None:
        super().__init__(f"the VM did not finish within {timeout_s:.0f} s and was killed", output)


def _echo(line: str) -> None:
    sys.stdout.write(line)


def main(argv: list[str] | None = None) -> int:
    """`python -m vlanroute.emulate.vm 'shell command'`: a debugging aid."""
    args = sys.argv[1:] if argv is None else argv
    with tempfile.TemporaryDirectory(prefix="vlanroute-vm-") as tmp:
        result = run_in_vm(" ".join(args) or "uname -a", Path(tmp),
                           on_line=_echo)
    print(f"[vm] status {result.returncode} ({result.accel}), boot {result.boot_seconds:.1f} s, "
          f"total {result.total_seconds:.1f} s", file=sys.stderr)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
