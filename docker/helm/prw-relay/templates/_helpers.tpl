{{/* The chart's name, or nameOverride. */}}
{{- define "prw-relay.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's object name: fullnameOverride, or <release>-<name> unless the release already holds the name. */}}
{{- define "prw-relay.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "prw-relay.selectorLabels" -}}
app.kubernetes.io/name: {{ include "prw-relay.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "prw-relay.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "prw-relay.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "prw-relay.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "prw-relay.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Whole seconds (rounded up) of a relay duration: 500ms, 10s, 5m, 1h. */}}
{{- define "prw-relay.seconds" -}}
{{- $d := toString . }}
{{- if regexMatch "^[0-9]+ms$" $d }}
{{- div (add (trimSuffix "ms" $d | atoi) 999) 1000 }}
{{- else if regexMatch "^[0-9]+s$" $d }}
{{- trimSuffix "s" $d | atoi }}
{{- else if regexMatch "^[0-9]+m$" $d }}
{{- mul (trimSuffix "m" $d | atoi) 60 }}
{{- else if regexMatch "^[0-9]+h$" $d }}
{{- mul (trimSuffix "h" $d | atoi) 3600 }}
{{- else }}
{{- fail (printf "%q is not a duration like 500ms, 10s, 5m or 1h" $d) }}
{{- end }}
{{- end }}

{{/* Bytes of a Kubernetes quantity in Mi, Gi or Ti. */}}
{{- define "prw-relay.bytes" -}}
{{- $q := toString . }}
{{- if regexMatch "^[0-9]+Mi$" $q }}
{{- mul (trimSuffix "Mi" $q | atoi) 1048576 }}
{{- else if regexMatch "^[0-9]+Gi$" $q }}
{{- mul (trimSuffix "Gi" $q | atoi) 1073741824 }}
{{- else if regexMatch "^[0-9]+Ti$" $q }}
{{- mul (trimSuffix "Ti" $q | atoi) 1099511627776 }}
{{- else }}
{{- fail (printf "delivery.queue.size %q: give it in Mi, Gi or Ti, or set delivery.queue.maxBytes" $q) }}
{{- end }}
{{- end }}

{{- define "prw-relay.queueMode" -}}
{{- if eq .Values.delivery.mode "queue" }}true{{ end }}
{{- end }}

{{- define "prw-relay.tlsEnabled" -}}
{{- if .Values.tls.existingSecret }}true{{ end }}
{{- end }}

{{/*
The relay's settings as relay.* keys: those the chart derives from its values, then `config`.
Fails, naming the value, for a key of `config` the chart owns or that holds a secret.
*/}}
{{- define "prw-relay.settings" -}}
{{- $v := .Values }}
{{- if not (has $v.delivery.mode (list "sync" "queue")) }}
{{- fail (printf "delivery.mode %q must be sync or queue" $v.delivery.mode) }}
{{- end }}
{{- $s := dict
  "relay.server.host" "0.0.0.0"
  "relay.server.port" "8080"
  "relay.downstream.url" (required "downstream.url is required: the Cortex/Mimir push URL" $v.downstream.url)
  "relay.tenant.labels" $v.tenant.labels
  "relay.delivery.mode" $v.delivery.mode }}
{{- $owned := dict
  "relay.server.host" "the chart (the pod listens on every address)"
  "relay.server.port" "the chart (8080; service.port sets the Service's)"
  "relay.downstream.url" "downstream.url"
  "relay.tenant.labels" "tenant.labels"
  "relay.delivery.mode" "delivery.mode"
  "relay.delivery.queue.dir" "the chart (the queue volume)"
  "relay.delivery.queue.max-bytes" "delivery.queue.maxBytes"
  "relay.downstream.basic-auth.username" "downstream.auth.username"
  "relay.server.bearer-token-file" "ingressAuth.bearerTokensKey"
  "relay.server.basic-auth.username" "ingressAuth.basicAuth.username"
  "relay.server.basic-auth.password-file" "ingressAuth.basicAuth.passwordKey"
  "relay.server.basic-auth.tenants" "ingressAuth.basicAuth.tenants"
  "relay.server.auth.protect-metrics" "ingressAuth.protectMetrics"
  "relay.server.tls.cert-file" "tls.existingSecret"
  "relay.server.tls.key-file" "tls.existingSecret"
  "relay.server.tls.client-ca-file" "tls.clientCaKey"
  "relay.server.tls.client-auth" "tls.clientAuth" }}
{{- $secret := list
  "relay.downstream.basic-auth.password" "relay.downstream.bearer-token"
  "relay.server.basic-auth.password" "relay.server.bearer-token" }}
{{- if eq $v.delivery.mode "queue" }}
{{- $_ := set $s "relay.delivery.queue.dir" "/var/lib/prw-relay/queue" }}
{{- $max := $v.delivery.queue.maxBytes | default (div (mul (include "prw-relay.bytes" $v.delivery.queue.size | atoi) 8) 10) }}
{{- $_ := set $s "relay.delivery.queue.max-bytes" (toString $max) }}
{{- end }}
{{- with $v.downstream.auth }}
{{- if and (or .bearerTokenKey .passwordKey) (not .existingSecret) }}
{{- fail "downstream.auth.bearerTokenKey/passwordKey name entries of downstream.auth.existingSecret: set it" }}
{{- end }}
{{- if and .bearerTokenKey .passwordKey }}
{{- fail "downstream.auth: give bearerTokenKey or username + passwordKey, not both" }}
{{- end }}
{{- if and .username (not .passwordKey) }}
{{- fail "downstream.auth.username needs downstream.auth.passwordKey (an entry of downstream.auth.existingSecret)" }}
{{- end }}
{{- if .username }}
{{- $_ := set $s "relay.downstream.basic-auth.username" .username }}
{{- end }}
{{- end }}
{{- with $v.ingressAuth }}
{{- if and .existingSecret (not (or .bearerTokensKey .basicAuth.passwordKey)) }}
{{- fail "ingressAuth.existingSecret needs ingressAuth.bearerTokensKey and/or ingressAuth.basicAuth.passwordKey" }}
{{- end }}
{{- if and (or .bearerTokensKey .basicAuth.passwordKey) (not .existingSecret) }}
{{- fail "ingressAuth.bearerTokensKey/basicAuth.passwordKey name entries of ingressAuth.existingSecret: set it" }}
{{- end }}
{{- if .bearerTokensKey }}
{{- $_ := set $s "relay.server.bearer-token-file" (printf "/etc/prw-relay/ingress-auth/%s" .bearerTokensKey) }}
{{- end }}
{{- if .basicAuth.passwordKey }}
{{- $_ := set $s "relay.server.basic-auth.username" (required "ingressAuth.basicAuth.username is required with basicAuth.passwordKey" .basicAuth.username) }}
{{- $_ := set $s "relay.server.basic-auth.password-file" (printf "/etc/prw-relay/ingress-auth/%s" .basicAuth.passwordKey) }}
{{- if .basicAuth.tenants }}
{{- $_ := set $s "relay.server.basic-auth.tenants" .basicAuth.tenants }}
{{- end }}
{{- end }}
{{- if .protectMetrics }}
{{- $_ := set $s "relay.server.auth.protect-metrics" "true" }}
{{- end }}
{{- end }}
{{- with $v.tls }}
{{- if not (has .clientAuth (list "none" "optional" "require")) }}
{{- fail (printf "tls.clientAuth %q must be none, optional or require" .clientAuth) }}
{{- end }}
{{- if .existingSecret }}
{{- $_ := set $s "relay.server.tls.cert-file" "/etc/prw-relay/tls/tls.crt" }}
{{- $_ := set $s "relay.server.tls.key-file" "/etc/prw-relay/tls/tls.key" }}
{{- if .clientCaKey }}
{{- $_ := set $s "relay.server.tls.client-ca-file" (printf "/etc/prw-relay/tls/%s" .clientCaKey) }}
{{- end }}
{{- if ne .clientAuth "none" }}
{{- if not .clientCaKey }}
{{- fail "tls.clientAuth optional/require needs tls.clientCaKey" }}
{{- end }}
{{- $_ := set $s "relay.server.tls.client-auth" .clientAuth }}
{{- end }}
{{- else if or .clientCaKey (ne .clientAuth "none") }}
{{- fail "tls.clientCaKey and tls.clientAuth need tls.existingSecret" }}
{{- end }}
{{- end }}
{{- range $key, $value := $v.config }}
{{- if not (regexMatch "^relay\\.[a-z0-9.-]+$" $key) }}
{{- fail (printf "config.%s: only relay.* keys (README, \"Configuration\")" $key) }}
{{- end }}
{{- if has $key $secret }}
{{- fail (printf "config.%s holds a secret: give it through a Secret (downstream.auth, ingressAuth)" $key) }}
{{- end }}
{{- if hasKey $owned $key }}
{{- fail (printf "config.%s is set by %s" $key (get $owned $key)) }}
{{- end }}
{{- $_ := set $s $key (toString $value) }}
{{- end }}
{{- toYaml $s }}
{{- end }}

{{/* The relay's settings as a properties file, keys sorted; backslashes escaped. */}}
{{- define "prw-relay.properties" -}}
{{- $s := include "prw-relay.settings" . | fromYaml }}
{{- range $key := keys $s | sortAlpha }}
{{ $key }}={{ get $s $key | toString | replace "\\" "\\\\" | replace "\n" "\\n" }}
{{- end }}
{{- end }}

{{/* Seconds the relay may take to drain after SIGTERM: relay.downstream.timeout + 1 s. */}}
{{- define "prw-relay.drainSeconds" -}}
{{- $s := include "prw-relay.settings" . | fromYaml }}
{{- add (include "prw-relay.seconds" (get $s "relay.downstream.timeout" | default "10s") | atoi) 1 }}
{{- end }}

{{/* The probe handler: HTTP(S) GET of a path, or TCP when clients must present certificates. */}}
{{- define "prw-relay.probe" -}}
{{- if eq .root.Values.tls.clientAuth "require" }}
tcpSocket:
  port: http
{{- else }}
httpGet:
  path: {{ .path }}
  port: http
  scheme: {{ if include "prw-relay.tlsEnabled" .root }}HTTPS{{ else }}HTTP{{ end }}
{{- end }}
{{- end }}
