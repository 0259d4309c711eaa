"""Checks docker/compose.yaml without running it (no images can be pulled where CI runs): every file
it mounts or builds from exists, and the ports, paths and URLs of its services agree with each other
and with the relay's configuration keys (from `java -jar relay-server/target/prw-relay.jar --help`).
Run from anywhere: python3 docker/test_compose.py
"""

import json
import os
import re
import subprocess
import sys
import unittest
from urllib.parse import urlparse

import yaml

DOCKER = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(DOCKER)
JAR = os.path.join(ROOT, "relay-server", "target", "prw-relay.jar")


def load(path):
    with open(path) as f:
        return yaml.safe_load(f)


def relay_keys():
    """Every relay key: its environment variable and default, from --help."""
    out = subprocess.run(
        ["java", "-jar", JAR, "--help"], capture_output=True, text=True, check=True
    ).stdout
    keys = {}
    for key, env, default in re.findall(
        r"^(relay\.[a-z0-9.-]+) \((RELAY_[A-Z0-9_]+)\)\n    default: ?(.*)$", out, re.M
    ):
        keys[env] = (key, default)
    return keys


class Compose(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.compose = load(os.path.join(DOCKER, "compose.yaml"))
        cls.services = cls.compose["services"]
        cls.keys = relay_keys()
        cls.cortex = load(os.path.join(DOCKER, "cortex.yaml"))
        cls.prometheus = load(cls.mounted("prometheus", "/etc/prometheus/prometheus.yml"))

    @classmethod
    def mounted(cls, service, target):
        """The file of this repository mounted at target in service."""
        for volume in cls.compose["services"][service].get("volumes", []):
            source, _, rest = volume.partition(":")
            if rest.split(":")[0] == target and source.startswith("."):
                return os.path.normpath(os.path.join(DOCKER, source))
        raise AssertionError("%s mounts nothing at %s" % (service, target))

    def container_ports(self, service):
        return {int(p.split(":")[-1]) for p in self.services[service].get("ports", [])}

    def relay_env(self):
        return self.services["relay"]["environment"]

    def relay_port(self):
        env = self.relay_env()
        return int(env.get("RELAY_SERVER_PORT", self.keys["RELAY_SERVER_PORT"][1]))

    def cortex_port(self):
        return self.cortex["server"]["http_listen_port"]

    def test_every_service_is_there(self):
        self.assertEqual({"relay", "cortex", "prometheus", "grafana"}, set(self.services))

    def test_every_mounted_or_built_file_exists(self):
        for name, service in self.services.items():
            for volume in service.get("volumes", []):
                source = volume.split(":")[0]
                if source.startswith("."):
                    with self.subTest(service=name, volume=volume):
                        self.assertTrue(os.path.exists(os.path.join(DOCKER, source)), volume)
                else:
                    self.assertIn(source, self.compose.get("volumes", {}), "a named volume")
        build = self.services["relay"]["build"]
        context = os.path.normpath(os.path.join(DOCKER, build["context"]))
        self.assertEqual(ROOT, context, "the image is built from the repository root")
        self.assertTrue(os.path.isfile(os.path.join(context, build["dockerfile"])))

    def test_the_relay_is_configured_with_keys_it_knows(self):
        for env in self.relay_env():
            self.assertIn(env, self.keys, "a relay key's environment variable")
        self.assertIn(self.relay_port(), self.container_ports("relay"))

    def test_the_relay_pushes_to_cortex_with_auth_on(self):
        url = urlparse(self.relay_env()["RELAY_DOWNSTREAM_URL"])
        self.assertEqual(("http", "cortex", self.cortex_port(), "/api/v1/push"),
                         (url.scheme, url.hostname, url.port, url.path))
        self.assertIs(True, self.cortex["auth_enabled"], "Cortex needs X-Scope-OrgID")
        tenant_header = self.keys["RELAY_DOWNSTREAM_TENANT_HEADER"][1]
        self.assertNotIn("RELAY_DOWNSTREAM_TENANT_HEADER", self.relay_env())
        self.assertEqual("X-Scope-OrgID", tenant_header)
        self.assertIn(self.cortex_port(), self.container_ports("cortex"))

    def test_cortex_reads_the_mounted_config_and_keeps_its_data_on_the_volume(self):
        command = self.services["cortex"]["command"]
        target = [c.split("=", 1)[1] for c in command if c.startswith("-config.file=")][0]
        self.assertEqual(os.path.join(DOCKER, "cortex.yaml"), self.mounted("cortex", target))
        data = [v.split(":")[1] for v in self.services["cortex"]["volumes"]
                if v.startswith("cortex-data:")][0]
        for path in (self.cortex["blocks_storage"]["filesystem"]["dir"],
                     self.cortex["blocks_storage"]["tsdb"]["dir"],
                     self.cortex["compactor"]["data_dir"]):
            self.assertTrue(path.startswith(data + "/"), path)

    def test_prometheus_writes_through_the_relay_spreading_series_over_tenants(self):
        command = self.services["prometheus"]["command"]
        self.assertIn("--config.file=/etc/prometheus/prometheus.yml", command)
        [remote] = self.prometheus["remote_write"]
        url = urlparse(remote["url"])
        self.assertEqual(("relay", self.relay_port()), (url.hostname, url.port))
        self.assertIn(url.path, ["/api/v1/write", "/api/v1/push", "/push"])
        tenant_labels = self.relay_env().get(
            "RELAY_TENANT_LABELS", self.keys["RELAY_TENANT_LABELS"][1]).split(",")
        targets = {r.get("target_label") for r in remote["write_relabel_configs"]}
        self.assertIn(tenant_labels[0], targets, "the sender sets the relay's tenant label")
        modulus = [r["modulus"] for r in remote["write_relabel_configs"] if "modulus" in r][0]
        self.assertGreater(modulus, 1, "series go to several tenants")

    def test_prometheus_scrapes_the_relay_as_the_rules_and_the_dashboard_expect(self):
        jobs = {j["job_name"]: j["static_configs"][0]["targets"]
                for j in self.prometheus["scrape_configs"]}
        self.assertEqual(["relay:%d" % self.relay_port()], jobs["prw-relay"])
        self.assertEqual(["cortex:%d" % self.cortex_port()], jobs["cortex"])
        with open(os.path.join(DOCKER, "alerts.yml")) as f:
            self.assertIn('job="prw-relay"', f.read())

    def test_grafana_has_the_dashboard_and_data_sources_for_the_relay_and_cortex(self):
        provisioning = self.mounted("grafana", "/etc/grafana/provisioning")
        sources = load(os.path.join(provisioning, "datasources", "datasources.yaml"))
        by_url = {urlparse(s["url"]).hostname: s for s in sources["datasources"]}
        prometheus = by_url["prometheus"]
        self.assertEqual("prometheus", prometheus["type"])
        self.assertTrue(prometheus["isDefault"], "the dashboard's default data source")
        self.assertIn(urlparse(prometheus["url"]).port, self.container_ports("prometheus"))
        cortex = by_url["cortex"]
        self.assertEqual(("prometheus", self.cortex_port(), "/prometheus"),
                         (cortex["type"], urlparse(cortex["url"]).port,
                          urlparse(cortex["url"]).path))
        self.assertEqual("X-Scope-OrgID", cortex["jsonData"]["httpHeaderName1"])
        tenants = cortex["secureJsonData"]["httpHeaderValue1"]
        if "|" in tenants:
            self.assertTrue(self.cortex["tenant_federation"]["enabled"])

        providers = load(os.path.join(provisioning, "dashboards", "dashboards.yaml"))
        folder = providers["providers"][0]["options"]["path"]
        dashboard_target = folder + "/prw-relay-dashboard.json"
        self.assertEqual(os.path.join(DOCKER, "grafana", "prw-relay-dashboard.json"),
                         self.mounted("grafana", dashboard_target))
        with open(self.mounted("grafana", dashboard_target)) as f:
            dashboard = json.load(f)
        [variable] = [v for v in dashboard["templating"]["list"] if v["type"] == "datasource"]
        self.assertEqual(prometheus["type"], variable["query"])


if __name__ == "__main__":
    result = unittest.main(
        exit=False, testRunner=unittest.TextTestRunner(stream=sys.stdout)).result
    failed = len(result.failures) + len(result.errors)
    print("compose: %d passed, %d failed" % (result.testsRun - failed, failed))
    sys.exit(1 if failed else 0)
