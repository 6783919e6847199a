"""A real kube-apiserver + etcd on loopback for the test suite (envtest-style),
plus a kube-controller-manager that runs only two controllers:

* ``garbagecollector``: dependents whose owners are gone are deleted, as in a
  real cluster (ownerReferences work; foreground deletion completes);
* ``namespace``: a deleted namespace is emptied and then disappears.

Nothing else runs by default: no kubelet or scheduler, and on purpose no job
controller (tests set Job status by hand, and a job controller would
overwrite it), so Jobs and Deployments never create Pods; no default ServiceAccounts or tokens
appear, and the aggregated ClusterRoles (view/edit/admin) have no rules, since
aggregating them is another controller's job: grant explicit Roles in RBAC
tests. Tests should still use unique namespaces / names.

``ControlPlane(lifecycle=True)`` is a whole cluster's Job lifecycle instead:
kube-controller-manager also runs the ``job`` controller (and the ``cronjob``
controller, for the tests that move CronJobs to cronctl), kube-scheduler
binds Pods, and kwok simulates ``NODES`` Nodes and the Pods bound to them
with the Stages of ``kwok-stages.yaml`` (Running at once, then Succeeded or
Failed after the time and with the exit code the Pod's annotations give).
Nothing writes a Job's status but the job controller.

The API server is hardened as OpenShift's and CIS-benchmarked clusters are, so a
permission the chart forgets is refused here as it would be there (``ADMISSION_PLUGINS``):

* ``OwnerReferencesPermissionEnforcement``: setting ``blockOwnerDeletion`` on an
  ownerReference needs ``update`` of the owner's ``finalizers`` subresource, and
  changing an object's ownerReferences needs ``delete`` of the object (OpenShift
  turns it on; a Job owned by a CronSchedule needs ``cronschedules/finalizers``);
* ``NodeRestriction`` (with the ``Node`` authorizer): a kubelet may touch only its
  own Node and Pods (kwok is ``system:masters``, not a kubelet, so it passes);
* ``AlwaysPullImages``: every Pod's ``imagePullPolicy`` becomes ``Always`` (kwok
  pulls nothing, so it costs nothing);
* ``PodSecurity`` (on by default) enforces the ``baseline`` level in every
  namespace without a label of its own, where upstream enforces ``privileged``:
  no privileged, host-namespace or hostPath Pod runs;
* ``LimitRanger`` and ``ResourceQuota`` are on by default, as in any cluster.

``EventRateLimit`` is left out: its limits are a guess for a given cluster, and
throttled Events would make the tests' waits on Events flaky without testing
anything of cronctl's. ``ServiceAccount`` stays off: no controller here makes the
``default`` ServiceAccount it would require of every Pod. The admin and
the cluster's own components are in ``system:masters``, which passes every
authorization check: these plugins bite only a client under real RBAC (the
chart's ServiceAccount in tests/kube/test_rbac.py, a ``user_kubeconfig()``).

The binaries come from ``scripts/build-control-plane.sh`` (built from the Go
module proxy and cached under ``${CRONCTL_CACHE:-~/.cache/cronctl}``), or from
the directory named by ``CRONCTL_CONTROL_PLANE_BIN``.

Usage::

    with ControlPlane() as cp:
        subprocess.run(["kubectl", "--kubeconfig", cp.kubeconfig, "get", "ns"])
        viewer = cp.user_kubeconfig("alice", groups=["viewers"])

Environment knobs:
    CRONCTL_CONTROL_PLANE_BIN       directory holding kube-apiserver,
                                    kube-controller-manager and etcd
    CRONCTL_CONTROL_PLANE_TIMEOUT   seconds to wait for /readyz (default 90)
    CRONCTL_CONTROL_PLANE_KEEP      keep the temp dir (certs, logs, etcd data)
"""

from __future__ import annotations

import atexit
import base64
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterable, Sequence

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO_ROOT / "scripts" / "build-control-plane.sh"
BINARIES = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd", "kwok")
# The only controllers kube-controller-manager runs (see the module docstring).
CONTROLLERS = ("garbagecollector", "namespace")
LIFECYCLE_CONTROLLERS = (*CONTROLLERS, "job", "cronjob")
KWOK_STAGES = Path(__file__).resolve().parent / "kwok-stages.yaml"
NODES = ("kwok-node-0", "kwok-node-1")
FAKE_NODE = {"kwok.x-k8s.io/node": "fake"}  # the annotation kwok manages Nodes by
# Admission plugins a hardened cluster adds to the defaults (see the module docstring).
ADMISSION_PLUGINS = ("OwnerReferencesPermissionEnforcement", "NodeRestriction", "AlwaysPullImages", "PodSecurity")
# PodSecurity's cluster-wide default, where upstream's is privileged.
ADMISSION_CONFIG = {
    "apiVersion": "apiserver.config.k8s.io/v1",
    "kind": "AdmissionConfiguration",
    "plugins": [{"name": "PodSecurity", "configuration": {
        "apiVersion": "pod-security.admission.config.k8s.io/v1",
        "kind": "PodSecurityConfiguration",
        "defaults": {"enforce": "baseline", "enforce-version": "latest"},
        "exemptions": {"usernames": [], "runtimeClasses": [], "namespaces": []},
    }}],
}

__all__ = ["ControlPlane", "ControlPlaneError", "find_binaries", "ensure_binaries"]


class ControlPlaneError(RuntimeError):
    pass


# --------------------------------------------------------------------------
# Binaries
# --------------------------------------------------------------------------


def _has_binaries(bin_dir: Path, names: Iterable[str] = BINARIES) -> bool:
    return all(os.access(bin_dir / n, os.X_OK) for n in names)


def find_binaries() -> tuple[Path, bool]:
    """Return (bin_dir, up_to_date) without building anything.

    With CRONCTL_CONTROL_PLANE_BIN set, that directory is used as it is.
    Otherwise the build script names the cache directory; ``up_to_date`` is
    False when the script would have to build (missing or stale binaries).
    """
    env = os.environ.get("CRONCTL_CONTROL_PLANE_BIN")
    if env:
        bin_dir = Path(env)
        if not _has_binaries(bin_dir):
            raise ControlPlaneError(
                f"CRONCTL_CONTROL_PLANE_BIN={env} lacks an executable "
                + ", ".join(n for n in BINARIES if not os.access(bin_dir / n, os.X_OK))
            )
        return bin_dir, True
    out = subprocess.run(
        ["bash", str(BUILD_SCRIPT), "--print-bin-dir"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    bin_dir = Path(out.splitlines()[-1])
    # The script is the authority on staleness (it compares a hash of the
    # wrapper modules with the one the cached binaries were built from).
    check = subprocess.run(["bash", str(BUILD_SCRIPT), "--check"], capture_output=True)
    return bin_dir, check.returncode == 0 and _has_binaries(bin_dir)


def ensure_binaries(stream=None) -> Path:
    """Return the bin dir, running the build script first if needed.

    The build's progress goes to ``stream`` (default: this process's stderr).
    A cold build takes several minutes.
    """
    bin_dir, ok = find_binaries()
    if ok:
        return bin_dir
    stream = stream or sys.stderr
    print(f"control plane: building binaries into {bin_dir} (slow, first run only)",
          file=stream, flush=True)
    proc = subprocess.Popen(
        ["bash", str(BUILD_SCRIPT)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    lines: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)
        print(line, end="", file=stream, flush=True)
    if proc.wait() != 0 or not _has_binaries(bin_dir):
        raise ControlPlaneError("scripts/build-control-plane.sh failed:\n" + _tail("".join(lines)))
    return bin_dir


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.splitlines()[-lines:])


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _openssl(*args: str, cwd: Path) -> None:
    res = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    if res.returncode != 0:
        raise ControlPlaneError(f"openssl {' '.join(args)} failed:\n{res.stderr}")


_SUBJ_SAFE = re.compile(r"^[A-Za-z0-9:._@ -]+$")


def _subject(cn: str, orgs: Sequence[str] = ()) -> str:
    for part in (cn, *orgs):
        if not _SUBJ_SAFE.match(part):
            raise ValueError(f"unsupported character in certificate subject part {part!r}")
    return "/CN=" + cn + "".join(f"/O={o}" for o in orgs)


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def _set_pdeathsig() -> None:  # pragma: no cover - runs in the child
    """Kill the child if the test process dies without cleaning up (Linux)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except Exception:
        pass


# --------------------------------------------------------------------------
# The control plane
# --------------------------------------------------------------------------


class ControlPlane:
    """etcd + kube-apiserver + kube-controller-manager on 127.0.0.1 with a
    throwaway PKI.

    Attributes (valid after start()):
        url         https://127.0.0.1:<port>
        kubeconfig  path of an admin kubeconfig (user "admin", group system:masters)
        ca_file     CA that signs the serving cert and all client certs
        etcd_url    http://127.0.0.1:<port>
        controller_manager_url  https://127.0.0.1:<port> (serves /healthz)
        bin_dir     directory of the binaries (helm is there too if built --with-helm)
        tmp_dir     temp dir with certs/, logs/, etcd data; removed by stop()
        start_seconds  wall time start() took (binaries already built)
        controller_manager_seconds  the part of it spent starting
                    kube-controller-manager until its /healthz answered
    """

    ADMIN_USER = "admin"
    ADMIN_GROUPS = ("system:masters",)
    # kube-controller-manager's client identity. With
    # --use-service-account-credentials=false every controller uses this one
    # identity, and the bootstrap ClusterRole system:kube-controller-manager
    # only lets it read (the per-controller roles are bound to service
    # accounts), so the garbage collector could not delete anything: hence
    # system:masters as well.
    CONTROLLER_MANAGER_USER = "system:kube-controller-manager"
    CONTROLLER_MANAGER_GROUPS = ("system:masters",)

    def __init__(
        self,
        bin_dir: str | os.PathLike | None = None,
        start_timeout: float | None = None,
        keep_tmp: bool | None = None,
        extra_apiserver_args: Sequence[str] = (),
        extra_controller_manager_args: Sequence[str] = (),
        lifecycle: bool = False,
    ) -> None:
        self.lifecycle = lifecycle
        self._bin_dir = Path(bin_dir) if bin_dir else None
        self.start_timeout = float(
            start_timeout or os.environ.get("CRONCTL_CONTROL_PLANE_TIMEOUT") or 90
        )
        self.keep_tmp = bool(os.environ.get("CRONCTL_CONTROL_PLANE_KEEP")) if keep_tmp is None else keep_tmp
        self.extra_apiserver_args = list(extra_apiserver_args)
        self.extra_controller_manager_args = list(extra_controller_manager_args)
        self.tmp_dir: Path | None = None
        self.url: str = ""
        self.etcd_url: str = ""
        self.controller_manager_url: str = ""
        self.kubeconfig: Path | None = None
        self.ca_file: Path | None = None
        self.start_seconds: float | None = None
        self.controller_manager_seconds: float | None = None
        self._etcd: subprocess.Popen | None = None
        self._apiserver: subprocess.Popen | None = None
        self._controller_manager: subprocess.Popen | None = None
        self._scheduler: subprocess.Popen | None = None
        self._kwok: subprocess.Popen | None = None
        self._logs: dict[str, Path] = {}
        self._log_files: list = []
        self._user_seq = 0

    # -- context manager ----------------------------------------------------

    def __enter__(self) -> "ControlPlane":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def bin_dir(self) -> Path:
        if self._bin_dir is None:
            self._bin_dir = ensure_binaries()
        return self._bin_dir

    @property
    def certs_dir(self) -> Path:
        assert self.tmp_dir is not None
        return self.tmp_dir / "certs"

    # -- lifecycle ----------------------------------------------------------

    def start(self) -> None:
        if self._apiserver is not None:
            raise ControlPlaneError("already started")
        bin_dir = self.bin_dir  # may build; not counted in start_seconds
        t0 = time.monotonic()
        self.tmp_dir = Path(tempfile.mkdtemp(prefix="cronctl-cp-"))
        atexit.register(self.stop)
        try:
            (self.tmp_dir / "logs").mkdir()
            self.certs_dir.mkdir()
            self._make_pki()
            deadline = t0 + self.start_timeout
            # A free port can be taken between probing and binding; retry then.
            for attempt in range(3):
                try:
                    self._start_etcd(bin_dir, deadline)
                    self._start_apiserver(bin_dir, deadline)
                    break
                except _PortInUse:
                    self._stop_processes()
                    if attempt == 2:
                        raise ControlPlaneError("could not bind free ports after 3 attempts")
            self.kubeconfig = self._write_kubeconfig(
                "admin.kubeconfig", self.certs_dir / "admin.crt", self.certs_dir / "admin.key"
            )
            self._wait_default_namespace(deadline)
            t_cm = time.monotonic()
            self._start_controller_manager(bin_dir, deadline)
            self.controller_manager_seconds = time.monotonic() - t_cm
            if self.lifecycle:
                self._start_nodes(bin_dir, deadline)
        except BaseException:
            self.stop()
            raise
        self.start_seconds = time.monotonic() - t0

    def stop(self) -> None:
        self._stop_processes()
        for f in self._log_files:
            try:
                f.close()
            except Exception:
                pass
        self._log_files.clear()
        if self.tmp_dir is not None:
            if self.keep_tmp:
                print(f"control plane: kept {self.tmp_dir}", file=sys.stderr)
            else:
                shutil.rmtree(self.tmp_dir, ignore_errors=True)
            self.tmp_dir = None
        try:
            atexit.unregister(self.stop)
        except Exception:
            pass

    def _stop_processes(self) -> None:
        # Clients first: the controller-manager, then the apiserver (so it
        # doesn't log storms about a vanished etcd), then etcd.
        for attr in ("_kwok", "_scheduler", "_controller_manager", "_apiserver", "_etcd"):
            proc: subprocess.Popen | None = getattr(self, attr)
            if proc is None:
                continue
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=10)
            setattr(self, attr, None)

    # -- PKI ----------------------------------------------------------------

    def _make_pki(self) -> None:
        d = self.certs_dir
        ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
        _openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "7",
                 "-subj", "/CN=cronctl-test-ca",
                 "-addext", "basicConstraints=critical,CA:TRUE",
                 "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature", cwd=d)
        self.ca_file = d / "ca.crt"
        (d / "serving.ext").write_text(
            "basicConstraints=CA:FALSE\n"
            "keyUsage=critical,digitalSignature,keyEncipherment\n"
            "extendedKeyUsage=serverAuth\n"
            "subjectAltName=IP:127.0.0.1,DNS:localhost,IP:10.0.0.1,"
            "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\n"
        )
        self._sign("apiserver", "/CN=kube-apiserver", "serving.ext")
        self._client_cert("admin", self.ADMIN_USER, self.ADMIN_GROUPS)
        self._client_cert("controller-manager", self.CONTROLLER_MANAGER_USER,
                          self.CONTROLLER_MANAGER_GROUPS)
        # kube-scheduler and kwok: as kube-controller-manager, system:masters (they are the cluster).
        self._client_cert("scheduler", "system:kube-scheduler", ("system:masters",))
        self._client_cert("kwok", "kwok", ("system:masters",))
        # Service-account token signing key pair.
        _openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "sa.key", cwd=d)
        _openssl("ec", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=d)

    def _sign(self, stem: str, subj: str, extfile: str) -> None:
        d = self.certs_dir
        _openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                 "-nodes", "-keyout", f"{stem}.key", "-out", f"{stem}.csr", "-subj", subj, cwd=d)
        _openssl("x509", "-req", "-in", f"{stem}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                 "-CAcreateserial", "-days", "7", "-sha256", "-extfile", extfile,
                 "-out", f"{stem}.crt", cwd=d)

    def _client_cert(self, stem: str, user: str, groups: Sequence[str]) -> None:
        ext = self.certs_dir / "client.ext"
        if not ext.exists():
            ext.write_text(
                "basicConstraints=CA:FALSE\n"
                "keyUsage=critical,digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=clientAuth\n"
            )
        self._sign(stem, _subject(user, groups), "client.ext")

    # -- processes ----------------------------------------------------------

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen:
        assert self.tmp_dir is not None
        log = self.tmp_dir / "logs" / f"{name}.log"
        self._logs[name] = log
        f = open(log, "ab")
        self._log_files.append(f)
        f.write(("$ " + " ".join(argv) + "\n").encode())
        f.flush()
        return subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT,
            cwd=self.tmp_dir, start_new_session=True,
            preexec_fn=_set_pdeathsig if sys.platform.startswith("linux") else None,
        )

    def log_tail(self, name: str, lines: int = 40) -> str:
        path = self._logs.get(name)
        if not path or not path.exists():
            return f"(no {name} log)"
        return _tail(path.read_text(errors="replace"), lines)

    def _fail(self, what: str) -> ControlPlaneError:
        parts = [what]
        for name in ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"):
            if name in self._logs:
                parts.append(f"--- last lines of {self._logs[name]} ---\n{self.log_tail(name)}")
        return ControlPlaneError("\n".join(parts))

    def _check_alive(self, name: str, proc: subprocess.Popen) -> None:
        if proc.poll() is not None:
            if "address already in use" in self.log_tail(name, 200):
                raise _PortInUse(name)
            raise self._fail(f"{name} exited with code {proc.returncode} during start-up")

    def _start_etcd(self, bin_dir: Path, deadline: float) -> None:
        assert self.tmp_dir is not None
        client, peer = _free_port(), _free_port()
        self.etcd_url = f"http://127.0.0.1:{client}"
        peer_url = f"http://127.0.0.1:{peer}"
        data_dir = self.tmp_dir / "etcd"
        shutil.rmtree(data_dir, ignore_errors=True)
        etcd = str(bin_dir / "etcd")
        argv = [
            etcd, "--name=default", f"--data-dir={data_dir}",
            f"--listen-client-urls={self.etcd_url}", f"--advertise-client-urls={self.etcd_url}",
            f"--listen-peer-urls={peer_url}", f"--initial-advertise-peer-urls={peer_url}",
            f"--initial-cluster=default={peer_url}",
            "--log-level=warn",
        ]
        help_text = subprocess.run([etcd, "--help"], capture_output=True, text=True).stdout
        if "--unsafe-no-fsync" in help_text:
            argv.append("--unsafe-no-fsync=true")
        self._etcd = self._spawn("etcd", argv)
        while True:
            self._check_alive("etcd", self._etcd)
            try:
                with urllib.request.urlopen(self.etcd_url + "/health", timeout=2) as r:
                    if b'"health":"true"' in r.read():
                        return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise self._fail(f"etcd not healthy at {self.etcd_url} within {self.start_timeout:.0f}s")
            time.sleep(0.1)

    def _start_apiserver(self, bin_dir: Path, deadline: float) -> None:
        assert self.tmp_dir is not None
        d = self.certs_dir
        port = _free_port()
        self.url = f"https://127.0.0.1:{port}"
        argv = [
            str(bin_dir / "kube-apiserver"),
            f"--etcd-servers={self.etcd_url}",
            f"--secure-port={port}",
            "--bind-address=127.0.0.1",
            # No kubelet or node network: advertise loopback and don't try to
            # maintain the kubernetes Service endpoints (Endpoints reject
            # loopback addresses).
            "--advertise-address=127.0.0.1",
            "--endpoint-reconciler-type=none",
            f"--cert-dir={self.tmp_dir / 'apiserver-certs'}",
            f"--tls-cert-file={d / 'apiserver.crt'}",
            f"--tls-private-key-file={d / 'apiserver.key'}",
            f"--client-ca-file={d / 'ca.crt'}",
            "--service-cluster-ip-range=10.0.0.0/24",
            "--allow-privileged=true",
            "--authorization-mode=Node,RBAC",
            f"--enable-admission-plugins={','.join(ADMISSION_PLUGINS)}",
            f"--admission-control-config-file={self._admission_config()}",
            # No controller-manager creates default ServiceAccounts.
            "--disable-admission-plugins=ServiceAccount",
            f"--service-account-issuer=https://127.0.0.1:{port}/",
            f"--service-account-key-file={d / 'sa.pub'}",
            f"--service-account-signing-key-file={d / 'sa.key'}",
            "--profiling=false",
            *self.extra_apiserver_args,
        ]
        self._apiserver_argv = argv
        self._apiserver = self._spawn("kube-apiserver", argv)
        self._wait_apiserver_ready(deadline)

    def _admission_config(self) -> Path:
        assert self.tmp_dir is not None
        path = self.tmp_dir / "admission.yaml"
        path.write_text(yaml.safe_dump(ADMISSION_CONFIG, sort_keys=False))
        return path

    def restart_apiserver(self, down_seconds: float, timeout: float = 60.0) -> float:
        """Kill kube-apiserver (SIGKILL, as a crash or an OOM kill does), start it again on the
        same port ``down_seconds`` later, and wait until it is ready; the seconds it was away.
        Call it on the thread that started the control plane: a child dies with the thread that
        started it (PR_SET_PDEATHSIG)."""
        assert self._apiserver is not None
        started = time.monotonic()
        self._apiserver.kill()
        self._apiserver.wait(timeout=30)
        time.sleep(down_seconds)
        self._apiserver = self._spawn("kube-apiserver", self._apiserver_argv)
        self._wait_apiserver_ready(time.monotonic() + timeout)
        return time.monotonic() - started

    def pause_etcd(self) -> None:
        """Stop etcd where it is (SIGSTOP): the API server's requests to it hang, as in a stall."""
        assert self._etcd is not None
        self._etcd.send_signal(signal.SIGSTOP)

    def resume_etcd(self) -> None:
        assert self._etcd is not None
        self._etcd.send_signal(signal.SIGCONT)

    def _wait_apiserver_ready(self, deadline: float) -> None:
        assert self._apiserver is not None
        ctx = self.ssl_context()
        last = ""
        while True:
            self._check_alive("kube-apiserver", self._apiserver)
            try:
                with urllib.request.urlopen(self.url + "/readyz", timeout=5, context=ctx) as r:
                    if r.status == 200:
                        return
            except urllib.error.HTTPError as e:
                last = f"HTTP {e.code}: {_tail(e.read().decode(errors='replace'), 10)}"
            except (urllib.error.URLError, OSError) as e:
                last = str(e)
            if time.monotonic() > deadline:
                raise self._fail(
                    f"kube-apiserver not ready at {self.url}/readyz within "
                    f"{self.start_timeout:.0f}s (last: {last})"
                )
            time.sleep(0.25)

    def _start_controller_manager(self, bin_dir: Path, deadline: float) -> None:
        """Start kube-controller-manager (after the apiserver is ready) and
        wait for its /healthz. A taken port restarts just this process."""
        assert self.tmp_dir is not None
        d = self.certs_dir
        kubeconfig = self._write_kubeconfig(
            "controller-manager.kubeconfig", d / "controller-manager.crt", d / "controller-manager.key",
            user=self.CONTROLLER_MANAGER_USER,
        )
        for attempt in range(3):
            port = _free_port()
            self.controller_manager_url = f"https://127.0.0.1:{port}"
            argv = [
                str(bin_dir / "kube-controller-manager"),
                f"--kubeconfig={kubeconfig}",
                f"--controllers={','.join(LIFECYCLE_CONTROLLERS if self.lifecycle else CONTROLLERS)}",
                "--leader-elect=false",
                "--use-service-account-credentials=false",
                # Serves only /healthz (and metrics) on loopback; the serving
                # cert is the apiserver's (signed by our CA, SAN 127.0.0.1).
                # /healthz is in --authorization-always-allow-paths, so no
                # delegated authn/authz kubeconfigs are needed.
                "--bind-address=127.0.0.1",
                f"--secure-port={port}",
                f"--cert-dir={self.tmp_dir / 'controller-manager-certs'}",
                f"--tls-cert-file={d / 'apiserver.crt'}",
                f"--tls-private-key-file={d / 'apiserver.key'}",
                "--profiling=false",
                *self.extra_controller_manager_args,
            ]
            self._controller_manager = self._spawn("kube-controller-manager", argv)
            try:
                self._wait_healthz("kube-controller-manager", self._controller_manager,
                                   self.controller_manager_url + "/healthz", deadline)
                return
            except _PortInUse:
                self._controller_manager.wait(timeout=10)
                self._controller_manager = None
        raise ControlPlaneError("kube-controller-manager could not bind a free port after 3 attempts")

    def _start_nodes(self, bin_dir: Path, deadline: float) -> None:
        """kube-scheduler, kwok with the tests' Stages, and the fake Nodes, until every Node is Ready."""
        d = self.certs_dir
        scheduler = self._write_kubeconfig("scheduler.kubeconfig", d / "scheduler.crt", d / "scheduler.key",
                                           user="system:kube-scheduler")
        self._scheduler = self._spawn("kube-scheduler", [
            str(bin_dir / "kube-scheduler"), f"--kubeconfig={scheduler}", "--leader-elect=false",
            "--secure-port=0", "--profiling=false"])
        kwok = self._write_kubeconfig("kwok.kubeconfig", d / "kwok.crt", d / "kwok.key", user="kwok")
        self._kwok = self._spawn("kwok", [
            str(bin_dir / "kwok"), f"--kubeconfig={kwok}", f"--config={KWOK_STAGES}",
            "--manage-all-nodes=false", "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
            "--cidr=10.0.0.0/24", "--node-ip=10.0.0.1"])
        for name in NODES:
            node = {"apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": name, "annotations": FAKE_NODE, "labels": {
                        "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "type": "kwok"}}}
            self._api("POST", "/api/v1/nodes", node)
        while True:
            for proc, name in ((self._scheduler, "kube-scheduler"), (self._kwok, "kwok")):
                assert proc is not None
                self._check_alive(name, proc)
            nodes = self._api("GET", "/api/v1/nodes")["items"]
            ready = [n["metadata"]["name"] for n in nodes if any(
                c.get("type") == "Ready" and c.get("status") == "True" for c in n.get("status", {}).get("conditions", []))]
            if sorted(ready) == sorted(NODES):
                # The API server taints a new Node not-ready (TaintNodesByCondition); the node
                # lifecycle controller, which does not run here, would lift it once Ready.
                for name in NODES:
                    self._api("PATCH", f"/api/v1/nodes/{name}", {"spec": {"taints": None}},
                              "application/merge-patch+json")
                return
            if time.monotonic() > deadline:
                raise self._fail(f"kwok did not make the Nodes Ready within {self.start_timeout:.0f}s (ready: {ready})")
            time.sleep(0.2)

    def _api(self, method: str, path: str, body: object = None, content_type: str = "application/json") -> dict:
        """One request to the API server as the admin (the control plane's own setup)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method,
                                         headers={"Content-Type": content_type})
        with urllib.request.urlopen(request, timeout=10, context=self.ssl_context()) as response:
            return json.loads(response.read())

    def _wait_healthz(self, name: str, proc: subprocess.Popen, url: str, deadline: float) -> None:
        ctx = ssl.create_default_context(cafile=str(self.ca_file))
        last = ""
        while True:
            self._check_alive(name, proc)
            try:
                with urllib.request.urlopen(url, timeout=5, context=ctx) as r:
                    if r.status == 200:
                        return
            except urllib.error.HTTPError as e:
                last = f"HTTP {e.code}: {_tail(e.read().decode(errors='replace'), 10)}"
            except (urllib.error.URLError, OSError) as e:
                last = str(e)
            if time.monotonic() > deadline:
                raise self._fail(f"{name} not healthy at {url} within {self.start_timeout:.0f}s (last: {last})")
            time.sleep(0.25)

    def _wait_default_namespace(self, deadline: float) -> None:
        # The bootstrap controller creates default/kube-system right after
        # readiness; tests commonly assume they exist.
        ctx = self.ssl_context()
        while True:
            try:
                with urllib.request.urlopen(self.url + "/api/v1/namespaces/default", timeout=5,
                                            context=ctx) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise self._fail("namespace 'default' did not appear")
            time.sleep(0.1)

    # -- client helpers -----------------------------------------------------

    def ssl_context(self, user: str = "admin") -> ssl.SSLContext:
        """An SSLContext trusting the CA and presenting ``user``'s client cert
        (``admin`` or a stem created by user_kubeconfig())."""
        assert self.ca_file is not None
        ctx = ssl.create_default_context(cafile=str(self.ca_file))
        ctx.load_cert_chain(str(self.certs_dir / f"{user}.crt"), str(self.certs_dir / f"{user}.key"))
        return ctx

    def _write_kubeconfig(self, filename: str, cert: Path, key: Path, user: str = "admin") -> Path:
        assert self.tmp_dir is not None and self.ca_file is not None
        cfg = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "cronctl-test", "cluster": {
                "server": self.url,
                "certificate-authority-data": _b64(self.ca_file),
            }}],
            "users": [{"name": user, "user": {
                "client-certificate-data": _b64(cert),
                "client-key-data": _b64(key),
            }}],
            "contexts": [{"name": f"{user}@cronctl-test", "context": {
                "cluster": "cronctl-test", "user": user, "namespace": "default",
            }}],
            "current-context": f"{user}@cronctl-test",
            "preferences": {},
        }
        path = self.tmp_dir / filename
        path.write_text(yaml.safe_dump(cfg, sort_keys=False))
        path.chmod(0o600)
        return path

    def user_kubeconfig(self, name: str, groups: Sequence[str] = ()) -> Path:
        """Write a kubeconfig for a client-cert user ``name`` in ``groups``.

        The user has no permissions beyond what RBAC grants to the name, the
        groups and system:authenticated (e.g. discovery). Returns its path.
        """
        if self.tmp_dir is None:
            raise ControlPlaneError("control plane is not running")
        self._user_seq += 1
        stem = f"user{self._user_seq}-" + re.sub(r"[^A-Za-z0-9_.-]", "_", name)
        self._client_cert(stem, name, groups)
        return self._write_kubeconfig(
            f"{stem}.kubeconfig", self.certs_dir / f"{stem}.crt", self.certs_dir / f"{stem}.key",
            user=name,
        )

    def env(self, **extra: str) -> dict[str, str]:
        """os.environ with KUBECONFIG pointing at the admin kubeconfig."""
        return {**os.environ, "KUBECONFIG": str(self.kubeconfig), **extra}


class _PortInUse(ControlPlaneError):
    pass
