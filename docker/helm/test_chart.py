"""Tests of the prw-relay Helm chart: helm lint, helm template of every value set in
prw-relay/ci/ validated strictly against Kubernetes schemas (kubernetes-validate), and what each set
renders. Run by docker/test-chart.sh, which installs helm and kubernetes-validate; needs the relay jar
(relay-server/target/prw-relay.jar) for the list of configuration keys.
"""

import os
import re
import subprocess
import sys
import unittest

import kubernetes_validate
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CHART = os.path.join(HERE, "prw-relay")
VALUE_SETS = ["default", "queue", "autoscaling", "secrets", "monitoring"]
JAR = os.path.join(ROOT, "relay-server", "target", "prw-relay.jar")

# The oldest Kubernetes the chart supports (autoscaling/v2 and policy/v1 are GA from 1.23; 1.25
# is the oldest schema kubernetes-validate 1.37 bundles) and the newest it bundles.
KUBERNETES_VERSIONS = ["1.25.0", "1.37.0"]
CRD_KINDS = {"ServiceMonitor", "PrometheusRule"}

# What the Secrets the secrets value set names hold in a cluster: none of it may appear in what the
# chart renders, and handing one to the chart as a literal must fail without echoing it.
SECRET_CONTENTS = {
    "relay-downstream": {"password": "dOwnstream-Pa55-7Qx"},
    "relay-ingress": {"tokens": "t0ken-for-team-a team-a", "password": "1ngress-Pa55-Zk3"},
    "relay-tls": {"tls.key": "-----BEGIN PRIVATE KEY-----MIIEvQ", "ca.crt": "ca-c3rt-bytes"},
}
SECRET_KEYS = [
    "relay.downstream.basic-auth.password",
    "relay.downstream.bearer-token",
    "relay.server.basic-auth.password",
    "relay.server.bearer-token",
]


def helm(*args, check=True):
    result = subprocess.run(["helm", *args], capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError("helm %s failed:\n%s" % (" ".join(args), result.stderr))
    return result


def render(value_set=None, *sets):
    args = ["template", "relay", CHART, "--namespace", "monitoring"]
    if value_set:
        args += ["-f", os.path.join(CHART, "ci", value_set + "-values.yaml")]
    for s in sets:
        args += ["--set", s]
    return helm(*args).stdout


def documents(text):
    return [d for d in yaml.safe_load_all(text) if d]


def relay_keys():
    """Every configuration key of the relay with its environment variable, from --help."""
    out = subprocess.run(
        ["java", "-jar", JAR, "--help"], capture_output=True, text=True, check=True
    ).stdout
    return dict(re.findall(r"^(relay\.[a-z0-9.-]+) \((RELAY_[A-Z0-9_]+)\)$", out, re.M))


def properties(docs):
    config = one(docs, "ConfigMap")["data"]["relay.properties"]
    pairs = {}
    for line in config.splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            pairs[key] = value
    return pairs


def one(docs, kind):
    found = [d for d in docs if d["kind"] == kind]
    if len(found) != 1:
        raise AssertionError("expected one %s, found %d" % (kind, len(found)))
    return found[0]


def workload(docs):
    found = [d for d in docs if d["kind"] in ("Deployment", "StatefulSet")]
    if len(found) != 1:
        raise AssertionError("expected one workload, found %s" % [d["kind"] for d in found])
    return found[0]


def seconds(duration):
    number, unit = re.fullmatch(r"(\d+)(ms|s|m|h)", duration).groups()
    return -(-int(number) * {"ms": 1, "s": 1000, "m": 60000, "h": 3600000}[unit] // 1000)


class Lint(unittest.TestCase):
    def test_helm_lint_accepts_every_value_set(self):
        for value_set in VALUE_SETS:
            with self.subTest(value_set):
                values = os.path.join(CHART, "ci", value_set + "-values.yaml")
                out = helm("lint", "--strict", CHART, "-f", values).stdout
                self.assertIn("0 chart(s) failed", out)


class EveryValueSet(unittest.TestCase):
    """What must hold whatever the values: valid objects, safe pods, probes and resources."""

    @classmethod
    def setUpClass(cls):
        cls.rendered = {v: render(v) for v in VALUE_SETS}
        cls.keys = relay_keys()

    def test_every_object_is_valid_for_kubernetes(self):
        for value_set, text in self.rendered.items():
            for doc in documents(text):
                if doc["kind"] in CRD_KINDS:
                    continue
                for version in KUBERNETES_VERSIONS:
                    with self.subTest(value_set=value_set, kind=doc["kind"], version=version):
                        kubernetes_validate.validate(doc, version, strict=True)

    def test_only_known_kinds_are_rendered(self):
        known = {"ConfigMap", "Service", "ServiceAccount", "Deployment", "StatefulSet",
                 "PodDisruptionBudget", "HorizontalPodAutoscaler"} | CRD_KINDS
        for value_set, text in self.rendered.items():
            for doc in documents(text):
                self.assertIn(doc["kind"], known, value_set)

    def test_every_container_has_probes_resources_and_a_locked_down_context(self):
        for value_set, text in self.rendered.items():
            with self.subTest(value_set):
                pod = workload(documents(text))["spec"]["template"]["spec"]
                self.assertTrue(pod["securityContext"]["runAsNonRoot"])
                self.assertEqual(65532, pod["securityContext"]["runAsUser"])
                self.assertFalse(pod["automountServiceAccountToken"])
                for c in pod["containers"]:
                    for probe, path in (("readinessProbe", "/-/ready"),
                                        ("livenessProbe", "/-/healthy"),
                                        ("startupProbe", "/-/ready")):
                        self.assertEqual(path, c[probe]["httpGet"]["path"], probe)
                        self.assertEqual("http", c[probe]["httpGet"]["port"], probe)
                    self.assertIn("memory", c["resources"]["limits"])
                    self.assertIn("cpu", c["resources"]["requests"])
                    self.assertTrue(c["securityContext"]["readOnlyRootFilesystem"])
                    self.assertFalse(c["securityContext"]["allowPrivilegeEscalation"])
                    self.assertEqual(["ALL"], c["securityContext"]["capabilities"]["drop"])
                    mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
                    self.assertEqual("tmp", mounts["/tmp"], "a writable /tmp")

    def test_shutdown_pauses_then_drains_within_the_grace_period(self):
        for value_set, text in self.rendered.items():
            with self.subTest(value_set):
                docs = documents(text)
                pod = workload(docs)["spec"]["template"]["spec"]
                command = pod["containers"][0]["lifecycle"]["preStop"]["exec"]["command"]
                self.assertEqual("sleep", command[0])
                pause = int(command[1])
                self.assertGreaterEqual(pause, 5)
                timeout = properties(docs).get("relay.downstream.timeout", "10s")
                drain = seconds(timeout) + 1
                self.assertGreater(pod["terminationGracePeriodSeconds"], pause + drain)

    def test_replicas_are_spread_over_nodes(self):
        for value_set, text in self.rendered.items():
            with self.subTest(value_set):
                pod = workload(documents(text))["spec"]["template"]["spec"]
                terms = pod["affinity"]["podAntiAffinity"]
                term = terms["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"]
                self.assertEqual("kubernetes.io/hostname", term["topologyKey"])
                self.assertEqual(
                    workload(documents(text))["spec"]["selector"]["matchLabels"],
                    term["labelSelector"]["matchLabels"])

    def test_the_configuration_uses_only_keys_the_relay_knows(self):
        for value_set, text in self.rendered.items():
            with self.subTest(value_set):
                docs = documents(text)
                for key in properties(docs):
                    self.assertIn(key, self.keys, "relay.properties")
                env = workload(docs)["spec"]["template"]["spec"]["containers"][0]["env"]
                for e in env:
                    if e["name"].startswith("RELAY_"):
                        self.assertIn(e["name"], self.keys.values())

    def test_the_pods_roll_when_the_configuration_changes(self):
        before = workload(documents(self.rendered["default"]))
        after = workload(documents(render("default", "tenant.labels=team")))
        annotation = "checksum/config"
        self.assertNotEqual(
            before["spec"]["template"]["metadata"]["annotations"][annotation],
            after["spec"]["template"]["metadata"]["annotations"][annotation])

    def test_the_service_routes_to_the_pods_port(self):
        for value_set, text in self.rendered.items():
            with self.subTest(value_set):
                docs = documents(text)
                services = [d for d in docs if d["kind"] == "Service"]
                pod = workload(docs)["spec"]["template"]
                for s in services:
                    for k, v in s["spec"]["selector"].items():
                        self.assertEqual(v, pod["metadata"]["labels"][k])
                    ports = {p["name"] for p in pod["spec"]["containers"][0]["ports"]}
                    for p in s["spec"]["ports"]:
                        self.assertIn(p["targetPort"], ports)


class ValueSets(unittest.TestCase):
    """What each value set is for."""

    def test_default_is_a_deployment_of_two_without_volumes_or_autoscaling(self):
        docs = documents(render("default"))
        w = workload(docs)
        self.assertEqual("Deployment", w["kind"])
        self.assertEqual(2, w["spec"]["replicas"])
        self.assertNotIn("volumeClaimTemplates", w["spec"])
        kinds = {d["kind"] for d in docs}
        self.assertIn("PodDisruptionBudget", kinds)
        self.assertFalse(kinds & ({"HorizontalPodAutoscaler", "StatefulSet"} | CRD_KINDS))
        self.assertEqual("sync", properties(docs)["relay.delivery.mode"])

    def test_queue_is_a_statefulset_with_a_queue_volume_per_pod(self):
        docs = documents(render("queue"))
        w = workload(docs)
        self.assertEqual("StatefulSet", w["kind"])
        self.assertEqual(3, w["spec"]["replicas"])
        claims = w["spec"]["volumeClaimTemplates"]
        self.assertEqual(["queue"], [c["metadata"]["name"] for c in claims])
        self.assertEqual("20Gi", claims[0]["spec"]["resources"]["requests"]["storage"])
        self.assertEqual("fast-local", claims[0]["spec"]["storageClassName"])
        mounts = {m["name"]: m["mountPath"]
                  for m in w["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]}
        config = properties(docs)
        self.assertEqual(config["relay.delivery.queue.dir"], mounts["queue"])
        self.assertEqual("queue", config["relay.delivery.mode"])
        self.assertEqual(str(20 * 2**30 * 8 // 10), config["relay.delivery.queue.max-bytes"])
        self.assertEqual("2h", config["relay.delivery.queue.max-age"])
        headless = [d for d in docs if d["kind"] == "Service" and d["spec"].get("clusterIP") == "None"]
        self.assertEqual([w["spec"]["serviceName"]], [h["metadata"]["name"] for h in headless])
        self.assertEqual(65532, w["spec"]["template"]["spec"]["securityContext"]["fsGroup"])

    def test_autoscaling_scales_the_deployment_on_cpu(self):
        docs = documents(render("autoscaling"))
        w = workload(docs)
        hpa = one(docs, "HorizontalPodAutoscaler")
        self.assertEqual("autoscaling/v2", hpa["apiVersion"])
        self.assertEqual({"apiVersion": "apps/v1", "kind": "Deployment",
                          "name": w["metadata"]["name"]}, hpa["spec"]["scaleTargetRef"])
        self.assertEqual((3, 12), (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]))
        metric = hpa["spec"]["metrics"][0]["resource"]
        self.assertEqual(("cpu", 60), (metric["name"], metric["target"]["averageUtilization"]))
        self.assertNotIn("replicas", w["spec"], "the autoscaler owns the replica count")

    def test_secrets_are_referenced_never_rendered(self):
        text = render("secrets")
        docs = documents(text)
        for secret in SECRET_CONTENTS.values():
            for value in secret.values():
                self.assertNotIn(value, text)
        pod = workload(docs)["spec"]["template"]["spec"]
        env = {e["name"]: e for e in pod["containers"][0]["env"]}
        self.assertEqual({"name": "relay-downstream", "key": "password"},
                         env["RELAY_DOWNSTREAM_BASIC_AUTH_PASSWORD"]["valueFrom"]["secretKeyRef"])
        for e in env.values():
            if e["name"] in ("RELAY_DOWNSTREAM_BASIC_AUTH_PASSWORD", "RELAY_DOWNSTREAM_BEARER_TOKEN"):
                self.assertNotIn("value", e)
        volumes = {v["name"]: v for v in pod["volumes"]}
        self.assertEqual("relay-ingress", volumes["ingress-auth"]["secret"]["secretName"])
        self.assertEqual("relay-tls", volumes["tls"]["secret"]["secretName"])
        config = properties(docs)
        self.assertEqual("/etc/prw-relay/ingress-auth/tokens", config["relay.server.bearer-token-file"])
        self.assertEqual("/etc/prw-relay/ingress-auth/password",
                         config["relay.server.basic-auth.password-file"])
        self.assertEqual("/etc/prw-relay/tls/tls.crt", config["relay.server.tls.cert-file"])
        self.assertEqual("/etc/prw-relay/tls/ca.crt", config["relay.server.tls.client-ca-file"])
        self.assertEqual("optional", config["relay.server.tls.client-auth"])
        for key in SECRET_KEYS:
            self.assertNotIn(key, config)
        probe = pod["containers"][0]["readinessProbe"]["httpGet"]
        self.assertEqual("HTTPS", probe["scheme"])

    def test_a_secret_given_as_a_literal_is_refused_without_being_echoed(self):
        literal = SECRET_CONTENTS["relay-ingress"]["password"]
        for key in SECRET_KEYS:
            with self.subTest(key):
                escaped = key.replace(".", "\\.")
                result = helm("template", "relay", CHART, "--set",
                              "config.%s=%s" % (escaped, literal), check=False)
                self.assertNotEqual(0, result.returncode)
                self.assertIn("config.%s holds a secret" % key, result.stderr)
                self.assertNotIn(literal, result.stderr + result.stdout)

    def test_monitoring_renders_a_servicemonitor_and_the_alert_rules_of_alerts_yml(self):
        docs = documents(render("monitoring"))
        monitor = one(docs, "ServiceMonitor")
        self.assertEqual("monitoring.coreos.com/v1", monitor["apiVersion"])
        self.assertEqual("kube-prometheus-stack", monitor["metadata"]["labels"]["release"])
        service = [d for d in docs if d["kind"] == "Service"][0]
        for k, v in monitor["spec"]["selector"]["matchLabels"].items():
            self.assertEqual(v, service["metadata"]["labels"][k])
        [endpoint] = monitor["spec"]["endpoints"]
        self.assertIn(endpoint["port"], [p["name"] for p in service["spec"]["ports"]])
        self.assertEqual(("/metrics", "15s"), (endpoint["path"], endpoint["interval"]))
        self.assertIn({"action": "replace", "targetLabel": "job", "replacement": "prw-relay"},
                      endpoint["relabelings"])
        self.assertEqual({"endpoints", "selector"}, set(monitor["spec"]))

        rule = one(docs, "PrometheusRule")
        self.assertEqual("monitoring.coreos.com/v1", rule["apiVersion"])
        self.assertEqual({"groups"}, set(rule["spec"]))
        with open(os.path.join(ROOT, "docker", "alerts.yml")) as f:
            alerts = yaml.safe_load(f)
        self.assertEqual(alerts["groups"], rule["spec"]["groups"],
                         "the PrometheusRule carries docker/alerts.yml unchanged")
        for group in rule["spec"]["groups"]:
            for r in group["rules"]:
                self.assertEqual({"alert", "expr", "labels", "annotations"} | ({"for"} & set(r)),
                                 set(r))
        self.assertIn('job="prw-relay"', alerts["groups"][0]["rules"][0]["expr"])

    def test_the_chart_states_its_license(self):
        with open(os.path.join(CHART, "Chart.yaml")) as f:
            chart = yaml.safe_load(f)
        self.assertEqual("Apache-2.0", chart["annotations"]["artifacthub.io/license"])

    def test_the_chart_reads_the_one_alerts_file(self):
        link = os.path.join(CHART, "files", "alerts.yml")
        self.assertTrue(os.path.islink(link), "files/alerts.yml is a link, not a copy")
        self.assertEqual(os.path.join(ROOT, "docker", "alerts.yml"), os.path.realpath(link))


class Refusals(unittest.TestCase):
    """Values that cannot work fail at render time, naming the value."""

    def refused(self, message, *sets):
        args = ["template", "relay", CHART]
        for s in sets:
            args += ["--set", s]
        result = helm(*args, check=False)
        self.assertNotEqual(0, result.returncode, sets)
        self.assertIn(message, result.stderr)

    def test_autoscaling_in_queue_mode(self):
        self.refused("autoscaling.enabled works in sync mode only",
                     "delivery.mode=queue", "autoscaling.enabled=true")

    def test_a_grace_period_shorter_than_pause_and_drain(self):
        self.refused("terminationGracePeriodSeconds (20) must be longer than preStopSleepSeconds (10)",
                     "terminationGracePeriodSeconds=20")
        self.refused("must be longer", "config.relay\\.downstream\\.timeout=30s")

    def test_no_memory_limit(self):
        self.refused("resources.limits.memory is required", "resources.limits=null")

    def test_an_unknown_mode(self):
        self.refused('delivery.mode "async" must be sync or queue', "delivery.mode=async")

    def test_a_key_the_chart_owns(self):
        self.refused("config.relay.delivery.mode is set by delivery.mode",
                     "config.relay\\.delivery\\.mode=queue")
        self.refused("config.relay.server.port is set by the chart",
                     "config.relay\\.server\\.port=9090")

    def test_a_key_that_is_not_the_relays(self):
        self.refused("config.server.port: only relay.* keys", "config.server\\.port=1")


if __name__ == "__main__":
    result = unittest.main(
        exit=False, testRunner=unittest.TextTestRunner(stream=sys.stdout)).result
    failed = len(result.failures) + len(result.errors)
    print("chart: %d passed, %d failed" % (result.testsRun - failed, failed))
    sys.exit(1 if failed else 0)
