{{/* Chart name, truncated to a DNS label. */}}
{{- define "syncagent.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name of the release's objects; cluster-scoped objects carry it too, so two releases never clash. */}}
{{- define "syncagent.fullname" -}}
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

{{/* The full name plus a suffix, still a valid object name (suffix kept, prefix truncated). */}}
{{- define "syncagent.suffixed" -}}
{{- $root := index . 0 }}
{{- $suffix := index . 1 }}
{{- printf "%s-%s" (include "syncagent.fullname" $root | trunc (int (sub 62 (len $suffix))) | trimSuffix "-") $suffix }}
{{- end }}

{{- define "syncagent.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "syncagent.selectorLabels" -}}
app.kubernetes.io/name: {{ include "syncagent.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "syncagent.labels" -}}
helm.sh/chart: {{ include "syncagent.chart" . }}
{{ include "syncagent.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: syncagent
{{- end }}

{{- define "syncagent.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "syncagent.fullname" .) .Values.serviceAccount.name }}
{{- else if .Values.serviceAccount.name }}
{{- .Values.serviceAccount.name }}
{{- else }}
{{- fail "serviceAccount.name: required when serviceAccount.create is false; name the ServiceAccount the agent runs as" }}
{{- end }}
{{- end }}

{{- define "syncagent.leaseNamespace" -}}
{{- default .Release.Namespace .Values.leaderElection.namespace }}
{{- end }}

{{/* The agent's Lease (--leader-election-id); the leader-election Role covers only it. */}}
{{- define "syncagent.leaseName" -}}
{{- .Values.leaderElection.leaseName }}
{{- end }}

{{- define "syncagent.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* NAME=VALUE per capability the pathways declare (the generated _capabilities.tpl), one a
line, in its order; one the values leave out is auto (discovery decides). */}}
{{- define "syncagent.capabilitySettings" -}}
{{- $caps := .Values.capabilities }}
{{- $out := list }}
{{- range (include "syncagent.capabilities" . | fromJsonArray) }}
{{- $out = append $out (printf "%s=%s" .name (hasKey $caps .name | ternary (index $caps .name) "auto" | toString)) }}
{{- end }}
{{- join "\n" $out }}
{{- end }}

{{/* The agent's flags, one per line, built from values; (dict "root" . "shard" $shard). */}}
{{- define "syncagent.args" -}}
{{- $root := .root }}
{{- $shard := .shard }}
{{- with $root }}
- run
{{- range (default .Values.watchNamespaces $shard.watchNamespaces) }}
- --namespace={{ . }}
{{- end }}
- --concurrency={{ .Values.concurrency }}
{{- range (include "syncagent.capabilitySettings" . | splitList "\n") }}
- --capability={{ . }}
{{- end }}
{{- with .Values.discoveryBackend }}
- --discovery-backend={{ . }}
{{- end }}
{{- if include "syncagent.operatorConfigMap" . }}
- --operator-config=/etc/syncagent/operator-config/{{ .Values.operatorConfig.key }}
{{- end }}
- --service-account={{ .Release.Namespace }}/{{ include "syncagent.serviceAccountName" . }}
- --metrics-bind-address=:{{ .Values.metrics.port }}
{{- if .Values.metrics.secure }}
- --metrics-secure
{{- if .Values.metrics.certSecret }}
- --metrics-cert-dir=/etc/syncagent/metrics-tls
{{- end }}
{{- end }}
- --health-probe-bind-address=:{{ .Values.health.port }}
{{- if .Values.history.enabled }}
- --history-bind-address=:{{ .Values.history.port }}
- --history-cert-dir=/etc/syncagent/history-tls
{{- end }}
{{- if .Values.leaderElection.enabled }}
- --leader-elect
- --leader-election-namespace={{ include "syncagent.leaseNamespace" . }}
- --leader-election-id={{ include "syncagent.leaseName" . }}
{{- else }}
- --no-leader-elect
{{- end }}
{{- with $shard.name }}
- --shard-name={{ . }}
{{- end }}
{{- with $shard.selector }}
- --shard-selector={{ . }}
{{- end }}
- --log-level={{ .Values.logLevel }}
{{- with .Values.resyncPeriod }}
- --resync-period={{ . }}
{{- end }}
{{- with .Values.discoveryInterval }}
- --discovery-interval={{ . }}
{{- end }}
{{- with .Values.fightDetector }}
- --fight-threshold={{ int .threshold }}
- --fight-window={{ .window }}
- --fight-backoff={{ .backoff }}
- --fight-max-backoff={{ .maxBackoff }}
{{- end }}
{{- range .Values.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/* The Leases of the release: one, or one per shard (<leaseName>-<shard>). */}}
{{- define "syncagent.leaseNames" -}}
{{- if .Values.shards }}
{{- $names := list }}
{{- range .Values.shards }}
{{- $names = append $names (printf "%s-%s" (include "syncagent.leaseName" $) .name | quote) }}
{{- end }}
{{- join ", " $names }}
{{- else }}
{{- include "syncagent.leaseName" . | quote }}
{{- end }}
{{- end }}

{{/* Checks values that the schema cannot express; each message names the field. */}}
{{- define "syncagent.validate" -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection.enabled) }}
{{- fail "replicaCount: more than 1 replica needs leaderElection.enabled=true, or two agents would write the same objects" }}
{{- end }}
{{- $caps := .Values.capabilities }}
{{- range (include "syncagent.capabilities" . | fromJsonArray) }}
{{- $name := .name }}
{{- range .needs }}
{{- if and (eq (toString (index $caps .)) "false") (eq (toString (index $caps $name)) "true") }}
{{- fail (printf "capabilities.%s: true needs capabilities.%s, but capabilities.%s=false switches it off; change one of the two" $name . .) }}
{{- end }}
{{- end }}
{{- end }}
{{- $seen := dict }}
{{- range .Values.shards }}
{{- if hasKey $seen .name }}
{{- fail (printf "shards: the name %q appears twice; every shard needs its own name (it names its Lease)" .name) }}
{{- end }}
{{- $_ := set $seen .name true }}
{{- $shardName := .name }}
{{- range .watchNamespaces }}
{{- if and $.Values.watchNamespaces (not (has . $.Values.watchNamespaces)) }}
{{- fail (printf "shards[%s].watchNamespaces: %q is not in watchNamespaces; the agent's RBAC covers only those" $shardName .) }}
{{- end }}
{{- end }}
{{- end }}
{{- if eq (int .Values.metrics.port) (int .Values.health.port) }}
{{- fail "health.port: must differ from metrics.port" }}
{{- end }}
{{- if and .Values.history.enabled (has (int .Values.history.port) (list (int .Values.metrics.port) (int .Values.health.port))) }}
{{- fail "history.port: must differ from metrics.port and health.port" }}
{{- end }}
{{- end }}

{{/* The ConfigMap holding the operator configuration: the named one, the chart's, or none. */}}
{{- define "syncagent.operatorConfigMap" -}}
{{- if .Values.operatorConfig.existingConfigMap -}}
{{- .Values.operatorConfig.existingConfigMap -}}
{{- else if .Values.operatorConfig.config -}}
{{- include "syncagent.suffixed" (list . "operator-config") -}}
{{- end -}}
{{- end }}

{{/* The Secret holding the history port's serving pair: the user's, or the one the chart makes. */}}
{{- define "syncagent.historyCertSecret" -}}
{{- .Values.history.certSecret | default (include "syncagent.suffixed" (list . "history-tls")) -}}
{{- end }}
