"""Prometheus' text format read back: the samples of a /metrics page.
Shared by tests/e2e/test_tracekitd*.py and tests/systemd."""
import re

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$')


def samples(text):
    """{(name, frozenset of (label, value))): value}"""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, line
        labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


def value(s, name, **labels):
    return s.get((name, frozenset(labels.items())), 0.0)


def series(s, name):
    return {k[1]: v for k, v in s.items() if k[0] == name}
