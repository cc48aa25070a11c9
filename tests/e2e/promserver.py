"""Debian's Prometheus server, scraping one tracekitd for a test: shared
by test_tracekitd.py and test_tracekitd_web.py."""
import socket
import subprocess


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PrometheusServer:
    """prom scraping 127.0.0.1:target every second (job "tracekit"; job:
    more YAML of its scrape config, indented four spaces), its query API
    on port; err: its stderr, once stopped."""

    def __init__(self, prom, tmp_path, target, job=""):
        self.port = free_port()
        self.err = ""
        config = tmp_path / "prometheus.yml"
        config.write_text("global:\n  scrape_interval: 1s\n"
                          "scrape_configs:\n  - job_name: tracekit\n" + job +
                          f"    static_configs:\n      - targets: ['127.0.0.1:{target}']\n")
        self.proc = subprocess.Popen([prom, f"--config.file={config}",
                                      f"--storage.tsdb.path={tmp_path}/data",
                                      f"--web.listen-address=127.0.0.1:{self.port}"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.terminate()
        self.err = self.proc.communicate(timeout=30)[1].decode(errors="replace")[-2000:]
